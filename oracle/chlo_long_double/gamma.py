"""lgamma (log|Γ|), digamma, polygamma and the Hurwitz zeta in x87 long
double on whole arrays, for f64 results (chlo_long_double/__init__.py,
fast.py's long double pass).

The bound to keep is fast.LD_REL_ERROR / 16 = 2^-62 = 4u, u = 2^-64 the
most one rounding to nearest moves a long double, relatively.  glibc's
logl, expl, sinl and powl were measured here (3,000 random arguments
each, against mpmath) at 1.3u, 1.4u, 1.0u and 1.2u at most; powl at the
integer exponents -2 and -3 takes another algorithm, 2.8u and 3.9u, which
`_pow_neg` goes round.  Every value
is computed one of these ways, each within the bound by the budget
given; where terms may cancel the formula computes its own bound per
element and answers NaN above `_TRUST` = 3.5u (MPFR or arb decide those).

* Taylor tables (`_Table`) of lgamma, digamma and polygamma (n <= 6)
  for x from 2^-10 to 1024, and of lgamma and digamma for the distance
  |r| = |x - p| from 2^-10 to 1/2 to the nearest pole p >= -10 (x < 0).  A bucket's centre c is the binary64 value rounded to 5
  significant bits, so |x - c| <= 2^-6·|c| while the nearest singularity
  is |c| away: the series of f about c converges like 2^-6k.  Sixteen
  coefficients from arb at 160 bits, once, on first use (0.12 s for x > 0,
  0.5 s for the negative axis).  f(c + z) = a0 + z·t, t = a1 + z·(a2 +
  z·(a3 + z·T)), with a0 and a1 pairs of long doubles, z = x - c exact (c
  has 5 bits: Sterbenz), T = a4 + … + a15·z^11 in float64 (below 2^-15 of
  the value and its 2^-51 error 2^-66; the next terms below 2^-70: both
  checked per row when the table is built).  The error is at most
  u·(|f| + 3.1·|z·t|) — the last sum, the sum with a0's low part, the
  product z·t, and t's own u — and |z·t| <= |f|/2 in every bucket that
  meets no window (checked per row) and outside the windows in the
  others (below), so 2.6u at most; about 1.1u where |z·t| is small, as it
  is almost everywhere (polygamma's: |z·t| <= |f|/8, 1.4u).
* Windows.  About each zero x0 of f met by the tables (lgamma at 1, 2 and
  its nine zeros between -2 and -6.5, digamma at 1.4616… and one in each
  (-n - 1, -n)) the series about x0 itself, x0 = hi + lo to 2^-117, within
  d/32 of it (d its distance to a pole): f = z·t, z = (x - hi) - lo one
  rounding: 3.2u at most.  Outside, |f| >= |f'|·d/32, at least twice the
  |z·t| of the buckets there (their half-widths are checked against it).
* Near a pole, |r| < 2^-10: f = F + pole(r), F's series about p in the
  table (lgamma's pole term -log|r|, digamma's -1/r), the sum's bound
  computed (`_pole_term`; lgamma's zeros within 1/n! of -n, n >= 7, are
  refused there).  x < -10.5: the reflection formulas, the same way
  (`_reflection`).  x >= 1024: Stirling's series (1.45u) or ψ's (1.35u),
  on log x = L + d, L = logl(x), d = x·e^-L - 1 (2.4u absolute; logl
  alone is 1.3u·log x, which (x - ½)·(log x - 1) enlarges by log
  x/(log x - 1)).
* Hurwitz zeta ζ(s, q), 1 < s <= 64, and polygamma beyond its tables
  (-1)^(n+1)·n!·ζ(n + 1, x), n <= 25 (n! exact): Euler–Maclaurin from z =
  q + N >= Z(s) = max(8 + s/2, 8.8 + 0.4·s) (the tail's 31st Bernoulli term
  below 2^-75 of it: tests check it with mpmath).  Each term carries
  powl's 1.2u, the tail's bracket z/(s-1) + ½ + B as a pair within 0.15u,
  its product with z^-s exact as a pair, and all is summed with TwoSum
  and rounded once: 2.4u at most, polygamma's too (n! times the unrounded
  sum is formed exactly, then rounded once).

Measured against arb (tests/oracle/test_chlo_long_double_gamma.py: 50,000
random points per function over every binade of x > 0 and the benches'
ranges, six more draws of 20,000 run the same way, and 200 to 5,700
adversarial points each), the largest relative errors are 2.0u (2^-63.0)
for lgamma, 2.4u (2^-62.7) for digamma (inside the window about its zero
-0.504), 2.1u (2^-62.96) for polygamma and 2.0u (2^-63.0) for zeta:
below 2^-62 each, the factor 16 under LD_REL_ERROR that fast.py keeps.
The kernels take binary64 values (what f64 programs hold).
"""
from __future__ import annotations

import functools
import math

import mpmath
import numpy as np
from flint import arb, arb_series, ctx

LD = np.longdouble
_PREC = 160                # arb's bits for the tables
_TRUST = 3.5               # formulas with a cancellation test answer where their bound is at most 3.5u

# Buckets: a binary64 value's key is its bit pattern rounded to _BITS significant bits
_BITS = 5
_SHIFT = np.uint64(52 - _BITS)
_ROUND = np.uint64(1 << (52 - _BITS - 1))
_LO, _HI = 2.0 ** -10, 1024.0    # tables between these (x > 0) and from 2^-10 to 1/2 in |x - p| (x < 0)
_P = 10                          # poles 0, -1, …, -10 tabulated: x >= -10.5
_K = 16                          # Taylor coefficients a0 … a15
_NLD = 4                         # a0 … a3 in long double, the rest in float64


