"""dot_general and convolution: constraints on hand-made instances, inference,
and semantics against hand computation, the seed's Examples and a second
implementation — jax.lax.dot_general / conv_general_dilated (XLA:CPU) on the
same inputs, whose values must satisfy the oracle's expectation as a suite
judges it (`suites.compare.compare`)."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import z3

from shlo_conform.generators import emit, solve
from shlo_conform.generators.expect import ProgramRejected, expected_outputs
from shlo_conform.generators.skeleton import enumerate_skeletons
from shlo_conform.spec import checks
from shlo_conform.spec.dsl import ImplDefined, Range
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.symbolic import layout_options
from shlo_conform.spec.types import (C64, E_F16, E_F32 as F32, I1, SI8, SI32, TensorType, element_type)
from shlo_conform.suites.compare import compare

import jax
lax = jax.lax

DOT = OPS["dot_general"]
CONV = OPS["convolution"]


def oracle(spec, inst, *arrays):
    """The oracle's expectation for the generic program of `inst` on `arrays`."""
    return expected_outputs(emit.program(spec, inst), list(arrays))[0]


# --------------------------------------------------------------------------
# dot_general: instances
# --------------------------------------------------------------------------

def dot(lhs, rhs, lb=(), rb=(), lc=(), rc=(), et=SI32, result=None, result_et=None, precision=("DEFAULT", "DEFAULT")):
    ops = {"lhs": TensorType(tuple(lhs), et), "rhs": TensorType(tuple(rhs), et)}
    attrs = {"lhs_batching_dimensions": tuple(lb), "rhs_batching_dimensions": tuple(rb),
             "lhs_contracting_dimensions": tuple(lc), "rhs_contracting_dimensions": tuple(rc),
             "precision_config": precision}
    inst = DOT.instance(ops, attrs)
    res = DOT.infer(inst)["result"] if result is None else TensorType(tuple(result), et)
    if result_et is not None:
        res = TensorType(res.shape, result_et)
    return DOT.instance(ops, attrs, {"result": res})


def seed_dot(**kw):
    """The seed's Example: 2x2x2 batched matmul, batch 0, contracting 2 x 1."""
    args = dict(lhs=(2, 2, 2), rhs=(2, 2, 2), lb=(0,), rb=(0,), lc=(2,), rc=(1,), result=(2, 2, 2))
    args.update(kw)
    return dot(**args)


def test_dot_seed_example_is_valid_and_inferred():
    inst = seed_dot(result=None)
    assert tuple(inst.result.shape) == (2, 2, 2) and DOT.violated(inst) == []


@pytest.mark.parametrize("change, broken", [
    (dict(rhs=(2, 2, 2), et=SI32, result_et=None), []),
    (dict(rb=(0, 1), rc=(2,), result=(2, 2)), ["dot_general_c2"]),
    (dict(rc=(1, 2), result=(2, 2)), ["dot_general_c3"]),
    # An axis named twice or out of range leaves C13 nothing to compute (and
    # C10/C11 read a size of 0 there): those breaks come with C13.
    (dict(lc=(0,), result=(2, 2, 2)), ["dot_general_c4", "dot_general_c13"]),
    (dict(rb=(1,), rc=(1,), result=(2, 2, 2)), ["dot_general_c5", "dot_general_c13"]),
    (dict(lb=(3,)), ["dot_general_c6", "dot_general_c10", "dot_general_c13"]),
    (dict(lc=(-1,)), ["dot_general_c7", "dot_general_c11", "dot_general_c13"]),
    (dict(rb=(3,)), ["dot_general_c8", "dot_general_c10", "dot_general_c13"]),
    (dict(rc=(5,)), ["dot_general_c9", "dot_general_c11", "dot_general_c13"]),
    (dict(lhs=(3, 2, 2), result=(3, 2, 2)), ["dot_general_c10"]),
    (dict(lhs=(2, 2, 3)), ["dot_general_c11"]),
    (dict(precision=("DEFAULT",)), ["dot_general_c12"]),
    (dict(precision=("HIGH", "HIGH", "HIGH")), ["dot_general_c12"]),
    (dict(result=(2, 2, 3)), ["dot_general_c13"]),
    (dict(result=(2, 2, 2, 1)), ["dot_general_c13"]),
    (dict(result_et=F32), ["dot_general_c13"]),    # si32 -> f32: another kind, not v1.20's is_promotable
])
def test_dot_constraint_broken_alone(change, broken):
    assert DOT.violated(seed_dot(**change)) == broken


def test_dot_c1_element_types():
    ops = {"lhs": TensorType((2, 2), SI32), "rhs": TensorType((2, 2), F32)}
    attrs = {"lhs_batching_dimensions": (), "rhs_batching_dimensions": (), "lhs_contracting_dimensions": (1,),
             "rhs_contracting_dimensions": (0,), "precision_config": ("DEFAULT", "DEFAULT")}
    inst = DOT.instance(ops, attrs, {"result": TensorType((2, 2), SI32)})
    assert DOT.violated(inst) == ["dot_general_c1"]


def test_dot_precision_config_left_out_reads_default():
    inst = seed_dot(precision=None)
    assert DOT.violated(inst) == []


