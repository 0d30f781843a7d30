"""v1.20's dynamic ops (issue 35): dynamic_iota, dynamic_reshape, dynamic_broadcast_in_dim,
dynamic_pad, dynamic_gather, dynamic_conv (spec/added/).

Truths: each op's Examples section of spec.md (v1.20.0), the results copied
from the spec's text; hand computation for the constraints and the
dynamism rules; for real programs — what `jax.export` with a symbolic
dimension writes, refined to static types by StableHLO's own passes but
left with its dynamic ops (their shape operands now constants) — XLA
executing the exported program itself (`Exported.call`), and NumPy
computing the same function on small integers (exact in f32).
"""
from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export

from shlo_conform.oracle.execution import execute
from shlo_conform.oracle.program import parse_program
from shlo_conform.oracle.rejection import ProgramRejected
from shlo_conform.spec.added import ADDED
from shlo_conform.spec.quantized import parse_quantized_type
from shlo_conform.spec.types import TensorType, element_type
from shlo_conform.suites.compare import compare

F32 = jnp.float32
I64 = element_type("si64")


def _run(text: str, *inputs):
    return execute(parse_program(text), [np.asarray(a) for a in inputs])


def _rejected(text: str) -> str:
    with pytest.raises(ProgramRejected) as e:
        parse_program(text)
    return e.value.constraint


# ---------------------------------------------------------------- the spec's Examples
IOTA = """func.func @main() -> tensor<4x5xi64> {
  %output_shape = "stablehlo.constant"() {value = dense<[4, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
  %result = "stablehlo.dynamic_iota"(%output_shape) {iota_dimension = 0 : i64} : (tensor<2xi64>) -> tensor<4x5xi64>
  "func.return"(%result) : (tensor<4x5xi64>) -> () }"""

BROADCAST = """func.func @main() -> tensor<2x3x2xi64> {
  %operand = "stablehlo.constant"() {value = dense<[[1, 2, 3]]> : tensor<1x3xi64>} : () -> tensor<1x3xi64>
  %output_dimensions = "stablehlo.constant"() {value = dense<[2, 3, 2]> : tensor<3xi64>} : () -> tensor<3xi64>
  %result = "stablehlo.dynamic_broadcast_in_dim"(%operand, %output_dimensions) {
    broadcast_dimensions = array<i64: 2, 1>, known_expanding_dimensions = array<i64: 0>,
    known_nonexpanding_dimensions = array<i64: 1>} : (tensor<1x3xi64>, tensor<3xi64>) -> tensor<2x3x2xi64>
  "func.return"(%result) : (tensor<2x3x2xi64>) -> () }"""

RESHAPE = """func.func @main(%operand: tensor<2x3xi64>) -> tensor<3x2xi64> {
  %output_shape = "stablehlo.constant"() {value = dense<[3, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %result = "stablehlo.dynamic_reshape"(%operand, %output_shape) : (tensor<2x3xi64>, tensor<2xi64>) -> tensor<3x2xi64>
  "func.return"(%result) : (tensor<3x2xi64>) -> () }"""

PAD = """func.func @main(%operand: tensor<2x3xi64>, %padding_value: tensor<i64>) -> tensor<5x9xi64> {
  %edge_padding_low = "stablehlo.constant"() {value = dense<[0, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %edge_padding_high = "stablehlo.constant"() {value = dense<[2, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %interior_padding = "stablehlo.constant"() {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %result = "stablehlo.dynamic_pad"(%operand, %padding_value, %edge_padding_low, %edge_padding_high, %interior_padding)
    : (tensor<2x3xi64>, tensor<i64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<5x9xi64>
  "func.return"(%result) : (tensor<5x9xi64>) -> () }"""

GATHER = """func.func @main(%operand: tensor<3x4x2xi64>, %start_indices: tensor<2x3x2xi64>) -> tensor<2x3x2x2xi64> {
  %slize_sizes = "stablehlo.constant"() {value = dense<[1, 2, 2]> : tensor<3xi64>} : () -> tensor<3xi64>
  %result = "stablehlo.dynamic_gather"(%operand, %start_indices, %slize_sizes) {
    dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0], start_index_map = [1, 0],
                                          index_vector_dim = 2>,
    indices_are_sorted = false} : (tensor<3x4x2xi64>, tensor<2x3x2xi64>, tensor<3xi64>) -> tensor<2x3x2x2xi64>
  "func.return"(%result) : (tensor<2x3x2x2xi64>) -> () }"""

