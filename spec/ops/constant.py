"""constant — produce a tensor from a constant `value` (spec section "constant").

`value` is an input of the spec (I1) but not an operand of the program: it
is written as the op's attribute `value = dense<…> : tensor<…>`
(`Operand(constant=True)`), and it carries its own type, which C1 ties to
the output's.  The semantics hand the value through unchanged: bit for bit,
NaN payloads included.
"""
from ..dsl import ANY, DataMovement, OpSpec, Operand, Result, same_type


def constant_c1(op):
    """(C1) `value` and `output` have the same type."""
    return same_type(op.value, op.output)


def infer(op):
    return {"output": op.value}


def arrays(op, value):
    """The output is the constant itself."""
    return [value]


SPEC = OpSpec(
    mnemonic="constant",
    operands=(Operand("value", ANY, constant=True),),
    results=(Result("output", ANY),),
    constraints=(constant_c1,),
    infer=infer,
    semantics=DataMovement(arrays),
)
