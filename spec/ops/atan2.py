"""atan2 — element-wise two-argument arctangent atan2(lhs, rhs) = the angle
of the point (x = rhs, y = lhs) (spec section "atan2").

Floats: `atan2` from IEEE 754-2019 (§9.2.1, the same special values as C99
F.9.1.4), decided here before mpmath is entered; complex: complex atan2
(spec/annex_g.py).
"""
import math

import mpmath

from ..dsl import COMPLEX, FLOAT, Approx, Elementwise, OpSpec, Operand, Result, Generic, finite_nonzero
from ..dsl.quantization import PER_TENSOR
from ..quantized import same_baseline_type
from .. import annex_g, samples
from ..exercise import Exercise

TYPES = FLOAT + COMPLEX  # "tensor of floating-point or complex type"


def atan2_c1(op):
    """(C1) `lhs`, `rhs`, and `result` have the same type.
    v1.20 reads `baseline_type(lhs) = baseline_type(rhs) = baseline_type(result)`: the same for every
    non-quantized type; per-tensor quantized tensors may differ in scales
    and zero points."""
    return same_baseline_type(op.lhs, op.rhs, op.result)


def infer(op):
    return {"result": op.lhs}


def pi_times(k):
    """k·π (k an exact rational: ±1, ±1/2, ±1/4, ±3/4)."""
    return k * mpmath.pi


def _pi(k: float, y: float) -> Approx:
    return Approx(pi_times, math.copysign(k, y))


def float_atan2(y: float, x: float):
    """IEEE `atan2(y, x)` in the Elementwise vocabulary."""
    if math.isnan(y) or math.isnan(x):
        return math.nan
    x_negative = math.copysign(1.0, x) < 0
    if y == 0:
        return _pi(1.0, y) if x_negative else y          # atan2(±0, -0 or x<0) = ±π; (±0, +0 or x>0) = ±0
    if math.isinf(y):
        if math.isinf(x):
            return _pi(0.75 if x_negative else 0.25, y)  # ±3π/4, ±π/4
        return _pi(0.5, y)
    if x == 0:
        return _pi(0.5, y)
    if math.isinf(x):
        return _pi(1.0, y) if x_negative else math.copysign(0.0, y)
    return Approx(mpmath.atan2, y, x)


def element(op, lhs, rhs):
    if op.lhs.element_type.is_complex:
        return annex_g.catan2(lhs, rhs)
    return float_atan2(lhs, rhs)


SPEC = OpSpec(
    mnemonic="atan2",
    operands=(Operand("lhs", TYPES), Operand("rhs", TYPES)),
    results=(Result("result", TYPES),),
    constraints=(atan2_c1,),
    infer=infer,
    semantics=Elementwise(element, accuracy="approx", generic=Generic(mpmath.atan2, finite_nonzero)),
    exercise=Exercise(hard_floats=samples.quotient_arguments),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize
)
