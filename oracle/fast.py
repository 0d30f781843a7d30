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

# f64 results: the same scheme one format wider, in x87 80-bit long double
# (64-bit significand), where numpy's long double loops call glibc's sinl,
# expl … (no SIMD).  glibc's manual lists at most a few ULP for these
# functions in that format too; E_LD = 2^-58 is 32 ULP of it, a safety
# factor of about 10 (smaller than float64's, because float64's rounding
# must still be decided from 64 bits), and it is measured the same way.
LD_REL_ERROR = 2.0 ** -58
_LD_OK = np.finfo(np.longdouble).nmant >= 63
_LD_TINY = np.ldexp(np.longdouble(1), -16300) if _LD_OK else None


def working(fmt: FloatFormat):
    """(numpy dtype, relative error bound, smallest trusted magnitude) of the
    evaluation for results in `fmt`, or None where no wider format serves."""
    if fmt.precision <= 24 and fmt.emax <= 127:
        return np.float64, FAST_REL_ERROR, _TINY
    if fmt == F64 and _LD_OK:
        return np.longdouble, LD_REL_ERROR, _LD_TINY
    return None


def applies(f, fmt: FloatFormat) -> bool:
    return f in TABLE and working(fmt) is not None


def round_to_format(v: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """float64 (or long double) values rounded (ties to even) to `fmt`'s
    precision and exponent range, in the same dtype: exact, since every step is (frexp, ldexp by
    an in-range power of two, rint on an integer-sized value).  Magnitudes
    past the largest finite become ±inf (f8E4M3FN's NaN: `agree` refuses it)."""
    with np.errstate(invalid="ignore", over="ignore"):
        _, e = np.frexp(v)                              # |v| in [2^(e-1), 2^e)
        q = np.maximum(e - 1, fmt.emin)                 # the binade; subnormals share emin's quantum
        shift = (fmt.mantissa_bits - q).astype(np.int64)
        r = np.ldexp(np.rint(np.ldexp(v, shift)), -shift)
        big = np.abs(r) > float(fmt.max_finite)
        r[big] = np.copysign(np.inf, r[big])
    return r


def decide(y: np.ndarray, fmt: FloatFormat) -> tuple[np.ndarray, np.ndarray]:
    """(decided mask, rounded values) for approximations y (in the working
    dtype of `fmt`) of the true values, each known to within |y|·bound."""
    _, bound, tiny = working(fmt)
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.abs(y) * bound
        lo, hi = round_to_format(y - d, fmt), round_to_format(y + d, fmt)
        ok = agree(lo, hi, fmt) & np.isfinite(y) & (np.abs(y) >= tiny)
    return ok, lo


def agree(lo: np.ndarray, hi: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """Where two rounded values are one bit pattern of `fmt`: equal, with the
    same sign (so ±0 differ), and finite unless the format has infinities
    (f8E4M3FN's overflow is NaN, left to round_bits)."""
    same = (lo == hi) & (np.signbit(lo) == np.signbit(hi))
    return same if fmt.has_inf else same & np.isfinite(lo)


def evaluate(f, args: list, fmt: FloatFormat) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised f over argument arrays: (decided mask, rounded values,
    meaningful where decided, exactly representable in `fmt`)."""
    dtype = working(fmt)[0]
    with np.errstate(all="ignore"):
        y = np.asarray(TABLE[f].numpy(*[np.asarray(a, dtype=dtype) for a in args]), dtype=dtype)
    return decide(y, fmt)


# --------------------------------------------------------------------------
# IEEE basic operations (+ - * / sqrt): the hardware rounds them correctly
# --------------------------------------------------------------------------

def ieee_applies(fmt: FloatFormat) -> bool:
    return fmt.precision <= 24 or fmt == F64


def _min_normal(fmt: FloatFormat) -> float:
    """The smallest magnitude trusted on the way in and out: the format's
    smallest normal, and float32's for the narrow formats that numpy and
    ml_dtypes compute in float32 — so a flush-to-zero or denormals-are-zero
    mode of the FPU could never change a result accepted here."""
    return max(2.0 ** fmt.emin, 2.0 ** -126 if fmt.precision < 24 else 0.0)


def ieee(ufunc, operands: list, et, exact: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(accepted mask, results in et's numpy dtype) of an IEEE basic
    operation on operand arrays of that dtype.  f32 and f64 are computed in
    their own format; bf16, f16 and the f8 types by numpy / ml_dtypes in
    float32 and rounded once more, which is innocuous for + - * / because
    float32's 24 bits are at least 2p + 2 for p <= 11 (and sqrt, which needs
    2p + 2 as well) (Figueroa, "When is double rounding innocuous?", 1995).  Accepted: operands zero or normal,
    results normal and finite (zero results, where the sign rule applies,
    overflow and f8E4M3FN's NaN are left to the op's fn) — and, for an
    `exact` operation (one that never rounds: ceil, abs, fmod …), zero
    results too, whose sign numpy takes from IEEE's rule as the fn does."""
    fmt = et.format
    tiny = _min_normal(fmt)
    with np.errstate(all="ignore"):
        r = ufunc(*operands)
        ok = np.ones(r.shape, dtype=bool)
        for a in operands:
            a = np.asarray(a, dtype=np.float64)
            ok &= np.isfinite(a) & ((a == 0) | (np.abs(a) >= tiny))
        r64 = r.astype(np.float64)
        normal = (np.abs(r64) >= 2.0 ** fmt.emin) & (np.abs(r64) >= tiny)
        ok &= np.isfinite(r64) & (normal | (exact & (r64 == 0)))
    return ok, r


# --------------------------------------------------------------------------
# Integer operations: numpy's fixed-width integers wrap as the spec's do
# --------------------------------------------------------------------------

def native_integer(et) -> bool:
    """An integer type numpy holds natively (i1 as bool, 8 to 64 bits);
    the 2- and 4-bit types are ml_dtypes', whose arithmetic is not numpy's."""
    if not et.is_integer:
        return False
    dt = np.dtype(et.numpy)
    return dt.kind == "b" or (dt.kind in "iu" and dt.itemsize * 8 == et.bits)


def integer(fn, operands: list, et):
    """(results, declined mask) of fn on whole integer arrays; the declined
    elements (an overflow, which the spec leaves implementation-defined:
    `dsl.checked`) are for the op's fn.  None where numpy refuses the type
    (subtract on bool): the per-element route states the whole result."""
    try:
        with np.errstate(all="ignore"):
            r = fn(*operands)
    except TypeError:
        return None
    r, declined = r if isinstance(r, tuple) else (r, None)
    r = np.asarray(r)
    if r.dtype != np.dtype(et.numpy):
        return None
    return r, (np.zeros(r.shape, dtype=bool) if declined is None else np.asarray(declined, dtype=bool))
