"""A test-only expectation kind, written as a module of spec/kinds/ is: its
fields and its rule, here and nowhere else — the proof of issue 33 that a
kind is one module (tests/spec/test_expectation_kinds.py imports it, which
registers it, and removes it afterwards).

The kind, "relative (test)": each element `a` within the relative error
`rel` of the stated value `b`, |a − b| ≤ rel·|b|, and never below the
per-element `floor` (a bit array of the output's type) — two fields no
built-in kind has, one of each JSON form a new kind may use (`rel` omitted
when unset, `floor` written as hex).  Real floats only.  The comparison is
made in exact rationals (`Fraction` of each float: every binary float is
one), so a boundary value is decided exactly, not by a float64 rounding of
rel·|b|.  NaN meets only a NaN stated value; an implementation-defined
alternative is judged by the same rule around its own value.

Not registered under spec/kinds/ (it would join every suite's registry); a
module of its own so that importing it is all the registering there is, as
for a kind there (spec/kinds/__init__.py imports each module by name)."""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from shlo_conform.spec.kinds import BITS, OMIT_DEFAULT, Kind, KindField, register
from shlo_conform.spec.types import from_bits


class Relative(Kind):
    name = "relative (test)"
    fields = (KindField("rel", None, OMIT_DEFAULT), KindField("floor", None, BITS))
    approximate = True

    def describe(self, e) -> str:
        return f"within relative error {e.rel:g} of the stated value, never below its floor"

    def matches(self, e, cet, eb, ab, primary, elem_ulp):
        want, got = from_bits(eb[:, 0], cet).astype(np.float64), from_bits(ab[:, 0], cet).astype(np.float64)
        floor = (from_bits(np.reshape(e.floor, -1), cet).astype(np.float64) if e.floor is not None
                 else np.full(len(want), -np.inf))
        return np.array([_meets(w, a, f, e.rel) for w, a, f in zip(want, got, floor)], dtype=bool)


def _meets(want: float, got: float, floor: float, rel: float) -> bool:
    if np.isnan(want) or np.isnan(got):
        return bool(np.isnan(want) and np.isnan(got))
    if np.isinf(want) or np.isinf(got):
        return want == got
    if got < floor:
        return False
    return abs(Fraction(got) - Fraction(want)) <= Fraction(rel) * abs(Fraction(want))


RELATIVE = register(Relative())
