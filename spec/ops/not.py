"""not — element-wise NOT (spec section "not").

Finding: this section names its inputs table "Arguments" (no labels) where
every other section has "Inputs" with (I<n>) labels.
"""
import numpy as np

from ..dsl import BOOLEAN, INTEGER, Elementwise, OpSpec, Operand, Result, same_type, Generic

TYPES = BOOLEAN + INTEGER  # "tensor of boolean or integer type"


def not_c1(op):
    """(C1) `operand` and `result` have the same type."""
    return same_type(op.operand, op.result)


def infer(op):
    return {"result": op.operand}


def element(op, operand):
    """Booleans: logical NOT; integers: bitwise NOT of the bit pattern."""
    et = op.operand.element_type
    if et.is_bool:
        return not operand
    return et.wrap(~operand)


SPEC = OpSpec(
    mnemonic="not",
    operands=(Operand("operand", TYPES),),
    results=(Result("result", TYPES),),
    constraints=(not_c1,),
    infer=infer,
    semantics=Elementwise(element, generic=Generic(None, integer=np.invert)),
)
