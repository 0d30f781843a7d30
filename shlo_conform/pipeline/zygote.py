"""Workers forked from a template process that has already imported the
backend's libraries.

Why: a worker is restarted after every crash and every timeout (the
isolation that keeps one case's crash out of every other case's verdict),
and the reference interpreter crashes on about a hundred cases of
suites/core, XLA on about forty.  Started as a fresh `python -m
shlo_conform.pipeline.worker`, each restart paid Python, numpy and the backend's
imports again (jax: about a second of CPU, more under load): the harness's
largest item on both.  The template ("zygote") pays them once; a fork of it
is a worker in a few milliseconds.

What a forked worker shares with a fresh one: nothing but imported code.
The zygote imports the adapter's module and the modules it names in
`Backend.preload` — libraries that start no threads and hold no handles
when imported — and never constructs the adapter: clients, sessions and
compiled programs are made in each worker after the fork, as before, so a
worker's history (XLA seeds `rng` per compiled module from process state)
starts from the same point whether it is the first or the fortieth.

Protocol (one control socket, the runner's `Zygote` holds a lock around
each exchange):
    b"F" + fds (worker socket, log pipe)  -> pid (8 bytes): fork a worker
    b"W" + pid, timeout (ms)              -> exit code, or none yet
The child leads a session of its own (the runner kills its process group),
writes stdout and stderr into the log pipe, and dies with the zygote, which
dies with the runner (PR_SET_PDEATHSIG both).  The zygote reaps its
children and keeps their exit codes for the runner's `wait`, in Popen's
convention (-N for signal N), so a crash still reads "worker died: SIGSEGV".
"""
from __future__ import annotations

import importlib
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

_NONE = -(1 << 62)   # "not exited yet" on the wire


class Zygote:
    """The runner's side: start the template once, fork workers from it."""

    def __init__(self, backend: str, log_path: str):
        parent, child = socket.socketpair()
        self._log = open(log_path, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "shlo_conform.pipeline.zygote", str(child.fileno()), backend],
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            pass_fds=(child.fileno(),), close_fds=True, start_new_session=True)
        child.close()
        self._sock = parent
        self._lock = threading.Lock()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def fork(self, conn_fd: int, log_fd: int) -> "Forked":
        """A worker serving on `conn_fd`, its output into `log_fd` (both
        are passed to the zygote and may be closed by the caller after)."""
        with self._lock:
            socket.send_fds(self._sock, [b"F"], [conn_fd, log_fd])
            pid = struct.unpack("q", _recv_exact(self._sock, 8))[0]
        return Forked(self, pid)

    def wait(self, pid: int, timeout: float) -> int | None:
        with self._lock:
            self._sock.sendall(b"W" + struct.pack("qq", pid, int(timeout * 1000)))
            code = struct.unpack("q", _recv_exact(self._sock, 8))[0]
        return None if code == _NONE else code

    def close(self) -> None:
        try:
            self._sock.close()
            self.proc.wait(5)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
        self._log.close()


class Forked:
    """A forked worker seen as the runner's `Worker` sees a Popen: pid,
    poll, wait (raising subprocess.TimeoutExpired), stdout (set by the caller)."""

    def __init__(self, zygote: Zygote, pid: int):
        self.zygote, self.pid, self.returncode, self.stdout = zygote, pid, None, None

    def poll(self) -> int | None:
        return self.wait(0, raise_timeout=False)

    def wait(self, timeout: float | None = None, raise_timeout: bool = True) -> int | None:
        if self.returncode is None:
            try:
                self.returncode = self.zygote.wait(self.pid, 3600.0 if timeout is None else timeout)
            except OSError:   # the zygote is gone, and its children with it
                self.returncode = -signal.SIGKILL
        if self.returncode is None and raise_timeout:
            raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout)
        return self.returncode


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise OSError("the worker template (zygote) is gone")
        data += chunk
    return data


# ---------------------------------------------------------------------------
# The zygote process
# ---------------------------------------------------------------------------

def _preload(backend: str) -> None:
    """Import the adapter's module and its `preload` list (no construction)."""
    from ..backends import base

    if base.parse_backend_name(backend)[0] != "builtin":
        return   # an entry point or a user's class: only our own modules are preloaded
    cls, _ = base.backend_class(backend)
    for name in getattr(cls, "preload", ()):
        importlib.import_module(name)


def _child(conn_fd: int, log_fd: int, ctrl: socket.socket) -> None:
    ctrl.close()
    os.setsid()
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.close(log_fd)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    from . import worker

    code = 0
    try:
        worker.main(conn_fd)
    except BaseException:   # serve answers every adapter error itself; this is a bug of ours
        import traceback
        traceback.print_exc()
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def main(ctrl_fd: int, backend: str) -> None:
    from .isolation import die_with_parent

    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    ctrl = socket.socket(fileno=ctrl_fd)
    import numpy  # noqa: F401 - what every worker imports (worker.serve), paid here once
    from ..suites import records  # noqa: F401
    try:
        _preload(backend)
    except Exception as e:   # the worker will say what is wrong when it loads the adapter itself
        print(f"zygote: preloading {backend!r} failed: {e}", flush=True)
    exited: dict[int, int] = {}

    def reap():
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            exited[pid] = os.waitstatus_to_exitcode(status)

    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(ctrl, 17, 2)
        except OSError:
            return
        if not msg:
            return
        if msg[:1] == b"F":
            conn_fd, log_fd = fds
            pid = os.fork()
            if pid == 0:
                _child(conn_fd, log_fd, ctrl)
            os.close(conn_fd)
            os.close(log_fd)
            ctrl.sendall(struct.pack("q", pid))
        elif msg[:1] == b"W":
            rest = msg[1:]
            while len(rest) < 16:
                rest += _recv_exact(ctrl, 16 - len(rest))
            pid, ms = struct.unpack("qq", rest)
            deadline = time.monotonic() + ms / 1000
            while True:
                reap()
                if pid in exited or time.monotonic() >= deadline:
                    break
                time.sleep(0.002)
            ctrl.sendall(struct.pack("q", exited.pop(pid, _NONE)))


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
