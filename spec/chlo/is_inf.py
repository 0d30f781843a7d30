"""chlo.is_inf — whether an element is +inf or -inf (chlo.md "chlo.is_inf"); i1 result."""
import math

from ..dsl import BOOLEAN, FLOAT, Elementwise, OpSpec, Operand, Result
from .common import infer_i1, predicate_shape


def is_inf_c1(op):
    """(C1) `operand` and `result` have the same shape (the result is i1)."""
    return predicate_shape(op)


def element(op, x):
    return math.isinf(x)


SPEC = OpSpec(mnemonic="chlo.is_inf", operands=(Operand("operand", FLOAT),), results=(Result("result", BOOLEAN),),
              constraints=(is_inf_c1,), infer=infer_i1, semantics=Elementwise(element))
