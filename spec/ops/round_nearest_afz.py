"""round_nearest_afz — round to nearest integer, ties away from zero (spec section "round_nearest_afz")."""
import numpy as np

from ..dsl import FLOAT, Elementwise, Generic, OpSpec, Operand, Result, finite
from ..dsl.quantization import PER_TENSOR
from ..quantized import same_baseline_type
from .. import ieee, samples
from ..exercise import Exercise


def round_nearest_afz_c1(op):
    """(C1) `operand` and `result` have the same type.
    v1.20 reads `baseline_type(operand) = baseline_type(result)`: the same for every
    non-quantized type; per-tensor quantized tensors may differ in scales
    and zero points."""
    return same_baseline_type(op.operand, op.result)


def infer(op):
    return {"result": op.operand}


def element(op, x):
    """"Implements the `roundToIntegralTiesToAway` operation from the IEEE-754
    specification": exact; -2.5 → -3, 0.5 → 1, -0.4 → -0.0."""
    return ieee.roundToIntegralTiesToAway(x)


def _ties_away(x):
    """roundToIntegralTiesToAway on a numpy array, without rounding: trunc(x)
    (which keeps x's sign, so -0.4 gives -0.0), moved one away from zero
    where the dropped fraction x - trunc(x) — exact, it is x's own low
    bits — is at least 1/2 (the result is then at least 1 in magnitude, so
    trunc(x) ± 1 is exact).  floor(x + 0.5) would round x + 0.5 first."""
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.copysign(np.ones_like(x), x), t)


SPEC = OpSpec(
    mnemonic="round_nearest_afz",
    operands=(Operand("operand", FLOAT),),
    results=(Result("result", FLOAT),),
    constraints=(round_nearest_afz_c1,),
    infer=infer,
    semantics=Elementwise(element, generic=Generic(None, finite, ieee=_ties_away, exact=True)),
    exercise=Exercise(hard_floats=samples.halfway_points),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize
)
