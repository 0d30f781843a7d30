"""erf, erfc and erfinv in x87 long double on whole arrays, for f64
results (oracle/chlo_long_double/__init__.py, fast.py's long double pass).

The bound to keep is fast.LD_REL_ERROR / 16 = 2^-62 relative: four
roundings of long double (u = 2^-64, the most one rounding to nearest
moves a value, relatively).  glibc's expl alone was measured here at up
to 1.5u, and a series summed term by term costs a few u more, so each
kernel is arranged so that one rounding, or two, fall on the result and
every other on a term that is small against it; exp is our own.

* Taylor tables (`Table`).  On a grid of intervals [c - w/2, c + w/2) the
  function is f(c + h) = a0 + h·(a1 + h·(a2 + …)), the coefficients about
  each centre c computed once, on first use, in arb at 320 bits from the
  function's differential equation (erf' = (2/√π)e^(-x²);
  erfcx' = 2x·erfcx - 2/√π; i1e's in bessel.py), their radii checked
  below 2^-100·|a0|.  a0 is kept as a0_hi (32 bits where the caller needs
  exact products or sums with it) plus a0_lo.  h = x - c is exact (c has
  few bits, x/2 <= c <= 2x: Sterbenz), so the value is a0_hi + rest and
  rest = a0_lo + h·p(h) is the only rounded part: |rest| is at most 12.4%
  of f on erf's table, 2.6% on erfcx's (22% on i1e's, bessel.py), measured
  on 2·10^6 points.  The degree K (11 on each table) is the least that
  leaves the next eight terms below 2^-70·|a0| on every interval (the
  truncation), and the terms from a_n0 on, below 2^-20·|a0| together, are
  summed in float64 (their relative error, a few 2^-53, is 2^-68 of f):
  three or four Horner steps in long double, whose error (a few u of rest)
  is at most 0.3u of f on erf's table.
* exp (`exp_times`).  F·e^a for a = ahi + alo and F = fhi + frest (fhi a
  32-bit number): a = k·ln2/128 + r by Cody and Waite's reduction (ln2/128
  in a 40-bit head, whose products with |k| < 2^22 are exact, and a tail),
  so |r| <= 0.0028 and e^r = 1 + q, q = r + r²·(1/2 + r/6 + … + r^4/720)
  with the bracket in float64 (its 2^-51 error is 2^-69 of e^r; the
  truncation r^7/7! is 2^-72); 2^(j/128) = t1 + t2 from a table with a
  32-bit t1, 2^m from a table (exact multiplications).  Then
      F·e^a = 2^m·(P + Q),  P = t1·fhi (exact: 32 bits by 32),
      Q = S + (P + S)·q,    S = t2·F + t1·frest,
  |Q| <= 3% of the result (|q| <= 0.0028, |frest| <= 2.6% of F), so Q's
  few roundings cost about 0.1u, and the sum P + Q rounds once: about 1.1u
  with erfcx's own (its rest's share, below 0.1u).
* x² for e^(-x²) is sq + m: x (a binary64 value) splits into a 32-bit
  head xh and a 21-bit tail xl; sq = xh² is exact in long double, and
  m = 2·xh·xl + xl² (each product exact in float64, their sum rounded
  once, 2^-53 of m <= 2^-30·x²) is within 2^-83·x² of the rest, so
  e^(-x²) carries 2^-83·x² <= 2^-69 from it up to x = 107.

The kernels take binary64 values (f64 results come from f64 arguments);
any other long double is answered NaN.  Why 2^-62 holds: by the budgets in
the kernels' docstrings each stays below 2u (one rounding of the result,
u at most, plus under 0.8u from the small terms), against the 4u allowed;
and tests/oracle/test_chlo_long_double_erf.py measures it against arb at
200 bits on 20,000 random points per function (uniform,
log-uniform from 2^-1074, random bit patterns) and 2,000 to 4,500
adversarial ones: the worst figures, quoted in each docstring, are all
within 2^-63.8, i.e. one long double rounding and a little.

Speed, 2^20 elements on this machine (2 shared cores): erf 1.5, erfc 2.8,
erfinv 3.0 times numpy's long double tanh (tanhl) on the same count
(erf over [-5, 5], erfc over [-4, 10], erfinv over [-1, 1]).  Passes are
made CHUNK elements at a time (`chunked`): numpy's long double loops over
whole arrays are memory-bound, at half the speed.
"""
from __future__ import annotations

import functools
import math

import numpy as np
from flint import arb, ctx

