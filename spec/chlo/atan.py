"""chlo.atan — arctangent, element-wise, real operands (chlo.md "chlo.atan":
atan2(x, 1)).

atan(±0) = ±0, atan(±inf) = ±π/2 (an `Approx` of π/2, as atan2 states
it), NaN → NaN; every other float is an `Approx` of atan.  Complex
operands: C99's principal catan, -i catanh(iz) with Annex G.6.2.3's special
values (spec/chlo/complex_inverse.py).
"""
import math

import mpmath

from ..dsl import COMPLEX, FLOAT, Approx, Generic, finite_nonzero
from ..ops.atan2 import pi_times
from .common import unary
from .complex_inverse import catan


def element(op, x):
    if isinstance(x, complex):
        return catan(x)
    if math.isnan(x):
        return x
    if math.isinf(x):
        return Approx(pi_times, math.copysign(0.5, x))
    if x == 0:
        return x
    return Approx(mpmath.atan, x)


SPEC = unary("atan", element, FLOAT + COMPLEX, generic=Generic(mpmath.atan, finite_nonzero))
