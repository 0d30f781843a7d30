"""xGEHRD: the reduction to Hessenberg form A = Q·H·Qᴴ, read as what it
computes (`jax.scipy.linalg.hessenberg`, which JAX lowers on CPU to
`lapack_{s,d,c,z}gehrd_ffi`; registered in oracle/custom_calls.py).

The call.  One square matrix a (batch×n×n) -> a (H in its upper Hessenberg
part, the Householder vectors of Q below it), tau (batch×(n−1), the
reflectors' scalars) and info (si32, the batch shape); `low` and `high`
(i32: LAPACK's ILO and IHI) must be 1 and n, the whole matrix — what JAX
passes (a balanced matrix's partial reduction is not read).  a
column-major with batch dimensions major-most (JAX's layout).

The outputs: a — "gehrd.h" on its upper Hessenberg part (spec/
hessenberg.py), the vectors below it not scored; tau — any value (the
representation of Q, as xGEQRF's); info — 0.  Where spec/geev.py gives no
discs (a defective matrix numpy cannot diagonalise, or past GEEV_LIMIT), a
is any value, labelled.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ..spec.types import SI32
from .lapack_calls import Call, Family, Misfit, all_column_major, register, square, want_results


def _read(et, cfg, texts, ins, outs):
    a, batch, m, n = square("gehrd", ins, et)
    words = "xGEHRD takes a square matrix and gives a, tau and info"
    if m != n:
        raise Misfit(words)
    want_results(outs, [(a.shape, et, "a"), (batch + (max(n - 1, 0),), et, "tau"), (batch, SI32, "info")], words)
    all_column_major(texts, ins, outs, [0])
    if cfg.get("low") != 1 or cfg.get("high") != n:
        raise Misfit(f"low and high (ILO, IHI) must be 1 and n = {n}, the whole matrix "
                     f"(got {cfg.get('low')!r}, {cfg.get('high')!r})")
    return (("low", 1), ("high", n))


def _run(call: Call) -> list:
    from . import characterized as ch
    from ..spec import geev, hessenberg, lapack
    from ..spec.ops.cholesky import rounded
    et, a, ta, x = call.et, call.a, call.ta, call.x
    t_a, t_tau, t_info = call.result_types
    n = int(ta.shape[-1])
    packed = np.zeros(x.shape, x.dtype)
    tau = np.zeros(tuple(int(d) for d in t_tau.shape), x.dtype)
    for idx in np.ndindex(*x.shape[:-2]):
        if n:
            (gehrd,) = sla.lapack.get_lapack_funcs(("gehrd",), (x[idx],))
            packed[idx], t, _ = gehrd(x[idx])[:3]
            tau[idx] = t[:n - 1]
    discs = geev.discs(x, et)
    if discs is None:
        h = call.free(t_a, rounded(packed, et), f"any value ({geev.NO_DISCS})")
    else:
        rec = lapack.record("gehrd.h", {"discs": discs, "threshold": lapack.two_sided(n, et)}, [(a, ta)],
                            hessenberg.GEHRD_STATEMENT, lapack.two_sided(n, et))
        h = call.residual(t_a, rounded(packed, et), rec, why=f"{call.sem.reading}: H, the Hessenberg form")
    return [h, call.free(t_tau, rounded(tau, et), "any value (the Householder scalars: the representation of Q is "
                                                  "implementation-defined)", tag=ch.pending("gehrd.tau", a, ta)),
            call.info(t_info, "info 0")]


register("gehrd", Family(_read, _run))
