"""xSYTRD / xHETRD: a Hermitian matrix reduced to tridiagonal form, A =
Q·T·Qᴴ, read as what it computes (`jax.lax.linalg.tridiagonal`, which JAX
lowers on CPU to `lapack_{s,d}sytrd_ffi` and `lapack_{c,z}hetrd_ffi`;
registered in oracle/custom_calls.py).

The call.  One square matrix a (batch×n×n), `uplo` 'L' (76) or 'U' (85):
the triangle read -> a (T and the Householder vectors in that triangle),
d (real, batch×n), e (real, batch×(n−1)), tau (a's type, batch×(n−1)) and
info.  a column-major with batch dimensions major-most (JAX's layout),
so the triangle is the one named, as indexed.

The outputs (spec/tridiagonal.py): a — "sytrd.a" on T's diagonal and
sub- or superdiagonal (the vectors and the other triangle not scored); d —
"sytrd.d"; e — "sytrd.e"; tau — any value (the representation of Q);
info — 0.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ..spec.types import SI32
from .lapack_calls import Call, Family, Misfit, REAL_OF, all_column_major, char, register, square, want_results


def _read(et, cfg, texts, ins, outs):
    a, batch, m, n = square("sytrd", ins, et)
    words = "xSYTRD / xHETRD takes a square matrix and gives a, d, e, tau and info"
    if m != n:
        raise Misfit(words)
    real, k = REAL_OF[et.name], batch + (max(n - 1, 0),)
    want_results(outs, [(a.shape, et, "a"), (batch + (n,), real, "d"), (k, real, "e"), (k, et, "tau"),
                        (batch, SI32, "info")], words)
    all_column_major(texts, ins, outs, [0])
    return (("uplo", char(cfg, "uplo", "LU")),)


def _run(call: Call) -> list:
    from ..spec import lapack, tridiagonal
    from ..spec.ops.cholesky import rounded
    et, a, ta, x = call.et, call.a, call.ta, call.x
    t_a, t_d, t_e, t_tau, t_info = call.result_types
    lower = call.cfg["uplo"] == "L"
    A = lapack.hermitian_read(x, lower)
    n = int(ta.shape[-1])
    vals, err = lapack.spectrum(A, et, "eigh")
    thr = lapack.two_sided(n, et)
    attrs = {"lower": lower, "values": vals.reshape(-1).tolist(), "error": err.reshape(-1).tolist(), "threshold": thr}
    packed = np.zeros(x.shape, x.dtype)
    d = np.zeros(tuple(int(s) for s in t_d.shape))
    e = np.zeros(tuple(int(s) for s in t_e.shape))
    tau = np.zeros(tuple(int(s) for s in t_tau.shape), x.dtype)
    for idx in np.ndindex(*x.shape[:-2]):
        if n:
            (trd,) = sla.lapack.get_lapack_funcs(("hetrd" if et.is_complex else "sytrd",), (A[idx],))
            packed[idx], d[idx], e[idx], tau[idx], _ = trd(A[idx], lower=int(lower))
    out = []
    for t, ref, prop, statement, what in (
            (t_a, packed, "sytrd.a", tridiagonal.SYTRD_A_STATEMENT, "T in a"),
            (t_d, d, "sytrd.d", tridiagonal.SYTRD_D_STATEMENT, "T's diagonal"),
            (t_e, e, "sytrd.e", tridiagonal.SYTRD_E_STATEMENT, "T's off-diagonal")):
        rec = lapack.record(prop, attrs, [(a, ta)], statement, thr)
        out.append(call.residual(t, rounded(ref, t.element_type), rec, why=f"{call.sem.reading}: {what}"))
    return out + [call.free(t_tau, rounded(tau, et), "any value (the Householder scalars: the representation of Q "
                                                     "is implementation-defined)"),
                  call.info(t_info, "info 0")]


register("sytrd", Family(_read, _run, lambda p: "hetrd" if p in "cz" else "sytrd"), "sytrd/hetrd")
