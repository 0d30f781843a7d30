"""StableHLO v1.20's element types (issue 34): nine float formats, si2 and
ui2, declared once in spec/types.py and taken through everything that
derives from a declaration.

Truth, never this project's code:
* the spec's grammar ("Types", ../shared/upstream-1.20/spec.md) for which
  types exist and how MLIR spells them;
* ml_dtypes (pinned), a second implementation of every format: its dtypes'
  bit patterns, `finfo`, and its casts *from float32* — its casts from
  float64 go through float32 (two roundings: 5.000000000000001 becomes 4 in
  f4E2M1FN, and 1e-300 NaN in f8E8M0FNU), so a float64 point between two
  float32s is held against the cast of the float32 on the same side of
  every rounding boundary;
* hand computation: the nearest value by brute force over a format's
  finite values (exact Fractions), ties as APFloat breaks them, and the
  RFCs' rules for what a format cannot hold (rfcs/20241001-microscaling-
  formats.md: infinities clamp to ±max in f4/f6; f8E8M0FNU has no zero,
  sign or infinity);
* XLA:CPU (jaxlib 0.10.2) for real programs that jax lowers in each format,
  judged against the oracle's rounding, its deviations asserted as findings.
"""
from __future__ import annotations

import bisect
import math
import warnings
from fractions import Fraction

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

from shlo_conform.backends.base import Rejected
from shlo_conform.backends.xla import XlaBackend
from shlo_conform.generators.values import float_specials, integer_specials, random_floats
from shlo_conform.oracle import fast
from shlo_conform.oracle.elementwise import resolve
from shlo_conform.oracle.rounding import round_bits
from shlo_conform.spec import dsl, ieee
from shlo_conform.spec import types as T
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.ops.compare import total_order_keys
from shlo_conform.suites.causes import float_classes

# v1.20's grammar: TensorElementType ::= BooleanType | IntegerType | FloatType | ComplexType (spec.md "Types").
GRAMMAR = ["i1", "si2", "si4", "si8", "si16", "si32", "si64", "ui2", "ui4", "ui8", "ui16", "ui32", "ui64",
           "f4E2M1FN", "f6E2M3FN", "f6E3M2FN", "f8E3M4", "f8E4M3", "f8E4M3FN", "f8E4M3FNUZ", "f8E4M3B11FNUZ",
           "f8E5M2", "f8E5M2FNUZ", "f8E8M0FNU", "bf16", "f16", "f32", "f64", "complex<f32>", "complex<f64>"]
SEED = ["i1", "si4", "si8", "si16", "si32", "si64", "ui4", "ui8", "ui16", "ui32", "ui64",
        "f8E4M3FN", "f8E5M2", "bf16", "f16", "f32", "f64", "complex<f32>", "complex<f64>"]
# Each new type's ml_dtypes dtype and MLIR spelling (signless i2 is si2).
ML = {"si2": (ml_dtypes.int2, "i2"), "ui2": (ml_dtypes.uint2, "ui2"),
      "f4E2M1FN": (ml_dtypes.float4_e2m1fn, "f4E2M1FN"), "f6E2M3FN": (ml_dtypes.float6_e2m3fn, "f6E2M3FN"),
      "f6E3M2FN": (ml_dtypes.float6_e3m2fn, "f6E3M2FN"), "f8E3M4": (ml_dtypes.float8_e3m4, "f8E3M4"),
      "f8E4M3": (ml_dtypes.float8_e4m3, "f8E4M3"), "f8E4M3FNUZ": (ml_dtypes.float8_e4m3fnuz, "f8E4M3FNUZ"),
      "f8E4M3B11FNUZ": (ml_dtypes.float8_e4m3b11fnuz, "f8E4M3B11FNUZ"),
      "f8E5M2FNUZ": (ml_dtypes.float8_e5m2fnuz, "f8E5M2FNUZ"), "f8E8M0FNU": (ml_dtypes.float8_e8m0fnu, "f8E8M0FNU")}
NEW_FLOATS = [n for n in ML if not n.endswith("i2")]


