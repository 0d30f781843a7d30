"""map — `computation` applied to `inputs` element by element (spec section "map").

Semantics: `result[i0, …, iR-1] = computation(inputs[0][i0, …, iR-1], …,
inputs[N-1][i0, …, iR-1])`, the region executed on the scalars at hand (an
exact result: the body's own ops round, as they would alone; the
expectation is what the body's ops give on those scalars — their primary
values).  `dimensions` "are currently unused" (the seed): C3 pins them to
[0, …, R-1] and nothing else reads them.

Readings:
* C4 ties each block argument to its input and the block's result to
  `result`, and nothing else: the inputs may have different element types,
  and E' need not be any of them.  The region templates
  (generators/regions.py) fold one op over the arguments (map_add,
  map_multiply, map_maximum, map_minimum: the arguments' common type) or
  return the first (map_first: E0), so generated programs have E' = E0;
  a built corner gives inputs of two element types to map_first.
* A rank-0 map is valid: `dimensions = []`.

Limits (shared code): a region's `call` gives the primary value of each of
its ops, not their alternatives or tolerances.  Where the body's ops have
more than one allowed value — complex `multiply` (no accuracy guarantee in
the seed), complex `maximum`/`minimum` with a NaN component or with signed
zeros (implementation-defined in those ops' modules) — the map's exact
expectation would be stricter than the body's op alone; generated cases
with those bodies on complex types are surveys (`survey_reason`).
"""
from __future__ import annotations

import numpy as np

from ..dsl import (ANY, Attribute, DataMovement, Function, I64ArrayAttr, OpSpec, Operand, Region, Result, all_of,
                   rank, same_shape, size)
from ..exercise import Corner, Exercise
from ..symbolic import Skeleton
from ..types import E_F32, SI32, TensorType
from ..dsl.quantization import REGIONS, Quantization

BODIES = ("map_add", "map_multiply", "map_maximum", "map_minimum", "map_first")
INEXACT_ON_COMPLEX = ("map_multiply", "map_maximum", "map_minimum")


def computation_signature(op):
    """C4: `(tensor<E0>, …, tensor<EN-1>) -> tensor<E'>`.  The templates return E0 (module
    docstring), so that is the E' a generated body has."""
    ins = tuple(TensorType((), t.element_type) for t in op.inputs)
    return ins, ins[:1]


def map_c1(op):
    """(C1) All `inputs` and `result` have the same shape."""
    return same_shape(*op.inputs, op.result)


def map_c2(op):
    """(C2) size(`inputs`) $=$ N $\\ge$ 1."""
    return size(op.inputs) >= 1


def map_c3(op):
    """(C3) `dimensions = [0, ..., R-1]`, where `R` $=$ rank(`inputs[0]`).

    With no inputs there is no `R`: read as broken (as sort's C4), so C3
    implies C2.  (Read as vacuous there, C2 could be broken alone, but the
    map templates of generators/regions.py read argument 0: no program
    with zero inputs could be written.)"""
    if not op.inputs:
        return False
    return size(op.dimensions) == rank(op.inputs[0]) and all_of(d == i for i, d in enumerate(op.dimensions))


def map_c4(op):
    """(C4) `computation` has type `(tensor<E0>, ..., tensor<EN-1>) -> tensor<E'>`
  where `Ek` $=$ element_type(`inputs[k]`) and `E'` $=$
  element_type(`result`)."""
    fn = op.computation
    ins = tuple(TensorType((), t.element_type) for t in op.inputs)
    return tuple(fn.inputs) == ins and tuple(fn.outputs) == (TensorType((), op.result.element_type),)


def infer(op):
    """The inputs' shape (C1) and the computation's result element type (C4)."""
    out = op.computation.outputs
    if len(out) != 1:
        raise ValueError(f"the computation returns {len(out)} values; C4 wants one")
    return {"result": TensorType(tuple(op.inputs[0].shape), out[0].element_type)}


# --------------------------------------------------------------------------
# Semantics
# --------------------------------------------------------------------------

