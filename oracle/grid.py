"""A program run on a whole process grid: every process, and the exchange
of values at collectives (seed 000, "Parallel execution", "Collective ops").

`execute_on_grid(program, grid, inputs_per_process)` runs the program once
per process of `grid` (spec/grid.py), each with its own inputs, and returns
each process's outputs — both lists in *flattened id order*.  A process is
a thread; a collective op's rule (oracle/collective.py) hands its operands
to `GridProcess.exchange`, which returns every contribution of the op's
process group once all of them have arrived.

Why the outcome cannot depend on the schedule:

* one process runs at a time: a thread holds the *baton* (one lock) while it
  executes and gives it up only while it waits at a rendezvous.  The
  oracle's own state — mpmath's working precision, the values a region
  captures — is therefore never shared by two running processes;
* a rendezvous returns the contributions keyed by process, in the order of
  the group the op names (all_gather concatenates in that order), never in
  the order of arrival;
* a rendezvous is named by its key — (the op's mnemonic, how many
  collectives this process has executed before it) — and its group: two
  processes meet only at the same collective of their own program order.

Why it never hangs: the state of every process (ready, waiting at a key,
finished, failed) is known under the baton.  When no process can move —
none is ready, and no rendezvous is complete — the run is *stuck*, and the
processes that wait are released with one line saying what the processes
disagree on (one finished while another waits for it at a collective; they
wait at different collectives; they name different groups).  The seed
leaves what happens then open ("what happens if they don't [arrive] is
TBD", #484): the oracle states no result — a `CannotJudge` naming the
collective, marked `disagreement = True` (`disagreement`).  A group that
names a process twice, one outside the grid, or one without the process
itself breaks the seed's "must have unique elements" rules:
`ProgramRejected`.  Contributions of different types at one rendezvous
are a disagreement too.

Because the stuck state is final (no process can change it), the line
reported is the same whatever the schedule; so is the error
`execute_on_grid` raises when processes fail: the one of the lowest
flattened id among the processes that failed of their own (not released
because a process of their group had failed).
"""
from __future__ import annotations

import random
import threading
from typing import Callable, Sequence

from ..spec.grid import MAX_PROCESSES, SINGLE, Grid, ProcessId
from .rejection import CannotJudge, ProgramRejected

__all__ = ["GridProcess", "disagreement", "execute_on_grid", "single_process"]


MIN_PROCESS_STACK = 8 << 20   # bytes: a process thread's stack when the caller's is shared among many


def _execute():
    from .execution import execute   # execution.py imports this module (GridProcess): deferred
    return execute


def disagreement(op: str, message: str):
    """The error of processes that disagree at a collective (module
    docstring): a `CannotJudge` (the spec states no result) naming the
    collective, with `disagreement = True` (a mark on the exception every
    caller already catches, rather than a subclass of it)."""
    err = CannotJudge(op, message)
    err.disagreement = True
    return err


def _rejected(message: str):
    return ProgramRejected(message)


class _Aborted(Exception):
    """Released from a rendezvous because a process of the group failed:
    not this process's own error (never the one `execute_on_grid` reports)."""


