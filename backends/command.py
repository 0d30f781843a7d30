"""Any external implementation, through a small JSON-lines protocol.

The implementation is an executable (no Python needed on its side).  The
adapter starts it once and talks to it over its stdin/stdout, one JSON object
per line each way, one reply per request, in order.  The full protocol is in
docs/command-protocol.md; in short:

    {"cmd":"compile","mlir":TEXT}
        -> {"ok":true,"handle":H} | {"ok":false,"rejected":MSG} | {"ok":false,"unsupported":MSG}
    {"cmd":"run","handle":H,"inputs":[{"type":"tensor<2x3xf32>","hex":"…"}, …]}
        -> {"ok":true,"outputs":[{"type":…,"hex":…}, …]} | {"ok":false,"error":MSG} | {"ok":false,"unsupported":MSG}
    {"cmd":"claims"}            (optional for the implementation)
        -> {"ok":true,"describe":TEXT,"unsupported":[{"op":OP|"*","dtype":DTYPE|"*","reason":MSG}, …]}

Tensors are a type in MLIR syntax plus the hex of their little-endian raw
bits in row-major order (spec.types.to_bits; spec.types.tensor_to_hex).

The implementation's stderr is inherited (the runner sends the worker's
stderr to its log).  If the process dies, closes stdout, or writes a line that
is not a JSON object, the adapter raises CommandCrashed: the runner records a
crash and restarts its worker, which starts the command afresh.  The child
gets SIGKILL when the worker process dies (Linux PR_SET_PDEATHSIG; not in a
process that has loaded jax), and in any case sees EOF on stdin when the
adapter is closed or its process dies: a conforming implementation exits then.
"""
from __future__ import annotations

import json
import shlex
import subprocess
import sys
from typing import Any, Sequence

import numpy as np

from ..spec.types import TensorType, parse_type, tensor_from_hex, tensor_to_hex
from .base import Backend, Rejected, Unsupported
from ._mlir import tensor_type_of


class CommandCrashed(RuntimeError):
    """The external implementation died or broke the protocol."""


class CommandError(RuntimeError):
    """The external implementation reported an error while running a program."""


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
        self._claims: dict | None = None
        self._describe: str | None = None

    # ------------------------------------------------------------------ process
    def _start(self) -> subprocess.Popen:
        if self._proc is None:
            try:
                self._proc = subprocess.Popen(
                    self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None,
                    text=True, encoding="utf-8", bufsize=1,
                    preexec_fn=_pdeathsig_preexec(),
                )
            except OSError as e:
                raise CommandCrashed(f"cannot start {' '.join(self.argv)!r}: {e}") from None
        return self._proc

    def _request(self, msg: dict) -> dict:
        proc = self._start()
        try:
            proc.stdin.write(json.dumps(msg, separators=(",", ":")) + "\n")
            proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise CommandCrashed(self._death(f"while sending {msg['cmd']!r}")) from None
        line = proc.stdout.readline()
        if not line:
            raise CommandCrashed(self._death(f"no reply to {msg['cmd']!r}"))
        try:
            reply = json.loads(line)
        except json.JSONDecodeError:
            self._kill()
            raise CommandCrashed(f"implementation wrote a line that is not JSON in reply to {msg['cmd']!r}: "
                                 f"{line.strip()[:200]!r}") from None
        if not isinstance(reply, dict) or "ok" not in reply:
            self._kill()
            raise CommandCrashed(f"reply to {msg['cmd']!r} is not an object with 'ok': {line.strip()[:200]!r}")
        return reply

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
        self._claims = {}
        if reply.get("ok"):
            self._describe = reply.get("describe")
            for entry in reply.get("unsupported") or []:
                key = (entry.get("op", "*"), entry.get("dtype", "*"))
                self._claims[key] = entry.get("reason") or "declared unsupported by the implementation"

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
                raise CommandCrashed("compile reply has ok:true but no handle")
            return reply["handle"]
        if "unsupported" in reply:
            raise Unsupported(str(reply["unsupported"]))
        raise Rejected(str(reply.get("rejected") or reply.get("error") or "rejected"))

    def run(self, executable: Any, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        tensors = []
        for a in inputs:
            t = tensor_type_of(a)
            tensors.append({"type": t.mlir, "hex": tensor_to_hex(np.asarray(a), t)})
        reply = self._request({"cmd": "run", "handle": executable, "inputs": tensors})
        if not reply.get("ok"):
            if "unsupported" in reply:
                raise Unsupported(str(reply["unsupported"]))
            raise CommandError(str(reply.get("error") or "run failed"))
        outs = []
        for i, o in enumerate(reply.get("outputs") or []):
            try:
                t = parse_type(o["type"])
                if not isinstance(t, TensorType):
                    raise ValueError(f"not a tensor type: {o['type']}")
                outs.append(tensor_from_hex(o["hex"], t))
            except Exception as e:
                raise CommandCrashed(f"output {i} of the implementation is malformed: {e}") from None
        return outs
