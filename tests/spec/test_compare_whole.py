"""compare's whole-array claim (`Generic.whole`, spec/ops/compare.py
`arrays`) against its per-element fn, which stays the statement: every
direction, every compare type C3 allows, every element type — every pair of
the 8-bit (and 4-bit, and i1) types, and for the wider ones random bit
patterns, specials (±0, ±inf, NaNs of both signs, signaling ones, payloads,
subnormals, the extremes) against each other and their neighbours.  At each
element the claim's value is fn's answer, and it declines exactly the
elements where fn's answer is implementation-defined (TOTALORDER on pairs of
zeros or NaNs), holding fn's primary value there.  The checks are shown to
fail on a flipped direction, on TOTALORDER keys read from the narrow bits,
and on -0 told apart from +0 by FLOAT."""
from __future__ import annotations

import numpy as np
import pytest

from shlo_conform.oracle import fast
from shlo_conform.spec.dsl import ImplDefined
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.ops import compare as cmp
from shlo_conform.spec.types import I1, TensorType, element_type, exact_values, from_bits

pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning")

SPEC = OPS["compare"]
CLAIM = SPEC.semantics.generic.whole


def _inst(et, direction, compare_type):
    t = TensorType((), et)
    return SPEC.instance({"lhs": t, "rhs": t}, {"comparison_direction": direction, "compare_type": compare_type},
                         {"result": TensorType((), I1)})


def _configs(et):
    """(direction, compare_type) pairs: every direction with every legal type, and the type left out
    (its default: the first legal one) with LT."""
    return [(d, ct) for d in cmp.DIRECTIONS for ct in cmp.legal_compare_types(et)] + [("LT", None)]


def mismatches(claim, et, direction, compare_type, lhs, rhs, limit=5) -> list:
    """Where the claim (served as the oracle serves it: fast.whole) differs
    from fn: a value that is not fn's (primary) answer, or declining where fn
    states one value / not declining where it states several."""
    inst = _inst(et, direction, compare_type)
    got = fast.whole(claim, inst, [lhs, rhs], I1)
    assert got is not None, (et.name, direction, compare_type)
    values, declined = got
    bad = []
    for i, (a, b, v, d) in enumerate(zip(exact_values(lhs, et), exact_values(rhs, et), values.reshape(-1).tolist(),
                                         declined.reshape(-1).tolist())):
        want = SPEC.semantics.fn(inst, a, b)
        several = isinstance(want, ImplDefined)
        primary = next(iter(want.alternatives.values())) if several else want
        if v != primary or d != several:
            bad.append((a, b, v, d, want))
            if len(bad) >= limit:
                break
    return bad


def _all_pairs(et) -> tuple[np.ndarray, np.ndarray]:
    bits = np.arange(1 << et.bits, dtype=np.uint64)
    lhs, rhs = np.repeat(bits, len(bits)), np.tile(bits, len(bits))
    return from_bits(lhs.astype(et.bits_dtype), et), from_bits(rhs.astype(et.bits_dtype), et)


SMALL = ["i1", "si4", "ui4", "si8", "ui8", "f8E4M3FN", "f8E5M2"]


@pytest.mark.parametrize("name", SMALL)
def test_every_pair_of_a_small_type(name):
    et = element_type(name)
    lhs, rhs = _all_pairs(et)
    for direction, compare_type in _configs(et):
        assert not mismatches(CLAIM, et, direction, compare_type, lhs, rhs), (name, direction, compare_type)


def _float_specials(et) -> np.ndarray:
    """Bit patterns: ±0, ±smallest subnormal, ±largest subnormal, ±smallest
    normal, ±1, ±largest finite, ±inf, and NaNs of both signs: quiet, quiet
    with a payload, signaling (f32's come out quiet in fn's binary64
    values), the largest payload."""
    f = et.format
    sign, expo, mant = f.sign_mask, f.exponent_mask, f.mantissa_mask

    def bits_of(v):
        return int(np.asarray(v).astype(et.numpy).view(et.bits_dtype))
    pos = [0, 1, mant, mant + 1, bits_of(1.0), bits_of(float(f.max_finite))]
    if f.has_inf:
        quiet = 1 << (f.mantissa_bits - 1)
        pos += [expo, expo | quiet, expo | quiet | 1, expo | 1, expo | mant]
    else:   # f8E4M3FN: S.1111.111 is NaN, no infinity
        pos += [expo | mant]
    pos = sorted(set(pos))
    return np.array(pos + [p | sign for p in pos], dtype=np.uint64)


