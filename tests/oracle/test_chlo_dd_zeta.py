"""f64 chlo.zeta's double-word first pass (oracle/chlo_dd/zeta.py, with the
powers of ddpow.py), in both plans (PRECISE, FAST): each kernel held to
its proven bound against arb at 300 bits or more, the Euler–Maclaurin
remainder bound against arb at 400 bits, every decision held against
rigorous.evaluate (arb with Ziv's escalation), the two-stage pass
(zeta.decided) against the precise plan alone, and fast.evaluate's results
with the pass compared bit for bit with the route before it (the long
double pass, the arb balls).  Inputs are random
or adversarial (s near 1 and at the cells' edges, q tiny, huge, at and
next to the steps of the direct-term count, bases next to 1 and at log's
cell edges), never values the code produced.
"""
from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest
from flint import arb, ctx

from shlo_conform.oracle import chlo_dd, ddfast, fast, rigorous
from shlo_conform.oracle.chlo_dd import ddpow, zeta, zeta_compiled
from shlo_conform.oracle.chlo_dd.dd import two_sum
from shlo_conform.oracle.real_functions import TABLE
from shlo_conform.oracle.rounding import round_bits
from shlo_conform.spec.types import F64
from tests.oracle.points import steps

FN = {TABLE[f].name: f for f in TABLE}
ZETA = FN["zeta"]


def _rel_error(value: arb, h: float, lo: float) -> float:
    """|h + lo - value| / |value|, an upper bound, from a ball of >= 120
    bits, formed at 300 bits (arb's operations round outward)."""
    assert value.is_finite() and value.rel_accuracy_bits() >= 120, value
    return _at(300, lambda: float(((arb(h) + arb(lo) - value).abs_upper() / value.abs_lower()).upper()))


def _at(prec: int, f):
    old, ctx.prec = ctx.prec, prec
    try:
        return f()
    finally:
        ctx.prec = old


# --------------------------------------------------------------------------
# ddpow: log to an absolute bound, exp and the power to relative ones
# --------------------------------------------------------------------------

def _bases(rng) -> np.ndarray:
    """Log-uniform over [2^-21, 2^41], near 1 (where log b is small but the
    bound is absolute), at log's cell edges 0.75 + i/1024 scaled by powers
    of two, and the domain's ends."""
    b = list(np.exp2(rng.uniform(-21, 41, 1500))) + list(1 + rng.uniform(-2.0 ** -8, 2.0 ** -8, 300))
    edges = [(0.75 + i / 1024) * 2.0 ** e for i in rng.integers(0, 768, 40) for e in (0, 1, -5, 20)]
    b += [p for e in edges for p in steps(e, 1)]
    b += steps(1.0, 2) + steps(1.5, 1) + steps(0.75, 1) + [2.0 ** -21, 2.0 ** 41, 2.0 ** 41 - 2.0 ** 30]
    return np.array([x for x in b if ddpow.B_LO <= x <= ddpow.B_HI])


def test_log_pair_keeps_its_absolute_bound():
    rng = np.random.default_rng(1)
    b = _bases(rng)
    lo = b * rng.uniform(-1, 1, len(b)) * 2.0 ** -53          # a low part, as TwoSum leaves one
    h, l = ddpow.log_pair(b, lo)
    worst = 0.0
    for i in range(len(b)):
        err = _at(300, lambda: float((arb(h[i]) + arb(l[i]) - (arb(b[i]) + arb(lo[i])).log()).abs_upper()))
        assert err < ddpow.LOG_ABS, (b[i], lo[i], err)
        worst = max(worst, err)
    assert worst > 2.0 ** -110, worst


def test_exp_pair_keeps_its_relative_bound():
    rng = np.random.default_rng(2)
    y = np.concatenate([rng.uniform(-ddpow.Y_MAX, ddpow.Y_MAX, 2000), rng.uniform(-0.01, 0.01, 200),
                        [0.0, ddpow.Y_MAX, -ddpow.Y_MAX, math.log(2) / 512, -math.log(2) / 512]])
    yl = np.array([two_sum(v, e)[1] for v, e in zip(y, y * rng.uniform(-1, 1, len(y)) * 2.0 ** -53)])
    yh = y
    h, l = ddpow.exp_pair(yh, yl)
    worst = 0.0
    for i in range(len(y)):
        err = _at(300, lambda: _rel_error((arb(yh[i]) + arb(yl[i])).exp(), h[i], l[i]))
        assert err < ddpow.EXP_REL, (yh[i], yl[i], err)
        worst = max(worst, err)
    assert worst > 2.0 ** -110, worst


