"""Quantized tensors beyond the element-wise ops (issue 34, second part):
clamp, abs, convolution (quantized and hybrid, per-axis weights), and the
ops whose regions compute on quantized values (reduce, reduce_window, sort,
map, scatter, select_and_scatter) — each against a truth the oracle does
not compute.

Truths: a NumPy reference of the spec's steps written here (dequantize:
`(i - zp)` to f32, times the f32 scale; quantize: divide, add the zero
point, clamp, round half to even — every step one float32 operation, as
spec.md "Quantization computations" orders them), exact rational sums
(fractions) for convolution's dot products, every binary tree of a
reduction enumerated here by brute force (not spec/schedule.py's table),
and hand computation in the comments.  v1.20's clauses for quantized
convolution (C28–C34, labelled convolution_c29–c35: the seed's numbering
ends at C28) are each broken alone."""
from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from shlo_conform.generators import emit
from shlo_conform.oracle.execution import execute
from shlo_conform.oracle.program import parse_program
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.quantized import parse_quantized_type
from shlo_conform.spec.types import TensorType, element_type, parse_type
from tests.independent.trees import every_tree

F32 = np.float32


# ---------------------------------------------------------------- the reference: the spec's steps in NumPy
def deq(s, q) -> np.ndarray:
    """dequantize: (i - zp) converted to f32 (exact for these ranges), times the scale converted to f32."""
    return (np.asarray(s, np.int64) - q.zero_points[0]).astype(F32) * F32(q.scales[0])


def quant(x, q) -> np.ndarray:
    """quantize: x / scale, + zp, clamped to the converted storage bounds, rounded half to even."""
    v = (np.asarray(x, F32) / F32(q.scales[0])).astype(F32) + F32(q.zero_points[0])
    return np.rint(np.clip(v, F32(q.storage_min), F32(q.storage_max))).astype(np.int64)


def _run(text: str, *inputs):
    return execute(parse_program(text), [np.asarray(a) for a in inputs])


def _storage(e) -> np.ndarray:
    return np.asarray(e.array()).astype(np.int64)


def _allowed(e) -> list[set | None]:
    """Per element (flat): the storage values the expectation admits — its
    primary value and every alternative where it has them, every integer
    of [lo, hi] where bounded; None where it admits any value."""
    from shlo_conform.spec.types import from_bits
    prim = _storage(e).reshape(-1)
    out = [{int(v)} for v in prim]
    if e.kind == "bounded":
        et = e.type.element_type
        lo = np.asarray(from_bits(e.lo, et)).astype(np.int64).reshape(-1)
        hi = np.asarray(from_bits(e.hi, et)).astype(np.int64).reshape(-1)
        out = [set(range(int(a), int(b) + 1)) for a, b in zip(lo, hi)]
    for alt in e.alternatives:
        if alt.bits is None:
            for k in alt.elements or []:
                out[k] = None
            continue
        vals = np.asarray(e.alternative_array(alt)).astype(np.int64).reshape(-1)
        for k in e.impl_defined:
            if out[k] is not None:
                out[k].add(int(vals[k]))
    return out


Q = parse_quantized_type
A = Q("!quant.uniform<i8:f32, 0.5:-10>")
B = Q("!quant.uniform<i8:f32, 0.25:3>")


def _program(op: str, types: dict, body: str | None = None) -> tuple[str, object]:
    spec = OPS[op]
    inst = spec.quantization.example(types) if body is None else spec.quantization.example(types, body)
    assert spec.violated(inst) == [] and spec.types_outside_tables(inst) == []
    return emit.program(spec, inst), inst


# ---------------------------------------------------------------- clamp, abs
def test_clamp_matches_the_reference_on_every_triple_of_a_grid():
    lo_t, x_t, hi_t, r_t = Q("!quant.uniform<i8:f32, 0.1:-3>"), A, Q("!quant.uniform<i8:f32, 0.2:5>"), B
    side = np.array([-128, -100, -30, -11, -10, -9, 0, 7, 40, 90, 127])
    lo, x, hi = (m.reshape(-1) for m in np.meshgrid(side, side, side, indexing="ij"))
    n = lo.size
    t = lambda q: f"tensor<{n}x{q.mlir}>"   # noqa: E731
    [e] = _run(f"""func.func @main(%a: {t(lo_t)}, %b: {t(x_t)}, %c: {t(hi_t)}) -> {t(r_t)} {{
      %r = "stablehlo.clamp"(%a, %b, %c) : ({t(lo_t)}, {t(x_t)}, {t(hi_t)}) -> {t(r_t)}
      "func.return"(%r) : ({t(r_t)}) -> () }}""", lo.astype(np.int8), x.astype(np.int8), hi.astype(np.int8))
    want = quant(np.minimum(np.maximum(deq(x, x_t), deq(lo, lo_t)), deq(hi, hi_t)), r_t)
    assert e.kind == "exact" and np.array_equal(_storage(e), want)


