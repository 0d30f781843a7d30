"""recv — read tensors from channel `channel_id` (spec section "recv").

Readings:
* `channel_handle`, `is_host_transfer`: as for send (spec/ops/send.py);
  C1 ties the flag to HOST_TO_DEVICE, else DEVICE_TO_DEVICE.
* `results`: payload first, a token last (C2, C3), as infeed's.
* The host model: each tensor result is the next tensor the host queued
  on stream "channel <channel_id>" (oracle/host.py); receives on one
  channel not ordered by tokens could read either's data: no result is
  stated there.  Device-to-device receives (the flag false) need another
  device to send: invalid cases and verifier agreement only.
"""
from __future__ import annotations

from ..dsl import ANY, OpSpec, Operand, Result, SideEffect, size
from ..types import SI32, TensorType, TokenType
from ..tokens import TOKEN, last_is_token, payload_types, results_of
from .infeed import payload_layouts
from .send import CHANNEL_HANDLE, channel_attributes, channel_cases, host_rule


def recv_c1(op):
    """(C1) `channel_type` must be

    * `HOST_TO_DEVICE`, if `is_host_transfer` = `true`,
    * `DEVICE_TO_DEVICE`, otherwise."""
    return host_rule(op, "HOST_TO_DEVICE")


def recv_c2(op):
    """(C2) size(`results`) $\\ge$ 1."""
    return size(results_of(op)) >= 1


def recv_c3(op):
    """(C3) type(`results`[-1]) $=$ `token`.

    Holds vacuously without results (C2's violation)."""
    return last_is_token(op)


def infer(op):
    return {}


def read(op, payloads, host):
    """Each tensor result is the next tensor queued on the channel."""
    return host.read(f"channel {op.channel_id}", payload_types(op))


HOST = {"channel_type": "HOST_TO_DEVICE", "is_host_transfer": True}


def cases(spec, rng, types=ANY):
    out = []
    ets = list(types)
    for k, shapes in enumerate(payload_layouts() * 2):
        et = ets[int(rng.integers(0, len(ets)))]
        payload = [TensorType(s, et) for s in shapes]
        out.append((f"{len(payload)} tensors from the host", "value",
                    spec.instance({"token": TokenType()}, {"channel_id": 1 + k % 3, **HOST},
                                  {"results": payload + [TokenType()]}), None))
    t = TensorType((2,), SI32)
    # The Outputs table allows tokens among the payload ("tensors or tokens"); StableHLO's verifier does not.
    out.append(("a token among the payload", "value", spec.instance({"token": TokenType()}, {"channel_id": 2, **HOST}, {"results": [t, TokenType(), TokenType()]}), None))
    for note, results, label in (("no results", [], "recv_c2"),
                                 ("token first", [TokenType(), t], "recv_c3"),
                                 ("no token", [t], "recv_c3")):
        out.append((note, "invalid", spec.instance({"token": TokenType()}, {"channel_id": 3, **HOST},
                                                   {"results": results}), label))
    out += channel_cases(spec, "HOST_TO_DEVICE", "recv_c1",
                         lambda a: spec.instance({"token": TokenType()}, a, {"results": [t, TokenType()]}))
    return out


SPEC = OpSpec(
    mnemonic="recv",
    operands=(Operand("token", TOKEN),),
    results=(Result("results", ANY, variadic=True),),
    constraints=(recv_c1, recv_c2, recv_c3),
    infer=infer,
    semantics=SideEffect(read, cases),
    attributes=channel_attributes(("DEVICE_TO_DEVICE", "HOST_TO_DEVICE")),
    groups=(CHANNEL_HANDLE,),
)
