"""i1e(x) = e^(-|x|)·I₁(x) in x87 long double on whole arrays, for f64
results (oracle/chlo_long_double/__init__.py, fast.py's long double pass),
held to fast.LD_REL_ERROR / 16 = 2^-62 relative: four roundings of long
double (u = 2^-64).  The machinery (Taylor tables, piecewise evaluation,
chunking) and its error analysis are error_function.py's.

i1e is odd; for a = |x|, with g(a) = e^(-a)·I₁(a):

* a < 1/8: g = a/2 + a²·(B_2 + a·(B_3 + … + a·B_15)), the Taylor series of
  e^(-a)·I₁(a) (B_n = Σ (-1)^(n-2m-1) / ((n-2m-1)!·2^(2m+1)·m!·(m+1)!),
  exact rationals; the next term is below 2^-72 of g).  a/2 is exact, the
  rest at most 13.1% of g: one rounding plus about 0.3u.
* 1/8 <= a < 128: a table (error_function.Table) of g's Taylor
  expansions, the coefficients from the pair of equations
  g' = -g + j - g/x and j' = -j + g (j = e^(-x)·I₀(x), from I₀' = I₁ and
  I₁' = I₀ - I₁/x): multiplied by x = c + h and matched in powers of h,
      a_(n+1) = (-(c·a_n + a_(n-1)) + c·b_n + b_(n-1) - (n+1)·a_n) / (c·(n+1)),
      b_(n+1) = (a_n - b_n) / (n+1),
  from a_0 = i1e(c), b_0 = i0e(c) (arb at 320 bits; the table's degree is
  11).  The rest is at most 22% of g (next to a = 1/8; measured on 2·10^6
  points): one rounding plus about 0.5u.
* a >= 128: Hankel's expansion I₁(a) ~ e^a/√(2πa)·Σ (-1)^k·α_k/a^k,
  α_k = Π_(i<=k) (4 - (2i-1)²) / (k!·8^k) (DLMF 10.40.1; the other
  exponential, e^(-2a) of it, is below 2^-369), 14 terms (the 15th is below
  2^-72 at a = 128): g = S/√a with S = K_hi + (K_lo + t·E(t)), K = 1/√(2π),
  t = 1/a, then y0 = S/s with s = sqrtl(a) and one correction (`_asymptotic`)
  that takes out the roundings of S, of s and of the quotient: one
  rounding (u) plus the correction's own error, below 2^-60 of it.

Why 2^-62 holds: each branch is one rounding of the result (u) plus at
most half a u from its small terms, 1.5u against the 4u allowed.  Measured
worst against arb at 200 bits (tests/oracle/test_chlo_long_double_erf.py:
20,000 random points, uniform over [-30, 30] and [-1000, 1000], log-uniform
from 2^-1074 to 2^1023, random bit patterns; 3,178 adversarial ones: the
branches' and the table intervals' ends ± ulps, powers of 2 and 4 up to
2^1023, the largest floats): 2^-64.015 random, 2^-64.04 adversarial.
Before the correction of the asymptotic branch (`_asymptotic`), plain
S/sqrtl(a) measured 2^-62.9 there.

Speed, 2^20 elements uniform over [-30, 30] on this machine: 1.6 times
numpy's long double tanh on the same count.
"""
from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np
from flint import arb

from .error_function import (BUILD_PREC, LD, Table, chunked, finish, ld_nearest, piecewise, prepare, split,
                             workprec)

_SMALL = 0.125
_ASYMPTOTIC = 128.0


