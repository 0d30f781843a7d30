"""Issue 20 item 11c: a data-movement output holding the right values in the wrong
places is "wrong order", not ULP errors and invented NaNs.

Bit patterns are written from the formats' layouts (IEEE binary32: 1.0 =
0x3F800000, 2.0 = 0x40000000, 3.0 = 0x40400000, quiet NaN 0x7FC00000;
bfloat16: 1.0 = 0x3F80, 2.0 = 0x4000, 128 representable steps apart), so
the expected causes are known by construction.
"""
from __future__ import annotations

import json

import numpy as np

from shlo_conform.generators.expect import expected_outputs
from shlo_conform.reports import html, table
from shlo_conform.pipeline.judging import check_outputs
from shlo_conform.suites.results import check_results, results_document
from shlo_conform.spec.expectation import Expectation
from shlo_conform.spec.types import TensorType, element_type, from_bits
from shlo_conform.suites.causes import CAUSES, diagnose
from shlo_conform.suites.compare import compare
from shlo_conform.suites.records import Case, TensorValue, Verdict

ONE, TWO, THREE, NAN = 0x3F800000, 0x40000000, 0x40400000, 0x7FC00000


def _cmp(dtype, expected, actual, **kw):
    et = element_type(dtype)
    e = np.array(expected, dtype=et.bits_dtype)
    a = np.array(actual, dtype=et.bits_dtype)
    return compare(Expectation(TensorType(e.shape[:1], et), e, **kw), from_bits(a, et))


def test_a_sorted_row_with_the_nan_moved_first_is_a_wrong_order():
    # sort's expectation is bit-exact (data movement); the backend put NaN first.
    j = _cmp("f32", [ONE, TWO, THREE, NAN], [NAN, ONE, TWO, THREE], bit_exact=True)
    assert not j.ok and j.causes == {"wrong order": 4}
    assert [m[4] for m in j.mismatches] == ["wrong order"] * 4
    assert j.meaningful_ulp is None   # no element's ULP distance means anything here


def test_bf16_neighbours_swapped_are_a_wrong_order_not_128_ulp():
    j = _cmp("bf16", [0x3F80, 0x4000], [0x4000, 0x3F80], bit_exact=True)
    assert j.causes == {"wrong order": 2} and j.max_ulp == 128.0


def test_integers_and_complex_rows_move_as_units():
    assert _cmp("si32", [1, 2, 3], [3, 1, 2], bit_exact=True).causes == {"wrong order": 3}
    c64 = element_type("complex<f32>")
    e = np.array([[ONE, TWO], [THREE, ONE]], np.uint32)
    t = TensorType((2,), c64)
    # the two complex elements swapped: a wrong order
    assert compare(Expectation(t, e, bit_exact=True), from_bits(e[::-1].copy(), c64)).causes == {"wrong order": 2}
    # real and imaginary parts swapped inside each element: values changed, not moved
    j = compare(Expectation(t, e, bit_exact=True), from_bits(e[:, ::-1].copy(), c64))
    assert "wrong order" not in j.causes


def test_no_wrong_order_where_values_are_computed_or_changed():
    # an element-wise result (not bit-exact): two values swapped are two wrong values
    j = _cmp("f32", [ONE, TWO], [TWO, ONE])
    assert j.causes == {"out of tolerance": 2}
    # a moved value that also changed: the multisets differ, per-element causes stay
    j = _cmp("f32", [ONE, TWO, NAN], [NAN, ONE, THREE], bit_exact=True)
    assert j.causes == {"NaN lost": 1, "NaN invented": 1, "out of tolerance": 1}


SORT = """func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.sort"(%arg0) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = "stablehlo.compare"(%a, %b) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "stablehlo.return"(%c) : (tensor<i1>) -> ()
  }) {dimension = 0 : i64, is_stable = true} : (tensor<4xf32>) -> tensor<4xf32>
  "func.return"(%0) : (tensor<4xf32>) -> ()
}
"""


def _sort_case() -> Case:
    x = np.array([3.0, 1.0, 4.0, 2.0], np.float32)
    t = TensorType((4,), element_type("f32"))
    return Case(id="sort/f32/000000000001", op="sort", dtype="f32", kind="value", mlir=SORT,
                inputs=[TensorValue.of(x, t)], expected=expected_outputs(SORT, [x]))


def test_a_sort_case_sorted_descending_is_a_wrong_order_through_scoring():
    c = _sort_case()
    assert c.expected[0].array().tolist() == [1.0, 2.0, 3.0, 4.0] and c.expected[0].bit_exact
    why: dict = {}
    ok, _, _, _ = check_outputs(c, [np.array([4.0, 3.0, 2.0, 1.0], np.float32)], why)
    assert not ok and why["causes"] == {"wrong order": 4}


def test_wrong_order_in_results_tables_html_and_diagnoses():
    assert "wrong order" in CAUSES
    vs = [Verdict(id=f"{op}/f32/00000000000{i}", op=op, dtype="f32", kind="value", verdict="fail",
                  max_ulp=float(1 << 23), meaningful_ulp=None, causes={"wrong order": 4},
                  mismatches=[[0, "4.0", "1.0", float(1 << 23), "wrong order"]])
          for i, op in enumerate(["sort", "transpose"] * 3)]
    doc = json.loads(json.dumps(results_document(backend="xla", describe="XLA", suite="core", manifest={},
                                                 started="now", seconds=1.0, verdicts=vs)))
    assert check_results(json.loads(json.dumps(doc)))["counts"]["causes"] == {"wrong order": 6}
    assert doc["per_op"]["sort"]["causes"] == {"wrong order": 3}
    assert diagnose("xla", vs)[0].startswith("xla puts the right values in the wrong places")
    text = table.render(doc)
    sort = next(line for line in text.splitlines() if line.startswith("sort"))
    assert sort.endswith("order 3")
    page = html.render(doc)
    assert "wrong order 3" in page.split("<h2>Per op")[1].split("</table>")[0]