def _key(a64: np.ndarray) -> np.ndarray:
    """The bucket key of nonnegative finite binary64 values: the bit
    pattern rounded (half up) to _BITS significant bits, monotone in the
    value."""
    return (a64.view(np.uint64) + _ROUND) >> _SHIFT


def _centre(key: int) -> float:
    """The binary64 value of a key: the bucket's centre, 5 significant bits."""
    return float((np.array([key], dtype=np.uint64) << _SHIFT).view(np.float64)[0])


_KLO, _KHI, _KHALF = (int(_key(np.array([v]))[0]) for v in (_LO, _HI, 0.5))
_NPOS = _KHI - _KLO + 1          # buckets for x in [2^-10, 1024]
_NSIDE = _KHALF - _KLO + 1       # buckets for |r| in [2^-10, 1/2], one side of one pole


# --------------------------------------------------------------------------
# arb <-> long double
# --------------------------------------------------------------------------

def _arb_of(v) -> arb:
    """A finite long double (or float) as an exact arb."""
    m, e = np.frexp(LD(v))
    return arb((int(np.ldexp(m, 64)), int(e) - 64))


def _mpf_of(v) -> mpmath.mpf:
    """A finite long double as an exact mpmath number."""
    m, e = np.frexp(LD(v))
    return mpmath.ldexp(mpmath.mpf(int(np.ldexp(m, 64))), int(e) - 64)


def _ld(a) -> np.longdouble:
    """The long double nearest an arb's midpoint (or an mpmath number),
    ties to even: its integer significand rounded to 64 bits, converted
    and scaled exactly (no long double arithmetic, so the x87 precision
    control in force does not matter)."""
    if isinstance(a, arb):
        m, e = (int(v) for v in a.mid().man_exp())
    else:                                     # mpmath: an unsigned mantissa
        m, e = (int(v) for v in a.man_exp)
        m = -m if a < 0 else m
    extra = abs(m).bit_length() - 64
    if extra > 0:
        q, r = divmod(abs(m), 1 << extra)
        half = 1 << (extra - 1)
        q += r > half or (r == half and q & 1)
        m, e = (q if m > 0 else -q), e + extra
    return np.ldexp(LD(m), e)


def _pair(a: arb) -> tuple:
    """(hi, lo) long doubles with hi + lo within 2^-128 relative of a."""
    hi = _ld(a)
    return hi, _ld(a - _arb_of(hi))


# --------------------------------------------------------------------------
# Taylor series (arb), the tables
# --------------------------------------------------------------------------

class _arb_context:
    """arb's working precision (_PREC bits) and series length cap (40
    terms; python-flint's default, 10, would silently cut the series), for
    a block; both restored after."""

    def __enter__(self):
        self.old = ctx.prec, ctx.cap
        ctx.prec, ctx.cap = _PREC, 40

    def __exit__(self, *exc):
        ctx.prec, ctx.cap = self.old


def _coefficients(s, n: int) -> list:
    if s.length() < n:
        raise AssertionError("arb series shorter than asked")
    return [s[k] for k in range(n)]


def _lgamma_series(c: arb, n: int) -> list:
    """a_0 … a_(n-1) of log|Γ(c + t)| = Σ a_k t^k, c not a pole: arb's
    series of log Γ for c > 0, the reflection log π - log|sin π(c+t)| -
    log Γ(1 - c - t) for c < 0."""
    if c > 0:
        s = arb_series([c, 1], prec=n).lgamma()
    else:
        sn = arb_series([c, 1], prec=n).sin_pi()
        if sn[0] < 0:
            sn = -sn
        s = arb.pi().log() - sn.log() - arb_series([1 - c, -1], prec=n).lgamma()
    return _coefficients(s, n)


def _pole_series(m: int, n: int) -> list:
    """a_0 … a_(n-1) of F(t) = log|Γ(t - m)| + log|t| = log Γ(1 + t) -
    Σ_{j=1..m} log(j - t), analytic for |t| < 1 (Γ(t - m) = Γ(1 + t) / (t·
    (t - 1)…(t - m)))."""
    s = arb_series([1, 1], prec=n).lgamma()
    for j in range(1, m + 1):
        s = s - arb_series([j, -1], prec=n).log()
    return _coefficients(s, n)


def _derivative(a: list, order: int) -> list:
    """The coefficients of the order-th derivative of Σ a_k t^k (ψ⁽ⁿ⁾ from
    log Γ: order n + 1)."""
    return [a[k + order] * math.prod(range(k + 1, k + order + 1)) for k in range(len(a) - order)]


