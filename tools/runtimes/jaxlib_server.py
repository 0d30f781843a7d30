"""A jaxlib release other than the project's, over the command protocol:
XLA:CPU compiled as that release's `jax.jit` compiles (`--engine=xla`), or
the StableHLO reference interpreter it ships (`--engine=interpreter`).

Run under the other environment's Python (tools/runtimes/build_env.py
builds `.envs/jaxlib-0.9.2`); imports nothing of the project (wire.py, beside
it, is the protocol).  What the project's adapters do for jaxlib 0.10.2 is
done here the same way, so a verdict that differs between the two is the
release's, not the adapters':

* xla (backends/xla.py): the text parsed in JAX's own context
  (`jax._src.interpreters.mlir.make_ir_context`), CompileOptions from
  `pxla.create_compile_options` — the call `jax.jit` makes on a cache miss,
  with the arguments this release's jit passes (0.9.2's signature still has
  `mesh`, `spmd_lowering=True`, `auto_spmd_lowering=False`, `pmap_nreps=1`;
  read from the function's own signature, so 0.10's shorter one works too),
  sharding propagation allowed as for unspecified shardings — then
  `compiler.backend_compile_and_load`.  Inputs are placed under
  `jax.enable_x64(True)` (device_put narrows 64-bit arrays otherwise), and
  jaxlib's LAPACK targets are registered as JAX registers them.
  `--option KEY=VALUE` passes XLA options as `compiler_options` do
  (`xla:KEY=VALUE` in the project).
* interpreter (backends/interpreter.py): parse, verify, CHLO legalized by
  jaxlib's `chlo-legalize-to-stablehlo`, and `eval_module`; inputs as
  `dense<"0x…">` attributes of their raw bits.  Results that jaxlib's
  Python bindings cannot read back (complex, bf16 and the f8 formats, 2-
  and 4-bit integers, f4/f6) cross through the same boundary shim as the
  project's adapter: @main renamed and called by a new @main that returns
  them through exact carrier ops (real/imag, bitcast_convert to the integer
  of the width, convert to 8-bit integers or to f16, which holds every f4
  and f6 value).  The ops the project's adapter declares because they
  abort the process with jaxlib 0.10.2 are declared here too (probed on
  0.10.2, not on this release: a declared op is never sent, so an abort
  cannot be told from a fix — the claims say so).
"""
from __future__ import annotations

import argparse
import inspect
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from wire import (Rejected, RunFailed, Server, Unsupported, claim_stdout, encode, has_quantized, one_line,  # noqa: E402
                  parse_tensor_type, serve)

import numpy as np  # noqa: E402


class _Program:
    def __init__(self, handle, results, **extra):
        self.handle = handle
        self.results = results          # @main's result TensorTypes (the program's own, before any shim)
        self.__dict__.update(extra)


_PASSES_REGISTERED: list = []   # jaxlib's StableHLO passes, registered once per process


def jaxlib_context():
    """An MLIR context as jax's make_ir_context builds it (func and the
    upstream dialects jaxlib registers, then StableHLO and CHLO), without
    importing jax: for the servers whose environment has jaxlib's bindings
    but not jax (torch-xla's, TensorFlow's)."""
    from jaxlib.mlir import ir
    from jaxlib.mlir._mlir_libs import _jax_mlir_ext
    from jaxlib.mlir.dialects import chlo, stablehlo

    ctx = ir.Context()
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    ctx.append_dialect_registry(registry)
    ctx.load_all_available_dialects()
    stablehlo.register_dialect(ctx)
    chlo.register_dialect(ctx)
    return ctx


def parse_verified(mlir: str, ir):
    """`mlir` parsed and verified in the current context (`jaxlib_context`);
    Rejected with MLIR's diagnostic on one line."""
    try:
        module = ir.Module.parse(mlir)
        module.operation.verify()
    except Exception as e:
        raise Rejected(one_line(str(e))) from None
    return module


def legalize_chlo(module, ir) -> None:
    """CHLO in `module` decomposed in place by jaxlib's own
    chlo-legalize-to-stablehlo (what the interpreter, and torch-xla's
    portable artifact, need: neither reads CHLO); Unsupported where a CHLO
    op has no decomposition."""
    if "chlo." not in module.operation.get_asm(print_generic_op_form=True):
        return
    from jaxlib.mlir import passmanager
    import jaxlib.mlir._mlir_libs._stablehlo as shlo

    if not _PASSES_REGISTERED:
        shlo.register_stablehlo_passes()
        _PASSES_REGISTERED.append(True)
    pm = passmanager.PassManager.parse("builtin.module(func.func(chlo-legalize-to-stablehlo))")
    try:
        pm.run(module.operation)
    except ir.MLIRError as e:
        raise Unsupported(f"CHLO without a StableHLO decomposition: {one_line(str(e))}") from None


