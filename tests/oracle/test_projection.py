"""The orthogonal projection onto A's columns from `jnp.linalg.qr`,
Q·(Qᵀ·x), stated as a range (oracle/projection.py).

Independent truth: A·(AᵀA)⁻¹·Aᵀ·x in mpmath at 50 digits; the range must
hold it and XLA's output, and refuse ×1.01, negated and zero.  Brute
force: Q̃ spanning A − E (E at xGEQRF's contract's bound) with its Gram
error near qr.q's bound, x anywhere in its range, the products in f32."""
from __future__ import annotations

import mpmath
import numpy as np

import jax.numpy as jnp

from tests.oracle.jax_programs import ends, judged_by_range, ok, program


def project(a, x):
    q, _ = jnp.linalg.qr(a)
    return q @ (q.T @ x)


def exact_projection(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    with mpmath.workdps(50):
        A, X = (mpmath.matrix(np.asarray(v, dtype=np.float64).tolist()) for v in (a, x))
        P = A * (A.T * A) ** -1 * A.T * X
        return np.array([[float(P[i, j]) for j in range(x.shape[1])] for i in range(x.shape[0])])


def test_a_projection_is_a_range_that_holds_the_exact_value(xla):
    rng = np.random.default_rng(61)
    a, x = rng.standard_normal((12, 4)).astype(np.float32), rng.standard_normal((12, 3)).astype(np.float32)
    (e,), (got,) = program(xla, project, [a, x])
    judged_by_range(e, "oracle/projection.py", exact_projection(a, x), got)
    assert not ok(e, got * np.float32(1.01))
    assert not ok(e, x)   # x itself is not its projection


def test_the_part_orthogonal_to_the_columns_of_a_computed_x_is_judged(xla):
    """x − Q·(Qᵀ·tanh(x)): Qᵀ·b with b computed upstream carries b's radius."""
    rng = np.random.default_rng(62)
    a, x = rng.standard_normal((10, 3)).astype(np.float32), rng.standard_normal((10, 2)).astype(np.float32)
    (e,), (got,) = program(xla, lambda a, x: x - project(a, jnp.tanh(x)), [a, x])
    assert e.kind == "bounded", e.why
    lo, hi = ends(e)
    truth = x.astype(np.float64) - exact_projection(a, np.tanh(x.astype(np.float64)))
    assert ((lo <= truth) & (truth <= hi)).all() and ok(e, got) and not ok(e, -got)


def test_a_complete_q_or_a_rank_deficient_a_is_not_claimed(xla):
    rng = np.random.default_rng(63)
    a, x = rng.standard_normal((6, 3)).astype(np.float32), rng.standard_normal((6, 1)).astype(np.float32)

    def complete(a, x):
        q, _ = jnp.linalg.qr(a, mode="complete")
        return q @ (q.T @ x)
    deficient = a.copy()
    deficient[:, 2] = deficient[:, 1]
    for f, args in ((complete, [a, x]), (project, [deficient, x])):
        (e,), (got,) = program(xla, f, args)
        assert e.kind != "bounded" and "any value" in e.why and ok(e, got), e.why


def test_every_projection_the_criteria_let_pass_lies_in_the_range():
    from scipy.linalg import orth
    from shlo_conform.oracle.projection import projection_range
    from tests.oracle.qr_edges import U32, contract_error, matrices, n1
    rng = np.random.default_rng(64)
    worst, f32 = 0.0, np.float32
    for m, n, ta, t, a in matrices(rng, ((6, 3), (12, 4), (5, 5)), 20):
        A = a.astype(np.float64)
        x = rng.standard_normal((m, 2))
        r = np.abs(x) * 1e-4 * rng.random(x.shape)
        got = projection_range(a, ta, t, x, r)
        assert got is not None
        lo, hi = got
        center, half = (lo + hi) / 2, (hi - lo) / 2
        for _ in range(4):
            w, _ = np.linalg.qr(rng.standard_normal((n, n)))
            h = rng.standard_normal((n, n))
            h = (h + h.T) * t * m * U32 / (2.02 * n1(h + h.T))
            Q = orth(A - contract_error(A, t, rng)) @ w @ (np.eye(n) + h)
            assert n1(Q.T @ Q - np.eye(n)) <= t * m * U32
            xt = x + r * rng.uniform(-1, 1, x.shape)
            for Y in (Q @ (Q.T @ xt), Q.astype(f32) @ (Q.T.astype(f32) @ xt.astype(f32))):
                Y = np.asarray(Y, dtype=np.float64)
                assert ((lo <= Y) & (Y <= hi)).all(), (m, n)
                worst = max(worst, float(np.max(np.abs(Y - center) / half)))
    print(f"worst sample: {worst:.3g} of the half-width")
    assert worst > 1e-3, worst


def test_an_f64_projection_is_tight(xla):
    rng = np.random.default_rng(65)
    a, x = rng.standard_normal((7, 4)) + 2 * np.eye(7, 4), rng.standard_normal((7, 2))
    (e,), (got,) = program(xla, project, [a, x])
    judged_by_range(e, "oracle/projection.py", exact_projection(a, x), got)
    assert not ok(e, got * (1 + 1e-8))
