"""divide — element-wise division (spec section "divide").

Findings: the seed says only "integer division" for integers.  We read it as
division truncating toward zero, because `remainder` defines its result as
`lhs - d * rhs` with `d = stablehlo.divide(lhs, rhs)` and says "the sign of
the result is taken from the dividend" — true only for truncating division.
Division by zero and `INT_MIN / -1` are integer-overflow errors, which the
seed's "Errors" section leaves implementation-defined; seed 002 (XLA) says the
same and XLA yields -1 (all ones) and INT_MIN respectively.

The seed's example divides [17.1, -17.1, 17.1, -17.1] by [3, 3, -3, -3] and
shows ±5.66666651 — the f32 quotients of ±17.0, not of ±17.1 (±5.70000029).
"""
import numpy as np

from ..dsl import (COMPLEX, FLOAT, INTEGER, Elementwise, Generic, ImplDefined, OpSpec, Operand, finite,
                   Result, approx_if_complex)
from ..dsl.quantization import PER_TENSOR
from ..quantized import same_baseline_type
from .. import annex_g, ieee, samples
from ..exercise import Exercise

TYPES = INTEGER + FLOAT + COMPLEX


def divide_c1(op):
    """(C1) `lhs`, `rhs` and `result` have the same type.
    v1.20 reads `baseline_type(lhs) = baseline_type(rhs) = baseline_type(result)`: the same for every
    non-quantized type; per-tensor quantized tensors may differ in scales
    and zero points."""
    return same_baseline_type(op.lhs, op.rhs, op.result)


def infer(op):
    return {"result": op.lhs}


def truncated_quotient(a: int, b: int) -> int:
    """a / b rounded toward zero (b != 0), exactly."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def integer_division(et, a: int, b: int):
    """The seed's integer division for element type `et`, with its
    implementation-defined cases declared."""
    if b == 0:
        return ImplDefined({"all ones (XLA)": et.wrap(-1), "zero (AArch64 sdiv/udiv)": 0},
                           why="integer division by zero (seed: Errors; seed 002)")
    if et.is_signed and a == et.min_value and b == -1:
        return ImplDefined({"INT_MIN (wraps, XLA)": et.min_value, "INT_MAX (saturates)": et.max_value},
                           why="INT_MIN / -1 overflows (seed: Errors; seed 002)")
    return truncated_quotient(a, b)


def element(op, lhs, rhs):
    """Integers: integer division (truncating); floats: IEEE `division`;
    complex: complex division (C99 Annex G, judged approximately)."""
    et = op.lhs.element_type
    if et.is_integer:
        return integer_division(et, lhs, rhs)
    if et.is_complex:
        return annex_g.cdiv(lhs, rhs)
    return ieee.division(lhs, rhs)


SPEC = OpSpec(
    mnemonic="divide",
    operands=(Operand("lhs", TYPES), Operand("rhs", TYPES)),
    results=(Result("result", TYPES),),
    constraints=(divide_c1,),
    infer=infer,
    semantics=Elementwise(element, accuracy=approx_if_complex, generic=Generic(None, finite, ieee=np.divide)),
    exercise=Exercise(hard_floats=samples.quotient_arguments),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize
)
