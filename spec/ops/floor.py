"""floor — element-wise floor (spec section "floor")."""
import numpy as np

from ..dsl import FLOAT, Elementwise, OpSpec, Operand, Result, same_type, Generic, finite
from .. import ieee, samples
from ..exercise import Exercise


def floor_c1(op):
    """(C1) `operand` and `result` have the same type."""
    return same_type(op.operand, op.result)


def infer(op):
    return {"result": op.operand}


def element(op, x):
    """"Implements the `roundToIntegralTowardNegative` operation from the
    IEEE-754 specification": exact; floor(-0.5) = -1, floor(0.5) = +0,
    floor(-0.0) = -0.0."""
    return ieee.roundToIntegralTowardNegative(x)


SPEC = OpSpec(
    mnemonic="floor",
    operands=(Operand("operand", FLOAT),),
    results=(Result("result", FLOAT),),
    constraints=(floor_c1,),
    infer=infer,
    semantics=Elementwise(element, generic=Generic(None, finite, ieee=np.floor, exact=True)),
    exercise=Exercise(hard_floats=samples.halfway_points),
)
