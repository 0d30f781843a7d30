"""What an installed wheel holds is what the tree holds: every package
folder (an `__init__.py` under shlo_conform/ or an area folder) is listed in
pyproject.toml's `packages` — a new subpackage left out would import in the
editable checkout and fail once installed (spec/dsl/, the commands and the
pipeline folders were, when they were made)."""
from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AREAS = {"spec": "shlo_conform.spec", "oracle": "shlo_conform.oracle", "suites": "shlo_conform.suites",
         "generators": "shlo_conform.generators", "backends": "shlo_conform.backends",
         "reports": "shlo_conform.reports"}


def _packages_in_tree() -> set[str]:
    found = set()
    for init in (ROOT / "shlo_conform").rglob("__init__.py"):
        rel = init.parent.relative_to(ROOT / "shlo_conform")
        if rel.parts and rel.parts[0] in AREAS:   # the area symlinks: counted from the area folders below
            continue
        found.add(".".join(("shlo_conform",) + rel.parts))
    for folder, name in AREAS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            if "__pycache__" in init.parts:
                continue
            found.add(".".join((name,) + init.parent.relative_to(ROOT / folder).parts))
    return {p for p in found if "__pycache__" not in p}


def test_every_package_folder_is_listed_for_the_wheel():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(cfg["packages"])
    tree = _packages_in_tree()
    assert tree - listed == set(), f"package folders pyproject.toml leaves out of a wheel: {sorted(tree - listed)}"
    assert listed - tree == set(), f"pyproject.toml lists packages the tree does not have: {sorted(listed - tree)}"
    assert len(tree) >= 15
