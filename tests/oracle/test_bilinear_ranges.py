"""Ranges through bilinear ops (oracle/bilinear.py): dot_general and convolution of approximate values.

Truth is independent of the route: for tiny programs the exact real
extremes are found by brute force — every vertex of the box the operands'
ranges span, per result element, with exact rationals and the dot
product's allowance γ(n)·Σ|aᵢbᵢ| + n·min_subnormal/2 written out here
(the extremes of Σ f(aₖbₖ), f(p) = p ∓ γ|p| increasing, lie at vertices) —
and every value an implementation may compute is enumerated: each
operand element any value of its range (the sine's tolerance, ulp by
ulp), the dot product taken exactly and rounded once, as a left fold, a
right fold, and with fused multiply-adds, each step rounded to nearest
(even) by rationals.  The stated range must hold all of them and lie
within the documented slack of the exact extremes; one step outside it
fails `suites.compare`.  The corners' range (both operands moved to one
end together) is shown to miss some of those values where the weights
have mixed signs: what the route fixes.
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from shlo_conform.generators.expect import expected_outputs
from shlo_conform.oracle import bilinear
from shlo_conform.oracle.program import parse_program
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.types import E_BF16, E_F32, E_F64, TensorType, from_bits, from_ordinals, ordinals, to_bits
from shlo_conform.suites.compare import compare

TYPES = {"f32": E_F32, "bf16": E_BF16, "f64": E_F64}


# --------------------------------------------------------------------------
# Exact rounding by rationals (independent of the oracle's rounding)
# --------------------------------------------------------------------------

def _step(v: float, et, n: int) -> float:
    """The format value n steps of the format's order from v (a value of it)."""
    b = to_bits(np.array([v]).astype(et.numpy), et)
    return float(from_bits(from_ordinals(ordinals(b, et) + n, et), et).astype(np.float64)[0])


def _down(q: Fraction, et) -> float:
    """The largest value of the format ≤ q (q within its finite range)."""
    v = float(np.array([float(q)]).astype(et.numpy).astype(np.float64)[0])
    while Fraction(v) > q:
        v = _step(v, et, -1)
    while Fraction(_step(v, et, 1)) <= q:
        v = _step(v, et, 1)
    return v


def _up(q: Fraction, et) -> float:
    d = _down(q, et)
    return d if Fraction(d) == q else _step(d, et, 1)


def _nearest(q: Fraction, et) -> float:
    d = _down(q, et)
    if Fraction(d) == q:
        return d
    u = _step(d, et, 1)
    below, above = q - Fraction(d), Fraction(u) - q
    if below != above:
        return d if below < above else u
    return d if int(ordinals(to_bits(np.array([d]).astype(et.numpy), et), et)[0]) % 2 == 0 else u


def _ord(v: float, et) -> int:
    return int(ordinals(to_bits(np.array([v]).astype(et.numpy), et), et)[0])


def _gamma(n: int, et) -> Fraction:
    u = Fraction(1, 2 ** et.format.precision)
    return n * u / (1 - n * u)


def _extremes(pairs_choices: list, et) -> tuple[Fraction, Fraction]:
    """min(s − b) and max(s + b) over the vertices: pairs_choices[k] is the
    list of (a, b) pairs term k may take at the vertices."""
    n = len(pairs_choices)
    g, c0 = _gamma(n, et), n * et.format.min_subnormal / 2
    lo = hi = None
    for pairs in itertools.product(*pairs_choices):
        s = sum(Fraction(a) * Fraction(b) for a, b in pairs)
        m = sum(abs(Fraction(a) * Fraction(b)) for a, b in pairs)
        lo = s - g * m - c0 if lo is None else min(lo, s - g * m - c0)
        hi = s + g * m + c0 if hi is None else max(hi, s + g * m + c0)
    return lo, hi


