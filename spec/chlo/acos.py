"""chlo.acos — arccosine, element-wise, real operands (chlo.md "chlo.acos").

acos(1) = +0 exactly; |x| > 1 and NaN → NaN; every other float (acos(±0) =
π/2, acos(-1) = π) is an `Approx` of acos.  Complex operands: legalized.
"""
import math

import mpmath
import numpy as np

from ..dsl import FLOAT, Approx, Generic
from .common import unary


def element(op, x):
    if math.isnan(x) or abs(x) > 1:
        return math.nan
    if x == 1:
        return 0.0
    return Approx(mpmath.acos, x)


def _generic(x):
    return (np.abs(x) <= 1) & (x != 1)


def _outside(x):
    return np.abs(x) > 1


SPEC = unary("acos", element, FLOAT, generic=Generic(mpmath.acos, _generic, nan=_outside))
