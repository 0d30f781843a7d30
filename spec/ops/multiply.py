"""multiply — element-wise product (spec section "multiply")."""
import numpy as np

from ..dsl import ANY, Elementwise, OpSpec, Operand, Result, approx_if_complex, Generic, finite, checked
from ..dsl.quantization import PER_TENSOR
from ..quantized import same_baseline_type
from .. import annex_g, ieee


def multiply_c1(op):
    """(C1) `lhs`, `rhs` and `result` have the same type.
    v1.20 reads `baseline_type(lhs) = baseline_type(rhs) = baseline_type(result)`: the same for every
    non-quantized type; per-tensor quantized tensors may differ in scales
    and zero points."""
    return same_baseline_type(op.lhs, op.rhs, op.result)


def infer(op):
    return {"result": op.lhs}


def element(op, lhs, rhs):
    """Booleans: logical AND; integers: integer multiplication (exact; the
    oracle wraps overflow); floats: IEEE `multiplication`; complex: complex
    multiplication (not a basic operation: C99 Annex G, judged approximately)."""
    et = op.lhs.element_type
    if et.is_bool:
        return lhs and rhs
    if et.is_integer:
        return lhs * rhs
    if et.is_complex:
        return annex_g.cmul(lhs, rhs)
    return ieee.multiplication(lhs, rhs)


SPEC = OpSpec(
    mnemonic="multiply",
    operands=(Operand("lhs", ANY), Operand("rhs", ANY)),
    results=(Result("result", ANY),),
    constraints=(multiply_c1,),
    infer=infer,
    semantics=Elementwise(element, accuracy=approx_if_complex, generic=Generic(None, finite, ieee=np.multiply, integer=checked(np.multiply))),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize
)
