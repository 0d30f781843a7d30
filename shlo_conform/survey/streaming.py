"""`accuracy --dtypes f32 --exhaustive`: every one of the 2^32 inputs of a unary op, streamed in chunks.

No expectation cache (it would be 2^32 × 4 bytes per op for the expected
bits alone): each chunk of `chunk` consecutive bit patterns (2^24 by
default: 256 chunks per op) is one unit of work that computes the oracle's
expected values, runs the backend on the same patterns and keeps only a
compact summary — element counts measured, free, correctly rounded and
within tolerance, the ULP sum, a histogram of ULP errors by power of two,
counts by special-value cause, the largest error with its input and the
first input of each cause.  The measures are the sampled survey's own
(`measures.judge`: same causes, same input-flush rule, same tolerance);
only the bookkeeping is per chunk.

* **Resumable**: each finished chunk's summary is appended (and flushed) to
  a checkpoint file, `<cache>/exhaustive/<op>/<dtype>-<backend>.jsonl`,
  whose first line holds the survey's key (format version, the digest of
  spec/, oracle/ and the survey's modules, op, type, backend, chunk size and
  input range); an interrupted survey reruns only the chunks missing there.
  A checkpoint of another key is started again; a torn last line is ignored.
* **Deterministic**: the table is merged from the chunk summaries in input
  order (ties of the largest error go to the smallest input), so it does
  not depend on how many processes or engine workers ran the chunks, nor on
  the order they finished.
* **Isolated**: the backend runs in a job process of the isolation harness
  (`distributed.worker_jobs`: one per worker thread, kept between chunks,
  the executable compiled once per chunk length); a crash or timeout is the
  chunk's status, counted in the row (`failed_chunks`), and the next chunk
  starts a fresh process.  A whole engine worker that dies costs its chunk
  a retry (shlo_conform/pipeline/distributed.py).
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import numpy as np

from .ops import FORMAT_VERSION, element_type_named, program

EXHAUSTIVE_TYPES = ("f32",)      # wider types have no end; narrower ones are exhaustive in the sampled survey
DEFAULT_CHUNK = 1 << 24          # patterns per unit of work
SLICE = 1 << 20                  # patterns judged at once inside a chunk (memory: a few hundred MB)
ORACLE_PIECE = 1 << 16           # patterns per oracle program
HIST_BUCKETS = 34                # 0: 0 ULP; b >= 1: 2^(b-1) <= ulp < 2^b; the last holds the rest
SUMMARY_VERSION = 1


def _digest() -> str:
    """What decides a chunk's summary: the expectations' sources (spec/,
    oracle/, the survey's input and oracle code) and the measures here."""
    from .expectations import source_digest
    here = Path(__file__).resolve().parent
    h = hashlib.sha256(source_digest().encode())
    for name in ("measures.py", "streaming.py"):
        h.update((here / name).read_bytes())
    return h.hexdigest()[:16]


def survey_key(op: str, dtype: str, backend: str, lo: int, hi: int, chunk: int) -> str:
    return f"v{FORMAT_VERSION}.{SUMMARY_VERSION}-{_digest()}-{op}-{dtype}-{backend}-{lo:#x}-{hi:#x}-c{chunk}"


def chunks(lo: int, hi: int, chunk: int) -> list[tuple[int, int]]:
    """The units: [a, b) bit-pattern ranges covering [lo, hi)."""
    return [(a, min(a + chunk, hi)) for a in range(lo, hi, chunk)]


def checkpoint_path(cache_dir: Path, op: str, dtype: str, backend: str) -> Path:
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in backend)
    return Path(cache_dir) / "exhaustive" / op / f"{dtype}-{safe}.jsonl"


class Checkpoint:
    """The finished chunks of one op × type × backend, appended line by line."""

    def __init__(self, path: Path, key: str):
        self.path, self.key = Path(path), key
        self.done: dict[int, dict] = {}
        if self.path.is_file():
            lines = self.path.read_text().splitlines()
            try:
                head = json.loads(lines[0]) if lines else {}
            except ValueError:
                head = {}
            if head.get("key") == key:
                for line in lines[1:]:
                    try:
                        s = json.loads(line)
                    except ValueError:   # a line torn by the interruption
                        continue
                    self.done[s["lo"]] = s
        if not self.done:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps({"key": key}) + "\n")

    def add(self, summary: dict) -> None:
        with open(self.path, "a") as f:
            f.write(json.dumps(summary, separators=(",", ":")) + "\n")
            f.flush()
            os.fsync(f.fileno())
        self.done[summary["lo"]] = summary


