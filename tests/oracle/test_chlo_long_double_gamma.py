"""The long double kernels of lgamma, digamma, polygamma and the Hurwitz
zeta (oracle/chlo_long_double/gamma.py), the f64 results' vectorised pass
of fast.py, held to arb.

Each kernel must stay within fast.LD_REL_ERROR / 16 = 2^-62 of the true
value wherever it answers (the factor 16 fast.py keeps in reserve), and
every element fast.decide accepts from it must carry arb's bits.  Truth:
arb's ball (python-flint) — on the random samples fastcheck.check's
160-bit reference (its error figure includes the ball's radius, so a
wide ball can only fail a test), on the adversarial points a ball whose
precision is raised from 256 bits until it is narrow, and
rigorous.evaluate (arb with Ziv's escalation) for the decisions there.
The zeros the kernels must meet are found here with mpmath's findroot,
independently of the module's own.
"""
from __future__ import annotations

import dataclasses
import math

import mpmath
import numpy as np
import pytest

from shlo_conform.oracle import fast, fastcheck, rigorous
from tests.oracle.points import approaching as _near, log_abs_gamma as _log_abs_gamma, steps as _steps, zeros as _zeros
from shlo_conform.oracle.chlo_long_double import gamma
from shlo_conform.oracle.real_functions import TABLE
from shlo_conform.oracle.rounding import round_bits
from shlo_conform.spec.types import F64

FN = {TABLE[f].name: f for f in TABLE}
BOUND = fast.LD_REL_ERROR / 16          # 2^-62
N_RANDOM = 50_000
LD = np.longdouble


# --------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------

def _positive(rng, n: int) -> np.ndarray:
    """n random finite positive binary64 values from random bit patterns:
    every binade equally likely (tiny, huge and everything between)."""
    bits = rng.integers(1, 0x7FF0000000000000, n, dtype=np.uint64)
    return bits.view(np.float64)


def _no_poles(x: np.ndarray) -> np.ndarray:
    return x[~((x <= 0) & (x == np.round(x)))]


def _random_columns(name: str, rng) -> list:
    """>= N_RANDOM arguments over the function's domain: half over every
    binade of x > 0, half over the benches' ranges."""
    h = N_RANDOM // 2
    if name in ("lgamma", "digamma"):
        return [_no_poles(np.concatenate([_positive(rng, h), rng.uniform(-10, 30, h + 100)]))[:N_RANDOM]]
    if name == "polygamma":
        return [rng.integers(1, 7, N_RANDOM).astype(np.float64),
                np.concatenate([_positive(rng, h), rng.uniform(0, 30, h)])]
    # zeta: s over (1, 40] (a quarter of them near 1, where the pole at s = 1 dominates), q > 0
    q = N_RANDOM // 4
    s = np.concatenate([rng.uniform(1, 40, N_RANDOM - q), 1 + np.exp2(rng.uniform(-30, 0, q))])
    x = np.concatenate([_positive(rng, h), rng.uniform(0, 30, h)])
    return [rng.permutation(s[s > 1]), x]




def _bucket_edges() -> list:
    """The edges between the tables' buckets (5-bit centres, rounded half
    up): (1 + (2i + 1)/64)·2^e ± a step, in every binade of the tables."""
    return [p for e in range(-10, 10) for i in range(32)
            for p in _steps((1 + (2 * i + 1) / 64) * 2.0 ** e, 1)]


_EDGES = [2.0 ** -10, 1024.0, 0.5]           # where one formula hands over to another


def _far_negative(n: int = 2000) -> list:
    """x from -10.5 to -10^15, log-uniform: the reflection formulas' range."""
    return (-np.exp(np.random.default_rng(7).uniform(math.log(10.5), math.log(1e15), n))).tolist()
_EXTREMES = [5e-324, 2.0 ** -1022, 1e-300, 2.0 ** -60, 1e-20, 1e20, 2.0 ** 62, 2.0 ** 64, 1e300, 1.7e308]


def _lgamma_points() -> list:
    zeros = _zeros(_log_abs_gamma, [(t - 0.01, t + 0.01) for t in (-2.457, -2.747, -3.1436, -3.9553,
                                                                     -4.0394, -4.9915, -5.0082)])
    zeros += _zeros(_log_abs_gamma, [(-5.9988, -5.9984), (-6.0016, -6.0012), (-6.99985, -6.99975),
                                     (-7.00025, -7.00015)])
    windows = [z + s * d / 32 for z, d in [(1.0, 1.0), (2.0, 2.0)] for s in (1, -1)]
    windows += [z + s * abs(z - round(z)) / 32 for z in zeros for s in (1, -1)]
    pts = (_near(1.0) + _near(2.0) + [p for z in zeros for p in _near(z, 8)]
           + [p for w in windows for p in _steps(w, 2)]
           + [p for n in range(0, 13) for p in _near(-float(n))]
           + [p for e in _EDGES for v in (e, -e, -10 - e) for p in _steps(v)]
           + [-n - 0.5 for n in range(25)] + _bucket_edges()[::3]
           + _EXTREMES + [-x for x in _EXTREMES[:4]]
           + [-(2.0 ** 40 + 0.5), -(1e15 + 0.5), -170.5, -171.25, -11.3, -20.7, -1000.1, -10.5000001]
           + _far_negative())
    return [p for p in pts if not (p <= 0 and p == round(p)) and p not in (1.0, 2.0)]


