"""tools/mutation/mutation.py's own parts that need no scoring: our two mutation
operators do what their examples say, sampling is deterministic and stable,
mutant names survive edits elsewhere, generator-only code and symmetric
calls make no mutants, and the command refuses bad input with one line."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("mutation_tool", ROOT / "tools" / "mutation" / "mutation.py")
mutation = importlib.util.module_from_spec(_spec)
sys.modules["mutation_tool"] = mutation   # dataclasses look their module up
_spec.loader.exec_module(mutation)


def _op(name):
    return dict(mutation._operators())[name]


@pytest.mark.parametrize("name, before, after", [
    ("shlo/DropBranch", "if x:\n    y = 1\nelif z:\n    y = 2\n", "if False:\n    y = 1\nelif z:\n    y = 2\n"),
    ("shlo/SwapArguments", "f(a, b, c)\n", "f(b, a, c)\n"),
])
def test_our_operators_mutate_as_stated(name, before, after):
    from cosmic_ray.mutating import mutate_code
    assert mutate_code(before, _op(name), 0) == after


def test_drop_branch_reaches_elif_and_swap_skips_symmetric_calls():
    from cosmic_ray.mutating import mutate_code
    assert mutate_code("if x:\n    y = 1\nelif z:\n    y = 2\n", _op("shlo/DropBranch"), 1) == \
        "if x:\n    y = 1\nelif False:\n    y = 2\n"
    assert mutate_code("same_type(a, b)\nf(k=1, m=2)\n", _op("shlo/SwapArguments"), 0) is None


def test_sampling_is_deterministic_and_stable_under_additions():
    ms = mutation.enumerate_mutants("spec/ops/shift_right_arithmetic.py")
    a = [m.key for m in mutation.sample(ms, 10, 0)]
    assert a == [m.key for m in mutation.sample(mutation.enumerate_mutants("spec/ops/shift_right_arithmetic.py"), 10, 0)]
    assert a != [m.key for m in mutation.sample(ms, 10, 1)]   # another seed, another sample
    extra = mutation.enumerate_mutants("spec/ops/sine.py")
    both = {m.key for m in mutation.sample(ms + extra, 0, 0)}
    assert set(a) <= both and len({m.key for m in ms}) == len(ms)   # keys are unique


def test_generator_only_code_and_docstrings_make_no_mutants():
    ms = mutation.enumerate_mutants("spec/ops/while.py")
    text = (ROOT / "spec/ops/while.py").read_text().splitlines()
    exercise_fn = next(i for i, t in enumerate(text, 1) if t.startswith("def counter_values"))
    assert ms and all(m.line < exercise_fn or m.line > exercise_fn + 12 for m in ms)
    assert not any("count=" in m.source and m.operator == "core/NumberReplacer" for m in ms)


def test_bad_input_is_one_line_and_exit_2():
    p = subprocess.run([sys.executable, str(ROOT / "tools" / "mutation" / "mutation.py"), "--ops", "no_such_op", "--list"],
                       capture_output=True, text=True, env={"SHLO_MUTATION_NO_PRELOAD": "1", "PATH": ""})
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "no_such_op" in p.stderr


@pytest.mark.long   # 10–22 s each: the mutation tool's own runs; make test-long (CI)
def test_the_unmutated_oracle_scores_conformant_on_grids_and_host_programs():
    """The baseline every mutant is compared with: the oracle scored as a
    backend passes its own value cases and rejects its invalid ones — on a
    process grid (replica_id, all_reduce: compile_grid / run_grid, each
    process on its inputs), with host queues (infeed) and plainly (add).
    A scorer that fails them all (it once built the grid wrongly) would
    hide every collective's mutants as "not reached"."""
    from shlo_conform.suites.io import load_cases, suite_path
    ops = ["replica_id", "all_reduce", "infeed", "add"]
    got = mutation._score("core", ops, None, ["spec/ops/all_reduce.py"])
    kinds = {c.id: c.kind for c in load_cases(suite_path("core"), set(ops))}
    assert set(got["verdicts"]) == set(kinds)
    for cid, v in got["verdicts"].items():
        want = "rejected" if kinds[cid] == "invalid" else ("pass", "survey")
        assert v.split(" [")[0] in (want if isinstance(want, tuple) else (want,)), (cid, v)
    assert got["lines"].get("spec/ops/all_reduce.py")


