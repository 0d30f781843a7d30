"""chlo.digamma — ψ(x) = Γ'(x)/Γ(x), element-wise (chlo.md "chlo.digamma").

Exact values: ψ(+inf) = +inf; ψ(-inf) and NaN → NaN; a negative integer is
a pole whose one-sided limits differ (-inf from the right, +inf from the
left): NaN.  At ±0 the zero's sign names a side, as C's tgamma(±0) = ±inf
reads it: the one-sided limit ψ(±0) = ∓inf is the primary value, and NaN —
the pole, which jaxlib's chlo-legalize-to-stablehlo and XLA answer — is
declared as the alternative (CHLO's reference says nothing).  Every other
float is an `Approx` of ψ.
"""
import math

import mpmath
import numpy as np

from ..dsl import FLOAT, Approx, Generic, ImplDefined
from .common import is_nonpositive_integer, unary

POLE_AT_ZERO = "digamma(±0): the one-sided limit ∓inf, or NaN for the pole (chlo-legalize-to-stablehlo, XLA)"


def pole_at_zero(limit: float) -> ImplDefined:
    return ImplDefined({"one-sided limit": limit, "NaN at the pole": math.nan}, POLE_AT_ZERO)


def element(op, x):
    if math.isnan(x) or x == -math.inf:
        return math.nan
    if x == math.inf:
        return x
    if x == 0:
        return pole_at_zero(-math.copysign(math.inf, x))
    if is_nonpositive_integer(x):
        return math.nan
    return Approx(mpmath.digamma, x)


def _generic(x):
    with np.errstate(invalid="ignore"):
        return np.isfinite(x) & ~((x <= 0) & (x == np.floor(x)))


SPEC = unary("digamma", element, FLOAT, generic=Generic(mpmath.digamma, _generic))
