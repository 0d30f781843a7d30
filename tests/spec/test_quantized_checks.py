"""spec/quantized_checks.py: v1.20's quantization clauses proved with every number of a quantized type left to z3."""
from __future__ import annotations

import dataclasses

import pytest

from shlo_conform.spec import quantized_checks as qc
from shlo_conform.spec.added import ADDED
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.quantized import is_quantized

SPECS = {**OPS, **ADDED}


@pytest.mark.long   # ~12 s of z3: make test-long and make check-spec (both in CI) hold it
def test_every_quantization_clause_is_independent_with_a_concrete_witness():
    """Each clause has a structure where z3 finds ¬Ci ∧ the others ∧ the type
    clauses, and that model, made concrete, breaks Ci alone (OpSpec.violated)."""
    results = qc.run(SPECS)
    names = {r.op for r in results}
    assert {"add", "dot_general", "convolution", "reshape", "transpose", "broadcast_in_dim",
            "uniform_quantize", "uniform_dequantize"} <= names
    for r in results:
        assert r.ok and not r.redundant, qc.render([r])[1]
        assert set(r.witnesses) == set(r.clauses)
    assert sum(len(r.clauses) for r in results) >= 25


def _with_clause(spec, label, fn):
    q = spec.quantization
    fn.__name__ = label
    cs = tuple(fn if c.__name__ == label else c for c in q.constraints)
    return dataclasses.replace(spec, quantization=dataclasses.replace(q, constraints=cs))


def test_a_clause_that_reads_z3_numbers_as_python_booleans_is_caught():
    """dot_general's C15 written with Python's `all` compares each z3 zero
    point with 0 as an expression (structurally: never equal), so z3's
    model of ¬C15 breaks nothing once concrete: reported, not proved."""
    spec = _with_clause(OPS["dot_general"], "dot_general_c15",
                        lambda op: not is_quantized(op.rhs) or all(z == 0 for z in op.rhs.element_type.zero_points))
    r = qc.prove(spec)
    assert not r.ok and r.unsound == ["dot_general_c15"]
    assert "made concrete" in r.failures[0]


def test_a_clause_no_structure_can_break_alone_is_reported_redundant():
    """A C2 of add that also holds whenever C3 does (here: always) has no witness."""
    spec = _with_clause(OPS["add"], "add_c2", lambda op: True)
    r = qc.prove(spec)
    assert r.redundant == ["add_c2"] and "add_c2 redundant" in qc.render([r])[1]
