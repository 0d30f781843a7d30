"""The Taylor-cell first passes of f64 lgamma and digamma over the whole
line down to -P - 1/2 (chlo_dd.LEAD; taylor.py's cells, bounds and
kernel): cells.py's tables for x >= 1/2 and, below, one table per pole.

Near the pole -m (m = 0 … P), x = -m + r with m = rint(-x) and |r| <= 1/2;
r = x + m is exact (x is a multiple of its ulp, which divides the integer
m where |x| >= 1/2, and |r| <= 1/2 is then representable; for |x| < 1/2,
m = 0).  Each pole's table is over r, in taylor.py's binade cells of |r|
from 2^-6 to 1/2 (and r = ±1/2 itself, the first cell of binade 2^-1), 64
a binade so that h/|c| <= 1/128, with a plain zero cell |r| < 2^-6:
* Off the zero cell, the function itself, f(r) = lgamma(r - m) or
  ψ(r - m): its singularities at r = 0 (log|r|, 1/r) and r = ±1 are at
  least 127·h from every point of the cell.
* In the zero cell, the function less its singular part: H_m(r) =
  lgamma(r - m) + log|r| = lgamma(1 + r) - Σ_{j=1..m} log(j - r), and
  D_m(r) = ψ(r - m) + 1/r = ψ(1 + r) + Σ_{j=1..m} 1/(j - r) (from
  Γ(z + 1) = z·Γ(z) and ψ(z + 1) = ψ(z) + 1/z, DLMF 5.5.1-2), analytic
  for |r| < 1; the singular part is added in double words on the few
  elements there (`_singular`).
Series (arb, at a point or over a ball, none of which meets a
singularity): lgamma(1 + r + t) and its derivatives from arb_series'
lgamma; log|r + t| and log(j - r - t) from arb_series' log;
1/(a + t) = Σ (-t)^k/a^(k+1).

The singular part, r in the zero cell (|r| < 2^-6):
* lgamma: -log|r| by ddpow.log_pair, within LOG_ABS = 2^-81 absolutely,
  for |r| >= 2^-21 (its domain; smaller |r| is left to the other routes).
* digamma: -1/r as the pair (-q, -ρ'), q = RN(1/r), ρ = 1 - q·r exact
  (Dekker's product p + π = q·r, 1 - p exact by Sterbenz, and 1 - q·r
  is a float64: the remainder of a correctly rounded division, Boldo and
  Daumas, "Representable correction terms for possibly underflowing
  floating point operations", ARITH 2003), ρ' = RN(ρ/r): within
  u·|ρ/r| <= u²·|q| of 1/r (|1/r - q| <= u·|q|), for 2^-500 <= |r|.
The two are added by dd.add (JMP's AccurateDWPlusDW, relative error
3u² + 13u³ < 2^-104 of the sum of its inputs), the polynomial's pair
renormalised first (TwoSum, exact): bound |sum|·2^-104 + E + the
singular part's, passed to ddfast.decide as (rel, abs) per element —
absolute terms, so near a zero of the function (lgamma's between -2 and
-5, digamma's one between each pair of poles) the elements are left
undecided, not misjudged.
"""
from __future__ import annotations

import functools

import numpy as np
from flint import arb, arb_series, ctx

from .. import ddfast
from . import cells, ddpow, taylor
from .dd import add, two_prod, two_sum

P = 10                      # poles 0, -1, …, -10: x >= -10.5
ZERO = 2.0 ** -6            # the zero cell's radius
TO_POSITIVE = 0.5           # x >= 1/2: cells.py's tables
LOG_LO = ddpow.B_LO         # lgamma: |r| >= 2^-21 in the zero cell (log_pair's domain)
REC_LO = 2.0 ** -500        # digamma: |r| >= 2^-500 in the zero cell
ADD_REL = 2.0 ** -104       # dd.add's relative bound, 3u² + 13u³, rounded up
N, K = cells.SPECS["lgamma"].n, cells.SPECS["lgamma"].k


def _pad(c: list, n: int) -> list:
    return (list(c) + [arb(0)] * n)[:n]


def _log_series(a: arb, sign: int, n: int) -> list:
    """log(a + sign·t), a > 0 (a point or a ball)."""
    return _pad(arb_series([a, arb(sign)], prec=n).log().coeffs(), n)


def _inverse_series(a: arb, sign: int, n: int) -> list:
    """1/(a + sign·t) = Σ (-sign)^k t^k / a^(k+1), a != 0 (a point or a ball)."""
    return [(-sign) ** k / a ** (k + 1) for k in range(n)]


@functools.lru_cache(maxsize=None)
def _lgamma1_at(c: float, n: int, prec: int) -> tuple:
    old, ctx.cap = ctx.cap, max(ctx.cap, n)      # flint truncates series to ctx.cap silently
    try:
        co = arb_series([1 + arb(c), 1], prec=n).lgamma().coeffs()
    finally:
        ctx.cap = old
    if len(co) != n:
        raise AssertionError("poles: lgamma's series came back short")
    return tuple(co)


