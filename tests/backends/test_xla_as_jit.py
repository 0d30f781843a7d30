"""The XLA adapter compiles as `jax.jit` compiles (issue 20).

Independent truth here is JAX itself: each program is what `jax.jit(f)`
lowers, and the adapter's answer on it must be `jax.jit(f)`'s — the same
optimised HLO (canonical print: names and metadata left out) and the same
output bits on inputs chosen where XLA's compile options show (NaN, ±0,
±inf, subnormals).  The adapter once compiled with no `CompileOptions`,
which behaves as `xla_cpu_enable_fast_min_max=true` (maximum(-0, +0) = -0,
NaNs lost in max-pools): these tests failed on it.
"""
from __future__ import annotations

import numpy as np
import pytest

import jax
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

from shlo_conform.backends.base import load_backend  # noqa: E402

SPECIALS = np.float32([np.nan, -0.0, 0.0, 1.0, -1.0, np.inf, -np.inf, 1e-40, -1e-40, 3.5, -np.nan, 2.0, -0.0, 0.0, 7.0, np.nan])
OTHERS = np.float32([1.0, 0.0, -0.0, np.nan, -1.0, -np.inf, np.inf, 0.0, -0.0, np.nan, 3.0, -2.0, 0.0, -0.0, np.nan, 1.0])


def _maxpool(x):
    return lax.reduce_window(x, -np.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")


def _conv_relu_pool(x, w):
    y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW"))
    return _maxpool(jax.nn.relu(y))


def _image():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 4, 4)).astype(np.float32)
    x[0, 0, 0, 0], x[0, 1, 2, 3], x[0, 0, 3, 1] = np.nan, -0.0, -np.inf
    return x


CROSS_CHECK = {
    "maximum": (jnp.maximum, (SPECIALS, OTHERS)),
    "minimum": (jnp.minimum, (SPECIALS, OTHERS)),
    "lax.max": (lax.max, (OTHERS, SPECIALS)),
    "lax.min": (lax.min, (OTHERS, SPECIALS)),
    "clamp": (lambda x: lax.clamp(np.float32(-0.0), x, np.float32(2.0)), (SPECIALS,)),
    "reduce max": (lambda x: jnp.max(x.reshape(4, 4), axis=1), (SPECIALS,)),
    "reduce min": (lambda x: jnp.min(x.reshape(4, 4), axis=0), (OTHERS,)),
    "sort": (jnp.sort, (SPECIALS,)),
    "argmax": (lambda x: jnp.argmax(x.reshape(4, 4), axis=1), (OTHERS,)),
    "max-pool": (_maxpool, (_image(),)),
    "conv + relu + max-pool": (_conv_relu_pool, (_image(), np.ones((2, 2, 3, 3), np.float32))),
    "compare": (lambda x, y: x < y, (SPECIALS, OTHERS)),
    "subnormal add": (lambda x, y: x + y, (SPECIALS, SPECIALS)),
}


@pytest.fixture(scope="module")
def xla():
    return load_backend("xla")


def _canonical(hlo_module) -> str:
    from jaxlib import _hlo
    return hlo_module.to_string(_hlo.HloPrintOptions.canonical())


@pytest.mark.parametrize("name", list(CROSS_CHECK))
def test_outputs_and_optimised_hlo_equal_jax_jit(xla, name):
    f, args = CROSS_CHECK[name]
    lowered = jax.jit(f).lower(*args)
    want = [np.asarray(o) for o in jax.tree_util.tree_leaves(jax.jit(f)(*args))]
    exe = xla.compile(lowered.as_text())
    got = xla.run(exe, list(args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert g.tobytes() == w.tobytes(), f"{name}: adapter {g} where jax.jit gives {w}"
    compiled = lowered.compile().runtime_executable()
    assert _canonical(exe.hlo_modules()[0]) == _canonical(compiled.hlo_modules()[0])


def test_nan_and_signed_zero_of_maximum_as_jax_jit(xla):
    """The two answers the old adapter got wrong, spelled out: whatever
    jax.jit gives for maximum(NaN, 1) and maximum(-0, +0), the adapter gives
    (on this jaxlib: NaN and +0, as the seed's maximum states)."""
    text = """func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.maximum"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}"""
    a, b = np.float32([np.nan, -0.0]), np.float32([1.0, 0.0])
    [got] = xla.run(xla.compile(text), [a, b])
    want = np.asarray(jax.jit(lax.max)(a, b))
    assert got.tobytes() == want.tobytes()
    assert np.isnan(got[0]) and got[1] == 0 and not np.signbit(got[1])


def test_a_named_configuration_is_scored_only_when_named():
    """`xla:KEY=VALUE` passes an XLA option as jax.jit's compiler_options do,
    and says so; an option XLA does not know is refused at load."""
    fast = load_backend("xla:xla_cpu_enable_fast_min_max=true")
    assert "xla_cpu_enable_fast_min_max=True" in fast.describe()
    f = jnp.maximum
    args = (SPECIALS, OTHERS)
    lowered = jax.jit(f).lower(*args)
    [got] = fast.run(fast.compile(lowered.as_text()), list(args))
    [want] = [np.asarray(jax.jit(f).lower(*args).compile({"xla_cpu_enable_fast_min_max": True})(*args))]
    assert got.tobytes() == want.tobytes()
    with pytest.raises(ValueError, match="No such compile option"):
        load_backend("xla:no_such_xla_option=1")
    with pytest.raises(ValueError, match="takes no configuration"):
        load_backend("interpreter:xla_cpu_enable_fast_min_max=true")
