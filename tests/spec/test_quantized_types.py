"""Quantized element types (issue 34): spec/quantized.py against sources that
are not this project's code.

Truth:
* the spec's text (../shared/upstream-1.20/spec.md "Types", "Constants",
  `uniform_quantize`/`uniform_dequantize` and "Quantization computations";
  quantization.md; the RFCs) — its grammar, its examples, its formulas
  recomputed by hand below;
* MLIR's own quant dialect parser and printer, as IREE's compiler bindings
  (a pinned dependency) carry it: `iree.compiler.ir.Type.parse` — what every
  backend reads a program with;
* z3, for the constraints read symbolically;
* two independent implementations of the arithmetic, written here:
  numpy's hardware float32 (IEEE, correctly rounded; `np.rint` ties to
  even) following the spec's steps, and integer fixed-point as TFLite's
  reference kernels compute (`QuantizeMultiplier`,
  `SaturatingRoundingDoublingHighMul`, `RoundingDivideByPOT`, the int8
  `AddElementwise` and `Requantize`) — plus StableHLO's own integer
  lowering (`stablehlo-legalize-quant-to-math`, which the reference
  interpreter runs), in float32 as that pass emits it.
"""
from __future__ import annotations

import math
import random
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import z3
from iree.compiler import ir

from shlo_conform.spec import quantized as Q
from shlo_conform.spec.quantized import (Quantized, QuantizedType, dequantize, dequantize_compare,
                                         dequantize_op_quantize, dequantize_select_quantize, expressed_scales,
                                         format_quantized_tensor_type, hybrid_dequantize_then_op,
                                         parse_quantized_tensor_type, parse_quantized_type, quantize,
                                         quantize_bounds, quantized_type, quantized_violations, round_to,
                                         uniform_dequantize, uniform_quantize)
from shlo_conform.spec.types import (FLOAT_TYPES_V1_20, INTEGER_TYPES_V1_20, TensorType,
                                     element_type, from_bits)

F32 = element_type("f32")
SI8, UI8 = element_type("si8"), element_type("ui8")

_CTX = ir.Context()


def mlir_reads(text: str) -> str | None:
    """MLIR's reading of a type (its printed form), or None where MLIR rejects it."""
    try:
        return str(ir.Type.parse(text, _CTX))
    except Exception:  # noqa: BLE001 — ir raises a bare Exception subclass per diagnostic
        return None


# --------------------------------------------------------------------------
# Reading and printing
# --------------------------------------------------------------------------

# Every concrete quantized type the v1.20 documents write (source, text).
DOC_TYPES = [
    ("spec.md uniform_dequantize example", "tensor<2x!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>>"),
    ("spec.md uniform_quantize example", "tensor<2x!quant.uniform<i8:f32:0, {0.1:-20,0.2:-30}>>"),
    ("quantization.md per-tensor", "!quant.uniform<i8:f32, 0.01:50>"),
    ("quantization.md per-axis", "tensor<4x3x2x!quant.uniform<i8:f32:1, {0.2:20, 0.1:10, 0.3:30}>>"),
    ("quantization.md test case", "tensor<11x!quant.uniform<i8:f32, 0.3>>"),
    ("rfcs/20230622-quantized-reduction.md", "tensor<!quant.uniform<i32:f32, 3.400000e+01:16>>"),
    ("rfcs/20230622-quantized-reduction.md", "tensor<16x!quant.uniform<i8:f32, 3.400000e+01:16>>"),
    ("issue 34", "tensor<4x!quant.uniform<i8:f32, 0.1:-3>>"),
    ("brief", "!quant.uniform<i8:f32, 0.1:-3>"),
    ("brief", "!quant.uniform<i8<-127:127>:f32, 0.5>"),
    ("brief", "!quant.uniform<i8:f32:1, {0.1:-1, 0.2:3}>"),
    ("brief", "!quant.uniform<u8:f32, 2.0e-01:128>"),
    ("brief", "tensor<2x3x!quant.uniform<i8:f32, 0.1:-3>>"),
]

# The documents' schematic spellings: placeholders, not types.
DOC_PLACEHOLDERS = [
    "!quant.uniform<storage_type:expressed_type, scale:zero_point>",
    "!quant.uniform<storage_type:expressed_type:quantized_dimension, {scale0:zero_point0, scale1:zero_point1, ...}>",
    "!quant.uniform<i32:f32, accum_scale:accum_zp>",
    "!quant.uniform<ui8:f32, input_scale:input_zp>",
    "!quant.uniform<i32:f32, ...>",
    "!quant.uniform<i8:f32, scale:zp>",
]


def _parse_any(text: str):
    if text.startswith("tensor"):
        shape, q = parse_quantized_tensor_type(text)
        return shape, q, format_quantized_tensor_type(shape, q)
    q = parse_quantized_type(text)
    return None, q, q.mlir


@pytest.mark.parametrize("source,text", DOC_TYPES, ids=[t for _, t in DOC_TYPES])
def test_document_types_round_trip_and_mlir_reads_our_print_alike(source, text):
    """Each type parses, our print parses back to the same record, and MLIR
    reads the original and our print as the same type."""
    shape, q, printed = _parse_any(text)
    again = _parse_any(printed)
    assert again[0] == shape and again[1] == q
    original = mlir_reads(text)
    assert original is not None, f"MLIR rejects the documents' {text}"
    assert mlir_reads(printed) == original
    assert quantized_violations(TensorType(shape, q) if shape is not None else q) == []


@pytest.mark.parametrize("text", DOC_PLACEHOLDERS)
def test_document_placeholders_are_not_types(text):
    with pytest.raises(ValueError):
        parse_quantized_type(text)
    assert mlir_reads(text) is None


def test_brief_types_read_field_by_field():
    """The fields, as the spec's grammar assigns them (hand-read)."""
    q = parse_quantized_type("!quant.uniform<i8:f32, 0.1:-3>")
    assert (q.storage_type, q.expressed_type, q.scales, q.zero_points) == (SI8, F32, (0.1,), (-3,))
    assert (q.storage_min, q.storage_max, q.quantization_dimension) == (-128, 127, None)
    q = parse_quantized_type("!quant.uniform<i8<-127:127>:f32, 0.5>")
    assert (q.storage_min, q.storage_max, q.zero_points) == (-127, 127, (0,))
    q = parse_quantized_type("!quant.uniform<i8:f32:1, {0.1:-1, 0.2:3}>")
    assert (q.quantization_dimension, q.scales, q.zero_points) == (1, (0.1, 0.2), (-1, 3))
    q = parse_quantized_type("!quant.uniform<u8:f32, 2.0e-01:128>")
    assert (q.storage_type, q.storage_min, q.storage_max, q.scales, q.zero_points) == (UI8, 0, 255, (0.2,), (128,))
    shape, q = parse_quantized_tensor_type("tensor<2x3x!quant.uniform<i8:f32, 0.1:-3>>")
    assert shape == (2, 3) and q.scales == (0.1,)


