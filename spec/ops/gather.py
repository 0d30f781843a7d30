"""gather — slices of `operand` at offsets read from `start_indices` (spec section "gather").

Numbering: the seed's constraints run C1–C13 and then C15; there is no C14
(the seed has none).  We keep the seed's labels, so `gather_c15` is
the element-type rule and no `gather_c14` exists.

Batching dims (v1.20, not in the seed): `operand_batching_dims` and
`start_indices_batching_dims` (what JAX writes for a vmapped `x[i]`) pair
operand axes with axes of `start_indices`: result element `result_index`
reads the operand at `full_start_index + full_batching_index +
full_offset_index`, where `full_batching_index[operand_batching_dims[k]]` is
the batch index's entry for `start_indices_batching_dims[k]` (v1.20's
Semantics).  Empty (the parser's default, and what programs without them
mean), everything is the seed's gather.  Constraints:
* The seed's labels keep their meaning; two of them grow as v1.20 grew them:
  C1 counts `operand_batching_dims` too (v1.20 C1), and C13 leaves the
  batching dims out of the offset sizes as it does the collapsed ones
  (v1.20 C22).  Empty batching dims give exactly the seed's rules.
* v1.20's clauses the seed lacks are `gather_c16` … `gather_c25` (the seed
  ends at C15; `OpSpec.later` pairs each with its v1.20 clause).  Where
  v1.20 merged a new rule into a seed one (C6 `is_unique(concatenate(
  collapsed_slice_dims, operand_batching_dims))`, C18 `is_unique(concatenate(
  start_index_map, operand_batching_dims))`), the seed's label keeps the
  seed's part and the new label states what v1.20 adds to it, so no instance
  breaks two labels for one mistake.
* Findings: v1.20 C6's addition (`gather_c16`) and C11 (`gather_c18`: batching
  dims inside the operand's rank) follow from C1 and C22 (our C13), as the
  seed's C7 does: a batching dim that repeats, meets a collapsed dim or lies
  outside the operand leaves one slice size too many for `offset_dims`.
* `indices_are_sorted` with batching dims: v1.20's sentence ("for all
  i1 < i2 … full_start_index(i1) <= full_start_index(i2)") read over the
  whole batch would make JAX's vmapped `x[i]` undefined (JAX writes
  `indices_are_sorted = true` for it: one start per batch is sorted); we read
  it within each batch (batch indices with the same `full_batching_index`),
  which is the whole batch when there are no batching dims.

Structure: `index_vector_dim` is enumerated (an `IntAttr` with `choices`),
not solved: whether it equals `rank(start_indices)` decides how many batch
dimensions the result has, i.e. the result's *rank*, and ranks are structure.

Readings we chose (findings, see the report of issue 3):
* C13 writes `shape(slice_sizes)` for the offset sizes; `slice_sizes` is
  itself the list of sizes (its shape would be `[size(slice_sizes)]`), so we
  read `slice_sizes`.
* `combine` "puts `offset_dim_sizes` at axes corresponding to `offset_dims`":
  `offset_dims[k]` receives the k-th offset size and the remaining axes, in
  order, receive the batch sizes; the result has exactly
  `len(batch_dim_sizes) + len(offset_dim_sizes)` axes.  Read literally, C13
  then demands C5 (every `offset_dims[k]` is an axis of the result), and the
  counts and ranges C1, C7, C11 each follow from C13 with the others (one
  offset size per entry of `offset_dims`): no program breaks one of C1, C5,
  C7, C11 alone (a search over array lengths 0..rank+1 and ranks 1..3 found
  a witness for every other constraint).
* Out of bounds (v1.20): `full_start_index` clamps each start into
  `[0, dim - slice_size]`, so a slice reaching out is moved back whole —
  one value per element, what XLA does (seed 002's `clamp(start_indices[i],
  0, operand.dimension_size[i] - size_indices[i])`, confirmed on jaxlib)
  and what JAX's `jnp.take(mode='clip')` and default-mode indexing rely
  on.  The seed said only "If `operand_index` is out of bounds for
  `operand`, then the behavior is implementation-defined" (until stop 57
  its cases were surveys: the clamped value or any value).  A collapsed
  axis of slice size 0 still reads past its end after the clamp (start up
  to `dim`): an out-of-bounds access, implementation-defined by the
  Errors section — that element only is any value.
* C8 allows `slice_sizes[i] = 0` for a collapsed dimension, and the
  formula then still reads `operand[operand_index]` (the StableHLO
  interpreter does; we do), its start clamped into `[0, dim]`.  XLA returns zeros there, and jax's own shape
  rule rejects such a program ("can only collapse slice dims with bound 1").
* `indices_are_sorted`: the formal sentence ranges over `indices(result)`,
  which include the offset axes — read literally, an offset axis in front of
  a batch axis would force all start indices equal.  We read it over the
  batch indices (row-major), as seed 002 does ("sorted … after scattering
  its values according to start_index_map"), and compare the full start
  indices (v1.20's: clamped) component-wise (the stricter of the two orders a vector `<=` can
  mean): an input sorted only lexicographically counts as a broken promise,
  whose result is undefined (any value), so no reading fails a backend.
"""
from __future__ import annotations