def _wide_pairs(et, rng, n=3000) -> tuple[np.ndarray, np.ndarray]:
    """Specials × specials, specials and their neighbours against random
    patterns, equal pairs, and random pairs."""
    if et.is_float:
        sp = _float_specials(et)
        near = np.concatenate([sp, sp + 1, np.where(sp > 0, sp - 1, sp)]).astype(np.uint64)
        near &= np.uint64((1 << et.bits) - 1)
    else:
        lo, hi = et.min_value, et.max_value
        vals = sorted({lo, lo + 1, -1 if lo < 0 else 2, 0, 1, hi - 1, hi})
        near = np.array([et.int_to_bits(v) for v in vals], dtype=np.uint64)
    top = 1 << et.bits
    rand = (rng.integers(0, 1 << 63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, n, dtype=np.uint64)) \
        if et.bits == 64 else rng.integers(0, top, n, dtype=np.uint64)
    rand2 = (rng.integers(0, 1 << 63, n, dtype=np.uint64) * np.uint64(2)) if et.bits == 64 else \
        rng.integers(0, top, n, dtype=np.uint64)
    grid_l, grid_r = np.repeat(near, len(near)), np.tile(near, len(near))
    mixed = rng.choice(near, n)
    lhs = np.concatenate([grid_l, mixed, rand, rand, rand])
    rhs = np.concatenate([grid_r, rand, mixed, rand, rand2])
    return from_bits(lhs.astype(et.bits_dtype), et), from_bits(rhs.astype(et.bits_dtype), et)


WIDE = ["si16", "ui16", "si32", "ui32", "si64", "ui64", "bf16", "f16", "f32", "f64"]


@pytest.mark.parametrize("name", WIDE)
def test_random_and_special_pairs_of_a_wide_type(name):
    et = element_type(name)
    lhs, rhs = _wide_pairs(et, np.random.default_rng(11))
    for direction, compare_type in _configs(et):
        assert not mismatches(CLAIM, et, direction, compare_type, lhs, rhs), (name, direction, compare_type)


@pytest.mark.parametrize("name", ["complex<f32>", "complex<f64>"])
def test_complex_pairs(name):
    """Components from ±0, ±1, 2, ±inf, NaN (both signs): every pair of
    complex numbers built from them, and random ones."""
    et = element_type(name)
    comps = np.array([0.0, -0.0, 1.0, -1.0, 2.0, np.inf, -np.inf, np.nan, -np.nan])
    re_, im_ = np.repeat(comps, len(comps)), np.tile(comps, len(comps))
    z = np.empty(len(re_), dtype=np.complex128)
    z.real, z.imag = re_, im_
    rng = np.random.default_rng(12)
    r = (rng.choice([-1.0, 0.0, 1.0, 1.5], 2000) + 1j * rng.choice([-1.0, 0.0, np.nan, 1.0], 2000))
    lhs = np.concatenate([np.repeat(z, len(z)), r, r]).astype(et.numpy)
    rhs = np.concatenate([np.tile(z, len(z)), r[::-1], r]).astype(et.numpy)
    for direction, compare_type in _configs(et):
        assert not mismatches(CLAIM, et, direction, compare_type, lhs, rhs), (name, direction, compare_type)


def test_totalorder_declines_the_implementation_defined_pairs():
    """-0 against +0 and NaN against itself under TOTALORDER: declined where
    the two readings differ (fn offers both), with totalOrder alone as the
    held value."""
    et = element_type("f32")
    lhs = np.array([-0.0, 0.0, np.nan, 1.0], dtype=np.float32)
    rhs = np.array([0.0, -0.0, np.nan, 2.0], dtype=np.float32)
    values, declined = fast.whole(CLAIM, _inst(et, "LE", "TOTALORDER"), [lhs, rhs], I1)
    assert declined.tolist() == [False, True, False, False] and values.tolist() == [True, False, True, True]
    values, declined = fast.whole(CLAIM, _inst(et, "EQ", "TOTALORDER"), [lhs, rhs], I1)
    assert declined.tolist() == [True, True, True, False] and values.tolist() == [False, False, True, False]


