"""Functions of a matrix's singular values, put together from `svd`:
U·diag(d)·Vᵀ, d computed from the singular values (or none: U·Vᵀ).

`u, s, vt = jnp.linalg.svd(a, full_matrices=False)`, then `u @ vt` (the
polar factor: orthogonalisation, Procrustes), `(u * s) @ vt` or
`u @ (s[:, None] * vt)` (a reconstruction), `u @ jnp.diag(g(s)) @ vt`.  U and V alone are free
(each singular pair's sign), so "any value" downstream; the product is
not, and this module states its range.

**The dilation.**  A real m×n A with thin SVD A = U·Σ·Vᵀ (k = min(m, n)
singular values) is the off-diagonal block of the symmetric
H = [[0, A], [Aᵀ, 0]], whose eigenpairs are (±σᵢ, [uᵢ; ±vᵢ]/√2) and
(0, the complement) where m ≠ n.  For f odd with f(σᵢ) = cᵢ (and f(0) = 0),
f(H) = [[0, U·C·Vᵀ], [V·C·Uᵀ, 0]]: U·diag(c)·Vᵀ is a spectral function of
H, and oracle/spectral.py's bound applies to it (Λ = (σ, −σ, 0…),
c = (c, −c, 0…), the divided differences over those: 2/(σᵢ + σⱼ) for
the polar factor, 1/σ_min — its classical condition).  The backend's
W = [[Ũ, Ũ], [Ṽ, −Ṽ]]/√2, with the complement of Ũ's columns (of Ṽ's
where m < n) — orthonormal and orthogonal to them by construction —
completing it:

* W's Gram error has the eigenvalues of ŨᵀŨ − I and ṼᵀṼ − I, so
  η = max of their criteria's bounds (svd.u, svd.vt: ‖I − XᵀX‖₁ ≤ thr·k·u);
* the residual H·W − W·Λ has blocks A·Ṽ − Ũ·Σ and Aᵀ·Ũ − Ṽ·Σ (and A's
  action on the complement).  **xGESDD's contract read whole**: A =
  Ũ·S̃·Ṽᵀ + E with S̃ its own values and ‖E‖₁ ≤ thr·max(m,n)·‖A‖₁·u
  (LAPACK's dbdt01 test; per output the criteria leave each singular
  pair's two signs free, and only the contract ties them).  Then
  A·Ṽ − Ũ·Σ = Ũ·S̃·(ṼᵀṼ − I) + Ũ·(S̃ − Σ) + E·Ṽ, and likewise for Aᵀ·Ũ;
  on the complement A's action is Eᵀ·Ũ⊥ (Ũᵀ·Ũ⊥ = 0);
* so ‖H·W − W·Λ‖_F ≤ √(2)·(√(1 + η)·(s̃·‖G‖_F + √k·δσ) + √(1 + η)·‖E‖_F)
  + ‖E‖_F, with δσ the values' criterion (svd.values), s̃ ≤ σ₁ + δσ,
  ‖G‖_F ≤ √k·η, ‖E‖_F ≤ √n·‖E‖₁; and W's polar factor's ‖H − I‖_F ≤
  √(‖G_u‖²_F + ‖G_v‖²_F) ≤ √2·√k·η.

The center is numpy's float64 SVD, placed by the same bound with its own
residuals measured.  The program's rounding — the scaling once and one
contraction at full precision — is at most (u + 2γ_k)·max|d|·(1 + η) per
element (rows of Ũ and Ṽ have 2-norms at most √(1 + η)).

Held against brute force in tests/oracle/test_singular.py (Ũ, Ṽ drawn at
the criteria's and the contract's edges, signs flipped together) and the
exact polar factor from mpmath.  What stays "any value": complex A, a
matrix computed upstream (`ranged`), U of mode 'A' (more columns than
values), U·Vᵀ seen through anything but these ops, clusters where c
differ.  (f64 is covered: the float64 center's error is accounted.)
"""
from __future__ import annotations

import math

import numpy as np

from ..spec.types import parse_type
from .spectral import (U64, bounded, divided_differences, exact_radius, gamma, scaled_columns, scaled_rows,
                       factor_record, ones, selection, two_in_one_out, widened)

WHY = ("U·diag(d)·Vᵀ of svd's U and Vᵀ (d computed from its values, or none): every product the criteria, xGESDD's "
       "contract and d's range let pass, as a range (oracle/singular.py)")
SCALED = "svd's U with its columns scaled by d (oracle/singular.py)"


