"""round_nearest_afz — round to nearest integer, ties away from zero (spec section "round_nearest_afz")."""
from ..dsl import FLOAT, Elementwise, OpSpec, Operand, Result, same_type
from .. import ieee, samples
from ..exercise import Exercise


def round_nearest_afz_c1(op):
    """(C1) `operand` and `result` have the same type."""
    return same_type(op.operand, op.result)


def infer(op):
    return {"result": op.operand}


def element(op, x):
    """"Implements the `roundToIntegralTiesToAway` operation from the IEEE-754
    specification": exact; -2.5 → -3, 0.5 → 1, -0.4 → -0.0."""
    return ieee.roundToIntegralTiesToAway(x)


SPEC = OpSpec(
    mnemonic="round_nearest_afz",
    operands=(Operand("operand", FLOAT),),
    results=(Result("result", FLOAT),),
    constraints=(round_nearest_afz_c1,),
    infer=infer,
    semantics=Elementwise(element),
    exercise=Exercise(hard_floats=samples.halfway_points),
)
