"""fast.round_fast (casts and integer rounding) against fast.round_to_format
(exact frexp/ldexp/rint, itself checked against round_bits in
test_fast.py), and the f64 route's MPFR values against arb (rigorous.py).

The points are where a rounding can go wrong: every value of the 8- and
16-bit formats, every midpoint between neighbours (ties to even), and 1 and
2 float64 ulps either side of each; past the largest finite (overflow's
midpoint); the subnormal range; signed zeros.  For f32 a random sample of
the same kinds; for f64 (from long double) the same kinds at long double's
ulp.  test_the_points_catch_a_double_rounding shows they are sharp enough
to see ml_dtypes' float64 -> float32 -> bf16 double rounding.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from shlo_conform.oracle import fast, rigorous
from shlo_conform.oracle.real_functions import TABLE
from shlo_conform.spec.types import BF16, F8E4M3FN, F8E5M2, F16, F32, F64, element_type, from_bits


def _around(v: np.ndarray, dtype) -> np.ndarray:
    """v, the midpoints between its sorted neighbours, and 1 and 2 ulps of
    `dtype` either side of each; both signs."""
    v = np.unique(np.abs(v.astype(dtype)))
    pts = np.concatenate([v, (v[1:] + v[:-1]) / 2])     # exact: the midpoints have one more bit
    out = [pts]
    up, dn = pts, pts
    for _ in range(2):
        up, dn = np.nextafter(up, dtype(np.inf)), np.nextafter(dn, dtype(-np.inf))
        out += [up, dn]
    pts = np.concatenate(out)
    return np.concatenate([pts, -pts])


def _values(fmt, rng) -> np.ndarray:
    """Finite values of fmt (all of them up to 16 bits; f32: random bit
    patterns plus its smallest and largest), with the next value past the
    largest finite (so overflow's midpoint is among the points)."""
    et = element_type(fmt.name)
    if fmt.bits <= 16:
        bits = np.arange(1 << fmt.bits, dtype=np.uint64)
    else:
        bits = np.concatenate([rng.integers(0, 1 << fmt.bits, 200_000, dtype=np.uint64),
                               np.arange(0, 64, dtype=np.uint64), 0x7F7FFFFF - np.arange(64, dtype=np.uint64),
                               np.arange(0x00800000 - 32, 0x00800000 + 32, dtype=np.uint64)])
    with np.errstate(invalid="ignore"):
        v = from_bits(bits, et).astype(np.float64)
    v = v[np.isfinite(v)]
    past = float(fmt.max_finite) + 2.0 ** (fmt.emax - fmt.mantissa_bits)
    return np.concatenate([v, [past, 2 * past]])


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return ((a == b) & (np.signbit(a) == np.signbit(b))) | (np.isnan(a) & np.isnan(b))


NARROW = (F32, BF16, F16, F8E5M2, F8E4M3FN)


@pytest.mark.parametrize("fmt", NARROW, ids=lambda f: f.name)
def test_round_fast_is_round_to_format(fmt):
    rng = np.random.default_rng(11)
    x = np.concatenate([_around(_values(fmt, rng), np.float64),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 1e308, -1e308, 5e-324, -5e-324, 2.0 ** -1000]])
    want = fast.round_to_format(x, fmt)
    got = fast.round_fast(x, fmt)
    bad = np.flatnonzero(~_same(got, want))
    assert not len(bad), [(x[i], got[i], want[i]) for i in bad[:5]]


def test_round_fast_is_round_to_format_from_long_double():
    if not fast._LD_OK:
        pytest.skip("no x87 long double: f64 results have no fast path here")
    rng = np.random.default_rng(12)
    bits = np.concatenate([rng.integers(0, 1 << 63, 100_000, dtype=np.uint64),
                           np.arange(0, 64, dtype=np.uint64),                       # smallest subnormals
                           0x7FEFFFFFFFFFFFFF - np.arange(64, dtype=np.uint64),     # largest finite
                           np.arange(0x0010000000000000 - 32, 0x0010000000000000 + 32, dtype=np.uint64)])   # the normal boundary
    v = bits.view(np.float64)
    v = np.concatenate([v[np.isfinite(v)], [np.finfo(np.float64).max]])
    x = _around(v.astype(np.longdouble), np.longdouble)
    top = np.longdouble(np.finfo(np.float64).max)
    past = top + (top - np.longdouble(np.nextafter(np.finfo(np.float64).max, 0)))
    x = np.concatenate([x, _around(np.array([top, past], dtype=np.longdouble), np.longdouble),
                        np.array([0.0, -0.0, np.inf, -np.inf, np.nan], dtype=np.longdouble),
                        np.ldexp(np.longdouble(1), np.arange(-16000, -1060, 997))])
    want = fast.round_to_format(x, F64)
    got = fast.round_fast(x, F64)
    bad = np.flatnonzero(~_same(got, want.astype(np.float64)))
    assert not len(bad), [(x[i], got[i], want[i]) for i in bad[:5]]


def test_the_points_catch_a_double_rounding():
    """ml_dtypes rounds float64 to bf16 through float32 (twice); the points
    above must see it, or they could not see a wrong round_fast either."""
    x = _around(_values(BF16, None), np.float64)
    with np.errstate(over="ignore"):
        twice = x.astype(ml_dtypes.bfloat16).astype(np.float64)
    assert (~_same(twice, fast.round_to_format(x, BF16))).sum() > 1000


