"""jaxlib's perturbed tridiagonal solve, read as the solve it computes
(`jax.lax.linalg.tridiagonal_solve(..., perturb_singular=True)`, which
`jax.scipy.linalg.eigh_tridiagonal`'s inverse iteration calls; JAX lowers
it on CPU to `tridiagonal_solve_perturbed_ffi` — jaxlib's own kernel, not
LAPACK's, one target for every element type; registered in
oracle/custom_calls.py).

The call.  Operands dl, d, du (batch×n each) and b (batch×n×k); one
result, x (b's type).  The matrix is xGTSV's (oracle/lapack_gtsv.py):
M = diag(d) + diag(dl[1:], −1) + diag(du[:n−1], +1).

What jaxlib computes (jaxlib/tridiagonal_solve_perturbed.h, "roughly
LAPACK's xLAGTF + xLAGTS"): Gaussian elimination with row interchanges
chosen by *scaled* pivoting (row k+1 is taken where |dlₖ₊₁|/s₂ > |uₖₖ|/s₁,
s the rows' sums of magnitudes), then back substitution in which a pivot
p with |p| < 1 whose quotient would overflow — |p| below the format's
safe minimum σ, or max|rhs row| > |p|/σ — is moved away from zero by
δ = max(ε·max|U|, σ), 2δ, 4δ, … (ε the format's epsilon) until it is not.
So x is the solution of (M + E)·x = b, E = P·L·D, D the diagonal of the
pivots' moves.  This is what inverse iteration needs: the system T − λI
with λ an eigenvalue is singular, and its perturbed solution is large
along the eigenvector.

The judgement: spec/lapack.py's "linear_solve" criterion (LAPACK dget02's
ratio ‖M·x − b‖₁ / (n·‖M‖₁·‖x‖₁·ε)), as xGTSV's, with the threshold
widened by the moves: a pivot moved stops at the first multiple of δ past
T = σ·max(1, max|rhs row|), so each move is at most 2T + δ; where 2T ≤ δ
(checked, below) each is at most 2δ ≤ 4ε·max|U| ≤ 4ε·G·‖M‖₁ (U's entries
are entries of |L|·|U|, L unit lower), and ‖L·D·x‖₁ ≤ 2·4ε·G·‖M‖₁·‖x‖₁ —
16·G/n in the ratio's units (ε = 2u), on top of elimination's own
`solve_threshold(n, G)`.  A singular M passes where x solves the perturbed
system; a scaled x passes there too (the null direction's length is the
perturbation's choice), and the criterion says so: catches-scaling reads
the property as loose, INCONCLUSIVE, not "agrees".

G, the growth ‖|L|·|U|‖₁ / ‖M‖₁: scaled pivoting's multipliers are not
bounded by 1 as partial pivoting's are, and no constant bound like xGTSV's
16 is derived here; the oracle runs jaxlib's elimination in float64
(`eliminate`) and takes G = 2·max(16, its growth).  That is the measured
growth of this matrix, not a bound for every rounding: a backend whose
pivot choices differ at a near-tie may grow more (as geqp3's margin, not a
proof).

The check 2T ≤ δ: the rows of the back substitution grow by at most 1/ε
at each pivot the backend may have to move; the oracle counts the pivots
within 2^8·ε·max|U| of zero in float64 (m of them) and reads the call only
where max(‖b‖∞, max|z|)·(2/ε)^(m+1)·σ ≤ ε·max|U|/2, z the eliminated
right-hand side — else (b some 2^(emax − (m+1)·p) times M's scale, or M
zero) x is any value, labelled.
"""
from __future__ import annotations

import numpy as np

from .lapack_calls import Call, Family, register_target
from .lapack_gtsv import GROWTH, matrix, read_system

TARGET = "tridiagonal_solve_perturbed_ffi"
NEAR_ZERO = 2.0 ** 8   # pivots within NEAR_ZERO·ε·max|U| of zero: ones a backend may have to move
OUT_OF_SCALE = ("b so large against M (or M zero) that jaxlib's pivot moves may grow past ε·max|U|: the threshold's "
                "premise fails (oracle/tridiagonal_perturbed.py)")


def _read(et, cfg, texts, ins, outs):
    read_system(et, texts, ins, outs, ["x"], 0, "tridiagonal_solve_perturbed takes dl, d, du and b and gives x")
    return ()


