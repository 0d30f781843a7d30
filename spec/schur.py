"""xGEES: the Schur form T and Schur vectors Z of a general square matrix,
A = Z·T·Zᴴ (`jax.scipy.linalg.schur`, and under `sqrtm`, `funm`,
`rsf2csf`; oracle/lapack_gees.py reads the call).  Each output is judged
alone, by what makes it a Schur form or Schur vectors of A — neither is
unique: the order of the eigenvalues on T's diagonal is the backend's, and
each column of Z may be scaled by a unit number (a sign, or a phase), which
scales T's rows and columns with it.

**The contract** is xGEEV's (spec/geev.py): a backward-stable Schur
decomposition (LAPACK: a Hessenberg reduction, then the shifted QR
algorithm) returns T̂ = Qᴴ·(A + E)·Q, Q unitary, ‖E‖₂ ≤ s·n·‖A‖₁·ε with s
at most t = `two_sided(n)` (LAPACK's test dhst01 and Golub & Van Loan
§7.5.6), and a Ẑ within a few ε of that Q.

**T** (`schur_t`).  T̂ must be upper triangular (complex), or upper
quasi-triangular with 1×1 and 2×2 diagonal blocks, each 2×2 block a
complex-conjugate pair (real: LAPACK's "Schur canonical form").  Three
measures, each against t:

* the structure: ‖T̂'s elements outside that form‖_F / (√n·n·‖A‖₁·ε) — for a
  real T̂ the subdiagonal elements taken as blocks are chosen by
  `blocks` (largest first, never two adjacent, only where the 2×2 block
  has complex eigenvalues); every other subdiagonal element counts;
* the eigenvalues: the diagonal (complex), the 1×1 blocks and the
  eigenvalues of the 2×2 blocks (real) are A + E's eigenvalues — spec/
  geev.py's measure s* on A's discs, any order;
* the size: ‖T̂‖_F = ‖A + E‖_F (a unitary similarity keeps it), so
  |‖T̂‖_F − ‖A‖_F| ≤ ‖E‖_F ≤ √n·‖E‖₂: |‖T̂‖_F − ‖A‖_F| / (√n·n·‖A‖₁·ε).

The eigenvalues catch a wrong diagonal (zeroed, negated, scaled: a
scaling is caught where it moves a value out of its disc); the size
catches a wrong off-diagonal part that keeps them.  The off-diagonal
elements themselves are unique only up to the unit numbers above and
depend on the order chosen, so they are not compared one by one — what
the criterion cannot see: a T̂ with A's eigenvalues and A's Frobenius norm
but an off-diagonal part moved between elements.

**Z** (`schur_vectors`): LAPACK's orthogonality ratio ‖I − ẐᴴẐ‖₁/(n·ε),
and ‖the part of Ẑᴴ·A·Ẑ outside the Schur form‖_F / (√n·n·‖A‖₁·ε) (the
form as for T: for real Ẑ, `blocks` of Ẑᴴ·A·Ẑ).  Its norm is the
contract's: for the exact unitary Q above, Qᴴ·A·Q = T − Qᴴ·E·Q, whose part
outside the form has ‖·‖_F ≤ ‖E‖_F ≤ √n·‖E‖₂ ≤ √n·s·n·‖A‖₁·ε — a measure
of at most s (dhst01's ‖·‖₁/(n·‖A‖₁·ε) of the same residual can reach
√n·s); Ẑ's own distance from Q adds a few ε·‖A‖ more.  Both are unchanged when a
column of Ẑ is multiplied by a unit number, and fail where Ẑ only
reduces A to Hessenberg form (half its subdiagonal at least counts).

Where A was computed upstream and the backend was given an Â within
‖Â − A‖₁ ≤ slack of it, the eigenvalues' discs widen by it (spec/geev.py
`slack_discs`), the size measure gives √n·slack (‖Â − A‖_F ≤ √n·‖Â − A‖₁)
and Z's form measure ‖Ẑᴴ‖₁·‖Ẑ‖₁·√n·slack before they are compared.

The residuals are computed in the working format (spec/ops/cholesky.py
`working`) and enclosed with their rounding (`enclosure`), as LAPACK's
other ratios here.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import geev
from .dsl import Measured
from .ops.cholesky import ct, enclosure, gamma, one_norm, to_working, unit_roundoff, working
from .ratios import frobenius, gram_residual, operand_slack, ratio_verdict, zero_nonfinite

SCHUR_T_STATEMENT = ("max(‖T̂ outside the (quasi-)triangular form‖_F/(√n·n·‖A‖₁·ε), s* of the diagonal blocks' "
                     "eigenvalues on A's discs (spec/geev.py), |‖T̂‖_F − ‖A‖_F|/(√n·n·‖A‖₁·ε)); order and unit scalings free")
SCHUR_Z_STATEMENT = ("max(‖I − ẐᴴẐ‖₁/(n·ε), ‖Ẑᴴ·A·Ẑ outside the (quasi-)triangular form‖_F/(√n·n·‖A‖₁·ε)) "
                     "(LAPACK dhst01's two ratios, the second in the contract's norm); order and unit scalings free")


def blocks(t: np.ndarray) -> np.ndarray:
    """For a real n×n matrix: which subdiagonal elements (i+1, i) are taken
    as 2×2 blocks of a quasi-triangular form — largest first, never two
    adjacent, only nonzero ones whose block has complex eigenvalues
    ((a − d)² + 4·b·c < 0)."""
    n = t.shape[-1]
    sub = np.abs(np.diagonal(t, -1)).astype(np.float64) if n > 1 else np.zeros(0)
    taken = np.zeros(max(n - 1, 0), bool)
    for i in np.argsort(-sub, kind="stable"):
        if sub[i] == 0:
            break
        if (i > 0 and taken[i - 1]) or (i + 1 < n - 1 and taken[i + 1]):
            continue
        a, b, c, d = (float(v) for v in (t[i, i], t[i, i + 1], t[i + 1, i], t[i + 1, i + 1]))
        if (a - d) ** 2 + 4 * b * c < 0:
            taken[i] = True
    return taken


def outside(t: np.ndarray, real: bool) -> np.ndarray:
    """A mask of the elements outside the (quasi-)upper-triangular form."""
    n = t.shape[-1]
    mask = np.tril(np.ones((n, n), bool), -1)
    if real and n > 1:
        i = np.arange(n - 1)
        mask[i[blocks(t)] + 1, i[blocks(t)]] = False
    return mask


def block_eigenvalues(t: np.ndarray, real: bool) -> np.ndarray:
    """The eigenvalues of T's diagonal blocks, in order (complex128)."""
    n = t.shape[-1]
    d = np.diagonal(t).astype(np.complex128).copy()
    if not real or n < 2:
        return d
    for i in np.flatnonzero(blocks(t)):
        a, b, c, e = (float(v) for v in (t[i, i], t[i, i + 1], t[i + 1, i], t[i + 1, i + 1]))
        mid, disc = (a + e) / 2, ((a - e) / 2) ** 2 + b * c
        root = np.sqrt(complex(disc))
        d[i], d[i + 1] = mid + root, mid - root
    return d


