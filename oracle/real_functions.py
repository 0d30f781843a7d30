"""The one table from the real functions the op modules name in `Approx`
(written with mpmath, the clearer statement of the spec) to their two
evaluators here:

* `arb`: the same function in ball arithmetic (python-flint's arb, FLINT's
  Arb): an interval guaranteed to contain the true value, used by
  rigorous.py to decide correct rounding with no heuristic bound;
* `numpy`: a vectorised evaluation in float64 (long double for f64
  results) whose relative error is bounded by fast.FAST_REL_ERROR (or
  fast.LD_REL_ERROR), documented and tested there, used by fast.py to
  decide most elements of a whole array at once.

Both take the `Approx`'s arguments in order (atan2 is (y, x), like the
spec's and mpmath's).  A function missing here (the anonymous formulas of
spec/annex_g.py's complex functions, and any op added later) is still
evaluated: by ziv.py's mpmath loop, as before.  `UNCOVERED` says which.

Why arb rather than MPFR (gmpy2): measured per element on this machine
(bench/rigorous_libs.py) the two are within 2x of each other either way on
sin/exp/log/atan2/tanh/pow at 44 and 73 bits (1.5–3 µs, against mpmath's
7–16 µs), and arb encloses composed formulas (logistic, sign·x^y, k·π)
automatically, where MPFR's correct rounding covers one operation only and
each composition would need its own error analysis.  MPFR has one job
here (`mpfr`, below): f64 results of its single functions, where its
correct rounding is the answer outright and costs a tenth of arb's ball.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Callable

import mpmath
import numpy as np
from flint import arb

from ..spec.chlo.bessel_i1e import i1e
from ..spec.chlo.lgamma import log_abs_gamma
from ..spec.chlo.polygamma import polygamma
from ..spec.chlo.zeta import hurwitz_zeta
from ..spec.ieee import real_cbrt, reciprocal_sqrt
from ..spec.ops.atan2 import pi_times
from ..spec.ops.logistic import logistic_value
from ..spec.ops.power import signed_power
from .chlo_long_double import KERNELS as _LONG_DOUBLE, REL_ERROR as _LONG_DOUBLE_REL_ERROR
from .chlo_dd import zeta_float64 as _zeta_float64
from . import chlo_compiled as _chlo_compiled, chlo_fast_zeta as _chlo_fast_zeta


@dataclass(frozen=True)
class RealFunction:
    name: str
    arb: Callable        # arb args -> arb ball
    numpy: Callable | None   # float64 arrays -> float64 array (None: no vectorised evaluation, arb decides)
    mpfr: Callable | None = None   # Python floats -> the correctly rounded binary64 value (gmpy2), or None
    long_double: bool = True   # `numpy` keeps its bound in long double too (f64 results); False: float64 only
    # where `numpy` is float64 only: an evaluation of its own in long double for f64 results
    # (oracle/chlo_long_double/, CHLO's special functions), held to the same bound fast.LD_REL_ERROR
    long_double_numpy: Callable | None = None
    long_double_rel_error: float | None = None   # its bound, where tighter than fast.LD_REL_ERROR
    # a cheaper first stage for narrow results: (float64 argument arrays, format) -> (values, their
    # relative bound: a number or one per element) or None (no plan for those arguments), or a tuple of
    # such stages tried in order; fast._staged decides with each on what the ones before left and passes
    # the elements they leave to `numpy` (chlo_compiled.py: erf, erfc, lgamma, digamma, i1e, polygamma;
    # chlo_fast_zeta.py: zeta and polygamma for f32, f16, bf16)
    narrow: Callable | tuple | None = None

    def numpy_for(self, dtype) -> Callable | None:
        """The vectorised evaluation that keeps its bound in `dtype` (float64,
        or long double for f64 results), or None."""
        if np.dtype(dtype) == np.dtype(np.longdouble) and not self.long_double:
            return self.long_double_numpy
        return self.numpy


# MPFR (gmpy2) rounds each of its functions correctly to its context, by
# contract; in gmpy2.ieee(64)'s context (53 bits, binary64's exponent range,
# subnormalize) that value is the f64 result itself, which fast.py takes for
# the f64 elements its long double pass leaves (arb: about 25 µs each, MPFR
# 1-3).  Set only where f is a single MPFR function and its value at finite
# floats is never exactly a binary64 midpoint (so correct rounding is the
# one answer arb's enclosures converge to): sin … tanh and atan2 are
# transcendental at nonzero dyadic arguments (Lindemann–Weierstrass; the
# op modules state the trivial arguments exactly), a cube root or 1/sqrt of
# a float has no 54-bit midpoint value.  Not pow (x^1.5 can be a midpoint),
# hypot (a Pythagorean midpoint), nor the composed formulas (logistic,
# sign·x^y, k·π).  bench/mpfr_vs_arb.py and tests/oracle/test_round_fast.py
# check it against arb.
try:
    import gmpy2
    _IEEE64 = gmpy2.ieee(64)
except ImportError:   # not installed: arb decides those elements, slower, with the same bits
    _IEEE64 = None


def _mpfr(name: str):
    return None if _IEEE64 is None else getattr(_IEEE64, name)


_PI = np.longdouble("3.14159265358979323846264338327950288")   # π to long double (or float64) precision


def _np_logistic(t):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-t))


def _np_signed_power(s, x, y):
    with np.errstate(over="ignore", under="ignore"):
        return s * np.power(x, y)


TABLE: dict = {
    mpmath.sin: RealFunction("sin", lambda x: x.sin(), np.sin, _mpfr("sin")),
    mpmath.cos: RealFunction("cos", lambda x: x.cos(), np.cos, _mpfr("cos")),
    mpmath.tan: RealFunction("tan", lambda x: x.tan(), np.tan, _mpfr("tan")),
    mpmath.exp: RealFunction("exp", lambda x: x.exp(), np.exp, _mpfr("exp")),
    mpmath.expm1: RealFunction("expm1", lambda x: x.expm1(), np.expm1, _mpfr("expm1")),
    mpmath.log: RealFunction("log", lambda x: x.log(), np.log, _mpfr("log")),
    mpmath.log1p: RealFunction("log1p", lambda x: x.log1p(), np.log1p, _mpfr("log1p")),
    mpmath.tanh: RealFunction("tanh", lambda x: x.tanh(), np.tanh, _mpfr("tanh")),
    mpmath.atan2: RealFunction("atan2", lambda y, x: arb.atan2(y, x), np.arctan2, _mpfr("atan2")),
    mpmath.hypot: RealFunction("hypot", lambda x, y: (x * x + y * y).sqrt(), np.hypot),
    mpmath.cbrt: RealFunction("cbrt", lambda x: x.root(3) if x >= 0 else -(-x).root(3), np.cbrt, _mpfr("cbrt")),
    real_cbrt: RealFunction("rootn3", lambda x: x.root(3) if x >= 0 else -(-x).root(3), np.cbrt, _mpfr("cbrt")),
    reciprocal_sqrt: RealFunction("rSqrt", lambda x: 1 / x.sqrt(), lambda x: 1 / np.sqrt(x), _mpfr("rec_sqrt")),
    signed_power: RealFunction("signed_power", lambda s, x, y: s * x ** y, _np_signed_power),
    pi_times: RealFunction("pi_times", lambda k: k * arb.pi(), lambda k: k * _PI),
    logistic_value: RealFunction("logistic", lambda t: 1 / (1 + (-t).exp()), _np_logistic),
}

# CHLO's special functions (spec/chlo/).  Their vectorised evaluations are
# scipy.special's (a dependency of jaxlib, which the oracle reads programs
# with), with series, reflections and tests of cancellation of our own
# where scipy's relative accuracy fails: float64 only, so for f64 results
# MPFR decides where it has the function, arb elsewhere
# (`long_double=False`).  Their relative error is measured like numpy's
# (fastcheck.py, test_fast.py, tests/oracle/test_chlo_fast.py, which adds
# adversarial points: near zeros, poles, huge and tiny arguments); where it
# is not small the evaluation answers NaN, which the fast path never
# decides, and arb states those elements.  MPFR for f64: its lngamma is
# NaN where Γ < 0 (left to arb), its erf, erfc, digamma, asin … round
# correctly by contract; that erf, erfc, lgamma or digamma of a float is
# never exactly a binary64 midpoint is not proven (asin … are
# transcendental at nonzero algebraic arguments, Lindemann–Weierstrass),
# but MPFR's tie-to-even answer would still be the correctly rounded value.
try:
    import scipy.special as _sp
except ImportError:   # no scipy: arb decides every element of these functions, slower, with the same bits
    _sp = None


def _scipy(name: str):
    return None if _sp is None else getattr(_sp, name)


def _taylor_coefficients(first, zeta_minus: int, n: int = 24) -> np.ndarray:
    """Coefficients c_1 … c_n (float64, each correctly rounded from 40
    digits) of log Γ(a + z) = Σ c_k z^k at a = 1 (zeta_minus = 0) or a = 2
    (zeta_minus = 1): c_1 = -γ or 1 - γ, c_k = (-1)^k (ζ(k) - zeta_minus)/k
    (Abramowitz & Stegun 6.1.33; at 2, log Γ(2 + z) = log Γ(1 + z) + log(1 + z))."""
    with mpmath.workdps(40):
        return np.array([float(first())] + [float((-1) ** k * (mpmath.zeta(k) - zeta_minus) / k)
                                            for k in range(2, n + 1)])


_EULER = float(mpmath.euler)   # γ, correctly rounded
_LGAMMA_AT_1 = _taylor_coefficients(lambda: -mpmath.euler, 0)
_LGAMMA_AT_2 = _taylor_coefficients(lambda: 1 - mpmath.euler, 1)
_SERIES_RADIUS = 0.125   # |z| <= 1/8: 24 terms leave < 2^-60 of the sum; scipy's gammaln beyond (2^-46)


def _horner(c: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Σ c_k z^k (k >= 1) as z·(c_1 + z·(c_2 + …)): near a zero of the sum
    (z → 0) its relative error stays that of the bracket, a few ulp where
    its terms shrink geometrically and c_1 dominates (8-fold for lgamma
    about 1 and 2 at |z| <= 1/8, 4-fold for `_zero_series`)."""
    acc = np.full_like(z, c[-1])
    for ck in c[-2::-1]:
        acc = acc * z + ck
    return acc * z


