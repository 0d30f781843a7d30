"""The collectives (all_gather, all_reduce, all_to_all, collective_permute,
reduce_scatter) and the position ops (replica_id, partition_id): their
pure semantics on hand-built per-process operands, against independent
truth — the seed's Examples (values transcribed from spec/seed/000 and the
RFC's multi-operand sections, spec/seed/004), the seed's own examples of
the four strategies ("Collective ops"), and hand computation — plus
constraints on hand-made instances (each invalid group rejected in one
line, each rule broken alone), type inference, and the attribute spellings.

The Examples also run as programs on their grids through the oracle in
tests/oracle/test_collective_semantics.py.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from shlo_conform.spec import grid as grids
from shlo_conform.spec.dsl import (Function, ImplDefined, Range, ReplicaGroupsAttr, UnitAttr, symbolic_grid)
from shlo_conform.spec.grid import Grid
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.types import E_F32, TensorType, element_type

F32 = E_F32
I64 = element_type("si64")
I32 = element_type("si32")
UI32 = element_type("ui32")

AG, AR, A2A, CP, RS = (OPS[n] for n in ("all_gather", "all_reduce", "all_to_all", "collective_permute",
                                        "reduce_scatter"))


def T(shape, et=F32):
    return TensorType(tuple(shape), et)


def body(name: str, et):
    """A `computation` region as the oracle's reader makes it: its type, the
    pairwise op it applies (what spec/schedule.py reads), and `call` —
    numpy's op of that name on scalars of the type (wrapping for integers)."""
    f = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum, "subtract": np.subtract}[name]
    s = T((), et)

    def call(a, b):
        with np.errstate(over="ignore"):
            return [np.asarray(f(np.asarray(a, et.numpy), np.asarray(b, et.numpy))).astype(et.numpy)]
    return Function((s, s), (s,), name, call=call, pairwise=None if name == "subtract" else (name,))


def at(grid: Grid, *per_process):
    """{process: [operand arrays]} in flattened id order."""
    return {p: [np.asarray(a) for a in ops] for p, ops in zip(grid.processes(), per_process)}


def all_gather(operands, dim, groups, grid, channel_id=0, global_ids=None):
    inst = AG.instance({"operands": operands}, {"all_gather_dim": dim, "replica_groups": groups,
                                                "channel_id": channel_id, "use_global_device_ids": global_ids},
                       grid=grid)
    inst.results["results"] = AG.infer(inst)["results"]
    return inst


def all_reduce(operands, groups, grid, computation="add", channel_id=0, global_ids=None, results=None):
    et = operands[0].element_type
    inst = AR.instance({"operands": operands}, {"replica_groups": groups, "channel_id": channel_id,
                                                "use_global_device_ids": global_ids},
                       {}, {"computation": body(computation, et)}, grid=grid)
    inst.results["results"] = results if results is not None else AR.infer(inst)["results"]
    return inst


def all_to_all(operands, sd, cd, count, groups, grid, channel_id=0):
    inst = A2A.instance({"operands": operands}, {"split_dimension": sd, "concat_dimension": cd,
                                                 "split_count": count, "replica_groups": groups,
                                                 "channel_id": channel_id}, grid=grid)
    inst.results["results"] = A2A.infer(inst)["results"]
    return inst


def permute(operand, pairs, grid, channel_id=0):
    inst = CP.instance({"operand": operand}, {"source_target_pairs": pairs, "channel_id": channel_id}, grid=grid)
    inst.results["result"] = CP.infer(inst)["result"]
    return inst


def reduce_scatter(operand, dim, groups, grid, computation="add", channel_id=0, global_ids=None):
    inst = RS.instance({"operand": operand}, {"scatter_dimension": dim, "replica_groups": groups,
                                              "channel_id": channel_id, "use_global_device_ids": global_ids},
                       {}, {"computation": body(computation, operand.element_type)}, grid=grid)
    inst.results["result"] = RS.infer(inst)["result"]
    return inst


