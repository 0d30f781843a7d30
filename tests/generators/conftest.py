"""Shared fixtures: a small suite built once per session with stand-in expectations.

The oracle is another area; the generator's promises — determinism,
parseable programs, negative cases, special values — do not depend on what
the expectations say, so expectations of zeros stand in for the oracle's."""
from __future__ import annotations

import pytest

from tests.generators.stand_ins import zeros_expected


@pytest.fixture(scope="session")
def expect_fn():
    return zeros_expected


# Float, integer, i1-selected, three-operand and attribute-carrying ops: the tests below need their
# breadth, not every pairing.  compare and convert (30 of the fixture's 55 CPU-seconds: their v1.20
# element-type pairs) and clamp (10 of the remaining 20: select is the three-operand op here) have
# tests of their own (test_negative_cases_break_exactly_their_constraint, test_compare_covers_…);
# suites/core's bytes, theirs included, are held by test_core_reproducible (make test-long).
SMALL_OPS = ["add", "sine", "shift_left", "select", "reduce_precision"]


@pytest.fixture(scope="session")
def small_suite(tmp_path_factory):
    from shlo_conform.generators import suite
    from shlo_conform.spec.ops import OPS
    ops = [o for o in SMALL_OPS if o in OPS]
    d = tmp_path_factory.mktemp("suite")
    suite.build(d, 7, ops, expect_fn=zeros_expected)
    return d, ops


@pytest.fixture(scope="module")
def mlir_ctx():
    """jaxlib's MLIR context with the StableHLO dialects registered (the parser
    and verifier a backend starts from)."""
    from jax._src.interpreters import mlir as jm
    from jaxlib.mlir import ir
    with jm.make_ir_context() as ctx, ir.Location.unknown():
        yield ir, ctx
