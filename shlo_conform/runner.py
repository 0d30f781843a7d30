"""The runner: replays a suite on one backend and turns what happens into verdicts.

It owns everything an adapter does not (DESIGN.md, "backends and the
runner"):

* **grouping** — cases are grouped by program text; a program is compiled
  once and run on each of its input sets;
* **isolation** — the adapter lives in a worker process (`worker.py`); a
  compile or a run that takes longer than its timeout gets `timeout`, a
  worker that dies (signal, abort, exit) gets `crash` with the signal; the
  worker is restarted and the run goes on with the next case;
* **classification** — value case: `Rejected` → `rejected` (a failure),
  `Unsupported` or a `claims()` reason → `unsupported`, outputs checked by
  `suites.compare.compare` → `pass` / `fail`; invalid case: `Rejected` →
  `rejected` (the conformant answer), accepted and run → `fail`;
* **journal** — each verdict is appended to a JSON-lines journal as it
  arrives, so an interrupted run resumes without redoing or losing work;
* **scoring** — counts per verdict, per op and per (op, dtype), and the
  results document that `reports/` renders.
"""
from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Callable, Iterable

from .suites.compare import Comparison, compare
from .suites.records import VERDICTS, Case, Verdict, conformant

DEFAULT_COMPILE_TIMEOUT = 20.0
DEFAULT_RUN_TIMEOUT = 10.0
INIT_TIMEOUT = 180.0  # importing jax/iree and creating a client can take a while
JOURNAL_VERSION = 1


class BackendLoadError(Exception):
    """The backend could not be loaded or initialised (a usage/input error)."""


class WorkerDied(Exception):
    pass


class WorkerTimeout(Exception):
    pass


class _Stopped(Exception):
    pass


def check_backend_spec(spec: str) -> None:
    """Fail fast, in this process, on a backend name nobody knows
    (`backends.base.parse_backend_name`: the one reading of a name)."""
    from .backends.base import parse_backend_name
    parse_backend_name(spec)


def _signal_name(code: int | None) -> str:
    if code is None:
        return "no exit status"
    if code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit status {code}"


