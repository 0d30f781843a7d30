"""Each backend over the selection, in a process of the isolation harness; the survey as a whole."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from .expectations import CacheEntry, build, entry_path
from .measures import measure
from .ops import FORMAT_VERSION, element_type_named, accepts, program

def _run_one(backend, backend_name: str, describe: str, entry: CacheEntry) -> dict:
    """One op × type on a loaded backend: one compile, one run, the measures;
    a refusal or an exception is the row's status."""
    from ..backends.base import compile_and_run, status_of
    from ..spec.types import from_bits, to_bits
    et = element_type_named(entry.dtype)
    row = {"op": entry.op, "dtype": entry.dtype, "backend": backend_name, "describe": describe}
    t0 = time.perf_counter()
    if entry.free.all():
        return {**row, "status": "unspecified", "seconds": 0.0,
                "detail": "the spec states no result for this op on this type"}
    try:
        arity, n = entry.inputs.shape[:2]
        [out], _ = compile_and_run(backend, program(entry.op, arity, n, entry.dtype),
                                   [from_bits(r, et) for r in entry.inputs], op=entry.op, dtype=entry.dtype)
        if out.dtype != np.dtype(et.numpy) or out.size != n:
            raise ValueError(f"output {out.dtype} {out.shape} where tensor<{n}x{et.mlir}> was declared")
        row.update(status="measured", **measure(entry, to_bits(out, et)))
    except Exception as ex:   # the backend refused or failed on this op × type: recorded, the survey goes on
        status, detail = status_of(ex)
        row.update(status=status, detail=detail[:300])
    row["seconds"] = round(time.perf_counter() - t0, 3)
    return row


_LOADED: dict = {}   # in a survey's job process: backend name -> (adapter, describe), loaded once


def loaded(backend_name: str) -> tuple:
    """(adapter, describe) of a backend in this job process: loaded at its
    first use and kept for the next entries and chunks; raises as
    `load_backend` does."""
    from ..backends.base import load_backend
    if backend_name not in _LOADED:
        backend = load_backend(backend_name)
        _LOADED[backend_name] = (backend, backend.describe())
    return _LOADED[backend_name]


def survey_entry(backend_name: str, path: str) -> dict:
    """One cached entry on a backend (runs in the backend's isolated job
    process, shlo_conform/pipeline/isolation.py)."""
    try:
        backend, describe = loaded(backend_name)
    except Exception as ex:
        return {"status": "load error", "detail": f"{type(ex).__name__}: {ex}"[:300]}
    return _run_one(backend, backend_name, describe, CacheEntry.load(Path(path)))


DEFAULT_ENTRY_TIMEOUT = 600.0   # seconds for one op × type on a backend (2^20 inputs, compile included)


def run_backend(backend_name: str, entries: list, paths: list, log=None,
                timeout: float = DEFAULT_ENTRY_TIMEOUT) -> list:
    """Every entry on one backend, in a process of its own (the isolation
    harness's job server): a backend that dies (a segfault in its compiler,
    say) or hangs costs the op × type in flight — reported as `crash` or
    `timeout`, its process group killed — and the survey goes on in a fresh
    process.  A backend that does not load is every entry's error."""
    import tempfile
    from ..pipeline.isolation import Jobs
    rows: list = []
    with tempfile.TemporaryDirectory(prefix="shlo-conform-") as tmp, Jobs(tmp, label=backend_name) as jobs:
        for e, path in zip(entries, paths):
            base = {"op": e.op, "dtype": e.dtype, "backend": backend_name}
            r = _failure_row(jobs.call("shlo_conform.survey:survey_entry", backend_name, str(path), timeout=timeout),
                             base, timeout)
            if r.get("status") == "load error":
                rows += [{**{"op": x.op, "dtype": x.dtype, "backend": backend_name}, "status": "error",
                          "detail": f"the backend did not load: {r['detail']}", "seconds": 0.0}
                         for x in entries[len(rows):]]
                break
            rows.append(r)
            if log:
                log(f"{backend_name}: {r['op']} {r['dtype']}: {r['status']} ({r['seconds']:.1f} s)")
    return rows


