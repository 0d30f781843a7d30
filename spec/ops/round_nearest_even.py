"""round_nearest_even — round to nearest integer, ties to even (spec section "round_nearest_even")."""
import numpy as np

from ..dsl import FLOAT, Elementwise, OpSpec, Operand, Result, Generic, finite
from ..dsl.quantization import PER_TENSOR
from ..quantized import same_baseline_type
from .. import ieee, samples
from ..exercise import Exercise


def round_nearest_even_c1(op):
    """(C1) `operand` and `result` have the same type.
    v1.20 reads `baseline_type(operand) = baseline_type(result)`: the same for every
    non-quantized type; per-tensor quantized tensors may differ in scales
    and zero points."""
    return same_baseline_type(op.operand, op.result)


def infer(op):
    return {"result": op.operand}


def element(op, x):
    """"Implements the `roundToIntegralTiesToEven` operation from the IEEE-754
    specification": exact; -2.5 → -2, 0.5 → +0, -0.5 → -0.0."""
    return ieee.roundToIntegralTiesToEven(x)


SPEC = OpSpec(
    mnemonic="round_nearest_even",
    operands=(Operand("operand", FLOAT),),
    results=(Result("result", FLOAT),),
    constraints=(round_nearest_even_c1,),
    infer=infer,
    semantics=Elementwise(element, generic=Generic(None, finite, ieee=np.rint, exact=True)),
    exercise=Exercise(hard_floats=samples.halfway_points),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize
)
