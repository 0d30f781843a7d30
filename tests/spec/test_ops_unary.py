"""Unary op modules: constraints (concrete and z3), type inference, element semantics.

Expected values come from the seed's Examples sections, from hand
computation, from exact arithmetic, and from the platform libm (`math`) for
transcendentals — never from the op module under test.
"""
import math
import struct
from fractions import Fraction

import ml_dtypes
import mpmath
import numpy as np
import pytest
import z3

from shlo_conform.spec import dsl
from shlo_conform.spec.dsl import ANY_VALUE, Approx, ImplDefined
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.types import (C64, C128, E_BF16, E_F8E4M3FN, E_F8E5M2, E_F16, E_F32, E_F64, I1,
                                     SI4, SI8, SI16, SI32, SI64, UI4, UI8, UI16, UI32, UI64, TensorType)
from tests.spec import exact_values

INF, NAN = math.inf, math.nan

SAME_TYPE_FLOAT_COMPLEX = ["cbrt", "cosine", "tan", "tanh", "exponential", "exponential_minus_one",
                           "log", "log_plus_one", "logistic", "rsqrt", "sqrt"]
SAME_TYPE_FLOAT = ["ceil", "floor", "round_nearest_afz", "round_nearest_even"]


def T(shape, et=E_F32):
    return TensorType(tuple(shape), et)


def unary(name, operand, result, **attrs):
    spec = OPS[name]
    res_name = spec.results[0].name
    op_name = spec.operands[0].name
    return spec.instance({op_name: operand}, attrs, {res_name: result})


def ev(name, x, operand_type=E_F32, result_type=None, **attrs):
    """One element of the op's semantics on an operand of `operand_type`."""
    rt = result_type or operand_type
    inst = unary(name, T((1,), operand_type), T((1,), rt), **attrs)
    return OPS[name].semantics.fn(inst, x)


def real_value(v, dps=100):
    return exact_values.real_value(v, dps)


def close(v, expected, rel=1e-14):
    got = real_value(v)
    return abs(got - expected) <= rel * abs(expected)


def same_float(a, b):
    """Equal as IEEE values, sign of zero and NaN included."""
    if isinstance(a, Fraction):
        a = float(a)
    if math.isnan(b):
        return isinstance(a, float) and math.isnan(a)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def test_all_ops_of_this_family_are_registered():
    for name in SAME_TYPE_FLOAT_COMPLEX + SAME_TYPE_FLOAT + [
            "is_finite", "real", "imag", "convert", "bitcast_convert", "reduce_precision"]:
        assert name in OPS


# --------------------------------------------------------------------------
# Constraints: same-type unary ops
# --------------------------------------------------------------------------

@pytest.mark.parametrize("name", SAME_TYPE_FLOAT_COMPLEX + SAME_TYPE_FLOAT)
def test_same_type_c1_concrete(name):
    spec = OPS[name]
    assert spec.labels == [f"{name}_c1"]
    assert spec.violated(unary(name, T((2, 3)), T((2, 3)))) == []
    assert spec.violated(unary(name, T((2, 3)), T((3, 2)))) == [f"{name}_c1"]
    assert spec.violated(unary(name, T((2, 3)), T((2, 3), E_F64))) == [f"{name}_c1"]
    assert spec.violated(unary(name, T((2,)), T((2, 1)))) == [f"{name}_c1"]
    assert spec.infer(unary(name, T((4,), E_F16), T((4,), E_F16))) == {"result": T((4,), E_F16)}


@pytest.mark.parametrize("name", SAME_TYPE_FLOAT_COMPLEX + SAME_TYPE_FLOAT)
def test_same_type_c1_symbolic(name):
    n, m = z3.Ints("n m")
    c = OPS[name].constraint(f"{name}_c1")(unary(name, T((n, 3)), T((2, m))))
    assert dsl.is_symbolic(c)
    s = z3.Solver()
    s.add(c, n != 2)
    assert s.check() == z3.unsat


@pytest.mark.parametrize("name", SAME_TYPE_FLOAT_COMPLEX)
def test_operand_tables_float_or_complex(name):
    spec = OPS[name]
    assert set(spec.operands[0].types) == {E_F8E4M3FN, E_F8E5M2, E_BF16, E_F16, E_F32, E_F64, C64, C128}
    assert spec.types_outside_tables(unary(name, T((2,), SI32), T((2,), SI32))) == ["operand", "result"]


@pytest.mark.parametrize("name", SAME_TYPE_FLOAT)
def test_operand_tables_float_only(name):
    spec = OPS[name]
    assert spec.types_outside_tables(unary(name, T((2,), C64), T((2,), C64))) == ["operand", "result"]
    assert spec.types_outside_tables(unary(name, T((2,), E_BF16), T((2,), E_BF16))) == []


def test_accuracy_classes():
    """IEEE basic / exact ops are 'exact'; the rest follow the Accuracy section."""
    for name in SAME_TYPE_FLOAT + ["is_finite", "real", "imag", "convert", "reduce_precision"]:
        assert OPS[name].semantics.accuracy == "exact", name
    # IEEE squareRoot is a basic operation; complex sqrt is not (no guarantee).
    sq = OPS["sqrt"]
    for t, want in ((E_F32, "exact"), (C64, "approx")):
        inst = sq.instance({"operand": TensorType((1,), t)}, results={"result": TensorType((1,), t)})
        assert sq.semantics.accuracy_for(inst) == want
    for name in ["cbrt", "cosine", "tan", "tanh", "exponential", "exponential_minus_one",
                 "log", "log_plus_one", "logistic", "rsqrt"]:
        assert OPS[name].semantics.accuracy == "approx", name


# --------------------------------------------------------------------------
# Transcendental semantics
# --------------------------------------------------------------------------

