"""The seed's Examples of the collectives, run as programs on their grids
through the oracle (parse_program → oracle/collective.py's rules →
oracle/grid.py's exchange), against the values the Examples print per
process (`// %operand@(0, 0): …`, `// %result@(1, 0): …`), read here from
the stored seed sections (spec/seed/000 and the RFC's, spec/seed/004) —
not from the code under test.  Plus: replica_id / partition_id on a 2×3
grid, and programs whose groups are invalid, reported in one line.

The pure semantics are tested on hand-built operands in
tests/spec/test_ops_collectives.py.
"""
from __future__ import annotations

import ast
import re

import numpy as np
import pytest

from shlo_conform.oracle.grid import execute_on_grid
from shlo_conform.oracle.program import ProgramRejected, parse_program
from shlo_conform.spec.grid import Grid
from shlo_conform.spec.traceability import RFC_SEED, SPEC_SEED, stored_sections
from shlo_conform.spec.types import parse_type

OPS = ("all_gather", "all_reduce", "all_to_all", "collective_permute", "reduce_scatter")

# Seed text the MLIR parser cannot take as printed (each a finding, docs/spec-findings.md).
FIXES = {
    # collective_permute: `dense<[[0, 1]]> : tensor<2x2xi64>` — a 1×2 literal declared 2×2
    "collective_permute": ("dense<[[0, 1]]> : tensor<2x2xi64>", "dense<[[0, 1]]> : tensor<1x2xi64>"),
}


def _example(op: str, seed: str) -> str | None:
    section = stored_sections(seed).get(op)
    if section is None:
        return None
    m = re.search(r"#### Examples\s*\n```mlir\n(.*?)```", section, re.S)
    return m.group(1) if m else None


def _read(text: str):
    """(grid, {name: {process: literal}}, op lines): the Example's
    `// num_replicas: N` header, its per-process values (continuation
    lines until brackets balance) and its op text."""
    sizes, values, op_lines = {}, {}, []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        m = re.match(r"//\s*(num_replicas|num_partitions):\s*(\d+)", line)
        v = re.match(r"//\s*%(\w+)@\((\d+),\s*(\d+)\):\s*(.*)$", line)
        if m:
            sizes[m.group(1)] = int(m.group(2))
        elif v:
            lit = v.group(4)
            while lit.count("[") > lit.count("]"):
                i += 1
                lit += " " + lines[i].strip().lstrip("/").strip()
            values.setdefault("%" + v.group(1), {})[(int(v.group(2)), int(v.group(3)))] = ast.literal_eval(lit)
        elif line and not line.startswith("//"):
            op_lines.append(lines[i])
        i += 1
    return Grid(sizes["num_replicas"], sizes["num_partitions"]), values, "\n".join(op_lines)


def _program(op: str, grid: Grid, op_text: str):
    """@main around the Example's op, in a module stating the grid."""
    for bad, good in [FIXES[op]] if op in FIXES else []:
        assert bad in op_text, f"the {op} example changed: {bad} is gone (drop the fix)"
        op_text = op_text.replace(bad, good)
    ins, out = re.search(r":\s*\(([^()]*)\)\s*->\s*(tensor<[^>]*>)\s*$", op_text.strip()).groups()
    in_types = [parse_type(t.strip()) for t in ins.split(",")]
    args = ", ".join(f"%operand: {t.mlir}" for t in in_types)
    mlir = (f"module attributes {{mhlo.num_replicas = {grid.num_replicas} : i32, "
            f"mhlo.num_partitions = {grid.num_partitions} : i32}} {{\n"
            f"func.func @main({args}) -> {out} {{\n{op_text}\n  func.return %result : {out}\n}}\n}}\n")
    return mlir, in_types, parse_type(out)


EXAMPLES = [(op, seed) for op in OPS for seed in (SPEC_SEED, RFC_SEED) if _example(op, seed)]