class _Table:
    """Taylor rows (module docstring): row i is f(chi_i + clo_i + z) =
    Σ a_k z^k; bucket rows have clo = 0, window rows (from `first_window`
    on) a centre at a zero.  `win_of_row` names, for each bucket row that
    meets a window, that window (-1 elsewhere)."""

    def __init__(self, centres: list, coefficients: list, windows: list = ()):
        """centres: (hi, lo) long doubles per row; coefficients: arb lists
        of _K per row; windows: (row, radius, bucket rows) per window."""
        a0 = [_pair(c[0]) for c in coefficients]
        a1 = [_pair(c[1]) for c in coefficients]
        self.chi = np.array([c[0] for c in centres], dtype=LD)
        self.clo = np.array([c[1] for c in centres], dtype=LD)
        self.c0h = np.array([p[0] for p in a0], dtype=LD)
        self.c0l = np.array([p[1] for p in a0], dtype=LD)
        self.c1h = np.array([p[0] for p in a1], dtype=LD)
        self.c1l = np.array([p[1] for p in a1], dtype=LD)
        self.lds = [np.array([_ld(c[k]) for c in coefficients], dtype=LD) for k in range(2, _NLD)]
        self.tail = np.array([[float(c[k]) for c in coefficients] for k in range(_NLD, _K)], dtype=np.float64)
        self.first_window = len(centres) - len(windows)
        self.win_of_row = np.full(len(centres), -1, dtype=np.int64)
        self.win_row = np.array([w[0] for w in windows], dtype=np.int64)
        self.win_rad = np.array([w[1] for w in windows], dtype=LD)
        for i, w in enumerate(windows):
            self.win_of_row[w[2]] = i

    def windows(self, rows: np.ndarray, x: np.ndarray) -> None:
        """Move the elements within a window of a zero to its row, in place."""
        if not len(self.win_row):
            return
        w = self.win_of_row.take(rows)
        cand = np.flatnonzero(w >= 0)
        if len(cand):
            wc = w[cand]
            wr = self.win_row[wc]
            inside = np.abs((x[cand] - self.chi[wr]) - self.clo[wr]) <= self.win_rad[wc]
            rows[cand[inside]] = wr[inside]

    def __call__(self, rows: np.ndarray, x: np.ndarray) -> np.ndarray:
        z = x - self.chi.take(rows)                    # exact: chi has 5 bits, or x within 2x of it
        win = np.flatnonzero(rows >= self.first_window)
        if len(win):
            z[win] -= self.clo.take(rows[win])         # one rounding, u of z
        zf = z.astype(np.float64)
        t = self.tail[-1].take(rows)
        for row in self.tail[-2::-1]:
            t *= zf
            t += row.take(rows)
        p = t.astype(LD)
        for row in self.lds[::-1]:
            p *= z
            p += row.take(rows)
        p *= z
        p += self.c1l.take(rows)
        p += self.c1h.take(rows)
        p *= z
        p += self.c0l.take(rows)
        p += self.c0h.take(rows)
        return p


def _check_rows(coefficients: list, half_widths: list, what: str, away=frozenset()) -> None:
    """The module docstring's claims for each row, in float: the terms past
    a15 (three of them) below 2^-70, and those from a4 on below 2^-15, of
    max(|a0|, |a1|·w) at |z| = w; and for the rows in `away` (the buckets
    that meet no window) |a0| >= 3·Σ_{k>=1} |a_k|·w^k, so that |z·t| <=
    |f|/2 everywhere in them."""
    for i, (co, w) in enumerate(zip(coefficients, half_widths)):
        a = [abs(float(c)) for c in co]
        terms = [a[k] * w ** k for k in range(len(a))]
        scale = max(a[0], terms[1])
        if sum(terms[_K:]) > 2.0 ** -70 * scale or sum(terms[_NLD:_K]) > 2.0 ** -15 * scale:
            raise AssertionError(f"{what}: the Taylor row about {i} does not keep its bound")
        if i in away and a[0] < 3 * sum(terms[1:]):
            raise AssertionError(f"{what}: |z·t| may pass |f|/2 in row {i}")


def _find_zero(f, bracket) -> mpmath.mpf:
    with mpmath.workdps(45):
        return mpmath.findroot(f, bracket, solver="anderson")


# Brackets of the zeros that get windows: lgamma's between -2 and -6.5 (two between each pair of
# poles, further left within 1/7! of a pole, inside the near-pole region), digamma's in (-n - 1, -n)
_LGAMMA_ZEROS = ((-2.46, -2.45), (-2.75, -2.74), (-3.15, -3.14), (-3.96, -3.95), (-4.04, -4.03),
                 (-4.992, -4.991), (-5.009, -5.008), (-5.9988, -5.9984), (-6.0016, -6.0012))
_DIGAMMA_ZEROS = tuple((-n - 0.999, -n - 0.001) for n in range(_P))


def _log_abs_gamma(t):
    return mpmath.log(abs(mpmath.gamma(t)))


def _zeros(name: str, negative: bool) -> list:
    """The zeros of lgamma or digamma that get windows, as mpmath numbers."""
    if name == "lgamma":
        if not negative:
            return [mpmath.mpf(1), mpmath.mpf(2)]
        return [_find_zero(_log_abs_gamma, b) for b in _LGAMMA_ZEROS]
    if not negative:
        return [_find_zero(mpmath.digamma, (1.46, 1.47))]
    return [_find_zero(mpmath.digamma, b) for b in _DIGAMMA_ZEROS]


def _window(x0, order: int) -> tuple:
    """((hi, lo), coefficients, radius d/32) of the window about the zero x0
    of the order-th derivative of log|Γ|, d its distance to the nearest
    pole."""
    with mpmath.workdps(45):
        hi = _ld(x0)
        lo = _ld(x0 - _mpf_of(hi))
        d = float(abs(x0 - mpmath.nint(x0))) if x0 < 0 else float(x0)
    co = _derivative(_lgamma_series(_arb_of(hi) + _arb_of(lo), _K + order + 3), order)
    if abs(float(co[0])) > 2.0 ** -100 * abs(float(co[1])):
        raise AssertionError(f"the centre of the window about {x0} is not its zero")
    co[0] = arb(0)       # f(hi + lo) = a1·(hi + lo - x0) + …, below 2^-120·a1: the window's value is z·t
    return (hi, lo), co, d / 32


def _neighbour_mid(key: int, step: int) -> float:
    """The boundary between bucket `key` and its neighbour key + step (±1)."""
    return (_centre(key) + _centre(key + step)) / 2


@functools.cache
def _positive_rows() -> tuple:
    """(centres, log Γ series, x-ranges) of the buckets for x > 0, keys
    _KLO … _KHI (enough terms for polygamma up to n = 6 and the
    truncation check)."""
    keys = range(_KLO, _KHI + 1)
    with _arb_context():
        series = [_lgamma_series(arb(_centre(k)), _K + 10) for k in keys]
    ranges = [(_neighbour_mid(k, -1), min(_neighbour_mid(k, 1), _HI)) for k in keys]
    return [_centre(k) for k in keys], series, ranges


