"""dynamic_pad — pad whose paddings are operands (v1.20, spec.md "dynamic_pad").

"This operation is functionally identical to pad op, but with
`edge_padding_low`, `edge_padding_high`, and `interior_padding` specified
dynamically as values": pad's movement (spec/ops/pad.py: negative edges
crop, interior padding before edge padding) on the static instance whose
three padding attributes are the operands' values, and C1/C4 read as pad's
C1/C4 on that instance.  The values are known when the program is read
where constants give them (shape_operands.py): C3 and C4 are checked then;
otherwise at run time, where a value breaking them leaves the result
undefined.  Before the values are known C4 is read on types: the result
has the operand's rank (v1.20's `shape(result) = shape(operand) + …` adds
vectors of one length).

Quantized tensors (v1.20: operand, padding_value and result "or
per-tensor quantized tensor"; C1 reads the quantized type whole): the
storage values move as pad's do (`STORAGE`), the padding value's storage
value with them.
"""
from __future__ import annotations

import numpy as np

from ..dsl import ANY, INTEGER, DataMovement, OpSpec, Operand, Result, all_of, rank
from ..dsl.quantization import STORAGE, Quantization
from ..ops.pad import PADDINGS, pad_c1, pad_c4
from ..ops.pad import SPEC as PAD
from ..ops.pad import infer as pad_infer
from .shape_operands import deferred, operand_size, undefined, values


def paddings(op) -> dict | None:
    """{padding name: values} where all three are known, else None."""
    got = {name: values(op, name) for name in PADDINGS}
    return None if any(v is None for v in got.values()) else got


def static(op, pads: dict):
    """pad's instance of the same operand, padding value and result, with these paddings."""
    return PAD.instance({"operand": op.operand, "padding_value": op.padding_value}, pads, {"result": op.result})


def dynamic_pad_c1(op):
    """(C1) `element_type(operand) = element_type(padding_value) =
  element_type(result)`."""
    return pad_c1(op)


def dynamic_pad_c2(op):
    """(C2) `size(edge_padding_low) = size(edge_padding_high) =
  size(interior_padding) = rank(operand)`."""
    return all_of(operand_size(getattr(op, name)) == rank(op.operand) for name in PADDINGS)


def dynamic_pad_c3(op):
    """(C3) `0 <= interior_padding`.  On its values where they are known."""
    v = values(op, "interior_padding")
    return v is None or all_of(0 <= x for x in v)


def dynamic_pad_c4(op):
    """(C4) `shape(result) = shape(operand) + edge_padding_low +
  max(shape(operand) - 1, 0) * interior_padding + edge_padding_high`.

    pad's C4 on the static instance where the paddings are known (with
    the non-negative result dims pad's C4 states); the result's rank
    alone before."""
    pads = paddings(op)
    if pads is None:
        return rank(op.result) == rank(op.operand)
    return pad_c4(static(op, pads))


def infer(op):
    """pad's inferred result where the paddings are known; else the program states it."""
    pads = paddings(op)
    return {} if pads is None else pad_infer(static(op, pads))


def movement(op, operand, padding_value, edge_padding_low, edge_padding_high, interior_padding):
    given = {"edge_padding_low": edge_padding_low, "edge_padding_high": edge_padding_high,
             "interior_padding": interior_padding}
    broken = deferred(op, **given)
    if broken:
        return [undefined(op.result, broken)]
    pads = {k: tuple(int(x) for x in v.reshape(-1)) for k, v in given.items()}
    return PAD.semantics.fn(static(op, pads), operand, padding_value)


def _known(inst, **values_):
    """`inst` with its literal operands' values known (as the reader knows a constant's)."""
    inst.known_values = {k: np.asarray(v, dtype=np.int64) for k, v in values_.items()}
    return inst


def quantized_example(types: dict):
    """A valid dynamic_pad whose element types are `types` (by name:
    operand, padding_value, result; f32 where not given): 2x3 padded low
    [1, 0], high [0, 2], interior [1, 0] to 4x5, the paddings constants."""
    from ..types import TensorType, element_type
    f32, si64 = element_type("f32"), element_type("si64")
    pads = {"edge_padding_low": (1, 0), "edge_padding_high": (0, 2), "interior_padding": (1, 0)}
    inst = SPEC.instance({"operand": TensorType((2, 3), types.get("operand", f32)),
                          "padding_value": TensorType((), types.get("padding_value", f32)),
                          **{k: TensorType((2,), si64) for k in pads}}, {},
                         {"result": TensorType((4, 5), types.get("result", f32))})
    return _known(inst, **pads)


SPEC = OpSpec(
    mnemonic="dynamic_pad",
    operands=(Operand("operand", ANY), Operand("padding_value", ANY, rank=0))
    + tuple(Operand(name, INTEGER, rank=1, literal=True) for name in PADDINGS),
    results=(Result("result", ANY),),
    shape_from_program=("result",),   # the shape operands' values, unknown to the types, decide the dims
    constraints=(dynamic_pad_c1, dynamic_pad_c2, dynamic_pad_c3, dynamic_pad_c4),
    infer=infer,
    semantics=DataMovement(movement),
    notes="v1.20 numbering (not in the seed)",
    # v1.20: "tensor or per-tensor quantized tensor" (C1 reads the quantized type whole); the storage values move
    quantization=Quantization(meaning=STORAGE, example=quantized_example, type_clauses=("dynamic_pad_c1",)),
)
