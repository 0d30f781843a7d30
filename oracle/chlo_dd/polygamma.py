"""ψ⁽ⁿ⁾(x) = (-1)^(n+1)·n!·ζ(n + 1, x) in double-word arithmetic (dd.py),
for integer 1 <= n <= 6 and 2^-20 <= x <= 2^20: the refinement of the
elements of f64 polygamma the long double pass leaves (chlo_dd/__init__).

With s = n + 1 (2 … 7), N = max(0, ⌈16 - x⌉) and z = x + N >= 16, the
Euler–Maclaurin formula (DLMF 2.10.1, with f(t) = (x + t)^-s on [N, ∞)):

    ζ(s, x) = Σ_{k<N} (x + k)^-s + w^(s-1)·V + R,   w = 1/z,
    V = 1/(s-1) + w/2 + Σ_{j=1..J} a_j(s)·w^(2j),
    a_j(s) = B_2j/(2j)!·s(s+1)…(s+2j-2),

and DLMF 2.10.1's remainder R = ∫ (B_2m - B̃_2m(t))/(2m)!·f^(2m)(t) dt,
m = J + 1, with |B_2m - B̃_2m(t)| <= 2|B_2m| (DLMF 24.9.1: |B̃_2m| <=
|B_2m|) and f^(2m) > 0, is at most 2|a_(J+1)|·w^(2J+2)·w^(s-1) — and ζ(s,
x) >= ∫_N^∞ f = w^(s-1)/(s-1), so |R|/ζ <= 2(s-1)|a_(J+1)|·w^(2J+2).  At
w <= 1/16 that is below 2^-90 for J = `_J` and every s <= 7 (checked in
exact rationals when the table is built, `_table`).

Error (OP = 16u², u = 2^-53, the bound of each double-word operation,
dd.py; every quantity below is positive, so relative errors of sums are
at most the largest of their parts' plus the additions'):
* each direct term: x + k exact (TwoSum), its reciprocal (1 OP), s - 1
  products: <= 7 OP;
* w^(s-1): w (1 OP) and s - 2 products: <= 11 OP;
* V: 1/(s-1) as the nearest pair (u²), w/2 (1 OP), and the Bernoulli sum
  S, in pairs from j = `_J0` down (each step 2 OP of its terms'
  magnitudes, Σ|a_j|w^(2j) <= V/50, checked: below 0.3 OP of V
  together) and in float64 above (terms below 2^-40 of V, checked in
  `_table`; float64 Horner of J terms, w² rounded to its head, within
  4J·u of them: below 2^-87 of V); two additions: <= 4 OP + 2^-87;
* w^(s-1)·V: 1 OP; the sum of at most 17 terms: 17 OP; times ±n!
  (exact in float64 for n <= 6): 1 OP.
Total: 41 OP = 656u² < 2^-96.6, plus 2^-87 (float64 tail) and 2^-90
(truncation): below 2^-86.8.  BOUND = 2^-84 is seven times that.  Every
intermediate lies between 2^-300 and 2^300 (x^-7 <= 2^140, w^(s-1) >=
2^-143, their low parts and errors within 2^-110 of them), far inside
binary64's normal range, so the error-free transformations are exact.
"""
from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from .dd import add, div, mul, mul_fp, two_sum
from .series import bernoulli

BOUND = 2.0 ** -84
_Z = 16                 # Euler–Maclaurin from z = x + N >= 16
_J = 22                 # Bernoulli terms
_J0 = 6                 # a_1 … a_6 in pairs, a_7 … a_22 in float64
_S_MAX = 7              # n <= 6
_X_LO, _X_HI = 2.0 ** -20, 2.0 ** 20


def _pair(q: Fraction) -> tuple:
    """The nearest pair to q: hi = float(q) (Python rounds a Fraction to
    nearest), lo the nearest float to the rest: within u² of q."""
    hi = float(q)
    return hi, float(q - Fraction(hi))


