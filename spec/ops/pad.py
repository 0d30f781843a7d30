"""pad — pad `operand` at both ends of every dimension and between its
elements with `padding_value` (spec section "pad").

Edge padding may be negative: it then removes elements from the
interior-padded operand ("Interior padding occurs before edge padding").
Only C3 limits the sign, of `interior_padding`.  C4 is the one constraint
that mentions the result's shape: it defines `dim(result, i)` for every
dimension of `operand`, read as the result having those dimensions and no
others (rank(result) = rank(operand)).  A padding array shorter than the
rank (C2's business) counts its missing entries as 0 there.
"""
import numpy as np

from ..dsl import (ANY, And, Attribute, DataMovement, I64ArrayAttr, If, OpSpec, Operand, Result, all_of, at,
                   dim, rank, same_element_type, size)
from ..dsl.quantization import MOVES_PER_TENSOR
from ..exercise import Corner, Exercise
from ..symbolic import Skeleton
from ..types import E_F32, TensorType

PADDINGS = ("edge_padding_low", "edge_padding_high", "interior_padding")


def pad_c1(op):
    """(C1) `operand`, `padding_value`, `result` have the same element type."""
    return same_element_type(op.operand, op.padding_value, op.result)


def pad_c2(op):
    """(C2) `edge_padding_low`, `edge_padding_high`, `interior_padding` have the
size equal to `operand`'s rank."""
    return all(size(getattr(op, name)) == rank(op.operand) for name in PADDINGS)


def pad_c3(op):
    """(C3) 0 $\\le$ `interior_padding[i]` for all `i` values in `interior_padding`."""
    return all_of(0 <= x for x in op.interior_padding)


def padded_dim(op, i):
    """`di + max(di - 1, 0) * interior_padding[i] + edge_padding_low[i] +
    edge_padding_high[i]` with `di = dim(operand, i)`."""
    di = dim(op.operand, i)
    return (di + If(di - 1 > 0, di - 1, 0) * at(op.interior_padding, i)
            + at(op.edge_padding_low, i) + at(op.edge_padding_high, i))


def pad_c4(op):
    """(C4) 0 $\\le$ `dim(result, i)` for all `i`th dimension of `operand`, where
`dim(result, i) = di + max(di - 1, 0) * interior_padding[i] + edge_padding_low[i] + edge_padding_high[i]`
and `di = dim(operand, i)`."""
    if rank(op.result) != rank(op.operand):
        return False
    return all_of(And(0 <= dim(op.result, i), dim(op.result, i) == padded_dim(op, i)) for i in range(rank(op.operand)))


def infer(op):
    return {"result": TensorType(tuple(padded_dim(op, i) for i in range(rank(op.operand))),
                                 op.operand.element_type)}


def movement(op, operand, padding_value):
    """`result[i0, ..., iR-1]` is `operand[j0, ..., jR-1]` if
    `id = edge_padding_low[d] + jd * (interior_padding[d] + 1)`, and
    `padding_value[]` otherwise.  Operand elements whose position falls
    outside the result (negative edge padding) are dropped."""
    operand = np.asarray(operand)
    out_shape = tuple(int(d) for d in op.result.shape)
    result = np.broadcast_to(np.asarray(padding_value, dtype=operand.dtype), out_shape).copy()
    src, dst = [], []
    for d in range(operand.ndim):
        j = np.arange(operand.shape[d])
        i = op.edge_padding_low[d] + j * (op.interior_padding[d] + 1)
        keep = (0 <= i) & (i < out_shape[d])
        src.append(j[keep])
        dst.append(i[keep])
    result[np.ix_(*dst)] = operand[np.ix_(*src)]
    return [result]


CORNERS = (
    Corner("negative edge padding", (2, 0), lambda op: [op.edge_padding_low[0] < 0, op.edge_padding_high[1] < 0]),
    Corner("interior padding", (2, 0), lambda op: [i >= 1 for i in op.interior_padding]),
    Corner("negative edges into interior padding", (1, 0),
           lambda op: [op.interior_padding[0] >= 2, op.edge_padding_low[0] < 0, op.operand.shape[0] >= 3]),
)


def result_rank_below(spec, skels, rng):
    """A result one rank short of the operand's: C4 compares ranks before
    dims, and the solver's negative cases for C4 hold a result of equal or
    higher rank (suites/core: `pad/ui4/226ac35c656f`, `pad/f32/ad7da31cdd69`)."""
    skel = skels[int(rng.integers(0, len(skels)))]
    et = skel.operand_types[0]
    yield ("result rank below the operand's", "pad_c4", skel,
           spec.instance({"operand": TensorType((2, 3), et), "padding_value": TensorType((), et)},
                         {"edge_padding_low": [0, 0], "edge_padding_high": [0, 0], "interior_padding": [0, 0]},
                         {"result": TensorType((2,), et)}))


def result_rank_above(spec, skels, rng):
    """A result one rank above the operand's whose leading dims are the
    padded ones: only C4's comparison of ranks breaks (the solver's higher
    rank results break a dim too)."""
    yield ("result rank above the operand's, its leading dims right", "pad_c4", Skeleton(spec.mnemonic, (E_F32, E_F32)),
           spec.instance({"operand": TensorType((2, 3), E_F32), "padding_value": TensorType((), E_F32)},
                         {"edge_padding_low": [1, 0], "edge_padding_high": [0, 1], "interior_padding": [0, 0]},
                         {"result": TensorType((3, 4, 1), E_F32)}))


SPEC = OpSpec(
    mnemonic="pad",
    operands=(Operand("operand", ANY), Operand("padding_value", ANY, rank=0)),
    attributes=tuple(Attribute(name, I64ArrayAttr(), length=lambda op: rank(op.operand)) for name in PADDINGS),
    results=(Result("result", ANY),),
    constraints=(pad_c1, pad_c2, pad_c3, pad_c4),
    infer=infer,
    semantics=DataMovement(movement),
    exercise=Exercise(corners=CORNERS, appended=result_rank_below, appended_last=result_rank_above),
    quantization=MOVES_PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; the storage values move
)
