"""LiteRT (ai-edge-litert) over the command protocol: a StableHLO program
converted by TensorFlow's TFLite converter and run by LiteRT's interpreter.

Run under `.envs/tf-2.21.0/bin/python` (that environment pins
ai-edge-litert beside tensorflow-cpu; tools/runtimes/build_env.py);
imports nothing of the project.

The path a jax2tf → TFLite user takes: the program wrapped as jax2tf wraps
it (an XlaCallModule call in a tf.function: tf_xla_call_module_server.py,
whose serialization and call this server reuses), the function's concrete
function handed to `tf.lite.TFLiteConverter.from_concrete_functions` with
its default settings (TFLITE_BUILTINS only: the converter inlines the
XlaCallModule's StableHLO and legalizes it to TFLite ops), the flatbuffer
loaded by `ai_edge_litert.interpreter.Interpreter` with its defaults (the
XNNPACK delegate applied where it takes an op, as for every user) and
`allocate_tensors`.

Verdicts: a program StableHLO cannot parse or verify is `rejected` (step 1
of the XlaCallModule server).  A valid program the converter refuses — an
op or type it cannot legalize — is `unsupported: the converter refuses …`,
and one whose model LiteRT's interpreter cannot prepare (no kernel, a type
its kernels refuse) is `unsupported: LiteRT's interpreter refuses …`: a
deployment target declares what it cannot take; neither is a wrong value.
What runs is judged.

Inputs are fed by name (`a0`, `a1`, … as the TensorSpecs name them; an
argument the program never reads has no input tensor after conversion and
is not fed); results are read in the model's output order, which follows
the function's (`Identity`, `Identity_1`, …).  LiteRT's `set_tensor` and
`get_tensor` refuse a tensor of no elements ("Invalid tensor size."): an
empty input is not copied and an empty result is returned as the empty
array of @main's type — there are no bits to carry either way.
"""
from __future__ import annotations

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from wire import (RunFailed, Server, Unsupported, captured_stderr, claim_stdout, one_line, serve)  # noqa: E402
from tf_xla_call_module_server import (NO_TF_DTYPE, call_function, serialize, signature, tf_quiet,  # noqa: E402
                                       versions)

import numpy as np  # noqa: E402


class _Program:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def _version(pkg: str) -> str:
    from importlib.metadata import version
    try:
        return version(pkg)
    except Exception:
        return "?"


def _output_order(details: list[dict]) -> list[dict]:
    """The model's outputs in the function's order: `Identity`, `Identity_1`, …
    when the converter kept those names, else as the model lists them."""
    def rank(d):
        m = re.search(r"Identity(?:_(\d+))?(?::\d+)?$", d["name"])
        return int(m.group(1) or 0) if m else None
    ranks = [rank(d) for d in details]
    if all(r is not None for r in ranks) and len(set(ranks)) == len(ranks):
        return [d for _, d in sorted(zip(ranks, details), key=lambda p: p[0])]
    return list(details)


def _input_index(name: str) -> int | None:
    """The argument position of an input tensor named after its TensorSpec (`a3`, `serving_default_a3:0`)."""
    m = re.search(r"(?:^|_)a(\d+)(?::\d+)?$", name)
    return int(m.group(1)) if m else None


class LiteRtServer(Server):
    def __init__(self):
        self._tf = tf_quiet()
        from ai_edge_litert.interpreter import Interpreter
        self._interpreter = Interpreter

    def describe(self) -> str:
        return (f"LiteRT (ai-edge-litert {_version('ai-edge-litert')}) interpreter, default delegates (XNNPACK), "
                f"on a model from TF's TFLiteConverter.from_concrete_functions (TFLITE_BUILTINS) of jax2tf's "
                f"XlaCallModule wrapping; quantized ops inside @main legalized by the converter into TFLite's "
                f"quantize/dequantize kernels ({versions()}; python {sys.version.split()[0]})")

    def unsupported(self) -> list[dict]:
        return [{"op": "*", "dtype": d, "reason": f"TensorFlow {self._tf.__version__} has no dtype for {d}"}
                for d in NO_TF_DTYPE]

    def compile(self, mlir: str):
        tf = self._tf
        args, results = signature(mlir, quantized_inside=True)   # the converter legalizes quant ops
        module = serialize(mlir)
        fn, _ = call_function(module, args, results, jit_compile=False)
        concrete = fn.get_concrete_function()
        with captured_stderr() as said:
            try:
                converter = tf.lite.TFLiteConverter.from_concrete_functions([concrete], fn)
                flatbuffer = converter.convert()
                failure = None
            except Exception as e:
                failure = e
        if failure is not None:
            raise Unsupported(f"the converter refuses the program: {_reason(failure, said)}")
        with captured_stderr() as said:
            try:
                interpreter = self._interpreter(model_content=flatbuffer)
                interpreter.allocate_tensors()
                failure = None
            except Exception as e:
                failure = e
        if failure is not None:
            raise Unsupported(f"LiteRT's interpreter refuses the converted model: {_reason(failure, said)}")
        feeds = {}
        for d in interpreter.get_input_details():
            i = _input_index(d["name"])
            if i is None or i >= len(args) or i in feeds:
                raise Unsupported(f"the converted model has an input {d['name']!r} that is no argument of @main")
            if np.dtype(d["dtype"]) != args[i][0].dtype:
                raise Unsupported(f"the converted model takes argument {i} as {np.dtype(d['dtype'])}; @main takes "
                                  f"{args[i][0].mlir}")
            feeds[i] = d
        outputs = _output_order(interpreter.get_output_details())
        if len(outputs) != len(results):
            raise Unsupported(f"the converted model has {len(outputs)} outputs; @main has {len(results)} results")
        for k, (d, (t, _)) in enumerate(zip(outputs, results)):
            if np.dtype(d["dtype"]) != t.dtype:
                raise Unsupported(f"the converted model returns result {k} as {np.dtype(d['dtype'])}; @main "
                                  f"returns {t.mlir}")
        return _Program(interpreter=interpreter, feeds=feeds, outputs=outputs, args=args,
                        results=[t for t, _ in results], size=len(flatbuffer))

    def run(self, program, inputs):
        it = program.interpreter
        try:
            for i, d in program.feeds.items():
                if inputs[i].size:   # an empty tensor has no bytes to copy (set_tensor refuses it)
                    it.set_tensor(d["index"], np.array(inputs[i], order="C"))
            it.invoke()
            return [np.array(it.get_tensor(d["index"]), copy=True) if np.prod(t.shape, dtype=np.int64)
                    else np.zeros(t.shape, t.dtype)   # no values to read: get_tensor refuses an empty tensor
                    for d, t in zip(program.outputs, program.results)]
        except Exception as e:
            raise RunFailed(one_line(str(e))) from None


def _reason(failure: Exception, said: list) -> str:
    """The converter's or interpreter's own words: the exception's message
    (the converter puts MLIR's diagnostics there), else what it printed."""
    text = str(failure)
    errors = [ln for ln in text.splitlines() if "error:" in ln]
    if not errors and said and said[0].strip():
        errors = [ln for ln in said[0].splitlines() if "error" in ln.lower()]
    return one_line("\n".join(errors) if errors else (text or type(failure).__name__), limit=600)


def main(argv=None) -> int:
    claim_stdout()
    return serve(LiteRtServer)


if __name__ == "__main__":
    sys.exit(main())
