"""Every import of our own modules resolves for a standard editor tool.

The areas are top-level folders (spec/, oracle/, …) and subpackages of the
one import package `shlo_conform`; `shlo_conform/<area>` is a symlink to
each, so `from ..spec.ops import OPS` in shlo_conform/commands/common.py,
`from ..spec.dsl import …` in oracle/ and `import shlo_conform.oracle` from the
repository root all find the file on disk — no mapping only an installer
knows.  jedi (the engine of common editors' Python support) is asked to go
to the definition of every name imported from our modules; without the
symlinks, 158 of the 1883 names imported from our modules do not resolve
(2026-11-25)."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import jedi

ROOT = Path(__file__).resolve().parents[2]
AREAS = ("spec", "oracle", "suites", "generators", "backends", "reports", "shlo_conform")


def _own_imports(path: Path):
    """(line, column, name) of every name a module imports from ours."""
    src = path.read_text()
    lines = src.splitlines()
    for node in ast.walk(ast.parse(src)):
        if not (isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("shlo_conform"))):
            continue
        for a in node.names:
            if a.name == "*":
                continue
            for ln in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                start = lines[ln - 1].find("import") + len("import") if ln == node.lineno else 0
                col = lines[ln - 1].find(a.name, start)
                if col >= 0:
                    yield ln, col, a.name
                    break


def _files():
    for area in AREAS:
        for f in sorted((ROOT / area).rglob("*.py")):
            if not any(p.is_symlink() for p in f.parents):
                yield f


@pytest.mark.long   # a layout check of every module (jedi, ~15 s): make test-long, which CI runs
def test_every_import_of_ours_resolves_in_jedi():
    project = jedi.Project(str(ROOT))
    unresolved, total = [], 0
    for f in _files():
        script = jedi.Script(f.read_text(), path=str(f), project=project)
        for ln, col, name in _own_imports(f):
            total += 1
            if not script.goto(ln, col):
                unresolved.append(f"{f.relative_to(ROOT)}:{ln} {name}")
    assert total > 1000
    assert not unresolved, f"{len(unresolved)} of {total} imports do not resolve:\n" + "\n".join(unresolved[:40])


def test_the_package_imports_from_the_repository_root_without_an_installer():
    """A python started at the repository root, with the installer's import
    hook taken away, finds every area through the folders themselves."""
    code = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path if 'ditable' not in repr(f)]; "
            "import shlo_conform.cli, shlo_conform.spec.ops, shlo_conform.oracle.program, shlo_conform.suites.io, "
            "shlo_conform.generators.suite, shlo_conform.backends.base, shlo_conform.reports.html; "
            "print(shlo_conform.oracle.program.__file__)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == str(ROOT / "shlo_conform" / "oracle" / "program.py")
