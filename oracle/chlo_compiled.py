"""erf and erfc in float64, compiled, to the accuracy an f32, f16 or bf16
result needs: the first stage of those results of chlo.erf and chlo.erfc
(real_functions `narrow`, fast._staged), ahead of scipy's evaluation with
the 2^-40 bound, which then sees only the elements this stage leaves.
erf_inv, lgamma and digamma (down to -10.5, the poles' zero cells
included), polygamma (n <= 4) and i1e
get the same from chlo_dd's f64 tables rebuilt for a float64 Horner
(`cells_stage`, `polygamma`, `erf_inv`, at the end; their bound is
chlo_dd/taylor.py's `_cell_bound` with no coefficient pairs).  Arrays
under MIN_ELEMENTS skip the stages.

Why erf and erfc have tables of their own beside chlo_dd's (which the
other functions here reuse): measured on 2^16 f32 arguments through the
same compiled loop, chlo_dd's erf cells (2,241, a row each with its bound)
took 0.87 ms against these 0.31 ms, and its erfc cells (46,593, binade
cells up to 16, 1.65 s to build) 1.00 ms against 0.71 ms.

Why compiled.  The oracle's f32 tanh row costs numpy's SIMD tanh (about
1.5 ms on 2^20 float64) plus the decisions; scipy.special.erf alone costs
14 ms there, so erf judged as mathematics was twice tanh (issue 32: CHLO as
fast as the spec's transcendentals).  A Taylor table evaluated by a loop
numba compiles (`numba.njit`: LLVM, no Python per element) costs a few ms.

The kernels (each a loop over a flat float64 array, one cell lookup and
one Horner polynomial an element):

* erf on |x| < 6: cells [j/16, (j+1)/16), j = 0 … 95; cell j >= 1 about
  its centre c = (j + 1/2)/16, so h = |x| - c is exact (Sterbenz: |x|/2 <=
  c <= 2|x|) and |h| <= 1/32; cell 0 about 0, h = |x| <= 1/16, where the
  series is odd and its constant term 0, so every error below is
  proportional to h as erf(h) is.  Degree D = 11 in every cell.  |x| >= 6
  is evaluated at 5.999 (cell 95): erf(|x|) - erf(5.999) <= erfc(5.999).
  The sign is the argument's (erf is odd).
* erfc on x < 1/2: 1 - erf(x) (1 + erf(|x|) for x < 0), one rounding on a
  result >= erfc(1/2) > 0.47; on x >= 1/2: e^(-x²)·erfcx(x), erfcx =
  e^(x²)·erfc from cells of width 1/8 on [1/2, 27.5) about their centres
  (|h| <= 1/16, exact by Sterbenz), degree 11; from 27.5 on the result is 0
  (erfc(27.5) < 2^-1090: fast.decide reads a zero of finite nonzero
  arguments as an underflow, which rounds to +0 in these formats).
  x² is exact: the arguments are values of the result's format (precision
  <= 24, so x² has at most 48 bits) — the stage declines wider formats.
* e^y for y = -x² in (-757, -1/4], our own (libm's exp is a call per
  element the loop cannot vectorise, 3× the rest of erfc here):
  k = round(y·128/ln2) (adding and taking away 1.5·2^52), r = (y - k·c_hi) - k·c_lo with c_hi ln2/128's
  32-bit head (k·c_hi exact: |k| < 2^18; y - k·c_hi exact by Sterbenz,
  |r| <= ln2/256 + 2^-40) and c_lo its tail (k·c_lo's rounding, and c_lo's,
  below 2^-74 of r's scale); e^r - 1 = p by its Taylor polynomial of
  degree 5 (truncation r^6/720 < 2^-60; its roundings 2^-52·|p| with
  |p| < 0.0028, so 2^-60); e^y = 2^(k>>7)·T(1 + p), T = 2^((k&127)/128)
  rounded (2^-53) and T + T·p rounded once or twice (2^-52): within 2^-51
  of e^y where e^y is normal (2^m from a table, exact), and below 2^-1000
  elsewhere (2^m subnormal or 0 below 2^-1074), which fast.decide does
  not trust (a zero it reads as an underflow: erfc < 2^-990 there).

The coefficients come from each function's differential equation in arb
at 200 bits (chlo_long_double.error_function's, the long double tables'
source), rounded to float64.  The bound (`_erf_table`, `_erfcx_table`) is
proven per cell, in arb, from three parts:

* Horner's rounding with the coefficients' own (Higham, *Accuracy and
  Stability of Numerical Algorithms*, 2nd ed., §5.1: |p̂ - p| <=
  γ_2D·Σ|a_k||h|^k; each stored a_k adds 2^-53·|a_k||h|^k; fused
  multiply-adds only remove roundings), so γ_(2D+1)·Σ|a_k|w^k, w the cell's
  largest |h|;
* the Taylor remainder |f^(D+1)(ξ)|/(D+1)!·w^(D+1), with
  |erf^(n+1)(x)| = (2/√π)·|H_n(x)|·e^(-x²) <= (2/√π)·1.0865·√(2^n·n!)
  (Cramér's inequality for Hermite polynomials, Abramowitz & Stegun
  22.14.17), and for x >= 0, erfcx(x) = (2/√π)∫_0^∞ e^(-t²-2xt) dt, so
  |erfcx^(n)(x)| <= (2/√π)∫_0^∞ (2t)^n e^(-t²) dt = 2^n·Γ((n+1)/2)/√π;
* relative to the cell's least value of the function (erf increasing:
  erf(j/16); cell 0: erf(h)/h >= erf(w)/w, the errors being h times
  theirs; erfcx decreasing: erfcx at the cell's right end).

The largest over the cells, plus erf's clamp (erfc(5.999)/erf(5.9375)) or
erfc's roundings (its subtraction; the product e^(-x²)·erfcx, 2^-53; the
exp, 2^-51), is multiplied by 16 (the house's safety factor, as for the
long double kernels) and handed to fast.decide with the values: about
2^-44 for both functions, against 2^-24 spacing (f32), so roughly one
element in 10^5 goes on to the scipy route.  NaN and infinite arguments
are answered NaN here (never decided: the op's module states them).

The poles' zero cells (lgamma and digamma below 1/2, `poles_loop`).  Near
the pole -m, r = x + m exact, chlo_dd/poles.py's table over |r| < 2^-6
holds the function less its singular part, H_m(r) = lgamma(r - m) + log|r|
or D_m(r) = ψ(r - m) + 1/r, within the cell's absolute bound E.  The loop
adds S = -log|r| (libm's log through numba, trusted to `_LOG_REL` = 2^-40
relative, the bound fast.FAST_REL_ERROR gives numpy's functions) or
S = -1/r (one IEEE division, 2^-53), then rounds the sum once (2^-53):
|error| <= E + |S|·e_S + 2^-53·|H + S| (with E the cell's bound after the
Horner's own, as cell_value states it), handed on relative to |H + S| and
times the safety factor.  Where the two cancel — lgamma's zeros within
1/m! of the pole -m — that relative bound grows and the element is left
to the next stage, never misjudged.  Before this (stop 54) the zero cells,
0.8 % of arguments uniform over (-10, 30), went to scipy's route, a tenth
of lgamma's time there.

numba compiles each kernel once a machine (`cache=True`, about a second;
numba's cache directory, the package's own where it is writable).
"""
from __future__ import annotations