CONV_ATTRS = """window_strides = array<i64: 4, 4>, lhs_dilation = array<i64: 2, 2>, rhs_dilation = array<i64: 1, 1>,
    window_reversal = array<i1: false, false>,
    dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3,
      input_spatial_dimensions = [0, 1], kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3,
      kernel_spatial_dimensions = [0, 1], output_batch_dimension = 0, output_feature_dimension = 3,
      output_spatial_dimensions = [1, 2]>,
    feature_group_count = 1 : i64, batch_group_count = 1 : i64,
    precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]"""


def _conv(padding: str = "dense<1> : tensor<2x2xi64>", attrs: str = CONV_ATTRS, out: str = "1x2x2x1",
          padding_type: str = "tensor<2x2xi64>") -> str:
    return f"""func.func @main(%lhs: tensor<1x4x4x1xi64>, %rhs: tensor<3x3x1x1xi64>) -> tensor<{out}xi64> {{
  %padding = "stablehlo.constant"() {{value = {padding}}} : () -> {padding_type}
  %result = "stablehlo.dynamic_conv"(%lhs, %rhs, %padding) {{{attrs}}}
    : (tensor<1x4x4x1xi64>, tensor<3x3x1x1xi64>, {padding_type}) -> tensor<{out}xi64>
  "func.return"(%result) : (tensor<{out}xi64>) -> () }}"""


CONV_LHS = np.array([[[[1], [2], [5], [6]], [[3], [4], [7], [8]], [[10], [11], [14], [15]], [[12], [13], [16], [17]]]])
# (The Example's input_spatial_dimensions = [0, 1] names the batch dimension 0 again — C13 forbids it; its
# lhs is laid out [b, 0, 1, f], so [1, 2] is what it means: a typo in the spec, read as [1, 2] here.)
CONV_EXAMPLE = _conv(attrs=CONV_ATTRS.replace("input_spatial_dimensions = [0, 1]", "input_spatial_dimensions = [1, 2]"))


def test_dynamic_iota_example():
    [e] = _run(IOTA)
    assert e.array().tolist() == [[0] * 5, [1] * 5, [2] * 5, [3] * 5] and e.kind == "exact"


def test_dynamic_broadcast_in_dim_example():
    [e] = _run(BROADCAST)
    assert e.array().tolist() == [[[1, 1], [2, 2], [3, 3]], [[1, 1], [2, 2], [3, 3]]]


def test_dynamic_reshape_example():
    [e] = _run(RESHAPE, np.array([[1, 2, 3], [4, 5, 6]]))
    assert e.array().tolist() == [[1, 2], [3, 4], [5, 6]]


def test_dynamic_pad_example():
    [e] = _run(PAD, np.array([[1, 2, 3], [4, 5, 6]]), np.array(0))
    assert e.array().tolist() == [[0, 1, 0, 0, 2, 0, 0, 3, 0], [0] * 9, [0, 4, 0, 0, 5, 0, 0, 6, 0], [0] * 9, [0] * 9]


def test_dynamic_gather_example():
    operand = np.arange(1, 25).reshape(3, 4, 2)
    starts = np.array([[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 2]]])
    [e] = _run(GATHER, operand, starts)
    assert e.array().tolist() == [[[[1, 2], [3, 4]], [[3, 4], [5, 6]], [[13, 14], [15, 16]]],
                                  [[[9, 10], [11, 12]], [[11, 12], [13, 14]], [[17, 18], [19, 20]]]]


def test_dynamic_conv_example():
    [e] = _run(CONV_EXAMPLE, CONV_LHS, np.ones((3, 3, 1, 1), np.int64))
    assert e.array().tolist() == [[[[1], [5]], [[10], [14]]]]


def test_dynamic_conv_example_as_printed_breaks_c13():
    """The Example's own text names dimension 0 twice among the input
    dimensions (batch and spatial): dynamic_conv's C13 refuses it, as
    jaxlib's verifier does for XLA and the interpreter
    (`test_xla_and_the_interpreter_on_the_dynamic_ops`); the other tests
    read it as [1, 2]."""
    assert _rejected(_conv()) == "dynamic_conv_c13"