def _lgamma_positive(x):
    """log Γ(x) for x > 0: scipy's gammaln (within 2^-46 relative beyond
    1/16 of the zeros 1 and 2, measured), and within 1/8 of those zeros
    the Taylor series of log Γ about them, in z = x - 1 or x - 2 (exact:
    Sterbenz), whose relative error stays a few ulp as z → 0 where gammaln's
    absolute error becomes relative (2^-29 at 2^-24 from them).  Below
    2^-26, -log x - γx (scipy's gammaln overflows at the smallest subnormals)."""
    y = _sp.gammaln(x)
    tiny = np.flatnonzero(x < 2.0 ** -26)   # gammaln(2^-1074) is inf: -log x - γx, within 2^-52 there
    y[tiny] = -np.log(x[tiny]) - _EULER * x[tiny]
    for a, c in ((1.0, _LGAMMA_AT_1), (2.0, _LGAMMA_AT_2)):
        near = np.flatnonzero(np.abs(x - a) <= _SERIES_RADIUS)
        if len(near):
            y[near] = _horner(c, x[near] - a)
    return y


# Zeros where a reflection's terms cancel over stretches wide enough to matter: lgamma's between
# -2 and -5 (two between each pair of poles; further left they lie within 1/n! of the poles) and
# digamma's in each of (-n, -n + 1) down to -12, as brackets findroot refines
_LGAMMA_ZEROS = ((-2.46, -2.45), (-2.75, -2.74), (-3.15, -3.14), (-3.96, -3.95), (-4.04, -4.03),
                 (-4.992, -4.991), (-5.009, -5.008))
