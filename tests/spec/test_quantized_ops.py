"""Quantized tensors through the chain (issue 34): the spec's own Examples of
uniform_quantize and uniform_dequantize, tan (the seed RFC's op) and add on
per-tensor quantized tensors computed by hand, the constraints v1.20 states
for them, and the types each op admits.

Truths are the spec's examples (spec.md "uniform_quantize",
"uniform_dequantize") and hand computation: dequantize (i - zp)·scale,
the op, quantize round(x / scale + zp) clamped — each value below worked
out in its comment, with scales whose quotients are not near a rounding
boundary, so f32's rounding of each step cannot change the integer."""
from __future__ import annotations

import math

import numpy as np
import pytest

from shlo_conform.oracle.execution import execute
from shlo_conform.oracle.program import parse_program
from shlo_conform.oracle.rejection import ProgramRejected
from shlo_conform.spec.added import ADDED
from shlo_conform.spec.ops import OPS, lookup
from shlo_conform.spec.quantized import family_name, is_family_name, parse_quantized_type
from shlo_conform.spec.types import TensorType, element_type, parse_type

PA = "!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>"
PB = "!quant.uniform<i8:f32:0, {0.1:-20,0.2:-30}>"


def _run(text: str, *inputs):
    return execute(parse_program(text), [np.asarray(a) for a in inputs])


def _storage(e) -> list:
    return np.asarray(e.array()).astype(np.int64).tolist()


def test_uniform_quantize_spec_examples():
    # spec.md: [4.0, 15.0] → [10, 10] (4/0.1 - 30 = 10, 15/0.5 - 20 = 10)
    [e] = _run(f"""func.func @main(%a: tensor<2xf32>) -> tensor<2x{PA}> {{
      %r = "stablehlo.uniform_quantize"(%a) : (tensor<2xf32>) -> tensor<2x{PA}>
      "func.return"(%r) : (tensor<2x{PA}>) -> () }}""", np.array([4.0, 15.0], np.float32))
    assert _storage(e) == [10, 10] and e.kind == "exact"
    # [10, 10] → [20, 45]: (10+30)·0.1 = 4.0 → 4/0.1 - 20 = 20; (10+20)·0.5 = 15 → 15/0.2 - 30 = 45
    [e] = _run(f"""func.func @main(%a: tensor<2x{PA}>) -> tensor<2x{PB}> {{
      %r = "stablehlo.uniform_quantize"(%a) : (tensor<2x{PA}>) -> tensor<2x{PB}>
      "func.return"(%r) : (tensor<2x{PB}>) -> () }}""", np.array([10, 10], np.int8))
    assert _storage(e) == [20, 45]


def test_uniform_dequantize_spec_example():
    # spec.md: [10, 10] → [4.0, 15.0]
    [e] = _run(f"""func.func @main(%a: tensor<2x{PA}>) -> tensor<2xf32> {{
      %r = "stablehlo.uniform_dequantize"(%a) : (tensor<2x{PA}>) -> tensor<2xf32>
      "func.return"(%r) : (tensor<2xf32>) -> () }}""", np.array([10, 10], np.int8))
    assert e.array().tolist() == [4.0, 15.0]


def test_quantize_rounds_half_to_even_clamps_and_leaves_nan_open():
    q = "!quant.uniform<i8:f32, 0.5>"
    # 0.25/0.5 = 0.5 → 0 (even); 0.75/0.5 = 1.5 → 2; 1000/0.5 → clamped to 127; -inf → -128; NaN: open
    [e] = _run(f"""func.func @main(%a: tensor<5xf32>) -> tensor<5x{q}> {{
      %r = "stablehlo.uniform_quantize"(%a) : (tensor<5xf32>) -> tensor<5x{q}>
      "func.return"(%r) : (tensor<5x{q}>) -> () }}""", np.array([0.25, 0.75, 1000, -np.inf, np.nan], np.float32))
    assert _storage(e)[:4] == [0, 2, 127, -128]
    assert e.impl_defined == [4] and any(a.bits is None and a.elements == [4] for a in e.alternatives)


