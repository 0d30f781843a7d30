"""Spectral functions of a symmetric matrix, put together from `eigh`:
V·diag(d)·Vᵀ, d computed from the eigenvalues.

`w, v = jnp.linalg.eigh(s)`, then `(v * g(w)) @ v.T`, `v @ jnp.diag(g(w))
@ v.T` or `v @ (g(w)[:, None] * v.T)`, is how JAX programs write a matrix square root, an inverse square
root (whitening, Shampoo's preconditioner), a projection onto the positive
semidefinite cone or a plain reconstruction.  Each factor alone is free
(an eigenvector's sign, a degenerate eigenspace's basis) and so "any value"
downstream (oracle/characterized.py); the product is not, and this module
states its range.

**The range.**  A real symmetric n×n A = U·Λ·Uᵀ (U exact eigenvectors, Λ
ascending).  The backend's V passes eigh's criterion (spec/lapack.py
`eigh_vectors`): ‖VᵀV − I‖₁ ≤ η and ‖A·V − V·Λ‖₁ ≤ ρ, Λ the exact values;
the program scales V's column k by d_k, any value in the enclosure
[lo_k, hi_k] the oracle states for it, and contracts with Vᵀ.  Let
c = the oracle's primary d and T = U·diag(c)·Uᵀ.  With V = Q·H (polar: Q
orthogonal, ‖H − I‖₂ ≤ η) and E = A − Q·Λ·Qᵀ (symmetric, ‖E‖_F ≤ e),

    Y − T = rounding + V(D − C)Vᵀ + Q(HCH − C)Qᵀ + (QCQᵀ − UCUᵀ),

bounded elementwise by the 2-norm of each term:

* rounding (the scaling, one product, and the contraction at full
  precision — dot_general's reading): γ_{n+1}·max|d|·(1 + η) per element
  (rows of V have 2-norms at most ‖V‖₂ ≤ √(1 + η)), plus underflow's
  absolute (n + 1)·2^(emin − p) at most;
* ‖V(D − C)Vᵀ‖₂ ≤ (1 + η)·max_k max(hi_k − c_k, c_k − lo_k);
* ‖HCH − C‖₂ ≤ (2η + η²)·max|c|;
* QCQᵀ − UCUᵀ = U(MC − CM)MᵀUᵀ with M = UᵀQ orthogonal, and MΛMᵀ = Λ − UᵀEU
  gives MΛ − ΛM = −UᵀEUM: entry (i, j) of MC − CM is M_ij·(c_j − c_i), of
  MΛ − ΛM M_ij·(λ_j − λ_i).  So ‖QCQᵀ − UCUᵀ‖_F ≤ L·‖E‖_F with L = the
  largest |c_i − c_j|/|λ_i − λ_j| — the divided differences of the values
  the program computed, at the exact eigenvalues (A and Q·Λ·Qᵀ have the
  same spectrum).  Where two eigenvalues are not told apart and their c
  differ, no L exists: a degenerate eigenspace's basis is free, and so is
  the product (no range: any value, as before).
* e: A·Q − Q·Λ = R·H⁻¹ + Q·((H − I)Λ − Λ(H − I))·H⁻¹, so
  ‖E‖_F ≤ √n·(ρ + 2η·‖Λ‖₂)/√(1 − η) (‖X‖_F ≤ √n·‖X‖₁ for the n×n ones).

The criterion's own enclosure is accounted for as spec/lapack.py does
(ρ and η raised by the ratio's rounding).  T itself is computed in float64
from numpy's eigh of A, whose U₆₄ is placed by the same bound with its
own η₆₄ and ρ₆₄ measured (plus γ of float64 for the measuring and for
T's product): tiny beside the f32 terms.

Held against brute force in tests/oracle/test_spectral.py: V drawn as
U·W·(I + S) at the criterion's edge (W orthogonal within degenerate
clusters, S symmetric), d anywhere in its range, the product in numpy in
every order and in f32; every Y lies in the range.

**A matrix computed upstream** (a covariance): the backend factors its own
Â, ‖Â − A‖₁ ≤ dm (the record's `slack`, oracle/chains.py `matrix_slack`).
Its V passes the criterion against Â, so against A the residual grows by
(A − Â)·V and V·(Λ̂ − Λ), |λ̂ᵢ − λᵢ| ≤ dm (Weyl): ρ + 2·dm·‖V‖₁, and the
criterion's own allowance is on ‖Â‖₁ ≤ ‖A‖₁ + dm.  The values computed on
are widened by dm too (spec/lapack.py `values_range`).

**A data matrix in front** (ZCA whitening, `xc @ (v * d) @ v.T`): X·(V ⊙ d)
is pending, X a stated matrix (exact, or a range X ± R); the product with
Vᵀ is every fl(fl(X̃·fl(V ⊙ d̃))·Vᵀ) — `left_product_range`.

In f64 the float64 center's own error is of f64's order, and accounted
like the rest: the range is about 10⁻¹¹ relative on a 6×6 square root.

What stays "any value": complex Hermitian A (not yet derived), a V seen
through anything but a transpose, d not constant along V's rows,
eigen-spectra too clustered for L, and a matrix computed upstream whose
distance is unknown (a `ranged` record without `slack`).
"""
from __future__ import annotations