@pytest.mark.parametrize("args, shape", [
    (dict(lhs=(2, 3), rhs=(3, 4), lc=(1,), rc=(0,)), (2, 4)),
    (dict(lhs=(3,), rhs=(3,), lc=(0,), rc=(0,)), ()),
    (dict(lhs=(2, 3), rhs=(5,)), (2, 3, 5)),                                    # outer product
    (dict(lhs=(4, 2, 3), rhs=(3, 5, 4), lb=(0,), rb=(2,), lc=(2,), rc=(0,)), (4, 2, 5)),
    (dict(lhs=(2, 3, 4), rhs=(4, 3, 2), lb=(2, 0), rb=(0, 2), lc=(1,), rc=(1,)), (4, 2)),   # batch order kept
    (dict(lhs=(2, 3, 5), rhs=(5, 2, 3, 7), lc=(1, 0), rc=(2, 1)), (5, 5, 7)),
    (dict(lhs=(2, 0), rhs=(0, 3), lc=(1,), rc=(0,)), (2, 3)),
])
def test_dot_infer(args, shape):
    inst = dot(**args)
    assert tuple(inst.result.shape) == shape and DOT.violated(inst) == []


def test_dot_infer_on_symbolic_entries():
    """With symbolic dimension numbers the inferred dims are `If` terms that
    z3 evaluates to the concrete answer."""
    lc, rc = z3.Int("lc"), z3.Int("rc")
    a, b, c = z3.Ints("a b c")
    ops = {"lhs": TensorType((a, b), F32), "rhs": TensorType((b, c), F32)}
    inst = DOT.instance(ops, {"lhs_batching_dimensions": (), "rhs_batching_dimensions": (),
                              "lhs_contracting_dimensions": (lc,), "rhs_contracting_dimensions": (rc,)})
    dims = DOT.infer(inst)["result"].shape
    s = z3.Solver()
    s.add(lc == 1, rc == 0, a == 2, b == 3, c == 4)
    assert s.check() == z3.sat
    assert [s.model().eval(d).as_long() for d in dims] == [2, 4]


# --------------------------------------------------------------------------
# dot_general: mixed precision (v1.20's promotion of the result type)
# --------------------------------------------------------------------------

@pytest.mark.parametrize("operands, result, ok", [
    ("bf16", "f32", True), ("f16", "f32", True), ("f32", "f64", True), ("f8E4M3FN", "f32", True),
    ("si8", "si32", True), ("ui8", "ui32", True), ("si8", "ui16", True),        # integers: any signedness
    ("f16", "bf16", True), ("f8E5M2", "f8E4M3FN", True),                        # as wide: promotable, rounded
    ("complex<f32>", "complex<f64>", True), ("i1", "i1", True),
    ("f32", "f16", False), ("f64", "f32", False), ("si32", "si8", False),       # narrower
    ("si8", "f32", False), ("bf16", "si32", False), ("f32", "complex<f32>", False), ("i1", "si8", False),
    ("complex<f64>", "complex<f32>", False), ("si8", "i1", False),
])
def test_dot_result_element_type_is_a_promotion(operands, result, ok):
    """C13 accepts a result element type lhs's is promotable to (v1.20's
    is_promotable: same kind, at least as wide) and refuses the rest; infer
    reads an accepted one back from the program, else gives lhs's."""
    src, dst = element_type(operands), element_type(result)
    inst = dot((2, 3), (3, 2), lc=(1,), rc=(0,), et=src, result_et=dst)
    assert DOT.violated(inst) == ([] if ok else ["dot_general_c13"])
    assert DOT.infer(inst)["result"] == TensorType((2, 2), dst if ok else src)


def test_holds_every_value_says_which_promotions_are_exact():
    from shlo_conform.spec.types import holds_every_value
    exact = [("bf16", "f32"), ("f16", "f32"), ("f8E4M3FN", "f16"), ("f8E5M2", "bf16"), ("f32", "f64"),
             ("complex<f32>", "complex<f64>"), ("f16", "f16")]
    rounded = [("f16", "bf16"), ("bf16", "f16"), ("f8E4M3FN", "f8E5M2"), ("f8E5M2", "f8E4M3FN"), ("f32", "f16")]
    assert all(holds_every_value(element_type(a), element_type(b)) for a, b in exact)
    assert not any(holds_every_value(element_type(a), element_type(b)) for a, b in rounded)


def test_dot_bf16_promoted_to_f32_is_the_f32_accumulation_bound():
    """bf16 × bf16 → f32: each element the exact Σ aᵢbᵢ with f32's bound
    γ_f32(K)·Σ|aᵢbᵢ| + K·2^-150 — written out here — not bf16's."""
    bf16 = element_type("bf16")
    a = np.array([[1.5, -2.25, 3.0, 0.0078125], [-7.0, 0.5, 1.0, 100.0]], bf16.numpy)
    b = np.array([[0.3], [1.1], [-2.0], [6.5]], np.float32).astype(bf16.numpy)
    inst = dot((2, 4), (4, 1), lc=(1,), rc=(0,), et=bf16, result_et=F32, precision=("HIGHEST", "HIGHEST"))
    got = dot_answers(inst, a, b)
    u = Fraction(1, 1 << 24)
    for i in range(2):
        terms = [Fraction(float(x)) * Fraction(float(y)) for x, y in zip(a[i].astype(np.float64),
                                                                          b[:, 0].astype(np.float64))]
        s, mag = sum(terms), sum(abs(t) for t in terms)
        allowance = 4 * u / (1 - 4 * u) * mag + 4 * Fraction(1, 1 << 150)
        r = got[i, 0]
        assert isinstance(r, Range) and r.nearest == s and (r.lo, r.hi) == (s - allowance, s + allowance)


