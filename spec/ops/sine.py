"""sine — element-wise sine (spec section "sine").

Signed zeros (issue 25): sin(±0) = ±0 is *required*, and judged exactly.
The seed says "For floats: `sin` from IEEE-754", and IEEE 754-2019's
special values of sin (§9.2.1) give ±0 for ±0 exactly; the seed's
Accuracy section ("does not provide guarantees about numerical accuracy")
waives rounding error, and ±0 → ±0 rounds nothing.  So an expected real
zero is met only by the zero of its sign (spec/kinds/ulp.py): the
tolerance no longer lets +0 pass for -0.
"""
import math

import mpmath

from ..dsl import COMPLEX, FLOAT, Approx, Elementwise, OpSpec, Operand, Result, Generic, finite_nonzero
from ..dsl.quantization import PER_TENSOR
from ..quantized import same_baseline_type
from .. import annex_g, samples
from ..exercise import Exercise


def sine_c1(op):
    """(C1) `operand` and `result` have the same type.
    v1.20 reads `baseline_type(operand) = baseline_type(result)`: the same for every
    non-quantized type; per-tensor quantized tensors may differ in scales
    and zero points."""
    return same_baseline_type(op.operand, op.result)


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
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize
)
