"""xSYTRD / xHETRD: a Hermitian matrix reduced to real symmetric
tridiagonal form T = Qᴴ·A·Q (`jax.lax.linalg.tridiagonal`;
oracle/lapack_sytrd.py reads the call).  LAPACK gives T's diagonal d and
off-diagonal e twice — alone, and in the triangle `uplo` names of a, whose
other elements of that triangle hold the Householder vectors of Q (the
representation of Q: not scored; the other triangle is not referenced).

**The contract** (Golub & Van Loan §8.3.1; LAPACK Users' Guide §4.7):
T̂ = Qᴴ·(A + E)·Q, Q exactly unitary, ‖E‖₂ ≤ s·n·‖A‖₁·ε with s at most t =
`two_sided(n)` — eigh's.  Q leaves e₁ alone for uplo 'L' (every reflector
H(i) has v(1:i) = 0) and eₙ for 'U'.  So:

* **a** (`sytrd_a`, T read from its diagonal and the sub- or
  superdiagonal): T̂'s eigenvalues are A + E's, within ‖E‖₂ of A's in
  ascending order (Weyl) — max |λᵢ(T̂) − λᵢ(A)| / (n·‖A‖₁·ε), λ(A) from
  spec/lapack.py `spectrum` with its error, λ(T̂) from float64 LAPACK with
  the error `spectrum` assumes of it (8·n·2⁻⁵³·‖T̂‖₁); and the end Q keeps:
  |d̂₁ − a₁₁| and ||ê₁| − ‖A(2:n, 1)‖₂| ('L'; 'U': the last column) over
  n·‖A‖₁·ε, each within ‖E‖₂.  Signs (phases) of e are free: |ê| is read.
* **d alone** (`sytrd_d`): what the contract fixes of the diagonal without
  the off-diagonal — d̂₁ (or d̂ₙ) as above, the trace |Σd̂ − tr A| ≤
  n·‖E‖₂ (over n·n·‖A‖₁·ε), and every d̂ᵢ within [λ_min − ‖E‖, λ_max + ‖E‖]
  (a Hermitian matrix's diagonal lies in its spectrum's range).
* **e alone** (`sytrd_e`): |ê₁| (or |êₙ₋₁|) as above, and every |êᵢ| at
  most (λ_max − λ_min)/2 + ‖E‖₂ (a 2×2 principal submatrix's eigenvalues
  interlace A's, and its spread is at least 2|tᵢⱼ|).

d and e alone are so judged by necessary conditions only: zeros, a
negation, a scaling are caught where they move the trace, the ends or the
ranges; the eigenvalues that pin T down are checked on a, which holds both.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from .dsl import Measured
from .ops.cholesky import enclosure, one_norm, to_working, unit_roundoff
from .ratios import ratio_verdict, zero_nonfinite

SYTRD_A_STATEMENT = ("max(max|λᵢ(T̂) − λᵢ(A)|, |d̂₁ − a₁₁|, ||ê₁| − ‖A(2:n,1)‖₂|) / (n·‖A‖₁·ε), T̂ from a's diagonal "
                     "and sub- (uplo 'L') or superdiagonal ('U': the last column instead of the first); the "
                     "Householder vectors not scored")
SYTRD_D_STATEMENT = ("max(|d̂₁ − a₁₁|, |Σd̂ − tr A|/n, the distance of d̂ outside [λ_min, λ_max]) / (n·‖A‖₁·ε) "
                     "('U': d̂ₙ, aₙₙ) — d alone, by necessary conditions")
SYTRD_E_STATEMENT = ("max(||ê₁| − ‖A(2:n,1)‖₂|, max(|êᵢ| − (λ_max − λ_min)/2, 0)) / (n·‖A‖₁·ε) ('U': the last "
                     "column) — e alone, by necessary conditions")
NUMPY_EIG = 8 * 2.0 ** -53   # × n·‖T̂‖₁: float64 LAPACK's error assumed (spec/lapack.py `spectrum`)


def _operand(attrs, arrays, types):
    from .lapack import hermitian_read   # spec/lapack.py gathers this module's properties: deferred
    (a,), (ta,) = arrays, types
    et = ta.element_type
    n = int(ta.shape[-1])
    batch = tuple(int(d) for d in ta.shape[:-2])
    lower = bool(attrs["lower"])
    A = hermitian_read(to_working(a, et), lower).reshape((-1, n, n))
    lam = np.asarray(attrs["values"], dtype=np.float64).reshape((-1, n))
    lam_err = np.asarray(attrs["error"], dtype=np.float64).reshape(-1)
    return et, n, batch, lower, A, lam, lam_err, unit_roundoff(et)


def _end(A, lower):
    """(A's end diagonal element, ‖the column below (or above) it‖₂) per matrix: what Q keeps."""
    if lower:
        return A[:, 0, 0].real, np.sqrt((np.abs(A[:, 1:, 0]) ** 2).sum(axis=-1))
    return A[:, -1, -1].real, np.sqrt((np.abs(A[:, :-1, -1]) ** 2).sum(axis=-1))


def _ratio(num, err, den):
    return enclosure(np.maximum(num, 0), err, den, 2.0 ** -50)


def _parts(parts, batch):
    return [(name, *(np.asarray(x).reshape(batch) for x in (v, lo, hi))) for name, (v, lo, hi) in parts]


def sytrd_a(attrs, arrays, types, rt, actual) -> Measured:
    et, n, batch, lower, A, lam, lam_err, u = _operand(attrs, arrays, types)
    thr = float(attrs["threshold"])
    band = np.eye(n, k=-1 if lower else 1, dtype=bool)
    mask = np.broadcast_to(np.eye(n, dtype=bool) | band, batch + (n, n))
    if n == 0:
        return Measured(0.0, thr, True, "no element", mask)
    out, finite = zero_nonfinite(to_working(np.asarray(actual), et).reshape((-1, n, n)))
    d = np.real(np.diagonal(out, axis1=-2, axis2=-1)).astype(np.float64)
    e = np.abs(np.diagonal(out, offset=-1 if lower else 1, axis1=-2, axis2=-1)).astype(np.float64)
    den = n * one_norm(A).astype(np.float64) * u
    vals = np.stack([sla.eigvalsh_tridiagonal(d[i], e[i]) if n > 1 else d[i] for i in range(len(d))])
    t_norm = np.abs(d) + np.concatenate([e, np.zeros((len(d), 1))], axis=-1) \
        + np.concatenate([np.zeros((len(d), 1)), e], axis=-1)
    t_err = NUMPY_EIG * n * t_norm.max(axis=-1)
    diff = np.abs(vals - lam).max(axis=-1)
    a_end, a_col = _end(A, lower)
    end = np.maximum(np.abs(d[:, 0 if lower else -1] - a_end),
                     np.abs((e[:, 0 if lower else -1] if n > 1 else 0) - a_col))
    err = 2.0 ** -50 * (np.abs(a_end) + a_col + np.abs(d).max(axis=-1))
    return ratio_verdict(_parts([("max|λ(T̂) − λ(A)|/(n·‖A‖₁·ε)", _ratio(diff, lam_err + t_err, den)),
                            ("the end Q keeps /(n·‖A‖₁·ε)", _ratio(end, err, den))], batch),
                    thr, finite.reshape(batch), np.ones(batch, bool), "matrices", scored=mask)


def _spread(lam):
    return lam[:, 0], lam[:, -1]


def sytrd_d(attrs, arrays, types, rt, actual) -> Measured:
    et, n, batch, lower, A, lam, lam_err, u = _operand(attrs, arrays, types)
    thr = float(attrs["threshold"])
    if n == 0:
        return Measured(0.0, thr, True, "no element")
    d = np.asarray(actual, dtype=np.float64).reshape((-1, n))
    finite = np.isfinite(d).all(axis=-1)
    d = np.where(np.isfinite(d), d, 0)
    den = n * one_norm(A).astype(np.float64) * u
    a_end, _ = _end(A, lower)
    trace = np.real(np.trace(A, axis1=-2, axis2=-1)).astype(np.float64)
    lo, hi = _spread(lam)
    outside = np.maximum(np.maximum(lo[:, None] - d, d - hi[:, None]), 0).max(axis=-1)
    err = 2.0 ** -50 * (np.abs(d).sum(axis=-1) + np.abs(trace)) + lam_err
    return ratio_verdict(_parts([("|d̂ end − a end|/(n·‖A‖₁·ε)", _ratio(np.abs(d[:, 0 if lower else -1] - a_end), err, den)),
                            ("|Σd̂ − tr A|/(n·n·‖A‖₁·ε)", _ratio(np.abs(d.sum(axis=-1) - trace), n * err, n * den)),
                            ("d̂ outside A's spectrum's range /(n·‖A‖₁·ε)", _ratio(outside, err, den))], batch),
                    thr, finite.reshape(batch), np.ones(batch, bool), "vectors")


def sytrd_e(attrs, arrays, types, rt, actual) -> Measured:
    et, n, batch, lower, A, lam, lam_err, u = _operand(attrs, arrays, types)
    thr = float(attrs["threshold"])
    if n <= 1:
        return Measured(0.0, thr, True, "no element")
    e = np.abs(np.asarray(actual, dtype=np.float64)).reshape((-1, n - 1))
    finite = np.isfinite(e).all(axis=-1)
    e = np.where(np.isfinite(e), e, 0)
    den = n * one_norm(A).astype(np.float64) * u
    _, a_col = _end(A, lower)
    lo, hi = _spread(lam)
    over = np.maximum(e - (hi - lo)[:, None] / 2, 0).max(axis=-1)
    err = 2.0 ** -50 * (a_col + e.max(axis=-1) + (hi - lo)) + lam_err
    return ratio_verdict(_parts([("||ê end| − ‖A's end column‖₂|/(n·‖A‖₁·ε)",
                             _ratio(np.abs(e[:, 0 if lower else -1] - a_col), err, den)),
                            ("|ê| past (λ_max − λ_min)/2 /(n·‖A‖₁·ε)", _ratio(over, err, den))], batch),
                    thr, finite.reshape(batch), np.ones(batch, bool), "vectors")


PROPERTIES = {"sytrd.a": sytrd_a, "sytrd.d": sytrd_d, "sytrd.e": sytrd_e}