def test_dot_i8_promoted_to_i32_is_exact_and_to_i16_wraps_labelled():
    """The exact sum (past i8's range) in i32, no label; in si16 a sum past
    its range wraps, labelled, as every integer dot does."""
    a = np.array([-128, -128, -128], np.int8)
    wide = oracle(DOT, dot((3,), (3,), lc=(0,), rc=(0,), et=SI8, result_et=SI32), a, a)
    assert wide.array().tolist() == 3 * 128 * 128 and not wide.alternatives
    narrow = oracle(DOT, dot((3,), (3,), lc=(0,), rc=(0,), et=SI8, result_et=element_type("si16")), a, a)
    assert narrow.array().tolist() == 3 * 128 * 128 - 65536
    assert [x.label for x in narrow.alternatives] == ["two's complement wrap"]


def test_dot_operands_are_rounded_into_a_result_type_that_cannot_hold_them():
    """f16 × f16 → bf16: the result type holds fewer digits than f16, so the
    operands are converted (rounded to nearest even) before the products:
    1 + 2^-10 is 1 in bf16, and (1 + 2^-10)·1 is exactly 1 there."""
    f16, bf16 = element_type("f16"), element_type("bf16")
    inst = dot((1,), (1,), lc=(0,), rc=(0,), et=f16, result_et=bf16, precision=("HIGHEST", "HIGHEST"))
    r = dot_answers(inst, np.array([1 + 2 ** -10], np.float16), np.array([1.0], np.float16)).item()
    assert isinstance(r, Range) and r.nearest == 1


# --------------------------------------------------------------------------
# dot_general: semantics by hand
# --------------------------------------------------------------------------

def dot_answers(inst, a, b):
    return DOT.semantics.fn(inst, np.asarray(a), np.asarray(b))[0]


def test_dot_seed_example_values():
    lhs = np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], np.int32)
    rhs = np.array([[[1, 0], [0, 1]], [[1, 0], [0, 1]]], np.int32)
    assert dot_answers(seed_dot(), lhs, rhs).tolist() == lhs.tolist()


def test_dot_integer_matmul_by_hand_with_reordered_contracting_dims():
    # lhs 2x3 contracted on its axis 0 with rhs 3x2's axis 1: a 3x3 result
    a = np.array([[1, 2, 3], [4, 5, 6]], np.int32)           # 2x3
    b = np.array([[1, -1], [2, 0], [0, 3]], np.int32)        # 3x2
    inst = dot((2, 3), (3, 2), lc=(0,), rc=(1,))
    # result[i, j] = Σ_k a[k, i] * b[j, k]
    want = [[sum(int(a[k, i]) * int(b[j, k]) for k in range(2)) for j in range(3)] for i in range(3)]
    assert dot_answers(inst, a, b).tolist() == want


def test_dot_two_contracting_dims_pair_in_list_order():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)          # a[p, q]
    b = np.arange(6, dtype=np.int32).reshape(3, 2) * 10     # b[q, p]
    inst = dot((2, 3), (3, 2), lc=(1, 0), rc=(0, 1))        # pairs a's axis 1 with b's 0, a's 0 with b's 1
    want = sum(int(a[p, q]) * int(b[q, p]) for p in range(2) for q in range(3))
    assert dot_answers(inst, a, b).tolist() == want


def test_dot_i1_is_an_or_of_ands():
    a = np.array([[True, False], [False, False]])
    b = np.array([[False, True], [True, True]])
    inst = dot((2, 2), (2, 2), lc=(1,), rc=(0,), et=I1)
    assert dot_answers(inst, a, b).tolist() == [[False, True], [False, False]]


def test_dot_integer_overflow_wraps_labelled():
    inst = dot((2,), (2,), lc=(0,), rc=(0,), et=SI8)
    exp = oracle(DOT, inst, np.array([100, 100], np.int8), np.array([1, 1], np.int8))
    assert exp.array().tolist() == -56
    assert [a.label for a in exp.alternatives] == ["two's complement wrap"]


def test_dot_complex_by_hand():
    inst = dot((2,), (2,), lc=(0,), rc=(0,), et=C64, precision=("HIGHEST", "HIGHEST"))
    exp = oracle(DOT, inst, np.array([1 + 2j, 1j], np.complex64), np.array([3 + 4j, 1j], np.complex64))
    assert exp.array().tolist() == -6 + 10j


@pytest.mark.parametrize("et, zero", [(F32, 0.0), (SI32, 0), (I1, False), (C64, 0j)])
def test_dot_zero_sized_contracting_dimension_sums_nothing(et, zero):
    inst = dot((2, 0), (0, 3), lc=(1,), rc=(0,), et=et, precision=("HIGHEST", "HIGHEST"))
    exp = oracle(DOT, inst, np.zeros((2, 0), et.numpy), np.zeros((0, 3), et.numpy))
    assert exp.array().tolist() == [[zero] * 3] * 2


@pytest.mark.parametrize("a, b, want", [
    ([math.nan, 1.0], [1.0, 1.0], "nan"),               # a NaN anywhere
    ([math.inf, 1.0], [0.0, 1.0], "nan"),               # 0 × ∞
    ([math.inf, math.inf], [1.0, -1.0], "nan"),         # ∞ − ∞
    ([math.inf, 2.0], [1.0, -3.0], math.inf),           # ∞ + finite
    ([3.0, 4.0], [5.0, 6.0], 39.0),
])
def test_dot_special_values(a, b, want):
    inst = dot((2,), (2,), lc=(0,), rc=(0,), et=F32, precision=("HIGHEST", "HIGHEST"))
    got = float(oracle(DOT, inst, np.array(a, np.float32), np.array(b, np.float32)).array())
    assert (math.isnan(got) if want == "nan" else got == want)