LD = np.longdouble
BUILD_PREC = 320        # bits for the tables' coefficients (arb)
_TOL = 2.0 ** -70        # Taylor truncation, relative to |a0|
_F64_TAIL = 2.0 ** -20   # terms summed in float64 (relative error ~2^-50) stay below this share of |a0|


# --------------------------------------------------------------------------
# arb -> long double
# --------------------------------------------------------------------------

def ld_nearest(a: arb) -> np.longdouble:
    """The long double nearest arb's midpoint (ties to even): its integer
    significand rounded to 64 bits, which a long double holds exactly."""
    return head(a, 64)


def head(a: arb, bits: int) -> np.longdouble:
    """arb's midpoint rounded to `bits` significant bits (to nearest, ties
    to even), as a long double: with bits <= 32 its product with another
    32-bit number, with bits <= 11 its product with a binary64 value, and
    with bits <= 40 its product with an integer below 2^22, are exact."""
    m, e = a.mid().man_exp()
    m, e = int(m), int(e)
    if m == 0:
        return LD(0)
    s = abs(m).bit_length() - bits
    if s > 0:
        q, r = divmod(abs(m), 1 << s)
        half = 1 << (s - 1)
        if r > half or (r == half and q & 1):
            q += 1
        m, e = (q if m > 0 else -q), e + s
    return np.ldexp(LD(m), e)


def ld_to_arb(v) -> arb:
    """A finite long double as an exact arb."""
    m, e = np.frexp(LD(v))
    return arb((int(np.ldexp(m, 64)), int(e) - 64))


def split(a: arb, bits: int) -> tuple:
    """(head(a, bits), the rest to the nearest long double)."""
    hi = head(a, bits)
    return hi, ld_nearest(a - ld_to_arb(hi))


class workprec:
    """arb's working precision, for a block."""

    def __init__(self, prec: int):
        self.prec = prec

    def __enter__(self):
        self.old, ctx.prec = ctx.prec, self.prec

    def __exit__(self, *exc):
        ctx.prec = self.old


# --------------------------------------------------------------------------
# Taylor tables
# --------------------------------------------------------------------------

class Table:
    """Taylor expansions of one function about the centres of a piecewise
    uniform grid (module docstring).  `segments` is ((start, stop, width),
    …), contiguous, with binary widths no larger than start; `coefficients(c, n)`
    gives arb a_0 … a_n of the series about c.  Called on binary64 values
    within [first start, last stop), it returns long doubles (a0_hi, rest)
    whose sum is the function's value; a0_hi has `head_bits` bits."""

    def __init__(self, segments, coefficients, head_bits: int = 64, max_degree: int = 24):
        self.segments, centres, widths = [], [], []
        for start, stop, width in segments:
            n = round((stop - start) / width)
            self.segments.append((start, 1.0 / width, len(centres)))
            centres += [start + (i + 0.5) * width for i in range(n)]
            widths += [width] * n
        with workprec(BUILD_PREC):
            rows = [coefficients(arb(c), max_degree + 8) for c in centres]
            hws = [arb(w) / 2 for w in widths]
            self.degree = K = max(self._degree(co, hw, max_degree) for co, hw in zip(rows, hws))
            n0 = K + 1   # a_n0 … a_K in float64: together below 2^-20·|a0| at |h| = w/2
            while n0 > 1 and all(sum(abs(co[m]).upper() * hw ** m for m in range(n0 - 1, K + 1))
                                 < abs(co[0]).lower() * _F64_TAIL for co, hw in zip(rows, hws)):
                n0 -= 1
            heads = [split(co[0], head_bits) for co in rows]
            self.coef = np.array([[ld_nearest(co[n]) for co in rows] for n in range(1, n0)], dtype=LD)
        self.size, self.split = len(centres), n0
        self.centre = np.array(centres, dtype=np.float64)
        self.hi0 = np.array([h[0] for h in heads], dtype=LD)
        self.lo0 = np.array([h[1] for h in heads], dtype=LD)
        self.coef64 = np.array([[float(co[n].mid()) for co in rows] for n in range(n0, K + 1)],
                               dtype=np.float64).reshape(K + 1 - n0, self.size)

    @staticmethod
    def _degree(co, hw: arb, max_degree: int) -> int:
        """The least degree k whose next eight terms, at |h| = hw, are below
        2^-70·|a0|; the coefficients up to k must be known to 2^-100·|a0|."""
        a0 = abs(co[0]).lower()
        for k in range(1, max_degree + 1):
            if sum(abs(co[n]).upper() * hw ** n for n in range(k + 1, k + 9)) < a0 * _TOL:
                if any(co[n].rad() * hw ** n > a0 * 2.0 ** -100 for n in range(k + 1)):
                    raise AssertionError("table coefficients too coarse")
                return k
        raise AssertionError("Taylor degree above the limit")

    def index(self, a64: np.ndarray) -> np.ndarray:
        start, inv, off = self.segments[0]
        f = (a64 - start) * inv + off
        for start, inv, off in self.segments[1:]:
            f = np.where(a64 >= start, (a64 - start) * inv + off, f)
        idx = f.astype(np.int64)
        np.clip(idx, 0, self.size - 1, out=idx)
        return idx

    def __call__(self, a64: np.ndarray) -> tuple:
        idx = self.index(a64)
        h64 = a64 - self.centre.take(idx)      # exact (Sterbenz)
        h = h64.astype(LD)
        q = self.coef64[-1].take(idx)
        for row in self.coef64[-2::-1]:
            q *= h64
            q += row.take(idx)
        p = q.astype(LD)
        for row in self.coef[::-1]:
            p *= h
            p += row.take(idx)
        p *= h
        p += self.lo0.take(idx)
        return self.hi0.take(idx), p