SPECIALS = {
    # op: [(x, expected IEEE result)]
    "cosine": [(0.0, 1.0), (-0.0, 1.0), (INF, NAN), (-INF, NAN), (NAN, NAN)],
    "tan": [(0.0, 0.0), (-0.0, -0.0), (INF, NAN), (-INF, NAN), (NAN, NAN)],
    "tanh": [(0.0, 0.0), (-0.0, -0.0), (INF, 1.0), (-INF, -1.0), (NAN, NAN)],
    "exponential": [(0.0, 1.0), (-0.0, 1.0), (INF, INF), (-INF, 0.0), (NAN, NAN)],
    "exponential_minus_one": [(0.0, 0.0), (-0.0, -0.0), (INF, INF), (-INF, -1.0), (NAN, NAN)],
    "log": [(0.0, -INF), (-0.0, -INF), (1.0, 0.0), (INF, INF), (-1.0, NAN), (-INF, NAN), (NAN, NAN),
            (-1e-300, NAN)],
    "log_plus_one": [(0.0, 0.0), (-0.0, -0.0), (-1.0, -INF), (-2.0, NAN), (-INF, NAN), (INF, INF),
                     (NAN, NAN)],
    "logistic": [(0.0, 0.5), (-0.0, 0.5), (INF, 1.0), (-INF, 0.0), (NAN, NAN)],
    "rsqrt": [(0.0, INF), (-0.0, -INF), (INF, 0.0), (-1.0, NAN), (-INF, NAN), (NAN, NAN), (4.0, 0.5),
              (0.25, 2.0), (2.0 ** -1074, 2.0 ** 537)],
    "sqrt": [(0.0, 0.0), (-0.0, -0.0), (INF, INF), (-1.0, NAN), (-INF, NAN), (NAN, NAN), (9.0, 3.0),
             (2.25, 1.5), (2.0 ** -1074, 2.0 ** -537)],
    "cbrt": [(0.0, 0.0), (-0.0, -0.0), (INF, INF), (-INF, -INF), (NAN, NAN), (8.0, 2.0), (-27.0, -3.0),
             (0.125, 0.5), (-(2.0 ** -1074) * 27, -3 * 2.0 ** -358)],
}


@pytest.mark.parametrize("name,x,expected", [(n, x, e) for n, cases in SPECIALS.items() for x, e in cases])
def test_special_values(name, x, expected):
    got = ev(name, x, E_F64)
    assert not isinstance(got, Approx), f"{name}({x}) must be decided before mpmath"
    assert same_float(got, expected), (name, x, got)


LIBM = {
    "cosine": math.cos, "tan": math.tan, "tanh": math.tanh, "exponential": math.exp,
    "exponential_minus_one": math.expm1, "log": math.log, "log_plus_one": math.log1p,
    "logistic": lambda t: 1.0 / (1.0 + math.exp(-t)) if t >= 0 else math.exp(t) / (1.0 + math.exp(t)),
    "rsqrt": lambda t: 1.0 / math.sqrt(t), "sqrt": math.sqrt, "cbrt": lambda t: math.copysign(abs(t) ** (1 / 3), t),
}
POINTS = {
    "cosine": [0.5, -1.0, 3.0, 100.0, 1e-5],
    "tan": [0.5, -1.0, 1.5, 3.0, 1e-5],
    "tanh": [0.5, -1.0, 3.0, 1e-5, -0.25],
    "exponential": [0.5, -1.0, 3.0, 700.0, -700.0, 1e-5],
    "exponential_minus_one": [0.5, -1.0, 3.0, 1e-10, -1e-10],
    "log": [0.5, 2.0, 3.0, 1e-300, 1e300, 1.0000001],
    "log_plus_one": [0.5, -0.999, 7.0, 1e-10, -1e-10, 1e300],
    "logistic": [0.5, -1.0, 3.0, -30.0, 30.0, 1e-5],
    "rsqrt": [2.0, 3.0, 0.1, 1e-300, 1e300],
    "sqrt": [2.0, 3.0, 0.1, 1e-300, 1e300],
    "cbrt": [2.0, -3.0, 0.1, 1e-300, -1e300],
}


@pytest.mark.parametrize("name,x", [(n, x) for n, xs in POINTS.items() for x in xs])
def test_real_function_matches_libm(name, x):
    got = ev(name, x, E_F64)
    assert isinstance(got, Approx)
    # libm results are within a few ULPs of the true value; 1e-14 relative
    # is far coarser, and far finer than any wrong function would be.
    assert close(got, LIBM[name](x), rel=1e-13 if name == "cbrt" else 1e-14), (name, x)


