"""Workers forked from the zygote (shlo_conform/pipeline/zygote.py) against the toy
backend (fixtures/toy.py): they are the zygote's children, a crash still
reads as its signal, a dead zygote falls back to fresh interpreters, and
the verdicts are those of fresh interpreters."""
from __future__ import annotations

import importlib.util
import os
import signal
from pathlib import Path

import pytest

from shlo_conform.pipeline.runner import Runner, Worker
from shlo_conform.pipeline.zygote import Zygote

FIXTURE = Path(__file__).parent / "fixtures" / "toy.py"
BACKEND = f"{FIXTURE}:ToyBackend"
_spec = importlib.util.spec_from_file_location("toy_fixture", FIXTURE)
toy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(toy)


def _ppid(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[1])


def test_a_worker_is_forked_by_the_zygote_and_its_crash_reads_as_the_signal(tmp_path):
    z = Zygote(BACKEND, str(tmp_path / "zygote.log"))
    w = Worker(BACKEND, str(tmp_path), zygote=z)
    try:
        assert w.start() == "toy backend 1.0"
        assert _ppid(w.proc.pid) == z.proc.pid
        assert os.getsid(w.proc.pid) == w.proc.pid   # a session of its own: killpg reaches what it starts
        os.kill(w.proc.pid, signal.SIGSEGV)
        assert w.proc.wait(5) == -signal.SIGSEGV
        assert "SIGSEGV" in w.death()
    finally:
        w.kill()
        z.close()


def test_a_dead_zygote_means_a_fresh_interpreter(tmp_path):
    z = Zygote(BACKEND, str(tmp_path / "zygote.log"))
    z.proc.kill()
    z.proc.wait(5)
    w = Worker(BACKEND, str(tmp_path), zygote=z)
    try:
        assert w.start() == "toy backend 1.0"
        assert _ppid(w.proc.pid) == os.getpid()
    finally:
        w.kill()
        z.close()


@pytest.mark.long   # stop 62's trim of make test (8:05 on a clean run): the zygote's other tests stay in make test
def test_forked_and_fresh_workers_give_the_same_verdicts():
    cases = [
        toy.value_case("divide", "tensor<2xi32>", [6, 8], [0, 2], [0, 4]),        # SIGFPE
        toy.value_case("divide", "tensor<2xi32>", [6, 8], [3, 2], [2, 4]),
        toy.value_case("custom_call", "tensor<2xi32>", [1, 1], [1, 1], [2, 2], target="abort"),
        toy.value_case("custom_call", "tensor<2xi8>", [1, 1], [1, 1], [2, 2], target="hang"),
        toy.value_case("subtract", "tensor<2xi32>", [5, 5], [1, 2], [4, 3]),       # wrong on purpose
        toy.value_case("add", "tensor<2xf32>", [1, 2], [3, 4], [4, 6]),
    ]
    forked = [(v.id, v.verdict, v.detail) for v in Runner(BACKEND, run_timeout=1.5, jobs=2).run(cases)]
    fresh = [(v.id, v.verdict, v.detail) for v in Runner(BACKEND, run_timeout=1.5, jobs=2, fork=False).run(cases)]
    assert forked == fresh
    assert [v[1] for v in forked] == ["crash", "pass", "crash", "timeout", "fail", "pass"]