def test_dot_float_range_covers_cancellation_and_is_not_slack():
    inst = dot((3,), (3,), lc=(0,), rc=(0,), et=F32)
    r = dot_answers(inst, np.array([1e8, 1.0, -1e8], np.float32), np.ones(3, np.float32))
    r = r.item().alternatives["full precision (precision_config [DEFAULT, DEFAULT])"]
    assert isinstance(r, Range) and r.nearest == 1
    exp = oracle(DOT, inst, np.array([1e8, 1.0, -1e8], np.float32), np.ones(3, np.float32))
    # Summed left to right in f32, 1e8 + 1 rounds to 1e8: 0.0 is an allowed schedule's result.
    assert compare(exp, np.array(0.0, np.float32)).ok and compare(exp, np.array(1.0, np.float32)).ok
    assert not compare(exp, np.array(64.0, np.float32)).ok


def test_dot_precision_is_visible_unless_highest():
    a, b = np.ones((2, 2), np.float32), np.ones((2, 2), np.float32)
    default = oracle(DOT, dot((2, 2), (2, 2), lc=(1,), rc=(0,), et=F32), a, b)
    highest = oracle(DOT, dot((2, 2), (2, 2), lc=(1,), rc=(0,), et=F32, precision=("HIGHEST", "HIGHEST")), a, b)
    ints = oracle(DOT, dot((2, 2), (2, 2), lc=(1,), rc=(0,)), a.astype(np.int32), b.astype(np.int32))
    assert "underspecified" in default.why and "full precision" in default.why
    assert highest.why == "" and ints.why == ""
    assert default.array().tolist() == highest.array().tolist() == [[2.0, 2.0], [2.0, 2.0]]


# --------------------------------------------------------------------------
# dot_general: jax.lax (XLA:CPU) on the same inputs
# --------------------------------------------------------------------------

DOT_CASES = [
    ((3, 4), (4, 5), (), (), (1,), (0,)),
    ((4, 3), (5, 4), (), (), (0,), (1,)),
    ((2, 3, 4), (2, 4, 5), (0,), (0,), (2,), (1,)),
    ((3, 2, 4), (4, 5, 2), (1,), (2,), (2,), (0,)),
    ((2, 3, 4), (4, 3, 2), (2, 0), (0, 2), (1,), (1,)),
    ((2, 3, 5), (5, 2, 3, 2), (), (), (1, 0), (2, 1)),
    ((6,), (6,), (), (), (0,), (0,)),
    ((2, 3), (4,), (), (), (), ()),
    ((3, 0), (0, 2), (), (), (1,), (0,)),
]


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
@pytest.mark.parametrize("lhs, rhs, lb, rb, lc, rc", DOT_CASES)
def test_dot_agrees_with_jax(lhs, rhs, lb, rb, lc, rc, dtype):
    rng = np.random.default_rng(len(lhs) * 7 + len(rhs))
    if dtype is np.int32:
        a, b = (rng.integers(-9, 10, size=s).astype(np.int32) for s in (lhs, rhs))
    else:   # mixed magnitudes and signs, all normal: XLA:CPU flushes subnormals
        a, b = ((rng.uniform(0.5, 2, size=s) * 2.0 ** rng.integers(-8, 9, size=s)
                 * rng.choice([-1, 1], size=s)).astype(np.float32) for s in (lhs, rhs))
    et = element_type("si32" if dtype is np.int32 else "f32")
    exp = oracle(DOT, dot(lhs, rhs, lb, rb, lc, rc, et=et), a, b)
    got = np.asarray(lax.dot_general(a, b, ((lc, rc), (lb, rb)), precision=lax.Precision.HIGHEST))
    cmp = compare(exp, got)
    assert cmp.ok, cmp.detail


# --------------------------------------------------------------------------
# convolution: instances
# --------------------------------------------------------------------------

def conv(lhs, rhs, dims=((0, (1, 2), 3), ((0, 1), 2, 3), (0, (1, 2), 3)), strides=None, padding=None,
         lhs_dil=None, rhs_dil=None, reversal=None, fgc=1, bgc=1, et=SI32, result=None, result_et=None,
         precision=("DEFAULT", "DEFAULT")):
    """dims: ((input batch, spatial, feature), (kernel spatial, in, out), (output batch, spatial, feature))."""
    (ib, isp, if_), (ksp, ki, ko), (ob, osp, of) = dims
    attrs = {"window_strides": strides, "padding": padding, "lhs_dilation": lhs_dil, "rhs_dilation": rhs_dil,
             "window_reversal": reversal,
             "input_batch_dimension": ib, "input_feature_dimension": if_, "input_spatial_dimensions": tuple(isp),
             "kernel_input_feature_dimension": ki, "kernel_output_feature_dimension": ko,
             "kernel_spatial_dimensions": tuple(ksp), "output_batch_dimension": ob,
             "output_feature_dimension": of, "output_spatial_dimensions": tuple(osp),
             "feature_group_count": fgc, "batch_group_count": bgc, "precision_config": precision}
    attrs = {k: (tuple(v) if isinstance(v, list) else v) for k, v in attrs.items()}
    ops = {"lhs": TensorType(tuple(lhs), et), "rhs": TensorType(tuple(rhs), et)}
    inst = CONV.instance(ops, attrs)
    res = CONV.infer(inst)["result"] if result is None else TensorType(tuple(result), et)
    if result_et is not None:
        res = TensorType(res.shape, result_et)
    return CONV.instance(ops, attrs, {"result": res})


def seed_conv(**kw):
    """The seed's Example: NHWC 1x4x4x1, HWIO 3x3x1x1, stride 4, lhs_dilation 2 -> 1x2x2x1."""
    args = dict(lhs=(1, 4, 4, 1), rhs=(3, 3, 1, 1), strides=(4, 4), padding=((0, 0), (0, 0)), lhs_dil=(2, 2),
                rhs_dil=(1, 1), reversal=(False, False), result=(1, 2, 2, 1))
    args.update(kw)
    return conv(**args)


