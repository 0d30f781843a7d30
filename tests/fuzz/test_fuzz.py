"""`shlo-conform fuzz` on real backends: the oracle must agree with itself,
backends with one known fault (fixtures/faulty.py: the oracle with f32
subnormals flushed, or aborting on negate) must be caught and shrunk to a
small program, and what is written must load and replay as a suite."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings

from shlo_conform import cli
from shlo_conform.generators.expect import expected_outputs
from shlo_conform.generators.fuzz_programs import fuzzable, fuzzable_ops, programs
from shlo_conform.spec.ops import OPS
from shlo_conform.suites.io import load_cases, load_manifest

FIXTURE = Path(__file__).parent / "fixtures" / "faulty.py"
FRESH = Path(__file__).parent / "fixtures" / "fresh.py"   # runs end on max_programs, not on the clock
OPS_SMALL = ["add", "negate", "multiply", "maximum", "reduce", "reshape", "transpose", "slice", "convert", "compare"]


def _fresh(backend: str, ops: list[str], seed: int, max_programs: int, out: Path) -> dict:
    """fuzz in a fresh interpreter (fixtures/fresh.py says why), as `shlo-conform fuzz` runs."""
    p = subprocess.run([sys.executable, str(FRESH), backend, ",".join(ops), str(seed), str(max_programs), str(out)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.mark.long   # stop 62's trim of make test (8:05 on a clean run): the fuzzer's other tests stay in make test
def test_the_oracle_agrees_with_itself(tmp_path):
    s = _fresh("oracle", OPS_SMALL, 1, 30, tmp_path)
    assert s["tried"] == 30 and s["disagreements"] == 0 and s["found"] == [], s["line"]
    assert s["skipped"].get("rejected by the oracle", 0) == 0   # every program valid by our constraints
    assert not any(tmp_path.iterdir())
    # several ops per program, a region among them, over several element types
    programs = s["programs"]
    assert max(t.count('"stablehlo.') for t in programs) >= 3
    assert any('"stablehlo.reduce"' in t and '"stablehlo.return"' in t for t in programs)
    assert len({t.split(": tensor<")[1].split(">")[0][-3:] for t in programs if ": tensor<" in t}) >= 3


@pytest.mark.long   # ~13 s: three fuzz runs; make test-long (CI)
def test_same_seed_same_programs_other_seed_others(tmp_path):
    runs = [_fresh("oracle", OPS_SMALL, seed, 8, tmp_path / str(k))["programs"] for k, seed in enumerate((7, 7, 8))]
    assert len(runs[0]) == 8
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


@pytest.mark.long   # ~9 s: a fuzz run, its shrinking and three CLI runs: make test-long (CI); make test keeps
# the oracle agreeing with itself
def test_flushed_subnormals_are_caught_and_shrunk(tmp_path):
    s = _fresh(f"{FIXTURE}:FlushingOracle", ["add", "negate", "multiply", "reshape"], 2, 30, tmp_path / "out")
    flushed = [f for f in s["found"] if f["label"] == ["fail", "subnormal flushed"]]
    assert s["disagreements"] >= 1 and flushed, s["line"]
    f = flushed[0]
    # minimal: one op, one input, every element shrunk to +0 but the subnormal that shows the flush
    assert len(f["ops"]) == 1 and f["mlir"].count('"stablehlo.') == 1, f["mlir"]
    [(shape, hexes)] = f["inputs"]
    words = [hexes[i:i + 8] for i in range(0, len(hexes), 8)]
    assert sum(w != "00000000" for w in words) == 1, words
    # the one-case suite loads, and replays through the CLI
    path = Path(f["path"])
    assert [c.id for c in load_cases(path)] == [f["id"]]
    assert load_manifest(path)["fuzz"]["cause"] == "subnormal flushed"
    assert cli.main([f"--backend={FIXTURE}:FlushingOracle", "--suite", str(path),
                     "--json", str(tmp_path / "r.json"), "--html", str(tmp_path / "r.html")]) == 1
    assert cli.main(["--backend=oracle", "--suite", str(path), "--json", str(tmp_path / "o.json"),
                     "--html", str(tmp_path / "o.html")]) == 0
    assert cli.main(["explain", f["id"], "--suite", str(path)]) == 0


@pytest.mark.long   # ~11 s: make test-long (CI); make test holds a crash as one case's verdict in
# tests/runner/test_command_faults.py
def test_a_crashing_backend_does_not_end_the_run(tmp_path):
    s = _fresh(f"{FIXTURE}:AbortingNegate", ["negate", "add"], 0, 6, tmp_path)
    crashes = [f for f in s["found"] if f["label"][0] == "crash"]
    assert crashes, s["line"]
    assert crashes[0]["ops"] == ["negate"] and crashes[0]["mlir"].count('"stablehlo.') == 1
    assert s["tried"] >= 2   # it went on after the crash: each program after it in a fresh worker


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
