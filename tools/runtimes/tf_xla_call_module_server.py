"""TensorFlow's XlaCallModule, over the command protocol: a StableHLO
program run the way jax2tf runs an exported JAX function.

Run under `.envs/tf-2.21.0/bin/python` (tools/runtimes/build_env.py);
imports nothing of the project (wire.py, beside it, is the protocol).

What a jax2tf user's program goes through, and what this server does
(jax 0.9.2's `jax2tf._run_exported_as_tf` and `export._module_to_bytecode`):

1. CHLO decomposed into StableHLO (VHLO, the artifact's dialect, has no
   CHLO: jax.export's serializer, XLA's SerializeUsingVersionedStablehlo,
   runs chlo-legalize-to-stablehlo first), here by jaxlib 0.9.2's own pass
   (`without_chlo`: jaxlib is in this environment, as jax is beside TF in
   a jax2tf user's; TF's bindings register no such pass), then
   serialized as a StableHLO portable artifact
   (`stablehlo.serialize_portable_artifact`).  jax.export targets the
   StableHLO version four weeks older than its own; here the producer and
   the consumer are the same TensorFlow, so the artifact targets TF's own
   current version (`get_current_version`).  TF ships only the string API
   (`serialize_portable_artifact_str`: parse the text, verify, write VHLO);
   a program it cannot parse or verify is rejected with the diagnostic
   MLIR printed (captured from fd 2: the Python exception says only
   "failed to serialize module").
2. called through `tensorflow.compiler.tf2xla.python.xla.call_module` with
   `version` = jax's calling convention (10, jax 0.9.2's default, which is
   TF 2.21's maximum), `Tout`/`Sout` from @main's result types,
   `platforms=("CPU",)`, no disabled checks, `use_shardy_partitioner` as
   jax 0.9.2 configures it (True), `has_token_input_output=False` —
   inside `tf.function(jit_compile=True)`, which compiles the whole
   function with XLA:CPU (the tf2xla bridge legalizes the call's StableHLO).
3. compile: the function traced for @main's argument types and lowered
   once through the bridge (`experimental_get_compiler_ir(...)(stage="hlo")`),
   so a program the bridge refuses is `rejected` at compile as on the other
   backends; XLA:CPU's own compilation happens on the first run (TF caches
   it), and its time is counted there.

Element types: TensorFlow 2.21 has dtypes for every element type of the
seed spec and for v1.20's si2/ui2, f4E2M1FN and the FNUZ f8 formats; the
rest (f6E2M3FN, f6E3M2FN, f8E3M4, f8E4M3, f8E8M0FNU) have none, and its
XLA_CPU_JIT device registers no `_Arg` kernel for si2, ui2 and f4E2M1FN, so
cases of those types are declared `unsupported`, named (`NO_TF_DTYPE`,
`NO_XLA_KERNEL`).

Observed with 2.21.0, through TF's own API as well (behaviour under test,
not this server's choice): XLA:CPU compiles with TensorFlow's default
DebugOptions, in which `xla_cpu_enable_fast_min_max` is on — maximum,
minimum, clamp and max/min reductions lose NaNs and the sign of zero
(tensorflow/tensorflow#116992), where jax.jit turns it off; and si4/ui4
tensors cross the XlaCallModule boundary unpacked on TensorFlow's side
(one element per byte) but are read packed by XLA (two per byte): a
convert of [-8 … 7] to i8 gives [-8, 0, -7, 0, …], so every 4-bit case
with more than one element fails.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from wire import (Rejected, RunFailed, Server, Unsupported, captured_stderr, claim_stdout, has_quantized,  # noqa: E402
                  main_signature, one_line, parse_tensor_type, serve, spec_element)

import numpy as np  # noqa: E402

CALLING_CONVENTION = 10      # jax 0.9.2's jax_export_calling_convention_version default
USE_SHARDY = True            # jax 0.9.2's jax_use_shardy_partitioner default
# Element types (spec names) with no TensorFlow dtype in 2.21 (tf.dtypes.as_dtype refuses their ml_dtypes type).
NO_TF_DTYPE = ("f6E2M3FN", "f6E3M2FN", "f8E3M4", "f8E4M3", "f8E8M0FNU")
# Element types TensorFlow 2.21 has a dtype for but its XLA_CPU_JIT device does not take at a function's
# boundary (probed: every such case fails with "No registered '_Arg' OpKernel for XLA_CPU_JIT devices …
# T=DT_INT2 / DT_UINT2 / DT_FLOAT4_E2M1FN"); a refusal of that kind names TensorFlow's gap, not the program.
NO_XLA_KERNEL = ("si2", "ui2", "f4E2M1FN")
UNSUPPORTED_WORDS = "Detected unsupported operations when trying to compile graph"


class _Program:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def tf_quiet():
    """TensorFlow imported with its C++ INFO logs off (they go to stderr anyway)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    return tf


def versions() -> str:
    tf = tf_quiet()
    from tensorflow.compiler.mlir.stablehlo import stablehlo as shlo
    return f"tensorflow {tf.__version__}, stablehlo {shlo.get_current_version()}"


# Probed with tools/runtimes' own fixture programs (PyTorch PT2E → torch-xla exports, f32 at @main, quantized
# inside): XlaCallModule's lowering to HLO translates no quant op ("'stablehlo.uniform_quantize' op can't be
# translated to XLA HLO"), while TF's TFLite converter legalizes them into TFLite's quantize/dequantize
# kernels, which LiteRT runs.
NO_QUANT_LOWERING = ("quantized types: XlaCallModule's lowering to HLO translates no quant op (TF 2.21 says "
                     "\"'stablehlo.uniform_quantize' op can't be translated to XLA HLO\")")