def _lgamma1(r: arb, n: int) -> list:
    """lgamma(1 + r + t) at a point r (> -1): arb_series' lgamma, which
    costs 0.3 ms, so cached by centre — every pole's table has the same
    centres (ctx.prec in the key: taylor.build sets it)."""
    return list(_lgamma1_at(float(r.mid()), n, ctx.prec))


def _zero_cell(r: arb) -> bool:
    """Whether the series is asked for the zero cell (its centre 0): every
    other cell's centre is at least 2^-6."""
    return bool(r.mid() == 0)


@functools.lru_cache(maxsize=None)
def _regular_at(name: str, m: int, c: float, n: int, prec: int) -> tuple:
    """H_m's or D_m's n coefficients at the point c (module docstring), one
    term added to the previous pole's (cached: the poles share centres)."""
    r = arb(c)
    if m == 0:
        if name == "lgamma":
            return tuple(_lgamma1(r, n))
        lg = _lgamma1(r, n + 1)
        return tuple((k + 1) * lg[k + 1] for k in range(n))     # ψ(1 + r + t)
    prev = _regular_at(name, m - 1, c, n, prec)
    if name == "lgamma":
        return tuple(a - b for a, b in zip(prev, _log_series(m - r, -1, n)))
    return tuple(a + b for a, b in zip(prev, _inverse_series(m - r, -1, n)))


def _pole_series(name: str, m: int):
    """f(r + t)'s coefficients at a point r (taylor.Spec.series): H_m or
    D_m in the zero cell, less log|r + t| or 1/(r + t) off it."""
    def series(r: arb, n: int) -> list:
        out = list(_regular_at(name, m, float(r.mid()), n, ctx.prec))
        if _zero_cell(r):
            return out
        if name == "lgamma":
            sign = 1 if r > 0 else -1
            return [a - b for a, b in zip(out, _log_series(sign * r, sign, n))]
        return [a - b for a, b in zip(out, _inverse_series(r, 1, n))]
    return series


@functools.lru_cache(maxsize=None)
def _zeta_at(s: int, q_lo: float, q_h: float, prec: int) -> arb:
    return arb(s).zeta(1 + (arb(q_lo) - arb(q_h)))


def _tail(name: str, m: int):
    """An upper bound of |f^(n)(ξ)/n!| over the cell [c - h, c + h]
    (taylor.Spec.tail), term by term (arb's series over a ball of
    lgamma's overestimates by orders of magnitude): for n >= 2,
    * lgamma(1 + ξ + t): (-1)^n·ζ(n, 1 + ξ)/n (DLMF 5.7.4 differentiated,
      as cells.py), at most ζ(n, 1 + c - h)/n, the Hurwitz zeta decreasing
      in its second argument (1 + c - h >= 1/2 - 2^-7 > 0);
      ψ(1 + ξ + t): (-1)^(n+1)·ζ(n + 1, 1 + ξ), at most ζ(n + 1, 1 + c - h);
    * log(j - ξ - t) = log(j - ξ) - Σ t^k/(k·(j - ξ)^k): at most
      1/(n·(j - c - h)^n); 1/(j - ξ - t): 1/(j - c - h)^(n+1);
    * log|ξ + t| and 1/(ξ + t) off the zero cell: 1/(n·(|c| - h)^n) and
      1/(|c| - h)^(n+1) (|ξ| >= |c| - h > 0)."""
    def tail(c: float, h: float, n: int) -> arb:
        hi = arb(c) + arb(h)
        d = 0 if name == "lgamma" else 1              # digamma: one order up
        b = _zeta_at(n + d, c, h, ctx.prec) / (n if d == 0 else 1)
        for j in range(1, m + 1):
            b += 1 / (j - hi) ** (n + d) / (n if d == 0 else 1)
        if c != 0:
            b += 1 / (abs(arb(c)) - arb(h)) ** (n + d) / (n if d == 0 else 1)
        return b
    return tail


def pole_spec(name: str, m: int) -> taylor.Spec:
    series = _pole_series(name, m)
    top = TO_POSITIVE + 2.0 ** -7       # only the first cell of binade 2^-1 (r = ±1/2)
    return taylor.Spec(f"{name} at the pole -{m}", series, e0=-6, e1=0, count=lambda e: 64, n=N, k=K,
                       symmetry="none", zero="plain", tail=_tail(name, m), hi_bound=top, neg_hi_bound=top)


@functools.cache
def tables(name: str, k: int | None = None) -> tuple:
    """(positive table, pole tables, stacked rows, first row of pole 0,
    rows a pole); `k`: taylor.build's override of the coefficient pairs."""
    pos = cells.table(name, k)
    poles = [taylor.build(pole_spec(name, m), k) for m in range(P + 1)]
    rows, firsts = taylor.stack([pos] + poles)
    return pos, poles, rows, int(firsts[1]), len(poles[0].rows)


