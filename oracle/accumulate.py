"""Whole-array accumulations (spec/bounds.py's `Answers`) into the expectation record.

An op's semantics may give a result as an `Answers` record instead of an
object array of element answers.  This module states the same
`Expectation` `elementwise.assemble` would build from the per-element
answers — bit for bit: the same primary bits, bounds, implementation-
defined elements, alternatives (labels, order) and reasons — with numpy
over the whole array:

* RANGE elements: the enclosures of s, s − b, s + b (each a pair of
  float64 or long double arrays) are rounded into the result's format —
  to nearest for s, toward −∞ for s − b, toward +∞ for s + b, the same
  rules as `rounding.round_bits` / `round_directed` (`round_fast`: one
  correct rounding to nearest, then one step in the format where the
  rounded value lies on the wrong side).  Where both ends of every
  enclosure give the same bits, every real inside does, the exact one
  included: the element is decided.  The next stage encloses the others
  again; what every stage leaves goes to `Answers.element`, the exact
  per-element route, and `elementwise.resolve`.
* VALUE elements: exact values (floats with their specials; integers,
  wrapped and labelled by `resolve` where they leave the type).
* OVER elements: the primary (an infinity, or s rounded to nearest) with
  the "any value" alternative.
* Complex results: a record of shape + (2,) over the component type
  states re and im as two real elements (spec/ops/fft.py), judged as
  above and laid out as complex bits (`_complex`).
* Labels: `Answers.probes` holds one answer per kind as the per-element
  route writes it; resolved once, it names the alternatives every element
  of that kind offers (its primary's bits are the element's own).
"""
from __future__ import annotations

import numpy as np

from ..spec import bounds
from ..spec.bounds import ELEMENT, OVER, RANGE, VALUE, Answers
from ..spec.dsl import Accumulating
from ..spec.expectation import Expectation
from ..spec.kinds.bounded import BOUNDED
from ..spec.kinds.exact import EXACT
from ..spec.types import ElementType, TensorType, from_bits, to_bits
from .fast import round_fast
from .semantics import on_arrays

CHUNK = 1 << 16
STATS: list = []   # per record: elements decided at each stage, and left to the exact route (bench/accumulations.py)


def expectation(ans: Answers, t: TensorType) -> Expectation:
    """The Expectation of result type `t` from the record (module docstring)."""
    from .elementwise import alternative_records, resolve   # elementwise and this module import each other lazily

    et = t.element_type
    shape = tuple(int(d) for d in t.shape)
    size = int(np.prod(shape, dtype=np.int64))
    if et.is_complex and tuple(ans.shape) == shape + (2,):   # stated component by component (re, im)
        return _complex(expectation(ans, TensorType(shape + (2,), et.component)), t)
    if tuple(ans.shape) != shape or len(ans.kind) != size:
        raise ValueError(f"whole-array answers of shape {ans.shape} for {t.mlir}")
    if et.is_complex:
        raise TypeError("complex results take the per-element route")
    wrap = ans.wrap or (lambda a: a)
    kind = np.asarray(ans.kind)
    prim = np.zeros(size, dtype=et.bits_dtype)
    lo = np.zeros(size, dtype=et.bits_dtype)
    hi = np.zeros(size, dtype=et.bits_dtype)
    cat = np.full(size, -1, dtype=np.int8)    # the kind whose pattern an element follows; -1: resolved alone
    per: dict = {}

    # Values
    at = np.flatnonzero(kind == VALUE)
    if len(at):
        if et.is_float:
            at = _alone_if_nan(at, ans, et, per, wrap)
            prim[at] = value_bits(np.asarray(ans.value[at], dtype=np.float64), et)
            cat[at] = VALUE
        else:
            ok, bits = _integer_bits(ans.value[at], et)
            prim[at[ok]] = bits[ok]
            cat[at[ok]] = VALUE
            for i in at[~ok].tolist():
                per[i] = resolve(wrap(int(ans.value[i])), et)
    at = np.flatnonzero((kind == OVER) & ans.over_value)
    if len(at):
        at = _alone_if_nan(at, ans, et, per, wrap)
        prim[at] = value_bits(np.asarray(ans.value[at], dtype=np.float64), et)
        cat[at] = OVER

    # Ranges (and overflow primaries), stage by stage
    todo = np.flatnonzero((kind == RANGE) | ((kind == OVER) & ~ans.over_value))
    if len(todo) and not et.is_float:
        raise TypeError("ranges of a non-float result")
    tally = {"elements": size}
    for k, stage in enumerate(ans.stages):
        tally[f"stage {k + 1}"] = len(todo)
        left = []
        for start in range(0, len(todo), CHUNK):   # cache-sized pieces: numpy's temporaries stay small
            part = todo[start:start + CHUNK]
            ends = kind[part] == RANGE
            s, l, h = stage(part)
            ok, pb = decide(s, et, 0)
            okl, lb = decide(l, et, -1)
            okh, hb = decide(h, et, 1)
            done = ok & (~ends | (okl & okh))
            idx = part[done]
            prim[idx] = pb[done]
            r = ends[done]
            lo[idx[r]], hi[idx[r]] = lb[done][r], hb[done][r]
            cat[idx] = np.where(r, RANGE, OVER)
            left.append(part[~done])
        todo = np.concatenate(left) if left else todo
        tally[f"stage {k + 1}"] -= len(todo)
        if not len(todo):
            break
    alone = sorted(set(todo.tolist()) | set(np.flatnonzero(kind == ELEMENT).tolist()))
    tally["exact route"] = len(alone)
    STATS.append(tally)
    del STATS[:-16]
    for i in alone:
        per[i] = resolve(wrap(ans.element(i)), et)

    # Labels: one pattern per kind, from its probe
    pats = {}
    for c in (RANGE, VALUE, OVER):
        if not (cat == c).any():
            continue
        p = resolve(wrap(ans.probes[c]), et)
        if p.options[0][1] is None or any(b is not None for _, b in p.options[1:]) or p.undecided:
            for i in np.flatnonzero(cat == c).tolist():   # not one primary plus wildcards: element by element
                per[i] = resolve(wrap(ans.element(i)), et)
            cat[cat == c] = -1
            continue
        pats[c] = p
    for i, r in per.items():
        prim[i] = r.options[0][1]
        cat[i] = -1
    return _assemble_patterns(ans, t, prim, lo, hi, cat, pats, per, alternative_records)


