"""The quantized stream's cases on an op's declared example
(generators/quantized.py `trailing_cases`, issue 34): each of v1.20's
quantization clauses broken alone by one invalid program that the oracle
refuses naming that clause; per-axis cases only where the op admits them
and valid; region ops' value cases for every declared body.  Expectations
themselves are held against independent truths in
test_quantized_structured.py; here: that the stream states what it claims
(each invalid program breaks the clause its record names, and no other)."""
from __future__ import annotations

import pytest

from shlo_conform.generators import expect
from shlo_conform.generators import quantized as gq
from shlo_conform.oracle.program import parse_program
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.types import parse_type


def _no_expectations(spec, inst, mlir, arrays):
    return []


@pytest.fixture(scope="module")
def convolution_cases():
    return gq.trailing_cases(OPS["convolution"], 0, expect_fn=_no_expectations)


def test_every_convolution_clause_has_one_invalid_program_the_oracle_refuses_by_it(convolution_cases):
    spec = OPS["convolution"]
    invalid = [c for c in convolution_cases if c.kind == "invalid"]
    assert sorted(c.violates for c in invalid) == sorted(c.__name__ for c in spec.quantization.constraints)
    for c in invalid:
        assert expect.rejection(c.mlir) == c.violates, c.note


def test_convolution_per_axis_cases_are_valid_and_per_axis_where_v1_20_allows(convolution_cases):
    values = [c for c in convolution_cases if c.kind == "value"]
    assert len(values) >= 3
    for c in values:
        parse_program(c.mlir)   # accepted by every constraint
        rhs = parse_type(c.inputs[1].type).element_type
        assert rhs.is_quantized and rhs.is_per_axis and rhs.quantization_dimension == 2   # kernel_output_feature


@pytest.mark.parametrize("op", ["reshape", "transpose", "broadcast_in_dim"])
def test_per_axis_data_movement_streams_break_their_clause_and_keep_valid_cases(op):
    spec = OPS[op]
    made = gq.trailing_cases(spec, 0, expect_fn=_no_expectations)
    named = {c.violates for c in made if c.kind == "invalid"}
    assert {c.__name__ for c in spec.quantization.constraints} <= named
    for c in made:
        if c.kind == "invalid":
            assert expect.rejection(c.mlir) == c.violates, c.note
        else:
            parse_program(c.mlir)
    assert any(c.kind == "value" and "axis" in c.dtype for c in made)


def test_region_ops_have_a_value_case_per_body_and_pairing():
    spec = OPS["sort"]
    made = gq.trailing_cases(spec, 0, expect_fn=_no_expectations)
    values = [c for c in made if c.kind == "value"]
    assert len(values) == len(gq.PAIRINGS) * len(spec.quantization.bodies)
    for c in values:
        parse_program(c.mlir)


def test_quantized_add_bodies_draw_values_near_the_zero_point():
    """Under a sum the stream draws storage values within an eighth of the
    range of the zero point, so that a few sums saturate, not all."""
    import numpy as np
    spec = OPS["reduce"]
    a = gq.PAIRINGS[0].operand
    inst = spec.quantization.example({"inputs": a, "init_values": a, "results": a, "body": a}, "add")
    x, init = gq._example_arrays(spec, inst, np.random.default_rng(0))
    assert int(init) == a.zero_points[0]
    assert np.all(np.abs(x.astype(int) - a.zero_points[0]) <= 33)
