"""Cell-wise Taylor polynomials in double-word arithmetic with an error
bound proven per cell in arb: the first pass of f64 erf, erfc, lgamma,
digamma and i1e (cells.py), erf_inv (erfinv.py), lgamma and digamma near
their poles (poles.py) and polygamma (polygamma_cells.py) — chlo_dd.LEAD —
on whole arrays, ahead of the long double pass (which then sees only the
elements this leaves).

Cells.  |x| in [2^E0, 2^E1) is cut at its binades, binade [2^e, 2^(e+1))
into `count(e)` equal cells, a power of two; a cell has a float64 centre c
and radius h (both dyadic, exact), h <= |c|/4.  Below 2^E0 one cell of
centre 0 and radius 2^E0 ("zero cell").  Odd and even functions use |x|
(the sign put back for odd ones); the others have a mirrored set of cells
for x < 0.  An element's cell is read off its bits (`index`: its sign and
exponent field name the binade, the mantissa field's top bits the cell),
and several tables of one degree evaluate together, their rows stacked
(`stack`), an element's index shifted to its table's first row.

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
to nearest, checked by ddfast.rounds_to_nearest; γ_j = ju/(1 - ju),
Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., eq.
3.8).  float64 Horner for k = n-1 … K gives q̂; then K pair steps.
With A_k = |â_k| (the head for k < K), L_k = |al_k| and M_k =
Σ_{i>=k} A_i h^(i-k) (a bound on the exact Horner partial sums):
* Horner in float64, m = n-1-K steps: |q̂ - q| <= γ_2m·M_K (Higham eq.
  5.3): E_K.
* The pair steps, a compensated Horner scheme (Graillat, Langlois and
  Louvet, "Algorithms for accurate, validated and fast polynomial
  evaluation", Japan J. Indust. Appl. Math. 26, 2009), with the
  coefficients' low parts added to the correction: s_K = q̂, and for k =
  K-1 … 0: p_k + π_k = s_(k+1)·t (Dekker's product, exact) — for k >=
  KP (`Spec.kp`) only p_k = RN(s_(k+1)·t), π_k its rounding error left
  unformed —, s_k + σ_k = p_k + ah_k (TwoSum, exact), ê_k = RN(RN(π_k +
  σ_k) + al_k) (RN(σ_k + al_k) where π_k is not formed), and the
  correction c = RN(RN(c·t) + ê_k), c = ê_(K-1) first.  The result is
  the pair (s_0, c), not normalised (ddfast.decide sums it exactly).
  Unrolling s_(k+1)·t + ah_k = s_k + π_k + σ_k (exact):
  Σ_{k<K} (ah_k + al_k)·t^k + s_K·t^K = s_0 + Σ_{k<K} (π_k + σ_k + al_k)·t^k.
  Term k of c passes through at most 2k + 2 <= 2K roundings, so |c -
  Σ_k ê_k-terms| <= γ_2K·Σ_k (|π_k| + |σ_k| + L_k)·h^k, and each
  unformed π_k adds |π_k|·h^k.  With Y_K = M_K + E_K >= |s_K| and Y_k =
  (1 + u)²·(h·Y_(k+1) + A_k) >= |s_k|: |π_k| <= u(1 + u)·h·Y_(k+1) and
  |σ_k| <= u·Y_k.  So E_P = h^K·E_K + γ_2K·Σ_k (u(1 + u)·h·Y_(k+1)
  [k < KP] + u·Y_k + L_k)·h^k + Σ_{k>=KP} u(1 + u)·h·Y_(k+1)·h^k.
  (Measured: 5-10% of the kernel's time saved against a renormalised
  double-word step, k >= KP a further step's Dekker product.)
* The coefficients: Σ_k |â_k - a_k|·h^k, each |â_k - a_k| bounded by
  arb (the ball minus the stored value, rounded up).
* Truncation (Lagrange): |f(c + t) - Σ_{k<n} a_k t^k| <= B·h^n, B an
  upper bound of |f^(n)(ξ)/n!| over the cell (of f^(n+1)/(n+1)! for
  vanishing cells), from arb's Taylor series over the cell's ball or,
  for lgamma and digamma, from the Hurwitz zeta at the cell's left end
  (those coefficients are ±ζ(k, ξ)/k or ±ζ(k+1, ξ), decreasing in ξ > 0).
* Underflow: a Dekker product or TwoSum below 2^-969 may lose its error
  term, and a rounding of c below 2^-1022 errs by up to 2^-1075 more than
  its relative bound; fewer than 64 roundings per element: 2^-1060 is
  added.
The sum E of these is an absolute bound on |P̂ - f(x)| (plain cells).
In a vanishing cell, with Q_min > 0 a lower bound of |Q| over the cell,
the value R = mul_fp(Q̂, t) (Q̂ the pair (s_0, c) renormalised by TwoSum) has |R - f| <= |t|·E + 2u²·|t|·(|Q| + E):
relative error E/Q_min·(1 + 2u²) + 2u² (plus 2^-490 for underflow: these
cells are used only where |x| >= 2^-500).  Every bound above is formed
from arb's upper bounds of the coefficients' errors and of the
truncation term (`_cell_bound` says how the sums are rounded upward).

`decide` (ddfast.decide) then rounds the pair and accepts only where
E (or the relative bound) keeps the true value strictly inside one
rounding interval; the rest goes to the long double pass, then the
double-word refinement or arb, then MPFR.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np
from flint import arb, ctx

from .dd import mul_fp, split, two_sum

PREC = 160          # bits of arb's working precision for the tables
_U = 2.0 ** -53
CHUNK = 4096       # elements at once (a chunk's temporaries stay in cache)


def _up(b: arb) -> float:
    """A float64 >= every point of |b| (arb's upper bound, then one ulp up
    and a relative 2^-50 for the conversion)."""
    v = float(b.abs_upper())
    return math.nextafter(v * (1 + 2.0 ** -50), math.inf)


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
    kp: int = 2                 # pair steps k < kp with an exact product (module docstring)
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
    rows: np.ndarray = None    # [cell][column]: centre, radius, rel, abs, vanish, hi_0 … hi_(n-1), lo_0 … lo_(K-1)
    key_first: np.ndarray = None   # per sign and exponent field (x's top 12 bits): the binade's first cell
    key_shift: np.ndarray = None   # … and the shift taking the mantissa field to the cell within the binade


_CENTER, _RADIUS, _REL, _ABS, _VANISH, _HI = range(6)


def _rows(tab: Table) -> np.ndarray:
    """One row a cell (one gather fetches a chunk's coefficients: measured
    15% faster than a gather a coefficient)."""
    n, K = tab.spec.n, tab.spec.k
    return np.ascontiguousarray(np.vstack([tab.center, tab.radius, tab.rel, tab.abs_,
                                           tab.vanish.astype(np.float64), tab.hi[:n], tab.lo[:K]]).T)


def _keys(spec: Spec, offset: np.ndarray, counts: list, neg: int) -> tuple:
    """The index of x's cell read off its bits: for each of the 4096
    values of x's sign and exponent field (its top 12 bits), the binade's
    first cell and the right shift of the 52-bit mantissa field giving the
    cell within it (counts are powers of two; a binade of 2^j cells takes
    the field's top j bits).  Exponent fields below the first binade (zero
    and subnormals included) name the zero cell (index 0; also cell 0 when
    there is none), those above it and NaN/infinity cell 0: the kernel's
    |t| <= h test rejects every element outside the cell it is given."""
    first = np.zeros(4096, dtype=np.int64)
    shift = np.full(4096, 63, dtype=np.uint64)
    for sign in (0, 1):
        for field_ in range(1, 2047):
            b = field_ - 1023 - spec.e0
            if 0 <= b < len(counts):
                key = sign * 2048 + field_
                first[key] = offset[b] + (neg if sign and neg else 0)
                shift[key] = 52 - (counts[b].bit_length() - 1)
    return first, shift


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


_SLACK = 1 + 2.0 ** -40       # (1 - u)^-m for the m < 200 roundings of a float64 bound (`_cell_bound`)


def _gamma_up(j: int) -> float:
    """An upper bound of γ_j = ju/(1 - ju) (j < 1000): ju·(1 + 2^-40)."""
    return j * _U * _SLACK


def _cell_bound(spec: Spec, c: float, h: float, vanish: bool) -> tuple:
    """(coefficient pairs [(hi, lo)], rel, abs, worst relative error over
    the cell or None) for one cell (module docstring).

    The coefficients and the truncation term come from arb; the sums of
    the bound are formed in float64 from upper bounds (arb's, rounded up:
    `_up`; the stored coefficients' magnitudes, exact), non-negative
    terms only, so the float64 value of each sum of products is at least
    (1 - u)^m times the exact one, m < 200 its roundings: the total is
    multiplied by 1 + 2^-40 >= (1 - u)^-200, the constants rounded up
    (u(1 + u) <= u·(1 + 2^-52), (1 + u)² <= 1 + 2^-50).  Every term is a
    normal float64 (h^(n+1) >= 2^-1000 is checked), or an underflowed one
    below 2^-1074 that the 2^-1060 added covers; measured three times
    faster than the same sums in arb.  A vanishing cell's lower bound
    Q_min, a difference, is formed in arb."""
    n, K = spec.n, spec.k
    ca = arb(c)
    if vanish:
        a = spec.series(ca, n + 1)[1:]
        tail = spec.series(arb(c, h), n + 2)[n + 1] if spec.tail is None else spec.tail(c, h, n + 1)
    else:
        a = spec.series(ca, n)
        tail = spec.series(arb(c, h), n + 1)[n] if spec.tail is None else spec.tail(c, h, n)
    hp = [1.0]
    for k in range(n):
        hp.append(hp[-1] * h)                      # h^k: h is a power of two, exact
    if not hp[n] * h >= 2.0 ** -1000:
        raise AssertionError(f"{spec.name}: cell radius {h} too small for the float64 bound")
    hi, lo, dev, err, mag = [], [], [], 0.0, []
    for k in range(n):
        b = a[k]
        x = float(b)                                # the nearest double to the midpoint
        rest = b - x                                # (arb less a float: exact up to the ball's radius)
        y = float(rest) if k < K else 0.0
        d = _up(rest - y)                           # |a_k - â_k|
        hi.append(x)
        lo.append(y)
        dev.append(d)
        err += d * hp[k]
        mag.append(abs(x) + abs(y))
    u = _U
    MK = 0.0
    for k in range(n - 1, K - 1, -1):
        MK = mag[k] + h * MK
    E_K = _gamma_up(2 * (n - 1 - K)) * MK
    Y = [0.0] * (K + 1)
    Y[K] = MK + E_K
    for k in range(K - 1, -1, -1):
        Y[k] = (1 + 2.0 ** -50) * (h * Y[k + 1] + abs(hi[k]))
    comp, loose = 0.0, 0.0
    for k in range(K):
        pi = u * (1 + 2.0 ** -52) * h * Y[k + 1]
        comp += ((pi if k < spec.kp else 0.0) + u * Y[k] + abs(lo[k])) * hp[k]
        if k >= spec.kp:
            loose += pi * hp[k]
    tb = _up(tail) * hp[n]
    E = (hp[K] * E_K + _gamma_up(2 * K) * comp + loose + err + tb + 2.0 ** -1060) * _SLACK
    E = math.nextafter(E, math.inf)
    if vanish:
        u2 = arb(u) ** 2
        qmin = arb(mag[0]) - sum((arb(mag[k]) + arb(dev[k])) * arb(hp[k]) for k in range(1, n)) - arb(tb)
        qmin = qmin - arb(dev[0])
        if not qmin > 0:
            raise AssertionError(f"{spec.name}: no lower bound of |Q| in the zero cell")
        rel = arb(E) / qmin * (1 + 2 * u2) + 2 * u2 + arb(2.0) ** -490
        return hi, lo, _up(rel), 0.0, _up(rel)
    return hi, lo, 0.0, E, None


def build(spec: Spec, k: int | None = None) -> Table:
    """The cells' tables and bounds, at PREC bits and with arb's series
    length cap raised above the degree (flint's ctx.cap, 10 by default,
    silently truncates every series to that many coefficients).  `k`: the
    spec's coefficient pairs replaced (0: every coefficient one float64,
    the tables chlo_compiled.py evaluates by a float64 Horner; the bound
    is then that Horner's)."""
    if k is not None:
        spec = dataclasses.replace(spec, k=k)
    old, ctx.prec = ctx.prec, PREC
    old_cap, ctx.cap = ctx.cap, max(ctx.cap, spec.n + 8)
    try:
        if spec.n < spec.k + 2:
            raise AssertionError(f"{spec.name}: the kernel takes at least two float64 coefficients")
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
    if any(m & (m - 1) for m in counts):
        raise AssertionError(f"{spec.name}: cells per binade must be powers of two")
    neg = len(cells) - z if len(signs) == 2 else 0
    tab = Table(spec,
                center=np.array([r[0] for r in rows]), radius=np.array([r[1] for r in rows]),
                rel=np.array([r[5] for r in rows]), abs_=np.array([r[6] for r in rows]),
                vanish=np.array([r[2] for r in rows]),
                hi=np.array([[r[3][k] for r in rows] for k in range(spec.n)]),
                lo=np.array([[r[4][k] for r in rows] for k in range(spec.k)]).reshape(spec.k, len(rows)),   # k = 0 too
                offset=offset, scale=np.array([2.0 * m for m in counts]),
                neg=neg, zero_index=0)
    tab.rows = _rows(tab)
    tab.key_first, tab.key_shift = _keys(spec, offset, counts, neg)
    return tab


_MANT = np.uint64((1 << 52) - 1)
_S52 = np.uint64(52)


def index(tab: Table, x: np.ndarray) -> np.ndarray:
    """The cell of each x from its bits (`_keys`); any index where x is
    outside the cells (the kernel's |t| <= h test rejects those)."""
    b = x.view(np.uint64)
    key = (b >> _S52).view(np.int64)
    return tab.key_first.take(key) + ((b & _MANT) >> tab.key_shift.take(key)).view(np.int64)


def stack(tables: list) -> tuple:
    """(rows of all the tables' cells one after another, first cell of
    each): tables of one degree n and pair count K, evaluated together by
    `poly` with an index shifted by the table's first cell."""
    n, K = tables[0].spec.n, tables[0].spec.k
    if any((t.spec.n, t.spec.k) != (n, K) for t in tables):
        raise AssertionError("stacked tables must share n and K")
    firsts = np.cumsum([0] + [len(t.rows) for t in tables])[:-1]
    return np.ascontiguousarray(np.vstack([t.rows for t in tables])), firsts


def _pair_steps(s, t, cols, n: int, K: int, kp: int) -> tuple:
    """The compensated pair steps k = K-1 … 0 from s = q̂ (module
    docstring: E_P): (s_0, c), not normalised."""
    c = None
    th = tl = None
    for k in range(K - 1, -1, -1):
        ah, al = cols[_HI + k], cols[_HI + n + k]
        p = s * t
        if k < kp:
            if th is None:
                th, tl = split(t)
            sh, sl = split(s)
            pi = ((sh * th - p) + sh * tl + sl * th) + sl * tl     # Dekker: p + pi = s·t
        s, sig = two_sum(p, ah)
        e = (pi + sig if k < kp else sig) + al
        if c is None:
            c = e
        else:
            c *= t
            c += e
    return s, c


def poly(rows: np.ndarray, n: int, K: int, v: np.ndarray, idx: np.ndarray, kp: int = 2) -> tuple:
    """The cells' polynomials at v, cell idx each (rows as `_rows` lays
    them out, or `stack`'s): (h, lo, rel, abs, accepted), accepted where
    t = v - centre lies within the cell's radius (then t is exact: module
    docstring); h + lo (not normalised) within |h + lo|·rel + abs of the
    function where accepted (a blank cell's abs is infinite, which
    ddfast.decide never accepts).  A vanishing cell's value is Q·t,
    accepted only where |v| >= 2^-500."""
    cols = rows.take(idx, axis=0).T
    t = v - cols[_CENTER]
    inside = np.abs(t) <= cols[_RADIUS]
    q = cols[_HI + n - 1] * t
    q += cols[_HI + n - 2]
    for k in range(n - 3, K - 1, -1):
        q *= t
        q += cols[_HI + k]
    ph, pl = _pair_steps(q, t, cols, n, K, kp)
    rel = cols[_REL]
    van = np.flatnonzero(cols[_VANISH])
    if len(van):
        vt = t[van]
        ph[van], pl[van] = mul_fp(*two_sum(ph[van], pl[van]), vt)
        inside[van] &= np.abs(v[van]) >= 2.0 ** -500
    return ph, pl, rel, cols[_ABS], inside


def evaluate_chunk(tab: Table, x: np.ndarray) -> tuple:
    """(h, lo, rel, abs, inside) over one chunk (`evaluate` cuts an array
    into chunks; a caller that already cuts its own calls this)."""
    spec = tab.spec
    xs = np.abs(x) if spec.symmetry in ("odd", "even") else x
    ph, pl, rel, ab, inside = poly(tab.rows, spec.n, spec.k, xs, index(tab, x), spec.kp)
    if spec.symmetry == "odd":
        neg = np.signbit(x)
        ph, pl = np.where(neg, -ph, ph), np.where(neg, -pl, pl)
    a = np.abs(x)
    inside &= (a < spec.hi_bound) & (a >= spec.lo_bound) & (a > 0)
    if tab.neg and spec.neg_hi_bound < np.inf:
        inside &= ~((x < 0) & (a >= spec.neg_hi_bound))
    return ph, pl, rel, ab, inside


def evaluate(tab: Table, x: np.ndarray) -> tuple:
    """(h, lo, rel, abs, inside) over a flat float64 array."""
    return over_chunks(lambda a: evaluate_chunk(tab, a[0]), [x])


def over_chunks(kernel, args: list) -> tuple:
    """A chunk kernel (float64 argument arrays of at most CHUNK elements ->
    (h, lo, rel, abs, inside)) over whole arrays."""
    cols = [np.asarray(a, dtype=np.float64).reshape(-1) for a in np.broadcast_arrays(*args)]
    n = len(cols[0])
    outs = [np.empty(n) for _ in range(4)] + [np.zeros(n, dtype=bool)]
    with np.errstate(all="ignore"):
        for a in range(0, n, CHUNK):
            c = slice(a, a + CHUNK)
            for o, v in zip(outs, kernel([col[c] for col in cols])):
                o[c] = v
    return tuple(outs)
