"""The whole-array route of accumulations (spec/bounds.py, oracle/accumulate.py)
against the exact one (spec/schedule.py in rationals, elementwise.assemble).

The whole-array route claims to state the *same* expectation as the exact
route — primary bits, bounds, alternatives, reasons — with its enclosures
only deciding faster.  So the test is equality, on random and adversarial
sums and dot products in every float format (cancellation, mixed
magnitudes, near-overflow partial sums, subnormals, ±0, NaN and ±∞ among
the terms, exact ties); then, independently of the exact route, that every
schedule we can run lies inside the stated bound and that one step outside
it fails the suite's comparison.
"""
from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from shlo_conform.oracle import accumulate
from shlo_conform.oracle.elementwise import assemble, resolve
from shlo_conform.oracle.fast import round_fast
from shlo_conform.oracle.rounding import round_bits, round_directed
from shlo_conform.spec import bounds, schedule
from shlo_conform.spec.types import (E_BF16, E_F16, E_F32, E_F64, E_F8E4M3FN, E_F8E5M2, TensorType, from_bits,
                                     from_ordinals, ordinals)
from shlo_conform.suites.compare import compare

FORMATS = [E_F8E4M3FN, E_F8E5M2, E_BF16, E_F16, E_F32, E_F64]
IDS = [e.name for e in FORMATS]
STYLES = ("wide", "unit", "top", "sub", "cancel", "ties", "signed zeros", "mixed")
PROBES = {bounds.RANGE: bounds.range_probe(), bounds.VALUE: 0.0,
          bounds.OVER: schedule.any_value(schedule.OVERFLOW, Fraction(0))}


# --------------------------------------------------------------------------
# Values of a format
# --------------------------------------------------------------------------

def _patterns(et, rng, shape, e_lo: int, e_hi: int) -> np.ndarray:
    """float64 values of random bit patterns with exponent field in [e_lo, e_hi]
    (never the inf/NaN field of a format with infinities)."""
    fmt = et.format
    m = fmt.mantissa_bits
    top = (1 << fmt.exponent_bits) - (2 if fmt.has_inf else 1)
    e = rng.integers(max(0, e_lo), min(top, e_hi) + 1, shape).astype(np.uint64)
    mant = rng.integers(0, 1 << m, shape, dtype=np.uint64) if m < 63 else rng.integers(0, 1 << 52, shape,
                                                                                        dtype=np.uint64)
    sign = rng.integers(0, 2, shape).astype(np.uint64)
    bits = (sign << np.uint64(fmt.bits - 1)) | (e << np.uint64(m)) | mant
    if not fmt.has_inf:   # f8E4M3FN: S.1111.111 is NaN; keep it finite here
        nan = (bits & np.uint64((1 << (fmt.bits - 1)) - 1)) == np.uint64((1 << (fmt.bits - 1)) - 1)
        bits = np.where(nan, bits - np.uint64(1), bits)
    return from_bits(bits.astype(et.bits_dtype), et).astype(np.float64)