import math

import numpy as np

from ..spec.expectation import Expectation
from ..spec.kinds.bounded import BOUNDED
from ..spec.kinds.residual import RESIDUAL
from ..spec.types import parse_type
from .rounding import outward_bits

WHY = ("V·diag(d)·Vᵀ of eigh's V and d computed from its values: every product the criteria and d's range let "
       "pass, as a range (oracle/spectral.py)")
SCALED = "eigh's V with its columns scaled by d (oracle/spectral.py)"
LEFT_WHY = ("X·V·diag(d)·Vᵀ of a stated X, eigh's V and d computed from its values: every product the criteria and "
            "the ranges of X and d let pass, as a range (oracle/spectral.py)")
U64 = 2.0 ** -53


def _bare(rec: dict) -> dict:
    return {k: v for k, v in rec.items() if k not in ("view", "fixed", "pending")}


def _unplaced(rec: dict) -> bool:
    """A record of a matrix approximate upstream whose distance is not known (`ranged`, no `slack`)."""
    return bool(rec.get("ranged")) and rec.get("slack") is None


def _vectors(v) -> tuple | None:
    """(the eigh.vectors record, S) of a real value holding columns S of
    its record's V in order (in place: all of them), else None."""
    return _eigh_factor(v, "columns")


def _transposed_vectors(v) -> tuple | None:
    """(the eigh.vectors record, S) of a real value that is columns S of
    its record's V transposed (Vᵀ, or V[:, S]ᵀ), else None."""
    return _eigh_factor(v, "transposed")


def _eigh_factor(v, how: str) -> tuple | None:
    rec = factor_record(v, "eigh.vectors")
    if rec is None or _unplaced(rec) or not v.type.element_type.is_float \
            or v.type.element_type.format.precision > 53:
        return None
    cols = selection(rec.get("view"), v.type, how)
    return None if cols is None else ({k: x for k, x in rec.items() if k != "pending"}, cols)


def factor_record(v, prop: str) -> dict | None:
    """The record of property `prop` a real value states (residual-judged)
    or is a part of (oracle/chains.py `PARTS`, tagged "part"), with its view;
    None otherwise (conjugated parts included)."""
    if isinstance(v, tuple) or v.type.element_type.is_complex or v.residual is None:
        return None
    rec = v.residual
    if rec.get("property") != prop or rec.get("conj") or not (RESIDUAL.judges(v) or rec.get("pending") == "part"):
        return None
    return rec


