"""exponential_minus_one — element-wise e^x - 1 (spec section "exponential_minus_one").

Signed zeros (issue 25): expm1(±0) = ±0 is *required*, and judged exactly.
The seed says "For floats: `expm1` from IEEE-754", and IEEE 754-2019's
special values of expm1 (§9.2.1) give ±0 for ±0 exactly; the seed's
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


def exponential_minus_one_c1(op):
    """(C1) `operand` and `result` have the same type.
    v1.20 reads `baseline_type(operand) = baseline_type(result)`: the same for every
    non-quantized type; per-tensor quantized tensors may differ in scales
    and zero points."""
    return same_baseline_type(op.operand, op.result)


def infer(op):
    return {"result": op.operand}


def element(op, x):
    """Floats: `expm1` from IEEE-754 (expm1(±0) = ±0, expm1(+inf) = +inf,
    expm1(-inf) = -1 exactly, NaN → NaN); complex: complex exponential minus
    one (Annex G style specials, from spec/annex_g.py)."""
    if isinstance(x, complex):
        return annex_g.cexpm1(x)
    if math.isnan(x):
        return x
    if x == math.inf:
        return math.inf
    if x == -math.inf:
        return -1.0
    if x == 0:
        return x
    return Approx(mpmath.expm1, x)


SPEC = OpSpec(
    mnemonic="exponential_minus_one",
    operands=(Operand("operand", FLOAT + COMPLEX),),
    results=(Result("result", FLOAT + COMPLEX),),
    constraints=(exponential_minus_one_c1,),
    infer=infer,
    semantics=Elementwise(element, accuracy="approx", generic=Generic(mpmath.expm1, finite_nonzero)),
    exercise=Exercise(hard_floats=samples.exp_edges),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize
)
