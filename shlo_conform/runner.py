"""The runner: replays a suite on one backend and turns what happens into verdicts.

It owns everything an adapter does not (DESIGN.md, "backends and the
runner"):

* **grouping** — cases are grouped by program text; a program is compiled
  once and run on each of its input sets;
* **isolation** — the adapter lives in a worker process (`worker.py`), in a
  process group of its own with whatever it starts; a compile or a run that
  takes longer than its timeout gets `timeout`, a worker that dies (signal,
  abort, exit) or whose implementation dies or breaks its protocol
  (`backends.base.Crashed`) gets `crash` — for the case in flight only; the
  whole group is killed, a fresh worker recompiles, and the run goes on
  with the next case.  Starting a worker (`init`, `claims`) is bounded by
  `startup_timeout`; the worker's output goes to a capped log;
* **classification** — value case: `Rejected` → `rejected` (a failure),
  `Unsupported` or a `claims()` reason → `unsupported`, outputs checked by
  `suites.compare.compare` → `pass` / `fail`; invalid case: `Rejected` →
  `rejected` (the conformant answer), accepted and run → `fail`;
* **journal** — each verdict is appended to a JSON-lines journal as it
  arrives, so an interrupted run resumes without redoing or losing work; a
  journal is keyed by everything that decides its verdicts (suite digest,
  selection, backend, timeouts), so one run never resumes another's;
* **scoring** — counts per verdict, per op and per (op, dtype), and the
  results document that `reports/` renders, written atomically by one run
  at a time (a lock next to it).
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import socket
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Callable, Iterable

from .isolation import STARTUP_FLOOR, Child, Died, Hung, default_startup_timeout
from .input_flush import flushed_expectations
from .suites.causes import CAUSES, diagnose
from .suites.compare import MAX_MISMATCHES_SHOWN, Comparison, compare, compare_log
from .suites.io import write_text_atomic
from .suites.records import KINDS, VERDICTS, Case, Verdict, conformant

DEFAULT_COMPILE_TIMEOUT = 20.0
DEFAULT_RUN_TIMEOUT = 10.0
DEFAULT_BATCH = 16  # cases per merged module (shlo_conform/batching.py): 3x fewer compile seconds on XLA:CPU
MAX_DEFAULT_JOBS = 8
SPLIT_MIN = 4  # a refused batch this large is split in halves; a smaller one goes case by case


def default_jobs() -> int:
    """Worker processes when none are asked for: one per CPU, at most
    MAX_DEFAULT_JOBS (each worker holds a backend client and its memory)."""
    return max(1, min(MAX_DEFAULT_JOBS, os.cpu_count() or 1))
JOURNAL_VERSION = 2


class BackendLoadError(Exception):
    """The backend could not be loaded or initialised (a usage/input error)."""


# The harness's classification, under the names the runner has always used.
WorkerDied, WorkerTimeout = Died, Hung


class _Stopped(Exception):
    pass


def check_backend_spec(spec: str) -> None:
    """Fail fast, in this process, on a backend name nobody knows
    (`backends.base.parse_backend_name`: the one reading of a name)."""
    from .backends.base import parse_backend_name
    parse_backend_name(spec)


class Worker(Child):
    """One backend adapter in a child process (the isolation harness's
    `Child` serving `shlo_conform.worker:serve`), restartable."""

    def __init__(self, backend: str, log_dir: str, startup_timeout: float = STARTUP_FLOOR, zygote=None):
        super().__init__("shlo_conform.worker:serve", log_dir, label="worker", zygote=zygote)
        self.backend = backend
        self.startup_timeout = startup_timeout
        self.describe = None
        self.spent = 0.0  # seconds the adapter took for the last compile or run (the worker's reply says)
        self.compiled = 0  # compiles sent to the process now running (runner._SEEDED)

    def start(self) -> str:
        """A fresh process with the backend loaded; its `describe()`."""
        self.compiled = 0
        self.spawn()
        try:
            status, payload = self.call("init", self.backend, self.startup_timeout)
        except (WorkerDied, WorkerTimeout) as e:
            self.kill()
            raise BackendLoadError(f"backend {self.backend!r} could not start: {e}") from None
        if status != "ok":
            self.stop()
            raise BackendLoadError(f"backend {self.backend!r} could not be loaded: {payload}")
        self.describe = payload
        return payload

    def restart(self) -> None:
        self.kill()
        self.start()

    def call(self, msg: str, arg, timeout: float):
        """(status, payload) of the worker's reply; `spent` is then the
        seconds the adapter itself took, where the reply says (compile, run)."""
        self.spent = 0.0
        self.compiled += msg == "compile"
        reply = super().call(msg, arg, timeout)
        if len(reply) == 3:
            self.spent = reply[2]
        return reply[:2]


# Programs whose results may depend on the module around them: `rng` draws
# from a generator the implementation seeds per module (XLA:CPU gave a bf16
# rng case other numbers, and another verdict, inside a merged module than
# alone; rng_bit_generator's default algorithm is the implementation's too),
# custom_call targets may keep state.  They are compiled alone.
_ALONE = ("attributes", "token", "tuple", "stablehlo.rng", "custom_call")

# `rng` programs are compiled by a worker that has compiled nothing before:
# XLA:CPU draws a module's rng seed from process state that every compile
# moves on, so the numbers a case saw (and, for a rare draw, its verdict:
# rng/bf16/3fdd8041f877) depended on which cases its worker had compiled
# before it, that is on --jobs and on the order of the suite.  A forked
# worker (zygote.py) costs a few milliseconds, so each rng program gets one.
_SEEDED = re.compile(r'stablehlo\.rng\b(?!_)')


def _may_batch(c: Case) -> bool:
    """A case that may share a merged module: a value or survey case with
    no host data (an invalid case is compiled alone so that a rejection is
    its own) whose text shows no module attributes, token, tuple, random
    numbers or custom call (the full test is `batching.merge`'s)."""
    return c.kind != "invalid" and c.host is None and not any(w in c.mlir for w in _ALONE)


class _Learned:
    """What the cases of one batch unit run alone showed, for the rest of
    that unit's halves.  The kind (op, type) of a case that crashes or times
    out alone is batched no more (its batches would die again, each costing
    a worker and a case-by-case rerun), nor is a kind with two cases refused
    alone: an implementation refuses an op on a type as a whole (IREE
    refuses 500 valid cases, mostly whole kinds), and halving every batch
    that holds one costs more compiles than running the kind alone; one
    refused case is taken for the case's own (a constant, a shape).  Kept
    per unit, not per run: a unit runs in one worker from start to end, so
    which cases share a module is the plan's and this unit's own doing,
    never the other workers' timing — and the verdicts with it, where an
    implementation answers differently merged and alone
    (docs/scoring-speed.md, "What batching cannot promise")."""

    def __init__(self):
        self.unbatched: set[tuple[str, str]] = set()
        self.refused: dict[tuple[str, str], int] = {}

    def saw(self, v: Verdict) -> None:
        kind = (v.op, v.dtype)
        if v.verdict in ("rejected", "unsupported"):
            self.refused[kind] = self.refused.get(kind, 0) + 1
        if v.verdict in ("crash", "timeout") or self.refused.get(kind, 0) >= 2:
            self.unbatched.add(kind)


def plan(groups: list[list[Case]], batch: int) -> list[tuple[str, list[Case]]]:
    """Units of work, in a fixed order (the same whatever the number of
    workers): ("group", cases of one program) or ("batch", up to `batch`
    single-case programs of one op that may be merged), in the suite's
    order, so a batch's element types come in runs.  A batch holds one op
    because what an implementation refuses or dies of goes by op and type:
    a refused batch is halved (`Runner._do_batch`), and the halves part
    the types.  Not one (op, type) per batch: suites/core has about five
    cases per op and type, and a module's fixed cost (0.35 s an IREE
    compile, 20 ms an XLA one) would then be paid for every five cases."""
    units, pending = [], {}
    for g in groups:
        if batch > 1 and len(g) == 1 and _may_batch(g[0]):
            key = g[0].op
            pending.setdefault(key, []).append(g[0])
            if len(pending[key]) == batch:
                units.append(("batch", pending.pop(key)))
        else:
            units.append(("group", g))
    for rest in pending.values():
        units.append(("batch", rest) if len(rest) > 1 else ("group", rest))
    return units


def group_by_program(cases: Iterable[Case]) -> list[list[Case]]:
    """Cases sharing a program text, in order of first appearance."""
    groups: dict[str, list[Case]] = {}
    for c in cases:
        groups.setdefault(c.mlir, []).append(c)
    return list(groups.values())


def check_outputs(case: Case, outputs: list, why: dict | None = None) -> tuple[bool, str, float | None, list[str]]:
    """Compare every output of a value case with its expectation: (ok,
    detail, max_ulp, implementation-defined labels chosen).  With `why` (a
    dict), also fills in the Verdict fields `causes`, `mismatches` and
    `meaningful_ulp` (suites/causes.py); failing outputs of a case whose
    inputs hold subnormals are compared again with the flushed-input
    expectation (input_flush.py), so input flushes are named."""
    if len(outputs) != len(case.expected):
        return False, f"{len(outputs)} outputs where {len(case.expected)} were expected", None, []
    problems, ulps, labels = [], [], []
    causes, mismatches, meaningful, flushed = {}, [], [], False
    for k, (exp, actual) in enumerate(zip(case.expected, outputs)):
        try:
            j = compare(exp, actual)
            if not j.ok and why is not None and j.causes:
                if flushed is False:
                    flushed = flushed_expectations(case)
                if flushed is not None:
                    j = compare(exp, actual, flushed[k])
        except Exception as e:  # an output numpy cannot even read as the expected type
            j = Comparison(False, detail=f"could not compare ({type(e).__name__}: {e})")
        if j.max_ulp is not None:
            ulps.append(j.max_ulp)
        if j.meaningful_ulp is not None:
            meaningful.append(j.meaningful_ulp)
        for c, n in j.causes.items():
            causes[c] = causes.get(c, 0) + n
        mismatches += [list(m) for m in j.mismatches]   # flat index within its output
        labels += [label for label in j.alternatives_used if label not in labels]
        if not j.ok:
            problems.append(f"output {k}: {j.detail}" if len(outputs) > 1 else j.detail)
    if why is not None:
        why.update(causes={c: causes[c] for c in CAUSES if c in causes}, mismatches=mismatches[:MAX_MISMATCHES_SHOWN],
                   meaningful_ulp=max(meaningful) if meaningful else None)
    return not problems, "; ".join(problems), (max(ulps) if ulps else None), labels


def _with_log(case: Case, log: list, ok: bool, detail: str, max_ulp, labels: list):
    """`check_outputs`' answer with the host log checked too (a case with
    host data: suites.compare.compare_log against the case's expected log)."""
    try:
        j = compare_log(case.host.log, [(s, a) for s, a in log])
    except Exception as e:  # a log numpy cannot read as the expected types
        j = Comparison(False, detail=f"could not compare the host log ({type(e).__name__}: {e})")
    if not j.ok:
        ok, detail = False, "; ".join(d for d in (detail, j.detail) if d)
    if j.max_ulp is not None:
        max_ulp = j.max_ulp if max_ulp is None else max(max_ulp, j.max_ulp)
    return ok, detail, max_ulp, labels + [a for a in j.alternatives_used if a not in labels]


class Runner:
    """Runs cases on one backend in `jobs` worker processes; calls
    `on_verdict(verdict)` (under a lock) as each case is decided.  Worker
    logs go to `log_dir` (a temporary folder by default)."""

    def __init__(self, backend: str, *, compile_timeout: float = DEFAULT_COMPILE_TIMEOUT,
                 run_timeout: float = DEFAULT_RUN_TIMEOUT, jobs: int = 1, batch: int = 1,
                 startup_timeout: float | None = None,
                 on_verdict: Callable[[Verdict], None] | None = None,
                 on_describe: Callable[[str], None] | None = None, keep_outputs: bool = False,
                 log_dir: str | None = None, fork: bool = True):
        self.backend = backend
        self.fork = fork   # workers forked from a zygote (shlo_conform/zygote.py) where the platform allows
        self.outputs: dict[str, list] | None = {} if keep_outputs else None
        self.compile_timeout = compile_timeout
        self.run_timeout = run_timeout
        self.startup_timeout = startup_timeout if startup_timeout is not None else \
            default_startup_timeout(compile_timeout)
        self.jobs = max(1, jobs)
        self.batch = max(1, batch)
        self.workers = 0
        self.batches = {"batches": 0, "cases": 0, "fallbacks": 0, "rerun": 0}
        # seconds: "startup" (worker start, claims), "calls" (messages as the runner waits for them:
        # adapter time plus IPC), "judge" (comparing outputs); "compile"/"run" inside the adapters,
        # as the workers' replies say
        self.timing = {"startup": 0.0, "calls": 0.0, "judge": 0.0, "compile": 0.0, "run": 0.0}
        self.on_verdict = on_verdict
        self.on_describe = on_describe
        self.log_dir = log_dir
        self.describe: str | None = None
        self.compiles = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._claims: dict[tuple[str, str], str | None] = {}
        self._workers: list[Worker] = []
        self._errors: list[BaseException] = []

    # -- public -----------------------------------------------------------
    def run(self, cases: list[Case]) -> list[Verdict]:
        """Verdicts for `cases`, in their order (ids must be unique: a
        verdict is keyed by its case's id)."""
        order = {c.id: i for i, c in enumerate(cases)}
        if len(order) != len(cases):
            dup = next(c.id for i, c in enumerate(cases) if order[c.id] != i)
            raise ValueError(f"two cases have the id {dup!r}")
        got: dict[str, Verdict] = {}
        self._pairs = sorted({(c.op, c.dtype) for c in cases})
        groups = group_by_program(cases)
        queue = list(reversed(plan(groups, self.batch)))
        with tempfile.TemporaryDirectory(prefix="shlo-conform-") as tmp:
            log_dir = self.log_dir or tmp
            def take():
                with self._lock:
                    return queue.pop() if queue else None

            def emit(v: Verdict):
                with self._lock:
                    if self._stop.is_set():
                        raise _Stopped
                    got[v.id] = v
                    if self.on_verdict:
                        self.on_verdict(v)

            zygote = self._zygote(log_dir)

            def loop():
                w = Worker(self.backend, log_dir, self.startup_timeout, zygote)
                with self._lock:
                    self._workers.append(w)
                try:
                    while not self._stop.is_set():
                        unit = take()
                        if unit is None:
                            return
                        kind, g = unit
                        if kind == "batch":
                            self._do_batch(w, g, emit)
                        else:
                            self._do_group(w, g, emit)
                except _Stopped:
                    pass
                except BaseException as e:  # BackendLoadError, or a bug: stop everyone
                    self._errors.append(e)
                    self._stop.set()
                finally:
                    w.stop()

            n = self.workers = min(self.jobs, len(queue))
            threads = [threading.Thread(target=loop, daemon=True) for _ in range(n)]
            for t in threads:
                t.start()
            try:
                for t in threads:
                    while t.is_alive():
                        t.join(0.2)
            except KeyboardInterrupt:
                self._stop.set()
                for w in list(self._workers):
                    w.kill()
                for t in threads:
                    t.join(5)
                raise
            finally:
                if zygote is not None:
                    zygote.close()
        if self._errors:
            raise self._errors[0]
        return sorted(got.values(), key=lambda v: order[v.id])

    # -- one case at a time on a kept worker (fuzz) -------------------------
    def run_one(self, case: Case) -> Verdict:
        """The verdict of one case on a worker kept between calls (`close`
        stops it): `fuzz` asks for thousands of one-program verdicts, one at
        a time as hypothesis draws and shrinks, and should pay one worker
        start, not one each.  Isolation is `run`'s: a crash or a hang is this
        case's verdict, and the next call starts a fresh worker.  Claims are
        asked once, for the first case's (op, dtype)."""
        if getattr(self, "_kept", None) is None:
            self._kept_dir = tempfile.mkdtemp(prefix="shlo-conform-")
            self._kept_zygote = self._zygote(self.log_dir or self._kept_dir)
            self._kept = Worker(self.backend, self.log_dir or self._kept_dir, self.startup_timeout, self._kept_zygote)
            self._pairs = [(case.op, case.dtype)]
        got: list[Verdict] = []
        self._do_group(self._kept, [case], got.append)
        return got[0]

    def close(self) -> None:
        """Stop the worker `run_one` kept."""
        if getattr(self, "_kept", None) is not None:
            self._kept.stop()
            self._kept = None
            if self._kept_zygote is not None:
                self._kept_zygote.close()
            import shutil
            shutil.rmtree(self._kept_dir, ignore_errors=True)

    def _zygote(self, log_dir: str):
        """The template the run's workers are forked from (zygote.py), or
        None where workers start as fresh interpreters (`fork=False`, or a
        platform without fork and descriptor passing)."""
        if not (self.fork and hasattr(os, "fork") and hasattr(socket, "send_fds")):
            return None
        from .zygote import Zygote
        return Zygote(self.backend, os.path.join(log_dir, "zygote.log"))

    # -- one program --------------------------------------------------------
    def _ensure_started(self, w: Worker) -> None:
        if w.proc is not None:
            return
        t0 = time.monotonic()
        try:
            self._start(w)
        finally:
            with self._lock:
                self.timing["startup"] += time.monotonic() - t0

    def _start(self, w: Worker) -> None:
        if w.proc is not None:
            return
        describe = w.start()
        with self._lock:
            first = self.describe is None
            self.describe = describe
            need_claims = not self._claims
        if first and self.on_describe:
            self.on_describe(describe)
        if need_claims:
            try:
                status, reasons = w.call("claims", self._pairs, self.startup_timeout)
            except (WorkerDied, WorkerTimeout) as e:
                raise BackendLoadError(f"backend {self.backend!r} failed to answer claims(): {e}") from None
            if status != "ok":
                w.kill()
                raise BackendLoadError(f"backend {self.backend!r} failed to answer claims(): {reasons}")
            with self._lock:
                self._claims.update(zip(self._pairs, reasons))

    def _call(self, w: Worker, msg: str, arg, timeout: float) -> tuple[str, object]:
        """One message to the worker, as (status, payload).  A death, a
        timeout or a `crash` reply (the implementation behind the adapter
        died or broke its protocol) end the worker and its process group:
        status "crash" or "timeout", and the next message starts afresh."""
        t0 = time.monotonic()
        try:
            status, payload = w.call(msg, arg, timeout)
        except WorkerDied as e:
            status, payload = "crash", str(e)
        except WorkerTimeout as e:
            status, payload = "timeout", str(e)
        elapsed = time.monotonic() - t0
        with self._lock:   # a worker that died or hung: its whole time was the implementation's
            self.timing["calls"] += elapsed
            self.timing["compile" if msg == "compile" else "run"] += \
                elapsed if status in ("crash", "timeout") else w.spent
        if status in ("crash", "timeout"):
            w.kill()
            if self._stop.is_set():
                raise _Stopped
        return status, payload

    def _claimed(self, cases: list[Case], emit) -> list[Case]:
        """The cases whose (op, type) the backend claims; the others get
        `unsupported` with its reason (asked once per worker start)."""
        todo = []
        for c in cases:
            reason = self._claims.get((c.op, c.dtype))
            if reason:
                emit(self._verdict(c, "unsupported", f"not claimed: {reason}"))
            else:
                todo.append(c)
        return todo

    def _do_group(self, w: Worker, group: list[Case], emit) -> None:
        """Compile the group's program once, run each case's inputs.  A crash
        or a timeout is the verdict of the case in flight only: the worker is
        gone, so the next case starts a fresh one, which compiles again —
        never a handle of the dead process."""
        self._ensure_started(w)
        todo = self._claimed(group, emit)
        if any(c.host is not None for c in todo):   # the adapter runs host cases, or declares why not
            reason = self._host_reason(w)
            if reason:
                for c in todo:
                    if c.host is not None:
                        emit(self._verdict(c, "unsupported", reason))
                todo = [c for c in todo if c.host is None]
        compiled = False
        for i, c in enumerate(todo):
            if self._stop.is_set():
                raise _Stopped
            if not compiled or w.proc is None:
                if w.compiled and _SEEDED.search(c.mlir):
                    w.stop()   # a worker that compiled nothing yet: see _SEEDED
                self._ensure_started(w)
                t0 = time.monotonic()
                with self._lock:
                    self.compiles += 1
                status, payload = self._call(w, "compile", c.mlir, self.compile_timeout)
                if status in ("crash", "timeout"):
                    emit(self._verdict(c, status, f"while compiling: {payload}", time.monotonic() - t0))
                    continue
                if status != "ok":
                    for rest in todo[i:]:
                        emit(self._compile_verdict(rest, status, payload, time.monotonic() - t0))
                    return
                compiled = True
            t0 = time.monotonic()
            args = [(v.type, v.hex) for v in c.inputs]
            if c.host is not None:   # a program that talks to the host: queues in, (outputs, log) back
                status, payload = self._call(w, "run_host", (args, c.host.to_json()), self.run_timeout)
            else:
                status, payload = self._call(w, "run", args, self.run_timeout)
            if status in ("crash", "timeout"):
                emit(self._verdict(c, status, f"while running: {payload}", time.monotonic() - t0))
                compiled = False
                continue
            if status == "ok" and self.outputs is not None:
                self.outputs[c.id] = payload[0] if c.host is not None else payload
            seconds = time.monotonic() - t0
            t1 = time.monotonic()
            v = self._run_verdict(c, status, payload, seconds)
            with self._lock:
                self.timing["judge"] += time.monotonic() - t1
            emit(v)

    def _do_batch(self, w: Worker, cases: list[Case], emit, learned: "_Learned | None" = None) -> None:
        """Compile `cases` (single-case programs of one op, `_may_batch`) as
        one merged module and run it once.  Verdicts
        are those a single run would give: only a pass is taken from a
        batch; every case whose outputs do not pass is done again alone
        (`_do_group`), and so is every case of a batch that cannot be
        merged, crashes or times out (a fresh worker after a crash).  A
        batch refused otherwise (rejected, unsupported, an error) is split
        in halves, each tried as a batch, so that one refused case costs a
        few compiles, not one per case; batches of fewer than SPLIT_MIN go
        case by case (`_alone`, which learns which kinds the rest of this
        unit's halves run alone: `_Learned`)."""
        learned = learned if learned is not None else _Learned()
        self._ensure_started(w)
        todo = self._claimed(cases, emit)
        supported = self._batches_supported(w)
        if any((c.op, c.dtype) in learned.unbatched for c in todo):
            self._alone(w, [c for c in todo if (c.op, c.dtype) in learned.unbatched], emit, learned)
            todo = [c for c in todo if (c.op, c.dtype) not in learned.unbatched]
            self._ensure_started(w)   # one of them may have ended the worker
        merged = None
        if len(todo) > 1 and supported:
            from .batching import merge
            merged = merge([c.mlir for c in todo])
        if merged is None:
            self._alone(w, todo, emit, learned)
            return
        with self._lock:
            self.compiles += 1
            self.batches["batches"] += 1
            self.batches["cases"] += len(todo)
        t0 = time.monotonic()
        status, payload = self._call(w, "compile", merged.mlir, self.compile_timeout)
        outputs = None
        if status == "ok":
            args = merged.join_inputs([[(v.type, v.hex) for v in c.inputs] for c in todo])
            status, payload = self._call(w, "run", args, self.run_timeout)
            if status == "ok":
                outputs = merged.split(payload)
        seconds = (time.monotonic() - t0) / len(todo)
        if outputs is None:
            with self._lock:
                self.batches["fallbacks"] += 1
            if status not in ("crash", "timeout") and len(todo) >= SPLIT_MIN:
                half = len(todo) // 2
                self._do_batch(w, todo[:half], emit, learned)
                self._do_batch(w, todo[half:], emit, learned)
                return
            self._alone(w, todo, emit, learned)
            return
        for c, out in zip(todo, outputs):
            t1 = time.monotonic()
            ok, detail, max_ulp, labels = check_outputs(c, out)
            with self._lock:
                self.timing["judge"] += time.monotonic() - t1
            if not ok:   # the verdict of a failure is always a single run's
                with self._lock:
                    self.batches["rerun"] += 1
                self._do_group(w, [c], emit)
                continue
            if self.outputs is not None:
                self.outputs[c.id] = out
            emit(self._verdict(c, "pass", detail, seconds, max_ulp=max_ulp, impl_defined=labels,
                               meaningful_ulp=max_ulp))   # a pass: every element's ULP means something

    def _alone(self, w: Worker, cases: list[Case], emit, learned: "_Learned") -> None:
        """Each case compiled and run by itself, what it shows kept in `learned`."""
        def watch(v: Verdict):
            learned.saw(v)
            emit(v)
        for c in cases:
            self._do_group(w, [c], watch)

    def _batches_supported(self, w: Worker) -> bool:
        """Whether the adapter compiles merged modules (`Backend.batches`); asked once per run."""
        if not hasattr(self, "_batch_answer"):
            status, payload = self._call(w, "batches", None, self.startup_timeout)
            self._batch_answer = status == "ok" and payload is True
            if status in ("crash", "timeout"):
                self._ensure_started(w)
        return self._batch_answer

    def _host_reason(self, w: "Worker") -> str | None:
        """Why the adapter cannot run cases with host data (it does not
        implement `Backend.run_with_host`), or None; asked once per run."""
        if not hasattr(self, "_host_answer"):
            status, payload = self._call(w, "host", None, self.startup_timeout)
            self._host_answer = payload if status == "unsupported" else None
        return self._host_answer

    # -- classification ---------------------------------------------------------
    @staticmethod
    def _verdict(c: Case, verdict: str, detail: str = "", seconds: float = 0.0, **kw) -> Verdict:
        return Verdict(id=c.id, op=c.op, dtype=c.dtype, kind=c.kind, verdict=verdict, detail=detail,
                       seconds=round(seconds, 6), violates=c.violates, **kw)

    def _compile_verdict(self, c: Case, status: str, msg: str, seconds: float) -> Verdict:
        if status == "rejected":
            return self._verdict(c, "rejected", msg, seconds)
        if status == "unsupported":
            return self._verdict(c, "unsupported", msg, seconds)
        return self._verdict(c, "fail", f"adapter error while compiling (not a Rejected): {msg}", seconds)

    def _run_verdict(self, c: Case, status: str, payload, seconds: float) -> Verdict:
        if status == "unsupported":
            return self._verdict(c, "unsupported", payload, seconds)
        if status == "rejected":
            return self._verdict(c, "rejected", f"rejected at run time: {payload}", seconds)
        if c.kind == "invalid":
            what = f"accepted a program violating {c.violates or 'a constraint'}"
            if status == "error":
                what += f" (then the run raised {payload})"
            return self._verdict(c, "fail", what, seconds)
        if status == "error":
            return self._verdict(c, "fail", f"run raised {payload}", seconds)
        log = None
        if c.host is not None:
            payload, log = payload
        why: dict = {}
        ok, detail, max_ulp, labels = check_outputs(c, payload, why)
        if log is not None:
            ok, detail, max_ulp, labels = _with_log(c, log, ok, detail, max_ulp, labels)
            if ok:   # every element passed, the log's included: all their ULPs mean something
                why["meaningful_ulp"] = max_ulp
        return self._verdict(c, "pass" if ok else "fail", detail, seconds, max_ulp=max_ulp, impl_defined=labels,
                             **why)


# ---------------------------------------------------------------------------
# Journal: verdicts as JSON lines, under a header holding the run's key
# ---------------------------------------------------------------------------

class JournalMismatch(Exception):
    """A journal file that is not the journal of this run (damaged, or
    written by another version): never resumed, never silently replaced."""


class ResultsBusy(Exception):
    """Another run holds the results file."""


def run_key(*, backend: str, suite: str, suite_digest: str, case_ids: list[str],
            compile_timeout: float, run_timeout: float) -> dict:
    """Everything that decides a run's verdicts: the backend, the suite's
    bytes, which of its cases are run, the timeouts.  A journal resumes
    only a run with the same key."""
    selection = hashlib.sha256("\n".join(case_ids).encode()).hexdigest()[:16]
    return {"backend": backend, "suite": suite, "suite_digest": suite_digest, "selection": selection,
            "cases": len(case_ids), "timeouts": {"compile": compile_timeout, "run": run_timeout}}


def journal_path(json_path: Path, key: dict) -> Path:
    """`<results>.<key hash>.journal`: runs with other options keep their own."""
    h = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]
    return Path(f"{json_path}.{h}.journal")


