"""Truncated factors: PCA's top k eigenvectors and a truncated SVD, put
together (oracle/spectral.py `selection`, oracle/singular.py).

V[:, S]·diag(d_S)·V[:, S]ᵀ is V·diag(c)·Vᵀ with c = 0 off S; the range is
the whole factor's with those c.  Independent truth: mpmath's eigen- and
singular decompositions at 50 digits, the function applied on the kept
indices only; the range must hold it and XLA's output, refuse zero,
negated and the other subspace, and pieces of two different selections
must not be put together."""
from __future__ import annotations

import mpmath
import numpy as np
import pytest

import jax.numpy as jnp

from tests.oracle.jax_programs import judged_by_range, ok, program


def exact_eigh(a: np.ndarray, c) -> np.ndarray:
    """U·diag(c(λ, i))·Uᵀ in mpmath at 50 digits, i the index in ascending order."""
    n = a.shape[0]
    with mpmath.workdps(50):
        lam, U = mpmath.eigsy(mpmath.matrix(np.asarray(a, dtype=np.float64).tolist()))
        order = sorted(range(n), key=lambda i: lam[i])
        G = mpmath.matrix(n, n)
        for rank, i in enumerate(order):
            G[i, i] = c(lam[i], rank)
        T = U * G * U.T
        return np.array([[float(T[i, j]) for j in range(n)] for i in range(n)])


def exact_svd(a: np.ndarray, k: int, scaled: bool) -> np.ndarray:
    """U[:, :k]·diag(σ[:k] or 1)·Vᵀ[:k] in mpmath at 50 digits (σ descending)."""
    with mpmath.workdps(50):
        U, S, V = mpmath.svd_r(mpmath.matrix(np.asarray(a, dtype=np.float64).tolist()), full_matrices=False)
        order = sorted(range(min(a.shape)), key=lambda i: -S[i])[:k]
        Y = mpmath.matrix(*a.shape)
        for i in order:
            Y += U[:, i] * (S[i] if scaled else 1) * V[i, :]
        return np.array([[float(Y[i, j]) for j in range(a.shape[1])] for i in range(a.shape[0])])


def spd(n, rng):
    g = rng.standard_normal((n, n))
    return (g @ g.T / n + np.diag(np.linspace(0.5, 3.0, n))).astype(np.float32)


K = 2
EIGH = {
    "top-k reconstruction": (lambda s: (lambda w, v: (v[:, -K:] * w[-K:]) @ v[:, -K:].T)(*jnp.linalg.eigh(s)),
                             lambda lam, i, n: lam if i >= n - K else 0),
    "top-k projector": (lambda s: (lambda w, v: v[:, -K:] @ v[:, -K:].T)(*jnp.linalg.eigh(s)),
                        lambda lam, i, n: 1 if i >= n - K else 0),
    "bottom-k, jnp.diag": (lambda s: (lambda w, v: v[:, :K] @ jnp.diag(jnp.sqrt(w[:K])) @ v[:, :K].T)(
        *jnp.linalg.eigh(s)), lambda lam, i, n: mpmath.sqrt(lam) if i < K else 0),
}


@pytest.mark.parametrize("name", list(EIGH))
def test_a_truncated_spectral_function_holds_the_exact_value(xla, name):
    f, c = EIGH[name]
    n = 6
    s = spd(n, np.random.default_rng(81))
    (e,), (got,) = program(xla, f, [s])
    judged_by_range(e, "oracle/spectral.py", exact_eigh(s, lambda lam, i: c(lam, i, n)), got)
    other = exact_eigh(s, lambda lam, i: c(lam, n - 1 - i, n))   # the same function on the other end's subspace
    assert not ok(e, other.astype(np.float32))


