"""spec/quantized.py's exact quantization semantics against an independent
integer implementation (tests/independent/quantized_reference.py: TFLite's
reference kernels in both builds, and stablehlo-legalize-quant-to-math),
and the accepted-deviation rule that module states and proves.

Truth is exact rational arithmetic (`fractions.Fraction`) for the real
result y every implementation approximates, and hand rules for ties and
the fixed-point primitives (round half away / half up / half even, a·b/2^31
rounded).  Per element, each test checks:

* the implementation lies in its proven window: |r − ŷ| <= 1/2 + ε_impl;
* the spec's result lies in its own: |r_spec − ŷ| <= 1/2 + ε_spec;
* the oracle's rule accepts the implementation (`accepted`);
* |r − r_spec| <= floor(1 + ε_impl + ε_spec) (= 1 wherever the windows sum below 1);

and the figures (largest difference, how far from a tie a difference
occurred) are measured per op, implementation and type family
(`python -m tests.spec.test_quantized_reference` prints the table).

Types: per-tensor, f32 expressed; storage si8, ui8, si16, si4; scales
log-uniform in [1e-3, 10] (with decimal and power-of-two picks); zero points
across the storage range; storage_min/max narrowed in a third of them.
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np
import pytest

from shlo_conform.spec.quantized import (Quantized, dequantize, dequantize_op_quantize, quantize, quantized_type,
                                         quantized_violations, uniform_quantize)
from tests.independent import quantized_reference as ref

STORAGE = {"si4": (4, -8, 7), "si8": (8, -128, 127), "ui8": (8, 0, 255), "si16": (16, -32768, 32767)}
ROUND_SCALES = (0.1, 0.05, 0.2, 0.0078125, 0.25, 1.0, 2.0, 0.3, 0.007, 3.0)


# --------------------------------------------------------------------------
# Types and operands
# --------------------------------------------------------------------------

def _scale(rng) -> float:
    """A double scale: log-uniform in [1e-3, 10], or one of the round ones (decimals, powers of two)."""
    if rng.random() < 0.2:
        return float(rng.choice(ROUND_SCALES))
    return float(10.0 ** rng.uniform(-3.0, 1.0))


def _bounds(rng, storage: str, narrow: bool) -> tuple[int, int]:
    bits, lo, hi = STORAGE[storage]
    if not narrow:
        return lo, hi
    a, b = sorted(rng.integers(lo, hi + 1, 2).tolist())
    return (a, b) if a < b else (lo, hi)


def _pair(storage: str, scale: float, zp: int, qmin: int, qmax: int):
    """The same type twice: the spec's QuantizedType and the reference's Params."""
    q = quantized_type(storage, "f32", scale, zp, storage_min=qmin, storage_max=qmax)
    assert quantized_violations(q) == []
    return ref.Params(scale, zp, qmin, qmax, STORAGE[storage][0]), q


def random_types(rng, storage: str, n: int, qmin=None, qmax=None, zero_zp: bool = False):
    """n types of one storage type sharing storage bounds (a baseline, as add/multiply's C1 asks)
    when `qmin`/`qmax` are given; random (a third narrowed) otherwise."""
    out = []
    for _ in range(n):
        lo, hi = (qmin, qmax) if qmin is not None else _bounds(rng, storage, rng.random() < 1 / 3)
        zp = 0 if zero_zp else int(rng.integers(lo, hi + 1))
        out.append(_pair(storage, _scale(rng), zp, lo, hi))
    return out


def storage_values(rng, p: ref.Params, n: int) -> np.ndarray:
    """Every value of a range of at most 512, else the bounds, the zero point and its neighbours, and n random."""
    if p.qmax - p.qmin < 512:
        return np.arange(p.qmin, p.qmax + 1, dtype=np.int64)
    edges = [p.qmin, p.qmin + 1, p.qmax - 1, p.qmax, p.zero_point - 1, p.zero_point, p.zero_point + 1]
    edges = [v for v in edges if p.qmin <= v <= p.qmax]
    return np.concatenate([np.array(edges, dtype=np.int64), rng.integers(p.qmin, p.qmax + 1, n)])


def operand_pairs(rng, pa: ref.Params, pb: ref.Params, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Boundary × boundary (bounds, zero points, their neighbours) and n random pairs."""
    def edges(p):
        return [v for v in (p.qmin, p.qmin + 1, p.zero_point - 1, p.zero_point, p.zero_point + 1, p.qmax - 1, p.qmax)
                if p.qmin <= v <= p.qmax]
    ea, eb = np.meshgrid(edges(pa), edges(pb), indexing="ij")
    a = np.concatenate([ea.reshape(-1), rng.integers(pa.qmin, pa.qmax + 1, n)]).astype(np.int64)
    b = np.concatenate([eb.reshape(-1), rng.integers(pb.qmin, pb.qmax + 1, n)]).astype(np.int64)
    return a, b


# --------------------------------------------------------------------------
# One comparison
# --------------------------------------------------------------------------

def _dist(r, ex: ref.Exact) -> np.ndarray:
    """|r − ŷ| exactly (Fractions)."""
    return np.abs(np.array([Fraction(int(v)) for v in np.asarray(r).reshape(-1)], dtype=object) - ex.yhat)


def _within(r, ex: ref.Exact, eps) -> np.ndarray:
    """r among the integers a scheme with window ε may return (`admissible`)."""
    lo, hi = ref.admissible(ex, eps)
    r = np.asarray(r, dtype=np.int64).reshape(-1)
    return (lo <= r) & (r <= hi)


class Tally:
    """Figures of one (op, implementation, family) over many types."""

    def __init__(self):
        self.n = self.mismatches = self.max_diff = 0
        self.max_tie_distance = 0.0        # over mismatches: |ŷ − (r + r_spec)/2|
        self.max_window_use = 0.0          # over mismatches: that distance / max(ε_impl, ε_spec)
        self.where = None
        self.refused = 0                   # types or elements outside the implementation's domain
        self.failures: list[str] = []

    def add(self, r, r_spec, ex: ref.Exact, eps_impl, eps_spec, eps_oracle, context: str):
        r, r_spec = np.asarray(r).reshape(-1), np.asarray(r_spec).reshape(-1)
        self.n += r.size
        if not _within(r, ex, eps_impl).all():
            self.failures.append(f"implementation outside its window: {context}")
        if not _within(r_spec, ex, eps_spec).all():
            self.failures.append(f"spec outside its window: {context}")
        if not ref.accepted(r, r_spec, ex, eps_oracle).all():
            self.failures.append(f"oracle rule rejects: {context}")
        diff = np.abs(r - r_spec)
        k = np.floor(1 + np.asarray(eps_impl) + np.asarray(eps_spec))
        if (diff > k).any():
            self.failures.append(f"|r - r_spec| above floor(1 + eps): {context}")
        self.max_diff = max(self.max_diff, int(diff.max(initial=0)))
        idx = np.flatnonzero(diff)
        self.mismatches += idx.size
        for i in idx.tolist():
            d = float(abs(ex.yhat[i] - Fraction(int(r[i]) + int(r_spec[i]), 2)))
            use = d / max(float(np.asarray(eps_impl)[i]), float(np.asarray(eps_spec)[i]), 1e-300)
            if d > self.max_tie_distance or self.where is None:
                self.max_tie_distance = max(self.max_tie_distance, d)
                self.where = f"{context} element {i}: r={int(r[i])} spec={int(r_spec[i])} y={float(ex.y[i])!r}"
            self.max_window_use = max(self.max_window_use, use)

    def row(self) -> dict:
        return {"n": self.n, "mismatches": self.mismatches, "max|r-spec|": self.max_diff,
                "max tie distance": self.max_tie_distance, "max share of window": self.max_window_use,
                "refused": self.refused, "where": self.where}


def _spec_storage(masked) -> np.ndarray:
    assert not np.ma.getmaskarray(masked).any()
    return np.asarray(np.ma.getdata(masked)).astype(np.int64).reshape(-1)


# --------------------------------------------------------------------------
# The families, each measured once (lru_cache) and read by several tests
# --------------------------------------------------------------------------

REQUANT_FAMILIES = [("si8", "si8"), ("ui8", "ui8"), ("si16", "si16"), ("si4", "si4"), ("si8", "ui8"),
                    ("si16", "si8"), ("si8", "si16")]
BINARY_FAMILIES = ["si8", "ui8", "si16", "si4"]
IMPLS = ("tflite gemmlowp", "tflite single rounding", "stablehlo quant-to-math")


@lru_cache(maxsize=None)
def requantize_family(fam: tuple[str, str], n_types: int = 60) -> dict:
    rng = np.random.default_rng(1000 + REQUANT_FAMILIES.index(fam))
    tallies = {k: Tally() for k in IMPLS}
    for _ in range(n_types):
        (pi, qi), = random_types(rng, fam[0], 1)
        (po, qo), = random_types(rng, fam[1], 1)
        x = storage_values(rng, pi, 400)
        spec = _spec_storage(uniform_quantize(Quantized(x, qi), qo))
        ex = ref.exact_requantize(x, pi, po)
        eps_spec = ref.window_spec(ex)
        eps_oracle = ref.oracle_window("requantize", ex, (pi, po), (x,))
        ctx = f"{qi} -> {qo}"
        for name, single in (("tflite gemmlowp", False), ("tflite single rounding", True)):
            r = ref.requantize(x, pi, po, single_rounding=single)
            tallies[name].add(r, spec, ex, ref.window_tflite("requantize", ex, (pi, po), single), eps_spec,
                              eps_oracle, ctx)
        r = np.clip(ref.shlo_requantize(x, pi, po, clamp=po.bits < 32), po.qmin, po.qmax)
        tallies["stablehlo quant-to-math"].add(r, spec, ex, ref.window_shlo("requantize", ex, (pi, po), (x,)),
                                               eps_spec, eps_oracle, ctx)
    return tallies


def _binary_types(rng, storage: str, zero_zp: bool):
    lo, hi = _bounds(rng, storage, rng.random() < 1 / 3)
    if zero_zp and not lo <= 0 <= hi:
        lo, hi = min(lo, 0), max(hi, 0)
    return random_types(rng, storage, 3, lo, hi, zero_zp=zero_zp)


@lru_cache(maxsize=None)
def add_family(storage: str, n_types: int = 40, n_pairs: int = 300) -> dict:
    rng = np.random.default_rng(2000 + BINARY_FAMILIES.index(storage))
    tallies = {k: Tally() for k in IMPLS}
    for _ in range(n_types):
        (pa, qa), (pb, qb), (po, qo) = _binary_types(rng, storage, zero_zp=False)
        a, b = operand_pairs(rng, pa, pb, n_pairs)
        spec = _spec_storage(dequantize_op_quantize(np.add, Quantized(a, qa), Quantized(b, qb), qo))
        ex = ref.exact_add(a, b, pa, pb, po)
        eps_spec = ref.window_spec(ex)
        eps_oracle = ref.oracle_window("add", ex, (pa, pb, po), (a, b))
        ctx = f"{qa} + {qb} -> {qo}"
        for name, single in (("tflite gemmlowp", False), ("tflite single rounding", True)):
            try:
                r = ref.add(a, b, pa, pb, po, single_rounding=single)
            except ValueError:           # Prepare refuses: the output multiplier is not below 1
                assert ref.add_multipliers(pa, pb, po)["mo"] >= 1
                tallies[name].refused += 1
                continue
            tallies[name].add(r, spec, ex, ref.window_tflite("add", ex, (pa, pb, po), single), eps_spec,
                              eps_oracle, ctx)
        r = ref.shlo_add(a, b, pa, pb, po)
        tallies["stablehlo quant-to-math"].add(r, spec, ex, ref.window_shlo("add", ex, (pa, pb, po), (a, b)),
                                               eps_spec, eps_oracle, ctx)
    return tallies


def _tflite_mul_domain(a, b, pa, pb, po, single: bool) -> np.ndarray:
    """Elements where TFLite's int32 Mul is defined: the product, its left
    shift (gemmlowp) and the scaled result within int32."""
    qm, shift = ref.quantize_multiplier(pa.scale_f32 * pb.scale_f32 / po.scale_f32, single)
    prod = (a - pa.zero_point) * (b - pb.zero_point)
    ok = np.abs(prod) <= ref.INT32_MAX
    if not single:
        ok &= np.abs(prod) * (1 << max(shift, 0)) <= ref.INT32_MAX
    scaled = np.abs(prod).astype(object) * qm / 2 ** (31 - shift)
    return ok & np.array([s + abs(po.zero_point) + 1 <= ref.INT32_MAX for s in scaled], dtype=bool)


@lru_cache(maxsize=None)
def multiply_family(storage: str, n_types: int = 40, n_pairs: int = 300) -> dict:
    rng = np.random.default_rng(3000 + BINARY_FAMILIES.index(storage))
    tallies = {k: Tally() for k in IMPLS}
    for _ in range(n_types):
        (pa, qa), (pb, qb), (po, qo) = _binary_types(rng, storage, zero_zp=storage == "si16")
        a, b = operand_pairs(rng, pa, pb, n_pairs)
        spec = _spec_storage(dequantize_op_quantize(np.multiply, Quantized(a, qa), Quantized(b, qb), qo))
        ex = ref.exact_multiply(a, b, pa, pb, po)
        eps_spec = ref.window_spec(ex)
        eps_oracle = ref.oracle_window("multiply", ex, (pa, pb, po), (a, b))
        ctx = f"{qa} * {qb} -> {qo}"
        for name, single in (("tflite gemmlowp", False), ("tflite single rounding", True)):
            ok = _tflite_mul_domain(a, b, pa, pb, po, single)
            if (~ok).any():
                # Outside TFLite's int32 arithmetic: the reference refuses, and the spec saturates there.
                with pytest.raises(OverflowError):
                    ref.multiply(a[~ok], b[~ok], pa, pb, po, single_rounding=single)
                assert all(v in (po.qmin, po.qmax) for v in spec[~ok].tolist()), ctx
                tallies[name].refused += int((~ok).sum())
            sub = ex.take(ok)
            r = ref.multiply(a[ok], b[ok], pa, pb, po, single_rounding=single)
            tallies[name].add(r, spec[ok], sub, ref.window_tflite("multiply", sub, (pa, pb, po), single),
                              eps_spec[ok], eps_oracle[ok], ctx)
        # StableHLO lowers multiply to dequantize → f32 multiply → uniform_quantize: the spec's steps, in numpy f32.
        f = (ref.shlo_dequantize(a, pa) * ref.shlo_dequantize(b, pb)).astype(np.float32)
        tallies["stablehlo quant-to-math"].add(ref.shlo_quantize(f, po), spec, ex,
                                               ref.window_shlo("multiply", ex, (pa, pb, po), (a, b)), eps_spec,
                                               eps_oracle, ctx)
    return tallies


def float_operands(rng, p: ref.Params, n: int) -> np.ndarray:
    """f32 values across (and past) the type's range: random, near every half-integer of x/σ, and exactly there."""
    s = p.scale_f32
    centre = (p.qmin + p.qmax) / 2 - p.zero_point
    span = (p.qmax - p.qmin) / 2 + 4
    k = rng.integers(math.floor(centre - span), math.ceil(centre + span), n)
    half = ((k + 0.5) * s).astype(np.float32)
    return np.concatenate([rng.uniform(centre - span, centre + span, n) * s, half,
                           np.nextafter(half, np.float32(np.inf)), np.nextafter(half, np.float32(-np.inf))]
                          ).astype(np.float32)


@lru_cache(maxsize=None)
def quantize_family(storage: str, n_types: int = 40, n_values: int = 300) -> dict:
    rng = np.random.default_rng(4000 + BINARY_FAMILIES.index(storage))
    tallies = {k: Tally() for k in ("tflite", "stablehlo quant-to-math")}
    for _ in range(n_types):
        (p, q), = random_types(rng, storage, 1)
        x = float_operands(rng, p, n_values)
        spec = _spec_storage(quantize(x, q))
        ex = ref.exact_quantize(x, p)
        eps_spec = ref.window_spec(ex)
        eps_oracle = ref.oracle_window("quantize", ex, (p,), (x,))
        ctx = str(q)
        tallies["tflite"].add(ref.affine_quantize(x, p), spec, ex, ref.window_tflite("quantize", ex, (p,)), eps_spec,
                              eps_oracle, ctx)
        tallies["stablehlo quant-to-math"].add(ref.shlo_quantize(x, p), spec, ex,
                                               ref.window_shlo("quantize", ex, (p,), (x,)), eps_spec, eps_oracle, ctx)
    return tallies


# --------------------------------------------------------------------------
# The fixed-point primitives, by hand / exactly
# --------------------------------------------------------------------------

def _half_away(f: Fraction) -> int:
    n = math.floor(abs(f) + Fraction(1, 2))
    return n if f >= 0 else -n


def _half_up(f: Fraction) -> int:
    return math.floor(f + Fraction(1, 2))


def _half_even(f: Fraction) -> int:
    return round(f)                      # Python's round of a Fraction: ties to even


def test_quantize_multiplier_is_q31_within_its_bound():
    """m̃ = q_fixed·2^(shift−31) with q_fixed in [2^30, 2^31) and |m̃ − m| <= 2^-31·m,
    over powers of two, their neighbours, the carry to 2^31 and random m; (2^30, 1) for 1.0 by hand."""
    assert ref.quantize_multiplier(1.0) == (1 << 30, 1)
    assert ref.quantize_multiplier(0.5) == (1 << 30, 0)
    assert ref.quantize_multiplier(0.75) == (3 << 29, 0)
    assert ref.quantize_multiplier(2.0 ** -40) == (0, 0)                # flushed (shift < -31)
    assert ref.quantize_multiplier(2.0 ** 40, single_rounding=True) == ((1 << 31) - 1, 30)
    carry = math.nextafter(1.0, 0.0)                                        # q·2^31 rounds to 2^31: halved
    assert ref.quantize_multiplier(carry) == (1 << 30, 1)
    rng = np.random.default_rng(1)
    ms = [2.0 ** k for k in range(-31, 20)] + [math.nextafter(2.0 ** k, 0) for k in range(-30, 20)]
    ms += (10.0 ** rng.uniform(-9, 5, 3000)).tolist()
    for m in ms:
        qm, shift = ref.quantize_multiplier(m)
        assert (1 << 30) <= qm < (1 << 31), m
        assert abs(Fraction(qm) * Fraction(2) ** (shift - 31) - Fraction(m)) <= Fraction(m) / 2 ** 31, m


def test_srdhm_and_rounding_divide_by_pot_round_half_away():
    """SRDHM(a, b) = a·b/2^31 rounded half up, toward +inf (INT32_MIN² saturated);
    RoundingDivideByPOT(x, e) = x/2^e rounded half away from zero — checked exactly."""
    rng = np.random.default_rng(2)
    a = np.concatenate([rng.integers(ref.INT32_MIN, ref.INT32_MAX, 4000), [ref.INT32_MIN, ref.INT32_MAX, 0, 1, -1,
                                                                          1 << 30, -(1 << 30)]])
    for b in [1 << 30, (1 << 31) - 1, 3 << 29, 1288490189, ref.INT32_MIN, 1, 0, -(1 << 30)]:
        got = ref.srdhm(a, b)
        want = [ref.INT32_MAX if (x == b == ref.INT32_MIN) else _half_up(Fraction(int(x) * b, 1 << 31))
                for x in a.tolist()]
        assert got.tolist() == want, b
    x = np.concatenate([rng.integers(-(1 << 31), 1 << 31, 3000), np.arange(-20, 21)])
    for e in (0, 1, 2, 5, 17, 31):
        assert ref.rounding_divide_by_pot(x, e).tolist() == [_half_away(Fraction(int(v), 1 << e)) for v in x.tolist()]


def test_multiply_by_quantized_multiplier_builds():
    """Single rounding = x·m̃ rounded half up (one rounding); gemmlowp = the
    same value rounded twice: half up at 2^-right (SRDHM), then half away."""
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.integers(-(1 << 20), 1 << 20, 2000), np.arange(-9, 10)])
    for m in (0.3, 0.25, 0.75, 1.5, 0.001234, 3.7e-6, 7.0):
        qm, shift = ref.quantize_multiplier(m)
        exact = [Fraction(int(v) * qm) * Fraction(2) ** (shift - 31) for v in x.tolist()]
        assert ref.multiply_by_quantized_multiplier(x, qm, shift, True).tolist() == [_half_up(f) for f in exact]
        right = max(-shift, 0)
        inner = [_half_up(f * 2 ** right) for f in exact]
        assert ref.multiply_by_quantized_multiplier(x, qm, shift).tolist() == [
            _half_away(Fraction(v, 1 << right)) for v in inner]


