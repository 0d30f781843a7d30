"""oracle/every_tree.py against every tree, enumerated: the extremes it
states hold every allowed result (each tree over the terms in index order,
each product rounded or exact, each node rounded to the format, to f32 or
kept in float64, the result rounded into the format), and they are
attained — no wider than the trees reach, unless the any-order wide
accumulator reaches further.  The enumeration rounds with ml_dtypes and
numpy casts of exact fractions, not with the module's round_fast."""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import ml_dtypes
import numpy as np
import pytest

from shlo_conform.oracle import every_tree
from shlo_conform.spec.types import BF16, F16, F32

NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16}


def _rn(x: Fraction, dtype) -> Fraction:
    """x rounded to nearest even into dtype, from the exact fraction (via
    float64 only where float64 holds x exactly, else by bracketing)."""
    f = float(x)
    if Fraction(f) == x:
        return Fraction(float(np.asarray(f).astype(dtype)))
    # not exact in float64: the two dtype neighbours of f, and the midpoint decides
    a = np.asarray(f).astype(dtype)
    cands = sorted({float(a), float(np.nextafter(a.astype(np.float32), np.float32(np.inf)).astype(dtype)),
                    float(np.nextafter(a.astype(np.float32), np.float32(-np.inf)).astype(dtype))})
    return min((Fraction(c) for c in cands), key=lambda c: (abs(c - x), c))


def _every_result(products_rounded, products_exact, dtype):
    """Every value an allowed evaluation can give (exact fractions)."""
    n = len(products_rounded)
    leaves = [{Fraction(float(a)), Fraction(float(b))} for a, b in zip(products_rounded, products_exact)]

    @lru_cache(maxsize=None)
    def values(i, j):
        if i == j:
            return frozenset(leaves[i])
        out = set()
        for s in range(i, j):
            for a in values(i, s):
                for b in values(s + 1, j):
                    x = a + b
                    out |= {x, _rn(x, np.float32), _rn(x, dtype)}
        return frozenset(out)
    return {_rn(v, dtype) for v in values(0, n - 1)}


@pytest.mark.parametrize("name,fmt", [("f16", F16), ("bf16", BF16)])
def test_the_extremes_hold_every_tree_and_are_reached(name, fmt):
    dtype = NP[name]
    rng = np.random.default_rng(7)
    reached = 0
    rows = 40
    for _ in range(rows):
        n = int(rng.integers(2, 7))
        x = rng.standard_normal(n).astype(dtype).astype(np.float64) * (2.0 ** rng.integers(-3, 4, n))
        y = rng.standard_normal(n).astype(dtype).astype(np.float64)
        exact = x * y
        rounded = exact.astype(dtype).astype(np.float64)
        got = every_tree.extremes(rounded[None, :], fmt, exact[None, :])
        assert got is not None
        lo, hi = float(got[0][0]), float(got[1][0])
        results = _every_result(tuple(rounded), tuple(exact), dtype)
        assert all(lo <= r <= hi for r in results), (x, y, lo, hi, min(results), max(results))
        reached += float(min(results)) == lo and float(max(results)) == hi
    assert reached >= rows * 3 // 4, reached   # the wide any-order envelope may reach one value further


def test_a_wrong_recurrence_fails_the_test(monkeypatch):
    """The check can fail: with nodes rounded to the format only (no f32,
    no float64 node), some allowed results fall outside."""
    monkeypatch.setattr(every_tree, "_nodes", lambda v, fmt, up: (every_tree.round_fast(v, fmt),))
    rng = np.random.default_rng(3)
    outside = 0
    for _ in range(30):
        n = 5
        x = rng.standard_normal(n).astype(np.float16).astype(np.float64)
        y = rng.standard_normal(n).astype(np.float16).astype(np.float64)
        exact = x * y
        rounded = exact.astype(np.float16).astype(np.float64)
        lo, hi = (float(v[0]) for v in every_tree._trees(rounded[None, :], exact[None, :], F16))
        results = _every_result(tuple(rounded), tuple(exact), np.float16)
        outside += not all(lo <= r <= hi for r in results)
    assert outside > 0