def test_tan_on_quantized_tensors_is_dequantize_op_quantize():
    a, r = "!quant.uniform<i8:f32, 0.1:-3>", "!quant.uniform<i8:f32, 0.05:2>"
    # storage -2 → 0.1 → tan 0.10033 → /0.05 + 2 = 4.007 → 4;  2 → 0.5 → 0.5463 → 12.93 → 13;
    # -13 → -1.0 → -1.5574 → -29.15 → -29;  9 → 1.2 → 2.5722 → 53.44 → 53;  127 → 13.0 → 0.4630 → 11.26 → 11
    [e] = _run(f"""func.func @main(%a: tensor<5x{a}>) -> tensor<5x{r}> {{
      %r = "stablehlo.tan"(%a) : (tensor<5x{a}>) -> tensor<5x{r}>
      "func.return"(%r) : (tensor<5x{r}>) -> () }}""", np.array([-2, 2, -13, 9, 127], np.int8))
    assert _storage(e) == [4, 13, -29, 53, 11]
    for x, want in ((0.1, 4), (0.5, 13), (-1.0, -29), (1.2, 53), (13.0, 11)):   # the comment, recomputed
        assert round(math.tan(x) / 0.05 + 2) == want


def test_add_with_three_scales_saturates():
    l, rr, o = "!quant.uniform<i8:f32, 0.1:-3>", "!quant.uniform<i8:f32, 0.2:1>", "!quant.uniform<i8:f32, 0.05:2>"
    # (1+3)·0.1 + (5-1)·0.2 = 1.2 → 24+2 = 26;  (2+3)·0.1 + (-6-1)·0.2 = -0.9 → -16;  (100+3)·0.1 + (8-1)·0.2 = 11.7 → 236 → 127
    [e] = _run(f"""func.func @main(%a: tensor<3x{l}>, %b: tensor<3x{rr}>) -> tensor<3x{o}> {{
      %r = "stablehlo.add"(%a, %b) : (tensor<3x{l}>, tensor<3x{rr}>) -> tensor<3x{o}>
      "func.return"(%r) : (tensor<3x{o}>) -> () }}""", np.array([1, 2, 100], np.int8), np.array([5, -6, 8], np.int8))
    assert _storage(e) == [26, -16, 127]


@pytest.mark.parametrize("result, label", [
    ("!quant.uniform<i16:f32, 0.05:2>", "tan_c1"),      # another storage type: baseline types differ
    ("!quant.uniform<i8:f16, 0.05:2>", "tan_c1"),       # another expressed type
])
def test_tan_c1_reads_baseline_types(result, label):
    a = "!quant.uniform<i8:f32, 0.1:-3>"
    with pytest.raises(ProgramRejected) as e:
        parse_program(f"""func.func @main(%a: tensor<4x{a}>) -> tensor<4x{result}> {{
          %r = "stablehlo.tan"(%a) : (tensor<4x{a}>) -> tensor<4x{result}>
          "func.return"(%r) : (tensor<4x{result}>) -> () }}""")
    assert e.value.constraint == label


def _inst(op, **types):
    spec = lookup(op)
    ops = {o.name: parse_type(types[o.name]) for o in spec.operands}
    res = {r.name: parse_type(types[r.name]) for r in spec.results}
    return spec, spec.instance(ops, {}, res)


@pytest.mark.parametrize("lhs, rhs, result, broken", [
    ("tensor<2x2x!quant.uniform<i8:f32, 0.1>>", "tensor<2x2xf32>", "tensor<2x2x!quant.uniform<i8:f32, 0.1>>", "add_c2"),
    ("tensor<2x2x!quant.uniform<i8:f32, 0.1>>", "tensor<2x2x!quant.uniform<i16:f32, 0.1>>",
     "tensor<2x2x!quant.uniform<i8:f32, 0.1>>", "add_c3"),
    ("tensor<2x2x!quant.uniform<i8:f32, 0.1>>", "tensor<2x2x!quant.uniform<i8:f16, 0.1>>",
     "tensor<2x2x!quant.uniform<i8:f32, 0.1>>", "add_c4"),
    ("tensor<2x2x!quant.uniform<i8:f32, 0.1>>", "tensor<2x2x!quant.uniform<i8:f32, 0.1>>",
     "tensor<2x2x!quant.uniform<i8:f32:0, {0.1,0.2}>>", "add_c5"),
    ("tensor<2x2x!quant.uniform<i8:f32:0, {0.1,0.2}>>", "tensor<2x2x!quant.uniform<i8:f32, 0.1>>",
     "tensor<2x2x!quant.uniform<i8:f32:1, {0.1,0.2}>>", "add_c6"),
    ("tensor<2x2x!quant.uniform<i8:f32, 0.1>>", "tensor<2x2x!quant.uniform<i8:f32:0, {0.1,0.2}>>",
     "tensor<2x2x!quant.uniform<i8:f32:1, {0.1,0.2}>>", "add_c7"),
])
def test_add_quantization_constraints_each_break_alone(lhs, rhs, result, broken):
    spec, inst = _inst("add", lhs=lhs, rhs=rhs, result=result)
    assert spec.violated(inst) == [broken]
    assert spec.constraint(broken).__doc__.startswith(f"(v1.20 C{broken[-1]})")


