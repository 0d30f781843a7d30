"""gather and scatter: constraints on hand-made instances, inference, and the
index formulas against the seed's Examples and hand-computed arrays."""
from __future__ import annotations

import numpy as np
import pytest

from shlo_conform.spec.dsl import ANY_VALUE, Choices, Function
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.types import E_F32 as F32, SI32, SI64, UI8, TensorType

GATHER = OPS["gather"]
SCATTER = OPS["scatter"]


# --------------------------------------------------------------------------
# gather: instances
# --------------------------------------------------------------------------

def gather(operand, indices, offset_dims, collapsed, index_map, ivd, slice_sizes, result=None,
           et=SI32, iet=SI64, sorted_=False, result_et=None):
    ops = {"operand": TensorType(tuple(operand), et), "start_indices": TensorType(tuple(indices), iet)}
    attrs = {"offset_dims": tuple(offset_dims), "collapsed_slice_dims": tuple(collapsed),
             "start_index_map": tuple(index_map), "index_vector_dim": ivd, "slice_sizes": tuple(slice_sizes),
             "indices_are_sorted": sorted_}
    inst = GATHER.instance(ops, attrs)
    res = GATHER.infer(inst)["result"] if result is None else TensorType(tuple(result), et)
    if result_et is not None:
        res = TensorType(res.shape, result_et)
    return GATHER.instance(ops, attrs, {"result": res})


def seed_gather(**kw):
    """The seed's Example: (3x4x2xi32, 2x3x2xi64) -> 2x3x2x2xi32."""
    args = dict(operand=(3, 4, 2), indices=(2, 3, 2), offset_dims=(2, 3), collapsed=(0,), index_map=(1, 0),
                ivd=2, slice_sizes=(1, 2, 2), result=(2, 3, 2, 2))
    args.update(kw)
    return gather(**args)


def test_gather_seed_example_is_valid_and_inferred():
    inst = seed_gather(result=None)
    assert tuple(inst.result.shape) == (2, 3, 2, 2)
    assert GATHER.violated(inst) == []


@pytest.mark.parametrize("change, broken", [
    (dict(ivd=4, indices=(2, 3, 1), index_map=(1,), result=(2, 3, 2, 2, 1)), ["gather_c2"]),
    (dict(index_map=(1,)), ["gather_c3"]),
    (dict(offset_dims=(3, 2)), ["gather_c4"]),                       # sizes 2, 2: combine still fits
    (dict(collapsed=(0,), slice_sizes=(2, 2, 2)), ["gather_c8"]),
    (dict(index_map=(1, 1)), ["gather_c9"]),
    (dict(index_map=(1, 3)), ["gather_c10"]),
    (dict(slice_sizes=(1, 5, 2)), ["gather_c12", "gather_c13"]),     # 5 > dim 4 (and the result is 2x3x2x2)
    (dict(slice_sizes=(1, 5, 2), result=(2, 3, 5, 2)), ["gather_c12"]),
    (dict(slice_sizes=(1, 2, 2), result=(2, 3, 2, 3)), ["gather_c13"]),
    (dict(result=(3, 2, 2, 2)), ["gather_c13"]),
])
def test_gather_constraint_broken_alone(change, broken):
    assert GATHER.violated(seed_gather(**change)) == broken


def test_gather_c6_unsorted_collapsed_dims():
    # operand 3x4x2, collapse axes 1 and 0 (written unsorted), keep axis 2
    inst = gather((3, 4, 2), (5, 2), (1,), (1, 0), (0, 1), 1, (1, 1, 2), result=(5, 2))
    assert GATHER.violated(inst) == ["gather_c6"]
    ok = gather((3, 4, 2), (5, 2), (1,), (0, 1), (0, 1), 1, (1, 1, 2), result=(5, 2))
    assert GATHER.violated(ok) == []


def test_gather_c15_element_type():
    assert GATHER.violated(seed_gather(result_et=F32)) == ["gather_c15"]


def test_gather_counts_and_ranges_come_with_c13():
    """Read literally, combine needs one result axis per batch size and per
    offset size, so C1, C5, C7 and C11 cannot fail without C13 (check-spec
    reports them redundant)."""
    assert GATHER.violated(seed_gather(offset_dims=(2,), result=(2, 3, 2))) == ["gather_c1", "gather_c13"]
    assert GATHER.violated(seed_gather(offset_dims=(2, 4))) == ["gather_c5", "gather_c13"]
    assert GATHER.violated(seed_gather(collapsed=(3,))) == ["gather_c7", "gather_c13"]
    assert GATHER.violated(seed_gather(slice_sizes=(1, 2))) == ["gather_c11", "gather_c13"]


