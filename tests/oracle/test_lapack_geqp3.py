"""`jax.scipy.linalg.qr(pivoting=True)` (lapack_{s,d,c,z}geqp3_ffi, then
xORGQR): the pivots stated where every choice of column pivoting is
decisive, R judged as xGEQRF's R of A·P, Q as its Q (oracle/lapack_geqp3.py).

Independent truth: XLA's Q, R and pivots pass; scipy's (another LAPACK
build, in double, rounded) pass; wrong ones fail (R ×1.01, zeros, the
pivots reversed, Q ×1.01).  The margin: on 300 matrices of f32 (a third
built with near-ties of column norms, the rest Gaussian), XLA's pivots
equal the oracle's wherever it states them — and with the backend's error
allowance taken away (MARGIN = 0) some differ, so the sample reaches the
edge."""
from __future__ import annotations

import jax
import numpy as np
import pytest
import scipy.linalg as sla

import shlo_conform.oracle.lapack_geqp3 as geqp3
from shlo_conform.spec.types import element_type
from tests.oracle.jax_programs import DTYPES, ok, program, rand


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["full", "economic"])
def test_pivoted_qr_is_judged(xla, dtype, mode):
    rng = np.random.default_rng(13)
    a = rand((2, 7, 5), dtype, rng)
    (eq, er, ep), (q, r, p) = program(xla, lambda a: jax.scipy.linalg.qr(a, pivoting=True, mode=mode), [a])
    assert eq.residual["property"] == "qr.q" and er.residual["property"] == "geqrf.r" and ep.kind == "exact"
    assert ok(eq, q) and ok(er, r) and ok(ep, p)
    wide = a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)
    qs, rs, ps = (np.stack(x) for x in zip(*(sla.qr(m, pivoting=True, mode=mode) for m in wide)))
    assert ok(eq, qs) and ok(er, rs) and ok(ep, ps.astype(np.int32))
    for e, wrong in ((er, r * 1.01), (er, np.zeros_like(r)), (ep, p[..., ::-1]), (eq, q * 1.01)):
        assert not ok(e, wrong)


def test_a_near_tie_leaves_everything_free(xla):
    a = np.eye(4, 3, dtype=np.float32)   # three columns of norm 1 exactly: no choice is decisive
    es, _ = program(xla, lambda a: jax.scipy.linalg.qr(a, pivoting=True), [a])
    assert all(e.kind != "residual" and "any value" in e.why for e in es)


def _near_ties(rng, m, n):
    q, _ = np.linalg.qr(rng.standard_normal((m, n)))
    scale = 1 + rng.uniform(-1, 1, n) * 10.0 ** rng.uniform(-8, -3)
    mix = np.eye(n) + 10.0 ** rng.uniform(-6, -2) * np.triu(rng.standard_normal((n, n)), 1)
    return ((q * scale) @ mix).astype(np.float32)


def test_xlas_pivots_match_wherever_they_are_stated(monkeypatch):
    f = jax.jit(lambda a: jax.scipy.linalg.qr(a, pivoting=True, mode="r")[1])
    rng = np.random.default_rng(14)
    shapes = ((20, 10), (30, 30), (64, 32), (7, 5))
    mats = [_near_ties(rng, *shapes[i % 4]) if i % 3 == 0 else rng.standard_normal(shapes[i % 4]).astype(np.float32)
            for i in range(300)]
    got = [np.asarray(f(a)) for a in mats]
    f32 = element_type("f32")

    def mismatches():
        stated = bad = 0
        for a, g in zip(mats, got):
            piv, _, why = geqp3.pivots(a.astype(np.float64), f32)
            if why is None:
                stated += 1
                bad += not np.array_equal(piv, g)
        return stated, bad
    stated, bad = mismatches()
    assert bad == 0 and stated > 120
    monkeypatch.setattr(geqp3, "MARGIN", 0.0)
    assert mismatches()[1] > 0