def test_clamp_hand_values_with_rank_0_bounds():
    # min storage 0 of 0.1:-3 is 0.3; max storage 0 of 0.2:5 is -1.0 … use max 15 → 2.0.
    # x = -10 → 0.0 → clamped to 0.3 → 0.3/0.25 + 3 = 4.2 → 4;  x = 0 → 5.0 → 2.0 → 11;  x = -9 → 0.5 → 0.5 → 5
    lo_t, hi_t = Q("!quant.uniform<i8:f32, 0.1:-3>"), Q("!quant.uniform<i8:f32, 0.2:5>")
    [e] = _run(f"""func.func @main(%a: tensor<{lo_t.mlir}>, %b: tensor<3x{A.mlir}>, %c: tensor<{hi_t.mlir}>)
        -> tensor<3x{B.mlir}> {{
      %r = "stablehlo.clamp"(%a, %b, %c) : (tensor<{lo_t.mlir}>, tensor<3x{A.mlir}>, tensor<{hi_t.mlir}>)
          -> tensor<3x{B.mlir}>
      "func.return"(%r) : (tensor<3x{B.mlir}>) -> () }}""", np.int8(0), np.array([-10, 0, -9], np.int8), np.int8(15))
    assert _storage(e).tolist() == [4, 11, 5]


@pytest.mark.parametrize("op, types, broken", [
    ("clamp", dict(min=Q("!quant.uniform<i16:f32, 0.1>"), operand=A, max=A, result=A), "clamp_c3"),
    ("clamp", dict(min=A, operand=A, max=A, result=Q("!quant.uniform<i8:f16, 0.1>")), "clamp_c4"),
    ("abs", dict(operand=A, result=Q("!quant.uniform<i16:f32, 0.1>")), "abs_c2"),
])
def test_baseline_clauses_refuse_another_storage_or_expressed_type(op, types, broken):
    spec = OPS[op]

    def inst(ts):
        shape = lambda n: () if n in ("min", "max") else (4,)   # noqa: E731
        return spec.instance({o.name: TensorType(shape(o.name), ts[o.name]) for o in spec.operands}, {},
                             {r.name: TensorType((4,), ts[r.name]) for r in spec.results})
    assert spec.violated(inst(types)) == [broken]
    # scales and zero points may differ everywhere (v1.20's baseline types): accepted
    assert spec.violated(inst({n: (A if k % 2 else B) for k, n in enumerate(types)})) == []


def test_abs_is_dequantize_abs_quantize_on_every_storage_value():
    s = np.arange(-128, 128)
    [e] = _run(f"""func.func @main(%a: tensor<256x{A.mlir}>) -> tensor<256x{B.mlir}> {{
      %r = "stablehlo.abs"(%a) : (tensor<256x{A.mlir}>) -> tensor<256x{B.mlir}>
      "func.return"(%r) : (tensor<256x{B.mlir}>) -> () }}""", s.astype(np.int8))
    assert np.array_equal(_storage(e), quant(np.abs(deq(s, A)), B))
    # by hand: -128 → (-118)·0.5 = -59 → 59/0.25 + 3 = 239 → 127;  -12 → -1.0 → 1.0 → 7;  -10 → 0 → 3
    assert _storage(e)[[0, 116, 118]].tolist() == [127, 7, 3]


# ---------------------------------------------------------------- convolution
W = "!quant.uniform<i8:f32:2, {0.5,0.25,1.0,0.125}>"   # per-axis along the kernel's output features


def _conv(lhs_t: str, rhs_t: str, res_t: str) -> str:
    return f"""func.func @main(%x: tensor<1x5x2x{lhs_t}>, %w: tensor<3x2x4x{rhs_t}>) -> tensor<1x3x4x{res_t}> {{
      %r = "stablehlo.convolution"(%x, %w) {{batch_group_count = 1 : i64,
          dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, feature_group_count = 1 : i64,
          padding = dense<1> : tensor<1x2xi64>, window_strides = array<i64: 2>}}
          : (tensor<1x5x2x{lhs_t}>, tensor<3x2x4x{rhs_t}>) -> tensor<1x3x4x{res_t}>
      "func.return"(%r) : (tensor<1x3x4x{res_t}>) -> () }}"""