def _schedules(pairs: list, et, few: bool = False) -> list:
    """What implementations compute for Σ aₖbₖ: exact and rounded once, a left
    fold and a right fold of rounded products, a chain of fused multiply-adds
    (`few`: the first two only)."""
    rn = lambda q: Fraction(_nearest(q, et))   # noqa: E731
    exact = [Fraction(a) * Fraction(b) for a, b in pairs]
    rounded = [rn(p) for p in exact]
    out = [rn(sum(exact))]
    if few:
        acc = rounded[0]
        for p in rounded[1:]:
            acc = rn(acc + p)
        return [float(v) for v in out + [acc]]
    acc = rounded[0]
    for p in rounded[1:]:
        acc = rn(acc + p)
    out.append(acc)
    acc = rounded[-1]
    for p in reversed(rounded[:-1]):
        acc = rn(p + acc)
    out.append(acc)
    acc = Fraction(0)
    for p in exact:
        acc = rn(acc + p)
    out.append(acc)
    return [float(v) for v in out]


def _range_values(center: float, et, t: int) -> list:
    """Every value of the format within t steps of `center`."""
    return [_step(center, et, k) for k in range(-t, t + 1)]


# --------------------------------------------------------------------------
# Programs
# --------------------------------------------------------------------------

def _dot_text(m, k, n, et, both: bool) -> str:
    t = et.mlir
    x, w, r = f"tensor<{m}x{k}x{t}>", f"tensor<{k}x{n}x{t}>", f"tensor<{m}x{n}x{t}>"
    rhs = "%c" if both else "%w"
    cos = f"  %c = stablehlo.cosine %w : {w}\n" if both else ""
    return (f"func.func @main(%x: {x}, %w: {w}) -> {r} {{\n  %s = stablehlo.sine %x : {x}\n{cos}"
            f"  %d = stablehlo.dot_general %s, {rhs}, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT]"
            f" : ({x}, {w}) -> {r}\n  return %d : {r}\n}}")


def _ranges(text_op: str, shape: tuple, arr: np.ndarray, et) -> tuple[np.ndarray, int]:
    """The approximate op's correctly rounded values (the oracle's statement
    of it alone) and its tolerance."""
    t = f"tensor<{'x'.join(map(str, shape))}x{et.mlir}>"
    (e,) = expected_outputs(f"func.func @main(%x: {t}) -> {t} {{\n  %s = stablehlo.{text_op} %x : {t}\n"
                            f"  return %s : {t}\n}}", [arr])
    assert e.kind == "ulp"
    return e.array().astype(np.float64), e.tolerance_ulp


def _check(e, truth_lo, truth_hi, choices_lo, choices_hi, et, slack=1):
    """The stated range holds the exact extremes and every choice, lies within
    `slack` steps of the extremes, and one step outside fails the comparison."""
    lo, hi = ordinals(np.reshape(e.lo, -1), et), ordinals(np.reshape(e.hi, -1), et)
    want_lo = np.array([_ord(_down(q, et), et) for q in truth_lo])
    want_hi = np.array([_ord(_up(q, et), et) for q in truth_hi])
    assert (lo <= want_lo).all() and (hi >= want_hi).all(), "the exact extremes lie outside the stated range"
    assert (want_lo - lo <= slack).all() and (hi - want_hi <= slack).all(), (want_lo - lo, hi - want_hi)
    c_lo = np.array([_ord(v, et) for v in choices_lo])
    c_hi = np.array([_ord(v, et) for v in choices_hi])
    assert (lo <= c_lo).all() and (c_hi <= hi).all()
    shape = np.shape(e.bits)
    for vals in (choices_lo, choices_hi):
        assert compare(e, np.array(vals).astype(et.numpy).reshape(shape)).ok
    for ends, n in ((lo, -1), (hi, 1)):
        outside = from_bits(from_ordinals(ends + n, et), et).reshape(shape)
        got = compare(e, outside)
        assert not got.ok and got.mismatch_count == int(np.prod(shape))
    return want_lo - lo, hi - want_hi


