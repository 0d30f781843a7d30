"""How a case is run: one object per run mode (plain, host, grid).

A case is compiled and run one of three ways — a plain program on one
device, a program that talks to the host (infeed/outfeed, send/recv with
the host: `Case.host`), or a program on a process grid (`Case.grid`) — and
each way differs in the same few places: the worker messages that compile
and run it (worker.py), how its inputs travel, what the run's payload holds,
how its outputs are judged (judging.py), the key that keeps programs of
different grids apart when grouping (planning.py), whether it may be merged
into a batch, and which adapter capability must be asked about first.  Each
mode answers all of these in one class, so that the runner, the planner and
the tools ask `mode_of(case)` instead of testing `case.grid` and
`case.host` in each place, and a new mode is one class: a subclass of `Mode`
is registered by being declared (`MODES`, the later-declared, more specific
modes asked first; `Plain`, the fallback, last).
"""
from __future__ import annotations

from ..suites.records import Case
from .judging import check_grid_outputs, check_outputs, with_log

MODES: list["Mode"] = []   # asked in order by mode_of; every Mode subclass joins it when declared


class Mode:
    """One way of compiling and running a case.  Subclasses set the class
    attributes and override what differs; `applies` says which cases are theirs."""

    name = ""
    compile_msg = "compile"   # the worker message compiling the case's program (worker.py)
    run_msg = "run"           # the worker message running it on the case's inputs
    capability: str | None = None   # a worker question the adapter must answer "ok" to first (None: none)
    batches = True            # may the case's program be merged with others (batching.py)?

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        MODES.insert(0, cls())   # declared later: more specific, asked first

    # -- which cases ------------------------------------------------------------
    def applies(self, case: Case) -> bool:
        raise NotImplementedError

    def key(self, case: Case):
        """What, beside the program text, must agree for cases to share one
        compile (planning.group_by_program): None where nothing does."""
        return None

    # -- through a worker (runner.py, worker.py) ---------------------------------
    def compile_arg(self, case: Case):
        """The argument of `compile_msg`."""
        return case.mlir

    def run_arg(self, case: Case):
        """The argument of `run_msg`: the case's inputs as (type, hex) pairs."""
        return _pairs(case.inputs)

    def unpack(self, payload) -> tuple[list, list | None]:
        """(outputs, host log or None) of an "ok" reply to `run_msg`."""
        return payload, None

    # -- in this process (tools: a backend object, no worker) --------------------
    def compile_on(self, backend, case: Case):
        """The executable of `backend` for the case (what `compile_msg` does in the worker)."""
        return backend.compile(case.mlir)

    def run_on(self, backend, executable, case: Case):
        """What `run_msg` would reply "ok" with, from `backend` in this process."""
        return backend.run(executable, [v.array() for v in case.inputs])

    # -- judging -----------------------------------------------------------------
    def judge(self, case: Case, outputs: list, log: list | None, why: dict | None = None):
        """(ok, detail, max ULP, implementation-defined labels) of a run's
        outputs (judging.py); `why` gets the Verdict's causes, mismatches
        and meaningful ULP."""
        return check_outputs(case, outputs, why)


def _pairs(values) -> list:
    return [(v.type, v.hex) for v in values]


class Plain(Mode):
    """A program on one device, its inputs in, its outputs back."""
    name = "plain"

    def applies(self, case: Case) -> bool:
        return True


class Host(Mode):
    """A program that talks to the host: the case's queues in (infeed,
    host channels), the outputs and what outfeed/send wrote back out
    (`Backend.run_with_host`); an adapter that cannot run it says why
    (the worker's "host" question)."""
    name = "host"
    run_msg = "run_host"
    capability = "host"
    batches = False

    def applies(self, case: Case) -> bool:
        return case.host is not None

    def run_arg(self, case: Case):
        return _pairs(case.inputs), case.host.to_json()

    def unpack(self, payload):
        outputs, log = payload
        return outputs, log

    def run_on(self, backend, executable, case: Case):
        from ..backends.base import HostQueues
        from ..suites.records import HostData
        infeed, channels = HostData.check(case.host.to_json()).queues()
        return backend.run_with_host(executable, [v.array() for v in case.inputs], HostQueues(infeed, channels))

    def judge(self, case: Case, outputs: list, log: list | None, why: dict | None = None):
        ok, detail, max_ulp, labels = check_outputs(case, outputs, why)
        ok, detail, max_ulp, labels = with_log(case, log, ok, detail, max_ulp, labels)
        if ok and why is not None:   # every element passed, the log's included: all their ULPs mean something
            why["meaningful_ulp"] = max_ulp
        return ok, detail, max_ulp, labels


class Grid(Mode):
    """A program on every process of a grid at once (`compile_grid`,
    `run_grid`): each process on its own inputs (the case's own inputs on
    every process where the grid lists none), each process's outputs held
    against its own expectations (judging.check_grid_outputs)."""
    name = "grid"
    compile_msg = "compile_grid"
    run_msg = "run_grid"
    batches = False

    def applies(self, case: Case) -> bool:
        return case.grid is not None

    def key(self, case: Case):
        return case.grid.num_replicas, case.grid.num_partitions

    def compile_arg(self, case: Case):
        return case.mlir, list(self.key(case))

    def run_arg(self, case: Case):
        return [_pairs(vs) for vs in case.grid.inputs] or [_pairs(case.inputs)] * case.grid.size

    def compile_on(self, backend, case: Case):
        from ..spec.grid import Grid as ProcessGrid
        return backend.compile_grid(case.mlir, ProcessGrid(*self.key(case)))

    def run_on(self, backend, executable, case: Case):
        per = [[v.array() for v in vs] for vs in case.grid.inputs] or [[v.array() for v in case.inputs]] * case.grid.size
        return backend.run_grid(executable, per)

    def judge(self, case: Case, outputs: list, log: list | None, why: dict | None = None):
        return check_grid_outputs(case, outputs, why)


def mode_of(case: Case) -> Mode:
    """The first mode in MODES that applies to the case."""
    return next(m for m in MODES if m.applies(case))


def compile_messages() -> set[str]:
    """The worker messages that compile (what the runner counts and times as compiles)."""
    return {m.compile_msg for m in MODES}