def test_pow_neg_keeps_its_relative_bound():
    rng = np.random.default_rng(3)
    b = _bases(rng)
    s = rng.uniform(1, zeta.S_MAX, len(b))
    s[:20] = zeta.S_MAX
    keep = s * np.abs(np.log2(b)) <= 880
    b, s = b[keep], s[keep]
    bh, bl = two_sum(b, b * rng.uniform(-1, 1, len(b)) * 2.0 ** -53)
    h, l = ddpow.pow_neg(bh, bl, s)
    worst = 0.0
    for i in range(len(b)):
        err = _at(300, lambda: _rel_error((arb(bh[i]) + arb(bl[i])) ** -arb(s[i]), h[i], l[i]))
        assert err < ddpow.rel_bound(s[i]), (bh[i], s[i], err)
        worst = max(worst, err / ddpow.rel_bound(s[i]))
    assert worst > 2.0 ** -30, worst


# --------------------------------------------------------------------------
# zeta: the remainder bound, the pair's bound, the domain
# --------------------------------------------------------------------------

PLANS = {"precise": zeta.PRECISE, "fast": zeta.FAST}


@pytest.mark.parametrize("plan", PLANS)
@pytest.mark.parametrize("cell", [0, 7, 20, 35, 59])
def test_euler_maclaurin_remainder_is_within_twice_the_next_term(cell, plan):
    """At a cell's worst corner (s_hi, Z): arb's ζ(s, Z) at 400 bits
    against z^-s·(Z/(s-1) + 1/2 + Σ_{j<=J} t_j) summed in exact rationals
    — the remainder the bound 2ρ_(J+1) (relative to Z^(1-s)/(s-1)) claims;
    also below the plan's truncation bound (2^-82, 2^-69) every cell is
    built to, and (the claim not vacuous) above a thousandth of it.  (Not
    mpmath's ζ(s, q): at 40 digits it is off by 1.7e-14 at (11.37…, 6133.17).)"""
    p = PLANS[plan]
    z_cell = float(zeta.cells(p)[0][cell])
    s = Fraction(zeta.CELLS + cell + 1, zeta.CELLS)
    z = Fraction(z_cell)
    g = zeta._gammas()
    total, rising = z / (s - 1) + Fraction(1, 2), s
    for j in range(1, p.j + 1):
        total += g[j] * rising / z ** (2 * j - 1)
        rising *= (s + 2 * j - 1) * (s + 2 * j)
    rho = zeta._rhos(s, z, p.j)
    def exact(x: Fraction) -> arb:
        return arb(x.numerator) / x.denominator

    def check():
        sa, za = exact(s), arb(z_cell)
        remainder = abs(sa.zeta(za) * za ** sa - exact(total))        # |V + z^s·R - V|
        claim = 2 * exact(rho[p.j + 1]) * za / (sa - 1)
        assert remainder.rel_accuracy_bits() > 30 and claim.rel_accuracy_bits() > 30
        assert remainder < claim, (float(s), z_cell, remainder, claim)
        assert claim <= arb(p.trunc) * za / (sa - 1)
        assert remainder > claim / 1000

    _at(400, check)


@pytest.mark.parametrize("plan", PLANS)
def test_cells_bound_and_decision_bound(plan):
    """Every cell's analysed bound below the plan's; its decision bound is
    16 times it; FAST's cells start at smaller Z than PRECISE's."""
    p = PLANS[plan]
    bounds = zeta.cell_bounds(p)
    assert len(bounds) == (zeta.S_MAX - 1) * zeta.CELLS
    assert max(b for _, _, b in bounds) <= p.analysed
    assert p.bound == 16 * p.analysed
    assert (zeta.cells(zeta.FAST)[0] <= zeta.cells(zeta.PRECISE)[0]).all()
    assert zeta.BOUND == zeta.PRECISE.bound and zeta.ANALYSED == zeta.PRECISE.analysed


def test_a_plan_whose_cells_miss_their_bound_is_refused():
    """_cells checks each cell exactly: FAST's parameters with a total
    bound four times tighter fail the check (and are not used)."""
    tight = dataclasses.replace(zeta.FAST, analysed=zeta.FAST.analysed / 4, bound=zeta.FAST.bound / 4)
    with pytest.raises(AssertionError):
        zeta.cells(tight)


