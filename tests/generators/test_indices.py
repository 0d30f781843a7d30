"""Index values: in bounds really is in bounds, out of bounds really is not —
checked by recomputing every index with the op's own formula."""
from __future__ import annotations

import functools

import numpy as np
import pytest

from shlo_conform.generators.indices import NoIndices, index_arrays
from shlo_conform.generators.solve import solve_shapes
from shlo_conform.spec.symbolic import Skeleton
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.ops.gather import components_sorted, full_start_index, full_window_index, start_index
from shlo_conform.spec.types import SI4, SI32, SI64, UI4, UI8, TensorType

GATHER, SCATTER = OPS["gather"], OPS["scatter"]


# --------------------------------------------------------------------------
# the op's formulas, over a whole instance
# --------------------------------------------------------------------------

def gather_reads(inst, indices):
    """(operand_index for every result element, full start index per batch position, row-major)."""
    out_shape = [int(d) for d in inst.result.shape]
    offset_dims = list(inst.offset_dims)
    batch_dims = [d for d in range(len(out_shape)) if d not in offset_dims]
    r = len(inst.operand.shape)
    reads, starts = [], {}
    for ri in np.ndindex(*out_shape):
        b = tuple(ri[d] for d in batch_dims)
        starts.setdefault(b, full_start_index(start_index(indices, b, inst.index_vector_dim),
                                              inst.start_index_map, r))
        off = full_window_index([ri[d] for d in offset_dims], set(inst.collapsed_slice_dims), r)
        reads.append(tuple(s + o for s, o in zip(starts[b], off)))
    return reads, [starts[b] for b in sorted(starts)]


def scatter_targets(inst, indices):
    up = [int(d) for d in inst.updates[0].shape]
    window_dims = list(inst.update_window_dims)
    scatter_dims = [d for d in range(len(up)) if d not in window_dims]
    r = len(inst.inputs[0].shape)
    targets, starts = [], {}
    for ui in np.ndindex(*up):
        u = tuple(ui[d] for d in scatter_dims)
        starts.setdefault(u, full_start_index(start_index(indices, u, inst.index_vector_dim),
                                              inst.scatter_dims_to_operand_dims, r))
        w = full_window_index([ui[d] for d in window_dims], set(inst.inserted_window_dims), r)
        targets.append(tuple(s + x for s, x in zip(starts[u], w)))
    return targets, [starts[u] for u in sorted(starts)]


def inside(index, shape) -> bool:
    return all(0 <= i < int(d) for i, d in zip(index, shape))


def fits(arr, et) -> bool:
    vals = np.asarray(arr).astype(np.int64)
    return arr.dtype == et.numpy and bool(np.all(vals >= et.min_value)) and bool(np.all(vals <= et.max_value))


# --------------------------------------------------------------------------
# instances: solved from the specs, over several structures
# --------------------------------------------------------------------------

def gather_instances():
    rng = np.random.default_rng(7)
    out = []
    for ivd, ranks, lens in [(1, [1, 1], (0, 1, 1)), (1, [2, 1], (1, 1, 1)), (2, [2, 2], (1, 1, 1)),
                             (1, [2, 2], (2, 0, 2)), (0, [2, 1], (1, 1, 2)), (2, [2, 2], (0, 2, 1)),
                             (1, [3, 2], (2, 1, 2))]:
        for iet in (SI32, UI8, SI4):
            for sorted_ in (False, True):
                skel = Skeleton("gather", (SI32, iet), (), (("index_vector_dim", ivd), ("indices_are_sorted", sorted_)))
                layout = {"lengths": {"offset_dims": lens[0], "collapsed_slice_dims": lens[1],
                                      "start_index_map": lens[2], "slice_sizes": ranks[0]}}
                out += solve_shapes(GATHER, skel, ranks, rng, 3, zero_prob=0.0, layout=layout)
    return out


def scatter_instances():
    rng = np.random.default_rng(11)
    out = []
    for ranks, lens in [([1, 1, 1], (0, 1, 1)), ([1, 2, 1], (1, 0, 1)), ([2, 2, 2], (1, 1, 1)),
                        ([2, 1, 1], (1, 1, 1)), ([2, 2, 2], (0, 2, 2)), ([3, 2, 3], (2, 1, 1))]:
        for iet in (SI64, UI4):
            for sorted_, unique in ((False, False), (True, False), (False, True), (True, True)):
                skel = Skeleton("scatter", (SI32, iet, SI32), (),
                                (("indices_are_sorted", sorted_), ("unique_indices", unique)),
                                (("update_computation", "add"),))
                layout = {"counts": {"inputs": 1}, "lengths": {
                    "update_window_dims": lens[0], "inserted_window_dims": lens[1],
                    "scatter_dims_to_operand_dims": lens[2]}}
                out += solve_shapes(SCATTER, skel, ranks, rng, 3, zero_prob=0.0, layout=layout)
    return out


