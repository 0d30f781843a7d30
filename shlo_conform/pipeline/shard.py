"""`--shard I/N`: split a selection of cases over N machines, by program.

N machines that each run `--shard I/N` (I = 1..N) with the same suite and
selection run every selected case exactly once.  The unit of the split is
a *program* (`runner.group_by_program`: the cases sharing one program text),
so a program is compiled on one machine only — the runner's "compile once,
run many" holds across the whole split.

What is dealt out is the runner's own unit of work (`runner.plan`): the
cases of one program, or an op's single-case programs in batches of up to
`--batch` that the runner compiles as merged modules, one after another.  Dealing out
programs one by one would scatter those batches over the machines and
multiply compiles (on XLA, 313 cases: 129 compiles unsharded, 206 over
three shards split program by program); dealt out whole, each shard
re-plans exactly the batches the unsharded run would have compiled.  With
`--batch 1` a unit is one program.

The assignment depends on nothing but the selected cases, in their order,
and the batch size: units are ordered by (case count, descending; SHA-256
of their program texts) and each goes to the shard holding the fewest cases
so far (the lowest index on a tie) — greedy largest-first, so shard sizes
differ by at most the largest unit's case count.  No Python `hash()`
(salted per process), no dict order of another run, no machine state:
every machine with the same suite, selection and `--batch` computes the
same split.

The results document records the shard (`record`), so `report --merge` can
tell a complete split from one with shards missing.
"""
from __future__ import annotations

import hashlib
import re

from .planning import cases_of, group_by_program, plan
from ..suites.records import Case

_FORM = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")
MAX_SHARDS = 10_000


def parse(text: str) -> tuple[int, int]:
    """`I/N` → (I, N), 1 <= I <= N; ValueError naming what is wrong."""
    m = _FORM.fullmatch(text or "")
    if not m:
        raise ValueError(f"{text!r} is not of the form I/N (e.g. 2/4: the second of four shards)")
    index, count = int(m.group(1)), int(m.group(2))
    if not 1 <= count <= MAX_SHARDS:
        raise ValueError(f"{text!r}: the number of shards must be from 1 to {MAX_SHARDS}")
    if not 1 <= index <= count:
        raise ValueError(f"{text!r}: the shard index must be from 1 to {count} (shards are numbered from 1)")
    return index, count


def units(cases: list[Case], batch: int = 1) -> list[list[Case]]:
    """The runner's units of work: whole programs, whole series of batches."""
    return [cases_of(unit) for unit in plan(group_by_program(cases), batch)]


def _digest(unit: list[Case]) -> str:
    h = hashlib.sha256()
    for text in dict.fromkeys(c.mlir for c in unit):
        h.update(text.encode() + b"\0")
    return h.hexdigest()


def assign(cases: list[Case], count: int, batch: int = 1) -> dict[str, int]:
    """case id → its shard (1-based) in an N-way split of `cases`."""
    load = [0] * count
    where: dict[str, int] = {}
    for unit in sorted(units(cases, batch), key=lambda u: (-len(u), _digest(u))):
        k = min(range(count), key=lambda i: (load[i], i))
        load[k] += len(unit)
        for c in unit:
            where[c.id] = k + 1
    return where


def select(cases: list[Case], index: int, count: int, batch: int = 1) -> list[Case]:
    """The cases of shard `index` of `count`, in their selection order."""
    where = assign(cases, count, batch)
    return [c for c in cases if where[c.id] == index]


def selection_digest(cases: list[Case]) -> str:
    """A short digest of the whole selection (its case ids, in order): shards
    of one split carry the same, so a merge can tell they belong together."""
    return hashlib.sha256("\n".join(c.id for c in cases).encode()).hexdigest()[:16]


def record(index: int, count: int, shard_cases: list[Case], selected: list[Case], batch: int = 1) -> dict:
    """What a results document says about its shard: `index` of `count`,
    `cases` run here, `selected` in the whole split, `selection` its digest
    and the `batch` size the split was made with."""
    return {"index": index, "count": count, "cases": len(shard_cases), "selected": len(selected),
            "selection": selection_digest(selected), "batch": batch}


_RECORD = {"index": int, "count": int, "cases": int, "selected": int, "selection": str}


def check_shard_record(d) -> dict:
    """A results document's `shard` field, checked (ValueError naming the problem)."""
    if not isinstance(d, dict):
        raise ValueError("'shard' is not an object")
    for k, t in _RECORD.items():
        if not isinstance(d.get(k), t) or isinstance(d.get(k), bool):
            raise ValueError(f"'shard' has no {k!r}" if k not in d else f"'shard.{k}' has the wrong JSON type")
    if "batch" in d and (not isinstance(d["batch"], int) or isinstance(d["batch"], bool) or d["batch"] < 1):
        raise ValueError("'shard.batch' is not a positive integer")
    if not (1 <= d["index"] <= d["count"]) or not (0 <= d["cases"] <= d["selected"]):
        raise ValueError(f"'shard' is inconsistent: shard {d['index']}/{d['count']} "
                         f"with {d['cases']} of {d['selected']} cases")
    return d
