"""Quantized tensors (issue 34, second part): batch norm (dequantize →
the decomposition → quantize each result), per-axis data movement
(reshape C3, transpose C4, broadcast_in_dim C6 of v1.20), and the
collectives on process grids (all_reduce's computation on quantized
values; collective_permute's fill `quantize(0)` for a process no pair
targets).

Truths: NumPy in float64 for batch norm (the quantized result must be the
rounding of the real-number result or its neighbour where the f32
decomposition can move it across a tie — here the inputs keep every
quotient at least 0.05 storage units from a tie), hand computation for the
rest, in the comments."""
from __future__ import annotations

import numpy as np
import pytest

from shlo_conform.oracle.execution import execute
from shlo_conform.oracle.grid import execute_on_grid
from shlo_conform.oracle.program import parse_program
from shlo_conform.spec.grid import Grid
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.quantized import parse_quantized_type
from shlo_conform.spec.types import TensorType

Q = parse_quantized_type
A = Q("!quant.uniform<i8:f32, 0.5:-10>")
R = Q("!quant.uniform<i8:f32, 0.25:3>")


def _storage(e) -> list:
    return np.asarray(e.array()).astype(np.int64).tolist()


def _run(text: str, *inputs):
    return execute(parse_program(text), [np.asarray(a) for a in inputs])


# ---------------------------------------------------------------- batch norm
def test_batch_norm_inference_quantizes_the_float_decomposition():
    x = np.array([[-8, -6, -2], [0, 4, -10]])          # (x + 10)·0.5: [[1, 2, 4], [5, 7, 0]]
    scale, offset = np.array([-8, -6, -9]), np.array([-10, -9, -12])   # [1, 2, 0.5], [0, 0.5, -1]
    mean, var = np.array([-4, -8, -6]), np.array([-2, -4, -10])        # [3, 1, 2], [4, 3, 0]
    t = lambda s: f"tensor<{s}x{A.mlir}>"   # noqa: E731
    [e] = _run(f"""func.func @main(%x: {t("2x3")}, %s: {t(3)}, %o: {t(3)}, %m: {t(3)}, %v: {t(3)}) -> tensor<2x3x{R.mlir}> {{
      %r = "stablehlo.batch_norm_inference"(%x, %s, %o, %m, %v) {{epsilon = 1.0 : f32, feature_index = 1 : i64}}
         : ({t("2x3")}, {t(3)}, {t(3)}, {t(3)}, {t(3)}) -> tensor<2x3x{R.mlir}>
      "func.return"(%r) : (tensor<2x3x{R.mlir}>) -> () }}""", *(a.astype(np.int8) for a in (x, scale, offset, mean, var)))
    xf, sf, of, mf, vf = ((a + 10) * 0.5 for a in (x, scale, offset, mean, var))
    y = sf * (xf - mf) / np.sqrt(vf + 1.0) + of            # by hand, column 0: 1·(1 − 3)/√5 + 0 = −0.894 → −0.894/0.25 + 3 = −0.58 → −1
    q = y / 0.25 + 3
    assert np.all(np.abs(q - np.round(q)) < 0.45)          # no quotient near a tie: one storage value each
    assert _storage(e) == np.clip(np.round(q), -128, 127).astype(int).tolist()
    assert _storage(e)[0][0] == -1


