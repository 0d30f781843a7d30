"""all_reduce — `computation` applied to the `operands` of every process of
a process group (spec section "all_reduce"; the RFC's multi-operand form,
seed 004, supersedes seed 000's: its (C1)–(C7) are the ones numbered here).

Semantics (RFC): within each process group and for each operand i,
`results[i]@process[j] = exec(schedule)` for *some* binary tree whose
in-order traversal is `operands[i]@process_group...[j]` — the group's
values in group order, no init value (seed 000: "`reduce_without_init`
works exactly like `reduce`, except that its `schedule` doesn't include
init values").  So the order of the cross-process combination is the
implementation's, and what every order may give is spec/schedule.py's, as
for reduce: exact for integer add/multiply (wrapping labelled), the bitwise
and extremum monoids; a `Range` for float sums and products; every schedule
enumerated for any other body (subtract), up to its limits.

Readings:
* Strategy, `size(replica_groups)`, channel and unit attributes: as
  all_gather's module says (shared helpers there).
* C5's `is_promotable(element_type(operand), E)` is defined by neither
  seed; it is read as StableHLO v1.20 defines it (reduce's `promotable`,
  dot_general's rule: the same kind, E no narrower; a quantized type only
  to itself), for every operand: a computation in a wider type of the same
  kind (bf16 operands, an f32 sum) is valid, and C7 gives the results E.
* The RFC's `to_destination_type(…, type(func_inputs(computation)[0]))`:
  each operand converted to E (reduce's `to_body_type`: exact for the
  widenings the suite uses), so the combination runs in E with E's
  allowances (`reduced`).

Findings:
* `is_promotable` is used but not defined (RFC C5; v1.20 defines it).
* Seed 000's I2 says "variadic number of 1-dimensional tensor constants"
  while its Example (and the RFC's) writes one 2-D `dense<[[0, 1]]>`;
  "size(replica_groups)" only fits the Example as the number of entries.
* The RFC's "for each i in [0, size(operands)]" is a closed range; [0, N)
  is meant.
"""
from __future__ import annotations

import numpy as np

from ..dsl import ANY, Collective, Function, OpSpec, Operand, Region, Result, all_of, element_type
from ..exercise import Corner, Exercise
from ..schedule import (MAX_ENUMERATED_LEAVES, MONOIDS, left_fold, per_output, reduce_values, schedules)
from ..types import E_F32, TensorType, exact_values
from .all_gather import (channel_attributes, global_ids_attribute, global_ids_rule, grid_corners, members,
                         my_group, process_groups, range_rule, replica_groups_attribute, size_rule, unique_rule)
from ..grid import Grid
from ..symbolic import Skeleton
from .reduce import promotable, promotion_plan, to_body_type
from .send import CHANNEL_HANDLE
from ..dsl.quantization import REGIONS, Quantization

BODIES = ("add", "multiply", "maximum", "subtract")   # minimum behaves as maximum; each body multiplies check-spec's skeletons
ASSOCIATIVE = ("add", "multiply", "maximum", "minimum")


def _operands(op):
    return members(op, "operands")


def computation_signature(op):
    """C5: `(tensor<E>, tensor<E>) -> (tensor<E>)`, E the operands' element type."""
    ops = _operands(op)
    e = TensorType((), ops[0].element_type) if ops else None
    return ((e, e), (e,)) if e is not None else ((), ())


def computation_type(op):
    """E where `computation` has type `(tensor<E>, tensor<E>) -> (tensor<E>)`, else None."""
    fn = op.computation
    ins, outs = tuple(fn.inputs), tuple(fn.outputs)
    if len(ins) != 2 or len(outs) != 1 or any(not isinstance(t, TensorType) or t.rank != 0 for t in ins + outs):
        return None
    if not ins[0].element_type == ins[1].element_type == outs[0].element_type:
        return None
    return ins[0].element_type


def all_reduce_c1(op):
    """(C1) `is_unique(replica_groups)`."""
    return unique_rule(op.replica_groups)


def all_reduce_c2(op):
    """(C2) `size(replica_groups)` is defined as:
  * `num_replicas` if `cross_replica` is used.
  * `num_replicas` if `cross_replica_and_partition` is used.
  * `num_processes` if `flattened_ids` is used."""
    return size_rule(op, op.replica_groups)


def all_reduce_c3(op):
    """(C3) `0 <= replica_groups < size(replica_groups)`."""
    return range_rule(op.replica_groups)


def all_reduce_c4(op):
    """(C4) If `use_global_device_ids = true`, then `channel_id > 0`."""
    return global_ids_rule(op)


def all_reduce_c5(op):
    """(C5) `computation` has type `(tensor<E>, tensor<E>) -> (tensor<E>)` where
       `is_promotable(element_type(operand), E)`.

    is_promotable as v1.20 defines it (module docstring), for every operand."""
    e = computation_type(op)
    return e is not None and all(promotable(element_type(t), e) for t in _operands(op))