def _corner_range(text: str, ends: list, et) -> tuple[np.ndarray, np.ndarray]:
    """The range the corners gave (before): the dot on all-low and all-high
    operands, each a bounded statement, joined — no approximate op upstream."""
    lows, highs = [], []
    for corner in ends:
        (c,) = expected_outputs(text, corner)
        lows.append(ordinals(np.reshape(c.lo, -1), et))
        highs.append(ordinals(np.reshape(c.hi, -1), et))
    return np.min(lows, axis=0), np.max(highs, axis=0)


def _plain_dot(m, k, n, et) -> str:
    t = et.mlir
    x, w, r = f"tensor<{m}x{k}x{t}>", f"tensor<{k}x{n}x{t}>", f"tensor<{m}x{n}x{t}>"
    return (f"func.func @main(%s: {x}, %w: {w}) -> {r} {{\n"
            f"  %d = stablehlo.dot_general %s, %w, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT]"
            f" : ({x}, {w}) -> {r}\n  return %d : {r}\n}}")


# --------------------------------------------------------------------------
# One operand approximate: sin(x) · w with mixed-sign weights
# --------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["f32", "bf16", "f64"])
def test_a_dot_of_sines_with_mixed_sign_weights_holds_every_implementation_and_no_more(name):
    """sin(x) (2×2) · w (2×3), w = [[1, −1, 0.75], [−1, 1, 0.5]] and x chosen so
    the sines nearly cancel in the first two columns: per element, 81 (f32,
    f64) or 9 (bf16) choices of the sines × 4 schedules."""
    et = TYPES[name]
    x = np.array([[1.0, 1.0009765625], [2.5, 2.4990234375]]).astype(et.numpy)
    w = np.array([[1.0, -1.0, 0.75], [-1.0, 1.0, 0.5]]).astype(et.numpy)
    text = _dot_text(2, 2, 3, et, both=False)
    (e,) = expected_outputs(text, [x, w])
    assert e.kind == "bounded"
    s, t = _ranges("sine", (2, 2), x, et)
    wv = w.astype(np.float64)
    truth_lo, truth_hi, c_lo, c_hi = [], [], [], []
    for i in range(2):
        for j in range(3):
            verts = [[(a, wv[k, j]) for a in (_step(s[i, k], et, -t), _step(s[i, k], et, t))] for k in range(2)]
            lo_q, hi_q = _extremes(verts, et)
            truth_lo.append(lo_q)
            truth_hi.append(hi_q)
            got = [v for xs in itertools.product(*[_range_values(s[i, k], et, t) for k in range(2)])
                   for v in _schedules([(xs[k], wv[k, j]) for k in range(2)], et)]
            c_lo.append(min(got))
            c_hi.append(max(got))
    _check(e, truth_lo, truth_hi, c_lo, c_hi, et)
    assert bilinear.WHY in e.why
    # Before: the corners' range (both sines low, both high) misses some of these values — in f32 and f64,
    # whose sine tolerance (4 ULP) outweighs a 2-term dot's own allowance; bf16's (1 ULP) does not.
    if name == "bf16":
        return
    ends = [[np.array([[_step(s[i, k], et, d * t) for k in range(2)] for i in range(2)]).astype(et.numpy), w]
            for d in (-1, 1)]
    old_lo, old_hi = _corner_range(_plain_dot(2, 2, 3, et), ends, et)
    outside = (np.array([_ord(v, et) for v in c_lo]) < old_lo) | (np.array([_ord(v, et) for v in c_hi]) > old_hi)
    assert outside.any()


