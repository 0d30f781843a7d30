"""The oracle backend end to end: checking programs against the encoded
spec, executing them, and the expectations it hands to generators.

Truth is hand computation, numpy/ml_dtypes, or the seed's own text.
"""
import math

import ml_dtypes
import numpy as np
import pytest

import shlo_conform
from shlo_conform.backends.base import Rejected, Unsupported
from shlo_conform.backends.oracle import OracleBackend
from shlo_conform.generators.expect import expected_outputs as expectations
from shlo_conform.oracle.program import ProgramRejected, execute, parse_program
from shlo_conform.spec import dsl
from shlo_conform.spec.types import SI32, TensorType
from shlo_conform.suites.compare import compare as judge


def alt_hex(exp, label: str):
    """The hex a suite stores for one alternative of an expectation (None: "any value")."""
    return next(a["hex"] for a in exp.to_json()["alternatives"] if a["label"] == label)


def prog(op: str, in_types: list, out_type: str, attrs: str = "") -> str:
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(in_types))
    uses = ", ".join(f"%a{i}" for i in range(len(in_types)))
    return (f"func.func @main({args}) -> {out_type} {{\n"
            f"  %0 = \"stablehlo.{op}\"({uses}) {attrs} : ({', '.join(in_types)}) -> {out_type}\n"
            f"  func.return %0 : {out_type}\n}}\n")


def run(text, *inputs):
    b = OracleBackend()
    return b.run(b.compile(text), list(inputs))


# --- rejection: the encoded spec judges, not the official verifier ----------

def test_constraint_violation_names_the_constraint():
    with pytest.raises(Rejected, match="add_c1"):
        OracleBackend().compile(prog("add", ["tensor<2xf32>", "tensor<2xf32>"], "tensor<3xf32>"))


def test_unknown_op_and_bad_element_type_and_syntax():
    with pytest.raises(Rejected, match="not in the encoded spec"):
        OracleBackend().compile(prog("frobnicate", ["tensor<2xf32>"], "tensor<2xf32>"))
    with pytest.raises(Rejected, match="element type"):
        OracleBackend().compile(prog("sine", ["tensor<2xi32>"], "tensor<2xi32>"))
    with pytest.raises(Rejected, match="parse error"):
        OracleBackend().compile("func.func @main(%a: tensor<2xf32> {")


@pytest.mark.parametrize("wrap", ["{}", "tuple<{}>", "tuple<tensor<2xf32>, tuple<{}>>"])
def test_a_broken_quantized_type_is_refused_inside_a_tuple_too(wrap):
    """Three scales' worth of per-axis parameters on a dimension of 3 given
    2 (quantized_c13) — as a custom_call's result type, alone or as a
    member of a (nested) tuple that no other value of the program has:
    refused, naming the rule, wherever the type sits."""
    q = "tensor<3x!quant.uniform<i8:f32:0, {0.5, 0.25}>>"
    text = ("func.func @main() -> tensor<2xf32> {\n"
            f"  %0 = stablehlo.custom_call @foo() : () -> {wrap.format(q)}\n"
            "  %1 = stablehlo.constant dense<1.0> : tensor<2xf32>\n"
            "  return %1 : tensor<2xf32>\n}\n")
    with pytest.raises(ProgramRejected) as e:
        parse_program(text)
    assert e.value.constraint == "quantized_c13"


def test_attribute_parsed_from_generic_form():
    """compare with an enum attribute: [1, 3] < [2, 2] = [true, false]."""
    attrs = "{comparison_direction = #stablehlo<comparison_direction LT>}"
    (got,) = run(prog("compare", ["tensor<2xi32>", "tensor<2xi32>"], "tensor<2xi1>", attrs),
                 np.array([1, 3], np.int32), np.array([2, 2], np.int32))
    assert got.tolist() == [True, False]


def test_missing_attribute_is_rejected():
    with pytest.raises(Rejected, match="comparison_direction"):
        OracleBackend().compile(prog("compare", ["tensor<2xi32>", "tensor<2xi32>"], "tensor<2xi1>"))


# --- values -----------------------------------------------------------------

def test_f32_add_matches_numpy_and_judge_accepts_it():
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal(64).astype(np.float32) * 1e3 for _ in range(2))
    text = prog("add", ["tensor<64xf32>"] * 2, "tensor<64xf32>")
    (exp,) = expectations(text, [a, b])
    assert exp.kind == "exact" and judge(exp, a + b).ok
    wrong = (a + b).copy()
    wrong[3] = np.nextafter(wrong[3], np.float32(np.inf))
    assert not judge(exp, wrong).ok


