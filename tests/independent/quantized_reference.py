"""An independent integer implementation of StableHLO quantized arithmetic,
written from TFLite's reference kernels and from StableHLO's own lowering
(not from spec/quantized.py), and the accepted-deviation rule the oracle
should apply to a quantized result, with its proof.

Sources (read through the stored-code search, cited per function):
tensorflow/lite/kernels/internal/common.h and common.cc (tflite-micro:
`MultiplyByQuantizedMultiplier`, both builds), quantization_util.cc
(`QuantizeMultiplier`), cppmath.h (`TfLiteRound` = std::round),
reference/quantize.h (`AffineQuantize`), reference/dequantize.h,
reference/requantize.h, reference/add.h (`AddElementwise`),
reference/integer_ops/mul.h (`MulElementwise`), micro/kernels/
add_common.cc, mul_common.cc, quantize_common.cc (the Prepare steps:
left_shift 20 / 15, the multipliers); google/gemmlowp fixedpoint/
fixedpoint.h (`SaturatingRoundingDoublingHighMul`, `RoundingDivideByPOT`);
openxla/stablehlo stablehlo/transforms/StablehloLegalizeQuantToMath.cpp
(`requantize`, ConvertUniformQuantizeOp, ConvertUniformDequantizeOp,
ConvertUniformQuantizedAddOp, the dequantize→op→quantize fallback).

How they differ from the spec's steps (dequantize → op in f32 → divide by
the scale, add the zero point, clamp, round half to even — each f32 step
rounded)
------------------------------------------------------------------------
* Rounding rules.  The spec: half to even.  TFLite `AffineQuantize`:
  std::round, half *away from zero*, of x/σ — the zero point is added
  after rounding, so the tie is decided by the sign of x/σ, not of the
  result.  gemmlowp `SaturatingRoundingDoublingHighMul`: half *up*
  (toward +inf: its negative nudge 1 − 2^30 with C++'s truncating
  division is floor(ab/2^31 + 1/2)); `RoundingDivideByPOT`: half away from
  zero.  TFLITE_SINGLE_ROUNDING: half up.  StableHLO's lowering:
  round_nearest_even, as the spec.
* Multipliers.  TFLite holds σi/σo (requantize), σaσb/σo (multiply) as
  q·2^(shift−31), q a Q31 integer in [2^30, 2^31): |m̃ − m| <= 2^-31·m
  (+2^-53 for the double division that made m).  StableHLO's
  requantization rounds the merged scale si/so — of the types' doubles,
  not their f32 roundings — into f32.
* Order of steps.  gemmlowp's default `MultiplyByQuantizedMultiplier`
  rounds twice when shift < 0 (m < 1/2): first at 2^shift of the result,
  then to an integer — a value w(m) = 2^(shift−1) (<= m, <= 1/4) away from
  x·m̃ is rounded again, so 0.25 becomes 1 (m = 1/4, x = 1: 1/2 → 1 → 1).
  TFLite's Add scales both operands to 2^20 (int16: 2^15) fixed point
  with their own multipliers, sums, and rescales: each operand's scaling
  is off by <= 3/4 of a 2^-L·2max(σa,σb) unit.  StableHLO's Add
  requantizes *each operand* to the result's scale and rounds it before
  the integer sum: two roundings, not one.  StableHLO's requantize scales
  the raw storage value and adds merged_zp = zo − zi·m in f32 (one fold of
  (x − zi)·m + zo): for 16-bit types with a large scale ratio the two
  large terms cancel and f32 loses whole storage units.

The rule
--------
Per element, let y be the real-number result in output storage units
before the clamp, from the operands' storage values and the types' f32
scales (the spec's `constant(scale, expressed_type)`) — exactly, with
rationals:

    quantize     y = x/σo + zo                 T = |x|/σo
    requantize   y = (x − zi)·σi/σo + zo       T = |x − zi|·σi/σo
    add          y = Σ (xk − zk)·σk/σo + zo    T = Σ |xk − zk|·σk/σo
    multiply     y = (xa − za)(xb − zb)·σaσb/σo + zo,   T = |y − zo|

An implementation scheme S computes a value v with |v − y| <= ε_S (a
function of the op, the types and the element's operands, below), rounds
it to a nearest integer (any tie rule) and clamps to [qmin, qmax]
(before or after rounding: the bounds are integers, so the same).
Therefore its result lies in

    admissible(y, ε) = [clamp(ceil(y − ε − 1/2)), clamp(floor(y + ε + 1/2))]

and the oracle accepts r  iff  r == r_spec  or  r ∈ admissible(y, ε), with ε
the widest window of the schemes it admits (`accepted`, `oracle_window`).
Consequences, each proved by that interval:
* |r − r_spec| <= floor(1 + ε + ε_spec): 1 wherever ε + ε_spec < 1;
* r != r_spec only if y lies within max(ε, ε_spec) of the half-integer
  between them (both sides are nearest integers to values that close to y);
* where y is an integer and ε < 1/2 — a power-of-two ratio >= 1, the same
  type — every scheme must return y itself;
* deep saturation (y beyond a bound by more than ε + 1/2) admits the bound
  only, however wide ε (y is used unclamped).

The windows (u = 2^-24, f32's unit roundoff; 2^-p for an expressed type of
precision p), each an upper bound proved from |fl(z) − z| <= u|z| per f32
step and the Q31 bound, and checked per element in
tests/spec/test_quantized_reference.py:

  scheme \\ op        quantize   requantize, multiply      add
  float (the spec's   5u(T+|y|)  5u(T+|y|)                 5u(T+|y|)
   own steps; XLA's
   QDQ fallback)
  TFLite gemmlowp     u·T        2^-30·T + w(m)            2^-28(T+1) + 2.5·mo
  TFLite single rnd   u·T        2^-30·T                   2^-28(T+1) + 1.0·mo
  StableHLO q-to-m    = spec     5u(|x|m + |zi|m + |zo|    1/2 + the two
                      (equal)      + |y|)  (x raw storage)  operands' requantize
                                                            windows

with m the scale ratio (σi/σo; σaσb/σo), w(m) = 2^(shift−1) for m < 1/2
(shift from frexp(m)) else 0, mo = 2·max(σa, σb)/(2^L·σo), L = 20 (15 for
16-bit storage).  Proof gists: the spec's pipeline rounds the terms at
most four times and the zero-point sum once (5u covers the O(u²)); TFLite:
|x|·|m̃ − m| <= 2^-30·T, the first gemmlowp rounding adds <= w(m); in Add
each scaled operand is within 1/2 + w(m_k) <= 3/4 raw units (1/2 single),
a raw unit is mo output units, the output's own w <= mo; StableHLO: f32
merged scale within 3u + O(u²) of m (two scale roundings and its own), the
product rounds once, merged_zp carries 2u|zi|m + u|zo − zi·m|, the sum u|y|;
its Add is n1 + n2 − zo with |nk − yk| <= 1/2 + (window k) and y1 + y2 − zo = y.
`type_window` bounds ε by the types alone (T and |y| at their largest).

Where the exact spec result is required (ε = 0, no scheme deviates)
------------------------------------------------------------------------
* uniform_dequantize: one f32 product of an exact integer — TFLite,
  StableHLO and the spec agree bit for bit (storage up to 24 bits).
* Every op that moves storage values or whose dequantize → op → quantize
  is the identity on them: reshape, transpose, slice, concatenate, pad,
  gather, broadcast, select, min/max/clamp with equal types (StableHLO's
  lowering runs them on the storage integers; the spec's round trip
  returns the same integer: |fl(fl(a·σ)/σ) + zo − (a + zo)| < 1/2 for
  |a|, |a + zo| < 2^20), compare (a boolean), and uniform_quantize to the same type.
* Integer y, and saturation beyond ε + 1/2 (above).

Where an integer implementation may be off by one (or more)
------------------------------------------------------------
* uniform_quantize f32 → q, requantize, multiply, and every op computed
  by a single final rounding (TFLite both builds, float reorderings):
  by 1, only within the window of a tie — width 5u(T+|y|) + u·T for
  quantize (ties and f32 near-ties), 2^-30·T + w(m) for requantize and
  multiply, where gemmlowp's w(m) <= 1/4 is the only non-tiny term: the
  default TFLite build parts from the spec up to a quarter away from a
  tie (attained: m = 1/4, 0.25 → 1).
* add (subtract alike): TFLite within 2^-28(T+1) + 2.5·mo of a tie;
  StableHLO's lowering by 1 *anywhere* (two operand roundings), so an
  oracle admitting it must allow ±1 for every add element.
* StableHLO's requantize (and so its add) on 16-bit types with large
  scale ratios: by several units (its window is relative to |x|·m, not
  to T) — measured 7 (si16 → si16), and 16 in a hand example
  (scale 10 zp 32000 → scale 0.001 zp 0, x = 32001: 9984 for 10000).
  That is StableHLO's lowering departing from the spec it implements;
  an oracle should name it rather than widen its window for everyone
  (`oracle_window(..., schemes=SCHEMES[:3])` leaves it out).
* The spec's own f32 steps are not correctly rounded where T is large
  against |y| (i16 add with cancellation: ε_spec = 5u(T+|y|) can exceed
  1/2); an implementation nearer to y than the spec is accepted by the
  rule (it is in admissible(y, ε) for its own ε).

Measured (python -m tests.spec.test_quantized_reference; 12k–48k
elements per row, max |r − r_spec| / largest distance of a difference from
the tie): requantize — gemmlowp 1 / 0.249 in every family (≤ w(m)),
single rounding 1 / 0.0024 (i16; ≤ 1.1e-7 for 8-bit), StableHLO 0 for
8- and 4-bit inputs, 7 / 3.17 for si16 → si16; add — TFLite 1 / 0.38
(si16, where the spec's own window is ~4) and 0 mismatches for si8/ui8,
StableHLO 1 / 0.48 for 8- and 4-bit, 2 / 0.90 for si16; multiply —
gemmlowp 1 / 0.24, single rounding 1 / 0.0014, StableHLO (= spec) 0;
quantize f32 → q — TFLite 1 / 2e-3 (i16; ≤ 1.1e-5 for 8-bit), StableHLO 0.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
F32_UNIT_ROUNDOFF = 2.0 ** -24          # u: |fl(x) - x| <= u|x| for a binary32 result without underflow
_SLACK = 1.0 + 2.0 ** -40               # the windows are evaluated in binary64: round them up past its error


@dataclass(frozen=True)
class Params:
    """One per-tensor quantization: what TFLite's TfLiteQuantizationParams
    holds (a float scale, an int32 zero point) plus the storage bounds (TFLite's
    quantized_activation_min/max) and width (Add's left_shift depends on it),
    and the double MLIR holds for the scale, which StableHLO's pass reads."""

    scale: float
    zero_point: int
    qmin: int
    qmax: int
    bits: int

    @property
    def scale_f32(self) -> float:
        """The flatbuffer's float: the double rounded to nearest binary32."""
        return float(np.float32(self.scale))


def _require_int32(v, what: str) -> None:
    """TFLite computes in int32: a value outside it is undefined behaviour in
    C++ (or a TFLITE_DCHECK), so the algorithm has no result there."""
    a = np.asarray(v)
    if a.size and (a.min() < INT32_MIN or a.max() > INT32_MAX):
        raise OverflowError(f"{what} leaves int32: TFLite's int32 arithmetic has no result here")


# --------------------------------------------------------------------------
# Fixed-point primitives (TFLite / gemmlowp)
# --------------------------------------------------------------------------

def tf_round(x) -> np.ndarray:
    """`TfLiteRound` = `std::round` (tensorflow/lite/kernels/internal/cppmath.h):
    nearest integer, ties away from zero — where the spec's `quantize` ties to
    even.  Exact on any binary64 value (floor and the fraction are exact)."""
    x = np.asarray(x, dtype=np.float64)
    if not np.isfinite(x).all():
        raise ValueError("std::round of a non-finite value: TFLite's cast to int has no result")
    a = np.abs(x)
    fl = np.floor(a)
    r = fl + (a - fl >= 0.5)
    return np.where(x < 0, -r, r).astype(np.int64)


def quantize_multiplier(m: float, single_rounding: bool = False) -> tuple[int, int]:
    """`QuantizeMultiplier` (tensorflow/lite/kernels/internal/quantization_util.cc):
    m = q·2^shift with q in [1/2, 1) (`std::frexp`), q_fixed = round(q·2^31)
    (ties away; q·2^31 is exact in binary64), a carry to 2^31 halved into the
    shift, shift < -31 flushed to (0, 0); with TFLITE_SINGLE_ROUNDING a shift
    above 30 saturates to (2^31 - 1, 30).  Then m̃ = q_fixed·2^(shift-31) and
    |m̃ - m| <= 2^(shift-32) <= 2^-31·m (m >= 2^(shift-1))."""
    if m < 0 or not math.isfinite(m):
        raise ValueError(f"multiplier {m!r}: the kernels here use non-negative finite multipliers")
    if m == 0:
        return 0, 0
    q, shift = math.frexp(m)
    q_fixed = int(tf_round(q * float(1 << 31)))
    if q_fixed > 1 << 31:
        raise AssertionError("frexp's fraction is below 1")
    if q_fixed == 1 << 31:
        q_fixed //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    if single_rounding and shift > 30:
        return (1 << 31) - 1, 30
    return q_fixed, shift


def srdhm(a, b: int) -> np.ndarray:
    """gemmlowp `SaturatingRoundingDoublingHighMul` (google/gemmlowp
    fixedpoint/fixedpoint.h; ARM VQRDMULH): (a·b + nudge) / 2^31 with C++
    division (toward zero), nudge = 2^30 for a·b >= 0 and 1 - 2^30 below:
    that is floor(a·b/2^31 + 1/2) — nearest, ties toward +inf (the "- 1"
    in the negative nudge moves a negative tie up, as VQRDMULH's add-then-
    arithmetic-shift does); INT32_MIN² saturates."""
    a = np.asarray(a, dtype=np.int64)
    _require_int32(a, "SRDHM operand")
    _require_int32(b, "SRDHM multiplier")
    ab = a * np.int64(b)
    t = ab + np.where(ab >= 0, np.int64(1 << 30), np.int64(1 - (1 << 30)))
    q = np.where(t >= 0, t >> 31, -((-t) >> 31))
    return np.where((a == INT32_MIN) & (b == INT32_MIN), np.int64(INT32_MAX), q)


def rounding_divide_by_pot(x, exponent: int) -> np.ndarray:
    """gemmlowp `RoundingDivideByPOT`: x / 2^exponent rounded to nearest,
    ties away from zero (the threshold is one higher for negative x)."""
    if not 0 <= exponent <= 31:
        raise ValueError(f"exponent {exponent} outside [0, 31]")
    x = np.asarray(x, dtype=np.int64)
    _require_int32(x, "RoundingDivideByPOT operand")
    mask = np.int64((1 << exponent) - 1)
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + (remainder > threshold)


def multiply_by_quantized_multiplier(x, qm: int, shift: int, single_rounding: bool = False) -> np.ndarray:
    """`MultiplyByQuantizedMultiplier(int32 x, ...)` (tensorflow/lite/kernels/
    internal/common.cc, both builds):

    * default (gemmlowp, two roundings): RoundingDivideByPOT(SRDHM(x·2^left,
      qm), right) — the first rounding (ties up) at 2^-right of the result,
      the second (ties away from zero) at 1: a value up to 2^-(right+1) from
      x·m̃ is rounded again;
    * TFLITE_SINGLE_ROUNDING: (x·qm + 2^(30-shift)) >> (31-shift) in int64 —
      one rounding, ties toward +inf.

    `MultiplyByQuantizedMultiplierSmallerThanOneExp` is the same computation
    for shift <= 0 (common.h; under TFLITE_SINGLE_ROUNDING it calls this)."""
    x = np.asarray(x, dtype=np.int64)
    _require_int32(x, "MultiplyByQuantizedMultiplier operand")
    if single_rounding:
        if not (qm >= 0 and -31 <= shift <= 30):
            raise ValueError(f"single rounding takes shift in [-31, 30], not {shift}")
        total = 31 - shift
        r = (x * np.int64(qm) + np.int64(1 << (total - 1))) >> total
        _require_int32(r, "MultiplyByQuantizedMultiplier result")
        return r
    left, right = max(shift, 0), max(-shift, 0)
    shifted = x * np.int64(1 << left)
    _require_int32(shifted, "x << left_shift")
    return rounding_divide_by_pot(srdhm(shifted, qm), right)


def _smaller_than_one(m: float, single_rounding: bool) -> tuple[int, int]:
    """`QuantizeMultiplierSmallerThanOneExp`: TFLITE_CHECK 0 < m < 1 (Prepare fails otherwise)."""
    if not 0.0 < m < 1.0:
        raise ValueError(f"TFLite's Prepare refuses the multiplier {m!r} "
                         "(QuantizeMultiplierSmallerThanOneExp: 0 < m < 1)")
    qm, shift = quantize_multiplier(m, single_rounding)
    if shift > 0:
        raise AssertionError("a multiplier below 1 has a non-positive shift")
    return qm, shift


# --------------------------------------------------------------------------
# TFLite's reference kernels
# --------------------------------------------------------------------------

def affine_quantize(x, p: Params) -> np.ndarray:
    """`reference_ops::AffineQuantize` (tensorflow/lite/kernels/internal/
    reference/quantize.h): `TfLiteRound(val / static_cast<float>(scale))` —
    one binary32 division, ties away from zero — plus the zero point in
    double, clamped (to the storage type's limits there; to [qmin, qmax]
    here, which is what a narrowed storage range asks of it).  The zero
    point is added *after* rounding: the spec adds it in f32 first."""
    x32 = np.asarray(x, dtype=np.float32)
    with np.errstate(all="ignore"):
        quotient = (x32 / np.float32(p.scale_f32)).astype(np.float32)
    return np.clip(tf_round(quotient) + p.zero_point, p.qmin, p.qmax)


def dequantize(q, p: Params) -> np.ndarray:
    """`reference_ops::Dequantize` (reference/dequantize.h):
    `static_cast<float>(scale * (val - zero_point))` — the int difference
    converted to float (exact below 2^24), one binary32 product."""
    diff = np.asarray(q, dtype=np.int64) - p.zero_point
    return (diff.astype(np.float32) * np.float32(p.scale_f32)).astype(np.float32)


def requantize(q, p_in: Params, p_out: Params, single_rounding: bool = False) -> np.ndarray:
    """QUANTIZE of a quantized input (tensorflow/lite/micro/kernels/
    quantize_common.cc Prepare: effective_scale = double(in.scale) /
    double(out.scale), QuantizeMultiplier; reference/requantize.h:
    MultiplyByQuantizedMultiplier(input - input_zp) + output_zp, clamped).
    Requantize's int8<->uint8 XOR-0x80 fast path (same scale, zero points 128
    apart) is this formula's own result there (m̃ = 1 exactly)."""
    qm, shift = quantize_multiplier(p_in.scale_f32 / p_out.scale_f32, single_rounding)
    x = np.asarray(q, dtype=np.int64) - p_in.zero_point
    out = multiply_by_quantized_multiplier(x, qm, shift, single_rounding) + p_out.zero_point
    return np.clip(out, p_out.qmin, p_out.qmax)


def add_left_shift(p_out: Params) -> int:
    """kernels/add.cc (micro: add_common.cc CalculateOpDataAdd): 15 for
    int16, else 20 (int8, uint8; int4, which TFLite has no Add for, as int8)."""
    return 15 if p_out.bits == 16 else 20


def add_multipliers(pa: Params, pb: Params, po: Params) -> dict:
    """Add's Prepare: twice_max = 2·max(sa, sb) (double of the float scales);
    input multipliers sa/twice_max, sb/twice_max (<= 1/2); output multiplier
    twice_max / (2^left_shift · so) — each must be in (0, 1)."""
    L = add_left_shift(po)
    twice_max = 2 * max(pa.scale_f32, pb.scale_f32)
    return {"left_shift": L, "m1": pa.scale_f32 / twice_max, "m2": pb.scale_f32 / twice_max,
            "mo": twice_max / (float(1 << L) * po.scale_f32)}


def add(a, b, pa: Params, pb: Params, po: Params, single_rounding: bool = False) -> np.ndarray:
    """`AddElementwise` (reference/add.h; reference/integer_ops/add.h is the
    same for int8): each operand minus its zero point, shifted left by 20
    (15 for int16), scaled by its multiplier (<= 1/2 of 2^20 headroom), the
    two summed in int32, scaled by the output multiplier, plus the output
    zero point, clamped."""
    m = add_multipliers(pa, pb, po)
    L = m["left_shift"]
    q1, s1 = _smaller_than_one(m["m1"], single_rounding)
    q2, s2 = _smaller_than_one(m["m2"], single_rounding)
    qo, so = _smaller_than_one(m["mo"], single_rounding)
    v1 = (np.asarray(a, dtype=np.int64) - pa.zero_point) * np.int64(1 << L)
    v2 = (np.asarray(b, dtype=np.int64) - pb.zero_point) * np.int64(1 << L)
    _require_int32(v1, "shifted input1")
    _require_int32(v2, "shifted input2")
    raw_sum = (multiply_by_quantized_multiplier(v1, q1, s1, single_rounding)
               + multiply_by_quantized_multiplier(v2, q2, s2, single_rounding))
    _require_int32(raw_sum, "raw_sum")
    raw_out = multiply_by_quantized_multiplier(raw_sum, qo, so, single_rounding) + po.zero_point
    _require_int32(raw_out, "raw_output")
    return np.clip(raw_out, po.qmin, po.qmax)


def multiply(a, b, pa: Params, pb: Params, po: Params, single_rounding: bool = False) -> np.ndarray:
    """`MulElementwise` (reference/integer_ops/mul.h) with Prepare's
    real_multiplier = double(s1)·double(s2)/double(so) (micro/kernels/
    mul_common.cc; the product of two floats is exact in double):
    MultiplyByQuantizedMultiplier((a - za)·(b - zb)) + zo, clamped.  For
    int16 TFLite requires all zero points 0 (TF_LITE_ENSURE_EQ)."""
    if po.bits == 16 and (pa.zero_point, pb.zero_point, po.zero_point) != (0, 0, 0):
        raise ValueError("TFLite's int16 Mul requires zero points 0")
    qm, shift = quantize_multiplier(pa.scale_f32 * pb.scale_f32 / po.scale_f32, single_rounding)
    prod = (np.asarray(a, dtype=np.int64) - pa.zero_point) * (np.asarray(b, dtype=np.int64) - pb.zero_point)
    _require_int32(prod, "input1_val * input2_val")
    out = multiply_by_quantized_multiplier(prod, qm, shift, single_rounding) + po.zero_point
    _require_int32(out, "unclamped_result")
    return np.clip(out, po.qmin, po.qmax)


# --------------------------------------------------------------------------
# StableHLO's own lowering (stablehlo/transforms/StablehloLegalizeQuantToMath.cpp)
# --------------------------------------------------------------------------

def shlo_quantize(x, p: Params) -> np.ndarray:
    """ConvertUniformQuantizeOp (float operand): divide by the f32 scale
    (`getF32FloatAttr(scale)`), add the zero point as f32, clamp to the f32
    storage bounds, round_nearest_even, convert — the spec's own steps."""
    x32 = np.asarray(x, dtype=np.float32)
    with np.errstate(all="ignore"):
        y = (x32 / np.float32(p.scale)).astype(np.float32)
        y = (y + np.float32(p.zero_point)).astype(np.float32)
    y = np.minimum(np.maximum(y, np.float32(p.qmin)), np.float32(p.qmax))
    return np.rint(y).astype(np.int64)


def shlo_dequantize(q, p: Params) -> np.ndarray:
    """ConvertUniformDequantizeOp: convert to i32, subtract the zero point in
    i32, convert to f32, times the f32 scale."""
    diff = np.asarray(q, dtype=np.int64) - p.zero_point
    return (diff.astype(np.float32) * np.float32(p.scale)).astype(np.float32)


def shlo_requantize(q, p_in: Params, p_out: Params, clamp: bool = True) -> np.ndarray:
    """`requantize`: the same type is a plain convert; otherwise
    f32(storage)·f32(merged_scale) + f32(merged_zp), merged_scale = in/out
    and merged_zp = out_zp - in_zp·merged_scale computed in double from the
    types' *doubles* (not their f32 roundings), the add skipped when
    merged_zp == 0, clamped to the f32 storage bounds when the result is
    narrower than 32 bits (`clamp`), rounded to even, converted.  The raw
    storage value is scaled, not (storage − zero point): cancellation with
    merged_zp is where its f32 error grows (`windows`)."""
    q = np.asarray(q, dtype=np.int64)
    if p_in == p_out:
        return q.copy()
    ms = p_in.scale / p_out.scale
    mz = p_out.zero_point - p_in.zero_point * ms
    y = (q.astype(np.float32) * np.float32(ms)).astype(np.float32)
    if mz != 0:
        y = (y + np.float32(mz)).astype(np.float32)
    if clamp:
        y = np.minimum(np.maximum(y, np.float32(p_out.qmin)), np.float32(p_out.qmax))
    return np.rint(y).astype(np.int64)


def shlo_add(a, b, pa: Params, pb: Params, po: Params) -> np.ndarray:
    """ConvertUniformQuantizedAddOp (per-tensor): each operand requantized
    to the result's type into i32 (no clamp: i32), added in i32, the result
    zero point subtracted once, clamped to [storage_min, storage_max] unless
    i32.  Two roundings, one per operand, before the sum."""
    s = shlo_requantize(a, pa, po, clamp=False) + shlo_requantize(b, pb, po, clamp=False) - po.zero_point
    _require_int32(s, "i32 sum")
    return s if po.bits == 32 else np.clip(s, po.qmin, po.qmax)


# --------------------------------------------------------------------------
# The exact value every implementation approximates, and the windows
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Exact:
    """Per element: `y` the real-number result in storage units before the
    clamp, `terms` the magnitude T of what was summed to make y − zo (the
    error terms of every scheme are relative to it), `yhat` y clamped to
    [qmin, qmax] — the value a correctly rounded result is nearest to —
    and the bounds themselves."""

    y: np.ndarray
    terms: np.ndarray
    yhat: np.ndarray
    qmin: int
    qmax: int

    def take(self, mask) -> "Exact":
        return Exact(self.y[mask], self.terms[mask], self.yhat[mask], self.qmin, self.qmax)


def _exact(y: list, terms: list, po: Params) -> Exact:
    lo, hi = Fraction(po.qmin), Fraction(po.qmax)
    yhat = [min(max(v, lo), hi) for v in y]
    return Exact(np.array(y, dtype=object), np.array(terms, dtype=object), np.array(yhat, dtype=object),
                 po.qmin, po.qmax)


def exact_quantize(x, p: Params) -> Exact:
    """y = x / σ + zo with σ the f32 scale, x the binary32 operand's exact value."""
    s = Fraction(p.scale_f32)
    t = [Fraction(float(v)) / s for v in np.asarray(x, dtype=np.float32).reshape(-1).tolist()]
    return _exact([v + p.zero_point for v in t], [abs(v) for v in t], p)


def exact_requantize(q, p_in: Params, p_out: Params) -> Exact:
    """y = (q − zi)·σi/σo + zo."""
    m = Fraction(p_in.scale_f32) / Fraction(p_out.scale_f32)
    t = [(int(v) - p_in.zero_point) * m for v in np.asarray(q).reshape(-1).tolist()]
    return _exact([v + p_out.zero_point for v in t], [abs(v) for v in t], p_out)


def exact_add(a, b, pa: Params, pb: Params, po: Params) -> Exact:
    """y = ((a − za)·σa + (b − zb)·σb)/σo + zo; T = |(a − za)σa| /σo + |(b − zb)σb|/σo."""
    ma = Fraction(pa.scale_f32) / Fraction(po.scale_f32)
    mb = Fraction(pb.scale_f32) / Fraction(po.scale_f32)
    ys, ts = [], []
    for x, y in zip(np.asarray(a).reshape(-1).tolist(), np.asarray(b).reshape(-1).tolist()):
        t1, t2 = (int(x) - pa.zero_point) * ma, (int(y) - pb.zero_point) * mb
        ys.append(t1 + t2 + po.zero_point)
        ts.append(abs(t1) + abs(t2))
    return _exact(ys, ts, po)


def exact_multiply(a, b, pa: Params, pb: Params, po: Params) -> Exact:
    """y = (a − za)(b − zb)·σaσb/σo + zo."""
    m = Fraction(pa.scale_f32) * Fraction(pb.scale_f32) / Fraction(po.scale_f32)
    t = [(int(x) - pa.zero_point) * (int(y) - pb.zero_point) * m
         for x, y in zip(np.asarray(a).reshape(-1).tolist(), np.asarray(b).reshape(-1).tolist())]
    return _exact([v + po.zero_point for v in t], [abs(v) for v in t], po)


def _f(a) -> np.ndarray:
    return np.array([float(v) for v in np.asarray(a, dtype=object).reshape(-1)], dtype=np.float64)


def window_spec(ex: Exact, u: float = F32_UNIT_ROUNDOFF) -> np.ndarray:
    """The spec's own f32 steps (spec/quantized.py computes them exactly):
    at most four relative roundings of the terms (dequantize ×2, the op,
    ÷ scale) and one of the sum with the zero point: |v − y| <= 5u(T + |y|)."""
    return 5 * u * (_f(ex.terms) + np.abs(_f(ex.y))) * _SLACK


def _double_rounding_slack(m: float, single_rounding: bool) -> float:
    """gemmlowp's second rounding: the first rounds at 2^-right of the result,
    right = -shift > 0 for m < 1/2, so up to 2^(shift-1) (<= m, <= 1/4) is
    added before the final rounding.  None with one rounding, or m >= 1/2."""
    if single_rounding:
        return 0.0
    qm, shift = quantize_multiplier(m)
    return 2.0 ** (shift - 1) if (qm and shift < 0) else 0.0


def _multiplier_error(m: float) -> float:
    """|m̃ − m| / m: 2^-31 from Q31 (quantize_multiplier), 2^-53 from the double
    division that made m: <= 2^-30.  A flushed multiplier (m < 2^-32) is all error."""
    qm, _ = quantize_multiplier(m)
    return 2.0 ** -30 if qm else 1.0


def window_tflite(op: str, ex: Exact, params: tuple, single_rounding: bool = False,
                  u: float = F32_UNIT_ROUNDOFF) -> np.ndarray:
    """|v − y| for TFLite's kernels, v the value its last rounding rounds to
    nearest (any tie rule), in output storage units:

    * quantize: u·T (the f32 division; the zero point is added exactly);
    * requantize, multiply: 2^-30·T + w(m), w = 2^(shift−1) for gemmlowp with
      m < 1/2 (its intermediate rounding), 0 with one rounding;
    * add: 2^-28·(T + 1) + c·mo, mo = 2·max(σa, σb)/(2^L·σo), c = 2.5
      (gemmlowp: each input scaling off by <= 1/2 + 1/4 in 2^-L·2max units,
      the output's own w <= mo) or 1 (single rounding: 1/2 + 1/2)."""
    T = _f(ex.terms)
    if op == "quantize":
        return u * T * _SLACK
    if op == "requantize":
        p_in, p_out = params
        m = p_in.scale_f32 / p_out.scale_f32
        return (_multiplier_error(m) * T + _double_rounding_slack(m, single_rounding)) * _SLACK
    if op == "multiply":
        pa, pb, po = params
        m = pa.scale_f32 * pb.scale_f32 / po.scale_f32
        return (_multiplier_error(m) * T + _double_rounding_slack(m, single_rounding)) * _SLACK
    if op == "add":
        mo = add_multipliers(*params)["mo"]
        return (2.0 ** -28 * (T + 1) + (1.0 if single_rounding else 2.5) * mo) * _SLACK
    raise ValueError(op)


def _shlo_requant_window(x, p_in: Params, p_out: Params, y: np.ndarray, u: float) -> np.ndarray:
    """|v − y| for `requantize`: 5u(|x|·m + |zi|·m + |zo| + |y|), x the raw
    storage value, m = σi/σo (the f32 scales): f32(merged_scale) is within
    3u + O(u²) of m (the two doubles' roundings into f32 that make σi, σo,
    and its own), the product rounds once (4u|x|m in all); merged_zp carries
    2u|zi|m from the scale ratio and u|zo − zi·m| from its rounding; the sum
    rounds once (u|y|); 5u leaves room for every O(u²).  0 for the same type
    (a plain convert)."""
    if p_in == p_out:
        return np.zeros(len(y))
    m = p_in.scale_f32 / p_out.scale_f32
    x = np.abs(np.asarray(x, dtype=np.float64).reshape(-1))
    return 5 * u * (x * m + abs(p_in.zero_point) * m + abs(p_out.zero_point) + np.abs(y)) * _SLACK


def window_shlo(op: str, ex: Exact, params: tuple, operands: tuple, u: float = F32_UNIT_ROUNDOFF) -> np.ndarray:
    """|v − y| for stablehlo-legalize-quant-to-math; for add, |r − y| − 1/2:
    each operand is rounded to the result's scale before the i32 sum, so
    r − y = e1 + e2 with |ei| <= 1/2 + (operand i's requantize window) — the
    result is within 1 of y everywhere, not only near a tie.  Multiply (and
    every op but add, dot/convolution) lowers to dequantize → f32 op →
    uniform_quantize: the spec's steps, `window_spec`."""
    if op == "quantize" or op == "multiply":
        return window_spec(ex, u)
    if op == "requantize":
        p_in, p_out = params
        return _shlo_requant_window(operands[0], p_in, p_out, _f(ex.y), u)
    if op == "add":
        pa, pb, po = params
        a, b = (np.asarray(v).reshape(-1) for v in operands)
        ya = (a.astype(np.float64) - pa.zero_point) * (pa.scale_f32 / po.scale_f32) + po.zero_point
        yb = (b.astype(np.float64) - pb.zero_point) * (pb.scale_f32 / po.scale_f32) + po.zero_point
        wa = _shlo_requant_window(a, pa, po, np.abs(ya) * (1 + 2.0 ** -40), u)
        wb = _shlo_requant_window(b, pb, po, np.abs(yb) * (1 + 2.0 ** -40), u)
        return 0.5 + (wa + wb) * _SLACK
    raise ValueError(op)


def admissible(ex: Exact, eps) -> tuple[np.ndarray, np.ndarray]:
    """The integers a scheme with window ε can return, per element:
    clamp(n) for every integer n within 1/2 of some v with |v − y| <= ε, i.e.
    [clamp(ceil(y − ε − 1/2)), clamp(floor(y + ε + 1/2))] with the
    *unclamped* y — so a result deep in saturation must be the bound itself,
    however wide ε (clamping after rounding to integers, as TFLite does, and
    before, as the spec does, give the same: the bounds are integers)."""
    lo, hi = [], []
    for y, e in zip(ex.y, np.asarray(eps, dtype=np.float64).reshape(-1).tolist()):
        w = Fraction(e) + Fraction(1, 2)
        lo.append(min(max(math.ceil(y - w), ex.qmin), ex.qmax))
        hi.append(min(max(math.floor(y + w), ex.qmin), ex.qmax))
    return np.array(lo, dtype=np.int64), np.array(hi, dtype=np.int64)


def accepted(r, r_spec, ex: Exact, eps) -> np.ndarray:
    """The oracle's rule, per element: the spec's result, or an integer in
    `admissible(ex, ε)`.  A correctly rounded result is one with ε = 0."""
    r = np.asarray(r, dtype=np.int64).reshape(-1)
    lo, hi = admissible(ex, eps)
    return (r == np.asarray(r_spec).reshape(-1)) | ((lo <= r) & (r <= hi))


SCHEMES = ("float", "tflite gemmlowp", "tflite single rounding", "stablehlo quant-to-math")


def scheme_window(scheme: str, op: str, ex: Exact, params: tuple, operands: tuple,
                  u: float = F32_UNIT_ROUNDOFF) -> np.ndarray:
    """ε of one implementation scheme (`SCHEMES`): "float" is any
    implementation of the spec's own f32 steps (spec/quantized.py, XLA's
    dequantize → op → quantize fallback), `window_spec`."""
    if scheme == "float":
        return window_spec(ex, u)
    if scheme in ("tflite gemmlowp", "tflite single rounding"):
        return window_tflite(op, ex, params, scheme == "tflite single rounding", u)
    if scheme == "stablehlo quant-to-math":
        return window_shlo(op, ex, params, operands, u)
    raise ValueError(scheme)


def oracle_window(op: str, ex: Exact, params: tuple, operands: tuple, schemes: tuple = SCHEMES,
                  u: float = F32_UNIT_ROUNDOFF) -> np.ndarray:
    """ε the oracle allows: the widest window of the admitted schemes (their
    admissible ranges all contain the nearest integers to y, so the union of
    the ranges is the widest one's)."""
    return np.maximum.reduce([scheme_window(s, op, ex, params, operands, u) for s in schemes])


def type_window(op: str, params: tuple, u: float = F32_UNIT_ROUNDOFF, x_bound: float | None = None) -> float:
    """ε as a function of the types alone (a bound over every element): the
    per-element windows with T and |y| at their largest for operands in
    [qmin, qmax] (|y| <= T + |zo|); for quantize, `x_bound` bounds |x|."""
    def amax(p: Params) -> int:
        return max(abs(p.qmin - p.zero_point), abs(p.qmax - p.zero_point))

    def xmax(p: Params) -> int:
        return max(abs(p.qmin), abs(p.qmax))

    po = params[-1]
    if op == "quantize":
        T = x_bound / po.scale_f32
        ops = (np.array([x_bound]),)
    elif op == "requantize":
        T = amax(params[0]) * params[0].scale_f32 / po.scale_f32
        ops = (np.array([xmax(params[0])]),)
    elif op == "add":
        T = sum(amax(p) * p.scale_f32 / po.scale_f32 for p in params[:2])
        ops = (np.array([xmax(params[0])]), np.array([xmax(params[1])]))
    elif op == "multiply":
        T = amax(params[0]) * amax(params[1]) * params[0].scale_f32 * params[1].scale_f32 / po.scale_f32
        ops = (np.array([0]), np.array([0]))
    else:
        raise ValueError(op)
    T = Fraction(T)
    ex = Exact(np.array([T + abs(po.zero_point)], dtype=object), np.array([T], dtype=object),
               np.array([Fraction(0)], dtype=object), po.qmin, po.qmax)
    ws = [window_spec(ex, u), window_tflite(op, ex, params, False, u), window_tflite(op, ex, params, True, u)]
    if op == "add":
        wa = _shlo_requant_window(ops[0], params[0], po, np.array([amax(params[0]) * params[0].scale_f32 / po.scale_f32
                                                                  + abs(po.zero_point)]), u)
        wb = _shlo_requant_window(ops[1], params[1], po, np.array([amax(params[1]) * params[1].scale_f32 / po.scale_f32
                                                                  + abs(po.zero_point)]), u)
        ws.append(0.5 + (wa + wb) * _SLACK)
    elif op == "requantize":
        ws.append(_shlo_requant_window(ops[0], params[0], po, np.array([float(T) + abs(po.zero_point)]), u))
    return float(np.maximum.reduce(ws)[0]) * (1 + 2.0 ** -30)      # past the per-element windows' own float error
