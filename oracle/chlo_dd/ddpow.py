"""b^-s for a double-word b = bh + bl and float64 s, as exp(-s·log b) in
double-word arithmetic: the powers of the Hurwitz zeta's Euler–Maclaurin
sum (zeta.py).  A power's relative error is the absolute error of its
exponent -s·log b plus exp's own, so log b is computed to an *absolute*
bound (LOG_ABS = 2^-81, the analysis below gives 2^-81.05) and exp to a
relative one (EXP_REL = 2^-81, analysis 2^-81.3):

    |b^-s computed / b^-s - 1| <= s·LOG_ABS + EXP_REL + 2^-94   (`rel_bound`)

for bh in [2^-21, 2^41] (normal; |bl| <= 2^-53·bh, as TwoSum leaves it),
1 < s and |s·log2 b| <= 900 (so every value and intermediate below is a
normal binary64 far from the range's ends).  u = 2^-53; every operation is
a float64 +, -, *, / rounded to nearest (the caller checks
ddfast.rounds_to_nearest), exact where said (error-free transformations,
dd.py; "head" = a float64 with its low 27 bits cleared, 26 significant
bits, so that head × head and head × (the 27-bit rest) are exact).  Tables
come from mpmath at 300 bits, read as exact rationals (`tables`: the
2^-300 they carry is far below every term here).

log b = e·ln2 - log c + log1p(z) + log1p(bl/bh), bh = 2^e·m, m in
[0.75, 1.5) (m >= 1.5 is halved: exact), c = c_i the 1/m of m's cell
[0.75 + i/1024, 0.75 + (i+1)/1024) rounded to 12 bits, z = m·c - 1:
* z exact as zh + zl: m = mh + ml (head, rest); mh·c (38 bits) and ml·c
  (39) exact, mh·c - 1 exact (Sterbenz: mh·c within 2^-9 of 1), one TwoSum.
  |z| <= Z_LOG = 2^-9.9 (checked over every cell in exact rationals).
* log1p(zh) = zh - zh²/2 + zh³·Q(zh), Q = 1/3 - zh/4 + … - zh⁵/8; the
  series' rest is below |z|^9/9·1.001 = 2^-92.3.  zh² = sh + sl, sh =
  head² exact, sl = hl·(hh + zh) (exact value zh² - sh; |sl| <= 2^-43.8,
  two roundings: 2^-95.8).  Q in float64 Horner: within 0.7u (1/3's
  rounding, the last addition, the rest below 2^-11.9 of them), so C =
  zh³·Q within 5.1u relative, |C| <= 2^-31.28: 2^-81.93.  zl's part
  zl·(1 - zh + zh²) (rest below 2^-140).  TwoSum(zh, -sh/2) exact; three
  roundings of sums below 2^-31.26 into the low part: 2·2^-84.27 (the
  third at 2^-97.7).  log1p(z): within 2^-81.45.
* e·ln2: ln2 = L2H (42 bits: e·L2H exact, |e| <= 42) + L2L (within
  2^-95); e·L2L's rounding and L2L's, times |e|: 2·2^-89.6.  -log c as
  the nearest pair (2^-107.8).  log1p(bl/bh) = bl/bh within 2^-105.
  Collecting: two TwoSums (exact) and five roundings of low parts, three
  below 2^-31.1 in magnitude (2^-84.1 each) and two below 2^-36.5
  (2^-89.6 each); then TwoSum to a normalised pair (exact).
  Total: 2^-81.45 + 2^-84.2 + 2^-84.1 + 4·2^-89.6 + 2^-95 <= 2^-81.05.

y = -s·log b by DWTimesFP1 (dd.mul_fp, 1.5u² + 4u³ relative, |y| <= 624):
2^-96.1.  exp(y), y = yh + yl normalised:
* k = rint(yh·INV), INV ≈ 256/ln2; r = y - k·C, C = ln2/256 = C1 + C2 +
  C3 (C1, C2 of 35 bits: k·C1, k·C2 exact for |k| < 2^18), by two
  TwoSums and three roundings of parts below 2^-43.6 (2^-95.1) and k's
  share of C's truncation (checked in `tables`), then TwoSum: r = rh + rl
  normalised, |r| <= ln2/512 + 2^-40 <= 2^-9.52.
* exp(y) = 2^m·T_j·exp(r), k = 256m + j, T_j = 2^(j/256) as the nearest
  pair (u²).  exp(r) - 1 = p: rh + rh²/2 + rh³·Q'(rh) + rl·(1 + rh + rh²/2),
  Q' = 1/6 + rh/24 + … + rh⁴/5040 (rest below 2^-91.4; rl's second-order
  terms below 2^-93); rh² = sh + sl as above (|sl| <= 2^-44, 2^-96);
  Q' within 0.34u, C' = rh³·Q' within 5.1u of |C'| <= 2^-31.13:
  2^-81.78; TwoSum(rh, sh/2) exact and two roundings into the low part
  below 2^-31.1: 2·2^-84.1; Fast2Sum to a pair (|ph| > |pl|: exact).
  p within 2^-81.3.
* T·(1 + p) = add(T, mul(T, p)): 7u²·2^-8.5 + 3.1u² + u² (T) relative;
  times 2^m exact.  exp's total: 2^-81.3·1.002 + 2^-103.9 <= 2^-81.28.

So the power: exp of an exponent off by s·2^-81.05 + 2^-96.1 + 2^-95.1,
within 2^-81.28 itself: `rel_bound`.  Held against arb in
tests/oracle/test_chlo_dd_zeta.py.
"""
from __future__ import annotations

