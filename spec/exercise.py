"""How to exercise an op: the facts generators need, declared with the op.

PyTorch's OpInfo keeps each op's sample inputs with the op; here an op
module declares an `Exercise` next to its constraints and semantics, and
`generators/` reads it — generators hold no table keyed by op name.  What
an op can declare, and what each declaration feeds:

  hard_floats     (element type, operand index) -> values known to be hard
                  for this op's float operands (sin near multiples of π/2,
                  exp near overflow; families in spec/samples.py): added to
                  the format's special values in every case.
  integer_values  (element type, operand index) -> the integer values that
                  matter for that operand, or None; they *replace* the
                  type's boundary values there (shift amounts 0..width and
                  past it), wrapped into the type.
  corners         `Corner`s: structures worth solving for on purpose (every
                  transpose permutation, negative padding, empty windows):
                  z3 conditions over the op's own names, solved together
                  with its constraints, so a corner is never invalid.
  built_corners   (spec, skeletons, rng) -> [(note, skeleton, instance)]:
                  structures the solver does not reach (nested tuples),
                  built by hand; generators keep only those the
                  constraints accept.
  indices         `Indices`: which operand holds positions into another one,
                  how they lie (`StartVectors`, `StartScalars`) and what an
                  out-of-bounds position means: `CLAMPED` (the start moved
                  into bounds: dynamic_slice and dynamic_update_slice by the
                  seed's formula, gather by v1.20's) or `SKIPPED` (v1.20's
                  scatter: an update whose result index is out of bounds is
                  left out, element by element), both ordinary verdict
                  cases; `IMPLEMENTATION_DEFINED` (the seed's gather and
                  scatter): a survey case, reported and never scored.
  operand_values  (op instance, operand name, member index, tensor type, rng)
                  -> an array for that operand (member), or None for the
                  usual random and special values: reduce's init values are
                  its body's identity, sort's keys repeat.
  survey_when     (op instance) -> the reason the op's result is
                  implementation-defined as a whole on this instance (a
                  reduction body that is not associative), or None: such
                  cases are surveys.
  elided          `Corner`s with `omit`: instances whose optional
                  attributes sit at their defaults, written with those
                  attributes left out — as JAX and the StableHLO pretty
                  printer write programs — so the oracle's defaults are
                  exercised (issue 25).  Solved on a generator stream of
                  their own after every other case: the op's other cases
                  stay byte-identical.
  appended        (spec, skeletons, rng) -> [(note, violates, skeleton,
                  instance)]: hand-built programs where neither the solver
                  nor the drawn values go — an attribute outside its
                  `choices` (a negative index), a value past the element
                  type's range (iota longer than si4 counts).  `violates`
                  None: a value case, kept where the constraints accept
                  it; a label: an invalid case, kept where that is the one
                  constraint broken and the oracle's rejection names it.
                  A stream of their own after the elided ones, so every
                  other case stays byte-identical (issue 25).
  later           `Corner`s on structure a later spec than the seed added
                  (v1.20's batching dims of gather and scatter: inputs
                  declared with `Attribute.since`, which the seed's draws
                  hold empty): solved for value cases on a stream of their
                  own after the appended ones; their (ranks, layout) are
                  also where the negative search and check-spec break the
                  op's `OpSpec.later` constraints.
  appended_last   as `appended`, on a stream of its own after every other
                  one (the v1.20 types' and the quantized ones included):
                  dot_general's algorithm cases, added after those streams
                  were written.  A tuple of builders runs them in order on
                  that one stream, so a builder added at its end leaves the
                  cases before it as they were.  A builder may leave its
                  instance's results unreturned (`UNRETURNED.leave(inst)`):
                  @main then returns nothing, so a tuple result's members
                  appear in the program only inside the tuple.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any, Callable

CLAMPED = "clamped"
# A count, rank or dimension past CPython's shared small integers (-5..256): an implementation that compares
# two of them by identity instead of value (Python's `is` for `==`) passes every smaller program; an op's
# `appended_last` case of this size tells it apart (stop 39: tuple_c1 and batch_norm_grad_c5 — mutants only
# tests/spec/test_semantics_gaps.py's instances of this size had killed; its rank-300 ones cannot be cases:
# numpy, which states every expectation, holds at most 64 dimensions).
PAST_SMALL_INTEGERS = 300
IMPLEMENTATION_DEFINED = "implementation-defined"
SKIPPED = "skipped"


@dataclass(frozen=True, eq=False)
class Corner:
    """A structure worth solving for on purpose.

    `ranks`: one rank per declared operand.  `where(op)` receives a
    symbolic instance (z3 dims and attribute entries under the op's own
    names) and returns a list of conditions (dsl helpers or z3).  `layout`
    sets structure hints (`spec.symbolic.symbolic_instance`); `max_dim`
    raises the per-dimension budget for a corner that needs a long axis."""

    note: str
    ranks: tuple
    where: Callable
    layout: dict | None = None
    max_dim: int | None = None
    omit: tuple = ()   # attributes the program leaves out (`Exercise.elided`: `where` holds them at their defaults)


@dataclass(frozen=True)
class StartVectors:
    """Start positions laid into one index tensor (gather's `start_indices`,
    scatter's `scatter_indices`): each batch position of `operand` holds a
    vector of components along `index_vector_dim` (one implicit component
    when it equals the rank); component `k` addresses axis `index_map[k]`
    of the indexed tensor, whose dims are `target`.  `window[d]`: how many
    consecutive indices one start covers along axis `d`.  `reads`: whether
    any position is read at all (an empty result or empty updates reads
    none).  `sorted`: the program promises sorted starts.  `unique`: None
    when repeated starts are harmless (gather), False when they collide and
    should, True when the program promises disjoint windows."""

    operand: str
    index_vector_dim: int
    index_map: tuple
    target: tuple
    window: tuple
    reads: bool = True
    sorted: bool = False
    unique: bool | None = None


@dataclass(frozen=True)
class StartScalars:
    """One rank-0 start per axis of the indexed tensor, as members of the
    variadic `operand` (dynamic_slice's and dynamic_update_slice's
    `start_indices`); `target` and `window` as in `StartVectors`."""

    operand: str
    target: tuple
    window: tuple


@dataclass(frozen=True)
class Indices:
    """An op that reads positions from an operand.  `placement(op)` gives,
    for a concrete instance, a `StartVectors` or `StartScalars`;
    `out_of_bounds` is CLAMPED, SKIPPED or IMPLEMENTATION_DEFINED, as the
    spec's section for the op defines an out-of-range position."""

    placement: Callable
    out_of_bounds: str

    @property
    def defined(self) -> bool:
        """The spec states the result of an out-of-bounds position: its
        cases are scored, not surveyed."""
        return self.out_of_bounds in (CLAMPED, SKIPPED)


@dataclass(frozen=True)
class Exercise:
    """What generators need to know about one op (module docstring)."""

    hard_floats: Callable | None = None
    integer_values: Callable | None = None
    corners: tuple = ()
    built_corners: Callable | None = None
    indices: Any = None
    operand_values: Callable | None = None
    survey_when: Callable | None = None
    elided: tuple = ()
    appended: Callable | None = None
    appended_last: Callable | tuple[Callable, ...] | None = None   # as `appended`, after every other stream
    later: tuple = ()

    def builders(self, stream: str) -> tuple:
        """The builders of hand-built programs on `stream` ("appended" or
        "appended_last"), in order: a tuple's members, one builder, or none."""
        b = getattr(self, stream)
        return () if b is None else b if isinstance(b, tuple) else (b,)


class Chosen:
    """The operand values hand-built instances carry (`Exercise.operand_values`).

    An `appended_last` builder that needs particular values — a shape operand
    equal to its result's shape, indices that break a promise, the ties a
    case is about — chooses them for the instance it yields
    (`CHOSEN.choose(inst, name=array)`); the generator then asks for each
    operand and gets those, or None for every operand of every other
    instance, which is drawn as usual (so the op's other streams draw as
    they did).  Keyed weakly by the instance: a table of instances that
    outlives the generator run would keep them alive."""

    def __init__(self):
        self._by = weakref.WeakKeyDictionary()

    def choose(self, inst, **arrays):
        """`inst`, its operands `arrays` chosen (by operand name; a list
        chooses each member of a variadic operand, in order)."""
        self._by[inst] = arrays
        return inst

    def __call__(self, op, name, k, t, rng):
        got = self._by.get(op, {}).get(name)
        return got[k] if isinstance(got, list) else got


class Unreturned:
    """Hand-built instances whose results @main leaves unreturned
    (generators/emit.py `program`): every other result is returned, a
    tuple's taken apart by get_tuple_element into its leaves — so a type a
    program holds only as a tuple's member (custom_call's
    `broken_quantized_members`) needs its result unreturned.  Keyed weakly
    by the instance, as `Chosen`."""

    def __init__(self):
        self._by = weakref.WeakSet()

    def leave(self, inst):
        """`inst`, its results to be left unreturned."""
        self._by.add(inst)
        return inst

    def __contains__(self, inst) -> bool:
        return inst in self._by


UNRETURNED = Unreturned()