def test_signed_zeros_are_distinct_inputs():
    """Elements are evaluated once per distinct bit pattern: -0 and +0 must not share."""
    (got,) = run(prog("negate", ["tensor<4xf32>"], "tensor<4xf32>"), np.array([0.0, -0.0, 0.0, -0.0], np.float32))
    assert [math.copysign(1, v) for v in got.tolist()] == [-1, 1, -1, 1]


def test_integer_overflow_is_implementation_defined_wrap():
    """si8: 100 + 100 = 200 is out of range; the seed's Errors section makes
    it implementation-defined; the one alternative recorded is the wrap, -56."""
    text = prog("add", ["tensor<2xi8>"] * 2, "tensor<2xi8>")
    a, b = np.array([100, 1], np.int8), np.array([100, 2], np.int8)
    (exp,) = expectations(text, [a, b])
    assert exp.array().tolist() == [-56, 3]
    assert exp.impl_defined == [0]
    assert [alt.label for alt in exp.alternatives] == ["two's complement wrap"]
    assert "implementation-defined" in exp.why


def test_complex_maximum_with_nan_lists_the_alternatives():
    """maximum of complex with a NaN component: the op declares lhs, rhs or NaN."""
    text = prog("maximum", ["tensor<1xcomplex<f32>>"] * 2, "tensor<1xcomplex<f32>>")
    (exp,) = expectations(text, [np.array([complex(math.nan, 1)], np.complex64), np.array([2 + 3j], np.complex64)])
    assert exp.impl_defined == [0]
    labels = [a.label for a in exp.alternatives]
    assert labels == ["lhs", "rhs", "NaN"]
    assert judge(exp, np.array([2 + 3j], np.complex64)).ok
    assert not judge(exp, np.array([5 + 3j], np.complex64)).ok
    assert alt_hex(exp, "rhs") == np.array([2 + 3j], np.complex64).view(np.uint32).astype("<u4").tobytes().hex()


def test_approx_op_gets_ulp_tolerance_and_correct_rounding():
    """sin(1) in f32 is 0.84147096 (0x3F576AA4: sin 1 = 0.8414709848…, nearest f32)."""
    (exp,) = expectations(prog("sine", ["tensor<1xf32>"], "tensor<1xf32>"), [np.array([1.0], np.float32)])
    assert exp.kind == "ulp" and exp.tolerance_ulp == 4
    assert exp.array().view(np.uint32).tolist() == [0x3F576AA4]


def test_data_movement_is_bit_exact():
    """bitcast_convert 1.0f → i8 x4 = [0, 0, -128, 63] (the seed's own example)."""
    text = ('func.func @main(%a: tensor<f32>) -> tensor<4xi8> {\n'
            '  %0 = "stablehlo.bitcast_convert"(%a) : (tensor<f32>) -> tensor<4xi8>\n'
            '  func.return %0 : tensor<4xi8>\n}\n')
    (exp,) = expectations(text, [np.array(1.0, np.float32)])
    assert exp.bit_exact and exp.array().tolist() == [0, 0, -128, 63]


def test_rank0_operand_broadcasts():
    """clamp with scalar bounds: clamp(0, [-3, 5, 12], 10) = [0, 5, 10]."""
    text = ('func.func @main(%lo: tensor<i32>, %x: tensor<3xi32>, %hi: tensor<i32>) -> tensor<3xi32> {\n'
            '  %0 = "stablehlo.clamp"(%lo, %x, %hi) : (tensor<i32>, tensor<3xi32>, tensor<i32>) -> tensor<3xi32>\n'
            '  func.return %0 : tensor<3xi32>\n}\n')
    (got,) = run(text, np.array(0, np.int32), np.array([-3, 5, 12], np.int32), np.array(10, np.int32))
    assert got.tolist() == [0, 5, 10]


def test_convert_to_f8_matches_ml_dtypes_in_range():
    x = np.linspace(-440, 440, 997).astype(np.float32)
    (got,) = run(prog("convert", ["tensor<997xf32>"], "tensor<997xf8E4M3FN>"), x)
    assert (got.view(np.uint8) == x.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)).all()


