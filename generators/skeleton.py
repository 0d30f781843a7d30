"""Skeletons: the concrete structure of one op in a program, chosen before any number.

A skeleton fixes what the spec's constraints treat as structure — element
types of the operands, the element type of a result that the program states
(convert, bitcast_convert: `OpSpec.result_from_program`), and the values of
enum/bool attributes (`None`: the program leaves an optional attribute out).
Ranks are drawn per case (`draw_ranks`); dimension sizes and integer
attributes are the solver's (`solve.py`).

Suite skeletons are *enumerated*, not sampled: every element type the Inputs
table allows, every enum value, every (operand, result) pair a conversion
allows — pruned by the op's own constraints, so nothing here repeats a rule.
Enumeration order is fixed (table order), which keeps suites byte-identical
for one seed.  `skeletons_strategy` offers the same space to hypothesis for
`fuzz` and property tests.  The `Skeleton` record and the symbolic instance
live in `spec.symbolic` (floor 1), which check-spec's proofs use too.
"""
from __future__ import annotations

import functools

from ..spec.dsl import OpSpec
from ..spec.symbolic import Skeleton, attribute_options, candidates, constraint_exprs, symbolic_instance
from .solve import satisfiable_ranks

__all__ = ["Skeleton", "attribute_options", "candidates", "enumerate_skeletons", "draw_ranks", "valid",
           "skeletons_strategy", "MAX_RANK"]

MAX_RANK = 4
MAX_RANK_STRUCTURED = 5


def _concretely_refuted(spec: OpSpec, skel: Skeleton) -> bool:
    """True when some constraint is False on structure alone (rank-1 symbolic
    dims everywhere): a cheap filter before the solver sees the skeleton."""
    for ranks in ([1] * len(skel.operand_types), [2] * len(skel.operand_types), [0] * len(skel.operand_types)):
        inst = symbolic_instance(spec, skel, ranks)
        if inst is None:
            continue
        exprs = constraint_exprs(spec, inst)
        if not any(e is False for _, e in exprs):
            return False
    return True


def enumerate_skeletons(spec: OpSpec) -> list[Skeleton]:
    """Every valid skeleton of the op, in table order (deterministic).

    Valid: some rank choice makes all constraints satisfiable (checked by
    `solve.satisfiable_ranks`).  Cached per OpSpec (a pure function of it)."""
    return list(_enumerate(spec))


@functools.lru_cache(maxsize=None)
def _enumerate(spec: OpSpec) -> tuple[Skeleton, ...]:
    return tuple(skel for skel in candidates(spec) if valid(spec, skel))


def valid(spec: OpSpec, skel: Skeleton) -> bool:
    """Some rank choice makes all the op's constraints satisfiable: the
    cheap structural filter, then the solver."""
    return not _concretely_refuted(spec, skel) and satisfiable_ranks(spec, skel) is not None


def draw_ranks(spec: OpSpec, skel: Skeleton, rng) -> list[int]:
    """One rank per operand: a common rank, and now and then a scalar operand
    (clamp's min/max and select's pred may be scalars).  Ops that move data
    reach rank `MAX_RANK_STRUCTURED` and, half the time, draw each operand's
    rank on its own (gather's indices need not match its operand).  The
    solver rejects rank vectors the constraints forbid; `solve.solve_for`
    falls back then."""
    if spec.structured:
        if rng.random() < 0.5:
            return [int(r) for r in rng.integers(0, MAX_RANK_STRUCTURED + 1, size=len(spec.operands))]
        return [int(rng.integers(0, MAX_RANK_STRUCTURED + 1))] * len(spec.operands)
    base = int(rng.integers(0, MAX_RANK + 1))
    ranks = [base] * len(spec.operands)
    if base > 0 and len(ranks) > 1 and rng.random() < 0.3:
        ranks[int(rng.integers(0, len(ranks)))] = 0
    return ranks


def skeletons_strategy(spec: OpSpec):
    """A hypothesis strategy over the op's valid skeletons (for fuzz and property tests)."""
    from hypothesis import strategies as st
    return st.sampled_from(enumerate_skeletons(spec))