def eliminate(dl: np.ndarray, d: np.ndarray, du: np.ndarray, b: np.ndarray) -> tuple:
    """jaxlib's forward elimination (scaled pivoting) in float64 or
    complex128, every system of the batch at once (n ≥ 1): (growth
    ‖|L|·|U|‖₁/‖M‖₁, max|U|, jaxlib's max|U| — the entries it scans —, the
    pivots uₖₖ, max|z|) per system, z = L⁻¹·P·b."""
    n = d.shape[-1]
    batch = d.shape[:-1]
    u0, u1, u2 = d.copy(), np.zeros_like(d), np.zeros_like(d)   # U's diagonal and two superdiagonals
    u1[..., :n - 1] = du[..., :n - 1]
    lmul = np.zeros_like(d)            # the multiplier that eliminated row k+1's entry (L's column k)
    z = b.copy()
    absd = np.abs
    scale1 = absd(d[..., 0]) + (absd(du[..., 0]) if n > 1 else 0)
    for k in range(n - 1):
        sub, diag, sup = dl[..., k + 1], d[..., k + 1], du[..., k + 1] if k < n - 2 else np.zeros_like(d[..., 0])
        scale2 = absd(sub) + absd(diag) + absd(sup)
        zero = sub == 0
        with np.errstate(divide="ignore", invalid="ignore"):
            piv1 = np.where(u0[..., k] == 0, 0.0, absd(u0[..., k]) / scale1)
            piv2 = absd(sub) / scale2
            keep = zero | (piv2 <= piv1)
            f_keep = np.where(zero, 0, sub / np.where(u0[..., k] == 0, 1, u0[..., k]))
            f_swap = u0[..., k] / np.where(sub == 0, 1, sub)
        # no interchange: row k+1 -= f·row k
        nk0 = np.where(keep, u0[..., k], sub)
        nk1 = np.where(keep, u1[..., k], diag)
        nk2 = np.where(keep, 0, sup)
        n10 = np.where(keep, diag - f_keep * u1[..., k], u1[..., k] - f_swap * diag)
        n11 = np.where(keep, sup, -f_swap * sup)
        zk, zk1 = z[..., k, :], z[..., k + 1, :]
        new_k = np.where(keep[..., None], zk, zk1)
        new_k1 = np.where(keep[..., None], zk1 - f_keep[..., None] * zk, zk - f_swap[..., None] * zk1)
        z[..., k, :], z[..., k + 1, :] = new_k, new_k1
        u0[..., k], u1[..., k], u2[..., k] = nk0, nk1, nk2
        u0[..., k + 1] = n10
        if k < n - 2:
            u1[..., k + 1] = n11
        lmul[..., k] = np.where(keep, f_keep, f_swap)
        scale1 = np.where(keep, scale2, absd(n10) + absd(n11 if k < n - 2 else 0))
    U = np.stack([absd(u0), absd(u1), absd(u2)], axis=-1)
    # jaxlib's max|U|, the scale of its moves: d₀, du₀, then rows 0 … n−3 as eliminated, then u(n−1, n−1)
    first = np.maximum(absd(d[..., 0]), absd(du[..., 0]) if n > 1 else 0)
    theirs = np.maximum(np.maximum(first, U[..., :max(n - 2, 0), :].max(axis=(-2, -1), initial=0)), absd(u0[..., -1]))
    # |L|·|U| column sums: column j of U feeds row j (L's unit diagonal) and row j+1 (the multiplier below it)
    colsum = np.zeros(batch + (n,))
    for off in range(3):
        col = np.arange(n) + off
        ok = col < n
        w = U[..., off] * (1 + absd(lmul))
        np.add.at(colsum, (Ellipsis, col[ok]), w[..., ok])
    M = matrix(dl, d, du)
    norm = np.abs(M).sum(axis=-2).max(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        growth = np.where(norm > 0, colsum.max(axis=-1) / norm, 1.0)
    return growth, U.max(axis=(-2, -1)), theirs, u0, np.abs(z).max(axis=(-2, -1))


def _run(call: Call) -> list:
    from ..spec import lapack
    from ..spec.ops.cholesky import rounded, unit_roundoff
    from ..spec.types import TensorType
    et = call.et
    (t_x,) = call.result_types
    dl, d, du, b = (np.asarray(v) for v in call.arrays)
    tb = call.ins[3]
    n = int(tb.shape[-2])
    wide = np.complex128 if et.is_complex else np.float64
    dl, d, du, b = (v.astype(wide) for v in (dl, d, du, b))
    M = matrix(dl, d, du)
    if n == 0 or 0 in tb.shape:
        return [call.free(t_x, call.zeros(t_x), "any value (no element)")]
    growth, umax, theirs, pivots, zmax = eliminate(dl, d, du, b)
    c = et.component if et.is_complex else et
    eps = 2 * unit_roundoff(et)
    sigma = float(np.finfo(c.numpy).tiny)
    near = (np.abs(pivots) <= NEAR_ZERO * eps * umax[..., None]).sum(axis=-1)
    rhs = np.maximum(np.abs(b).max(axis=(-2, -1)), zmax)
    with np.errstate(over="ignore"):
        premise = (theirs > 0) & (rhs * (2 / eps) ** (near + 1.0) * sigma <= eps * theirs / 2)
    if not premise.all():
        return [call.free(t_x, call.zeros(t_x), f"any value ({OUT_OF_SCALE})")]
    g = 2 * max(GROWTH, float(growth.max()))
    thr = lapack.solve_threshold(n, g, et) + 16 * g / n
    tm = TensorType(tuple(tb.shape[:-2]) + (n, n), et)
    rec = lapack.record("linear_solve", {"threshold": thr}, [(M.astype(et.numpy), tm), (call.arrays[3], tb)],
                        lapack.SOLVE_STATEMENT, thr)
    ref = _perturbed_solve(M, b)
    return [call.residual(t_x, rounded(ref, et), rec,
                          why=f"{call.sem.reading}: x solves (M + E)·x = b, E jaxlib's moves of pivots near zero, "
                              "M = diag(d) + diag(dl[1:], −1) + diag(du[:n−1], +1) (oracle/tridiagonal_perturbed.py)")]


def _perturbed_solve(M: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A reference x (shown, never judged): numpy's solve where M is
    nonsingular in float64, else the least-squares solution."""
    out = np.zeros(b.shape, M.dtype)
    for idx in np.ndindex(*M.shape[:-2]):
        try:
            out[idx] = np.linalg.solve(M[idx], b[idx])
        except np.linalg.LinAlgError:
            out[idx] = np.linalg.lstsq(M[idx], b[idx], rcond=None)[0]
    return out


register_target(TARGET, "tridiagonal_solve_perturbed",
                Family(_read, _run, title="jaxlib's perturbed tridiagonal solve (scaled pivoting; tiny pivots moved)"),
                "jaxlib's perturbed tridiagonal solve")
