"""Kind "ulp": within `tolerance_ulp` ULPs (per component for complex) of the
correctly rounded reference bits (spec/accuracy.py: our policy; the spec
guarantees no accuracy)."""
from __future__ import annotations

from . import Kind, register


class Ulp(Kind):
    name = "ulp"

    def describe(self, e) -> str:
        return f"within {e.tolerance_ulp} ulp of the correctly rounded value"

    def matches(self, e, cet, eb, ab, primary, elem_ulp):
        if elem_ulp is None:   # not a float type: the tolerance has nothing to count
            return (eb == ab).all(axis=1)
        return elem_ulp <= e.tolerance_ulp

    def check(self, e):
        return "close", ""


register(Ulp())