import numpy as np

from ..dsl import (ANY, ANY_VALUE, INTEGER, And, Attribute, BoolAttr, Choices, DataMovement, Group,
                   I64ArrayAttr, If, Implies, IntAttr, Not, OpSpec, Operand, Result, all_of, any_of, at,
                   contains, dim, in_range, is_sorted, is_symbolic, is_unique, rank, same_element_type,
                   shape, size)
from ..dsl.quantization import MOVES_PER_TENSOR
from ..exercise import CLAMPED, Corner, Exercise, Indices, StartVectors
from ..types import TensorType

MAX_INDEX_VECTOR_DIM = 4   # index_vector_dim <= rank(start_indices); enumerated 0..4 (generators draw ranks
                           # up to 5, so at rank 5 the implicit trailing index vector is not enumerated)


# --------------------------------------------------------------------------
# Shape helpers shared with scatter (its C4 is gather's C13 under other names)
# --------------------------------------------------------------------------

def batch_dim_options(indices: TensorType, index_vector_dim) -> list:
    """`shape(indices)` except the size at `index_vector_dim`: a list of
    (condition, sizes).  A concrete `index_vector_dim` gives one option; a
    symbolic one an option per position (and one for "no such axis", where
    nothing is left out)."""
    dims = list(shape(indices))
    if not is_symbolic(index_vector_dim):
        i = index_vector_dim
        return [(True, dims[:i] + dims[i + 1:] if 0 <= i < len(dims) else dims)]
    out = [(index_vector_dim == i, dims[:i] + dims[i + 1:]) for i in range(len(dims))]
    out.append((Not(in_range(index_vector_dim, 0, len(dims))), dims))
    return out


def kept(sizes, dropped):
    """`sizes` except the entries at positions `dropped` (entries possibly
    symbolic): (how many are kept, function k -> the k-th kept size)."""
    keep = [Not(contains(dropped, i)) for i in range(len(sizes))]
    before = [sum(If(keep[j], 1, 0) for j in range(i)) for i in range(len(sizes))]

    def kth(k):
        out = 0
        for i in reversed(range(len(sizes))):
            out = If(And(keep[i], before[i] == k), sizes[i], out)
        return out
    return sum(If(k, 1, 0) for k in keep), kth


def _batch_position(placed, d):
    """Index of axis `d` among the axes not in `placed` (axes before it that are not placed)."""
    return sum(If(contains(placed, e), 0, 1) for e in range(d))


