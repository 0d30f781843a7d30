"""tan — element-wise tangent (the RFC "Standardize TanOp …", section "tan").

The RFC also admits per-tensor quantized tensors, with
`dequantize_op_quantize(tan, operand, type(result))`: declared by
`quantization=PER_TENSOR`, executed by oracle/quantized.py, exercised by
generators/quantized.py; C1's `baseline_type` lets the two quantized types
differ in scales and zero points.

Signed zeros (issue 25): tan(±0) = ±0 is *required*, and judged exactly.
The seed says "For floats: `tan` from IEEE-754", and IEEE 754-2019's
special values of tan (§9.2.1) give ±0 for ±0 exactly; the seed's
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


def tan_c1(op):
    """(C1) `baseline_type(operand) = baseline_type(result)`."""
    return same_baseline_type(op.operand, op.result)


def infer(op):
    return {"result": op.operand}


def element(op, x):
    """Floats: `tan` from IEEE-754 (§9.2: tan(±0) = ±0, tan(±inf) and
    tan(NaN) are NaN; no binary float is an odd multiple of pi/2, so there
    is no pole to decide); complex: complex tangent (C99 Annex G)."""
    if isinstance(x, complex):
        return annex_g.ctan(x)
    if math.isnan(x) or math.isinf(x):
        return math.nan
    if x == 0:
        return x
    return Approx(mpmath.tan, x)


SPEC = OpSpec(
    mnemonic="tan",
    operands=(Operand("operand", FLOAT + COMPLEX),),
    results=(Result("result", FLOAT + COMPLEX),),
    constraints=(tan_c1,),
    infer=infer,
    semantics=Elementwise(element, accuracy="approx", generic=Generic(mpmath.tan, finite_nonzero)),
    exercise=Exercise(hard_floats=samples.near_multiples_of_half_pi),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize
)