def test_a_pca_reconstruction_of_centred_data_is_judged(xla):
    """Xc·V_k·V_kᵀ with the covariance computed in the program (its slack carried)."""
    x = np.random.default_rng(82).standard_normal((64, 5)).astype(np.float32) * np.float32([3, 2, 1, 0.5, 0.25])

    def pca(x):
        xc = x - x.mean(axis=0)
        _, v = jnp.linalg.eigh(xc.T @ xc / x.shape[0])
        return xc @ v[:, -K:] @ v[:, -K:].T
    (e,), (got,) = program(xla, pca, [x])
    xc = x.astype(np.float64) - x.astype(np.float64).mean(axis=0)
    cov = xc.T @ xc / x.shape[0]
    w, v = np.linalg.eigh(cov)   # float64 eigenvectors of a well-separated spectrum (gaps ≥ 0.5): 1e-15 close
    judged_by_range(e, "oracle/spectral.py", xc @ v[:, -K:] @ v[:, -K:].T, got)
    assert not ok(e, xc.astype(np.float32))   # the data itself is not its rank-2 part


SVD = {
    "truncated reconstruction": (lambda a: (lambda u, s, vt: (u[:, :K] * s[:K]) @ vt[:K])(
        *jnp.linalg.svd(a, full_matrices=False)), True),
    "truncated polar, rows scaled": (lambda a: (lambda u, s, vt: u[:, :K] @ (jnp.ones(K, vt.dtype)[:, None] * vt[:K]))(
        *jnp.linalg.svd(a, full_matrices=False)), False),
}


@pytest.mark.parametrize("name", list(SVD))
def test_a_truncated_svd_holds_the_exact_value(xla, name):
    f, scaled = SVD[name]
    a = (np.random.default_rng(83).standard_normal((7, 5)) + np.eye(7, 5) * [4.0, 3, 2, 1, 0.5]).astype(np.float32)
    (e,), (got,) = program(xla, f, [a])
    judged_by_range(e, "oracle/singular.py", exact_svd(a, K, scaled), got)
    assert not ok(e, exact_svd(a, K + 1, scaled).astype(np.float32))   # one more component kept


def test_pieces_of_two_selections_are_not_put_together(xla):
    s = spd(6, np.random.default_rng(84))
    a = np.random.default_rng(85).standard_normal((6, 4)).astype(np.float32)
    mixed = [
        (lambda s: (lambda w, v: (v[:, -K:] * w[-K:]) @ v[:, :K].T)(*jnp.linalg.eigh(s)), s),
        (lambda s: (lambda w, v: v[:, 1:3] @ v[:, 2:4].T)(*jnp.linalg.eigh(s)), s),
        (lambda a: (lambda u, s_, vt: (u[:, :K] * s_[:K]) @ vt[1:K + 1])(*jnp.linalg.svd(a, full_matrices=False)), a),
        (lambda s: (lambda w, v: v[::2, -K:] @ v[::2, -K:].T)(*jnp.linalg.eigh(s)), s),   # rows dropped: not V
    ]
    for f, x in mixed:
        (e,), (got,) = program(xla, f, [x])
        assert e.kind != "bounded" and "any value" in e.why and ok(e, got), e.why