# MLIR's printer, character for character, where the input spells storage MLIR's way (i/u).
MLIR_PRINTS = [
    "!quant.uniform<i8:f32, 0.1:-3>",
    "!quant.uniform<i8<-127:127>:f32, 0.5>",
    "!quant.uniform<i8:f32:1, {0.1:-1, 0.2:3}>",
    "!quant.uniform<u8:f32, 2.0e-01:128>",
    "!quant.uniform<i16:bf16, 0.25:0>",
    "!quant.uniform<u4<1:14>:f16:0, {1.5e-3:7,2.0:-0}>",
    "!quant.uniform<i2:f8E4M3FN, 0.5:1>",
    "!quant.uniform<i32:f64, 1.0e-300:-2147483648>",
]


@pytest.mark.parametrize("text", MLIR_PRINTS)
def test_print_is_mlirs_own(text):
    assert parse_quantized_type(text).mlir == mlir_reads(text)


@pytest.mark.parametrize("text,canonical", [
    ("!quant.uniform<si8:f32, 0.5>", "!quant.uniform<i8:f32, 5.000000e-01>"),
    ("!quant.uniform<ui8:f32, 0.5:+3>", "!quant.uniform<u8:f32, 5.000000e-01:3>"),
    ("!quant.uniform<i8:f32, 1>", "!quant.uniform<i8:f32, 1.000000e+00>"),
    ("!quant.uniform<i8:f32, +1.5E+2>", "!quant.uniform<i8:f32, 1.500000e+02>"),
    ("!quant.uniform<i8:f32, {0.5:1}>", "!quant.uniform<i8:f32, 5.000000e-01:1>"),
    ("!quant.uniform<i8:f32:0, 0.5:1>", "!quant.uniform<i8:f32:0, {5.000000e-01:1}>"),
    ("!quant.uniform< i8 < -8 : 7 > : f32 , 0.5 : 0x10 >", "!quant.uniform<i8<-8:7>:f32, 5.000000e-01:16>"),
])
def test_spec_grammar_wider_than_mlirs_prints_mlirs_way(text, canonical):
    """The spec's grammar derives these (si/ui IntegerType, signed
    IntegerLiteral, FloatLiteral without a fraction, either parameter
    form); printed, MLIR reads them."""
    q = parse_quantized_type(text)
    assert q.mlir == canonical
    assert mlir_reads(canonical) == canonical


@pytest.mark.parametrize("text", [
    "!quant.uniform<i7:f32, 0.5>", "!quant.uniform<i1:f32, 0.5>", "!quant.uniform<i8:si8, 0.5>",
    "!quant.uniform<f32:f32, 0.5>", "!quant.uniform<i8:f32, 0.5:1.5>", "!quant.uniform<i8:f32>",
    "!quant.uniform<i8:f32, 0.5> x", "!quant.uniform<i8:f32, {}>", "!quant.uniform<i8:f32:1.0, {0.5}>",
])
def test_malformed_types_are_refused(text):
    with pytest.raises(ValueError):
        parse_quantized_type(text)


def test_invalid_parameter_counts_print_as_the_grammar_allows_or_not_at_all():
    q = quantized_type("si8", "f32", [0.5, 0.25], [0, 1])          # per-tensor, two pairs: C10
    assert q.mlir == "!quant.uniform<i8:f32, {5.000000e-01,2.500000e-01:1}>"
    assert parse_quantized_type(q.mlir) == q and quantized_violations(q) == ["quantized_c10"]
    with pytest.raises(ValueError):
        quantized_type("si8", "f32", [0.5], [0, 1]).mlir             # C9: no spelling


def test_scales_need_more_digits_than_mlirs_short_form():
    """A double %.6e cannot hold prints in full and reads back bit for bit;
    MLIR reads our spelling to the double it printed itself (hex for
    123456789.0, 17 digits for 0.123456789012345678)."""
    for s in (123456789.0, 0.12345678901234568, 1.2345678901234567e-20, 1e16, 2.0 ** -1074 * 3):
        q = quantized_type("ui8", "f64", [s], [3])
        assert parse_quantized_type(q.mlir).scales == (s,)
        mine, theirs = mlir_reads(q.mlir), mlir_reads(mlir_reads(q.mlir) or "")
        assert mine is not None and mine == theirs
        assert parse_quantized_type(mine).scales == (s,)


def test_hex_scales_read_as_mlir_or_as_the_spec_says():
    """16 hex digits: the double's bits (MLIR's reading and its printed
    spelling).  num_bits(expressed)/4 digits of a narrower type: that
    type's bits (the spec's FloatLiteral), which MLIR reads as a tiny double."""
    q = parse_quantized_type("!quant.uniform<i8:f32, 0x3FF0000000000000>")
    assert q.scales == (1.0,)
    q = parse_quantized_type("!quant.uniform<i8:f32, 0x3F800000>")
    assert q.scales == (1.0,)
    assert mlir_reads("!quant.uniform<i8:f32, 0x3F800000>") is None   # 5.26e-315, below f32's range
    q = parse_quantized_type("!quant.uniform<i8:f16, 0x3C00>")
    assert q.scales == (1.0,)


def test_random_types_round_trip_through_mlir():
    """Valid types of every storage width MLIR admits (<= 32 bits) and every
    expressed type, scales across each type's whole range: our print parses
    back to the same record; MLIR accepts it; MLIR's own print parses (ours)
    to the same record — its fallback spellings included."""
    rng = random.Random(34)
    storages = [t for t in INTEGER_TYPES_V1_20 if t.bits <= 32]
    checked = 0
    for _ in range(600):
        st, et = rng.choice(storages), rng.choice(FLOAT_TYPES_V1_20)
        k = rng.choice([1, 1, 2, 3])
        per_axis = k > 1 or rng.random() < 0.3
        fmt = et.format
        lo_e, hi_e = math.log2(float(fmt.min_subnormal)), math.log2(float(fmt.max_finite))
        scales = []
        for _ in range(k):
            x = 2.0 ** rng.uniform(lo_e, hi_e)
            if rng.random() < 0.5:
                x = float("%.3g" % x)
            scales.append(min(max(x, float(fmt.min_subnormal)), float(fmt.max_finite)))
        lo, hi = st.min_value, st.max_value
        if rng.random() < 0.5:
            lo, hi = sorted(rng.sample(range(lo, hi + 1), 2)) if hi - lo < 4096 else \
                sorted((rng.randint(lo, hi - 1), hi))
        zps = [rng.randint(lo, hi) for _ in range(k)]
        q = quantized_type(st, et, scales, zps, rng.randint(0, 3) if per_axis else None, lo, hi)
        assert quantized_violations(q) == []
        assert parse_quantized_type(q.mlir) == q
        theirs = mlir_reads(q.mlir)
        assert theirs is not None, q.mlir
        assert parse_quantized_type(theirs) == q, (q.mlir, theirs)
        checked += 1
    assert checked == 600


