"""IEEE-754 basic operations as the spec names them ("`addition` from IEEE-754").

Each returns the exact result in the vocabulary of `dsl.Elementwise`: a
Fraction when the result is an exact nonzero real to be correctly rounded, a
Python float when IEEE decides it outright (NaN, ±inf, and exact zeros whose
sign the standard fixes).  Python's float arithmetic is IEEE binary64 in
round-to-nearest, and every format of the spec is a subset of binary64, so
for these special cases it gives the standard's answer in any format.
"""
from __future__ import annotations

import math
from fractions import Fraction


def is_special(*xs: float) -> bool:
    return any(math.isnan(x) or math.isinf(x) for x in xs)


def addition(a: float, b: float):
    if is_special(a, b):
        return a + b
    s = Fraction(a) + Fraction(b)
    # An exact zero sum: +0 in round-to-nearest unless both addends are -0.
    return a + b if s == 0 else s


def subtraction(a: float, b: float):
    return addition(a, -b)


def multiplication(a: float, b: float):
    if is_special(a, b) or a == 0 or b == 0:
        return a * b
    return Fraction(a) * Fraction(b)


def division(a: float, b: float):
    if is_special(a, b) or a == 0 or b == 0:
        if b == 0:
            if a == 0 or math.isnan(a):
                return math.nan
            return math.copysign(math.inf, a) * math.copysign(1.0, b)
        return a / b
    return Fraction(a) / Fraction(b)


def maximum(a: float, b: float) -> float:
    """IEEE 754-2019 `maximum` (§9.6; the seed links the 2019 standard):
    NaN if either operand is NaN, and +0 is greater than -0 here."""
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if a == b == 0:
        return b if math.copysign(1.0, a) < 0 else a
    return a if a > b else b


def minimum(a: float, b: float) -> float:
    """IEEE 754-2019 `minimum` (§9.6): NaN if either operand is NaN, and -0
    is less than +0 here."""
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if a == b == 0:
        return a if math.copysign(1.0, a) < 0 else b
    return a if a < b else b


def remainder_toward_zero(a: float, b: float):
    """`a - d*b` where `d` is the exact quotient `a/b` rounded toward zero to
    an integral value (C's `fmod`): the remainder the seed's `remainder` op
    describes for floats.  The result is always exactly representable; its
    sign is the dividend's, zero included."""
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or b == 0:
        return math.nan
    if math.isinf(b) or a == 0:
        return a
    fa, fb = Fraction(a), Fraction(b)
    q = fa / fb
    d = q.numerator // q.denominator if q >= 0 else -((-q.numerator) // q.denominator)
    r = fa - d * fb
    return math.copysign(0.0, a) if r == 0 else r


def is_odd_integer(y: float) -> bool:
    """y is a finite odd integer (every float of magnitude >= 2^53 is even)."""
    return math.isfinite(y) and y == math.floor(y) and int(y) % 2 == 1


def total_order_key(x: float) -> int:
    """A key whose integer order is IEEE 754 `totalOrder` on binary64 values:
    -NaN < -inf < … < -0 < +0 < … < +inf < +NaN, NaNs of one sign ordered by
    payload (signaling below quiet for +NaN), as sign-magnitude bits read as
    an ordinal.  Every format of the spec embeds in binary64 preserving this
    order (NaN payloads widen left-aligned)."""
    import struct
    bits = struct.unpack("<Q", struct.pack("<d", x))[0]
    mag = bits & ~(1 << 63)
    return -mag - 1 if bits >> 63 else mag


def total_order(x: float, y: float) -> bool:
    """IEEE 754 `totalOrder(x, y)`: x precedes or equals y in the total order."""
    return total_order_key(x) <= total_order_key(y)


# --------------------------------------------------------------------------
# roundToIntegral* (IEEE-754 §5.3.1): exact results, the sign of zero kept
# --------------------------------------------------------------------------

def _to_integral(x: float, rule) -> "Fraction | float":
    """Apply `rule(Fraction) -> int` to a finite nonzero x; NaN, ±inf and ±0
    are returned as they are.  A zero result keeps the operand's sign
    (IEEE-754 §5.3.1: "the sign of a zero result is the sign of the operand"),
    so ceil(-0.5) = -0.0 and roundToIntegralTiesToEven(-0.4) = -0.0."""
    if is_special(x) or x == 0:
        return x
    n = rule(Fraction(x))
    return math.copysign(0.0, x) if n == 0 else Fraction(n)


