"""f64 results of exp, expm1, log, log1p, sin, cos and tanh from a
double-double evaluation in numpy: the first pass of `fast.evaluate` for
binary64 results, before the long double pass and MPFR.

Each kernel (`pair`) returns h + lo (two float64 arrays, not necessarily
normalised) with f(x) within |h + lo|·REL + ABS of (h + lo)·2^scale, for
the arguments in its domain (a mask it returns; elsewhere nothing is
decided).  `decide` rounds h + lo to binary64 and accepts an element only
where that whole interval lies strictly inside half the gap to the
nearer neighbour of the rounded value, so an accepted element is the
correctly rounded value whenever the bound holds.  Nothing of numpy's or
libm's accuracy is assumed: every operation is a float64 +, -, *, / or a
bit mask, which IEEE 754 rounds correctly to nearest (`rounds_to_nearest`
checks on every call that the FPU still does, with gradual underflow),
and the error-free transformations are exact there: TwoSum (Knuth), Fast2Sum
where |a| >= |b| (Dekker; Muller et al., *Handbook of Floating-Point
Arithmetic*, 2nd ed., §4.3), and the product of a 26-bit head (a double
with its low 27 bits cleared: `split26`) and a double of at most 27 bits
(at most 53 significant bits: exact), which stands in for Dekker's
product wherever one factor is a table's head.  The constants (ln 2
and π/2 in pieces; 2^(j/128), 2^(j/128) - 1, -log c_j, sin and cos of
j/128) come from arb at 200 bits: the nearest double (or a 26-bit head)
plus the nearest double to the rest, within 2^-106 (2^-80 for a head's
rest) relative.

The bounds, and why they hold (every neglected term is a Taylor remainder
or a rounding error of a term already small; "relative" is to the result):

* exp, x in [-707, 709]: k = rint(128x/ln2), |k| < 2^17; ln2/128 =
  C1 + C2 + C3, C1 and C2 of 35 bits, so k·C1, k·C2 are exact, x - k·C1
  is exact (Sterbenz: k·C1 within a factor 2 of x for k != 0), and
  r = rh + rl by one TwoSum, |r| < 2^-8.5, |rl| < 2^-60, error < 2^-100.
  k = 128m + j - 64: exp(x) = 2^m·T_j·(1 + p), T_j = 2^((j-64)/128) in
  [0.7, 1.42], p = r + r²·(1/2 + r/6 + … + r⁴/720) (remainder
  |r|^7/7!·e^|r| < 2^-71.5).  T_j·rh as head × split26(rh), exact; the
  r² part (< 2^-18) in float64, its rounding errors < 2^-69.4; the low sum
  < 2^-17, rounded twice: < 2^-69.  Decided before scaling by 2^m
  (-1020 <= m <= 1023, so h·2^m is a normal binary64 and the product
  exact, and the rounding grid scales with it): no part is ever
  subnormal.  < 2^-67.5 relative; REL = 2^-63.
* expm1, x in [-708, 709], the same reduction.  m = 0 (|x| <~ 0.345):
  (T_j - 1) + T_j·p with T_j - 1 a pair of its own and T_j·rh, T_j·rh²/2
  exact (rh² = head² exactly + a rest within 2^-79 of r²), every other
  term < 2^-26: the result is relative to itself — for k = 0 it is p with
  r = x exactly, elsewhere the terms cancel at most by a factor 3.5
  (|k·ln2/128| >= 2|r|).  m != 0 (|x| >~ 0.345): the same pair with T_j
  for T_j - 1, times 2^m, minus 1 by TwoSum, where e^x/|e^x - 1| <= 3.5.
  < 2^-70 relative; REL = 2^-64.
* log, x normal and positive: x = 2^e·m, m in [0.75, 1.5), c_j a 10-bit
  approximation of 1/m on m's 2^-8-wide cell (c = 1 on the two cells next
  to 1); z = m·c - 1 = (mh·c - 1) + ml·c by TwoSum, exact (m = mh + ml, 26
  and 27 bits; mh·c - 1 by Sterbenz), |z| < 2^-7.9.  log x = e·ln2 +
  (-log c_j) + log1p(z), e·ln2_hi exact (ln2_hi of 42 bits);
  log1p(z) = z - z²/2 + z³·(1/3 - z/4 + … - z⁶/9) + zl·(1 - z + z² - z³)
  (remainders < 2^-82), z² as head² exactly + a rest within 2^-79 of z².
  Where e = 0 and c = 1 the result is log1p(z), relative to itself;
  elsewhere |log x| >= 2^-8.6, and the absolute error (the z³ part's
  roundings, < 2^-77; the tables' 2^-106 of terms below 0.3·|e| + 0.42)
  is < 2^-68 of it.  REL = 2^-64.
* log1p, x in (-1, 2^1000]: |x| < 2^-8: that series on z = x exactly.
  Else 1 + x = uh + ul by TwoSum and log1p(x) = log(uh·(1 + ul/uh)): ul/uh
  (< 2^-52) joins z's low part as m·c·ul/uh (the zl terms above carry it;
  its square, < 2^-104, is below 2^-95 of |log1p(x)| > 2^-8.1).
  REL = 2^-64.
* sin, cos, |x| < 2^19: k = rint(2x/π); π/2 = P1 + P2 + P3 (33, 33, 53
  bits); x - k·P1 exact (Sterbenz), then - k·P2 by TwoSum, - k·P3 into the
  low part: r = bh + (be - k·P3), absolute error < 2^-96 (k·P3's rounding
  and π/2's truncation times k; none where k = 0: ABS = 0 there).
  r = a + s, a = j/128, s = sh + sl (sh = bh - a exact, |s| < 2^-8,
  |sl| < 2^-46); sin(r + qπ/2) = A·cos s + B·sin s, (A, B) the table's for
  q = k mod 4 (k + 1 for cos), each a 26-bit head and a rest.
  sin s - s = s³·(-1/6 + s²/120 - s⁴/5040), cos s - 1 = s²·(-1/2 + s²/24
  - s⁴/720) (remainders < 2^-90), sl's terms to first order in sl
  (sl·cos s, -A·sh·sl; sl² < 2^-92).  B·sh as head × split26(sh), exact;
  A·(cos s - 1) (< 2^-17·|A|) in float64: < 2^-69·|A|; the low sum rounded
  twice at < 2^-16: < 2^-69.  |A| <= 2|result| for sin r (|a| >= 2|s|
  where a != 0), |result| >= 0.7 for cos r.  < 2^-67.5 relative plus the
  reduction's absolute error; REL = 2^-63, ABS = 2^-90.
* tanh, |x| <= 300.  |x| >= 1: tanh|x| = 1 - 2/(E + 1), E = exp(2|x|)
  (exp's pair, normalised by Fast2Sum, times 2^m: exact, E in [7, 2^866]),
  D = E + 1 by TwoSum (|dl| <= 2^-52·dh); q1 = 2/dh cut to 26 bits,
  2 - q1·D with q1·dh by head × split26(dh), exact, and 2 - q1·d1 exact by
  Sterbenz; q2 = that / dh (relative 2^-53 of |q2| < 2^-24|q1|, and
  dividing by dh for D: 2^-52 of it); 1 - q1 by TwoSum.  E's relative
  error ε (exp's, < 2^-67.5) moves 2/(E + 1) by at most ε times it, and
  2/(E + 1) <= 0.31·tanh|x| there: < 2^-69 relative.  |x| < 1:
  tanh x = E/(E + 2), E = expm1(2x) (2x exact) as a normalised pair, the
  quotient by the same residual scheme (eh - q1·d1 by Sterbenz); E's
  relative error (expm1's, < 2^-70) at most doubles: 2·(E + 2)^-1 <= 2
  for E > -1.  < 2^-68 relative; REL = 2^-64.

Each REL is at least 16 times the sum above; `fastcheck.check_dd` measures
the largest error against arb's 160-bit balls and holds every decision
against arb (bench/fast_vs_rigorous.py --dd: 10^6 inputs a function, with
the 1/8 nearest a rounding boundary of 4·10^6; tests/oracle/test_ddfast.py
a sample), and bench/dd_identity.py compares the oracle's whole results
with the route before this pass, bit for bit.
"""
from __future__ import annotations

