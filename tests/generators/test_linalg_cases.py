"""The cases generators make of cholesky and triangular_solve from their
declarations (spec/ops/cholesky.py, spec/ops/triangular_solve.py: built
corners, operand values, survey plans): every value case poses a problem
the seed defines — a Hermitian positive-definite matrix, a nonsingular
system with a representable solution — every survey case one it leaves
undefined, and the stated condition numbers span well- and ill-conditioned
problems."""
from __future__ import annotations

import functools

import pytest

from shlo_conform.generators.suite import op_cases
from shlo_conform.spec.ops import OPS


@functools.lru_cache(maxsize=None)
def cases(op: str):
    return op_cases(OPS[op], 0)


@pytest.mark.parametrize("op", ["cholesky", "triangular_solve"])
def test_value_cases_are_defined_and_surveys_are_not(op):
    got, missing = cases(op)
    assert missing == []   # an invalid case for every constraint
    kinds = {k: [c for c in got if c.kind == k] for k in ("value", "survey", "invalid")}
    assert kinds["survey"] and kinds["invalid"] and len(kinds["value"]) > 50
    for c in kinds["value"]:
        (e,) = c.expected
        assert e.kind == "residual" and "undefined" not in e.residual, (c.id, c.note, e.why)
    for c in kinds["survey"]:
        assert c.expected[0].residual.get("undefined"), c.id


SEED_TYPES = ("f8E4M3FN", "f8E5M2", "bf16", "f16", "f32", "f64", "complex<f32>", "complex<f64>")


@pytest.mark.parametrize("op, types", [("cholesky", SEED_TYPES), ("triangular_solve", SEED_TYPES)])
def test_every_type_is_exercised_with_stated_conditioning(op, types):
    """The seed's types on conditioned matrices (v1.20's: tests/generators/test_v1_20_types.py)."""
    got, _ = cases(op)
    values = [c for c in got if c.kind == "value" and "v1.20 type:" not in c.note and not c.dtype.startswith("quant_")]
    assert {c.dtype for c in values} == set(types)
    kappas = [c.expected[0].residual["condition"] for c in values
              if isinstance(c.expected[0].residual.get("condition"), float)]
    assert min(kappas) < 10 and max(kappas) > 1e9   # well- and ill-conditioned (f64: κ ≈ 1e10 and more)


def test_triangular_solve_covers_every_attribute_combination_on_complex():
    got, _ = cases("triangular_solve")
    combos = {(c.expected[0].residual["attributes"]["left_side"], c.expected[0].residual["attributes"]["lower"],
               c.expected[0].residual["attributes"]["unit_diagonal"],
               c.expected[0].residual["attributes"]["transpose_a"])
              for c in got if c.kind == "value" and c.dtype == "complex<f32>"}
    assert len(combos) == 24


def test_cholesky_covers_both_triangles_and_batches():
    got, _ = cases("cholesky")
    values = [c for c in got if c.kind == "value"]
    assert {c.expected[0].residual["attributes"]["lower"] for c in values} == {True, False}
    assert any("lower" not in c.mlir.split("stablehlo.cholesky")[1].split(":")[0] for c in values)   # default
    assert any(len(c.inputs[0].tensor_type.shape) >= 3 and 0 not in c.inputs[0].tensor_type.shape for c in values)