def run(spec, inst, grid, operands_at):
    """Every process's results by the op's pure semantics (its group's operands only)."""
    groups = spec.semantics.groups(inst, grid)
    out = {}
    for p in grid.processes():
        g = grids.group_of(groups, p)
        out[p] = spec.semantics.fn(inst, grid, p, {q: operands_at[q] for q in g})
    return out


def value(answer):
    """The one value an element answer states: an exact value, or a Range's
    exact real (`nearest`) — what the seed's Examples print for exact sums."""
    if isinstance(answer, Range):
        return answer.nearest
    assert not isinstance(answer, ImplDefined), answer
    return answer


def values(answers) -> list:
    return [value(a) for a in np.asarray(answers, dtype=object).reshape(-1)]


# --------------------------------------------------------------------------
# The seed's Examples (seed 000 and the RFC), per process
# --------------------------------------------------------------------------

G21 = Grid(2, 1)


def test_all_gather_example():
    op = all_gather([T((2, 2))], 1, ((0, 1),), G21)
    assert op.results["results"] == [T((2, 4))] and AG.violated(op) == []
    got = run(AG, op, G21, at(G21, [[[1.0, 2.0], [3.0, 4.0]]], [[[5.0, 6.0], [7.0, 8.0]]]))
    for p in G21.processes():
        assert got[p][0].tolist() == [[1.0, 2.0, 5.0, 6.0], [3.0, 4.0, 7.0, 8.0]]


def test_all_gather_rfc_example():
    op = all_gather([T((2, 2), I64)], 1, ((0, 1),), G21)
    got = run(AG, op, G21, at(G21, [np.array([[1, 2], [3, 4]])], [np.array([[5, 6], [7, 8]])]))
    for p in G21.processes():
        assert got[p][0].tolist() == [[1, 2, 5, 6], [3, 4, 7, 8]]


@pytest.mark.parametrize("et, a, b, want", [
    (F32, [1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [6.0, 8.0, 10.0, 12.0]),   # seed 000
    (I64, [1, 2, 3, 4], [5, 6, 7, 8], [6, 8, 10, 12]),                           # the RFC's
])
def test_all_reduce_examples(et, a, b, want):
    op = all_reduce([T((4,), et)], ((0, 1),), G21)
    assert AR.violated(op) == []
    got = run(AR, op, G21, at(G21, [np.array(a, et.numpy)], [np.array(b, et.numpy)]))
    for p in G21.processes():
        assert values(got[p][0]) == want


def test_all_to_all_example():
    op = all_to_all([T((2, 4))], 1, 0, 2, ((0, 1),), G21)
    assert op.results["results"] == [T((4, 2))] and A2A.violated(op) == []
    got = run(A2A, op, G21, at(G21, [[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]],
                               [[[9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0]]]))
    assert got[(0, 0)][0].tolist() == [[1.0, 2.0], [5.0, 6.0], [9.0, 10.0], [13.0, 14.0]]
    assert got[(1, 0)][0].tolist() == [[3.0, 4.0], [7.0, 8.0], [11.0, 12.0], [15.0, 16.0]]


def test_collective_permute_example():
    op = permute(T((2, 2)), ((0, 1),), G21)
    assert CP.violated(op) == []
    got = run(CP, op, G21, at(G21, [[[1, 2], [3, 4]]], [[[5, 6], [7, 8]]]))
    assert got[(0, 0)][0].tolist() == [[0, 0], [0, 0]]
    assert got[(1, 0)][0].tolist() == [[1, 2], [3, 4]]


def test_reduce_scatter_example():
    op = reduce_scatter(T((2, 4)), 1, ((0, 1),), G21)
    assert op.results["result"] == T((2, 2)) and RS.violated(op) == []
    got = run(RS, op, G21, at(G21, [np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.float32)],
                              [np.array([[9, 10, 11, 12], [13, 14, 15, 16]], np.float32)]))
    assert values(got[(0, 0)][0]) == [10.0, 12.0, 18.0, 20.0]
    assert values(got[(1, 0)][0]) == [14.0, 16.0, 22.0, 24.0]


