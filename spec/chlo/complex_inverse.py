"""The complex inverse trigonometric and hyperbolic functions of CHLO
(chlo.asin, acos, atan, asinh, acosh, atanh of complex<f32> / complex<f64>),
stated as spec/annex_g.py states the spec's own complex functions.

Each function takes a Python complex whose parts are exact binary64 values
and returns the pair (re, im) in the vocabulary of `dsl.Elementwise`:
floats for the values decided outright (±0 with its sign, ±inf, NaN, and
the exact points: acos(1) = 0), `Approx` of a named real function for the
rest, `ImplDefined` where Annex G leaves a sign unspecified.

Why these values.  The functions are the principal values of C99 (7.3.5,
7.3.6): casin, cacos, catan, casinh, cacosh, catanh, with C99 Annex G's
branch cuts and the side of a cut chosen by the sign of a zero part (G.6:
"the sign of zero … distinguishes the two sides of a cut"): cacos and
casin cut the real axis outside [-1, 1], catanh and cacosh the real axis
outside (-1, 1) and left of 1, casinh and catan the imaginary axis outside
[-i, i].  Finite operands: every part is the exact value of that principal
function, its exact zeros and the few exact points (0, ±π/2 and π stated
as `Approx` of π multiples, acosh(1) = 0) decided here by hand — the other
values are transcendental at every nonzero algebraic point
(Lindemann–Weierstrass: each is a logarithm or arctangent of an algebraic
number other than 1), so no other part is exactly representable.
Non-finite parts: Annex G's tables, G.6.1.1 (cacos), G.6.2.1 (cacosh),
G.6.2.2 (casinh), G.6.2.3 (catanh), and casin(z) = -i casinh(iz),
catan(z) = -i catanh(iz) (7.3.5.2, 7.3.5.3), through Annex G's symmetries
(conj, odd).  As for every complex function of the spec family, the seed's
"Errors" clause makes Annex G's answer for a non-finite operand component
the first of two alternatives, any value the second
(`annex_g.errors_clause`).

The real functions (`casin_re`, …) are evaluated with mpmath.  mpmath's
complex asin/acos/atanh lose every bit of a tiny part (asin(0.5 + 1e-300i)
has an imaginary part 1.15e-300; mpmath at 60 bits answers 0): their
formulas add 1 to z or z², so each is evaluated with extra working bits
for the exponent spread of its operand (`_spread`: twice the sum of the
parts' exponent magnitudes — the z² of sqrt(1 − z²) — plus 64), then
rounded to the caller's precision; catanh's parts are written instead as
functions of exact rationals (`catanh_re`, `catanh_im`), free of
cancellation; the oracle's Ziv loop compares two precisions on top
(oracle/ziv.py).  tests/oracle/test_chlo_complex.py checks them against
python-flint's acb (ball arithmetic) at hard points.
"""
from __future__ import annotations

import math
from fractions import Fraction

import mpmath

from .. import annex_g
from ..annex_g import HALF_PI, PI, QUARTER_PI, THREE_QUARTER_PI, UNSPEC_INF, UNSPEC_ZERO, cconj, all_finite, \
    cneg, odd_even, sign_bit, times_minus_i
from ..dsl import Approx

INF = math.inf
NAN = math.nan


def _spread(*vs) -> int:
    """Extra working bits for an operand x + iy (module docstring)."""
    return 2 * sum(abs(int(mpmath.mag(v))) for v in vs if v != 0) + 64


def _part(fn, k: int):
    """The real (k = 0) or imaginary (k = 1) part of mpmath's complex `fn`
    at x + iy, evaluated with `_spread`'s extra bits and rounded to the
    working precision of the caller."""
    def f(x, y):
        with mpmath.extraprec(_spread(x, y)):
            v = fn(mpmath.mpc(x, y))
        return +(v.real if k == 0 else v.imag)
    f.__name__ = f.__qualname__ = f"c{fn.__name__}_{'re' if k == 0 else 'im'}"
    f.__doc__ = f"The {'real' if k == 0 else 'imaginary'} part of the principal complex {fn.__name__}(x + iy)."
    return f


