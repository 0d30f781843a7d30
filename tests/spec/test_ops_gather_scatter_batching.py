"""gather and scatter with v1.20's batching dims (`operand_batching_dims` /
`start_indices_batching_dims`, `input_batching_dims` /
`scatter_indices_batching_dims`): the constraints v1.20 adds (each broken
alone), inference, the index formulas against v1.20's own Examples and
numpy fancy indexing, and empty batching dims giving exactly the seed's op."""
from __future__ import annotations

import numpy as np
import pytest

from shlo_conform.spec.dsl import ANY_VALUE, Choices, Function
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.types import E_F32 as F32, SI32, SI64, TensorType

GATHER = OPS["gather"]
SCATTER = OPS["scatter"]


# --------------------------------------------------------------------------
# gather
# --------------------------------------------------------------------------

def gather(operand, indices, offset_dims, collapsed, obd, sibd, index_map, ivd, slice_sizes, result=None,
           et=SI32, iet=SI64, sorted_=False):
    ops = {"operand": TensorType(tuple(operand), et), "start_indices": TensorType(tuple(indices), iet)}
    attrs = {"offset_dims": tuple(offset_dims), "collapsed_slice_dims": tuple(collapsed),
             "operand_batching_dims": tuple(obd), "start_indices_batching_dims": tuple(sibd),
             "start_index_map": tuple(index_map), "index_vector_dim": ivd, "slice_sizes": tuple(slice_sizes),
             "indices_are_sorted": sorted_}
    inst = GATHER.instance(ops, attrs)
    res = GATHER.infer(inst)["result"] if result is None else TensorType(tuple(result), et)
    return GATHER.instance(ops, attrs, {"result": res})


def example_gather(**kw):
    """v1.20's Example: (2x3x4x2xi32, 2x2x3x2xi64) -> 2x2x3x2x2xi32."""
    args = dict(operand=(2, 3, 4, 2), indices=(2, 2, 3, 2), offset_dims=(3, 4), collapsed=(1,), obd=(0,),
                sibd=(1,), index_map=(2, 1), ivd=3, slice_sizes=(1, 1, 2, 2), result=(2, 2, 3, 2, 2))
    args.update(kw)
    return gather(**args)


EXAMPLE_OPERAND = np.arange(1, 49, dtype=np.int32).reshape(2, 3, 4, 2)
EXAMPLE_INDICES = np.array([[[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]],
                            [[[0, 0], [2, 1], [2, 2]], [[1, 2], [0, 1], [1, 0]]]], dtype=np.int64)
EXAMPLE_GATHER_RESULT = [
    [[[[1, 2], [3, 4]], [[3, 4], [5, 6]], [[13, 14], [15, 16]]],
     [[[33, 34], [35, 36]], [[35, 36], [37, 38]], [[41, 42], [43, 44]]]],
    [[[[1, 2], [3, 4]], [[13, 14], [15, 16]], [[21, 22], [23, 24]]],
     [[[43, 44], [45, 46]], [[33, 34], [35, 36]], [[27, 28], [29, 30]]]]]


def test_gather_example_is_valid_and_inferred():
    inst = example_gather(result=None)
    assert tuple(inst.result.shape) == (2, 2, 3, 2, 2)
    assert GATHER.violated(inst) == []


@pytest.mark.parametrize("change, broken", [
    (dict(sibd=(2,)), ["gather_c24"]),                                        # indices axis 2 is 3 long, not 2
    (dict(slice_sizes=(2, 1, 2, 2)), ["gather_c19"]),                         # a batching dim sliced 2 wide
    (dict(sibd=(3,)), ["gather_c22"]),                                        # the index vector's own axis
    (dict(sibd=(4,), operand=(0, 3, 4, 2), slice_sizes=(0, 1, 2, 2)), ["gather_c21"]),   # past rank 4
    (dict(sibd=(1, 2)), ["gather_c23"]),                                      # two against one
    (dict(index_map=(2, 0)), ["gather_c25"]),                                 # a start into the batching dim
])
def test_gather_batching_constraint_broken_alone(change, broken):
    assert GATHER.violated(example_gather(**change)) == broken


