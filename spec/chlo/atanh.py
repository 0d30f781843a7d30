"""chlo.atanh — inverse hyperbolic tangent, element-wise, real operands
(chlo.md "chlo.atanh").

atanh(±0) = ±0, atanh(±1) = ±inf (the poles' one-sided limits), |x| > 1
and NaN → NaN; every other float is an `Approx` of atanh.  Complex
operands: legalized.
"""
import mpmath

from ..dsl import FLOAT
from .common import odd_on_the_unit_interval, unary

element, _generic = odd_on_the_unit_interval(mpmath.atanh)
SPEC = unary("atanh", element, FLOAT, generic=_generic)
