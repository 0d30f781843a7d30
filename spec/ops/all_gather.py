"""all_gather — concatenate each process's `operands` along `all_gather_dim`
within its process group (spec section "all_gather"; the RFC's multi-operand
form, seed 004, supersedes seed 000's single-operand one: its constraints
are the ones numbered here, and a single operand is its one-member case).

This module also holds what the five collectives share (the others import
it, as recv imports send): the `channel_handle` / `use_global_device_ids`
attributes, the choice of strategy, the size of a process group, and the
(C#) rules on `replica_groups` that read the grid (`Instance.grid`, a
`grid.SymbolicGrid` in z3 mode, so proofs and generators solve the grid
with the shapes).

Readings:
* `channel_id` (I4) is written inside `channel_handle =
  #stablehlo.channel_handle<handle = ID, type = T>` (the seed's Examples;
  send's `ChannelHandle` reads it); a program without it has channel_id 0.
  `use_global_device_ids` (I5, "constant of type i1") is a unit attribute
  in the pinned StableHLO: present is true, absent false.
* `size(replica_groups)` (C3, C4) is the number of entries of the 2-D
  attribute (rows × columns): the Example's `[[0, 1]]` on 2 replicas has
  size 2 = num_replicas.  With C2 and C4, C3 makes the groups a partition
  of the ids — the strategies' "unique elements and cover all".
* C3 names the strategy of the section's list; where `channel_id <= 0`
  and `use_global_device_ids = true` no strategy applies (C5 is broken),
  C3 reads `use_global_device_ids` alone (flattened_ids: num_processes).
* `dim(process_groups, 1)` (C6) is the size of each process group: the
  columns of `replica_groups`, times `num_partitions` under
  cross_replica_and_partition (each replica group × every partition).
* "type(results...) = type(operands...)" (C6) pairs results with operands
  one to one: as many results as operands.

Findings (docs/spec-findings.md):
* C6 makes a result type depend on the grid (num_partitions, under
  cross_replica_and_partition), which the program does not state (seed,
  "Parallel execution": the grid size is "known statically", planned to
  become part of programs, #650).
* The seed's `replica_groups` must cover every id (C3); XLA reads an empty
  `replica_groups` as one group of all replicas — not a valid program here.
* The RFC adds "per-tensor quantized tensors"; the encoded spec has no
  quantized types, so only plain tensors are encoded.
"""
from __future__ import annotations

import numpy as np

from .. import grid as grids
from ..dsl import (ANY, Attribute, Collective, If, Implies, IntAttr, OpSpec, Operand, ReplicaGroupsAttr, Result,
                   UnitAttr, all_of, groups_entries, groups_shape, in_range, is_symbolic, is_unique, rank)
from ..dsl.quantization import MOVES_PER_TENSOR
from ..exercise import Corner, Exercise
from ..symbolic import Skeleton
from ..types import E_F32, TensorType
from .send import CHANNEL_HANDLE, ChannelTypeKind

# --------------------------------------------------------------------------
# Shared by the collectives
# --------------------------------------------------------------------------

# (rows, columns) of replica_groups a generator tries (every one multiplies check-spec's structures: groups
# of one and of three are corners below)
GROUP_SHAPES = ((1, 2), (2, 2))


def channel_attributes():
    """`channel_id` inside `channel_handle` (its `type` is carried along:
    the collectives' tables have no channel type; DEVICE_TO_DEVICE is what
    JAX writes)."""
    return (Attribute("channel_id", IntAttr(64), default=0, group="channel_handle"),
            Attribute("channel_type", ChannelTypeKind(), default="DEVICE_TO_DEVICE", group="channel_handle"))


def global_ids_attribute():
    return Attribute("use_global_device_ids", UnitAttr(), choices=(True,), optional=True)


def replica_groups_attribute(name="replica_groups", shapes=None, columns=None):
    return Attribute(name, ReplicaGroupsAttr(columns), length=shapes or GROUP_SHAPES)


def uses_global_ids(op) -> bool:
    return bool(op.use_global_device_ids)


