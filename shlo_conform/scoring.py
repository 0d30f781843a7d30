"""Scoring: a selection of cases run on one backend, journaled, and written
as a results document (suites/results.py) — the `shlo-conform --backend=…`
command's pipeline."""
from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Callable

from .journal import Journal, ResultsLock, journal_path, run_key
from .runner import DEFAULT_COMPILE_TIMEOUT, DEFAULT_RUN_TIMEOUT, Runner
from .suites.io import write_text_atomic
from .suites.records import Case, Verdict
from .suites.results import results_document


def score(cases: list[Case], backend: str, *, suite: str, manifest: dict, json_path: Path,
          compile_timeout: float = DEFAULT_COMPILE_TIMEOUT, run_timeout: float = DEFAULT_RUN_TIMEOUT,
          jobs: int = 1, on_verdict: Callable[[Verdict], None] | None = None,
          suite_digest: str | None = None, startup_timeout: float | None = None, batch: int = 1,
          shard: dict | None = None) -> dict:
    """Run `cases` on `backend` and write the results document to `json_path`
    (atomically, holding its lock: ResultsBusy if another run holds it).
    Verdicts are journaled next to it under the run's key (`run_key`: the
    suite's bytes — `suite_digest`, by default a digest of the cases
    themselves —, the selection, backend, timeouts) and resumed from there;
    the journal is removed once the results are written.  On
    KeyboardInterrupt (or a failed write) the journal stays."""
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    t0 = time.monotonic()
    if suite_digest is None:
        suite_digest = _cases_digest(cases, manifest)
    key = run_key(backend=backend, suite=suite, suite_digest=suite_digest, case_ids=[c.id for c in cases],
                  compile_timeout=compile_timeout, run_timeout=run_timeout)
    json_path = Path(json_path)
    with ResultsLock(json_path):
        journal = Journal(journal_path(json_path, key), key).open()
        try:
            wanted = {c.id for c in cases}
            done = {k: v for k, v in journal.done.items() if k in wanted}
            todo = [c for c in cases if c.id not in done]

            def record(v: Verdict) -> None:
                journal.add(v)
                if on_verdict:
                    on_verdict(v)

            runner = Runner(backend, compile_timeout=compile_timeout, run_timeout=run_timeout, jobs=jobs,
                            startup_timeout=startup_timeout, on_verdict=record, on_describe=journal.set_describe,
                            batch=batch)
            t_run = time.monotonic()
            fresh = runner.run(todo) if todo else []
            t_run = time.monotonic() - t_run
            by_id = {**done, **{v.id: v for v in fresh}}
            verdicts = [by_id[c.id] for c in cases if c.id in by_id]
            doc = results_document(backend=backend, describe=runner.describe or journal.describe, suite=suite,
                                   manifest=manifest, started=started, seconds=time.monotonic() - t0,
                                   verdicts=verdicts, timeouts={"compile": compile_timeout, "run": run_timeout})
            doc["resumed"] = len(done)
            doc["compiles"] = runner.compiles
            doc["timing"] = timing_breakdown(runner, t_run, time.monotonic() - t0)
            doc["run_key"] = key
            if shard is not None:  # `--shard I/N`: which part of a split this is (shard.record)
                doc["shard"] = shard
            write_text_atomic(json_path, json.dumps(doc, indent=1) + "\n")
        finally:
            journal.close()
        journal.close(remove=True)
    return doc


def timing_breakdown(runner: Runner, run_wall: float, wall: float) -> dict:
    """Where a run's wall went.  Worker time is counted per worker process
    (`jobs` of them side by side): `compile` and `run` are inside the
    adapter, as the workers measured them; `startup` is starting workers
    (importing the backend, claims); `ipc` is compile and run messages as
    the runner waited for them less the adapter's part (pickling, sockets,
    decoding inputs); `judge` is comparing outputs; `other` the rest of the
    workers' wall (scheduling, journal, verdicts).  `harness_share` is the
    part of the worker wall not spent inside the adapter: startup, IPC,
    judging and the rest — the runner's own cost."""
    t = runner.timing
    workers = runner.workers
    backend = t["compile"] + t["run"]
    slots = run_wall * workers
    ipc = max(0.0, t["calls"] - backend)
    other = max(0.0, slots - t["startup"] - t["calls"] - t["judge"])
    r = lambda x: round(x, 3)  # noqa: E731
    return {"wall": r(wall), "run_wall": r(run_wall), "workers": workers, "compile": r(t["compile"]),
            "run": r(t["run"]), "startup": r(t["startup"]),
            "ipc": r(ipc), "judge": r(t["judge"]), "other": r(other), "load_and_write": r(wall - run_wall),
            "harness_share": r(1 - backend / slots) if slots > 0 else None, "batches": dict(runner.batches)}


def _cases_digest(cases: list[Case], manifest: dict) -> str:
    """What the verdicts depend on, for cases that come from no suite folder."""
    h = hashlib.sha256(json.dumps(manifest, sort_keys=True).encode())
    for c in cases:
        h.update(c.to_json().encode() + b"\n")
    return h.hexdigest()