_DIGAMMA_ZEROS = tuple((-n + 0.001, -n + 0.999) for n in range(1, 13))


@functools.cache
def _zero_series(name: str) -> list:
    """[(x0 as hi + lo, radius, c_1 … c_29)] about each zero x0 (40 digits)
    of lgamma (`_LGAMMA_ZEROS`) or digamma (`_DIGAMMA_ZEROS`): f(x0 + h) =
    Σ c_k h^k, c_k = f⁽ᵏ⁾(x0)/k! from ψ⁽ᵏ⁻¹⁾ (lgamma) or ψ⁽ᵏ⁾ (digamma),
    used where |h| <= d/4, d the distance to x0's nearer pole (the series'
    radius): the pole's share of c_k is d^-k (lgamma) or d^-(k+1), so the
    terms after the first fall 4-fold each, the 30th below 2^-55 of the
    sum, and Horner keeps a few ulp of relative accuracy as h → 0, where
    the reflection's terms cancel.  Computed on first use (mpmath, 0.1 s
    for each function)."""
    f, shift, brackets = ((lambda t: mpmath.log(abs(mpmath.gamma(t))), -1, _LGAMMA_ZEROS) if name == "lgamma"
                          else (mpmath.digamma, 0, _DIGAMMA_ZEROS))
    out = []
    with mpmath.workdps(40):
        for bracket in brackets:
            x0 = mpmath.findroot(f, bracket, solver="anderson")
            hi = float(x0)
            radius = float(abs(x0 - mpmath.nint(x0))) / 4
            c = np.array([float(mpmath.psi(k + shift, x0) / mpmath.factorial(k)) for k in range(1, 30)])
            out.append((hi, float(x0 - hi), radius, c))
    return out