# --------------------------------------------------------------------------
# Constraints, concretely
# --------------------------------------------------------------------------

def _q(**kw):
    base = dict(storage="si8", expressed="f32", scales=[0.5], zero_points=[0])
    base.update(kw)
    return quantized_type(base.pop("storage"), base.pop("expressed"), base.pop("scales"), base.pop("zero_points"),
                          **base)


@pytest.mark.parametrize("q,shape,violated", [
    (_q(storage_min=-129), None, ["quantized_c1", "quantized_c3"]),
    (_q(storage_max=128), None, ["quantized_c2", "quantized_c3"]),
    (_q(storage_min=5, storage_max=5, zero_points=[5]), None, ["quantized_c3"]),
    (_q(expressed="f16", scales=[70000.0]), None, ["quantized_c4"]),
    (_q(expressed="f16", scales=[1e-8]), None, ["quantized_c4"]),
    (_q(scales=[-0.5]), None, ["quantized_c5"]),
    (_q(scales=[0.0]), None, ["quantized_c5"]),
    (_q(scales=[math.inf]), None, ["quantized_c6"]),
    (_q(expressed="f8E4M3FN", scales=[math.inf]), None, ["quantized_c4", "quantized_c6"]),
    (_q(scales=[math.nan]), None, ["quantized_c5", "quantized_c6"]),
    (_q(storage_min=-10, storage_max=10, zero_points=[11]), None, ["quantized_c7"]),
    (_q(zero_points=[200]), None, ["quantized_c7", "quantized_c8"]),
    (_q(scales=[0.5], zero_points=[0, 1]), None, ["quantized_c9"]),
    (_q(scales=[0.5, 0.25], zero_points=[0, 1]), None, ["quantized_c10"]),
    (_q(scales=[0.5], quantization_dimension=-1), (3,), ["quantized_c11"]),
    (_q(scales=[0.5], quantization_dimension=1), (1,), ["quantized_c12"]),
    (_q(scales=[0.5, 0.25], zero_points=[0, 0], quantization_dimension=0), (3,), ["quantized_c13"]),
    (_q(scales=[0.5, 0.25], zero_points=[0, 0], quantization_dimension=1), (3, 2), []),
])
def test_each_constraint_names_its_violation(q, shape, violated):
    t = TensorType(shape, q) if shape is not None else q
    assert quantized_violations(t) == violated


def _mlir_accepts_scale(et, s) -> bool:
    return mlir_reads(quantized_type("si8", et, [s]).mlir) is not None


@pytest.mark.parametrize("et", FLOAT_TYPES_V1_20, ids=str)
def test_c4_c5_c6_together_are_mlirs_scale_check(et):
    """C4 ∧ C5 ∧ C6 accept exactly the scales MLIR's parser accepts
    (`isScaleInExpressedTypeRange`), at every boundary of the type —
    except NaN, which MLIR lets through (its range test compares with NaN,
    false both ways) and C5/C6 refuse: a finding for MLIR, not a reading."""
    fmt = et.format
    top, tiny = float(fmt.max_finite), float(fmt.min_subnormal)
    scales = [top, math.nextafter(top, math.inf), math.nextafter(top, 0), tiny, math.nextafter(tiny, 0),
              math.nextafter(tiny, 1), 1.0, -1.0, -tiny, 0.0, -0.0, math.inf, -math.inf, 5e-324, 1.7e308]
    for s in scales:
        q = quantized_type("si8", et, [s])
        ours = all(c(q) for c in (Q.quantized_c4, Q.quantized_c5, Q.quantized_c6))
        assert ours == _mlir_accepts_scale(et, s), (et, s)
    nan_type = quantized_type("si8", et, [math.nan])
    assert quantized_violations(nan_type) == ([] if fmt.has_nan else ["quantized_c4"]) + ["quantized_c5",
                                                                                          "quantized_c6"]
    assert _mlir_accepts_scale(et, math.nan)


@pytest.mark.parametrize("st", [t for t in INTEGER_TYPES_V1_20 if t.bits <= 32], ids=str)
def test_c3_is_mlirs_storage_range_check(st):
    lo, hi = st.min_value, st.max_value
    for smin, smax in [(lo, hi), (lo, lo + 1), (lo - 1, hi), (lo, hi + 1), (lo + 1, lo + 1), (hi, lo), (lo, lo)]:
        q = QuantizedType(st, F32, (1.0,), (max(min(0, smax), smin),), None, smin, smax)
        text = "!quant.uniform<%s%d<%d:%d>:f32, 1.0:%d>" % ("i" if st.is_signed else "u", st.bits, smin, smax,
                                                           q.zero_points[0])
        assert bool(Q.quantized_c3(q)) == (mlir_reads(text) is not None), text


def test_c11_is_mlirs_quantized_dimension_check():
    assert mlir_reads("!quant.uniform<i8:f32:-1, {1.0}>") is None
    assert not Q.quantized_c11(parse_quantized_type("!quant.uniform<i8:f32:-1, {1.0}>"))
    assert mlir_reads("!quant.uniform<i8:f32:0, {1.0}>") is not None


def test_same_baseline_type_concretely_and_symbolically():
    """baseline_type ignores scales and zero points only (spec.md "Quantization
    computations"); symbolically, z3 finds two equal baselines with
    different scales and none with different storage bounds."""
    a = TensorType((2, 3), parse_quantized_type("!quant.uniform<i8:f32:1, {0.1:-1, 0.2:3, 0.3:0}>"))
    b = TensorType((2, 3), parse_quantized_type("!quant.uniform<i8:f32:1, {0.5:7, 0.25:0, 1.0:1}>"))
    c = TensorType((2, 3), parse_quantized_type("!quant.uniform<i8<-127:127>:f32:1, {0.1, 0.2, 0.3}>"))
    d = TensorType((2, 3), parse_quantized_type("!quant.uniform<i8:f32:0, {0.1, 0.2}>"))
    assert Q.same_baseline_type(a, b) and not Q.same_baseline_type(a, c) and not Q.same_baseline_type(a, d)
    assert not Q.same_baseline_type(a, TensorType((2, 3), F32))
    assert Q.same_baseline_type(TensorType((2,), F32), TensorType((2,), F32))
    x = TensorType((z3.Int("n"),), Q.symbolic_quantized_type(SI8, F32, name="x"))
    y = TensorType((z3.Int("m"),), Q.symbolic_quantized_type(SI8, F32, name="y"))
    s = z3.Solver()
    s.add(_as_z3(Q.same_baseline_type(x, y)), x.element_type.scales[0] != y.element_type.scales[0])
    assert s.check() == z3.sat
    s = z3.Solver()
    s.add(_as_z3(Q.same_baseline_type(x, y)), x.element_type.storage_min != y.element_type.storage_min)
    assert s.check() == z3.unsat


