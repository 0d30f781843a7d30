"""Vectorised fast path: decide the correct rounding of most elements of a
whole array at once, from a float64 evaluation with a bounded error.

For a function in real_functions.TABLE and a target format narrower than
float64 (f32, bf16, f16, f8E5M2, f8E4M3FN), numpy computes y ≈ f(x) in
float64.  We take the true value to lie in [y - |y|·E, y + |y|·E] with
E = FAST_REL_ERROR = 2^-40, round both ends into the target format
(`round_fast`: one cast or integer rounding, equal to the exact reference
`round_to_format`) and accept the element when they agree; the rest go to
the rigorous path (rigorous.py) one by one.  For f64 results the same runs
in long double, and the elements it leaves go to MPFR (gmpy2), which rounds
correctly by contract, where the function has an MPFR form
(`mpfr_correct`), before arb.  For f64 results of exp, expm1, log, log1p,
sin, cos and tanh a double-double pass in float64 with its own proven
bound (ddfast.py) comes first and leaves the long double pass about 1
element in 1000.

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
  are not decided by it.  Where it holds, y has the true value's sign, so
  an underflow to ±0 or an overflow to ±inf in the target format is decided
  like any value (ends equal, signs equal); f8E4M3FN's overflow (NaN) is
  left to round_bits.
* Beyond the working format's range: y = ±inf means the function overflowed
  float64 (the same sources state their error on results in range, so a
  true value below 2^1024·(1 − 2^-40) comes out finite) — the true value
  is past every target format's largest finite value and rounds to ±inf,
  y's sign; 0 < |y| < 2^-1000 or y = ±0 means it underflowed (a few ULP of
  2^-1074 from the true value, or an exact zero of C99 Annex F's sign) —
  the true value is far below half the target's smallest subnormal and
  rounds to the zero of y's sign.  Only where every argument is finite and
  nonzero: a zero or infinite argument's result is a special value the
  op's module states (sin(-0) = -0 is the module's, not numpy's, to say).
  So exp, expm1, logistic, power and the rest decide their overflowing and underflowing arguments here, not one by
  one in the rigorous path (tests/oracle/test_fast.py holds every decision
  against arb; for f64 results the same holds one format up, in long
  double).  NaN y is never decided.

Cost of E: an element is handed on only when y lies within |y|·E of a
rounding boundary of the target format, about 2^-15 of random f32 inputs
(2^-40 against f32's 2^-24 spacing, both sides), fewer for narrower formats.
"""
from __future__ import annotations

import numpy as np

from ..spec.types import F16, F32, F64, FloatFormat, long_double_exact
from . import chlo_dd, ddfast
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
    if fmt == F64 and _LD_OK and long_double_exact():   # 64 bits in effect now (spec.types)
        return np.longdouble, LD_REL_ERROR, _LD_TINY
    return None


def working_for(f, fmt: FloatFormat):
    """`working(fmt)` where f's vectorised evaluation serves it: none for a
    function without one, and none for f64 results of one that keeps its
    bound in float64 only and has no long double evaluation of its own
    (real_functions.RealFunction.numpy_for)."""
    rf, w = TABLE.get(f), working(fmt)
    if rf is None or w is None or rf.numpy_for(w[0]) is None:
        return None
    return w


def applies(f, fmt: FloatFormat) -> bool:
    """Does the whole-array route serve f into `fmt`: a vectorised
    evaluation with its bound, or — f64 results — the double-double pass
    (ddfast.py) or MPFR's correct rounding."""
    return f in TABLE and (working_for(f, fmt) is not None
                           or (fmt == F64 and (TABLE[f].mpfr is not None or TABLE[f].name in ddfast.KERNELS)))