def test_position_ops_on_a_grid():
    g = Grid(2, 3)
    for name, k in (("replica_id", 0), ("partition_id", 1)):
        spec = OPS[name]
        inst = spec.instance({}, {}, {"result": T((), UI32)}, grid=g)
        assert spec.violated(inst) == [] and spec.infer(inst) == {"result": T((), UI32)}
        for p in g.processes():
            (v,) = spec.semantics.fn(inst, g, p)
            assert v.dtype == np.uint32 and v.shape == () and int(v) == p[k]


# --------------------------------------------------------------------------
# The strategies, as the seed's "Collective ops" section exemplifies them
# --------------------------------------------------------------------------

G42 = Grid(4, 2)


def test_cross_replica_example():
    """channel_id <= 0, no global ids: cross_replica([[0, 1], [2, 3]]), num_partitions 2."""
    op = all_gather([T((1,))], 0, ((0, 1), (2, 3)), G42, channel_id=0)
    assert AG.semantics.groups(op, G42) == [[(0, 0), (1, 0)], [(0, 1), (1, 1)], [(2, 0), (3, 0)], [(2, 1), (3, 1)]]


def test_cross_partition_example():
    """all_to_all with channel_id > 0: cross_partition([[0, 1]]), num_replicas 4."""
    op = all_to_all([T((2,))], 0, 0, 2, ((0, 1),), G42, channel_id=1)
    assert A2A.violated(op) == []
    assert A2A.semantics.groups(op, G42) == [[(0, 0), (0, 1)], [(1, 0), (1, 1)], [(2, 0), (2, 1)],
                                             [(3, 0), (3, 1)]]


def test_cross_replica_and_partition_example():
    """channel_id > 0, no global ids: cross_replica_and_partition([[0, 1], [2, 3]]), num_partitions 2."""
    op = all_reduce([T((1,))], ((0, 1), (2, 3)), G42, channel_id=1)
    assert AR.semantics.groups(op, G42) == [[(0, 0), (1, 0), (0, 1), (1, 1)], [(2, 0), (3, 0), (2, 1), (3, 1)]]


def test_flattened_ids_example():
    """channel_id > 0 with global ids: flattened_ids([[0, 1, 2, 3], [4, 5, 6, 7]]), 4 × 2."""
    op = reduce_scatter(T((4,)), 0, ((0, 1, 2, 3), (4, 5, 6, 7)), G42, channel_id=1, global_ids=True)
    assert RS.violated(op) == []
    assert RS.semantics.groups(op, G42) == [[(0, 0), (0, 1), (1, 0), (1, 1)], [(2, 0), (2, 1), (3, 0), (3, 1)]]


# --------------------------------------------------------------------------
# Hand-computed cases of each strategy, the RFC's multi-operand forms
# --------------------------------------------------------------------------

G22 = Grid(2, 2)


def test_all_gather_across_replicas_and_partitions():
    """2×2 grid, channel 1, [[0, 1]]: one group (0,0),(1,0),(0,1),(1,1);
    result dim = operand dim × 4, concatenated in that order.  Two
    operands (the RFC's form) of different types, each gathered alone."""
    op = all_gather([T((1,), I32), T((1, 2))], 0, ((0, 1),), G22, channel_id=1)
    assert op.results["results"] == [T((4,), I32), T((4, 2))] and AG.violated(op) == []
    ops = at(G22, *[[np.array([10 * r + p], np.int32), np.full((1, 2), r + 0.5 * p, np.float32)]
                    for r, p in G22.processes()])
    got = run(AG, op, G22, ops)
    for p in G22.processes():
        assert got[p][0].tolist() == [0, 10, 1, 11]
        assert got[p][1].tolist() == [[0.0, 0.0], [1.0, 1.0], [0.5, 0.5], [1.5, 1.5]]


