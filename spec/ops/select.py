"""select — pick each element from `on_true` or `on_false` by `pred` (spec
section "select").

Stated as the seed's index formula on whole arrays
(`result[i] = pred_val ? on_true[i] : on_false[i]`, with `pred_val` the
scalar `pred` when `rank(pred) == 0`): data movement, so no rounding and
NaN payloads travel unchanged.
"""
import numpy as np

from ..dsl import ANY, BOOLEAN, DataMovement, OpSpec, Operand, Or, Result, rank, same_shape
from ..dsl.quantization import PER_TENSOR
from ..quantized import same_baseline_type


def select_c1(op):
    """(C1) Either `rank(pred)` $=$ `0` or `shape(pred)` $=$ `shape(on_true)`."""
    return Or(rank(op.pred) == 0, same_shape(op.pred, op.on_true))


def select_c2(op):
    """(C2) `on_true`, `on_false` and `result` have same type.  v1.20 reads
    `baseline_type(on_true) = baseline_type(on_false) = baseline_type(result)`:
    the same for every non-quantized type (dequantize_select_quantize)."""
    return same_baseline_type(op.on_true, op.on_false, op.result)


def infer(op):
    return {"result": op.on_true}


def arrays(op, pred, on_true, on_false):
    """`pred_val ? on_true : on_false` element by element (a rank-0 `pred` broadcasts)."""
    on_true = np.asarray(on_true)
    result = np.where(np.asarray(pred, dtype=np.bool_), on_true, np.asarray(on_false))
    return [result.astype(on_true.dtype, copy=False)]


SPEC = OpSpec(
    mnemonic="select",
    operands=(Operand("pred", BOOLEAN), Operand("on_true", ANY), Operand("on_false", ANY)),
    results=(Result("result", ANY),),
    constraints=(select_c1, select_c2),
    infer=infer,
    semantics=DataMovement(arrays),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize (compare: dequantize_compare, select: dequantize_select_quantize, is_finite: always true)
)