@pytest.mark.parametrize("args, shape", [
    # implicit index vector (index_vector_dim = rank): a trailing 1
    (((5,), (3,), (), (0,), (0,), 1, (1,)), (3,)),
    # rank-0 start_indices: one start, a 3-element window
    (((5,), (), (0,), (), (0,), 0, (3,)), (3,)),
    # index vectors along axis 0 of a 2x3 start_indices
    (((3, 4), (2, 3), (), (0, 1), (0, 1), 0, (1, 1)), (3,)),
    # offset axis in front of the batch axis
    (((5,), (2, 1), (0,), (), (0,), 1, (2,)), (2, 2)),
    # a batch axis between two offset axes
    (((3, 4), (6, 1), (0, 2), (), (1,), 1, (3, 2)), (3, 6, 2)),
    # zero-sized batch
    (((3, 4), (0, 1), (1,), (0,), (0,), 1, (1, 4)), (0, 4)),
])
def test_gather_infer(args, shape):
    inst = gather(*args)
    assert tuple(inst.result.shape) == shape
    assert GATHER.violated(inst) == []


# --------------------------------------------------------------------------
# gather: semantics
# --------------------------------------------------------------------------

def run_gather(inst, operand, indices):
    [out] = GATHER.semantics.fn(inst, np.asarray(operand), np.asarray(indices))
    return out


def test_gather_seed_example_values():
    operand = np.arange(1, 25, dtype=np.int32).reshape(3, 4, 2)
    indices = np.array([[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 2]]], dtype=np.int64)
    want = [[[[1, 2], [3, 4]], [[3, 4], [5, 6]], [[13, 14], [15, 16]]],
            [[[9, 10], [11, 12]], [[11, 12], [13, 14]], [[17, 18], [19, 20]]]]
    out = run_gather(seed_gather(), operand, indices)
    assert isinstance(out, np.ndarray) and out.dtype == np.int32
    assert out.tolist() == want


OPERAND5 = np.array([10, 20, 30, 40, 50], dtype=np.int32)
OPERAND34 = np.arange(12, dtype=np.int32).reshape(3, 4)   # [[0,1,2,3],[4,5,6,7],[8,9,10,11]]


def test_gather_implicit_index_vector():
    inst = gather((5,), (3,), (), (0,), (0,), 1, (1,))
    assert run_gather(inst, OPERAND5, np.array([3, 0, 1], np.int64)).tolist() == [40, 10, 20]


def test_gather_rank0_start_indices():
    inst = gather((5,), (), (0,), (), (0,), 0, (3,))
    assert run_gather(inst, OPERAND5, np.array(2, np.int64)).tolist() == [30, 40, 50]


def test_gather_rank1_index_vector_to_a_scalar():
    inst = gather((3, 4), (2,), (), (0, 1), (0, 1), 0, (1, 1))
    out = run_gather(inst, OPERAND34, np.array([2, 1], np.int64))
    assert out.shape == () and int(out) == 9


def test_gather_index_vector_dim_0():
    inst = gather((3, 4), (2, 3), (), (0, 1), (0, 1), 0, (1, 1))
    indices = np.array([[0, 2, 1], [3, 0, 1]], np.int64)   # columns: (0,3), (2,0), (1,1)
    assert run_gather(inst, OPERAND34, indices).tolist() == [3, 8, 5]


def test_gather_start_index_map_reorders():
    # the index vector's first entry addresses axis 1, its second axis 0
    inst = gather((3, 4), (1, 2), (), (0, 1), (1, 0), 1, (1, 1))
    assert run_gather(inst, OPERAND34, np.array([[3, 2]], np.int64)).tolist() == [11]


def test_gather_offset_axis_in_front():
    inst = gather((5,), (2, 1), (0,), (), (0,), 1, (2,))
    assert run_gather(inst, OPERAND5, np.array([[3], [0]], np.int64)).tolist() == [[40, 10], [50, 20]]


def test_gather_windows_with_a_batch_axis_between():
    # result[i, b, j] = operand[i, s_b + j]
    inst = gather((3, 4), (2, 1), (0, 2), (), (1,), 1, (3, 2))
    out = run_gather(inst, OPERAND34, np.array([[2], [0]], np.int64))
    assert out.tolist() == [[[2, 3], [0, 1]], [[6, 7], [4, 5]], [[10, 11], [8, 9]]]


