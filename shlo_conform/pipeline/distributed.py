"""Past one machine: `--cluster ADDRESS` hands work units to Dask distributed.

Why Dask distributed (measured against Ray on this work, docs/distributed.md):
a scheduler address (`tcp://scheduler:8786`) is all a user names; a local
cluster of two worker processes starts in about 0.6 s (Ray's in about 4 s)
and holds about 150 MB (Ray's nine processes about 690 MB); its wheels are
pure Python; and its futures answer `.result()` as concurrent.futures' do,
so the code that pools work locally takes them as they are.  Both engines
reschedule the task of a killed worker.

What this module guarantees, whichever engine runs the units:

* **Nothing when no cluster is named.**  The engine is imported here, inside
  `connect`, and nowhere else; without `--cluster` no module of it is
  loaded and no process started (tests/distributed/test_cluster.py).
* **A worker's death costs its unit a retry.**  A unit is a pure function
  of its arguments (a chunk of inputs, a shard of cases, a fuzz campaign):
  when a worker dies mid-unit the scheduler runs the unit again on another
  worker (Dask counts such deaths per task: `allowed-failures`, 3 by
  default, after which the unit fails loudly: `KilledWorker`, never a
  silently missing figure).
* **Deterministic merges.**  `each` yields (index, result) as units finish,
  in whatever order; every caller files a result under its index and merges
  in index order, so the same inputs give the same tables whatever the
  number of workers or the order they finish.
* **Backends stay isolated.**  A unit that runs a backend does so through
  the isolation harness (shlo_conform/pipeline/isolation.py) inside the engine's
  worker, as it would on one machine: a backend that crashes costs the
  unit's verdict (`crash`), not the engine's worker.
"""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, Callable, Iterator, Sequence

CONNECT_TIMEOUT = 30.0   # seconds to reach a named scheduler


class ClusterError(Exception):
    """The named cluster cannot be used (one line for the CLI)."""


class Engine:
    """A connection to a Dask scheduler: `submit` takes the function and
    its arguments (concurrent.futures' shape), futures answer `.result()`."""

    def __init__(self, client, address: str):
        self.client = client
        self.address = address

    def submit(self, fn: Callable, *args) -> Any:
        # pure=False: a unit is never deduplicated with another of equal
        # arguments by the engine; its retry is the scheduler's (a worker lost).
        return self.client.submit(fn, *args, pure=False)

    def workers(self) -> int:
        return max(1, len(self.client.scheduler_info(n_workers=-1).get("workers", {})))

    def close(self) -> None:
        self.client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def connect(address: str, timeout: float | None = None) -> Engine:
    """A client of the scheduler at `address` (`tcp://host:8786`, or a
    `LocalCluster` object in tests); ClusterError with one line when it
    cannot be reached or the engine is not installed."""
    try:
        from distributed import Client
    except ImportError as e:   # pragma: no cover - the lock file pins it
        raise ClusterError(f"--cluster needs Dask distributed (pip install distributed): {e}") from None
    try:
        client = Client(address, timeout=timeout or CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError, TypeError) as e:
        raise ClusterError(f"--cluster {address}: cannot reach the scheduler ({type(e).__name__}: {e})"[:300]) from None
    return Engine(client, str(address))


def each(fn: Callable, items: Sequence[tuple], *, engine: Engine | None = None, jobs: int = 1) -> Iterator[tuple[int, Any]]:
    """(index, fn(*items[index])) for every item, as units finish: on the
    engine when one is given, else in a pool of `jobs` processes, else here
    one after another.  Callers place results by index (module docstring)."""
    if engine is not None:
        from distributed import as_completed as engine_completed
        futures = {engine.submit(fn, *item): i for i, item in enumerate(items)}
        try:
            for f in engine_completed(list(futures), loop=engine.client.loop):
                yield futures[f], f.result()
        finally:
            for f in futures:
                f.cancel()
        return
    if jobs > 1 and len(items) > 1:
        with ProcessPoolExecutor(min(jobs, len(items))) as pool:
            futures = {pool.submit(fn, *item): i for i, item in enumerate(items)}
            try:
                for f in as_completed(futures):
                    yield futures[f], f.result()
            finally:
                for f in futures:
                    f.cancel()
        return
    for i, item in enumerate(items):
        yield i, fn(*item)


def ordered(fn: Callable, items: Sequence[tuple], *, engine: Engine | None = None, jobs: int = 1,
            on_result: Callable[[int, Any], None] | None = None) -> list:
    """Every result of `each`, in the order of `items`."""
    out: list = [None] * len(items)
    for i, r in each(fn, items, engine=engine, jobs=jobs):
        out[i] = r
        if on_result is not None:
            on_result(i, r)
    return out


# -- isolation inside an engine worker ------------------------------------------------------------------

import threading  # noqa: E402  (below the engine helpers it serves)

_local = threading.local()


def worker_jobs(label: str):
    """This thread's job server (isolation.Jobs) for `label` (a backend),
    kept between units: the harness ties a job process to the thread that
    started it (PR_SET_PDEATHSIG), so each engine thread keeps its own."""
    import atexit
    import tempfile
    from .isolation import Jobs
    table = getattr(_local, "jobs", None)
    if table is None:
        table = _local.jobs = {}
    if label not in table:
        tmp = tempfile.mkdtemp(prefix="shlo-conform-engine-")
        jobs = table[label] = Jobs(tmp, label=label)
        atexit.register(jobs.close)
    return table[label]


def campaign_seed(seed: int, k: int) -> int:
    """Campaign k's fuzz seed: campaign 0 keeps the user's seed (one campaign
    is the run without a cluster), the others a 32-bit digest of (seed, k) —
    distinct, reproducible, no Python hash()."""
    if k == 0:
        return seed
    import hashlib
    return int.from_bytes(hashlib.sha256(f"shlo-conform fuzz {seed} {k}".encode()).digest()[:4], "little")


def cpu_jobs(jobs: int | None) -> int:
    return max(1, min(jobs or 1, os.cpu_count() or 1))