def _exact_conv(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The convolution above in rationals: x 1×5×2 padded by one zero each
    side, windows of 3 every 2 — out[0, o, f] = Σ_k Σ_c xp[2o + k, c]·w[k, c, f]."""
    xp = [[Fraction(0)] * 2] + [[Fraction(float(v)) for v in row] for row in x[0]] + [[Fraction(0)] * 2]
    out = np.empty((1, 3, 4), dtype=object)
    for o, f in itertools.product(range(3), range(4)):
        out[0, o, f] = sum(xp[2 * o + k][c] * Fraction(float(w[k, c, f])) for k in range(3) for c in range(2))
    return out


@pytest.mark.parametrize("res", ["per-tensor", "per-axis"])
def test_convolution_with_per_axis_weights_quantizes_the_exact_sum_or_its_neighbour(res):
    rng = np.random.default_rng(7)
    x = rng.integers(-128, 128, size=(1, 5, 2))
    w = rng.integers(-128, 128, size=(3, 2, 4))
    r_text = B.mlir if res == "per-tensor" else "!quant.uniform<i8:f32:2, {2.0:1,4.0:-2,1.5:0,8.0:3}>"
    [e] = _run(_conv(A.mlir, W, r_text), x.astype(np.int8), w.astype(np.int8))
    scales = F32([0.5, 0.25, 1.0, 0.125])
    wf = w.astype(F32) * scales                       # per-axis dequantize, zero points 0
    exact = _exact_conv(deq(x, A), wf)
    rq = parse_type(f"tensor<1x3x4x{r_text}>").element_type
    # The float conv may round its sum in any order: the expectation admits the quantized exact sum, and
    # where it states one value, that value is it unless the exact quotient lies within a rounding of .5.
    r_scales = [rq.scales[k] for k in range(4)] if rq.is_per_axis else [rq.scales[0]] * 4
    r_zps = [rq.zero_points[k] for k in range(4)] if rq.is_per_axis else [rq.zero_points[0]] * 4
    allowed = _allowed(e)
    for idx in np.ndindex(1, 3, 4):
        f = idx[2]
        y = exact[idx] / Fraction(float(F32(r_scales[f]))) + r_zps[f]
        want = int(min(max(round(y), rq.storage_min), rq.storage_max))
        got = allowed[int(np.ravel_multi_index(idx, (1, 3, 4)))]
        assert got is not None and want in got, (idx, float(y), got)
        assert len(got) == 1 or abs(y - round(y)) > Fraction(2, 5), (idx, float(y), got)   # a range near a tie only


def test_convolution_hand_example_quantized_and_hybrid():
    # x: lhs storage with A (0.5, zp -10): storage -8 → 1.0, -6 → 2.0, -10 → 0.  w per-axis W, zp 0.
    # One window (the middle one, rows 1..3 of x) for output feature 0 (scale 0.5): x rows [1,2],[0,1],[2,0]
    # times w[:, :, 0] storage [[2,0],[0,2],[2,0]]·0.5 = [[1,0],[0,1],[1,0]] → 1 + 1 + 2 = 4.0.
    x = np.full((1, 5, 2), -10)
    x[0, 1:4] = [[-8, -6], [-10, -8], [-6, -10]]
    w = np.zeros((3, 2, 4), np.int64)
    w[:, :, 0] = [[2, 0], [0, 2], [2, 0]]
    [q] = _run(_conv(A.mlir, W, B.mlir), x.astype(np.int8), w.astype(np.int8))
    # output position 1 covers padded rows 2..4 = x rows 1..3; 4.0 / 0.25 + 3 = 19; elsewhere feature 0:
    # position 0 covers pad, x0, x1 → x1·w[2] = 1·1 = 1.0 → 7; position 2 covers x3, x4, pad → x3·w[0] = 2 → 11
    assert _storage(q)[0, :, 0].tolist() == [7, 19, 11]
    assert _storage(q)[0, :, 1:].tolist() == [[3] * 3] * 3          # zero weights: 0.0 → the zero point 3
    xf = deq(x, A)
    [h] = _run(_conv("f32", W, "f32"), xf, w.astype(np.int8))     # hybrid: float lhs, dequantized weights
    assert np.asarray(h.array())[0, :, 0].tolist() == [1.0, 4.0, 2.0]


def _conv_inst(lhs, rhs, res):
    return OPS["convolution"].quantization.example({"lhs": lhs, "rhs": rhs, "result": res})


AX = lambda d, n: parse_quantized_type(   # noqa: E731
    "!quant.uniform<i8:f32:%d, {%s}>" % (d, ",".join(["0.5"] * n)))


@pytest.mark.parametrize("lhs, rhs, result, broken", [
    (A, A, element_type("f32"), "convolution_c29"),                     # v1.20 C28: a float result
    (A, AX(0, 3), A, "convolution_c30"),                                 # C29: weights per-axis along 0
    (A, AX(2, 4), AX(1, 3), "convolution_c31"),                          # C30: result per-axis along 1
    (A, Q("!quant.uniform<i16:f32, 0.5>"), A, "convolution_c32"),        # C31: another storage type
    (A, A, Q("!quant.uniform<i8:f16, 0.5>"), "convolution_c33"),         # C32: another expressed type
    (A, A, AX(2, 4), "convolution_c34"),                                 # C33: per-tensor weights, per-axis result
    (element_type("f32"), A, element_type("f16"), "convolution_c35"),    # C34: float result not the expressed type
    (element_type("f16"), A, element_type("f16"), "convolution_c35"),    # C34: float lhs not the expressed type
])
def test_convolution_quantization_clauses_each_break_alone(lhs, rhs, result, broken):
    spec = OPS["convolution"]
    inst = _conv_inst(lhs, rhs, result)
    assert spec.violated(inst) == [broken]
    clause = {"convolution_c%d" % n: "(v1.20 C%d)" % (n - 1) for n in range(29, 36)}[broken]
    assert spec.constraint(broken).__doc__.startswith(clause)


def test_convolution_accepts_v1_20s_quantized_forms():
    spec = OPS["convolution"]
    for lhs, rhs, res in ((A, B, A), (A, AX(2, 4), A), (A, AX(2, 4), AX(2, 4)),
                          (element_type("f32"), AX(2, 4), element_type("f32")),
                          (A, A, Q("!quant.uniform<i16:f32, 0.5>"))):   # the result's storage type is free
        assert spec.violated(_conv_inst(lhs, rhs, res)) == []


# ---------------------------------------------------------------- regions on quantized values

def _step(op, q):
    f = {"add": np.add, "maximum": np.maximum, "minimum": np.minimum}[op]
    return lambda a, b: int(quant(f(deq(a, q), deq(b, q)), q))


@pytest.mark.parametrize("body", ["add", "maximum"])
@pytest.mark.parametrize("q", [A, Q("!quant.uniform<i8<-127:127>:f32, 0.25>"), Q("!quant.uniform<u8:f32, 0.1:128>")])
def test_reduce_admits_exactly_what_some_schedule_computes(body, q):
    """Each step requantizes (the body is `add` on quantized tensors:
    dequantize_op_quantize), so a saturating step makes the schedule
    matter: the expectation's values per element are every full binary
    tree's result, enumerated here."""
    text, inst = _program("reduce", {"inputs": q}, body)
    st = q.storage_type
    rng = np.random.default_rng(3)
    x = rng.integers(int(q.storage_min), int(q.storage_max) + 1, size=(2, 6))
    x[0] = [int(q.zero_points[0]) + d for d in (40, 50, 60, -70, -80, 5)]   # saturates on one side, then returns
    x = np.clip(x, int(q.storage_min), int(q.storage_max))
    init = int(q.zero_points[0]) if body == "add" else int(q.storage_min)
    step = _step(body, q)
    assert all(step(init, int(v)) == int(v) for v in x.reshape(-1))   # the init is the body's identity here
    [e] = _run(text, x.astype(st.numpy), np.asarray(init).astype(st.numpy))
    allowed = _allowed(e)
    for row in range(2):
        want = every_tree([int(v) for v in x[row]], step)
        assert allowed[row] == want, (row, allowed[row], want)
    if body == "add" and q == A:
        assert len(every_tree([int(v) for v in x[0]], step)) > 1   # the hand row: the schedule shows


def test_reduce_window_windows_hold_padding_as_the_init():
    # windows 1×3 stride 2, one padding element each side: row [a, b, c, d, e] → [init a b], [b c d], [d e init]
    text, inst = _program("reduce_window", {"inputs": A}, "maximum")
    x = np.array([[-128, 5, -3, 100, -100], [0, 0, 0, 0, 0]])
    [e] = _run(text, x.astype(np.int8), np.int8(-128))
    m = lambda *v: int(quant(np.max(deq(np.array(v), A)), A))   # noqa: E731
    assert _storage(e).tolist() == [[m(-128, 5), m(5, -3, 100), m(100, -100)], [0, 0, 0]]
    assert _storage(e).tolist()[0] == [5, 100, 100]


def test_sort_orders_by_dequantized_values_and_moves_storage():
    text, inst = _program("sort", {"inputs": A}, "lt")
    x = np.array([[5, -128, 127, 0, -10, 3], [1, 1, 1, 1, 1, 1], [-1, 2, -3, 4, -5, 6]])
    [e] = _run(text, x.astype(np.int8))
    # (i + 10)·0.5 is increasing in i: sorted storage values, unchanged (no requantization)
    assert _storage(e).tolist() == np.sort(x, axis=1).tolist() and e.kind == "exact"


def test_map_requantizes_into_the_result_type():
    text, inst = _program("map", {"inputs": A, "result": B}, "map_add")
    rng = np.random.default_rng(5)
    x, y = rng.integers(-128, 128, size=(2, 2, 3))
    [e] = _run(text, x.astype(np.int8), y.astype(np.int8))
    assert np.array_equal(_storage(e), quant(deq(x, A) + deq(y, A), B))


def test_scatter_admits_every_order_of_updates_meeting_on_one_element():
    text, inst = _program("scatter", {"inputs": A}, "add")
    x = np.array([-10, 100, 0, 20, -30, 7])
    idx = np.array([[1], [1], [4]])
    upd = np.array([100, -120, 5])
    [e] = _run(text, x.astype(np.int8), idx.astype(np.int32), upd.astype(np.int8))
    step = _step("add", A)
    orders = {step(step(100, a), b) for a, b in ((100, -120), (-120, 100))}
    allowed = _allowed(e)
    assert allowed[1] == orders and len(orders) == 2   # 100 + 100 saturates at 127 first, or not
    assert allowed[4] == {step(-30, 5)} and [allowed[k] for k in (0, 2, 3, 5)] == [{-10}, {0}, {20}, {7}]


def test_select_and_scatter_spec_example_in_quantized_values():
    """spec.md's example, each value v stored as v·4 + 3 in 0.25:3 (v in
    0..8: storage 3..35): operand [[1,5],[2,5],[3,6],[4,4]], source
    [[5,6],[7,8]], init 0 → result [[0,0],[0,0],[5,14],[7,0]]."""
    text, inst = _program("select_and_scatter", {"operand": B}, "add")
    s = lambda v: np.asarray(v) * 4 + 3   # noqa: E731
    [e] = _run(text, s([[1, 5], [2, 5], [3, 6], [4, 4]]).astype(np.int8), s([[5, 6], [7, 8]]).astype(np.int8),
               np.int8(3))
    assert _storage(e).tolist() == s([[0, 0], [0, 0], [5, 14], [7, 0]]).tolist()


@pytest.mark.parametrize("op, types, broken", [
    ("reduce", {"inputs": A, "init_values": B}, "reduce_c2"),           # v1.20 C2: element types, scales included
    ("reduce", {"inputs": A, "body": B}, "reduce_c6"),                  # the body of another scale
    ("reduce_window", {"inputs": A, "init_values": B}, "reduce_window_c3"),
    ("sort", {"inputs": A, "body": B}, "sort_c5"),
    ("scatter", {"inputs": A, "updates": B}, "scatter_c6"),
])
def test_region_ops_read_quantized_types_whole(op, types, broken):
    spec = OPS[op]
    inst = spec.quantization.example(types)
    assert broken in spec.violated(inst)


def test_region_ops_take_per_tensor_quantized_tensors_only():
    per_axis = Q("!quant.uniform<i8:f32:0, {0.5,0.25}>")
    spec = OPS["reduce"]
    inst = spec.quantization.example({"inputs": per_axis, "init_values": A, "results": A, "body": A})
    assert "inputs" in spec.types_outside_tables(inst)


def test_quantized_reduce_refuses_to_read_a_body_as_a_monoid_on_storage():
    """A quantized add body is no integer sum of storage values: with zero
    point -10, storage 1 + 2 is (11 + 12)·0.5 = 11.5 → 13, not 3."""
    text, _ = _program("reduce", {"inputs": A}, "add")
    x = np.array([[1, 2, -10, -10, -10, -10], [-10] * 6])
    [e] = _run(text, x.astype(np.int8), np.int8(-10))
    assert _storage(e).tolist() == [13, -10]


def test_float_operands_and_a_quantized_result_break_c28_and_c34():
    """v1.20's C28, read `(is_quantized(lhs) = is_quantized(result)) and
    is_quantized(rhs)` as StableHLO's verifier reads it, refuses float ×
    float → quantized, as C34 does: both clauses name that program."""
    inst = _conv_inst(element_type("f32"), element_type("f32"), A)
    assert OPS["convolution"].violated(inst) == ["convolution_c29", "convolution_c35"]