import numpy as np
from flint import arb, ctx

__all__ = ["KERNELS", "pair", "evaluate", "decide", "rounds_to_nearest"]

_MANT = np.uint64((1 << 52) - 1)
_EXP = np.uint64(0x7FF << 52)
_ONE = np.uint64(1023 << 52)
_LO27 = np.uint64(~((1 << 27) - 1) & ((1 << 64) - 1))   # clears a float64's low 27 bits: a 26-bit head


# --------------------------------------------------------------------------
# Error-free transformations
# --------------------------------------------------------------------------

def two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def fast_two_sum(a, b):   # |a| >= |b| (or a = 0)
    s = a + b
    return s, b - (s - a)


def split26(a):
    """a = hi + lo, hi a's leading 26 bits (the rest cleared), lo the other
    27 (exact): a 26-bit factor times either is exact."""
    hi = (a.view(np.uint64) & _LO27).view(np.float64)
    return hi, a - hi


# --------------------------------------------------------------------------
# Constants from arb
# --------------------------------------------------------------------------

def _pair(a: arb) -> tuple[float, float]:
    hi = float(a.mid())
    return hi, float((a - arb(hi)).mid())


def _bits(v: arb, nbits: int, exponent_of: arb) -> float:
    """v truncated to a multiple of 2^(e - nbits + 1), e the exponent of
    `exponent_of` (a float with at most nbits significant bits)."""
    e = int(np.frexp(float(exponent_of.mid()))[1]) - 1
    q = 2.0 ** (e - nbits + 1)
    return float((v / q).floor().mid()) * q


