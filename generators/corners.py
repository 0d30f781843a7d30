"""The hard corners of the ops that move data, reached on purpose.

Random structures rarely hit the edges an implementation gets wrong: rank 0
and rank 5, zero-sized dimensions — generic, here — and what each op
declares in its `Exercise` (spec/exercise.py): every permutation of a
transpose, empty and full windows, negative and interior padding, empty
scatter updates, nested tuples.  A `Corner` is a structure (operand ranks,
a layout — see `spec.symbolic.symbolic_instance`) and z3 conditions on the
op's own names (`where(op)` over a symbolic instance); the solver finds the
numbers under the op's constraints as for any case, so a corner can never
produce an invalid program.  A corner the op's structure cannot reach is
skipped.
"""
from __future__ import annotations

import z3

from ..spec.dsl import OpSpec
from ..spec.exercise import Corner
from ..spec.symbolic import Skeleton
from . import solve


def _some_zero(t):
    return [z3.Or([d == 0 for d in t.shape])] if t.shape else [z3.BoolVal(False)]


def _first_operand(op):
    v = next(iter(op.operands.values()))
    return v[0] if isinstance(v, list) else v


def _generic(spec: OpSpec) -> list[Corner]:
    """Corners every op with operands has: all operands of rank 0, of rank 5,
    and a zero-sized dimension in the first operand."""
    n = len(spec.operands)
    return [
        Corner("rank 0", (0,) * n, lambda op: []),
        Corner("rank 5", (5,) * n, lambda op: []),
        Corner("zero-sized dimension", (2,) * n, lambda op: _some_zero(_first_operand(op)) if op.operands else []),
    ]


def corners(spec: OpSpec) -> list[Corner]:
    """The generic corners (for ops with operands), then the op's own (`Exercise.corners`)."""
    return (_generic(spec) if spec.operands else []) + list(spec.exercise.corners)


def corner_instances(spec: OpSpec, skels: list[Skeleton], rng):
    """(note, skeleton, instance) per corner the op reaches: first the ones
    the op builds by hand (`Exercise.built_corners`) that its constraints
    accept, then the solved ones; skeletons rotate over the valid ones so
    corners land on different element types."""
    if not skels:
        return
    if spec.exercise.built_corners is not None:
        for note, skel, inst in spec.exercise.built_corners(spec, skels, rng):
            if not spec.violated(inst) and not spec.types_outside_tables(inst):
                yield note, skel, inst
    for corner, skel, inst, _ in solved(spec, corners(spec), skels, rng):
        yield corner.note, skel, inst


def solved(spec: OpSpec, wanted, skels: list[Skeleton], rng, keep=None, attempts: int = 3):
    """(corner, skeleton, instance, kept) per corner of `wanted` that a solve
    reaches within `attempts` skeletons, taken in turn from one permutation
    of `skels` (so corners land on different element types).  `keep(instance)`
    (default: the instance itself) may refuse a solved instance with None —
    the next skeleton is tried then — and what it returns is yielded."""
    order = [int(i) for i in rng.permutation(len(skels))]
    k = 0
    for corner in wanted:
        for attempt in range(attempts):
            skel = skels[order[k % len(skels)]]
            k += 1

            def extra(sym, where=corner.where):
                try:
                    return where(sym.inst)
                except (AttributeError, IndexError, KeyError, TypeError):
                    return [z3.BoolVal(False)]
            max_dim = corner.max_dim or solve.MAX_DIM
            got = solve.solve_shapes(spec, skel, corner.ranks, rng, 1, zero_prob=0.0, extra=extra,
                                     layout=corner.layout, max_dim=max_dim,
                                     max_elements=max(solve.MAX_ELEMENTS, corner.max_dim or 0))
            kept = got[0] if got and keep is None else (keep(got[0]) if got else None)
            if kept is not None:
                yield corner, skel, got[0], kept
                break