def _side(v, side: str) -> tuple | None:
    """(the svd.u / svd.vt record, S) of a real f32-or-narrower value
    holding U's columns S (`side` "u") or Vᵀ's rows S ("vt") in order — all
    of them in place, the leading k of a truncated SVD —, else None."""
    rec = factor_record(v, f"svd.{side}")
    if rec is None or rec.get("ranged"):
        return None
    et = v.type.element_type
    if not et.is_float or et.format.precision > 53:
        return None
    t0 = parse_type(rec["view"]["type"]) if rec.get("view") else v.type
    k = len(rec["attributes"]["values"]) // max(1, int(np.prod(t0.shape[:-2], dtype=np.int64)))
    if int(t0.shape[-1 if side == "u" else -2]) != k:
        return None   # mode 'A': more vectors than values
    cols = selection(rec.get("view"), v.type, "columns" if side == "u" else "rows")
    return None if cols is None else ({k: x for k, x in rec.items() if k != "pending"}, cols)


def _same(u: tuple, vt: tuple) -> bool:
    """Do two of svd's factors (record, S) state one factorisation of one A, the same S picked?"""
    (a, s), (b, t) = u, vt
    return a["operands"] == b["operands"] and a["attributes"]["values"] == b["attributes"]["values"] \
        and s.tolist() == t.tolist()


def combine(inst, inputs: list, outs: list, primary: list) -> list | None:
    """The outputs where `inst` is a step of U·diag(d)·Vᵀ (module docstring), else None."""
    from . import characterized as ch
    from .chains import is_matmul
    if not two_in_one_out(inputs, outs):
        return None
    (o,) = outs
    lhs, rhs = inputs
    if inst.spec.mnemonic == "dot_general" and is_matmul(inst, lhs.type.rank, rhs.type.rank):
        u_side, vt_side = _side(lhs, "u"), _side(rhs, "vt")
        if u_side is not None and vt_side is not None and _same(u_side, vt_side):   # U_S·Vᵀ_S: d = 1 on S
            return _product(_scaled(u_side, *(ones(u_side),) * 3), o)
        for pend, other in ((lhs.residual, vt_side), (rhs.residual, u_side)):   # (U ⊙ d)·Vᵀ, or U·(d ⊙ Vᵀ)
            if pend is not None and pend.get("pending") == "svd.scaled" and not pend.get("view") \
                    and bool(pend.get("rows")) == (other is u_side) and other is not None \
                    and _same((pend["svd"], np.asarray(pend["cols"])), other):
                return _product(pend, o)
    got, rows = scaled_columns(inst, inputs, primary, lambda v: _side(v, "u")), False
    if got is None:
        got, rows = scaled_rows(inst, inputs, primary, lambda v: _side(v, "vt")), True
    if got is None:
        return None
    factor, (c, lo, hi) = got
    pend = {**_scaled(factor, c, lo, hi), **({"rows": True} if rows else {})}
    return [ch.unstated(o.type, o.bits, f"{ch.DOWNSTREAM}; {SCALED}", pend)]


def _scaled(factor: tuple, c, lo, hi) -> dict:
    """The pending U ⊙ d of a factor (record, S): d over all k values, 0 off S."""
    rec, cols = factor
    k = len(rec["attributes"]["values"]) // max(1, int(np.prod(parse_type(rec["operands"][0]["type"]).shape[:-2],
                                                                dtype=np.int64)))
    return {"pending": "svd.scaled", "svd": {key: v for key, v in rec.items() if key != "view"},
            "cols": cols.tolist(), **{name: widened(np.asarray(x, dtype=np.float64), cols, k).tolist()
                                      for name, x in (("c", c), ("lo", lo), ("hi", hi))}}


def _product(pend: dict, o) -> list | None:
    from ..spec.lapack import operands_of
    rec = pend["svd"]
    (a,), (ta,) = operands_of(rec)
    got = singular_range(a, ta, rec, *(np.asarray(pend[x], dtype=np.float64) for x in ("c", "lo", "hi")))
    out = None if got is None else bounded(o, *got, WHY)
    return None if out is None else [out]