def selection(view: dict | None, t, how: str) -> np.ndarray | None:
    """S where a value of type t holds, of its record's matrices (the
    view's type; the value's own without a view), the columns S in order
    (`how` "columns": V[:, S], U[:, :k]), the rows S ("rows": Vᵀ[:k]) or the
    columns S transposed ("transposed": V[:, S]ᵀ), batch dimensions kept;
    None for any other movement.  A truncated factor (PCA's top k, a
    truncated SVD) is the whole one with c = 0 off S."""
    shape = tuple(int(d) for d in t.shape)
    shape0 = tuple(int(d) for d in parse_type(view["type"]).shape) if view else shape
    if len(shape) < 2 or len(shape0) != len(shape) or shape[:-2] != shape0[:-2] or (not view and how == "transposed"):
        return None
    src = np.asarray(view["src"], dtype=np.int64) if view else np.arange(int(np.prod(shape, dtype=np.int64)))
    if src.size != int(np.prod(shape, dtype=np.int64)) or (src < 0).any() or src.size == 0:
        return None
    b0, r0, c0 = np.unravel_index(src, (int(np.prod(shape0[:-2], dtype=np.int64)),) + shape0[-2:])
    b, x, y = np.unravel_index(np.arange(src.size), (int(np.prod(shape[:-2], dtype=np.int64)),) + shape[-2:])
    if (b != b0).any():
        return None
    inner, picked = {"columns": (r0 - x, c0), "rows": (c0 - y, r0), "transposed": (r0 - y, c0)}[how]
    if inner.any():
        return None
    order = y if how == "columns" else x   # the position along the picked axis
    cols = np.full(int(order.max()) + 1, -1, dtype=np.int64)
    cols[order] = picked   # the pick at each position: every element there must agree with it
    if (cols[order] != picked).any() or (cols < 0).any() or np.unique(cols).size != cols.size:
        return None
    return cols


def ones(factor: tuple) -> np.ndarray:
    """d = 1 on the columns S of a factor (record, S), per matrix of its batch: batch × |S|."""
    rec, cols = factor
    batch = tuple(int(d) for d in parse_type(rec["operands"][0]["type"]).shape[:-2])
    return np.ones(batch + (cols.size,))


def widened(c: np.ndarray, cols: np.ndarray, n: int) -> np.ndarray:
    """d on the columns S of a factor, as c over all n of them: 0 off S."""
    out = np.zeros(c.shape[:-1] + (n,))
    out[..., cols] = c
    return out


def _ends_of(d, primary: np.ndarray):
    """(c, lo, hi) float64 in `d`'s shape: a real stated value (exact or a
    range; not free) with finite ends, else None."""
    from .chains import exact
    from .characterized import is_free
    from .propagation import is_ranged, value_ends
    if isinstance(d, tuple) or is_free(d) or d.type.element_type.is_complex or not (exact(d) or is_ranged(d)):
        return None
    shape = tuple(int(s) for s in d.type.shape)
    lo, hi = (np.asarray(x, dtype=np.float64).reshape(shape) for x in value_ends(d))
    if not (np.isfinite(lo).all() and np.isfinite(hi).all()):
        return None
    return np.asarray(primary, dtype=np.float64).reshape(shape), lo, hi


def column_scale(d, primary: np.ndarray, axis: int = -2):
    """(c, lo, hi) per column k — float64, batch × n — where every row of
    `d` (…, n, n) holds the same value per column (`axis` −2; −1: every
    column the same per row, values per row), else None."""
    got = _ends_of(d, primary)
    if got is None:
        return None
    first = (slice(None),) * (len(got[0].shape) + axis) + (slice(0, 1),)
    if not all((x == x[first]).all() for x in got):
        return None
    return tuple(np.take(x, 0, axis=axis) for x in got)


def diagonal_scale(d, primary: np.ndarray):
    """(c, lo, hi) where `d` (…, n, n) is diag(d) — its off-diagonal elements
    exactly zero — else None."""
    got = _ends_of(d, primary)
    if got is None:
        return None
    n = got[0].shape[-1]
    off = ~np.eye(n, dtype=bool)
    if not all((x[..., off] == 0).all() for x in got):
        return None
    k = np.arange(n)
    return tuple(x[..., k, k] for x in got)


def two_in_one_out(inputs: list, outs: list) -> bool:
    """Is the op's shape one the factor rules read: two values in, one out (no tuples)?"""
    return len(outs) == 1 and not isinstance(outs[0], tuple) and len(inputs) == 2 \
        and not any(isinstance(x, tuple) for x in inputs)


