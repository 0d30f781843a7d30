"""The Taylor-cell first passes (taylor.py) of f64 erf, erfc, lgamma,
digamma and i1e: each function's Taylor series in arb, its cells, and the
values fixed by a proven bound outside the cells (erf's ±1, erfc's 2).

Series (coefficients of f(x + t) in t, arb over a point or a ball):
* erf, erfc: arb's own (arb_series.erf/erfc).
* lgamma: arb_series.lgamma; its coefficients k >= 2 are (-1)^k·ζ(k, x)/k
  (DLMF 5.7.4 differentiated: ψ^(k-1)(x) = (-1)^k (k-1)!·ζ(k, x)), so over
  a cell [c - h, c + h] in x > 0 the n-th is at most ζ(n, c - h)/n, the
  Hurwitz zeta decreasing in its second argument (`tail`).
* digamma: (k + 1)·l_(k+1), l the lgamma coefficients; the n-th is
  (-1)^(n+1)·ζ(n + 1, x), at most ζ(n + 1, c - h) over the cell.
* i1e = e^(-x)·I_1(x) for x > 0 (odd): I_1's k-th derivative is
  2^-k Σ_j C(k, j)·I_(1-k+2j) (DLMF 10.29.5, I_-m = I_m), times the
  series of e^(-x), both over points or balls by arb (arb.bessel_i).

Outside the cells: erf(x) = ±1 for |x| >= 6 and erfc(x) = 2 for x <= -6,
because erfc(6) < 2^-55 (checked in arb, `_check_saturation`) and 1 - 2^-54
and 2 - 2^-53 are the midpoints below 1 and 2 (the gap below a power of
two is half the one above): the true value lies strictly between the
midpoint and the power of two, so the pair (±1 or 2, 0) with absolute
bound 2^-55 is decided by ddfast.decide.
"""
from __future__ import annotations

import functools
import math

import numpy as np
from flint import arb, arb_series

from . import taylor

SATURATE = 6.0


def _pad(c: list, n: int) -> list:
    return (list(c) + [arb(0)] * n)[:n]


def _erf(x: arb, n: int) -> list:
    return _pad(arb_series([x, 1], prec=n).erf().coeffs(), n)


def _erfc(x: arb, n: int) -> list:
    return _pad(arb_series([x, 1], prec=n).erfc().coeffs(), n)


def _lgamma(x: arb, n: int) -> list:
    return _pad(arb_series([x, 1], prec=n).lgamma().coeffs(), n)


def _digamma(x: arb, n: int) -> list:
    lg = _lgamma(x, n + 1)
    return [(k + 1) * lg[k + 1] for k in range(n)]


def _lgamma_tail(c: float, h: float, n: int) -> arb:
    return arb(n).zeta(arb(c) - arb(h)) / n


def _digamma_tail(c: float, h: float, n: int) -> arb:
    return arb(n + 1).zeta(arb(c) - arb(h))


