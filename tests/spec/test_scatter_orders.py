"""scatter with more duplicate updates on one element than their orders are
enumerated for (spec/ops/scatter.py, MAX_ENUMERATED_UPDATES): a pairwise
monoid body states what every order gives — one value for integer and
max/min folds, reduce's `Range` for a float sum — where it said "any
value".  Held against the orders themselves: random permutations of the
updates applied one after another in the format's own arithmetic (numpy),
and against JAX's embedding gradient judged end to end."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from shlo_conform.oracle.program import execute, parse_program
from shlo_conform.spec.ops.scatter import MAX_ENUMERATED_UPDATES
from shlo_conform.suites.compare import compare
from shlo_conform.suites.resolution import resolution

N = 40   # updates onto each of 4 elements: far past MAX_ENUMERATED_UPDATES


BASE = {"add": 1000, "mul": 1, "max": 0, "set": 0}   # the operand's elements: the sum starts from 1000


def _segment(dtype, body):
    """z.at[idx].body(v) lowered by JAX: N updates land on each of 4 elements of z."""
    def f(v, i):
        z = jnp.full((4,), BASE[body], dtype)
        return getattr(z.at[i], body)(v)
    idx = np.repeat(np.arange(4), N).astype(np.int32)
    return f, idx


def _orders(v, idx, dtype, rng, count=200):
    """Each element's sum over `count` random orders, added one at a time in `dtype`."""
    out = np.full((count, 4), BASE["add"], dtype)
    for c in range(count):
        for j in rng.permutation(len(v)):
            out[c, idx[j]] = dtype(out[c, idx[j]] + v[j])
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_a_float_sum_of_many_updates_encloses_every_order(dtype):
    rng = np.random.default_rng(1)
    f, idx = _segment(dtype, "add")
    v = (rng.standard_normal(4 * N) * 100).astype(dtype)
    assert N > MAX_ENUMERATED_UPDATES
    (e,) = execute(parse_program(jax.jit(f).lower(v, idx).as_text()), [v, idx])
    r = resolution(e)
    assert r.unchecked == 0 and r.rel_max > 0, e.why          # was: 4 of 4 elements any value
    for row in _orders(v, idx, dtype, rng):
        assert compare(e, row).ok
    exact = np.array([BASE["add"] + sum(float(x) for x in v[idx == k]) for k in range(4)])
    assert compare(e, exact.astype(dtype)).ok
    assert not compare(e, (-exact).astype(dtype)).ok
    if dtype == np.float32:   # f16's γ₄₀ is 2 % of Σ|x|: the spec allows ±10 % of these sums, a 1 % error is inside
        assert not compare(e, (exact * 1.01).astype(dtype)).ok and not compare(e, np.zeros(4, dtype)).ok


@pytest.mark.parametrize("dtype,body", [(np.int32, "add"), (np.float32, "max"), (np.int8, "mul")])
def test_an_order_free_fold_is_one_value(dtype, body):
    """Integer add and multiply wrap the same in every order, max is max:
    one value per element, no alternative — int8 products of ±1, ±2 wrap."""
    rng = np.random.default_rng(2)
    f, idx = _segment(dtype, body)
    v = rng.choice([-2, -1, 1, 2, 3], 4 * N).astype(dtype)
    (e,) = execute(parse_program(jax.jit(f).lower(v, idx).as_text()), [v, idx])
    assert not e.impl_defined and not e.alternatives
    assert np.array_equal(e.array(), np.asarray(jax.jit(f)(v, idx)))


def test_a_body_that_is_no_monoid_keeps_any_value():
    """ .at[].set with duplicates: the last write wins, whichever it is — no monoid: any value stays."""
    f, idx = _segment(np.float32, "set")
    v = np.arange(4 * N, dtype=np.float32)
    (e,) = execute(parse_program(jax.jit(f).lower(v, idx).as_text()), [v, idx])
    assert resolution(e).unchecked == 4