def test_sixty_four_f16_products_are_an_order_narrower_than_the_allowance():
    """What it is for: 64 f16 products of unit normals, the median
    element's half-width ±0.98 % against the allowance's ±13.9 %."""
    from shlo_conform.oracle.affine import _order_allowance
    rng = np.random.default_rng(1)
    q = rng.standard_normal((16, 64)).astype(np.float16).astype(np.float64)
    k = rng.standard_normal((16, 64)).astype(np.float16).astype(np.float64)
    exact = (q[:, None, :] * k[None, :, :]).reshape(-1, 64)
    rounded = exact.astype(np.float16).astype(np.float64)
    lo, hi = every_tree.extremes(rounded, F16, exact)
    s = exact.sum(axis=1)
    assert np.all(lo <= s.astype(np.float16)) and np.all(s.astype(np.float16) <= hi)
    tree = np.median((hi - lo) / 2 / np.abs(s))
    mag = np.abs(exact).sum(axis=1)
    most = (mag + np.abs(s)) / 2
    allowance = np.median(_order_allowance(F16, 64, most, mag) / np.abs(s))
    assert tree < 0.02 < allowance and allowance > 8 * tree


@pytest.mark.parametrize("fmt", [F16, BF16, F32], ids=["f16", "bf16", "f32"])
def test_the_tree_allowance_holds_every_tree_in_index_order(fmt):
    """oracle/affine.py `_tree_allowance` (every node sums a contiguous
    block: (n − 1)·u·largest block) against the exact extremes of every
    tree, every node rounded to the format, to f32 or kept wide, every
    product rounded or exact (`_trees`, itself held against enumeration
    above) — and narrower than the order allowance by terms of both signs."""
    from shlo_conform.oracle.affine import _order_allowance, _tree_allowance
    rng = np.random.default_rng(11)
    dtype = {F16: np.float16, BF16: ml_dtypes.bfloat16, F32: np.float32}[fmt]
    for n in (2, 3, 8, 33, 64):
        x = rng.standard_normal((64, n)).astype(dtype).astype(np.float64) * 2.0 ** rng.integers(-4, 5, (64, n))
        y = rng.standard_normal((64, n)).astype(dtype).astype(np.float64)
        exact = x * y
        rounded = every_tree.round_fast(exact, fmt)
        lo, hi = every_tree._trees(rounded, exact, fmt)
        s, mag = exact.sum(axis=1), np.abs(exact).sum(axis=1)
        allow = _tree_allowance(fmt, n, every_tree.largest_block(exact, exact), mag)
        assert np.all(s - allow <= lo) and np.all(hi <= s + allow), n
        if n == 64:   # terms of both signs over 2^-4 … 2^4: the largest block is a share of the sum of one sign
            most = (mag + np.abs(s)) / 2
            assert np.median(allow / _order_allowance(fmt, n, most, mag)) < 0.8
    n, most_ratio = (1024, 0.15) if fmt.precision > 8 else (128, 0.5)   # bf16: n·u < 1 up to 255
    t = rng.standard_normal((64, n))   # unit normals: a block about √n of them, one sign n/2
    s, mag = t.sum(axis=1), np.abs(t).sum(axis=1)
    ratio = _tree_allowance(fmt, n, every_tree.largest_block(t, t), mag, products=False) / \
        _order_allowance(fmt, n, (mag + np.abs(s)) / 2, mag, products=False)
    assert np.median(ratio) < most_ratio


def test_the_largest_block_of_ranges_holds_every_point_inside_them():
    rng = np.random.default_rng(5)
    lo = rng.standard_normal((200, 40))
    hi = lo + rng.uniform(0, 0.3, lo.shape)
    bound = every_tree.largest_block(lo, hi)
    for _ in range(20):
        t = rng.uniform(lo, hi)
        p = np.concatenate([np.zeros((200, 1)), np.cumsum(t, axis=1)], axis=1)
        brute = np.abs(p[:, :, None] - p[:, None, :]).max(axis=(1, 2))   # every block, by its two prefix sums
        assert np.all(brute <= bound)


def test_a_dot_generals_blocks_are_its_products_in_contraction_order():
    """dot_general_blocks against every block of each result element's
    products, formed here by einsum in the result's order (batch, lhs free,
    rhs free), with the contracting dimension not last on either side."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 7, 3))    # (batch, contracting, free)
    y = rng.standard_normal((5, 2, 7))    # (free, batch, contracting)
    got = every_tree.dot_general_blocks(x, y, [0], [1], [1], [2])
    t = np.einsum("bkf,gbk->bfgk", x, y).reshape(-1, 7)
    p = np.concatenate([np.zeros((t.shape[0], 1)), np.cumsum(t, axis=1)], axis=1)
    brute = np.abs(p[:, :, None] - p[:, None, :]).max(axis=(1, 2))
    assert got.shape == brute.shape and np.allclose(got, brute, rtol=1e-12) and np.all(got >= brute)