@dataclass
class _Judged:
    """One criterion's inputs, read once: the format, order and batch shape, A
    and the output (…, n, n) in the working format, the output's non-finite
    elements zeroed and which matrices were all finite, the threshold, the
    working and the format's unit roundoff."""
    et: object
    n: int
    batch: tuple
    A: np.ndarray
    X: np.ndarray
    finite: np.ndarray
    thr: float
    uw: float
    u: float


def _judged(attrs, arrays, types, actual) -> _Judged:
    (a,), (ta,) = arrays, types
    et = ta.element_type
    n = int(ta.shape[-1])
    X, finite = zero_nonfinite(to_working(np.asarray(actual), et).reshape((-1, n, n)))
    return _Judged(et, n, tuple(int(d) for d in ta.shape[:-2]), to_working(a, et).reshape((-1, n, n)), X, finite,
                   float(attrs["threshold"]), working(et)[1], unit_roundoff(et))


def schur_t(attrs, arrays, types, rt, actual) -> Measured:
    j = _judged(attrs, arrays, types, actual)
    et, n, batch, A, T, finite, thr, uw, u = j.et, j.n, j.batch, j.A, j.X, j.finite, j.thr, j.uw, j.u
    if n == 0:
        return Measured(0.0, thr, True, "no element")
    real = not et.is_complex
    norm_a = one_norm(A)
    root_n = np.sqrt(n)
    low = np.array([frobenius(np.where(outside(T[i], real), T[i], 0)) for i in range(len(T))])
    st, st_lo, st_hi = enclosure(low, 0.0, root_n * n * norm_a * u, gamma(n * n + 2, uw))
    discs = geev.slack_discs(attrs)
    s = np.array([geev.values_measure(d, block_eigenvalues(T[i], real), thr) for i, d in enumerate(discs)])
    fa, ft = frobenius(A), frobenius(T)
    give = root_n * operand_slack(attrs, len(A))   # ‖Â − A‖_F ≤ √n·‖Â − A‖₁
    size, size_lo, size_hi = enclosure(np.maximum(np.abs(ft - fa) - give, 0), gamma(n * n + 2, uw) * (ft + fa),
                                       root_n * n * norm_a * u, gamma(n * n + 4, uw))
    return ratio_verdict([("‖T̂ outside the form‖_F/(√n·n·‖A‖₁·ε)", *(x.reshape(batch) for x in (st, st_lo, st_hi))),
                          ("s* of its eigenvalues", *(s.reshape(batch),) * 3),
                          ("|‖T̂‖_F − ‖A‖_F|/(√n·n·‖A‖₁·ε)", *(x.reshape(batch) for x in (size, size_lo, size_hi)))],
                         thr, finite.reshape(batch), np.ones(batch, bool), "matrices")


