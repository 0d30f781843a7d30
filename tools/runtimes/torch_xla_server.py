"""torch-xla's StableHLO executor on PJRT CPU, over the command protocol:
`torch_xla._XLAC._run_stablehlo(artifact, tensors)`, the call
`torch_xla.stablehlo.StableHLOGraphModule.evaluate` makes to run a saved
StableHLO bundle.

Run under the `torch-xla-2.9.0` environment's Python (tools/runtimes/
build_env.py builds it from torch-xla-2.9.0/requirements.lock) with
PJRT_DEVICE=CPU (set here before torch_xla is imported, unless the caller
set it); imports nothing of the project (wire.py is the protocol).

What torch-xla takes is a StableHLO *portable artifact* (VHLO bytecode):
XLAGraphExecutor::ExecuteStablehlo calls `deserializePortableArtifact`, so
MLIR text is refused ("Dialect `func' not found"), and it reads StableHLO
v1.13.0 (the version its refusal names).  torch-xla has no Python binding
that writes one, so each program is made into one the way a producer does
before handing it over: parsed and verified by jaxlib 0.9.2's MLIR bindings
(an invalid program is `rejected` there), CHLO decomposed by jaxlib's
`chlo-legalize-to-stablehlo` (a portable artifact carries no CHLO: VHLO
versions StableHLO only), and `serialize_portable_artifact_str(text,
"1.13.0")` — a program that needs a later StableHLO than 1.13.0 cannot be
written for this reader and is `unsupported` with the serializer's reason.
jaxlib is used only for that conversion (no jax backend is made); every op
is then converted to HLO, compiled and run by torch-xla's own XLA
(ConvertStableHloToHlo, its PJRT CPU client).

`_run_stablehlo` compiles and runs in one call (torch-xla caches the
compiled computation by its hash), so XLA's own compile errors surface as
errors of the first run, never as `rejected`: the protocol's compile reply
is the verifier's and the serializer's.

Tensors cross as torch CPU tensors (`torch.from_numpy`, which torch-xla
moves to the XLA device); bf16 and the f8 formats torch has go as their
bit patterns viewed as the torch dtype, both ways.  Element types torch has
no dtype for (the 2-/4-bit integers, f4/f6, f8E3M4, f8E4M3, f8E4M3B11FNUZ)
and those torch-xla does not carry to the device and back (the FNUZ f8s and
f8E8M0FNU are refused; complex128 loses its imaginary part) are declared in
`claims`.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from wire import (Rejected, RunFailed, Server, Unsupported, claim_stdout, has_quantized, one_line,  # noqa: E402
                  parse_tensor_type, serve)
from jaxlib_server import jaxlib_context, legalize_chlo, parse_verified  # noqa: E402  (the same jaxlib 0.9.2 in this environment)

import numpy as np  # noqa: E402

# torch-xla 2.9.0's reader: "failed to deserialize portable artifact using StableHLO_v1.13.0".
TARGET = "1.13.0"

# MLIR element -> (torch dtype name, the numpy dtype whose buffer torch.from_numpy takes, or None when the
# numpy dtype is torch's own).  ml_dtypes formats travel as same-width integers viewed as the torch dtype.
_TORCH = {
    "i1": ("bool", None), "i8": ("int8", None), "i16": ("int16", None), "i32": ("int32", None),
    "i64": ("int64", None), "ui8": ("uint8", None), "ui16": ("uint16", None), "ui32": ("uint32", None),
    "ui64": ("uint64", None), "f16": ("float16", None), "f32": ("float32", None), "f64": ("float64", None),
    "complex<f32>": ("complex64", None), "complex<f64>": ("complex128", None),
    "bf16": ("bfloat16", "int16"), "f8E4M3FN": ("float8_e4m3fn", "uint8"), "f8E5M2": ("float8_e5m2", "uint8"),
    "f8E4M3FNUZ": ("float8_e4m3fnuz", "uint8"), "f8E5M2FNUZ": ("float8_e5m2fnuz", "uint8"),
    "f8E8M0FNU": ("float8_e8m0fnu", "uint8"),
}
# Spec names of the element types no torch dtype holds (wire.py's list less _TORCH's keys).
_NO_TORCH_DTYPE = ("si2", "si4", "ui2", "ui4", "f4E2M1FN", "f6E2M3FN", "f6E3M2FN", "f8E3M4", "f8E4M3",
                   "f8E4M3B11FNUZ")
# Torch dtypes torch-xla 2.9.0 does not carry to the XLA device and back, probed with this server on an
# identity program (`return %a`) — a transfer fault would fail every case of the type whatever the op did.
_NOT_TRANSFERRED = {
    "f8E4M3FNUZ": "torch-xla 2.9.0 refuses the dtype (\"Type not supported: Float8_e4m3fnuz\")",
    "f8E5M2FNUZ": "torch-xla 2.9.0 refuses the dtype (\"Type not supported: Float8_e5m2fnuz\")",
    "f8E8M0FNU": "torch-xla 2.9.0 refuses the dtype (\"Type not supported: Float8_e8m0fnu\")",
    "complex<f64>": "torch-xla 2.9.0 drops the imaginary part of a complex128 tensor moved to the XLA device "
                    "(torch.tensor([1+2j], dtype=torch.complex128).to(xla).cpu() is 1+0j)",
}


class _Program:
    def __init__(self, artifact, args, results):
        self.artifact = artifact
        self.args = args
        self.results = results


def _versions() -> str:
    import jaxlib
    import torch
    import torch_xla

    return f"torch {torch.__version__}, torch-xla {torch_xla.__version__} (artifacts by jaxlib {jaxlib.__version__})"


class TorchXlaServer(Server):
    def __init__(self):
        os.environ.setdefault("PJRT_DEVICE", "CPU")
        from jaxlib.mlir import ir
        from jaxlib.mlir.dialects import stablehlo
        import torch
        import torch_xla
        import torch_xla.runtime as xr

        try:
            import _XLAC
        except ImportError:   # the extension's place in later releases
            from torch_xla import _XLAC
        self._ir, self._stablehlo = ir, stablehlo
        self._torch, self._xla, self._run = torch, torch_xla, _XLAC._run_stablehlo
        self._device_type = xr.device_type()

    def describe(self) -> str:
        flags = os.environ.get("XLA_FLAGS", "").strip()
        return (f"torch_xla._XLAC._run_stablehlo on PJRT {self._device_type} via {_versions()}; "
                f"PJRT_DEVICE={os.environ.get('PJRT_DEVICE')}, XLA_FLAGS={flags or 'unset'}, torch-xla's default "
                f"client options; portable artifact StableHLO {TARGET}, CHLO decomposed by jaxlib "
                f"(python {sys.version.split()[0]})")

    def unsupported(self) -> list[dict]:
        out = [{"op": "*", "dtype": d, "reason": "torch has no dtype for it (tensors cross as torch tensors)"}
               for d in _NO_TORCH_DTYPE]
        out += [{"op": "*", "dtype": d, "reason": r} for d, r in _NOT_TRANSFERRED.items()]
        return out

    def compile(self, mlir: str):
        if has_quantized(mlir):
            raise Unsupported("quantized types: jaxlib's Python bindings, which write the artifact, register "
                              "no quant dialect")
        ir = self._ir
        with jaxlib_context(), ir.Location.unknown():
            module = parse_verified(mlir, ir)
            main = next((op for op in module.body.operations if op.operation.name == "func.func"
                         and ir.StringAttr(op.attributes["sym_name"]).value == "main"), None)
            if main is None:
                raise Rejected("no @main function in the module")
            ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
            args = [self._carried(t, "argument") for t in ftype.inputs]
            results = [self._carried(t, "result") for t in ftype.results]
            legalize_chlo(module, ir)   # torch-xla reads no CHLO: jaxlib's decomposition (jaxlib_server)
            text = module.operation.get_asm()
        try:
            artifact = self._stablehlo.serialize_portable_artifact_str(text, TARGET)
        except Exception as e:
            raise Unsupported(f"no StableHLO {TARGET} portable artifact holds this program "
                              f"(serializer: {one_line(str(e))})") from None
        return _Program(artifact, args, results)

    def _carried(self, t, what):
        try:
            tt = parse_tensor_type(str(t))
        except ValueError as e:
            raise Unsupported(f"@main {what} of type {t}: {e}") from None
        if tt.element not in _TORCH:
            raise Unsupported(f"@main {what} of type {t}: torch has no dtype for {tt.element}")
        if tt.element in _NOT_TRANSFERRED:   # claimed by the case's type only: a convert's result is another's
            raise Unsupported(f"@main {what} of type {t}: {_NOT_TRANSFERRED[tt.element]}")
        return tt

    def _to_torch(self, a: np.ndarray, t):
        name, carrier = _TORCH[t.element]
        a = np.ascontiguousarray(a.reshape(t.shape))
        if carrier is None:
            return self._torch.from_numpy(a.copy())
        return self._torch.from_numpy(a.view(np.dtype(carrier)).copy()).view(getattr(self._torch, name))

    def _from_torch(self, x, t) -> np.ndarray:
        name, carrier = _TORCH[t.element]
        x = x.cpu()
        if carrier is None:
            return np.array(x.numpy(), copy=True)
        return np.array(x.view(getattr(self._torch, carrier)).numpy(), copy=True).view(t.dtype)

    def run(self, program, inputs):
        tensors = [self._to_torch(a, t) for a, t in zip(inputs, program.args)]
        try:
            outs = self._run(program.artifact, tensors)
        except Exception as e:   # conversion to HLO, XLA's compile and the run itself alike
            raise RunFailed(one_line(str(e))) from None
        return [self._from_torch(o, t) for o, t in zip(outs, program.results)]


def main(argv=None) -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    os.environ.setdefault("PJRT_DEVICE", "CPU")
    claim_stdout()
    return serve(TorchXlaServer)


if __name__ == "__main__":
    sys.exit(main())
