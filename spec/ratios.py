"""What LAPACK's test ratios share, for spec/lapack.py and the modules of
properties it gathers (spec/schur.py, hessenberg.py, tridiagonal.py): a
matrix's non-finite elements set aside, ‖I − XᴴX‖₁ with its rounding, the
verdict of several ratios per matrix (the largest decides), the Frobenius
norm, and the distance of an operand computed upstream (`operand_slack`)."""
from __future__ import annotations

import numpy as np

from .dsl import Measured
from .ops.cholesky import ct, gamma, one_norm


def zero_nonfinite(x) -> tuple[np.ndarray, np.ndarray]:
    """(x with non-finite entries zeroed, per-matrix all-finite)."""
    fin = np.isfinite(x)
    return np.where(fin, x, 0), fin.all(axis=(-2, -1))


def gram_residual(x, uw):
    """(‖I − XᴴX‖₁, its rounding bound) per matrix of a batch (…, r, c)."""
    c = x.shape[-1]
    g = ct(x) @ x - np.eye(c)
    return one_norm(g), gamma(x.shape[-2] + 2, uw) * one_norm(np.abs(ct(x)) @ np.abs(x) + np.eye(c))


def ratio_verdict(parts: list, thr: float, finite, structure, what: str, scored=None, extra: str = "") -> Measured:
    """`parts`: (name, value, lo, hi) per-matrix arrays; the largest decides."""
    value = np.maximum.reduce([np.asarray(p[1], dtype=np.float64) for p in parts])
    lo = np.maximum.reduce([np.asarray(p[2], dtype=np.float64) for p in parts])
    hi = np.maximum.reduce([np.asarray(p[3], dtype=np.float64) for p in parts])
    value, lo, hi = (np.where(finite, v, np.inf) for v in (value, lo, hi))
    ok = finite & structure & (lo <= thr)
    if value.size == 0:
        return Measured(0.0, thr, True, "no element", scored)
    worst = np.unravel_index(int(np.argmax(np.where(ok, value, np.inf))), value.shape)
    at = f" at batch index {list(map(int, worst))}" if value.ndim else ""
    detail = "; ".join(f"{name} = {float(np.asarray(v)[worst]):.3g}" for name, v, _, _ in parts)
    detail = f"{detail}{at} (enclosure from {float(lo[worst]):.3g}; threshold {thr:g})"
    if not np.all(finite):
        detail += f"; NaN or inf in {int(np.sum(~np.asarray(finite)))} {what}"
    if not np.all(structure):
        detail += f"; {extra} ({int(np.sum(~np.asarray(structure)))} {what})"
    return Measured(float(np.max(value)), thr, bool(np.all(ok)), detail, scored, float(np.max(lo)), float(np.max(hi)))


def frobenius(m: np.ndarray) -> np.ndarray:
    """‖M‖_F of each matrix of a batch (…, r, c) -> (…)."""
    return np.sqrt((np.abs(m) ** 2).sum(axis=(-2, -1)))


def operand_slack(attrs: dict, count: int) -> np.ndarray:
    """‖Â − A‖₁ per matrix where the operand was computed upstream (oracle/chains.py
    `matrix_slack`; spec/lapack.py passes it in as `slack`), rounded up; zeros otherwise."""
    sl = attrs.get("slack")
    if not sl:
        return np.zeros(count)
    return np.nextafter(np.asarray(sl, dtype=np.float64).reshape(count) * (1 + 2.0 ** -40), np.inf)
