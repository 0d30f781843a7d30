"""dynamic_gather — gather whose slice sizes are an operand (v1.20, spec.md "dynamic_gather").

"This operation is functionally identical to gather op, with the
`slice_sizes` specified dynamically as a value": gather's semantics
(spec/ops/gather.py: its reading of out-of-bounds starts — XLA's clamped
slice or any value —, of `indices_are_sorted`, of `combine`) on the static
instance whose `slice_sizes` attribute is the operand's values.  The
constraints v1.20 states alike for both ops are gather's functions read on
that instance (C1–C6, C9, C10, C13, C14 are gather's C1–C6, C9, C10, C13,
C15); C7 differs (`collapsed_slice_dims < rank(operand)` where gather
says `< size(slice_sizes)`), and C11 reads `slice_sizes`' type.

The values are known when the program is read where a constant gives
them (shape_operands.py): C8, C12 and C13 are checked then; otherwise at
run time, where a value breaking them leaves the result undefined.
Before the values are known C13 is read on types: the result's rank is
the batch dims' count plus `size(offset_dims)`, and its batch axes have
the batch sizes.

v1.20's dynamic_gather has no batching dims (its Inputs table and C1 name
none): a `#stablehlo.gather<…>` holding `operand_batching_dims` is not
one of its programs (the reader refuses the unknown field).  v1.20's table
admits per-tensor quantized tensors (operand and result; C14 reads the
quantized type whole): the storage values move as gather's do (`STORAGE`).
"""
from __future__ import annotations

import numpy as np

from ..dsl.quantization import STORAGE, Quantization
from ..dsl import (ANY, INTEGER, Attribute, BoolAttr, DataMovement, Group, I64ArrayAttr, IntAttr, OpSpec, Operand,
                   Result, And, all_of, any_of, at, in_range, rank, shape)
from ..ops.gather import SPEC as GATHER
from ..ops.gather import (batch_dim_options, dims_fit, kept, gather_c1, gather_c2, gather_c3, gather_c4, gather_c5,
                          gather_c6, gather_c9, gather_c10, gather_c13, gather_c15)
from ..ops.gather import infer as gather_infer
from .shape_operands import deferred, operand_size, undefined, values

_DN = "dimension_numbers"
FIELDS = ("offset_dims", "collapsed_slice_dims", "start_index_map", "index_vector_dim")


def static(op, slice_sizes=None):
    """gather's instance of the same operands, dimension numbers and
    result, with these slice sizes (the known values, or the operand's
    dims where none are known: the rules read on it do not read them)."""
    sizes = slice_sizes if slice_sizes is not None else values(op, "slice_sizes")
    if sizes is None:
        sizes = tuple(op.operand.shape)
    attrs = {name: getattr(op, name) for name in FIELDS}
    attrs.update(slice_sizes=tuple(sizes), indices_are_sorted=op.indices_are_sorted)
    return GATHER.instance({"operand": op.operand, "start_indices": op.start_indices}, attrs, {"result": op.result})


def dynamic_gather_c1(op):
    """(C1) `rank(operand) = size(offset_dims) + size(collapsed_slice_dims)`."""
    return gather_c1(static(op))


def dynamic_gather_c2(op):
    """(C2) `0 <= index_vector_dim <= rank(start_indices)`."""
    return gather_c2(static(op))


def dynamic_gather_c3(op):
    """(C3) `size(start_index_map) =
       index_vector_dim < rank(start_indices) ?
       dim(start_indices, index_vector_dim) : 1`."""
    return gather_c3(static(op))


def dynamic_gather_c4(op):
    """(C4) `is_unique(offset_dims) and is_sorted(offset_dims)`."""
    return gather_c4(static(op))


def dynamic_gather_c5(op):
    """(C5) `0 <= offset_dims < rank(result)`."""
    return gather_c5(static(op))


def dynamic_gather_c6(op):
    """(C6) `is_unique(collapsed_slice_dims) and is_sorted(collapsed_slice_dims)`."""
    return gather_c6(static(op))


def dynamic_gather_c7(op):
    """(C7) `0 <= collapsed_slice_dims < rank(operand)`."""
    return all_of(in_range(d, 0, rank(op.operand)) for d in op.collapsed_slice_dims)


def dynamic_gather_c8(op):
    """(C8) `slice_sizes[collapsed_slice_dims...] <= 1`.  On the values
    where they are known (a collapsed dim that indexes no size is C7's or
    C11's to reject)."""
    v = values(op, "slice_sizes")
    return v is None or all_of(at(v, d, default=0) <= 1 for d in op.collapsed_slice_dims)


def dynamic_gather_c9(op):
    """(C9) `is_unique(start_index_map)`."""
    return gather_c9(static(op))


def dynamic_gather_c10(op):
    """(C10) `0 <= start_index_map < rank(operand)`."""
    return gather_c10(static(op))


def dynamic_gather_c11(op):
    """(C11) `size(slice_sizes) = rank(operand)`."""
    return operand_size(op.slice_sizes) == rank(op.operand)


def dynamic_gather_c12(op):
    """(C12) `0 <= slice_sizes <= shape(operand)`.  On the values where they are known."""
    v = values(op, "slice_sizes")
    return v is None or dims_fit(v, op.operand)