def _reciprocal(r: np.ndarray) -> tuple:
    """1/r as a pair within u²·|q| (module docstring)."""
    q = 1.0 / r
    p, pi = two_prod(q, r)
    rho = (1.0 - p) - pi
    return q, rho / r


def _singular(name: str, r: np.ndarray) -> tuple:
    """(pair of the singular part, its absolute error bound, domain) at r."""
    a = np.abs(r)
    if name == "lgamma":
        ok = a >= LOG_LO
        lh, ll = ddpow.log_pair(np.where(ok, a, 1.0), np.zeros_like(a))
        return -lh, -ll, np.full_like(a, ddpow.LOG_ABS), ok
    ok = a >= REC_LO
    q, ql = _reciprocal(np.where(ok, r, 1.0))
    return -q, -ql, np.abs(q) * 2.0 ** -105, ok


def _chunk(name: str, x: np.ndarray) -> tuple:
    """The polynomial part on one chunk: (h, lo, rel, abs, inside, the
    zero cells' elements, their r), the singular part not yet added."""
    pos_tab, poles, rows, first, size = tables(name)
    idx = taylor.index(pos_tab, x)
    v = x
    near = np.flatnonzero(x < TO_POSITIVE)         # the pole path (NaN takes the other, rejected there)
    if len(near):
        xn = x[near]
        m = np.rint(-xn)
        r = xn + m                                   # exact (module docstring)
        mi = np.fmin(np.fmax(m, 0.0), P).astype(np.int64)
        idx[near] = taylor.index(poles[0], r) + (first + mi * size)
        v = x.copy()
        v[near] = r
    ph, pl, rel, ab, inside = taylor.poly(rows, N, K, v, idx)
    if not len(near):
        return ph, pl, rel, ab, inside, near, x[near]
    inside[near] &= m <= P
    z = np.flatnonzero(np.abs(r) < ZERO)
    return ph, pl, rel, ab, inside, near[z], r[z]


def _add_singular(name: str, r: np.ndarray, ph, pl, ab) -> tuple:
    """(h, lo, rel, abs, domain) of the zero cells' elements: their
    polynomial's pair plus the singular part (module docstring)."""
    sh, sl, sab, ok = _singular(name, r)
    h, lo = add(sh, sl, *two_sum(ph, pl))
    return h, lo, np.full_like(r, ADD_REL), ab + sab, ok


def _run(name: str, x: np.ndarray, decide: bool) -> tuple:
    """Chunk by chunk (taylor.CHUNK), the zero cells' elements gathered
    and finished together at the end: on a few dozen elements a chunk,
    the singular part's hundred numpy calls cost more than the polynomial.
    decide: (decided mask, values) by ddfast.decide; else (h, lo, rel,
    abs, domain)."""
    n = len(x)
    outs = ((np.zeros(n, dtype=bool), np.empty(n)) if decide else
            tuple(np.empty(n) for _ in range(4)) + (np.zeros(n, dtype=bool),))
    late = []
    for a in range(0, n, taylor.CHUNK):
        c = slice(a, a + taylor.CHUNK)
        ph, pl, rel, ab, inside, zi, r = _chunk(name, x[c])
        if len(zi):
            late.append((zi + a, r, ph[zi], pl[zi], ab[zi], inside[zi]))
        _store(outs, c, (ph, pl, rel, ab, inside), decide)
    if late:
        zi, r, ph, pl, ab, inside = (np.concatenate(v) for v in zip(*late))
        h, lo, rel, ab, ok = _add_singular(name, r, ph, pl, ab)
        _store(outs, zi, (h, lo, rel, ab, inside & ok), decide)
    return outs


def _store(outs: tuple, at, got: tuple, decide: bool) -> None:
    if decide:
        h, lo, rel, ab, inside = got
        d, v = ddfast.decide(h, lo, rel, ab)
        outs[0][at] = d & inside
        outs[1][at] = v
    else:
        for o, v in zip(outs, got):
            o[at] = v


def pair(name: str):
    """The kernel of lgamma or digamma on whole arrays: (h, lo, rel, abs,
    domain mask), h + lo within |h + lo|·rel + abs of the function where
    the mask holds (module docstring)."""
    def kernel(args: list) -> tuple:
        x = np.asarray(args[0], dtype=np.float64).reshape(-1)
        with np.errstate(all="ignore"):
            return _run(name, x, decide=False)
    return kernel


def decided(name: str):
    """chlo_dd.DECIDED's kernel of lgamma or digamma: (decided mask,
    binary64 values), each chunk decided while in cache."""
    def kernel(args: list) -> tuple:
        x = np.asarray(args[0], dtype=np.float64).reshape(-1)
        with np.errstate(all="ignore"):
            return _run(name, x, decide=True)
    return kernel