def test_add_on_float_tensors_reads_as_the_seed():
    spec, inst = _inst("add", lhs="tensor<2xf32>", rhs="tensor<2xf32>", result="tensor<2xf16>")
    assert spec.violated(inst) == ["add_c1"]


def test_tables_admit_per_tensor_only_where_v1_20_says_so():
    per_axis = "tensor<2x2x!quant.uniform<i8:f32:0, {0.1,0.2}>>"
    spec, inst = _inst("tan", operand=per_axis, result=per_axis)
    assert spec.types_outside_tables(inst) == ["operand", "result"]   # tan: "per-tensor quantized tensor"
    spec, inst = _inst("add", lhs=per_axis, rhs=per_axis, result=per_axis)
    assert spec.types_outside_tables(inst) == []                      # add: "quantized tensor"
    spec, inst = _inst("popcnt", operand="tensor<2x!quant.uniform<i8:f32, 0.1>>",
                       result="tensor<2x!quant.uniform<i8:f32, 0.1>>")
    assert spec.types_outside_tables(inst) == ["operand", "result"]   # takes no quantized tensor at all


def test_uniform_ops_are_v1_20_additions_beside_the_seed():
    assert set(ADDED) >= {"uniform_quantize", "uniform_dequantize"} and not set(ADDED) & set(OPS)
    spec, inst = _inst("uniform_dequantize", operand="tensor<2x!quant.uniform<i8:f32, 0.1>>", result="tensor<2xf16>")
    assert spec.violated(inst) == ["uniform_dequantize_c2"]
    spec, inst = _inst("uniform_quantize", operand="tensor<2xf16>", result="tensor<2x!quant.uniform<i8:f32, 0.1>>")
    assert spec.violated(inst) == ["uniform_quantize_c2"]


def test_family_names_round_trip():
    q = parse_quantized_type("!quant.uniform<u8:f32, 0.5:128>")
    assert family_name(q) == "quant_ui8_f32" and is_family_name("quant_ui8_f32")
    assert is_family_name(family_name(parse_quantized_type(PA)))
    assert not is_family_name("quant_f32_i8") and not is_family_name("f32")
    assert TensorType((2,), q).mlir == parse_type(f"tensor<2x{q.mlir}>").mlir
    assert element_type("f32") == q.expressed_type


def test_data_movement_moves_storage_values():
    q = "!quant.uniform<u8:f32, 0.5:128>"
    # slice [1:3] of storage [7, 200, 128, 3] is [200, 128], unchanged (no dequantize, no requantize)
    [e] = _run(f"""func.func @main(%a: tensor<4x{q}>) -> tensor<2x{q}> {{
      %r = "stablehlo.slice"(%a) <{{start_indices = array<i64: 1>, limit_indices = array<i64: 3>,
                                    strides = array<i64: 1>}}> : (tensor<4x{q}>) -> tensor<2x{q}>
      "func.return"(%r) : (tensor<2x{q}>) -> () }}""", np.array([7, 200, 128, 3], np.uint8))
    assert np.asarray(e.array()).tolist() == [200, 128] and e.kind == "exact"


def test_compare_dequantizes_both_sides():
    a, b = "!quant.uniform<i8:f32, 0.5>", "!quant.uniform<i8:f32, 0.25:4>"
    # lhs 2·0.5 = 1.0 vs rhs (8-4)·0.25 = 1.0: equal though the storage differs; 3·0.5 = 1.5 > (5-4)·0.25
    [e] = _run(f"""func.func @main(%a: tensor<2x{a}>, %b: tensor<2x{b}>) -> tensor<2xi1> {{
      %r = "stablehlo.compare"(%a, %b) <{{comparison_direction = #stablehlo<comparison_direction EQ>}}>
          : (tensor<2x{a}>, tensor<2x{b}>) -> tensor<2xi1>
      "func.return"(%r) : (tensor<2xi1>) -> () }}""", np.array([2, 3], np.int8), np.array([8, 5], np.int8))
    assert np.asarray(e.array()).tolist() == [True, False]


