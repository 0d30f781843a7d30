"""and — element-wise AND (spec section "and").

On integers the operation acts on the two's-complement bit patterns; Python's
`&` on ints does exactly that (negative ints behave as infinitely
sign-extended), so the result of in-range operands is in range.
"""
import numpy as np

from ..dsl import BOOLEAN, INTEGER, Elementwise, OpSpec, Operand, Result, same_type, Generic

TYPES = BOOLEAN + INTEGER  # "tensor of boolean or integer type"


def and_c1(op):
    """(C1) `lhs`, `rhs` and `result` have the same type."""
    return same_type(op.lhs, op.rhs, op.result)


def infer(op):
    return {"result": op.lhs}


def element(op, lhs, rhs):
    """Booleans: logical AND; integers: bitwise AND."""
    if op.lhs.element_type.is_bool:
        return bool(lhs) & bool(rhs)
    return lhs & rhs


SPEC = OpSpec(
    mnemonic="and",
    operands=(Operand("lhs", TYPES), Operand("rhs", TYPES)),
    results=(Result("result", TYPES),),
    constraints=(and_c1,),
    infer=infer,
    semantics=Elementwise(element, generic=Generic(None, integer=np.bitwise_and)),
)