def test_gather_batching_dims_pair_any_axes_of_equal_size():
    assert GATHER.violated(example_gather(sibd=(0,))) == []   # indices axis 0 is 2 long too


def test_gather_two_batching_dims_sorted_and_unique():
    """Two batching dims: unsorted operand_batching_dims break v1.20 C10
    (gather_c17) alone; a repeated start_indices batching dim v1.20 C13
    (gather_c20) alone."""
    base = dict(operand=(2, 3, 4), indices=(2, 3, 1), offset_dims=(), collapsed=(2,), obd=(0, 1), sibd=(0, 1),
                index_map=(2,), ivd=2, slice_sizes=(1, 1, 1))
    assert GATHER.violated(gather(**base)) == []
    swapped = dict(base, obd=(1, 0), operand=(3, 2, 4), sibd=(0, 1))
    assert GATHER.violated(gather(**swapped)) == ["gather_c17"]
    square = dict(base, operand=(2, 2, 4), indices=(2, 2, 1), sibd=(0, 0))
    assert GATHER.violated(gather(**square)) == ["gather_c20"]


def test_gather_batching_dims_shape_rules_imply_c16_and_c18():
    """A batching dim that is also collapsed, or outside the operand, leaves
    C1 and C13 broken too (the findings: gather_c16, gather_c18 implied)."""
    bad = GATHER.violated(example_gather(collapsed=(0,)))
    assert "gather_c16" in bad and "gather_c13" in bad
    bad = GATHER.violated(example_gather(obd=(4,)))
    assert "gather_c18" in bad and "gather_c13" in bad


def run_gather(inst, operand, indices):
    [out] = GATHER.semantics.fn(inst, np.asarray(operand), np.asarray(indices))
    return out


def test_gather_example_values():
    """v1.20's printed result; its start [0, 9] is out of bounds, and the
    printed value is the clamped slice (v1.20 clamps the start): one value
    everywhere, none open; the same start moved in bounds by hand reads
    the same slice."""
    out = run_gather(example_gather(), EXAMPLE_OPERAND, EXAMPLE_INDICES)
    assert isinstance(out, np.ndarray) and not isinstance(out, Choices)
    assert out.tolist() == EXAMPLE_GATHER_RESULT
    in_bounds = example_gather()
    indices = EXAMPLE_INDICES.copy()
    indices[0, 1, 2] = [0, 2]
    assert run_gather(in_bounds, EXAMPLE_OPERAND, indices).tolist()[0][1][2] == [[41, 42], [43, 44]]
    assert out.tolist()[0][1][2] == [[41, 42], [43, 44]]


def test_gather_vmapped_take_against_numpy():
    """JAX's vmapped `x[i]`: operand (B, N), start_indices (B, 1), one
    batching dim pair, the index vector last: result[b, 0] = xs[b, idx[b]]."""
    rng = np.random.default_rng(0)
    xs = rng.integers(-100, 100, (5, 7)).astype(np.int32)
    idx = rng.integers(0, 7, (5, 1))
    inst = gather((5, 7), (5, 1), (1,), (), (0,), (0,), (1,), 1, (1, 1), sorted_=True)
    assert GATHER.violated(inst) == [] and tuple(inst.result.shape) == (5, 1)
    out = run_gather(inst, xs, idx)
    assert isinstance(out, np.ndarray), "sorted within each batch: one start per batch"
    assert out[:, 0].tolist() == xs[np.arange(5), idx[:, 0]].tolist()


