"""The oracle backend end to end: checking programs against the encoded
spec, executing them, and the expectations it hands to generators.

Truth is hand computation, numpy/ml_dtypes, or the seed's own text.
"""
import math

import ml_dtypes
import numpy as np
import pytest

from shlo_conform.backends.base import Rejected, Unsupported
from shlo_conform.backends.oracle import OracleBackend
from shlo_conform.generators.judge import expectations
from shlo_conform.suites.compare import judge


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
    rhs = next(a for a in exp.alternatives if a.label == "rhs")
    assert judge(exp, np.array([2 + 3j], np.complex64)).ok
    assert not judge(exp, np.array([5 + 3j], np.complex64)).ok
    assert rhs.hex == np.array([2 + 3j], np.complex64).view(np.uint32).astype("<u4").tobytes().hex()


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