def _near_zeros(name: str, x: np.ndarray, y: np.ndarray) -> None:
    """y at the elements of x (x < 0) within a series' radius of a zero of
    `name`: its Taylor series there (`_zero_series`), in place.  x - hi is
    exact (Sterbenz), and h = (x - hi) - lo within 2^-53 of x - x0."""
    for hi, lo, radius, c in _zero_series(name):
        near = np.flatnonzero(np.abs(x - hi) <= radius)
        if len(near):
            y[near] = _horner(c, (x[near] - hi) - lo)


_CANCELLATION = 64   # a reflection is trusted where its terms' magnitudes sum to at most this times its value


def _one_minus(x):
    """(u, du): u = 1 - x rounded, du its rounding error exactly (Knuth's
    TwoSum), so 1 - x = u + du."""
    u = 1 - x
    v = u - 1
    return u, (1 - (u - v)) + (-x - v)


def _np_lgamma(x):
    """log|Γ(x)|: `_lgamma_positive` for x > 0; for x < 0 the reflection
    log π - log|sin(π r)| - log Γ(1 - x), r = x - round(x) (exact; sin of
    π·r, |r| <= ½, keeps its relative accuracy near the poles).  Each term
    is within a few ulp of itself (the sine's argument within 2^-52 of
    π·r: below 2^-51 absolute on its logarithm), and 1 - x = u + du
    (`_one_minus`, du = 0 for the arguments of formats up to f32 above
    -2^28) moves log Γ by |ψ(u)·du| <= max(1, log u)·|du|: with m = the
    terms' magnitudes + 2^50 of that, the error is below 2^-50·m.  The
    terms cancel near lgamma's zeros (two between each pair of poles below
    -2; below -5 within 1/n! of the pole -n), so the sum is trusted only
    where m is at most `_CANCELLATION` = 64 times it (2^-44 relative,
    fast.FAST_REL_ERROR/16), NaN (arb decides) elsewhere.  Above -2^-26,
    -log|x| - γx (π·r would be subnormal); near the zeros between -2 and
    -5, their Taylor series (`_zero_series`)."""
    with np.errstate(all="ignore"):
        x = np.asarray(x, dtype=np.float64)
        y = np.full_like(x, np.nan)
        pos = x > 0
        y[pos] = _lgamma_positive(x[pos])
        neg = np.flatnonzero(x < 0)
        if len(neg):
            xn = x[neg]
            u, du = _one_minus(xn)
            r = xn - np.round(xn)
            a, b, c = np.log(np.pi), -np.log(np.abs(np.sin(np.pi * r))), -_lgamma_positive(u)
            left = a + b + c
            m = abs(a) + np.abs(b) + np.abs(c) + 2.0 ** 50 * np.maximum(1, np.log(u)) * np.abs(du)
            left = np.where(m <= _CANCELLATION * np.abs(left), left, np.nan)
            _near_zeros("lgamma", xn, left)
            # tiny x: π·r is subnormal below 2^-1022 (inexact); log|Γ(x)| = -log|x| - γx + O(x²), and
            # the rest is below 2^-52 of -log|x| >= 18 where |x| < 2^-26
            tiny = xn > -(2.0 ** -26)
            y[neg] = np.where(tiny, -np.log(-xn) - _EULER * xn, left)
    return y


