"""Results the spec defines by a property (oracle/characterized.py, kind
"residual" in spec/kinds/residual.py): what the oracle states for
cholesky and triangular_solve, how a suite judges an output against it
(XLA's own outputs as the second implementation), and what the oracle says
downstream of such a result in a program."""
from __future__ import annotations

import numpy as np
import pytest

from shlo_conform.backends.base import load_backend
from shlo_conform.oracle.characterized import DOWNSTREAM, PASSED_THROUGH, RANGED_OPERAND
from shlo_conform.oracle.program import execute, parse_program
from shlo_conform.spec.expectation import Expectation
from shlo_conform.suites.compare import compare
from shlo_conform.suites.kinds import describe, kind_of
from shlo_conform.suites.kinds.residual import KNOWN, UNDEFINED

A = np.array([[4, 2, -2], [2, 10, 1], [-2, 1, 9]], np.float32)   # = L·Lᵀ, L = [[2,0,0],[1,3,0],[-1,1,2.6458]]


def run(mlir: str, *inputs) -> list[Expectation]:
    return execute(parse_program(mlir), [np.asarray(x) for x in inputs])


def chol_program(t="tensor<3x3xf32>", lower="true", tail="", returns="%0", rtypes=None):
    rtypes = rtypes or t
    return (f"func.func @main(%a: {t}) -> ({rtypes}) {{\n"
            f'  %0 = "stablehlo.cholesky"(%a) {{lower = {lower}}} : ({t}) -> {t}\n{tail}'
            f'  "func.return"({returns}) : ({rtypes}) -> ()\n}}\n')


def test_oracle_states_a_residual_expectation():
    (e,) = run(chol_program(), A)
    assert e.kind == "residual" and kind_of(e).element_wise is False
    np.testing.assert_allclose(e.array(), np.linalg.cholesky(A.astype(np.float64)), rtol=1e-6)
    assert e.array()[0, 2] == 0   # the reference's opposite triangle: zeros, as the seed's example prints
    r = e.residual
    assert r["op"] == "cholesky" and r["attributes"] == {"lower": True} and r["threshold"] == 30.0
    assert r["reference"] <= 2 and 1 < r["condition"] < 10 and "undefined" not in r
    assert Expectation.from_json(e.to_json()) == e
    assert describe(e).startswith("residual: ‖A − L·Lᴴ‖₁ / (n·‖A‖₁·ε)") and "≤ 30" in describe(e)
    how, why = kind_of(e).check(e)
    assert how is None and "no check op" in why


def test_judge_takes_any_factor_with_the_property_and_refuses_others():
    (e,) = run(chol_program(), A)
    L = np.linalg.cholesky(A.astype(np.float64))
    for factor in (L.astype(np.float32),                                        # rounded from float64
                   np.linalg.cholesky(A).astype(np.float32),                    # numpy in float32
                   (L.astype(np.float32) + np.triu(np.full((3, 3), 7, np.float32), 1))):   # junk opposite
        j = compare(e, factor)
        assert j.ok, j.detail
    wrong = compare(e, np.triu(L.T).astype(np.float32))
    assert not wrong.ok and "threshold 30" in wrong.detail and wrong.mismatch_count == 1
    assert not compare(e, L.astype(np.float64)).ok   # the declared type is checked first
    off = L.astype(np.float32)
    off[2, 1] = np.nextafter(off[2, 1], np.float32(10), dtype=np.float32)
    j = compare(e, off)
    assert j.ok and j.max_ulp >= 1   # ULP distance from the reference shown, never judged


def test_undefined_input_passes_anything_labelled():
    b = A.copy()
    b[2, 2] = -9   # not positive definite
    (e,) = run(chol_program(), b)
    assert "not positive definite" in e.residual["undefined"] and "not positive definite" in e.why
    j = compare(e, np.full((3, 3), np.nan, np.float32))
    assert j.ok and j.alternatives_used == [UNDEFINED, KNOWN.format("not met")]
    c = A.copy()
    c[0, 2] = 5   # not Hermitian: the upper triangle is never read by LAPACK
    (e,) = run(chol_program(), c)
    j = compare(e, np.linalg.cholesky(A.astype(np.float64)).astype(np.float32))
    assert j.ok and j.alternatives_used == [UNDEFINED, KNOWN.format("met")]


SELECT_TRIL = """  %i = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<3x3xi64>
  %j = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<3x3xi64>
  %m = "stablehlo.compare"(%i, %j) {comparison_direction = #stablehlo<comparison_direction GE>} : (tensor<3x3xi64>, tensor<3x3xi64>) -> tensor<3x3xi1>
  %z = "stablehlo.constant"() {value = dense<0.0> : tensor<3x3xf32>} : () -> tensor<3x3xf32>
  %1 = "stablehlo.select"(%m, %0, %z) : (tensor<3x3xi1>, tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  %2 = "stablehlo.multiply"(%0, %0) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  %3 = "stablehlo.add"(%2, %z) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  %4 = "stablehlo.transpose"(%0) {permutation = array<i64: 1, 0>} : (tensor<3x3xf32>) -> tensor<3x3xf32>
"""


