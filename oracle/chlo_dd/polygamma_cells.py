"""The Taylor-cell first pass of f64 polygamma(n, x) for integer 1 <= n <=
NMAX and 2^-7 <= x < 2^10 (chlo_dd.LEAD; taylor.py's cells, bounds and
kernel), one table per n, stacked and evaluated together: the table of n
starts at row (n - 1)·size, and every table has the same cells.

Series.  ψ⁽ⁿ⁾ = (d/dx)^(n+1) lgamma, so with lgamma(c + t) = Σ l_j t^j
(arb_series' lgamma at the centre c, shared by every n: cached),
ψ⁽ⁿ⁾(c + t) = Σ_k a_k t^k, a_k = l_(n+k+1)·(n+k+1)!/k!.  The
truncation term: a_N at ξ is (-1)^(n+N+1)·(n+N)!/N!·ζ(n+N+1, ξ)
(ψ⁽ᵐ⁾(ξ) = (-1)^(m+1)·m!·ζ(m+1, ξ), DLMF 25.11.12), at most
(n+N)!/N!·ζ(n+N+1, c - h) over the cell, the Hurwitz zeta decreasing in
ξ > 0.

Cells: binades of x from 2^-7 to 2^10, 64 each (h/c <= 1/128: the pole
at 0 makes a_k·c^k/a_0 about C(n+k, k), so the truncation is about
C(n+N, N)·128^-N of the value, and the rounding of a_k to a double
u·C(n+k, k)·128^-k: a_0 … a_3 are pairs, K = 4).  Measured bounds: below
2^-68.5 of the value for n <= 4 (median 2^-71).  No zero cell: x < 2^-7 is left to the
other routes (the refinement of polygamma.py, arb), as are x >= 2^10, n
beyond NMAX and x <= 0.
"""
from __future__ import annotations

import functools
import math

import numpy as np
from flint import arb, arb_series, ctx

from . import taylor

NMAX = 4
N, K = 12, 4
E0, E1 = -7, 10


def _lgamma_at(c: float, n: int) -> list:
    return list(_lgamma_cached(c, n, ctx.prec))


@functools.lru_cache(maxsize=None)
def _lgamma_cached(c: float, n: int, prec: int) -> tuple:
    """n coefficients of lgamma(c + t), c > 0, with flint's series length
    cap raised to n (it truncates silently otherwise)."""
    old, ctx.cap = ctx.cap, max(ctx.cap, n)
    try:
        co = arb_series([arb(c), 1], prec=n).lgamma().coeffs()
    finally:
        ctx.cap = old
    if len(co) != n:
        raise AssertionError("polygamma: lgamma's series came back short")
    return tuple(co)


def _series(order: int):
    def series(x: arb, n: int) -> list:
        # the longest series any order asks for, so that the orders share one cached lgamma series
        lg = _lgamma_at(float(x.mid()), NMAX + N + 3)
        return [lg[order + k + 1] * (math.factorial(order + k + 1) // math.factorial(k)) for k in range(n)]
    return series


@functools.lru_cache(maxsize=None)
def _zeta_at(s: int, c: float, h: float, prec: int) -> arb:
    return arb(s).zeta(arb(c) - arb(h))


def _tail(order: int):
    def tail(c: float, h: float, n: int) -> arb:
        return _zeta_at(order + n + 1, c, h, ctx.prec) * (math.factorial(order + n) // math.factorial(n))
    return tail


def order_spec(order: int) -> taylor.Spec:
    return taylor.Spec(f"polygamma({order}, x)", _series(order), e0=E0, e1=E1, count=lambda e: 64,
                       n=N, k=K, symmetry="even", zero=None, tail=_tail(order))


@functools.cache
def tables(k: int | None = None) -> tuple:
    """(the n = 1 table, stacked rows of n = 1 … NMAX, rows a table); `k`:
    taylor.build's override of the coefficient pairs."""
    tabs = [taylor.build(order_spec(order), k) for order in range(1, NMAX + 1)]
    rows, firsts = taylor.stack(tabs)
    return tabs[0], rows, int(firsts[1])


def chunk(args: list) -> tuple:
    """(h, lo, rel, abs, domain mask) for polygamma(n, x) on one chunk (at
    most taylor.CHUNK elements): h + lo within |h + lo|·rel + abs of
    ψ⁽ⁿ⁾(x) where the mask holds (module docstring)."""
    n, x = args
    first, rows, size = tables()
    ni = np.fmin(np.fmax(n, 1.0), NMAX)
    idx = taylor.index(first, x) + (ni.astype(np.int64) - 1) * size
    h, lo, rel, ab, inside = taylor.poly(rows, N, K, x, idx)
    inside &= (ni == n) & (ni == np.floor(ni)) & (x > 0)
    return h, lo, rel, ab, inside


def pair(args: list) -> tuple:
    """`chunk` over whole arrays."""
    return taylor.over_chunks(chunk, args)