def unitary_reduction(Z: np.ndarray, A: np.ndarray, outside_of, slack: np.ndarray, uw: float, u: float) -> tuple:
    """((value, low, high) of ‖I − ZᴴZ‖₁/(n·ε), and of ‖Zᴴ·A·Z outside the
    form‖_F/(√n·n·‖A‖₁·ε)), per matrix of a batch (…, n, n) in the working
    format: what makes Z the unitary factor of a reduction of A to a form
    (`outside_of(B)`: B's elements outside it) — xGEES's Schur vectors here,
    xGEHRD's Q in spec/hessenberg.py.  `slack`: ‖Â − A‖₁ per matrix, whose
    ‖Zᴴ·(Â − A)·Z‖_F ≤ ‖Zᴴ‖₁·‖Z‖₁·√n·slack is given first."""
    n = A.shape[-1]
    g, g_err = gram_residual(Z, uw)
    orth = enclosure(g, g_err, n * u, gamma(n + 3, uw))
    B = ct(Z) @ A @ Z
    err = gamma(2 * n + 2, uw) * frobenius(np.abs(ct(Z)) @ np.abs(A) @ np.abs(Z))
    low = np.array([frobenius(np.where(outside_of(B[i]), B[i], 0)) for i in range(len(B))])
    root_n = np.sqrt(n)
    give = one_norm(ct(Z)) * one_norm(Z) * root_n * slack
    form = enclosure(np.maximum(low - give, 0), err, root_n * n * one_norm(A) * u, gamma(n * n + 3, uw))
    return orth, form


def schur_vectors(attrs, arrays, types, rt, actual) -> Measured:
    j = _judged(attrs, arrays, types, actual)
    if j.n == 0:
        return Measured(0.0, j.thr, True, "no element")
    real = not j.et.is_complex
    orth, form = unitary_reduction(j.X, j.A, lambda b: outside(b, real), operand_slack(attrs, len(j.A)), j.uw, j.u)
    return ratio_verdict([("‖I − ẐᴴẐ‖₁/(n·ε)", *(x.reshape(j.batch) for x in orth)),
                          ("‖Ẑᴴ·A·Ẑ outside the form‖_F/(√n·n·‖A‖₁·ε)", *(x.reshape(j.batch) for x in form))],
                         j.thr, j.finite.reshape(j.batch), np.ones(j.batch, bool), "matrices")


PROPERTIES = {"gees.t": schur_t, "gees.vectors": schur_vectors}
