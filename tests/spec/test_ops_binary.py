"""Binary, bitwise, comparison and sign-like op modules: constraints (concrete
and z3), type inference, element semantics.

Expected values come from the seed's Examples sections, from hand
computation, from exact arithmetic (Fractions, Python ints), from numpy's
IEEE arithmetic and the platform libm (`math.fmod`, `math.atan2`), and from
mpmath — never from the op module under test.
"""
import importlib
import math
import struct
from fractions import Fraction

import ml_dtypes
import mpmath
import numpy as np
import pytest
import z3

from shlo_conform.spec import dsl, ieee
from shlo_conform.spec.dsl import Approx, DataMovement, ImplDefined
from shlo_conform.spec.types import (C64, C128, E_BF16, E_F16, E_F32, E_F64, E_F8E4M3FN, I1, SI4, SI8, SI16,
                                     SI32, SI64, UI4, UI8, UI32, UI64, TensorType)
from tests.spec import exact_values

INF, NAN = math.inf, math.nan


def SPEC(name):
    """The op's declaration, imported by module name (`and`, `or`, `not` are keywords)."""
    return importlib.import_module(f"shlo_conform.spec.ops.{name}").SPEC


def T(shape, et=E_F32):
    return TensorType(tuple(shape), et)


def sign_bit(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0] >> 63


def same_float(got, expected) -> bool:
    """Equal as IEEE values: NaN matches NaN, and the sign of zero counts."""
    if isinstance(expected, float) and math.isnan(expected):
        return isinstance(got, float) and math.isnan(got)
    if isinstance(got, float) and isinstance(expected, float) and got == 0 == expected:
        return sign_bit(got) == sign_bit(expected)
    return got == expected and type(got) is not bool


def real_value(v, dps=60):
    return exact_values.real_value(v, dps)


def close(v, expected, rel=1e-15) -> bool:
    got = real_value(v)
    return abs(got - expected) <= rel * abs(expected)


# --------------------------------------------------------------------------
# Instances
# --------------------------------------------------------------------------

BINARY_SAME_TYPE = {
    # op: (a valid element type, an element type the Inputs table excludes)
    "subtract": (SI32, I1), "multiply": (C64, None), "divide": (E_F32, I1), "remainder": (SI64, I1),
    "power": (E_F64, I1), "maximum": (I1, None), "minimum": (C128, None), "and": (UI8, E_F32),
    "or": (I1, E_F16), "xor": (SI4, C64), "shift_left": (SI8, E_F32), "shift_right_arithmetic": (UI32, I1),
    "shift_right_logical": (SI64, E_BF16), "atan2": (E_F16, SI32),
}
UNARY_SAME_TYPE = {
    "not": (I1, E_F32), "popcnt": (UI4, E_F32), "count_leading_zeros": (SI32, I1),
    "negate": (C128, I1), "sign": (E_F8E4M3FN, UI8),
}


def binary(name, lhs, rhs, result, **attrs):
    return SPEC(name).instance({"lhs": lhs, "rhs": rhs}, attrs, {"result": result})


def unary(name, operand, result):
    return SPEC(name).instance({"operand": operand}, {}, {"result": result})


def clamp(mn, operand, mx, result):
    return SPEC("clamp").instance({"min": mn, "operand": operand, "max": mx}, {}, {"result": result})


def select(pred, on_true, on_false, result):
    return SPEC("select").instance({"pred": pred, "on_true": on_true, "on_false": on_false}, {},
                                   {"result": result})


def ev(name, *elements, et=E_F32, **attrs):
    """One element of an op's semantics for operands of element type `et`."""
    spec = SPEC(name)
    ops = {o.name: T((1,), et) for o in spec.operands}
    inst = spec.instance(ops, attrs, {})
    return spec.semantics.fn(inst, *elements)


def alternatives(v) -> dict:
    assert isinstance(v, ImplDefined), v
    assert v.why
    return v.alternatives


# --------------------------------------------------------------------------
# Constraints, concrete
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(BINARY_SAME_TYPE))
def test_binary_same_type_c1(name):
    et, excluded = BINARY_SAME_TYPE[name]
    spec = SPEC(name)
    assert spec.labels == [f"{name}_c1"]
    ok = binary(name, T((2, 3), et), T((2, 3), et), T((2, 3), et))
    assert spec.violated(ok) == [] and spec.types_outside_tables(ok) == []
    assert spec.infer(ok) == {"result": T((2, 3), et)}
    other = E_F64 if et != E_F64 else E_F32
    for bad in (binary(name, T((2, 3), et), T((3, 2), et), T((2, 3), et)),
                binary(name, T((2, 3), et), T((2, 3), et), T((2, 3), other)),
                binary(name, T((2, 3), et), T((2, 3, 1), et), T((2, 3), et))):
        assert spec.violated(bad) == [f"{name}_c1"]
    if excluded is not None:
        wrong = binary(name, T((2,), excluded), T((2,), excluded), T((2,), excluded))
        assert spec.types_outside_tables(wrong) == ["lhs", "rhs", "result"]


@pytest.mark.parametrize("name", sorted(UNARY_SAME_TYPE))
def test_unary_same_type_c1(name):
    et, excluded = UNARY_SAME_TYPE[name]
    spec = SPEC(name)
    assert spec.labels == [f"{name}_c1"]
    ok = unary(name, T((4,), et), T((4,), et))
    assert spec.violated(ok) == [] and spec.types_outside_tables(ok) == []
    assert spec.infer(ok) == {"result": T((4,), et)}
    assert spec.violated(unary(name, T((4,), et), T((5,), et))) == [f"{name}_c1"]
    assert spec.violated(unary(name, T((4,), et), T((4,), SI16 if et != SI16 else SI8))) == [f"{name}_c1"]
    assert spec.types_outside_tables(unary(name, T((4,), excluded), T((4,), excluded))) == ["operand", "result"]