def test_tflite_int32_overflow_is_refused():
    """Where TFLite's int32 arithmetic overflows there is no TFLite result: the reference says so."""
    p8 = ref.Params(1.0, 0, -128, 127, 8)
    with pytest.raises(OverflowError):
        ref.multiply_by_quantized_multiplier([1 << 20], *ref.quantize_multiplier(4096.0))
    with pytest.raises(OverflowError):
        ref.multiply([127], [127], p8, p8, ref.Params(1e-6, 0, -128, 127, 8))
    with pytest.raises(ValueError):                                       # Add's Prepare: output multiplier >= 1
        ref.add([1], [1], p8, p8, ref.Params(2.0 ** -21, 0, -128, 127, 8))


# --------------------------------------------------------------------------
# Exact agreement
# --------------------------------------------------------------------------

@pytest.mark.parametrize("storage", BINARY_FAMILIES)
def test_dequantize_is_bit_exact_in_every_implementation(storage):
    """One f32 product of an exact integer: TFLite's Dequantize, StableHLO's
    lowering and the spec agree bit for bit (no deviation is acceptable)."""
    rng = np.random.default_rng(5)
    for p, q in random_types(rng, storage, 40):
        x = storage_values(rng, p, 500)
        want = dequantize(x, q)
        assert want.dtype == np.float32
        for got in (ref.dequantize(x, p), ref.shlo_dequantize(x, p)):
            assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), str(q)


