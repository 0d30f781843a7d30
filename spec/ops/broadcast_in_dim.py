"""broadcast_in_dim — expand the dimensions and/or rank of `operand` by
duplicating its data (spec section "broadcast_in_dim").

The program states the result's shape (`shape_from_program`): the
constraints relate it to the operand without fixing it (a dim of size 1
broadcasts to any size), so `infer` has nothing to say about it.

Where a constraint speaks of an entry of `broadcast_dimensions` that is out
of range (C3 broken) or missing (C2 broken), the others read it as not
applicable, so a program is blamed on the one constraint it breaks.
"""
import numpy as np

from ..dsl import (ANY, And, Attribute, DataMovement, I64ArrayAttr, Implies, OpSpec, Operand, Or, Result, all_of, any_of, at, dim,
                   in_range, is_unique, rank, same_element_type, shape, size)
from ..dsl.quantization import STORAGE, Quantization, is_per_axis_tensor, same_except
from ..quantized import quantized_type
from ..symbolic import Skeleton
from ..types import TensorType
from ..exercise import Corner, Exercise


def broadcast_in_dim_c1(op):
    """(C1) `operand` and `result` have the same element type.

    v1.20 (C1): `element_type(operand)` if `!is_per_axis_quantized(operand)`, else the same except
    that `quantization_dimension`, `scales` and `zero_points` may differ from the result's."""
    if is_per_axis_tensor(op.operand):
        return same_except(op.operand, op.result, ("quantization_dimension", "scales", "zero_points"))
    return same_element_type(op.operand, op.result)


def broadcast_in_dim_c2(op):
    """(C2) size(`broadcast_dimensions`) $=$ rank(`operand`)."""
    return size(op.broadcast_dimensions) == rank(op.operand)


def broadcast_in_dim_c3(op):
    """(C3) $0 \\le$ `broadcast_dimensions[i]` $\\lt$ rank(`result`) for all
       dimensions i in `operand`."""
    return all_of(in_range(b, 0, rank(op.result)) for b in op.broadcast_dimensions[:rank(op.operand)])


def broadcast_in_dim_c4(op):
    """(C4) All dimensions in `broadcast_dimensions` are unique."""
    return is_unique(op.broadcast_dimensions)


def broadcast_in_dim_c5(op):
    """(C5) For all dimensions `j` in `operand`:
  * `dim(operand, j) = 1` or
  * `dim(operand, j) = dim(result, i)` where `i = broadcast_dimensions[j]`.

    `i` out of range of the result (C3's business) names no dim: the second
    branch is then read as holding."""
    bd = op.broadcast_dimensions
    return all_of(Or(dim(op.operand, j) == 1,
                     dim(op.operand, j) == at(shape(op.result), bd[j], default=dim(op.operand, j)))
                  for j in range(min(rank(op.operand), size(bd))))


def broadcast_in_dim_c6(op):
    """(v1.20 C6) If `is_per_axis_quantized(result)`: `quantization_dimension(result) =
    broadcast_dimensions[quantization_dimension(operand)]`, and if `dim(operand,
    quantization_dimension(operand)) = 1`, every scale and zero point of the result is the operand's
    one (`scales(result)[i] = scales(operand)[0] and zero_points(result)[i] = zero_points(operand)[0]`
    for i in range(dim(result, quantization_dimension(result))))."""
    if not (is_per_axis_tensor(op.result) and is_per_axis_tensor(op.operand)):
        return True
    qo, qr = op.operand.element_type, op.result.element_type
    bd = tuple(op.broadcast_dimensions)
    d = qo.quantization_dimension   # dual mode: may be a z3 integer (spec/quantized_checks.py)
    one = all_of([a == qo.scales[0] for a in qr.scales] + [z == qo.zero_points[0] for z in qr.zero_points])
    return And(in_range(d, 0, len(bd)), qr.quantization_dimension == at(bd, d, default=-1),
               Implies(at(tuple(op.operand.shape), d, default=0) == 1, one))


def quantized_example(types: dict):
    """A valid broadcast_in_dim of a 3×1 operand along [0, 2] into 3×2×4 (of
    the element types `types` names; f32 where not named): a per-axis
    operand along 0 stays along 0; a result along another axis breaks C6."""
    from ..types import E_F32
    return SPEC.instance({"operand": TensorType((3, 1), types.get("operand", E_F32))}, {"broadcast_dimensions": (0, 2)},
                         {"result": TensorType((3, 2, 4), types.get("result", E_F32))})


def infer(op):
    """The result's shape comes from the program; nothing is inferred."""
    return {}


def movement(op, operand):
    """`result[i0, ..., iR-1] = operand[j0, ..., jR'-1]` with
    `jk = dim(operand, k) == 1 ? 0 : i[broadcast_dimensions[k]]`, as index
    arrays (`i[d]` varies along result axis d), so the copy is of bytes."""
    operand = np.asarray(operand)
    out_shape = tuple(int(d) for d in op.result.shape)
    i = np.indices(out_shape, sparse=True) if out_shape else ()
    j = tuple(np.zeros((1,) * len(out_shape), np.intp) if operand.shape[k] == 1 else i[b]
              for k, b in enumerate(op.broadcast_dimensions))
    return [np.broadcast_to(np.asarray(operand[j]), out_shape).copy()]


def size_one_axis_zero_point(spec, skels, rng):
    """A per-axis operand of one slice along its quantization dimension,
    broadcast to three slices of which one has a zero point above the
    operand's: C6 asks every zero point of the result to equal the operand's
    one (`zero_points(result)[i] = zero_points(operand)[0]`), so only C6
    breaks (a reading of "=" as ">=" would admit it)."""
    operand = TensorType((1, 2), quantized_type("i8", "f32", (0.25,), (-3,), 0))
    result = TensorType((3, 2), quantized_type("i8", "f32", (0.25,) * 3, (-3, -2, -3), 0))
    yield ("size-1 quantization dimension broadcast, one result zero point above the operand's",
           "broadcast_in_dim_c6", Skeleton(spec.mnemonic, (operand.element_type,)),
           spec.instance({"operand": operand}, {"broadcast_dimensions": (0, 1)}, {"result": result}))


CORNERS = (
    Corner("size-1 dimensions expanded", (2,),
           lambda op: [op.operand.shape[0] == 1, any_of(d >= 2 for d in op.result.shape)],
           layout={"result_ranks": {"result": 3}}),
    Corner("scalar to rank 4", (0,), lambda op: [], layout={"result_ranks": {"result": 4}}),
)


SPEC = OpSpec(
    mnemonic="broadcast_in_dim",
    operands=(Operand("operand", ANY),),
    attributes=(Attribute("broadcast_dimensions", I64ArrayAttr(), length=lambda op: rank(op.operand)),),
    results=(Result("result", ANY,
                    rank=lambda op: tuple(r for r in range(rank(op.operand), rank(op.operand) + 3)
                                          if r <= max(4, rank(op.operand)))),),
    constraints=(broadcast_in_dim_c1, broadcast_in_dim_c2, broadcast_in_dim_c3, broadcast_in_dim_c4,
                 broadcast_in_dim_c5),
    infer=infer,
    semantics=DataMovement(movement),
    shape_from_program=("result",),
    exercise=Exercise(corners=CORNERS, appended_last=size_one_axis_zero_point),
    # v1.20: "or quantized tensor", per-axis too (C1, C6); the storage values move (a size-1 quantization
    # dimension broadcast takes its one scale to every slice)
    quantization=Quantization(meaning=STORAGE, per_axis=True, constraints=(broadcast_in_dim_c6,),
                              example=quantized_example),
)