def test_gather_two_batching_dims_with_windows_against_numpy():
    """Batching axes 0 and 2 of the operand paired with axes 1 and 0 of the
    indices (not in order), a window of 2 along axis 3, index vector between."""
    rng = np.random.default_rng(1)
    operand = rng.integers(0, 1000, (3, 5, 4, 6)).astype(np.int32)   # batch a=3 (axis 0), batch b=4 (axis 2)
    indices = np.stack([rng.integers(0, 5, (4, 3)), rng.integers(0, 5, (4, 3))], axis=1)   # (4, 2, 3): ivd=1
    # start_indices axes: 0 <-> operand 2 (b), 2 <-> operand 0 (a); components: operand axes 1 and 3
    inst = gather((3, 5, 4, 6), (4, 2, 3), (2,), (1,), (0, 2), (2, 0), (1, 3), 1, (1, 1, 1, 2))
    assert GATHER.violated(inst) == [] and tuple(inst.result.shape) == (4, 3, 2)
    out = run_gather(inst, operand, indices)
    want = np.empty((4, 3, 2), np.int32)
    for b in range(4):
        for a in range(3):
            s1, s3 = indices[b, 0, a], indices[b, 1, a]
            want[b, a] = operand[a, s1, b, s3:s3 + 2]
    assert isinstance(out, np.ndarray) and out.tolist() == want.tolist()


def test_gather_empty_batching_dims_are_the_seed_gather():
    """Listed empty or left out: the same instance, the same values."""
    operand = np.arange(1, 25, dtype=np.int32).reshape(3, 4, 2)
    indices = np.array([[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 2]]], dtype=np.int64)
    with_empty = gather((3, 4, 2), (2, 3, 2), (2, 3), (0,), (), (), (1, 0), 2, (1, 2, 2))
    ops, attrs = dict(with_empty.operands), {k: v for k, v in with_empty.attributes.items()
                                             if k not in ("operand_batching_dims", "start_indices_batching_dims")}
    left_out = GATHER.instance(ops, attrs, dict(with_empty.results))
    assert left_out.operand_batching_dims == () and GATHER.violated(left_out) == []
    assert run_gather(with_empty, operand, indices).tolist() == run_gather(left_out, operand, indices).tolist()


def test_gather_sorted_is_read_within_each_batch():
    """One start per batch, unsorted across batches: defined (JAX writes
    indices_are_sorted for vmapped x[i]); unsorted within a batch: undefined."""
    xs = np.arange(12, dtype=np.int32).reshape(2, 6)
    inst = gather((2, 6), (2, 2, 1), (), (1,), (0,), (0,), (1,), 2, (1, 1), sorted_=True)
    assert GATHER.violated(inst) == []
    out = run_gather(inst, xs, np.array([[[1], [4]], [[0], [2]]]))   # each batch sorted, batch 1 below batch 0
    assert isinstance(out, np.ndarray) and out.tolist() == [[1, 4], [6, 8]]
    out = run_gather(inst, xs, np.array([[[4], [1]], [[0], [2]]]))   # batch 0 unsorted
    assert isinstance(out, Choices) and all(v == [ANY_VALUE] for v in out.options.values())


def test_gather_out_of_bounds_with_batching_reads_the_clamped_slice():
    """Batch 0's start 5 with a window of 3 runs past 6: v1.20 clamps it to
    3 within that batch's row, [3, 4, 5] — by hand, one value each; batch
    1's in-bounds start 1 reads [7, 8, 9]."""
    xs = np.arange(12, dtype=np.int32).reshape(2, 6)
    inst = gather((2, 6), (2, 1), (1,), (), (0,), (0,), (1,), 1, (1, 3))
    out = run_gather(inst, xs, np.array([[5], [1]]))
    assert isinstance(out, np.ndarray) and not isinstance(out, Choices)
    assert out.reshape(2, 3).tolist() == [[3, 4, 5], [7, 8, 9]]


# --------------------------------------------------------------------------
# scatter
# --------------------------------------------------------------------------

def scalar_fn(body, call, *ets):
    ts = tuple(TensorType((), et) for et in ets)
    return Function(ts + ts, ts, body, call)


def scatter(inputs, indices, updates, window_dims, inserted, ibd, sibd, index_map, ivd, ets=(SI64,), iet=SI64,
            call=None, body="add", sorted_=False, unique=False):
    ops = {"inputs": [TensorType(tuple(inputs), et) for et in ets],
           "scatter_indices": TensorType(tuple(indices), iet),
           "updates": [TensorType(tuple(updates), et) for et in ets]}
    attrs = {"update_window_dims": tuple(window_dims), "inserted_window_dims": tuple(inserted),
             "input_batching_dims": tuple(ibd), "scatter_indices_batching_dims": tuple(sibd),
             "scatter_dims_to_operand_dims": tuple(index_map), "index_vector_dim": ivd,
             "indices_are_sorted": sorted_, "unique_indices": unique}
    regions = {"update_computation": scalar_fn(body, call or (lambda a, b: [a + b]), *ets)}
    inst = SCATTER.instance(ops, attrs, {}, regions)
    return SCATTER.instance(ops, attrs, SCATTER.infer(inst), regions)


