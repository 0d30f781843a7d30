"""chlo.erf_inv — the inverse of erf on (-1, 1), element-wise (chlo.md
"chlo.erf_inv").

erf_inv(±0) = ±0, erf_inv(±1) = ±inf (erf's limits), |x| > 1 and NaN →
NaN (outside erf's range: no real value); every other float is an
`Approx` of erfinv.
"""
import mpmath

from ..dsl import FLOAT
from .common import odd_on_the_unit_interval, unary

element, _generic = odd_on_the_unit_interval(mpmath.erfinv)
SPEC = unary("erf_inv", element, FLOAT, generic=_generic)
