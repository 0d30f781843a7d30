"""What v1.20's dynamic ops share: their shape operands' values, and when a rule that reads them is checked.

dynamic_iota, dynamic_reshape, dynamic_broadcast_in_dim, dynamic_pad,
dynamic_gather and dynamic_conv are, in v1.20's words, "functionally
identical" to iota, reshape, broadcast_in_dim, pad, gather and convolution,
with a shape, padding or slice sizes given as an operand instead of an
attribute.  Each module here declares its op's Inputs, Outputs and `(C#)`
by v1.20's numbering and runs the static op's own semantics (spec/ops/) on
the static instance the operand values make — no index formula is written
twice.

An operand value is known at two moments, and spec.md "Dynamism" says what
each means ("Constraints will be verified statically if possible,
otherwise they are deferred to runtime and mismatches will result in
undefined behavior"):

* when the program is read, where a `stablehlo.constant` of the op's block
  defines the operand (the program reader puts its value in the
  instance's `known_values`: oracle/functions.py, for operands declared
  `literal`).  A constraint that reads the values is then checked like any
  other, and a program that breaks it is rejected — as XLA and the
  reference interpreter reject it ("output shape [3, 5] is incompatible
  with return type of operation 'tensor<4x5xi64>'");
* when the op runs, always.  A constraint the values break only then makes
  the run undefined: every element of the result is any value
  (`undefined`), the oracle's reading of "undefined behavior" elsewhere
  (gather with unsorted `indices_are_sorted`).

Where no value is known (a shape computed from `get_dimension_size`, read
before it runs), the rules that read values hold, and those that read types
(`size(output_shape) = rank(result)`) are checked as written.

The oracle reads static types only (a `?` dimension is refined first:
shlo_conform/refine.py), so a result's shape is always stated: the value of
an output-shape operand must equal it ("Shape mismatches for ops that take
their output shape as an operand": `shape_operand_matches`).
"""
from __future__ import annotations

import numpy as np

from ..dsl import ANY_VALUE, Choices, Instance
from ..types import TensorType

UNDEFINED = "any value: undefined behaviour (a shape operand's run-time value breaks {})"
UNDEFINED_WHY = ('spec.md "Dynamism": "Constraints will be verified statically if possible, otherwise they are '
                 'deferred to runtime and mismatches will result in undefined behavior."')


def values(op, name: str) -> tuple[int, ...] | None:
    """Operand `name`'s values in row-major order where they are known
    (module docstring), else None."""
    known = vars(op).get("known_values") or {}
    v = known.get(name)
    return None if v is None else tuple(int(x) for x in np.asarray(v).reshape(-1))


def matrix(op, name: str) -> tuple[tuple[int, ...], ...] | None:
    """A 2-D operand's known values as rows (dynamic_conv's `padding`), else None."""
    known = vars(op).get("known_values") or {}
    v = known.get(name)
    if v is None:
        return None
    a = np.asarray(v)
    return tuple(tuple(int(x) for x in row) for row in a.reshape(a.shape[0], -1)) if a.ndim == 2 else None


def with_values(op, **arrays) -> Instance:
    """The same instance with these operands' values known (as the op runs)."""
    inst = op.spec.instance(op.operands, op.attributes, op.results, op.regions, op.grid)
    known = dict(vars(op).get("known_values") or {})
    known.update({k: np.asarray(v) for k, v in arrays.items()})
    inst.known_values = known
    return inst


def deferred(op, **arrays) -> list[str]:
    """The op's constraints the run-time values of these operands break
    (those checked when the program was read held there)."""
    return op.spec.violated(with_values(op, **arrays))


def undefined(t: TensorType, broken: list[str]) -> Choices:
    """A result of type `t` whose every element is any value: the run the
    spec leaves undefined (module docstring).  The primary (zeros) is a
    placeholder no judge compares: every element offers ANY_VALUE."""
    primary = np.zeros(tuple(int(d) for d in t.shape), dtype=t.element_type.numpy)
    return any_value(primary, UNDEFINED.format(", ".join(broken)), UNDEFINED_WHY)


def any_value(primary: np.ndarray, label: str, why: str) -> Choices:
    """Every element of `primary` any value, under one label."""
    n = np.asarray(primary).size
    return Choices(primary, {i: [ANY_VALUE] for i in range(n)}, {i: [label] for i in range(n)}, why)


def shape_operand_matches(op, name: str, result: TensorType) -> bool:
    """spec.md "Dynamism", "Shape mismatches for ops that take their output
    shape as an operand": "The values in the shape operand at runtime must
    match the shape of the result, otherwise the behavior is undefined. …
    If the shape operand is constant, this can be verified statically."
    Holds where the values are not known (a size mismatch is the op's
    numbered rule on types: `size(output_shape) = rank(result)`)."""
    v = values(op, name)
    return v is None or len(v) != len(result.shape) or v == tuple(int(d) for d in result.shape)


def operand_size(t: TensorType):
    """`size(x)` of a 1-dimensional tensor operand: its one dimension (the
    type says it even where the values are not known); -1 for another
    rank, which no size equals (the table's rank rule rejects it first)."""
    return t.shape[0] if len(t.shape) == 1 else -1