def _ties_to_even(q: Fraction) -> int:
    return round(q)  # Python's round() of a Fraction breaks ties to even


def _ties_to_away(q: Fraction) -> int:
    n = math.floor(abs(q) + Fraction(1, 2))
    return n if q >= 0 else -n


def roundToIntegralTowardPositive(x: float):
    return _to_integral(x, math.ceil)


def roundToIntegralTowardNegative(x: float):
    return _to_integral(x, math.floor)


def roundToIntegralTowardZero(x: float):
    return _to_integral(x, math.trunc)


def roundToIntegralTiesToEven(x: float):
    return _to_integral(x, _ties_to_even)


def roundToIntegralTiesToAway(x: float):
    return _to_integral(x, _ties_to_away)


# --------------------------------------------------------------------------
# Roots: squareRoot (§5.4.1, correctly rounded) and the recommended rSqrt,
# rootn (§9.2).  Exact roots are returned as Fractions so no precision
# escalation is needed for them; otherwise the real root as an Approx.
# --------------------------------------------------------------------------

def exact_root(q: Fraction, n: int) -> "Fraction | None":
    """The n-th root of a positive rational when it is rational, else None."""
    def iroot(v: int):
        r = _iroot(v, n)
        return r if r ** n == v else None
    a, b = iroot(q.numerator), iroot(q.denominator)
    return None if a is None or b is None else Fraction(a, b)


def _iroot(v: int, n: int) -> int:
    """floor(v ** (1/n)) for an int v >= 1, by Newton's method on integers
    (floats would lose the exactness this test needs for large numerators)."""
    x = 1 << ((v.bit_length() + n - 1) // n)
    while True:
        y = ((n - 1) * x + v // x ** (n - 1)) // n
        if y >= x:
            return x
        x = y


def squareRoot(x: float):
    """IEEE squareRoot: sqrt(±0) = ±0, sqrt(+inf) = +inf, sqrt(x<0) = NaN."""
    from .dsl import Approx
    import mpmath
    if math.isnan(x) or x == 0 or x == math.inf:
        return x
    if x < 0:
        return math.nan
    r = exact_root(Fraction(x), 2)
    return r if r is not None else Approx(mpmath.sqrt, x)


def reciprocal_sqrt(t):
    import mpmath
    return 1 / mpmath.sqrt(t)


def rSqrt(x: float):
    """IEEE rSqrt (§9.2.1): rSqrt(±0) = ±inf, rSqrt(+inf) = +0, rSqrt(x<0) = NaN."""
    from .dsl import Approx
    if math.isnan(x):
        return x
    if x == 0:
        return math.copysign(math.inf, x)
    if x < 0:
        return math.nan
    if x == math.inf:
        return 0.0
    r = exact_root(Fraction(x), 2)
    return 1 / r if r is not None else Approx(reciprocal_sqrt, x)


def real_cbrt(t):
    import mpmath
    return mpmath.cbrt(t) if t >= 0 else -mpmath.cbrt(-t)


def rootn3(x: float):
    """IEEE rootn(x, 3) (§9.2.1): odd n, so defined for negative x;
    rootn(±0, 3) = ±0, rootn(±inf, 3) = ±inf."""
    from .dsl import Approx
    if is_special(x) or x == 0:
        return x
    q = Fraction(x)
    r = exact_root(abs(q), 3)
    if r is not None:
        return r if q > 0 else -r
    return Approx(real_cbrt, x)


# --------------------------------------------------------------------------
# Rounding to a precision (reduce_precision's first step)
# --------------------------------------------------------------------------

def floor_log2(q: Fraction) -> int:
    """floor(log2(q)) of a positive rational, exactly."""
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    elif Fraction(2) ** (e + 1) <= q:
        e += 1
    return e


def round_to_precision(q: Fraction, precision: int, emin: int) -> Fraction:
    """q rounded, ties to even, to `precision` significant bits, never finer
    than the quantum 2^(emin - precision + 1) (the subnormal spacing of a
    format whose smallest normal exponent is `emin`).  No exponent limit above."""
    if q == 0:
        return q
    e = max(floor_log2(abs(q)), emin)
    quantum = Fraction(2) ** (e - precision + 1)
    return _ties_to_even(q / quantum) * quantum
