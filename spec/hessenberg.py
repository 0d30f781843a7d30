"""xGEHRD: the Hessenberg form H = Qᴴ·A·Q, Q·e₁ = e₁
(`jax.scipy.linalg.hessenberg`; oracle/lapack_gehrd.py reads the call).
LAPACK returns H in the upper Hessenberg part of a and the Householder
vectors that make Q below its subdiagonal — those are the representation
of Q (implementation-defined), not scored.

**The contract** (Golub & Van Loan §7.4.3; LAPACK Users' Guide §4.8):
Ĥ = Qᴴ·(A + E)·Q for an exactly unitary Q with Q·e₁ = e₁ (every reflector
leaves the first coordinate alone) and ‖E‖₂ ≤ s·n·‖A‖₁·ε, s at most t =
`two_sided(n)` — xGEEV's and xGEES's contract (spec/geev.py,
spec/schur.py).  H is unique only up to a diagonal unitary similarity
(signs, phases) and, where a subdiagonal element vanishes, more; so its
elements are not compared one by one.  What the contract fixes:

* the eigenvalues: Ĥ's are A + E's, so spec/geev.py's measure s* on A's
  discs.  Ĥ's eigenvalues are numpy's (float64 LAPACK), which are exact
  for Ĥ + F with ‖F‖₂ ≤ 8·n·2⁻⁵³·‖Ĥ‖_F — the assumption spec/lapack.py
  `spectrum` makes of float64 LAPACK — so A's discs are widened by that
  ‖F‖ (geev.with_slack: Ĥ + F is similar to A + E + Q·F·Qᴴ);
* the first row and column: Q·e₁ = e₁ gives ĥ₁₁ = (A + E)₁₁,
  ‖Ĥ(2:n, 1)‖₂ = ‖(A + E)(2:n, 1)‖₂ and ‖Ĥ(1, 2:n)‖₂ = ‖(A + E)(1, 2:n)‖₂,
  each within ‖E‖₂ of A's: the largest difference / (n·‖A‖₁·ε);
* the size: |‖Ĥ‖_F − ‖A‖_F| ≤ ‖E‖_F ≤ √n·‖E‖₂: / (√n·n·‖A‖₁·ε).

Negated, zeroed or scaled answers move the eigenvalues (and ĥ₁₁, the
sizes); what the criterion cannot see is an Ĥ with A's eigenvalues, first
row, column and size whose other elements are moved — the freedom the
Hessenberg form does not have, but that no cheap invariant pins down.
Where A was computed upstream (‖Â − A‖₁ ≤ slack), the discs widen by it and
the first-row, -column and size measures give √n·slack first (‖Â − A‖₂
and ‖Â − A‖_F are at most √n·‖Â − A‖₁).
"""
from __future__ import annotations

import numpy as np

from . import geev
from .dsl import Measured
from .ops.cholesky import enclosure, gamma, one_norm, to_working, unit_roundoff, working
from .ratios import frobenius, operand_slack, ratio_verdict, zero_nonfinite
from .schur import unitary_reduction

GEHRD_STATEMENT = ("max(s* of Ĥ's eigenvalues on A's discs (spec/geev.py), |ĥ₁₁ − a₁₁|, |‖Ĥ(2:n,1)‖₂ − ‖A(2:n,1)‖₂|, "
                   "|‖Ĥ(1,2:n)‖₂ − ‖A(1,2:n)‖₂| over n·‖A‖₁·ε, |‖Ĥ‖_F − ‖A‖_F|/(√n·n·‖A‖₁·ε)); H's upper Hessenberg "
                   "part (the Householder vectors below it not scored)")
NUMPY_EIG = 8 * 2.0 ** -53   # × n·‖Ĥ‖_F: float64 LAPACK's backward error assumed (spec/lapack.py `spectrum`)


def hessenberg_part(h: np.ndarray) -> np.ndarray:
    """Each matrix's upper Hessenberg part, zeros below its subdiagonal."""
    n = h.shape[-1]
    return np.where(np.triu(np.ones((n, n), bool), -1), h, 0)