def arrays(op, *inputs):
    """The computation on each index's scalars; one call per distinct tuple of bit patterns."""
    inputs = [np.asarray(a) for a in inputs]
    et = op.result.element_type
    out = np.empty(inputs[0].shape, dtype=et.numpy)
    call = op.computation.call
    cache: dict = {}
    for index in np.ndindex(*inputs[0].shape):
        args = [np.asarray(a[index]).reshape(()) for a in inputs]
        key = b"".join(a.tobytes() for a in args)
        if key not in cache:
            cache[key] = np.asarray(call(*args)[0]).astype(et.numpy).reshape(())
        out[index] = cache[key]
    return [out]


# --------------------------------------------------------------------------
# Exercise
# --------------------------------------------------------------------------

def _dimensions_length(op):
    """C3: one entry per axis."""
    return rank(op.inputs[0]) if op.inputs else 0


def survey_reason(op):
    """A body whose complex ops have several allowed values (module docstring: limits)."""
    body = op.computation.body
    if body in INEXACT_ON_COMPLEX and any(t.element_type.is_complex for t in op.inputs):
        return (f"body {body} on complex values: the body's op has alternatives or a tolerance "
                "the region's call does not pass on")
    return None


CORNERS = (
    Corner("three inputs", (2,), lambda op: [], layout={"counts": {"inputs": 3}}),
    Corner("one input", (2,), lambda op: [], layout={"counts": {"inputs": 1}}),
)


def built_corners(spec, skeletons, rng):
    """Inputs of different element types (C4 allows it): map_first returns the first."""
    types = (E_F32, SI32)
    inputs = [TensorType((2, 3), t) for t in types]
    fn = Function(tuple(TensorType((), t) for t in types), (TensorType((), E_F32),), "map_first")
    inst = spec.instance({"inputs": inputs}, {"dimensions": (0, 1)}, {"result": TensorType((2, 3), E_F32)},
                         {"computation": fn})
    skel = Skeleton("map", (E_F32,), (), (), (("computation", "map_first"),))
    return [("inputs of different element types (f32, si32), map_first", skel, inst)]


def quantized_example(types: dict, body: str = "map_add"):
    """A valid map of two 2×3 inputs with the computation `body` (its result
    of the result's type: C4's E'), of the element types `types` names
    ("inputs", "result", "body": the computation's arguments; the inputs'
    type where not named, f32 for them)."""
    from ..types import element_type as _named
    t_in = types.get("inputs", _named("f32"))
    t_res = types.get("result", t_in)
    scalar = TensorType((), types.get("body", t_in))
    fn = Function((scalar, scalar), (TensorType((), t_res),), body=body)
    return SPEC.instance({"inputs": [TensorType((2, 3), t_in)] * 2}, {"dimensions": (0, 1)},
                         {"result": TensorType((2, 3), t_res)}, {"computation": fn})


def repeated_dimension(spec, skels, rng):
    """`dimensions = [0, 0]` on rank-2 inputs: one entry per axis, but not
    `[0, 1]`, so C3 alone breaks (a reading that asked each entry to be at
    most its position, or in range, would admit it; the seed's C3 cases
    break the length or put an entry past its position)."""
    t = TensorType((2, 3), E_F32)
    scalar = TensorType((), E_F32)
    fn = Function((scalar, scalar), (scalar,), body="map_add")
    yield ("dimensions [0, 0] on rank 2", "map_c3",
           Skeleton(spec.mnemonic, (E_F32,), regions=(("computation", "map_add"),)),
           spec.instance({"inputs": [t, t]}, {"dimensions": (0, 0)}, {"result": t}, {"computation": fn}))


SPEC = OpSpec(
    mnemonic="map",
    operands=(Operand("inputs", ANY, variadic=True, count=(2, 1)),),
    attributes=(Attribute("dimensions", I64ArrayAttr(), length=_dimensions_length),),
    regions=(Region("computation", computation_signature, bodies=BODIES),),
    results=(Result("result", ANY),),
    constraints=(map_c1, map_c2, map_c3, map_c4),
    infer=infer,
    semantics=DataMovement(arrays, bit_exact=False),
    exercise=Exercise(corners=CORNERS, built_corners=built_corners, survey_when=survey_reason,
                      appended_last=repeated_dimension),
    implied=('map_c2',),
    # v1.20: inputs and result "or per-tensor quantized tensors"; the computation computes on them
    quantization=Quantization(meaning=REGIONS, example=quantized_example,
                              bodies=("map_add", "map_multiply", "map_maximum")),
)