def test_same_quantized_type_concretely_and_symbolically():
    a = TensorType((2,), parse_quantized_type("!quant.uniform<i8:f32, 0.1:-3>"))
    b = TensorType((2,), parse_quantized_type("!quant.uniform<i8:f32, 1.000000e-01:-3>"))
    c = TensorType((2,), parse_quantized_type("!quant.uniform<i8:f32, 0.1:-2>"))
    assert Q.same_quantized_type(a, b) and not Q.same_quantized_type(a, c)
    assert not Q.same_quantized_type(a, TensorType((2,), F32))
    x = TensorType((2,), Q.symbolic_quantized_type(SI8, F32, name="x"))
    y = TensorType((2,), Q.symbolic_quantized_type(SI8, F32, name="y"))
    s = z3.Solver()
    s.add(_as_z3(Q.same_quantized_type(x, y)), x.element_type.zero_points[0] != y.element_type.zero_points[0])
    assert s.check() == z3.unsat
    s = z3.Solver()
    s.add(_as_z3(Q.same_quantized_type(x, y)), _as_z3(Q.quantized_c5(x)), z3.Not(_as_z3(Q.quantized_c5(y))))
    assert s.check() == z3.unsat


def test_quantized_constants():
    """Quantized tensor constants (spec.md "Constants", C1, C2): literals of the storage type, of the tensor's shape."""
    shape, q = parse_quantized_tensor_type("tensor<2x!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>>")
    t = TensorType(shape, q)
    assert Q.quantized_constant_c1([10, 10], t) and Q.quantized_constant_c2([10, 10], t)
    assert not Q.quantized_constant_c1([10, 128], t)
    assert not Q.quantized_constant_c1([10, 1.5], t)
    assert not Q.quantized_constant_c2([10, 10, 10], t)
    assert Q.quantized_constant_c2(7, t)


# --------------------------------------------------------------------------
# Constraints, symbolically: for each, z3 finds a type that satisfies every
# constraint, and one that violates exactly that one — or proves none does.
# --------------------------------------------------------------------------

# (storage, expressed, number of scales, zero points, per-axis, rank)
STRUCTURES = [
    (SI8, F32, 1, 1, False, 1), (SI8, F32, 1, 2, False, 1), (SI8, F32, 2, 2, False, 1),
    (SI8, F32, 2, 2, True, 2), (SI8, F32, 2, 1, True, 2), (UI8, element_type("f16"), 1, 1, False, 1),
    (UI8, element_type("f8E4M3FN"), 2, 2, True, 1),
]
REDUNDANT = {"quantized_c1", "quantized_c2", "quantized_c8"}


def _symbolic(structure, scales: str):
    st, et, n_s, n_z, per_axis, rank = structure
    q = Q.symbolic_quantized_type(st, et, n=max(n_s, n_z), per_axis=per_axis, scales=scales)
    q = QuantizedType(q.storage_type, q.expressed_type, q.scales[:n_s], q.zero_points[:n_z],
                      q.quantization_dimension, q.storage_min, q.storage_max)
    dims = tuple(z3.Int(f"d{i}") for i in range(rank))
    return TensorType(dims, q), dims


def _as_z3(x):
    return x if isinstance(x, z3.ExprRef) else z3.BoolVal(bool(x))


def _witness(index: int | None, scales: str):
    """A concrete tensor type violating exactly constraint `index` (None:
    none), found by z3 over STRUCTURES; None when z3 proves there is none."""
    for structure in STRUCTURES:
        t, dims = _symbolic(structure, scales)
        s = z3.Solver()
        s.add([d >= 0 for d in dims])
        for k, c in enumerate(Q.CONSTRAINTS):
            f = _as_z3(c(t))
            s.add(z3.Not(f) if k == index else f)
        if s.check() == z3.sat:
            m = s.model()
            q = Q.concrete_quantized_type(t.element_type, m)
            shape = tuple(m.eval(d, model_completion=True).as_long() for d in dims)
            return TensorType(shape, q)
    return None


@pytest.mark.parametrize("scales", ["fp", "real"])
def test_z3_finds_a_valid_type_and_one_violating_exactly_each_constraint(scales):
    """Each witness is checked concretely too: the same functions, read on
    plain numbers, name exactly the violated constraint.  C1, C2, C8 have
    none (proved below); C6 none with real scales (a real is finite)."""
    valid = _witness(None, scales)
    assert valid is not None and quantized_violations(valid) == []
    for k, c in enumerate(Q.CONSTRAINTS):
        name = c.__name__
        w = _witness(k, scales)
        if name in REDUNDANT or (scales == "real" and name == "quantized_c6"):
            assert w is None, (name, w)
        else:
            assert w is not None, name
            assert quantized_violations(w) == [name], (name, w, quantized_violations(w))


def test_z3_proves_c1_c2_c8_implied():
    """C3 ⇒ C1 ∧ C2 and C3 ∧ C7 ⇒ C8, for every storage type: valid."""
    for st in INTEGER_TYPES_V1_20:
        q = Q.symbolic_quantized_type(st, F32, n=3, per_axis=True)
        s = z3.Solver()
        s.add(z3.Not(z3.Implies(_as_z3(Q.quantized_c3(q)),
                                z3.And(_as_z3(Q.quantized_c1(q)), _as_z3(Q.quantized_c2(q))))))
        assert s.check() == z3.unsat
        s = z3.Solver()
        s.add(z3.Not(z3.Implies(z3.And(_as_z3(Q.quantized_c3(q)), _as_z3(Q.quantized_c7(q))),
                                _as_z3(Q.quantized_c8(q)))))
        assert s.check() == z3.unsat


# --------------------------------------------------------------------------
# Semantics: the spec's examples, and the spec's steps recomputed by hand
# --------------------------------------------------------------------------

EX_IN = parse_quantized_tensor_type("tensor<2x!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>>")[1]
EX_OUT = parse_quantized_tensor_type("tensor<2x!quant.uniform<i8:f32:0, {0.1:-20,0.2:-30}>>")[1]


@pytest.mark.parametrize("et", [t for t in FLOAT_TYPES_V1_20 if t.bits <= 16], ids=str)
def test_round_to_is_ml_dtypes_rounding(et):
    """`round_to` (exact integer division) against ml_dtypes' casts from
    float32, RNE with each format's overflow convention: at every value of
    the format, every midpoint between neighbours, one float32 step either
    side of each midpoint, and past the largest value (all float32 numbers,
    so the cast rounds once)."""
    dt = np.dtype(et.numpy)
    fmt = et.format
    pats = np.arange(1 << et.bits, dtype=np.uint32).astype(et.bits_dtype)
    vals = np.unique(from_bits(pats, et).astype(np.float32))
    vals = vals[np.isfinite(vals)]
    mids = ((vals[:-1].astype(np.float64) + vals[1:]) / 2).astype(np.float32)
    top = np.float32(fmt.max_finite)
    beyond = np.array([min(float(top) * k, 3.4e38) for k in (1.01, 1.5, 4)], np.float32)
    pts = np.concatenate([vals, mids, np.nextafter(mids, np.float32(np.inf)), np.nextafter(mids, np.float32(-np.inf)),
                          beyond, -beyond])
    if not fmt.signed or not fmt.has_zero:
        # f8E8M0FNU: positive values only, and none below float32's normal
        # range — ml_dtypes rounds the float32 subnormal just under the tie
        # 1.5·2^-127 up to 2^-126, though exactly it is nearer 2^-127.
        pts = pts[pts >= np.float32(2.0 ** -126)]
    with np.errstate(over="ignore"):
        want = pts.astype(dt).astype(np.float64)
    for x, w in zip(pts.tolist(), want.tolist()):
        got = round_to(x, et)
        assert (math.isnan(got) and math.isnan(w)) or got == w, (et, x, got, w)


