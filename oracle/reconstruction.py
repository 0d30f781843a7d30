"""Q·R put back together from `qr`: A itself, within what xGEQRF's contract
and the product's rounding allow.

`q, r = jnp.linalg.qr(a); q @ r` is how a program checks or reuses a
factorisation (a test of the QR, a re-orthogonalisation step's
reconstruction).  Q alone and R alone are free (their signs); their product
is not: Q̃·R̃ = A − E.

**The range.**  A real m×n, m ≥ n; Q̃ (xORGQR's, judged "qr.q": Q̃ᵀQ̃ =
I + F, ‖F‖₁ ≤ δ = t_q·m·u) and R̃ (xGEQRF's leading n×n upper triangle, the
triangle below it the program's zeros — the record `fixed`, so they are
judged too) with Q̃·R̃ = A − E, ‖E‖₁ ≤ e₁ = t_r·max(m, n)·‖A‖₁·u (the
contract as oracle/projection.py reads it).  The product at full precision
(dot_general's reading) adds at most γ_n·(|Q̃|·|R̃|)ᵢⱼ ≤ γ_n·‖q̃ᵢ‖₂·‖r̃ⱼ‖₂,
with ‖q̃ᵢ‖₂ ≤ ‖Q̃‖₂ ≤ √(1 + δ) and ‖r̃ⱼ‖₂ ≤ ‖aⱼ − eⱼ‖₂/σ_min(Q̃) ≤
(‖aⱼ‖₂ + e₁)/√(1 − δ).  So element (i, j) lies within

    e₁ + γ_n·√((1 + δ)/(1 − δ))·(‖aⱼ‖₂ + e₁)

of aᵢⱼ, plus underflow's absolute n·2^(emin − p + 1).  A matrix computed
upstream (‖Â − A‖₁ ≤ s, the records' `slack`) adds s to e₁ and to ‖aⱼ‖₂,
and the contract's allowance is taken at ‖A‖₁ + s.

Held against brute force in tests/oracle/test_reconstruction.py (Q̃, R̃ at
the edges of both criteria, the product in f32).  What stays "any value":
complex A, Q of mode 'complete', an R whose lower triangle is LAPACK's
leftovers (not the program's zeros), m < n.
"""
from __future__ import annotations

import math

import numpy as np

from ..spec import lapack
from ..spec.kinds.residual import RESIDUAL
from ..spec.types import parse_type, tensor_from_hex
from .spectral import bounded, gamma, two_in_one_out

WHY = ("Q·R of xORGQR's Q and xGEQRF's R of one A: A itself, within xGEQRF's contract and the product's rounding "
       "(oracle/reconstruction.py)")


def combine(inst, inputs: list, outs: list, primary: list) -> list | None:
    """The output where `inst` is Q·R (module docstring), else None."""
    from .chains import is_matmul, leading_upper
    if not two_in_one_out(inputs, outs) or inst.spec.mnemonic != "dot_general":
        return None
    (o,) = outs
    q, r = inputs
    if not is_matmul(inst, q.type.rank, r.type.rank) or not (RESIDUAL.judges(q) and RESIDUAL.judges(r)):
        return None
    qr, rr = q.residual, r.residual
    if qr.get("property") != "qr.q" or rr.get("property") != "geqrf.r" or qr.get("view") or qr.get("conj") \
            or rr.get("conj") or not rr.get("fixed") or qr["operands"][0] != rr["operands"][0]:
        return None
    if rr.get("ranged") and rr.get("slack") is None:
        return None
    ta = parse_type(rr["operands"][0]["type"])
    m, n = (int(d) for d in ta.shape[-2:])
    if m < n or o.type != ta or tuple(int(d) for d in r.type.shape[-2:]) != (n, n) \
            or not leading_upper(rr.get("view"), ta, n) or o.type.element_type.is_complex:
        return None
    a = np.asarray(tensor_from_hex(rr["operands"][0]["hex"], ta), dtype=np.float64)
    slack = np.asarray(rr.get("slack") or [0.0] * max(1, int(np.prod(ta.shape[:-2], dtype=np.int64))))
    lo, hi = product_range(a, ta, float(qr["threshold"]), float(rr["threshold"]), slack)
    out = bounded(o, lo, hi, WHY)
    return None if out is None else [out]


def product_range(a: np.ndarray, ta, t_q: float, t_r: float, slack: np.ndarray):
    """(low, high) float64 of every fl(Q̃·R̃) the criteria and the contract let pass (module docstring)."""
    et = ta.element_type
    m, n = (int(d) for d in ta.shape[-2:])
    u = float(lapack.unit_roundoff(et))
    up = 1 + 2.0 ** -20
    tiny = n * 2.0 ** (et.format.emin - et.format.precision + 1)
    delta = t_q * m * u * up
    if delta >= 0.5:
        return None
    A = a.reshape((-1, m, n))
    s = slack.reshape(-1)[:, None]
    a1 = np.abs(A).sum(axis=-2).max(axis=-1, initial=0.0)[:, None]
    e1 = (t_r * max(m, n) * (a1 + s) * u + s) * up   # t_r: geqrf.r's threshold, two_sided(max(m, n))
    norms = np.sqrt((A * A).sum(axis=-2)) + s                       # ‖aⱼ‖₂ at most, per column
    rad = (e1 + gamma(n, u) * math.sqrt((1 + delta) / (1 - delta)) * (norms + e1)) * up + tiny
    rad = np.broadcast_to(rad[:, None, :], A.shape).reshape(a.shape)
    return np.nextafter(a - rad, -np.inf), np.nextafter(a + rad, np.inf)
