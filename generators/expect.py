"""The oracle's expectation at a case's birth, and its verdict on invalid programs.

The oracle states `Expectation`s (spec/expectation.py), the same record a
suite stores, so nothing is converted here: this module only runs the
oracle's program interpreter for the generators (floor 3 sits above both
oracle/ and suites/, which never import each other).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..oracle.elementwise import Unspecified
from ..oracle.program import ProgramRejected, execute, parse_program
from ..spec.dsl import constraint_named
from ..spec.expectation import Expectation

__all__ = ["expected_outputs", "expected_grid_outputs", "rejection", "rejects_for", "ProgramRejected", "Unspecified"]


def expected_outputs(mlir: str, inputs: Sequence[np.ndarray]) -> list[Expectation]:
    """The expected outputs of @main on `inputs`.  Raises ProgramRejected for
    a program the encoded spec refuses, Unspecified where the spec states no
    result and names no alternatives (the generator then drops the case)."""
    return execute(parse_program(mlir), list(inputs))


def expected_grid_outputs(mlir: str, grid, inputs_per_process: Sequence[Sequence[np.ndarray]]) -> list[list[Expectation]]:
    """Each process's expected outputs of @main run on every process of
    `grid` (spec.grid.Grid), each on its inputs (flattened id order).
    Raises as `expected_outputs`; processes that cannot all meet at a
    collective raise CannotJudge, a ProgramRejected (oracle/grid.py)."""
    from ..oracle.grid import execute_on_grid
    return execute_on_grid(parse_program(mlir, grid), grid, [list(x) for x in inputs_per_process])


def rejection(mlir: str) -> str | None:
    """The constraint the encoded spec rejects a program for ("" when it
    rejects it for another reason — e.g. operands that cannot be matched to
    the op's inputs at all — and None when it accepts it)."""
    try:
        parse_program(mlir)
    except ProgramRejected as e:
        return e.constraint or ""
    return None


def rejects_for(mlir: str, violates: str) -> bool:
    """Does the encoded spec reject the program for the rule `violates`: the
    numbered constraint its rejection names, or — for an unnumbered rule
    (`spec.dsl.unnumbered`: a table, type inference), which the oracle
    checks before any constraint — a rejection naming none?  Where it
    rejects for another rule, the text cannot say what the instance meant:
    a case would not test its rule."""
    got = rejection(mlir)
    return got is not None and (got or None) == constraint_named(violates)