@pytest.mark.parametrize("storage", BINARY_FAMILIES)
def test_quantize_from_float_equals_the_spec_in_stablehlos_lowering(storage):
    """stablehlo-legalize-quant-to-math emits the spec's own steps: equal everywhere, ties included."""
    rng = np.random.default_rng(6)
    for p, q in random_types(rng, storage, 20):
        x = float_operands(rng, p, 200)
        assert np.array_equal(ref.shlo_quantize(x, p), _spec_storage(quantize(x, q))), str(q)


def test_integer_results_admit_no_deviation():
    """Where ŷ is an integer (a power-of-two scale ratio >= 1, the same
    type), every window is below 1/2 and every implementation must return ŷ."""
    rng = np.random.default_rng(7)
    count = 0
    for _ in range(60):
        storage = str(rng.choice(["si8", "ui8", "si16", "si4"]))
        (pi, qi), = random_types(rng, storage, 1)
        k = int(rng.integers(0, 4)) if rng.random() < 0.7 else None
        scale = pi.scale / 2 ** k if k is not None else pi.scale
        po, qo = _pair(storage, scale, int(rng.integers(pi.qmin, pi.qmax + 1)) if k is not None else pi.zero_point,
                       pi.qmin, pi.qmax)
        x = storage_values(rng, pi, 300)
        ex = ref.exact_requantize(x, pi, po)
        assert all(v.denominator == 1 for v in ex.yhat)
        want = np.array([int(v) for v in ex.yhat])
        spec = _spec_storage(uniform_quantize(Quantized(x, qi), qo))
        for got in (spec, ref.requantize(x, pi, po), ref.requantize(x, pi, po, True),
                    np.clip(ref.shlo_requantize(x, pi, po), po.qmin, po.qmax)):
            assert np.array_equal(got, want), f"{qi} -> {qo}"
        count += x.size
    assert count > 5000