def gehrd_h(attrs, arrays, types, rt, actual) -> Measured:
    (a,), (ta,) = arrays, types
    et = ta.element_type
    n = int(ta.shape[-1])
    batch = tuple(int(d) for d in ta.shape[:-2])
    thr = float(attrs["threshold"])
    mask = np.broadcast_to(np.triu(np.ones((n, n), bool), -1), tuple(int(d) for d in ta.shape))
    if n == 0:
        return Measured(0.0, thr, True, "no element", mask)
    _, uw = working(et)
    u = unit_roundoff(et)
    A = to_working(a, et).reshape((-1, n, n))
    H, finite = zero_nonfinite(hessenberg_part(to_working(np.asarray(actual), et).reshape((-1, n, n))))
    slack = operand_slack(attrs, len(A))
    norm_a = one_norm(A)
    root_n = np.sqrt(n)
    # eigenvalues: numpy's of Ĥ, the discs widened by their backward error and by the operand's slack
    s = np.empty(len(A))
    for i, d in enumerate(attrs["discs"]):
        h = np.asarray(H[i], dtype=np.complex128)
        f = NUMPY_EIG * n * float(frobenius(h)) * (1 + 2.0 ** -40)
        s[i] = geev.values_measure(geev.with_slack(d, f + root_n * float(slack[i])), np.linalg.eigvals(h), thr)
    # the first row and column, and the size
    g = gamma(n + 2, uw)
    parts = [(np.abs(H[:, 0, 0] - A[:, 0, 0]), 0.0)]
    for hv, av in ((H[:, 1:, 0], A[:, 1:, 0]), (H[:, 0, 1:], A[:, 0, 1:])):
        nh, na = (np.sqrt((np.abs(v) ** 2).sum(axis=-1)) for v in (hv, av))
        parts.append((np.abs(nh - na), g * (nh + na)))
    first = np.maximum.reduce([np.maximum(p - root_n * slack, 0) for p, _ in parts])
    first_err = np.maximum.reduce([e if np.ndim(e) else np.full(len(A), e) for _, e in parts])
    fr, fr_lo, fr_hi = enclosure(first, first_err, n * norm_a * u, g)
    fa, fh = frobenius(A), frobenius(H)
    size, size_lo, size_hi = enclosure(np.maximum(np.abs(fh - fa) - root_n * slack, 0),
                                       gamma(n * n + 2, uw) * (fh + fa), root_n * n * norm_a * u,
                                       gamma(n * n + 4, uw))
    return ratio_verdict([("s* of Ĥ's eigenvalues", *(s.reshape(batch),) * 3),
                     ("first row and column /(n·‖A‖₁·ε)", *(x.reshape(batch) for x in (fr, fr_lo, fr_hi))),
                     ("|‖Ĥ‖_F − ‖A‖_F|/(√n·n·‖A‖₁·ε)", *(x.reshape(batch) for x in (size, size_lo, size_hi)))],
                    thr, finite.reshape(batch), np.ones(batch, bool), "matrices", scored=mask)


GEHRD_Q_STATEMENT = ("max(‖I − Q̂ᴴQ̂‖₁/(n·ε), ‖Q̂ᴴ·A·Q̂ below its subdiagonal‖_F/(√n·n·‖A‖₁·ε)), Q̂ = diag(1, the "
                     "output): Q(2:n, 2:n) of the reduction, signs free")


def gehrd_q(attrs, arrays, types, rt, actual) -> Measured:
    """Q(2:n, 2:n) (xORGQR of xGEHRD's reflectors, JAX's `hessenberg(calc_q=True)`):
    with Q̂ = diag(1, it), Q̂·e₁ = e₁ by construction, so what is asked is
    that Q̂ is unitary and reduces A to Hessenberg form — the contract's
    Qᴴ·A·Q = Ĥ − Qᴴ·E·Q has ‖its part below the subdiagonal‖_F ≤ √n·‖E‖₂,
    as for xGEES's Z (spec/schur.py)."""
    (a,), (ta,) = arrays, types
    et = ta.element_type
    n = int(ta.shape[-1])
    batch = tuple(int(d) for d in ta.shape[:-2])
    thr = float(attrs["threshold"])
    if n <= 1:
        return Measured(0.0, thr, True, "no element")
    _, uw = working(et)
    u = unit_roundoff(et)
    A = to_working(a, et).reshape((-1, n, n))
    Qs, finite = zero_nonfinite(to_working(np.asarray(actual), et).reshape((-1, n - 1, n - 1)))
    Q = np.zeros(A.shape, Qs.dtype)
    Q[:, 0, 0] = 1
    Q[:, 1:, 1:] = Qs
    below = np.tril(np.ones((n, n), bool), -2)
    orth, form = unitary_reduction(Q, A, lambda b: below, operand_slack(attrs, len(A)), uw, u)
    return ratio_verdict([("‖I − Q̂ᴴQ̂‖₁/(n·ε)", *(x.reshape(batch) for x in orth)),
                          ("‖Q̂ᴴAQ̂ below the subdiagonal‖_F/(√n·n·‖A‖₁·ε)", *(x.reshape(batch) for x in form))],
                         thr, finite.reshape(batch), np.ones(batch, bool), "matrices")


PROPERTIES = {"gehrd.h": gehrd_h, "gehrd.q": gehrd_q}
