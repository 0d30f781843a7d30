"""dot_general's algorithm bound (spec/ops/dot_algorithm.py) against brute force.

Truth is every value a preset may compute, enumerated here independently
of the bound: each operand split into parts of the precision type by its
definition (r₀ = x, xᵢ = P(rᵢ), rᵢ₊₁ = rᵢ − xᵢ, computed in f32), P rounding
to nearest even, or where the algorithm splits also truncating (XLA's GPU
rewriter masks bits) — bit
operations on the f32 pattern, exact for bf16 and tf32, which share f32's
exponent field; the kept products formed and rounded in the accumulation
type; and the N terms summed in *every* order (every binary tree over
every subset split, numpy's IEEE f32/f16 arithmetic, correctly rounded).
Each value must lie in the element's stated [lo, hi] (exact rationals).
A second test holds the bound's width to the first-order figure the
module docstring states for each preset, so a bound grown loose fails too.
"""
from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from functools import lru_cache

import numpy as np
import pytest

from shlo_conform.oracle import accumulate
from shlo_conform.spec.bounds import ELEMENT, OVER, RANGE
from shlo_conform.spec.dsl import Range
from shlo_conform.spec.ops.dot_general import probes
from shlo_conform.spec.ops.dot_algorithm import PRESETS, Algorithm, element, stated_bound, whole
from shlo_conform.spec.types import TensorType, element_type


def _round_bits(x: np.float32, keep: int, mode: str) -> np.float32:
    """x (f32) rounded to `keep` stored significand bits, by its bit pattern:
    nearest-even or truncation (toward zero).  A carry into the exponent is
    the next binade (or ∞ past the largest), as IEEE rounding gives."""
    b = int(np.float32(x).view(np.uint32))
    drop = 23 - keep
    if drop == 0:
        return np.float32(x)
    mask = (1 << drop) - 1
    if mode == "near":
        half, low = 1 << (drop - 1), b & mask
        lsb = (b >> drop) & 1
        if low > half or (low == half and lsb):
            b += 1 << drop
    b &= ~mask & 0xFFFFFFFF
    return np.array(b, dtype=np.uint32).view(np.float32)[()]


KEEP = {"bf16": 7, "tf32": 10, "f32": 23}


def _parts(x, fmt: str, k: int, mode: str) -> list:
    """The k parts of x (f32) in precision type `fmt` (module docstring)."""
    out, r = [], np.float32(x)
    for _ in range(k):
        p = _round_bits(r, KEEP[fmt], mode)
        out.append(p)
        r = np.float32(r - p)
    return out


def _scheme(name: str):
    return {"BF16_BF16_F32": (1, {(0, 0)}), "F32_F32_F32": (1, {(0, 0)}), "TF32_TF32_F32": (1, {(0, 0)}),
            "BF16_BF16_F32_X3": (2, {(0, 0), (0, 1), (1, 0)}), "TF32_TF32_F32_X3": (2, {(0, 0), (0, 1), (1, 0)}),
            "BF16_BF16_F32_X6": (3, {(i, j) for i in range(3) for j in range(3) if i + j <= 2})}[name]


def _all_sums(terms: tuple) -> set:
    """Every f32 value a binary tree of f32 additions over `terms` gives."""
    n = len(terms)

    @lru_cache(maxsize=None)
    def sums(mask: int) -> frozenset:
        idx = [i for i in range(n) if mask >> i & 1]
        if len(idx) == 1:
            return frozenset({terms[idx[0]]})
        out = set()
        sub = (mask - 1) & mask
        while sub:
            rest = mask ^ sub
            if sub < rest:   # each unordered split once (addition commutes)
                for a in sums(sub):
                    for b in sums(rest):
                        out.add(float(np.float32(np.float32(a) + np.float32(b))))
            sub = (sub - 1) & mask
        return frozenset(out)
    return set(sums((1 << n) - 1))


def _every_result(name: str, pairs) -> set:
    fmt = PRESETS[name].lhs_precision_type
    k, kept = _scheme(name)
    out = set()
    for mode in (("near", "trunc") if k > 1 else ("near",)):   # no split: the spec's convert, to nearest
        terms = []
        for a, b in pairs:
            pa, pb = _parts(a, fmt, k, mode), _parts(b, fmt, k, mode)
            terms += [float(np.float32(pa[i] * pb[j])) for i, j in sorted(kept)]
        out |= _all_sums(tuple(terms))
    return out