def other_journals(json_path: Path, key: dict) -> list[Path]:
    """Journals next to `json_path` of runs with another key (kept, not resumed)."""
    json_path = Path(json_path)
    mine = journal_path(json_path, key)
    found = sorted(json_path.parent.glob(f"{json_path.name}.*.journal")) if json_path.parent.is_dir() else []
    legacy = Path(f"{json_path}.journal")
    return [j for j in found if j != mine] + ([legacy] if legacy.is_file() else [])


class Journal:
    """`journal_path(results, key)`: a header line holding the run's key,
    then `{"describe": …}` and verdict lines."""

    def __init__(self, path: Path, key: dict):
        self.path = Path(path)
        self.header = {"journal": JOURNAL_VERSION, "key": key}
        self.done: dict[str, Verdict] = {}
        self.describe: str | None = None
        self._fh = None

    def open(self) -> "Journal":
        """Resume the journal of this key; a file there with another header
        raises JournalMismatch (it is left as it is)."""
        if self.path.is_file() and self.path.stat().st_size:
            lines = self.path.read_text(errors="replace").splitlines()
            try:
                same = json.loads(lines[0]) == self.header
            except ValueError:
                same = False
            if not same:
                raise JournalMismatch(f"{self.path} is not a journal of this run (damaged, or from another "
                                      "version): remove it to start afresh")
            for line in lines[1:]:
                try:
                    d = json.loads(line)
                except ValueError:
                    continue  # a line cut short by the interruption
                if isinstance(d, dict) and "describe" in d and "id" not in d:
                    self.describe = d["describe"]
                elif isinstance(d, dict) and d.get("verdict") in VERDICTS:
                    try:
                        self.done[d["id"]] = Verdict(**d)
                    except (TypeError, KeyError):
                        continue
            self._fh = self.path.open("a")
            if not self.path.read_text(errors="replace").endswith("\n"):
                self._fh.write("\n")
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = self.path.open("w")
        self._write(self.header)
        return self

    def _write(self, d: dict) -> None:
        self._fh.write(json.dumps(d, sort_keys=True) + "\n")
        self._fh.flush()

    def add(self, v: Verdict) -> None:
        self._write(asdict(v))

    def set_describe(self, describe: str) -> None:
        if describe != self.describe:
            self.describe = describe
            self._write({"describe": describe})

    def close(self, remove: bool = False) -> None:
        if self._fh:
            self._fh.close()
            self._fh = None
        if remove:
            self.path.unlink(missing_ok=True)