def test_round_to_binary32_is_numpys_cast():
    rng = np.random.default_rng(3)
    xs = np.concatenate([rng.normal(0, 1, 3000) * 10.0 ** rng.integers(-45, 39, 3000),
                         [3.4028235677973366e38, 3.4028235e38 * (1 + 2 ** -25), 1e-46, 7e-46, 1.5e-45]])
    with np.errstate(over="ignore"):
        want = xs.astype(np.float32).astype(np.float64)
    for x, w in zip(xs.tolist(), want.tolist()):
        assert round_to(x, F32) == w


def test_spec_example_uniform_dequantize():
    """spec.md uniform_dequantize: [10, 10] → [4.0, 15.0]."""
    r = uniform_dequantize(Quantized(np.array([10, 10], np.int8), EX_IN))
    assert r.dtype == np.float32 and r.tolist() == [4.0, 15.0]


def test_spec_examples_uniform_quantize():
    """spec.md uniform_quantize: [4.0, 15.0] → [10, 10]; [10, 10] requantized → [20, 45]."""
    r = uniform_quantize(np.array([4.0, 15.0], np.float32), EX_IN)
    assert r.dtype == np.int8 and r.tolist() == [10, 10] and not r.mask.any()
    r = uniform_quantize(Quantized(np.array([10, 10], np.int8), EX_IN), EX_OUT)
    assert r.tolist() == [20, 45]


def _f32(x) -> np.float32:
    return np.float32(x)


def np_quantize_f32(x: np.ndarray, scale: float, zp: int, smin: int, smax: int) -> np.ndarray:
    """The spec's `quantize` in numpy float32, step for step: each numpy
    float32 op is IEEE-correctly rounded; `np.rint` rounds ties to even."""
    s = _f32(scale)
    with np.errstate(all="ignore"):
        y = (x.astype(np.float32) / s).astype(np.float32)
        y = (y + _f32(zp)).astype(np.float32)
        y = np.minimum(np.maximum(y, _f32(smin)), _f32(smax))
        return np.rint(y).astype(np.int64)


def np_dequantize_f32(q: np.ndarray, scale: float, zp: int) -> np.ndarray:
    return ((q.astype(np.int64) - zp).astype(np.float32) * _f32(scale)).astype(np.float32)


def test_f32_semantics_equal_numpy_float32_steps():
    """Per-tensor f32, i8 and u8: every storage value dequantized, and 20,000
    floats (ties x = (k + 1/2)·scale, tiny, huge and ±inf among them)
    quantized, match the same steps in hardware float32."""
    rng = np.random.default_rng(34)
    for storage, scale, zp in [("si8", 0.1, -3), ("si8", 0.0123, 17), ("ui8", 2.0e-01, 128), ("si8", 3.0, 0),
                               ("ui8", 1.0 / 3, 5)]:
        q = quantized_type(storage, "f32", [scale], [zp])
        st = q.storage_type
        every = np.arange(st.min_value, st.max_value + 1)
        assert np.array_equal(dequantize(every, q), np_dequantize_f32(every, scale, zp))
        x = np.concatenate([
            rng.normal(0, 30 * scale, 10000), (np.arange(-300, 300) + 0.5) * scale,
            rng.uniform(-1e-30, 1e-30, 100), np.array([np.inf, -np.inf, 3e38, -3e38, 0.0, -0.0]),
            (every - zp + 0.5) * np.float32(scale),
        ]).astype(np.float32)
        x = np.concatenate([x, rng.uniform(-200 * scale, 200 * scale, 20000 - x.size).astype(np.float32)])
        got = quantize(x, q)
        assert not got.mask.any()
        assert np.array_equal(got.data.astype(np.int64), np_quantize_f32(x, scale, zp, st.min_value, st.max_value))


@pytest.mark.parametrize("expressed", ["f16", "bf16", "f8E4M3FN", "f8E5M2"])
def test_narrow_expressed_types_equal_float32_then_rounded(expressed):
    """In a narrower expressed type each step is rounded in that type: the
    float32 result of one op cast to the type (ml_dtypes, from float32) is
    that op correctly rounded (24 >= 2p + 2 for p <= 11: Figueroa's
    condition for + and /), so the steps recomputed so are truth.  In
    f8E4M3FN (4 significant bits) the bound 127 itself rounds to 128, which
    si8 cannot hold (f8E5M2 too): those elements are the spec's undefined convert."""
    et = element_type(expressed)
    dt = np.dtype(et.numpy)
    q = quantized_type("si8", expressed, [0.375], [-5])
    s = np.float32(np.float32(expressed_scales(q)[0]))
    assert float(np.float32(0.375).astype(dt)) == float(s)
    every = np.arange(-128, 128)
    want = ((every + 5).astype(np.float32).astype(dt).astype(np.float32) * s).astype(dt)
    assert np.array_equal(dequantize(every, q).astype(np.float32), want.astype(np.float32))
    x = np.unique(np.random.default_rng(1).normal(0, 20, 3000).astype(np.float32).astype(dt))
    x = x[np.isfinite(x.astype(np.float32))]
    y = (x.astype(np.float32) / s).astype(dt).astype(np.float32)
    y = (y + np.float32(np.float32(-5).astype(dt))).astype(dt).astype(np.float32)
    lo, hi = (np.float32(np.float32(v).astype(dt)) for v in (-128, 127))
    want = np.rint(np.minimum(np.maximum(y, lo), hi)).astype(np.int64)
    got = quantize(x, q)
    outside = (want < -128) | (want > 127)       # f8E4M3FN rounds storage_max 127 to 128: convert undefined
    assert np.array_equal(got.mask, outside)
    assert np.array_equal(got.data.astype(np.int64)[~outside], want[~outside])
    assert outside.any() == (et.format.precision < 7)   # 127 needs 7 significant bits


def test_ties_go_to_even_and_the_clamp_is_before_the_rounding():
    q = quantized_type("si8", "f32", [1.0], [0], storage_min=-10, storage_max=10)
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 10.4, 10.6, -10.6, 1e30, -np.inf], np.float32)
    assert quantize(x, q).tolist() == [0, 2, 2, 0, -2, 10, 10, -10, 10, -10]