def test_all_reduce_flattened_ids_integers():
    """2×2, global ids, groups [[0, 3], [1, 2]]: (0,0)+(1,1) and (0,1)+(1,0);
    two si32 operands (the RFC's form), integer sums exact; 2^31 − 1 + 1
    overflows: the seed makes it implementation-defined (the oracle wraps,
    labelled), so the answer is the exact 2^31."""
    op = all_reduce([T((2,), I32), T((1,), I32)], ((0, 3), (1, 2)), G22, channel_id=5, global_ids=True)
    assert AR.violated(op) == []
    big = 2 ** 31 - 1
    per = {(0, 0): ([1, big], [7]), (0, 1): ([2, 3], [8]), (1, 0): ([4, 5], [9]), (1, 1): ([6, 1], [10])}
    got = run(AR, op, G22, {p: [np.array(a, np.int32), np.array(b, np.int32)] for p, (a, b) in per.items()})
    for p in ((0, 0), (1, 1)):
        assert values(got[p][0]) == [7, 2 ** 31] and values(got[p][1]) == [17]
    for p in ((0, 1), (1, 0)):
        assert values(got[p][0]) == [6, 8] and values(got[p][1]) == [17]


def test_all_reduce_float_sum_is_bounded():
    """1e8, 1, −1e8 (f32) in group order: the exact sum is 1, the left fold
    in f32 gives 0 (1e8 + 1 rounds to 1e8); the order is the
    implementation's, so both lie in the stated range."""
    g = Grid(3, 1)
    op = all_reduce([T((1,))], ((0, 1, 2),), g)
    got = run(AR, op, g, at(g, [np.array([1e8], np.float32)], [np.array([1.0], np.float32)],
                            [np.array([-1e8], np.float32)]))
    (r,) = got[(1, 0)][0].reshape(-1)
    assert isinstance(r, Range) and r.nearest == 1
    assert r.lo <= 0 <= r.hi and r.lo <= 1 <= r.hi


def test_all_reduce_subtract_enumerates_schedules():
    """subtract over 3 processes (a, b, c) = (8, 4, 2): the two trees give
    (8 − 4) − 2 = 2 and 8 − (4 − 2) = 6 — both allowed, the left fold first."""
    g = Grid(3, 1)
    op = all_reduce([T((1,), I32)], ((0, 1, 2),), g, computation="subtract")
    got = run(AR, op, g, at(g, [np.array([8], np.int32)], [np.array([4], np.int32)], [np.array([2], np.int32)]))
    (r,) = got[(2, 0)][0].reshape(-1)
    assert isinstance(r, ImplDefined) and list(r.alternatives.values()) == [2, 6]
    assert AR.exercise.survey_when(op) is not None


def test_all_reduce_single_member_groups():
    """[[0], [1]]: each process reduces its own value alone (no init value: unchanged)."""
    op = all_reduce([T((2,), I32)], ((0,), (1,)), G21, computation="multiply")
    got = run(AR, op, G21, at(G21, [np.array([3, -4], np.int32)], [np.array([5, 6], np.int32)]))
    assert values(got[(0, 0)][0]) == [3, -4] and values(got[(1, 0)][0]) == [5, 6]


def test_all_to_all_two_operands_cross_partition():
    """1×2 grid, channel 1 (cross_partition [[0, 1]]), two operands split
    along 0 and concatenated along 1; receiver j gets part j of each sender."""
    g = Grid(1, 2)
    op = all_to_all([T((2, 1), I32), T((2, 2))], 0, 1, 2, ((0, 1),), g, channel_id=1)
    assert op.results["results"] == [T((1, 2), I32), T((1, 4))] and A2A.violated(op) == []
    got = run(A2A, op, g, at(g, [np.array([[1], [2]], np.int32), np.array([[1, 2], [3, 4]], np.float32)],
                             [np.array([[3], [4]], np.int32), np.array([[5, 6], [7, 8]], np.float32)]))
    assert got[(0, 0)][0].tolist() == [[1, 3]] and got[(0, 0)][1].tolist() == [[1, 2, 5, 6]]
    assert got[(0, 1)][0].tolist() == [[2, 4]] and got[(0, 1)][1].tolist() == [[3, 4, 7, 8]]


