"""A batch-norm layer from the wild: what JAX writes for one, and the op itself written by hand.

JAX has no batch-norm primitive (`jax.lax` offers none; flax, haiku and
equinox build the layer from jnp), so no JAX path emits
`stablehlo.batch_norm_*`: a layer lowers to reduce / divide / sqrt /
subtract / multiply / add (and `chlo.square` from `jnp.var`, legalized by
the reader).  So two programs are judged here:

* the jnp layer `(x − mean) / sqrt(var + eps) · scale + offset`, NHWC,
  statistics over N, H, W, lowered by `jax.jit(...).lower(...)`;
* the same layer as one `stablehlo.batch_norm_training` op, written by
  hand in pretty form (feature_index 3).

Each expectation must hold XLA's outputs (jax.jit: a second
implementation) and the float64 evaluation rounded once (independent
truth, a fused evaluation that the seed allows for the op:
spec/ops/batch_norm_inference.py); the unbiased (N − 1) variance must fail.
The reference interpreter aborts on batch_norm_* (backends/interpreter.py
declares it); `shlo-conform run` shows it, and is not run here (it kills
the process).
"""
from __future__ import annotations

import numpy as np
import pytest

import jax
import jax.numpy as jnp  # noqa: E402

from shlo_conform.generators.expect import expected_outputs  # noqa: E402
from shlo_conform.suites.compare import compare  # noqa: E402

EPS = 1e-5
SHAPE = (2, 4, 4, 8)   # NHWC, 32 elements per feature

HAND = """func.func @main(%x: tensor<2x4x4x8xf32>, %s: tensor<8xf32>, %o: tensor<8xf32>)
    -> (tensor<2x4x4x8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %y, %m, %v = "stablehlo.batch_norm_training"(%x, %s, %o) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64}
      : (tensor<2x4x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x4x4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %y, %m, %v : tensor<2x4x4x8xf32>, tensor<8xf32>, tensor<8xf32>
}
"""


def layer(x, scale, offset):
    mean = jnp.mean(x, axis=(0, 1, 2))
    var = jnp.var(x, axis=(0, 1, 2))
    return (x - mean) / jnp.sqrt(var + EPS) * scale + offset, mean, var


def _inputs():
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(SHAPE) * 2 + 1).astype(np.float32)
    return [x, rng.uniform(0.5, 1.5, 8).astype(np.float32), rng.uniform(-1, 1, 8).astype(np.float32)]


def _float64(x, scale, offset, ddof=0):
    """The layer in float64 throughout (two-pass variance), rounded once to f32."""
    x = x.astype(np.float64)
    mean = x.mean(axis=(0, 1, 2))
    var = ((x - mean) ** 2).sum(axis=(0, 1, 2)) / (x[..., 0].size - ddof)
    y = (x - mean) / np.sqrt(var + np.float64(np.float32(EPS))) * scale + offset
    return [a.astype(np.float32) for a in (y, mean, var)]


@pytest.fixture(scope="module")
def programs():
    args = _inputs()
    jnp_text = jax.jit(layer).lower(*args).as_text()
    return args, {"jnp layer": jnp_text, "batch_norm_training": HAND}


def test_no_jax_path_emits_batch_norm(programs):
    _, texts = programs
    assert "batch_norm" not in texts["jnp layer"] and "stablehlo.reduce" in texts["jnp layer"]
    assert not [n for n in dir(jax.lax) if "batch_norm" in n]


@pytest.mark.parametrize("name", ["jnp layer", "batch_norm_training"])
def test_xla_and_float64_truth_inside_unbiased_outside(programs, name):
    args, texts = programs
    exps = expected_outputs(texts[name], args)
    assert [e.kind for e in exps] == ["bounded"] * 3 and not any(e.impl_defined for e in exps)
    xla = [np.asarray(a) for a in jax.jit(layer)(*args)]
    assert [compare(e, a).ok for e, a in zip(exps, xla)] == [True] * 3
    assert [compare(e, a).ok for e, a in zip(exps, _float64(*args))] == [True] * 3
    wrong = _float64(*args, ddof=1)
    assert [compare(e, a).ok for e, a in zip(exps, wrong)] == [False, True, False]
