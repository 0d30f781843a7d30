"""`jnp.linalg.eig` / `eigvals` (lapack_{s,d,c,z}geev_ffi): eigenvalues and
right eigenvectors of a general matrix, in any order (spec/geev.py).

Independent truth: mpmath's eigenvalues and eigenvectors at 60 digits must
pass, in any order and with any phases; XLA's outputs must pass; wrong ones
(zero, negated, ×(1 + 10⁻⁹), a value repeated, a conjugate pair broken,
another matrix's values, a column repeated or off by 10⁻⁹) must fail.
Brute force: the exact eigenvalues (mpmath) of A + E with ‖E‖₂ at the
criterion's allowance t·n·‖A‖₁·ε, E in random directions, all pass — and
with the discs' growth cut to 5 % some of them do not, so the sampling
can reach the edge the proof allows."""
from __future__ import annotations

import jax.numpy as jnp
import mpmath
import numpy as np
import pytest

from shlo_conform.spec import geev, lapack
from shlo_conform.spec.types import element_type
from tests.oracle.jax_programs import ends, ok, program


def mp_eig(a: np.ndarray, dps: int = 60):
    """(eigenvalues, unit eigenvectors) of `a` by mpmath at `dps` digits, as complex128."""
    with mpmath.workdps(dps):
        w, v = mpmath.eig(mpmath.matrix(np.asarray(a).tolist()))
        vals = np.array([complex(x) for x in w])
        vecs = np.array([[complex(v[i, j]) for j in range(v.cols)] for i in range(v.rows)])
    return vals, vecs / np.linalg.norm(vecs, axis=0)


def test_eigvals_of_xla_and_of_mpmath_pass_in_any_order(xla):
    rng = np.random.default_rng(11)
    a = rng.standard_normal((7, 7))
    (e,), (got,) = program(xla, jnp.linalg.eigvals, [a])
    assert e.kind == "residual" and e.residual["property"] == "geev.values", e.why
    truth, _ = mp_eig(a)
    assert ok(e, got) and ok(e, truth) and ok(e, truth[::-1]) and ok(e, np.roll(truth, 3))
    pair = np.flatnonzero(truth.imag > 1e-3)[0]
    broken = truth.copy()
    broken[pair] = broken[pair].conjugate()    # both halves of a conjugate pair the same value
    repeated = np.r_[truth[:-1], truth[0]]
    other = mp_eig(a + np.eye(7) * 1e-6)[0]    # another matrix's eigenvalues
    for wrong in (np.zeros_like(got), -got, got * (1 + 1e-9), broken, repeated, other):
        assert not ok(e, wrong)


def test_eig_vectors_pass_with_any_order_and_phase(xla):
    rng = np.random.default_rng(12)
    a = rng.standard_normal((6, 6))
    (ew, ev), (w, v) = program(xla, jnp.linalg.eig, [a])
    assert ev.residual["property"] == "geev.vectors", ev.why
    assert ok(ew, w) and ok(ev, v)
    _, vecs = mp_eig(a)
    order = np.random.default_rng(0).permutation(6)
    phases = np.exp(1j * np.random.default_rng(1).uniform(0, 2 * np.pi, 6))
    assert ok(ev, vecs) and ok(ev, vecs[:, order] * phases)
    twice = np.c_[vecs[:, :5], vecs[:, 0]]
    nudged = vecs.copy()
    nudged[2, 3] += 1e-9
    for wrong in (np.zeros_like(v), twice, nudged, v * 1.01, np.roll(v, 1, axis=0)):
        assert not ok(ev, wrong)


def test_complex_batches_and_single_precision(xla):
    rng = np.random.default_rng(13)
    a = (rng.standard_normal((3, 5, 5)) + 1j * rng.standard_normal((3, 5, 5))).astype(np.complex64)
    (ew, ev), (w, v) = program(xla, jnp.linalg.eig, [a])
    assert ok(ew, w) and ok(ev, v)
    truth = np.array([mp_eig(m.astype(np.complex128))[0] for m in a])
    assert ok(ew, truth[:, ::-1].astype(np.complex64))
    mixed = truth.copy()
    mixed[0], mixed[1] = truth[1], truth[0]   # two batch elements' values swapped
    assert not ok(ew, mixed.astype(np.complex64)) and not ok(ew, (w * 1.001).astype(np.complex64))


