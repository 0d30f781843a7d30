"""`jax.scipy.linalg.lu`'s L and U judged element by element.

JAX returns L and U picked out of xGETRF's one LU result by data movement
(tril and triu by `select`, zeros and the identity put in).  Each alone
used to be "any value" (the factorisation's criterion reads them together);
with the pivots stated, every element is the same element of every LU any
evaluation order can give — a range oracle/lu_diagonal.py `lu_elements`
states (ball elimination, leading minors, and Schur complements of P·A + E
that do not wrap), and oracle/chains.py `_diagonal` carries.

Independent truth: the exact LU (fractions: every float is a rational),
LAPACK's sgetrf / cgetrf (scipy), and float32 eliminations in several
evaluation orders written here — right-looking rank-one updates, inner
products summed forwards and backwards, inner products rounded once (an
FMA chain's limit) — must all lie in the ranges; XLA's outputs must agree;
wrong factors (scaled by 1.001, negated, transposed, L and U swapped, the
other pivoting's factors) must fail."""
from __future__ import annotations

from fractions import Fraction

import jax.scipy.linalg as jsl
import numpy as np
import pytest
import scipy.linalg as sla

from shlo_conform.oracle.lu_diagonal import lu_elements, lu_elements_complex
from shlo_conform.spec.lapack import lu_pivoting
from shlo_conform.spec.types import C64, E_F32, E_F64
from tests.oracle.jax_programs import ends, ok, program, rand


def exact_lu(a: np.ndarray, piv: np.ndarray) -> np.ndarray:
    """The m×n LU of P·A in exact rationals, P the 1-based interchanges `piv`."""
    w = [[Fraction(float(x)) for x in row] for row in a]
    m, n = len(w), len(w[0])
    for j in range(min(m, n)):
        r = int(piv[j]) - 1
        w[j], w[r] = w[r], w[j]
        for i in range(j + 1, m):
            w[i][j] = w[i][j] / w[j][j]
            for c in range(j + 1, n):
                w[i][c] -= w[i][j] * w[j][c]
    return np.array([[float(x) for x in row] for row in w])


def doolittle(a: np.ndarray, order: str) -> np.ndarray:
    """GEPP of `a` in float32, its m×n LU: each element one inner product of
    the row with the factors so far — summed "forward", "backward", or
    "once" (in float64, rounded once: what a fused chain tends to) — or
    "right" (right-looking: rank-one updates of the trailing matrix)."""
    w = a.astype(np.float32).copy()
    m, n = w.shape
    if order == "right":
        for j in range(min(m, n)):
            r = j + int(np.argmax(np.abs(w[j:, j])))
            w[[j, r]] = w[[r, j]]
            w[j + 1:, j] = (w[j + 1:, j] / w[j, j]).astype(np.float32)
            w[j + 1:, j + 1:] = (w[j + 1:, j + 1:] - np.outer(w[j + 1:, j], w[j, j + 1:]).astype(np.float32))
        return w
    out = np.zeros_like(w)
    for j in range(min(m, n)):
        def s(i, c):
            terms = [np.float32(out[i, t] * out[t, c]) for t in range(j)]
            if order == "once":
                return np.float32(float(w[i, c]) - sum(float(out[i, t]) * float(out[t, c]) for t in range(j)))
            acc = w[i, c]
            for x in (reversed(terms) if order == "backward" else terms):
                acc = np.float32(acc - x)
            return acc
        cand = [s(i, j) for i in range(j, m)]
        r = j + int(np.argmax(np.abs(cand)))
        w[[j, r]], out[[j, r]] = w[[r, j]], out[[r, j]]
        for c in range(j, n):
            out[j, c] = s(j, c)
        for i in range(j + 1, m):
            out[i, j] = np.float32(s(i, j) / out[j, j])
    return out


@pytest.mark.parametrize("shape", [(3, 3), (6, 6), (10, 10), (16, 16), (8, 5), (5, 8)])
def test_every_element_holds_every_evaluation_order_tried(shape):
    rng = np.random.default_rng(sum(shape))
    a = rng.standard_normal(shape).astype(np.float32)
    _, piv, _, why = lu_pivoting(a.astype(np.float64), E_F32)
    assert why is None
    lo, hi = lu_elements(a, E_F32, piv)
    tries = [exact_lu(a, piv), sla.lu_factor(a)[0] if shape[0] == shape[1] else None] + \
        [doolittle(a, o) for o in ("forward", "backward", "once", "right")]
    for t in tries:
        if t is not None:
            t = np.asarray(t, np.float64)
            assert ((lo <= t) & (t <= hi)).all(), (shape, np.argwhere(~((lo <= t) & (t <= hi))))
    half = (hi - lo) / 2 / np.maximum(np.abs(exact_lu(a, piv)), 1e-30)
    assert np.median(half) < 2e-5   # a few ulp, not a statement that says nothing


