"""The Taylor-cell first passes of f64 erf, erfc, lgamma, digamma and i1e
(oracle/chlo_dd/taylor.py, cells.py) held to the truth of arb at 300 bits
(raised until the ball carries 120 bits), computed independently of the
code under test: every pair within its proven bound (relative plus
absolute), and every decided element the correctly rounded value.  The
inputs are random over the benches' ranges and log-uniform over each
domain, and adversarial: the cells' ends and centres, binade edges, the
saturation points of erf and erfc, tiny and subnormal arguments, zeros of
lgamma (1, 2) and digamma (x0 = 1.4616…), and the elements the long
double pass leaves undecided (those near a binary64 rounding boundary)."""
from __future__ import annotations

import numpy as np
import pytest
from flint import arb, ctx

from shlo_conform.oracle import chlo_dd, fast
from shlo_conform.oracle.chlo_dd import cells, taylor
from shlo_conform.oracle.real_functions import TABLE
from shlo_conform.spec.types import F64
from tests.oracle.points import steps

FN = {TABLE[f].name: f for f in TABLE}
RANGES = {"erf": (-5, 5), "erfc": (-4, 10), "lgamma": (0.01, 30), "digamma": (0.01, 30), "i1e": (-30, 30)}
DIGAMMA_ZERO = 1.4616321449683623


def _truth(name: str, x: float) -> arb:
    old = ctx.prec
    try:
        for prec in (300, 1200):
            ctx.prec = prec
            b = TABLE[FN[name]].arb(arb(x))
            if b.is_finite() and (b.rel_accuracy_bits() >= 120 or b.rad() < arb(2.0) ** -1200):
                return b
    finally:
        ctx.prec = old
    raise AssertionError(f"arb's ball for {name}({x}) stays wide")


def _hard(name: str, rng) -> list:
    """Elements the long double pass leaves undecided: near a rounding boundary."""
    f = FN[name]
    lo, hi = RANGES[name]
    x = rng.uniform(lo, hi, 20000)
    with np.errstate(all="ignore"):
        y = np.asarray(TABLE[f].numpy_for(np.longdouble)(x.astype(np.longdouble)), dtype=np.longdouble)
    ok, _ = fast.decide(y, F64, [x.astype(np.longdouble)], fast.bound_for(f, F64))
    return list(x[~ok][:300])


def _points(name: str, rng) -> np.ndarray:
    tab = cells.table(name)
    spec = tab.spec
    lo, hi = RANGES[name]
    xs = list(rng.uniform(lo, hi, 400))
    mags = np.exp2(rng.uniform(spec.e0 - 2, spec.e1, 300))
    xs += list(mags) + list(-mags)
    pick = rng.choice(len(tab.center), 60, replace=False)
    for c, h in zip(tab.center[pick], tab.radius[pick]):
        xs += steps(float(c), 1) + steps(float(c + h), 1) + steps(float(c - h), 1)
    for e in range(spec.e0, spec.e1):
        xs += steps(2.0 ** e, 1) + steps(-(2.0 ** e), 1)
    xs += steps(cells.SATURATE, 2) + steps(-cells.SATURATE, 2) + steps(16.0, 1)
    xs += [5e-324, 2.0 ** -1022, 1e-300, 2.0 ** -500, 1e-20, -1e-20, 1e-5]
    xs += steps(1.0, 3) + steps(2.0, 3) + steps(DIGAMMA_ZERO, 3) + [1.0 + 2.0 ** -30, 2.0 - 2.0 ** -30]
    xs += _hard(name, rng)
    return np.array([x for x in xs if np.isfinite(x)])


def _rounds_to(b: arb, v: float) -> bool:
    """Whether every point of ball b rounds to nearest binary64 v (b well inside)."""
    a = abs(v)
    half = arb(np.spacing(a)) / 2 if a > 0 else arb(0)
    if a > 0 and float(np.frexp(a)[0]) == 0.5:
        half = half / 2
    return bool((b - arb(v)).abs_upper() < half)


@pytest.mark.parametrize("name", sorted(cells.SPECS))
def test_pair_keeps_its_proven_bound(name):
    rng = np.random.default_rng(7)
    x = _points(name, rng)
    h, lo, rel, ab, inside = taylor.evaluate(cells.table(name), x)
    assert inside.sum() > 0.5 * len(x)
    old = ctx.prec
    ctx.prec = 300
    try:
        for i in np.flatnonzero(inside):
            if np.abs(x[i]) >= cells.SATURATE and name in ("erf",):
                continue
            t = _truth(name, float(x[i]))
            got = arb(float(h[i])) + arb(float(lo[i]))
            err = (got - t).abs_upper()
            bound = got.abs_upper() * arb(float(rel[i])) + arb(float(ab[i]))
            assert err <= bound, (name, x[i], float(err), float(bound))
    finally:
        ctx.prec = old


@pytest.mark.parametrize("name", sorted(cells.SPECS))
def test_decisions_are_correctly_rounded(name):
    """chlo_dd.lead's decided values are arb's correctly rounded ones, the
    saturated erf/erfc values included, and it decides nearly everything
    in the benches' ranges (the elements near boundaries too)."""
    rng = np.random.default_rng(11)
    x = _points(name, rng)
    ok, r = chlo_dd.lead(name, [x])
    assert ok.mean() > 0.5
    for i in np.flatnonzero(ok):
        assert _rounds_to(_truth(name, float(x[i])), float(r[i])), (name, x[i], r[i])
    lo, hi = RANGES[name]
    y = rng.uniform(lo, hi, 1 << 14)
    ok, _ = chlo_dd.lead(name, [y])
    assert ok.mean() > 0.999


def test_outside_the_domain_nothing_is_decided():
    """NaN, infinities, zeros and arguments beyond the cells stay for the
    routes that state them (the op modules' special values, MPFR, arb)."""
    for name in cells.SPECS:
        x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e300, -1e300])
        ok, _ = chlo_dd.lead(name, [x])
        expect = {"erf": [False, False, False, False, False, True, True],
                  "erfc": [False, False, False, False, False, False, True]}.get(name, [False] * 7)
        assert list(ok) == expect, name
