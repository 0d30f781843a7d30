"""The orthogonal projection onto a matrix's columns, put together from `qr`:
Q·(Qᵀ·x).

`q, _ = jnp.linalg.qr(a)`, then `q @ (q.T @ x)` (and `x - q @ (q.T @ x)`,
the part of x orthogonal to A's columns) is how a JAX program projects —
Gram–Schmidt steps, subspace iterations, a least-squares fit's fitted
values.  Q alone is free (each column's sign), so "any value" downstream;
the projection is not.

**The range.**  A real m×n A of full column rank (m ≥ n), P_A = A·A⁺ its
columns' orthogonal projector.  The backend's Q̃ (xORGQR of xGEQRF's
outputs, judged as "qr.q") has ‖Q̃ᵀQ̃ − I‖₁ ≤ δ = t_q·m·u, and xGEQRF's
contract read whole (as oracle/chains.py `_qr_lstsq` reads it) gives
Q̃·R̃ = A − E, ‖E‖₁ ≤ t_r·max(m,n)·‖A‖₁·u, so Q̃'s columns span B = A − E
wherever σ_n(A) > ‖E‖₂ (then B has full column rank and R̃ is invertible).
With Q̃ = Q_o·H (polar: Q_o orthonormal, the same span):

* ‖Q̃Q̃ᵀ − P_B‖₂ = ‖Q_o(H² − I)Q_oᵀ‖₂ = ‖Q̃ᵀQ̃ − I‖₂ ≤ δ;
* ‖P_B − P_A‖₂ = ‖P_A^⊥·P_B‖₂ (equal ranks) and P_A^⊥·P_B = P_A^⊥·B·B⁺ =
  −P_A^⊥·E·B⁺, so ‖P_B − P_A‖₂ ≤ ‖E‖₂/σ_n(B) ≤ ‖E‖₂/(σ_n(A) − ‖E‖₂),
  ‖E‖₂ ≤ √n·‖E‖₁ (Weyl for σ_n(B); σ_n(A) from spec/lapack.py `spectrum`,
  less its error);
* the program's rounding: z = fl(Q̃ᵀx) = Q̃ᵀx + f, |f| ≤ γ_m·|Q̃ᵀ|·|x|, and
  fl(Q̃z) = Q̃z + g, |g| ≤ γ_n·|Q̃|·|z|; rows of Q̃ have 2-norms at most
  √(1 + δ) and ‖|Q̃|‖₂ ≤ √n·√(1 + δ), so each element of column j is off by
  at most √(1 + δ)·(√n·√(1 + δ)·γ_m·(1 + γ_n) + γ_n·√(1 + δ))·‖x_j‖₂;
* x within x_c ± r (a value computed upstream): P_A·x moves by at most
  ‖r_j‖₂ per element of column j (‖P_A‖₂ = 1), and ‖x_j‖₂ above is taken
  at ‖x_c,j‖₂ + ‖r_j‖₂.

Every element of column j lies within (δ + ‖E‖₂/(σ_n − ‖E‖₂))·‖x_j‖₂ plus
the rounding above of P_A·x_c, which is computed in float64 from numpy's
QR of A (its own δ₆₄ and E₆₄ measured, the same bound) — tiny beside f32.

Held against mpmath's projector at 50 digits and brute force in
tests/oracle/test_projection.py.  What stays "any value": complex A, Q of
mode 'complete', a matrix computed upstream (`ranged`), A too close to
rank-deficient (σ_n ≤ ‖E‖₂).  (f64 is covered: the float64 center's error
is accounted.)
"""
from __future__ import annotations

import math

import numpy as np

from ..spec.kinds.residual import RESIDUAL
from ..spec.types import parse_type, tensor_from_hex
from .spectral import U64, bounded, gamma, two_in_one_out

WHY = ("Q·(Qᵀ·x) of xORGQR's Q: the orthogonal projection onto A's columns, every one the criteria and xGEQRF's "
       "contract let pass, as a range (oracle/projection.py)")