def combine_holds(out_shape, batch, n_placed_sizes, placed_size, placed, at_most=False):
    """`out_shape = combine(batch, placed sizes)`: `placed[k]` receives the
    k-th placed size (or at most it, `at_most`: scatter's window sizes), the
    other axes receive `batch` in order; combine has exactly
    `len(batch) + n_placed_sizes` axes."""
    r = len(out_shape)
    if r != len(batch) + len(placed):
        return False
    conds = [n_placed_sizes == len(placed),
             sum(If(contains(placed, d), 0, 1) for d in range(r)) == len(batch)]
    for k, d in enumerate(placed):
        got = at(out_shape, d)
        conds += [in_range(d, 0, r), got <= placed_size(k) if at_most else got == placed_size(k)]
    for d in range(r):
        conds.append(Implies(Not(contains(placed, d)), out_shape[d] == at(batch, _batch_position(placed, d))))
    return all_of(conds)


def combined_shape(batch, placed_size, placed, r) -> tuple:
    """The dims `combine` gives, as expressions of the (possibly symbolic) positions."""
    out = []
    for d in range(r):
        size_here = 0
        for k in reversed(range(len(placed))):
            size_here = If(placed[k] == d, placed_size(k), size_here)
        out.append(If(contains(placed, d), size_here, at(batch, _batch_position(placed, d))))
    return tuple(out)


def unique_and_sorted(xs):
    return And(is_unique(xs), is_sorted(xs))


def disjoint(xs, ys):
    """No entry of `ys` among `xs` (entries possibly symbolic)."""
    return all_of(Not(contains(xs, y)) for y in ys)


def dims_fit(sizes, t: TensorType):
    """0 <= sizes[i] <= dim(t, i) for every i (an entry with no axis to compare with fails)."""
    return all_of(And(0 <= s, i < rank(t) and s <= dim(t, i)) for i, s in enumerate(sizes))


# --------------------------------------------------------------------------
# Constraints
# --------------------------------------------------------------------------

def gather_c1(op):
    """(C1) rank(`operand`) $=$ size(`offset_dims`) $+$
       size(`collapsed_slice_dims`).

    v1.20 C1 adds `+ size(operand_batching_dims)` (empty in the seed)."""
    return rank(op.operand) == size(op.offset_dims) + size(op.collapsed_slice_dims) + size(op.operand_batching_dims)


def gather_c2(op):
    """(C2) $0 \\le$ `index_vector_dim` $\\le$ rank(`start_indices`)."""
    return And(0 <= op.index_vector_dim, op.index_vector_dim <= rank(op.start_indices))


def gather_c3(op):
    """(C3) size(`start_index_map`) $=$
       `index_vector_dim` $\\lt$ rank(`start_indices`) ?
       dim(`start_indices`, `index_vector_dim`) : 1."""
    ivd = op.index_vector_dim
    return size(op.start_index_map) == If(ivd < rank(op.start_indices), at(shape(op.start_indices), ivd), 1)


def gather_c4(op):
    """(C4) All dimensions in `offset_dims` are unique and sorted in ascending
       order."""
    return unique_and_sorted(op.offset_dims)


def gather_c5(op):
    """(C5) $0 \\le$ `offset_dims`[i] $\\lt$ rank(`result`) $\\forall i$
       such that $0 \\le$ i $\\lt$ size(`offset_dims`)."""
    return all_of(in_range(d, 0, rank(op.result)) for d in op.offset_dims)


def gather_c6(op):
    """(C6) All dimensions in `collapsed_slice_dims` are unique and sorted in
       ascending order."""
    return unique_and_sorted(op.collapsed_slice_dims)


def gather_c7(op):
    """(C7) $0 \\le$ `collapsed_slice_dims`[i] $\\lt$ size(`slice_sizes`)
        $\\forall i$ such that $0 \\le$ i $\\lt$ size(`collapsed_slice_dims`)."""
    return all_of(in_range(d, 0, size(op.slice_sizes)) for d in op.collapsed_slice_dims)


def gather_c8(op):
    """(C8) `slice_sizes`[i] $\\le$ 1 $\\forall i \\in$ `collapsed_slice_dims`.

    (An entry of `collapsed_slice_dims` that is no index of `slice_sizes` is
    C7's to reject.)"""
    return all_of(at(op.slice_sizes, d) <= 1 for d in op.collapsed_slice_dims)