def test_abs_constraints_and_inference():
    spec = SPEC("abs")
    assert spec.labels == ["abs_c1", "abs_c2"]
    ok = unary("abs", T((2, 2), C64), T((2, 2), E_F32))
    assert spec.violated(ok) == [] and spec.types_outside_tables(ok) == []
    assert spec.infer(ok) == {"result": T((2, 2), E_F32)}
    assert spec.infer(unary("abs", T((3,), C128), T((3,), E_F64)))["result"] == T((3,), E_F64)
    assert spec.infer(unary("abs", T((3,), SI8), T((3,), SI8)))["result"] == T((3,), SI8)
    assert spec.violated(unary("abs", T((2, 2), C64), T((2, 3), E_F32))) == ["abs_c1"]
    assert spec.violated(unary("abs", T((2, 2), C64), T((2, 2), C64))) == ["abs_c2"]
    assert spec.violated(unary("abs", T((2, 2), C64), T((2, 2), E_F64))) == ["abs_c2"]
    assert spec.violated(unary("abs", T((2,), SI32), T((2,), SI8))) == ["abs_c2"]
    assert spec.violated(unary("abs", T((2,), SI32), T((3,), SI8))) == ["abs_c1", "abs_c2"]
    # Unsigned operands and complex results are outside the tables.
    assert spec.types_outside_tables(unary("abs", T((2,), UI8), T((2,), UI8))) == ["operand", "result"]


def test_clamp_constraints():
    spec = SPEC("clamp")
    assert spec.labels == ["clamp_c1", "clamp_c2", "clamp_c3", "clamp_c4"]
    x = T((2, 3), SI32)
    assert spec.violated(clamp(x, x, x, x)) == []
    assert spec.violated(clamp(T((), SI32), x, T((), SI32), x)) == []           # rank-0 bounds
    assert spec.infer(clamp(T((), SI32), x, x, x)) == {"result": x}
    assert spec.violated(clamp(T((3, 2), SI32), x, x, x)) == ["clamp_c1"]
    assert spec.violated(clamp(T((1,), SI32), x, x, x)) == ["clamp_c1"]           # rank 1 but not operand's shape
    assert spec.violated(clamp(x, x, T((2,), SI32), x)) == ["clamp_c2"]
    assert spec.violated(clamp(T((), SI8), x, x, x)) == ["clamp_c3"]
    assert spec.violated(clamp(x, x, T((), UI32), x)) == ["clamp_c3"]
    assert spec.violated(clamp(x, x, x, T((2, 3), SI8))) == ["clamp_c4"]
    assert spec.violated(clamp(x, x, x, T((3, 2), SI32))) == ["clamp_c4"]


def test_select_constraints():
    spec = SPEC("select")
    assert spec.labels == ["select_c1", "select_c2"]
    x = T((2, 2), E_F16)
    assert spec.violated(select(T((2, 2), I1), x, x, x)) == []
    assert spec.violated(select(T((), I1), x, x, x)) == []
    assert spec.infer(select(T((), I1), x, x, x)) == {"result": x}
    assert spec.violated(select(T((2,), I1), x, x, x)) == ["select_c1"]
    assert spec.violated(select(T((2, 2), I1), x, T((2, 2), E_F32), x)) == ["select_c2"]
    assert spec.violated(select(T((2, 2), I1), x, x, T((2, 1), E_F16))) == ["select_c2"]
    assert spec.types_outside_tables(select(T((2, 2), SI8), x, x, x)) == ["pred"]


def test_compare_constraints_attributes_and_inference():
    spec = SPEC("compare")
    assert spec.labels == ["compare_c1", "compare_c2", "compare_c3"]
    attrs = {a.name: a for a in spec.attributes}
    assert attrs["comparison_direction"].choices == ("EQ", "NE", "GE", "GT", "LE", "LT")
    assert not attrs["comparison_direction"].optional
    assert attrs["compare_type"].choices == ("FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED")
    assert attrs["compare_type"].optional
    assert attrs["compare_type"].kind.to_mlir("TOTALORDER") == "#stablehlo<comparison_type TOTALORDER>"
    assert attrs["comparison_direction"].kind.to_mlir("LT") == "#stablehlo<comparison_direction LT>"

    def cmp(et, ct, lhs_shape=(2,), rhs_et=None, res=(2,)):
        attrs = {"comparison_direction": "LT"}
        if ct is not None:
            attrs["compare_type"] = ct
        return binary("compare", T(lhs_shape, et), T((2,), rhs_et or et), T(res, I1), **attrs)

    legal = {SI8: ["SIGNED"], UI32: ["UNSIGNED"], I1: ["UNSIGNED"], E_F32: ["FLOAT", "TOTALORDER"],
             E_BF16: ["FLOAT", "TOTALORDER"], C64: ["FLOAT"]}
    for et, ok_types in legal.items():
        assert spec.violated(cmp(et, None)) == []                              # absent: allowed
        for ct in ("FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"):
            assert spec.violated(cmp(et, ct)) == ([] if ct in ok_types else ["compare_c3"]), (et, ct)
    assert spec.violated(cmp(E_F32, "FLOAT", rhs_et=E_F64)) == ["compare_c1"]
    assert spec.violated(cmp(E_F32, "FLOAT", res=(3,))) == ["compare_c2"]
    assert spec.violated(cmp(E_F32, "FLOAT", lhs_shape=(2, 1), res=(2, 1))) == ["compare_c2"]
    assert spec.infer(cmp(SI32, "SIGNED")) == {"result": T((2,), I1)}
    assert spec.types_outside_tables(cmp(SI32, "SIGNED", res=(2,))) == []


def test_complex_constraints_and_inference():
    spec = SPEC("complex")
    assert spec.labels == ["complex_c1", "complex_c2", "complex_c3"]
    ok = binary("complex", T((2,), E_F32), T((2,), E_F32), T((2,), C64))
    assert spec.violated(ok) == []
    assert spec.infer(ok) == {"result": T((2,), C64)}
    assert spec.infer(binary("complex", T((3, 1), E_F64), T((3, 1), E_F64), T((3, 1), C128)))["result"] == T((3, 1), C128)
    assert spec.violated(binary("complex", T((2,), E_F32), T((2,), E_F64), T((2,), C64))) == ["complex_c1"]
    assert spec.violated(binary("complex", T((2,), E_F32), T((3,), E_F32), T((2,), C64))) == ["complex_c1"]
    assert spec.violated(binary("complex", T((2,), E_F32), T((2,), E_F32), T((3,), C64))) == ["complex_c2"]
    assert spec.violated(binary("complex", T((2,), E_F32), T((2,), E_F32), T((2,), C128))) == ["complex_c3"]
    assert spec.types_outside_tables(binary("complex", T((2,), E_F16), T((2,), E_F16), T((2,), C64))) == ["lhs", "rhs"]