def test_a_shared_modules_mutant_is_scored_on_the_cases_that_run_its_line():
    """The per-case trace: each case's lines, the lines run while the
    project loads ("pre": reaching every case), and `_reaching_cases`
    picking the cases of an op that execute a mutant's line.  Truth by
    construction: negate's cases on si8 run its integer overflow branch
    only where an operand is -128 (the inputs say which), and a module-level
    line reaches every case (None)."""
    import json
    from shlo_conform.suites.io import load_cases, suite_path
    path = "spec/ops/negate.py"
    got = mutation._score("core", ["negate"], None, [path])
    cases = load_cases(suite_path("core"), {"negate"})
    assert set(got["cases"]) == {c.id for c in cases} == set(got["case_seconds"])
    src = (ROOT / path).read_text().splitlines()
    line = next(i for i, ln in enumerate(src, 1) if "INT_MIN (wraps)" in ln)
    m = mutation.Mutant(path, "op", 0, line, line, 0, "element", src[line - 1])
    want = [c.id for c in cases if c.kind == "value" and c.inputs and "si8" in c.id
            and any((np.asarray(t.array()) == -128).any() for t in c.inputs)]
    reaching = mutation._reaching_cases(m, got)
    assert want and set(want) <= set(reaching)
    assert all(any(e in cid for e in ("si", "ui")) for cid in reaching), json.dumps(reaching)[:300]
    top = mutation.Mutant(path, "op", 0, 1, 1, 0, "<module>", src[0])
    assert mutation._reaching_cases(top, got) is None


