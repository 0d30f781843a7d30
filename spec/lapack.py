"""Properties of LAPACK's factorisations, stated the way LAPACK's own test suite states them.

JAX lowers `jnp.linalg.solve`, `inv`, `det`, `slogdet`, `qr`, `eigh`, `svd`,
`lstsq` on CPU to calls of jaxlib's LAPACK kernels (xGETRF, xGEQRF + xORGQR
/ xUNGQR, xSYEVD / xHEEVD, xGESDD).  No StableHLO op computes them: the
definitions are LAPACK's, and a factorisation is defined by a property, not
by a value (which rounding of the factors a backend returns depends on its
order of evaluation; eigenvector and singular-vector signs, the Householder
representation, are free).  Each output is judged alone, from the call's
operands, by a "residual" expectation (spec/kinds/residual.py) whose
record names a property here (`record["property"]`) instead of an op
(`record["op"]`, spec/ops/cholesky.py and triangular_solve.py): `measure`
is the one entry that evaluates either on an output.

The ratios are LAPACK's (TESTING/LIN and TESTING/EIG, LAPACK Working Note
41), in the 1-norm, ε the unit roundoff 2^-p of the (component) format:

* getrf.lu     ‖P·A − L·U‖₁ / (k·max(‖A‖₁, ‖|L|·|U|‖₁)·ε)       (dget01; k = min(m, n))
               L unit lower trapezoidal (the strict lower part), U upper; P the
               row interchanges the oracle states for partial pivoting; every
               |lᵢⱼ| ≤ 1 (√2 for complex: LAPACK picks the pivot by |re|+|im|).
               Threshold `one_sided(k)` = max(30, 4·γ(k+2)/(k·ε)): L̂·Û = P·A + ΔA,
               |ΔA| ≤ γ(k)·|L̂|·|Û| in any order of evaluation (Higham, Accuracy
               and Stability, 2nd ed., Thm 9.3), so the ratio is ≤ γ(k)/(k·ε) ≈ 1.
               ‖|L|·|U|‖ in the denominator (dget01 has ‖A‖ only) makes the bound
               hold whatever the growth of the elimination.
* linear_solve ‖M·x − c‖₁ / (n·‖M‖₁·‖x‖₁·ε) per right-hand side (dget02,
               dpot02), for x downstream of two triangular solves with the
               factors of M (oracle/characterized.py: `jnp.linalg.solve`,
               `inv`, a Cholesky solve).  Threshold `solve_threshold` =
               max(30, 2·γ(3n+3)·G/(n·ε)): (M + ΔM)·x̂ = c, |ΔM| ≤ γ(3n)·|L̂|·|Û|
               (Higham Thm 9.4; Thm 10.4 for Cholesky), G = ‖|L|·|U|‖₁/‖M‖₁ —
               ≤ n for a Cholesky factor (its rows have norms √aᵢᵢ), and for LU
               the growth of the oracle's own partial-pivoting factors (the
               pivots are the oracle's, stated exactly).  A zero x fails.
* lstsq        ‖Aᴴ(A·x − b)‖₁ / (max(m,n)·N(A)·(‖b‖₁ + N(A)·‖x‖₁)·ε) per right-hand
               side (the normal equations' residual, LAPACK's dqrt17, with ‖b‖ and
               ‖A‖·‖x‖ both in the scale: a backward-stable solve makes Aᴴ·r of
               order ‖E‖·‖r‖ + ‖A‖·‖E‖·‖x‖, r the least-squares residual, never
               zero when b is not in A's range).  For x = V·D·Uᴴ·b downstream of
               xGESDD (`jnp.linalg.lstsq`, oracle/chains.py), A of full column rank (m ≥ n).
               Threshold `lstsq_threshold` = 4·two_sided + 2·(η + 2ε)/ε, η =
               max σᵢ·ρᵢ/N(A) for D within a relative ρᵢ of 1/σᵢ: D's deviation
               adds V·Σ·Δ·Uᴴ·b to Aᴴ·r, at most η·N(A)·‖b‖ — no condition number.
               A zero, negated or 1 %-scaled x fails (the scaling: where
               0.01·‖AᴴA·x‖ exceeds the threshold's share — f64 always here, f32
               for small well-conditioned A; a wider f32 case passes, as any
               backward-error test lets it).
* eigh.values  max |ŵᵢ − λᵢ| / (n·‖A‖₁·ε), λ the eigenvalues in high
               precision, ascending; ŵ must be ascending and finite.
* eigh.vectors max(‖I − VᴴV‖₁/(n·ε), ‖A·V − V·Λ‖₁/(2n·‖A‖₁·ε))   (dsyt21: the
               residual with the exact Λ: the computed pair's residual plus the
               eigenvalues' error, each within the bound).  The sign (phase) of a
               column, and the basis of an eigenspace, are not judged.
* svd.values   max |ŝᵢ − σᵢ| / (max(m,n)·N(A)·ε), N(A) = max(‖A‖₁, ‖A‖∞) ≥ ‖A‖₂;
               descending, nonnegative, finite.
* svd.u, svd.vt  max(‖I − UᴴU‖₁/(c·ε), ‖Uᴴ·A·Aᴴ·U − Σ²‖₁/(max(m,n)·N(A)²·ε)),
               c the number of columns (rows of Vᴴ: the same with Vᴴ·Aᴴ·A·V):
               UᴴA = ΣVᴴ + UᴴE for a backward error E, so the Gram matrix of
               UᴴA is Σ² within 2‖A‖·‖E‖ — the vectors are pinned by the
               inputs alone, with their signs free.  That U's and V's signs
               agree with each other (A = U·Σ·Vᴴ) is a joint property of two
               outputs: not judged (each output is judged alone).
* geqrf.r      ‖AᴴA − RᴴR‖₁ / (max(m,n)·‖A‖₁·‖A‖∞·ε), R the upper trapezoid of the
               result (the Householder vectors below it are implementation-defined:
               not scored).  Row signs of R are free (R ↦ D·R keeps RᴴR).
* qr.q         max(‖I − QᴴQ‖₁/(m·ε), ‖A − Q·triu(QᴴA)‖₁/(max(m,n)·‖A‖₁·ε)) for xORGQR
               downstream of xGEQRF of A: Q's columns span A's leading columns
               in order (QᴴA upper triangular), signs free.
* householder  ‖Q̂ − H₁⋯H_k·I‖₁ / (m·k·ε·Π(1 + |τᵢ|·‖vᵢ‖₂²)) for xORGQR on given
               reflectors (vᵢ from the strict lower part of a, unit first entry).
The two-sided factorisations (eigh, svd, qr) use `two_sided(n)` =
max(30, 2·γ(4n²)/(n·ε)): Householder reductions have backward error
γ̃(c·m·n) with a small constant c the analyses leave open (Higham §19.3,
Demmel–Kahan, the divide and conquer of xSTEDC / xBDSDC); c = 4 is taken
here — a stated assumption, 8n for large n: wrong outputs (zeros, a 1 %
perturbation, another matrix's factors) are off by 1/ε.

Where a program computes on eigen- or singular values (lstsq's rcond mask
and 1/σᵢ), they enter as the range their criterion lets pass
(`values_range`).  Where it computes on U's diagonal (det, slogdet) or
returns L and U apart (`jax.scipy.linalg.lu`), those elements enter as the
range the oracle proves for every evaluation order (oracle/lu_diagonal.py:
ball arithmetic and Schur complements, Higham ch. 9 and 14).

Each ratio is computed in the working format of spec/ops/cholesky.py with
its own rounding bounded, and a result fails only where the whole enclosure
is above the threshold; the high-precision values a criterion compares with
(λ, σ) are stored in the record with a bound on their own error, which
widens the enclosure.
"""
from __future__ import annotations

import contextlib
import dataclasses
import math

import mpmath
import numpy as np

from . import geev
from .dsl import Characterized, Measured
from .ratios import gram_residual, ratio_verdict, zero_nonfinite
from .ops.cholesky import (LAPACK_THRESHOLD, column_norms, component, ct, enclosure, gamma, one_norm, to_working,
                           unit_roundoff, working)
from .types import TensorType, parse_type, tensor_from_hex, tensor_to_hex

MP_EIG_LIMIT = 24   # matrices up to this order get λ, σ from mpmath at 2p + 64 bits (f64); past it, float64


def one_sided(k: int, et) -> float:
    u = unit_roundoff(et)
    return max(LAPACK_THRESHOLD, 4 * gamma(k + 2, u) / (max(k, 1) * u))


def solve_threshold(n: int, growth: float, et) -> float:
    u = unit_roundoff(et)
    return max(LAPACK_THRESHOLD, 2 * gamma(3 * n + 3, u) * max(growth, 1.0) / (max(n, 1) * u))


def two_sided(n: int, et) -> float:
    u = unit_roundoff(et)
    return max(LAPACK_THRESHOLD, 2 * gamma(4 * n * n, u) / (max(n, 1) * u))


# --------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------

def record(prop: str, attributes: dict, operands: list, statement: str, threshold: float, **extra) -> dict:
    """A residual record naming property `prop`: `operands` (array, TensorType) pairs."""
    out = {"property": prop, "attributes": attributes,
           "operands": [{"type": t.mlir, "hex": tensor_to_hex(Characterized._typed(a, t), t)} for a, t in operands],
           "statement": statement, "threshold": threshold}
    out.update(extra)
    return out


def operands_of(rec: dict) -> tuple[list, list]:
    types = [parse_type(o["type"]) for o in rec["operands"]]
    return [tensor_from_hex(o["hex"], t) for o, t in zip(rec["operands"], types)], types


def _plain(rec: dict, result_type: TensorType, actual) -> Measured:
    if "property" in rec:
        arrays, types = operands_of(rec)
        attrs = rec["attributes"]
        if rec["property"] in SLACK_IN_ATTRIBUTES and rec.get("slack") is not None:
            attrs = {**attrs, "slack": rec["slack"]}   # the operand computed upstream: ‖Â − A‖₁ per matrix
        return PROPERTIES[rec["property"]](attrs, arrays, types, result_type, np.asarray(actual))
    inst, operands = Characterized.recall(rec, result_type)
    return inst.spec.semantics.criterion(inst, operands, np.asarray(actual))


