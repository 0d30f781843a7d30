"""oracle/chlo_fast_zeta.py — the first stage of chlo.zeta's and
chlo.polygamma's f32, f16 and bf16 results (fewer Euler–Maclaurin terms,
a looser proven bound) — and fast._staged, which decides with it and hands
the rest to the 2^-47 evaluation, held to arb (python-flint, FLINT's
proven balls; the Bernoulli numbers as FLINT's exact rationals).

* each row of each plan's table meets TRUNC at its worst point, computed
  in arb: the Euler–Maclaurin sum's truncation there is the bound's claim,
  and it is not far inside it either (the table is no looser than it must
  be by more than a factor the test states);
* the float64 values keep bound(fmt) against arb over the domain and its
  edges (s just above 1, s = 12, tiny and huge q);
* every element fast.evaluate decides through the two stages is the
  correctly rounded value rigorous.evaluate (arb) states, on a sample
  that includes the elements the first stage leaves to the second.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from flint import arb, ctx, fmpq

from shlo_conform.oracle import chlo_compiled as cc, chlo_fast_zeta as cfz, fast, fastcheck, rigorous
from shlo_conform.oracle.real_functions import TABLE
from shlo_conform.oracle.rounding import round_bits
from shlo_conform.spec.types import BF16, F16, F32

FN = {TABLE[f].name: f for f in TABLE}
PLANNED = (F32, F16, BF16)


@pytest.fixture(autouse=True)
def _every_size(monkeypatch):
    """The stage's loops are compiled (chlo_compiled.serves: arrays of
    MIN_ELEMENTS or more); these tests hold it on small samples too."""
    monkeypatch.setattr(cc, "MIN_ELEMENTS", 0)


def _em_sum(s: arb, z: arb, m: int) -> arb:
    """The Euler–Maclaurin sum for ζ(s, z) with N = 0 and m Bernoulli terms, in arb."""
    total = z ** (1 - s) / (s - 1) + z ** (-s) / 2
    for j in range(1, m + 1):
        total += arb(fmpq.bernoulli(2 * j)) / arb(2 * j).fac() * s.rising(2 * j - 1) * z ** (1 - s - 2 * j)
    return total


def _worst_points(fmt, prec: int):
    """(k, s, z) in arb at `prec` bits for each row k of fmt's plan: s = k/8
    and z = Z[k], where the row's truncation is largest (q = Z: no direct term)."""
    m, trunc = cfz.PLANS[fmt]
    table = cfz._table(m, trunc)
    old = ctx.prec
    ctx.prec = prec
    try:
        for k in range(cfz._ROWS + 1, len(table) - 1):
            yield k, arb(k) / cfz._ROWS, arb(float(table[k]))
    finally:
        ctx.prec = old


@pytest.mark.parametrize("fmt", PLANNED, ids=lambda f: f.name)
def test_each_row_meets_its_truncation_at_its_worst_point(fmt):
    """At s = k/8 and z = Z[k] (q = Z: no direct term) the truncation of
    the M-term sum, relative to ζ, is within TRUNC (the proven bound's
    claim, here measured), and above TRUNC/32 (measured: 0.06 to 0.38 of
    it), so a table made looser than its bound by that much would fail."""
    m, trunc = cfz.PLANS[fmt]
    for k, s, z in _worst_points(fmt, 200):
        exact = s.zeta(z)
        rel = float((abs(_em_sum(s, z, m) - exact) / exact).upper())
        assert trunc / 32 < rel <= trunc, (fmt.name, k, rel, trunc)