# --------------------------------------------------------------------------
# Ties: decided by each implementation's own rule
# --------------------------------------------------------------------------

def test_exact_ties_each_by_its_rule():
    """si8 scale 1 → scale 2 (m = 1/2, exact in Q31 and f32): y = a/2 + zo is
    a tie for every odd a.  The spec rounds it to even, StableHLO's lowering
    too (f32 exact, then round_nearest_even), both TFLite builds toward +inf
    (shift 0: SRDHM alone, half up; single rounding: half up) — each as its
    rule says, and they differ on ties only (by 1)."""
    a = np.arange(-128, 128)
    for zo in (0, 1, -7):
        pi, qi = _pair("si8", 1.0, 0, -128, 127)
        po, qo = _pair("si8", 2.0, zo, -128, 127)
        y = [Fraction(int(v), 2) + zo for v in a.tolist()]
        spec = _spec_storage(uniform_quantize(Quantized(a, qi), qo))
        assert spec.tolist() == [_half_even(f) for f in y]
        assert np.clip(ref.shlo_requantize(a, pi, po), -128, 127).tolist() == spec.tolist()
        assert ref.requantize(a, pi, po).tolist() == [_half_up(f) for f in y]
        assert ref.requantize(a, pi, po, True).tolist() == [_half_up(f) for f in y]
        for impl in (ref.requantize(a, pi, po), ref.requantize(a, pi, po, True)):
            diff = impl - spec
            tie = np.array([f.denominator == 2 for f in y])
            assert (diff[~tie] == 0).all() and (diff[tie] != 0).any() and np.abs(diff).max() == 1


