"""imag — element-wise imaginary part (spec section "imag")."""
import numpy as np

from ..dsl import COMPLEX, FLOAT, Elementwise, Generic, OpSpec, Operand, Result, finite, same_shape
from ..types import TensorType


def _real_type(et):
    """element_type(operand) if it's a floating-point type, real_type(…) otherwise."""
    return et if et.is_float else et.component


def imag_c1(op):
    """(C1) shape(`result`) = shape(`operand`)."""
    return same_shape(op.operand, op.result)


def imag_c2(op):
    """(C2) element_type(`result`) $=$
      * element_type(`operand`) if it's a floating-point type.
      * real_type(element_type(`operand`)) otherwise."""
    return op.result.element_type == _real_type(op.operand.element_type)


def infer(op):
    return {"result": TensorType(tuple(op.operand.shape), _real_type(op.operand.element_type))}


def element(op, x):
    """`imag(x) = is_complex(x) ? x.imag : 0.0` — exact; a float operand
    gives +0.0 whatever its value (NaN and inf included)."""
    return x.imag if isinstance(x, complex) else 0.0


SPEC = OpSpec(
    mnemonic="imag",
    operands=(Operand("operand", FLOAT + COMPLEX),),
    results=(Result("result", FLOAT),),
    constraints=(imag_c1, imag_c2),
    infer=infer,
    # Of a float array, numpy's imaginary part is +0.0 everywhere, as `element`
    # states (the whole-array route takes real operands only).
    semantics=Elementwise(element, generic=Generic(None, finite, ieee=np.imag, exact=True)),
)
