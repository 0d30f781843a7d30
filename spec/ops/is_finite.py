"""is_finite — element-wise finiteness test (spec section "is_finite")."""
import math

from ..dsl import BOOLEAN, FLOAT, Elementwise, OpSpec, Operand, Result, same_shape
from ..dsl.quantization import PER_TENSOR
from ..types import I1, TensorType


def is_finite_c1(op):
    """(C1) `x` and `y` have the same shape."""
    return same_shape(op.x, op.y)


def infer(op):
    return {"y": TensorType(tuple(op.x.shape), I1)}


def element(op, x):
    """"Implements the `isFinite` operation from the IEEE-754 specification":
    true unless x is +inf, -inf or NaN (so ±0 and subnormals are finite)."""
    return not (math.isnan(x) or math.isinf(x))


SPEC = OpSpec(
    mnemonic="is_finite",
    operands=(Operand("x", FLOAT),),
    results=(Result("y", BOOLEAN),),
    constraints=(is_finite_c1,),
    infer=infer,
    semantics=Elementwise(element),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize (compare: dequantize_compare, select: dequantize_select_quantize, is_finite: always true)
)