def test_where_no_range_meets_an_element_its_statement_is_the_dots_own():
    """Where the weights that meet the approximate values are all zero the
    deviation is exactly 0: the element keeps the dot's own statement on the
    correctly rounded sines, bit for bit (no step of slack); the others widen."""
    et = E_F32
    x = np.array([[0.3, 0.7, 1.1]], np.float32)
    w = np.array([[0.0, 1.0], [0.0, -2.0], [0.0, 0.5]], np.float32)
    (e,) = expected_outputs(_dot_text(1, 3, 2, et, both=False), [x, w])
    s, _ = _ranges("sine", (1, 3), x, et)
    (own,) = expected_outputs(_plain_dot(1, 3, 2, et), [s.astype(np.float32), w])
    assert np.array_equal(e.bits, own.bits)
    assert e.lo.reshape(-1)[0] == own.lo.reshape(-1)[0] and e.hi.reshape(-1)[0] == own.hi.reshape(-1)[0]
    lo, own_lo = ordinals(e.lo.reshape(-1), et), ordinals(own.lo.reshape(-1), et)
    hi, own_hi = ordinals(e.hi.reshape(-1), et), ordinals(own.hi.reshape(-1), et)
    assert lo[1] < own_lo[1] and hi[1] > own_hi[1]


# --------------------------------------------------------------------------
# Both operands approximate: sin(x) · cos(w)
# --------------------------------------------------------------------------

@pytest.mark.parametrize("name, k", [("bf16", 3), ("f32", 2)])
def test_a_dot_of_two_approximate_operands_holds_every_implementation(name, k):
    """sin(x) (1×k) · cos(w) (k×2), signs mixed on both sides: every choice of
    both operands' values (bf16: 3^6 × 4 schedules, f32: 9^4 × 2 per element)."""
    et = TYPES[name]
    x = np.array([[0.5, -2.0, 2.9][:k]]).astype(et.numpy)
    w = np.array([[0.4, 2.8], [1.7, -0.3], [2.0, 1.0]][:k]).astype(et.numpy)
    (e,) = expected_outputs(_dot_text(1, k, 2, et, both=True), [x, w])
    assert e.kind == "bounded"
    s, t = _ranges("sine", (1, k), x, et)
    c, tc = _ranges("cosine", (k, 2), w, et)
    truth_lo, truth_hi, c_lo, c_hi = [], [], [], []
    for j in range(2):
        verts = [[(a, b) for a in (_step(s[0, q], et, -t), _step(s[0, q], et, t))
                  for b in (_step(c[q, j], et, -tc), _step(c[q, j], et, tc))] for q in range(k)]
        lo_q, hi_q = _extremes(verts, et)
        truth_lo.append(lo_q)
        truth_hi.append(hi_q)
        per_term = [[(a, b) for a in _range_values(s[0, q], et, t) for b in _range_values(c[q, j], et, tc)]
                    for q in range(k)]
        got = [v for pairs in itertools.product(*per_term) for v in _schedules(list(pairs), et, few=name == "f32")]
        c_lo.append(min(got))
        c_hi.append(max(got))
    _check(e, truth_lo, truth_hi, c_lo, c_hi, et)


# --------------------------------------------------------------------------
# Convolution: a window over approximate values, padding holes exact
# --------------------------------------------------------------------------

