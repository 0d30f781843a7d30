"""Run modes (shlo_conform/pipeline/modes.py): each kind of case of the
bundled suite gets the mode its record calls for, each mode's packing is
what the worker protocol (worker.py's docstring) says that message takes,
each mode's unpacking and judging take what an implementation gives back —
the oracle in this process, a second implementation of the same programs,
then the same outputs spoiled by hand — and a new mode is one class that
the planner and the runner follow without an edit of theirs."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from shlo_conform.backends.oracle import OracleBackend
from shlo_conform.pipeline import modes
from shlo_conform.pipeline.modes import MODES, Mode, mode_of
from shlo_conform.pipeline.planning import _may_batch, group_by_program
from shlo_conform.pipeline.runner import Runner
from shlo_conform.suites.io import load_cases, suite_path


@pytest.fixture(scope="module")
def cases():
    every = load_cases(suite_path("core"), {"abs", "infeed", "all_reduce"})
    def first(op, pred):
        return next(c for c in every if c.op == op and c.kind == "value" and pred(c))
    return {
        "plain": first("abs", lambda c: c.dtype == "f32" and c.inputs[0].hex),
        "host": first("infeed", lambda c: c.host is not None and c.host.infeed),
        "grid": first("all_reduce", lambda c: c.dtype == "f32" and c.grid is not None and c.grid.inputs
                      and c.grid.inputs[0][0].hex),
    }


def test_mode_of_each_kind(cases):
    # by hand: abs is a one-device program; an infeed reads the host's queue; all_reduce's
    # value cases run on a grid of processes
    assert [mode_of(cases[k]).name for k in ("plain", "host", "grid")] == ["plain", "host", "grid"]
    # the worker protocol's messages (worker.py's docstring), stated here
    assert [(m.compile_msg, m.run_msg, m.capability) for m in map(mode_of, cases.values())] == [
        ("compile", "run", None), ("compile", "run_host", "host"), ("compile_grid", "run_grid", None)]
    assert [mode_of(c).batches for c in cases.values()] == [True, False, False]
    g = cases["grid"].grid
    assert mode_of(cases["grid"]).key(cases["grid"]) == (g.num_replicas, g.num_partitions)
    assert mode_of(cases["plain"]).key(cases["plain"]) is None


def test_packing(cases):
    p, h, g = cases["plain"], cases["host"], cases["grid"]
    assert mode_of(p).compile_arg(p) == p.mlir
    assert mode_of(p).run_arg(p) == [(v.type, v.hex) for v in p.inputs]
    args, host = mode_of(h).run_arg(h)
    assert args == [(v.type, v.hex) for v in h.inputs]
    assert host["infeed"] == [{"type": v.type, "hex": v.hex} for v in h.host.infeed]
    mlir, shape = mode_of(g).compile_arg(g)
    assert mlir == g.mlir and shape == [g.grid.num_replicas, g.grid.num_partitions]
    per = mode_of(g).run_arg(g)
    assert len(per) == g.grid.size
    assert per == [[(v.type, v.hex) for v in vs] for vs in g.grid.inputs]
    # a grid listing no inputs per process: the case's own inputs on every process
    bare = dataclasses.replace(g, grid=dataclasses.replace(g.grid, inputs=[]), inputs=g.grid.inputs[0])
    assert mode_of(bare).run_arg(bare) == [[(v.type, v.hex) for v in g.grid.inputs[0]]] * g.grid.size


@pytest.mark.parametrize("kind", ["plain", "host", "grid"])
def test_unpack_and_judge(cases, kind):
    """What the oracle gives back in this process, unpacked and judged, passes;
    the same outputs with one element changed fail."""
    c = cases[kind]
    mode = mode_of(c)
    backend = OracleBackend()
    payload = mode.run_on(backend, mode.compile_on(backend, c), c)
    outputs, log = mode.unpack(payload)
    assert (log is not None) == (kind == "host")
    ok, detail, _, _ = mode.judge(c, outputs, log, {})
    assert ok, detail
    assert Runner("oracle").run_verdict(c, "ok", payload, 0).verdict == "pass"

    def spoil(a):
        a = np.array(a, copy=True)
        flat = a.reshape(-1)
        if a.dtype == bool:
            flat[0] = not flat[0]
        elif a.dtype.kind in "iu":
            flat[0] = flat[0] + 1   # (wraps at the top: still another value)
        else:
            flat[0] = 0 if np.isnan(flat[0]) else np.nan
        return a
    if kind == "grid":
        bad = [[spoil(o) for o in outputs[0]], *outputs[1:]]
    else:
        bad = [spoil(outputs[0]), *outputs[1:]]
    why: dict = {}
    ok, detail, _, _ = mode.judge(c, bad, log, why)
    assert not ok and detail
    if kind == "grid":
        assert detail.startswith(c.grid.process_label(0))


def test_host_log_is_judged(cases):
    """The host mode judges the log too: one entry more than the case
    expects (an outfeed nobody asked for) fails a run whose outputs pass."""
    c = cases["host"]
    mode, backend = mode_of(c), OracleBackend()
    outputs, log = mode.unpack(mode.run_on(backend, mode.compile_on(backend, c), c))
    assert mode.judge(c, outputs, log, {})[0]
    ok, detail, _, _ = mode.judge(c, outputs, [*log, (0, np.zeros(2, np.int32))], {})
    assert not ok and detail


@pytest.fixture
def toy():
    """A mode declared outside the pipeline, for this test only: cases
    whose note says "toy" are compiled with "compile_toy", run with
    "run_toy", never batched, and their run's payload is a dict.  Declaring
    it registers it; the registry is restored afterwards."""
    before = list(MODES)

    class Toy(Mode):
        name = "toy"
        compile_msg = "compile_toy"
        run_msg = "run_toy"
        batches = False

        def applies(self, case):
            return case.note == "toy"

        def key(self, case):
            return "toy"

        def unpack(self, payload):
            return payload["outs"], None
    try:
        yield next(m for m in MODES if isinstance(m, Toy))
    finally:
        MODES[:] = before


def test_a_new_mode_is_one_class(cases, toy):
    p = cases["plain"]
    t = dataclasses.replace(p, id=p.id + "/toy", note="toy")
    assert mode_of(t) is toy and mode_of(p).name == "plain"
    # the planner follows it: not batched, and not grouped with the plain case of the same program
    assert _may_batch(p) and not _may_batch(t)
    assert sorted(len(g) for g in group_by_program([p, t])) == [1, 1]
    assert len(group_by_program([p, dataclasses.replace(p, id=p.id + "/2")])) == 1
    # the runner follows it: the payload is unpacked and judged the toy's way
    backend = OracleBackend()
    outs = backend.run(backend.compile(p.mlir), [v.array() for v in p.inputs])
    assert Runner("oracle").run_verdict(t, "ok", {"outs": outs}, 0).verdict == "pass"
    assert "compile_toy" in modes.compile_messages()


def test_the_registry_holds_the_three():
    assert [m.name for m in MODES] == ["grid", "host", "plain"]
