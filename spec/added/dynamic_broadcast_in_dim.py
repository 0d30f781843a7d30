"""dynamic_broadcast_in_dim — broadcast_in_dim whose result shape is an operand (v1.20, spec.md
"dynamic_broadcast_in_dim").

"This operation is functionally identical to broadcast_in_dim op, but the
result shape is specified dynamically via `output_dimensions`": the
result is broadcast_in_dim's (spec/ops/broadcast_in_dim.py) on the static
instance of the same operand, `broadcast_dimensions` and result; C2–C5 are
broadcast_in_dim's C2–C5 read on that instance.  `output_dimensions` is a
value (shape_operands.py): equal to the result's shape where a constant
gives it (`dynamic_broadcast_in_dim_dynamism`), else checked at run time.

`known_expanding_dimensions` / `known_nonexpanding_dimensions` ("static
knowledge about the expanding behavior of dimensions. If not specified,
all dimensions are assumed to be possibly expanding"): left out, each is
empty.  Our reading of the knowledge, which v1.20 does not define further:
an operand dimension `d` is *expanding* when its size 1 is broadcast
(`dim(operand, d) = 1`) and *non-expanding* when its size is kept
(`dim(operand, d) = dim(result, broadcast_dimensions[d])`) — the spec's
example (1x3 → 2x3x2, expanding [0], non-expanding [1]) is both.  A
program whose shapes break its stated knowledge has a result the spec does
not define: every element any value, labelled (as a broken
`indices_are_sorted` promise of gather).  A size-1 dimension kept at size
1 keeps both promises.

Quantized tensors (v1.20: operand and result "tensor or quantized
tensor", per-axis too): the storage values move as broadcast_in_dim's do
(`STORAGE`); the scales move with the quantization dimension C6 ties to
`broadcast_dimensions` (a size-1 one repeats its one scale).  C1 and C6
are the op's own constraints (v1.20 numbers them with the rest).
"""
from __future__ import annotations

import numpy as np

from ..dsl.quantization import STORAGE, Quantization
from ..dsl import (ANY, INTEGER, Attribute, DataMovement, I64ArrayAttr, OpSpec, Operand, Result, all_of, dim,
                   in_range, is_unique, rank)
from ..exercise import Chosen, Exercise
from ..ops.broadcast_in_dim import SPEC as BROADCAST
from ..ops.broadcast_in_dim import (broadcast_in_dim_c1, broadcast_in_dim_c2, broadcast_in_dim_c3, broadcast_in_dim_c4,
                                    broadcast_in_dim_c5, broadcast_in_dim_c6)
from ..quantized import is_per_axis_quantized
from ..types import TensorType
from .shape_operands import any_value, deferred, operand_size, shape_operand_matches, undefined, values

BROKEN_KNOWLEDGE = "any value: the shapes break known_{}_dimensions (our reading: module docstring)"
KNOWLEDGE_WHY = ("dynamic_broadcast_in_dim: known_expanding_dimensions and known_nonexpanding_dimensions "
                 "\"express static knowledge about the expanding behavior of dimensions\"; v1.20 states no "
                 "result where the knowledge is wrong")


def static(op):
    """broadcast_in_dim's instance of the same operand, `broadcast_dimensions` and result."""
    return BROADCAST.instance({"operand": op.operand}, {"broadcast_dimensions": tuple(op.broadcast_dimensions)},
                              {"result": op.result})


def dynamic_broadcast_in_dim_c1(op):
    """(C1) `element_type(result)` is given by:
  * `element_type(operand)`, if `!is_per_axis_quantized(operand)`.
  * `element_type(operand)` except that `quantization_dimension(operand)`,
  `scales(operand)`, and `zero_points(operand)` may differ from
  `quantization_dimension(result)`, `scales(result)`, and `zero_points(result)`
  resp., otherwise.

    broadcast_in_dim's C1 in v1.20's words: its function (spec/ops/broadcast_in_dim.py)."""
    return broadcast_in_dim_c1(op)


def dynamic_broadcast_in_dim_c2(op):
    """(C2) `size(broadcast_dimensions) = rank(operand)`."""
    return broadcast_in_dim_c2(static(op))


