"""A read Program run on concrete inputs: the walk that turns it into expectations.

Each op runs once on its operands' primary arrays, and once per corner of
ranged operands (propagation.py), by its semantics kind's rule
(semantics.py); control flow and side effects work on whole values, so what
a branch or a loop body computes keeps every allowance its ops have.  A
region runs through `caller` (primary arrays) or `expecter` (whole values).
A grid's processes each run here in a thread of their own (oracle/grid.py).
"""
from __future__ import annotations

import contextlib
import contextvars
from typing import Sequence

import numpy as np

from ..spec.dsl import ControlFlow, LoopLimit
from ..spec.expectation import Expectation
from ..spec.types import to_bits
from . import affine
from .block import Program, process_bindings
from .elementwise import Unspecified
from .grid import GridProcess, single_process
from .host import Token, running
from .propagation import carry, payloads
from .semantics import Context, on_values, run_arrays, run_values, works_on_values


def execute(program: Program, inputs: Sequence[np.ndarray], process: GridProcess | None = None) -> list[Expectation]:
    """Run @main (or a region's block) on concrete inputs: one Expectation
    per returned tensor (a returned tuple gives its tensors, depth first;
    a returned token is no output).  Side effects see the host of the
    caller's `host.session` (an empty one when there is none).
    `process`: the process of a grid this run is (oracle/grid.py, which
    runs every process of a grid: `execute_on_grid`); its ops see it as
    `Context.process`.  Without one the run is the single process of a
    1×1 grid.  Raises `Unspecified` where the spec states no result we
    could expect."""
    if process is None:
        with running():   # the caller's host (`host.session`), else a fresh one for this run
            values = run_block(program, input_values(program, inputs))
    else:
        token = _STEP_CONTEXT.set(Context(arrays=_arrays, process=process))
        try:
            with process_bindings(), running():
                values = run_block(program, input_values(program, inputs))
        finally:
            _STEP_CONTEXT.reset(token)
    return [leaf for v in values for leaf in leaves(v) if not isinstance(leaf, Token)]


def input_values(program: Program, inputs: Sequence[np.ndarray]) -> list[Expectation]:
    """Arrays as the exact values of the block's arguments (shapes checked)."""
    if len(inputs) != len(program.args):
        raise ValueError(f"the block takes {len(program.args)} inputs, {len(inputs)} given")
    values = []
    for (k, t), a in zip(program.args, inputs):
        a = np.asarray(a)
        if tuple(a.shape) != tuple(t.shape):
            raise ValueError(f"input {k}: shape {a.shape} where {t.mlir} was declared")
        values.append(Expectation(t, to_bits(a.astype(t.element_type.numpy, copy=False), t.element_type),
                                  bit_exact=True))
    return values


def run_block(program: Program, values: list, captured: dict | None = None) -> list:
    """The block's returned values (Expectations, or tuples of them) for its
    argument values (and the values it captures).  Each op consumes the
    primary values of the ops before it, and the ranges of approximate ones
    (propagation.py); the implementation-defined alternatives of an
    intermediate result do not propagate.  A call passes and returns whole
    values; an op's regions see the values they capture from this block."""
    env: dict = dict(program.constants)
    env.update(captured or {})
    env.update(zip((k for k, _ in program.args), values))
    watch = _WATCH.get()
    for step in program.steps:
        for body in step.regions:
            body.bound = {local: env[outer] for local, outer in body.captures.items()}
        inputs = [env[k] for k in step.operands]
        outs = run_step(step, inputs)
        if watch is not None and watch[0] is program:
            watch[1](step, inputs, outs)
        for k, o in zip(step.results, outs):
            env[k] = o
    return [env[k] for k in program.returns]


def run_step(step, inputs: list) -> list:
    """One step's result values from its operand values (its regions'
    captures bound by the caller)."""
    if step.call is not None:
        return run_block(step.call, inputs)
    if works_on_values(step.inst):   # control flow, side effects: their kind's rule on whole values
        return run_values(_STEP_CONTEXT.get(), step.inst, inputs)
    # on primary arrays, and on the ends of ranged operands (propagation.py)
    arrays = [_arrays(v) for v in inputs]
    outs = payloads(inputs, carry(run_arrays, step.inst, inputs, run_arrays(step.inst, arrays), arrays))
    if affine.enabled():   # `run`: errors tracked with their correlations, ranges tightened (affine.py)
        outs = affine.step(step.inst, inputs, outs)
    return outs


# (block, fn): `fn(step, operand values, result values)` after each step of that block (not of its regions),
# for a reader of a run's intermediate values (shlo_conform/width_origin.py).
_WATCH: contextvars.ContextVar = contextvars.ContextVar("shlo_conform_watch", default=None)


@contextlib.contextmanager
def watching(program: Program, fn):
    """Call `fn(step, inputs, outs)` after each step of `program`'s own block
    while the context is open."""
    token = _WATCH.set((program, fn))
    try:
        yield
    finally:
        _WATCH.reset(token)


@on_values(ControlFlow)
def _control_flow(ctx: Context, inst, values: list) -> list:
    """if, case, while, optimization_barrier: the op's own `fn` passes whole
    values through its regions (`Function.expect`), reading only the arrays
    it must look at (a predicate, an index, a loop condition)."""
    try:
        return inst.spec.semantics.fn(inst, values, ctx.arrays)
    except LoopLimit as e:
        raise Unspecified(str(e)) from None


def _arrays(v):
    """A value's primary arrays: an array, or a tuple of them (nested) —
    read-only, since one array serves the op's primary run and each corner
    of its ranged operands (propagation.carry)."""
    if isinstance(v, tuple):
        return tuple(_arrays(m) for m in v)
    a = v.array()
    if isinstance(a, np.ndarray):   # (from_bits gives a scalar for some rank-0 values)
        a.flags.writeable = False
    return a


_CONTEXT = Context(arrays=_arrays, process=single_process())
# The Context of the steps of the run in progress: a grid process's own
# (set by `execute` with a process, in that process's thread), else the
# single process's.
_STEP_CONTEXT: contextvars.ContextVar = contextvars.ContextVar("shlo_conform_step_context", default=_CONTEXT)


def leaves(v) -> list:
    return [leaf for m in v for leaf in leaves(m)] if isinstance(v, tuple) else [v]


def caller(body: Program):
    """`call(*arrays) -> [arrays]`: the region executed on rank-0 (or any)
    arrays, with the values it captures bound by the op running it."""
    def call(*arrays):
        return [leaf.array() for v in run_block(body, input_values(body, arrays), body.bound) for leaf in leaves(v)]
    return call


def expecter(body: Program):
    """`expect(*values) -> [values]`: the region executed on whole values
    (expectations with their allowances, tuples, tokens) — control flow's
    way in (`spec.dsl.ControlFlow`)."""
    def expect(*values):
        if len(values) != len(body.args):
            raise ValueError(f"the region takes {len(body.args)} values, {len(values)} given")
        out = run_block(body, list(values), body.bound)
        if affine.enabled():   # a loop's carry: its deviations rotated into a basis of their own (affine.py)
            affine.reduce_carry(out)
        return out
    return expect
