"""`--junit PATH`: read back by junitparser, validated against two JUnit
schemas, and shaped like the JUnit XML pytest writes."""
from __future__ import annotations

import dataclasses
import importlib.util
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema
from junitparser import Error, Failure, JUnitXml, Skipped

from shlo_conform.cli import main
from shlo_conform.reports import junit
from shlo_conform.suites.results import load_results
from shlo_conform.suites.io import write_suite

FIXTURES = Path(__file__).parent / "fixtures"
TOY = Path(__file__).parents[1] / "runner" / "fixtures" / "toy.py"
_spec = importlib.util.spec_from_file_location("toy_fixture_ci", TOY)
toy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(toy)


def toy_cases():
    """One case per JUnit outcome, each outcome known by hand from what the
    toy backend does (tests/runner/fixtures/toy.py)."""
    subtract = toy.value_case("subtract", "tensor<2xf32>", [1, 2], [3, 4], [-2, -2])  # toy adds: fail
    return [
        toy.value_case("add", "tensor<2xf32>", [1, 2], [3, 4], [4, 6]),                        # pass
        subtract,
        toy.value_case("divide", "tensor<2xi32>", [6, 8], [0, 2], [0, 4]),                     # SIGFPE: crash
        toy.value_case("add", "tensor<2xi32>", [1, 2], [3, 4], [4, 6], target="hang"),         # timeout
        toy.value_case("add", "tensor<2xf64>", [1, 2], [3, 4], [4, 6]),                        # unsupported
        toy.invalid_case("add", "tensor<2xf32>", "tensor<3xf32>", "add_c1"),                   # rejected: pass
        toy.invalid_case("subtract", "tensor<2xf32>", "tensor<3xf32>", "subtract_c1"),         # accepted: fail
        dataclasses.replace(subtract, id=subtract.id[:-1] + "s", kind="survey"),               # never scored
    ]


EXPECTED = {"tests": 8, "failures": 2, "errors": 2, "skipped": 2}


@pytest.fixture(scope="session")
def toy_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("junit")
    write_suite(d / "suite", {"suite": "toy", "seed": 0}, toy_cases())
    code = main(["--backend", f"{TOY}:ToyBackend", "--suite", str(d / "suite"), "--jobs", "1", "--timeout", "1",
                 "--json", str(d / "r.json"), "--junit", str(d / "r.xml")])
    assert code == 1
    return d


def test_junitparser_reads_back_the_results_counts(toy_run):
    doc = load_results(toy_run / "r.json")
    [suite] = list(JUnitXml.fromfile(str(toy_run / "r.xml")))
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == tuple(EXPECTED.values())
    cases = list(suite)
    tally = {"failures": sum(isinstance(r, Failure) for c in cases for r in c.result),
             "errors": sum(isinstance(r, Error) for c in cases for r in c.result),
             "skipped": sum(isinstance(r, Skipped) for c in cases for r in c.result)}
    assert {"tests": len(cases), **tally} == EXPECTED
    # and they are the results document's own figures
    c = doc["counts"]
    assert c["cases"] == 8 and c["nonconformant"] == tally["failures"] + tally["errors"]
    assert c["counted"] == len(cases) - tally["skipped"]
    by_id = {v["id"]: v for v in doc["verdicts"]}
    assert sorted(by_id) == sorted(tc.name for tc in cases)
    for tc in cases:
        v = by_id[tc.name]
        assert tc.classname == "stablehlo." + v["op"]
        assert tc.time == pytest.approx(v["seconds"], abs=5e-4)
    props = {p.name: p.value for p in suite.properties()}
    assert props["backend"] == f"{TOY}:ToyBackend" and props["describe"] == "toy backend 1.0"
    assert props["suite_digest"] == doc["run_key"]["suite_digest"]