def _negative_row(p, side, key):
    """The row of the bucket of key `key` on side `side` (1: x > p) of the pole p."""
    return (2 * (-p) + side) * _NSIDE + key - _KLO


def _log_linear(c: arb, n: int):
    """The series of log|c + t| (c != 0)."""
    return arb_series([c, 1], prec=n).log() if c > 0 else arb_series([-c, -1], prec=n).log()


@functools.cache
def _negative_rows() -> tuple:
    """(centres, log|Γ| series, x-ranges) of the buckets on the negative
    axis — pole p = 0 … -10, side, |r| = |x - p| from 2^-10 to 1/2, in
    `_negative_row`'s order — then the near-pole rows p = 0 … -10
    (`_pole_series`, range None).  For each side and |r| one series of log
    Γ at 1 ± |r| > 0, then log|Γ(c + t)| = log|Γ(c + 1 + t)| - log|c + t|
    down the poles (a logarithm's series costs 2 µs, log Γ's 140 µs)."""
    n = _K + 5
    with _arb_context():
        by_row = {}
        for side, sign in ((0, -1), (1, 1)):
            for k in range(_KLO, _KHALF + 1):
                cr = sign * _centre(k)
                s = arb_series([arb(1 + cr), 1], prec=n).lgamma()
                for p in range(0, -_P - 1, -1):
                    s = s - _log_linear(arb(p + cr), n)          # p + cr exact: a few bits
                    by_row[_negative_row(p, side, k)] = (p + cr, _coefficients(s, n))
        near = [(float(p), _pole_series(-p, n)) for p in range(0, -_P - 1, -1)]
    rows = [by_row[i] for i in range(len(by_row))] + near
    ranges = []
    for p in range(0, -_P - 1, -1):
        for side in (0, 1):
            for k in range(_KLO, _KHALF + 1):
                lo, hi = _neighbour_mid(k, -1), min(_neighbour_mid(k, 1), 0.5)
                ranges.append((p + lo, p + hi) if side else (p - hi, p - lo))
    ranges += [None] * len(near)
    return [r[0] for r in rows], [r[1] for r in rows], ranges


def _table(name: str, order: int, centres: list, series: list, ranges: list, zeros: list) -> _Table:
    """The order-th derivative of log|Γ| about the given centres (x-ranges:
    the inputs each row takes; None for a near-pole row, whose |z| <=
    2^-10), with a window about each zero (module docstring): the buckets
    meeting it are flagged, and each must be at most half its radius wide."""
    coefficients = [_derivative(s, order) for s in series]
    widths = [_LO if rg is None else max(c - rg[0], rg[1] - c) for c, rg in zip(centres, ranges)]
    rows = [(LD(c), LD(0)) for c in centres]
    lo = np.array([np.inf if rg is None else rg[0] for rg in ranges])
    hi = np.array([-np.inf if rg is None else rg[1] for rg in ranges])
    windows = []
    for x0 in zeros:
        (c_hi, c_lo), co, rad = _window(x0, order)
        met = np.flatnonzero((lo <= float(x0) + rad) & (hi >= float(x0) - rad))
        if not len(met) or any(rad < 2 * widths[i] for i in met):
            raise AssertionError(f"{name}: the window about {x0} is narrower than its buckets")
        windows.append((len(rows), LD(rad), met))
        coefficients.append(co)
        rows.append((c_hi, c_lo))
        widths.append(rad)
    near_zero = {i for w in windows for i in w[2].tolist()}
    _check_rows(coefficients, widths, name,
                {i for i, rg in enumerate(ranges) if rg is not None and i not in near_zero})
    return _Table(rows, [c[:_K] for c in coefficients], windows)


@functools.cache
def positive_table(name: str, order: int) -> _Table:
    """The order-th derivative of log|Γ| (lgamma 0, digamma 1, polygamma
    n + 1) for 2^-10 <= x <= 1024 (rows: key - _KLO); for lgamma and
    digamma also the near-pole row of p = 0 (row _NPOS: F = log Γ(1 + t)
    or ψ(1 + t), |x| < 2^-10) and the windows of their positive zeros."""
    centres, series, ranges = _positive_rows()
    with _arb_context():
        if order > 1:
            return _table(name, order, centres, series, ranges, [])
        return _table(name, order, centres + [0.0], series + [_pole_series(0, _K + 5)], ranges + [None],
                      _zeros(name, negative=False))


@functools.cache
def negative_table(name: str, order: int) -> _Table:
    """lgamma's (order 0) or digamma's (1) table for -10.5 <= x < 0 away
    from 0: buckets (`_negative_row`), the near-pole rows (2·11·_NSIDE -
    p) and the windows of the negative zeros."""
    centres, series, ranges = _negative_rows()
    with _arb_context():
        return _table(name, order, centres, series, ranges, _zeros(name, negative=True))


# --------------------------------------------------------------------------
# Constants, exact products and sums
# --------------------------------------------------------------------------

with mpmath.workdps(40):
    _PI = _ld(mpmath.pi)
    _PI_LO = float(mpmath.pi - _mpf_of(_PI))
    _STIRLING = _ld((mpmath.log(2 * mpmath.pi) - 1) / 2)      # (log 2π - 1)/2
    _BERN = [mpmath.bernoulli(2 * j) / mpmath.factorial(2 * j) for j in range(1, 41)]
_BERN_LD = [_ld(b) for b in _BERN[:4]]
_BERN_64 = [float(b) for b in _BERN[4:]]
_SPLITTER = LD(2 ** 32 + 1)


