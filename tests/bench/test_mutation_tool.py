"""bench/mutation.py's own parts that need no scoring: our two mutation
operators do what their examples say, sampling is deterministic and stable,
mutant names survive edits elsewhere, generator-only code and symmetric
calls make no mutants, and the command refuses bad input with one line."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_mutation", ROOT / "bench" / "mutation.py")
mutation = importlib.util.module_from_spec(_spec)
sys.modules["bench_mutation"] = mutation   # dataclasses look their module up
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
    p = subprocess.run([sys.executable, str(ROOT / "bench" / "mutation.py"), "--ops", "no_such_op", "--list"],
                       capture_output=True, text=True, env={"SHLO_MUTATION_NO_PRELOAD": "1", "PATH": ""})
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "no_such_op" in p.stderr


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
