"""The runner: replays cases on one backend and turns what happens into verdicts.

It owns everything an adapter does not (DESIGN.md, "backends and the
runner"), by topic in modules of their own:

* **what runs with what** (planning.py) — cases grouped by program text
  (compiled once, run on each input set), single-case programs of one op
  merged into batches (batching.py), some cases alone or on a fresh worker;
* **isolation** (isolation.py) — the adapter lives in a worker process
  (`Worker`, serving worker.py) in a process group of its own; a compile or
  a run past its timeout is `timeout`, a death or a broken protocol
  (`backends.base.Crashed`) is `crash` — for the case in flight only; a
  fresh worker recompiles and the run goes on;
* **run modes** (modes.py) — how a case is compiled, run and judged: a
  plain program, one that talks to the host (`Case.host`, `run_host`, asked
  about first), one on a process grid (`Case.grid`: `compile_grid`, every
  process at once with `run_grid`, judged process by process; a hang in any
  process is the case's `timeout`); the runner asks `mode_of(case)`;
* **classification** (here) — value case: `Rejected` → `rejected`,
  `Unsupported` or a `claims()` reason → `unsupported`, outputs judged
  (judging.py) → `pass` / `fail`; invalid case: `Rejected` → `rejected`
  (the conformant answer), accepted and run → `fail`;
* **scheduling** (here) — `jobs` workers take units of the plan in order;
* **journal and lock** (journal.py), **the scoring pipeline** (scoring.py)
  and **the results document** (suites/results.py).
"""
from __future__ import annotations

import os
import socket
import tempfile
import threading
import time
from typing import Callable

from .isolation import STARTUP_FLOOR, Child, Died, Hung, compile_timeout_for, default_startup_timeout
from .judging import check_outputs
from .modes import compile_messages, mode_of
from .planning import Learned, group_by_program, needs_fresh_worker, plan
from ..suites.records import Case, Verdict

DEFAULT_RUN_TIMEOUT = 10.0
DEFAULT_COMPILE_TIMEOUT = compile_timeout_for(DEFAULT_RUN_TIMEOUT)
MAX_DEFAULT_JOBS = 8
SPLIT_MIN = 4  # a refused batch this large is split in halves; a smaller one goes case by case


def default_jobs() -> int:
    """Worker processes when none are asked for: one per CPU, at most
    MAX_DEFAULT_JOBS (each worker holds a backend client and its memory)."""
    return max(1, min(MAX_DEFAULT_JOBS, os.cpu_count() or 1))


class BackendLoadError(Exception):
    """The backend could not be loaded or initialised (a usage/input error)."""


# The harness's classification, under the names the runner has always used.
WorkerDied, WorkerTimeout = Died, Hung


class _Stopped(Exception):
    pass


def check_backend_spec(spec: str) -> None:
    """Fail fast, in this process, on a backend name nobody knows
    (`backends.base.parse_backend_name`: the one reading of a name)."""
    from ..backends.base import parse_backend_name
    parse_backend_name(spec)


class Worker(Child):
    """One backend adapter in a child process (the isolation harness's
    `Child` serving `shlo_conform.pipeline.worker:serve`), restartable."""

    def __init__(self, backend: str, log_dir: str, startup_timeout: float = STARTUP_FLOOR, zygote=None):
        super().__init__("shlo_conform.pipeline.worker:serve", log_dir, label="worker", zygote=zygote)
        self.backend = backend
        self.startup_timeout = startup_timeout
        self.describe = None
        self.spent = 0.0  # seconds the adapter took for the last compile or run (the worker's reply says)
        self.compiled = 0  # compiles sent to the process now running (planning.needs_fresh_worker)

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
        self.compiled += msg in compile_messages()
        reply = super().call(msg, arg, timeout)
        if len(reply) == 3:
            self.spent = reply[2]
        return reply[:2]


NOTE = "shlo-conform: "   # how an adapter's line for the user starts in its worker's log (stderr)
MAX_NOTES = 20


def backend_notes(log_dir: str, notes: list[str]) -> list[str]:
    """`notes` and the distinct lines under NOTE in the logs of `log_dir`
    (workers' stderr), at most MAX_NOTES: what an adapter tells the user
    during a run (the command adapter: a protocol violation and the retry it
    caused) reaches the results and the reports, not only a log in a
    temporary folder."""
    out = list(notes)
    try:
        names = sorted(os.listdir(log_dir))
    except OSError:
        return out
    for name in names:
        try:
            with open(os.path.join(log_dir, name), errors="replace") as f:
                for line in f:
                    line = line.strip()
                    if line.startswith(NOTE) and line[len(NOTE):] not in out and len(out) < MAX_NOTES:
                        out.append(line[len(NOTE):])
        except OSError:
            continue
    return out