def test_the_float_steps_round_where_exact_arithmetic_would_not():
    """The spec divides in the expressed type: where the f32 quotient x / f32(0.1)
    rounds onto a tie k + 1/2 that the exact quotient is not at, the result
    is the tie rounded to even — not the exact quotient rounded.  Truth:
    exact Fractions, and numpy's f32 division (correctly rounded)."""
    q = quantized_type("si8", "f32", [0.1], [0])
    s = Fraction(float(np.float32(0.1)))
    seen = {"agree": 0, "differ": 0}
    for k in range(1, 2400):
        x = np.float32(k * 0.005)
        exact = Fraction(float(x)) / s
        f32q = Fraction(float(np.float32(x) / np.float32(0.1)))
        if f32q.denominator == 2 and exact != f32q:   # an f32 tie the exact quotient is not
            got = int(quantize(np.array([x]), q)[0])
            assert got == round(f32q)                 # Python rounds a Fraction tie to even
            seen["agree" if got == round(exact) else "differ"] += 1
    assert seen["differ"] > 0 and seen["agree"] > 0


def test_findings_bounds_rounded_into_the_expressed_type():
    """bf16 holds neither 32767 (→ 32768) nor 259 (→ 260, a tie to even):
    clamped there, `quantize` gives 32768 (outside si16: masked, the spec's
    convert is undefined) and 260 (returned, above storage_max 259)."""
    q = quantized_type("si16", "bf16", [1.0], [0])
    r = quantize(np.array([1e6, -1e6, 7.0], np.dtype(element_type("bf16").numpy)), q)
    assert r.mask.tolist() == [True, False, False] and r.data.tolist()[1:] == [-32768, 7]
    q = quantized_type("si16", "bf16", [1.0], [0], storage_min=-259, storage_max=259)
    r = quantize(np.array([1e4, -1e4], np.dtype(element_type("bf16").numpy)), q)
    assert r.tolist() == [260, -260]


def test_f8e8m0fnu_cannot_express_zero_or_negative_values():
    q = quantized_type("ui8", "f8E8M0FNU", [1.0], [10])
    assert dequantize(np.array([11, 14], np.uint8), q).astype(np.float32).tolist() == [1.0, 4.0]
    for v in (10, 9):
        with pytest.raises(ValueError):
            dequantize(np.array([v], np.uint8), q)


def test_nan_quantizes_to_an_unspecified_value():
    q = quantized_type("si8", "f32", [0.5], [0])
    r = quantize(np.array([np.nan, 1.0], np.float32), q)
    assert r.mask.tolist() == [True, False] and int(r[1]) == 2
    with pytest.raises(ValueError):
        dequantize(r, q)


def test_dequantize_subtracts_exactly_where_the_storage_type_would_overflow():
    """i8, zero point -128: 127 - (-128) = 255 is no i8; read exactly (255 · 0.5)."""
    q = quantized_type("si8", "f32", [0.5], [-128])
    assert dequantize(np.array([127, -128], np.int8), q).tolist() == [127.5, 0.0]


def test_per_axis_uses_the_slice_parameters():
    """quantization.md's example type: slice i of dimension 1 uses scales[i], zero_points[i]."""
    shape, q = parse_quantized_tensor_type("tensor<4x3x2x!quant.uniform<i8:f32:1, {0.2:20, 0.1:10, 0.3:30}>>")
    v = np.arange(24, dtype=np.int8).reshape(shape)
    d = dequantize(v, q)
    for j, (s, z) in enumerate(zip((0.2, 0.1, 0.3), (20, 10, 30))):
        assert np.array_equal(d[:, j, :], np_dequantize_f32(v[:, j, :], s, z))
    assert np.array_equal(quantize(d, q).data, v)


def test_quantize_rejects_other_float_types_and_ops_answering_wider():
    q = quantized_type("si8", "f32", [0.5], [0])
    with pytest.raises(TypeError):
        quantize(np.array([1.0]), q)
    x = Quantized(np.array([1, 2], np.int8), q)
    with pytest.raises(TypeError):
        dequantize_op_quantize(lambda a: a.astype(np.float64), x, q)


def test_helpers_compare_select_hybrid():
    q = quantized_type("si8", "f32", [0.5], [0])
    r = quantized_type("si8", "f32", [0.25], [4])
    a = Quantized(np.array([2, 4, -6], np.int8), q)      # 1.0, 2.0, -3.0
    b = Quantized(np.array([8, 12, -8], np.int8), r)     # 1.0, 2.0, -3.0
    assert dequantize_compare(a, b, "EQ").tolist() == [True, True, True]
    assert dequantize_compare(a, b, "LT").tolist() == [False, False, False]
    sel = dequantize_select_quantize([True, False, True], a, b, r)
    assert sel.tolist() == [8, 12, -8]
    lhs = np.array([1.0, 2.0, 3.0], np.float32)
    assert hybrid_dequantize_then_op(np.multiply, lhs, a).tolist() == [1.0, 4.0, -9.0]


def test_tan_quantized_lies_in_the_bounds_of_its_accepted_range():
    """The seed's quantized tan: `dequantize_op_quantize(tan, operand,
    type(result))`.  The float tan is approximate: f32 tan within 1 ulp of
    the true tan (mpmath, 50 digits) quantizes, by monotonicity, into
    [quantize(lo), quantize(hi)]; numpy's float32 tan lands there."""
    q_in = quantized_type("si8", "f32", [0.0125], [0])
    q_out = quantized_type("si8", "f32", [0.05], [-10])
    values = np.arange(-128, 128, dtype=np.int8)
    got = dequantize_op_quantize(np.tan, Quantized(values, q_in), q_out)
    xs = dequantize(values, q_in)
    mpmath.mp.dps = 50
    width = 0
    for x, g in zip(xs.tolist(), got.tolist()):
        t = float(mpmath.tan(mpmath.mpf(x)))
        lo = float(np.nextafter(np.float32(t), np.float32(-np.inf)))
        hi = float(np.nextafter(np.float32(t), np.float32(np.inf)))
        a, b = quantize_bounds(lo, hi, q_out)
        assert a <= g <= b
        width = max(width, b - a)
    assert width <= 1


# --------------------------------------------------------------------------
# A second implementation: integer fixed-point, as TFLite's reference
# kernels compute (tensorflow/lite/kernels/internal/common.h, reference_ops
# add.h / requantize.h / quantize.h, kernels/add.cc Prepare) — and
# StableHLO's integer lowering (StablehloLegalizeQuantToMath.cpp).
# --------------------------------------------------------------------------

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1


def tfl_round(x: float) -> int:
    """std::round / TfLiteRound: ties away from zero (exact, on the double's value)."""
    f = Fraction(x)
    n = math.floor(abs(f) + Fraction(1, 2))
    return n if f >= 0 else -n


def quantize_multiplier(m: float) -> tuple[int, int]:
    """QuantizeMultiplier: m = q_fixed · 2^(shift - 31), q_fixed a Q31 in [2^30, 2^31)."""
    if m == 0:
        return 0, 0
    q, shift = math.frexp(m)
    q_fixed = tfl_round(q * (1 << 31))
    if q_fixed == 1 << 31:
        q_fixed //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    return q_fixed, shift


