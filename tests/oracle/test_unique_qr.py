"""Q·sign(diag R) from `jnp.linalg.qr`: the one Q of A = Q·R with R's
diagonal positive, judged by orthogonality and distance (oracle/unique_qr.py).

Independent truth: Gram–Schmidt of A in mpmath at 50 digits (exactly the
Q with R's diagonal positive); XLA's output must pass and lie within the
stated radius of it; wrong outputs (zero, negated, ×1.01, one column's
sign flipped, another matrix's Q) must fail.  Brute force: Q̃, R̃ drawn at
the edges of the criteria the radius assumes, every M = Q̃·sign(diag R̃)
within the radius."""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import mpmath
import numpy as np

from shlo_conform.spec.types import parse_type
from tests.oracle.jax_programs import judged_by_range, ok, program


def signed_q(a):
    q, r = jnp.linalg.qr(a)
    return q * jnp.sign(jnp.diagonal(r, axis1=-2, axis2=-1))[..., None, :]


def gram_schmidt(a: np.ndarray) -> np.ndarray:
    """A's Q with R's diagonal positive, in mpmath at 50 digits (modified Gram–Schmidt on exact inputs)."""
    m, n = a.shape
    with mpmath.workdps(50):
        cols = [[mpmath.mpf(float(a[i, j])) for i in range(m)] for j in range(n)]
        out = []
        for v in cols:
            for q in out:
                d = mpmath.fsum(x * y for x, y in zip(q, v))
                v = [x - d * y for x, y in zip(v, q)]
            norm = mpmath.sqrt(mpmath.fsum(x * x for x in v))
            out.append([x / norm for x in v])
        return np.array([[float(out[j][i]) for j in range(n)] for i in range(m)])


def radius_of(e) -> np.ndarray:
    return np.asarray(e.residual["attributes"]["radius"], dtype=np.float64)


def test_xla_passes_and_lies_within_the_radius_of_the_exact_q(xla):
    rng = np.random.default_rng(71)
    a = rng.standard_normal((12, 5)).astype(np.float32)
    (e,), (got,) = program(xla, signed_q, [a])
    assert e.kind == "residual" and e.residual["property"] == "qr.q.positive", e.why
    truth = gram_schmidt(a)
    (rho,) = radius_of(e)
    assert np.linalg.norm(got - truth) <= rho and ok(e, got)
    assert ok(e, truth.astype(np.float32))   # the correctly rounded Q₊ itself passes
    flipped = got.copy()
    flipped[:, 2] *= -1                        # a Q whose column 2 is not the sign-fixed one
    other = np.asarray(signed_q(a[::-1]))      # another matrix's Q (rows reversed)
    for wrong in (np.zeros_like(got), -got, got * np.float32(1.01), flipped, other):
        assert not ok(e, wrong)
    assert rho < 0.05, rho   # tight enough to tell a sign or a 1 % scaling apart, not just any orthonormal Q


def test_a_batched_f64_q_is_judged_tightly(xla):
    rng = np.random.default_rng(72)
    a = rng.standard_normal((3, 7, 4))
    (e,), (got,) = program(xla, signed_q, [a])
    assert e.residual["property"] == "qr.q.positive", e.why
    rho = radius_of(e)
    assert rho.shape == (3,) and (rho < 1e-9).all(), rho
    for i in range(3):
        assert np.linalg.norm(got[i] - gram_schmidt(a[i])) <= rho[i]
    assert ok(e, got)
    wrong = got.copy()
    wrong[1] *= 1 + 1e-7
    assert not ok(e, wrong)


def test_the_orthogonal_initializer_is_judged_from_its_gaussian_draws(xla):
    """jax.nn.initializers.orthogonal: A is computed (erf_inv of uniform bits), so the record carries A's
    distance (`slack`), and `scale * Q` with scale 1 passes the property through."""
    init = jax.nn.initializers.orthogonal()
    key = np.asarray(jax.random.key_data(jax.random.PRNGKey(3)))
    (e,), (got,) = program(xla, lambda k: init(jax.random.wrap_key_data(k), (16, 8), jnp.float32), [key])
    assert e.kind == "residual" and e.residual["property"] == "qr.q.positive", e.why
    assert e.residual.get("slack") and e.residual["slack"][0] > 0
    a = np.asarray(jax.random.normal(jax.random.PRNGKey(3), (16, 8), jnp.float32), dtype=np.float64)
    assert np.linalg.norm(got - gram_schmidt(a)) <= radius_of(e)[0]
    assert ok(e, got)
    for wrong in (np.zeros_like(got), -got, got * np.float32(1.01)):
        assert not ok(e, wrong)


