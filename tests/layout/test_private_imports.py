"""Two layout rules of DESIGN.md ("small modules named from the spec"), enforced.

A module's private names (`_x`) are its own: a name another module needs is
part of what the module offers and is spelled as such, so a reader can tell
a module's surface from its insides, and a change inside a module cannot
break another one silently.  Read here: `from m import _x` and `m._x` for a
module `m` of ours, anywhere in a file (deferred imports inside functions
included); a package's `_x` counts like a module's.  None is allowed.

No import cycles among our modules at import time: a cycle makes the
modules' meaning depend on which is imported first (a name read from a
module half-initialised), and it hides which module is the lower one.  The
graph is read statically from each module's import statements executed at
import time (module level, class bodies; not function bodies, where a
deferred import is the way to reach a module that imports this one).
`ALLOWED_CYCLES` would name a cycle that has to stay; none does.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
AREAS = ("spec", "oracle", "suites", "generators", "backends", "reports", "shlo_conform")

# (file, the private name it takes from another module): a site that must stay, with its reason; none.

# Import-time cycles among our modules that exist, by their members (a strongly connected component of
# the graph); none today.
ALLOWED_CYCLES: dict[frozenset, str] = {}


def _files():
    """(area, path) of every module of ours, each once (shlo_conform/<area> are links to the areas)."""
    for area in AREAS:
        for f in sorted((ROOT / area).rglob("*.py")):
            if not any(p.is_symlink() for p in f.relative_to(ROOT).parents if str(p) != "."):
                yield area, f


def _dotted(area: str, path: Path, root: Path = ROOT) -> str:
    """The module's import name: spec/dsl/semantics.py -> shlo_conform.spec.dsl.semantics."""
    parts = list(path.relative_to(root / area).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["shlo_conform"] + ([] if area == "shlo_conform" else [area]) + parts)


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _absolute(node: ast.ImportFrom, module: str, package: bool) -> str:
    """The module a `from … import` names, absolute."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if package else module.split(".")[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


class _Modules:
    """Our modules by import name, and which of them are packages (the areas are
    subpackages of shlo_conform, whatever folder holds them)."""

    def __init__(self, root: Path = ROOT, files=None):
        self.root = root
        self.path: dict[str, Path] = {}
        for area, f in (files if files is not None else _files()):
            self.path[_dotted(area, f, root)] = f

    def ours(self, name: str) -> bool:
        return name == "shlo_conform" or name.startswith("shlo_conform.")


def private_imports(area: str, path: Path, modules: _Modules) -> list[tuple[int, str, str]]:
    """(line, module, name) of each private name `path` takes from another module of ours:
    `from m import _x`, and `m._x` where `m` was imported as one of our modules."""
    module, package = _dotted(area, path, modules.root), _is_package(path)
    tree = ast.parse(path.read_text(), str(path))
    out, module_names = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _absolute(node, module, package)
            if not modules.ours(source):
                continue
            for a in node.names:
                full = f"{source}.{a.name}"
                if full in modules.path:   # `from pkg import mod`: a module, read below
                    module_names[a.asname or a.name] = full
                elif a.name.startswith("_") and not a.name.startswith("__"):
                    out.append((node.lineno, source, a.name))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if modules.ours(a.name) and a.asname:
                    module_names[a.asname] = a.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in module_names \
                and node.attr.startswith("_") and not node.attr.startswith("__"):
            out.append((node.lineno, module_names[node.value.id], node.attr))
    return out


def _import_time_nodes(tree: ast.Module):
    """The import statements that run when the module is imported: module level and class
    bodies, inside `if`/`try`/`with` too; not in functions, nor under `if TYPE_CHECKING`."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt) or isinstance(child, ast.excepthandler):
                    stack.append(child)


