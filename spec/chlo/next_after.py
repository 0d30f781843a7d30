"""chlo.next_after — the next value of x's format in the direction of y
(chlo.md "chlo.next_after": "Equivalent to the C++ std::nextafter", which
may return a subnormal).

Exact, as C's nextafter: NaN if x or y is NaN; y if x == y (so
next_after(-0, +0) = +0); from ±0 the smallest subnormal of y's sign;
from the largest finite value towards +inf, +inf.  The step is in the
result's format (`op.result`), by its bit patterns: one more or one less
in the magnitude's encoding.
"""
import math
from fractions import Fraction

from ..dsl import FLOAT, Elementwise, OpSpec, Operand, Result
from .common import infer_same, same_operand_and_result_type


def next_after_c1(op):
    """(C1) CHLO's `CompatibleOperandsAndResultType`: `x`, `y` and `result` have the same type."""
    return same_operand_and_result_type(op)


def element(op, x, y):
    if math.isnan(x) or math.isnan(y):
        return math.nan
    if x == y:
        return y
    fmt = op.result.element_type.format
    if x == 0:
        return math.copysign(float(fmt.min_subnormal), y)
    if math.isinf(x):   # towards y, finite: the largest finite value of x's sign
        return fmt.max_finite if x > 0 else -fmt.max_finite
    return _step(fmt, x, up=(y > x))


def _step(fmt, x: float, up: bool):
    """The neighbour of a nonzero x of `fmt`, exactly: away from zero when
    the step goes the way of x's sign (the gap above |x|: its ulp; past the
    largest finite, infinity), towards zero otherwise (the gap below |x|:
    half its ulp at a power of two above the subnormals, its ulp elsewhere)."""
    a = abs(Fraction(x))
    if (x > 0) == up:
        n = math.inf if a == fmt.max_finite else a + fmt.ulp(a)
    else:
        gap = fmt.ulp(a)
        if a > fmt.min_normal and _power_of_two(a):
            gap /= 2
        n = a - gap
    if n == 0:
        return math.copysign(0.0, x)
    return n if x > 0 else -n


def _power_of_two(a: Fraction) -> bool:
    return a.numerator & (a.numerator - 1) == 0 and a.denominator & (a.denominator - 1) == 0


SPEC = OpSpec(mnemonic="chlo.next_after", operands=(Operand("x", FLOAT), Operand("y", FLOAT)),
              results=(Result("result", FLOAT),), constraints=(next_after_c1,), infer=infer_same,
              semantics=Elementwise(element))