def _i1e(x: arb, n: int) -> list:
    """Taylor coefficients g_k of g = i1e at x > 0 (a point or a ball):
    g(x) = e^-x·I_1(x), g' = e^-x·(I_0(x) - I_1(x)/x - I_1(x)) (DLMF 10.29.3:
    I_1' = I_0 - I_1/x), and the ODE g satisfies, from I_1's (DLMF 10.25.1,
    x²y'' + xy' - (x² + 1)y = 0, with y = e^x·g):
    x²g'' + (2x² + x)g' + (x - 1)g = 0.  Its coefficients at x + t give
    g_(k+2) = -[(2xk(k+1) + (2x² + x)(k+1))·g_(k+1)
               + (k(k-1) + (4x + 1)k + x - 1)·g_k + (2k - 1)·g_(k-1)]
              / (x²(k+2)(k+1)),  g_-1 = 0,
    valid at every point of a ball, so arb's interval evaluation encloses
    the coefficients over it."""
    if x == 0:
        i1 = [arb(0)] * n
        for m in range((n + 1) // 2):
            if 2 * m + 1 < n:
                i1[2 * m + 1] = arb(1) / (2 ** (2 * m + 1) * math.factorial(m) * math.factorial(m + 1))
        ex = arb_series([arb(0), arb(-1)], prec=n).exp().coeffs()
        return _pad((arb_series(i1, prec=n) * arb_series(ex, prec=n)).coeffs(), n)
    e = (-x).exp()
    i0, i1 = x.bessel_i(0), x.bessel_i(1)
    g = [e * i1, e * (i0 - i1 / x - i1)]
    for k in range(0, n - 2):
        prev = g[k - 1] if k >= 1 else arb(0)
        num = ((2 * x * k * (k + 1) + (2 * x * x + x) * (k + 1)) * g[k + 1]
               + (k * (k - 1) + (4 * x + 1) * k + x - 1) * g[k] + (2 * k - 1) * prev)
        g.append(-num / (x * x * (k + 2) * (k + 1)))
    return g[:n]


def _i1e_tail(c: float, h: float, n: int) -> arb:
    """|g_n| over [c - h, c + h]: |I_1^(j)(ξ)| <= I_0(|ξ|) (DLMF 10.29.5,
    with I_m(|ξ|) <= I_0(|ξ|) for integer m), so |g^(n)(ξ)| <=
    e^-ξ·I_0(|ξ|)·Σ_j C(n, j) and |g_n| <= e^-ξ·I_0(|ξ|)·2^n/n!.  For
    c > 0, e^-ξ·I_0(ξ) decreases on ξ > 0 (its derivative is
    e^-ξ·(I_1 - I_0) < 0), so ξ = c - h bounds it; in the zero cell
    (|ξ| <= h) e^-ξ·I_0(|ξ|) <= e^h·I_0(h)."""
    if c == 0:
        b = arb(h).bessel_i(0) * arb(h).exp()
    else:
        lo = arb(c) - arb(h)
        b = (-lo).exp() * lo.bessel_i(0)
    return b * 2 ** n / math.factorial(n)


def _count(base: int, extra: dict):
    return lambda e: extra.get(e, base)


def _width(w: float, base: int = 64):
    """Cells of width at most w, and at least `base` a binade."""
    return lambda e: max(base, int(2.0 ** e / w))


SPECS = {
    "erf": taylor.Spec("erf", _erf, e0=-6, e1=3, count=_width(2.0 ** -8), n=10, k=3,
                       symmetry="odd", zero="vanish", hi_bound=SATURATE),
    "erfc": taylor.Spec("erfc", _erfc, e0=-6, e1=4, count=lambda e: {1: 1024, 2: 4096, 3: 16384}.get(e, 256),
                        n=11, k=4, symmetry="none", zero="plain", hi_bound=16.0, neg_hi_bound=SATURATE),
    "lgamma": taylor.Spec("lgamma", _lgamma, e0=-7, e1=10, count=_width(1.0, 128), n=11, k=3,
                          symmetry="none", zero=None, tail=_lgamma_tail, lo_bound=2.0 ** -7,
                          neg_hi_bound=0.0),
    "digamma": taylor.Spec("digamma", _digamma, e0=-7, e1=10, count=_width(1.0, 128), n=11, k=3,
                           symmetry="none", zero=None, tail=_digamma_tail, lo_bound=2.0 ** -7,
                           neg_hi_bound=0.0),
    "i1e": taylor.Spec("i1e", _i1e, e0=-6, e1=6, count=_width(2.0 ** -7), n=10, k=3,
                       symmetry="odd", zero="vanish", tail=_i1e_tail),
}


@functools.cache
def table(name: str, k: int | None = None) -> taylor.Table:
    """`name`'s table (`k`: taylor.build's override of the coefficient pairs)."""
    if name in ("erf", "erfc"):
        _check_saturation()
    return taylor.build(SPECS[name], k)


@functools.cache
def _check_saturation() -> None:
    if not arb(SATURATE).erfc() < arb(2.0) ** -55:
        raise AssertionError("erfc(6) is not below 2^-55")


def _saturated(x: np.ndarray) -> dict:
    """Per function, the elements outside the cells whose value is fixed
    (module docstring) and that value."""
    return {"erf": lambda: (np.abs(x) >= SATURATE, np.copysign(1.0, x)),
            "erfc": lambda: (x <= -SATURATE, np.full_like(x, 2.0))}


def chunk(name: str):
    """The first pass of `name` on one chunk of float64 arguments (at most
    taylor.CHUNK): (h, lo, rel, abs, domain mask), h + lo within
    |h + lo|·rel + abs of the function where the mask holds."""
    def kernel(args: list) -> tuple:
        x = args[0]
        h, lo, rel, ab, inside = taylor.evaluate_chunk(table(name), x)
        if name in ("erf", "erfc"):
            sat, value = _saturated(x)[name]()
            s = np.flatnonzero(sat & np.isfinite(x))
            if len(s):
                h[s], lo[s], ab[s], inside[s] = value[s], 0.0, 2.0 ** -55, True
        return h, lo, rel, ab, inside
    return kernel


def pair(name: str):
    """`chunk` over whole arrays."""
    return lambda args: taylor.over_chunks(chunk(name), args)