def test_spec_examples_transcendental():
    """The Examples sections of the seed (and of the tan RFC)."""
    examples = {
        "cosine": [(1.57079632, 0.0, 1e-7), (3.14159265, -1.0, 1e-7), (4.71238898, 0.0, 1e-7)],  # f32 pi/2 is not pi/2: cos = -4.4e-8
        "exponential": [(1.0, 2.7182818284590451, 1e-16), (2.0, 7.3890560989306504, 1e-16),
                        (3.0, 20.085536923187668, 1e-16)],
        "exponential_minus_one": [(1.0, 1.71828187, 1e-7)],
        "log": [(2.0, 0.69314718055994529, 1e-16), (3.0, 1.0986122886681098, 1e-16),
                (4.0, 1.3862943611198906, 1e-16)],
        "log_plus_one": [(-0.999, -6.90776825, 1e-7), (7.0, 2.07944155, 1e-7), (6.38905621, 2.0, 1e-7),
                         (15.0, 2.77258873, 1e-7)],
        "logistic": [(1.0, 0.73105858, 1e-7), (2.0, 0.88079708, 1e-7), (3.0, 0.95257413, 1e-7)],
        "rsqrt": [(9.0, 0.33333343, 1e-6)],
        "tanh": [(-1.0, -0.76159416, 1e-7), (1.0, 0.76159416, 1e-7)],
        "tan": [(-1.0, -1.55740772465, 1e-10), (1.0, 1.55740772465, 1e-10)],
    }
    f64_examples = {"exponential", "log", "logistic"}  # the others are written on tensor<…xf32>
    for name, cases in examples.items():
        for x, want, tol in cases:
            et = E_F64 if name in f64_examples else E_F32
            x = x if et is E_F64 else float(np.float32(x))
            got = real_value(ev(name, x, et))
            assert abs(got - want) <= tol * max(abs(want), 1), (name, x, got)
    # exact results of the examples
    assert same_float(ev("exponential", 0.0, E_F64), 1.0)
    assert same_float(ev("log", 1.0, E_F64), 0.0)
    assert [float(ev("rsqrt", x)) for x in (1.0, 4.0, 25.0)] == [1.0, 0.5, 0.2]
    assert [float(ev("sqrt", x)) for x in (0.0, 1.0, 4.0, 9.0)] == [0.0, 1.0, 2.0, 3.0]
    assert [float(ev("cbrt", x)) for x in (0.0, 1.0, 8.0, 27.0)] == [0.0, 1.0, 2.0, 3.0]
    assert math.isnan(ev("log_plus_one", -2.0))


def test_exact_roots_are_exact_rationals():
    assert ev("sqrt", 6.25, E_F64) == Fraction(5, 2)
    assert ev("cbrt", 3.375, E_F64) == Fraction(3, 2)
    assert ev("rsqrt", 6.25, E_F64) == Fraction(2, 5)  # 0.4 is not a float: the oracle rounds it
    assert isinstance(ev("sqrt", 2.0, E_F64), Approx)
    # squares of large odd integers: the exactness test uses no float round-off
    assert ev("sqrt", float(2 ** 26 + 1) ** 2, E_F64) == 2 ** 26 + 1
    assert ev("sqrt", float(2 ** 26 + 1) ** 2 * 2.0 ** 900, E_F64) == (2 ** 26 + 1) * 2 ** 450
    x = float(3 ** 33) ** 2  # 3^66 needs 105 bits: rounded, so not an exact square any more
    assert (Fraction(x) == 3 ** 66) is False and isinstance(ev("sqrt", x, E_F64), Approx)


def test_cbrt_of_negative_is_real():
    got = real_value(ev("cbrt", -2.0, E_F64))
    assert isinstance(got, mpmath.mpf)
    with mpmath.workdps(100):
        assert abs(got ** 3 + 2) < mpmath.mpf(10) ** -90


@pytest.mark.parametrize("name,fn", [
    ("cbrt", "ccbrt"), ("cosine", "ccos"), ("tan", "ctan"), ("tanh", "ctanh"), ("exponential", "cexp"),
    ("exponential_minus_one", "cexpm1"), ("log", "clog"), ("log_plus_one", "clog1p"),
    ("logistic", "clogistic"), ("rsqrt", "crsqrt"), ("sqrt", "csqrt")])
def test_complex_operands_go_to_annex_g(name, fn, monkeypatch):
    from shlo_conform.spec import annex_g
    seen = []
    monkeypatch.setattr(annex_g, fn, lambda z: seen.append(z) or ("re", "im"))
    assert ev(name, complex(1.0, -2.0), C64) == ("re", "im")
    assert seen == [complex(1.0, -2.0)]


# --------------------------------------------------------------------------
# Rounding to integral
# --------------------------------------------------------------------------

ROUNDING = [
    #        x:       ceil   floor  afz    even
    (-2.5, (-2.0, -3.0, -3.0, -2.0)),
    (-0.8166, (-0.0, -1.0, -1.0, -1.0)),
    (-0.5, (-0.0, -1.0, -1.0, -0.0)),
    (-0.253, (-0.0, -1.0, -0.0, -0.0)),
    (-0.0, (-0.0, -0.0, -0.0, -0.0)),
    (0.0, (0.0, 0.0, 0.0, 0.0)),
    (0.253, (1.0, 0.0, 0.0, 0.0)),
    (0.4, (1.0, 0.0, 0.0, 0.0)),
    (0.5, (1.0, 0.0, 1.0, 0.0)),
    (0.6, (1.0, 0.0, 1.0, 1.0)),
    (1.5, (2.0, 1.0, 2.0, 2.0)),
    (2.0, (2.0, 2.0, 2.0, 2.0)),
    (2.5, (3.0, 2.0, 3.0, 2.0)),
    (3.5, (4.0, 3.0, 4.0, 4.0)),
    (2.0 ** 51 + 0.5, (2.0 ** 51 + 1, 2.0 ** 51, 2.0 ** 51 + 1, 2.0 ** 51)),
    (1e300, (1e300, 1e300, 1e300, 1e300)),
    (5e-324, (1.0, 0.0, 0.0, 0.0)),
    (-5e-324, (-0.0, -1.0, -0.0, -0.0)),
    (INF, (INF, INF, INF, INF)),
    (-INF, (-INF, -INF, -INF, -INF)),
    (NAN, (NAN, NAN, NAN, NAN)),
]


@pytest.mark.parametrize("x,wants", ROUNDING)
def test_rounding_to_integral(x, wants):
    for name, want in zip(["ceil", "floor", "round_nearest_afz", "round_nearest_even"], wants):
        got = ev(name, x, E_F64)
        assert same_float(got, want), (name, x, got)


