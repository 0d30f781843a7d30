"""The backend worker: one process that holds one backend adapter.

Why a process: implementations under test crash (the StableHLO reference
interpreter dies of SIGFPE on an integer division by zero), hang, or print
noise.  The runner keeps the adapter in a child process it can time out, kill
and restart, and talks to it with small pickled messages over a socket
pair (`python -m shlo_conform.pipeline.worker FD`: a fresh interpreter, no fork of a
parent that may hold threads or an XLA client, and no re-import of the
caller's __main__ as multiprocessing's spawn would do).

Messages, parent -> worker, each answered by exactly one reply:
    ("init", backend_spec)            -> ("ok", describe) | ("error", text)
    ("claims", [(op, dtype), ...])    -> ("ok", [reason or None, ...])
    ("compile", mlir)                 -> ("ok", None) | ("rejected" | "unsupported" | "error" | "crash", text)
    ("run", [(type, hex), ...])       -> ("ok", [ndarray, ...]) | ("rejected" | "unsupported" | "error" | "crash", text)
    ("host", None)                    -> ("ok", None) | ("unsupported", why): can the adapter run host cases?
    ("run_host", ([(type, hex), ...], host JSON))
                                      -> ("ok", ([ndarray, ...], [(stream, ndarray), ...])) | as "run":
                                         a program that talks to the host (suites.records.HostData's
                                         queues in; what outfeed/send wrote back: Backend.run_with_host)
    ("compile_grid", (mlir, [num_replicas, num_partitions]))
                                      -> as "compile": the program for every process of that grid
                                         (`Backend.compile_grid`; an adapter without it: "unsupported")
    ("run_grid", [[(type, hex), ...] per process])
                                      -> ("ok", [[ndarray, ...] per process]) | as "run": every process
                                         of the grid, flattened id order (`Backend.run_grid`)
    ("batches", None)                 -> ("ok", bool): does the adapter compile merged modules
                                         (`Backend.batches`, shlo_conform/pipeline/batching.py)?
    ("stop", None)                    -> the worker exits

Every reply to "compile", "run", "run_host", "compile_grid" and "run_grid" carries a third element: the
seconds spent inside the adapter's method (the runner's measure of its own
share of the wall: what is not spent there is the harness's).

"crash" answers an adapter's `backends.base.Crashed` (the implementation
behind it died or broke its protocol): the worker exits right after that
reply, as if it had died itself, so no state of the dead implementation
(a compiled program, a handle) outlives it.

The worker holds one compiled program at a time: the runner sends all the
input sets of a program before it compiles the next one.  The worker's own
stdout and stderr go through a pipe to the runner, which keeps a capped log
(`isolation.CappedLog`), so that backend chatter never mixes with the table nor
fills a disk, and the last lines can explain a crash.  The worker leads a
process group of its own: the runner ends it and all it started at once.
"""
from __future__ import annotations

import signal
import sys
import time
import traceback


def serve(conn) -> None:
    """The worker's main loop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the runner's to handle
    import numpy as np

    from ..backends.base import Backend, HostQueues, Unsupported, load_backend, status_of
    from ..suites.records import TensorValue

    backend = None
    executable = None
    while True:
        try:
            msg, arg = conn.recv()
        except (EOFError, OSError):
            return
        t0, spent = time.perf_counter(), None
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
                t0 = time.perf_counter()
                outs = backend.run(executable, inputs)
                spent = time.perf_counter() - t0
                reply = ("ok", [np.asarray(o) for o in outs])
            elif msg == "compile_grid":
                executable = None
                mlir, (replicas, partitions) = arg
                from ..spec.grid import Grid
                if not hasattr(backend, "compile_grid"):   # (Backend.compile_grid's default says why not)
                    raise Unsupported(f"{backend.name} runs no process grid")
                executable = backend.compile_grid(mlir, Grid(replicas, partitions))
                reply = ("ok", None)
            elif msg == "run_grid":
                inputs = [[TensorValue(t, h).array() for t, h in per] for per in arg]
                t0 = time.perf_counter()
                outs = backend.run_grid(executable, inputs)
                spent = time.perf_counter() - t0
                reply = ("ok", [[np.asarray(o) for o in per] for per in outs])
            elif msg == "batches":
                reply = ("ok", bool(getattr(backend, "batches", False)))
            elif msg == "host":
                declared = type(backend).run_with_host is Backend.run_with_host
                reply = ("unsupported", f"{backend.name}: {backend.host_unsupported}") if declared else ("ok", None)
            elif msg == "run_host":
                from ..suites.records import HostData
                args, host = arg
                infeed, channels = HostData.check(host).queues()
                t0 = time.perf_counter()
                outs, log = backend.run_with_host(executable, [TensorValue(t, h).array() for t, h in args],
                                                  HostQueues(infeed, channels))
                spent = time.perf_counter() - t0
                reply = ("ok", ([np.asarray(o) for o in outs], [(str(s), np.asarray(a)) for s, a in log]))
            else:
                reply = ("error", f"unknown worker message {msg!r}")
        except Exception as e:  # a refusal, a crash or an adapter error: reported, never fatal to the worker
            reply = status_of(e)
            if reply[0] == "error":
                print(traceback.format_exc(limit=-3), file=sys.stderr)
        if msg in ("compile", "run", "run_host", "compile_grid", "run_grid"):
            reply = (*reply, time.perf_counter() - t0 if spent is None else spent)
        try:
            conn.send(reply)
        except Exception as e:  # e.g. outputs that do not pickle
            conn.send(("error", f"reply could not be sent: {status_of(e)[1]}", 0.0))
        if reply[0] == "crash":
            return


def main(fd: int) -> None:
    """A worker serving on the socket `fd` until told to stop: started as
    `python -m shlo_conform.pipeline.worker FD`, or forked by the zygote."""
    from multiprocessing.connection import Connection

    from .isolation import die_with_parent

    die_with_parent()
    serve(Connection(fd))


if __name__ == "__main__":
    main(int(sys.argv[1]))
