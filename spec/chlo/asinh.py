"""chlo.asinh — inverse hyperbolic sine, element-wise, real operands
(chlo.md "chlo.asinh").

asinh(±0) = ±0, asinh(±inf) = ±inf, NaN → NaN; every other float is an
`Approx` of asinh.  Complex operands: legalized.
"""
import math

import mpmath

from ..dsl import FLOAT, Approx, Generic, finite_nonzero
from .common import unary


def element(op, x):
    if math.isnan(x) or math.isinf(x) or x == 0:
        return x
    return Approx(mpmath.asinh, x)


SPEC = unary("asinh", element, FLOAT, generic=Generic(mpmath.asinh, finite_nonzero))
