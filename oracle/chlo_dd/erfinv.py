"""The Taylor-cell first pass of f64 erf_inv (chlo_dd.LEAD; taylor.py's
cells, bounds and kernel), on whole arrays ahead of the long double pass.

Two tables, one per variable, evaluated together (taylor.stack):
* |y| < 1/2: erfinv itself over binade cells of |y| (odd: |y|, the sign
  put back) and a vanishing zero cell below 2^-6, whose bound is
  relative however small y is (2^-500 <= |y|).
* 1/2 <= |y| < 1: g(w) = erfinv(1 - w) over binade cells of w = 1 - |y|,
  which is exact (Sterbenz: |y| in [1/2, 1]) and at least 2^-53 (the
  largest float64 below 1 is 1 - 2^-53).  erfinv's singularity at 1 is
  g's at w = 0, logarithmic (g ~ sqrt(-log w)): binade cells have
  h/|c| <= 1/(2·count) whatever the binade, so its Taylor series converge
  alike in every binade down to 2^-53.  Binade 2^-1 is not tabulated:
  |y| = 1/2 exactly (w = 1/2) is left to the other routes.

Series.  erfinv' = (√π/2)·exp(erfinv²) (the inverse function's
derivative: erf'(x) = (2/√π)·exp(-x²)), so with f = Σ f_k t^k the
coefficients of erfinv(y + t) follow from f_0 = erfinv(y) by
f_(k+1) = (√π/2)·[t^k] exp((Σ_(j<=k) f_j t^j)²)/(k + 1), the k-th
coefficient of the exponential depending on f_0 … f_k only; and g' =
-erfinv'(1 - w), f_0 = erfcinv(w).  Evaluated in arb at a point or over a
ball (erfinv or erfcinv of the ball encloses f_0 at each of its points,
and the recurrence is the same expression at each point), so the ball's
n-th coefficient bounds |f^(n)/n!| over the cell: taylor.py's truncation
term.  Every other error term and the bound are taylor.py's, per cell.
"""
from __future__ import annotations

import functools

import numpy as np
from flint import arb, arb_series

from . import taylor

HALF = 0.5


def _ode(f0: arb, n: int, sign: int) -> list:
    """n Taylor coefficients of a branch of erfinv(sign·t + ·) from f0
    (module docstring)."""
    hs = arb.pi().sqrt() / 2 * sign
    f = [f0]
    for k in range(n - 1):
        F = arb_series(f, prec=k + 1)
        g = (F * F).exp().coeffs()
        f.append(hs * (g[k] if k < len(g) else arb(0)) / (k + 1))
    return f


def _erfinv(y: arb, n: int) -> list:
    return _ode(y.erfinv(), n, 1)


def _erfcinv(w: arb, n: int) -> list:
    return _ode(w.erfcinv(), n, -1)


N, K = 11, 3
SPECS = {
    "y": taylor.Spec("erfinv", _erfinv, e0=-6, e1=-1, count=lambda e: max(32, 2 ** (e + 9)), n=N, k=K,
                     symmetry="odd", zero="vanish", hi_bound=HALF),
    "w": taylor.Spec("erfinv(1 - w)", _erfcinv, e0=-53, e1=-1, count=lambda e: 64 if e >= -4 else 32,
                     n=N, k=K, symmetry="even", zero=None),
}


@functools.cache
def tables(k: int | None = None) -> tuple:
    """(y table, w table, their stacked rows, the w table's first row);
    `k`: taylor.build's override of the coefficient pairs."""
    ty, tw = taylor.build(SPECS["y"], k), taylor.build(SPECS["w"], k)
    rows, firsts = taylor.stack([ty, tw])
    return ty, tw, rows, int(firsts[1])


def _chunk(y: np.ndarray) -> tuple:
    ty, tw, rows, first_w = tables()
    a = np.abs(y)
    low = a < HALF
    w = 1.0 - a                       # exact where |y| >= 1/2, unused elsewhere
    v = np.where(low, a, w)
    idx = np.where(low, taylor.index(ty, a), taylor.index(tw, w) + first_w)
    ph, pl, rel, ab, inside = taylor.poly(rows, N, K, v, idx)
    neg = np.signbit(y)
    ph, pl = np.where(neg, -ph, ph), np.where(neg, -pl, pl)
    inside &= (a > 0) & (a < 1)
    return ph, pl, rel, ab, inside


def chunk(args: list) -> tuple:
    """(h, lo, rel, abs, domain mask) for erf_inv on one chunk (at most
    taylor.CHUNK elements): h + lo within |h + lo|·rel + abs of erfinv(y)
    where the mask holds (module docstring)."""
    return _chunk(args[0])


def pair(args: list) -> tuple:
    """`chunk` over whole arrays."""
    return taylor.over_chunks(chunk, args)
