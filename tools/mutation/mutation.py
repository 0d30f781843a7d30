"""Mutation testing of the oracle against a stored suite (issue 25).

    .venv/bin/python tools/mutation/mutation.py --ops sine,add          # per op: minutes
    .venv/bin/python tools/mutation/mutation.py --all                   # make mutation: every op, the oracle's modules
    .venv/bin/python tools/mutation/mutation.py --shared                # the oracle's shared modules alone (~35 min)
    options: --suite core|PATH  --seed 0  --sample N (per module; 0: all)  --modules a.py,b.py
             --tests FILES|''  --grep REGEX  --timeout S  --json out.json  --list (the sample only)
             --only REPORT|JSON|JOURNAL (rescore the mutants listed there)  --no-later
             --shard I/N (one process a core: a shard scores mutants k with k % N = I)
    With --json, each finished mutant is appended to out.json.journal: an interrupted
    run given the same arguments resumes from it.  Two cores, two shards (`make mutation`
    runs them): each shard its own --json; their journals joined under one head line are
    the whole run's, and a run without --shard on them restores every mutant (no baselines,
    no scoring) and writes the whole report.

A suite is as good as the wrong implementations it catches.  A *mutant*
is the oracle with one small break in its semantics code — an operator
swapped, a comparison loosened, a constant moved by one, a branch dropped,
two arguments swapped — made by cosmic-ray's operators (its mutation
engine, `cosmic_ray.mutating.mutate_code`; "drop a branch" and "swap two
arguments" are two operators of our own below, in the same plug-in form).
Each mutant is scored as a backend on the op's cases of the suite, in a
process forked for it: the mutated module is served from memory by an
import hook (the working tree is never written), the project imported
afresh, every case compiled, run and judged exactly as the runner
classifies it (`Runner.compile_verdict` / `run_verdict`).  A mutant is
*killed* when any verdict differs from the unmutated oracle's — the
verdict with the labels of the implementation-defined choices it reports,
so a mutant that swaps negate's "wraps" and "saturates" is noticed; for a
rejection, with the constraint the oracle names (`violates <op>_c<N>`), so
one that moves a rejection from one constraint to another is too.  A
mutant that no longer imports, raises in the scorer or runs past --timeout
is killed too: an implementation that crashes is noticed.  An op whose
module declares whole-array claims (`Generic`: numpy serves the elements
where the claim says `fn` would answer the same) is scored twice: as the
runner judges, and by its statement alone (`elementwise.statement_route`,
every element from `fn`) — the claims route around most of `fn` (finite
operands of exponential are the numpy pass's), and an implementation
that behaves like a mutated `fn` is what the suite must catch.  An op whose
cases report implementation-defined choices is scored once more with the
oracle taking the last named alternative of each such element
(`OracleBackend(choice="last")`): the spec allows that implementation as
much as the first, and a mutant that changes only a later alternative
(shift_left's "amount modulo width") shows only where it is chosen.  A survivor of
the suite is then run against the unit tests that hold what one output
value cannot show (--tests, `-k OP`): a failing test kills it, counted
apart ("by tests").  What survives those meets two more checks, each
counted apart too: the op's `check-spec` (the z3 reading of its
constraints: a constraint mutated into one that is never true, or no
longer independent, fails it) and the op's cases regenerated from the
suite's seed with the mutant in place (the committed suite is what the
generator writes, so a mutant that changes any program, input, expectation
or implementation-defined declaration of the suite shows there — a
regenerated suite is how the project would see it).

Survivors are classified:
  * not reached — no case of the op executes the mutated line (a line
    trace of the unmutated run; module-level code runs at import and
    counts as reached), nor a case of another op scored in the same run
    (a helper that other ops import — all_gather's `divisible` is
    all_to_all's — is scored against those), and neither the op's
    check-spec nor its regeneration notices it;
  * equivalent — declared with its reason in tools/mutation/equivalent.toml,
    keyed by `mutant_key` (file, function, operator, the source line, its
    rank among identical ones: stable while other lines change);
  * gap — reached, not equivalent, and no verdict changed: what the suite
    cannot yet tell apart.

Sampling is deterministic: each module's candidate mutants are ranked by
sha256(seed, key) and the first --sample taken, so two runs with one seed
take the same mutants and adding code elsewhere leaves the rest of the
sample alone; one mutant per site and operator family first (`+` has ten
replacements: the seed picks one).  What is never mutated: docstrings and
strings (cosmic-ray has no string operators), an op module's `exercise=`
argument, structure hints, quantized `example=`, `appended_last=` streams,
a token op's `cases` and recv's table of device transfers, with the
definitions only they use (how generators pick inputs; no verdict reads
them — stop 38's run found 58 such mutants "killed" only by regenerating
the suite, check-spec or a test: changes of which programs are written,
not of a rule any implementation could follow), and argument swaps of
symmetric calls (`same_type`, `same_baseline_type`, `And` …).

In --all mode every op module is mutated against its own op's cases, and
each oracle/ and spec/ module in ORACLE_MODULES (--shared: those alone)
against the cases that execute the mutated line — a trace per case, the
lines run while the project loads counting for every case — op after op
until a verdict changes; a survivor of those meets the module's own tests
(every tests/spec, tests/oracle file importing it) and the reached ops'
tests, then their regeneration (no check-spec for oracle/: spec/ imports
nothing of it).

The unmutated baselines (every op's verdicts and the lines each case runs)
are kept in out/mutation-baselines/ under a digest of the package's code
and the op's suite file (`_Baselines`): a second shard, a rescore or an
`--only` run on the same tree reads them.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import functools
import hashlib
import json
import os
import pickle
import re
import select
import signal
import sys
import time
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EQUIVALENT = Path(__file__).resolve().parent / "equivalent.toml"
# Shared semantics code that --all mutates besides the op modules (each against the ops that reach it).
ORACLE_MODULES = ("oracle/elementwise.py", "oracle/data_movement.py", "oracle/rounding.py", "oracle/fast.py",
                  "oracle/accumulate.py", "oracle/program.py", "oracle/execution.py", "oracle/functions.py",
                  "oracle/attribute_values.py", "oracle/partitioned.py", "spec/annex_g.py", "spec/ieee.py",
                  "spec/selection.py", "spec/expression.py", "spec/log_add_exp.py")
# cosmic-ray operators left out: NoOp changes nothing; VariableReplacer/Inserter need a named cause
# and effect; RemoveDecorator and ExceptionReplacer break nothing a verdict can see but import order.
SKIPPED_OPERATORS = ("core/NoOp", "core/RemoveDecorator", "core/ExceptionReplacer",
                     "core/VariableReplacer", "core/VariableInserter")
DEFAULT_SAMPLE = 40
# Keyword arguments of an op's declarations that only generators read: `exercise=`, and the structure
# hints (spec/dsl/: "a wrong hint loses cases, never admits an invalid one").
# `choices=` too: the values a generator (and the z3 checker's enumeration) draws an attribute from.
# `example=` (Quantization's instance the quantized stream builds its cases on) and `appended_last=` (a
# stream of cases written after every other): programs chosen, never a rule a verdict reads.
GENERATOR_KEYWORDS = ("exercise", "count", "length", "rank", "bodies", "choices", "example", "appended_last")
# Generator inputs passed by position: {callee: index of the argument}.  SideEffect(fn, cases) — a token
# op's `cases(spec, rng)` lists the instances generators render, as `exercise=` does for the others.
GENERATOR_POSITIONAL = {"SideEffect": 1}
# Top-level tables of programs that a generator elsewhere renders (recv's device transfers: one program per
# entry, by generators/host_pairs.py): inputs chosen, no rule.
GENERATOR_TABLES = ("DEVICE_TRANSFERS",)
# Functions whose first two arguments commute (spec/dsl/: "all of the same type", conjunction; IEEE
# addition and multiplication, Annex G's complex product): SwapArguments makes no mutant of a call to
# them.  tests/tools/test_mutation_tool.py checks each on operands that would tell.
SYMMETRIC = ("same_type", "same_types", "same_shape", "same_element_type", "same_value_type",
             "same_baseline_type", "And", "Or",
             "max", "min", "z3.And", "z3.Or", "addition", "multiplication", "cmul")


# -- our two operators, in cosmic-ray's plug-in form --------------------------------------------------
@functools.lru_cache(maxsize=1)
def _operators():
    """(name, operator instance) of every operator used: cosmic-ray's own
    (its plug-in registry) and ours."""
    import parso.python.tree as pt
    from cosmic_ray import plugins
    from cosmic_ray.operators.operator import Example, Operator

    class DropBranch(Operator):
        """`if c:` / `elif c:` → `if False:`: the branch is never taken."""

        def mutation_positions(self, node):
            p = node.parent
            if p is not None and p.type == "if_stmt":
                i = p.children.index(node)
                if i > 0 and getattr(p.children[i - 1], "value", None) in ("if", "elif") \
                        and getattr(node, "value", None) != "False":
                    yield node.start_pos, node.end_pos

        def mutate(self, node, index):
            return pt.Keyword("False", node.start_pos, prefix=node.get_first_leaf().prefix)

        @classmethod
        def examples(cls):
            return (Example("if x:\n    y\n", "if False:\n    y\n"),)

    class SwapArguments(Operator):
        """f(a, b, …) → f(b, a, …): the first two positional arguments swapped."""

        def mutation_positions(self, node):
            if node.type == "arglist" and node.parent is not None and node.parent.type == "trailer":
                callee = node.parent.get_previous_sibling()
                name = callee.get_code(include_prefix=False).lstrip(".") if callee is not None else ""
                if name in SYMMETRIC:   # swapping their arguments changes nothing: no mutant
                    return
                args = [c for c in node.children if c.type != "operator"]
                if len(args) >= 2 and all(a.type not in ("argument", "star_expr") for a in args[:2]) \
                        and args[0].get_code(include_prefix=False) != args[1].get_code(include_prefix=False):
                    yield node.start_pos, node.end_pos

        def mutate(self, node, index):
            kids = list(node.children)
            pos = [i for i, c in enumerate(kids) if c.type != "operator"][:2]
            a, b = kids[pos[0]], kids[pos[1]]
            la, lb = a.get_first_leaf(), b.get_first_leaf()
            la.prefix, lb.prefix = lb.prefix, la.prefix
            kids[pos[0]], kids[pos[1]] = b, a
            node.children = kids
            return node

        @classmethod
        def examples(cls):
            return (Example("f(a, b)", "f(b, a)"),)

    out = []
    for name in plugins.operator_names():
        if name in SKIPPED_OPERATORS:
            continue
        cls = plugins.get_operator(name)
        if not cls.arguments():
            out.append((name, cls()))
    out += [("shlo/DropBranch", DropBranch()), ("shlo/SwapArguments", SwapArguments())]
    return out


# -- enumeration and sampling ------------------------------------------------------------------------
@dataclass
class Mutant:
    path: str            # relative to the repository root
    operator: str
    occurrence: int      # cosmic-ray's occurrence of `operator` in the module
    line: int
    end_line: int
    col: int
    function: str        # innermost enclosing def / lambda ('<module>' at module level)
    source: str          # the line as written
    mutated: str = ""    # the line(s) as the mutant has them
    key: str = ""
    ops: list = field(default_factory=list)   # ops it is scored against
    status: str = ""     # killed | not reached | equivalent | gap | (skipped: no op reaches it)
    by: str = ""         # what killed it, or why it is classified so
    seconds: float = 0.0


def _generator_only(tree: ast.Module) -> list[ast.AST]:
    """The `exercise=` argument of the module's OpSpec and its structure
    hints (GENERATOR_KEYWORDS), the generator inputs passed by position
    (GENERATOR_POSITIONAL) or kept in tables (GENERATOR_TABLES), and the
    top-level definitions only they use (how generators pick inputs: built
    corners, value pools, quantized examples), transitively: no verdict
    reads them."""
    spans = [k.value for k in ast.walk(tree) if isinstance(k, ast.keyword) and k.arg in GENERATOR_KEYWORDS]
    spans += [c.args[i] for c in ast.walk(tree) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
              for i in [GENERATOR_POSITIONAL.get(c.func.id)] if i is not None and len(c.args) > i]
    spans += [n.value for n in tree.body if isinstance(n, ast.Assign) and len(n.targets) == 1
              and isinstance(n.targets[0], ast.Name) and n.targets[0].id in GENERATOR_TABLES]
    defs = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defs[node.name] = node
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            defs[node.targets[0].id] = node
    uses: dict[str, list[tuple[int, int]]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in defs:
            uses.setdefault(node.id, []).append((node.lineno, node.col_offset))
    # by position, not by line: `Attribute("t", Kind(), choices=types)` uses Kind outside the hint
    inside = lambda at: any((n.lineno, n.col_offset) <= at < (n.end_lineno, n.end_col_offset)  # noqa: E731
                            for n in spans)
    changed = True
    while changed:
        changed = False
        for name, node in defs.items():
            if node not in spans and uses.get(name) and all(inside(ln) for ln in uses[name]) \
                    and not name.startswith(("infer", "element")) and not re.search(r"_c\d+$", name) \
                    and name != "SPEC":   # the op's declaration: a quantized example's `SPEC.instance` is not its use
                spans.append(node)
                changed = True
    return spans


def _annotations(tree: ast.Module) -> list[ast.AST]:
    """Type annotations, where the module postpones them (`from __future__
    import annotations`: they are strings nobody evaluates, so `X | None` →
    `X - None` changes nothing)."""
    postponed = any(isinstance(n, ast.ImportFrom) and n.module == "__future__"
                    and any(a.name == "annotations" for a in n.names) for n in tree.body)
    if not postponed:
        return []
    out: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out += [a.annotation for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                    + [node.args.vararg, node.args.kwarg] if a is not None and a.annotation is not None]
            out += [node.returns] if node.returns is not None else []
        elif isinstance(node, ast.AnnAssign):
            out.append(node.annotation)
    return out


def _excluded_spans(tree: ast.Module) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """((line, col) first, (line, col) past the end) of what is never
    mutated: docstrings, what only generators use (`_generator_only`) and
    postponed annotations — by position, so the rest of a line that also
    holds a `choices=` hint is still mutated."""
    nodes = _generator_only(tree) + _annotations(tree)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)) and node.body \
                and isinstance(node.body[0], ast.Expr) and isinstance(getattr(node.body[0], "value", None), ast.Constant) \
                and isinstance(node.body[0].value.value, str):
            nodes.append(node.body[0])
    return [((n.lineno, n.col_offset), (n.end_lineno, n.end_col_offset)) for n in nodes]


def _functions(tree: ast.Module) -> list[tuple[tuple, tuple, str]]:
    """((line, col) first, (line, col) past the end, name) of every def's body and every lambda."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(((node.body[0].lineno, 0), (node.end_lineno + 1, 0), node.name))
        elif isinstance(node, ast.Lambda):
            out.append(((node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset), "<lambda>"))
    return out