def combine(inst, inputs: list, outs: list, primary: list) -> list | None:
    """The output where `inst` is Q·(Qᵀ·x), Q in place and the pending Qᵀ·x
    (oracle/chains.py `_qr_lstsq`'s "qr.qtb") of the same A; else None."""
    from .chains import is_matmul
    if not two_in_one_out(inputs, outs) or inst.spec.mnemonic != "dot_general":
        return None
    (o,) = outs
    q, z = inputs
    if not is_matmul(inst, q.type.rank, z.type.rank) or not RESIDUAL.judges(q) or o.type.element_type.is_complex:
        return None
    rec, p = q.residual, z.residual
    if rec.get("property") != "qr.q" or rec.get("view") or rec.get("ranged") or rec.get("conj") \
            or p is None or p.get("pending") != "qr.qtb" or p.get("view") or rec["operands"][0] != p["a"]:
        return None
    et = o.type.element_type
    if not et.is_float or et.format.precision > 53:
        return None
    ta, tb = parse_type(p["a"]["type"]), parse_type(p["b"]["type"])
    a = np.asarray(tensor_from_hex(p["a"]["hex"], ta), dtype=np.float64)
    x = np.asarray(tensor_from_hex(p["b"]["hex"], tb), dtype=np.float64)
    r = np.asarray(p.get("b_r", np.zeros(x.shape)), dtype=np.float64).reshape(x.shape)
    got = projection_range(a, ta, float(p["t_q"]), x, r)
    if got is None:
        return None
    out = bounded(o, *got, WHY)
    return None if out is None else [out]


def projection_range(a: np.ndarray, ta, t_q: float, x: np.ndarray, r: np.ndarray):
    """(low, high) float64 of every fl(Q̃·fl(Q̃ᵀ·x̃)) (module docstring), or None."""
    from ..spec import lapack
    et = ta.element_type
    m, n = (int(d) for d in ta.shape[-2:])
    if m < n:
        return None
    big = max(m, n)
    u = float(lapack.unit_roundoff(et))
    tiny = (m + n + 2) * 2.0 ** (et.format.emin - et.format.precision + 1)
    batch = tuple(int(d) for d in ta.shape[:-2])
    sig, err = lapack.spectrum(a, et, "svd")
    sig, err = sig.reshape(batch + (n,)), np.asarray(err).reshape(batch)
    t_r = lapack.two_sided(big, et)
    lo, hi = np.empty(x.shape), np.empty(x.shape)
    for idx in np.ndindex(*batch):
        A, X, R = a[idx], x[idx], r[idx]
        delta = t_q * m * u * (1 + 2.0 ** -20)
        e2 = math.sqrt(n) * t_r * big * float(np.abs(A).sum(axis=0).max(initial=0.0)) * u * (1 + 2.0 ** -20)
        smin = float(sig[idx].min(initial=math.inf)) - float(err[idx])
        if delta >= 0.5 or smin <= e2:
            return None
        center, spread = _center(A, X, smin)
        if center is None:
            return None
        xn = np.sqrt((X * X).sum(axis=-2)) + np.sqrt((R * R).sum(axis=-2))   # ‖x̃_j‖₂ at most, per column
        sq = math.sqrt(1 + delta)
        rounding = sq * (math.sqrt(n) * sq * gamma(m, u) * (1 + gamma(n, u)) + gamma(n, u) * sq)
        rad = (delta + e2 / (smin - e2) + rounding) * xn + np.sqrt((R * R).sum(axis=-2)) + spread * xn + tiny
        rad = rad[None, :] * (1 + 2.0 ** -40)
        lo[idx], hi[idx] = center - rad, center + rad
    return np.nextafter(lo, -np.inf), np.nextafter(hi, np.inf)


def _center(A: np.ndarray, X: np.ndarray, smin: float):
    """(P₆₄·x in float64, its distance from P_A·x per unit ‖x_j‖₂): numpy's
    QR of A placed by the module's bound with its δ₆₄ and E₆₄ measured;
    `smin` ≤ σ_n(A), as the caller has it from `spectrum`."""
    m, n = A.shape
    Q, Rq = np.linalg.qr(A)
    d64 = float(np.abs(Q.T @ Q - np.eye(n)).sum(axis=0).max(initial=0.0)) + 2 * gamma(m + 2, U64) * n
    e64 = math.sqrt(n) * (float(np.abs(A - Q @ Rq).sum(axis=0).max(initial=0.0))
                          + 2 * gamma(n + 2, U64) * float((np.abs(Q) @ np.abs(Rq)).sum(axis=0).max(initial=0.0)))
    if d64 >= 0.5 or smin <= e64:
        return None, math.inf
    P = Q @ (Q.T @ X)
    spread = d64 + e64 / (smin - e64) + 4 * math.sqrt(n) * gamma(m + n, U64)
    return P, spread
