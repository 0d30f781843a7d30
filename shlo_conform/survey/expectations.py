"""The oracle's expectations for the survey, computed once per op x type and cached in a versioned file."""
from __future__ import annotations

import functools
import hashlib
import json
import os
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import time

import numpy as np

from .inputs import survey_inputs
from .ops import CHUNK, FORMAT_VERSION, element_type_named, exhaustive, program

# What decides an entry's inputs and expected bits: spec/ and oracle/, and
# the survey's own modules that say what is surveyed, draw the inputs and ask
# the oracle (measures, runs and rendering keep the cache).
_KEYED = ("ops.py", "inputs.py", "expectations.py")


@functools.lru_cache(maxsize=1)
def source_digest() -> str:
    """Digest of what decides the expectations (`_KEYED` and the sources of
    spec/ and oracle/)."""
    here = Path(__file__).resolve().parent
    root = here.parent.parent
    h = hashlib.sha256()
    for sub in ("spec", "spec/ops", "oracle"):
        for p in sorted((root / sub).glob("*.py")):
            h.update(p.name.encode() + b"\0" + p.read_bytes())
    for name in _KEYED:
        h.update((here / name).read_bytes())
    return h.hexdigest()[:16]


def cache_key(op: str, arity: int, dtype: str, size: int, seed: int) -> str:
    """Versioned key of an entry: what decides its inputs and expected bits."""
    size_part = "all" if exhaustive(arity, dtype) else str(size)
    return f"v{FORMAT_VERSION}-{source_digest()}-{op}-{dtype}-seed{seed}-size{size_part}"


@dataclass
class CacheEntry:
    """One op × type: inputs (arity, n) bits, the oracle's primary bits (n,),
    `alts` (k, n) bits of implementation-defined alternatives (equal to the
    primary elsewhere), `free` where any value is allowed or the spec states
    none, and how it was made."""

    op: str
    dtype: str
    inputs: np.ndarray
    expected: np.ndarray
    alts: np.ndarray
    free: np.ndarray
    meta: dict

    def save(self, path: Path) -> None:
        """Uncompressed: deflate took 0.3-0.8 s per 10^6-element entry (a
        minute of a cold survey) and saved a quarter of the size."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, inputs=self.inputs, expected=self.expected, alts=self.alts, free=self.free,
                 meta=np.array(json.dumps(self.meta, sort_keys=True)))
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path) -> "CacheEntry":
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            return cls(meta["op"], meta["dtype"], z["inputs"], z["expected"], z["alts"], z["free"], meta)


def oracle_chunk(args):
    op, dtype, chunk = args
    from ..generators.expect import Unspecified, expected_outputs
    from ..spec.types import from_bits
    et = element_type_named(dtype)
    arity, n = chunk.shape[:2]
    trail = chunk.shape[2:]

    def solve(lo, hi):
        arrays = [from_bits(chunk[i, lo:hi], et) for i in range(arity)]
        try:
            [e] = expected_outputs(program(op, arity, hi - lo, dtype), arrays)
        except Unspecified:
            if hi - lo == 1:
                return [(np.zeros((1,) + trail, dtype=et.bits_dtype), [], np.ones(1, bool))]
            mid = (lo + hi) // 2
            return solve(lo, mid) + solve(mid, hi)
        free = np.zeros(hi - lo, bool)
        alts = []
        for a in e.alternatives:
            if a.bits is None:
                free[list(a.elements or [])] = True
            else:
                alts.append(np.asarray(a.bits).reshape((hi - lo,) + trail))
        return [(np.asarray(e.bits).reshape((hi - lo,) + trail), alts, free)]

    with np.errstate(invalid="ignore"):   # NaN inputs widened to binary64 for the oracle
        parts = solve(0, n)
    expected = np.concatenate([p[0] for p in parts]).astype(et.bits_dtype)
    free = np.concatenate([p[2] for p in parts])
    k = max((len(p[1]) for p in parts), default=0)
    alts = np.empty((k, n) + trail, dtype=et.bits_dtype)
    for j in range(k):   # pieces without that alternative keep their primary
        alts[j] = np.concatenate([p[1][j] if j < len(p[1]) else p[0] for p in parts])
    return expected, alts, free


def entry_path(cache_dir: Path, op: str, dtype: str) -> Path:
    """Where `expectations` keeps an op × type."""
    return Path(cache_dir) / op / f"{dtype}.npz"


AHEAD = 3   # entries whose chunks may be queued at once: the workers never wait for the parent


def _cached(path: Path, key: str):
    """The entry at `path` if it is readable and was made under `key`, else None."""
    if path.is_file():
        try:
            entry = CacheEntry.load(path)
            if entry.meta.get("key") == key:
                return entry
        except (OSError, ValueError, KeyError):
            pass   # unreadable or of another layout: made again
    return None


def _unspecified(op: str, dtype: str, inputs: np.ndarray) -> bool:
    """The spec states no result at eight inputs spread over the array (complex
    remainder is TBD): the op x type is reported as unspecified, not bisected
    element by element."""
    n = inputs.shape[1]
    probe = np.unique(np.linspace(0, n - 1, min(8, n)).astype(int))
    return all(oracle_chunk((op, dtype, inputs[:, i:i + 1]))[2][0] for i in probe)


def _done(value) -> Future:
    """A finished Future: chunks computed in this process, and unspecified
    entries, look like pooled ones to `build`'s assembly."""
    f: Future = Future()
    f.set_result(value)
    return f


