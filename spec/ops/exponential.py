"""exponential — element-wise e^x (spec section "exponential")."""
import math

import mpmath

from ..dsl import COMPLEX, FLOAT, Approx, Elementwise, OpSpec, Operand, Result, Generic, finite_nonzero
from ..dsl.quantization import PER_TENSOR
from ..quantized import same_baseline_type
from .. import annex_g, samples
from ..exercise import Exercise


def exponential_c1(op):
    """(C1) `operand` and `result` have the same type.
    v1.20 reads `baseline_type(operand) = baseline_type(result)`: the same for every
    non-quantized type; per-tensor quantized tensors may differ in scales
    and zero points."""
    return same_baseline_type(op.operand, op.result)


def infer(op):
    return {"result": op.operand}


def element(op, x):
    """Floats: `exp` from IEEE-754 (exp(±0) = 1 exactly, exp(+inf) = +inf,
    exp(-inf) = +0, NaN → NaN; overflow to inf and underflow to 0 happen in
    the rounding of the real value); complex: complex exponential (C99 Annex G)."""
    if isinstance(x, complex):
        return annex_g.cexp(x)
    if math.isnan(x):
        return x
    if x == math.inf:
        return math.inf
    if x == -math.inf:
        return 0.0
    if x == 0:
        return 1.0
    return Approx(mpmath.exp, x)


SPEC = OpSpec(
    mnemonic="exponential",
    operands=(Operand("operand", FLOAT + COMPLEX),),
    results=(Result("result", FLOAT + COMPLEX),),
    constraints=(exponential_c1,),
    infer=infer,
    semantics=Elementwise(element, accuracy="approx", generic=Generic(mpmath.exp, finite_nonzero)),
    exercise=Exercise(hard_floats=samples.exp_edges),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize
)
