"""Functions of a matrix's singular values put together from `jnp.linalg.svd`
— the polar factor U·Vᵀ, a reconstruction U·diag(s)·Vᵀ, U·diag(√s)·Vᵀ —
stated as a range (oracle/singular.py).

Independent truth: mpmath's SVD at 50 digits; the range must hold the
exact product and XLA's output, and refuse ×1.01 where its width can tell
(else say so), negated, zero and a product with one singular pair's signs
flipped apart.  Brute force: Ũ, Ṽ drawn at the edges of the criteria and of
xGESDD's contract, every product inside."""
from __future__ import annotations

import mpmath
import numpy as np
import pytest

import jax.numpy as jnp

from shlo_conform.spec.types import parse_type
from shlo_conform.suites.resolution import resolution
from tests.oracle.jax_programs import judged_by_range, ok, program


def exact_product(a: np.ndarray, g) -> np.ndarray:
    """U·diag(g(σ))·Vᵀ (thin) from mpmath at 50 digits."""
    with mpmath.workdps(50):
        U, S, V = mpmath.svd_r(mpmath.matrix(np.asarray(a, dtype=np.float64).tolist()), full_matrices=False)
        k = min(a.shape)
        Y = U * mpmath.diag([g(S[i]) for i in range(k)]) * V
        return np.array([[float(Y[i, j]) for j in range(a.shape[1])] for i in range(a.shape[0])])


def svd_of(a):
    return jnp.linalg.svd(a, full_matrices=False)


PROGRAMS = {
    "polar": (lambda a: (lambda u, s, vt: u @ vt)(*svd_of(a)), lambda x: mpmath.mpf(1)),
    "reconstruction": (lambda a: (lambda u, s, vt: (u * s) @ vt)(*svd_of(a)), lambda x: x),
    "reconstruction, rows of vt scaled": (lambda a: (lambda u, s, vt: u @ (s[:, None] * vt))(*svd_of(a)), lambda x: x),
    "square root, jnp.diag": (lambda a: (lambda u, s, vt: u @ jnp.diag(jnp.sqrt(s)) @ vt)(*svd_of(a)), mpmath.sqrt),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
@pytest.mark.parametrize("shape", [(6, 4), (5, 5), (3, 7)])
def test_a_function_of_the_singular_values_is_a_range_that_holds_the_exact_value(xla, name, shape):
    f, g = PROGRAMS[name]
    rng = np.random.default_rng(51 + shape[0])
    a = (rng.standard_normal(shape) + 2 * np.eye(*shape)).astype(np.float32)
    (e,), (got,) = program(xla, f, [a])
    judged_by_range(e, "oracle/singular.py", exact_product(a, g), got)
    r = resolution(e)
    assert ok(e, got * np.float32(1.01)) == (r.scaling_caught is None or r.scaling_caught > 0.01), r.describe()
    u, s, vt = np.linalg.svd(a.astype(np.float64), full_matrices=False)
    u[:, 0] = -u[:, 0]   # one pair's signs apart: each factor alone still passes its criterion
    apart = (u * np.array([float(g(mpmath.mpf(x))) for x in s])) @ vt
    assert not ok(e, apart.astype(np.float32))


def test_u_alone_times_a_matrix_stays_unchecked(xla):
    rng = np.random.default_rng(55)
    (e,), _ = program(xla, lambda a, b: svd_of(a)[0] @ b, [rng.standard_normal((6, 4)).astype(np.float32),
                                                          rng.standard_normal((4, 4)).astype(np.float32)])
    assert e.kind != "bounded" and "any value" in e.why


def _edge(a, thr, u, rng):
    """Ũ, S̃, Ṽ: the exact SVD with each singular pair's signs flipped together,
    the values moved within half their criterion and Gram errors near η;
    None where A − Ũ·S̃·Ṽᵀ is past the contract's bound."""
    m, n = a.shape
    k = min(m, n)
    U, S, Vt = np.linalg.svd(a, full_matrices=False)
    flips = rng.choice([-1.0, 1.0], k)
    U, V = U * flips, Vt.T * flips
    na = max(np.abs(a).sum(axis=0).max(), np.abs(a).sum(axis=1).max())
    a1 = np.abs(a).sum(axis=0).max()
    S_t = S + rng.uniform(-0.5, 0.5, k) * thr * max(m, n) * na * u
    eta = thr * k * u
    for X in (U, V):
        h = rng.standard_normal((k, k))
        h = h + h.T
        X[...] = X @ (np.eye(k) + 0.45 * eta * h / np.abs(h).sum(axis=0).max())
    E = a - (U * S_t) @ V.T   # the contract: within its bound, or the sample is not one a backend may give
    return (U, S_t, V) if np.abs(E).sum(axis=0).max() <= thr * max(m, n) * a1 * u else None


def test_every_product_the_criteria_and_the_contract_let_pass_lies_in_the_range():
    from shlo_conform.oracle.singular import singular_range
    from shlo_conform.spec import lapack
    rng = np.random.default_rng(56)
    worst, samples = 0.0, 0
    for m, n in ((6, 4), (5, 5), (3, 6)):
        ta = parse_type(f"tensor<{m}x{n}xf32>")
        u = 2.0 ** -24
        thr = lapack.two_sided(max(m, n), ta.element_type)
        for trial in range(20):
            a = (rng.standard_normal((m, n)) + 2 * np.eye(m, n)).astype(np.float32).astype(np.float64)
            sig, err = lapack.spectrum(a, ta.element_type, "svd")
            rec = {"attributes": {"values": sig.reshape(-1).tolist(), "error": err.reshape(-1).tolist()},
                   "threshold": thr}
            for g in (lambda x: np.ones_like(x), lambda x: x, np.sqrt):
                c = g(sig.reshape(-1)).astype(np.float32).astype(np.float64)
                width = np.abs(c) * 2.0 ** -20 + np.abs(g(sig.reshape(-1) + thr * max(m, n) * 8 * u) - c)
                lo_d, hi_d = c - width, c + width
                lo, hi = singular_range(a.astype(np.float32), ta, rec, c, lo_d, hi_d)
                center, half = (lo + hi) / 2, (hi - lo) / 2
                for _ in range(3):
                    got = _edge(a, thr, u, rng)
                    if got is None:
                        continue
                    U, S_t, V = got
                    samples += 1
                    d = np.clip(g(S_t), lo_d, hi_d)
                    for Y in ((U * d) @ V.T, (U.astype(np.float32) * d.astype(np.float32)) @ V.T.astype(np.float32)):
                        Y = np.asarray(Y, dtype=np.float64)
                        assert ((lo <= Y) & (Y <= hi)).all(), (m, n, trial)
                        worst = max(worst, float(np.max(np.abs(Y - center) / half)))
    print(f"worst of {samples} samples: {worst:.3g} of the half-width")
    assert samples > 300 and worst > 1e-4, (samples, worst)


def test_an_f64_polar_factor_is_tight(xla):
    rng = np.random.default_rng(57)
    a = rng.standard_normal((7, 4)) + 2 * np.eye(7, 4)
    (e,), (got,) = program(xla, PROGRAMS["polar"][0], [a])
    judged_by_range(e, "oracle/singular.py", exact_product(a, PROGRAMS["polar"][1]), got)
    assert not ok(e, got * (1 + 1e-8))
