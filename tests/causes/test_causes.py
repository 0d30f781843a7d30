"""Failure causes (suites/causes.py) on hand-built bit patterns, per format.

Each expected/actual pair is written as raw bits from the formats' layouts
(IEEE 754 binary32/16, bfloat16, OCP f8E4M3FN, two's complement), so the
cause each element must get is known by construction, not by the code.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from shlo_conform.pipeline.judging import check_outputs

from shlo_conform.suites.results import results_document, summarize
from shlo_conform.spec.expectation import Alternative, Expectation
from shlo_conform.spec.types import TensorType, element_type, from_bits
from shlo_conform.suites.causes import CAUSES, classify, diagnose
from shlo_conform.suites.compare import compare
from shlo_conform.suites.records import Case, TensorValue, Verdict

# name: (subnormal 2 ulp above zero, largest subnormal, +0, -0, 1.0, 1.0 + 2 ulp, 2.0, 2.0 + 1 ulp,
#        quiet NaN, other NaN, max, inf)
FLOATS = {
    "f32": (0x00000002, 0x007FFFFF, 0, 0x80000000, 0x3F800000, 0x3F800002, 0x40000000, 0x40000001,
            0x7FC00000, 0x7FC00001, 0x7F7FFFFF, 0x7F800000),
    "f16": (0x0002, 0x03FF, 0, 0x8000, 0x3C00, 0x3C02, 0x4000, 0x4001, 0x7E00, 0x7E01, 0x7BFF, 0x7C00),
    "bf16": (0x0002, 0x007F, 0, 0x8000, 0x3F80, 0x3F82, 0x4000, 0x4001, 0x7FC0, 0x7FC1, 0x7F7F, 0x7F80),
    "f8E4M3FN": (0x02, 0x07, 0, 0x80, 0x38, 0x3A, 0x40, 0x41, 0x7F, 0xFF, 0x7E, None),   # no inf; NaN S.1111.111
}


def _tensor(dtype: str, n: int) -> TensorType:
    return TensorType((n,), element_type(dtype))


def _cmp(dtype, pairs, **kw):
    """compare() of an expectation holding the first bits of each pair with
    an actual holding the second."""
    et = element_type(dtype)
    t = _tensor(dtype, len(pairs))
    e = np.array([p[0] for p in pairs], dtype=et.bits_dtype)
    a = np.array([p[1] for p in pairs], dtype=et.bits_dtype)
    return compare(Expectation(t, e, **kw), from_bits(a, et))


def _causes_by_index(j) -> dict:
    return {m[0]: m[4] for m in j.mismatches}


@pytest.mark.parametrize("dtype", list(FLOATS))
def test_each_float_cause_per_format(dtype):
    sub, big_sub, pz, nz, one, one2, two, two1, nan, nan2, mx, inf = FLOATS[dtype]
    pairs = [
        (two, two1),      # 0: 1 ulp, within tolerance: passes, its ULP is meaningful
        (sub, pz),        # 1: subnormal flushed (output)
        (big_sub, nz),    # 2: subnormal flushed, to the other sign's zero
        (nan, one),       # 3: NaN lost
        (one, nan),       # 4: NaN invented
        (one, one2),      # 5: out of tolerance (2 ulp > 1)
        (pz, nz),         # 6: -0 for +0: 0 ulp apart, yet a real zero's sign is judged (issue 25)
    ]
    if inf is not None:
        pairs.append((one, inf))  # 7: infinity (max finite would be 1 ulp from inf: a pass)
    j = _cmp(dtype, pairs, kind="ulp", tolerance_ulp=1)
    assert not j.ok
    want = {1: "subnormal flushed", 2: "subnormal flushed", 3: "NaN lost", 4: "NaN invented", 5: "out of tolerance"}
    assert _causes_by_index(j) == want   # the first five mismatches are shown
    expect_counts = {"subnormal flushed": 2, "NaN lost": 1, "NaN invented": 1, "out of tolerance": 1,
                     "signed zero": 1}
    if inf is not None:
        expect_counts["infinity"] = 1
    assert j.causes == expect_counts
    assert j.mismatch_count == sum(expect_counts.values())
    # The raw max ULP is the lost NaN's (inf); the meaningful one only the
    # passing element (1) and the out-of-tolerance one (2).
    assert j.max_ulp == math.inf and j.meaningful_ulp == 2.0


@pytest.mark.parametrize("dtype", list(FLOATS))
def test_signed_zero_where_zero_signs_matter(dtype):
    pz, nz, one = FLOATS[dtype][2], FLOATS[dtype][3], FLOATS[dtype][4]
    j = _cmp(dtype, [(one, one), (pz, nz), (nz, pz)])   # "exact": signed zero is significant
    assert j.causes == {"signed zero": 2} and j.meaningful_ulp == 0.0


@pytest.mark.parametrize("dtype", list(FLOATS))
def test_nan_payload_only_where_bits_matter(dtype):
    nan, nan2 = FLOATS[dtype][8], FLOATS[dtype][9]
    assert _cmp(dtype, [(nan, nan2)]).ok                       # NaN is NaN
    j = _cmp(dtype, [(nan, nan2)], bit_exact=True)
    assert j.causes == {"NaN payload": 1}


def test_infinity_both_ways_and_exact_kind():
    sub, _, pz, nz, one, one2, _, _, nan, _, mx, inf = FLOATS["f32"]
    ninf = inf | 0x80000000
    j = _cmp("f32", [(inf, mx), (ninf, inf), (one, one2)])
    assert [m[4] for m in j.mismatches] == ["infinity", "infinity", "out of tolerance"]
    assert j.meaningful_ulp == 2.0


def test_wrong_choice_where_no_alternative_matches():
    et = element_type("si8")
    t = _tensor("si8", 2)
    # abs(-128): the spec's alternatives -128 (wraps) and 127 (saturates); 5 is neither.
    exp = Expectation(t, np.array([0x80, 1], np.uint8), impl_defined=[0],
                      alternatives=[Alternative("wraps", np.array([0x80, 1], np.uint8)),
                                    Alternative("saturates", np.array([0x7F, 1], np.uint8))])
    assert compare(exp, from_bits(np.array([0x7F, 1], np.uint8), et)).ok
    j = compare(exp, from_bits(np.array([0x05, 2], np.uint8), et))
    assert _causes_by_index(j) == {0: "wrong choice", 1: "other"}


def test_integer_wrap_signed_and_unsigned():
    # i8: 100 + 100 wraps to -56 (0xC8); a saturating backend gives 127.
    # 127 + 1 wraps to -128, saturates to 127; a spec-saturated 127 wrapped by the backend to -128.
    # A max against a non-negative value, or any two mid-range values: simply different.
    j = _cmp("si8", [(0xC8, 0x7F), (0x80, 0x7F), (0x7F, 0x80), (0x7F, 5), (5, 6)])
    assert [m[4] for m in j.mismatches] == ["integer wrap"] * 3 + ["other"] * 2
    # si4: popcnt counting 8 bits gives 7 where 3 is right: max against a non-negative value.
    assert _cmp("si4", [(3, 7)]).causes == {"other": 1}
    # ui8: 200 + 100 wraps to 44; saturating gives 255.  5 - 10 wraps to 251; saturating gives 0.
    j = _cmp("ui8", [(44, 255), (251, 0), (3, 0), (200, 255)])
    assert [m[4] for m in j.mismatches] == ["integer wrap", "integer wrap", "other", "other"]


def test_complex_component_precedence():
    # complex<f32> rows (re, im): the earliest cause in CAUSES among the differing components wins.
    sub, _, pz, nz, one, one2, two, two1, nan, _, _, inf = FLOATS["f32"]
    et = element_type("complex<f32>")
    e = np.array([[one, nan], [sub, one], [one, two], [pz, pz], [nan, one]], np.uint32)
    a = np.array([[one, one], [pz, one], [one2, two1], [pz, nz], [one2, nan]], np.uint32)
    t = TensorType((5,), et)
    j = compare(Expectation(t, e), from_bits(a, et))
    assert [m[4] for m in j.mismatches] == ["NaN lost", "subnormal flushed", "out of tolerance", "signed zero",
                                            "NaN lost"]
    assert j.meaningful_ulp == 2.0   # the out-of-tolerance element's worse component


def test_classify_gives_one_known_cause_per_failing_element():
    et = element_type("f16")
    eb = np.array([[0x0002], [0x3C00], [0x7E00]], np.uint16)
    ab = np.array([[0x0000], [0x3C00], [0x3C00]], np.uint16)
    out = classify(eb, ab, et, np.array([0, 2]))
    assert out == ["subnormal flushed", "NaN lost"] and set(out) <= set(CAUSES)


def _log_case(x_bits: int) -> Case:
    """log over tensor<2xf32> [x, 1.0], expected as a 1-ulp "ulp" expectation."""
    t = _tensor("f32", 2)
    x = np.array([x_bits, 0x3F800000], np.uint32).view(np.float32)
    want = np.array([math.log(float(x[0])), 0.0], np.float32)   # ln, rounded to f32 (<= 1 ulp)
    mlir = ("func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"
            "  %0 = stablehlo.log %arg0 : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}")
    return Case(id="log/f32/hand", op="log", dtype="f32", kind="value", mlir=mlir,
                inputs=[TensorValue.of(x, t)], expected=[Expectation.of(want, t, kind="ulp", tolerance_ulp=1)])


def test_input_flush_is_established_by_the_flushed_inputs_result():
    # log(2^-149) = -103.28; a backend reading the subnormal input as +0 returns log(0) = -inf.
    c = _log_case(0x00000001)
    assert abs(float(c.expected[0].array()[0]) + 149 * math.log(2)) < 1e-4
    why: dict = {}
    ok, _, max_ulp, _ = check_outputs(c, [np.array([-np.inf, 0.0], np.float32)], why)
    assert not ok and why["causes"] == {"subnormal flushed": 1} and why["mismatches"][0][4] == "subnormal flushed"
    assert max_ulp > 1e9 and why["meaningful_ulp"] == 0.0
    # A wrong finite value is not a flush.
    why = {}
    check_outputs(c, [np.array([-50.0, 0.0], np.float32)], why)
    assert why["causes"] == {"out of tolerance": 1}
    # The same -inf for a normal input (1e-30): no subnormal to flush, so "infinity".
    c = _log_case(int(np.array([1e-30], np.float32).view(np.uint32)[0]))
    why = {}
    check_outputs(c, [np.array([-np.inf, 0.0], np.float32)], why)
    assert why["causes"] == {"infinity": 1}


def _verdict(i: int, op: str, dtype: str, causes: dict, max_ulp=None, meaningful=None, verdict="fail") -> Verdict:
    return Verdict(id=f"{op}/{dtype}/{i:012x}", op=op, dtype=dtype, kind="value", verdict=verdict,
                   max_ulp=max_ulp, meaningful_ulp=meaningful, causes=causes)


def test_summary_counts_causes_and_reports_only_the_meaningful_max_ulp():
    vs = [_verdict(1, "log", "f32", {"subnormal flushed": 3}, max_ulp=math.inf, meaningful=1.0),
          _verdict(2, "log", "f32", {"out of tolerance": 1, "NaN lost": 2}, max_ulp=math.inf, meaningful=7.0),
          _verdict(3, "log", "f64", {}, max_ulp=0.0, meaningful=0.0, verdict="pass")]
    counts, per_op = summarize(vs)
    assert per_op["log"]["max_ulp"] == 7.0 and per_op["log"]["dtypes"]["f32"]["max_ulp"] == 7.0
    assert per_op["log"]["causes"] == {"subnormal flushed": 1, "NaN lost": 1, "out of tolerance": 1}
    assert per_op["log"]["dtypes"]["f64"]["causes"] == {}
    assert counts["causes"] == per_op["log"]["causes"]


def test_a_diagnosis_fires_for_a_broad_cause_and_not_for_a_narrow_one():
    broad = [_verdict(i, op, "f32", {"subnormal flushed": 2}) for i, op in enumerate(["log", "add", "sine"] * 2)]
    lines = diagnose("xla", broad)
    assert lines == ["xla flushes subnormals to zero: 6 failing cases in 3 ops fail only for this cause "
                     "('subnormal flushed': add, log, sine)"]
    # Four cases are too few; mixed causes do not count as "only this cause"; "other" never diagnoses.
    assert diagnose("xla", broad[:4]) == []
    assert diagnose("xla", [_verdict(i, "log", "f32", {"subnormal flushed": 1, "infinity": 1}) for i in range(9)]) == []
    assert diagnose("xla", [_verdict(i, f"op{i}", "f32", {"other": 1}) for i in range(9)]) == []
    # Five in one op and one element type: not broad.
    assert diagnose("xla", [_verdict(i, "log", "f32", {"NaN lost": 1}) for i in range(5)]) == []


def test_results_document_carries_causes_and_diagnoses():
    vs = [_verdict(i, op, "f32", {"NaN lost": 1}) for i, op in enumerate(["maximum", "minimum", "clamp"] * 2)]
    doc = results_document(backend="xla", describe=None, suite="core", manifest={}, started="", seconds=0.0,
                           verdicts=vs)
    assert doc["diagnoses"][0].startswith("xla loses NaNs")
    assert doc["counts"]["causes"] == {"NaN lost": 6}


def test_input_flush_on_a_boolean_output():
    # 2^-149 == 0 is false; a backend reading the subnormal as 0 says true.  The
    # output (i1) is not a float, yet the cause is the inputs' flush.
    t, tb = _tensor("f32", 2), _tensor("i1", 2)
    x = np.array([1, 0x3F800000], np.uint32).view(np.float32)
    mlir = ("func.func @main(%arg0: tensor<2xf32>, %arg1: tensor<2xf32>) -> (tensor<2xi1>) {\n"
            '  %0 = "stablehlo.compare"(%arg0, %arg1) {comparison_direction = #stablehlo<comparison_direction EQ>, '
            "compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>\n"
            '  "func.return"(%0) : (tensor<2xi1>) -> ()\n}')
    zero = np.zeros(2, np.float32)
    c = Case(id="compare/f32/hand", op="compare", dtype="f32", kind="value", mlir=mlir,
             inputs=[TensorValue.of(x, t), TensorValue.of(zero, t)],
             expected=[Expectation.of(np.array([False, False]), tb)])
    why: dict = {}
    check_outputs(c, [np.array([True, False])], why)
    assert why["causes"] == {"subnormal flushed": 1}
    why = {}
    check_outputs(c, [np.array([False, True])], why)   # 1.0 == 0 said true: no flush explains it
    assert why["causes"] == {"other": 1}
