"""maximum — element-wise max (spec section "maximum").

Floats: `maximum` from IEEE-754.  The seed links IEEE 754-2019, whose
`maximum` (§9.6) is decided for every input: NaN if either operand is NaN,
and +0 > -0.  So nothing here is implementation-defined for floats.

Finding: for complex numbers the seed says "lexicographic maximum for the
`(real, imaginary)` pair" without saying how components compare.  We compare
them as `compare` does for complex (IEEE quiet comparisons, so -0 == +0) and
declare the cases that reading leaves open: a NaN component (no order), and
pairs equal as numbers but not in bits (signed zeros).
"""
import math
import numpy as np

from ..dsl import ANY, Elementwise, ImplDefined, OpSpec, Operand, Result, Generic, finite
from ..dsl.quantization import PER_TENSOR
from ..quantized import same_baseline_type
from .. import ieee


def maximum_c1(op):
    """(C1) `lhs`, `rhs` and `result` have the same type.
    v1.20 reads `baseline_type(lhs) = baseline_type(rhs) = baseline_type(result)`: the same for every
    non-quantized type; per-tensor quantized tensors may differ in scales
    and zero points."""
    return same_baseline_type(op.lhs, op.rhs, op.result)


def infer(op):
    return {"result": op.lhs}


def _bits_equal(a: float, b: float) -> bool:
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def lexicographic(lhs: complex, rhs: complex, pick_greater: bool):
    """Lexicographic max (pick_greater) or min of two complex numbers as (re, im)."""
    l, r = (lhs.real, lhs.imag), (rhs.real, rhs.imag)
    if any(math.isnan(v) for v in l + r):
        return ImplDefined({"lhs": l, "rhs": r, "NaN": (math.nan, math.nan)},
                           why="lexicographic order of complex numbers with a NaN component (seed silent)")
    if l == r:
        if all(_bits_equal(a, b) for a, b in zip(l, r)):
            return l
        return ImplDefined({"lhs": l, "rhs": r},
                           why="complex operands equal as numbers but differing in signed zeros (seed silent)")
    return l if (l > r) == pick_greater else r


def max_element(et, lhs, rhs):
    """Booleans: logical OR; integers: integer maximum; floats: IEEE
    `maximum`; complex: lexicographic maximum of the (real, imaginary) pair."""
    if et.is_bool:
        return lhs or rhs
    if et.is_integer:
        return max(lhs, rhs)
    if et.is_complex:
        return lexicographic(lhs, rhs, pick_greater=True)
    return ieee.maximum(lhs, rhs)


def element(op, lhs, rhs):
    return max_element(op.lhs.element_type, lhs, rhs)


def finite_no_opposite_zeros(lhs, rhs):
    """The elements where numpy's maximum / minimum is the fn's answer on
    floats (numpy arrays in, a mask out): both operands finite, and not a
    pair of zeros of different signs.  There the result is one of the
    operands, unrounded — a zero result included: it is the zero operand
    (max(-3, -0) = -0), or either of two equal zeros — while numpy returns
    whichever zero its loop picks for -0 against +0, and IEEE 754-2019
    orders -0 below +0 (`ieee.maximum`, `ieee.minimum`): those pairs,
    NaN and ±inf are left to fn."""
    m = finite(lhs, rhs)
    m &= ~((lhs == 0) & (rhs == 0) & (np.signbit(lhs) != np.signbit(rhs)))
    return m


SPEC = OpSpec(
    mnemonic="maximum",
    operands=(Operand("lhs", ANY), Operand("rhs", ANY)),
    results=(Result("result", ANY),),
    constraints=(maximum_c1,),
    infer=infer,
    semantics=Elementwise(element, generic=Generic(None, finite_no_opposite_zeros, ieee=np.maximum, exact=True,
                                                   integer=np.maximum), same_operand=True),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize
)