def _enclosing(funcs, line: int, col: int = 0) -> str:
    inner = [f for f in funcs if f[0] <= (line, col) < f[1]]
    if not inner:
        return "<module>"
    return max(inner, key=lambda f: f[0])[2]


def enumerate_mutants(rel: str) -> list[Mutant]:
    """Every mutant cosmic-ray's operators (and ours) make of the module at `rel`."""
    from cosmic_ray.ast import ast_nodes, get_ast
    text = (ROOT / rel).read_text()
    lines = text.splitlines()
    tree = ast.parse(text)
    skip, funcs = _excluded_spans(tree), _functions(tree)   # cosmic-ray's columns are 0-based like ast's
    out: list[Mutant] = []
    nodes = list(ast_nodes(get_ast(text)))   # operators only read the tree: one parse for all of them
    for name, operator in _operators():
        occurrence = 0
        for node in nodes:
            for (l0, c0), (l1, _c1) in operator.mutation_positions(node):
                if not any(a <= (l0, c0) < b for a, b in skip):
                    out.append(Mutant(rel, name, occurrence, l0, l1, c0, _enclosing(funcs, l0, c0),
                                      lines[l0 - 1].strip()))
                occurrence += 1
    seen: dict[tuple, int] = {}
    for m in out:
        k = (m.path, m.operator, m.source)
        n = seen[k] = seen.get(k, -1) + 1
        m.key = mutant_key(m, n)
    return out


