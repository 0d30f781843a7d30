"""A `command:` implementation that dies, hangs or lies, through the real
runner: every verdict stays the implementation's own.

The implementation is tests/backends/fixtures/numpy_impl.py with its fault
flags (and fixtures/stray_impl.py, the same with faults that follow a
reply).  Each fault is committed once (`--once`) on a chosen request; the
case in flight then is a `crash` (or `timeout`), and every other case has
the verdict of a clean run — the restarted process compiles again, and no
reply is ever matched to the wrong request.  A fault of the exchange before
(output after a complete reply, the process's end after it) is nobody's
crash: the request in flight is tried again on a fresh process, and only a
fault there is its own.
"""
from __future__ import annotations

import importlib.util
import sys
import time
import zlib
from pathlib import Path

import pytest

from shlo_conform.backends.base import load_backend
from shlo_conform.pipeline.runner import BackendLoadError, Runner
from shlo_conform.pipeline.judging import check_outputs
from shlo_conform.pipeline.planning import group_by_program
IMPL = Path(__file__).parents[1] / "backends" / "fixtures" / "numpy_impl.py"
STRAY = Path(__file__).parent / "fixtures" / "stray_impl.py"
TOY = Path(__file__).parent / "fixtures" / "toy.py"
_spec = importlib.util.spec_from_file_location("toy_fixture_faults", TOY)
toy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(toy)


def command(*flags: str) -> str:
    return f"command:{sys.executable} {IMPL} " + " ".join(flags)


def stray(*flags: str) -> str:
    return f"command:{sys.executable} {STRAY} " + " ".join(flags)


# Eight cases in five programs; expected values computed by hand.
CASES = [
    toy.value_case("add", "tensor<2xf32>", [1, 2], [3, 4], [4, 6]),
    toy.value_case("add", "tensor<2xf32>", [0.5, -1], [0.25, 1], [0.75, 0]),
    toy.value_case("add", "tensor<2xf32>", [-0.0, 8], [-0.0, -8], [-0.0, 0]),
    toy.value_case("subtract", "tensor<2xi32>", [5, 7], [2, 9], [3, -2]),
    toy.value_case("subtract", "tensor<2xi32>", [0, -1], [1, -1], [-1, 0]),
    toy.value_case("multiply", "tensor<2xf32>", [1.5, -2], [2, 3], [3, -6]),
    toy.value_case("add", "tensor<3xi32>", [1, 2, 3], [10, 20, 30], [11, 22, 33]),
    toy.value_case("multiply", "tensor<2xi32>", [7, -3], [6, 5], [42, -15]),
]


def requests() -> list[tuple[str, str | None]]:
    """(command, case id) of each request of a clean run, in order: claims,
    then per program its compile (for its first case) and its runs."""
    out = [("claims", None)]
    for group in group_by_program(CASES):
        out.append(("compile", group[0].id))
        out += [("run", c.id) for c in group]
    return out


def verdicts(backend: str, cases=CASES, **kw) -> dict:
    return {v.id: v for v in Runner(backend, **kw).run(cases)}


@pytest.fixture(scope="module")
def clean():
    v = verdicts(command())
    assert {x.verdict for x in v.values()} == {"pass"}, [x.detail for x in v.values()]
    return {k: x.verdict for k, x in v.items()}


def assert_only(got: dict, clean: dict, case_id: str, verdict: str, *words: str) -> None:
    assert got[case_id].verdict == verdict, got[case_id].detail
    for w in words:
        assert w in got[case_id].detail, got[case_id].detail
    assert {k: v.verdict for k, v in got.items() if k != case_id} == {k: v for k, v in clean.items() if k != case_id}


# request numbers: 1 claims, 2 compile (add f32), 3-5 runs, 6 compile (subtract), 7-8 runs, ...
@pytest.mark.parametrize("fault, n, words", [
    ("segv", 4, ["SIGSEGV"]),                       # a run in the middle of a three-case program
    ("kill", 6, ["SIGKILL"]),                       # a compile
    ("exit0", 7, ["status 0"]),                      # exits 0 without a reply
    ("crash", 3, ["SIGABRT"]),
    ("garbage", 8, ["protocol violation", "not JSON"]),
    ("array", 4, ["protocol violation", "not an object"]),
    ("huge", 5, ["protocol violation", "longer than 64 MiB"]),
    ("partial", 9, ["part of a reply line"]),
    ("no-id", 11, ["protocol violation", "carries id None"]),
])
def test_a_fault_is_the_crash_of_the_case_in_flight_only(tmp_path, clean, fault, n, words):
    got = verdicts(command(f"--{fault}-on={n}", f"--once={tmp_path / 'once'}"))
    assert (tmp_path / "once").exists()  # the fault did happen
    assert_only(got, clean, requests()[n - 1][1], "crash", *words)


def _logged(logs: Path) -> str:
    return "".join(f.read_text(errors="replace") for f in logs.iterdir())


