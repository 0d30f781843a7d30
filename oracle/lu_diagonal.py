"""U's diagonal of LU with partial pivoting: every value a backend's xGETRF can return.

`jnp.linalg.det` and `slogdet` compute on U's diagonal (Σ log|ûₖₖ|, the
signs of ûₖₖ and the pivots' parity; det = sign·exp of it).  No value of
û is fixed by LAPACK's definition — only the property of the factors
(spec/lapack.py "getrf.lu") — but every evaluation order leaves ûₖₖ in a
small set, and a program's arithmetic on a set is an ordinary ranged
computation (oracle/propagation.py, affine.py).  `lu_diagonal` encloses
that set rigorously, twice, and keeps the intersection:

* the elimination itself in ball arithmetic (arb), every rounding of every
  order at once (Higham, *Accuracy and Stability of Numerical Algorithms*,
  2nd ed., Lemma 3.1 and the proof of Thm 9.3; §13.1 for the partitioned
  forms LAPACK's recursive xGETRF2, xTRSM and xGEMM use) — tight for small
  n, but its radii wrap, about tenfold every few columns;
* the leading minors (`_minor_balls`): L̂·Û = P·A + E exactly with
  |E| ≤ γ(n+2)·|L̂|·|Û| (Thm 9.3; |L̂|, |Û| from the balls' magnitudes),
  L̂ unit lower triangular, so ûⱼⱼ = det(Bⱼ)/det(Bⱼ₋₁), Bⱼ the leading block
  of P·A + E, and |det(I + M) − 1| ≤ (1 + ‖M‖)ʲ − 1 with M = Cⱼ⁻¹·Eⱼ
  (Higham ch. 14, the determinant's perturbation) — no wrapping, but a
  normwise bound.

Where both are too wide — the matrix ill-conditioned, or f32 past n ≈ 16
— the ranges downstream say so (a verdict too wide to decide is
inconclusive, never "agrees"); where a pivot is not decided by the balls
nothing is stated at all.  Real matrices only: the ranges downstream move a
complex value's components together (propagation.py's corners), which
bounds no |z| over a box.
"""
from __future__ import annotations

import math

import numpy as np

from ..spec.ops.cholesky import component, gamma, unit_roundoff

DIAGONAL_LIMIT = 200_000   # scalar ball operations of `lu_diagonal` (Σ n³/3 over the batch); past it, not stated


def lu_diagonal(a: np.ndarray, et, pivots) -> tuple[np.ndarray, np.ndarray] | str:
    """(low, high) per diagonal element of U (batch × min(m, n), float64
    ends, outward) enclosing û_kk of *every* LU factor xGETRF may return for
    `a` (real f32/f64) with the row interchanges `pivots` — or why none is
    stated.

    The elimination is run in ball arithmetic (arb at 2p + 64 bits) over
    every evaluation order at once.  Whatever order and blocking an
    implementation uses (right-looking, Crout, LAPACK's recursive xGETRF2
    with xTRSM and xGEMM updates, an FMA or not), each computed element is
    one inner product of the permuted row with the factors already computed,
    rounded, then — below the diagonal — divided by the pivot (or multiplied
    by its computed reciprocal):

        û_kj = fl(a_kj − Σ_{m<k} l̂_km·û_mj),  l̂_ik = fl(fl(a_ik − Σ_{m<k} l̂_im·û_mk) / û_kk)

    with |fl(s) − s| ≤ γ(k+1)·(|a| + Σ|l̂||û|) for any order of the sum and
    a relative error of at most γ(2) for the division (Higham, Accuracy and
    Stability of Numerical Algorithms, 2nd ed., Lemma 3.1 and the proof of
    Thm 9.3; §13.1 for the partitioned forms), plus (k+2)·2^(emin − p) for
    underflow.  By induction over k every computed l̂, û lies in its ball,
    given the same pivots: the pivot of column k is the first candidate of
    largest |·| among the computed a_ik − Σ l̂_im·û_mk (i ≥ k) — the same
    balls, so the choice is checked here to be decided (the chosen ball
    above every other one: no evaluation order can pick another row) and
    to be `pivots`.  Then each û_kk lies in its ball whatever the backend
    did; the ball is intersected with the leading minors' enclosure
    (`_minor_balls`), which does not wrap."""
    from flint import arb, ctx
    if et.is_complex:
        return "complex LU: U's diagonal is not stated (the ranges downstream are carried by real corners only)"
    a = np.asarray(a, dtype=np.float64)
    m, n = (int(d) for d in a.shape[-2:])
    k = min(m, n)
    batch = a.shape[:-2]
    if int(np.prod(batch, dtype=np.int64)) * k * k * max(m, n) > 3 * DIAGONAL_LIMIT:
        return f"past the oracle's budget for the ball elimination ({DIAGONAL_LIMIT} operations)"
    fmt = component(et).format
    u = unit_roundoff(et)
    tiny = 2.0 ** (fmt.emin - fmt.precision)
    piv = np.asarray(pivots, dtype=np.int64).reshape(batch + (k,))
    lo, hi = np.zeros(batch + (k,)), np.zeros(batch + (k,))
    old = ctx.prec
    ctx.prec = 2 * fmt.precision + 64
    try:
        def widen(x, e):   # x ± e, e a nonnegative arb
            r = float(e.upper()) * (1 + 2.0 ** -50)
            return x + arb(0, r) if math.isfinite(r) else None

        for idx in np.ndindex(*batch):
            W = [[arb(float(x)) for x in row] for row in a[idx]]
            L = [[None] * k for _ in range(m)]
            U = [[None] * n for _ in range(k)]
            for j in range(k):
                g = arb(gamma(j + 1, u) * (1 + 2.0 ** -50))

                def computed(i, c):   # the ball of fl(a_ic − Σ_{t<j} l̂_it·û_tc)
                    s, mag = W[i][c], abs(W[i][c]).upper()
                    for t in range(j):
                        s -= L[i][t] * U[t][c]
                        mag += (abs(L[i][t]) * abs(U[t][c])).upper()
                    return widen(s, g * mag + (j + 2) * tiny)
                cand = [computed(i, j) for i in range(j, m)]
                if any(c is None for c in cand):
                    return "the elimination's balls overflow"
                sizes = [abs(c) for c in cand]
                best = max(range(len(sizes)), key=lambda t: (float(sizes[t].lower()), -t))
                if not all(t == best or sizes[best].lower() > sizes[t].upper() for t in range(len(sizes))):
                    return (f"pivot {j + 1}: the candidates' balls overlap (a backend may pick another row, "
                            "or the matrix is singular or nearly)")
                r = j + best
                if r + 1 != int(piv[idx][j]):
                    return f"pivot {j + 1}: the oracle's pivot {int(piv[idx][j])} is not the decided one ({r + 1})"
                W[j], W[r] = W[r], W[j]
                L[j], L[r] = L[r], L[j]
                cand[0], cand[best] = cand[best], cand[0]
                U[j][j] = cand[0]
                for c in range(j + 1, n):
                    U[j][c] = computed(j, c)
                    if U[j][c] is None:
                        return "the elimination's balls overflow"
                for i in range(j + 1, m):
                    q = cand[i - j] / U[j][j]
                    L[i][j] = widen(q, arb(gamma(2, u) * (1 + 2.0 ** -50)) * abs(q).upper() + tiny)
                    if L[i][j] is None:
                        return "the elimination's balls overflow"
            minors = _minor_balls(W, L, U, m, n, k, u, tiny)
            for j in range(k):
                ball = U[j][j]
                if minors is not None and minors[j] is not None:
                    ball = ball.intersection(minors[j])
                lo[idx + (j,)] = _down(ball.lower())
                hi[idx + (j,)] = -_down(-ball.upper())
    finally:
        ctx.prec = old
    return lo, hi