def draw(et, rng, shape, style: str, specials: float = 0.0) -> np.ndarray:
    """Values of format `et` (as float64) in one of STYLES, with NaN, ±∞ and
    ±0 sprinkled in at rate `specials`."""
    fmt = et.format
    bias = fmt.bias
    top = (1 << fmt.exponent_bits) - (2 if fmt.has_inf else 1)
    if style == "wide":
        x = _patterns(et, rng, shape, 0, top)
    elif style == "unit":
        x = _patterns(et, rng, shape, bias - 3, bias + 3)
    elif style == "top":    # partial sums near and past the overflow threshold
        x = _patterns(et, rng, shape, top - 1, top)
    elif style == "sub":
        x = _patterns(et, rng, shape, 0, 1)
    elif style == "cancel":  # pairs x, −x and a few small terms: the exact sum is far below Σ|x|
        x = _patterns(et, rng, shape, bias - 2, bias + 6)
        half = shape[-1] // 2
        x[..., half:2 * half] = -x[..., :half][..., rng.permutation(half)]
        small = _patterns(et, rng, shape, bias - fmt.precision - 3, bias - fmt.precision + 1)
        x = np.where(rng.random(shape) < 0.15, small, x)
    elif style == "ties":    # small integers and halves: exact sums on and between grid points
        scale = 2.0 ** (fmt.precision - 2)
        x = (rng.integers(-4, 5, shape) * scale + rng.integers(-2, 3, shape) * 0.5).astype(np.float64)
        x = round_fast(x, fmt)
    elif style == "signed zeros":
        x = np.where(rng.random(shape) < 0.5, -0.0, 0.0)
        x = np.where(rng.random(shape) < 0.2, _patterns(et, rng, shape, bias - 1, bias + 1), x)
    else:   # "mixed": every style somewhere
        x = draw(et, rng, shape, STYLES[int(rng.integers(0, len(STYLES) - 1))])
        for s in STYLES[:-1]:
            x = np.where(rng.random(shape) < 0.1, draw(et, rng, shape, s), x)
    if specials:
        r = rng.random(shape)
        inf = np.inf if fmt.has_inf else np.nan
        x = np.where(r < specials / 4, np.nan, x)
        x = np.where((r >= specials / 4) & (r < specials / 2), inf, x)
        x = np.where((r >= specials / 2) & (r < 3 * specials / 4), -inf, x)
        x = np.where((r >= 3 * specials / 4) & (r < specials), -0.0, x)
    return x


# --------------------------------------------------------------------------
# The two routes
# --------------------------------------------------------------------------

def _exact(rec, t):
    """The exact route's record: every element's answer in rationals
    (`element`), resolved and assembled as run_accumulating did before."""
    answers = [resolve(rec.element(i), t.element_type) for i in range(len(rec.kind))]
    return assemble(answers, t, "exact", False)


def _sums(et, X):
    t = TensorType((X.shape[0],), et)
    rec = bounds.float_sum(X, None, et.format, lambda i: schedule.sum_range(X[i].tolist(), et.format), PROBES)
    return rec, t


def _dots(et, A, B):
    """Row g of A against row g of B: G dot products of length K."""
    t = TensorType((A.shape[0], 1, 1), et)
    a, b = A[:, None, :], B[:, :, None]
    rec = bounds.float_dot(a, b, et.format,
                           lambda i: schedule.dot_range(list(zip(A[i].tolist(), B[i].tolist())), et.format), PROBES)
    return rec, t


def _same(rec, t):
    new, old = accumulate.expectation(rec, t), _exact(rec, t)
    if new != old:
        nb, ob = new.bits.reshape(-1), old.bits.reshape(-1)
        bad = np.flatnonzero((nb != ob) | ((new.lo is not None) and (old.lo is not None)
                                           and ((new.lo.reshape(-1) != old.lo.reshape(-1))
                                                | (new.hi.reshape(-1) != old.hi.reshape(-1)))))
        detail = [(int(i), rec.element(int(i))) for i in bad[:3]]
        raise AssertionError(f"{t.mlir}: routes differ at {len(bad)} elements, e.g. {detail}; "
                             f"kinds {new.kind}/{old.kind}, why {new.why!r}/{old.why!r}")
    return new


CASES_PER_FORMAT = 17000   # 6 formats × 17000 > 10^5 sums and dot products, each element checked


@pytest.mark.parametrize("et", FORMATS, ids=IDS)
def test_whole_array_route_states_the_exact_routes_expectation(et):
    """Sums and dot products of random and adversarial terms: the vectorised
    route (BLAS / numpy sums, TwoSum cascade, fsum, exact fallback) gives
    the exact route's expectation bit for bit."""
    rng = np.random.default_rng(21 + FORMATS.index(et))
    done = 0
    while done < CASES_PER_FORMAT:
        for style in STYLES:
            n = int(rng.choice([1, 2, 3, 5, 8, 17, 40, 100]))
            rows = 120
            specials = float(rng.choice([0.0, 0.0, 0.02, 0.2]))
            X = draw(et, rng, (rows, n), style, specials)
            _same(*_sums(et, X))
            A, B = draw(et, rng, (rows, n), style, specials), draw(et, rng, (rows, n), style, specials)
            _same(*_dots(et, A, B))
            done += 2 * rows
    assert done >= CASES_PER_FORMAT


