"""JAX's LAPACK factorisations (xGETRF, xGEQRF + xORGQR, xSYEVD / xHEEVD,
xGESDD) read as what they compute and judged by LAPACK's own test ratios
(spec/lapack.py), and carried downstream where the factors are used
together (oracle/chains.py: `jnp.linalg.solve`, `inv`, a Cholesky solve).

Independent truth: XLA's outputs (LAPACK) pass; numpy's and scipy's
(another LAPACK build, in double, rounded) pass — including factors whose
signs differ from XLA's; classic wrong outputs fail: zeros, a perturbed
factor, a non-orthogonal Q, wrong pivots, unsorted eigenvalues, a solution
off by 1 %."""
from __future__ import annotations

import numpy as np
import pytest

import jax
import jax.numpy as jnp  # noqa: E402
import scipy.linalg as sla  # noqa: E402
from jax.scipy.linalg import solve_triangular  # noqa: E402

from shlo_conform.oracle.program import execute, parse_program  # noqa: E402
from shlo_conform.suites.compare import compare  # noqa: E402
from tests.oracle.jax_programs import DTYPES, rand, wide  # noqa: E402

def program(xla, f, args):
    """(the oracle's expectations, XLA's outputs) of JAX's lowering of f."""
    text = jax.jit(f).lower(*args).as_text()
    es = execute(parse_program(text), list(args))
    return es, [np.asarray(o) for o in xla.run(xla.compile(text), list(args))], text


def ok(e, a) -> bool:
    return compare(e, np.asarray(a).astype(e.type.element_type.numpy)).ok


def perturbed(a, rel=1e-2):
    return (wide(a) * (1 + rel)).astype(a.dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_and_inv_are_judged_end_to_end(xla, dtype):
    rng = np.random.default_rng(1)
    a, b = rand((2, 5, 5), dtype, rng), rand((2, 5, 3), dtype, rng)
    (e,), (got,), text = program(xla, jnp.linalg.solve, [a, b])
    assert "getrf_ffi" in text and e.kind == "residual" and e.residual["property"] == "linear_solve"
    assert ok(e, got)
    assert ok(e, np.linalg.solve(wide(a), wide(b)))                  # numpy, in double, rounded
    assert not ok(e, np.zeros_like(got)) and not ok(e, perturbed(got))
    assert not ok(e, np.linalg.solve(wide(np.swapaxes(a, -1, -2)), wide(b)))   # the transposed system
    (e,), (got,), _ = program(xla, jnp.linalg.inv, [a])
    assert e.residual["property"] == "linear_solve" and ok(e, got) and ok(e, np.linalg.inv(wide(a)))
    assert not ok(e, np.zeros_like(got)) and not ok(e, perturbed(got, 1e-3))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cholesky_solves_are_judged_end_to_end(xla, dtype):
    rng = np.random.default_rng(2)
    g = rand((6, 6), dtype, rng)
    a, b = (g @ g.T + 6 * np.eye(6)).astype(dtype), rand((6, 2), dtype, rng)

    def chol_solve(a, b):
        lo = jnp.linalg.cholesky(a)
        return solve_triangular(lo.T, solve_triangular(lo, b, lower=True), lower=False)

    def cho_solve(a, b):
        return jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(a), b)

    for f in (chol_solve, cho_solve):
        (e,), (got,), _ = program(xla, f, [a, b])
        assert e.kind == "residual" and e.residual["property"] == "linear_solve", e.why
        assert ok(e, got) and ok(e, sla.cho_solve(sla.cho_factor(wide(a)), wide(b)))
        assert not ok(e, np.zeros_like(got)) and not ok(e, perturbed(got))


def test_a_solve_in_the_wrong_order_is_not_claimed(xla):
    """Lᴴ first, then L: not A⁻¹·b — the oracle keeps "any value"."""
    rng = np.random.default_rng(3)
    g = rand((4, 4), np.float32, rng)
    a, b = (g @ g.T + 4 * np.eye(4)).astype(np.float32), rand((4, 2), np.float32, rng)

    def wrong(a, b):
        lo = jnp.linalg.cholesky(a)
        return solve_triangular(lo, solve_triangular(lo.T, b, lower=False), lower=True)
    (e,), _, _ = program(xla, wrong, [a, b])
    assert e.kind != "residual" and "any value" in e.why


