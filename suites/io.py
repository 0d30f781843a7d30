"""Reading and writing suite folders: manifest.json plus one <op>.jsonl per op.

A suite is validated when it is loaded (DESIGN.md, "suites: the record on
disk"): each line is a valid case record (`records.check_record`), ids are
unique, a case's op is its file's, the files are the ones the manifest
counts and hold exactly the counts it states.  A damaged suite raises
`SuiteError` naming file, line and problem: it is refused, never scored,
never blamed on a backend.

Writing never deletes what it did not write: `write_suite` goes into a new
or empty folder, or into a suite folder (nothing but its manifest and the
op files the manifest names), where it replaces the files of the ops it
writes and keeps the others, with their counts, in the manifest.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from .records import Case

BUNDLED = Path(__file__).parent
CORE = BUNDLED / "core"
MANIFEST = "manifest.json"
_KIND_COUNTS = ("value", "invalid", "survey")
_UMASK = os.umask(0o022)
os.umask(_UMASK)  # read once: files written atomically get the mode a plain open() would give them


class SuiteError(ValueError):
    """A damaged suite: `file` (within the suite folder), `line` (1-based,
    or None for the whole file) and the problem."""

    def __init__(self, file: str, line: int | None, problem: str):
        self.file, self.line, self.problem = file, line, problem
        super().__init__(f"{file}:{line}: {problem}" if line else f"{file}: {problem}")


# ---------------------------------------------------------------------------
# Finding a suite: bundled ones by name, folders by path
# ---------------------------------------------------------------------------

def is_path(text: str) -> bool:
    """Is `text` written as a path (holds a separator, or starts with '.', '/'
    or '~')?  Anything else is first the name of a bundled suite."""
    return os.sep in text or "/" in text or text.startswith((".", "~"))


def suite_path(name_or_dir: str) -> Path:
    """A bundled suite by name ("core" is the bundled one even where a folder
    ./core exists), a folder by path ("./core", "/tmp/s", "a/b"); a bare
    name that no bundled suite has is a folder of that name if one exists."""
    if not name_or_dir.strip():
        raise FileNotFoundError("no suite named '' (give a bundled suite's name or a folder)")
    if is_path(name_or_dir):
        p = Path(name_or_dir).expanduser()
        if p.is_dir():
            return p
        raise FileNotFoundError(f"no suite folder {name_or_dir!r}")
    bundled = BUNDLED / name_or_dir
    if (bundled / MANIFEST).is_file():
        return bundled
    if Path(name_or_dir).is_dir():
        return Path(name_or_dir)
    raise FileNotFoundError(f"no suite named {name_or_dir!r} (neither a bundled suite nor a folder; "
                            f"bundled: {', '.join(bundled_suites()) or 'none'})")


def bundled_suites() -> list[str]:
    return sorted(d.name for d in BUNDLED.iterdir() if (d / MANIFEST).is_file())


def is_bundled(path: Path) -> bool:
    return Path(path).resolve().parent == BUNDLED.resolve()


# ---------------------------------------------------------------------------
# Loading, with validation
# ---------------------------------------------------------------------------

def load_manifest(path: Path) -> dict:
    """The manifest, checked: a JSON object whose `counts` give, per op,
    non-negative value/invalid/survey counts and whose `total` is their sum."""
    mf = Path(path) / MANIFEST
    if not mf.is_file():
        raise FileNotFoundError(f"no {MANIFEST} in {path}: not a suite folder")
    try:
        manifest = json.loads(mf.read_text())
    except (ValueError, UnicodeDecodeError) as e:
        raise SuiteError(MANIFEST, None, f"not JSON ({e})") from None
    if not isinstance(manifest, dict):
        raise SuiteError(MANIFEST, None, "not a JSON object")
    counts = manifest.get("counts")
    if not isinstance(counts, dict):
        raise SuiteError(MANIFEST, None, "no 'counts' object (op -> value/invalid/survey counts)")
    for op, c in counts.items():
        if not isinstance(c, dict) or set(c) != set(_KIND_COUNTS) or not all(
                isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in c.values()):
            raise SuiteError(MANIFEST, None, f"counts of {op!r} must be non-negative integers "
                                             f"for exactly {', '.join(_KIND_COUNTS)}")
    total = sum(sum(c.values()) for c in counts.values())
    if manifest.get("total") != total:
        raise SuiteError(MANIFEST, None, f"'total' is {manifest.get('total')!r}; its counts add up to {total}")
    return manifest


def _op_files(path: Path, manifest: dict) -> dict[str, Path]:
    """op -> file: the `<op>.jsonl` files, which must be the ops the manifest counts."""
    files = {f.stem: f for f in sorted(Path(path).glob("*.jsonl"))}
    for op in files:
        if op not in manifest["counts"]:
            raise SuiteError(f"{op}.jsonl", None, f"{MANIFEST} counts no op {op!r}")
    for op in manifest["counts"]:
        if op not in files:
            raise SuiteError(MANIFEST, None, f"counts op {op!r}, but there is no {op}.jsonl")
    return files


def _known_ops(manifest: dict) -> set[str] | None:
    """The ops a suite may hold: those of the encoded spec for a suite our
    generator wrote (its manifest names a generator version); any for
    others (hand-written or third-party suites)."""
    if "generator_version" not in manifest:
        return None
    from ..spec.added import ADDED
    from ..spec.ops import OPS
    return set(OPS) | set(ADDED)


def _load_file(f: Path, known: set[str] | None) -> list[Case]:
    """Every case of one op file, validated; SuiteError on the first problem."""
    op = f.stem
    if known is not None and op not in known:
        raise SuiteError(f.name, None, f"{op!r} is not an op of the encoded spec")
    try:
        text = f.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise SuiteError(f.name, None, f"not UTF-8 text ({e})") from None
    cases, seen = [], {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            c = Case.from_json(line)
        except ValueError as e:
            raise SuiteError(f.name, n, str(e)) from None
        if c.op != op:
            raise SuiteError(f.name, n, f"case of op {c.op!r} in the file of {op!r}")
        if c.id in seen:
            raise SuiteError(f.name, n, f"duplicate id {c.id!r} (first on line {seen[c.id]})")
        seen[c.id] = n
        cases.append(c)
    return cases


def _check_counts(f: Path, cases: list[Case], stated: dict) -> None:
    held = {k: sum(c.kind == k for c in cases) for k in _KIND_COUNTS}
    if held != stated:
        diff = next(k for k in _KIND_COUNTS if held[k] != stated[k])
        raise SuiteError(f.name, None, f"holds {held[diff]} {diff} cases; {MANIFEST} counts {stated[diff]}")


def load_cases(path: Path, ops: set[str] | None = None, dtypes: set[str] | None = None) -> list[Case]:
    """The cases of the chosen ops (all by default) and element types, from a
    suite folder validated as the module docstring says.  Ids are unique
    across the suite: each is `<op>/<dtype>/<hash>` with its file's op, and
    unique within its file."""
    path = Path(path)
    manifest = load_manifest(path)
    files = _op_files(path, manifest)
    known = _known_ops(manifest)
    cases = []
    for op, f in files.items():
        if ops is not None and op not in ops:
            continue
        got = _load_file(f, known)
        _check_counts(f, got, manifest["counts"][op])
        cases += [c for c in got if dtypes is None or c.dtype in dtypes]
    return cases


def suite_digest(path: Path) -> str:
    """A hash of the suite's files (manifest and op files, names and bytes):
    what a run's verdicts depend on from the suite."""
    h = hashlib.sha256()
    for f in sorted([Path(path) / MANIFEST, *Path(path).glob("*.jsonl")]):
        h.update(f.name.encode() + b"\0")
        h.update(f.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------

class SuiteWriteRefused(ValueError):
    """The output folder holds something that is not a suite we may replace."""


def write_text_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` so that a reader (or an interruption, or a full
    disk) sees the old file or the new one, never a part: a temporary file
    in the same folder, then os.replace."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def foreign_entries(path: Path, ours: set[str]) -> list[str]:
    """The entries of folder `path` that a writer must not touch: anything
    but the plain files named in `ours` (what its own manifest lists).  The
    one rule of every command that writes into a folder (generate, export):
    a folder holding a foreign entry is refused, never cleaned."""
    return [e.name for e in sorted(Path(path).iterdir()) if e.name not in ours or not e.is_file()]


def _existing_suite(path: Path) -> dict | None:
    """The manifest of the suite already in `path`; None for a new or empty
    folder; SuiteWriteRefused for anything that is not a suite folder."""
    if not path.exists():
        return None
    if not path.is_dir():
        raise SuiteWriteRefused(f"{path} is not a folder")
    entries = sorted(path.iterdir())
    if not entries:
        return None
    try:
        manifest = load_manifest(path)
    except (FileNotFoundError, SuiteError) as e:
        raise SuiteWriteRefused(f"{path} is not empty and not a suite folder ({e}); "
                                "write the suite into a new or empty folder") from None
    foreign = foreign_entries(path, {MANIFEST, *(f"{op}.jsonl" for op in manifest["counts"])})
    if foreign:
        raise SuiteWriteRefused(f"{path} holds {foreign[0]!r}, which is not part of its suite; "
                                "write the suite into a new or empty folder")
    return manifest


def _merged_manifest(path: Path, old: dict, new: dict, written: set[str]) -> dict:
    """The manifest of `old`'s suite with the ops in `written` replaced by
    `new`'s: the other ops keep their entries (counts, and any per-op map);
    their cases must come from the same generation (equal settings)."""
    kept = set(old["counts"]) - written
    merged = dict(new)
    for key, value in new.items():
        if key in ("counts", "total"):
            continue
        before = old.get(key)
        if isinstance(value, dict) and isinstance(before, dict):
            merged[key] = {**{op: v for op, v in before.items() if op in kept}, **value}
            merged[key] = dict(sorted(merged[key].items()))
        elif kept and before != value:
            raise SuiteWriteRefused(
                f"{path} holds a suite with {key} {before!r}; this one has {key} {value!r}, and its other "
                f"ops ({', '.join(sorted(kept)[:3])}{', …' if len(kept) > 3 else ''}) would be left from "
                "the other: write it into a new or empty folder, or regenerate every op")
    merged["counts"] = {op: c for op, c in old["counts"].items() if op in kept}
    return merged


def check_suite_write(path: Path, manifest: dict, ops: set[str]) -> None:
    """Raise SuiteWriteRefused now for a write of `ops` with (part of) this
    manifest that `write_suite` would refuse: callers check before the work
    of generating, not after it."""
    old = _existing_suite(Path(path))
    if old is not None:
        _merged_manifest(Path(path), old, manifest, set(ops))


def write_suite(path: Path, manifest: dict, cases: list[Case]) -> None:
    """Write deterministically: ops sorted by name, cases in the given order;
    into a new or empty folder, or over a suite folder (module docstring)."""
    path = Path(path)
    old = _existing_suite(path)
    by_op: dict[str, list[Case]] = {}
    for c in cases:
        by_op.setdefault(c.op, []).append(c)
    if old is not None:
        manifest = _merged_manifest(path, old, manifest, set(by_op))
    else:
        manifest = {**manifest, "counts": {}}
    path.mkdir(parents=True, exist_ok=True)
    counts = dict(manifest["counts"])
    for op in sorted(by_op):
        write_text_atomic(path / f"{op}.jsonl", "".join(c.to_json() + "\n" for c in by_op[op]))
        counts[op] = {k: sum(c.kind == k for c in by_op[op]) for k in _KIND_COUNTS}
    counts = dict(sorted(counts.items()))
    manifest = {**manifest, "counts": counts, "total": sum(sum(c.values()) for c in counts.values())}
    write_text_atomic(path / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
