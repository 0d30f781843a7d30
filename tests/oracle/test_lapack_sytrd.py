"""`jax.lax.linalg.tridiagonal` (lapack_{s,d}sytrd_ffi, lapack_{c,z}hetrd_ffi):
T = Qᴴ·A·Q judged on a by its eigenvalues and the end Q keeps, d and e
alone by necessary conditions (spec/tridiagonal.py).

Independent truth: XLA's outputs pass; scipy's xSYTRD / xHETRD (another
LAPACK build, in double, rounded) pass, and so do e's signs flipped; the
reduction of A + E at 0.9 of the allowance passes, and at 30 times it some
fail.  Wrong outputs fail: a, d negated, ×1.01 or zero, e ×1.01 or zero."""
from __future__ import annotations

import jax
import numpy as np
import pytest
import scipy.linalg as sla

from tests.oracle.jax_programs import DTYPES, at_the_allowance, ok, program, rand


def hermitian(x):
    return (x + np.conj(np.swapaxes(x, -1, -2))) / 2


def scipy_trd(a, lower):
    w = np.asarray(a).astype(np.complex128 if np.iscomplexobj(a) else np.float64)
    (trd,) = sla.lapack.get_lapack_funcs(("hetrd" if np.iscomplexobj(w) else "sytrd",), (w,))
    c, d, e, tau, info = trd(w, lower=int(lower))
    assert info == 0
    return c, d, e


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [True, False])
def test_tridiagonal_reductions_are_judged(xla, dtype, lower):
    rng = np.random.default_rng(15)
    a = hermitian(rand((2, 6, 6), dtype, rng)).astype(dtype)
    (ea, ed, ee, et), (ga, gd, ge, gt) = program(xla, lambda a: jax.lax.linalg.tridiagonal(a, lower=lower), [a])
    assert [e.residual["property"] for e in (ea, ed, ee)] == ["sytrd.a", "sytrd.d", "sytrd.e"]
    assert ok(ea, ga) and ok(ed, gd) and ok(ee, ge)
    c, d, e = (np.stack(x) for x in zip(*(scipy_trd(m, lower) for m in a)))
    assert ok(ea, c) and ok(ed, d) and ok(ee, e) and ok(ee, -e)
    for exp, got in ((ea, ga), (ed, gd)):
        for wrong in (-got, got * 1.01, np.zeros_like(got)):
            assert not ok(exp, wrong)
    assert not ok(ee, ge * 1.01) and not ok(ee, np.zeros_like(ge))


def test_the_reduction_of_a_perturbation_at_the_allowance_passes(xla):
    rng = np.random.default_rng(16)
    n = 8
    a = hermitian(rand((n, n), np.float32, rng)).astype(np.float32)
    es, _ = program(xla, lambda a: jax.lax.linalg.tridiagonal(a, lower=True), [a])
    assert at_the_allowance(es, a, lambda m: scipy_trd(m, True), rng,
                            direction=lambda r, k: hermitian(r.standard_normal((k, k)))) > 0