def test_gemmlowp_double_rounding_reaches_its_window():
    """m = 1/4 (scale 1 → 4): Q31 exact, shift −1, so gemmlowp rounds a/2
    half away and then halves again: a = 1 gives y = 0.25 yet 1 — a quarter
    from the tie, exactly w(m) = 2^(shift−1) = 1/4, the window's edge (the
    bound is attained).  The spec and single rounding give 0."""
    pi, qi = _pair("si8", 1.0, 0, -128, 127)
    po, qo = _pair("si8", 4.0, 0, -128, 127)
    a = np.array([1, -1, 5, -5, 2, 3])
    y = [Fraction(int(v), 4) for v in a.tolist()]
    assert ref.requantize(a, pi, po).tolist() == [_half_away(Fraction(_half_up(Fraction(int(v), 2)), 2))
                                                  for v in a.tolist()]
    assert ref.requantize(a[:1], pi, po).tolist() == [1]                    # by hand: 1/2 → 1 (up), 1/2 → 1 (away)
    assert ref.requantize(a, pi, po, True).tolist() == [_half_up(f) for f in y]
    assert _spec_storage(uniform_quantize(Quantized(a, qi), qo)).tolist() == [_half_even(f) for f in y]
    ex = ref.exact_requantize(a, pi, po)
    eps = ref.window_tflite("requantize", ex, (pi, po))
    assert float(eps[0]) == pytest.approx(0.25, rel=1e-6)
    assert _dist(ref.requantize(a[:1], pi, po), ex)[0] == Fraction(3, 4)   # = 1/2 + w(m) exactly
    assert _within(ref.requantize(a, pi, po), ex, eps).all()
    assert not _within(ref.requantize(a, pi, po), ex, ref.window_tflite("requantize", ex, (pi, po), True)).all()