def _f32(rng, lo_exp, hi_exp) -> np.float32:
    m = rng.integers(1 << 23, 1 << 24)
    e = int(rng.integers(lo_exp, hi_exp))
    return np.float32(math.ldexp(float(m) * (1 if rng.random() < 0.5 else -1), e - 23))


def _cases(rng, n: int, count: int):
    """Random f32 pairs at ordinary magnitudes, bf16 ties (the 16 low bits
    0x8000), and pairs whose parts fall below bf16's normal range."""
    out = []
    for t in range(count):
        if t % 3 == 0:
            pairs = [(_f32(rng, -3, 4), _f32(rng, -3, 4)) for _ in range(n)]
        elif t % 3 == 1:
            tie = lambda: np.array((int(rng.integers(0x3E00, 0x4100)) << 16) | 0x8000 | int(rng.integers(0, 2)) << 31,
                                   dtype=np.uint32).view(np.float32)[()]
            pairs = [(tie(), _f32(rng, -2, 3)) for _ in range(n)]
        else:
            pairs = [(_f32(rng, -120, -110), _f32(rng, -20, -10)) for _ in range(n)]
        out.append([(float(a), float(b)) for a, b in pairs])
    return out


def _inside(v: float, r) -> bool:
    assert isinstance(r, Range), r
    return Fraction(r.lo) <= Fraction(v) <= Fraction(r.hi)


@pytest.mark.parametrize("name, n", [("BF16_BF16_F32", 3), ("BF16_BF16_F32_X3", 2), ("BF16_BF16_F32_X6", 1),
                                     ("TF32_TF32_F32", 3), ("TF32_TF32_F32_X3", 2), ("F32_F32_F32", 3)])
def test_every_way_a_preset_computes_lies_inside_the_bound(name, n):
    rng = np.random.default_rng(sum(map(ord, name)) + n)
    checked = 0
    for pairs in _cases(rng, n, 12):
        r = element(pairs, PRESETS[name])
        for v in _every_result(name, pairs):
            assert _inside(v, r), (name, pairs, v, r)
            checked += 1
    assert checked >= 12


def test_the_f16_preset_inside_the_bound():
    """F16_F16_F16 on f16 operands: no split, each product and sum rounded
    in f16 (float64 holds each f16 product and each sum of two f16 values
    exactly, so one rounding to f16 is IEEE's), every order."""
    rng = np.random.default_rng(7)
    for _ in range(12):
        pairs = [(float(np.float16(rng.uniform(-30, 30))), float(np.float16(rng.uniform(-30, 30)))) for _ in range(4)]
        terms = tuple(float(np.float16(a * b)) for a, b in pairs)

        @lru_cache(maxsize=None)
        def sums(mask):
            idx = [i for i in range(4) if mask >> i & 1]
            if len(idx) == 1:
                return frozenset({terms[idx[0]]})
            out, sub = set(), (mask - 1) & mask
            while sub:
                for a in sums(sub):
                    for b in sums(mask ^ sub):
                        out.add(float(np.float16(a + b)))
                sub = (sub - 1) & mask
            return frozenset(out)
        r = element(pairs, PRESETS["F16_F16_F16"])
        for v in sums(15):
            assert _inside(v, r), (pairs, v, r)


# First-order relative widths (module docstring, "Per preset"): radius / Σ|a·b| ≤ stated·(1 + 1/32) — the
# second-order terms (the parts' (1 + ε) factors: 2ε = 1/64 for a bf16 split) — on ordinary magnitudes (no
# underflow term matters there).
EPS_BF16, EPS_TF32, U32 = 2.0 ** -7, 2.0 ** -10, 2.0 ** -24   # a split's ε; without a split, half of it
STATED = {
    "BF16_BF16_F32": lambda n: EPS_BF16 + EPS_BF16 ** 2 / 4 + n * U32,
    "BF16_BF16_F32_X3": lambda n: 3 * EPS_BF16 ** 2 + 3 * n * U32,
    "BF16_BF16_F32_X6": lambda n: 4 * EPS_BF16 ** 3 + 6 * n * U32,
    "TF32_TF32_F32": lambda n: EPS_TF32 + EPS_TF32 ** 2 / 4 + n * U32,
    "TF32_TF32_F32_X3": lambda n: 3 * EPS_TF32 ** 2 + 3 * n * U32,
    "F32_F32_F32": lambda n: n * U32,
}


