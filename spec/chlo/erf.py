"""chlo.erf — the Gauss error function, element-wise (chlo.md "chlo.erf").

erf(±0) = ±0 and erf(±inf) = ±1 exactly (erf is odd, and tends to ±1);
NaN → NaN; every other float is an `Approx` of erf, rounded correctly and
judged with the ULP tolerance of spec/accuracy.py.  chlo.md states erf by
its implementation ("erf_impl(x) if |x| < 1, 1 - erfc_impl(x) otherwise"):
the meaning is the function, the formula one way to compute it.
"""
import math

import mpmath

from ..dsl import FLOAT, Approx, Generic, finite_nonzero
from .common import unary


def element(op, x):
    if math.isnan(x):
        return x
    if math.isinf(x):
        return math.copysign(1.0, x)
    if x == 0:
        return x
    return Approx(mpmath.erf, x)


SPEC = unary("erf", element, FLOAT, generic=Generic(mpmath.erf, finite_nonzero))
