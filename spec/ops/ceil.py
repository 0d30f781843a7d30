"""ceil — element-wise ceil (spec section "ceil")."""
import numpy as np

from ..dsl import FLOAT, Elementwise, OpSpec, Operand, Result, Generic, finite
from ..dsl.quantization import PER_TENSOR
from ..quantized import same_baseline_type
from .. import ieee, samples
from ..exercise import Exercise


def ceil_c1(op):
    """(C1) `operand` and `result` have the same type.
    v1.20 reads `baseline_type(operand) = baseline_type(result)`: the same for every
    non-quantized type; per-tensor quantized tensors may differ in scales
    and zero points."""
    return same_baseline_type(op.operand, op.result)


def infer(op):
    return {"result": op.operand}


def element(op, x):
    """"Implements the `roundToIntegralTowardPositive` operation from the
    IEEE-754 specification": exact, and a zero result keeps the operand's
    sign (the seed's example: ceil(-0.2530) = -0.0)."""
    return ieee.roundToIntegralTowardPositive(x)


SPEC = OpSpec(
    mnemonic="ceil",
    operands=(Operand("operand", FLOAT),),
    results=(Result("result", FLOAT),),
    constraints=(ceil_c1,),
    infer=infer,
    semantics=Elementwise(element, generic=Generic(None, finite, ieee=np.ceil, exact=True)),
    exercise=Exercise(hard_floats=samples.halfway_points),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize
)
