"""XLA on CPU through jaxlib's PJRT client.

The program text goes to `client.compile_and_load(text, devices)` as it is
(PJRT parses the StableHLO, verifies it, lowers it to HLO and compiles it for
the host); inputs go in as device buffers, outputs come back with np.asarray.

Every element type of the spec crosses the boundary as its ml_dtypes/numpy
array: int4/uint4, f8E4M3FN, f8E5M2 and bf16 included.  Trap: jax's
`device_put` canonicalises 64-bit arrays to 32 bits unless x64 is enabled, so
inputs are placed under `jax.enable_x64(True)` (a context manager: nothing is
changed for the rest of the process).

Float accuracy knobs of XLA:CPU (DebugOptions, as this jaxlib reports them;
we keep every default):
    xla_cpu_enable_fast_math            False
    xla_cpu_fast_math_honor_nans/infs   True
    xla_cpu_fast_math_honor_division    True
    xla_cpu_fast_math_honor_functions   True
    xla_backend_optimization_level      3
XLA:CPU still uses its own polynomial approximations for transcendental
functions (exp, log, tanh, ...) regardless of fast-math, and the PJRT CPU
client runs computations with denormals flushed to zero: observed with
jaxlib 0.10.2, f32 1e-40 + 0 -> 0 and 1e-40 + 1e-40 -> 0 (ftz/daz; no
DebugOptions knob for it).  Both are XLA behaviour under test, not adapter
settings.  XLA_FLAGS from the
environment are honoured as usual (the runner does not set any).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .base import Backend, Rejected
from ._mlir import one_line


class XlaBackend(Backend):
    name = "xla"
    batches = True  # one compile for many cases (shlo_conform/batching.py)
    preload = ("jax", "jaxlib.lapack")   # imported by the zygote; the PJRT client is made per worker
    host_unsupported = ("jaxlib's PJRT client has no infeed/outfeed transfer API (no Device.transfer_to_infeed / "
                        "transfer_from_outfeed in jaxlib 0.10.2): infeed and outfeed compile and then wait for the "
                        "host forever; send and recv are UNIMPLEMENTED by XLA:CPU's ThunkEmitter")

    def __init__(self, **options):
        import jax  # deferred: importing jax is slow and only this worker needs it

        self._jax = jax
        self._device = jax.devices("cpu")[0]
        self._client = self._device.client
        _register_lapack_targets()

    def describe(self) -> str:
        import jaxlib

        return f"XLA:CPU via jaxlib {jaxlib.__version__} (PJRT {self._client.platform_version})"

    def compile(self, mlir: str) -> Any:
        try:
            return self._client.compile_and_load(mlir, self._client.devices()[:1])
        except Exception as e:  # parse, verify, legalisation and compile errors alike
            raise Rejected(one_line(str(e))) from None

    def run(self, executable: Any, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        jax = self._jax
        with jax.enable_x64(True):
            bufs = [jax.device_put(np.ascontiguousarray(a), self._device) for a in inputs]
        outs = executable.execute(bufs)
        return [np.array(np.asarray(o), copy=True) for o in outs]


def _register_lapack_targets() -> None:
    """jaxlib registers its LAPACK custom-call targets (`lapack_spotrf_ffi`,
    … — typed FFI handlers in XLA:CPU's registry) only when JAX itself
    lowers a linalg op; a program compiled from text calling them finds
    empty function pointers and segfaults.  Filling the table once, as
    JAX does, makes them what XLA:CPU offers (custom_call's registry,
    spec/custom_targets.py)."""
    try:
        from jaxlib.lapack import _lapack
        _lapack.initialize()
    except (ImportError, AttributeError):   # another jaxlib layout: the cases then show what happens
        pass