@pytest.mark.parametrize("dtype", DTYPES)
def test_lu(xla, dtype):
    rng = np.random.default_rng(4)
    a = rand((2, 5, 5), dtype, rng)
    (e_lu, e_piv, e_perm), (lu, piv, perm), _ = program(xla, jax.lax.linalg.lu, [a])
    assert e_lu.residual["property"] == "getrf.lu" and e_piv.kind == "exact"
    assert ok(e_lu, lu) and ok(e_piv, piv) and ok(e_perm, perm)
    for i in range(2):                                   # scipy's getrf (0-based pivots), in double
        f, p = sla.lu_factor(wide(a[i]))
        assert np.array_equal(p, piv[i]) and ok(e_lu, np.stack([sla.lu_factor(wide(a[j]))[0] for j in range(2)]))
    assert not ok(e_lu, np.zeros_like(lu)) and not ok(e_lu, perturbed(lu))
    assert not ok(e_piv, piv[..., ::-1].copy())         # wrong pivots
    nopiv = np.triu(wide(a)) + np.tril(wide(a), -1) / wide(a)[..., :1, :1]   # no pivoting: not LAPACK's LU
    assert not ok(e_lu, nopiv)


def test_lu_pivots_are_not_stated_at_a_tie(xla):
    a = np.array([[1, 2, 0], [-1, 1, 3], [0.5, 1, 1]], np.float32)   # |1| = |-1|: either row is a valid pivot
    (e_lu, e_piv, _), (lu, piv, _), _ = program(xla, jax.lax.linalg.lu, [a])
    assert e_lu.kind != "residual" and "any value" in e_piv.why
    assert ok(e_piv, piv) and ok(e_piv, np.array([1, 1, 2], np.int32)) and ok(e_lu, lu)
    from shlo_conform.spec.lapack import lu_pivoting
    from shlo_conform.spec.types import E_F32
    assert "within the rounding" in lu_pivoting(a.astype(np.float64), E_F32)[3]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr(xla, dtype, mode):
    rng = np.random.default_rng(5)
    a = rand((2, 6, 4), dtype, rng)
    (e_q, e_r), (q, r), text = program(xla, lambda x: jnp.linalg.qr(x, mode=mode), [a])
    assert "geqrf_ffi" in text and e_q.residual["property"] == "qr.q" and e_r.residual["property"] == "geqrf.r"
    assert ok(e_q, q) and ok(e_r, r)
    nq, nr = np.linalg.qr(wide(a), mode=mode)
    assert ok(e_q, nq) and ok(e_r, nr)
    signs = np.where(np.arange(nq.shape[-1]) % 2 == 0, 1.0, -1.0)     # other signs: still a QR
    assert ok(e_q, nq * signs) and ok(e_r, nr * signs[: nr.shape[-2], None])
    assert not ok(e_q, np.zeros_like(q)) and not ok(e_r, np.zeros_like(r))
    assert not ok(e_q, wide(q) + 1e-2 * rand(q.shape, q.dtype, rng))  # not orthonormal
    assert not ok(e_r, perturbed(r))
    other = np.linalg.qr(wide(rand(a.shape, dtype, rng)), mode=mode)  # another matrix's factors
    assert not ok(e_q, other[0]) and not ok(e_r, other[1])


