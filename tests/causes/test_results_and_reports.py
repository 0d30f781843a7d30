"""Causes through the results document and the reports: old results files
(without causes) still load, the table shows causes and diagnoses, the HTML
links each failure to its explain section."""
from __future__ import annotations

import json
import math

import pytest

from shlo_conform.reports import html, table
from shlo_conform.suites.results import check_results, results_document
from shlo_conform.suites.io import load_cases, suite_path
from shlo_conform.suites.records import Verdict

LOG_CASE = "log/f32/4c0a08dfdee0"   # a core case: log over specials, subnormals among the inputs


def _doc(suite: str = "core") -> dict:
    vs = [Verdict(id=LOG_CASE, op="log", dtype="f32", kind="value", verdict="fail",
                  detail="4 of 28 elements differ", max_ulp=math.inf, meaningful_ulp=1.0,
                  causes={"subnormal flushed": 4},
                  mismatches=[[2, "-103.2789306640625", "-inf", 1018261808.0, "subnormal flushed"]]),
          Verdict(id="log/f32/000000000001", op="log", dtype="f32", kind="value", verdict="pass",
                  max_ulp=1.0, meaningful_ulp=1.0)]
    vs += [Verdict(id=f"{op}/f32/00000000000{i}", op=op, dtype="f32", kind="value", verdict="fail",
                   max_ulp=math.inf, causes={"subnormal flushed": 1}) for i, op in enumerate(["add", "sine"] * 2)]
    return json.loads(json.dumps(results_document(backend="xla", describe="XLA", suite=suite, manifest={},
                                                  started="now", seconds=1.0, verdicts=vs)))


def _old(doc: dict) -> dict:
    """The same run as a results file written before causes existed: no
    causes, mismatches or meaningful ULP; per-op max ULP the raw one."""
    old = json.loads(json.dumps(doc))
    for v in old["verdicts"]:
        for k in ("causes", "mismatches", "meaningful_ulp"):
            v.pop(k)

    def strip(x):
        return {k: strip(v) for k, v in x.items() if k != "causes"} if isinstance(x, dict) else x
    old["counts"], old["per_op"] = strip(old["counts"]), strip(old["per_op"])
    old.pop("diagnoses")
    old["per_op"]["log"]["max_ulp"] = old["per_op"]["log"]["dtypes"]["f32"]["max_ulp"] = math.inf
    for op in ("add", "sine"):
        old["per_op"][op]["max_ulp"] = old["per_op"][op]["dtypes"]["f32"]["max_ulp"] = math.inf
    return old


def test_new_document_round_trips_and_old_one_loads():
    doc = _doc()
    assert check_results(json.loads(json.dumps(doc)))["diagnoses"] == doc["diagnoses"]
    assert doc["per_op"]["log"]["max_ulp"] == 1.0     # the meaningful figure, not inf
    old = check_results(_old(doc))
    assert old["per_op"]["log"]["causes"] == {} and old["diagnoses"] == []
    assert old["per_op"]["log"]["max_ulp"] == math.inf   # an old file's only figure is its raw one
    table.render(old)
    html.render(old)


def test_check_results_refuses_unknown_causes_and_wrong_diagnoses():
    doc = _doc()
    doc["verdicts"][0]["causes"] = {"gremlins": 1}
    with pytest.raises(ValueError, match="unknown cause 'gremlins'"):
        check_results(doc)
    doc = _doc()
    doc["diagnoses"] = ["xla is fine"]
    with pytest.raises(ValueError, match="diagnoses"):
        check_results(doc)


def test_table_has_a_causes_column_and_prints_diagnoses():
    text = table.render(_doc())
    lines = text.splitlines()
    assert lines[0].split()[-3:] == ["max", "ULP", "causes"]
    log = next(line for line in lines if line.startswith("log"))
    assert log.split()[-3:] == ["1", "subnormal", "1"]
    assert text.splitlines()[-1] == ("diagnosis: xla flushes subnormals to zero: 5 failing cases in 3 ops fail "
                                     "only for this cause ('subnormal flushed': add, log, sine)")
    assert table.format_causes({"NaN lost": 1, "subnormal flushed": 5, "signed zero": 2, "other": 1}) == \
        "subnormal 5, ±0 2, NaN lost 1, +1"


def test_html_links_each_failure_to_its_explain_section_with_the_program():
    assert any(c.id == LOG_CASE for c in load_cases(suite_path("core"), {"log"}))
    page = html.render(_doc())
    assert f'href="#case-{LOG_CASE}"' in page and f'id="case-{LOG_CASE}"' in page
    section = page.split(f'id="case-{LOG_CASE}"')[1].split("</details>")[0]
    assert "stablehlo.log" in section and "%arg0" in section            # program, inputs from the suite
    assert "subnormal flushed" in section and "-103.2789306640625" in section   # the mismatch and its cause
    assert page.index("xla flushes subnormals to zero") < page.index("<h2>Summary")   # diagnoses on top
    assert "subnormal flushed 1" in page.split("<h2>Per op")[1].split("</table>")[0]


def test_html_renders_without_the_suite():
    page = html.render(_doc(suite="/nonexistent/suite"))
    assert f'id="case-{LOG_CASE}"' in page and "could not be read" in page
    assert "-103.2789306640625" in page.split(f'id="case-{LOG_CASE}"')[1]