# ---------------------------------------------------------------- shape operands: read time and run time
def test_a_constant_shape_operand_is_verified_statically():
    """spec.md "Dynamism": "If the shape operand is constant, this can be
    verified statically" — a constant that disagrees with the result, a
    negative interior padding, a slice size above 1 on a collapsed dim:
    each rejected naming its rule (XLA and the interpreter refuse the
    first: "output shape [3, 5] is incompatible with return type")."""
    assert _rejected(IOTA.replace("dense<[4, 5]>", "dense<[3, 5]>")) == "dynamic_iota_dynamism"
    assert _rejected(RESHAPE.replace("dense<[3, 2]>", "dense<[2, 3]>")) == "dynamic_reshape_dynamism"
    assert _rejected(BROADCAST.replace("dense<[2, 3, 2]>", "dense<[2, 3, 3]>")) == "dynamic_broadcast_in_dim_dynamism"
    # interior [-1, 2] on a 2x3: dim 0 is 2 + 1·(-1) + 0 + 2 = 3, so only C3 is broken
    assert _rejected(PAD.replace("dense<[1, 2]>", "dense<[-1, 2]>").replace("tensor<5x9xi64>", "tensor<3x9xi64>")) \
        == "dynamic_pad_c3"
    assert _rejected(PAD.replace("dense<[2, 1]> : tensor<2xi64>", "dense<[3, 1]> : tensor<2xi64>")) == "dynamic_pad_c4"
    assert _rejected(GATHER.replace("dense<[1, 2, 2]>", "dense<[2, 2, 2]>")) == "dynamic_gather_c8"
    assert _rejected(GATHER.replace("dense<[1, 2, 2]>", "dense<[1, 2, 3]>")) == "dynamic_gather_c12"
    # padding 5 on each side of dim 1: (2·4 - 1 + 10 - 3) / 4 + 1 = 4 windows where the result has 2
    assert _rejected(CONV_EXAMPLE.replace("dense<1> : tensor<2x2xi64>", "dense<[[5, 5], [1, 1]]> : tensor<2x2xi64>")) \
        == "dynamic_conv_c25"


ARG_IOTA = """func.func @main(%s: tensor<2xi32>) -> tensor<4x5xf32> {
  %r = "stablehlo.dynamic_iota"(%s) {iota_dimension = 1 : i64} : (tensor<2xi32>) -> tensor<4x5xf32>
  "func.return"(%r) : (tensor<4x5xf32>) -> () }"""


def test_a_shape_known_only_at_run_time_that_disagrees_is_undefined():
    """The same rule deferred to run time: "mismatches will result in
    undefined behavior" — every element any value, labelled with the rule;
    the matching shape gives iota's values (hand: column index)."""
    program = parse_program(ARG_IOTA)
    [ok] = execute(program, [np.array([4, 5], np.int32)])
    assert ok.array().tolist() == [[0, 1, 2, 3, 4]] * 4 and not ok.impl_defined
    [bad] = execute(program, [np.array([3, 5], np.int32)])
    assert bad.impl_defined == list(range(20))
    [wild] = [a for a in bad.alternatives if a.bits is None]
    assert wild.elements == list(range(20)) and "dynamic_iota_dynamism" in wild.label


def test_a_padding_known_only_at_run_time_that_disagrees_is_undefined():
    """dynamic_conv's C25 deferred: padding [[5, 5], [1, 1]] makes 4 windows
    along dim 1 where the result has 2 — undefined, every element; [[1, 1],
    [1, 1]] gives the Example's values."""
    text = CONV_EXAMPLE.replace('%padding = "stablehlo.constant"() {value = dense<1> : tensor<2x2xi64>} : () -> '
                                'tensor<2x2xi64>\n', "").replace(
        "%rhs: tensor<3x3x1x1xi64>)", "%rhs: tensor<3x3x1x1xi64>, %padding: tensor<2x2xi64>)")
    program = parse_program(text)
    rhs = np.ones((3, 3, 1, 1), np.int64)
    [ok] = execute(program, [CONV_LHS, rhs, np.array([[1, 1], [1, 1]])])
    assert ok.array().tolist() == [[[[1], [5]], [[10], [14]]]]
    [bad] = execute(program, [CONV_LHS, rhs, np.array([[5, 5], [1, 1]])])
    assert any(a.bits is None and a.elements == [0, 1, 2, 3] and "dynamic_conv_c25" in a.label
               for a in bad.alternatives)