def test_batch_norm_training_quantizes_each_result_into_its_own_type():
    m_t, v_t = Q("!quant.uniform<i8:f32, 0.125:0>"), Q("!quant.uniform<i8:f32, 0.0625:-100>")
    x = np.array([[-8, -6], [-4, -10]])                    # [[1, 2], [3, 0]]: feature means [2, 1], variances [1, 1]
    ones, zeros = np.array([-8, -8]), np.array([-10, -10])  # scale 1, offset 0
    t = lambda s, q=A: f"tensor<{s}x{q.mlir}>"   # noqa: E731
    out, mean, var = _run(f"""func.func @main(%x: {t("2x2")}, %s: {t(2)}, %o: {t(2)}) -> ({t("2x2", R)}, {t(2, m_t)}, {t(2, v_t)}) {{
      %r:3 = "stablehlo.batch_norm_training"(%x, %s, %o) {{epsilon = 0.0 : f32, feature_index = 1 : i64}}
         : ({t("2x2")}, {t(2)}, {t(2)}) -> ({t("2x2", R)}, {t(2, m_t)}, {t(2, v_t)})
      "func.return"(%r#0, %r#1, %r#2) : ({t("2x2", R)}, {t(2, m_t)}, {t(2, v_t)}) -> () }}""",
                          x.astype(np.int8), ones.astype(np.int8), zeros.astype(np.int8))
    # mean [2, 1] → /0.125 = [16, 8]; variance [1, 1] → /0.0625 − 100 = [−84, −84]; output (x − mean)/1:
    # [[−1, 1], [1, −1]] → /0.25 + 3 = [[−1, 7], [7, −1]]
    assert _storage(mean) == [16, 8] and _storage(var) == [-84, -84]
    assert _storage(out) == [[-1, 7], [7, -1]]


def test_batch_norm_c2_reads_baseline_element_types():
    spec = OPS["batch_norm_inference"]
    ex = spec.quantization.example
    names = ("operand", "scale", "offset", "mean", "variance", "result")
    assert spec.violated(ex({n: (A if k % 2 else R) for k, n in enumerate(names)})) == []   # scales differ: fine
    bad = {n: A for n in names} | {"variance": Q("!quant.uniform<i16:f32, 0.5:-10>")}
    assert spec.violated(ex(bad)) == ["batch_norm_inference_c2"]


# ---------------------------------------------------------------- per-axis data movement
P2 = "!quant.uniform<i8:f32:{d}, {{0.5:1,2.0:-3}}>"


def test_transpose_moves_per_axis_scales_with_their_axis():
    op_t, res_t = P2.format(d=0), P2.format(d=1)
    # operand 2×3 along 0 → result 3×2 along 1: the storage moves, each value keeps its scale
    x = np.array([[1, 2, 3], [4, 5, 6]])
    [e] = _run(f"""func.func @main(%a: tensor<2x3x{op_t}>) -> tensor<3x2x{res_t}> {{
      %r = "stablehlo.transpose"(%a) <{{permutation = array<i64: 1, 0>}}> : (tensor<2x3x{op_t}>) -> tensor<3x2x{res_t}>
      "func.return"(%r) : (tensor<3x2x{res_t}>) -> () }}""", x.astype(np.int8))
    assert _storage(e) == x.T.tolist() and e.kind == "exact"


@pytest.mark.parametrize("op, operand, result, broken", [
    ("transpose", (0, 2), (0, 2), "transpose_c4"),     # along 0 → along 0: permutation[0] = 2, not 0
    ("reshape", (2, 4), (0, 4), "reshape_c3"),          # 4×3×4 along 2 → 4×12 along 0: 12 elements before, not 1
    ("broadcast_in_dim", (0, 3), (1, 2), "broadcast_in_dim_c6"),   # along 0 → along 1: broadcast_dimensions[0] = 0
])
def test_per_axis_clauses_each_break_alone(op, operand, result, broken):
    spec = OPS[op]
    per = lambda d, n: Q("!quant.uniform<i8:f32:%d, {%s}>" % (d, ",".join(["0.5:1"] * n)))   # noqa: E731
    inst = spec.quantization.example({"operand": per(*operand), "result": per(*result)})
    assert spec.violated(inst) == [broken]
    assert spec.constraint(broken).__doc__.startswith(f"(v1.20 C{broken[-1]})")


def test_per_axis_data_movement_keeps_the_valid_forms():
    per = lambda d, n: Q("!quant.uniform<i8:f32:%d, {%s}>" % (d, ",".join(["0.5:1"] * n)))   # noqa: E731
    for op, operand, result in (("transpose", (0, 2), (1, 2)), ("transpose", (2, 2), (0, 2)),
                                ("reshape", (0, 4), (0, 4)), ("broadcast_in_dim", (0, 3), (0, 3))):
        spec = OPS[op]
        assert spec.violated(spec.quantization.example({"operand": per(*operand), "result": per(*result)})) == []