def _np_digamma(x):
    """ψ(x): scipy's psi for x > 0 (a series about its positive zero
    1.4616…: relative accuracy there too); for x < 0 the reflection
    ψ(x) = ψ(1 - x) - π/tan(π r), r = x - round(x) (exact; cot has period
    π).  Each term is within a few ulp of itself, and 1 - x = u + du
    (`_one_minus`) moves ψ by |ψ'(u)·du| <= 2|du|: with m the terms'
    magnitudes + 1 + 2^51·|du| the error is below 2^-50·m, trusted where m
    is at most half `_CANCELLATION` times the result (2^-45: psi's
    measured error is nearer its bound than gammaln's), NaN near ψ's
    zeros (one between each pair of poles) where the terms cancel — but
    near those above -12, their Taylor series (`_zero_series`).  Above
    -2^-26, -1/x - γ (π·r would be subnormal)."""
    with np.errstate(all="ignore"):
        x = np.asarray(x, dtype=np.float64)
        y = np.full_like(x, np.nan)
        pos = x > 0
        y[pos] = _sp.psi(x[pos])
        neg = np.flatnonzero(x < 0)
        if len(neg):
            xn = x[neg]
            u, du = _one_minus(xn)
            a, b = _sp.psi(u), -np.pi / np.tan(np.pi * (xn - np.round(xn)))
            s = a + b
            m = np.abs(a) + np.abs(b) + 1 + 2.0 ** 51 * np.abs(du)
            s = np.where(2 * m <= _CANCELLATION * np.abs(s), s, np.nan)
            _near_zeros("digamma", xn, s)
            # tiny x: π·r is subnormal below 2^-1022 (inexact); ψ(x) = -1/x - γ + ζ(2)·x + …, the rest
            # below 2^-52 of 1/|x| where |x| < 2^-26 (an overflow of -1/x is the true value's, past 2^1024)
            y[neg] = np.where(xn > -(2.0 ** -26), -1 / xn - _EULER, s)
    return y


# Hurwitz zeta by Euler–Maclaurin for 1 < s <= 12 (scipy's zeta, beyond, costs 0.5 µs an element):
# the sum's first terms up to q + k >= 12, then the tail at z = q + N in [12, 13) (or z = q) with 20
# Bernoulli terms, whose truncation is below 2^-56 of ζ there (checked in mpmath for s up to 13)
_EM_Z, _EM_MAX_S = 12, 12.0
with mpmath.workdps(40):
    _EM_B = [float(mpmath.bernoulli(2 * j) / mpmath.factorial(2 * j)) for j in range(1, 21)]


