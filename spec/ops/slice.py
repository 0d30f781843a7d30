"""slice — extract a strided block of `operand` with statically known
bounds (spec section "slice").

C5 is the one constraint that mentions the result's shape: it defines
`dim(result, d)` for every dimension of `operand`, read as the result having
those dimensions and no others (rank(result) = rank(operand)).  The ceiling
is only defined for a positive stride, which C4 demands; where a stride is
not positive C5 has nothing to say about that dimension.  Where the arrays
are shorter than the rank (C2's business), C3 and C5 read the dimensions
all of them cover.
"""
import numpy as np

from ..dsl import (ANY, And, Attribute, DataMovement, I64ArrayAttr, If, Implies, OpSpec, Operand, Result, all_of,
                   dim, is_symbolic, rank, same_element_type, size)
from ..dsl.quantization import MOVES_PER_TENSOR
from ..exercise import Corner, Exercise
from ..symbolic import Skeleton
from ..types import E_F32, TensorType

ARRAYS = ("start_indices", "limit_indices", "strides")


def ceil_div(a, b):
    """⌈a / b⌉ for b > 0 on exact integers, Python or z3: z3's integer
    division floors for a positive divisor, as Python's `//` does.  For
    b <= 0 the value is 0 (never used: C4 excludes it)."""
    if is_symbolic(a) or is_symbolic(b):
        return If(b > 0, (a + b - 1) / b, 0)
    return (a + b - 1) // b if b > 0 else 0


def _covered(op):
    return range(min(rank(op.operand), *(size(getattr(op, name)) for name in ARRAYS)))


def slice_c1(op):
    """(C1) `operand` and `result` have the same element type."""
    return same_element_type(op.operand, op.result)


def slice_c2(op):
    """(C2) size(`start_indices`) = size(`limit_indices`) = size(`strides`) =
rank(`operand`)."""
    return size(op.start_indices) == size(op.limit_indices) == size(op.strides) == rank(op.operand)


def slice_c3(op):
    """(C3) 0 $\\le$ `start_indices[d]` $\\le$ `limit_indices[d]` $\\le$
`dim(operand, d)` for all dimension `d`."""
    return all_of(And(0 <= op.start_indices[d], op.start_indices[d] <= op.limit_indices[d],
                      op.limit_indices[d] <= dim(op.operand, d)) for d in _covered(op))


def slice_c4(op):
    """(C4) 0 $\\lt$ `strides[d]` for all dimension `d`."""
    return all_of(0 < s for s in op.strides)


def sliced_dim(op, d):
    """⌈(limit_indices[d] - start_indices[d]) / strides[d]⌉."""
    return ceil_div(op.limit_indices[d] - op.start_indices[d], op.strides[d])


def slice_c5(op):
    """(C5) `dim(result, d)` =
$\\lceil$`(limit_indices[d]-start_indices[d])/stride[d]`$\\rceil$ for all
dimension `d` in `operand`.

    (`stride` is the input `strides`.)"""
    if rank(op.result) != rank(op.operand):
        return False
    return all_of(Implies(op.strides[d] > 0, dim(op.result, d) == sliced_dim(op, d)) for d in _covered(op))


def infer(op):
    return {"result": TensorType(tuple(sliced_dim(op, d) for d in range(rank(op.operand))),
                                 op.operand.element_type)}


def movement(op, operand):
    """`result[i0, ..., iR-1] = operand[j0, ..., jR-1]` with
    `jd = start_indices[d] + id * strides[d]`: numpy's strided slice
    `start:limit:stride` takes exactly those `jd` below `limit_indices[d]`."""
    operand = np.asarray(operand)
    index = tuple(slice(s, l, st) for s, l, st in zip(op.start_indices, op.limit_indices, op.strides))
    return [np.array(operand[index], copy=True)]


CORNERS = (
    Corner("empty window (start = limit)", (2,), lambda op: [op.start_indices[0] == op.limit_indices[0]]),
    Corner("full window", (2,), lambda op: [And(s == 0, l == d, st == 1) for s, l, st, d in
                                            zip(op.start_indices, op.limit_indices, op.strides, op.operand.shape)]),
    Corner("strides > 1", (2,), lambda op: [st >= 2 for st in op.strides] + [d >= 4 for d in op.operand.shape]),
)


def zero_stride(spec, skels, rng):
    """A stride of 0, the boundary of C4 (`0 < strides[d]`): the solver's
    violations take any stride at or below 0, and a reading of C4 as
    `0 <= strides[d]` accepts this one alone (C5 then holds vacuously)."""
    skel = skels[int(rng.integers(0, len(skels)))]
    t = TensorType((4,), skel.operand_types[0])
    yield ("stride 0", "slice_c4", skel,
           spec.instance({"operand": t}, {"start_indices": [0], "limit_indices": [4], "strides": [0]},
                         {"result": t}))


def negative_stride(spec, skels, rng):
    """A stride of -1 with a result of two elements: C4 breaks, and C5 —
    stated for positive strides only — holds; an implementation that reads
    C5 for any nonzero stride names it too."""
    t = TensorType((4,), E_F32)
    yield ("stride -1, a two-element result", "slice_c4", Skeleton(spec.mnemonic, (E_F32,)),
           spec.instance({"operand": t}, {"start_indices": [0], "limit_indices": [4], "strides": [-1]},
                         {"result": TensorType((2,), E_F32)}))


SPEC = OpSpec(
    mnemonic="slice",
    operands=(Operand("operand", ANY),),
    attributes=tuple(Attribute(name, I64ArrayAttr(), length=lambda op: rank(op.operand)) for name in ARRAYS),
    results=(Result("result", ANY),),
    constraints=(slice_c1, slice_c2, slice_c3, slice_c4, slice_c5),
    infer=infer,
    semantics=DataMovement(movement),
    exercise=Exercise(corners=CORNERS, appended=zero_stride, appended_last=negative_stride),
    quantization=MOVES_PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; the storage values move
)
