"""chlo.acos — arccosine, element-wise (chlo.md "chlo.acos").

acos(1) = +0 exactly; |x| > 1 and NaN → NaN; every other float (acos(±0) =
π/2, acos(-1) = π) is an `Approx` of acos.  Complex operands: C99's
principal cacos, Annex G.6.1.1 (spec/chlo/complex_inverse.py).
"""
import math

import mpmath
import numpy as np

from ..dsl import COMPLEX, FLOAT, Approx, Generic
from .common import unary
from .complex_inverse import cacos


def element(op, x):
    if isinstance(x, complex):
        return cacos(x)
    if math.isnan(x) or abs(x) > 1:
        return math.nan
    if x == 1:
        return 0.0
    return Approx(mpmath.acos, x)


def _generic(x):
    return (np.abs(x) <= 1) & (x != 1)


def _outside(x):
    return np.abs(x) > 1


SPEC = unary("acos", element, FLOAT + COMPLEX, generic=Generic(mpmath.acos, _generic, nan=_outside))
