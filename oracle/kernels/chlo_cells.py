"""chlo_compiled.py's loops (numba): erf and erfc from their own cells,
the cells of chlo_dd's tables (lgamma, digamma, i1e, polygamma, erf_inv)
in float64 Horner.  What each computes and why its bound holds is
chlo_compiled.py's docstring; here is only the code numba compiles.

At module level, taking every constant as an argument, so that numba's
cache (keyed on this file and the function's own code) serves every
process after the first on a machine (oracle/kernels/__init__.py)."""
from __future__ import annotations

import math

import numpy as np

from . import jit, jit_inline, to_bits


@jit_inline
def horner(t, j, h):
    s = t[11][j]
    s = s * h + t[10][j]
    s = s * h + t[9][j]
    s = s * h + t[8][j]
    s = s * h + t[7][j]
    s = s * h + t[6][j]
    s = s * h + t[5][j]
    s = s * h + t[4][j]
    s = s * h + t[3][j]
    s = s * h + t[2][j]
    s = s * h + t[1][j]
    return s * h + t[0][j]


@jit_inline
def exp_negative(y, e):
    """e^y for -757 < y <= -1/4 (`_exp_table`'s reduction)."""
    table, hi, lo, scale, pow2 = e
    k = (y * scale + 6755399441055744.0) - 6755399441055744.0   # round to nearest: 1.5·2^52
    r = (y - k * hi) - k * lo
    p = r * (1.0 + r * (0.5 + r * (1 / 6 + r * (1 / 24 + r * (1 / 120)))))
    ki = np.int64(k)
    t = table[ki & 127]
    return (t + t * p) * pow2[(ki >> 7) + 1100]


@jit_inline
def erf_abs(a, t, cen, clamp, scale):
    """erf(min(a, clamp)) for one finite a >= 0 (clamp 5.999, scale 16:
    chlo_compiled's cells)."""
    a = min(a, clamp)
    j = np.uint32(a * scale)
    return horner(t, j, a - cen[j])


@jit
def erf_loop(x, out, t, cen, clamp, scale):
    for i in range(x.size):
        v = x[i]
        s = erf_abs(abs(v), t, cen, clamp, scale)
        out[i] = s if v >= 0 else -s


@jit
def erfc_loop(x, out, t, cen, ct, ccen, e, clamp, scale, cx_from, cx_scale, zero):
    """erfc: 1 ∓ erf below cx_from (1/2), e^(-x²)·erfcx from cells of
    1/cx_scale up to `zero` (27.5), 0 beyond (chlo_compiled's docstring)."""
    for i in range(x.size):
        v = x[i]
        if v < cx_from:
            s = erf_abs(abs(v), t, cen, clamp, scale)
            out[i] = 1.0 - s if v >= 0 else 1.0 + s
        elif v < zero:
            j = np.uint32((v - cx_from) * cx_scale)
            out[i] = exp_negative(-(v * v), e) * horner(ct, j, v - ccen[j])
        else:
            out[i] = 0.0


# Coefficients a cell_value row holds, highest degree first at column 5 + HORNER - 1: chlo_compiled pads a
# table of fewer with zero high-degree coefficients (0·t + c is c exactly: the same bits as a Horner of n).
# Unrolled: the loop over a run-time n cost a fifth of polygamma's loop (18.1 → 14.1 ms on 2^20 elements)
HORNER = 12


@jit_inline
def cell_value(v, b, rows, key_first, key_shift, odd, base):
    """(value, relative bound) from the cell of v (bits b) in the table
    starting at row `base`; (NaN, inf) where v lies outside that cell."""
    a = abs(v)
    key = np.int64(b >> np.uint64(52))
    idx = base + key_first[key] + np.int64((b & np.uint64(0xFFFFFFFFFFFFF)) >> key_shift[key])
    row = rows[idx]
    t = (a if odd else v) - row[0]
    if not abs(t) <= row[1]:
        return np.nan, np.inf
    q = row[16]
    q = q * t + row[15]
    q = q * t + row[14]
    q = q * t + row[13]
    q = q * t + row[12]
    q = q * t + row[11]
    q = q * t + row[10]
    q = q * t + row[9]
    q = q * t + row[8]
    q = q * t + row[7]
    q = q * t + row[6]
    q = q * t + row[5]
    if row[4] != 0.0:        # vanishing cell: Q·t, one more rounding
        y = q * t
        r = row[2] + 2.0 ** -52 if a >= 2.0 ** -500 else np.inf
    else:
        y = q
        r = row[3] / abs(y) * (1 + 2.0 ** -50) if y != 0.0 else np.inf
    return (-y if odd and v < 0 else y), r