def _two_prod(a: np.ndarray, b: np.ndarray) -> tuple:
    """(p, e) with p = a·b rounded and p + e = a·b exactly (Dekker's
    product, Veltkamp's split of the 64-bit significands into two 32-bit
    halves, whose products are exact).  In place where it can: fresh
    arrays of this size cost numpy's allocator more than the arithmetic."""
    p = a * b
    ah = _SPLITTER * a
    t = ah - a
    ah -= t                                   # a's high half
    al = a - ah
    bh = _SPLITTER * b
    np.subtract(bh, b, out=t)
    bh -= t                                   # b's high half
    bl = np.subtract(b, bh, out=t)
    e = ah * bh
    e -= p
    ah *= bl
    e += ah
    bh *= al
    e += bh
    al *= bl
    e += al
    return p, e


def _two_sum_into(acc: np.ndarray, comp: np.ndarray, idx, t: np.ndarray) -> None:
    """acc[idx] += t with the rounding error (Knuth's TwoSum, exact) added
    to comp[idx]: a sum acc + comp of terms of one sign keeps its terms'
    errors and one rounding, at the end (the comp additions' errors are
    below 2^-60 of that)."""
    a = acc[idx]
    s = a + t
    bb = s - a
    comp[idx] += (a - (s - bb)) + (t - bb)
    acc[idx] = s


def _log_pair(x: np.ndarray) -> tuple:
    """(L, d): log x = L + d within 2.4u absolute (|d| tiny): L = logl(x)
    (1.3u·|log x|), d = x·e^-L - 1 (expl's 1.4u, and the product's
    rounding next to 1, u, absolute)."""
    L = np.log(x)
    return L, x * np.exp(-L) - 1


# --------------------------------------------------------------------------
# lgamma and digamma
# --------------------------------------------------------------------------

def _lgamma_big(x: np.ndarray) -> np.ndarray:
    """Stirling for x >= 1024: (x - ½)(L - 1) + (x - ½)·d + (log 2π - 1)/2
    + 1/(12x) - 1/(360x³) + 1/(1260x⁵) (the next term is 2^-94 of the
    value).  L - 1 is exact, x - ½ too (below 2^62; above, its rounding is
    2^-63/x relative), their product exact as a pair (`_two_prod`); the rest
    is 2^-12 of the value at most, so one rounding (u) and the 2.4u of
    L + d, times x - ½ (2.4u/(log x - 1) <= 0.41u of the value): 1.45u."""
    L, d = _log_pair(x)
    h = x - LD(0.5)
    ph, pl = _two_prod(h, L - 1)
    xf = x.astype(np.float64)
    c = (1 / 12 - (1 / 360 - 1 / (1260 * xf * xf)) / (xf * xf)) / xf
    return ph + (((pl + h * d) + _STIRLING) + c.astype(LD))


def _digamma_big_pair(x: np.ndarray) -> tuple:
    """(L, rest), ψ(x) = L + rest within 2.4u absolute for x >= 1024:
    log x - 1/(2x) - 1/(12x²) + 1/(120x⁴) - 1/(252x⁶) (the next term is
    2^-100 of the value), L = logl(x) and rest = d - 1/(2x) - … (the log
    pair's 2.4u; rest's own roundings are 2^-70 of ψ)."""
    L, d = _log_pair(x)
    xf = x.astype(np.float64)
    x2 = xf * xf
    c = -(1 / 12 - (1 / 120 - 1 / (252 * x2)) / x2) / x2
    return L, (d - LD(0.5) / x) + c.astype(LD)


def _digamma_big(x: np.ndarray) -> np.ndarray:
    """ψ(x) for x >= 1024: L + rest, one rounding (u) and 2.4u/log x from
    the pair: 1.35u."""
    L, rest = _digamma_big_pair(x)
    return L + rest


def _pole_term(name: str, F: np.ndarray, r: np.ndarray) -> tuple:
    """(value, bound in u) of f = F + pole(r) near a pole (|r| < 2^-10).
    F, the table's value, within 1.2u of itself + 0.01u (module docstring:
    u·(|F| + 3|z·t|), |z·t| <= 2^-10·|a1|; where a0 = 0, |F| < 0.6·2^-10).
    lgamma: F - (L + d) as (F - L) - d, L + d = log|r| within 2.4u, two
    roundings; digamma: F - 1/r, 1/r within u, one rounding."""
    if name == "lgamma":
        L, d = _log_pair(np.abs(r))
        s = F - L
        v = s - d
        err = 1.2 * np.abs(F) + 0.01 + 2.4 + np.abs(s)
    else:
        q = 1 / r
        v = F - q
        err = 1.2 * np.abs(F) + 0.01 + np.abs(q)
    return v, err / np.abs(v) + 1


def _trusted(v: np.ndarray, bound: np.ndarray) -> np.ndarray:
    return np.where(bound <= _TRUST, v, np.nan)


def _tabulated(name: str, table: _Table, rows: np.ndarray, x: np.ndarray,
               near: np.ndarray, r: np.ndarray) -> np.ndarray:
    """f at x from the table rows (windows moved in), the pole term added
    at the `near` positions (r: x - p there), refused where it cancels."""
    table.windows(rows, x)
    y = table(rows, x)
    if len(near):
        v, bound = _pole_term(name, y[near], r)
        y[near] = _trusted(v, bound)
    return y