def test_spec_without_alternatives_is_unsupported():
    """complex remainder is TBD in the seed: no result can be expected."""
    with pytest.raises(Unsupported, match="TBD"):
        run(prog("remainder", ["tensor<1xcomplex<f32>>"] * 2, "tensor<1xcomplex<f32>>"),
            np.array([1 + 1j], np.complex64), np.array([1 + 1j], np.complex64))


def test_two_op_program():
    """(a + b) * a on i32: ([1, 2] + [3, 4]) * [1, 2] = [4, 12]."""
    text = ('func.func @main(%a: tensor<2xi32>, %b: tensor<2xi32>) -> tensor<2xi32> {\n'
            '  %0 = "stablehlo.add"(%a, %b) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>\n'
            '  %1 = "stablehlo.multiply"(%0, %a) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>\n'
            '  func.return %1 : tensor<2xi32>\n}\n')
    (got,) = run(text, np.array([1, 2], np.int32), np.array([3, 4], np.int32))
    assert got.tolist() == [4, 12]


# --- constant, tuple, get_tuple_element ---------------------------------------

def main(args: str, ret: str, body: str) -> str:
    return f"func.func @main({args}) -> {ret} {{\n{body}}}\n"


def test_constant_is_bit_exact_and_its_expectation_too():
    """The value is an attribute, read bit for bit: NaN payload, -0, subnormal."""
    text = main("", "tensor<3xf32>",
                '  %0 = "stablehlo.constant"() {value = dense<"0x0100C07F0000008001000000"> : tensor<3xf32>}'
                ' : () -> tensor<3xf32>\n  func.return %0 : tensor<3xf32>\n')
    (got,) = shlo_conform.run_program(text, [])
    assert got.view(np.uint32).tolist() == [0x7FC00001, 0x80000000, 0x00000001]
    (exp,) = expectations(text, [])
    assert exp.bit_exact and exp.to_json()["hex"] == "0100c07f0000008001000000"
    assert not judge(exp, np.array([np.nan, -0.0, 1e-45], np.float32)).ok   # canonical NaN is another payload


def test_constant_decimal_and_complex_values():
    """The seed's example literal, and a complex constant (whose attribute the
    Python bindings cannot even hand out: the oracle reads the printed op)."""
    text = main("", "(tensor<2x2xf32>, tensor<2xcomplex<f64>>)",
                '  %0 = "stablehlo.constant"() {value = dense<[[0.0, 1.0], [2.0, 3.0]]> : tensor<2x2xf32>}'
                ' : () -> tensor<2x2xf32>\n'
                '  %1 = "stablehlo.constant"() {value = dense<[(1.5, -2.0), (0.0, 0x7FF0000000000001)]>'
                ' : tensor<2xcomplex<f64>>} : () -> tensor<2xcomplex<f64>>\n'
                '  func.return %0, %1 : tensor<2x2xf32>, tensor<2xcomplex<f64>>\n')
    a, c = shlo_conform.run_program(text, [])
    assert a.tolist() == [[0.0, 1.0], [2.0, 3.0]]
    assert c.view(np.uint64).tolist() == [0x3FF8000000000000, 0xC000000000000000, 0, 0x7FF0000000000001]


@pytest.mark.parametrize("body, match", [
    ('%0 = "stablehlo.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<3xf32>', "constant_c1"),
    ('%0 = "stablehlo.constant"() : () -> tensor<3xf32>', "missing attribute value"),
    # an unknown name among the op's properties; in the discardable `{…}` it would be set aside, as MLIR's
    # verifier lets any attribute ride there (tests/spec/test_quantized_ops.py: torch-xla's on transpose)
    ('%0 = "stablehlo.constant"() <{value = dense<1.0> : tensor<3xf32>, extra = 1 : i32}> : () -> tensor<3xf32>',
     "unknown attribute"),
])
def test_constant_rejections(body, match):
    with pytest.raises(Rejected, match=match):
        OracleBackend().compile(main("", "tensor<3xf32>", f"  {body}\n  func.return %0 : tensor<3xf32>\n"))


NESTED = "tuple<tensor<2xf32>, tuple<tensor<i32>>>"


def tuple_prelude() -> str:
    return ('  %t1 = "stablehlo.tuple"(%b) : (tensor<i32>) -> tuple<tensor<i32>>\n'
            f'  %t = "stablehlo.tuple"(%a, %t1) : (tensor<2xf32>, tuple<tensor<i32>>) -> {NESTED}\n')


