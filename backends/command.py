"""Any external implementation, through a small JSON-lines protocol.

The implementation is an executable (no Python needed on its side).  The
adapter starts it once and talks to it over its stdin/stdout, one JSON object
per line each way, one reply per request.  The full protocol is in
docs/command-protocol.md; in short, every request carries an `"id"` that its
reply echoes:

    {"id":N,"cmd":"compile","mlir":TEXT}
        -> {"id":N,"ok":true,"handle":H} | {"id":N,"ok":false,"rejected":MSG} | {…,"unsupported":MSG}
    {"id":N,"cmd":"run","handle":H,"inputs":[{"type":"tensor<2x3xf32>","hex":"…"}, …]}
        -> {"id":N,"ok":true,"outputs":[{"type":…,"hex":…}, …]}
         | {"id":N,"ok":false,"error":MSG} | {…,"unsupported":MSG}
    {"id":N,"cmd":"claims"}            (optional for the implementation)
        -> {"id":N,"ok":true,"describe":TEXT,"unsupported":[{"op":OP|"*","dtype":DTYPE|"*","reason":MSG}, …],
            "grid":true}               ("grid": optional; it announces the two requests below)
    {"id":N,"cmd":"compile","mlir":TEXT,"grid":{"num_replicas":R,"num_partitions":P}}
        -> as compile
    {"id":N,"cmd":"run","handle":H,"processes":[{"replica_id":r,"partition_id":p,"inputs":[…]}, …]}
        -> {"id":N,"ok":true,"processes":[{"outputs":[…]}, …]} | as run
       (one entry per process, flattened id order: r * P + p; only sent to an
       implementation that announced "grid": true — for any other, grid cases
       are `unsupported`, and its requests are exactly as before)

Tensors are a type in MLIR syntax plus the hex of their little-endian raw
bits in row-major order (spec.types.to_bits; spec.types.tensor_to_hex).

Framing cannot drift: a reply whose id is not its request's, a line that is
not a JSON object, a line longer than `MAX_REPLY_BYTES`, a malformed reply,
or the process dying or closing stdout, raises `CommandCrashed` (a
`backends.base.Crashed`) after killing the process: the case in flight is a
crash, the runner restarts its worker, and the program is compiled afresh by
a fresh process.  A handle remembers which process compiled it, so one of a
dead process is never sent to its successor.

The process's end is noticed by itself, not only as the end of its stdout:
the adapter waits for a reply (or for room in the pipe to write a request)
and for the process to end at once (a pidfd where Linux gives one, else a
check every `POLL_PERIOD`).  An implementation that exits while a process it
started still holds its stdout open is a crash right away, naming its exit
status — not a timeout after the full timeout.  What it left behind is in the
worker's process group, which the runner kills with the worker.

A fault of the exchange before is never the crash of the request after it.
Output on stdout after a complete reply — a stray line, a second reply —
and the process ending between two requests break the protocol too, but
the case they would be charged to, the next one, has done nothing.  So:

* before a request is sent, the adapter looks (without waiting) for output
  waiting on stdout and for the process having ended since its last reply;
* after it is sent, a line that carries the id of an *earlier* request of
  the same process, read before the reply, is a late second reply to that
  request: the exchange before broke the protocol, not this one.

Either way the process is killed, the violation is written to stderr (the
worker's log, which the runner keeps), and the request is tried once more
on a fresh process — asked `claims` first if the adapter asked the one
before, the program compiled again from its text (its handle is updated in
place; a handle of a process the adapter replaced this way is compiled
again, unlike one of a process whose death was reported).  Only a fault in
that second try is the request's own: a crash, whose detail says it was the
second try and what the first process did.  The second try runs within
the time the runner gives the request in flight (the adapter cannot stretch
it): an implementation slow to start may make it a timeout.

The previous case's verdict stands.  It was decided on a complete reply that
carried its request's id and was read before anything else: the stray line
cannot have changed it, and by the time the stray line is seen that verdict
has been journaled by the runner (the adapter never sees cases, and a run
that resumes must not find a verdict changed behind it).  The violation is
visible in the worker log instead.  A stray line that comes late *and*
carries no earlier request's id (a line of text written a moment after a
reply) cannot be told from a bad reply to the request in flight: it stays
that request's crash.  Whether a stray line is already waiting when the next
request is sent is a matter of timing; either way it is caught when it
carries an earlier id, and the second try makes the verdict the same.

The implementation's stderr is inherited (the runner keeps the worker's
output in a capped log).  The child gets SIGKILL when the worker process
dies (Linux PR_SET_PDEATHSIG; not in a process that has loaded jax), the
runner ends the worker's whole process group (the implementation and
whatever it forked) when it stops or kills the worker, and a conforming
implementation exits at EOF on stdin.  A process replaced after a fault of
the exchange before is killed at once; what it forked lives on until the
runner ends the worker's group.
"""
from __future__ import annotations

