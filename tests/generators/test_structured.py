"""Generation for the ops that move data: corners, layouts, regions, tuples, surveys.

The promises checked here are the generator's own — every program it emits
for these ops is accepted by jaxlib's StableHLO parser and verifier (value
cases) or is at least syntax (invalid cases), the corners it claims are in
the suite, each invalid case breaks exactly its constraint — so the
stand-in expectations of conftest.py are enough (expectations are the oracle's
business, tested in tests/oracle)."""
from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

from shlo_conform.oracle.reading import holds_quantized_types, read_quantized
from shlo_conform.generators import corners, emit, negative, regions, skeleton, suite
from shlo_conform.spec.symbolic import candidates
from shlo_conform.spec.dsl import Function, unnumbered
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.types import ELEMENT_TYPES, TensorType

from tests.generators.stand_ins import zeros_expected

# One worker builds `cases` (pytest-xdist, --dist loadgroup).
pytestmark = [pytest.mark.xdist_group("structured"),
              pytest.mark.long]   # generating 10 structured ops costs ~115 s of CPU: make test-long

STRUCTURED = ["transpose", "pad", "slice", "dynamic_slice", "concatenate", "tuple", "get_tuple_element",
              "constant", "iota", "scatter"]


@pytest.fixture(scope="session")
def cases():
    out = {}
    for name in STRUCTURED:
        if name in OPS:
            out[name] = suite.op_cases(OPS[name], 3, expect_fn=zeros_expected)[0]
    return out


def test_value_programs_parse_and_verify(cases, mlir_ctx):
    """Regions, grouped attributes, dense constants, tuples built and taken
    apart: jaxlib's StableHLO accepts every value and survey program."""
    ir, _ = mlir_ctx
    n = 0
    for name, cs in cases.items():
        for c in cs:
            if c.kind != "invalid":
                if holds_quantized_types(c.mlir):   # jaxlib has no quant dialect: StableHLO's verifier as IREE carries it
                    read_quantized(c.mlir)
                else:
                    ir.Module.parse(c.mlir)
                n += 1
    assert n > 300


def test_invalid_programs_are_syntax(cases, mlir_ctx):
    ir, ctx = mlir_ctx
    ctx.allow_unregistered_dialects = True
    parsed = 0
    try:
        for cs in cases.values():
            for c in cs:
                if c.kind == "invalid":
                    m = ir.Module.parse(c.mlir.replace('"stablehlo.', '"unverified.'))
                    assert '"unverified.' in str(m), c.note   # the op survived as written, unverified
                    parsed += 1
    finally:
        ctx.allow_unregistered_dialects = False
    assert parsed > 50   # the structured ops' invalid cases (91 today): each parsed, none skipped


def test_every_transpose_permutation_up_to_rank_4(cases):
    notes = {c.note for c in cases["transpose"]}
    for r in range(5):
        for perm in itertools.permutations(range(r)):
            assert f"permutation {list(perm)}" in notes
    # and the permutation written is the one the note names
    named = [(c, re.match(r"permutation (\[.*\])", c.note)) for c in cases["transpose"]]
    named = [(c, m) for c, m in named if m]
    assert len(named) >= 34
    for c, m in named:
        written = re.search(r"permutation = array<i64(?:: ([\d, ]*))?>", c.mlir).group(1) or ""
        assert "[" + written + "]" == m.group(1)


def test_corners_are_reached(cases):
    notes = {name: {c.note for c in cs} for name, cs in cases.items()}
    assert {"negative edge padding", "interior padding"} <= notes["pad"]
    assert {"empty window (start = limit)", "full window", "strides > 1"} <= notes["slice"]
    assert {"full window", "empty window"} <= notes["dynamic_slice"]
    assert "nested tuples" in notes["tuple"]
    assert "empty updates" in notes["scatter"]
    assert "long dimension (indices round in narrow formats)" in notes["iota"]
    for name in ("transpose", "pad", "slice"):
        assert {"rank 0", "rank 5", "zero-sized dimension"} <= notes[name]


def test_rank_0_and_5_and_zero_sized_dims_occur(cases):
    ranks, zero = set(), False
    for c in cases["transpose"] + cases["pad"] + cases["slice"]:
        for v in c.inputs:
            t = v.tensor_type if hasattr(v, "tensor_type") else None
            shape = re.match(r"tensor<((?:\d+x)*)", v.type).group(1).split("x")[:-1]
            ranks.add(len(shape))
            zero |= "0" in shape
    assert {0, 5} <= ranks and zero


def test_negative_padding_is_written(cases):
    lows = [re.search(r"edge_padding_low = array<i64: ([-\d, ]+)>", c.mlir) for c in cases["pad"] if c.kind == "value"]
    assert any(m and any(int(x) < 0 for x in m.group(1).split(",")) for m in lows)


def test_invalid_cases_break_one_named_constraint(cases):
    for name, cs in cases.items():
        labels = {c.violates for c in cs if c.kind == "invalid"}
        spec = OPS[name]
        quantized = {f.__name__ for f in spec.quantization.constraints} if spec.quantization else set()
        # v1.20's quantization clauses too (transpose_c4), and the rules outside the numbering (custom_call_infer)
        assert {x for x in labels if not unnumbered(x)} <= set(spec.labels) | quantized
        assert labels, name


