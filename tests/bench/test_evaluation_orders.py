"""bench/evaluation_orders.py: the sampler sums in the orders it names, they differ, the enclosure holds them.

The truth here is numpy, not the sampler: each sampled program's output
is recomputed in float32 by this file — every product rounded once, every
node of the named tree one float32 add — and must equal XLA's run of the
rewritten program bit for bit.  That is what makes the samples legitimate
orders (a tree over the leaves in index order, no fused multiply-add).
"""
from __future__ import annotations


import numpy as np
import pytest

from bench import evaluation_orders as eo

import jax


def _in_order(t) -> list[int]:
    return [t] if isinstance(t, int) else _in_order(t[0]) + _in_order(t[1])


def _depth(t) -> int:
    return 0 if isinstance(t, int) else 1 + max(_depth(t[0]), _depth(t[1]))


def _tree_sum(t, leaf):
    if isinstance(t, int):
        return leaf(t)
    return _tree_sum(t[0], leaf) + _tree_sum(t[1], leaf)   # numpy float32 + float32: one rounding


def _plan_sum(plan, rows: np.ndarray) -> np.ndarray:
    """rows [n, …] summed as `plan` says, padding with +0 (dot_general's init)."""
    if not plan.block:
        return _tree_sum(plan.inner, lambda i: rows[i])
    pad = np.zeros((plan.padded - plan.n,) + rows.shape[1:], rows.dtype)
    blocks = np.concatenate([rows, pad]).reshape((plan.padded // plan.block, plan.block) + rows.shape[1:])
    sums = _tree_sum(plan.inner, lambda i: blocks[:, i])
    return _tree_sum(plan.outer, lambda j: sums[j])


@pytest.mark.parametrize("family", eo.FAMILIES)
def test_every_tree_keeps_the_leaves_in_index_order(family):
    rng = np.random.default_rng(1)
    for n in (1, 2, 3, 7, 64, 100):
        t = eo.tree(n, family, rng)
        assert _in_order(t) == list(range(n))
    assert _depth(eo.tree(64, "left", rng)) == 63 and _depth(eo.tree(64, "pairwise", rng)) == 6


def test_sampled_orders_are_the_named_trees_differ_and_lie_inside_the_enclosure(tmp_path):
    from shlo_conform.backends.xla import XlaBackend
    from shlo_conform.suites.compare import compare
    rng = np.random.default_rng(7)
    a = rng.standard_normal((2, 4096)).astype(np.float32)
    b = rng.standard_normal((4096, 3)).astype(np.float32)
    text = jax.jit(lambda x, y: x @ y).lower(a, b).as_text()
    [exp] = eo.oracle(text, [a, b], tmp_path)
    xla = XlaBackend(dict(eo.XLA_STRICT))
    products = (a.T[:, :, None] * b[:, None, :])          # [k, 2, 3], each rounded once to float32
    outs, sampler = [], np.random.default_rng(0)
    for s in range(5):
        prog, [plan] = eo.rewrite(text, sampler, left_fold=(s == 0))
        [y] = xla.run(xla.compile(prog), [a, b, eo.ZERO_INPUT])
        want = _plan_sum(plan, products)
        assert y.dtype == np.float32 and np.array_equal(y.view(np.uint32), want.view(np.uint32)), plan.what
        assert compare(exp, y).ok, plan.what
        outs.append(y.tobytes())
    assert len(set(outs)) >= 4      # 4096 terms of mixed signs: different trees, different last bits


def _conv_rows(x, k):
    """Every product of a 3×3 SAME convolution (NHWC, HWIO), leaves in
    (kh, kw, input feature) order: [18, n, h, w, out feature]."""
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    h, w = x.shape[1:3]
    return np.stack([xp[:, i:i + h, j:j + w, c, None] * k[i, j, c][None, None, None, :]
                     for i in range(3) for j in range(3) for c in range(x.shape[3])])


def _cumsum_rows(x):
    """cumsum as reduce_window: window j holds x[j − 63 … j], padding (+0) first."""
    n = x.shape[0]
    xp = np.concatenate([np.zeros(n - 1, np.float32), x])
    return np.stack([xp[w:w + n] for w in range(n)])


def _sum_rows(x):
    """jnp.sum over axis 1: reduce with init +0, the init the leftmost leaf."""
    return np.concatenate([np.zeros((1, x.shape[0]), np.float32), x.T])


_R = np.random.default_rng(11)
OTHER_REDUCTIONS = {   # op → (function, inputs, every leaf of each output element in index order)
    "reduce": (lambda x: x.sum(axis=1), [_R.standard_normal((3, 300)).astype(np.float32)], _sum_rows),
    "reduce_window": (lambda x: jax.numpy.cumsum(x), [_R.standard_normal(64).astype(np.float32)], _cumsum_rows),
    "convolution": (lambda x, k: jax.lax.conv_general_dilated(x, k, (1, 1), "SAME",
                                                               dimension_numbers=("NHWC", "HWIO", "NHWC")),
                    [_R.standard_normal((1, 5, 5, 2)).astype(np.float32),
                     _R.standard_normal((3, 3, 2, 3)).astype(np.float32)], _conv_rows),
}


@pytest.mark.parametrize("op", sorted(OTHER_REDUCTIONS))
def test_reduce_reduce_window_and_convolution_sum_in_the_named_tree(op):
    from shlo_conform.backends.xla import XlaBackend
    f, args, rows = OTHER_REDUCTIONS[op]
    text = jax.jit(f).lower(*args).as_text()
    assert f"stablehlo.{op}" in text or f'"stablehlo.{op}"' in text
    xla = XlaBackend(dict(eo.XLA_STRICT))
    leaves = rows(*args)
    sampler = np.random.default_rng(5)
    for s in range(3):
        prog, [plan] = eo.rewrite(text, sampler, left_fold=(s == 0))
        [y] = xla.run(xla.compile(prog), list(args) + [eo.ZERO_INPUT])
        want = _plan_sum(plan, leaves)
        assert np.array_equal(y.view(np.uint32), want.astype(np.float32).view(np.uint32)), plan.what


def test_the_strict_rewrite_stops_fma_contraction():
    """x·y + x in f32: XLA as jax.jit compiles it fuses the multiply-add
    (docs/findings.md); the rewritten program rounds the product first."""
    from shlo_conform.backends.xla import XlaBackend
    rng = np.random.default_rng(3)
    x, y = (rng.standard_normal(1000).astype(np.float32) for _ in range(2))
    text = jax.jit(lambda u, v: u * v + u).lower(x, y).as_text()
    xla = XlaBackend(dict(eo.XLA_STRICT))
    separate = x * y + x                                    # numpy: two roundings
    fused = (x.astype(np.float64) * y + x).astype(np.float32)   # the exact product added: an FMA, near enough
    assert (separate != fused).sum() > 100                  # the inputs tell the two apart
    strict, _ = eo.rewrite(text)
    [got] = xla.run(xla.compile(strict), [x, y, eo.ZERO_INPUT])
    assert np.array_equal(got, separate)
