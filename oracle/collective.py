"""Execution of `Collective` and `Position` semantics: one process's step of
a program that runs on a process grid.

The oracle runs every process of the grid (oracle/grid.py); each reaches a
collective op with its own operands.  This rule: (1) makes the op's process
groups on the grid (`Collective.groups`: the strategy its channel_id and
use_global_device_ids pick — a program whose groups are invalid is
rejected in one line, never run into a hang); (2) hands this process's
operand arrays to the other processes of its group through
`ctx.process.exchange(key, group, arrays)`, which returns every member's;
(3) states this process's results by the op's `fn` — bit-exact arrays for
data movement (all_gather, all_to_all, collective_permute), element
answers resolved like an `Accumulating` op's for the reductions (all_reduce,
reduce_scatter: bounded or enumerated, as the seed leaves the order of the
combination to the implementation).

The exchange key is `process.key(mnemonic)`: (the op's mnemonic, the
number of collectives this process has run before); processes that reach
different collectives at the same point disagree on the key, which the
runtime (oracle/grid.py) reports in one line.

Values exchanged are primary arrays: an operand that is itself a range (a
float result an implementation may round differently) contributes its
primary value; its tolerance does not travel across processes.

With no grid (`ctx.process` None: a program run on its own), the process
is (0, 0) of a 1×1 grid and exchanges with itself.
"""
from __future__ import annotations

import numpy as np

from ..spec.dsl import Accumulating, Collective, Position
from ..spec.expectation import Expectation
from ..spec.grid import SINGLE, group_of
from ..spec.types import to_bits
from .accumulate import run_accumulating
from .data_movement import bits_of
from .rejection import ProgramRejected
from .semantics import on_values, result_types



class _Alone:
    """The process of a run without a grid (when the runtime gives none)."""

    grid = SINGLE
    id = (0, 0)

    def key(self, mnemonic: str) -> tuple:
        return (mnemonic, 0)

    def exchange(self, key, group, value):
        return {(0, 0): value}


def _process(ctx):
    return ctx.process if ctx.process is not None else _Alone()


def rejected(message: str, constraint: str | None = None):
    return ProgramRejected(message, constraint)


@on_values(Collective)
def run_collective(ctx, inst, values: list) -> list:
    sem: Collective = inst.spec.semantics
    proc = _process(ctx)
    grid, me = proc.grid, tuple(proc.id)
    name = inst.spec.mnemonic
    try:
        groups = sem.groups(inst, grid)
    except ValueError as e:
        raise rejected(f"{name}: {e}") from None
    group = group_of(groups, me)
    if group is None:
        raise rejected(f"{name}: process {me} is in no process group on the grid {grid}")
    # The values themselves travel (the runtime compares their types); each
    # process reads the primary arrays of what it received.
    got = proc.exchange(proc.key(name), [tuple(p) for p in group], list(values))
    operands_at = {tuple(p): [np.asarray(ctx.arrays(v)) for v in vs] for p, vs in got.items()}
    try:
        outs = sem.fn(inst, grid, me, operands_at)
    except ValueError as e:
        raise rejected(f"{name}: {e}") from None
    types = result_types(inst)
    if len(outs) != len(types):
        raise ValueError(f"{name}: semantics gave {len(outs)} results for {len(types)} result types")
    if sem.accumulating:
        return run_accumulating(Accumulating(lambda _inst, *_: outs), inst, [], types)
    return [Expectation(t, bits_of(v, t, name), bit_exact=True) for v, t in zip(outs, types)]


@on_values(Position)
def run_position(ctx, inst, values: list) -> list:
    proc = _process(ctx)
    outs = inst.spec.semantics.fn(inst, proc.grid, tuple(proc.id))
    return [Expectation(t, to_bits(np.asarray(v).astype(t.element_type.numpy).reshape(()), t.element_type),
                        bit_exact=True) for v, t in zip(outs, result_types(inst))]
