"""chlo.zeta — the Hurwitz zeta function ζ(x, q) = Σ_{n>=0} (q+n)^-x,
element-wise (chlo.md "chlo.zeta", which defines it by that series).

The series converges for x > 1 (q not a nonpositive integer): there every
element is an `Approx` of ζ(x, q) — for q < 0 only at integer x, where
every term is real (a negative base to a non-integer power is not: NaN).
Exact values: ζ(x, +inf) = +0 for x > 1 (every term vanishes); at x = +inf
the first term decides (q > 1: +0, q = 1: 1, 0 < q < 1: +inf); a term
0^-x — q a nonpositive integer, x > 1 — is +inf (IEEE pow(0, -x)), so +inf;
x = 1 is the series' divergence (the pole at s = 1): +inf.  For x < 1 and
q > 0 the series diverges to +inf; scipy and XLA answer NaN there ("outside
the domain"): NaN is primary and +inf the declared alternative.  NaN in,
q = -inf, and everything else: NaN.
"""
import math

import mpmath
import numpy as np

from ..dsl import FLOAT, Approx, Elementwise, Generic, ImplDefined, OpSpec, Operand, Result
from .common import infer_same, is_nonpositive_integer, same_operand_and_result_type

DIVERGES = "zeta(x < 1, q > 0): the series diverges to +inf; NaN (outside the series' domain: scipy, XLA) or +inf"


def hurwitz_zeta(x, q):
    """ζ(x, q) for x > 1, q > 0 (the arb route)."""
    return mpmath.zeta(x, q)


def hurwitz_zeta_negative_q(x, q):
    """ζ(x, q) for an integer x > 1 and q < 0 not an integer (mpmath's loop only)."""
    return mpmath.zeta(x, q)


def zeta_c1(op):
    """(C1) CHLO's `CompatibleOperandsAndResultType`: `x`, `q` and `result` have the same type."""
    return same_operand_and_result_type(op)


def element(op, x, q):
    if math.isnan(x) or math.isnan(q) or q == -math.inf:
        return math.nan
    if x == 1:
        return math.inf
    if x < 1:
        return ImplDefined({"NaN": math.nan, "+inf (the series diverges)": math.inf}, DIVERGES) if q > 0 \
            else math.nan
    if q == math.inf:
        return 0.0
    if is_nonpositive_integer(q):
        return math.inf
    if x == math.inf:
        return math.nan if q < 0 else (0.0 if q > 1 else 1.0 if q == 1 else math.inf)
    if q > 0:
        return Approx(hurwitz_zeta, x, q)
    return Approx(hurwitz_zeta_negative_q, x, q) if x == math.floor(x) else math.nan


def _generic(x, q):
    """Where `element` answers Approx(hurwitz_zeta, x, q): finite x > 1 and q > 0 (the series' domain)."""
    with np.errstate(invalid="ignore"):
        return np.isfinite(x) & (x > 1) & np.isfinite(q) & (q > 0)


SPEC = OpSpec(mnemonic="chlo.zeta", operands=(Operand("x", FLOAT), Operand("q", FLOAT)),
              results=(Result("result", FLOAT),), constraints=(zeta_c1,), infer=infer_same,
              semantics=Elementwise(element, accuracy="approx", generic=Generic(hurwitz_zeta, _generic)))
