"""Argument points where special-function evaluations go wrong, shared by
the CHLO tests (test_chlo_fast.py, test_chlo_long_double_*.py): a value's
float64 neighbours, points closing in on it, zeros found by mpmath (never
taken from the code under test)."""
from __future__ import annotations

import math

import mpmath


def steps(a: float, n: int = 3) -> list:
    """a and its n float64 neighbours on each side."""
    out, lo, hi = [a], a, a
    for _ in range(n):
        lo, hi = math.nextafter(lo, -math.inf), math.nextafter(hi, math.inf)
        out += [lo, hi]
    return out


def approaching(a: float, first: int = 1) -> list:
    """a ± 2^-j (j = first … 52) and a's neighbours."""
    return [a + s * 2.0 ** -j for j in range(first, 53) for s in (1, -1)] + steps(a)


def zeros(g, brackets) -> list:
    """The zeros of g in the brackets, by mpmath's findroot at 30 digits."""
    with mpmath.workdps(30):
        return [float(mpmath.findroot(g, b, solver="anderson")) for b in brackets]


def log_abs_gamma(t):
    return mpmath.log(abs(mpmath.gamma(t)))
