"""minimum — element-wise min (spec section "minimum").

Floats: `minimum` from IEEE 754-2019 (§9.6): NaN if either operand is NaN,
and -0 < +0.  Complex: lexicographic minimum, with the same open cases as
`maximum` (see its module docstring).
"""
import numpy as np

from ..dsl import ANY, Elementwise, OpSpec, Operand, Result, Generic
from ..dsl.quantization import PER_TENSOR
from ..quantized import same_baseline_type
from .. import ieee
from .maximum import finite_no_opposite_zeros, lexicographic


def minimum_c1(op):
    """(C1) `lhs`, `rhs` and `result` have the same type.
    v1.20 reads `baseline_type(lhs) = baseline_type(rhs) = baseline_type(result)`: the same for every
    non-quantized type; per-tensor quantized tensors may differ in scales
    and zero points."""
    return same_baseline_type(op.lhs, op.rhs, op.result)


def infer(op):
    return {"result": op.lhs}


def min_element(et, lhs, rhs):
    """Booleans: logical AND; integers: integer minimum; floats: IEEE
    `minimum`; complex: lexicographic minimum of the (real, imaginary) pair."""
    if et.is_bool:
        return lhs and rhs
    if et.is_integer:
        return min(lhs, rhs)
    if et.is_complex:
        return lexicographic(lhs, rhs, pick_greater=False)
    return ieee.minimum(lhs, rhs)


def element(op, lhs, rhs):
    return min_element(op.lhs.element_type, lhs, rhs)


SPEC = OpSpec(
    mnemonic="minimum",
    operands=(Operand("lhs", ANY), Operand("rhs", ANY)),
    results=(Result("result", ANY),),
    constraints=(minimum_c1,),
    infer=infer,
    semantics=Elementwise(element, generic=Generic(None, finite_no_opposite_zeros, ieee=np.minimum, exact=True,
                                                   integer=np.minimum), same_operand=True),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize
)
