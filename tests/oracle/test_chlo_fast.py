"""The vectorised evaluations of CHLO's special functions
(oracle/real_functions.py: lgamma's series about 1 and 2 and its
reflection below 0, digamma's reflection, polygamma and Hurwitz zeta)
held to arb on the points where such evaluations go wrong — near the
zeros of lgamma and digamma, near the poles, at huge and tiny arguments,
at the edges of each formula's window — beside the random sample of
tests/oracle/test_fast.py.

Truth: arb's ball (FLINT's proven enclosure), raised in precision until
it is narrow, for the error bound; rigorous.evaluate (arb again, with
Ziv's escalation) for every element the fast path decides; the op's own
fn for the `Generic` claims of polygamma and zeta.  The zeros are found
here with mpmath's findroot, not taken from the code under test.
"""
from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from shlo_conform.oracle import fast, fastcheck, rigorous
from tests.oracle.points import approaching, log_abs_gamma as _log_abs_gamma, steps as _steps, zeros as _zeros
from shlo_conform.oracle.real_functions import TABLE
from shlo_conform.oracle.rounding import round_bits
from shlo_conform.spec.chlo import CHLO
from shlo_conform.spec.dsl import Approx
from shlo_conform.spec.types import BF16, F8E5M2, F16, F32, TensorType, element_type


FN = {TABLE[f].name: f for f in TABLE}
FORMATS = (F32, BF16, F16, F8E5M2)
BOUND = fast.FAST_REL_ERROR / 16   # what test_fast.py asks of every evaluation: a safety factor of 16 left


def _near(a: float) -> list:
    """Points approaching a from both sides (points.approaching) and the f32
    values next to it (the values a program of f32 holds there)."""
    f = np.float32(a)
    return approaching(a) + [float(np.nextafter(f, np.float32(s * np.inf))) for s in (1, -1)] + [float(f)]


def _lgamma_points() -> list:
    neg = [-n + s * d for n in range(2, 8) for s in (-1, 1) for d in (0.45, 0.25, 0.1)]
    zeros = _zeros(_log_abs_gamma, [(t - 0.01, t + 0.01) for t in
                                    (-2.457, -2.747, -3.1436, -3.9553, -4.0394, -4.9915, -5.0082)])
    zeros += _zeros(_log_abs_gamma, [(-6.002, -6.001), (-5.999, -5.998)])
    pts = (_near(1.0) + _near(2.0) + _steps(1 + 0.125) + _steps(1 - 0.125) + _steps(2 + 0.125) + _steps(2 - 0.125)
           + [p for z in zeros for p in _near(z)]
           + [p for n in range(0, 6) for p in _near(-float(n))]
           + np.linspace(-5, 0, 1001).tolist() + neg
           + [1e10, 1e100, 2.0 ** 1000, 1.7e308, 2.0 ** -1074, 2.0 ** -1000, 1e-300, -1e-300, -2.0 ** -1074,
              -(2.0 ** 40 + 0.5), -(1e15 + 0.5), -170.5, -171.25, 3.5, 0.5, 1e-8])
    return [p for p in pts if not (p <= 0 and p == round(p)) and p not in (1.0, 2.0)]   # poles, exact zeros


def _digamma_points() -> list:
    zeros = _zeros(mpmath.digamma, [(t - 0.01, t + 0.01) for t in (1.4616, -0.5040, -1.5735, -2.6107, -3.6352)])
    zeros += _zeros(mpmath.digamma, [(-n + 0.001, -n + 0.999) for n in (9, 12, 13, 20)])
    pts = ([p for z in zeros for p in _near(z)] + [p for n in range(0, 6) for p in _near(-float(n))]
           + np.linspace(-5, 3, 801).tolist() + [1e300, 1e10, 1e-300, -1e-300, 2.0 ** -1074, -(1e15 + 0.5)])
    return [p for p in pts if not (p <= 0 and p == round(p))]   # the poles


def _polygamma_points() -> tuple:
    xs = [2.0 ** -1074, 1e-300, 2.0 ** -30, 0.001, 0.5, 1.0, 1.4616, 3.0, 1e5, 1e100, 1e300]
    ns = [1, 2, 3, 4, 7, 11, 12, 30, 170, 171]   # 11 and 12: either side of the Euler–Maclaurin range
    return [float(n) for n in ns for _ in xs], [x for _ in ns for x in xs]


def _zeta_points() -> tuple:
    xs = [1 + 2.0 ** -40, 1 + 2.0 ** -20, 1.0009765625, 1.5, 2.0, 3.25, 10.0, 12.0, 12.0000019, 60.0, 500.0]
    qs = [2.0 ** -30, 1e-5, 0.3, 1.0, 7.5, 1e6, 1e20, 1e300]
    return [x for x in xs for _ in qs], [q for _ in xs for q in qs]


POINTS = {"lgamma": lambda: [_lgamma_points()], "digamma": lambda: [_digamma_points()],
          "polygamma": lambda: list(_polygamma_points()), "zeta": lambda: list(_zeta_points())}