def scaled_columns(inst, inputs: list, primary: list, factor) -> tuple | None:
    """(record, (c, lo, hi)) where `inst` scales the columns of a factor
    that `factor` recognises (its record, else None) — factor ⊙ d, d the
    same down each column, or factor·diag(d) — by a stated d; None
    otherwise."""
    from .chains import is_matmul
    lhs, rhs = inputs
    name = inst.spec.mnemonic
    if name == "multiply":
        for i, (v, d) in enumerate(((lhs, rhs), (rhs, lhs))):
            rec = factor(v)
            if rec is not None and d.type == v.type and v.type.rank >= 2:
                got = column_scale(d, primary[1 - i])
                return None if got is None else (rec, got)
    elif name == "dot_general" and is_matmul(inst, lhs.type.rank, rhs.type.rank):
        rec = factor(lhs)
        k = int(lhs.type.shape[-1])
        if rec is not None and tuple(int(d) for d in rhs.type.shape[-2:]) == (k, k):
            got = diagonal_scale(rhs, primary[1])
            return None if got is None else (rec, got)
    return None


def scaled_rows(inst, inputs: list, primary: list, factor) -> tuple | None:
    """(record, (c, lo, hi)) where `inst` multiplies a factor that `factor`
    recognises by d the same along each row (row k scaled by d_k: d[:, None]
    * vᵀ), else None."""
    if inst.spec.mnemonic != "multiply":
        return None
    lhs, rhs = inputs
    for i, (v, d) in enumerate(((lhs, rhs), (rhs, lhs))):
        rec = factor(v)
        if rec is not None and d.type == v.type and v.type.rank >= 2:
            got = column_scale(d, primary[1 - i], axis=-1)
            return None if got is None else (rec, got)
    return None


def bounded(o: Expectation, lo: np.ndarray, hi: np.ndarray, why: str) -> Expectation | None:
    """A "bounded" expectation of output `o` from float64 ends, rounded outward into its format; None where the
    ends are not of its shape."""
    et = o.type.element_type
    shape = tuple(int(d) for d in o.type.shape)
    if np.shape(lo) != shape:
        return None
    return Expectation(o.type, o.bits, BOUNDED.name, lo=outward_bits(np.reshape(lo, -1), et, True).reshape(shape),
                       hi=outward_bits(np.reshape(hi, -1), et, False).reshape(shape), why=why)


def combine(inst, inputs: list, outs: list, primary: list) -> list | None:
    """The outputs where `inst` is a step of [X·]V·diag(d)·Vᵀ (module
    docstring): V ⊙ d or V·diag(d) is pending (any value, tagged), X times
    it too; that times Vᵀ of the same record is the range.  None for
    anything else."""
    from . import characterized as ch
    from .chains import is_matmul
    if not two_in_one_out(inputs, outs):
        return None
    (o,) = outs
    lhs, rhs = inputs
    if inst.spec.mnemonic == "dot_general" and is_matmul(inst, lhs.type.rank, rhs.type.rank):
        p, q = _pending(lhs), _pending(rhs)
        if p is not None and not p.get("rows"):   # (V ⊙ d)·Vᵀ
            return _product(p, o) if _completes(p, _transposed_vectors(rhs)) else None
        if q is not None and q.get("rows"):   # V·(d ⊙ Vᵀ), d down the rows: `v @ (d[:, None] * v.T)`
            return _product(q, o) if _completes(q, _vectors(lhs)) else None
        if q is not None and "left" not in q:   # X·(V ⊙ d): X a stated matrix, exact or ranged
            left = _stated(lhs, primary[0])
            if left is None:
                return None
            return [ch.unstated(o.type, o.bits, f"{ch.DOWNSTREAM}; X·({SCALED})", {**q, "left": left})]
        v, vt, right = _vectors(lhs), _transposed_vectors(rhs), _vectors(rhs)
        if v is not None and vt is not None:   # V_S·V_Sᵀ: the projector onto an invariant subspace (d = 1 on S)
            pend = _scaled(v, *(ones(v),) * 3)
            return _product(pend, o) if _completes(pend, vt) else None
        if right is not None and v is None:   # X·V_S, d = 1 on S (PCA's scores, X·V[:, -k:])
            left = _stated(lhs, primary[0])
            if left is None:
                return None
            pend = {**_scaled(right, *(ones(right),) * 3), "left": left}
            return [ch.unstated(o.type, o.bits, f"{ch.DOWNSTREAM}; X·({SCALED})", pend)]
    got, rows = scaled_columns(inst, inputs, primary, _vectors), False
    if got is None:
        got, rows = scaled_rows(inst, inputs, primary, _transposed_vectors), True
    if got is None:
        return None
    factor, (c, lo, hi) = got
    pend = {**_scaled(factor, c, lo, hi), **({"rows": True} if rows else {})}
    return [ch.unstated(o.type, o.bits, f"{ch.DOWNSTREAM}; {SCALED}", pend)]