def test_all_to_all_same_split_and_concat_dimension():
    """split_dimension = concat_dimension: the dimension keeps its size (the reading of C9)."""
    op = all_to_all([T((4,), I32)], 0, 0, 2, ((0, 1),), G21)
    assert op.results["results"] == [T((4,), I32)] and A2A.violated(op) == []
    got = run(A2A, op, G21, at(G21, [np.array([1, 2, 3, 4], np.int32)], [np.array([5, 6, 7, 8], np.int32)]))
    assert got[(0, 0)][0].tolist() == [1, 2, 5, 6] and got[(1, 0)][0].tolist() == [3, 4, 7, 8]


def test_collective_permute_cross_partition_cycle():
    """1×3 grid, channel 1: pairs of partition ids [[0, 1], [1, 2]]; partition
    0 is no target (zeros), 1 gets 0's, 2 gets 1's."""
    g = Grid(1, 3)
    op = permute(T((2,), I32), ((0, 1), (1, 2)), g, channel_id=1)
    assert CP.violated(op) == []
    got = run(CP, op, g, at(g, [np.array([1, 2], np.int32)], [np.array([3, 4], np.int32)],
                            [np.array([5, 6], np.int32)]))
    assert [got[p][0].tolist() for p in g.processes()] == [[0, 0], [1, 2], [3, 4]]


def test_collective_permute_swap_across_replicas_per_partition():
    """2×2 grid, no channel: pairs [[0, 1], [1, 0]] of replica ids swap the
    replicas within each partition (each id twice in the pairs: allowed)."""
    op = permute(T((1,), I32), ((0, 1), (1, 0)), G22)
    assert CP.violated(op) == []
    got = run(CP, op, G22, at(G22, *[[np.array([10 * r + p], np.int32)] for r, p in G22.processes()]))
    assert [got[p][0].tolist() for p in G22.processes()] == [[10], [11], [0], [1]]


def test_reduce_scatter_across_replicas_and_partitions():
    """1×2 grid, channel 1, [[0]]: the group is (0,0),(0,1) (one replica ×
    every partition), dim(process_groups, 1) = 2; max of [1, 9, 3, 7] and
    [5, 2, 8, 4] = [5, 9, 8, 7], split in two along 0."""
    g = Grid(1, 2)
    op = reduce_scatter(T((4,), I32), 0, ((0,),), g, computation="maximum", channel_id=1)
    assert op.results["result"] == T((2,), I32) and RS.violated(op) == []
    got = run(RS, op, g, at(g, [np.array([1, 9, 3, 7], np.int32)], [np.array([5, 2, 8, 4], np.int32)]))
    assert values(got[(0, 0)][0]) == [5, 9] and values(got[(0, 1)][0]) == [8, 7]


# --------------------------------------------------------------------------
# Invalid groups and constraints, one rule at a time
# --------------------------------------------------------------------------

@pytest.mark.parametrize("groups, grid, words", [
    (((0, 0),), G21, "id 0 appears twice"),
    (((0,),), G21, "do not cover replica_ids [1]"),
    (((0, 2),), G21, "id 2 is outside"),
])
def test_invalid_groups_one_line(groups, grid, words):
    op = all_reduce([T((1,))], groups, grid)
    with pytest.raises(ValueError) as e:
        AR.semantics.groups(op, grid)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_global_ids_without_channel_has_no_strategy():
    op = all_gather([T((1,))], 0, ((0, 1),), G21, channel_id=0, global_ids=True)
    with pytest.raises(ValueError, match="use_global_device_ids = true needs channel_id > 0"):
        AG.semantics.groups(op, G21)
    assert AG.violated(op) == ["all_gather_c5"]


@pytest.mark.parametrize("groups, grid, kw, broken", [
    (((0, 0),), G21, {}, "all_reduce_c1"),                              # a replica twice
    (((0, 1),), Grid(3, 1), {}, "all_reduce_c2"),                       # size 2, num_replicas 3
    (((0, 1),), G22, {"channel_id": 1, "global_ids": True}, "all_reduce_c2"),   # flattened: num_processes 4
    (((0, 2),), G21, {}, "all_reduce_c3"),                              # 2 >= size(replica_groups)
    (((0, 1),), G21, {"global_ids": True}, "all_reduce_c4"),            # global ids without a channel
])
def test_all_reduce_rules_broken_alone(groups, grid, kw, broken):
    assert AR.violated(all_reduce([T((2,))], groups, grid, **kw)) == [broken]