def test_gather_zero_sized_batch():
    inst = gather((3, 4), (0, 1), (1,), (0,), (0,), 1, (1, 4))
    out = run_gather(inst, OPERAND34, np.zeros((0, 1), np.int64))
    assert isinstance(out, np.ndarray) and out.shape == (0, 4)


def test_gather_collapsed_slice_of_size_0_still_reads():
    """C8 allows slice size 0 in a collapsed axis; operand_index is still
    start + 0, in bounds, so the formula reads the element (the StableHLO
    interpreter does; XLA returns 0)."""
    inst = gather((5,), (2, 1), (), (0,), (0,), 1, (0,))
    assert GATHER.violated(inst) == []
    out = run_gather(inst, OPERAND5, np.array([[3], [1]], np.int64))
    assert isinstance(out, np.ndarray) and out.tolist() == [40, 20]


def test_gather_from_an_empty_operand_is_any_value():
    # slice size 0 in a collapsed axis of an empty operand: every operand_index is out of bounds
    inst = gather((0,), (2, 1), (), (0,), (0,), 1, (0,))
    assert GATHER.violated(inst) == []
    out = run_gather(inst, np.zeros((0,), np.int32), np.array([[0], [1]], np.int64))
    assert isinstance(out, Choices)
    assert out.options == {0: [ANY_VALUE], 1: [ANY_VALUE]}


def test_gather_out_of_bounds():
    """Starts 4 and -1 with 3-element windows on 5 elements: v1.20 clamps
    each start into [0, 5 - 3] (4 -> 2, -1 -> 0), so every element has one
    value, worked by hand: [30, 40, 50], [10, 20, 30], and the in-bounds
    start 1's [20, 30, 40]."""
    inst = gather((5,), (3, 1), (1,), (), (0,), 1, (3,))
    out = run_gather(inst, OPERAND5, np.array([[4], [-1], [1]], np.int64))
    assert isinstance(out, np.ndarray) and not isinstance(out, Choices)
    assert out.tolist() == [[30, 40, 50], [10, 20, 30], [20, 30, 40]]


def test_gather_reading_past_the_end_after_the_clamp_is_any_value_there_only():
    """A collapsed axis of slice size 0: the clamp bounds a start by
    dim - 0 = 5, so start 7 reads operand[5], past the end (an out-of-bounds
    access: implementation-defined, that element only), -2 reads operand[0]
    and 3 reads operand[3]."""
    inst = gather((5,), (3, 1), (), (0,), (0,), 1, (0,))
    out = run_gather(inst, OPERAND5, np.array([[7], [-2], [3]], np.int64))
    assert isinstance(out, Choices)
    assert out.options == {0: [ANY_VALUE]} and out.primary.tolist()[1:] == [10, 40]
    assert "out-of-bounds access" in out.labels[0][0] and "implementation-defined" in out.why


def test_gather_unsigned_indices():
    inst = gather((5,), (2,), (), (0,), (0,), 1, (1,), iet=UI8)
    assert run_gather(inst, OPERAND5, np.array([4, 0], np.uint8)).tolist() == [50, 10]


def test_gather_broken_sorted_promise_is_undefined():
    inst = gather((5,), (2,), (), (0,), (0,), 1, (1,), sorted_=True)
    out = run_gather(inst, OPERAND5, np.array([3, 1], np.int64))
    assert isinstance(out, Choices)
    assert out.options == {0: [ANY_VALUE], 1: [ANY_VALUE]}
    assert "undefined" in out.why
    kept = run_gather(inst, OPERAND5, np.array([1, 3], np.int64))
    assert isinstance(kept, np.ndarray) and kept.tolist() == [20, 40]


def test_gather_sorted_means_every_component():
    # (0, 3) then (1, 0): lexicographically sorted, not component-wise: a broken promise
    inst = gather((3, 4), (2, 2), (), (0, 1), (0, 1), 1, (1, 1), sorted_=True)
    out = run_gather(inst, OPERAND34, np.array([[0, 3], [1, 0]], np.int64))
    assert isinstance(out, Choices) and out.options[0] == [ANY_VALUE]
    ok = run_gather(inst, OPERAND34, np.array([[0, 0], [1, 3]], np.int64))
    assert ok.tolist() == [0, 7]


