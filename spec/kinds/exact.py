"""Kind "exact": one bit pattern per element.  NaN matches any NaN unless the
expectation is bit-exact (values moved, not computed: data movement,
bitcast); signed zero is significant.  Its range is a point: nothing to
carry through a later op."""
from __future__ import annotations

import numpy as np

from ..types import nan_mask
from . import PLAIN, Kind, KindField, flat_ordinals, nan_rows, register


class Exact(Kind):
    name = "exact"
    fields = (KindField("bit_exact", False, PLAIN, order=11),)   # on every record since the format began
    pinned = True

    def describe(self, e) -> str:
        return "exact, bit for bit" if e.bit_exact else "exact"

    def matches(self, e, cet, eb, ab, primary, elem_ulp):
        if not cet.is_float or e.bit_exact:
            return (eb == ab).all(axis=1)
        return ((eb == ab) | (nan_rows(eb, cet.format) & nan_rows(ab, cet.format))).all(axis=1)

    def admits(self, e, part=slice(None)):
        o = flat_ordinals(e.bits, e, part)
        return o, o

    def ulps(self, e):
        return 0

    def check(self, e):
        return ("nan" if has_nan(e) else "eq"), ""


def has_nan(e) -> bool:
    """An exact, not bit-exact float expectation with a NaN element: a
    bitwise check would state the NaN's sign and payload too, which our
    rule does not (export writes it with NaNs matched as NaNs)."""
    et = e.type.element_type
    c = et.component if et.is_complex else et
    return (not e.bit_exact and c.is_float
            and bool(nan_mask(np.asarray(e.bits).astype(object), c.format).any()))


EXACT = register(Exact())