def gather_c9(op):
    """(C9) All dimensions in `start_index_map` are unique."""
    return is_unique(op.start_index_map)


def gather_c10(op):
    """(C10) $0 \\le$ `start_index_map`[i] $\\lt$ rank(`operand`) $\\forall i$
       such that $0 \\le$ i $\\lt$ size(`start_index_map`)."""
    return all_of(in_range(d, 0, rank(op.operand)) for d in op.start_index_map)


def gather_c11(op):
    """(C11) size(`slice_sizes`) $=$ rank(`operand`)."""
    return size(op.slice_sizes) == rank(op.operand)


def gather_c12(op):
    """(C12) $0 \\le$ `slice_sizes`[i] $\\le$ dim(`operand`, i) $\\forall i$
        such that $0 \\le$ i $\\lt$ size(`slice_sizes`)."""
    return dims_fit(op.slice_sizes, op.operand)


def gather_c13(op):
    """(C13) `shape(result)` $=$ `combine(batch_dim_sizes, offset_dim_sizes)`
        where:
  * `batch_dim_sizes` = `shape(start_indices)` except that the dimension size
    of `start_indices` corresponding to `index_vector_dim` is not included.
  * `offset_dim_sizes` = `shape(slice_sizes)` except that the dimension sizes
    in `slice_sizes` corresponding to `collapsed_slice_dims` are not included.
  * `combine` puts `batch_dim_sizes` at axes corresponding to `batch_dims` and
   `offset_dim_sizes` at axes corresponding to `offset_dims`.

    v1.20 C22: `offset_dim_sizes` also leaves out the sizes at
    `operand_batching_dims` (empty in the seed)."""
    n_offset, offset_size = kept(op.slice_sizes, _dropped(op))
    return any_of(And(cond, combine_holds(shape(op.result), batch, n_offset, offset_size, op.offset_dims))
                  for cond, batch in batch_dim_options(op.start_indices, op.index_vector_dim))


def gather_c15(op):
    """(C15) `operand` and `result` have the same element type."""
    return same_element_type(op.operand, op.result)


def _dropped(op) -> tuple:
    """The operand axes with no offset size: collapsed and batching dims."""
    return tuple(op.collapsed_slice_dims) + tuple(op.operand_batching_dims)


# v1.20's batching clauses (not in the seed): labels past the seed's last (C15), see the module docstring.

def gather_c16(op):
    """v1.20 (C6) `is_unique(concatenate(collapsed_slice_dims,
    operand_batching_dims))` — what it adds to the seed's C6 (which keeps
    `collapsed_slice_dims` unique): `operand_batching_dims` unique, and none
    of them collapsed.  Implied by C1 and C13 (module docstring)."""
    return And(is_unique(op.operand_batching_dims), disjoint(op.collapsed_slice_dims, op.operand_batching_dims))


def gather_c17(op):
    """v1.20 (C10) `is_sorted(operand_batching_dims)`."""
    return is_sorted(op.operand_batching_dims)


def gather_c18(op):
    """v1.20 (C11) `0 <= operand_batching_dims < rank(operand)`.  Implied by
    C1 and C13 (module docstring)."""
    return all_of(in_range(d, 0, rank(op.operand)) for d in op.operand_batching_dims)


def gather_c19(op):
    """v1.20 (C12) `slice_sizes[operand_batching_dims...] <= 1`."""
    return all_of(at(op.slice_sizes, d) <= 1 for d in op.operand_batching_dims)


def gather_c20(op):
    """v1.20 (C13) `is_unique(start_indices_batching_dims)`."""
    return is_unique(op.start_indices_batching_dims)


def gather_c21(op):
    """v1.20 (C14) `0 <= start_indices_batching_dims < rank(start_indices)`."""
    return all_of(in_range(d, 0, rank(op.start_indices)) for d in op.start_indices_batching_dims)


