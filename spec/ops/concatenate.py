"""concatenate — join `inputs` along `dimension` in argument order (spec
section "concatenate").

"All tensors in `inputs`" is read as a statement about each member, so with
no inputs at all (which only C3 forbids) C1, C2, C4, C5 and C6 have nothing
to check and hold: a program with zero inputs is blamed on C3 alone.  C5 and
C6 compare the result with `inputs[0]`; the other members agree with it by
C1 and C2.
"""
import numpy as np

from ..dsl import (ANY, And, Attribute, DataMovement, If, IntAttr, OpSpec, Operand, Or, Result, all_of, any_of, at,
                   dim, element_type, in_range, rank, same_element_type, shape, size)
from ..dsl.quantization import MOVES_PER_TENSOR
from ..exercise import Corner, Exercise
from ..types import TensorType


def concatenate_c1(op):
    """(C1) All tensors in `inputs` have the same element type."""
    return all(element_type(t) == element_type(op.inputs[0]) for t in op.inputs)


def concatenate_c2(op):
    """(C2) All tensors in `inputs` have the same shape except for the size of the
  `dimension`th dimension."""
    first = op.inputs[0] if op.inputs else None
    return all_of(And(rank(t) == rank(first),
                      all_of(Or(d == op.dimension, dim(t, d) == dim(first, d)) for d in range(min(rank(t), rank(first)))))
                  for t in op.inputs)


def concatenate_c3(op):
    """(C3) `inputs` have N tensors where N >= 1."""
    return size(op.inputs) >= 1


def concatenate_c4(op):
    """(C4) 0 $\\le$ `dimension` $\\lt$ `rank(inputs[0])`."""
    return not op.inputs or in_range(op.dimension, 0, rank(op.inputs[0]))


def concatenate_c5(op):
    """(C5) `result` has the same element type as the tensors in `inputs`."""
    return not op.inputs or same_element_type(op.result, op.inputs[0])


def result_dim(op, d):
    """Dim `d` of the result by C6: the sum of the inputs' `dimension`th sizes
    when `d` is `dimension`, else `dim(inputs[0], d)` (`dimension` may be symbolic)."""
    total = sum(at(shape(t), d) for t in op.inputs)
    return If(op.dimension == d, total, dim(op.inputs[0], d))


def concatenate_c6(op):
    """(C6) `result` has the same shape as the tensors in `inputs` except for the
  size of the `dimension`th dimension, which is calculated as a sum of the size
  of `inputs[k][dimension]` for all `k` in `inputs`."""
    if not op.inputs:
        return True
    return And(rank(op.result) == rank(op.inputs[0]),
               all_of(dim(op.result, d) == result_dim(op, d) for d in range(min(rank(op.result), rank(op.inputs[0])))))


def infer(op):
    first = op.inputs[0]
    return {"result": TensorType(tuple(result_dim(op, d) for d in range(rank(first))), element_type(first))}


def movement(op, *inputs):
    """`result[i0, ..., id, ..., iR-1] = inputs[k][i0, ..., kd, ..., iR-1]` with
    `id = d0 + ... + dk-1 + kd`: the inputs laid one after the other along
    `dimension`, in argument order — numpy's concatenate (a byte copy)."""
    return [np.concatenate([np.asarray(x) for x in inputs], axis=op.dimension)]


CORNERS = (
    Corner("three inputs", (2,), lambda op: [], layout={"counts": {"inputs": 3}}),
    Corner("an empty input", (2,), lambda op: [any_of(And(op.dimension == k, op.inputs[0].shape[k] == 0)
                                                      for k in range(2))],
           layout={"counts": {"inputs": 2}}),
)


SPEC = OpSpec(
    mnemonic="concatenate",
    operands=(Operand("inputs", ANY, variadic=True, count=(2, 1, 3)),),
    attributes=(Attribute("dimension", IntAttr(64)),),
    results=(Result("result", ANY),),
    constraints=(concatenate_c1, concatenate_c2, concatenate_c3, concatenate_c4, concatenate_c5, concatenate_c6),
    infer=infer,
    semantics=DataMovement(movement),
    exercise=Exercise(corners=CORNERS),
    quantization=MOVES_PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; the storage values move
)