def test_q31_multiplier_error_decides_a_near_tie():
    """The 2^-30·T term of TFLite's window is needed: σi = 0.326463907957077,
    σo = 3.816516160964966 (both binary32 values), a = ±19073 (found by
    search): y = ±1631.49999996, 3.9e-8 short of the tie, and m̃ = Q31(m) is
    above m by more than that over T — single rounding returns ±1632, the
    wrong side of the tie: outside a zero window, inside 2^-30·T (1.5e-6)."""
    pi, qi = _pair("si16", 0.326463907957077, 0, -32768, 32767)
    po, qo = _pair("si16", 3.816516160964966, 0, -32768, 32767)
    a = np.array([19073, -19073])
    ex = ref.exact_requantize(a, pi, po)
    assert [abs(v) for v in ex.y] == [Fraction(19073) * Fraction(pi.scale) / Fraction(po.scale)] * 2
    r = ref.requantize(a, pi, po, single_rounding=True)
    assert r.tolist() == [1632, -1632]
    assert not _within(r, ex, np.zeros(2)).any()
    assert _within(r, ex, ref.window_tflite("requantize", ex, (pi, po), single_rounding=True)).all()


def test_quantize_ties_half_away_against_half_even():
    """x = (k + 1/2)·2^-3 exactly, scale 2^-3: x/σ is an exact tie.  TFLite:
    round half away from zero, then + zp; the spec: + zp in f32 (exact),
    then half to even — they differ where the two rules do."""
    for zp in (0, 3, -4):
        p, q = _pair("si8", 0.125, zp, -128, 127)
        k = np.arange(-100, 100)
        x = ((k + 0.5) * 0.125).astype(np.float32)
        t = [Fraction(int(v)) + Fraction(1, 2) for v in k.tolist()]
        tfl = ref.affine_quantize(x, p)
        spec = _spec_storage(quantize(x, q))
        assert tfl.tolist() == [min(max(_half_away(f) + zp, -128), 127) for f in t]
        assert spec.tolist() == [min(max(_half_even(f + zp), -128), 127) for f in t]
        assert (tfl != spec).sum() > 50 and np.abs(tfl - spec).max() == 1