def test_a_convolution_of_sines_with_a_mixed_sign_kernel_holds_every_implementation():
    """1-D convolution of sin(x) (1×5×1, NWC) with a 3-tap kernel of mixed
    signs (3×1×2, WIO), padding 1 each side: the holes are exact zeros, the
    windows' sines anything within tolerance (9^3 choices × 4 schedules)."""
    et = E_F32
    x = np.array([1.0, 1.05, 2.0, 2.0009766, 0.2], np.float32).reshape(1, 5, 1)
    kern = np.array([[1.0, 0.25], [-1.0, -0.5], [0.5, 1.0]], np.float32).reshape(3, 1, 2)
    tin, tk, tr = "tensor<1x5x1xf32>", "tensor<3x1x2xf32>", "tensor<1x5x2xf32>"
    text = (f"func.func @main(%x: {tin}, %k: {tk}) -> {tr} {{\n  %s = stablehlo.sine %x : {tin}\n"
            f"  %c = stablehlo.convolution(%s, %k) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = "
            f"{{stride = [1], pad = [[1, 1]], lhs_dilate = [1], rhs_dilate = [1], reverse = [false]}} "
            f"{{batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = "
            f"[#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}} : ({tin}, {tk}) -> {tr}\n"
            f"  return %c : {tr}\n}}")
    (e,) = expected_outputs(text, [x, kern])
    assert e.kind == "bounded"
    s, t = _ranges("sine", (1, 5, 1), x, et)
    s = s.reshape(-1)
    kv = kern.astype(np.float64).reshape(3, 2)
    truth_lo, truth_hi, c_lo, c_hi = [], [], [], []
    for i in range(5):                     # result [0, i, o], flat order i-major
        for o in range(2):
            taps = [(i + j - 1, kv[j, o]) for j in range(3)]   # lhs index (−1 and 5: padding), kernel value
            ranges = [_range_values(s[p], et, t) if 0 <= p < 5 else [0.0] for p, _ in taps]
            verts = [[(a, b) for a in {r[0], r[-1]}] for r, (_, b) in zip(ranges, taps)]
            lo_q, hi_q = _extremes(verts, et)
            truth_lo.append(lo_q)
            truth_hi.append(hi_q)
            got = [v for xs in itertools.product(*ranges)
                   for v in _schedules([(a, b) for a, (_, b) in zip(xs, taps)], et)]
            c_lo.append(min(got))
            c_hi.append(max(got))
    _check(e, truth_lo, truth_hi, c_lo, c_hi, et)


# --------------------------------------------------------------------------
# Element-wise multiply: the corners are already exact
# --------------------------------------------------------------------------

def test_the_corners_of_an_elementwise_product_are_its_extremes():
    """multiply is bilinear too, but element-wise: each result element is a·b of
    one element of each range, and a·b over a rectangle takes its extremes at
    the rectangle's vertices — which the four corner runs are, element by
    element.  So the corner route is exact there: over every value of the
    ranges (bf16, 3 × 3 per element), the correctly rounded products span
    exactly the stated range."""
    et = E_BF16
    rng = np.random.default_rng(4)
    a_in, b_in = (rng.uniform(-3, 3, 64).astype(ml_dtypes.bfloat16) for _ in range(2))
    t = "tensor<64xbf16>"
    (e,) = expected_outputs(f"func.func @main(%a: {t}, %b: {t}) -> {t} {{\n  %s = stablehlo.sine %a : {t}\n"
                            f"  %c = stablehlo.cosine %b : {t}\n  %p = stablehlo.multiply %s, %c : {t}\n"
                            f"  return %p : {t}\n}}", [a_in, b_in])
    s, ts = _ranges("sine", (64,), a_in, et)
    c, tc = _ranges("cosine", (64,), b_in, et)
    want_lo, want_hi = [], []
    for i in range(64):
        prods = [_ord(_nearest(Fraction(p) * Fraction(q), et), et)
                 for p in _range_values(s[i], et, ts) for q in _range_values(c[i], et, tc)]
        want_lo.append(min(prods))
        want_hi.append(max(prods))
    assert ordinals(e.lo, et).tolist() == want_lo and ordinals(e.hi, et).tolist() == want_hi


# --------------------------------------------------------------------------
# The declaration and its product
# --------------------------------------------------------------------------

def test_the_route_is_chosen_by_the_ops_declaration():
    """dot_general and convolution declare (lhs, rhs); element-wise ops declare
    nothing and keep the corners (exact for multiply: above)."""
    t = "tensor<2x2xf32>"
    prog = parse_program(f"func.func @main(%x: {t}, %w: {t}) -> {t} {{\n  %s = stablehlo.sine %x : {t}\n"
                         f"  %m = stablehlo.multiply %s, %w : {t}\n  %d = stablehlo.dot_general %m, %w, "
                         f"contracting_dims = [1] x [0] : ({t}, {t}) -> {t}\n  return %d : {t}\n}}")
    by_op = {s.inst.spec.mnemonic: s.inst for s in prog.steps}
    assert bilinear.operands(by_op["dot_general"]) == (0, 1)
    assert bilinear.operands(by_op["multiply"]) is None and bilinear.operands(by_op["sine"]) is None
    assert OPS["convolution"].semantics.bilinear == ("lhs", "rhs")


