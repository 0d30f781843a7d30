"""add — element-wise addition (spec section "add")."""
import numpy as np

from ..dsl import ANY, Elementwise, Implies, OpSpec, Operand, Result, same_type, Generic, finite, checked
from ..dsl.quantization import Quantization
from ..quantized import (expressed_type, is_per_axis_quantized, is_quantized, quantization_dimension,
                         storage_type)
from .. import ieee


def _uses_quantized(op) -> bool:
    return any(is_quantized(t) for t in (op.lhs, op.rhs, op.result))


def add_c1(op):
    """(C1) `lhs`, `rhs` and `result` have the same type.  v1.20: "if the
    operation uses non-quantized tensors" — C2–C7 take the quantized ones."""
    return True if _uses_quantized(op) else same_type(op.lhs, op.rhs, op.result)


def add_c2(op):
    """(v1.20 C2) `is_quantized(lhs) and is_quantized(rhs) and is_quantized(result)`.  C3 and C4
    read storage and expressed types, which only quantized tensors have: where C2 fails they
    hold vacuously, so each constraint can be broken alone."""
    return all(is_quantized(t) for t in (op.lhs, op.rhs, op.result))


def add_c3(op):
    """(v1.20 C3) `storage_type(lhs) = storage_type(rhs) = storage_type(result)`."""
    return not add_c2(op) or storage_type(op.lhs) == storage_type(op.rhs) == storage_type(op.result)


def add_c4(op):
    """(v1.20 C4) `expressed_type(lhs) = expressed_type(rhs) = expressed_type(result)`."""
    return not add_c2(op) or expressed_type(op.lhs) == expressed_type(op.rhs) == expressed_type(op.result)


def add_c5(op):
    """(v1.20 C5) `(is_per_axis_quantized(lhs) or is_per_axis_quantized(rhs)) = is_per_axis_quantized(result)`."""
    return (is_per_axis_quantized(op.lhs) or is_per_axis_quantized(op.rhs)) == is_per_axis_quantized(op.result)


def add_c6(op):
    """(v1.20 C6) If `is_per_axis_quantized(lhs)`, then `quantization_dimension(lhs) = quantization_dimension(result)`."""
    return Implies(is_per_axis_quantized(op.lhs),
                   is_per_axis_quantized(op.result) and quantization_dimension(op.lhs) == quantization_dimension(op.result))


def add_c7(op):
    """(v1.20 C7) If `is_per_axis_quantized(rhs)`, then `quantization_dimension(rhs) = quantization_dimension(result)`."""
    return Implies(is_per_axis_quantized(op.rhs),
                   is_per_axis_quantized(op.result) and quantization_dimension(op.rhs) == quantization_dimension(op.result))


def infer(op):
    return {"result": op.lhs}


def element(op, lhs, rhs):
    """Booleans: logical OR; integers: integer addition; floats: IEEE
    `addition`; complex: complex addition (component-wise, each exact)."""
    et = op.lhs.element_type
    if et.is_bool:
        return lhs or rhs
    if et.is_integer:
        return lhs + rhs
    if et.is_complex:
        return (ieee.addition(lhs.real, rhs.real), ieee.addition(lhs.imag, rhs.imag))
    return ieee.addition(lhs, rhs)


SPEC = OpSpec(
    mnemonic="add",
    operands=(Operand("lhs", ANY), Operand("rhs", ANY)),
    results=(Result("result", ANY),),
    constraints=(add_c1,),
    infer=infer,
    semantics=Elementwise(element, generic=Generic(None, finite, ieee=np.add, integer=checked(np.add)),
                          same_operand=True),
    # v1.20: "tensor or quantized tensor" (per-axis too), dequantize_op_quantize; C2–C7 on quantized instances
    quantization=Quantization(per_axis=True, constraints=(add_c2, add_c3, add_c4, add_c5, add_c6, add_c7)),
)
