"""f64 results of CHLO's special functions: the steps fast.py takes for the
elements the long double pass (oracle/chlo_long_double/) leaves undecided —
about 2-5% of them, those within that pass's bound (2^-58..2^-59.5) of a
binary64 rounding boundary — before MPFR and the per-element route.

1. A double-word refinement (`REFINE`): the function in float64 pairs with
   error-free transformations (dd.py) and a proven relative bound far below
   the long double pass's (polygamma.py: 2^-84), on the undecided elements
   only, decided by ddfast.decide; it leaves about none.
2. One arb ball per element still left, at 80 bits (ball.py): 2-25 µs an
   element where MPFR or the per-element route took 6-60.

Zeta also has a first pass of its own (`lead`, LEAD; fast.evaluate runs it
before the long double pass, which then sees only the elements it leaves
and those outside its domain): the Hurwitz zeta in double words
(zeta.py, Euler–Maclaurin with powers exp(-s·log b) of ddpow.py, proven
bound 2^-76.5, decided at 2^-72.5) for 1 < s <= 16 and 2^-20 <= q <= 2^40
— the long double pass cost about 1.5 µs an element there (powl), and
left about 5% to the balls.  It is also zeta's REFINE kernel, for the
route without the first pass (the FPU not rounding to nearest skips
both).

Each decision is proven — by the bound in the kernel's docstring, or by
arb's enclosure — and held against arb in tests/oracle/test_chlo_dd*.py;
decided values are the correctly rounded ones, so the oracle's results do
not change, only the time they take (bench/chlo_vs_tanh.py).
"""
from __future__ import annotations

import numpy as np

from .. import ddfast
from . import ball, cells, polygamma, zeta

# name -> kernel(args as float64 arrays) -> (h, lo, bound, domain mask)
REFINE: dict = {"polygamma": polygamma.pair, "zeta": zeta.pair}
# name -> the same kind of kernel, run on every element before the long double pass (`lead`)
# (zeta's returns (h, lo, bound, mask); the Taylor cells' (cells.py) (h, lo, rel, abs, mask), per element)
LEAD: dict = {"zeta": zeta.pair, **{name: cells.pair(name) for name in cells.SPECS}}
BALL = frozenset({"erf", "erfc", "erfinv", "lgamma", "digamma", "polygamma", "zeta", "i1e"})


def serves(name: str) -> bool:
    return name in REFINE or name in BALL


def leads(name: str) -> bool:
    """Whether `name` has a first pass here (fast.evaluate asks, for f64
    results, with the FPU rounding to nearest); off with `serves`."""
    return name in LEAD and serves(name)


def lead(name: str, args: list) -> tuple:
    """(decided mask, binary64 values) of f64 results of `name` by its
    LEAD kernel and ddfast.decide, on whole argument arrays (float64,
    broadcast together, flattened): decided only inside the kernel's
    domain and where the proven bound puts the value strictly inside one
    rounding interval.  The rest is for fast._evaluate's route."""
    cols = [np.asarray(a, dtype=np.float64).reshape(-1) for a in np.broadcast_arrays(*args)]
    with np.errstate(all="ignore"):
        got = LEAD[name](cols)
        if len(got) == 4:
            h, lo, bound, inside = got
            ok, r = ddfast.decide(h, lo, bound)
        else:
            h, lo, rel, ab, inside = got
            ok, r = ddfast.decide(h, lo, rel, ab)
    ok &= inside
    return ok, r


def refine(name: str, arb_fn, args: list, ok: np.ndarray, r: np.ndarray) -> None:
    """Decide, in place, elements of f64 results of `name` not yet `ok`:
    by the double-word kernel where there is one (and the FPU rounds to
    nearest), then by arb balls (module docstring).  args: float64 arrays."""
    kernel = REFINE.get(name)
    if kernel is not None and ddfast.rounds_to_nearest():
        todo = np.flatnonzero(~ok)
        if len(todo):
            with np.errstate(all="ignore"):
                h, lo, bound, inside = kernel([a[todo] for a in args])
                d, v = ddfast.decide(h, lo, bound)
            d &= inside
            ok[todo[d]] = True
            r[todo[d]] = v[d]
    if name in BALL and not ok.all():
        ball.correct(arb_fn, args, ok, r)
