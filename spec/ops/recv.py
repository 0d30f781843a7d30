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

v1.20 (as for send, spec/ops/send.py): `source_target_pairs` (I5) with its
clauses C1–C4, here `recv_c4` … `recv_c7` (the seed's labels run to C3,
which keep their meaning: v1.20's C5 is the seed's C1 as the seed reads it
— v1.20 writes DEVICE_TO_HOST, spec/v1_20_map.py says why we keep
HOST_TO_DEVICE — and the seed's C2/C3 have no v1.20 clause left but keep
the Semantics' rule).  `results` may be quantized tensors (v1.20's Outputs
row): they are read as their storage values.
"""
from __future__ import annotations

import numpy as np

from ..dsl import ANY, OpSpec, Operand, Result, SideEffect, size
from ..types import SI32, TensorType, TokenType
from ..tokens import TOKEN, last_is_token, payload_types, results_of
from .infeed import payload_layouts
from ..grid import Grid
from . import send
from .send import (CHANNEL_HANDLE, QUANTIZED_PAYLOAD, SOURCE_TARGET_PAIRS, channel_attributes, channel_cases, host_rule,
                   pairs_cases, pairs_rule, source_of)


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


def recv_c4(op):
    """(v1.20 C1) `dim(source_target_pairs, 1) = 2`."""
    return pairs_rule(1, op)


def recv_c5(op):
    """(v1.20 C2) `is_unique(source_target_pairs[:, 0])`."""
    return pairs_rule(2, op)


def recv_c6(op):
    """(v1.20 C3) `is_unique(source_target_pairs[:, 1])`."""
    return pairs_rule(3, op)


def recv_c7(op):
    """(v1.20 C4) `0 <= source_target_pairs < N`, where `N` is defined as:
    `num_replicas` if `cross_replica` is used, `num_partitions` if
    `cross_partition` is used (read as collective_permute's: channel_id > 0
    is cross_partition)."""
    return pairs_rule(4, op)


LATER = (("recv_c4", "v1.20 C1"), ("recv_c5", "v1.20 C2"), ("recv_c6", "v1.20 C3"), ("recv_c7", "v1.20 C4"))


def infer(op):
    return {}


def read(op, payloads, host):
    """A host transfer: each tensor result is the next tensor queued on the
    channel.  A device transfer: the inputs of the send on the same channel
    run by the process the pairs name as this one's source (send.py
    `transfer`: the two meet).  None or empty pairs are undefined behaviour
    (v1.20), a process no pair names as a target has nothing arriving, and a
    payload of other types than the results is not what the recv reads: no
    result is stated there."""
    if op.is_host_transfer:
        return host.read(f"channel {op.channel_id}", payload_types(op))
    if not op.source_target_pairs:
        host.unstated("is_host_transfer = false with no source_target_pairs: undefined behaviour (v1.20)")
    _grid, me = host.where()
    src = source_of(op, me)
    if src is None:
        host.unstated(f"process {me} is no pair's target: nothing arrives")
    types = payload_types(op)
    got = host.transfer(op.channel_id, src, me, [np.zeros(t.shape, t.element_type.numpy) for t in types])
    if len(got) != len(types) or any(a.shape != tuple(t.shape) or a.dtype != np.dtype(t.element_type.numpy)
                                     for a, t in zip(got, types)):
        host.unstated(f"the payload {src} sent on channel {op.channel_id} is not of the types received")
    return got


# v1.20's device transfers, exercised on a process grid by generators/host_pairs.py: one program per entry
# holding a send and a recv on one channel with one pairs list, (note, grid, channel_id, pairs, shape).  Each
# pairs list is one cycle through partition 0, so that partition 0 sending first and every other partition
# receiving first completes whether or not a send waits for its recv (host_pairs' docstring).  Channels are
# positive (v1.20 "Point-to-point communication": "a positive id"): the pairs are partition ids.
DEVICE_TRANSFERS = (
    ("a forward cycle over three partitions", Grid(1, 3), 5, ((0, 1), (1, 2), (2, 0)), (2, 3)),
    ("a backward cycle over three partitions", Grid(1, 3), 5, ((0, 2), (1, 0), (2, 1)), (2, 3)),
    ("a swap of two partitions in each of two replicas", Grid(2, 2), 7, ((0, 1), (1, 0)), (4,)),
    ("a cycle over four partitions in another order", Grid(1, 4), 2, ((0, 3), (3, 1), (1, 2), (2, 0)), (3,)),
    ("a swap of two partitions", Grid(1, 2), 1, ((0, 1), (1, 0)), (2, 2)),
)


def device_transfer(t, grid, channel: int, pairs) -> tuple:
    """The send (of one tensor of type `t`) and the recv (of one) of a device transfer on `channel`."""
    attrs = {"channel_id": channel, "channel_type": "DEVICE_TO_DEVICE", "is_host_transfer": False,
             "source_target_pairs": pairs}
    return (send.SPEC.instance({"inputs": [t], "token": TokenType()}, attrs, {"result": TokenType()}, grid=grid),
            SPEC.instance({"token": TokenType()}, attrs, {"results": [t, TokenType()]}, grid=grid))


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
    # v1.20's source_target_pairs clauses: last, drawing nothing, so every earlier case keeps its bytes
    out += pairs_cases(lambda a, g: spec.instance({"token": TokenType()}, a, {"results": [t, TokenType()]}, grid=g),
                       4, "recv")
    return out


SPEC = OpSpec(
    mnemonic="recv",
    operands=(Operand("token", TOKEN),),
    results=(Result("results", ANY, variadic=True),),
    constraints=(recv_c1, recv_c2, recv_c3, recv_c4, recv_c5, recv_c6, recv_c7),
    infer=infer,
    semantics=SideEffect(read, cases),
    attributes=channel_attributes(("DEVICE_TO_DEVICE", "HOST_TO_DEVICE")) + (SOURCE_TARGET_PAIRS,),
    groups=(CHANNEL_HANDLE,),
    later=LATER,
    quantization=QUANTIZED_PAYLOAD,
)
