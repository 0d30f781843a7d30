"""popcnt — element-wise population count (spec section "popcnt").

Counts the set bits of the two's-complement pattern of the type's width, so
-1 in i8 has 8.
"""
import numpy as np

from ..dsl import INTEGER, Elementwise, OpSpec, Operand, Result, same_type, Generic

TYPES = INTEGER  # "tensor of integer type"


def popcnt_c1(op):
    """(C1) `operand` and `result` have the same type."""
    return same_type(op.operand, op.result)


def infer(op):
    return {"result": op.operand}


def element(op, operand):
    """Number of bits set in `operand`'s bit pattern."""
    return bin(op.operand.element_type.int_to_bits(operand)).count("1")



def _popcnt(x):
    """Bits set per element of an integer array, counted on the bit pattern
    (numpy's bitwise_count counts a signed value's magnitude)."""
    return np.bitwise_count(x.view(np.dtype(f"u{x.dtype.itemsize}"))).astype(x.dtype)


SPEC = OpSpec(
    mnemonic="popcnt",
    operands=(Operand("operand", TYPES),),
    results=(Result("result", TYPES),),
    constraints=(popcnt_c1,),
    infer=infer,
    semantics=Elementwise(element, generic=Generic(None, integer=_popcnt)),
)
