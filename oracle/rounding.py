"""Correct rounding (roundTiesToEven) of an exact real into a float format.

The oracle's own rounding, checked in tests against ml_dtypes / numpy casts
rather than borrowed from them: the expected value of every exact op depends
on it, so it must not share a bug with the implementations it judges.

Inputs are exact reals: `Fraction`, `int`, Python `float` (exact binary64; it
also carries ±0, ±inf and NaN), or an mpmath `mpf` (exact binary value of any
precision).  The result is the bit pattern (an int) in `fmt`.

Rules (IEEE 754 §4.3.1 and §7.4, default rounding direction):
* ties to even, subnormals included (gradual underflow);
* a value rounding to zero keeps the sign of the exact value, so a tiny
  negative real becomes -0 (+0 in a format without negative zero: FNUZ);
* overflow: |x| >= max_finite + ulp/2 becomes the format's
  `overflow_bits` — ±inf where it has infinities (the tie at that point
  rounds to the "even" 2^(emax+1), i.e. inf), NaN where it has none (f8E4M3FN:
  the OCP FN convention and what ml_dtypes' cast does).  A value between
  max_finite and the midpoint still rounds to ±max_finite.
* NaN → the format's canonical quiet NaN (payloads are not an exact real).
* A format with no NaN (f4E2M1FN, f6E2M3FN, f6E3M2FN) saturates: an
  overflow and ±inf become ±max_finite (`overflow_bits`; RFC
  20241001-microscaling-formats: "infinities are clamped to the minimum or
  maximum value, depending on the sign", which ml_dtypes' casts and
  XLA:CPU's convert do for finite overflows too).  A NaN has no pattern
  there ("Conversion from NaN is undefined", same RFC): ValueError — the
  op's answer is for the caller to state (oracle/elementwise.py).
* A format without a zero or a sign (f8E8M0FNU: 2^-127 … 2^127 and NaN)
  rounds a positive value below its smallest one up to 2^-127 (the nearest
  value it has; no zero to underflow to), and makes NaN of a zero, a
  negative value, ±inf and an overflow: the values it cannot hold, as
  ml_dtypes' cast and XLA:CPU's convert give them (measured in
  tests/spec/test_v120_formats.py).  With no mantissa bit the "even"
  neighbour of a tie is the one above (both significands are 1, odd, so
  APFloat and ml_dtypes round away from zero: 1.5 → 2, 3 → 4), which
  ties-to-even on the count of quanta below gives by itself.

Every fact of the format (its largest finite pattern, its ±0, what an
overflow becomes) is asked of the FloatFormat (spec/types.py): a format
declared there is rounded here with no edit.
"""
from __future__ import annotations

import math
from fractions import Fraction

from ..spec.types import FloatFormat, top_ordinal


def _ratio(x, fmt: FloatFormat) -> tuple[bool, int, int] | float:
    """(negative, numerator >= 0, denominator > 0) of a finite exact real, or
    the float itself for the specials (NaN, ±inf, ±0.0 as floats).  An mpf
    far outside `fmt`'s range (exp(1e22) …) is mapped to ±inf / ±0.0 first,
    so its exact integer is never built."""
    if isinstance(x, float):
        if x == 0 or math.isnan(x) or math.isinf(x):
            return x
        n, d = x.as_integer_ratio()
    elif isinstance(x, Fraction):
        n, d = x.numerator, x.denominator
    elif isinstance(x, int):  # bool included
        n, d = int(x), 1
    else:  # mpmath mpf
        import mpmath
        if mpmath.isnan(x) or mpmath.isinf(x):
            return float(x)
        sign, man, exp, bc = x._mpf_  # exact (sign, mantissa, exponent, bitcount)
        man, exp = int(man), int(exp)
        if man:
            top = exp + int(bc)  # 2^(top-1) <= |x| < 2^top
            if top - 1 > fmt.emax + 1:  # |x| >= 2^(emax+2): beyond every overflow threshold
                return -math.inf if sign else math.inf
            if top < fmt.emin - fmt.mantissa_bits - 1:  # below half the smallest subnormal
                if fmt.has_zero:
                    return -0.0 if sign else 0.0
                # no zero (f8E8M0FNU): a stand-in as far below, whose rounding is the smallest value
                # (or NaN, negative): the format's rule, not zero's
                return bool(sign), 1, 1 << (fmt.mantissa_bits + 2 - fmt.emin)
        if sign:
            man = -man
        n, d = (man << exp, 1) if exp >= 0 else (man, 1 << -exp)
    if n == 0:
        return 0.0  # an exact zero without sign information (Fraction 0, int 0, mpf 0)
    return (n < 0, abs(n), d)


