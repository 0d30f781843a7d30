"""ζ(s, q) and ψ⁽ⁿ⁾(x) in float64 to the accuracy an f32, f16 or bf16
result needs, not more: the first stage of those results of chlo.zeta and
chlo.polygamma (real_functions `narrow`, fast._staged), ahead of
real_functions._hurwitz_em's 2^-47 evaluation, which then sees only the
elements this stage's looser bound leaves undecided (about 1 in 1000).

The formula is _hurwitz_em's (Euler–Maclaurin with z = q + N),

    ζ(s, q) = Σ_{k<N} (q+k)^-s + z^(1-s)/(s-1) + z^-s/2
              + Σ_{j=1}^{M} B_2j/(2j)!·(s)_{2j-1}·z^(1-s-2j) + R,

with fewer terms: M Bernoulli terms per format (`PLANS`) and N direct
terms per element, the fewest that make z >= Z(s), Z from a table over s
(`_table`).  Its truncation is proven, not measured:

* R = -∫_z^∞ B̃_2M(t - z)/(2M)!·(s)_2M·t^(-s-2M) dt (the Euler–Maclaurin
  remainder, Olver, Asymptotics and Special Functions, ch. 8; Fungrim
  792f7b; Johansson, "Rigorous high-precision computation of the Hurwitz
  zeta function and its derivatives", Numer. Algorithms 69 (2015)), and
  |B̃_2M| <= |B_2M| on [0, 1] (DLMF 24.9.1), so
  |R| <= |B_2M|/(2M)!·(s)_2M·z^(1-s-2M)/(s+2M-1) for real s > 1, z > 0.
* ζ(s, q) >= ζ(s, z) >= ∫_z^∞ t^-s dt = z^(1-s)/(s-1) (positive,
  decreasing terms), so relative to ζ(s, q)
  |R|/ζ <= |B_2M|/(2M)!·(s-1)_2M·z^-2M = c_M·(s-1)_2M·z^-2M,
  (s)_2M·(s-1)/(s+2M-1) = (s-1)(s)…(s+2M-2) = (s-1)_2M, increasing in s.
* `_table`: for s <= k/8 (k = 9 … 96, s in (1, 12]) the smallest Z with
  c_M·(k/8 - 1)_2M·Z^-2M <= TRUNC, computed in mpmath at 30 digits and
  enlarged by 2^-20 of itself, so that z = fl(q + N) >= (q + N)(1 - 2^-53)
  still meets it.  Element s takes row ceil(8s) (8s is exact).

Rounding, as in _hurwitz_em's analysis: each power is numpy's pow (a few
ulp, 2^-50) of q + k or z, themselves rounded (2^-53, which s <= 12
turns into 2^-49 on the power); z^-s is z^(1-s)·fl(1/z) (two roundings
more), the direct terms and z^(1-s)/(s-1) + z^-s/2
are positive, and the Bernoulli terms (each within 2j + 4 roundings,
under 2^-48 for j <= 12, of its value) alternate with a sum far below the
total: the first is s(s-1)/(12 z^2) of z^(1-s)/(s-1), at most 1/8 where
z >= Z(s) (0.11, 0.07, 0.10 for f32's, f16's, bf16's tables: checked in
tests/oracle/test_chlo_fast_zeta.py, with the values' distance to the
M-term sum in arb, below 2^-46), and the later ones fall geometrically
(each at most 0.89 of the one before at every row's worst point of
f32's table, 0.36 and 0.51 for f16's and bf16's; all M together at most
0.067 of the value, measured in mpmath).  So the rounding is below 2^-47 of the
value, and the stage's bound is TRUNC + 2^-37: the rounding part with
the same 2^10 safety factor fast.FAST_REL_ERROR takes over the
libraries' few ulp.  fast.decide then decides with that bound, so the
decided values are the correctly rounded ones; the rest go on to the
2^-40 route as before.  The loops around the powers are compiled
(oracle/kernels/zeta.py, compiled with kernels.jit: contraction into fused
multiply-adds only removes roundings counted above; no reassociation, so
the sums run in the order analysed), and the stage serves what
chlo_compiled.serves serves (numba here, arrays of MIN_ELEMENTS or more;
smaller ones go to _hurwitz_em alone).  tests/oracle/test_chlo_fast_zeta.py
holds every decision against arb; the oracle's bits on 2^20 random
elements per format were unchanged by each rewrite of the stage.
"""
from __future__ import annotations

import functools
import math

import mpmath
import numpy as np

from ..spec.types import BF16, F16, F32
from . import chlo_compiled

_SUB = 1 << 16   # elements a chunk: the direct terms' temporaries (up to 15 an element) stay small
_ROUNDING = 2.0 ** -37
_S_MAX = 12.0
_ROWS = 8     # table rows per unit of s

# format -> (M Bernoulli terms, TRUNC): TRUNC a quarter or less of the
# format's rounding spacing times 2^-13, so about 2^-11 of the elements are left undecided.
# f32's 12 terms (8 until stop 45): Z(s) falls from 4.3–14.8 to 3.8–10.2, the direct terms
# from 1.6 to 0.9 an element over the bench's q in (0, 30), each a numpy pow; 4 Bernoulli
# terms cost less than one pow (kernels/zeta.py `tail`, vectorised)
PLANS = {F32: (12, 2.0 ** -37), F16: (6, 2.0 ** -26), BF16: (6, 2.0 ** -23)}

with mpmath.workdps(40):
    _BERN = np.array([float(mpmath.bernoulli(2 * j) / mpmath.factorial(2 * j)) for j in range(1, 21)])