class ResultsLock:
    """`<results>.lock`, held with flock(2) for a whole run: a second run on
    the same results file is refused while the first holds it.  The kernel
    releases the lock when the holder exits or is killed."""

    def __init__(self, json_path: Path):
        self.path = Path(f"{json_path}.lock")
        self._fd: int | None = None

    def __enter__(self) -> "ResultsLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.read(fd, 32).decode(errors="replace").strip()
                os.close(fd)
                raise ResultsBusy(f"{str(self.path)[:-5]} is being written by another run"
                                  + (f" (process {holder})" if holder else "")
                                  + ": wait for it to finish, or choose another results file") from None
            try:  # the previous holder may have removed the file between our open and our lock
                if os.fstat(fd).st_ino == os.stat(self.path).st_ino:
                    break
            except FileNotFoundError:
                pass
            os.close(fd)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return self

    def __exit__(self, *exc) -> None:
        if self._fd is not None:
            self.path.unlink(missing_ok=True)
            os.close(self._fd)
            self._fd = None


# ---------------------------------------------------------------------------
# Scoring and the results document
# ---------------------------------------------------------------------------

def _blank() -> dict:
    return {"cases": 0, **{v: 0 for v in VERDICTS}, "counted": 0, "conformant": 0}


def _count(bucket: dict, v: Verdict) -> None:
    bucket["cases"] += 1
    bucket[v.verdict] = bucket.get(v.verdict, 0) + 1
    c = conformant(v.kind, v.verdict)
    if c is not None:
        bucket["counted"] += 1
        bucket["conformant"] += int(c)
    causes = bucket.setdefault("causes", {})   # cause -> failing cases with an element of that cause
    for cause in v.causes:
        causes[cause] = causes.get(cause, 0) + 1
    bucket["causes"] = {k: causes[k] for k in CAUSES if k in causes}


