"""complex — build complex values from real and imaginary parts (spec section
"complex").  Exact: each part is copied, signed zeros, infinities and NaNs
included."""
from ..dsl import COMPLEX, Elementwise, OpSpec, Operand, Result, element_type, same_shape, same_type
from ..types import E_F32, E_F64, TensorType, complex_type

PARTS = (E_F32, E_F64)  # "tensor of type `f32` or `f64`"


def complex_c1(op):
    """(C1) `lhs` and `rhs` have the same type."""
    return same_type(op.lhs, op.rhs)


def complex_c2(op):
    """(C2) shape(`result`) $=$ shape(`lhs`)."""
    return same_shape(op.result, op.lhs)


def complex_c3(op):
    """(C3) element_type(`result`) = complex_type(element_type(`lhs`))."""
    return element_type(op.lhs) in PARTS and element_type(op.result) == complex_type(element_type(op.lhs))


def infer(op):
    return {"result": TensorType(op.lhs.shape, complex_type(op.lhs.element_type))}


def element(op, lhs, rhs):
    """(lhs, rhs) as the (real, imaginary) pair."""
    return (lhs, rhs)


SPEC = OpSpec(
    mnemonic="complex",
    operands=(Operand("lhs", PARTS), Operand("rhs", PARTS)),
    results=(Result("result", COMPLEX),),
    constraints=(complex_c1, complex_c2, complex_c3),
    infer=infer,
    semantics=Elementwise(element),
)
