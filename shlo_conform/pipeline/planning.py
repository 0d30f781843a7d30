"""What runs with what: programs grouped, single-case programs batched, and
the cases that must run alone or on a fresh worker.

The runner (runner.py) takes its units of work from `plan`; `shard.py`
deals the same units out to machines.  Which cases may share a merged
module is decided from the case's record (`_may_batch`): a program whose
results may depend on the module around it, or that talks to a host, is
compiled alone.
"""
from __future__ import annotations

from typing import Iterable

from .modes import mode_of
from ..suites.records import Case, Verdict

DEFAULT_BATCH = 16  # cases per merged module (shlo_conform/pipeline/batching.py): 3x fewer compile seconds on XLA:CPU
# batches per series (`plan`): what a batch learns serves an op's next ones, and no unit is so long that the other
# workers wait for it at the end (suites/core's convert is 1,798 cases, a fifth of what batches: on XLA whole
# series left a worker idle 26 s of 70)
SERIES_BATCHES = 8


# Program structure a merged module does not carry faithfully (module
# attributes — replicas, partitions, shardings — tokens and tuples): such
# programs are compiled alone.  `batching.merge` refuses some of them too;
# this is the cheap test made before any merge is tried.
# "!quant.": the merger reads modules with jaxlib's bindings, which have no quant dialect (oracle/reading.py)
_STRUCTURE_ALONE = ("attributes {", "!stablehlo.token", "tuple<", "!quant.")


def _scoring(c: Case):
    """The op's own declaration of how its cases must run (`spec.dsl.Scoring`)."""
    from ..spec.ops import lookup
    spec = lookup(c.op)
    return spec.scoring if spec is not None else None


def _may_batch(c: Case) -> bool:
    """A case that may share a merged module: a value or survey case with
    no host data nor grid (`modes.Mode.batches`; an invalid case is compiled alone so that a rejection is
    its own), whose op does not declare its cases alone (`Scoring.alone`:
    rng, custom_call, …) and whose text shows none of `_STRUCTURE_ALONE`
    (the full test is `batching.merge`'s)."""
    s = _scoring(c)
    return (c.kind != "invalid" and mode_of(c).batches and not (s is not None and s.alone)
            and not any(w in c.mlir for w in _STRUCTURE_ALONE))


def needs_fresh_worker(c: Case) -> bool:
    """Must `c`'s program be compiled by a worker that compiled nothing
    before?  The op says so (`Scoring.fresh_worker`: rng, whose draws
    XLA:CPU seeds from the process's compile history); a forked worker
    (zygote.py) costs a few milliseconds."""
    s = _scoring(c)
    return s is not None and bool(s.fresh_worker)


class Learned:
    """What the cases of one batch unit run alone showed, for the rest of
    that unit's halves.  The kind (`kind_of`: op, type and the element
    types of its signature) of a case that crashes or times out alone is
    batched no more (its batches would die again, each costing
    a worker and a case-by-case rerun), nor is a kind with two cases refused
    alone: an implementation refuses an op on a type as a whole (IREE
    refuses 500 valid cases, mostly whole kinds), and halving every batch
    that holds one costs more compiles than running the kind alone; one
    refused case is taken for the case's own (a constant, a shape).  Kept
    per unit (a series of one op's batches: `plan`), not per run: a unit
    runs in one worker from start to end, so
    which cases share a module is the plan's and this unit's own doing,
    never the other workers' timing — and the verdicts with it, where an
    implementation answers differently merged and alone
    (docs/scoring-speed.md, "What batching cannot promise")."""

    def __init__(self):
        self.unbatched: set[tuple] = set()
        self.refused: dict[tuple, int] = {}

    def alone(self, c: Case) -> bool:
        """Whether `c`'s kind runs alone for the rest of this unit."""
        return kind_of(c) in self.unbatched

    def saw(self, c: Case, v: Verdict) -> None:
        """`v` of case `c` run alone, whether a refusal named its lines
        (`Batch.culprits`) or not.  A located refusal counts too since the
        kind holds the result type (`kind_of`): IREE refuses some of its
        late, after code generation (an undefined __truncsfbf2 at link
        time, 0.4 s a batch), and each later batch holding one paid that
        again (on convert, bitcast_convert and compare: 365 compile
        worker-s, 321 counting them).  While a kind was (op, type), counting
        them had cost more than it saved (1,716 compile worker-s on
        suites/core, 1,601 without): a kind of convert then held every
        result type, of which IREE refuses some."""
        kind = kind_of(c)
        if v.verdict in ("rejected", "unsupported"):
            self.refused[kind] = self.refused.get(kind, 0) + 1
        if v.verdict in ("crash", "timeout") or self.refused.get(kind, 0) >= 2:
            self.unbatched.add(kind)


