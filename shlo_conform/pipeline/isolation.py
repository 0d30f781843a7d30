"""One harness for every process the tool runs on behalf of a backend or the oracle.

Why one: implementations under test crash (the reference interpreter dies of
SIGFPE on an integer division by zero), hang, print without end, and a
program from the wild can kill whatever parses it (5,000 nested regions
overflow MLIR's parser stack).  Scoring, the accuracy survey, export
replay, fuzz and `run` all need the same answer: the work runs in a child
process that leads a session of its own (killed as a group, with whatever
it started), dies with its parent (PR_SET_PDEATHSIG), writes its output to
a capped log, and answers each request within a timeout — or the request
is classified, once, here: `Died` (a signal or an exit, with the log's last
lines) or `Hung` (no answer in time: the group is killed).

Two servers run in such a child:

* the backend worker (`shlo_conform.pipeline.worker:serve`): one adapter, its
  compile/run protocol (the runner's `Worker`, forked from a zygote where
  it can be: shlo_conform/pipeline/zygote.py);
* the job server (`serve_jobs`, here): calls `module:function(*args)` and
  sends back what it returns — for work of our own that must not take the
  caller down with it: the oracle of `run` (a program that nests too deep,
  allocates too much or never ends), a survey's backend runs, export replay.
  Each call runs in a thread with a large stack (`JOB_STACK`) and a high
  recursion limit, so deep programs are judged rather than refused; a
  `memory` budget caps the address space the call may add, so an
  allocation past it is a `MemoryError` there, reported, not the machine's
  swap.

Messages are pickled over a socket pair: both ends are this tool's own
code (nothing a user supplies is unpickled).
"""
from __future__ import annotations

import importlib
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import threading
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Callable, Iterable, Iterator

from ..backends.base import exit_status

STARTUP_FLOOR = 60.0  # importing jax or iree and creating a client takes seconds, more on a loaded machine
LOG_HEAD = LOG_TAIL = 1 << 20  # a child's log keeps its first and last MiB
JOB_STACK = 1 << 30   # a job thread's stack: virtual, only what deep recursion touches is used
JOB_RECURSION = 1_000_000


def compile_timeout_for(run_timeout: float) -> float:
    """The one rule for how long a compile may take given a run's timeout:
    twice it (compiles of one op take longer than its runs, never by much)."""
    return 2 * run_timeout


def default_startup_timeout(compile_timeout: float) -> float:
    """How long a child may take to start (load a backend, answer its
    first request): the run's compile timeout, never under STARTUP_FLOOR."""
    return max(STARTUP_FLOOR, compile_timeout)


class Died(Exception):
    """The child died (a signal, an exit) before it answered."""


class Hung(Exception):
    """The child did not answer in time; it and its group were killed."""


class JobFailed(Exception):
    """A job raised in the child: `kind` is "memory" (past its budget),
    "recursion" (deeper than even the job stack allows), or "error"."""

    def __init__(self, kind: str, text: str):
        super().__init__(text)
        self.kind = kind


def die_with_parent() -> None:
    """Linux: have the kernel SIGKILL this process when the thread that
    started it ends — even by kill -9 — so that nothing hung outlives the
    tool (PR_SET_PDEATHSIG)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)
    except Exception:  # pragma: no cover - no prctl: the parent still kills its children itself
        return
    if os.getppid() == 1:  # the parent died before the line above
        os._exit(1)


class CappedLog:
    """A child's stdout and stderr, copied from a pipe by a thread into a
    file that keeps the first `head` and the last `tail` bytes (a marker
    says how much was left out): a backend that prints without end cannot
    fill the disk.  The last bytes stay in memory to explain a crash."""

    def __init__(self, pipe, path: str, head: int = LOG_HEAD, tail: int = LOG_TAIL):
        self.path, self.head, self.tail = path, head, tail
        self.seen = 0
        self._recent = bytearray()
        self._lock = threading.Lock()
        self._file = open(path, "wb")
        self._thread = threading.Thread(target=self._pump, args=(pipe,), daemon=True)
        self._thread.start()

    def _pump(self, pipe) -> None:
        try:
            while True:
                chunk = os.read(pipe.fileno(), 1 << 16)
                if not chunk:
                    break
                with self._lock:
                    if self.seen < self.head:
                        self._file.write(chunk[: self.head - self.seen])
                        self._file.flush()
                    self.seen += len(chunk)
                    self._recent += chunk
                    del self._recent[: max(0, len(self._recent) - self.tail)]
        except (OSError, ValueError):
            pass
        finally:
            pipe.close()

    def close(self, wait: float = 2.0) -> None:
        """Wait (briefly) for the pipe's end, then write the kept tail."""
        self._thread.join(wait)
        with self._lock:
            if self._file.closed:
                return
            if self.seen > self.head:
                start = max(self.head, self.seen - len(self._recent))
                if start > self.head:
                    self._file.write(f"\n[... {start - self.head} bytes of output not kept ...]\n".encode())
                self._file.write(bytes(self._recent[len(self._recent) - (self.seen - start):]))
            self._file.close()

    def last_lines(self, lines: int = 2, chars: int = 300) -> str:
        with self._lock:
            text = bytes(self._recent[-8192:]).decode(errors="replace")
        kept = [ln.strip() for ln in text.splitlines() if ln.strip()]
        kept = [ln for ln in kept if not _NOISE(ln)][-lines:]
        return " | ".join(kept)[-chars:]