import functools
import math

import numpy as np

_FMT_PRECISION_MAX = 24   # formats whose values square exactly in float64 (module docstring)
# Arrays below this many elements skip the stage: its first use in a process costs 0.2–4 s (the
# tables in arb, numba's loops from its cache), which scipy's route on a small array never pays back;
# the decided values are the same correctly rounded ones either way
MIN_ELEMENTS = 1 << 14
_D = 11                   # degree of every cell's polynomial
_SAFETY = 16.0
_EXP = 2.0 ** -51        # exp_negative's bound, relative (module docstring)
_U = 2.0 ** -53
# libm's log (numba's math.log), relative: the bound fast.FAST_REL_ERROR takes for numpy's functions, 2^13 of
# glibc's documented error (log: under 1 ulp); the poles' zero cells add lgamma's singular part with it
_LOG_REL = 2.0 ** -40

_ERF_CELLS, _ERF_SCALE, _ERF_CLAMP = 96, 16.0, 5.999
_ERFCX_FROM, _ERFCX_SCALE, _ERFCX_CELLS = 0.5, 8.0, 216   # [1/2, 27.5)
_ERFC_ZERO = _ERFCX_FROM + _ERFCX_CELLS / _ERFCX_SCALE     # 27.5: erfc is 0 to float64 from here