def test_conv_seed_example_is_valid_inferred_and_computed():
    inst = seed_conv(result=None)
    assert tuple(inst.result.shape) == (1, 2, 2, 1) and CONV.violated(inst) == []
    lhs = np.array([[1, 2, 5, 6], [3, 4, 7, 8], [10, 11, 14, 15], [12, 13, 16, 17]], np.int32).reshape(1, 4, 4, 1)
    out = CONV.semantics.fn(inst, lhs, np.ones((3, 3, 1, 1), np.int32))[0]
    assert out.reshape(2, 2).tolist() == [[10, 26], [46, 62]]


@pytest.mark.parametrize("change, broken", [
    (dict(rhs=(3, 3, 1)), ["convolution_c1", "convolution_c26"]),
    # A list one entry short: C26 reads the default (1, or no padding) there.
    (dict(strides=(4,)), ["convolution_c3", "convolution_c26"]),
    (dict(strides=(4,), result=(1, 2, 5, 1)), ["convolution_c3"]),
    # A stride of 0 divides as 0: (7 - 3) / 0 + 1 = 1 window.
    (dict(strides=(4, 0), result=(1, 2, 1, 1)), ["convolution_c4"]),
    (dict(padding=((0, 0),)), ["convolution_c5"]),
    (dict(lhs_dil=(2,), result=(1, 2, 1, 1)), ["convolution_c6"]),
    (dict(lhs_dil=(2, 0), result=(1, 2, 0, 1)), ["convolution_c7"]),
    (dict(rhs_dil=(1, 1, 1)), ["convolution_c8"]),
    (dict(rhs_dil=(1, -1), result=(1, 2, 2, 1)), ["convolution_c9", "convolution_c26"]),
    (dict(reversal=(True,)), ["convolution_c10"]),
    (dict(lhs=(3, 4, 4, 1), bgc=2, result=(1, 2, 2, 1)), ["convolution_c11", "convolution_c16"]),
    (dict(lhs=(1, 4, 4, 3), fgc=2, result=(1, 2, 2, 1)), ["convolution_c12", "convolution_c17"]),
    (dict(lhs=(1, 4, 4, 2), result=(1, 2, 2, 1)), ["convolution_c15"]),
    (dict(rhs=(3, 3, 1, 3), bgc=2, result=(0, 2, 2, 3)), ["convolution_c11", "convolution_c16"]),
    (dict(lhs=(2, 4, 4, 1), rhs=(3, 3, 1, 3), bgc=2, result=(1, 2, 2, 3)), ["convolution_c16"]),
    (dict(rhs=(3, 3, 1, 3), lhs=(1, 4, 4, 2), fgc=2, result=(1, 2, 2, 3)), ["convolution_c17"]),
    # A count of 0: "x % 0 = 0" read as x = 0, x / 0 as 0.
    (dict(fgc=0), ["convolution_c12", "convolution_c15", "convolution_c17", "convolution_c22"]),
    (dict(lhs=(1, 4, 4, 0), rhs=(3, 3, 0, 0), fgc=0, result=(1, 2, 2, 0)), ["convolution_c22"]),
    (dict(bgc=0, result=(0, 2, 2, 1)), ["convolution_c11", "convolution_c16", "convolution_c23"]),
    (dict(lhs=(0, 4, 4, 1), rhs=(3, 3, 1, 0), bgc=0, result=(0, 2, 2, 0)), ["convolution_c23"]),
    (dict(lhs=(2, 4, 4, 2), rhs=(3, 3, 1, 2), fgc=2, bgc=2, result=(1, 2, 2, 2)), ["convolution_c24"]),
    (dict(precision=("DEFAULT",)), ["convolution_c25"]),
    (dict(result=(1, 2, 3, 1)), ["convolution_c26"]),
    (dict(result_et=F32), ["convolution_c27"]),
    (dict(result=(1, 2, 2)), ["convolution_c28"]),
    (dict(result=(1, 2, 2, 1, 1)), ["convolution_c28"]),
])
def test_conv_constraint_broken(change, broken):
    assert CONV.violated(seed_conv(**change)) == broken


@pytest.mark.parametrize("dims, broken", [
    (((0, (1, 1), 3), ((0, 1), 2, 3), (0, (1, 2), 3)), ["convolution_c14"]),
    (((0, (1, 2), 4), ((0, 1), 2, 3), (0, (1, 2), 3)), ["convolution_c14", "convolution_c15"]),
    (((0, (1, 2), 3), ((0, 1), 2, 2), (0, (1, 2), 3)), ["convolution_c19"]),
    (((0, (1, 2), 3), ((0, 1), 2, 3), (0, (1, 2), -1)), ["convolution_c21", "convolution_c26"]),
    (((0, (1,), 3), ((0, 1), 2, 3), (0, (1, 2), 3)), ["convolution_c13", "convolution_c26"]),
])
def test_conv_dimension_numbers_broken(dims, broken):
    assert CONV.violated(seed_conv(dims=dims)) == broken


def test_conv_optional_window_attributes_read_as_defaults():
    inst = conv((1, 5, 2), (3, 2, 4), dims=((0, (1,), 2), ((0,), 1, 2), (0, (1,), 2)))
    assert tuple(inst.result.shape) == (1, 3, 4) and CONV.violated(inst) == []


