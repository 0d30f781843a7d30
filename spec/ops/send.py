"""send — write tensors to channel `channel_id` (spec section "send").

Readings:
* `channel_id` (I3) and `channel_type` (I4) are written together as one
  attribute, `channel_handle = #stablehlo.channel_handle<handle = 5,
  type = 2>` (the seed's example, which states the two inputs in comments);
  `type` numbers the enum: 1 DEVICE_TO_DEVICE, 2 DEVICE_TO_HOST,
  3 HOST_TO_DEVICE (0 is the pinned StableHLO's "invalid" type, outside
  both ops' tables).  `ChannelHandle` reads and writes that spelling.
* `is_host_transfer` (I5): the pinned StableHLO leaves it out when false;
  a program without it reads as false.
* C1 ties the flag to the type: DEVICE_TO_HOST with the flag, else
  DEVICE_TO_DEVICE.  So HOST_TO_DEVICE (allowed by no row of send's I4)
  and the invalid type 0 break C1 too.
* The host model: a send appends its `inputs` to the log of stream
  "channel <channel_id>" (oracle/host.py), ordered by its token as an
  outfeed is.  What "transfers data to another device" means is
  implementation-defined (the flag false): with one process there is no
  other device, so only host transfers get value cases; device-to-device
  sends appear in invalid cases and verifier agreement.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..dsl import ANY, Attribute, BoolAttr, Group, IntAttr, OpSpec, Operand, Result, SideEffect
from ..types import TensorType, TokenType
from ..tokens import TOKEN

CHANNEL_TYPES = {0: "CHANNEL_TYPE_INVALID", 1: "DEVICE_TO_DEVICE", 2: "DEVICE_TO_HOST", 3: "HOST_TO_DEVICE"}


@dataclass(frozen=True)
class ChannelTypeKind:
    """`channel_type`: an enum, written as its number inside the channel handle."""

    values: tuple = tuple(CHANNEL_TYPES.values())

    def to_group(self, v) -> str:
        return str(next(k for k, name in CHANNEL_TYPES.items() if name == v))

    def from_mlir(self, text: str) -> str:
        n = int(text.strip())
        if n not in CHANNEL_TYPES:
            raise ValueError(f"channel type {n} is not one of {sorted(CHANNEL_TYPES)}")
        return CHANNEL_TYPES[n]


@dataclass(frozen=True)
class ChannelHandle(Group):
    """`#stablehlo.channel_handle<handle = ID, type = T>`: the spec's
    `channel_id` and `channel_type` under the names the attribute uses."""

    NAMES = (("handle", "channel_id"), ("type", "channel_type"))

    def to_mlir(self, values: dict, kinds: dict) -> str:
        parts = [f"{mlir} = {kinds[ours].to_group(values[ours])}" for mlir, ours in self.NAMES]
        return f"#{self.dialect_attr}<{', '.join(parts)}>"

    def from_mlir(self, text: str, kinds: dict) -> dict:
        renamed = text
        for mlir, ours in self.NAMES:
            renamed = renamed.replace(f"{mlir} =", f"{ours} =")
        out = Group.from_mlir(self, renamed, kinds)
        missing = [ours for _, ours in self.NAMES if ours not in out]
        if missing:
            raise ValueError(f"no {missing[0]} in {text!r}")
        return out


CHANNEL_HANDLE = ChannelHandle("channel_handle", "stablehlo.channel_handle", ("channel_id", "channel_type"))


def channel_attributes(types: tuple):
    """channel_id, channel_type and is_host_transfer, as send and recv declare them."""
    return (Attribute("channel_id", IntAttr(64), group="channel_handle"),
            Attribute("channel_type", ChannelTypeKind(), choices=types, group="channel_handle"),
            Attribute("is_host_transfer", BoolAttr(), default=False))


def host_rule(op, host_type: str):
    """`channel_type` = `host_type` if `is_host_transfer`, else DEVICE_TO_DEVICE."""
    flag = bool(op.is_host_transfer)
    return op.channel_type == (host_type if flag else "DEVICE_TO_DEVICE")


def send_c1(op):
    """(C1) `channel_type` must be:

    * `DEVICE_TO_HOST`, if `is_host_transfer` = `true`,
    * `DEVICE_TO_DEVICE`, otherwise."""
    return host_rule(op, "DEVICE_TO_HOST")


def infer(op):
    return {"result": TokenType()}


def write(op, payloads, host):
    """Append the inputs to channel `channel_id`'s log."""
    host.write(f"channel {op.channel_id}", payloads)
    return []


def channel_cases(spec, host_type: str, label: str, make):
    """Invalid cases of C1: every (type, flag) pair that breaks it."""
    out = []
    for ct in CHANNEL_TYPES.values():
        for flag in (False, True):
            ok = ct == (host_type if flag else "DEVICE_TO_DEVICE")
            if not ok:
                out.append((f"channel_type {ct} with is_host_transfer={str(flag).lower()}", "invalid",
                            make({"channel_id": 3, "channel_type": ct, "is_host_transfer": flag}), label))
    return out


def cases(spec, rng, types=ANY):
    out = []
    ets = list(types)
    for k, shapes in enumerate([[(2, 3)], [(), (4,)], [], [(0, 2)]] * 2):
        inputs = [TensorType(s, ets[int(rng.integers(0, len(ets)))]) for s in shapes]
        attrs = {"channel_id": 1 + k % 3, "channel_type": "DEVICE_TO_HOST", "is_host_transfer": True}
        out.append((f"{len(inputs)} tensors to the host", "value",
                    spec.instance({"inputs": inputs, "token": TokenType()}, attrs, {"result": TokenType()}), None))
    t = [TensorType((2,), ets[0])]
    out += channel_cases(spec, "DEVICE_TO_HOST", "send_c1",
                         lambda a: spec.instance({"inputs": t, "token": TokenType()}, a, {"result": TokenType()}))
    return out


SPEC = OpSpec(
    mnemonic="send",
    operands=(Operand("inputs", ANY, variadic=True, count=(1, 2, 0)), Operand("token", TOKEN)),
    results=(Result("result", TOKEN),),
    constraints=(send_c1,),
    infer=infer,
    semantics=SideEffect(write, cases),
    attributes=channel_attributes(("DEVICE_TO_DEVICE", "DEVICE_TO_HOST")),
    groups=(CHANNEL_HANDLE,),
)
