"""Complex semantics of the StableHLO ops, with the special values of C99 Annex G.

Every function takes Python complex argument(s) whose parts are exact binary64
values and returns the exact result as a pair `(re, im)` (`cabs` returns one
real).  Each part is in the vocabulary of `dsl.Elementwise`:

* a Python float when the value is decided outright: ±0 with its sign, ±inf,
  NaN, or an exact value such as 1;
* a `Fraction` for an exact nonzero rational (csqrt(3+4i) = 2+i, products,
  quotients), correctly rounded by the oracle;
* `Approx(f, *args)` for a real value that is not exactly representable:
  `f` is an exact real function of the binary64 inputs, evaluated by the
  oracle with mpmath at rising precision.  mpmath has no signed zero, so a
  part that is exactly 0 is never an Approx: every function below decides
  exact zeros analytically (and exact rationals where they can occur);
* `ImplDefined` where no standard pins the part down (e.g. the signs Annex G
  leaves "unspecified", or behaviour of functions Annex G does not cover).

Why these rules.  For finite inputs the spec asks for the mathematical
function ("complex square root" …) and gives no accuracy requirement, so the
reference is the exact value; the transcendental functions take transcendental
values at every algebraic point except the obvious ones (Lindemann–
Weierstrass, Gelfond–Schneider), so their exact zeros and exact rationals are
the trivial points decided here by hand; the algebraic functions (sqrt, rsqrt,
cbrt, abs, sign, multiply, divide, integer powers) are decided by exact
rational arithmetic.  For ±0, ±inf and NaN parts we follow C99 Annex G G.5
(multiplicative operators; special cases via the standard's own example
functions `_Cmultd` / `_Cdivd`) and G.6 (cexp, clog, csqrt, csinh, ccosh,
ctanh, and through csin(z) = -i csinh(iz), ccos(z) = ccosh(iz),
ctan(z) = -i ctanh(iz)).  Where Annex G is silent (expm1, log1p, logistic,
rsqrt, cbrt, pow, atan2, sign) the specials are derived from the defining
formula evaluated with the Annex G functions, and documented per function.
"""
from __future__ import annotations

import functools
import itertools
import math
from fractions import Fraction

import mpmath
import numpy as np

from .dsl import ANY_VALUE, Approx, ImplDefined

INF = math.inf
NAN = math.nan

# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------


def sign_bit(v: float) -> bool:
    """Sign bit of a non-NaN float (NaN counts as positive: it has no side)."""
    return (not math.isnan(v)) and math.copysign(1.0, v) < 0


def all_finite(*vs: float) -> bool:
    return all(math.isfinite(v) for v in vs)


def _label(v: float) -> str:
    if math.isnan(v):
        return "nan"
    if v == 0:
        return "-0" if sign_bit(v) else "+0"
    if math.isinf(v):
        return "-inf" if v < 0 else "+inf"
    return repr(v)


def _impl(values, why: str) -> ImplDefined:
    return ImplDefined({_label(v): v for v in values}, why=why)


def _either_zero(why: str) -> ImplDefined:
    return _impl((0.0, -0.0), why)


UNSPEC_ZERO = _either_zero("C99 Annex G G.6: the sign of this zero is unspecified")
UNSPEC_INF = _impl((INF, -INF), "C99 Annex G G.6: the sign of this infinity is unspecified")


def cneg(c):
    """Negate one part of the vocabulary (float, Fraction, Approx, ImplDefined)."""
    if isinstance(c, Approx):
        f = c.f
        return Approx(lambda *a: -f(*a), *c.args)
    if isinstance(c, ImplDefined):
        return ImplDefined({_label(-v) if isinstance(v, float) else k: cneg(v) for k, v in c.alternatives.items()},
                           why=c.why)
    return -c


def cconj(p):
    return (p[0], cneg(p[1]))


def _qsqrt(q: Fraction):
    """The exact square root of a nonnegative rational, or None when irrational."""
    if q < 0:
        return None
    n, d = q.numerator, q.denominator
    rn, rd = math.isqrt(n), math.isqrt(d)
    if rn * rn == n and rd * rd == d:
        return Fraction(rn, rd)
    return None