def test_a_cluster_is_judged_as_one_component_and_a_defective_matrix_loosely():
    # two eigenvalues 10⁻⁹ apart with nearly parallel eigenvectors: their discs meet; the pair may come in any split
    a = np.array([[1.0, 1.0, 0.0], [1e-18, 1.0 + 1e-9, 0.0], [0.0, 0.0, 3.0]])
    d = geev.discs_one(a, 2.0 ** -53)
    t = lapack.two_sided(3, element_type("f64"))
    truth, _ = mp_eig(a)
    assert geev.values_s(d, truth) <= t
    assert geev.values_s(d, np.array([1.0, 1.0 + 1e-9, 3.0])) <= t
    assert geev.values_s(d, np.array([1.0, 3.0, 3.0])) > t   # the cluster's count broken
    # exactly defective (a Jordan block): eigenvalues move by √‖E‖, numpy's eigenvectors are parallel to 2⁻⁵²,
    # so the discs are sound and wide: a value 1 % off passes too (`run` calls such an output inconclusive)
    j = geev.discs_one(np.array([[2.0, 1.0], [0.0, 2.0]]), 2.0 ** -53)
    assert geev.values_s(j, np.array([2.0, 2.0])) <= 1 and geev.values_s(j, np.array([2.02, 1.98])) <= 1


@pytest.mark.parametrize("n", [4, 7])
def test_every_exact_spectrum_of_a_perturbation_at_the_allowance_passes(n):
    """Brute force over E (module docstring): f32's ε, so the allowance is far past float64's own error."""
    rng = np.random.default_rng(100 + n)
    et = element_type("f32")
    u, t = 2.0 ** -24, lapack.two_sided(n, et)
    worst, cut_fails = 0.0, 0
    for trial in range(12):
        a = rng.standard_normal((n, n)).astype(np.float32).astype(np.float64)
        d = geev.discs_one(a, u)
        budget = t * d["unit"] * 0.999                 # ‖E‖₂ just inside t·n·‖A‖₁·ε
        e = rng.standard_normal((n, n)) + (1j * rng.standard_normal((n, n)) if trial % 2 else 0)
        if trial % 3 == 0:   # the direction that moves λ₁ most: its right and left eigenvectors, rank one
            w, vr = np.linalg.eig(a)
            vl = np.linalg.inv(vr).conj().T
            e = np.outer(vl[:, 0], vr[:, 0].conj())
        e *= budget / np.linalg.norm(e, 2)
        vals, _ = mp_eig(a + e, 40)
        s = geev.values_measure(d, vals, t)
        assert s <= t, (trial, s, t)
        worst = max(worst, s / t)
        # the same values against radii cut to 5 % of what the proof allows: some fall out
        lo, hi = geev.radius_range(d, t)                 # the spectral radius's range holds it too
        assert lo <= np.abs(vals).max() <= hi
        cut = {**d, "coef": [c * 0.05 for c in d["coef"]], "ynorm": [y * 0.05 for y in d["ynorm"]]}
        cut_fails += geev.values_measure(cut, vals, t) > t
    assert worst > 0.01 and cut_fails > 0, (worst, cut_fails)


def test_first_order_discs_catch_a_small_scaling_in_single_precision():
    """At order 24 in f32 the plain discs pass values scaled by 1 ± 1/64; the first-order ones do not."""
    rng = np.random.default_rng(20)
    a = rng.standard_normal((24, 24)).astype(np.float32).astype(np.float64)
    d = geev.discs_one(a, 2.0 ** -24)
    t = lapack.two_sided(24, element_type("f32"))
    w = np.linalg.eigvals(a)   # float64's values: within f32's allowance by far
    assert geev.values_measure(d, w, t) <= t
    assert np.isfinite(geev.isolated_radii(d, t)).sum() >= 10
    for scaled in (w * (1 + 2.0 ** -6), w * (1 - 2.0 ** -6)):
        assert geev.values_s(d, scaled) <= t < geev.values_measure(d, scaled, t)