# solved when a test first asks (functools.cache), not at import: every xdist worker imports this module to
# collect it, and solving took 3.9 s of each worker's collection
GATHERS = functools.cache(gather_instances)
SCATTERS = functools.cache(scatter_instances)


def test_the_instances_vary():
    assert len(GATHERS()) > 60 and len(SCATTERS()) > 60
    assert len({(i.index_vector_dim, len(i.offset_dims), i.start_indices.element_type) for i in GATHERS()}) > 10


# --------------------------------------------------------------------------
# gather
# --------------------------------------------------------------------------

def made(spec, insts, mode: str, key: str) -> list:
    """(instance, index array) for each instance the generator makes indices
    of this mode for (seeded by position); NoIndices ones left out."""
    out = []
    for n, inst in enumerate(insts):
        try:
            out.append((inst, index_arrays(spec, inst, np.random.default_rng(n), mode)[key]))
        except NoIndices:
            continue
    return out


def test_gather_in_bounds():
    got = made(GATHER, GATHERS(), "in_bounds", "start_indices")
    for inst, idx in got:
        assert fits(idx, inst.start_indices.element_type) and idx.shape == tuple(inst.start_indices.shape)
        reads, starts = gather_reads(inst, idx)
        assert all(inside(i, inst.operand.shape) for i in reads), inst
        if inst.indices_are_sorted:
            assert components_sorted(starts), (inst, idx)
    assert len(got) > 0.8 * len(GATHERS())


def test_gather_out_of_bounds():
    got = made(GATHER, GATHERS(), "out_of_bounds", "start_indices")
    for inst, idx in got:
        assert fits(idx, inst.start_indices.element_type)
        reads, starts = gather_reads(inst, idx)
        assert not all(inside(i, inst.operand.shape) for i in reads), (inst, idx)
        if inst.indices_are_sorted:
            assert components_sorted(starts), (inst, idx)
    assert len(got) > 0.5 * len(GATHERS())


def test_gather_hand_case_and_type_limits():
    def inst(dim, iet):
        return GATHER.instance({"operand": TensorType((dim,), SI32), "start_indices": TensorType((3,), iet)},
                               {"offset_dims": (1,), "collapsed_slice_dims": (), "start_index_map": (0,),
                                "index_vector_dim": 1, "slice_sizes": (2,), "indices_are_sorted": False},
                               {"result": TensorType((3, 2), SI32)})
    rng = np.random.default_rng(0)
    for _ in range(20):
        idx = index_arrays(GATHER, inst(5, SI32), rng, "in_bounds")["start_indices"]
        assert idx.dtype == np.int32 and all(0 <= v <= 3 for v in idx.tolist())
    # 40 elements, windows of 2: in bounds up to 38, but ui4 stops at 15 and has no negatives
    idx = index_arrays(GATHER, inst(40, UI4), rng, "in_bounds")["start_indices"]
    assert all(0 <= int(v) <= 15 for v in idx)
    with pytest.raises(NoIndices):
        index_arrays(GATHER, inst(40, UI4), rng, "out_of_bounds")
    # si4 can still go negative
    idx = index_arrays(GATHER, inst(40, SI4), rng, "out_of_bounds")["start_indices"]
    assert any(int(v) < 0 for v in idx)


# --------------------------------------------------------------------------
# scatter
# --------------------------------------------------------------------------

def test_scatter_in_bounds_and_promises():
    got = made(SCATTER, SCATTERS(), "in_bounds", "scatter_indices")
    dup_cases = 0
    for inst, idx in got:
        assert fits(idx, inst.scatter_indices.element_type) and idx.shape == tuple(inst.scatter_indices.shape)
        targets, starts = scatter_targets(inst, idx)
        assert all(inside(t, inst.inputs[0].shape) for t in targets), (inst, idx)
        if inst.unique_indices:
            assert len(set(targets)) == len(targets), (inst, idx)
        elif len(set(targets)) < len(targets):
            dup_cases += 1
        if inst.indices_are_sorted:
            assert components_sorted(starts), (inst, idx)
    assert len(got) > 0.7 * len(SCATTERS())
    assert dup_cases > 0.2 * len(got)