# -- in the backend's isolated job process ---------------------------------------------------------------

_EXE: dict = {}


def backend_chunk(backend_name: str, op: str, dtype: str, lo: int, hi: int) -> dict:
    """The backend's output bits on patterns [lo, hi) (runs in a job process
    of the isolation harness: survey.runs keeps the loaded adapter, the
    executable is kept per chunk length)."""
    from ..backends.base import compile_and_run, status_of
    from ..spec.types import from_bits, to_bits
    from .runs import loaded
    try:
        backend, describe = loaded(backend_name)
    except Exception as ex:
        return {"status": "error", "detail": f"the backend did not load: {type(ex).__name__}: {ex}"[:300]}
    et = element_type_named(dtype)
    n = hi - lo
    try:
        key = (backend_name, op, dtype, n)
        if key not in _EXE and len(_EXE) > 2:
            _EXE.clear()
        bits = np.arange(lo, hi, dtype=np.uint64).astype(et.bits_dtype)
        [out], _EXE[key] = compile_and_run(backend, program(op, 1, n, dtype), [from_bits(bits, et)], op=op,
                                           dtype=dtype, executable=_EXE.get(key))
        if out.dtype != np.dtype(et.numpy) or out.size != n:
            raise ValueError(f"output {out.dtype} {out.shape} where tensor<{n}x{et.mlir}> was declared")
        return {"status": "ok", "bits": np.asarray(to_bits(out, et)).reshape(n), "describe": describe}
    except Exception as ex:
        status, detail = status_of(ex)
        return {"status": status, "detail": detail[:300], "describe": describe}


# -- one unit of work (an engine worker, a local process, or here) ----------------------------------------

def _oracle(op: str, dtype: str, bits: np.ndarray):
    """The oracle's (expected, alts, free) on `bits`, ORACLE_PIECE at a time
    (the survey's own `oracle_chunk`: its vectorised f32 path applies)."""
    from .expectations import oracle_chunk
    parts = [oracle_chunk((op, dtype, bits[None, j:j + ORACLE_PIECE])) for j in range(0, bits.size, ORACLE_PIECE)]
    expected = np.concatenate([p[0] for p in parts])
    free = np.concatenate([p[2] for p in parts])
    k = max(p[1].shape[0] for p in parts)
    alts = np.stack([np.concatenate([p[1][j] if j < p[1].shape[0] else p[0] for p in parts]) for j in range(k)]) \
        if k else np.zeros((0, bits.size), dtype=expected.dtype)
    return expected, alts, free


def _bucket(u: np.ndarray) -> np.ndarray:
    """Histogram bucket of each ULP error (HIST_BUCKETS)."""
    b = np.zeros(u.shape, dtype=np.int64)
    pos = u > 0
    b[pos] = np.minimum(np.floor(np.log2(u[pos])).astype(np.int64) + 1, HIST_BUCKETS - 1)
    return b


def summarize(op: str, dtype: str, lo: int, bits: np.ndarray, expected, alts, free, actual: np.ndarray) -> dict:
    """A slice's compact summary (module docstring), by `measures.judge`."""
    from .expectations import CacheEntry
    from .measures import SPECIAL_CAUSES, classes_of, judge, stated_tolerance
    # Only the elements whose verdict is not plain need `judge`: where the
    # backend's bits equal the expected ones, the value is not NaN and the
    # element is not free, judge says 0 ULP and measured whatever the
    # alternatives (it is what the sampled survey counts, without its cost).
    fmt = element_type_named(dtype).format
    pick = (expected != actual) | free | classes_of(expected, fmt)["nan"]
    plain = int(bits.size - pick.sum())
    bits, expected, actual, free = bits[pick], expected[pick], actual[pick], free[pick]
    if bits.size:
        entry = CacheEntry(op, dtype, bits[None, :], expected, alts[:, pick], free, {})
        j = judge(entry, actual)
    else:   # every element plain: nothing for judge (it needs one element at least)
        from ..spec.accuracy import tolerance_ulp
        j = {"acc": np.zeros(0, bool), "elem_ulp": np.zeros(0), "free": free, "flushed_in": np.zeros(0, bool),
             "special": {k: np.zeros(0, bool) for k in SPECIAL_CAUSES},
             "tolerance_ulp": tolerance_ulp(element_type_named(dtype), stated_tolerance(op)),
             "within": np.zeros(0, bool)}
    acc, elem = j["acc"], j["elem_ulp"]
    u = elem[acc]
    hist = np.bincount(_bucket(u), minlength=HIST_BUCKETS)
    hist[0] += plain
    s = {"n": int(bits.size) + plain, "measured": int(acc.sum()) + plain, "free": int(j["free"].sum()),
         "correctly_rounded": int((u == 0).sum()) + plain,
         "within_tolerance": int(j["within"][acc].sum()) + plain,
         "tolerance_ulp": j["tolerance_ulp"], "ulp_sum": int(u.astype(np.int64).sum()),
         "hist": hist.astype(int).tolist(),
         "specials": {k: int(v.sum()) for k, v in j["special"].items()},
         "special_first": {}, "input_flushes": int((j["special"]["subnormal flushed"] & j["flushed_in"]).sum()),
         "max_ulp": float(u.max()) if u.size else 0.0, "worst": None}
    for k, v in j["special"].items():
        if v.any():
            i = int(np.flatnonzero(v)[0])
            s["special_first"][k] = [int(bits[i]), int(expected[i]), int(actual[i])]
    if u.size and s["max_ulp"] > 0:
        i = int(np.flatnonzero(acc)[np.argmax(u)])   # the first of the largest
        s["worst"] = [int(bits[i]), int(expected[i]), int(actual[i])]
    return s


