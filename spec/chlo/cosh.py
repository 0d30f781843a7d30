"""chlo.cosh — hyperbolic cosine, element-wise (chlo.md "chlo.cosh").

Floats: cosh(±0) = 1, cosh(±inf) = +inf, NaN → NaN; every other float is
an `Approx` of cosh.  Complex: C99 Annex G's ccosh (spec/annex_g.py).
"""
import math

import mpmath

from ..dsl import COMPLEX, FLOAT, Approx, Generic, finite_nonzero
from .. import annex_g
from .common import unary


def element(op, x):
    if isinstance(x, complex):
        return annex_g.ccosh(x)
    if math.isnan(x):
        return x
    if math.isinf(x):
        return math.inf
    if x == 0:
        return 1.0
    return Approx(mpmath.cosh, x)


SPEC = unary("cosh", element, FLOAT + COMPLEX, generic=Generic(mpmath.cosh, finite_nonzero))