def test_the_ranges_do_not_wrap_where_the_balls_do():
    """f32 32×32: the ball elimination's radii wrap past a pivot's decision;
    the Schur complements' boxes still state every element, holding the
    exact LU and LAPACK's."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((32, 32)).astype(np.float32)
    _, piv, _, why = lu_pivoting(a.astype(np.float64), E_F32)
    assert why is None
    assert isinstance(lu_elements(a, E_F32, piv, minors=False), str)   # the balls alone: undecided
    lo, hi = lu_elements(a, E_F32, piv)
    for t in (exact_lu(a, piv), sla.lu_factor(a)[0], doolittle(a, "right")):
        assert ((lo <= t) & (t <= hi)).all()
    assert np.median((hi - lo) / 2 / np.abs(exact_lu(a, piv))) < 1e-4


def test_complex_elements_hold_lapack_and_the_exact_factors():
    rng = np.random.default_rng(4)
    a = rand((6, 6), np.complex64, rng)
    _, piv, _, why = lu_pivoting(a.astype(np.complex128), C64)
    assert why is None
    re_lo, re_hi, im_lo, im_hi = lu_elements_complex(a, C64, piv)
    lu, piv_lapack = sla.lu_factor(a)
    assert np.array_equal(piv_lapack + 1, piv)
    for t in (lu, sla.lu_factor(a.astype(np.complex128))[0]):
        assert ((re_lo <= t.real) & (t.real <= re_hi) & (im_lo <= t.imag) & (t.imag <= im_hi)).all()


@pytest.mark.parametrize("dtype, shape", [(np.float32, (8, 8)), (np.float32, (8, 5)), (np.float64, (12, 12)),
                                          (np.complex64, (6, 6))])
def test_lu_outputs_are_judged_element_by_element(xla, dtype, shape):
    rng = np.random.default_rng(7)
    a = rand(shape, dtype, rng)
    (ep, el, eu), (p, l, u) = program(xla, jsl.lu, [a])
    assert ep.kind == "exact" and el.kind == "bounded" and eu.kind == "bounded", (el.why, eu.why)
    assert "any value" not in el.why + eu.why
    assert ok(ep, p) and ok(el, l) and ok(eu, u)
    for e, got in ((el, l), (eu, u)):
        for wrong in (-got, np.zeros_like(got), (got * (1 + 1e-3)).astype(dtype)):
            assert not ok(e, wrong)
    if shape[0] == shape[1]:
        assert not ok(eu, u.T) and not ok(el, l.T) and not ok(el, u) and not ok(eu, l)
    if not np.iscomplexobj(a):   # the exact factors inside
        _, piv, _, _ = lu_pivoting(a.astype(np.float64), E_F64 if dtype == np.float64 else E_F32)
        x = exact_lu(a, piv)
        k = min(shape)
        for e, t in ((el, np.tril(x[:, :k], -1) + np.eye(shape[0], k)), (eu, np.triu(x[:k]))):
            lo, hi = ends(e)
            assert ((lo <= t) & (t <= hi)).all()


def test_a_factor_with_another_pivoting_fails(xla):
    """The factors of A without row interchanges (the first pivot not the
    largest) are a valid LU of another P·A: U is not this one's."""
    a = np.array([[0.5, 2, 1], [3, 1, -1], [1, -2, 4]], np.float32)
    (_, el, eu), _ = program(xla, jsl.lu, [a])
    w = doolittle(a, "forward")   # with partial pivoting's interchanges …
    nopiv = a.astype(np.float64).copy()
    for j in range(2):   # … and with none at all
        nopiv[j + 1:, j] /= nopiv[j, j]
        nopiv[j + 1:, j + 1:] -= np.outer(nopiv[j + 1:, j], nopiv[j, j + 1:])
    assert ok(eu, np.triu(w).astype(np.float32))
    assert not ok(eu, np.triu(nopiv).astype(np.float32))
    assert not ok(el, (np.tril(nopiv, -1) + np.eye(3)).astype(np.float32))


def test_p_l_u_computed_on_is_a_range_holding_a(xla):
    """p @ l @ u downstream: the product of the ranges, holding A itself
    (P·L·U = A exactly for the exact factors) and XLA's product."""
    rng = np.random.default_rng(9)
    a = rng.standard_normal((8, 8)).astype(np.float32)
    (e,), (got,) = program(xla, lambda a: (lambda p, l, u: p @ l @ u)(*jsl.lu(a)), [a])
    assert e.kind == "bounded"
    lo, hi = ends(e)
    assert ((lo <= a) & (a <= hi)).all() and ok(e, got)
    assert not ok(e, (got * 1.01).astype(np.float32))


def test_a_near_tie_in_the_pivots_states_nothing(xla):
    a = np.array([[1, 2, 0, 1], [-1, 1, 3, 0], [0.5, 1, 1, 2], [0, 1, 0, 1]], np.float32)   # |1| = |−1|
    (_, el, eu), (_, l, u) = program(xla, jsl.lu, [a])
    assert "any value" in el.why and "any value" in eu.why and ok(el, l) and ok(eu, u)