def _digamma_points() -> list:
    zeros = _zeros(mpmath.digamma, [(1.46, 1.47)] + [(-n - 0.999, -n - 0.001) for n in range(13)])
    windows = [z + s * (abs(z - round(z)) if z < 0 else z) / 32 for z in zeros for s in (1, -1)]
    pts = ([p for z in zeros for p in _near(z, 6)] + [p for w in windows for p in _steps(w, 2)]
           + [p for n in range(0, 13) for p in _near(-float(n))]
           + [p for e in _EDGES for v in (e, -e, -10 - e) for p in _steps(v)]
           + [-n - 0.5 for n in range(25)] + _bucket_edges()[::3]
           + _EXTREMES + [-x for x in _EXTREMES[:4]]
           + [-(2.0 ** 40 + 0.5), -(1e15 + 0.5), -12.25, -20.7, -1000.1, -10.5000001]
           + _far_negative())
    return [p for p in pts if not (p <= 0 and p == round(p))]


def _polygamma_points() -> tuple:
    xs = ([p for e in (2.0 ** -10, 1024.0) for p in _steps(e)] + _EXTREMES + _bucket_edges()[::8]
          + [0.001, 0.5, 1.0, 1.4616, 3.0, 11.3, 1e5])
    ns = [1, 2, 3, 4, 5, 6, 7, 12, 25]
    return [float(n) for n in ns for _ in xs], [x for _ in ns for x in xs]


def _zeta_points() -> tuple:
    ss = [1 + 2.0 ** -40, 1 + 2.0 ** -20, 1.0009765625, 1.5, 2.0, 3.0, 3.9999999999999996, 4.0, 7.25, 12.0,
          25.5, 40.0, 63.75, 64.0]
    pairs = []
    for s in ss:
        z = max(8 + s / 2, 8.8 + 0.4 * s)          # where the Euler–Maclaurin tail starts
        for q in [2.0 ** -30, 1e-5, 0.3, 1.0, 7.5, 1e6, 1e20, 1e300] + _steps(z, 1) + _steps(z - 1, 1):
            pairs.append((s, q))
    return [p[0] for p in pairs], [p[1] for p in pairs]


POINTS = {"lgamma": lambda: [_lgamma_points()], "digamma": lambda: [_digamma_points()],
          "polygamma": lambda: list(_polygamma_points()), "zeta": lambda: list(_zeta_points())}


# --------------------------------------------------------------------------
# Truth
# --------------------------------------------------------------------------

def _relative_error(f, args: tuple, y) -> float:
    """An upper bound on |y - f(args)| / |y| from arb's ball, from 256 bits up."""
    return fastcheck.relative_error(f, args, y, (256, 1024, 4096), 90)


def _kernel(name: str, cols: list) -> np.ndarray:
    return np.asarray(TABLE[FN[name]].numpy_for(LD)(*[np.asarray(c, dtype=LD) for c in cols]), dtype=LD)


# --------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------

def test_the_kernels_are_the_long_double_evaluations():
    """real_functions attaches them: f64 results of these four take the
    long double pass (fast.working_for), not MPFR or arb alone."""
    for name in ("lgamma", "digamma", "polygamma", "zeta"):
        assert TABLE[FN[name]].numpy_for(LD) is gamma.KERNELS[name]
        assert fast.working_for(FN[name], F64) is not None


@pytest.mark.parametrize("name", ["lgamma", "digamma", "polygamma", "zeta"])
def test_random_points_keep_the_bound_and_every_decision_is_arbs(name):
    rng = np.random.default_rng({"lgamma": 1, "digamma": 2, "polygamma": 3, "zeta": 4}[name])
    cols = _random_columns(name, rng)
    assert len(cols[0]) >= N_RANDOM
    res = fastcheck.check(FN[name], F64, cols)
    assert res.worst_rel_error < BOUND, (name, math.log2(res.worst_rel_error))
    assert res.worst_rel_error > 2.0 ** -68, name    # the comparison saw the kernel's own rounding
    assert not res.mismatches, (name, res.mismatches[:5])
    assert res.decided > 0.8 * res.inputs, (name, res.decided / res.inputs)


