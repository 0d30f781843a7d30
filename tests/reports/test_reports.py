"""Rendering of a hand-made results document: table rows and totals, HTML sections, escaping."""
from __future__ import annotations

from shlo_conform.reports import html, table


def doc():
    verdicts = [
        {"id": "add/f32/a", "op": "add", "dtype": "f32", "kind": "value", "verdict": "pass", "detail": "",
         "max_ulp": 0.0, "impl_defined": [], "seconds": 0.0, "violates": None},
        {"id": "abs/si8/b", "op": "abs", "dtype": "si8", "kind": "value", "verdict": "pass", "detail": "",
         "max_ulp": None, "impl_defined": ["wraps to -128"], "seconds": 0.0, "violates": None},
        {"id": "sine/f32/c", "op": "sine", "dtype": "f32", "kind": "value", "verdict": "fail",
         "detail": "[0] expected <1.0> got 2.0 & more", "max_ulp": 3.0, "impl_defined": [], "seconds": 0.0,
         "violates": None},
        {"id": "add/f32/d", "op": "add", "dtype": "f32", "kind": "invalid", "verdict": "rejected", "detail": "no",
         "max_ulp": None, "impl_defined": [], "seconds": 0.0, "violates": "add_c1"},
        {"id": "sine/f64/e", "op": "sine", "dtype": "f64", "kind": "value", "verdict": "unsupported",
         "detail": "no f64", "max_ulp": None, "impl_defined": [], "seconds": 0.0, "violates": None},
    ]
    base = {"cases": 0, "pass": 0, "fail": 0, "rejected": 0, "unsupported": 0, "crash": 0, "timeout": 0,
            "counted": 0, "conformant": 0}
    return {
        "backend": "toy", "describe": "toy 1.0", "suite": "core", "manifest": {}, "started": "now", "seconds": 1.25,
        "counts": {**base, "cases": 5, "pass": 2, "fail": 1, "rejected": 1, "unsupported": 1, "counted": 4,
                   "conformant": 3, "nonconformant": 1},
        "per_op": {
            "abs": {**base, "cases": 1, "pass": 1, "counted": 1, "conformant": 1, "max_ulp": None,
                    "impl_defined": {"wraps to -128": 1},
                    "dtypes": {"si8": {**base, "cases": 1, "pass": 1, "counted": 1, "conformant": 1, "max_ulp": None}}},
            "add": {**base, "cases": 2, "pass": 1, "rejected": 1, "counted": 2, "conformant": 2, "max_ulp": 0.0,
                    "impl_defined": {},
                    "dtypes": {"f32": {**base, "cases": 2, "pass": 1, "rejected": 1, "counted": 2, "conformant": 2,
                                       "max_ulp": 0.0}}},
            "sine": {**base, "cases": 2, "fail": 1, "unsupported": 1, "counted": 1, "conformant": 0, "max_ulp": 3.0,
                     "impl_defined": {},
                     "dtypes": {"f32": {**base, "cases": 1, "fail": 1, "counted": 1, "max_ulp": 3.0},
                                "f64": {**base, "cases": 1, "unsupported": 1, "max_ulp": None}}},
        },
        "verdicts": verdicts,
    }


def test_table_rows_and_totals():
    text = table.render(doc())
    lines = text.splitlines()
    assert lines[0].split() == ["op", "cases", "pass", "fail", "rejected", "unsupported", "crash", "timeout",
                                "max", "ULP", "causes"]
    sine = next(line for line in lines if line.startswith("sine"))
    assert sine.split() == ["sine", "2", "0", "1", "0", "1", "0", "0", "3", "-"]   # no causes in this old doc
    total = next(line for line in lines if line.startswith("total"))
    assert total.split() == ["total", "5", "2", "1", "1", "1", "0", "0", "3", "-"]
    assert "3 of 4 counted cases conformant (75.0%)" in text and "1.2 s" in text


def test_format_ulp():
    assert table.format_ulp(None) == "-"
    assert table.format_ulp(float("inf")) == "inf"
    assert table.format_ulp(2.0) == "2" and table.format_ulp(0.5) == "0.5"


def test_html_sections_and_escaping():
    page = html.render(doc())
    assert page.startswith("<!DOCTYPE html>") and "<style>" in page
    assert "http" not in page.split("</style>")[0]  # no external assets
    assert "75.0%" in page
    # failures list: the failing case, escaped detail; the conformant rejection is not listed
    assert "sine/f32/c" in page and "expected &lt;1.0&gt; got 2.0 &amp; more" in page
    assert "expected <1.0>" not in page
    failures = page.split("Failures (1)")[1]
    assert "add/f32/d" not in failures
    # implementation-defined choices, counted
    assert "wraps to -128" in page
    # op x dtype matrix has a column per dtype seen
    for d in ("f32", "f64", "si8"):
        assert f"<th>{d}</th>" in page


def test_surveys_are_listed_with_the_behaviour_matched_and_not_as_failures():
    d = doc()
    d["verdicts"].append({"id": "gather/f32/s", "op": "gather", "dtype": "f32", "kind": "survey", "verdict": "pass",
                          "detail": "", "max_ulp": 0.0, "impl_defined": ["XLA: start index clamped"],
                          "seconds": 0.0, "violates": None})
    d["verdicts"].append({"id": "scatter/si8/t", "op": "scatter", "dtype": "si8", "kind": "survey",
                          "verdict": "fail", "detail": "5 of 5 elements differ", "max_ulp": None,
                          "impl_defined": [], "seconds": 0.0, "violates": None})
    page = html.render(d)
    surveys = page.split("Surveys: behaviour the spec leaves open (2)")[1].split("<h2>")[0]
    assert "gather/f32/s" in surveys and "XLA: start index clamped" in surveys
    assert "scatter/si8/t" in surveys and "5 of 5 elements differ" in surveys
    assert "scatter/si8/t" not in page.split("Failures (1)")[1]   # a survey never counts as a failure