def _all(et):
    """Every bit pattern of `et` and its value as ml_dtypes reads the byte (float64)."""
    bits = np.arange(1 << et.bits, dtype=np.uint8)
    return bits, bits.view(ML[et.name][0])


# --------------------------------------------------------------------------
# Declared once, read by name, outside the seed's sets
# --------------------------------------------------------------------------

def test_every_v120_type_is_declared_and_read_by_its_spellings():
    assert list(T.ELEMENT_TYPES) == GRAMMAR
    for name, (dtype, mlir) in ML.items():
        et = T.element_type(name)
        assert et.since == "v1.20" and et.mlir == mlir and T.element_type(mlir) is et
        assert np.dtype(et.numpy) == np.dtype(dtype) and T.element_type_of_dtype(dtype) is et
        assert T.parse_type(f"tensor<2x3x{mlir}>") == T.TensorType((2, 3), et)
    assert T.element_type("i2").is_signed and T.element_type("ui2").is_unsigned


def test_the_seed_type_sets_are_the_seeds():
    """The suite is generated from the seed's groups (spec/dsl: BOOLEAN …
    ANY): none holds a v1.20 type, so `generate` writes what it wrote."""
    assert [t.name for t in T.ALL_TYPES] == SEED and all(t.since is None for t in T.ALL_TYPES)
    for group in (dsl.BOOLEAN, dsl.SIGNED, dsl.UNSIGNED, dsl.INTEGER, dsl.FLOAT, dsl.COMPLEX, dsl.ANY):
        assert not any(t.since for t in group)
    assert [t.name for t in T.ALL_TYPES_V1_20] == GRAMMAR


# --------------------------------------------------------------------------
# Decoding and layout
# --------------------------------------------------------------------------

@pytest.mark.parametrize("name", NEW_FLOATS)
def test_every_pattern_decodes_to_ml_dtypes_value(name):
    et = T.element_type(name)
    fmt = et.format
    bits, vals = _all(et)
    truth = vals.astype(np.float64)
    for b, v in zip(bits.tolist(), truth.tolist()):
        got = fmt.decode(b)
        if math.isnan(v):
            assert isinstance(got, float) and math.isnan(got), hex(b)
        else:
            assert float(got) == v and math.copysign(1, float(got)) == math.copysign(1, v), hex(b)
    assert (T.nan_mask(bits, fmt) == np.isnan(truth)).all()
    info = ml_dtypes.finfo(ML[name][0])
    assert float(fmt.max_finite) == float(info.max) and float(fmt.min_normal) == float(info.smallest_normal)
    assert float(fmt.min_subnormal) == float(info.smallest_subnormal) and fmt.mantissa_bits == info.nmant
    assert fmt.has_negative_zero == bool(np.signbit(np.float32(-0.0).astype(ML[name][0]).astype(np.float64)))


@pytest.mark.parametrize("name", list(ML))
def test_bits_round_trip_in_the_low_bits_of_a_byte(name):
    """to_bits/from_bits against ml_dtypes' own bytes: every pattern, and
    values cast by ml_dtypes keep nothing above the type's width."""
    et = T.element_type(name)
    bits, vals = _all(et)
    back = T.from_bits(bits, et)
    assert back.dtype == np.dtype(ML[name][0])
    assert back.view(np.uint8).tolist() == bits.tolist() and T.to_bits(back, et).tolist() == bits.tolist()
    cast = np.linspace(-40, 40, 333).astype(np.float32).astype(ML[name][0])
    assert (T.to_bits(cast, et) >> et.bits).max() == 0
    assert T.to_bits(cast, et).tolist() == cast.view(np.uint8).tolist()


