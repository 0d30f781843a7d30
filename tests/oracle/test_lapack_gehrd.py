"""`jax.scipy.linalg.hessenberg` (lapack_{s,d,c,z}gehrd_ffi, then xORGQR of
its reflectors for Q): H judged by what the reduction fixes (spec/
hessenberg.py), Q by being unitary, Q·e₁ = e₁, and reducing A to
Hessenberg form.

Independent truth: XLA's outputs pass; scipy's Hessenberg reduction
(another LAPACK build, in double, rounded) passes, and with Q's columns
2..n flipped (H's rows and columns with them); the Hessenberg reduction of
A + E at 0.9 of the allowance passes.  Wrong outputs fail: zeros, negated
(Q's constant first column included), ×1.01, H transposed, the identity
for Q, a Q that does not keep e₁."""
from __future__ import annotations

import jax
import numpy as np
import pytest
import scipy.linalg as sla

from tests.oracle.jax_programs import DTYPES, at_the_allowance, ok, program, rand, wide


def hessenberg(a):
    return jax.scipy.linalg.hessenberg(a, calc_q=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_hessenberg_forms_and_their_q_are_judged(xla, dtype):
    rng = np.random.default_rng(11)
    a = rand((2, 6, 6), dtype, rng)
    (eh, eq), (h, q) = program(xla, hessenberg, [a])
    assert eh.residual["property"] == "gehrd.h" and eq.residual["property"] == "gehrd.q"
    assert ok(eh, h) and ok(eq, q)
    hs, qs = (np.stack(x) for x in zip(*(sla.hessenberg(wide(m), calc_q=True) for m in a)))
    d = np.diag([1.0, -1.0, 1.0, 1.0, -1.0, -1.0])
    assert ok(eh, hs) and ok(eq, qs) and ok(eh, d @ hs @ d) and ok(eq, qs @ d)
    for wrong in (np.zeros_like(h), -h, h * 1.01, np.swapaxes(h, -1, -2)):
        assert not ok(eh, wrong)
    p = np.eye(6)[[0, 2, 1, 3, 4, 5]]   # keeps e₁, orthogonal, but does not reduce A
    for wrong in (np.zeros_like(q), -q, q * 1.01, np.broadcast_to(np.eye(6), q.shape).astype(q.dtype),
                  (qs @ p).astype(q.dtype), qs[..., ::-1].astype(q.dtype)):
        assert not ok(eq, wrong)


def test_the_reduction_of_a_perturbation_at_the_allowance_passes(xla):
    rng = np.random.default_rng(12)
    n = 7
    a = rand((n, n), np.float32, rng)
    (eh, eq), _ = program(xla, hessenberg, [a])
    assert at_the_allowance([eh, eq], a, lambda m: sla.hessenberg(m, calc_q=True), rng) > 0
