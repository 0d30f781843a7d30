"""collective_broadcast — within each process group, every process receives
the `operands` of the group's source process (v1.20, spec.md
"collective_broadcast"; not in the seed).

Semantics (v1.20): `process_groups` is `cross_replica(replica_groups)` if
`channel_id <= 0`, else `cross_partition(replica_groups)` (spec/grid.py's
strategies, called as they are).  The source of `process_groups[i]` for
`results[j]` is `process_groups[i, 0]` (`has_dynamic_root = false`) or
`process_groups[i, operands[N][j]]` (`has_dynamic_root = true`, N =
size(results)); `results[j]@process` is `operands[j]@source` where the
process is in some group, else zeros of the result type — `quantize(0, …)`
for a quantized result, the zero point clamped to the storage bounds.
Exact data movement: bit-exact copies, NaN payloads included.

Readings:
* `replica_groups` (I2) is "variadic number of 1-dimensional tensor
  constants … or `ReplicaGroupMeshAxes`": read as the other collectives
  read it, the 2-D `dense<[[…]]> : tensor<RxCxi64>` the Example writes
  (`ReplicaGroupsAttr`); the mesh-axes form is not read (jaxlib 0.10.2's
  parser refuses the spelling its own docstring prints: "expected
  AxisRefAttr in axes list").
* Unlike all_gather's, the groups need not cover every process: the
  Example broadcasts in the group [2, 1] of four replicas, and replicas 0
  and 3 get zeros.  The oracle's exchange (oracle/collective.py) wants a
  group for every process, so `process_groups` adds a group of one for
  each process no group names; `broadcast` gives it zeros.
* `has_dynamic_root` (I4, "constant of type `i1`") is a bool attribute,
  false where the program leaves it out (jaxlib's op has no such
  attribute).  Its roots operand is a value each process holds: the
  processes of a group must hold the same roots (the section does not say
  whose `operands[N]` picks the source); where they differ, or where a
  root is outside `[0, shape(replica_groups)[1])` (C6, a statement on
  values no type can check), the program is refused with the reason, in
  one line, when it runs.
* C6 reads `operands[size(operands)-1]` only with `has_dynamic_root =
  true`: without it the last operand is data of any type.
* C3/C4's "for all j in [0, size(operands))" needs `results[j]` to exist:
  fewer results than that breaks them (and C5).
* Per-tensor quantized operands and results (I1, "variadic number of
  tensors or per-tensor quantized tensors"): the storage values travel
  (`STORAGE`: the op's own rule on them), a process outside every group
  gets `quantize(0)` (`zeros`: the zero point clamped to the storage
  bounds).  C3/C4's `type(results[j]) = type(operands[j])` read the
  quantized type whole (scales and zero points too).  Cases: the
  quantized stream's, on `quantized_example` (v1.20's Example's grid: the
  group [2, 1] of four replicas, so 0 and 3 get quantize(0)).

Findings (docs/spec-findings.md):
* I1's constraint column cites "(6)" for (C6).
* The Example types the operand `tensor1x2xi64>` (a `<` missing) and
  writes the channel handle's type as 0; XLA:CPU (jaxlib 0.10.2) has no
  kernel for the op ("HLO opcode `collective-broadcast` is not supported
  by XLA:CPU ThunkEmitter"); jaxlib's verifier refuses a second operand
  ("requires a single operand"), so `has_dynamic_root = true` exists only
  in the text.
"""
from __future__ import annotations

import numpy as np

from .. import grid as grids
from ..dsl import (ANY, Attribute, BoolAttr, Collective, OpSpec, Operand, Result, all_of, element_type,
                   groups_entries, in_range, rank, same_type)
from ..dsl.quantization import STORAGE, Quantization
from ..exercise import PAST_SMALL_INTEGERS, Corner, Exercise
from ..ops.all_gather import channel_attributes, members, replica_groups_attribute, unique_rule
from ..ops.collective_permute import ids_bound
from ..ops.send import CHANNEL_HANDLE
from ..quantized import is_quantized, quantize
from ..types import element_type as named_type

SI32 = named_type("si32")


def dynamic_root(op) -> bool:
    """`has_dynamic_root`; a program that leaves it out reads false."""
    return bool(op.has_dynamic_root)


def data_count(op) -> int:
    """How many operands are data: all but the roots operand."""
    return len(members(op, "operands")) - (1 if dynamic_root(op) else 0)


def _results(op) -> list:
    return list(op.results["results"])


def types_follow(op, n: int):
    """`type(results[j]) = type(operands[j])` for all j in [0, n)."""
    ops, res = members(op, "operands"), _results(op)
    if len(res) < n or len(ops) < n:
        return False
    return all_of(same_type(res[j], ops[j]) for j in range(n))


def groups_in_range(op):
    """`0 <= replica_groups < N`, N = num_replicas (cross_replica,
    channel_id <= 0) or num_partitions (cross_partition)."""
    n = ids_bound(op)
    return all_of(in_range(x, 0, n) for x in groups_entries(op.replica_groups))


