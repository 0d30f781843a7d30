"""abs — element-wise absolute value (spec section "abs").

`abs` of the most negative signed integer has no representable result
(integer overflow: the seed's "Errors" section leaves it
implementation-defined); the two known outcomes are declared.
"""
import math
import numpy as np

from ..dsl import COMPLEX, FLOAT, SIGNED, Elementwise, ImplDefined, OpSpec, Operand, Result, approx_if_complex, same_shape, Generic, finite, checked
from .. import annex_g
from ..dsl.quantization import PER_TENSOR
from ..quantized import baseline_element_type
from ..types import TensorType


def abs_c1(op):
    """(C1)  `operand` and `result` have the same shape."""
    return same_shape(op.operand, op.result)


def result_element_type(et):
    return et.component if et.is_complex else et


def abs_c2(op):
    """(C2)  `operand` and `result` have the same element type, except when the
  element type of the `operand` is complex type, in which case the element type
  of the `result` is the element type of the complex type (e.g. the element type
  of the `result` is `f64` for operand type `complex<f64>`).

    v1.20 (C2) reads `baseline_element_type(result)` = `complex_element_type(element_type(operand))`
    if `is_complex(operand)`, `baseline_element_type(operand)` otherwise: the seed's rule for every
    non-quantized type; a per-tensor quantized result may differ from the operand in scales and zero
    points."""
    return baseline_element_type(op.result) == result_element_type(baseline_element_type(op.operand))


def infer(op):
    return {"result": TensorType(op.operand.shape, result_element_type(op.operand.element_type))}


def element(op, operand):
    """Signed integers: integer modulus; floats: IEEE `abs` (clears the sign,
    exact); complex: complex modulus (C99 `cabs`, judged approximately)."""
    et = op.operand.element_type
    if et.is_signed:
        if operand == et.min_value:
            return ImplDefined({"INT_MIN (wraps)": et.min_value, "INT_MAX (saturates)": et.max_value},
                               why="abs of the most negative integer overflows (seed: Errors)")
        return abs(operand)
    if et.is_complex:
        return annex_g.cabs(operand)
    return math.fabs(operand)


SPEC = OpSpec(
    mnemonic="abs",
    operands=(Operand("operand", SIGNED + FLOAT + COMPLEX),),
    results=(Result("result", SIGNED + FLOAT),),
    constraints=(abs_c1, abs_c2),
    infer=infer,
    semantics=Elementwise(element, accuracy=approx_if_complex, generic=Generic(None, finite, ieee=np.abs, exact=True, integer=checked(np.abs))),
    # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize(abs, operand, type(result))
    quantization=PER_TENSOR,
)