# --------------------------------------------------------------------------
# Constraints, symbolic: the same functions feed the solver
# --------------------------------------------------------------------------


def _symbolic_instance(name):
    """An instance of `name` whose every dimension is its own z3 integer."""
    spec = SPEC(name)
    counter = iter(range(1000))

    def S(et):
        return T((z3.Int(f"d{next(counter)}"), z3.Int(f"d{next(counter)}")), et)

    et = {"abs": C64, "complex": E_F32, "compare": E_F32, "select": E_F32}.get(
        name, (BINARY_SAME_TYPE.get(name) or UNARY_SAME_TYPE.get(name) or (SI32,))[0])
    ops = {}
    for o in spec.operands:
        ops[o.name] = S(I1 if o.name == "pred" else et)
    res_et = {"abs": E_F32, "complex": C64, "compare": I1}.get(name, et)
    attrs = {"comparison_direction": "GE"} if name == "compare" else {}
    return spec, spec.instance(ops, attrs, {"result": S(res_et)})


ALL_OPS = sorted(set(BINARY_SAME_TYPE) | set(UNARY_SAME_TYPE) | {"abs", "clamp", "select", "compare", "complex"})


@pytest.mark.parametrize("name", ALL_OPS)
def test_constraints_accept_symbolic_dims_and_solve(name):
    spec, inst = _symbolic_instance(name)
    results = [c(inst) for c in spec.constraints]
    assert any(dsl.is_symbolic(r) for r in results), name
    s = z3.Solver()
    for r in results:
        s.add(r if dsl.is_symbolic(r) else z3.BoolVal(bool(r)))
    assert s.check() == z3.sat
    m = s.model()

    def concrete(t):
        return TensorType(tuple(m.eval(d, model_completion=True).as_long() for d in t.shape), t.element_type)

    solved = spec.instance({k: concrete(v) for k, v in inst.operands.items()}, dict(inst.attributes),
                           {"result": concrete(inst.result)})
    assert spec.violated(solved) == []
    # Forcing one operand's first dim to differ from the result's must break a constraint
    # (except where a rank-0 operand would be allowed — not the case at rank 2).
    first = spec.operands[-1].name
    s.add(inst.operands[first].shape[0] != inst.result.shape[0])
    assert s.check() == z3.unsat, name


def test_rank_zero_alternative_is_decided_concretely():
    spec = SPEC("clamp")
    n = z3.Int("n")
    inst = clamp(T((), E_F32), T((n,), E_F32), T((n + 1,), E_F32), T((n,), E_F32))
    assert spec.constraint("clamp_c1")(inst) is True
    c2 = spec.constraint("clamp_c2")(inst)
    s = z3.Solver()
    s.add(c2)
    assert s.check() == z3.unsat        # n + 1 == n has no solution


# --------------------------------------------------------------------------
# Semantics
# --------------------------------------------------------------------------


def test_subtract():
    assert ev("subtract", 6, 5, et=SI32) == 1 and ev("subtract", -128, 1, et=SI8) == -129   # exact; oracle wraps
    # Seed example: [[6, 8], [10, 12]] - [[5, 6], [7, 8]] = [[1, 2], [3, 4]] (f32).
    assert [ev("subtract", a, b) for a, b in [(6.0, 5.0), (8.0, 6.0), (10.0, 7.0), (12.0, 8.0)]] == [1, 2, 3, 4]
    assert ev("subtract", 0.1, 0.3, et=E_F64) == Fraction(0.1) - Fraction(0.3)
    z = ev("subtract", 0.0, 0.0)
    assert same_float(z, 0.0)                                  # x - x = +0 in round-to-nearest
    assert same_float(ev("subtract", -0.0, 0.0), -0.0)
    assert same_float(ev("subtract", 0.0, -0.0), 0.0)
    assert same_float(ev("subtract", INF, INF), NAN) and same_float(ev("subtract", 1.0, INF), -INF)
    re, im = ev("subtract", complex(1.5, -0.0), complex(0.5, 0.0), et=C64)
    assert re == 1 and same_float(im, -0.0)


def test_multiply():
    # Seed example: [[1, 2], [3, 4]] * [[5, 6], [7, 8]] = [[5, 12], [21, 32]] (i32).
    assert [ev("multiply", a, b, et=SI32) for a, b in [(1, 5), (2, 6), (3, 7), (4, 8)]] == [5, 12, 21, 32]
    assert [ev("multiply", a, b, et=I1) for a, b in [(False, False), (False, True), (True, False), (True, True)]] \
        == [False, False, False, True]
    assert ev("multiply", 0.1, 3.0, et=E_F64) == Fraction(0.1) * 3
    assert same_float(ev("multiply", -0.0, 5.0), -0.0) and same_float(ev("multiply", -2.0, 0.0), -0.0)
    assert same_float(ev("multiply", 0.0, INF), NAN) and same_float(ev("multiply", -1.0, INF), -INF)
    spec = SPEC("multiply")
    assert spec.semantics.accuracy_for(binary("multiply", T((1,), C64), T((1,), C64), T((1,), C64))) == "approx"
    assert spec.semantics.accuracy_for(binary("multiply", T((1,), E_F32), T((1,), E_F32), T((1,), E_F32))) == "exact"


def _f32_correctly_rounded(q: Fraction) -> np.float32:
    """The f32 nearest to q (checked against both neighbours)."""
    c = np.float32(float(q))
    for n in (np.nextafter(c, np.float32(-INF)), np.nextafter(c, np.float32(INF))):
        assert abs(Fraction(float(c)) - q) <= abs(Fraction(float(n)) - q)
    return c