@functools.cache
def _table() -> tuple:
    """(a_j(s) pairs for j <= _J0, a_j(s) float64 for j > _J0, 1/(s-1)
    pairs), each indexed [j][s], after the module docstring's checks in
    exact rationals at w = 1/16 (the largest w)."""
    b = bernoulli(2 * _J + 2)
    w2 = Fraction(1, _Z * _Z)
    a = [[Fraction(0)] * (_S_MAX + 1) for _ in range(_J + 2)]
    for s in range(2, _S_MAX + 1):
        for j in range(1, _J + 2):
            a[j][s] = b[2 * j] / math.factorial(2 * j) * math.prod(range(s, s + 2 * j - 1))
        inv = Fraction(1, s - 1)
        if 2 * (s - 1) * abs(a[_J + 1][s]) * w2 ** (_J + 1) > Fraction(1, 2 ** 90):
            raise AssertionError(f"polygamma: Euler–Maclaurin truncation above 2^-90 at s = {s}")
        if sum(abs(a[j][s]) * w2 ** j for j in range(_J0 + 1, _J + 1)) > Fraction(1, 2 ** 40) * inv:
            raise AssertionError(f"polygamma: the float64 Bernoulli terms pass 2^-40 of V at s = {s}")
        if sum(abs(a[j][s]) * w2 ** j for j in range(1, _J + 1)) > Fraction(1, 50) * inv:
            raise AssertionError(f"polygamma: the Bernoulli sum passes V/50 at s = {s}")
    pairs = [[_pair(a[j][s]) for s in range(_S_MAX + 1)] for j in range(_J0 + 1)]
    hi = np.array([[p[0] for p in row] for row in pairs])
    lo = np.array([[p[1] for p in row] for row in pairs])
    f64 = np.array([[float(a[j][s]) for s in range(_S_MAX + 1)] for j in range(_J + 1)])
    inv = [_pair(Fraction(1, s - 1)) if s >= 2 else (0.0, 0.0) for s in range(_S_MAX + 1)]
    return hi, lo, f64, np.array([p[0] for p in inv]), np.array([p[1] for p in inv])


def _power(wh, wl, e, e_max: int):
    """(wh + wl)^e for integer 1 <= e <= e_max per element: e - 1 products."""
    ph, pl = wh, wl
    for m in range(2, e_max + 1):
        qh, ql = mul(ph, pl, wh, wl)
        more = e >= m
        ph, pl = np.where(more, qh, ph), np.where(more, ql, pl)
    return ph, pl


def _zeta(s: np.ndarray, x: np.ndarray) -> tuple:
    """ζ(s, x) as a pair (module docstring), s integer in 2 … 7, x in domain."""
    a_hi, a_lo, a64, inv_hi, inv_lo = _table()
    si = s.astype(np.int64)
    s_max = int(si.max())
    n = np.where(x < _Z, np.ceil(_Z - x), 0.0)
    # the elements in decreasing order of their number of direct terms: term k's are a prefix
    order = np.argsort(-n, kind="stable")
    x, si, n = x[order], si[order], n[order]
    ah, al = np.zeros_like(x), np.zeros_like(x)
    one = np.ones_like(x)
    for k in range(int(n[0]) if len(n) else 0):
        m = int(np.searchsorted(-n, -k, side="left"))          # the elements with n > k
        bh, bl = two_sum(x[:m], float(k))                       # exact
        wh, wl = div(one[:m], 0.0, bh, bl)
        th, tl = _power(wh, wl, si[:m], s_max)
        ah[:m], al[:m] = add(ah[:m], al[:m], th, tl)
    zh, zl = two_sum(x, n)                                      # exact
    wh, wl = div(one, 0.0, zh, zl)
    w2h, w2l = mul(wh, wl, wh, wl)
    acc = a64[_J].take(si)
    for j in range(_J - 1, _J0, -1):
        acc = acc * w2h + a64[j].take(si)
    sh, sl = acc, np.zeros_like(acc)
    for j in range(_J0, 0, -1):
        sh, sl = mul(sh, sl, w2h, w2l)
        sh, sl = add(sh, sl, a_hi[j].take(si), a_lo[j].take(si))
    sh, sl = mul(sh, sl, w2h, w2l)                              # S = Σ a_j w^(2j)
    vh, vl = add(0.5 * wh, 0.5 * wl, sh, sl)
    vh, vl = add(inv_hi.take(si), inv_lo.take(si), vh, vl)     # V
    ph, pl = _power(wh, wl, si - 1, max(s_max - 1, 1))          # w^(s-1)
    th, tl = mul(ph, pl, vh, vl)
    rh, rl = add(ah, al, th, tl)
    back = np.empty_like(order)
    back[order] = np.arange(len(order))
    return rh[back], rl[back]


def pair(args: list) -> tuple:
    """(h, lo, BOUND, domain mask) for polygamma(n, x): h + lo within
    BOUND relative of ψ⁽ⁿ⁾(x) where the mask holds (module docstring)."""
    n, x = (np.asarray(a, dtype=np.float64).reshape(-1) for a in args)
    inside = (n >= 1) & (n <= _S_MAX - 1) & (n == np.floor(n)) & (x >= _X_LO) & (x <= _X_HI)
    n1 = np.where(inside, n, 1.0)
    h, lo = np.zeros_like(x), np.zeros_like(x)
    i = np.flatnonzero(inside)
    if len(i):
        zh, zl = _zeta(n1[i] + 1, x[i])
        ni = n1[i].astype(np.int64)
        f = np.where(ni % 2 == 1, 1.0, -1.0) * np.array([float(math.factorial(k)) for k in range(_S_MAX)])[ni]
        h[i], lo[i] = mul_fp(zh, zl, f)
    return h, lo, BOUND, inside
