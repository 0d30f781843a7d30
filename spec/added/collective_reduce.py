"""collective_reduce — within each process group, `computation` reduces the
group's `operands` and only the group's source process keeps the results
(v1.20, spec.md "collective_reduce"; not in the seed).

Semantics (v1.20's first paragraph and its Example): `process_groups` is
`cross_replica(replica_groups)` if `channel_id <= 0`, else
`cross_partition(replica_groups)`, as for collective_broadcast (whose
groups and sources this module calls).  The source of each group is its
first process (`has_dynamic_root = false`) or the one the roots operand
names; the source's `results[j]` is all_reduce's reduction of the group's
`operands[j]` (`all_reduce.reduced`: some binary tree over the group's
values in group order, no init value — exact for integer and bitwise
monoids, a `Range` for float sums and products, every schedule enumerated
for other bodies), every other process's is zeros.

Readings:
* The section's "Afterwards" paragraph (`result@process` is
  `operand@process_groups[i, 0]` for every process of a group) is
  collective_broadcast's, copied: it contradicts the section's first
  paragraph ("saves the `results` tensors only on the source process")
  and its Example (processes 1–3 of the group [0, 1, 2, 3] get [[0, 0]],
  process 0 the sum [[16, 20]]).  The Example and the first paragraph are
  what is encoded.
* The order of the combination is read as all_reduce's (the section says
  "applies a reduction function"; all_reduce states the schedule).
* C4's `is_promotable` is read as all_reduce's C5 reads it: v1.20's
  definition (reduce's `promotable`: the same kind, E no narrower), for
  every data operand; the operands are converted to E and reduced in E
  (`all_reduce.reduced`).  No constraint fixes the results' element type;
  type inference gives E, the computation's.
* C3's `shape(operands[0, size(operands)-2])` is the data operands (all
  but the last); `dim(operands[size(operands)-1]) == 1` — `dim` takes a
  dimension everywhere else — is read as rank 1; the section's prose adds
  "a flat array of `si32`", checked with C3.
* Per-tensor quantized operands (I1: "tensors or per-tensor quantized
  tensors") as all_reduce takes them (`Quantization(meaning=REGIONS)`):
  storage values travel between processes unchanged and the computation
  combines them by its own quantized ops (oracle/quantized.py's REGIONS
  rule); a quantized computation type is promotable only to itself
  (reduce's `promotable`: v1.20's storage promotion is not encoded).
* Processes in no group (the groups need not cover the grid), and every
  process but the source, get zeros: for a quantized result (of E, the
  computation's type, by inference) `quantize(0, E)` — its zero point in
  storage, as collective_broadcast's and collective_permute's zeros are.

Findings (docs/spec-findings.md): the copied "Afterwards" paragraph; the
Example has no `computation` region (a sum, by its values) and types the
operand `tensor1x2xi64>`; jaxlib 0.10.2 has no such op ("unregistered
operation 'stablehlo.collective_reduce'"), so no backend here runs it;
async_start's C2 does not list it among the collectives.
"""
from __future__ import annotations

import numpy as np

from ..dsl import ANY, Attribute, BoolAttr, Collective, Function, OpSpec, Operand, Region, Result, all_of, rank
from ..exercise import Corner, Exercise
from ..ops.all_gather import channel_attributes, members, replica_groups_attribute
from ..ops.all_reduce import BODIES, computation_signature, computation_type, reduced, survey_reason
from ..ops.reduce import promotable, promotion_plan
from ..ops.send import CHANNEL_HANDLE
from ..grid import Grid
from ..symbolic import Skeleton
from ..types import TensorType, element_type, exact_values
from ..dsl.quantization import REGIONS, Quantization
from ..quantized import is_quantized
from .collective_broadcast import (GRID_CORNERS, SI32, collective_broadcast_c1, data_count, dynamic_root,
                                   groups_in_range, process_groups, source_group, sources, zeros)


def _results(op) -> list:
    return list(op.results["results"])


def data_operands(op) -> list:
    return members(op, "operands")[:data_count(op)]


