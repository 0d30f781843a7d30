"""Export small PT2E-quantized PyTorch models to StableHLO with torch-xla,
as a user of that exporter would, to give shlo-conform quantized programs
it did not write itself (test data for `shlo-conform run`).

Why this route: torch-xla's `exported_program_to_stablehlo` lowers the
`quantized_decomposed.{quantize,dequantize}_per_{tensor,channel}` ops that
PT2E's `convert_pt2e` leaves in the graph to `stablehlo.uniform_quantize`
/ `stablehlo.uniform_dequantize` with real `!quant.uniform` element types
(torch_xla/experimental/quantized.py emits a custom call, which torch-xla's
patched HLO->MHLO importer turns into the quant ops).  litert-torch's
odml_torch exporter, by contrast, keeps them as `stablehlo.custom_call
@odml_torch.uniform_quantize` with the type in a backend_config string
(litert_torch/backend/lowerings/_quantized_decomposed.py): no quant type in
the StableHLO it prints.

Run (needs the exporter's own venv, never the project's; envs/ is not
git-ignored here, so the venv lives outside the checkout):

    python3 -m venv /tmp/envs/quant-export
    /tmp/envs/quant-export/bin/pip install torch==2.9.0 torch_xla==2.9.0 numpy
    /tmp/envs/quant-export/bin/python tools/exporters/quantized_export.py [OUTDIR]

OUTDIR defaults to tests/cli/fixtures/quantized_export/.  For each model it
writes NAME.mlir (text), NAME.mlirbc (bytecode as torch-xla gives it),
NAME.npz (the @main arguments in order: arg0, arg1, ...; the lifted weights
come first, as torch-xla orders them) and NAME.torch_eager.npz (the PT2E
model's own result in PyTorch eager, `out0`: for reference only, not a truth
source; torch-xla cannot run its own quantized export on XLA:CPU).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("PJRT_DEVICE", "CPU")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch.ao.quantization.quantize_pt2e import convert_pt2e, prepare_pt2e  # noqa: E402
from torch.ao.quantization.quantizer.xnnpack_quantizer import (  # noqa: E402
    XNNPACKQuantizer,
    get_symmetric_quantization_config,
)
import torch_xla.experimental.quantized  # noqa: E402,F401  (registers the XLA Q/DQ lowerings)
from torch_xla.stablehlo import exported_program_to_stablehlo  # noqa: E402
from torch_xla.stablehlo import _extract_call_parameters  # noqa: E402

DEFAULT_OUT = Path(__file__).resolve().parents[2] / "tests" / "cli" / "fixtures" / "quantized_export"


class Mlp(torch.nn.Module):
    """Linear(4, 8) -> ReLU -> Linear(8, 3): the smallest 'real' model."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 8)
        self.fc2 = torch.nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class Elementwise(torch.nn.Module):
    """(x + y) * x: XNNPACKQuantizer annotates add and mul, so every tensor
    crosses a quantize/dequantize pair and nothing moves data."""

    def forward(self, x, y):
        return (x + y) * x


def _quantize(model: torch.nn.Module, example, calibration, per_channel: bool):
    """PT2E static post-training quantization, the documented flow:
    export -> prepare_pt2e -> calibrate -> convert_pt2e."""
    captured = torch.export.export(model.eval(), example).module()
    quantizer = XNNPACKQuantizer().set_global(
        get_symmetric_quantization_config(is_per_channel=per_channel))
    prepared = prepare_pt2e(captured, quantizer)
    with torch.no_grad():
        for batch in calibration:
            prepared(*batch)
    # fold_quantize=False: with the default (True) the weights become int8
    # constants feeding a lone dequantize, which torch-xla's HLO->MHLO
    # importer cannot type (pytorch/xla#6567: "HLO -> MHLO conversion
    # failed"); unfolded, each weight is a float parameter passed through
    # uniform_quantize -> uniform_dequantize, which it handles.
    return convert_pt2e(prepared, fold_quantize=False)


def export(name: str, model: torch.nn.Module, example, calibration, per_channel: bool, out: Path):
    """Quantize, export, write the four files; print the PT2E scales beside
    the text, because torch-xla prints each scale to 6 significant digits
    (0.019361650571227074 becomes 1.936170e-02): the exported program is
    not exactly the PyTorch model (README.md of the fixtures)."""
    quantized = _quantize(model, example, calibration, per_channel)
    exported = torch.export.export(quantized, example)
    program = exported_program_to_stablehlo(exported)
    text = program.get_stablehlo_text("forward")
    (out / f"{name}.mlir").write_text(text)
    (out / f"{name}.mlirbc").write_bytes(program.get_stablehlo_bytecode("forward"))
    meta = program._bundle.stablehlo_funcs[0].meta
    args = _extract_call_parameters(example, meta, program._bundle)
    arrays = {f"arg{i}": (a.detach().cpu().numpy() if isinstance(a, torch.Tensor) else np.asarray(a))
              for i, a in enumerate(args)}
    np.savez(out / f"{name}.npz", **arrays)
    with torch.no_grad():
        eager = quantized(*example)
    np.savez(out / f"{name}.torch_eager.npz", out0=eager.detach().cpu().numpy())
    print(f"== {name}: @main args", {k: (v.shape, v.dtype) for k, v in arrays.items()})
    for node in quantized.graph.nodes:   # the model's own scales, to set beside the printed types
        if node.op == "call_function" and "quantize_per_" in str(node.target) and "dequantize" not in str(node.target):
            scale, zero_point = node.args[1:3]
            print(f"   PT2E {node.target}: scale {scale!r} zero_point {zero_point!r}" if isinstance(scale, float)
                  else f"   PT2E {node.target}: scale/zero_point from {scale.name}/{zero_point.name}")
    print(f"   PT2E eager result (PyTorch's own Q/DQ arithmetic) {eager.numpy().ravel()}")
    try:   # torch-xla running its own export on XLA:CPU
        result = program(*example)
        print(f"   torch-xla result {result}")
    except RuntimeError as e:
        print(f"   torch-xla cannot run its own export: {str(e).splitlines()[:3]}")
    print(text)


def main(argv):
    out = Path(argv[1]) if len(argv) > 1 else DEFAULT_OUT
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    x = torch.randn(2, 4)
    calib = [(torch.randn(2, 4),) for _ in range(8)]
    export("mlp_per_tensor", Mlp(), (x,), calib, per_channel=False, out=out)
    torch.manual_seed(1)
    export("mlp_per_channel", Mlp(), (x,), calib, per_channel=True, out=out)
    a, b = torch.randn(8), torch.randn(8)
    calib2 = [(torch.randn(8), torch.randn(8)) for _ in range(8)]
    export("elementwise", Elementwise(), (a, b), calib2, per_channel=False, out=out)


if __name__ == "__main__":
    main(sys.argv)