def gather_c22(op):
    """v1.20 (C15) `index_vector_dim not in start_indices_batching_dims`."""
    return Not(contains(op.start_indices_batching_dims, op.index_vector_dim))


def gather_c23(op):
    """v1.20 (C16) `size(operand_batching_dims) == size(start_indices_batching_dims)`."""
    return size(op.operand_batching_dims) == size(op.start_indices_batching_dims)


def gather_c24(op):
    """v1.20 (C17) `dim(operand, operand_batching_dims...) =
    dim(start_indices, start_indices_batching_dims...)`.  (Unequal counts are
    C16's, our `gather_c23`: the pairs that exist are compared.)"""
    return all_of(at(shape(op.operand), a) == at(shape(op.start_indices), b)
                  for a, b in zip(op.operand_batching_dims, op.start_indices_batching_dims))


def gather_c25(op):
    """v1.20 (C18) `is_unique(concatenate(start_index_map,
    operand_batching_dims))` — what it adds to the seed's C9 (which keeps
    `start_index_map` unique) and `gather_c16` (batching dims unique): no
    batching dim is in `start_index_map`."""
    return disjoint(op.start_index_map, op.operand_batching_dims)


LATER = (("gather_c16", "v1.20 C6"), ("gather_c17", "v1.20 C10"), ("gather_c18", "v1.20 C11"),
         ("gather_c19", "v1.20 C12"), ("gather_c20", "v1.20 C13"), ("gather_c21", "v1.20 C14"),
         ("gather_c22", "v1.20 C15"), ("gather_c23", "v1.20 C16"), ("gather_c24", "v1.20 C17"),
         ("gather_c25", "v1.20 C18"))


def infer(op):
    """C13's shape and C15's element type.  The rank is structure: batch
    axes (start_indices' rank, less one when `index_vector_dim` names an
    axis of it) plus `size(offset_dims)`."""
    if is_symbolic(op.index_vector_dim):
        raise TypeError("gather: index_vector_dim must be concrete (it decides the result's rank)")
    [(_, batch)] = batch_dim_options(op.start_indices, op.index_vector_dim)
    _, offset_size = kept(op.slice_sizes, _dropped(op))
    r = len(batch) + len(op.offset_dims)
    return {"result": TensorType(combined_shape(batch, offset_size, op.offset_dims, r), op.operand.element_type)}


# --------------------------------------------------------------------------
# Semantics: the spec's index formulas, one result element at a time
# --------------------------------------------------------------------------

def start_index(indices: np.ndarray, batch_index, index_vector_dim: int) -> list[int]:
    """`indices[bi0, …, :, …, biN]` (`:` at `index_vector_dim`), or
    `[indices[batch_index]]` when `index_vector_dim` = rank(indices)."""
    if index_vector_dim < indices.ndim:
        idx = list(batch_index)
        idx.insert(index_vector_dim, slice(None))
        return [int(v) for v in indices[tuple(idx)]]
    return [int(indices[tuple(batch_index)])]


def full_start_index(start, index_map, r: int) -> list[int]:
    """`full_start_index[do] = start_index[ds]` if `do = index_map[ds]`, else 0."""
    full = [0] * r
    for ds, do in enumerate(index_map):
        full[do] = start[ds]
    return full


def clamped_start(full_start, operand_shape, slice_sizes) -> list[int]:
    """v1.20's gather: `clamp(start_index[d_start], 0, dim(operand, d_operand)
    - slice_sizes[d_operand])` on every axis (an axis `start_index_map`
    leaves out starts at 0, which the clamp keeps).  Scatter does not clamp."""
    return [min(max(s, 0), int(d) - int(z)) for s, d, z in zip(full_start, operand_shape, slice_sizes)]


def full_batching_index(batch_index, operand_dims, index_dims, index_vector_dim: int, r: int) -> list[int]:
    """`full_batching_index[d_operand] = batch_index[d_start - (d_start <
    index_vector_dim ? 0 : 1)]` if `d_operand = operand_dims[k]` and
    `d_start = index_dims[k]`, else 0 (v1.20; all zeros without batching dims)."""
    full = [0] * r
    for do, ds in zip(operand_dims, index_dims):
        full[do] = batch_index[ds - (0 if ds < index_vector_dim else 1)]
    return full