def test_downstream_keeps_the_property_where_it_passes_through_and_says_any_value_elsewhere():
    """JAX's tail after its LAPACK call (select with a tril mask) keeps the
    property; arithmetic on the factor, and anything after it, is "any
    value", labelled; a transpose of a real factor is the factor of the
    other triangle (`RESTATE`: jax.scipy.linalg.cholesky(lower=False))."""
    t = "tensor<3x3xf32>"
    prog = chol_program(tail=SELECT_TRIL, returns="%1, %2, %3, %4", rtypes=", ".join([t] * 4))
    kept, product, after, moved = run(prog, A)
    assert kept.kind == "residual" and PASSED_THROUGH.format(op="cholesky", by="select") in kept.why
    for e in (product, after):
        assert e.kind == "exact" and e.alternatives[-1].label == DOWNSTREAM
        assert e.impl_defined == list(range(9))
    L = np.linalg.cholesky(A.astype(np.float64)).astype(np.float32)
    assert compare(kept, L).ok and not compare(kept, np.triu(L.T)).ok   # judged by the criterion, after select
    j = compare(product, np.full((3, 3), 123, np.float32))
    assert j.ok and DOWNSTREAM in j.alternatives_used
    assert moved.kind == "residual" and moved.residual["attributes"] == {"lower": False}
    assert "transpose of cholesky's result" in moved.why
    assert compare(moved, np.ascontiguousarray(L.T)).ok and not compare(moved, L).ok


def test_transpose_restates_only_what_it_can_and_follows_the_rest():
    """A complex factor transposed is no factor (conj(Lᵀ) would be), and a
    transpose moving batch dimensions mixes matrices: neither is restated as
    a factor — but each only moves the factor's elements, so the result is
    judged as the factor moved back (oracle/chains.py, a `view`): the
    transposed reference passes, an untransposed one fails."""
    c = A.astype(np.complex64)
    tc = "tensor<3x3xcomplex<f32>>"
    tail = f'  %1 = "stablehlo.transpose"(%0) {{permutation = array<i64: 1, 0>}} : ({tc}) -> {tc}\n'
    (e,) = run(chol_program(t=tc, tail=tail, returns="%1"), c)
    assert e.kind == "residual" and e.residual["op"] == "cholesky" and e.residual["view"]
    L = np.linalg.cholesky(A.astype(np.complex128)).astype(np.complex64)
    assert compare(e, np.ascontiguousarray(L.T)).ok and not compare(e, L).ok
    tb = "tensor<2x3x3xf32>"
    tail = f'  %1 = "stablehlo.transpose"(%0) {{permutation = array<i64: 1, 0, 2>}} : ({tb}) -> (tensor<3x2x3xf32>)\n'
    (e,) = run(chol_program(t=tb, tail=tail, returns="%1", rtypes="tensor<3x2x3xf32>"), np.stack([A, A]))
    L = np.linalg.cholesky(A.astype(np.float64)).astype(np.float32)
    assert e.kind == "residual" and compare(e, np.ascontiguousarray(np.swapaxes(np.stack([L, L]), 0, 1))).ok
    assert not compare(e, np.stack([L, 2 * L], axis=1)).ok


def test_approximate_operand_is_said():
    """cholesky of exp(x) (an "ulp" value: approximate upstream) is judged
    against the oracle's correctly rounded exp, and says so."""
    x = np.array([[3, -2, -3], [-2, 3, -2], [-3, -2, 3]], np.float32)
    t = "tensor<3x3xf32>"
    prog = (f"func.func @main(%x: {t}) -> ({t}) {{\n"
            f'  %e = "stablehlo.exponential"(%x) : ({t}) -> {t}\n'
            f'  %0 = "stablehlo.cholesky"(%e) {{lower = true}} : ({t}) -> {t}\n'
            f'  "func.return"(%0) : ({t}) -> ()\n}}\n')
    (e,) = run(prog, x)
    assert e.kind == "residual" and RANGED_OPERAND in e.why