def example_scatter(**kw):
    args = dict(inputs=(2, 3, 4, 2), indices=(2, 2, 3, 2), updates=(2, 2, 3, 2, 2), window_dims=(3, 4),
                inserted=(1,), ibd=(0,), sibd=(1,), index_map=(2, 1), ivd=3)
    args.update(kw)
    return scatter(**args)


EXAMPLE_SCATTER_RESULT = [
    [[[3, 4], [6, 7], [6, 7], [7, 8]], [[9, 10], [11, 12], [15, 16], [17, 18]],
     [[17, 18], [19, 20], [22, 23], [24, 25]]],
    [[[25, 26], [28, 29], [30, 31], [31, 32]], [[35, 36], [38, 39], [38, 39], [39, 40]],
     [[41, 42], [44, 45], [46, 47], [47, 48]]]]


def run_scatter(inst, *arrays):
    return SCATTER.semantics.fn(inst, *[np.asarray(a) for a in arrays])


def test_scatter_example_is_valid():
    assert SCATTER.violated(example_scatter()) == []


def test_scatter_example_values():
    """v1.20's printed result: the window at start [0, 9] is out of bounds
    and skipped (its updates land nowhere)."""
    [out] = run_scatter(example_scatter(), EXAMPLE_OPERAND.astype(np.int64), EXAMPLE_INDICES,
                        np.ones((2, 2, 3, 2, 2), np.int64))
    primary = out.primary if isinstance(out, Choices) else out
    assert primary.tolist() == EXAMPLE_SCATTER_RESULT


@pytest.mark.parametrize("change, broken", [
    (dict(sibd=(2,)), ["scatter_c24"]),                                       # indices axis 2 is 3 long, not 2
    (dict(inputs=(3, 3, 4, 2)), ["scatter_c24"]),                             # 3 examples against 2
    (dict(sibd=(3,)), ["scatter_c22"]),
    (dict(sibd=(4,), inputs=(0, 3, 4, 2)), ["scatter_c21"]),
    (dict(sibd=(1, 2)), ["scatter_c23"]),
    (dict(index_map=(2, 0)), ["scatter_c25"]),
])
def test_scatter_batching_constraint_broken_alone(change, broken):
    assert SCATTER.violated(example_scatter(**change)) == broken


def test_scatter_two_batching_dims_sorted_and_unique():
    base = dict(inputs=(2, 3, 4), indices=(2, 3, 1), updates=(2, 3), window_dims=(), inserted=(2,), ibd=(0, 1),
                sibd=(0, 1), index_map=(2,), ivd=2)
    assert SCATTER.violated(scatter(**base)) == []
    assert SCATTER.violated(scatter(**dict(base, ibd=(1, 0), inputs=(3, 2, 4)))) == ["scatter_c18"]
    square = dict(base, inputs=(2, 2, 4), indices=(2, 2, 1), updates=(2, 2), sibd=(0, 0))
    assert SCATTER.violated(scatter(**square)) == ["scatter_c20"]


def test_scatter_per_example_gradient_against_numpy():
    """The scatter-add of a vmapped gather's gradient: input (B, N), indices
    (B, K, 1), one batching dim pair; repeated indices within an example add."""
    rng = np.random.default_rng(2)
    b, n, k = 4, 5, 6
    idx = rng.integers(0, n, (b, k, 1))
    upd = rng.integers(-9, 10, (b, k)).astype(np.int64)
    inst = scatter((b, n), (b, k, 1), (b, k), (), (1,), (0,), (0,), (1,), 2)
    assert SCATTER.violated(inst) == []
    [out] = run_scatter(inst, np.zeros((b, n), np.int64), idx, upd)
    want = np.zeros((b, n), np.int64)
    np.add.at(want, (np.repeat(np.arange(b), k), idx[:, :, 0].ravel()), upd.ravel())
    assert isinstance(out, np.ndarray) and out.tolist() == want.tolist()


