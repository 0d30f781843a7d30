"""dynamic_slice — extract a `slice_sizes` block of `operand` starting at
run-time `start_indices`, clamped into range (spec section "dynamic_slice").

`start_indices` are one 0-dimensional tensor per operand dimension (C2);
their values arrive with the inputs, so no constraint reads them: an
out-of-range start is not an error but is clamped by the semantics.
Where the counts disagree with the rank (C2's business), C4 reads the
entries that exist.
"""
import numpy as np

from ..dsl import (ANY, INTEGER, And, Attribute, DataMovement, I64ArrayAttr, OpSpec, Operand, Result, all_of,
                   rank, same_element_type, same_type, shape, shape_is, size)
from ..dsl.quantization import MOVES_PER_TENSOR
from ..exercise import CLAMPED, Corner, Exercise, Indices, StartScalars
from ..types import TensorType


def dynamic_slice_c1(op):
    """(C1) `operand` and `result` have the same element type."""
    return same_element_type(op.operand, op.result)


def dynamic_slice_c2(op):
    """(C2) size(`start_indices`) $=$ size(`slice_sizes`) $=$ rank(`operand`)."""
    return size(op.start_indices) == size(op.slice_sizes) == rank(op.operand)


def dynamic_slice_c3(op):
    """(C3) All `start_indices` have the same type."""
    return all(same_type(t, op.start_indices[0]) for t in op.start_indices)


def dynamic_slice_c4(op):
    """(C4) `slice_sizes[k]` $\\in$ [0, dim(`operand`, `k`)] for all `k` $\\in$ [0,
  rank(`operand`)).

    A closed interval: the whole dimension may be taken."""
    return all_of(And(0 <= s, s <= d) for s, d in zip(op.slice_sizes, shape(op.operand)))


def dynamic_slice_c5(op):
    """(C5) shape(`result`) $=$ `slice_sizes`."""
    return shape_is(op.result, op.slice_sizes)


def infer(op):
    return {"result": TensorType(tuple(op.slice_sizes), op.operand.element_type)}


def clamp(lo, x, hi):
    """The spec's `clamp(min, operand, max)` on exact integers: `min(max(operand, min), max)`."""
    return min(max(x, lo), hi)


def adjusted_start_indices(start_indices, operand_shape, sizes) -> list[int]:
    """`clamp(0, start_indices, shape(operand) - sizes)`, dimension by
    dimension, on the exact integer values (an si64 start index far out of
    range, or a ui64 one above 2^63, clamps without wrapping)."""
    return [clamp(0, int(np.asarray(s)), int(d) - int(n)) for s, d, n in zip(start_indices, operand_shape, sizes)]


def movement(op, operand, *start_indices):
    """`result[i0, ..., iR-1] = operand[j0, ..., jR-1]` with
    `jd = adjusted_start_indices[d][] + id` and
    `adjusted_start_indices = clamp(0, start_indices, shape(operand) - slice_sizes)`."""
    operand = np.asarray(operand)
    start = adjusted_start_indices(start_indices, operand.shape, op.slice_sizes)
    j = tuple(slice(a, a + int(n)) for a, n in zip(start, op.slice_sizes))
    return [np.array(operand[j], copy=True)]


def start_placement(op) -> StartScalars:
    """One rank-0 start per operand axis; a start covers `slice_sizes[d]` indices."""
    return StartScalars("start_indices", tuple(int(d) for d in op.operand.shape),
                        tuple(int(s) for s in op.slice_sizes))


CORNERS = (
    Corner("full window", (2, 0), lambda op: [s == d for s, d in zip(op.slice_sizes, op.operand.shape)]),
    Corner("empty window", (2, 0), lambda op: [op.slice_sizes[0] == 0]),
)


SPEC = OpSpec(
    mnemonic="dynamic_slice",
    operands=(Operand("operand", ANY),
              Operand("start_indices", INTEGER, variadic=True, rank=0, count=lambda op: rank(op.operand))),
    attributes=(Attribute("slice_sizes", I64ArrayAttr(), length=lambda op: rank(op.operand)),),
    results=(Result("result", ANY),),
    constraints=(dynamic_slice_c1, dynamic_slice_c2, dynamic_slice_c3, dynamic_slice_c4, dynamic_slice_c5),
    infer=infer,
    semantics=DataMovement(movement),
    exercise=Exercise(corners=CORNERS, indices=Indices(start_placement, CLAMPED)),
    quantization=MOVES_PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; the storage values move
)