def round_to_format(v: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """float64 (or long double) values rounded (ties to even) to `fmt`'s
    precision and exponent range, in the same dtype: exact, since every step is (frexp, ldexp by
    an in-range power of two, rint on an integer-sized value).  Magnitudes
    past the largest finite become ±inf (f8E4M3FN's NaN: `agree` refuses it),
    or ±max_finite in a format without NaN; the other facts of the format
    as `_within_format` applies them."""
    with np.errstate(invalid="ignore", over="ignore"):
        _, e = np.frexp(v)                              # |v| in [2^(e-1), 2^e)
        q = np.maximum(e - 1, fmt.emin)                 # the binade; subnormals share emin's quantum
        shift = (fmt.mantissa_bits - q).astype(np.int64)
        r = np.ldexp(np.rint(np.ldexp(v, shift)), -shift)
        big = np.abs(r) > float(fmt.max_finite)
        r[big] = np.copysign(np.inf, r[big])
    return _within_format(r, v, fmt)


def _within_format(r: np.ndarray, v: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """Rounded values `r` of `v` made what `rounding.round_bits` gives in a
    format that lacks something IEEE formats have — read from its
    declaration, so the seed's formats pass through unchanged:
    * no NaN (f4E2M1FN, f6E2M3FN, f6E3M2FN): an overflow saturates at
      ±max_finite (`FloatFormat.overflow_bits`);
    * no negative zero (FNUZ, whose pattern of -0 is NaN): a negative value
      rounding to zero is +0, never 1.000…0;
    * no zero (f8E8M0FNU): a positive value below the smallest one is that
      smallest value; zero itself is NaN;
    * no sign (f8E8M0FNU): a negative value is NaN.
    NaN stands for "the format's NaN", which `agree` never accepts (the
    elements go to round_bits)."""
    if fmt.has_nan and fmt.has_negative_zero and fmt.has_zero and fmt.signed:
        return r
    with np.errstate(invalid="ignore"):
        if not fmt.has_nan:
            big = np.isinf(r)
            r[big] = np.copysign(float(fmt.max_finite), r[big])
        if not fmt.has_negative_zero:
            r[r == 0] = 0.0
        if not fmt.has_zero:
            r[(r == 0) & (v > 0)] = float(fmt.min_normal)
            r[v == 0] = np.nan
        if not fmt.signed:
            r[v < 0] = np.nan
    return r


_CAST = {F32: np.float32, F16: np.float16, F64: np.float64}   # the formats whose numpy cast rounds once


def round_fast(v: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """round_to_format's values as float64 (v in working(fmt)'s dtype:
    float64, or long double for f64), by one cast or a few integer
    operations instead of its frexp/ldexp/rint: the same single RNE
    rounding, shown equal on every midpoint of the 8- and 16-bit formats
    ± 2 ulp and on samples of f32's and f64's in
    tests/oracle/test_round_fast.py, with round_to_format as the reference.
    * f32, f16 from float64, f64 from long double: numpy's casts round once
      (f16: below its normal range by `_round_f16`, where the cast is slow),
      to nearest even, subnormals and overflow included (the C conversions
      for float and double, numpy's own npy_double_to_half for half).
    * bf16 and the f8 formats: ml_dtypes converts float64 through float32 —
      two roundings, wrong for values within half a float32 ulp of a
      midpoint — so their rounding is done here: to nearest even at p bits on the
      float64 bit pattern (a carry into the exponent is the right result),
      and below the format's smallest normal by adding and subtracting a
      power of two whose float64 quantum is the format's subnormal quantum
      (one hardware rounding to nearest even).
    Magnitudes past the largest finite become ±inf, as in round_to_format."""
    if fmt == F16 and v.dtype == np.float64:
        return _round_f16(v)
    target = _CAST.get(fmt)
    if target is not None:
        with np.errstate(over="ignore", invalid="ignore"):
            return v.astype(target).astype(np.float64, copy=False)
    v = np.asarray(v, dtype=np.float64)
    a = np.abs(v)
    s = np.uint64(52 - fmt.mantissa_bits)
    b = a.view(np.uint64)
    # The last kept significand bit, which a tie rounds to even: float64's bit s;
    # with no stored mantissa bit (f8E8M0FNU), the hidden 1 — odd either way,
    # so a tie rounds up (rounding.py's module docstring).
    lsb = (b >> s) & np.uint64(1) if fmt.mantissa_bits else np.uint64(1)
    with np.errstate(over="ignore", invalid="ignore"):
        r = ((b + ((np.uint64(1) << (s - np.uint64(1))) - np.uint64(1)) + lsb) >> s << s).view(np.float64)
        sub = a < 2.0 ** fmt.emin
        if sub.any():
            c = 2.0 ** (fmt.emin - fmt.mantissa_bits + 52)
            r[sub] = (a[sub] + c) - c
        r[r > float(fmt.max_finite)] = np.inf
        r[np.isnan(a)] = np.nan
    return _within_format(np.copysign(r, v), v, fmt)


_F16_MIN_NORMAL = 2.0 ** -14
_F16_MAX = 65504.0         # the largest finite f16
_F16_OVERFLOW = 65520.0    # the midpoint of 65504 (odd last bit) and 2^16: it and above round to inf
_F16_SUB = 2.0 ** 28       # float64's quantum at 2^28 is 2^-24, f16's subnormal quantum


def _round_f16(v: np.ndarray) -> np.ndarray:
    """round_fast for f16 from float64, branch-free: numpy's cast
    (npy_double_to_half) of |v| clipped to [2^-14, 65504] — one RNE
    rounding to a normal f16 — and inf from 65520 on (the midpoint of the
    largest finite 65504, whose last bit is odd, and 2^16: ties go up;
    below it, 65504 is the rounding), put in after the cast, because that
    cast costs 58 ns an element wherever it underflows, gives a subnormal
    or overflows (it sets the FPU's status flag element by element; 1.5 ns
    elsewhere; numpy 2.4, 2^20 elements: zeta's f16 results overflow on a
    tenth of the bench's arguments, and the cast was a third of its time) — and below 2^-14
    (min(|v|, 2^-14) + 2^28) - 2^28, one hardware RNE rounding onto 2^-24's
    multiples, f16's subnormal grid (zero and underflow included).  The
    two are joined exactly: t + (u - 2^-14), u - 2^-14 exact (multiples of
    2^-24 at most 2^-14) and 0 where |v| >= 2^-14; where |v| < 2^-14,
    t = 2^-14 and the sum is u (exact: 2^-14 + (u - 2^-14) = u, at most 11
    bits).  NaN stays NaN; the sign is copied back.  The same values as
    round_to_format (tests/oracle/test_round_fast.py: every f16 value,
    midpoint and their float64 neighbours, overflow and the subnormals)."""
    with np.errstate(over="ignore", invalid="ignore"):
        a = np.abs(v)
        t = np.clip(a, _F16_MIN_NORMAL, _F16_MAX).astype(np.float16).astype(np.float64)
        np.putmask(t, a >= _F16_OVERFLOW, np.inf)
        u = np.minimum(a, _F16_MIN_NORMAL)
        u += _F16_SUB
        u -= _F16_SUB
        u -= _F16_MIN_NORMAL
        t += u
        return np.copysign(t, v, out=t)


def bound_for(f, fmt: FloatFormat) -> float:
    """The relative error bound of f's vectorised evaluation for results in
    `fmt`: the working format's, or the tighter one a long double kernel of
    CHLO's declares (oracle/chlo_long_double/, measured like the rest)."""
    w = working(fmt)
    rf = TABLE[f]
    if w[0] is np.longdouble and not rf.long_double and rf.long_double_rel_error:
        return min(w[1], rf.long_double_rel_error)
    return w[1]


def decide(y: np.ndarray, fmt: FloatFormat, args: list | None = None,
           bound: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(decided mask, rounded values as float64) for approximations y (in
    the working dtype of `fmt`) of the true values, each known to within
    |y|·bound.  Both ends keep y's sign wherever y is trusted (|y| >= tiny),
    so the ends' equality decides and ±0 ends cannot meet.  Given the
    arguments, also where the working format overflowed or underflowed and
    every argument is finite and nonzero (module docstring: those zeros
    and infinities are the rounding of a nonzero true value, not a special
    value the op's module states).  `bound`: the evaluation's own, where it
    is not the working format's (`bound_for`)."""
    _, default, tiny = working(fmt)
    bound = default if bound is None else bound
    with np.errstate(invalid="ignore", over="ignore"):
        a = np.abs(y)
        trusted = a >= tiny
        trusted &= a < np.inf
        # the working format overflowed or underflowed (module docstring), for finite nonzero arguments
        beyond = ~trusted & ~np.isnan(y) & (args is not None)
        for arg in args or ():
            beyond &= np.isfinite(arg) & (np.asarray(arg) != 0)
        # |y| times a power of two: exact, except below float64's smallest
        # normal (|y| < 2^-982), where it is within 2^-35 of itself — far
        # inside the bound's safety factor
        d = np.multiply(a, bound, out=a)
        lo = round_fast(y - d, fmt)
        hi = round_fast(np.add(y, d, out=d), fmt)
        ok = agree(lo, hi, fmt)
        ok &= trusted
        if beyond.any():
            over = beyond & np.isinf(y)
            zero = np.copysign(0.0, y) if fmt.has_negative_zero else np.zeros_like(y)   # FNUZ: +0 only
            lo = np.where(beyond, np.where(over, y, zero).astype(lo.dtype), lo)
            take = beyond
            if not fmt.has_inf:    # f8E4M3FN's overflow is NaN, f4E2M1FN's the largest finite: round_bits
                take = take & ~over
            if not (fmt.has_zero and fmt.signed):   # f8E8M0FNU's underflow is 2^-127 or NaN: round_bits
                take = take & over
            ok |= take
    return ok, lo


def agree(lo: np.ndarray, hi: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """Where two rounded values are one bit pattern of `fmt`: equal, with the
    same sign (so ±0 differ), and finite unless the format has infinities
    (f8E4M3FN's overflow is NaN, left to round_bits)."""
    same = (lo == hi) & (np.signbit(lo) == np.signbit(hi))
    return same if fmt.has_inf else same & np.isfinite(lo)


def defers(f, fmt: FloatFormat) -> bool:
    """Whether evaluate(…, defer=True) may leave elements for a later call:
    f has cheaper stages for `fmt` (RealFunction.narrow, `_staged`), whose
    leftovers a caller passing over an array chunk by chunk gathers and
    finishes in one call (elementwise._run_generic: the numpy route's dozens
    of calls cost 0.1 ms a chunk, whatever it is given — a tenth of f32
    lgamma's time over negative arguments, stop 54)."""
    w = working_for(f, fmt)
    return w is not None and w[0] is np.float64 and TABLE[f].narrow is not None


def evaluate(f, args: list, fmt: FloatFormat, defer: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised f over argument arrays: (decided mask, rounded values as
    float64, meaningful where decided, exactly representable in `fmt`).
    For f64 results of exp, expm1, log, log1p, sin, cos and tanh, a
    double-double pass decides all but 1 in 1000 or so (ddfast.py, with its
    own proven bound); the rest, and the other functions, take the long
    double pass, and the elements it leaves (1 in 20 or so) are rounded by
    MPFR where f has an `mpfr` form (mpfr_correct) — for CHLO's special
    functions first by a double-word refinement and arb balls
    (oracle/chlo_dd/), which leave MPFR next to nothing.  CHLO's erf, erfc,
    erf_inv, lgamma, digamma, polygamma, zeta and i1e take a double-word
    first pass of their own before all of that (chlo_dd.lead: Taylor cells
    or Euler–Maclaurin, each with a proven bound), which leaves about 1 in
    10^5 over the benches' ranges.  `defer` (`defers`): the elements f's
    cheaper stages leave are returned undecided, not passed to its numpy
    evaluation — the caller's to finish."""
    if fmt == F64 and TABLE[f].name in ddfast.KERNELS and len(args) == 1 and ddfast.rounds_to_nearest():
        # double-double first (oracle/ddfast.py); the elements it leaves take the route below
        ok, r = ddfast.evaluate(TABLE[f].name, np.asarray(args[0], dtype=np.float64))
        if not ok.all():
            rest = np.flatnonzero(~ok)
            ok[rest], r[rest] = _evaluate(f, [np.asarray(args[0])[rest]], fmt)
        return ok, r
    if fmt == F64 and chlo_dd.leads(TABLE[f].name) and ddfast.rounds_to_nearest():
        # a CHLO function's double-word first pass (oracle/chlo_dd/); the elements it leaves take the route below
        cols = [np.asarray(a, dtype=np.float64).reshape(-1) for a in np.broadcast_arrays(*args)]
        ok, r = chlo_dd.lead(TABLE[f].name, cols)
        if not ok.all():
            rest = np.flatnonzero(~ok)
            ok[rest], r[rest] = _evaluate(f, [c[rest] for c in cols], fmt)
        return ok, r
    return _evaluate(f, args, fmt, defer)


def _evaluate(f, args: list, fmt: FloatFormat, defer: bool = False) -> tuple[np.ndarray, np.ndarray]:
    w = working_for(f, fmt)
    if w is None:   # no working format now (f64: long double without its 64 bits, or scipy's float64 functions):
        # MPFR alone, or nothing
        n = len(np.asarray(args[0]))
        ok, r = np.zeros(n, dtype=bool), np.zeros(n)
    else:
        with np.errstate(all="ignore"):
            cols = [np.asarray(a, dtype=w[0]) for a in args]
        staged = _staged(f, cols, fmt, defer) if w[0] is np.float64 else None
        if staged is not None:
            ok, r = staged
        else:
            with np.errstate(all="ignore"):
                y = np.asarray(TABLE[f].numpy_for(w[0])(*cols), dtype=w[0])
            ok, r = decide(y, fmt, cols, bound_for(f, fmt))
    if fmt == F64 and chlo_dd.serves(TABLE[f].name) and not ok.all():
        # CHLO's special functions: a double-word refinement and arb balls for what the pass left
        # (oracle/chlo_dd/); the elements they leave take MPFR and the per-element route, as before
        chlo_dd.refine(TABLE[f].name, TABLE[f].arb, [np.asarray(a, dtype=np.float64) for a in args], ok, r)
    if fmt == F64 and TABLE[f].mpfr is not None and not ok.all():
        mpfr_correct(f, [np.asarray(a, dtype=np.float64) for a in args], ok, r)
    return ok, r


def _staged(f, cols: list, fmt: FloatFormat, defer: bool = False):
    """(decided mask, rounded values) of f into a narrow `fmt` in stages,
    or None where f has no cheaper stage for fmt (RealFunction.narrow: one
    stage, or a tuple of them tried in order, each on the elements the
    ones before left): each stage's values decided with its own proven
    bound (a number, or one per element), then f's `numpy` evaluation,
    decided with bound_for's, on the elements left.  Each decision is a
    correct rounding, so the results are those of the one-stage route,
    sooner (chlo_compiled.py: compiled Taylor cells; chlo_fast_zeta.py:
    zeta and polygamma, whose full float64 evaluation costs 100 ns an
    element).  `defer`: the elements left stay undecided (`defers`)."""
    narrow = TABLE[f].narrow
    stages = narrow if isinstance(narrow, tuple) else (narrow,) if narrow is not None else ()
    cols = [c.reshape(-1) for c in np.broadcast_arrays(*cols)]
    shape = np.broadcast(*cols).shape
    ok = r = rest = None     # rest None: every element (no stage has decided any yet)
    for stage in stages:
        sub = cols if rest is None else [c[rest] for c in cols]
        got = stage(sub, fmt) if rest is None or len(rest) else None
        if got is None:
            continue
        y, bound = got
        bound = np.asarray(bound).reshape(-1) if np.ndim(bound) else bound
        decided = decide(np.asarray(y).reshape(-1), fmt, sub, bound)
        if rest is None:
            ok, r = decided
        else:
            ok[rest], r[rest] = decided
        rest = np.flatnonzero(~ok)
    if ok is None:
        return None
    if len(rest) and not defer:
        sub = [c[rest] for c in cols]
        with np.errstate(all="ignore"):
            y2 = np.asarray(TABLE[f].numpy(*sub), dtype=np.float64)
        ok[rest], r[rest] = decide(y2, fmt, sub, bound_for(f, fmt))
    return ok.reshape(shape), r.reshape(shape)


def mpfr_correct(f, args: list, ok: np.ndarray, r: np.ndarray) -> None:
    """Decide the elements of f64 results not yet `ok` by MPFR (gmpy2), in
    place: MPFR rounds every function it has correctly, by contract, to the
    context's precision and exponent range (gmpy2.ieee(64): binary64,
    subnormals and overflow included), so its value is the f64 result
    itself.  `TABLE[f].mpfr` is set only where f is one MPFR operation whose
    value at floats is never exactly a binary64 midpoint.  Elements with a
    zero or non-finite argument, or a NaN value, stay undecided: MPFR
    follows IEEE's signed zeros (sin(-0) = -0, atan2(-0, -1) = -π) where
    arb and mpmath have one zero, so there the spec's statement decides."""
    fn = TABLE[f].mpfr
    todo = chlo_dd.ball.undecided_with_finite_nonzero_args(args, ok)
    if not len(todo):
        return
    cols = [a[todo].tolist() for a in args]
    got = np.array([float(fn(*x)) for x in zip(*cols)], dtype=np.float64)
    keep = ~np.isnan(got)
    r[todo[keep]] = got[keep]
    ok[todo[keep]] = True


# --------------------------------------------------------------------------
# IEEE basic operations (+ - * / sqrt): the hardware rounds them correctly
# --------------------------------------------------------------------------

def ieee_applies(fmt: FloatFormat) -> bool:
    return fmt.precision <= 24 or fmt == F64


def gradual_underflow() -> bool:
    """Whether numpy's float32 and float64 arithmetic keeps subnormals: no
    flush-to-zero (a subnormal result made 0) and no denormals-are-zero (a
    subnormal operand read as 0).  Both are modes of the FPU (x86 MXCSR),
    per thread, that a library may set; checked on every `ieee` call, through
    the same vectorised loops, so a mode set behind the oracle's back makes
    it refuse subnormals instead of stating wrong bits."""
    for dt in (np.float32, np.float64):
        fi = np.finfo(dt)
        sub = np.full(32, fi.smallest_subnormal, dtype=dt)
        half = np.full(32, fi.smallest_normal, dtype=dt) * dt(0.5)        # FTZ: 0
        if not ((sub + sub) == dt(2) * fi.smallest_subnormal).all() or not (half > 0).all():   # DAZ: 0
            return False
    return True


def ieee(ufunc, operands: list, et, exact: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(accepted mask, results in et's numpy dtype) of an IEEE operation on
    operand arrays of that dtype.

    f32 and f64 are computed in their own format, by the hardware, which
    rounds + - * / sqrt correctly, subnormal results included, while the FPU
    keeps subnormals (`gradual_underflow`; otherwise subnormal operands and
    results are refused).  bf16, f16 and the f8 types are computed in
    float64, where all their values and these results are normal numbers,
    and rounded once into the format (`round_fast`).  That double
    rounding is innocuous: for normal results because float64's 53 bits are
    at least 2p + 2 (Figueroa, "When is double rounding innocuous?", 1995);
    for subnormal ones because sums and products landing there are exact in
    float64, and a quotient or root that is not itself a midpoint of the
    format's subnormal grid lies more than 2^-(3p+1) relative from every
    midpoint (p <= 11 here; the proof is in docs/oracle-evaluation.md),
    where float64's error is at most 2^-53.

    Accepted: finite operands, zero and subnormal ones included; finite
    nonzero results, and NaN results (an invalid operation on finite
    operands: sqrt of a negative, 0/0, fmod(x, 0)), stated as the positive
    quiet NaN, as the op's fn is rounded (`round_bits`), not as the
    hardware's default NaN (negative on x86).  Zero results only for an
    `exact` operation (one that never rounds: ceil, abs, fmod …), whose sign
    numpy takes from IEEE's rule as the fn does; elsewhere the sign rule,
    overflow and f8E4M3FN's NaN are left to the op's fn."""
    fmt = et.format
    narrow = fmt.precision < 24
    tiny = 0.0 if narrow or gradual_underflow() else 2.0 ** fmt.emin
    with np.errstate(all="ignore"):
        if narrow:
            operands = [np.asarray(a, dtype=np.float64) for a in operands]
            r = round_fast(np.asarray(ufunc(*operands), dtype=np.float64), fmt)
        else:   # f32, f64: the hardware's own operation, in the operands' format
            r = np.array(ufunc(*operands), dtype=et.numpy)
        ok = np.isfinite(operands[0])
        for a in operands[1:]:
            ok &= np.isfinite(a)
        if tiny:   # the FPU flushes or reads subnormals as zero: subnormal operands are refused
            for a in operands:
                ok &= (a == 0) | (np.abs(a) >= tiny)
        nan = np.isnan(r)
        good = np.isfinite(r)
        if tiny:
            good &= (np.abs(r) >= tiny) & (r != 0) | (exact & (r == 0))
        elif not exact:
            good &= r != 0
        if nan.any():
            r[nan] = np.nan   # the positive quiet NaN, as round_bits states a NaN
            good |= nan
        ok &= good
        if narrow:
            r = r.astype(et.numpy)
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


# --------------------------------------------------------------------------
# Whole-instance claims (`Generic.whole`): compare's i1 results
# --------------------------------------------------------------------------

def whole(claim, inst, operands: list, et):
    """(results, declined mask) of a `Generic.whole` claim on whole operand
    arrays (each in its element type's numpy type), or None where the claim
    says nothing about this instance or returns anything but one value per
    element in the result's numpy type `et.numpy` — the caller's other
    routes state the result then.  The declined elements (where fn's answer
    is more than one value) are for the op's fn; the rest are fn's answers."""
    with np.errstate(all="ignore"):
        got = claim(inst, *operands)
    if got is None:
        return None
    r, declined = got if isinstance(got, tuple) else (got, None)
    r = np.asarray(r)
    size = int(np.size(operands[0])) if operands else r.size
    if r.dtype != np.dtype(et.numpy) or r.size != size:
        return None
    return r, (np.zeros(r.shape, dtype=bool) if declined is None else np.asarray(declined, dtype=bool))
