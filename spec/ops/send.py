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

v1.20 (StableHLO 1.20.0, and the RFC 20250421-source-target-pairs):
* `source_target_pairs` (I6), "2-dimensional tensor constant of type
  `si64`", is the peer-to-peer pattern of a device transfer, written as
  jaxlib 0.10.2's dialect spells it (`source_target_pairs = dense<[[0, 1],
  [1, 0]]> : tensor<2x2xi64>`, `ReplicaGroupsAttr`: collective_permute's
  kind).  Optional (`since="v1.20"`): a program without it — every seed
  program — holds None, and v1.20 states None or empty with
  `is_host_transfer = false` to be undefined behaviour.
* v1.20 numbers the new clauses C1–C4 and the seed's C1 becomes C5.  The
  seed's label keeps its meaning (`send_c1` is v1.20's C5) and the new
  clauses continue past it, as every later clause does (`OpSpec.later`):
  `send_c2` … `send_c5` are v1.20's C1 … C4.  They are collective_permute's
  C1–C4 word for word, and are its functions (`pairs_rule`: one rule in one
  place), N included: the section says "`num_replicas` if `cross_replica` is
  used, `num_partitions` if `cross_partition`" without saying when each is,
  and we read it as collective_permute's seed text does (channel_id > 0:
  cross_partition).  Empty pairs have no columns to count: C1 holds (0×2).
  The four clauses bind host transfers too (v1.20 attaches no condition).
* v1.20's Inputs rows cite a (C6) that no clause states (spec finding).
* `inputs` may be quantized tensors (v1.20's I1): the storage values are
  what travels (`quantization`, STORAGE), per-axis too.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..dsl import ANY, Attribute, BoolAttr, Group, IntAttr, OpSpec, Operand, ReplicaGroupsAttr, Result, SideEffect
from ..dsl.quantization import STORAGE, Quantization
from ..grid import Grid
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


# v1.20's I6 (send) / I5 (recv): optional, None where the program leaves it out (the seed's programs).
SOURCE_TARGET_PAIRS = Attribute("source_target_pairs", ReplicaGroupsAttr(columns=2), optional=True, since="v1.20")

# Both ops' v1.20 Inputs rows read "tensors or quantized tensors" (per-axis ones included); the data moves
# as it is, so the storage values travel unchanged.
QUANTIZED_PAYLOAD = Quantization(meaning=STORAGE, per_axis=True)


class _AsPermute:
    """What collective_permute's rules read of an op: its pairs (None, the
    attribute left out, read as none), its channel_id (the strategy) and
    its grid."""

    def __init__(self, op):
        pairs = op.source_target_pairs
        self.source_target_pairs = () if pairs is None else pairs
        self.channel_id = op.channel_id
        self.grid = op.grid


def pairs_rule(n: int, op):
    """collective_permute's C<n> (n = 1..4) on the op's `source_target_pairs`:
    v1.20 gives send and recv the same four clauses in the same words.
    Imported when called: collective_permute imports this module."""
    return getattr(_permute(), f"collective_permute_c{n}")(_AsPermute(op))


def host_rule(op, host_type: str):
    """`channel_type` = `host_type` if `is_host_transfer`, else DEVICE_TO_DEVICE."""
    flag = bool(op.is_host_transfer)
    return op.channel_type == (host_type if flag else "DEVICE_TO_DEVICE")


def send_c1(op):
    """(C1) `channel_type` must be:

    * `DEVICE_TO_HOST`, if `is_host_transfer` = `true`,
    * `DEVICE_TO_DEVICE`, otherwise."""
    return host_rule(op, "DEVICE_TO_HOST")


def send_c2(op):
    """(v1.20 C1) `dim(source_target_pairs, 1) = 2`."""
    return pairs_rule(1, op)


def send_c3(op):
    """(v1.20 C2) `is_unique(source_target_pairs[:, 0])`."""
    return pairs_rule(2, op)


def send_c4(op):
    """(v1.20 C3) `is_unique(source_target_pairs[:, 1])`."""
    return pairs_rule(3, op)


def send_c5(op):
    """(v1.20 C4) `0 <= source_target_pairs < N`, where `N` is defined as:
    `num_replicas` if `cross_replica` is used, `num_partitions` if
    `cross_partition` is used (read as collective_permute's: channel_id > 0
    is cross_partition)."""
    return pairs_rule(4, op)


LATER = (("send_c2", "v1.20 C1"), ("send_c3", "v1.20 C2"), ("send_c4", "v1.20 C3"), ("send_c5", "v1.20 C4"))


def infer(op):
    return {"result": TokenType()}


def write(op, payloads, host):
    """A host transfer appends the inputs to channel `channel_id`'s log.  A
    device transfer sends them "to other devices in the order specified by
    `source_target_pairs`" (`transfer`)."""
    if op.is_host_transfer:
        host.write(f"channel {op.channel_id}", payloads)
        return []
    transfer(op, payloads, host)
    return []


def _permute():
    from . import collective_permute   # collective_permute imports this module: deferred
    return collective_permute


def transfer(op, payloads, host) -> None:
    """A device transfer (the flag false): the process a pair (this
    process, t) names as target receives the inputs, through the recv on
    the same channel that names this process as its source (recv.py
    `read`).  Pairs are partition ids within the replica (cross_partition,
    channel_id > 0) or replica ids within the partition, as for
    collective_permute.  A process no pair names as a source sends nothing.
    None or empty pairs are undefined behaviour (v1.20): no result."""
    if not op.source_target_pairs:
        host.unstated("is_host_transfer = false with no source_target_pairs: undefined behaviour (v1.20)")
    _grid, me = host.where()
    target = target_of(op, me)
    if target is not None:
        host.transfer(op.channel_id, me, target, payloads)


def target_of(op, process):
    """The process a device transfer's pairs name as `process`'s target (None: none)."""
    r, p = process
    cross_partition = op.channel_id > 0
    mine = p if cross_partition else r
    for pair in (op.source_target_pairs or ()):
        if len(pair) == 2 and pair[0] == mine:
            return (r, pair[1]) if cross_partition else (pair[1], p)
    return None


def source_of(op, process):
    """The process a device transfer's pairs name as `process`'s source (None: none)."""
    return _permute().source_of(_AsPermute(op), process)


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


# Pairs breaking one of v1.20's C1-C4 each, on the grid each needs (two sources or targets need two ids):
# (note, pairs, grid, label's v1.20 clause number).  A device transfer (DEVICE_TO_DEVICE, the flag false),
# channel 3 (cross_partition: ids are partition ids).
PAIRS_BROKEN = (
    ("a pair of width 1", ((0,),), Grid(1, 1), 1),
    ("a source named twice", ((0, 0), (0, 1)), Grid(1, 2), 2),
    ("a target named twice", ((0, 1), (1, 1)), Grid(1, 2), 3),
    ("a target outside the partitions", ((0, 1),), Grid(1, 1), 4),
    ("a negative source", ((-1, 0),), Grid(1, 2), 4),
)
DEVICE = {"channel_id": 3, "channel_type": "DEVICE_TO_DEVICE", "is_host_transfer": False}


def pairs_cases(make, first_label: int, op: str) -> list:
    """Invalid instances of v1.20's C1–C4, each broken alone; `make(attrs,
    grid)` builds the op's instance and the clauses are labelled from
    `<op>_c<first_label>` on (v1.20's C1)."""
    return [(f"source_target_pairs: {note}", "invalid", make({**DEVICE, "source_target_pairs": pairs}, grid),
             f"{op}_c{first_label + n - 1}") for note, pairs, grid, n in PAIRS_BROKEN]


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
    # v1.20's source_target_pairs clauses: last, drawing nothing, so every earlier case keeps its bytes
    out += pairs_cases(lambda a, g: spec.instance({"inputs": t, "token": TokenType()}, a, {"result": TokenType()},
                                                  grid=g), 2, "send")
    return out


SPEC = OpSpec(
    mnemonic="send",
    operands=(Operand("inputs", ANY, variadic=True, count=(1, 2, 0)), Operand("token", TOKEN)),
    results=(Result("result", TOKEN),),
    constraints=(send_c1, send_c2, send_c3, send_c4, send_c5),
    infer=infer,
    semantics=SideEffect(write, cases),
    attributes=channel_attributes(("DEVICE_TO_DEVICE", "DEVICE_TO_HOST")) + (SOURCE_TARGET_PAIRS,),
    groups=(CHANNEL_HANDLE,),
    later=LATER,
    quantization=QUANTIZED_PAYLOAD,
)
