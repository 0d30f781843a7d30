"""remainder — element-wise remainder (spec section "remainder").

Findings:
* For floats the seed says `d` is "`division(lhs, rhs)` from IEEE-754 with
  rounding attribute `roundTowardZero`" — read literally that is the quotient
  rounded to a *float*, which makes `lhs - d * rhs` a rounding residue, not a
  remainder, and contradicts "the absolute value of the result is always less
  than the divisor's absolute value".  The next paragraph (contrast with IEEE
  `remainder`, whose `d` is "an integral value nearest to the exact value")
  shows the intent: `d` is the exact quotient rounded toward zero to an
  integral value, i.e. C's `fmod`.  We encode that; it is always exact.
* For complex numbers the seed says "TBD (#997)" while the Inputs table
  admits complex types: the element semantics is an `ImplDefined` with no
  known alternative, so no complex value can be judged correct.
* Integer remainder by zero and `INT_MIN % -1` inherit the division's
  integer-overflow errors (implementation-defined); XLA (seed 002) documents
  them as implementation-defined and yields the dividend and 0.
"""
import numpy as np

from ..dsl import COMPLEX, FLOAT, INTEGER, Elementwise, ImplDefined, OpSpec, Operand, Result, Generic, finite
from ..dsl.quantization import PER_TENSOR
from ..quantized import same_baseline_type
from .. import ieee, samples
from .divide import truncated_quotient
from ..exercise import Exercise

TYPES = INTEGER + FLOAT + COMPLEX


def remainder_c1(op):
    """(C1) `lhs`, `rhs` and `result` have the same type.
    v1.20 reads `baseline_type(lhs) = baseline_type(rhs) = baseline_type(result)`: the same for every
    non-quantized type; per-tensor quantized tensors may differ in scales
    and zero points."""
    return same_baseline_type(op.lhs, op.rhs, op.result)


def infer(op):
    return {"result": op.lhs}


def element(op, lhs, rhs):
    """`lhs - d * rhs`: integers with `d = stablehlo.divide(lhs, rhs)`
    (truncating), floats with `d` the quotient rounded toward zero to an
    integral value (`fmod`); complex: TBD in the seed."""
    et = op.lhs.element_type
    if et.is_integer:
        if rhs == 0:
            return ImplDefined({"dividend (XLA)": lhs},
                               why="integer remainder by zero (seed: Errors; seed 002)")
        if et.is_signed and lhs == et.min_value and rhs == -1:
            return ImplDefined({"zero (XLA)": 0}, why="INT_MIN % -1: its quotient overflows (seed 002)")
        return lhs - truncated_quotient(lhs, rhs) * rhs
    if et.is_complex:
        return ImplDefined({}, why="complex remainder is TBD in the seed (#997)")
    return ieee.remainder_toward_zero(lhs, rhs)


SPEC = OpSpec(
    mnemonic="remainder",
    operands=(Operand("lhs", TYPES), Operand("rhs", TYPES)),
    results=(Result("result", TYPES),),
    constraints=(remainder_c1,),
    infer=infer,
    semantics=Elementwise(element, generic=Generic(None, finite, ieee=np.fmod, exact=True)),
    exercise=Exercise(hard_floats=samples.quotient_arguments),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize
)
