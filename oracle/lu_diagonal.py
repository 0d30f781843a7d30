"""The elements of LU with partial pivoting: every value a backend's xGETRF can return.

`jnp.linalg.det` and `slogdet` compute on U's diagonal (Σ log|ûₖₖ|, the
signs of ûₖₖ and the pivots' parity; det = sign·exp of it), and
`jax.scipy.linalg.lu` returns L and U picked out of the one LU result.  No
value of l̂ or û is fixed by LAPACK's definition — only the property of the
factors (spec/lapack.py "getrf.lu") — but with the pivots decided every
evaluation order leaves each element in a small set, and a program's
arithmetic on a set is an ordinary ranged computation
(oracle/propagation.py, affine.py).  `lu_elements` encloses that set
rigorously, three times, and keeps the intersection:

* the elimination itself in ball arithmetic (arb), every rounding of every
  order at once (Higham, *Accuracy and Stability of Numerical Algorithms*,
  2nd ed., Lemma 3.1 and the proof of Thm 9.3; §13.1 for the partitioned
  forms LAPACK's recursive xGETRF2, xTRSM and xGEMM use) — tight for small
  n, but its radii wrap, about tenfold every few columns;
* for the diagonal, the leading minors (`_minor_balls`): L̂·Û = P·A + E
  exactly with |E| ≤ γ(n+2)·|L̂|·|Û| (Thm 9.3; |L̂|, |Û| from the balls'
  magnitudes), L̂ unit lower triangular, so ûⱼⱼ = det(Bⱼ)/det(Bⱼ₋₁), Bⱼ the
  leading block of P·A + E, and |det(I + M) − 1| ≤ (1 + ‖M‖)ʲ − 1 with
  M = Cⱼ⁻¹·Eⱼ (Higham ch. 14, the determinant's perturbation) — no
  wrapping, but a normwise bound;
* for every element, the Schur complements of P·A + E with E's entries in
  boxes known step by step (`lu_elements_complex`, run on the real matrix
  as a complex one: its error model covers a real elimination's), each
  step starting again from P·A — no wrapping.

Where they are too wide — the matrix ill-conditioned, or f32 past n ≈ 32
— the ranges downstream say so (a verdict too wide to decide is
inconclusive, never "agrees"); where neither the balls nor the boxes
decide a pivot, nothing is stated at all.

Complex matrices (`lu_elements_complex`): the Schur complements' boxes in
complex ball arithmetic (arb's acb: a ball per component), with complex
arithmetic's own error model — each component of an inner product of
complex numbers is a real inner product of twice the length, the pivot the
first of largest |re| + |im| (ICAMAX), a complex division within a
normwise relative DIVISION_U·u.  `lu_elements` itself keeps answering
"not stated" for complex: oracle/chains.py's real path rounds float64 ends,
and a complex LU's elements are picked and carried by oracle/complex_ranges.py,
whose rules bound what abs, divide, multiply and a product reduction do to
a box (propagation.py's corners move both components together, which
bounds no |z| over a box).
"""
from __future__ import annotations

import math

import numpy as np

from ..spec.lapack import arb_precision
from ..spec.ops.cholesky import component, gamma, unit_roundoff

DIAGONAL_LIMIT = 200_000   # scalar ball operations of `lu_diagonal` (Σ n³/3 over the batch); past it, not stated
COMPLEX_COST = 4           # a complex ball operation counts as four real ones against DIAGONAL_LIMIT
DIVISION_U = 32            # a complex division's normwise relative error, in units of u (`lu_diagonal_complex`)


def lu_diagonal(a: np.ndarray, et, pivots) -> tuple[np.ndarray, np.ndarray] | str:
    """(low, high) per diagonal element of U (batch × min(m, n), float64
    ends, outward) enclosing û_kk of *every* LU factor xGETRF may return for
    `a` (real f32/f64) with the row interchanges `pivots` — or why none is
    stated: the diagonal of `lu_elements`."""
    got = lu_elements(a, et, pivots)
    if isinstance(got, str):
        return got
    return tuple(np.diagonal(x, axis1=-2, axis2=-1).copy() for x in got)


