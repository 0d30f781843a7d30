"""The runner against a toy backend whose misbehaviour is known (fixtures/toy.py):
crash and hang isolation, classification, compile-once grouping, the journal."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from shlo_conform.runner import BackendLoadError, Journal, Runner, score
from shlo_conform.suites.records import Verdict

FIXTURE = Path(__file__).parent / "fixtures" / "toy.py"
BACKEND = f"{FIXTURE}:ToyBackend"
_spec = importlib.util.spec_from_file_location("toy_fixture", FIXTURE)
toy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(toy)


@pytest.fixture
def compile_log(tmp_path, monkeypatch):
    log = tmp_path / "compiles.log"
    monkeypatch.setenv("TOY_COMPILE_LOG", str(log))
    return lambda: log.read_text().splitlines() if log.exists() else []


def add_cases():
    # Hand-computed: [1,2]+[3,4] = [4,6]; [1,-2]+[3,4] = [4,2]; [0.5,-0.0]+[0.25,-0.0] = [0.75,-0.0]
    return [toy.value_case("add", "tensor<2xf32>", [1, 2], [3, 4], [4, 6]),
            toy.value_case("add", "tensor<2xf32>", [1, -2], [3, 4], [4, 2]),
            toy.value_case("add", "tensor<2xf32>", [0.5, -0.0], [0.25, -0.0], [0.75, -0.0]),
            toy.value_case("add", "tensor<3xi32>", [1, 2, 3], [10, 20, 30], [11, 22, 33])]


def test_compile_once_per_program(compile_log):
    cases = add_cases()
    r = Runner(BACKEND)
    verdicts = r.run(cases)
    assert [v.verdict for v in verdicts] == ["pass"] * 4, [v.detail for v in verdicts]
    assert r.compiles == 2
    assert len(compile_log()) == 2  # two distinct programs, four input sets
    assert [v.id for v in verdicts] == [c.id for c in cases]


def test_crash_and_hang_are_isolated_and_later_cases_still_run(compile_log):
    cases = [
        toy.value_case("divide", "tensor<2xi32>", [6, 8], [0, 2], [0, 4]),        # SIGFPE
        toy.value_case("divide", "tensor<2xi32>", [6, 8], [3, 2], [2, 4]),        # same program, fine
        toy.value_case("custom_call", "tensor<2xi32>", [1, 1], [1, 1], [2, 2], target="abort"),
        toy.value_case("custom_call", "tensor<2xi8>", [1, 1], [1, 1], [2, 2], target="hang"),
        toy.value_case("add", "tensor<2xf32>", [1, 2], [3, 4], [4, 6]),
    ]
    r = Runner(BACKEND, run_timeout=1.5)
    v = {x.id: x for x in r.run(cases)}
    fpe, ok_div, abort, hang, add = (v[c.id] for c in cases)
    assert fpe.verdict == "crash" and "SIGFPE" in fpe.detail
    assert ok_div.verdict == "pass"
    assert abort.verdict == "crash" and "SIGABRT" in abort.detail
    assert hang.verdict == "timeout" and "1.5 s" in hang.detail
    assert add.verdict == "pass"
    # The divide program was compiled again in the restarted worker.
    assert sum("stablehlo.divide" in line for line in compile_log()) == 2
    assert all(x.conformant is False for x in (fpe, abort, hang))


def test_two_jobs_give_the_same_verdicts():
    cases = add_cases() + [toy.value_case("divide", "tensor<2xi32>", [6, 8], [0, 2], [0, 4])]
    one = [(v.id, v.verdict) for v in Runner(BACKEND, jobs=1).run(cases)]
    two = [(v.id, v.verdict) for v in Runner(BACKEND, jobs=2).run(cases)]
    assert one == two
    assert [x[1] for x in one] == ["pass"] * 4 + ["crash"]


def test_classification():
    wrong = toy.value_case("subtract", "tensor<2xf32>", [1, 2], [3, 4], [-2, -2])
    f64 = toy.value_case("add", "tensor<2xf64>", [1, 2], [3, 4], [4, 6])
    refused = toy.invalid_case("add", "tensor<2xf32>", "tensor<3xf32>", "add_c1")
    accepted = toy.invalid_case("subtract", "tensor<2xf32>", "tensor<2xi32>", "subtract_c1")
    v = {x.id: x for x in Runner(BACKEND).run([wrong, f64, refused, accepted])}

    assert v[wrong.id].verdict == "fail"
    assert "expected -2.0 got 4.0" in v[wrong.id].detail
    assert v[wrong.id].max_ulp > 1e9

    assert v[f64.id].verdict == "unsupported" and "f64" in v[f64.id].detail
    assert v[f64.id].conformant is None

    assert v[refused.id].verdict == "rejected" and v[refused.id].conformant is True
    assert v[refused.id].violates == "add_c1"

    assert v[accepted.id].verdict == "fail"
    assert "accepted a program violating subtract_c1" in v[accepted.id].detail


def test_value_case_rejected_is_not_conformant():
    c = toy.value_case("add", "tensor<2xf32>", [1, 2], [3, 4], [4, 6])
    c.mlir = toy.program("add", "tensor<2xf32>", "tensor<3xf32>")  # the toy refuses this text
    [v] = Runner(BACKEND).run([c])
    assert v.verdict == "rejected" and v.conformant is False


def test_unknown_backend_class_is_a_load_error(tmp_path):
    with pytest.raises(BackendLoadError, match="NoSuchBackend"):
        Runner(f"{FIXTURE}:NoSuchBackend").run(add_cases()[:1])


def test_score_writes_results_and_removes_journal(tmp_path):
    out = tmp_path / "r.json"
    doc = score(add_cases(), BACKEND, suite="toy", manifest={"seed": 1}, json_path=out)
    saved = json.loads(out.read_text())
    assert saved["counts"]["pass"] == 4 and saved["counts"]["nonconformant"] == 0
    assert saved["per_op"]["add"]["dtypes"]["f32"]["pass"] == 3
    assert saved["describe"] == "toy backend 1.0" and doc["backend"] == BACKEND
    for key in ("backend", "describe", "suite", "manifest", "started", "seconds", "counts", "per_op", "verdicts"):
        assert key in saved
    assert not Path(str(out) + ".journal").exists()


def test_resume_from_journal(tmp_path, compile_log):
    cases = add_cases()
    out = tmp_path / "r.json"
    # An interrupted earlier run judged the first three cases (the f32 program).
    j = Journal(Path(str(out) + ".journal"), BACKEND, "toy", {"seed": 1}).open()
    j.set_describe("toy backend 1.0")
    for c in cases[:3]:
        j.add(Verdict(id=c.id, op=c.op, dtype=c.dtype, kind=c.kind, verdict="pass", detail="from the journal"))
    j.close()
    with open(str(out) + ".journal", "a") as f:
        f.write('{"id": "add/f32/cut-sh')  # a line cut short by the interruption

    doc = score(cases, BACKEND, suite="toy", manifest={"seed": 1}, json_path=out)
    assert doc["resumed"] == 3
    assert [v["detail"] for v in doc["verdicts"][:3]] == ["from the journal"] * 3
    assert doc["verdicts"][3]["verdict"] == "pass" and doc["verdicts"][3]["detail"] == ""
    assert len(compile_log()) == 1 and "tensor<3xi32>" in compile_log()[0]


def test_journal_of_another_backend_is_not_resumed(tmp_path, compile_log):
    cases = add_cases()
    out = tmp_path / "r.json"
    j = Journal(Path(str(out) + ".journal"), "some-other-backend", "toy", {"seed": 1}).open()
    j.add(Verdict(id=cases[0].id, op="add", dtype="f32", kind="value", verdict="fail", detail="stale"))
    j.close()
    doc = score(cases, BACKEND, suite="toy", manifest={"seed": 1}, json_path=out)
    assert doc["resumed"] == 0
    assert [v["verdict"] for v in doc["verdicts"]] == ["pass"] * 4
    assert len(compile_log()) == 2
