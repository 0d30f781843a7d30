"""Q·R from `jnp.linalg.qr`, put back together: A within xGEQRF's contract
and the product's rounding (oracle/reconstruction.py).

Independent truth: A itself (the exact product of the exact factors).  XLA's
output must pass; zero, negated and ×1.01 must fail; Q with an R it was not
factored with must not be claimed.  Brute force: Q̃, R̃ at the edges of
qr.q's criterion and xGEQRF's contract, the product in f32 — inside."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from tests.oracle.jax_programs import judged_by_range, ok, program


def recon(a):
    q, r = jnp.linalg.qr(a)
    return q @ r


def test_q_times_r_is_a_and_xla_agrees(xla):
    a = np.random.default_rng(91).standard_normal((9, 5)).astype(np.float32)
    (e,), (got,) = program(xla, recon, [a])
    judged_by_range(e, "oracle/reconstruction.py", a.astype(np.float64), got)
    assert not ok(e, got * np.float32(1.01))


def test_a_batched_f64_product_is_tight(xla):
    a = np.random.default_rng(92).standard_normal((2, 6, 6))
    (e,), (got,) = program(xla, recon, [a])
    judged_by_range(e, "oracle/reconstruction.py", a, got)
    assert not ok(e, got * (1 + 1e-9))


def test_what_is_not_one_factorisation_is_not_claimed(xla):
    rng = np.random.default_rng(93)
    a, b = rng.standard_normal((7, 4)).astype(np.float32), rng.standard_normal((7, 4)).astype(np.float32)

    def two(a, b):   # Q of one matrix, R of another
        return jnp.linalg.qr(a)[0] @ jnp.linalg.qr(b)[1]

    def complete(a):
        q, r = jnp.linalg.qr(a, mode="complete")
        return q @ r

    def leftovers(a):   # LAPACK's reflectors left below R's diagonal (mode "raw": h is Rᵀ with them)
        h, _ = jnp.linalg.qr(a, mode="raw")
        return jnp.linalg.qr(a)[0] @ h.T[:4]
    for f, args in ((two, [a, b]), (complete, [a]), (leftovers, [a])):
        (e,), (got,) = program(xla, f, args)
        assert e.kind != "bounded" and "any value" in e.why and ok(e, got), e.why


def test_every_product_the_criteria_let_pass_lies_in_the_range():
    from shlo_conform.oracle.reconstruction import product_range
    from tests.oracle.qr_edges import factors_at_the_edges, matrices
    rng = np.random.default_rng(94)
    worst = 0.0
    for m, n, ta, t, a in matrices(rng, ((6, 3), (10, 4), (5, 5)), 8, shift=0.0):
        A = a.astype(np.float64)
        lo, hi = product_range(A, ta, t, t, np.zeros(1))
        for _ in range(6):
            qt, rt = factors_at_the_edges(A, t, rng)
            for Y in (qt @ rt, qt.astype(np.float32) @ rt.astype(np.float32)):
                Y = np.asarray(Y, dtype=np.float64)
                assert ((lo <= Y) & (Y <= hi)).all(), (m, n)
                worst = max(worst, float(np.max(np.abs(Y - A) / ((hi - lo) / 2))))
    print(f"worst sample: {worst:.3g} of the half-width")
    assert worst > 1e-3, worst