def test_rounding_examples():
    xs = [-0.8166, -0.2530, 0.2530, 0.8166, 2.0]
    f32 = [float(np.float32(v)) for v in xs]
    assert all(same_float(ev("ceil", x), w) for x, w in zip(f32, [-0.0, -0.0, 1.0, 1.0, 2.0]))
    assert all(same_float(ev("floor", x), w) for x, w in zip(f32, [-1.0, -1.0, 0.0, 0.0, 2.0]))
    xs = [-2.5, 0.4, 0.5, 0.6, 2.5]
    f32 = [float(np.float32(v)) for v in xs]
    assert all(same_float(ev("round_nearest_afz", x), w) for x, w in zip(f32, [-3.0, 0.0, 1.0, 1.0, 3.0]))
    assert all(same_float(ev("round_nearest_even", x), w) for x, w in zip(f32, [-2.0, 0.0, 0.0, 1.0, 2.0]))


# --------------------------------------------------------------------------
# is_finite, real, imag
# --------------------------------------------------------------------------

def test_is_finite_constraints_and_inference():
    spec = OPS["is_finite"]
    ok = spec.instance({"x": T((7,))}, results={"y": T((7,), I1)})
    assert spec.violated(ok) == [] and spec.types_outside_tables(ok) == []
    assert spec.violated(spec.instance({"x": T((7,))}, results={"y": T((6,), I1)})) == ["is_finite_c1"]
    assert spec.infer(ok) == {"y": T((7,), I1)}
    assert spec.types_outside_tables(spec.instance({"x": T((7,))}, results={"y": T((7,))})) == ["y"]
    n = z3.Int("n")
    assert dsl.is_symbolic(spec.constraint("is_finite_c1")(
        spec.instance({"x": T((n,))}, results={"y": T((7,), I1)})))


def test_is_finite_example():
    # %x: [0xFF800000, 0x7F800000, 0x7FFFFFFF, -10.0, -0.0, 0.0, 10.0]
    x = [struct.unpack("<f", struct.pack("<I", b))[0] for b in (0xFF800000, 0x7F800000, 0x7FFFFFFF)]
    x += [-10.0, -0.0, 0.0, 10.0, 5e-324]
    got = [ev("is_finite", v, E_F32, I1) for v in x]
    assert got == [False, False, False, True, True, True, True, True]
    assert all(type(g) is bool for g in got)


@pytest.mark.parametrize("name", ["real", "imag"])
def test_real_imag_constraints(name):
    spec = OPS[name]
    assert spec.labels == [f"{name}_c1", f"{name}_c2"]
    assert spec.violated(unary(name, T((2,), C64), T((2,), E_F32))) == []
    assert spec.violated(unary(name, T((2,), C128), T((2,), E_F64))) == []
    assert spec.violated(unary(name, T((2,), E_F16), T((2,), E_F16))) == []
    assert spec.violated(unary(name, T((2,), C64), T((2,), E_F64))) == [f"{name}_c2"]
    assert spec.violated(unary(name, T((2,), E_F16), T((2,), E_F32))) == [f"{name}_c2"]
    assert spec.violated(unary(name, T((2,), C64), T((3,), E_F32))) == [f"{name}_c1"]
    assert spec.infer(unary(name, T((2, 5), C128), T((2, 5), E_F64))) == {"result": T((2, 5), E_F64)}
    assert spec.infer(unary(name, T((3,), E_BF16), T((3,), E_BF16))) == {"result": T((3,), E_BF16)}
    n = z3.Int("n")
    c = spec.constraint(f"{name}_c1")(unary(name, T((n,), C64), T((2,), E_F32)))
    assert dsl.is_symbolic(c)
    assert spec.types_outside_tables(unary(name, T((2,), C64), T((2,), C64))) == ["result"]


def test_real_imag_semantics():
    assert ev("real", complex(1.0, 2.0), C64, E_F32) == 1.0
    assert ev("imag", complex(1.0, 2.0), C64, E_F32) == 2.0
    assert same_float(ev("real", complex(-0.0, NAN), C64, E_F32), -0.0)
    assert same_float(ev("imag", complex(NAN, -0.0), C64, E_F32), -0.0)
    assert math.isnan(ev("real", complex(NAN, 1.0), C128, E_F64))
    # non-complex operands: real(x) = x, imag(x) = 0.0
    assert same_float(ev("real", -0.0, E_F32), -0.0)
    assert math.isnan(ev("real", NAN, E_F32))
    assert same_float(ev("imag", -3.0, E_F32), 0.0)
    assert same_float(ev("imag", NAN, E_F32), 0.0)
    assert same_float(ev("imag", -INF, E_F32), 0.0)


# --------------------------------------------------------------------------
# convert
# --------------------------------------------------------------------------

def cv(x, src, dst):
    return ev("convert", x, src, dst)


def test_convert_constraints_and_inference():
    spec = OPS["convert"]
    assert spec.result_from_program == ("result",)
    assert spec.violated(unary("convert", T((3,), SI32), T((3,), C64))) == []
    assert spec.violated(unary("convert", T((3,), SI32), T((1, 3), C64))) == ["convert_c1"]
    assert spec.violated(unary("convert", T((3,), SI32), T((4,), I1))) == ["convert_c1"]
    assert spec.infer(unary("convert", T((2, 3), UI8), T((2, 3), E_BF16))) == {"result": T((2, 3), E_BF16)}
    with pytest.raises(ValueError):
        spec.infer(spec.instance({"operand": T((3,), SI32)}))
    n = z3.Int("n")
    assert dsl.is_symbolic(spec.constraint("convert_c1")(unary("convert", T((n,), SI32), T((3,), E_F32))))


def test_convert_example():
    # [1, 2, 3] : si32 -> complex<f32>: [(1.0, 0.0), (2.0, 0.0), (3.0, 0.0)]
    for v in (1, 2, 3):
        re, im = cv(v, SI32, C64)
        assert re == v and same_float(im, 0.0)