class Worker:
    """One backend adapter in a child process, restartable."""

    def __init__(self, backend: str, log_dir: str):
        self.backend = backend
        self.log_dir = log_dir
        self.proc = None
        self.conn = None
        self.describe = None
        self.starts = 0

    # -- life cycle -------------------------------------------------------
    def start(self) -> str:
        """A fresh `python -m shlo_conform.worker` (a plain subprocess: no
        re-import of the caller's __main__, unlike multiprocessing's spawn)."""
        parent, child = socket.socketpair()
        self.log_path = os.path.join(self.log_dir, f"worker-{id(self)}-{self.starts}.log")
        self.starts += 1
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "shlo_conform.worker", str(child.fileno())],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                pass_fds=(child.fileno(),), close_fds=True)
        child.close()
        self.conn = Connection(parent.detach())
        try:
            status, payload = self.call("init", self.backend, INIT_TIMEOUT)
        except (WorkerDied, WorkerTimeout) as e:
            raise BackendLoadError(f"backend {self.backend!r} could not start: {e}") from None
        if status != "ok":
            self.stop()
            raise BackendLoadError(f"backend {self.backend!r} could not be loaded: {payload}")
        self.describe = payload
        return payload

    def kill(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:  # pragma: no cover - unkillable
                pass
        if self.conn is not None:
            self.conn.close()
        self.proc = self.conn = None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.conn.send(("stop", None))
                self.proc.wait(2)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
        self.kill()

    def restart(self) -> None:
        self.kill()
        self.start()

    # -- messages ---------------------------------------------------------
    def call(self, msg: str, arg, timeout: float):
        try:
            self.conn.send((msg, arg))
            if self.conn.poll(timeout):
                return self.conn.recv()
        except (EOFError, OSError, ValueError):
            raise WorkerDied(self._death()) from None
        self.kill()
        raise WorkerTimeout(f"{msg} took longer than {timeout:g} s")

    def _death(self) -> str:
        proc, code = self.proc, None
        if proc is not None:
            try:
                code = proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
        why = f"worker died: {_signal_name(code)}"
        tail = self._log_tail()
        self.kill()
        return f"{why} ({tail})" if tail else why

    def _log_tail(self, lines: int = 2, chars: int = 300) -> str:
        try:
            text = Path(self.log_path).read_text(errors="replace")
        except OSError:
            return ""
        kept = [ln.strip() for ln in text.splitlines() if ln.strip()][-lines:]
        return " | ".join(kept)[-chars:]


def group_by_program(cases: Iterable[Case]) -> list[list[Case]]:
    """Cases sharing a program text, in order of first appearance."""
    groups: dict[str, list[Case]] = {}
    for c in cases:
        groups.setdefault(c.mlir, []).append(c)
    return list(groups.values())


def check_outputs(case: Case, outputs: list) -> tuple[bool, str, float | None, list[str]]:
    """Compare every output of a value case with its expectation: (ok,
    detail, max_ulp, implementation-defined labels chosen)."""
    if len(outputs) != len(case.expected):
        return False, f"{len(outputs)} outputs where {len(case.expected)} were expected", None, []
    problems, ulps, labels = [], [], []
    for k, (exp, actual) in enumerate(zip(case.expected, outputs)):
        try:
            j = compare(exp, actual)
        except Exception as e:  # an output numpy cannot even read as the expected type
            j = Comparison(False, detail=f"could not compare ({type(e).__name__}: {e})")
        if j.max_ulp is not None:
            ulps.append(j.max_ulp)
        labels += [label for label in j.alternatives_used if label not in labels]
        if not j.ok:
            problems.append(f"output {k}: {j.detail}" if len(outputs) > 1 else j.detail)
    return not problems, "; ".join(problems), (max(ulps) if ulps else None), labels


class Runner:
    """Runs cases on one backend in `jobs` worker processes; calls
    `on_verdict(verdict)` (under a lock) as each case is decided."""

    def __init__(self, backend: str, *, compile_timeout: float = DEFAULT_COMPILE_TIMEOUT,
                 run_timeout: float = DEFAULT_RUN_TIMEOUT, jobs: int = 1,
                 on_verdict: Callable[[Verdict], None] | None = None,
                 on_describe: Callable[[str], None] | None = None, keep_outputs: bool = False):
        self.backend = backend
        self.outputs: dict[str, list] | None = {} if keep_outputs else None
        self.compile_timeout = compile_timeout
        self.run_timeout = run_timeout
        self.jobs = max(1, jobs)
        self.on_verdict = on_verdict
        self.on_describe = on_describe
        self.describe: str | None = None
        self.compiles = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._claims: dict[tuple[str, str], str | None] = {}
        self._workers: list[Worker] = []
        self._errors: list[BaseException] = []

    # -- public -----------------------------------------------------------
    def run(self, cases: list[Case]) -> list[Verdict]:
        """Verdicts for `cases`, in their order."""
        order = {c.id: i for i, c in enumerate(cases)}
        got: dict[str, Verdict] = {}
        self._pairs = sorted({(c.op, c.dtype) for c in cases})
        groups = group_by_program(cases)
        queue = list(reversed(groups))
        with tempfile.TemporaryDirectory(prefix="shlo-conform-") as log_dir:
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

            def loop():
                w = Worker(self.backend, log_dir)
                with self._lock:
                    self._workers.append(w)
                try:
                    while not self._stop.is_set():
                        g = take()
                        if g is None:
                            return
                        self._do_group(w, g, emit)
                except _Stopped:
                    pass
                except BaseException as e:  # BackendLoadError, or a bug: stop everyone
                    self._errors.append(e)
                    self._stop.set()
                finally:
                    w.stop()

            n = min(self.jobs, len(groups))
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
        if self._errors:
            raise self._errors[0]
        return sorted(got.values(), key=lambda v: order[v.id])

    # -- one program --------------------------------------------------------
    def _ensure_started(self, w: Worker) -> None:
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
            status, reasons = w.call("claims", self._pairs, self.compile_timeout)
            if status != "ok":
                raise BackendLoadError(f"backend {self.backend!r} failed to answer claims(): {reasons}")
            with self._lock:
                self._claims.update(zip(self._pairs, reasons))

    def _do_group(self, w: Worker, group: list[Case], emit) -> None:
        todo = []
        self._ensure_started(w)
        for c in group:
            reason = self._claims.get((c.op, c.dtype))
            if reason:
                emit(self._verdict(c, "unsupported", f"not claimed: {reason}"))
            else:
                todo.append(c)
        compiled = False
        for i, c in enumerate(todo):
            if self._stop.is_set():
                raise _Stopped
            if not compiled:
                self._ensure_started(w)
                t0 = time.monotonic()
                with self._lock:
                    self.compiles += 1
                try:
                    status, payload = w.call("compile", c.mlir, self.compile_timeout)
                except (WorkerDied, WorkerTimeout) as e:
                    if self._stop.is_set():
                        raise _Stopped
                    verdict = "crash" if isinstance(e, WorkerDied) else "timeout"
                    for rest in todo[i:]:
                        emit(self._verdict(rest, verdict, f"while compiling: {e}", time.monotonic() - t0))
                    w.kill()
                    return
                if status != "ok":
                    for rest in todo[i:]:
                        emit(self._compile_verdict(rest, status, payload, time.monotonic() - t0))
                    return
                compiled = True
            t0 = time.monotonic()
            args = [(v.type, v.hex) for v in c.inputs]
            try:
                status, payload = w.call("run", args, self.run_timeout)
            except (WorkerDied, WorkerTimeout) as e:
                if self._stop.is_set():
                    raise _Stopped
                verdict = "crash" if isinstance(e, WorkerDied) else "timeout"
                emit(self._verdict(c, verdict, f"while running: {e}", time.monotonic() - t0))
                w.kill()  # restarted (and the program recompiled) for the next case
                compiled = False
                continue
            if status == "ok" and self.outputs is not None:
                self.outputs[c.id] = payload
            emit(self._run_verdict(c, status, payload, time.monotonic() - t0))

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
        ok, detail, max_ulp, labels = check_outputs(c, payload)
        return self._verdict(c, "pass" if ok else "fail", detail, seconds, max_ulp=max_ulp, impl_defined=labels)


# ---------------------------------------------------------------------------
# Journal: verdicts as JSON lines, with a header naming backend and suite
# ---------------------------------------------------------------------------

class Journal:
    """`<results>.journal`: a header line, then `{"describe": …}` and verdict lines."""

    def __init__(self, path: Path, backend: str, suite: str, manifest: dict):
        self.path = Path(path)
        self.header = {"journal": JOURNAL_VERSION, "backend": backend, "suite": suite,
                       "manifest": hashlib.sha256(json.dumps(manifest, sort_keys=True).encode()).hexdigest()[:16]}
        self.done: dict[str, Verdict] = {}
        self.describe: str | None = None
        self._fh = None

    def open(self) -> "Journal":
        """Resume if the journal is for the same backend and suite; else start afresh."""
        if self.path.is_file():
            lines = self.path.read_text().splitlines()
            try:
                same = bool(lines) and json.loads(lines[0]) == self.header
            except ValueError:
                same = False
            if same:
                for line in lines[1:]:
                    try:
                        d = json.loads(line)
                    except ValueError:
                        continue  # a line cut short by the interruption
                    if "describe" in d and "id" not in d:
                        self.describe = d["describe"]
                    elif "id" in d:
                        try:
                            self.done[d["id"]] = Verdict(**d)
                        except TypeError:
                            continue
                self._fh = self.path.open("a")
                if lines and not self.path.read_text().endswith("\n"):
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


def _max(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def summarize(verdicts: list[Verdict]) -> tuple[dict, dict]:
    """(counts over all cases, per-op counts with max ULP, per-dtype counts and
    the implementation-defined choices the backend made)."""
    counts = _blank()
    per_op: dict[str, dict] = {}
    for v in verdicts:
        _count(counts, v)
        op = per_op.setdefault(v.op, {**_blank(), "max_ulp": None, "dtypes": {}, "impl_defined": {}})
        _count(op, v)
        if v.max_ulp is not None:
            op["max_ulp"] = _max(op["max_ulp"], v.max_ulp)
        d = op["dtypes"].setdefault(v.dtype, {**_blank(), "max_ulp": None})
        _count(d, v)
        if v.max_ulp is not None:
            d["max_ulp"] = _max(d["max_ulp"], v.max_ulp)
        for label in v.impl_defined:
            op["impl_defined"][label] = op["impl_defined"].get(label, 0) + 1
    counts["nonconformant"] = counts["counted"] - counts["conformant"]
    return counts, dict(sorted(per_op.items()))


def results_document(*, backend: str, describe: str | None, suite: str, manifest: dict, started: str,
                     seconds: float, verdicts: list[Verdict], timeouts: dict | None = None) -> dict:
    counts, per_op = summarize(verdicts)
    doc = {"backend": backend, "describe": describe or backend, "suite": suite, "manifest": manifest,
           "started": started, "seconds": round(seconds, 3), "counts": counts, "per_op": per_op,
           "verdicts": [asdict(v) for v in verdicts]}
    if timeouts:
        doc["timeouts"] = timeouts
    return doc


def load_results(path: Path) -> dict:
    """Read a results document (raises ValueError if it is not one)."""
    doc = json.loads(Path(path).read_text())
    if not isinstance(doc, dict) or "verdicts" not in doc:
        raise ValueError(f"{path} is not a shlo-conform results file (no 'verdicts')")
    return doc


def score(cases: list[Case], backend: str, *, suite: str, manifest: dict, json_path: Path,
          compile_timeout: float = DEFAULT_COMPILE_TIMEOUT, run_timeout: float = DEFAULT_RUN_TIMEOUT,
          jobs: int = 1, on_verdict: Callable[[Verdict], None] | None = None) -> dict:
    """Run `cases` on `backend` with a journal next to `json_path`, resuming
    from it when it belongs to the same backend and suite; write and return
    the results document.  On KeyboardInterrupt the journal stays."""
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    t0 = time.monotonic()
    journal = Journal(Path(str(json_path) + ".journal"), backend, suite, manifest).open()
    wanted = {c.id for c in cases}
    done = {k: v for k, v in journal.done.items() if k in wanted}
    todo = [c for c in cases if c.id not in done]

    def record(v: Verdict) -> None:
        journal.add(v)
        if on_verdict:
            on_verdict(v)

    runner = Runner(backend, compile_timeout=compile_timeout, run_timeout=run_timeout, jobs=jobs,
                    on_verdict=record, on_describe=journal.set_describe)
    try:
        fresh = runner.run(todo) if todo else []
    except BaseException:
        journal.close()
        raise
    by_id = {**done, **{v.id: v for v in fresh}}
    verdicts = [by_id[c.id] for c in cases if c.id in by_id]
    doc = results_document(backend=backend, describe=runner.describe or journal.describe, suite=suite,
                           manifest=manifest, started=started, seconds=time.monotonic() - t0,
                           verdicts=verdicts, timeouts={"compile": compile_timeout, "run": run_timeout})
    doc["resumed"] = len(done)
    doc["compiles"] = runner.compiles
    json_path = Path(json_path)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(doc, indent=1) + "\n")
    journal.close(remove=True)
    return doc
