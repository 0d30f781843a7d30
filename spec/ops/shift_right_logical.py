"""shift_right_logical — element-wise logical right shift (spec section
"shift_right_logical").

The shift acts on the bit pattern, filling with zeros: `-1 >> 1` in i8 is
127 (the seed's example).

Finding: the seed does not say what a shift by `rhs >= bit width` or by a
negative `rhs` does; declared implementation-defined (XLA: 0, all bits
shifted out — what `shift_left`'s example pins for that op; x86: amount
modulo width).
"""
from ..dsl import INTEGER, Elementwise, ImplDefined, OpSpec, Operand, Result, same_type
from .. import samples
from ..exercise import Exercise

TYPES = INTEGER  # "tensor of integer type"


def shift_right_logical_c1(op):
    """(C1) `lhs`, `rhs`, and `result` have the same type."""
    return same_type(op.lhs, op.rhs, op.result)


def infer(op):
    return {"result": op.lhs}


def shift_right_logical(et, x: int, n: int):
    pattern = et.int_to_bits(x)
    if not 0 <= n < et.bits:
        return ImplDefined(
            {"zero (all bits shifted out; XLA)": 0,
             "amount modulo width": et.wrap(pattern >> (n % et.bits))},
            why="shift amount negative or >= bit width (seed silent)")
    return et.wrap(pattern >> n)


def element(op, lhs, rhs):
    """The bit pattern of `lhs` shifted right by `rhs` bits, zero-filled."""
    return shift_right_logical(op.lhs.element_type, lhs, rhs)


SPEC = OpSpec(
    mnemonic="shift_right_logical",
    operands=(Operand("lhs", TYPES), Operand("rhs", TYPES)),
    results=(Result("result", TYPES),),
    constraints=(shift_right_logical_c1,),
    infer=infer,
    semantics=Elementwise(element),
    exercise=Exercise(integer_values=samples.shift_amounts),
)
