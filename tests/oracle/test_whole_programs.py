"""Whole programs at model scale (issue 21): the walk, the ranges and the element-wise routes on whole arrays.

What changed is how, not what: tolerances through programs
(oracle/propagation.py) are computed in stretches of 2^16 elements, both
ends of an operand's range once per op; the element-wise route evaluates
an op once per value present for narrow operands (`elementwise._by_value`),
states plain answers without an object per element (`_plain_numbers`);
long hex constants are split by a regular expression.  Truth here is
independent of those routes: ranges written out with Python ints, numpy's
IEEE comparisons and casts, and the same op run on pieces too small for
the new routes to apply.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from shlo_conform.generators.expect import expected_outputs
from shlo_conform.oracle import elementwise
from shlo_conform.oracle.program import execute, parse_program
from shlo_conform.oracle.propagation import _bounds
from shlo_conform.spec.accuracy import tolerance_ulp
from shlo_conform.spec.expectation import Expectation
from shlo_conform.spec.types import (E_BF16, E_F8E4M3FN, E_F8E5M2, E_F16, E_F32, E_F64, TensorType, from_ordinals,
                                     nan_mask, ordinals, to_bits)
from shlo_conform.suites.compare import compare

NARROW = [E_F8E4M3FN, E_F8E5M2, E_BF16, E_F16]


def _patterns(et, n=20000, seed=0) -> np.ndarray:
    """Every bit pattern of a narrow type; for wide ones random patterns and
    the format's landmarks (±0, ±inf, NaNs, largest finite, smallest subnormal)."""
    c = et.component if et.is_complex else et
    dt = c.bits_dtype
    if c.storage_bits <= 16:
        b = np.arange(1 << c.storage_bits, dtype=np.uint64).astype(dt)
    else:
        rng = np.random.default_rng(seed)
        b = rng.integers(0, np.iinfo(dt).max, n, dtype=dt, endpoint=True)
        if c.is_float:
            f = c.format
            marks = [0, f.sign_mask, f.inf_bits(False), f.inf_bits(True), f.nan_bits(), f.nan_bits() | f.sign_mask,
                     f.exponent_mask | f.mantissa_mask, f.inf_bits(False) - 1, 1, f.sign_mask | 1]
            b = np.concatenate([b, np.array(marks, dtype=dt)])
    return b.reshape(-1, 2) if et.is_complex else b


@pytest.mark.parametrize("et", NARROW + [E_F32, E_F64], ids=lambda t: t.name)
def test_an_approximate_values_range_is_its_tolerance_either_side_clamped_at_infinity(et):
    """`ulp` ranges computed without Python ints, against the definition
    written out with them: ordinal ± tolerance, clamped to ±inf, NaN its
    own range — at every pattern of the narrow formats, NaN ordinals (the
    largest magnitudes, where an unclamped ± would overflow) included."""
    bits = _patterns(et)
    t = tolerance_ulp(et)
    e = Expectation(TensorType((len(bits),), et), bits, "ulp", t)
    lo, hi = _bounds(e)
    o = [int(v) for v in ordinals(bits, et)]
    biggest = np.array(float(et.format.max_finite) if not et.format.has_inf else np.inf).astype(et.numpy)
    top = int(ordinals(to_bits(biggest, et), et))   # +inf, or the largest finite value where there is no inf
    nan = nan_mask(bits.astype(object), et.format).astype(bool)
    want_lo = [v if n else max(v - t, -top) for v, n in zip(o, nan)]
    want_hi = [v if n else min(v + t, top) for v, n in zip(o, nan)]
    assert [int(v) for v in lo] == want_lo and [int(v) for v in hi] == want_hi


