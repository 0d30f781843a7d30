"""Values known to be hard, by family — what op modules name in their `Exercise`.

A float family is `(element type, operand index) -> array` of values of
that type: arguments where implementations are known to go wrong (sin/cos/tan
near multiples of π/2 and at huge arguments, exp near overflow and
underflow, log near 1, log1p/expm1 near 0, halfway points for the
roundings, …).  They are added to the format's special values
(generators/values.py).  An integer family returns the values that matter
for an operand, or None where it has no opinion (shift amounts).
Families are exact: reals are rounded into the format once, from exact
binary64 or 200-bit mpmath values; values that overflow or vanish in the
format are dropped (the format's specials cover them).
"""
from __future__ import annotations

import math

import mpmath
import numpy as np

from .types import ElementType, from_bits


def round_into(et: ElementType, xs) -> np.ndarray:
    """Exact reals (floats) → the format (round to nearest); values that
    overflow or vanish are dropped (they are covered by the specials)."""
    a = np.array([float(x) for x in xs], dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        v = a.astype(et.numpy)
    ok = np.isfinite(v.astype(np.float64)) & np.isfinite(a)
    return v[ok]


def neighbours(et: ElementType, xs, k: int = 2) -> np.ndarray:
    """xs rounded into the format, plus their k nearest neighbours each side."""
    v = round_into(et, xs)
    if v.size == 0:
        return v
    bits = v.view(et.bits_dtype).astype(np.int64)
    f = et.format
    out = []
    for b in bits:
        for d in range(-k, k + 1):
            mag = (int(b) & ~f.sign_mask) + d
            if 0 <= mag <= (f.exponent_mask | f.mantissa_mask):
                out.append((int(b) & f.sign_mask) | mag)
    v = from_bits(np.array(out, dtype=np.uint64), et)
    return v[np.isfinite(v.astype(np.float64))]


# --------------------------------------------------------------------------
# Hard float arguments, by family
# --------------------------------------------------------------------------

def near_multiples_of_half_pi(et: ElementType, operand: int) -> np.ndarray:
    """Sine, cosine, tangent: next to k·π/2 (argument reduction loses digits there), huge arguments, the largest finite."""
    f = et.format
    big = float(f.max_finite)
    ks = [1, 2, 3, 4, 5, 7, 11, 100, 1000, 10**4, 10**6, 10**9, 10**15, 10**22]
    with mpmath.workprec(200):
        xs = [float(mpmath.mpf(k) * mpmath.pi / 2) for k in ks if k * 1.6 < big]
    extra = round_into(et, [big, -big, 2.0 ** min(f.emax, 1023), 1e22, 2 ** 20 * math.pi])
    return np.concatenate([neighbours(et, xs + [-x for x in xs], 1), extra])


def exp_edges(et: ElementType, operand: int) -> np.ndarray:
    """Exponentials: next to the overflow and underflow thresholds (normal and subnormal), tiny arguments."""
    f = et.format
    lmax = math.log(float(f.max_finite))
    lmin_n = math.log(float(f.min_normal))
    lmin_s = math.log(float(f.min_subnormal))
    tiny = [2.0 ** -e for e in (5, 10, 20, 30, 60) if 2.0 ** -e >= float(f.min_subnormal)]
    return np.concatenate([neighbours(et, [lmax, lmin_n, lmin_s], 2),
                           round_into(et, tiny + [-t for t in tiny])])


def near_one(et: ElementType, operand: int) -> np.ndarray:
    """Logarithm: next to 1 (the result cancels to 0), and a few exact points."""
    return np.concatenate([neighbours(et, [1.0], 3), round_into(et, [2.0, 0.5, -1.0, math.e, 10.0])])


def log1p_edges(et: ElementType, operand: int) -> np.ndarray:
    """log(1 + x): next to -1 (the pole), tiny arguments of both signs."""
    f = et.format
    tiny = [2.0 ** -e for e in (4, 8, 12, 24, 53) if 2.0 ** -e >= float(f.min_subnormal)]
    return np.concatenate([neighbours(et, [-1.0], 2), round_into(et, tiny + [-t for t in tiny])])


def saturation_edges(et: ElementType, operand: int) -> np.ndarray:
    """Logistic and tanh: tiny arguments, and where the result saturates."""
    tiny = [2.0 ** -e for e in (8, 20, 40)]
    big = [5.0, 10.0, 20.0, 40.0, 89.0, 710.0]
    return round_into(et, tiny + [-t for t in tiny] + big + [-b for b in big])


def roots(et: ElementType, operand: int) -> np.ndarray:
    """Roots: perfect squares and cubes, negatives, a tiny argument."""
    return round_into(et, [4.0, 9.0, 0.25, 2.0, -4.0, -1e-3, 27.0, -8.0, 1e-30])


def halfway_points(et: ElementType, operand: int) -> np.ndarray:
    """Roundings and conversions: halfway points, 2^(p-1) - 1/2, the first integers a format cannot hold."""
    f = et.format
    halves = [0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, 0.49999997, 2.0 ** (f.precision - 1) - 0.5,
              2.0 ** f.precision, 2.0 ** (f.precision - 1) + 1]
    return np.concatenate([round_into(et, halves), neighbours(et, [0.5, -0.5], 1)])


def reduced_range_edges(et: ElementType, operand: int) -> np.ndarray:
    """reduce_precision: for each narrower exponent width, values in the
    binade just below its normal range (rounding them at their own binade
    keeps them there and step 3 flushes them; a subnormal-like spacing
    would carry some up to the smallest normal) and at the top of its range
    (rounding carries 1.11…1 into the overflow)."""
    f = et.format
    xs = []
    for e_bits in range(2, min(f.exponent_bits, 9)):
        bias = (1 << (e_bits - 1)) - 1
        low = 2.0 ** (-bias)                 # 2^(emin_r - 1): the binade below the reduced normals
        xs += [1.5 * low, -1.75 * low, (2 - 2.0 ** -6) * low, 1.96875 * 2.0 ** bias]
    return round_into(et, xs)


def power_arguments(et: ElementType, operand: int) -> np.ndarray:
    """Power: bases (operand 0) and exponents (operand 1) whose results are exact, odd, negative or huge."""
    if operand == 0:
        return round_into(et, [-1.0, 0.5, 2.0, -2.0, 10.0, -0.5])
    return round_into(et, [0.5, 2.0, 3.0, -1.0, -2.0, -3.0, 0.0, 1e10, -1e10, 1.5])


def quotient_arguments(et: ElementType, operand: int) -> np.ndarray:
    """Quotients: divisions that do not terminate in binary, tiny and huge divisors."""
    return round_into(et, [3.0, -3.0, 0.1, 7.0, 1e-10, 1e10])


# --------------------------------------------------------------------------
# Integer families
# --------------------------------------------------------------------------

def shift_amounts(et: ElementType, operand: int) -> list[int] | None:
    """The shift amount (operand 1): every amount 0..width, just past it, twice
    it, the type's extremes and -1 — where "shifted out" and "amount modulo
    width" readings part."""
    if operand != 1:
        return None
    vals = list(range(0, et.bits + 1)) + [et.bits + 1, 2 * et.bits, et.max_value, et.min_value]
    if et.is_signed:
        vals += [-1]
    return vals