def test_convert_bool():
    assert cv(True, I1, SI8) == 1 and cv(False, I1, UI64) == 0
    assert same_float(cv(True, I1, E_F16), 1.0) and same_float(cv(False, I1, E_F16), 0.0)
    re, im = cv(True, I1, C128)
    assert re == 1 and same_float(im, 0.0)
    assert cv(True, I1, I1) is True
    for x, src, want in [(0, SI32, False), (-7, SI32, True), (255, UI8, True), (0.0, E_F32, False),
                         (-0.0, E_F32, False), (NAN, E_F32, True), (-INF, E_F64, True), (5e-324, E_F64, True),
                         (complex(0.0, -0.0), C64, False), (complex(0.0, 1.0), C64, True),
                         (complex(NAN, 0.0), C64, True)]:
        assert bool(cv(x, src, I1)) is want, (x, src)


def test_convert_int_to_int():
    assert cv(-128, SI8, SI64) == -128
    assert cv(7, SI4, UI4) == 7
    assert cv(2 ** 63 - 1, SI64, UI64) == 2 ** 63 - 1
    for x, src, dst, wrap, sat in [(-1, SI32, UI32, 2 ** 32 - 1, 0), (300, SI32, SI8, 44, 127),
                                   (-129, SI16, SI8, 127, -128), (2 ** 64 - 1, UI64, SI64, -1, 2 ** 63 - 1),
                                   (8, SI8, SI4, -8, 7), (16, UI8, UI4, 0, 15)]:
        got = cv(x, src, dst)
        assert isinstance(got, ImplDefined)
        assert sorted(got.alternatives.values()) == sorted([wrap, sat]), (x, dst)


def test_convert_int_to_float_is_the_exact_value():
    assert cv(2 ** 24 + 1, SI32, E_F32) == Fraction(2 ** 24 + 1)  # the oracle rounds it
    assert cv(-5, SI8, E_BF16) == -5
    assert cv(0, SI8, E_F32) == 0


def test_convert_float_to_float_and_complex():
    assert same_float(cv(-0.0, E_F64, E_F16), -0.0)
    assert math.isnan(cv(NAN, E_F32, E_BF16))
    assert cv(0.1, E_F64, E_F32) == 0.1
    re, im = cv(2.5, E_F32, C128)
    assert re == 2.5 and same_float(im, 0.0)
    assert cv(complex(1.5, 7.0), C64, E_F32) == 1.5  # imaginary part ignored
    assert cv(complex(1.5, -0.0), C64, C128) == (1.5, -0.0)
    assert same_float(cv(complex(1.5, -0.0), C64, C128)[1], -0.0)


def test_convert_into_a_format_without_infinity():
    assert cv(448.0, E_F32, E_F8E4M3FN) == 448.0
    assert cv(464.0, E_F32, E_F8E4M3FN) == 464.0      # a tie: rounds to even 448, no overflow
    for x, src in [(464.5, E_F32), (-1000.0, E_F64), (INF, E_F32), (-INF, E_F16), (500, SI32)]:
        got = cv(x, src, E_F8E4M3FN)
        assert isinstance(got, ImplDefined), x
        vals = list(got.alternatives.values())
        assert any(isinstance(v, float) and math.isnan(v) for v in vals)
        assert (448 if x > 0 else -448) in vals
    assert math.isnan(cv(NAN, E_F32, E_F8E4M3FN))
    assert same_float(cv(INF, E_F32, E_F8E5M2), INF)  # f8E5M2 has an infinity


def test_convert_float_to_int_truncates():
    for x, want in [(2.9, 2), (-2.9, -2), (-0.5, 0), (127.99, 127), (-128.5, -128)]:
        assert cv(x, E_F64, SI8) == want, x
    assert cv(255.9, E_F32, UI8) == 255
    assert cv(-0.99, E_F32, UI8) == 0
    assert cv(complex(-3.7, 100.0), C64, SI32) == -3  # real part, imaginary ignored


def test_convert_float_to_int_out_of_range_is_implementation_defined():
    got = cv(NAN, E_F32, SI32)
    assert isinstance(got, ImplDefined) and 0 in got.alternatives.values()
    assert -2 ** 31 in got.alternatives.values()
    got = cv(INF, E_F32, SI32)
    assert 2 ** 31 - 1 in got.alternatives.values()
    got = cv(-INF, E_F32, UI16)
    assert 0 in got.alternatives.values()
    got = cv(300.5, E_F32, SI8)
    assert set(got.alternatives.values()) >= {127, 44}  # saturate; 300 mod 256 = 44
    got = cv(-1.5, E_F32, UI8)
    assert set(got.alternatives.values()) == {0, 255, ANY_VALUE}
    # TBD (#180): beyond the named alternatives, any value is allowed (and reported).
    assert list(got.alternatives.values())[-1] is ANY_VALUE
    got = cv(2.0 ** 31, E_F32, SI32)
    assert isinstance(got, ImplDefined)  # 2^31 is one past INT32_MAX
    assert cv(-2.0 ** 31, E_F32, SI32) == -2 ** 31


# --------------------------------------------------------------------------
# bitcast_convert
# --------------------------------------------------------------------------

def bc(operand_type, result_type):
    return OPS["bitcast_convert"].instance({"operand": operand_type}, results={"result": result_type})


def test_bitcast_convert_c1_same_width():
    spec = OPS["bitcast_convert"]
    assert spec.violated(bc(T((2, 3), E_F32), T((2, 3), SI32))) == []
    assert spec.violated(bc(T((2, 3), E_F16), T((2, 3), E_BF16))) == []
    assert spec.violated(bc(T((2, 3), E_F32), T((3, 2), SI32))) == ["bitcast_convert_c1"]