def all_reduce_c6(op):
    """(C6) `shape(results...) = shape(operands...)`."""
    ops, res = _operands(op), list(op.results["results"])
    if len(ops) != len(res) or any(r.rank != t.rank for r, t in zip(res, ops)):
        return False
    return all_of(a == b for r, t in zip(res, ops) for a, b in zip(r.shape, t.shape))


def all_reduce_c7(op):
    """(C7) `element_type(results...) = E`.

    E: the computation's (its first argument's element type, where it has
    one; a computation of no arguments breaks C5 and leaves E to the
    operands)."""
    fn = op.computation
    if fn.inputs and isinstance(fn.inputs[0], TensorType):
        e = fn.inputs[0].element_type
    else:
        e = _operands(op)[0].element_type if _operands(op) else None
    return all(element_type(r) == e for r in op.results["results"])


def infer(op):
    e = computation_type(op)
    return {"results": [TensorType(tuple(t.shape), e or t.element_type) for t in _operands(op)]}


# --------------------------------------------------------------------------
# Semantics
# --------------------------------------------------------------------------

def reduce_without_init(leaves: list, body, et) -> object:
    """The answer of `exec(schedule)` over `leaves` (numpy scalars of `et`,
    group order) for every binary tree schedule, no init value: one or two
    float leaves have one tree (the body's own rounding); a pairwise
    monoid body by spec/schedule.py's `reduce_values` (exact, or a
    `Range`), any other body by enumerating the schedules (the left fold
    first), beyond the enumeration limits the left fold and "any value"."""
    if len(leaves) <= 2 and (et.is_float or et.is_complex):
        # One binary tree only: the body applied once (rounded by its own op), not a range.
        v = leaves[0] if len(leaves) == 1 else body.call(np.asarray(leaves[0]).astype(et.numpy),
                                                          np.asarray(leaves[1]).astype(et.numpy))[0]
        return exact_values(np.asarray(v), et)[0]
    ops = getattr(body, "pairwise", None)   # one op or None: C5 gives the body one result
    if ops is not None and ops[0] in MONOIDS:
        xs = [exact_values(np.asarray(v), et)[0] for v in leaves]

        def call_one(a, b):
            r = body.call(np.asarray(a).astype(et.numpy), np.asarray(b).astype(et.numpy))[0]
            return exact_values(np.asarray(r), et)[0]
        return reduce_values(ops[0], xs, et, call_one)
    scalars = [(np.asarray(v).reshape(()),) for v in leaves]
    call = body.call
    if len(scalars) > MAX_ENUMERATED_LEAVES:
        fold = left_fold(scalars, lambda a, b: tuple(call(*a, *b)))
        return per_output([[fold]], [et], f"any value: {len(scalars)} leaves, schedules not enumerated")[0]
    results = schedules(scalars, call)
    if results is None:
        fold = left_fold(scalars, lambda a, b: tuple(call(*a, *b)))
        return per_output([[fold]], [et], "any value: too many distinct schedule results to enumerate")[0]
    return per_output([results], [et], None)[0]


def reduced(op, group, operands_at) -> list:
    """Per operand i: the object array of element answers of reducing
    `operands[i]` over `group` (reduce_scatter reuses it)."""
    body = op.computation
    types = [t for o in op.spec.operands for t in (op.operands[o.name] if o.variadic else [op.operands[o.name]])]
    e = accumulation_type(op)
    out = []
    for i, t in enumerate(types):
        et = e or t.element_type
        stack = [to_body_type(operands_at[s][i], t.element_type, et) for s in group]
        shape = tuple(int(d) for d in t.shape)
        answers = np.empty(shape, dtype=object)
        for idx in np.ndindex(*shape):
            answers[idx] = reduce_without_init([a[idx] for a in stack], body, et)
        out.append(answers)
    return out


def accumulation_type(op):
    """E, the computation's element type (`computation_type`), where every
    operand is promotable to it (C5): what the operands are converted to
    and combined in (module docstring); None otherwise (each operand's
    own)."""
    e = computation_type(op)
    types = [t for o in op.spec.operands for t in (op.operands[o.name] if o.variadic else [op.operands[o.name]])]
    return e if e is not None and all(promotable(t.element_type, e) for t in types) else None


def reduce_group(op, grid, process, operands_at) -> list:
    """`results[i]@process = exec(schedule)` over the group's `operands[i]`."""
    group = my_group(process_groups(op, grid), process)
    return reduced(op, group, operands_at)


def survey_reason(op):
    body = op.computation.body
    if body is not None and body not in ASSOCIATIVE:
        return f"computation {body} is not associative: the implementation-defined schedule decides the result"
    return None