import functools
from fractions import Fraction

import mpmath
import numpy as np

from .dd import add, fast_two_sum, mul, mul_fp, two_sum

LOG_ABS = 2.0 ** -81
EXP_REL = 2.0 ** -81
Z_LOG = 2.0 ** -9.9           # |z| of log's reduction, checked over the cells
B_LO, B_HI = 2.0 ** -21, 2.0 ** 41
Y_MAX = 900 * 0.6931471805599453   # |y| = |s·log b| <= 900·ln 2

_MANT = np.uint64((1 << 52) - 1)
_ONE = np.uint64(1023 << 52)
_LO27 = np.uint64(~((1 << 27) - 1) & ((1 << 64) - 1))


def rel_bound(s):
    """The power's relative error bound for exponent s (module docstring)."""
    return s * LOG_ABS + EXP_REL + 2.0 ** -94


def _head(a):
    return (a.view(np.uint64) & _LO27).view(np.float64)


def _exact(v) -> Fraction:
    """An mpf read as the exact rational it is."""
    sign, m, e, _ = mpmath.mpf(v)._mpf_
    return (-1) ** sign * Fraction(int(m)) * Fraction(2) ** int(e)


def _truncated(x: Fraction, bits: int) -> float:
    """x > 0 truncated toward zero to `bits` significant bits (exact in float64)."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    while x >= Fraction(2) ** (e + 1):
        e += 1
    while x < Fraction(2) ** e:
        e -= 1                                   # 2^e <= x < 2^(e+1)
    q = Fraction(2) ** (e - bits + 1)
    return float((x // q) * q)


def _pair(x: Fraction) -> tuple:
    hi = float(x)
    return hi, float(x - Fraction(hi))


@functools.cache
def tables() -> dict:
    """Log's cells (c_i, -log c_i as pairs), exp's 2^(j/256) pairs and the
    reduction constants, with the checks the module docstring cites, in
    exact rationals of mpmath's 300-bit values."""
    with mpmath.workprec(300):
        ln2 = _exact(mpmath.log(2))
        lo = [Fraction(3, 4) + Fraction(i, 1024) for i in range(768)]
        # c = 1/centre rounded to 12 significant bits (1/centre lies in (2/3, 4/3]: 11 or 12 bits after the point)
        cs = []
        for a in lo:
            inv = 1 / (a + Fraction(1, 2048))
            scale = 11 if inv >= 1 else 12
            cs.append(float(Fraction(round(inv * 2 ** scale), 2 ** scale)))
        zmax = max(max(abs(a * Fraction(c) - 1), abs((a + Fraction(1, 1024)) * Fraction(c) - 1))
                   for a, c in zip(lo, cs))
        if zmax > Fraction(Z_LOG):
            raise AssertionError(f"ddpow: log's reduction reaches |z| = {float(zmax)}")
        g = [_pair(_exact(-mpmath.log(mpmath.mpf(c)))) for c in cs]
        t = [_pair(_exact(mpmath.power(2, mpmath.mpf(j) / 256))) for j in range(256)]
    c = ln2 / 256
    c1 = _truncated(c, 35)
    c2 = _truncated(c - Fraction(c1), 35)
    c3 = float(c - Fraction(c1) - Fraction(c2))
    rest = abs(c - Fraction(c1) - Fraction(c2) - Fraction(c3))
    if rest * 2 ** 18 > Fraction(2) ** -110:
        raise AssertionError("ddpow: ln2/256's truncation too coarse")
    l2h = _truncated(ln2, 42)
    l2l = float(ln2 - Fraction(l2h))
    if abs(ln2 - Fraction(l2h) - Fraction(l2l)) > Fraction(2) ** -95:
        raise AssertionError("ddpow: ln2's pair too coarse")
    arr = lambda ps, k: np.array([p[k] for p in ps])
    return dict(c=np.array(cs), gh=arr(g, 0), gl=arr(g, 1), th=arr(t, 0), tl=arr(t, 1),
                c1=c1, c2=c2, c3=c3, inv=float(1 / c), l2h=l2h, l2l=l2l)


