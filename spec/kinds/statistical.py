"""Kind "statistical" (rng, rng_bit_generator): the values are the
implementation's; `statistical` holds the distribution tests the whole
output must pass (spec/statistics.py: range, DKW, bit frequencies, state
change) with their false-alarm probability.  No element is expected, so no
ULP is measured.  Where the oracle's sample follows a published algorithm
(`published`), whether the backend's bits are that algorithm's is reported
as a label — never part of the verdict."""
from __future__ import annotations

import numpy as np

from .. import statistics
from ..types import to_bits
from . import OMIT_DEFAULT, Comparison, Kind, KindField, register


class Statistical(Kind):
    name = "statistical"
    fields = (KindField("statistical", None, OMIT_DEFAULT, order=50),)   # the tests (spec/statistics.py)
    element_wise = False

    def describe(self, e) -> str:
        alpha = (e.statistical or {}).get("alpha")
        return "statistical: distribution tests" + (f" (false alarm ≤ {alpha:g})" if alpha else "")

    def judge(self, e, actual):
        et = e.type.element_type
        bits = to_bits(actual, et).astype(np.uint64)
        values = actual.astype(np.float64) if et.is_float else actual.astype(object)
        fmt = None
        if et.is_float:
            f = et.format
            fmt = (2.0 ** -f.mantissa_bits, float(f.min_subnormal))
        ok, detail = statistics.judge(e.statistical, values, bits, et.bits, fmt)
        used = []
        published = e.statistical.get("published")
        if published:
            same = np.array_equal(np.asarray(e.bits).astype(np.uint64).reshape(-1), bits.reshape(-1))
            used.append(f"{'same bits as' if same else 'other bits than'} {published}")
        return Comparison(ok, None, [], 0 if ok else 1, used, detail)

    def check(self, e):
        return None, "expectation 'statistical' (distribution tests): no check op states them"


STATISTICAL = register(Statistical())