def test_divide_floats():
    # Seed example (f32): [17.1, -17.1, 17.1, -17.1] / [3, 3, -3, -3] = ±5.66666651 — but
    # 5.66666651 is 17/3 in f32; 17.1/3 is 5.7.  The example's results are those of lhs = ±17.0
    # (a finding, see divide.py).  Both checked against exact arithmetic and numpy's IEEE division.
    for mag, quotient in ((17.0, 5.66666651), (float(np.float32(17.1)), 5.70000029)):
        for lhs, rhs, sign in [(mag, 3.0, 1), (-mag, 3.0, -1), (mag, -3.0, -1), (-mag, -3.0, 1)]:
            q = ev("divide", lhs, rhs)
            assert q == Fraction(lhs) / Fraction(rhs)
            assert _f32_correctly_rounded(q) == np.float32(sign * quotient)
            assert np.float32(lhs) / np.float32(rhs) == np.float32(sign * quotient)
    assert ev("divide", 1.0, 3.0, et=E_F64) == Fraction(1, 3)
    assert same_float(ev("divide", 1.0, 0.0), INF) and same_float(ev("divide", -1.0, 0.0), -INF)
    assert same_float(ev("divide", 1.0, -0.0), -INF) and same_float(ev("divide", 0.0, 0.0), NAN)
    assert same_float(ev("divide", -0.0, 4.0), -0.0) and same_float(ev("divide", 1.0, -INF), -0.0)
    assert same_float(ev("divide", INF, INF), NAN)


def test_divide_integers():
    assert ev("divide", 7, 2, et=SI32) == 3 and ev("divide", -7, 2, et=SI32) == -3   # truncation
    assert ev("divide", 7, -2, et=SI32) == -3 and ev("divide", -7, -2, et=SI32) == 3
    assert ev("divide", 255, 16, et=UI8) == 15
    assert set(alternatives(ev("divide", 5, 0, et=SI8)).values()) == {-1, 0}
    assert set(alternatives(ev("divide", 5, 0, et=UI8)).values()) == {255, 0}     # all ones unsigned
    alts = alternatives(ev("divide", -128, -1, et=SI8))
    assert alts["INT_MIN (wraps, XLA)"] == -128 and 127 in alts.values()
    assert ev("divide", -127, -1, et=SI8) == 127


def test_remainder_integers_seed_example_and_impl_defined():
    # Seed example (i64): [17, -17, 17, -17] % [3, 3, -3, -3] = [2, -2, 2, -2].
    got = [ev("remainder", a, b, et=SI64) for a, b in [(17, 3), (-17, 3), (17, -3), (-17, -3)]]
    assert got == [2, -2, 2, -2]
    assert ev("remainder", 250, 7, et=UI8) == 250 - 35 * 7
    assert alternatives(ev("remainder", 9, 0, et=SI32)) == {"dividend (XLA)": 9}
    assert list(alternatives(ev("remainder", -2**31, -1, et=SI32)).values()) == [0]


@pytest.mark.parametrize("a, b", [(5.5, 2.0), (-5.5, 2.0), (5.5, -2.0), (-5.5, -2.0), (1e308, 3e-308),
                                  (7.0, 0.1), (-0.1, 1e-300), (1.0, 3.0), (5e-324, 1e-320), (1e300, 7.0)])
def test_remainder_floats_match_libm_fmod(a, b):
    r = ev("remainder", a, b, et=E_F64)
    expected = math.fmod(a, b)                      # C fmod: exact, sign of the dividend
    if expected == 0:
        assert same_float(r, expected)
    else:
        assert r == Fraction(expected)
        assert abs(r) < abs(Fraction(b)) and (r > 0) == (a > 0)


def test_remainder_float_specials():
    assert same_float(ev("remainder", -6.0, 3.0), -0.0)             # zero takes the dividend's sign
    assert same_float(ev("remainder", 6.0, -3.0), 0.0)
    assert same_float(ev("remainder", -0.0, 3.0), -0.0)
    assert same_float(ev("remainder", INF, 3.0), NAN) and same_float(ev("remainder", 1.0, 0.0), NAN)
    assert same_float(ev("remainder", -1.5, INF), -1.5) and same_float(ev("remainder", NAN, 1.0), NAN)
    assert alternatives(ev("remainder", 1 + 1j, 1j, et=C64)) == {}   # TBD in the seed (#997)


def test_power_seed_example():
    # Seed example: [-2.0, -0.0, -36.0, 5.0, 3.0, 10000.0] ** [2.0, 2.0, 1.1, 2.0, -1.0, 10.0]
    # = [4.0, 0.0, -nan, 25.0, 0.333333343, inf] (f32 values, although typed f64 — see power.py).
    got = [ev("power", a, b, et=E_F64) for a, b in
           [(-2.0, 2.0), (-0.0, 2.0), (-36.0, 1.1), (5.0, 2.0), (3.0, -1.0), (10000.0, 10.0)]]
    assert got[0] == 4 and same_float(got[1], 0.0) and same_float(got[2], NAN) and got[3] == 25
    assert got[4] == Fraction(1, 3) and np.float32(1 / 3) == np.float32(0.333333343)
    assert got[5] == 10 ** 40 and 1e40 > float(np.finfo(np.float32).max) and 1e40 < float(np.finfo(np.float64).max)


@pytest.mark.parametrize("x, y, expected", [
    # IEEE 754-2019 §9.2.1 pow special values.
    (NAN, 0.0, 1.0), (NAN, -0.0, 1.0), (INF, 0.0, 1.0), (1.0, NAN, 1.0), (1.0, -INF, 1.0),
    (-0.0, -3.0, -INF), (0.0, -3.0, INF), (-0.0, -2.0, INF), (-0.0, -0.5, INF), (0.0, -INF, INF),
    (-0.0, -INF, INF), (-0.0, INF, 0.0), (-0.0, 3.0, -0.0), (0.0, 3.0, 0.0), (-0.0, 2.0, 0.0),
    (-0.0, 0.5, 0.0), (-1.0, INF, 1.0), (-1.0, -INF, 1.0), (0.5, INF, 0.0), (-0.5, INF, 0.0),
    (2.0, INF, INF), (-2.0, INF, INF), (0.5, -INF, INF), (2.0, -INF, 0.0), (INF, -INF, 0.0),
    (INF, -0.5, 0.0), (INF, 0.5, INF), (-INF, -3.0, -0.0), (-INF, 3.0, -INF), (-INF, -2.0, 0.0),
    (-INF, 2.0, INF), (-INF, 0.5, INF), (-INF, -0.5, 0.0), (-2.0, 0.5, NAN), (NAN, 1.0, NAN),
    (2.0, NAN, NAN), (-INF, 2.0 ** 60, INF),
])
def test_power_special_values(x, y, expected):
    assert same_float(ev("power", x, y, et=E_F64), expected)