casinh_re, casinh_im = _part(mpmath.asinh, 0), _part(mpmath.asinh, 1)
cacosh_re, cacosh_im = _part(mpmath.acosh, 0), _part(mpmath.acosh, 1)
cacos_re, cacos_im = _part(mpmath.acos, 0), _part(mpmath.acos, 1)


def catanh_re(u):
    """re catanh(x + iy) = ¼·log1p(u), u = 4x / ((1 − x)² + y²) > 0, given
    exactly (a Fraction): no cancellation, where mpmath's ½(log(1 + z) −
    log(1 − z)) loses every bit of a tiny real part."""
    return mpmath.log1p(u) / 4


def catanh_im(a, b):
    """im catanh(x + iy) = ½·atan2(2y, (1 − x)(1 + x) − y²), both arguments
    exact (Fractions): the cancellation of 1 − |z|² happens in exact arithmetic."""
    return mpmath.atan2(a, b) / 2


def _acosh_of_minus(x):
    return mpmath.acosh(-x)


def _acoth(x):
    return mpmath.acoth(x)


# ---------------------------------------------------------------------------
# casinh — G.6.2.2; odd, casinh(conj z) = conj casinh(z)
# ---------------------------------------------------------------------------

def _casinh_base(x, y):
    """x, y with their sign bits clear (NaN as is)."""
    if all_finite(x, y):
        if y == 0:
            return (x if x == 0 else Approx(mpmath.asinh, x), y)
        if x == 0:   # the imaginary axis: [0, i] is no cut; beyond i the cut, +0 its right side
            if y < 1:
                return (x, Approx(mpmath.asin, y))
            return (x if y == 1 else Approx(mpmath.acosh, y), HALF_PI)
        return (Approx(casinh_re, x, y), Approx(casinh_im, x, y))
    if math.isnan(x):
        if math.isnan(y):
            return (NAN, NAN)
        if math.isinf(y):
            return (UNSPEC_INF, NAN)
        return (NAN, y) if y == 0 else (NAN, NAN)
    if math.isinf(x):
        if math.isnan(y):
            return (INF, NAN)
        return (INF, QUARTER_PI) if math.isinf(y) else (INF, 0.0)
    return (INF, HALF_PI) if math.isinf(y) else (NAN, NAN)   # x finite, y inf or NaN


def casinh(z: complex):
    """Principal asinh(z) = log(z + sqrt(z² + 1)); Annex G.6.2.2 specials."""
    return odd_even(_casinh_base, z.real, z.imag, odd=True)


# ---------------------------------------------------------------------------
# catanh — G.6.2.3; odd, catanh(conj z) = conj catanh(z)
# ---------------------------------------------------------------------------

def _catanh_base(x, y):
    if all_finite(x, y):
        if y == 0:
            if x < 1:
                return (x if x == 0 else Approx(mpmath.atanh, x), y)
            if x == 1:
                return (INF, y)   # G.6.2.3: catanh(+1 + i0) = +inf + i0 (divide-by-zero)
            return (Approx(_acoth, x), HALF_PI)   # the cut beyond 1: +0 is its upper side
        if x == 0:
            return (x, Approx(mpmath.atan, y))
        X, Y = Fraction(x), Fraction(y)
        return (Approx(catanh_re, 4 * X / ((1 - X) ** 2 + Y * Y)), Approx(catanh_im, 2 * Y, (1 - X) * (1 + X) - Y * Y))
    if math.isnan(x):
        return (UNSPEC_ZERO, HALF_PI) if math.isinf(y) else (NAN, NAN)
    if math.isinf(x):
        return (0.0, NAN) if math.isnan(y) else (0.0, HALF_PI)
    if math.isinf(y):   # x finite
        return (0.0, HALF_PI)
    return (x, NAN) if x == 0 else (NAN, NAN)   # y NaN


def catanh(z: complex):
    """Principal atanh(z) = ½(log(1 + z) − log(1 − z)); Annex G.6.2.3 specials."""
    return odd_even(_catanh_base, z.real, z.imag, odd=True)