def test_a_slice_to_another_scale_is_refused():
    a, b = "!quant.uniform<i8:f32, 0.5>", "!quant.uniform<i8:f32, 0.25>"
    with pytest.raises(ProgramRejected) as e:
        parse_program(f"""func.func @main(%a: tensor<4x{a}>) -> tensor<2x{b}> {{
          %r = "stablehlo.slice"(%a) <{{start_indices = array<i64: 1>, limit_indices = array<i64: 3>,
                                        strides = array<i64: 1>}}> : (tensor<4x{a}>) -> tensor<2x{b}>
          "func.return"(%r) : (tensor<2x{b}>) -> () }}""")
    assert e.value.constraint == "slice_c1"


W = "!quant.uniform<i8:f32:1, {0.5,0.25}>"   # per-axis weights along the output dimension, zero points 0


def test_dot_general_quantized_and_hybrid():
    a, r = "!quant.uniform<i8:f32, 0.1:-3>", "!quant.uniform<i8:f32, 0.2:1>"
    # x = [[0.1, 0.2, 0.3], [-1, 0.5, 2]] quantizes exactly ((x/0.1 - 3) integers); w dequantized per column:
    # [[0.5, 0.5], [1.5, 1.0], [-2.5, 1.5]].  x·w = [[-0.4, 0.7], [-4.75, 3.0]].
    # quantized: -0.4/0.2+1 = -1 → -0.4; -4.75/0.2+1 = -22.75 → -23 → -4.8; 3.0/0.2+1 = 16 → 3.0
    [q, h] = _run(f"""func.func @main(%x: tensor<2x3xf32>, %w: tensor<3x2x{W}>) -> (tensor<2x2x{r}>, tensor<2x2xf32>) {{
      %q = "stablehlo.uniform_quantize"(%x) : (tensor<2x3xf32>) -> tensor<2x3x{a}>
      %d = "stablehlo.dot_general"(%q, %w) {{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1],
           rhs_contracting_dimensions = [0]>}} : (tensor<2x3x{a}>, tensor<3x2x{W}>) -> tensor<2x2x{r}>
      %h = "stablehlo.dot_general"(%x, %w) {{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1],
           rhs_contracting_dimensions = [0]>}} : (tensor<2x3xf32>, tensor<3x2x{W}>) -> tensor<2x2xf32>
      "func.return"(%d, %h) : (tensor<2x2x{r}>, tensor<2x2xf32>) -> () }}""",
                  np.array([[0.1, 0.2, 0.3], [-1, 0.5, 2]], np.float32), np.array([[1, 2], [3, 4], [-5, 6]], np.int8))
    got = np.asarray(q.array()).astype(int)
    assert got[0, 0] == -1 and got[1].tolist() == [-23, 16]   # [0, 1]: 0.7/0.2 + 1 = 4.5, a tie the f32 sum decides
    assert set(np.asarray(q.lo).astype(np.int8)[0, 1:].tolist() + np.asarray(q.hi).astype(np.int8)[0, 1:].tolist()) <= {4, 5}
    assert np.allclose(h.array(), [[-0.4, 0.7], [-4.75, 3.0]], rtol=1e-6)   # hybrid: float lhs · dequantized rhs


