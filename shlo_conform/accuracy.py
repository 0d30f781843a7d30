"""The accuracy survey: every float op of the spec, measured element by element.

`shlo-conform accuracy --backend=NAME` runs, for each float unary and binary
element-wise op of the encoded spec and each float type, ONE program over a
whole input array (one compile per op × type), and compares the backend's
bits with the oracle's correctly rounded reference:

* inputs (`survey_inputs`): every bit pattern of f8E4M3FN, f8E5M2, bf16 and
  f16 (unary ops) or of both 8-bit operands (binary ops); a stratified sample
  elsewhere — every binade of both signs, each subnormal binade (by leading
  bit), the format's special values and the op's hard arguments
  (`Exercise.hard_floats`, spec/samples.py) — of `size` inputs (default 2^20).
* expectations (`expectations`): the oracle's primary value per element,
  through its public entry point (`generators.expect.expected_outputs` on the
  survey program itself, in chunks), so every speed-up of oracle/ applies.
  They are computed once and cached per op × type in a versioned file
  (`CacheEntry`): the key covers the survey's format version, the seed, the
  size, the sources of spec/ and oracle/ and of the functions here that draw
  inputs and ask the oracle (`_KEYED`), so a changed spec or oracle
  regenerates it and a second backend repeats only the backend's work.
* backends (`run_backend`): each in a process of its own (the isolation
  harness, shlo_conform/isolation.py); one that dies or hangs costs the
  op × type in flight (`crash`, `timeout` past --timeout), not the survey.
* measures (`measure`): special-value disagreements first, counted apart,
  by the conformance suite's causes and rule (suites/causes.py) — subnormal
  flushed (a subnormal result returned as zero, or the op's result on the
  operands with their subnormals read as zero: DAZ, established by the
  oracle on those operands), NaN lost or invented, the sign of zero,
  infinity — then the ULP error of every other element: max, mean, the share
  correctly rounded and within our tolerance (spec/accuracy.py), the worst
  input, and a binned profile of the error along the input for the plots.

Complex types (c64, c128) are sampled over the plane for the ops the spec
defines on them: both parts by binade, the axes and branch cuts (a part
±0), and every pair of special values; components are judged one by one.
"""
from __future__ import annotations

import functools
import hashlib
import inspect
import json
import os
import time
import zlib
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .suites.causes import SPECIAL_CAUSES

FORMAT_VERSION = 1
EXHAUSTIVE = ("f8E4M3FN", "f8E5M2", "bf16", "f16")
SAMPLED = ("f32", "f64")
COMPLEX = ("c64", "c128")      # sampled over the plane, branch cuts included
DTYPES = EXHAUSTIVE + SAMPLED + COMPLEX
DEFAULT_SIZE = 1 << 20
CHUNK = 8192          # elements per oracle program
PROFILE_BINS = 400    # points of the ULP-against-input profile kept per op × type × backend


def _et(name: str):
    from .spec.types import element_type
    return element_type(name)


# ---------------------------------------------------------------------------
# Which ops: the spec's element-wise ops that take and give one float type
# ---------------------------------------------------------------------------

def program(op: str, arity: int, n: int, dtype: str) -> str:
    """@main applying `op` to `arity` operands of tensor<n x dtype>."""
    t = f"tensor<{n}x{_et(dtype).mlir}>"
    args = ", ".join(f"%arg{i}: {t}" for i in range(arity))
    uses = ", ".join(f"%arg{i}" for i in range(arity))
    return (f"func.func @main({args}) -> {t} {{\n"
            f"  %0 = \"stablehlo.{op}\"({uses}) : ({', '.join([t] * arity)}) -> {t}\n"
            f"  func.return %0 : {t}\n}}\n")