def _hurwitz_em(s, q):
    """ζ(s, q) for 1 < s <= 12 and q > 0 (float64 arrays): Σ_{k<N} (q+k)^-s
    + z^(1-s)/(s-1) + z^-s/2 + Σ_j B_2j/(2j)!·s(s+1)…(s+2j-2)·z^(-s-2j+1),
    z = q + N, N = ceil(12 - q) (0 for q >= 12).  Positive terms and an
    alternating tail below 1/12 of the total: each term within a few ulp
    of numpy's pow (2^-50) and s times q + k's or z's rounding (< 2^-49),
    the sum within 2^-47.  s - 1 is exact (1 < s <= 12: s is a multiple
    of its ulp, and 1 of that ulp), which matters for huge z, where an
    error δ in the exponent would move z^(1-s) by δ·ln z."""
    n = np.where(q < _EM_Z, np.ceil(_EM_Z - q), 0.0)
    acc = np.zeros_like(q)
    for k in range(_EM_Z):
        live = np.flatnonzero(k < n)
        if not len(live):
            break
        acc[live] += (q[live] + k) ** -s[live]
    z = q + n
    d = s - 1
    z1s = z ** -d                       # z^(1-s) itself: z^-s·z would underflow first for huge z
    u = s * (z1s / z) / z               # s·z^(-s-1), the first Bernoulli term's power
    tail = np.zeros_like(q)
    for j, b in enumerate(_EM_B, start=1):
        tail += b * u
        u = u * ((s + 2 * j - 1) * (s + 2 * j)) / (z * z)
    return acc + (z1s / d + (z1s / z) / 2 + tail)


def _zeta(s, q):
    """ζ(s, q), s > 1, q > 0: `_hurwitz_em` up to s = 12 — its values, bit
    for bit, computed by chlo_dd.zeta_float64.hurwitz_em (the same float64
    operations per element, scheduled in cache-sized chunks: about twice as
    fast) — and scipy's zeta beyond."""
    y = np.empty_like(q)
    em = s <= _EM_MAX_S
    y[em] = _zeta_float64.hurwitz_em(s[em], q[em])
    y[~em] = _sp.zeta(s[~em], q[~em])
    return y


_FACTORIAL = np.array([float(math.factorial(k)) for k in range(171)])   # each correctly rounded; 171! overflows


def _np_polygamma(n, x):
    """ψ⁽ⁿ⁾(x) = (-1)^(n+1)·n!·ζ(n + 1, x) for integer 1 <= n <= 170 and
    x > 0: the Hurwitz zeta (`_zeta`: a positive sum, no cancellation,
    within 2^-47) times n! (rounded once).  NaN elsewhere (x < 0: the
    mpmath loop; n past 170: arb), and where ζ underflows float64's normal
    range (< 2^-1000), since n! may lift the product back into it."""
    with np.errstate(all="ignore"):
        n, x = np.asarray(n, dtype=np.float64), np.asarray(x, dtype=np.float64)
        ok = (n >= 1) & (n <= 170) & (n == np.floor(n)) & (x > 0) & np.isfinite(x)
        k = np.where(ok, n, 1).astype(np.int64)
        z = _zeta(k + 1.0, np.where(ok, x, 1.0))
        y = np.where(k % 2 == 1, 1.0, -1.0) * _FACTORIAL[k] * z
        return np.where(ok & (z >= 2.0 ** -1000), y, np.nan)


def _np_zeta(x, q):
    """ζ(x, q) for x > 1, q > 0 (the series' domain: positive terms, no
    cancellation): `_zeta`, NaN elsewhere (q < 0: the mpmath loop)."""
    with np.errstate(all="ignore"):
        x, q = np.asarray(x, dtype=np.float64), np.asarray(q, dtype=np.float64)
        ok = (x > 1) & (q > 0) & np.isfinite(x) & np.isfinite(q)
        return np.where(ok, _zeta(np.where(ok, x, 2.0), np.where(ok, q, 1.0)), np.nan)


def _arb_log_abs_gamma(x):
    if x > 0:
        return x.lgamma()
    # Γ(x)Γ(1-x) = π / sin(πx): log|Γ(x)| = log π - log|sin(πx)| - log Γ(1-x), for x < 0 not an integer
    return arb.pi().log() - abs(x.sin_pi()).log() - (1 - x).lgamma()