def measure(rec: dict, result_type: TensorType, actual) -> Measured:
    """The criterion of a residual record on an output: an op's
    (`rec["op"]`) or a property's here (`rec["property"]`); where the record
    has a `view` (the value moved by data movement downstream,
    oracle/characterized.py), the output is moved back first and the
    scored mask moved forward; where it is marked `conj` (the value
    conjugated by parts downstream, oracle/chains.py), the output is
    conjugated back."""
    if rec.get("conj"):
        rec = {k: v for k, v in rec.items() if k != "conj"}
        actual = np.conj(np.asarray(actual))
    view = rec.get("view")
    if not view:
        return _plain(rec, result_type, actual)
    t0 = parse_type(view["type"])
    src = np.asarray(view["src"], dtype=np.int64)
    shape0 = tuple(int(d) for d in t0.shape)
    a = np.asarray(actual)
    orig = np.zeros(shape0, dtype=a.dtype).reshape(-1)
    sel = src >= 0
    orig[src[sel]] = a.reshape(-1)[sel]
    m = _plain({k: v for k, v in rec.items() if k != "view"}, t0, orig.reshape(shape0))
    s0 = np.ones(shape0, dtype=bool) if m.scored is None else np.broadcast_to(m.scored, shape0)
    scored = np.zeros(src.shape, dtype=bool)
    scored[sel] = s0.reshape(-1)[src[sel]]
    return dataclasses.replace(m, scored=scored.reshape(a.shape))


# --------------------------------------------------------------------------
# Numbers
# --------------------------------------------------------------------------

def permute_rows(a: np.ndarray, pivots: np.ndarray) -> np.ndarray:
    """P·A for LAPACK's 1-based row interchanges (row i swapped with pivots[i], in order)."""
    out = np.array(a, copy=True)
    for idx in np.ndindex(*pivots.shape[:-1]):
        m = out[idx]
        for i, p in enumerate(pivots[idx]):
            p = int(p) - 1
            if p != i:
                m[[i, p]] = m[[p, i]]
    return out


# --------------------------------------------------------------------------
# xGETRF
# --------------------------------------------------------------------------

GETRF_STATEMENT = ("‖P·A − L·U‖₁ / (k·max(‖A‖₁, ‖|L|·|U|‖₁)·ε) (LAPACK dget01), P the oracle's pivots, "
                   "L unit lower with |lᵢⱼ| ≤ 1 (√2 complex)")


def getrf_lu(attrs, arrays, types, rt, actual) -> Measured:
    (a,), (ta,) = arrays, types
    et = ta.element_type
    m, n = (int(d) for d in ta.shape[-2:])
    k = min(m, n)
    thr = one_sided(k, et)
    if 0 in tuple(int(d) for d in ta.shape):
        return Measured(0.0, thr, True, "no element")
    _, uw = working(et)
    piv = np.asarray(attrs["pivots"], dtype=np.int64).reshape(tuple(int(d) for d in ta.shape[:-2]) + (k,))
    PA = permute_rows(to_working(a, et), piv)
    F, finite = zero_nonfinite(to_working(actual, et))
    L = np.tril(F[..., :, :k], -1) + np.eye(m, k)
    U = np.triu(F[..., :k, :])
    LU = np.abs(L) @ np.abs(U)
    den = k * np.maximum(one_norm(PA), one_norm(LU)) * unit_roundoff(et)
    v, lo, hi = enclosure(one_norm(PA - L @ U), gamma(k + 2, uw) * one_norm(LU + np.abs(PA)), den, gamma(k + 3, uw))
    bound = (math.sqrt(2) if et.is_complex else 1.0) * (1 + 2 * unit_roundoff(et))
    small = (np.abs(np.tril(F[..., :, :k], -1)) <= bound).all(axis=(-2, -1))
    return ratio_verdict([("‖P·A − L·U‖₁/(k·max(‖A‖₁,‖|L||U|‖₁)·ε)", v, lo, hi)], thr, finite, small, "matrices",
                    extra="a multiplier |lᵢⱼ| above the partial-pivoting bound")


def lu_pivoting(a: np.ndarray, et) -> tuple[np.ndarray, np.ndarray, np.ndarray, str | None]:
    """LU with partial pivoting as xGETRF defines it (pivot: the first entry
    of largest |re|+|im| in the column), per matrix of a batch, in high
    precision: (lu in float64/complex128, pivots 1-based int32, growth
    ‖|L||U|‖₁/‖A‖₁ per matrix, why the pivots are not stated or None).
    The pivots are stated only where every choice is decisive: the largest
    candidate exceeds every other by more than twice the rounding any
    evaluation order can make in the Schur complement, γ(j+2)·(|L|·|U| + |A|)
    (Higham Thm 9.3) — else a backend may legitimately pick another row.
    That margin is first-order: Thm 9.3 bounds it with the backend's own
    computed factors, taken here at the exact ones, and the earlier steps'
    errors, which the leading block's inverse can amplify in the Schur
    complement, are not carried.  The rigorous enclosures of
    oracle/lu_diagonal.py (the same elimination in balls and boxes) agree
    where they decide, but they cannot decide every pivot the margin does
    past about 48×48 in f32: there the stated pivots rest on this margin."""
    a = np.asarray(a)
    shape = a.shape
    m, n = shape[-2:]
    k = min(m, n)
    batch = shape[:-2]
    cplx = et.is_complex
    u = unit_roundoff(et)
    p = component(et).format.precision
    lu_out = np.zeros(shape, dtype=np.complex128 if cplx else np.float64)
    piv_out = np.zeros(batch + (k,), dtype=np.int32)
    growth = np.ones(batch)
    why = None
    for idx in np.ndindex(*batch):
        if m * n * k > MP_LU_LIMIT:   # past mpmath's budget: the same elimination in the widest numpy format
            lu, piv, why_here = _lu_numpy(np.asarray(a[idx]), cplx, u)
            why = why or why_here
            lu_out[idx], piv_out[idx] = lu, piv
            L, U = np.tril(lu[:, :k], -1) + np.eye(m, k), np.triu(lu[:k, :])
            na = np.abs(np.asarray(a[idx], dtype=lu.dtype)).sum(axis=0).max() if n else 0.0
            growth[idx] = float(np.abs(np.abs(L) @ np.abs(U)).sum(axis=0).max() / na) if na > 0 else 1.0
            continue
        with mpmath.workprec(2 * p + 64):
            A = [[mpmath.mpc(complex(x)) if cplx else mpmath.mpf(float(x)) for x in row] for row in a[idx]]
            W = [r[:] for r in A]
            order = list(range(m))
            bound = [[abs(x) for x in row] for row in A]   # |A| permuted along, plus |L||U| accumulated
            piv = []
            for j in range(k):
                def size(z):
                    return abs(mpmath.re(z)) + abs(mpmath.im(z)) if cplx else abs(z)
                cand = [size(W[i][j]) for i in range(j, m)]
                best = max(range(len(cand)), key=lambda t: (cand[t], -t))
                top = cand[best]
                slack = [2 * gamma(j + 2, u) * bound[i][j] * (math.sqrt(2) if cplx else 1) for i in range(j, m)]
                if top <= 2 * slack[best]:
                    why = why or (f"pivot {j + 1} is zero, or within the rounding of the elimination of zero: "
                                  "xGETRF's info may be > 0 (the matrix is singular or nearly)")
                for t in range(len(cand)):
                    if t != best and cand[t] + slack[t] >= top - slack[best]:
                        why = why or (f"pivot {j + 1}: two candidates within the rounding of the elimination "
                                      "(a backend may pick either)")
                r = j + best
                piv.append(r + 1)
                W[j], W[r] = W[r], W[j]
                bound[j], bound[r] = bound[r], bound[j]
                order[j], order[r] = order[r], order[j]
                if top == 0:
                    continue
                for i in range(j + 1, m):
                    W[i][j] = W[i][j] / W[j][j]
                    for c in range(j + 1, n):
                        W[i][c] = W[i][c] - W[i][j] * W[j][c]
                        bound[i][c] = bound[i][c] + abs(W[i][j]) * abs(W[j][c])
            lu = np.array([[complex(x) if cplx else float(x) for x in row] for row in W])
        lu_out[idx] = lu
        piv_out[idx] = piv
        L = np.tril(lu[:, :k], -1) + np.eye(m, k)
        U = np.triu(lu[:k, :])
        na = np.abs(np.asarray(a[idx], dtype=lu.dtype)).sum(axis=0).max() if n else 0.0
        growth[idx] = float(np.abs(np.abs(L) @ np.abs(U)).sum(axis=0).max() / na) if na > 0 else 1.0
    return lu_out, piv_out, growth, why


MP_LU_LIMIT = 30_000   # scalar operations of xGETRF's reference in mpmath; past it, long double


def _lu_numpy(a: np.ndarray, cplx: bool, u: float):
    """`lu_pivoting` on one matrix in long double (the decisiveness margin as there)."""
    W = a.astype(np.clongdouble if cplx else np.longdouble)
    m, n = W.shape
    bound = np.abs(W).astype(np.longdouble)
    piv, why = [], None
    for j in range(min(m, n)):
        col = W[j:, j]
        cand = (np.abs(col.real) + np.abs(col.imag)) if cplx else np.abs(col)
        best = int(np.argmax(cand))
        top = cand[best]
        slack = 2 * gamma(j + 2, u) * bound[j:, j] * (math.sqrt(2) if cplx else 1)
        if top <= 2 * slack[best]:
            why = why or f"pivot {j + 1} is zero, or within the rounding of the elimination of zero"
        others = np.delete(cand + slack, best)
        if others.size and (others >= top - slack[best]).any():
            why = why or f"pivot {j + 1}: two candidates within the rounding of the elimination (a backend may pick either)"
        r = j + best
        piv.append(r + 1)
        W[[j, r]], bound[[j, r]] = W[[r, j]], bound[[r, j]]
        if top == 0:
            continue
        W[j + 1:, j] /= W[j, j]
        W[j + 1:, j + 1:] -= np.outer(W[j + 1:, j], W[j, j + 1:])
        bound[j + 1:, j + 1:] += np.outer(np.abs(W[j + 1:, j]), np.abs(W[j, j + 1:]))
    return W.astype(np.complex128 if cplx else np.float64), np.array(piv, dtype=np.int32), why


# --------------------------------------------------------------------------
# Linear systems downstream of a factorisation
# --------------------------------------------------------------------------

