"""spec/ieee.py's own tests: IEEE 754's operations as the seed names them,
exact (a Fraction) where the result is a finite nonzero real, against
independent truth — Python's Fractions and floats, C's fmod (math.fmod:
exact by the C standard), mpmath, and definitions written out."""
from __future__ import annotations

import math
import random
from fractions import Fraction

import mpmath

from shlo_conform.spec import ieee


def _floats(rng: random.Random, n: int) -> list[float]:
    """Finite nonzero doubles of both signs over many binades."""
    return [rng.choice((-1, 1)) * rng.uniform(1, 2) * 2.0 ** rng.randint(-60, 60) for _ in range(n)]


def test_division_is_exact_for_finite_nonzero_operands_of_either_sign():
    """The exact quotient (its rounding is the caller's: a float quotient
    rounded again would be a second rounding), and IEEE's specials as
    Python's float division and the signs rule give them."""
    rng = random.Random(1)
    for a, b in zip(_floats(rng, 500), _floats(rng, 500)):
        got = ieee.division(a, b)
        assert isinstance(got, Fraction) and got == Fraction(a) / Fraction(b), (a, b)
    assert ieee.division(-1.0, 3.0) == Fraction(-1, 3)
    assert math.copysign(1, ieee.division(-0.0, 5.0)) == -1 and ieee.division(0.0, -5.0) == 0
    assert ieee.division(-1.0, 0.0) == -math.inf and ieee.division(1.0, -0.0) == -math.inf
    assert math.isnan(ieee.division(0.0, 0.0)) and math.isnan(ieee.division(math.nan, 0.0))
    assert ieee.division(-1.0, math.inf) == 0 and math.copysign(1, ieee.division(-1.0, math.inf)) == -1


def test_addition_and_multiplication_are_exact_for_finite_operands_of_either_sign():
    """The exact sum and product of binary64 values (up to 106 significant
    bits: no binary64 result holds them), IEEE's zeros with their signs,
    and the specials as Python's floats give them."""
    rng = random.Random(4)
    for a, b in zip(_floats(rng, 500), _floats(rng, 500)):
        assert ieee.multiplication(a, b) == Fraction(a) * Fraction(b), (a, b)
        got = ieee.addition(a, b)
        assert got == Fraction(a) + Fraction(b) and (isinstance(got, Fraction) or got == 0), (a, b)
    assert ieee.multiplication(-(1 + 2.0 ** -52), 1 + 2.0 ** -52) == -(1 + Fraction(1, 2 ** 52)) ** 2
    assert math.copysign(1, ieee.multiplication(-0.0, 3.0)) == -1 and math.copysign(1, ieee.addition(-0.0, -0.0)) == -1
    assert math.copysign(1, ieee.addition(-1.5, 1.5)) == 1 and math.isnan(ieee.multiplication(0.0, math.inf))
    assert ieee.subtraction(1.0, math.inf) == -math.inf


def test_remainder_toward_zero_is_cs_fmod():
    """The seed's float `remainder` (a - b·trunc(a/b), the dividend's sign)
    is C's fmod, which the C standard makes exact: math.fmod on every pair
    of a grid where |a| < |b|, |a| > |b|, signs and specials all occur."""
    rng = random.Random(2)
    grid = [0.0, -0.0, 1.0, -1.0, 3.0, -3.0, 0.5, -2.5, 7.25, 1e300, -1e-300, 5e-324, math.inf, -math.inf,
            math.nan] + _floats(rng, 30)
    for a in grid:
        for b in grid:
            got = ieee.remainder_toward_zero(a, b)
            try:
                want = math.fmod(a, b)
            except ValueError:   # fmod(inf, y) and fmod(x, 0): NaN
                want = math.nan
            if math.isnan(want):
                assert math.isnan(got), (a, b, got)
            else:
                assert got == want and math.copysign(1, got) == math.copysign(1, want), (a, b, got, want)


def test_rsqrt_approximates_the_reciprocal_square_root():
    """rSqrt's Approx function (what mpmath's Ziv loop evaluates where the
    whole-array route declines) is 1/√t: mpmath's own at 60 bits."""
    with mpmath.workprec(60):
        for t in (0.25, 2.0, 3.0, 1e-300, 7e250):
            assert abs(ieee.reciprocal_sqrt(mpmath.mpf(t)) / (1 / mpmath.sqrt(mpmath.mpf(t))) - 1) < mpmath.mpf(2) ** -55
    assert ieee.rSqrt(4.0) == Fraction(1, 2)


def test_floor_log2_meets_its_definition():
    """2^e <= q < 2^(e+1), on rationals whose bit-length estimate is off by
    one either way (1/3, 3/2, 255/256, 257/256 …) and random ones."""
    rng = random.Random(3)
    qs = [Fraction(1, 3), Fraction(3, 2), Fraction(255, 256), Fraction(257, 256), Fraction(1), Fraction(2),
          Fraction(7, 8), Fraction(9, 8), Fraction(1, 2 ** 70), Fraction(2 ** 70 - 1)]
    qs += [Fraction(rng.randint(1, 10 ** 12), rng.randint(1, 10 ** 12)) for _ in range(300)]
    for q in qs:
        e = ieee.floor_log2(q)
        assert Fraction(2) ** e <= q < Fraction(2) ** (e + 1), (q, e)
