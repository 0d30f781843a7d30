"""Kind "bounded": each element (component) inside [`lo`, `hi`] by the
format's order (`spec.types.ordinals`; NaN only where a bound is NaN).
`bits` is the value nearest the exact result, from which the ULP distance
is reported.  For sums whose order is implementation-defined (every
schedule of the seed's reduce) and for results whose inputs were themselves
approximate (oracle/propagation.py: what a ranged input becomes downstream).
An implementation-defined alternative is one value, matched as "exact"
matches (NaN is NaN)."""
from __future__ import annotations

import numpy as np

from ..types import ordinals
from . import BITS, Kind, KindField, flat_ordinals, nan_rows, register
from .exact import EXACT


def _rows(bits, et):
    return bits.reshape(-1, 2) if et.is_complex else bits.reshape(-1, 1)


class Bounded(Kind):
    name = "bounded"
    fields = (KindField("lo", None, BITS, order=40), KindField("hi", None, BITS, order=41))
    approximate = True
    holds_range = True

    def describe(self, e) -> str:
        return "bounded: inside [lo, hi] per element (every allowed order of evaluation)"

    def matches(self, e, cet, eb, ab, primary, elem_ulp):
        if not primary:
            return EXACT.matches(e, cet, eb, ab, primary, elem_ulp)
        et = e.type.element_type
        lo, hi = _rows(e.lo, et), _rows(e.hi, et)
        o, olo, ohi = ordinals(ab, cet), ordinals(lo, cet), ordinals(hi, cet)
        inside = (olo <= o) & (o <= ohi)
        if cet.is_float:
            nan_a, nan_b = nan_rows(ab, cet.format), nan_rows(lo, cet.format) | nan_rows(hi, cet.format)
            inside = np.where(nan_b, nan_a, inside & ~nan_a)
        return np.asarray(inside, dtype=bool).all(axis=1)

    def admits(self, e, part=slice(None)):
        return flat_ordinals(e.lo, e, part), flat_ordinals(e.hi, e, part)

    def ranged(self, e):
        return True

    def ends(self, e):
        return e.lo, e.hi

    def narrow(self, e, lo, hi):
        shape = np.shape(e.lo)
        e.lo, e.hi = np.reshape(lo, shape), np.reshape(hi, shape)

    def check(self, e):
        return None, "expectation 'bounded' (an interval per element): no check op holds an interval"


BOUNDED = register(Bounded())