def _max(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def summarize(verdicts: list[Verdict]) -> tuple[dict, dict]:
    """(counts over all cases, per-op counts with max ULP, per-dtype counts and
    the implementation-defined choices the backend made).  Every bucket has
    "causes": cause -> failing cases with at least one element of that cause.
    The max ULP is `meaningful_ulp`'s: over elements that passed or are "out
    of tolerance" (never a flushed subnormal's or a lost NaN's distance)."""
    counts = _blank()
    per_op: dict[str, dict] = {}
    for v in verdicts:
        _count(counts, v)
        op = per_op.setdefault(v.op, {**_blank(), "max_ulp": None, "dtypes": {}, "impl_defined": {}})
        _count(op, v)
        if v.meaningful_ulp is not None:
            op["max_ulp"] = _max(op["max_ulp"], v.meaningful_ulp)
        d = op["dtypes"].setdefault(v.dtype, {**_blank(), "max_ulp": None})
        _count(d, v)
        if v.meaningful_ulp is not None:
            d["max_ulp"] = _max(d["max_ulp"], v.meaningful_ulp)
        for label in v.impl_defined:
            op["impl_defined"][label] = op["impl_defined"].get(label, 0) + 1
    counts["nonconformant"] = counts["counted"] - counts["conformant"]
    return counts, dict(sorted(per_op.items()))


def results_document(*, backend: str, describe: str | None, suite: str, manifest: dict, started: str,
                     seconds: float, verdicts: list[Verdict], timeouts: dict | None = None) -> dict:
    counts, per_op = summarize(verdicts)
    doc = {"backend": backend, "describe": describe or backend, "suite": suite, "manifest": manifest,
           "started": started, "seconds": round(seconds, 3), "counts": counts, "per_op": per_op,
           "diagnoses": diagnose(backend, verdicts), "verdicts": [asdict(v) for v in verdicts]}
    if timeouts:
        doc["timeouts"] = timeouts
    return doc


_DOC_FIELDS = {"backend": str, "describe": str, "suite": str, "counts": dict, "per_op": dict, "verdicts": list}
_DOC_OPTIONAL = {"manifest": dict, "started": str, "seconds": (int, float), "timeouts": dict, "resumed": int,
                 "compiles": int, "run_key": dict, "timing": dict, "diagnoses": list,
                 "shard": dict, "merged": list}  # shard: shlo_conform/shard.py; merged: merge.py
_VERDICT_TYPES = {"id": str, "op": str, "dtype": str, "kind": str, "verdict": str, "detail": str,
                  "max_ulp": (int, float, type(None)), "impl_defined": list, "seconds": (int, float),
                  "violates": (str, type(None)), "causes": dict, "mismatches": list,
                  "meaningful_ulp": (int, float, type(None))}


def check_results(doc) -> dict:
    """A results document as `results_document` writes it: its fields and
    their JSON types, every verdict a valid record with a unique id, and the
    counts and per-op tables equal to what its verdicts add up to (reports
    and baselines read them).  Raises ValueError naming the problem."""
    if not isinstance(doc, dict):
        raise ValueError("not a JSON object")
    for k, t in _DOC_FIELDS.items():
        if not isinstance(doc.get(k), t):
            raise ValueError(f"no {k!r}" if k not in doc else f"{k!r} has the wrong JSON type")
    for k, t in _DOC_OPTIONAL.items():
        if k in doc and doc[k] is not None and not isinstance(doc[k], t):
            raise ValueError(f"{k!r} has the wrong JSON type")
    verdicts, seen = [], set()
    for n, d in enumerate(doc["verdicts"]):
        verdicts.append(_check_verdict(d, n))
        if verdicts[-1].id in seen:
            raise ValueError(f"verdict {n}: duplicate id {verdicts[-1].id!r}")
        seen.add(verdicts[-1].id)
    counts, per_op = summarize(verdicts)
    if "causes" not in doc["counts"]:   # written before failure causes: compare what it has, then fill in
        if _plain(_without_causes(counts)) != _plain(doc["counts"]) or \
                _plain(_without_causes(per_op)) != _plain(doc["per_op"]):
            raise ValueError("its counts do not add up to its verdicts")
        doc["counts"], doc["per_op"] = counts, per_op
    elif _plain(counts) != _plain(doc["counts"]) or _plain(per_op) != _plain(doc["per_op"]):
        raise ValueError("its counts do not add up to its verdicts")
    diagnoses = diagnose(doc["backend"], verdicts)
    if doc.get("diagnoses", diagnoses) != diagnoses:
        raise ValueError("its diagnoses are not those of its verdicts")
    doc["diagnoses"] = diagnoses
    return doc


def _without_causes(x):
    """A summary as it was before failure causes (no "causes" buckets)."""
    if isinstance(x, dict):
        return {k: _without_causes(v) for k, v in x.items() if k != "causes"}
    return x


def _check_verdict(d, n: int) -> Verdict:
    if not isinstance(d, dict):
        raise ValueError(f"verdict {n} is not an object")
    for k, v in d.items():
        if k not in _VERDICT_TYPES:
            raise ValueError(f"verdict {n} has an unknown field {k!r}")
        if not isinstance(v, _VERDICT_TYPES[k]) or (isinstance(v, bool) and k in ("max_ulp", "seconds")):
            raise ValueError(f"verdict {n}: {k!r} has the wrong JSON type")
    missing = [k for k in ("id", "op", "dtype", "kind", "verdict") if k not in d]
    if missing:
        raise ValueError(f"verdict {n} has no {missing[0]!r}")
    if d["kind"] not in KINDS:
        raise ValueError(f"verdict {n}: unknown kind {d['kind']!r}")
    if d["verdict"] not in VERDICTS:
        raise ValueError(f"verdict {n}: unknown verdict {d['verdict']!r}")
    bad = [c for c in d.get("causes", {}) if c not in CAUSES or not isinstance(d["causes"][c], int)]
    if bad:
        raise ValueError(f"verdict {n}: unknown cause {bad[0]!r} (or its count is not an integer)")
    if "meaningful_ulp" not in d:   # written before failure causes: its only ULP figure is the raw one
        d["meaningful_ulp"] = d.get("max_ulp")   # (in the document too, for readers that build Verdicts)
    return Verdict(**d)


def _plain(x):
    """JSON's view of a value (so a loaded document compares equal to a fresh summary)."""
    return json.loads(json.dumps(x, sort_keys=True))


def load_results(path: Path) -> dict:
    """Read and check a results document (raises ValueError if it is not one)."""
    try:
        doc = json.loads(Path(path).read_text())
    except UnicodeDecodeError as e:
        raise ValueError(f"not text ({e})") from None
    except ValueError as e:
        raise ValueError(f"not JSON ({e})") from None
    return check_results(doc)


def score(cases: list[Case], backend: str, *, suite: str, manifest: dict, json_path: Path,
          compile_timeout: float = DEFAULT_COMPILE_TIMEOUT, run_timeout: float = DEFAULT_RUN_TIMEOUT,
          jobs: int = 1, on_verdict: Callable[[Verdict], None] | None = None,
          suite_digest: str | None = None, startup_timeout: float | None = None, batch: int = 1,
          shard: dict | None = None) -> dict:
    """Run `cases` on `backend` and write the results document to `json_path`
    (atomically, holding its lock: ResultsBusy if another run holds it).
    Verdicts are journaled next to it under the run's key (`run_key`: the
    suite's bytes — `suite_digest`, by default a digest of the cases
    themselves —, the selection, backend, timeouts) and resumed from there;
    the journal is removed once the results are written.  On
    KeyboardInterrupt (or a failed write) the journal stays."""
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    t0 = time.monotonic()
    if suite_digest is None:
        suite_digest = _cases_digest(cases, manifest)
    key = run_key(backend=backend, suite=suite, suite_digest=suite_digest, case_ids=[c.id for c in cases],
                  compile_timeout=compile_timeout, run_timeout=run_timeout)
    json_path = Path(json_path)
    with ResultsLock(json_path):
        journal = Journal(journal_path(json_path, key), key).open()
        try:
            wanted = {c.id for c in cases}
            done = {k: v for k, v in journal.done.items() if k in wanted}
            todo = [c for c in cases if c.id not in done]

            def record(v: Verdict) -> None:
                journal.add(v)
                if on_verdict:
                    on_verdict(v)

            runner = Runner(backend, compile_timeout=compile_timeout, run_timeout=run_timeout, jobs=jobs,
                            startup_timeout=startup_timeout, on_verdict=record, on_describe=journal.set_describe,
                            batch=batch)
            t_run = time.monotonic()
            fresh = runner.run(todo) if todo else []
            t_run = time.monotonic() - t_run
            by_id = {**done, **{v.id: v for v in fresh}}
            verdicts = [by_id[c.id] for c in cases if c.id in by_id]
            doc = results_document(backend=backend, describe=runner.describe or journal.describe, suite=suite,
                                   manifest=manifest, started=started, seconds=time.monotonic() - t0,
                                   verdicts=verdicts, timeouts={"compile": compile_timeout, "run": run_timeout})
            doc["resumed"] = len(done)
            doc["compiles"] = runner.compiles
            doc["timing"] = timing_breakdown(runner, t_run, time.monotonic() - t0)
            doc["run_key"] = key
            if shard is not None:  # `--shard I/N`: which part of a split this is (shard.record)
                doc["shard"] = shard
            write_text_atomic(json_path, json.dumps(doc, indent=1) + "\n")
        finally:
            journal.close()
        journal.close(remove=True)
    return doc


def timing_breakdown(runner: Runner, run_wall: float, wall: float) -> dict:
    """Where a run's wall went.  Worker time is counted per worker process
    (`jobs` of them side by side): `compile` and `run` are inside the
    adapter, as the workers measured them; `startup` is starting workers
    (importing the backend, claims); `ipc` is compile and run messages as
    the runner waited for them less the adapter's part (pickling, sockets,
    decoding inputs); `judge` is comparing outputs; `other` the rest of the
    workers' wall (scheduling, journal, verdicts).  `harness_share` is the
    part of the worker wall not spent inside the adapter: startup, IPC,
    judging and the rest — the runner's own cost."""
    t = runner.timing
    workers = runner.workers
    backend = t["compile"] + t["run"]
    slots = run_wall * workers
    ipc = max(0.0, t["calls"] - backend)
    other = max(0.0, slots - t["startup"] - t["calls"] - t["judge"])
    r = lambda x: round(x, 3)  # noqa: E731
    return {"wall": r(wall), "run_wall": r(run_wall), "workers": workers, "compile": r(t["compile"]),
            "run": r(t["run"]), "startup": r(t["startup"]),
            "ipc": r(ipc), "judge": r(t["judge"]), "other": r(other), "load_and_write": r(wall - run_wall),
            "harness_share": r(1 - backend / slots) if slots > 0 else None, "batches": dict(runner.batches)}


def _cases_digest(cases: list[Case], manifest: dict) -> str:
    """What the verdicts depend on, for cases that come from no suite folder."""
    h = hashlib.sha256(json.dumps(manifest, sort_keys=True).encode())
    for c in cases:
        h.update(c.to_json().encode() + b"\n")
    return h.hexdigest()