def test_each_verdict_has_its_junit_element(toy_run):
    doc = load_results(toy_run / "r.json")
    root = ET.parse(toy_run / "r.xml").getroot()
    got = {tc.get("name"): [(ch.tag, ch.get("type")) for ch in tc] for tc in root.iter("testcase")}
    want = {v["id"]: v for v in doc["verdicts"]}
    outcome = {i: (want[i]["op"], want[i]["kind"], want[i]["verdict"], got[i]) for i in got}
    assert sorted(outcome.values()) == sorted([
        ("add", "value", "pass", []),
        ("subtract", "value", "fail", [("failure", "fail")]),
        ("divide", "value", "crash", [("error", "crash")]),
        ("add", "value", "timeout", [("error", "timeout")]),
        ("add", "value", "unsupported", [("skipped", "unsupported")]),
        ("add", "invalid", "rejected", []),
        ("subtract", "invalid", "fail", [("failure", "fail")]),
        ("subtract", "survey", "fail", [("skipped", "survey")]),
    ])
    skipped = {tc.get("name"): tc.find("skipped").get("message") for tc in root.iter("testcase")
               if tc.find("skipped") is not None}
    unsupported = next(v for v in doc["verdicts"] if v["verdict"] == "unsupported")
    assert skipped[unsupported["id"]].endswith("toy does not do f64")   # the reason the backend gave
    failure = next(tc.find("failure") for tc in root.iter("testcase") if tc.get("classname") == "stablehlo.subtract"
                   and tc.find("failure") is not None and "/f32/" in tc.get("name")
                   and want[tc.get("name")]["kind"] == "value")
    assert failure.get("message") and "replay: shlo-conform explain" in failure.text


def test_causes_and_mismatches_make_the_message_and_text():
    """Verdicts that carry causes (suites/causes.py): the message is the
    cause summary, most elements first; the text the first mismatches."""
    v = {"id": "maximum/f32/0123456789ab", "op": "maximum", "dtype": "f32", "kind": "value", "verdict": "fail",
         "detail": "3 of 8 elements differ", "max_ulp": None, "impl_defined": [], "seconds": 0.25,
         "violates": None, "causes": {"NaN lost": 1, "signed zero": 2},
         "mismatches": [[0, "nan", "1.0", None, "NaN lost"], [5, "-0.0", "0.0", None, "signed zero"]]}
    root = ET.fromstring(junit.render({"backend": "xla", "describe": "x", "suite": "core", "verdicts": [v]}))
    f = root.find("testsuite/testcase/failure")
    assert f.get("message") == "2 signed zero, 1 NaN lost"
    assert "element 0: expected nan, got 1.0 — NaN lost" in f.text
    assert "element 5: expected -0.0, got 0.0 — signed zero" in f.text
    assert root.find("testsuite/testcase").get("time") == "0.250"
    # an older results file (no causes): the detail is the message
    old = {k: x for k, x in v.items() if k not in ("causes", "mismatches")}
    root = ET.fromstring(junit.render({"backend": "xla", "verdicts": [old]}))
    assert root.find("testsuite/testcase/failure").get("message") == "3 of 8 elements differ"


def test_text_xml_cannot_hold_is_escaped():
    v = {"id": "add/f32/0123456789ab", "op": "add", "dtype": "f32", "kind": "value", "verdict": "crash",
         "detail": "worker died: SIGSEGV (\x1b[31mboom\x00\x07 — ünïcode ✓)", "seconds": 0.0}
    text = junit.render({"backend": "command:./impl --x", "verdicts": [v]})
    err = ET.fromstring(text).find("testsuite/testcase/error")   # parses: no raw NUL or ESC in the file
    assert err.get("message") == "worker died: SIGSEGV (\\x1b[31mboom\\x00\\x07 — ünïcode ✓)"
    assert err.text.endswith("replay: shlo-conform explain add/f32/0123456789ab --backend 'command:./impl --x'")


def _schema(name):
    return xmlschema.XMLSchema(str(FIXTURES / name))


def test_valid_against_jenkins_xunit_schema(toy_run):
    errors = [str(e) for e in _schema("junit-10.xsd").iter_errors(str(toy_run / "r.xml"))]
    assert errors == []