def log_pair(bh, bl):
    """log(bh + bl) as a normalised pair, within LOG_ABS absolutely, for bh
    in [B_LO, B_HI] and |bl| <= 2^-53·bh (module docstring)."""
    T = tables()
    b = bh.view(np.uint64)
    e = (b >> np.uint64(52)).astype(np.int64) - 1023
    m = ((b & _MANT) | _ONE).view(np.float64)            # [1, 2)
    big = m >= 1.5
    m = m * (1 - 0.5 * big)                              # exact: a halving or not
    e += big
    i = ((m - 0.75) * 1024).astype(np.int64)             # m - 0.75 exact (Sterbenz), times 2^10 exact
    c = T["c"][i]
    mh = _head(m)
    zh, zl = two_sum(mh * c - 1, (m - mh) * c)           # exact: m·c - 1
    hh = _head(zh)
    hl = zh - hh
    sh = hh * hh                                         # exact
    sl = hl * (hh + zh)                                  # zh² - sh, two roundings
    q = 1 / 3 - zh * (0.25 - zh * (0.2 - zh * (1 / 6 - zh * (1 / 7 - zh * 0.125))))
    h1, e1 = two_sum(zh, -0.5 * sh)
    lo1 = e1 + ((zl * (1 - zh * (1 - zh)) - 0.5 * sl) + ((sh + sl) * zh) * q)
    ef = e.astype(np.float64)
    ah, al = two_sum(ef * T["l2h"], T["gh"][i])          # e·l2h exact (42 bits times |e| <= 42)
    h, hl2 = two_sum(ah, h1)
    lo = (hl2 + al) + (lo1 + ((ef * T["l2l"] + T["gl"][i]) + bl / bh))
    return two_sum(h, lo)


def _pow2(m):
    """2.0^m for int64 m in [-1022, 1023], from its bits."""
    return ((m + 1023) << 52).view(np.float64)


def exp_pair(yh, yl):
    """exp(yh + yl) as a pair, within EXP_REL relatively, for a normalised
    pair with |yh| <= Y_MAX (module docstring)."""
    T = tables()
    k = np.rint(yh * T["inv"])
    a, ea = two_sum(yh, -k * T["c1"])                     # k·c1 exact
    rh, t = two_sum(a, -k * T["c2"])                      # k·c2 exact
    rl = t + (ea + (yl - k * T["c3"]))
    rh, rl = two_sum(rh, rl)
    ki = k.astype(np.int64)
    j = ki & 255
    m = ki >> 8
    hh = _head(rh)
    hl = rh - hh
    sh = hh * hh                                          # exact
    sl = hl * (hh + rh)
    q = 1 / 6 + rh * (1 / 24 + rh * (1 / 120 + rh * (1 / 720 + rh * (1 / 5040))))
    ph, e = two_sum(rh, 0.5 * sh)
    pl = e + ((0.5 * sl + rl * (1 + ph)) + ((sh + sl) * rh) * q)
    ph, pl = fast_two_sum(ph, pl)
    th, tl = T["th"][j], T["tl"][j]
    xh, xl = mul(th, tl, ph, pl)
    h, lo = add(th, tl, xh, xl)
    p2 = _pow2(m)
    return h * p2, lo * p2


def pow_neg(bh, bl, s):
    """(bh + bl)^-s as a pair, within rel_bound(s) (module docstring)."""
    lh, ll = log_pair(bh, bl)
    yh, yl = mul_fp(lh, ll, -s)
    return exp_pair(yh, yl)
