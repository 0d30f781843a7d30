"""What the oracle will need to judge a program, known before it starts.

The oracle holds every value of a block until the block ends (its
environment is the program's values by name), and each op adds a working
set of its own while it runs.  So, from the program's types alone:

    peak ≈ Σ values held (every result and argument of @main's block)
         + the largest working set of one op (regions: their own peak,
           nested)

with per-element costs by what the oracle stores and how a kind of
semantics computes (`_HELD`, `_WORKING`).  The figures were measured on
whole-array routes (tracemalloc peaks of elementwise, data-movement and
accumulating programs) and rounded up; an op whose route falls back to
Python objects per element costs more, so the estimate is a planning
figure, and the address-space cap `run` sets at the stated budget
(shlo_conform/isolation.py) is what makes the budget hold.

Why up front: a program of 10^11 elements used to reach numpy's allocator
(745 GiB asked, `MemoryError` as an internal error) and a 10^8-element
reduce reached 11.5 GB before failing.  Refusing with the figure tells the
user what to raise (`--oracle-memory`) or that the program is out of reach.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..spec.dsl import Accumulating, ControlFlow, DataMovement, Elementwise, Statistical
from ..spec.types import TensorType, TupleType

# Bytes per element the oracle holds for a value: the primary bits, lo/hi
# bits of a bounded value, and the alternatives' arrays, at most.
HELD_PER_STORAGE_BYTE = 4
# Bytes per element an op's execution works with, beyond what it returns,
# by kind of semantics (float64 copies, masks, index arrays, rounding ends).
_WORKING = {Elementwise: 96, DataMovement: 40, Accumulating: 160, Statistical: 64, ControlFlow: 16}
# A contraction or reduction also works on every element of its operands.
OPERAND_WORKING = 48


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


def _held(t) -> tuple[int, int]:
    """(bytes held for a value of type t, its largest tensor's elements)."""
    held, largest = 0, 0
    for m in _tensors(t):
        n = _elements(m)
        et = m.element_type
        storage = et.bits_dtype.itemsize * (2 if et.is_complex else 1)
        held += n * storage * HELD_PER_STORAGE_BYTE
        largest = max(largest, n)
    return held, largest


def program_cost(program) -> Cost:
    """The Cost of an `oracle.program.Program` (module docstring)."""
    held, largest = 0, 0
    for _, t in program.args:
        h, n = _held(t)
        held, largest = held + h, max(largest, n)
    working = 0
    for step in program.steps:
        results = _step_results(step)
        for t in results:
            h, n = _held(t)
            held, largest = held + h, max(largest, n)
        w = _step_working(step, results)
        for body in step.regions:
            inner = program_cost(body)
            w = max(w, inner.peak)
            largest = max(largest, inner.largest)
        if step.call is not None:
            inner = program_cost(step.call)
            w = max(w, inner.peak)
            largest = max(largest, inner.largest)
        working = max(working, w)
    return Cost(held, working, largest)


def _step_results(step) -> list:
    if step.inst is None:
        return list(step.call.return_types) if step.call is not None else []
    out = []
    for r in step.inst.spec.results:
        v = step.inst.results[r.name]
        out.extend(v if r.variadic else [v])
    return [t for t in out if t is not None]


def _step_working(step, results: list) -> int:
    if step.inst is None:
        return 0
    sem = step.inst.spec.semantics
    per = next((b for k, b in _WORKING.items() if isinstance(sem, k)), 96)
    w = sum(_elements(m) for t in results for m in _tensors(t)) * per
    if isinstance(sem, Accumulating):
        if sem.working is not None:
            w += int(sem.working(step.inst))
        for o in step.inst.spec.operands:
            v = step.inst.operands[o.name]
            for t in (v if o.variadic else [v]):
                w += sum(_elements(m) for m in _tensors(t)) * OPERAND_WORKING
    return w


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