def test_an_extra_line_on_stdout_is_not_the_next_cases_crash(tmp_path, clean):
    """A second copy of reply 3 follows it on stdout: the exchange of request
    3 broke the protocol, not that of request 4.  Whether the line is seen
    waiting before request 4 is sent or read in place of its reply (it
    carries id 3), request 4 goes to a fresh process: every verdict is a
    clean run's, the one decided on reply 3 included, and the worker's log
    names the violation."""
    logs = tmp_path / "logs"
    logs.mkdir()
    got = verdicts(command("--extra-line-on=3", f"--once={tmp_path / 'once'}"), log_dir=str(logs))
    assert (tmp_path / "once").exists()  # the fault did happen
    assert {k: v.verdict for k, v in got.items()} == clean
    log = _logged(logs)
    assert "protocol violation" in log and "which carries id 3" in log, log[-2000:]


def test_a_late_second_reply_is_not_the_next_cases_crash(tmp_path, clean):
    """The second copy of reply 3 comes only after request 4 was sent, before
    reply 4: read first, it carries an earlier request's id, so it is the
    exchange before that broke the protocol; request 4 goes to a fresh process."""
    logs = tmp_path / "logs"
    logs.mkdir()
    got = verdicts(stray("--late-extra-line-on=4", f"--once={tmp_path / 'once'}"), log_dir=str(logs))
    assert (tmp_path / "once").exists()
    assert {k: v.verdict for k, v in got.items()} == clean
    assert "a second reply to request 3, read before the reply to request 4" in _logged(logs)


def test_a_reply_with_the_id_of_the_request_before_is_tried_again(tmp_path, clean):
    """Reply 10 carries id 9, once: it cannot be told from a late second reply
    to request 9, so it is taken for one, and request 10 goes to a fresh
    process, which answers it.  (Every time: the next test.)"""
    got = verdicts(command("--wrong-id-on=10", f"--once={tmp_path / 'once'}"))
    assert (tmp_path / "once").exists()
    assert {k: v.verdict for k, v in got.items()} == clean


@pytest.mark.parametrize("fault", ["late-extra-line-for", "wrong-id-for"])
def test_a_fault_that_recurs_on_the_second_try_is_the_cases_own_crash(tmp_path, clean, fault):
    """The runs of one case's inputs, and only those, are preceded by a second
    reply to the request before, or answered with its id, on every process:
    the fresh process does it too, and that second violation is the case's
    own crash.  One retry, no more; the other cases keep their verdicts."""
    case_id = requests()[3][1]
    doomed = next(c for c in CASES if c.id == case_id)
    got = verdicts(stray(f"--{fault}=" + "".join(v.hex for v in doomed.inputs)))
    assert_only(got, clean, case_id, "crash", "protocol violation", "carries id", "second try")


@pytest.mark.parametrize("n", [4, 6])  # a run, a compile
def test_an_exit_that_leaves_stdout_open_is_a_crash_at_once(tmp_path, clean, n):
    """The implementation starts a process that keeps its stdin and stdout
    open, then exits with status 5 instead of replying: a crash naming the
    exit status as soon as it exits, not a timeout once the timeout is spent;
    the process it left is gone by the end of the run."""
    pidfile = tmp_path / "pids"
    t0 = time.monotonic()
    got = verdicts(stray(f"--exit-on={n}", f"--orphan={pidfile}", f"--once={tmp_path / 'once'}"),
                   compile_timeout=15, run_timeout=15)
    case_id = requests()[n - 1][1]
    assert_only(got, clean, case_id, "crash", "exit status 5", "still holds its stdout open")
    assert got[case_id].seconds < 5
    assert time.monotonic() - t0 < 30
    assert _all_dead([int(p) for p in pidfile.read_text().split()])


def _one(backend, case):
    """Compile and run `case` on an adapter in this process: did it pass?"""
    out = backend.run(backend.compile(case.mlir), [v.array() for v in case.inputs])
    return check_outputs(case, out)[0]


def test_output_waiting_before_the_next_request_restarts_the_implementation(tmp_path, capfd):
    """A line of text follows reply 2 (the compile): it waits on stdout when
    the run is sent — seen then, not read as the run's reply, the run goes
    to a fresh process (asked claims first, compiling the program again)."""
    marker = tmp_path / "written"
    b = load_backend(stray("--text-after-reply-on=2", f"--marker={marker}", f"--once={tmp_path / 'once'}"))
    try:
        c = CASES[0]
        assert b.claims(c.op, c.dtype) is None             # request 1
        exe = b.compile(c.mlir)                            # request 2, then the text
        deadline = time.monotonic() + 10
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert marker.exists()
        assert check_outputs(c, b.run(exe, [v.array() for v in c.inputs]))[0]
        assert _one(b, CASES[1])                            # the fresh process goes on
    finally:
        b.close()
    err = capfd.readouterr().err
    assert "protocol violation" in err and "output on stdout after the reply to request 2 ('compile')" in err, err