def _head26(v: arb) -> tuple[float, float]:
    """v as a float64 of at most 26 significant bits (v's nearest double,
    its low 27 bits cleared) and the nearest double to the rest."""
    h = np.array([float(v.mid())]).view(np.uint64) & _LO27
    h = float(h.view(np.float64)[0])
    return h, float((v - arb(h)).mid())


def _tables():
    old, ctx.prec = ctx.prec, 200
    try:
        ln2 = arb(2).log()
        c = ln2 / 128
        c1 = _bits(c, 35, c)
        c2 = _bits(c - c1, 35, c - c1)
        c3 = float((c - c1 - c2).mid())
        l2h = _bits(ln2, 42, ln2)
        l2l = float((ln2 - l2h).mid())
        pio2 = arb.pi() / 2
        p1 = _bits(pio2, 33, pio2)
        p2 = _bits(pio2 - p1, 33, pio2 - p1)
        p3 = float((pio2 - p1 - p2).mid())
        tv = [arb(2) ** (arb(int(i)) / 128) for i in range(-64, 64)]
        t26 = [_head26(v) for v in tv]                  # T_j = 2^(j/128): a 26-bit head and a rest
        ct = [_pair(v - 1) for v in tv] + [_pair(v) for v in tv]   # expm1's constant term: T - 1 (m = 0) or T
        # log: cells of width 2^-8 over [0.75, 1.5); c = 1/centre to 10 bits (1 next to 1)
        cells = 0.75 + np.arange(192) / 256.0
        cs = np.array([1.0 if abs(lo + 1 / 512 - 1) < 1 / 256 else
                       float(np.ldexp(np.rint(np.ldexp(1 / (lo + 1 / 512), 9)), -9)) for lo in cells])
        g = [_pair(-arb(float(v)).log()) for v in cs]
        a = [arb(int(i)) / 128 for i in range(-101, 102)]
        sa, ca = [v.sin() for v in a], [v.cos() for v in a]
        # sin(r + q·π/2) = A·cos s + B·sin s for r = a + s: (A, B) by q, each a 26-bit head and a rest
        neg = lambda vs: [-v for v in vs]
        quads = [(sa, ca), (ca, neg(sa)), (neg(sa), neg(ca)), (neg(ca), sa)]
        a26 = [_head26(v) for xs, _ in quads for v in xs]
        b26 = [_head26(v) for _, ys in quads for v in ys]
    finally:
        ctx.prec = old
    arr = lambda ps: (np.array([p[0] for p in ps]), np.array([p[1] for p in ps]))
    return dict(c1=c1, c2=c2, c3=c3, **{"-c2": -c2, "-c3": -c3}, inv=128 / float(ln2.mid()), l2h=l2h, l2l=l2l,
                p1=p1, p2=p2, p3=p3, twoopi=float((2 / arb.pi()).mid()),
                t26=arr(t26), ct=arr(ct), c=cs, g=arr(g),
                a26=arr(a26), b26=arr(b26))