def _conv_inst(lhs, rhs, strides, padding, lhs_dil, rhs_dil, reversal, fgc, bgc):
    conv = OPS["convolution"]
    attrs = {"window_strides": strides, "padding": padding, "lhs_dilation": lhs_dil, "rhs_dilation": rhs_dil,
             "window_reversal": reversal, "input_batch_dimension": 0, "input_feature_dimension": 2,
             "input_spatial_dimensions": (1,), "kernel_input_feature_dimension": 1,
             "kernel_output_feature_dimension": 2, "kernel_spatial_dimensions": (0,),
             "output_batch_dimension": 0, "output_feature_dimension": 2, "output_spatial_dimensions": (1,),
             "feature_group_count": fgc, "batch_group_count": bgc, "precision_config": ("DEFAULT", "DEFAULT")}
    ops = {"lhs": TensorType(tuple(lhs), E_F32), "rhs": TensorType(tuple(rhs), E_F32)}
    inst = conv.instance(ops, attrs)
    inst = conv.instance(ops, attrs, {"result": conv.infer(inst)["result"]})
    assert conv.violated(inst) == []
    return inst


@pytest.mark.parametrize("cfg", [
    dict(lhs=(2, 7, 4), rhs=(3, 2, 6), strides=(2,), padding=((2, 1),), lhs_dil=(2,), rhs_dil=(1,), reversal=(False,),
         fgc=2, bgc=1),
    dict(lhs=(4, 6, 2), rhs=(2, 2, 4), strides=(1,), padding=((1, 0),), lhs_dil=(1,), rhs_dil=(2,), reversal=(True,),
         fgc=1, bgc=2),
])
def test_the_convolutions_declared_product_is_xlas_convolution(cfg):
    """`bilinear_form`'s product against jax.lax.conv_general_dilated (XLA:CPU)
    on small integers (every sum exact in f32): strides, padding, both
    dilations, window reversal (the kernel flipped), feature and batch groups."""
    import jax
    inst = _conv_inst(**cfg)
    rng = np.random.default_rng(8)
    x = rng.integers(-3, 4, cfg["lhs"]).astype(np.float32)
    k = rng.integers(-3, 4, cfg["rhs"]).astype(np.float32)
    n, product = OPS["convolution"].semantics.bilinear_form(inst)
    assert n == cfg["rhs"][0] * cfg["rhs"][1]
    kk = k[::-1] if cfg["reversal"][0] else k
    want = jax.lax.conv_general_dilated(x, kk, cfg["strides"], list(cfg["padding"]), cfg["lhs_dil"], cfg["rhs_dil"],
                                        ("NWC", "WIO", "NWC"), cfg["fgc"], cfg["bgc"])
    assert np.array_equal(product(x, k), np.asarray(want, dtype=np.float64))


def test_the_dots_declared_product_is_einsum():
    """dot_general's product with batching and contracting dimensions out of
    order against numpy's einsum."""
    dot = OPS["dot_general"]
    ops = {"lhs": TensorType((3, 2, 4), E_F32), "rhs": TensorType((4, 5, 2), E_F32)}
    attrs = {"lhs_batching_dimensions": (1,), "rhs_batching_dimensions": (2,), "lhs_contracting_dimensions": (2,),
             "rhs_contracting_dimensions": (0,), "precision_config": ("DEFAULT", "DEFAULT")}
    inst = dot.instance(ops, attrs)
    inst = dot.instance(ops, attrs, {"result": dot.infer(inst)["result"]})
    rng = np.random.default_rng(9)
    a, b = rng.integers(-5, 6, (3, 2, 4)).astype(np.float64), rng.integers(-5, 6, (4, 5, 2)).astype(np.float64)
    n, product = dot.semantics.bilinear_form(inst)
    assert n == 4 and np.array_equal(product(a, b), np.einsum("ibk,kjb->bij", a, b))