def test_power_finite():
    assert ev("power", -2.0, 3.0) == -8 and ev("power", 2.0, -3.0) == Fraction(1, 8)
    assert ev("power", 1.5, 64.0, et=E_F64) == Fraction(3, 2) ** 64
    v = ev("power", 2.0, 0.5, et=E_F64)
    assert isinstance(v, Approx) and close(v, mpmath.sqrt(2))
    v = ev("power", -2.0, 65.0, et=E_F64)           # beyond the integer window, exact all the same (exact_power):
    assert v == -Fraction(2) ** 65                     # a power of two; the odd exponent keeps the sign
    v = ev("power", -3.0, 65.0, et=E_F64)           # 3^65 is 104 bits: left to the enclosure
    assert isinstance(v, Approx) and int(real_value(v)) == -3 ** 65
    v = ev("power", -3.0, 100.0, et=E_F64)
    assert int(real_value(v)) == 3 ** 100                  # 48 digits: exact at 60
    assert close(ev("power", 10.0, -0.25, et=E_F64), mpmath.mpf(10) ** mpmath.mpf(-0.25))
    spec = SPEC("power")
    for et, acc in ((SI32, "exact"), (E_F32, "approx"), (C64, "approx")):
        assert spec.semantics.accuracy_for(binary("power", T((1,), et), T((1,), et), T((1,), et))) == acc


def test_power_integers():
    assert ev("power", 2, 10, et=SI32) == 1024 and ev("power", -3, 3, et=SI32) == -27
    assert ev("power", 0, 0, et=SI32) == 1 and ev("power", 7, 0, et=UI8) == 1
    assert ev("power", 1, -5, et=SI32) == 1
    assert ev("power", 2, 31, et=SI32) == 2 ** 31                    # exact; the oracle wraps
    assert set(alternatives(ev("power", -1, -3, et=SI32)).values()) == {-1, 0}
    assert set(alternatives(ev("power", -1, -2, et=SI32)).values()) == {1, 0}
    assert list(alternatives(ev("power", 2, -1, et=SI32)).values()) == [0]
    assert list(alternatives(ev("power", 0, -1, et=SI32)).values()) == [0]
    wrapped = (3 ** 40) % 2 ** 32
    wrapped = wrapped - 2 ** 32 if wrapped >= 2 ** 31 else wrapped
    assert list(alternatives(ev("power", 3, 40, et=SI32)).values()) == [wrapped]
    assert list(alternatives(ev("power", 2, 2 ** 62, et=SI64)).values()) == [0]
    assert ev("power", -1, 2 ** 62 + 1, et=SI64) == -1


def test_maximum_minimum_seed_examples():
    lhs, rhs = [1, 2, 7, 8], [5, 6, 3, 4]
    assert [ev("maximum", a, b, et=SI32) for a, b in zip(lhs, rhs)] == [5, 6, 7, 8]
    assert [ev("minimum", a, b, et=SI32) for a, b in zip(lhs, rhs)] == [1, 2, 3, 4]
    bools = [(False, False), (False, True), (True, False), (True, True)]
    assert [ev("maximum", a, b, et=I1) for a, b in bools] == [False, True, True, True]
    assert [ev("minimum", a, b, et=I1) for a, b in bools] == [False, False, False, True]
    assert ev("maximum", 250, 3, et=UI8) == 250 and ev("minimum", -128, 127, et=SI8) == -128


def test_maximum_minimum_ieee_2019():
    for a, b in ((-0.0, 0.0), (0.0, -0.0)):
        assert same_float(ev("maximum", a, b), 0.0) and same_float(ev("minimum", a, b), -0.0)
    for a, b in ((NAN, 1.0), (1.0, NAN), (NAN, INF), (-INF, NAN)):
        assert same_float(ev("maximum", a, b), NAN) and same_float(ev("minimum", a, b), NAN)
    assert same_float(ev("maximum", -INF, -1.0), -1.0) and same_float(ev("minimum", -INF, -1.0), -INF)
    assert same_float(ev("maximum", -0.0, -0.0), -0.0) and same_float(ev("minimum", 0.0, 0.0), 0.0)
    assert same_float(ev("maximum", 1e-45, -0.0), 1e-45)


def test_maximum_minimum_complex_lexicographic():
    assert ev("maximum", 1 + 5j, 2 + 0j, et=C64) == (2, 0)
    assert ev("maximum", 1 + 5j, 1 + 3j, et=C64) == (1, 5) and ev("minimum", 1 + 5j, 1 + 3j, et=C64) == (1, 3)
    assert ev("minimum", -1 + 9j, 2 - 9j, et=C64) == (-1, 9)
    assert ev("maximum", complex(-0.0, 1.0), complex(0.0, 0.0), et=C64) == (-0.0, 1.0)
    nan = alternatives(ev("maximum", complex(NAN, 0), 1 + 1j, et=C64))
    assert nan["lhs"][1] == 0 and nan["rhs"] == (1, 1) and all(math.isnan(c) for c in nan["NaN"])
    zeros = alternatives(ev("minimum", complex(-0.0, 0.0), complex(0.0, 0.0), et=C64))
    assert sign_bit(zeros["lhs"][0]) == 1 and sign_bit(zeros["rhs"][0]) == 0


