"""How an op takes quantized tensors (StableHLO v1.20): one declaration per op.

The seed's Inputs tables name element types; v1.20's add "or per-tensor
quantized tensor" (26 element-wise ops: tan, the seed RFC's op, among
them), "or quantized tensor" (add, and the ops that move data), and two ops
that exist only for them (uniform_quantize, uniform_dequantize).  A
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

# v1.20, "Quantization computations": the op computed on dequantized
# operands, its result quantized into the result type.
DEQUANTIZE_OP_QUANTIZE = "dequantize_op_quantize"
# The op's own semantics reads the quantized types (uniform_quantize, uniform_dequantize).
OWN = "own"
# The op moves, copies or selects its operands' elements (data movement: slice, reshape, transpose, …):
# v1.20 applies its semantics to the quantized values themselves, so their storage values move unchanged.
STORAGE = "storage"


@dataclass(frozen=True)
class Quantization:
    """`names`: the operands and results whose Inputs/Outputs rows admit a
    quantized tensor (None: all of them).  `per_axis`: whether per-axis
    quantized tensors are admitted, or per-tensor ones only.  `meaning`:
    `DEQUANTIZE_OP_QUANTIZE` or `OWN`.  `constraints`: `<op>_c<N>`
    functions (labelled by v1.20's numbering) checked only on instances
    holding a quantized tensor."""

    names: tuple[str, ...] | None = None
    per_axis: bool | tuple[str, ...] = False   # True: wherever admitted; a tuple: those operands/results only
    meaning: str = DEQUANTIZE_OP_QUANTIZE
    constraints: tuple[Callable, ...] = ()

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