def test_tuple_and_get_tuple_element_chain():
    """t = (a, (b)); t[1][0] is b and t[0] is a."""
    text = main("%a: tensor<2xf32>, %b: tensor<i32>", "(tensor<i32>, tensor<2xf32>)", tuple_prelude() +
                f'  %u = "stablehlo.get_tuple_element"(%t) {{index = 1 : i32}} : ({NESTED}) -> tuple<tensor<i32>>\n'
                '  %v = "stablehlo.get_tuple_element"(%u) {index = 0 : i32} : (tuple<tensor<i32>>) -> tensor<i32>\n'
                f'  %w = "stablehlo.get_tuple_element"(%t) {{index = 0 : i32}} : ({NESTED}) -> tensor<2xf32>\n'
                '  func.return %v, %w : tensor<i32>, tensor<2xf32>\n')
    v, w = shlo_conform.run_program(text, [np.array([1.0, -0.0], np.float32), np.array(3, np.int32)])
    assert v.tolist() == 3 and w.view(np.uint32).tolist() == [0x3F800000, 0x80000000]


def test_main_returning_a_tuple_outputs_its_tensors_in_order():
    """@main returns (a, (b)): the program's outputs are a, then b."""
    text = main("%a: tensor<2xf32>, %b: tensor<i32>", NESTED, tuple_prelude() + f"  func.return %t : {NESTED}\n")
    a, b = np.array([1.5, 2.5], np.float32), np.array(-7, np.int32)
    got = shlo_conform.run_program(text, [a, b])
    assert [g.tolist() for g in got] == [[1.5, 2.5], -7]
    assert [e.type.mlir for e in expectations(text, [a, b])] == ["tensor<2xf32>", "tensor<i32>"]


@pytest.mark.parametrize("index, result, match", [
    (2, "tensor<2xf32>", "get_tuple_element_c1"),
    (1, "tensor<2xf32>", "get_tuple_element_c2"),
    (0, "tensor<3xf32>", "get_tuple_element_c2"),
])
def test_get_tuple_element_rejections(index, result, match):
    text = main("%a: tensor<2xf32>, %b: tensor<i32>", result, tuple_prelude() +
                f'  %u = "stablehlo.get_tuple_element"(%t) {{index = {index} : i32}} : ({NESTED}) -> {result}\n'
                f"  func.return %u : {result}\n")
    with pytest.raises(Rejected, match=match):
        OracleBackend().compile(text)


def test_tuple_where_a_tensor_is_expected_and_back_are_rejected():
    """A tuple is not an operand of add; a tensor is not get_tuple_element's operand."""
    bad_add = main("%a: tensor<2xf32>, %b: tensor<i32>", NESTED, tuple_prelude() +
                   f'  %s = "stablehlo.add"(%t, %t) : ({NESTED}, {NESTED}) -> {NESTED}\n  func.return %s : {NESTED}\n')
    with pytest.raises(Rejected, match="add"):
        OracleBackend().compile(bad_add)
    bad_gte = main("%a: tensor<2xf32>", "tensor<2xf32>",
                   '  %u = "stablehlo.get_tuple_element"(%a) {index = 0 : i32} : (tensor<2xf32>) -> tensor<2xf32>\n'
                   "  func.return %u : tensor<2xf32>\n")
    with pytest.raises(Rejected, match="get_tuple_element"):
        OracleBackend().compile(bad_gte)


def test_main_takes_tensors_only():
    text = main(f"%t: {NESTED}", NESTED, f"  func.return %t : {NESTED}\n")
    with pytest.raises(Rejected, match="takes tensors"):
        OracleBackend().compile(text)


# --- machinery for regions, grouped attributes and Choices (stand-in ops) -------
#
# The ops that need them (scatter, gather, iota …) are tested through their
# own modules and the seed's examples; the stand-ins below isolate the
# interpreter's part: a minimal OpSpec registered in OPS for one test.

def standin(monkeypatch, spec):
    from shlo_conform.spec.ops import OPS
    monkeypatch.setitem(OPS, spec.mnemonic, spec)
    return spec


