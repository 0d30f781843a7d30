"""What the oracle will need to judge a program, known before it starts.

The oracle holds every value of a block until the block ends (its
environment is the program's values by name), and each op adds a working
set of its own while it runs.  So, from the program's types alone:

    peak ≈ Σ values held (every result and argument of @main's block)
         + the largest working set of one op (regions: their own peak,
           nested)

A value holds its bits, and where it is approximate (a float sum's range,
a transcendental's tolerance carried into what consumes it: `ranged`
below) its lo/hi ends too; an accumulating op's float result also keeps
the implementation-defined alternatives' bits (`_HELD`).  Which values are
ranged follows the program's data flow, as oracle/propagation.py carries
ranges: an approximate element-wise op or an accumulating op on floats
starts one, any op with a ranged operand and a float result continues it.

An op's working set is one rule per family, in `_working`, from the op's
types, attributes and declared structure (semantics kind, regions, index
operands), never its name; an op that knows its own route's memory states
it beside its semantics (`Accumulating.working`: convolution's patch
matrices, fft's transforms, reduce_window's pieces of windows).  The
figures were measured (tests/oracle/test_cost_measured.py holds them to
within 2× of the peak a child process reaches, family by family, at two
sizes each) and rounded up.

Where the route depends on the inputs, the figure is the route `run`'s
random inputs take: scatter places its updates element by element and
lists an element's orders of updates as alternatives (`_PER_INDEXED`,
measured when every out-of-bounds position also listed one — v1.20's skip
lists none, so the figure is generous); gather, whose out-of-bounds starts
v1.20 clamps, lists none and is held as the other moves.  The address-space cap `run` sets at
the stated budget (shlo_conform/pipeline/isolation.py) is what makes the budget
hold.

`run` carries affine forms besides (oracle/affine.py; `affine=True`): a
center and a radius per float element, and inside control flow's regions,
where a loop's carry becomes symbols, up to ENTRIES_MAX coefficients a
value — a bound, so a loop of wide values is stated generously.

Why up front: a program of 10^11 elements used to reach numpy's allocator
(745 GiB asked, `MemoryError` as an internal error) and a 10^8-element
reduce reached 11.5 GB before failing.  Refusing with the figure tells the
user what to raise (`--oracle-memory`) or that the program is out of reach.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..spec.dsl import Accumulating, Collective, ControlFlow, DataMovement, Decomposition, Elementwise
from ..spec.exercise import StartVectors
from ..spec.types import TensorType, TupleType
from . import every_tree
from .semantics import operand_types, result_types

# Copies of a value's storage the oracle holds for it: its bits; the lo/hi
# ends of a ranged value; an accumulating op's float result also the bits of
# its implementation-defined alternatives (measured: dot_general,
# convolution 5, reduce_window 4); an op whose out-of-bounds index is
# implementation-defined the alternative per element (gather: 2).
_HELD = {"exact": 1, "ranged": 3, "accumulated": 5, "indexed": 3}

# Working bytes per result element of an element-wise op: float64 copies,
# masks, rounding ends (measured 6–18 exact; 36–74 on ranged operands, whose
# ends are computed too: twice the figure).
_PER_ELEMENTWISE = 24
# Copies of a moved result's storage (gathered array, index arrays).
_MOVED_COPIES = 2
# An op with a region over its operands (sort's comparator, scatter's
# update computation): keys, permutations, the region's calls (measured 41
# per element of a sort).
_PER_REGION_OPERAND = 48
# An op whose out-of-bounds index is implementation-defined, per element it
# places (gather: result; scatter: update): the per-element route's index
# lists and an alternative per out-of-bounds element (measured 290 for a
# gather whose indices are random).
_PER_INDEXED = 320
# An accumulating op: per result element (enclosures in the working type,
# the whole-array record, the rounded ends) and per operand element (float64
# copies, error-free transformation terms); measured dot_general 130 + 25,
# reduce 34–44 per operand element.
_PER_ACCUMULATED = 130
_PER_ACCUMULATED_OPERAND = 40
# An accumulating op with regions other than a pairwise body
# (select_and_scatter's select and scatter): Python objects per element —
# window lists, the select's cache, an answer per operand element.
_PER_SELECTED_OPERAND = 640
_PER_WINDOW_LEAF = 64
# Control flow passes values; collectives exchange them; a decomposition
# runs its ops one by one.
_PER_CONTROL = 16
_PER_COLLECTIVE = 64
_PER_DECOMPOSED = 160
_PER_DECOMPOSED_OPERAND = 48
_PER_OTHER = 96


@dataclass(frozen=True)
class Cost:
    """The oracle's memory for one program, in bytes, and the elements of
    the largest value (what "how big is this program" means to a user)."""
    held: int
    working: int
    largest: int

    @property
    def peak(self) -> int:
        return self.held + self.working

    def describe(self) -> str:
        return f"about {human_bytes(self.peak)} (largest value {self.largest:,} elements)"


def human_bytes(n: int | float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"   # pragma: no cover


def _tensors(t) -> list:
    if isinstance(t, TupleType):
        return [m for s in t.types for m in _tensors(s)]
    return [t] if isinstance(t, TensorType) else []


def _elements(t: TensorType) -> int:
    n = 1
    for d in t.shape:
        n *= int(d)
    return n


def _count(types) -> int:
    return sum(_elements(m) for t in types for m in _tensors(t))


def _storage(t: TensorType) -> int:
    et = t.element_type
    return _elements(t) * et.bits_dtype.itemsize * (2 if et.is_complex else 1)


def _stored(types) -> int:
    return sum(_storage(m) for t in types for m in _tensors(t))


def _floats(types) -> bool:
    return any(m.element_type.is_float or m.element_type.is_complex for t in types for m in _tensors(t))


def _largest(types) -> int:
    return max((_elements(m) for t in types for m in _tensors(t)), default=0)


def _affine(results: list, in_loop: bool, ranged: bool) -> tuple[int, int, int]:
    """(held, coefficient, working) bytes of the affine forms `run` gives the
    step's float results (oracle/affine.py): a center and a radius per
    element held; coefficients — inside a loop body up to K_MAX symbols per
    element, elsewhere (after contractions and reductions, a family of
    symbols per row of the leading dimension) n / rows per element, each at
    most ENTRIES_MAX per value, and none for an exact value (`ranged`
    False: its form has no width, so no symbols) — which the run holds together up to HELD_MAX (`program_cost`
    caps their sum); and three such matrices while the step runs."""
    from .affine import ENTRIES_MAX, K_MAX
    held = coefficients = working = 0
    for t in results:
        for m in _tensors(t):
            et = m.element_type
            if not et.is_float or et.is_complex or et.format.precision > 24:
                continue
            n = _elements(m)
            # outside loops a value's symbols come in families, one symbol per row of its
            # leading dimension standing for all (affine.py): n / leading columns
            rows = int(m.shape[0]) if len(m.shape) and int(m.shape[0]) >= 2 else 1
            c = min(n * (K_MAX if in_loop else min(n // rows, K_MAX)), ENTRIES_MAX) * 8 if ranged or in_loop else 0
            held += 16 * n
            coefficients += c
            working = max(working, 3 * c + 48 * n)
    return held, coefficients, working


def program_cost(program, affine: bool = False, in_loop: bool = False) -> Cost:
    """The Cost of an `oracle.program.Program` (module docstring); `affine`:
    with the affine forms `run` carries (`_affine`: their coefficients held
    together at most affine.HELD_MAX, as `_Held` boxes the least recently
    used form past it), `in_loop`: the block is a region of control flow."""
    from .affine import HELD_MAX
    ranged: set = set()   # keys of values that carry a range
    forms = 0
    held = _stored(t for _, t in program.args)
    largest = _largest(t for _, t in program.args)
    working = 0
    for step in program.steps:
        results = _step_results(step)
        operands = _step_operands(step)
        carries = any(k in ranged for k in step.operands)
        how = _how_held(step, results, carries)
        if how in ("ranged", "accumulated") or _approximate(step, results):
            ranged.update(step.results)
        held += _stored(results) * _HELD[how]
        largest = max(largest, _largest(results))
        w = _working(step, operands, results, carries)
        if affine:
            form_held, coefficients, form_working = _affine(results, in_loop,
                                                            any(k in ranged for k in step.results))
            held += form_held
            forms += coefficients
            w += form_working + (every_tree.working_bytes(step.inst) if step.inst is not None else 0)
        loop = in_loop or (step.inst is not None and isinstance(step.inst.spec.semantics, ControlFlow))
        for body in [*step.regions, *([step.call] if step.call is not None else [])]:
            inner = program_cost(body, affine, loop)
            w = max(w, inner.peak)
            largest = max(largest, inner.largest)
        working = max(working, w)
    return Cost(held + min(forms, HELD_MAX * 8), working, largest)


def _step_results(step) -> list:
    if step.inst is None:
        return list(step.call.return_types) if step.call is not None else []
    return [t for t in result_types(step.inst) if t is not None]


def _step_operands(step) -> list:
    if step.inst is None:
        return list(t for _, t in step.call.args) if step.call is not None else []
    return [t for t in operand_types(step.inst) if t is not None]


def _indexed(inst) -> bool:
    """The op applies a body to updates it places by start index vectors
    (scatter: `StartVectors` and a region), element by element, listing
    the orders of an element's updates as alternatives per element.  Gather
    lists none since v1.20's clamp (before it, every out-of-bounds position
    had an alternative and gather was held so too)."""
    ix = inst.spec.exercise.indices if inst.spec.exercise is not None else None
    return ix is not None and bool(inst.spec.regions) and isinstance(ix.placement(inst), StartVectors)


def _how_held(step, results: list, carries: bool) -> str:
    """Which `_HELD` figure a step's results take (module docstring)."""
    if not _floats(results):
        return "exact"
    if step.inst is None:
        return "ranged" if carries else "exact"
    spec = step.inst.spec
    sem = spec.semantics
    if isinstance(sem, Accumulating) or (isinstance(sem, Collective) and getattr(sem, "accumulating", False)):
        return "accumulated"
    if isinstance(sem, Decomposition):
        return "ranged"
    if carries:
        return "ranged"
    if isinstance(sem, DataMovement) and _indexed(step.inst):
        return "indexed"
    return "exact"