def _main_func(module, ir):
    funcs = [op for op in module.body.operations if op.operation.name == "func.func"]
    main = next((f for f in funcs if ir.StringAttr(f.attributes["sym_name"]).value == "main"), None)
    if main is None:
        raise Rejected("no @main function in the module")
    return main


def _signature(main, ir) -> tuple[list, list]:
    """@main's (argument, result) types as wire TensorTypes; Unsupported for
    a type the protocol does not carry (a token, a tuple, a dynamic shape)."""
    ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)

    def one(t, what):
        try:
            return parse_tensor_type(str(t))
        except ValueError as e:
            raise Unsupported(f"@main {what} of type {t}: {e}") from None
    return [one(t, "argument") for t in ftype.inputs], [one(t, "result") for t in ftype.results]


def _versions() -> str:
    import jax
    import jaxlib
    return f"jax {jax.__version__}, jaxlib {jaxlib.__version__}"


# --------------------------------------------------------------------------- XLA
# The arguments jax.jit gives pxla.create_compile_options for one device and no sharding, by name; those of
# the program (computation, allow_prop_*, backend, np_dev, compiler_options) are filled per program.  jax 0.9's
# extra parameters are as its jit passes them (pxla.lower_sharding_computation: spmd_lowering=True, no mesh,
# no auto-sharding, one pmap replica); jax 0.10 dropped them.
_JIT_ARGUMENTS = dict(computation=None, tuple_args=False, allow_prop_to_inputs=None, allow_prop_to_outputs=None,
                      backend=None, np_dev=None, compiler_options=None,
                      mesh=None, spmd_lowering=True, auto_spmd_lowering=False, pmap_nreps=1)


class XlaServer(Server):
    def __init__(self, options: dict):
        import jax
        from jax._src.interpreters import mlir as jax_mlir  # noqa: F401  (loaded before the first compile)

        self._jax = jax
        self._device = jax.devices("cpu")[0]
        self._client = self._device.client
        self._options = options
        from jax._src.interpreters import pxla
        self._option_params = list(inspect.signature(pxla.create_compile_options).parameters)
        unknown = [p for p in self._option_params if p not in _JIT_ARGUMENTS]
        if unknown:   # a jax whose jit passes arguments this server does not know: refuse to start, not guess
            raise RuntimeError(f"pxla.create_compile_options takes {unknown}, which this server does not know")
        try:   # jaxlib's LAPACK custom-call targets, registered as JAX registers them (backends/xla.py)
            from jaxlib.lapack import _lapack
            _lapack.initialize()
        except (ImportError, AttributeError):
            pass

    def describe(self) -> str:
        opts = ", ".join(f"{k}={v}" for k, v in self._options.items())
        how = f"jax.jit's compile options plus {opts}" if opts else "jax.jit's compile options"
        return (f"XLA:CPU via {_versions()} (PJRT {self._client.platform_version}; {how}; "
                f"python {sys.version.split()[0]})")

    def compile_options(self, module, n_args: int, n_results: int):
        """The CompileOptions this release's jax.jit makes for one CPU device."""
        from jax._src.interpreters import pxla

        given = dict(_JIT_ARGUMENTS, computation=module, allow_prop_to_inputs=(True,) * n_args,
                     allow_prop_to_outputs=(True,) * n_results, backend=self._client,
                     np_dev=np.array([self._device], dtype=object), compiler_options=dict(self._options))
        return pxla.create_compile_options(**{p: given[p] for p in self._option_params})

    def compile(self, mlir: str):
        if has_quantized(mlir):
            raise Unsupported("quantized types: XLA translates no quant op to HLO (as the project's xla adapter)")
        from jax._src import compiler
        from jax._src.interpreters import mlir as jax_mlir
        from jax._src.lib import xla_client
        from jax._src.lib.mlir import ir

        try:
            with jax_mlir.make_ir_context():
                module = ir.Module.parse(mlir)
                if "sym_name" not in module.operation.attributes:
                    module.operation.attributes["sym_name"] = ir.StringAttr.get("main")
                main = _main_func(module, ir)
                args, results = _signature(main, ir)
                options = self.compile_options(module, len(args), len(results))
                loaded = compiler.backend_compile_and_load(self._client, module,
                                                           xla_client.DeviceList((self._device,)), options, [])
        except (Rejected, Unsupported):
            raise
        except Exception as e:   # parse, verify, legalisation and compile errors alike
            raise Rejected(one_line(str(e))) from None
        return _Program(loaded, results, args=args)

    def run(self, program, inputs):
        jax = self._jax
        with jax.enable_x64(True):
            bufs = [jax.device_put(np.array(a, order="C"), self._device) for a in inputs]
        outs = program.handle.execute(bufs)
        return [np.array(np.asarray(o), copy=True) for o in outs]


