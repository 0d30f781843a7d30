"""Reading and writing suite folders: manifest.json plus one <op>.jsonl per op."""
from __future__ import annotations

import json
from pathlib import Path

from .records import Case

CORE = Path(__file__).parent / "core"


def suite_path(name_or_dir: str) -> Path:
    """A bundled suite by name ("core"), or a folder path."""
    p = Path(name_or_dir)
    if p.is_dir():
        return p
    bundled = Path(__file__).parent / name_or_dir
    if (bundled / "manifest.json").is_file():
        return bundled
    raise FileNotFoundError(f"no suite named {name_or_dir!r} (neither a bundled suite nor a folder with manifest.json)")


def load_manifest(path: Path) -> dict:
    mf = path / "manifest.json"
    if not mf.is_file():
        raise FileNotFoundError(f"{path} has no manifest.json: not a suite folder")
    return json.loads(mf.read_text())


def load_cases(path: Path, ops: set[str] | None = None, dtypes: set[str] | None = None) -> list[Case]:
    cases = []
    for f in sorted(path.glob("*.jsonl")):
        if ops is not None and f.stem not in ops:
            continue
        for n, line in enumerate(f.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                c = Case.from_json(line)
            except (ValueError, TypeError, KeyError) as e:
                raise ValueError(f"{f.name}:{n}: not a case record ({e})") from None
            if dtypes is None or c.dtype in dtypes:
                cases.append(c)
    return cases


def write_suite(path: Path, manifest: dict, cases: list[Case]) -> None:
    """Write deterministically: ops sorted by name, cases in the given order."""
    path.mkdir(parents=True, exist_ok=True)
    for old in path.glob("*.jsonl"):
        old.unlink()
    by_op: dict[str, list[Case]] = {}
    for c in cases:
        by_op.setdefault(c.op, []).append(c)
    counts = {}
    for op in sorted(by_op):
        (path / f"{op}.jsonl").write_text("".join(c.to_json() + "\n" for c in by_op[op]))
        counts[op] = {"value": sum(c.kind == "value" for c in by_op[op]),
                      "invalid": sum(c.kind == "invalid" for c in by_op[op]),
                      "survey": sum(c.kind == "survey" for c in by_op[op])}
    manifest = {**manifest, "counts": counts, "total": len(cases)}
    (path / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