def test_check_spec_reads_nothing_of_the_oracle():
    """The tool runs no check-spec for a mutant of oracle/: spec/ (what
    check-spec reads) imports nothing from it."""
    import ast
    for f in sorted((ROOT / "spec").rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [f"{node.module or ''}"] if isinstance(node, ast.ImportFrom) else []
            assert not any("oracle" in n.split(".") for n in names), (f, names)


@pytest.mark.long   # 10–22 s each: the mutation tool's own runs; make test-long (CI)
def test_own_tests_of_a_shared_module():
    """Its namesake first, then every file of tests/spec and tests/oracle
    that imports it, in any of the three spellings."""
    got = mutation._own_tests("oracle/rounding.py")
    assert got[0] == "tests/oracle/test_rounding.py"
    assert {"tests/oracle/test_ziv.py", "tests/spec/test_bounds.py"} <= set(got)   # `from …oracle.rounding import`
    own = mutation._own_tests("oracle/accumulate.py")   # `from …oracle import accumulate`
    assert own[0] == "tests/oracle/test_accumulate.py" and sorted(own[1:]) == [
        "tests/oracle/test_dot_algorithm.py", "tests/oracle/test_mixed_precision.py", "tests/spec/test_bounds.py"]
    assert "tests/spec/test_annex_g.py" in mutation._own_tests("spec/annex_g.py")
    assert all(mutation._imports(ROOT / f, "oracle", "fast") for f in mutation._own_tests("oracle/fast.py"))
    assert not mutation._imports(ROOT / "tests/spec/test_dsl.py", "oracle", "fast")
    # the op modules' relative imports, read from their folder: `from .all_gather import …`, `from . import reduce`
    ops = ["all_to_all", "reduce_window", "add", "reduce"]
    assert mutation._importers(mutation.Mutant("spec/ops/all_gather.py", "op", 0, 1, 1, 0, "f", "x", ops=["all_gather"]),
                               ops) == ["all_to_all"]
    assert mutation._importers(mutation.Mutant("spec/ops/reduce.py", "op", 0, 1, 1, 0, "f", "x", ops=["reduce"]),
                               ops) == ["reduce_window"]


def test_the_calls_declared_symmetric_are_symmetric():
    """SYMMETRIC makes no mutant of swapping a call's first two arguments:
    each function named there must give the same answer both ways, on
    operands that would tell (signed zeros, infinities, NaN parts, shapes
    and element types that differ)."""
    import itertools
    import math
    from shlo_conform.spec import annex_g, dsl, ieee
    from shlo_conform.spec.ops.tuple import same_value_type
    from shlo_conform.spec.types import TensorType, TupleType, element_type
    from shlo_conform.spec.quantized import quantized_type, same_baseline_type
    named = {"same_shape": dsl.same_shape, "same_element_type": dsl.same_element_type,
             "same_type": dsl.same_type, "same_value_type": same_value_type,
             "same_baseline_type": same_baseline_type}
    f32, i8 = element_type("f32"), element_type("i8")
    q = [quantized_type("i8", "f32", (0.5,), (0,)), quantized_type("i8", "f32", (0.25,), (3,)),
         quantized_type("i8", "f16", (0.5,), (0,)), quantized_type("i4", "f32", (0.5,), (0,)),
         quantized_type("i8", "f32", (0.5, 0.25), (0, 1), 0), quantized_type("i8", "f32", (0.5, 0.5), (0, 0), 1)]
    ts = [TensorType((2, 3), f32), TensorType((3, 2), f32), TensorType((2, 3), i8), TensorType((2,), f32),
          TupleType((TensorType((2,), f32),)), TupleType((TensorType((2,), i8),))] \
        + [TensorType((2, 2), e) for e in q]
    for name, fn in named.items():
        for a, b in itertools.product(ts, ts):
            if name != "same_value_type" and not (isinstance(a, TensorType) and isinstance(b, TensorType)):
                continue
            assert bool(fn(a, b)) == bool(fn(b, a)), (name, a, b)
    tensors = [t for t in ts if isinstance(t, TensorType)]
    for a, b, c in itertools.product(tensors, tensors, tensors):   # v1.20's lhs = rhs = result form
        assert bool(same_baseline_type(a, b, c)) == bool(same_baseline_type(b, a, c)), (a, b, c)
    assert any(same_baseline_type(a, b) and a != b for a, b in itertools.product(tensors, tensors))
    specials = [0.0, -0.0, 1.5, -2.25, 1e308, -1e308, 5e-324, math.inf, -math.inf, math.nan]
    def same(x, y):   # exact results (Fractions) by value; floats with their sign of zero; NaN as NaN
        if isinstance(x, dsl.ImplDefined) or isinstance(y, dsl.ImplDefined):   # the same alternatives
            return type(x) is type(y) and x.alternatives.keys() == y.alternatives.keys() and \
                all(same(x.alternatives[k], y.alternatives[k]) for k in x.alternatives)
        if isinstance(x, tuple) or isinstance(y, tuple):
            return type(x) is type(y) and len(x) == len(y) and all(map(same, x, y))
        if not isinstance(x, float) or not isinstance(y, float):
            return type(x) is type(y) and x == y
        return (x != x and y != y) or (x == y and math.copysign(1, x) == math.copysign(1, y))
    for fn in (ieee.addition, ieee.multiplication):
        for a, b in itertools.product(specials, specials):
            assert same(fn(a, b), fn(b, a)), (fn.__name__, a, b)
    for xr, xi, yr, yi in itertools.product(specials[::2], specials[1::2], specials[1::3], specials[::3]):
        p, q = annex_g.cmul(complex(xr, xi), complex(yr, yi)), annex_g.cmul(complex(yr, yi), complex(xr, xi))
        assert same(p, q), (xr, xi, yr, yi)
    assert set(named) | {"addition", "multiplication", "cmul"} <= set(mutation.SYMMETRIC)


def test_postponed_annotations_and_choices_make_no_mutants():
    """`X | None` in a postponed annotation is a string nobody evaluates, and
    an attribute's `choices=` is what generators draw from: neither is
    semantics, so neither is mutated (the full run of stop 28 listed both as
    gaps)."""
    dg = mutation.enumerate_mutants("spec/ops/dot_general.py")
    assert dg and not any("TensorType | None" in m.source and m.operator.endswith("BitOr_Sub") for m in dg)
    gte = mutation.enumerate_mutants("spec/ops/get_tuple_element.py")
    lines = (ROOT / "spec/ops/get_tuple_element.py").read_text().splitlines()
    on_hint = [m for m in gte if "choices=" in m.source]
    assert on_hint and all(m.col < lines[m.line - 1].index("choices=") for m in on_hint)   # IntAttr(32) still is


def test_generator_inputs_make_no_mutants():
    """Quantization's `example=`, `appended_last=` streams and a token op's
    SideEffect `cases` choose the programs generators write — no verdict
    reads them (stop 38's run counted 56 of their mutants as killed only by
    regeneration) — and what only they use goes with them (recv's table of
    grids); the op's rules beside them are still mutated."""
    tr = mutation.enumerate_mutants("spec/ops/transpose.py")
    assert tr and not any(m.function == "quantized_example" for m in tr)
    assert any(m.function == "transpose_c4" for m in tr)
    rw = mutation.enumerate_mutants("spec/ops/reduce_window.py")
    assert not any(m.function in ("quantized_example", "promoted_cases") for m in rw)
    # the example calls SPEC.instance, but SPEC — and what only it reads, the semantics — stays mutated
    rd = mutation.enumerate_mutants("spec/ops/reduce.py")
    assert {"arrays", "body_signature", "to_body_type"} <= {m.function for m in rd}
    rv = mutation.enumerate_mutants("spec/ops/recv.py")
    assert rv and not any(m.function == "cases" or "Grid(1, 3)" in m.source for m in rv)
    assert any(m.function == "read" for m in rv)


def test_only_reads_a_reports_survivors_or_a_records_mutants(tmp_path):
    report = tmp_path / "r.txt"
    report.write_text("survivors:\n"
                      "  gap         spec/ops/abs.py:29 [abs_c2] core/ReplaceComparisonOperator_Eq_Is\n"
                      "              return a == b\n           -> return a is b\n"
                      "  not reached spec/ops/iota.py:51 [movement] core/NumberReplacer\n"
                      "              values = f(-1)\n           -> values = f(- 0)\n")
    assert mutation._only(str(report)) == {("spec/ops/abs.py", "core/ReplaceComparisonOperator_Eq_Is", "return a == b"):
                                           {"return a is b"},
                                           ("spec/ops/iota.py", "core/NumberReplacer", "values = f(-1)"): {"values = f(- 0)"}}
    (tmp_path / "empty.txt").write_text("nothing here\n")
    with pytest.raises(ValueError, match="no mutants listed"):
        mutation._only(str(tmp_path / "empty.txt"))
    # a journal (a head line, one record a line) and a --json file: every mutant in it, killed ones too
    import json
    recs = [{"path": "spec/ops/abs.py", "operator": "op/A", "source": "x = 1", "mutated": "x = 2", "status": "killed"},
            {"path": "spec/ops/abs.py", "operator": "op/A", "source": "x = 1", "mutated": "x = 0", "status": "gap"}]
    want = {("spec/ops/abs.py", "op/A", "x = 1"): {"x = 2", "x = 0"}}
    (tmp_path / "j.journal").write_text("\n".join(json.dumps(r) for r in [{"suite": "core", "seed": 0}, *recs]) + "\n")
    assert mutation._only(str(tmp_path / "j.journal")) == want
    (tmp_path / "m.json").write_text(json.dumps({"suite": "core", "mutants": recs}, indent=1))
    assert mutation._only(str(tmp_path / "m.json")) == want
    (tmp_path / "b.npz").write_bytes(b"PK\x03\x04\xb3\xff")
    with pytest.raises(ValueError, match="b.npz: not a text file"):
        mutation._only(str(tmp_path / "b.npz"))
    p = subprocess.run([sys.executable, str(ROOT / "tools" / "mutation" / "mutation.py"), "--ops", "abs", "--only",
                        str(tmp_path / "missing.txt")], capture_output=True, text=True,
                       env={"SHLO_MUTATION_NO_PRELOAD": "1", "PATH": ""})
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "missing.txt" in p.stderr


@pytest.mark.long   # 10–22 s each: the mutation tool's own runs; make test-long (CI)
def test_the_test_stage_runs_pytest_in_a_child_and_reads_its_verdict(tmp_path):
    """What kills a survivor "by tests": pytest run in a forked child on the
    files given (-k the op), rc 0 when they pass, 1 and the first FAILED
    line when one fails."""
    f = tmp_path / "test_probe.py"
    f.write_text("def test_sine_passes():\n    pass\n\n\ndef test_tan_fails():\n    assert False\n")
    assert mutation._in_child(mutation._tests_runner(None, None, [str(f)], "sine"), 120) == ("ok", (0, ""))
    kind, (rc, line) = mutation._in_child(mutation._tests_runner(None, None, [str(f)], ""), 120)
    assert kind == "ok" and rc == 1 and line.startswith("FAILED") and "test_tan_fails" in line


def test_shards_split_the_plan_and_their_joined_journals_report_the_whole_run(tmp_path, monkeypatch, capsys):
    """`--shard I/N` scores the plan's mutants k with k % N = I (make
    mutation runs one a core); the shards' journals joined under one head
    line are the whole run's: a run without --shard restores every mutant,
    takes no baseline (scoring here would fail the test) and reports all."""
    args = ["--ops", "abs,negate", "--sample", "3", "--tests", "", "--no-later"]
    listed = {}
    for shard in ("0/1", "0/2", "1/2"):
        assert mutation.main(args + ["--shard", shard, "--list"]) == 0
        listed[shard] = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("spec/")]
    assert len(listed["0/1"]) == 6 and listed["0/2"] and listed["1/2"]
    assert sorted(listed["0/2"] + listed["1/2"]) == sorted(listed["0/1"])
    assert not set(listed["0/2"]) & set(listed["1/2"])

    head = {"suite": "core", "seed": 0, "sample": 3, "tests": "", "grep": None, "only": None, "later": False}
    plan = [m for op in ("abs", "negate") for m in mutation.sample(mutation.enumerate_mutants(mutation.op_module(op)), 3, 0)]
    recs = [dict(mutation.asdict(m), status="killed", by="x: pass -> fail", seconds=1.0) for m in plan]
    journal = tmp_path / "m.json.journal"
    journal.write_text("\n".join(json.dumps(r) for r in [head, *recs]) + "\n")
    monkeypatch.setattr(mutation, "_score", lambda *a, **k: pytest.fail("a baseline was taken"))
    assert mutation.main(args + ["--json", str(tmp_path / "m.json")]) == 0
    out = capsys.readouterr().out
    assert "6 mutants" in out and "by verdicts alone 6/6" in out
    assert len(json.loads((tmp_path / "m.json").read_text())["mutants"]) == 6
    assert mutation.main(args + ["--shard", "2/2"]) == 2


