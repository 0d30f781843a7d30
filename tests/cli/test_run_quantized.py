"""`run` on programs with quantized tensors (issue 34): read (IREE's MLIR
bindings verify them; jaxlib's have no quant dialect), judged by the oracle
as dequantize_op_quantize, scored on IREE as written; XLA and the reference
interpreter, which cannot take such a program through jaxlib 0.10.2, say
so in one line with their reason — unsupported, never rejected, never a
crash.  A backend one storage step off everywhere disagrees."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from shlo_conform.cli import main
from tests.run_report import verdicts as read_verdicts

WRONG = Path(__file__).parent / "fixtures" / "wrong.py"

PROGRAM = """func.func @main(%arg0: tensor<8xf32>) -> tensor<8x!quant.uniform<i8:f32, 0.05:2>> {
  %0 = stablehlo.uniform_quantize %arg0 : (tensor<8xf32>) -> tensor<8x!quant.uniform<i8:f32, 0.1:-3>>
  %1 = stablehlo.tan %0 : (tensor<8x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<8x!quant.uniform<i8:f32, 0.05:2>>
  return %1 : tensor<8x!quant.uniform<i8:f32, 0.05:2>>
}
"""


@pytest.fixture
def program(tmp_path):
    (tmp_path / "q.mlir").write_text(PROGRAM)
    np.savez(tmp_path / "q.npz", np.array([0.1, 0.5, -1, 1.2, 3, -7, 0, np.nan], np.float32))
    return tmp_path


def test_iree_agrees_and_jaxlib_backends_say_why_not(program, capsys):
    rc = main(["run", str(program / "q.mlir"), "--inputs", str(program / "q.npz"),
               "--backend=iree,xla,interpreter,oracle"])
    out = capsys.readouterr().out
    assert read_verdicts(out)["iree"] == ["agrees"], out
    # hand: tan(0.1)/0.05+2 = 4.007 → 4; tan(0.5) → 13; tan(-1.0) → -29; tan(1.2) → 53 (test_quantized_ops.py)
    assert "[ 4, 13, -29, 53," in out, out
    assert "1 of 8 elements unchecked (any value)" in out, out   # quantize(NaN): the spec leaves it open
    assert "UNSUPPORTED: xla: quantized types:" in out and "UNSUPPORTED: interpreter: quantized types:" in out, out
    assert "REJECTED" not in out and "Traceback" not in out, out
    assert rc == 4, out   # no verdict on two of the three backends (README: exit codes of run)


def test_a_backend_one_storage_step_off_disagrees(program, capsys):
    rc = main(["run", str(program / "q.mlir"), "--inputs", str(program / "q.npz"),
               f"--backend={WRONG}:IreeOffByOne"])
    out = capsys.readouterr().out
    assert rc == 1, out
    assert list(read_verdicts(out).values()) == [["DISAGREES"]], out


EXPORT = Path(__file__).parent / "fixtures" / "quantized_export"


@pytest.mark.parametrize("name, iree", [("elementwise", "agrees"), ("mlp_per_tensor", "agrees"),
                                        ("mlp_per_channel", None)])
@pytest.mark.parametrize("form", ["mlir", pytest.param("mlirbc", marks=pytest.mark.long)])   # bytecode: test-long
def test_torch_xla_pt2e_exports_are_judged(name, iree, form, capsys):
    """Programs PyTorch's PT2E quantization and torch-xla 2.9.0 exported
    (tools/exporters/quantized_export.py; fixtures/quantized_export/README.md),
    text and portable artifact: the oracle judges each exactly (torch-xla's
    `result_layout`/`xla_shape` on transpose are discardable attributes), IREE
    agrees where it compiles; per-channel weights it refuses (a finding)."""
    rc = main(["run", str(EXPORT / f"{name}.{form}"), "--inputs", str(EXPORT / f"{name}.npz"), "--backend=iree,oracle"])
    out = capsys.readouterr().out
    assert "#0 tensor<" in out and ": exact" in out and "cannot judge" not in out, out
    if iree is None:
        assert "REJECTED" in out and rc == 1, out
    else:
        assert read_verdicts(out)["iree"] == [iree] and rc == 0, out


def test_a_quantized_program_on_a_grid_is_unsupported_with_its_reason():
    """The grid route says it too (all_gather's quantized cases run on
    process grids): unsupported with the reason, never a rejection."""
    from shlo_conform.backends.base import Unsupported
    from shlo_conform.backends.interpreter import InterpreterBackend
    from shlo_conform.backends.xla import XlaBackend
    from shlo_conform.spec.grid import Grid
    for backend in (XlaBackend(), InterpreterBackend()):
        with pytest.raises(Unsupported, match="quantized types"):
            backend.compile_grid(PROGRAM, Grid(2, 1))
