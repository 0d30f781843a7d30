"""shift_left — element-wise left shift (spec section "shift_left").

The shift acts on the bit pattern of the type's width: bits shifted past the
top are lost, so `7 << 7` in i8 is -128 — the seed's own example says so.

Findings: the seed's text does not say what a shift by `rhs >= bit width`
or by a negative `rhs` does.  Its example pins one case, `7 << 8` in i8 = 0
("all bits shifted out", as XLA does), which rules out the x86 reading
"amount modulo width" for amounts >= width; we encode that.  Negative
amounts stay implementation-defined.
"""
from ..dsl import INTEGER, Elementwise, ImplDefined, OpSpec, Operand, Result, same_type
from .. import samples
from ..exercise import Exercise

TYPES = INTEGER  # "tensor of integer type"


def shift_left_c1(op):
    """(C1) `lhs`, `rhs`, and `result` have the same type."""
    return same_type(op.lhs, op.rhs, op.result)


def infer(op):
    return {"result": op.lhs}


def shift_left(et, x: int, n: int):
    if n < 0:
        return ImplDefined(
            {"zero (amount read as unsigned, >= width; XLA)": 0,
             "amount modulo width": et.wrap(x << (n % et.bits))},
            why="shift by a negative amount (seed silent)")
    if n >= et.bits:
        return 0
    return et.wrap(x << n)


def element(op, lhs, rhs):
    """`lhs` shifted left by `rhs` bits in the type's width."""
    return shift_left(op.lhs.element_type, lhs, rhs)


SPEC = OpSpec(
    mnemonic="shift_left",
    operands=(Operand("lhs", TYPES), Operand("rhs", TYPES)),
    results=(Result("result", TYPES),),
    constraints=(shift_left_c1,),
    infer=infer,
    semantics=Elementwise(element),
    exercise=Exercise(integer_values=samples.shift_amounts),
)