_K: dict = {}   # the constants, built at first use (`pair`): 20 ms of arb


def pair(name: str, x: np.ndarray):
    """The kernel's (h, lo, scale or None, absolute error bound, domain
    mask) for float64 x: f(x) within |h + lo|·REL + that bound of
    (h + lo)·2^scale where the mask holds."""
    if not _K:
        _K.update(_tables())
    with np.errstate(all="ignore"):
        return KERNELS[name][0](np.asarray(x, dtype=np.float64))


# --------------------------------------------------------------------------
# Kernels: (h, lo, scale, absolute bound, domain mask), h + lo ≈ f(x)/2^scale
# --------------------------------------------------------------------------

def pow2(m):
    """2.0^m for int64 m in [-1022, 1023], from its bits (np.ldexp is 20x slower)."""
    return ((m + 1023) << 52).view(np.float64)


def _inside(x, ok, fill=0.0):
    """x with the elements outside a kernel's domain replaced by `fill`."""
    return x if ok.all() else np.where(ok, x, fill)


def _exp_reduce(x):
    """(m, j, rh, rl): x = (128m + j - 64)·ln2/128 + r, r = rh + rl
    (|rl| < 2^-60), j the table index 0..127, m an int64 array."""
    k = np.rint(x * _K["inv"])
    a = x - k * _K["c1"]                                 # exact (Sterbenz; k·c1 exact)
    rh, be = two_sum(a, k * _K["-c2"])
    rl = be + k * _K["-c3"]
    k = k.astype(np.int64)
    k += 64
    return k >> 7, k & 127, rh, rl                       # floor((k + 64)/128), (k + 64) mod 128


def _exp_core(x):
    """exp(x)/2^m as a pair h + lo (h in [0.7, 1.42], lo not normalised:
    up to 2^-17·h), and m."""
    m, j, rh, rl = _exp_reduce(x)
    p2 = (rh * rh) * (0.5 + rh * (1 / 6 + rh * (1 / 24 + rh * (1 / 120 + rh * (1 / 720)))))
    th, tl = _K["t26"][0][j], _K["t26"][1][j]
    hh, hl = split26(rh)
    h, e = fast_two_sum(th, th * hh)                     # 26 x 26 bits: exact
    lo = e + ((tl + th * hl + tl * rh) + (th + tl) * ((rl + rh * rl) + p2))   # th·hl: 26 x 27 bits, exact
    return h, lo, m


def k_exp(x):
    """exp(x)/2^m = T_j·(1 + p), p = r + r²·(1/2 + r/6 + … + r⁴/720)."""
    ok = (x >= -707) & (x <= 709)
    h, lo, m = _exp_core(_inside(x, ok))
    return h, lo, m, 0.0, ok