SOLVE_STATEMENT = "‖M·x − c‖₁ / (n·‖M‖₁·‖x‖₁·ε) per right-hand side (LAPACK dget02/dpot02)"


def linear_solve(attrs, arrays, types, rt, actual) -> Measured:
    (M, c), (tm, tc) = arrays, types
    et = tc.element_type
    n = int(tm.shape[-1])
    thr = float(attrs["threshold"])
    if 0 in tuple(int(d) for d in tc.shape):
        return Measured(0.0, thr, True, "no element")
    _, uw = working(et)
    Mw, C = to_working(M, et), to_working(c, et)
    X = to_working(actual, et)
    finite = np.isfinite(X).all(axis=-2)
    X = np.where(np.isfinite(X), X, 0)
    dm, dc = solve_slack(attrs, tc)
    xn = column_norms(X)
    # M, c approximate upstream (`solve_slack`): ‖M·x − c‖₁ may exceed the backend's own residual by dm·‖x‖₁ + dc
    give = np.nextafter((dm[..., None] * xn + dc) * (1 + 2.0 ** -50), np.inf)
    v, lo, hi = enclosure(np.maximum(column_norms(Mw @ X - C) - give, 0),
                          gamma(n + 2, uw) * column_norms(np.abs(Mw) @ np.abs(X) + np.abs(C)),
                          n * (one_norm(Mw) + dm)[..., None] * xn * unit_roundoff(et), gamma(n + 3, uw))
    return ratio_verdict([("‖M·x − c‖₁/(n·‖M‖₁·‖x‖₁·ε)", v, lo, hi)], thr, finite, np.ones(finite.shape, bool),
                    "right-hand sides")


def solve_slack(attrs: dict, tc: TensorType) -> tuple[np.ndarray, np.ndarray]:
    """(dm per matrix, dc per right-hand side) of a "linear_solve" record:
    ‖M̂ − M‖₁ and ‖ĉ − c‖₁ at most, where M or c was computed upstream and
    the backend solved its own M̂·x = ĉ (oracle/chains.py `matrix_slack`,
    `column_slack`); zeros for exact ones.  The criterion then asks
    ‖M·x − c‖₁ − dm·‖x‖₁ − dc ≤ thr·n·(‖M‖₁ + dm)·‖x‖₁·ε — what every x
    with M̂·x − ĉ within the threshold for some M̂, ĉ of those ranges meets."""
    batch = tuple(int(d) for d in tc.shape[:-2])
    k = int(tc.shape[-1])
    sl = attrs.get("slack") or {}
    dm = np.asarray(sl.get("M", 0.0), dtype=np.float64)
    dc = np.asarray(sl.get("c", 0.0), dtype=np.float64)
    return np.broadcast_to(dm.reshape(batch) if dm.size > 1 else dm.reshape(()), batch), \
        np.broadcast_to(dc.reshape(batch + (k,)) if dc.size > 1 else dc.reshape(()), batch + (k,))


SOLVE_RANGE_LIMIT = 256   # systems of this order or less get a range downstream (arb's inverse: 0.06 s at 128)
SOLVE_RANGE_WORK = 1 << 27   # and n³ summed over the batch at most this (8 systems of 256: about 4 s in arb)


@contextlib.contextmanager
def arb_precision(et):
    """arb's working precision for a format's ranges: 2p + 64 bits, restored after."""
    from flint import ctx
    old = ctx.prec
    ctx.prec = 2 * component(et).format.precision + 64
    try:
        yield
    finally:
        ctx.prec = old


def _upper_max(xs):
    """The largest upper end of arb balls, as an arb (0 for none)."""
    from flint import arb
    return max(xs, key=lambda x: float(x.upper()), default=arb(0))


def _one_norm_above(m: np.ndarray):
    """‖m‖₁ of a float64 matrix as an arb, at its upper end (every value exact in arb)."""
    from flint import arb
    return _upper_max(sum((arb(abs(float(v))) for v in m[:, j]), arb(0)) for j in range(m.shape[-1]))


def solve_range(rec: dict) -> tuple[np.ndarray, np.ndarray] | None:
    """(low, high) float64 per element of x for a real "linear_solve"
    record: every x its criterion (`linear_solve`) lets pass — what a
    backend's solution may be where a program computes on it
    (oracle/chains.py `as_range`); None where no such range is proven
    (complex, an order past SOLVE_RANGE_LIMIT or a batch past
    SOLVE_RANGE_WORK, M singular or too ill-conditioned for it: κ₁ past
    about 1/(2·t·n·ε)).

    The criterion passes x where the low end of its ratio's enclosure is at
    most the threshold thr (`_verdict`): (num − give − err)·(1 − g) ≤
    thr·den·(1 + g), num, den and err computed with a relative error of at
    most g = γ_w(n+3) each, num within err of the true N = ‖M·x − c‖₁, err
    ≤ γ_w(n+2)·(‖M‖₁·‖x‖₁ + ‖c‖₁), give = dm·‖x‖₁ + dc and den =
    n·(‖M‖₁ + dm)·‖x‖₁·ε (`solve_slack`: 0 for an exact M and c).  So per
    right-hand side N ≤ A₁·‖x‖₁ + A₀ with Q = (1 + g)³,
      A₁ = Q·(dm + thr·q·n·(‖M‖₁ + dm)·ε + 2γ_w(n+2)·‖M‖₁),  q = (1+g)/(1−g),
      A₀ = Q·(dc + 2γ_w(n+2)·‖c‖₁).
    With r = M·x − c, x − x* = M⁻¹·r: |xᵢ − x*ᵢ| ≤ maxₖ|M⁻¹ᵢₖ|·(A₁·‖x‖₁ + A₀),
    and ‖x‖₁ ≤ (‖x*‖₁ + ‖M⁻¹‖₁·A₀)/(1 − ‖M⁻¹‖₁·A₁) (required ‖M⁻¹‖₁·A₁ ≤
    1/2).  M⁻¹ and x* = M⁻¹·c are arb balls (python-flint's arb_mat,
    2p + 64 bits: a certified inverse or none), every sum of the bound
    taken at the balls' upper ends, the ends rounded outward to float64."""
    from flint import arb, arb_mat
    (M, c), (tm, tc) = operands_of(rec)
    et = tc.element_type
    n = int(tm.shape[-1])
    batch = int(np.prod(tuple(int(d) for d in tc.shape[:-2]), dtype=np.int64))
    if et.is_complex or not 0 < n <= SOLVE_RANGE_LIMIT or batch * n ** 3 > SOLVE_RANGE_WORK:
        return None
    eps = unit_roundoff(et)
    _, uw = working(et)
    g, gr = gamma(n + 3, uw), gamma(n + 2, uw)
    q, Q = (1 + g) / (1 - g), (1 + g) ** 3 * (1 + 2.0 ** -40)
    thr = float(rec["attributes"]["threshold"])
    dms, dcs = solve_slack(rec["attributes"], tc)
    Mf, Cf = np.asarray(M, dtype=np.float64), np.asarray(c, dtype=np.float64)   # every value of a real format is one
    lo, hi = np.empty(Cf.shape), np.empty(Cf.shape)
    with arb_precision(et):
        for idx in np.ndindex(*Cf.shape[:-2]):
            m, cc = Mf[idx], Cf[idx]
            dm = arb(float(dms[idx]))
            try:
                inv = arb_mat(m.tolist()).inv()
            except ZeroDivisionError:   # singular, or not certified invertible at this precision
                return None
            x = inv * arb_mat(cc.tolist())
            norm_m = _one_norm_above(m)
            a1 = (arb(Q) * (dm + arb(thr * q) * n * eps * (norm_m + dm) + 2 * arb(gr) * norm_m)).upper()
            a0 = [(arb(Q) * (arb(float(dcs[idx + (j,)])) + 2 * arb(gr) * sum((arb(abs(float(v))) for v in cc[:, j]),
                                                                             arb(0)))).upper()
                  for j in range(cc.shape[-1])]
            if not _about(inv, x, a1, a0, lo[idx], hi[idx]):
                return None
    return np.nextafter(lo, -np.inf), np.nextafter(hi, np.inf)


def _about(inv, x, a1, a0: list, lo: np.ndarray, hi: np.ndarray) -> bool:
    """Fill lo, hi (n × k) with x ± maxₖ|inv_ik|·(a1·‖x̂‖₁ + a0ⱼ) per column
    j: every x̂ with M·(x̂ − x) = r, ‖r‖₁ ≤ a1·‖x̂‖₁ + a0ⱼ, inv = M⁻¹ (arb
    balls, x = M⁻¹·c) — ‖x̂‖₁ ≤ (‖x‖₁ + ‖M⁻¹‖₁·a0ⱼ)/(1 − ‖M⁻¹‖₁·a1); False
    where ‖M⁻¹‖₁·a1 is not below 1/2 (no range proven)."""
    from flint import arb
    n = inv.nrows()
    absinv = [[abs(inv[i, j]).upper() for j in range(n)] for i in range(n)]
    big = _upper_max(sum((absinv[i][j] for i in range(n)), arb(0)) for j in range(n))
    k = (big * a1).upper()
    if not k.upper() < 0.5:
        return False
    rows = [_upper_max(r) for r in absinv]
    for j, a0j in enumerate(a0):
        xnorm = ((sum((abs(x[i, j]).upper() for i in range(n)), arb(0)) + big * a0j) / (1 - k)).upper()
        spread = (a1 * xnorm + a0j).upper()
        for i in range(n):
            d = (rows[i] * spread).upper()
            lo[i, j] = float((x[i, j] - d).lower())
            hi[i, j] = float((x[i, j] + d).upper())
    return True