def expectations(op: str, arity: int, dtype: str, size: int, seed: int, cache_dir: Path,
                 jobs: int = 1, regenerate: bool = False, log=None) -> CacheEntry:
    """The cached entry for op × type, computed (and written) when missing or stale."""
    [entry] = build([(op, arity, dtype)], size, seed, cache_dir, jobs, regenerate, log)
    return entry


def build(selection: list, size: int, seed: int, cache_dir: Path, jobs: int = 1, regenerate: bool = False,
          log=None, engine=None) -> list:
    """The entries of `selection` [(op, arity, dtype)], in its order: fresh
    cached ones loaded, the others computed in chunks of CHUNK elements and
    written.  With jobs > 1 the chunks of every entry go to one pool of
    processes, up to AHEAD entries ahead, so the workers stay busy while the
    parent draws the next entry's inputs and assembles and saves the last
    one (a pool per entry idled at every entry's end and start).  With an
    `engine` (shlo_conform/pipeline/distributed.py, `--cluster`) the chunks go to its
    workers instead; entries are assembled here in chunk order either way.  An entry's
    `oracle_seconds` is the wall from its inputs to its last chunk, so
    entries in flight together overlap."""
    out: list = [None] * len(selection)
    pending: deque = deque()
    own = engine is None and jobs > 1
    pool = engine if engine is not None else ProcessPoolExecutor(jobs) if own else None

    def finish(i, op, dtype, key, inputs, t0, parts):
        results = [f.result() for f in parts]
        expected = np.concatenate([r[0] for r in results])
        free = np.concatenate([r[2] for r in results])
        k = max(r[1].shape[0] for r in results)
        alts = np.stack([np.concatenate([r[1][j] if j < r[1].shape[0] else r[0] for r in results])
                         for j in range(k)]) if k else np.zeros((0,) + expected.shape, dtype=expected.dtype)
        meta = {"op": op, "dtype": dtype, "key": key, "seed": seed, "size": size, "n": int(inputs.shape[1]),
                "oracle_seconds": round(time.perf_counter() - t0, 3), "format_version": FORMAT_VERSION}
        out[i] = CacheEntry(op, dtype, inputs, expected, alts, free, meta)
        out[i].save(entry_path(cache_dir, op, dtype))
        if log:
            log(f"oracle: {op} {dtype}: done ({meta['oracle_seconds']:.1f} s)")

    try:
        for i, (op, arity, dtype) in enumerate(selection):
            key = cache_key(op, arity, dtype, size, seed)
            out[i] = None if regenerate else _cached(entry_path(cache_dir, op, dtype), key)
            if out[i] is not None:
                continue
            t0 = time.perf_counter()
            inputs = survey_inputs(op, arity, dtype, size, seed)
            n = inputs.shape[1]
            if log:
                log(f"oracle: {op} {dtype}: {n} inputs ...")
            if _unspecified(op, dtype, inputs):
                parts = [_done((np.zeros(inputs.shape[1:], dtype=inputs.dtype),
                                np.zeros((0,) + inputs.shape[1:], inputs.dtype), np.ones(n, bool)))]
            else:
                chunks = [(op, dtype, inputs[:, j:j + CHUNK]) for j in range(0, n, CHUNK)]
                parts = [pool.submit(oracle_chunk, c) if pool else _done(oracle_chunk(c)) for c in chunks]
            pending.append((i, op, dtype, key, inputs, t0, parts))
            while len(pending) > AHEAD:
                finish(*pending.popleft())
        while pending:
            finish(*pending.popleft())
    finally:
        if own:
            pool.shutdown(cancel_futures=True)
    return out
