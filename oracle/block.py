"""The Program record: one block read and checked, ready to run.

@main's body, a called function's and each region's are all Programs: their
arguments, steps (an op's checked `Instance`, or a call), returned values,
constants, and the values a region captures from the blocks around it.
Captures are bound while the op that runs the region runs — per thread when
a grid's processes share one Program (`process_bindings`).
"""
from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field

from ..spec.grid import Grid


@dataclass
class Step:
    inst: object  # spec.dsl.Instance (None for a call)
    operands: list  # value keys in the spec's operand order (variadic members flattened)
    results: list
    call: "Program | None" = None   # func.call: the callee's body
    regions: list = field(default_factory=list)   # the op's region bodies (Programs), to bind their captures


@dataclass
class Program:
    """One block: @main's body, or a region's."""

    args: list  # [(key, TensorType)]
    steps: list
    returns: list  # value keys
    return_types: list
    constants: dict = field(default_factory=dict)  # key -> Expectation of a `constant` operand
    captures: dict = field(default_factory=dict)   # key here -> key in the enclosing block
    legalized: dict = field(default_factory=dict)  # the entry's: CHLO ops decomposed before judging {name: count}
    chlo_judged: dict = field(default_factory=dict)  # the entry's: CHLO ops judged by their meaning (spec/chlo)
    widened: dict = field(default_factory=dict)  # the entry's: ops read with wider operands {name: count}
    #                                              (reading.convert_to_wider_results)
    grid: Grid | None = None         # the entry's: the grid it was checked for (parse_program)
    module_grid: Grid | None = None  # the entry's: the grid its module's attributes state, if any
    manual: dict | None = None       # the entry's: the mesh of the sdy.manual_computation it is the body of
    _bound: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def bound(self) -> dict:
        """key here -> the captured value, while the op runs.  Per process
        of a grid run (oracle/grid.py): the processes share one Program, and
        one may wait at a collective inside a region while another binds
        the same region's captures."""
        per = getattr(_PER_PROCESS, "bound", None)
        return self._bound if per is None else per.get(id(self), {})

    @bound.setter
    def bound(self, value: dict) -> None:
        per = getattr(_PER_PROCESS, "bound", None)
        if per is None:
            self._bound = value
        else:
            per[id(self)] = value


_PER_PROCESS = threading.local()   # `bound` of a grid process's thread (`process_bindings`)


@contextlib.contextmanager
def process_bindings():
    """While a grid process runs in this thread, every Program's captures
    are bound in a table of the thread's own (`Program.bound`)."""
    _PER_PROCESS.bound = {}
    try:
        yield
    finally:
        _PER_PROCESS.bound = None


CALL = "shlo_conform.call"   # func.call, as the reader spells it inside regions (program.py's `_module`)
