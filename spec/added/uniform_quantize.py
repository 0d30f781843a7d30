"""uniform_quantize — float or quantized tensor → quantized tensor (v1.20, spec.md "uniform_quantize").

"If is_float(operand): result = quantize(operand, type(result)).  If
is_quantized(operand): float_result = dequantize(operand); result =
quantize(float_result, type(result))."  Both functions are the spec's own,
executed exactly by spec/quantized.py (each float step rounded in the
expressed type; `quantize` clamps before it rounds half to even).  Where
the spec's last `convert` is undefined — a NaN operand — the result
element is any storage value.  Per-axis types are admitted by the tables
("quantized tensor") and computed by the same steps, one (scale, zero
point) per slice of the quantization dimension.
"""
from __future__ import annotations

import numpy as np

from ..dsl import FLOAT, OpSpec, Operand, Result, same_shape
from ..dsl.quantization import OWN, Quantization, Quantizing
from ..quantized import Quantized, expressed_type, is_quantized, uniform_quantize


def uniform_quantize_c1(op):
    """(C1) `shape(operand) = shape(result)`."""
    return same_shape(op.operand, op.result)


def uniform_quantize_c2(op):
    """(C2) `expressed_type(result) = is_float(operand) ? element_type(operand) : expressed_type(operand)`."""
    if not is_quantized(op.result):
        return False
    want = expressed_type(op.operand) if is_quantized(op.operand) else op.operand.element_type
    return expressed_type(op.result) == want


def infer(op):
    """The result's scales and zero points are the program's to state: nothing to infer."""
    return {}


def element(op, array):
    operand = Quantized(np.asarray(array), op.operand.element_type) if is_quantized(op.operand) else np.asarray(array)
    return uniform_quantize(operand, op.result.element_type)


SPEC = OpSpec(
    mnemonic="uniform_quantize",
    operands=(Operand("operand", FLOAT),),
    results=(Result("result", ()),),
    constraints=(uniform_quantize_c1, uniform_quantize_c2),
    infer=infer,
    semantics=Quantizing(element),
    result_type_stated=("result",),
    quantization=Quantization(per_axis=True, meaning=OWN),
    notes="v1.20 numbering (not in the seed)",
)
