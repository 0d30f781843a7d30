"""The process grid in declarations (seed "Parallel execution", "Collective ops").

A collective's results depend on other processes' operands, and
replica_id / partition_id on which process runs: their semantics kinds
(`Collective`, `Position`) take the grid.  In z3 mode the grid's sizes are
unknowns themselves (`symbolic_grid`), so proofs and generators range over
grids as they range over dimension sizes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, ClassVar

import z3

from .constraints import is_symbolic


@dataclass(frozen=True)
class Collective:
    """Semantics of a collective op: each process's results depend on the
    operands of the other processes of its process group, so no rule on one
    process's arrays can state them — the oracle runs every process of the
    grid (oracle/grid.py) and exchanges operands within each group
    (oracle/collective.py).

    `groups(op, grid) -> list[list[ProcessId]]`: the `process_groups` the
    op's section makes of the grid — the strategy its `channel_id` and
    `use_global_device_ids` pick (spec/grid.py), applied to its
    `replica_groups` — ValueError with the seed's reason where they are not
    valid groups (a process twice, ids not covered): a program reported in
    one line, never run into a hang.
    `fn(op, grid, process, operands_at) -> list`: `process`'s results, one
    per result, where `operands_at` is {ProcessId: [operand arrays]} for
    every process of `process`'s group (numpy / ml_dtypes arrays of the
    operands' types, in table order, variadic members flattened).  A result
    is an array (data movement: bit-exact) or, for ops that combine values
    (all_reduce, reduce_scatter: "for some binary tree `schedule`"), what
    an `Accumulating.fn` returns — an object array of element answers or a
    `bounds.Answers` — so the order of the cross-process combination, which
    the seed leaves to the implementation, is bounded or enumerated as
    reduce's is.  Pure: tests evaluate the seed's Examples through it with
    hand-built `operands_at`."""

    composable: ClassVar[bool] = False   # talks to other processes: not a function of its own operands

    groups: Callable
    fn: Callable
    accumulating: bool = False   # results are Accumulating answers (see above), not arrays


@dataclass(frozen=True)
class Position:
    """Semantics of replica_id / partition_id: the result is the running
    process's position in the grid, not a function of any operand.
    `fn(op, grid, process) -> list of arrays` (process: (replica_id,
    partition_id))."""

    composable: ClassVar[bool] = False   # depends on which process runs it

    fn: Callable


# z3 mode: the grid's sizes as unknowns.  `num_replicas` = r + 1 and
# `num_partitions` = p + 1 for z3 integers r, p ≥ 0, so a solver that keeps
# dims non-negative (proofs, generators' budgets) never meets an empty grid;
# the names are fixed, so every copy of a symbolic instance (proofs rebuild
# them with other results) shares the same grid.
GRID_VARS = ("grid_replicas_minus_1", "grid_partitions_minus_1")


def symbolic_grid():
    from ..grid import SymbolicGrid
    r, p = (z3.Int(n) for n in GRID_VARS)
    return SymbolicGrid(r + 1, p + 1)


def grid_vars() -> list:
    """The z3 integers behind `symbolic_grid()` (each ≥ 0)."""
    return [z3.Int(n) for n in GRID_VARS]


def concrete_grid(grid, num):
    """A concrete `Grid` from a grid of `num`-evaluable sizes (a model's
    `eval`); a concrete Grid as it is."""
    from ..grid import Grid, SymbolicGrid
    if isinstance(grid, SymbolicGrid):
        def n(x):
            return int(num(x)) if is_symbolic(x) else int(x)
        return Grid(n(grid.num_replicas), n(grid.num_partitions))
    return grid
