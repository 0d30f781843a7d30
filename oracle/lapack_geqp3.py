"""xGEQP3: QR with column pivoting, A·P = Q·R, read as what it computes
(`jax.scipy.linalg.qr(pivoting=True)`, which JAX lowers on CPU to
`lapack_{s,d,c,z}geqp3_ffi` and xORGQR; registered in
oracle/custom_calls.py).

The call.  Operands a (batch×m×n) and jpvt (si32, batch×n: LAPACK's
initial column flags — JAX passes zeros, every column free); results a
(R in its upper trapezoid, the Householder vectors below), jpvt (the
1-based permutation: column j of A·P is column jpvt(j) of A) and tau
(batch×min(m, n)).  a column-major with batch dimensions major-most.

The pivots.  Column pivoting picks, at step k, the column whose part
orthogonal to the k columns already chosen is largest (xGEQP3: "the
column with the largest partial norm").  Those partial norms νⱼ(k) are
‖R(k:m, j)‖₂ of the pivoted R.  The oracle takes float64 LAPACK's pivoted R
(scipy) and states the pivots only where every choice is decisive: the
chosen partial norm exceeds every other by more than the error of both.
That error has two parts:

* float64's: its R is within γ(4mn)·‖A‖_F of exact (a backward-stable QR);
* the backend's: xLAQP2 / xLAQPS do not compute the partial norms but
  downdate them, ν² − |aₖⱼ|², and compute one again (a norm of the
  trailing column) whenever it has fallen below ε^(1/4) of the last one
  computed, ν̄ⱼ.  Each downdate errs by about ε·ν̄ⱼ² in ν², and the trailing
  column itself by about ε·‖aⱼ‖ (the reflectors' backward error), so after
  k steps νⱼ is off by about k·ε·(ρ² + ρ) relative, ρ = ‖aⱼ‖/νⱼ(k) capped at
  ε^(-1/4) (ν̄ⱼ ≤ ‖aⱼ‖, and ν̄ⱼ < ε^(-1/4)·νⱼ or it would have been computed
  again).  The oracle allows MARGIN = 8 times that.  This is the error
  analysis of LAPACK's scheme (Drmač & Bujanović, "On the failure of
  rank-revealing QR factorization software", 2008), not a proof for every
  backend: a backend whose norms err more is told its pivots differ.

Where a choice is within that, jpvt and everything else is any value,
labelled (as xGETRF's pivots at a near-tie).  Where every choice is
decisive:

* jpvt: exact (LAPACK's 1-based pivots);
* a: "geqrf.r" of A·P (spec/lapack.py: ‖(AP)ᴴ(AP) − RᴴR‖₁ ratio, signs
  free; the vectors below R not scored);
* tau: any value (the representation of Q), tagged as xGEQRF's of A·P, so
  that xORGQR downstream is judged as "qr.q" of A·P (oracle/chains.py).

A nonzero initial jpvt (columns fixed in front) is not read: every output
is then any value, labelled.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ..spec.expectation import Expectation
from ..spec.types import SI32
from .lapack_calls import Call, Family, Misfit, all_column_major, matrix_type, register, want, want_results

MARGIN = 8.0   # c of the downdated norms' relative error c·k·ε·(ρ² + ρ) (module docstring)
FIXED_COLUMNS = "a nonzero initial jpvt (columns fixed in front): not read"


def _read(et, cfg, texts, ins, outs):
    if len(ins) != 2:
        raise Misfit("xGEQP3 takes a and jpvt and gives a, jpvt and tau")
    a = matrix_type(ins[0], et, "a")
    batch, (m, n) = tuple(a.shape[:-2]), (int(a.shape[-2]), int(a.shape[-1]))
    want(ins[1], batch + (n,), SI32, "jpvt")
    want_results(outs, [(a.shape, et, "a"), (batch + (n,), SI32, "the result jpvt"), (batch + (min(m, n),), et, "tau")],
                 "xGEQP3 takes a and jpvt and gives a, jpvt and tau")
    all_column_major(texts, ins, outs, [0])
    return ()


def pivots(x: np.ndarray, et) -> tuple[np.ndarray | None, np.ndarray | None, str | None]:
    """(0-based pivots per matrix, A·P, None) where every choice is decisive
    (module docstring), else (None, None, why)."""
    from ..spec.ops.cholesky import unit_roundoff
    m, n = x.shape[-2:]
    batch = x.shape[:-2]
    piv = np.zeros(batch + (n,), np.int64)
    u = unit_roundoff(et)
    cap = u ** -0.25   # a norm is computed again once it has fallen below ε^(1/4) of the last one computed
    g = 4 * m * n * 2.0 ** -53 / (1 - 4 * m * n * 2.0 ** -53)
    for idx in np.ndindex(*batch):
        if m == 0 or n == 0:
            piv[idx] = np.arange(n)
            continue
        r, p = sla.qr(x[idx], mode="r", pivoting=True)
        err = g * float(np.linalg.norm(x[idx]))   # float64's: R within γ(4mn)·‖A‖_F of exact
        full = np.sqrt((np.abs(r) ** 2).sum(axis=0))   # ‖(A·P)(:, j)‖₂
        for k in range(min(m, n) - 1):
            nu = np.sqrt((np.abs(r[k:, k:]) ** 2).sum(axis=0))
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.minimum(np.where(nu > 0, full[k:] / nu, np.inf), cap)
            rel = MARGIN * (k + 1) * u * (ratio ** 2 + ratio)
            low, high = nu * (1 - rel) - err, nu * (1 + rel) + err
            if not low[0] > high[1:].max():
                return None, None, (f"column pivoting's choice at step {k + 1} is not decisive: its partial norm "
                                    f"{nu[0]:.6g} against {nu[1:].max():.6g}, within the error of the backend's "
                                    "downdated norms (oracle/lapack_geqp3.py)")
        piv[idx] = p
    ap = np.take_along_axis(x, np.broadcast_to(piv[..., None, :], x.shape), axis=-1)
    return piv, ap, None


def _run(call: Call) -> list:
    from . import characterized as ch
    from ..spec import lapack
    from ..spec.ops.cholesky import rounded
    et, ta, x = call.et, call.ta, call.x
    t_a, t_piv, t_tau = call.result_types
    m, n = (int(d) for d in ta.shape[-2:])
    if np.asarray(call.arrays[1]).any():
        return [call.free(t, call.zeros(t), f"any value ({FIXED_COLUMNS})") for t in call.result_types]
    piv, ap, why = pivots(x, et)
    if why is not None:
        return [call.free(t, call.zeros(t), f"any value ({why})") for t in call.result_types]
    h = np.zeros(x.shape, x.dtype)
    tau = np.zeros(tuple(int(d) for d in t_tau.shape), x.dtype)
    for idx in np.ndindex(*x.shape[:-2]):
        if m and n:
            hh, tt = np.linalg.qr(ap[idx], mode="raw")
            h[idx], tau[idx] = hh.T, tt
    apt = ap.astype(et.numpy)   # A's columns permuted: every element one of A's
    rec = lapack.record("geqrf.r", {}, [(apt, ta)], lapack.QR_R_STATEMENT, lapack.two_sided(max(m, n), et))
    return [call.residual(t_a, rounded(h, et), rec, why=f"{call.sem.reading}: R of A·P, P the pivots stated"),
            Expectation.of((piv + 1).astype(np.int32), t_piv,
                           why=f"{call.sem.reading}: the pivots of column pivoting (1-based), every choice decisive"),
            call.free(t_tau, rounded(tau, et), "any value (the Householder scalars: the representation of Q is "
                                               "implementation-defined)", tag=ch.pending("geqrf.tau", apt, ta))]


register("geqp3", Family(_read, _run))
