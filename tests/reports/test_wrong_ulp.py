"""Issue 20 item 11e: a max ULP past 2^20 prints "wrong", not 9.2e18.

9223372036854775807 ULP is what a complex<f64> component of the wrong sign
(or swapped with the other one) gives: the two magnitudes' ordinals added
up.  It says the value is wrong, not how accurate it is.  The results JSON
keeps the figure; the terminal table and the HTML print "wrong".
"""
from __future__ import annotations

import json

from shlo_conform.reports import html, table
from shlo_conform.suites.results import check_results, results_document
from shlo_conform.suites.records import Verdict

HUGE = 9.223372036854776e18


def test_the_threshold_is_two_to_the_twenty():
    from shlo_conform.suites.causes import WRONG_ULP
    assert WRONG_ULP == 1048576
    assert table.format_ulp(float(WRONG_ULP)) == "1.05e+06"     # at the threshold: still a figure
    assert table.format_ulp(float(WRONG_ULP + 1)) == "wrong"
    assert table.format_ulp(HUGE) == "wrong"
    assert table.format_ulp(4.0) == "4" and table.format_ulp(float("inf")) == "inf"


def _doc():
    vs = [Verdict(id="sine/complex<f64>/000000000001", op="sine", dtype="complex<f64>", kind="value",
                  verdict="fail", max_ulp=HUGE, meaningful_ulp=HUGE, causes={"out of tolerance": 1},
                  mismatches=[[0, "(1.0+2.0j)", "(-1.0+2.0j)", HUGE, "out of tolerance"]]),
          Verdict(id="sine/f32/000000000002", op="sine", dtype="f32", kind="value", verdict="pass",
                  max_ulp=2.0, meaningful_ulp=2.0),
          Verdict(id="add/f32/000000000003", op="add", dtype="f32", kind="value", verdict="pass",
                  max_ulp=0.0, meaningful_ulp=0.0)]
    return json.loads(json.dumps(results_document(backend="xla", describe="XLA", suite="/nonexistent",
                                                  manifest={}, started="now", seconds=1.0, verdicts=vs)))


def test_table_prints_wrong_and_the_json_keeps_the_figure():
    doc = _doc()
    assert doc["per_op"]["sine"]["max_ulp"] == HUGE and check_results(doc)["per_op"]["sine"]["max_ulp"] == HUGE
    lines = table.render(doc).splitlines()
    sine = next(line for line in lines if line.startswith("sine"))
    add = next(line for line in lines if line.startswith("add"))
    total = next(line for line in lines if line.startswith("total"))
    assert sine.split()[-3:] == ["wrong", "ulp", "1"] and add.split()[-2:] == ["0", "-"]
    assert total.split()[8] == "wrong"
    assert "9.22e+18" not in "\n".join(lines)


def test_html_prints_wrong_with_the_figure_on_hover():
    page = html.render(_doc())
    per_op = page.split("<h2>Per op")[1].split("</table>")[0]
    assert 'title="9.22e+18 ULP: past 2^20 the value is simply wrong, not inaccurate">wrong</td>' in per_op
    matrix = page.split("Op &times; element type")[1].split("</table>")[0]
    assert ">wrong</span>" in matrix and "wrong ulp" not in matrix and ">2 ulp</span>" in matrix
    assert ">9.22e+18<" not in page and ">9.2e+18<" not in page