# ---------------------------------------------------------------- constraints on instances
def _t(shape, et="f32") -> TensorType:
    return TensorType(tuple(shape), parse_quantized_type(et) if et.startswith("!quant") else element_type(et))


def _broadcast(operand, result, bd, expanding=(), kept=(), known=None):
    spec = ADDED["dynamic_broadcast_in_dim"]
    inst = spec.instance({"operand": operand, "output_dimensions": _t((len(result.shape),), "si64")},
                         {"broadcast_dimensions": bd, "known_expanding_dimensions": expanding,
                          "known_nonexpanding_dimensions": kept}, {"result": result})
    inst.known_values = {} if known is None else {"output_dimensions": np.array(known)}
    return spec.violated(inst)


def test_dynamic_broadcast_in_dim_constraints_each_alone():
    assert _broadcast(_t((1, 3)), _t((2, 3, 2)), (2, 1), (0,), (1,)) == []
    assert _broadcast(_t((1, 3)), _t((2, 3, 2), "f64"), (2, 1)) == ["dynamic_broadcast_in_dim_c1"]
    assert _broadcast(_t((1, 3)), _t((2, 3, 2)), (2, 1), (0,), (0,)) == ["dynamic_broadcast_in_dim_c8"]
    assert _broadcast(_t((1, 3)), _t((2, 3, 2)), (2, 1), (2,)) == ["dynamic_broadcast_in_dim_c9"]
    assert _broadcast(_t((1, 3)), _t((2, 3, 2)), (2, 1), (), (-1,)) == ["dynamic_broadcast_in_dim_c10"]
    assert _broadcast(_t((1, 3)), _t((2, 4, 2)), (2, 1)) == ["dynamic_broadcast_in_dim_c5"]
    assert _broadcast(_t((1, 3)), _t((2, 3, 2)), (2, 1), known=[2, 3, 2]) == []
    assert _broadcast(_t((1, 3)), _t((2, 3, 2)), (2, 1), known=[2, 3, 1]) == ["dynamic_broadcast_in_dim_dynamism"]


def test_dynamic_broadcast_in_dim_per_axis_clauses():
    """C1 and C6 on per-axis quantized tensors (v1.20 admits them; the
    table here does not yet, so they are read on instances): the
    quantization dimension follows broadcast_dimensions, and a size-1
    quantized dimension repeats its one scale."""
    q = "!quant.uniform<i8:f32:0, {0.5:1}>"                       # one scale: dimension 0 of size 1
    ok = "!quant.uniform<i8:f32:1, {0.5:1,0.5:1,0.5:1}>"          # broadcast to dimension 1, size 3, repeated
    moved = "!quant.uniform<i8:f32:0, {0.5:1,0.5:1}>"             # on dimension 0: not broadcast_dimensions[0]
    other = "!quant.uniform<i8:f32:1, {0.5:1,0.25:1,0.5:1}>"      # a scale that is not the operand's
    assert _broadcast(_t((1, 4), q), _t((2, 3, 4), ok), (1, 2)) == []
    assert _broadcast(_t((1, 4), q), _t((2, 3, 4), moved), (1, 2)) == ["dynamic_broadcast_in_dim_c6"]
    assert _broadcast(_t((1, 4), q), _t((2, 3, 4), other), (1, 2)) == ["dynamic_broadcast_in_dim_c6"]
    assert _broadcast(_t((1, 4), q), _t((2, 3, 4), "!quant.uniform<i16:f32:1, {0.5:1,0.5:1,0.5:1}>"), (1, 2)) \
        == ["dynamic_broadcast_in_dim_c1"]