def _dilated(sig: np.ndarray, c: np.ndarray, m: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(Λ, c) of the dilation: (σ, −σ, 0 where m ≠ n) and (c, −c, 0)."""
    zero = np.zeros(1 if m != n else 0)
    return np.concatenate([sig, -sig, zero]), np.concatenate([c, -c, zero])


def singular_range(a: np.ndarray, ta, rec: dict, c: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """(low, high) float64 of every Y = Ũ·diag(d)·Ṽᵀ (module docstring), or
    None where no bound holds."""
    from ..spec.lapack import unit_roundoff
    et = ta.element_type
    m, n = (int(d) for d in ta.shape[-2:])
    k, big = min(m, n), max(m, n)
    batch = tuple(int(d) for d in ta.shape[:-2])
    u = float(unit_roundoff(et))
    tiny = (k + 1) * 2.0 ** (et.format.emin - et.format.precision + 1)
    attrs = rec["attributes"]
    A = np.asarray(a, dtype=np.float64)
    sig = np.asarray(attrs["values"], dtype=np.float64).reshape(batch + (k,))
    sig_err = np.asarray(attrs["error"], dtype=np.float64).reshape(batch)
    thr = float(rec["threshold"])
    c, lo, hi = (np.asarray(x, dtype=np.float64).reshape(batch + (k,)) for x in (c, lo, hi))
    out_lo, out_hi = np.empty(batch + (m, n)), np.empty(batch + (m, n))
    slack = 1 + 2.0 ** -20
    for idx in np.ndindex(*batch):
        Ai, s, se = A[idx], sig[idx], float(sig_err[idx])
        a1 = float(np.abs(Ai).sum(axis=0).max(initial=0.0))
        na = max(a1, float(np.abs(Ai).sum(axis=1).max(initial=0.0)))
        eta = thr * k * u * slack + 4 * gamma(big + 3, U64) * k
        if eta >= 0.5:
            return None
        dsig = thr * big * na * u * slack + se   # the values' criterion, about the exact σ
        e1 = thr * big * a1 * u * slack          # xGESDD's contract: ‖A − Ũ·S̃·Ṽᵀ‖₁
        eF = math.sqrt(n) * e1
        smax = float(s.max(initial=0.0)) + se + dsig
        sq = math.sqrt(1 + eta)
        gF = math.sqrt(k) * eta
        res = math.sqrt(2) * sq * (smax * gF + math.sqrt(k) * dsig + eF) + eF
        lam, cf = _dilated(s, c[idx], m, n)
        L = divided_differences(lam, se, cf)
        if L is None:
            return None
        lam2 = float(np.abs(s).max(initial=0.0)) + se
        e = (res + 2 * math.sqrt(2) * gF * lam2) / math.sqrt(1 - eta)   # ‖H − I‖_F ≤ √(‖G_u‖²_F + ‖G_v‖²_F)
        center, center_err = _center(Ai, s, se, c[idx], L)
        if center is None:
            return None
        r, dmax = exact_radius(eta, L, e, c[idx], lo[idx], hi[idx], center_err)
        rad = (r + (u + 2 * gamma(k, u)) * (1 + u) * dmax * (1 + eta) + tiny) * (1 + 2.0 ** -40)
        out_lo[idx], out_hi[idx] = center - rad, center + rad
    return np.nextafter(out_lo, -np.inf), np.nextafter(out_hi, np.inf)


def _center(A: np.ndarray, sig: np.ndarray, sig_err: float, c: np.ndarray, L: float):
    """(T₆₄ = U₆₄·diag(c)·V₆₄ᵀ, its distance from U·diag(c)·Vᵀ at most):
    numpy's float64 SVD placed by the module's bound, its Gram errors and
    the dilation's residual measured (plus float64's rounding of each)."""
    m, n = A.shape
    k = min(m, n)
    U, _, Vt = np.linalg.svd(A, full_matrices=False)
    V = Vt.T
    g = max(float(np.abs(U.T @ U - np.eye(k)).sum(axis=0).max(initial=0.0)),
            float(np.abs(V.T @ V - np.eye(k)).sum(axis=0).max(initial=0.0))) + 2 * gamma(max(m, n) + 2, U64) * k
    if g >= 0.5:
        return None, math.inf
    S = np.diag(sig)
    r1 = np.linalg.norm(A @ V - U @ S) + np.linalg.norm(A.T @ U - V @ S)
    rest = np.linalg.norm(A - U @ S @ Vt)   # A's action on the complement is (A − U·Σ·Vᵀ)ᵀ·U⊥ (or ·V⊥)
    na = float(np.abs(A).sum())
    fl = 4 * gamma(max(m, n) + 3, U64) * (na * math.sqrt(k) + float(sig.max(initial=0.0)) * k) + 4 * sig_err * k
    res = math.sqrt(2) * (r1 + fl) + rest + fl
    lam2 = float(np.abs(sig).max(initial=0.0)) + sig_err
    e = (res + 2 * math.sqrt(2 * k) * g * lam2) / math.sqrt(1 - g)
    cmax = float(np.abs(c).max(initial=0.0))
    T = (U * c[None, :]) @ Vt
    err = (2 * g + g * g) * cmax + L * e + 2 * gamma(k + 1, U64) * cmax * (1 + g)
    return T, err