def test_an_approximate_f8E4M3FN_value_feeds_the_next_op():
    """f8E4M3FN has no infinity: a range stops at its largest finite value
    (until 2026-11-25 the range's clamp asked the format for its infinity
    and the program could not be judged).  sin(x) + sin(x): doubling is
    exact, so the range is twice each end of the sine's."""
    x = np.array([1.0, 2.0, -3.0, 0.5, 448.0, -448.0], ml_dtypes.float8_e4m3fn)
    text = """func.func @main(%x: tensor<6xf8E4M3FN>) -> tensor<6xf8E4M3FN> {
  %s = stablehlo.sine %x : tensor<6xf8E4M3FN>
  %y = stablehlo.add %s, %s : tensor<6xf8E4M3FN>
  return %y : tensor<6xf8E4M3FN>
}"""
    (e,) = expected_outputs(text, [x])
    k = tolerance_ulp(E_F8E4M3FN)
    s = np.sin(x.astype(np.float64)).astype(ml_dtypes.float8_e4m3fn)
    step = lambda v, n: from_ordinals(ordinals(v.view(np.uint8), E_F8E4M3FN) + n, E_F8E4M3FN)  # noqa: E731
    ends = [step(s, -k).view(ml_dtypes.float8_e4m3fn), step(s, k).view(ml_dtypes.float8_e4m3fn)]
    doubled = [(v.astype(np.float32) * 2).astype(ml_dtypes.float8_e4m3fn).view(np.uint8) for v in ends]
    lo = np.minimum(ordinals(doubled[0], E_F8E4M3FN), ordinals(doubled[1], E_F8E4M3FN))
    hi = np.maximum(ordinals(doubled[0], E_F8E4M3FN), ordinals(doubled[1], E_F8E4M3FN))
    assert e.kind == "bounded"
    assert ordinals(e.lo, E_F8E4M3FN).tolist() == lo.tolist() and ordinals(e.hi, E_F8E4M3FN).tolist() == hi.tolist()


def _f32_step(v: np.ndarray, n) -> np.ndarray:
    return from_ordinals(ordinals(v.view(np.uint32), E_F32) + n, E_F32).view(np.float32)


def test_a_product_of_two_approximate_arrays_spans_the_four_products_of_their_ends():
    """sin(x) * cos(y) over 4096 elements: at each element the expectation's
    range is exactly [min, max] of the four f32 products of the ends of the
    sine's and cosine's ranges (numpy's IEEE multiply), ±0 read as one."""
    rng = np.random.default_rng(3)
    x, y = (rng.uniform(-40, 40, 4096).astype(np.float32) for _ in range(2))
    text = """func.func @main(%x: tensor<4096xf32>, %y: tensor<4096xf32>) -> tensor<4096xf32> {
  %s = stablehlo.sine %x : tensor<4096xf32>
  %c = stablehlo.cosine %y : tensor<4096xf32>
  %p = stablehlo.multiply %s, %c : tensor<4096xf32>
  return %p : tensor<4096xf32>
}"""
    (e,) = expected_outputs(text, [x, y])
    s = np.sin(x.astype(np.float64)).astype(np.float32)   # correctly rounded here: away from any midpoint
    c = np.cos(y.astype(np.float64)).astype(np.float32)
    assert np.array_equal(e.array(), s * c)
    k = tolerance_ulp(E_F32)
    corners = [a * b for a in (_f32_step(s, -k), _f32_step(s, k)) for b in (_f32_step(c, -k), _f32_step(c, k))]
    o = np.array([ordinals(p.view(np.uint32), E_F32) for p in corners])
    assert ordinals(e.lo, E_F32).tolist() == o.min(axis=0).tolist()
    assert ordinals(e.hi, E_F32).tolist() == o.max(axis=0).tolist()


def test_a_contraction_of_approximate_values_admits_every_conforming_implementation():
    """sin(a) - sin(b) written as a dot with [1, -1]: an implementation whose
    sines are each within the sine's tolerance (the first 4 ULP high, the
    second 4 low) and whose dot is exact is conforming, and lands 128 ULP of
    the difference away — outside a range built from the all-low and
    all-high corners, which move both sines the same way (xfail until
    2026-11-25); inside the range dot_general's interval form gives
    (oracle/bilinear.py; tests/oracle/test_bilinear_ranges.py has the
    exact extremes)."""
    text = """func.func @main(%x: tensor<1x2xf32>, %w: tensor<2x1xf32>) -> tensor<1x1xf32> {
  %s = stablehlo.sine %x : tensor<1x2xf32>
  %d = stablehlo.dot_general %s, %w, contracting_dims = [1] x [0] : (tensor<1x2xf32>, tensor<2x1xf32>) -> tensor<1x1xf32>
  return %d : tensor<1x1xf32>
}"""
    x, w = np.array([[1.0, 1.1]], np.float32), np.array([[1.0], [-1.0]], np.float32)
    (e,) = expected_outputs(text, [x, w])
    s = np.sin(x.astype(np.float64)).astype(np.float32)
    k = tolerance_ulp(E_F32)
    sines = np.array([[_f32_step(s[0, :1], k)[0], _f32_step(s[0, 1:], -k)[0]]], np.float32)
    assert compare(e, (sines @ w).astype(np.float32)).ok


