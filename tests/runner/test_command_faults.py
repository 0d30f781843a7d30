"""A `command:` implementation that dies, hangs or lies, through the real
runner: every verdict stays the implementation's own.

The implementation is tests/backends/fixtures/numpy_impl.py with its fault
flags.  Each fault is committed once (`--once`) on a chosen request; the
case in flight then is a `crash` (or `timeout`), and every other case has
the verdict of a clean run — the restarted process compiles again, and no
reply is ever matched to the wrong request.
"""
from __future__ import annotations

import importlib.util
import sys
import time
import zlib
from pathlib import Path

import pytest

from shlo_conform.runner import BackendLoadError, Runner, group_by_program

IMPL = Path(__file__).parents[1] / "backends" / "fixtures" / "numpy_impl.py"
TOY = Path(__file__).parent / "fixtures" / "toy.py"
_spec = importlib.util.spec_from_file_location("toy_fixture_faults", TOY)
toy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(toy)


def command(*flags: str) -> str:
    return f"command:{sys.executable} {IMPL} " + " ".join(flags)


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
    ("wrong-id", 10, ["protocol violation", "carries id"]),
    ("no-id", 11, ["protocol violation", "carries id None"]),
])
def test_a_fault_is_the_crash_of_the_case_in_flight_only(tmp_path, clean, fault, n, words):
    got = verdicts(command(f"--{fault}-on={n}", f"--once={tmp_path / 'once'}"))
    assert (tmp_path / "once").exists()  # the fault did happen
    assert_only(got, clean, requests()[n - 1][1], "crash", *words)


def test_an_extra_line_on_stdout_shifts_nothing(tmp_path, clean):
    """A second copy of reply 3 waits on stdout: it is read as the reply to
    request 4, whose id it does not carry — the case of request 4 is a crash
    that names the problem, and no later reply is matched to the wrong case."""
    got = verdicts(command("--extra-line-on=3", f"--once={tmp_path / 'once'}"))
    assert_only(got, clean, requests()[3][1], "crash", "extra line")


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
