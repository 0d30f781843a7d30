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

from ..spec.ieee import _real_cbrt, _rsqrt
from ..spec.ops.atan2 import pi_times
from ..spec.ops.logistic import _logistic
from ..spec.ops.power import signed_power


@dataclass(frozen=True)
class RealFunction:
    name: str
    arb: Callable        # arb args -> arb ball
    numpy: Callable      # float64 arrays -> float64 array
    mpfr: Callable | None = None   # Python floats -> the correctly rounded binary64 value (gmpy2), or None


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

UNCOVERED = ("the lambdas of spec/annex_g.py's complex functions (components of csin, cexp, clog, "
             "csqrt, ccbrt, cpow …, and its π constants): mpmath's Ziv loop, ziv.py")