def collective_reduce_c1(op):
    """(C1) `is_unique(replica_groups)`."""
    return collective_broadcast_c1(op)


def collective_reduce_c2(op):
    """(C2) `0 <= replica_groups < N` where `N` is defined as:
  * `num_replicas` if `cross_replica` is used.
  * `num_partitions` if `cross_partition` is used."""
    return groups_in_range(op)


def shapes_follow(results, operands):
    """As many results as operands, each of its operand's shape."""
    if len(results) != len(operands) or any(r.rank != t.rank for r, t in zip(results, operands)):
        return False
    return all_of(a == b for r, t in zip(results, operands) for a, b in zip(r.shape, t.shape))


def collective_reduce_c3(op):
    """(C3) if `has_dynamic_root` == false, `shape(results) = shape(operands)`;
  * else, `shape(results) = shape(operands[0, size(operands)-2])`,
    `dim(operands[size(operands)-1]) == 1` with
    `num_elements(operands[size(operands)-1]) == size(operands)-1`.

    The roots operand: rank 1, `si32` (the section's prose), as many
    elements as data operands (module docstring)."""
    if not dynamic_root(op):
        return shapes_follow(_results(op), members(op, "operands"))
    ops = members(op, "operands")
    if not ops:
        return False
    roots = ops[-1]
    if rank(roots) != 1 or roots.element_type != SI32:
        return False
    return all_of([shapes_follow(_results(op), ops[:-1]), roots.shape[0] == len(ops) - 1])


def collective_reduce_c4(op):
    """(C4) `computation` has type `(tensor<E>, tensor<E>) -> (tensor<E>)` where
  `is_promotable(element_type(operand), E)`.

    is_promotable as v1.20 defines it, for every data operand (module docstring)."""
    e = computation_type(op)
    return e is not None and all(promotable(t.element_type, e) for t in data_operands(op))


def infer(op):
    """Each data operand's shape, of the computation's element type E."""
    e = computation_type(op)
    return {"results": [TensorType(tuple(t.shape), e or t.element_type) for t in data_operands(op)]}


# --------------------------------------------------------------------------
# Semantics
# --------------------------------------------------------------------------

class _Data:
    """The op as `all_reduce.reduced` reads it — `computation`, `spec` and
    `operands` — with its data operands only (the roots operand is not
    reduced)."""

    def __init__(self, op):
        self.computation = op.computation
        self.spec = op.spec
        self.operands = {"operands": data_operands(op)}


def zero_answers(t: TensorType, e=None) -> np.ndarray:
    """The element answers of `broadcast_in_dim(constant(0, E), [], type)`;
    where the computation's type `e` is quantized (the oracle runs the op on
    storage types then, `t` the storage type), the storage values of
    `quantize(0, e)` (collective_broadcast's `zeros`)."""
    shape = tuple(int(d) for d in t.shape)
    et = t.element_type
    z = zeros(TensorType(t.shape, e)) if is_quantized(e) else np.zeros(shape, dtype=et.numpy)
    return np.array(exact_values(np.asarray(z).astype(et.numpy), et), dtype=object).reshape(shape)


def reduce_to_source(op, grid, process, operands_at) -> list:
    """The group's reduction on its source process, zeros everywhere else."""
    me = tuple(process)
    group = source_group(op, grid, me)
    n = data_count(op)
    results = _results(op)
    e = computation_type(op)
    if group is None:
        return [zero_answers(t, e) for t in results]
    roots_at = {p: vs[n] for p, vs in operands_at.items() if len(vs) > n}
    srcs = [tuple(s) for s in sources(op, group, roots_at, rule="")]
    if me not in srcs:
        return [zero_answers(t, e) for t in results]
    answers = reduced(_Data(op), group, {p: vs[:n] for p, vs in operands_at.items()})
    return [a if s == me else zero_answers(t, e) for a, s, t in zip(answers, srcs, results)]