def _arb_i1e(x):
    """e^{-|x|}·I₁(x) = sign(x)·(FLINT's exponentially scaled I₁ at |x|):
    I₁ is odd.  Not I₁(x)·exp(-|x|), whose I₁ overflows arb's working
    balls to NaN past |x| ≈ 1e300."""
    s = abs(x).bessel_i(1, scaled=True)
    return -s if x < 0 else s


def _arb_polygamma(n, x):
    k = int(n.unique_fmpz())   # n >= 1, an integer (spec/chlo/polygamma.py), x > 0
    return (-1) ** (k + 1) * arb(k).fac() * arb(k + 1).zeta(x)


def _chlo(name: str, arb_fn, numpy_fn, mpfr_fn=None, narrow=None) -> RealFunction:
    """A CHLO special function: `numpy_fn` keeps its bound in float64 only;
    f64 results take its long double evaluation (oracle/chlo_long_double/)
    where there is one, MPFR and arb elsewhere; `narrow`: a cheaper first
    stage for f32, f16 and bf16 results (RealFunction.narrow)."""
    return RealFunction(name, arb_fn, numpy_fn, mpfr_fn, long_double=False,
                        long_double_numpy=_LONG_DOUBLE.get(name),
                        long_double_rel_error=_LONG_DOUBLE_REL_ERROR.get(name),
                        narrow=narrow if numpy_fn else None)


TABLE.update({
    mpmath.erf: _chlo("erf", lambda x: x.erf(), _scipy("erf"), _mpfr("erf"), narrow=_chlo_compiled.erf),
    mpmath.erfc: _chlo("erfc", lambda x: x.erfc(), _scipy("erfc"), _mpfr("erfc"), narrow=_chlo_compiled.erfc),
    mpmath.erfinv: _chlo("erfinv", lambda x: x.erfinv(), _scipy("erfinv"), narrow=_chlo_compiled.erf_inv),
    log_abs_gamma: _chlo("lgamma", _arb_log_abs_gamma, _sp and _np_lgamma, _mpfr("lngamma"),
                         narrow=_chlo_compiled.cells_stage("lgamma")),
    mpmath.digamma: _chlo("digamma", lambda x: x.digamma(), _sp and _np_digamma, _mpfr("digamma"),
                          narrow=_chlo_compiled.cells_stage("digamma")),
    mpmath.asin: RealFunction("asin", lambda x: x.asin(), np.arcsin, _mpfr("asin")),
    mpmath.acos: RealFunction("acos", lambda x: x.acos(), np.arccos, _mpfr("acos")),
    mpmath.atan: RealFunction("atan", lambda x: x.atan(), np.arctan, _mpfr("atan")),
    mpmath.asinh: RealFunction("asinh", lambda x: x.asinh(), np.arcsinh, _mpfr("asinh")),
    mpmath.acosh: RealFunction("acosh", lambda x: x.acosh(), np.arccosh, _mpfr("acosh")),
    mpmath.atanh: RealFunction("atanh", lambda x: x.atanh(), np.arctanh, _mpfr("atanh")),
    mpmath.sinh: RealFunction("sinh", lambda x: x.sinh(), np.sinh, _mpfr("sinh")),
    mpmath.cosh: RealFunction("cosh", lambda x: x.cosh(), np.cosh, _mpfr("cosh")),
    i1e: _chlo("i1e", _arb_i1e, _scipy("i1e"), narrow=_chlo_compiled.cells_stage("i1e")),
    polygamma: _chlo("polygamma", _arb_polygamma, _sp and _np_polygamma,
                     narrow=(_chlo_compiled.polygamma, _chlo_fast_zeta.polygamma)),
    hurwitz_zeta: _chlo("zeta", lambda x, q: x.zeta(q), _sp and _np_zeta, narrow=_chlo_fast_zeta.zeta),
})

UNCOVERED = ("the lambdas of spec/annex_g.py's complex functions (components of csin, cexp, clog, "
             "csqrt, ccbrt, cpow …, and its π constants), and spec/chlo's polygamma and Hurwitz zeta at "
             "negative arguments (arb's Hurwitz zeta takes q > 0 only): mpmath's Ziv loop, ziv.py")
