"""sign — element-wise sign (spec section "sign").

Follows the seed's pseudocode: integers -1/0/1; floats NaN, -1.0, ∓0.0 (the
zero itself), 1.0; complex NaN if a component is NaN, else
`divide(x, abs(x))` (spec/annex_g.py's `csign` decides zeros and infinities,
where the formula itself would give 0/0 or inf/inf).

Finding: for complex, "return NaN" does not say which complex NaN; we return
(NaN, NaN), and a result with any NaN component should be judged as NaN.
"""
import math
import numpy as np

from ..dsl import COMPLEX, FLOAT, SIGNED, Elementwise, OpSpec, Operand, Result, approx_if_complex, Generic, finite
from ..dsl.quantization import PER_TENSOR
from ..quantized import same_baseline_type
from .. import annex_g

TYPES = SIGNED + FLOAT + COMPLEX  # "tensor of signed integer, floating-point, or complex type"


def sign_c1(op):
    """(C1) `operand` and `result` have the same type.
    v1.20 reads `baseline_type(operand) = baseline_type(result)`: the same for every
    non-quantized type; per-tensor quantized tensors may differ in scales
    and zero points."""
    return same_baseline_type(op.operand, op.result)


def infer(op):
    return {"result": op.operand}


def element(op, x):
    et = op.operand.element_type
    if et.is_integer:
        return (x > 0) - (x < 0)
    if et.is_complex:
        if math.isnan(x.real) or math.isnan(x.imag):
            return (math.nan, math.nan)
        return annex_g.csign(x)
    if math.isnan(x):
        return math.nan
    if x == 0:
        return x                  # -0.0 stays -0.0, +0.0 stays +0.0
    return -1.0 if x < 0 else 1.0


SPEC = OpSpec(
    mnemonic="sign",
    operands=(Operand("operand", TYPES),),
    results=(Result("result", TYPES),),
    constraints=(sign_c1,),
    infer=infer,
    semantics=Elementwise(element, accuracy=approx_if_complex, generic=Generic(None, finite, ieee=np.sign)),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize
)