# --------------------------------------------------------------------------
# Programs JAX lowers, judged against XLA and the reference interpreter
# --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def backends():
    from shlo_conform.backends.base import load_backend
    return {"xla": load_backend("xla"), "interpreter": load_backend("interpreter")}


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_a_jax_dot_of_sines_meets_the_oracle_on_xla_and_the_interpreter(dtype, backends):
    """jnp.dot(jnp.sin(x), w) with weights of both signs and pairs of columns
    that cancel (w and −w shifted by one ULP), 16×32·32×8: XLA's and the
    interpreter's outputs meet the oracle's expectation."""
    import jax
    jnp = jax.numpy
    np_t = np.float32 if dtype == "float32" else ml_dtypes.bfloat16
    rng = np.random.default_rng(12)
    x = rng.uniform(-4, 4, (16, 32)).astype(np_t)
    w = rng.standard_normal((32, 8)).astype(np_t)
    w[:, 1] = -w[:, 0]
    x[:, 16:] = x[:, :16]                  # equal sines: the second half cancels the first
    w[16:, 2] = -w[:16, 2]
    text = jax.jit(lambda a, b: jnp.dot(jnp.sin(a), b)).lower(x, w).as_text()
    (e,) = expected_outputs(text, [x, w])
    assert e.kind == "bounded"
    for name, backend in backends.items():
        out = backend.run(backend.compile(text), [x, w])[0]
        got = compare(e, out)
        assert got.ok, (name, got.detail)
    assert bilinear.WHY in e.why


def test_a_jax_convolution_of_sines_meets_the_oracle_on_xla_and_the_interpreter(backends):
    import jax
    rng = np.random.default_rng(13)
    x = rng.uniform(-4, 4, (2, 12, 3)).astype(np.float32)
    k = rng.standard_normal((3, 3, 4)).astype(np.float32)

    def f(a, b):
        return jax.lax.conv_general_dilated(jax.numpy.sin(a), b, (1,), [(1, 1)],
                                            dimension_numbers=("NWC", "WIO", "NWC"))
    text = jax.jit(f).lower(x, k).as_text()
    (e,) = expected_outputs(text, [x, k])
    assert e.kind == "bounded"
    for name, backend in backends.items():
        got = compare(e, backend.run(backend.compile(text), [x, k])[0])
        assert got.ok, (name, got.detail)


def test_an_f16_box_that_may_overflow_offers_any_value_there():
    """Σ|x|max·|y|max·(1 + γ) past f16's threshold at some point of the box
    (not at the primary, whose exact sum is small: the terms cancel): the
    element offers "any value", labelled; the others keep their ranges."""
    t_x, t_w, t_r = "tensor<1x2xf16>", "tensor<2x2xf16>", "tensor<1x2xf16>"
    text = (f"func.func @main(%x: {t_x}, %w: {t_w}) -> {t_r} {{\n  %s = stablehlo.exponential %x : {t_x}\n"
            f"  %d = stablehlo.dot_general %s, %w, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT]"
            f" : ({t_x}, {t_w}) -> {t_r}\n  return %d : {t_r}\n}}")
    x = np.array([[5.0, 5.0]], np.float16)            # e^5 ≈ 148.4
    w = np.array([[220.5, 0.01], [-220.5, 0.01]], np.float16)
    (e,) = expected_outputs(text, [x, w])
    labels = {a.label: a.elements for a in e.alternatives if a.bits is None}
    assert labels.get(bilinear.OVERFLOW) == [0]
    assert math.isfinite(float(e.array().reshape(-1)[1]))
