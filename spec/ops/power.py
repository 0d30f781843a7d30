"""power — element-wise exponentiation (spec section "power").

Floats: `pow` from IEEE 754-2019 (§9.2.1), whose special cases are decided
here before mpmath is entered; finite cases are the real value |x|^y with the
sign of x for odd integral y, exact (a Fraction) for small integral y.

Findings:
* The seed's example is typed `tensor<6xf64>` but its results are f32
  values: `0.333333343` is 1/3 rounded to f32 (in f64 it is
  0.3333333333333333), and `10000.0^10.0 = 1e40` is `inf` only in f32 (it is
  finite in f64).
* "Integer exponentiation" with a negative exponent has no integer result
  except for bases ±1; the seed is silent, so those cases are declared
  implementation-defined (XLA's emitter returns 1 for base 1 and 0 otherwise).
"""
import math
from fractions import Fraction

import mpmath
import numpy as np

from ..dsl import (COMPLEX, FLOAT, INTEGER, Approx, Elementwise, Generic, ImplDefined, OpSpec, Operand,
                   Result, integer_overflow)
from ..dsl.quantization import PER_TENSOR
from ..quantized import same_baseline_type
from .. import annex_g, samples
from ..ieee import is_odd_integer
from ..exercise import Exercise

TYPES = INTEGER + FLOAT + COMPLEX

# Integral exponents up to this size are evaluated exactly with Fractions.
_EXACT_EXPONENT = 64


def power_c1(op):
    """(C1) `lhs`, `rhs`, and `result` have the same type.
    v1.20 reads `baseline_type(lhs) = baseline_type(rhs) = baseline_type(result)`: the same for every
    non-quantized type; per-tensor quantized tensors may differ in scales
    and zero points."""
    return same_baseline_type(op.lhs, op.rhs, op.result)


def infer(op):
    return {"result": op.lhs}


def signed_power(sign, x, y):
    """sign * x^y for x > 0 (mpmath arguments)."""
    return sign * mpmath.power(x, y)


def float_pow(x: float, y: float):
    """IEEE 754-2019 `pow(x, y)` in the Elementwise vocabulary."""
    if y == 0 or x == 1:
        return 1.0                       # pow(x, ±0) = 1 even for NaN; pow(+1, y) = 1 even for NaN
    if math.isnan(x) or math.isnan(y):
        return math.nan
    odd = is_odd_integer(y)
    if x == 0:
        if y < 0:
            return math.copysign(math.inf, x) if odd else math.inf
        return x if odd else 0.0
    if math.isinf(y):
        if x == -1:
            return 1.0
        if (abs(x) < 1) == (y > 0):
            return 0.0
        return math.inf
    if math.isinf(x):
        mag = 0.0 if y < 0 else math.inf
        return -mag if (x < 0 and odd) else mag
    if x < 0 and y != math.floor(y):
        return math.nan                  # invalid: negative base, non-integral exponent
    sign = -1 if (x < 0 and odd) else 1
    if y == math.floor(y) and abs(y) <= _EXACT_EXPONENT:
        return Fraction(x) ** int(y)
    exact = exact_power(abs(x), y)
    if exact is not None:
        return sign * exact
    return Approx(signed_power, float(sign), abs(x), y)


def exact_power(x: float, y: float) -> Fraction | None:
    """x^y (x > 0 finite, y finite) when it is a dyadic rational of sane
    size, else None.  Why: an exact value can be a rounding midpoint
    (f8E4M3FN: (2^-8)^1.25 = 2^-10, halfway between 0 and the smallest
    subnormal 2^-9), which no enclosure of an Approx can ever decide; the
    spec's rounding of the exact value (ties to even: +0) is the answer.
    With x = c·2^e (c odd) and y = a/b in lowest terms (b a power of two),
    x^y = c^(a/b)·2^(e·a/b) is dyadic exactly when c is a perfect b-th power
    r^b (then c^(a/b) = r^a, an integer, or 1/r^|a| which is dyadic only for
    r = 1) and b divides e·a.  c < 2^53, so c > 1 needs b <= 52.  Left to
    the Approx, whose enclosure decides them without building them: an r^a
    wider than 64 bits (no midpoint of any format has more than 54), and
    values far outside every format's range (|log2| > 2200)."""
    m, e = math.frexp(x)
    c, e = int(m * 2 ** 53), e - 53
    while c % 2 == 0:
        c, e = c // 2, e + 1
    q = Fraction(y)
    a, b = q.numerator, q.denominator
    if (e * a) % b:
        return None
    if c == 1:
        r = 1
    else:
        if b > 52 or a < 0:
            return None
        r = round(c ** (1.0 / b))
        r = next((t for t in (r - 1, r, r + 1) if t > 0 and t ** b == c), None)
        if r is None:
            return None
    if r > 1 and a * math.log2(r) > 64:
        return None   # r^a is odd and wider than any format's midpoint: an enclosure decides it
    if abs(y * math.log2(x)) > 2200:
        return None
    return Fraction(r ** a) * (Fraction(2) ** (e * a // b))


def _generic_pow(x, y):
    """Where `float_pow` is Approx(signed_power, 1.0, x, y): x positive,
    finite and not 1; y finite, nonzero and not a small integer."""
    small_integer = (y == np.floor(y)) & (np.abs(y) <= _EXACT_EXPONENT)
    return np.isfinite(x) & (x > 0) & (x != 1) & np.isfinite(y) & (y != 0) & ~small_integer


def integer_pow(et, x: int, n: int):
    """Integer exponentiation; negative exponents and overflow declared."""
    if n < 0:
        if x == 1:
            return 1
        if x == -1:
            return ImplDefined({"exact (-1)^n": -1 if n % 2 else 1, "zero unless base is 1 (XLA)": 0},
                               why="integer power with a negative exponent (seed silent)")
        return ImplDefined({"zero (1/x^n truncated; XLA)": 0},
                           why="integer power with a negative exponent has no integer result")
    if abs(x) >= 2 and n >= et.bits:
        # |x|^n >= 2^bits: certainly out of range; only the wrapped value is cheap.
        return integer_overflow(et, pow(x, n, 1 << et.bits))
    return x ** n


def element(op, lhs, rhs):
    """Integers: integer exponentiation; floats: IEEE `pow`; complex: complex
    exponentiation (C99 Annex G `cpow`)."""
    et = op.lhs.element_type
    if et.is_integer:
        return integer_pow(et, lhs, rhs)
    if et.is_complex:
        return annex_g.cpow(lhs, rhs)
    return float_pow(lhs, rhs)


def accuracy(op):
    """Integer exponentiation is exact; `pow` is not an IEEE basic operation."""
    return "exact" if op.lhs.element_type.is_integer else "approx"


SPEC = OpSpec(
    mnemonic="power",
    operands=(Operand("lhs", TYPES), Operand("rhs", TYPES)),
    results=(Result("result", TYPES),),
    constraints=(power_c1,),
    infer=infer,
    semantics=Elementwise(element, accuracy=accuracy,
                          generic=Generic(signed_power, _generic_pow, lambda x, y: (np.ones_like(x), x, y))),
    exercise=Exercise(hard_floats=samples.power_arguments),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize
)