@functools.cache
def _cot_table() -> _Table:
    """h(r) = π·cot(πr) - 1/r for 0 <= r <= 1/2 (odd, analytic for |r| <
    1): buckets of r as the negative axis's (rows key - _KLO), and the
    row about 0 (row _NSIDE: h = -2·Σ ζ(2k)·r^(2k-1), for r < 2^-10)."""
    n = _K + 4
    keys = range(_KLO, _KHALF + 1)
    with _arb_context():
        coefficients = []
        for k in keys:
            t = arb_series([arb(_centre(k)), 1], prec=n)
            coefficients.append(_coefficients(t.cot_pi() * arb.pi() - t.inv(), n))
        coefficients.append([arb(0) if m % 2 == 0 else -2 * arb(m + 1).zeta() for m in range(n)])
        widths = [max(_centre(k) - _neighbour_mid(k, -1), min(_neighbour_mid(k, 1), 0.5) - _centre(k))
                  for k in keys] + [_LO]
        _check_rows(coefficients, widths, "cot", set(range(len(keys))))
        centres = [(LD(_centre(k)), LD(0)) for k in keys] + [(LD(0), LD(0))]
        return _Table(centres, [c[:_K] for c in coefficients])


def _reflection(name: str, x: np.ndarray) -> np.ndarray:
    """x < -10.5, not an integer; r = x - round(x), exact.  The positive
    kernels at 1 - x >= 11.5 (exact: x is a binary64 value below -1):
    lgamma within 1.45u (Stirling; its buckets there 1.1u), ψ within
    1.1u + 2.4u absolute (the log pair).
    * lgamma = (A + dA) - lgamma(1 - x), A + dA the log pair of π/|sin πr|:
      π·r as π_hi·r + π_lo·r within 2u, so sin πr within 3u (sinl 1u),
      the quotient within 5u (the division, and π_hi's own rounding), its
      log within 5u + 2.4u absolute; one rounding on A + dA and one on the
      difference: bound (7.4 + |A| + 1.45|G|)/|f| + 1 u.
    * digamma = ψ(1 - x) - 1/r - h(r), π·cot(πr) = 1/r + h(r) with h from
      its table (`_cot_table`, 1.1u): no tanl, whose 1.5u and its
      argument's 2u near the poles would refuse every element there.
      ψ(1 - x) = A + a: for 1 - x >= 1024 the unrounded pair L + rest
      (within 2.4u absolute), else the table's value (1.1u·|A|, a = 0);
      A - 1/r exact as a pair (TwoSum), its low part added to a - h and
      the whole rounded once: bound (e_A + |1/r| + 1.1|h| + |low + a -
      h|)/|f| + 1 u."""
    r = x - np.rint(x)
    if name == "lgamma":
        t = _PI * r + LD(_PI_LO) * r
        A, dA = _log_pair(_PI / np.abs(np.sin(t)))
        G = _family("lgamma", 1 - x)
        v = (A + dA) - G
        bound = (7.4 + np.abs(A) + 1.45 * np.abs(G)) / np.abs(v) + 1
    else:
        ar = np.abs(r)
        k = _key(ar.astype(np.float64)).astype(np.int64)
        h = _cot_table()(np.where(k < _KLO, _NSIDE, k - _KLO), ar)
        h = np.where(r < 0, -h, h)
        w = 1 - x
        A, a = np.empty_like(w), np.zeros_like(w)
        big = w >= _HI
        A[big], a[big] = _digamma_big_pair(w[big])
        A[~big] = _family("digamma", w[~big])
        err_a = np.where(big, 2.4, 1.1 * np.abs(A))
        q = 1 / r
        sh = A - q                            # TwoSum: A - q = sh + sl exactly
        bb = sh - A
        sl = (A - (sh - bb)) + (-q - bb)
        low = sl + (a - h)
        v = sh + low
        bound = (err_a + np.abs(q) + 1.1 * np.abs(h) + np.abs(a - h) + np.abs(low)) / np.abs(v) + 1
    return _trusted(v, bound)


def _family(name: str, x: np.ndarray) -> np.ndarray:
    """lgamma or digamma of a long double array of binary64 values (or, from
    `_reflection`, of 1 - x >= 11.5) (module docstring): NaN at the poles
    and non-finite x.  The routing is done on the binary64 values (cheaper
    than long double's); where every element is in the positive table's
    range, on the whole array without gathering."""
    order = 0 if name == "lgamma" else 1
    x64 = x.astype(np.float64)
    ok = np.isfinite(x64) & ~((x64 <= 0) & (x64 == np.rint(x64)))
    k = _key(np.abs(x64)).astype(np.int64)
    small = ok & (k < _KLO)                      # |x| < 2^-10: the pole at 0
    in_pos = ok & (x64 > 0) & (x64 < _HI) | small
    rows = np.where(small, _NPOS, k - _KLO)
    if in_pos.all():
        near = np.flatnonzero(small)
        return _tabulated(name, positive_table(name, order), rows, x, near, x[near])
    y = np.full(x.shape, np.nan, dtype=LD)
    pos = np.flatnonzero(in_pos)
    if len(pos):
        xp = x[pos]
        near = np.flatnonzero(small[pos])
        y[pos] = _tabulated(name, positive_table(name, order), rows[pos], xp, near, xp[near])
    big = np.flatnonzero(ok & (x64 >= _HI))
    if len(big):
        y[big] = (_lgamma_big if order == 0 else _digamma_big)(x[big])
    neg = np.flatnonzero(ok & (x64 < 0) & ~small)
    if len(neg):
        xn = x[neg]
        p = np.rint(xn)
        far = p < -_P
        if far.any():
            y[neg[far]] = _reflection(name, xn[far])
            neg, xn, p = neg[~far], xn[~far], p[~far]
        if len(neg):
            r = xn - p                                # exact
            kr = _key(np.abs(r).astype(np.float64)).astype(np.int64)
            pi = (-p).astype(np.int64)
            near_pole = kr < _KLO
            rows = np.where(near_pole, 2 * (_P + 1) * _NSIDE + pi, (2 * pi + (r > 0)) * _NSIDE + kr - _KLO)
            near = np.flatnonzero(near_pole)
            y[neg] = _tabulated(name, negative_table(name, order), rows, xn, near, r[near])
    return y