def test_two_bit_integers_wrap_and_keep_their_range():
    """si2 holds -2 … 1, ui2 0 … 3 (the spec's siN / uiN ranges); wrap is
    two's complement modulo 4, by hand; the generator's boundary values stay
    inside the range."""
    si2, ui2 = T.element_type("si2"), T.element_type("ui2")
    assert (si2.min_value, si2.max_value, ui2.min_value, ui2.max_value) == (-2, 1, 0, 3)
    for v in range(-9, 10):
        assert si2.wrap(v) == (v + 2) % 4 - 2 and ui2.wrap(v) == v % 4
    for et in (si2, ui2):
        vals = integer_specials(et).astype(np.int64).tolist()
        assert sorted(vals) == list(range(et.min_value, et.max_value + 1))
        bits, vals = _all(et)
        assert T.exact_values(vals, et) == [et.bits_to_int(b) for b in bits.tolist()]


# --------------------------------------------------------------------------
# Rounding: round_bits and fast.round_fast against hand computation and ml_dtypes
# --------------------------------------------------------------------------

def _finite(fmt):
    """Every finite value of the format once (-0 and +0 as one point), sorted, with a pattern each."""
    out = {}
    for b in range(1 << fmt.bits):
        v = fmt.decode(b)
        if isinstance(v, float):   # NaN, ±inf, -0
            if v == 0:
                continue
            if math.isnan(v) or math.isinf(v):
                continue
        out.setdefault(Fraction(v), b)
    return sorted(out.items())


def _nearest(x: Fraction, fmt, finite) -> int | str:
    """The pattern nearest x by brute force over the finite values, or
    "overflow" past the largest one.  Ties: the even significand (pattern
    LSB 0; the next value past the largest, continuing its binade, has
    max_finite_bits + 1); with no mantissa bit both significands are 1 and
    APFloat and ml_dtypes take the larger magnitude."""
    top = fmt.max_finite
    cands = [(v, b) for v, b in finite] + [(top + fmt.ulp(top), "overflow")]
    cands = sorted(cands + ([(-top - fmt.ulp(top), "overflow")] if fmt.signed else []))
    k = bisect.bisect_left([v for v, _ in cands], x)
    around = cands[max(0, k - 1):k + 1]          # the candidates either side of x: the nearest is one of them
    best = min(abs(x - v) for v, _ in around)
    near = [(v, b) for v, b in around if abs(x - v) == best]
    if len(near) == 1:
        return near[0][1]
    if fmt.mantissa_bits == 0:
        return max(near, key=lambda c: abs(c[0]))[1]

    def lsb(b):
        return (fmt.max_finite_bits + 1) & 1 if b == "overflow" else b & 1
    return next(b for _, b in near if lsb(b) == 0)


def _truth(x: float, fmt, finite) -> int:
    """The pattern the format's rules give the float64 x (hand computation, module docstring)."""
    if math.isnan(x):
        return fmt.nan_bits()   # ValueError where the format has no NaN (the caller asks only where it has)
    neg = math.copysign(1, x) < 0
    if not fmt.signed and (neg or x == 0):          # f8E8M0FNU: no negative values, no zero
        return fmt.nan_bits()
    if not fmt.has_zero and x == 0:
        return fmt.nan_bits()
    if math.isinf(x):
        return fmt.overflow_bits(neg) if not fmt.has_inf else fmt.inf_bits(neg)
    b = _nearest(Fraction(x), fmt, finite)
    if b == "overflow":
        return fmt.overflow_bits(neg)
    if fmt.decode(b) == 0:
        return fmt.zero_bits(neg)
    return b