def lstsq_range(rec: dict) -> tuple[np.ndarray, np.ndarray] | None:
    """(low, high) float64 per element of x for a real "lstsq" record:
    every x its criterion (`lstsq`) lets pass — what a backend's solution
    may be where a program computes on it (`jnp.polyfit` divides it by the
    columns' scales; oracle/chains.py `as_range`); None where no range is
    proven (complex; a record whose A or b was computed upstream; past
    SOLVE_RANGE_LIMIT columns or SOLVE_RANGE_WORK; AᴴA not certified
    invertible or too ill-conditioned).

    The criterion passes x where the low end of its ratio's enclosure is at
    most thr: (num − err)·(1 − g) ≤ thr·den·(1 + g), num = ‖Aᴴ(A·x − b)‖₁
    computed within err ≤ γ_w(2m+4)·‖|Aᴴ|·(|A|·|x| + |b|)‖₁ of the true
    ‖G‖₁, den = big·N·(‖b‖₁ + N·‖x‖₁)·ε, each with a relative error of at
    most g = γ_w(big+3).  So ‖G‖₁ ≤ a1·‖x‖₁ + a0 with Q = (1 + g)³,
    q = (1 + g)/(1 − g):
      a1 = Q·(thr·q·big·N²·ε + 2γ_w(2m+4)·‖|Aᴴ|·|A|‖₁),
      a0 = Q·(thr·q·big·N·ε·‖b‖₁ + 2γ_w(2m+4)·‖|Aᴴ|·|b|‖₁).
    And G = AᴴA·(x − x*), x* = (AᴴA)⁻¹·Aᴴb the least-squares solution of
    the exact A and b: the bound of `_about` with M = AᴴA, in arb."""
    from flint import arb, arb_mat
    if rec.get("ranged") or rec.get("slack"):
        return None
    (A, b), (ta, tb) = operands_of(rec)
    et = tb.element_type
    m, n = (int(d) for d in ta.shape[-2:])
    big = max(m, n)
    batch = int(np.prod(tuple(int(d) for d in tb.shape[:-2]), dtype=np.int64))
    if et.is_complex or not 0 < n <= SOLVE_RANGE_LIMIT or m < n or batch * m * n * n > SOLVE_RANGE_WORK:
        return None
    eps = unit_roundoff(et)
    _, uw = working(et)
    g, gr = gamma(big + 3, uw), gamma(2 * m + 4, uw)
    q, Q = (1 + g) / (1 - g), (1 + g) ** 3 * (1 + 2.0 ** -40)
    thr = float(rec["attributes"]["threshold"])
    Af, Bf = np.asarray(A, dtype=np.float64), np.asarray(b, dtype=np.float64)
    lo, hi = np.empty(Bf.shape[:-2] + (n, Bf.shape[-1])), np.empty(Bf.shape[:-2] + (n, Bf.shape[-1]))
    with arb_precision(et):
        for idx in np.ndindex(*Bf.shape[:-2]):
            a, bb = Af[idx], Bf[idx]
            at = arb_mat(a.T.tolist())
            try:
                inv = (at * arb_mat(a.tolist())).inv()
            except ZeroDivisionError:
                return None
            x = inv * (at * arb_mat(bb.tolist()))
            N = max(_one_norm_above(a), _one_norm_above(a.T), key=lambda v: float(v.upper()))
            gram = np.abs(a.T) @ np.abs(a)   # nonnegative terms: float64 sums, rounded up below
            pad = arb(1 + (m + 2) * 2.0 ** -53)
            a1 = (arb(Q) * (arb(thr * q) * big * eps * N * N + 2 * arb(gr) * _one_norm_above(gram) * pad)).upper()
            ab = np.abs(a.T) @ np.abs(bb)
            a0 = [(arb(Q) * (arb(thr * q) * big * eps * N * sum((arb(abs(float(v))) for v in bb[:, j]), arb(0))
                             + 2 * arb(gr) * sum((arb(float(v)) for v in ab[:, j]), arb(0)) * pad)).upper()
                  for j in range(bb.shape[-1])]
            if not _about(inv, x, a1, a0, lo[idx], hi[idx]):
                return None
    return np.nextafter(lo, -np.inf), np.nextafter(hi, np.inf)


CHOLESKY_RANGE_LIMIT = SOLVE_RANGE_LIMIT   # the same arb inverse, and one product L·Lᵀ more


def _chol_gap(g):
    """f₋(g) = (√2 − √(2 − 4g))/2 = 2g/(√2 + √(2 − 4g)) of `cholesky_range`, as an arb ball (g < 1/2)."""
    from flint import arb
    two = arb(2)
    return 2 * g / (two.sqrt() + (two - 4 * g).sqrt())


def cholesky_gap_above(g: float) -> float:
    """f₋(g) (`_chol_gap`) as a float64 rounded up, for a float g; inf for g ≥ 1/2 (no bound).  The upper
    triangular T with a positive diagonal and TᵀT = I + K, ‖K‖_F ≤ g, has ‖T − I‖_F ≤ f₋(g) (`cholesky_range`'s
    argument; oracle/unique_qr.py reads it too)."""
    if not g < 0.5:
        return math.inf
    from flint import arb
    return float(np.nextafter(float(_chol_gap(arb(g)).upper()), np.inf))


def _ratio_bound(thr: float, n: int, et, lead: float) -> float | None:
    """The largest true ratio a criterion computed as spec/ops/cholesky.py's
    `enclosure` passes at threshold thr: its high end lo·q² + 2q·err/den,
    with err's share at most G·(lead + n²·ε·t) of the ratio's scale — t ≤
    q²·(thr + 2G·lead)/(1 − 2q²·G·n²·ε), q = (1 + g_w)/(1 − g_w), g_w =
    γ_w(n+3), G = γ_w(2n+2)/(n·ε) (`cholesky_range`, `cholesky_solve_range`);
    None where no bound holds."""
    eps = unit_roundoff(et)
    _, uw = working(et)
    gw, G = gamma(n + 3, uw), gamma(2 * n + 2, uw) / (n * eps)
    Q = ((1 + gw) / (1 - gw)) ** 2
    if not 2 * Q * G * n * n * eps < 1:
        return None
    return Q * (thr + 2 * G * lead) / (1 - 2 * Q * G * n * n * eps) * (1 + 2.0 ** -40)


@dataclasses.dataclass
class _CholeskyBall:
    """What `cholesky_range` proves of one matrix A (arb balls at upper ends):
    numpy's factor Lc, √aᵢᵢ, ‖A⁻¹‖₁, and f, f_c — every factor the criterion
    passes is L·(I + F) with ‖F‖_F ≤ f, and Lc = L·(I + F_c), ‖F_c‖_F ≤ f_c."""
    Lc: np.ndarray
    root: list
    inv_norm: object
    f: object
    fc: object


def _cholesky_ball(a: np.ndarray, et, tt: float, dm: float = 0.0) -> _CholeskyBall | None:
    """`_CholeskyBall` of a real symmetric A (float64, the record's values),
    t = tt the largest ratio the criterion passes (`cholesky_range`'s
    docstring), dm ‖Â − A‖₁ at most where A was computed upstream; None
    where A is not certified invertible, numpy's factor fails, or g or g_c
    is not below 1/2.  Call with arb's precision set."""
    from flint import arb, arb_mat
    n = a.shape[-1]
    try:
        Lc = np.linalg.cholesky(a)
        inv = arb_mat(a.tolist()).inv()
    except (np.linalg.LinAlgError, ZeroDivisionError):   # not positive definite in float64; not certified
        return None
    if not (np.isfinite(Lc).all() and (np.diagonal(Lc) > 0).all()):
        return None
    big = _upper_max(sum((abs(inv[i, j]).upper() for i in range(n)), arb(0)) for j in range(n))
    norm_a = _one_norm_above(a)
    T = arb(tt) * n * unit_roundoff(et) * (norm_a + arb(dm)) + arb(dm)
    g = (big * arb(n).sqrt() * T).upper()
    L = arb_mat(Lc.tolist())
    E = L * L.transpose() - arb_mat(a.tolist())
    frob = sum((E[i, j] ** 2 for i in range(n) for j in range(n)), arb(0)).sqrt()
    gc = (big * frob).upper()
    if not (float(g.upper()) < 0.5 and float(gc.upper()) < 0.5):
        return None
    return _CholeskyBall(Lc, [arb(float(a[i, i])).sqrt().upper() for i in range(n)], big,
                         _chol_gap(g).upper(), _chol_gap(gc).upper())


def _cholesky_balls(A: np.ndarray, et, tt: float, slack) -> dict | None:
    """`_cholesky_ball` of every matrix of the batch A (index -> ball), the
    record's per-matrix `slack` added; None where one has none.  Call with
    arb's precision set (`arb_precision`)."""
    dms = _batch_slack(slack, A.shape[:-2])
    balls = {idx: _cholesky_ball(A[idx], et, tt, float(dms[idx])) for idx in np.ndindex(*A.shape[:-2])}
    return None if any(b is None for b in balls.values()) else balls


def _batch_slack(slack, batch: tuple) -> np.ndarray:
    """A record's per-matrix slack (a flat list, or None: 0) shaped as the batch."""
    return np.zeros(batch) if slack is None else np.asarray(slack, dtype=np.float64).reshape(batch)


def _cholesky_matrices(operand: dict, lower: bool):
    """(A per batch index as float64, its type) of a cholesky operand read
    from the triangle `lower` names; None for complex or oversized ones."""
    from .ops.cholesky import hermitian
    t = parse_type(operand["type"])
    n = int(t.shape[-1])
    batch = int(np.prod(tuple(int(d) for d in t.shape[:-2]), dtype=np.int64))
    if t.element_type.is_complex or not 0 < n <= CHOLESKY_RANGE_LIMIT or batch * n ** 3 > SOLVE_RANGE_WORK:
        return None
    return hermitian(np.asarray(tensor_from_hex(operand["hex"], t), dtype=np.float64), lower), t


