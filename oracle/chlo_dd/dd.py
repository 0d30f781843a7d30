"""Double-word ("double-double") arithmetic on float64 arrays, with the
relative error bounds the refinements of this package (chlo_dd/) sum up.

A double-word number is a pair (h, l) of float64 with h = RN(h + l); u =
2^-53 is the unit roundoff of float64.  Every operation here is a float64
+, -, *, / (IEEE 754 rounds each correctly to nearest even: checked on every
call by ddfast.rounds_to_nearest) and the error-free transformations built
on them, exact where no intermediate overflows or underflows:

* TwoSum (Knuth; Muller et al., *Handbook of Floating-Point Arithmetic*,
  2nd ed., 2018, §4.3.2): s + e = a + b exactly.
* Fast2Sum (Dekker): the same when |a| >= |b| (or a = 0).
* TwoProd by Veltkamp's splitting and Dekker's product (Handbook §4.4.2,
  Dekker 1971): a = ah + al with ah and al of at most 26 significant bits
  each (C = 2^27 + 1), so every partial product is exact and p + e = a·b
  exactly, for |a|, |b| < 2^996 (C·a must not overflow) and |a·b| above
  2^-969 (e must not underflow).  numpy has no fused multiply-add.

The bounds of the double-word algorithms are those proved by Joldes, Muller
and Popescu, "Tight and rigorous error bounds for basic building blocks of
double-word arithmetic", ACM TOMS 44(2), 2017 (JMP below), each of which is
at most 16u² here:
* `add`: their AccurateDWPlusDW (Algorithm 6), relative error <= 3u² + 13u³.
* `mul`: DWTimesDW1 (Algorithm 10), relative error <= 7u².
* `mul_fp`: DWTimesFP1 (Algorithm 7), relative error <= 1.5u² + 4u³.
* `div`: DWDivDW2 (Algorithm 17), relative error <= 15u² + 56u³.
Callers use 16u² for each.  The domains the refinements accept keep every
intermediate far inside binary64's normal range (each module says why), so
the transformations are exact there.
"""
from __future__ import annotations

U2 = 2.0 ** -106              # u², the unit of these bounds
OP = 16 * U2                  # one add, mul, mul_fp or div (JMP's bounds, above, are all below it)
_C = 134217729.0              # 2^27 + 1: Veltkamp's splitting constant for binary64


def two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def fast_two_sum(a, b):
    """|a| >= |b| or a = 0."""
    s = a + b
    return s, b - (s - a)


def split(a):
    """Veltkamp: a = hi + lo, each of at most 26 significant bits."""
    t = _C * a
    hi = t - (t - a)
    return hi, a - hi


def two_prod(a, b):
    """Dekker's product: p + e = a·b exactly (no fused multiply-add)."""
    p = a * b
    ah, al = split(a)
    bh, bl = split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def add(xh, xl, yh, yl):
    """JMP Algorithm 6 (AccurateDWPlusDW): relative error <= 3u² + 13u³."""
    sh, sl = two_sum(xh, yh)
    th, tl = two_sum(xl, yl)
    c = sl + th
    vh, vl = fast_two_sum(sh, c)
    w = tl + vl
    return fast_two_sum(vh, w)


def mul(xh, xl, yh, yl):
    """JMP Algorithm 10 (DWTimesDW1): relative error <= 7u²."""
    ch, cl1 = two_prod(xh, yh)
    cl2 = xh * yl + xl * yh
    return fast_two_sum(ch, cl1 + cl2)


def mul_fp(xh, xl, y):
    """JMP Algorithm 7 (DWTimesFP1): (xh + xl)·y, relative error <= 1.5u² + 4u³."""
    ch, cl1 = two_prod(xh, y)
    cl2 = xl * y
    th, tl1 = fast_two_sum(ch, cl2)
    return fast_two_sum(th, tl1 + cl1)


def div(xh, xl, yh, yl):
    """JMP Algorithm 17 (DWDivDW2): (xh + xl)/(yh + yl), relative error <= 15u² + 56u³."""
    th = xh / yh
    rh, rl = mul_fp(yh, yl, th)
    pih = xh - rh
    dl = xl - rl
    d = pih + dl
    tl = d / yh
    return fast_two_sum(th, tl)
