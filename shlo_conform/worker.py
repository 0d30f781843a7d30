"""The backend worker: one process that holds one backend adapter.

Why a process: implementations under test crash (the StableHLO reference
interpreter dies of SIGFPE on an integer division by zero), hang, or print
noise.  The runner keeps the adapter in a child process it can time out, kill
and restart, and talks to it with small pickled messages over a socket
pair (`python -m shlo_conform.worker FD`: a fresh interpreter, no fork of a
parent that may hold threads or an XLA client, and no re-import of the
caller's __main__ as multiprocessing's spawn would do).

Messages, parent -> worker, each answered by exactly one reply:
    ("init", backend_spec)            -> ("ok", describe) | ("error", text)
    ("claims", [(op, dtype), ...])    -> ("ok", [reason or None, ...])
    ("compile", mlir)                 -> ("ok", None) | ("rejected" | "unsupported" | "error", text)
    ("run", [(type, hex), ...])       -> ("ok", [ndarray, ...]) | ("rejected" | "unsupported" | "error", text)
    ("stop", None)                    -> the worker exits

The worker holds one compiled program at a time: the runner sends all the
input sets of a program before it compiles the next one.  The worker's own
stdout and stderr go to a log file the runner names, so that backend chatter
never mixes with the table, and the last lines can explain a crash.
"""
from __future__ import annotations

import signal
import sys
import traceback


def _error_text(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}".strip()


def serve(conn) -> None:
    """The worker's main loop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the runner's to handle
    import numpy as np

    from .backends.base import Rejected, Unsupported, load_backend
    from .suites.records import TensorValue

    backend = None
    executable = None
    while True:
        try:
            msg, arg = conn.recv()
        except (EOFError, OSError):
            return
        if msg == "stop":
            return
        try:
            if msg == "init":
                backend = load_backend(arg)
                reply = ("ok", backend.describe())
            elif msg == "claims":
                reply = ("ok", [backend.claims(op, dtype) for op, dtype in arg])
            elif msg == "compile":
                executable = None
                executable = backend.compile(arg)
                reply = ("ok", None)
            elif msg == "run":
                inputs = [TensorValue(t, h).array() for t, h in arg]
                outs = backend.run(executable, inputs)
                reply = ("ok", [np.asarray(o) for o in outs])
            else:
                reply = ("error", f"unknown worker message {msg!r}")
        except Rejected as e:
            reply = ("rejected", str(e) or "rejected")
        except Unsupported as e:
            reply = ("unsupported", str(e) or "unsupported")
        except Exception as e:  # an adapter error: reported, never fatal to the worker
            tb = traceback.format_exc(limit=-3)
            print(tb, file=sys.stderr)
            reply = ("error", _error_text(e))
        try:
            conn.send(reply)
        except Exception as e:  # e.g. outputs that do not pickle
            conn.send(("error", f"reply could not be sent: {_error_text(e)}"))


if __name__ == "__main__":
    from multiprocessing.connection import Connection

    serve(Connection(int(sys.argv[1])))