def round_bits(x, fmt: FloatFormat) -> int:
    """Bit pattern of the exact real `x` correctly rounded (ties to even) into `fmt`."""
    r = _ratio(x, fmt)
    if isinstance(r, float):
        if math.isnan(r):
            return fmt.nan_bits()
        if math.isinf(r):   # no infinity in the format: the canonical NaN (an overflow of a finite value keeps its sign)
            if not fmt.signed and r < 0:
                return fmt.nan_bits()
            return fmt.inf_bits(r < 0) if fmt.has_inf else fmt.nan_bits() if fmt.has_nan else fmt.overflow_bits(r < 0)
        if not fmt.has_zero:   # f8E8M0FNU: no zero to give (module docstring)
            return fmt.nan_bits()
        return fmt.zero_bits(math.copysign(1.0, r) < 0)  # ±0
    neg, n, d = r
    if neg and not fmt.signed:   # no negative values in the format (module docstring)
        return fmt.nan_bits()
    mag = _round_magnitude(n, d, fmt)
    if mag is None:
        return fmt.overflow_bits(neg)
    if mag == 0 and fmt.has_zero:   # (without a zero, pattern 0 is the smallest value)
        return fmt.zero_bits(neg)
    return (fmt.sign_mask if neg else 0) | mag


def _round_magnitude(n: int, d: int, fmt: FloatFormat) -> int:
    """Bits of the magnitude n/d > 0 rounded into fmt (sign bit clear), or
    None past the largest finite value (an overflow)."""
    m = fmt.mantissa_bits
    # e = floor(log2(n/d)), exactly, from bit lengths.
    e = n.bit_length() - d.bit_length()
    if (n << max(0, -e)) < (d << max(0, e)):
        e -= 1
    q = max(e, fmt.emin)  # exponent of the quantum's binade (subnormals: emin)
    shift = m - q  # the quantum is 2^(q - m); count n/d in quanta
    num, den = (n << shift, d) if shift >= 0 else (n, d << -shift)
    k, rem = divmod(num, den)
    if 2 * rem > den or (2 * rem == den and k & 1):
        k += 1
    # One formula for subnormal and normal results: the pattern counts quanta
    # from zero, binade by binade; a carry into the next binade is automatic.
    # (A format without zero and subnormals starts at 1.0·2^emin, pattern 0;
    # a value that rounds below it, to "no quanta", takes that smallest value.)
    bits = ((q - fmt.emin) << m) + k - (0 if fmt.has_subnormals else 1 << m)
    if not fmt.has_zero:
        bits = max(bits, 0)
    return None if bits > fmt.max_finite_bits else bits


def round_value(x, fmt: FloatFormat):
    """The exact value of `x` rounded into `fmt`: a Fraction for finite
    nonzero results, else a float (±0, ±inf, NaN).  Used for `RoundTo`
    into formats that are not element types (reduce_precision's)."""
    return fmt.decode(round_bits(x, fmt))


def round_directed(x, fmt: FloatFormat, up: bool) -> int:
    """Bit pattern of the exact real `x` rounded toward +inf (`up`) or -inf:
    the ends of a `Range` (an accumulation's bound) in the format.  ±inf and
    NaN stay as they are; a format without infinities never steps past its
    largest finite value (a bound that reached it was refused earlier)."""
    b = round_bits(x, fmt)
    if isinstance(x, float) and not math.isfinite(x):
        return b
    if not fmt.signed and not x > 0:   # f8E8M0FNU: the smallest value bounds it above; nothing below
        return 0 if up else fmt.nan_bits()
    v = fmt.decode(b)
    if isinstance(v, float) and math.isnan(v):   # f8E4M3FN overflow: the largest finite of that sign
        return (fmt.sign_mask if x < 0 else 0) | fmt.max_finite_bits
    if (up and v < x) or (not up and v > x):
        if not up and b == 0 and not fmt.has_zero:   # below the smallest value: no lower bound in the format
            return fmt.nan_bits()
        b = _step(b, fmt, 1 if up else -1)
    return b


def _step(b: int, fmt: FloatFormat, direction: int) -> int:
    """The neighbouring pattern in the format's order (±0 are one point)."""
    o = fmt.ordinal(b) + direction
    top = top_ordinal(fmt)
    o = max(-top if fmt.signed else 0, min(top, o))
    return (fmt.sign_mask | -o) if o < 0 else o


def outward_bits(x, et, down: bool):
    """float64 values rounded into the element type's format toward −∞
    (`down`) or +∞, as bits (`to_bits` layout, x's shape): the ends of an
    enclosure computed in float64 (affine forms, chains of factors), moved
    one step outward wherever numpy's cast rounded them inward."""
    import numpy as np

    from ..spec.types import to_bits
    v = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore"):
        r = v.astype(et.numpy)
    back = r.astype(np.float64)
    step = back > v if down else back < v
    if np.any(step):
        r = r.copy()
        r[step] = np.nextafter(r[step], r.dtype.type(-np.inf if down else np.inf))
    return to_bits(r, et)
