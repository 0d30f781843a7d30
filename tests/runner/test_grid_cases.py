"""Cases on a process grid: their records (suites/records.py `GridData`),
how the runner scores them (compile_grid / run_grid, each process judged
against its own expectations), and how `explain`, the HTML report and
JUnit show them.

Expected values are hand computations (x + x of each process's inputs);
the programs are collective-free, so every process's result is its own.
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from pathlib import Path

import numpy as np
import pytest

from shlo_conform import cli
from shlo_conform.differential import InputError, npz_grid_inputs
from shlo_conform.pipeline.judging import check_outputs
from shlo_conform.spec.grid import Grid
from shlo_conform.spec.expectation import Expectation
from shlo_conform.spec.types import SI32, TensorType, to_bits
from shlo_conform.suites.io import CORE, SuiteError, load_cases, write_suite
from shlo_conform.suites.records import Case, GridData, TensorValue, case_id

T = TensorType((2,), SI32)
MLIR = ("module attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {\n"
        "func.func @main(%arg0: tensor<2xi32>) -> (tensor<2xi32>) {\n"
        '  %0 = "stablehlo.add"(%arg0, %arg0) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>\n'
        '  "func.return"(%0) : (tensor<2xi32>) -> ()\n}\n}\n')


def _tv(values):
    return TensorValue.of(np.array(values, np.int32), T)


def _exp(values):
    return Expectation(T, to_bits(np.array(values, np.int32), SI32), bit_exact=True)


def grid_case(rows, expected=None, salt="") -> Case:
    """A value case on a 1×2 grid: process i adds its input to itself."""
    expected = expected if expected is not None else [[2 * x for x in r] for r in rows]
    ins = [[_tv(r)] for r in rows]
    return Case(id=case_id("add", "si32", MLIR, [v for vs in ins for v in vs], salt=salt), op="add", dtype="si32",
                kind="value", mlir=MLIR, inputs=[], note="grid",
                grid=GridData(1, 2, ins, [[_exp(e)] for e in expected]))


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    """Two cases: one right, one whose process 1 expects a wrong value."""
    path = tmp_path_factory.mktemp("grid-suite")
    good = grid_case([[1, 2], [3, -4]])
    bad = grid_case([[5, 6], [7, 8]], expected=[[10, 12], [14, 17]], salt="bad")
    write_suite(path, {"suite": "grid-test"}, [good, bad])
    return path, good, bad


# --- records -------------------------------------------------------------------

def test_a_grid_case_round_trips(suite):
    path, good, bad = suite
    got = {c.id: c for c in load_cases(path)}
    assert got[good.id].to_json() == good.to_json() and got[bad.id].to_json() == bad.to_json()
    back = got[good.id]
    assert (back.grid.num_replicas, back.grid.num_partitions) == (1, 2) and back.inputs == []
    assert [[a.tolist() for a in per] for per in back.process_inputs()] == [[[1, 2]], [[3, -4]]]
    assert back.grid.expected[1][0].array().tolist() == [6, -8]


def _damaged(d: dict, how: str) -> dict:
    g = d["grid"]
    if how == "count":
        g["inputs"] = g["inputs"][:1]
    elif how == "zero":
        g["num_replicas"] = 0
    elif how == "huge":
        g["num_replicas"] = 65
    elif how == "top-level":
        d["inputs"] = g["inputs"][0]
    elif how == "type":
        g["inputs"][1][0] = {"type": "tensor<3xi32>", "hex": "00" * 12}
    elif how == "expected-type":
        g["expected"][1][0] = {**g["expected"][1][0], "type": "tensor<2xui32>"}
    elif how == "field":
        g["devices"] = 2
    elif how == "host":
        d["host"] = {"infeed": [], "channels": {}, "log": []}
    return d


@pytest.mark.parametrize("how, words", [
    ("count", "1 inputs lists for the 2 processes of a 1×2 grid"),
    ("zero", "'num_replicas' must be a ui32 of at least 1, not 0"),
    ("huge", "65×2 is 130 processes; a case runs on at most 64"),
    ("top-level", "its own 'inputs' and 'expected' must be empty"),
    ("type", "grid process 1 input 0: hex of 24 digits where tensor<3xi32> takes 24"),
    ("expected-type", "grid process 1: its expected outputs have other types than process 0's"),
    ("field", "'grid' has an unknown field 'devices'"),
    ("host", "a case carries 'host' data or a 'grid', not both"),
])
def test_damaged_grid_records_are_refused_with_file_line_problem(tmp_path, suite, how, words):
    path, good, bad = suite
    lines = [json.loads(c.to_json()) for c in (good, bad)]
    lines[1] = _damaged(lines[1], how)
    write_suite(tmp_path, {"suite": "grid-test"}, [good, bad])
    (tmp_path / "add.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    with pytest.raises(SuiteError) as e:
        load_cases(tmp_path)
    if how == "type":   # the hex is right for the claimed type; the signature is what breaks
        words = "grid process 1: its inputs have other types than process 0's"
    assert e.value.file == "add.jsonl" and e.value.line == 2 and words in e.value.problem, e.value.problem


def test_cases_without_a_grid_keep_their_bytes():
    """A bundled suite file read and written again is byte-identical: no
    `grid` key appears where there is none (suites/core is unchanged)."""
    f = CORE / "add.jsonl"
    lines = f.read_text().splitlines()[:40]
    assert lines and all(Case.from_json(line).to_json() == line for line in lines)
    assert all('"grid"' not in line for line in lines)


# --- judging: each process against its own expectations --------------------------

def test_each_process_is_judged_against_its_own_expectations():
    c = grid_case([[1, 2], [3, 4]], expected=[[2, 4], [6, 9]])
    why: dict = {}
    ok, detail, _, _ = check_outputs(c, [[np.array([2, 4], np.int32)], [np.array([6, 8], np.int32)]], why)
    assert not ok and detail.startswith("process 1 (replica 0, partition 1): ")
    assert why["mismatches"][0][0] == "1 of process 1"
    assert [m[1:3] for m in why["mismatches"]] == [["9", "8"]]
    ok, detail, _, _ = check_outputs(c, [[np.array([2, 4], np.int32)]])
    assert not ok and detail == "outputs of 1 processes where the 1×2 grid has 2"
    # the same outputs, swapped between the processes, fail both
    ok, detail, _, _ = check_outputs(grid_case([[1, 2], [3, 4]]),
                                     [[np.array([6, 8], np.int32)], [np.array([2, 4], np.int32)]])
    assert not ok and "process 0 (replica 0, partition 0)" in detail and "process 1 (replica 0, partition 1)" in detail


# --- scoring, explain, reports -------------------------------------------------

@pytest.fixture(scope="module")
def scored(suite, tmp_path_factory):
    path, good, bad = suite
    out = tmp_path_factory.mktemp("grid-scored")
    rc = cli.main(["--backend=oracle", "--suite", str(path), "--json", str(out / "r.json"),
                   "--html", str(out / "r.html"), "--junit", str(out / "r.xml"), "--jobs", "1"])
    return rc, out, good, bad


def test_the_oracle_backend_scores_grid_cases(scored):
    rc, out, good, bad = scored
    doc = json.loads((out / "r.json").read_text())
    v = {x["id"]: x for x in doc["verdicts"]}
    assert rc == 1
    assert v[good.id]["verdict"] == "pass"
    assert v[bad.id]["verdict"] == "fail"
    assert v[bad.id]["detail"].startswith("process 1 (replica 0, partition 1): ")
    [m] = v[bad.id]["mismatches"]
    assert m[:3] == ["1 of process 1", "17", "16"] and m[4] == "other"


def test_junit_and_html_show_per_process_values(scored):
    rc, out, good, bad = scored
    xml = ET.parse(out / "r.xml").getroot()
    failure = next(tc for tc in xml.iter("testcase") if tc.get("name") == bad.id).find("failure")
    assert "process 1 (replica 0, partition 1): 1 of 2 elements differ" in failure.text
    assert "element 1 of process 1: expected 17, got 16" in failure.text
    html = (out / "r.html").read_text()
    assert "process 1 (replica 0, partition 1): %arg0: tensor&lt;2xi32&gt;" in html or \
        "process 1 (replica 0, partition 1): %arg0: tensor<2xi32>" in html
    assert "process 0 (replica 0, partition 0): #0: tensor" in html


def test_explain_shows_every_process(capsys, suite):
    path, good, bad = suite
    rc = cli.main(["explain", bad.id, "--suite", str(path)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "grid  1 replica(s) × 2 partition(s): 2 processes" in out
    p0, p1 = out.index("process 0 (replica 0, partition 0):"), out.index("process 1 (replica 0, partition 1):")
    assert p0 < p1
    assert "[14, 17]" in out[p1:] and "[7, 8]" in out[p1:] and "[5, 6]" in out[p0:p1]


# --- `run` on a grid -------------------------------------------------------------

SHARD_MAP_PSUM = '''module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%arg0: tensor<8x2xf32>) -> (tensor<8x2xf32> {jax.result_info = "result"}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%arg1: tensor<2x2xf32>) {
      %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
      ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
        %2 = stablehlo.add %arg2, %arg3 : tensor<f32>
        stablehlo.return %2 : tensor<f32>
      }) : (tensor<2x2xf32>) -> tensor<2x2xf32>
      sdy.return %1 : tensor<2x2xf32>
    } : (tensor<8x2xf32>) -> tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }
}
'''


def _run(capsys, *argv):
    rc = cli.main(["run", *map(str, argv)])
    out, err = capsys.readouterr()
    return rc, out, err


def test_run_takes_the_grid_from_the_module_and_inputs_per_process(capsys, tmp_path):
    """JAX's shard_map program (as `jax.jit(shard_map(...)).lower(x).as_text()`
    writes it): 4 partitions from the module, each process its own shard
    (`arg0@<flattened id>`), the oracle's sum on every process."""
    (tmp_path / "p.mlir").write_text(SHARD_MAP_PSUM)
    shards = {f"arg0@{i}": np.full((2, 2), i + 1, np.float32) for i in range(4)}
    np.savez(tmp_path / "in.npz", **shards)
    rc, out, err = _run(capsys, tmp_path / "p.mlir", "--backend=oracle", "--inputs", tmp_path / "in.npz")
    assert rc == 0, err
    assert "grid     1 replica(s) × 4 partition(s): 4 processes" in out
    assert "its shards: @main hands them to one manual computation (shard_map / pmap; mesh x=4)" in out
    assert out.count("[[10., 10.], [10., 10.]]") == 4   # 1 + 2 + 3 + 4 on each process
    assert "process 3 (replica 0, partition 3)" in out