# --------------------------------------------------------------------------
# Element-wise routes on whole arrays
# --------------------------------------------------------------------------

def _program(op: str, in_t: str, out_t: str, arity: int = 1, attrs: str = "") -> str:
    args = ", ".join(f"%a{i}: {in_t}" for i in range(arity))
    uses = ", ".join(f"%a{i}" for i in range(arity))
    return (f"func.func @main({args}) -> {out_t} {{\n  %0 = \"stablehlo.{op}\"({uses}){attrs} : "
            f"({', '.join([in_t] * arity)}) -> {out_t}\n  \"func.return\"(%0) : ({out_t}) -> ()\n}}\n")


def _in_pieces(text_of, arrays: list, piece: int) -> Expectation:
    """The same op run on slices of `piece` elements (too few for `_by_value`),
    concatenated: the reference the whole-array result must equal."""
    n = len(arrays[0])
    parts = []
    for i in range(0, n, piece):
        chunk = [a[i:i + piece] for a in arrays]
        (e,) = expected_outputs(text_of(len(chunk[0])), chunk)
        parts.append(e)
    return parts


@pytest.mark.parametrize("op, et, out", [("cosine", E_BF16, None), ("exponential", E_F16, None),
                                         ("log", E_F8E5M2, None), ("negate", E_F8E4M3FN, None),
                                         ("is_finite", E_BF16, "i1"),
                                         # ~5 s, an exact widening: make test-long (CI)
                                         pytest.param("convert", E_BF16, "f32", marks=pytest.mark.long),
                                         # ~8 s (every f16 to si8, the saturating cast's pieces): test-long too
                                         pytest.param("convert", E_F16, "si8", marks=pytest.mark.long)])
def test_a_narrow_unary_op_on_a_large_array_equals_the_op_on_its_pieces(op, et, out):
    """Every pattern of the type, three times over and shuffled (more
    elements than values: `_by_value` evaluates each value once), against
    the op run on pieces smaller than the type's value count."""
    rng = np.random.default_rng(5)
    bits = np.tile(np.arange(1 << et.bits, dtype=np.uint64).astype(et.bits_dtype), 3)
    rng.shuffle(bits)
    x = bits.view(et.numpy)
    n = len(x)
    out_mlir = out or et.mlir
    text_of = lambda m: _program(op, f"tensor<{m}x{et.mlir}>", f"tensor<{m}x{out_mlir}>")  # noqa: E731
    (whole,) = expected_outputs(text_of(n), [x])
    piece = (1 << et.bits) // 2
    pieces = _in_pieces(text_of, [x], piece)
    assert whole.kind == pieces[0].kind and whole.tolerance_ulp == pieces[0].tolerance_ulp
    assert np.array_equal(whole.bits, np.concatenate([p.bits for p in pieces]))
    # implementation-defined elements (f16 -> si8 out of range): the same elements, the same alternatives
    assert whole.impl_defined == [i + k * piece for k, p in enumerate(pieces) for i in p.impl_defined]
    assert [a.label for a in whole.alternatives] == [a.label for a in pieces[0].alternatives]


def test_a_binary_op_on_8_bit_floats_equals_the_op_on_its_pieces():
    rng = np.random.default_rng(6)
    a, b = (rng.integers(0, 256, 100_000, dtype=np.uint8).view(ml_dtypes.float8_e5m2) for _ in range(2))
    text_of = lambda m: _program("divide", f"tensor<{m}xf8E5M2>", f"tensor<{m}xf8E5M2>", 2)  # noqa: E731
    (whole,) = expected_outputs(text_of(len(a)), [a, b])
    pieces = _in_pieces(text_of, [a, b], 30_000)
    assert np.array_equal(whole.bits, np.concatenate([p.bits for p in pieces]))