def _NOISE(line: str) -> bool:
    """Log lines that never explain a death (absl's start-up warnings)."""
    return line.startswith(("WARNING: All log messages before absl::InitializeLog()",))


class Child:
    """One child process serving `server` ("module:function", called with
    the socket's `Connection`), restartable.  `call` sends one message and
    waits for its one reply; a death is `Died`, no reply in time `Hung`
    (the group is killed first).  `zygote` (shlo_conform/pipeline/zygote.py): fork
    backend workers from a template that imported the backend once."""

    def __init__(self, server: str, log_dir: str, *, label: str = "child", zygote=None):
        self.server = server
        self.log_dir = log_dir
        self.label = label
        self.zygote = zygote
        self.proc = None
        self.conn = None
        self.log: CappedLog | None = None
        self.starts = 0

    # -- life cycle -------------------------------------------------------
    def spawn(self) -> None:
        """Start the process: forked by the zygote when there is one (it
        serves backend workers only), else a fresh `python -m
        shlo_conform.pipeline.isolation FD SERVER` — a plain subprocess: no re-import
        of the caller's __main__, unlike multiprocessing's spawn.  It leads
        a session of its own; its output goes to a capped log."""
        parent, child = socket.socketpair()
        log_path = os.path.join(self.log_dir, re.sub(r"[^\w.-]", "_", self.label)[-60:] + f"-{id(self)}-{self.starts}.log")
        self.starts += 1
        self.proc = self._forked(child) if self.zygote is not None else None
        if self.proc is None:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "shlo_conform.pipeline.isolation", str(child.fileno()), self.server],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                pass_fds=(child.fileno(),), close_fds=True, start_new_session=True)
        self.log = CappedLog(self.proc.stdout, log_path)
        child.close()
        self.conn = Connection(parent.detach())

    def _forked(self, child: socket.socket):
        """A child forked by the zygote, its output on a new pipe; None if
        the zygote is gone (the caller then starts a fresh interpreter)."""
        if not self.zygote.alive():
            return None
        r, w = os.pipe()
        try:
            proc = self.zygote.fork(child.fileno(), w)
        except OSError:
            os.close(r)
            return None
        finally:
            os.close(w)
        proc.stdout = os.fdopen(r, "rb", buffering=0)
        return proc

    def kill(self) -> None:
        """SIGKILL to the child's whole process group: the child, the
        implementation it started and anything that forked."""
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:  # pragma: no cover - unkillable
                pass
        if self.conn is not None:
            self.conn.close()
        if self.log is not None:
            self.log.close()
        self.proc = self.conn = None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.conn.send(("stop", None))
                self.proc.wait(2)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
        self.kill()

    # -- messages ---------------------------------------------------------
    def call(self, msg: str, arg, timeout: float) -> tuple:
        """The child's reply to (msg, arg) within `timeout` seconds."""
        try:
            self.conn.send((msg, arg))
            if self.conn.poll(timeout):
                return self.conn.recv()
        except (EOFError, OSError, ValueError):
            raise Died(self.death()) from None
        self.kill()
        raise Hung(f"{msg} took longer than {timeout:g} s")

    def death(self) -> str:
        """Why the child is gone, as one line: its exit status and the last
        lines it wrote; the rest of its group is killed."""
        proc, code = self.proc, None
        if proc is not None:
            try:
                code = proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
        why = f"{self.label} died: {exit_status(code)}"
        self.kill()  # the rest of its group, and the log's last bytes
        tail = self.log.last_lines() if self.log is not None else ""
        return f"{why} ({tail})" if tail else why


# --------------------------------------------------------------------------
# Jobs: our own work, isolated
# --------------------------------------------------------------------------