# --------------------------------------------------------------------------
# Helpers shared by the kernels
# --------------------------------------------------------------------------

def piecewise(a64: np.ndarray, cases, fallback: tuple) -> tuple:
    """Long double arrays (one per item of `fallback`) holding fn(a64[mask])
    for each (mask, fn, inside) of `cases` (disjoint masks; `inside` a
    point of fn's domain) and the fallback values elsewhere.  The case
    holding most elements, where it holds 3/4 of them, is evaluated on the
    whole array (its other elements moved to `inside`) and the rest
    overwritten: cheaper than gathering and scattering it."""
    n = a64.size
    counts = [int(np.count_nonzero(m)) for m, _, _ in cases]
    k = int(np.argmax(counts)) if cases else 0
    if cases and counts[k] == n:
        return cases[k][1](a64)
    if cases and 4 * counts[k] >= 3 * n:
        mask, fn, inside = cases[k]
        out = fn(np.where(mask, a64, inside))
        i = np.flatnonzero(~mask)
        for o, v in zip(out, fallback):
            o[i] = v
    else:
        k = -1
        out = tuple(np.full(a64.shape, v, dtype=LD) for v in fallback)
    for c, (mask, fn, _) in enumerate(cases):
        if c != k and counts[c]:
            i = np.flatnonzero(mask)
            for o, v in zip(out, fn(a64.take(i))):
                o[i] = v
    return out


CHUNK = 1 << 15   # elements per pass: a pass's long double arrays stay in a core's cache


def chunked(kernel):
    """The kernel applied to slices of CHUNK elements of a flat copy of its
    argument (numpy's long double loops are memory-bound on whole arrays:
    about twice as fast this way, measured)."""
    @functools.wraps(kernel)
    def run(x):
        x = np.asarray(x, dtype=LD)
        flat = x.reshape(-1)
        if flat.size <= CHUNK:
            return kernel(flat).reshape(x.shape)
        out = np.empty(flat.shape, dtype=LD)
        for s in range(0, flat.size, CHUNK):
            out[s:s + CHUNK] = kernel(flat[s:s + CHUNK])
        return out.reshape(x.shape)
    return run


def prepare(flat):
    """(binary64 magnitudes, sign mask, mask of the elements that are
    binary64 values or NaN) of a flat long double array."""
    with np.errstate(invalid="ignore", over="ignore"):
        x64 = flat.astype(np.float64)
        valid = (x64 == flat) | np.isnan(x64)
    return np.abs(x64), np.signbit(x64), valid


def finish(y: np.ndarray, neg: np.ndarray, valid: np.ndarray, odd: bool) -> np.ndarray:
    """y negated where neg (odd functions), NaN where not valid."""
    if odd:
        i = np.flatnonzero(neg)
        if i.size:
            y[i] = -y.take(i)
    i = np.flatnonzero(~valid)
    if i.size:
        y[i] = np.nan
    return y


def square(a64: np.ndarray) -> tuple:
    """(sq, m): sq = xh² exact in long double, m (float64) with sq + m
    within 2^-83·a² of a² (module docstring), for binary64 values a64."""
    ah = (a64.view(np.uint64) & np.uint64(0xFFFFFFFFFFE00000)).view(np.float64)
    al = a64 - ah
    m = (ah + ah) * al + al * al
    sq = ah.astype(LD)
    sq *= sq
    return sq, m