def test_scatter_out_of_bounds():
    got = made(SCATTER, SCATTERS(), "out_of_bounds", "scatter_indices")
    for inst, idx in got:
        assert fits(idx, inst.scatter_indices.element_type)
        targets, starts = scatter_targets(inst, idx)
        assert not all(inside(t, inst.inputs[0].shape) for t in targets), (inst, idx)
        if inst.unique_indices:
            assert len(set(targets)) == len(targets), (inst, idx)
        if inst.indices_are_sorted:
            assert components_sorted(starts), (inst, idx)
    assert len(got) > 0.5 * len(SCATTERS())


def test_scatter_duplicates_are_likely_on_a_large_input():
    # 10 single-element updates into 1000 elements: by chance they would rarely collide
    inst = SCATTER.instance(
        {"inputs": [TensorType((1000,), SI32)], "scatter_indices": TensorType((10, 1), SI64),
         "updates": [TensorType((10,), SI32)]},
        {"update_window_dims": (), "inserted_window_dims": (0,), "scatter_dims_to_operand_dims": (0,),
         "index_vector_dim": 1, "indices_are_sorted": False, "unique_indices": False})
    colliding = 0
    for seed in range(20):
        idx = index_arrays(SCATTER, inst, np.random.default_rng(seed), "in_bounds")["scatter_indices"]
        targets, _ = scatter_targets(inst, idx)
        assert all(inside(t, (1000,)) for t in targets)
        colliding += len(set(targets)) < len(targets)
    assert colliding >= 18


def test_scatter_unique_impossible_is_reported():
    # two single-element updates into a 1-element input: they must collide
    inst = SCATTER.instance(
        {"inputs": [TensorType((1,), SI32)], "scatter_indices": TensorType((2, 1), SI64),
         "updates": [TensorType((2,), SI32)]},
        {"update_window_dims": (), "inserted_window_dims": (0,), "scatter_dims_to_operand_dims": (0,),
         "index_vector_dim": 1, "indices_are_sorted": False, "unique_indices": True})
    with pytest.raises(NoIndices):
        index_arrays(SCATTER, inst, np.random.default_rng(0), "in_bounds")


# --------------------------------------------------------------------------
# dynamic_slice, dynamic_update_slice
# --------------------------------------------------------------------------

def dynamic_slice(dims, sizes, et):
    return OPS["dynamic_slice"].instance(
        {"operand": TensorType(tuple(dims), SI32), "start_indices": [TensorType((), et) for _ in dims]},
        {"slice_sizes": tuple(sizes)}, {"result": TensorType(tuple(sizes), SI32)})


def dynamic_update_slice(dims, update, et):
    return OPS["dynamic_update_slice"].instance(
        {"operand": TensorType(tuple(dims), SI32), "update": TensorType(tuple(update), SI32),
         "start_indices": [TensorType((), et) for _ in dims]},
        {}, {"result": TensorType(tuple(dims), SI32)})


@pytest.mark.parametrize("make", [dynamic_slice, dynamic_update_slice])
@pytest.mark.parametrize("et", [SI32, SI4, UI8, UI4])
def test_dynamic_starts(make, et):
    dims, sizes = (6, 3, 20), (2, 3, 1)
    inst = make(dims, sizes, et)
    spec = inst.spec
    rng = np.random.default_rng(5)
    clamped_somewhere, past, negative = 0, 0, 0
    for _ in range(40):
        got = index_arrays(spec, inst, rng, "in_bounds")
        assert sorted(got) == [("start_indices", k) for k in range(3)]
        for k, (d, s) in enumerate(zip(dims, sizes)):
            v = got[("start_indices", k)]
            assert v.shape == () and v.dtype == et.numpy
            assert 0 <= int(v) <= min(d - s, et.max_value)
        got = index_arrays(spec, inst, rng, "out_of_bounds")
        vals = [int(got[("start_indices", k)]) for k in range(3)]
        assert all(et.min_value <= v <= et.max_value for v in vals)
        out = [not (0 <= v <= d - s) for v, d, s in zip(vals, dims, sizes)]
        assert any(out), vals
        clamped_somewhere += 1
        past += any(v > d - s for v, d, s in zip(vals, dims, sizes))
        negative += any(v < 0 for v in vals)
    assert past > 0
    assert negative > 0 if et.min_value < 0 else negative == 0


def test_unknown_op_and_mode():
    with pytest.raises(KeyError):
        index_arrays(OPS["add"], None, np.random.default_rng(0), "in_bounds")
    with pytest.raises(ValueError):
        index_arrays(GATHER, GATHERS()[0], np.random.default_rng(0), "sideways")
