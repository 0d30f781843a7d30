"""chlo.lgamma — log|Γ(x)|, element-wise (chlo.md "chlo.lgamma"; jax's
`gammaln`, C's `lgamma`).

Exact values: lgamma(1) = lgamma(2) = +0 (Γ = 1); +inf at the poles
(x = 0, -1, -2 …: |Γ| → +inf from both sides, ±0 alike) and at ±inf
(C99 F.9.5.3); NaN → NaN.  Every other float is an `Approx` of log|Γ(x)|
(negative x included: Γ changes sign between its poles, its logarithm of
the absolute value is real everywhere).
"""
import math

import mpmath
import numpy as np

from ..dsl import FLOAT, Approx, Generic
from .common import is_nonpositive_integer, unary


def log_abs_gamma(x):
    """log|Γ(x)| (mpmath's loggamma is the complex branch for x < 0)."""
    return mpmath.log(abs(mpmath.gamma(x)))


def element(op, x):
    if math.isnan(x):
        return x
    if math.isinf(x) or is_nonpositive_integer(x):
        return math.inf
    if x in (1.0, 2.0):
        return 0.0
    return Approx(log_abs_gamma, x)


def _generic(x):
    with np.errstate(invalid="ignore"):
        return np.isfinite(x) & ~((x <= 0) & (x == np.floor(x))) & (x != 1) & (x != 2)


SPEC = unary("lgamma", element, FLOAT, generic=Generic(log_abs_gamma, _generic))
