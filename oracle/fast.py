"""Vectorised fast path: decide the correct rounding of most elements of a
whole array at once, from a float64 evaluation with a bounded error.

For a function in real_functions.TABLE and a target format narrower than
float64 (f32, bf16, f16, f8E5M2, f8E4M3FN), numpy computes y ≈ f(x) in
float64.  We take the true value to lie in [y - |y|·E, y + |y|·E] with
E = FAST_REL_ERROR = 2^-40, round both ends into the target format (exact
float64 arithmetic, `round_to_format`) and accept the element when they
agree; the rest go to the rigorous path (rigorous.py) one by one.

The bound E, and why it holds:
* numpy 2.x on x86-64 with AVX-512 evaluates float64 sin, cos, tan, exp,
  expm1, log, log1p, tanh, arctan2, power, cbrt, hypot either with its own
  SIMD kernels ported from Intel SVML, documented as accurate to 4 ULP
  (numpy 1.22 release notes, "Vectorize umath module using AVX-512"), or
  with glibc's libm, whose manual ("Known Maximum Errors in Math Functions")
  lists at most a few ULP for these functions on x86-64.  4 ULP of float64
  is at most 2^-50 relative.  The composed formulas (logistic 1/(1+e^-t),
  sign·x^y, k·π) add at most two float64 roundings of 2^-53 each, and the
  ends y ± |y|·E are themselves rounded (another 2^-53·|y|).
* E = 2^-40 is 2^10 times that: a safety factor, because neither source is
  a proof for every input.  The bound is also *measured*: bench/fast_vs_rigorous.py
  compares this path with the rigorous one on >= 10^6 inputs per function and
  format (exhaustive for 8- and 16-bit unary inputs) and prints the largest
  float64 relative error seen against arb's enclosure; tests/oracle/test_fast.py
  does the same on a smaller sample and fails if any error reaches E/16.
* The relative bound means nothing where float64 itself is not normal, so
  elements whose y is not finite, is zero, or is below 2^-1000 in magnitude
  are never decided here.  Where it holds, y has the true value's sign, so
  an underflow to ±0 or an overflow to ±inf in the target format is decided
  like any value (ends equal, signs equal); f8E4M3FN's overflow (NaN) is
  left to round_bits.

Cost of E: an element is handed on only when y lies within |y|·E of a
rounding boundary of the target format, about 2^-15 of random f32 inputs
(2^-40 against f32's 2^-24 spacing, both sides), fewer for narrower formats.
"""
from __future__ import annotations

import numpy as np

from ..spec.types import F64, FloatFormat
from .real_functions import TABLE

FAST_REL_ERROR = 2.0 ** -40
_TINY = 2.0 ** -1000


def applies(f, fmt: FloatFormat) -> bool:
    return f in TABLE and fmt.precision <= 24 and fmt.emax <= 127 and fmt != F64


def round_to_format(v: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """float64 values rounded (ties to even) to `fmt`'s precision and
    exponent range, as float64: exact, since every step is (frexp, ldexp by
    an in-range power of two, rint on an integer-sized value).  Magnitudes
    past the largest finite become ±inf, which callers treat as undecided."""
    with np.errstate(invalid="ignore", over="ignore"):
        _, e = np.frexp(v)                              # |v| in [2^(e-1), 2^e)
        q = np.maximum(e - 1, fmt.emin)                 # the binade; subnormals share emin's quantum
        shift = (fmt.mantissa_bits - q).astype(np.int64)
        r = np.ldexp(np.rint(np.ldexp(v, shift)), -shift)
        big = np.abs(r) > float(fmt.max_finite)
        r[big] = np.copysign(np.inf, r[big])
    return r


def decide(y: np.ndarray, fmt: FloatFormat) -> tuple[np.ndarray, np.ndarray]:
    """(decided mask, rounded float64 values) for float64 approximations y of
    the true values, each known to within |y|·FAST_REL_ERROR."""
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.abs(y) * FAST_REL_ERROR
        lo, hi = round_to_format(y - d, fmt), round_to_format(y + d, fmt)
        ok = agree(lo, hi, fmt) & np.isfinite(y) & (np.abs(y) >= _TINY)
    return ok, lo


def agree(lo: np.ndarray, hi: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """Where two rounded values are one bit pattern of `fmt`: equal, with the
    same sign (so ±0 differ), and finite unless the format has infinities
    (f8E4M3FN's overflow is NaN, left to round_bits)."""
    same = (lo == hi) & (np.signbit(lo) == np.signbit(hi))
    return same if fmt.has_inf else same & np.isfinite(lo)


def evaluate(f, args: list, fmt: FloatFormat) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised f over argument arrays (float64): (decided mask, rounded
    float64 values, meaningful where decided)."""
    with np.errstate(all="ignore"):
        y = np.asarray(TABLE[f].numpy(*[np.asarray(a, dtype=np.float64) for a in args]), dtype=np.float64)
    return decide(y, fmt)