# --------------------------------------------------------------------------
# scatter: instances
# --------------------------------------------------------------------------

def scalar_fn(body, call, *ets):
    """A Function over rank-0 tensors: current values of `ets`, then updates of `ets`."""
    ts = tuple(TensorType((), et) for et in ets)
    return Function(ts + ts, ts, body, call)


def scatter(inputs, indices, updates, window_dims, inserted, index_map, ivd, ets=(SI32,), iet=SI64,
            call=None, body="add", sorted_=False, unique=False, fn=None, results=None, update_ets=None):
    ops = {"inputs": [TensorType(tuple(inputs), et) for et in ets],
           "scatter_indices": TensorType(tuple(indices), iet),
           "updates": [TensorType(tuple(updates), et) for et in (update_ets or ets)]}
    attrs = {"update_window_dims": tuple(window_dims), "inserted_window_dims": tuple(inserted),
             "scatter_dims_to_operand_dims": tuple(index_map), "index_vector_dim": ivd,
             "indices_are_sorted": sorted_, "unique_indices": unique}
    regions = {"update_computation": fn or scalar_fn(body, call or (lambda a, b: [a + b]), *ets)}
    inst = SCATTER.instance(ops, attrs, {}, regions)
    res = SCATTER.infer(inst) if results is None else {"results": results}
    return SCATTER.instance(ops, attrs, res, regions)


def seed_scatter(**kw):
    args = dict(inputs=(3, 4, 2), indices=(2, 3, 2), updates=(2, 3, 2, 2), window_dims=(2, 3), inserted=(0,),
                index_map=(1, 0), ivd=2)
    args.update(kw)
    return scatter(**args)


def test_scatter_seed_example_is_valid_and_inferred():
    inst = seed_scatter()
    assert [tuple(t.shape) for t in inst.results["results"]] == [(3, 4, 2)]
    assert SCATTER.violated(inst) == []


def test_scatter_window_sizes_are_bounds():
    # C4 writes update_window_dim_sizes <= shape(inputs[0]) (less inserted axes)
    assert SCATTER.violated(seed_scatter(updates=(2, 3, 1, 2))) == []
    assert SCATTER.violated(seed_scatter(updates=(2, 3, 5, 2))) == ["scatter_c4"]
    assert SCATTER.violated(seed_scatter(updates=(2, 2, 2, 2))) == ["scatter_c4"]


def two_inputs(**kw):
    return seed_scatter(ets=(SI32, F32), **kw)


def test_scatter_constraints_broken_alone():
    i32 = TensorType((3, 4, 2), SI32)
    f32 = TensorType((3, 4, 2), F32)
    base = two_inputs()
    assert SCATTER.violated(base) == []

    def with_operands(inst, **ops):
        operands = dict(inst.operands)
        operands.update(ops)
        return SCATTER.instance(operands, dict(inst.attributes), dict(inst.results), dict(inst.regions))

    def with_attrs(inst, **attrs):
        a = dict(inst.attributes)
        a.update(attrs)
        return SCATTER.instance(dict(inst.operands), a, dict(inst.results), dict(inst.regions))

    # C1: the second input has another shape (its result follows it, C16 holds)
    c1 = with_operands(base, inputs=[i32, TensorType((3, 4, 3), F32)])
    c1 = SCATTER.instance(c1.operands, c1.attributes, SCATTER.infer(c1), c1.regions)
    assert SCATTER.violated(c1) == ["scatter_c1"]
    # C3: the second updates tensor has another shape
    c3 = with_operands(base, updates=[TensorType((2, 3, 2, 2), SI32), TensorType((2, 3, 2, 1), F32)])
    assert SCATTER.violated(c3) == ["scatter_c3"]
    # C5: one input, one result, but two updates
    one = seed_scatter()
    c5 = with_operands(one, updates=[TensorType((2, 3, 2, 2), SI32)] * 2)
    assert SCATTER.violated(c5) == ["scatter_c5"]
    # C6: updates[1] of another element type than inputs[1]
    c6 = with_operands(base, updates=[TensorType((2, 3, 2, 2), SI32), TensorType((2, 3, 2, 2), SI32)])
    assert SCATTER.violated(c6) == ["scatter_c6"]
    # C7: window dims unsorted (both of size 2, so combine still fits)
    assert SCATTER.violated(with_attrs(base, update_window_dims=(3, 2))) == ["scatter_c7"]
    # C9: inserted dims unsorted
    c9 = seed_scatter(inputs=(3, 4, 2), indices=(5, 2), updates=(5, 2), window_dims=(1,), inserted=(1, 0),
                      index_map=(0, 1), ivd=1)
    assert SCATTER.violated(c9) == ["scatter_c9"]
    # C11, C12, C13: scatter_dims_to_operand_dims of the wrong size, repeated, out of range
    assert SCATTER.violated(with_attrs(base, scatter_dims_to_operand_dims=(1,))) == ["scatter_c11"]
    assert SCATTER.violated(with_attrs(base, scatter_dims_to_operand_dims=(1, 1))) == ["scatter_c12"]
    assert SCATTER.violated(with_attrs(base, scatter_dims_to_operand_dims=(1, 3))) == ["scatter_c13"]
    # C14: index_vector_dim past the rank (implicit index vector of size 1)
    c14 = seed_scatter(indices=(2, 3), updates=(2, 3, 2, 2), index_map=(1,), ivd=3)
    assert SCATTER.violated(c14) == ["scatter_c14"]
    assert SCATTER.violated(seed_scatter(indices=(2, 3), updates=(2, 3, 2, 2), index_map=(1,), ivd=2)) == []
    # C15: the region takes f32 where the input is si32
    fn = scalar_fn("add", None, F32)
    assert SCATTER.violated(seed_scatter(fn=fn)) == ["scatter_c15"]
    # C16: a result of another type
    assert SCATTER.violated(seed_scatter(results=[f32])) == ["scatter_c16"]
    assert SCATTER.violated(seed_scatter(results=[i32, i32])) == ["scatter_c16"]


