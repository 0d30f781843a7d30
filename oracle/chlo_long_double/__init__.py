"""CHLO's special functions evaluated in x87 long double (64-bit
significand) on whole arrays, for f64 results: the pass of fast.py that
decides most elements before MPFR or arb take the rest one by one.

scipy.special's evaluations (real_functions.py) hold their bound in
float64 only, which cannot decide a binary64 rounding; these hold
fast.LD_REL_ERROR (2^-58 relative) the way numpy's long double sinl, expl
… do for the spec's own functions, with a safety factor of 16 measured
against arb (tests/oracle/test_chlo_long_double.py, bench/fast_vs_rigorous.py).
Each kernel takes and returns long double arrays and answers NaN where it
does not keep that bound (arb decides those elements).

`KERNELS` maps real_functions' names to the kernels and `REL_ERROR` to the
relative bound each module declares (16 times the worst error measured,
at most fast.LD_REL_ERROR); real_functions.py attaches both to the
function (`long_double_numpy`, `long_double_rel_error`).
"""
from __future__ import annotations

from . import bessel, error_function, gamma

KERNELS: dict = {}
REL_ERROR: dict = {}
for _module in (error_function, gamma, bessel):
    KERNELS.update(_module.KERNELS)
    REL_ERROR.update(dict.fromkeys(_module.KERNELS, _module.REL_ERROR))
