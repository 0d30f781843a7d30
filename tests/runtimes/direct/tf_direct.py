"""Run under .envs/tf-2.21.0/bin/python (tests/runtimes/test_runtimes_long.py):
the programs of jax_programs.py (JSON on stdin) run through TensorFlow's own
Python API directly — not through the servers' code: the artifact written by
`serialize_portable_artifact_str` (for a program with CHLO, jax.export's
own artifact, jax_programs.py's "export"), `xla.call_module` inside
`tf.function(jit_compile=True)` with Tout/Sout taken from the results JAX
computed (not from the text), and LiteRT: the TFLite converter on that
function's concrete function and `ai_edge_litert`'s Interpreter, inputs set
by position, outputs read in the model's order.  JSON on stdout: per case,
the XlaCallModule outputs and the LiteRT outputs (or the converter's
refusal)."""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tools", "runtimes"))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.compiler.tf2xla.python import xla as tfxla  # noqa: E402
from tensorflow.compiler.mlir.stablehlo import stablehlo as shlo  # noqa: E402
from ai_edge_litert.interpreter import Interpreter  # noqa: E402

import wire  # noqa: E402   (the codec only: hex <-> arrays)


def function(case, jit_compile):
    xs = [wire.decode(t) for t in case["inputs"]]
    outs = [wire.parse_tensor_type(t["type"]) for t in case["jit"]]
    if "export" in case:   # a program with CHLO: jax.export's artifact, as jax2tf passes it
        module = bytes.fromhex(case["export"])
    else:
        module = shlo.serialize_portable_artifact_str(case["mlir"], shlo.get_current_version())

    @tf.function(jit_compile=jit_compile, autograph=False,
                 input_signature=[tf.TensorSpec(x.shape, tf.dtypes.as_dtype(x.dtype)) for x in xs])
    def f(*args):
        return tfxla.call_module(list(args), version=10, module=module,
                                 Tout=[tf.dtypes.as_dtype(t.dtype) for t in outs], Sout=[t.shape for t in outs],
                                 platforms=("CPU",), use_shardy_partitioner=True)
    return f, xs, outs


def xla_call_module(case):
    f, xs, outs = function(case, True)
    return [wire.encode(r.numpy(), t) for r, t in zip(f(*xs), outs)]


def litert(case):
    f, xs, outs = function(case, False)
    try:
        model = tf.lite.TFLiteConverter.from_concrete_functions([f.get_concrete_function()], f).convert()
    except Exception as e:
        return {"refused": str(e).splitlines()[0][:300]}
    it = Interpreter(model_content=model)
    it.allocate_tensors()
    for d, x in zip(it.get_input_details(), xs):
        it.set_tensor(d["index"], x)
    it.invoke()
    details = sorted(it.get_output_details(), key=lambda d: int(d["name"].rpartition("_")[2])
                     if d["name"].startswith("Identity_") else 0)
    return [wire.encode(np.array(it.get_tensor(d["index"])), t) for d, t in zip(details, outs)]


def main():
    doc = json.load(sys.stdin)
    out = [{"name": c["name"], "xla_call_module": xla_call_module(c), "litert": litert(c)} for c in doc["cases"]]
    json.dump({"tensorflow": tf.__version__, "cases": out}, sys.stdout)


if __name__ == "__main__":
    main()