MPFR = [f for f, rf in TABLE.items() if rf.mpfr is not None]


def _hard_args(f, rng, n):
    """Arguments whose f64 results the long double pass leaves undecided
    (the ones MPFR is asked for), plus extremes: subnormal and huge
    arguments, results near overflow and in the subnormal range."""
    name = TABLE[f].name
    if name == "atan2":
        # (3·2^-1074, 2): 1.5 subnormal quanta less a hair, which rounds down;
        # at 53 bits first (no subnormalize) it would be the tie, rounded up.
        q = 5e-324
        extremes = [(3 * q, 2.0), (-3 * q, 2.0), (7 * q, 2.0), (-7 * q, 2.0), (q, 1.0), (-q, 1e300),
                    (1e-310, -1e-300), (1e300, 5e-324), (-1e300, -1e-310), (1.0, -1e308), (-2.0, 3.0), (1e-300, 1e300)]
        cols = [rng.uniform(-20, 20, 20 * n), rng.uniform(-20, 20, 20 * n)]
        cols[0][:len(extremes)], cols[1][:len(extremes)] = zip(*extremes)
    else:
        # CHLO's functions (spec/chlo) on their domains: asin … inside [-1, 1], acosh from 1, digamma and
        # lgamma where their fast evaluation is trusted (x > 0: the rest is arb's, never MPFR's)
        lo, hi = {"log": (1e-3, 1e3), "log1p": (-0.9, 1e3), "rSqrt": (1e-3, 1e3), "asin": (-1, 1),
                  "acos": (-1, 1), "atanh": (-1, 1), "acosh": (1, 30), "digamma": (1e-3, 30),
                  "lgamma": (1e-3, 30)}.get(name, (-30, 30))
        x = rng.uniform(lo, hi, 200 * n)   # 1 in 20 to 1 in 50 left by the long double pass
        extremes = [5e-324, 1e-310, 2.2250738585072014e-308, 1e300, 1.7976931348623157e308, 709.78, 709.79,
                    -745.1, -744.5, -708.4, 1e-20, 0.5, 3.0, 27.0, 64.0]
        if name not in ("log", "rSqrt"):
            extremes += [-5e-324, -1e-310, -1e300, -1e-20]
        if name == "log1p":
            extremes = [e for e in extremes if e > -1]
        extremes = [e for e in extremes if lo <= e <= hi] if (lo, hi) != (-30, 30) and name not in (
            "log", "log1p", "rSqrt") else extremes
        x[:len(extremes)] = extremes
        cols = [x]
    evaluate = TABLE[f].numpy_for(np.longdouble)
    if evaluate is None:   # no long double evaluation: MPFR takes every f64 element the arrays leave
        return [c[:len(extremes) + n] for c in cols]
    with np.errstate(all="ignore"):   # the f64 elements the long double pass leaves
        y = np.asarray(evaluate(*[c.astype(np.longdouble) for c in cols]), dtype=np.longdouble)
    ok, _ = fast.decide(y, F64)
    pick = np.concatenate([np.arange(len(extremes)), np.flatnonzero(~ok)[:n]])
    return [c[pick] for c in cols]


def test_mpfr_is_there():
    """gmpy2 is a dependency (pyproject.toml): a broken install fails here
    instead of turning the MPFR tests below into skips."""
    assert MPFR, "gmpy2 (MPFR) is not importable: the venv is broken"


@pytest.mark.parametrize("f", MPFR, ids=lambda f: TABLE[f].name)
def test_mpfr_is_arb(f):
    """MPFR's value is the bits arb's enclosures decide, on hard cases."""
    rng = np.random.default_rng(13)
    cols = _hard_args(f, rng, 150)
    checked = 0
    for args in zip(*[c.tolist() for c in cols]):
        z = rigorous.evaluate(f, args, F64)
        got = float(TABLE[f].mpfr(*args))
        if z is None or not z[2]:
            continue
        checked += 1
        want = from_bits(np.array([z[0]], dtype=np.uint64), element_type("f64"))[0]
        assert _same(np.float64(got), want), (TABLE[f].name, args, got, want)
    assert checked > 100


def test_evaluate_uses_mpfr_with_arbs_bits():
    """fast.evaluate on f64: every element decided, MPFR's included, carries
    arb's bits (sine over a spread where 1 in 20 is left by long double)."""
    import mpmath
    assert TABLE[mpmath.sin].mpfr is not None, "gmpy2 (MPFR) is a dependency: the venv is broken"
    rng = np.random.default_rng(14)
    x = rng.uniform(-20, 20, 4000)
    y = np.sin(x.astype(np.longdouble))
    before, _ = fast.decide(y, F64)
    ok, r = fast.evaluate(mpmath.sin, [x], F64)
    assert ok.all() and (~before).sum() > 50
    for i in np.flatnonzero(~before).tolist():
        z = rigorous.evaluate(mpmath.sin, (float(x[i]),), F64)
        assert np.float64(r[i]).view(np.uint64) == z[0], x[i]
    # zero and non-finite arguments are not MPFR's: its signed zeros are IEEE's, not the spec module's
    ok, _ = fast.evaluate(mpmath.sin, [np.array([-0.0, 0.0, np.inf, -np.inf, np.nan])], F64)
    assert not ok.any()