def cholesky_range(rec: dict) -> tuple[np.ndarray, np.ndarray] | None:
    """(low, high) float64 per element of a real cholesky record's result:
    every factor its criterion (spec/ops/cholesky.py `criterion`) lets pass,
    on the triangle it reads — NaN on the other, which the criterion does
    not read (oracle/chains.py `as_range` states it only where the program
    fixed it); None where no range is proven (complex, an order past
    CHOLESKY_RANGE_LIMIT or a batch past SOLVE_RANGE_WORK, the record's
    behaviour undefined, A not certified invertible, or too ill-conditioned:
    g ≥ 1/2 below).

    The criterion passes L̃ (lower triangular — for `lower` = false, the
    transpose of the upper triangle —, positive diagonal) where the low end
    of its ratio's enclosure is at most thr; its true ratio is then at most
    t (`_ratio_bound`, lead n + 1: ‖|L̃|·|L̃ᵀ|‖₁ ≤ n·(max aᵢᵢ + ‖E‖₁), the rows
    of L̃ having norms √(aᵢᵢ + eᵢᵢ)).  So L̃·L̃ᵀ = A + E with E symmetric and
    ‖E‖₁ ≤ T = t·n·‖A‖₁·ε.  Where A was computed upstream (the record's
    `slack`: the backend factors its own Â, ‖Â − A‖₁ ≤ dm,
    oracle/chains.py `matrix_slack`), L̃ passes against Â and
    T = t·n·(‖A‖₁ + dm)·ε + dm.

    A perturbation bound that holds for every such L̃, not only to first
    order: with L the exact factor of A, M = L⁻¹·L̃ is lower triangular with
    a positive diagonal and M·Mᵀ = I + H, H = L⁻¹·E·L⁻ᵀ, ‖H‖_F ≤ ‖A⁻¹‖₂·‖E‖_F
    ≤ g = ‖A⁻¹‖₁·√n·T (A⁻¹ and E symmetric).  F = M − I is lower
    triangular, so F = Φ(H − F·Fᵀ), Φ taking the strict lower part and half
    the diagonal, ‖Φ(X)‖_F ≤ ‖X‖_F/√2 for symmetric X: f = ‖F‖_F satisfies
    f² − √2·f + g ≥ 0.  Along A + s·E (s from 0 to 1: convex combinations of
    A and L̃·L̃ᵀ, positive definite, so their factors move continuously from
    L to L̃) f starts at 0 and cannot cross the gap between the roots while
    g < 1/2: f ≤ f₋(g) = (√2 − √(2 − 4g))/2 ≈ g/√2.  Then L̃ − L = L·F and
    |L̃ᵢⱼ − Lᵢⱼ| ≤ ‖row i of L‖₂·‖column j of F‖₂ ≤ √aᵢᵢ·f₋(g) (the rows of L
    have norms √aᵢᵢ).

    L itself is not stored: the centre is numpy's float64 factor L_c, and
    the same bound applied to L_c (its E_c = L_c·L_cᵀ − A evaluated exactly
    in arb, ‖E_c‖_F summed) puts L within √aᵢᵢ·f₋(g_c) of it; the range is
    L_c ± √aᵢᵢ·(f₋(g) + f₋(g_c)).  A⁻¹ is an arb ball (python-flint's
    arb_mat, 2p + 64 bits: a certified inverse or none); every sum is taken
    at upper ends and the ends rounded outward to float64."""
    from flint import arb
    from .ops.cholesky import threshold, triangle
    if rec.get("op") != "cholesky" or rec.get("undefined"):
        return None
    lower = bool(rec["attributes"].get("lower", False))
    got = _cholesky_matrices(rec["operands"][0], lower)
    if got is None:
        return None
    A, t = got
    et, n = t.element_type, int(t.shape[-1])
    tt = _ratio_bound(threshold(n, et), n, et, n + 1)
    if tt is None:
        return None
    lo, hi = np.full(A.shape, np.nan), np.full(A.shape, np.nan)
    with arb_precision(et):
        balls = _cholesky_balls(A, et, tt, rec.get("slack"))
        if balls is None:
            return None
        for idx, ball in balls.items():
            f = ball.f + ball.fc
            for i in range(n):
                w = (ball.root[i] * f).upper()
                for j in range(i + 1):
                    lo[idx + (i, j)] = float((arb(float(ball.Lc[i, j])) - w).lower())
                    hi[idx + (i, j)] = float((arb(float(ball.Lc[i, j])) + w).upper())
    lo, hi = np.nextafter(lo, -np.inf), np.nextafter(hi, np.inf)
    if not lower:   # the upper triangle holds Lᵀ
        lo, hi = np.swapaxes(lo, -1, -2), np.swapaxes(hi, -1, -2)
    keep = triangle(n, lower)
    return np.where(keep, lo, np.nan), np.where(keep, hi, np.nan)


def cholesky_solve_range(operand: dict, c: np.ndarray, tc: TensorType, rows: bool, slack=None, c_slack=None):
    """(low, high) float64 per element of y = L̃⁻¹·c (each column of c; each
    row where `rows`: y·L̃ᵀ = c) for every factor L̃ of A = the cholesky
    operand (its two triangles must agree: on any other the behaviour is
    undefined) that cholesky's criterion passes and every y that
    triangular_solve's criterion passes with that L̃ — the first of a
    Cholesky solve's two solves, computed on (`jax.scipy.stats.
    multivariate_normal.logpdf`: ‖L⁻¹·(x − μ)‖²); None where no range is
    proven (complex, sizes as `cholesky_range`, g or K below not small).

    triangular_solve's criterion (spec/ops/triangular_solve.py) passes y
    where r = L̃·y − c has ‖r‖₁ ≤ T₂·‖y‖₁, T₂ = t₂·n·‖L̃‖₁·ε, t₂ its threshold
    as `_ratio_bound` gives it (lead 2: err ≤ γ_w(2n+2)·(‖L̃‖₁·‖y‖₁ + ‖c‖₁),
    ‖c‖₁ ≤ ‖L̃‖₁·‖y‖₁·(1 + t₂·n·ε)), and ‖L̃‖₁ ≤ Σᵢ√aᵢᵢ·(1 + f) (|Lᵢⱼ| ≤ √aᵢᵢ;
    `cholesky_range`).  With L̃ = L·(I + F), y* = L⁻¹·c:
    y − y* = ((I + F)⁻¹ − I)·y* + (I + F)⁻¹·L⁻¹·r, so D = ‖y − y*‖₂ ≤
    f/(1 − f)·‖y*‖₂ + K·(‖y*‖₂ + D), K = ‖L⁻¹‖₂·√n·T₂/(1 − f) (‖r‖₂ ≤ ‖r‖₁ ≤
    T₂·√n·‖y‖₂, ‖L⁻¹‖₂² = ‖A⁻¹‖₂ ≤ ‖A⁻¹‖₁): D ≤ (f/(1 − f) + K)·‖y*‖₂/(1 − K).
    Where A or c was computed upstream (`slack`, `c_slack`: the backend
    factors its Â and solves with its ĉ, ‖ĉ − c‖₁ ≤ dc per right-hand
    side), f is `cholesky_range`'s with that slack, and L̃·y − c = r + (ĉ − c)
    adds ‖L⁻¹‖₂·dc/(1 − f) to D's numerator.
    The centre is y_c = L_c⁻¹·c in arb (L_c = L·(I + F_c)), y* = (I + F_c)·y_c
    within f_c·‖y_c‖₂ of it; the range is y_c ± (D + f_c·‖y_c‖₂) per column,
    ‖y*‖₂ ≤ (1 + f_c)·‖y_c‖₂."""
    from .ops import triangular_solve as trsm
    from .ops.cholesky import threshold
    if tc.element_type.is_complex:
        return None
    got, other = _cholesky_matrices(operand, True), _cholesky_matrices(operand, False)
    if got is None or not np.array_equal(got[0], other[0]):
        return None
    A, t = got
    et, n = t.element_type, int(t.shape[-1])
    C = np.asarray(c, dtype=np.float64)
    if rows:
        C = np.swapaxes(C, -1, -2)
    if C.shape[:-2] != A.shape[:-2] or C.shape[-2] != n:
        return None
    tt, t2 = _ratio_bound(threshold(n, et), n, et, n + 1), _ratio_bound(trsm.threshold(n, et), n, et, 2)
    if tt is None or t2 is None:
        return None
    dcs = np.zeros(C.shape[:-2] + (C.shape[-1],)) if c_slack is None else \
        np.asarray(c_slack, dtype=np.float64).reshape(C.shape[:-2] + (C.shape[-1],))
    with arb_precision(et):
        balls = _cholesky_balls(A, et, tt, slack)
        if balls is None:
            return None
        try:
            return _first_solve_ends(balls, C, dcs, et, t2, rows)
        except ZeroDivisionError:   # arb could not certify L_c's solve
            return None


def _first_solve_ends(balls: dict, C: np.ndarray, dcs: np.ndarray, et, t2: float, rows: bool):
    """`cholesky_solve_range`'s ends from its balls (its docstring), arb's precision set."""
    from flint import arb, arb_mat
    n = C.shape[-2]
    lo, hi = np.empty(C.shape), np.empty(C.shape)
    for idx, ball in balls.items():
        f, fc, one = ball.f, ball.fc, arb(1)
        norm_l = sum(ball.root, arb(0)) * (one + f)
        K = (ball.inv_norm.sqrt() * arb(n).sqrt() * arb(t2) * n * unit_roundoff(et) * norm_l / (one - f)).upper()
        if not float(K.upper()) < 0.5:
            return None
        y = arb_mat(ball.Lc.tolist()).solve(arb_mat(C[idx].tolist()))
        for j in range(C.shape[-1]):
            yn = sum((y[i, j] ** 2 for i in range(n)), arb(0)).sqrt().upper()
            shift = ball.inv_norm.sqrt() * arb(float(dcs[idx + (j,)])) / (one - f)
            D = (((f / (one - f) + K) * yn * (one + fc) + shift) / (one - K)).upper()
            w = (D + fc * yn).upper()
            for i in range(n):
                lo[idx + (i, j)] = float((y[i, j] - w).lower())
                hi[idx + (i, j)] = float((y[i, j] + w).upper())
    lo, hi = np.nextafter(lo, -np.inf), np.nextafter(hi, np.inf)
    if rows:
        lo, hi = np.swapaxes(lo, -1, -2), np.swapaxes(hi, -1, -2)
    return lo, hi


# --------------------------------------------------------------------------
# Eigen- and singular values (high precision) and the two-sided criteria
# --------------------------------------------------------------------------

def hermitian_read(a: np.ndarray, lower: bool) -> np.ndarray:
    from .ops.cholesky import hermitian
    return hermitian(a, lower)