def probe_map(monkeypatch):
    """result[i] = computation(x[i], y[i]): a region called per element; C1
    reads the region's types (so the Function must exist before checking)."""
    def signature(op):
        s = lambda t: TensorType((), t.element_type)  # noqa: E731
        return (s(op.x), s(op.y)), (s(op.result),)

    def probe_map_c1(op):
        """(C1) `computation` has type `(tensor<E>, tensor<E>) -> tensor<E>`."""
        ins, outs = signature(op)
        return op.computation.inputs == ins and op.computation.outputs == outs

    def fn(op, x, y):
        out = [op.computation.call(a, b)[0] for a, b in zip(x.reshape(-1), y.reshape(-1))]
        return [np.array(out, dtype=x.dtype).reshape(x.shape)]

    return standin(monkeypatch, dsl.OpSpec(
        "probe_map", (dsl.Operand("x", dsl.ANY), dsl.Operand("y", dsl.ANY)), (dsl.Result("result", dsl.ANY),),
        (probe_map_c1,), lambda op: {"result": op.x}, dsl.DataMovement(fn, bit_exact=False),
        regions=(dsl.Region("computation", signature),)))


REGION_BODY = ('  ^bb0(%p: tensor<i32>, %q: tensor<i32>):\n'
               '    %s = "stablehlo.add"(%p, %q) : (tensor<i32>, tensor<i32>) -> tensor<i32>\n'
               '    %k = "stablehlo.constant"() {value = dense<10> : tensor<i32>} : () -> tensor<i32>\n'
               '    %m = "stablehlo.multiply"(%s, %k) : (tensor<i32>, tensor<i32>) -> tensor<i32>\n'
               '    "stablehlo.return"(%m) : (tensor<i32>) -> ()\n')


def map_program(body: str, ret: str = "tensor<3xi32>") -> str:
    return main("%x: tensor<3xi32>, %y: tensor<3xi32>", ret,
                f'  %r = "stablehlo.probe_map"(%x, %y) ({{\n{body}  }}) : (tensor<3xi32>, tensor<3xi32>) -> {ret}\n'
                f"  func.return %r : {ret}\n")


def test_region_is_parsed_checked_and_called(monkeypatch):
    """(x + y) * 10 per element, the body's own ops (a constant among them) executed by the oracle."""
    probe_map(monkeypatch)
    program = parse_program(map_program(REGION_BODY))
    fn = program.steps[0].inst.computation
    assert fn.inputs == (TensorType((), SI32),) * 2 and fn.outputs == (TensorType((), SI32),)
    x, y = np.array([1, 2, -3], np.int32), np.array([10, 20, 30], np.int32)
    (out,) = execute(program, [x, y])
    assert out.array().tolist() == [110, 220, 270] and not out.bit_exact


def test_region_constraints_see_the_region_types(monkeypatch):
    probe_map(monkeypatch)
    body = REGION_BODY.replace("%q: tensor<i32>", "%q: tensor<i64>").replace(
        '"stablehlo.add"(%p, %q) : (tensor<i32>, tensor<i32>)', '"stablehlo.add"(%p, %p) : (tensor<i32>, tensor<i32>)')
    with pytest.raises(Rejected, match="probe_map_c1"):
        OracleBackend().compile(map_program(body))


def test_region_ops_are_checked_and_may_capture_enclosing_values(monkeypatch):
    """A region may use a value of the block around it (the StableHLO
    deserializer hoists a comparator's constants out of it): the value it
    has when the op runs."""
    probe_map(monkeypatch)
    bad_op = REGION_BODY.replace('"stablehlo.add"(%p, %q) : (tensor<i32>, tensor<i32>) -> tensor<i32>',
                                 '"stablehlo.sine"(%p) : (tensor<i32>) -> tensor<i32>')
    with pytest.raises(Rejected, match="sine: element type"):
        OracleBackend().compile(map_program(bad_op))
    capture = main("%x: tensor<3xi32>, %y: tensor<3xi32>, %z: tensor<i32>", "tensor<3xi32>",
                   '  %r = "stablehlo.probe_map"(%x, %y) ({\n'
                   '  ^bb0(%p: tensor<i32>, %q: tensor<i32>):\n'
                   '    "stablehlo.return"(%z) : (tensor<i32>) -> ()\n'
                   '  }) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>\n  func.return %r : tensor<3xi32>\n')
    (got,) = shlo_conform.run_program(capture, [np.array([1, 2, 3], np.int32), np.array([4, 5, 6], np.int32),
                                                 np.array(9, np.int32)])
    assert got.tolist() == [9, 9, 9]
    undefined = capture.replace('"stablehlo.return"(%z)', '"stablehlo.return"(%r)')
    with pytest.raises(Rejected, match="parse error"):   # the op's own result: not defined before it
        OracleBackend().compile(undefined)
    no_region = main("%x: tensor<3xi32>, %y: tensor<3xi32>", "tensor<3xi32>",
                     '  %r = "stablehlo.probe_map"(%x, %y) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>\n'
                     "  func.return %r : tensor<3xi32>\n")
    with pytest.raises(Rejected, match="0 regions"):
        OracleBackend().compile(no_region)


