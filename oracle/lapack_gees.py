"""xGEES: the Schur decomposition A = Z·T·Zᴴ, read as what it computes
(`jax.scipy.linalg.schur`, `sqrtm`, `funm`, `rsf2csf`, which JAX lowers on
CPU to `lapack_{s,d,c,z}gees_ffi`; registered in oracle/custom_calls.py).

The call.  One square matrix a (batch×n×n) -> t (a's type: T, LAPACK
overwrites a with it), vs (a's type: Z), the eigenvalues — wr and wi
(real) or w (complex), batch×n — then sdim and info (si32, the batch
shape); `mode` 'V' (86: Z computed) or 'N' (78), `sort` 'N' (78: no
ordering — jaxlib takes no select function, so 'S' is not read).  t and
vs column-major with batch dimensions major-most (JAX's layouts).

The outputs (spec/schur.py for T and Z, spec/geev.py for the values):

* t: "gees.t" — (quasi-)triangular, its eigenvalues A's in any order, its
  Frobenius norm A's;
* vs: "gees.vectors" — orthogonal, and Zᴴ·A·Z of the Schur form ('N':
  any value: LAPACK does not reference it);
* the eigenvalues: "geev.values", as xGEEV's (oracle/custom_calls.py
  `eigenvalue_outputs`: T's diagonal order, whichever it is);
* sdim: 0 — xGEES: "If SORT = 'N', SDIM = 0"; info: 0.

Where spec/geev.py gives no discs (a defective matrix numpy cannot
diagonalise, or one past GEEV_LIMIT), T and the eigenvalues are any value,
labelled; Z's criterion needs none and is stated still.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ..spec.types import SI32
from .lapack_calls import (Call, Family, Misfit, all_column_major, char, eigenvalue_outputs, register, square,
                           want)

SDIM = "sdim 0: xGEES with SORT = 'N' (\"If SORT = 'N', SDIM = 0\")"


def _read(et, cfg, texts, ins, outs):
    a, batch, m, n = square("gees", ins, et)
    values = [(et, "w")] if et.is_complex else [(et, "wr"), (et, "wi")]
    if m != n or len(outs) != len(values) + 4:
        raise Misfit("xGEES takes a square matrix and gives t, vs, " + ", ".join(w for _, w in values)
                     + ", sdim and info")
    want(outs[0], a.shape, et, "t")
    want(outs[1], a.shape, et, "vs")
    for o, (t, what) in zip(outs[2:], values):
        want(o, batch + (n,), t, what)
    want(outs[-2], batch, SI32, "sdim")
    want(outs[-1], batch, SI32, "info")
    all_column_major(texts, ins, outs, [0, 1])
    mode = char(cfg, "mode", "VN")
    if cfg.get("sort", "N") != "N":
        raise Misfit("sort must be 'N' (78): an ordering by a select function is not read")
    return (("mode", mode), ("sort", "N"))


def _run(call: Call) -> list:
    from ..spec import geev, lapack, schur
    from ..spec.ops.cholesky import rounded
    et, a, ta, x = call.et, call.a, call.ta, call.x
    t_t, t_vs, *rest = call.result_types
    t_vals, t_sdim, t_info = rest[:-2], rest[-2], rest[-1]
    n = int(ta.shape[-1])
    thr = lapack.two_sided(n, et)
    batch = tuple(int(d) for d in ta.shape[:-2])
    T = np.zeros(x.shape, np.complex128 if et.is_complex else np.float64)
    Z = np.zeros(x.shape, T.dtype)
    for idx in np.ndindex(*batch):
        if n:
            T[idx], Z[idx] = sla.schur(x[idx], output="complex" if et.is_complex else "real")
    discs = geev.discs(x, et)
    if discs is None:
        out = [call.free(t_t, rounded(T, et), f"any value ({geev.NO_DISCS})")]
    else:
        rec = lapack.record("gees.t", {"discs": discs, "threshold": thr}, [(a, ta)], schur.SCHUR_T_STATEMENT, thr)
        out = [call.residual(t_t, rounded(T, et), rec, why=f"{call.sem.reading}: T, the Schur form")]
    if call.cfg["mode"] == "V":
        zrec = lapack.record("gees.vectors", {"threshold": thr}, [(a, ta)], schur.SCHUR_Z_STATEMENT, thr)
        out.append(call.residual(t_vs, rounded(Z, et), zrec, why=f"{call.sem.reading}: Z, the Schur vectors"))
    else:
        out.append(call.free(t_vs, call.zeros(t_vs), "any value (mode 'N': no Schur vectors; LAPACK does not "
                                                     "reference vs)"))
    if discs is None:
        out += [call.free(t, call.zeros(t), f"any value ({geev.NO_DISCS})") for t in t_vals]
    else:
        out += eigenvalue_outputs(call, t_vals, discs, thr)
    return out + [call.info(t_sdim, SDIM), call.info(t_info, "info 0, converged")]


register("gees", Family(_read, _run))