import json
import os
import select
import shlex
import subprocess
import sys
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..spec.types import TensorType, parse_type, tensor_from_hex, tensor_to_hex
from ..suites.records import check_hex
from .base import Backend, Crashed, Rejected, Unsupported, check_grid_inputs, exit_status
from ..suites.records import tensor_type_of

MAX_REPLY_BYTES = 64 * 2 ** 20  # one reply line, newline included: 64 MiB
POLL_PERIOD = 0.05  # seconds between checks that the process still runs, where no pidfd says so at once
_CHUNK = 1 << 18    # bytes per read of stdout


class CommandCrashed(Crashed):
    """The external implementation died or broke the protocol."""


class CommandError(RuntimeError):
    """The external implementation reported an error while running a program."""


class _EarlierFault(Exception):
    """The exchange before the request in flight broke the protocol (output
    after its reply, or the process's end after it).  Internal: `_call`
    tries the request again on a fresh process; it never leaves the adapter."""


@dataclass
class _Handle:
    """A compiled program: the implementation's own handle, which start of
    the implementation's process it belongs to, and the program's text (to
    compile it again on a process that replaces one the adapter retired
    itself: module docstring)."""

    process: int
    value: Any
    mlir: str
    grid: Any = None   # the spec.grid.Grid it was compiled for (compile_grid), else None


def _pdeathsig_preexec():
    """A preexec_fn that makes the child die with its parent (Linux
    PR_SET_PDEATHSIG), or None where that is unavailable or unwise.

    prctl is looked up here, in the parent, so that the child between fork and
    exec only calls a resolved C function (no dlopen, no import).  Skipped when
    XLA is loaded in this process (a test process): its threads make fork
    unsafe and JAX warns about it; the runner's worker for this adapter never
    loads it."""
    if not sys.platform.startswith("linux") or "jax" in sys.modules or "jaxlib" in sys.modules:
        return None
    try:
        import ctypes
        import signal

        prctl = ctypes.CDLL(None, use_errno=True).prctl
        prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
        sigkill = int(signal.SIGKILL)
    except Exception:
        return None

    def preexec():  # pragma: no cover - runs in the child
        prctl(1, sigkill, 0, 0, 0)  # PR_SET_PDEATHSIG

    return preexec


def _ended(code: int) -> str:
    """'died of signal SIGSEGV' / 'exited with exit status 3' (base.exit_status's wording)."""
    how = exit_status(code)
    if code < 0:
        return f"died of signal {how}" if how.startswith("SIG") else f"died of {how}"
    return f"exited with {how}"


def _show(data: bytes) -> str:
    """The first line of `data`, short, for a message; with the id it
    carries where it is a JSON object."""
    first = bytes(data).split(b"\n", 1)[0]
    shown = repr(first.strip()[:200])
    try:
        obj = json.loads(first.decode("utf-8"))
    except ValueError:
        return shown
    return f"{shown}, which carries id {obj.get('id')!r}" if isinstance(obj, dict) else shown


