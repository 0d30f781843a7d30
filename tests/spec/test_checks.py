"""check-spec: the proofs hold for the encoded ops, and fail when they should."""
from __future__ import annotations

import dataclasses

import pytest

from shlo_conform.spec import checks
from shlo_conform.spec.dsl import ANY, Elementwise, OpSpec, Operand, Result, same_shape, same_type
from shlo_conform.spec.added import ADDED
from shlo_conform.spec.ops import OPS


# Every seed op's proofs (no failure; every constraint independent but those it declares `implied`) are
# `make check-spec`'s, which CI runs: `checks._implied_as_declared` fails it where z3's findings and the
# declaration differ (test_a_redundant_constraint_fails_check_spec_unless_declared_implied below).  A
# per-op test here repeated those ten CPU-minutes in `make test-long`.


@pytest.mark.long   # ~2 CPU-minutes: the dynamic ops' shape-operand structures
@pytest.mark.parametrize("name", sorted(ADDED))
def test_check_spec_passes_on_v1_20s_added_ops(name):
    """v1.20's thirteen ops: no failure (satisfiable, inference sound and
    unique where stated), every constraint independent or reported
    redundant — or, for an op whose clauses read functions and blocks or
    that exists for quantized tensors, a note saying why nothing is proved
    here (checks.STRUCTURAL; spec/quantized_checks.py)."""
    (r,) = checks.run_ops([name])
    assert not r.failures, (name, r.failures[:5])
    if name in checks.STRUCTURAL or ADDED[name].quantization is not None and ADDED[name].quantization.meaning == "own":
        assert r.proofs == 0 and r.notes
    else:
        assert r.independence.witnesses and r.proofs > 0
        assert set(r.independence.witnesses) | set(r.independence.redundant) == set(ADDED[name].labels)


def _fake(constraints, infer):
    return OpSpec(mnemonic="fake", operands=(Operand("operand", ANY),), results=(Result("result", ANY),),
                  constraints=constraints, infer=infer, semantics=Elementwise(lambda op, x: x))


def _run(spec):
    rep = checks.Report()
    checks.check_op(spec, rep)
    return rep


def test_unsound_inference_is_caught():
    def fake_c1(op):
        return same_type(op.operand, op.result)
    from shlo_conform.spec.types import TensorType
    spec = _fake((fake_c1,), lambda op: {"result": TensorType(tuple(d + 1 for d in op.operand.shape), op.operand.element_type)})
    rep = _run(spec)
    assert any("unsound" in f for f in rep.failures)


def test_ambiguous_result_is_caught():
    def fake_c1(op):   # forgets the element type: the result's type is not determined
        return same_shape(op.operand, op.result)
    spec = _fake((fake_c1,), lambda op: {"result": op.operand})
    rep = _run(spec)
    assert any("also allowed" in f for f in rep.failures)


def test_unusable_declared_type_is_caught():
    def fake_c1(op):
        return same_type(op.operand, op.result)

    def fake_c2(op):   # contradicts the Inputs table for i1
        return not op.operand.element_type.is_bool
    spec = _fake((fake_c1, fake_c2), lambda op: {"result": op.operand})
    rep = _run(spec)
    assert any("declares i1" in f for f in rep.failures)


def test_unknown_op():
    ok, text = checks.run(["no_such_op"])
    assert not ok and "no_such_op" in text


def test_independence_witness_breaks_exactly_one_constraint():
    def fake_c1(op):
        return same_shape(op.operand, op.result)

    def fake_c2(op):
        return op.operand.element_type == op.result.element_type
    spec = _fake((fake_c1, fake_c2), lambda op: {"result": op.operand})
    rep = checks.Report()
    ind = checks.check_independence(spec, rep)
    assert set(ind.witnesses) == {"fake_c1", "fake_c2"} and not ind.redundant and not rep.failures
    assert "rank-1" in ind.witnesses["fake_c2"] or "result=" in ind.witnesses["fake_c2"]


def test_redundant_constraint_is_reported_with_its_core():
    def fake_c1(op):
        return same_type(op.operand, op.result)

    def fake_c2(op):   # implied by C1
        return same_shape(op.operand, op.result)
    spec = _fake((fake_c1, fake_c2), lambda op: {"result": op.operand})
    rep = checks.Report()
    ind = checks.check_independence(spec, rep)
    assert "fake_c1" in ind.witnesses
    assert "fake_c2" in ind.redundant
    core = ind.redundant["fake_c2"]["core"]
    assert "fake_c1" in core and "not fake_c2" in core
    assert any("fake_c2 redundant" in n for n in rep.notes)


def _fake_implied(implied: tuple):
    def fake_c1(op):
        return same_type(op.operand, op.result)

    def fake_c2(op):   # implied by C1
        return same_shape(op.operand, op.result)
    return dataclasses.replace(_fake((fake_c1, fake_c2), lambda op: {"result": op.operand}), implied=implied)


def test_a_redundant_constraint_fails_check_spec_unless_declared_implied():
    """`_proved` holds the op's `implied` declaration to what z3 finds:
    redundant and undeclared fails, declared passes, declared yet broken
    alone by a witness fails (what a per-op long test asserted, now
    check-spec's own rule, which CI runs)."""
    undeclared = checks._proved(_fake_implied(()))
    assert any("fake_c2 is implied by the others but not declared" in f for f in undeclared.failures)
    assert not checks._proved(_fake_implied(("fake_c2",))).failures
    wrong = checks._proved(_fake_implied(("fake_c1", "fake_c2")))
    assert any("fake_c1 is declared `implied`, yet a witness breaks it alone" in f for f in wrong.failures)
    ok, text = checks.render([undeclared])
    assert not ok and "FAILED" in text


@pytest.mark.long   # make check-spec (CI) proves the same for every op
def test_encoded_constraints_are_all_independent():
    res = checks.run_ops(["clamp", "compare", "reduce_precision"])
    for r in res:
        assert not r.failures and not r.independence.redundant, r.to_json()
        assert set(r.independence.witnesses) == set(OPS[r.name].labels)


@pytest.mark.long   # `make check-spec` (CI runs it) proves every op; make test keeps the other ops' proofs above
def test_v1_20s_added_ops_are_proved_or_say_why_not():
    """collective_broadcast (v1.20) is proved like a seed op; composite's
    constraints read functions, not numbers: a note names the registry entry
    and no proof is claimed; uniform_quantize is proved over quantized types."""
    cb, comp, uq = checks.run_ops(["collective_broadcast", "composite", "uniform_quantize"])
    assert cb.proofs > 100 and not cb.failures and cb.independence.witnesses
    assert comp.proofs == 0 and not comp.failures and "checks.STRUCTURAL" in comp.notes[0]
    assert uq.proofs == 0 and "quantized_checks" in uq.notes[0]