def bound(fmt) -> float | None:
    """The stage's relative error bound for results in `fmt`, or None
    where it has no plan (the other formats take _hurwitz_em alone)."""
    plan = PLANS.get(fmt)
    return None if plan is None else plan[1] + _ROUNDING


@functools.cache
def _table(m: int, trunc: float) -> np.ndarray:
    """Z[k] for s <= k/8 (module docstring), k = 0 … 97 (rows below 9 unused)."""
    out = np.zeros(int(_S_MAX) * _ROWS + 2)
    with mpmath.workdps(30):
        c = abs(mpmath.bernoulli(2 * m)) / mpmath.factorial(2 * m)
        for k in range(_ROWS + 1, len(out)):
            s = mpmath.mpf(k) / _ROWS
            z = (c * mpmath.rf(s - 1, 2 * m) / trunc) ** (mpmath.mpf(1) / (2 * m))
            out[k] = float(z * (1 + mpmath.mpf(2) ** -20))
    return out


@functools.cache
def _kernels():
    """oracle/kernels/zeta.py, imported on first use."""
    from .kernels import zeta as k
    return k


class _Work:
    """A call's arrays, one chunk long (the direct terms' two grow to the
    largest chunk's ΣN)."""

    def __init__(self, size: int):
        self.sel, self.off = np.empty(size, np.int64), np.empty(size + 1, np.int64)
        self.z, self.n, self.z1s = np.empty(size), np.empty(size), np.empty(size)
        self.terms = np.empty((2, 0))

    def direct(self, total: int):
        if self.terms.shape[1] < total:
            self.terms = np.empty((2, total))
        return self.terms[0, :total], self.terms[1, :total]


def hurwitz(s, q, fmt) -> np.ndarray:
    """ζ(s, q) for 1 < s <= 12, q > 0 (float64 arrays, finite) within
    bound(fmt) relative (module docstring); fmt must have a plan and numba
    must be here (chlo_compiled.serves).  Chunk by chunk: N and z, the
    elements with direct terms and their bases, z^(1-s) and the direct
    terms' powers in one numpy call each, the tail with M Bernoulli terms
    and the direct sums (oracle/kernels/zeta.py)."""
    m, trunc = PLANS[fmt]
    table = _table(m, trunc)
    bern = tuple(float(b) for b in _BERN[:m])
    k = _kernels()
    s, q = np.ascontiguousarray(s), np.ascontiguousarray(q)
    out = np.empty_like(q)
    work = _Work(min(len(q), _SUB))
    with np.errstate(all="ignore"):
        for a in range(0, len(q), _SUB):
            sc, qc = s[a:a + _SUB], q[a:a + _SUB]
            size = len(sc)
            z, n, sel, off = work.z[:size], work.n[:size], work.sel[:size], work.off[:size + 1]
            k.counts(sc, qc, table, float(_ROWS), z, n)
            c = k.compact(n, sel, off)
            base, expo = work.direct(int(off[c]))
            k.bases(sc, qc, sel, off, c, base, expo)
            z1s = np.power(z, np.subtract(1.0, sc, out=work.z1s[:size]), out=work.z1s[:size])
            k.tail(sc, z, z1s, bern, out[a:a + size])
            k.direct(sel, off, c, np.power(base, expo, out=base), out[a:a + size])
    return out


def zeta(cols: list, fmt):
    """(ζ(x, q) values, bound) for real_functions' `narrow` hook: NaN
    outside 1 < x <= 12, q > 0, both finite (the 2^-40 route decides those);
    None where fmt has no plan or the compiled loops do not serve the
    arguments (chlo_compiled.serves: numba here, an array large enough)."""
    b = bound(fmt)
    if b is None or not chlo_compiled.serves(cols, fmt):
        return None
    x, q = (np.asarray(c, dtype=np.float64) for c in np.broadcast_arrays(*cols))
    shape, x, q = x.shape, x.reshape(-1), q.reshape(-1)
    with np.errstate(all="ignore"):
        ok = (x > 1) & (x <= _S_MAX) & (q > 0) & np.isfinite(q)
        if ok.all():   # the common case: three passes fewer
            return hurwitz(x, q, fmt).reshape(shape), b
        y = hurwitz(np.where(ok, x, 2.0), np.where(ok, q, 1.0), fmt)
        return np.where(ok, y, np.nan).reshape(shape), b


_FACTORIAL = np.array([float(math.factorial(k)) for k in range(12)])


def polygamma(cols: list, fmt):
    """(ψ⁽ⁿ⁾(x) values, bound) = (-1)^(n+1)·n!·ζ(n + 1, x) for integer
    1 <= n <= 11, x > 0 finite (n! exact in float64; the product's one
    rounding, 2^-53, is inside the 2^-37 rounding part), NaN elsewhere and
    where ζ < 2^-1000 (as real_functions._np_polygamma); None where fmt
    has no plan or chlo_compiled.serves declines (as `zeta`)."""
    b = bound(fmt)
    if b is None or not chlo_compiled.serves(cols, fmt):
        return None
    n, x = (np.asarray(c, dtype=np.float64) for c in np.broadcast_arrays(*cols))
    shape, n, x = n.shape, n.reshape(-1), x.reshape(-1)
    with np.errstate(all="ignore"):
        ok = (n >= 1) & (n <= _S_MAX - 1) & (n == np.floor(n)) & (x > 0) & np.isfinite(x)
        k = np.where(ok, n, 1).astype(np.int64)
        z = hurwitz(k + 1.0, np.where(ok, x, 1.0), fmt)
        y = np.where(k % 2 == 1, 1.0, -1.0) * _FACTORIAL[k] * z
        return np.where(ok & (z >= 2.0 ** -1000), y, np.nan).reshape(shape), b