def batches_sorted(starts: dict, key) -> bool:
    """`components_sorted` within each batch: the full start indices of the
    batch indices (row-major) that share `key(batch_index)` (their
    full_batching_index; one batch without batching dims)."""
    groups: dict = {}
    for b in sorted(starts):
        groups.setdefault(key(b), []).append(starts[b])
    return all(components_sorted(g) for g in groups.values())


def full_window_index(window_index, inserted, r: int) -> list[int]:
    """`[oi0, …, 0, …, oiN]`: zeros at the axes in `inserted`, the window index elsewhere in order."""
    it = iter(window_index)
    return [0 if d in inserted else next(it) for d in range(r)]


def in_bounds(index, dims) -> bool:
    return all(0 <= i < d for i, d in zip(index, dims))


def components_sorted(starts) -> bool:
    """Consecutive full start indices non-decreasing in every component (module docstring)."""
    return all(all(a <= b for a, b in zip(p, q)) for p, q in zip(starts, starts[1:]))


SORTED_WHY = ("gather: \"If `indices_are_sorted` is `true` then the implementation can assume that "
              "`start_indices` are sorted with respect to `start_index_map`, otherwise the behavior is undefined.\"")
OUT_OF_BOUNDS_WHY = ("gather: a collapsed axis of slice size 0 reads `operand` past its end after the clamp; "
                     "spec.md Errors: \"out-of-bounds accesses […] result in implementation-defined behavior\"")


def undefined(primary: np.ndarray, label: str, why: str) -> Choices:
    """Every element any value: the spec calls the behaviour undefined."""
    n = primary.size
    return Choices(primary, {i: [ANY_VALUE] for i in range(n)}, {i: [label] for i in range(n)}, why)


def arrays(op, operand, start_indices):
    operand, start_indices = np.asarray(operand), np.asarray(start_indices)
    out_shape = tuple(int(d) for d in op.result.shape)
    offset_dims, collapsed = list(op.offset_dims), list(op.collapsed_slice_dims)
    index_map, slice_sizes, ivd = list(op.start_index_map), list(op.slice_sizes), int(op.index_vector_dim)
    operand_batching = [int(d) for d in op.operand_batching_dims]
    index_batching = [int(d) for d in op.start_indices_batching_dims]
    batch_dims = [d for d in range(len(out_shape)) if d not in offset_dims]
    r = operand.ndim

    def batching(batch_index):
        return full_batching_index(batch_index, operand_batching, index_batching, ivd, r)
    result = np.zeros(out_shape, dtype=operand.dtype)
    options, labels = {}, {}
    starts = {}
    for flat, result_index in enumerate(np.ndindex(*out_shape)):
        batch_index = tuple(result_index[d] for d in batch_dims)
        if batch_index not in starts:
            starts[batch_index] = clamped_start(full_start_index(start_index(start_indices, batch_index, ivd),
                                                                 index_map, r), operand.shape, slice_sizes)
        start = starts[batch_index]
        offset = [b + o for b, o in zip(batching(batch_index), full_window_index(
            [result_index[d] for d in offset_dims], collapsed + operand_batching, r))]
        operand_index = [s + o for s, o in zip(start, offset)]
        if in_bounds(operand_index, operand.shape):
            result[result_index] = operand[tuple(operand_index)]
        else:
            options[flat], labels[flat] = [ANY_VALUE], ["any value: out-of-bounds access"]
    if op.indices_are_sorted and not batches_sorted(starts, lambda b: tuple(batching(b))):
        return [undefined(result, "any value: indices_are_sorted but start_indices are not sorted", SORTED_WHY)]
    if options:
        return [Choices(result, options, labels, OUT_OF_BOUNDS_WHY)]
    return [result]


# --------------------------------------------------------------------------
# Structure hints (lengths of the array attributes)
# --------------------------------------------------------------------------

