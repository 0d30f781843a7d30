"""Tolerances carried through a program: what may come out downstream of an approximate result.

An approximate op (sine: within `tolerance_ulp` of the correctly rounded
value, spec/accuracy.py) may return any value of a small range; an op that
consumes it may then produce whatever its semantics give on any point of
that range.  A suite case holds one op, so its expectations never need
this; programs from the wild chain ops (`jnp.sin(x) * 2`), and judging the
multiply exactly on the correctly rounded sine would fail every backend
whose sine is one ULP off.

So the oracle runs each op on the primary values (program.py) and, when an
operand is *ranged* (kind "ulp" with a tolerance, or "bounded"), again on
every corner of the operands' ranges — each ranged operand at its low or
its high end, at most 2**MAX_RANGED runs.  Per element the result may lie
anywhere between the smallest and the largest of these values, widened by
the op's own tolerance: a "bounded" expectation.

This is exact for ops monotonic in each operand over the range (arithmetic,
exp, log, roots, conversions, comparisons, data movement); near an extremum
inside a range a few ULPs wide (sine at π/2) it can miss the curvature over
those ULPs — a documented limit, not a hidden one (docs/architecture.md).
Where the corners disagree on NaN-ness (a range that crosses a pole), the
element may be anything and says so: an "any value" alternative, labelled.
A tuple operand is one operand here, all its members at the same end; a
complex operand moves both components to the same end.
"""
from __future__ import annotations

import itertools

import numpy as np

from ..spec.expectation import Alternative, Expectation
from ..spec.types import from_bits, from_ordinals, nan_mask, ordinals

MAX_RANGED = 4
CROSSES = "any value: the range of an approximate input crosses NaN"
PRIMARY = "the value on the correctly rounded inputs"
WHY = "an input is approximate upstream: range from the ends of the inputs' ranges (oracle/propagation.py)"


def is_ranged(v) -> bool:
    if isinstance(v, tuple):
        return any(is_ranged(m) for m in v)
    return v.kind == "bounded" or (v.kind == "ulp" and v.tolerance_ulp > 0)


def _bounds(e: Expectation) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) ordinals of an expectation's range, per component."""
    et = e.type.element_type
    if e.kind == "bounded":
        return ordinals(e.lo, et), ordinals(e.hi, et)
    o = ordinals(e.bits, et)
    if e.kind != "ulp":
        return o, o
    c = et.component if et.is_complex else et
    top = c.format.inf_bits(False)
    lo = np.maximum(o - e.tolerance_ulp, -top)
    hi = np.minimum(o + e.tolerance_ulp, top)
    nan = nan_mask(np.asarray(e.bits).astype(object), c.format).astype(bool)
    return np.where(nan, o, lo), np.where(nan, o, hi)


def _end(v, which: int):
    """The values of `v` at one end of its range (0: low, 1: high); tuples member-wise."""
    if isinstance(v, tuple):
        return tuple(_end(m, which) for m in v)
    if not is_ranged(v):
        return v.array()
    et = v.type.element_type
    return from_bits(from_ordinals(_bounds(v)[which], et), et)


def _primary(v):
    return tuple(_primary(m) for m in v) if isinstance(v, tuple) else v.array()


def carry(run_op, inst, inputs: list, outs: list) -> list:
    """`outs` (the op on the primary values) with the ranges of `inputs`
    carried into them; unchanged when no input is ranged."""
    ranged = [i for i, v in enumerate(inputs) if is_ranged(v)]
    if not ranged:
        return outs
    if len(ranged) > MAX_RANGED:
        return [_noted(o, f"tolerances of {len(ranged)} approximate inputs not carried (more than {MAX_RANGED})")
                for o in outs]
    corners = []
    for ends in itertools.product((0, 1), repeat=len(ranged)):
        which = dict(zip(ranged, ends))
        arrays = [_end(v, which[i]) if i in which else _primary(v) for i, v in enumerate(inputs)]
        try:
            corners.append(run_op(inst, arrays))
        except Exception:  # the spec states no result at this corner: it does not narrow anything
            continue
    return [_widen(o, [c[j] for c in corners]) for j, o in enumerate(outs)]


def _all_leaves(v) -> list:
    return [leaf for m in v for leaf in _all_leaves(m)] if isinstance(v, tuple) else [v]


def payloads(inputs: list, outs: list) -> list:
    """`outs` with NaN payloads significant only where the inputs' were: a
    data-movement op claims bit-exact results (it moves bits), but the
    payload of a NaN that an op before it computed is not fixed by the spec
    (NaN is NaN there), so moving it fixes nothing either.  Program inputs
    and constants are bit-exact; a result is bit-exact when its op says so
    and every operand is."""
    if all(leaf.bit_exact for v in inputs for leaf in _all_leaves(v)):
        return outs
    for leaf in (leaf for o in outs for leaf in _all_leaves(o)):
        leaf.bit_exact = False
    return outs


def _noted(o, note: str):
    if isinstance(o, tuple):
        return tuple(_noted(m, note) for m in o)
    o.why = "; ".join(w for w in (o.why, note) if w)
    return o


def _widen(primary, corners: list):
    if isinstance(primary, tuple):
        return tuple(_widen(m, [c[k] for c in corners]) for k, m in enumerate(primary))
    et = primary.type.element_type
    c = et.component if et.is_complex else et
    lows, highs = [], []
    for e in [primary] + corners:
        lo, hi = _bounds(e)
        lows.append(lo)
        highs.append(hi)
    lo, hi = lows[0], highs[0]
    for a, b in zip(lows[1:], highs[1:]):
        lo, hi = np.minimum(lo, a), np.maximum(hi, b)
    wild = np.zeros(np.shape(primary.bits), dtype=bool)
    if c.is_float:
        nans = [nan_mask(np.asarray(e.bits).astype(object), c.format).astype(bool) for e in [primary] + corners]
        wild = np.any([n != nans[0] for n in nans[1:]], axis=0) if len(nans) > 1 else wild
        lo = np.where(nans[0], ordinals(primary.bits, et), lo)
        hi = np.where(nans[0], ordinals(primary.bits, et), hi)
    if primary.kind == "exact" and np.array_equal(lo, hi) and not wild.any():
        return primary   # every corner gave the same value: nothing to carry
    out = Expectation(primary.type, primary.bits, "bounded", primary.tolerance_ulp, False,
                      list(primary.impl_defined), list(primary.alternatives),
                      "; ".join(w for w in (primary.why, WHY) if w),
                      lo=from_ordinals(lo, et), hi=from_ordinals(hi, et))
    flat_wild = wild.reshape(-1, 2).any(axis=1) if et.is_complex else wild.reshape(-1)
    elements = [int(i) for i in np.nonzero(flat_wild)[0]]
    if elements:
        out.impl_defined = sorted(set(out.impl_defined) | set(elements))
        if not out.alternatives:   # the first alternative names the primary value's choice
            out.alternatives.append(Alternative(PRIMARY, primary.bits))
        out.alternatives.append(Alternative(CROSSES, None, elements))
    return out