def _complex(comp: Expectation, t: TensorType) -> Expectation:
    """The record of complex result type `t` from the record of its
    components (shape + (2,) over the component type: re, im) — the layout
    of complex bits, so bits, bounds and alternatives carry over; flat
    component indices become element indices.  The record's contract: both
    components of an element are implementation-defined alike (the same
    alternatives), as an element answer of a complex element is."""
    from dataclasses import replace

    def elements(idx):
        return sorted({int(i) // 2 for i in idx})

    alts = [a if a.elements is None else replace(a, elements=elements(a.elements)) for a in comp.alternatives]
    return replace(comp, type=t, impl_defined=elements(comp.impl_defined), alternatives=alts)


def _assemble_patterns(ans, t, prim, lo, hi, cat, pats, per, alternative_records) -> Expectation:
    """elementwise.assemble's record, from patterns for the elements of a
    kind and resolved answers for the others."""
    shape = tuple(int(d) for d in t.shape)
    events = sorted([(int(np.flatnonzero(cat == c)[0]), p) for c, p in pats.items()] + list(per.items()),
                    key=lambda e: e[0])
    labels: list = []
    for _, r in events:
        if r.options[0][0] is not None:
            for label, _ in r.options:
                if label not in labels:
                    labels.append(label)
    wildcards = {label for _, r in events for label, b in r.options if b is None}
    impl_mask = np.zeros(len(prim), dtype=bool)
    for c, p in pats.items():
        if p.options[0][0] is not None:
            impl_mask |= cat == c
    per_impl = [i for i, r in per.items() if r.options[0][0] is not None]
    impl_mask[per_impl] = True
    impl = np.flatnonzero(impl_mask).tolist()
    alternatives = {}
    for label in labels:
        if label in wildcards:
            offer = np.zeros(len(prim), dtype=bool)
            for c, p in pats.items():
                if p.options[0][0] is not None and any(l2 == label for l2, _ in p.options):
                    offer |= cat == c
            for i in per_impl:
                if any(l2 == label for l2, _ in per[i].options):
                    offer[i] = True
            alternatives[label] = np.flatnonzero(offer).tolist()
            continue
        alt = prim.copy()
        for i in per_impl:
            for l2, b in per[i].options:
                if l2 == label:
                    alt[i] = b
        alternatives[label] = alt.reshape(shape)
    why = "; ".join(dict.fromkeys(w for _, r in events for w in r.whys))
    undecided = sorted(i for i, r in per.items() if r.undecided)
    if undecided:
        why = (why + "; " if why else "") + f"rounding undecided at elements {undecided[:10]}"
    exp = Expectation(t, prim.reshape(shape), EXACT.name, 0, False, impl, alternative_records(alternatives), why)
    ranged = RANGE in pats or any(r.bounds is not None for r in per.values())
    if ranged:
        lo_b = np.where(cat == RANGE, lo, prim)
        hi_b = np.where(cat == RANGE, hi, prim)
        for i, r in per.items():
            if r.bounds is not None:
                lo_b[i], hi_b[i] = r.bounds
        exp.kind = BOUNDED.name
        exp.lo, exp.hi = lo_b.reshape(shape), hi_b.reshape(shape)
    return exp


# --------------------------------------------------------------------------
# Rounding enclosures into the format
# --------------------------------------------------------------------------

def decide(enc: tuple, et: ElementType, direction: int) -> tuple[np.ndarray, np.ndarray]:
    """(decided, bits): both ends of each enclosure (a, z) rounded into the
    format — to nearest (direction 0), toward −∞ (−1) or +∞ (+1) — agree,
    and lie within the finite range (larger ones go to the exact route)."""
    a, z = enc
    with np.errstate(invalid="ignore"):
        if direction == 0:   # to nearest, overflow included (±∞, NaN in f8E4M3FN)
            fin = np.isfinite(a) & np.isfinite(z)
        else:
            top = a.dtype.type(et.format.max_finite)
            fin = (np.abs(a) <= top) & (np.abs(z) <= top)   # NaN compares false
    if not fin.all():
        a = np.where(fin, a, a.dtype.type(0))
        z = np.where(fin, z, z.dtype.type(0))
    if direction < 0:   # RD(a) = RD(z) exactly when RD(z) ≤ a (RD(z) is a value of the format ≤ z)
        bz = directed_bits(z, et, -1)
        return fin & (_value(bz, et) <= a), bz
    if direction > 0:   # RU(a) = RU(z) exactly when RU(a) ≥ z — but for −0 (a < 0 = z: +0 from 0, −0 below)
        ba = directed_bits(a, et, 1)
        va = _value(ba, et)
        return fin & (va >= z) & ~((va == 0) & (z == 0) & (a < 0)), ba
    ba, bz = directed_bits(a, et, 0), directed_bits(z, et, 0)
    return fin & (ba == bz), ba


def _value(bits: np.ndarray, et: ElementType) -> np.ndarray:
    """The values of bit patterns of a float format, as float64 (exact)."""
    native = _NATIVE.get(et.format.bits) if et.format.precision in (24, 53) else None
    if native is not None:
        return bits.view(native[0]).astype(np.float64)
    return from_bits(bits, et).astype(np.float64)


_NATIVE = {32: (np.float32, np.uint32), 64: (np.float64, np.uint64)}


def directed_bits(x: np.ndarray, et: ElementType, direction: int) -> np.ndarray:
    """Bits of x (float64, or long double for f64; finite, within the
    format's range) rounded to nearest even (0), down (−1) or up (+1):
    `rounding.round_bits` and `round_directed` on the exact value of x.
    f32 and f64: numpy's cast (one rounding to nearest even, subnormals
    included), then one step on the bit pattern where the rounded value lies
    on the wrong side; other formats: `round_fast` and the same step on
    the format's ordinals."""
    fmt = et.format
    x = x + x.dtype.type(0)   # −0.0 is the real 0, whose rounding is +0 (round_bits of Fraction 0)
    if direction == 0 and not fmt.has_inf:   # f8E4M3FN: past the threshold, NaN with the value's sign
        # strictly past the threshold: the tie at it rounds to the (even) largest finite;
        # `overflow_bits`: NaN of that sign (FN, FNUZ), ±max_finite where there is no NaN (f4, f6)
        big = np.abs(x) > x.dtype.type(bounds.bracket(bounds.threshold(fmt), x.dtype.type)[0])
        if big.any():
            nan = np.where(x < 0, fmt.overflow_bits(True), fmt.overflow_bits(False)).astype(et.bits_dtype)
            return np.where(big, nan, directed_bits(np.where(big, 0, x), et, 0)).astype(et.bits_dtype)
    native = _NATIVE.get(fmt.bits) if fmt.precision in (24, 53) else None
    if native is not None:
        ft, ut = native
        with np.errstate(over="ignore"):
            r = x.astype(ft)
        bits = r.view(ut)
        if direction == 0:
            return bits
        wrong = (r > x) if direction < 0 else (r < x)
        if not wrong.any():
            return bits
        sign = ut(fmt.sign_mask)
        neg = (bits & sign) != 0
        # down: a positive value's pattern − 1, a negative one's + 1, +0 → −min; up: mirrored, −0 → +min,
        # −min → +0 (the ordinals' zero, as rounding.py's `_step` lands on it)
        if direction < 0:
            step = np.where(neg, bits + ut(1), np.where(bits == 0, sign | ut(1), bits - ut(1)))
        else:
            step = np.where(~neg, bits + ut(1), np.where(bits == sign, ut(1),
                                                         np.where(bits == sign | ut(1), ut(0), bits - ut(1))))
        return np.where(wrong, step, bits)
    r = round_fast(x, fmt)                       # float64, correctly rounded to nearest even
    if direction == 0:
        return to_bits(r.astype(et.numpy), et)
    wrong = (r > x) if direction < 0 else (r < x)
    bits = to_bits(r.astype(et.numpy), et).astype(np.int64)
    sign = fmt.sign_mask
    o = np.where(bits & sign, -(bits & ~sign), bits) + direction
    # no sign (f8E8M0FNU): nothing lies below the smallest value (pattern 0), so no lower bound: NaN
    below = np.where(o < 0, (-o) | sign, o) if fmt.signed else np.where(o < 0, fmt.nan_bits(), o)
    return np.where(wrong, below, bits).astype(et.bits_dtype)


def _alone_if_nan(at: np.ndarray, ans: Answers, et: ElementType, per: dict, wrap) -> np.ndarray:
    """`at` less its NaN values where the format has no NaN (f4E2M1FN,
    f6…): those are resolved element by element (`per`), where the
    elementwise route states what a NaN is there (`elementwise.no_nan`)."""
    if et.format.has_nan:
        return at
    from .elementwise import resolve
    nan = np.isnan(np.asarray(ans.value[at], dtype=np.float64))
    for i in at[nan].tolist():
        per[i] = resolve(wrap(float("nan")), et)
    return at[~nan]


def value_bits(v: np.ndarray, et: ElementType) -> np.ndarray:
    """Bits of exact float64 values (every spec format is a subset of
    binary64): NaN → the canonical quiet NaN, ±∞ → ±∞ (NaN in f8E4M3FN),
    −0 → −0 where the format has one (a product's zero keeps its sign)."""
    fmt = et.format
    with np.errstate(invalid="ignore", over="ignore"):
        finite = np.isfinite(v)
        out = np.zeros(len(v), dtype=et.bits_dtype)
        if finite.any():
            out[finite] = directed_bits(v[finite], et, 0) if fmt.precision < 53 else to_bits(v[finite], et)
        minus_zero = finite & (v == 0) & np.signbit(v)
        if minus_zero.any() and fmt.has_negative_zero:
            out[minus_zero] |= np.asarray(fmt.sign_mask, dtype=et.bits_dtype)
        inf = np.isinf(v)
        if inf.any():
            if fmt.has_inf:
                out[inf] = np.where(v[inf] < 0, fmt.inf_bits(True), fmt.inf_bits(False))
            elif fmt.has_nan:
                out[inf] = fmt.nan_bits()
            else:   # f4E2M1FN, f6…: ±inf clamps to ±max_finite (rounding.py)
                out[inf] = np.where(v[inf] < 0, fmt.overflow_bits(True), fmt.overflow_bits(False))
        nan = np.isnan(v)
        if nan.any():   # never in a format without NaN: `_alone_if_nan` takes those first
            out[nan] = fmt.nan_bits()
    return out


def _integer_bits(v: np.ndarray, et: ElementType) -> tuple[np.ndarray, np.ndarray]:
    """(in range, bits) of exact integers (bool for i1)."""
    v = np.asarray(v)
    if et.is_bool:
        return np.ones(len(v), dtype=bool), v.astype(np.uint8)
    ok = np.asarray((v >= et.min_value) & (v <= et.max_value), dtype=bool)
    w = np.where(ok, v, 0).astype(np.int64 if et.is_signed else np.uint64)
    mask = (1 << et.bits) - 1
    if et.is_signed:
        bits = (w & np.int64(mask if et.bits < 64 else -1)).astype(np.uint64 if et.bits == 64 else np.int64)
    else:
        bits = w & np.uint64(mask)
    return ok, bits.astype(et.bits_dtype)


@on_arrays(Accumulating)
def run_accumulating(sem: Accumulating, inst, operands: list, results: list) -> list:
    """Each result's element answers (object arrays) resolved as element-wise
    answers are: exact, or bounded where an element has a `Range`.  A
    result given whole (`spec.bounds.Answers`) is stated by accumulate.py,
    the same record on whole arrays."""
    from .elementwise import assemble, resolve
    outs = sem.fn(inst, *operands)
    if len(outs) != len(results):
        raise ValueError(f"{inst.spec.mnemonic}: semantics gave {len(outs)} results for {len(results)} result types")
    exps = []
    for answers, t in zip(outs, results):
        if isinstance(answers, Answers):
            exps.append(expectation(answers, t))
            continue
        answers = np.asarray(answers, dtype=object)
        if tuple(answers.shape) != tuple(int(d) for d in t.shape):
            raise ValueError(f"{inst.spec.mnemonic}: semantics gave shape {answers.shape} for {t.mlir}")
        per_element = [resolve(v, t.element_type) for v in answers.reshape(-1)]
        exps.append(assemble(per_element, t, "exact", False))
    return exps