def merge(parts: list[dict]) -> dict:
    """Summaries of consecutive ranges, in input order, as one."""
    out: dict = {}
    for p in parts:
        if not out:
            out = json.loads(json.dumps(p))
            continue
        for k in ("n", "measured", "free", "correctly_rounded", "within_tolerance", "ulp_sum", "input_flushes"):
            out[k] += p[k]
        out["hist"] = [a + b for a, b in zip(out["hist"], p["hist"])]
        for k, v in p["specials"].items():
            out["specials"][k] = out["specials"].get(k, 0) + v
        for k, v in p["special_first"].items():
            out["special_first"].setdefault(k, v)
        if p["max_ulp"] > out["max_ulp"]:   # strictly larger: a tie keeps the earlier input
            out["max_ulp"], out["worst"] = p["max_ulp"], p["worst"]
        out["hi"] = p.get("hi", out.get("hi"))
    return out


def run_chunk(op: str, dtype: str, backend: str, lo: int, hi: int, timeout: float) -> dict:
    """One unit: the backend's bits (isolated), the oracle's, the summary."""
    from ..pipeline.distributed import worker_jobs
    from ..pipeline.isolation import Failure, failure_status
    t0, c0 = time.perf_counter(), time.process_time()
    et = element_type_named(dtype)
    r = worker_jobs(f"backend-{backend}").call("shlo_conform.survey.streaming:backend_chunk", backend, op, dtype,
                                                   lo, hi, timeout=timeout)
    t_backend = time.perf_counter() - t0
    base = {"lo": lo, "hi": hi, "pid": os.getpid()}
    if isinstance(r, Failure):
        status, detail = failure_status(r, timeout)
        return {**base, "status": status, "detail": f"the backend's {detail}"[:300]}
    if r["status"] != "ok":
        return {**base, "status": r["status"], "detail": r["detail"]}
    actual = r["bits"]
    t_oracle = t_measure = 0.0
    parts = []
    for a in range(lo, hi, SLICE):
        b = min(a + SLICE, hi)
        bits = np.arange(a, b, dtype=np.uint64).astype(et.bits_dtype)
        t1 = time.perf_counter()
        with np.errstate(all="ignore"):
            expected, alts, free = _oracle(op, dtype, bits)
        t2 = time.perf_counter()
        parts.append(summarize(op, dtype, a, bits, expected, alts, free, actual[a - lo:b - lo]))
        t_measure += time.perf_counter() - t2
        t_oracle += t2 - t1
    s = merge(parts)
    s.update(base, status="ok", describe=r["describe"],
             seconds={"backend": round(t_backend, 3), "oracle": round(t_oracle, 3), "measure": round(t_measure, 3),
                      "cpu_here": round(time.process_time() - c0, 3)})   # oracle and measures: CPU of this process
    return s


# -- the survey -------------------------------------------------------------------------------------------

def show_element(pattern: int, et) -> str:
    from .measures import show_element as show
    return show(np.asarray(pattern, dtype=et.bits_dtype), et)


