"""The runner against a toy backend whose misbehaviour is known (fixtures/toy.py):
crash and hang isolation, classification, compile-once grouping, the journal,
the results lock, process groups, capped logs, bounded startup."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shlo_conform.pipeline.journal import Journal, JournalMismatch, ResultsBusy, journal_path, run_key
from shlo_conform.pipeline.runner import DEFAULT_COMPILE_TIMEOUT, DEFAULT_RUN_TIMEOUT, BackendLoadError, Runner
from shlo_conform.pipeline.scoring import score
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


def key_for(cases, backend=BACKEND, digest="d1", run_timeout=DEFAULT_RUN_TIMEOUT):
    return run_key(backend=backend, suite="toy", suite_digest=digest, case_ids=[c.id for c in cases],
                   compile_timeout=DEFAULT_COMPILE_TIMEOUT, run_timeout=run_timeout)


def test_resume_from_journal(tmp_path, compile_log):
    cases = add_cases()
    out = tmp_path / "r.json"
    # An interrupted earlier run judged the first three cases (the f32 program).
    j = Journal(journal_path(out, key_for(cases)), key_for(cases)).open()
    j.set_describe("toy backend 1.0")
    for c in cases[:3]:
        j.add(Verdict(id=c.id, op=c.op, dtype=c.dtype, kind=c.kind, verdict="pass", detail="from the journal"))
    j.close()
    with open(journal_path(out, key_for(cases)), "a") as f:
        f.write('{"id": "add/f32/cut-sh')  # a line cut short by the interruption

    doc = score(cases, BACKEND, suite="toy", manifest={"seed": 1}, json_path=out, suite_digest="d1")
    assert doc["resumed"] == 3
    assert [v["detail"] for v in doc["verdicts"][:3]] == ["from the journal"] * 3
    assert doc["verdicts"][3]["verdict"] == "pass" and doc["verdicts"][3]["detail"] == ""
    assert len(compile_log()) == 1 and "tensor<3xi32>" in compile_log()[0]
    assert not journal_path(out, key_for(cases)).exists()


@pytest.mark.parametrize("other", [
    dict(backend="some-other-backend"),   # another backend
    dict(digest="d2"),                    # the suite's bytes changed
    dict(run_timeout=1.0),                # other timeouts: 44 stale `timeout` verdicts were reused once
])
def test_journal_of_other_options_is_kept_and_not_resumed(tmp_path, compile_log, other):
    cases = add_cases()
    out = tmp_path / "r.json"
    theirs = journal_path(out, key_for(cases, **other))
    j = Journal(theirs, key_for(cases, **other)).open()
    j.add(Verdict(id=cases[0].id, op="add", dtype="f32", kind="value", verdict="timeout", detail="stale"))
    j.close()
    before = theirs.read_text()
    doc = score(cases, BACKEND, suite="toy", manifest={"seed": 1}, json_path=out, suite_digest="d1")
    assert doc["resumed"] == 0
    assert [v["verdict"] for v in doc["verdicts"]] == ["pass"] * 4
    assert len(compile_log()) == 2
    assert theirs.read_text() == before  # never mixed in, never destroyed


def test_another_selection_keeps_its_own_journal(tmp_path):
    cases = add_cases()
    out = tmp_path / "r.json"
    earlier = journal_path(out, key_for(cases[:2]))
    Journal(earlier, key_for(cases[:2])).open().close()
    score(cases[2:], BACKEND, suite="toy", manifest={"seed": 1}, json_path=out, suite_digest="d1")
    assert earlier.exists()


def test_a_damaged_journal_is_refused_not_replaced(tmp_path):
    cases = add_cases()
    out = tmp_path / "r.json"
    path = journal_path(out, key_for(cases))
    path.write_text("not a journal header\n")
    with pytest.raises(JournalMismatch, match="remove it"):
        score(cases, BACKEND, suite="toy", manifest={"seed": 1}, json_path=out, suite_digest="d1")
    assert path.read_text() == "not a journal header\n" and not out.exists()


def test_a_second_run_on_the_same_results_file_is_refused(tmp_path):
    """A real second process holds the lock; once it is killed, the kernel
    releases the lock and a run goes through."""
    out = tmp_path / "r.json"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from shlo_conform.pipeline.journal import ResultsLock; "
         "ResultsLock(sys.argv[1]).__enter__(); print('held', flush=True); time.sleep(120)", str(out)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(ResultsBusy, match=f"process {holder.pid}"):
            score(add_cases(), BACKEND, suite="toy", manifest={}, json_path=out)
        assert not out.exists()
    finally:
        holder.kill()
        holder.wait()
    doc = score(add_cases(), BACKEND, suite="toy", manifest={}, json_path=out)
    assert doc["counts"]["pass"] == 4 and out.exists() and not Path(f"{out}.lock").exists()


def test_duplicate_ids_are_refused():
    c = add_cases()[0]
    with pytest.raises(ValueError, match="two cases have the id"):
        Runner(BACKEND).run([c, c])


def test_a_compile_crash_is_the_case_in_flight_only(tmp_path, monkeypatch, compile_log):
    """The compiler dies once on a program three cases share: the first case is
    a crash, the fresh worker compiles again, the other two pass."""
    monkeypatch.setenv("TOY_ONCE", str(tmp_path / "once"))
    cases = [toy.value_case("custom_call", "tensor<2xi32>", [1, k], [3, 4], [4, k + 4], target="die_compiling_once")
             for k in range(3)]
    v = Runner(BACKEND).run(cases)
    assert [x.verdict for x in v] == ["crash", "pass", "pass"], [x.detail for x in v]
    assert "SIGABRT" in v[0].detail and "while compiling" in v[0].detail
    assert len(compile_log()) == 2


def test_wrong_element_type_is_a_failure_not_converted():
    """The backend returns the right bits as ui32 where the program says i32."""
    c = toy.value_case("custom_call", "tensor<2xi32>", [1, 2], [3, 4], [4, 6], target="unsigned")
    [v] = Runner(BACKEND).run([c])
    assert v.verdict == "fail" and "element type ui32 where i32 was declared" in v.detail


def test_processes_a_backend_forks_end_with_the_run(tmp_path, monkeypatch):
    pidfile = tmp_path / "pids"
    monkeypatch.setenv("TOY_PIDFILE", str(pidfile))
    c = toy.value_case("custom_call", "tensor<2xi32>", [1, 2], [3, 4], [4, 6], target="fork")
    [v] = Runner(BACKEND).run([c])
    assert v.verdict == "pass"
    [pid] = [int(x) for x in pidfile.read_text().split()]
    deadline = time.monotonic() + 5
    while toy.alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not toy.alive(pid)


def test_worker_log_is_capped(tmp_path, monkeypatch):
    """6 MiB of chatter on stdout and stderr: the log keeps its first and last
    MiB and says what it left out; the case still passes."""
    monkeypatch.setenv("TOY_CHATTER", str(6 << 20))
    logs = tmp_path / "logs"
    logs.mkdir()
    c = toy.value_case("custom_call", "tensor<2xi32>", [1, 2], [3, 4], [4, 6], target="chatter")
    [v] = Runner(BACKEND, log_dir=str(logs)).run([c])
    assert v.verdict == "pass", v.detail
    [log] = logs.glob("worker-*.log")   # the zygote keeps a log of its own there
    data = log.read_bytes()
    assert len(data) < (2 << 20) + 200
    assert b"bytes of output not kept" in data and data.rstrip().endswith(b"last words on stderr")


def test_startup_is_bounded_by_the_runs_timeout(monkeypatch):
    monkeypatch.setenv("TOY_INIT_SECONDS", "3600")
    t0 = time.monotonic()
    with pytest.raises(BackendLoadError, match="longer than 2 s"):
        Runner(f"{FIXTURE}:SlowToy", startup_timeout=2).run(add_cases()[:1])
    assert time.monotonic() - t0 < 15


def test_startup_timeout_follows_the_compile_timeout():
    from shlo_conform.pipeline.isolation import STARTUP_FLOOR, default_startup_timeout
    assert default_startup_timeout(5) == STARTUP_FLOOR
    assert default_startup_timeout(2 * STARTUP_FLOOR) == 2 * STARTUP_FLOOR
    assert Runner(BACKEND, compile_timeout=300).startup_timeout == 300
