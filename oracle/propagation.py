"""Tolerances carried through a program: what may come out downstream of an approximate result.

An approximate op (sine: within `tolerance_ulp` of the correctly rounded
value, spec/accuracy.py) may return any value of a small range; an op that
consumes it may then produce whatever its semantics give on any point of
that range.  A suite case holds one op, so its expectations never need
this; programs from the wild chain ops (`jnp.sin(x) * 2`), and judging the
multiply exactly on the correctly rounded sine would fail every backend
whose sine is one ULP off.

So the oracle runs each op on the primary values (program.py) and, when an
operand is *ranged* (its kind admits more than its bits: `Kind.ranged`,
spec/kinds — ulp with a tolerance, bounded), again on
every corner of the operands' ranges — each ranged operand at its low or
its high end, at most 2**MAX_RANGED runs.  Per element the result may lie
anywhere between the smallest and the largest of these values, widened by
the op's own tolerance: a bounded expectation (spec/kinds/bounded.py).

This is exact for ops monotonic in each operand over the range (arithmetic,
exp, log, roots, conversions, comparisons, data movement); near an extremum
inside a range a few ULPs wide (sine at π/2) it can miss the curvature over
those ULPs — a documented limit, not a hidden one (docs/architecture.md).
A corner moves a whole operand to one end, so an op must be monotonic in
it the same way at every element: dot_general and convolution are not
(where the other operand has mixed signs, an extreme takes some elements
low and others high).  An op whose semantics declare it bilinear
(`dsl.Accumulating.bilinear`) is carried by interval arithmetic on whole
arrays instead (bilinear.py): the range of each sum of products, the op's
own schedule allowance over the whole box included.  Element-wise
multiply needs no such route: each of its elements is a·b of one element
of each range, whose extremes over a rectangle are its vertices — the
four corner runs.
One value passed as two operands moves as one where the op declares
fn(x, x) monotone or constant (`Elementwise.same_operand`: compare, add,
subtract, maximum, minimum; `_moved_together`): JAX's NaN test x != x is
then exact on a NaN-free range instead of "true or false", which had made
every softplus (logaddexp selects on it) as wide as both its branches.
Where the corners disagree on NaN-ness (a range that crosses a pole), the
element may be anything and says so: an "any value" alternative, labelled.
A tuple operand is one operand here, all its members at the same end; a
complex operand moves both components to the same end — sound for ops that
act on each component alone; abs, multiply, divide, a product reduction
and comparisons of complex ranges are carried by interval arithmetic
instead (complex_ranges.py, which also states a complex LU's diagonal).
A reduce whose body selects the best element (argmax, argmin:
spec/selection.py) takes the corners for the best value, which is monotone
in every leaf, but not for its index, which is not: the index is every
leaf whose range reaches the best of the row's worst ends (`_selected`).
Downstream of a result the spec defines by a property (cholesky's factor:
a residual expectation) no value is stated: characterized.downstream
keeps the property where an op passes it through unchanged and offers
"any value", labelled, elsewhere.
"""
from __future__ import annotations

import contextlib
import contextvars
import copy
import itertools

import numpy as np

from ..spec.expectation import Alternative, Expectation
from ..spec.kinds import kind_of
from ..spec.kinds.bounded import BOUNDED
from ..spec.kinds.residual import RESIDUAL
from ..spec import selection
from ..spec.types import from_bits, from_ordinals, nan_mask, ordinals, to_bits
from . import bilinear, characterized, complex_ranges

MAX_RANGED = 4
CROSSES = "any value: the range of an approximate input crosses NaN"
PRIMARY = "the value on the correctly rounded inputs"
WHY = "an input is approximate upstream: range from the ends of the inputs' ranges (oracle/propagation.py)"


def is_ranged(v) -> bool:
    if isinstance(v, tuple):
        return any(is_ranged(m) for m in v)
    return kind_of(v).ranged(v)


def _nans(bits, et) -> np.ndarray:
    """Which bit patterns are NaN (per component for complex; none for
    non-float types)."""
    c = et.component if et.is_complex else et
    return nan_mask(bits, c.format) if c.is_float else np.zeros(np.shape(bits), dtype=bool)


CHUNK = 1 << 16   # elements per pass over a range: the temporaries stay in cache