def test_scatter_counts_and_ranges_come_with_c4():
    """As for gather: combine needs one updates axis per size, so C2, C8 and
    C10 cannot fail without C4."""
    assert SCATTER.violated(seed_scatter(window_dims=(2,), updates=(2, 3, 2))) == ["scatter_c2", "scatter_c4"]
    assert SCATTER.violated(seed_scatter(window_dims=(2, 4))) == ["scatter_c4", "scatter_c8"]
    assert SCATTER.violated(seed_scatter(inserted=(3,))) == ["scatter_c4", "scatter_c10"]


# --------------------------------------------------------------------------
# scatter: semantics
# --------------------------------------------------------------------------

def run_scatter(inst, *arrays):
    return SCATTER.semantics.fn(inst, *[np.asarray(a) for a in arrays])


def test_scatter_seed_example_values():
    inp = np.arange(1, 25, dtype=np.int32).reshape(3, 4, 2)
    indices = np.array([[[0, 2], [1, 0], [2, 1]], [[0, 1], [1, 0], [2, 0]]], dtype=np.int64)
    [out] = run_scatter(seed_scatter(), inp, indices, np.ones((2, 3, 2, 2), np.int32))
    # integer add: every order gives the same value, so no alternatives
    assert isinstance(out, np.ndarray)
    assert out.tolist() == [[[1, 2], [5, 6], [8, 9], [8, 9]],
                            [[10, 11], [12, 13], [14, 15], [16, 17]],
                            [[18, 19], [20, 21], [21, 22], [23, 24]]]


def elementwise_scatter(n_input, n_updates, ets=(SI32,), **kw):
    """Scatter single elements of a 1-D input: indices (n, 1), one update per index."""
    return scatter((n_input,), (n_updates, 1), (n_updates,), (), (0,), (0,), 1, ets=ets, **kw)


def test_scatter_replace_duplicates_offer_every_order():
    inst = elementwise_scatter(3, 2, call=lambda a, b: [b], body="replace")
    [out] = run_scatter(inst, np.array([7, 8, 9], np.int32), np.array([[1], [1]], np.int64),
                        np.array([100, 200], np.int32))
    assert isinstance(out, Choices)
    assert out.primary.tolist() == [7, 200, 9]         # row-major: the last update wins
    assert out.options == {1: [100]} and out.labels == {1: ["update order 1,0"]}
    assert "implementation-defined permutation" in out.why