def probe_attrs(monkeypatch, seen: list):
    """Attributes of every kind the new ops use: a group (an array, an
    array left out when empty, an int), arrays in both spellings, a bool."""
    kinds = dict(perm=dsl.I64ArrayAttr(), empty=dsl.I64ArrayAttr(), axis=dsl.IntAttr(64))
    return standin(monkeypatch, dsl.OpSpec(
        "probe_attrs", (dsl.Operand("x", dsl.ANY),), (dsl.Result("result", dsl.ANY),), (),
        lambda op: {"result": op.x}, dsl.DataMovement(lambda op, x: seen.append(dict(op.attributes)) or [x]),
        attributes=tuple(dsl.Attribute(n, k, group="dims") for n, k in kinds.items())
        + (dsl.Attribute("sizes", dsl.I64ArrayAttr()), dsl.Attribute("strides", dsl.I64ArrayAttr()),
           dsl.Attribute("flag", dsl.BoolAttr(), default=False)),
        groups=(dsl.Group("dims", "stablehlo.probe", ("perm", "empty", "axis")),)))


def test_grouped_and_array_attributes(monkeypatch):
    seen = []
    probe_attrs(monkeypatch, seen)
    text = main("%x: tensor<2xi8>", "tensor<2xi8>",
                '  %r = "stablehlo.probe_attrs"(%x) {dims = #stablehlo.probe<\n    perm = [1,0],\n    axis = 2>,\n'
                '    sizes = dense<[3, 4]> : tensor<2xi64>, strides = dense<1> : tensor<3xi64>} '
                ": (tensor<2xi8>) -> tensor<2xi8>\n  func.return %r : tensor<2xi8>\n")
    (got,) = shlo_conform.run_program(text, [np.array([5, 6], np.int8)])
    assert got.tolist() == [5, 6]
    assert seen == [dict(perm=(1, 0), empty=(), axis=2, sizes=(3, 4), strides=(1, 1, 1), flag=False)]
    seen.clear()
    shlo_conform.run_program(text.replace("dense<[3, 4]> : tensor<2xi64>", "array<i64: 7>")
                             .replace("dense<1> : tensor<3xi64>", "array<i64>"), [np.array([5, 6], np.int8)])
    assert seen[0]["sizes"] == (7,) and seen[0]["strides"] == ()
    seen.clear()   # StableHLO's printer leaves out integer fields equal to 0 (`index_vector_dim = 0`)
    shlo_conform.run_program(text.replace(",\n    axis = 2>", ">"), [np.array([5, 6], np.int8)])
    assert seen[0]["axis"] == 0


@pytest.mark.parametrize("old, new, match", [
    ("perm = [1,0]", "perm = [1,0], bogus = [1]", "unknown field"),
    ("dense<1> : tensor<3xi64>", "dense<1> : tensor<3xi32>", "1-dimensional tensor of si64"),
    ("dense<1> : tensor<3xi64>", "dense<1> : tensor<1x3xi64>", "1-dimensional tensor of si64"),
    ('"stablehlo.probe_attrs"(%x) {', '"stablehlo.probe_attrs"(%x) <{other = 1}> {', "unknown attribute"),
])
def test_attribute_rejections(monkeypatch, old, new, match):
    probe_attrs(monkeypatch, [])
    text = main("%x: tensor<2xi8>", "tensor<2xi8>",
                '  %r = "stablehlo.probe_attrs"(%x) {dims = #stablehlo.probe<perm = [1,0], axis = 2>,'
                ' sizes = dense<[3, 4]> : tensor<2xi64>, strides = dense<1> : tensor<3xi64>} '
                ": (tensor<2xi8>) -> tensor<2xi8>\n  func.return %r : tensor<2xi8>\n")
    assert old in text
    with pytest.raises(Rejected, match=match):
        OracleBackend().compile(text.replace(old, new))