def _zeta_points(rng) -> tuple:
    """Random s over (1, 16] with q log-uniform over the domain and uniform
    over the bench's (0.01, 30); adversarial: s = 1 + 2^-k and at the
    cells' edges, q at the steps of N (Z - k and neighbours), q tiny and
    huge, integers and halves."""
    zs = zeta.cells()[0]
    s = list(rng.uniform(1, 16, 1200)) + list(rng.uniform(1, 10, 800))
    q = list(np.exp2(rng.uniform(-20, 40, 1200))) + list(rng.uniform(0.01, 30, 800))
    for k in (52, 40, 20, 8, 2):
        for qq in (2.0 ** -20, 0.3, 1.0, 7.5, 1e6):
            s.append(1 + 2.0 ** -k)
            q.append(qq)
    for i in range(0, 60, 3):
        for sv in steps(1 + (i + 1) / 4, 1):
            z = float(zs[min(i + (sv > 1 + (i + 1) / 4), 59)])
            for qq in steps(z - 3, 1) + steps(z, 1) + [z - 0.5, 2.0 ** -20, 2.0 ** 40]:
                s.append(sv)
                q.append(qq)
    s += [16.0, 16.0, 16.0, 2.0, 3.0]
    q += [2.0 ** -20, 2.0 ** 40, 1.0, 1.0, 2.0 ** 40]
    s, q = np.array(s), np.array(q)
    keep = (s > 1) & (s <= 16) & (q >= zeta.Q_LO) & (q <= zeta.Q_HI)
    return s[keep], q[keep]


def _zeta_arb(s: float, q: float) -> arb:
    for prec in (300, 1200):
        v = _at(prec, lambda: arb(s).zeta(arb(q)))
        if v.is_finite() and v.rel_accuracy_bits() >= 120:
            return v
    raise AssertionError(f"arb's ζ({s}, {q}) stays wide")


def test_zeta_pair_keeps_its_proven_bound():
    s, q = _zeta_points(np.random.default_rng(4))
    h, l, bound, inside = zeta.pair([s, q])
    assert inside.all() and bound == zeta.BOUND
    worst = 0.0
    for i in range(len(s)):
        err = _rel_error(_zeta_arb(s[i], q[i]), h[i], l[i])
        assert err < zeta.ANALYSED, (s[i], q[i], err)
        worst = max(worst, err)
    assert worst > 2.0 ** -110, worst


def test_zeta_pair_fast_keeps_its_proven_bound():
    """FAST's pair within its analysed 2^-66.5 of arb's ζ on the same
    points — and looser than PRECISE's somewhere (the plan is in use)."""
    s, q = _zeta_points(np.random.default_rng(8))
    h, l, bound, inside = zeta.pair_fast([s, q])
    assert inside.all() and bound == zeta.FAST.bound
    worst = 0.0
    for i in range(len(s)):
        err = _rel_error(_zeta_arb(s[i], q[i]), h[i], l[i])
        assert err < zeta.FAST.analysed, (s[i], q[i], err)
        worst = max(worst, err)
    assert worst > zeta.ANALYSED, worst


def test_zeta_pair_fast_off_by_2_to_the_minus_65_is_caught():
    """The check above can fail: FAST's pair moved by 2^-65 relative."""
    s, q = _zeta_points(np.random.default_rng(9))
    h, l, _, _ = zeta.pair_fast([s[:40], q[:40]])
    errs = [_rel_error(_zeta_arb(s[i], q[i]), h[i], l[i] + h[i] * 2.0 ** -65) for i in range(40)]
    assert max(errs) > zeta.FAST.analysed


def test_zeta_pair_off_by_2_to_the_minus_75_is_caught():
    """The check above can fail: the pair moved by 2^-75 relative."""
    s, q = _zeta_points(np.random.default_rng(5))
    h, l, _, _ = zeta.pair([s[:40], q[:40]])
    errs = [_rel_error(_zeta_arb(s[i], q[i]), h[i], l[i] + h[i] * 2.0 ** -75) for i in range(40)]
    assert max(errs) > zeta.ANALYSED


def test_zeta_domain():
    """Outside 1 < s <= 16, 2^-20 <= q <= 2^40 nothing is claimed."""
    s = np.array([1.0, np.nextafter(16, 17), 20, 2, 2, 2, 2, np.nan, 2, 0.5])
    q = np.array([1.0, 1, 1, np.nextafter(2.0 ** -20, 0), np.nextafter(2.0 ** 40, np.inf), -1, 0, 1, np.inf, 1])
    assert not zeta.pair([s, q])[3].any() and not zeta.pair_fast([s, q])[3].any()
    assert not zeta.decided([s, q])[0].any()
    edges = [np.array([np.nextafter(1, 2), 16.0]), np.array([2.0 ** -20, 2.0 ** 40])]
    assert zeta.pair(edges)[3].all() and zeta.pair_fast(edges)[3].all() and zeta.decided(edges)[0].all()


