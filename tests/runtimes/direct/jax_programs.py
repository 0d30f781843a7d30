"""Run under .envs/jaxlib-0.9.2/bin/python (tests/runtimes/test_runtimes_long.py):
small JAX programs lowered by that environment's jax (`jax.jit(f).lower(*xs).as_text()`),
their inputs, and what that environment's own Python API gives for them —
`jax.jit(f)(*xs)` (XLA:CPU) and `stablehlo.eval_module` on the same text (the
reference interpreter) — as JSON on stdout.  The self-check's truth for the
servers: the same program through the server must give the same bits."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tools", "runtimes"))

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import wire  # noqa: E402

S = np.float32([np.nan, -0.0, 0.0, 1.0, -1.0, np.inf, -np.inf, 1e-40, -1e-40, 3.5, -np.nan, 2.0, -0.0, 0.0, 7.0,
                np.nan])
O = np.float32([1.0, 0.0, -0.0, np.nan, -1.0, -np.inf, np.inf, 0.0, -0.0, np.nan, 3.0, -2.0, 0.0, -0.0, np.nan, 1.0])
R = np.random.default_rng(0).standard_normal(16).astype(np.float32)
I = np.int32([0, 1, -1, 2**31 - 1, -2**31, 7, -7, 3, 100, -100, 5, 6, 8, 9, 10, 11])

FUNCTIONS = {
    "maximum": (jnp.maximum, (S, O)),
    "minimum": (jnp.minimum, (O, S)),
    "reduce max": (lambda x: jnp.max(x.reshape(4, 4), axis=1), (S,)),
    "tanh": (jnp.tanh, (R,)),
    "exp": (jnp.exp, (R * 10,)),
    "subnormal add": (lambda x, y: x + y, (S, S)),
    "dot": (lambda x, y: x.reshape(4, 4) @ y.reshape(4, 4), (R, R[::-1].copy())),
    "sort": (jnp.sort, (R,)),
    "compare": (lambda x, y: x < y, (S, O)),
    "argmax": (lambda x: jnp.argmax(x.reshape(4, 4), axis=1), (R,)),
    "int32 wrap": (lambda x: x * 3 + x, (I,)),
    "bf16 multiply": (lambda x, y: x * y, (R.astype(jnp.bfloat16), O.astype(jnp.bfloat16))),
    "two results": (lambda x: (jnp.sin(x), jnp.cos(x).sum()), (R,)),
    # CHLO in the text (chlo.erfc, chlo.lgamma, chlo.sinh): a jax2tf user's TF reads jax.export's artifact, where
    # jax's serializer has decomposed them (the case's "export"); the servers get the text
    "chlo erfc lgamma sinh": (lambda x: (jax.scipy.special.erfc(x), jax.lax.lgamma(x), jnp.sinh(x)), (R * 3,)),
}


def interpret(text, xs):
    """The text run by jaxlib's reference interpreter directly (native dtypes only)."""
    from jax._src.interpreters import mlir as jm
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import stablehlo

    if any(np.asarray(x).dtype.name == "bfloat16" for x in xs) or "chlo." in text:   # it reads no CHLO (aborts)
        return None
    with jm.make_ir_context() as ctx, ir.Location.unknown():
        module = ir.Module.parse(text)
        outs = stablehlo.eval_module(module, [ir.DenseElementsAttr.get(np.asarray(x)) for x in xs])
        return [np.array(o) for o in outs]


def tensors(arrays):
    out = []
    for a in arrays:
        a = np.asarray(a)
        t = wire.TensorType(a.shape, next(k for k in wire._ELEMENTS if k[:1] != "s" and _dtype(k) == a.dtype))
        out.append(wire.encode(a, t))
    return out


def _dtype(k):
    try:
        return wire.element_dtype(k)
    except (KeyError, AttributeError):
        return None


def main():
    cases = []
    for name, (f, xs) in FUNCTIONS.items():
        text = jax.jit(f).lower(*xs).as_text()
        jit = jax.jit(f)(*xs)
        jit = list(jit) if isinstance(jit, tuple) else [jit]
        interp = interpret(text, xs)
        case = {"name": name, "mlir": text, "inputs": tensors(xs), "jit": tensors([np.asarray(o) for o in jit]),
                "interpreter": tensors(interp) if interp is not None else None}
        if "chlo." in text:   # what jax2tf hands XlaCallModule: jax.export's serialized module
            case["export"] = jax.export.export(jax.jit(f))(*xs).mlir_module_serialized.hex()
        cases.append(case)
    json.dump({"jax": jax.__version__, "cases": cases}, sys.stdout)


if __name__ == "__main__":
    main()