def _approximate(step, results: list) -> bool:
    """An approximate element-wise op (a transcendental): its value holds its
    bits alone, but what consumes it carries its tolerance as a range."""
    sem = step.inst.spec.semantics if step.inst is not None else None
    return isinstance(sem, Elementwise) and _floats(results) and sem.accuracy_for(step.inst) != "exact"


def _working(step, operands: list, results: list, carries: bool) -> int:
    """What one op works with while it runs, beyond the results it returns
    (one rule per family: module docstring)."""
    if step.inst is None:
        return 0
    spec = step.inst.spec
    sem = spec.semantics
    ends = 3 if carries else 1   # a ranged operand: the op runs on its ends too
    R, O = _count(results), _count(operands)
    if isinstance(sem, Elementwise):
        return R * _PER_ELEMENTWISE * (2 if carries else 1)
    if isinstance(sem, DataMovement):
        w = _stored(results) * _MOVED_COPIES * ends
        if spec.regions:
            w += O * _PER_REGION_OPERAND
        if _indexed(step.inst):   # per element placed: scatter's updates
            updates = step.inst.operands.get("updates")
            placed = _count(results if updates is None else updates if isinstance(updates, list) else [updates])
            w += placed * _PER_INDEXED
        return w
    if isinstance(sem, Accumulating):
        w = R * _PER_ACCUMULATED * ends + O * _PER_ACCUMULATED_OPERAND
        if len(spec.regions) > 1:   # select and scatter: element by element, in Python objects
            first = _count(operands[:1])
            window = 1
            for d in getattr(step.inst, "window_dimensions", None) or ():
                window *= int(d)
            w += first * _PER_SELECTED_OPERAND + _count(operands[1:2]) * window * _PER_WINDOW_LEAF
        if sem.working is not None:
            w += int(sem.working(step.inst))
        return w
    if isinstance(sem, ControlFlow):
        return R * _PER_CONTROL
    if isinstance(sem, Collective):
        return R * _PER_COLLECTIVE
    if isinstance(sem, Decomposition):
        return R * _PER_DECOMPOSED + O * _PER_DECOMPOSED_OPERAND
    return R * _PER_OTHER


def parse_size(text: str) -> int:
    """'8G', '512M', '2.5GiB', '1000000' → bytes (a flag's value)."""
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    mult = 1
    if t and t[-1] in scale:
        mult, t = scale[t[-1]], t[:-1]
    value = float(t)
    if not value > 0:
        raise ValueError(f"{text!r} is not a positive size")
    return int(value * mult)
