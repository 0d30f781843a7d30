"""Ziv's strategy: evaluate a real function at rising precision until its
correctly rounded value in the target format is decided.

Functions with an arb counterpart (real_functions.TABLE) are decided by
rigorous.py from proven enclosures; the mpmath loop here is the fallback for
the rest (annex G's composed complex formulas), and its bound is heuristic:

An `Approx(f, *args)` names a real number the spec defines (sin x, exp x …)
that is generally not representable.  We evaluate it with mpmath at a working
precision p and enclose the true value in an interval; when both ends of the
interval round to the same bit pattern, that pattern is the correctly rounded
result.  Otherwise p doubles.  Exact midpoints between two representable
numbers can never be decided this way (the op modules return exact values
for those, e.g. sqrt of a perfect square); after `MAX_PRECISION` bits we
round the best value and say that the rounding was undecided.

The enclosure radius is the larger of
* 2^-(p-8) relative: mpmath's functions are accurate to a few units in the
  last place of the working precision (256 ulps of slack), and
* twice the distance between the values at p and at p + 32 bits: a cheap
  guard against cancellation inside a composed `f` (e.g. log|z| near |z| = 1
  in Annex G's clog), whose error the relative bound alone would not see.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import mpmath

from ..spec.types import FloatFormat
from . import rigorous
from .rounding import round_bits

START_EXTRA_BITS = 20
MAX_PRECISION = 4096


@dataclass(frozen=True)
class ZivResult:
    bits: int
    precision: int  # working precision that decided it (the cap when undecided)
    decided: bool


def _mp(a):
    """An exact argument as an mpmath number at the current precision (floats
    and dyadic Fractions are exact once the precision holds their bits)."""
    if isinstance(a, Fraction):
        return mpmath.mpf(a.numerator) / a.denominator
    if isinstance(a, complex):
        return mpmath.mpc(a.real, a.imag)
    return mpmath.mpf(a)


def _eval(f, args, prec: int):
    with mpmath.workprec(prec):
        y = f(*[_mp(a) for a in args])
        if isinstance(y, mpmath.mpc):
            if y.imag != 0:
                raise ValueError(f"Approx function {getattr(f, '__name__', f)} returned a complex value {y}")
            y = y.real
        return mpmath.mpf(y)


def evaluate(f, args, fmt: FloatFormat) -> ZivResult:
    """Correctly rounded bits of f(*args) in `fmt`, by precision escalation:
    proven from arb's enclosures where the function has an arb counterpart
    (rigorous.py), else by the mpmath loop below."""
    r = rigorous.evaluate(f, args, fmt)
    if r is not None:
        return ZivResult(*r)
    return evaluate_mpmath(f, args, fmt)


def evaluate_mpmath(f, args, fmt: FloatFormat) -> ZivResult:
    """The mpmath loop alone (the fallback; tests compare it with arb's)."""
    p = fmt.precision + START_EXTRA_BITS
    while True:
        y = _eval(f, args, p)
        y2 = _eval(f, args, p + 32)
        if not (mpmath.isfinite(y2)):
            return ZivResult(round_bits(y2, fmt), p, True)
        with mpmath.workprec(2 * p + 64):
            radius = abs(y2) * mpmath.ldexp(1, -(p + 32 - 8)) + 2 * abs(y2 - y)
            lo, hi = y2 - radius, y2 + radius
        if y2 == 0 and radius == 0:
            # mpmath has no signed zero; op modules decide exact zeros before
            # returning an Approx, so reaching this is a spec-module defect.
            return ZivResult(round_bits(0.0, fmt), p, False)
        b_lo, b_hi = round_bits(lo, fmt), round_bits(hi, fmt)
        # Each bound rounded, then compared; an interval straddling zero gives
        # patterns of different sign and is therefore (rightly) undecided.
        if b_lo == b_hi:
            return ZivResult(b_lo, p, True)
        if p >= MAX_PRECISION:
            return ZivResult(round_bits(y2, fmt), p, False)
        p *= 2
