"""`jax.lax.linalg.tridiagonal_solve` (lapack_{s,d,c,z}gtsv_ffi) judged as
the solve it computes (oracle/lapack_gtsv.py), and `jax.lax.linalg.svd`
with the QR algorithm (lapack_?gesvd_ffi) as xGESDD's outputs are.

Independent truth: XLA's solutions pass, and so does numpy's dense solve
of the matrix JAX documents (dl[0] and du[n−1] set nonzero, and ignored:
XLA's own answer must be a solution of that matrix, checked here by
numpy); the matrix with the diagonals shifted the other way, zeros,
negated and ×1.001 answers fail; a singular system leaves x any value."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from tests.oracle.jax_programs import DTYPES, ends, ok, program, rand


def dense(dl, d, du, shift=False):
    n = d.shape[-1]
    m = np.zeros(d.shape + (n,), np.complex128 if np.iscomplexobj(d) else np.float64)
    i = np.arange(n)
    m[..., i, i] = d
    lo, up = (dl[..., :-1], du[..., 1:]) if shift else (dl[..., 1:], du[..., :-1])
    m[..., i[1:], i[:-1]] = lo
    m[..., i[:-1], i[1:]] = up
    return m


def solve(dl, d, du, b):
    return jax.lax.linalg.tridiagonal_solve(dl, d, du, b)


def system(dtype, seed: int) -> list:
    """dl, d, du (3×9) and b (3×9×2): a batch of random tridiagonal systems."""
    rng = np.random.default_rng(seed)
    return [rand((3, 9), dtype, rng) for _ in range(3)] + [rand((3, 9, 2), dtype, rng)]


def held_as_a_solve(e, x, dl, d, du, b) -> None:
    """XLA's x and numpy's dense solve of JAX's matrix pass; the system with
    the diagonals shifted the other way, zeros, −x and ×1.001 fail."""
    m = dense(dl, d, du)
    assert ok(e, x) and ok(e, np.linalg.solve(m, b.astype(m.dtype)))
    assert not ok(e, np.linalg.solve(dense(dl, d, du, shift=True), b.astype(m.dtype)))
    for wrong in (np.zeros_like(x), -x, x.astype(m.dtype) * 1.001):
        assert not ok(e, wrong)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tridiagonal_solutions_are_judged(xla, dtype):
    dl, d, du, b = system(dtype, 7)
    (e,), (x,) = program(xla, solve, [dl, d, du, b])
    assert e.residual["property"] == "linear_solve" and "gtsv" in e.why
    m = dense(dl, d, du)
    assert np.abs(m @ x - b).max() < 1e-3 * np.abs(b).max() * (1e4 if dtype in (np.float32, np.complex64) else 1)
    held_as_a_solve(e, x, dl, d, du, b)


def test_a_solution_downstream_is_a_range(xla):
    rng = np.random.default_rng(8)
    dl, du = (rand(12, np.float32, rng) for _ in range(2))
    d = (rand(12, np.float32, rng) + 4).astype(np.float32)
    b = rand((12, 1), np.float32, rng)
    (e,), (got,) = program(xla, lambda *a: jnp.sum(solve(*a) ** 2), [dl, d, du, b])
    assert e.kind == "bounded" and ok(e, got)
    lo, hi = ends(e)
    assert hi - lo < 0.01 * abs(float(got))   # the width of GROWTH's threshold, through κ(M)
    assert not ok(e, got * np.float32(1.01)) and not ok(e, -got)


def test_a_singular_system_leaves_x_free(xla):
    d = np.array([1.0, 0.0, 1.0, 2.0], np.float32)
    dl = np.array([0.0, 0.0, 1.0, 1.0], np.float32)   # row 1 is all zero: M is singular
    du = np.array([0.0, 0.0, 1.0, 0.0], np.float32)
    b = np.ones((4, 1), np.float32)
    (e,), _ = program(xla, solve, [dl, d, du, b])
    assert e.kind != "residual" and "any value" in e.why
    assert ok(e, np.zeros((4, 1), np.float32)) and ok(e, np.full((4, 1), 7.0, np.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_svd_by_the_qr_algorithm_is_judged_as_gesdd_is(xla, dtype):
    rng = np.random.default_rng(9)
    a = rand((7, 5), dtype, rng)
    es, got = program(xla, lambda a: jax.lax.linalg.svd(a, algorithm=jax.lax.linalg.SvdAlgorithm.QR), [a])
    assert [e.residual["property"] for e in es] == ["svd.u", "svd.values", "svd.vt"]
    assert all("xGESVD" in e.why for e in es)
    for e, g in zip(es, got):
        assert ok(e, g) and not ok(e, g * 1.01) and not ok(e, np.zeros_like(g))
