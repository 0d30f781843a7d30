"""Shared by the op tests: resolve an element answer to an mpmath number, independently of the oracle."""
from fractions import Fraction

import mpmath

from shlo_conform.spec.dsl import Approx


def real_value(v, dps=100):
    """An Approx evaluated at `dps` digits, or an exact value, as an mpf."""
    if isinstance(v, Approx):
        with mpmath.workdps(dps):
            return v.f(*[mpmath.mpf(a) if isinstance(a, float) else mpmath.mpf(a.numerator) / a.denominator
                         for a in v.args])
    if isinstance(v, Fraction):
        return mpmath.mpf(v.numerator) / v.denominator
    return mpmath.mpf(v)