def test_scatter_subtract_f32_rounding_depends_on_order():
    """0 - 2^24 - 1 + 2^24 in f32: 2^24 + 1 rounds to 2^24 (ties to even),
    so orders that meet it give 0, the others -1."""
    inst = elementwise_scatter(1, 3, ets=(F32,), call=lambda a, b: [a - b], body="subtract")
    big = np.float32(2.0 ** 24)
    [out] = run_scatter(inst, np.zeros(1, np.float32), np.zeros((3, 1), np.int64),
                        np.array([big, 1.0, -big], np.float32))
    assert isinstance(out, Choices)
    assert out.primary.tolist() == [0.0]
    assert [float(v) for v in out.options[0]] == [-1.0]
    assert out.labels[0] == ["update order 0,2,1"]


def test_scatter_add_f32_set_of_results():
    inst = elementwise_scatter(1, 3, ets=(F32,))
    big = np.float32(2.0 ** 24)
    [out] = run_scatter(inst, np.zeros(1, np.float32), np.zeros((3, 1), np.int64),
                        np.array([big, 1.0, -big], np.float32))
    # 2^24 + 1 -> 2^24, then - 2^24 -> 0 (row-major); 2^24 - 2^24 + 1 -> 1
    assert out.primary.tolist() == [0.0]
    assert [float(v) for v in out.options[0]] == [1.0]


def test_scatter_two_inputs_are_updated_jointly():
    """An arg-max body: (value, index) pairs; on a tie the current pair stays,
    so which index survives depends on the order."""
    def argmax(v, i, uv, ui):
        take = uv > v
        return [uv if take else v, ui if take else i]
    fn = scalar_fn("argmax", argmax, SI32, SI32)
    inst = scatter((2,), (2, 1), (2,), (), (0,), (0,), 1, ets=(SI32, SI32), fn=fn)
    assert SCATTER.violated(inst) == []
    values, index = run_scatter(inst, np.array([0, 0], np.int32), np.array([-1, -1], np.int32),
                                np.array([[1], [1]], np.int64), np.array([5, 5], np.int32),
                                np.array([10, 20], np.int32))
    assert isinstance(values, np.ndarray) and values.tolist() == [0, 5]
    assert isinstance(index, Choices)
    assert index.primary.tolist() == [-1, 10]
    assert index.options == {1: [20]} and index.labels == {1: ["update order 1,0"]}


def test_scatter_window_out_of_bounds():
    """Windows of 3 at starts 3 and 0 on 5 elements: the first reaches index
    5.  v1.20 skips each out-of-bounds update element alone, so indices 3
    and 4 are still updated: one value everywhere (XLA's whole-window skip,
    which leaves 0 there, is not among them)."""
    inst = scatter((5,), (2, 1), (2, 3), (1,), (), (0,), 1)
    [out] = run_scatter(inst, np.zeros(5, np.int32), np.array([[3], [0]], np.int64), np.ones((2, 3), np.int32))
    assert isinstance(out, np.ndarray) and not isinstance(out, Choices)
    assert out.tolist() == [1, 1, 1, 1, 1]


def test_scatter_negative_index_skipped():
    inst = elementwise_scatter(3, 2)
    [out] = run_scatter(inst, np.array([1, 2, 3], np.int32), np.array([[-1], [2]], np.int64),
                        np.array([10, 20], np.int32))
    # a window of one element: the out-of-bounds update touches nothing in bounds
    assert isinstance(out, np.ndarray) and out.tolist() == [1, 2, 23]


def test_scatter_rank0_indices():
    inst = scatter((4,), (), (2,), (0,), (), (0,), 0)
    assert SCATTER.violated(inst) == []
    [out] = run_scatter(inst, np.zeros(4, np.int32), np.array(1, np.int64), np.array([5, 6], np.int32))
    assert out.tolist() == [0, 5, 6, 0]


def test_scatter_empty_updates():
    inst = elementwise_scatter(3, 0)
    [out] = run_scatter(inst, np.array([1, 2, 3], np.int32), np.zeros((0, 1), np.int64), np.zeros(0, np.int32))
    assert out.tolist() == [1, 2, 3]


def test_scatter_broken_unique_promise_is_undefined():
    inst = elementwise_scatter(3, 2, unique=True)
    [out] = run_scatter(inst, np.array([1, 2, 3], np.int32), np.array([[1], [1]], np.int64),
                        np.array([10, 20], np.int32))
    assert isinstance(out, Choices)
    assert out.options == {i: [ANY_VALUE] for i in range(3)}
    assert "not unique" in out.why
    [kept] = run_scatter(inst, np.array([1, 2, 3], np.int32), np.array([[0], [1]], np.int64),
                         np.array([10, 20], np.int32))
    assert isinstance(kept, np.ndarray) and kept.tolist() == [11, 22, 3]