@pytest.mark.parametrize("et", [E_F32, E_BF16, E_F64, E_F8E4M3FN], ids=["f32", "bf16", "f64", "f8E4M3FN"])
def test_blas_shaped_products_agree_with_the_exact_route(et):
    """Matrix products through BLAS proper (not batched dots), with a NaN,
    an infinity and an all-zero row in the operands."""
    rng = np.random.default_rng(5)
    A = draw(et, rng, (1, 24, 40), "unit")
    B = draw(et, rng, (1, 40, 16), "cancel")
    A[0, 3, 7], A[0, 5, :] = np.nan, 0.0
    B[0, 2, 9] = np.inf if et.format.has_inf else np.nan
    t = TensorType((1, 24, 16), et)
    rec = bounds.float_dot(A, B, et.format, lambda i: schedule.dot_range(
        list(zip(A[0, i // 16].tolist(), B[0, :, i % 16].tolist())), et.format), PROBES)
    got = _same(rec, t)   # raises where the two routes differ
    values = np.asarray(from_bits(got.bits, et), dtype=np.float64).reshape(24, 16)
    assert np.isnan(values[3]).all() and not np.isnan(values[4]).all()   # A's NaN reaches its row, only it


# --------------------------------------------------------------------------
# Independently of the exact route: schedules inside, one step outside out
# --------------------------------------------------------------------------

def _add(a, b, fmt):
    """One schedule node: a + b rounded once into the format (float64 sums of
    two values of a narrower format are exact; f64 in hardware)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return a + b if fmt.precision == 53 else round_fast(a + b, fmt)


def _mul(a, b, fmt):
    with np.errstate(over="ignore", invalid="ignore"):
        return a * b if fmt.precision == 53 else round_fast(a * b, fmt)


def _tree(cols: list, fmt, rng):
    """A random full binary tree over the columns in order, each node rounded."""
    while len(cols) > 1:
        k = int(rng.integers(0, len(cols) - 1))
        cols = cols[:k] + [_add(cols[k], cols[k + 1], fmt)] + cols[k + 2:]
    return cols[0]


def _schedules(terms: np.ndarray, fmt, rng) -> list:
    """Results (per row) of several schedules over the columns: left and
    right folds, pairwise, random trees, and a wide accumulator (the exact
    sum rounded once)."""
    cols = [terms[:, j] for j in range(terms.shape[1])]
    out = []
    acc = cols[0]
    for c in cols[1:]:
        acc = _add(acc, c, fmt)
    out.append(acc)
    acc = cols[-1]
    for c in reversed(cols[:-1]):
        acc = _add(c, acc, fmt)
    out.append(acc)
    level = cols
    while len(level) > 1:
        level = [_add(level[i], level[i + 1], fmt) if i + 1 < len(level) else level[i]
                 for i in range(0, len(level), 2)]
    out.append(level[0])
    out += [_tree(list(cols), fmt, rng) for _ in range(2)]
    wide = np.array([float(fmt.decode(round_bits(schedule.exact_sum(r.tolist()), fmt)))
                     if np.isfinite(r).all() else np.nan for r in terms])
    out.append(wide)
    return out


@pytest.mark.parametrize("et", FORMATS, ids=IDS)
def test_every_schedule_tried_lies_inside_and_one_step_outside_fails(et):
    """Finite terms: left and right folds, pairwise, random trees and the
    wide accumulator — of the sums, and of the dot products with products
    rounded — land inside the stated range (or the element says "any
    value"); one step below lo or above hi fails the suite's comparison."""
    fmt = et.format
    rng = np.random.default_rng(77 + FORMATS.index(et))
    for style in ("unit", "cancel", "wide", "ties", "sub", "mixed"):
        n = 12
        X = draw(et, rng, (300, n), style)
        A, B = draw(et, rng, (300, n), style), draw(et, rng, (300, n), style)
        for (rec, t), terms in ((_sums(et, X), X), (_dots(et, A, B), _mul(A, B, fmt))):
            exp = accumulate.expectation(rec, t)
            wild = np.zeros(len(rec.kind), dtype=bool)
            for alt in exp.alternatives:
                if alt.bits is None:
                    wild[alt.elements] = True
            for got in _schedules(terms, fmt, rng):
                v = got.astype(et.numpy).reshape(t.shape)
                ok = _inside(exp, v, et)
                assert (ok | wild | np.isnan(got)).all(), (style, np.flatnonzero(~(ok | wild))[:5])
            if exp.kind == "bounded":
                _one_step_outside_fails(exp, et, wild)


def _inside(exp, values, et) -> np.ndarray:
    o = ordinals(np.asarray(values).view(et.bits_dtype).reshape(-1), et)
    lo_b, hi_b = (exp.lo, exp.hi) if exp.kind == "bounded" else (exp.bits, exp.bits)
    lo, hi = ordinals(lo_b.reshape(-1), et), ordinals(hi_b.reshape(-1), et)
    return np.asarray((lo <= o) & (o <= hi), dtype=bool)


def _one_step_outside_fails(exp, et, wild):
    fmt = et.format
    lo, hi = ordinals(exp.lo.reshape(-1), et), ordinals(exp.hi.reshape(-1), et)
    top = ordinals(np.array([fmt.inf_bits(False) if fmt.has_inf else fmt.nan_bits() - 1], dtype=et.bits_dtype),
                   et)[0]
    ranged = ~wild & (lo != hi) | ~wild
    for ends, step in ((lo, -1), (hi, 1)):
        o = ends + step
        room = ranged & (np.abs(o.astype(object)) <= top).astype(bool)
        if not room.any():
            continue
        o = np.where(room, o, ends)
        actual = from_bits(from_ordinals(o, et), et).reshape(exp.type.shape)
        c = compare(exp, actual)
        assert not c.ok and c.mismatch_count >= int(room.sum()), (c.mismatch_count, int(room.sum()))


def test_directed_bits_equal_round_directed():
    """The oracle's vectorised outward rounding of enclosure ends is
    rounding.round_directed (and round_bits) on the exact value."""
    rng = np.random.default_rng(3)
    for et in FORMATS:
        fmt = et.format
        W = bounds.working(fmt)
        x = draw(et, rng, (4000,), "wide")
        y = (x * (1 + rng.uniform(-2.0 ** -20, 2.0 ** -20, x.shape))).astype(W)
        y = np.concatenate([y, np.array([0.0, 2.0 ** -1074, -(2.0 ** -1074)], dtype=W)])
        T = bounds.bracket(bounds.threshold(fmt), W)[0]
        beyond = np.array([T, -T, np.nextafter(T, W(0)), np.nextafter(T, W(np.inf)), 2 * T, -3 * T], dtype=W)
        y = y[np.abs(y) <= W(fmt.max_finite)]
        for d in (0, -1, 1):
            if d == 0:   # to nearest: past the largest finite too (±∞, or NaN in f8E4M3FN)
                y = np.concatenate([y, beyond])
            got = accumulate.directed_bits(y, et, d)
            want = [round_bits(Fraction(*v.as_integer_ratio()), fmt) if d == 0 else
                    round_directed(Fraction(*v.as_integer_ratio()), fmt, up=d > 0) for v in y]
            assert got.tolist() == want, (et.name, d)
            y = y[np.abs(y) <= W(fmt.max_finite)]


def test_enclosure_constants_are_brackets():
    for W in (np.float64, np.longdouble):
        for q in (Fraction(1, 3), Fraction(2 ** 70 + 1, 7), Fraction(-5, 2 ** 80), Fraction(3, 2 ** 1075),
                  schedule.gamma(1000, E_F32.format), Fraction(1, 2)):
            lo, hi = bounds.bracket(q, W)
            assert Fraction(*lo.as_integer_ratio()) <= q <= Fraction(*hi.as_integer_ratio())
            assert np.nextafter(lo, W(np.inf)) >= hi or lo == hi   # tight: adjacent (or exact)
        assert bounds.bracket(Fraction(1, 2), W) == (W(0.5), W(0.5))


def test_cascade_encloses_exact_row_sums():
    rng = np.random.default_rng(9)
    for W in (np.float64, np.longdouble):
        rows = rng.standard_normal((200, 37)) * 2.0 ** rng.integers(-60, 60, (200, 37))
        rows[:, -1] = -rows[:, 0]
        lo, hi = bounds.cascade(rows, W)
        for r, a, z in zip(rows, lo, hi):
            s = schedule.exact_sum(r.tolist())
            assert Fraction(*a.as_integer_ratio()) <= s <= Fraction(*z.as_integer_ratio())
            assert (z - a) <= abs(W(float(s))) * W(2.0 ** -48) + W(2.0 ** -1000)


# --------------------------------------------------------------------------
# Through the ops: whole-array semantics against the same op element by element
# --------------------------------------------------------------------------

OP_PROGRAMS = {
    "reduce_window sum, padded, dilated (n varies per window)": ("""
func.func @main(%x: tensor<9x7xf32>) -> tensor<5x14xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %z) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 3, 2>, window_strides = array<i64: 2, 1>, base_dilations = array<i64: 1, 2>,
      window_dilations = array<i64: 1, 2>, padding = dense<[[1, 1], [2, 1]]> : tensor<2x2xi64>}
    : (tensor<9x7xf32>, tensor<f32>) -> tensor<5x14xf32>
  return %0 : tensor<5x14xf32>
}""", [("f32", (9, 7))], "reduce_window"),
    "reduce max over two axes, bf16": ("""
func.func @main(%x: tensor<4x6x5xbf16>) -> tensor<6xbf16> {
  %z = stablehlo.constant dense<0xFF80> : tensor<bf16>
  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.maximum across dimensions = [2, 0] : (tensor<4x6x5xbf16>, tensor<bf16>) -> tensor<6xbf16>
  return %0 : tensor<6xbf16>
}""", [("bf16", (4, 6, 5))], "reduce"),
    "reduce sum f64": ("""
func.func @main(%x: tensor<30x8xf64>) -> tensor<8xf64> {
  %z = stablehlo.constant dense<-0.0> : tensor<f64>
  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<30x8xf64>, tensor<f64>) -> tensor<8xf64>
  return %0 : tensor<8xf64>
}""", [("f64", (30, 8))], "reduce"),
    "batched dot_general, f16, HIGHEST": ("""
func.func @main(%a: tensor<3x5x4xf16>, %b: tensor<4x3x6xf16>) -> tensor<3x5x6xf16> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [1], contracting_dims = [2] x [0], precision = [HIGHEST, HIGHEST] : (tensor<3x5x4xf16>, tensor<4x3x6xf16>) -> tensor<3x5x6xf16>
  return %0 : tensor<3x5x6xf16>
}""", [("f16", (3, 5, 4)), ("f16", (4, 3, 6))], "dot_general"),
    "convolution with feature groups, padding facing infinities": ("""
func.func @main(%x: tensor<1x4x6x6xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 2 : i64} : (tensor<1x4x6x6xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}""", [("f32", (1, 4, 6, 6)), ("f32", (6, 2, 3, 3))], "convolution"),
}

_NP = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": ml_dtypes.bfloat16}


@pytest.mark.parametrize("name", list(OP_PROGRAMS))
def test_ops_state_the_same_expectation_whole_and_element_by_element(name, monkeypatch):
    """The op modules' whole-array semantics (`_whole`, `_Conv.whole`)
    against the same op with that route switched off, on random inputs with
    specials."""
    import importlib

    from shlo_conform.generators.expect import expected_outputs
    text, inputs, op = OP_PROGRAMS[name]
    rng = np.random.default_rng(len(name))
    args = []
    for dt, shape in inputs:
        x = rng.standard_normal(shape) * 2.0 ** rng.integers(-3, 4, shape)
        flat = x.reshape(-1)
        flat[rng.integers(0, flat.size, 2)] = [np.inf, -0.0]
        args.append(x.astype(_NP[dt]))
    whole = expected_outputs(text, args)
    module = importlib.import_module(f"shlo_conform.spec.ops.{op}")
    if op == "convolution":
        monkeypatch.setattr(module._Conv, "whole", lambda self: None)
    else:
        monkeypatch.setattr(module, "_whole", lambda *a, **k: None)
    each = expected_outputs(text, args)
    assert [e.to_json() for e in whole] == [e.to_json() for e in each]


def _products(et, X, valid=None):
    t = TensorType((X.shape[0],), et)

    def element(i):
        return schedule.product_range([x for x, v in zip(X[i].tolist(), (valid[i] if valid is not None
                                                                         else [True] * X.shape[1])) if v],
                                      et.format)
    return bounds.float_product(X, valid, et.format, element, PROBES), t


PRODUCT_STYLES = ("unit", "near one", "wide", "top", "sub", "signed zeros", "mixed")


def _factors(et, rng, shape, style, specials):
    """Factors whose products stay in range (unit, near one: a cumprod's
    discounts), reach past it either way (wide, top, sub), or are ±0."""
    if style == "near one":
        x = 1 + rng.standard_normal(shape) * 2.0 ** -6
        return round_fast(x, et.format) * np.where(rng.random(shape) < 0.1, -1, 1)
    return draw(et, rng, shape, style, specials)


@pytest.mark.parametrize("et", FORMATS, ids=IDS)
def test_whole_array_products_state_the_exact_routes_expectation(et):
    """Float products (`jnp.prod`, `jnp.cumprod`'s windows) by the whole-array
    route — run sums deciding overflow and underflow, a pairwise tree in
    the working type, then double-double — give the exact route's
    expectation bit for bit, with some leaves masked out as padding."""
    rng = np.random.default_rng(57 + FORMATS.index(et))
    done = 0
    while done < CASES_PER_FORMAT // 8:
        for style in PRODUCT_STYLES:
            n = int(rng.choice([1, 2, 3, 5, 8, 17, 40, 100, 160]))
            rows = 60
            specials = float(rng.choice([0.0, 0.0, 0.02, 0.2]))
            X = _factors(et, rng, (rows, n), style, specials)
            valid = None if rng.random() < 0.5 else rng.random((rows, n)) < 0.8
            _same(*_products(et, X, valid))
            done += rows
    assert done >= CASES_PER_FORMAT // 8


def test_products_are_decided_by_the_enclosures_not_the_exact_route():
    """The point of the route: a cumprod's 2,000 windows of f32 factors near
    one leave (almost) nothing to the per-element rationals — in f64 too,
    where stage 1's long double is too coarse and double-double decides."""
    rng = np.random.default_rng(3)
    for et in (E_F32, E_F64):
        n = 2000
        x = round_fast(0.99 + 0.005 * rng.standard_normal(n), et.format)
        X = np.broadcast_to(x, (n, n))
        valid = np.tril(np.ones((n, n), dtype=bool))
        calls = []
        rec = bounds.float_product(X, valid, et.format, lambda i: calls.append(i) or
                                   schedule.product_range(x[:i + 1].tolist(), et.format), PROBES)
        exp = accumulate.expectation(rec, TensorType((n,), et))
        assert len(calls) <= n // 50, (et.name, len(calls))   # f32: 2 of 2,000; f64: about 20
        for i in rng.choice(n, 20, replace=False).tolist():   # spot checks against the exact route
            one = resolve(schedule.product_range(x[:i + 1].tolist(), et.format), et)
            assert exp.bits.reshape(-1)[i] == one.options[0][1]