@pytest.mark.long   # stop 62's trim of make test (8:35 on a fresh clone): grid judging stays in make test (the jit with shardings)
def test_a_wrong_backend_on_a_grid_disagrees_on_every_process(capsys, tmp_path):
    """The shard_map psum on XLA (4 devices) agrees on every process; XLA's
    outputs scaled by 1.01 on every process (tests/cli/fixtures/wrong.py
    alters `run_grid`'s outputs as it does `run`'s) disagree on all four.
    The whole 8×2 array given once is one line naming the fix (exit 2)."""
    wrong = Path(__file__).parent.parent / "cli" / "fixtures" / "wrong.py"
    (tmp_path / "p.mlir").write_text(SHARD_MAP_PSUM)
    np.savez(tmp_path / "in.npz", **{f"arg0@{i}": np.full((2, 2), i + 1, np.float32) for i in range(4)})
    rc, out, err = _run(capsys, tmp_path / "p.mlir", f"--backend=xla,{wrong}:Scaled", "--inputs", tmp_path / "in.npz")
    xla, scaled = out.split("\nxla ")[1].split(f"\n{wrong}")
    assert rc == 1 and xla.count(": agrees") == 4 and scaled.count(": DISAGREES") == 4, out
    np.savez(tmp_path / "whole.npz", np.ones((8, 2), np.float32))
    rc, out, err = _run(capsys, tmp_path / "p.mlir", "--backend=oracle", "--inputs", tmp_path / "whole.npz")
    assert rc == 2 and err.count("\n") == 1 and "give each process its own (its shard) as arg<k>@<flattened id>" in err