def test_scatter_broken_sorted_promise_is_undefined():
    inst = elementwise_scatter(3, 2, sorted_=True)
    [out] = run_scatter(inst, np.array([1, 2, 3], np.int32), np.array([[2], [0]], np.int64),
                        np.array([10, 20], np.int32))
    assert isinstance(out, Choices) and out.options[2] == [ANY_VALUE]
    assert "sorted" in out.why


def test_scatter_too_many_orders_is_any_value():
    inst = elementwise_scatter(1, 7, call=lambda a, b: [b], body="replace")
    [out] = run_scatter(inst, np.zeros(1, np.int32), np.zeros((7, 1), np.int64), np.arange(7, dtype=np.int32))
    assert out.primary.tolist() == [6]
    assert out.options == {0: [ANY_VALUE]}
    assert "7 updates" in out.labels[0][0]




# --------------------------------------------------------------------------
# appended_last invalid cases: each kills a mutant no other verdict killed
# --------------------------------------------------------------------------

# (op, module, function, its line, the mutant's line, the constraint, a text the program holds, what the
# mutated oracle's rejection names: None, it accepts the program; "", it refuses it naming no constraint):
# stop 57's mutants of spec/ops killed only by a test or a regeneration (docs/mutation.md).
APPENDED_INVALID = (
    ("gather", "gather", "dims_fit", "i < rank(t) and s <= dim(t, i)", "i < rank(t) or s <= dim(t, i)",
     "gather_c12", "slice_sizes = array<i64: 1, 4>", None),
    ("scatter", "scatter", "scatter_c16", "len(results) == len(op.inputs)", "len(results) >= len(op.inputs)",
     "scatter_c16", "-> (tensor<6xf32>, tensor<6xf32>)", ""),
    ("scatter", "scatter", "scatter_c24", "at(shape(op.inputs[0]), a) == at(shape(op.scatter_indices), b)",
     "at(shape(op.inputs[0]), a) >= at(shape(op.scatter_indices), b)", "scatter_c24",
     "(tensor<3x4xf32>, tensor<2x1xi32>, tensor<2xf32>)", None),
)


@pytest.mark.parametrize("op,module,function,line,mutated,label,holds,mutant_names", APPENDED_INVALID,
                         ids=[f"{a[2]}:{a[5]}" for a in APPENDED_INVALID])
def test_appended_invalid_case_kills_its_mutant(monkeypatch, op, module, function, line, mutated, label, holds,
                                                mutant_names):
    """suites/core's last cases of gather and scatter (`Exercise.appended_last`:
    `slice_past_its_axis`, `results_past_inputs`, `batching_dim_past_the_indices`)
    are invalid, each naming its constraint, and the oracle refuses each for
    it; with the function rewritten as the mutant the verdict changes.
    Gather's `dims_fit` with `or` for `and` (a slice size past its axis) and
    scatter_c24 with `>=` (the input's batch larger than the indices'): the
    oracle accepts the program, so a verifier behaving like the mutant fails
    the case.  scatter_c16 with `>=` (more results than inputs): the oracle
    still refuses the program, by type inference (one result per input),
    naming no constraint — the kill is by the rejection's label, as the
    mutation tool scores it (no program breaks C16's count and not the
    inferred types)."""
    import importlib
    import inspect
    import json
    import textwrap
    from pathlib import Path

    from shlo_conform.generators import expect
    path = Path(__file__).resolve().parents[2] / "suites" / "core" / f"{op}.jsonl"
    cases = [json.loads(ln) for ln in path.read_text().splitlines()]
    mine = [c for c in cases if c.get("violates") == label and holds in c["mlir"]]
    assert len(mine) == 1, [c["id"] for c in mine]
    (case,) = mine
    assert case in cases[-2:] and case["kind"] == "invalid" and case["provenance"].get("stream") == "appended_last"
    assert expect.rejection(case["mlir"]) == label
    mod = importlib.import_module(f"shlo_conform.spec.ops.{module}")
    fn = getattr(mod, function)
    src = textwrap.dedent(inspect.getsource(fn))
    assert src.count(line) == 1
    space = dict(vars(mod))
    exec(compile(src.replace(line, mutated), mod.__file__, "exec"), space)
    monkeypatch.setattr(fn, "__code__", space[function].__code__)   # the constraints tuple holds `fn` itself
    assert expect.rejection(case["mlir"]) == mutant_names