@pytest.mark.parametrize("name", sorted(STATED))
def test_the_bound_is_the_stated_one(name):
    rng = np.random.default_rng(11)
    n = 8
    for _ in range(20):
        pairs = [(float(_f32(rng, -3, 4)), float(_f32(rng, -3, 4))) for _ in range(n)]
        r = element(pairs, PRESETS[name])
        radius = max(Fraction(r.hi) - Fraction(r.nearest), Fraction(r.nearest) - Fraction(r.lo))
        mag = sum(abs(Fraction(a) * Fraction(b)) for a, b in pairs)
        # the outward rounding into f32 may add one f32 ulp of the end
        slack = 2 * U32 * (abs(Fraction(r.nearest)) + radius)
        assert radius <= Fraction(STATED[name](n)) * mag * Fraction(33, 32) + slack, (name, float(radius / mag))


def test_the_split_bound_is_not_loose_for_x3():
    """X3's error on a bf16 tie-heavy operand reaches a good part of the
    stated 3ε²: the bound is not an order of magnitude too wide."""
    a = float(np.array(0x3F808080, dtype=np.uint32).view(np.float32)[()])   # 1 + 2^-8 + 2^-16: both parts nonzero
    b = float(np.array(0x3F80C0C0, dtype=np.uint32).view(np.float32)[()])
    worst = max(abs(Fraction(v) - Fraction(a) * Fraction(b)) for v in _every_result("BF16_BF16_F32_X3", [(a, b)]))
    r = element([(a, b)], PRESETS["BF16_BF16_F32_X3"])
    radius = Fraction(r.hi) - Fraction(r.nearest)
    assert worst > 0 and radius < 64 * worst


def test_specials():
    """NaN and ∞·0 are NaN; an infinity without a split is IEEE's; under a split NaN is offered too."""
    alg, x3 = PRESETS["BF16_BF16_F32"], PRESETS["BF16_BF16_F32_X3"]
    assert math.isnan(element([(math.nan, 1.0)], alg))
    assert math.isnan(element([(math.inf, 0.0)], alg))
    assert element([(math.inf, 2.0), (1.0, 1.0)], alg) == math.inf
    got = element([(-math.inf, 2.0), (1.0, 1.0)], x3)
    assert got.alternatives[next(k for k in got.alternatives if "exact" in k)] == -math.inf
    assert any(isinstance(v, float) and math.isnan(v) for v in got.alternatives.values())


@pytest.mark.parametrize("name, keep", [("BF16_BF16_F32", 7), ("TF32_TF32_F32", 10)])
def test_the_unsplit_bound_is_sharp(name, keep):
    """x = y = 1 + 2^-(keep+1), a tie that rounds to 1 (even): the exact product
    exceeds the computed 1 by 2·2^-(keep+1) + 2^-2(keep+1) — the bound's own
    first-order term, reached within 2%: a bound shrunk by a quarter fails
    the containment test above on this pair."""
    x = 1 + 2.0 ** -(keep + 1)
    [v] = _every_result(name, [(x, x)])
    assert v == 1.0
    r = element([(x, x)], PRESETS[name])
    err = Fraction(x) ** 2 - 1
    assert _inside(v, r) and Fraction(r.nearest) - Fraction(r.lo) <= err * Fraction(51, 50)


# ---------------------------------------------------------------- the whole-array route
def _operands(rng, name: str, M: int, K: int, N: int):
    """f32 operands (f64 for the f64 preset) over 40 binades (12 for the f16
    presets: f16's range), with bf16 ties, values past bf16's range and below
    f32's normal range, zeros, and — in a few rows and columns — NaN and
    infinities."""
    wide = name.startswith("F64")
    dt = np.float64 if wide else np.float32
    e = 6 if name.startswith("F16") else 20
    A = (rng.standard_normal((1, M, K)) * np.exp2(rng.integers(-e, e, (1, M, K)))).astype(dt)
    B = rng.standard_normal((1, K, N)).astype(dt)
    A[0, 0, :3] = [0.0, -0.0, np.float32(2.0 ** -140)]
    A[0, 1, 0] = np.array(0x3F808000, dtype=np.uint32).view(np.float32)   # a bf16 tie
    A[0, 2, 1] = 2.0 ** 127 * 1.5   # past bf16's and f16's range (an f32 value)
    A[0, 3, 2], B[0, 4, 1], B[0, 5, 2] = np.inf, -np.inf, np.nan
    big = 2.0 ** (520 if wide else 7 if name.startswith("F16") else 100)   # sums past the accumulator's range
    A[0, 6, :] = rng.standard_normal(K) * big
    B[0, :, 6] = rng.standard_normal(K) * big
    return A.astype(np.float64), B.astype(np.float64), element_type("f64" if wide else "f32")