def strategy(op) -> str | None:
    """The strategy all_gather, all_reduce and reduce_scatter list
    (concrete channel_id): None where none applies (channel_id <= 0 with
    use_global_device_ids = true)."""
    if uses_global_ids(op):
        return "flattened_ids" if op.channel_id > 0 else None
    return "cross_replica_and_partition" if op.channel_id > 0 else "cross_replica"


def size_of(groups):
    rows, cols = groups_shape(groups)
    return rows * cols


def size_rule(op, groups):
    """"`size(replica_groups)` depends on the process grouping strategy":
    num_replicas (cross_replica, cross_replica_and_partition) or
    num_processes (flattened_ids: use_global_device_ids = true)."""
    want = grids.num_processes(op.grid) if uses_global_ids(op) else op.grid.num_replicas
    return size_of(groups) == want


def unique_rule(groups):
    return is_unique(groups_entries(groups))


def range_rule(groups):
    """0 <= replica_groups[i] < size(replica_groups) for every entry."""
    n = size_of(groups)
    return all_of(in_range(x, 0, n) for x in groups_entries(groups))


def global_ids_rule(op):
    """If use_global_device_ids = true, then channel_id > 0."""
    return Implies(uses_global_ids(op), op.channel_id > 0)


def group_size(op, groups):
    """`dim(process_groups, 1)`: the columns of `groups`, times num_partitions
    under cross_replica_and_partition (channel_id > 0 without global ids)."""
    _, cols = groups_shape(groups)
    if uses_global_ids(op):
        return cols
    return If(op.channel_id > 0, cols * op.grid.num_partitions, cols)


def divisible(x, d):
    """`x % d = 0`; a zero `d` is left to the rule that forbids it (C4 of
    all_to_all: `split_count > 0`; an empty group), so that rule alone
    breaks there."""
    if not is_symbolic(x) and not is_symbolic(d):
        return d == 0 or x % d == 0
    import z3
    return z3.Or(d == 0, x % d == 0)


def quotient(x, d):
    """`x / d` (integer division; 0 where d is 0, which another rule forbids)."""
    if not is_symbolic(x) and not is_symbolic(d):
        return x // d if d else 0
    return If(d == 0, 0, x / d)


def process_groups(op, grid) -> list:
    """The process groups of all_gather, all_reduce and reduce_scatter on a
    concrete grid (ValueError, one line, where there are none)."""
    s = strategy(op)
    if s is None:
        raise ValueError(f"use_global_device_ids = true needs channel_id > 0, not {op.channel_id}")
    return grids.process_groups(grid, s, op.replica_groups)


def my_group(groups, process) -> list:
    g = grids.group_of(groups, process)
    if g is None:
        raise ValueError(f"process {tuple(process)} is in no process group")
    return g


def members(op, name: str) -> list:
    v = op.operands[name]
    return list(v) if isinstance(v, (list, tuple)) else [v]


def grid_corners(ranks) -> tuple:
    """Structures worth solving for in every collective that takes the
    three strategies: two partitions with a channel (cross_replica_and_
    partition), flattened ids, a grid of one process."""
    return (
        Corner("channel, two partitions (cross_replica_and_partition)", ranks,
               lambda op: [op.channel_id > 0, op.grid.num_partitions == 2]),
        Corner("global device ids (flattened_ids)", ranks,
               lambda op: [op.channel_id > 0, op.grid.num_replicas * op.grid.num_partitions >= 2]
               if uses_global_ids(op) else [False]),
        Corner("several groups of two", ranks,
               lambda op: [op.grid.num_replicas == 4, op.channel_id <= 0],
               layout={"group_shapes": {"replica_groups": (2, 2)}}),
        Corner("groups of one", ranks, lambda op: [], layout={"group_shapes": {"replica_groups": (2, 1)}}),
        Corner("a group of three", ranks, lambda op: [], layout={"group_shapes": {"replica_groups": (1, 3)}}),
    )


# --------------------------------------------------------------------------
# all_gather
# --------------------------------------------------------------------------

def _operands(op):
    return members(op, "operands")