def import_graph(modules: _Modules) -> dict[str, set]:
    """{module: the modules of ours it imports at import time}.  `from pkg import x` is an
    edge to pkg.x when that is a module, else to pkg (its __init__)."""
    graph: dict[str, set] = {m: set() for m in modules.path}
    by_path = {p: m for m, p in modules.path.items()}
    for path, module in by_path.items():
        package = _is_package(path)
        for node in _import_time_nodes(ast.parse(path.read_text(), str(path))):
            targets = []
            if isinstance(node, ast.ImportFrom):
                source = _absolute(node, module, package)
                if not modules.ours(source):
                    continue
                for a in node.names:
                    full = f"{source}.{a.name}"
                    targets.append(full if full in modules.path else source)
            else:
                targets = [a.name for a in node.names if modules.ours(a.name)]
            graph[module].update(t for t in targets if t in modules.path and t != module)
    return graph


def cycles(graph: dict[str, set]) -> list[frozenset]:
    """The strongly connected components of more than one module (Tarjan), iteratively."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(frozenset(comp))
    return out


def _found() -> dict[tuple[str, str], list[str]]:
    modules = _Modules()
    found: dict[tuple[str, str], list[str]] = {}
    for area, path in _files():
        rel = str(path.relative_to(ROOT))
        for line, source, name in private_imports(area, path, modules):
            found.setdefault((rel, name), []).append(f"{rel}:{line} takes {name} from {source}")
    return found


def test_no_module_takes_another_modules_private_name():
    breaches = [site for key, sites in sorted(_found().items()) for site in sites]
    assert not breaches, ("private names taken from other modules (make the name public in its module and "
                          "update every user):\n" + "\n".join(breaches))


def test_no_import_cycle_at_import_time():
    found = cycles(import_graph(_Modules()))
    new = [sorted(c) for c in found if c not in ALLOWED_CYCLES]
    assert not new, "import cycles among our modules:\n" + "\n".join(" <-> ".join(c) for c in new)
    gone = [sorted(c) for c in ALLOWED_CYCLES if c not in found]
    assert not gone, f"no longer cycles, so remove from ALLOWED_CYCLES: {gone}"


def test_the_graph_sees_our_modules():
    """The reader resolves relative imports and packages: the graph holds the edges
    every reader of the code sees (a check that found no edges would prove nothing)."""
    graph = import_graph(_Modules())
    assert len(graph) > 200
    assert "shlo_conform.spec.dsl" in graph["shlo_conform.spec.ops.add"]
    assert "shlo_conform.spec.dsl.constraints" in graph["shlo_conform.spec.dsl"]
    assert "shlo_conform.oracle.execution" in graph["shlo_conform.oracle.program"]
    # a deferred import (inside a function) is no import-time edge: oracle/grid.py reaches execution so
    assert "shlo_conform.oracle.execution" not in graph["shlo_conform.oracle.grid"]


def _write(root: Path, files: dict[str, str]):
    listed = []
    for rel, text in files.items():
        f = root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
        listed.append((rel.split("/")[0], f))
    return _Modules(root, listed)


def test_the_checks_see_a_breach(tmp_path):
    """A private from-import, a private attribute of an imported module and a cycle
    through a package are all found; a deferred import and a public name are not."""
    modules = _write(tmp_path, {
        "spec/__init__.py": "",
        "spec/a.py": "from .b import _hidden, shown\nfrom . import c\nX = c._inner\n",
        "spec/b.py": "from .pkg import thing\ndef f():\n    from .a import X\n",
        "spec/c.py": "",
        "spec/pkg/__init__.py": "from .d import thing\n",
        "spec/pkg/d.py": "from ..b import shown\nthing = 1\n",
    })
    found = private_imports("spec", tmp_path / "spec" / "a.py", modules)
    assert [(s, n) for _, s, n in found] == [("shlo_conform.spec.b", "_hidden"), ("shlo_conform.spec.c", "_inner")]
    assert cycles(import_graph(modules)) == [frozenset({"shlo_conform.spec.b", "shlo_conform.spec.pkg",
                                                        "shlo_conform.spec.pkg.d"})]


@pytest.mark.parametrize("text, cycle", [("", False), ("import shlo_conform.spec.x as y\n", True)])
def test_an_absolute_import_is_an_edge_too(tmp_path, text, cycle):
    modules = _write(tmp_path, {"spec/__init__.py": "", "spec/x.py": "from . import y\n", "spec/y.py": text})
    assert bool(cycles(import_graph(modules))) == cycle
