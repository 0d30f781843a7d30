"""cosine — element-wise cosine (spec section "cosine")."""
import math

import mpmath

from ..dsl import COMPLEX, FLOAT, Approx, Elementwise, OpSpec, Operand, Result, Generic, finite_nonzero
from ..dsl.quantization import PER_TENSOR
from ..quantized import same_baseline_type
from .. import annex_g, samples
from ..exercise import Exercise


def cosine_c1(op):
    """(C1) `operand` and `result` have the same type.
    v1.20 reads `baseline_type(operand) = baseline_type(result)`: the same for every
    non-quantized type; per-tensor quantized tensors may differ in scales
    and zero points."""
    return same_baseline_type(op.operand, op.result)


def infer(op):
    return {"result": op.operand}


def element(op, x):
    """Floats: `cos` from IEEE-754 (§9.2: cos(±inf) and cos(NaN) are NaN,
    cos(±0) = 1 exactly); complex: complex cosine (C99 Annex G specials)."""
    if isinstance(x, complex):
        return annex_g.ccos(x)
    if math.isnan(x) or math.isinf(x):
        return math.nan
    if x == 0:
        return 1.0
    return Approx(mpmath.cos, x)


SPEC = OpSpec(
    mnemonic="cosine",
    operands=(Operand("operand", FLOAT + COMPLEX),),
    results=(Result("result", FLOAT + COMPLEX),),
    constraints=(cosine_c1,),
    infer=infer,
    semantics=Elementwise(element, accuracy="approx", generic=Generic(mpmath.cos, finite_nonzero)),
    exercise=Exercise(hard_floats=samples.near_multiples_of_half_pi),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize
)