# --------------------------------------------------------------------------- interpreter
_INNER = "__shlo_main"
# What backends/interpreter.py declares for jaxlib 0.10.2 (each aborts the process there).
_ABORTS = [("custom_call", "*", "has no custom_call (\"LLVM ERROR: Unsupported op\"; probed on jaxlib 0.10.2)")] + [
    (op, "*", f"does not implement {op} (openxla/stablehlo#1571; the process aborts; probed on jaxlib 0.10.2)")
    for op in ("cholesky", "batch_norm_inference", "batch_norm_training", "batch_norm_grad", "rng",
               "rng_bit_generator")] + [
    ("fft", d, "aborts on f32 / complex<f32> fft (\"Semantics mismatch\"; probed on jaxlib 0.10.2)")
    for d in ("f32", "complex<f32>")] + [
    (op, "*", "runs only inside interpreter.run_parallel, which this server does not build (no grids)")
    for op in ("all_gather", "all_reduce", "all_to_all", "collective_broadcast", "collective_permute",
               "reduce_scatter", "replica_id", "partition_id")]
_NATIVE = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64")


def _carried(t):
    """How a result of TensorType `t` comes back: ("native", t), ("complex", component type),
    ("bits", integer of the width) or ("widen", an exact wider type)."""
    from wire import TensorType, element_bits

    e = t.element
    if e.startswith("complex<"):
        return "complex", TensorType(t.shape, e[len("complex<"):-1])
    if t.dtype.name in _NATIVE:
        return "native", t
    bits = element_bits(e)
    if e.startswith("f") or e == "bf16":
        if bits >= 8:
            return "bits", TensorType(t.shape, f"i{bits}")
        return "widen", TensorType(t.shape, "f16")   # f4E2M1FN, f6E2M3FN, f6E3M2FN: every value exact in f16
    return "widen", TensorType(t.shape, "ui8" if e.startswith("ui") else "i8")


