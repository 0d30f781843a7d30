"""`shlo-conform`: score a backend, and the tools around the suite.

    shlo-conform --backend=NAME [--suite NAME|DIR] [--ops a,b] [--dtypes f32,bf16]
                 [--json PATH] [--html PATH] [--timeout S] [--jobs N] [--batch N]
                 [--baseline RESULTS.json] [--junit PATH] [--shard I/N]
    shlo-conform generate --out DIR --seed N [--ops a,b]
    shlo-conform check-spec [--ops a,b] [--seeds DIR] [--verifier] [--json PATH]
    shlo-conform explain CASE_ID [--suite NAME|DIR] [--backend NAME]
    shlo-conform report RESULTS.json [--html OUT] [--junit OUT]
    shlo-conform report --merge A.json B.json ... [--json OUT] [--html OUT] [--junit OUT]
    shlo-conform run PROGRAM --backend=a,b,oracle [--inputs FILE.npz | --random SEED] [--specials P]
                     [--replicas N] [--partitions M]
    shlo-conform list [ops|backends|suites]
    shlo-conform accuracy --backend=a,b [--ops a,b] [--dtypes f16,f32] [--size N] [--json PATH] [--html PATH]
    shlo-conform export --out DIR [--suite NAME|DIR] [--ops a,b] [--dtypes f32,si8]
    shlo-conform fuzz --backend=NAME [--ops a,b] [--budget S] [--seed N] [--out DIR]

Exit codes: 0 conformant (or nothing new against --baseline), 1 conformance
failures, 2 usage or input errors — one line on stderr naming the flag or
file and what is wrong, never a traceback (set SHLO_CONFORM_DEBUG=1 to see
one).  Every argument and input file is checked before any work: numbers
within their bounds, output paths writable, suites validated as they load
(suites/io.py), results files checked as results documents.  Ctrl-C keeps
the results so far in the journal (`<json>.<key>.journal`, keyed by what
decides the verdicts); the same command resumes.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import tempfile
from pathlib import Path

import numpy as np

from .planning import DEFAULT_BATCH

from .runner import MAX_DEFAULT_JOBS, default_jobs
PROG = "shlo-conform"
SUBCOMMANDS = ("generate", "check-spec", "explain", "report", "run", "list", "accuracy", "fuzz", "export")
MAX_TIMEOUT = 3600.0   # seconds per run; a compile gets twice as long
MAX_JOBS = 64
MAX_BATCH = 256
SUITE_HELP = ("a bundled suite by name (core), or a suite folder by path: anything with a '/' or starting "
              "with '.' or '~' (./core is the folder, core the bundled suite)")


class UsageError(Exception):
    """Bad arguments or unusable input: exit 2 with one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would print usage and exit 2 itself; we want one line
        raise UsageError(f"{self.prog}: {message}")


# ---------------------------------------------------------------------------
# argument helpers
# ---------------------------------------------------------------------------

def _split(text: str | None, flag: str) -> list[str] | None:
    if text is None:
        return None
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise UsageError(f"{flag}: an empty list was given")
    return items


def _bounded(kind, low, high, flag: str):
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


def _size(flag: str):
    """An argparse type: a size in bytes ('16G', '512M', '1000000')."""
    def parse(text):
        from .oracle.cost import parse_size
        try:
            return parse_size(text)
        except ValueError:
            raise UsageError(f"{flag}: {text!r} is not a size (e.g. 16G, 512M)") from None
    return parse


def _nonempty(flag: str):
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


def _output_path(text: str, flag: str, kind: str | None = None) -> Path:
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


def _output_dir(text: str, flag: str) -> Path:
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


def _distinct_outputs(*named: tuple[str, Path | None]) -> None:
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


def _spec_ops() -> list[str]:
    """The ops the encoded spec declares."""
    from .spec.ops import OPS
    return sorted(OPS)


def _open_suite(name: str):
    from .suites.io import SuiteError, load_manifest, suite_path
    try:
        path = suite_path(name)
        manifest = load_manifest(path)
    except FileNotFoundError as e:
        raise UsageError(f"--suite {name}: {e}") from None
    except SuiteError as e:
        raise UsageError(f"suite {name}: {e}") from None
    return path, manifest


def _check_ops(ops: list[str] | None, suite_dir: Path | None) -> set[str] | None:
    if ops is None:
        return None
    known = set(_spec_ops())
    if suite_dir is not None:
        known |= {f.stem for f in suite_dir.glob("*.jsonl")}
    unknown = [op for op in ops if op not in known]
    if unknown:
        raise UsageError(f"unknown op {unknown[0]!r} in --ops; known: {', '.join(sorted(known)) or '(none)'}")
    return set(ops)


def _check_dtypes(dtypes: list[str] | None) -> set[str] | None:
    if dtypes is None:
        return None
    from .spec.types import element_type
    accepted = set()
    for d in dtypes:
        try:
            et = element_type(d)
        except ValueError as e:
            raise UsageError(f"--dtypes: {e}") from None
        accepted |= {et.name, et.mlir, d}
    return accepted


def _load_cases(path: Path, ops, dtypes):
    """The selected cases, from a suite validated as it loads: a damaged one
    is refused here with file, line and problem, never scored."""
    from .suites.io import load_cases
    try:
        return load_cases(path, ops, dtypes)
    except (ValueError, OSError) as e:
        raise UsageError(f"suite {path}: {e}") from None


def _default_json(backend: str, shard: tuple[int, int] | None = None) -> Path:
    name = "command" if backend.startswith("command:") else re.sub(r"[^\w.-]+", "_", backend)[:60]
    return Path("out") / (f"results-{name}.json" if shard is None else f"results-{name}-{shard[0]}of{shard[1]}.json")


def _read_results(path: str, what: str = "results file"):
    """A results document, checked as one (runner.check_results) before use."""
    from .suites.results import load_results
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


def _write_html(doc: dict, path: Path, flag: str = "--html") -> None:
    from .reports import html
    try:
        html.write(doc, Path(path))
    except OSError as e:
        raise UsageError(f"{flag} {path}: cannot write it ({e.strerror or e})") from None


