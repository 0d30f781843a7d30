"""reverse — reverse the order of elements along `dimensions` (spec section
"reverse")."""
import numpy as np

from ..dsl import (ANY, Attribute, DataMovement, I64ArrayAttr, OpSpec, Operand, Result, all_of, in_range,
                   is_unique, rank, same_type)
from ..dsl.quantization import MOVES_PER_TENSOR
from ..exercise import Corner, Exercise


def reverse_c1(op):
    """(C1) `operand` and `result` have the same type."""
    return same_type(op.operand, op.result)


def reverse_c2(op):
    """(C2) All dimensions in `dimensions` are unique."""
    return is_unique(op.dimensions)


def reverse_c3(op):
    """(C3) For all dimensions `k` in `dimensions`, 0 $\\le$ `dimensions[k]` $\\lt$
`rank(result)`.

    `k` ranges over the positions of `dimensions`: every entry is a
    dimension of the result."""
    return all_of(in_range(d, 0, rank(op.result)) for d in op.dimensions)


def infer(op):
    return {"result": op.operand}


def movement(op, operand):
    """`result[i0, ..., ik, ..., iR-1] = operand[i0, ..., ik', ..., iR-1]` where
    `ik + ik' = dk - 1` for all `k` in `dimensions`: a reversed slice along
    each of those dimensions."""
    operand = np.asarray(operand)
    index = [slice(None)] * operand.ndim
    for k in op.dimensions:
        index[k] = slice(None, None, -1)
    return [np.array(operand[tuple(index)], copy=True)]


def _lengths(op):
    """One dimension first, then none, then several (at most the rank)."""
    return tuple(n for n in (1, 0, 2, 3, 4) if n <= rank(op.operand)) or (0,)


CORNERS = (
    Corner("every dimension reversed", (3,), lambda op: [], layout={"lengths": {"dimensions": 3}}),
)


SPEC = OpSpec(
    mnemonic="reverse",
    operands=(Operand("operand", ANY),),
    attributes=(Attribute("dimensions", I64ArrayAttr(), length=_lengths),),
    results=(Result("result", ANY),),
    constraints=(reverse_c1, reverse_c2, reverse_c3),
    infer=infer,
    semantics=DataMovement(movement),
    exercise=Exercise(corners=CORNERS),
    quantization=MOVES_PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; the storage values move
)
