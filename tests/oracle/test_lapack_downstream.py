"""What JAX computes from LAPACK's factors, judged: `jnp.linalg.det` and
`slogdet` (arithmetic on U's diagonal, oracle/lu_diagonal.py, carried by
the ordinary ranges downstream), `jnp.linalg.lstsq` (x from the SVD, judged
by the normal equations' residual) and the complex Cholesky solve
(`jax.scipy.linalg.cho_solve`: the upper factor built as conj(Lᵀ) by parts,
oracle/chains.py).

Independent truth: determinants and least-squares solutions from exact
rational arithmetic (fractions: every float is a rational), mpmath at 300
digits, float32 eliminations in other summation orders and LAPACK's sgetrf
(scipy) — the oracle's ranges must hold them; XLA's outputs must agree;
deliberately wrong answers — scaled by 1.01, negated, zero, logabsdet +
0.01, the sign flipped, the conjugate — must fail; where the matrix is too
ill-conditioned for the range to tell them apart, the verdict must say
inconclusive (suites/resolution.py), never decide."""
from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest

import jax
import jax.numpy as jnp  # noqa: E402
import scipy.linalg as sla  # noqa: E402

from shlo_conform.suites.resolution import resolution  # noqa: E402
from tests.oracle.jax_programs import ok, program, rand  # noqa: E402



def exact_det(m: np.ndarray) -> Fraction:
    """det by Gaussian elimination on exact rationals (no rounding at all)."""
    w = [[Fraction(float(x)) for x in row] for row in m]
    n, det = len(w), Fraction(1)
    for j in range(n):
        p = next((i for i in range(j, n) if w[i][j] != 0), None)
        if p is None:
            return Fraction(0)
        if p != j:
            w[j], w[p] = w[p], w[j]
            det = -det
        det *= w[j][j]
        for i in range(j + 1, n):
            f = w[i][j] / w[j][j]
            w[i] = [x - f * y for x, y in zip(w[i], w[j])]
    return det


def _ends(e):
    from shlo_conform.spec.types import from_bits
    et = e.type.element_type
    return (np.asarray(from_bits(e.lo, et)).astype(np.float64).reshape(-1),
            np.asarray(from_bits(e.hi, et)).astype(np.float64).reshape(-1))


