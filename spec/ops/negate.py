"""negate — element-wise negation (spec section "negate").

Unsigned integers go "bitcast to signed integer, integer negation, bitcast
back": negation modulo 2^bits, as the spec itself defines it.  Negating the
most negative signed value overflows (the seed's "Errors" section:
implementation-defined) — for signed operands and, through the bitcast, for
the unsigned value 2^(bits-1); the known outcomes are declared.
"""
import numpy as np

from ..dsl import COMPLEX, FLOAT, INTEGER, Elementwise, ImplDefined, OpSpec, Operand, Result, Generic, finite
from ..dsl.quantization import PER_TENSOR
from ..quantized import same_baseline_type

TYPES = INTEGER + FLOAT + COMPLEX


def negate_c1(op):
    """(C1) `operand` and `result` have the same type.
    v1.20 reads `baseline_type(operand) = baseline_type(result)`: the same for every
    non-quantized type; per-tensor quantized tensors may differ in scales
    and zero points."""
    return same_baseline_type(op.operand, op.result)


def infer(op):
    return {"result": op.operand}


def _overflow(wrapped: int, saturated: int) -> ImplDefined:
    return ImplDefined({"INT_MIN (wraps)": wrapped, "INT_MAX (saturates)": saturated},
                       why="negation of the most negative signed integer overflows (seed: Errors)")


def element(op, operand):
    """Signed: integer negation; unsigned: through the signed bitcast; floats:
    IEEE `negate` (flips the sign, ±0 and ±inf included); complex: both
    components negated."""
    et = op.operand.element_type
    if et.is_signed:
        return _overflow(et.min_value, et.max_value) if operand == et.min_value else -operand
    if et.is_unsigned:
        half = 1 << (et.bits - 1)
        return _overflow(half, half - 1) if operand == half else et.wrap(-operand)
    if et.is_complex:
        return (-operand.real, -operand.imag)
    return -operand


SPEC = OpSpec(
    mnemonic="negate",
    operands=(Operand("operand", TYPES),),
    results=(Result("result", TYPES),),
    constraints=(negate_c1,),
    infer=infer,
    semantics=Elementwise(element, generic=Generic(None, finite, ieee=np.negative, exact=True)),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize
)
