"""Skeletons in the element types StableHLO v1.20 adds (issue 34).

v1.20's Inputs tables read the seed's words with more types behind them
(`spec.types.widened_to_v1_20`): nine float formats and si2/ui2.  The
suite's own skeletons enumerate the seed's tables, so the seed's cases keep
their bytes; this module makes the new ones from them.  Each v1.20 type N
takes the place of the seed type it stands in for (`V1_20_STAND_IN`: the
8-bit f8E4M3FN for every new float, si4/ui4 for si2/ui2) in the seed's
skeletons, and the op's own constraints decide which results are programs
(`skeleton.valid`, as for the seed's).  Where the program states a
result's type (convert, bitcast_convert, iota, rng …), operand and result
are substituted independently, so every pair with a v1.20 side is reached:
(N, seed), (seed, N) and (N, M).
"""
from __future__ import annotations

import itertools
import re

from ..spec.dsl import OpSpec
from ..spec.types import ELEMENT_TYPES, ElementType, V1_20_STAND_IN
from .skeleton import Skeleton, valid

MAX_SKELETONS_PER_TYPE = 6   # at most, per v1.20 type: enough to cover compare's six directions

NEW_TYPES = tuple(t for t in ELEMENT_TYPES.values() if t.since)


def _swap(types: tuple, old: ElementType, new: ElementType) -> tuple:
    return tuple(new if t == old else t for t in types)


def _substituted(skel: Skeleton, into_operands: ElementType | None, into_results: ElementType | None) -> Skeleton:
    """`skel` with each v1.20 type's stand-in replaced by it: in the operands
    by `into_operands`, in the program-stated results by `into_results`."""
    ops = skel.operand_types if into_operands is None else _swap(
        skel.operand_types, V1_20_STAND_IN[into_operands], into_operands)
    res = skel.result_types
    if into_results is not None:
        old = V1_20_STAND_IN[into_results]
        res = tuple((n, into_results if t == old else t) for n, t in res)
    return Skeleton(skel.op, ops, res, skel.attrs, skel.regions)


def _in_tables(spec: OpSpec, skel: Skeleton) -> bool:
    """Every element type in the table v1.20 reads for its position."""
    results = {r.name: r for r in spec.results}
    return (all(t in o.types_v1_20 for o, t in zip(spec.operands, skel.operand_types))
            and all(t in results[n].types_v1_20 for n, t in skel.result_types))


def skeletons(spec: OpSpec, seed_skeletons: list[Skeleton]) -> list[tuple[str, Skeleton]]:
    """(what is new, skeleton) for the op in v1.20's types, in a fixed order:
    per v1.20 type the substitutions the constraints accept that cover every
    attribute value and region body among them (`covering`: compare's
    directions and TOTALORDER, reduce's bodies); where the program states a
    result type, the same per pair of (operand types, result types) instead
    — convert and bitcast_convert between every pair with a v1.20 side,
    rng_bit_generator's output in each algorithm."""
    if not spec.result_from_program:
        return [x for t in NEW_TYPES for x in covering(list(_accepted(spec, seed_skeletons, [(t, None)])))]
    pairs = list(itertools.product((None,) + NEW_TYPES, repeat=2))[1:]
    by_signature: dict = {}
    for what, skel in _accepted(spec, seed_skeletons, pairs):
        by_signature.setdefault((skel.operand_types, skel.result_types), []).append((what, skel))
    return [x for group in by_signature.values() for x in covering(group)]


def _accepted(spec: OpSpec, seed_skeletons: list[Skeleton], substitutions):
    """(what, skeleton) for each substitution over each seed skeleton that
    puts a v1.20 type somewhere and that the constraints accept."""
    seen = set()
    for into_ops, into_res in substitutions:
        for skel in seed_skeletons:
            new = _substituted(skel, into_ops, into_res)
            if new == skel or new in seen or not _new_type_in(new) or not _in_tables(spec, new) or not valid(spec, new):
                continue
            seen.add(new)
            yield _what(into_ops, into_res), new


def covering(made: list) -> list:
    """The first of `made`, then greedily the one with most attribute values
    and region bodies not yet seen (the earliest on a tie), until every one
    is seen or `MAX_SKELETONS_PER_TYPE` are taken: a deterministic cover."""
    def parts(skel):
        return set(skel.attrs) | set(skel.regions)
    every = set().union(*(parts(s) for _, s in made)) if made else set()
    chosen, seen = [], set()
    while made and len(chosen) < MAX_SKELETONS_PER_TYPE and (not chosen or seen != every):
        best = max(range(len(made)), key=lambda i: (len(parts(made[i][1]) - seen), -i))
        chosen.append(made.pop(best))
        seen |= parts(chosen[-1][1])
    return chosen


def _new_type_in(skel: Skeleton) -> bool:
    return any(t.since for t in skel.operand_types) or any(t.since for _, t in skel.result_types)


def _what(into_ops, into_res) -> str:
    parts = [f"operands {into_ops}" if into_ops else "", f"result {into_res}" if into_res else ""]
    return "v1.20 type: " + ", ".join(p for p in parts if p)


def holds_new_type(mlir: str, skel: Skeleton) -> bool:
    """Whether a program's text has an element of one of the skeleton's
    v1.20 types (a draw can leave it out: a tuple of no members, a shape
    the solver emptied of every operand of the type)."""
    new = {t.mlir for t in skel.operand_types if t.since} | {t.mlir for _, t in skel.result_types if t.since}
    return any(re.search(rf"[x<]{re.escape(m)}>", mlir) for m in new)