def quantized_example(types: dict):
    """A valid collective_reduce whose element types are `types` (by name:
    "operands", "results", "body" — the computation's; f32 where not
    given, the body the operands' type): an add over the group [0, 1] of a
    2×1 grid (process 0 the source), a 2×3 operand."""
    f32 = element_type("f32")
    t = types.get("operands", f32)
    e = TensorType((), types.get("body", t))
    return SPEC.instance({"operands": [TensorType((2, 3), t)]},
                         {"replica_groups": ((0, 1),), "channel_id": 0, "has_dynamic_root": None},
                         {"results": [TensorType((2, 3), types.get("results", t))]},
                         {"computation": Function((e, e), (e,), "add")}, grid=Grid(2, 1))


def promoted_cases(spec, skels, rng):
    """`quantized_example`'s structure with an add computation promoted from
    the operands' type (all_reduce's plan: reduce's `promotion_plan`; v1.20
    C4 is `collective_reduce_c4`; no result clause — inference gives E — so
    the results-of-the-inputs'-type program is left out).  Declared as
    `Exercise.appended_last` (generators/suite.py appends it after the
    streams of the ops v1.20 added)."""
    def make(s, e, r):
        return quantized_example({"operands": s, "body": e, "results": r})
    return [(note, label, Skeleton(spec.mnemonic, (s,), regions=(("computation", "add"),)), inst)
            for note, label, s, e, inst in promotion_plan(make, "collective_reduce_c4", "", refused_results="body")
            if label != ""]


def result_rank_above(spec, skels, rng):
    """A result one rank above its operand, its leading dims the operand's
    (`Exercise.appended_last`, after `promoted_cases`): only C3's comparison
    of ranks breaks (negative.violations changes a dim; a rank test that let
    the longer result through would compare the common leading dims alone
    and accept it)."""
    f32 = element_type("f32")
    e = TensorType((), f32)
    yield ("a result one rank above its operand (2x3 -> 2x3x1)", "collective_reduce_c3",
           Skeleton(spec.mnemonic, (f32,), regions=(("computation", "add"),)),
           SPEC.instance({"operands": [TensorType((2, 3), f32)]},
                         {"replica_groups": ((0, 1),), "channel_id": 0, "has_dynamic_root": None},
                         {"results": [TensorType((2, 3, 1), f32)]},
                         {"computation": Function((e, e), (e,), "add")}, grid=Grid(2, 1)))


# The corners' layouts: one operand (jaxlib 0.10.2's collective_broadcast takes one, so the corners stay
# programs a backend can read; the random cases vary the count).
ONE = {"counts": {"operands": 1}}

SPEC = OpSpec(
    mnemonic="collective_reduce",
    operands=(Operand("operands", ANY, variadic=True, count=(1, 2)),),
    attributes=(replica_groups_attribute(),
                *channel_attributes(),
                Attribute("has_dynamic_root", BoolAttr(), default=False, optional=True, choices=(True,))),
    groups=(CHANNEL_HANDLE,),
    regions=(Region("computation", computation_signature, bodies=BODIES),),
    results=(Result("results", ANY, variadic=True, count=lambda op: data_count(op)),),
    constraints=(collective_reduce_c1, collective_reduce_c2, collective_reduce_c3, collective_reduce_c4),
    infer=infer,
    semantics=Collective(process_groups, reduce_to_source, accumulating=True),
    exercise=Exercise(corners=(
        *GRID_CORNERS,
        Corner("a group of four", (2,),
               lambda op: [op.channel_id <= 0, op.grid.num_replicas == 4, op.grid.num_partitions == 1],
               layout=ONE | {"group_shapes": {"replica_groups": (1, 4)}}),
    ), survey_when=survey_reason, appended_last=(promoted_cases, result_rank_above)),
    # v1.20: operands and results "or per-tensor quantized tensors"; the computation combines them by its own
    # quantized ops, as all_reduce's (module docstring)
    quantization=Quantization(meaning=REGIONS, example=quantized_example, type_clauses=("collective_reduce_c4",)),
    notes="v1.20 numbering (not in the seed)",
)
