"""Values of index operands: in bounds on purpose, or out of bounds on purpose.

Ops that read positions from an operand declare it (`Exercise.indices`,
spec/exercise.py): which operand, how its values lie — start vectors in one
index tensor (`StartVectors`: gather, scatter) or one rank-0 start per axis
(`StartScalars`: dynamic_slice, dynamic_update_slice) — and what an
out-of-bounds position means.  Random integers would almost always be out
of bounds, so cases choose which they test.

`index_arrays(spec, inst, rng, mode)` returns, for a concrete instance,
{operand name or (operand name, member k): array of the operand's dtype}:

  in_bounds      start vectors: every index a start produces is in bounds;
                 repeated starts are likely where they collide
                 (`unique=False`), absent where the program promises
                 disjoint windows (`unique=True`); with `sorted` the starts
                 are sorted (each component non-decreasing in row-major
                 order of the batch index, the reading of spec/ops/gather.py).
                 start scalars: starts in [0, dim - size], nothing clamped.
  out_of_bounds  start vectors: at least one index past the bounds or
                 negative (the others in bounds; promises kept where the
                 values allow).  start scalars: values at and past the
                 bounds and negative ones, at least one clamped.

Values always fit the index element type (si4 … ui64; unsigned ones are
never negative); where none of the asked kind exists (an empty result, a
bound past the type's range, an invalid instance without the structure the
placement reads) `NoIndices` is raised.  Randomness comes only from the
numpy Generator passed in.
"""
from __future__ import annotations

import itertools

import numpy as np

from ..spec.dsl import Instance, OpSpec
from ..spec.exercise import StartScalars, StartVectors

MODES = ("in_bounds", "out_of_bounds")
MAX_START_CANDIDATES = 4096   # start vectors enumerated when placing disjoint scatter windows


class NoIndices(ValueError):
    """No index values of the asked mode exist for this instance."""


def _dims(t) -> list[int]:
    return [int(d) for d in t.shape]


def _fit(v: int, et) -> bool:
    return et.min_value <= v <= et.max_value


# --------------------------------------------------------------------------
# gather and scatter: start vectors laid into the index tensor
# --------------------------------------------------------------------------

class _Layout:
    """Where the start vectors live: batch positions (row-major) of the
    index tensor, each holding a vector of `len(index_map)` components along
    `index_vector_dim` (or one implicit component), and the bounds a start
    component must keep for every index it produces to stay inside."""

    def __init__(self, index_type, p: StartVectors):
        self.shape = _dims(index_type)
        self.et = index_type.element_type
        self.ivd = ivd = p.index_vector_dim
        self.index_map = [int(d) for d in p.index_map]
        batch_shape = self.shape[:ivd] + self.shape[ivd + 1:] if ivd < len(self.shape) else self.shape
        self.positions = list(np.ndindex(*batch_shape))
        self.target_dims = list(p.target)  # dims of the indexed operand
        self.window = list(p.window)       # per target dim: how many indices a start covers there

    def bounds(self, ds: int) -> tuple[int, int]:
        """[lo, hi] of component `ds` for in-bounds indices (hi < lo: none exists)."""
        do = self.index_map[ds]
        w = self.window[do]
        return 0, min(self.target_dims[do] - w, self.et.max_value)

    def write(self, starts: list[list[int]]) -> np.ndarray:
        out = np.zeros(self.shape, dtype=np.int64)
        for pos, vec in zip(self.positions, starts):
            if self.ivd < len(self.shape):
                idx = list(pos)
                idx.insert(self.ivd, slice(None))
                out[tuple(idx)] = vec
            else:
                out[pos] = vec[0]
        return out.astype(self.et.numpy)


def _random_starts(lay: _Layout, rng, n_comp: int) -> list[list[int]]:
    starts = []
    for _ in lay.positions:
        vec = []
        for ds in range(n_comp):
            lo, hi = lay.bounds(ds)
            if hi < lo:
                raise NoIndices(f"no in-bounds start along operand axis {lay.index_map[ds]}")
            vec.append(int(rng.integers(lo, hi + 1)))
        starts.append(vec)
    return starts