def kind_of(c: Case) -> tuple:
    """What an implementation refuses or dies of as a whole: the op, the
    case's type and every element type its signature holds (inputs and
    results, as MLIR writes them).  The result type belongs to it: a
    convert from si32 is refused by IREE when it converts to f8E4M3 and
    compiled when it converts to f32, and taking the two for one kind sent
    every si32 convert alone after two refused ones (on IREE 438 of
    convert's, compare's and bitcast_convert's passing cases compiled
    alone, 161 of their 548 compile worker-s)."""
    types = [v.tensor_type for v in c.inputs] + [e.type for e in c.expected]
    return (c.op, c.dtype, tuple(sorted({t.element_type.mlir if hasattr(t, "element_type") else str(t)
                                         for t in types})))


def plan(groups: list[list[Case]], batch: int) -> list[tuple[str, list]]:
    """Units of work, in a fixed order (the same whatever the number of
    workers): ("group", cases of one program) or ("series", batches: lists
    of up to `batch` single-case programs of one op that may be merged), in
    the suite's order, so a batch's element types come in runs; a series
    stands where its op's first case stands.  A batch holds one op because
    what an implementation refuses or dies of goes by op and type: a
    refused batch is halved (`Runner._do_batch`), and the halves part the
    types.  Not one (op, type) per batch: suites/core has about five cases
    per op and type, and a module's fixed cost (0.35 s an IREE compile,
    20 ms an XLA one) would then be paid for every five cases.

    Why a series, not a batch, is the unit: what one batch of an op shows
    run alone (`Learned`: IREE refuses whole kinds, f8 or complex of an op)
    is worth most to the op's next batches.  Learned per batch, every one
    of an op's batches holding a refused kind was refused and halved anew:
    on IREE 2,803 of 3,589 batches of suites/core fell back, 9,702
    compiles for 8,310 compiled cases.  A series runs in one worker from
    start to end, so what it learns is the plan's and its own doing, never
    the other workers' timing (`Learned`).  A series holds SERIES_BATCHES
    batches at most; the op's next case starts another."""
    units, series = [], {}
    for g in groups:
        if batch > 1 and len(g) == 1 and _may_batch(g[0]):
            batches = series.get(g[0].op)
            if batches is None or (len(batches) == SERIES_BATCHES and len(batches[-1]) == batch):
                batches = series[g[0].op] = []
                units.append(("series", batches))
            if not batches or len(batches[-1]) == batch:
                batches.append([])
            batches[-1].append(g[0])
        else:
            units.append(("group", g))
    return [("group", u[0]) if kind == "series" and len(u) == 1 and len(u[0]) == 1 else (kind, u)
            for kind, u in units]


def cases_of(unit: tuple[str, list]) -> list[Case]:
    """A unit's cases, in order (a series' batches one after another)."""
    kind, u = unit
    return [c for b in u for c in b] if kind == "series" else list(u)


def group_by_program(cases: Iterable[Case]) -> list[list[Case]]:
    """Cases sharing a program text and the way it is compiled (their
    mode's compile message and key — a process grid: a program is compiled
    for one; modes.py), in order of first appearance."""
    groups: dict = {}
    for c in cases:
        mode = mode_of(c)
        groups.setdefault((c.mlir, mode.compile_msg, mode.key(c)), []).append(c)
    return list(groups.values())

