"""dynamic_reshape — reshape whose result shape is an operand (v1.20, spec.md "dynamic_reshape").

"This operation is functionally identical to reshape op, but the result
shape is specified dynamically via `output_shape`": reshape's row-major
movement (spec/ops/reshape.py) on the static instance of the same operand
and result.  `output_shape` is a value (shape_operands.py): equal to the
result's shape where a constant gives it (`dynamic_reshape_dynamism`, the
Dynamism section), else checked at run time.

Quantized tensors (v1.20: operand and result "tensor or quantized
tensor", per-axis too; C1 and C3 read them): the storage values move as
reshape's do (`STORAGE`), a per-axis quantization dimension moving with
the products C3 ties.  C1 and C3 are the op's own constraints (v1.20
numbers them with the rest), so the declaration adds none.
"""
from __future__ import annotations

import numpy as np

from ..dsl import ANY, INTEGER, DataMovement, OpSpec, Operand, Result, rank
from ..dsl.quantization import STORAGE, Quantization
from ..exercise import Chosen, Exercise
from ..ops.reshape import SPEC as RESHAPE
from ..ops.reshape import num_elements, reshape_c1, reshape_c3
from ..quantized import is_per_axis_quantized
from ..types import TensorType
from .shape_operands import deferred, operand_size, shape_operand_matches, undefined, values


def dynamic_reshape_c1(op):
    """(C1) `element_type(result)` is given by:
  * `element_type(operand)`, if `!is_per_axis_quantized(operand)`.
  * `element_type(operand)` except that `quantization_dimension(operand)` and
    `quantization_dimension(result)` may differ, otherwise.

    reshape's C1 in v1.20's words: its function (spec/ops/reshape.py)."""
    return reshape_c1(op)


def dynamic_reshape_c2(op):
    """(C2) `size(operand) = size(result)`."""
    return num_elements(op.operand) == num_elements(op.result)


def dynamic_reshape_c3(op):
    """(C3) If `is_per_axis_quantized(operand)`: the product of the dims
    before the quantization dimension, the quantization dimension's size
    and the product of the dims after it are the same in `operand` and
    `result` (v1.20 writes each product as a `reduce` with `x * y`).

    reshape's C3 in the same words: its function (spec/ops/reshape.py),
    which reads a result that is not per-axis as C1's to reject."""
    return reshape_c3(op)


def dynamic_reshape_c4(op):
    """(C4) `size(output_shape) = rank(result)`."""
    return operand_size(op.output_shape) == rank(op.result)


def dynamic_reshape_dynamism(op):
    """(Dynamism) The values of `output_shape` match the shape of `result`
    (spec.md "Shape mismatches for ops that take their output shape as an
    operand"): checked where they are known."""
    return shape_operand_matches(op, "output_shape", op.result)


def infer(op):
    """The result: `output_shape`'s values where they are known, the operand's element type (C1)."""
    v = values(op, "output_shape")
    if v is None or is_per_axis_quantized(op.operand):
        return {}
    return {"result": TensorType(v, op.operand.element_type)}


def static(op):
    """reshape's instance of the same operand and result."""
    return RESHAPE.instance({"operand": op.operand}, {}, {"result": op.result})


def movement(op, operand, output_shape):
    broken = deferred(op, output_shape=output_shape)
    if broken:
        return [undefined(op.result, broken)]
    return RESHAPE.semantics.fn(static(op), operand)


def _known(inst, **values_):
    """`inst` with its literal operands' values known (as the reader knows a constant's)."""
    inst.known_values = {k: np.asarray(v, dtype=np.int64) for k, v in values_.items()}
    return inst


def quantized_example(types: dict):
    """A valid dynamic_reshape whose element types are `types` (by name:
    operand, result; f32 where not given): 2x2x3 to 2x6, `output_shape` a
    constant [2, 6] — a quantization dimension 0 of the operand maps to 0
    of the result (C3), and 1 (of the same size, so C1 holds) breaks C3
    alone."""
    from ..types import element_type
    f32 = element_type("f32")
    inst = SPEC.instance({"operand": TensorType((2, 2, 3), types.get("operand", f32)),
                          "output_shape": TensorType((2,), element_type("si64"))}, {},
                         {"result": TensorType((2, 6), types.get("result", f32))})
    return _known(inst, output_shape=(2, 6))


CHOSEN = Chosen()   # the output_shape of `counts_past_256`'s instance


def counts_past_256(spec, skels, rng):
    """17x17 reshaped to one axis of 289 (`Exercise.appended_last`): C2
    compares two element counts past the integers CPython keeps one object
    of (-5..256), so an implementation comparing them by identity refuses a
    valid program (all_gather's `gathered_past_256`); every other case
    holds fewer elements."""
    from ..symbolic import Skeleton
    from ..types import element_type
    f32, si64 = element_type("f32"), element_type("si64")
    n = 17 * 17
    inst = spec.instance({"operand": TensorType((17, 17), f32), "output_shape": TensorType((1,), si64)}, {},
                         {"result": TensorType((n,), f32)})
    yield (f"17x17 to {n}: element counts past CPython's shared small integers", None,
           Skeleton(spec.mnemonic, (f32, si64)), CHOSEN.choose(inst, output_shape=np.array([n], dtype=np.int64)))


SPEC = OpSpec(
    mnemonic="dynamic_reshape",
    operands=(Operand("operand", ANY), Operand("output_shape", INTEGER, rank=1, literal=True)),
    results=(Result("result", ANY, rank=(1, 2, 0, 3)),),
    constraints=(dynamic_reshape_c1, dynamic_reshape_c2, dynamic_reshape_c3, dynamic_reshape_c4,
                 dynamic_reshape_dynamism),
    infer=infer,
    semantics=DataMovement(movement),
    shape_from_program=("result",),
    exercise=Exercise(operand_values=CHOSEN, appended_last=counts_past_256),
    notes="v1.20 numbering (not in the seed); dynamic_reshape_dynamism is spec.md's Dynamism section",
    # v1.20: "tensor or quantized tensor", per-axis too (C1, C3: the op's own); the storage values move
    quantization=Quantization(meaning=STORAGE, per_axis=True, example=quantized_example,
                              type_clauses=("dynamic_reshape_c1", "dynamic_reshape_c3")),
)