def test_constant_values_are_attributes_not_arguments(cases):
    assert cases["constant"]   # an empty selection would prove nothing
    for c in cases["constant"]:
        assert c.mlir.startswith("func.func @main() ->")
        assert 'value = dense<"0x' in c.mlir
        assert c.inputs == []


def test_tuple_results_come_back_as_leaves(cases):
    values = [c for c in cases["tuple"] if c.kind == "value"]
    assert values   # an empty selection would prove nothing
    for c in values:
        assert "tuple<" not in c.mlir.split("{")[0]      # @main's signature: tensors only
        n_leaves = c.mlir.split("\n")[0].count("tensor<") - len(c.inputs)
        assert n_leaves == len(c.expected)


KINDS_OF_TYPE = ["i1", "si4", "ui8", "f8E4M3FN", "bf16", "f32", "complex<f64>"]


@pytest.mark.parametrize("body", regions.PAIRWISE + ("replace", "keep", "argmax"))
@pytest.mark.parametrize("et", KINDS_OF_TYPE)
def test_region_bodies_verify_for_every_kind_of_type(body, et, mlir_ctx):
    ir, _ = mlir_ctx
    t = TensorType((), ELEMENT_TYPES[et])
    block = regions.render(Function((t, t), (t,), body))
    ttype = TensorType((3,), ELEMENT_TYPES[et]).mlir
    utype = TensorType((1,), ELEMENT_TYPES[et]).mlir
    text = (f"func.func @main(%arg0: {ttype}, %arg1: tensor<1x1xi32>, %arg2: {utype}) -> {ttype} {{\n"
            f'  %0 = "stablehlo.scatter"(%arg0, %arg1, %arg2) {block} {{scatter_dimension_numbers = '
            f"#stablehlo.scatter<update_window_dims = [], inserted_window_dims = [0], "
            f"scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}} : ({ttype}, tensor<1x1xi32>, "
            f"{utype}) -> {ttype}\n"
            f"  func.return %0 : {ttype}\n}}\n")
    m = ir.Module.parse(text)
    assert m.operation.verify() and "stablehlo.scatter" in str(m)


@pytest.mark.parametrize("body", regions.COMPARATORS)
@pytest.mark.parametrize("et", KINDS_OF_TYPE)
def test_comparators_verify_in_a_two_key_sort(body, et, mlir_ctx):
    ir, _ = mlir_ctx
    t, k = TensorType((), ELEMENT_TYPES[et]), TensorType((), ELEMENT_TYPES["si32"])
    block = regions.render(Function((t, t, k, k), (TensorType((), ELEMENT_TYPES["i1"]),), body))
    a, b = TensorType((4,), ELEMENT_TYPES[et]).mlir, "tensor<4xi32>"
    m = ir.Module.parse(f"func.func @main(%a: {a}, %b: {b}) -> ({a}, {b}) {{\n"
                        f'  %0:2 = "stablehlo.sort"(%a, %b) {block} {{dimension = 0 : i64, is_stable = true}} '
                        f": ({a}, {b}) -> ({a}, {b})\n  func.return %0#0, %0#1 : {a}, {b}\n}}\n")
    assert m.operation.verify() and "stablehlo.sort" in str(m)


@pytest.mark.parametrize("body", regions.MAPS)
@pytest.mark.parametrize("et", KINDS_OF_TYPE)
def test_map_computations_verify(body, et, mlir_ctx):
    ir, _ = mlir_ctx
    t = TensorType((), ELEMENT_TYPES[et])
    block = regions.render(Function((t, t), (t,), body))
    a = TensorType((3,), ELEMENT_TYPES[et]).mlir
    m = ir.Module.parse(f"func.func @main(%a: {a}, %b: {a}) -> {a} {{\n"
                        f'  %0 = "stablehlo.map"(%a, %b) {block} {{dimensions = array<i64: 0>}} : ({a}, {a}) -> {a}\n'
                        f"  func.return %0 : {a}\n}}\n")
    assert m.operation.verify() and "stablehlo.map" in str(m)


def test_scatter_tables_are_covered_not_multiplied():
    """40,432 combinations of scatter's tables: a covering set has every
    element type of every operand and every body, and stays small."""
    spec = OPS["scatter"]
    cands = list(candidates(spec))
    assert len(cands) < 200
    for i, o in enumerate(spec.operands):
        assert {c.operand_types[i] for c in cands} == set(o.types)
    assert {dict(c.regions)["update_computation"] for c in cands} == set(spec.regions[0].bodies)


def test_layout_hints_reach_several_structures():
    spec = OPS["concatenate"]
    counts = set()
    rng = np.random.default_rng(0)
    for skel in skeleton.enumerate_skeletons(spec)[:6]:
        for inst in suite.solve.solve_for(spec, skel, skeleton.draw_ranks(spec, skel, rng), rng, 3):
            counts.add(len(inst.inputs))
    assert len(counts) >= 2
