"""Execution of `Statistical` semantics (rng, rng_bit_generator): the
oracle's own sample as `bits`, the distribution tests the implementation's
output must pass as a statistical expectation (spec/kinds/statistical.py)."""
from __future__ import annotations

from ..spec.dsl import Statistical
from ..spec.expectation import Expectation
from ..spec.kinds.statistical import STATISTICAL
from .data_movement import bits_of
from .elementwise import Unspecified
from .semantics import on_arrays


@on_arrays(Statistical)
def run_statistical(sem: Statistical, inst, operands: list, results: list) -> list:
    """Each result's `Sample`: the oracle's own values as `bits`, the
    distribution tests as a "statistical" expectation."""
    outs = sem.fn(inst, *operands)
    if len(outs) != len(results):
        raise ValueError(f"{inst.spec.mnemonic}: semantics gave {len(outs)} results for {len(results)} result types")
    for o in outs:
        if o.values is None:
            raise Unspecified(o.why or f"{inst.spec.mnemonic}: no result is defined")
    return [Expectation(t, bits_of(o.values, t, inst.spec.mnemonic), STATISTICAL.name, statistical=dict(o.tests))
            for o, t in zip(outs, results)]