class Runner:
    """Runs cases on one backend in `jobs` worker processes; calls
    `on_verdict(verdict)` (under a lock) as each case is decided.  Worker
    logs go to `log_dir` (a temporary folder by default)."""

    def __init__(self, backend: str, *, compile_timeout: float | None = None,
                 run_timeout: float = DEFAULT_RUN_TIMEOUT, jobs: int = 1, batch: int = 1,
                 startup_timeout: float | None = None,
                 on_verdict: Callable[[Verdict], None] | None = None,
                 on_describe: Callable[[str], None] | None = None, keep_outputs: bool = False,
                 log_dir: str | None = None, fork: bool = True):
        self.backend = backend
        self.fork = fork   # workers forked from a zygote (shlo_conform/pipeline/zygote.py) where the platform allows
        self.outputs: dict[str, list] | None = {} if keep_outputs else None
        self.compile_timeout = compile_timeout if compile_timeout is not None else compile_timeout_for(run_timeout)
        self.run_timeout = run_timeout
        self.startup_timeout = startup_timeout if startup_timeout is not None else \
            default_startup_timeout(self.compile_timeout)
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
        self.notes: list[str] = []   # lines an adapter wrote to its workers' logs under NOTE (backend_notes)

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
                        if kind == "series":
                            learned = Learned()
                            for b in g:
                                self._do_batch(w, b, emit, learned)
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
                self.notes = backend_notes(log_dir, self.notes)
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
            self.timing["compile" if msg in compile_messages() else "run"] += \
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
        never a handle of the dead process.  How a case is compiled, run and
        judged is its mode's (modes.py; a group's cases share the compile:
        planning.group_by_program)."""
        self._ensure_started(w)
        todo = self._capable(w, self._claimed(group, emit), emit)
        compiled = False
        for i, c in enumerate(todo):
            if self._stop.is_set():
                raise _Stopped
            if not compiled or w.proc is None:
                got = self._compile_for(w, c, todo[i:], emit)
                if got == "refused":
                    return
                if got != "ok":
                    continue
                compiled = True
            compiled = self._run_case(w, c, emit)

    def _capable(self, w: Worker, cases: list[Case], emit) -> list[Case]:
        """The cases whose mode the adapter can run; the others get
        `unsupported` with the reason the adapter gives (`Mode.capability`:
        a question asked once per run)."""
        todo = cases
        for cap in dict.fromkeys(mode_of(c).capability for c in cases):
            if cap is None:
                continue
            reason = self._capability_reason(w, cap)
            if reason:
                for c in todo:
                    if mode_of(c).capability == cap:
                        emit(self._verdict(c, "unsupported", reason))
                todo = [c for c in todo if mode_of(c).capability != cap]
        return todo

    def _compile_for(self, w: Worker, c: Case, rest: list[Case], emit) -> str:
        """Compile `c`'s program (its mode's message) on `w`: "ok" when it
        compiled; "lost" after a crash or a timeout (`c`'s verdict, the
        worker gone); "refused" otherwise — the refusal is the verdict of
        every case in `rest` (`c` first: they share the program)."""
        if w.compiled and needs_fresh_worker(c):
            w.stop()   # a worker that compiled nothing yet (planning.needs_fresh_worker)
        self._ensure_started(w)
        t0 = time.monotonic()
        with self._lock:
            self.compiles += 1
        mode = mode_of(c)
        status, payload = self._call(w, mode.compile_msg, mode.compile_arg(c), self.compile_timeout)
        if status in ("crash", "timeout"):
            emit(self._verdict(c, status, f"while compiling: {payload}", time.monotonic() - t0))
            return "lost"
        if status != "ok":
            for r in rest:
                emit(self.compile_verdict(r, status, payload, time.monotonic() - t0))
            return "refused"
        return "ok"

    def _run_case(self, w: Worker, c: Case, emit) -> bool:
        """Run compiled `c` (its mode's message) and emit its verdict:
        whether the program is still compiled on `w` (not after a crash or a timeout)."""
        mode = mode_of(c)
        t0 = time.monotonic()
        status, payload = self._call(w, mode.run_msg, mode.run_arg(c), self.run_timeout)
        if status in ("crash", "timeout"):
            emit(self._verdict(c, status, f"while running: {payload}", time.monotonic() - t0))
            return False
        if status == "ok" and self.outputs is not None:
            self.outputs[c.id] = mode.unpack(payload)[0]
        seconds = time.monotonic() - t0
        t1 = time.monotonic()
        v = self.run_verdict(c, status, payload, seconds)
        with self._lock:
            self.timing["judge"] += time.monotonic() - t1
        emit(v)
        return True

    def _do_batch(self, w: Worker, cases: list[Case], emit, learned: "Learned | None" = None) -> None:
        """Compile `cases` (single-case programs of one op, `_may_batch`) as
        one merged module and run it once.  Verdicts
        are those a single run would give: only a pass is taken from a
        batch; every case whose outputs do not pass is done again alone
        (`_do_group`), and so is every case of a batch that cannot be
        merged, crashes or times out (a fresh worker after a crash).  A
        batch whose refusal (rejected or unsupported) names the lines it
        refuses (`Batch.culprits`: IREE's MLIR diagnostics, and its
        adapter's of types that cannot cross @main's boundary) runs the cases holding them alone and the
        rest as a batch again (a refused compile fails early: another round
        costs less than compiling the kind's passing cases one by one).  A
        batch refused otherwise (rejected, unsupported, an error) is split
        in halves, each tried as a batch, so that one refused case costs a
        few compiles, not one per case; batches of fewer than SPLIT_MIN go
        case by case (`_alone`, which learns which kinds the rest of this
        unit run alone — its halves and the series' later batches: `Learned`)."""
        learned = learned if learned is not None else Learned()
        self._ensure_started(w)
        todo = self._claimed(cases, emit)
        supported = self._batches_supported(w)
        if any(learned.alone(c) for c in todo):
            self._alone(w, [c for c in todo if learned.alone(c)], emit, learned)
            todo = [c for c in todo if not learned.alone(c)]
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
            culprits = merged.culprits(str(payload)) if status in ("rejected", "unsupported") else set()
            if culprits:
                # the refusal names its cases' lines (MLIR's diagnostics): those cases alone, the rest merged
                self._alone(w, [todo[k] for k in sorted(culprits)], emit, learned)
                self._ensure_started(w)
                self._do_batch(w, [c for k, c in enumerate(todo) if k not in culprits], emit, learned)
                return
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

    def _alone(self, w: Worker, cases: list[Case], emit, learned: "Learned") -> None:
        """Each case compiled and run by itself, what it shows kept in `learned` (`Learned.saw`)."""
        for c in cases:
            def watch(v: Verdict, c=c):
                learned.saw(c, v)
                emit(v)
            self._do_group(w, [c], watch)

    def _batches_supported(self, w: Worker) -> bool:
        """Whether the adapter compiles merged modules (`Backend.batches`); asked once per run."""
        if not hasattr(self, "_batch_answer"):
            status, payload = self._call(w, "batches", None, self.startup_timeout)
            self._batch_answer = status == "ok" and payload is True
            if status in ("crash", "timeout"):
                self._ensure_started(w)
        return self._batch_answer

    def _capability_reason(self, w: "Worker", question: str) -> str | None:
        """Why the adapter cannot run cases of a mode (`Mode.capability`:
        "host" — it does not implement `Backend.run_with_host`), or None;
        asked once per run."""
        answers = self.__dict__.setdefault("_capability_answers", {})
        if question not in answers:
            status, payload = self._call(w, question, None, self.startup_timeout)
            answers[question] = payload if status == "unsupported" else None
        return answers[question]

    # -- classification ---------------------------------------------------------
    @staticmethod
    def _verdict(c: Case, verdict: str, detail: str = "", seconds: float = 0.0, **kw) -> Verdict:
        return Verdict(id=c.id, op=c.op, dtype=c.dtype, kind=c.kind, verdict=verdict, detail=detail,
                       seconds=round(seconds, 6), violates=c.violates, **kw)

    def compile_verdict(self, c: Case, status: str, msg: str, seconds: float) -> Verdict:
        """The verdict of a case whose compile answered `status` (`backends.base.status_of`) with `msg`."""
        if status == "rejected":
            return self._verdict(c, "rejected", msg, seconds)
        if status == "unsupported":
            return self._verdict(c, "unsupported", msg, seconds)
        return self._verdict(c, "fail", f"adapter error while compiling (not a Rejected): {msg}", seconds)

    def run_verdict(self, c: Case, status: str, payload, seconds: float) -> Verdict:
        """The verdict of a compiled case whose run answered `status` with
        `payload` (the outputs where "ok", else one line): judged against the
        case's expectations, or the refusal/error as the verdict."""
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
        mode = mode_of(c)
        outputs, log = mode.unpack(payload)
        why: dict = {}
        ok, detail, max_ulp, labels = mode.judge(c, outputs, log, why)
        return self._verdict(c, "pass" if ok else "fail", detail, seconds, max_ulp=max_ulp, impl_defined=labels,
                             **why)