def test_bitcast_convert_c1_narrower_result():
    spec = OPS["bitcast_convert"]
    assert spec.violated(bc(T((2,), E_F32), T((2, 4), SI8))) == []       # the seed's example
    assert spec.violated(bc(T((), E_F32), T((2,), E_F16))) == []         # scalar → rank 1
    assert spec.violated(bc(T((10,), E_F64), T((10, 16), UI4))) == []
    assert spec.violated(bc(T((2,), E_F32), T((2, 2), SI8))) == ["bitcast_convert_c1"]  # wrong ratio
    assert spec.violated(bc(T((2,), E_F32), T((3, 4), SI8))) == ["bitcast_convert_c1"]  # kept dim differs
    assert spec.violated(bc(T((2,), E_F32), T((8,), SI8))) == ["bitcast_convert_c1"]    # rank not R+1
    assert spec.violated(bc(T((4,), C128), T((4, 2), C64))) == []


def test_bitcast_convert_c1_wider_result():
    spec = OPS["bitcast_convert"]
    assert spec.violated(bc(T((10, 2), E_F16), T((10,), E_F32))) == []
    assert spec.violated(bc(T((4,), SI8), T((), SI32))) == []
    assert spec.violated(bc(T((10, 4), E_F16), T((10,), E_F32))) == ["bitcast_convert_c1"]
    assert spec.violated(bc(T((10, 2), E_F16), T((5,), E_F32))) == ["bitcast_convert_c1"]
    assert spec.violated(bc(T((10, 2), E_F16), T((10, 1), E_F32))) == ["bitcast_convert_c1"]
    assert spec.violated(bc(T((), E_F16), T((), E_F32))) == ["bitcast_convert_c1"]  # R = 0: no last dim


def test_bitcast_convert_c2():
    spec = OPS["bitcast_convert"]
    assert spec.violated(bc(T((2,), C64), T((2,), SI64))) == ["bitcast_convert_c2"]
    assert spec.violated(bc(T((2,), E_F64), T((2,), C64))) == ["bitcast_convert_c2"]
    assert spec.violated(bc(T((2,), C64), T((2, 2), E_F32))) == ["bitcast_convert_c2"]
    assert spec.violated(bc(T((2,), C64), T((2,), C64))) == []


def test_bitcast_convert_symbolic():
    spec = OPS["bitcast_convert"]
    a, b, c = z3.Ints("a b c")
    e = spec.constraint("bitcast_convert_c1")(bc(T((a,), E_F32), T((b, c), SI8)))
    assert dsl.is_symbolic(e)
    s = z3.Solver()
    s.add(e)
    assert s.check() == z3.sat and s.model().eval(c).as_long() == 4
    s.add(a != b)
    assert s.check() == z3.unsat
    e = spec.constraint("bitcast_convert_c1")(bc(T((a, b), E_F16), T((c,), E_F32)))
    s = z3.Solver()
    s.add(e, b != 2)
    assert s.check() == z3.unsat


def test_bitcast_convert_infer():
    spec = OPS["bitcast_convert"]
    assert spec.result_from_program == ("result",)
    assert spec.infer(bc(T((2,), E_F32), T((2, 4), SI8))) == {"result": T((2, 4), SI8)}
    assert spec.infer(bc(T((10, 2), E_F16), T((10,), E_F32))) == {"result": T((10,), E_F32)}
    assert spec.infer(bc(T((3,), UI32), T((3,), E_F32))) == {"result": T((3,), E_F32)}
    with pytest.raises(ValueError):
        spec.infer(spec.instance({"operand": T((2,), E_F32)}))


def run_bc(values, et, et2, out_shape):
    inst = bc(T(np.shape(values), et), T(out_shape, et2))
    return OPS["bitcast_convert"].semantics.fn(inst, np.asarray(values, dtype=et.numpy))[0]


def test_bitcast_convert_example():
    out = run_bc([0.0, 1.0], E_F32, SI8, (2, 4))
    assert out.dtype == np.int8
    assert out.tolist() == [[0, 0, 0, 0], [0, 0, -128, 63]]


def test_bitcast_convert_same_width_is_bit_exact():
    out = run_bc([1.0, -0.0], E_F32, UI32, (2,))
    assert out.tolist() == [0x3F800000, 0x80000000]
    nan_payload = np.array([0x7FC01234, 0xFF800001], dtype=np.uint32).view(np.float32)
    back = run_bc(run_bc(nan_payload, E_F32, SI32, (2,)), SI32, E_F32, (2,))
    assert back.view(np.uint32).tolist() == [0x7FC01234, 0xFF800001]
    assert run_bc([0x3C00], UI16, E_F16, (1,)).tolist() == [1.0]
    assert run_bc([0x3F80], UI16, E_BF16, (1,)).astype(np.float32).tolist() == [1.0]


def test_bitcast_convert_wider_result():
    out = run_bc([[0, 0, 0x80, 0x3F], [0, 0, 0, 0xC0]], UI8, E_F32, (2,))
    assert out.tolist() == [1.0, -2.0]
    out = run_bc([0, 0, 0, 0x3FF0], UI16, E_F64, ())   # f64 1.0 = 0x3FF0000000000000
    assert out.shape == () and float(out) == 1.0
    out = run_bc([[1, 2]], SI32, SI64, (1,))
    assert out.tolist() == [1 + (2 << 32)]