def _points(fmt, finite):
    """float32 points — every midpoint of neighbours (across zero too),
    1 float32 ulp either side, the values themselves, the overflow
    threshold's neighbourhood, tiny values of both signs — and float64
    points 1 float64 ulp either side of each midpoint and threshold, each
    with the float32 on its side (for ml_dtypes' cast)."""
    vals = [float(v) for v, _ in finite]
    if fmt.has_zero:
        vals = sorted(set(vals + [0.0]))
    mids = [(a + b) / 2 for a, b in zip(vals[:-1], vals[1:])]
    top = float(fmt.max_finite)
    thr = top + float(fmt.ulp(fmt.max_finite)) / 2
    tiny = float(fmt.min_subnormal)
    edges = mids + [thr, -thr] if fmt.signed else mids + [thr]
    with np.errstate(over="ignore"):   # f8E8M0FNU's 2·max is past float32's range: +inf, a point too
        f32 = [np.float32(v) for v in vals + edges + [2 * top, 3e38, tiny / 2, tiny / 4, -tiny / 2, -tiny / 4,
                                                       tiny * 0.75, 0.0, -0.0, np.inf, -np.inf, np.nan]]
    for e in edges:
        e32 = np.float32(e)
        assert float(e32) == e                            # every midpoint and threshold is a float32
        f32 += [np.nextafter(e32, np.float32(np.inf)), np.nextafter(e32, np.float32(-np.inf))]
    f32 = list({int(np.array(p).view(np.uint32)): p for p in f32}.values())   # by bits: -0.0 is not +0.0
    pairs = [(float(p), p) for p in f32]
    for e in edges:
        e32 = np.float32(e)
        pairs += [(np.nextafter(e, np.inf), np.nextafter(e32, np.float32(np.inf))),
                  (np.nextafter(e, -np.inf), np.nextafter(e32, np.float32(-np.inf)))]
    return pairs


# f8E8M0FNU from float32: ml_dtypes (and XLA:CPU, the same conversion) round
# every float32 subnormal in (2^-127, 1.5·2^-127) up to 2^-126, where the
# nearest value is 2^-127 — a finding (measured: all 2^21 - 1 of them).
def _ml_dtypes_deviates(name, x32) -> bool:
    return name == "f8E8M0FNU" and 2.0 ** -127 < float(x32) < 1.5 * 2.0 ** -127


def _same(bits_a, bits_b, fmt) -> bool:
    return bits_a == bits_b or (fmt.is_nan_bits(bits_a) and fmt.is_nan_bits(bits_b))


@pytest.mark.parametrize("name", NEW_FLOATS)
def test_round_bits_is_the_nearest_and_ml_dtypes_cast(name):
    et = T.element_type(name)
    fmt = et.format
    finite = _finite(fmt)
    dtype = ML[name][0]
    checked = deviations = 0
    for x64, x32 in _points(fmt, finite):
        if not fmt.has_nan and math.isnan(x64):   # no pattern for it: "Conversion from NaN is undefined" (RFC)
            with pytest.raises(ValueError):
                round_bits(x64, fmt)
            continue
        want = _truth(x64, fmt, finite)
        got = round_bits(Fraction(x64) if math.isfinite(x64) and x64 != 0 else x64, fmt)
        assert _same(got, want, fmt), (name, x64, hex(got), hex(want))
        with np.errstate(over="ignore", invalid="ignore"):
            ml = int(T.to_bits(np.array([x32]).astype(dtype), et)[0])
        if _ml_dtypes_deviates(name, x32):
            deviations += 1
            assert ml == 1 and want == 0, (x64, hex(ml))
            continue
        assert _same(ml, want, fmt), (name, x64, float(x32), hex(ml), hex(want))
        checked += 1
    assert checked > 30
    assert (deviations > 0) == (name == "f8E8M0FNU")


@pytest.mark.parametrize("name", NEW_FLOATS)
def test_round_fast_states_round_bits_value(name):
    """fast.round_fast and its reference round_to_format on the same points:
    the value of round_bits' pattern, +0 for a negative rounding to zero in
    FNUZ (never the pattern 1.000…0, NaN there), saturation in f4/f6; where
    round_bits gives NaN, NaN — or ±inf for a value past the largest finite
    (the fast path's sign for "refuse": `agree` never accepts it)."""
    et = T.element_type(name)
    fmt = et.format
    finite = _finite(fmt)
    xs = np.array([x for x, _ in _points(fmt, finite) if not math.isnan(x)])
    wants = [fmt.decode(_truth(x, fmt, finite)) for x in xs.tolist()]
    for rounded in (fast.round_fast(xs.copy(), fmt), fast.round_to_format(xs.copy(), fmt)):
        for x, r, want in zip(xs.tolist(), rounded.tolist(), wants):
            if isinstance(want, float) and math.isnan(want):
                assert math.isnan(r) or (math.isinf(r) and abs(x) > float(fmt.max_finite)), (x, r)
            else:
                assert r == float(want) and math.copysign(1, r) == math.copysign(1, float(want)), (x, r, want)
        decided = fast.agree(rounded, rounded, fmt)
        bits = T.to_bits(rounded[decided].astype(et.numpy), et)
        assert not (T.nan_mask(bits, fmt)).any()   # what agree accepts is a number of the format