def _failure_row(r, base: dict, timeout: float) -> dict:
    """A job's answer as a row: an isolation `Failure` becomes `crash`,
    `timeout` or `error` with one line."""
    from ..pipeline.isolation import Failure, failure_status
    if isinstance(r, Failure):
        status, detail = failure_status(r, timeout)
        return {**base, "status": status, "detail": f"the backend's {detail}"[:300], "seconds": 0.0}
    return r


def engine_entry(backend_name: str, entry: CacheEntry, timeout: float) -> dict:
    """One entry on a backend in an engine worker (`--cluster`): the entry
    travels with the unit (the worker may not share our disk), is written to
    the worker's own temporary file and run by `survey_entry` in the
    worker thread's isolated job process (distributed.worker_jobs)."""
    import tempfile
    from ..pipeline.distributed import worker_jobs
    base = {"op": entry.op, "dtype": entry.dtype, "backend": backend_name}
    with tempfile.TemporaryDirectory(prefix="shlo-conform-entry-") as tmp:
        path = Path(tmp) / "entry.npz"
        entry.save(path)
        r = _failure_row(worker_jobs(f"backend-{backend_name}").call("shlo_conform.survey:survey_entry", backend_name,
                                                                    str(path), timeout=timeout), base, timeout)
    if r.get("status") == "load error":
        r = {**base, "status": "error", "detail": f"the backend did not load: {r['detail']}", "seconds": 0.0}
    return r


def _line(r: dict) -> str:
    head = f"{r['backend']:<11} {r['op']:<22} {r['dtype']:<9}"
    if r["status"] != "measured":
        return f"{head} {r['status']}: {r.get('detail', '')[:80]}"
    sp = r["special_disagreements"]
    return (f"{head} max {r['max_ulp']:>8g} ulp  mean {r['mean_ulp']:<8.3g} CR {100 * r['correctly_rounded']:6.2f}%  "
            f"tol {100 * r['within_tolerance']:6.2f}%  specials {sp:<6} n {r['n']:<8} {r['seconds']:.1f}s")


def render(doc: dict) -> str:
    lines = [f"{'backend':<11} {'op':<22} {'type':<9} result"]
    lines += [_line(r) for r in doc["rows"]]
    return "\n".join(lines)


def survey(backends: list, ops: dict, dtypes: list, size: int, seed: int, cache_dir: Path,
           jobs: int = 1, regenerate: bool = False, log=None, timeout: float = DEFAULT_ENTRY_TIMEOUT,
           engine=None) -> dict:
    """The whole survey: expectations (cached), then each backend.  With an
    `engine` (`--cluster`) the oracle's chunks and each backend's entries
    are units on its workers; rows come back in selection order."""
    t0 = time.perf_counter()
    selection = [(op, arity, d) for op, arity in ops.items() for d in dtypes
                 if accepts(op, arity, d)]   # complex types: the ops the spec defines on them
    entries = build(selection, size, seed, cache_dir, jobs, regenerate, log, engine=engine)
    paths = [entry_path(cache_dir, op, d) for op, _, d in selection]
    t_oracle = time.perf_counter() - t0
    rows, timing = [], {"expectations_s": round(t_oracle, 2)}
    for b in backends:
        t1 = time.perf_counter()
        if engine is not None:
            from ..pipeline.distributed import ordered
            rows += ordered(engine_entry, [(b, e, timeout) for e in entries], engine=engine,
                            on_result=lambda i, r: log and log(f"{b}: {r['op']} {r['dtype']}: {r['status']}"))
        else:
            rows += run_backend(b, entries, paths, log, timeout)
        timing[f"backend_{b}_s"] = round(time.perf_counter() - t1, 2)
    return {"kind": "accuracy-survey", "format_version": FORMAT_VERSION, "seed": seed, "size": size,
            "backends": backends, "ops": list(ops), "dtypes": dtypes, "timing": timing,
            "cache": {e.op + "/" + e.dtype: e.meta for e in entries}, "rows": rows}