def _bounds(e: Expectation, part: slice = slice(None)) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) ordinals of an expectation's range, per component,
    flattened (1-d: numpy's ufuncs give scalars for 0-d arrays), over the
    stretch `part` of the flat components."""
    got = kind_of(e).admits(e, part)
    if got is None:   # a kind that states no range (a distribution): its own bits
        o = ordinals(np.reshape(e.bits, -1)[part], e.type.element_type)
        return o, o
    return got


def _parts(e: Expectation):
    """Slices of CHUNK over an expectation's flat components."""
    n = int(np.size(e.bits))
    return [slice(i, i + CHUNK) for i in range(0, n, CHUNK)] or [slice(None)]


def value_ends(v) -> tuple:
    """(low, high): the values of `v` at each end of its range; tuples member-wise."""
    if isinstance(v, tuple):
        pairs = [value_ends(m) for m in v]
        return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
    if not is_ranged(v):
        a = v.array()
        return a, a
    et = v.type.element_type
    ends = [np.empty(np.size(v.bits), dtype=et.bits_dtype) for _ in (0, 1)]
    for part in _parts(v):
        for end, b in zip(ends, _bounds(v, part)):
            end[part] = from_ordinals(b, et)
    return tuple(from_bits(end.reshape(np.shape(v.bits)), et) for end in ends)


def _primary(v):
    return tuple(_primary(m) for m in v) if isinstance(v, tuple) else v.array()


def carry(run_op, inst, inputs: list, outs: list, arrays: list | None = None) -> list:
    """`outs` (the op on the primary values, `arrays` when the caller has
    them) with the ranges of `inputs` carried into them, and "any value"
    wherever an input element the spec leaves open reaches (`_open`);
    unchanged when no input is ranged or open.  Each run is the op on whole
    arrays."""
    return _open(run_op, inst, inputs, _carry(run_op, inst, inputs, outs, arrays), arrays)


OPEN = "any value: computed from an element the spec leaves open upstream (oracle/propagation.py)"
_FOLLOWED_ELSEWHERE = contextvars.ContextVar("open_elements_followed_elsewhere", default=False)


@contextlib.contextmanager
def open_elements_followed_here():
    """A walk that follows open elements itself (a decomposition's steps:
    decomposition._open, with NaN probes and its own label) turns `_open`
    off inside it, so an element is opened once, by one rule."""
    token = _FOLLOWED_ELSEWHERE.set(True)
    try:
        yield
    finally:
        _FOLLOWED_ELSEWHERE.reset(token)
POISONS = (np.nan, np.inf, -np.inf)   # what an open float element is set to, one run each


def _open_elements(v) -> list:
    """Flat indices of `v`'s elements an "any value" alternative leaves open
    — not those downstream of a property-defined result, which
    characterized.downstream follows by its own rule (the property, where
    an op passes it through)."""
    if isinstance(v, tuple) or not isinstance(v, Expectation) or RESIDUAL.judges(v):
        return []
    return sorted({int(i) for a in v.alternatives if a.bits is None and a.label != characterized.DOWNSTREAM
                   for i in (a.elements or ())})


def _open(run_op, inst, inputs: list, outs: list, arrays) -> list:
    """Outputs with "any value" wherever an open input element reaches.  An
    element a backend may give any value (a dot product whose partial sums
    overflow to both infinities: NaN or any number) is not the primary
    value the run used, so what is computed from it is open too — maximum(·,
    0) of it made 0 "exact" and called the backend's NaN wrong.  Which
    output elements it reaches is found by running the op with the open
    elements set to NaN, +inf and -inf in turn (integers: their extremes):
    an output element that changes in any run depends on them."""
    if _FOLLOWED_ELSEWHERE.get():
        return outs
    open_in = {i: _open_elements(v) for i, v in enumerate(inputs)}
    open_in = {i: e for i, e in open_in.items() if e}
    if not open_in or any(isinstance(o, tuple) for o in outs):
        return outs
    primary = list(arrays) if arrays is not None else [_primary(v) for v in inputs]
    reached = [np.zeros(int(np.size(o.bits)), dtype=bool) for o in outs]
    for k in range(len(POISONS)):
        trial = list(primary)
        for i, elements in open_in.items():
            a = np.array(trial[i], copy=True)
            flat = a.reshape(-1)
            et = inputs[i].type.element_type
            if et.is_float or et.is_complex:
                flat[elements] = POISONS[k]
            elif et.is_integer or et.is_quantized:   # a quantized tensor's storage integers
                st = et.storage_type if et.is_quantized else et
                flat[elements] = (st.min_value, st.max_value, 0)[k]
            trial[i] = a
        try:
            got = run_op(inst, trial)
        except Exception:   # the spec states no result on these values: every element may be anything
            got = None
        for j, o in enumerate(outs):
            if got is None or isinstance(got[j], tuple):
                reached[j][:] = True
                continue
            a, b = np.reshape(o.bits, -1), np.reshape(got[j].bits, -1)
            differs = a != b
            if o.type.element_type.is_complex:
                differs = differs.reshape(-1, 2).any(axis=1)
            reached[j][:len(differs)] |= differs
    return [_any_at(o, np.flatnonzero(r[:_elements(o)]).tolist()) for o, r in zip(outs, reached)]


def _elements(o) -> int:
    return int(np.size(o.bits)) // (2 if o.type.element_type.is_complex else 1)


def _any_at(o, elements: list):
    """`o` with "any value" at `elements` (flat), labelled `OPEN`."""
    if not elements:
        return o
    o.impl_defined = sorted(set(o.impl_defined) | set(elements))
    if not o.alternatives:   # the first alternative names the primary value's choice
        o.alternatives.append(Alternative(PRIMARY, o.bits))
    o.alternatives.append(Alternative(OPEN, None, elements))
    return o


def _carry(run_op, inst, inputs: list, outs: list, arrays: list | None = None) -> list:
    """The ranges of `inputs` carried into `outs` (module docstring)."""
    picked = complex_ranges.picked_elements(run_op, inst, inputs, outs, arrays)   # a complex LU's elements (det, lu)
    if picked is not None:
        return picked
    stated = characterized.downstream(run_op, inst, inputs, outs, arrays)   # values the spec defines by a property
    if stated is not None:
        return stated
    ranged = [i for i, v in enumerate(inputs) if is_ranged(v)]
    if not ranged:
        return outs
    if len(ranged) > MAX_RANGED:
        return [_noted(o, f"tolerances of {len(ranged)} approximate inputs not carried (more than {MAX_RANGED})")
                for o in outs]
    primary = list(arrays) if arrays is not None else [_primary(v) for v in inputs]
    ends = {i: value_ends(inputs[i]) for i in ranged}
    stated = bilinear.carry(inst, outs, primary, ends)   # an op declared bilinear: interval arithmetic
    if stated is not None:
        return stated
    stated = complex_ranges.carry(run_op, inst, inputs, outs, primary, ends)   # complex ops mixing components
    if stated is not None:
        return stated
    corners = []
    groups = _moved_together(inst, inputs, ranged)
    for which in itertools.product((0, 1), repeat=len(groups)):
        corner = list(primary)
        for group, w in zip(groups, which):
            for i in group:
                corner[i] = ends[i][w]
        try:
            corners.append(run_op(inst, corner))
        except Exception:  # the spec states no result at this corner: it does not narrow anything
            continue
    widened = [_widen(o, [c[j] for c in corners]) for j, o in enumerate(outs)]
    return _selected(inst, widened, outs, primary, ends)


SELECTED = "the index of a leaf whose range reaches the row's best (spec/selection.py)"
SELECTED_OPEN = "any value: a leaf's range reaches NaN, or the init value may be as good as the best"
MAX_CANDIDATES = 16


def _selected(inst, widened: list, outs: list, primary: list, ends: dict) -> list:
    """`widened` (the corner runs' ranges) of a reduce whose body selects the best element (argmax,
    argmin: spec/selection.py), with the index output stated as every index
    that some point of the values' ranges makes the winner — the corner runs
    are right for the best value (monotone in each leaf) but not for where
    it is — and any value where a range reaches NaN, the init may win, the
    indices themselves are approximate or more than MAX_CANDIDATES leaves
    may win; the index is the primary run's `outs[1]` with those
    alternatives.  Other ops: `widened` unchanged."""
    body = inst.regions.get("body") if inst.spec.mnemonic == "reduce" else None
    sel = selection.of(body) if body is not None and len(outs) == 2 else None
    if sel is None or 0 not in ends:
        return widened
    values, index = primary[0], primary[1]
    dims = sorted(int(d) for d in (inst.attributes.get("dimensions") or []))
    keep = [d for d in range(np.ndim(values)) if d not in dims]
    L = int(np.prod([np.shape(values)[d] for d in dims], dtype=np.int64))

    def rows(a):
        return np.asarray(a).transpose(keep + dims).reshape(-1, L)
    et = inst.operands["inputs"][0].element_type if isinstance(inst.operands.get("inputs"), list) else None
    is_float = bool(et is not None and et.is_float)
    lo, hi = (rows(np.asarray(e, dtype=np.float64 if is_float else np.int64)) for e in ends[0])
    I = rows(np.asarray(index, dtype=np.int64))
    init_v = float(np.asarray(primary[2], dtype=np.float64)) if is_float else int(np.asarray(primary[2]))
    may, open_ = selection.candidates(sel, lo, hi, init_v, is_float)
    if 1 in ends:   # the indices themselves approximate: nothing is said of them
        open_ |= True
    ranked = [np.unique(row[m]) for row, m in zip(I, may)]   # each row's candidate indices, ascending
    counts = np.array([len(c) for c in ranked], dtype=np.int64)
    open_ |= counts > MAX_CANDIDATES
    if not open_.any() and (counts <= 1).all():
        return [widened[0], outs[1]]
    prim = outs[1]
    mine = np.array(prim.array()).reshape(-1).astype(np.int64)
    out = copy.copy(prim)
    out.alternatives = list(prim.alternatives) or [Alternative(PRIMARY, prim.bits)]
    for r in range(int(min(counts.max(initial=0), MAX_CANDIDATES))):
        pick = np.array([c[r] if r < len(c) else m for c, m in zip(ranked, mine)], dtype=np.int64)
        if (pick != mine).any():
            out.alternatives.append(Alternative(f"{SELECTED}, {r + 1} of {int(counts.max())}",
                                                to_bits(pick.reshape(np.shape(prim.bits)), prim.type.element_type)))
    wide = [int(i) for i in np.flatnonzero(open_)]
    if wide:
        out.alternatives.append(Alternative(SELECTED_OPEN, None, wide))
    out.impl_defined = sorted(set(prim.impl_defined) | {int(i) for i in np.flatnonzero((counts > 1) | open_)})
    out.why = "; ".join(w for w in (prim.why, SELECTED) if w)
    return [widened[0], out]


def _moved_together(inst, inputs: list, ranged: list) -> list:
    """The ranged operands as groups that go to the same end in each corner
    run: one value passed as several operands of an op whose semantics
    declare fn(x, x) monotone or constant (`Elementwise.same_operand`:
    compare's x != x, JAX's NaN test, is false on every NaN-free range, not
    "true or false"), each operand alone otherwise."""
    tie = getattr(getattr(inst.spec, "semantics", None), "same_operand", False)
    groups: list = []
    for i in ranged:
        same = next((g for g in groups if tie and inputs[g[0]] is inputs[i]), None)
        if same is None:
            groups.append([i])
        else:
            same.append(i)
    return groups


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
    shape = np.shape(primary.bits)
    n = int(np.size(primary.bits))
    lo_bits, hi_bits = (np.empty(n, dtype=et.bits_dtype) for _ in (0, 1))
    wild = np.zeros(n, dtype=bool)
    same = True   # every corner gave the primary's value everywhere
    for part in _parts(primary):
        lo, hi = _bounds(primary, part)
        lo, hi = np.array(lo), np.array(hi)
        for e in corners:
            a, b = _bounds(e, part)
            np.minimum(lo, a, out=lo)
            np.maximum(hi, b, out=hi)
        if c.is_float:
            bits = np.reshape(primary.bits, -1)[part]
            nan = _nans(bits, et)
            for e in corners:
                wild[part] |= _nans(np.reshape(e.bits, -1)[part], et) != nan
            if nan.any():
                own = ordinals(bits, et)
                lo[nan] = own[nan]
                hi[nan] = own[nan]
        same = same and np.array_equal(lo, hi)
        lo_bits[part], hi_bits[part] = from_ordinals(lo, et), from_ordinals(hi, et)
    if kind_of(primary).pinned and same and not wild.any():
        return primary   # every corner gave the same value: nothing to carry
    out = Expectation(primary.type, primary.bits, BOUNDED.name, primary.tolerance_ulp, False,
                      list(primary.impl_defined), list(primary.alternatives),
                      "; ".join(w for w in (primary.why, WHY) if w),
                      lo=lo_bits.reshape(shape), hi=hi_bits.reshape(shape))
    flat_wild = wild.reshape(-1, 2).any(axis=1) if et.is_complex else wild.reshape(-1)
    elements = [int(i) for i in np.nonzero(flat_wild)[0]]
    if elements:
        out.impl_defined = sorted(set(out.impl_defined) | set(elements))
        if not out.alternatives:   # the first alternative names the primary value's choice
            out.alternatives.append(Alternative(PRIMARY, primary.bits))
        out.alternatives.append(Alternative(CROSSES, None, elements))
    return out