def test_valid_against_the_ant_schema_but_for_skipped(toy_run, tmp_path):
    """The Ant schema (Windy Road) predates <skipped> and the testsuite's
    `skipped` count (which pytest writes, and we with it): those are the
    only things it rejects — its int and decimal types, required hostname,
    zone-less timestamp, properties, system-out/err, package and id hold."""
    ant = _schema("JUnit.xsd")
    errors = list(ant.iter_errors(str(toy_run / "r.xml")))
    assert len(errors) == 1 + EXPECTED["skipped"]
    assert all("skipped" in (e.reason or "") or "'skipped'" in str(e) for e in errors)
    doc = load_results(toy_run / "r.json")
    doc["verdicts"] = [v for v in doc["verdicts"] if v["verdict"] != "unsupported" and v["kind"] != "survey"]
    (tmp_path / "noskip.xml").write_text(junit.render(doc))
    [only] = list(ant.iter_errors(str(tmp_path / "noskip.xml")))
    assert only.reason == "'skipped' attribute not allowed for element"
    noattr = (tmp_path / "noskip.xml").read_text().replace(' skipped="0"', "")
    ant.validate(noattr)


@pytest.mark.parametrize("breakage", [
    lambda t: t.replace('tests="', 'tests="x'),                       # a count that is not a number
    lambda t: t.replace('<testcase classname=', '<testcase clasname=', 1),
    lambda t: t.replace('<properties>', '<props>').replace('</properties>', '</props>'),
])
def test_the_schemas_reject_broken_files(toy_run, breakage):
    """The schemas have teeth: a test that validates against them can fail."""
    broken = breakage((toy_run / "r.xml").read_text())
    for name in ("JUnit.xsd", "junit-10.xsd"):
        if name == "junit-10.xsd" and "tests=\"x" in broken:
            continue   # its counts are plain strings
        assert not _schema(name).is_valid(broken), name


def test_report_writes_the_same_junit(capsys, toy_run, tmp_path):
    assert main(["report", str(toy_run / "r.json"), "--junit", str(tmp_path / "again.xml")]) == 0
    assert (tmp_path / "again.xml").read_text() == (toy_run / "r.xml").read_text()
    code = main(["report", str(toy_run / "r.json"), "--junit", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--junit" in err and "folder" in err


_PYTEST_MODULE = '''
import pytest
def test_passes(): pass
def test_fails(): assert 1 == 2, "one is not two"
@pytest.fixture
def broken(): raise RuntimeError("fixture broke")
def test_errors(broken): pass
@pytest.mark.skip(reason="not here")
def test_skipped(): pass
'''


def _shape(root) -> dict:
    """tag → attribute names, over the whole tree (what a consumer reads)."""
    shape: dict[str, set] = {}
    for el in root.iter():
        shape.setdefault(el.tag, set()).update(el.attrib)
    return shape


def test_shaped_like_pytest_junitxml(toy_run, tmp_path):
    """pytest's --junitxml is the JUnit XML every CI already reads: ours
    has its elements, nested the same way, and at least its attributes
    (ours adds `type` to skipped and error, `package`/`id` for the Ant schema)."""
    (tmp_path / "test_shape.py").write_text(_PYTEST_MODULE)
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml",
                    str(tmp_path / "pytest.xml"), str(tmp_path / "test_shape.py")], cwd=tmp_path, capture_output=True)
    theirs = ET.parse(tmp_path / "pytest.xml").getroot()
    ours = ET.parse(toy_run / "r.xml").getroot()
    assert theirs.tag == ours.tag == "testsuites"
    assert [ch.tag for ch in theirs] == [ch.tag for ch in ours] == ["testsuite"]
    mine, pytest_shape = _shape(ours), _shape(theirs)
    for tag in ("testsuite", "testcase", "failure", "error", "skipped"):
        assert pytest_shape[tag] <= mine[tag], (tag, pytest_shape[tag] - mine[tag])
    assert {p for ch in theirs.iter("testcase") for p in [el.tag for el in ch]} - {"system-out", "system-err"} \
        <= {"failure", "error", "skipped"}
    # both read the same way by a consumer
    [ps] = list(JUnitXml.fromfile(str(tmp_path / "pytest.xml")))
    assert (ps.tests, ps.failures, ps.errors, ps.skipped) == (4, 1, 1, 1)