class InterpreterServer(Server):
    def __init__(self, options: dict):
        from jax._src.interpreters import mlir as jm
        from jaxlib.mlir import ir
        from jaxlib.mlir.dialects import stablehlo

        self._ir, self._stablehlo = ir, stablehlo
        self._ctx = jm.make_ir_context()

    def describe(self) -> str:
        return (f"StableHLO reference interpreter (stablehlo {self._stablehlo.get_current_version()}) via "
                f"{_versions()} (python {sys.version.split()[0]})")

    def unsupported(self) -> list[dict]:
        return [{"op": op, "dtype": d, "reason": r} for op, d, r in _ABORTS]

    def _legalize_chlo(self, module) -> None:
        legalize_chlo(module, self._ir)

    def compile(self, mlir: str):
        if has_quantized(mlir):
            raise Unsupported("quantized types: jaxlib's Python bindings register no quant dialect")
        ir = self._ir
        with self._ctx, ir.Location.unknown():
            module = parse_verified(mlir, ir)
            self._legalize_chlo(module)
            main = _main_func(module, ir)
            args, results = _signature(main, ir)
            plans = [_carried(t) for t in results]
            if any(a.element.startswith("complex<") for a in args) or any(h != "native" for h, _ in plans):
                module = self._shim(module, main, args, results, plans)
        return _Program(module, results, args=args, plans=plans)

    def _shim(self, module, main, args, results, plans):
        """@main renamed and called by a new @main whose arguments and results
        all cross jaxlib's bindings (module docstring)."""
        ir = self._ir
        main.attributes["sym_name"] = ir.StringAttr.get(_INNER)
        main.attributes["sym_visibility"] = ir.StringAttr.get("private")
        params, body, call = [], [], []
        for i, t in enumerate(args):
            if t.element.startswith("complex<"):
                comp = _carried(t)[1].mlir
                params += [f"%a{i}re: {comp}", f"%a{i}im: {comp}"]
                body.append(f"%a{i} = stablehlo.complex %a{i}re, %a{i}im : {t.mlir}")
            else:
                params.append(f"%a{i}: {t.mlir}")
            call.append(f"%a{i}")
        n = len(results)
        sig = f"({', '.join(t.mlir for t in args)}) -> ({', '.join(t.mlir for t in results)})"
        body.append((f"%r:{n} = " if n else "") + f"func.call @{_INNER}({', '.join(call)}) : {sig}")
        rets, types = [], []
        for i, (t, (how, carrier)) in enumerate(zip(results, plans)):
            src = f"%r#{i}"
            if how == "native":
                rets.append(src)
                types.append(t.mlir)
            elif how == "complex":
                body.append(f"%o{i}re = stablehlo.real {src} : ({t.mlir}) -> {carrier.mlir}")
                body.append(f"%o{i}im = stablehlo.imag {src} : ({t.mlir}) -> {carrier.mlir}")
                rets += [f"%o{i}re", f"%o{i}im"]
                types += [carrier.mlir, carrier.mlir]
            else:
                op = "bitcast_convert" if how == "bits" else "convert"
                body.append(f"%o{i} = stablehlo.{op} {src} : ({t.mlir}) -> {carrier.mlir}")
                rets.append(f"%o{i}")
                types.append(carrier.mlir)
        body.append(f"return {', '.join(rets)} : {', '.join(types)}" if rets else "return")
        wrapper = f"func.func @main({', '.join(params)}) -> ({', '.join(types)}) {{\n  " + "\n  ".join(body) + "\n}\n"
        ops = "\n".join(op.operation.get_asm(print_generic_op_form=True) for op in module.body.operations)
        try:
            shimmed = ir.Module.parse("module {\n" + ops + "\n" + wrapper + "}\n")
            shimmed.operation.verify()
        except Exception as e:   # a fault of the shim, not the runtime's refusal
            raise RuntimeError(f"boundary shim failed: {one_line(str(e))}") from None
        return shimmed

    def _attribute(self, a: np.ndarray, t):
        return self._ir.Attribute.parse(f'dense<"0x{encode(a, t)["hex"].upper()}"> : {t.mlir}')

    def run(self, program, inputs):
        ir = self._ir
        with self._ctx, ir.Location.unknown():
            attrs = []
            for a, t in zip(inputs, program.args):
                if t.element.startswith("complex<"):
                    comp = _carried(t)[1]
                    attrs += [self._attribute(np.ascontiguousarray(a.real), comp),
                              self._attribute(np.ascontiguousarray(a.imag), comp)]
                else:
                    attrs.append(self._attribute(a, t))
            try:
                outs = self._stablehlo.eval_module(program.handle, attrs)
            except Exception as e:
                raise RunFailed(one_line(str(e))) from None
            results, k = [], 0
            for t, (how, carrier) in zip(program.results, program.plans):
                if how == "complex":
                    c = np.empty(t.shape, t.dtype)
                    c.real, c.imag = _read(outs[k], t.shape), _read(outs[k + 1], t.shape)
                    results.append(c)
                    k += 2
                    continue
                value = _read(outs[k], t.shape)
                if how == "bits":
                    value = value.view(t.dtype)
                elif how == "widen":   # exact: f16 holds every f4/f6 value, i8/ui8 every 2- and 4-bit integer
                    value = value.astype(t.dtype)
                results.append(value)
                k += 1
            return results


def _read(attr, shape) -> np.ndarray:
    """A result attribute as an array of `shape` (a splat holds one value)."""
    a = np.array(attr)
    n = int(np.prod(shape, dtype=np.int64))
    if a.size != n and a.size == 1:
        a = np.broadcast_to(a.reshape(()), shape)
    return np.array(a.reshape(shape), copy=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", choices=("xla", "interpreter"), default="xla")
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="an XLA option, as jax.jit's compiler_options (xla engine only)")
    a = ap.parse_args(argv)
    options = {}
    for kv in a.option:
        k, _, v = kv.partition("=")
        low = v.lower()
        options[k] = low == "true" if low in ("true", "false") else (int(v) if v.lstrip("-").isdigit() else v)
    claim_stdout()
    make = (lambda: XlaServer(options)) if a.engine == "xla" else (lambda: InterpreterServer(options))
    return serve(make)


if __name__ == "__main__":
    sys.exit(main())