@pytest.mark.parametrize("fmt", PLANNED, ids=lambda f: f.name)
def test_the_kernel_at_each_rows_worst_point(fmt):
    """The float64 kernel where its truncation is largest: s just below
    k/8 (row k) and q = Z[k] (N = 0): within bound(fmt) of arb, and its
    error above TRUNC/32; and within 2^-46 of the M-term sum itself in
    arb (its rounding: _hurwitz_em's 2^-47 analysis), so the kernel sums
    exactly the plan's M terms (one fewer stays inside the loose bound)."""
    m, trunc = cfz.PLANS[fmt]
    table = cfz._table(m, trunc)
    k = np.arange(cfz._ROWS + 2, int(cfz._S_MAX) * cfz._ROWS + 1)
    s, q = np.nextafter(k / cfz._ROWS, 0), table[k]
    y, bound = cfz.zeta([s, q], fmt)
    old = ctx.prec
    ctx.prec = 200
    try:
        for i in range(len(k)):
            err = fastcheck.relative_error(FN["zeta"], (float(s[i]), float(q[i])), float(y[i]))
            assert trunc / 32 < err <= bound, (fmt.name, s[i], q[i], err)
            em = _em_sum(arb(float(s[i])), arb(float(q[i])), m)
            assert float((abs(em - arb(float(y[i]))) / em).upper()) < 2.0 ** -46, (fmt.name, s[i], q[i])
    finally:
        ctx.prec = old


@pytest.mark.parametrize("fmt", PLANNED, ids=lambda f: f.name)
def test_the_alternating_tail_is_small_beside_the_sum(fmt):
    """The rounding analysis (module docstring) takes the first Bernoulli
    term, s(s-1)/(12 z^2) of z^(1-s)/(s-1), at most 1/8 where z >= Z(s)."""
    m, trunc = cfz.PLANS[fmt]
    table = cfz._table(m, trunc)
    k = np.arange(cfz._ROWS + 1, int(cfz._S_MAX) * cfz._ROWS + 2)
    s = np.minimum(k / cfz._ROWS, cfz._S_MAX)
    assert (s * (s - 1) / (12 * table[k] ** 2)).max() <= 1 / 8


@pytest.mark.parametrize("fmt", PLANNED, ids=lambda f: f.name)
def test_the_bernoulli_terms_fall_at_each_rows_worst_point(fmt):
    """The rounding analysis's other half: at s = k/8, z = Z[k] the M
    terms fall, each at most 0.9 of the one before, and together stay
    under 1/8 of ζ (in arb).  More terms than the series converges for
    at the table's smallest z (M = 20 at f32's) would fail here."""
    m, _ = cfz.PLANS[fmt]
    for k, s, z in _worst_points(fmt, 100):
        terms = [abs(arb(fmpq.bernoulli(2 * j)) / arb(2 * j).fac() * s.rising(2 * j - 1) * z ** (1 - s - 2 * j))
                 for j in range(1, m + 1)]
        assert all(float((b / a).upper()) <= 0.9 for a, b in zip(terms, terms[1:])), (fmt.name, k)
        assert float((sum(terms) / s.zeta(z)).upper()) < 1 / 8, (fmt.name, k)


def _zeta_points(rng) -> tuple:
    ss = [1 + 2.0 ** -40, 1 + 2.0 ** -10, 1.0009765625, 1.125, 1.5, 2.0, 3.25, 7.0, 10.0, 11.875, 12.0]
    qs = [2.0 ** -30, 1e-5, 0.01, 0.3, 1.0, 2.5, 7.5, 23.9, 40.0, 1e6, 1e20, 1e300]
    s = [a for a in ss for _ in qs] + rng.uniform(1, 12, 300).tolist()
    q = [b for _ in ss for b in qs] + (10 ** rng.uniform(-3, 3, 300)).tolist()
    return np.array(s), np.array(q)