def test_the_vectors_of_a_perturbation_at_the_allowance_pass():
    rng = np.random.default_rng(21)
    n, u = 5, 2.0 ** -24
    t = lapack.two_sided(n, element_type("f32"))
    for _ in range(6):
        a = rng.standard_normal((n, n))
        d = geev.discs_one(a, u)
        e = rng.standard_normal((n, n))
        e *= t * d["unit"] * 0.999 / np.linalg.norm(e, 2)
        _, vecs = mp_eig(a + e, 40)
        s, norm = geev.vectors_s(d, a.astype(np.complex128), vecs, t, 2.0 ** -53)
        assert s <= t and norm <= t


def test_roots_of_a_polynomial_are_judged_through_its_zero_test(xla):
    """jnp.roots: eigvals of the companion matrix, compared with 0, sorted by that flag (oracle/eigenvalues.py)."""
    p = np.array([1.5, -2.0, 0.5, 3.0, -1.0, 0.25], np.float32)
    (e,), (got,) = program(xla, lambda c: jnp.roots(c, strip_zeros=False), [p])
    assert e.kind == "residual" and e.residual["property"] == "geev.values", e.why
    with mpmath.workdps(60):
        truth = np.array([complex(r) for r in mpmath.polyroots([mpmath.mpf(float(x)) for x in p], maxsteps=200,
                                                                extraprec=200)])
    assert ok(e, got) and ok(e, truth.astype(np.complex64)) and ok(e, truth[::-1].astype(np.complex64))
    moved = truth.copy()
    moved[0] *= 1.001
    for wrong in (got * np.complex64(1.01), moved.astype(np.complex64), np.zeros_like(got)):
        assert not ok(e, wrong)


def test_a_matrix_computed_upstream_widens_the_discs_by_its_distance(xla):
    rng = np.random.default_rng(31)
    a, b = rng.standard_normal((2, 6, 6)).astype(np.float32)
    (e,), (got,) = program(xla, lambda x, y: jnp.linalg.eigvals(x @ y), [a, b])
    assert e.residual.get("ranged") and e.residual["slack"][0] > 0, e.residual.keys()
    assert ok(e, got)
    exact = a.astype(np.float64) @ b.astype(np.float64)    # the product before rounding: within the slack
    assert ok(e, mp_eig(exact, 30)[0].astype(np.complex64))
    assert not ok(e, got * np.complex64(1.01))


def test_the_spectral_radius_is_a_range_from_the_discs(xla):
    """max |eigvals| (an echo state network's scaling): a range holding mpmath's value; wrong ones refused."""
    rng = np.random.default_rng(41)
    w = rng.standard_normal((10, 10)) / np.sqrt(10)
    (e,), (got,) = program(xla, lambda m: jnp.max(jnp.abs(jnp.linalg.eigvals(m))), [w])
    assert e.kind == "bounded" and "oracle/eigenvalues.py" in e.why, e.why
    truth = float(np.max(np.abs(mp_eig(w)[0])))
    lo, hi = ends(e)
    assert lo <= truth <= hi and (hi - lo) / truth < 1e-10
    assert ok(e, got) and not ok(e, got * (1 + 1e-9)) and not ok(e, got * (1 - 1e-9))
    # in f32, through the scaling W·0.9/ρ
    w32 = w.astype(np.float32)
    (s,), (scaled,) = program(xla, lambda m: m * (0.9 / jnp.max(jnp.abs(jnp.linalg.eigvals(m)))), [w32])
    assert s.kind == "bounded" and ok(s, scaled)
    assert not ok(s, scaled * np.float32(1.01)) and not ok(s, -scaled)


def test_a_zero_test_beside_other_values_claims_nothing(xla):
    """roots' rule states the flags of eigenvalues only: values concatenated with a zero keep "any value"."""
    a = np.random.default_rng(51).standard_normal((4, 4))
    (e,), _ = program(xla, lambda m: jnp.concatenate([jnp.linalg.eigvals(m), jnp.zeros(1, jnp.complex128)]) == 0,
                      [a])
    assert not (e.kind == "exact" and not e.impl_defined and not np.asarray(e.array()).any()), e.why
