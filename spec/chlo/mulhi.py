"""chlo.mulhi — the high half of the integer product, element-wise (chlo.md
"chlo.mulhi": "the most significant N bits of the upcasted (N+N-bit)
product", mulhi(x, y) = downcast((upcast(x) * upcast(y)) >> N)).

Exact integer arithmetic: upcast keeps the value (sign-extended for signed
types, zero-extended for unsigned — the type's own values), the 2N-bit
product of two N-bit values is exact, and `>> N` on it is the arithmetic
shift of the signed types (floor division by 2^N) and the logical one of
the unsigned; the result always fits N bits (|x·y| < 2^(2N-2) for signed
operands but (-2^(N-1))², whose high half 2^(N-2) fits too), so downcast
is the identity on it.  (TensorFlow emits the op; JAX does not.)

Constraints: CHLO's `CompatibleOperandsAndResultType` (lhs, rhs and result
of one type).  The table's 2-bit integers are no element type of the
spec: not declared.
"""
import numpy as np

from ..dsl import INTEGER, Elementwise, Generic, OpSpec, Operand, Result
from .common import named_constraint, infer_same, same_operand_and_result_type


def element(op, x, y):
    n = op.result.element_type.bits
    return (x * y) >> n


def _integer(x, y):
    """`element` on whole arrays: the product in int64 where it fits (N ≤ 32; numpy's >> on int64 is
    arithmetic), Python ints for 64-bit types."""
    dt = x.dtype
    n = 8 * dt.itemsize
    if n > 32:
        out = [(int(a) * int(b)) >> n for a, b in zip(x.reshape(-1).tolist(), y.reshape(-1).tolist())]
        return np.array(out, dtype=object).astype(dt).reshape(x.shape)
    return ((x.astype(np.int64) * y.astype(np.int64)) >> n).astype(dt)


SPEC = OpSpec(mnemonic="chlo.mulhi", operands=(Operand("lhs", INTEGER), Operand("rhs", INTEGER)),
              results=(Result("result", INTEGER),),
              constraints=(named_constraint(same_operand_and_result_type, "mulhi_c1"),), infer=infer_same,
              semantics=Elementwise(element, accuracy="exact", generic=Generic(None, integer=_integer)),
              notes="high N bits of the exact 2N-bit product")
