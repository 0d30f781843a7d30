"""all_to_all — split each process's `operands` along `split_dimension`,
send part j to the j-th process of the group, concatenate what arrives
along `concat_dimension` (spec section "all_to_all"; the RFC's
multi-operand form, seed 004, supersedes seed 000's: its (C1)–(C9) are the
ones numbered here — the RFC adds C8, `dim(replica_groups, 1) =
split_count`).

Semantics: `cross_replica(replica_groups)` if `channel_id <= 0`, else
`cross_partition(replica_groups)`; then per operand i, receiver at index j
of its group: `results[i]@receiver = concatenate([split(operands[i]@sender,
split_count, split_dimension)[j] for sender in process_group],
concat_dimension)`.  Exact data movement.

Readings:
* `size(replica_groups)` (C6) is the number of entries (as all_gather's
  module says); there is no `use_global_device_ids`.
* C9 with `split_dimension = concat_dimension`: the two exceptions are
  read in the order the semantics applies them (split, then concatenate
  `split_count` parts): that dimension keeps its size.
* `channel_id` is written in `channel_handle`, optional (the seed's
  Example has none: channel_id 0).

Findings:
* C9 taken literally contradicts itself when split_dimension =
  concat_dimension (`dim / split_count` and `dim * split_count` at once)
  unless split_count = 1; the semantics gives `dim`.
* The RFC's C8 makes C4 redundant: split_count = dim(replica_groups, 1)
  is never negative, and 0 columns leave size(replica_groups) = 0, which
  C6 refuses (declared `implied`; check-spec proves it).
* Seed 000 lacks the RFC's C8: there, a group of another size than
  split_count has no defined result (scattered_parts[receiver_index]
  runs past the parts, or leaves some unsent).
"""
from __future__ import annotations

import numpy as np

from .. import grid as grids
from ..dsl import (ANY, Attribute, Collective, If, IntAttr, OpSpec, Operand, Result, all_of, at, in_range, rank)
from ..dsl.quantization import MOVES_PER_TENSOR
from ..exercise import Corner, Exercise
from ..types import TensorType
from ..dsl import groups_shape
from .all_gather import (channel_attributes, divisible, members, my_group, quotient, range_rule,
                         replica_groups_attribute, size_of, unique_rule)
from .send import CHANNEL_HANDLE


def _operands(op):
    return members(op, "operands")


def cross_partition(op):
    """channel_id > 0: cross_partition; else cross_replica (possibly symbolic)."""
    return op.channel_id > 0


def all_to_all_c1(op):
    """(C1) `0 <= split_dimension < rank(operands...)`."""
    return all_of(in_range(op.split_dimension, 0, rank(t)) for t in _operands(op))


def all_to_all_c2(op):
    """(C2) `dim(operands..., split_dimension) % split_count = 0`."""
    return all_of(divisible(at(t.shape, op.split_dimension), op.split_count) for t in _operands(op))


def all_to_all_c3(op):
    """(C3) `0 <= concat_dimension < rank(operands...)`."""
    return all_of(in_range(op.concat_dimension, 0, rank(t)) for t in _operands(op))


def all_to_all_c4(op):
    """(C4) `0 < split_count`."""
    return op.split_count > 0


def all_to_all_c5(op):
    """(C5) `is_unique(replica_groups)`."""
    return unique_rule(op.replica_groups)


def all_to_all_c6(op):
    """(C6) `size(replica_groups)` is defined as:
  * `num_replicas` if `cross_replica` is used.
  * `num_partitions` if `cross_partition` is used."""
    return size_of(op.replica_groups) == If(cross_partition(op), op.grid.num_partitions, op.grid.num_replicas)


def all_to_all_c7(op):
    """(C7) `0 <= replica_groups < size(replica_groups)`."""
    return range_rule(op.replica_groups)


def all_to_all_c8(op):
    """(C8) `dim(replica_groups, 1) = split_count`."""
    return groups_shape(op.replica_groups)[1] == op.split_count


def moved(op, t: TensorType) -> TensorType:
    sd, cd, n = op.split_dimension, op.concat_dimension, op.split_count
    dims = []
    for i, d in enumerate(t.shape):
        after_split = If(sd == i, quotient(d, n), d)
        dims.append(If(cd == i, after_split * n, after_split))
    return TensorType(tuple(dims), t.element_type)


def all_to_all_c9(op):
    """(C9) `type(results...) = type(operands...)` except:
  * `dim(results..., split_dimension) =
    dim(operands..., split_dimension) / split_count`.
  * `dim(results..., concat_dimension) =
    dim(operands..., concat_dimension) * split_count`."""
    ops, res = _operands(op), list(op.results["results"])
    if len(ops) != len(res):
        return False
    out = []
    for t, r in zip(ops, res):
        want = moved(op, t)
        if r.element_type != want.element_type or rank(r) != rank(want):
            return False
        out += [a == b for a, b in zip(r.shape, want.shape)]
    return all_of(out)


def infer(op):
    return {"results": [moved(op, t) for t in _operands(op)]}


def process_groups(op, grid) -> list:
    s = "cross_partition" if op.channel_id > 0 else "cross_replica"
    return grids.process_groups(grid, s, op.replica_groups)


def exchange(op, grid, process, operands_at) -> list:
    """Receiver j of its group: part j of every sender's split, in group order."""
    group = my_group(process_groups(op, grid), process)
    j = group.index(tuple(process))
    n, sd, cd = int(op.split_count), int(op.split_dimension), int(op.concat_dimension)
    out = []
    for i in range(len(_operands(op))):
        parts = [np.split(np.asarray(operands_at[s][i]), n, axis=sd)[j] for s in group]
        out.append(np.concatenate(parts, axis=cd))
    return out


SPEC = OpSpec(
    mnemonic="all_to_all",
    operands=(Operand("operands", ANY, variadic=True, count=(1, 2)),),
    attributes=(Attribute("split_dimension", IntAttr(64)),
                Attribute("concat_dimension", IntAttr(64)),
                Attribute("split_count", IntAttr(64)),
                replica_groups_attribute(),
                *channel_attributes()),
    groups=(CHANNEL_HANDLE,),
    results=(Result("results", ANY, variadic=True, count=lambda op: len(_operands(op))),),
    constraints=(all_to_all_c1, all_to_all_c2, all_to_all_c3, all_to_all_c4, all_to_all_c5, all_to_all_c6,
                 all_to_all_c7, all_to_all_c8, all_to_all_c9),
    infer=infer,
    semantics=Collective(process_groups, exchange),
    # C8 ties split_count to dim(replica_groups, 1) ≥ 0, and no columns means size(replica_groups) = 0,
    # which C6 refuses (a grid has a process): split_count > 0 follows (check-spec proves it redundant).
    implied=("all_to_all_c4",),
    exercise=Exercise(corners=(
        Corner("channel: cross_partition over two partitions", (2,),
               lambda op: [op.channel_id > 0, op.grid.num_partitions == 2]),
        Corner("split and concat along one dimension", (2,), lambda op: [op.split_dimension == op.concat_dimension]),
        Corner("two operands exchanged together", (2,), lambda op: [], layout={"counts": {"operands": 2}}),
    )),
    quantization=MOVES_PER_TENSOR,   # the seed RFC and v1.20: "or per-tensor quantized tensor"; the storage values move between processes
)