def lgamma(x) -> np.ndarray:
    """log|Γ(x)| (module docstring), NaN at the poles and where refused."""
    with np.errstate(all="ignore"):
        x = np.asarray(x, dtype=LD)
        return _family("lgamma", x.ravel()).reshape(x.shape)


def digamma(x) -> np.ndarray:
    """ψ(x) (module docstring), NaN at the poles and where refused."""
    with np.errstate(all="ignore"):
        x = np.asarray(x, dtype=LD)
        return _family("digamma", x.ravel()).reshape(x.shape)


# --------------------------------------------------------------------------
# Hurwitz zeta and polygamma
# --------------------------------------------------------------------------

_S_MAX = 64.0


def _em_start(sf: np.ndarray) -> np.ndarray:
    """Z(s) = max(8 + s/2, 8.8 + 0.4·s): Euler–Maclaurin from z = q + N >= Z,
    where the 31st Bernoulli term is below 2^-75 of the bracket for every
    1 < s <= 64 (mpmath, tests/oracle/test_chlo_long_double_gamma.py) and
    the series' least term below 2^-68 (e^(-2πz) bounds it from below: z
    cannot go much lower)."""
    return np.maximum(8 + 0.5 * sf, 8.8 + 0.4 * sf)


_J = 30                      # Bernoulli terms at most (the first 4 in long double)
_TINY_POWER = LD(2) ** -16000


def _reciprocal_pair(ph: np.ndarray, pl: np.ndarray) -> np.ndarray:
    """1/(ph + pl), |pl| <= 2^-63·|ph|, within u: y = 1/ph, then one
    Newton step y + y·r with the residual r = 1 - y·(ph + pl) formed
    exactly enough (y·ph as an exact pair whose high part is within 2^-63
    of 1, so 1 - it is exact); the step's sum rounds once."""
    y = 1 / ph
    a, b = _two_prod(y, ph)
    r = ((1 - a) - b) - y * pl
    return y + y * r


def _pow_neg(b: np.ndarray, s: np.ndarray, sf: np.ndarray) -> np.ndarray:
    """b^-s: powl (1.2u), except at s = 2 and 3, where glibc's powl takes
    its integer path (2.8u at -2, 3.9u at -3, measured): b² or b³ as an
    exact pair (`_two_prod`; b³'s low part rounded, 2^-126) and its
    reciprocal (`_reciprocal_pair`, u)."""
    y = np.power(b, -s)
    for n in (2.0, 3.0):
        i = np.flatnonzero(sf == n)
        if len(i):
            bi = b[i]
            ph, pl = _two_prod(bi, bi)
            if n == 3:
                ph, e = _two_prod(ph, bi)
                pl = e + pl * bi
            y[i] = _reciprocal_pair(ph, pl)
    return y


def _bernoulli_part(s: np.ndarray, z: np.ndarray, scale: np.ndarray) -> tuple:
    """(t1, R): the sum B = Σ_{j>=1} B_2j/(2j)!·(s)_(2j-1)/z^(2j-1) as its
    first term t1 = s/(12z) (12z exact: one rounding, u) and the rest R:
    the next three terms in long double, smallest first, then the others
    in float64, until every element's last term is below 2^-72 of `scale`
    (the bracket z/(s-1) + ½ + B, in float64), 30 terms at most.  From z >=
    Z(s) on (mpmath, 1 < s <= 64): B is below 0.11 of the bracket, R below
    0.05 of t1 (so R's few u cost 0.2u of t1), the float64 terms below
    2^-18 of the bracket (their 2^-51 error is 2^-69 of it)."""
    iz2 = z * z
    np.divide(1, iz2, out=iz2)
    t1 = 12 * z
    np.divide(s, t1, out=t1)
    w = s / z
    m, m2 = np.empty_like(s), np.empty_like(s)
    terms = []
    for j in range(1, 4):                     # in place: fresh long double arrays cost more than sums
        np.add(s, 2 * j - 1, out=m)
        np.add(s, 2 * j, out=m2)
        m *= m2
        w *= m
        w *= iz2
        terms.append(_BERN_LD[j] * w)
    sf, wf, iz2f = s.astype(np.float64), w.astype(np.float64), iz2.astype(np.float64)
    tail = np.zeros_like(sf)
    part = np.zeros_like(sf)                  # the tail of the elements still summing (`live`)
    live = np.arange(len(sf))
    m = np.empty_like(sf)
    limit = 2.0 ** -72 * scale
    for j in range(4, _J):
        np.add(sf, 2 * j - 1, out=m)
        m *= sf + 2 * j
        m *= iz2f
        wf *= m
        np.multiply(wf, _BERN_64[j - 4], out=m)
        part += m
        if j % 4 == 3:                        # every fourth term: set the converged elements aside
            going = np.abs(m) > limit
            if not going.all():
                tail[live[~going]] = part[~going]
                live, sf, wf, iz2f, limit, part = (a[going] for a in (live, sf, wf, iz2f, limit, part))
                m = m[going]
                if not len(live):
                    break
    tail[live] = part
    return t1, terms[0] + (terms[1] + (terms[2] + tail.astype(LD)))