def float_ops() -> dict[str, int]:
    """{op: arity} of every element-wise op of the encoded spec with one or
    two operands and no attributes whose program `T... -> T` the spec
    accepts for a float T (so is_finite, compare, convert to another type
    and complex are not; their results are not of the operand's type)."""
    from .oracle.program import ProgramRejected, parse_program
    from .spec.dsl import Elementwise
    from .spec.ops import OPS
    out = {}
    for name, spec in sorted(OPS.items()):
        if not isinstance(spec.semantics, Elementwise) or spec.attributes or len(spec.operands) not in (1, 2):
            continue
        try:
            parse_program(program(name, len(spec.operands), 4, "f32"))
        except ProgramRejected:
            continue
        out[name] = len(spec.operands)
    return out


@functools.lru_cache(maxsize=None)
def accepts(op: str, arity: int, dtype: str) -> bool:
    """Does the encoded spec accept `op` on `dtype` (complex types: only some ops)?"""
    from .oracle.program import ProgramRejected, parse_program
    try:
        parse_program(program(op, arity, 4, dtype))
    except ProgramRejected:
        return False
    return True


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------

def _specials(et) -> np.ndarray:
    """±0, the smallest and largest subnormal, the smallest normal, ±1, the
    largest finite, ±inf and a NaN (where the format has them)."""
    f = et.format
    mb = f.mantissa_bits
    mags = [0, 1, f.mantissa_mask, 1 << mb, f.bias << mb]
    if f.has_inf:
        mags += [f.exponent_mask - 1, f.exponent_mask, f.exponent_mask | (1 << (mb - 1))]
    else:
        mags += [(f.exponent_mask | f.mantissa_mask) - 1, f.exponent_mask | f.mantissa_mask]
    return np.array([m | s for m in mags for s in (0, f.sign_mask)], dtype=np.uint64)


