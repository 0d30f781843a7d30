"""logistic — element-wise logistic function 1 / (1 + e^-x) (spec section "logistic")."""
import math

import mpmath

from ..dsl import COMPLEX, FLOAT, Approx, Elementwise, OpSpec, Operand, Result, Generic, finite_nonzero
from ..dsl.quantization import PER_TENSOR
from ..quantized import same_baseline_type
from .. import annex_g, samples
from ..exercise import Exercise


def logistic_c1(op):
    """(C1) `operand` and `result` have the same type.
    v1.20 reads `baseline_type(operand) = baseline_type(result)`: the same for every
    non-quantized type; per-tensor quantized tensors may differ in scales
    and zero points."""
    return same_baseline_type(op.operand, op.result)


def infer(op):
    return {"result": op.operand}


def logistic_value(t):
    return 1 / (1 + mpmath.exp(-t))


def element(op, x):
    """Floats: `division(1, addition(1, exp(-x)))` from IEEE-754.  We state
    the real function it names (one correctly rounded reference, judged with
    the approx tolerance) rather than three separately rounded steps.
    Specials follow the formula: logistic(+inf) = 1/(1+0) = 1,
    logistic(-inf) = 1/(1+inf) = +0, logistic(±0) = 1/2 exactly, NaN → NaN.
    Complex: complex logistic (spec/annex_g.py)."""
    if isinstance(x, complex):
        return annex_g.clogistic(x)
    if math.isnan(x):
        return x
    if x == math.inf:
        return 1.0
    if x == -math.inf:
        return 0.0
    if x == 0:
        return 0.5
    return Approx(logistic_value, x)


SPEC = OpSpec(
    mnemonic="logistic",
    operands=(Operand("operand", FLOAT + COMPLEX),),
    results=(Result("result", FLOAT + COMPLEX),),
    constraints=(logistic_c1,),
    infer=infer,
    semantics=Elementwise(element, accuracy="approx", generic=Generic(logistic_value, finite_nonzero)),
    exercise=Exercise(hard_floats=samples.saturation_edges),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize
)