def test_every_truncated_product_the_criterion_lets_pass_lies_in_the_range():
    """V at the edge of eigh's criterion; Y = V[:, S]·diag(d_S)·V[:, S]ᵀ — the top k, the bottom k — in float64
    and f32: inside the range of c = d on S, 0 off it."""
    from shlo_conform.oracle.spectral import spectral_range
    from shlo_conform.spec import lapack
    from shlo_conform.spec.types import parse_type
    from tests.oracle.test_spectral import _edge_vectors
    rng = np.random.default_rng(86)
    worst, f32 = 0.0, np.float32
    for n in (4, 7):
        ta = parse_type(f"tensor<{n}x{n}xf32>")
        thr = lapack.two_sided(n, ta.element_type)
        for trial in range(10):
            s = spd(n, rng)
            lam, err = lapack.spectrum(s.astype(np.float64), ta.element_type, "eigh")
            lam = lam.reshape(-1)
            rec = {"attributes": {"lower": True, "values": lam.tolist(), "error": err.reshape(-1).tolist()},
                   "threshold": thr}
            keep = np.arange(n - K, n) if trial % 2 else np.arange(K)
            c = np.zeros(n)
            c[keep] = lam[keep].astype(np.float32)
            lo, hi = spectral_range(s, ta, rec, c, c, c)
            center = (lo + hi) / 2
            for _ in range(4):
                V = _edge_vectors(s.astype(np.float64), lam, thr, 2.0 ** -24, rng)[:, keep]
                d = c[keep]
                for Y in ((V * d) @ V.T, (V.astype(f32) * d.astype(f32)) @ V.T.astype(f32)):
                    Y = np.asarray(Y, dtype=np.float64)
                    assert ((lo <= Y) & (Y <= hi)).all(), (n, trial)
                    worst = max(worst, float(np.max(np.abs(Y - center) / ((hi - lo) / 2))))
    print(f"worst sample: {worst:.3g} of the half-width")
    assert worst > 1e-3, worst


def test_run_s_affine_forms_keep_the_range_whole(xla):
    """`run` intersects a range with the affine form of its operands.  The two parts of one factor are "any
    value" alone, and a form at their primary values once cut PCA's range so far that XLA's own output
    fell outside (DISAGREES, oracle/affine.py `_stated`).  With forms on, XLA's output passes and the range
    still holds the exact projection."""
    import jax
    from shlo_conform.oracle import affine
    from shlo_conform.oracle.program import execute, parse_program
    from tests.oracle.jax_programs import ends

    def pca(x):
        xc = x - x.mean(axis=0)
        _, v = jnp.linalg.eigh(xc.T @ xc / x.shape[0])
        return xc @ v[:, -K:] @ v[:, -K:].T
    x = (np.random.default_rng(82).standard_normal((64, 4)) * [4, 3, 1, 1]).astype(np.float32)
    text = jax.jit(pca).lower(x).as_text()
    with affine.enable():
        (e,) = execute(parse_program(text), [x])
    got = np.asarray(xla.run(xla.compile(text), [x])[0])
    xc = x.astype(np.float64) - x.astype(np.float64).mean(axis=0)
    _, v = np.linalg.eigh(xc.T @ xc / x.shape[0])
    lo, hi = ends(e)
    truth = xc @ v[:, -K:] @ v[:, -K:].T
    assert e.kind == "bounded" and ok(e, got) and ((lo <= truth) & (truth <= hi)).all()


def test_batched_factors_put_together_hold_the_exact_values(xla):
    """A batch of three: the polar factor U·Vᵀ, its truncation U[..., :k]·Vᵀ[..., :k, :] and a top-k projector —
    d = 1 on the picked columns, per matrix of the batch."""
    rng = np.random.default_rng(88)
    a = (rng.standard_normal((3, 6, 4)) + np.eye(6, 4) * [4.0, 3, 2, 1]).astype(np.float32)
    s = np.stack([spd(5, rng) for _ in range(3)])
    svd = lambda a: jnp.linalg.svd(a, full_matrices=False)   # noqa: E731
    cases = [
        (lambda a: (lambda u, _, vt: u @ vt)(*svd(a)), a,
         [exact_svd(m, 4, False) for m in a], "oracle/singular.py"),
        (lambda a: (lambda u, _, vt: u[..., :K] @ vt[..., :K, :])(*svd(a)), a,
         [exact_svd(m, K, False) for m in a], "oracle/singular.py"),
        (lambda s: (lambda w, v: v[..., -K:] @ jnp.swapaxes(v[..., -K:], -1, -2))(*jnp.linalg.eigh(s)), s,
         [exact_eigh(m, lambda lam, i: 1 if i >= 5 - K else 0) for m in s], "oracle/spectral.py"),
    ]
    for f, x, truth, module in cases:
        (e,), (got,) = program(xla, f, [x])
        judged_by_range(e, module, np.stack(truth), got)