@pytest.mark.parametrize("lhs, rhs, result, broken", [
    ("tensor<2x3x!quant.uniform<i8:f32, 0.1>>", "tensor<3x2x!quant.uniform<i8:f32, 0.5>>", "tensor<2x2xf32>",
     "dot_general_c14"),
    ("tensor<2x3x!quant.uniform<i8:f32, 0.1>>", "tensor<3x2x!quant.uniform<i8:f32, 0.5:2>>",
     "tensor<2x2x!quant.uniform<i8:f32, 0.2>>", "dot_general_c15"),
    ("tensor<2x3x!quant.uniform<i8:f32, 0.1>>", "tensor<3x2x!quant.uniform<i8:f32:0, {0.5,0.5,0.5}>>",
     "tensor<2x2x!quant.uniform<i8:f32:0, {0.2,0.2}>>", "dot_general_c16"),
    ("tensor<2x3x!quant.uniform<i8:f32, 0.1>>", "tensor<3x2x!quant.uniform<i16:f32, 0.5>>",
     "tensor<2x2x!quant.uniform<i8:f32, 0.2>>", "dot_general_c17"),
    ("tensor<2x3x!quant.uniform<i8:f32, 0.1>>", "tensor<3x2x!quant.uniform<i8:f16, 0.5>>",
     "tensor<2x2x!quant.uniform<i8:f32, 0.2>>", "dot_general_c18"),
    ("tensor<2x3x!quant.uniform<i8:f32, 0.1>>", "tensor<3x2x!quant.uniform<i8:f32, 0.5>>",
     "tensor<2x2x!quant.uniform<i8:f32:1, {0.2,0.2}>>", "dot_general_c19"),
    ("tensor<2x3xf16>", "tensor<3x2x!quant.uniform<i8:f32, 0.5>>", "tensor<2x2xf16>", "dot_general_c20"),
])
def test_dot_general_quantization_clauses_each_break_alone(lhs, rhs, result, broken):
    spec = lookup("dot_general")
    inst = spec.instance({"lhs": parse_type(lhs), "rhs": parse_type(rhs)},
                         {"lhs_batching_dimensions": (), "rhs_batching_dimensions": (),
                          "lhs_contracting_dimensions": (1,), "rhs_contracting_dimensions": (0,)},
                         {"result": parse_type(result)})
    assert spec.violated(inst) == [broken]


def test_discardable_attributes_are_set_aside_and_unknown_properties_refused():
    base = """func.func @main(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {{
      %r = "stablehlo.transpose"(%a) <{{permutation = array<i64: 1, 0>{prop}}}> {disc} : (tensor<2x3xf32>) -> tensor<3x2xf32>
      "func.return"(%r) : (tensor<3x2xf32>) -> () }}"""
    # torch-xla writes these two on every transpose: MLIR's discardable dictionary, no meaning for the op
    parse_program(base.format(prop="", disc='{result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[3,2]"}'))
    with pytest.raises(ProgramRejected, match="unknown attribute"):
        parse_program(base.format(prop=", bogus = 1 : i64", disc=""))


@pytest.mark.parametrize("qtext", ["!quant.uniform<i8:f32, 0.1:-3>", "!quant.uniform<u8:f16, 0.0078125:128>",
                                   "!quant.uniform<i16:f32, 0.001:7>", "!quant.uniform<i8<-127:127>:f64, 0.3>",
                                   "!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>", "!quant.uniform<i4:f16, 0.5:1>"])
def test_quantize_on_arrays_equals_the_exact_steps(qtext):
    """quantize's whole-array route (f16/f32/f64) against its exact one
    (Fractions, one element at a time): ties of the rounding, values one ulp
    either side, past both bounds, specials, subnormals, random."""
    from shlo_conform.spec import quantized as qz
    q = parse_quantized_type(qtext)
    dt = np.dtype(q.expressed_type.numpy)
    zp, s = int(q.zero_points[0]), float(q.scales[0])
    ties = np.array([(k + 0.5 - zp) * s for k in range(-300, 300)], dtype=np.float64).astype(dt)
    near = np.concatenate([np.nextafter(ties, np.inf), np.nextafter(ties, -np.inf), ties])
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 6e-8, 1e30, -1e30], np.float64).astype(dt)
    rand = np.random.default_rng(0).uniform(-400 * s, 400 * s, 2000).astype(dt)
    x = np.concatenate([near, special, rand]).astype(dt)
    if q.is_per_axis:
        x = x[: x.size // 2 * 2].reshape(2, -1)
    fast = qz.quantize(x, q)
    idx = qz._param_index(x.shape, q)
    exact = [qz._Quantizer.of(q, k)(float(v)) for v, k in zip(x.reshape(-1), idx.reshape(-1))]
    assert np.ma.getmaskarray(fast).reshape(-1).tolist() == [v is None for v in exact]
    got = np.asarray(np.ma.getdata(fast)).reshape(-1).astype(int).tolist()
    assert [g for g, e in zip(got, exact) if e is not None] == [e for e in exact if e is not None]