def test_a_gain_keeps_the_property(xla):
    """orthogonal(scale=√2), a ReLU network's gain: judged as Q·sign(diag R) of the output over the gain."""
    rng = np.random.default_rng(75)
    a = rng.standard_normal((10, 4)).astype(np.float32)
    g = np.float32(math.sqrt(2))
    (e,), (got,) = program(xla, lambda a: g * signed_q(a), [a])
    assert e.kind == "residual" and e.residual["attributes"]["scale"] == float(g), e.why
    assert ok(e, got) and ok(e, (g * gram_schmidt(a)).astype(np.float32))
    for wrong in (np.zeros_like(got), -got, got * np.float32(1.01), got / g):
        assert not ok(e, wrong)


def test_q_computed_on_is_a_range_holding_the_exact_value(xla):
    """Q₊ ± ρ where the program computes on Q (here 1 + g·Q, the gain's rounding inside ρ): holds the exact value."""
    rng = np.random.default_rng(79)
    a = rng.standard_normal((10, 4)).astype(np.float32)
    g = np.float32(math.sqrt(2))
    (e,), (got,) = program(xla, lambda a: 1 + g * signed_q(a), [a])
    judged_by_range(e, "oracle/propagation.py", 1 + float(g) * gram_schmidt(a), got)


def test_what_the_bound_does_not_cover_is_not_claimed(xla):
    rng = np.random.default_rng(73)
    a = rng.standard_normal((6, 3)).astype(np.float32)
    deficient = a.copy()
    deficient[:, 2] = deficient[:, 1]

    def complete(a):
        q, r = jnp.linalg.qr(a, mode="complete")
        return q[:, :3] * jnp.sign(jnp.diagonal(r))

    def rows(a):   # the signs along Q's rows: no rule makes this a Q
        q, r = jnp.linalg.qr(a[:3])
        return q * jnp.sign(jnp.diagonal(r))[:, None]
    c = (rng.standard_normal((5, 3)) + 1j * rng.standard_normal((5, 3))).astype(np.complex64)
    for f, x in ((signed_q, deficient), (complete, a), (rows, a), (signed_q, c)):
        (e,), (got,) = program(xla, f, [x])
        assert e.kind != "residual" and "any value" in e.why and ok(e, got), e.why


def test_every_q_the_criteria_let_pass_lies_within_the_radius():
    """Q̃ = Q_B·(I + X)·S, R̃ = S·(I + X)⁻¹·R_B: B = A − E with E at xGEQRF's contract's bound, X upper
    triangular with Q̃'s Gram error at qr.q's bound, S random signs — Q̃·R̃ = B exactly, R̃ upper
    triangular.  M = Q̃·sign(diag R̃) must lie within ρ of the exact Q₊ (mpmath)."""
    from shlo_conform.oracle.unique_qr import positive_q
    from tests.oracle.qr_edges import factors_at_the_edges, matrices
    rng = np.random.default_rng(74)
    worst = 0.0
    for m, n, ta, t, a in matrices(rng, ((6, 3), (10, 4), (5, 5)), 8):
        A = a.astype(np.float64)
        got = positive_q(A, ta, t, np.zeros(1))
        assert got is not None
        center, rho = got[0], float(got[1])
        truth = gram_schmidt(A)
        assert np.linalg.norm(center - truth) <= rho * 1e-3   # the center's own error is float64's
        for _ in range(6):
            qt, rt = factors_at_the_edges(A, t, rng)
            d = float(np.linalg.norm(qt * np.sign(np.diagonal(rt)) - truth))
            assert d <= rho, (m, n, d, rho)
            worst = max(worst, d / rho)
    print(f"worst sample: {worst:.3g} of the radius")
    assert worst > 1e-3, worst
    assert math.isfinite(worst)