def _scaled(factor: tuple, c, lo, hi) -> dict:
    """The pending V ⊙ d of a factor (record, S): d over all n columns, 0 off S."""
    rec, cols = factor
    n = int(parse_type(rec["operands"][0]["type"]).shape[-1])
    return {"pending": "eigh.scaled", "vectors": _bare(rec), "cols": cols.tolist(),
            **{k: widened(np.asarray(x, dtype=np.float64), cols, n).tolist() for k, x in (("c", c), ("lo", lo),
                                                                                         ("hi", hi))}}


def _completes(p: dict, factor: tuple | None) -> bool:
    """Is `factor` (record, S) the other side of the pending V ⊙ d: the same record, the same columns S?"""
    return factor is not None and _bare(factor[0]) == p["vectors"] and factor[1].tolist() == p["cols"]


def _pending(v) -> dict | None:
    rec = None if isinstance(v, tuple) else v.residual
    return rec if rec is not None and rec.get("pending") == "eigh.scaled" and not rec.get("view") else None


def _stated(x, primary: np.ndarray) -> dict | None:
    """{"c", "r"}: a real matrix's primary values and radius (0 where exact), else None (free, complex, not finite)."""
    from .chains import exact, radius
    from .characterized import is_free
    from .propagation import is_ranged
    if is_free(x) or x.type.element_type.is_complex or not (exact(x) or is_ranged(x)):
        return None
    c = np.asarray(primary, dtype=np.float64).reshape(tuple(int(d) for d in x.type.shape))
    r = radius(x).reshape(c.shape)
    if not (np.isfinite(c).all() and np.isfinite(r).all()):
        return None
    return {"c": c, "r": r}


def _product(p: dict, o) -> list | None:
    """The range of the product a pending V ⊙ d (or d ⊙ Vᵀ, or X·(V ⊙ d)) completes."""
    (a,), (ta,) = _operands(p["vectors"])
    rec = p["vectors"]
    got = spectral_parts(a, ta, rec, np.asarray(p["c"]), np.asarray(p["lo"]), np.asarray(p["hi"]))
    if got is None:
        return None
    T, r, rounding, tiny = got
    n = int(ta.shape[-1])
    left = p.get("left")
    if left is None:
        center, rad = T, (r + rounding + tiny)[..., None, None]
    else:
        X, R = left["c"], left["r"]
        if X.shape[:-2] != T.shape[:-2] or X.shape[-1] != n:
            return None
        center, rad = left_product_range(X, R, T, r, rounding, tiny)
    rad = rad * (1 + 2.0 ** -40)
    got = bounded(o, np.nextafter(center - rad, -np.inf), np.nextafter(center + rad, np.inf),
                  WHY if left is None else LEFT_WHY)
    return None if got is None else [got]