def _reshape(operand, result, known=None):
    spec = ADDED["dynamic_reshape"]
    inst = spec.instance({"operand": operand, "output_shape": _t((len(result.shape),), "si32")}, {},
                         {"result": result})
    inst.known_values = {} if known is None else {"output_shape": np.array(known)}
    return spec.violated(inst)


def test_dynamic_reshape_constraints_each_alone():
    assert _reshape(_t((2, 3)), _t((3, 2))) == []
    assert _reshape(_t((2, 3)), _t((3, 2), "bf16")) == ["dynamic_reshape_c1"]
    assert _reshape(_t((2, 3)), _t((4, 2))) == ["dynamic_reshape_c2"]
    spec = ADDED["dynamic_reshape"]
    inst = spec.instance({"operand": _t((2, 3)), "output_shape": _t((3,), "si32")}, {}, {"result": _t((3, 2))})
    assert spec.violated(inst) == ["dynamic_reshape_c4"]
    assert _reshape(_t((2, 3)), _t((3, 2)), known=[2, 3]) == ["dynamic_reshape_dynamism"]
    # per-axis (C1, C3): 2x3x4 with quantized dimension 1 (size 3) → 6x4 with it on dimension 0? products differ
    q3 = "!quant.uniform<i8:f32:{}, {{0.5:1,0.25:2,0.125:3}}>"
    assert _reshape(_t((2, 3, 4), q3.format(1)), _t((2, 3, 2, 2), q3.format(1))) == []
    assert _reshape(_t((2, 3, 4), q3.format(1)), _t((3, 2, 4), q3.format(0))) == ["dynamic_reshape_c3"]
    assert _reshape(_t((2, 3, 4), q3.format(1)), _t((1, 2, 3, 4), q3.format(2))) == []   # the dimension may move


def test_dynamic_iota_and_pad_constraints():
    iota = ADDED["dynamic_iota"]
    inst = iota.instance({"output_shape": _t((2,), "ui8")}, {"iota_dimension": 2}, {"result": _t((4, 5))})
    assert iota.violated(inst) == ["dynamic_iota_c1"]
    inst = iota.instance({"output_shape": _t((3,), "ui8")}, {"iota_dimension": 0}, {"result": _t((4, 5))})
    assert iota.violated(inst) == ["dynamic_iota_c2"]
    pad = ADDED["dynamic_pad"]
    pads = {n: _t((2,), "si64") for n in ("edge_padding_low", "edge_padding_high", "interior_padding")}
    inst = pad.instance({"operand": _t((2, 3)), "padding_value": _t(()), **pads}, {}, {"result": _t((5, 9, 1))})
    assert pad.violated(inst) == ["dynamic_pad_c4"]   # on types: the operand's rank
    inst = pad.instance({"operand": _t((2, 3)), "padding_value": _t((), "f16"), **pads}, {}, {"result": _t((5, 9))})
    assert pad.violated(inst) == ["dynamic_pad_c1"]
    inst = pad.instance({"operand": _t((2, 3)), "padding_value": _t(()), **pads,
                         "interior_padding": _t((3,), "si64")}, {}, {"result": _t((5, 9))})
    assert pad.violated(inst) == ["dynamic_pad_c2"]


def test_type_inference_reads_known_values():
    """Where the shape operands are constants the result type is inferred
    (hand: the pad Example's 5x9; the gather Example's 2x3x2x2; conv's 1x2x2x1)."""
    for text, want in ((PAD, "tensor<5x9xi64>"), (GATHER, "tensor<2x3x2x2xi64>"),
                       (CONV_EXAMPLE, "tensor<1x2x2x1xi64>")):
        program = parse_program(text)
        [step] = [s for s in program.steps if s.inst.spec.mnemonic.startswith("dynamic_")]
        assert step.inst.spec.infer(step.inst)["result"].mlir == want


# ---------------------------------------------------------------- real programs (jax.export, symbolic shapes)
def _calls(op, out: list) -> list:
    for region in op.regions:
        for block in region.blocks:
            for o in block.operations:
                o = o.operation
                if o.name == "func.call":
                    out.append(o)
                _calls(o, out)
    return out


