"""reduce_scatter — all_reduce within each process group, then each process
keeps its part of the reduced value split along `scatter_dimension` (spec
section "reduce_scatter").

Semantics: `reduced_value = all_reduce(operand, replica_groups, channel_id,
use_global_device_ids, computation)`; `parts@sender = split(reduced_value@
sender, dim(process_groups, 1), scatter_dimension)`; `result@receiver =
parts@sender[receiver_index]`, `receiver_index = index_of(receiver,
process_group)`.  The reduction is all_reduce's (spec/ops/all_reduce.py):
its cross-process order is implementation-defined, so results are bounded
(float sums, products) or enumerated (other bodies) as reduce's are.  Every
sender's reduced value is the same set of allowed values, so "for any
sender" adds nothing.

Readings: strategy, `size(replica_groups)`, `dim(process_groups, 1)` and
the attributes as all_gather's module says.  C7 and C8 as v1.20 states
them (its C7, C8 and C9): `computation` of type `(tensor<E>, tensor<E>) ->
(tensor<E>)` with `is_promotable(element_type(operand), E)` (reduce's
`promotable`), and the result of element type E — the operand converted
to E and reduced in E, as all_reduce does (`all_reduce.reduced`).

Findings:
* The section's semantics writes `split(…, split_dimension)` where the
  input is named `scatter_dimension`.
* C1 and C8 make the result type depend on num_partitions under
  cross_replica_and_partition (as all_gather's C6).
"""
from __future__ import annotations

import numpy as np

from ..dsl import (ANY, Attribute, Collective, If, IntAttr, OpSpec, Operand, Region, Result, all_of, at,
                   element_type, in_range, rank)
from ..exercise import Exercise
from ..types import TensorType
from .all_gather import (channel_attributes, divisible, global_ids_attribute, global_ids_rule, grid_corners,
                         group_size, my_group, process_groups, quotient, range_rule, replica_groups_attribute,
                         size_rule, unique_rule)
from .all_reduce import computation_type, reduced, survey_reason
from ..dsl import Function
from ..grid import Grid
from ..symbolic import Skeleton
from .reduce import promotable, promotion_plan

# Sums (bounded) and maxima (exact); each body multiplies check-spec's skeletons, whose single result is proved
# unique against every other element type: all_reduce's cases carry the non-associative bodies.
BODIES = ("add", "maximum")
from .send import CHANNEL_HANDLE
from ..dsl.quantization import REGIONS, Quantization


def computation_signature(op):
    """C7: `(tensor<E>, tensor<E>) -> (tensor<E>)`, E = element_type(operand)."""
    e = TensorType((), op.operand.element_type)
    return (e, e), (e,)


def reduce_scatter_c1(op):
    """(C1) dim(`operand`, `scatter_dimension`) % dim(`process_groups`, 1) $=$ 0."""
    return divisible(at(op.operand.shape, op.scatter_dimension), group_size(op, op.replica_groups))


def reduce_scatter_c2(op):
    """(C2) `scatter_dimension` $\\in$ [0, rank(`operand`))."""
    return in_range(op.scatter_dimension, 0, rank(op.operand))


def reduce_scatter_c3(op):
    """(C3) All values in `replica_groups` are unique."""
    return unique_rule(op.replica_groups)


def reduce_scatter_c4(op):
    """(C4) `size(replica_groups)` depends on the process grouping strategy:
  * If `cross_replica`, `num_replicas`.
  * If `cross_replica_and_partition`, `num_replicas`.
  * If `flattened_ids`, `num_processes`."""
    return size_rule(op, op.replica_groups)


def reduce_scatter_c5(op):
    """(C5) $0 \\le$ `replica_groups[i]` $\\lt$ size(`replica_groups`) $\\forall i$
       in `indices(replica_groups)`."""
    return range_rule(op.replica_groups)


def reduce_scatter_c6(op):
    """(C6) If `use_global_device_ids = true`, then `channel_id > 0`."""
    return global_ids_rule(op)


