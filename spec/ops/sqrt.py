"""sqrt — element-wise square root (spec section "sqrt")."""
import numpy as np

from ..dsl import COMPLEX, FLOAT, Elementwise, Generic, OpSpec, Operand, Result, approx_if_complex, finite
from ..dsl.quantization import PER_TENSOR
from ..quantized import same_baseline_type
from .. import annex_g, ieee, samples
from ..exercise import Exercise


def sqrt_c1(op):
    """(C1) `operand` and `result` have the same type.
    v1.20 reads `baseline_type(operand) = baseline_type(result)`: the same for every
    non-quantized type; per-tensor quantized tensors may differ in scales
    and zero points."""
    return same_baseline_type(op.operand, op.result)


def infer(op):
    return {"result": op.operand}


def element(op, x):
    """Floats: `squareRoot` from IEEE-754 — a basic operation (§5.4.1) that
    must be correctly rounded, hence accuracy "exact": the exact root when it
    is rational, else the real root as an Approx whose correctly rounded value
    precision escalation decides.  sqrt(±0) = ±0, sqrt(+inf) = +inf,
    sqrt(x < 0) = NaN.  Complex: complex square root (C99 Annex G csqrt).

    `accuracy` is one field per op, so complex sqrt is judged "exact" too,
    although nothing makes csqrt correctly rounded (see the report)."""
    if isinstance(x, complex):
        return annex_g.csqrt(x)
    return ieee.squareRoot(x)


SPEC = OpSpec(
    mnemonic="sqrt",
    operands=(Operand("operand", FLOAT + COMPLEX),),
    results=(Result("result", FLOAT + COMPLEX),),
    constraints=(sqrt_c1,),
    infer=infer,
    semantics=Elementwise(element, accuracy=approx_if_complex, generic=Generic(None, finite, ieee=np.sqrt)),
    exercise=Exercise(hard_floats=samples.roots),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize
)