def collective_broadcast_c1(op):
    """(C1) `is_unique(replica_groups)`."""
    return unique_rule(op.replica_groups)


def collective_broadcast_c2(op):
    """(C2) `0 <= replica_groups < N` where `N` is defined as:
  * `num_replicas` if `cross_replica` is used.
  * `num_partitions` if `cross_partition` is used."""
    return groups_in_range(op)


def collective_broadcast_c3(op):
    """(C3) If `has_dynamic_root = false`:
  * `size(operands) >= 1`.
  * `type(results[j]) = type(operands[j])` for all `j` in `[0, size(operands))`."""
    if dynamic_root(op):
        return True
    n = len(members(op, "operands"))
    return n >= 1 and types_follow(op, n)


def roots_type_is(t, n: int):
    """`type(t) = tensor<[n]xi32>` (i32: the signless spelling of si32)."""
    if rank(t) != 1 or element_type(t) != SI32:
        return False
    return t.shape[0] == n


def collective_broadcast_c4(op):
    """(C4) If `has_dynamic_root = true`:
  * `size(operands) >= 2`.
  * `type(operands[size(operands)-1]) = tensor<[size(operands)-1]xi32>`.
  * `type(results[j]) = type(operands[j])` for all `j` in `[0, size(operands)-1)`."""
    if not dynamic_root(op):
        return True
    ops = members(op, "operands")
    n = len(ops)
    if n < 2:
        return False
    return all_of([roots_type_is(ops[-1], n - 1), types_follow(op, n - 1)])


def collective_broadcast_c5(op):
    """(C5) `size(results) = size(operands) - (has_dynamic_root ? 1 : 0)`."""
    return len(_results(op)) == data_count(op)


def collective_broadcast_c6(op):
    """(C6) `0 <= operands[size(operands)-1] < shape(replica_groups)[1]`.

    A statement on the roots' values (with `has_dynamic_root = true`; see
    the module docstring): no type breaks it, and `sources` checks it on
    every process's roots when the program runs."""
    return True


def infer(op):
    """`type(results[j]) = type(operands[j])` for the data operands (C3, C4)."""
    return {"results": list(members(op, "operands")[:data_count(op)])}


# --------------------------------------------------------------------------
# Semantics
# --------------------------------------------------------------------------

def strategy(op) -> str:
    return "cross_partition" if op.channel_id > 0 else "cross_replica"


def named_groups(op, grid) -> list:
    """`process_groups` the strategy makes of `replica_groups` (ValueError
    where an id is outside the grid or named twice: C1, C2 on a program
    read for another grid)."""
    n = grid.num_partitions if op.channel_id > 0 else grid.num_replicas
    ids = [int(x) for x in groups_entries(op.replica_groups)]
    bad = [x for x in ids if not 0 <= x < n]
    if bad:
        raise ValueError(f"replica_groups: id {bad[0]} is outside 0..{n - 1} ({strategy(op)} on {grid})")
    dup = next((x for x in ids if ids.count(x) > 1), None)
    if dup is not None:
        raise ValueError(f"replica_groups: id {dup} appears twice")
    return list(grids.STRATEGIES[strategy(op)][0](grid, op.replica_groups))


def process_groups(op, grid) -> list:
    """`named_groups`, and a group of one for every process none of them
    names (it exchanges with nobody and gets zeros)."""
    named = named_groups(op, grid)
    covered = {p for g in named for p in g}
    return named + [[p] for p in grid.processes() if p not in covered]


def sources(op, group, roots_at, rule: str = "collective_broadcast_c6") -> list:
    """The source process of `group` for each result j: `group[0]`, or
    `group[roots[j]]` with dynamic roots — which every process of the group
    holds alike (`roots_at`: {process: roots array}), each in
    `[0, shape(replica_groups)[1])` (`rule`: the constraint that says so,
    named in the refusal; collective_reduce states none)."""
    n = data_count(op)
    if not dynamic_root(op):
        return [group[0]] * n
    first = [int(x) for x in np.asarray(roots_at[group[0]]).reshape(-1)]
    for p in group[1:]:
        other = [int(x) for x in np.asarray(roots_at[p]).reshape(-1)]
        if other != first:
            raise ValueError(f"the processes of the group {group} hold different roots ({group[0]}: {first}, "
                             f"{p}: {other}); the section does not say whose operands[N] picks the source")
    cols = len(op.replica_groups[0]) if op.replica_groups else 0
    bad = [r for r in first if not 0 <= r < cols]
    if bad:
        raise ValueError(f"root {bad[0]} names no process of a group of {cols}" + (
            f"; violates {rule}: 0 <= operands[size(operands)-1] < shape(replica_groups)[1]" if rule else ""))
    return [group[r] for r in first]


def zeros(t) -> np.ndarray:
    """`broadcast_in_dim(constant(is_quantized ? quantize(0, E) : 0, E), [], type)`:
    storage values for a quantized type (spec/quantized.py's `quantize`)."""
    shape = tuple(int(d) for d in t.shape)
    et = t.element_type
    if is_quantized(t):
        q = np.asarray(quantize(np.zeros(shape, dtype=et.expressed_type.numpy), et).filled(0))
        return q.astype(et.storage_type.numpy)
    return np.zeros(shape, dtype=et.numpy)