class _Rendezvous:
    """The shared state of one grid run, guarded by the baton (`cond`'s lock)."""

    READY, WAITING, DONE, FAILED = "ready", "waiting", "done", "failed"

    def __init__(self, grid: Grid):
        self.grid = grid
        self.cond = threading.Condition(threading.Lock())
        self.status = {p: self.READY for p in grid.processes()}
        self.waiting: dict = {}    # process -> (key, group)
        self.slots: dict = {}      # (key, group) -> {process: value}
        self.results: dict = {}    # process -> contributions (dict) or an exception to raise

    # -- under the baton ------------------------------------------------------
    def arrive(self, me: ProcessId, key, group: tuple, value) -> dict:
        slot = self.slots.setdefault((key, group), {})
        slot[me] = value
        self.status[me] = self.WAITING
        self.waiting[me] = (key, group)
        if len(slot) == len(group):
            self._complete(key, group, slot)
        else:
            self._check_stuck()
        while self.status[me] == self.WAITING:
            self.cond.wait()
        got = self.results.pop(me)
        if isinstance(got, BaseException):
            raise got
        return got

    def _complete(self, key, group: tuple, slot: dict) -> None:
        del self.slots[(key, group)]
        contributions = {p: slot[p] for p in group}   # the group's order, never the arrival order
        types = {p: _signature(v) for p, v in contributions.items()}
        first = types[group[0]]
        odd = next((p for p in group if types[p] != first), None)
        line = None if odd is None else (f"processes disagree at {_at(key)}: {_pid(group[0])} contributes "
                                         f"{first}, {_pid(odd)} contributes {types[odd]}")
        for p in group:
            self.results[p] = contributions if line is None else disagreement(_op(key), line)
            self.status[p] = self.READY
            self.waiting.pop(p, None)
        self.cond.notify_all()

    def leave(self, me: ProcessId, failed: bool) -> None:
        self.status[me] = self.FAILED if failed else self.DONE
        self._check_stuck()

    def _check_stuck(self) -> None:
        """No process can move: release every waiting one, with the
        disagreement (or `_Aborted` where its group holds a failed process)."""
        if not self.waiting or any(s == self.READY for s in self.status.values()):
            return
        line = self._disagreement()
        for p, (key, group) in sorted(self.waiting.items(), key=lambda kv: self.grid.flattened(kv[0])):
            if any(self.status[q] == self.FAILED for q in group):
                self.results[p] = _Aborted(f"{_pid(p)}: a process of its group at {_at(key)} failed")
            else:
                self.results[p] = disagreement(_op(key), line)
            self.status[p] = self.READY
        self.waiting.clear()
        self.slots.clear()
        self.cond.notify_all()

    def _disagreement(self) -> str:
        """One line for a stuck grid, from its final state: the waiting
        process of lowest flattened id, and the first member of its group
        that is not where it is."""
        order = sorted(self.waiting, key=self.grid.flattened)
        for p in order:
            key, group = self.waiting[p]
            for q in group:
                if q == p or self.status[q] == self.FAILED:
                    continue
                if self.status[q] == self.DONE:
                    return (f"processes disagree: {_pid(q)} finished the program while {_pid(p)} waits for it at "
                            f"{_at(key)} (group {_group(group)})")
                qkey, qgroup = self.waiting[q]
                if qkey != key:
                    return (f"processes disagree: {_pid(p)} waits at {_at(key)} (group {_group(group)}) while "
                            f"{_pid(q)} waits at {_at(qkey)} (group {_group(qgroup)})")
                if qgroup != group:
                    return (f"processes disagree on the group of {_at(key)}: {_pid(p)} names {_group(group)}, "
                            f"{_pid(q)} names {_group(qgroup)}")
        p = order[0]
        return f"processes disagree: {_pid(p)} waits at {_at(self.waiting[p][0])} for processes that never arrive"


def _signature(value):
    """What must agree between contributions: the types of the values
    (Expectations, tuples and lists of them nested), else the Python type."""
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(_signature(v) for v in value) + ")"
    t = getattr(value, "type", None)
    return getattr(t, "mlir", None) or str(t if t is not None else type(value).__name__)


def _op(key) -> str:
    return str(key[0]) if isinstance(key, tuple) else str(key)


def _pid(p: ProcessId) -> str:
    return f"process ({p[0]}, {p[1]})"


def _group(group) -> str:
    return "[" + ", ".join(f"({r}, {q})" for r, q in group) + "]"


def _at(key) -> str:
    if isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], int):
        return f"{key[0]} (collective #{key[1]} of the process)"
    return str(key)


class GridProcess:
    """One process of a grid run: its `grid`, its `id` (replica_id,
    partition_id) and `exchange`.  `collectives` counts the rendezvous it
    has been to (the second part of a key).  A process made without a
    rendezvous (`single_process`) is a 1×1 grid: exchange returns its own
    value."""

    def __init__(self, grid: Grid, id: ProcessId, rendezvous: _Rendezvous | None = None):
        self.grid, self.id = grid, tuple(id)
        self.collectives = 0
        self._rv = rendezvous

    @property
    def replica_id(self) -> int:
        return self.id[0]

    @property
    def partition_id(self) -> int:
        return self.id[1]

    @property
    def flattened_id(self) -> int:
        return self.grid.flattened(self.id)

    def key(self, mnemonic: str) -> tuple:
        """The key of this process's next collective: (mnemonic, collectives so far)."""
        return (mnemonic, self.collectives)

    def exchange(self, key, group: Sequence[ProcessId], value) -> dict:
        """Every contribution of `group` to the rendezvous `key`, as
        {process: value} in the group's order, once all have arrived.  `key`
        is (mnemonic, count) — `key(mnemonic)` — or a bare mnemonic, which
        is numbered here.  Raises ProgramRejected for a group that names a
        process twice, one outside the grid or not this one, and
        `disagreement` (a CannotJudge) where the processes cannot all meet."""
        if isinstance(key, str):
            key = self.key(key)
        self.collectives += 1
        group = tuple(tuple(int(i) for i in p) for p in group)
        where = _at(key)
        seen: set = set()
        for p in group:
            if p in seen:
                raise _rejected(f"{where}: the process group {_group(group)} names {_pid(p)} twice")
            seen.add(p)
            if not (0 <= p[0] < self.grid.num_replicas and 0 <= p[1] < self.grid.num_partitions):
                raise _rejected(f"{where}: the process group {_group(group)} names {_pid(p)}, outside the "
                                f"{self.grid} grid")
        if self.id not in seen:
            raise _rejected(f"{where}: {_pid(self.id)} runs it with the group {_group(group)}, which does not "
                            "hold it")
        if self._rv is None:
            if len(group) != 1:   # pragma: no cover - the grid check above leaves only (0, 0)
                raise _rejected(f"{where}: a group of {len(group)} on a single process")
            return {self.id: value}
        return self._rv.arrive(self.id, key, group, value)