@jit
def cells_loop(x, xb, out, bound, rows, key_first, key_shift, odd, lo_bound, hi_bound, neg_hi_bound, safety):
    """chlo_dd's cells in float64 Horner (chlo_dd.cells.table(name, k=0)): the value and
    its relative bound per element, NaN and +inf outside the cells."""
    for i in range(x.size):
        v = x[i]
        a = abs(v)
        if lo_bound <= a < hi_bound and a > 0 and (v >= 0 or a < neg_hi_bound):
            val, r = cell_value(v, xb[i], rows, key_first, key_shift, odd, 0)
            out[i], bound[i] = val, r * safety
        else:
            out[i], bound[i] = np.nan, np.inf


@jit
def orders_loop(order, x, xb, out, bound, rows, key_first, key_shift, size, orders, safety):
    """polygamma(order, x) from one table per order 1 … `orders`, each
    `size` rows (chlo_dd/polygamma_cells.py's layout), x > 0."""
    for i in range(x.size):
        v = x[i]
        k = order[i]
        if 1.0 <= k <= orders and k == math.floor(k) and v > 0.0:
            val, r = cell_value(v, xb[i], rows, key_first, key_shift, False, (np.int64(k) - 1) * size)
            out[i], bound[i] = val, r * safety
        else:
            out[i], bound[i] = np.nan, np.inf


@jit
def inverse_loop(y, out, bound, rows, kf_y, ks_y, kf_w, ks_w, first_w, safety):
    """erf_inv from chlo_dd/erfinv.py's two tables: erfinv over |y| < 1/2,
    erfinv(1 - w) over w = 1 - |y| above (exact: Sterbenz)."""
    for i in range(y.size):
        a = abs(y[i])
        if not 2.0 ** -1000 < a < 1.0:
            out[i], bound[i] = np.nan, np.inf
            continue
        low = a < 0.5     # one cell_value call on the chosen table: two inlined calls under a random
        # branch measured 5x slower on mixed arguments
        v = a if low else 1.0 - a
        val, r = cell_value(v, to_bits(v), rows, kf_y if low else kf_w, ks_y if low else ks_w, False,
                            0 if low else first_w)
        out[i], bound[i] = (-val if y[i] < 0 else val), r * safety


@jit
def poles_loop(x, xb, out, bound, rows, kf_pos, ks_pos, kf_pole, ks_pole, first, size, poles, lo_bound,
               hi_bound, safety, reciprocal, log_rel):
    """lgamma or digamma over the line: x >= 1/2 from the positive cells,
    below from the table of the nearest pole -m (m = rint(-x) <= poles)
    at r = x + m (exact); in its zero cell (|r| < 2^-6, r != 0) the table
    holds the function less its singular part, which is added here:
    -log|r| for lgamma, -1/r for digamma (`reciprocal`) —
    chlo_compiled.py's docstring, "The poles' zero cells".  (One
    cell_value call on a table chosen without a branch measured slower
    here, 0.62 against 0.55 ms on 2^16 mixed arguments: the choice between
    two key arrays costs numba's reference counting.)"""
    for i in range(x.size):
        v = x[i]
        if v >= 0.5:
            if lo_bound <= v < hi_bound:
                val, r = cell_value(v, xb[i], rows, kf_pos, ks_pos, False, 0)
                out[i], bound[i] = val, r * safety
            else:
                out[i], bound[i] = np.nan, np.inf
            continue
        m = math.floor(-v + 0.5)
        t = v + m
        if not (v > -(poles + 0.5) and m >= 0 and t != 0.0):
            out[i], bound[i] = np.nan, np.inf
            continue
        # t's own bits, sign included (a bitcast: frexp's route cost 10 ns an element here)
        val, r = cell_value(t, to_bits(t), rows, kf_pole, ks_pole, False, first + np.int64(m) * size)
        if abs(t) < 2.0 ** -6:
            # the zero cell: val is H_m(t) or D_m(t), within r·|val| (cell_value: its absolute bound over |val|)
            s = -1.0 / t if reciprocal else -math.log(abs(t))
            err = r * abs(val) + abs(s) * (2.0 ** -53 if reciprocal else log_rel)
            val = val + s
            r = (err + 2.0 ** -53 * abs(val)) / abs(val) if val != 0.0 else np.inf
        out[i], bound[i] = val, r * safety