# --------------------------------------------------------------------------
# exp
# --------------------------------------------------------------------------

_N = 128   # entries of the 2^(j/N) table


@functools.cache
def _exp_tables():
    with workprec(BUILD_PREC):
        ln2n = arb.const_log2() / _N
        l1 = head(ln2n, 40)
        l2 = float((ln2n - ld_to_arb(l1)).mid())
        t = [split(arb(2) ** (arb(j) / _N), 32) for j in range(_N)]
        inv = [float(1 / arb(math.factorial(n))) for n in range(2, 7)]
    lo_m = -16700
    pow2 = np.ldexp(np.ones(8 - lo_m, dtype=LD), np.arange(lo_m, 8))
    return (l1, l2, np.array([p[0] for p in t], dtype=LD), np.array([float(p[1]) for p in t]),
            inv, pow2, -lo_m, _N / math.log(2))


def exp_times(ahi: np.ndarray, alo: np.ndarray, fhi: np.ndarray, frest: np.ndarray) -> tuple:
    """(P, Q, s) with (fhi + frest)·e^(ahi + alo) = (P + Q)·s (module
    docstring): ahi (long double) in [-11700, 0], alo (float64) below
    2^-16, fhi 32-bit numbers, |frest| a few % of fhi; s a power of two (0
    below 2^-16700).  The reduction's small parts, alo - k·l2 (each below
    2^-16, their float64 error below 2^-69), are added in float64."""
    l1, l2, t1, t2, inv, pow2, off, scale = _exp_tables()
    k = np.rint(ahi.astype(np.float64) * scale)
    r = k.astype(LD)
    r *= l1
    np.subtract(ahi, r, out=r)              # exact (Sterbenz; k·l1 exact)
    small = alo - k * l2
    r += small.astype(LD)
    r64 = r.astype(np.float64)
    b = inv[4] * r64
    for c in inv[3::-1]:
        b += c
        b *= r64
    b *= r64                                 # r²·(1/2 + r/6 + … + r^4/720)
    q = b.astype(LD)
    q += r
    ki = k.astype(np.int64)
    j = ki & (_N - 1)
    t = t1.take(j)
    P = t * fhi                              # exact: 32 bits by 32
    t *= frest
    S = (t2.take(j) * (fhi.astype(np.float64) + frest.astype(np.float64))).astype(LD)   # 2^-32 of P: float64
    S += t
    q *= P + S
    q += S
    return P, q, pow2.take((ki >> 7) + off)


# --------------------------------------------------------------------------
# erf
# --------------------------------------------------------------------------

_SMALL = 0.125
_ERF_ONE = 7.0   # erfc(7) < 2^-74: erf is 1 to long double's precision beyond


@functools.cache
def _erf_small_constants():
    with workprec(BUILD_PREC):
        c = 2 / arb.pi().sqrt()
        chi, clo = split(c, 11)
        # erf(x) = C·x·Σ (-1)^n x^(2n) / (n!(2n+1)); D_n for n = 1 … 8 (x < 1/8: n = 9 is below 2^-76)
        d = [ld_nearest(c * (-1) ** n / (math.factorial(n) * (2 * n + 1))) for n in range(1, 9)]
    return chi, clo, d


def _erf_small(a64):
    """erf(a) = a·C_hi + a·(C_lo + t·D(t)), t = a², for a < 1/8: a·C_hi is
    exact (11 bits by 53), the rest below 0.6% of erf."""
    chi, clo, d = _erf_small_constants()
    a = a64.astype(LD)
    t = a * a
    p = d[-1] * t
    for c in d[-2::-1]:
        p += c
        p *= t
    p += clo
    p *= a
    a *= chi
    return a, p


def erf_coefficients(c: arb, n: int) -> list:
    """erf's Taylor coefficients about c: a_(k+1) = (2/√π)·e_k/(k+1), e_k
    those of e^(-x²) (e' = -2x·e: (k+1)e_(k+1) = -2c·e_k - 2e_(k-1))."""
    e = [(-c * c).exp()]
    e.append(-2 * c * e[0])
    for k in range(1, n):
        e.append((-2 * c * e[k] - 2 * e[k - 1]) / (k + 1))
    two = 2 / arb.pi().sqrt()
    return [c.erf()] + [two * e[k] / (k + 1) for k in range(n)]


