"""The steps fast.py takes for the f64 elements of CHLO's special functions
that the long double pass leaves (oracle/chlo_dd/): polygamma's
double-word refinement held to its proven bound, and every decision of the
refinement and of the arb balls held to rigorous.evaluate (arb with Ziv's
escalation, the per-element route's truth).  The arb balls used as truth
here are computed at 300 bits or more, independently of the code under
test; the inputs are random or adversarial (the direct-term count's steps,
the domain's edges), never values the code produced.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from flint import arb, ctx

from shlo_conform.oracle import chlo_dd, fast, rigorous
from shlo_conform.oracle.chlo_dd import ball, dd, polygamma
from shlo_conform.oracle.real_functions import TABLE
from shlo_conform.oracle.rounding import round_bits
from shlo_conform.spec.types import F64
from tests.oracle.points import steps

FN = {TABLE[f].name: f for f in TABLE}
LD = np.longdouble
# polygamma.py's analysed bound: 41 OP + 2^-87 + 2^-90 (its docstring), below 2^-86.8
ANALYSED = 41 * dd.OP + 2.0 ** -87 + 2.0 ** -90


def _dd_error(name: str, args: tuple, h: float, lo: float) -> float:
    """|h + lo - f(args)| / |f(args)|, an upper bound, from arb's ball at
    300 bits (raised until it carries 120 bits)."""
    old = ctx.prec
    try:
        for prec in (300, 1200):
            ctx.prec = prec
            b = TABLE[FN[name]].arb(*[arb(a) for a in args])
            if b.is_finite() and b.rel_accuracy_bits() >= 120:
                return float(((arb(h) + arb(lo) - b).abs_upper() / b.abs_lower()).upper())
    finally:
        ctx.prec = old
    raise AssertionError(f"arb's ball for {name}{args} stays wide")


def _polygamma_points(rng) -> tuple:
    """Random n in 1 … 6 with x uniform over (0, 30) (the bench's range),
    log-uniform over the whole domain [2^-20, 2^20], and adversarial x:
    16 - k and its neighbours (where the number of direct terms steps),
    the domain's ends, integers, halves."""
    xs = list(rng.uniform(0, 30, 1500)) + list(np.exp2(rng.uniform(-20, 20, 1500)))
    xs += [p for k in range(17) for p in steps(16.0 - k, 2) if p > 0]
    xs += steps(2.0 ** -20, 1)[::2] + steps(2.0 ** 20, 1)[::2][:2] + [0.5, 1.5, 1e-3, 15.999999, 1e5]
    xs = [x for x in xs if 2.0 ** -20 <= x <= 2.0 ** 20]
    ns = [float(n) for n in rng.integers(1, 7, len(xs))]
    return np.array(ns), np.array(xs)


def test_polygamma_pair_keeps_its_proven_bound():
    """Every element in the domain within the analysed bound (2^-86.8),
    itself seven times below the BOUND fast.py decides with; and the
    comparison sees the pair's own error (so it would see a larger one)."""
    n, x = _polygamma_points(np.random.default_rng(11))
    h, lo, bound, inside = polygamma.pair([n, x])
    assert inside.all() and bound == polygamma.BOUND
    assert ANALYSED < bound / 7
    worst = 0.0
    for i in range(len(x)):
        err = _dd_error("polygamma", (n[i], x[i]), h[i], lo[i])
        assert err < ANALYSED, (n[i], x[i], err)
        worst = max(worst, err)
    assert worst > 2.0 ** -110, worst


def test_polygamma_pair_off_by_2_to_the_minus_80_is_caught(monkeypatch):
    """The bound check above can fail: the pair moved by 2^-80 relative."""
    n, x = _polygamma_points(np.random.default_rng(12))
    h, lo, _, _ = polygamma.pair([n[:50], x[:50]])
    errs = [_dd_error("polygamma", (n[i], x[i]), h[i], lo[i] + h[i] * 2.0 ** -80) for i in range(50)]
    assert max(errs) > ANALYSED


def test_polygamma_domain():
    """Outside n = 1 … 6 integer, 2^-20 <= x <= 2^20 nothing is claimed."""
    n = np.array([0, 7, 1.5, 1, 1, 1, 2, np.nan, 1])
    x = np.array([1, 1, 1, 2.0 ** -21, 2.0 ** 21, 0, -1, 1, np.inf])
    assert not polygamma.pair([n, x])[3].any()


def _undecided(name: str, cols: list) -> tuple:
    """(ok, r) after the long double pass alone: the elements it leaves are
    those fast.py hands to chlo_dd."""
    f = FN[name]
    ldcols = [np.asarray(c, dtype=LD) for c in cols]
    with np.errstate(all="ignore"):
        y = np.asarray(TABLE[f].numpy_for(LD)(*ldcols), dtype=LD)
    return fast.decide(y, F64, ldcols, fast.bound_for(f, F64))


def _check_decisions(name: str, cols: list, ok: np.ndarray, r: np.ndarray, idx: np.ndarray) -> None:
    for i in idx.tolist():
        args = tuple(float(c[i]) for c in cols)
        z = rigorous.evaluate(FN[name], args, F64)
        assert z is not None and z[2], (name, args)
        assert round_bits(float(r[i]), F64) == z[0], (name, args, r[i])


def test_refinement_decides_what_the_long_double_pass_left_with_arbs_bits(monkeypatch):
    """polygamma over the bench's range: the long double pass leaves a few
    %; the double-word step alone (no arb balls) decides all of them, each
    with the bits rigorous.evaluate gives."""
    monkeypatch.setattr(chlo_dd, "BALL", frozenset())
    rng = np.random.default_rng(13)
    cols = [rng.integers(1, 7, 40000).astype(float), rng.uniform(0.01, 30, 40000)]
    ok, r = _undecided("polygamma", cols)
    left = np.flatnonzero(~ok)
    assert len(left) > 500
    chlo_dd.refine("polygamma", TABLE[FN["polygamma"]].arb, cols, ok, r)
    assert ok.all()
    _check_decisions("polygamma", cols, ok, r, left)


RANGES = {"erf": [(-5, 5)], "erfc": [(-4, 10)], "erfinv": [(-1, 1)], "lgamma": [(-10, 30)],
          "digamma": [(-10, 30)], "i1e": [(-30, 30)], "zeta": [(1, 10), (0.01, 30)],
          "polygamma": [(1, 5), (0.01, 30)]}


@pytest.mark.parametrize("name", sorted(chlo_dd.BALL))
def test_balls_decide_with_arbs_bits(monkeypatch, name):
    """Each function's arb-ball step (no double-word step) on what the
    long double pass left of random bench-range inputs: it decides nearly
    all, each with rigorous.evaluate's bits."""
    monkeypatch.setattr(chlo_dd, "REFINE", {})
    rng = np.random.default_rng(sorted(chlo_dd.BALL).index(name) + 20)
    cols = [rng.uniform(a, b, 6000) for a, b in RANGES[name]]
    if name == "polygamma":
        cols[0] = np.floor(cols[0])
    ok, r = _undecided(name, cols)
    left = np.flatnonzero(~ok)
    assert len(left) > 20, name
    chlo_dd.refine(name, TABLE[FN[name]].arb, cols, ok, r)
    done = left[ok[left]]
    assert len(done) >= 0.95 * len(left), (name, len(done), len(left))
    _check_decisions(name, cols, ok, r, done)


def test_ball_rounded_decides_only_inside_a_rounding_interval():
    """Hand-built balls: a point decides to itself; a ball on a midpoint
    (1 + 2^-53, or just below 1 at 1 - 2^-54, the gap below a power of
    two being half the one above) or straddling one never decides; one
    within the interval does, but at a power of two only within the
    smaller half-gap on either side; tiny and huge results are not decided."""
    old, ctx.prec = ctx.prec, 200
    try:
        one, u = arb(1), arb(2) ** -53
        assert ball.rounded(one) == 1.0
        assert ball.rounded(one + u) is None                          # a midpoint, exactly
        assert ball.rounded(arb(1 + 2.0 ** -52, 2.0 ** -53)) is None  # reaches the midpoint 1 + 2^-53
        assert ball.rounded(arb(1 + 2.0 ** -52, 2.0 ** -54)) == 1 + 2.0 ** -52
        assert ball.rounded(one - u / 2) is None                      # below 1: the midpoint 1 - 2^-54
        assert ball.rounded(one - u / 4) == 1.0                       # 2^-55 below 1: inside
        assert ball.rounded(one + 3 * u / 4) is None                  # inside above, but the test takes the smaller gap
        assert ball.rounded(one + u / 4) == 1.0
        assert ball.rounded(-(one + u / 4)) == -1.0
        assert ball.rounded(arb(3.0) + arb(2) ** -60) == 3.0
        assert ball.rounded(arb(2.0 ** -1001)) is None and ball.rounded(arb(2.0 ** 1001)) is None
        assert ball.rounded(arb(1.0, math.inf)) is None
    finally:
        ctx.prec = old


@pytest.mark.parametrize("name", ["erf", "polygamma", "zeta"])
def test_fast_evaluate_states_the_same_values_with_and_without(monkeypatch, name):
    """fast.evaluate with and without chlo_dd: the same value wherever both
    decide, and with it no element is left that was decided without."""
    f = FN[name]
    rng = np.random.default_rng(30)
    cols = [rng.uniform(a, b, 4000) for a, b in RANGES[name]]
    if name == "polygamma":
        cols[0] = np.floor(cols[0])
    ok1, r1 = fast.evaluate(f, cols, F64)
    monkeypatch.setattr(chlo_dd, "serves", lambda name: False)
    ok0, r0 = fast.evaluate(f, cols, F64)
    both = ok0 & ok1
    assert both.any()
    assert np.array_equal(r0[both].view(np.uint64), r1[both].view(np.uint64))
    assert not (ok0 & ~ok1).any()
