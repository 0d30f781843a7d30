"""Programs from the wild: JAX's `jnp.linalg.cholesky` and
`jax.scipy.linalg.solve_triangular` as JAX lowers them on CPU — calls of
jaxlib's LAPACK kernels in the legacy spelling (`lapack_spotrf_ffi`,
`lapack_dtrsm_ffi`, … with `mhlo.backend_config`) — read by the oracle as
the ops they compute (oracle/custom_calls.py).  XLA's outputs (LAPACK, a
second implementation) must pass the oracle's expectation, and classic
wrong outputs — the transposed factor, a solve of the untransposed system,
the other triangle read, built with numpy — must fail."""
from __future__ import annotations

import numpy as np
import pytest

import jax
import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402

from shlo_conform.oracle.custom_calls import INFO_UNDEFINED  # noqa: E402
from shlo_conform.oracle.program import CannotJudge, execute, parse_program  # noqa: E402
from shlo_conform.suites.compare import compare  # noqa: E402
from shlo_conform.suites.kinds.residual import UNDEFINED  # noqa: E402


def hpd(shape, dtype, rng):
    """Hermitian positive-definite matrices: G·Gᴴ + n·I."""
    g = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        g = g + 1j * rng.standard_normal(shape)
    return (g @ np.conj(np.swapaxes(g, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def judged(xla, text, inputs):
    """(the oracle's expectation of output 0, XLA's output 0)."""
    (e,) = execute(parse_program(text), inputs)[:1]
    got = np.asarray(xla.run(xla.compile(text), inputs)[0])
    return e, got


@pytest.mark.parametrize("dtype, shape", [(np.float32, (4, 4)), (np.float64, (2, 3, 5, 5)), (np.complex64, (3, 3))])
def test_jax_cholesky(xla, dtype, shape):
    a = hpd(shape, dtype, np.random.default_rng(0))
    text = jax.jit(jnp.linalg.cholesky).lower(a).as_text()
    assert "potrf_ffi" in text and "stablehlo.cholesky" not in text
    e, got = judged(xla, text, [a])
    assert e.kind == "residual" and e.residual["op"] == "cholesky" and e.residual["attributes"] == {"lower": True}
    assert "read as cholesky" in e.why
    j = compare(e, got)
    assert j.ok, j.detail
    transposed = np.ascontiguousarray(np.swapaxes(got, -1, -2))   # the factor in the other triangle: U for L
    assert not compare(e, transposed).ok
    numpy_factor = np.linalg.cholesky(a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)).astype(dtype)
    assert compare(e, numpy_factor).ok   # a third implementation, rounded from double


def test_jax_scipy_upper_cholesky(xla):
    """jax.scipy.linalg.cholesky(lower=False): LAPACK's lower factor, then a
    transpose — judged as the upper factor (oracle/characterized.py
    RESTATE), not "any value"."""
    a = hpd((2, 4, 4), np.float64, np.random.default_rng(4))
    text = jax.jit(lambda a: jsl.cholesky(a, lower=False)).lower(a).as_text()
    e, got = judged(xla, text, [a])
    assert e.kind == "residual" and e.residual["attributes"] == {"lower": False}
    assert compare(e, got).ok
    assert not compare(e, np.ascontiguousarray(np.swapaxes(got, -1, -2))).ok


@pytest.mark.parametrize("dtype, kw", [(np.float32, dict(lower=True)),
                                       (np.float64, dict(lower=False, trans=1)),
                                       (np.complex128, dict(lower=True, trans=2, unit_diagonal=True))])
def test_jax_solve_triangular(xla, dtype, kw):
    rng = np.random.default_rng(1)
    n = 4
    t = rng.standard_normal((3, n, n)) + 4 * np.eye(n)
    if np.issubdtype(dtype, np.complexfloating):
        t = t + 1j * rng.standard_normal((3, n, n))
    if kw.get("unit_diagonal"):
        t[..., np.arange(n), np.arange(n)] = 1   # else the seed leaves the behaviour undefined
    a = t.astype(dtype)   # both triangles hold values: the one not read must not matter
    b = rng.standard_normal((3, n, 2)).astype(dtype)
    text = jax.jit(lambda a, b: jsl.solve_triangular(a, b, **kw)).lower(a, b).as_text()
    assert "trsm_ffi" in text
    e, got = judged(xla, text, [a, b])
    assert e.kind == "residual" and e.residual["op"] == "triangular_solve"
    j = compare(e, got)
    assert j.ok, j.detail
    # numpy: the triangle read, op() applied as solve_triangular's `trans` says
    w = a.astype(np.complex128)
    T = np.tril(w) if kw["lower"] else np.triu(w)
    if kw.get("unit_diagonal"):
        T[..., np.arange(n), np.arange(n)] = 1
    op = {0: T, 1: np.swapaxes(T, -1, -2), 2: np.conj(np.swapaxes(T, -1, -2))}[kw.get("trans", 0)]
    cast = (lambda x: x.astype(dtype)) if np.iscomplexobj(a) else (lambda x: x.real.astype(dtype))
    assert compare(e, cast(np.linalg.solve(op, b))).ok
    if kw.get("trans", 0):
        assert not compare(e, cast(np.linalg.solve(T, b))).ok   # the untransposed system solved
    other = np.triu(w) if kw["lower"] else np.tril(w)
    assert not compare(e, cast(np.linalg.solve({0: other, 1: np.swapaxes(other, -1, -2),
                                                2: np.conj(np.swapaxes(other, -1, -2))}[kw.get("trans", 0)], b))).ok


def _potrf(uplo: int, layouts: bool, t="tensor<3x3xf32>") -> str:
    """jaxlib's legacy spelling of a Cholesky call, returning info too."""
    lay = (', operand_layouts = [dense<[0, 1]> : tensor<2xindex>], '
           'result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]') if layouts else ""
    return (f"func.func @main(%a: {t}) -> ({t}, tensor<i32>) {{\n"
            f'  %0:2 = "stablehlo.custom_call"(%a) {{call_target_name = "lapack_spotrf_ffi", backend_config = "", '
            f"mhlo.backend_config = {{uplo = {uplo} : ui8}}{lay}}} : ({t}) -> ({t}, tensor<i32>)\n"
            f'  "func.return"(%0#0, %0#1) : ({t}, tensor<i32>) -> ()\n}}\n')


def test_info_is_zero_where_defined_and_any_value_where_not(xla):
    """The factorisation's info: 0 on a positive-definite matrix (XLA's
    LAPACK agrees); on an indefinite one the seed leaves cholesky undefined,
    so any factor and any info pass, labelled (LAPACK says 3 here)."""
    a = hpd((3, 3), np.float32, np.random.default_rng(2))
    outs = execute(parse_program(_potrf(76, True)), [a])
    got = xla.run(xla.compile(_potrf(76, True)), [a])
    assert int(outs[1].array()) == 0 and outs[1].impl_defined == []
    assert all(compare(e, np.asarray(g)).ok for e, g in zip(outs, got))
    assert not compare(outs[1], np.array(1, np.int32)).ok
    bad = a.copy()
    bad[2, 2] = -1
    outs = execute(parse_program(_potrf(76, True)), [bad])
    got = xla.run(xla.compile(_potrf(76, True)), [bad])
    assert int(np.asarray(got[1])) == 3
    factor, info = (compare(e, np.asarray(g)) for e, g in zip(outs, got))
    assert factor.ok and UNDEFINED in factor.alternatives_used
    assert info.ok and INFO_UNDEFINED in info.alternatives_used


def test_row_major_potrf_reads_the_other_triangle(xla):
    """Without layouts XLA hands LAPACK the row-major buffer: 'L' then reads
    and writes the upper triangle as indexed (XLA's output passes, and so
    does numpy's Lᵀ; the lower factor L does not)."""
    h = hpd((3, 3), np.float32, np.random.default_rng(3))
    a = (h + h.T) / 2   # symmetric: other values in the triangle not read would make cholesky undefined (its seed)
    e, got = judged(xla, _potrf(76, False), [a])
    assert e.residual["attributes"] == {"lower": False}
    assert compare(e, got).ok
    L = np.linalg.cholesky(h.astype(np.float64))
    assert compare(e, L.T.astype(np.float32)).ok          # U = Lᵀ, A = Uᵀ·U (numpy's LAPACK)
    assert not compare(e, L.astype(np.float32)).ok        # the factor in the triangle not asked for


def test_calls_it_cannot_read_are_said():
    with pytest.raises(CannotJudge, match="uplo must be one of"):
        parse_program(_potrf(88, True))
    trsm = ('func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x3xf32>) -> (tensor<2x3xf32>) {\n'
            '  %0 = "stablehlo.custom_call"(%a, %b) {call_target_name = "lapack_strsm_ffi", backend_config = "", '
            'mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}} '
            ': (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>\n'
            '  "func.return"(%0) : (tensor<2x3xf32>) -> ()\n}\n')
    with pytest.raises(CannotJudge, match="reinterpreted, not transposed"):
        parse_program(trsm)
