"""after_all — a token that stands after the tokens `inputs` (spec section "after_all").

Tokens.  A value of type `!stablehlo.token` (spec.types.TokenType) carries
no data: it stands for "the side effects of the ops that produced it have
happened".  The seed's Execution section and this section say no more
than: an op that depends on `result` executes after the ops producing
`inputs`.  So side effects not ordered by tokens (two outfeeds taking the
same token) may happen in either order: the oracle states the outfeed log
as a partial order (oracle/host.py: each entry names the entries it must
follow), never as the one order it happened to run them in.

The section has no Constraints; the Inputs table ("variadic number of
`token`") is the only rule: a tensor among `inputs` is outside the table,
and an input count of zero is allowed (the usual way to make a first
token, as JAX does).

`spec.dsl.SideEffect` is the semantics kind of the five token ops
(after_all, infeed, outfeed, send, recv): the spec states what each op
reads from or writes to the host (`fn`), the oracle (oracle/host.py) holds
the queues, the log and the tokens.
"""
from __future__ import annotations

from ..dsl import OpSpec, Operand, Result, SideEffect
from ..exercise import Exercise
from ..tokens import TOKEN
from ..types import E_F32, TensorType, TokenType

def infer(op):
    return {"result": TokenType()}


def nothing(op, payloads, host):
    """after_all does nothing: "it only exists to establish data dependencies"."""
    return []


def cases(spec, rng):
    """Joins of 0, 1 and 3 tokens."""
    out = []
    for n in (0, 1, 3):
        inst = spec.instance({"inputs": [TokenType()] * n}, {}, {"result": TokenType()})
        out.append((f"after_all of {n} tokens", "value", inst, None))
    return out


def outside_the_tables(spec, skels, rng):
    """`Exercise.appended_last`: the only rules, the tables, broken — a
    tensor among `inputs` (I1: "variadic number of `token`") and a tensor
    result (the Outputs table's `token`).  No constraint names either; a
    verifier refuses both, and an implementation that takes one has read a
    tensor as a token."""
    t = TensorType((2,), E_F32)
    yield "a tensor<2xf32> among inputs", "after_all_inputs", None, spec.instance(
        {"inputs": [TokenType(), t]}, {}, {"result": TokenType()})
    yield "a tensor<2xf32> result", "after_all_outputs", None, spec.instance(
        {"inputs": [TokenType()]}, {}, {"result": t})


SPEC = OpSpec(
    mnemonic="after_all",
    operands=(Operand("inputs", TOKEN, variadic=True, count=(2, 0, 1)),),
    results=(Result("result", TOKEN),),
    constraints=(),
    infer=infer,
    semantics=SideEffect(nothing, cases),
    exercise=Exercise(appended_last=outside_the_tables),
)
