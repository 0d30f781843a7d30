"""chlo.polygamma — ψ⁽ⁿ⁾(x), the n-th derivative of digamma, element-wise
(chlo.md "chlo.polygamma"; jax's `polygamma`, lax.polygamma).

`n` is a float operand; only a nonnegative integer n has a meaning: any
other n (and NaN in either operand) → NaN.  n = 0 is chlo.digamma's
element.  For n >= 1: ψ⁽ⁿ⁾(+inf) = 0 with the sign of (-1)^(n+1);
ψ⁽ⁿ⁾(-inf) → NaN; at a pole x = 0, -1, -2 … (±0 included) ψ⁽ⁿ⁾ ~
(-1)^(n+1)·n!/(x-p)^(n+1): for odd n both sides tend to +inf, so +inf;
for even n the sides differ, so NaN — at ±0 the zero's sign names a side,
and the one-sided limit ∓inf is primary, NaN the declared alternative (as
digamma's).  Every other element is an `Approx` of ψ⁽ⁿ⁾(x).
"""
import math

import mpmath
import numpy as np

from ..dsl import FLOAT, Approx, Elementwise, Generic, ImplDefined, OpSpec, Operand, Result
from .common import infer_same, is_nonpositive_integer, same_operand_and_result_type
from .digamma import element as digamma_element

POLE_AT_ZERO = "polygamma(even n, ±0): the one-sided limit ∓inf, or NaN for the pole (as XLA answers)"


def polygamma(n, x):
    """ψ⁽ⁿ⁾(x) for an integer n >= 1 and x > 0 (the arb route: (-1)^(n+1)·n!·ζ(n+1, x))."""
    return mpmath.polygamma(int(n), x)


def polygamma_negative(n, x):
    """ψ⁽ⁿ⁾(x) for an integer n >= 1 and x < 0, not a pole (mpmath's loop only)."""
    return mpmath.polygamma(int(n), x)


def polygamma_c1(op):
    """(C1) CHLO's `CompatibleOperandsAndResultType`: `n`, `x` and `result` have the same type."""
    return same_operand_and_result_type(op)


def element(op, n, x):
    if math.isnan(n) or math.isnan(x) or math.isinf(n) or n < 0 or n != math.floor(n):
        return math.nan
    if n == 0:
        return digamma_element(op, x)
    odd = int(n) % 2 == 1
    if x == math.inf:
        return 0.0 if odd else -0.0
    if x == -math.inf:
        return math.nan
    if is_nonpositive_integer(x):
        if odd:
            return math.inf
        if x == 0:
            return ImplDefined({"one-sided limit": -math.copysign(math.inf, x), "NaN at the pole": math.nan},
                               POLE_AT_ZERO)
        return math.nan
    return Approx(polygamma if x > 0 else polygamma_negative, n, x)


def _generic(n, x):
    """Where `element` answers Approx(polygamma, n, x): an integer n >= 1 and a finite x > 0."""
    with np.errstate(invalid="ignore"):
        return np.isfinite(n) & (n >= 1) & (n == np.floor(n)) & np.isfinite(x) & (x > 0)


SPEC = OpSpec(mnemonic="chlo.polygamma", operands=(Operand("n", FLOAT), Operand("x", FLOAT)),
              results=(Result("result", FLOAT),), constraints=(polygamma_c1,), infer=infer_same,
              semantics=Elementwise(element, accuracy="approx", generic=Generic(polygamma, _generic)))