def all_gather_c1(op):
    """(C1) `0 <= all_gather_dim < rank(operands...)`."""
    return all_of(in_range(op.all_gather_dim, 0, rank(t)) for t in _operands(op))


def all_gather_c2(op):
    """(C2) `is_unique(replica_groups)`."""
    return unique_rule(op.replica_groups)


def all_gather_c3(op):
    """(C3) `size(replica_groups)` is defined as:
  * `num_replicas` if `cross_replica` is used.
  * `num_replicas` if `cross_replica_and_partition` is used.
  * `num_processes` if `flattened_ids` is used."""
    return size_rule(op, op.replica_groups)


def all_gather_c4(op):
    """(C4) `0 <= replica_groups < size(replica_groups)`."""
    return range_rule(op.replica_groups)


def all_gather_c5(op):
    """(C5) If `use_global_device_ids = true`, then `channel_id > 0`."""
    return global_ids_rule(op)


def gathered(op, t: TensorType) -> TensorType:
    gs = group_size(op, op.replica_groups)
    d = op.all_gather_dim
    return TensorType(tuple(If(d == i, n * gs, n) for i, n in enumerate(t.shape)), t.element_type)


def all_gather_c6(op):
    """(C6) `type(results...) = type(operands...)` except:
  * `dim(results..., all_gather_dim) =
    dim(operands..., all_gather_dim) * dim(process_groups, 1)`."""
    ops, res = _operands(op), list(op.results["results"])
    if len(ops) != len(res):
        return False
    out = []
    for t, r in zip(ops, res):
        want = gathered(op, t)
        if r.element_type != want.element_type or rank(r) != rank(want):
            return False
        out += [a == b for a, b in zip(r.shape, want.shape)]
    return all_of(out)


def infer(op):
    return {"results": [gathered(op, t) for t in _operands(op)]}


def gather(op, grid, process, operands_at) -> list:
    """`results[i]@process = concatenate([operands[i]@sender for sender in
    process_group], all_gather_dim)`."""
    group = my_group(process_groups(op, grid), process)
    n = len(_operands(op))
    return [np.concatenate([np.asarray(operands_at[s][i]) for s in group], axis=int(op.all_gather_dim))
            for i in range(n)]


def gathered_past_256(spec, skels, rng):
    """A 1×129 operand gathered along 1 by two replicas into 1×258
    (`Exercise.appended_last`): C6 compares the result's dims with the
    product `dim(operands..., all_gather_dim) * dim(process_groups, 1)`,
    a value past the integers CPython keeps one object of (-5..256), so an
    implementation that compared the dims by identity refuses it."""
    yield ("a gathered dim of 258 (1x129 from each of two replicas)", None,
           Skeleton(spec.mnemonic, (E_F32,), attrs=(("use_global_device_ids", None),)),
           SPEC.instance({"operands": [TensorType((1, 129), E_F32)]},
                         {"all_gather_dim": 1, "replica_groups": ((0, 1),), "channel_id": 0,
                          "channel_type": "DEVICE_TO_DEVICE", "use_global_device_ids": None},
                         {"results": [TensorType((1, 258), E_F32)]}, grid=grids.Grid(2, 1)))


SPEC = OpSpec(
    mnemonic="all_gather",
    operands=(Operand("operands", ANY, variadic=True, count=(1, 2)),),
    attributes=(Attribute("all_gather_dim", IntAttr(64)),
                replica_groups_attribute(),
                *channel_attributes(),
                global_ids_attribute()),
    groups=(CHANNEL_HANDLE,),
    results=(Result("results", ANY, variadic=True, count=lambda op: len(_operands(op))),),
    constraints=(all_gather_c1, all_gather_c2, all_gather_c3, all_gather_c4, all_gather_c5, all_gather_c6),
    infer=infer,
    semantics=Collective(process_groups, gather),
    exercise=Exercise(corners=grid_corners((2,)) + (
        Corner("two operands gathered together", (2,), lambda op: [],
               layout={"counts": {"operands": 2}}),), appended_last=gathered_past_256),
    quantization=MOVES_PER_TENSOR,   # the seed RFC and v1.20: "or per-tensor quantized tensor"; the storage values move between processes
)