@pytest.mark.parametrize("direction", ["EQ", "NE", "GE", "GT", "LE", "LT"])
@pytest.mark.parametrize("compare_type", ["FLOAT", "TOTALORDER"])
def test_compare_on_a_large_array_is_numpys_ieee_comparison(direction, compare_type):
    """compare has no whole-array claim: its fn answers each distinct pair,
    and the answers (Python bools) are stated at once.  Truth: numpy's IEEE
    comparisons (FLOAT); for TOTALORDER, the order -NaN < -inf < … < -0 <
    +0 < … < +inf < +NaN written with integer keys."""
    rng = np.random.default_rng(7)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 1e-45], np.float32)
    a = np.concatenate([rng.standard_normal(5000).astype(np.float32), np.repeat(specials, len(specials))])
    b = np.concatenate([rng.standard_normal(5000).astype(np.float32), np.tile(specials, len(specials))])
    b[:2000] = a[:2000]   # equal pairs
    t = f"tensor<{len(a)}xf32>"
    attrs = (f" {{comparison_direction = #stablehlo<comparison_direction {direction}>, "
             f"compare_type = #stablehlo<comparison_type {compare_type}>}}")
    (e,) = expected_outputs(_program("compare", t, f"tensor<{len(a)}xi1>", 2, attrs), [a, b])
    if compare_type == "FLOAT":
        x, y = a, b
    else:
        def key(v):   # sign-magnitude bits to a total order on int64
            s = v.view(np.int32).astype(np.int64)
            return np.where(s < 0, -(s & 0x7FFFFFFF) - 1, s)
        x, y = key(a), key(b)
    want = {"EQ": np.equal, "NE": np.not_equal, "GE": np.greater_equal, "GT": np.greater,
            "LE": np.less_equal, "LT": np.less}[direction](x, y)
    assert e.kind == "exact" and e.array().tolist() == want.tolist()


def test_convert_f32_to_bf16_on_a_large_array_rounds_once():
    """convert between types has no whole-array claim either; ml_dtypes
    rounds float32 to bfloat16 once, to nearest even (its double rounding
    is from float64 only)."""
    rng = np.random.default_rng(8)
    x = rng.integers(0, 1 << 32, 50_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = x[~np.isnan(x)]
    t = f"tensor<{len(x)}x"
    (e,) = expected_outputs(_program("convert", t + "f32>", t + "bf16>"), [x])
    with np.errstate(over="ignore"):
        assert e.bits.tolist() == to_bits(x.astype(ml_dtypes.bfloat16), E_BF16).tolist()


def test_a_models_weights_baked_in_as_a_constant_are_read_exactly():
    """A JAX function closing over its weights prints them as one long hex
    literal (megabytes for a model; split here by a regular expression)."""
    import jax
    w = np.random.default_rng(9).standard_normal((300, 300)).astype(np.float32)
    w[w == 0] = 1.0
    text = jax.jit(lambda v: v + w).lower(np.zeros((300, 300), np.float32)).as_text()
    assert 'dense<"0x' in text
    (e,) = execute(parse_program(text), [np.zeros((300, 300), np.float32)])
    assert e.bits.tolist() == w.view(np.uint32).tolist()


def test_the_general_route_still_states_implementation_defined_elements():
    """f32 -> si32 out of range is implementation-defined (spec's fn): the
    answers are not plain, so the per-element statement (`assemble`) gives
    the alternatives — on a large array as on a small one."""
    x = np.tile(np.array([1.5, -2.5, 3e9, -3e9, np.nan, 7.0], np.float32), 2000)
    t = f"tensor<{len(x)}x"
    (e,) = expected_outputs(_program("convert", t + "f32>", t + "i32>"), [x])
    (small,) = expected_outputs(_program("convert", "tensor<6xf32>", "tensor<6xi32>"), [x[:6]])
    assert e.impl_defined[:3] == small.impl_defined[:3] and e.array()[:6].tolist() == small.array().tolist()
    assert len(e.impl_defined) == 2000 * len(small.impl_defined)


def test_small_arrays_group_their_elements_without_numpys_unique():
    cols = [np.array([3, 1, 3, 2, 1], np.uint32), np.array([0, 0, 0, 1, 0], np.uint8)]
    first, inverse = elementwise._distinct(cols)
    rows = list(zip(*[c.tolist() for c in cols]))
    assert len(first) == len(set(rows)) == 3
    assert all(rows[i] == rows[first[inverse[i]]] for i in range(len(rows)))