def _hurwitz(s: np.ndarray, q: np.ndarray) -> tuple:
    """ζ(s, q) = acc + comp for 1 < s <= 64, q > 0 (long double arrays):
    Σ_{k<N} (q + k)^-s + z^-s·V, z = q + N, V = z/(s - 1) + ½ + B
    (`_bernoulli_part`).  V is formed as an exact pair up to B's error
    (z/(s - 1) = q1 + q2 by `_two_prod`'s remainder, TwoSums with ½ and B),
    within 0.15u of itself; z^-s·V as an exact pair.  So every term carries
    powl's 1.2u (u at s = 2, 3) and the sum one rounding: 2.4u at most.
    The elements are sorted by their number of direct terms, so that the
    k-th terms' elements are a prefix (slices, not gathers), and put back."""
    sf, qf = s.astype(np.float64), q.astype(np.float64)
    start = _em_start(sf)
    n = np.where(qf < start, np.ceil(start - qf), 0.0)
    # the elements in decreasing order of their number of direct terms: the k-th term's elements are
    # then a prefix, summed on slices (views) rather than gathered and scattered
    order = np.argsort(-n, kind="stable")
    s, q, sf, qf, n = s[order], q[order], sf[order], qf[order], n[order]
    acc = np.zeros_like(q)
    comp = np.zeros_like(q)
    for k in range(int(n[0]) if len(n) else 0):
        m = int(np.searchsorted(-n, -k, side="left"))      # the elements with n > k
        _two_sum_into(acc, comp, slice(0, m), _pow_neg(q[:m] + k, s[:m], sf[:m]))
    z = q + n.astype(LD)                      # exact for q >= 2^-11; else its terms are < q^s of the first
    d = s - 1                                 # exact
    q1 = z / d
    ph, pl = _two_prod(q1, d)
    q2 = ((z - ph) - pl) / d                  # z - ph exact (Sterbenz)
    vh = q1 + LD(0.5)
    vl = (LD(0.5) - (vh - q1)) + q2           # Fast2Sum: q1 >= Z(s)/(s-1) > ½
    for term in _bernoulli_part(s, z, (qf + n) / (sf - 1) + 0.5):
        t = vh + term                         # TwoSum
        bb = t - vh
        vl += (vh - (t - bb)) + (term - bb)
        vh = t
    P = _pow_neg(z, s, sf)
    # z^-s below 2^-16000 (only for q >= Z, where the tail is all): the value is below 2^-14900, 0 in f64,
    # and a long double subnormal z^-s would carry no relative accuracy: answer 0 (fast.decide: underflow)
    P[P < _TINY_POWER] = 0
    th, tl = _two_prod(P, vh)
    _two_sum_into(acc, comp, slice(None), th)
    comp += tl + P * vl
    back = np.empty_like(order)
    back[order] = np.arange(len(order))
    return acc[back], comp[back]


def _finish(acc: np.ndarray, comp: np.ndarray) -> np.ndarray:
    """acc + comp, or acc where a term overflowed long double (the true
    value is then past binary64's range: fast.decide's overflow)."""
    return np.where(np.isinf(acc), acc, acc + comp)


def zeta(s, q) -> np.ndarray:
    """ζ(s, q) for 1 < s <= 64 and q > 0 (`_hurwitz`); NaN elsewhere (arb
    or the mpmath loop decide those)."""
    with np.errstate(all="ignore"):
        s, q = np.broadcast_arrays(np.asarray(s, dtype=LD), np.asarray(q, dtype=LD))
        shape = s.shape
        s, q = s.ravel(), q.ravel()
        ok = np.flatnonzero((s > 1) & (s <= _S_MAX) & (q > 0) & np.isfinite(q))
        y = np.full(s.shape, np.nan, dtype=LD)
        if len(ok):
            y[ok] = _finish(*_hurwitz(s[ok], q[ok]))
        return y.reshape(shape)


_N_TABLE = 6          # polygamma's tables: n = 1 … 6
_N_MAX = 25           # n! exact in long double up to 25!
_FACTORIAL = np.array([math.factorial(n) for n in range(_N_MAX + 1)], dtype=LD)


def polygamma(n, x) -> np.ndarray:
    """ψ⁽ⁿ⁾(x) for integer 1 <= n <= 25 and x > 0: the table of ψ⁽ⁿ⁾ for
    n <= 6 and 2^-10 <= x <= 1024 (1.2u: no zeros, |z·t| <= 2^-5·|f|);
    elsewhere (-1)^(n+1)·n!·ζ(n + 1, x) (`_hurwitz`; n! exact, its product
    with the pair exact, one rounding at the end: 2.4u).  NaN for other
    n, x <= 0 (the mpmath loop) and non-finite x."""
    with np.errstate(all="ignore"):
        n, x = np.broadcast_arrays(np.asarray(n, dtype=LD), np.asarray(x, dtype=LD))
        shape = x.shape
        n, x = n.ravel(), x.ravel()
        y = np.full(x.shape, np.nan, dtype=LD)
        ok = (n >= 1) & (n <= _N_MAX) & (n == np.rint(n)) & (x > 0) & np.isfinite(x)
        ni = np.where(ok, n, 1).astype(np.int64)
        k = _key(np.where(ok, x, 1.0).astype(np.float64)).astype(np.int64)
        tab = ok & (ni <= _N_TABLE) & (k >= _KLO) & (x < _HI)
        for m in range(1, _N_TABLE + 1):
            i = np.flatnonzero(tab & (ni == m))
            if len(i):
                y[i] = positive_table("polygamma", m + 1)(k[i] - _KLO, x[i])
        rest = np.flatnonzero(ok & ~tab)
        if len(rest):
            m = ni[rest]
            f = np.where(m % 2 == 1, 1, -1) * _FACTORIAL[m]
            acc, comp = _hurwitz(n[rest] + 1, x[rest])
            ph, pl = _two_prod(f, acc)
            y[rest] = np.where(np.isinf(acc), f * acc, ph + (pl + f * comp))
        return y.reshape(shape)


KERNELS: dict = {"lgamma": lgamma, "digamma": digamma, "polygamma": polygamma, "zeta": zeta}
# fast.LD_REL_ERROR: 16 times the worst error measured (2.44u = 2^-62.7) is 2^-58.7
REL_ERROR = 2.0 ** -58