def test_an_end_after_a_reply_is_not_the_next_requests_crash(tmp_path, capfd):
    """The implementation exits (status 0) right after reply 2: the run is
    not sent to a process known to have ended, but to a fresh one."""
    b = load_backend(stray("--exit-after-reply-on=2", f"--once={tmp_path / 'once'}"))
    try:
        c = CASES[0]
        assert b.claims(c.op, c.dtype) is None
        exe = b.compile(c.mlir)
        b._proc.wait(10)   # it has ended before the run is sent
        assert check_outputs(c, b.run(exe, [v.array() for v in c.inputs]))[0]
    finally:
        b.close()
    err = capfd.readouterr().err
    assert "exited with exit status 0 after the reply to request 2 ('compile')" in err, err


def test_a_hang_is_the_timeout_of_the_case_in_flight_only(tmp_path, clean):
    got = verdicts(command("--hang-on=4", f"--once={tmp_path / 'once'}"), run_timeout=1.5)
    assert_only(got, clean, requests()[3][1], "timeout", "1.5 s")


def test_crashing_on_one_case_in_eight_leaves_the_others_verdicts_alone():
    """Deterministic: the implementation dies on the cases whose inputs hash to
    0 mod 8 (every time).  64 cases in two programs, 6 of them doomed: those
    crash, every other passes, as in a clean run."""
    cases = [toy.value_case(op, t, [k, 2 * k], [3, -k], [k + 3 if op == "add" else k - 3, k if op == "add" else 3 * k])
             for k in range(32) for op, t in (("add", "tensor<2xi32>"), ("subtract", "tensor<2xi32>"))]
    doomed = {c.id for c in cases if zlib.crc32("".join(v.hex for v in c.inputs).encode()) % 8 == 0}
    assert 4 <= len(doomed) <= 16  # about one in eight (6 of 64 with these inputs)
    got = verdicts(command("--crash-one-in=8"), cases)
    assert {k for k, v in got.items() if v.verdict == "crash"} == doomed
    assert all(v.verdict == "pass" for k, v in got.items() if k not in doomed), \
        [v.detail for v in got.values() if v.verdict != "pass"]


def test_outputs_labelled_with_another_element_type_fail():
    got = verdicts(command("--retype=i32:ui32"))
    for c in CASES:
        if c.dtype == "si32":
            assert got[c.id].verdict == "fail"
            assert "element type ui32 where i32 was declared" in got[c.id].detail
        else:
            assert got[c.id].verdict == "pass"


def _all_dead(pids, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while any(toy.alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(toy.alive(p) for p in pids)


def test_children_of_the_implementation_end_with_the_run(tmp_path, clean):
    """Each start of the implementation forks a child that would sleep ten
    minutes; a crash restarts it once.  None outlives the run."""
    pidfile = tmp_path / "pids"
    got = verdicts(command(f"--fork-child={pidfile}", "--segv-on=4", f"--once={tmp_path / 'once'}"))
    assert_only(got, clean, requests()[3][1], "crash", "SIGSEGV")
    pids = [int(p) for p in pidfile.read_text().split()]
    assert len(pids) == 2
    assert _all_dead(pids)


def test_hanging_before_claims_is_bounded_by_the_startup_timeout(tmp_path):
    pidfile = tmp_path / "pids"
    t0 = time.monotonic()
    with pytest.raises(BackendLoadError, match="could not start.*longer than 2 s"):
        verdicts(command("--hang-before-claims", f"--fork-child={pidfile}"), startup_timeout=2)
    assert time.monotonic() - t0 < 15
    assert _all_dead([int(p) for p in pidfile.read_text().split()])


def test_stderr_floods_are_capped_and_harmless(tmp_path, clean):
    logs = tmp_path / "logs"
    logs.mkdir()
    got = verdicts(command(f"--stderr-flood={3 << 20}"), log_dir=str(logs))
    assert {k: v.verdict for k, v in got.items()} == clean
    assert max(f.stat().st_size for f in logs.iterdir()) < (2 << 20) + 200


def test_a_protocol_violation_reaches_the_results_and_the_table(tmp_path, clean):
    """The violation that the adapter works around (an extra reply line: the
    request in flight retried on a fresh process) is said in the results
    (`backend_notes`) and the terminal table, not only in a worker log in a
    temporary folder; every verdict is still a clean run's."""
    import json as _json
    from shlo_conform.reports import table
    from shlo_conform.pipeline.scoring import score
    from shlo_conform.suites.results import check_results
    doc = score(CASES, command("--extra-line-on=3", f"--once={tmp_path / 'once'}"), suite="faults",
                manifest={"suite": "faults"}, json_path=tmp_path / "r.json", compile_timeout=20, run_timeout=10,
                jobs=1)
    assert (tmp_path / "once").exists()
    assert {v["id"]: v["verdict"] for v in doc["verdicts"]} == clean
    [note] = doc["backend_notes"]
    assert note.startswith("command backend: protocol violation by")
    assert "protocol violation" in note and "tried again on a fresh process" in note
    check_results(_json.loads((tmp_path / "r.json").read_text()))
    assert f"backend note: {note}" in table.render(doc)