def dynamic_broadcast_in_dim_c3(op):
    """(C3) `0 <= broadcast_dimensions < rank(result)`."""
    return broadcast_in_dim_c3(static(op))


def dynamic_broadcast_in_dim_c4(op):
    """(C4) `is_unique(broadcast_dimensions)`."""
    return broadcast_in_dim_c4(static(op))


def dynamic_broadcast_in_dim_c5(op):
    """(C5) For all `d` in `axes(operand)`:
  * `dim(operand, d) = 1` or
  * `dim(operand, d) = dim(result, broadcast_dimensions[d])`."""
    return broadcast_in_dim_c5(static(op))


def dynamic_broadcast_in_dim_c6(op):
    """(C6) If `is_per_axis_quantized(result)`:
  * `quantization_dimension(result) = broadcast_dimensions[quantization_dimension(operand)]`.
  * If `dim(operand, quantization_dimension(operand)) = 1`, then
    `scales(result)[i] = scales(operand)[0] and zero_points(result)[i] =
    zero_points(operand)[0] for i in
    range(dim(result, quantization_dimension(result)))`.

    broadcast_in_dim's C6 in the same words: its function
    (spec/ops/broadcast_in_dim.py; an operand that is not per-axis
    quantized has no quantization dimension to map: C1's to reject)."""
    return broadcast_in_dim_c6(op)


def dynamic_broadcast_in_dim_c7(op):
    """(C7) `size(output_dimensions) = rank(result)`."""
    return operand_size(op.output_dimensions) == rank(op.result)


def dynamic_broadcast_in_dim_c8(op):
    """(C8) `is_unique(known_expanding_dimensions + known_nonexpanding_dimensions)`."""
    return is_unique(tuple(op.known_expanding_dimensions) + tuple(op.known_nonexpanding_dimensions))


def dynamic_broadcast_in_dim_c9(op):
    """(C9) `0 <= known_expanding_dimensions < rank(operand)`."""
    return all_of(in_range(d, 0, rank(op.operand)) for d in op.known_expanding_dimensions)


def dynamic_broadcast_in_dim_c10(op):
    """(C10) `0 <= known_nonexpanding_dimensions < rank(operand)`."""
    return all_of(in_range(d, 0, rank(op.operand)) for d in op.known_nonexpanding_dimensions)


def dynamic_broadcast_in_dim_dynamism(op):
    """(Dynamism) The values of `output_dimensions` match the shape of
    `result` (spec.md "Shape mismatches for ops that take their output
    shape as an operand"): checked where they are known."""
    return shape_operand_matches(op, "output_dimensions", op.result)


def broken_knowledge(op) -> str | None:
    """"expanding" or "nonexpanding" where the shapes break that stated
    knowledge (module docstring), else None."""
    for d in op.known_expanding_dimensions:
        if dim(op.operand, d) != 1:
            return "expanding"
    for d in op.known_nonexpanding_dimensions:
        if dim(op.operand, d) != dim(op.result, op.broadcast_dimensions[d]):
            return "nonexpanding"
    return None


def infer(op):
    """The result: `output_dimensions`' values where they are known, the
    operand's element type (C1: a per-axis result's scales are the
    program's)."""
    v = values(op, "output_dimensions")
    if v is None or is_per_axis_quantized(op.operand):
        return {}
    return {"result": TensorType(v, op.operand.element_type)}


def movement(op, operand, output_dimensions):
    broken = deferred(op, output_dimensions=output_dimensions)
    if broken:
        return [undefined(op.result, broken)]
    which = broken_knowledge(op)
    if which is not None:
        [primary] = BROADCAST.semantics.fn(static(op), operand)
        return [any_value(primary, BROKEN_KNOWLEDGE.format(which), KNOWLEDGE_WHY)]
    return BROADCAST.semantics.fn(static(op), operand)


def _known(inst, **values_):
    """`inst` with its literal operands' values known (as the reader knows a constant's)."""
    inst.known_values = {k: np.asarray(v, dtype=np.int64) for k, v in values_.items()}
    return inst