def test_bitwise_seed_examples():
    pairs = [(1, 5), (2, 6), (3, 7), (4, 8)]
    assert [ev("and", a, b, et=SI32) for a, b in pairs] == [1, 2, 3, 0]
    assert [ev("or", a, b, et=SI32) for a, b in pairs] == [5, 6, 7, 12]
    assert [ev("xor", a, b, et=SI32) for a, b in pairs] == [4, 4, 4, 12]
    bools = [(False, False), (False, True), (True, False), (True, True)]
    assert [ev("and", a, b, et=I1) for a, b in bools] == [False, False, False, True]
    assert [ev("or", a, b, et=I1) for a, b in bools] == [False, True, True, True]
    assert [ev("xor", a, b, et=I1) for a, b in bools] == [False, True, True, False]
    assert all(type(ev(n, True, False, et=I1)) is bool for n in ("and", "or", "xor"))
    assert [ev("not", x, et=SI32) for x in (1, 2, 3, 4)] == [-2, -3, -4, -5]
    assert [ev("not", x, et=I1) for x in (True, False)] == [False, True]


def test_bitwise_on_twos_complement_patterns():
    assert ev("and", -1, 0x5A, et=SI8) == 0x5A and ev("or", -128, 1, et=SI8) == -127
    assert ev("xor", -1, 0x0F, et=SI8) == -16                           # 0xFF ^ 0x0F = 0xF0
    assert ev("not", 0, et=UI8) == 255 and ev("not", 0xF0, et=UI8) == 0x0F and ev("not", 5, et=UI4) == 10
    assert ev("not", -8, et=SI4) == 7 and ev("not", 0, et=SI64) == -1


def test_shifts_seed_examples():
    lhs, rhs = [-1, -2, 3, 4, 7, 7], [1, 2, 3, 6, 7, 8]
    assert [ev("shift_left", a, b, et=SI8) for a, b in zip(lhs, rhs)] == [-2, -8, 24, 0, -128, 0]
    lhs, rhs = [-1, -128, -36, 5, 3, 7], [1, 2, 3, 2, 1, 3]
    assert [ev("shift_right_arithmetic", a, b, et=SI8) for a, b in zip(lhs, rhs)] == [-1, -32, -5, 1, 1, 0]
    assert [ev("shift_right_logical", a, b, et=SI8) for a, b in zip(lhs, rhs)] == [127, 32, 27, 1, 1, 0]


def test_shift_out_of_range_amounts():
    assert ev("shift_left", 1, 9, et=SI8) == 0 and ev("shift_left", 1, 200, et=UI8) == 0   # as the seed's 7 << 8
    assert set(alternatives(ev("shift_left", 1, -1, et=SI8)).values()) == {0, -128}   # -1 mod 8 = 7
    assert set(alternatives(ev("shift_right_logical", -1, 8, et=SI8)).values()) == {0, -1}
    assert set(alternatives(ev("shift_right_logical", 0x80, 9, et=UI8)).values()) == {0, 0x40}
    assert set(alternatives(ev("shift_right_arithmetic", -128, 9, et=SI8)).values()) == {-1, -64}
    assert set(alternatives(ev("shift_right_arithmetic", 64, -7, et=SI8)).values()) == {0, 32}
    assert ev("shift_right_logical", 2 ** 63, 63, et=UI64) == 1


def test_shift_right_arithmetic_unsigned():
    assert ev("shift_right_arithmetic", 0x40, 1, et=UI8) == 0x20                 # top bit clear: unambiguous
    assert set(alternatives(ev("shift_right_arithmetic", 0x80, 1, et=UI8)).values()) == {0xC0, 0x40}
    alts = alternatives(ev("shift_right_arithmetic", 0x80, 8, et=UI8))
    assert len(alts) == 4 and set(alts.values()) == {0xFF, 0x80, 0}


def test_popcnt_and_clz():
    assert [ev("popcnt", x, et=SI8) for x in (0, 1, 2, 127)] == [0, 1, 1, 7]          # seed example
    assert ev("popcnt", -1, et=SI8) == 8 and ev("popcnt", -128, et=SI8) == 1 and ev("popcnt", 15, et=UI4) == 4
    assert ev("popcnt", -1, et=SI64) == 64
    assert [ev("count_leading_zeros", x, et=SI8) for x in (0, 1, 127, -1)] == [8, 7, 1, 0]   # seed example
    assert ev("count_leading_zeros", 1, et=SI32) == 31 and ev("count_leading_zeros", 0, et=UI4) == 4
    assert ev("count_leading_zeros", 2 ** 31, et=UI32) == 0 and ev("count_leading_zeros", 1, et=UI32) == 31


def test_clamp_semantics():
    # Seed example: clamp([5, 10, 15], [3, 13, 23], [10, 15, 20]) = [5, 13, 20].
    got = [ev("clamp", lo, x, hi, et=SI32) for lo, x, hi in [(5, 3, 10), (10, 13, 15), (15, 23, 20)]]
    assert got == [5, 13, 20]
    assert ev("clamp", 5, 0, 1, et=SI32) == 1                          # min > max: max wins (formula)
    assert same_float(ev("clamp", 0.0, NAN, 1.0), NAN)
    assert same_float(ev("clamp", NAN, 0.5, 1.0), NAN)                 # IEEE maximum propagates NaN
    assert same_float(ev("clamp", 0.0, -0.0, 1.0), 0.0)                # maximum(-0, +0) = +0
    assert same_float(ev("clamp", -1.0, 0.0, -0.0), -0.0)              # minimum(+0, -0) = -0
    assert ev("clamp", False, True, False, et=I1) is False
    alts = alternatives(ev("clamp", 0j, complex(NAN, 0.0), 1 + 1j, et=C64))
    assert alts["maximum→rhs"] == (0.0, 0.0)
    assert any(all(math.isnan(c) for c in v) for v in alts.values())


def test_select_semantics_move_bits():
    spec = SPEC("select")
    assert isinstance(spec.semantics, DataMovement)
    inst = select(T((2, 2), I1), T((2, 2), SI32), T((2, 2), SI32), T((2, 2), SI32))
    pred = np.array([[False, True], [True, False]])
    (r,) = spec.semantics.fn(inst, pred, np.array([[1, 2], [3, 4]], np.int32), np.array([[5, 6], [7, 8]], np.int32))
    assert r.dtype == np.int32 and r.tolist() == [[5, 2], [3, 8]]            # seed example
    nan_bits = np.array([0x7FC00001, 0xFFC00002], np.uint32).view(np.float32)
    inst = select(T((), I1), T((2,), E_F32), T((2,), E_F32), T((2,), E_F32))
    (r,) = spec.semantics.fn(inst, np.array(True), nan_bits, np.zeros(2, np.float32))
    assert r.view(np.uint32).tolist() == [0x7FC00001, 0xFFC00002]          # payloads survive
    a = np.array([1, -2], ml_dtypes.bfloat16)
    (r,) = spec.semantics.fn(inst, np.array(False), np.zeros(2, ml_dtypes.bfloat16), a)
    assert r.dtype == a.dtype and r.tolist() == a.tolist()