def srdhm(a: int, b: int) -> int:
    """gemmlowp SaturatingRoundingDoublingHighMul: (a·b + nudge) / 2^31, C++ division (toward zero)."""
    if a == b == INT32_MIN:
        return INT32_MAX
    ab = a * b
    t = ab + ((1 << 30) if ab >= 0 else 1 - (1 << 30))
    q = abs(t) >> 31
    return q if t >= 0 else -q


def rdbpot(x: int, exponent: int) -> int:
    """gemmlowp RoundingDivideByPOT: x / 2^exponent, ties away from zero."""
    mask = (1 << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> exponent) + (1 if remainder > threshold else 0)


def mbqm(x: int, qm: int, shift: int, single_rounding: bool = False) -> int:
    """MultiplyByQuantizedMultiplier: gemmlowp's two roundings (the default
    build), or TFLITE_SINGLE_ROUNDING's one (ties toward +inf)."""
    if single_rounding:
        total = 31 - shift
        return (x * qm + (1 << (total - 1))) >> total
    left, right = max(shift, 0), max(-shift, 0)
    return rdbpot(srdhm(x * (1 << left), qm), right)


def tflite_quantize(x: np.ndarray, scale: float, zp: int, lo: int, hi: int) -> np.ndarray:
    """reference_ops::AffineQuantize: round(val / scale) + zero_point in float32, ties away, then clamp."""
    with np.errstate(all="ignore"):
        y = (x.astype(np.float32) / np.float32(scale)).astype(np.float32)
    return np.array([min(max(tfl_round(float(v)) + zp, lo), hi) for v in y.tolist()], dtype=np.int64)


def tflite_dequantize(q: np.ndarray, scale: float, zp: int) -> np.ndarray:
    """reference_ops::Dequantize: static_cast<float>(scale * (val - zero_point))."""
    return ((q.astype(np.int64) - zp).astype(np.float32) * np.float32(scale)).astype(np.float32)


def tflite_requantize(q: np.ndarray, s_in: float, z_in: int, s_out: float, z_out: int, lo: int, hi: int,
                      single_rounding: bool = False) -> np.ndarray:
    """reference_ops::Requantize with effective_scale = double(s_in) / double(s_out) (float scales)."""
    m, shift = quantize_multiplier(float(np.float32(s_in)) / float(np.float32(s_out)))
    return np.array([min(max(mbqm(int(v) - z_in, m, shift, single_rounding) + z_out, lo), hi)
                     for v in q.tolist()], dtype=np.int64)


def tflite_add(a: np.ndarray, b: np.ndarray, qa, qb, qo, single_rounding: bool = False) -> np.ndarray:
    """reference_integer_ops AddElementwise with kernels/add.cc's Prepare for int8/uint8 (left_shift 20)."""
    sa, sb, so = (float(np.float32(expressed_scales(q)[0])) for q in (qa, qb, qo))
    left_shift = 20
    twice_max = 2 * max(sa, sb)
    m1, s1 = quantize_multiplier(sa / twice_max)
    m2, s2 = quantize_multiplier(sb / twice_max)
    mo, so_ = quantize_multiplier(twice_max / (float(np.float32((1 << left_shift) * np.float32(so)))))
    za, zb, zo = qa.zero_points[0], qb.zero_points[0], qo.zero_points[0]
    lo, hi = qo.storage_min, qo.storage_max
    out = []
    for x, y in zip(a.reshape(-1).tolist(), b.reshape(-1).tolist()):
        sx = mbqm((x - za) * (1 << left_shift), m1, s1, single_rounding)
        sy = mbqm((y - zb) * (1 << left_shift), m2, s2, single_rounding)
        raw = mbqm(sx + sy, mo, so_, single_rounding) + zo
        out.append(min(max(raw, lo), hi))
    return np.array(out, dtype=np.int64).reshape(a.shape)


def quant_to_math_requantize(q: np.ndarray, qi, qo) -> np.ndarray:
    """StableHLO's `requantize` (quant-to-math): f32(q)·f32(si/so) + f32(zo − zi·si/so), the merged
    constants computed in double from the types' doubles, rounded to even, into i32."""
    if qi == qo:
        return q.astype(np.int64)
    ms = qi.scales[0] / qo.scales[0]
    mz = qo.zero_points[0] - qi.zero_points[0] * ms
    y = (q.astype(np.float32) * np.float32(ms)).astype(np.float32)
    if mz != 0:
        y = (y + np.float32(mz)).astype(np.float32)
    return np.rint(y).astype(np.int64)


def quant_to_math_add(a, b, qa, qb, qo) -> np.ndarray:
    """ConvertUniformQuantizedAddOp: each operand requantized to the result's type, summed in i32,
    the result's zero point subtracted once, clamped to [storage_min, storage_max]."""
    s = quant_to_math_requantize(a, qa, qo) + quant_to_math_requantize(b, qb, qo) - qo.zero_points[0]
    return np.clip(s, qo.storage_min, qo.storage_max)


def exact_add(a, b, qa, qb, qo) -> np.ndarray:
    """The real-number ideal: (a − za)·sa + (b − zb)·sb with the types' f32 scales, divided by so,
    plus zo — exactly, rounded once to even, clamped."""
    sa, sb, so = (Fraction(s) for s in (expressed_scales(qa)[0], expressed_scales(qb)[0], expressed_scales(qo)[0]))
    za, zb, zo = qa.zero_points[0], qb.zero_points[0], qo.zero_points[0]
    out = [min(max(round(((x - za) * sa + (y - zb) * sb) / so + zo), qo.storage_min), qo.storage_max)
           for x, y in zip(a.reshape(-1).tolist(), b.reshape(-1).tolist())]
    return np.array(out, dtype=np.int64).reshape(a.shape)


def test_fixed_point_primitives_by_hand():
    """Hand-computed: 0.5 = 2^30·2^-31·2^1 → (2^30, 0); RoundingDivideByPOT ties away from zero;
    SaturatingRoundingDoublingHighMul(2^30, 2^30) = 2^29."""
    assert quantize_multiplier(0.5) == (1 << 30, 0)
    assert quantize_multiplier(0.75) == (3 << 29, 0)
    assert quantize_multiplier(1.0) == (1 << 30, 1)
    assert [rdbpot(x, 1) for x in (3, -3, 5, -5, 4)] == [2, -2, 3, -3, 2]
    assert srdhm(1 << 30, 1 << 30) == 1 << 29
    assert srdhm(INT32_MIN, INT32_MIN) == INT32_MAX
    assert mbqm(100, *quantize_multiplier(0.3)) == 30
    assert tfl_round(2.5) == 3 and tfl_round(-2.5) == -3 and tfl_round(0.49999999999999994) == 0


