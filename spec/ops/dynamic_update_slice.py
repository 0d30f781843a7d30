"""dynamic_update_slice — `operand` with the block at run-time
`start_indices` (clamped into range) replaced by `update` (spec section
"dynamic_update_slice").

Findings: the Inputs table lists `update`'s constraints as "(C3), (C3), (C6)";
(C2) — element_type(`update`) = element_type(`operand`) — is meant.
Where `update`'s rank differs from `operand`'s (C3's business), C6 reads the
dimensions both have.
"""
import numpy as np

from ..dsl import (ANY, INTEGER, And, DataMovement, OpSpec, Operand, Result, all_of, element_type, rank,
                   same_type, shape, size)
from ..dsl.quantization import MOVES_PER_TENSOR
from ..exercise import CLAMPED, Corner, Exercise, Indices, StartScalars
from .dynamic_slice import adjusted_start_indices


def dynamic_update_slice_c1(op):
    """(C1) `operand` and `result` have the same type."""
    return same_type(op.operand, op.result)


def dynamic_update_slice_c2(op):
    """(C2) element_type(`update`) $=$ element_type(`operand`)."""
    return element_type(op.update) == element_type(op.operand)


def dynamic_update_slice_c3(op):
    """(C3) rank(`update`) $=$ rank(`operand`)."""
    return rank(op.update) == rank(op.operand)


def dynamic_update_slice_c4(op):
    """(C4) size(`start_indices`) $=$ rank(`operand`)."""
    return size(op.start_indices) == rank(op.operand)


def dynamic_update_slice_c5(op):
    """(C5) All `start_indices` have the same type."""
    return all(same_type(t, op.start_indices[0]) for t in op.start_indices)


def dynamic_update_slice_c6(op):
    """(C6) dim(`update`, `k`) $\\in$ [0, dim(`operand`, `k`)] for all `k` $\\in$
  [0, rank(`operand`))."""
    return all_of(And(0 <= u, u <= d) for u, d in zip(shape(op.update), shape(op.operand)))


def infer(op):
    return {"result": op.operand}


def movement(op, operand, update, *start_indices):
    """`result[i0, ..., iR-1]` is `update[j0, ..., jR-1]` if
    `id = adjusted_start_indices[d][] + jd` with `adjusted_start_indices =
    clamp(0, start_indices, shape(operand) - shape(update))`, and
    `operand[i0, ..., iR-1]` otherwise."""
    operand, update = np.asarray(operand), np.asarray(update)
    start = adjusted_start_indices(start_indices, operand.shape, update.shape)
    result = np.array(operand, copy=True)
    result[tuple(slice(a, a + n) for a, n in zip(start, update.shape))] = update
    return [result]


def start_placement(op) -> StartScalars:
    """One rank-0 start per operand axis; a start covers the update's extent there."""
    return StartScalars("start_indices", tuple(int(d) for d in op.operand.shape),
                        tuple(int(d) for d in op.update.shape))


CORNERS = (
    Corner("empty update", (2, 2, 0), lambda op: [op.update.shape[0] == 0]),
    Corner("full update", (2, 2, 0), lambda op: [u == d for u, d in zip(op.update.shape, op.operand.shape)]),
)


SPEC = OpSpec(
    mnemonic="dynamic_update_slice",
    operands=(Operand("operand", ANY), Operand("update", ANY),
              Operand("start_indices", INTEGER, variadic=True, rank=0, count=lambda op: rank(op.operand))),
    results=(Result("result", ANY),),
    constraints=(dynamic_update_slice_c1, dynamic_update_slice_c2, dynamic_update_slice_c3,
                 dynamic_update_slice_c4, dynamic_update_slice_c5, dynamic_update_slice_c6),
    infer=infer,
    semantics=DataMovement(movement),
    exercise=Exercise(corners=CORNERS, indices=Indices(start_placement, CLAMPED)),
    quantization=MOVES_PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; the storage values move
)