def test_decide_gives_fnuz_plus_zero_and_leaves_what_has_no_number():
    """fast.decide: a negative approximation rounding to zero in FNUZ, and
    the working format's underflow of a negative true value, are +0; an
    f8E8M0FNU underflow (its smallest value) and f4E2M1FN's overflow
    (saturation) are left to round_bits rather than stated by the fast path."""
    fnuz = T.F8E4M3FNUZ
    ok, lo = fast.decide(np.array([-1e-20, -0.0, 3.0]), fnuz, [np.array([-1.0, -1.0, 1.0])])
    assert ok.tolist() == [True, True, True] and not np.signbit(lo[:2]).any() and lo[2] == 3.0
    assert T.to_bits(lo.astype(ml_dtypes.float8_e4m3fnuz), T.E_F8E4M3FNUZ).tolist()[:2] == [0, 0]
    # 1e-20 lies below 1.5·2^-67 ≈ 1.0164e-20, the tie between 2^-67 and 2^-66
    ok, lo = fast.decide(np.array([0.0, 1e-20, -2.0]), T.F8E8M0FNU, [np.array([1.0, 1.0, 1.0])])
    assert ok.tolist() == [False, True, False] and lo[1] == 2.0 ** -67
    ok, lo = fast.decide(np.array([np.inf, 100.0, 3.0]), T.F4E2M1FN, [np.array([1.0, 1.0, 1.0])])
    assert ok.tolist() == [False, True, True] and lo[1:].tolist() == [6.0, 3.0]


# --------------------------------------------------------------------------
# Special values, causes, order
# --------------------------------------------------------------------------

@pytest.mark.parametrize("name", NEW_FLOATS)
def test_generated_specials_are_the_formats_own(name):
    et = T.element_type(name)
    fmt = et.format
    info = ml_dtypes.finfo(ML[name][0])
    sp = float_specials(et)
    v = sp.astype(np.float64)
    bits = T.to_bits(sp, et).tolist()
    assert len(set(bits)) == len(bits)                    # each pattern once
    finite = v[np.isfinite(v)]
    assert {float(info.max), float(info.smallest_normal), float(info.smallest_subnormal), 1.0} <= set(finite)
    assert (-float(info.max) in finite) == fmt.signed and (finite >= 0).all() != fmt.signed
    assert int(np.isnan(v).sum()) == {"ieee": 2, "fn": 2 if fmt.signed else 1, "fnuz": 1, "none": 0}[fmt.nan]
    assert bool(np.isinf(v).any()) == fmt.has_inf
    zeros = sorted(b for b, x in zip(bits, v) if x == 0)
    assert zeros == ([0, fmt.sign_mask] if fmt.has_negative_zero else [0] if fmt.has_zero else [])
    draws = random_floats(et, np.random.default_rng(0), 4000).astype(np.float64)
    assert np.isfinite(draws).all() and ((draws > 0).all() if not fmt.signed else (draws < 0).any())


@pytest.mark.parametrize("name", NEW_FLOATS)
def test_causes_classify_every_pattern_as_ml_dtypes_does(name):
    et = T.element_type(name)
    bits, vals = _all(et)
    truth = vals.astype(np.float64)
    nan, inf, zero, sub, neg = float_classes(bits, et.format)
    assert (nan == np.isnan(truth)).all() and (inf == np.isinf(truth)).all() and (zero == (truth == 0)).all()
    tiny = (np.abs(truth) < float(ml_dtypes.finfo(ML[name][0]).smallest_normal)) & (truth != 0)
    assert (sub == tiny).all()
    assert (neg[~nan] == np.signbit(truth[~nan])).all()


