"""Invalid cases for the Inputs table's integer types: an integer attribute
written with the other width (`iota_dimension = 2 : i32` where the table
asks for a "constant of type si64"; `index = 0 : i64` for get_tuple_element's
si32).  No numbered constraint names the type of an attribute; StableHLO's
verifier refuses such a program ("64-bit signless integer attribute"), so a
backend that runs one is wrong, and the oracle refuses it naming no
constraint (`IntAttr.from_mlir`, rule `<op>_inputs`).

Each case is one of the op's own kept value cases with the attribute's type
rewritten and nothing else: its first value case that writes the attribute
(a defaulted one left out is not), the same inputs and grid (on a grid,
as every invalid grid case, process 0's inputs and the grid's sizes).  A stream of
its own after every other (`suite.op_cases`): it draws nothing, so every
other case of the op stays byte-identical; a case is kept only where the
oracle refuses the program for this rule (`expect.rejects_for`).
"""
from __future__ import annotations

import dataclasses
import re

from ..spec.dsl import OpSpec
from ..spec.dsl.attributes import IntAttr
from ..suites.records import Case, GridData, case_id
from . import expect

STREAM = "attribute_widths"


def other_width(width: int) -> int:
    """The width written instead: i32 for the tables' si64, i64 for si32."""
    return 32 if width == 64 else 64


def cases(spec: OpSpec, kept: list[Case], seed: int) -> list[Case]:
    """One invalid case per integer attribute of the op that a value case
    writes on its own (not inside a grouped attribute), in declaration
    order."""
    rule = f"{spec.mnemonic}_inputs"
    values = [c for c in kept if c.kind == "value"]   # `kept`: suite._unique's, no None
    out = []
    for a in spec.attributes:
        if type(a.kind) is not IntAttr or a.group is not None:
            continue
        width, wrong = a.kind.width, other_width(a.kind.width)
        written = re.compile(rf"\b{re.escape(a.name)} = (-?\d+) : i{width}\b")
        for c in values:
            m = written.search(c.mlir)
            if m is None:
                continue
            mlir = c.mlir[:m.start()] + f"{a.name} = {m.group(1)} : i{wrong}" + c.mlir[m.end():]
            if expect.rejects_for(mlir, rule):
                # an invalid case on a grid carries the sizes alone and process 0's inputs (suite._grid_case)
                inputs = c.inputs if c.grid is None else c.grid.inputs[0]
                grid = None if c.grid is None else GridData(c.grid.num_replicas, c.grid.num_partitions)
                out.append(dataclasses.replace(
                    c, id=case_id(spec.mnemonic, c.dtype, mlir, inputs, salt="invalid"), kind="invalid",
                    mlir=mlir, inputs=inputs, expected=[], violates=rule, host=None, grid=grid,
                    note=f"violates {rule} ({a.name} written as i{wrong}, the table's si{width}; from {c.id})",
                    provenance={"seed": seed, "section": spec.mnemonic, "generator": c.provenance.get("generator"),
                                "stream": STREAM}))
            break
    return out
