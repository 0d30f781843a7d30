"""The long double kernels of CHLO's erf, erfc, erf_inv and bessel_i1e
(oracle/chlo_long_double/error_function.py and bessel.py), which decide f64
results in fast.py's long double pass.

Truth: arb at 200 bits (FLINT's proven enclosures: erf, erfc, erfinv, and
the exponentially scaled I₁, which stays narrow where e^(-|x|)·I₁(x) as a
product would not), for the error bound 2^-62 = fast.LD_REL_ERROR / 16 that
each kernel must keep on every point, random and adversarial; and
fastcheck.check (arb again, and rigorous.evaluate where arb's 160-bit ball
is too close to call) for every decision fast.decide makes on the kernels'
values.  The adversarial points are the ends of each kernel's branches and
of its tables' intervals (± a few ulps), the arguments where the function
underflows float64 or long double, erf_inv's arguments next to ±1 and 0, and
subnormal and huge arguments.
"""
from __future__ import annotations

import dataclasses
import math

import mpmath
import numpy as np
import pytest
from flint import arb, ctx

from shlo_conform.oracle import fast, fastcheck
from tests.oracle.points import steps as _steps
from shlo_conform.oracle.chlo_long_double import bessel, error_function
from shlo_conform.oracle.real_functions import TABLE
from shlo_conform.spec.chlo.bessel_i1e import i1e
from shlo_conform.spec.types import F64, long_double_exact

LD = np.longdouble
BOUND = fast.LD_REL_ERROR / 16             # 2^-62
LD_TINY = np.ldexp(LD(1), -16300)          # fast.py's smallest trusted long double magnitude
NAMES = {"erf": mpmath.erf, "erfc": mpmath.erfc, "erf_inv": mpmath.erfinv, "bessel_i1e": i1e}
KERNEL = {"erf": error_function.erf, "erfc": error_function.erfc, "erf_inv": error_function.erfinv,
          "bessel_i1e": bessel.i1e}
N = 20_000

def test_long_double_has_its_64_bits():
    assert long_double_exact()


def _truth(name: str, x: float) -> arb:
    if name == "erf":
        return arb(x).erf()
    if name == "erfc":
        return arb(x).erfc()
    if name == "erf_inv":
        return arb(x).erfinv()
    return math.copysign(1, x) * arb(abs(x)).bessel_i(1, scaled=True)


def measure(name: str, x: np.ndarray, kernel=None) -> tuple:
    """(worst relative error of the kernel's values against arb at 200 bits,
    the arguments where it answered NaN, the arguments where it answered a
    value below long double's trusted range whose truth is not below it)."""
    kernel = kernel or KERNEL[name]
    y = kernel(x.astype(LD))
    worst, refused, bad_zero = 0.0, [], []
    old, ctx.prec = ctx.prec, 200
    try:
        for xi, yi in zip(x.tolist(), y):
            t = _truth(name, xi)
            if np.isnan(yi):
                refused.append(xi)
            elif abs(yi) < LD_TINY:
                if not abs(t).upper() < arb(2) ** -16300:
                    bad_zero.append(xi)
            else:
                assert t.rel_accuracy_bits() > 150, (name, xi)
                worst = max(worst, float(((fastcheck.exact_arb(yi) - t).abs_upper() / t.abs_lower()).upper()))
    finally:
        ctx.prec = old
    return worst, refused, bad_zero


# --------------------------------------------------------------------------
# Points
# --------------------------------------------------------------------------

def _signs(rng, n):
    return rng.choice([-1.0, 1.0], n)


def _bits(rng, n):
    v = rng.integers(0, 1 << 64, n, dtype=np.uint64).view(np.float64)
    return v[np.isfinite(v)]


