"""suites/compare.compare on hand-built expectations: exactness, NaN, signed zero, ULPs, alternatives."""
import numpy as np
import pytest

from shlo_conform.spec.expectation import Alternative, Expectation
from shlo_conform.spec.types import parse_type, to_bits
from shlo_conform.suites.compare import compare as judge
from shlo_conform.suites.records import Case, TensorValue, case_id


def exp(values, type_="tensor<3xf32>", **kw):
    t = parse_type(type_)
    return Expectation.of(np.array(values, dtype=t.element_type.numpy), t, **kw)


def alt(label, values, type_):
    """An alternative whose bits are `values` of `type_`."""
    t = parse_type(type_)
    return Alternative(label, to_bits(np.array(values, dtype=t.element_type.numpy), t.element_type))


def test_exact_match_and_mismatch():
    e = exp([1.0, 2.0, 3.0])
    assert judge(e, np.array([1, 2, 3], np.float32)).ok
    j = judge(e, np.array([1, 2, 3.0000002], np.float32))
    assert not j.ok and j.mismatch_count == 1 and j.max_ulp == 1.0
    assert "[2]" in j.detail


def test_signed_zero_is_significant_when_exact():
    assert not judge(exp([0.0, 1, 1]), np.array([-0.0, 1, 1], np.float32)).ok


def test_any_nan_matches_nan_unless_bit_exact():
    e = exp([np.nan, 1, 1])
    other_nan = np.array([0x7FC00001, 0x3F800000, 0x3F800000], np.uint32).view(np.float32)
    assert judge(e, other_nan).ok
    e.bit_exact = True
    assert not judge(e, other_nan).ok


def test_ulp_tolerance():
    e = exp([1.0, 1.0, 1.0], kind="ulp", tolerance_ulp=2)
    near = np.array([0x3F800002, 0x3F7FFFFE, 0x3F800000], np.uint32).view(np.float32)
    far = np.array([0x3F800003, 0x3F800000, 0x3F800000], np.uint32).view(np.float32)
    assert judge(e, near).ok
    j = judge(e, far)
    assert not j.ok and j.max_ulp == 3


def test_complex_ulp_is_per_component():
    e = exp([1 + 1j], "tensor<1xcomplex<f32>>", kind="ulp", tolerance_ulp=1)
    im_off = np.array([1 + 1j], np.complex64)
    im_off.view(np.uint32)[1] += 2
    assert judge(e, np.array([1 + 1j], np.complex64)).ok
    assert judge(e, im_off).max_ulp == 2


def test_implementation_defined_alternatives_are_reported():
    t = "tensor<3xi32>"
    e = exp([5, -1, 7], t, impl_defined=[1],
            alternatives=[alt("all ones", [5, -1, 7], t), alt("zero", [5, 0, 7], t)])
    j = judge(e, np.array([5, 0, 7], np.int32))
    assert j.ok and j.alternatives_used == ["zero"]
    j = judge(e, np.array([5, -1, 7], np.int32))
    assert j.ok and j.alternatives_used == ["all ones"]
    # An alternative only excuses the elements declared implementation-defined.
    assert not judge(e, np.array([0, 0, 7], np.int32)).ok


def test_shape_mismatch_is_a_failure_not_an_error():
    j = judge(exp([1, 2, 3]), np.zeros((2,), np.float32))
    assert not j.ok and "shape" in j.detail


def test_case_json_round_trip_and_stable_id():
    t = parse_type("tensor<2xbf16>")
    import ml_dtypes
    inp = [TensorValue.of(np.array([1.5, -0.0], ml_dtypes.bfloat16), t)]
    mlir = "func.func @main(%a: tensor<2xbf16>) -> tensor<2xbf16> { return %a : tensor<2xbf16> }"
    cid = case_id("negate", "bf16", mlir, inp)
    assert cid == case_id("negate", "bf16", mlir, inp) and cid.startswith("negate/bf16/")
    c = Case(cid, "negate", "bf16", "value", mlir, inp, [exp([-1.5, 0.0], "tensor<2xbf16>")])
    back = Case.from_json(c.to_json())
    assert back == c and back.to_json() == c.to_json()
    assert np.array_equal(back.input_arrays()[0].view(np.uint16), np.array([0x3FC0, 0x8000], np.uint16))


