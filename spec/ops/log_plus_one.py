"""log_plus_one — element-wise log(1 + x) (spec section "log_plus_one")."""
import math

import mpmath
import numpy as np

from ..dsl import COMPLEX, FLOAT, Approx, Elementwise, OpSpec, Operand, Result, Generic
from ..dsl.quantization import PER_TENSOR
from ..quantized import same_baseline_type
from .. import annex_g, samples
from ..exercise import Exercise


def log_plus_one_c1(op):
    """(C1) `operand` and `result` have the same type.
    v1.20 reads `baseline_type(operand) = baseline_type(result)`: the same for every
    non-quantized type; per-tensor quantized tensors may differ in scales
    and zero points."""
    return same_baseline_type(op.operand, op.result)


def infer(op):
    return {"result": op.operand}


def element(op, x):
    """Floats: `logp1` from IEEE-754 §9.2 (logp1(±0) = ±0, logp1(-1) = -inf,
    logp1(x < -1) and logp1(-inf) are NaN, logp1(+inf) = +inf); complex:
    complex logarithm plus one (spec/annex_g.py).

    The seed's example prints log_plus_one(-0.0) as `0.0`; IEEE-754 (and C99
    log1p) give -0.0, which is what the spec's named operation returns."""
    if isinstance(x, complex):
        return annex_g.clog1p(x)
    if math.isnan(x):
        return x
    if x == 0:
        return x
    if x == -1:
        return -math.inf
    if x < -1:
        return math.nan
    if x == math.inf:
        return math.inf
    return Approx(mpmath.log1p, x)


def _generic_log1p(x):
    """Where `element` is Approx(log1p, x): finite, above -1, nonzero."""
    return np.isfinite(x) & (x > -1) & (x != 0)


def _nan_domain(x):
    """Where `element` answers NaN: x < -1 (and -inf) — stated on whole arrays too."""
    return ~np.isnan(x) & (x < -1)


SPEC = OpSpec(
    mnemonic="log_plus_one",
    operands=(Operand("operand", FLOAT + COMPLEX),),
    results=(Result("result", FLOAT + COMPLEX),),
    constraints=(log_plus_one_c1,),
    infer=infer,
    semantics=Elementwise(element, accuracy="approx",
                          generic=Generic(mpmath.log1p, _generic_log1p, nan=_nan_domain)),
    exercise=Exercise(hard_floats=samples.log1p_edges),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize
)
