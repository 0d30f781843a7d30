"""chlo.erfc — the complementary error function 1 - erf(x), element-wise
(chlo.md "chlo.erfc").

erfc(±0) = 1, erfc(+inf) = +0, erfc(-inf) = 2 exactly; NaN → NaN; every
other float is an `Approx` of erfc (positive everywhere: its underflow for
large x is the rounding of a positive value, +0).
"""
import math

import mpmath

from ..dsl import FLOAT, Approx, Generic, finite_nonzero
from .common import unary


def element(op, x):
    if math.isnan(x):
        return x
    if math.isinf(x):
        return 0.0 if x > 0 else 2.0
    if x == 0:
        return 1.0
    return Approx(mpmath.erfc, x)


SPEC = unary("erfc", element, FLOAT, generic=Generic(mpmath.erfc, finite_nonzero))