# --------------------------------------------------------------------------
# The families
# --------------------------------------------------------------------------

def _check(tallies: dict, family) -> None:
    for name, t in tallies.items():
        assert not t.failures, (family, name, t.failures[:3])
        assert t.n > 0, (family, name)


def _near(fam) -> float:
    """How near a tie a relative window keeps a difference: 5u·(T + |y|) is
    below 2^-10 for 8-bit results, below 2^-6 for 16-bit ones."""
    return 2 ** -6 if "si16" in fam else 2 ** -10


@pytest.mark.long   # thousands of elements per family, measured: make test-long (CI)
@pytest.mark.parametrize("fam", REQUANT_FAMILIES, ids=["->".join(f) for f in REQUANT_FAMILIES])
def test_requantize_families(fam):
    """uniform_quantize q→q: every implementation within its window; TFLite
    at most 1 from the spec, single rounding only near a tie (2^-30·T and the
    spec's 5u(T + |y|)); StableHLO's lowering within 1 too for 8- and 4-bit
    inputs — not for 16-bit ones (test_stablehlo_requantize_cancellation)."""
    t = requantize_family(fam)
    _check(t, fam)
    for name in ("tflite gemmlowp", "tflite single rounding"):
        assert t[name].max_diff <= 1, (fam, name)
    assert t["tflite single rounding"].max_tie_distance <= _near(fam)
    if fam[0] != "si16":                  # measured, not proven: its window reaches ~1.5 for m near 10^4
        assert t["stablehlo quant-to-math"].max_diff <= 1


@pytest.mark.long   # recomputes whole families (10–45 s): make test-long (CI)
def test_stablehlo_requantize_cancellation():
    """quant-to-math scales the raw storage value and adds merged_zp =
    zo − zi·m in f32: i16 scale 10, zp 32000 → scale 0.001, zp 0 (m = 10^4).
    By hand: x = 32001 (one step above the zero point, y ≈ 10^4);
    32001·10^4 = 320010000 is a tie between f32 neighbours 32 apart and
    rounds to even, 320009984; merged_zp = −3.2e8 exactly; the sum is 9984.
    The spec: 1·f32(10) / f32(0.001) = 9999.9995 → 10000.  Sixteen storage
    units, inside StableHLO's proven window 5u(|x|m + |zi|m + |zo| + |y|)
    (~190 here) — StableHLO's lowering departs from the spec it implements."""
    pi, qi = _pair("si16", 10.0, 32000, -32768, 32767)
    po, qo = _pair("si16", 0.001, 0, -32768, 32767)
    x = np.array([32001])
    assert ref.shlo_requantize(x, pi, po).tolist() == [9984]
    assert _spec_storage(uniform_quantize(Quantized(x, qi), qo)).tolist() == [10000]
    assert ref.requantize(x, pi, po).tolist() == [10000]
    ex = ref.exact_requantize(x, pi, po)
    assert _within([9984], ex, ref.window_shlo("requantize", ex, (pi, po), (x,))).all()
    assert not _within([9984], ex, ref.oracle_window("requantize", ex, (pi, po), (x,), ref.SCHEMES[:3])).all()
    worst = requantize_family(("si16", "si16"))["stablehlo quant-to-math"].max_diff
    assert worst > 1


@pytest.mark.long   # recomputes whole families (10–45 s): make test-long (CI)
def test_requantize_gemmlowp_needs_its_wide_window():
    """gemmlowp's double rounding parts from the spec away from ties (up to
    w(m) <= 1/4 from one): the near-tie rule of the other two would reject it."""
    worst = max(requantize_family(f)["tflite gemmlowp"].max_tie_distance for f in REQUANT_FAMILIES)
    assert worst > 0.05


@pytest.mark.long   # thousands of elements per family, measured: make test-long (CI)
@pytest.mark.parametrize("storage", BINARY_FAMILIES)
def test_add_families(storage):
    """add: TFLite (both builds) within its window (2^-28(T+1) + c·mo), at
    most 1 from the spec; StableHLO's lowering within 1/2 + its two
    requantize windows of y: at most 1 from the spec for 8- and 4-bit types
    (2 measured for i16, where its requantize cancels)."""
    t = add_family(storage)
    _check(t, storage)
    for name in ("tflite gemmlowp", "tflite single rounding"):
        assert t[name].max_diff <= 1, (storage, name)
    if storage != "si16":
        assert t["stablehlo quant-to-math"].max_diff <= 1


