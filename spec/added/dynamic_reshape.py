"""dynamic_reshape — reshape whose result shape is an operand (v1.20, spec.md "dynamic_reshape").

"This operation is functionally identical to reshape op, but the result
shape is specified dynamically via `output_shape`": reshape's row-major
movement (spec/ops/reshape.py) on the static instance of the same operand
and result.  `output_shape` is a value (shape_operands.py): equal to the
result's shape where a constant gives it (`dynamic_reshape_dynamism`, the
Dynamism section), else checked at run time.

C1 and C3 read per-axis quantized tensors, which v1.20's table admits;
this declaration takes no quantized tensor yet (no `quantization`), so
they hold on every program the tables pass — they are written as v1.20
states them and tested on instances directly.
"""
from __future__ import annotations

from ..dsl import ANY, INTEGER, DataMovement, OpSpec, Operand, Result, dim, rank
from ..ops.reshape import SPEC as RESHAPE
from ..ops.reshape import num_elements
from ..quantized import QuantizedType, is_per_axis_quantized, quantization_dimension
from ..types import TensorType
from .shape_operands import deferred, operand_size, shape_operand_matches, undefined, values


def _without_axis(t: TensorType):
    """The element type with its quantization dimension left out (C1: the
    one field a per-axis type may change)."""
    et = t.element_type
    if not isinstance(et, QuantizedType):
        return et
    return (et.storage_type, et.expressed_type, et.scales, et.zero_points, et.storage_min, et.storage_max)


def dynamic_reshape_c1(op):
    """(C1) `element_type(result)` is given by:
  * `element_type(operand)`, if `!is_per_axis_quantized(operand)`.
  * `element_type(operand)` except that `quantization_dimension(operand)` and
    `quantization_dimension(result)` may differ, otherwise."""
    if not is_per_axis_quantized(op.operand):
        return op.result.element_type == op.operand.element_type
    return is_per_axis_quantized(op.result) and _without_axis(op.operand) == _without_axis(op.result)


def dynamic_reshape_c2(op):
    """(C2) `size(operand) = size(result)`."""
    return num_elements(op.operand) == num_elements(op.result)


def _product(t: TensorType, axes) -> int:
    n = 1
    for d in axes:
        n *= dim(t, d)
    return n


def dynamic_reshape_c3(op):
    """(C3) If `is_per_axis_quantized(operand)`: the product of the dims
    before the quantization dimension, the quantization dimension's size
    and the product of the dims after it are the same in `operand` and
    `result` (v1.20 writes each product as a `reduce` with `x * y`)."""
    if not is_per_axis_quantized(op.operand):
        return True
    if not is_per_axis_quantized(op.result):
        return False   # C1's to reject: no quantization dimension to compare
    a, b = quantization_dimension(op.operand), quantization_dimension(op.result)
    if not (0 <= a < rank(op.operand) and 0 <= b < rank(op.result)):
        return False
    after_a, after_b = range(a + 1, rank(op.operand)), range(b + 1, rank(op.result))
    return (_product(op.operand, range(a)) == _product(op.result, range(b))
            and dim(op.operand, a) == dim(op.result, b)
            and _product(op.operand, after_a) == _product(op.result, after_b))


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


SPEC = OpSpec(
    mnemonic="dynamic_reshape",
    operands=(Operand("operand", ANY), Operand("output_shape", INTEGER, rank=1, literal=True)),
    results=(Result("result", ANY, rank=(1, 2, 0, 3)),),
    constraints=(dynamic_reshape_c1, dynamic_reshape_c2, dynamic_reshape_c3, dynamic_reshape_c4,
                 dynamic_reshape_dynamism),
    infer=infer,
    semantics=DataMovement(movement),
    shape_from_program=("result",),
    notes="v1.20 numbering (not in the seed); dynamic_reshape_dynamism is spec.md's Dynamism section",
)