def scaled(x, s):
    return (np.asarray(x).astype(np.complex128 if np.iscomplexobj(x) else np.float64) * s).astype(x.dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_det_and_slogdet_are_judged(xla, dtype):
    rng = np.random.default_rng(11)
    a = rng.standard_normal((3, 5, 5)).astype(dtype)
    truth = [exact_det(a[i]) for i in range(3)]
    (e,), (got,) = program(xla, jnp.linalg.det, [a])
    assert e.kind == "bounded" and "any value" not in e.why
    lo, hi = _ends(e)
    assert all(lo[i] <= float(t) <= hi[i] for i, t in enumerate(truth))          # the exact determinant inside
    assert resolution(e).conclusive and np.max((hi - lo) / np.abs(lo)) < 1e-3   # narrow enough to decide
    assert ok(e, got)
    for wrong in (scaled(got, 1.01), scaled(got, -1), np.zeros_like(got)):
        assert not ok(e, wrong)
    (e_sign, e_log), (sign, logabs) = program(xla, jnp.linalg.slogdet, [a])
    assert e_sign.kind == "exact" and e_log.kind == "bounded"
    assert np.array_equal(e_sign.array(), np.array([math.copysign(1, t) for t in truth], dtype))
    lo, hi = _ends(e_log)
    logs = [math.log(abs(t.numerator)) - math.log(t.denominator) for t in truth]
    assert all(lo[i] <= x <= hi[i] for i, x in enumerate(logs))
    assert ok(e_sign, sign) and ok(e_log, logabs)
    assert not ok(e_sign, -sign) and not ok(e_log, (logabs + 0.01).astype(dtype))
    assert not ok(e_log, np.zeros_like(logabs))


def test_a_larger_f64_det_stays_tight(xla):
    """24×24 in f64: the balls of the elimination wrap (radii ~10⁻⁸), the
    leading minors' perturbation bound does not (oracle/lu_diagonal.py
    `_minor_balls`): the range holds mpmath's determinant (300 digits) and
    rules out a relative error of 10⁻⁶."""
    import mpmath
    rng = np.random.default_rng(18)
    a = rng.standard_normal((24, 24))
    with mpmath.workdps(300):
        truth = float(mpmath.det(mpmath.matrix(a.tolist())))
    (e,), (got,) = program(xla, jnp.linalg.det, [a])
    lo, hi = _ends(e)
    assert lo[0] <= truth <= hi[0] and ok(e, got)
    assert (hi[0] - lo[0]) / abs(truth) < 1e-7
    assert not ok(e, scaled(got, 1 + 1e-6)) and not ok(e, scaled(got, 1 - 1e-6))


def test_an_ill_conditioned_det_is_inconclusive_not_agreed(xla):
    """A 5×5 f32 matrix whose last row is nearly a combination of the others
    (last pivot ~10⁻⁵): the pivots are decided, but the ball of the last
    û_kk is a few percent wide — the range holds the exact determinant and
    XLA's, and a 1 % scaling too, so the verdict's width says inconclusive
    (wider than suites/resolution.py's RESOLVED) instead of "agrees"."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 5))
    a[4] = a[:4].sum(0) * 0.25 + 2e-5 * rng.standard_normal(5)
    a = a.astype(np.float32)
    (e,), (got,) = program(xla, jnp.linalg.det, [a])
    assert e.kind == "bounded"
    lo, hi = _ends(e)
    assert lo[0] <= float(exact_det(a)) <= hi[0]
    assert ok(e, got) and ok(e, scaled(got, 1.01))   # inside: the width cannot tell them apart ...
    r = resolution(e)
    assert not r.conclusive and r.unresolved == 1, r.describe()   # ... and says so


def test_a_tie_in_the_pivots_states_nothing(xla):
    a = np.array([[1, 2, 0, 1], [-1, 1, 3, 0], [0.5, 1, 1, 2], [0, 1, 0, 1]], np.float32)   # |1| = |−1|
    (e,), (got,) = program(xla, jnp.linalg.det, [a])
    assert "any value" in e.why and ok(e, got) and ok(e, np.zeros_like(got))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_cho_solve_is_judged_end_to_end(xla, dtype):
    """cho_factor's upper factor is conj(Lᵀ) built by real, imag, negate,
    complex: read back as the factor of the other triangle, so the two
    solves after it are judged by M·x = c (it was any value)."""
    rng = np.random.default_rng(13)
    g = rng.standard_normal((2, 5, 5)) + 1j * rng.standard_normal((2, 5, 5))
    h = g @ np.conj(np.swapaxes(g, -1, -2)) + 5 * np.eye(5)
    a = ((h + np.conj(np.swapaxes(h, -1, -2))) / 2).astype(dtype)   # exactly Hermitian: a real diagonal
    a[..., np.arange(5), np.arange(5)] = a[..., np.arange(5), np.arange(5)].real
    b = (rng.standard_normal((2, 5, 3)) + 1j * rng.standard_normal((2, 5, 3))).astype(dtype)
    f = lambda a, b: jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(a), b)  # noqa: E731
    (e,), (got,) = program(xla, f, [a, b])
    assert e.kind == "residual" and e.residual["property"] == "linear_solve", e.why
    assert ok(e, got)
    w = a.astype(np.complex128)
    assert ok(e, np.stack([sla.cho_solve(sla.cho_factor(w[i]), b[i].astype(np.complex128)) for i in range(2)]))
    assert not ok(e, np.zeros_like(got)) and not ok(e, scaled(got, 1.01))
    assert not ok(e, np.conj(got))                                       # the conjugate system's answer
    (u,), (gu,) = program(xla, lambda a: jax.scipy.linalg.cholesky(a, lower=False), [a])
    assert u.kind == "residual" and u.residual["attributes"] == {"lower": False}
    assert ok(u, gu) and not ok(u, np.conj(gu)) and not ok(u, np.swapaxes(gu, -1, -2))


def test_a_conjugated_factor_is_judged_as_the_conjugate(xla):
    """conj(L) (by parts, not through a transpose) is no Cholesky factor of
    A, but its conjugate is: judged by cholesky's property on the conjugate
    of the output (`conj`, spec/lapack.py `measure`) — XLA's passes, L
    itself (not conjugated back) and zeros fail."""
    rng = np.random.default_rng(14)
    g = rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4))
    a = (g @ g.conj().T + 4 * np.eye(4)).astype(np.complex64)
    a[np.arange(4), np.arange(4)] = a[np.arange(4), np.arange(4)].real
    (e,), (got,) = program(xla, lambda a: jnp.conj(jnp.linalg.cholesky(a)), [a])
    assert e.kind == "residual" and e.residual.get("conj") and e.residual["op"] == "cholesky"
    assert ok(e, got) and not ok(e, np.conj(got)) and not ok(e, np.zeros_like(got))


def exact_lstsq(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """min ‖A·x − b‖ from the normal equations AᴴA·x = Aᴴb on exact (Gaussian) rationals, A of full column rank."""
    def q(z):
        z = complex(z)
        return (Fraction(z.real), Fraction(z.imag))

    def mul(x, y):
        return (x[0] * y[0] - x[1] * y[1], x[0] * y[1] + x[1] * y[0])

    def div(x, y):
        d = y[0] * y[0] + y[1] * y[1]
        return ((x[0] * y[0] + x[1] * y[1]) / d, (x[1] * y[0] - x[0] * y[1]) / d)

    def sub(x, y):
        return (x[0] - y[0], x[1] - y[1])

    A = [[q(x) for x in row] for row in a]
    B = [[q(x) for x in row] for row in b]
    m, n, k = len(A), len(A[0]), len(B[0])
    conj = [[(x[0], -x[1]) for x in row] for row in A]

    def dot(col_i, other):   # Σ_r conj(A[r][i])·other[r]
        acc = (Fraction(0), Fraction(0))
        for r in range(m):
            t = mul(conj[r][col_i], other[r])
            acc = (acc[0] + t[0], acc[1] + t[1])
        return acc
    N = [[dot(i, [A[r][j] for r in range(m)]) for j in range(n)] + [dot(i, [B[r][c] for r in range(m)])
                                                                    for c in range(k)] for i in range(n)]
    for j in range(n):   # Gauss–Jordan; AᴴA is positive definite: no pivoting needed on exact numbers
        p = N[j][j]
        N[j] = [div(x, p) for x in N[j]]
        for i in range(n):
            if i != j:
                f = N[i][j]
                N[i] = [sub(x, mul(f, y)) for x, y in zip(N[i], N[j])]
    out = np.array([[complex(float(N[i][n + c][0]), float(N[i][n + c][1])) for c in range(k)] for i in range(n)])
    return out if np.iscomplexobj(a) else out.real


LSTSQ = [(np.float32, (6, 4), 2), (np.float32, (5, 5), 1), (np.float64, (7, 3), 2), (np.float64, (8, 8), 3),
         (np.complex64, (6, 4), 2), (np.complex128, (5, 3), 1)]


@pytest.mark.parametrize("dtype, shape, k", LSTSQ)
def test_lstsq_is_judged_by_the_normal_equations(xla, dtype, shape, k):
    """jnp.linalg.lstsq (xGESDD, then V·Σ⁻¹·Uᵀ·b): x is judged by
    ‖Aᵀ(Ax − b)‖ (spec/lapack.py "lstsq").  The exact least-squares solution
    (rationals), XLA's and numpy's pass; zero, negated, scaled by 1.01 and
    the square subsystem's solution fail."""
    rng = np.random.default_rng(15)
    a, b = rand(shape, dtype, rng), rand((shape[0], k), dtype, rng)
    (e,), (got,) = program(xla, lambda a, b: jnp.linalg.lstsq(a, b)[0], [a, b])
    assert e.kind == "residual" and e.residual["property"] == "lstsq", e.why
    assert ok(e, got) and ok(e, exact_lstsq(a, b))
    w = np.complex128 if np.iscomplexobj(a) else np.float64
    assert ok(e, np.linalg.lstsq(a.astype(w), b.astype(w), rcond=None)[0])
    for wrong in (np.zeros_like(got), scaled(got, -1), scaled(got, 1.01)):
        assert not ok(e, wrong)
    if np.iscomplexobj(a):
        assert not ok(e, np.conj(got))
    n = shape[1]
    if shape[0] > n:
        assert not ok(e, np.linalg.solve(a[:n].astype(w), b[:n].astype(w)))


PINV = [(np.float32, (6, 4)), (np.float64, (7, 3)), (np.complex64, (6, 4)), (np.float32, (2, 5, 3))]


@pytest.mark.parametrize("dtype, shape", PINV)
def test_pinv_is_judged_as_the_least_squares_solutions_of_the_identity(xla, dtype, shape):
    """jnp.linalg.pinv (xGESDD, then V·(Uᴴ ⊘ s)): pinv(A)'s columns are the
    least-squares solutions for the columns of I, judged by lstsq's
    criterion with b = I (oracle/chains.py `_utb`).  The exact pseudoinverse
    (rationals, column by column of the identity) and XLA's and numpy's
    pass; zero, negated, ×1.01, the conjugate and the transpose of the
    square subsystem's inverse fail."""
    rng = np.random.default_rng(31)
    a = rand(shape, dtype, rng)
    (e,), (got,) = program(xla, jnp.linalg.pinv, [a])
    assert e.kind == "residual" and e.residual["property"] == "lstsq", e.why
    assert ok(e, got)
    w = np.complex128 if np.iscomplexobj(a) else np.float64
    mats = a.reshape((-1,) + shape[-2:])
    exact = np.stack([exact_lstsq(m, np.eye(shape[-2])) for m in mats]).reshape(got.shape)
    assert ok(e, exact) and ok(e, np.linalg.pinv(a.astype(w)))
    for wrong in (np.zeros_like(got), scaled(got, -1), scaled(got, 1.01)):
        assert not ok(e, wrong)
    if np.iscomplexobj(a):
        assert not ok(e, np.conj(got))
    n = shape[-1]
    square = np.linalg.inv(a[..., :n, :].astype(w))
    assert not ok(e, np.concatenate([square, np.zeros(square.shape[:-1] + (shape[-2] - n,))], axis=-1))


def test_pinv_with_a_dropped_singular_value_is_not_claimed(xla):
    """A repeated column: pinv's cutoff drops σ ≈ 0 (s → inf, 1/s = 0),
    D is not within reach of Σ⁻¹ — any value, never a verdict."""
    rng = np.random.default_rng(32)
    a = rng.standard_normal((6, 4))
    a[:, 3] = a[:, 2]
    (e,), (got,) = program(xla, jnp.linalg.pinv, [a.astype(np.float32)])
    assert e.kind != "residual" and ok(e, got)


def test_pinv_and_qr_least_squares_of_a_computed_matrix_are_not_claimed(xla):
    """A matrix computed upstream (tanh(x)): its SVD and QR are judged against
    the oracle's primary matrix only, with no distance carried — so nothing
    is claimed downstream (any value), never a statement about another A."""
    rng = np.random.default_rng(36)
    x, b = rng.standard_normal((6, 4)).astype(np.float32), rng.standard_normal((6, 1)).astype(np.float32)
    for f, args in ((lambda x: jnp.linalg.pinv(jnp.tanh(x)), [x]), (lambda x, b: qr_lstsq(jnp.tanh(x), b), [x, b])):
        (e,), (got,) = program(xla, f, args)
        assert e.kind != "residual" and "any value" in e.why and ok(e, got), e.why


def qr_lstsq(a, b):
    q, r = jnp.linalg.qr(a)
    return jax.scipy.linalg.solve_triangular(r, jnp.conj(jnp.swapaxes(q, -1, -2)) @ b, lower=False)


QR_LSTSQ = [(np.float32, (6, 4), 2), (np.float32, (5, 5), 1), (np.float64, (7, 3), 2), (np.complex64, (6, 4), 1),
            (np.float32, (3, 6, 4), 2)]


@pytest.mark.parametrize("dtype, shape, k", QR_LSTSQ)
def test_least_squares_through_qr_is_judged_by_the_normal_equations(xla, dtype, shape, k):
    """`q, r = jnp.linalg.qr(a)`, `solve_triangular(r, qᴴ @ b)`: x is judged
    by lstsq's criterion (oracle/chains.py `_qr_lstsq`).  The exact
    least-squares solution (rationals), XLA's and numpy's pass; zero,
    negated, ×1.01 and the square subsystem's solution fail."""
    rng = np.random.default_rng(33)
    a, b = rand(shape, dtype, rng), rand(shape[:-1] + (k,), dtype, rng)
    (e,), (got,) = program(xla, qr_lstsq, [a, b])
    assert e.kind == "residual" and e.residual["property"] == "lstsq", e.why
    assert "xGEQRF" in e.why and ok(e, got)
    w = np.complex128 if np.iscomplexobj(a) else np.float64
    pairs = zip(a.reshape((-1,) + shape[-2:]), b.reshape((-1, shape[-2], k)))
    assert ok(e, np.stack([exact_lstsq(x, y) for x, y in pairs]).reshape(got.shape))
    assert ok(e, np.stack([np.linalg.lstsq(x.astype(w), y.astype(w), rcond=None)[0]
                           for x, y in zip(a.reshape((-1,) + shape[-2:]), b.reshape((-1, shape[-2], k)))])
              .reshape(got.shape))
    for wrong in (np.zeros_like(got), scaled(got, -1)):
        assert not ok(e, wrong)
    c = resolution(e).scaling_caught   # the finest scaling the criterion refuses, as `run` prints it
    assert c is not None and c <= 1 / 16 and not ok(e, scaled(got, 1 + 2 * c))
    if c <= 0.01:
        assert not ok(e, scaled(got, 1.01))
    n = shape[-1]
    if shape[-2] > n:
        assert not ok(e, np.linalg.solve(a[..., :n, :].astype(w), b[..., :n, :].astype(w)))


def test_qr_least_squares_threshold_holds_every_factorisation_the_criteria_pass():
    """The threshold (spec/lapack.py `qr_lstsq_threshold`) against brute
    force: Q̃ = Q·W·(I + H) (W orthogonal, H symmetric) with ‖Q̃ᴴQ̃ − I‖₁ near
    qr.q's bound, R̃ = Q̃⁺(A − E) so that A − Q̃R̃ is E's projection, scaled
    to the contract's bound, y = Q̃ᴴb + f with |f| at the dot's bound, x =
    R̃⁻¹(y + r) with ‖r‖₁ at the solve's bound — each drawn at random and
    put at its edge, in float64 with the f32 format's u.  Every x meets the
    threshold, and the worst comes within a factor the assertion prints (the
    bound must not be vacuous: above 1 %)."""
    from shlo_conform.spec import lapack
    from shlo_conform.spec.ops.triangular_solve import threshold as t_solve
    from shlo_conform.spec.types import parse_type
    rng = np.random.default_rng(34)
    worst = 0.0
    n1 = lambda x: np.abs(x).sum(axis=0).max()   # noqa: E731
    for m, n in ((6, 4), (16, 8), (9, 9)):
        ta = parse_type(f"tensor<{m}x{n}xf32>")
        u, big = 2.0 ** -24, max(m, n)
        t_q = t_r = lapack.two_sided(big, ta.element_type)
        for _ in range(40):
            a = rng.standard_normal((m, n)).astype(np.float32)
            A, b = a.astype(np.float64), rng.standard_normal((m, 1))
            thr = lapack.qr_lstsq_threshold(a, ta, t_q)
            q, _ = np.linalg.qr(A)
            h = rng.standard_normal((n, n))
            h = (h + h.T) * t_q * m * u / (2.02 * n1(h + h.T))   # (I + H)² − I = 2H + H²: ‖·‖₁ just under δ
            w, _ = np.linalg.qr(rng.standard_normal((n, n)))
            Q = q @ w @ (np.eye(n) + h)
            assert n1(Q.T @ Q - np.eye(n)) <= t_q * m * u
            pinv = np.linalg.pinv(Q)
            E = Q @ (pinv @ rng.standard_normal((m, n)))   # A − Q̃·Q̃⁺(A − E) = E for E in Q̃'s range
            E *= 0.99 * t_r * big * n1(A) * u / n1(E)
            R = pinv @ (A - E)
            assert n1(A - Q @ R) <= t_r * big * n1(A) * u
            f = rng.choice([-1, 1], size=(n, 1)) * (m * u / (1 - m * u)) * (np.abs(Q.T) @ np.abs(b))
            y = Q.T @ b + f
            r = rng.standard_normal((n, 1))
            x = np.linalg.solve(R, y)
            for _ in range(3):   # ‖r‖₁ at the bound for the x it gives
                r *= 0.99 * t_solve(n, ta.element_type) * n * n1(R) * np.abs(x).sum() * u / np.abs(r).sum()
                x = np.linalg.solve(R, y + r)
            if np.abs(R @ x - y).sum() > t_solve(n, ta.element_type) * n * n1(R) * np.abs(x).sum() * u:
                continue   # the fixed point not reached: not a sample the solve's criterion passes
            N = max(n1(A), np.abs(A).sum(axis=1).max())
            ratio = np.abs(A.T @ (A @ x - b)).sum() / (big * N * (np.abs(b).sum() + N * np.abs(x).sum()) * u)
            worst = max(worst, ratio / thr)
            assert ratio <= thr, (m, n, ratio, thr)
    print(f"worst sample: {worst:.3g} of the threshold")
    assert worst > 0.01, worst


def test_least_squares_through_a_complete_q_is_not_claimed(xla):
    """mode='complete': Q is m×m, Qᴴ·b has m rows — not the reduced system
    R·x = Q₁ᴴ·b; no claim (any value)."""
    rng = np.random.default_rng(35)
    a, b = rng.standard_normal((6, 4)).astype(np.float32), rng.standard_normal((6, 1)).astype(np.float32)

    def f(a, b):
        q, r = jnp.linalg.qr(a, mode="complete")
        return jax.scipy.linalg.solve_triangular(r[:4], (q.T @ b)[:4], lower=False)
    (e,), (got,) = program(xla, f, [a, b])
    assert e.kind != "residual" and ok(e, got)


def test_lstsq_of_a_rank_deficient_matrix_is_not_claimed(xla):
    """A repeated column: a singular value is ~0, JAX's rcond drops it or
    not depending on rounding — D is not within reach of Σ⁻¹: any value."""
    rng = np.random.default_rng(16)
    a = rng.standard_normal((6, 4))
    a[:, 3] = a[:, 2]
    a, b = a.astype(np.float64), rng.standard_normal((6, 2))
    (e,), (got,) = program(xla, lambda a, b: jnp.linalg.lstsq(a, b)[0], [a, b])
    assert e.kind != "residual" and ok(e, got)


def test_an_underdetermined_lstsq_is_not_claimed(xla):
    """m < n: Aᵀ(Ax − b) = 0 for every solution of A·x = b, while lstsq's is
    the one of least norm — the criterion would pass a wrong one, so no
    claim is made."""
    rng = np.random.default_rng(20)
    a, b = rng.standard_normal((3, 5)), rng.standard_normal((3, 1))
    (e,), (got,) = program(xla, lambda a, b: jnp.linalg.lstsq(a, b)[0], [a, b])
    assert e.kind != "residual" and "any value" in e.why and ok(e, got)


def _f32_doolittle(a: np.ndarray, reverse: bool) -> np.ndarray:
    """U's diagonal of GEPP in float32, each element one inner product summed forward or backward."""
    w = a.astype(np.float32).copy()
    n = w.shape[0]
    L, U = np.zeros((n, n), np.float32), np.zeros((n, n), np.float32)
    for j in range(n):
        def s(i, c):
            terms = [np.float32(L[i, t] * U[t, c]) for t in range(j)]
            acc = w[i, c]
            for x in (reversed(terms) if reverse else terms):
                acc = np.float32(acc - x)
            return acc
        cand = [s(i, j) for i in range(j, n)]
        r = j + int(np.argmax(np.abs(cand)))
        w[[j, r]], L[[j, r]] = w[[r, j]], L[[r, j]]
        U[j, j] = s(j, j)
        for c in range(j + 1, n):
            U[j, c] = s(j, c)
        for i in range(j + 1, n):
            L[i, j] = np.float32(s(i, j) / U[j, j])
    return np.diagonal(U)


def test_u_diagonal_encloses_every_evaluation_order_tried():
    """Brute force against the enclosure: LAPACK's sgetrf (scipy) and two
    float32 eliminations summing in opposite orders all land inside the
    range oracle/lu_diagonal.py states for each ûₖₖ — and the ranges are
    not so wide that they say nothing."""
    from shlo_conform.oracle.lu_diagonal import lu_diagonal
    from shlo_conform.spec.lapack import lu_pivoting
    from shlo_conform.spec.types import E_F32
    rng = np.random.default_rng(19)
    for n in (3, 6, 10):
        a = rng.standard_normal((n, n)).astype(np.float32)
        _, piv, _, why = lu_pivoting(a.astype(np.float64), E_F32)
        assert why is None
        lo, hi = lu_diagonal(a, E_F32, piv)
        lapack_diag = np.diagonal(sla.lu_factor(a)[0]).astype(np.float64)
        for d in (lapack_diag, _f32_doolittle(a, False), _f32_doolittle(a, True)):
            d = np.asarray(d, np.float64)
            assert ((lo <= d) & (d <= hi)).all(), (n, lo, d, hi)
        assert np.max((hi - lo) / np.abs(lo)) < 1e-3


# --------------------------------------------------------------------------
# A linear system's solution computed on: the range its criterion lets pass (spec/lapack.py `solve_range`)
# --------------------------------------------------------------------------

def _solution(xla, a, b):
    """(the linear_solve expectation of jnp.linalg.solve(a, b), XLA's x)."""
    (e,), (got,) = program(xla, lambda a, b: jnp.linalg.solve(a, b), [a, b])
    assert e.kind == "residual" and e.residual["property"] == "linear_solve", e.why
    return e, got


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_solution_the_criterion_passes_lies_in_the_range(xla, dtype):
    """x = x* + M⁻¹·r for residuals r of random directions and of the
    worst one for each element (r on the column k of the largest |M⁻¹ᵢₖ|),
    scaled until the criterion itself (spec/lapack.py `measure`) is at the
    edge of passing: every x it passes lies in solve_range's range; the
    worst ones reach a tenth of its half-width or more (the range is not
    loose by orders of magnitude)."""
    from shlo_conform.spec import lapack
    rng = np.random.default_rng(31)
    n = 12
    a = (rng.standard_normal((n, n)) + 4 * np.eye(n)).astype(dtype)
    b = rng.standard_normal((n, 3)).astype(dtype)
    e, _ = _solution(xla, a, b)
    lo, hi = lapack.solve_range(e.residual)
    m = np.asarray(a, np.float64)   # the record's M is P·A; the solution is A's (and M's, with P·b)
    minv = np.linalg.inv(m)
    x_star = np.linalg.solve(m, np.asarray(b, np.float64))
    assert ((lo <= x_star) & (x_star <= hi)).all()
    passed, reached = _to_the_edge(e, lo, hi, x_star, minv, np.abs(x_star).sum(axis=0), dtype, rng, 2.0 ** -60)
    assert passed > 100 and reached > 0.1, (passed, reached)


def _to_the_edge(e, lo, hi, x_star, inv, scale, dtype, rng, first: float) -> tuple[int, float]:
    """x = x* + inv·r for r of 20 random directions and of the worst one per
    element (r on the column k of the largest |invᵢₖ|), ‖r‖₁ = `scale`·s
    per column, s doubling by √2 from `first` until the criterion of `e`
    (spec/lapack.py `measure`) stops passing: every x it passes must lie in
    [lo, hi].  Returns (how many passed, the farthest one's share of the
    half-width)."""
    from shlo_conform.spec import lapack
    n, k = x_star.shape
    half = (hi - lo) / 2
    reached, passed = 0.0, 0
    directions = [rng.standard_normal((n, k)) for _ in range(20)]
    for i in range(n):
        r = np.zeros((n, k))
        j = int(np.argmax(np.abs(inv[i])))
        r[j, :] = np.sign(inv[i, j])
        directions.append(r)
    for r in directions:
        r = r / np.abs(r).sum(axis=0)
        for s in first * 2.0 ** np.arange(0, 120, 0.5):
            x = (x_star + inv @ (r * s * scale)).astype(dtype)
            if not lapack.measure(e.residual, e.type, x).ok:
                break
            passed += 1
            xf = x.astype(np.float64)
            assert ((lo <= xf) & (xf <= hi)).all(), (np.max((lo - xf) / half), np.max((xf - hi) / half))
            reached = max(reached, float(np.max(np.abs(xf - x_star) / half)))
    return passed, reached


def test_every_least_squares_solution_the_criterion_passes_lies_in_the_range(xla):
    """jnp.linalg.lstsq's x computed on (×2): a range, lstsq_range's.  x =
    x* + (AᵀA)⁻¹·g for g of random directions and of the worst one per
    element, scaled until the criterion (spec/lapack.py `lstsq`) is at the
    edge of passing: every x it passes lies in the range, the worst reaching
    a tenth of its half-width or more; the exact least-squares solution
    (rationals) and XLA's lie inside; negated and zero outputs fail."""
    from shlo_conform.spec import lapack
    rng = np.random.default_rng(12)
    a = rng.standard_normal((16, 4)).astype(np.float32)
    b = rng.standard_normal((16, 2)).astype(np.float32)
    (e,), (got,) = program(xla, lambda a, b: jnp.linalg.lstsq(a, b)[0] * 2, [a, b])
    assert e.kind == "bounded" and "any value" not in e.why, e.why
    assert ok(e, got) and not ok(e, -got) and not ok(e, np.zeros_like(got))
    lo, hi = (x.reshape(4, 2) / 2 for x in _ends(e))
    x_star = np.array(exact_lstsq(a, b), dtype=np.float64).reshape(4, 2)
    assert ((lo <= x_star) & (x_star <= hi)).all()
    (e_x,), _ = program(xla, lambda a, b: jnp.linalg.lstsq(a, b)[0], [a, b])
    rlo, rhi = lapack.lstsq_range(e_x.residual)
    m = np.asarray(a, np.float64)
    passed, reached = _to_the_edge(e_x, rlo, rhi, x_star, np.linalg.inv(m.T @ m), np.abs(m.T @ b).sum(axis=0),
                                   np.float32, rng, 2.0 ** -40)
    assert passed > 100 and reached > 0.1, (passed, reached)


def test_a_solution_computed_on_is_judged_by_its_range(xla):
    """tanh(solve(a, b))·2 + 1 and the column sums of inv(a), κ₁ ≈ 10: the
    outputs are bounded ranges, not "any value"; XLA's outputs and the
    exact solution's (rationals) lie inside, a 1.01-scaled output does
    not; a nearly singular matrix gets no range (any value, unchecked)."""
    rng = np.random.default_rng(7)
    n = 16
    a = (rng.standard_normal((n, n)) + 8 * np.eye(n)).astype(np.float32)
    b = rng.standard_normal((n, 4)).astype(np.float32)
    (e,), (got,) = program(xla, lambda a, b: jnp.tanh(jnp.linalg.solve(a, b)) * 2 + 1, [a, b])
    assert e.kind == "bounded", e.why
    lo, hi = _ends(e)
    assert ok(e, got) and not ok(e, got * 1.01)
    w = [[Fraction(float(v)) for v in row] for row in a]
    exact = _exact_solve(w, [[Fraction(float(v)) for v in row] for row in b])
    want = np.tanh(np.array(exact, dtype=np.float64)) * 2 + 1
    assert ((lo <= want.reshape(-1) + 1e-7) & (want.reshape(-1) - 1e-7 <= hi)).all()
    assert np.median((hi - lo) / 2 / np.abs(want.reshape(-1))) < 1e-3
    (e,), (got,) = program(xla, lambda a: jnp.sum(jnp.linalg.inv(a), axis=0), [a])
    assert e.kind == "bounded" and ok(e, got) and not ok(e, got * 1.01)
    near = a.copy()
    near[:, 3] = near[:, 2] * (1 + 2.0 ** -20)
    (e,), (got,) = program(xla, lambda a, b: jnp.tanh(jnp.linalg.solve(a, b)), [near, b])
    assert e.kind != "bounded" and "any value" in e.why, e.why


def test_a_range_is_computed_once_per_record(xla, monkeypatch):
    """jnp.linalg.solve's result passes through reshapes and a transpose
    before tanh reads it: every op that reads it asks for its range, and
    the arb inverse behind it is computed once (oracle/chains.py
    `_remembered`: it was five times); the range holds XLA's output and
    not the ×1.01 one."""
    from shlo_conform.oracle import chains
    from shlo_conform.spec import lapack
    calls = []
    real = lapack.solve_range
    monkeypatch.setattr(lapack, "solve_range", lambda rec: calls.append(1) or real(rec))
    monkeypatch.setattr(chains, "_REMEMBERED", {}, raising=False)
    rng = np.random.default_rng(11)
    n = 48
    a = (rng.standard_normal((n, n)) / np.sqrt(n) + 3 * np.eye(n)).astype(np.float32)
    b = rng.standard_normal((n, 2)).astype(np.float32)
    (e,), (got,) = program(xla, lambda a, b: jnp.tanh(jnp.linalg.solve(a, b)), [a, b])
    assert e.kind == "bounded", e.why
    assert ok(e, got) and not ok(e, got * 1.01)
    assert len(calls) == 1


def _exact_solve(a: list, b: list) -> list:
    """x = a⁻¹·b on exact rationals (Gauss–Jordan with a nonzero pivot)."""
    n = len(a)
    w = [row[:] + brow[:] for row, brow in zip(a, b)]
    for j in range(n):
        p = next(i for i in range(j, n) if w[i][j] != 0)
        w[j], w[p] = w[p], w[j]
        w[j] = [v / w[j][j] for v in w[j]]
        for i in range(n):
            if i != j and w[i][j] != 0:
                f = w[i][j]
                w[i] = [v - f * u for v, u in zip(w[i], w[j])]
    return [[float(v) for v in row[n:]] for row in w]


# --------------------------------------------------------------------------
# A Cholesky factor computed on: the range its criterion lets pass (spec/lapack.py `cholesky_range`)
# --------------------------------------------------------------------------

def _spd(n, dtype, rng):
    x = rng.standard_normal((n, n))
    return (x @ x.T + n * np.eye(n)).astype(dtype)


def _mp_cholesky(a: np.ndarray) -> np.ndarray:
    """The exact factor of a's values (mpmath at 60 digits, rounded to float64)."""
    import mpmath
    with mpmath.workdps(60):
        m = mpmath.cholesky(mpmath.matrix(np.asarray(a, np.float64).tolist()))
        return np.array([[float(m[i, j]) for j in range(a.shape[1])] for i in range(a.shape[0])])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_factor_the_criterion_passes_lies_in_the_range(xla, dtype):
    """L̃ = L·(I + s·F) for random lower-triangular F and, for each element
    (i, j), the F that moves it most (column j of F along row i of L),
    scaled until cholesky's criterion itself (spec/lapack.py `measure`) is
    at the edge of passing: every L̃ it passes lies in cholesky_range's
    range (NaN on the triangle not read), the exact factor too; the worst
    reach a tenth of its half-width or more (not loose by orders of
    magnitude).  The record is JAX's: `jnp.linalg.cholesky` zeroes the
    upper triangle, so the record is `fixed`."""
    from shlo_conform.spec import lapack
    rng = np.random.default_rng(5)
    n = 10
    a = _spd(n, dtype, rng)
    (e,), _ = program(xla, jnp.linalg.cholesky, [a])
    assert e.kind == "residual" and e.residual.get("fixed"), e.why
    lo, hi = lapack.cholesky_range({k: v for k, v in e.residual.items() if k != "fixed"})
    low = np.tril(np.ones((n, n), dtype=bool))
    assert np.isnan(lo[~low]).all() and np.isnan(hi[~low]).all()
    L = _mp_cholesky(a)
    assert ((lo[low] <= L[low]) & (L[low] <= hi[low])).all()
    half = np.where(low, (hi - lo) / 2, 1.0)
    directions = [np.tril(rng.standard_normal((n, n))) for _ in range(10)]
    directions = [f / np.linalg.norm(f) for f in directions]
    for i in range(n):
        for j in range(0, i + 1, 3):
            f = np.zeros((n, n))
            f[j:i + 1, j] = L[i, j:i + 1]
            directions.append(f / np.linalg.norm(f))
    reached, passed = 0.0, 0
    for f in directions:
        for s in 2.0 ** np.arange(-64, 0, 0.5):
            lt = (L @ (np.eye(n) + s * f)).astype(dtype)
            if not lapack.measure(e.residual, e.type, lt).ok:
                break
            passed += 1
            lf = lt.astype(np.float64)
            assert ((lo[low] <= lf[low]) & (lf[low] <= hi[low])).all()
            reached = max(reached, float(np.max(np.abs(lf - L)[low] / half[low])))
    assert passed > 100 and reached > 0.1, (passed, reached)


def test_a_factor_computed_on_is_judged_by_its_range(xla):
    """A Gaussian log-likelihood as JAX users write it (cho_solve and the
    log of the factor's diagonal): the output is a bounded range, not "any
    value"; XLA agrees, and the exact value (mpmath's factor and solve)
    lies inside; scaled by 1.01, it does not.  Without the program's zeros
    in the other triangle (a record not `fixed`) no range is stated; and the
    factor as an output is judged on those zeros too: an upper triangle
    left as LAPACK leaves it fails."""
    import jax.scipy.linalg as jsl
    import mpmath
    from shlo_conform.oracle import chains
    rng = np.random.default_rng(11)
    n = 16
    s, b = _spd(n, np.float32, rng), rng.standard_normal((n, 4)).astype(np.float32)

    def loglik(s, b):
        c = jnp.linalg.cholesky(s)
        return -0.5 * jnp.sum(b * jsl.cho_solve((c, True), b)) - jnp.sum(jnp.log(jnp.diag(c)))
    (e,), (got,) = program(xla, loglik, [s, b])
    assert e.kind == "bounded", e.why
    lo, hi = _ends(e)
    assert ok(e, got) and not ok(e, got * 1.01) and not ok(e, -got)
    with mpmath.workdps(60):
        m = mpmath.matrix(np.asarray(s, np.float64).tolist())
        bb = mpmath.matrix(np.asarray(b, np.float64).tolist())
        x = m ** -1 * bb
        L = mpmath.cholesky(m)
        want = float(-sum(bb[i, j] * x[i, j] for i in range(n) for j in range(4)) / 2
                     - sum(mpmath.log(L[i, i]) for i in range(n)))
    assert lo[0] <= want <= hi[0], (lo, want, hi)
    assert (hi[0] - lo[0]) / 2 / abs(want) < 1e-2
    (f,), (lf,) = program(xla, jnp.linalg.cholesky, [s])
    assert f.residual.get("fixed") and ok(f, lf)
    assert chains.as_range(f) is not None
    bare = dataclasses.replace(f, residual={k: v for k, v in f.residual.items() if k != "fixed"})
    assert chains.as_range(bare) is None
    left = lf + np.triu(s, 1)   # the upper triangle as LAPACK leaves it
    assert ok(bare, left) and not ok(f, left)


@pytest.mark.parametrize("rows", [False, True])
def test_every_first_solve_the_criteria_pass_lies_in_the_range(rows):
    """y = L̃⁻¹·(c + r) for factors L̃ = L·(I + s·F) that cholesky's criterion
    passes (the record's own `measure`) and residuals r that
    triangular_solve's ratio ‖L̃·y − c‖₁/(n·‖L̃‖₁·‖y‖₁·ε) passes (below its
    threshold), each scaled to the edge: every such y (for `rows`, yᵀ: the
    right-side solve y·L̃ᵀ = cᵀ) lies in cholesky_solve_range's range, the
    exact y* = L⁻¹·c (mpmath) too; the worst reach a fiftieth of the
    half-width (the range is the two criteria's, not loose by orders)."""
    import mpmath
    from shlo_conform.spec import lapack
    from shlo_conform.spec.ops import triangular_solve as trsm
    from shlo_conform.spec.types import element_type as element_type_named, parse_type, tensor_to_hex
    rng = np.random.default_rng(17)
    n, k = 8, 3
    a = _spd(n, np.float32, rng)
    c = rng.standard_normal((n, k)).astype(np.float32)
    t = parse_type(f"tensor<{n}x{n}xf32>")
    operand = {"type": t.mlir, "hex": tensor_to_hex(a, t)}
    rec = {"op": "cholesky", "attributes": {"lower": True}, "operands": [operand]}
    e_type = t
    tc = parse_type(f"tensor<{k}x{n}xf32>" if rows else f"tensor<{n}x{k}xf32>")
    lo, hi = lapack.cholesky_solve_range(operand, c.T if rows else c, tc, rows)
    if rows:
        lo, hi = lo.T, hi.T
    with mpmath.workdps(60):
        m = mpmath.matrix(np.asarray(a, np.float64).tolist())
        L = mpmath.cholesky(m)
        ys = L ** -1 * mpmath.matrix(np.asarray(c, np.float64).tolist())
        y_star = np.array([[float(ys[i, j]) for j in range(k)] for i in range(n)])
        Lf = np.array([[float(L[i, j]) for j in range(n)] for i in range(n)])
    assert ((lo <= y_star) & (y_star <= hi)).all()
    half = (hi - lo) / 2
    thr, eps = trsm.threshold(n, element_type_named("f32")), 2.0 ** -24
    reached, passed = 0.0, 0
    factors = []
    for _ in range(4):
        f = np.tril(rng.standard_normal((n, n)))
        f /= np.linalg.norm(f)
        good = None
        for s in 2.0 ** np.arange(-40, 0, 0.5):
            lt = (Lf @ (np.eye(n) + s * f)).astype(np.float32)
            if not lapack.measure(rec, e_type, lt).ok:
                break
            good = lt
        factors.append(good if good is not None else Lf.astype(np.float32))
    for lt in factors:
        l64 = lt.astype(np.float64)
        for _ in range(5):
            r = rng.standard_normal((n, k))
            r /= np.abs(r).sum(axis=0)
            for s in 2.0 ** np.arange(-40, 0, 0.5):
                y = np.linalg.solve(l64, c.astype(np.float64) + r * s * np.abs(c).sum(axis=0))
                ratio = np.abs(l64 @ y - c).sum(axis=0) / (n * np.abs(l64).sum(axis=0).max() * np.abs(y).sum(axis=0) * eps)
                if not (ratio < 0.99 * thr).all():
                    break
                passed += 1
                assert ((lo <= y) & (y <= hi)).all(), (np.max((lo - y) / half), np.max((y - hi) / half))
                reached = max(reached, float(np.max(np.abs(y - y_star) / half)))
    assert passed > 50 and reached > 0.02, (passed, reached)


def test_a_computed_matrix_is_judged_with_its_range(xla):
    """Ridge regression as JAX users write it, solve(xᵀx + I, xᵀy) and its
    Cholesky form, and the log-diagonal of cholesky(xᵀx + I): the matrix
    and right-hand side are dot results, approximate; the backend factors
    and solves its own, within their ranges of the oracle's primary ones,
    so the solve's criterion and the ranges downstream add that distance
    (spec/lapack.py `solve_slack`, the records' `slack`): bounded, XLA
    agrees, the exact value (mpmath from the exact xᵀx + I) lies inside,
    1.01× does not.  Eigenvalues of a computed matrix likewise (eigh's
    record carries the slack since stop 59): their sum holds the exact
    trace."""
    import jax.scipy.linalg as jsl
    import mpmath
    rng = np.random.default_rng(23)
    x = rng.standard_normal((32, 8)).astype(np.float32)
    y = rng.standard_normal((32, 2)).astype(np.float32)
    with mpmath.workdps(60):
        X, Y = mpmath.matrix(x.astype(np.float64).tolist()), mpmath.matrix(y.astype(np.float64).tolist())
        M = X.T * X + mpmath.eye(8)
        sol = M ** -1 * (X.T * Y)
        exact_solve = np.array([[float(mpmath.tanh(sol[i, j])) for j in range(2)] for i in range(8)]).reshape(-1)
        L = mpmath.cholesky(M)
        exact_logdiag = float(sum(mpmath.log(L[i, i]) for i in range(8)))
    ridge = lambda x, y: jnp.tanh(jnp.linalg.solve(x.T @ x + jnp.eye(8), x.T @ y))  # noqa: E731
    ridge_chol = lambda x, y: jnp.tanh(jsl.cho_solve(jsl.cho_factor(x.T @ x + jnp.eye(8)), x.T @ y))  # noqa: E731
    logdiag = lambda x: jnp.sum(jnp.log(jnp.diag(jnp.linalg.cholesky(x.T @ x + jnp.eye(8)))))  # noqa: E731
    for f, args, want in ((ridge, [x, y], exact_solve), (ridge_chol, [x, y], exact_solve),
                          (logdiag, [x], np.array([exact_logdiag]))):
        (e,), (got,) = program(xla, f, args)
        assert e.kind == "bounded", e.why
        lo, hi = _ends(e)
        assert ((lo <= want) & (want <= hi)).all(), (lo, want, hi)
        assert ok(e, got) and not ok(e, got * 1.01)
    # eigenvalues of a computed matrix: the record's slack too (Weyl: |λᵢ(Â) − λᵢ(A)| ≤ ‖Â − A‖₂); their sum is
    # the exact trace
    (e,), (got,) = program(xla, lambda x: jnp.sum(jnp.linalg.eigvalsh(x.T @ x + jnp.eye(8))) * 2, [x])
    assert e.kind == "bounded", e.why
    lo, hi = _ends(e)
    with mpmath.workdps(60):
        trace = float(2 * sum(M[i, i] for i in range(8)))
    assert lo[0] <= trace <= hi[0] and ok(e, got) and not ok(e, got * 1.01)


def test_a_solution_of_a_perturbed_system_lies_in_the_slackened_range():
    """A "linear_solve" record whose M and c carry slack (dm, dc: computed
    upstream): solutions of M̂·x = ĉ for M̂, ĉ anywhere within that slack of
    the primary M, c (random directions and the largest entries, solved in
    float32 by LAPACK as a backend would) pass the criterion and lie in
    solve_range's range; without the slack most of them fail the
    criterion — the slack is what admits them."""
    from shlo_conform.spec import lapack
    from shlo_conform.spec.types import parse_type
    rng = np.random.default_rng(41)
    n, k = 8, 2
    m = (rng.standard_normal((n, n)) + 4 * np.eye(n)).astype(np.float32)
    c = rng.standard_normal((n, k)).astype(np.float32)
    tm, tc = parse_type(f"tensor<{n}x{n}xf32>"), parse_type(f"tensor<{n}x{k}xf32>")
    dm, dc = 1e-3 * np.abs(m).sum(axis=0).max(), 1e-3 * np.abs(c).sum(axis=0)
    thr = lapack.solve_threshold(n, float(n), tm.element_type)
    bare = lapack.record("linear_solve", {"threshold": thr}, [(m, tm), (c, tc)], lapack.SOLVE_STATEMENT, thr)
    rec = lapack.record("linear_solve", {"threshold": thr, "slack": {"M": [dm], "c": dc.tolist()}},
                        [(m, tm), (c, tc)], lapack.SOLVE_STATEMENT, thr)
    lo, hi = lapack.solve_range(rec)
    refused = 0
    for trial in range(40):
        dM = rng.standard_normal((n, n))
        if trial % 4 == 0:
            dM = np.sign(dM) * (np.abs(dM) == np.abs(dM).max(axis=0))
        dM *= dm / np.abs(dM).sum(axis=0).max()
        dC = rng.standard_normal((n, k))
        dC *= dc / np.abs(dC).sum(axis=0)
        x = np.linalg.solve((m + dM).astype(np.float32), (c + dC).astype(np.float32)).astype(np.float32)
        assert lapack.measure(rec, tc, x).ok
        xf = x.astype(np.float64)
        assert ((lo <= xf) & (xf <= hi)).all()
        refused += not lapack.measure(bare, tc, x).ok
    assert refused > 20, refused