def _write_junit(doc: dict, path: Path, flag: str = "--junit") -> None:
    from .reports import junit
    try:
        junit.write(doc, Path(path))
    except OSError as e:
        raise UsageError(f"{flag} {path}: cannot write it ({e.strerror or e})") from None


def _shard_arg(text: str) -> tuple[int, int]:
    """An argparse type: `I/N` (shlo_conform/shard.py reads it)."""
    from .shard import parse
    try:
        return parse(text)
    except ValueError as e:
        raise UsageError(f"--shard: {e}") from None


class _Progress:
    """Progress on stderr while a run goes on: on a terminal one line
    rewritten in place (at most ten times a second); elsewhere (a log, CI,
    `make conform` piped) one line every `every` seconds.  Either says
    cases done of all, the verdicts so far, the rate and the time left."""

    def __init__(self, total: int, every: float = 10.0, stream=None):
        import time
        self.stream = stream or sys.stderr
        self.total, self.n = total, 0
        self.counts: dict[str, int] = {}
        self.live = self.stream.isatty()
        self.every = 0.1 if self.live else every
        self._clock = time.monotonic
        self.t0 = self._last = self._clock()
        self._width = 0

    def line(self) -> str:
        spent = self._clock() - self.t0
        rate = self.n / spent if spent > 0 else 0.0
        left = f", ~{(self.total - self.n) / rate:.0f} s left" if rate > 0 and self.n < self.total else ""
        tally = " ".join(f"{k} {self.counts[k]}" for k in sorted(self.counts))
        return f"[{self.n}/{self.total}] {tally} ({spent:.0f} s, {rate:.0f} cases/s{left})"

    def __call__(self, v) -> None:
        self.n += 1
        self.counts[v.verdict] = self.counts.get(v.verdict, 0) + 1
        now = self._clock()
        if now - self._last < self.every and (self.n < self.total or not self.live):
            return   # a log gets a line every `every` seconds, none at the end (the table follows)
        self._last = now
        text = self.line()
        if self.live:
            self.stream.write("\r" + text.ljust(self._width))
            self._width = len(text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def done(self) -> None:
        if self.live and self.n:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()


# ---------------------------------------------------------------------------
# score (the default command)
# ---------------------------------------------------------------------------

def _score_parser() -> _Parser:
    p = _Parser(prog=PROG, description="Score a backend on a conformance suite.",
                epilog="Other commands: " + ", ".join(SUBCOMMANDS) + f" (see `{PROG} COMMAND --help`).")
    p.add_argument("--backend", required=True,
                   help="oracle, xla, interpreter, iree, command:CMDLINE, an entry point, or module:Class")
    p.add_argument("--suite", default="core", type=_nonempty("--suite"), help=SUITE_HELP + " (default: core)")
    p.add_argument("--ops", help="comma-separated op mnemonics to run")
    p.add_argument("--dtypes", help="comma-separated element types to run (f32, bf16, si32, c64, ...)")
    p.add_argument("--json", type=_nonempty("--json"),
                   help="results file (default: out/results-BACKEND.json), written when the run ends; verdicts "
                        "are journaled in JSON.<key>.journal meanwhile (one per suite, selection, backend and "
                        "timeouts) and a second run on the same file is refused while one holds it")
    p.add_argument("--html", type=_nonempty("--html"), help="also write a self-contained HTML report here")
    p.add_argument("--timeout", type=_bounded(float, 0, MAX_TIMEOUT, "--timeout"), default=None,
                   help=f"seconds per run, at most {MAX_TIMEOUT:g} (compiles get twice as long); default 10 s per "
                        "run, 20 s per compile.  Starting a backend may take the compile timeout, at least 60 s")
    p.add_argument("--jobs", type=_bounded(int, 1, MAX_JOBS, "--jobs"), default=None,
                   help=f"worker processes (default: one per CPU, at most {MAX_DEFAULT_JOBS}; at most {MAX_JOBS}; "
                        "no more than the CPUs are used); verdicts do not depend on it")
    p.add_argument("--batch", type=_bounded(int, 1, MAX_BATCH, "--batch"), default=DEFAULT_BATCH,
                   help=f"cases compiled together in one module where the backend allows it (default "
                        f"{DEFAULT_BATCH}, 1: one compile per program); a batch that fails is re-run case by case, "
                        "so verdicts do not depend on it")
    p.add_argument("--baseline", type=_nonempty("--baseline"),
                   help="earlier results.json: exit 0 unless a case fails that did not fail there")
    p.add_argument("--junit", type=_nonempty("--junit"),
                   help="also write JUnit XML here (one testcase per case, classname stablehlo.OP) for CI")
    p.add_argument("--cluster", type=_nonempty("--cluster"), metavar="ADDRESS",
                   help="a Dask scheduler (tcp://host:8786): the cases run as parcels on its workers")
    p.add_argument("--shard", type=_shard_arg, metavar="I/N",
                   help="run only shard I of N (1-based) of the selected cases, split by program (and by "
                        "--batch's merged modules) so that N machines with the same suite, selection and "
                        "--batch run each case once; combine their results with `report --merge`")
    return p


def _new_failures(doc: dict, baseline: dict) -> tuple[list[str], int]:
    from .suites.records import conformant
    known_bad = {v["id"] for v in baseline.get("verdicts", [])
                 if conformant(v.get("kind", "value"), v.get("verdict")) is False}
    bad = [v["id"] for v in doc["verdicts"] if conformant(v["kind"], v["verdict"]) is False]
    return [i for i in bad if i not in known_bad], sum(i in known_bad for i in bad)


def cmd_score(argv: list[str]) -> int:
    from .journal import JournalMismatch, ResultsBusy, other_journals
    from .isolation import compile_timeout_for
    from .runner import DEFAULT_RUN_TIMEOUT, BackendLoadError, check_backend_spec
    from .scoring import score
    from .reports import table
    from .suites.io import is_bundled, suite_digest

    a = _score_parser().parse_args(argv)
    try:
        check_backend_spec(a.backend)
    except ValueError as e:
        raise UsageError(str(e)) from None
    path, manifest = _open_suite(a.suite)
    ops = _check_ops(_split(a.ops, "--ops"), path)
    dtypes = _check_dtypes(_split(a.dtypes, "--dtypes"))
    baseline = _read_results(a.baseline, "--baseline") if a.baseline else None
    json_path = _output_path(a.json or str(_default_json(a.backend, a.shard)), "--json", ".json")
    html_path = _output_path(a.html, "--html", ".html") if a.html else None
    junit_path = _output_path(a.junit, "--junit", ".xml") if a.junit else None
    _distinct_outputs(("--json", json_path), ("--html", html_path), ("--junit", junit_path),
                      ("--baseline", Path(a.baseline) if a.baseline else None))
    cases = _load_cases(path, ops, dtypes)
    if not cases:
        raise UsageError(f"no cases in suite {a.suite!r} match the selection (--ops/--dtypes)")
    shard_record = None
    if a.shard:  # after the selection: every machine of the split must select the same cases
        from . import shard
        selected, cases = cases, shard.select(cases, *a.shard, batch=a.batch)
        shard_record = shard.record(*a.shard, cases, selected, batch=a.batch)
        print(f"shard {a.shard[0]}/{a.shard[1]}: {len(cases)} of {len(selected)} selected cases")
    run_timeout = a.timeout or DEFAULT_RUN_TIMEOUT
    compile_timeout = compile_timeout_for(run_timeout)
    jobs = min(a.jobs or default_jobs(), max(1, os.cpu_count() or 1))
    suite_label = a.suite if is_bundled(path) else str(path.resolve())
    digest = suite_digest(path)

    progress = _Progress(len(cases))
    try:
        with _engine(a.cluster) as engine:
            doc = score(cases, a.backend, suite=suite_label, manifest=manifest, json_path=json_path,
                        compile_timeout=compile_timeout, run_timeout=run_timeout, jobs=jobs, on_verdict=progress,
                        batch=a.batch,
                        suite_digest=digest, shard=shard_record, engine=engine)
    except (BackendLoadError, ResultsBusy, JournalMismatch) as e:
        progress.done()
        raise UsageError(str(e)) from None
    except OSError as e:
        progress.done()
        raise UsageError(f"--json {json_path}: cannot write results ({e.strerror or e}); the verdicts so far "
                         "are kept in the journal") from None
    progress.done()

    print(table.render(doc))
    if doc.get("resumed"):
        print(f"resumed {doc['resumed']} verdicts from the journal")
    print(f"results: {json_path}")
    for other in other_journals(json_path, doc["run_key"]):
        print(f"kept: {other}, the journal of an unfinished run with other options "
              "(rerun those options to resume it, or delete it)")
    if html_path:
        _write_html(doc, html_path)
        print(f"report: {html_path}")
    if junit_path:
        _write_junit(doc, junit_path)
        print(f"junit: {junit_path}")
    if baseline is not None:
        new, known = _new_failures(doc, baseline)
        print(f"against baseline {a.baseline}: {len(new)} new failures, {known} known")
        for i in new[:20]:
            print(f"  new: {i}")
        return 1 if new else 0
    return 1 if doc["counts"]["nonconformant"] else 0


# ---------------------------------------------------------------------------
# subcommands
# ---------------------------------------------------------------------------

def _spec_op_list(text: str | None) -> list[str] | None:
    """--ops for commands that work on the encoded spec: every name must be an op of it."""
    ops = _split(text, "--ops")
    if ops is not None:
        known = _spec_ops()
        unknown = [op for op in ops if op not in known]
        if unknown:
            raise UsageError(f"unknown op {unknown[0]!r} in --ops; known: {', '.join(known) or '(none)'}")
    return ops


def cmd_generate(argv: list[str]) -> int:
    p = _Parser(prog=f"{PROG} generate", description="Generate a suite (same seed => same bytes).")
    p.add_argument("--out", required=True, type=_nonempty("--out"),
                   help="a new or empty folder, or a suite folder written by generate: then only the files of "
                        "the generated ops are replaced (same seed required when other ops stay); a folder "
                        "holding anything else is refused")
    p.add_argument("--seed", required=True, type=_bounded(int, 0, 2 ** 64 - 1, "--seed"))
    p.add_argument("--ops", help="comma-separated op mnemonics (default: all)")
    a = p.parse_args(argv)
    ops = _spec_op_list(a.ops)
    from .generators import suite as gen
    from .suites.io import check_suite_write
    out = Path(a.out).expanduser()
    try:  # before minutes of generation, not after
        check_suite_write(out, {"seed": a.seed}, set(ops or _spec_ops()))
        gen.build(out, a.seed, ops)
    except ValueError as e:  # SuiteWriteRefused
        raise UsageError(f"--out {a.out}: {e}") from None
    except OSError as e:
        raise UsageError(f"--out {a.out}: cannot write the suite ({e.strerror or e})") from None
    try:
        total = json.loads((out / "manifest.json").read_text()).get("total")
    except (OSError, ValueError):
        total = None
    print(f"wrote suite {out}" + (f" ({total} cases)" if total is not None else ""))
    return 0


def _default_seeds() -> Path | None:
    """../shared/seeds next to the repository root, when this is a checkout that has it."""
    d = Path(__file__).resolve().parent.parent.parent / "shared" / "seeds"
    return d if d.is_dir() else None


def cmd_check_spec(argv: list[str]) -> int:
    p = _Parser(prog=f"{PROG} check-spec",
                description="z3 proofs over the encoded spec; traceability to the seed text; "
                            "negative-case coverage; optionally agreement with jaxlib's StableHLO verifier.")
    p.add_argument("--ops", help="comma-separated op mnemonics (default: all)")
    p.add_argument("--seeds", type=_nonempty("--seeds"),
                   help="folder holding the seed texts (default: ../shared/seeds beside the "
                        "repository, when present; otherwise traceability is skipped)")
    p.add_argument("--verifier", action="store_true",
                   help="judge every case of the suite with jaxlib's StableHLO verifier too")
    p.add_argument("--suite", default="core", type=_nonempty("--suite"),
                   help="suite for coverage and --verifier (default: core): " + SUITE_HELP)
    p.add_argument("--findings", type=_nonempty("--findings"),
                   help="reviewed findings file (default: docs/verifier-findings.json)")
    p.add_argument("--json", type=_nonempty("--json"),
                   help="write the results (proofs, traceability, coverage, verifier table) here")
    a = p.parse_args(argv)
    ops = _spec_op_list(a.ops)
    json_out = _output_path(a.json, "--json", ".json") if a.json else None
    from .spec import checks, traceability
    doc: dict = {}
    ok = True

    results = checks.run_ops(ops)
    proofs_ok, text = checks.render(results)
    print(text, end="")
    ok &= proofs_ok
    doc["proofs"] = {"ok": proofs_ok, "ops": [r.to_json() for r in results]}

    seeds = Path(a.seeds) if a.seeds else _default_seeds()
    if a.seeds and not seeds.is_dir():
        raise UsageError(f"--seeds {a.seeds}: no such folder")
    if seeds is None:   # every clone has the seeds' op sections stored beside the spec (spec/seed/)
        print("traceability: from the seed sections stored in spec/seed/ (no seeds folder given)")
        seed_ops = traceability.read_stored()
    else:
        try:
            spec_path, rfc_path = traceability.seed_paths(seeds)
        except FileNotFoundError as e:
            raise UsageError(f"--seeds: {e}") from None
        seed_ops = traceability.read_seeds(spec_path, rfc_path)
    from .spec.ops import OPS
    encoded = {n: OPS[n] for n in ops} if ops else None
    tr = traceability.trace(seed_ops, encoded)
    if ops:  # only the chosen ops (and nothing hidden about them)
        tr.ops = [t for t in tr.ops if t.name in ops]
    print(traceability.render(tr), end="")
    ok &= tr.ok
    doc["traceability"] = tr.to_json()

    from . import verifier
    suite_dir, _ = _open_suite(a.suite)
    cases = _load_cases(suite_dir, set(ops) if ops else None, None)
    independent = {r.name: list(r.independence.witnesses) for r in results if r.independence}
    uncovered = verifier.negative_coverage(independent, cases)
    n_ind = sum(len(v) for v in independent.values())
    unspellable = sorted(l for v in independent.values() for l in v if l in verifier.UNSPELLABLE)
    print(f"negative cases ({a.suite}): {n_ind - len(unspellable) - sum(len(v) for v in uncovered.values())}/"
          f"{n_ind} independent constraints have an invalid case named after them"
          + "".join(f"; {l} cannot be spelled: {verifier.UNSPELLABLE[l]}" for l in unspellable)
          + ("" if not uncovered else "; MISSING " + ", ".join(l for v in uncovered.values() for l in v)))
    ok &= not uncovered
    doc["negative_coverage"] = {"independent": n_ind, "missing": uncovered}

    if a.verifier:
        try:
            findings = verifier.load_findings(Path(a.findings) if a.findings else verifier.FINDINGS)
        except (OSError, ValueError) as e:
            raise UsageError(f"findings file: {e}") from None
        ag = verifier.compare(cases, findings)
        print(verifier.render(ag), end="")
        ok &= ag.ok
        doc["verifier"] = ag.to_json()

    doc["ok"] = bool(ok)
    if json_out:
        json_out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
        print(f"wrote {json_out}")
    print("check-spec: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


def _show(array) -> str:
    """An array as `explain` prints it: suites/show.py's notation (NaN sign
    and payload, the shortest digits that tell the type's values apart)."""
    from .suites import show
    return show.array(array, threshold=200, edgeitems=4, linewidth=100)


def _indent(text: str, by: str = "    ") -> str:
    return "\n".join(by + line for line in text.splitlines())


def _explain_values(kind: str, inputs: list, expected: list, by: str = "") -> None:
    """`explain`'s inputs and expected outputs of one process (`by`: the indent)."""
    print(f"{by}inputs:")
    for i, v in enumerate(inputs):
        print(f"{by}  %arg{i}: {v.type} =")
        print(_indent(_show(v.array()), by + "      "))
    if kind in ("value", "survey"):
        print(f"{by}expected:" if kind == "value" else f"{by}known behaviours (survey: reported, not scored):")
        for i, e in enumerate(expected):
            from .suites.kinds import describe
            print(f"{by}  #{i}: {e.type.mlir} ({describe(e)})" + (f" — {e.why}" if e.why else ""))
            print(_indent(_show(e.array()), by + "      "))
            if e.impl_defined:
                print(f"{by}      implementation-defined at flat indices {e.impl_defined[:20]}: "
                      + ", ".join(alt.label for alt in e.alternatives))


def cmd_explain(argv: list[str]) -> int:
    p = _Parser(prog=f"{PROG} explain", description="Show one case, decoded; optionally run it on a backend.")
    p.add_argument("case_id")
    p.add_argument("--suite", default="core", type=_nonempty("--suite"), help=SUITE_HELP)
    p.add_argument("--backend")
    p.add_argument("--timeout", type=_bounded(float, 0, MAX_TIMEOUT, "--timeout"), default=None)
    a = p.parse_args(argv)
    from .runner import DEFAULT_RUN_TIMEOUT, BackendLoadError, Runner, check_backend_spec
    if a.backend:
        try:
            check_backend_spec(a.backend)
        except ValueError as e:
            raise UsageError(str(e)) from None
    path, _ = _open_suite(a.suite)
    op = a.case_id.split("/")[0]
    if not (path / f"{op}.jsonl").is_file():
        raise UsageError(f"no case {a.case_id!r} in suite {a.suite!r} (it has no op {op!r})")
    matches = [c for c in _load_cases(path, {op}, None) if c.id == a.case_id]
    if not matches:
        raise UsageError(f"no case {a.case_id!r} in suite {a.suite!r}")
    c = matches[0]

    print(f"case  {c.id}")
    print(f"op    {c.op}   element type {c.dtype}   kind {c.kind}")
    if c.note:
        print(f"note  {c.note}")
    if c.violates:
        print(f"violates  {c.violates} (must be rejected before execution)")
    if c.provenance:
        print("provenance  " + ", ".join(f"{k}={v}" for k, v in sorted(c.provenance.items())))
    if c.grid is not None:
        g = c.grid
        print(f"grid  {g.num_replicas} replica(s) × {g.num_partitions} partition(s): {g.size} processes, "
              "listed in flattened id order (replica_id * num_partitions + partition_id)")
    print("program:")
    print(_indent(c.mlir.rstrip()))
    per_process = c.grid is not None and bool(c.grid.inputs)
    for n, (inputs, expected) in enumerate(zip(c.grid.inputs, c.grid.expected) if per_process
                                           else [(c.inputs, c.expected)]):
        if per_process:
            print(f"{c.grid.process_label(n)}:")
        _explain_values(c.kind, inputs, expected, "  " if per_process else "")
    if not a.backend:
        return 0

    run_timeout = a.timeout or DEFAULT_RUN_TIMEOUT
    runner = Runner(a.backend, run_timeout=run_timeout, keep_outputs=True)
    try:
        [v] = runner.run([c])
    except BackendLoadError as e:
        raise UsageError(str(e)) from None
    print(f"backend {runner.describe or a.backend}:")
    outs = (runner.outputs or {}).get(c.id)
    if outs is not None:
        for n, per in enumerate(outs if per_process else [outs]):
            if per_process:
                print(f"  {c.grid.process_label(n)}:")
            for i, o in enumerate(per):
                print(f"{'  ' if per_process else ''}  actual #{i}: dtype {np.asarray(o).dtype}, "
                      f"shape {tuple(np.shape(o))}")
                print(_indent(_show(o), "        " if per_process else "      "))
    print(f"verdict  {v.verdict}" + (f"   max ULP {v.max_ulp:g}" if v.max_ulp is not None else "")
          + (f" (over elements where ULP is the measure: {v.meaningful_ulp:g})"
             if v.meaningful_ulp is not None and v.meaningful_ulp != v.max_ulp else ""))
    if v.causes:   # why the elements failed (suites/causes.py)
        print("causes   " + ", ".join(f"{cause}: {n} element{'s' if n != 1 else ''}" for cause, n in v.causes.items()))
        for i, e, act, u, cause in v.mismatches:
            print(f"  [{i}] expected {e} got {act}" + (f" ({u:g} ulp)" if u is not None else "") + f": {cause}")
    if v.detail:
        print(f"detail   {v.detail}")
    if v.impl_defined:
        print(f"implementation-defined choices: {', '.join(v.impl_defined)}")
    return 1 if v.conformant is False else 0


def cmd_report(argv: list[str]) -> int:
    p = _Parser(prog=f"{PROG} report", description="Re-render a results file, or merge the results of "
                                                   "several runs (the shards of --shard I/N) into one.")
    p.add_argument("results", nargs="?")
    p.add_argument("--merge", nargs="+", metavar="RESULTS.json", type=_nonempty("--merge"),
                   help="results files of one backend on one suite with no case in common: report them as one")
    p.add_argument("--json", type=_nonempty("--json"), help="with --merge: write the merged results here")
    p.add_argument("--html", type=_nonempty("--html"), help="write a self-contained HTML report here")
    p.add_argument("--junit", type=_nonempty("--junit"), help="write JUnit XML here")
    a = p.parse_args(argv)
    from .reports import table
    if not a.merge and a.results is None:
        raise UsageError(f"{PROG} report: give a results file, or --merge with results files")
    if a.json and not a.merge:
        raise UsageError("--json: only with --merge (a results file is already one)")
    files = ([a.results] if a.results is not None else []) + (a.merge or [])
    # checked as results documents: the renderers and the merge can rely on their shape
    docs = [(f, _read_results(f, "--merge" if a.merge else "results file")) for f in files]
    json_path = _output_path(a.json, "--json", ".json") if a.json else None
    html_path = _output_path(a.html, "--html", ".html") if a.html else None
    junit_path = _output_path(a.junit, "--junit", ".xml") if a.junit else None
    _distinct_outputs(("--json", json_path), ("--html", html_path), ("--junit", junit_path))
    for out_flag, out in (("--json", json_path), ("--html", html_path), ("--junit", junit_path)):
        if out is not None and any(os.path.realpath(out) == os.path.realpath(f) for f in files):
            raise UsageError(f"{out_flag} {out}: is one of the results files read; write elsewhere")
    doc = docs[0][1]
    if a.merge:
        from .merge import MergeError, merge
        try:
            doc, notes = merge(docs)
        except MergeError as e:
            raise UsageError(f"--merge: {e}") from None
        for note in notes:
            print(f"{PROG}: --merge: {note}", file=sys.stderr)
    print(table.render(doc))
    if json_path:
        from .suites.io import write_text_atomic
        try:
            write_text_atomic(json_path, json.dumps(doc, indent=1) + "\n")
        except OSError as e:
            raise UsageError(f"--json {json_path}: cannot write it ({e.strerror or e})") from None
        print(f"results: {json_path}")
    if html_path:
        _write_html(doc, html_path)
        print(f"report: {html_path}")
    if junit_path:
        _write_junit(doc, junit_path)
        print(f"junit: {junit_path}")
    return 0


def cmd_list(argv: list[str]) -> int:
    p = _Parser(prog=f"{PROG} list", description="List ops, backends or bundled suites.")
    p.add_argument("what", nargs="?", choices=("ops", "backends", "suites"))
    a = p.parse_args(argv)
    from .backends.base import backend_names
    from .suites.io import bundled_suites
    sections = {
        "ops": _spec_ops,
        "backends": backend_names,
        "suites": bundled_suites,
    }
    for name, fn in sections.items():
        if a.what in (None, name):
            items = fn()
            if a.what is None:
                print(f"{name}:")
                print("  " + ("\n  ".join(items) if items else "(none)"))
            else:
                print("\n".join(items))
    return 0


def cmd_run(argv: list[str]) -> int:
    p = _Parser(prog=f"{PROG} run",
                description="Run one program (StableHLO text in any syntax, MLIR bytecode or a jax.export "
                            "portable artifact) on several backends and compare each output with the "
                            "oracle's expectation, stating the width each verdict was judged with.  Exit 0 when "
                            "every output agrees; 1 when a backend disagrees, crashes or refuses a valid "
                            "program; 2 for a usage or input error; 3 when an output is inconclusive (its "
                            "enclosure too wide to tell a wrong answer from a right one) or unchecked (the "
                            "oracle states no value for it); 4 when there is no verdict (the oracle cannot "
                            "judge the program, or a backend ran past --timeout: slow, not wrong).")
    p.add_argument("program", type=_nonempty("PROGRAM"))
    p.add_argument("--backend", required=True,
                   help="comma-separated backends (oracle prints its own values too): xla,interpreter,iree,oracle")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--inputs", type=_nonempty("--inputs"),
                     help=".npz file: arg0, arg1, … (or arr_0, …), @main's types exactly (narrow floats as raw bits)")
    src.add_argument("--random", type=_bounded(int, 0, 2**63 - 1, "--random"), metavar="SEED",
                     help="draw inputs from this seed (default: seed 0)")
    p.add_argument("--specials", type=_bounded(float, -1e-300, 1.0, "--specials"), default=0.0, metavar="P",
                   help="with --random: share of special values (±0, ±inf, NaN, subnormals, extremes); default 0")
    from .differential import TIMEOUT_MAX, TIMEOUT_RULE
    p.add_argument("--timeout", type=_bounded(float, 0, TIMEOUT_MAX, "--timeout"), default=None,
                   help="seconds for each backend's run and for the oracle (compiles get twice as long); "
                        f"default scaled to the program: {TIMEOUT_RULE}.  A backend past it is slow, not "
                        "wrong: no verdict (exit 4)")
    p.add_argument("--oracle-memory", type=_size("--oracle-memory"), default=None, metavar="SIZE",
                   help="memory the oracle may use (e.g. 16G); a program that needs more is refused up front "
                        "with the figure; default 8G or half the machine's memory")
    p.add_argument("--replicas", type=_bounded(int, 1, 2 ** 32 - 1, "--replicas"), default=None, metavar="N",
                   help="run on a process grid of N replicas (default: the module's mhlo.num_replicas, else 1)")
    p.add_argument("--partitions", type=_bounded(int, 1, 2 ** 32 - 1, "--partitions"), default=None, metavar="M",
                   help="... and M partitions (default: the module's mhlo.num_partitions, else 1); on a grid, "
                        "--inputs holds arg<k>@<flattened id> per process (arg<k>: every process)")
    a = p.parse_args(argv)
    from .differential import InputError, run_command
    from .runner import BackendLoadError
    from .spec.grid import Grid
    backends = _backends(a.backend)
    grid = Grid(a.replicas or 1, a.partitions or 1) if (a.replicas or a.partitions) else None
    try:
        text, rc = run_command(a.program, backends, inputs_npz=a.inputs, seed=a.random,
                               special_fraction=a.specials, timeout=a.timeout,
                               oracle_memory=a.oracle_memory, grid=grid)
    except InputError as e:
        raise UsageError(str(e)) from None
    except BackendLoadError as e:
        raise UsageError(str(e)) from None
    print(text)
    return rc


def _backends(spec: str) -> list[str]:
    """`--backend a,b,…`: each name known (one line, exit 2, naming the bad one)."""
    from .runner import check_backend_spec
    backends = _split(spec, "--backend")
    for b in backends:
        try:
            check_backend_spec(b)
        except ValueError as e:
            raise UsageError(f"--backend: {e}") from None
    return backends


def cmd_accuracy(argv: list[str]) -> int:
    from . import survey as accuracy
    p = _Parser(prog=f"{PROG} accuracy",
                description="Survey the accuracy of every float element-wise op of the spec: one program per op "
                            "and type over every input of the 8- and 16-bit types (every 8-bit pair for binary "
                            "ops) and a stratified sample of the wider ones, against the oracle's correctly "
                            "rounded values (computed once, cached).  Reports ULP error and special-value "
                            "disagreements; exit 0 when the survey ran.")
    p.add_argument("--backend", required=True, help="comma-separated backends (xla,interpreter,iree,...)")
    p.add_argument("--ops", help="comma-separated ops (default: every float unary and binary element-wise op)")
    p.add_argument("--dtypes", help=f"comma-separated float types (default: {','.join(accuracy.DTYPES)})")
    p.add_argument("--size", type=_bounded(int, 16, 1 << 24, "--size"), default=accuracy.DEFAULT_SIZE,
                   help=f"inputs per op and sampled type (default {accuracy.DEFAULT_SIZE})")
    p.add_argument("--seed", type=_bounded(int, 0, 2 ** 32 - 1, "--seed"), default=0)
    p.add_argument("--timeout", type=_bounded(float, 0, MAX_TIMEOUT, "--timeout"), default=None,
                   help="seconds a backend may take for one op x type (compile and run; default "
                        f"{accuracy.DEFAULT_ENTRY_TIMEOUT:g}); past it the entry is a timeout and the survey goes on")
    p.add_argument("--cache", default="out/accuracy-cache", type=_nonempty("--cache"),
                   help="folder of cached expectations (default out/accuracy-cache); stale entries are remade")
    p.add_argument("--regenerate", action="store_true", help="recompute the expectations even when cached")
    p.add_argument("--jobs", type=_bounded(int, 1, MAX_JOBS, "--jobs"), default=1,
                   help="processes computing expectations (default 1)")
    p.add_argument("--json", type=_nonempty("--json"), help="results file (default out/accuracy.json)")
    p.add_argument("--html", type=_nonempty("--html"), help="also write an HTML page with plots here")
    p.add_argument("--exhaustive", action="store_true",
                   help="with --dtypes f32 and unary --ops: every one of the 2^32 inputs, streamed in chunks "
                        "(a summary per chunk, checkpointed under --cache: an interrupted survey resumes)")
    p.add_argument("--cluster", type=_nonempty("--cluster"), metavar="ADDRESS",
                   help="a Dask scheduler (tcp://host:8786): chunks and backend runs go to its workers")
    p.add_argument("--input-range", type=_pattern_range, default=None, help=argparse.SUPPRESS)  # tests: LO:HI
    p.add_argument("--chunk", type=_chunk_size, default=None, help=argparse.SUPPRESS)   # patterns per unit
    a = p.parse_args(argv)
    backends = _backends(a.backend)
    if a.exhaustive:
        return _accuracy_exhaustive(a, backends)
    if a.input_range or a.chunk:
        raise UsageError("--input-range and --chunk go with --exhaustive")
    known = accuracy.float_ops()
    ops = _split(a.ops, "--ops") or list(known)
    bad = [o for o in ops if o not in known]
    if bad:
        raise UsageError(f"--ops: {bad[0]!r} is not a float element-wise op of the spec; surveyed: {', '.join(known)}")
    dtypes = _split(a.dtypes, "--dtypes") or list(accuracy.DTYPES)
    bad = [d for d in dtypes if d not in accuracy.DTYPES]
    if bad:
        raise UsageError(f"--dtypes: {bad[0]!r} is not surveyed; types: {', '.join(accuracy.DTYPES)}")
    json_path = _output_path(a.json or "out/accuracy.json", "--json", ".json")
    html_path = _output_path(a.html, "--html", ".html") if a.html else None
    _distinct_outputs(("--json", json_path), ("--html", html_path))
    cache = _output_dir(a.cache, "--cache")
    log = (lambda m: print(m, file=sys.stderr, flush=True))
    with _engine(a.cluster) as engine:
        doc = accuracy.survey(backends, {o: known[o] for o in ops}, dtypes, a.size, a.seed, cache,
                              jobs=min(a.jobs, os.cpu_count() or 1), regenerate=a.regenerate, log=log,
                              timeout=a.timeout or accuracy.DEFAULT_ENTRY_TIMEOUT, engine=engine)
    print(accuracy.render(doc))
    json_path.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    print(f"results: {json_path}  ({', '.join(f'{k} {v} s' for k, v in doc['timing'].items())})")
    if html_path:
        from .reports import accuracy_html
        accuracy_html.write(doc, html_path)
        print(f"report: {html_path}")
    return 0


def _pattern_range(text: str) -> tuple[int, int]:
    """An argparse type: `LO:HI`, bit patterns (decimal or 0x…), 0 <= LO < HI <= 2^32."""
    try:
        lo, hi = (int(x, 0) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not LO:HI (e.g. 0x3f800000:0x3f810000)") from None
    if not 0 <= lo < hi <= 1 << 32:
        raise argparse.ArgumentTypeError(f"{text!r}: need 0 <= LO < HI <= 2^32")
    return lo, hi


def _chunk_size(text: str) -> int:
    """An argparse type: patterns per exhaustive chunk, 1 to 2^28 (decimal or 0x…)."""
    try:
        n = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 1 <= n <= 1 << 28:
        raise argparse.ArgumentTypeError(f"{text!r}: from 1 to 2^28")
    return n


class _engine:
    """`with _engine(address) as engine`: a Dask client when --cluster names
    a scheduler (shlo_conform/distributed.py), None otherwise — and then
    nothing of the engine is imported."""

    def __init__(self, address: str | None):
        self.address, self.engine = address, None

    def __enter__(self):
        if self.address is None:
            return None
        from .distributed import ClusterError, connect
        try:
            self.engine = connect(self.address)
        except ClusterError as e:
            raise UsageError(str(e)) from None
        return self.engine

    def __exit__(self, *exc):
        if self.engine is not None:
            self.engine.close()


def _accuracy_exhaustive(a, backends: list[str]) -> int:
    """`accuracy --exhaustive` (shlo_conform/survey/streaming.py)."""
    from . import survey as accuracy
    from .survey import streaming
    dtypes = _split(a.dtypes, "--dtypes") or []
    if dtypes != ["f32"]:
        raise UsageError("--exhaustive takes --dtypes f32 (every f32 input; the 8- and 16-bit types are "
                         "exhaustive already, f64 has no end)")
    known = accuracy.float_ops()
    ops = _split(a.ops, "--ops")
    if not ops:
        raise UsageError("--exhaustive needs --ops: each unary op is 2^32 inputs")
    bad = [o for o in ops if known.get(o) != 1]
    if bad:
        raise UsageError(f"--ops: {bad[0]!r} is not a unary float element-wise op of the spec; "
                         f"unary: {', '.join(o for o, n in known.items() if n == 1)}")
    lo, hi = a.input_range or (0, 1 << 32)
    json_path = _output_path(a.json or "out/accuracy-exhaustive.json", "--json", ".json")
    cache = _output_dir(a.cache, "--cache")
    log = (lambda m: print(m, file=sys.stderr, flush=True))
    with _engine(a.cluster) as engine:
        doc = streaming.survey(backends, ops, "f32", cache, lo=lo, hi=hi, chunk=a.chunk or streaming.DEFAULT_CHUNK,
                               jobs=min(a.jobs, os.cpu_count() or 1), engine=engine, log=log,
                               timeout=a.timeout or accuracy.DEFAULT_ENTRY_TIMEOUT)
    print(accuracy.render(doc))
    json_path.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    print(f"results: {json_path}  ({', '.join(f'{k} {v} s' for k, v in doc['timing'].items())})")
    return 0


def cmd_fuzz(argv: list[str]) -> int:
    p = _Parser(prog=f"{PROG} fuzz",
                description="Random programs of several ops (drawn by hypothesis from the encoded ops, inputs "
                            "with special values), judged by the oracle against a backend; each distinct "
                            "disagreement is shrunk to a minimal program and written as a one-case suite that "
                            "--suite and explain replay.  Exit 1 when a disagreement was found.")
    p.add_argument("--backend", required=True)
    p.add_argument("--ops", help="comma-separated ops to draw from (default: every op fuzz can place)")
    p.add_argument("--budget", type=_bounded(float, 0, 7 * 24 * 3600, "--budget"), default=60.0,
                   help="seconds; no program starts after they are spent (default 60)")
    p.add_argument("--seed", type=_bounded(int, 0, 2 ** 32 - 1, "--seed"), default=0)
    p.add_argument("--out", default="out/fuzz", type=_nonempty("--out"),
                   help="folder for the shrunk cases, one suite folder each (default out/fuzz)")
    p.add_argument("--timeout", type=_bounded(float, 0, MAX_TIMEOUT, "--timeout"), default=None,
                   help="seconds per run (compiles get twice as long); default 10 s")
    p.add_argument("--campaigns", type=_bounded(int, 1, 1 << 16, "--campaigns"), default=None, metavar="N",
                   help="N campaigns with distinct reproducible seeds (the first keeps --seed), each in a fresh "
                        "process, their shrunk cases de-duplicated by cause (default 1; with --cluster: its workers)")
    p.add_argument("--cluster", type=_nonempty("--cluster"), metavar="ADDRESS",
                   help="a Dask scheduler (tcp://host:8786): the campaigns run on its workers")
    p.add_argument("--max-programs", type=_bounded(int, 1, 1 << 40, "--max-programs"), default=None, metavar="N",
                   help="stop each campaign after N programs (reproducible runs; default: the budget only)")
    a = p.parse_args(argv)
    from .runner import DEFAULT_RUN_TIMEOUT, BackendLoadError, check_backend_spec
    try:
        check_backend_spec(a.backend)
    except ValueError as e:
        raise UsageError(f"--backend: {e}") from None
    from .generators.fuzz_programs import fuzzable, fuzzable_ops
    from .spec.ops import OPS
    ops = _split(a.ops, "--ops")
    for o in ops or []:
        if o not in OPS:
            raise UsageError(f"--ops: no op {o!r} in the encoded spec")
        if fuzzable(OPS[o]):
            raise UsageError(f"--ops: fuzz cannot place {o!r} in a program ({fuzzable(OPS[o])})")
    out = _output_dir(a.out, "--out")
    from .fuzz import fuzz, fuzz_campaigns, stderr_log
    try:
        if a.campaigns is None and a.cluster is None:
            summary = fuzz(a.backend, fuzzable_ops(ops), seed=a.seed, budget=a.budget, out=out,
                           timeout=a.timeout or DEFAULT_RUN_TIMEOUT, max_programs=a.max_programs, log=stderr_log)
        else:
            with _engine(a.cluster) as engine:
                summary = fuzz_campaigns(a.backend, fuzzable_ops(ops), seed=a.seed, campaigns=a.campaigns or 1,
                                         budget=a.budget, out=out, timeout=a.timeout or DEFAULT_RUN_TIMEOUT,
                                         max_programs=a.max_programs, engine=engine, log=stderr_log)
    except BackendLoadError as e:
        raise UsageError(str(e)) from None
    print(summary.line())
    return 1 if summary.disagreements else 0


def cmd_export(argv: list[str]) -> int:
    p = _Parser(prog=f"{PROG} export",
                description="Write a suite's cases in the StableHLO interpreter's own test format "
                            "(stablehlo/tests/interpret: check.expect_* lines, one ops_<op>.mlir per op) for "
                            "stablehlo-translate --interpret; cases no check op states faithfully are listed in "
                            "SKIPPED.txt with the reason.  Same suite => same bytes.")
    p.add_argument("--suite", default="core", type=_nonempty("--suite"), help=SUITE_HELP + " (default: core)")
    p.add_argument("--out", required=True, type=_nonempty("--out"),
                   help="a new or empty folder, or one an earlier export wrote (its files are replaced); a "
                        "folder holding anything else is refused")
    p.add_argument("--ops", help="comma-separated op mnemonics to export (default: all)")
    p.add_argument("--dtypes", help="comma-separated element types to export (default: all)")
    a = p.parse_args(argv)
    from . import export
    from .suites.io import is_bundled, suite_digest
    path, manifest = _open_suite(a.suite)
    ops = _check_ops(_split(a.ops, "--ops"), path)
    dtypes = _check_dtypes(_split(a.dtypes, "--dtypes"))
    out = Path(a.out).expanduser()
    try:
        export.check_out(out)
    except ValueError as e:  # ExportRefused
        raise UsageError(f"--out {a.out}: {e}") from None
    cases = _load_cases(path, ops, dtypes)
    if not cases:
        raise UsageError(f"no cases in suite {a.suite!r} match the selection (--ops/--dtypes)")
    label = a.suite if is_bundled(path) else str(manifest.get("suite", path.name))
    try:
        s = export.export(cases, out, label, suite_digest(path))
    except ValueError as e:  # ExportRefused
        raise UsageError(f"--out {a.out}: {e}") from None
    except OSError as e:
        raise UsageError(f"--out {a.out}: cannot write the export ({e.strerror or e})") from None
    print(f"exported {sum(s.exported.values())} value cases ({len(s.exported)} ops, ops_<op>.mlir) and "
          f"{sum(s.invalid.values())} invalid cases (invalid_<op>.mlir) of {len(cases)} into {out}; "
          f"skipped {len(s.skipped)} (see {out / export.SKIPPED}):")
    for reason, n in sorted(s.reasons().items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {n:6d}  {reason}")
    return 0


COMMANDS = {"generate": cmd_generate, "check-spec": cmd_check_spec, "explain": cmd_explain,
            "report": cmd_report, "run": cmd_run, "list": cmd_list, "accuracy": cmd_accuracy,
            "export": cmd_export, "fuzz": cmd_fuzz}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in COMMANDS:
            return COMMANDS[argv[0]](argv[1:])
        if argv and not argv[0].startswith("-"):
            raise UsageError(f"unknown command {argv[0]!r}; commands: {', '.join(COMMANDS)}, "
                             "or score a backend with --backend=NAME")
        return cmd_score(argv)
    except UsageError as e:
        msg = str(e)
        if not msg.startswith(PROG):
            msg = f"{PROG}: {msg}"
        print(msg.replace("\n", " "), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\n{PROG}: interrupted; verdicts so far are kept in the journal — run the same command to resume",
              file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # never a traceback on the terminal
        if os.environ.get("SHLO_CONFORM_DEBUG"):
            raise
        print(f"{PROG}: internal error: {type(e).__name__}: {e} (SHLO_CONFORM_DEBUG=1 shows the traceback)"
              .replace("\n", " "), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
