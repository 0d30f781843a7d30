"""Kind "bounded": each element (component) inside [`lo`, `hi`] by the
format's order (`spec.types.ordinals`; NaN only where a bound is NaN).
`bits` is the value nearest the exact result, from which the ULP distance
is reported.  For sums whose order is implementation-defined (every
schedule of the seed's reduce) and for results whose inputs were themselves
approximate (oracle/propagation.py).  An implementation-defined alternative
is one value, matched as "exact" matches (NaN is NaN)."""
from __future__ import annotations

import numpy as np

from ...spec.types import ordinals
from . import Kind, REGISTRY, nan_rows, register


def _rows(bits, et):
    return bits.reshape(-1, 2) if et.is_complex else bits.reshape(-1, 1)


class Bounded(Kind):
    name = "bounded"

    def describe(self, e) -> str:
        return "bounded: inside [lo, hi] per element (every allowed order of evaluation)"

    def matches(self, e, cet, eb, ab, primary, elem_ulp):
        if not primary:
            return REGISTRY["exact"].matches(e, cet, eb, ab, primary, elem_ulp)
        et = e.type.element_type
        lo, hi = _rows(e.lo, et), _rows(e.hi, et)
        o, olo, ohi = ordinals(ab, cet), ordinals(lo, cet), ordinals(hi, cet)
        inside = (olo <= o) & (o <= ohi)
        if cet.is_float:
            nan_a, nan_b = nan_rows(ab, cet.format), nan_rows(lo, cet.format) | nan_rows(hi, cet.format)
            inside = np.where(nan_b, nan_a, inside & ~nan_a)
        return np.asarray(inside, dtype=bool).all(axis=1)

    def enclosure(self, e):
        et = e.type.element_type
        return ordinals(np.reshape(e.lo, -1), et), ordinals(np.reshape(e.hi, -1), et)

    def check(self, e):
        return None, "expectation 'bounded' (an interval per element): no check op holds an interval"


register(Bounded())