@pytest.mark.parametrize("name", NEW_FLOATS)
def test_total_order_of_the_whole_array_route_is_the_element_routes(name):
    """compare's TOTALORDER, read from the format's sign and magnitude
    (`total_order_keys`: f4E2M1FN's sign is bit 3 of its byte), orders every
    pair of patterns as `ieee.total_order_key` orders their binary64
    widenings; numbers by value, -0 below +0; the FNUZ NaN (sign bit set)
    below every number, as -NaN."""
    et = T.element_type(name)
    bits, vals = _all(et)
    keys = total_order_keys(vals)
    elem = np.array([ieee.total_order_key(x) for x in T.exact_values(vals, et)], dtype=object)
    assert (np.sign(keys[:, None] - keys[None, :]) == np.sign((elem[:, None] - elem[None, :]).astype(float))).all()
    num = ~np.isnan(vals.astype(np.float64))
    order = np.argsort(keys[num], kind="stable")
    widened = vals.astype(np.float64)[num][order]
    assert (np.diff(widened) >= 0).all()
    if et.format.nan == "fnuz":
        assert keys[np.isnan(vals.astype(np.float64))].max() < keys[num].min()


# --------------------------------------------------------------------------
# What the spec's ops state where a format lacks something
# --------------------------------------------------------------------------

def _convert(src: str, dst: str, x):
    """(primary bits, labels of the other alternatives, whether "any value" is one) of convert's answer."""
    spec = OPS["convert"]
    s, d = T.TensorType((), T.element_type(src)), T.TensorType((), T.element_type(dst))
    inst = spec.instance({"operand": s}, {}, {"result": d})
    r = resolve(spec.semantics.fn(inst, x), d.element_type)
    return r.options[0][1], [label for label, _ in r.options[1:]], any(b is None for _, b in r.options)


def test_convert_into_formats_that_lack_something():
    """f4/f6: ±inf and overflow saturate (RFC 20241001: infinities clamp),
    NaN is any value (the RFC: undefined; -0 first, XLA:CPU's); f8E8M0FNU:
    zero and negatives are NaN (ml_dtypes, XLA:CPU), a tiny positive its
    smallest value; FNUZ: a negative rounding to zero is +0, plainly."""
    assert _convert("f32", "f4E2M1FN", math.inf)[0] == 0x7 and _convert("f32", "f4E2M1FN", -1e9)[0] == 0xF
    prim, _, anything = _convert("f32", "f4E2M1FN", math.nan)
    assert prim == 0x8 and anything
    assert _convert("f32", "f6E3M2FN", 30.0)[0] == 0x1F and _convert("f32", "f6E3M2FN", 29.0)[0] == 0x1F
    for x in (0.0, -0.0, -1.0, -math.inf):
        assert _convert("f32", "f8E8M0FNU", x)[0] == 0xFF
    assert _convert("f32", "f8E8M0FNU", 1e-40) == (0x00, [], False)
    assert _convert("f32", "f8E4M3FNUZ", -1e-30) == (0x00, [], False)
    prim, labels, _ = _convert("f32", "f8E5M2FNUZ", 1e10)
    assert prim == 0x80 and any("saturate" in label for label in labels)
    assert _convert("f8E8M0FNU", "f32", 2.0 ** -127)[0] == 0x00400000          # exact, a float32 subnormal
    assert _convert("si2", "f4E2M1FN", -2)[0] == 0xC and _convert("ui2", "si2", 3)[0] == 3   # -1 (XLA's wrap)
    assert _convert("f4E2M1FN", "ui2", 6.0)[0] == 3 and _convert("f4E2M1FN", "si2", -1.5)[0] == 3   # saturate; -1


