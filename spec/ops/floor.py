"""floor — element-wise floor (spec section "floor")."""
import numpy as np

from ..dsl import FLOAT, Elementwise, OpSpec, Operand, Result, Generic, finite
from ..dsl.quantization import PER_TENSOR
from ..quantized import same_baseline_type
from .. import ieee, samples
from ..exercise import Exercise


def floor_c1(op):
    """(C1) `operand` and `result` have the same type.
    v1.20 reads `baseline_type(operand) = baseline_type(result)`: the same for every
    non-quantized type; per-tensor quantized tensors may differ in scales
    and zero points."""
    return same_baseline_type(op.operand, op.result)


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
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize
)