def test_baselines_are_kept_under_a_key_of_what_they_depend_on(tmp_path, monkeypatch):
    """A second run of the same op on the same tree reads the kept record
    (its child never runs); another suite file, route or traced list is
    another key; a failed child keeps nothing."""
    monkeypatch.setattr(mutation._Baselines, "DIR", tmp_path / "kept")
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "add.jsonl").write_text('{"id": "add/f32/1"}\n')
    cache = mutation._Baselines(suite)
    got = cache.run("add", ["oracle/fast.py"], (False, "primary"), lambda: {"verdicts": {"add/f32/1": "pass"}})
    assert got["verdicts"] == {"add/f32/1": "pass"} and got["seconds"] > 0

    def never():
        raise AssertionError("the kept record was not read")
    assert mutation._Baselines(suite).run("add", ["oracle/fast.py"], (False, "primary"), never) == got
    assert cache.run("add", ["oracle/fast.py"], (True, "primary"), lambda: {"verdicts": {}})["verdicts"] == {}
    assert cache.run("add", ["oracle/rounding.py"], (False, "primary"), lambda: {"verdicts": {}})["verdicts"] == {}
    (suite / "add.jsonl").write_text('{"id": "add/f32/2"}\n')
    assert cache.run("add", ["oracle/fast.py"], (False, "primary"), lambda: {"verdicts": {"x": "fail"}})["verdicts"] \
        == {"x": "fail"}
    kept = len(list((tmp_path / "kept").iterdir()))
    assert kept == 4
    assert "ValueError" in cache.run("sub", [], (False, "primary"), lambda: int("x"))
    assert len(list((tmp_path / "kept").iterdir())) == kept


def test_an_oracle_limit_stays_in_the_behaviour_figures_denominator(monkeypatch):
    """A declaration "an oracle limit" (the oracle's statement there is wider
    than the spec's: an implementation behaving like the mutant passes)
    does not leave the denominator as "no implementation can behave like
    it" does; both are counted by `figures`."""
    def m(key, status, by):
        return mutation.Mutant("oracle/x.py", "op", 0, 1, 1, 0, "f", "s", key=key, status=status, by=by)
    plan = [m("a", "killed", "divide/f32/1: pass -> fail"), m("b", "killed", "by tests: FAILED t"),
            m("c", "killed", "by tests: FAILED t"), m("d", "killed", "by tests: FAILED t")]
    monkeypatch.setattr(mutation, "_equivalents", lambda: {"b": "equivalent: …", "c": mutation.LIMIT + ": …"})
    [shared] = mutation.figures(plan)
    assert "kill 1/4 (25.0%)" in shared
    assert "1 that no implementation can behave like" in shared and "kill 1/3 (33.3%) of the rest" in shared
    assert f"1 declared '{mutation.LIMIT}' left in the denominator" in shared
