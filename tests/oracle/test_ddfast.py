"""The double-double pass for f64 results (oracle/ddfast.py).

Truths: arb (fastcheck.check_dd holds every decision and the claimed bound
against its 160-bit balls; the full >= 10^6-input run is
bench/fast_vs_rigorous.py), and the route the oracle had before the pass
(long double and MPFR), whose bits the pass must reproduce
(bench/dd_identity.py runs 2^20 inputs an op).
"""
from __future__ import annotations

import ctypes
import ctypes.util

import mpmath
import numpy as np
import pytest

from shlo_conform.oracle import ddfast, fast, fastcheck
from shlo_conform.oracle.real_functions import TABLE
from shlo_conform.spec.types import F64

DD = [f for f in TABLE if TABLE[f].name in ddfast.KERNELS and TABLE[f].numpy is not None]


def test_every_kernel_serves_a_table_function():
    assert sorted(TABLE[f].name for f in DD) == sorted(ddfast.KERNELS)


@pytest.mark.parametrize("f", DD, ids=lambda f: TABLE[f].name)
def test_dd_decisions_agree_with_arb(f):
    rng = np.random.default_rng(5)
    r = fastcheck.check_dd(f, fastcheck.dd_inputs(f, 3000, rng))
    assert not r.mismatches, r.mismatches[:3]
    assert r.worst_rel_error < r.bound / 16, (r.worst_rel_error, r.bound)
    assert r.decided > 0.9 * r.inputs


def test_the_dd_cross_check_catches_an_error_beyond_the_bound(monkeypatch):
    """A cosine kernel off by 2^-58 relative must be caught: the bound check
    reports it, and decisions made on it disagree with arb."""
    good = ddfast.KERNELS["cos"]

    def bad(x):
        h, lo, scale, ab, ok = good[0](x)
        return h, lo + h * 2.0 ** -58, scale, ab, ok
    monkeypatch.setitem(ddfast.KERNELS, "cos", (bad, good[1]))
    rng = np.random.default_rng(6)
    r = fastcheck.check_dd(mpmath.cos, [rng.uniform(-10, 10, 5000)])
    assert r.worst_rel_error > r.bound
    assert r.mismatches


def _hard(name: str, rng, n: int) -> np.ndarray:
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 2.0 ** -1022, 1.7976931348623157e308,
                -1.0, 1.0, 2.0 ** 19, -2.0 ** 19, 300.0, -300.0, 708.0, 709.0, 709.79, -708.0, -745.0,
                2.0 ** -8, -2.0 ** -8, 0.75, 1.5, 1 - 2.0 ** -53, -1 + 2.0 ** -53, 2.0 ** 1000]
    with np.errstate(over="ignore"):
        near = [np.nextafter(v, d) for v in specials for d in (-np.inf, np.inf)]
    x = np.concatenate([np.array(specials + near, dtype=np.float64), rng.uniform(-20, 20, n),
                        rng.integers(0, 1 << 64, n, dtype=np.uint64).view(np.float64),
                        rng.choice([-1.0, 1.0], n) * np.exp2(rng.uniform(-60, 12, n))])
    return x


@pytest.mark.parametrize("f", DD, ids=lambda f: TABLE[f].name)
def test_dd_route_gives_the_bits_of_the_route_before_it(f, monkeypatch):
    """fast.evaluate for f64 results with the pass and without it (long
    double and MPFR alone): the same decided elements' bits, and the pass
    never decides what the route before it leaves to the op's statement
    (zero and non-finite arguments, NaN results)."""
    rng = np.random.default_rng(7)
    x = _hard(TABLE[f].name, rng, 3000)
    ok1, r1 = fast.evaluate(f, [x], F64)
    monkeypatch.setattr(ddfast, "KERNELS", {})
    ok0, r0 = fast.evaluate(f, [x], F64)
    assert (ok1 == ok0).all(), x[ok1 != ok0][:5]
    b1, b0 = r1[ok1].view(np.uint64), r0[ok0].view(np.uint64)
    assert (b1 == b0).all(), x[ok1][b1 != b0][:5]


def test_the_pass_declines_where_float64_does_not_round_to_nearest():
    """The FPU's rounding direction is per thread and any library may set
    it; the pass asks at each use and leaves everything to the route
    before it (which does not use float64 arithmetic to decide) then."""
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    fe_downward = 0x400   # x86-64
    assert ddfast.rounds_to_nearest()
    old = libm.fegetround()
    assert libm.fesetround(fe_downward) == 0
    try:
        assert not ddfast.rounds_to_nearest()
    finally:
        libm.fesetround(old)
    assert ddfast.rounds_to_nearest()
