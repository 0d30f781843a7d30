"""chlo.asin — arcsine, element-wise (chlo.md "chlo.asin").

asin(±0) = ±0; |x| > 1 and NaN → NaN (no real value); every other float,
±1 included (±π/2), is an `Approx` of asin.  Complex operands: the
principal casin of C99, with Annex G's special values and branch cuts
(spec/chlo/complex_inverse.py).
"""
import math

import mpmath
import numpy as np

from ..dsl import COMPLEX, FLOAT, Approx, Generic
from .common import unary
from .complex_inverse import casin


def element(op, x):
    if isinstance(x, complex):
        return casin(x)
    if math.isnan(x) or abs(x) > 1:
        return math.nan
    if x == 0:
        return x
    return Approx(mpmath.asin, x)


def _generic(x):
    return (np.abs(x) <= 1) & (x != 0)


def _outside(x):
    return np.abs(x) > 1


SPEC = unary("asin", element, FLOAT + COMPLEX, generic=Generic(mpmath.asin, _generic, nan=_outside))