def available() -> bool:
    """Whether numba imports here (without it the stage declines and scipy
    decides every element, as before)."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def _gamma(n: int):
    """γ_(2n+1) = (2n+1)u/(1 - (2n+1)u), as an arb (call inside workprec)."""
    from flint import arb
    return arb(2 * n + 1) * _U / (1 - arb(2 * n + 1) * _U)


@functools.cache
def _erf_table():
    """(coefficients [D+1, cells] float64, centres, proven relative bound
    before the safety factor)."""
    from flint import arb
    from .chlo_long_double.error_function import erf_coefficients, workprec
    with workprec(200):
        gamma = _gamma(_D)
        two_over_sqrt_pi = 2 / arb.pi().sqrt()
        n = _D
        deriv = two_over_sqrt_pi * arb("1.0865") * (arb(2) ** n * arb(math.factorial(n))).sqrt()
        rem = deriv / math.factorial(_D + 1)
        cols, centres, worst = [], [], 0.0
        for j in range(_ERF_CELLS):
            c = arb(0) if j == 0 else arb(2 * j + 1) / (2 * _ERF_SCALE)
            w = arb(1) / _ERF_SCALE if j == 0 else arb(1) / (2 * _ERF_SCALE)
            a = erf_coefficients(c, _D)
            if j == 0:   # errors proportional to h: divide by h, against erf(h)/h >= erf(w)/w
                err = gamma * sum(abs(a[k]) * w ** (k - 1) for k in range(1, _D + 1)) + rem * w ** _D
                least = w.erf() / w
            else:
                err = gamma * sum(abs(a[k]) * w ** k for k in range(_D + 1)) + rem * w ** (_D + 1)
                least = (arb(j) / _ERF_SCALE).erf()
            worst = max(worst, float((err / least).upper()))
            cols.append([float(v.mid()) for v in a])
            centres.append(float(c.mid()))
        clamp = arb(_ERF_CLAMP).erfc() / (arb(_ERF_CELLS - 1) / _ERF_SCALE).erf()
        bound = (worst + float(clamp.upper())) * (1 + 2.0 ** -20)
    return np.ascontiguousarray(np.array(cols).T), np.array(centres), bound


@functools.cache
def _erfcx_table():
    """(coefficients [D+1, cells], centres, proven relative bound of erfcx
    on [1/2, 27.5) before the safety factor)."""
    from flint import arb
    from .chlo_long_double.error_function import erfcx_coefficients, workprec
    with workprec(200):
        gamma = _gamma(_D)
        n = _D + 1
        rem = arb(2) ** n * arb((n + 1) / 2).gamma() / arb.pi().sqrt() / math.factorial(n)
        w = arb(1) / (2 * _ERFCX_SCALE)
        cols, centres, worst = [], [], 0.0
        for j in range(_ERFCX_CELLS):
            c = arb(_ERFCX_FROM) + arb(2 * j + 1) / (2 * _ERFCX_SCALE)
            a = erfcx_coefficients(c, _D)
            err = gamma * sum(abs(a[k]) * w ** k for k in range(_D + 1)) + rem * w ** (_D + 1)
            right = c + w
            least = right.erfc() * (right * right).exp()
            worst = max(worst, float((err / least).upper()))
            cols.append([float(v.mid()) for v in a])
            centres.append(float(c.mid()))
    return np.ascontiguousarray(np.array(cols).T), np.array(centres), worst * (1 + 2.0 ** -20)


@functools.cache
def _exp_table():
    """(2^(j/128) for j < 128, ln2/128's 32-bit head, its tail, 128/ln2,
    2^m for m = -1100 … 0), each rounded to float64 from arb (module
    docstring: e^y; 2^m exact down to 2^-1074, 0 below)."""
    from flint import arb
    from .chlo_long_double.error_function import head, ld_to_arb, workprec
    with workprec(200):
        c = arb.const_log2() / 128
        hi = head(c, 32)
        return (np.array([float((arb(2) ** (arb(j) / 128)).mid()) for j in range(128)]), float(hi),
                float((c - ld_to_arb(hi)).mid()), float((1 / c).mid()),
                np.ldexp(1.0, np.arange(-1100, 1)))


@functools.cache
def _kernels():
    """The compiled loops (oracle/kernels/chlo_cells.py: numba, its flags
    and its cache), imported on first use.  A table is passed as a tuple of
    its D + 1 rows (one float64 array each, indexed by cell) and Horner's
    steps are spelt out: measured 3× faster than a 2-D table read in a loop."""
    from .kernels import chlo_cells
    return chlo_cells


def erf_bound() -> float:
    return _erf_table()[2] * _SAFETY


def erfc_bound() -> float:
    """Below 1/2: erf's error (at most erf(1/2) < 0.53 of it against a
    result > 0.47, so at most 1.13 times erf's relative bound) plus the
    subtraction's rounding; from 1/2: erfcx's, the exp's and the product's."""
    low = 1.13 * _erf_table()[2] + _U
    high = _erfcx_table()[2] + _EXP + _U
    return max(low, high) * (1 + 2.0 ** -20) * _SAFETY


def serves(cols: list, fmt) -> bool:
    """Whether the stage takes these arguments: a format whose values
    square exactly (precision <= 24), numba here, and an array of at least
    MIN_ELEMENTS."""
    return (fmt.precision <= _FMT_PRECISION_MAX and np.broadcast(*cols).size >= MIN_ELEMENTS and available())


def _stage(cols: list, fmt, loop, tables, bound):
    [x] = cols
    x = np.asarray(x, dtype=np.float64)
    flat = np.ascontiguousarray(x.reshape(-1))
    ok = np.isfinite(flat)
    arg = flat if ok.all() else np.where(ok, flat, 0.0)
    out = np.empty_like(arg)
    loop(arg, out, *tables)
    if not ok.all():
        out[~ok] = np.nan
    return out.reshape(x.shape), bound()


def erf(cols: list, fmt):
    """(erf values, bound) for real_functions' `narrow` hook, or None
    where the stage does not serve them (`serves`)."""
    if not serves(cols, fmt):
        return None
    tab, cen, _ = _erf_table()
    return _stage(cols, fmt, _kernels().erf_loop, (tuple(tab), cen, _ERF_CLAMP, _ERF_SCALE), erf_bound)


def erfc(cols: list, fmt):
    """(erfc values, bound) for the `narrow` hook, or None (as `erf`)."""
    if not serves(cols, fmt):
        return None
    tab, cen, _ = _erf_table()
    ctab, ccen, _ = _erfcx_table()
    return _stage(cols, fmt, _kernels().erfc_loop, (tuple(tab), cen, tuple(ctab), ccen, _exp_table(), _ERF_CLAMP,
                                                    _ERF_SCALE, _ERFCX_FROM, _ERFCX_SCALE, _ERFC_ZERO), erfc_bound)


# --------------------------------------------------------------------------
# lgamma, digamma (x > 0) and i1e: chlo_dd's cells in float64 alone
# --------------------------------------------------------------------------

# chlo_dd/cells.py's SPECS with no coefficient pairs (k = 0): the same cells,
# coefficients and truncation, evaluated by float64 Horner only
CELL_FUNCTIONS = ("lgamma", "digamma", "i1e")
POLE_FUNCTIONS = ("lgamma", "digamma")   # also below 1/2, by chlo_dd/poles.py's tables (`_poles_stage`)


_PADDED: dict = {}   # id(table rows) -> (those rows, kept alive so the id stays theirs; the padded copy)


def _horner_rows(rows: np.ndarray) -> np.ndarray:
    """A chlo_dd table's rows (five columns of cell data, then its n
    coefficients, lowest degree first) with zero coefficients appended up
    to the kernels' HORNER (kernels/chlo_cells.py, whose Horner is
    unrolled to that many): each leading 0·t + c is c exactly, so the
    values are those of a Horner of n, bit for bit.  Copied once a table."""
    got = _PADDED.get(id(rows))
    if got is None or got[0] is not rows:
        horner = _kernels().HORNER
        n = rows.shape[1] - 5
        if n > horner:
            raise AssertionError(f"a table of {n} coefficients; the compiled Horner takes {horner}")
        got = _PADDED[id(rows)] = (rows, np.ascontiguousarray(np.pad(rows, ((0, 0), (0, horner - n)))))
    return got[1]


def _poles_stage(name: str, cols: list) -> tuple:
    """(values, bounds) of lgamma or digamma from the positive cells and the
    poles' tables (`poles_loop`): down to -10.5, the poles' zero cells
    with their singular parts added; NaN at the poles and outside (scipy's
    route decides those)."""
    from .chlo_dd import poles
    pos, tabs, rows, first, size = poles.tables(name, k=0)
    pole0 = tabs[0]
    [x] = cols
    x = np.asarray(x, dtype=np.float64)
    flat = np.ascontiguousarray(x.reshape(-1))
    out, bound = np.empty_like(flat), np.empty_like(flat)
    _kernels().poles_loop(flat, flat.view(np.uint64), out, bound, _horner_rows(rows), pos.key_first, pos.key_shift,
                          pole0.key_first, pole0.key_shift, first, size, float(poles.P),
                          pos.spec.lo_bound, pos.spec.hi_bound, _SAFETY, name == "digamma", _LOG_REL)
    return out.reshape(x.shape), bound.reshape(x.shape)


def cells_stage(name: str):
    """The `narrow` hook of a function of CELL_FUNCTIONS: (values, relative
    bound per element) — NaN and +inf outside the cells (negative lgamma
    and digamma arguments, |x| past the last binade), which scipy's route
    then decides — or None where the stage does not serve them (`serves`)."""
    def stage(cols: list, fmt):
        if not serves(cols, fmt):
            return None
        if name in POLE_FUNCTIONS:
            return _poles_stage(name, cols)
        from .chlo_dd import cells
        tab = cells.table(name, k=0)
        spec = tab.spec
        if spec.symmetry not in ("odd", "none"):
            raise AssertionError(f"{name}: an even function's sign rule is not written here")
        [x] = cols
        x = np.asarray(x, dtype=np.float64)
        flat = np.ascontiguousarray(x.reshape(-1))
        out, bound = np.empty_like(flat), np.empty_like(flat)
        _kernels().cells_loop(flat, flat.view(np.uint64), out, bound, _horner_rows(tab.rows), tab.key_first,
                              tab.key_shift, spec.symmetry == "odd", spec.lo_bound, spec.hi_bound, spec.neg_hi_bound,
                              _SAFETY)
        return out.reshape(x.shape), bound.reshape(x.shape)
    stage.__name__ = f"{name}_cells"
    return stage


def polygamma(cols: list, fmt):
    """The `narrow` hook of polygamma: ψ⁽ⁿ⁾(x) for integer 1 <= n <= 4 and
    x in chlo_dd's cells (2^-7 <= x < 2^10) with a bound per element, NaN
    elsewhere (the next stage's), or None where the stage does not serve
    them (`serves`)."""
    if not serves(cols, fmt):
        return None
    from .chlo_dd import polygamma_cells
    first, rows, size = polygamma_cells.tables(k=0)
    order, x = (np.ascontiguousarray(np.asarray(c, dtype=np.float64).reshape(-1)) for c in np.broadcast_arrays(*cols))
    shape = np.broadcast(*cols).shape
    out, bound = np.empty_like(x), np.empty_like(x)
    _kernels().orders_loop(order, x, x.view(np.uint64), out, bound, _horner_rows(rows), first.key_first,
                           first.key_shift, size, float(polygamma_cells.NMAX), _SAFETY)
    return out.reshape(shape), bound.reshape(shape)


def erf_inv(cols: list, fmt):
    """The `narrow` hook of erf_inv: erfinv(y) for 0 < |y| < 1 (but
    |y| = 1/2) with a bound per element, NaN elsewhere, or None where the
    stage does not serve them (`serves`)."""
    if not serves(cols, fmt):
        return None
    from .chlo_dd import erfinv
    ty, tw, rows, first_w = erfinv.tables(k=0)
    [y] = cols
    y = np.asarray(y, dtype=np.float64)
    flat = np.ascontiguousarray(y.reshape(-1))
    out, bound = np.empty_like(flat), np.empty_like(flat)
    _kernels().inverse_loop(flat, out, bound, _horner_rows(rows), ty.key_first, ty.key_shift, tw.key_first,
                            tw.key_shift, first_w, _SAFETY)
    return out.reshape(y.shape), bound.reshape(y.shape)
