"""No expectation kind is decided by its name outside its own module (spec/kinds/).

Issue 33: the oracle and the judge ask a kind object what it means
(`kind_of(e).ranged(e)`, `.admits`, `.pinned` …) and create an expectation
of a kind by its constant (`BOUNDED.name`); a kind's name as a string
literal in a comparison with a kind, in `kind=`, in an assignment to
`.kind`/`KIND`, or as an `Expectation`'s kind argument would re-decide the
kind elsewhere — the half-open state this test keeps closed.

Read from each module's syntax tree, so docstrings and unrelated strings
("exact" as an op's accuracy class, "ulp" as a report column) are not
mistaken for kinds."""
from __future__ import annotations

import ast
from pathlib import Path

from shlo_conform.spec.kinds import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
AREAS = ("spec", "oracle", "suites", "generators", "backends", "reports", "shlo_conform", "bench")
HOME = ROOT / "spec" / "kinds"
NAMES = frozenset(REGISTRY)


def _named(node) -> bool:
    """A kind name as a literal: the constant itself, one of a tuple/list/set
    of constants, or either branch of a conditional expression."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value in NAMES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_named(e) for e in node.elts)
    if isinstance(node, ast.IfExp):
        return _named(node.body) or _named(node.orelse)
    return False


def _is_kind(node) -> bool:
    """An expression reading an expectation's kind: `x.kind`, `getattr(x, "kind", …)`."""
    if isinstance(node, ast.Attribute):
        return node.attr == "kind"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr":
        return len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and node.args[1].value == "kind"
    return False


def _is_expectation(func) -> bool:
    return (isinstance(func, ast.Name) and func.id == "Expectation") or \
        (isinstance(func, ast.Attribute) and func.attr == "Expectation")


def breaches(source: str, where: str = "<source>") -> list[str]:
    """Where `source` names a kind by a string literal (module docstring)."""
    out = []
    for node in ast.walk(ast.parse(source, where)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_named(s) for s in sides) and any(_is_kind(s) for s in sides):
                out.append(f"{where}:{line}: a kind compared with a kind name")
        elif isinstance(node, ast.Call):
            if any(k.arg == "kind" and _named(k.value) for k in node.keywords):
                out.append(f"{where}:{line}: kind= a kind name")
            if _is_expectation(node.func) and len(node.args) > 2 and _named(node.args[2]):
                out.append(f"{where}:{line}: an Expectation's kind as a string literal")
        elif isinstance(node, ast.Assign) and _named(node.value):
            for t in node.targets:
                if _is_kind(t) or (isinstance(t, ast.Name) and t.id.upper().endswith("KIND")):
                    out.append(f"{where}:{line}: a kind name assigned to {ast.unparse(t)}")
    return out


def test_the_scan_sees_each_way_a_kind_is_named():
    """The scan refuses each form it is there to refuse (a check that could
    never fail would prove nothing), and lets the asked forms pass."""
    named = ['e.kind == "bounded"', 'e.kind != "exact"', 'getattr(v, "kind", None) in ("ulp", "bounded")',
             'dataclasses.replace(o, kind="bounded")', 'Expectation(t, b, "ulp" if u else "exact")',
             'e.kind = "bounded"', 'KIND = "residual"']
    for src in named:
        assert breaches(src), src
    asked = ['kind_of(e).ranged(e)', 'Expectation(t, b, BOUNDED.name)', 'e.kind = BOUNDED.name',
             'case.kind == "survey"', '_assemble(per, t, "exact", False)', 'x = {"ulp": 1}']
    for src in asked:
        assert not breaches(src), src


def test_no_kind_is_named_outside_its_module():
    found = []
    for area in AREAS:
        for f in sorted((ROOT / area).rglob("*.py")):
            if f.is_relative_to(HOME) or ".venv" in f.parts:
                continue
            found += breaches(f.read_text(), str(f.relative_to(ROOT)))
    assert not found, "\n".join(found)


def test_every_kind_module_is_registered_under_its_own_name():
    """One module per kind, found by name: each spec/kinds module registers
    a kind, and every registered kind's name is unique to it."""
    modules = {p.stem for p in HOME.glob("*.py") if p.stem != "__init__"}
    homes = {type(k).__module__.rsplit(".", 1)[-1] for k in REGISTRY.values()
             if type(k).__module__.startswith("shlo_conform.spec.kinds.")}
    assert modules <= homes
    assert all(name == k.name for name, k in REGISTRY.items())