def test_a_jit_with_shardings_is_judged_as_one_global_computation(capsys, tmp_path):
    """`jax.jit(f, in_shardings=…)` on 4 devices, no shard_map, the
    contracting dimension sharded (XLA's partitioner sums each device's
    part and all-reduces them: another order of the same sums): judged
    as one computation on the whole arrays, XLA run partitioned with its
    shards put together — it agrees, as does the interpreter on one
    process; scaled by 1.01 it disagrees; IREE, which has no sdy dialect,
    says it cannot read the program (unsupported, not a refusal)."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as Spec
    from shlo_conform.backends.base import load_backend
    wrong = Path(__file__).parent.parent / "cli" / "fixtures" / "wrong.py"
    mesh = Mesh(np.array(load_backend("xla").grid_devices(4), dtype=object), ("x",))
    f = jax.jit(lambda a, w: jnp.tanh(a @ w), in_shardings=(NamedSharding(mesh, Spec(None, "x")),
                                                             NamedSharding(mesh, Spec("x", None))),
                out_shardings=NamedSharding(mesh, Spec()))
    rng = np.random.default_rng(3)
    a, w = rng.standard_normal((8, 64)).astype(np.float32), (rng.standard_normal((64, 4)) / 8).astype(np.float32)
    (tmp_path / "p.mlir").write_text(f.lower(a, w).as_text())
    np.savez(tmp_path / "in.npz", a, w)
    rc, out, err = _run(capsys, tmp_path / "p.mlir", f"--backend=xla,interpreter,iree,{wrong}:Scaled", "--inputs",
                        tmp_path / "in.npz")
    assert "a jit with shardings over 4 devices, judged as one global computation" in out, out
    xla, rest = out.split("\nxla ")[1].split("\ninterpreter ")
    interpreter, rest = rest.split("\niree ")
    iree, scaled = rest.split(f"\n{wrong}")
    assert rc == 1 and "#0 tensor<8x4xf32>: agrees" in xla and "DISAGREES" in scaled, out
    assert "#0 tensor<8x4xf32>: agrees" in interpreter   # the shardings' annotations read past, one process
    assert "UNSUPPORTED: iree: " in iree and "sdy" in iree   # no sdy dialect: cannot read it, not a refusal
    assert "process 1" not in out


@pytest.mark.parametrize("files, words", [
    ({"arg0@0": [1, 2], "arg0@2": [3, 4]}, "arg0@2 fits no process: the 2×1 grid has flattened ids 0..1"),
    ({"arg0@0": [1, 2]}, "no array arg0@1 (argument 0 of process 1) nor arg0 for every process"),
    ({"arg1@0": [1, 2], "arg0": [1, 2]}, "arg1@0 fits no argument of @main"),
    ({"arg0@0": [1, 2, 3], "arg0@1": [1, 2]}, "arg0@0 has shape (3,), @main takes tensor<2xi32>"),
    ({"x@0": [1, 2]}, "array x@0 matches no argument of @main (1 arguments; per process: arg<k>@<flattened id>)"),
])
def test_per_process_npz_mistakes_are_named(tmp_path, files, words):
    np.savez(tmp_path / "in.npz", **{k: np.array(v, np.int32) for k, v in files.items()})
    with pytest.raises(InputError) as e:
        npz_grid_inputs(str(tmp_path / "in.npz"), [T], Grid(2, 1))
    assert words in str(e.value) and "\n" not in str(e.value)


def test_per_process_npz_shared_and_own_arrays(tmp_path):
    np.savez(tmp_path / "in.npz", arg0=np.array([1, 2], np.int32), **{"arg0@1": np.array([3, 4], np.int32)})
    got = npz_grid_inputs(str(tmp_path / "in.npz"), [T], Grid(1, 3))
    assert [[a.tolist() for a in per] for per in got] == [[[1, 2]], [[3, 4]], [[1, 2]]]


def test_run_grid_mistake_is_one_line_exit_2(capsys, tmp_path):
    (tmp_path / "p.mlir").write_text(MLIR)
    np.savez(tmp_path / "in.npz", arg0=np.array([1, 2], np.int32))
    rc, out, err = _run(capsys, tmp_path / "p.mlir", "--backend=oracle", "--inputs", tmp_path / "in.npz",
                        "--replicas", "3")
    assert rc == 2 and out == "" and err.count("\n") == 1, err
    assert "the module states a 1×2 grid (mhlo.num_replicas × mhlo.num_partitions); --replicas/--partitions ask " \
           "for 3×1" in err


def test_run_flags_give_a_grid_to_a_module_without_one(capsys, tmp_path):
    """`--replicas 3`: a bare arg0 goes to every process; random inputs are
    drawn per process."""
    (tmp_path / "p.mlir").write_text(MLIR.split("{\n", 1)[1].rsplit("}\n", 1)[0])   # the func alone
    np.savez(tmp_path / "in.npz", arg0=np.array([4, -5], np.int32))
    rc, out, err = _run(capsys, tmp_path / "p.mlir", "--backend=oracle", "--inputs", tmp_path / "in.npz",
                        "--replicas", "3")
    assert rc == 0, err
    assert "3 replica(s) × 1 partition(s)" in out and out.count("[ 8, -10]") == 3


def test_generated_cases_record_their_grid():
    """partition_id's generated cases: the module states the grid and each
    process expects its own partition id (flattened order: i % P)."""
    from shlo_conform.generators.suite import op_cases
    from shlo_conform.spec.ops import OPS
    cases, _ = op_cases(OPS["partition_id"], 0)
    grids = [c for c in cases if c.grid is not None and c.grid.size > 1]
    assert grids
    for c in grids:
        g = c.grid
        assert f"mhlo.num_partitions = {g.num_partitions} : i32, mhlo.num_replicas = {g.num_replicas} : i32" in c.mlir
        assert [[int(e.array()) for e in per] for per in g.expected] == [[i % g.num_partitions] for i in range(g.size)]
        assert c.inputs == [] and c.expected == []
        assert Case.from_json(c.to_json()).to_json() == c.to_json()
