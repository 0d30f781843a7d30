"""while — `body` applied to the loop-carried values while `cond` holds (spec section "while").

Semantics, the seed's Python-like formulation:

    internal_state = operand
    while cond(internal_state) == True:
      internal_state = body(internal_state)
    results = internal_state

run by the oracle on whole values (`ControlFlow`): each iteration's body
rounds as its ops do, and the tolerances of approximate ops inside it are
carried to the next iteration (oracle/propagation.py).  Zero iterations
return the operands unchanged.

Readings:
* "The behavior of an infinite loop is TBD": no result is stated for a
  loop the oracle cannot finish — past `MAX_ITERATIONS` iterations it
  raises `LoopLimit` (the oracle reports the case as one the spec states
  no result for; generators drop it).  A terminating loop longer than
  that is not judged either: the limit is the oracle's, not the spec's.
* C3's "for all `i`" is read over both lists: as many results as
  operands.
* `operand` and `results` are "tensors or tokens"; generated programs
  carry tensors (@main cannot hand a token to a backend).

Exercise: the region templates `count_lt` / `count_up`
(generators/regions.py) count value 0 up by one until its first element
reaches the first element of value 1; further values add a captured value
of @main at every iteration (rounded each time).  Counters start at 0 and
limits are 0…5 (0: zero iterations), 100…300 on si64 counters (many
iterations).

Findings:
* `cond` returns `tensor<i1>` (C1) but `operand` may hold tokens, which a
  `cond` can receive but never compare — harmless.
* Nothing in the seed says whether `cond` and `body` may read values of
  the enclosing function; JAX's lowerings do (captured constants), and
  the seed's example reads `%constant0` from outside `body`.
"""
from __future__ import annotations

import numpy as np

from ..dsl import ANY, And, ControlFlow, LoopLimit, OpSpec, Operand, Region, Result, same_types
from ..exercise import Chosen, Exercise
from ..quantized import per_axis_tensor
from ..symbolic import Skeleton
from ..types import I1, SI64, TensorType
from ..dsl.quantization import STORAGE, Quantization

MAX_ITERATIONS = 10_000


def cond_signature(op):
    """C1: `(T0, …, TN-1) -> tensor<i1>`."""
    return tuple(op.operand), (TensorType((), I1),)


def body_signature(op):
    """C2: `(T0, …, TN-1) -> (T0, …, TN-1)`."""
    return tuple(op.operand), tuple(op.operand)


def while_c1(op):
    """(C1) `cond` has type `(T0, ..., TN-1) -> tensor<i1>`, where
       `Ti` = `type(operand[i])`."""
    return And(same_types(op.cond.inputs, op.operand), same_types(op.cond.outputs, (TensorType((), I1),)))


def while_c2(op):
    """(C2) `body` has type `(T0, ..., TN-1) -> (T0, ..., TN-1)`, where
       `Ti` = `type(operand[i])`."""
    return And(same_types(op.body.inputs, op.operand), same_types(op.body.outputs, op.operand))


def while_c3(op):
    """(C3) For all `i`, `type(results[i])` = `type(operand[i])`.

    Read over both lists (module docstring)."""
    return same_types(op.results["results"], op.operand)


def infer(op):
    return {"results": list(op.operand)}


def run(op, values, read):
    """The seed's loop, on whole values; `LoopLimit` past `MAX_ITERATIONS`."""
    state = list(values)
    for _ in range(MAX_ITERATIONS + 1):
        if not bool(np.asarray(read(op.cond.expect(*state)[0])).reshape(())):
            return state
        state = list(op.body.expect(*state))
    raise LoopLimit(f"while: the loop ran {MAX_ITERATIONS} iterations without ending; the seed leaves the "
                    "behaviour of an infinite loop TBD, and the oracle states no result past that many")


CHOSEN = Chosen()   # the counter and limit of `max_iterations`' instance