def k_expm1(x):
    """m = 0: (T_j - 1) + T_j·p; else 2^m·T_j·(1 + p) - 1, with T_j·r and
    T_j·r²/2 exactly (26-bit T_j head times split halves)."""
    ok = (x >= -708) & (x <= 709)
    x = _inside(x, ok)
    m, j, rh, rl = _exp_reduce(x)
    hh, hl = split26(rh)
    sqh = hh * hh                                        # r² = sqh + sqr + 2·rh·rl + rl², sqh exact
    sqr = hl * (hh + rh)
    q = 1 / 6 + rh * (1 / 24 + rh * (1 / 120 + rh * (1 / 720 + rh * (1 / 5040))))
    p3 = rl + rh * rl + 0.5 * sqr + ((sqh + sqr) * rh) * q   # p = rh + sqh/2 + p3
    nz = m != 0
    ci = j + 128 * nz
    ch, cl = _K["ct"][0][ci], _K["ct"][1][ci]
    th, tl = _K["t26"][0][j], _K["t26"][1][j]
    ph = 0.5 * sqh
    gh, gl = split26(ph)
    h, e1 = two_sum(ch, th * hh)
    h, e2 = two_sum(h, th * gh)
    lo = e1 + e2 + (cl + th * hl + th * gl + tl * (rh + ph) + (th + tl) * p3)
    pw = pow2(m)
    h, e3 = two_sum(h * pw, -1.0 * nz)
    lo = lo * pw + e3
    return h, lo, None, 0.0, ok


def _log1p_poly(zh, zl):
    """log1p(zh + zl) for |z| < 2^-7.9, zl <= ulp(zh) (or zl the rest of a sum): a pair."""
    hh, hl = split26(zh)
    sh, sl = hh * hh, hl * (hh + zh)                    # z² = sh (exact) + sl (within 2^-79·z²)
    q = 1 / 8 - zh * (1 / 9)                            # z³·(1/3 - z/4 + z²/5 - …)
    q = 1 / 6 - zh * (1 / 7 - zh * q)
    q = 1 / 4 - zh * (1 / 5 - zh * q)
    q = 1 / 3 - zh * q
    h, e = two_sum(zh, -0.5 * sh)
    lo = e + (zl * (1 - zh * (1 - zh * (1 - zh))) - 0.5 * sl + ((sh + sl) * zh) * q)   # zl/(1 + zh), then z³·q
    return h, lo


def _log_pair(x, extra=None):
    """log(x) for normal positive x as a pair; `extra`: a further relative
    part of x (x·(1 + extra) is the argument), |extra| <= 2^-52."""
    b = x.view(np.uint64)
    e = (b >> np.uint64(52)).astype(np.int64) - 1023
    m = ((b & _MANT) | _ONE).view(np.float64)            # [1, 2)
    big = m >= 1.5
    m = m * (1 - 0.5 * big)                              # exact: a halving or not
    e = e + big
    i = ((m - 0.75) * 256).astype(np.int64)
    c = _K["c"][i]
    mh = (m.view(np.uint64) & _LO27).view(np.float64)    # top 26 bits
    ml = m - mh
    zh, zl = two_sum(mh * c - 1, ml * c)                 # exact: m·c - 1
    if extra is not None:
        zl = zl + (m * c) * extra
    lh, ll = _log1p_poly(zh, zl)
    ef = e.astype(np.float64)
    ah, al = two_sum(ef * _K["l2h"], _K["g"][0][i])       # e·l2h exact (42 bits times |e| < 2^11)
    h, hl = two_sum(ah, lh)
    lo = hl + al + ll + (ef * _K["l2l"] + _K["g"][1][i])
    return h, lo


def k_log(x):
    ok = (x >= 2.0 ** -1022) & (x < np.inf)
    h, lo = _log_pair(_inside(x, ok, 1.0))
    return h, lo, None, 0.0, ok


def k_log1p(x):
    """|x| >= 2^-8: log(uh) + ul/uh for 1 + x = uh + ul; below, the series in x."""
    ok = (x > -1) & (x <= 2.0 ** 1000)
    small = np.abs(x) < 2.0 ** -8
    big = ok & ~small
    uh, ul = two_sum(1.0, _inside(x, big, 1.0))
    h, lo = _log_pair(uh, ul / uh)
    if small.any():
        i = np.flatnonzero(small)
        h[i], lo[i] = _log1p_poly(x[i], np.zeros(len(i)))
    return h, lo, None, 0.0, ok


_SINCOS_ABS = 2.0 ** -90   # 64 times the reduction's 2^-96


