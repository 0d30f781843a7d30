"""rsqrt — element-wise reciprocal square root (spec section "rsqrt")."""
import numpy as np

from ..dsl import COMPLEX, FLOAT, Elementwise, Generic, OpSpec, Operand, Result
from ..dsl.quantization import PER_TENSOR
from ..quantized import same_baseline_type
from .. import annex_g, ieee, samples
from ..exercise import Exercise


def rsqrt_c1(op):
    """(C1) `operand` and `result` have the same type.
    v1.20 reads `baseline_type(operand) = baseline_type(result)`: the same for every
    non-quantized type; per-tensor quantized tensors may differ in scales
    and zero points."""
    return same_baseline_type(op.operand, op.result)


def infer(op):
    return {"result": op.operand}


def element(op, x):
    """Floats: `rSqrt` from IEEE-754 (§9.2, a recommended operation, not a
    correctly rounded basic one: accuracy "approx"): rSqrt(±0) = ±inf,
    rSqrt(+inf) = +0, rSqrt(x < 0) = NaN; exact for perfect squares
    (rsqrt(4) = 0.5).  Complex: complex reciprocal square root (spec/annex_g.py)."""
    if isinstance(x, complex):
        return annex_g.crsqrt(x)
    return ieee.rSqrt(x)


def _positive(x):
    """Where rSqrt is 1/sqrt(x) rounded once (numpy arrays): positive and finite."""
    return np.isfinite(x) & (x > 0)


def _nan_domain(x):
    """Where `element` answers NaN: x < 0 (and -inf) — stated on whole arrays too."""
    return ~np.isnan(x) & (x < 0)


SPEC = OpSpec(
    mnemonic="rsqrt",
    operands=(Operand("operand", FLOAT + COMPLEX),),
    results=(Result("result", FLOAT + COMPLEX),),
    constraints=(rsqrt_c1,),
    infer=infer,
    semantics=Elementwise(element, accuracy="approx", generic=Generic(ieee.reciprocal_sqrt, _positive, nan=_nan_domain)),
    exercise=Exercise(hard_floats=samples.roots),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize
)