def _resolve(target: str) -> Callable:
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def serve_jobs(conn: Connection) -> None:
    """The job server's loop: ("call", (target, args, memory)) runs
    `target(*args)` in a thread with a JOB_STACK stack and answers
    ("ok", value) or ("failed", (kind, text)); ("stop", None) ends it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the parent's to handle
    sys.setrecursionlimit(JOB_RECURSION)
    threading.stack_size(JOB_STACK)
    while True:
        try:
            msg, arg = conn.recv()
        except (EOFError, OSError):
            return
        if msg == "stop":
            return
        if msg != "call":
            conn.send(("failed", ("error", f"unknown job message {msg!r}")))
            continue
        target, args, memory = arg
        box: dict = {}

        def work():
            try:
                box["reply"] = ("ok", _resolve(target)(*args))
            except MemoryError as e:
                box["reply"] = ("failed", ("memory", f"MemoryError: {e}" if str(e) else "MemoryError"))
            except RecursionError as e:
                box["reply"] = ("failed", ("recursion", f"RecursionError: {e}"))
            except BaseException as e:  # a bug of ours or the job's own refusal: reported, never fatal
                traceback.print_exc()
                box["reply"] = ("failed", ("error", f"{type(e).__name__}: {e}".strip()))

        _limit_memory(memory)
        t = threading.Thread(target=work)
        t.start()
        t.join()
        _limit_memory(None)
        try:
            conn.send(box["reply"])
        except Exception as e:  # a result that does not pickle
            conn.send(("failed", ("error", f"the result could not be sent: {type(e).__name__}: {e}")))


def _limit_memory(extra: int | None) -> None:
    """Cap the address space at what the process maps now plus `extra`
    bytes (None: no cap).  Whatever the job allocates past it fails there
    as a MemoryError, not on the machine's other work."""
    if not hasattr(resource, "RLIMIT_AS"):   # pragma: no cover - not Linux
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if extra is None:
        resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
        return
    try:
        with open("/proc/self/statm") as f:
            mapped = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:   # pragma: no cover - no procfs: no cap
        return
    # the job thread's stack is mapped when it starts: leave room for it
    limit = mapped + JOB_STACK + int(extra)
    resource.setrlimit(resource.RLIMIT_AS, (min(limit, hard) if hard != resource.RLIM_INFINITY else limit, hard))


@dataclass
class Failure:
    """What became of a job that did not return: "crash" (the process
    died), "timeout", "memory", "recursion" or "error" — and one line."""
    kind: str
    detail: str


def failure_status(f: Failure, timeout: float) -> tuple[str, str]:
    """The one reading of a job that did not return, as a verdict: (status,
    what became of the process, to follow "the backend's" or "the
    interpreter's") — `crash` (it died), `timeout` (no answer in `timeout`
    s), or `error` (memory, recursion, an exception) with its own words."""
    why = {"crash": "process died", "timeout": f"process gave no answer in {timeout:g} s"}.get(
        f.kind, f"process failed ({f.kind})")
    return (f.kind if f.kind in ("crash", "timeout") else "error"), f"{why}: {f.detail}"


class Jobs:
    """A job server kept between calls (a survey's backend, an export's
    replay): `call` returns the target's value or a `Failure`; after a
    crash or a timeout the next call starts a fresh process, so a failure
    is the call's own."""

    def __init__(self, log_dir: str, *, label: str = "job"):
        self.child = Child("shlo_conform.pipeline.isolation:serve_jobs", log_dir, label=label)

    def call(self, target: str, *args, timeout: float, memory: int | None = None) -> Any:
        if self.child.proc is None:
            self.child.spawn()
        try:
            status, payload = self.child.call("call", (target, args, memory), timeout)
        except Died as e:
            return Failure("crash", str(e))
        except Hung as e:
            return Failure("timeout", str(e))
        if status == "ok":
            return payload
        kind, text = payload
        return Failure(kind, text)

    def close(self) -> None:
        self.child.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def call_isolated(target: str, *args, timeout: float, memory: int | None = None, log_dir: str | None = None,
                  label: str = "job") -> Any:
    """`target(*args)` in a process of its own: its value, or a `Failure`."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix="shlo-conform-") as tmp:
        with Jobs(log_dir or tmp, label=label) as jobs:
            return jobs.call(target, *args, timeout=timeout, memory=memory)


def map_isolated(target: str, items: Iterable, *, timeout: float, log_dir: str,
                 label: str = "job") -> Iterator[tuple[Any, Any]]:
    """(item, target(item) or its `Failure`) for each item in order, one
    process kept while it lives: a death or a hang costs the item in flight
    only, the next item starts a fresh process."""
    with Jobs(log_dir, label=label) as jobs:
        for item in items:
            yield item, jobs.call(target, item, timeout=timeout)


def main(fd: int, server: str) -> None:
    """`python -m shlo_conform.pipeline.isolation FD SERVER`: serve on socket FD."""
    die_with_parent()
    _resolve(server)(Connection(fd))


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