def _one_callee_per_site(module) -> None:
    """A copy of each function called from more than one site, one per site:
    stablehlo-refine-shapes refines a function once ("incompatible
    refinement keys" for jax's `_where` and `divmod` in a "SAME" padding)."""
    from jaxlib.mlir import ir
    n = 0
    while True:
        funcs = {ir.StringAttr(o.operation.attributes["sym_name"]).value: o.operation for o in module.body.operations}
        sites: dict = {}
        for c in _calls(module.operation, []):
            sites.setdefault(ir.FlatSymbolRefAttr(c.attributes["callee"]).value, []).append(c)
        multi = [(name, cs) for name, cs in sites.items() if len(cs) > 1]
        if not multi:
            return
        name, cs = multi[0]
        for c in cs[1:]:
            n += 1
            clone = funcs[name].clone()
            clone.attributes["sym_name"] = ir.StringAttr.get(f"{name}__{n}")
            module.body.append(clone)
            c.attributes["callee"] = ir.FlatSymbolRefAttr.get(f"{name}__{n}")


def refined_keeping_dynamic_ops(text: str, inputs: list) -> str:
    """The exported program with @main's shapes set to the inputs' and
    propagated (stablehlo-refine-arguments, -refine-shapes), its shape
    assertions checked and erased — but not canonicalized: its dynamic ops
    stay, their shape operands now constants.  (`run` refines further:
    stablehlo-canonicalize-dynamism makes them static ops,
    `test_full_refinement_leaves_static_ops`.)"""
    import jaxlib.mlir._mlir_libs._stablehlo as stablehlo
    from jaxlib.mlir import ir, passmanager

    from shlo_conform.oracle.reading import registered_context
    stablehlo.register_stablehlo_passes()
    from shlo_conform.suites.records import tensor_type_of
    types = ",".join(tensor_type_of(a).mlir for a in inputs)
    with registered_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        _one_callee_per_site(module)
        passmanager.PassManager.parse(f"builtin.module(stablehlo-refine-arguments{{types={types}}},"
                                      "stablehlo-refine-shapes,func.func(stablehlo-check-shape-assertions))"
                                      ).run(module.operation)
        return module.operation.get_asm(enable_debug_info=False)


