"""oracle/affine.py's `_order_allowance`: what a sum's evaluation order may
add, bounded by the larger sum of one sign — held against every order of a
small sum and a greedy adversary on a long one, in a narrow format where
rounding is coarse.

The evaluations are written here, with their own round-to-nearest-even
(`_rn`: the significand scaled to an integer and rounded by Python's
`round`, which ties to even) — none of the oracle's rounding is used."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from shlo_conform.oracle import affine
from shlo_conform.spec.types import BF16, F16


def _rn(x: float, p: int) -> float:
    """x rounded to p significant bits, ties to even (x a float64 sum of two
    such values: exact in float64 for the magnitudes used here)."""
    if x == 0:
        return 0.0
    m, e = math.frexp(x)
    return math.ldexp(round(m * 2 ** p), e - p)


def _allowance(fmt, a, b) -> float:
    """The allowance of Σ aᵢ·bᵢ, exact operands (each term's range one value)."""
    c = np.array([float(sum(Fraction(x) * Fraction(y) for x, y in zip(a, b)))])
    mag = np.array([float(sum(abs(Fraction(x) * Fraction(y)) for x, y in zip(a, b)))])
    return float(affine._order_allowance(fmt, len(a), affine._one_sign(c, mag, mag, len(a)), mag)[0])


def _every_tree(values: list, p: int) -> set:
    """The results of every way to add `values` pairwise (every binary tree,
    every order of its leaves), each addition rounded to p bits."""
    if len(values) == 1:
        return {values[0]}
    out = set()
    for i in range(len(values)):
        for j in range(i + 1, len(values)):
            rest = [v for k, v in enumerate(values) if k not in (i, j)]
            out |= _every_tree(rest + [_rn(values[i] + values[j], p)], p)
    return out


def test_every_order_of_a_small_sum_lies_inside_and_the_bound_is_not_gammas():
    """Six bf16 products of mixed sign, summed by every binary tree, with the
    products rounded to bf16 first or kept exact (a wider product, or an
    FMA's): every result is inside exact ± allowance, and the allowance is
    below γₙ·Σ|terms| (the bound by magnitudes)."""
    rng = np.random.default_rng(3)
    worst = 0.0
    for trial in range(6):
        a = [_rn(v, 8) for v in rng.standard_normal(6)]
        b = [_rn(v, 8) for v in rng.standard_normal(6)]
        if all(x * y > 0 for x, y in zip(a, b)) or all(x * y < 0 for x, y in zip(a, b)):
            continue
        exact = float(sum(Fraction(x) * Fraction(y) for x, y in zip(a, b)))
        bound = _allowance(BF16, a, b)
        for terms in ([_rn(x * y, 8) for x, y in zip(a, b)], [x * y for x, y in zip(a, b)]):
            results = _every_tree(terms, 8)
            assert len(results) > 1   # the orders do differ
            dev = max(abs(r - exact) for r in results)
            assert dev <= bound, (trial, dev, bound)
            worst = max(worst, dev / bound)
        u = 2.0 ** -8
        gamma = 6 * u / (1 - 6 * u) * sum(abs(x * y) for x, y in zip(a, b))
        assert bound < gamma
    assert worst > 0.05   # some order reaches a visible share of it: the comparison is not vacuous


def _greedy(terms: list, p: int, sign: int) -> float:
    """An adversary's chain: the positive terms first, then the negative ones
    (partial sums as large as they get), each step taking the remaining term
    of its group whose rounding moves the sum furthest towards `sign`."""
    s = 0.0
    for group in ([t for t in terms if t > 0], [t for t in terms if t <= 0]):
        while group:
            k = max(range(len(group)), key=lambda i: sign * (_rn(s + group[i], p) - (s + group[i])))
            s = _rn(s + group.pop(k), p)
    return s


def test_a_greedy_adversary_on_a_long_sum_stays_inside_and_reaches_a_share_of_it():
    """256 f16 products (u = 2^-11, n·u = 1/8): the adversary's sums, both
    ways, are inside exact ± allowance and reach at least a tenth of it —
    so a backend's deviation of that size is a real possibility the bound
    must admit, not slack; and with as much of one sign as of the other
    the allowance is about half of γₙ·Σ|terms|."""
    rng = np.random.default_rng(1)
    a = [_rn(v, 11) for v in rng.standard_normal(256)]
    b = [_rn(v, 11) for v in rng.standard_normal(256)]
    terms = [_rn(x * y, 11) for x, y in zip(a, b)]
    exact = float(sum(Fraction(x) * Fraction(y) for x, y in zip(a, b)))
    bound = _allowance(F16, a, b)
    for sign in (1, -1):
        dev = _greedy(terms, 11, sign) - exact
        assert sign * dev > 0.1 * bound, (dev, bound)
        assert abs(dev) <= bound, (dev, bound)
    u = 2.0 ** -11
    assert bound <= 0.55 * 256 * u / (1 - 256 * u) * sum(abs(x * y) for x, y in zip(a, b))


def test_terms_of_one_sign_keep_gammas_bound():
    """All terms positive: the largest partial sum is the whole sum, and the
    allowance is γₙ·Σ|terms| to within the product term — no tighter (a
    chain of equal terms does reach near it in narrow formats)."""
    a, b = [1.0] * 16, [0.5] * 16
    u = 2.0 ** -11
    gamma = 16 * u / (1 - 16 * u) * 8.0
    bound = _allowance(F16, a, b)
    assert 0.99 * gamma <= bound <= gamma * (1 + 2.0 ** -20) + 16 * 2.0 ** (F16.emin - F16.precision)
