"""The host side of a program run: infeed queue, channel queues, the log of
what outfeed and send wrote, and the tokens that order it all.

The seed's token ops (after_all, infeed, outfeed, send, recv) talk to a
host the seed does not model.  Here a `Host` is what one run of a program
sees: `infeed`, the tensors infeed pops in order; `channels`, per channel
id the tensors recv pops in order; and `log`, what outfeed ("outfeed") and
send ("channel <id>") wrote.  A case carries the first two and the
expected log (suites/records.py `host`); the runner compares a backend's
log with it (suites/compare.compare_log).

Tokens (`Token`): a token value is the set of side effects (numbered in the
order the oracle ran them) it stands after.  An op's token result stands
after its token operands and its own effect; after_all joins.  So a log
entry records which earlier entries of its stream it must follow
(`LogEntry.after`): two outfeeds no token chain orders may be logged
either way round by a conforming implementation.  Reads are stricter: an
infeed (a recv) that does not stand after an earlier read of its stream
could have read that one's data, so the oracle states no result
(`Unspecified`).

The host is passed through a context (`session`) rather than through
every call of the program interpreter: regions and called functions see
the same host as the block around them.
"""
from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass, field

import numpy as np

from ..spec.expectation import Expectation
from ..spec.dsl import SideEffect
from ..spec.tokens import is_token
from ..spec.types import TensorType, TokenType, to_bits
from .elementwise import Unspecified
from .grid import single_process
from .semantics import on_values

__all__ = ["Token", "Host", "LogEntry", "HostError", "session", "running", "run_side_effect"]


class HostError(Unspecified):
    """The host cannot give what the program reads (an empty queue, a tensor
    of another type), or reads are not ordered: no result is stated."""


@dataclass(frozen=True)
class Token:
    """A token: the side effects (their numbers) it stands after."""

    after: frozenset = frozenset()

    type = TokenType()


@dataclass
class LogEntry:
    """One tensor written to `stream` ("outfeed" or "channel <id>"): its
    value (an Expectation, carrying the tolerance of an approximate value),
    and the indices of earlier entries of the log it must follow."""

    stream: str
    value: Expectation
    after: tuple = ()


@dataclass
class Host:
    """What one run sees: queues to read from, a log written to."""

    infeed: list = field(default_factory=list)      # arrays infeed pops, in order
    channels: dict = field(default_factory=dict)    # channel id (int) -> arrays recv pops
    log: list = field(default_factory=list)         # LogEntry, in the order the oracle ran them
    # device-to-device transfers (send/recv, is_host_transfer = false; v1.20's source_target_pairs):
    # (channel id, source process, target process) -> how many transfers this process made on that link
    devices: dict = field(default_factory=dict)
    _effects: int = 0
    _reads: dict = field(default_factory=dict)      # stream -> effect numbers of its reads
    _entry_effect: list = field(default_factory=list)   # effect number of each log entry

    def queue(self, stream: str) -> list:
        if stream == "infeed":
            return self.infeed
        if stream.startswith("channel "):
            return self.channels.setdefault(int(stream.split()[1]), [])
        raise HostError(f"no stream {stream!r} to read")


_CURRENT: contextvars.ContextVar = contextvars.ContextVar("shlo_conform_host", default=None)


@contextlib.contextmanager
def session(host: Host | None):
    """Run a program with `host` (a fresh, empty one when None)."""
    tok = _CURRENT.set(host if host is not None else Host())
    try:
        yield _CURRENT.get()
    finally:
        _CURRENT.reset(tok)


@contextlib.contextmanager
def running():
    """One program run: the host of the enclosing `session`, else a fresh
    empty one for this run alone (so runs never share queues or tokens)."""
    if _CURRENT.get() is not None:
        yield _CURRENT.get()
        return
    with session(None) as host:
        yield host


def _current() -> Host:
    host = _CURRENT.get()
    if host is None:   # an op run outside any program run (a region called on its own): a private host
        return Host()
    return host


