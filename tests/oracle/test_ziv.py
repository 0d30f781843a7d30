"""Ziv's loop against values computed independently at 1000 bits.

Truth: mpmath at 1000 bits, then rounded by `round_bits` (checked against
ml_dtypes/numpy in test_rounding.py): a single evaluation far beyond any
precision the loop's decision needs, so it shares no escalation logic with it.
"""
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from shlo_conform.oracle.rounding import round_bits
from shlo_conform.oracle.ziv import evaluate
from shlo_conform.spec.types import BF16, F16, F32, F64


def _truth(f, x, fmt):
    with mpmath.workprec(1000):
        return round_bits(mpmath.mpf(f(mpmath.mpf(x))), fmt)


@pytest.mark.parametrize("fmt", [F16, F32, F64, BF16], ids=lambda f: f.name)
@pytest.mark.parametrize("f", [mpmath.sin, mpmath.exp, mpmath.log, mpmath.tan, mpmath.atan], ids=lambda f: f.__name__)
def test_matches_1000_bit_truth(f, fmt):
    rng = np.random.default_rng(7)
    xs = np.concatenate([rng.uniform(0.01, 10, 40), [1e22, 355.0, 1e-8, 0.5]])
    for x in xs.tolist():
        assert evaluate(f, (x,), fmt).bits == _truth(f, x, fmt), x


def test_near_midpoint_escalates_and_decides():
    """sqrt(m^2 + d): m an f32 midpoint, m^2 perturbed by one f64 ulp, so the
    root lies within ~2^-54 of the midpoint: the starting 44 bits cannot
    decide; the loop must climb and still land on the right side."""
    m = Fraction(2**24 + 1, 2**24)  # 1 + 2^-24: between 1 and 1 + 2^-23
    for sign in (1, -1):
        x = float(m * m) + sign * np.spacing(float(m * m))
        z = evaluate(mpmath.sqrt, (x,), F32)
        want = 0x3F800001 if sign > 0 else 0x3F800000
        assert z.decided and z.precision > F32.precision + 20 and z.bits == want, (sign, hex(z.bits))


def test_exact_midpoint_is_reported_undecided():
    """sqrt((1 + 2^-24)^2) is exactly an f32 midpoint: no enclosure decides it,
    and the loop says so instead of guessing."""
    m = Fraction(2**24 + 1, 2**24)
    z = evaluate(mpmath.sqrt, (m * m,), F32)
    assert not z.decided
    assert z.bits in (0x3F800000, 0x3F800001)


def test_cancellation_inside_f_is_caught():
    """f(t) = (1 + t) - 1 at t = 2^-60: at 44 bits the sum rounds to 1 and f
    gives 0, while the value is 2^-60; the p vs p+32 comparison must push on."""
    f = lambda t: (1 + t) - 1
    z = evaluate(f, (2.0**-60,), F32)
    assert z.decided and z.bits == round_bits(2.0**-60, F32)


def test_overflow_and_underflow():
    assert evaluate(mpmath.exp, (1000.0,), F32).bits == 0x7F800000
    assert evaluate(mpmath.exp, (-1000.0,), F32).bits == 0x00000000