def _batch_axes_fit(op):
    """C13 on types: the result has one axis per batch size and per offset
    dim, and its axes outside `offset_dims` have the batch sizes in order.
    Dual mode (gather's helpers): `index_vector_dim` and `offset_dims` may
    be z3 integers, as check-spec reads them.  An `index_vector_dim` outside
    0..rank(start_indices) is C2's to reject: no batch sizes to compare."""
    ivd, r = op.index_vector_dim, rank(op.result)
    n_rest, rest = kept(tuple(shape(op.result)), tuple(op.offset_dims))
    return And(0 <= ivd, ivd <= rank(op.start_indices),
               any_of(And(cond, r == len(batch) + len(op.offset_dims), n_rest == len(batch),
                          all_of(rest(k) == b for k, b in enumerate(batch)))
                      for cond, batch in batch_dim_options(op.start_indices, ivd)))


def dynamic_gather_c13(op):
    """(C13) `shape(result) = combine(batch_dim_sizes, offset_dim_sizes)` where:
  * `batch_dim_sizes = shape(start_indices)` except that the dimension size
    of `start_indices` corresponding to `index_vector_dim` is not included.
  * `offset_dim_sizes = shape(slice_sizes)` except that the dimension sizes
    in `slice_sizes` corresponding to `collapsed_slice_dims` are not included.
  * `combine` puts `batch_dim_sizes` at axes corresponding to `batch_dims` and
   `offset_dim_sizes` at axes corresponding to `offset_dims`.

    gather's C13 (its reading of `shape(slice_sizes)` as the sizes
    themselves) where the values are known; on types before."""
    if values(op, "slice_sizes") is None:
        return _batch_axes_fit(op)
    return gather_c13(static(op))


def dynamic_gather_c14(op):
    """(C14) `element_type(operand) = element_type(result)`."""
    return gather_c15(static(op))


def infer(op):
    """gather's inferred result where the slice sizes are known; else the program states it."""
    return {} if values(op, "slice_sizes") is None else gather_infer(static(op))


def arrays(op, operand, start_indices, slice_sizes):
    broken = deferred(op, slice_sizes=slice_sizes)
    if broken:
        return [undefined(op.result, broken)]
    sizes = tuple(int(x) for x in slice_sizes.reshape(-1))
    return GATHER.semantics.fn(static(op, sizes), operand, start_indices)


def _known(inst, **values_):
    """`inst` with its literal operands' values known (as the reader knows a constant's)."""
    inst.known_values = {k: np.asarray(v, dtype=np.int64) for k, v in values_.items()}
    return inst


def quantized_example(types: dict):
    """A valid dynamic_gather whose element types are `types` (by name:
    operand, result; f32 where not given): two 1x2 slices of a 4x5 operand
    (dimension 0 collapsed), start indices [2, 2] of si32 with
    index_vector_dim 1, `slice_sizes` a constant [1, 2]; starts below 3
    stay in bounds."""
    from ..types import TensorType, element_type
    f32 = element_type("f32")
    inst = SPEC.instance({"operand": TensorType((4, 5), types.get("operand", f32)),
                          "start_indices": TensorType((2, 2), element_type("si32")),
                          "slice_sizes": TensorType((2,), element_type("si64"))},
                         {"offset_dims": (1,), "collapsed_slice_dims": (0,), "start_index_map": (0, 1),
                          "index_vector_dim": 1, "indices_are_sorted": False},
                         {"result": TensorType((2, 2), types.get("result", f32))})
    return _known(inst, slice_sizes=(1, 2))


SPEC = OpSpec(
    mnemonic="dynamic_gather",
    operands=(Operand("operand", ANY), Operand("start_indices", INTEGER),
              Operand("slice_sizes", INTEGER, rank=1, literal=True)),
    attributes=(
        Attribute("offset_dims", I64ArrayAttr(), group=_DN),
        Attribute("collapsed_slice_dims", I64ArrayAttr(), group=_DN),
        Attribute("start_index_map", I64ArrayAttr(), group=_DN),
        Attribute("index_vector_dim", IntAttr(64), group=_DN),
        Attribute("indices_are_sorted", BoolAttr(), default=False),
    ),
    groups=(Group(_DN, "stablehlo.gather", FIELDS),),
    results=(Result("result", ANY),),
    shape_from_program=("result",),   # the shape operands' values, unknown to the types, decide the dims
    constraints=(dynamic_gather_c1, dynamic_gather_c2, dynamic_gather_c3, dynamic_gather_c4, dynamic_gather_c5,
                 dynamic_gather_c6, dynamic_gather_c7, dynamic_gather_c8, dynamic_gather_c9, dynamic_gather_c10,
                 dynamic_gather_c11, dynamic_gather_c12, dynamic_gather_c13, dynamic_gather_c14),
    infer=infer,
    semantics=DataMovement(arrays),
    notes="v1.20 numbering (not in the seed)",
    # v1.20: "tensor or per-tensor quantized tensor" (C14 reads the quantized type whole); the storage values move
    quantization=Quantization(meaning=STORAGE, example=quantized_example, type_clauses=("dynamic_gather_c14",)),
)