def test_broadcast_of_a_size_1_quantization_dimension_repeats_its_scale():
    spec = OPS["broadcast_in_dim"]
    one = Q("!quant.uniform<i8:f32:1, {0.5:1}>")
    inst = spec.instance({"operand": TensorType((3, 1), one)}, {"broadcast_dimensions": (0, 2)},
                         {"result": TensorType((3, 2, 4), Q("!quant.uniform<i8:f32:2, {0.5:1,0.5:1,0.5:1,0.5:1}>"))})
    assert spec.violated(inst) == []
    other = Q("!quant.uniform<i8:f32:2, {0.5:1,0.5:1,0.25:1,0.5:1}>")
    inst = spec.instance({"operand": TensorType((3, 1), one)}, {"broadcast_dimensions": (0, 2)},
                         {"result": TensorType((3, 2, 4), other)})
    assert spec.violated(inst) == ["broadcast_in_dim_c6"]


# ---------------------------------------------------------------- collectives
def test_collective_permute_fills_with_the_quantized_zero():
    """spec.md's example (3 replicas, pairs [[0, 1], [1, 2]]) in storage of
    zero point -7: process 0 gets quantize(0) = -7, not storage 0."""
    q = "!quant.uniform<i8:f32, 0.5:-7>"
    grid = Grid(3, 1)
    text = f"""module attributes {{mhlo.num_replicas = 3 : i32, mhlo.num_partitions = 1 : i32}} {{
    func.func @main(%a: tensor<2x{q}>) -> tensor<2x{q}> {{
      %r = "stablehlo.collective_permute"(%a) {{source_target_pairs = dense<[[0, 1], [1, 2]]> : tensor<2x2xi64>,
          channel_handle = #stablehlo.channel_handle<handle = 0, type = 0>}} : (tensor<2x{q}>) -> tensor<2x{q}>
      "func.return"(%r) : (tensor<2x{q}>) -> () }} }}"""
    xs = [np.array([1, 2], np.int8), np.array([5, 6], np.int8), np.array([9, 10], np.int8)]
    outs = execute_on_grid(parse_program(text, grid), grid, [[x] for x in xs])
    assert [_storage(o[0]) for o in outs] == [[-7, -7], [1, 2], [5, 6]]


def test_all_reduce_adds_dequantized_values_at_every_step():
    """Two replicas, `add` on zero point -10, scale 0.5: storage 100 and 50
    are 55.0 and 30.0; their sum 85.0 is 170 - 10 = 160 → 127 (saturated);
    storage -10 and 3 are 0 and 6.5 → 3."""
    q = A.mlir
    grid = Grid(2, 1)
    text = f"""module attributes {{mhlo.num_replicas = 2 : i32, mhlo.num_partitions = 1 : i32}} {{
    func.func @main(%a: tensor<2x{q}>) -> tensor<2x{q}> {{
      %r = "stablehlo.all_reduce"(%a) ({{
        ^bb0(%x: tensor<{q}>, %y: tensor<{q}>):
          %s = "stablehlo.add"(%x, %y) : (tensor<{q}>, tensor<{q}>) -> tensor<{q}>
          "stablehlo.return"(%s) : (tensor<{q}>) -> ()
      }}) {{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
          channel_handle = #stablehlo.channel_handle<handle = 0, type = 0>}} : (tensor<2x{q}>) -> tensor<2x{q}>
      "func.return"(%r) : (tensor<2x{q}>) -> () }} }}"""
    outs = execute_on_grid(parse_program(text, grid), grid, [[np.array([100, -10], np.int8)],
                                                               [np.array([50, 3], np.int8)]])
    assert [_storage(o[0]) for o in outs] == [[127, 3], [127, 3]]


# ---------------------------------------------------------------- the rest: values that pass, iota, bitcast
def test_iota_quantizes_the_index():
    # index k in f32, quantized into 0.5:-10: k / 0.5 - 10
    [e] = _run(f"""func.func @main() -> tensor<5x{A.mlir}> {{
      %r = "stablehlo.iota"() {{iota_dimension = 0 : i64}} : () -> tensor<5x{A.mlir}>
      "func.return"(%r) : (tensor<5x{A.mlir}>) -> () }}""")
    assert _storage(e) == [-10, -8, -6, -4, -2]