def counter_values(op, name, k, t, rng):
    """Value 0 counts from 0; value 1 is the limit its first element is compared with: 0…5, or
    100…300 on si64 counters (many iterations).  Further values: random (None).  An instance an
    `appended_last` builder made carries its own (`CHOSEN`)."""
    chosen = CHOSEN(op, name, k, t, rng)
    if chosen is not None:
        return chosen
    if name != "operand" or k > 1:
        return None
    et = t.element_type
    if k == 0:
        return np.zeros(t.shape, dtype=et.numpy)
    if et.is_bool:
        return np.full(t.shape, rng.random() < 0.5)
    limit = int(rng.integers(100, 301)) if et == SI64 else int(rng.integers(0, 6))
    return np.full(t.shape, limit).astype(et.numpy)


def quantized_example(types: dict, body: str = "count_up"):
    """A valid while over (si32 counter, si32 limit, a 2×3 data value of the
    element type `types` names "body" — f32 where not named): `count_lt`
    and `count_up`, which adds a captured value of the data's type to it at
    every iteration (a quantized add, requantized each time)."""
    from ..dsl import Function
    from ..types import E_F32, SI32
    vals = (TensorType((), SI32), TensorType((), SI32), TensorType((2, 3), types.get("body", E_F32)))
    return SPEC.instance({"operand": list(vals)}, {}, {"results": list(vals)},
                         {"cond": Function(vals, (TensorType((), I1),), body="count_lt"),
                          "body": Function(vals, vals, body=body)})


def per_axis_value(spec, skels, rng):
    """`quantized_example` with its data value per-axis quantized (v1.20:
    `operand` and `results` are "values", per-axis quantized tensors
    among them): the cases of the example are per-tensor only, so a
    reading of the tables with no per-axis type passed the suite."""
    t = per_axis_tensor()
    inst = quantized_example({"body": t.element_type})
    yield ("region count_up on a per-axis quantized value (along 0, two scales)", None,
           Skeleton(spec.mnemonic, (t.element_type,), regions=(("cond", "count_lt"), ("body", "count_up"))), inst)


def max_iterations(spec, skels, rng):
    """A si64 counter from 0 to a limit of `MAX_ITERATIONS` (10,000): the
    longest loop the oracle states a result for (`run`: past it, LoopLimit
    — the seed leaves an infinite loop TBD).  Every other case stops within
    300 iterations, so a budget one iteration short passed them all
    (`Exercise.appended_last`)."""
    from ..dsl import Function
    vals = (TensorType((), SI64), TensorType((), SI64))
    inst = SPEC.instance({"operand": list(vals)}, {}, {"results": list(vals)},
                         {"cond": Function(vals, (TensorType((), I1),), body="count_lt"),
                          "body": Function(vals, vals, body="count_up")})
    yield (f"a counter from 0 to {MAX_ITERATIONS}: the oracle's whole loop budget", None,
           Skeleton(spec.mnemonic, (SI64,), regions=(("cond", "count_lt"), ("body", "count_up"))),
           CHOSEN.choose(inst, operand=[np.zeros((), np.int64), np.array(MAX_ITERATIONS, np.int64)]))


SPEC = OpSpec(
    mnemonic="while",
    operands=(Operand("operand", ANY, variadic=True, count=(3, 2, 4)),),
    regions=(Region("cond", cond_signature, bodies=("count_lt",)),
             Region("body", body_signature, bodies=("count_up",))),
    results=(Result("results", ANY, variadic=True, count=lambda op: len(op.operand)),),
    constraints=(while_c1, while_c2, while_c3),
    infer=infer,
    semantics=ControlFlow(run),
    exercise=Exercise(operand_values=counter_values, appended_last=(per_axis_value, max_iterations)),
    # v1.20: "values" (a quantized tensor is a value: spec.md "Types", ValueType): they pass unchanged
    # (its cases: the example's alone — the seed's skeletons would make the counter quantized, and count_up
    # writes a constant 1 of the counter's type, which no quantized constant can be written as here)
    quantization=Quantization(meaning=STORAGE, per_axis=True, example=quantized_example, bodies=("count_up",),
                              skeletons=False),
)