@pytest.mark.parametrize("op, seed", EXAMPLES, ids=[f"{op}-{seed[:3]}" for op, seed in EXAMPLES])
def test_seed_example_on_its_grid(op, seed):
    grid, values, op_text = _read(_example(op, seed))
    mlir, (in_type,), out_type = _program(op, grid, op_text)
    program = parse_program(mlir)
    assert program.grid == grid
    inputs = [[np.asarray(values["%operand"][p], dtype=in_type.element_type.numpy)] for p in grid.processes()]
    got = execute_on_grid(program, grid, inputs)
    for p, (e,) in zip(grid.processes(), got):
        want = np.asarray(values["%result"][p], dtype=out_type.element_type.numpy)
        assert np.array_equal(e.array(), want), (p, e.array(), want)
        if e.kind == "bounded":   # a sum: every schedule's value is the printed one here
            assert np.array_equal(e.lo, e.bits) and np.array_equal(e.hi, e.bits)


def test_examples_found():
    """The RFC's three multi-operand sections and seed 000's five examples."""
    assert len(EXAMPLES) == 8


def test_position_ops_on_a_grid():
    grid = Grid(2, 3)
    mlir = ("module attributes {mhlo.num_replicas = 2 : i32, mhlo.num_partitions = 3 : i32} {\n"
            "func.func @main() -> (tensor<ui32>, tensor<ui32>) {\n"
            '  %r = "stablehlo.replica_id"() : () -> tensor<ui32>\n'
            '  %p = "stablehlo.partition_id"() : () -> tensor<ui32>\n'
            "  func.return %r, %p : tensor<ui32>, tensor<ui32>\n}\n}\n")
    got = execute_on_grid(parse_program(mlir), grid, [[] for _ in range(grid.size)])
    assert [(int(r.array()), int(p.array())) for r, p in got] == grid.processes()


def _all_reduce(groups: str, shape: str, grid: Grid, extra: str = "") -> str:
    return (f"module attributes {{mhlo.num_replicas = {grid.num_replicas} : i32, "
            f"mhlo.num_partitions = {grid.num_partitions} : i32}} {{\n"
            "func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {\n"
            '  %r = "stablehlo.all_reduce"(%x) ({\n'
            "    ^bb0(%a: tensor<i32>, %b: tensor<i32>):\n"
            '      %s = "stablehlo.add"(%a, %b) : (tensor<i32>, tensor<i32>) -> tensor<i32>\n'
            '      "stablehlo.return"(%s) : (tensor<i32>) -> ()\n'
            f"  }}) {{replica_groups = dense<{groups}> : tensor<{shape}xi64>{extra}}}"
            " : (tensor<2xi32>) -> tensor<2xi32>\n"
            "  func.return %r : tensor<2xi32>\n}\n}\n")


def test_flattened_ids_program():
    """2×2, global ids, groups [[0, 3], [1, 2]]: (0,0)+(1,1), (0,1)+(1,0)."""
    grid = Grid(2, 2)
    mlir = _all_reduce("[[0, 3], [1, 2]]", "2x2", grid,
                       ", channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids")
    inputs = [[np.array([1, 2], np.int32)], [np.array([10, 20], np.int32)], [np.array([100, 200], np.int32)],
              [np.array([1000, 2000], np.int32)]]
    got = execute_on_grid(parse_program(mlir), grid, inputs)
    assert [e.array().tolist() for (e,) in got] == [[1001, 2002], [110, 220], [110, 220], [1001, 2002]]


@pytest.mark.parametrize("groups, shape, rule", [
    ("[[0, 0]]", "1x2", "all_reduce_c1"),   # a replica twice
    ("[[0]]", "1x1", "all_reduce_c2"),      # does not cover replica 1
])
def test_invalid_groups_rejected_in_one_line(groups, shape, rule):
    with pytest.raises(ProgramRejected) as e:
        parse_program(_all_reduce(groups, shape, Grid(2, 1)))
    assert rule in str(e.value) and "\n" not in str(e.value)
