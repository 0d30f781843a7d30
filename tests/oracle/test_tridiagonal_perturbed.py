"""`jax.lax.linalg.tridiagonal_solve(..., perturb_singular=True)` (jaxlib's
`tridiagonal_solve_perturbed_ffi`, one target for every type) judged as the
solve it computes (oracle/tridiagonal_perturbed.py), and what it unlocks:
`jax.scipy.linalg.eigh_tridiagonal` with eigenvectors, whose eigenvalues are
now judged.

Independent truth: XLA's solutions pass, so does numpy's dense solve of the
matrix JAX documents; zeros, a negated answer, ×1.001 and the other
diagonal's system fail; on a singular system (T − λI, λ an eigenvalue in
float64) XLA's perturbed answer passes and the criterion reads as loose —
a scaled answer is as right; the elimination the oracle runs in float64
is a factorisation (its U and z give numpy's solution back)."""
from __future__ import annotations

import jax
import numpy as np
import pytest

from shlo_conform.differential import judge_outputs
from shlo_conform.oracle.tridiagonal_perturbed import eliminate
from tests.oracle.jax_programs import DTYPES, ok, program
from tests.oracle.test_lapack_gtsv import dense, held_as_a_solve, system


def solve(dl, d, du, b):
    return jax.lax.linalg.tridiagonal_solve(dl, d, du, b, perturb_singular=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_perturbed_solutions_are_judged(xla, dtype):
    dl, d, du, b = system(dtype, 17)
    (e,), (x,) = program(xla, solve, [dl, d, du, b])
    text = jax.jit(solve).lower(dl, d, du, b).as_text()
    assert "tridiagonal_solve_perturbed_ffi" in text and "lapack" not in text
    assert e.residual["property"] == "linear_solve" and "perturbed tridiagonal solve" in e.why
    held_as_a_solve(e, x, dl, d, du, b)


def test_a_singular_system_is_solved_as_perturbed_and_read_as_loose(xla):
    rng = np.random.default_rng(18)
    n = 12
    alpha, beta = rng.standard_normal(n), rng.standard_normal(n - 1)
    lam = np.linalg.eigvalsh(np.diag(alpha) + np.diag(beta, 1) + np.diag(beta, -1))[4]
    d = (alpha - lam).astype(np.float32)
    dl = np.concatenate([[0], beta]).astype(np.float32)
    du = np.concatenate([beta, [0]]).astype(np.float32)
    b = rng.standard_normal((n, 1)).astype(np.float32)
    (e,), (x,) = program(xla, solve, [dl, d, du, b])
    assert np.abs(x).max() > 1e3 * np.abs(b).max()   # large along the eigenvector: a (near-)singular system
    (rep,) = judge_outputs([e], [x])
    assert rep.ok and rep.status == "INCONCLUSIVE", rep.status   # x·1.01 would pass as well: said, not "agrees"
    assert not ok(e, np.zeros_like(x))


def test_a_right_hand_side_past_the_premise_leaves_x_free(xla):
    d = np.array([1.0, 0.0, 1.0], np.float32)
    dl = np.array([0.0, 0.0, 0.0], np.float32)
    du = np.array([0.0, 0.0, 0.0], np.float32)   # a zero pivot, and b at 1e30: jaxlib's move may grow past ε·max|U|
    b = np.full((3, 1), 1e30, np.float32)
    (e,), _ = program(xla, solve, [dl, d, du, b])
    assert e.kind != "residual" and "premise fails" in e.why


def test_the_float64_elimination_is_a_factorisation():
    rng = np.random.default_rng(19)
    dl, d, du = (rng.standard_normal((4, 10)) for _ in range(3))
    d[..., 3] = 1e-9   # some rows interchanged, some not
    b = rng.standard_normal((4, 10, 2))
    growth, umax, theirs, pivots, zmax = eliminate(dl, d, du, b)
    assert (growth >= 1).all() and (theirs <= umax).all() and (zmax > 0).all()
    # P·M = L·U, P interchanges of rows and L unit lower: U's diagonal multiplies to ±det(M)
    assert np.allclose(np.abs(np.prod(pivots, axis=-1)), np.abs(np.linalg.det(dense(dl, d, du))), rtol=1e-9)


def test_eigh_tridiagonal_vectors_no_longer_refuse_the_program(xla):
    rng = np.random.default_rng(20)
    a, e = rng.standard_normal(8).astype(np.float32), rng.standard_normal(7).astype(np.float32)
    (e_w, e_v), (w, v) = program(xla, lambda a, e: jax.scipy.linalg.eigh_tridiagonal(a, e, eigvals_only=False),
                                 [a, e])
    assert ok(e_w, w) and not ok(e_w, w * np.float32(1.01))   # the eigenvalues (bisection): judged
    assert not ok(e_w, np.zeros_like(w))
    (rep,) = judge_outputs([e_v], [v])
    assert rep.status == "UNCHECKED"   # the vectors, through inverse iteration's loop: said unchecked