def _enclosures_hold(ans, A, B, alg):
    """Every stage's enclosures of s − B and s + B contain them, B the
    exact `stated_bound` (so an enclosure off by less than the result's
    rounding is caught too, not only one that changes bits)."""
    _, M, _ = A.shape
    N = B.shape[2]
    idx = np.flatnonzero(ans.kind == RANGE)
    for stage in ans.stages:
        _, (l_lo, l_hi), (h_lo, h_hi) = stage(idx)
        for k, i in enumerate(idx.tolist()):
            m, j = divmod(i, N)
            pairs = list(zip(A[0, m, :].tolist(), B[0, :, j].tolist()))
            s = sum((Fraction(a) * Fraction(b) for a, b in pairs), Fraction(0))
            b = stated_bound(pairs, alg)
            ends = [l_lo[k], l_hi[k], h_lo[k], h_hi[k]]
            if any(np.isnan(e) for e in ends):
                continue   # this stage does not enclose it (a later one, or `element`, does)
            q = [Fraction(*e.as_integer_ratio()) for e in ends]   # (float64, or long double for f64)
            assert q[0] <= s - b <= q[1] and q[2] <= s + b <= q[3], (alg, i)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_the_whole_array_route_states_the_same_bits(name):
    """`dot_algorithm.whole` (float64 enclosures of s and of the bound) and
    `element` (exact rationals) give the same expectation bit for bit —
    primaries and both ends — for every preset, in the accumulation type and
    (BF16_BF16_F32) in a narrower result type; the enclosures decide almost
    every element (specials and overflowing operands are `element`'s)."""
    rng = np.random.default_rng(sum(map(ord, name)))
    alg = PRESETS[name]
    M, K, N = 8, 48, 7
    A, B, operands = _operands(rng, name, M, K, N)
    af = alg.formats()[2]
    results = [af.name] + (["bf16"] if name == "BF16_BF16_F32" else [])
    for rname in results:
        rt = element_type(rname)

        def each(i):
            g, rest = divmod(i, M * N)
            m, j = divmod(rest, N)
            return element(list(zip(A[g, m, :].tolist(), B[g, :, j].tolist())), alg)
        ans = whole(A, B, alg, operands.format, rt.format, each, probes(rt))
        assert ans is not None, (name, rname)
        t = TensorType((1, M, N), rt)
        fast = accumulate.expectation(ans, t)
        assert accumulate.STATS[-1]["exact route"] <= 2 * (M + N), accumulate.STATS[-1]
        # every preset but f64 (its product past float64 is `element`'s) and f16 operands summed in f32 (no
        # f16 product reaches f32's range) has sums past its accumulator's range
        assert (ans.kind == OVER).any() or name in ("F64_F64_F64", "F16_F16_F32")
        _enclosures_hold(ans, A, B, alg)
        slow = accumulate.expectation(dataclasses.replace(ans, kind=np.full(len(ans.kind), ELEMENT, np.int8)), t)
        assert fast.kind == slow.kind
        for field in ("bits", "lo", "hi"):
            assert np.array_equal(getattr(fast, field), getattr(slow, field)), (name, rname, field)


def test_the_whole_array_route_leaves_what_it_cannot_state():
    """A scheme the spec does not define, and a result wider than the
    accumulation type, go element by element (None)."""
    A, B = np.ones((1, 2, 3)), np.ones((1, 3, 2))
    f32 = element_type("f32").format
    odd = Algorithm("bf16", "bf16", "f32", 2, 1, 5)
    assert odd.scheme() is None and whole(A, B, odd, f32, f32, None, {}) is None
    assert whole(A, B, PRESETS["F16_F16_F16"], f32, f32, None, {}) is None