# Scale triples (lhs, rhs, result; zero points): TFLite-like int8 add parameters.
ADD_CASES = [
    ((0.1, -3), (0.2, 5), (0.3, 0)),
    ((0.05, 0), (0.05, 0), (0.1, 0)),
    ((0.0078125, -128), (0.0078125, -128), (0.015625, -128)),
    ((0.0123, 17), (0.0457, -33), (0.0391, 4)),
    ((0.3, 0), (0.3, 0), (0.3, 0)),
    ((0.02, 10), (0.5, -100), (0.5, 3)),
]


def add_comparison(case):
    """All 256 × 256 int8 operand pairs: the spec's dequantize_op_quantize(add)
    and the other implementations (dict of storage arrays)."""
    qa, qb, qo = (quantized_type("si8", "f32", [s], [z]) for s, z in case)
    a, b = np.meshgrid(np.arange(-128, 128), np.arange(-128, 128), indexing="ij")
    spec = dequantize_op_quantize(np.add, Quantized(a.astype(np.int8), qa), Quantized(b.astype(np.int8), qb), qo)
    assert not spec.mask.any()
    return spec.data.astype(np.int64), {
        "exact real": exact_add(a, b, qa, qb, qo),
        "tflite (gemmlowp, 2 roundings)": tflite_add(a, b, qa, qb, qo),
        "tflite (single rounding)": tflite_add(a, b, qa, qb, qo, single_rounding=True),
        "quant-to-math": quant_to_math_add(a, b, qa, qb, qo),
    }


@pytest.mark.parametrize("case", ADD_CASES, ids=[str(c) for c in ADD_CASES])
def test_add_against_fixed_point_implementations(case):
    """Every implementation lands within 1 of the spec's result (each
    approximates the same real number, rounding it differently: the spec
    in f32 steps, TFLite in Q31 multipliers with ties away, quant-to-math
    rounding each operand before the sum); the exact real ideal differs
    from the spec only where f32 steps move a value across a .5 boundary."""
    spec, others = add_comparison(case)
    for name, other in others.items():
        assert np.abs(other - spec).max() <= 1, name


REQUANT_CASES = [((0.1, -30), (0.1, -20)), ((0.5, -20), (0.2, -30)), ((0.0123, 17), (0.0391, 4)),
                 ((0.3, 0), (0.07, -9)), ((0.02, 10), (0.5, 3))]


def requantize_comparison(case):
    (si, zi), (so, zo) = case
    qi, qo = quantized_type("si8", "f32", [si], [zi]), quantized_type("si8", "f32", [so], [zo])
    v = np.arange(-128, 128)
    spec = uniform_quantize(Quantized(v.astype(np.int8), qi), qo).data.astype(np.int64)
    return spec, {
        "tflite (gemmlowp, 2 roundings)": tflite_requantize(v, si, zi, so, zo, -128, 127),
        "tflite (single rounding)": tflite_requantize(v, si, zi, so, zo, -128, 127, single_rounding=True),
        "quant-to-math": np.clip(quant_to_math_requantize(v, qi, qo), -128, 127),
    }


@pytest.mark.parametrize("case", REQUANT_CASES, ids=[str(c) for c in REQUANT_CASES])
def test_requantize_against_fixed_point_implementations(case):
    spec, others = requantize_comparison(case)
    for name, other in others.items():
        assert np.abs(other - spec).max() <= 1, name


def quantize_vs_tflite(scale: float, zp: int, x: np.ndarray):
    """The spec's quantize and TFLite's AffineQuantize on f32 `x`, and where
    they may part: x / scale (f32) a tie, or the f32 sum x / scale + zp a tie
    it was not (adding the zero point drops the bit that kept it off the tie)."""
    q = quantized_type("si8", "f32", [scale], [zp])
    spec = quantize(x, q).data.astype(np.int64)
    tfl = tflite_quantize(x, scale, zp, -128, 127)
    quotient = (x / np.float32(scale)).astype(np.float32)
    shifted = (quotient + np.float32(zp)).astype(np.float32)
    tie = (quotient - np.floor(quotient)) == 0.5
    sum_tie = ~tie & ((shifted - np.floor(shifted)) == 0.5)
    return spec, tfl, tie, sum_tie


def test_quantize_against_tflite_differs_only_at_ties():
    """AffineQuantize computes round(x / scale) + zp: f32 division, ties away
    from zero, the zero point added after rounding; the spec adds it in f32
    first and ties to even.  They agree except at a tie of either form, and
    there differ by exactly 1."""
    rng = np.random.default_rng(7)
    for scale, zp in [(0.1, -3), (0.0123, 17), (0.3, 0)]:
        x = np.concatenate([rng.normal(0, 60 * scale, 20000),
                            (np.arange(-140, 140) + 0.5) * np.float64(np.float32(scale))]).astype(np.float32)
        spec, tfl, tie, sum_tie = quantize_vs_tflite(scale, zp, x)
        assert tie.sum() > 0
        other = ~(tie | sum_tie)
        assert np.array_equal(spec[other], tfl[other])
        assert np.abs(spec - tfl).max() == 1


def test_dequantize_equals_tflite():
    for scale, zp in [(0.1, -3), (0.0123, 17), (3.0, 0)]:
        q = quantized_type("si8", "f32", [scale], [zp])
        v = np.arange(-128, 128)
        assert np.array_equal(dequantize(v, q), tflite_dequantize(v, scale, zp))


@pytest.mark.parametrize("ty, rule", [
    ("tensor<2x3x!quant.uniform<i8:f32:-1, {0.5,0.25}>>", "quantized_c11"),
    ("tensor<2x3x!quant.uniform<i8:f32:2, {0.5,0.25}>>", "quantized_c12"),
    ("tensor<2x3x!quant.uniform<i8:f32:1, {0.5,0.25}>>", "quantized_c13"),
    ("tensor<2x3x!quant.uniform<i8:f32, 0.5:200>>", "quantized_c7"),
    ("tensor<2x3x!quant.uniform<i8:f32:1, {0.5,0.25,0.125}>>", None),
])
def test_a_program_whose_quantized_type_breaks_the_types_rules_is_rejected(ty, rule):
    """The reader took any scale, zero point and quantization dimension
    written, and transpose's constraints read the types as given: a
    quantization dimension of -1 on both sides, or two scales on a
    dimension of three, was judged as a valid program.  Each breaks one of
    the spec's rules for quantized types, and the rejection names it."""
    from shlo_conform.oracle.program import parse_program
    from shlo_conform.oracle.rejection import ProgramRejected
    text = ('func.func @main(%a: T) -> T {\n'
            '  %0 = "stablehlo.transpose"(%a) {permutation = array<i64: 0, 1>} : (T) -> T\n'
            '  "func.return"(%0) : (T) -> ()\n}\n').replace("T", ty)
    if rule is None:
        parse_program(text)
        return
    with pytest.raises(ProgramRejected, match=f"violates {rule}") as got:
        parse_program(text)
    assert got.value.constraint == rule