def cmp(direction, a, b, et=E_F32, compare_type=None):
    attrs = {"comparison_direction": direction}
    if compare_type is not None:
        attrs["compare_type"] = compare_type
    return ev("compare", a, b, et=et, **attrs)


DIRS = ("EQ", "NE", "GE", "GT", "LE", "LT")


def test_compare_seed_example_and_integers():
    assert [cmp("LT", 1.0, 1.1, compare_type="FLOAT"), cmp("LT", 3.0, 2.9, compare_type="FLOAT")] == [True, False]
    table = {"EQ": (False, True, False), "NE": (True, False, True), "GE": (False, True, True),
             "GT": (False, False, True), "LE": (True, True, False), "LT": (True, False, False)}
    for d, expected in table.items():
        assert tuple(cmp(d, a, 0, et=SI8, compare_type="SIGNED") for a in (-5, 0, 5)) == expected
        assert tuple(cmp(d, a, 128, et=UI8) for a in (3, 128, 255)) == expected
        assert tuple(cmp(d, a, b, et=I1, compare_type="UNSIGNED")
                     for a, b in ((False, True), (True, True), (True, False))) == expected
        assert tuple(cmp(d, a, 0.0) for a in (-1.5, -0.0, INF)) == expected          # -0 == +0


def test_compare_float_nan_is_unordered():
    for d in DIRS:
        for a, b in ((NAN, 1.0), (1.0, NAN), (NAN, NAN), (NAN, INF)):
            assert cmp(d, a, b, compare_type="FLOAT") is (d == "NE")


def test_compare_totalorder():
    neg_nan = -NAN if sign_bit(-NAN) else struct.unpack("<d", struct.pack("<Q", 0xFFF8000000000000))[0]
    ladder = [neg_nan, -INF, -1.0, -5e-324, -0.0, 0.0, 5e-324, 1.0, INF, NAN]
    for i, a in enumerate(ladder):
        for j, b in enumerate(ladder):
            if i == j or {i, j} == {4, 5}:
                continue
            for d, holds in (("LT", i < j), ("GT", i > j), ("LE", i < j), ("GE", i > j), ("EQ", False), ("NE", True)):
                assert cmp(d, a, b, compare_type="TOTALORDER") is holds, (d, a, b)
    # -0 vs +0 and a NaN vs itself: XLA's totalOrder keys vs the seed's "with compareQuietEqual".
    assert set(alternatives(cmp("LT", -0.0, 0.0, compare_type="TOTALORDER")).values()) == {True, False}
    assert alternatives(cmp("EQ", -0.0, 0.0, compare_type="TOTALORDER")) == \
        {"totalOrder alone (XLA)": False, "totalOrder with compareQuietEqual": True}
    assert alternatives(cmp("EQ", NAN, NAN, compare_type="TOTALORDER"))["totalOrder alone (XLA)"] is True
    assert cmp("LE", -0.0, 0.0, compare_type="TOTALORDER") is True      # both readings agree
    # -0 GE +0: false by totalOrder keys, true when "or equal" means quiet-equal.
    assert alternatives(cmp("GE", -0.0, 0.0, compare_type="TOTALORDER")) == \
        {"totalOrder alone (XLA)": False, "totalOrder with compareQuietEqual": True}
    assert cmp("EQ", 0.0, 0.0, compare_type="TOTALORDER") is True
    assert cmp("EQ", 2.5, 2.5, et=E_BF16, compare_type="TOTALORDER") is True


def test_compare_complex_lexicographic():
    expect = {("LT", 1 + 2j, 1 + 3j): True, ("LT", 1 + 2j, 2 - 9j): True, ("GT", 2 + 0j, 1 + 9j): True,
              ("LE", 1 + 3j, 1 + 3j): True, ("GE", 1 + 2j, 1 + 3j): False, ("EQ", 1 + 2j, 1 + 2j): True,
              ("NE", 1 + 2j, 1 + 3j): True, ("EQ", complex(-0.0, 0.0), 0j): True}
    for (d, a, b), holds in expect.items():
        assert cmp(d, a, b, et=C64) is holds and cmp(d, a, b, et=C128, compare_type="FLOAT") is holds
    for d in DIRS:
        assert cmp(d, complex(NAN, 0), complex(NAN, 0), et=C64) is (d == "NE")
        assert cmp(d, complex(1, NAN), complex(1, 0), et=C64) is (d == "NE")


def test_complex_semantics():
    re, im = ev("complex", -0.0, NAN, et=E_F32)
    assert same_float(re, -0.0) and same_float(im, NAN)
    assert ev("complex", 1.0, 2.0, et=E_F64) == (1.0, 2.0)                 # seed example pairs
    assert ev("complex", 3.0, 4.0) == (3.0, 4.0)


def pi_value(v):
    assert isinstance(v, Approx)
    return real_value(v)