def single_process() -> GridProcess:
    """The process of a 1×1 grid (a program run without a grid)."""
    return GridProcess(SINGLE, (0, 0))


def execute_on_grid(program, grid: Grid, inputs_per_process: Sequence[Sequence], *,
                    order: Sequence[int] | None = None,
                    before: Callable[[GridProcess], None] | None = None) -> list[list]:
    """Run `program` (oracle.program.Program) on every process of `grid`,
    each with its inputs (`inputs_per_process`, flattened id order): each
    process's outputs (lists of Expectation), in flattened id order.

    `order` (flattened ids) is the order the threads start in — any order
    gives the same result (tests shuffle it); `before(process)` runs in
    each process's thread first (tests sleep there).  Raises what a process
    raised (the lowest flattened id among own failures, its message
    prefixed with the process), a `disagreement`, or ValueError for
    inputs that do not fit the grid."""
    execute = _execute()
    if grid.size > MAX_PROCESSES:
        raise _rejected(f"a grid of {grid.size} processes ({grid}); the oracle runs at most {MAX_PROCESSES}")
    if len(inputs_per_process) != grid.size:
        raise ValueError(f"{len(inputs_per_process)} input lists for the {grid.size} processes of a {grid} grid")
    if grid.size == 1:
        return [execute(program, list(inputs_per_process[0]), process=single_process())]
    starts = list(order) if order is not None else list(range(grid.size))
    if sorted(starts) != list(range(grid.size)):
        raise ValueError(f"order {starts} is not a permutation of the {grid.size} flattened ids")
    rv = _Rendezvous(grid)
    processes = [GridProcess(grid, p, rv) for p in grid.processes()]
    outputs: list = [None] * grid.size
    errors: list = [None] * grid.size

    def body(i: int) -> None:
        proc = processes[i]
        if before is not None:
            before(proc)
        with rv.cond:
            failed = True
            try:
                outputs[i] = execute(program, list(inputs_per_process[i]), process=proc)
                failed = False
            except BaseException as e:   # recorded; the run's error is chosen after every thread ended
                errors[i] = e
            finally:
                rv.leave(proc.id, failed)

    threads = [threading.Thread(target=body, args=(i,), name=f"shlo-process-{i}", daemon=True)
               for i in range(grid.size)]
    # A caller that gave its threads a large stack (the isolated job of `run`: deep programs recurse deeply,
    # and its memory cap counts the stacks) has it shared among the processes: as deep, in the same room.
    shared = threading.stack_size()
    if shared:
        threading.stack_size(max(MIN_PROCESS_STACK, shared // grid.size))
    try:
        for i in starts:
            threads[i].start()
    finally:
        if shared:
            threading.stack_size(shared)
    for t in threads:
        t.join()
    own = [(i, e) for i, e in enumerate(errors) if e is not None and not isinstance(e, _Aborted)]
    if own:
        i, e = own[0]
        if not getattr(e, "disagreement", False) and e.args and isinstance(e.args[0], str):
            e.args = (f"{_pid(grid.process(i))}: {e.args[0]}",) + e.args[1:]
        raise e
    if any(e is not None for e in errors):   # pragma: no cover - an abort always has a failed process behind it
        raise next(e for e in errors if e is not None)
    return outputs


def shuffled(grid: Grid, seed: int) -> list[int]:
    """A start order of the grid's processes drawn from `seed` (tests)."""
    order = list(range(grid.size))
    random.Random(seed).shuffle(order)
    return order