def signature(mlir: str, quantized_inside: bool = False):
    """@main's argument and result TensorTypes, read from the text, and their
    TensorFlow dtypes; Rejected without @main, Unsupported for a type the
    protocol or TensorFlow cannot carry.  `quantized_inside`: quantized
    types may occur in the program's body (the caller's toolchain legalizes
    them); at @main they stay Unsupported — the protocol carries storage
    integers, and no jax2tf path writes !quant types at @main."""
    if has_quantized(mlir) and not quantized_inside:
        raise Unsupported(NO_QUANT_LOWERING)
    try:
        arg_text, res_text = main_signature(mlir)
    except ValueError as e:
        raise Rejected(str(e)) from None
    tf = tf_quiet()

    def one(text, what):
        try:
            t = parse_tensor_type(text)
        except ValueError as e:
            raise Unsupported(f"@main {what} of type {text}: {e}") from None
        try:
            return t, tf.dtypes.as_dtype(t.dtype)
        except (TypeError, KeyError):
            raise Unsupported(f"TensorFlow {tf.__version__} has no dtype for {spec_element(t.element)}") from None
    return [one(a, "argument") for a in arg_text], [one(r, "result") for r in res_text]


def without_chlo(mlir: str) -> str:
    """`mlir` with its CHLO ops decomposed by jaxlib 0.9.2's
    chlo-legalize-to-stablehlo (module docstring, 1); unchanged where it
    holds no CHLO."""
    if "chlo." not in mlir:
        return mlir
    if has_quantized(mlir):   # jaxlib's bindings could not even read it
        raise Unsupported("CHLO in a program with quantized types: jaxlib's Python bindings, which decompose "
                          "CHLO here, register no quant dialect")
    from jaxlib.mlir import ir
    from jaxlib_server import jaxlib_context, legalize_chlo, parse_verified   # as the jaxlib server runs it

    with jaxlib_context(), ir.Location.unknown():
        module = parse_verified(mlir, ir)
        legalize_chlo(module, ir)
        return module.operation.get_asm()


def serialize(mlir: str) -> bytes:
    """The program as the portable artifact XlaCallModule reads (module docstring, 1)."""
    from tensorflow.compiler.mlir.stablehlo import stablehlo as shlo

    mlir = without_chlo(mlir)
    with captured_stderr() as said:
        try:
            return shlo.serialize_portable_artifact_str(mlir, shlo.get_current_version())
        except Exception as e:
            failure = e
    raise Rejected(f"StableHLO {shlo.get_current_version()} (TensorFlow's) refuses the program: "
                   f"{one_line(said[0]) if said and said[0].strip() else failure}")


def call_function(module: bytes, args, results, jit_compile: bool):
    """A tf.function of @main's arguments calling XlaCallModule as jax2tf calls it."""
    tf = tf_quiet()
    from tensorflow.compiler.tf2xla.python import xla as tfxla

    specs = [tf.TensorSpec(t.shape, d, name=f"a{i}") for i, (t, d) in enumerate(args)]

    def body(*xs):
        return tfxla.call_module(list(xs), version=CALLING_CONVENTION, module=module,
                                 Tout=[d for _, d in results], Sout=[t.shape for t, _ in results],
                                 platforms=("CPU",), function_list=(), has_token_input_output=False,
                                 disabled_checks=(), use_shardy_partitioner=USE_SHARDY)
    return tf.function(body, input_signature=specs, jit_compile=jit_compile, autograph=False), specs


class XlaCallModuleServer(Server):
    def __init__(self):
        self._tf = tf_quiet()

    def describe(self) -> str:
        return (f"TensorFlow XlaCallModule v{CALLING_CONVENTION} under tf.function(jit_compile=True), XLA:CPU "
                f"({versions()}; portable artifact at TF's StableHLO version, platforms=CPU, "
                f"use_shardy_partitioner={USE_SHARDY}; python {sys.version.split()[0]})")

    def unsupported(self) -> list[dict]:
        return [{"op": "*", "dtype": d, "reason": f"TensorFlow {self._tf.__version__} has no dtype for {d}"}
                for d in NO_TF_DTYPE] + [
            {"op": "*", "dtype": d, "reason": f"TensorFlow {self._tf.__version__}'s XLA_CPU_JIT device registers no "
                                              f"'_Arg' kernel for {d}: no function taking it compiles"}
            for d in NO_XLA_KERNEL]

    def compile(self, mlir: str):
        args, results = signature(mlir)
        module = serialize(mlir)
        fn, specs = call_function(module, args, results, jit_compile=True)
        with captured_stderr() as said:
            try:
                fn.experimental_get_compiler_ir(*specs)(stage="hlo")
                failure = None
            except Exception as e:
                failure = e
        if failure is not None:
            message = one_line(str(failure).split("The op is created at")[0])
            if UNSUPPORTED_WORDS in message:   # a kernel TF's XLA device does not register (NO_XLA_KERNEL)
                raise Unsupported(f"TensorFlow's XLA device: {message}")
            raise Rejected(f"XlaCallModule / tf2xla refuses the program: {message}")
        return _Program(fn=fn, args=args, results=[t for t, _ in results])

    def run(self, program, inputs):
        tf = self._tf
        xs = [tf.constant(np.array(a, order="C"), dtype=d) for a, (_, d) in zip(inputs, program.args)]
        with captured_stderr() as said:
            try:
                outs = program.fn(*xs)
                failure = None
            except Exception as e:
                failure = e
        if failure is not None:
            raise RunFailed(one_line(str(failure).split("The op is created at")[0] or said[0]))
        if not isinstance(outs, (list, tuple)):
            outs = [outs]
        return [np.asarray(o.numpy()) for o in outs]


def main(argv=None) -> int:
    claim_stdout()
    return serve(XlaCallModuleServer)


if __name__ == "__main__":
    sys.exit(main())
