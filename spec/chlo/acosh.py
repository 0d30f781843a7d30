"""chlo.acosh — inverse hyperbolic cosine, element-wise
(chlo.md "chlo.acosh": NaN below -1 — and below 1, where no real value
exists).

acosh(1) = +0, acosh(+inf) = +inf; x < 1 and NaN → NaN; every other float
is an `Approx` of acosh.  Complex operands: C99's principal cacosh,
Annex G.6.2.1 (spec/chlo/complex_inverse.py).
"""
import math

import mpmath
import numpy as np

from ..dsl import COMPLEX, FLOAT, Approx, Generic
from .common import unary
from .complex_inverse import cacosh


def element(op, x):
    if isinstance(x, complex):
        return cacosh(x)
    if math.isnan(x) or x < 1:
        return math.nan
    if x == 1:
        return 0.0
    if math.isinf(x):
        return x
    return Approx(mpmath.acosh, x)


def _generic(x):
    return (x > 1) & np.isfinite(x)


def _outside(x):
    return x < 1


SPEC = unary("acosh", element, FLOAT + COMPLEX, generic=Generic(mpmath.acosh, _generic, nan=_outside))