def mutant_key(m: Mutant, rank: int) -> str:
    """A mutant's stable name: file, function, operator, the source line
    and its rank among mutants of the same operator on identical lines."""
    return f"{m.path} | {m.function} | {m.operator} | {m.source} | {rank}"


def _family(operator: str) -> str:
    """ReplaceBinaryOperator_Add_Sub → ReplaceBinaryOperator_Add: the replacements of one site."""
    head, _, _ = operator.rpartition("_")
    return head if operator.startswith(("core/ReplaceBinaryOperator_", "core/ReplaceComparisonOperator_",
                                        "core/ReplaceUnaryOperator_")) else operator


def sample(mutants: list[Mutant], n: int, seed: int) -> list[Mutant]:
    """One mutant per site and operator family (`+` has ten replacements:
    the seed picks one), then the first `n` by sha256(seed, key):
    deterministic, and stable under additions elsewhere."""
    def rank(m):
        return hashlib.sha256(f"{seed}|{m.key}".encode()).hexdigest()
    per_site: dict[tuple, Mutant] = {}
    for m in mutants:
        k = (m.path, m.line, m.col, _family(m.operator))
        if k not in per_site or rank(m) < rank(per_site[k]):
            per_site[k] = m
    ranked = sorted(per_site.values(), key=rank)
    chosen = ranked if n <= 0 else ranked[:n]
    return sorted(chosen, key=lambda m: (m.path, m.line, m.col, m.operator, m.occurrence))


def mutated_source(m: Mutant) -> str | None:
    from cosmic_ray.mutating import mutate_code
    op = dict(_operators())[m.operator]  # noqa: F841
    return mutate_code((ROOT / m.path).read_text(), op, m.occurrence)


# -- scoring in a forked child --------------------------------------------------------------------------
PRELOAD = ("numpy", "mpmath", "flint", "gmpy2", "z3", "ml_dtypes", "scipy", "jax", "jaxlib.mlir.ir")


def _install_hook(path: Path, source: str) -> None:
    """Serve `source` for the module whose file is `path` (symlinks resolved)."""
    import importlib.abc
    import importlib.machinery
    import importlib.util
    target = os.path.realpath(path)

    class Loader(importlib.abc.Loader):
        def create_module(self, spec):
            return None

        def exec_module(self, module):
            exec(compile(source, module.__spec__.origin, "exec"), module.__dict__)

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, paths, target_module=None):
            for f in sys.meta_path:
                if f is self or not hasattr(f, "find_spec"):
                    continue
                spec = f.find_spec(name, paths, target_module)
                if spec is not None:
                    if spec.origin and os.path.realpath(spec.origin) == target:
                        return importlib.util.spec_from_file_location(
                            name, spec.origin, loader=Loader(),
                            submodule_search_locations=spec.submodule_search_locations)
                    return spec
            return None

    sys.meta_path.insert(0, Finder())


# "violates add_c1" — and the oracle's "(it also violates add_c2, add_c3)": every rule a rejection names
CONSTRAINT_ID = re.compile(r"\bviolates ([a-z_0-9]+_c\d+(?:, [a-z_0-9]+_c\d+)*)\b")


def _score(suite: str, ops: list[str], baseline: dict | None, trace: list[str] | None,
           ids: list[str] | None = None, statement: bool = False, choice: str = "primary") -> dict:
    """Verdicts of the oracle on the ops' cases ({case id: verdict}), only
    the cases `ids` where given; with `baseline`, stops at the first
    verdict that differs from it; with `trace`, also the lines executed in
    those files — by the whole run ("lines"), at import ("pre": the project
    and the traced modules are imported before the first case, so a line a
    module runs while loading reaches every case) and by each case
    ("cases"), so a mutant of a module that many ops share is scored on the
    cases that execute its line, not every case of those ops.  With
    `statement`, the oracle answers every element from the op's `fn`
    (`elementwise.statement_route`: its whole-array claims set aside); with
    `choice="last"`, an implementation-defined element takes its last
    named alternative (`OracleBackend(choice=...)`)."""
    sys.path.insert(0, str(ROOT))
    hit: dict[str, set] = {}        # the phase being recorded: import, then each case in turn
    phases: dict[str, dict[str, set]] = {"pre": hit}
    if trace:
        wanted = {os.path.realpath(ROOT / t): t for t in trace}
        known: dict[str, str | None] = {}

        def local(frame, event, arg):
            if event == "line":
                hit.setdefault(known[frame.f_code.co_filename], set()).add(frame.f_lineno)
            return local

        def glob(frame, event, arg):
            f = frame.f_code.co_filename
            if f not in known:
                known[f] = wanted.get(os.path.realpath(f))
            if known[f] is None:
                return None
            hit.setdefault(known[f], set()).add(frame.f_lineno)
            return local
        import threading
        sys.settrace(glob)
        threading.settrace(glob)
    import importlib
    from shlo_conform.backends.base import status_of
    from shlo_conform.backends.oracle import OracleBackend
    from shlo_conform.oracle.elementwise import statement_route
    from shlo_conform.pipeline.modes import mode_of
    from shlo_conform.pipeline.runner import Runner
    from shlo_conform.spec import ops as _every_op  # noqa: F401  (each op module loaded before the first case)
    from shlo_conform.suites.io import load_cases, suite_path
    for t in trace or ():
        importlib.import_module("shlo_conform." + t[:-3].replace("/", "."))

    backend, runner = OracleBackend(choice), Runner("oracle")
    cases = load_cases(suite_path(suite), set(ops))
    if ids is not None:
        wanted_ids = set(ids)
        cases = [c for c in cases if c.id in wanted_ids]
    seconds: dict[str, float] = {}
    out: dict[str, str] = {}
    route = statement_route() if statement else contextlib.nullcontext()
    route.__enter__()
    for c in cases:
        t0 = time.monotonic()
        hit = phases[c.id] = {}
        mode = mode_of(c)   # plain, host or grid: how the case compiles and runs (the runner's own answer)
        try:
            ex = mode.compile_on(backend, c)
        except Exception as e:
            st, said = status_of(e)
            # which constraint the oracle names is part of the verdict: a mutant that moves a rejection
            # to another constraint (or makes one constraint the other's) is noticed
            named = sorted({c for g in CONSTRAINT_ID.findall(said) for c in g.split(", ")}) if st == "rejected" else []
            v = runner.compile_verdict(c, st, said if st != "error" else repr(e), 0).verdict \
                + "".join(f" [{k}]" for k in named)
        else:
            try:
                res = mode.run_on(backend, ex, c)
                st = "ok"
            except Exception as e:
                st, res = status_of(e)
                res = repr(e) if st == "error" else res
            try:
                got = runner.run_verdict(c, st, res, 0)
                # the implementation-defined choices the report shows are part of what a mutant may change
                v = got.verdict + "".join(f" [{label}]" for label in got.impl_defined or ())
            except Exception as e:   # outputs the judge cannot even read
                v = f"fail (judge raised {type(e).__name__})"
        out[c.id] = v
        seconds[c.id] = time.monotonic() - t0
        if baseline is not None and baseline.get(c.id) != v:
            break
    route.__exit__(None, None, None)
    if not trace:
        return {"verdicts": out}
    sys.settrace(None)
    threading.settrace(None)   # threads started later (a test's runner threads) are not traced
    union: dict[str, set] = {}
    for ph in phases.values():
        for k, v in ph.items():
            union.setdefault(k, set()).update(v)
    pre = {k: sorted(v) for k, v in phases.pop("pre").items()}
    return {"verdicts": out, "lines": {k: sorted(v) for k, v in union.items()}, "pre": pre,
            "cases": {cid: {k: sorted(v) for k, v in ph.items()} for cid, ph in phases.items()},
            "case_seconds": seconds}