class CommandBackend(Backend):
    name = "command"

    def __init__(self, command: str | Sequence[str] | None = None, **options):
        if not command:
            raise ValueError("the command backend needs command=... (e.g. --backend command:PATH)")
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        self._proc: subprocess.Popen | None = None
        self._pidfd: int | None = None   # readable once the process has ended (Linux), or None
        self._buf = bytearray()          # read from stdout, not yet taken as a line
        self._scanned = 0                # bytes of _buf known to hold no newline
        self._starts = 0      # processes started so far: the current one is number `_starts`
        self._requests = 0    # the id of the last request sent
        self._first_id = 1    # the id of the first request sent to the current process
        self._last: tuple[int, str] | None = None  # (id, command) of the current process's last reply
        self._replaced: set[int] = set()  # starts the adapter retired itself (a fault of the exchange before)
        self._claims: dict | None = None
        self._describe: str | None = None
        self._grid = False    # did the implementation announce process grids ("grid": true in claims)?

    # ------------------------------------------------------------------ process
    def _start(self) -> subprocess.Popen:
        if self._proc is None:
            try:
                proc = subprocess.Popen(
                    self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None,
                    preexec_fn=_pdeathsig_preexec(),
                )
            except OSError as e:
                raise CommandCrashed(f"cannot start {' '.join(self.argv)!r}: {e}") from None
            # Our ends of the pipes never block: waiting is `_wait`'s, which
            # also watches the process (the child's ends are other open files).
            os.set_blocking(proc.stdin.fileno(), False)
            os.set_blocking(proc.stdout.fileno(), False)
            try:
                self._pidfd = os.pidfd_open(proc.pid)
            except (AttributeError, OSError):
                self._pidfd = None
            self._proc = proc
            self._starts += 1
            self._first_id = self._requests + 1
            self._last = None
            self._buf, self._scanned = bytearray(), 0
        return self._proc

    def _wait(self, proc: subprocess.Popen, fd: int, write: bool = False) -> bool:
        """Wait until `fd` (stdout, or stdin with `write`) is ready: True; or
        until the process has ended and `fd` is not ready: False — even where
        a process it started keeps the pipe open."""
        poller = select.poll()
        poller.register(fd, select.POLLOUT if write else select.POLLIN)
        if self._pidfd is not None:
            poller.register(self._pidfd, select.POLLIN)
        while True:
            ready = dict(poller.poll(None if self._pidfd is not None else POLL_PERIOD * 1000))
            if ready.get(fd):
                return True
            if proc.poll() is not None:
                return False

    def _send(self, proc: subprocess.Popen, data: bytes, cmd: str) -> None:
        fd, view = proc.stdin.fileno(), memoryview(data)
        while view:
            if not self._wait(proc, fd, write=True):
                raise CommandCrashed(self._death(f"while sending {cmd!r}"))
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:
                continue
            except (OSError, ValueError):
                raise CommandCrashed(self._death(f"while sending {cmd!r}")) from None

    def _line(self, proc: subprocess.Popen, cmd: str) -> bytes | None:
        """The next line on stdout, newline included; None if stdout ends,
        or the process ends, before a whole line."""
        fd = proc.stdout.fileno()
        while True:
            i = self._buf.find(b"\n", self._scanned)
            if i >= 0:
                if i + 1 > MAX_REPLY_BYTES:
                    break
                line = bytes(self._buf[:i + 1])
                del self._buf[:i + 1]
                self._scanned = 0
                return line
            self._scanned = len(self._buf)
            if len(self._buf) >= MAX_REPLY_BYTES:
                break
            if not self._wait(proc, fd):
                return None
            try:
                chunk = os.read(fd, _CHUNK)
            except BlockingIOError:
                continue
            except OSError:
                return None
            if not chunk:
                return None
            self._buf += chunk
        self._violation(f"reply to {cmd!r} is longer than {MAX_REPLY_BYTES // 2 ** 20} MiB")

    def _since_last_reply(self, proc: subprocess.Popen) -> str | None:
        """What the process did since its last reply that the protocol
        forbids — output on stdout, its end — looked at without waiting;
        None if nothing (or if it has not replied to anything yet)."""
        if self._last is None:
            return None
        eof = False
        while not eof and len(self._buf) < 4096:  # enough to show it
            try:
                chunk = os.read(proc.stdout.fileno(), _CHUNK)
            except BlockingIOError:
                break
            except OSError:
                chunk = b""
            eof = not chunk
            self._buf += chunk
        after = f"after the reply to request {self._last[0]} ({self._last[1]!r})"
        if self._buf:
            return f"output on stdout {after}: {_show(self._buf)}"
        code = proc.poll()
        if code is not None:
            return f"the implementation {_ended(code)} {after}"
        if eof:
            return f"the implementation closed its stdout {after}"
        return None

    def _request(self, msg: dict, second: str | None = None) -> dict:
        """Send one request and read its reply: a JSON object carrying the
        request's id and "ok"; anything else kills the process (module
        docstring).  A fault of the exchange before raises `_EarlierFault`;
        on a second try (`second`: what the first process did) it is this
        request's own crash."""
        proc = self._start()
        earlier = self._since_last_reply(proc)
        if earlier is not None:
            if second is None:
                raise _EarlierFault(earlier)
            self._violation(earlier)
        self._requests += 1
        rid, cmd = self._requests, msg["cmd"]
        self._send(proc, json.dumps({"id": rid, **msg}, separators=(",", ":")).encode() + b"\n", cmd)
        line = self._line(proc, cmd)
        if line is None:  # EOF or the end of the process, after a partial line or none
            what = f"only part of a reply line to {cmd!r}" if self._buf else f"no reply to {cmd!r}"
            raise CommandCrashed(self._death(what))
        try:
            reply = json.loads(line.decode("utf-8"))
        except ValueError:
            self._violation(f"implementation wrote a line that is not JSON in reply to {cmd!r}: "
                            f"{line.strip()[:200]!r}")
        got = reply.get("id") if isinstance(reply, dict) else None
        if second is None and type(got) is int and self._first_id <= got < rid:
            raise _EarlierFault(f"a second reply to request {got}, read before the reply to request {rid} "
                                f"({cmd!r}): {_show(line)}")
        if not isinstance(reply, dict) or "ok" not in reply:
            self._violation(f"reply to {cmd!r} is not an object with 'ok': {line.strip()[:200]!r}")
        if type(got) is not int or got != rid:
            self._violation(f"reply to {cmd!r} (request id {rid}) carries id {got!r}: a missing "
                            "id, or a line that answers another request (an extra line on stdout?)")
        self._last = (rid, cmd)
        return reply

    def _call(self, msg: dict, handle: _Handle | None = None) -> dict:
        """`_request`, for a program's `handle` where given (its value goes
        into msg["handle"]), tried a second time on a fresh process after a
        fault of the exchange before (module docstring)."""
        try:
            return self._request(self._for(msg, handle, None))
        except _EarlierFault as e:
            first = str(e)
        print(f"shlo-conform: command backend: protocol violation by {' '.join(self.argv)!r}: {first}. "
              f"The reply before it stands; the implementation is restarted and the request in flight "
              f"({msg['cmd']!r}) is tried again on a fresh process.", file=sys.stderr, flush=True)
        self._replaced.add(self._starts)
        self._kill()
        try:
            self._start()
            if self._claims is not None and msg["cmd"] != "claims":
                self._request({"cmd": "claims"}, first)
            return self._request(self._for(msg, handle, first), first)
        except CommandCrashed as e:
            raise CommandCrashed(f"{e} [on a second try, on a fresh process: the one before had broken "
                                 f"the protocol: {first}]") from None

    def _for(self, msg: dict, handle: _Handle | None, second: str | None) -> dict:
        """`msg` with the handle of `handle` on the process now running,
        compiling its program again if that process replaced the one that
        compiled it (`_replaced`); a handle of a process whose death was
        reported is refused."""
        if handle is None:
            return msg
        if handle.process != self._starts or self._proc is None:
            if handle.process not in self._replaced:
                raise CommandCrashed("the program was compiled by an implementation process that has since "
                                     "died or been closed: compile it again")
            again = {"cmd": "compile", "mlir": handle.mlir}
            if handle.grid is not None:
                again["grid"] = handle.grid.to_json()
            reply = self._request(again, second)
            handle.value, handle.process = self._compiled(reply), self._starts
        return {**msg, "handle": handle.value}

    def _violation(self, what: str):
        """A broken protocol: nothing more can be trusted from this process."""
        self._kill()
        raise CommandCrashed(f"protocol violation: {what}")

    def _death(self, what: str) -> str:
        proc, code, held = self._proc, None, False
        if proc is not None:
            try:
                code = proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self._kill()
                return f"implementation stopped answering ({what}); killed"
            poller = select.poll()  # is stdout still open in a process it started?
            poller.register(proc.stdout.fileno(), select.POLLIN)
            held = not any(ev & select.POLLHUP for _, ev in poller.poll(0))
        self._forget()
        if code is None:
            return f"implementation stopped answering ({what})"
        if held:
            what += "; a process it started still holds its stdout open"
        return f"implementation {_ended(code)} ({what})"

    def _forget(self) -> None:
        """Drop the current process (dead or killed): its pipes, its pidfd, what was read."""
        proc, self._proc = self._proc, None
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        if proc is not None:
            for pipe in (proc.stdin, proc.stdout):
                try:
                    pipe.close()
                except Exception:
                    pass
        self._buf, self._scanned = bytearray(), 0

    def _kill(self) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        self._forget()

    def close(self) -> None:
        """Close the implementation's stdin (its cue to exit), then make sure it is gone."""
        proc = self._proc
        if proc is None:
            return
        try:
            proc.stdin.close()
            proc.wait(timeout=5)
        except Exception:
            proc.kill()
            proc.wait()
        self._forget()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    # ------------------------------------------------------------------ contract
    def _load_claims(self) -> None:
        if self._claims is not None:
            return
        reply = self._call({"cmd": "claims"})
        claims = {}
        if reply.get("ok"):
            entries = reply.get("unsupported") or []
            if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
                self._violation("'unsupported' in the claims reply is not a list of objects")
            for entry in entries:
                key = (entry.get("op", "*"), entry.get("dtype", "*"))
                claims[key] = str(entry.get("reason") or "declared unsupported by the implementation")
            describe = reply.get("describe")
            self._describe = describe if isinstance(describe, str) else None
            self._grid = reply.get("grid") is True
        self._claims = claims

    def claims(self, op: str, dtype: str) -> str | None:
        self._load_claims()
        for key in ((op, dtype), (op, "*"), ("*", dtype), ("*", "*")):
            if key in self._claims:
                return self._claims[key]
        return None

    def describe(self) -> str:
        try:
            self._load_claims()
        except CommandCrashed:
            pass
        base = f"command: {' '.join(self.argv)}"
        return f"{self._describe} ({base})" if self._describe else base

    def _compiled(self, reply: dict) -> Any:
        """The handle value of a compile reply; Unsupported or Rejected for a refusal."""
        if reply.get("ok"):
            if "handle" not in reply:
                self._violation("compile reply has ok:true but no handle")
            return reply["handle"]
        if "unsupported" in reply:
            raise Unsupported(str(reply["unsupported"]))
        raise Rejected(str(reply.get("rejected") or reply.get("error") or "rejected"))

    def compile(self, mlir: str) -> Any:
        value = self._compiled(self._call({"cmd": "compile", "mlir": mlir}))
        return _Handle(self._starts, value, mlir)

    def run(self, executable: Any, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        if not isinstance(executable, _Handle):
            raise CommandCrashed("the program was compiled by an implementation process that has since "
                                 "died or been closed: compile it again")
        tensors = []
        for a in inputs:
            t = tensor_type_of(a)
            tensors.append({"type": t.mlir, "hex": tensor_to_hex(np.asarray(a), t)})
        reply = self._call({"cmd": "run", "handle": None, "inputs": tensors}, executable)
        if not reply.get("ok"):
            if "unsupported" in reply:
                raise Unsupported(str(reply["unsupported"]))
            raise CommandError(str(reply.get("error") or "run failed"))
        outputs = reply.get("outputs")
        if not isinstance(outputs, list):
            self._violation("run reply has ok:true but no list of 'outputs'")
        return [self._output(i, o) for i, o in enumerate(outputs)]

    # ------------------------------------------------------------------ grid
    # The adapter carries grids; whether the implementation behind it runs
    # them is its claims reply's "grid" (compile_grid says so per program).
    grid_capable = True
    grid_unsupported = ('the implementation does not announce process grids (its claims reply carries no '
                        '"grid": true; docs/command-protocol.md, "A process grid")')

    def compile_grid(self, mlir: str, grid) -> Any:
        self._load_claims()
        if not self._grid:
            raise Unsupported(f"command runs no process grid: {self.grid_unsupported}")
        value = self._compiled(self._call({"cmd": "compile", "mlir": mlir, "grid": grid.to_json()}))
        return _Handle(self._starts, value, mlir, grid)

    def run_grid(self, executable: Any, inputs_per_process) -> list[list[np.ndarray]]:
        if not isinstance(executable, _Handle):
            raise CommandCrashed("the program was compiled by an implementation process that has since "
                                 "died or been closed: compile it again")
        grid = executable.grid
        if grid is None:
            raise ValueError("run_grid needs a program compiled by compile_grid")
        check_grid_inputs(grid, inputs_per_process)
        processes = []
        for (r, p), inputs in zip(grid.processes(), inputs_per_process):
            tensors = []
            for a in inputs:
                t = tensor_type_of(a)
                tensors.append({"type": t.mlir, "hex": tensor_to_hex(np.asarray(a), t)})
            processes.append({"replica_id": r, "partition_id": p, "inputs": tensors})
        reply = self._call({"cmd": "run", "handle": None, "processes": processes}, executable)
        if not reply.get("ok"):
            if "unsupported" in reply:
                raise Unsupported(str(reply["unsupported"]))
            raise CommandError(str(reply.get("error") or "run failed"))
        per = reply.get("processes")
        if not isinstance(per, list) or len(per) != grid.size:
            self._violation(f"run reply on the grid {grid} has ok:true but no list of {grid.size} 'processes'")
        outs = []
        for i, entry in enumerate(per):
            outputs = entry.get("outputs") if isinstance(entry, dict) else None
            if not isinstance(outputs, list):
                self._violation(f"process {i} of the run reply has no list of 'outputs'")
            outs.append([self._output(k, o, f"process {i}'s output") for k, o in enumerate(outputs)])
        return outs

    def _output(self, i: int, o, what: str = "output") -> np.ndarray:
        """One output of a run reply, as the array its stated type and hex give
        (the runner then checks that type against the program's)."""
        try:
            t = parse_type(o["type"])
            if not isinstance(t, TensorType):
                raise ValueError(f"not a tensor type: {o['type']}")
            check_hex(o["hex"], t, f"{what} {i}")
            return tensor_from_hex(o["hex"], t)
        except (ValueError, TypeError, KeyError) as e:
            self._violation(f"{what} {i} of the implementation is malformed: {type(e).__name__}: {e}")
