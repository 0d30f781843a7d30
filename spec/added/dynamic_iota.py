"""dynamic_iota — iota whose shape is an operand (v1.20, spec.md "dynamic_iota").

"This operation is functionally identical to iota op, but the result shape
is specified dynamically via `output_shape`": the result is iota's
(spec/ops/iota.py, its readings of ids a type cannot hold included) on
the static instance of the same result type and `iota_dimension`.

`output_shape` is a value (shape_operands.py): where a constant gives it,
the Dynamism section's rule that it equals the result's shape is checked
when the program is read (`dynamic_iota_dynamism`); else at run time, where
a mismatch leaves the result undefined.  v1.20's table admits a
per-tensor quantized result too: iota's reading (`quantize(output_index[
iota_dimension], element_type(output))`, dequantize_op_quantize of no
quantized operand: the index in the expressed type, quantized), as iota
declares it (`PER_TENSOR`).
"""
from __future__ import annotations

import numpy as np

from ..dsl import COMPLEX, FLOAT, INTEGER, Attribute, DataMovement, IntAttr, OpSpec, Operand, Result, in_range, rank
from ..dsl.quantization import Quantization
from ..exercise import Chosen, Exercise
from ..ops.iota import SPEC as IOTA
from ..types import TensorType
from .shape_operands import deferred, operand_size, shape_operand_matches, undefined, values


def dynamic_iota_c1(op):
    """(C1) `0 <= iota_dimension < size(output_shape)`."""
    return in_range(op.iota_dimension, 0, operand_size(op.output_shape))


def dynamic_iota_c2(op):
    """(C2) `rank(result) = size(output_shape)`."""
    return rank(op.result) == operand_size(op.output_shape)


def dynamic_iota_dynamism(op):
    """(Dynamism) The values of `output_shape` match the shape of `result`
    (spec.md "Shape mismatches for ops that take their output shape as an
    operand", whose example is this op): checked where they are known."""
    return shape_operand_matches(op, "output_shape", op.result)


def infer(op):
    """The result's shape is `output_shape`'s values where they are known;
    its element type is the program's (as iota's)."""
    v = values(op, "output_shape")
    return {} if v is None else {"result": TensorType(v, op.result.element_type)}


def static(op) -> object:
    """iota's instance of the same result and `iota_dimension`."""
    return IOTA.instance({}, {"iota_dimension": op.iota_dimension}, {"output": op.result})


def movement(op, output_shape):
    """iota's index formula on the static instance; undefined where
    `output_shape` breaks a rule only at run time."""
    broken = deferred(op, output_shape=output_shape)
    if broken:
        return [undefined(op.result, broken)]
    return IOTA.semantics.fn(static(op))


def _known(inst, **values_):
    """`inst` with its literal operands' values known (as the reader knows a constant's)."""
    inst.known_values = {k: np.asarray(v, dtype=np.int64) for k, v in values_.items()}
    return inst


def quantized_example(types: dict):
    """A valid dynamic_iota whose result type is `types["result"]` (f32
    where not given): a 3x4 result along dimension 1, `output_shape` a
    constant [3, 4]."""
    from ..types import element_type
    inst = SPEC.instance({"output_shape": TensorType((2,), element_type("si64"))}, {"iota_dimension": 1},
                         {"result": TensorType((3, 4), types.get("result", element_type("f32")))})
    return _known(inst, output_shape=(3, 4))


CHOSEN = Chosen()   # the output_shape of `shape_operand_shorter`'s instance


def shape_operand_shorter(spec, skels, rng):
    """A 2x3 result from an `output_shape` of one entry, [2]
    (`Exercise.appended_last`): C2 broken with the rank above the operand's
    size — the generator's own C2 cases lengthen `output_shape`, so a rank
    test that let the longer result through (`>=`) would pass them all.
    The Dynamism rule compares values only where the lengths agree, and C1
    holds (dimension 0 < 1): C2 is the one rule broken."""
    from ..symbolic import Skeleton
    from ..types import element_type
    f32, si64 = element_type("f32"), element_type("si64")
    inst = spec.instance({"output_shape": TensorType((1,), si64)}, {"iota_dimension": 0},
                         {"result": TensorType((2, 3), f32)})
    yield ("output_shape [2] for a 2x3 result (one entry short of the rank)", "dynamic_iota_c2",
           Skeleton(spec.mnemonic, (f32, si64)), CHOSEN.choose(inst, output_shape=np.array([2], dtype=np.int64)))


SPEC = OpSpec(
    mnemonic="dynamic_iota",
    operands=(Operand("output_shape", INTEGER, rank=1, literal=True),),
    attributes=(Attribute("iota_dimension", IntAttr(64)),),
    results=(Result("result", INTEGER + FLOAT + COMPLEX, rank=(1, 2, 0, 3)),),
    constraints=(dynamic_iota_c1, dynamic_iota_c2, dynamic_iota_dynamism),
    infer=infer,
    semantics=DataMovement(movement),
    result_from_program=("result",),
    shape_from_program=("result",),
    exercise=Exercise(operand_values=CHOSEN, appended_last=shape_operand_shorter),
    notes="v1.20 numbering (not in the seed); dynamic_iota_dynamism is spec.md's Dynamism section",
    # v1.20: result "or per-tensor quantized tensor" (iota's: the index quantized, dequantize_op_quantize)
    quantization=Quantization(example=quantized_example, skeletons=False),
)