def random_points(name: str, n: int = N, seed: int = 0) -> np.ndarray:
    """n arguments: a quarter each uniform over the function's usual range,
    uniform over a wider one, log-uniform magnitudes (subnormal to large)
    of both signs, and random bit patterns (within the domain)."""
    rng = np.random.default_rng(seed)
    q = n // 4
    if name == "erf":
        parts = [rng.uniform(-6, 6, q), rng.uniform(-10, 10, q), _signs(rng, q) * np.exp2(rng.uniform(-1074, 4, q))]
    elif name == "erfc":
        parts = [rng.uniform(-6, 30, q), rng.uniform(-10, 110, q), _signs(rng, q) * np.exp2(rng.uniform(-1074, 7, q))]
    elif name == "erf_inv":
        parts = [rng.uniform(-1, 1, q), _signs(rng, q) * np.exp2(rng.uniform(-1074, 0, q)),
                 _signs(rng, q) * (1 - np.exp2(rng.uniform(-53, -1, q)))]
    else:
        parts = [rng.uniform(-30, 30, q), rng.uniform(-1000, 1000, q),
                 _signs(rng, q) * np.exp2(rng.uniform(-1074, 1023, q))]
    b = _bits(rng, 4 * q)
    if name == "erf_inv":
        b = b[np.abs(b) < 1]
    parts.append(b[: n - 3 * q])
    x = np.concatenate(parts)
    x = x[(x != 0) & np.isfinite(x) & (np.abs(x) < 1 if name == "erf_inv" else True)]
    return x




def _around(points, k: int = 2) -> list:
    return [p for a in points for p in _steps(float(a), k)]


def _grid(*segments) -> list:
    """Every edge of intervals of width w over [start, stop) for each (start, stop, w)."""
    return [e for s, t, w in segments for e in np.arange(s, t + w / 2, w).tolist()]


TINY = [2.0 ** -1074, 3 * 2.0 ** -1074, 2.0 ** -1060, 2.0 ** -1022 - 2.0 ** -1074, 2.0 ** -1022, 1e-300,
        2.0 ** -600, 2.0 ** -100, 2.0 ** -34, 2.0 ** -33, 1e-10, 1e-5]
HUGE = [1e10, 2.0 ** 52, 1e100, 1e300, 2.0 ** 1023, 1e308, 1.5e308, 1.7976931348623157e308]


def _erf_inv_edges() -> list:
    """erf_inv's arguments whose Newton step evaluates erf or erfc at the
    ends of their tables' intervals: erf (or 1 - erfc) of those ends, from arb."""
    old, ctx.prec = ctx.prec, 200
    try:
        xs = _grid((0.125, 2, 1 / 32), (2, 6, 1 / 16))
        return [float(arb(x).erf()) for x in xs if x < 5.8]
    finally:
        ctx.prec = old


def adversarial_points(name: str) -> np.ndarray:
    if name == "erf":
        pts = (TINY + HUGE + _around([0.125, 2.0, 7.0], 3) + _around(_grid((0.125, 2, 1 / 32), (2, 7, 1 / 16)))
               + np.linspace(5.5, 6.5, 401).tolist() + _around([0.4769362762044699, 5.863, 5.9215, 6.0]) + [8.0, 30.0])
    elif name == "erfc":
        pts = (TINY + HUGE + _around([0.125, 0.5, 2.0, 7.0, 26.5, 27.0, 27.25, 106.5, 107.0], 3)
               + _around(_grid((0.125, 0.5, 1 / 32), (0.5, 8, 1 / 16), (8, 32, 1 / 4), (32, 108, 1)))
               + np.linspace(25.5, 27.5, 401).tolist() + np.linspace(105, 108, 121).tolist() + [1e3])
        pts += [-p for p in _around([0.125, 2.0, 7.0], 3) + _around(_grid((0.125, 2, 1 / 32), (2, 7, 1 / 16)))
                + TINY + HUGE + [0.3, 1.0, 5.9, 6.5]]
    elif name == "erf_inv":
        near_one = [1 - k * 2.0 ** -53 for k in range(1, 65)] + [1 - 2.0 ** -j for j in range(1, 54)]
        pts = (near_one + TINY + _around([2.0 ** -33, 0.5, 0.6875, 0.25, 2.0 ** -20], 3) + _erf_inv_edges()
               + np.linspace(-0.999, 0.999, 2001).tolist())
        pts = [p for p in pts if abs(p) < 1]
    else:
        pts = (TINY + HUGE + _around([0.125, 2.0, 8.0, 32.0, 128.0], 3)
               + _around(_grid((0.125, 2, 1 / 16), (2, 8, 1 / 8), (8, 32, 1 / 4), (32, 128, 1)))
               + _around([2.0 ** k for k in range(7, 1024, 37)] + [4.0 ** k for k in range(4, 500, 41)])
               + [129.0, 1000.0, 1e5, 3e7])
    pts = [p for p in pts if p != 0]
    if name != "erfc":
        pts += [-p for p in pts]
    return np.unique(np.array(pts, dtype=np.float64))


