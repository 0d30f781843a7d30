"""real — element-wise real part (spec section "real")."""
import numpy as np

from ..dsl import COMPLEX, FLOAT, Elementwise, OpSpec, Operand, Result, same_shape, Generic, finite
from ..types import TensorType


def _real_type(et):
    """element_type(operand) if it's a floating-point type, real_type(…) otherwise."""
    return et if et.is_float else et.component


def real_c1(op):
    """(C1) shape(`result`) = shape(`operand`)."""
    return same_shape(op.operand, op.result)


def real_c2(op):
    """(C2) element_type(`result`) $=$
      * element_type(`operand`) if it's a floating-point type.
      * real_type(element_type(`operand`)) otherwise."""
    return op.result.element_type == _real_type(op.operand.element_type)


def infer(op):
    return {"result": TensorType(tuple(op.operand.shape), _real_type(op.operand.element_type))}


def element(op, x):
    """`real(x) = is_complex(x) ? x.real : x` — exact, NaN and -0.0 included."""
    return x.real if isinstance(x, complex) else x


SPEC = OpSpec(
    mnemonic="real",
    operands=(Operand("operand", FLOAT + COMPLEX),),
    results=(Result("result", FLOAT),),
    constraints=(real_c1, real_c2),
    infer=infer,
    semantics=Elementwise(element, generic=Generic(None, finite, ieee=np.real, exact=True)),
)