# --------------------------------------------------------------------------
# The checks above catch a wrong claim
# --------------------------------------------------------------------------

class _Flipped:
    """The instance with its direction replaced (GT for LT …)."""

    FLIP = {"LT": "GT", "GT": "LT", "LE": "GE", "GE": "LE", "EQ": "EQ", "NE": "NE"}

    def __init__(self, op):
        self.op = op
        self.comparison_direction = self.FLIP[op.comparison_direction]

    def __getattr__(self, name):
        return getattr(self.op, name)


def test_a_flipped_direction_is_caught():
    wrong = lambda op, a, b: cmp.arrays(_Flipped(op), a, b)
    for name in ("f8E5M2", "si8", "ui8", "i1"):
        et = element_type(name)
        lhs, rhs = _all_pairs(et)
        assert mismatches(wrong, et, "LT", None, lhs, rhs), name
    et = element_type("f32")
    lhs, rhs = _wide_pairs(et, np.random.default_rng(1), 200)
    assert mismatches(wrong, et, "GE", "TOTALORDER", lhs, rhs)


def test_totalorder_keys_through_binary64_are_caught():
    """numpy's widening to binary64 quiets a signaling NaN (f32, bf16,
    f8E5M2), so keys read from the widened bits order it above the quiet
    NaNs it precedes; the check sees the difference (this was the claim's
    and fn's own mistake until stop 28: both read widened values)."""
    def widened_keys(op, a, b):
        if op.compare_type != "TOTALORDER":
            return cmp.arrays(op, a, b)
        def key(x):
            with np.errstate(invalid="ignore"):
                bits = np.asarray(x).astype(np.float64).view(np.uint64)
            mag = (bits & np.uint64((1 << 63) - 1)).astype(np.int64)
            return np.where(bits >> np.uint64(63) != 0, -mag - 1, mag)
        by_key = cmp._ordered_arrays(op.comparison_direction, key(a), key(b))
        return by_key, np.zeros(by_key.shape, dtype=bool)
    et = element_type("f32")
    lhs, rhs = _wide_pairs(et, np.random.default_rng(2), 100)
    assert mismatches(widened_keys, et, "LT", "TOTALORDER", lhs, rhs)


@pytest.mark.parametrize("name, snan, qnan", [
    ("f32", 0x7F800001, 0x7FC00000), ("bf16", 0x7F81, 0x7FC0), ("f16", 0x7C01, 0x7E00),
    ("f8E5M2", 0x7D, 0x7E), ("f64", 0x7FF0000000000001, 0x7FF8000000000000),
])
def test_totalorder_puts_signaling_nans_below_quiet_ones(name, snan, qnan):
    """IEEE 754-2019 §5.10 (d)(3): for +NaN signaling orders below quiet,
    the reverse for -NaN.  By hand: LT on (s, q), (q, s), (-q, -s), (-s, -q)
    is true, false, true, false — in the claim (whole arrays) and in fn."""
    et = element_type(name)
    sign = et.format.sign_mask
    lhs = from_bits(np.array([snan, qnan, qnan | sign, snan | sign], dtype=et.bits_dtype), et)
    rhs = from_bits(np.array([qnan, snan, snan | sign, qnan | sign], dtype=et.bits_dtype), et)
    op = _inst(et, "LT", "TOTALORDER")
    by_key, _ = cmp.arrays(op, lhs, rhs)
    assert by_key.tolist() == [True, False, True, False]
    got = [cmp.element(op, a, b) for a, b in zip(exact_values(lhs, et), exact_values(rhs, et))]
    assert [g.primary if isinstance(g, ImplDefined) else g for g in got] == [True, False, True, False]


def test_signed_zeros_told_apart_are_caught():
    def by_bits(op, a, b):
        if op.comparison_direction == "EQ" and not op.lhs.element_type.is_complex:
            return np.asarray(a).view(op.lhs.element_type.bits_dtype) == np.asarray(b).view(op.lhs.element_type.bits_dtype)
        return cmp.arrays(op, a, b)
    et = element_type("bf16")
    lhs, rhs = _wide_pairs(et, np.random.default_rng(3), 100)
    assert mismatches(by_bits, et, "EQ", "FLOAT", lhs, rhs)
