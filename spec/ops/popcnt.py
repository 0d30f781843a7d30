"""popcnt — element-wise population count (spec section "popcnt").

Counts the set bits of the two's-complement pattern of the type's width, so
-1 in i8 has 8.
"""
from ..dsl import INTEGER, Elementwise, OpSpec, Operand, Result, same_type

TYPES = INTEGER  # "tensor of integer type"


def popcnt_c1(op):
    """(C1) `operand` and `result` have the same type."""
    return same_type(op.operand, op.result)


def infer(op):
    return {"result": op.operand}


def element(op, operand):
    """Number of bits set in `operand`'s bit pattern."""
    return bin(op.operand.element_type.int_to_bits(operand)).count("1")


SPEC = OpSpec(
    mnemonic="popcnt",
    operands=(Operand("operand", TYPES),),
    results=(Result("result", TYPES),),
    constraints=(popcnt_c1,),
    infer=infer,
    semantics=Elementwise(element),
)