# --------------------------------------------------------------------------
# Decisions and the oracle's results
# --------------------------------------------------------------------------

def _near_boundaries(rng, n: int) -> tuple:
    """Bench-range inputs whose value the long double pass leaves
    undecided (within its 2^-58 of a rounding boundary): the hardest for
    any decision, found without the code under test."""
    s, q = rng.uniform(1, 10, n), rng.uniform(0.01, 30, n)
    ld = [np.asarray(c, dtype=np.longdouble) for c in (s, q)]
    with np.errstate(all="ignore"):
        y = np.asarray(TABLE[ZETA].numpy_for(np.longdouble)(*ld), dtype=np.longdouble)
    ok, _ = fast.decide(y, F64, ld, fast.bound_for(ZETA, F64))
    return s[~ok], q[~ok]


def test_lead_decisions_carry_rigorous_bits():
    """The first pass on elements near rounding boundaries and on
    adversarial points: every element it decides has rigorous.evaluate's
    bits, and it decides nearly all of them (its bound is 2^-72.5)."""
    rng = np.random.default_rng(6)
    s1, q1 = _near_boundaries(rng, 30000)
    s2, q2 = _zeta_points(rng)
    s, q = np.concatenate([s1, s2[::4]]), np.concatenate([q1, q2[::4]])
    assert len(s1) > 500
    ok, r = chlo_dd.lead("zeta", [s, q])
    assert ok.mean() > 0.99, ok.mean()
    for i in np.flatnonzero(ok).tolist():
        z = rigorous.evaluate(ZETA, (float(s[i]), float(q[i])), F64)
        assert z is not None and z[2], (s[i], q[i])
        assert round_bits(float(r[i]), F64) == z[0], (s[i], q[i], r[i])


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "numpy"])
def test_decided_takes_the_precise_plan_for_what_fast_leaves(monkeypatch, compiled):
    """zeta.decided on elements near rounding boundaries: FAST runs on all
    of them, PRECISE once, on a few of them (those FAST's 2^-62.5 leaves),
    and every decision carries rigorous.evaluate's bits — so the fallback
    is exercised, not only present; through the compiled loop and numpy's."""
    if not compiled:
        monkeypatch.setattr(zeta_compiled, "MIN_ELEMENTS", 1 << 40)
    calls = []
    real = zeta._values
    monkeypatch.setattr(zeta, "_values", lambda s, q, plan: calls.append((plan, len(s))) or real(s, q, plan))
    s, q = _near_boundaries(np.random.default_rng(10), 40000)
    ok, r = zeta.decided([s, q])
    fast_n = sum(n for p, n in calls if p == zeta.FAST)
    precise = [n for p, n in calls if p == zeta.PRECISE]
    assert fast_n == len(s) and len(precise) == 1 and 0 < precise[0] < len(s) / 4, (len(s), precise)
    assert ok.mean() > 0.99
    rng = np.random.default_rng(11)
    check = rng.choice(np.flatnonzero(ok), 300, replace=False)
    for i in check.tolist():
        z = rigorous.evaluate(ZETA, (float(s[i]), float(q[i])), F64)
        assert z is not None and z[2], (s[i], q[i])
        assert round_bits(float(r[i]), F64) == z[0], (s[i], q[i], r[i])


def test_decided_states_the_precise_plans_decisions():
    """zeta.decided against the precise plan alone (pair, ddfast.decide
    at BOUND, as the pass was): the same bits wherever the precise plan
    decides, and no element the precise plan decides is left — on the
    bench's ranges, the whole domain and the adversarial points."""
    rng = np.random.default_rng(12)
    s0, q0 = _zeta_points(rng)
    s = np.concatenate([rng.uniform(1, 10, 30000), rng.uniform(1, 16, 30000),
                        1 + np.exp2(-rng.uniform(1, 52, 5000)), s0])
    q = np.concatenate([rng.uniform(0.01, 30, 30000), np.exp2(rng.uniform(-20, 40, 30000)),
                        np.exp2(rng.uniform(-20, 40, 5000)), q0])
    ok, r = zeta.decided([s, q])
    h, lo, bound, inside = zeta.pair([s, q])
    ok0, r0 = ddfast.decide(h, lo, bound)
    ok0 &= inside
    assert not (ok0 & ~ok).any()
    assert np.array_equal(r[ok0].view(np.uint64), r0[ok0].view(np.uint64))