def test_a_property_judged_output_reads_as_its_ratio_not_as_a_ulp_distance(xla):
    """`run`'s line for an output judged by a property leads with the
    criterion's ratio as a share of its threshold; the ULP distance from the
    oracle's reference — a QR with other signs is as right — is named as one
    correct answer of many, not as the output's error."""
    from shlo_conform.differential import _distance, judge_outputs
    rng = np.random.default_rng(5)
    a = rand((6, 4), np.float32, rng)
    (e_q, e_r), (q, r), _ = program(xla, jnp.linalg.qr, [a])
    signs = np.array([-1.0, 1.0, 1.0, -1.0])
    flipped = [(wide(q) * signs).astype(q.dtype), (wide(r) * signs[:, None]).astype(r.dtype)]
    for rep in judge_outputs([e_q, e_r], flipped):
        line = _distance(rep)
        assert rep.status == "agrees" and 0 < rep.used < 1, (rep.status, rep.used)
        assert line.startswith("; the criterion's ratio is") and "one correct answer of many" in line, line
        assert rep.max_ulp > 1e6   # the flipped signs: far from the reference, and right
    wrong = judge_outputs([e_q], [perturbed(q)])[0]
    assert wrong.status == "DISAGREES" and wrong.used is None
    (e,), (got,), _ = program(xla, lambda x: jnp.exp(x) * 3, [a])   # an element-wise output: its enclosure's words
    rep = judge_outputs([e], [got])[0]
    assert rep.ok and rep.ulp_measures and "one correct answer" not in _distance(rep)
    assert "of its enclosure" in _distance(rep) or rep.used == 0


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh(xla, dtype):
    rng = np.random.default_rng(6)
    g = rand((2, 5, 5), dtype, rng)
    a = (g + np.conj(np.swapaxes(g, -1, -2))).astype(dtype)
    (e_w, e_v), (w, v), text = program(xla, jnp.linalg.eigh, [a])
    assert e_w.residual["property"] == "eigh.values" and e_v.residual["property"] == "eigh.vectors"
    assert ok(e_w, w) and ok(e_v, v)
    nw, nv = np.linalg.eigh(wide(a))
    assert ok(e_w, nw) and ok(e_v, nv) and ok(e_v, -nv)             # signs are free
    assert not ok(e_w, w[..., ::-1].copy())                          # unsorted
    assert not ok(e_w, np.zeros_like(w)) and not ok(e_v, np.zeros_like(v))
    assert not ok(e_w, perturbed(w)) and not ok(e_v, perturbed(v))
    assert not ok(e_v, v[..., ::-1].copy())                          # columns not matching ascending eigenvalues


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("full", [True, False])
def test_svd(xla, dtype, full):
    rng = np.random.default_rng(7)
    a = rand((2, 5, 3), dtype, rng)
    (e_u, e_s, e_vt), (u, s, vt), _ = program(xla, lambda x: jnp.linalg.svd(x, full_matrices=full), [a])
    assert [e.residual["property"] for e in (e_u, e_s, e_vt)] == ["svd.u", "svd.values", "svd.vt"]
    assert ok(e_u, u) and ok(e_s, s) and ok(e_vt, vt)
    nu, ns, nvt = np.linalg.svd(wide(a), full_matrices=full)
    assert ok(e_u, nu) and ok(e_s, ns) and ok(e_vt, nvt) and ok(e_u, -nu)
    assert not ok(e_s, s[..., ::-1].copy()) and not ok(e_s, perturbed(s))
    for e, x in ((e_u, u), (e_s, s), (e_vt, vt)):
        assert not ok(e, np.zeros_like(x))
    assert not ok(e_u, perturbed(u)) and not ok(e_vt, wide(vt) + 1e-2 * rand(vt.shape, vt.dtype, rng))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_a_product_of_factors_is_a_range_where_real(xla, dtype):
    """A product of Cholesky factors, L·Lᴴ: the factor is defined by a
    property; a real one whose other triangle JAX zeroes enters the product
    as the range its criterion lets pass (spec/lapack.py `cholesky_range`),
    so the product is bounded — XLA's output and the exact product (a
    itself) inside, a 1.01-scaled one outside; a complex factor gets no
    range: any value, said.  (Complex det and slogdet are judged:
    tests/oracle/test_complex_det.py.)"""
    rng = np.random.default_rng(8)
    g = rand((4, 4), dtype, rng)
    a = (g @ np.conj(g.T) + 4 * np.eye(4)).astype(dtype)
    f = lambda x: jnp.linalg.cholesky(x) @ jnp.conj(jnp.linalg.cholesky(x)).T  # noqa: E731
    es, got, _ = program(xla, f, [a])
    if np.iscomplexobj(a):
        assert es[0].kind not in ("residual", "bounded") and "any value" in es[0].why
        return
    assert es[0].kind == "bounded", es[0].why
    assert ok(es[0], got[0]) and ok(es[0], a) and not ok(es[0], perturbed(got[0]))


def test_a_call_that_does_not_fit_is_said():
    from shlo_conform.oracle.program import CannotJudge
    text = """func.func @main(%a: tensor<3x3xf32>) -> tensor<3x3xf32> {
      %0:3 = stablehlo.custom_call @lapack_sgetrf_ffi(%a) {mhlo.backend_config = {}} : (tensor<3x3xf32>)
          -> (tensor<3x3xf32>, tensor<3xi32>, tensor<i32>)
      return %0#0 : tensor<3x3xf32>
    }"""
    with pytest.raises(CannotJudge, match="column-major"):
        execute(parse_program(text), [np.eye(3, dtype=np.float32)])