def probe_choices(monkeypatch, choices):
    return standin(monkeypatch, dsl.OpSpec(
        "probe_choices", (dsl.Operand("x", dsl.ANY),), (dsl.Result("result", dsl.ANY),), (),
        lambda op: {"result": op.x}, dsl.DataMovement(lambda op, x: [choices])))


CHOICE_PROGRAM = main("%x: tensor<4xi32>", "tensor<4xi32>",
                      '  %r = "stablehlo.probe_choices"(%x) : (tensor<4xi32>) -> tensor<4xi32>\n'
                      "  func.return %r : tensor<4xi32>\n")


def test_choices_become_alternatives(monkeypatch):
    """Element 1 may be 7 or anything, element 3 may be 9; the primary value
    is none of these options, so it gets a label of its own, first."""
    probe_choices(monkeypatch, dsl.Choices(np.array([1, 2, 3, 4], np.int32),
                                           {1: [7, dsl.ANY_VALUE], 3: [9]}, {1: ["seven", "any"], 3: ["nine"]},
                                           why="the spec says so"))
    (exp,) = expectations(CHOICE_PROGRAM, [np.zeros(4, np.int32)])
    assert exp.array().tolist() == [1, 2, 3, 4] and exp.impl_defined == [1, 3] and exp.why == "the spec says so"
    alts = {a.label: a for a in exp.alternatives}
    assert [a.label for a in exp.alternatives] == ["primary value", "seven", "any", "nine"]
    assert alts["any"].bits is None and alts["any"].elements == [1] and alt_hex(exp, "any") is None
    hex_of = lambda v: np.array(v, "<i4").tobytes().hex()  # noqa: E731
    assert alt_hex(exp, "seven") == hex_of([1, 7, 3, 4]) and alt_hex(exp, "nine") == hex_of([1, 2, 3, 9])
    assert judge(exp, np.array([1, 7, 3, 9], np.int32)).ok
    assert judge(exp, np.array([1, -5, 3, 4], np.int32)).ok           # "any value" at element 1
    assert not judge(exp, np.array([1, 2, 3, 5], np.int32)).ok        # 5 is not an option at element 3
    assert not judge(exp, np.array([0, 2, 3, 4], np.int32)).ok        # element 0 has no options


def test_choice_equal_to_the_primary_names_it(monkeypatch):
    """iota-like: the primary is the two's-complement wrap, also listed as the
    option; that label comes first (a backend keeping the primary chose it)."""
    probe_choices(monkeypatch, dsl.Choices(np.array([1, 2, -8, 4], np.int32), {2: [-8]}, {2: ["wrap"]}))
    (exp,) = expectations(CHOICE_PROGRAM, [np.zeros(4, np.int32)])
    assert [a.label for a in exp.alternatives] == ["wrap"] and exp.impl_defined == [2]
    assert judge(exp, np.array([1, 2, -8, 4], np.int32)).alternatives_used == ["wrap"]


def test_choices_mixing_values_and_any_under_one_label_are_refused(monkeypatch):
    probe_choices(monkeypatch, dsl.Choices(np.array([1, 2, 3, 4], np.int32), {0: [5], 1: [dsl.ANY_VALUE]},
                                           {0: ["x"], 1: ["x"]}))
    with pytest.raises(ValueError, match="both values and ANY_VALUE"):
        expectations(CHOICE_PROGRAM, [np.zeros(4, np.int32)])


