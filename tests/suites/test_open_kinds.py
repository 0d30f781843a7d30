"""A new expectation kind is one module: declared here, registered, and both
the judge (suites/compare.py) and the oracle's propagation
(oracle/propagation.py, through a later `add`) handle it with no other edit.

The kind, "below": within `tolerance_ulp` ULPs *below* `bits` (by the
format's order) and never above — a rule no built-in kind has.  Truth by
hand, with numpy's own float32 stepping and arithmetic: 1.0 with tolerance
2 admits 1.0, 1 − 2⁻²⁴ and 1 − 2⁻²³; adding 0.5 (exact in [1, 2)) the sum
then lies in [1.5 − 2⁻²³, 1.5]."""
from __future__ import annotations

import numpy as np
import pytest

from shlo_conform.oracle.propagation import carry
from shlo_conform.oracle.semantics import run_arrays
from shlo_conform.spec.expectation import Expectation
from shlo_conform.spec.kinds import REGISTRY, Kind, kind_of
from shlo_conform.spec.kinds.bounded import BOUNDED
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.types import E_F32, TensorType, ordinals
from shlo_conform.suites.compare import compare
from shlo_conform.suites.resolution import resolution


class Below(Kind):
    """The test's kind: [bits − tolerance_ulp ULPs, bits] per element (real floats)."""

    name = "below (test kind)"
    fields = ("tolerance_ulp",)
    approximate = True

    def describe(self, e) -> str:
        return f"at most {e.tolerance_ulp} ulp below the stated value"

    def matches(self, e, cet, eb, ab, primary, elem_ulp):
        o, want = ordinals(ab, cet), ordinals(eb, cet)
        return ((want - e.tolerance_ulp <= o) & (o <= want)).all(axis=1)

    def admits(self, e, part=slice(None)):
        o = ordinals(np.reshape(e.bits, -1)[part], e.type.element_type)
        return o - e.tolerance_ulp, o

    def ranged(self, e) -> bool:
        return e.tolerance_ulp > 0


BELOW = Below()
T = TensorType((3,), E_F32)
X = np.array([1.0, 2.0, -3.0], np.float32)


@pytest.fixture
def below(monkeypatch):
    monkeypatch.setitem(REGISTRY, BELOW.name, BELOW)   # registered for this test only
    return BELOW


def _down(x, n):
    for _ in range(n):
        x = np.nextafter(x, np.float32(-np.inf))
    return x


def test_the_judge_applies_a_kind_declared_outside_the_tree(below):
    e = Expectation.of(X, T, kind=below.name, tolerance_ulp=2)
    assert kind_of(e) is below
    assert compare(e, X).ok and compare(e, _down(X, 2)).ok
    assert not compare(e, _down(X, 3)).ok                          # one ULP past the allowance below
    assert not compare(e, np.nextafter(X, np.float32(np.inf))).ok   # and none above
    assert compare(e, _down(X, 1)).max_ulp == 1
    r = resolution(e)   # its width, from the kind's own range: 2 ULPs at every element
    assert r.stated and r.ulp_median == 2 and r.ulp_max == 2


def test_the_oracle_carries_a_kind_declared_outside_the_tree_through_add(below):
    x = Expectation.of(X, T, kind=below.name, tolerance_ulp=2)
    half = Expectation.of(np.full(3, 0.5, np.float32), T)
    inst = OPS["add"].instance({"lhs": T, "rhs": T}, results={"result": T})
    arrays = [x.array(), half.array()]
    (out,) = carry(run_arrays, inst, [x, half], run_arrays(inst, arrays), arrays)
    assert BOUNDED.judges(out)
    assert out.array().tolist() == (X + np.float32(0.5)).tolist()
    assert out.lo.view(np.float32).tolist() == (_down(X, 2) + np.float32(0.5)).tolist()
    assert out.hi.view(np.float32).tolist() == (X + np.float32(0.5)).tolist()
    assert out.lo.view(np.float32)[0] == np.float32(1.5 - 2.0 ** -23)   # by hand, as the docstring says
    assert compare(out, _down(X, 2) + np.float32(0.5)).ok
    assert not compare(out, np.nextafter(X + np.float32(0.5), np.float32(np.inf))).ok