def _chosen(op, name):
    """An attribute already chosen while the instance is built (None before)."""
    return op.attributes.get(name)


def _offset_dims_lengths(op):
    return range(0, rank(op.operand) + 1)


def _collapsed_lengths(op):
    """C1: what `offset_dims` and the batching dims leave of the operand's
    rank (all candidates until `offset_dims` is chosen)."""
    r, offset = rank(op.operand), _chosen(op, "offset_dims")
    nb = len(_chosen(op, "operand_batching_dims") or ())
    if offset is not None and len(offset) + nb <= r:
        return r - len(offset) - nb
    return range(r - nb, -1, -1)


def _index_batching_lengths(op):
    """v1.20 C16: as many as `operand_batching_dims` (declared before it: none in the seed's draws)."""
    return len(_chosen(op, "operand_batching_dims") or ())


def _start_index_map_lengths(op):
    """C3: one entry when the index vector is implicit, else dim(start_indices, index_vector_dim)."""
    ivd = _chosen(op, "index_vector_dim")
    if ivd is not None and not is_symbolic(ivd) and ivd >= rank(op.start_indices):
        return 1
    return tuple(range(1, max(rank(op.operand), 1) + 1)) + (0,)


def _operand_rank(op):
    return rank(op.operand)


_DN = "dimension_numbers"

def start_placement(op) -> StartVectors:
    """`start_indices` holds start vectors along `index_vector_dim`;
    component k addresses operand axis `start_index_map[k]`.  A collapsed
    axis reads one index (offset 0) whatever its slice size (<= 1)."""
    collapsed = {int(d) for d in op.collapsed_slice_dims}
    window = tuple(1 if d in collapsed else int(s) for d, s in enumerate(op.slice_sizes))
    return StartVectors("start_indices", int(op.index_vector_dim), tuple(int(d) for d in op.start_index_map),
                        tuple(int(d) for d in op.operand.shape), window,
                        reads=all(int(d) > 0 for d in op.result.shape), sorted=bool(op.indices_are_sorted))


CORNERS = (
    Corner("full slice", (2, 2), lambda op: [s == d for s, d in zip(op.slice_sizes, op.operand.shape)]),
    Corner("empty slice", (2, 2), lambda op: [op.slice_sizes[0] == 0]),
    Corner("index_vector_dim = rank(start_indices)", (2, 1), lambda op: [op.index_vector_dim == 1]),
)


def _batching(n: int, offset: int) -> dict:
    """A layout with `n` batching dim pairs and `offset` offset dims (the
    collapsed ones and `start_indices_batching_dims` follow by the hints)."""
    return {"lengths": {"operand_batching_dims": n, "offset_dims": offset}}


def _wide_window(op):
    return [any_of(s >= 2 for s in op.slice_sizes)]


# v1.20's batching dims (`Exercise.later`): value cases on a stream of their own, and the structures
# where the negative search and check-spec break gather_c16 … gather_c25.  Ranks: (operand, start_indices).
# (`index_vector_dim` is a skeleton's choice, 0..2 in the valid skeletons: the spec's example, at 3, is a test.)
LATER_CORNERS = (
    Corner("batching dims: vmapped x[i]", (2, 2), lambda op: [], layout=_batching(1, 0)),
    Corner("batching dims with a slice window", (3, 2), _wide_window, layout=_batching(1, 1)),
    Corner("two batching dims", (3, 3), lambda op: [], layout=_batching(2, 0)),
    Corner("batching dims not leading", (3, 3),
           lambda op: [op.operand_batching_dims[0] >= 1, op.start_indices_batching_dims[0] >= 1],
           layout=_batching(1, 1)),
    Corner("batching dims, index_vector_dim = rank(start_indices)", (2, 1), lambda op: [], layout=_batching(1, 0)),
    Corner("batching dims, offset axes before batch axes", (3, 2),
           lambda op: [op.offset_dims[0] == 0], layout=_batching(1, 1)),
    Corner("batching dims, index vector and batch axes as JAX writes them", (2, 2),
           lambda op: [op.index_vector_dim == 1], layout=_batching(1, 1)),
)


