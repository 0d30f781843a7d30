"""Issue 20 item 11b: an input flush wins over "NaN invented", in scoring and in `run`.

An MLP layer y = max(x·W + b, 0) with x = [1e-40 (subnormal), 1], W = [[+inf, 1],
[1, 1]], b = [0.5, 0.5].  By hand: y[0] = 1e-40·inf + 1·1 + 0.5 = +inf (a
positive number times +inf is +inf), y[1] = 1e-40 + 1 + 0.5 = 1.5 (rounded).
A backend that reads the subnormal as +0 computes 0·inf = NaN for y[0]: the
cause is the flushed input, not a NaN made up from nothing.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from shlo_conform.differential import judge_outputs, run_command, special_differences
from shlo_conform.generators.expect import expected_outputs
from shlo_conform.pipeline.input_flush import flushed_expectations
from shlo_conform.pipeline.judging import check_outputs
from shlo_conform.spec.types import TensorType, element_type
from shlo_conform.suites.records import Case, TensorValue

DAZ = Path(__file__).parent / "fixtures" / "daz.py"

MLP = """func.func @main(%x: tensor<1x2xf32>, %w: tensor<2x2xf32>, %b: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  %1 = stablehlo.add %0, %b : tensor<1x2xf32>
  %z = stablehlo.constant dense<0.0> : tensor<1x2xf32>
  %2 = stablehlo.maximum %1, %z : tensor<1x2xf32>
  return %2 : tensor<1x2xf32>
}
"""


def _inputs():
    x = np.array([[1e-40, 1.0]], np.float32)
    assert 0 < x[0, 0] < np.finfo(np.float32).tiny    # subnormal
    return [x, np.array([[np.inf, 1.0], [1.0, 1.0]], np.float32), np.array([[0.5, 0.5]], np.float32)]


def _case() -> Case:
    f32 = element_type("f32")
    arrays = _inputs()
    return Case(id="program/f32/000000000001", op="program", dtype="f32", kind="value", mlir=MLP,
                inputs=[TensorValue.of(a, TensorType(a.shape, f32)) for a in arrays],
                expected=expected_outputs(MLP, arrays))


DAZ_OUTPUT = np.array([[np.nan, 1.5]], np.float32)   # what a DAZ backend returns (by hand, above)


def test_the_expectation_is_what_the_hand_says():
    [e] = _case().expected
    got = e.array()
    assert got[0, 0] == np.inf and got[0, 1] == np.float32(1.5)


def test_scoring_names_the_input_flush():
    why: dict = {}
    ok, _, _, _ = check_outputs(_case(), [DAZ_OUTPUT], why)
    assert not ok and why["causes"] == {"subnormal flushed": 1}


def test_run_judges_like_scoring():
    c = _case()
    [rep] = judge_outputs(c.expected, [DAZ_OUTPUT], c)
    assert not rep.ok and rep.specials == {"subnormal flushed to zero": 1}
    assert "[subnormal flushed]" in rep.detail and "NaN invented" not in rep.detail
    # special_differences with the flushed-input expectation says the same; without it, NaN invented
    [flushed] = flushed_expectations(c)
    assert special_differences(c.expected[0], DAZ_OUTPUT, flushed) == {"subnormal flushed to zero": 1}
    assert special_differences(c.expected[0], DAZ_OUTPUT) == {"a number expected, NaN returned": 1}


def test_run_command_prints_the_input_flush(tmp_path):
    (tmp_path / "mlp.mlir").write_text(MLP)
    x, w, b = _inputs()
    np.savez(tmp_path / "in.npz", arg0=x, arg1=w, arg2=b)
    out, rc = run_command(str(tmp_path / "mlp.mlir"), [f"{DAZ}:Daz"], inputs_npz=str(tmp_path / "in.npz"))
    assert rc == 1 and "DISAGREES" in out
    # one cause for the element: the whole-program flush (oracle/rewrites.py) takes it over from the
    # element-level "subnormal flushed to zero", which it is not counted under again
    assert "(subnormals flushed) x1" in out and "subnormal flushed to zero" not in out
    assert "NaN returned" not in out and "NaN invented" not in out
