"""What every command shares: the one-line usage error (exit 2), the
parser that raises it, argument types that check bounds and paths before
any work, and the suite, results and output helpers."""
from __future__ import annotations

import argparse
import math
import os
import tempfile
from pathlib import Path

PROG = "shlo-conform"
MAX_TIMEOUT = 3600.0   # seconds per run; a compile gets twice as long
MAX_JOBS = 64
MAX_BATCH = 256
SUITE_HELP = ("a bundled suite by name (core), or a suite folder by path: anything with a '/' or starting "
              "with '.' or '~' (./core is the folder, core the bundled suite)")


class UsageError(Exception):
    """Bad arguments or unusable input: exit 2 with one line."""


class Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would print usage and exit 2 itself; we want one line
        raise UsageError(f"{self.prog}: {message}")


def comma_list(text: str | None, flag: str) -> list[str] | None:
    if text is None:
        return None
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise UsageError(f"{flag}: an empty list was given")
    return items


def bounded(kind, low, high, flag: str):
    """An argparse type: a finite number of `kind` with low < v <= high (int: low <= v)."""
    def parse(text):
        try:
            v = kind(text)
        except (ValueError, OverflowError):
            raise UsageError(f"{flag}: not a number: {text!r}") from None
        if not math.isfinite(v) or not (low < v if kind is float else low <= v) or v > high:
            bound = f"above 0 s and at most {high:g} s" if kind is float else f"from {low} to {high}"
            raise UsageError(f"{flag}: {text!r} is out of range (must be {bound})")
        return v
    return parse


def size_arg(flag: str):
    """An argparse type: a size in bytes ('16G', '512M', '1000000')."""
    def parse(text):
        from ..oracle.cost import parse_size
        try:
            return parse_size(text)
        except ValueError:
            raise UsageError(f"{flag}: {text!r} is not a size (e.g. 16G, 512M)") from None
    return parse


def nonempty(flag: str):
    """An argparse type: a path or name that is not empty."""
    def parse(text):
        if not text.strip():
            raise UsageError(f"{flag}: an empty path was given")
        return text
    return parse


# What a file the tool writes looks like, by suffix: an existing file at an
# output path is replaced only when it is one of ours (or empty), so a
# mistyped `--json model.mlir` never destroys a program.
_OURS = {".json": lambda head: head.lstrip()[:1] in (b"{", b""),
         ".html": lambda head: b"<html" in head.lower() or not head.strip(),
         ".xml": lambda head: head.lstrip()[:5] in (b"<?xml", b"<test", b"")}