def left_product_range(X: np.ndarray, R: np.ndarray, T: np.ndarray, r, rounding, tiny):
    """(center, radius) of every fl(fl(X̃·fl(V ⊙ d̃))·Vᵀ), X̃ within X ± R
    elementwise, V·diag(d̃)·Vᵀ within T ± r (`spectral_parts`, batch-wise):
    |X̃·Y − X·T| ≤ |X|·r + R·|T| + R·r; the scaling's and the two
    contractions' rounding at most 3·rounding·Σₖ|x̃ᵢₖ| (each a relative
    u + 2γ_n of |X̃|·|V|·|D|·|Vᵀ|, whose elements are at most
    Σₖ|x̃ᵢₖ|·max|d|·(1 + η)); float64's own in X·T; underflow's absolute
    terms through both contractions."""
    n = T.shape[-1]
    rr, rounding, tiny = (np.asarray(x, dtype=np.float64)[..., None, None] for x in (r, rounding, tiny))
    rows = (np.abs(X) + R).sum(axis=-1, keepdims=True)
    center = X @ T
    rad = np.abs(X).sum(axis=-1, keepdims=True) * rr + R @ np.abs(T) + R.sum(axis=-1, keepdims=True) * rr \
        + rows * 3 * rounding + gamma(n + 1, U64) * (np.abs(X) @ np.abs(T)) + (2 * n + 2) * tiny * (1 + rows)
    return center, rad


def _operands(rec: dict):
    from ..spec.lapack import operands_of
    return operands_of(rec)


def gamma(n: int, u: float) -> float:
    return (n * u) / (1 - n * u) if n * u < 1 else math.inf