def test_all_reduce_result_rules():
    ok = all_reduce([T((2,), I32), T((3,), I32)], ((0, 1),), G21)
    assert AR.violated(ok) == []
    assert AR.violated(all_reduce([T((2,), I32)], ((0, 1),), G21, results=[T((3,), I32)])) == ["all_reduce_c6"]
    assert AR.violated(all_reduce([T((2,), I32)], ((0, 1),), G21, results=[T((2,), I64)])) == ["all_reduce_c7"]
    mixed = all_reduce([T((2,), I32), T((2,))], ((0, 1),), G21, results=[T((2,), I32), T((2,), I32)])
    assert AR.violated(mixed) == ["all_reduce_c5"]


def test_grid_dependent_inference_and_rules():
    """all_gather's result depends on num_partitions under
    cross_replica_and_partition: [[0, 1]] on 2×2 → groups of 4; the same
    program on 2×1 → groups of 2."""
    assert all_gather([T((3, 1))], 1, ((0, 1),), G22, channel_id=1).results["results"] == [T((3, 4))]
    assert all_gather([T((3, 1))], 1, ((0, 1),), G21, channel_id=1).results["results"] == [T((3, 2))]
    wrong = all_gather([T((3, 1))], 1, ((0, 1),), G22, channel_id=1)
    wrong.results["results"] = [T((3, 2))]
    assert AG.violated(wrong) == ["all_gather_c6"]
    rs = reduce_scatter(T((6,)), 0, ((0, 1),), G22, channel_id=1)     # 6 % 4 ≠ 0
    rs.results["result"] = T((1,))
    assert "reduce_scatter_c1" in RS.violated(rs)
    a2a = all_to_all([T((4,))], 0, 0, 2, ((0,), (1,)), G21)           # groups of 1, split_count 2
    assert A2A.violated(a2a) == ["all_to_all_c8"]
    assert A2A.violated(all_to_all([T((4,))], 0, 0, 2, ((0, 1),), G21, channel_id=1)) == ["all_to_all_c6"]
    assert CP.violated(permute(T((1,)), ((0, 1),), Grid(1, 2))) == ["collective_permute_c4"]
    assert CP.violated(permute(T((1,)), ((0, 1),), Grid(1, 2), channel_id=1)) == []
    assert CP.violated(permute(T((1,)), ((0, 1), (0, 0)), G21)) == ["collective_permute_c2"]
    assert CP.violated(permute(T((1,)), ((0, 1), (1, 1)), G21)) == ["collective_permute_c3"]
    assert CP.violated(permute(T((1,)), ((0, 1, 1),), G21)) == ["collective_permute_c1"]


def test_symbolic_grid_rules_are_z3():
    """In z3 mode the grid is an unknown: C2 is a formula over it."""
    import z3
    op = all_reduce([T((2,))], ((0, 1),), symbolic_grid())
    e = OPS["all_reduce"].constraint("all_reduce_c2")(op)
    s = z3.Solver()
    s.add(e)
    assert s.check() == z3.sat and s.model().eval(op.grid.num_replicas).as_long() == 2


# --------------------------------------------------------------------------
# Attribute spellings
# --------------------------------------------------------------------------

def test_replica_groups_spelling():
    k = ReplicaGroupsAttr()
    assert k.from_mlir("dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>") == ((0, 1), (2, 3))
    assert k.to_mlir(((0, 1), (2, 3))) == "dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>"
    assert k.from_mlir("dense<> : tensor<0x0xi64>") == ()
    assert ReplicaGroupsAttr(2).to_mlir(()) == "dense<> : tensor<0x2xi64>"
    with pytest.raises(ValueError):
        k.from_mlir("dense<[0, 1]> : tensor<2xi64>")


def test_unit_attribute_spelling():
    u = UnitAttr()
    assert u.from_mlir("unit") is True and u.from_mlir("false") is False and u.to_mlir(True) == "unit"
    with pytest.raises(ValueError):
        u.from_mlir("1")