def output_path(text: str, flag: str, kind: str | None = None) -> Path:
    """A file the command will write: its folder exists or can be made, it
    is not itself a folder, and a file already there is one the tool would
    write (`kind`, ".json", ".html" or ".xml": `_OURS`) — all checked before
    any work is done."""
    path = Path(text).expanduser()
    if path.is_dir():
        raise UsageError(f"{flag} {text}: is a folder, not a file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"{flag} {text}: cannot create its folder ({e.strerror or e})") from None
    if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise UsageError(f"{flag} {text}: not writable")
    if kind is not None and path.is_file():
        try:
            with open(path, "rb") as f:
                head = f.read(1024)
        except OSError as e:
            raise UsageError(f"{flag} {text}: cannot read the file there ({e.strerror or e})") from None
        if not _OURS[kind](head):
            raise UsageError(f"{flag} {text}: a file is there that this tool did not write "
                             f"(not {kind[1:].upper()}); remove it or choose another path")
    return path


def output_dir(text: str, flag: str) -> Path:
    """A folder the command will write into, proven writable before any
    work is done (a probe file is made and removed): results found after
    minutes of work are never lost to a folder that refuses them."""
    path = Path(text).expanduser()
    if path.exists() and not path.is_dir():
        raise UsageError(f"{flag} {text}: not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".shlo-conform-probe-", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise UsageError(f"{flag} {text}: cannot write there ({e.strerror or e})") from None
    return path


def distinct_outputs(*named: tuple[str, Path | None]) -> None:
    """Two output flags naming one file would overwrite each other (an HTML
    report written over the results): refused, naming both."""
    seen: dict = {}
    for flag, path in named:
        if path is None:
            continue
        key = os.path.realpath(path)
        if key in seen:
            raise UsageError(f"{seen[key]} and {flag} name the same file {path}; give each its own")
        seen[key] = flag


def spec_ops() -> list[str]:
    """The ops the encoded spec declares: the seed's and those v1.20 added (spec/added/)."""
    from ..spec.added import ADDED
    from ..spec.ops import OPS
    return sorted({*OPS, *ADDED})


def spec_op_list(text: str | None) -> list[str] | None:
    """--ops for commands that work on the encoded spec: every name must be an op of it."""
    ops = comma_list(text, "--ops")
    if ops is not None:
        known = spec_ops()
        unknown = [op for op in ops if op not in known]
        if unknown:
            raise UsageError(f"unknown op {unknown[0]!r} in --ops; known: {', '.join(known) or '(none)'}")
    return ops


def open_suite(name: str):
    from ..suites.io import SuiteError, load_manifest, suite_path
    try:
        path = suite_path(name)
        manifest = load_manifest(path)
    except FileNotFoundError as e:
        raise UsageError(f"--suite {name}: {e}") from None
    except SuiteError as e:
        raise UsageError(f"suite {name}: {e}") from None
    return path, manifest


def check_ops(ops: list[str] | None, suite_dir: Path | None) -> set[str] | None:
    if ops is None:
        return None
    known = set(spec_ops())
    if suite_dir is not None:
        known |= {f.stem for f in suite_dir.glob("*.jsonl")}
    unknown = [op for op in ops if op not in known]
    if unknown:
        raise UsageError(f"unknown op {unknown[0]!r} in --ops; known: {', '.join(sorted(known)) or '(none)'}")
    return set(ops)


def check_dtypes(dtypes: list[str] | None) -> set[str] | None:
    if dtypes is None:
        return None
    from ..spec.quantized import is_family_name
    from ..spec.types import element_type
    accepted = set()
    for d in dtypes:
        if is_family_name(d):   # a quantized case's family (quant_i8_f32, quant_i8_f32_axis), as its dtype names it
            accepted.add(d)
            continue
        try:
            et = element_type(d)
        except ValueError as e:
            raise UsageError(f"--dtypes: {e}; or a quantized family, quant_<storage>_<expressed>[_axis] "
                             "(quant_i8_f32)") from None
        accepted |= {et.name, et.mlir, d}
    return accepted


def selected_cases(path: Path, ops, dtypes):
    """The selected cases, from a suite validated as it loads: a damaged one
    is refused here with file, line and problem, never scored."""
    from ..suites.io import load_cases
    try:
        return load_cases(path, ops, dtypes)
    except (ValueError, OSError) as e:
        raise UsageError(f"suite {path}: {e}") from None


def read_results(path: str, what: str = "results file"):
    """A results document, checked as one (runner.check_results) before use."""
    from ..suites.results import load_results
    if not path.strip():
        raise UsageError(f"{what}: an empty path was given")
    try:
        return load_results(Path(path))
    except FileNotFoundError:
        raise UsageError(f"{what} {path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{what} {path}: is a folder, not a results file") from None
    except OSError as e:
        raise UsageError(f"{what} {path}: cannot read it ({e.strerror or e})") from None
    except ValueError as e:
        raise UsageError(f"{what} {path}: not a shlo-conform results file: {e}") from None


def _write(writer, doc: dict, path: Path, flag: str) -> None:
    try:
        writer.write(doc, Path(path))
    except OSError as e:
        raise UsageError(f"{flag} {path}: cannot write it ({e.strerror or e})") from None


def write_html(doc: dict, path: Path, flag: str = "--html") -> None:
    from ..reports import html
    _write(html, doc, path, flag)


def write_junit(doc: dict, path: Path, flag: str = "--junit") -> None:
    from ..reports import junit
    _write(junit, doc, path, flag)


def write_reports(doc: dict, html_path: Path | None, junit_path: Path | None) -> None:
    """The HTML and JUnit files a command was asked for, each named as written."""
    if html_path:
        write_html(doc, html_path)
        print(f"report: {html_path}")
    if junit_path:
        write_junit(doc, junit_path)
        print(f"junit: {junit_path}")


def backend_list(spec: str) -> list[str]:
    """`--backend a,b,…`: each name known (one line, exit 2, naming the bad one)."""
    from ..pipeline.runner import check_backend_spec
    backends = comma_list(spec, "--backend")
    for b in backends:
        try:
            check_backend_spec(b)
        except ValueError as e:
            raise UsageError(f"--backend: {e}") from None
    return backends


class cluster_engine:
    """`with cluster_engine(address) as engine`: a Dask client when --cluster names
    a scheduler (shlo_conform/pipeline/distributed.py), None otherwise — and then
    nothing of the engine is imported."""

    def __init__(self, address: str | None):
        self.address, self.engine = address, None

    def __enter__(self):
        if self.address is None:
            return None
        from ..pipeline.distributed import ClusterError, connect
        try:
            self.engine = connect(self.address)
        except ClusterError as e:
            raise UsageError(str(e)) from None
        return self.engine

    def __exit__(self, *exc):
        if self.engine is not None:
            self.engine.close()