def test_atan2():
    # Seed example: atan2([0.0, 1.0, -1.0], [0.0, 0.0, 0.0]) = [0.0, pi/2, -pi/2].
    assert same_float(ev("atan2", 0.0, 0.0), 0.0)
    assert close(ev("atan2", 1.0, 0.0), mpmath.pi / 2) and close(ev("atan2", -1.0, 0.0), -mpmath.pi / 2)
    assert np.float32(float(real_value(ev("atan2", 1.0, 0.0)))) == np.float32(1.57079637)
    # IEEE 754-2019 / C99 F.9.1.4 special values.
    assert same_float(ev("atan2", -0.0, 0.0), -0.0) and same_float(ev("atan2", -0.0, 2.0), -0.0)
    assert close(ev("atan2", -0.0, -0.0), -mpmath.pi) and close(ev("atan2", 0.0, -3.0), mpmath.pi)
    assert close(ev("atan2", -2.0, -0.0), -mpmath.pi / 2)
    assert close(ev("atan2", INF, -INF), 3 * mpmath.pi / 4) and close(ev("atan2", -INF, INF), -mpmath.pi / 4)
    assert close(ev("atan2", -INF, 7.0), -mpmath.pi / 2)
    assert same_float(ev("atan2", -1.0, INF), -0.0) and close(ev("atan2", 1.0, -INF), mpmath.pi)
    assert same_float(ev("atan2", NAN, 1.0), NAN) and same_float(ev("atan2", INF, NAN), NAN)
    for y, x in ((1.0, 2.0), (-3.0, -0.5), (1e-300, 1e300), (5.0, -1e-3)):
        v = ev("atan2", y, x, et=E_F64)
        assert isinstance(v, Approx) and abs(float(real_value(v)) - math.atan2(y, x)) <= 4e-16 * abs(math.atan2(y, x))
    inst = binary("atan2", T((1,), E_F32), T((1,), E_F32), T((1,), E_F32))
    assert SPEC("atan2").semantics.accuracy_for(inst) == "approx"


def test_abs_semantics():
    assert [ev("abs", x, et=SI32) for x in (-2, 0, 2)] == [2, 0, 2]          # seed example
    alts = alternatives(ev("abs", -128, et=SI8))
    assert set(alts.values()) == {-128, 127}
    assert same_float(ev("abs", -0.0), 0.0) and same_float(ev("abs", -INF), INF)
    assert same_float(ev("abs", NAN), NAN) and ev("abs", -1.5) == 1.5
    spec = SPEC("abs")
    assert spec.semantics.accuracy_for(unary("abs", T((1,), C64), T((1,), E_F32))) == "approx"
    assert spec.semantics.accuracy_for(unary("abs", T((1,), E_F32), T((1,), E_F32))) == "exact"


def test_negate_semantics():
    assert [ev("negate", x, et=SI32) for x in (0, -2)] == [0, 2]             # seed example
    re, im = ev("negate", complex(2.5, 0.0), et=C64)                         # seed example: (-2.5, -0.0)
    assert re == -2.5 and same_float(im, -0.0)
    assert same_float(ev("negate", 0.0), -0.0) and same_float(ev("negate", -INF), INF)
    assert ev("negate", 1, et=UI8) == 255 and ev("negate", 0, et=UI8) == 0 and ev("negate", 255, et=UI8) == 1
    assert set(alternatives(ev("negate", -8, et=SI4)).values()) == {-8, 7}
    assert set(alternatives(ev("negate", 128, et=UI8)).values()) == {128, 127}


def test_sign_semantics():
    # Seed example (f32): [-inf, inf, NaN, -10, -0.0, 0.0, 10] -> [-1, 1, NaN, -1, -0.0, 0.0, 1].
    got = [ev("sign", x) for x in (-INF, INF, NAN, -10.0, -0.0, 0.0, 10.0)]
    for g, e in zip(got, (-1.0, 1.0, NAN, -1.0, -0.0, 0.0, 1.0)):
        assert same_float(g, e)
    assert [ev("sign", x, et=SI8) for x in (-128, -5, 0, 7, 127)] == [-1, -1, 0, 1, 1]
    assert same_float(ev("sign", 5e-324, et=E_F64), 1.0)
    re, im = ev("sign", complex(1.0, NAN), et=C64)
    assert math.isnan(re) and math.isnan(im)


def test_complex_operands_go_to_annex_g(monkeypatch):
    from shlo_conform.spec import annex_g
    seen = []
    for fn in ("cmul", "cdiv", "cpow", "catan2"):
        monkeypatch.setattr(annex_g, fn, lambda a, b, fn=fn: seen.append((fn, a, b)) or ("re", "im"))
    for fn in ("cabs", "csign"):
        monkeypatch.setattr(annex_g, fn, lambda z, fn=fn: seen.append((fn, z)) or "r")
    assert ev("multiply", 1j, 2j, et=C64) == ("re", "im")
    assert ev("divide", 1j, 2j, et=C128) == ("re", "im")
    assert ev("power", 1j, 2j, et=C64) == ("re", "im")
    assert ev("atan2", 1j, 2j, et=C64) == ("re", "im")
    assert ev("abs", 3 + 4j, et=C64) == "r" and ev("sign", 3 + 4j, et=C64) == "r"
    assert [s[0] for s in seen] == ["cmul", "cdiv", "cpow", "catan2", "cabs", "csign"]


def test_ieee_helpers():
    assert ieee.total_order(-0.0, 0.0) and not ieee.total_order(0.0, -0.0)
    assert ieee.total_order(INF, NAN) and ieee.total_order(-NAN if sign_bit(-NAN) else -INF, -INF)
    assert ieee.is_odd_integer(3.0) and ieee.is_odd_integer(-1.0) and not ieee.is_odd_integer(2.0 ** 60)
    assert not ieee.is_odd_integer(INF) and not ieee.is_odd_integer(NAN) and not ieee.is_odd_integer(1.5)


def test_registry_file_names_are_mnemonics():
    for name in ALL_OPS:
        assert SPEC(name).mnemonic == name


def test_subtract_of_one_approximate_value_from_itself_is_exactly_zero():
    """subtract declares `same_operand` (fn(x, x) monotone or constant): one
    ranged value on both sides moves as one, so sin(x) - sin(x) is exactly
    0 — moved to opposite ends it would be "anywhere within twice sine's
    4 ULP of 0", a bound a backend answering 1e-7 passes.  (Truth by hand:
    x - x = 0 for every finite x; tests/oracle/test_propagation.py holds
    the other ops that declare it.)"""
    from shlo_conform.generators.expect import expected_outputs
    program = """func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %s = stablehlo.sine %x : tensor<3xf32>
  %d = stablehlo.subtract %s, %s : tensor<3xf32>
  return %d : tensor<3xf32>
}
"""
    [d] = expected_outputs(program, [np.array([1.0, 0.5, 3e-45], np.float32)])
    assert d.kind == "exact" and not d.array().any(), (d.kind, d.array())