def _relative_error(f, args: tuple, y: float) -> float:
    return fastcheck.relative_error(f, args, y)


@pytest.mark.parametrize("name", list(POINTS))
def test_the_evaluation_keeps_its_bound_where_it_answers(name):
    f = FN[name]
    cols = [np.asarray(c, dtype=np.float64) for c in POINTS[name]()]
    with np.errstate(all="ignore"):
        y = np.asarray(TABLE[f].numpy(*cols), dtype=np.float64)
    trusted = np.isfinite(y) & (np.abs(y) >= 2.0 ** -1000)
    assert trusted.mean() > 0.5, name   # the points near zeros and poles are mostly answered, not refused
    worst = 0.0
    for i in np.flatnonzero(trusted).tolist():
        args = tuple(float(c[i]) for c in cols)
        err = _relative_error(f, args, float(y[i]))
        assert err < BOUND, (name, args, float(y[i]), err)
        worst = max(worst, err)
    assert worst > 0   # the comparison saw the evaluation's own rounding: it could have failed


@pytest.mark.parametrize("name", list(POINTS))
def test_every_decision_on_the_hard_points_is_arbs(name):
    f = FN[name]
    cols = [np.asarray(c, dtype=np.float64) for c in POINTS[name]()]
    with np.errstate(all="ignore"):
        y = np.asarray(TABLE[f].numpy(*cols), dtype=np.float64)
    for fmt in FORMATS:
        ok, r = fast.decide(y, fmt, cols)
        assert ok.any(), (name, fmt.name)
        for i in np.flatnonzero(ok).tolist():
            args = tuple(float(c[i]) for c in cols)
            z = rigorous.evaluate(f, args, fmt)
            assert z is not None and z[2] and round_bits(float(r[i]), fmt) == z[0], (name, fmt.name, args, r[i], z)


def test_scipys_gammaln_alone_misses_the_bound_near_1_and_2():
    """Why lgamma has its own series there: gammaln's error is absolute
    near the zeros 1 and 2, so its relative error grows as x approaches
    them — the check above would catch it."""
    import scipy.special as sp
    f = FN["lgamma"]
    for x in (1 + 2.0 ** -30, 2 - 2.0 ** -30):
        assert _relative_error(f, (x,), float(sp.gammaln(x))) > BOUND, x


def test_the_reflections_refuse_what_they_cannot_state():
    """At the float64 nearest a negative zero of lgamma or digamma (past
    those with a series of their own) the terms of the reflection cancel:
    the evaluation answers NaN (arb decides), never a value with the wrong
    relative error."""
    lz = _zeros(_log_abs_gamma, [(-6.002, -6.001), (-5.999, -5.998), (-7.0003, -7.0001)])
    dz = _zeros(mpmath.digamma, [(-13.999, -13.001), (-14.999, -14.001)])
    assert np.isnan(TABLE[FN["lgamma"]].numpy(np.array(lz))).all()
    assert np.isnan(TABLE[FN["digamma"]].numpy(np.array(dz))).all()


@pytest.mark.parametrize("mnemonic", ["chlo.polygamma", "chlo.zeta"])
def test_the_generic_claim_is_the_ops_fn(mnemonic):
    """Where `where` holds, fn answers Approx(f, *operands) with the claim's
    f; where fn answers that at finite operands, `where` holds (so the whole
    array takes the fast route) — on every pair of a sample of f16 and f32
    values with the specials."""
    spec = CHLO[mnemonic]
    g = spec.semantics.generic
    rng = np.random.default_rng(11)
    special = [0.0, -0.0, 1.0, -1.0, 2.0, 0.5, -0.5, 1.5, 3.0, math.inf, -math.inf, math.nan, 5e-324, -2.5]
    for dt, name in ((np.float16, "f16"), (np.float32, "f32")):
        et = element_type(name)
        t = TensorType((), et)
        inst = spec.instance({o.name: t for o in spec.operands}, {}, {r.name: t for r in spec.results})
        bits = rng.integers(0, 1 << (8 * np.dtype(dt).itemsize), 3000).astype(f"u{np.dtype(dt).itemsize}")
        with np.errstate(invalid="ignore"):
            v = np.concatenate([bits.view(dt).astype(np.float64), special, [float(k) for k in range(1, 6)]])
        a = np.concatenate([rng.choice(v, 3000), np.repeat(special, len(special))])
        b = np.concatenate([rng.choice(v, 3000), np.tile(special, len(special))])
        if mnemonic == "chlo.polygamma":   # n: integers more often than random values give them
            a[:1500] = rng.integers(0, 8, 1500)
        with np.errstate(all="ignore"):
            mask = np.asarray(g.where(a, b), dtype=bool)
        assert mask.any() and not mask.all()
        for j in range(len(a)):
            got = spec.semantics.fn(inst, float(a[j]), float(b[j]))
            claimed = isinstance(got, Approx) and got.f is g.f
            assert claimed == bool(mask[j]), (name, a[j], b[j], got)
            if claimed:
                assert got.args == (float(a[j]), float(b[j]))