def test_lead_runs_in_fast_evaluate_and_is_switched_off_with_serves(monkeypatch):
    """fast.evaluate takes the pass for f64 zeta (the long double pass then
    sees only what it leaves); chlo_dd.serves off switches it off too."""
    seen = []
    real = chlo_dd.lead
    monkeypatch.setattr(chlo_dd, "lead", lambda name, args: seen.append(len(args[0])) or real(name, args))
    cols = [np.array([2.5, 3.0, 20.0]), np.array([0.5, 7.0, 1.0])]
    ok, _ = fast.evaluate(ZETA, cols, F64)
    assert seen == [3] and ok.all()
    monkeypatch.setattr(chlo_dd, "serves", lambda name: False)
    fast.evaluate(ZETA, cols, F64)
    assert seen == [3]


def test_fast_evaluate_states_the_same_bits_with_and_without_the_pass(monkeypatch):
    """fast.evaluate with the first pass and without it (the long double
    pass, zeta's refinement and the balls, as before): the same bits
    wherever both decide, and nothing decided before is left — on the
    bench's ranges, the domain's, and adversarial points."""
    rng = np.random.default_rng(7)
    s0, q0 = _zeta_points(rng)
    s = np.concatenate([rng.uniform(1, 10, 20000), np.exp2(rng.uniform(0, 4, 4000)), s0, [20.0, 40.0]])
    q = np.concatenate([rng.uniform(0.01, 30, 20000), np.exp2(rng.uniform(-20, 40, 4000)), q0, [0.5, 3.0]])
    ok1, r1 = fast.evaluate(ZETA, [s, q], F64)
    monkeypatch.setattr(chlo_dd, "LEAD", {})
    monkeypatch.setattr(chlo_dd, "REFINE", {k: v for k, v in chlo_dd.REFINE.items() if k != "zeta"})
    ok0, r0 = fast.evaluate(ZETA, [s, q], F64)
    both = ok0 & ok1
    assert both.mean() > 0.99
    assert np.array_equal(r0[both].view(np.uint64), r1[both].view(np.uint64))
    assert not (ok0 & ~ok1).any()


@pytest.mark.parametrize("plan", [zeta.FAST, zeta.PRECISE], ids=["FAST", "PRECISE"])
def test_the_compiled_loop_states_numpys_bits(plan):
    """zeta_compiled.values (oracle/kernels/zeta_dd.py: dd.py, ddpow.py and
    _bracket spelt again as scalar code) against zeta._zeta, the statement:
    the same bit patterns, head and tail, on the adversarial points and on
    random ones over the domain and the bench's ranges — one rule in two
    spellings, held here."""
    rng = np.random.default_rng(21)
    s0, q0 = _zeta_points(rng)
    s = np.concatenate([s0, rng.uniform(1, 16, 20000), rng.uniform(1, 10, 20000),
                        1 + np.exp2(-rng.uniform(1, 52, 2000))])
    q = np.concatenate([q0, np.exp2(rng.uniform(-20, 40, 20000)), rng.uniform(0.01, 30, 20000),
                        np.exp2(rng.uniform(-20, 40, 2000))])
    with np.errstate(all="ignore"):
        h0, l0 = zeta._zeta(s, q, plan)
    h, lo = zeta_compiled.values(s, q, plan, zeta.cells(plan), zeta.CELLS)
    assert np.array_equal(h.view(np.uint64), h0.view(np.uint64))
    assert np.array_equal(lo.view(np.uint64), l0.view(np.uint64))


def test_the_compiled_loop_serves_large_arrays_only(monkeypatch):
    """zeta._values takes the compiled loop from zeta_compiled.MIN_ELEMENTS
    on (its first load in a process costs more than numpy on a few
    elements), numpy's _zeta below."""
    used = []
    monkeypatch.setattr(zeta, "_zeta", lambda s, q, plan: used.append(len(s)) or (s, q))
    for n in (zeta_compiled.MIN_ELEMENTS - 1, zeta_compiled.MIN_ELEMENTS):
        zeta._values(np.full(n, 2.0), np.full(n, 1.0), zeta.FAST)
    assert used == [zeta_compiled.MIN_ELEMENTS - 1]
