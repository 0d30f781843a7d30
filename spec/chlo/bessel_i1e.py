"""chlo.bessel_i1e — the exponentially scaled modified Bessel function of
the first kind of order 1, e^(-|x|)·I₁(x), element-wise (chlo.md
"chlo.bessel_i1e"; jax's `i1e`), real operands.

Odd: i1e(±0) = ±0; i1e(±inf) = ±0 (it decays like 1/√(2π|x|)); NaN →
NaN; every other float is an `Approx` of e^(-|x|)·I₁(x).
"""
import math

import mpmath

from ..dsl import FLOAT, Approx, Generic, finite_nonzero
from .common import unary


def i1e(x):
    """e^(-|x|)·I₁(x)."""
    return mpmath.besseli(1, x) * mpmath.exp(-abs(x))


def element(op, x):
    if math.isnan(x):
        return x
    if math.isinf(x):
        return math.copysign(0.0, x)
    if x == 0:
        return x
    return Approx(i1e, x)


SPEC = unary("bessel_i1e", element, FLOAT, generic=Generic(i1e, finite_nonzero))