@pytest.mark.parametrize("d, k, pad, ldil, rdil, stride, windows", [
    (5, 3, (1, -1), 2, 2, 2, 3),     # dilated 9, padded 9, window 5: (9 - 5) // 2 + 1
    (4, 3, (0, 0), 2, 1, 4, 2),      # the seed's Example: dilated 7, window 3
    (3, 5, (0, 0), 1, 1, 1, 0),      # window larger than the base
    (3, 2, (-3, 0), 1, 1, 1, 0),     # padded to 0
    (3, 0, (0, 0), 1, 1, 2, 2),      # an empty window: (3 - 0) // 2 + 1
    (0, 1, (2, 1), 3, 1, 1, 3),      # an empty base, padded to 3
    (6, 2, (0, 0), 1, 1, 9, 1),      # stride larger than everything
])
def test_conv_num_windows(d, k, pad, ldil, rdil, stride, windows):
    inst = conv((1, d, 1), (k, 1, 1), dims=((0, (1,), 2), ((0,), 1, 2), (0, (1,), 2)), strides=(stride,),
                padding=(pad,), lhs_dil=(ldil,), rhs_dil=(rdil,))
    assert tuple(inst.result.shape) == (1, windows, 1)


def test_conv_result_layout_follows_output_dimensions():
    # input [f, b, s], kernel [o, s, i], output [s, f, b]
    inst = conv((2, 3, 5), (4, 2, 2), dims=((1, (2,), 0), ((1,), 2, 0), (2, (0,), 1)))
    assert tuple(inst.result.shape) == (4, 4, 3) and CONV.violated(inst) == []


# --------------------------------------------------------------------------
# convolution: semantics by hand
# --------------------------------------------------------------------------

NWC = ((0, (1,), 2), ((0,), 1, 2), (0, (1,), 2))


def conv_1d(lhs, kernel, **kw):
    lhs, kernel = np.asarray(lhs), np.asarray(kernel)
    inst = conv((1, len(lhs), 1), (len(kernel), 1, 1), dims=NWC, et=kw.pop("et", SI32), **kw)
    return inst, CONV.semantics.fn(inst, lhs.reshape(1, -1, 1), kernel.reshape(-1, 1, 1))[0].reshape(-1)


@pytest.mark.parametrize("kw, want", [
    (dict(padding=((1, 0),)), [10, 21, 32]),          # [0, 1, 2, 3] · [1, 10]
    (dict(padding=((1, 0),), reversal=(True,)), [1, 12, 23]),
    (dict(lhs_dil=(2,)), [1, 20, 2, 30]),             # [1, 0, 2, 0, 3]
    (dict(rhs_dil=(2,)), [31]),                       # 1·1 + 3·10
    (dict(strides=(2,), padding=((1, 1),)), [10, 32]),
    (dict(padding=((-1, 0),)), [32]),                 # [2, 3]
])
def test_conv_1d_by_hand(kw, want):
    _, got = conv_1d([1, 2, 3], [1, 10], **kw)
    assert got.tolist() == want


def test_conv_feature_groups_by_hand():
    # lhs N=1, W=1, C=2 = [2, 3]; kernel W=1, I=1, O=2 = [5, 7]; two groups: o0 = 2·5, o1 = 3·7
    inst = conv((1, 1, 2), (1, 1, 2), dims=NWC, fgc=2)
    out = CONV.semantics.fn(inst, np.array([2, 3], np.int32).reshape(1, 1, 2), np.array([5, 7]).reshape(1, 1, 2))
    assert out[0].reshape(-1).tolist() == [10, 21]


def test_conv_batch_groups_by_hand():
    # lhs N=2 ([2], [3]); kernel O=2 ([5, 7]); two batch groups: one batch, o0 = 2·5, o1 = 3·7
    inst = conv((2, 1, 1), (1, 1, 2), dims=NWC, bgc=2)
    assert tuple(inst.result.shape) == (1, 1, 2)
    out = CONV.semantics.fn(inst, np.array([2, 3], np.int32).reshape(2, 1, 1), np.array([5, 7]).reshape(1, 1, 2))
    assert out[0].reshape(-1).tolist() == [10, 21]


def test_conv_padding_facing_infinity_offers_both_readings():
    inst, got = conv_1d(np.array([1.0, 2.0], np.float32), np.array([math.inf, 1.0], np.float32),
                        padding=((1, 0),), et=F32, precision=("HIGHEST", "HIGHEST"))
    first = got[0]
    assert isinstance(first, ImplDefined)
    skipped, literal = first.alternatives.values()
    assert skipped.nearest == 1 and math.isnan(literal)     # [pad, 1]·[∞, 1]: 1 skipped, NaN literally
    assert got[1] == math.inf                               # [1, 2]·[∞, 1]
    exp = oracle(CONV, inst, np.array([1.0, 2.0], np.float32).reshape(1, 2, 1),
                 np.array([math.inf, 1.0], np.float32).reshape(2, 1, 1))
    assert compare(exp, np.array([1.0, math.inf], np.float32).reshape(1, 2, 1)).ok       # XLA's
    assert compare(exp, np.array([math.nan, math.inf], np.float32).reshape(1, 2, 1)).ok  # the seed's
    assert not compare(exp, np.array([0.0, math.inf], np.float32).reshape(1, 2, 1)).ok


def test_conv_zero_sized_features_are_empty_dots():
    inst = conv((1, 3, 0), (2, 0, 2), dims=NWC, et=F32, precision=("HIGHEST", "HIGHEST"))
    exp = oracle(CONV, inst, np.zeros((1, 3, 0), np.float32), np.zeros((2, 0, 2), np.float32))
    assert exp.array().tolist() == [[[0.0, 0.0], [0.0, 0.0]]]