# ---------------------------------------------------------------------------
# cacosh — G.6.2.1; cacosh(conj z) = conj cacosh(z); re ≥ 0
# ---------------------------------------------------------------------------

def _cacosh_base(x, y):
    """y with its sign bit clear (or NaN); x keeps its sign."""
    if all_finite(x, y):
        if y == 0:
            if x >= 1:
                return (0.0 if x == 1 else Approx(mpmath.acosh, x), y)
            if x > -1:
                return (0.0, HALF_PI if x == 0 else Approx(mpmath.acos, x))
            return (0.0 if x == -1 else Approx(_acosh_of_minus, x), PI)   # the cut left of -1
        if x == 0:
            return (Approx(mpmath.asinh, y), HALF_PI)
        return (Approx(cacosh_re, x, y), Approx(cacosh_im, x, y))
    if math.isnan(y):
        return (INF, NAN) if math.isinf(x) else (NAN, NAN)
    if math.isinf(y):
        if math.isnan(x):
            return (INF, NAN)
        if math.isfinite(x):
            return (INF, HALF_PI)
        return (INF, QUARTER_PI) if x > 0 else (INF, THREE_QUARTER_PI)
    if math.isnan(x):   # y finite
        return (NAN, NAN)
    return (INF, 0.0) if x > 0 else (INF, PI)


def cacosh(z: complex):
    """Principal acosh(z) = log(z + sqrt(z + 1)·sqrt(z − 1)); Annex G.6.2.1 specials."""
    x, y = z.real, z.imag
    r = _cacosh_base(x, abs(y) if not math.isnan(y) else y)
    return cconj(r) if sign_bit(y) else r


# ---------------------------------------------------------------------------
# cacos — G.6.1.1; cacos(conj z) = conj cacos(z); re in [0, π]
# ---------------------------------------------------------------------------

def _cacos_base(x, y):
    """y with its sign bit clear (or NaN); x keeps its sign."""
    if all_finite(x, y):
        if y == 0:
            if abs(x) <= 1:
                re = 0.0 if x == 1 else (PI if x == -1 else (HALF_PI if x == 0 else Approx(mpmath.acos, x)))
                return (re, -0.0)
            if x > 1:   # the cut beyond 1: +0 its upper side
                return (0.0, cneg(Approx(mpmath.acosh, x)))
            return (PI, cneg(Approx(_acosh_of_minus, x)))
        if x == 0:
            return (HALF_PI, cneg(Approx(mpmath.asinh, y)))
        return (Approx(cacos_re, x, y), Approx(cacos_im, x, y))
    if math.isnan(y):
        if math.isinf(x):
            return (NAN, UNSPEC_INF)
        return (HALF_PI, NAN) if x == 0 else (NAN, NAN)
    if math.isinf(y):
        if math.isnan(x):
            return (NAN, -INF)
        if math.isfinite(x):
            return (HALF_PI, -INF)
        return (QUARTER_PI, -INF) if x > 0 else (THREE_QUARTER_PI, -INF)
    if math.isnan(x):   # y finite
        return (NAN, NAN)
    return (0.0, -INF) if x > 0 else (PI, -INF)


def cacos(z: complex):
    """Principal acos(z) = π/2 − asin(z); Annex G.6.1.1 specials."""
    x, y = z.real, z.imag
    r = _cacos_base(x, abs(y) if not math.isnan(y) else y)
    return cconj(r) if sign_bit(y) else r


# ---------------------------------------------------------------------------
# casin, catan — by Annex G's identities
# ---------------------------------------------------------------------------

def casin(z: complex):
    """casin(z) = -i casinh(iz) (C99 7.3.5.2), iz = -y + ix."""
    return times_minus_i(casinh(complex(-z.imag, z.real)))


def catan(z: complex):
    """catan(z) = -i catanh(iz) (C99 7.3.5.3)."""
    return times_minus_i(catanh(complex(-z.imag, z.real)))


for _name in ("casinh", "catanh", "cacosh", "cacos", "casin", "catan"):
    globals()[_name] = annex_g.errors_clause(globals()[_name])
