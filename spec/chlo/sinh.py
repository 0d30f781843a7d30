"""chlo.sinh — hyperbolic sine, element-wise (chlo.md "chlo.sinh").

Floats: sinh(±0) = ±0, sinh(±inf) = ±inf, NaN → NaN; every other float is
an `Approx` of sinh (overflow to ±inf is the rounding of its value).
Complex: the complex hyperbolic sine of C99 Annex G (spec/annex_g.py, as
the spec's own ops state complex functions).
"""
import math

import mpmath

from ..dsl import COMPLEX, FLOAT, Approx, Generic, finite_nonzero
from .. import annex_g
from .common import unary


def element(op, x):
    if isinstance(x, complex):
        return annex_g.csinh(x)
    if math.isnan(x) or math.isinf(x) or x == 0:
        return x
    return Approx(mpmath.sinh, x)


SPEC = unary("sinh", element, FLOAT + COMPLEX, generic=Generic(mpmath.sinh, finite_nonzero))