# --------------------------------------------------------------------------
# convolution: jax.lax (XLA:CPU) on the same inputs
# --------------------------------------------------------------------------

CONV_CASES = {
    "1-D NCW stride, padding, both dilations": dict(
        x=(2, 3, 7), k=(4, 3, 3), strides=(2,), padding=[(1, 2)], lhs_dilation=(2,), rhs_dilation=(2,),
        dn=("NCH", "OIH", "NCH")),
    "2-D NHWC negative padding": dict(
        x=(1, 5, 6, 2), k=(2, 3, 2, 3), strides=(1, 2), padding=[(-1, 2), (1, -1)], dn=("NHWC", "HWIO", "NHWC")),
    "2-D feature groups": dict(x=(1, 4, 4, 4), k=(6, 2, 2, 2), feature_group_count=2, dn=("NCHW", "OIHW", "NCHW")),
    "2-D depthwise": dict(x=(2, 3, 4, 4), k=(6, 1, 3, 3), padding=[(1, 1), (1, 1)], feature_group_count=3,
                          dn=("NCHW", "OIHW", "NCHW")),
    "1-D batch groups": dict(x=(4, 2, 5), k=(6, 2, 2), batch_group_count=2, dn=("NCH", "OIH", "NCH")),
    "3-D spatial": dict(x=(1, 2, 3, 3, 3), k=(2, 2, 2, 2, 2), padding=[(0, 1), (1, 0), (0, 0)],
                        dn=("NCDHW", "OIDHW", "NCDHW")),
    "odd layouts": dict(x=(3, 5, 2, 4), k=(2, 3, 2, 4), strides=(2, 1), padding=[(1, 0), (0, 1)],
                        dn=((2, 3, 1, 0), (1, 3, 2, 0), (3, 0, 2, 1))),
    "window larger than the base": dict(x=(1, 1, 2), k=(1, 1, 3), dn=("NCH", "OIH", "NCH")),
}


def _jax_conv(x, k, dn, **kw):
    kw.setdefault("strides", (1,) * (x.ndim - 2))
    kw.setdefault("padding", [(0, 0)] * (x.ndim - 2))
    strides, padding = kw.pop("strides"), kw.pop("padding")
    if isinstance(dn[0], str):
        dnums = lax.conv_dimension_numbers(x.shape, k.shape, dn)
    else:
        dnums = lax.ConvDimensionNumbers(*dn)

    def f(x, k):
        return lax.conv_general_dilated(x, k, strides, padding, dimension_numbers=dnums,
                                        precision=lax.Precision.HIGHEST, **kw)
    return np.asarray(f(x, k)), jax.jit(f).lower(x, k).as_text()


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
@pytest.mark.parametrize("name", list(CONV_CASES))
def test_conv_agrees_with_jax(name, dtype):
    """JAX's own StableHLO (pretty form, compact dimension numbers) read by the
    oracle; XLA's values must meet its expectation."""
    case = dict(CONV_CASES[name])
    rng = np.random.default_rng(3)
    xs, ks, dn = case.pop("x"), case.pop("k"), case.pop("dn")
    if dtype is np.int32:
        x, k = (rng.integers(-5, 6, size=s).astype(np.int32) for s in (xs, ks))
    else:
        x, k = ((rng.uniform(0.5, 2, size=s) * 2.0 ** rng.integers(-6, 7, size=s)
                 * rng.choice([-1, 1], size=s)).astype(np.float32) for s in (xs, ks))
    got, text = _jax_conv(x, k, dn, **case)
    exp = expected_outputs(text, [x, k])[0]
    assert tuple(exp.type.shape) == got.shape
    cmp = compare(exp, got)
    assert cmp.ok, cmp.detail


def _numpy_conv_2d(x, k, pads):
    """NHWC x HWIO, stride 1, edge padding by hand (negative crops): an independent reference."""
    xp = x.astype(np.float64)
    for ax, (lo, hi) in zip((1, 2), pads):
        n = xp.shape[ax]
        xp = xp.take(range(max(-lo, 0), n - max(-hi, 0)), axis=ax)
        widths = [(0, 0)] * 4
        widths[ax] = (max(lo, 0), max(hi, 0))
        xp = np.pad(xp, widths)
    kh, kw = k.shape[:2]
    out = np.zeros((x.shape[0], xp.shape[1] - kh + 1, xp.shape[2] - kw + 1, k.shape[3]))
    for h in range(out.shape[1]):
        for w in range(out.shape[2]):
            out[:, h, w] = np.einsum("nhwi,hwio->no", xp[:, h:h + kh, w:w + kw], k.astype(np.float64))
    return out


def test_conv_shifting_padding_against_numpy():
    """Padding (-1, +1) shifts a spatial dimension without changing its size.
    XLA:CPU's f32 convolution returns garbage there (values change from run
    to run: a finding about XLA, so not compared with it here); the oracle
    agrees with a hand-written reference."""
    rng = np.random.default_rng(0)
    x = rng.integers(-4, 5, size=(1, 5, 6, 2)).astype(np.float32)
    k = rng.integers(-4, 5, size=(2, 3, 2, 3)).astype(np.float32)
    pads = ((-1, 1), (0, 0))
    inst = conv((1, 5, 6, 2), (2, 3, 2, 3), padding=pads, et=F32, precision=("HIGHEST", "HIGHEST"))
    exp = oracle(CONV, inst, x, k)
    assert exp.array().tolist() == _numpy_conv_2d(x, k, pads).tolist()