def _sort_components(starts: list[list[int]]) -> list[list[int]]:
    """Each component non-decreasing along the positions (component-wise sorted)."""
    if not starts:
        return starts
    cols = [sorted(c) for c in zip(*starts)]
    return [list(v) for v in zip(*cols)] if cols else starts


def _n_components(lay: _Layout) -> int:
    return lay.shape[lay.ivd] if lay.ivd < len(lay.shape) else 1


def _disjoint_starts(lay: _Layout, rng, sorted_: bool) -> list[list[int]]:
    """Start vectors whose windows do not overlap (scatter with unique_indices)."""
    n_comp = _n_components(lay)
    ranges = []
    for ds in range(n_comp):
        lo, hi = lay.bounds(ds)
        if hi < lo:
            raise NoIndices(f"no in-bounds start along axis {lay.index_map[ds]}")
        ranges.append((lo, hi))
    widths = [max(lay.window[lay.index_map[ds]], 1) for ds in range(n_comp)]
    if sorted_:
        # a chain: each start advances one component by a window's width,
        # so every later window lies past every earlier one along some axis
        cur = [lo for lo, _ in ranges]
        starts = []
        for i, _ in enumerate(lay.positions):
            if i:
                room = [ds for ds in range(n_comp) if cur[ds] + widths[ds] <= ranges[ds][1]]
                if not room:
                    raise NoIndices("no room for sorted, non-overlapping windows")
                ds = room[int(rng.integers(0, len(room)))]
                cur = list(cur)
                cur[ds] += widths[ds] + int(rng.integers(0, 2) if cur[ds] + widths[ds] < ranges[ds][1] else 0)
            starts.append(list(cur))
        return starts
    total = 1
    for lo, hi in ranges:
        total *= hi - lo + 1
    if total <= MAX_START_CANDIDATES:
        cands = [list(v) for v in itertools.product(*(range(lo, hi + 1) for lo, hi in ranges))]
        cands = [cands[i] for i in rng.permutation(len(cands))]
    else:
        cands = [[int(rng.integers(lo, hi + 1)) for lo, hi in ranges] for _ in range(MAX_START_CANDIDATES)]
    starts = []
    for c in cands:
        if len(starts) == len(lay.positions):
            break
        # two windows overlap unless some indexed axis separates them by a width
        if all(any(abs(c[ds] - s[ds]) >= widths[ds] for ds in range(n_comp)) for s in starts):
            starts.append(c)
    if len(starts) < len(lay.positions):
        raise NoIndices("not enough non-overlapping windows for unique indices")
    return starts


def _likely_duplicates(starts: list[list[int]], rng) -> list[list[int]]:
    """Reuse earlier start vectors now and then, so updates collide."""
    out = []
    for s in starts:
        out.append(list(out[int(rng.integers(0, len(out)))]) if out and rng.random() < 0.5 else s)
    return out


def _push_out(lay: _Layout, starts: list[list[int]], rng, keep_sorted: bool, keep_unique: bool):
    """Put one component of one start vector out of bounds (past or negative)."""
    n_comp = _n_components(lay)
    if not starts or n_comp == 0:
        raise NoIndices("no start index to put out of bounds")
    comps = [ds for ds in range(n_comp) if lay.window[lay.index_map[ds]] > 0]
    if not comps:
        raise NoIndices("every window is empty along the indexed axes")
    order = [comps[i] for i in rng.permutation(len(comps))]
    for ds in order:
        do = lay.index_map[ds]
        dim, w = lay.target_dims[do], lay.window[do]
        col = [s[ds] for s in starts]
        past = [dim - w + 1, dim, dim + int(rng.integers(1, 4))]
        if keep_unique:
            past = [max(v, max(col) + w) for v in past]
        negative = [-1, -w, int(lay.et.min_value)]
        if keep_unique:
            negative = [min(v, min(col) - w) for v in negative]
        options = [("past", v) for v in past if _fit(v, lay.et)] + [("neg", v) for v in negative if _fit(v, lay.et) and v < 0]
        if not options:
            continue
        kind, v = options[int(rng.integers(0, len(options)))]
        at = (len(starts) - 1 if kind == "past" else 0) if keep_sorted else int(rng.integers(0, len(starts)))
        out = [list(s) for s in starts]
        out[at][ds] = v
        return out
    raise NoIndices("no out-of-bounds value fits the index type")


