"""shift_right_arithmetic — element-wise arithmetic right shift (spec section
"shift_right_arithmetic").

The shift acts on the bit pattern, replicating the top (sign) bit: `-36 >> 3`
in i8 is -5 (the seed's example: rounding toward negative infinity).

Findings:
* The seed does not say what a shift by `rhs >= bit width` or by a negative
  `rhs` does; declared implementation-defined (XLA: sign fill, all bits
  shifted out; x86: amount modulo width).
* The Inputs table admits unsigned types, but "arithmetic" shift of an
  unsigned value whose top bit is set is ambiguous: replicate the top bit as
  on a signed pattern (XLA's evaluator casts to signed) or fill with zeros
  (the value has no sign).  Declared implementation-defined.
"""
from ..dsl import INTEGER, Elementwise, ImplDefined, OpSpec, Operand, Result, same_type
from .. import samples
from ..exercise import Exercise

TYPES = INTEGER  # "tensor of integer type"


def shift_right_arithmetic_c1(op):
    """(C1) `lhs`, `rhs`, and `result` have the same type."""
    return same_type(op.lhs, op.rhs, op.result)


def infer(op):
    return {"result": op.lhs}


def _shift_pattern(et, signed_value: int, n: int) -> dict:
    """Alternatives for shifting a (sign-extended) value right by n bits."""
    if 0 <= n < et.bits:
        return {"": et.wrap(signed_value >> n)}
    return {"sign fill (all bits shifted out; XLA)": et.wrap(-1 if signed_value < 0 else 0),
            "amount modulo width": et.wrap(signed_value >> (n % et.bits))}


def shift_right_arithmetic(et, x: int, n: int):
    pattern = et.int_to_bits(x)
    top_bit = pattern >> (et.bits - 1)
    signed_view = pattern - (1 << et.bits) if top_bit else pattern
    readings = {"": signed_view}
    if et.is_unsigned and top_bit:
        readings = {"replicate top bit (XLA)": signed_view, "zero fill (unsigned has no sign)": pattern}
    alternatives = {}
    for r_label, value in readings.items():
        for s_label, result in _shift_pattern(et, value, n).items():
            alternatives["; ".join(l for l in (r_label, s_label) if l)] = result
    if list(alternatives) == [""]:
        return alternatives[""]
    return ImplDefined(alternatives,
                       why="shift amount negative or >= bit width, or arithmetic shift of an unsigned "
                           "value with its top bit set (seed silent)")


def element(op, lhs, rhs):
    """The bit pattern of `lhs` shifted right by `rhs` bits, sign-filled."""
    return shift_right_arithmetic(op.lhs.element_type, lhs, rhs)


SPEC = OpSpec(
    mnemonic="shift_right_arithmetic",
    operands=(Operand("lhs", TYPES), Operand("rhs", TYPES)),
    results=(Result("result", TYPES),),
    constraints=(shift_right_arithmetic_c1,),
    infer=infer,
    semantics=Elementwise(element),
    exercise=Exercise(integer_values=samples.shift_amounts),
)
