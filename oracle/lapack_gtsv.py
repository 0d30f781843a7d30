"""xGTSV: a tridiagonal linear system, read as the solve it computes
(`jax.lax.linalg.tridiagonal_solve`, which JAX lowers on CPU to
`lapack_{s,d,c,z}gtsv_ffi`; registered in oracle/custom_calls.py).

The call.  Operands dl, d, du (batch×n each) and b (batch×n×k); results
dl, d, du (LAPACK overwrites them with the factors: any value), x (b's
type) and info (si32, the batch shape).  The matrix solved is JAX's

    M = diag(d) + diag(dl[1:], −1) + diag(du[:n−1], +1)

— jaxlib hands LAPACK `dl + 1`, so dl[0] and du[n−1] are never read
(checked against XLA:CPU in tests/oracle/test_lapack_gtsv.py with both set
nonzero).  b and x are column-major matrices, batch dimensions major-most
(JAX's layouts); the diagonals are vectors of the batch.

The judgement.  x is the solution of M·x = b, so it is judged by
spec/lapack.py's "linear_solve" criterion (LAPACK dget02's ratio
‖M·x − b‖₁ / (n·‖M‖₁·‖x‖₁·ε) per right-hand side), as `jnp.linalg.solve`'s
is, and downstream it enters as the range that criterion lets pass
(oracle/chains.py `as_range`).  Its threshold is xGETRF + xGETRS's,
`solve_threshold(n, GROWTH)`, with GROWTH a bound on ‖|L|·|U|‖₁/‖M‖₁ that
holds for every tridiagonal matrix: Gaussian elimination with partial
pivoting (xGTSV's) has growth factor ρ ≤ 2 on a tridiagonal matrix
(Bothe 1975; Higham, Accuracy and Stability of Numerical Algorithms, 2nd
ed., §9.6), L is unit lower bidiagonal with |lᵢⱼ| ≤ 1 and U has three
diagonals with |uᵢⱼ| ≤ 2·max|m|; so (|L|·|U|)ᵢⱼ ≤ |uᵢⱼ| + |uᵢ₋₁,ⱼ| ≤
4·max|m|, at most four such rows in a column, and ‖|L|·|U|‖₁ ≤ 16·max|m|
≤ 16·‖M‖₁.

Singular systems.  Where M's determinant (the continuant fᵢ = dᵢ·fᵢ₋₁ −
dlᵢ·duᵢ₋₁·fᵢ₋₂, in arb balls) is not proven nonzero, M·x = b may have no
solution: every output is any value, labelled, as for xGETRF's zero pivot.
"""
from __future__ import annotations

import numpy as np

from ..spec.types import SI32, TensorType
from .lapack_calls import (Call, Family, Misfit, all_column_major, given_layouts, matrix_type, register, want,
                           want_results)

GROWTH = 16.0   # ‖|L|·|U|‖₁ / ‖M‖₁ at most, every tridiagonal M (module docstring)
SINGULAR = "M's determinant is not proven nonzero (arb): M·x = b may have no solution"


def read_system(et, texts, ins, outs, results: list, x_at: int, words: str) -> None:
    """The checks a tridiagonal solve's call shares (xGTSV's, and jaxlib's
    perturbed solve, oracle/tridiagonal_perturbed.py): operands dl, d, du
    (batch×n, vectors) and b (batch×n×k, column-major); `results`: the
    names of the diagonals the call gives back (xGTSV: all three, jaxlib's:
    none), x at `x_at` of the results, info where `results` has it."""
    if len(ins) != 4:
        raise Misfit(words)
    b = matrix_type(ins[3], et, "b")
    batch, n = tuple(b.shape[:-2]), int(b.shape[-2])
    for t, what in zip(ins[:3], ("dl", "d", "du")):
        want(t, batch + (n,), et, what)
    shapes = {"x": (b.shape, et), "info": (batch, SI32)}
    want_results(outs, [shapes.get(w, (batch + (n,), et)) + (f"the result {w}" if w in ("dl", "d", "du") else w,)
                        for w in results], words)
    all_column_major(texts, ins, outs, [x_at], matrix_ins=(3,))
    given_in, given_out = given_layouts(texts, ins, outs)
    vector = tuple(range(b.rank - 2, -1, -1))
    for g in given_in[:3] + given_out[:x_at]:
        if g != vector:
            raise Misfit(f"layout {list(g)}: only the diagonals as vectors, batch dimensions major-most, are read")


def _read(et, cfg, texts, ins, outs):
    read_system(et, texts, ins, outs, ["dl", "d", "du", "x", "info"], 3,
                "xGTSV takes dl, d, du and b and gives dl, d, du, x and info")
    return ()


def matrix(dl: np.ndarray, d: np.ndarray, du: np.ndarray) -> np.ndarray:
    """JAX's M per batch index: diag(d) + diag(dl[1:], −1) + diag(du[:n−1], +1)."""
    n = d.shape[-1]
    m = np.zeros(d.shape + (n,), d.dtype)
    i = np.arange(n)
    m[..., i, i] = d
    m[..., i[1:], i[:-1]] = dl[..., 1:]
    m[..., i[:-1], i[1:]] = du[..., :-1]
    return m


def proven_nonsingular(dl: np.ndarray, d: np.ndarray, du: np.ndarray) -> bool:
    """M's continuant, per batch index, excludes 0 as an arb (acb) ball."""
    from flint import acb, ctx
    old = ctx.prec
    ctx.prec = 256
    try:
        for idx in np.ndindex(*d.shape[:-1]):
            f2, f1 = acb(1), acb(complex(d[idx][0])) if d.shape[-1] else acb(1)
            for i in range(1, d.shape[-1]):
                f2, f1 = f1, acb(complex(d[idx][i])) * f1 - acb(complex(dl[idx][i])) * acb(complex(du[idx][i - 1])) * f2
            if f1.contains(0):
                return False
        return True
    finally:
        ctx.prec = old


def _run(call: Call) -> list:
    from ..spec import lapack
    from ..spec.ops.cholesky import rounded
    et = call.et
    t_dl, t_d, t_du, t_x, t_info = call.result_types
    dl, d, du, b = (np.asarray(v) for v in call.arrays)
    tb = call.ins[3]
    wide = np.complex128 if et.is_complex else np.float64
    M = matrix(*(v.astype(wide) for v in (dl, d, du)))
    overwritten = [call.free(t, call.zeros(t), "any value (LAPACK overwrites it with the factors)")
                   for t in (t_dl, t_d, t_du)]
    n = int(tb.shape[-2])
    if n and not proven_nonsingular(dl, d, du):
        return overwritten + [call.free(t, call.zeros(t), f"any value ({SINGULAR})") for t in (t_x, t_info)]
    tm = TensorType(tuple(tb.shape[:-2]) + (n, n), et)
    thr = lapack.solve_threshold(n, GROWTH, et)
    rec = lapack.record("linear_solve", {"threshold": thr}, [(M.astype(et.numpy), tm), (b, tb)],
                        lapack.SOLVE_STATEMENT, thr)
    ref = np.linalg.solve(M, b.astype(wide)) if n and 0 not in tb.shape else np.zeros(b.shape, wide)
    return overwritten + [call.residual(t_x, rounded(ref, et), rec,
                                        why=f"{call.sem.reading}: x solves M·x = b, M = diag(d) + diag(dl[1:], −1) "
                                            "+ diag(du[:n−1], +1) (oracle/lapack_gtsv.py)"),
                          call.info(t_info, "info 0, a nonsingular matrix")]


register("gtsv", Family(_read, _run))
