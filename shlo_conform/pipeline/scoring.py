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
from ..suites.io import write_text_atomic
from ..suites.records import Case, Verdict
from ..suites.results import results_document


def score(cases: list[Case], backend: str, *, suite: str, manifest: dict, json_path: Path,
          compile_timeout: float = DEFAULT_COMPILE_TIMEOUT, run_timeout: float = DEFAULT_RUN_TIMEOUT,
          jobs: int = 1, on_verdict: Callable[[Verdict], None] | None = None,
          suite_digest: str | None = None, startup_timeout: float | None = None, batch: int = 1,
          shard: dict | None = None, engine=None,
          on_resumed: Callable[[list[Verdict]], None] | None = None) -> dict:
    """Run `cases` on `backend` and write the results document to `json_path`
    (atomically, holding its lock: ResultsBusy if another run holds it).
    Verdicts are journaled next to it under the run's key (`run_key`: the
    suite's bytes — `suite_digest`, by default a digest of the cases
    themselves —, the selection, backend, timeouts) and resumed from there;
    the journal is removed once the results are written.  On
    KeyboardInterrupt (or a failed write) the journal stays.  With an
    `engine` (`--cluster`, shlo_conform/pipeline/distributed.py) the cases run as
    parcels on its workers (`EngineRunner`); verdicts are the same.
    `on_resumed` is told the journal's verdicts once, before any case runs
    (`on_verdict` hears only the cases run now)."""
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
            if on_resumed and done:
                on_resumed(list(done.values()))

            def record(v: Verdict) -> None:
                journal.add(v)
                if on_verdict:
                    on_verdict(v)

            make = Runner if engine is None else \
                (lambda *a, **kw: EngineRunner(engine, *a, **kw))
            runner = make(backend, compile_timeout=compile_timeout, run_timeout=run_timeout, jobs=jobs,
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
            if runner.notes:
                doc["backend_notes"] = list(runner.notes)
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


PARCELS_PER_WORKER = 2   # parcels per engine worker: each starts a runner (a zygote), a lost worker costs half its share


def score_parcel(backend: str, cases: list[Case], compile_timeout: float, run_timeout: float,
                 startup_timeout: float | None, batch: int) -> dict:
    """One parcel of a clustered scoring run, in an engine worker: the
    runner of one job (its backend workers isolated as always) over the
    parcel's cases; what `EngineRunner` sums comes back with the verdicts."""
    runner = Runner(backend, compile_timeout=compile_timeout, run_timeout=run_timeout, jobs=1,
                    startup_timeout=startup_timeout, batch=batch)
    verdicts = runner.run(cases)
    return {"verdicts": verdicts, "describe": runner.describe, "compiles": runner.compiles,
            "timing": dict(runner.timing), "batches": dict(runner.batches), "notes": list(runner.notes)}


class EngineRunner:
    """The runner's face (`run`, `describe`, `compiles`, `timing`, `workers`,
    `batches`) over an engine: the cases are split into parcels the way
    `--shard` splits them (whole programs and batches: shard.assign), each
    parcel a unit on the engine; verdicts reach `on_verdict` as parcels
    finish and come back in the cases' order."""

    def __init__(self, engine, backend: str, *, compile_timeout: float, run_timeout: float, jobs: int = 1,
                 startup_timeout: float | None = None, on_verdict=None, on_describe=None, batch: int = 1):
        self.engine, self.backend = engine, backend
        self.compile_timeout, self.run_timeout, self.startup_timeout = compile_timeout, run_timeout, startup_timeout
        self.batch, self.on_verdict, self.on_describe = batch, on_verdict, on_describe
        self.describe, self.compiles, self.workers = None, 0, 0
        self.timing = {"startup": 0.0, "calls": 0.0, "judge": 0.0, "compile": 0.0, "run": 0.0}
        self.batches = {"batches": 0, "cases": 0, "fallbacks": 0, "rerun": 0}
        self.notes: list[str] = []

    def run(self, cases: list[Case]) -> list[Verdict]:
        from .distributed import ordered
        from .shard import assign, units
        self.workers = self.engine.workers()
        count = max(1, min(len(units(cases, self.batch)), PARCELS_PER_WORKER * self.workers))
        where = assign(cases, count, self.batch)
        parcels = [[c for c in cases if where[c.id] == k] for k in range(1, count + 1)]
        parcels = [p for p in parcels if p]

        def take(i: int, r: dict) -> None:
            if r["describe"] and self.describe is None:
                self.describe = r["describe"]
                if self.on_describe:
                    self.on_describe(r["describe"])
            self.compiles += r["compiles"]
            for k, v in r["timing"].items():
                self.timing[k] = self.timing.get(k, 0.0) + v
            for k, v in r["batches"].items():
                self.batches[k] = self.batches.get(k, 0) + v
            self.notes = sorted(set(self.notes) | set(r.get("notes", [])))   # parcels finish in any order
            for v in r["verdicts"]:
                if self.on_verdict:
                    self.on_verdict(v)

        done = ordered(score_parcel, [(self.backend, p, self.compile_timeout, self.run_timeout, self.startup_timeout,
                                       self.batch) for p in parcels], engine=self.engine, on_result=take)
        by_id = {v.id: v for r in done for v in r["verdicts"]}
        return [by_id[c.id] for c in cases if c.id in by_id]