def _fixed_axes_fit(lay: _Layout) -> None:
    """Axes no start component addresses start at 0: their window must fit as is."""
    for d, (dim, w) in enumerate(zip(lay.target_dims, lay.window)):
        if d not in lay.index_map and w > dim:
            raise NoIndices(f"axis {d} is read at index {w - 1} but has {dim} elements")


def _vectors(p: StartVectors, inst: Instance, rng, mode: str) -> dict:
    lay = _Layout(inst.operands[p.operand], p)
    n_comp = _n_components(lay)
    if not p.reads:
        if mode == "out_of_bounds":
            raise NoIndices("no position is read (an empty result or empty updates)")
        return {p.operand: lay.write([[0] * n_comp for _ in lay.positions])}
    if mode == "in_bounds":
        _fixed_axes_fit(lay)
    if p.unique:
        starts = _disjoint_starts(lay, rng, p.sorted)
    else:
        starts = _random_starts(lay, rng, n_comp)
        if p.unique is False:
            starts = _likely_duplicates(starts, rng)
        if p.sorted:
            starts = _sort_components(starts)
    if mode == "out_of_bounds":
        starts = _push_out(lay, starts, rng, p.sorted, bool(p.unique))
    return {p.operand: lay.write(starts)}


# --------------------------------------------------------------------------
# Start scalars: one rank-0 start per axis of the indexed operand
# --------------------------------------------------------------------------

def _scalar(v: int, et) -> np.ndarray:
    """The rank-0 start `v` (it fits `et`: `_fit`) stored directly in `et`:
    never through int64, which cannot hold ui64's largest values (2**64 - 1
    is an out-of-bounds candidate)."""
    return np.asarray(v, dtype=et.numpy).reshape(())


def _scalars(p: StartScalars, inst: Instance, rng, mode: str) -> dict:
    members = inst.operands[p.operand]
    dims, sizes = list(p.target), list(p.window)
    out, clamped = {}, False
    for k, (t, dim, size) in enumerate(zip(members, dims, sizes)):
        et = t.element_type
        hi = dim - size          # the largest start the seed's clamp leaves alone
        if mode == "in_bounds":
            top = min(hi, et.max_value)
            if top < 0:
                raise NoIndices(f"no in-bounds start along axis {k}")
            v = int(rng.integers(0, top + 1))
        else:
            cands = [v for v in (hi, hi + 1, dim, hi + int(rng.integers(2, 5)), int(et.max_value), -1,
                                 -int(rng.integers(2, 5)), int(et.min_value)) if _fit(v, et)]
            v = cands[int(rng.integers(0, len(cands)))]
        clamped |= not (0 <= v <= hi)
        out[(p.operand, k)] = _scalar(v, et)
    if mode == "out_of_bounds" and not clamped:
        order = [int(i) for i in rng.permutation(len(members))]
        for k in order:
            et, hi = members[k].element_type, dims[k] - sizes[k]
            cands = [v for v in (hi + 1, dims[k], -1, int(et.min_value)) if _fit(v, et) and not (0 <= v <= hi)]
            if cands:
                v = cands[int(rng.integers(0, len(cands)))]
                out[(p.operand, k)] = _scalar(v, et)
                break
        else:
            raise NoIndices("no start that the clamp changes fits the index type")
    return out


def index_arrays(spec: OpSpec, inst: Instance, rng, mode: str) -> dict:
    """{operand name or (name, member k): array} for the op's index operands (module docstring)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    if spec.exercise.indices is None:
        raise KeyError(f"{spec.mnemonic} declares no index operands")
    try:
        p = spec.exercise.indices.placement(inst)
        make = _vectors if isinstance(p, StartVectors) else _scalars
        return make(p, inst, rng, mode)
    except NoIndices:
        raise
    except (IndexError, KeyError, StopIteration, TypeError, ValueError) as e:
        bad = spec.violated(inst)
        if not bad:
            raise
        # an invalid instance (a negative case) may lack the structure the formulas read
        raise NoIndices(f"{spec.mnemonic}: instance breaks {', '.join(bad)}: {type(e).__name__}: {e}") from e