@pytest.mark.long   # recomputes whole families (10–45 s): make test-long (CI)
def test_add_stablehlo_lowering_parts_from_the_spec_far_from_ties():
    """Rounding each operand before the sum puts stablehlo's add off by one
    far from any tie: the oracle must allow ±1 everywhere for add lowered so."""
    worst = max(add_family(s)["stablehlo quant-to-math"].max_tie_distance for s in BINARY_FAMILIES)
    assert worst > 0.3


@pytest.mark.long   # thousands of elements per family, measured: make test-long (CI)
@pytest.mark.parametrize("storage", BINARY_FAMILIES)
def test_multiply_families(storage):
    """multiply: TFLite (both builds, where its int32 arithmetic is defined)
    within 2^-30·T + w(m), at most 1 from the spec; StableHLO's fallback is
    the spec's own steps (equal everywhere)."""
    t = multiply_family(storage)
    _check(t, storage)
    for name in IMPLS:
        assert t[name].max_diff <= 1, (storage, name)
    assert t["tflite single rounding"].max_tie_distance <= _near(storage)
    assert t["stablehlo quant-to-math"].max_diff == 0       # the spec's steps, in numpy's IEEE f32


@pytest.mark.long   # thousands of elements per family, measured: make test-long (CI)
@pytest.mark.parametrize("storage", BINARY_FAMILIES)
def test_quantize_families(storage):
    """uniform_quantize f32 → q: TFLite differs only near a tie (its zero
    point added after the rounding, ties away from zero), by 1; StableHLO's
    lowering is the spec's steps."""
    t = quantize_family(storage)
    _check(t, storage)
    assert t["tflite"].max_diff == 1 and t["tflite"].mismatches > 0       # ties (exact ones are sampled)
    assert t["tflite"].max_tie_distance <= _near(storage)
    assert t["stablehlo quant-to-math"].max_diff == 0


def test_the_rule_rejects_what_it_should():
    """The oracle's rule is not vacuous: ±2 is rejected everywhere here, and
    ±1 wherever ŷ is farther than ε from the half-integer between (most of
    the elements for requantize)."""
    rng = np.random.default_rng(8)
    rejected_one = total = 0
    for _ in range(30):
        (pi, qi), = random_types(rng, "si8", 1)
        (po, qo), = random_types(rng, "si8", 1)
        x = storage_values(rng, pi, 0)
        spec = _spec_storage(uniform_quantize(Quantized(x, qi), qo))
        ex = ref.exact_requantize(x, pi, po)
        eps = ref.oracle_window("requantize", ex, (pi, po), (x,))
        assert not ref.accepted(spec + 2, spec, ex, eps).any()
        assert not ref.accepted(spec - 2, spec, ex, eps).any()
        inside = (spec + 1 <= po.qmax) & (spec - 1 >= po.qmin)
        off = ~(ref.accepted(spec + 1, spec, ex, eps) | ref.accepted(spec - 1, spec, ex, eps))
        rejected_one += int((off & inside).sum())
        total += int(inside.sum())
    assert rejected_one > 0.4 * total


def test_type_window_bounds_every_element():
    """`type_window` (ε from the types alone) is at least every per-element oracle window."""
    rng = np.random.default_rng(9)
    for _ in range(40):
        storage = str(rng.choice(BINARY_FAMILIES))
        (pa, qa), (pb, qb), (po, qo) = _binary_types(rng, storage, zero_zp=False)
        a, b = operand_pairs(rng, pa, pb, 100)
        for op, ex, params, operands in (
                ("add", ref.exact_add(a, b, pa, pb, po), (pa, pb, po), (a, b)),
                ("multiply", ref.exact_multiply(a, b, pa, pb, po), (pa, pb, po), (a, b)),
                ("requantize", ref.exact_requantize(a, pa, po), (pa, po), (a,))):
            assert ref.oracle_window(op, ex, params, operands).max() <= ref.type_window(op, params), (op, storage)


def table() -> list[tuple]:
    rows = []
    for fam in REQUANT_FAMILIES:
        for name, t in requantize_family(fam).items():
            rows.append(("requantize", "->".join(fam), name, t.row()))
    for label, fn in (("add", add_family), ("multiply", multiply_family), ("quantize", quantize_family)):
        for s in BINARY_FAMILIES:
            for name, t in fn(s).items():
                rows.append((label, s, name, t.row()))
    return rows


if __name__ == "__main__":
    for op, fam, name, row in table():
        print(f"{op:10s} {fam:10s} {name:24s} n={row['n']:6d} mism={row['mismatches']:5d} "
              f"max|d|={row['max|r-spec|']} tie_dist={row['max tie distance']:.3g} "
              f"share={row['max share of window']:.3g} refused={row['refused']}\n    where: {row['where']}")