def stratified(et, size: int, rng: np.random.Generator) -> np.ndarray:
    """About `size` bit patterns: the same count from every binade of both
    signs (each subnormal binade by its leading bit), uniform within it."""
    f = et.format
    mb = f.mantissa_bits
    top = (f.exponent_mask >> mb) - (1 if f.has_inf else 0)      # the largest finite exponent code
    per = max(1, -(-size // (2 * (top + mb))))   # per binade and sign
    parts = []
    for e in range(1, top + 1):
        parts.append(np.uint64(e << mb) | rng.integers(0, 1 << mb, 2 * per, dtype=np.uint64))
    for j in range(mb):                                           # subnormals with leading bit j
        parts.append(np.uint64(1 << j) | rng.integers(0, 1 << j, 2 * per, dtype=np.uint64) if j else
                     np.ones(2 * per, dtype=np.uint64))
    signs = np.repeat(np.array([0, f.sign_mask], dtype=np.uint64), per)   # half of each binade negative
    out = np.concatenate([p | signs for p in parts])
    if not f.has_inf:   # f8E4M3FN's all-ones pattern is NaN: keep the draw finite
        out = out[(out & np.uint64(f.exponent_mask | f.mantissa_mask)) != (f.exponent_mask | f.mantissa_mask)]
    return out


def _hard(op: str, et, operand: int) -> np.ndarray:
    from .spec.ops import OPS
    from .spec.types import to_bits
    ex = OPS[op].exercise
    if ex is None or ex.hard_floats is None:
        return np.zeros(0, dtype=np.uint64)
    try:
        v = np.asarray(ex.hard_floats(et, operand))
    except Exception:   # a family that has nothing for this format
        return np.zeros(0, dtype=np.uint64)
    return to_bits(v.astype(et.numpy), et).astype(np.uint64).reshape(-1)


def _rng(seed: int, *names: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32("/".join(names).encode())])


def _plane(op: str, et, size: int, rng: np.random.Generator) -> np.ndarray:
    """About `size` complex numbers as (n, 2) component bits: both parts drawn
    by binade (`stratified`), then the branch cuts and axes — a sampled part
    with the other ±0, each way — and every pair of the specials."""
    c = et.component
    re, im = stratified(c, size, rng), stratified(c, size, rng)
    n = min(re.size, im.size)
    plane = np.stack([rng.permutation(re)[:n], rng.permutation(im)[:n]], axis=1)
    x = rng.permutation(re)[:max(1, n // 16)]
    zero, neg_zero = np.zeros_like(x), np.full_like(x, c.format.sign_mask)
    axes = [np.stack(p, axis=1) for p in ((x, zero), (x, neg_zero), (zero, x), (neg_zero, x))]
    sp = np.concatenate([_specials(c), _hard(op, c, 0)])
    s0, s1 = np.meshgrid(sp, sp, indexing="ij")
    return np.concatenate([np.stack([s0.reshape(-1), s1.reshape(-1)], axis=1), *axes, plane])


def _distinct(bits: np.ndarray) -> np.ndarray:
    """np.unique(bits) — the sorted distinct values — by a sort and a
    neighbour comparison: numpy 2.4's np.unique takes 1-3 s on 10^6 integers
    (hashing), the sort 0.1 s."""
    s = np.sort(bits)
    return s[np.concatenate([[True], s[1:] != s[:-1]])] if s.size else s


def survey_inputs(op: str, arity: int, dtype: str, size: int, seed: int) -> np.ndarray:
    """The operands' bit patterns, shape (arity, n) — (arity, n, 2) for complex
    types, (re, im) — unsigned of the (component) type's width."""
    et = _et(dtype)
    rng = _rng(seed, op, dtype)
    if et.is_complex:
        zs = [_plane(op, et, size, rng) for _ in range(arity)]
        n = min(z.shape[0] for z in zs)
        return np.stack([z[:n] for z in zs]).astype(et.bits_dtype)
    f = et.format
    if arity == 1:
        if dtype in EXHAUSTIVE:
            bits = np.arange(1 << f.bits, dtype=np.uint64)
        else:
            bits = _distinct(np.concatenate([stratified(et, size, rng), _specials(et), _hard(op, et, 0)]))
            while bits.size < size:   # the narrow subnormal binades repeat values: draw until `size` distinct
                bits = _distinct(np.concatenate([bits, stratified(et, size - bits.size, rng)]))
        return bits.astype(et.bits_dtype)[None, :]
    if f.bits == 8:
        a, b = np.meshgrid(np.arange(256, dtype=np.uint64), np.arange(256, dtype=np.uint64), indexing="ij")
        return np.stack([a.reshape(-1), b.reshape(-1)]).astype(et.bits_dtype)
    lhs, rhs = stratified(et, size, rng), stratified(et, size, rng)
    n = min(lhs.size, rhs.size)
    lhs, rhs = rng.permutation(lhs)[:n], rng.permutation(rhs)[:n]
    sp = _specials(et)
    h0, h1 = np.concatenate([sp, _hard(op, et, 0)]), np.concatenate([sp, _hard(op, et, 1)])
    c0, c1 = np.meshgrid(h0, h1, indexing="ij")                   # specials and hard values, every pair
    return np.stack([np.concatenate([c0.reshape(-1), lhs]),
                     np.concatenate([c1.reshape(-1), rhs])]).astype(et.bits_dtype)


# ---------------------------------------------------------------------------
# Expectations, cached
# ---------------------------------------------------------------------------

# What decides an entry's inputs and expected bits in this module; changes
# elsewhere in it (measures, rendering) keep the cache.
_KEYED = ("program", "_specials", "stratified", "_hard", "_rng", "_plane", "_distinct", "survey_inputs", "exhaustive",
          "_oracle_chunk", "_unspecified", "build", "CacheEntry")


@functools.lru_cache(maxsize=1)
def _source_digest() -> str:
    """Digest of what decides the expectations: the sources of spec/ and
    oracle/, and of this module's functions that draw inputs and ask the
    oracle (`_KEYED`)."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for sub in ("spec", "spec/ops", "oracle"):
        for p in sorted((root / sub).glob("*.py")):
            h.update(p.name.encode() + b"\0" + p.read_bytes())
    for name in _KEYED:
        h.update(inspect.getsource(globals()[name]).encode())
    return h.hexdigest()[:16]


def exhaustive(arity: int, dtype: str) -> bool:
    """Every input is taken (unary ops on the narrow types, binary on 8-bit)."""
    return dtype in EXHAUSTIVE and (arity == 1 or _et(dtype).bits == 8)


def cache_key(op: str, arity: int, dtype: str, size: int, seed: int) -> str:
    """Versioned key of an entry: what decides its inputs and expected bits."""
    size_part = "all" if exhaustive(arity, dtype) else str(size)
    return f"v{FORMAT_VERSION}-{_source_digest()}-{op}-{dtype}-seed{seed}-size{size_part}"


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


def _oracle_chunk(args):
    op, dtype, chunk = args
    from .generators.expect import Unspecified, expected_outputs
    from .spec.types import from_bits
    et = _et(dtype)
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
    return all(_oracle_chunk((op, dtype, inputs[:, i:i + 1]))[2][0] for i in probe)


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
          log=None) -> list:
    """The entries of `selection` [(op, arity, dtype)], in its order: fresh
    cached ones loaded, the others computed in chunks of CHUNK elements and
    written.  With jobs > 1 the chunks of every entry go to one pool of
    processes, up to AHEAD entries ahead, so the workers stay busy while the
    parent draws the next entry's inputs and assembles and saves the last
    one (a pool per entry idled at every entry's end and start).  An entry's
    `oracle_seconds` is the wall from its inputs to its last chunk, so
    entries in flight together overlap."""
    out: list = [None] * len(selection)
    pending: deque = deque()
    pool = ProcessPoolExecutor(jobs) if jobs > 1 else None

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
                parts = [pool.submit(_oracle_chunk, c) if pool else _done(_oracle_chunk(c)) for c in chunks]
            pending.append((i, op, dtype, key, inputs, t0, parts))
            while len(pending) > AHEAD:
                finish(*pending.popleft())
        while pending:
            finish(*pending.popleft())
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return out


# ---------------------------------------------------------------------------
# Measures
# ---------------------------------------------------------------------------

def _classes(bits: np.ndarray, fmt) -> dict:
    """suites/causes.py's reading of float bits (`float_classes`), with the
    magnitude the ULP distance counts."""
    from .suites.causes import float_classes
    b = bits.astype(np.uint64)
    nan, inf, zero, sub, neg = float_classes(b, fmt)
    mag = b & np.uint64(fmt.sign_mask - 1)
    return {"nan": nan, "inf": inf, "zero": zero, "sub": sub, "neg": neg, "mag": mag.astype(np.int64)}


def ulp_errors(e: np.ndarray, a: np.ndarray, fmt) -> np.ndarray:
    """|ordinal(e) - ordinal(a)|, as floats: representable steps between two
    non-NaN patterns (±0 are one point); NaN rows are the caller's."""
    ce, ca = _classes(e, fmt), _classes(a, fmt)
    d_same = np.abs(ce["mag"] - ca["mag"]).astype(np.float64)
    d_opp = ce["mag"].astype(np.float64) + ca["mag"].astype(np.float64)
    return np.where(ce["neg"] == ca["neg"], d_same, d_opp)


def _show(bits, et) -> str:
    """One element's value, from its bits ((re, im) bits for complex), in
    suites/show.py's notation (a NaN's sign and payload show)."""
    from .spec.types import from_bits
    from .suites import show
    return show.element(from_bits(np.asarray([bits]), et)[0], et)


def measure(entry: CacheEntry, actual: np.ndarray) -> dict:
    """Statistics of `actual` (bits, `to_bits` layout) against the entry
    (module docstring).  Each disagreeing element gets the conformance
    suite's cause (suites/causes.py `cause_codes`, input flush included:
    `_input_flushes`); those of `SPECIAL_CAUSES` are counted apart, every
    other element gives its ULP error.  Complex elements are judged per
    component: the element's error is its worse component's, its cause the
    earliest of its differing components'."""
    from .spec.accuracy import tolerance_ulp
    from .suites.causes import CAUSES, cause_codes
    et = _et(entry.dtype)
    c = et.component if et.is_complex else et
    fmt = c.format
    n = entry.expected.shape[0]
    e = entry.expected.astype(np.uint64).reshape(n, -1)        # (n, components)
    a = actual.astype(np.uint64).reshape(n, -1)
    ce, ca = _classes(e, fmt), _classes(a, fmt)
    both_nan = ce["nan"] & ca["nan"]
    ulp = np.where(both_nan, 0.0, ulp_errors(e, a, fmt))
    chosen = np.zeros(n, bool)   # an implementation-defined alternative the backend chose
    for alt in entry.alts:
        alt = alt.astype(np.uint64).reshape(n, -1)
        chosen |= ((alt == a) | (_classes(alt, fmt)["nan"] & ca["nan"])).all(axis=1)
    free = entry.free.copy()
    tol = tolerance_ulp(et)
    differs = ~((e == a) | both_nan).all(axis=1) & ~free & ~chosen
    flushed_in = _input_flushes(entry, a, differs & _subnormal_operand(entry, fmt), fmt, tol)
    idx = np.flatnonzero(differs)
    codes = cause_codes(e[idx], a[idx], c, flushed_ok=flushed_in[idx])
    special = {}
    for k in SPECIAL_CAUSES:
        special[k] = np.zeros(n, bool)
        special[k][idx[codes == CAUSES.index(k)]] = True
    elem_ulp = np.where(chosen, 0.0, ulp.max(axis=1))
    taken = free | chosen | both_nan.all(axis=1)
    for k in SPECIAL_CAUSES:
        taken |= special[k]
    acc = ~taken | chosen   # chosen alternatives count as correctly rounded
    u = elem_ulp[acc]
    doc = {
        "n": int(n), "measured": int(acc.sum()), "free": int(free.sum()),
        "max_ulp": float(u.max()) if u.size else 0.0,
        "mean_ulp": float(u.mean()) if u.size else 0.0,
        "correctly_rounded": float((u == 0).mean()) if u.size else 1.0,
        "within_tolerance": float((u <= tol).mean()) if u.size else 1.0,
        "tolerance_ulp": tol,
        "specials": {k: int(v.sum()) for k, v in special.items()},
        "input_flushes": int((special["subnormal flushed"] & flushed_in).sum()),
    }
    doc["special_disagreements"] = sum(doc["specials"].values())
    if u.size and doc["max_ulp"] > 0:
        i = int(np.flatnonzero(acc)[np.argmax(u)])
        doc["worst"] = _example(entry, actual, i, float(elem_ulp[i]), et)
    doc["special_examples"] = {k: _example(entry, actual, int(np.flatnonzero(v)[0]), None, et)
                               for k, v in special.items() if v.any()}
    doc["profile"] = _profile(entry, elem_ulp, acc, et)
    return doc


def _subnormal_operand(entry: CacheEntry, fmt) -> np.ndarray:
    """Elements with a subnormal operand (component): where a wrong result
    may be the op on flushed inputs (`_input_flushes` decides)."""
    n = entry.expected.shape[0]
    out = np.zeros(n, bool)
    for row in entry.inputs:
        out |= _classes(row.reshape(n, -1), fmt)["sub"].any(axis=1)
    return out


def _input_flushes(entry: CacheEntry, a: np.ndarray, rows: np.ndarray, fmt, tol: int) -> np.ndarray:
    """Which of the elements `rows` (a mask) got what the oracle gives with
    every subnormal operand read as a zero of its sign: an input flush (DAZ),
    as suites/causes.py calls it, established like shlo_conform/input_flush.py
    does for a case — by the spec's result on the flushed inputs (the
    distinct ones, in chunks), never by guessing.  An element meets it where
    each component has its bits (NaN: any NaN), is zero where it is a
    nonzero subnormal (the result flushed too), or, both nonzero finite,
    is within the survey's tolerance `tol`; or meets one of its
    alternatives.  Where the spec states no result on the flushed inputs,
    or the oracle cannot say, no element is called a flush."""
    from .suites.causes import flush_bits
    n = a.shape[0]
    out = np.zeros(n, bool)
    idx = np.flatnonzero(rows)
    if not idx.size:
        return out
    arity = entry.inputs.shape[0]
    flushed = flush_bits(entry.inputs[:, idx], fmt)                    # (arity, m[, 2])
    keys = np.moveaxis(flushed, 0, 1).reshape(idx.size, -1)            # one row per element
    distinct, back = np.unique(keys, axis=0, return_inverse=True)
    cols = np.moveaxis(distinct.reshape((distinct.shape[0], arity) + flushed.shape[2:]), 0, 1)
    try:
        parts = [_oracle_chunk((entry.op, entry.dtype, cols[:, j:j + CHUNK])) for j in range(0, cols.shape[1], CHUNK)]
    except Exception:   # a program the oracle cannot run on these inputs: no flush is established
        return out
    back = back.reshape(-1)
    want = np.concatenate([p[0] for p in parts]).astype(np.uint64).reshape(distinct.shape[0], -1)[back]
    free = np.concatenate([p[2] for p in parts])[back]
    got = a[idx]
    ok = _meets(want, got, fmt, tol)
    k = max(p[1].shape[0] for p in parts)
    for j in range(k):   # pieces without that alternative keep their primary
        alt = np.concatenate([p[1][j] if j < p[1].shape[0] else p[0] for p in parts])
        ok |= _meets(alt.astype(np.uint64).reshape(distinct.shape[0], -1)[back], got, fmt, tol)
    out[idx] = ok & ~free
    return out


def _meets(want: np.ndarray, got: np.ndarray, fmt, tol: int) -> np.ndarray:
    """Per row of component bits: `_input_flushes`' rule of a match."""
    cw, cg = _classes(want, fmt), _classes(got, fmt)
    near = ~cw["zero"] & ~cg["zero"] & ~cw["nan"] & ~cg["nan"] & (ulp_errors(want, got, fmt) <= tol)
    return ((want == got) | (cw["nan"] & cg["nan"]) | (cw["sub"] & cg["zero"]) | near).all(axis=1)


def _example(entry: CacheEntry, a: np.ndarray, i: int, ulp, et) -> dict:
    d = {"inputs": [_show(row[i], et) for row in entry.inputs],
         "expected": _show(entry.expected[i], et), "actual": _show(a[i], et)}
    if ulp is not None:
        d["ulp"] = ulp
    return d


def _profile(entry: CacheEntry, ulp: np.ndarray, acc: np.ndarray, et) -> dict:
    """Max ULP error per bin of the first operand's value (|z| for complex;
    bins of equal count, in value order): what the plots draw, small
    enough for JSON."""
    from .spec.types import from_bits
    idx = np.flatnonzero(acc)
    if not idx.size:
        return {"x": [], "max_ulp": []}
    with np.errstate(all="ignore"):
        z = from_bits(entry.inputs[0][idx], et)
        x = np.abs(z).astype(np.float64) if et.is_complex else z.astype(np.float64)
    finite = np.isfinite(x)
    idx, x = idx[finite], x[finite]
    order = np.argsort(x, kind="stable")
    x, u = x[order], ulp[idx][order]
    bins = np.array_split(np.arange(x.size), min(PROFILE_BINS, x.size)) if x.size else []
    xs, us = [], []
    for b in bins:
        j = b[np.argmax(u[b])]
        xs.append(float(x[j]))
        us.append(float(u[j]))
    return {"x": xs, "max_ulp": us}


# ---------------------------------------------------------------------------
# One backend over the selection
# ---------------------------------------------------------------------------

def _run_one(backend, backend_name: str, describe: str, entry: CacheEntry) -> dict:
    """One op × type on a loaded backend: one compile, one run, the measures;
    a refusal or an exception is the row's status."""
    from .backends.base import Rejected, Unsupported
    from .spec.types import from_bits, to_bits
    et = _et(entry.dtype)
    row = {"op": entry.op, "dtype": entry.dtype, "backend": backend_name, "describe": describe}
    t0 = time.perf_counter()
    if entry.free.all():
        return {**row, "status": "unspecified", "seconds": 0.0,
                "detail": "the spec states no result for this op on this type"}
    try:
        claim = backend.claims(entry.op, entry.dtype)
        if claim:
            raise Unsupported(claim)
        arity, n = entry.inputs.shape[:2]
        exe = backend.compile(program(entry.op, arity, n, entry.dtype))
        [out] = backend.run(exe, [from_bits(r, et) for r in entry.inputs])
        out = np.asarray(out)
        if out.dtype != np.dtype(et.numpy) or out.size != n:
            raise ValueError(f"output {out.dtype} {out.shape} where tensor<{n}x{et.mlir}> was declared")
        row.update(status="measured", **measure(entry, to_bits(out, et)))
    except Rejected as ex:
        row.update(status="rejected", detail=str(ex)[:300])
    except Unsupported as ex:
        row.update(status="unsupported", detail=str(ex)[:300])
    except Exception as ex:   # the backend failed on this op × type: recorded, the survey goes on
        row.update(status="error", detail=f"{type(ex).__name__}: {ex}"[:300])
    row["seconds"] = round(time.perf_counter() - t0, 3)
    return row


_LOADED: dict = {}   # in a survey's job process: backend name -> (adapter, describe), loaded once


def survey_entry(backend_name: str, path: str) -> dict:
    """One cached entry on a backend (runs in the backend's isolated job
    process, shlo_conform/isolation.py): the adapter is loaded at the first
    entry and kept for the next ones."""
    from .backends.base import load_backend
    if backend_name not in _LOADED:
        try:
            backend = load_backend(backend_name)
            _LOADED[backend_name] = (backend, backend.describe())
        except Exception as ex:
            return {"status": "load error", "detail": f"{type(ex).__name__}: {ex}"[:300]}
    backend, describe = _LOADED[backend_name]
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
    from .isolation import Failure, Jobs
    rows: list = []
    with tempfile.TemporaryDirectory(prefix="shlo-conform-") as tmp, Jobs(tmp, label=backend_name) as jobs:
        for e, path in zip(entries, paths):
            base = {"op": e.op, "dtype": e.dtype, "backend": backend_name}
            r = jobs.call("shlo_conform.accuracy:survey_entry", backend_name, str(path), timeout=timeout)
            if isinstance(r, Failure):
                why = {"crash": "the backend's process died", "timeout": f"no answer in {timeout:g} s"}.get(r.kind, r.kind)
                r = {**base, "status": r.kind if r.kind in ("crash", "timeout") else "error",
                     "detail": f"{why}: {r.detail}"[:300], "seconds": 0.0}
            elif r.get("status") == "load error":
                rows += [{**{"op": x.op, "dtype": x.dtype, "backend": backend_name}, "status": "error",
                          "detail": f"the backend did not load: {r['detail']}", "seconds": 0.0}
                         for x in entries[len(rows):]]
                break
            rows.append(r)
            if log:
                log(f"{backend_name}: {r['op']} {r['dtype']}: {r['status']} ({r['seconds']:.1f} s)")
    return rows


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
           jobs: int = 1, regenerate: bool = False, log=None, timeout: float = DEFAULT_ENTRY_TIMEOUT) -> dict:
    """The whole survey: expectations (cached), then each backend."""
    t0 = time.perf_counter()
    selection = [(op, arity, d) for op, arity in ops.items() for d in dtypes
                 if accepts(op, arity, d)]   # complex types: the ops the spec defines on them
    entries = build(selection, size, seed, cache_dir, jobs, regenerate, log)
    paths = [entry_path(cache_dir, op, d) for op, _, d in selection]
    t_oracle = time.perf_counter() - t0
    rows, timing = [], {"expectations_s": round(t_oracle, 2)}
    for b in backends:
        t1 = time.perf_counter()
        rows += run_backend(b, entries, paths, log, timeout)
        timing[f"backend_{b}_s"] = round(time.perf_counter() - t1, 2)
    return {"kind": "accuracy-survey", "format_version": FORMAT_VERSION, "seed": seed, "size": size,
            "backends": backends, "ops": list(ops), "dtypes": dtypes, "timing": timing,
            "cache": {e.op + "/" + e.dtype: e.meta for e in entries}, "rows": rows}