def slice_past_its_axis(spec, skels, rng):
    """`Exercise.appended_last`: two rows of a 4x3 f32 operand read with
    `slice_sizes = [1, 4]` — the window's second size (4) past its axis (3),
    nonnegative, everything else valid (the result, 2x4, is what C13 makes
    of those sizes): an invalid case naming gather_c12.  Why
    (docs/mutation.md, stop 57): the other gather_c12 cases hold a negative
    size, so `dims_fit` with `i < rank(t) or s <= dim(t, i)` for its `and`
    — a verifier that never compares a size with its axis — passed every
    verdict of suites/core; only a unit test killed it.  Its own stream, after
    every other, so the op's other cases keep their bytes."""
    from ..symbolic import Skeleton
    from ..types import SI32
    from ..types import element_type as _named
    f32 = _named("f32")
    attrs = {"operand_batching_dims": (), "start_indices_batching_dims": (), "offset_dims": (1,),
             "collapsed_slice_dims": (0,), "index_vector_dim": 1, "start_index_map": (0,), "slice_sizes": (1, 4),
             "indices_are_sorted": False}
    inst = spec.instance({"operand": TensorType((4, 3), f32), "start_indices": TensorType((2, 1), SI32)}, attrs,
                         {"result": TensorType((2, 4), f32)})
    yield ("slice_sizes [1, 4] on a 4x3 operand: the second size past its axis", "gather_c12",
           Skeleton(spec.mnemonic, (f32, SI32), attrs=(("index_vector_dim", 1), ("indices_are_sorted", False))),
           inst)


SPEC = OpSpec(
    mnemonic="gather",
    operands=(Operand("operand", ANY), Operand("start_indices", INTEGER)),
    attributes=(
        # v1.20's batching dims first: the hints of the seed's lists read how many there are
        Attribute("operand_batching_dims", I64ArrayAttr(), length=0, group=_DN, default=(), since="v1.20"),
        Attribute("start_indices_batching_dims", I64ArrayAttr(), length=_index_batching_lengths, group=_DN,
                  default=(), since="v1.20"),
        Attribute("offset_dims", I64ArrayAttr(), length=_offset_dims_lengths, group=_DN),
        Attribute("collapsed_slice_dims", I64ArrayAttr(), length=_collapsed_lengths, group=_DN),
        Attribute("index_vector_dim", IntAttr(64), choices=tuple(range(MAX_INDEX_VECTOR_DIM + 1)), group=_DN),
        Attribute("start_index_map", I64ArrayAttr(), length=_start_index_map_lengths, group=_DN),
        Attribute("slice_sizes", I64ArrayAttr(), length=_operand_rank),
        Attribute("indices_are_sorted", BoolAttr(), default=False),
    ),
    groups=(Group(_DN, "stablehlo.gather",
                  ("offset_dims", "collapsed_slice_dims", "operand_batching_dims", "start_indices_batching_dims",
                   "start_index_map", "index_vector_dim")),),
    results=(Result("result", ANY),),
    constraints=(gather_c1, gather_c2, gather_c3, gather_c4, gather_c5, gather_c6, gather_c7, gather_c8,
                 gather_c9, gather_c10, gather_c11, gather_c12, gather_c13, gather_c15,
                 gather_c16, gather_c17, gather_c18, gather_c19, gather_c20, gather_c21, gather_c22, gather_c23,
                 gather_c24, gather_c25),
    infer=infer,
    semantics=DataMovement(arrays),
    exercise=Exercise(corners=CORNERS, indices=Indices(start_placement, CLAMPED),
                      later=LATER_CORNERS, appended_last=slice_past_its_axis),
    implied=('gather_c1', 'gather_c5', 'gather_c7', 'gather_c11', 'gather_c16', 'gather_c18'),
    later=LATER,
    quantization=MOVES_PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; the storage values move
)
