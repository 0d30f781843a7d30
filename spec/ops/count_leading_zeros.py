"""count_leading_zeros — element-wise count of leading zero bits (spec section
"count_leading_zeros").

Counts in the type's width: 0 has `bits` leading zeros, a negative value none.
"""
from ..dsl import INTEGER, Elementwise, OpSpec, Operand, Result, same_type

TYPES = INTEGER  # "tensor of integer type"


def count_leading_zeros_c1(op):
    """(C1) `operand` and `result` have the same type."""
    return same_type(op.operand, op.result)


def infer(op):
    return {"result": op.operand}


def element(op, operand):
    """Leading zero bits of `operand`'s bit pattern."""
    et = op.operand.element_type
    return et.bits - et.int_to_bits(operand).bit_length()


SPEC = OpSpec(
    mnemonic="count_leading_zeros",
    operands=(Operand("operand", TYPES),),
    results=(Result("result", TYPES),),
    constraints=(count_leading_zeros_c1,),
    infer=infer,
    semantics=Elementwise(element),
)
