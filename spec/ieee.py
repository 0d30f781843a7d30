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
