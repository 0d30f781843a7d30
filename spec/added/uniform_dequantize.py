"""uniform_dequantize — quantized tensor → float tensor (v1.20, spec.md "uniform_dequantize").

"result = dequantize(operand)": `(storage - zero_point)`, converted into the
expressed type, times the scale (spec/quantized.py, exact).  Every storage
value has a result: nothing is left open.
"""
from __future__ import annotations

import numpy as np

from ..dsl import FLOAT, OpSpec, Operand, Result, same_shape
from ..dsl.quantization import OWN, Quantization, Quantizing
from ..quantized import dequantize, expressed_type, is_quantized
from ..types import TensorType


def uniform_dequantize_c1(op):
    """(C1) `shape(operand) = shape(result)`."""
    return same_shape(op.operand, op.result)


def uniform_dequantize_c2(op):
    """(C2) `element_type(result) = expressed_type(operand)`."""
    return is_quantized(op.operand) and op.result.element_type == expressed_type(op.operand)


def infer(op):
    return {"result": TensorType(tuple(op.operand.shape), expressed_type(op.operand))}


def element(op, array):
    return dequantize(np.asarray(array), op.operand.element_type)


SPEC = OpSpec(
    mnemonic="uniform_dequantize",
    operands=(Operand("operand", ()),),
    results=(Result("result", FLOAT),),
    constraints=(uniform_dequantize_c1, uniform_dequantize_c2),
    infer=infer,
    semantics=Quantizing(element),
    quantization=Quantization(names=("operand",), per_axis=True, meaning=OWN),
    notes="v1.20 numbering (not in the seed)",
)