def source_group(op, grid, process):
    """The named group holding `process`, or None."""
    return grids.group_of(named_groups(op, grid), tuple(process))


def broadcast(op, grid, process, operands_at) -> list:
    """`results[j]@process = operands[j]@source`, zeros outside every group."""
    group = source_group(op, grid, process)
    n = data_count(op)
    if group is None:
        return [zeros(t) for t in _results(op)]
    roots_at = {p: vs[n] for p, vs in operands_at.items() if len(vs) > n}
    return [np.asarray(operands_at[s][j]).copy() for j, s in enumerate(sources(op, group, roots_at))]


# The corners' layouts: one operand (jaxlib 0.10.2's collective_broadcast takes one, so the corners stay
# programs a backend can read; the random cases vary the count).
ONE = {"counts": {"operands": 1}}

# The grids both v1.20 collectives are exercised on (collective_reduce takes them too).
GRID_CORNERS = (
        Corner("two replicas, one group (the grid a two-CPU interpreter runs)", (1,),
               lambda op: [op.channel_id <= 0, op.grid.num_replicas == 2, op.grid.num_partitions == 1],
               layout=ONE | {"group_shapes": {"replica_groups": (1, 2)}}),
        Corner("a group leaving processes out (they get zeros)", (1,),
               lambda op: [op.channel_id <= 0, op.grid.num_replicas == 4, op.grid.num_partitions == 1],
               layout=ONE | {"group_shapes": {"replica_groups": (1, 2)}}),
        Corner("channel: groups of partitions (cross_partition)", (1,),
               lambda op: [op.channel_id > 0, op.grid.num_partitions == 2, op.grid.num_replicas == 2],
               layout=ONE | {"group_shapes": {"replica_groups": (1, 2)}}),
)

def quantized_example(types: dict):
    """A valid collective_broadcast whose element types are `types` (by
    name: operands, results — one tensor each; f32 where not given): v1.20's
    Example on its 4×1 grid, the group [2, 1] (replicas 0 and 3 outside
    every group), a 2x3 operand."""
    from ..grid import Grid
    from ..types import TensorType
    f32 = named_type("f32")
    return SPEC.instance({"operands": [TensorType((2, 3), types.get("operands", f32))]},
                         {"replica_groups": ((2, 1),), "channel_id": 0},
                         {"results": [TensorType((2, 3), types.get("results", f32))]}, grid=Grid(4, 1))


def operands_past_256(spec, skels, rng):
    """PAST_SMALL_INTEGERS operands and results, each a `tensor<f32>`
    (`Exercise.appended_last`): C5 compares `size(results)` with
    `size(operands) - 0`, a count past the integers CPython keeps one object
    of (-5..256), so an implementation that compared the counts by identity
    refuses a valid program (all_gather's `gathered_past_256`)."""
    from ..symbolic import Skeleton
    from ..types import TensorType
    t = TensorType((), named_type("f32"))
    yield (f"{PAST_SMALL_INTEGERS} operands (past CPython's shared small integers)", None,
           Skeleton(spec.mnemonic, (t.element_type,), attrs=(("has_dynamic_root", None),)),
           spec.instance({"operands": [t] * PAST_SMALL_INTEGERS}, {"replica_groups": ((0, 1),), "channel_id": 0},
                         {"results": [t] * PAST_SMALL_INTEGERS}, grid=grids.Grid(2, 1)))


SPEC = OpSpec(
    mnemonic="collective_broadcast",
    operands=(Operand("operands", ANY, variadic=True, count=(1, 2)),),
    attributes=(replica_groups_attribute(),
                *channel_attributes(),
                Attribute("has_dynamic_root", BoolAttr(), default=False, optional=True, choices=(True,))),
    groups=(CHANNEL_HANDLE,),
    results=(Result("results", ANY, variadic=True, count=lambda op: data_count(op)),),
    constraints=(collective_broadcast_c1, collective_broadcast_c2, collective_broadcast_c3,
                 collective_broadcast_c4, collective_broadcast_c5, collective_broadcast_c6),
    infer=infer,
    semantics=Collective(process_groups, broadcast),
    exercise=Exercise(corners=(
        *GRID_CORNERS,
        Corner("two groups of two", (2,),
               lambda op: [op.channel_id <= 0, op.grid.num_replicas == 4, op.grid.num_partitions == 1],
               layout=ONE | {"group_shapes": {"replica_groups": (2, 2)}}),
    ), appended_last=operands_past_256),
    notes="v1.20 numbering (not in the seed)",
    # C6 states the roots' values, not a type: no program's types break it (`sources` checks it on every
    # process's roots when the program runs), so check-spec finds it implied, and no invalid case names it
    implied=("collective_broadcast_c6",),
    # v1.20: "or per-tensor quantized tensors"; the storage values move, quantize(0) outside every group
    quantization=Quantization(meaning=STORAGE, example=quantized_example, type_clauses=("collective_broadcast_c3",)),
)