def lu_elements(a: np.ndarray, et, pivots, minors: bool = True) -> tuple[np.ndarray, np.ndarray] | str:
    """(low, high) per element of xGETRF's m×n result (a's shape, float64
    ends, outward) — the multipliers l̂_ik below the diagonal, û_kj on and
    above it — enclosing that element of *every* LU factor xGETRF may return
    for `a` (real f32/f64) with the row interchanges `pivots`, or why none
    is stated.  `jax.scipy.linalg.lu` returns L and U picked out of it by
    data movement, and det and slogdet compute on its diagonal.

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
    to be `pivots`.  The balls' radii wrap (dependent operands), so two
    enclosures that do not are intersected with them where `minors`: the
    leading minors' for the diagonal (`_minor_balls`), and for every element
    the Schur complements of P·A + E that `lu_elements_complex` bounds — its
    error model (inner products of 2K terms, a division within DIVISION_U·u)
    covers a real elimination's, and a real matrix is a complex one with
    zero imaginary parts."""
    if et.is_complex:
        return "complex LU: lu_elements_complex states its elements"
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
    boxes = "not run"
    if minors and COMPLEX_COST * int(np.prod(batch, dtype=np.int64)) * k * k * max(m, n) <= 3 * DIAGONAL_LIMIT:
        from ..spec.types import complex_type
        boxes = lu_elements_complex(a.astype(np.complex128), complex_type(et), pivots)
    lo, hi = np.zeros(a.shape), np.zeros(a.shape)
    with arb_precision(et):
        for idx in np.ndindex(*batch):
            got = _ball_elimination(a[idx], piv[idx], m, n, k, u, tiny)
            if isinstance(got, str):   # the balls wrapped past a pivot's decision: the boxes alone, if any
                return got if isinstance(boxes, str) else (boxes[0], boxes[1])
            W, L, U = got
            diag = _minor_balls(W, L, U, m, n, k, u, tiny) if minors else None
            for i in range(m):
                for c in range(n):
                    ball = L[i][c] if i > c else U[i][c]
                    if i == c and diag is not None and diag[i] is not None:
                        ball = ball.intersection(diag[i])
                    lo[idx + (i, c)] = _down(ball.lower())
                    hi[idx + (i, c)] = -_down(-ball.upper())
    if not isinstance(boxes, str):   # the Schur complements' boxes do not wrap: intersect
        lo, hi = np.maximum(lo, boxes[0]), np.minimum(hi, boxes[1])
    return lo, hi


def _ball_elimination(a: np.ndarray, piv: np.ndarray, m: int, n: int, k: int, u: float, tiny: float):
    """(the permuted rows as balls, L's balls (m × k, below the diagonal),
    U's balls (k × n, on and above it)) of one matrix, or why none
    (`lu_elements`)."""
    from flint import arb

    def widen(x, e):   # x ± e, e a nonnegative arb
        r = float(e.upper()) * (1 + 2.0 ** -50)
        return x + arb(0, r) if math.isfinite(r) else None

    W = [[arb(float(x)) for x in row] for row in a]
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
        best = _decided_pivot([abs(c) for c in cand], j, int(piv[j]))
        if isinstance(best, str):
            return best
        r = j + best
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
    return W, L, U


def _decided_pivot(sizes: list, j: int, stated: int) -> int | str:
    """The candidate row (an offset from row j) partial pivoting must pick
    — the largest of the candidates' magnitude balls (IxAMAX's first on a
    tie), decided only where its ball lies wholly above every other — or
    why it cannot be judged: the balls overlap, or the factorisation's
    stated pivot (1-based) is another row."""
    best = max(range(len(sizes)), key=lambda t: (float(sizes[t].lower()), -t))
    if not all(t == best or sizes[best].lower() > sizes[t].upper() for t in range(len(sizes))):
        return (f"pivot {j + 1}: the candidates' balls overlap (a backend may pick another row, "
                "or the matrix is singular or nearly)")
    if j + best + 1 != stated:
        return f"pivot {j + 1}: the oracle's pivot {stated} is not the decided one ({j + best + 1})"
    return best


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


