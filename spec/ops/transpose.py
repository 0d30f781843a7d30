"""transpose — permute the dimensions of `operand` (spec section "transpose").

Finding (seed C3 against the seed's own Semantics): C3 reads
"`dim(operand, i) = dim(result, j)` where `j = permutation[i]`", i.e.
`dim(result, permutation[i]) = dim(operand, i)`.  The Semantics formula,
`result[i0, ..., iR-1] = operand[j0, ..., jR-1]` where
`i[d] = j[permutation[d]]`, runs result index `i[d]` over operand
dimension `permutation[d]`, so it needs
`dim(result, d) = dim(operand, permutation[d])`.  The two agree when
`permutation` is its own inverse (every permutation of rank ≤ 2, and the
Example's [2, 1, 0]) and disagree otherwise: for an operand of shape 2x3x4
and permutation [1, 2, 0], C3 as written demands a 4x2x3 result, the
Semantics fill a 3x4x2 one (and index out of range of the operand when made
to fill 4x2x3).  StableHLO's type inference, XLA's shape inference and numpy
take the Semantics' reading; C3 is encoded in that form.
"""
import dataclasses
import itertools

import numpy as np

from ..dsl import (ANY, And, Attribute, DataMovement, I64ArrayAttr, OpSpec, Operand, Result, all_of, at, dim,
                   in_range, is_permutation, rank, same_element_type, shape)
from ..dsl.quantization import STORAGE, Quantization, is_per_axis_tensor, same_except
from ..exercise import Corner, Exercise
from ..types import TensorType


def transpose_c1(op):
    """(C1) `operand` and `result` have the same element type.

    v1.20 (C1): `element_type(operand)` if `!is_per_axis_quantized(operand)`, else the same except
    that `quantization_dimension(operand)` and `quantization_dimension(result)` may differ."""
    if is_per_axis_tensor(op.operand):
        return same_except(op.operand, op.result, ("quantization_dimension",))
    return same_element_type(op.operand, op.result)


def transpose_c2(op):
    """(C2) `permutation` is a permutation of `[0, 1, ..., R-1]` where `R` is the
rank of `operand`."""
    return is_permutation(op.permutation, rank(op.operand))


def transpose_c3(op):
    """(C3) For all dimensions `i` in `operand`, `dim(operand, i) = dim(result, j)`
where `j = permutation[i]`.

    Encoded as the Semantics require (module docstring):
    `dim(result, d) = dim(operand, permutation[d])` for every dimension `d`,
    with rank(result) = rank(operand).  An entry of `permutation` that names
    no operand dimension (C2's business) constrains nothing here."""
    if rank(op.result) != rank(op.operand):
        return False
    return all_of(dim(op.result, d) == at(shape(op.operand), p, default=dim(op.result, d))
                  for d, p in zip(range(rank(op.result)), op.permutation))


def transpose_c4(op):
    """(v1.20 C4) If `is_per_axis_quantized(result)`, then `quantization_dimension(operand) =
    permutation(quantization_dimension(result))` (read `permutation[quantization_dimension(result)]`:
    the result's axis d indexes the operand's axis permutation[d], so the scales follow it)."""
    if not (is_per_axis_tensor(op.result) and is_per_axis_tensor(op.operand)):
        return True
    d = op.result.element_type.quantization_dimension
    perm = tuple(op.permutation)
    return And(in_range(d, 0, len(perm)), at(perm, d, default=-1) == op.operand.element_type.quantization_dimension)


def quantized_example(types: dict):
    """A valid transpose of a 2×3×2 operand by [2, 0, 1] into 2×2×3 (of the
    element types `types` names; f32 where not named): two axes of size 2,
    so a per-axis result can be along the right one (1) or the wrong (0)."""
    from ..types import E_F32
    return SPEC.instance({"operand": TensorType((2, 3, 2), types.get("operand", E_F32))}, {"permutation": (2, 0, 1)},
                         {"result": TensorType((2, 2, 3), types.get("result", E_F32))})


def infer(op):
    """The permuted shape, the operand's element type — for a per-axis one
    with its quantization dimension where the permutation takes it (C4)."""
    et = op.operand.element_type
    if getattr(et, "is_quantized", False) and et.is_per_axis and et.quantization_dimension in tuple(op.permutation):
        et = dataclasses.replace(et, quantization_dimension=tuple(op.permutation).index(et.quantization_dimension))
    return {"result": TensorType(tuple(at(shape(op.operand), p) for p in op.permutation), et)}


def movement(op, operand):
    """`result[i0, ..., iR-1] = operand[j0, ..., jR-1]` where
    `i[d] = j[permutation[d]]`: operand axis `permutation[d]` is indexed by
    the result's index along axis `d`."""
    operand = np.asarray(operand)
    out_shape = tuple(int(d) for d in op.result.shape)
    i = np.indices(out_shape, sparse=True)   # () at rank 0: operand[()] is the scalar itself
    j = [None] * operand.ndim
    for d, p in enumerate(op.permutation):
        j[p] = i[d]
    return [np.array(operand[tuple(j)], copy=True)]


def _permutation_corners() -> tuple:
    """Every permutation of ranks 0..4, each solved on purpose."""
    return tuple(Corner(f"permutation {list(perm)}", (r,),
                        lambda op, perm=perm: [p == v for p, v in zip(op.permutation, perm)])
                 for r in range(0, 5) for perm in itertools.permutations(range(r)))


SPEC = OpSpec(
    mnemonic="transpose",
    operands=(Operand("operand", ANY),),
    attributes=(Attribute("permutation", I64ArrayAttr(), length=lambda op: rank(op.operand)),),
    results=(Result("result", ANY),),
    constraints=(transpose_c1, transpose_c2, transpose_c3),
    infer=infer,
    semantics=DataMovement(movement),
    exercise=Exercise(corners=_permutation_corners()),
    # v1.20: "or quantized tensor", per-axis too (C1, C4); the storage values move
    quantization=Quantization(meaning=STORAGE, per_axis=True, constraints=(transpose_c4,), example=quantized_example),
)
