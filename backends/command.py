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
        -> {"id":N,"ok":true,"describe":TEXT,"unsupported":[{"op":OP|"*","dtype":DTYPE|"*","reason":MSG}, …]}

Tensors are a type in MLIR syntax plus the hex of their little-endian raw
bits in row-major order (spec.types.to_bits; spec.types.tensor_to_hex).

Framing cannot drift: a reply whose id is not its request's (a stray line,
a reply to an earlier request), a line that is not a JSON object, a line
longer than `MAX_REPLY_BYTES`, a malformed reply, or the process dying or
closing stdout, raises `CommandCrashed` (a `backends.base.Crashed`) after
killing the process: the case in flight is a crash, the runner restarts its
worker, and the program is compiled afresh by a fresh process.  A handle
remembers which process compiled it, so one of a dead process is never sent
to its successor.  The implementation's stderr is inherited (the runner
keeps the worker's output in a capped log).  The child gets SIGKILL when the
worker process dies (Linux PR_SET_PDEATHSIG; not in a process that has
loaded jax), the runner ends the worker's whole process group (the
implementation and whatever it forked) when it stops or kills the worker,
and a conforming implementation exits at EOF on stdin.
"""
from __future__ import annotations

import json
import shlex
import subprocess
import sys
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..spec.types import TensorType, parse_type, tensor_from_hex, tensor_to_hex
from ..suites.records import check_hex
from .base import Backend, Crashed, Rejected, Unsupported
from ._mlir import tensor_type_of

MAX_REPLY_BYTES = 64 * 2 ** 20  # one reply line, newline included: 64 MiB


class CommandCrashed(Crashed):
    """The external implementation died or broke the protocol."""


class CommandError(RuntimeError):
    """The external implementation reported an error while running a program."""


@dataclass(frozen=True)
class _Handle:
    """A compiled program: the implementation's own handle, and which start
    of the implementation's process it belongs to."""

    process: int
    value: Any


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


class CommandBackend(Backend):
    name = "command"

    def __init__(self, command: str | Sequence[str] | None = None, **options):
        if not command:
            raise ValueError("the command backend needs command=... (e.g. --backend command:PATH)")
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        self._proc: subprocess.Popen | None = None
        self._starts = 0      # processes started so far: the current one is number `_starts`
        self._requests = 0    # the id of the last request sent
        self._claims: dict | None = None
        self._describe: str | None = None

    # ------------------------------------------------------------------ process
    def _start(self) -> subprocess.Popen:
        if self._proc is None:
            try:
                self._proc = subprocess.Popen(
                    self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None,
                    preexec_fn=_pdeathsig_preexec(),
                )
            except OSError as e:
                raise CommandCrashed(f"cannot start {' '.join(self.argv)!r}: {e}") from None
            self._starts += 1
        return self._proc

    def _request(self, msg: dict) -> dict:
        """Send one request and read its reply: a JSON object carrying the
        request's id and "ok"; anything else kills the process (module
        docstring)."""
        proc = self._start()
        self._requests += 1
        rid, cmd = self._requests, msg["cmd"]
        try:
            proc.stdin.write(json.dumps({"id": rid, **msg}, separators=(",", ":")).encode() + b"\n")
            proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise CommandCrashed(self._death(f"while sending {cmd!r}")) from None
        line = proc.stdout.readline(MAX_REPLY_BYTES + 1)
        if len(line) > MAX_REPLY_BYTES:
            self._violation(f"reply to {cmd!r} is longer than {MAX_REPLY_BYTES // 2 ** 20} MiB")
        if not line.endswith(b"\n"):  # EOF, after a partial line or none
            what = f"no reply to {cmd!r}" if not line else f"only part of a reply line to {cmd!r}"
            raise CommandCrashed(self._death(what))
        try:
            reply = json.loads(line.decode("utf-8"))
        except ValueError:
            self._violation(f"implementation wrote a line that is not JSON in reply to {cmd!r}: "
                            f"{line.strip()[:200]!r}")
        if not isinstance(reply, dict) or "ok" not in reply:
            self._violation(f"reply to {cmd!r} is not an object with 'ok': {line.strip()[:200]!r}")
        if reply.get("id") != rid:
            self._violation(f"reply to {cmd!r} (request id {rid}) carries id {reply.get('id')!r}: a missing "
                            "id, or a line that answers another request (an extra line on stdout?)")
        return reply

    def _violation(self, what: str):
        """A broken protocol: nothing more can be trusted from this process."""
        self._kill()
        raise CommandCrashed(f"protocol violation: {what}")

    def _death(self, what: str) -> str:
        proc = self._proc
        code = None
        if proc is not None:
            try:
                code = proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self._kill()
                code = proc.returncode
        self._proc = None
        if code is None:
            return f"implementation stopped answering ({what})"
        if code < 0:
            import signal

            try:
                sig = signal.Signals(-code).name
            except ValueError:
                sig = str(-code)
            return f"implementation died of signal {sig} ({what})"
        return f"implementation exited with status {code} ({what})"

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()

    def close(self) -> None:
        """Close the implementation's stdin (its cue to exit), then make sure it is gone."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            proc.stdin.close()
            proc.wait(timeout=5)
        except Exception:
            proc.kill()
            proc.wait()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    # ------------------------------------------------------------------ contract
    def _load_claims(self) -> None:
        if self._claims is not None:
            return
        reply = self._request({"cmd": "claims"})
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

    def compile(self, mlir: str) -> Any:
        reply = self._request({"cmd": "compile", "mlir": mlir})
        if reply.get("ok"):
            if "handle" not in reply:
                self._violation("compile reply has ok:true but no handle")
            return _Handle(self._starts, reply["handle"])
        if "unsupported" in reply:
            raise Unsupported(str(reply["unsupported"]))
        raise Rejected(str(reply.get("rejected") or reply.get("error") or "rejected"))

    def run(self, executable: Any, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        if not isinstance(executable, _Handle) or self._proc is None or executable.process != self._starts:
            raise CommandCrashed("the program was compiled by an implementation process that has since "
                                 "died or been closed: compile it again")
        tensors = []
        for a in inputs:
            t = tensor_type_of(a)
            tensors.append({"type": t.mlir, "hex": tensor_to_hex(np.asarray(a), t)})
        reply = self._request({"cmd": "run", "handle": executable.value, "inputs": tensors})
        if not reply.get("ok"):
            if "unsupported" in reply:
                raise Unsupported(str(reply["unsupported"]))
            raise CommandError(str(reply.get("error") or "run failed"))
        outputs = reply.get("outputs")
        if not isinstance(outputs, list):
            self._violation("run reply has ok:true but no list of 'outputs'")
        return [self._output(i, o) for i, o in enumerate(outputs)]

    def _output(self, i: int, o) -> np.ndarray:
        """One output of a run reply, as the array its stated type and hex give
        (the runner then checks that type against the program's)."""
        try:
            t = parse_type(o["type"])
            if not isinstance(t, TensorType):
                raise ValueError(f"not a tensor type: {o['type']}")
            check_hex(o["hex"], t, f"output {i}")
            return tensor_from_hex(o["hex"], t)
        except (ValueError, TypeError, KeyError) as e:
            self._violation(f"output {i} of the implementation is malformed: {type(e).__name__}: {e}")