def test_reduce_precision_offers_only_what_the_format_holds():
    spec = OPS["reduce_precision"]

    def rp(name, x, e, m):
        t = T.TensorType((), T.element_type(name))
        inst = spec.instance({"operand": t}, {"exponent_bits": e, "mantissa_bits": m}, {"output": t})
        r = resolve(spec.semantics.fn(inst, x), t.element_type)
        return [b for _, b in r.options]
    assert rp("f4E2M1FN", 3.0, 1, 1) == [0x7]             # overflow: saturation alone (no NaN to offer)
    assert rp("f8E8M0FNU", 2.0 ** -100, 2, 0) == [0x00, 0xFF]   # underflow: no zero, the smallest value or NaN
    assert rp("f8E4M3FNUZ", -2.0 ** -7, 2, 3) == [0x00]   # underflow to +0 (no -0 in FNUZ)


# --------------------------------------------------------------------------
# Real programs through the backends
# --------------------------------------------------------------------------

def _lowered(fn, x) -> str:
    return jax.jit(fn).lower(x).as_text()


def _programs(et, x) -> dict:
    """What jax lowers for `x + x` and `x.astype(f32)` on an ml_dtypes array of the type."""
    return {"add": _lowered(lambda v: v + v, x), "convert": _lowered(lambda v: v.astype(jnp.float32), x)}


def _wrong(et, what: str, bits, out) -> list[int]:
    """The input patterns whose result is not the oracle's rounding of the
    exact one (2x rounded into the type, integers wrapped; the exact value
    in f32), NaN matching any NaN."""
    got = T.to_bits(out, et if what == "add" else T.E_F32).tolist()
    bad = []
    for b, g in zip(bits.tolist(), got):
        if et.is_integer:
            v = et.bits_to_int(b)
            want, fmt = (et.int_to_bits(et.wrap(2 * v)), None) if what == "add" else (round_bits(v, T.F32), T.F32)
        else:
            v = et.format.decode(b)
            fmt = et.format if what == "add" else T.F32
            want = round_bits((v if isinstance(v, float) else 2 * v) if what == "add" else v, fmt)
        if g != want and not (fmt is not None and fmt.is_nan_bits(g) and fmt.is_nan_bits(want)):
            bad.append(b)
    return bad


@pytest.fixture(scope="module")
def xla():
    return XlaBackend()


# Where XLA:CPU (jaxlib 0.10.2) departs from the oracle's rounding on every
# pattern: f8E8M0FNU's 2^-127 + 2^-127 is NaN, not 2^-126 — XLA computes in
# f32 with denormals flushed, 2^-127 is an f32 subnormal read as 0, and 0
# converts to NaN.  f6E2M3FN and f6E3M2FN programs are refused: the add
# "failed to legalize operation 'arith.addf'", the convert fails to become
# LLVM IR ("Invalid bitcast i6 to i8").
XLA_DEVIATES = {("f8E8M0FNU", "add"): [0x00]}
XLA_REFUSES = ("f6E2M3FN", "f6E3M2FN")


@pytest.mark.parametrize("name", list(ML))
def test_xla_runs_a_real_program_in_every_format(name, xla):
    """jax lowers each program on every pattern of the type; XLA:CPU, as
    `run` drives it, matches the oracle's rounding except the findings
    above; the f6 programs are Rejected."""
    et = T.element_type(name)
    bits, x = _all(et)
    for what, text in _programs(et, x).items():
        assert f"x{et.mlir}>" in text
        if name in XLA_REFUSES:
            with pytest.raises(Rejected):
                xla.run(xla.compile(text), [x])
            continue
        out = xla.run(xla.compile(text), [x])[0]
        assert _wrong(et, what, bits, out) == XLA_DEVIATES.get((name, what), []), (name, what)


# The reference interpreter (stablehlo via jaxlib 0.10.2) on the same
# programs: every format runs (f4 and f6 results cross as f16, the adapter's
# exact carrier); f8E8M0FNU's NaN converts to +inf in f32.
INTERPRETER_DEVIATES = {("f8E8M0FNU", "convert"): [0xFF]}