def test_triangular_solve_expectation_and_judge():
    a = np.array([[2, 0, 0], [1, 4, 0], [3, 5, 6]], np.float32) + np.triu(np.full((3, 3), 9, np.float32), 1)
    b = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
    t = "tensor<3x3xf32>, tensor<3x2xf32>"
    prog = ("func.func @main(%a: tensor<3x3xf32>, %b: tensor<3x2xf32>) -> (tensor<3x2xf32>) {\n"
            '  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false, '
            f'transpose_a = #stablehlo<transpose TRANSPOSE>}} : ({t}) -> tensor<3x2xf32>\n'
            '  "func.return"(%0) : (tensor<3x2xf32>) -> ()\n}\n')
    (e,) = run(prog, a, b)
    T = np.tril(a).astype(np.float64).T
    x = np.linalg.solve(T, b.astype(np.float64))
    np.testing.assert_allclose(e.array(), x, rtol=1e-6)
    assert compare(e, x.astype(np.float32)).ok
    assert not compare(e, np.linalg.solve(np.tril(a).astype(np.float64), b).astype(np.float32)).ok   # not transposed
    assert not compare(e, np.linalg.solve(a.astype(np.float64).T, b).astype(np.float32)).ok   # the other triangle read


# --------------------------------------------------------------------------
# XLA as the second implementation
# --------------------------------------------------------------------------

@pytest.mark.parametrize("et, np_t", [("f32", np.float32), ("f64", np.float64), ("complex<f32>", np.complex64)])
def test_xla_results_meet_the_oracles_expectations(et, np_t):
    xla = load_backend("xla")
    rng = np.random.default_rng(0)
    g = rng.standard_normal((5, 5)) + (1j * rng.standard_normal((5, 5)) if "complex" in et else 0)
    a = (g @ np.conj(g.T) + 5 * np.eye(5)).astype(np_t)
    a = (np.tril(a) + np.conj(np.tril(a, -1).T)).astype(np_t)
    a[np.diag_indices(5)] = np.real(np.diag(a))
    for lower in ("true", "false"):
        prog = chol_program(f"tensor<5x5x{et}>", lower)
        (e,) = run(prog, a)
        (got,) = xla.run(xla.compile(prog), [a])
        j = compare(e, np.asarray(got))
        assert j.ok, j.detail


def test_the_distance_from_the_reference_is_no_accuracy_figure():
    """A correct factor may sit any number of ULP from the oracle's reference
    (cholesky/f64/c68fd120f487: 8.2e18 ULP, and it passes); the per-op
    tables summarise ULP as accuracy, so a residual case contributes none
    (kind.ulp_measures), while the comparison itself still shows it."""
    from shlo_conform.pipeline.judging import check_outputs
    from shlo_conform.suites.records import Case
    (e,) = run(chol_program(), A)
    factor = np.linalg.cholesky(A).astype(np.float32)
    case = Case(id="cholesky/f32/test", op="cholesky", dtype="f32", kind="value", mlir=chol_program(),
                inputs=[], expected=[e])
    why: dict = {}
    ok, detail, max_ulp, labels = check_outputs(case, [factor], why)
    assert ok and max_ulp is None and why["meaningful_ulp"] is None, detail
    assert compare(e, factor).max_ulp is not None   # shown where the case is examined


CONCAT = """  %c = "stablehlo.constant"() {value = dense<7.0> : tensor<1x3xf32>} : () -> tensor<1x3xf32>
  %s = "stablehlo.reduce"(%a, %zero) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %r = "stablehlo.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 0>} : (tensor<3x3xf32>, tensor<f32>) -> tensor<3xf32>
  %sr = "stablehlo.reshape"(%s) : (tensor<3xf32>) -> tensor<1x3xf32>
  %5 = "stablehlo.concatenate"(%1, %c) {dimension = 0 : i64} : (tensor<3x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
  %6 = "stablehlo.concatenate"(%0, %c) {dimension = 0 : i64} : (tensor<3x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
  %7 = "stablehlo.concatenate"(%1, %sr) {dimension = 0 : i64} : (tensor<3x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
"""


def test_values_put_in_beside_a_factor_are_judged_where_exact():
    """A factor fixed by JAX's select, concatenated with a constant: the
    constant's elements are the program's, judged bit for bit (the record
    `fixed`, oracle/chains.py `moved`); beside the bare factor (whose upper
    triangle the criterion does not read) or beside an approximate value (a
    sum), they are not compared — the factor still is."""
    t4 = "tensor<4x3xf32>"
    zero = '  %zero = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>\n'
    prog = chol_program(tail=zero + SELECT_TRIL + CONCAT, returns="%5, %6, %7", rtypes=", ".join([t4] * 3))
    fixed_const, bare, beside_sum = run(prog, A)
    L = np.linalg.cholesky(A.astype(np.float64)).astype(np.float32)
    good = np.concatenate([L, np.full((1, 3), 7, np.float32)])
    wrong_row = np.concatenate([L, np.full((1, 3), -7, np.float32)])
    for e in (fixed_const, bare, beside_sum):
        assert e.kind == "residual" and compare(e, good).ok and not compare(e, 2 * good).ok
    assert fixed_const.residual.get("fixed") and not compare(fixed_const, wrong_row).ok
    assert not bare.residual.get("fixed") and compare(bare, wrong_row).ok
    assert not beside_sum.residual.get("fixed") and compare(beside_sum, wrong_row).ok