def _same_conv(x, w, stride):
    """NumPy: a 1-D "SAME" convolution as jax lays it out, [b, f, 0] x [o, i, 0] -> [b, f, 0]
    (TF's padding rule: total max((ceil(n/s) - 1)·s + k - n, 0), the smaller half low), in float64."""
    n, k = x.shape[2], w.shape[2]
    out = -(-n // stride)
    total = max((out - 1) * stride + k - n, 0)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (total // 2, total - total // 2)))
    res = np.zeros((x.shape[0], w.shape[0], out))
    for j in range(out):
        window = xp[:, :, j * stride:j * stride + k]                  # [b, i, k]
        res[:, :, j] = np.einsum("bik,oik->bo", window, w.astype(np.float64))
    return res


def _lax_pad(x, value, config):
    """NumPy: lax.pad with (low, high, interior) per dimension (no negative edges here)."""
    shape = [lo + hi + d + max(d - 1, 0) * i for d, (lo, hi, i) in zip(x.shape, config)]
    out = np.full(shape, value, x.dtype)
    out[tuple(slice(lo, lo + (d - 1) * (i + 1) + 1, i + 1) for d, (lo, hi, i) in zip(x.shape, config))] = x
    return out


b, = export.symbolic_shape("b")
REAL = {   # op: (function, argument specs, inputs (small integers, exact in f32), NumPy's result)
    "dynamic_iota": (lambda x: x * jnp.arange(x.shape[0], dtype=F32)[:, None], [((b, 3), F32)],
                     lambda x: x * np.arange(x.shape[0], dtype=np.float32)[:, None]),
    "dynamic_broadcast_in_dim": (lambda x: x + jnp.full((x.shape[0], 1), 2, F32), [((b, 3), F32)], lambda x: x + 2),
    "dynamic_reshape": (lambda x: x.reshape(-1) * 3, [((b, 3), F32)], lambda x: x.reshape(-1) * 3),
    "dynamic_pad": (lambda x: jax.lax.pad(x, F32(-1), [(1, x.shape[0], 1), (0, 1, 0)]), [((b, 3), F32)],
                    lambda x: _lax_pad(x, -1, [(1, x.shape[0], 1), (0, 1, 0)])),
    "dynamic_gather": (lambda x, i: x[i], [((5, b), F32), ((2,), jnp.int32)], lambda x, i: x[i]),
    "dynamic_conv": (lambda x, w: jax.lax.conv_general_dilated(x, w, (2,), "SAME"),
                     [((1, 2, b), F32), ((3, 2, 3), F32)], lambda x, w: _same_conv(x, w, 2)),
}
SHAPES = {"dynamic_gather": [(5, 4), (2,)], "dynamic_conv": [(1, 2, 7), (3, 2, 3)]}


def _real(op: str):
    f, specs, numpy_fn = REAL[op]
    exp = export.export(jax.jit(f))(*[jax.ShapeDtypeStruct(s, d) for s, d in specs])
    rng = np.random.default_rng(sum(map(ord, op)))
    shapes = SHAPES.get(op, [(4, 3)])
    inputs = [rng.integers(-4, 5, s).astype(np.float32) if d == F32 else rng.integers(0, 5, s).astype(np.int32)
              for s, (_, d) in zip(shapes, specs)]
    return exp, inputs, numpy_fn(*inputs)


@pytest.mark.parametrize("op", sorted(REAL))
def test_a_real_program_with_the_op_agrees_with_xla_and_numpy(op):
    """jax.export's program with a symbolic dimension, refined to static
    types with its dynamic op kept (shape operands now constants): the
    oracle's expectation holds XLA's own run of the exported program and
    NumPy's result (small integers: every value exact in f32)."""
    exp, inputs, want = _real(op)
    text = refined_keeping_dynamic_ops(exp.mlir_module(), inputs)
    assert f"stablehlo.{op}" in text   # the test exercises what it says
    assert "?" not in re.sub(r'"[^"]*"', "", text)
    [e] = _run(text, *inputs)
    xla = np.asarray(exp.call(*inputs))
    assert compare(e, xla).ok, compare(e, xla).detail
    assert np.array_equal(e.array(), np.asarray(want, dtype=np.float32))


def test_full_refinement_leaves_static_ops(tmp_path):
    """What `run` judges of such a program: refine.py's whole refinement
    (jaxlib's refine_polymorphic_shapes: stablehlo-canonicalize-dynamism)
    turns every dynamic op with constant shape operands into its static op,
    and the oracle's values on it are the same as on the program that
    kept them."""
    from shlo_conform.refine import refined
    for op in ("dynamic_pad", "dynamic_gather", "dynamic_conv"):
        exp, inputs, _ = _real(op)
        np.savez(tmp_path / f"{op}.npz", *inputs)
        static = refined(exp.mlir_module().encode(), str(tmp_path / f"{op}.npz"), None).text
        plain_op = {"dynamic_pad": "pad", "dynamic_gather": "gather", "dynamic_conv": "convolution"}[op]
        assert "stablehlo.dynamic_" not in static and f"stablehlo.{plain_op}" in static
        [kept] = _run(refined_keeping_dynamic_ops(exp.mlir_module(), inputs), *inputs)
        [plain] = _run(static, *inputs)
        assert np.array_equal(kept.array(), plain.array())


# ---------------------------------------------------------------- backends
def test_xla_and_the_interpreter_on_the_dynamic_ops():
    """Which backends run the refined programs that keep their dynamic ops:
    the reference interpreter runs all six, agreeing with the oracle; XLA
    (jaxlib 0.10.2) runs five and refuses dynamic_conv even with a
    constant padding ("'stablehlo.dynamic_conv' op can't be translated to
    XLA HLO") — jax.export's own call refines it away first."""
    from shlo_conform.backends.base import Rejected, compile_and_run, load_backend
    backends = {name: load_backend(name) for name in ("xla", "interpreter")}
    for backend in backends.values():   # the Example as printed (test_dynamic_conv_example_as_printed_breaks_c13)
        with pytest.raises(Rejected, match="expects input dimension-numbers to be unique"):
            compile_and_run(backend, _conv(), [CONV_LHS, np.ones((3, 3, 1, 1), np.int64)])
    for op in sorted(REAL):
        exp, inputs, _ = _real(op)
        text = refined_keeping_dynamic_ops(exp.mlir_module(), inputs)
        [e] = _run(text, *inputs)
        for name, backend in backends.items():
            if name == "xla" and op == "dynamic_conv":
                with pytest.raises(Rejected, match="dynamic_conv' op can't be translated to XLA HLO"):
                    compile_and_run(backend, text, inputs)
                continue
            [out], _ = compile_and_run(backend, text, inputs)
            assert compare(e, out).ok, (op, name)


@pytest.mark.long   # `run` starts the oracle and both backends in job processes (~5 s of CPU): make test-long
def test_run_judges_a_program_that_keeps_its_dynamic_ops(tmp_path, capsys):
    """`run` on a static program holding dynamic_pad, dynamic_iota,
    dynamic_reshape and dynamic_broadcast_in_dim with constant shape
    operands (jax.export's, refined but not canonicalized) and a sine, so
    ranges flow through them: XLA and the interpreter both agree, exit 0."""
    from shlo_conform.cli import main
    from tests.run_report import verdicts
    f = lambda x: (jnp.sin(jax.lax.pad(x, F32(-1), [(1, x.shape[0], 1), (0, 1, 0)])).reshape(-1)   # noqa: E731
                   + jnp.arange(x.shape[0] * 12, dtype=F32))
    exp = export.export(jax.jit(f))(jax.ShapeDtypeStruct((b, 3), F32))
    x = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    text = refined_keeping_dynamic_ops(exp.mlir_module(), [x])
    for op in ("dynamic_pad", "dynamic_iota", "dynamic_reshape", "dynamic_broadcast_in_dim"):
        assert f"stablehlo.{op}" in text
    (tmp_path / "p.mlir").write_text(text)
    np.savez(tmp_path / "x.npz", x)
    rc = main(["run", str(tmp_path / "p.mlir"), "--backend=xla,interpreter,oracle",
               "--inputs", str(tmp_path / "x.npz")])
    out = capsys.readouterr().out
    assert rc == 0 and verdicts(out) == {"xla": ["agrees"], "interpreter": ["agrees"]}, out


SINE_CONV = """func.func @main(%x: tensor<1x4x4x1xf32>, %rhs: tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32> {
  %lhs = "stablehlo.sine"(%x) : (tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32>
  OP
  "func.return"(%result) : (tensor<1x2x2x1xf32>) -> () }"""
STATIC_ATTRS = CONV_ATTRS.replace("input_spatial_dimensions = [0, 1]", "input_spatial_dimensions = [1, 2]")


def test_a_ranged_operand_reaches_dynamic_conv_as_it_reaches_convolution():
    """Functionally identical: a sine's range into dynamic_conv (constant
    padding [[1, 1], [1, 1]]) gives the same statement — primary, kind,
    every element's bounds — as into convolution with that padding
    attribute; both carry it through convolution's bilinear form (a corner
    moves a whole operand to one end, where a sum of products with
    mixed-sign weights has no extreme: the bounds would differ)."""
    dynamic = SINE_CONV.replace("OP", '%padding = "stablehlo.constant"() {value = dense<1> : tensor<2x2xi64>} : () -> '
                                      'tensor<2x2xi64>\n  %result = "stablehlo.dynamic_conv"(%lhs, %rhs, %padding) {'
                                      + STATIC_ATTRS + "} : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>, "
                                      "tensor<2x2xi64>) -> tensor<1x2x2x1xf32>")
    static = SINE_CONV.replace("OP", '%result = "stablehlo.convolution"(%lhs, %rhs) {padding = dense<1> : '
                                     "tensor<2x2xi64>, " + STATIC_ATTRS + "} : (tensor<1x4x4x1xf32>, "
                                     "tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32>")
    rng = np.random.default_rng(7)
    x = rng.uniform(-3, 3, (1, 4, 4, 1)).astype(np.float32)
    rhs = rng.choice([-1.0, 0.5, 2.0], (3, 3, 1, 1)).astype(np.float32)   # mixed signs
    [d], [s] = _run(dynamic, x, rhs), _run(static, x, rhs)
    assert d.kind == s.kind == "bounded"
    assert np.array_equal(d.bits, s.bits) and np.array_equal(d.lo, s.lo) and np.array_equal(d.hi, s.hi)