@pytest.mark.parametrize("name", ["lgamma", "digamma", "polygamma", "zeta"])
def test_adversarial_points_keep_the_bound_and_every_decision_is_arbs(name):
    """Zeros (lgamma at 1, 2 and between -2 and -7; digamma's), their
    windows' edges, poles approached from both sides, tiny and huge
    arguments, the edges of the tables and of their buckets, s near 1 and
    at the integers where powl changes algorithm, q where the
    Euler–Maclaurin tail takes over."""
    f = FN[name]
    cols = [np.asarray(c, dtype=np.float64) for c in POINTS[name]()]
    with np.errstate(all="ignore"):
        y = _kernel(name, cols)
        answered = np.isfinite(y) & (np.abs(y) >= fast.working(F64)[2])
    assert answered.mean() > 0.8, (name, answered.mean())
    worst = 0.0
    for i in np.flatnonzero(answered).tolist():
        args = tuple(float(c[i]) for c in cols)
        err = _relative_error(f, args, y[i])
        assert err < BOUND, (name, args, err)
        worst = max(worst, err)
    assert worst > 2.0 ** -68
    ok, r = fast.decide(y, F64, [c.astype(LD) for c in cols])
    assert ok.mean() > 0.7, (name, ok.mean())
    for i in np.flatnonzero(ok).tolist():
        args = tuple(float(c[i]) for c in cols)
        z = rigorous.evaluate(f, args, F64)
        assert z is not None and z[2] and round_bits(float(r[i]), F64) == z[0], (name, args, r[i], z)


def test_a_kernel_off_by_2_to_the_minus_56_is_caught(monkeypatch):
    """The checks above can fail: lgamma's kernel made 2^-56 too large
    (four times fast.LD_REL_ERROR) breaks both the bound and decisions."""
    f = FN["lgamma"]
    good = TABLE[f].long_double_numpy
    off = dataclasses.replace(TABLE[f], long_double_numpy=lambda x: good(x) * (1 + LD(2) ** -56))
    monkeypatch.setitem(TABLE, f, off)
    cols = [np.random.default_rng(5).uniform(-10, 30, 3000)]
    res = fastcheck.check(f, F64, cols)
    assert res.worst_rel_error > BOUND
    assert res.mismatches


def test_the_euler_maclaurin_tail_is_short_enough():
    """From z = Z(s) (gamma._em_start) on, the 31st Bernoulli term of the
    tail is below 2^-75 of its bracket z/(s-1) + ½ for every 1 < s <= 64
    (the kernel stops at 30 terms), and the tail's own stopping test is
    met by then (mpmath at 40 digits)."""
    with mpmath.workdps(40):
        for s in [1 + 2.0 ** -40, 1.0001] + list(np.linspace(1.01, 64, 80)):
            z = float(gamma._em_start(np.array([s]))[0])
            S, Z = mpmath.mpf(s), mpmath.mpf(z)
            w = S / Z
            for j in range(1, 31):
                w *= (S + 2 * j - 1) * (S + 2 * j) / Z ** 2
            term = abs(mpmath.bernoulli(62) / mpmath.factorial(62) * w)
            assert term < mpmath.mpf(2) ** -75 * (Z / (S - 1) + 0.5), s


def test_the_kernels_refuse_what_they_cannot_state():
    """NaN (fast.py leaves those to MPFR or arb) at the poles, outside the
    kernels' domains (x <= 0 for polygamma, s <= 1 or > 64 and q <= 0 for
    zeta, n not an integer in 1 … 25), and where lgamma's terms cancel:
    the binary64 values nearest its zeros next to -7, inside the near-pole
    region (within 2^-10 of the pole), where no window takes them."""
    with np.errstate(all="ignore"):
        zeros = _zeros(_log_abs_gamma, [(-6.99985, -6.99975), (-7.00025, -7.00015)])
        assert np.isnan(gamma.lgamma(np.array(zeros))).all()
        assert np.isnan(gamma.lgamma(np.array([0.0, -1.0, -7.0, -1e20, np.inf, np.nan]))).all()
        assert np.isnan(gamma.digamma(np.array([-0.0, -3.0, -np.inf, np.nan]))).all()
        assert np.isnan(gamma.polygamma(np.array([1.0, 1.5, 0.0, 26.0, 2.0]),
                                        np.array([-0.5, 1.0, 1.0, 1.0, np.inf]))).all()
        assert np.isnan(gamma.zeta(np.array([1.0, 0.5, 64.5, 2.0, 2.0, np.inf]),
                                   np.array([1.0, 1.0, 1.0, 0.0, -0.5, 1.0]))).all()