class _Baselines:
    """The unmutated oracle's runs (verdicts, the lines each case executes,
    seconds), kept in out/mutation-baselines/ under a key of everything they
    depend on: the bytes of every Python file of the package (spec/,
    oracle/, suites/, generators/, backends/ …, through shlo_conform's
    links), the op's suite file, the traced modules, the route, and the
    Python and numpy versions.  A second run on the same tree — another
    shard, a rescore, `--only` — reads them instead of taking every op's
    baseline again (22 minutes a shard for --all on two cores, stop 48); a
    changed byte anywhere in the code makes a new key."""

    DIR = ROOT / "out" / "mutation-baselines"

    def __init__(self, spath: Path) -> None:
        import numpy
        h = hashlib.sha256(f"{sys.version}\0{numpy.__version__}\0".encode())
        files = {os.path.realpath(os.path.join(d, n)) for d, _, names in os.walk(ROOT / "shlo_conform", followlinks=True)
                 for n in names if n.endswith(".py")}
        for f in sorted(files):
            h.update(os.path.relpath(f, ROOT).encode() + b"\0" + Path(f).read_bytes() + b"\0")
        self.code, self.spath = h.hexdigest(), spath

    def _path(self, op: str, traced: list[str], route) -> Path:
        suite = self.spath / f"{op}.jsonl"
        h = hashlib.sha256(json.dumps([self.code, op, sorted(traced), list(route)]).encode())
        h.update(suite.read_bytes() if suite.is_file() else b"")
        return self.DIR / f"{op}-{h.hexdigest()[:24]}.pickle"

    def run(self, op: str, traced: list[str], route, fn) -> dict | str:
        """The run's record (a dict with `seconds`), from the cache or taken
        now in a child and kept; the child's failure as a string."""
        path = self._path(op, traced, route)
        if path.is_file():
            with path.open("rb") as f:
                return pickle.load(f)
        t0 = time.monotonic()
        res = _in_child(fn, 3600)
        if res[0] != "ok":
            return str(res[1])
        got = dict(res[1], seconds=time.monotonic() - t0)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")   # whole or not at all: another shard may read it
        with tmp.open("wb") as f:
            pickle.dump(got, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
        return got


def _in_child(fn, timeout: float):
    """fn() in a forked child: ("ok", value) | ("error", text) | ("timeout", seconds)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:   # the child: never returns
        os.close(r)
        try:
            os.setpgid(0, 0)
            payload = ("ok", fn())
        except BaseException as e:
            payload = ("error", f"{type(e).__name__}: {e}"[:300])
        data = pickle.dumps(payload)
        with os.fdopen(w, "wb") as f:
            f.write(data)
        os._exit(0)
    os.close(w)
    chunks, deadline = [], time.monotonic() + timeout
    with os.fdopen(r, "rb") as f:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                os.waitpid(pid, 0)
                return ("timeout", timeout)
            ready, _, _ = select.select([f], [], [], min(left, 1.0))
            if ready:
                b = os.read(f.fileno(), 1 << 20)
                if not b:
                    break
                chunks.append(b)
    _, status = os.waitpid(pid, 0)
    if not chunks:
        return ("error", f"the scorer died (status {status})")
    return pickle.loads(b"".join(chunks))


# Unit tests that hold what one output value cannot show (alternatives' labels, the strict-weak-order
# check, tolerances), the whole-array claims against each op's fn, and the op families' own tests
# (tests/spec/test_ops_*.py: a promise a program breaks — scatter's unique_indices — is "any value", which
# no output can show): a survivor of the suite is run against those of its op (`-k OP`), and a failing
# test kills it ("killed by tests").
DEFAULT_TESTS = ("tests/spec/test_semantics_gaps.py", "tests/spec/test_generic.py", "tests/oracle/test_fast.py",
                 "tests/oracle/test_whole_claims.py", "tests/spec/test_scatter_orders.py",
                 *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests" / "spec").glob("test_ops_*.py")))


def _select(expr: str) -> list[str]:
    """`-k` for the ops of `expr` ("sine" or "sine or add"); none where an op is
    a word of pytest's -k grammar (the ops `and`, `or`, `not`): the files run whole."""
    words = expr.split(" or ")
    return [] if not expr or any(w in ("and", "or", "not") for w in words) else ["-k", expr]


# Shared modules whose tests reach them through another module: neither named after them nor importing them
# (oracle/program.py reads a program through partitioned.py; test_grid.py's JAX shard_map programs are its
# tests).  Until stop 49 such a module's survivors met no test at all: partitioned.py's six were "not reached",
# and tests/oracle/test_grid.py kills them.
TESTS_OF = {
    "oracle/partitioned.py": ("tests/oracle/test_grid.py",),
    "oracle/data_movement.py": ("tests/spec/test_ops_data_movement.py",),
    "oracle/functions.py": ("tests/oracle/test_program.py", "tests/oracle/test_reading.py",
                            "tests/spec/test_ops_control_flow.py"),
}


def _own_tests(path: str) -> list[str]:
    """A shared module's unit tests, run whole on its survivors: its namesake
    tests/<area>/test_<stem>.py first, then TESTS_OF's, then the files of
    tests/spec and tests/oracle that import it (oracle/accumulate.py:
    tests/spec/test_bounds.py)."""
    p = Path(path)
    area, stem = p.parent.name, p.stem
    own = Path("tests") / area / f"test_{stem}.py"
    out = [str(own)] if (ROOT / own).is_file() else []
    out += [t for t in TESTS_OF.get(path, ()) if (ROOT / t).is_file()]
    for d in ("spec", "oracle"):
        for f in sorted((ROOT / "tests" / d).glob("test_*.py")):
            rel = str(f.relative_to(ROOT))
            if rel not in out and _imports(f, area, stem):
                out.append(rel)
    return out


def _imports(f: Path, area: str, stem: str) -> bool:
    """Whether the file imports `<area>.<stem>` (`from …<area>.<stem> import x`,
    `from …<area> import <stem>`, `import …<area>.<stem>`; a relative import
    read from the file's own folder: `from . import reduce` in spec/ops)."""
    package = list(f.resolve().relative_to(ROOT).parent.parts)
    for node in ast.walk(ast.parse(f.read_text())):
        if isinstance(node, ast.ImportFrom):
            mod = node.module.split(".") if node.module else []
            if node.level:
                mod = package[:len(package) - node.level + 1] + mod
            if mod[-2:] == [area, stem] or (mod[-1:] == [area] and any(a.name == stem for a in node.names)):
                return True
        elif isinstance(node, ast.Import) and any(a.name.split(".")[-2:] == [area, stem] for a in node.names):
            return True
    return False


def _tests_runner(m: Mutant, source: str | None, files: list[str], op: str):
    def fn():
        if source is not None:
            _install_hook(ROOT / m.path, source)
        os.chdir(ROOT)
        import io
        import contextlib
        import pytest
        sink = io.StringIO()
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            rc = pytest.main(["-q", "-x", "-p", "no:cacheprovider", "-p", "no:randomly", *_select(op), *files])
        tail = [ln for ln in sink.getvalue().splitlines() if ln.startswith(("FAILED", "ERROR"))]
        return int(rc), (tail[0] if tail else "")
    return fn


def _check_spec_runner(m: Mutant | None, source: str | None, op: str):
    """`shlo-conform check-spec --ops OP` with the mutant in place: the z3
    reading of the op's constraints (consistent, each independent, solvable
    for valid and invalid programs), their traceability to the seed, and
    an invalid case of the suite for each.  A constraint mutated into one
    that is always false, or no longer independent, fails it."""
    def fn():
        if source is not None:
            _install_hook(ROOT / m.path, source)
        sys.path.insert(0, str(ROOT))
        os.chdir(ROOT)
        import io
        import contextlib
        from shlo_conform.cli import main as cli
        sink = io.StringIO()
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            rc = cli(["check-spec", "--ops", op])
        bad = [ln.strip() for ln in sink.getvalue().splitlines() if re.search(r"FAIL|MISSING|not independent|unsat", ln)]
        return int(rc), (bad[0][:200] if bad else "")
    return fn


def _regenerator(m: Mutant | None, source: str | None, op: str, seed: int):
    """The op's cases regenerated (`shlo-conform generate` for that op, the
    suite's seed) with the mutant in place: {case id: sha256 of its line}.
    The committed suites/core is what the generator writes
    (tests/generators/test_core_reproducible.py), so a mutant that changes
    any generated program, input or expectation is one a regenerated suite
    shows — counted apart from verdicts ("by regeneration")."""
    def fn():
        if source is not None:
            _install_hook(ROOT / m.path, source)
        sys.path.insert(0, str(ROOT))
        import io
        import contextlib
        import tempfile
        from shlo_conform.generators import suite
        with tempfile.TemporaryDirectory() as d, contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            suite.build(Path(d), seed, [op])
            return _case_digests((Path(d) / f"{op}.jsonl").read_text())
    return fn


def _case_digests(text: str) -> dict[str, str]:
    out = {}
    for ln in text.splitlines():
        if ln.strip():
            out[json.loads(ln).get("id", str(len(out)))] = hashlib.sha256(ln.encode()).hexdigest()
    return out


def _mutant_scorer(m: Mutant, source: str, suite: str, op: str, baseline: dict, ids: list[str] | None = None,
                   route: tuple = (False, "primary")):
    def fn():
        _install_hook(ROOT / m.path, source)
        return _score(suite, [op], baseline, None, ids, *route)["verdicts"]
    return fn


# The other implementations an op module's mutant is scored as, after the runner's own judging (the oracle's
# claims, the primary alternative): (key in the baseline, (statement, choice), the words a kill says).  Each
# is scored only where it can differ: the statement route for an op with claims (`_claims`), the last
# alternatives for an op whose baseline reports implementation-defined choices (`_chooses`).
ROUTES = (("statement", (True, "primary"), " (statement route)"),
          ("last", (False, "last"), " (last alternatives)"))


def _chooses(verdicts: dict) -> bool:
    """Whether some value case's verdict reports an implementation-defined
    choice (`pass [label]`; a rejection's brackets name constraints)."""
    return any(" [" in v and not v.startswith("rejected") for v in verdicts.values())


def _claims(op: str) -> bool:
    """Whether the op's module declares a whole-array claim (`Generic`):
    then its cases are also scored by the statement route."""
    return "generic=" in (ROOT / op_module(op)).read_text()


OP_FOLDERS = ("spec/ops", "spec/added")   # the seed's ops, v1.20's additions: one module per op in each


def op_module(op: str) -> str | None:
    """The op's module, relative to the root (spec/ops/<op>.py or, for an op
    v1.20 added, spec/added/<op>.py); None where it has none."""
    return next((f"{d}/{op}.py" for d in OP_FOLDERS if (ROOT / d / f"{op}.py").exists()), None)


def is_op_module(path: str) -> bool:
    return path.startswith(tuple(d + "/" for d in OP_FOLDERS))


# -- the run --------------------------------------------------------------------------------------------
def _equivalents() -> dict[str, str]:
    if not EQUIVALENT.exists():
        return {}
    doc = tomllib.loads(EQUIVALENT.read_text())
    return {e["mutant"]: e["reason"] for e in doc.get("equivalent", [])}


def _reached(m: Mutant, lines: dict[str, list]) -> bool:
    if m.function == "<module>":
        return True   # runs at import
    got = set(lines.get(m.path, ()))
    return any(n in got for n in range(m.line, m.end_line + 1))


def _reaching_cases(m: Mutant, base: dict) -> list[str] | None:
    """The op's cases that execute the mutant's line (None: every case —
    module-level code, or a line run while the modules load).  A case that
    never executes the line runs the same with the mutant in place, so its
    verdict cannot change; scoring a shared module's mutant on these alone
    is what makes the shared modules affordable (one op's cases reach a
    line of oracle/elementwise.py; thousands of cases of other ops don't)."""
    if "cases" not in base or _reached(m, base.get("pre", {})):
        return None
    return [cid for cid, lines in base["cases"].items() if _reached(m, lines)]


def _diff_line(before: str, after: str, line: int) -> str:
    a, b = before.splitlines(), after.splitlines()
    d = len(b) - len(a)
    return " / ".join(x.strip() for x in b[line - 1:line + max(0, d)]) if line - 1 < len(b) else ""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--ops", help="comma-separated ops: each op's module, scored on that op's cases")
    g.add_argument("--all", action="store_true", help="every op module and ORACLE_MODULES")
    g.add_argument("--shared", action="store_true",
                   help="ORACLE_MODULES alone, each mutant scored on the cases (of every op) that run its line")
    ap.add_argument("--suite", default="core", help="a bundled suite name or a suite folder (default core)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sample", type=int, default=None,
                    help=f"mutants per module (default {DEFAULT_SAMPLE} with --ops, 12 with --all; 0: all)")
    ap.add_argument("--modules", default="", help="extra modules (paths from the root) scored on the --ops")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per mutant (default 5× the baseline + 30)")
    ap.add_argument("--tests", default=",".join(DEFAULT_TESTS),
                    help="test files run (-k OP) on a survivor of the suite; '' for the suite alone "
                         "(default: %(default)s)")
    ap.add_argument("--grep", help="only mutants whose source line matches this regular expression")
    ap.add_argument("--only", help="only the mutants a file lists: the survivors of a report (the text this command prints, "
                                   "e.g. tools/mutation/runs/full-run.txt), or every mutant of a --json file or its "
                                   "journal: rescoring them after a change")
    ap.add_argument("--no-later", dest="later", action="store_false",
                    help="stop at the suite and the tests: no check-spec, no regeneration stage")
    ap.add_argument("--json", help="write every mutant's record here")
    ap.add_argument("--list", action="store_true", help="list the sample and stop")
    ap.add_argument("--shard", default="0/1", help="I/N: score the plan's mutants k with k %% N = I (one process "
                    "a core, each with its own --json); the shards' journals, joined under one head line, are the "
                    "whole run's journal: a run without --shard restores them all and reports the whole")
    a = ap.parse_args(argv)
    try:
        shard, shards = (int(x) for x in a.shard.split("/"))
        if not 0 <= shard < shards:
            raise ValueError
    except ValueError:
        print(f"mutation: --shard {a.shard}: want I/N with 0 <= I < N", file=sys.stderr)
        return 2

    # The project is never imported here: each scorer imports it afresh, the mutated module from memory.
    spath = Path(a.suite).expanduser() if ("/" in a.suite or a.suite.startswith((".", "~"))) else ROOT / "suites" / a.suite
    try:
        manifest = json.loads((spath / "manifest.json").read_text())
    except (OSError, ValueError) as e:
        print(f"mutation: --suite {a.suite}: no readable manifest.json ({e})", file=sys.stderr)
        return 2
    suite_ops = sorted(manifest.get("counts", {}))
    if a.all or a.shared:
        ops = [o for o in suite_ops if op_module(o)]
        extra = list(ORACLE_MODULES)
        n = 12 if a.sample is None else a.sample
    else:
        ops = [o.strip() for o in a.ops.split(",") if o.strip()]
        bad = [o for o in ops if o not in suite_ops or not op_module(o)]
        if bad:
            print(f"mutation: --ops: {', '.join(bad)} not in the suite {a.suite} or without an op module "
                  f"(spec/ops/<op>.py, spec/added/<op>.py)",
                  file=sys.stderr)
            return 2
        extra = [x.strip() for x in a.modules.split(",") if x.strip()]
        missing = [x for x in extra if not (ROOT / x).is_file()]
        if missing:
            print(f"mutation: --modules: no such file {', '.join(missing)}", file=sys.stderr)
            return 2
        n = DEFAULT_SAMPLE if a.sample is None else a.sample
    try:
        only = _only(a.only) if a.only else None
    except ValueError as e:
        print(f"mutation: {e}", file=sys.stderr)
        return 2
    if os.environ.get("SHLO_MUTATION_NO_PRELOAD") is None:
        for mod in PRELOAD:   # imported once here, shared by every forked scorer
            __import__(mod)

    t_start = time.monotonic()
    own = {o: op_module(o) for o in ops}
    plan: list[Mutant] = []
    keep = (lambda m: re.search(a.grep, m.source) is not None) if a.grep else (lambda m: True)
    if only is not None:   # the listed survivors, wherever a sample of today's code would rank them
        keep = (lambda k: lambda m: k(m) and _listed(m, only))(keep)
        n = 0
    for o in ([] if a.shared else ops):
        for m in sample([m for m in enumerate_mutants(own[o]) if keep(m)], n, a.seed):
            m.ops = [o]
            plan.append(m)
    extra_mutants = [m for x in extra for m in sample([m for m in enumerate_mutants(x) if keep(m)], n, a.seed)]
    if a.list:   # the shard's part: the plan below is these, in this order, before its ops are known
        listed = [m for k, m in enumerate(plan + extra_mutants) if k % shards == shard]
        for m in listed:
            print(f"{m.path}:{m.line} {m.operator} [{m.function}] {m.source}")
        print(f"{len(listed)} mutants")
        return 0

    journal = _Journal(a) if a.json else None
    # every mutant restores (the shards' journals joined): nothing to score, so no baselines and no unmutated tests
    whole = journal is not None and all(journal.has(m) for m in plan + extra_mutants)

    # Baselines: the unmutated oracle per op, with the lines its cases execute.
    traced = sorted(set(own.values()) | set(extra))
    base: dict[str, dict] = {}
    cache = _Baselines(spath)
    for o in ([] if whole else ops):
        got = cache.run(o, traced, (False, "primary"), lambda o=o: _score(a.suite, [o], None, traced))
        if isinstance(got, str):
            print(f"mutation: the unmutated oracle on {o} did not finish: {got}", file=sys.stderr)
            return 2
        base[o] = got
        for key, route, _ in ROUTES:   # the same cases as the other implementations a mutant is scored as
            if not (_claims(o) if key == "statement" else _chooses(base[o]["verdicts"])):
                continue
            got = cache.run(o, [own[o]], route,
                            lambda o=o, route=route: _score(a.suite, [o], None, [own[o]], None, *route))
            if isinstance(got, str):
                print(f"mutation: the unmutated oracle's {key} route on {o} did not finish: {got}", file=sys.stderr)
                return 2
            base[o][key] = {"verdicts": got["verdicts"], "lines": got["lines"], "seconds": got["seconds"]}
    shared = {id(m) for m in extra_mutants}
    for m in extra_mutants:   # the ops whose cases reach the line, cheapest first
        m.ops = sorted((o for o in base if _reached(m, base[o]["lines"])), key=lambda o: base[o]["seconds"])
        plan.append(m)
    plan = [m for k, m in enumerate(plan) if k % shards == shard]

    equivalent = _equivalents()
    tests = [] if whole else [t for t in a.tests.split(",") if t.strip() and (ROOT / t.strip()).is_file()]
    if tests:   # the unmutated tests must pass, or a failing one kills nothing (one run for every op)
        kind, got = _in_child(_tests_runner(None, None, tests, " or ".join(ops)), 1800)
        if kind != "ok" or got[0] not in (0, 5):
            print(f"mutation: --tests fail on the unmutated code: {got}", file=sys.stderr)
            return 2
    own_tests = {x: _own_tests(x) for x in extra} if tests else {}
    every = sorted({f for files in own_tests.values() for f in files})
    if every:   # the shared modules' own tests must pass unmutated too (one run: the files overlap)
        kind, got = _in_child(_tests_runner(None, None, every, ""), 1800)
        if kind != "ok" or got[0] not in (0, 5):
            print(f"mutation: the shared modules' tests fail on the unmutated code: {got}", file=sys.stderr)
            return 2
    regen = _Regeneration(a.suite, spath, manifest) if a.later and not whole else None
    for i, m in enumerate(plan, 1):
        if journal and journal.restore(m):
            if m.status in ("gap", "not reached") and m.key in equivalent:   # declared since it was scored
                m.status, m.by = "equivalent", equivalent[m.key]
            continue
        t0 = time.monotonic()
        # an op module's mutant reaches an op when either route runs its line (the claims route around `fn`)
        reached = [o for o in m.ops if _reached(m, base[o]["lines"])
                   or (is_op_module(m.path) and _reached(m, base[o].get("statement", {}).get("lines", {})))]
        if not reached and is_op_module(m.path):   # a helper other ops import (all_gather's for all_to_all)
            others = sorted((o for o in ops if o not in m.ops and _reached(m, base[o]["lines"])),
                            key=lambda o: base[o]["seconds"])
            if others:
                m.ops = m.ops + others
                reached = others
        source = mutated_source(m)
        if source is None:
            m.status, m.by = "skipped", "cosmic-ray applied no mutation"
        elif not reached:
            m.mutated = _diff_line((ROOT / m.path).read_text(), source, m.line)
            m.status, m.by = "not reached", "no case of " + (", ".join(m.ops) or "any op") + " executes the line"
            runs = [(own_tests[m.path], "")] if id(m) in shared else [(tests, o) for o in m.ops]
            for files, o in (runs if tests else ()):
                if not files:
                    continue
                kind, got = _in_child(_tests_runner(m, source, files, o), 900)
                if kind == "ok" and got[0] == 1:
                    m.status, m.by = "killed", f"by tests (no case reaches it): {got[1] or 'a test failed'}"
                    break
            if m.status == "not reached":
                m.status = ""
                _later_stages(m, source, m.ops + _importers(m, ops), a, regen)
                if not m.status:
                    m.status, m.by = "not reached", "no case of " + (", ".join(m.ops) or "any op") + " executes the line"
                    if m.key in equivalent:   # declared: whether a case reaches it or not, nothing could tell
                        m.status, m.by = "equivalent", equivalent[m.key]
        else:
            m.mutated = _diff_line((ROOT / m.path).read_text(), source, m.line)
            for o in reached:
                ids = _reaching_cases(m, base[o]) if id(m) in shared else None
                spent = base[o]["seconds"] if ids is None else sum(base[o]["case_seconds"][k] for k in ids)
                routes = [((False, "primary"), base[o], "", spent)]
                routes += [(route, base[o][key], said, base[o][key]["seconds"]) for key, route, said in ROUTES
                           if key in base[o] and id(m) not in shared]
                for route, b, said, took in routes:
                    timeout = a.timeout or 5 * took + 30
                    kind, got = _in_child(_mutant_scorer(m, source, a.suite, o, b["verdicts"], ids, route), timeout)
                    if kind == "timeout":
                        m.status, m.by = "killed", f"{o}{said}: timeout after {got:.0f} s"
                    elif kind == "error":
                        m.status, m.by = "killed", f"{o}{said}: the mutant raised {got}"
                    else:
                        diff = [(k, b["verdicts"].get(k), v) for k, v in got.items() if b["verdicts"].get(k) != v]
                        if diff:
                            k, was, now = diff[0]
                            m.status, m.by = "killed", f"{k}{said}: {was} -> {now}"
                    if m.status:
                        break
                if m.status:
                    break
            if not m.status and tests:
                # a shared module: its own tests whole, then the ops' tests in one run (-k any reached op)
                runs = [(own_tests[m.path], ""), (tests, " or ".join(reached))] if id(m) in shared \
                    else [(tests, o) for o in reached]
                for files, o in runs:
                    if not files:
                        continue
                    kind, got = _in_child(_tests_runner(m, source, files, o), 900)
                    if kind == "ok" and got[0] == 1:
                        m.status, m.by = "killed", f"by tests: {got[1] or 'a test failed'}"
                        break
            if not m.status:
                _later_stages(m, source, reached, a, regen)
            if not m.status:
                if m.key in equivalent:
                    m.status, m.by = "equivalent", equivalent[m.key]
                else:
                    m.status, m.by = "gap", "reached by " + ", ".join(reached) + "; no verdict changed"
        m.seconds = round(time.monotonic() - t0, 2)
        print(f"[{i}/{len(plan)}] {m.status:<11} {m.path}:{m.line} {m.operator} ({m.seconds:.1f} s)",
              file=sys.stderr, flush=True)
        if journal:
            journal.add(m)
    wall = time.monotonic() - t_start
    _report(plan, ops, wall, a, base)
    if a.json:
        Path(a.json).parent.mkdir(parents=True, exist_ok=True)
        Path(a.json).write_text(json.dumps({"suite": a.suite, "seed": a.seed, "sample": n, "seconds": round(wall, 1),
                                            "mutants": [asdict(m) for m in plan]}, indent=1) + "\n")
    return 0


def _importers(m: Mutant, ops: list[str]) -> list[str]:
    """The ops of this run whose module imports from the mutated op module
    (all_to_all from all_gather): a helper that only their z3 reading or
    their generator calls is checked by their check-spec and regeneration."""
    if not is_op_module(m.path):
        return []
    name, area = Path(m.path).stem, Path(m.path).parent.name
    return [o for o in ops if o not in m.ops and _imports(ROOT / op_module(o), area, name)]


def _later_stages(m: Mutant, source: str, ops: list[str], a, regen: "_Regeneration | None") -> None:
    """What a survivor of the suite and the tests meets next: the op's
    check-spec (the z3 reading of its constraints), then the op's cases
    regenerated from the suite's seed (`_regenerator`)."""
    if regen is None:
        return
    # check-spec reads spec/ (the z3 reading of the constraints, the seed's text, the suite's manifests),
    # which imports nothing of oracle/ (tests/tools/test_mutation_tool.py holds it): no oracle/ mutant reaches it
    for o in (ops if not m.path.startswith("oracle/") else ()):
        kind, got = _in_child(_check_spec_runner(m, source, o), 600)
        if kind != "ok" or got[0] != 0:
            m.status, m.by = "killed", f"by check-spec --ops {o}: {got[1] if kind == 'ok' else got}"[:300]
            return
    for o in ops:
        base = regen.baseline(o)
        if base is None:
            continue
        kind, got = _in_child(_regenerator(m, source, o, regen.seed), regen.timeout(o))
        if kind != "ok":
            m.status, m.by = "killed", f"by regeneration of {o}: the generator {kind}: {got}"[:300]
            return
        changed = sorted(k for k in set(base) | set(got) if base.get(k) != got.get(k))
        if changed:
            m.status, m.by = "killed", f"by regeneration of {o}: {len(changed)} case(s) differ, first {changed[0]}"
            return


class _Regeneration:
    """Per op, the unmutated regeneration (built once, when first needed),
    checked against the committed suite: an op whose regeneration already
    differs from what is committed kills nothing by regeneration."""

    def __init__(self, suite: str, spath: Path, manifest: dict) -> None:
        self.seed = manifest.get("seed")
        self.dir = spath
        self.ok = suite == "core" and isinstance(self.seed, int)
        self.cache: dict[str, tuple[dict | None, float]] = {}

    def baseline(self, op: str) -> dict | None:
        if not self.ok:
            return None
        if op not in self.cache:
            t0 = time.monotonic()
            kind, got = _in_child(_regenerator(None, None, op, self.seed), 3600)
            committed = _case_digests((self.dir / f"{op}.jsonl").read_text())
            fresh = kind == "ok" and got == committed
            if not fresh:
                print(f"mutation: {op}: the unmutated regeneration differs from suites/{self.dir.name}: "
                      f"no kill by regeneration for it", file=sys.stderr)
            self.cache[op] = (got if fresh else None, time.monotonic() - t0)
        return self.cache[op][0]

    def timeout(self, op: str) -> float:
        return 5 * self.cache[op][1] + 60


def _only(path: str) -> dict[tuple[str, str, str], set[str]]:
    """{(file, operator, source line): the mutated lines} of the mutants a
    file lists: a report of this command (its survivors; the `->` line
    tells apart the mutants one operator makes of one line: `== 0` → `== -1`
    or `== 1`), or a --json record file or its journal (every mutant in it,
    whatever became of it: rescoring a whole earlier run on today's code)."""
    try:
        lines = Path(path).read_text().splitlines()
    except OSError as e:
        raise ValueError(f"--only {path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise ValueError(f"--only {path}: not a text file (a report, --json file or journal of this command)") from None
    out: dict[tuple[str, str, str], set[str]] = {}
    for rec in _records(lines):
        out.setdefault((rec["path"], rec["operator"], rec["source"]), set()).add(rec.get("mutated", ""))
    head = re.compile(r"^  (?:gap|not reached|equivalent)\s+(\S+?):\d+ \[[^\]]*\] (\S+)$")
    for i, ln in enumerate(lines if not out else ()):
        g = head.match(ln)
        if g and i + 1 < len(lines):
            after = lines[i + 2].strip() if i + 2 < len(lines) else ""
            out.setdefault((g.group(1), g.group(2), lines[i + 1].strip()), set()).add(
                after[3:].strip() if after.startswith("-> ") else "")
    if not out:
        raise ValueError(f"--only {path}: no mutants listed in it (a report, --json file or journal of this command)")
    return out


def _records(lines: list[str]) -> list[dict]:
    """The mutant records of a --json file ({"mutants": [...]}) or a journal
    (a head line, then one record a line); [] for a report."""
    try:
        doc = json.loads("\n".join(lines))
    except ValueError:
        doc = None
    if isinstance(doc, dict) and isinstance(doc.get("mutants"), list):
        return [r for r in doc["mutants"] if isinstance(r, dict) and "path" in r]
    out = []
    for ln in lines:
        try:
            r = json.loads(ln)
        except ValueError:
            return []
        if isinstance(r, dict) and {"path", "operator", "source"} <= set(r):
            out.append(r)
    return out


def _listed(m: Mutant, only: dict) -> bool:
    """Whether the report `only` lists this mutant (its line, and what it becomes)."""
    wanted = only.get((m.path, m.operator, m.source))
    if not wanted:
        return False
    if "" in wanted:   # a report without the mutated line: every mutant of that line and operator
        return True
    source = mutated_source(m)
    return source is not None and _diff_line((ROOT / m.path).read_text(), source, m.line).strip() in wanted


class _Journal:
    """Each finished mutant's record, appended as it ends (`<json>.journal`),
    so a run of hours that is interrupted resumes where it stopped: a rerun
    with the same suite, seed and sample restores the journaled mutants
    (same key, same source line) instead of scoring them again."""

    def __init__(self, a) -> None:
        self.path = Path(a.json + ".journal")
        head = {"suite": a.suite, "seed": a.seed, "sample": a.sample, "tests": a.tests, "grep": a.grep,
                "only": a.only, "later": a.later}
        self.done: dict[str, dict] = {}
        lines = self.path.read_text().splitlines() if self.path.exists() else []
        if lines and json.loads(lines[0]) == head:
            for ln in lines[1:]:
                try:
                    r = json.loads(ln)
                except ValueError:   # a line cut by the interruption
                    continue
                self.done[r["key"] + "\0" + r["source"]] = r
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(head) + "\n")

    def has(self, m: Mutant) -> bool:
        return m.key + "\0" + m.source in self.done

    def restore(self, m: Mutant) -> bool:
        r = self.done.get(m.key + "\0" + m.source)
        if r is None:
            return False
        m.status, m.by, m.mutated, m.seconds = r["status"], r["by"], r["mutated"], r["seconds"]
        return True

    def add(self, m: Mutant) -> None:
        with self.path.open("a") as f:
            f.write(json.dumps(asdict(m)) + "\n")


def figures(plan: list[Mutant]) -> list[str]:
    """The two figures issue 33 asks for, op modules and shared modules
    apart: the share of non-equivalent mutants the suite's verdicts kill
    alone, and with the unit tests, check-spec and regeneration.  A mutant
    that equivalent.toml declares, with its reason, that no implementation
    can behave like, and that only a unit test, check-spec or regeneration
    kills (the test reads the module's form — tanh's ±inf branch against
    Approx(tanh, ±inf), which rounds to the same ±1 — or the z3 reading, the
    cost model, a message) is counted apart: it leaves the behaviour
    figure's denominator, and both figures are printed."""
    declared = _equivalents()
    out = []
    for name, mine in (("op modules", lambda m: is_op_module(m.path)),
                       ("shared modules", lambda m: not is_op_module(m.path))):
        ms = [m for m in plan if mine(m) and m.status not in ("equivalent", "skipped", "")]
        if not ms:
            continue
        verdict = sum(m.status == "killed" and not m.by.startswith("by ") for m in ms)
        killed = sum(m.status == "killed" for m in ms)
        form = sum(m.status == "killed" and m.by.startswith("by ") and m.key in declared
                   and not declared[m.key].startswith(LIMIT) for m in ms)
        limits = sum(m.key in declared and declared[m.key].startswith(LIMIT) for m in ms)
        n = len(ms)
        outside = sum(m.key in declared and declared[m.key].startswith(OUTSIDE)
                      for m in plan if mine(m) and not (m.status == "killed" and not m.by.startswith("by ")))
        out.append(f"{name}: {n} non-equivalent; the suite's verdicts alone kill {verdict}/{n} "
                   f"({100 * verdict / n:.1f}%), with tests, check-spec and regeneration {killed}/{n} "
                   f"({100 * killed / n:.1f}%)" + (f"; {form} that no implementation can behave like (declared with "
                                                    f"their reasons) are killed only by a test, check-spec or "
                                                    f"regeneration: the verdicts alone kill {verdict}/{n - form} "
                                                    f"({100 * verdict / (n - form):.1f}%) of the rest" if n > form else
                                                    f"; all {form} are declared (no implementation can behave like "
                                                    f"them) and killed only by a test, check-spec or regeneration"
                                                    if form else "")
                   + (f"; {outside} of the declared read what the spec does not define ('{OUTSIDE}')"
                      if outside else "")
                   + (f"; {limits} declared '{LIMIT}' left in the denominator (an implementation behaving so "
                      f"would pass)" if limits else ""))
    return out


# The reason that declares a mutant of a line reading what no spec text defines (CHLO, JAX's shard_map
# conventions, func.call, result_accuracy, bytecode): counted apart in `figures`, so that the share of the
# spec's behaviour the suite catches is not read as covering them.
OUTSIDE = "outside the spec"
# The reason that declares a mutant no verdict can see because the oracle's own statement there is wider than the
# spec's (any value, a range without the sign of zero): an implementation behaving like it would pass, so it is
# not counted among those no implementation can behave like.
LIMIT = "an oracle limit"


def _report(plan: list[Mutant], ops: list[str], wall: float, a, base) -> None:
    rows: dict[str, dict] = {}
    for m in plan:
        who = m.ops[0] if is_op_module(m.path) and m.ops else m.path
        r = rows.setdefault(who, {"mutants": 0, "killed": 0, "equivalent": 0, "not reached": 0, "gap": 0,
                                  "skipped": 0, "seconds": 0.0})
        r["mutants"] += 1
        r[m.status] += 1
        for col, prefix in (("tests", "by tests"), ("spec", "by check-spec"), ("regen", "by regeneration")):
            r[col] = r.get(col, 0) + (m.status == "killed" and m.by.startswith(prefix))
        r["seconds"] += m.seconds
    print(f"mutation: suite {a.suite}, seed {a.seed}, {len(plan)} mutants, {wall:.0f} s")
    cols = ("mutants", "killed", "tests", "spec", "regen", "equivalent", "not reached", "gap")
    heads = ("mutants", "killed", "(tests", "spec", "regen)", "equiv", "unreach", "gap")
    print(f"{'op / module':<32} " + " ".join(f"{h:>7}" for h in heads) + f" {'s':>6}")
    tot = {k: 0 for k in cols}
    for who, r in rows.items():
        print(f"{who:<32} " + " ".join(f"{r[k]:>7}" for k in cols) + f" {r['seconds']:>6.0f}")
        for k in tot:
            tot[k] += r[k]
    scored = tot["mutants"] - tot["equivalent"]
    print(f"{'total':<32} " + " ".join(f"{tot[k]:>7}" for k in cols) + f" {wall:>6.0f}")
    print("(killed: any verdict or reported label changed, or — the columns in brackets — by the op's unit tests, "
          "its check-spec, or its cases regenerated; unreach: no case executes the line)")
    if scored:
        suite_only = tot["killed"] - tot["tests"] - tot["spec"] - tot["regen"]
        print(f"score: {tot['killed']}/{scored} non-equivalent mutants killed ({100 * tot['killed'] / scored:.0f}%); "
              f"by verdicts alone {suite_only}/{scored} ({100 * suite_only / scored:.0f}%)")
    for line in figures(plan):
        print(line)
    surv = [m for m in plan if m.status in ("gap", "not reached", "equivalent")]
    if surv:
        print("survivors:")
        for m in surv:
            print(f"  {m.status:<11} {m.path}:{m.line} [{m.function}] {m.operator}\n"
                  f"              {m.source}\n           -> {m.mutated or '(not run)'}")
            if m.status == "equivalent":
                print(f"              because: {m.by}")
        print("  (key for tools/mutation/equivalent.toml: run with --json and read 'key')")


if __name__ == "__main__":
    sys.exit(main())
