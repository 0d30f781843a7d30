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
each composition would need its own error analysis.
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


_PI = np.longdouble("3.14159265358979323846264338327950288")   # π to long double (or float64) precision


def _np_logistic(t):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-t))


def _np_signed_power(s, x, y):
    with np.errstate(over="ignore", under="ignore"):
        return s * np.power(x, y)


TABLE: dict = {
    mpmath.sin: RealFunction("sin", lambda x: x.sin(), np.sin),
    mpmath.cos: RealFunction("cos", lambda x: x.cos(), np.cos),
    mpmath.tan: RealFunction("tan", lambda x: x.tan(), np.tan),
    mpmath.exp: RealFunction("exp", lambda x: x.exp(), np.exp),
    mpmath.expm1: RealFunction("expm1", lambda x: x.expm1(), np.expm1),
    mpmath.log: RealFunction("log", lambda x: x.log(), np.log),
    mpmath.log1p: RealFunction("log1p", lambda x: x.log1p(), np.log1p),
    mpmath.tanh: RealFunction("tanh", lambda x: x.tanh(), np.tanh),
    mpmath.atan2: RealFunction("atan2", lambda y, x: arb.atan2(y, x), np.arctan2),
    mpmath.hypot: RealFunction("hypot", lambda x, y: (x * x + y * y).sqrt(), np.hypot),
    mpmath.cbrt: RealFunction("cbrt", lambda x: x.root(3) if x >= 0 else -(-x).root(3), np.cbrt),
    _real_cbrt: RealFunction("rootn3", lambda x: x.root(3) if x >= 0 else -(-x).root(3), np.cbrt),
    _rsqrt: RealFunction("rSqrt", lambda x: 1 / x.sqrt(), lambda x: 1 / np.sqrt(x)),
    signed_power: RealFunction("signed_power", lambda s, x, y: s * x ** y, _np_signed_power),
    pi_times: RealFunction("pi_times", lambda k: k * arb.pi(), lambda k: k * _PI),
    _logistic: RealFunction("logistic", lambda t: 1 / (1 + (-t).exp()), _np_logistic),
}

UNCOVERED = ("the lambdas of spec/annex_g.py's complex functions (components of csin, cexp, clog, "
             "csqrt, ccbrt, cpow …, and its π constants): mpmath's Ziv loop, ziv.py")