# --------------------------------------------------------------------------
# The bound, and the decisions made on it
# --------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(NAMES))
def test_the_kernel_keeps_its_bound_on_random_points(name):
    x = random_points(name)
    assert len(x) > N * 0.95
    worst, refused, bad_zero = measure(name, x)
    assert worst < BOUND, (name, math.log2(worst))
    assert worst > 2.0 ** -70   # the comparison saw the kernel's own rounding: it could have failed
    assert not refused, refused[:5]
    assert not bad_zero, bad_zero[:5]


@pytest.mark.parametrize("name", list(NAMES))
def test_the_kernel_keeps_its_bound_on_adversarial_points(name):
    x = adversarial_points(name)
    worst, refused, bad_zero = measure(name, x)
    assert worst < BOUND, (name, math.log2(worst))
    assert not refused, refused[:5]
    assert not bad_zero, bad_zero[:5]


@pytest.mark.parametrize("name", list(NAMES))
def test_every_decision_is_arbs_and_most_are_made(name):
    f = NAMES[name]
    assert TABLE[f].numpy_for(np.longdouble) is KERNEL[name]   # real_functions attached the kernel
    rnd = fastcheck.check(f, F64, [random_points(name, seed=1)])
    adv = fastcheck.check(f, F64, [adversarial_points(name)])
    for r in (rnd, adv):
        assert not r.mismatches, r.mismatches[:3]
        assert r.worst_rel_error < r.bound / 16, math.log2(r.worst_rel_error)
    assert rnd.decided > 0.8 * rnd.inputs, (rnd.decided, rnd.inputs)


def test_a_kernel_off_by_2_to_the_minus_56_is_caught(monkeypatch):
    """erf perturbed by 2^-56 relative (16 times the bound the kernels keep,
    a quarter of the one fast.py assumes): both measures report it."""
    def perturbed(x):
        return error_function.erf(x) * (1 + LD(2.0) ** -56)

    x = random_points("erf", 2000, seed=2)
    worst, _, _ = measure("erf", x, kernel=perturbed)
    assert worst > BOUND
    monkeypatch.setitem(TABLE, mpmath.erf, dataclasses.replace(TABLE[mpmath.erf], long_double_numpy=perturbed))
    r = fastcheck.check(mpmath.erf, F64, [x])
    assert r.worst_rel_error > r.bound / 16


# --------------------------------------------------------------------------
# Special values, refusals, shapes
# --------------------------------------------------------------------------

def _eval(name, values):
    return KERNEL[name](np.array(values, dtype=LD))


def _same(got, want) -> bool:
    return all((np.isnan(g) and np.isnan(w)) or (g == w and np.signbit(g) == np.signbit(w))
               for g, w in zip(got.tolist(), want))


def test_special_values():
    inf, nan = math.inf, math.nan
    assert _same(_eval("erf", [0.0, -0.0, inf, -inf, nan]), [0.0, -0.0, 1.0, -1.0, nan])
    assert _same(_eval("erfc", [0.0, -0.0, inf, -inf, nan, 200.0]), [1.0, 1.0, 0.0, 2.0, nan, 0.0])
    assert _same(_eval("erf_inv", [0.0, -0.0, 1.0, -1.0, 1.5, -inf, nan]), [0.0, -0.0, nan, nan, nan, nan, nan])
    assert _same(_eval("bessel_i1e", [0.0, -0.0, inf, -inf, nan]), [0.0, -0.0, 0.0, -0.0, nan])


@pytest.mark.parametrize("name", list(NAMES))
def test_arguments_that_are_not_binary64_values_are_refused(name):
    """The kernels' exact products (x², 11-bit heads times x) need binary64
    arguments; a long double with more bits gets NaN, not a guess."""
    x = np.array([0.3, 0.75], dtype=LD) + np.ldexp(LD(1), -60)
    assert np.isnan(KERNEL[name](x)).all()


@pytest.mark.parametrize("name", list(NAMES))
def test_shapes_and_chunks(name):
    """Arrays of any shape, longer than a chunk, give the values of the
    same elements taken a few at a time."""
    x = random_points(name, 3 * error_function.CHUNK, seed=3)[: 3 * error_function.CHUNK - 7]
    x = x[: len(x) // 3 * 3]
    whole = KERNEL[name](x.astype(LD).reshape(3, -1))
    assert whole.shape == (3, len(x) // 3) and whole.dtype == LD
    parts = np.concatenate([KERNEL[name](x[i:i + 1000].astype(LD)) for i in range(0, len(x), 1000)])
    assert np.array_equal(whole.reshape(-1), parts, equal_nan=True)