def row(op: str, dtype: str, backend: str, summaries: list[dict], seconds: float) -> dict:
    """The survey table's row for op × type × backend from its chunk
    summaries (any order: merged in input order)."""
    et = element_type_named(dtype)
    summaries = sorted(summaries, key=lambda s: s["lo"])
    ok = [s for s in summaries if s["status"] == "ok"]
    bad = [s for s in summaries if s["status"] != "ok"]
    out = {"op": op, "dtype": dtype, "backend": backend, "exhaustive": True, "seconds": round(seconds, 3),
           "chunks": len(summaries), "failed_chunks": len(bad),
           "range": [summaries[0]["lo"], summaries[-1]["hi"]] if summaries else None}
    if not ok:
        first = bad[0] if bad else {"status": "error", "detail": "no chunk"}
        return {**out, "status": first["status"], "detail": first.get("detail", "")}
    m = merge(ok)
    measured = m["measured"]
    out.update(status="measured", describe=ok[0].get("describe"), n=m["n"], measured=measured, free=m["free"],
               max_ulp=m["max_ulp"], mean_ulp=m["ulp_sum"] / measured if measured else 0.0,
               correctly_rounded=m["correctly_rounded"] / measured if measured else 1.0,
               within_tolerance=m["within_tolerance"] / measured if measured else 1.0,
               correctly_rounded_count=m["correctly_rounded"], within_tolerance_count=m["within_tolerance"],
               tolerance_ulp=m["tolerance_ulp"], specials=m["specials"],
               special_disagreements=sum(m["specials"].values()), input_flushes=m["input_flushes"],
               histogram={("0" if b == 0 else f"[2^{b - 1},2^{b})" if b < HIST_BUCKETS - 1 else f">=2^{b - 1}"): c
                          for b, c in enumerate(m["hist"]) if c},
               special_examples={k: {"inputs": [show_element(v[0], et)], "expected": show_element(v[1], et),
                                     "actual": show_element(v[2], et)} for k, v in m["special_first"].items()})
    if m["worst"] is not None:
        w = m["worst"]
        out["worst"] = {"inputs": [show_element(w[0], et)], "expected": show_element(w[1], et), "actual": show_element(w[2], et),
                        "ulp": m["max_ulp"], "input_bits": f"{w[0]:#010x}"}
    if bad:
        out["detail"] = f"{len(bad)} chunk(s) failed: {bad[0]['status']}: {bad[0].get('detail', '')}"[:300]
    return out


def survey(backends: list, ops: list, dtype: str, cache_dir: Path, *, lo: int = 0, hi: int = 1 << 32,
           chunk: int = DEFAULT_CHUNK, jobs: int = 1, engine=None, log=None, timeout: float = 600.0,
           stop_after: int | None = None) -> dict:
    """Every op × backend over patterns [lo, hi): chunks missing from each
    checkpoint run (on `engine`, in `jobs` processes, or here), each
    summary appended as it comes; the rows merge them in input order.
    `stop_after` (tests): finish after that many new chunks, as an
    interruption would, leaving the checkpoint for a resume."""
    from ..pipeline.distributed import each
    t0 = time.perf_counter()
    rows, timing, progress = [], {}, {}
    for b in backends:
        for op in ops:
            t1 = time.perf_counter()
            ck = Checkpoint(checkpoint_path(cache_dir, op, dtype, b), survey_key(op, dtype, b, lo, hi, chunk))
            todo = [(op, dtype, b, a, z, timeout) for a, z in chunks(lo, hi, chunk) if a not in ck.done]
            resumed = len(ck.done)
            if log:
                log(f"exhaustive: {b} {op} {dtype}: {len(todo)} chunks to run, {resumed} from the checkpoint {ck.path}")
            new = 0
            interrupted = False
            for _, s in each(run_chunk, todo, engine=engine, jobs=jobs):
                ck.add(s)
                new += 1
                if log:
                    log(f"exhaustive: {b} {op}: chunk {s['lo']:#010x} {s['status']} "
                        f"{s.get('max_ulp', '')} ({len(ck.done)}/{len(todo) + resumed}) {s.get('seconds', '')}")
                if stop_after is not None and new >= stop_after:
                    interrupted = True
                    break
            progress[f"{b}/{op}"] = {"resumed": resumed, "ran": new, "of": len(todo) + resumed}
            if interrupted:
                continue
            rows.append(row(op, dtype, b, list(ck.done.values()), time.perf_counter() - t1))
            timing[f"backend_{b}_{op}_s"] = round(time.perf_counter() - t1, 2)
    timing["total_s"] = round(time.perf_counter() - t0, 2)
    return {"kind": "accuracy-survey", "exhaustive": True, "format_version": FORMAT_VERSION, "dtypes": [dtype],
            "range": [lo, hi], "chunk": chunk, "backends": backends, "ops": ops, "timing": timing,
            "chunks": progress, "rows": rows}
