"""add — element-wise addition (spec section "add")."""
import numpy as np

from ..dsl import ANY, Elementwise, OpSpec, Operand, Result, same_type, Generic, finite, checked
from .. import ieee


def add_c1(op):
    """(C1) `lhs`, `rhs` and `result` have the same type."""
    return same_type(op.lhs, op.rhs, op.result)


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
    semantics=Elementwise(element, generic=Generic(None, finite, ieee=np.add, integer=checked(np.add))),
)
