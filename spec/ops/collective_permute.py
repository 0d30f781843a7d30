"""collective_permute — each process named as a source sends its `operand`
to the process its pair names as target (spec section "collective_permute").

Semantics: pairs are read under `cross_replica` (channel_id <= 0: replica
ids, for every partition) or `cross_partition` (channel_id > 0: partition
ids, for every replica); `result@process` is `operand@source` where a pair
names `process` as its target, else zeros of the result's shape.  Exact
data movement.

Readings:
* The section writes "`cross_replica(replica_groups)`", but the op has no
  `replica_groups`: the strategy is applied to `source_target_pairs`, each
  pair a process group (source, target) per partition (or replica).
* The strategies' requirement that groups "have unique elements and cover
  all" ids (seed, "Collective ops") cannot hold for pairs — a cyclic shift
  [[0, 1], [1, 0]] names each replica twice, and C2/C3 only ask sources
  and targets to be unique separately — so it is not applied here; C1–C4
  are the rules.  For the exchange (oracle/collective.py), the processes
  that may trade values are the whole column (cross_replica: every
  replica of a partition) or row (cross_partition): `groups` returns
  those.
* An empty `source_target_pairs` has no columns to count (C1 reads it as
  shape 0×2): every result is zeros.

Findings: the two above (docs/spec-findings.md).
"""
from __future__ import annotations

import numpy as np

from ..dsl import (ANY, Collective, If, OpSpec, Operand, Result, all_of, groups_shape, in_range, is_unique,
                   same_type)
from ..exercise import Corner, Exercise
from .all_gather import channel_attributes, replica_groups_attribute
from .send import CHANNEL_HANDLE
from ..dsl.quantization import MOVES_PER_TENSOR

PAIR_SHAPES = ((1, 2), (2, 2), (3, 2))


def _pairs(op):
    return [tuple(p) for p in op.source_target_pairs]


def collective_permute_c1(op):
    """(C1) dim(`source_target_pairs`, 1) $=$ 2."""
    rows, cols = groups_shape(op.source_target_pairs)
    return rows == 0 or cols == 2


def collective_permute_c2(op):
    """(C2) All values in `source_target_pairs[:, 0]` are unique."""
    return is_unique([p[0] for p in _pairs(op) if p])


def collective_permute_c3(op):
    """(C3) All values in `source_target_pairs[:, 1]` are unique."""
    return is_unique([p[1] for p in _pairs(op) if len(p) > 1])


def ids_bound(op):
    """N: num_replicas (cross_replica, channel_id <= 0) or num_partitions."""
    return If(op.channel_id > 0, op.grid.num_partitions, op.grid.num_replicas)


def collective_permute_c4(op):
    """(C4) $0 \\le$ source_target_pairs[i][0], source_target_pairs[i][1] $\\lt N$,
       where $N$ depends on the process grouping strategy:
  * If `cross_replica`, `num_replicas`.
  * If `cross_partition`, `num_partitions`."""
    n = ids_bound(op)
    return all_of(in_range(x, 0, n) for p in _pairs(op) for x in p)


def collective_permute_c5(op):
    """(C5) type(`result`) $=$ type(`operand`)."""
    return same_type(op.result, op.operand)


def infer(op):
    return {"result": op.operand}


def process_groups(op, grid) -> list:
    """The processes that may trade values (module docstring): every replica
    of a partition (cross_replica), or every partition of a replica; a
    ValueError where a pair names an id outside the grid or twice."""
    cross_partition = op.channel_id > 0
    n = grid.num_partitions if cross_partition else grid.num_replicas
    pairs = _pairs(op)
    bad = [x for p in pairs for x in p if not 0 <= x < n]
    if bad:
        raise ValueError(f"source_target_pairs: id {bad[0]} is outside 0..{n - 1} ({grid})")
    for k, what in ((0, "source"), (1, "target")):
        ids = [p[k] for p in pairs]
        dup = next((x for x in ids if ids.count(x) > 1), None)
        if dup is not None:
            raise ValueError(f"source_target_pairs: {what} {dup} appears twice")
    if cross_partition:
        return [[(r, p) for p in grid.partition_ids] for r in grid.replica_ids]
    return [[(r, p) for r in grid.replica_ids] for p in grid.partition_ids]


def source_of(op, process):
    """The process whose operand `process` receives, or None."""
    r, p = process
    cross_partition = op.channel_id > 0
    mine = p if cross_partition else r
    for s, t in _pairs(op):
        if t == mine:
            return (r, s) if cross_partition else (s, p)
    return None


def fill_value(et) -> int | float:
    """What a process no pair targets holds: v1.20's `constant(is_quantized(result) ? quantize(0,
    element_type(result)) : 0, element_type(result))` — for a quantized result the storage value of
    0.0 (its zero point, clamped to the storage bounds: quantize rounds nothing here), else 0."""
    if not et.is_quantized:
        return 0
    from ..quantized import quantize
    return int(np.ma.getdata(quantize(np.zeros((), et.expressed_type.numpy), et)))


def permute(op, grid, process, operands_at) -> list:
    """`operand@process_groups[i, 0]` where `process_groups[i, 1] = process`, else zeros (v1.20: the
    quantized zero, `fill_value`)."""
    src = source_of(op, tuple(process))
    mine = np.asarray(operands_at[tuple(process)][0])
    if src is None:
        return [np.full(mine.shape, fill_value(op.result.element_type), dtype=mine.dtype)]
    return [np.asarray(operands_at[src][0]).copy()]


SPEC = OpSpec(
    mnemonic="collective_permute",
    operands=(Operand("operand", ANY),),
    attributes=(replica_groups_attribute("source_target_pairs", PAIR_SHAPES, columns=2),
                *channel_attributes()),
    groups=(CHANNEL_HANDLE,),
    results=(Result("result", ANY),),
    constraints=(collective_permute_c1, collective_permute_c2, collective_permute_c3, collective_permute_c4,
                 collective_permute_c5),
    infer=infer,
    semantics=Collective(process_groups, permute),
    exercise=Exercise(corners=(
        Corner("a cycle over two replicas", (2,), lambda op: [op.grid.num_replicas == 2, op.channel_id <= 0],
               layout={"group_shapes": {"source_target_pairs": (2, 2)}}),
        Corner("channel: pairs of partitions", (2,), lambda op: [op.channel_id > 0, op.grid.num_partitions >= 2]),
        Corner("a process no pair targets (zeros)", (1,), lambda op: [op.grid.num_replicas >= 3, op.channel_id <= 0],
               layout={"group_shapes": {"source_target_pairs": (1, 2)}}),
    )),
    # v1.20: "or per-tensor quantized tensor"; the storage values move between processes, and a process no
    # pair targets gets quantize(0) (`permute`)
    quantization=MOVES_PER_TENSOR,
)
