"""get_dimension_size — the size of one dimension of `operand`, as a
0-dimensional si32 tensor (spec section "get_dimension_size").

The Outputs table fixes the result's type ("0-dimensional tensor of type
`si32`"); no constraint mentions the result.
"""
import numpy as np

from ..dsl import ANY, Attribute, DataMovement, IntAttr, OpSpec, Operand, Result, in_range, rank
from ..exercise import Exercise
from ..symbolic import Skeleton
from ..types import SI32, TensorType
from ..dsl.quantization import STORAGE, Quantization
from ..quantized import per_axis_tensor


def get_dimension_size_c1(op):
    """(C1) 0 $\\le$ `dimension` $\\lt$ `rank(operand)`."""
    return in_range(op.dimension, 0, rank(op.operand))


def infer(op):
    return {"result": TensorType((), SI32)}


def movement(op, operand):
    """`dim(operand, dimension)` as an si32 scalar."""
    return [np.array(np.asarray(operand).shape[op.dimension], dtype=SI32.numpy)]


def per_axis_operand(spec, skels, rng):
    """The size of a dimension of a per-axis quantized tensor (only its shape is read)."""
    t = per_axis_tensor()
    yield ("a per-axis quantized operand", None, Skeleton(spec.mnemonic, (t.element_type,)),
           spec.instance({"operand": t}, {"dimension": 1}, {"result": TensorType((), SI32)}))


SPEC = OpSpec(
    mnemonic="get_dimension_size",
    operands=(Operand("operand", ANY),),
    attributes=(Attribute("dimension", IntAttr(64)),),
    results=(Result("result", (SI32,), fixed_rank=0),),
    constraints=(get_dimension_size_c1,),
    infer=infer,
    semantics=DataMovement(movement),
    exercise=Exercise(appended_last=per_axis_operand),
    # v1.20: operand "tensor or quantized tensor": only its shape is read
    quantization=Quantization(meaning=STORAGE, per_axis=True),
)