def test_bitcast_convert_nibbles_and_bools():
    out = run_bc([0x7A], UI8, UI4, (1, 2))          # low nibble first
    assert out.astype(np.int64).tolist() == [[0xA, 0x7]]
    out = run_bc([0xF1], UI8, SI4, (1, 2))
    assert out.astype(np.int64).tolist() == [[1, -1]]
    out = run_bc([[-1, 0]], SI4, UI8, (1,))
    assert out.tolist() == [0x0F]
    out = run_bc([[True, False, True, True]], I1, UI4, (1,))
    assert out.astype(np.int64).tolist() == [0b1101]
    out = run_bc([[True, False, True, True]], I1, SI4, (1,))
    assert out.astype(np.int64).tolist() == [0b1101 - 16]


def test_bitcast_convert_complex():
    z = np.array([complex(1.0, -2.0)], dtype=np.complex64)
    out = run_bc(z, C64, C64, (1,))
    assert out.tolist() == [complex(1.0, -2.0)]
    # one complex<f64> = (re bits, im bits) → two complex<f32> from its 16 bytes
    w = np.array([complex(2.0, 0.0)], dtype=np.complex128)
    out = run_bc(w, C128, C64, (1, 2))
    raw = w.view(np.uint8).tobytes()
    assert out.tobytes() == raw


# --------------------------------------------------------------------------
# reduce_precision
# --------------------------------------------------------------------------

def rp(x, e, m, et=E_F32):
    return ev("reduce_precision", x, et, exponent_bits=e, mantissa_bits=m)


def test_reduce_precision_constraints():
    spec = OPS["reduce_precision"]
    assert spec.labels == ["reduce_precision_c1", "reduce_precision_c2", "reduce_precision_c3"]
    assert [a.name for a in spec.attributes] == ["exponent_bits", "mantissa_bits"]
    assert spec.attributes[0].kind.to_mlir(5) == "5 : i32"
    ok = unary("reduce_precision", T((6,)), T((6,)), exponent_bits=5, mantissa_bits=2)
    assert spec.violated(ok) == []
    assert spec.infer(ok) == {"output": T((6,))}
    assert spec.violated(unary("reduce_precision", T((6,)), T((6,), E_F16), exponent_bits=5,
                               mantissa_bits=2)) == ["reduce_precision_c1"]
    assert spec.violated(unary("reduce_precision", T((6,)), T((6,)), exponent_bits=0,
                               mantissa_bits=2)) == ["reduce_precision_c2"]
    assert spec.violated(unary("reduce_precision", T((6,)), T((6,)), exponent_bits=1,
                               mantissa_bits=-1)) == ["reduce_precision_c3"]
    e, m = z3.Ints("e m")
    sym = unary("reduce_precision", T((6,)), T((6,)), exponent_bits=e, mantissa_bits=m)
    c2, c3 = spec.constraint("reduce_precision_c2")(sym), spec.constraint("reduce_precision_c3")(sym)
    assert dsl.is_symbolic(c2) and dsl.is_symbolic(c3)
    s = z3.Solver()
    s.add(c2, e < 1)
    assert s.check() == z3.unsat


def test_reduce_precision_example():
    # exponent_bits = 5, mantissa_bits = 2 on f32:
    # [-inf, +inf, NaN, 0.0, 1000.0, 1000000.0] → [-inf, +inf, NaN, 0.0, 1024.0, +inf]
    got = [rp(x, 5, 2) for x in (-INF, INF, NAN, 0.0, 1000.0, 1000000.0)]
    assert same_float(got[0], -INF) and same_float(got[1], INF) and math.isnan(got[2])
    assert same_float(got[3], 0.0) and got[4] == 1024 and same_float(got[5], INF)


def test_reduce_precision_rounding_ties_to_even():
    # 3 significant bits: 1.25 = 1.01b is exact; 1.125 = 1.001b is a tie → 1.0 (even)
    assert rp(1.125, 8, 2) == 1 and rp(1.375, 8, 2) == Fraction(3, 2)   # 1.011b tie → 1.10b
    assert rp(1.3, 8, 2) == Fraction(5, 4)
    assert same_float(rp(-0.0, 5, 2), -0.0)
    assert rp(-1000.0, 5, 2) == -1024
    # mantissa_bits = 0: only powers of two
    assert [rp(x, 8, 0) for x in (2.5, 1.4, 1.6, 0.7, -5.0)] == [2, 1, 2, Fraction(1, 2), -4]


def test_reduce_precision_one_bit_significand_ties():
    # 1.5 = 1.1b·2^0: a tie between 1 and 2.  Seed (significand 1.5 → 2) gives 2;
    # f32's biased exponent of 1.5 is 127 (odd), so XLA's even bit pattern is 2 too.
    assert rp(1.5, 8, 0) == 2
    # 3 = 1.1b·2^1 (biased exponent 128, even): seed → 4, XLA → 2
    got = rp(3.0, 8, 0)
    assert isinstance(got, ImplDefined) and sorted(got.alternatives.values()) == [2, 4]
    got = rp(-0.75, 8, 0)       # biased exponent 126: seed → -1, XLA → -0.5
    assert sorted(got.alternatives.values()) == [-1, Fraction(-1, 2)]
    got = rp(3.0, 2, 0)         # with 2 exponent bits (bias 1): 4 overflows, 2 is in range
    assert INF in got.alternatives.values() and 2 in got.alternatives.values()


def test_reduce_precision_to_f16_matches_numpy():
    """(5, 10) is binary16 apart from subnormals (flushed: no subnormals in the
    seed's steps): compare normal-range results with numpy's f32 → f16."""
    rng = np.random.default_rng(0)
    xs = rng.standard_normal(200).astype(np.float32) * np.float32(1000)
    for x in xs.tolist():
        assert rp(x, 5, 10) == Fraction(float(np.float16(x))), x
    assert same_float(rp(65520.0, 5, 10), INF)       # rounds up to 2^16: overflow
    assert rp(65519.0, 5, 10) == 65504               # largest f16
    assert rp(2.0 ** -14, 5, 10) == Fraction(1, 2 ** 14)   # smallest normal f16 kept
    assert same_float(rp(2.0 ** -15, 5, 10), 0.0)      # f16 subnormal range: flushed
    assert same_float(rp(-2.0 ** -20, 5, 10), -0.0)    # sign kept
    assert rp(2.0 ** -14 * (1 - 2.0 ** -12), 5, 10) == Fraction(1, 2 ** 14)  # rounds up into range