@pytest.mark.parametrize("reversal", [(True,), (False,)])
def test_conv_window_reversal_is_a_flipped_kernel(reversal):
    """jax.lax has no window_reversal: reversing the window is convolving with
    the kernel flipped along that axis, which XLA computes."""
    rng = np.random.default_rng(5)
    x, k = rng.integers(-5, 6, size=(2, 6, 3)).astype(np.int32), rng.integers(-5, 6, size=(3, 3, 2)).astype(np.int32)
    inst = conv((2, 6, 3), (3, 3, 2), dims=NWC, strides=(2,), padding=((1, 1),), rhs_dil=(2,), reversal=reversal)
    exp = oracle(CONV, inst, x, k)
    flipped = k[::-1] if reversal[0] else k
    got = np.asarray(lax.conv_general_dilated(x, flipped, (2,), [(1, 1)], rhs_dilation=(2,),
                                              dimension_numbers=("NWC", "WIO", "NWC")))
    assert compare(exp, got).ok


@pytest.mark.parametrize("ranks", [[2, 2], [3, 3], [4, 4]])
def test_conv_inference_sound_and_unique(ranks):
    """check-spec's proofs at the convolution's own ranks (its run over ranks
    0..2 skips the op: see the module docstring of the report)."""
    for skel in enumerate_skeletons(CONV):
        if skel.operand_types[0].name not in ("f32", "i1"):
            continue
        rep = checks.Report()
        for lay in layout_options(CONV, skel, ranks, checks.CHECK_LAYOUTS) or [None]:
            assert checks.check_skeleton(CONV, skel, ranks, rep, lay)
        assert rep.failures == [] and rep.proofs >= 20


CORNERS = ["negative padding", "feature groups", "batch groups", "window reversal",
           "strides, padding, both dilations and reversal together", "3-D spatial, a window of two in each",
           "dimension numbers [2, 1, 0]x[0, 2, 1]->[1, 2, 0] (1-D)",
           "dimension numbers spatial dimensions listed out of order (2-D)"]


@pytest.fixture(scope="module")
def xla():
    from shlo_conform.backends.base import load_backend
    return load_backend("xla")


@pytest.mark.parametrize("note", CORNERS)
def test_conv_corners_solve_and_agree_with_xla(note, xla):
    """The op's corners, solved by z3 under its own constraints, emitted as
    generic programs: the oracle's expectation holds XLA's values (si32)."""
    corner = next(c for c in CONV.exercise.corners if c.note == note)
    skel = next(s for s in enumerate_skeletons(CONV) if s.operand_types[0].name == "si32")
    rng = np.random.default_rng(11)
    got = solve.solve_shapes(CONV, skel, corner.ranks, rng, 1, zero_prob=0.0,
                             extra=lambda sym: corner.where(sym.inst), layout=corner.layout)
    assert got, note
    inst = got[0]
    assert CONV.violated(inst) == []
    arrays = [rng.integers(-4, 5, size=tuple(t.shape)).astype(np.int32) for t in (inst.lhs, inst.rhs)]
    mlir = emit.program(CONV, inst)
    exp = expected_outputs(mlir, arrays)[0]
    out = xla.run(xla.compile(mlir), arrays)[0]
    assert compare(exp, out).ok, (note, inst)


def test_dot_corners_solve():
    skel = next(s for s in enumerate_skeletons(DOT) if s.operand_types[0].name == "f16")
    rng = np.random.default_rng(2)
    for corner in DOT.exercise.corners:
        got = solve.solve_shapes(DOT, skel, corner.ranks, rng, 1, zero_prob=0.0,
                                 extra=lambda sym, c=corner: c.where(sym.inst), layout=corner.layout,
                                 max_dim=corner.max_dim or solve.MAX_DIM,
                                 max_elements=max(solve.MAX_ELEMENTS, corner.max_dim or 0))
        assert got and DOT.violated(got[0]) == [], corner.note


def test_built_precision_corners_are_valid():
    for spec in (DOT, CONV):
        built = spec.exercise.built_corners(spec, enumerate_skeletons(spec), None)
        assert len(built) >= 2
        for note, skel, inst in built:
            assert spec.violated(inst) == [] and dict(skel.attrs)["precision_config"] == inst.precision_config


def test_verifier_refuses_an_empty_window_the_seed_allows():
    """C26 defines `dilated_window_shape` for `dim(rhs, rhs_dim) == 0`: an
    empty window is valid by the seed; jaxlib's verifier refuses it (a
    disagreement reported, not hidden)."""
    inst = conv((1, 3, 1), (0, 1, 1), dims=NWC)
    assert CONV.violated(inst) == [] and tuple(inst.result.shape) == (1, 4, 1)
    exp = oracle(CONV, inst, np.ones((1, 3, 1), np.int32), np.ones((0, 1, 1), np.int32))
    assert exp.array().reshape(-1).tolist() == [0, 0, 0, 0]
    from jaxlib.mlir import ir
    from shlo_conform.oracle.reading import registered_context
    with registered_context(), ir.Location.unknown():
        with pytest.raises(ir.MLIRError, match="positive value"):
            ir.Module.parse(emit.program(CONV, inst))


def test_programs_without_precision_config_are_read():
    inst = dot((2, 3), (3, 2), lc=(1,), rc=(0,), precision=None)
    text = emit.program(DOT, inst)
    assert "precision_config" not in text
    a, b = np.ones((2, 3), np.int32), np.ones((3, 2), np.int32)
    assert expected_outputs(text, [a, b])[0].array().tolist() == [[3, 3], [3, 3]]
    with pytest.raises(ProgramRejected, match="dot_general_c12"):
        expected_outputs(emit.program(DOT, dot((2, 3), (3, 2), lc=(1,), rc=(0,), precision=("HIGH",))), [a, b])