@pytest.mark.parametrize("name", list(ML))
def test_the_interpreter_runs_a_real_program_in_every_format(name):
    from shlo_conform.backends.interpreter import InterpreterBackend
    be = InterpreterBackend()
    et = T.element_type(name)
    bits, x = _all(et)
    for what, text in _programs(et, x).items():
        out = be.run(be.compile(text), [x])[0]
        assert _wrong(et, what, bits, out) == INTERPRETER_DEVIATES.get((name, what), []), (name, what)


@pytest.fixture(scope="module")
def iree():
    from shlo_conform.backends.iree import IreeBackend
    be = IreeBackend()
    yield be
    be.close()


# IREE (iree-base-compiler/-runtime 3.13.0): iree.runtime has no HAL element
# type for si2, ui2, f4E2M1FN, f8E3M4, f8E4M3, f8E4M3B11FNUZ (inputs cannot be
# made: Unsupported, named), 6-bit buffers have no known layout; the FNUZ
# formats are exact; f8E8M0FNU's x + x is wrong at five patterns — 2^-127,
# 2^-126 and 4 give 2^-127, 2 gives 2, NaN gives 2 — and its 2^-127
# converts to 0 in f32.
IREE_DEVIATES = {("f8E8M0FNU", "add"): [0x00, 0x01, 0x80, 0x81, 0xFF], ("f8E8M0FNU", "convert"): [0x00]}
IREE_RUNS = ("f8E4M3FNUZ", "f8E5M2FNUZ", "f8E8M0FNU")


@pytest.mark.parametrize("name", list(ML))
def test_iree_runs_or_declares_every_format(name, iree):
    from shlo_conform.backends.base import Unsupported
    et = T.element_type(name)
    bits, x = _all(et)
    for what, text in _programs(et, x).items():
        if name not in IREE_RUNS:
            with pytest.raises(Unsupported, match=name if et.bits != 6 else "6-bit"):
                iree.compile(text)
            continue
        out = iree.run(iree.compile(text), [x])[0]
        assert _wrong(et, what, bits, out) == IREE_DEVIATES.get((name, what), []), (name, what)


def test_iree_reads_two_bit_results_packed_four_to_a_byte(iree):
    """An si2 / ui2 *result* (f32 in, converted; a multiple of 4 elements,
    whole bytes, as IREE requires) comes back unpacked as IREE packs it
    (`_pack`'s layout), equal to ml_dtypes' own cast of the values in range."""
    for name in ("si2", "ui2"):
        et = T.element_type(name)
        x = np.resize(np.arange(et.min_value, et.max_value + 1), 12)[::-1].astype(np.float32)
        text = _lowered(lambda v: v.astype(ML[name][0]), x)
        out = iree.run(iree.compile(text), [x])[0]
        assert T.to_bits(out, et).tolist() == T.to_bits(x.astype(np.int64).astype(ML[name][0]), et).tolist()


@pytest.mark.parametrize("name", NEW_FLOATS)
def test_the_fast_paths_decisions_agree_with_arb_in_every_new_format(name):
    """Every real function's whole-array decisions (oracle/fast.py: the
    float64 evaluation, round_fast and decide, which take the format's
    declaration) are the bits arb decides (rigorous.evaluate: arb's ball
    rounded by round_bits), in each v1.20 format, on values of the format;
    and fastcheck's bound holds there."""
    from shlo_conform.oracle import fastcheck, rigorous
    from shlo_conform.oracle.real_functions import TABLE
    fmt = T.element_type(name).format
    rng = np.random.default_rng(34)
    checked = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for f, rf in TABLE.items():
            if rf.numpy is None or fast.working_for(f, fmt) is None:
                continue
            cols = fastcheck.inputs(f, fmt, 60, rng)
            r = fastcheck.check(f, fmt, cols)
            assert r.worst_rel_error < r.bound / 16, rf.name
            ok, got = fast.evaluate(f, cols, fmt)
            for i in np.flatnonzero(ok)[:30].tolist():
                z = rigorous.evaluate(f, tuple(float(c[i]) for c in cols), fmt)
                if z is not None and z[2]:
                    assert round_bits(float(got[i]), fmt) == z[0], (rf.name, [float(c[i]) for c in cols])
                    checked += 1
    assert checked >= 300