class _View:
    """What the spec's `fn` sees of the host during one op: `read` pops the
    stream's next tensor, `write` appends to the log; both as the op's
    effect, standing after `before`."""

    def __init__(self, host: Host, effect: int, before: frozenset, what: str):
        self.host, self.effect, self.before, self.what = host, effect, before, what

    def read(self, stream: str, types: list) -> list:
        """The next tensor of the stream for each type, in order."""
        return [self._read(stream, t) for t in types]

    def _read(self, stream: str, t: TensorType) -> np.ndarray:
        h = self.host
        earlier = [e for e in h._reads.get(stream, []) if e not in self.before and e != self.effect]
        if earlier:
            raise HostError(f"{self.what}: reads {stream} without standing after an earlier read of it "
                            "(no token orders them): which data each gets is not stated")
        h._reads.setdefault(stream, []).append(self.effect)
        q = h.queue(stream)
        if not q:
            raise HostError(f"{self.what}: {stream} is empty (an implementation would wait for the host)")
        a = np.asarray(q.pop(0))
        if tuple(a.shape) != tuple(t.shape) or a.dtype != np.dtype(t.element_type.numpy):
            raise HostError(f"{self.what}: the host queued a {a.dtype} array of shape {a.shape} on {stream} "
                            f"where the program reads {t.mlir}")
        return a

    def write(self, stream: str, values) -> None:
        h = self.host
        for v in values:
            after = tuple(i for i, (e, entry) in enumerate(zip(h._entry_effect, h.log))
                          if entry.stream == stream and e in self.before)
            h.log.append(LogEntry(stream, v, after))
            h._entry_effect.append(self.effect)


@on_values(SideEffect)
def run_side_effect(ctx, inst, inputs: list) -> list:
    """The op on its operand values (Expectations and Tokens, table order)
    and the host of the run: its result values, tensors as exact
    Expectations, tokens as `Token`s."""
    host = _current()
    before = frozenset().union(*(v.after for v in inputs if isinstance(v, Token)))
    host._effects += 1
    effect = host._effects
    tensors = [v for v in inputs if not isinstance(v, Token)]
    view = _View(host, effect, before, inst.spec.mnemonic)
    writes_values = _ValuesView(view, tensors, ctx)
    arrays = inst.spec.semantics.fn(inst, [v.array() for v in tensors], writes_values)
    results = []
    for r in inst.spec.results:
        v = inst.results[r.name]
        results += v if r.variadic else [v]
    out, it = [], iter(arrays)
    after = before | {effect}
    for t in results:
        if is_token(t):
            out.append(Token(after))
        else:
            a = next(it)
            out.append(Expectation(t, to_bits(a, t.element_type), bit_exact=True))
    return out


class _ValuesView:
    """The view the spec's `fn` gets: `write(stream, arrays)` logs the
    operands' own values (their Expectations: an approximate operand keeps
    its tolerance in the log) rather than bare arrays."""

    def __init__(self, view: _View, values: list, ctx=None):
        self.view, self.values, self.ctx = view, values, ctx

    def read(self, stream, types):
        return self.view.read(stream, types)

    def write(self, stream, arrays):
        arrays = list(arrays)
        if len(arrays) == len(self.values) and all(a is not None for a in arrays):
            self.view.write(stream, self.values)
        else:   # pragma: no cover - every writer of the spec writes its operands as they are
            raise HostError(f"{self.view.what}: writes values that are not its operands")

    # -- device-to-device transfers (send/recv with is_host_transfer = false) --------------------------
    def where(self) -> tuple:
        """(grid, process id) of this run: the grid runtime's process, else (0, 0) of a 1×1 grid."""
        proc = self._process()
        return proc.grid, tuple(proc.id)

    def _process(self):
        proc = getattr(self.ctx, "process", None)
        return proc if proc is not None else single_process()

    def transfer(self, channel: int, source, target, arrays) -> list:
        """One transfer on `channel` from process `source` to `target`: the
        sender hands its `arrays`, the receiver stand-ins of the types it
        expects; both return the sender's arrays once both have arrived.  A
        rendezvous of the grid runtime (oracle/grid.py) named by the link and
        how many transfers it carried before, so a send meets the recv of
        the same rank on its link; a send waits for its recv (v1.20 leaves
        the synchronisation of channels TBD, #484: a program that completes
        only if sends are buffered is stuck here, and no result is stated).
        A process sending to itself would wait for itself: no result."""
        source, target = tuple(source), tuple(target)
        if source == target:
            raise HostError(f"{self.view.what}: process {source} sends to itself on channel {channel}: it would wait "
                            "for its own recv")
        links = self.view.host.devices
        link = (int(channel), source, target)
        rank = links.get(link, 0)
        links[link] = rank + 1
        key = (f"channel {int(channel)} {source}->{target}", rank)
        got = self._process().exchange(key, [source, target], [np.asarray(a) for a in arrays])
        return [np.asarray(a) for a in got[source]]

    def unstated(self, why: str):
        """The spec states no result here (undefined behaviour): no expectation."""
        raise HostError(f"{self.view.what}: {why}")