def promoted_example(t_op, t_comp, t_result, grid=None):
    """One 4-vector operand summed over a group of four replicas
    (cross_replica, channel 0) by an add `computation` in `t_comp`."""
    e = TensorType((), t_comp)
    return SPEC.instance({"operands": [TensorType((4,), t_op)]},
                         {"replica_groups": ((0, 1, 2, 3),), "channel_id": 0, "channel_type": "DEVICE_TO_DEVICE",
                          "use_global_device_ids": None},
                         {"results": [TensorType((4,), t_result)]}, {"computation": Function((e, e), (e,), "add")},
                         grid=grid or Grid(4, 1))


def promoted_cases(spec, skels, rng):
    """`promoted_example` with a promoted computation (four leaves: a
    `Range` in E for float sums), and the invalid programs (reduce's
    `promotion_plan`; v1.20 C5 is `all_reduce_c5`, C7 `all_reduce_c7`)."""
    return [(note, label, Skeleton(spec.mnemonic, (s,), attrs=(("use_global_device_ids", None),),
                                   regions=(("computation", "add"),)), inst)
            for note, label, s, e, inst in promotion_plan(promoted_example, "all_reduce_c5", "all_reduce_c7",
                                                                  refused_results="body")]


def shape_breaks(spec, skels, rng):
    """C6 broken alone by a result of lower or higher rank whose dims agree
    as far as both go, and by one result for two operands: an
    implementation that compares the shapes pairwise only as far as zip
    goes accepts each (after `promoted_cases`, on the same stream)."""
    e = TensorType((), E_F32)

    def make(ops, res):
        return SPEC.instance({"operands": ops},
                             {"replica_groups": ((0, 1, 2, 3),), "channel_id": 0, "channel_type": "DEVICE_TO_DEVICE",
                              "use_global_device_ids": None},
                             {"results": res}, {"computation": Function((e, e), (e,), "add")}, grid=Grid(4, 1))
    skel = Skeleton(spec.mnemonic, (E_F32,), attrs=(("use_global_device_ids", None),), regions=(("computation", "add"),))
    a, v = TensorType((2, 3), E_F32), TensorType((2,), E_F32)
    for note, ops, res in (("a result of lower rank, its dims a prefix", [a], [v]),
                           ("a result of higher rank, the operand's dims its prefix", [v], [a]),
                           ("one result for two operands", [v, v], [v])):
        yield note, "all_reduce_c6", skel, make(ops, res)


def leaves_past_enumeration(spec, skels, rng):
    """A subtract `computation` over one group of thirteen replicas
    (`Exercise.appended_last`): past `MAX_ENUMERATED_LEAVES` (12) the
    schedules of a body that is no monoid are not enumerated, and each
    element is any value beside the left fold — the only route to that
    statement (`reduce_without_init`), which no smaller group reaches.  A
    survey case (the body is not associative): reported, never scored."""
    e = TensorType((), E_F32)
    n = MAX_ENUMERATED_LEAVES + 1
    yield (f"a subtract computation over {n} replicas: schedules past enumeration", None,
           Skeleton(spec.mnemonic, (E_F32,), attrs=(("use_global_device_ids", None),),
                    regions=(("computation", "subtract"),)),
           SPEC.instance({"operands": [TensorType((2,), E_F32)]},
                         {"replica_groups": (tuple(range(n)),), "channel_id": 0, "channel_type": "DEVICE_TO_DEVICE",
                          "use_global_device_ids": None},
                         {"results": [TensorType((2,), E_F32)]}, {"computation": Function((e, e), (e,), "subtract")},
                         grid=Grid(n, 1)))


SPEC = OpSpec(
    mnemonic="all_reduce",
    operands=(Operand("operands", ANY, variadic=True, count=(1, 2)),),
    attributes=(replica_groups_attribute(),
                *channel_attributes(),
                global_ids_attribute()),
    groups=(CHANNEL_HANDLE,),
    regions=(Region("computation", computation_signature, bodies=BODIES),),
    results=(Result("results", ANY, variadic=True, count=lambda op: len(_operands(op))),),
    constraints=(all_reduce_c1, all_reduce_c2, all_reduce_c3, all_reduce_c4, all_reduce_c5, all_reduce_c6,
                 all_reduce_c7),
    infer=infer,
    semantics=Collective(process_groups, reduce_group, accumulating=True),
    exercise=Exercise(corners=grid_corners((1,)) + (
        Corner("two operands reduced together", (1,), lambda op: [], layout={"counts": {"operands": 2}}),),
        survey_when=survey_reason, appended_last=(promoted_cases, shape_breaks, leaves_past_enumeration)),
    # the seed RFC and v1.20: operands and results "or per-tensor quantized tensors"; the computation combines
    # them by its own quantized ops (is_promotable: a quantized type only to itself, module docstring)
    quantization=Quantization(meaning=REGIONS),
)
