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

v1.20's table admits per-tensor quantized tensors; this declaration takes
none yet (no `quantization`).
"""
from __future__ import annotations

from ..dsl import ANY, INTEGER, DataMovement, OpSpec, Operand, Result, all_of, rank
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
    return all(operand_size(getattr(op, name)) == rank(op.operand) for name in PADDINGS)


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


SPEC = OpSpec(
    mnemonic="dynamic_pad",
    operands=(Operand("operand", ANY), Operand("padding_value", ANY, rank=0))
    + tuple(Operand(name, INTEGER, rank=1, literal=True) for name in PADDINGS),
    results=(Result("result", ANY),),
    constraints=(dynamic_pad_c1, dynamic_pad_c2, dynamic_pad_c3, dynamic_pad_c4),
    infer=infer,
    semantics=DataMovement(movement),
    notes="v1.20 numbering (not in the seed)",
)
