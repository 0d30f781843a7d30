"""sine — element-wise sine (spec section "sine")."""
import math

import mpmath

from ..dsl import COMPLEX, FLOAT, Approx, Elementwise, OpSpec, Operand, Result, same_type, Generic, finite_nonzero
from .. import annex_g, samples
from ..exercise import Exercise


def sine_c1(op):
    """(C1) `operand` and `result` have the same type."""
    return same_type(op.operand, op.result)


def infer(op):
    return {"result": op.operand}


def element(op, x):
    """Floats: `sin` from IEEE-754; complex: complex sine (C99 Annex G specials)."""
    if isinstance(x, complex):
        return annex_g.csin(x)
    if math.isnan(x) or math.isinf(x):
        return math.nan
    if x == 0:
        return x  # sin(±0) = ±0
    return Approx(mpmath.sin, x)


SPEC = OpSpec(
    mnemonic="sine",
    operands=(Operand("operand", FLOAT + COMPLEX),),
    results=(Result("result", FLOAT + COMPLEX),),
    constraints=(sine_c1,),
    infer=infer,
    semantics=Elementwise(element, accuracy="approx", generic=Generic(mpmath.sin, finite_nonzero)),
    exercise=Exercise(hard_floats=samples.near_multiples_of_half_pi),
)
