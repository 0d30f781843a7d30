"""chlo.asinh — inverse hyperbolic sine, element-wise
(chlo.md "chlo.asinh").

asinh(±0) = ±0, asinh(±inf) = ±inf, NaN → NaN; every other float is an
`Approx` of asinh.  Complex operands: C99's principal casinh, Annex
G.6.2.2 (spec/chlo/complex_inverse.py).
"""
import math

import mpmath

from ..dsl import COMPLEX, FLOAT, Approx, Generic, finite_nonzero
from .common import unary
from .complex_inverse import casinh


def element(op, x):
    if isinstance(x, complex):
        return casinh(x)
    if math.isnan(x) or math.isinf(x) or x == 0:
        return x
    return Approx(mpmath.asinh, x)


SPEC = unary("asinh", element, FLOAT + COMPLEX, generic=Generic(mpmath.asinh, finite_nonzero))