@functools.cache
def erf_table() -> Table:
    return Table(((_SMALL, 2.0, 1 / 32), (2.0, _ERF_ONE, 1 / 16)), erf_coefficients, head_bits=32)


def erf_pair(a64: np.ndarray) -> tuple:
    """erf(a) = hi + rest for binary64 values a >= 0 (1 at +inf)."""
    return piecewise(a64, ((a64 < _SMALL, _erf_small, 0.0625), ((a64 >= _SMALL) & (a64 < _ERF_ONE), erf_table(), 1.0)),
                     (1, 0))


@chunked
def erf(x):
    """erf in long double.  Below 1/8: one rounding (u) plus the rest's,
    at most 0.5% of the value; on the table: one rounding plus 0.3u; 1 from
    7 on (erfc(7) < 2^-74).  Measured worst (test_chlo_long_double_erf.py):
    2^-64.005 on the random points, 2^-64.07 on the adversarial ones.
    ±0 → ±0, ±inf → ±1, NaN and non-binary64 values → NaN."""
    a64, neg, valid = prepare(x)
    with np.errstate(all="ignore"):
        hi, rest = erf_pair(a64)
        hi += rest
        return finish(hi, neg, valid & ~np.isnan(a64), odd=True)


# --------------------------------------------------------------------------
# erfc
# --------------------------------------------------------------------------

_ERFCX_FROM = 0.5
_ERFC_ZERO = 107.0   # erfc(107) < 2^-16500, below long double's smallest subnormal


def erfcx_coefficients(c: arb, n: int) -> list:
    """erfcx = e^(x²)·erfc(x): erfcx' = 2x·erfcx - 2/√π, so a_1 = 2c·a_0 - 2/√π
    and (k+1)a_(k+1) = 2c·a_k + 2a_(k-1)."""
    a = [c.erfc() * (c * c).exp()]
    a.append(2 * c * a[0] - 2 / arb.pi().sqrt())
    for k in range(1, n):
        a.append((2 * c * a[k] + 2 * a[k - 1]) / (k + 1))
    return a


@functools.cache
def erfcx_table() -> Table:
    return Table(((_ERFCX_FROM, 2.0, 1 / 16), (2.0, 8.0, 1 / 16), (8.0, 32.0, 1 / 4), (32.0, 128.0, 1.0)),
                 erfcx_coefficients, head_bits=32)


def _erfc_mid(a64):
    """erfc = e^(-x²)·erfcx(x), scaled: (P, Q) with erfc = P + Q."""
    fhi, frest = erfcx_table()(a64)
    sq, m = square(a64)
    np.negative(sq, out=sq)
    np.negative(m, out=m)
    P, Q, s = exp_times(sq, m, fhi, frest)
    P *= s
    Q *= s
    return P, Q


def one_plus_erf(a64: np.ndarray, s: int) -> tuple:
    """1 + s·erf(a) = hi + rest for binary64 values a >= 0 and s = ±1.  On
    the table 1 + s·a0_hi is exact (a 32-bit a0_hi in (0.14, 1)), one
    rounding on the sum; below 1/8 erf is rounded once first (<= 0.14u of
    the result) and 1 ± erf once (u)."""
    def small(b):
        e_hi, e_rest = _erf_small(b)
        e_hi += e_rest
        e_hi *= s
        e_hi += 1
        return e_hi, np.zeros_like(e_hi)

    def table(b):
        e_hi, e_rest = erf_table()(b)
        e_hi *= s
        e_hi += 1
        e_rest *= s
        return e_hi, e_rest

    return piecewise(a64, ((a64 < _SMALL, small, 0.0625), ((a64 >= _SMALL) & (a64 < _ERF_ONE), table, 1.0)),
                     (1 + s, 0))


def erfc_pair(a64: np.ndarray) -> tuple:
    """erfc(a) = hi + rest for binary64 values a >= 0 (0 from 107 on)."""
    return piecewise(a64, ((a64 < _ERFCX_FROM, lambda b: one_plus_erf(b, -1), 0.25),
                           ((a64 >= _ERFCX_FROM) & (a64 < _ERFC_ZERO), _erfc_mid, 1.0)), (0, 0))