def quantized_example(types: dict):
    """A valid dynamic_broadcast_in_dim whose element types are `types` (by
    name: operand, result; f32 where not given): the spec's example, 1x3 to
    2x3x2 along [0, 1], `output_dimensions` a constant — quantization
    dimension 1 of the operand maps to 1 of the result, and its size-1
    dimension 0 makes C6 ask for repeated scales."""
    from ..types import element_type
    f32 = element_type("f32")
    inst = SPEC.instance({"operand": TensorType((1, 3), types.get("operand", f32)),
                          "output_dimensions": TensorType((3,), element_type("si64"))},
                         {"broadcast_dimensions": (0, 1), "known_expanding_dimensions": (),
                          "known_nonexpanding_dimensions": ()},
                         {"result": TensorType((2, 3, 2), types.get("result", f32))})
    return _known(inst, output_dimensions=(2, 3, 2))


CHOSEN = Chosen()   # the output_dimensions of `knowledge_broken`'s instance


def knowledge_broken(spec, skels, rng):
    """The spec's example shapes (1x3 to 2x3x2 along [0, 1]) stating
    dimension 0 non-expanding, which its size 1 broadcast to 2 breaks
    (`Exercise.appended_last`): every element any value beside
    broadcast_in_dim's (`broken_knowledge`) — the generator draws only
    knowledge the shapes keep, so no other case has a result the spec
    leaves open this way."""
    from ..symbolic import Skeleton
    from ..types import element_type
    f32, si64 = element_type("f32"), element_type("si64")
    inst = spec.instance({"operand": TensorType((1, 3), f32), "output_dimensions": TensorType((3,), si64)},
                         {"broadcast_dimensions": (0, 1), "known_expanding_dimensions": (),
                          "known_nonexpanding_dimensions": (0,)}, {"result": TensorType((2, 3, 2), f32)})
    yield ("known_nonexpanding_dimensions [0]: its size 1 broadcast to 2 (the knowledge broken)", None,
           Skeleton(spec.mnemonic, (f32, si64)),
           CHOSEN.choose(inst, output_dimensions=np.array([2, 3, 2], dtype=np.int64)))


_OPTIONAL_DIMS = dict(optional=True, default=(), length=0)

SPEC = OpSpec(
    mnemonic="dynamic_broadcast_in_dim",
    operands=(Operand("operand", ANY), Operand("output_dimensions", INTEGER, rank=1, literal=True)),
    attributes=(Attribute("broadcast_dimensions", I64ArrayAttr(), length=lambda op: rank(op.operand)),
                Attribute("known_expanding_dimensions", I64ArrayAttr(), **_OPTIONAL_DIMS),
                Attribute("known_nonexpanding_dimensions", I64ArrayAttr(), **_OPTIONAL_DIMS)),
    results=(Result("result", ANY, rank=lambda op: tuple(range(rank(op.operand), rank(op.operand) + 3))),),
    constraints=(dynamic_broadcast_in_dim_c1, dynamic_broadcast_in_dim_c2, dynamic_broadcast_in_dim_c3,
                 dynamic_broadcast_in_dim_c4, dynamic_broadcast_in_dim_c5, dynamic_broadcast_in_dim_c6,
                 dynamic_broadcast_in_dim_c7, dynamic_broadcast_in_dim_c8, dynamic_broadcast_in_dim_c9,
                 dynamic_broadcast_in_dim_c10, dynamic_broadcast_in_dim_dynamism),
    infer=infer,
    semantics=DataMovement(movement),
    shape_from_program=("result",),
    exercise=Exercise(operand_values=CHOSEN, appended_last=knowledge_broken),
    notes="v1.20 numbering (not in the seed); dynamic_broadcast_in_dim_dynamism is spec.md's Dynamism section",
    # v1.20: "tensor or quantized tensor", per-axis too (C1, C6: the op's own); the storage values move
    quantization=Quantization(meaning=STORAGE, per_axis=True, example=quantized_example,
                              type_clauses=("dynamic_broadcast_in_dim_c1", "dynamic_broadcast_in_dim_c6")),
)