def test_two_variadic_operands_share_the_rest_equally(monkeypatch):
    """As scatter's `inputs` and `updates` (MLIR's SameVariadicOperandSize):
    5 operands around one fixed are 2 + 1 + 2; 4 cannot be split."""
    seen = []
    standin(monkeypatch, dsl.OpSpec(
        "probe_split", (dsl.Operand("a", dsl.ANY, variadic=True), dsl.Operand("i", dsl.ANY),
                        dsl.Operand("b", dsl.ANY, variadic=True)), (dsl.Result("result", dsl.ANY),), (),
        lambda op: {"result": op.i}, dsl.DataMovement(lambda op, *xs: seen.append(op.operands) or [xs[len(op.a)]])))

    def text(n):
        args = ", ".join(f"%x{k}: tensor<{k + 1}xi8>" for k in range(n))
        uses = ", ".join(f"%x{k}" for k in range(n))
        types = ", ".join(f"tensor<{k + 1}xi8>" for k in range(n))
        mid = f"tensor<{n // 2 + 1}xi8>"
        return main(args, mid, f'  %r = "stablehlo.probe_split"({uses}) : ({types}) -> {mid}\n'
                               f"  func.return %r : {mid}\n")

    (got,) = shlo_conform.run_program(text(5), [np.arange(k + 1, dtype=np.int8) for k in range(5)])
    assert got.tolist() == [0, 1, 2]
    assert [t.shape for t in seen[0]["a"]] == [(1,), (2,)] and seen[0]["i"].shape == (3,)
    assert [t.shape for t in seen[0]["b"]] == [(4,), (5,)]
    with pytest.raises(Rejected, match="cannot match 4 operands"):
        OracleBackend().compile(text(4))


def _reduce_with_body(body: str) -> str:
    return ("func.func @main(%x: tensor<4xf32>, %z: tensor<f32>) -> tensor<f32> {\n"
            "  %r = \"stablehlo.reduce\"(%x, %z) ({\n  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n" + body +
            "\n  }) {dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n"
            "  func.return %r : tensor<f32>\n}")


@pytest.mark.parametrize("body, pairwise", [
    ("    %s = stablehlo.add %a, %b : tensor<f32>\n    stablehlo.return %s : tensor<f32>", ("add",)),
    # a commutative op may take its pair either way round; subtract may not
    ("    %s = stablehlo.add %b, %a : tensor<f32>\n    stablehlo.return %s : tensor<f32>", ("add",)),
    ("    %s = stablehlo.subtract %b, %a : tensor<f32>\n    stablehlo.return %s : tensor<f32>", None),
    # not a pair: one argument twice
    ("    %s = stablehlo.add %a, %a : tensor<f32>\n    stablehlo.return %s : tensor<f32>", None),
    # an op more than the pairs (unused), or a constant
    ("    %s = stablehlo.add %a, %b : tensor<f32>\n    %t = stablehlo.multiply %a, %b : tensor<f32>\n"
     "    stablehlo.return %s : tensor<f32>", None),
    ("    %c = stablehlo.constant dense<1.0> : tensor<f32>\n    %s = stablehlo.add %a, %b : tensor<f32>\n"
     "    stablehlo.return %s : tensor<f32>", None),
])
def test_a_region_is_pairwise_only_when_it_is_one_op_per_pair(body, pairwise):
    """`Function.pairwise` (what reductions read as a monoid's algebra): the
    ops of a block that applies one op to each (argument k, argument N+k)
    pair and returns their results — a commutative op's pair in either
    order — and None for any other block: where a reduction would otherwise
    take a body's first op for the whole body."""
    inst = parse_program(_reduce_with_body(body)).steps[0].inst
    assert inst.body.pairwise == pairwise


def test_a_module_without_main_names_its_functions():
    """No @main and several functions: rejected, the functions named (one
    function alone is the entry, whatever its name)."""
    two = ("func.func @f(%x: tensor<f32>) -> tensor<f32> {\n  func.return %x : tensor<f32>\n}\n"
           "func.func @g(%x: tensor<f32>) -> tensor<f32> {\n  func.return %x : tensor<f32>\n}\n")
    with pytest.raises(ProgramRejected, match=r"^no func.func @main \(functions: f, g\)$"):
        parse_program(two)
    assert parse_program(two.split("\n}\n")[0] + "\n}\n") is not None


def test_the_oracle_backend_may_take_the_last_alternative():
    """`OracleBackend(choice="last")`: an implementation-defined element takes
    its last named alternative (negate of INT_MIN: saturates, not wraps);
    every other element is the primary value either way."""
    text = prog("negate", ["tensor<3xi8>"], "tensor<3xi8>")
    x = np.array([-128, 5, 127], dtype=np.int8)
    first, = OracleBackend().run(OracleBackend().compile(text), [x])
    last_b = OracleBackend(choice="last")
    last, = last_b.run(last_b.compile(text), [x])
    assert first.tolist() == [-128, -5, -127] and last.tolist() == [127, -5, -127]
    with pytest.raises(ValueError, match="choice"):
        OracleBackend(choice="middle")
