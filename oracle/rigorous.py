"""Correct rounding decided from a guaranteed enclosure (ball arithmetic).

For an `Approx(f, *args)` whose `f` has an arb counterpart in
real_functions.TABLE, we evaluate it with python-flint's arb at working
precision p: Arb returns a ball [m ± r] that is *proven* to contain the true
value (FLINT's documented contract for every arb function).  Rounding is
monotone, so when both ends of the ball round to the same bit pattern in the
target format, every value in the ball does, the true one included: that
pattern is the correctly rounded result, with no bound taken on trust.
Otherwise p doubles, up to ziv.MAX_PRECISION.

A ball that straddles zero has ends of different sign, so it is (rightly)
undecided.  Exact midpoints between two representable numbers are never
decided by a ball of nonzero radius; the op modules return exact values for
the cases where the true value is one (sqrt of a perfect square …).

Arguments must be exact in arb: Python floats and ints are (arb stores a
binary64 exactly); anything else (a non-dyadic Fraction) goes to the mpmath
path instead, as does any `f` without an arb counterpart.
"""
from __future__ import annotations

import mpmath
from mpmath.libmp import from_man_exp
from flint import arb, ctx

from ..spec.types import FloatFormat
from .real_functions import TABLE
from .rounding import round_bits

START_EXTRA_BITS = 20
MAX_PRECISION = 4096


def _end(a: arb):
    """An exact arb (a ball end) as an exact mpmath number, which round_bits
    reads without building giant integers for huge exponents.  Built from
    the raw (man, exp) with no precision: mpmath.mpf((man, exp)) would round
    the mantissa to mpmath's working precision (53 bits), a first rounding
    before round_bits' — wrong where the end lies within 2^-53 of a midpoint
    of a result with fewer bits (f64 subnormals: atan2(3·2^-1074, 2) is a
    hair below 1.5 quanta, and the ends rounded to 53 bits were the tie)."""
    man, exp = a.man_exp()
    return mpmath.mp.make_mpf(from_man_exp(int(man), int(exp)))


def supports(f, args) -> bool:
    return f in TABLE and all(isinstance(a, (float, int)) and not isinstance(a, bool) for a in args)


def enclose(f, args, prec: int):
    """The ends (exact mpmath numbers) of the ball arb gives for f(*args) at
    working precision `prec`, or None when the ball is not finite.  The ends
    are read at `prec` too: read at a lower precision, arb rounds them
    outward to it."""
    old = ctx.prec
    ctx.prec = prec
    try:
        ball = TABLE[f].arb(*[arb(a) for a in args])
        if not ball.is_finite():
            return None
        return _end(ball.lower()), _end(ball.upper())
    finally:
        ctx.prec = old


def decide(ends, fmt: FloatFormat) -> int | None:
    """The bits every point between the ends rounds to in `fmt`, or None."""
    if ends is None:
        return None
    lo, hi = round_bits(ends[0], fmt), round_bits(ends[1], fmt)
    return lo if lo == hi else None


def evaluate(f, args, fmt: FloatFormat):
    """(bits, precision, decided) of f(*args) correctly rounded into `fmt`,
    or None when `f` or an argument is outside what arb covers here."""
    if not supports(f, args):
        return None
    p = fmt.precision + START_EXTRA_BITS
    while True:
        ends = enclose(f, args, p)
        bits = decide(ends, fmt)
        if bits is not None:
            return bits, p, True
        if p >= MAX_PRECISION:
            if ends is None or (ends[0] <= 0 <= ends[1]):
                return None   # no usable enclosure: let the mpmath loop state its value, as before
            with mpmath.workprec(2 * p):
                mid = (ends[0] + ends[1]) / 2
            return round_bits(mid, fmt), p, False
        p *= 2