def lu_diagonal_complex(a: np.ndarray, et, pivots) -> tuple | str:
    """(re_lo, re_hi, im_lo, im_hi) per diagonal element of U (batch ×
    min(m, n) float64 arrays, outward) of a complex matrix: the diagonal of
    `lu_elements_complex`, or why none is stated."""
    if not et.is_complex:
        return "a real matrix: lu_diagonal states its diagonal"
    got = lu_elements_complex(a, et, pivots)
    if isinstance(got, str):
        return got
    return tuple(np.diagonal(x, axis1=-2, axis2=-1).copy() for x in got)


def lu_elements_complex(a: np.ndarray, et, pivots) -> tuple | str:
    """(re_lo, re_hi, im_lo, im_hi) per element of xGETRF's m×n result
    (a's shape, float64 arrays, outward): a box enclosing that element — l̂_ik
    below the diagonal, û_kj on and above it — of *every* LU factor xGETRF may
    return for the complex matrix `a` (complex<f32> or complex<f64>) with the
    row interchanges `pivots` — or why none is stated.

    The error model (what any evaluation order and blocking can do):

    * an element is one inner product ŝ = fl(a − Σ_{t<K} l̂_t·û_t), rounded,
      in any order: each component of it is a real inner product of the 2K
      products re·re, im·im (re·im, im·re) and a's component, so it is
      within γ(2K+1)·(|a| + Σ|l̂_t|·|û_t|) of the exact one (Higham,
      Accuracy and Stability of Numerical Algorithms, 2nd ed., §3.1 and
      Lemma 3.5's proof; |xᵣyᵣ| + |xᵢyᵢ| ≤ |x|·|y| by Cauchy–Schwarz) —
      with or without FMA, forming the complex products first or not; the
      3M (Gauss) product, which no LAPACK getrf path uses, is not covered;
    * below the diagonal l̂ = fl(ŝ/û_KK), by a complex division or a
      reciprocal and a multiplication: within a normwise relative
      DIVISION_U·u of ŝ/û_KK.  32u is a margin over the published bounds
      of the algorithms in use — the textbook formula √2·γ(4) ≈ 5.7u
      (Higham Lemma 3.5), an inversion within 3u componentwise
      (Jeannerod, Louvet and Muller, Numer. Algorithms 74, 2017) then a
      multiplication within √2·γ(2), Smith's algorithm within a few u
      (Baudin, "Error bounds of complex arithmetic", 2011, §3.7);
    * underflow: (2K + 2)·2^(emin − p) per component of an inner product,
      4·2^(emin − p) for a division;
    * the pivot of column j is the first candidate of largest |re| + |im|
      (LAPACK's ICAMAX; spec/lapack.py `lu_pivoting`).

    So every computed element satisfies a_ic + e_ic = Σ_t l̂_it·û_tc (the
    sum ending with l̂_ii = 1 or û_cc), |e_ic| per component within the
    bound above (for l̂: the inner product's, plus the division's residual
    (DIVISION_U·u·|l̂||û_cc| + 4·2^(emin−p)·|û_cc|)/(1 − DIVISION_U·u)) —
    Higham Thm 9.3's backward error, entry by entry.  Step j's candidates
    (column j below the pivots already chosen) and U's row j are then
    exactly entries of the Schur complement S = A₂₂ − A₂₁·A₁₁⁻¹·A₁₂ of
    P·A + E: in block form [B b; r α] = [L₁₁ 0; l 1]·[U₁₁ u; 0 ŝ] gives
    ŝ = α − r·B⁻¹·b.  Each E entry lies in a box known at step j (it reads
    the magnitudes of l̂, û of earlier steps and |a|), so `_schur_step`
    encloses S: P·A's own Schur complement in acb plus a rigorous bound of
    what E can move it by.  Unlike an elimination carried in balls, whose
    radii wrap column after column (dependent operands; `lu_diagonal`'s
    first enclosure), each step starts again from P·A: the boxes stay
    within about 1.3× the first-order worst case (checked against it,
    tests/oracle/test_complex_det.py).  The pivot choice is checked decided
    (the chosen box's |re| + |im| above every other one's: no evaluation
    order can pick another row) and to be `pivots`; û_jj is the chosen
    candidate, U's row j the pivot row's entries, l̂ the quotients' boxes.
    `lu_elements` runs it on a real matrix too (module docstring)."""
    from flint import acb, arb
    a = np.asarray(a, dtype=np.complex128)
    m, n = (int(d) for d in a.shape[-2:])
    k = min(m, n)
    batch = a.shape[:-2]
    if COMPLEX_COST * int(np.prod(batch, dtype=np.int64)) * k * k * max(m, n) > 3 * DIAGONAL_LIMIT:
        return f"past the oracle's budget for the ball elimination ({DIAGONAL_LIMIT} operations)"
    fmt = component(et).format
    u = unit_roundoff(et)
    tiny = 2.0 ** (fmt.emin - fmt.precision)
    div = DIVISION_U * u
    piv = np.asarray(pivots, dtype=np.int64).reshape(batch + (k,))
    out = [np.zeros(a.shape) for _ in range(4)]
    pad = 1 + 2.0 ** -50
    with arb_precision(et):
        def mag(x) -> float:
            return float(abs(x).upper()) * pad

        def widen(z, e: float):   # z ± e in each component (a disc of radius e lies in the box)
            return z + acb(arb(0, e), arb(0, e)) if math.isfinite(e) else None

        def ends(z) -> tuple:   # (re_lo, re_hi, im_lo, im_hi) of a box, outward
            re, im = z.real, z.imag
            return _down(re.lower()), -_down(-re.upper()), _down(im.lower()), -_down(-im.upper())

        for idx in np.ndindex(*batch):
            PA = np.array(a[idx])
            Amag = np.abs(PA) * pad
            E = np.zeros((m, n))          # half-widths of e_ic, per component, where settled
            Lmag = np.zeros((m, k))
            Umag = np.zeros((k, n))
            box = np.zeros((4, m, n))     # the elements' boxes, rows in PA's current order
            for j in range(k):
                own = (gamma(2 * j + 1, u) * (Amag[j:, j:] + Lmag[j:, :j] @ Umag[:j, j:]) * (1 + 4 * n * 2.0 ** -53)
                       + (2 * j + 2) * tiny) * (1 + 2.0 ** -40)
                E[j:, j:] = own

                if j:
                    cand, row_of = _schur_step(PA, E, j, m, n, pad)
                    if isinstance(cand, str):
                        return cand
                else:   # column 0: the entries themselves
                    def given(i, c):
                        return widen(acb(float(PA[i, c].real), float(PA[i, c].imag)), float(E[i, c]))
                    cand = [given(i, 0) for i in range(m)]
                    row_of = lambda t: [given(t, c) for c in range(n)]   # noqa: E731
                if any(c is None for c in cand):
                    return "the elimination's balls overflow"
                sizes = [abs(c.real) + abs(c.imag) for c in cand]   # ICAMAX's |re| + |im|
                if not all(s.is_finite() for s in sizes):
                    return "the elimination's balls overflow"
                best = _decided_pivot(sizes, j, int(piv[idx][j]))
                if isinstance(best, str):
                    return best
                r = j + best
                urow = row_of(best)   # U's row j: the pivot row's entries of the Schur complement (before the swap)
                if any(x is None for x in urow):
                    return "the elimination's balls overflow"
                for arr in (PA, Amag, E, Lmag):
                    arr[[j, r]] = arr[[r, j]]
                box[:, [j, r]] = box[:, [r, j]]
                cand[0], cand[best] = cand[best], cand[0]
                pivot = cand[0]
                urow[0] = pivot
                Umag[j, j:] = [mag(x) for x in urow]
                for c, x in enumerate(urow):
                    box[:, j, j + c] = ends(x)
                for t in range(1, m - j):   # |l̂| of column j: the quotient's box, widened by the division's error
                    q = cand[t] / pivot
                    ell = widen(q, div * mag(q) + 4 * tiny)
                    if ell is None:
                        return "the elimination's balls overflow"
                    Lmag[j + t, j] = mag(ell)
                    box[:, j + t, j] = ends(ell)
                if not (np.isfinite(Umag[j]).all() and np.isfinite(Lmag[:, j]).all()):
                    return "the elimination's balls overflow"
                # settle e for U's row j (an inner product over j terms: `own`, already there) and L's column j
                below = slice(j + 1, m)
                E[below, j] += (div * Lmag[below, j] + 4 * tiny) * Umag[j, j] / (1 - div) * (1 + 2.0 ** -40)
            for x, b in zip(out, box):
                x[idx] = b
    return tuple(out)


