"""outfeed — write tensors to the host's outfeed (spec section "outfeed").

Readings:
* The outfeed is one log per program run: the op appends its `inputs`, in
  order, after every side effect its `token` stands after
  (oracle/host.py keeps the log as a partial order: outfeeds no token
  orders may be logged either way round).  A case states the log it
  expects; a backend that writes other values, more, fewer or in an order
  the tokens forbid fails.
* `inputs` is a "variadic number of tensors": zero tensors is allowed (the
  op then only orders); a token among them is outside the table.
* `outfeed_config`: implementation-defined meaning; any string is valid.
* The section has no Constraints.
* v1.20: `inputs` may be quantized tensors; their storage values are
  logged unchanged (`quantization`, as send's).
"""
from __future__ import annotations

from ..dsl import ANY, Attribute, OpSpec, Operand, Result, SideEffect
from ..exercise import Exercise
from ..types import E_F32, TensorType, TokenType
from ..tokens import TOKEN
from .infeed import NOT_A_STRING, StrAttr
from .send import QUANTIZED_PAYLOAD


def infer(op):
    return {"result": TokenType()}


def write(op, payloads, host):
    """Append the inputs to the outfeed log."""
    host.write("outfeed", payloads)
    return []


def input_layouts():
    return [[(2, 3)], [(), (4,)], [], [(0, 2)]]


def cases(spec, rng, types=ANY, stream_attrs=None):
    """Value cases over input layouts and element types."""
    out = []
    ets = list(types)
    for k, shapes in enumerate(input_layouts() * 2):
        picks = [ets[int(rng.integers(0, len(ets)))] for _ in shapes]
        inputs = [TensorType(s, et) for s, et in zip(shapes, picks)]
        attrs = {"outfeed_config": "" if k < len(input_layouts()) else "cfg"}
        out.append((f"{len(inputs)} input tensors", "value",
                    spec.instance({"inputs": inputs, "token": TokenType()}, attrs, {"result": TokenType()}), None))
    return out


def outside_the_tables(spec, skels, rng):
    """`Exercise.appended_last`: the tables broken, the only rules the
    section has — a tensor for `token` (I2), a tensor result (the Outputs
    table's `token`), and `outfeed_config` a symbol reference where (I3)
    asks for a "constant of type string".  A verifier refuses each."""
    t = TensorType((2,), E_F32)
    yield "a tensor<2xf32> for token", "outfeed_inputs", None, spec.instance(
        {"inputs": [t], "token": t}, {"outfeed_config": ""}, {"result": TokenType()})
    yield "a tensor<2xf32> result", "outfeed_outputs", None, spec.instance(
        {"inputs": [t], "token": TokenType()}, {"outfeed_config": ""}, {"result": t})
    yield "outfeed_config a symbol reference (@\"my-config\")", "outfeed_inputs", None, spec.instance(
        {"inputs": [t], "token": TokenType()}, {"outfeed_config": NOT_A_STRING}, {"result": TokenType()})


SPEC = OpSpec(
    mnemonic="outfeed",
    operands=(Operand("inputs", ANY, variadic=True, count=(1, 2, 0)), Operand("token", TOKEN)),
    results=(Result("result", TOKEN),),
    constraints=(),
    infer=infer,
    semantics=SideEffect(write, cases),
    exercise=Exercise(appended_last=outside_the_tables),
    attributes=(Attribute("outfeed_config", StrAttr(), default=""),),
    quantization=QUANTIZED_PAYLOAD,
)
