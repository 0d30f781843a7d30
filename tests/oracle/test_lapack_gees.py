"""`jax.scipy.linalg.schur` (lapack_{s,d,c,z}gees_ffi): the Schur form T and
Schur vectors Z, each judged alone by what makes it one (spec/schur.py;
oracle/lapack_gees.py reads the call).

Independent truth: XLA's outputs pass; scipy's Schur decomposition (another
LAPACK build, in double, rounded) passes — in LAPACK's order, reordered
(`sort`: the eigenvalues of the left half-plane first) and with Z's columns
flipped (T's rows and columns with them); a Schur form built by hand from
a triangular matrix of chosen eigenvalues and an exact orthogonal Q
passes.  Wrong outputs fail: zeros, negated, ×1.01, T transposed, T's
off-diagonal part doubled, a Z that only reduces A to Hessenberg form, Z
scaled, the identity."""
from __future__ import annotations

import jax
import numpy as np
import pytest
import scipy.linalg as sla

from tests.oracle.jax_programs import DTYPES, at_the_allowance, ok, program, rand, wide


def schur(a):
    return jax.scipy.linalg.schur(a, output="complex" if np.iscomplexobj(a) else "real")


@pytest.mark.parametrize("dtype", DTYPES)
def test_xla_and_scipy_schur_forms_pass_in_any_order_and_signs(xla, dtype):
    rng = np.random.default_rng(3)
    a = rand((7, 7), dtype, rng)
    (et, ez), (t, z) = program(xla, schur, [a])
    assert et.residual["property"] == "gees.t" and ez.residual["property"] == "gees.vectors"
    assert ok(et, t) and ok(ez, z)
    out = "complex" if np.iscomplexobj(a) else "real"
    for sort in (None, "lhp", "iuc"):
        ts, zs, *_ = sla.schur(wide(a), output=out, sort=sort) if sort else (*sla.schur(wide(a), output=out), 0)
        assert ok(et, ts) and ok(ez, zs), sort
    d = np.diag(np.where(np.arange(7) % 2, -1.0, 1.0))
    ts, zs = sla.schur(wide(a), output=out)
    assert ok(et, d @ ts @ d) and ok(ez, zs @ d)   # Z's columns flipped: T's rows and columns too
    if np.iscomplexobj(a):
        ph = np.diag(np.exp(1j * np.arange(7)))
        assert ok(et, ph.conj() @ ts @ ph) and ok(ez, zs @ ph)


@pytest.mark.parametrize("dtype", DTYPES)
def test_wrong_schur_forms_and_vectors_fail(xla, dtype):
    rng = np.random.default_rng(4)
    a = rand((2, 6, 6), dtype, rng)
    (et, ez), (t, z) = program(xla, schur, [a])
    assert ok(et, t) and ok(ez, z)
    for wrong in (np.zeros_like(t), -t, t * 1.01, np.swapaxes(t, -1, -2)):
        assert not ok(et, wrong)
    doubled = t + np.triu(t, 2)   # the off-diagonal part beyond the blocks doubled: eigenvalues kept, size not
    assert not ok(et, doubled)
    h, q = sla.hessenberg(wide(a[0]), calc_q=True)
    for wrong in (np.zeros_like(z), z * 1.01, np.broadcast_to(np.eye(6, dtype=z.dtype), z.shape),
                  np.stack([q, q]).astype(z.dtype)):
        assert not ok(ez, wrong)


def test_a_schur_form_built_by_hand_passes(xla):
    """T upper triangular with eigenvalues 1..5 (exact in f64), Q an exact
    orthogonal matrix (a Householder reflector of a vector of norm 2): A =
    Q·T·Qᵀ in f64, T and Q rounded from it pass, and so does T with its
    eigenvalues in another order (scipy's reordering of the same A)."""
    T = np.triu(np.arange(1.0, 26.0).reshape(5, 5) / 8) + np.diag([1.0, 2.0, 3.0, 4.0, 5.0]) \
        - np.diag(np.diag(np.arange(1.0, 26.0).reshape(5, 5) / 8))
    v = np.array([1.0, 1.0, 1.0, 1.0, 0.0])   # ‖v‖² = 4: Q = I − v·vᵀ/2 is exact in binary
    Q = np.eye(5) - np.outer(v, v) / 2
    A = Q @ T @ Q.T
    (et, ez), _ = program(xla, schur, [A])
    assert ok(et, T) and ok(ez, Q)
    assert not ok(et, T + np.diag([0, 0, 0, 0, 1e-6]))   # an eigenvalue moved
    ts, zs, _ = sla.schur(A, sort=lambda x, y: x > 3)
    assert ok(et, ts) and ok(ez, zs)


def test_mode_n_judges_t_and_sqrtm_is_unchecked(xla):
    rng = np.random.default_rng(5)
    a = rand((5, 5), np.float32, rng)
    (et,), (t,) = program(xla, lambda a: jax.lax.linalg.schur(a, compute_schur_vectors=False), [a])
    assert et.residual["property"] == "gees.t" and "mode 'N'" in et.why and ok(et, t) and not ok(et, -t)
    (e,), (got,) = program(xla, lambda a: jax.numpy.real(jax.scipy.linalg.sqrtm(a)),
                           [(a + 4 * np.eye(5)).astype(np.float32)])
    assert "any value" in e.why and ok(e, got) and ok(e, np.zeros_like(got))   # unchecked, said so; not refused


def test_a_matrix_computed_upstream_is_judged_with_its_distance(xla):
    """A = x·y in f32: the backend factors its own rounding of the product;
    the criteria widen by ‖Â − A‖₁ (oracle/chains.py `matrix_slack`), and the
    Schur form of the product before rounding (scipy, in double) passes."""
    rng = np.random.default_rng(6)
    x, y = rand((8, 8), np.float32, rng), rand((8, 8), np.float32, rng)
    (et, ez), (t, z) = program(xla, lambda x, y: schur(x @ y), [x, y])
    assert et.residual["slack"][0] > 0 and ez.residual["slack"][0] > 0
    assert ok(et, t) and ok(ez, z)
    ts, zs = sla.schur(wide(x) @ wide(y))
    assert ok(et, ts) and ok(ez, zs)
    assert not ok(et, -t) and not ok(ez, z * 1.01)


@pytest.mark.parametrize("n", [4, 9])
def test_the_schur_decomposition_of_a_perturbation_at_the_allowance_passes(xla, n):
    """Brute force over the contract: T and Z of A + E (scipy in double,
    rounded to f32), ‖E‖₂ at 0.9 of the allowance t·n·‖A‖₁·ε in random
    directions, all pass; at 30 times the allowance some fail — the
    sampling reaches past the edge the proof draws."""
    rng = np.random.default_rng(10 + n)
    a = rand((n, n), np.float32, rng)
    (et, ez), _ = program(xla, schur, [a])
    assert at_the_allowance([et, ez], a, sla.schur, rng) > 0