def test_scatter_float_add_with_batching_offers_every_order():
    """f32 adds in another order round differently: each order is offered per element."""
    inst = scatter((1, 2), (1, 3, 1), (1, 3), (), (1,), (0,), (0,), (1,), 2, ets=(F32,),
                   call=lambda a, b: [np.float32(a + b)])
    upd = np.array([[1e8, 1.0, -1e8]], np.float32)
    [out] = run_scatter(inst, np.zeros((1, 2), np.float32), np.zeros((1, 3, 1), np.int64), upd)
    assert isinstance(out, Choices)
    values = {float(out.primary[0, 0])} | {float(v) for v in out.options.get(0, [])}
    assert {0.0, 1.0} <= values


def test_scatter_empty_batching_dims_are_the_seed_scatter():
    inp = np.arange(1, 25, dtype=np.int64).reshape(3, 4, 2)
    indices = np.array([[[0, 2], [1, 0], [2, 1]], [[0, 1], [1, 0], [2, 0]]], dtype=np.int64)
    inst = scatter((3, 4, 2), (2, 3, 2), (2, 3, 2, 2), (2, 3), (0,), (), (), (1, 0), 2)
    [out] = run_scatter(inst, inp, indices, np.ones((2, 3, 2, 2), np.int64))
    assert out.tolist() == [[[1, 2], [5, 6], [8, 9], [8, 9]],
                            [[10, 11], [12, 13], [14, 15], [16, 17]],
                            [[18, 19], [20, 21], [21, 22], [23, 24]]]


def test_scatter_unique_across_batches_is_kept():
    """The same start in two examples hits two elements: unique_indices holds."""
    inst = scatter((2, 3), (2, 1), (2,), (), (1,), (0,), (0,), (1,), 1, unique=True, body="replace",
                   call=lambda a, b: [b])
    [out] = run_scatter(inst, np.zeros((2, 3), np.int64), np.array([[1], [1]]), np.array([7, 8], np.int64))
    assert isinstance(out, np.ndarray) and out.tolist() == [[0, 7, 0], [0, 8, 0]]


# --------------------------------------------------------------------------
# structure: the seed's draws never see the batching dims
# --------------------------------------------------------------------------

@pytest.mark.parametrize("spec", [GATHER, SCATTER], ids=["gather", "scatter"])
def test_later_clauses_are_declared_past_the_seed_labels(spec):
    later = dict(spec.later)
    seed_numbers = [int(label.rsplit("_c", 1)[1]) for label in spec.labels if label not in later]
    assert all(int(label.rsplit("_c", 1)[1]) > max(seed_numbers) for label in later)
    assert all(clause.startswith("v1.20 C") for clause in later.values())
    for label, clause in later.items():   # each docstring names its v1.20 clause
        assert f"v1.20 ({clause.split()[1]})" in spec.constraint(label).__doc__
    assert [a.name for a in spec.attributes if a.since] == [a.name for a in spec.attributes[:2]]


def test_the_bundled_suite_has_batching_cases():
    """suites/core: value cases with batching dims for both ops, and an
    invalid case for every v1.20 clause that can be broken alone (the two
    implied ones of each op are listed in the manifest instead)."""
    from shlo_conform.suites.io import load_cases, load_manifest, suite_path
    core = suite_path("core")
    manifest = load_manifest(core)
    for spec, field in ((GATHER, "operand_batching_dims"), (SCATTER, "input_batching_dims")):
        cases = load_cases(core, ops={spec.mnemonic})
        batched = [c for c in cases if field in c.mlir]
        assert sum(c.kind == "value" for c in batched) >= 10
        named = {c.violates for c in cases if c.kind == "invalid"}
        later = set(dict(spec.later))
        implied = later & set(spec.implied)
        assert later - implied <= named and not implied & named
        assert implied <= set(manifest["constraints_without_negative_case"][spec.mnemonic])
