"""The Hurwitz zeta ζ(s, q) in double-word arithmetic (dd.py, ddpow.py),
for 1 < s <= 16 and 2^-20 <= q <= 2^40: the first pass of f64 chlo.zeta
(chlo_dd.lead → `decided`, ahead of the long double pass, which then sees
only what this leaves: about 1 element in 10^5, and the other regions),
and zeta's REFINE kernel (`pair`).

Euler–Maclaurin (DLMF 2.10.1 with f(t) = (z + t)^-s on [0, ∞); DLMF 25.11
for ζ), z = q + N >= Z(s), N = ⌈Z(s) - q⌉ or 0:

    ζ(s, q) = Σ_{k<N} (q + k)^-s + z^-s·V + R,
    V = z/(s-1) + 1/2 + Σ_{j=1..J} t_j,   t_j = γ_j·(s)_(2j-1)·z^(1-2j),

γ_j = B_2j/(2j)!, (s)_n the rising factorial.  DLMF 2.10.1's remainder
R = ∫ (B_2m - B̃_2m(t))/(2m)!·f^(2m)(t) dt, m = J + 1, with |B_2m -
B̃_2m(t)| <= 2|B_2m| (DLMF 24.9.1) and f^(2m) > 0, is at most 2|γ_m|·
(s)_(2m-1)·z^(-s-2m+1); ζ(s, z) >= ∫_0^∞ f = z^(1-s)/(s-1), so relative
to ζ(s, q) it is at most 2ρ_m, ρ_j(s, z) = (s-1)·|γ_j|·(s)_(2j-1)·z^-2j
— also |t_j| relative to z/(s-1).  Every ρ_j grows with s and falls with
z, so on a cell s in (s_lo, s_hi] with one Z the worst case is (s_hi, Z):
the cells are quarters of s, each with the least Z (a quarter) whose
remainder and float64 errors pass the checks below, and every bound is
computed per cell in exact rationals when the table is built (`cells`),
at z = Z - 2^-40 (N's float64 ceil can land that far below Z).

Error (OP = 16u², u = 2^-53: one double-word operation, dd.py; powers
within P(s) = ddpow.rel_bound(s) = s·2^-81 + 2^-81 + 2^-94):
* t_1 = s·w·(1/12), w = 1/z: 3 OP (1/12 as the nearest pair: u²);
  t_(j+1) = t_j·β_j·(s+2j-1)(s+2j)·w², β_j = γ_(j+1)/γ_j, in pairs for
  j < JD (two exact TwoSums, w² within 3 OP, four products: 7.1 OP a
  step), then in float64 from t_JD's head (u), 8.1u a step (seven
  roundings and w²'s head), summed in float64 ((J - JD - 1)u of Σ|t_j|).
  Where the float64 terms underflow (z near 2^40) their errors are
  below 2^-1074, nothing beside V >= z/(s-1).
* S = Σ t_j from the float64 sum up, one add (OP) per pair term, each
  of a partial sum below Σ|t_j|; V = z/(s-1) (1 OP) + (1/2 + S): two adds
  of sums below 2·z/(s-1).  ε_V = 4.1 OP + Σ_j ρ_j·ε_j + (JD + 1)·OP·Σρ_j
  relative to z/(s-1) <= V·(1 + 2^-79).
* z^-s·V: P(s) + ε_V + 1 OP.  The N direct terms (q + k exact as a pair)
  within P(s) each; N + 1 additions of positive terms: (N + 1)·OP.
Total per cell: P(s_hi) + ε_V + (N_max + 2)·OP + 2ρ_(J+1)·1.001, whose
largest, ANALYSED = 2^-76.5, is checked; BOUND = 2^-72.5 is sixteen times
it.  The domain keeps every value and intermediate normal and far from
binary64's limits: bases in [2^-20, 2^41], |s·log b| <= 16·41·ln 2, ζ
between 2^-604 and 2^321; the pair terms t_j (j <= JD) above 2^-400,
their products above 2^-969 (Dekker's product exact).

Two plans (`Plan`).  Nothing above fixes J, JD or the cells' thresholds:
`_cell_error` computes the total for any of them and `cells(plan)` checks
every cell of a plan in exact rationals before its table is used (the
constants 3.1, 7.1, 8.1 and 4.1 OP/u are per operation, not per plan;
z/(s-1) <= V·(1 + 2ρ_(J+1)) is inside the 1.001 factors for both plans).
* PRECISE: J = 30, JD = 5, 2ρ_(J+1) <= 2^-82, float64 part <= 2^-80,
  ANALYSED = 2^-76.5, BOUND = 2^-72.5 — the kernel as it always was
  (`pair`, zeta's REFINE kernel; Z from 9.25 at s <= 1.25 to 22.75 at
  s <= 16).
* FAST: J = 24, JD = 3, 2ρ_(J+1) <= 2^-69, float64 part <= 2^-67,
  analysed 2^-66.5 (every cell's total <= 2^-67.3), bound 2^-62.5.  The
  truncation falls like (2πz)^-2J at its best, so a bound 2^13 looser
  moves Z down by only 1.5 to 5 (7.75 … 17.75): on the bench's ranges
  2.1 direct terms an element against 2.8, and six Bernoulli terms and
  two pair steps fewer.  Its decisions leave the elements within about
  2^-62.5 of a rounding boundary: 1 in 500 (measured 0.19% on the
  bench's ranges and on the whole domain).
`decided` (chlo_dd.DECIDED["zeta"]) runs FAST on every element, decides
by ddfast.decide at FAST.bound, then PRECISE on the elements left, all at
once, at BOUND: what the pass decided before, on every element — each
decision is the correctly rounded value either way, so the oracle's
results do not change (held bit for bit against the precise plan alone in
tests/oracle/test_chlo_dd_zeta.py).  bench/chlo_vs_tanh.py f64: 9.8-9.9
times tanh before, 7.9-8.1 after (runs alternated, load 3 on 2 cores).  Why not
faster: each power is a double-word exp(-s·log b) (ddpow.py, about 210 float64
operations on whole arrays, 80 ns an element), every element needs N + 1
of them and a bracket of J terms, and the Euler–Maclaurin tail needs
z >= 7.5 for any bound below 2^-64 (ρ_J at its best is about e^(-2πz)).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .. import ddfast
from . import ddpow, zeta_compiled
from .dd import OP, add, div, mul, mul_fp, two_sum
from .series import bernoulli

S_MAX = 16.0
Q_LO, Q_HI = 2.0 ** -20, 2.0 ** 40
CELLS = 4                # cells of s per unit
_Z_FLOOR = 4.0
_U = Fraction(1, 2 ** 53)
_OP = Fraction(OP)
_SUB = 8192                          # elements at once: the temporaries stay in cache (measured: 4096 and 16384 slower)


@dataclass(frozen=True)
class Plan:
    """One set of Euler–Maclaurin parameters and the bounds its cells are
    built to (module docstring): j Bernoulli terms, t_1 … t_jd in pairs,
    2ρ_(j+1) <= trunc and the float64 terms' part <= f64 (relative to
    z/(s-1)) on every cell, every cell's total <= analysed; decisions are
    made at bound = 16·analysed."""
    j: int
    jd: int
    trunc: float
    f64: float
    analysed: float
    bound: float


PRECISE = Plan(j=30, jd=5, trunc=2.0 ** -82, f64=2.0 ** -80, analysed=2.0 ** -76.5, bound=2.0 ** -72.5)
FAST = Plan(j=24, jd=3, trunc=2.0 ** -69, f64=2.0 ** -67, analysed=2.0 ** -66.5, bound=2.0 ** -62.5)
J, JD = PRECISE.j, PRECISE.jd          # the precise plan's, as before
ANALYSED, BOUND = PRECISE.analysed, PRECISE.bound


@functools.cache
def _gammas() -> list:
    """γ_j = B_2j/(2j)! for j = 0 … J + 1 (the largest plan's), exact."""
    b = bernoulli(2 * J + 2)
    return [b[2 * j] / math.factorial(2 * j) for j in range(J + 2)]


def _rhos(s: Fraction, z: Fraction, terms: int = J) -> list:
    """ρ_j(s, z) for j = 0 … terms + 1 (index 0 unused), exact."""
    g = _gammas()
    out, rising = [Fraction(0)], s                      # (s)_(2j-1), j = 1
    for j in range(1, terms + 2):
        out.append((s - 1) * abs(g[j]) * rising / z ** (2 * j))
        rising *= (s + 2 * j - 1) * (s + 2 * j)
    return out


def _cell_error(s_hi: Fraction, z: Fraction, n_max: int, plan: Plan = PRECISE) -> tuple:
    """(total relative error bound, 2ρ_(J+1), float64 terms' part) on a
    cell (module docstring), exact."""
    jj, jd = plan.j, plan.jd
    rho = _rhos(s_hi, z, jj)
    eps = [Fraction(0)] * (jj + 1)
    eps[1] = Fraction(31, 10) * _OP
    for j in range(2, jd + 1):
        eps[j] = eps[j - 1] + Fraction(71, 10) * _OP
    f64 = Fraction(0)
    for j in range(jd + 1, jj + 1):
        e = eps[jd] + _U + Fraction(81, 10) * (j - jd) * _U + (jj - jd - 1) * _U
        f64 += rho[j] * e
    pairs = sum(rho[j] * eps[j] for j in range(1, jd + 1))
    total_rho = sum(rho[1:jj + 1])
    eps_v = (Fraction(41, 10) * _OP + pairs + f64 + (jd + 1) * _OP * total_rho) * Fraction(1001, 1000)
    p = s_hi * Fraction(ddpow.LOG_ABS) + Fraction(ddpow.EXP_REL) + Fraction(1, 2 ** 94)
    trunc = 2 * rho[jj + 1]
    total = p + eps_v + (n_max + 2) * _OP + trunc * Fraction(1001, 1000)
    return total, trunc, f64


def _least_z(s_hi: float, plan: Plan = PRECISE) -> float:
    """The least quarter Z >= _Z_FLOOR whose truncation and float64 part
    pass at (s_hi, Z), searched in floats (then checked exactly)."""
    jj, jd = plan.j, plan.jd
    g = [abs(float(v)) for v in _gammas()]
    z = _Z_FLOOR
    while True:
        rising, rho = s_hi, [0.0]
        for j in range(1, jj + 2):
            rho.append((s_hi - 1) * g[j] * rising / z ** (2 * j))
            rising *= (s_hi + 2 * j - 1) * (s_hi + 2 * j)
        f64 = sum(rho[j] * (10 + 9.2 * (j - jd) + jj) * 2.0 ** -53 for j in range(jd + 1, jj + 1))
        if 2 * rho[jj + 1] <= 0.9 * plan.trunc and f64 <= 0.9 * plan.f64:
            return z
        z += 0.25


@functools.cache
def cells(plan: Plan = PRECISE) -> tuple:
    """(Z per cell, β_j pairs for j < jd, β_j floats, 1/12 as a pair),
    after each cell's checks in exact rationals (module docstring)."""
    if plan.bound != 16 * plan.analysed or plan.j > J or not 1 <= plan.jd < plan.j:
        raise AssertionError(f"zeta: plan {plan}")
    zs = []
    for i in range(int((S_MAX - 1) * CELLS)):
        s_hi = Fraction(CELLS + i + 1, CELLS)
        z = _least_z(float(s_hi), plan)
        zlow = Fraction(z) - Fraction(1, 2 ** 40)
        total, trunc, f64 = _cell_error(s_hi, zlow, math.ceil(z) + 1, plan)
        if trunc > Fraction(plan.trunc) or f64 > Fraction(plan.f64) or total > Fraction(plan.analysed):
            raise AssertionError(f"zeta: cell s <= {float(s_hi)}, Z = {z}: bound {float(total)}")
        zs.append(z)
    g = _gammas()
    beta = [g[j + 1] / g[j] if j else Fraction(0) for j in range(J + 1)]
    pair = lambda x: (float(x), float(x - Fraction(float(x))))
    bh = np.array([pair(b)[0] for b in beta])
    bl = np.array([pair(b)[1] for b in beta])
    return np.array(zs), bh, bl, np.array([float(b) for b in beta]), pair(g[1])


def cell_bounds(plan: Plan = PRECISE) -> list:
    """Each cell's (s_hi, Z, total bound) as floats: for tests and reports."""
    zs = cells(plan)[0]
    out = []
    for i, z in enumerate(zs.tolist()):
        s_hi = Fraction(CELLS + i + 1, CELLS)
        total = _cell_error(s_hi, Fraction(z) - Fraction(1, 2 ** 40), math.ceil(z) + 1, plan)[0]
        out.append((float(s_hi), z, float(total)))
    return out


def _bracket(s, zh, zl, plan: Plan = PRECISE):
    """V = z/(s-1) + 1/2 + Σ_j t_j as a pair (module docstring)."""
    _, bh, bl, bf, g1 = cells(plan)
    one = np.ones_like(s)
    d1h, d1l = div(zh, zl, s - 1, 0.0)                   # s - 1 exact
    wh, wl = div(one, 0.0, zh, zl)
    w2h, w2l = mul(wh, wl, wh, wl)
    th, tl = mul_fp(wh, wl, s)
    th, tl = mul(th, tl, g1[0], g1[1])                   # t_1 = s·w/12
    terms = [(th, tl)]
    for j in range(1, plan.jd):
        ah, al = two_sum(s, 2.0 * j - 1)
        ch, cl = two_sum(s, 2.0 * j)
        fh, fl = mul(ah, al, ch, cl)
        fh, fl = mul(fh, fl, w2h, w2l)
        fh, fl = mul(fh, fl, bh[j], bl[j])
        th, tl = mul(th, tl, fh, fl)
        terms.append((th, tl))
    tf = th.copy()
    acc = np.zeros_like(s)
    for j in range(plan.jd, plan.j):
        tf *= ((s + (2.0 * j - 1)) * (s + 2.0 * j)) * w2h * bf[j]
        acc += tf
    sh, sl = acc, np.zeros_like(s)
    for th, tl in reversed(terms):
        sh, sl = add(th, tl, sh, sl)
    sh, sl = add(0.5, 0.0, sh, sl)
    return add(d1h, d1l, sh, sl)


def _powers(bh, bl, s):
    """ddpow.pow_neg over a flat array, _SUB elements at a time."""
    ph, pl = np.empty_like(bh), np.empty_like(bh)
    for a in range(0, len(bh), _SUB):
        c = slice(a, a + _SUB)
        ph[c], pl[c] = ddpow.pow_neg(bh[c], bl[c], s[c])
    return ph, pl


def _zeta(s, q, plan: Plan = PRECISE):
    """ζ(s, q) as a pair inside the domain.  The elements are sorted by
    their number N of direct terms, so that term k's elements are a prefix
    (m_k of them); every power — the direct terms k-major, then the
    tails' z^-s — is computed in one flat array, and the direct terms are
    added to the tail z^-s·V, as pairs (TwoSum of the heads, the low parts
    and the TwoSum errors summed in float64: positive terms, so within
    4(N + 1)u² of the sum, far below one OP)."""
    zs = cells(plan)[0]
    cell = (np.ceil((s - 1) * CELLS) - 1).astype(np.int64)      # (s - 1)·4 exact
    zc = zs[cell]
    n = np.where(q < zc, np.ceil(zc - q), 0.0)
    order = np.argsort(-n.astype(np.int16), kind="stable")
    s, q, n = s[order], q[order], n[order]
    counts = np.bincount(n.astype(np.int64))
    m = len(s) - np.cumsum(counts)[:-1]                # m[k]: the elements with n > k
    zh, zl = two_sum(q, n)                             # exact
    base_h = np.concatenate([q[:mk] for mk in m] + [zh])
    base_l = np.concatenate([np.zeros(mk) for mk in m] + [zl])
    ks = np.concatenate([np.full(mk, float(k)) for k, mk in enumerate(m)] + [np.zeros(len(s))])
    se = np.concatenate([s[:mk] for mk in m] + [s])
    direct = len(base_h) - len(s)
    bh, e = two_sum(base_h[:direct], ks[:direct])      # q + k exact
    base_h[:direct], base_l[:direct] = bh, e
    ph, pl = _powers(base_h, base_l, se)
    acc_h, acc_l = np.empty_like(s), np.empty_like(s)
    for a in range(0, len(s), _SUB):
        c = slice(a, a + _SUB)
        vh, vl = _bracket(s[c], zh[c], zl[c], plan)
        acc_h[c], acc_l[c] = mul(ph[direct:][c], pl[direct:][c], vh, vl)
    at = 0
    for mk in m:
        th, tl = ph[at:at + mk], pl[at:at + mk]
        h, err = two_sum(acc_h[:mk], th)
        acc_h[:mk] = h
        acc_l[:mk] += err + tl
        at += mk
    back = np.empty_like(order)
    back[order] = np.arange(len(order))
    return acc_h[back], acc_l[back]


def _values(s, q, plan: Plan) -> tuple:
    """_zeta's pair, from the compiled loop where it serves (the same bits:
    zeta_compiled.py), else _zeta."""
    if zeta_compiled.serves(len(s)):
        return zeta_compiled.values(s, q, plan, cells(plan), CELLS)
    return _zeta(s, q, plan)


def _columns(args: list) -> tuple:
    """(s, q, domain mask) as flat float64 arrays."""
    s, q = (np.asarray(a, dtype=np.float64).reshape(-1) for a in np.broadcast_arrays(*args))
    return s, q, (s > 1) & (s <= S_MAX) & (q >= Q_LO) & (q <= Q_HI)


def _pair(args: list, plan: Plan) -> tuple:
    s, q, inside = _columns(args)
    h, lo = np.zeros_like(s), np.zeros_like(s)
    i = np.flatnonzero(inside)
    if len(i):
        with np.errstate(all="ignore"):
            h[i], lo[i] = _values(s[i], q[i], plan)
    return h, lo, plan.bound, inside


def pair(args: list) -> tuple:
    """(h, lo, BOUND, domain mask) for zeta(s, q): h + lo within BOUND
    relative of ζ(s, q) where the mask holds (module docstring)."""
    return _pair(args, PRECISE)


def pair_fast(args: list) -> tuple:
    """(h, lo, FAST.bound, domain mask): the fast plan's pair (module
    docstring), h + lo within FAST.bound relative of ζ(s, q)."""
    return _pair(args, FAST)


def decided(cols: list) -> tuple:
    """(decided mask, binary64 values) of f64 zeta on whole argument arrays
    (chlo_dd.DECIDED): the fast plan _SUB elements at a time, decided by
    ddfast.decide at FAST.bound; the elements it leaves (those within
    about 2^-62.5 of a rounding boundary, 1 in 500 or so) all at once by
    the precise plan at BOUND — what the pass was before, on every element.
    The rest (outside the domain, or still undecided) is for fast.py's
    route.  Each decided value is the correctly rounded one (the bounds are
    proven: module docstring), so the oracle's results are those of the
    precise plan alone."""
    s, q, inside = _columns(cols)
    ok, r = np.zeros(len(s), dtype=bool), np.zeros(len(s))
    i = np.flatnonzero(inside)
    with np.errstate(all="ignore"):
        for a in range(0, len(i), _SUB):
            c = i[a:a + _SUB]
            h, lo = _values(s[c], q[c], FAST)
            ok[c], r[c] = ddfast.decide(h, lo, FAST.bound)
        rest = i[~ok[i]]
        if len(rest):
            h, lo = _values(s[rest], q[rest], PRECISE)
            ok[rest], r[rest] = ddfast.decide(h, lo, PRECISE.bound)
    return ok, r
