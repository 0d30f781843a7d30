"""infeed — read tensors from the host's infeed (spec section "infeed").

Readings:
* `results` are "payload values which come first and a token which comes
  last" (C2).  The seed's Outputs table allowed tokens among the payload
  ("variadic number of tensors or tokens"); v1.20's C2 (`infeed_c3`) does
  not — below.
* The infeed is one queue per program run, filled by the host: each
  payload tensor is the next tensor of the queue, in order (oracle/host.py).
  The seed does not say how a host groups data (XLA moves one tuple
  literal per infeed op); tensor by tensor is the order every grouping
  agrees on.  An infeed not ordered by tokens after an earlier one could
  read either's data: the oracle states no result there.
* `infeed_config` (I2, "constant of type string"): its meaning is
  implementation-defined; it is read and written as an MLIR string, and
  any value is valid.  The pinned StableHLO also has an optional `layout`
  attribute the seed does not list: a program holding it is refused by the
  oracle as an unknown attribute (docs/spec-findings.md).
* An infeed whose queue is empty would wait for the host forever: the
  oracle states no result (a case always supplies enough data).

v1.20 (StableHLO 1.20.0) numbers three clauses: C1 (the seed's C1), C3
(the seed's C2) and a new C2, "`is_empty(result[:-1])` or
`is_tensor(type(results[:-1]))`": every result but the last is a tensor
(read member by member; `result` a slip for `results`).  `infeed_c3`
states it (the label continues past the seed's C2) and it is enforced:
v1.20 is the spec the suite encodes, and its Outputs row ("tensors,
quantized tensors or tokens") lists the kinds the results hold, which C2
places — so the seed's value case "a token among the payload" became
C2's invalid case, as StableHLO's verifier always read it, and the seed's
C2 case "token first" (which now breaks both clauses) became "a tensor
last" (docs/spec-findings.md, "infeed").
`results` may be quantized tensors (v1.20's Outputs row): read as their
storage values.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..dsl import ANY, Attribute, OpSpec, Operand, Result, SideEffect, Spelled, all_of, size
from ..exercise import Exercise
from ..types import SI32, TensorType, TokenType
from .send import QUANTIZED_PAYLOAD
from ..tokens import TOKEN, last_is_token, payload_types, results_of


@dataclass(frozen=True)
class StrAttr:
    """A "constant of type string", written as an MLIR string literal."""

    def to_mlir(self, v) -> str:
        return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'

    def from_mlir(self, text: str) -> str:
        t = text.strip()
        if not (len(t) >= 2 and t[0] == '"' and t[-1] == '"'):
            raise ValueError(f"expected a string literal, got {text!r}")
        return t[1:-1].replace('\\"', '"').replace("\\\\", "\\")


def infeed_c1(op):
    """(C1) size(`results`) $\\ge$ 1."""
    return size(results_of(op)) >= 1


def infeed_c2(op):
    """(C2) type(`results`[-1]) $=$ `token`.

    Holds vacuously without results (C1's violation)."""
    return last_is_token(op)


def infeed_c3(op):
    """(v1.20 C2) `is_empty(result[:-1])` or `is_tensor(type(results[:-1]))`.

    Every payload result (all but the last) is a tensor — a quantized
    tensor is one; a token among them breaks it."""
    results = results_of(op)
    return all_of(isinstance(t, TensorType) for t in list(results)[:-1])


def infer(op):
    """The results are the program's: only C1 and C2 tie them down."""
    return {}


def read(op, payloads, host):
    """Each tensor result is the next tensor of the infeed queue."""
    return host.read("infeed", payload_types(op))


def payload_layouts():
    """Result lists of generated cases: one, two and no payload tensors
    (element types vary per case; shapes are small)."""
    return [[(2, 3)], [(), (4,)], []]


def cases(spec, rng, types=ANY):
    """Value cases over payload layouts and element types; invalid ones for
    C1 (no results), C2 (a tensor last, or no token) and v1.20's C2
    (`infeed_c3`: a token among the payload)."""
    out = []
    ets = list(types)
    for k, shapes in enumerate(payload_layouts() * 2):
        et = ets[int(rng.integers(0, len(ets)))]
        payload = [TensorType(s, et) for s in shapes]
        out.append((f"{len(payload)} payload tensors", "value",
                    spec.instance({"token": TokenType()}, {"infeed_config": "" if k % 2 == 0 else "cfg"},
                                  {"results": payload + [TokenType()]}), None))
    t = TensorType((2,), SI32)
    out.append(("a token among the payload", "invalid", spec.instance({"token": TokenType()}, {"infeed_config": ""},
                                                                       {"results": [t, TokenType(), TokenType()]}),
                "infeed_c3"))
    for note, results, label in (("no results", [], "infeed_c1"),
                                 ("a tensor last", [t, t], "infeed_c2"),
                                 ("no token", [t], "infeed_c2")):
        out.append((note, "invalid", spec.instance({"token": TokenType()}, {"infeed_config": ""},
                                                   {"results": results}), label))
    return out


# A symbol reference whose name MLIR quotes (a hyphen is outside its bare identifiers): its text ends in
# a quote, as a string literal's does, and starts with '@'.
NOT_A_STRING = Spelled('@"my-config"')


def config_of_another_kind(spec, skels, rng):
    """`Exercise.appended_last`: `infeed_config` a symbol reference where
    the Inputs table asks for a "constant of type string" (no constraint
    names it; a verifier refuses it).  Its text ends in a quote, so a
    reader that looks at one end of the text alone takes it for a string."""
    yield "infeed_config a symbol reference (@\"my-config\")", "infeed_inputs", None, spec.instance(
        {"token": TokenType()}, {"infeed_config": NOT_A_STRING}, {"results": [TensorType((2,), SI32), TokenType()]})


SPEC = OpSpec(
    mnemonic="infeed",
    operands=(Operand("token", TOKEN),),
    results=(Result("results", ANY, variadic=True),),
    constraints=(infeed_c1, infeed_c2, infeed_c3),
    later=(("infeed_c3", "v1.20 C2"),),
    infer=infer,
    semantics=SideEffect(read, cases),
    exercise=Exercise(appended_last=config_of_another_kind),
    attributes=(Attribute("infeed_config", StrAttr(), default=""),),
    quantization=QUANTIZED_PAYLOAD,
)
