"""log — element-wise natural logarithm (spec section "log")."""
import math

import mpmath
import numpy as np

from ..dsl import COMPLEX, FLOAT, Approx, Elementwise, OpSpec, Operand, Result, Generic
from ..dsl.quantization import PER_TENSOR
from ..quantized import same_baseline_type
from .. import annex_g, samples
from ..exercise import Exercise


def log_c1(op):
    """(C1) `operand` and `result` have the same type.
    v1.20 reads `baseline_type(operand) = baseline_type(result)`: the same for every
    non-quantized type; per-tensor quantized tensors may differ in scales
    and zero points."""
    return same_baseline_type(op.operand, op.result)


def infer(op):
    return {"result": op.operand}


def element(op, x):
    """Floats: `log` from IEEE-754 §9.2 (log(±0) = -inf, the pole; log(x<0)
    and log(-inf) are NaN; log(+inf) = +inf; log(1) = +0 exactly); complex:
    complex logarithm (C99 Annex G clog)."""
    if isinstance(x, complex):
        return annex_g.clog(x)
    if math.isnan(x):
        return x
    if x == 0:
        return -math.inf
    if x < 0:
        return math.nan
    if x == math.inf:
        return math.inf
    if x == 1:
        return 0.0
    return Approx(mpmath.log, x)


def _generic_log(x):
    """Where `element` is Approx(log, x): finite, positive, not 1."""
    return np.isfinite(x) & (x > 0) & (x != 1)


def _nan_domain(x):
    """Where `element` answers NaN: x < 0 (and -inf) — stated on whole arrays too."""
    return ~np.isnan(x) & (x < 0)


SPEC = OpSpec(
    mnemonic="log",
    operands=(Operand("operand", FLOAT + COMPLEX),),
    results=(Result("result", FLOAT + COMPLEX),),
    constraints=(log_c1,),
    infer=infer,
    semantics=Elementwise(element, accuracy="approx", generic=Generic(mpmath.log, _generic_log, nan=_nan_domain)),
    exercise=Exercise(hard_floats=samples.near_one),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize
)