def _sincos(x, cosine: bool):
    ok = np.abs(x) < 2.0 ** 19
    x = _inside(x, ok)
    k = np.rint(x * _K["twoopi"])
    a = x - k * _K["p1"]                                 # exact (Sterbenz; k·p1 exact)
    bh, be = two_sum(a, -k * _K["p2"])
    jf = np.rint(bh * 128)
    sh = bh - jf * (1 / 128)                             # exact (Sterbenz for j != 0)
    sl = be - k * _K["p3"]                               # r = a + s, s = sh + sl (not normalised: |sl| < 2^-46)
    j = (k.astype(np.int64) + (1 if cosine else 0)) & 3  # cos x = sin(x + π/2); the quadrant picks (A, B)
    j *= 203
    j += jf.astype(np.int64) + 101
    ah, al = _K["a26"][0][j], _K["a26"][1][j]
    bh26, bl = _K["b26"][0][j], _K["b26"][1][j]
    s2 = sh * sh
    sm = s2 * (-1 / 6 + s2 * (1 / 120 - s2 * (1 / 5040)))     # (sin sh - sh)/sh
    cm = s2 * (-0.5 + s2 * (1 / 24 - s2 * (1 / 720)))         # cos sh - 1
    hh, hl = split26(sh)
    h, e = two_sum(ah, bh26 * hh)                        # 26 x 26 bits: exact
    small = al + bh26 * hl + bl * sh + (bh26 + bl) * (sh * sm + sl * (1 + cm))   # 26 x 27 bits: exact
    lo = e + ((ah + al) * (cm - sh * sl) + small)
    return h, lo, None, (k != 0) * _SINCOS_ABS, ok   # k = 0: r = x exactly


def k_sin(x):
    return _sincos(x, False)


def k_cos(x):
    return _sincos(x, True)


def k_tanh(x):
    """|x| >= 1: sign·(1 - 2/(E + 1)), E = exp(2|x|); below: E/(E + 2),
    E = expm1(2x) (module docstring)."""
    ax = np.abs(x)
    ok = ax <= 300
    if not ok.all():
        x, ax = np.where(ok, x, 0.0), np.where(ok, ax, 0.0)
    # |x| >= 1: E = exp(2|x|) as a normalised pair, scaled (normal: E in [7, 2^866])
    eh, el, m = _exp_core(2 * ax)
    eh, el = fast_two_sum(eh, el)
    pw = pow2(m)
    dh, dl = fast_two_sum(eh * pw, 1.0)                  # D = E + 1 (E >= 7), |dl| <= 2^-52·dh
    dl += el * pw
    q1 = (np.divide(2.0, dh).view(np.uint64) & _LO27).view(np.float64)   # 2/D cut to 26 bits
    d1, d2 = split26(dh)
    q2 = (((2.0 - q1 * d1) - q1 * d2) - q1 * dl) / dh    # 2 - q1·D: q1·d1, q1·d2 exact, 2 - q1·d1 by Sterbenz
    h, lo = fast_two_sum(1.0, -q1)                       # q1 <= 0.24
    lo -= q2
    sign = np.copysign(1.0, x)
    h *= sign
    lo *= sign
    small = ax < 1
    if small.any():
        i = np.flatnonzero(small)
        h[i], lo[i] = _tanh_small(x[i])
    return h, lo, None, 0.0, ok


def _tanh_small(x):
    eh, el, *_ = k_expm1(2 * x)
    eh, el = fast_two_sum(eh, el)
    dh, dl = two_sum(eh, 2.0)                            # D = E + 2, |dl| <= 2^-52·dh
    dl = dl + el
    q1 = split26(eh / dh)[0]                             # a 26-bit quotient
    d1, d2 = split26(dh)
    r = ((eh - q1 * d1) - q1 * d2) + (el - q1 * dl)      # E - q1·D: q1·d1, q1·d2 exact, the first difference by Sterbenz
    return q1, r / dh


# name -> (kernel, REL); a kernel returns (h, lo, scale or None, absolute error bound, domain mask)
KERNELS = {
    "exp": (k_exp, 2.0 ** -63),
    "expm1": (k_expm1, 2.0 ** -64),
    "log": (k_log, 2.0 ** -64),
    "log1p": (k_log1p, 2.0 ** -64),
    "sin": (k_sin, 2.0 ** -63),
    "cos": (k_cos, 2.0 ** -63),
    "tanh": (k_tanh, 2.0 ** -64),
}