def test_any_value_alternative_excuses_only_its_elements():
    """A wildcard ("any value", hex None) covers the elements listed for it and
    nothing else; its label is reported when used."""
    t = "tensor<3xf32>"
    e = exp([1.0, 2.0, 3.0], t, impl_defined=[0, 2],
            alternatives=[alt("Annex G", [1, 2, 3], t), Alternative("other", None, [0])])
    j = judge(e, np.array([7, 2, 3], np.float32))
    assert j.ok and set(j.alternatives_used) == {"other", "Annex G"}   # element 2 kept Annex G's value
    assert not judge(e, np.array([1, 2, 7], np.float32)).ok   # element 2 offers no wildcard


def test_alternatives_follow_the_same_nan_rule_as_the_primary():
    """An implementation-defined alternative that is NaN matches any NaN (the
    interpreter returns NaNs with other payloads than ours)."""
    t = "tensor<2xf32>"
    e = exp([1.0, 2.0], t, impl_defined=[1], alternatives=[alt("lhs", [1.0, 2.0], t), alt("NaN", [1, np.nan], t)])
    other_nan = np.array([0x3F800000, 0xFFC00123], np.uint32).view(np.float32)
    j = judge(e, other_nan)
    assert j.ok and j.alternatives_used == ["NaN"]


def test_survey_cases_never_count_for_or_against_conformance():
    from shlo_conform.suites.records import conformant
    for verdict in ("pass", "fail", "crash", "rejected", "timeout"):
        assert conformant("survey", verdict) is None
    assert conformant("value", "fail") is False and conformant("invalid", "rejected") is True


def test_out_of_bounds_index_cases_are_scored():
    """dynamic_slice / dynamic_update_slice clamp by the seed's formula,
    gather by v1.20's, and v1.20's scatter skips an out-of-bounds update:
    the spec defines every one, so their out-of-bounds cases are scored
    (value cases), the v1.20 batching structures' too; no gather or
    scatter case is a survey."""
    from shlo_conform.suites.io import CORE, load_cases
    cases = [c for op in ("gather", "scatter", "dynamic_slice", "dynamic_update_slice")
             for c in load_cases(CORE, ops={op})]
    oob = [c for c in cases if (c.note or "").endswith("indices out of bounds")]   # "batching dims: …; indices …"
    assert {c.op for c in oob} == {"gather", "scatter", "dynamic_slice", "dynamic_update_slice"}
    assert [c.id for c in oob if c.kind != "value"] == []
    assert [c.id for c in cases if c.kind == "survey"] == []
    assert any(c.note.startswith("batching dims") for c in oob)


@pytest.mark.parametrize("declared, actual, name", [
    ("tensor<3xi32>", np.array([1, 2, 3], np.uint32), "ui32"),        # same bits, other signedness
    ("tensor<3xi8>", np.array([1, 2, 3], np.uint8), "ui8"),
    ("tensor<3xi1>", np.array([1, 0, 1], np.int8), "i8"),              # booleans as bytes
    ("tensor<3xi1>", np.array([1, 0, 1], np.uint8), "ui8"),
    ("tensor<3xbf16>", np.array([1, 2, 3], np.float32), "f32"),        # wider, values exact
    ("tensor<3xf32>", np.array([1, 2, 3], np.float64), "f64"),
    ("tensor<3xcomplex<f32>>", np.array([1, 2, 3], np.complex128), "complex<f64>"),
    ("tensor<3xi4>", np.array([1, 2, 3], np.int8), "i8"),
    ("tensor<3xui32>", np.array([1, 2, 3], np.int32), "i32"),
    ("tensor<3xf32>", np.array([1, 2, 3], np.int32), "i32"),
    ("tensor<3xf32>", np.array(["1", "2", "3"]), "numpy <U1"),
])
def test_an_output_of_another_element_type_fails_even_when_its_values_would_match(declared, actual, name):
    """The judge checks the element type the program declares, exactly; it
    never converts (every pair here would compare equal after a cast)."""
    t = parse_type(declared)
    e = Expectation.of(np.array([1, 2, 3]).astype(t.element_type.numpy), t)
    j = judge(e, actual)
    assert not j.ok
    assert j.detail.startswith(f"element type {name} where {t.element_type.mlir} was declared"), j.detail


def test_shape_is_checked_after_the_element_type_and_before_values():
    j = judge(exp([1, 2, 3]), np.zeros((3, 1), np.float32))
    assert not j.ok and j.detail == "shape (3, 1) where tensor<3xf32> was declared"
    assert judge(exp([1, 2, 3]), np.array([1, 2, 3], np.float32)).ok