def spectral_parts(a: np.ndarray, ta, rec: dict, c: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """(T, r, rounding, tiny), batch-wise: the float64 center T (n×n), the
    radius r of V·diag(d̃)·Vᵀ about it in exact arithmetic, the product's
    rounding — (u + 2γ_n)·max|d|·(1 + η) per element, γ_n for each
    contraction at full precision: the scaling rounds once, and a value is
    at most max|d|·(1 + η) in magnitude, |V||D||Vᵀ| elementwise — and
    underflow's absolute 2^(emin − p + 1) (module docstring).  None where
    no bound holds (η ≥ 1/2, a cluster with differing c)."""
    from ..spec.lapack import hermitian_read, unit_roundoff
    et = ta.element_type
    n = int(ta.shape[-1])
    batch = tuple(int(d) for d in ta.shape[:-2])
    u = float(unit_roundoff(et))
    attrs = rec["attributes"]
    A = hermitian_read(np.asarray(a, dtype=np.float64), bool(attrs["lower"]))
    lam = np.asarray(attrs["values"], dtype=np.float64).reshape(batch + (n,))
    lam_err = np.asarray(attrs["error"], dtype=np.float64).reshape(batch)
    dms = np.asarray(rec["slack"], dtype=np.float64).reshape(batch) if rec.get("slack") is not None \
        else np.zeros(batch)
    thr = float(rec["threshold"])
    c, lo, hi = (np.asarray(x, dtype=np.float64).reshape(batch + (n,)) for x in (c, lo, hi))
    T = np.empty(batch + (n, n))
    r, rounding = np.empty(batch), np.empty(batch)
    slack = 1 + 2.0 ** -20   # the criterion's enclosure: a ratio passes up to its rounding above thr
    for idx in np.ndindex(*batch):
        Ai, li, le, dm = A[idx], lam[idx], float(lam_err[idx]), float(dms[idx])
        a1 = float(np.abs(Ai).sum(axis=0).max(initial=0.0))
        lam2 = float(np.abs(li).max(initial=0.0)) + le
        eta = thr * n * u * slack + 4 * gamma(n + 3, U64) * n
        if eta >= 0.5:
            return None
        v1 = math.sqrt(n * (1 + eta))   # ‖V‖₁ at most
        # the criterion on the backend's own Â (‖Â − A‖₁ ≤ dm): against A, (A − Â)·V and V·(Λ̂ − Λ) besides (Weyl)
        rho = thr * 2 * n * (a1 + dm) * u * slack + 2 * gamma(n + 3, U64) * v1 * (a1 + lam2) + 2 * le * v1 \
            + 2 * dm * v1
        L = divided_differences(li, le, c[idx])
        if L is None:
            return None
        e = math.sqrt(n) * (rho + 2 * eta * lam2) / math.sqrt(1 - eta)
        center, center_err = _center(Ai, li, le, c[idx], L)
        if center is None:
            return None
        T[idx] = center
        r[idx], dmax = exact_radius(eta, L, e, c[idx], lo[idx], hi[idx], center_err)
        rounding[idx] = (u + 2 * gamma(n, u)) * (1 + u) * dmax * (1 + eta) * (1 + 2.0 ** -40)
    tiny = np.full(batch, (n + 1) * 2.0 ** (et.format.emin - et.format.precision + 1))
    return T, r, rounding, tiny


def spectral_range(a: np.ndarray, ta, rec: dict, c: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """(low, high) float64 of every Y = V·diag(d)·Vᵀ (module docstring), or None."""
    got = spectral_parts(a, ta, rec, c, lo, hi)
    if got is None:
        return None
    T, r, rounding, tiny = got
    rad = (r + rounding + tiny)[..., None, None] * (1 + 2.0 ** -40)
    return np.nextafter(T - rad, -np.inf), np.nextafter(T + rad, np.inf)


def exact_radius(eta: float, L: float, e: float, c: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                 center_err: float) -> tuple[float, float]:
    """(the radius about the float64 center in exact arithmetic, max|d|):
    d's spread (1 + η)·max(hi − c, c − lo), the Gram error (2η + η²)·max|c|,
    the divided differences times ‖E‖_F, L·e, and the center's own error
    (module docstring)."""
    width = float(np.max(np.maximum(hi - c, c - lo), initial=0.0))
    dmax = float(np.max(np.maximum(np.abs(lo), np.abs(hi)), initial=0.0))
    cmax = float(np.abs(c).max(initial=0.0))
    return ((1 + eta) * width + (2 * eta + eta * eta) * cmax + L * e + center_err) * (1 + 2.0 ** -40), dmax


def divided_differences(lam: np.ndarray, err: float, c: np.ndarray) -> float | None:
    """max |c_i − c_j| / |λ_i − λ_j| over pairs, λ known within `err`; None
    where two eigenvalues may be equal and their c differ."""
    if lam.size < 2:
        return 0.0
    dc = np.abs(c[:, None] - c[None, :])
    gap = np.abs(lam[:, None] - lam[None, :]) * (1 - 2.0 ** -50) - 2 * err
    np.fill_diagonal(gap, np.inf)
    if ((gap <= 0) & (dc > 0)).any():
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(dc > 0, dc / np.where(gap > 0, gap, np.inf), 0.0)
    return float(q.max()) * (1 + 2.0 ** -50)


def _center(A: np.ndarray, lam: np.ndarray, lam_err: float, c: np.ndarray, L: float):
    """(T₆₄, its distance from U·diag(c)·Uᵀ at most): numpy's float64 eigh
    placed by the module's bound with its own measured η and ρ."""
    n = A.shape[-1]
    _, U = np.linalg.eigh(A)
    g = U.T @ U - np.eye(n)
    eta = float(np.abs(g).sum(axis=0).max(initial=0.0)) + 2 * gamma(n + 2, U64) * n
    R = A @ U - U * lam[None, :]
    a1 = float(np.abs(A).sum(axis=0).max(initial=0.0))
    lam2 = float(np.abs(lam).max(initial=0.0)) + lam_err
    rho = float(np.abs(R).sum(axis=0).max(initial=0.0)) \
        + 2 * gamma(n + 3, U64) * math.sqrt(n) * (a1 + lam2) + lam_err * math.sqrt(n) * 2
    if eta >= 0.5:
        return None, math.inf
    e = math.sqrt(n) * (rho + 2 * eta * lam2) / math.sqrt(1 - eta)
    cmax = float(np.abs(c).max(initial=0.0))
    T = (U * c[None, :]) @ U.T
    err = (2 * eta + eta * eta) * cmax + L * e + 2 * gamma(n + 1, U64) * cmax * (1 + eta)
    return T, err