# --------------------------------------------------------------------------
# Deciding
# --------------------------------------------------------------------------

_TINY = 2.0 ** -900
_MARGIN = 1 - 2.0 ** -30


def decide(h, lo, rel: float, abs_=0.0, scale=None) -> tuple[np.ndarray, np.ndarray]:
    """(decided mask, binary64 values) for pairs h + lo within
    |h + lo|·rel + abs_ of the true values (times 2^scale where given: the
    pair is decided unscaled, and the result is the scaled value where that
    is a normal binary64, whose rounding grid scales with it).

    r = RN(h + lo) and the exact rest e = h + lo - r (TwoSum); the true
    value lies within |e| + |r|·rel·(1 + 2^-50) + abs_ of r, and RN of it is
    r when that is below half the gap to either neighbour of r (the gap
    below a power of two is half the one above: the smaller one is taken,
    read off the exponent bits of r's predecessor; r normal, |r| >= 2^-900,
    so every term is a normal float64).  The float64 sum of the three
    terms is within 2^-51 of itself, far inside the 2^-30 margin.  NaN and
    infinite r fail the comparison (their slack is NaN)."""
    with np.errstate(all="ignore"):
        return _decide(h, lo, rel, abs_, scale)


def _decide(h, lo, rel, abs_, scale):
    r, e = two_sum(h, lo)
    a = np.abs(r)
    # half the gap to r's nearer neighbour: 2^(E-53) for 2^E <= |r| < 2^(E+1), 2^(E-54) at a power
    # of two — 2^-53 times the exponent of r's predecessor (|r| >= 2^-900: never zero or subnormal)
    half = ((a.view(np.uint64) - np.uint64(1)) & _EXP).view(np.float64)
    half *= 2.0 ** -53 * _MARGIN
    slack = np.abs(e)
    slack += a * (rel * (1 + 2.0 ** -50))
    if np.any(abs_):
        slack += abs_
    ok = slack < half
    ok &= a >= _TINY
    if scale is not None:   # exact where the product is normal (the kernel's domain ensures it; checked)
        r *= pow2(scale)
        a = np.abs(r)
        ok &= (a >= 2.0 ** -1022) & (a < np.inf)
    return ok, r


def rounds_to_nearest() -> bool:
    """float64 arithmetic here rounds to nearest even and keeps subnormals
    (the FPU's modes are per thread; a library may change them)."""
    one = np.ones(4)
    u = np.full(4, 2.0 ** -53)
    # ties to even at 1 + 2^-53 and 1 + 3·2^-53 (not upward, not toward zero or downward), and below -1 (not upward)
    ok = ((one + u) == 1).all() and ((one + 3 * u) == 1 + 4 * u).all() and ((-one - 3 * u) == -1 - 4 * u).all()
    ok = ok and ((one + (u + 2.0 ** -80)) == 1 + 2 * u).all()   # past the midpoint: up (not toward zero)
    sub = np.full(4, 5e-324)
    return bool(ok and ((sub + sub) == 1e-323).all() and ((np.full(4, 2.0 ** -1022) * 0.5) > 0).all())


def evaluate(name: str, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(decided mask, binary64 values) of f(x) for float64 x, by the kernel's
    pair and its bound; the rest is for the long double pass and MPFR."""
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    done, r = np.zeros(len(x), dtype=bool), np.zeros(len(x))
    if not _K:
        _K.update(_tables())
    kern, rel = KERNELS[name]
    with np.errstate(all="ignore"):
        for i in range(0, len(x), SUB):
            h, lo, m, ab, ok = kern(x[i:i + SUB])
            d, r[i:i + SUB] = _decide(h, lo, rel, ab, m)
            done[i:i + SUB] = d & ok
    return done, r


SUB = 4096   # elements a kernel takes at once: its hundred-odd temporaries (32 KB each) stay in cache, 1.5-2x faster than 65536