def test_an_embedding_gradient_is_judged_end_to_end():
    """jax.grad of tanh(e[i]·v): a scatter-add of 200 approximate rows onto 20
    — 272 of its 320 elements were "any value"; now every element is
    bounded, XLA's gradient lies inside and a 1 % error does not."""
    rng = np.random.default_rng(0)
    v, idx = rng.standard_normal((200, 16)).astype(np.float32), rng.integers(0, 20, 200).astype(np.int32)
    g = jax.jit(lambda i, v: jax.grad(lambda e: jnp.sum(jnp.tanh(e[i] * v)))(jnp.ones((20, 16), jnp.float32)))
    (e,) = execute(parse_program(g.lower(idx, v).as_text()), [idx, v])
    r = resolution(e)
    assert r.unchecked == 0 and r.conclusive
    got = np.asarray(g(idx, v))
    assert compare(e, got).ok and not compare(e, got * np.float32(1.01)).ok


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16", np.float32, np.float64])
@pytest.mark.parametrize("body", ["add", "mul"])
def test_numpys_add_and_multiply_are_the_bodys_own(dtype, body):
    """scatter's fast call (numpy's + and ×, f16 and bf16 through f32 and
    one more rounding) gives the bits the body gives run by the oracle, on
    pairs across the format's range: subnormal, overflowing, cancelling."""
    import ml_dtypes
    from shlo_conform.spec.ops.scatter import _fast_call
    from shlo_conform.spec.types import element_type
    dt = ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype
    f, idx = _segment(dt, body)
    was = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", was or dtype == np.float64)   # else JAX lowers float64 as f32
    try:
        p = parse_program(jax.jit(f).lower(np.zeros(4 * N, dt), idx).as_text())
    finally:
        jax.config.update("jax_enable_x64", was)
    step = next(s for s in p.steps if s.inst is not None and s.inst.spec.mnemonic == "scatter")
    region = step.inst.regions["update_computation"]
    name = {np.float16: "f16", "bfloat16": "bf16", np.float32: "f32", np.float64: "f64"}[dtype]
    fast = _fast_call(region, [element_type(name)])
    info = ml_dtypes.finfo(dt)
    rng = np.random.default_rng(4)
    mags = np.concatenate([rng.uniform(np.log2(float(info.smallest_subnormal)), np.log2(float(info.max)), 300),
                           rng.uniform(-4, 4, 300)])
    xs = (np.sign(rng.standard_normal(600)) * 2.0 ** mags).astype(dt)
    ys = np.concatenate([(np.sign(rng.standard_normal(300)) * 2.0 ** rng.permutation(mags[:300])).astype(dt),
                         -xs[300:] * dt(1.0009765625)])   # near cancellation
    for x, y in zip(xs, ys):
        a, b = np.asarray(x, dt).reshape(()), np.asarray(y, dt).reshape(())
        got, want = fast(a, b)[0], region.call(a, b)[0]
        assert np.asarray(got, dt).tobytes() == np.asarray(want, dt).tobytes(), (x, y, got, want)


def test_the_fast_call_is_only_for_the_formats_numpy_rounds_once_more_innocuously():
    """f8 formats (no infinity, NaN at another encoding, another overflow) and
    integers keep the body's own call: numpy's arithmetic on them is not the
    spec's (ml_dtypes' f8 overflow is not the format's rule)."""
    from shlo_conform.spec.ops.scatter import _fast_call
    from shlo_conform.spec.types import element_type
    f, idx = _segment(np.float32, "add")
    p = parse_program(jax.jit(f).lower(np.zeros(4 * N, np.float32), idx).as_text())
    region = next(s for s in p.steps if s.inst is not None and s.inst.spec.mnemonic == "scatter").inst.regions[
        "update_computation"]
    assert _fast_call(region, [element_type("f32")]) is not None
    for name in ("f8E4M3FN", "f8E5M2FNUZ", "si32"):
        assert _fast_call(region, [element_type(name)]) is None, name