def _schur_step(PA: np.ndarray, E: np.ndarray, j: int, m: int, n: int, pad: float):
    """Step j of `lu_elements_complex`: (the boxes of the candidates of
    column j, rows j … m−1 in PA's current order; `row_of(t)`: the boxes of
    candidate t's row of the Schur complement, columns j … n−1) — or why
    none (a leading block not proven invertible).

    For P·A + E = [B b; r α] with E's entries in boxes of half-width E
    (per component), ŝ′ = α′ − r′·B′⁻¹·b′.  With x = B⁻¹b, y = r·B⁻¹ of P·A
    itself and x′ = B′⁻¹b′, exactly (B(x′ − x) = E_b − E_B·x′):

        ŝ′ − ŝ = E_α − E_r·x′ − y·E_b + y·E_B·x′,

    so each component of ŝ′ lies within E_α + √2·(|E_r||x′| + |y||E_b| +
    |y||E_B||x′|) of ŝ's (a complex entry in a box of half-width e has
    modulus at most √2·e).  ŝ, x and y are computed from P·A's points in
    acb (radii near 2^-(2p+64)); |x′| is bounded by a ball solve over every
    B′, b′ in the boxes (acb_mat.solve, preconditioned: rigorous for every
    matrix in the balls, and it proves each B′ invertible) — only its
    magnitude enters, so the ball arithmetic's overestimation costs little,
    while a Schur complement evaluated wholly in balls overestimates
    several-fold (rectangular complex products)."""
    from flint import acb, acb_mat, arb

    def point(i, c):
        return acb(float(PA[i, c].real), float(PA[i, c].imag))

    def ball(i, c):
        e = float(E[i, c])
        return acb(arb(float(PA[i, c].real), e), arb(float(PA[i, c].imag), e))
    B = acb_mat([[point(i, c) for c in range(j)] for i in range(j)])
    rows = acb_mat([[point(i, c) for c in range(j)] for i in range(j, m)])
    cols = acb_mat([[point(i, c) for c in range(j, n)] for i in range(j)])
    try:
        X = B.solve(cols, algorithm="precond")
        Yt = B.transpose().solve(rows.transpose(), algorithm="precond")
        Xb = acb_mat([[ball(i, c) for c in range(j)] for i in range(j)]).solve(
            acb_mat([[ball(i, c) for c in range(j, n)] for i in range(j)]), algorithm="precond")
    except ZeroDivisionError:
        return f"step {j + 1}: the leading block is not proven invertible within the rounding of the elimination", None
    RX = rows * X
    Xmag = np.array([[float(abs(Xb[i, c]).upper()) for c in range(n - j)] for i in range(j)]) * pad
    Ymag = np.array([[float(abs(Yt[c, i]).upper()) for c in range(j)] for i in range(m - j)]) * pad
    if not (np.isfinite(Xmag).all() and np.isfinite(Ymag).all()):
        return "the elimination's balls overflow", None
    spread = (E[j:, j:] + math.sqrt(2) * (E[j:, :j] @ Xmag + Ymag @ E[:j, j:] + Ymag @ (E[:j, :j] @ Xmag))) \
        * (1 + (4 * n + 8) * 2.0 ** -53)   # float64 sums and products of nonnegative terms
    if not np.isfinite(spread).all():
        return "the elimination's balls overflow", None

    def entry(t, c):   # ŝ′ of row j + t, column j + c
        e = float(spread[t, c]) * pad
        return point(j + t, j + c) - RX[t, c] + acb(arb(0, e), arb(0, e))
    return [entry(t, 0) for t in range(m - j)], (lambda t: [entry(t, c) for c in range(n - j)])


def _down(x) -> float:
    """An exact arb point rounded to a float64 at or below it."""
    from flint import arb
    f = float(x)
    return float(np.nextafter(f, -np.inf)) if math.isfinite(f) and arb(f) > x else f


