"""subtract — element-wise subtraction (spec section "subtract")."""
import numpy as np

from ..dsl import COMPLEX, FLOAT, INTEGER, Elementwise, OpSpec, Operand, Result, Generic, finite, checked
from ..dsl.quantization import PER_TENSOR
from ..quantized import same_baseline_type
from .. import ieee

TYPES = INTEGER + FLOAT + COMPLEX


def subtract_c1(op):
    """(C1) `lhs`, `rhs` and `result` have the same type.
    v1.20 reads `baseline_type(lhs) = baseline_type(rhs) = baseline_type(result)`: the same for every
    non-quantized type; per-tensor quantized tensors may differ in scales
    and zero points."""
    return same_baseline_type(op.lhs, op.rhs, op.result)


def infer(op):
    return {"result": op.lhs}


def element(op, lhs, rhs):
    """Integers: integer subtraction (exact; the oracle wraps overflow);
    floats: IEEE `subtraction`; complex: complex subtraction, component-wise,
    each component an IEEE subtraction."""
    et = op.lhs.element_type
    if et.is_integer:
        return lhs - rhs
    if et.is_complex:
        return (ieee.subtraction(lhs.real, rhs.real), ieee.subtraction(lhs.imag, rhs.imag))
    return ieee.subtraction(lhs, rhs)


SPEC = OpSpec(
    mnemonic="subtract",
    operands=(Operand("lhs", TYPES), Operand("rhs", TYPES)),
    results=(Result("result", TYPES),),
    constraints=(subtract_c1,),
    infer=infer,
    semantics=Elementwise(element, generic=Generic(None, finite, ieee=np.subtract, integer=checked(np.subtract)),
                          same_operand=True),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize
)