def _icbrt(n: int) -> int:
    """floor(cbrt(n)) for n >= 0."""
    if n < 2:
        return n
    r = 1 << ((n.bit_length() + 2) // 3)
    while True:
        s = (2 * r + n // (r * r)) // 3
        if s >= r:
            break
        r = s
    while r * r * r > n:
        r -= 1
    while (r + 1) ** 3 <= n:
        r += 1
    return r


def _qcbrt(q: Fraction):
    """The exact (real) cube root of a nonnegative rational, or None when irrational."""
    n, d = q.numerator, q.denominator
    rn, rd = _icbrt(n), _icbrt(d)
    if rn ** 3 == n and rd ** 3 == d:
        return Fraction(rn, rd)
    return None


def _exact(q: Fraction, sign_source: float = 1.0):
    """An exact rational part: +-0 (sign taken from sign_source) when zero."""
    if q == 0:
        return math.copysign(0.0, sign_source)
    return q


def _sign_of(fn, y: float) -> float:
    """The sign (+-1.0) of fn(y) for a finite nonzero y where fn(y) != 0, decided
    at high precision (mpmath reduces large arguments exactly)."""
    with mpmath.workprec(256):
        v = fn(mpmath.mpf(y))
    return 1.0 if v > 0 else -1.0


def _cis_sign(y: float):
    """(sign of cos y, sign of sin y) as floats; sin(+-0) = +-0 keeps its sign."""
    if y == 0:
        return 1.0, y
    return _sign_of(mpmath.cos, y), _sign_of(mpmath.sin, y)


PI = Approx(lambda: +mpmath.pi)
HALF_PI = Approx(lambda: mpmath.pi / 2)
QUARTER_PI = Approx(lambda: mpmath.pi / 4)
THREE_QUARTER_PI = Approx(lambda: 3 * mpmath.pi / 4)


def _float_of(c) -> float:
    """A binary64 stand-in for a part, used only to derive specials by formula."""
    if isinstance(c, Approx):
        with mpmath.workprec(113):
            return float(c.f(*[mpmath.mpf(a) if isinstance(a, float) else mpmath.mpf(a.numerator) / a.denominator
                               for a in c.args]))
    return float(c)


def _choices(c):
    if isinstance(c, ImplDefined):
        return [_float_of(v) for v in c.alternatives.values()]
    return [_float_of(c)]


def _derive(fn, *pairs, why: str, extra=(), quotient=False):
    """Specials derived from a defining formula: evaluate `fn` (binary64
    arithmetic on Annex G parts) over every combination of the alternatives the
    inner parts allow; a part with several outcomes becomes ImplDefined.
    `quotient`: the formula ends in a complex division, whose zero parts have
    an algorithm-dependent sign (as in `cdiv`), so a zero part allows both."""
    lists = [list(itertools.product(_choices(p[0]), _choices(p[1]))) for p in pairs]
    outs = []
    for combo in itertools.product(*lists):
        o = fn(*combo)
        outs.extend(o if isinstance(o, list) else [o])
    res = []
    for k in range(2):
        vals = {}
        for o in outs:
            vals.setdefault(_label(o[k]), o[k])
        for e in extra:
            vals.setdefault(_label(e), e)
        if quotient and any(isinstance(v, float) and v == 0 for v in vals.values()):
            vals.setdefault("+0", 0.0)
            vals.setdefault("-0", -0.0)
        res.append(next(iter(vals.values())) if len(vals) == 1 else ImplDefined(vals, why=why))
    return tuple(res)


def odd_even(base, x: float, y: float, odd: bool):
    """Annex G symmetries: f(conj z) = conj f(z) and f odd (or even).  `base`
    takes |x|, |y| (sign bits clear; NaN passes as is)."""
    r = base(abs(x), abs(y))
    if sign_bit(x):
        # f(x+iy) = ±f(|x| - iy)
        if not sign_bit(y):
            r = cconj(r)
        if odd:
            r = (cneg(r[0]), cneg(r[1]))
    elif sign_bit(y):
        r = cconj(r)
    return r


# ---------------------------------------------------------------------------
# G.5.1 multiplicative operators
# ---------------------------------------------------------------------------


def _prod(a: float, b: float):
    """Exact product of two finite floats: a signed float zero when zero."""
    if a == 0 or b == 0:
        return a * b
    return Fraction(a) * Fraction(b)


def _sum(p, q):
    """Exact sum of two exact terms with IEEE's sign rule for an exact zero sum."""
    if isinstance(p, float) and isinstance(q, float) and p == 0 and q == 0:
        return p + q
    s = Fraction(p) + Fraction(q)
    return 0.0 if s == 0 else s


def _cmultd(a, b, c, d):
    """C99 Annex G.5.1 EXAMPLE `_Cmultd`, in binary64."""
    with np.errstate(all="ignore"):
        a, b, c, d = (np.float64(v) for v in (a, b, c, d))
        ac, bd, ad, bc = a * c, b * d, a * d, b * c
        x, y = ac - bd, ad + bc
        if np.isnan(x) and np.isnan(y):
            recalc = False
            if np.isinf(a) or np.isinf(b):
                a = np.copysign(1.0 if np.isinf(a) else 0.0, a)
                b = np.copysign(1.0 if np.isinf(b) else 0.0, b)
                c = np.copysign(0.0, c) if np.isnan(c) else c
                d = np.copysign(0.0, d) if np.isnan(d) else d
                recalc = True
            if np.isinf(c) or np.isinf(d):
                c = np.copysign(1.0 if np.isinf(c) else 0.0, c)
                d = np.copysign(1.0 if np.isinf(d) else 0.0, d)
                a = np.copysign(0.0, a) if np.isnan(a) else a
                b = np.copysign(0.0, b) if np.isnan(b) else b
                recalc = True
            if not recalc and (np.isinf(ac) or np.isinf(bd) or np.isinf(ad) or np.isinf(bc)):
                a, b, c, d = (np.copysign(0.0, v) if np.isnan(v) else v for v in (a, b, c, d))
                recalc = True
            if recalc:
                x = np.float64(INF) * (a * c - b * d)
                y = np.float64(INF) * (a * d + b * c)
        return float(x), float(y)


def _logb(v):
    if v == 0:
        return -INF
    if math.isinf(v):
        return INF
    if math.isnan(v):
        return NAN
    return float(math.frexp(v)[1] - 1)


def _cdivd(a, b, c, d):
    """C99 Annex G.5.1 EXAMPLE `_Cdivd`, in binary64."""
    with np.errstate(all="ignore"):
        a, b, c, d = (np.float64(v) for v in (a, b, c, d))
        ilogbw = 0
        logbw = _logb(float(max(abs(c), abs(d))) if not (np.isnan(c) or np.isnan(d)) else
                      float(np.fmax(abs(c), abs(d))))
        if math.isfinite(logbw):
            ilogbw = int(logbw)
            c, d = np.ldexp(c, -ilogbw), np.ldexp(d, -ilogbw)
        denom = c * c + d * d
        x = np.ldexp((a * c + b * d) / denom, -ilogbw)
        y = np.ldexp((b * c - a * d) / denom, -ilogbw)
        if np.isnan(x) and np.isnan(y):
            if denom == 0.0 and (not np.isnan(a) or not np.isnan(b)):
                x = np.copysign(np.float64(INF), c) * a
                y = np.copysign(np.float64(INF), c) * b
            elif (np.isinf(a) or np.isinf(b)) and np.isfinite(c) and np.isfinite(d):
                a = np.copysign(1.0 if np.isinf(a) else 0.0, a)
                b = np.copysign(1.0 if np.isinf(b) else 0.0, b)
                x = np.float64(INF) * (a * c + b * d)
                y = np.float64(INF) * (b * c - a * d)
            elif math.isinf(logbw) and logbw > 0 and np.isfinite(a) and np.isfinite(b):
                c = np.copysign(1.0 if np.isinf(c) else 0.0, c)
                d = np.copysign(1.0 if np.isinf(d) else 0.0, d)
                x = np.float64(0.0) * (a * c + b * d)
                y = np.float64(0.0) * (b * c - a * d)
        return float(x), float(y)


def cmul(a: complex, b: complex):
    """(x+iy)(u+iv) = (xu - yv) + i(xv + yu).

    Finite operands: each part exactly, with IEEE's signs for exact zeros of
    the textbook formula.  Otherwise Annex G.5.1: an infinite operand and a
    nonzero one give an infinity even through NaN parts, as the standard's
    `_Cmultd` computes it."""
    x, y, u, v = a.real, a.imag, b.real, b.imag
    if not all_finite(x, y, u, v):
        return _cmultd(x, y, u, v)
    return (_sum(_prod(x, u), -_prod(y, v)), _sum(_prod(x, v), _prod(y, u)))


_DIV_ZERO = _either_zero("the sign of a zero part of a complex quotient depends on the division "
                         "algorithm (textbook, Smith's, scaled); neither the spec nor Annex G fixes it")


def cdiv(a: complex, b: complex):
    """(x+iy)/(u+iv) = ((xu+yv) + i(yu-xv)) / (u²+v²).

    Finite operands, nonzero divisor: each part exactly (a zero part's sign is
    implementation-defined).  Otherwise Annex G.5.1 (nonzero/0 and inf/finite
    are infinities, finite/inf is a zero) with the values of the standard's
    `_Cdivd`, e.g. (1+0i)/(0+0i) = inf + i nan."""
    x, y, u, v = a.real, a.imag, b.real, b.imag
    if not all_finite(x, y, u, v) or (u == 0 and v == 0):
        return _cdivd(x, y, u, v)
    X, Y, U, V = (Fraction(t) for t in (x, y, u, v))
    den = U * U + V * V
    re, im = (X * U + Y * V) / den, (Y * U - X * V) / den
    return (re if re != 0 else _DIV_ZERO, im if im != 0 else _DIV_ZERO)


# ---------------------------------------------------------------------------
# abs, sign
# ---------------------------------------------------------------------------


def cabs(z: complex):
    """|z| = hypot(x, y): +inf if either part is infinite (even with NaN), exact
    when x²+y² is a rational square (|3+4i| = 5)."""
    x, y = z.real, z.imag
    if math.isinf(x) or math.isinf(y):
        return INF
    if math.isnan(x) or math.isnan(y):
        return NAN
    if x == 0 and y == 0:
        return 0.0
    m = _qsqrt(Fraction(x) ** 2 + Fraction(y) ** 2)
    if m is not None:
        return m
    return Approx(mpmath.hypot, x, y)


def csign(z: complex):
    """sign(z) = divide(z, abs(z)) for a nonzero finite z (spec "sign").

    NaN in either part: NaN + i NaN (the spec's pseudocode).  Zero: the spec's
    pseudocode divides 0 by |0| = 0 (NaN); XLA and the float branch return the
    zero itself, so both are declared (the zero keeping its signs).  An
    infinite part: divide(z, abs(z)) computes inf/inf = NaN; the direction of
    z (±1 on the infinite axis, ±0 on the finite one, ±1/√2 when both are
    infinite) is the limit, so both are declared."""
    x, y = z.real, z.imag
    if math.isnan(x) or math.isnan(y):
        return (NAN, NAN)
    if x == 0 and y == 0:
        why = "sign(0): the spec's pseudocode gives divide(0, abs(0)) = NaN; the zero itself (XLA)"
        return (ImplDefined({"zero": x, "nan": NAN}, why=why), ImplDefined({"zero": y, "nan": NAN}, why=why))
    if math.isinf(x) or math.isinf(y):
        why = "sign of an infinite z: the direction of z (limit), or inf/inf = NaN in divide(z, abs(z))"
        if math.isinf(x) and math.isinf(y):
            h = Approx(lambda: mpmath.sqrt(2) / 2)
            d = (h if x > 0 else cneg(h), h if y > 0 else cneg(h))
        elif math.isinf(x):
            d = (math.copysign(1.0, x), math.copysign(0.0, y))
        else:
            d = (math.copysign(0.0, x), math.copysign(1.0, y))
        return tuple(ImplDefined({"direction": p, "nan": NAN}, why=why) if not (isinstance(p, float) and p == 0)
                     else p for p in d)
    X, Y = Fraction(x), Fraction(y)
    m = _qsqrt(X * X + Y * Y)
    if m is not None:
        return (_exact(X / m, x), _exact(Y / m, y))
    re = x if x == 0 else Approx(lambda x, y: x / mpmath.hypot(x, y), x, y)
    im = y if y == 0 else Approx(lambda x, y: y / mpmath.hypot(x, y), x, y)
    return (re, im)


# ---------------------------------------------------------------------------
# G.6.4.2 csqrt, and rsqrt / cbrt by the same reasoning
# ---------------------------------------------------------------------------


def _csqrt_special(x, y):
    """Annex G.6.4.2 for |x|-side handled by the caller (conj symmetry only)."""
    def base(x, y):  # y has its sign bit clear (or is NaN); x keeps its sign
        if math.isinf(y):
            return (INF, INF)
        if math.isnan(y):
            if math.isinf(x):
                return (NAN, UNSPEC_INF) if x < 0 else (INF, NAN)
            return (NAN, NAN)
        # y finite
        if math.isinf(x):
            return (0.0, INF) if x < 0 else (INF, 0.0)
        return (NAN, NAN)  # x NaN, y finite
    r = base(x, abs(y) if not math.isnan(y) else y)
    return cconj(r) if sign_bit(y) else r


def _sqrt_parts(x: float, y: float):
    """The exact parts of the principal sqrt of a finite nonzero x+iy with y != 0,
    as (big, small) magnitudes: big = sqrt((|z|+|x|)/2), small = |y|/(2 big).
    Each is a Fraction when rational, else None (use the Approx forms)."""
    X, Y = Fraction(x), Fraction(y)
    m = _qsqrt(X * X + Y * Y)
    if m is None:
        return None, None, None
    big = _qsqrt((m + abs(X)) / 2)
    if big is None:
        return m, None, None
    return m, big, abs(Y) / (2 * big)


def _big(x, y):
    return mpmath.sqrt((mpmath.hypot(x, y) + abs(x)) / 2)


def _small(x, y):
    return abs(y) / (2 * _big(x, y))


def csqrt(z: complex):
    """Principal square root; Annex G.6.4.2 specials.  Finite: re =
    sqrt((|z|+x)/2), im = ±sqrt((|z|-x)/2) with the sign of y (computed in the
    cancellation-free form |y|/(2·big)); exact when rational (sqrt(3+4i) = 2+i)."""
    x, y = z.real, z.imag
    if not all_finite(x, y):
        return _csqrt_special(x, y)
    if x == 0 and y == 0:
        return (0.0, y)
    if y == 0:
        r = _qsqrt(Fraction(abs(x)))
        r = r if r is not None else Approx(lambda x: mpmath.sqrt(abs(x)), x)
        return (r, y) if x > 0 else (0.0, r if not sign_bit(y) else cneg(r))
    m, big, small = _sqrt_parts(x, y)
    if big is None:
        big, small = Approx(_big, x, y), Approx(_small, x, y)
    re, im = (big, small) if x >= 0 else (small, big)
    return (re, im if y > 0 else cneg(im))


def crsqrt(z: complex):
    """1/csqrt(z) = conj(csqrt(z))/|z|.

    Specials: derived as cdiv(1, csqrt(z)) with Annex G's csqrt and `_Cdivd`
    (e.g. rsqrt(x + i inf) = +0 - i0).  rsqrt(±0 ± i0): the real part is +inf
    (as real rSqrt(+0)); the imaginary part is not fixed by any standard
    (`_Cdivd` gives NaN, the limit along the real axis ∓0), so declared."""
    x, y = z.real, z.imag
    if not all_finite(x, y):
        return _derive(lambda s: _cdivd(1.0, 0.0, *s), csqrt(z), quotient=True,
                       why="rsqrt specials derived as 1/csqrt(z) from Annex G parts; a zero part's sign "
                           "depends on the division algorithm")
    if x == 0 and y == 0:
        return (INF, _impl((NAN, -math.copysign(0.0, y), math.copysign(0.0, y)),
                           "rsqrt(0): an infinity; its imaginary part is fixed by no standard"))
    if y == 0:
        r = _qsqrt(Fraction(abs(x)))
        r = 1 / r if r is not None else Approx(lambda x: 1 / mpmath.sqrt(abs(x)), x)
        return (r, -y) if x > 0 else (0.0, cneg(r) if not sign_bit(y) else r)
    m, big, small = _sqrt_parts(x, y)
    if big is not None:
        big, small = big / m, small / m
    else:
        big = Approx(lambda x, y: _big(x, y) / mpmath.hypot(x, y), x, y)
        small = Approx(lambda x, y: _small(x, y) / mpmath.hypot(x, y), x, y)
    re, im = (big, small) if x >= 0 else (small, big)
    return (re, cneg(im) if y > 0 else im)


def ccbrt(z: complex):
    """Principal cube root exp(log(z)/3) (the spec's "complex cubic root"; the
    spec allows complex operands for cbrt).  Note cbrt(-8+0i) = 1 + i√3, not -2.

    Annex G has no ccbrt; specials mirror csqrt's table, derived from
    |z|^(1/3)·cis(arg(z)/3) with arg/3 in (-π/3, π/3]: cbrt(±0 ± i0) = +0 ± i0;
    cbrt(x ± i inf) = +inf ± i inf for every x (NaN too); cbrt(-inf ± iy) =
    +inf ± i inf (direction ±π/3); cbrt(+inf ± iy) = +inf ± i0; cbrt(-inf +
    i NaN) = +inf ± i inf (sign unknown: declared), cbrt(+inf + i NaN) =
    +inf + i NaN; otherwise NaN + i NaN."""
    x, y = z.real, z.imag
    if not all_finite(x, y):
        def base(x, y):
            if math.isinf(y):
                return (INF, INF)
            if math.isnan(y):
                if math.isinf(x):
                    return (INF, _impl((INF, -INF), "cbrt(-inf + i NaN): direction ±π/3 unknown")) if x < 0 \
                        else (INF, NAN)
                return (NAN, NAN)
            if math.isinf(x):
                return (INF, INF) if x < 0 else (INF, 0.0)
            return (NAN, NAN)
        r = base(x, abs(y) if not math.isnan(y) else y)
        return cconj(r) if sign_bit(y) else r
    if x == 0 and y == 0:
        return (0.0, y)
    sy = -1 if sign_bit(y) else 1
    if y == 0 and x > 0:
        r = _qcbrt(Fraction(x))
        return (r if r is not None else Approx(mpmath.cbrt, x), y)
    if y == 0 or x == 0:
        # negative real: |x|^(1/3)·(1/2 ± i√3/2); imaginary: |y|^(1/3)·(√3/2 ± i/2)
        t = abs(x) if y == 0 else abs(y)
        r = _qcbrt(Fraction(t))
        half = r / 2 if r is not None else Approx(lambda t: mpmath.cbrt(t) / 2, t)
        root3 = Approx(lambda t: mpmath.cbrt(t) * mpmath.sqrt(3) / 2, t)
        if y == 0:
            return (half, root3 if sy > 0 else cneg(root3))
        return (root3, half if y > 0 else cneg(half))
    # a Gaussian-rational cube root is dyadic; find it numerically, verify exactly
    with mpmath.workprec(3000):
        w = mpmath.root(mpmath.mpc(x, y), 3)
        K = 1400
        a = Fraction(int(mpmath.nint(w.real * 2 ** K)), 2 ** K)
        b = Fraction(int(mpmath.nint(w.imag * 2 ** K)), 2 ** K)
    X, Y = Fraction(x), Fraction(y)
    if a ** 3 - 3 * a * b * b == X and 3 * a * a * b - b ** 3 == Y:
        return (a, b)

    def re(x, y):
        return mpmath.cbrt(mpmath.hypot(x, y)) * mpmath.cos(mpmath.atan2(y, x) / 3)

    def im(x, y):
        return mpmath.cbrt(mpmath.hypot(x, y)) * mpmath.sin(mpmath.atan2(y, x) / 3)
    return (Approx(re, x, y), Approx(im, x, y))


# ---------------------------------------------------------------------------
# G.6.3 exponential and logarithm
# ---------------------------------------------------------------------------


def cexp(z: complex):
    """e^x·cis(y); Annex G.6.3.1 specials."""
    x, y = z.real, z.imag
    if all_finite(x, y):
        if y == 0:
            return (1.0 if x == 0 else Approx(mpmath.exp, x), y)
        return (Approx(lambda x, y: mpmath.exp(x) * mpmath.cos(y), x, y),
                Approx(lambda x, y: mpmath.exp(x) * mpmath.sin(y), x, y))

    def base(x, y):  # y sign bit clear or NaN
        if math.isnan(x):
            return (NAN, y) if y == 0 else (NAN, NAN)
        if math.isfinite(x):
            return (NAN, NAN)  # y is inf or NaN
        if x > 0:
            if y == 0:
                return (INF, y)
            if math.isfinite(y):
                c, s = _cis_sign(y)
                return (INF * c, INF * s)
            return (UNSPEC_INF, NAN)
        if math.isfinite(y):
            c, s = _cis_sign(y)
            return (0.0 * c, 0.0 * s)
        return (UNSPEC_ZERO, UNSPEC_ZERO)
    r = base(x, abs(y) if not math.isnan(y) else y)
    return cconj(r) if sign_bit(y) else r


def cexpm1(z: complex):
    """e^z - 1.  Finite: re = expm1(x)·cos y - 2 sin²(y/2), im = e^x sin y
    (exactly e^x cos y - 1; zero only at z = 0, where the parts keep z's signs
    as real expm1(±0) = ±0 does).  Specials: derived as cexp(z) - 1 from Annex G
    (e.g. expm1(-inf + iy) = -1 + i0·sin y, expm1(+inf + iy) = inf·cis(y))."""
    x, y = z.real, z.imag
    if not all_finite(x, y):
        return _derive(lambda e: (e[0] - 1.0, e[1]), cexp(z),
                       why="expm1 specials derived as cexp(z) - 1; Annex G leaves these signs unspecified")
    if y == 0:
        return (x if x == 0 else Approx(mpmath.expm1, x), y)
    return (Approx(lambda x, y: mpmath.expm1(x) * mpmath.cos(y) - 2 * mpmath.sin(y / 2) ** 2, x, y),
            Approx(lambda x, y: mpmath.exp(x) * mpmath.sin(y), x, y))


def _clog_special(x, y):
    def base(x, y):  # y sign bit clear or NaN
        if math.isnan(y):
            return (INF, NAN) if math.isinf(x) else (NAN, NAN)
        if math.isinf(y):
            if math.isnan(x):
                return (INF, NAN)
            if math.isfinite(x):
                return (INF, HALF_PI)
            return (INF, THREE_QUARTER_PI) if x < 0 else (INF, QUARTER_PI)
        # y finite
        if math.isnan(x):
            return (NAN, NAN)
        return (INF, PI) if x < 0 else (INF, 0.0)
    r = base(x, abs(y) if not math.isnan(y) else y)
    return cconj(r) if sign_bit(y) else r


def clog(z: complex):
    """log|z| + i·atan2(y, x); Annex G.6.3.2 specials (clog(-0 + i0) = -inf + iπ,
    clog(+0 ± i0) = -inf ± i0; y = ±0 with x < 0 is on the cut: ±π)."""
    x, y = z.real, z.imag
    if not all_finite(x, y):
        return _clog_special(x, y)
    if x == 0 and y == 0:
        return (-INF, (PI if not sign_bit(y) else cneg(PI)) if sign_bit(x) else y)
    X, Y = Fraction(x), Fraction(y)
    n2 = X * X + Y * Y
    re = 0.0 if n2 == 1 else _half_log(n2)
    return (re, _arg(x, y))


def _half_log(n2: Fraction):
    """½·log(n2) for an exact rational n2 > 0, n2 != 1: through log1p(n2 - 1)
    (exact argument) near 1, so no cancellation; log(n2) elsewhere."""
    if abs(n2 - 1) < Fraction(1, 2):
        return Approx(lambda d: mpmath.log1p(d) / 2, n2 - 1)
    return Approx(lambda n: mpmath.log(n) / 2, n2)


def _arg(x, y, x_exact=None):
    """atan2(y, x) with the sign of a zero y deciding the side of the cut;
    `x_exact` (a Fraction) replaces x when the real part is 1 + x."""
    X = Fraction(x) if x_exact is None else x_exact
    if y == 0:
        if X > 0 or (X == 0 and (x_exact is not None or not sign_bit(x))):
            return y
        return PI if not sign_bit(y) else cneg(PI)
    if X == 0:
        return HALF_PI if y > 0 else cneg(HALF_PI)
    if x_exact is None:
        return Approx(lambda x, y: mpmath.atan2(y, x), x, y)
    return Approx(lambda x, y: mpmath.atan2(y, 1 + x), x, y)


def clog1p(z: complex):
    """log(1 + z).  Finite: re = ½·log1p(2x + x² + y²) (argument exact), im = atan2(y, 1+x), with
    1 + x exact; log1p(±0 ± i0) = ±0 ± i0 (as real logp1), log1p(-1 ± i0) =
    -inf ± i0 (1 + (-1) = +0 in binary64, then Annex G's clog(+0 ± i0)).
    Specials: clog(1 + z) with Annex G's clog (1 + z keeps z's inf/NaN parts)."""
    x, y = z.real, z.imag
    if not all_finite(x, y):
        return _clog_special(1.0 + x, y)
    if x == 0 and y == 0:
        return (x, y)
    W = 1 + Fraction(x)
    if W == 0 and y == 0:
        return (-INF, y)
    n2 = W * W + Fraction(y) ** 2
    re = 0.0 if n2 == 1 else _half_log(n2)
    return (re, _arg(x, y, x_exact=W))


def clogistic(z: complex):
    """1/(1 + e^-z).  Finite: with p = 1 + e^-x cos y, q = e^-x sin y:
    re = p/(p²+q²), im = q/(p²+q²); logistic(±0 ± i0) = 1/2 ± i0.
    Specials: derived from the formula with Annex G's cexp and `_Cdivd`
    (e.g. logistic(+inf + iy) = 1 + i0·sign(sin y), logistic(-inf ± i0) = +0 ± i0)."""
    x, y = z.real, z.imag
    if not all_finite(x, y):
        def f(e):
            return _cdivd(1.0, 0.0, 1.0 + e[0], e[1])
        return _derive(f, cexp(complex(-x, -y)), quotient=True,
                       why="logistic specials derived as 1/(1 + cexp(-z)); Annex G leaves inner signs "
                           "unspecified and a zero part's sign depends on the division algorithm")
    if y == 0:
        return (Fraction(1, 2) if x == 0 else Approx(lambda x: 1 / (1 + mpmath.exp(-x)), x), y)

    def den(x, y):  # |1 + e^-z|² = expm1(-x)² + 4e^-x cos²(y/2): a sum of nonnegative terms
        return mpmath.expm1(-x) ** 2 + 4 * mpmath.exp(-x) * mpmath.cos(y / 2) ** 2

    def re(x, y):  # p = 1 + e^-x cos y = -expm1(-x) + 2e^-x cos²(y/2)
        return (2 * mpmath.exp(-x) * mpmath.cos(y / 2) ** 2 - mpmath.expm1(-x)) / den(x, y)

    def im(x, y):
        return mpmath.exp(-x) * mpmath.sin(y) / den(x, y)
    return (Approx(re, x, y), Approx(im, x, y))


# ---------------------------------------------------------------------------
# G.6.2 hyperbolic functions, and the trigonometric ones through them
# ---------------------------------------------------------------------------


def csinh(z: complex):
    """sinh x cos y + i cosh x sin y; Annex G.6.2.5 specials."""
    x, y = z.real, z.imag
    if all_finite(x, y):
        re = math.copysign(0.0, x) * _cis_sign(y)[0] if x == 0 else \
            Approx(lambda x, y: mpmath.sinh(x) * mpmath.cos(y), x, y)
        im = y if y == 0 else Approx(lambda x, y: mpmath.cosh(x) * mpmath.sin(y), x, y)
        return (re, im)

    def base(x, y):  # sign bits clear (NaN as is)
        if math.isnan(x):
            return (NAN, y) if y == 0 else (NAN, NAN)
        if x == 0:
            return (UNSPEC_ZERO, NAN)  # y is inf or NaN
        if math.isfinite(x):
            return (NAN, NAN)
        if y == 0:
            return (INF, y)
        if math.isfinite(y):
            c, s = _cis_sign(y)
            return (INF * c, INF * s)
        return (UNSPEC_INF, NAN)
    return odd_even(base, x, y, odd=True)


def ccosh(z: complex):
    """cosh x cos y + i sinh x sin y; Annex G.6.2.4 specials."""
    x, y = z.real, z.imag
    if all_finite(x, y):
        re = 1.0 if x == 0 and y == 0 else Approx(lambda x, y: mpmath.cosh(x) * mpmath.cos(y), x, y)
        if x == 0 or y == 0:
            sx = math.copysign(1.0, x) if x == 0 else math.copysign(1.0, x)
            sy = math.copysign(1.0, y) if y == 0 else _cis_sign(y)[1]
            im = math.copysign(0.0, sx * sy)
        else:
            im = Approx(lambda x, y: mpmath.sinh(x) * mpmath.sin(y), x, y)
        return (re, im)

    def base(x, y):
        if math.isnan(x):
            return (NAN, UNSPEC_ZERO) if y == 0 else (NAN, NAN)
        if x == 0:
            return (NAN, UNSPEC_ZERO)  # y inf or NaN
        if math.isfinite(x):
            return (NAN, NAN)
        if y == 0:
            return (INF, y)
        if math.isfinite(y):
            c, s = _cis_sign(y)
            return (INF * c, INF * s)
        if math.isinf(y):
            return (UNSPEC_INF, NAN)
        return (INF, NAN)
    return odd_even(base, x, y, odd=False)


_CTANH_ZERO_INF = "ctanh(±0 + i inf or i NaN): C11 Annex G gives NaN + i NaN, C23 gives ±0 + i NaN"


def ctanh(z: complex):
    """sinh 2x/(cosh 2x + cos 2y) + i sin 2y/(cosh 2x + cos 2y); Annex G.6.2.6
    specials (C11; where C23 changed a value, ctanh(±0 + i inf / i NaN), both
    are declared)."""
    x, y = z.real, z.imag
    if all_finite(x, y):
        def den(x, y):  # cosh 2x + cos 2y = 2(sinh² x + cos² y): no cancellation near the poles
            return 2 * (mpmath.sinh(x) ** 2 + mpmath.cos(y) ** 2)
        re = x if x == 0 else Approx(lambda x, y: mpmath.sinh(2 * x) / den(x, y), x, y)
        im = y if y == 0 else Approx(lambda x, y: mpmath.sin(2 * y) / den(x, y), x, y)
        return (re, im)

    def base(x, y):
        if math.isnan(x):
            return (NAN, y) if y == 0 else (NAN, NAN)
        if math.isfinite(x):
            if x == 0:
                return (ImplDefined({"nan (C11)": NAN, "+0 (C23)": 0.0}, why=_CTANH_ZERO_INF), NAN)
            return (NAN, NAN)
        if math.isfinite(y):
            s = y if y == 0 else _sign_of(lambda t: mpmath.sin(2 * t), y)
            return (1.0, 0.0 * s)
        return (1.0, UNSPEC_ZERO)
    return odd_even(base, x, y, odd=True)


def times_minus_i(p):
    """-i·(A + iB) = B - iA."""
    return (p[1], cneg(p[0]))


def csin(z: complex):
    """csin(z) = -i csinh(iz) (Annex G.6, 7.3.5.5), iz = -y + ix."""
    return times_minus_i(csinh(complex(-z.imag, z.real)))


def ccos(z: complex):
    """ccos(z) = ccosh(iz)."""
    return ccosh(complex(-z.imag, z.real))


def ctan(z: complex):
    """ctan(z) = -i ctanh(iz)."""
    return times_minus_i(ctanh(complex(-z.imag, z.real)))


# ---------------------------------------------------------------------------
# pow
# ---------------------------------------------------------------------------

_POW_ZERO = _either_zero("complex pow: the sign of an exact zero part depends on the algorithm "
                         "(repeated multiplication or exp(b·log a)); no standard fixes it")
_POW_MAX_N = 1024
_POW_MAX_K = 6


def _gpow(p: Fraction, q: Fraction, n: int):
    """(p + iq)^n exactly, n an integer (p + iq != 0)."""
    if n < 0:
        d = p * p + q * q
        p, q, n = p / d, -q / d, -n
    rp, rq = Fraction(1), Fraction(0)
    while n:
        if n & 1:
            rp, rq = rp * p - rq * q, rp * q + rq * p
        p, q = p * p - q * q, 2 * p * q
        n >>= 1
    return rp, rq


def _exact_sqrt_pair(p: Fraction, q: Fraction, qneg: bool):
    """The principal sqrt of p + iq exactly (Fractions), or None; `qneg` is the
    side of the cut when q == 0 and p < 0."""
    if p == 0 and q == 0:
        return Fraction(0), Fraction(0)
    m = _qsqrt(p * p + q * q)
    if m is None:
        return None
    big = _qsqrt((m + abs(p)) / 2)
    if big is None:
        return None
    small = abs(q) / (2 * big)
    re, im = (big, small) if p >= 0 else (small, big)
    return re, (-im if (q < 0 or (q == 0 and qneg)) else im)


def cpow(a: complex, b: complex):
    """a^b = exp(b·log a), principal branch (the sign of a zero imaginary part of a
    negative real `a` picks the side of the cut, as in clog).

    Choices where no standard speaks (C's cpow has no Annex G table):
    * pow(a, ±0 ± i0) = 1 + i0 for every a, NaN included (as IEEE pow(x, ±0));
      pow(1 ± i0, b) = 1 + i0 for every b (as IEEE pow(1, y)); the zero's sign
      is implementation-defined;
    * pow(0, b): a zero if re b > 0, an infinity if re b < 0 (declared: any sign,
      imaginary part ±0/NaN), NaN + i NaN if re b = 0;
    * an exact zero part of a finite result has an implementation-defined sign;
    * NaN anywhere else: NaN + i NaN; an infinite part: the value of
      exp(b·log a) through Annex G's clog, `_Cmultd` and cexp, declared
      together with NaN.
    Finite results are exact where rational: integer b (|b| <= 1024) and
    b = m/2^k (k <= 6) when the 2^k-th root of a is Gaussian rational."""
    x, y, br, bi = a.real, a.imag, b.real, b.imag
    if br == 0 and bi == 0:
        return (1.0, _POW_ZERO)
    if x == 1 and y == 0:
        return (1.0, _POW_ZERO)
    if not all_finite(x, y, br, bi):
        if any(math.isnan(v) for v in (x, y, br, bi)):
            return (NAN, NAN)

        def f(lg):
            # a real exponent scales log a (complex multiplication would turn 0·inf into NaN)
            t = (br * lg[0], br * lg[1]) if bi == 0 else _cmultd(br, bi, *lg)
            e = cexp(complex(*t))
            return list(itertools.product(_choices(e[0]), _choices(e[1])))
        return _derive(f, clog(a), why="complex pow of infinities: exp(b·log a) through Annex G parts, or NaN",
                       extra=(NAN,))
    if x == 0 and y == 0:
        if br > 0:
            return (_POW_ZERO, _POW_ZERO)
        if br < 0:
            why = "pow(0, b) with re b < 0: an infinity (Annex G); its parts are fixed by no standard"
            return (_impl((INF, -INF), why), _impl((0.0, -0.0, NAN, INF, -INF), why))
        return (NAN, NAN)
    X, Y = Fraction(x), Fraction(y)
    if bi == 0:
        B = Fraction(br)
        k = B.denominator.bit_length() - 1  # B = m / 2^k
        m = B.numerator
        if k <= _POW_MAX_K and abs(m) <= _POW_MAX_N:
            p, q = X, Y
            for _ in range(k):
                r = _exact_sqrt_pair(p, q, sign_bit(y))
                if r is None:
                    break
                p, q = r
            else:
                rp, rq = _gpow(p, q, m)
                return (rp if rp != 0 else _POW_ZERO, rq if rq != 0 else _POW_ZERO)
    # exp(u + iv), u = br·L - bi·θ, v = br·θ + bi·L, L = log|a|, θ = arg a
    sy = -1 if sign_bit(y) else 1
    n2 = X * X + Y * Y
    zero_re = zero_im = False
    k4 = None  # θ = k4·π/4 when a lies on an axis or a diagonal
    if Y == 0:
        k4 = 0 if X > 0 else 4 * sy
    elif X == 0:
        k4 = 2 if Y > 0 else -2
    elif abs(X) == abs(Y):
        k4 = {(1, 1): 1, (-1, 1): 3, (-1, -1): -3, (1, -1): -1}[(1 if X > 0 else -1, 1 if Y > 0 else -1)]
    if k4 is not None and (bi == 0 or n2 == 1):
        t = Fraction(br) * k4 / 4  # v/π
        zero_im = t.denominator == 1
        zero_re = (t - Fraction(1, 2)).denominator == 1

    def theta(x, y):
        if y == 0:
            return mpmath.mpf(0) if x > 0 else sy * mpmath.pi
        return mpmath.atan2(y, x)

    def uv(x, y, br, bi, d, n2):
        # L = log|a| = ½·log(n2), n2 = |a|² exact; through log1p(n2 - 1) near |a| = 1
        L = mpmath.log1p(d) / 2 if abs(d) < 0.5 else mpmath.log(n2) / 2
        t = theta(x, y)
        return br * L - bi * t, br * t + bi * L

    def re(*args):
        u, v = uv(*args)
        return mpmath.exp(u) * mpmath.cos(v)

    def im(*args):
        u, v = uv(*args)
        return mpmath.exp(u) * mpmath.sin(v)
    args = (x, y, br, bi, n2 - 1, n2)
    return (_POW_ZERO if zero_re else Approx(re, *args),
            _POW_ZERO if zero_im else Approx(im, *args))


# ---------------------------------------------------------------------------
# atan2
# ---------------------------------------------------------------------------

_ATAN2_ZERO = _either_zero("complex atan2: the sign of an exact zero part depends on how "
                           "-i·log((x + iy)/sqrt(x² + y²)) is evaluated; no standard fixes it")


def _ieee_atan2(y: float, x: float):
    """Real atan2(y, x) of IEEE-754 (specials included), in the vocabulary."""
    if math.isnan(x) or math.isnan(y):
        return NAN
    s = -1.0 if sign_bit(y) else 1.0

    def pi_times(c):
        a = Approx(lambda: c * mpmath.pi)
        return a if s > 0 else cneg(a)
    if y == 0:
        return y if (x > 0 or (x == 0 and not sign_bit(x))) else pi_times(1)
    if math.isinf(y):
        if math.isinf(x):
            return pi_times(mpmath.mpf(1) / 4) if x > 0 else pi_times(mpmath.mpf(3) / 4)
        return pi_times(mpmath.mpf(1) / 2)
    if math.isinf(x):
        return math.copysign(0.0, y) if x > 0 else pi_times(1)
    if x == 0:
        return pi_times(mpmath.mpf(1) / 2)
    return Approx(mpmath.atan2, y, x)


def catan2(a: complex, b: complex):
    """Complex atan2(lhs = a = y, rhs = b = x), as XLA defines it:
    atan2(y, x) = -i·log((x + iy)/sqrt(x² + y²)).

    With u = x + iy, w = x² + y² (exact), q = u/sqrt(w): re = arg q, im = -log|q|
    = ½·log|w| - log|u|.  Exact zeros: im = 0 iff |u|⁴ = |w|²; re = 0 iff q > 0.
    Not fixed by any standard, so declared:
    * the sign of an exact zero part;
    * when w is a negative real, the side of sqrt's cut (both values);
    * when q is a negative real, arg q = ±π.
    w = 0: u = 0 gives NaN + i NaN (0/0), else NaN - i inf (u/0 is infinite).
    Real-valued operands that are zero or non-finite: the formula's NaN, or the
    real IEEE atan2 of the real parts (imaginary part ±0), both declared.
    Other non-finite operands: NaN + i NaN (the formula's inf - inf and inf/inf)."""
    yr, yi, xr, xi = a.real, a.imag, b.real, b.imag
    real_valued = yi == 0 and xi == 0
    if not all_finite(yr, yi, xr, xi) or (real_valued and yr == 0 and xr == 0):
        if real_valued and not (math.isnan(yr) or math.isnan(xr)):
            why = "complex atan2 of real operands: the formula gives NaN here; real atan2 of the real parts"
            r = _ieee_atan2(yr, xr)
            return (ImplDefined({"real atan2": r, "nan": NAN}, why=why),
                    ImplDefined({"+0": 0.0, "-0": -0.0, "nan": NAN}, why=why))
        return (NAN, NAN)
    Yr, Yi, Xr, Xi = (Fraction(v) for v in (yr, yi, xr, xi))
    ur, ui = Xr - Yi, Xi + Yr  # u = x + i·y
    vr, vi = Xr + Yi, Xi - Yr  # v = x - i·y;  w = u·v
    wr, wi = ur * vr - ui * vi, ur * vi + ui * vr
    if wr == 0 and wi == 0:
        return (NAN, NAN) if ur == 0 and ui == 0 else (NAN, -INF)
    nu2, nw2 = ur * ur + ui * ui, wr * wr + wi * wi
    # im = -log|q| = -¼·log(|u|⁴/|w|²) = -¼·log1p(d), d exact
    im = _ATAN2_ZERO if nu2 * nu2 == nw2 else cneg(_half_log(nu2 * nu2 / nw2))
    if not isinstance(im, ImplDefined):
        f = im.f
        im = Approx(lambda *a: f(*a) / 2, *im.args)
    on_cut = wi == 0 and wr < 0  # sqrt(w) = ±i·sqrt(-w): the side is not fixed
    # q² = u/v: q is real iff u·conj(v) is a positive real; then q = ±|q|
    tr, ti = ur * vr + ui * vi, ui * vr - ur * vi
    q_real = ti == 0 and tr > 0
    res = {}
    for s in ((1, -1) if on_cut else (None,)):
        # q = σ·p/|p| with p = principal sqrt(t), t = u·conj(v) = (u/v)|v|² (q² = u/v):
        # arg q = arg(t)/2 (σ = 1) or arg(t)/2 ∓ π (σ = -1), from the exact t without
        # cancellation.  σ = sign re(q·conj p) = ±|q||p|, a robust numerical decision.
        with mpmath.workprec(300):
            r = mpmath.mpc(0, s * mpmath.sqrt(-_mpq(wr))) if s else mpmath.sqrt(mpmath.mpc(_mpq(wr), _mpq(wi)))
            q = mpmath.mpc(_mpq(ur), _mpq(ui)) / r
            p = mpmath.mpc(0, mpmath.sqrt(-_mpq(tr))) if (ti == 0 and tr < 0) else \
                mpmath.sqrt(mpmath.mpc(_mpq(tr), _mpq(ti)))
            sigma = 1 if (q * mpmath.conj(p)).real > 0 else -1
        if q_real:
            if sigma > 0:
                res["zero"] = _ATAN2_ZERO
            else:
                res["+pi"], res["-pi"] = PI, cneg(PI)
            continue
        upper = ti > 0 or (ti == 0 and tr < 0)  # arg t in (0, π]
        shift = 0 if sigma > 0 else (-1 if upper else 1)
        key = "sqrt(x²+y²) = %s" % ("+i·sqrt(-w)" if s == 1 else "-i·sqrt(-w)" if s else "principal")
        if ti == 0:  # tr < 0: arg t = π
            res[key] = Approx(lambda k=shift: mpmath.pi / 2 + k * mpmath.pi)
        else:
            res[key] = Approx(lambda tr, ti, k=shift: mpmath.atan2(ti, tr) / 2 + k * mpmath.pi, tr, ti)
    if len(res) == 1:
        re = next(iter(res.values()))
    else:
        flat = {}
        for k, v in res.items():
            flat.update(v.alternatives if isinstance(v, ImplDefined) else {k: v})
        re = ImplDefined(flat, why="complex atan2 on a branch cut (sqrt of a negative real x² + y², or arg of "
                                   "a negative real q): the side is fixed by no standard")
    return (re, im)


def _mpq(q: Fraction):
    return mpmath.mpf(q.numerator) / q.denominator


# --------------------------------------------------------------------------
# The seed's "Errors" clause, applied once to every public function
# --------------------------------------------------------------------------

ERRORS_CLAUSE = ("seed, \"Errors\": exceptions for nonstandard operations (e.g. complex arithmetic) "
                 "are implementation-defined; C99 Annex G's value is expected, any other is reported")
ANNEX_G = "C99 Annex G"
OTHER = "other than Annex G (complex exceptions are implementation-defined)"
_depth = 0


def errors_clause(fn):
    """For a non-finite operand component, Annex G's answer becomes the first
    of two alternatives, the second being any value.  Only the outermost call
    wraps: the functions here call each other (csin is -i csinh(iz))."""
    @functools.wraps(fn)
    def outer(*zs):
        global _depth
        _depth += 1
        try:
            r = fn(*zs)
        finally:
            _depth -= 1
        if _depth or all(math.isfinite(z.real) and math.isfinite(z.imag) for z in map(complex, zs)):
            return r
        return ImplDefined({ANNEX_G: r, OTHER: ANY_VALUE}, why=ERRORS_CLAUSE)
    return outer


for _name in ("cmul", "cdiv", "cabs", "csign", "csqrt", "crsqrt", "ccbrt", "cexp", "cexpm1", "clog",
              "clog1p", "clogistic", "csinh", "ccosh", "ctanh", "csin", "ccos", "ctan", "cpow", "catan2"):
    globals()[_name] = errors_clause(globals()[_name])
