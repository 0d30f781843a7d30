"""chlo_dd/zeta.py's double-word Hurwitz zeta as one compiled loop
(numba): dd.py's error-free transformations and double-word operations,
ddpow.py's log and exp, zeta._bracket and zeta._zeta's sum, spelt as
scalar functions in the same float64 operations in the same order, so
the loop's values are numpy's bits (chlo_dd/zeta_compiled.py: why this is
written twice, and the test that holds the two to one rule).  Compiled
with kernels.exact_jit: no contraction, no reassociation."""
from __future__ import annotations

import numpy as np

from . import exact_inline, exact_jit, to_bits, to_float

_C27 = 134217729.0                                   # dd._C: Veltkamp's splitting constant
_MANT, _ONE = np.uint64((1 << 52) - 1), np.uint64(1023 << 52)
_LO27 = np.uint64(~((1 << 27) - 1) & ((1 << 64) - 1))


@exact_inline
def two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@exact_inline
def fast_two_sum(a, b):
    s = a + b
    return s, b - (s - a)


@exact_inline
def split(a):
    t = _C27 * a
    hi = t - (t - a)
    return hi, a - hi


@exact_inline
def two_prod(a, b):
    p = a * b
    ah, al = split(a)
    bh, bl = split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


@exact_inline
def add(xh, xl, yh, yl):
    sh, sl = two_sum(xh, yh)
    th, tl = two_sum(xl, yl)
    vh, vl = fast_two_sum(sh, sl + th)
    return fast_two_sum(vh, tl + vl)


@exact_inline
def mul(xh, xl, yh, yl):
    ch, cl1 = two_prod(xh, yh)
    return fast_two_sum(ch, cl1 + (xh * yl + xl * yh))


@exact_inline
def mul_fp(xh, xl, y):
    ch, cl1 = two_prod(xh, y)
    th, tl1 = fast_two_sum(ch, xl * y)
    return fast_two_sum(th, tl1 + cl1)


@exact_inline
def div(xh, xl, yh, yl):
    th = xh / yh
    rh, rl = mul_fp(yh, yl, th)
    return fast_two_sum(th, ((xh - rh) + (xl - rl)) / yh)


@exact_inline
def head(a):
    return to_float(to_bits(a) & _LO27)


@exact_inline
def log_pair(bh, bl, c, gh, gl, l2h, l2l):
    b = to_bits(bh)
    e = np.int64(b >> np.uint64(52)) - 1023
    m = to_float((b & _MANT) | _ONE)                    # [1, 2)
    big = m >= 1.5
    m = m * (1 - 0.5 * big)
    e += big
    i = np.int64((m - 0.75) * 1024)
    mh = head(m)
    zh, zl = two_sum(mh * c[i] - 1, (m - mh) * c[i])
    hh = head(zh)
    hl = zh - hh
    sh = hh * hh
    sl = hl * (hh + zh)
    q = 1 / 3 - zh * (0.25 - zh * (0.2 - zh * (1 / 6 - zh * (1 / 7 - zh * 0.125))))
    h1, e1 = two_sum(zh, -0.5 * sh)
    lo1 = e1 + ((zl * (1 - zh * (1 - zh)) - 0.5 * sl) + ((sh + sl) * zh) * q)
    ef = np.float64(e)
    ah, al = two_sum(ef * l2h, gh[i])
    h, hl2 = two_sum(ah, h1)
    lo = (hl2 + al) + (lo1 + ((ef * l2l + gl[i]) + bl / bh))
    return two_sum(h, lo)


@exact_inline
def exp_pair(yh, yl, th_, tl_, c1, c2, c3, inv):
    k = np.rint(yh * inv)
    a, ea = two_sum(yh, -k * c1)
    rh, t = two_sum(a, -k * c2)
    rl = t + (ea + (yl - k * c3))
    rh, rl = two_sum(rh, rl)
    ki = np.int64(k)
    j = ki & 255
    m = ki >> 8
    hh = head(rh)
    hl = rh - hh
    sh = hh * hh
    sl = hl * (hh + rh)
    q = 1 / 6 + rh * (1 / 24 + rh * (1 / 120 + rh * (1 / 720 + rh * (1 / 5040))))
    ph, e = two_sum(rh, 0.5 * sh)
    pl = e + ((0.5 * sl + rl * (1 + ph)) + ((sh + sl) * rh) * q)
    ph, pl = fast_two_sum(ph, pl)
    xh, xl = mul(th_[j], tl_[j], ph, pl)
    h, lo = add(th_[j], tl_[j], xh, xl)
    p2 = to_float(np.uint64(m + 1023) << np.uint64(52))
    return h * p2, lo * p2


@exact_jit
def zeta_loop(s, q, out_h, out_l, zs, cells, bh, bl, bf, g1h, g1l, jj, jd, lt, et, terms_h, terms_l):
    """zeta._zeta per element: N direct terms and z^-s·V (zeta._bracket),
    in its order (the tail's product first, then the direct terms k
    after k, as pairs).  lt, et: ddpow's log and exp tables."""
    c, gh, gl, l2h, l2l = lt
    th_, tl_, c1, c2, c3, inv = et
    for i in range(s.size):
        si, qi = s[i], q[i]
        zc = zs[np.int64(np.ceil((si - 1) * cells) - 1)]
        n = np.ceil(zc - qi) if qi < zc else 0.0
        zh, zl = two_sum(qi, n)
        # the tail's power z^-s (ddpow.pow_neg)
        lh, ll = log_pair(zh, zl, c, gh, gl, l2h, l2l)
        yh, yl = mul_fp(lh, ll, -si)
        ph, pl = exp_pair(yh, yl, th_, tl_, c1, c2, c3, inv)
        # V (zeta._bracket)
        d1h, d1l = div(zh, zl, si - 1, 0.0)
        wh, wl = div(1.0, 0.0, zh, zl)
        w2h, w2l = mul(wh, wl, wh, wl)
        th, tl = mul_fp(wh, wl, si)
        th, tl = mul(th, tl, g1h, g1l)
        terms_h[0], terms_l[0] = th, tl
        for j in range(1, jd):
            ah, al = two_sum(si, 2.0 * j - 1)
            ch, cl = two_sum(si, 2.0 * j)
            fh, fl = mul(ah, al, ch, cl)
            fh, fl = mul(fh, fl, w2h, w2l)
            fh, fl = mul(fh, fl, bh[j], bl[j])
            th, tl = mul(th, tl, fh, fl)
            terms_h[j], terms_l[j] = th, tl
        tf = th
        acc = 0.0
        for j in range(jd, jj):
            tf *= ((si + (2.0 * j - 1)) * (si + 2.0 * j)) * w2h * bf[j]
            acc += tf
        sh, sl = acc, 0.0
        for j in range(jd - 1, -1, -1):
            sh, sl = add(terms_h[j], terms_l[j], sh, sl)
        sh, sl = add(0.5, 0.0, sh, sl)
        vh, vl = add(d1h, d1l, sh, sl)
        acc_h, acc_l = mul(ph, pl, vh, vl)
        # the direct terms, k after k
        for k in range(np.int64(n)):
            b0, b1 = two_sum(qi, np.float64(k))
            lh, ll = log_pair(b0, b1, c, gh, gl, l2h, l2l)
            yh, yl = mul_fp(lh, ll, -si)
            ph, pl = exp_pair(yh, yl, th_, tl_, c1, c2, c3, inv)
            acc_h, err = two_sum(acc_h, ph)
            acc_l += err + pl
        out_h[i], out_l[i] = acc_h, acc_l
