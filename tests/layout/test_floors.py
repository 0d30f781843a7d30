"""The floor table of DESIGN.md, enforced: an import only ever points down,
and areas on one floor never import each other.

    4  shlo_conform/                       everything below
    3  generators/, backends/, reports/    floors 1-2; never each other
    2  oracle/, suites/                    spec/; never each other
    1  spec/                               nothing of ours above it

Imports are read from each module's syntax tree (`import` and `from`
statements anywhere in the file, deferred ones inside functions included),
so a breach cannot hide in a function body."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FLOORS = {"spec": 1, "oracle": 2, "suites": 2, "generators": 3, "backends": 3, "reports": 3, "shlo_conform": 4}


def _modules():
    for area in FLOORS:
        for f in sorted((ROOT / area).rglob("*.py")):
            if f.is_symlink() or any(p.is_symlink() for p in f.relative_to(ROOT).parents if str(p) != "."):
                continue
            yield area, f


def _imported_areas(area: str, path: Path, root: Path = ROOT) -> list[tuple[int, str]]:
    """(line, area) of every import of one of our areas in `path` (a module
    of `area` under `root`)."""
    rel = path.relative_to(root / area)
    package = [area] + list(rel.parts[:-1])   # the module's package, as the area's own folders
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                # from ..x import y: `level` packages up from the module's package; the areas are
                # subpackages of shlo_conform, so going above an area lands in shlo_conform
                base = package[: len(package) - node.level + 1]
                target = base + (node.module.split(".") if node.module else [])
                if not base:   # above the area: shlo_conform's level
                    target = ["shlo_conform"] + (node.module.split(".") if node.module else [])
                names = [".".join(target)]
            else:
                names = [node.module or ""]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "shlo_conform" and len(parts) > 1 and parts[1] in FLOORS:
                parts = parts[1:]
            if parts[0] in FLOORS:
                out.append((node.lineno, parts[0]))
    return out


def test_every_area_has_modules():
    assert {a for a, _ in _modules()} == set(FLOORS)


@pytest.mark.parametrize("area", list(FLOORS))
def test_imports_only_point_down(area):
    breaches = []
    for a, path in _modules():
        if a != area:
            continue
        for line, target in _imported_areas(a, path):
            if target == a:
                continue
            down = FLOORS[target] < FLOORS[a]
            if not down:
                breaches.append(f"{path.relative_to(ROOT)}:{line} imports {target} (floor {FLOORS[target]}) "
                                f"from floor {FLOORS[a]}")
    assert not breaches, "\n".join(breaches)


def test_the_check_sees_a_breach(tmp_path):
    """The reader above finds relative and absolute imports upward (a check
    that could not fail would prove nothing)."""
    f = tmp_path / "spec" / "ops" / "probe.py"
    f.parent.mkdir(parents=True)
    f.write_text("def g():\n    from ...oracle import fast\n    import shlo_conform.reports.table\n"
                 "    from ..dsl import OpSpec\n")
    assert [t for _, t in _imported_areas("spec", f, tmp_path)] == ["oracle", "reports", "spec"]