@functools.cache
def _small_constants():
    """B_2 … B_15 of e^(-a)·I₁(a) (module docstring), to long double."""
    def b(n):
        return sum(Fraction((-1) ** (n - 2 * m - 1), math.factorial(n - 2 * m - 1) * 2 ** (2 * m + 1)
                            * math.factorial(m) * math.factorial(m + 1)) for m in range((n - 1) // 2 + 1))
    with workprec(BUILD_PREC):
        return [ld_nearest(arb(q.numerator) / q.denominator) for q in (b(n) for n in range(2, 16))]


def _small(a64):
    bs = _small_constants()
    a = a64.astype(LD)
    p = bs[-1] * a
    for c in bs[-2:0:-1]:
        p += c
        p *= a
    p += bs[0]
    p *= a * a
    a *= 0.5
    return a, p


def _coefficients(c: arb, n: int) -> list:
    """Taylor coefficients of e^(-x)·I₁(x) about c > 0 (module docstring)."""
    ex = (-c).exp()
    a, b = [c.bessel_i(1) * ex], [c.bessel_i(0) * ex]
    for k in range(n):
        am = a[k - 1] if k else arb(0)
        bm = b[k - 1] if k else arb(0)
        a.append((-(c * a[k] + am) + c * b[k] + bm - (k + 1) * a[k]) / (c * (k + 1)))
        b.append((a[k] - b[k]) / (k + 1))
    return a


@functools.cache
def table() -> Table:
    return Table(((_SMALL, 2.0, 1 / 16), (2.0, 8.0, 1 / 8), (8.0, 32.0, 1 / 4), (32.0, _ASYMPTOTIC, 1.0)),
                 _coefficients)


_TERMS = 14


@functools.cache
def _asymptotic_constants():
    """K = 1/√(2π) as K_hi + K_lo; E_1, E_2 in long double and E_3 … E_14
    in float64 (t²·E_3 is below 2^-24 of g at a >= 128), E_k = K·(-1)^k·α_k."""
    alpha, al = [], Fraction(1)
    for k in range(1, _TERMS + 1):
        al *= Fraction(4 - (2 * k - 1) ** 2, 8 * k)
        alpha.append(al)
    with workprec(BUILD_PREC):
        K = 1 / (2 * arb.pi()).sqrt()
        khi, klo = split(K, 64)
        e = [K * (-1) ** k * arb(q.numerator) / q.denominator for k, q in enumerate(alpha, start=1)]
        return khi, klo, ld_nearest(e[0]), ld_nearest(e[1]), [float(v.mid()) for v in e[2:]]


def _head32(v: np.ndarray) -> np.ndarray:
    """v's leading 32 bits (v rounded to float64, then truncated): v minus
    it is a long double of at most 32 bits, below 2^-31·|v|."""
    v64 = v.astype(np.float64)
    return (v64.view(np.uint64) & np.uint64(0xFFFFFFFFFFE00000)).view(np.float64).astype(LD)


def _asymptotic(a64):
    """S/√a with S = K_hi + rest, to one rounding: y0 = S/s (s = sqrtl(a)),
    then y = y0 + (y0·ε + R/s), with ε = (s² - a)/(2a) (s = √a·(1 + ε) to
    first order, ε <= 2^-64) and R = S - y0·s, both from exact products of
    32-bit halves (yh·sh - K_hi and sh² - a exact by Sterbenz): the
    correction, about 2^-64 of y, in float64."""
    khi, klo, e1, e2, rest = _asymptotic_constants()
    t64 = 1 / a64
    q = rest[-1] * t64
    for c in rest[-2:0:-1]:
        q += c
        q *= t64
    q += rest[0]
    a = a64.astype(LD)
    t = 1 / a
    p = q.astype(LD)
    p *= t
    p += e2
    p *= t
    p += e1
    p *= t
    p += klo                                  # S = K_hi + p
    s = np.sqrt(a)
    y = p + khi
    y /= s
    sh, yh = _head32(s), _head32(y)
    sl, yl = s - sh, y - yh
    e = sh * sh
    e -= a
    e += 2 * sh * sl
    e += sl * sl                              # s² - a
    r = yh * sh
    np.subtract(khi, r, out=r)
    r -= yh * sl
    r -= yl * sh
    r -= yl * sl
    r += p                                    # S - y·s
    s64 = s.astype(np.float64)
    y64 = y.astype(np.float64)
    c = y64 * (e.astype(np.float64) / a64 * 0.5) + r.astype(np.float64) / s64   # (2·a64 would overflow)
    y += c.astype(LD)
    return (y,)


def _table(a64):
    hi, rest = table()(a64)
    hi += rest
    return (hi,)


def _small_sum(a64):
    hi, rest = _small(a64)
    hi += rest
    return (hi,)


@chunked
def i1e(x):
    """e^(-|x|)·I₁(x) in long double (module docstring).  ±0 → ±0,
    ±inf → ±0, NaN and non-binary64 values → NaN."""
    a64, neg, valid = prepare(x)
    with np.errstate(all="ignore"):
        (y,) = piecewise(a64, ((a64 < _SMALL, _small_sum, 0.0625),
                               ((a64 >= _SMALL) & (a64 < _ASYMPTOTIC), _table, 1.0),
                               ((a64 >= _ASYMPTOTIC) & (a64 < np.inf), _asymptotic, 256.0)), (0,))
        return finish(y, neg, valid & ~np.isnan(a64), odd=True)


KERNELS: dict = {"i1e": i1e}
REL_ERROR = 2.0 ** -59.5   # as error_function.REL_ERROR: measured worst 2^-64.0, analysed below 2u