def reduce_scatter_c7(op):
    """(C7) `computation` has type `(tensor<E>, tensor<E>) -> (tensor<E>)` where
       `E = element_type(operand)`.

    Read as v1.20's C7: `… where is_promotable(element_type(operand), E)`."""
    e = computation_type(op)
    return e is not None and promotable(element_type(op.operand), e)


def result_element_type(op):
    """E, the computation's, where it promotes the operand's (v1.20 C9);
    the operand's otherwise (the seed's C8)."""
    e = computation_type(op) if getattr(op, "computation", None) is not None else None
    et = op.operand.element_type
    return e if e is not None and promotable(et, e) else et


def scattered(op) -> TensorType:
    t, d = op.operand, op.scatter_dimension
    gs = group_size(op, op.replica_groups)
    return TensorType(tuple(If(d == i, quotient(n, gs), n) for i, n in enumerate(t.shape)), result_element_type(op))


def reduce_scatter_c8(op):
    """(C8) `type(result) = type(operand)` except:
  * `dim(result, scatter_dimension) = dim(operand, scatter_dimension) / dim(process_groups, 1)`.

    Read as v1.20's C8 (the shape) and C9 (`element_type(result) = E`, the
    computation's where it promotes the operand's: `result_element_type`)."""
    want, r = scattered(op), op.result
    if element_type(r) != element_type(want) or rank(r) != rank(want):
        return False
    return all_of(a == b for a, b in zip(r.shape, want.shape))


def infer(op):
    return {"result": scattered(op)}


def reduce_scatter(op, grid, process, operands_at) -> list:
    """The group's all_reduce answers, split along scatter_dimension into
    dim(process_groups, 1) parts; this process's part by its index in the group."""
    group = my_group(process_groups(op, grid), process)
    whole = reduced(op, group, operands_at)[0]
    parts = np.split(whole, len(group), axis=int(op.scatter_dimension))
    return [parts[group.index(tuple(process))]]


def promoted_example(t_op, t_comp, t_result):
    """An 8-vector summed over a group of four replicas (cross_replica,
    channel 0) by an add `computation` in `t_comp`, each replica keeping
    two elements."""
    e = TensorType((), t_comp)
    return SPEC.instance({"operand": TensorType((8,), t_op)},
                         {"scatter_dimension": 0, "replica_groups": ((0, 1, 2, 3),), "channel_id": 0,
                          "channel_type": "DEVICE_TO_DEVICE", "use_global_device_ids": None},
                         {"result": TensorType((2,), t_result)}, {"computation": Function((e, e), (e,), "add")},
                         grid=Grid(4, 1))


def promoted_cases(spec, skels, rng):
    """`promoted_example` with a promoted computation, and the invalid
    programs (reduce's `promotion_plan`; v1.20 C7 is `reduce_scatter_c7`,
    C9 `reduce_scatter_c8`)."""
    return [(note, label, Skeleton(spec.mnemonic, (s,), attrs=(("use_global_device_ids", None),),
                                   regions=(("computation", "add"),)), inst)
            for note, label, s, e, inst in promotion_plan(promoted_example, "reduce_scatter_c7", "reduce_scatter_c8")]


SPEC = OpSpec(
    mnemonic="reduce_scatter",
    operands=(Operand("operand", ANY),),
    attributes=(Attribute("scatter_dimension", IntAttr(64)),
                replica_groups_attribute(),
                *channel_attributes(),
                global_ids_attribute()),
    groups=(CHANNEL_HANDLE,),
    regions=(Region("computation", computation_signature, bodies=BODIES),),
    results=(Result("result", ANY),),
    constraints=(reduce_scatter_c1, reduce_scatter_c2, reduce_scatter_c3, reduce_scatter_c4, reduce_scatter_c5,
                 reduce_scatter_c6, reduce_scatter_c7, reduce_scatter_c8),
    infer=infer,
    semantics=Collective(process_groups, reduce_scatter, accumulating=True),
    exercise=Exercise(corners=grid_corners((2,)), survey_when=survey_reason, appended_last=promoted_cases),
    # v1.20: operand and result "or per-tensor quantized tensor"; the computation combines them by its own
    # quantized ops
    quantization=Quantization(meaning=REGIONS),
)
