"""XLA on CPU through jaxlib's PJRT client, compiled exactly as `jax.jit` compiles.

The program text is parsed into an MLIR module in JAX's own context
(`jax._src.interpreters.mlir.make_ir_context`) and compiled through JAX's
own code path: the `CompileOptions` come from
`jax._src.interpreters.pxla.create_compile_options` (which calls
`jax._src.compiler.get_compile_options` with the flags JAX reads) for one
replica and one partition on one CPU device, sharding propagation allowed
as for unspecified shardings, and the module goes to
`jax._src.compiler.backend_compile_and_load` — the call `jax.jit` makes on a
cache miss.  Nothing is copied from JAX: a JAX upgrade that changes its
options changes ours.  `tests/backends/test_xla_as_jit.py` holds the
optimised HLO of a cross-check set of JAX programs equal to `jax.jit`'s and
their outputs bit for bit equal.

Why it matters: `client.compile_and_load(text, devices)` with no options
(what this adapter did before) compiles with other DebugOptions defaults —
it behaves as `xla_cpu_enable_fast_min_max=true`: maximum(-0, +0) gave -0
and NaNs were lost in max/min reductions, where `jax.jit` gives +0 and
propagates the NaN.  Scoring that configuration blamed XLA for an
adapter's choice (docs/findings.md, "The adapter's compile options").

Another configuration is scored only when named: `xla:KEY=VALUE,…`
(`backends.base.backend_config`) passes XLA options as JAX's
`compiler_options` do (`jax.jit(f).lower(x).compile({KEY: VALUE})`:
`env_options_overrides`), e.g. `--backend=xla:xla_cpu_enable_fast_min_max=true`.
The name, with its configuration, is in the results, the HTML and the
journal's key; `describe()` states the options.

Inputs go in as device buffers, outputs come back with np.asarray.  Every
element type of the spec crosses the boundary as its ml_dtypes/numpy array:
int4/uint4, f8E4M3FN, f8E5M2 and bf16 included.  Trap: jax's `device_put`
canonicalises 64-bit arrays to 32 bits unless x64 is enabled, so inputs are
placed under `jax.enable_x64(True)` (a context manager: nothing is changed
for the rest of the process).

XLA:CPU uses its own polynomial approximations for transcendental functions
(exp, log, tanh, ...) regardless of fast-math, and runs computations with
denormals flushed to zero: observed with jaxlib 0.10.2, f32 1e-40 + 0 -> 0
(ftz/daz; no DebugOptions knob for it).  Both are XLA behaviour under
test, as `jax.jit` users get it.  XLA_FLAGS from the environment are
honoured as JAX honours them (the runner does not set any).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .base import Backend, Rejected
from .diagnostics import one_line


class XlaBackend(Backend):
    name = "xla"
    batches = True  # one compile for many cases (shlo_conform/batching.py)
    configurable = True  # xla:KEY=VALUE — XLA options, as jax.jit's compiler_options
    preload = ("jax", "jaxlib.lapack", "jax._src.interpreters.pxla")   # imported by the zygote; clients per worker
    host_unsupported = ("jaxlib's PJRT client has no infeed/outfeed transfer API (no Device.transfer_to_infeed / "
                        "transfer_from_outfeed in jaxlib 0.10.2): infeed and outfeed compile and then wait for the "
                        "host forever; send and recv are UNIMPLEMENTED by XLA:CPU's ThunkEmitter")

    def __init__(self, config: dict | None = None, **options):
        import jax  # deferred: importing jax is slow and only this worker needs it

        self._jax = jax
        self._device = jax.devices("cpu")[0]
        self._client = self._device.client
        self.config = dict(config or {})
        _register_lapack_targets()
        if self.config:   # options XLA does not know are refused here, once, not case by case
            try:
                self.compile(_PROBE)
            except Rejected as e:
                raise ValueError(f"xla: configuration {self.config} refused: {e}") from None

    def describe(self) -> str:
        import jaxlib

        opts = ", ".join(f"{k}={v}" for k, v in self.config.items())
        how = f"jax.jit's compile options plus {opts}" if opts else "jax.jit's compile options"
        return f"XLA:CPU via jaxlib {jaxlib.__version__} (PJRT {self._client.platform_version}; {how})"

    def compile_options(self, module, n_args: int, n_results: int):
        """The CompileOptions `jax.jit` makes for `module` on one CPU device
        (module docstring), with this adapter's configuration as JAX's
        `compiler_options`."""
        from jax._src.interpreters import pxla

        devices = np.array([self._device], dtype=object)
        return pxla.create_compile_options(module, False, (True,) * n_args, (True,) * n_results,
                                           self._client, devices, dict(self.config))

    def compile(self, mlir: str) -> Any:
        from jax._src import compiler
        from jax._src.interpreters import mlir as jax_mlir
        from jax._src.lib import xla_client
        from jax._src.lib.mlir import ir

        try:
            with jax_mlir.make_ir_context():
                module = ir.Module.parse(mlir)
                if "sym_name" not in module.operation.attributes:   # JAX's modules are named (`module @jit_f`)
                    module.operation.attributes["sym_name"] = ir.StringAttr.get("main")
                n_args, n_results = _main_arity(module)
                options = self.compile_options(module, n_args, n_results)
                return compiler.backend_compile_and_load(self._client, module, xla_client.DeviceList((self._device,)),
                                                         options, [])
        except Exception as e:  # parse, verify, legalisation and compile errors alike
            raise Rejected(one_line(str(e))) from None

    def run(self, executable: Any, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        jax = self._jax
        with jax.enable_x64(True):
            bufs = [jax.device_put(np.ascontiguousarray(a), self._device) for a in inputs]
        outs = executable.execute(bufs)
        return [np.array(np.asarray(o), copy=True) for o in outs]


_PROBE = """func.func @main(%a: tensor<f32>) -> tensor<f32> {
  return %a : tensor<f32>
}"""


def _main_arity(module) -> tuple[int, int]:
    """(arguments, results) of the module's entry function (@main, or the
    only public function): what `jax.jit` allows sharding propagation for."""
    from jax._src.lib.mlir import ir

    funcs = [op for op in module.body.operations if op.operation.name == "func.func"]
    main = next((f for f in funcs if ir.StringAttr(f.attributes["sym_name"]).value == "main"), None)
    main = main if main is not None else (funcs[0] if len(funcs) == 1 else None)
    if main is None:
        raise ValueError("the module has no @main function")
    ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    return len(ftype.inputs), len(ftype.results)


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
