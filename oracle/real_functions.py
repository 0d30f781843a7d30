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

from dataclasses import dataclass
from typing import Callable

import mpmath
import numpy as np
from flint import arb

from ..spec.chlo.bessel_i1e import i1e
from ..spec.chlo.lgamma import log_abs_gamma
from ..spec.chlo.polygamma import polygamma
from ..spec.chlo.zeta import hurwitz_zeta
from ..spec.ieee import _real_cbrt, _rsqrt
from ..spec.ops.atan2 import pi_times
from ..spec.ops.logistic import _logistic
from ..spec.ops.power import signed_power


@dataclass(frozen=True)
class RealFunction:
    name: str
    arb: Callable        # arb args -> arb ball
    numpy: Callable | None   # float64 arrays -> float64 array (None: no vectorised evaluation, arb decides)
    mpfr: Callable | None = None   # Python floats -> the correctly rounded binary64 value (gmpy2), or None
    long_double: bool = True   # `numpy` keeps its bound in long double too (f64 results); False: float64 only


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
    _real_cbrt: RealFunction("rootn3", lambda x: x.root(3) if x >= 0 else -(-x).root(3), np.cbrt, _mpfr("cbrt")),
    _rsqrt: RealFunction("rSqrt", lambda x: 1 / x.sqrt(), lambda x: 1 / np.sqrt(x), _mpfr("rec_sqrt")),
    signed_power: RealFunction("signed_power", lambda s, x, y: s * x ** y, _np_signed_power),
    pi_times: RealFunction("pi_times", lambda k: k * arb.pi(), lambda k: k * _PI),
    _logistic: RealFunction("logistic", lambda t: 1 / (1 + (-t).exp()), _np_logistic),
}

# CHLO's special functions (spec/chlo/).  Their vectorised evaluations are
# scipy.special's (a dependency of jaxlib, which the oracle reads programs
# with): float64 only, so for f64 results MPFR decides where it has the
# function, arb elsewhere (`long_double=False`).  Their relative error is
# measured like numpy's (fastcheck.py, test_fast.py, bench/fast_vs_rigorous.py);
# where it is not small — an absolute error near a zero of the function
# (lgamma at 1 and 2: scipy's gammaln is within 2^-29 relative at 2^-24 from
# them, 2^-46 beyond 1/16), or the reflection formula near the poles of x < 0
# (digamma: 2^-39 at -16.99999; lgamma on [-5, 0]) — the evaluation answers NaN, which the fast
# path never decides, and arb states those elements.  MPFR for f64: its
# lngamma is NaN where Γ < 0 (left to arb), its erf, erfc, digamma, asin …
# round correctly by contract; that erf, erfc, lgamma or digamma of a float
# is never exactly a binary64 midpoint is not proven (asin … are
# transcendental at nonzero algebraic arguments, Lindemann–Weierstrass), but
# MPFR's tie-to-even answer would still be the correctly rounded value.
try:
    import scipy.special as _sp
except ImportError:   # no scipy: arb decides every element of these functions, slower, with the same bits
    _sp = None


def _scipy(name: str):
    return None if _sp is None else getattr(_sp, name)


def _np_lgamma(x):
    """log|Γ(x)|: scipy's gammaln for x > 0; for x < -5 the reflection
    log π - log|sin(π r)| - gammaln(1 - x), r = x - round(x) (exact; sin of
    π·r, |r| <= ½, keeps its relative accuracy near the poles).  Its three
    terms cancel near lgamma's zeros (one beside every pole: |x + n| ≈ 1/n!),
    so it is trusted only where their magnitudes sum to less than 16 times
    the result's (each term within 2^-50 relative: a sum within 2^-46).  NaN
    (untrusted) there, within 1/8 of the zeros 1 and 2, and on [-5, 0]
    (arb decides)."""
    with np.errstate(all="ignore"):
        y = _sp.gammaln(x)
        r = x - np.round(x)
        a, b, c = np.log(np.pi), -np.log(np.abs(np.sin(np.pi * r))), -_sp.gammaln(1 - x)
        left = a + b + c
        cancels = (abs(a) + np.abs(b) + np.abs(c)) > 16 * np.abs(left)
    y = np.where(x < -5, left, y)
    untrusted = ((x <= 0) & (x >= -5)) | (np.abs(x - 1) < 0.125) | (np.abs(x - 2) < 0.125) | ((x < -5) & cancels)
    return np.where(untrusted, np.nan, y)


def _np_digamma(x):
    return np.where(x < 0, np.nan, _sp.psi(x))


def _arb_log_abs_gamma(x):
    if x > 0:
        return x.lgamma()
    # Γ(x)Γ(1-x) = π / sin(πx): log|Γ(x)| = log π - log|sin(πx)| - log Γ(1-x), for x < 0 not an integer
    return arb.pi().log() - abs(x.sin_pi()).log() - (1 - x).lgamma()


def _arb_polygamma(n, x):
    k = int(n.unique_fmpz())   # n >= 1, an integer (spec/chlo/polygamma.py), x > 0
    return (-1) ** (k + 1) * arb(k).fac() * arb(k + 1).zeta(x)


TABLE.update({
    mpmath.erf: RealFunction("erf", lambda x: x.erf(), _scipy("erf"), _mpfr("erf"), long_double=False),
    mpmath.erfc: RealFunction("erfc", lambda x: x.erfc(), _scipy("erfc"), _mpfr("erfc"), long_double=False),
    mpmath.erfinv: RealFunction("erfinv", lambda x: x.erfinv(), _scipy("erfinv"), long_double=False),
    log_abs_gamma: RealFunction("lgamma", _arb_log_abs_gamma, _sp and _np_lgamma, _mpfr("lngamma"),
                                long_double=False),
    mpmath.digamma: RealFunction("digamma", lambda x: x.digamma(), _sp and _np_digamma, _mpfr("digamma"),
                                 long_double=False),
    mpmath.asin: RealFunction("asin", lambda x: x.asin(), np.arcsin, _mpfr("asin")),
    mpmath.acos: RealFunction("acos", lambda x: x.acos(), np.arccos, _mpfr("acos")),
    mpmath.atan: RealFunction("atan", lambda x: x.atan(), np.arctan, _mpfr("atan")),
    mpmath.asinh: RealFunction("asinh", lambda x: x.asinh(), np.arcsinh, _mpfr("asinh")),
    mpmath.acosh: RealFunction("acosh", lambda x: x.acosh(), np.arccosh, _mpfr("acosh")),
    mpmath.atanh: RealFunction("atanh", lambda x: x.atanh(), np.arctanh, _mpfr("atanh")),
    mpmath.sinh: RealFunction("sinh", lambda x: x.sinh(), np.sinh, _mpfr("sinh")),
    mpmath.cosh: RealFunction("cosh", lambda x: x.cosh(), np.cosh, _mpfr("cosh")),
    i1e: RealFunction("i1e", lambda x: x.bessel_i(1) * (-abs(x)).exp(), _scipy("i1e"), long_double=False),
    polygamma: RealFunction("polygamma", _arb_polygamma, None),
    hurwitz_zeta: RealFunction("zeta", lambda x, q: x.zeta(q), None),
})

UNCOVERED = ("the lambdas of spec/annex_g.py's complex functions (components of csin, cexp, clog, "
             "csqrt, ccbrt, cpow …, and its π constants), and spec/chlo's polygamma and Hurwitz zeta at "
             "negative arguments (arb's Hurwitz zeta takes q > 0 only): mpmath's Ziv loop, ziv.py")