def spectrum(A: np.ndarray, et, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """(values, error bound per matrix): eigenvalues ascending (`kind`
    "eigh", A Hermitian) or singular values descending ("svd"), as float64,
    with a bound on their distance from the exact ones: half an ulp of
    float64 (plus mpmath's 2^-(2p+64)·‖A‖) where mpmath computes them, and
    8·n·2^-53·N(A) where float64 LAPACK does (f32 inputs, or large f64)."""
    p = component(et).format.precision
    batch = A.shape[:-2]
    m, n = A.shape[-2:]
    k = n if kind == "eigh" else min(m, n)
    vals = np.zeros(batch + (k,))
    err = np.zeros(batch)
    big = max(m, n)
    for idx in np.ndindex(*batch):
        a = np.asarray(A[idx], dtype=np.complex128 if et.is_complex else np.float64)
        na = max(np.abs(a).sum(axis=0).max(initial=0.0), np.abs(a).sum(axis=1).max(initial=0.0))
        if p > 24 and big <= MP_EIG_LIMIT:
            with mpmath.workprec(2 * p + 64):
                M = mpmath.matrix(a.tolist())
                if kind == "eigh":
                    ev = mpmath.eighe(M, eigvals_only=True) if et.is_complex else mpmath.eigsy(M, eigvals_only=True)
                    v = sorted(float(mpmath.re(x)) for x in ev)
                else:
                    sv = mpmath.svd_c(M, compute_uv=False) if et.is_complex else mpmath.svd_r(M, compute_uv=False)
                    v = sorted((float(x) for x in sv), reverse=True)
            vals[idx] = v
            err[idx] = float(np.max(np.abs(v), initial=0.0)) * 2.0 ** -53 + na * 2.0 ** -(2 * p + 60)
        else:
            v = np.linalg.eigvalsh(a) if kind == "eigh" else np.linalg.svd(a, compute_uv=False)
            vals[idx] = v
            err[idx] = 8 * big * 2.0 ** -53 * na
    return vals, err


def _norm_inf(x):
    return one_norm(np.swapaxes(x, -1, -2))


EIGVALS_STATEMENT = "max |ŵᵢ − λᵢ| / (n·‖A‖₁·ε), ascending (LAPACK's eigenvalue tests)"
EIGVECS_STATEMENT = "max(‖I − VᴴV‖₁/(n·ε), ‖A·V − V·Λ‖₁/(2n·‖A‖₁·ε)) (LAPACK dsyt21), signs free"


def _values_check(attrs, arrays, types, actual, kind):
    (a,), (ta,) = arrays, types
    et = ta.element_type
    m, n = (int(d) for d in ta.shape[-2:])
    big = max(m, n)
    thr = two_sided(big, et)
    if 0 in tuple(int(d) for d in ta.shape):
        return Measured(0.0, thr, True, "no element")
    A = hermitian_read(to_working(a, et), bool(attrs["lower"])) if kind == "eigh" else to_working(a, et)
    lam = np.asarray(attrs["values"], dtype=np.float64).reshape(np.shape(actual))
    lam_err = np.asarray(attrs["error"], dtype=np.float64).reshape(np.shape(actual)[:-1])
    w = np.asarray(actual).astype(np.float64)
    finite = np.isfinite(w).all(axis=-1)
    w = np.where(np.isfinite(w), w, 0)
    norm = one_norm(A) if kind == "eigh" else np.maximum(one_norm(A), _norm_inf(A))
    u = unit_roundoff(et)
    diff = np.abs(w - lam).max(axis=-1, initial=0.0)
    v, lo, hi = enclosure(diff, lam_err + 2.0 ** -52 * np.abs(lam).max(axis=-1, initial=0.0),
                          big * norm * u, 2.0 ** -50)
    if kind == "eigh":
        order = (np.diff(w, axis=-1) >= 0).all(axis=-1)
        return ratio_verdict([("max|ŵ − λ|/(n·‖A‖₁·ε)", v, lo, hi)], thr, finite, order, "batches",
                        extra="eigenvalues not ascending")
    order = (np.diff(w, axis=-1) <= 0).all(axis=-1) & (w >= 0).all(axis=-1)
    return ratio_verdict([("max|ŝ − σ|/(max(m,n)·N(A)·ε)", v, lo, hi)], thr, finite, order, "batches",
                    extra="singular values not nonnegative and descending")


def values_range(rec: dict) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) float64 per element of an "eigh.values" or "svd.values"
    record: every value its criterion (`_values_check`) lets pass — within
    threshold·max(m,n)·N(A)·ε of λᵢ, plus the reference's own error and the
    ratio's rounding, rounded outward; singular values nonnegative.  What a
    backend's values may be where a program computes on them
    (oracle/chains.py: `jnp.linalg.lstsq`'s 1/σᵢ)."""
    kind = "eigh" if rec["property"] == "eigh.values" else "svd"
    (a,), (ta,) = operands_of(rec)
    et = ta.element_type
    attrs = rec["attributes"]
    m, n = (int(d) for d in ta.shape[-2:])
    A = hermitian_read(to_working(a, et), bool(attrs["lower"])) if kind == "eigh" else to_working(a, et)
    norm = np.asarray(one_norm(A) if kind == "eigh" else np.maximum(one_norm(A), _norm_inf(A)), dtype=np.float64)
    batch = tuple(int(d) for d in ta.shape[:-2])
    lam = np.asarray(attrs["values"], dtype=np.float64).reshape(batch + (-1,))
    err = np.asarray(attrs["error"], dtype=np.float64).reshape(batch)
    slack = float(rec["threshold"]) * max(m, n) * norm * unit_roundoff(et) * (1 + 2.0 ** -40) \
        + err + 2.0 ** -51 * np.abs(lam).max(axis=-1, initial=0.0)
    if rec.get("slack") is not None and kind == "eigh":
        # the backend factors Â, ‖Â − A‖₁ ≤ dm (chains.matrix_slack), Hermitian: |λᵢ(Â) − λᵢ(A)| ≤ ‖Â − A‖₂ ≤ dm
        # (Weyl), and the criterion's allowance is on ‖Â‖₁ ≤ ‖A‖₁ + dm
        dm = np.asarray(rec["slack"], dtype=np.float64).reshape(batch)
        slack = slack + dm * (1 + float(rec["threshold"]) * max(m, n) * unit_roundoff(et)) * (1 + 2.0 ** -40)
    lo, hi = lam - slack[..., None], lam + slack[..., None]
    lo, hi = np.nextafter(lo, -np.inf), np.nextafter(hi, np.inf)
    return (np.maximum(lo, 0.0) if kind == "svd" else lo), hi


LSTSQ_STATEMENT = ("‖Aᴴ(A·x − b)‖₁ / (max(m,n)·N(A)·(‖b‖₁ + N(A)·‖x‖₁)·ε) per right-hand side, N(A) = "
                   "max(‖A‖₁, ‖A‖∞) (the normal equations' residual: LAPACK dqrt17)")


def lstsq_threshold(big: int, eta: float, et) -> float:
    """`lstsq`'s threshold for x = V·D·Uᴴ·b from an SVD whose scaling D is
    within a relative ρᵢ of 1/σᵢ, η = max σᵢ·ρᵢ / N(A) (oracle/chains.py):
    the SVD's backward error and loss of orthogonality (each `two_sided`,
    the residual meeting both twice), D's deviation — Aᴴ·A·V·Σ⁻¹·Δ·Uᴴ·b =
    V·Σ·Δ·Uᴴ·b, at most η·N(A)·‖b‖ — and the rounding of D's product."""
    u = unit_roundoff(et)
    return 4 * two_sided(big, et) + 2 * (eta + 2 * u) / u


def qr_lstsq_threshold(a: np.ndarray, ta: TensorType, t_q: float) -> float:
    """`lstsq`'s threshold for x from a QR least-squares solve: y = Q̃ᴴ·b
    (a dot at full precision), then R̃·x = y (triangular_solve), with Q̃
    from xORGQR and R̃ from the same xGEQRF (oracle/chains.py
    `_qr_lstsq`).  A is m×n, m ≥ n, u the unit roundoff.  What is
    assumed, each a criterion the project states:

    * Q̃ᴴQ̃ = I + D, ‖D‖₁ ≤ δ = t_q·m·u (qr.q's orthogonality part);
    * A = Q̃·R̃ + E, ‖E‖₁ ≤ e = t_r·big·‖A‖₁·u, t_r = two_sided(big) —
      xGEQRF's contract read whole: its R and the reflectors xORGQR
      multiplies out are one factorisation (LAPACK's dqrt01 test);
    * y = Q̃ᴴb + f, |f| ≤ γ_m·|Q̃ᴴ|·|b| (dot_general, full precision;
      complex: 2·γ_{m+2});
    * R̃x = y + r, ‖r‖₁ ≤ t_s·n·‖R̃‖₁·‖x‖₁·u (triangular_solve's criterion).

    Then Ax − b = Q̃(Q̃ᴴb + f + r) + Ex − b and, with Q̃ᴴ(Q̃Q̃ᴴ − I) = D·Q̃ᴴ,

        Aᴴ(Ax − b) = R̃ᴴ·D·Q̃ᴴb + R̃ᴴ(I + D)(f + r) + R̃ᴴQ̃ᴴE·x + Eᴴ(Ax − b),

    so ‖Aᴴ(Ax − b)‖₁ ≤ α·‖b‖₁ + β·‖x‖₁ with ‖Q̃‖∞ ≤ √(n(1 + δ)),
    ‖Q̃‖₁ ≤ √(m(1 + δ)) (‖Q̃‖₂² ≤ 1 + δ), R̃ = (I + D)⁻¹Q̃ᴴ(A − E) —
    ‖R̃‖₁ ≤ ‖Q̃‖∞(‖A‖₁ + e)/(1 − δ), ‖R̃‖∞ ≤ ‖Q̃‖₁(‖A‖∞ + n·e)/(1 − δ) — and
    ‖E‖∞ ≤ n·‖E‖₁:

        α = ‖R̃‖∞·‖Q̃‖∞·(δ + (1 + δ)·γ) + n·e
        β = ‖R̃‖∞·((1 + δ)·t_s·n·‖R̃‖₁·u + ‖Q̃‖∞·e) + n·e·‖A‖₁.

    The criterion divides by big·N·(‖b‖₁ + N·‖x‖₁)·u, N = max(‖A‖₁, ‖A‖∞):
    the threshold is max(α/(big·N·u), β/(big·N²·u)) over the batch, raised
    by 10⁻⁹ for float64's own rounding here.  None where δ ≥ 1/2 (Q̃ not
    near enough to orthonormal for the bound)."""
    from .ops.triangular_solve import threshold as triangular_threshold
    et = ta.element_type
    m, n = (int(d) for d in ta.shape[-2:])
    big = max(m, n, 1)
    u = unit_roundoff(et)
    A = to_working(a, et).astype(np.complex128 if et.is_complex else np.float64)
    a1, ainf = one_norm(A).reshape(-1), _norm_inf(A).reshape(-1)
    N = np.maximum(a1, ainf)
    delta = t_q * m * u
    if delta >= 0.5:
        return None
    t_r, t_s = two_sided(big, et), triangular_threshold(n, et)
    g = (2 * gamma(m + 2, u) if et.is_complex else gamma(m, u))
    e = t_r * big * a1 * u
    q_inf, q_1 = math.sqrt(n * (1 + delta)), math.sqrt(m * (1 + delta))
    r_1 = q_inf * (a1 + e) / (1 - delta)
    r_inf = q_1 * (ainf + n * e) / (1 - delta)
    alpha = r_inf * q_inf * (delta + (1 + delta) * g) + n * e
    beta = r_inf * ((1 + delta) * t_s * n * r_1 * u + q_inf * e) + n * e * a1
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.maximum(alpha / (big * N * u), beta / (big * N * N * u))
    ratio = np.where(N > 0, ratio, 0.0)
    return float(np.max(ratio, initial=0.0)) * (1 + 1e-9)


def norm_of(a: np.ndarray, ta: TensorType) -> float:
    """N(A) = max(‖A‖₁, ‖A‖∞), the largest over a batch."""
    A = to_working(a, ta.element_type)
    return float(np.max(np.maximum(one_norm(A), _norm_inf(A)), initial=0.0))


def lstsq(attrs, arrays, types, rt, actual) -> Measured:
    """x of min ‖A·x − b‖ for a full-rank A, judged by the normal equations' residual (LSTSQ_STATEMENT)."""
    (a, b), (ta, tb) = arrays, types
    et = tb.element_type
    m, n = (int(d) for d in ta.shape[-2:])
    big = max(m, n)
    thr = float(attrs["threshold"])
    if 0 in np.shape(actual) or 0 in tuple(int(d) for d in ta.shape):
        return Measured(0.0, thr, True, "no element")
    _, uw = working(et)
    A, B = to_working(a, et), to_working(b, et)
    X = to_working(actual, et)
    finite = np.isfinite(X).all(axis=-2)
    X = np.where(np.isfinite(X), X, 0)
    R = A @ X - B
    G = ct(A) @ R
    err = gamma(2 * m + 4, uw) * column_norms(np.abs(ct(A)) @ (np.abs(A) @ np.abs(X) + np.abs(B)))
    N = np.maximum(one_norm(A), _norm_inf(A))[..., None]
    den = big * N * (column_norms(B) + N * column_norms(X)) * unit_roundoff(et)
    v, lo, hi = enclosure(column_norms(G), err, den, gamma(big + 3, uw))
    return ratio_verdict([("‖Aᴴ(Ax − b)‖₁/(max(m,n)·N(A)·(‖b‖₁ + N(A)‖x‖₁)·ε)", v, lo, hi)], thr, finite,
                    np.ones(finite.shape, bool), "right-hand sides")


def eigh_values(attrs, arrays, types, rt, actual):
    return _values_check(attrs, arrays, types, actual, "eigh")


def svd_values(attrs, arrays, types, rt, actual):
    return _values_check(attrs, arrays, types, actual, "svd")


def eigh_vectors(attrs, arrays, types, rt, actual) -> Measured:
    (a,), (ta,) = arrays, types
    et = ta.element_type
    n = int(ta.shape[-1])
    thr = two_sided(n, et)
    if 0 in tuple(int(d) for d in ta.shape):
        return Measured(0.0, thr, True, "no element")
    _, uw = working(et)
    u = unit_roundoff(et)
    A = hermitian_read(to_working(a, et), bool(attrs["lower"]))
    batch = tuple(int(d) for d in ta.shape[:-2])
    lam = np.asarray(attrs["values"], dtype=np.float64).reshape(batch + (n,))
    lam_err = np.asarray(attrs["error"], dtype=np.float64).reshape(batch)
    V, finite = zero_nonfinite(to_working(actual, et))
    g, g_err = gram_residual(V, uw)
    o, o_lo, o_hi = enclosure(g, g_err, n * u, gamma(n + 3, uw))
    Lam = to_working(lam, et.component if et.is_complex else et)
    R = A @ V - V * Lam[..., None, :]
    r_err = gamma(n + 3, uw) * one_norm(np.abs(A) @ np.abs(V) + np.abs(V) * np.abs(Lam)[..., None, :]) \
        + lam_err * one_norm(np.abs(V))
    r, r_lo, r_hi = enclosure(one_norm(R), r_err, 2 * n * one_norm(A) * u, gamma(n + 3, uw))
    return ratio_verdict([("‖I − VᴴV‖₁/(n·ε)", o, o_lo, o_hi), ("‖A·V − V·Λ‖₁/(2n·‖A‖₁·ε)", r, r_lo, r_hi)], thr,
                    finite, np.ones(finite.shape, bool), "matrices")


@dataclasses.dataclass
class _Operand:
    """The one matrix operand of a two-sided factorisation's criterion (svd's
    vectors, QR's R and Q), read once: its format, dims, LAPACK's threshold
    for them, the working format's unit roundoff and the format's, the
    matrix in the working format."""
    et: object
    m: int
    n: int
    big: int
    thr: float
    uw: float
    u: float
    A: np.ndarray
    shape: tuple


def _two_sided_operand(arrays, types) -> _Operand:
    (a,), (ta,) = arrays, types
    et = ta.element_type
    m, n = (int(d) for d in ta.shape[-2:])
    big = max(m, n)
    _, uw = working(et)
    return _Operand(et, m, n, big, two_sided(big, et), uw, unit_roundoff(et), to_working(a, et),
                    tuple(int(d) for d in ta.shape))


SVD_VALUES_STATEMENT = "max |ŝᵢ − σᵢ| / (max(m,n)·max(‖A‖₁,‖A‖∞)·ε), nonnegative, descending"
SVD_VECTORS_STATEMENT = ("max(‖I − UᴴU‖₁/(c·ε), ‖UᴴAAᴴU − Σ²‖₁/(max(m,n)·N(A)²·ε)) (Vᴴ: with AᴴA), signs free; "
                         "U and Vᴴ judged alone")


def svd_vectors(attrs, arrays, types, rt, actual) -> Measured:
    """svd.u (`attrs["side"]` "u": the columns of U) or svd.vt ("vt": the rows of Vᴴ)."""
    op = _two_sided_operand(arrays, types)
    et, m, n, big, thr, uw, u, A = op.et, op.m, op.n, op.big, op.thr, op.uw, op.u, op.A
    if 0 in op.shape or 0 in np.shape(actual):
        return Measured(0.0, thr, True, "no element")
    batch = op.shape[:-2]
    sig = np.asarray(attrs["values"], dtype=np.float64).reshape(batch + (min(m, n),))
    sig_err = np.asarray(attrs["error"], dtype=np.float64).reshape(batch)
    X, finite = zero_nonfinite(to_working(actual, et))
    if attrs["side"] == "vt":
        X = ct(X)                        # V: n × c
        G = ct(A) @ A                   # AᴴA
        absG = np.abs(ct(A)) @ np.abs(A)
    else:
        G = A @ ct(A)
        absG = np.abs(A) @ np.abs(ct(A))
    c = X.shape[-1]
    s2 = np.zeros(batch + (c,))
    s2[..., :min(c, sig.shape[-1])] = sig[..., :c] ** 2
    g, g_err = gram_residual(X, uw)
    o, o_lo, o_hi = enclosure(g, g_err, c * u, gamma(big + 3, uw))
    S2 = to_working(s2, et.component if et.is_complex else et)
    R = ct(X) @ G @ X - np.eye(c) * S2[..., None, :]
    r_err = gamma(2 * big + 4, uw) * one_norm(np.abs(ct(X)) @ absG @ np.abs(X) + np.eye(c) * S2[..., None, :]) \
        + (2 * sig.max(axis=-1, initial=0.0) * sig_err + sig_err ** 2)
    na = np.maximum(one_norm(A), _norm_inf(A))
    r, r_lo, r_hi = enclosure(one_norm(R), r_err, big * na * na * u, gamma(big + 3, uw))
    name = "Vᴴ·AᴴA·V" if attrs["side"] == "vt" else "Uᴴ·AAᴴ·U"
    return ratio_verdict([(f"‖I − XᴴX‖₁/(c·ε)", o, o_lo, o_hi), (f"‖{name} − Σ²‖₁/(max(m,n)·N(A)²·ε)", r, r_lo, r_hi)],
                    thr, finite, np.ones(finite.shape, bool), "matrices")


# --------------------------------------------------------------------------
# QR
# --------------------------------------------------------------------------

QR_R_STATEMENT = ("‖AᴴA − RᴴR‖₁ / (max(m,n)·‖A‖₁·‖A‖∞·ε), R the upper trapezoid (the Householder vectors below "
                  "it not scored)")
QR_Q_STATEMENT = "max(‖I − QᴴQ‖₁/(m·ε), ‖A − Q·triu(QᴴA)‖₁/(max(m,n)·‖A‖₁·ε)) (LAPACK dqrt01), signs free"
HOUSEHOLDER_STATEMENT = "‖Q̂ − H₁⋯H_k‖₁ / (m·k·ε·Π(1 + |τᵢ|·‖vᵢ‖²)) (the product of the given reflectors)"


def geqrf_r(attrs, arrays, types, rt, actual) -> Measured:
    op = _two_sided_operand(arrays, types)
    et, m, n, big, thr, uw, u, A = op.et, op.m, op.n, op.big, op.thr, op.uw, op.u, op.A
    mask = np.broadcast_to(np.triu(np.ones((m, n), dtype=bool)), op.shape)
    if 0 in op.shape:
        return Measured(0.0, thr, True, "no element", mask)
    F = np.where(mask, to_working(actual, et), 0)
    F, finite = zero_nonfinite(F)
    R = F[..., :min(m, n), :]
    res = ct(A) @ A - ct(R) @ R
    err = gamma(big + 2, uw) * one_norm(np.abs(ct(A)) @ np.abs(A) + np.abs(ct(R)) @ np.abs(R))
    v, lo, hi = enclosure(one_norm(res), err, big * one_norm(A) * _norm_inf(A) * u, gamma(big + 3, uw))
    return ratio_verdict([("‖AᴴA − RᴴR‖₁/(max(m,n)·‖A‖₁·‖A‖∞·ε)", v, lo, hi)], thr, finite, np.ones(finite.shape, bool),
                    "matrices", scored=mask)


def qr_q(attrs, arrays, types, rt, actual) -> Measured:
    op = _two_sided_operand(arrays, types)
    et, m, n, big, thr, uw, u, A = op.et, op.m, op.n, op.big, op.thr, op.uw, op.u, op.A
    if 0 in op.shape or 0 in np.shape(actual):
        return Measured(0.0, thr, True, "no element")
    Q, finite = zero_nonfinite(to_working(actual, et))
    c = Q.shape[-1]
    g, g_err = gram_residual(Q, uw)
    o, o_lo, o_hi = enclosure(g, g_err, c * u, gamma(m + 3, uw))
    R = np.triu(ct(Q) @ A)
    res = A - Q @ R
    err = gamma(2 * m + 2, uw) * one_norm(np.abs(A) + np.abs(Q) @ (np.abs(ct(Q)) @ np.abs(A)))
    r, r_lo, r_hi = enclosure(one_norm(res), err, big * one_norm(A) * u, gamma(big + 3, uw))
    return ratio_verdict([("‖I − QᴴQ‖₁/(m·ε)", o, o_lo, o_hi), ("‖A − Q·triu(QᴴA)‖₁/(max(m,n)·‖A‖₁·ε)", r, r_lo, r_hi)],
                    thr, finite, np.ones(finite.shape, bool), "matrices")


QR_Q_POSITIVE_STATEMENT = ("max(‖I − QᴴQ‖₁/(m·ε), t·‖Q − Q₊‖_F/ρ) (Q₊: A's Q with R's diagonal positive; ρ: the "
                           "radius of every Q·sign(diag R) xORGQR's and xGEQRF's criteria let pass, "
                           "oracle/unique_qr.py)")


def qr_q_positive(attrs, arrays, types, rt, actual) -> Measured:
    """Q's orthogonality, as "qr.q", and its Frobenius distance from the
    stored center Q₊ against the stored radius ρ (scaled to the threshold t:
    at most t where ‖Q − Q₊‖_F ≤ ρ)."""
    op = _two_sided_operand(arrays, types)
    et, m, uw, u = op.et, op.m, op.uw, op.u
    thr = float(attrs.get("threshold", op.thr))
    if 0 in op.shape or 0 in np.shape(actual):
        return Measured(0.0, thr, True, "no element")
    Q, finite = zero_nonfinite(to_working(actual, et))
    if "scale" in attrs:   # g·Q: judged as Q·(1 + ε) = (g·Q)/g, the threshold and radius raised for ε (unique_qr.py)
        Q = Q / attrs["scale"]
    c = Q.shape[-1]
    g, g_err = gram_residual(Q, uw)
    o, o_lo, o_hi = enclosure(g, g_err, c * u, gamma(m + 3, uw))
    tc = parse_type(attrs["center"]["type"])
    C = to_working(tensor_from_hex(attrs["center"]["hex"], tc), et)
    rho = np.asarray(attrs["radius"], dtype=np.float64).reshape(op.shape[:-2])
    dist = np.sqrt((np.abs(Q - C) ** 2).sum(axis=(-2, -1)))
    d, d_lo, d_hi = enclosure(dist, 0.0, rho / thr, gamma(m * c + 4, uw))
    return ratio_verdict([("‖I − QᴴQ‖₁/(m·ε)", o, o_lo, o_hi), ("t·‖Q − Q₊‖_F/ρ", d, d_lo, d_hi)],
                    thr, finite, np.ones(finite.shape, bool), "matrices")


def householder_product(a: np.ndarray, tau: np.ndarray, cols: int, et, exact: bool = True):
    """(H₁⋯H_k·I[:, :cols] per matrix, Π(1 + |τᵢ|·‖vᵢ‖²) per matrix): the reflectors
    Hᵢ = I − τᵢ·vᵢ·vᵢᴴ, vᵢ = (0…0, 1, a[i+1:, i]) — in mpmath at 2p + 64 bits
    (`exact`), else float64 / complex128."""
    m = a.shape[-2]
    k = tau.shape[-1]
    batch = a.shape[:-2]
    dt = np.complex128 if et.is_complex else np.float64
    out = np.zeros(batch + (m, cols), dtype=dt)
    scale = np.ones(batch)
    p = component(et).format.precision
    for idx in np.ndindex(*batch):
        av, tv = np.asarray(a[idx], dtype=dt), np.asarray(tau[idx], dtype=dt)
        vs = []
        for i in range(k):
            v = np.zeros(m, dtype=dt)
            v[i] = 1
            v[i + 1:] = av[i + 1:, i]
            vs.append(v)
            scale[idx] *= 1 + abs(tv[i]) * float(np.sum(np.abs(v) ** 2))
        if exact:
            with mpmath.workprec(2 * p + 64):
                Q = mpmath.matrix(m, cols)
                for r in range(min(m, cols)):
                    Q[r, r] = 1
                for i in reversed(range(k)):
                    v = mpmath.matrix([complex(x) if et.is_complex else float(x) for x in vs[i]])
                    t = mpmath.mpc(complex(tv[i])) if et.is_complex else mpmath.mpf(float(tv[i]))
                    w = v.H * Q if et.is_complex else v.T * Q
                    Q = Q - (t * v) * w
                out[idx] = np.array([[complex(Q[r, c]) if et.is_complex else float(Q[r, c]) for c in range(cols)]
                                     for r in range(m)], dtype=dt)
        else:
            Q = np.eye(m, cols, dtype=dt)
            for i in reversed(range(k)):
                Q = Q - tv[i] * np.outer(vs[i], np.conj(vs[i]) @ Q)
            out[idx] = Q
    return out, scale


def householder(attrs, arrays, types, rt, actual) -> Measured:
    (a, tau, product), (ta, tt, _) = arrays, types
    et = ta.element_type
    m = int(ta.shape[-2])
    k = int(tt.shape[-1])
    thr = one_sided(max(m, 1) * max(k, 1), et)
    if 0 in np.shape(actual):
        return Measured(0.0, thr, True, "no element")
    _, uw = working(et)
    Qx = np.asarray(product).astype(np.complex128 if et.is_complex else np.float64)   # f64: the product's operand
    Qx = Qx.astype(np.clongdouble if et.is_complex else np.longdouble) if working(et)[0] is np.longdouble else Qx
    scale = np.asarray(attrs["scale"], dtype=np.float64).reshape(tuple(int(d) for d in ta.shape[:-2]))
    Q, finite = zero_nonfinite(to_working(actual, et))
    v, lo, hi = enclosure(one_norm(Q - Qx), 2.0 ** -50 * one_norm(np.abs(Qx)),
                          max(m * k, 1) * scale * unit_roundoff(et), gamma(m + 3, uw))
    return ratio_verdict([("‖Q̂ − H₁⋯H_k‖₁/(m·k·ε·Π(1+|τ|‖v‖²))", v, lo, hi)], thr, finite, np.ones(finite.shape, bool),
                    "matrices")


def _geev_matrices(arrays, types, actual):
    (a,), (ta,) = arrays, types
    n = int(ta.shape[-1])
    batch = tuple(int(d) for d in ta.shape[:-2])
    return ta, n, batch, np.asarray(actual).astype(np.complex128).reshape((-1,) + np.shape(actual)[len(batch):])


def geev_values(attrs, arrays, types, rt, actual) -> Measured:
    """xGEEV's eigenvalues in any order: spec/geev.py's s* per matrix, against the threshold."""
    ta, n, batch, w = _geev_matrices(arrays, types, actual)
    thr = float(attrs["threshold"])
    discs = geev.slack_discs(attrs)
    s = np.array([geev.values_measure(d, w[i], thr) for i, d in enumerate(discs)]).reshape(batch)
    finite = np.isfinite(w).all(axis=-1).reshape(batch)
    m = ratio_verdict([("s*", s, s, s)], thr, finite, np.ones(batch, bool), "matrices")
    if not m.ok:
        i = int(np.argmax(s.reshape(-1) > thr)) if np.any(s > thr) else 0
        m = dataclasses.replace(m, detail=f"{m.detail}; at s = {thr:g}: {geev.values_detail(discs[i], w[i], thr)}")
    return m


def geev_vectors(attrs, arrays, types, rt, actual) -> Measured:
    """xGEEV's right (or, of Aᴴ, left) eigenvectors, columns in any order, phases free (spec/geev.py)."""
    (a,), (ta,) = arrays, types
    et = ta.element_type
    _, uw = working(et)
    ta, n, batch, V = _geev_matrices(arrays, types, actual)
    A = to_working(a, et).astype(np.complex128).reshape((-1, n, n))
    if attrs.get("left"):
        A = np.conj(np.swapaxes(A, -1, -2))
    thr = float(attrs["threshold"])
    got = [geev.vectors_s(d, A[i], V[i], thr, uw) for i, d in enumerate(geev.slack_discs(attrs))]
    s = np.array([g[0] for g in got]).reshape(batch)
    norm = np.array([g[1] for g in got]).reshape(batch)
    finite = np.isfinite(V).all(axis=(-2, -1)).reshape(batch)
    return ratio_verdict([("s* of the columns' matching", s, s, s), ("max|‖v̂‖₂ − 1|/(n·ε)", norm, norm, norm)], thr,
                    finite, np.ones(batch, bool), "matrices")


PROPERTIES = {"getrf.lu": getrf_lu, "linear_solve": linear_solve, "eigh.values": eigh_values,
              "eigh.vectors": eigh_vectors, "svd.values": svd_values, "svd.u": svd_vectors, "svd.vt": svd_vectors,
              "geqrf.r": geqrf_r, "qr.q": qr_q, "qr.q.positive": qr_q_positive, "householder": householder,
              "lstsq": lstsq, "geev.values": geev_values, "geev.vectors": geev_vectors}
# Properties whose criterion itself widens by a record's `slack` (the others' ranges downstream add it)
SLACK_IN_ATTRIBUTES = ("geev.values", "geev.vectors", "gees.t", "gees.vectors", "gehrd.h", "gehrd.q")

# xGEES's, xGEHRD's and xSYTRD's criteria, in modules of their own
from . import hessenberg as _hessenberg, schur as _schur, tridiagonal as _tridiagonal  # noqa: E402

for _more in (_schur, _hessenberg, _tridiagonal):
    PROPERTIES.update(_more.PROPERTIES)
