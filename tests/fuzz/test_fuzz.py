"""`shlo-conform fuzz` on real backends: the oracle must agree with itself,
backends with one known fault (fixtures/faulty.py: the oracle with f32
subnormals flushed, or aborting on negate) must be caught and shrunk to a
small program, and what is written must load and replay as a suite."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings

from shlo_conform import cli
from shlo_conform.fuzz import fuzz
from shlo_conform.generators.expect import expected_outputs
from shlo_conform.generators.fuzz_programs import fuzzable, fuzzable_ops, programs
from shlo_conform.spec.ops import OPS
from shlo_conform.suites.io import load_cases, load_manifest

FIXTURE = Path(__file__).parent / "fixtures" / "faulty.py"
# Runs end on max_programs, not on the clock: a budget far above what they
# need keeps the verdicts the same on a loaded machine (CI shares its cores).
BUDGET = 600
OPS_SMALL = ["add", "negate", "multiply", "maximum", "reduce", "reshape", "transpose", "slice", "convert", "compare"]


def test_the_oracle_agrees_with_itself(tmp_path):
    s = fuzz("oracle", fuzzable_ops(OPS_SMALL), seed=1, budget=BUDGET, out=tmp_path, max_programs=30)
    assert s.tried == 30 and s.disagreements == 0 and s.found == []
    assert sum(s.skipped.values()) < s.tried and s.skipped["rejected by the oracle"] == 0   # every program valid
    assert not any(tmp_path.iterdir())
    # several ops per program, a region among them, over several element types
    assert max(t.count('"stablehlo.') for t in s.programs) >= 3
    assert any('"stablehlo.reduce"' in t and '"stablehlo.return"' in t for t in s.programs)
    assert len({t.split(": tensor<")[1].split(">")[0][-3:] for t in s.programs if ": tensor<" in t}) >= 3


def test_same_seed_same_programs_other_seed_others(tmp_path):
    runs = [fuzz("oracle", fuzzable_ops(OPS_SMALL), seed=seed, budget=BUDGET, out=tmp_path, max_programs=8).programs
            for seed in (7, 7, 8)]
    assert len(runs[0]) == 8
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


def test_flushed_subnormals_are_caught_and_shrunk(tmp_path):
    s = fuzz(f"{FIXTURE}:FlushingOracle", fuzzable_ops(["add", "negate", "multiply", "reshape"]), seed=0,
             budget=BUDGET, out=tmp_path / "out", max_programs=30)
    flushed = [f for f in s.found if f.label == ("fail", "subnormal flushed")]
    assert s.disagreements >= 1 and flushed, s.line()
    f = flushed[0]
    case = f.case
    # minimal: one op, one f32 input element (a subnormal), the op the output of
    assert len(f.ops) == 1 and case.mlir.count('"stablehlo.') == 1, case.mlir
    assert [v.tensor_type.shape for v in case.inputs] in ([()], [(1,)]) or sum(
        max(1, len(v.hex) // 8) for v in case.inputs) <= 2, case.mlir
    # the one-case suite loads, and replays through the CLI
    assert [c.id for c in load_cases(f.path)] == [case.id]
    assert load_manifest(f.path)["fuzz"]["cause"] == "subnormal flushed"
    assert cli.main([f"--backend={FIXTURE}:FlushingOracle", "--suite", str(f.path),
                     "--json", str(tmp_path / "r.json"), "--html", str(tmp_path / "r.html")]) == 1
    assert cli.main(["--backend=oracle", "--suite", str(f.path), "--json", str(tmp_path / "o.json"),
                     "--html", str(tmp_path / "o.html")]) == 0
    assert cli.main(["explain", case.id, "--suite", str(f.path)]) == 0


def test_a_crashing_backend_does_not_end_the_run(tmp_path):
    s = fuzz(f"{FIXTURE}:AbortingNegate", fuzzable_ops(["negate", "add"]), seed=0, budget=BUDGET, out=tmp_path,
             max_programs=6)
    crashes = [f for f in s.found if f.label[0] == "crash"]
    assert crashes, s.line()
    assert crashes[0].ops == ["negate"] and crashes[0].case.mlir.count('"stablehlo.') == 1
    assert s.tried >= 2   # it went on after the crash: each program after it in a fresh worker


def test_fuzzable_is_read_from_declarations():
    assert fuzzable(OPS["add"]) is None and fuzzable(OPS["reduce"]) is None
    assert "index operands" in fuzzable(OPS["gather"])
    assert fuzzable(OPS["while"]) and fuzzable(OPS["iota"]) and fuzzable(OPS["sort"])


@pytest.mark.parametrize("args, says", [
    (["--backend=nope"], "unknown backend"),
    (["--backend=oracle", "--ops", "nope"], "no op 'nope'"),
    (["--backend=oracle", "--ops", "gather"], "cannot place 'gather'"),
    (["--backend=oracle", "--budget", "0"], "--budget"),
    (["--backend=oracle", "--seed", "-3"], "--seed"),
])
def test_bad_input_is_one_line_and_exit_2(args, says, capsys):
    assert cli.main(["fuzz", *args]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


@settings(database=None, derandomize=True, max_examples=8, deadline=None,
          suppress_health_check=list(HealthCheck), phases=[Phase.generate])
@given(programs(fuzzable_ops(["add", "negate", "multiply", "abs", "reshape"])))
def test_the_cone_of_an_output_computes_what_the_whole_program_does(prog):
    """Cutting a program down to one output's cone (what fuzz writes) keeps
    that output's expectation, bit for bit, and drops the rest."""
    assume(prog is not None and len(prog.outputs) >= 2)
    whole = expected_outputs(prog.text(), prog.inputs)
    for k in range(len(prog.outputs)):
        cut = prog.cone(k)
        assert len(cut.outputs) == 1 and len(cut.steps) <= len(prog.steps) and len(cut.args) <= len(prog.args)
        [alone] = expected_outputs(cut.text(), cut.inputs)
        assert alone == whole[k]
