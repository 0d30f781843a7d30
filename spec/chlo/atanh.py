"""chlo.atanh — inverse hyperbolic tangent, element-wise (chlo.md
"chlo.atanh").

Floats: atanh(±0) = ±0, atanh(±1) = ±inf (the poles' one-sided limits),
|x| > 1 and NaN → NaN; every other float is an `Approx` of atanh.  Complex
operands: C99's principal catanh, Annex G.6.2.3 (spec/chlo/complex_inverse.py).
"""
import mpmath

from ..dsl import COMPLEX, FLOAT
from .common import odd_on_the_unit_interval, unary
from .complex_inverse import catanh

_real, _generic = odd_on_the_unit_interval(mpmath.atanh)


def element(op, x):
    if isinstance(x, complex):
        return catanh(x)
    return _real(op, x)


SPEC = unary("atanh", element, FLOAT + COMPLEX, generic=_generic)