def test_bitcast_convert_reinterprets_storage_bits():
    [e] = _run(f"""func.func @main(%a: tensor<3x{A.mlir}>) -> tensor<3xui8> {{
      %r = "stablehlo.bitcast_convert"(%a) : (tensor<3x{A.mlir}>) -> tensor<3xui8>
      "func.return"(%r) : (tensor<3xui8>) -> () }}""", np.array([-1, 5, -128], np.int8))
    assert _storage(e) == [255, 5, 128]


def test_control_flow_and_tuples_pass_quantized_values():
    q = A.mlir
    # if false: the false branch adds (1 + 10)·0.5 + (3 + 10)·0.5 = 12.0 → 24 - 10 = 14; (2 + 10)·0.5 + 7 = 13 → 16
    [e] = _run(f"""func.func @main(%p: tensor<i1>, %a: tensor<2x{q}>, %b: tensor<2x{q}>) -> tensor<2x{q}> {{
      %r = "stablehlo.if"(%p) ({{ "stablehlo.return"(%a) : (tensor<2x{q}>) -> () }}, {{
        %s = "stablehlo.add"(%a, %b) : (tensor<2x{q}>, tensor<2x{q}>) -> tensor<2x{q}>
        "stablehlo.return"(%s) : (tensor<2x{q}>) -> () }}) : (tensor<i1>) -> tensor<2x{q}>
      "func.return"(%r) : (tensor<2x{q}>) -> () }}""", np.array(False), np.array([1, 2], np.int8),
               np.array([3, 4], np.int8))
    assert _storage(e) == [14, 16]
    [e] = _run(f"""func.func @main(%a: tensor<2x{q}>, %b: tensor<f32>) -> tensor<2x{q}> {{
      %t = "stablehlo.tuple"(%a, %b) : (tensor<2x{q}>, tensor<f32>) -> tuple<tensor<2x{q}>, tensor<f32>>
      %r = "stablehlo.get_tuple_element"(%t) {{index = 0 : i32}} : (tuple<tensor<2x{q}>, tensor<f32>>) -> tensor<2x{q}>
      "func.return"(%r) : (tensor<2x{q}>) -> () }}""", np.array([7, 8], np.int8), np.array(1.0, np.float32))
    assert _storage(e) == [7, 8]


def test_while_doubles_a_quantized_value_by_requantized_adds():
    q = A.mlir
    # two iterations of x + x: storage -8 is 1.0 → 2.0 → 4.0 → 8 - 10 = -2; -9 is 0.5 → 2.0 → -6
    [e] = _run(f"""func.func @main(%n: tensor<i32>, %a: tensor<2x{q}>) -> tensor<2x{q}> {{
      %z = "stablehlo.constant"() {{value = dense<0> : tensor<i32>}} : () -> tensor<i32>
      %r:3 = "stablehlo.while"(%z, %n, %a) ({{
        ^bb0(%i: tensor<i32>, %m: tensor<i32>, %x: tensor<2x{q}>):
          %c = "stablehlo.compare"(%i, %m) {{comparison_direction = #stablehlo<comparison_direction LT>}}
              : (tensor<i32>, tensor<i32>) -> tensor<i1>
          "stablehlo.return"(%c) : (tensor<i1>) -> () }}, {{
        ^bb0(%i: tensor<i32>, %m: tensor<i32>, %x: tensor<2x{q}>):
          %one = "stablehlo.constant"() {{value = dense<1> : tensor<i32>}} : () -> tensor<i32>
          %j = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
          %y = "stablehlo.add"(%x, %x) : (tensor<2x{q}>, tensor<2x{q}>) -> tensor<2x{q}>
          "stablehlo.return"(%j, %m, %y) : (tensor<i32>, tensor<i32>, tensor<2x{q}>) -> () }})
        : (tensor<i32>, tensor<i32>, tensor<2x{q}>) -> (tensor<i32>, tensor<i32>, tensor<2x{q}>)
      "func.return"(%r#2) : (tensor<2x{q}>) -> () }}""", np.array(2, np.int32), np.array([-8, -9], np.int8))
    assert _storage(e) == [-2, -6]