def test_reduce_precision_no_op_parts():
    x = float(np.float32(0.1))
    assert rp(x, 8, 23) == Fraction(x)
    assert rp(x, 11, 52) == Fraction(x)       # wider than f32: no-op
    sub = 2.0 ** -149 * 3                      # an f32 subnormal
    assert rp(sub, 8, 23) == Fraction(sub) and rp(sub, 20, 40) == Fraction(sub)
    # exponent_bits >= 8 keeps the subnormal range: rounding at its spacing 2^-149 * 2^(23-m)
    assert rp(2.0 ** -149 * 5, 8, 21) == Fraction(4, 2 ** 149)   # 5 → 4 (quantum 4·2^-149)
    assert rp(2.0 ** -149 * 6, 8, 21) == Fraction(8, 2 ** 149)   # 6 → 8 (tie → even multiple of 4)
    # f32 max rounded to fewer mantissa bits overflows to inf
    assert same_float(rp(float(np.finfo(np.float32).max), 8, 10), INF)
    assert same_float(rp(-float(np.finfo(np.float32).max), 8, 10), -INF)


def test_reduce_precision_one_exponent_bit():
    # bias 0: normal exponents [1, 0] are empty, so everything is ±0 or ±inf
    assert same_float(rp(1.0, 1, 5), 0.0) and same_float(rp(-1.5, 1, 5), -0.0)
    assert same_float(rp(2.0, 1, 5), INF) and same_float(rp(-3.0, 1, 5), -INF)


def test_reduce_precision_f64_and_fn_format():
    assert rp(1.0 + 2.0 ** -52, 11, 51, E_F64) == 1
    assert same_float(rp(1e300, 8, 23, E_F64), INF)       # f64 → f32 range → inf
    assert rp(448.0, 4, 3, E_F8E4M3FN) == 448
    got = rp(448.0, 4, 1, E_F8E4M3FN)                     # 1.11b·2^8 → tie → 2^9: beyond 448
    assert isinstance(got, ImplDefined) and set(map(str, got.alternatives.values())) == {"nan", "448"}
    got = rp(-240.0, 3, 3, E_F8E4M3FN)                    # 3 exponent bits: |r| >= 2^4 overflows
    assert isinstance(got, ImplDefined)
    assert rp(8.0, 3, 3, E_F8E4M3FN) == 8


def test_reduce_precision_wide_exponent_keeps_operand_subnormals():
    """2^-9 is f8E4M3FN's smallest subnormal; with 46 exponent bits the reduced
    type holds it exactly with one significant bit, so it comes back unchanged."""
    from fractions import Fraction
    from shlo_conform.spec.ops import OPS
    from shlo_conform.spec.types import E_F8E4M3FN, TensorType
    rp = OPS["reduce_precision"]
    t = TensorType((1,), E_F8E4M3FN)
    inst = rp.instance({"operand": t}, {"exponent_bits": 46, "mantissa_bits": 0}, {"output": t})
    r = rp.semantics.fn(inst, 2.0 ** -9)          # the value reading first; the field reading is 0
    assert list(r.alternatives.values()) == [Fraction(1, 2 ** 9), 0.0]
    r = rp.semantics.fn(inst, 5 * 2.0 ** -9)      # 1.25·2^-7: no tie
    assert list(r.alternatives.values())[0] == Fraction(1, 2 ** 7)


def test_reduce_precision_one_bit_tie_on_operand_subnormal_is_declared():
    """6·2^-9 = 1.5·2^-7 (an f8E4M3FN subnormal) is a tie at one significant
    bit: 2^-6 by the seed's ties-to-even on the significand, 2^-7 by the even
    bit pattern; both are declared."""
    from fractions import Fraction
    from shlo_conform.spec.dsl import ImplDefined
    from shlo_conform.spec.ops import OPS
    from shlo_conform.spec.types import E_F8E4M3FN, TensorType
    rp = OPS["reduce_precision"]
    t = TensorType((1,), E_F8E4M3FN)
    inst = rp.instance({"operand": t}, {"exponent_bits": 46, "mantissa_bits": 0}, {"output": t})
    r = rp.semantics.fn(inst, 6 * 2.0 ** -9)
    assert isinstance(r, ImplDefined)
    assert set(r.alternatives.values()) == {Fraction(1, 64), Fraction(1, 128)}


def test_reduce_precision_operand_subnormal_reads_two_ways():
    """bf16's smallest subnormal 2^-133 with 10 exponent and 5 mantissa bits:
    the value keeps it (one significant bit, well inside the reduced range),
    the stored field (rounded at 2^-126-5 = 2^-131) loses it to zero; both
    readings are declared."""
    from fractions import Fraction
    from shlo_conform.spec.dsl import ImplDefined
    from shlo_conform.spec.ops import OPS
    from shlo_conform.spec.types import E_BF16, TensorType
    rp = OPS["reduce_precision"]
    t = TensorType((1,), E_BF16)
    inst = rp.instance({"operand": t}, {"exponent_bits": 10, "mantissa_bits": 5}, {"output": t})
    r = rp.semantics.fn(inst, 2.0 ** -133)
    assert isinstance(r, ImplDefined)
    assert sorted(float(v) for v in r.alternatives.values()) == [0.0, 2.0 ** -133]