def exact_logdet(a: np.ndarray) -> float:
    """½·log det(AᵀA) in mpmath at 50 digits: log|det A| for square A, log of R's diagonal's product."""
    with mpmath.workdps(50):
        A = mpmath.matrix(np.asarray(a, dtype=np.float64).tolist())
        return float(mpmath.log(mpmath.det(A.T * A)) / 2)


def test_slogdet_through_qr_is_a_range_holding_the_exact_value(xla):
    """jnp.linalg.slogdet(a, method="qr"): Σ log|r̃ₖₖ|, each |r̃ₖₖ| in the range geqrf.r's criterion allows."""
    rng = np.random.default_rng(76)
    a = (rng.standard_normal((6, 6)) + 3 * np.eye(6)).astype(np.float32)
    (e,), (got,) = program(xla, lambda a: jnp.linalg.slogdet(a, method="qr")[1], [a])
    judged_by_range(e, "oracle/propagation.py", np.float64(exact_logdet(a)), got)
    assert not ok(e, got * np.float32(1.05))


def test_the_log_volume_of_a_tall_matrix_is_judged(xla):
    """Σ log|diag(qr(a, mode="r"))| = ½·log det(AᵀA), a Gram log-determinant."""
    rng = np.random.default_rng(77)
    a = rng.standard_normal((8, 5)).astype(np.float32)
    f = lambda a: jnp.sum(jnp.log(jnp.abs(jnp.diagonal(jnp.linalg.qr(a, mode="r")))))   # noqa: E731
    (e,), (got,) = program(xla, f, [a])
    judged_by_range(e, "oracle/propagation.py", np.float64(exact_logdet(a)), got)
    assert not ok(e, got * np.float32(1.01))


def test_every_r_the_criterion_lets_pass_has_its_diagonal_in_the_range():
    """R̃ the R-factor (any signs) of Â = A + E with ‖ÂᵀÂ − AᵀA‖₁ at geqrf.r's bound: |r̃ₖₖ| inside."""
    from shlo_conform.oracle.unique_qr import diagonal_range
    from shlo_conform.spec import lapack
    from shlo_conform.spec.types import tensor_to_hex
    rng = np.random.default_rng(78)
    worst, covered = 0.0, 0
    n1 = lambda v: np.abs(v).sum(axis=0).max()   # noqa: E731
    for m, n in ((6, 6), (9, 4), (5, 3)):
        ta = parse_type(f"tensor<{m}x{n}xf32>")
        thr = lapack.two_sided(max(m, n), ta.element_type)
        for trial in range(8):
            a = (rng.standard_normal((m, n)) + 2 * np.eye(m, n)).astype(np.float32)
            A = a.astype(np.float64)
            tag = {"a": {"type": ta.mlir, "hex": tensor_to_hex(a, ta)}, "k": list(range(n)), "batch": [0] * n,
                   "threshold": thr}
            got = diagonal_range(tag)
            if got is None:   # σ_n too small for the bound: no claim (counted below)
                continue
            covered += 1
            lo, hi = got
            bound = thr * max(m, n) * n1(A) * np.abs(A).sum(axis=1).max() * 2.0 ** -24
            for _ in range(6):
                E = rng.standard_normal((m, n))
                F = lambda t: n1((A + t * E).T @ (A + t * E) - A.T @ A)   # noqa: E731
                t = 1.0
                while F(t) > 0.99 * bound:
                    t /= 1.3
                R = np.linalg.qr(A + t * E, mode="r") * rng.choice([-1.0, 1.0], (n, 1))
                d = np.abs(np.diagonal(R))
                assert ((lo <= d) & (d <= hi)).all(), (m, n, trial)
                worst = max(worst, float(np.max(np.abs(d - (lo + hi) / 2) / ((hi - lo) / 2))))
    print(f"worst sample: {worst:.3g} of the half-width; {covered} of 24 matrices claimed")
    assert worst > 1e-3 and covered >= 16, (worst, covered)