@chunked
def erfc(x):
    """erfc in long double.  x >= 1/2: e^(-x²)·erfcx(x) by exp_times, about
    1.2u; 0 <= x < 1/2: (1 - erf_hi) - erf_rest, one rounding plus the
    rest's share (0.3u·erf/erfc <= 0.35u); x < 0: 1 + erf(|x|) the same
    way, and below 1/8 in magnitude erf rounded first (0.14u) then 1 ± erf
    (u).  Up to x = 107, where erfc falls below long double's smallest
    subnormal (0 beyond: its correct rounding).  Measured worst
    (test_chlo_long_double_erf.py): 2^-64.005 random, 2^-64.01 adversarial.
    ±0 → 1, +inf → 0, -inf → 2, NaN and non-binary64 values → NaN."""
    a64, neg, valid = prepare(x)
    with np.errstate(all="ignore"):
        hi, rest = piecewise(a64, ((~neg, erfc_pair, 1.0), (neg, lambda b: one_plus_erf(b, 1), 1.0)), (np.nan, 0))
        hi += rest
        return finish(hi, neg, valid & ~np.isnan(a64), odd=False)


# --------------------------------------------------------------------------
# erfinv
# --------------------------------------------------------------------------

_TINY_Y = 2.0 ** -33
_ERFC_SIDE = 0.6875


@functools.cache
def _half_sqrt_pi():
    with workprec(BUILD_PREC):
        return split(arb.pi().sqrt() / 2, 11)


def _erfinv_newton(a64):
    """One Newton step from scipy's float64 erfinv x0: x0 - f(x0)/f'(x0),
    f(x0) = erf(x0) - a below 0.6875 (hi - a exact: Sterbenz, and both lie
    on the grid of the finer one within 53 bits), (1 - a) - erfc(x0) above
    ((1 - a) - P exact: Sterbenz), f' = (2/√π)e^(-x0²) in float64.  NaN where scipy's
    x0 is off by more than 2^-40 relative (the Newton step's own error,
    (x0's error)²·x0², would then not be negligible)."""
    import scipy.special as sp
    x0 = sp.erfinv(a64)
    f = np.empty(a64.shape, dtype=LD)
    low = a64 < _ERFC_SIDE
    i = np.flatnonzero(low)
    if i.size:
        hi, rest = erf_pair(x0.take(i))
        hi -= a64.take(i).astype(LD)
        hi += rest
        f[i] = hi
    i = np.flatnonzero(~low)
    if i.size:
        hi, rest = erfc_pair(x0.take(i))
        c = (1 - a64.take(i)).astype(LD)
        c -= hi
        c -= rest
        f[i] = c
    d = f.astype(np.float64)
    d *= math.sqrt(math.pi) / 2
    d *= np.exp(x0 * x0)
    x1 = x0.astype(LD)
    x1 -= d.astype(LD)
    x1[~(np.abs(d) <= 2.0 ** -40 * x0)] = np.nan
    return (x1,)


def _erfinv_tiny(a64):
    khi, klo = _half_sqrt_pi()
    a = a64.astype(LD)
    b = a * klo
    a *= khi
    a += b
    return (a,)


@chunked
def erfinv(y):
    """erfinv in long double: one Newton step (`_erfinv_newton`).  An error
    e·|f| in the residual f moves x1 by e·|f|/(x·f'(x)) relative: at most
    1.41·e on the erf side (x <= 0.71; e <= 0.3u there, the erf table's
    rest: hi - |y| is exact), 0.65·e on the erfc side (e about 0.2u:
    exp_times's P is exact, so Q's roundings and erfcx's rest); Newton's
    own error is (x0's error)²·x0² < 2^-95 (scipy's x0 was measured within
    2^-51.4); plus x1's rounding, u: about 1.4u at most.  |y| < 2^-33: y·√π/2 (the next term, πy²/12, is below
    2^-66) with √π/2's 11-bit head, one rounding.  Measured worst
    (test_chlo_long_double_erf.py): 2^-63.86 random, 2^-64.05 adversarial.
    ±0 → ±0; |y| >= 1, NaN and non-binary64 values → NaN."""
    a64, neg, valid = prepare(y)
    with np.errstate(all="ignore"):
        (x,) = piecewise(a64, ((a64 < _TINY_Y, _erfinv_tiny, 0.0), ((a64 >= _TINY_Y) & (a64 < 1), _erfinv_newton, 0.5)),
                         (np.nan,))
        return finish(x, neg, valid, odd=True)


KERNELS: dict = {"erf": erf, "erfc": erfc, "erfinv": erfinv}
# The bound fast.decide takes for them: 16 times the worst error measured
# (2^-63.7, tests/oracle/test_chlo_long_double_erf.py), the house's safety
# factor, and 5 times the analysed budget of 2u — a third of the elements
# fast.LD_REL_ERROR (2^-58) would leave to MPFR and arb.
REL_ERROR = 2.0 ** -59.5