def _minor_balls(PA, L, U, m, n, k, u, tiny) -> list | None:
    """Second enclosures of û_jj that do not wrap (ball elimination's radii
    grow about tenfold every few columns): L̂·Û = P·A + E exactly, |E| ≤
    γ(n+2)·|L̂|·|Û| (Higham Thm 9.3; |L̂|, |Û| bounded by the balls'
    magnitudes, which stay tight while their radii grow), and L̂ is unit
    lower triangular, so Π_{i≤j} û_ii = det(B_j), B_j the leading j×j block
    of P·A + E, and det(B_j) = det(C_j)·det(I + C_j⁻¹·E_j), C_j of P·A:
    |det(I + M) − 1| ≤ (1 + ‖M‖)^j − 1 (the eigenvalues of M lie within
    ‖M‖).  So û_jj = det(B_j)/det(B_{j−1}) lies in the ratio of two balls
    (Higham ch. 14 for the determinant's perturbation).  C_j⁻¹ and det C_j
    are arb's (rigorous).  None per element where a block is singular to
    arb or the bound exceeds 1."""
    from flint import arb, arb_mat
    if m != n:
        return None
    mag = lambda x: float(abs(x).upper()) * (1 + 2.0 ** -50)   # noqa: E731
    Lm = np.array([[1.0 if i == t else (mag(L[i][t]) if t < i else 0.0) for t in range(k)] for i in range(n)])
    Um = np.array([[mag(U[t][c]) if c >= t else 0.0 for c in range(n)] for t in range(k)])
    if not (np.isfinite(Lm).all() and np.isfinite(Um).all()):
        return None
    g = gamma(n + 2, u) * (1 + 2.0 ** -40)
    Ebar = (g * (Lm @ Um) + tiny * (n + 2)) * (1 + 4 * n * 2.0 ** -53)   # float64 sums of nonnegative terms
    dets = [arb(1)]
    for j in range(1, k + 1):
        C = arb_mat([[PA[i][c] for c in range(j)] for i in range(j)])
        try:
            Cinv, D = C.inv(), C.det()
        except (ZeroDivisionError, ValueError):
            dets.append(None)
            continue
        absinv = np.array([[float(abs(Cinv[i, c]).upper()) for c in range(j)] for i in range(j)]) * (1 + 2.0 ** -50)
        mu = float(np.max(absinv @ Ebar[:j, :j].sum(axis=1))) * (1 + 4 * j * 2.0 ** -53)
        delta = math.expm1(j * math.log1p(mu)) * (1 + 2.0 ** -40) if mu < 1 else math.inf
        dets.append(D * (1 + arb(0, delta)) if delta < 1 else None)
    out = []
    for j in range(k):
        num, den = dets[j + 1], dets[j]
        out.append(None if num is None or den is None or 0 in den else num / den)
    return out


def _down(x) -> float:
    """An exact arb point rounded to a float64 at or below it."""
    from flint import arb
    f = float(x)
    return float(np.nextafter(f, -np.inf)) if math.isfinite(f) and arb(f) > x else f


