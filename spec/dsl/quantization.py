"""How an op takes quantized tensors (StableHLO v1.20): one declaration per op.

The seed's Inputs tables name element types; v1.20's add "or per-tensor
quantized tensor" (26 element-wise ops: tan, the seed RFC's op, among
them), "or quantized tensor" (add, and the ops that move data), "or
per-tensor quantized tensors" for the ops with regions (reduce, sort, map,
scatter …), "values" (while, tuple: a quantized tensor is a value), and two
ops that exist only for them (uniform_quantize, uniform_dequantize).  A
quantized type carries numbers (scales, zero points), so it cannot be a
member of a type table: an op says instead which of its operands and
results may be quantized, whether per-axis too, and how the spec defines
the op on them.  `OpSpec.types_outside_tables` reads this declaration (the
expressed type must still be in the table), `OpSpec.violated` adds its
`constraints` (v1.20's "if the operation uses quantized tensors" clauses,
which the seed has no numbering for) on an instance that holds a quantized
tensor, and the oracle picks its rule by `meaning` (oracle/quantized.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .constraints import element_types_equal

# v1.20, "Quantization computations": the op computed on dequantized
# operands, its result quantized into the result type.
DEQUANTIZE_OP_QUANTIZE = "dequantize_op_quantize"
# The op's own semantics reads the quantized types (uniform_quantize, uniform_dequantize).
OWN = "own"
# The op moves, copies or selects its operands' elements (data movement: slice, reshape, transpose, …):
# v1.20 applies its semantics to the quantized values themselves, so their storage values move unchanged.
STORAGE = "storage"
# The op's semantics applies to the quantized values themselves and its regions compute on them (reduce,
# sort, map, scatter, …: v1.20 states no dequantize_op_quantize for them; their Inputs rows read "or
# per-tensor quantized tensor" and their regions' block arguments are of those types): elements move as
# storage values, and each region — a program on quantized tensors — runs every op in it by that op's own
# quantized rule.  So `add` as a reduce body is dequantize_op_quantize at every step, and the schedule
# (implementation-defined) decides where a step saturates.
REGIONS = "regions"


@dataclass(frozen=True)
class Quantization:
    """`names`: the operands and results whose Inputs/Outputs rows admit a
    quantized tensor (None: all of them).  `per_axis`: whether per-axis
    quantized tensors are admitted, or per-tensor ones only.  `meaning`:
    `DEQUANTIZE_OP_QUANTIZE`, `OWN`, `STORAGE` or `REGIONS`.  `constraints`: `<op>_c<N>`
    functions (labelled by v1.20's numbering, or past the seed's last label
    where the seed already holds that number: convolution) checked only on
    instances holding a quantized tensor.  `example`: for an op with
    structure (attributes, regions), `example(types) -> Instance`, one valid
    instance whose operands and results take the element types `types`
    names (by operand/result name; a default float type elsewhere) — the
    structure on which generators/quantized.py breaks each constraint alone
    and builds per-axis cases; for an op with a region, `example(types,
    body)` with `body` one of `bodies` (generators/regions.py's names), and
    `types` may name the region's element type ("body")."""

    names: tuple[str, ...] | None = None
    per_axis: bool | tuple[str, ...] = False   # True: wherever admitted; a tuple: those operands/results only
    meaning: str = DEQUANTIZE_OP_QUANTIZE
    constraints: tuple[Callable, ...] = ()
    example: Callable | None = None
    bodies: tuple[str, ...] = ()
    # whether the seed's skeletons with a quantized type in place of f32 make cases too (their values are
    # random storage values: an op whose operands need values of a kind — batch norm's positive variance —
    # takes its example's cases alone)
    skeletons: bool = True
    # labels of the op's own constraints that read its quantized types (v1.20 numbers them with the rest for
    # the ops it added: dynamic_conv's C28–C34, dynamic_reshape's C1 and C3, …): each has a quantized invalid
    # case, and spec/quantized_checks.py proves them with `constraints` where the op has an `example`
    type_clauses: tuple[str, ...] = ()

    def admits(self, name: str) -> bool:
        return self.names is None or name in self.names

    def admits_per_axis(self, name: str) -> bool:
        return self.per_axis is True or (isinstance(self.per_axis, tuple) and name in self.per_axis)


# The declaration of the 26 element-wise ops whose v1.20 rows read "tensor of
# … type or per-tensor quantized tensor" and whose semantics read
# "dequantize_op_quantize(op, operands…, type(result))".
PER_TENSOR = Quantization()


@dataclass(frozen=True)
class Quantizing:
    """Semantics of an op that exists for quantized tensors (uniform_quantize,
    uniform_dequantize): `fn(op, array)` returns the result exactly — storage
    values (a masked array: masked where the spec's `convert` is undefined)
    or values of the expressed type — computed by spec/quantized.py's
    `quantize` / `dequantize`, the spec's own functions."""

    fn: Callable


# Data movement on per-tensor quantized tensors (v1.20: "… or per-tensor quantized tensor", the op's
# element_type / type equalities reading the quantized type whole).
MOVES_PER_TENSOR = Quantization(meaning=STORAGE)


def same_except(x, y, fields: tuple[str, ...]) -> bool:
    """Whether the element types of tensors x and y are equal but for the
    quantized type's `fields` ("quantization_dimension", "scales",
    "zero_points"): v1.20's "element_type(operand) except that … may
    differ" (reshape, transpose, broadcast_in_dim C1 on per-axis operands).
    Both must be per-axis quantized (a per-tensor type has no quantization
    dimension to differ in)."""
    ex, ey = x.element_type, y.element_type
    if not (getattr(ex, "is_quantized", False) and getattr(ey, "is_quantized", False)):
        return False
    if not (ex.is_per_axis and ey.is_per_axis):
        return False
    return element_types_equal(ex, ey, ignore=fields)


def is_per_axis_tensor(t) -> bool:
    """Whether tensor t's element type is per-axis quantized."""
    et = getattr(t, "element_type", None)
    return bool(getattr(et, "is_quantized", False) and et.is_per_axis)