@pytest.mark.parametrize("fmt", PLANNED, ids=lambda f: f.name)
def test_the_values_keep_the_bound(fmt):
    s, q = _zeta_points(np.random.default_rng(5))
    y, bound = cfz.zeta([s, q], fmt)
    trusted = np.isfinite(y) & (np.abs(y) >= 2.0 ** -1000)
    assert trusted.mean() > 0.9 and bound == cfz.bound(fmt)
    worst = 0.0
    for i in np.flatnonzero(trusted).tolist():
        err = fastcheck.relative_error(FN["zeta"], (float(s[i]), float(q[i])), float(y[i]))
        assert err <= bound, (fmt.name, s[i], q[i], y[i], err)
        worst = max(worst, err)
    assert worst > cfz.PLANS[fmt][1] * 2.0 ** -16   # the truncation shows: fewer terms than _hurwitz_em's


def test_polygamma_is_n_factorial_times_zeta():
    n = np.array([1.0, 2, 3, 4, 7, 11, 12, 0, 1.5, 3])
    x = np.array([0.01, 0.5, 1.4616, 3.0, 30.0, 1e6, 2.0, 1.0, 1.0, -1.0])
    y, bound = cfz.polygamma([n, x], F32)
    for i in range(6):
        err = fastcheck.relative_error(FN["polygamma"], (float(n[i]), float(x[i])), float(y[i]))
        assert err <= bound, (n[i], x[i], y[i], err)
    assert np.isnan(y[6:]).all()   # n = 12 (s = 13, past the plan's 12), n = 0, n = 1.5, x < 0: the next stage's


def _values(fmt, rng, size):
    """Random arguments exact in fmt (f32, f16 or bf16), as float64."""
    dt = {F32: np.float32, F16: np.float16, BF16: ml_dtypes.bfloat16}[fmt]
    return (rng.uniform(1, 12, size).astype(dt).astype(np.float64),
            np.concatenate([rng.uniform(0.01, 30, size - 20), 10 ** rng.uniform(-6, 4, 20)]).astype(dt).astype(np.float64))


@pytest.mark.parametrize("fmt", PLANNED, ids=lambda f: f.name)
@pytest.mark.parametrize("name", ["zeta", "polygamma"])
def test_every_decision_of_the_two_stages_is_arbs(fmt, name):
    """fast.evaluate through _staged: each decided element is arb's
    correctly rounded value — among them elements the first stage left
    and the second decided (found here, in a sample of 2^17, by deciding
    the first stage's values alone), so both stages' decisions are held."""
    rng = np.random.default_rng(17)
    a, b = _values(fmt, rng, 1 << 17)
    if name == "polygamma":
        a = np.floor(a)
    f = FN[name]
    y1, bound = getattr(cfz, name)([a, b], fmt)   # polygamma's compiled cells (chlo_compiled) come first in
    # TABLE[f].narrow: the elements they leave get here, and fast.evaluate below runs all three stages
    first, _ = fast.decide(y1, fmt, [a, b], bound)
    assert first.mean() > 0.98, (fmt.name, name, first.mean())
    pick = np.concatenate([np.flatnonzero(~first)[:80], np.flatnonzero(first)[:40]])
    a, b = a[pick], b[pick]
    ok, r = fast.evaluate(f, [a, b], fmt)
    assert ok[:80].sum() >= 20, (fmt.name, name, ok[:80].sum())   # the second stage decided some the first left
    for i in np.flatnonzero(ok).tolist():
        args = (float(a[i]), float(b[i]))
        want = rigorous.evaluate(f, args, fmt)
        assert want is not None and want[2] and round_bits(float(r[i]), fmt) == want[0], (name, fmt.name, args)


def test_small_arrays_are_left_to_the_next_stage(monkeypatch):
    """Below chlo_compiled.MIN_ELEMENTS the stage declines (its loops'
    first use in a process costs more than _hurwitz_em on a few elements);
    from there on it serves."""
    monkeypatch.setattr(cc, "MIN_ELEMENTS", 1 << 14)
    for n, served in ((100, False), (1 << 14, True)):
        s, q = np.full(n, 2.5), np.full(n, 0.75)
        assert (cfz.zeta([s, q], F32) is not None) == served
        assert (cfz.polygamma([np.full(n, 2.0), q], F32) is not None) == served
