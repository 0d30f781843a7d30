"""Cell-wise Taylor polynomials in double-word arithmetic with an error
bound proven per cell in arb: the first pass of f64 erf, erfc, lgamma,
digamma and i1e (chlo_dd.LEAD), on whole arrays, ahead of the long
double pass (which then sees only the elements this leaves).

Cells.  |x| in [2^E0, 2^E1) is cut at its binades, binade [2^e, 2^(e+1))
into `count(e)` equal cells; a cell has a float64 centre c and radius h
(both dyadic, exact), h <= |c|/4.  Below 2^E0 one cell of centre 0 and
radius 2^E0 ("zero cell").  Odd and even functions use |x| (the sign put
back for odd ones); the others have a mirrored set of cells for x < 0.

The polynomial.  With t = x - c, P(t) = Σ_{k<n} â_k t^k, â_k the Taylor
coefficients a_k = f^(k)(c)/k! rounded: to a pair (nearest double of
arb's midpoint plus the nearest double of the rest) for k < K, to a double
for k >= K.  In a zero cell of a function with f(0) = 0 ("vanishing":
erf, i1e) the polynomial is Q(t) = Σ_{k<n} â_(k+1) t^k and the value
Q·t, so that its bound is relative however small x is.

Exactness of t.  The kernel computes t = RN(x - c) and accepts an element
only where |t| <= h.  If |x - c| > |c|/2 then |RN(x - c)| >= RN(|c|/2) =
|c|/2 > h (rounding is monotone and |c|/2 is a double), so an accepted x
lies in [|c|/2, 3|c|/2] and x - c is exact (Sterbenz); in a zero cell t =
x.  Whatever the cell index computation did, an accepted element lies in
the cell whose coefficients it used, with t exact and |t| <= h.

Evaluation and its error (u = 2^-53; all operations IEEE float64 rounding
to nearest, checked by ddfast.rounds_to_nearest; dd.py's JMP bounds):
float64 Horner for k = n-1 … K, q̂; then K steps in pairs,
P̂_k = add(mul_fp(P̂_(k+1), t), â_k).  With A_k = |â_k| and M_k =
Σ_{i>=k} A_i h^(i-k) (a bound on the exact Horner partial sums):
* Horner in float64, m = n-1-K steps: |q̂ - q| <= γ_2m·M_K, γ_j =
  ju/(1 - ju) (Higham, *Accuracy and Stability of Numerical Algorithms*,
  2nd ed., eq. 5.3): E_K.
* A pair step (`_step`): from (ph, pl), |pl| <= u|ph| (a TwoSum's
  output), |ph + pl| <= Y := M_(k+1) + E_(k+1): p + e = ph·t exactly
  (Dekker), s + f = p + ah exactly (TwoSum), l = ((pl·t + e) + f) + al
  in float64, and (s, l) renormalised by TwoSum (exact; the last step
  returns (s, l) as it is, ddfast.decide sums it exactly).  Only l's four
  roundings err, by at most γ_4·(|pl·t| + |e| + |f| + |al|), each term
  at most u·(1 + u)·(|ph|·h, |p|, |s|, |ah|) <= 1.01u·S_k, S_k = h·Y +
  A_k: E_k = h·E_(k+1) + 17u²·S_k (γ_4·4.04 < 16.2u²).
* The coefficients: Σ_k |â_k - a_k|·h^k, each |â_k - a_k| bounded by
  arb (the ball minus the stored value, rounded up).
* Truncation (Lagrange): |f(c + t) - Σ_{k<n} a_k t^k| <= B·h^n, B an
  upper bound of |f^(n)(ξ)/n!| over the cell (of f^(n+1)/(n+1)! for
  vanishing cells), from arb's Taylor series over the cell's ball or,
  for lgamma and digamma, from the Hurwitz zeta at the cell's left end
  (those coefficients are ±ζ(k, ξ)/k or ±ζ(k+1, ξ), decreasing in ξ > 0).
* Underflow: a Dekker product or TwoSum below 2^-969 may lose its error
  term, by less than 2^-1074 a rounding; fewer than 64 roundings per
  element: 2^-1060 is added.
The sum E of these is an absolute bound on |P̂ - f(x)| (plain cells).
In a vanishing cell, with Q_min > 0 a lower bound of |Q| over the cell,
the value R = mul_fp(Q̂, t) has |R - f| <= |t|·E + 2u²·|t|·(|Q| + E):
relative error E/Q_min·(1 + 2u²) + 2u² (plus 2^-490 for underflow: these
cells are used only where |x| >= 2^-500).  Every sum above is formed in
arb with upward-rounded radii and read back as a float64 upper bound.

`decide` (ddfast.decide) then rounds the pair and accepts only where
E (or the relative bound) keeps the true value strictly inside one
rounding interval; the rest goes to the long double pass, then the
double-word refinement or arb, then MPFR.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from flint import arb, ctx

from .dd import mul_fp, split, two_sum

PREC = 160          # bits of arb's working precision for the tables
_U = 2.0 ** -53
_SUB = 4096        # elements at once


def _up(b: arb) -> float:
    """A float64 >= every point of |b| (arb's upper bound, then one ulp up
    and a relative 2^-50 for the conversion)."""
    v = float(b.abs_upper())
    return math.nextafter(v * (1 + 2.0 ** -50), math.inf)


def _pair(b: arb) -> tuple:
    hi = float(b.mid())
    lo = float((b.mid() - arb(hi)).mid())
    return hi, lo


@dataclass
class Spec:
    """What a function's table is built from.
    series(x: arb, n) -> n Taylor coefficients (arb) of f at x (x a point
    or a ball); tail(c, h, n) -> an upper bound (arb) of |f^(n)/n!| over
    [c - h, c + h], or None to use series over the ball."""
    name: str
    series: object
    e0: int                     # the zero cell below 2^e0 (or nothing, zero=None)
    e1: int                     # binades up to 2^e1
    count: object               # e -> cells in binade [2^e, 2^(e+1))
    n: int                      # degree + 1
    k: int                      # coefficients in pairs
    symmetry: str               # "odd", "even" or "none"
    zero: str | None            # "vanish", "plain" or None (no zero cell)
    tail: object = None
    lo_bound: float = 0.0       # |x| below this is outside (besides the zero cell's own limit)
    hi_bound: float = math.inf  # |x| above (or equal) is outside
    neg_hi_bound: float = math.inf


@dataclass
class Table:
    spec: Spec
    center: np.ndarray
    radius: np.ndarray
    rel: np.ndarray            # per cell: relative bound (vanishing cells), else 0
    abs_: np.ndarray           # per cell: absolute bound (plain cells), else 0
    vanish: np.ndarray         # per cell: bool
    hi: np.ndarray             # [k][cell]
    lo: np.ndarray             # [k][cell], k < K
    offset: np.ndarray         # per binade index: first cell
    scale: np.ndarray          # per binade index: 2·count
    neg: int                   # offset of the mirrored cells (symmetry "none")
    zero_index: int
    worst: list = field(default_factory=list)


def _cells(spec: Spec) -> list:
    """(centre, radius, vanishing) for x >= 0, zero cell first."""
    out = []
    if spec.zero is not None:
        out.append((0.0, 2.0 ** spec.e0, spec.zero == "vanish"))
    for e in range(spec.e0, spec.e1):
        m = spec.count(e)
        w = 2.0 ** e / m
        for j in range(m):
            out.append((2.0 ** e + (j + 0.5) * w, w / 2, False))
    return out


def _cell_bound(spec: Spec, c: float, h: float, vanish: bool) -> tuple:
    """(coefficient pairs [(hi, lo)], rel, abs, worst relative error over
    the cell or None) for one cell (module docstring)."""
    n, K = spec.n, spec.k
    ca, ha = arb(c), arb(h)
    if vanish:
        a = spec.series(ca, n + 1)[1:]
        tail = spec.series(arb(c, h), n + 2)[n + 1] if spec.tail is None else spec.tail(c, h, n + 1)
    else:
        a = spec.series(ca, n)
        tail = spec.series(arb(c, h), n + 1)[n] if spec.tail is None else spec.tail(c, h, n)
    hi, lo, err, mag = [], [], arb(0), []
    for k in range(n):
        if k < K:
            p = _pair(a[k])
            got = arb(p[0]) + arb(p[1])
        else:
            p = (float(a[k].mid()), 0.0)
            got = arb(p[0])
        hi.append(p[0])
        lo.append(p[1])
        err += (a[k] - got).abs_upper() * ha ** k
        mag.append(got.abs_upper())
    u, u2 = arb(_U), arb(_U) ** 2
    M = [arb(0)] * (n + 1)
    for k in range(n - 1, -1, -1):
        M[k] = mag[k] + ha * M[k + 1]
    m = n - 1 - K
    gam = (2 * m) * u / (1 - (2 * m) * u)
    E = gam * M[K]
    for k in range(K - 1, -1, -1):
        E = ha * E + 17 * u2 * (ha * (M[k + 1] + E) + mag[k])
    E = E + err + tail.abs_upper() * ha ** n + arb(2.0) ** -1060
    if vanish:
        qmin = mag[0] - sum(((mag[k] + (a[k] - arb(hi[k]) - arb(lo[k])).abs_upper()) * ha ** k
                             for k in range(1, n)), arb(0)) - tail.abs_upper() * ha ** n
        qmin = qmin - (a[0] - arb(hi[0]) - arb(lo[0])).abs_upper()
        if not qmin > 0:
            raise AssertionError(f"{spec.name}: no lower bound of |Q| in the zero cell")
        rel = E / qmin * (1 + 2 * u2) + 2 * u2 + arb(2.0) ** -490
        return hi, lo, _up(rel), 0.0, _up(rel)
    return hi, lo, 0.0, _up(E), None


def build(spec: Spec) -> Table:
    """The cells' tables and bounds, at PREC bits and with arb's series
    length cap raised above the degree (flint's ctx.cap, 10 by default,
    silently truncates every series to that many coefficients)."""
    old, ctx.prec = ctx.prec, PREC
    old_cap, ctx.cap = ctx.cap, max(ctx.cap, spec.n + 8)
    try:
        cells = _cells(spec)
        for c, h, _ in cells:
            if c != 0 and not h <= abs(c) / 4:
                raise AssertionError(f"{spec.name}: cell at {c} too wide")
        signs = [1.0] if spec.symmetry in ("odd", "even") else [1.0, -1.0]
        rows = []
        for sgn in signs:
            for c, h, v in cells:
                if sgn < 0 and c == 0:
                    continue
                if sgn < 0 and c - h >= spec.neg_hi_bound:
                    rows.append((sgn * c, h, v, [0.0] * spec.n, [0.0] * spec.n, 0.0, math.inf))
                    continue
                if c - h >= spec.hi_bound and sgn > 0:
                    rows.append((c, h, v, [0.0] * spec.n, [0.0] * spec.n, 0.0, math.inf))
                    continue
                hi, lo, rel, ab, _ = _cell_bound(spec, sgn * c, h, v)
                rows.append((sgn * c, h, v, hi, lo, rel, ab))
    finally:
        ctx.prec = old
        ctx.cap = old_cap
    nb = spec.e1 - spec.e0
    counts = [spec.count(e) for e in range(spec.e0, spec.e1)]
    z = 1 if spec.zero is not None else 0
    offset = np.array([z + sum(counts[:b]) for b in range(nb)], dtype=np.int64)
    return Table(spec,
                 center=np.array([r[0] for r in rows]), radius=np.array([r[1] for r in rows]),
                 rel=np.array([r[5] for r in rows]), abs_=np.array([r[6] for r in rows]),
                 vanish=np.array([r[2] for r in rows]),
                 hi=np.array([[r[3][k] for r in rows] for k in range(spec.n)]),
                 lo=np.array([[r[4][k] for r in rows] for k in range(spec.k)]),
                 offset=offset, scale=np.array([2.0 * m for m in counts]),
                 neg=len(cells) - z if len(signs) == 2 else 0, zero_index=0)


def _index(tab: Table, x: np.ndarray) -> np.ndarray:
    """The cell of each x (any index where x is outside: the kernel's
    |t| <= h test and the domain mask reject those)."""
    spec = tab.spec
    a = np.abs(x)
    a[~(a < np.inf)] = 0.0           # NaN and infinities: any cell (rejected by the kernel's mask)
    m, e = np.frexp(a)
    b = e.astype(np.int64) - 1 - spec.e0
    nb = len(tab.offset)
    inb = (b >= 0) & (b < nb)
    bc = np.where(inb, b, 0)
    idx = tab.offset[bc] + ((m - 0.5) * tab.scale[bc]).astype(np.int64)
    zero = (b < 0) & (spec.zero is not None)
    idx = np.where(zero, 0, idx)
    idx = np.where(inb | zero, idx, 0)
    if tab.neg:
        idx = np.where((x < 0) & ~zero, idx + tab.neg, idx)
    return idx


def _step(ph, pl, th, tl, t, ah, al, last: bool):
    """(ph + pl)·t + (ah + al) (module docstring: E_k); t = th + tl its
    Veltkamp split, shared by the steps."""
    p = ph * t
    hh, hl = split(ph)
    e = ((hh * th - p) + hh * tl + hl * th) + hl * tl
    s, f = two_sum(p, ah)
    lo = pl * t
    lo += e
    lo += f
    lo += al
    return (s, lo) if last else two_sum(s, lo)


def _chunk(tab: Table, x: np.ndarray) -> tuple:
    spec = tab.spec
    xs = np.abs(x) if spec.symmetry in ("odd", "even") else x
    idx = _index(tab, x)
    t = xs - tab.center[idx]
    inside = np.abs(t) <= tab.radius[idx]
    n, K = spec.n, spec.k
    q = tab.hi[n - 1][idx]
    for k in range(n - 2, K - 1, -1):
        q = q * t + tab.hi[k][idx]
    ph, pl = q, np.zeros_like(q)
    th, tl = split(t)
    for k in range(K - 1, -1, -1):
        ph, pl = _step(ph, pl, th, tl, t, tab.hi[k][idx], tab.lo[k][idx], k == 0)
    van = tab.vanish[idx]
    if van.any():
        vh, vl = mul_fp(*two_sum(ph, pl), t)
        ph, pl = np.where(van, vh, ph), np.where(van, vl, pl)
        inside &= ~van | (np.abs(x) >= 2.0 ** -500)
    if spec.symmetry == "odd":
        neg = x < 0
        ph, pl = np.where(neg, -ph, ph), np.where(neg, -pl, pl)
    a = np.abs(x)
    inside &= (a < spec.hi_bound) & (a >= spec.lo_bound) & np.isfinite(x)
    if tab.neg:
        inside &= ~((x < 0) & (a >= spec.neg_hi_bound))
    inside &= np.isfinite(tab.abs_[idx])
    return ph, pl, tab.rel[idx], tab.abs_[idx], inside


def evaluate(tab: Table, x: np.ndarray) -> tuple:
    """(h, lo, rel, abs, inside) over a flat float64 array."""
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    outs = [np.empty_like(x) for _ in range(4)] + [np.zeros(len(x), dtype=bool)]
    with np.errstate(all="ignore"):
        for a in range(0, len(x), _SUB):
            c = slice(a, a + _SUB)
            for o, v in zip(outs, _chunk(tab, x[c])):
                o[c] = v
    return tuple(outs)
