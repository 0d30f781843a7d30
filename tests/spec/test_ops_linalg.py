"""cholesky and triangular_solve: constraints on hand-made instances, and
their property criteria (spec/ops/cholesky.py, spec/ops/triangular_solve.py)
against independent truth — exact factors and solutions, residuals
recomputed with mpmath at 1000 bits (exact for these sizes), results
perturbed just past the bound, and the classic wrong implementations.

The seed's Examples run in tests/oracle/test_spec_examples.py."""
from __future__ import annotations

import itertools

import mpmath
import numpy as np
import pytest

from shlo_conform.spec.dsl import Characterized
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.ops import cholesky as chol_mod
from shlo_conform.spec.ops import triangular_solve as tri_mod
from shlo_conform.spec.types import TensorType, element_type

CHOL = OPS["cholesky"]
TRI = OPS["triangular_solve"]
TRANSPOSES = ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT")


def chol(shape, et="f32", lower=True, result=None):
    t = TensorType(tuple(shape), element_type(et))
    return CHOL.instance({"a": t}, {"lower": lower}, {"result": t if result is None else result})


def tri(a_shape, b_shape, et="f32", left_side=True, lower=True, unit_diagonal=False, transpose_a="NO_TRANSPOSE",
        result=None, b_et=None):
    ta = TensorType(tuple(a_shape), element_type(et))
    tb = TensorType(tuple(b_shape), element_type(b_et or et))
    attrs = dict(left_side=left_side, lower=lower, unit_diagonal=unit_diagonal, transpose_a=transpose_a)
    return TRI.instance({"a": ta, "b": tb}, attrs, {"result": tb if result is None else result})


# --------------------------------------------------------------------------
# Constraints: each can be broken alone, and the seed's example is valid
# --------------------------------------------------------------------------

def test_cholesky_constraints_one_at_a_time():
    assert CHOL.violated(chol((3, 3))) == []
    assert CHOL.violated(chol((2, 4, 4), "complex<f64>", lower=False)) == []
    assert CHOL.violated(chol((3, 3), result=TensorType((3, 3), element_type("f64")))) == ["cholesky_c1"]
    assert CHOL.violated(chol((3, 3), result=TensorType((3, 4), element_type("f32")))) == ["cholesky_c1"]
    assert CHOL.violated(chol((3,))) == ["cholesky_c2"]
    assert CHOL.violated(chol(())) == ["cholesky_c2"]
    assert CHOL.violated(chol((3, 4))) == ["cholesky_c3"]
    assert CHOL.violated(chol((2, 3, 4))) == ["cholesky_c3"]
    assert CHOL.infer(chol((2, 3, 3), "bf16"))["result"] == TensorType((2, 3, 3), element_type("bf16"))


def test_triangular_solve_constraints_one_at_a_time():
    assert TRI.violated(tri((3, 3), (3, 2))) == []
    assert TRI.violated(tri((3, 3), (2, 3), left_side=False)) == []
    assert TRI.violated(tri((2, 3, 3), (2, 3, 5), "complex<f32>", transpose_a="ADJOINT")) == []
    assert TRI.violated(tri((3, 3), (3, 2), b_et="f64", result=TensorType((3, 2), element_type("f64")))) == \
        ["triangular_solve_c1"]
    assert TRI.violated(tri((3,), (3,))) == ["triangular_solve_c2"]
    assert TRI.violated(tri((3, 3), (3, 2, 1))) == ["triangular_solve_c2"]   # R = rank(a) reads b as far as it goes
    assert TRI.violated(tri((3, 3), (2, 2))) == ["triangular_solve_c3"]
    assert TRI.violated(tri((3, 3), (3, 2), left_side=False)) == ["triangular_solve_c3"]   # b's last dim is 2
    assert TRI.violated(tri((2, 3, 3), (4, 3, 2))) == ["triangular_solve_c3"]              # batch dims differ
    assert TRI.violated(tri((3, 4), (3, 2))) == ["triangular_solve_c3"]                    # a not square
    assert TRI.violated(tri((3, 3), (3, 2), result=TensorType((3, 3), element_type("f32")))) == \
        ["triangular_solve_c4"]
    assert TRI.infer(tri((3, 3), (3, 2)))["result"] == TensorType((3, 2), element_type("f32"))


# --------------------------------------------------------------------------
# Independent truth: residual ratios with mpmath at 1000 bits, plain loops
# --------------------------------------------------------------------------

def _mp(x):
    return mpmath.mpc(float(x.real), float(x.imag)) if np.iscomplexobj(x) else mpmath.mpf(float(x))


def _norm1(m):
    """‖M‖₁ of a list-of-lists matrix of mpmath numbers."""
    if not m or not m[0]:
        return mpmath.mpf(0)
    return max(sum(abs(m[i][j]) for i in range(len(m))) for j in range(len(m[0])))


def true_cholesky_ratio(a, result, lower, et):
    """‖A − L·Lᴴ‖₁ / (n·‖A‖₁·ε) of one matrix, by the definition, at 1000 bits."""
    u = mpmath.mpf(2) ** -element_type(et).format.precision if not element_type(et).is_complex else \
        mpmath.mpf(2) ** -element_type(et).component.format.precision
    n = a.shape[0]
    with mpmath.workprec(1000):
        def A(i, j):
            if i == j:
                return mpmath.re(_mp(a[i, i]))
            if (i > j) == lower:
                return _mp(a[i, j])
            return mpmath.conj(_mp(a[j, i]))
        if lower:
            L = [[_mp(result[i, j]) if j <= i else 0 for j in range(n)] for i in range(n)]
        else:   # L = Uᴴ
            L = [[mpmath.conj(_mp(result[j, i])) if j <= i else 0 for j in range(n)] for i in range(n)]
        R = [[sum(L[i][k] * mpmath.conj(L[j][k]) for k in range(n)) - A(i, j) for j in range(n)] for i in range(n)]
        return _norm1(R) / (n * _norm1([[A(i, j) for j in range(n)] for i in range(n)]) * u)


def true_solve_ratio(inst, a, b, x):
    """max over right-hand sides of ‖op(A)·x − b‖₁ / (n·‖op(A)‖₁·‖x‖₁·ε), at 1000 bits, plain loops."""
    et = inst.b.element_type
    c = et.component if et.is_complex else et
    u = mpmath.mpf(2) ** -c.format.precision
    n = a.shape[0]
    with mpmath.workprec(1000):
        def tri_a(i, j):
            if i == j and inst.unit_diagonal:
                return mpmath.mpf(1)
            if (i >= j) if inst.lower else (i <= j):
                return _mp(a[i, j])
            return mpmath.mpf(0)
        def op_a(i, j):
            if inst.transpose_a == "NO_TRANSPOSE":
                return tri_a(i, j)
            if inst.transpose_a == "TRANSPOSE":
                return tri_a(j, i)
            return mpmath.conj(tri_a(j, i))
        T = [[op_a(i, j) if inst.left_side else op_a(j, i) for j in range(n)] for i in range(n)]
        X = x if inst.left_side else x.T
        B = b if inst.left_side else b.T
        worst = mpmath.mpf(0)
        for col in range(X.shape[1]):
            xs = [_mp(X[i, col]) for i in range(n)]
            r = [sum(T[i][k] * xs[k] for k in range(n)) - _mp(B[i, col]) for i in range(n)]
            num = sum(abs(v) for v in r)
            den = n * _norm1(T) * sum(abs(v) for v in xs) * u
            worst = max(worst, num / den if den else (0 if num == 0 else mpmath.inf))
        return worst


def exact_factor(a, lower, et):
    """The Cholesky factor (in the triangle `lower` names, zeros elsewhere) at 1000 bits, rounded to nearest."""
    n = a.shape[0]
    with mpmath.workprec(1000):
        def H(i, j):   # the Hermitian matrix of the triangle read
            if i == j:
                return mpmath.re(_mp(a[i, i]))
            return _mp(a[i, j]) if (i > j) == lower else mpmath.conj(_mp(a[j, i]))
        L = [[mpmath.mpf(0)] * n for _ in range(n)]
        for j in range(n):
            L[j][j] = mpmath.sqrt(H(j, j) - sum(abs(L[j][k]) ** 2 for k in range(j)))
            for i in range(j + 1, n):
                L[i][j] = (H(i, j) - sum(L[i][k] * mpmath.conj(L[j][k]) for k in range(j))) / L[j][j]
        F = L if lower else [[mpmath.conj(L[j][i]) for j in range(n)] for i in range(n)]
        cplx = np.iscomplexobj(a)
        out = np.array([[complex(F[i][j]) if cplx else float(F[i][j]) for j in range(n)] for i in range(n)])
    return out.astype(element_type(et).numpy)


def exact_solution(inst, a, b):
    """op(A)·x = b (or x·op(A) = b) solved at 1000 bits, rounded to nearest."""
    n = a.shape[0]
    with mpmath.workprec(1000):
        def tri_a(i, j):
            if i == j and inst.unit_diagonal:
                return mpmath.mpf(1)
            return _mp(a[i, j]) if ((i >= j) if inst.lower else (i <= j)) else mpmath.mpf(0)
        op = {"NO_TRANSPOSE": lambda i, j: tri_a(i, j), "TRANSPOSE": lambda i, j: tri_a(j, i),
              "ADJOINT": lambda i, j: mpmath.conj(tri_a(j, i))}[inst.transpose_a]
        T = mpmath.matrix([[op(i, j) if inst.left_side else op(j, i) for j in range(n)] for i in range(n)])
        B = b if inst.left_side else b.T
        cols = [mpmath.lu_solve(T, mpmath.matrix([_mp(B[i, j]) for i in range(n)])) for j in range(B.shape[1])]
        cplx = np.iscomplexobj(b)
        out = np.array([[complex(cols[j][i]) if cplx else float(cols[j][i]) for j in range(B.shape[1])]
                        for i in range(n)])
    out = out if inst.left_side else out.T
    return out.astype(inst.b.element_type.numpy)


def assert_enclosed(m, truth: float, et: str):
    """The criterion's enclosure holds the true ratio, and is as narrow as
    the module docstring states: below 10⁻⁸ of the threshold for formats of
    at most 24 bits (float64 working format), 10⁻³ for f64 (long double)."""
    width = 1e-8 if "f64" not in et else 1e-3
    assert m.low <= truth * (1 + 1e-12) and truth <= m.high * (1 + 1e-12), (m.low, truth, m.high)
    assert m.high - m.low <= width * max(m.threshold, truth), (m.low, m.high)


def hpd(n, et, rng, lower=True):
    """A Hermitian positive-definite matrix of `et` (the generators' dominant matrices), both triangles."""
    return chol_mod.dominant_hermitian(n, element_type(et), rng).astype(element_type(et).numpy)


def triangular(inst, rng, plan=None):
    n = int(inst.a.shape[-1])
    return tri_mod._triangular(n, inst, inst.a.element_type, rng, plan or chol_mod.Plan()).astype(
        inst.a.element_type.numpy)


def rhs(inst, rng):
    return tri_mod.operand_values(inst, "b", 0, inst.b, rng).astype(inst.b.element_type.numpy)


# --------------------------------------------------------------------------
# cholesky's criterion
# --------------------------------------------------------------------------

def test_cholesky_exact_integer_factor_has_no_residual():
    """A = L·Lᵀ for an integer L: L itself is the exact factor, residual 0;
    its transpose in the other triangle (the classic "returned U for L")
    and a negated column fail."""
    L = np.array([[2, 0, 0], [1, 3, 0], [-2, 1, 1]], np.float32)
    a = L @ L.T
    m = CHOL.semantics.criterion(chol((3, 3)), [a], L)
    assert m.ok and m.value == 0.0 and m.threshold == 30.0
    assert m.scored.tolist() == np.tril(np.ones((3, 3), bool)).tolist()
    assert not CHOL.semantics.criterion(chol((3, 3)), [a], L.T.copy()).ok         # U where L is asked
    assert CHOL.semantics.criterion(chol((3, 3), lower=False), [a], L.T.copy()).ok  # ... and right for upper
    neg = L * np.array([1, -1, 1], np.float32)                                    # L·diag(1, -1, 1): L·Lᵀ kept
    got = CHOL.semantics.criterion(chol((3, 3)), [a], neg)
    assert not got.ok and got.value == 0.0 and "real part ≤ 0" in got.detail


def test_cholesky_other_triangle_is_never_scored():
    L = np.array([[2, 0, 0], [1, 3, 0], [-2, 1, 1]], np.float32)
    junk = L + np.triu(np.full((3, 3), np.nan, np.float32), 1)
    assert CHOL.semantics.criterion(chol((3, 3)), [L @ L.T], junk).ok


@pytest.mark.parametrize("et, lower", [("f32", True), ("f32", False), ("f64", True), ("complex<f32>", False),
                                       ("complex<f64>", True), ("bf16", True), ("f16", False)])
def test_cholesky_rounded_exact_factor_passes_and_matches_truth(et, lower):
    """The exact factor rounded to nearest (mpmath, 1000 bits) passes; the
    criterion's ratio is the true one (1000 bits) within its stated
    enclosure, and the true ratio of the rounded factor is at most ≈2."""
    rng = np.random.default_rng(7)
    for n in (1, 3, 6):
        a = hpd(n, et, rng)
        x = exact_factor(a, lower, et)
        inst = chol((n, n), et, lower)
        m = CHOL.semantics.criterion(inst, [a], x)
        truth = float(true_cholesky_ratio(a, x, lower, et))
        assert m.ok and truth <= 2.5
        assert_enclosed(m, truth, et)


@pytest.mark.parametrize("et", ["f32", "f64", "complex<f32>", "complex<f64>"])
def test_cholesky_enclosure_holds_the_true_ratio_on_wrong_results(et):
    """On results far from a factor (random perturbations of many sizes)
    the computed ratio agrees with the 1000-bit one to the precision the
    enclosure states (float64 for ≤ 24-bit formats, long double for f64)."""
    rng = np.random.default_rng(3)
    for n in (2, 5, 8):
        a = hpd(n, et, rng)
        x = exact_factor(a, True, et)
        for scale in (1e-7, 1e-4, 1e-1):
            noise = rng.standard_normal((n, n)) * scale
            y = (x.astype(np.complex128 if "complex" in et else np.float64) * (1 + noise)).astype(x.dtype)
            m = CHOL.semantics.criterion(chol((n, n), et), [a], y)
            assert_enclosed(m, float(true_cholesky_ratio(a, y, True, et)), et)


def _just_past(check, x, index):
    """(last passing value, first failing value) of element `index` of `x`
    moved up from its value: bisection over the format's ordinals."""
    dt = x.dtype
    as_int = {np.dtype(np.float32): np.int32, np.dtype(np.float64): np.int64}[dt]
    lo = int(np.array(x[index], dt).view(as_int))
    hi = lo + 1
    while check_at(check, x, index, hi, dt, as_int):
        hi = lo + 2 * (hi - lo)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if check_at(check, x, index, mid, dt, as_int):
            lo = mid
        else:
            hi = mid
    return with_value(x, index, lo, dt, as_int), with_value(x, index, hi, dt, as_int)


def with_value(x, index, ordinal, dt, as_int):
    y = x.copy()
    y[index] = np.array(ordinal, as_int).view(dt)
    return y


def check_at(check, x, index, ordinal, dt, as_int):
    return check(with_value(x, index, ordinal, dt, as_int)).ok


@pytest.mark.parametrize("et", ["f32", "f64"])
def test_cholesky_perturbed_just_past_the_bound_fails(et):
    """Moving one element of the factor up, ULP by ULP: the last result the
    criterion accepts has a true ratio at most the threshold, the first it
    refuses one above it (truth at 1000 bits)."""
    rng = np.random.default_rng(11)
    a = hpd(4, et, rng)
    inst = chol((4, 4), et)
    x = exact_factor(a, True, et)
    ok, bad = _just_past(lambda y: CHOL.semantics.criterion(inst, [a], y), x, (3, 1))
    thr = CHOL.semantics.criterion(inst, [a], x).threshold
    assert true_cholesky_ratio(a, ok, True, et) <= thr < true_cholesky_ratio(a, bad, True, et)


def test_cholesky_classic_wrong_results_fail():
    rng = np.random.default_rng(5)
    a = hpd(4, "f32", rng)
    x = exact_factor(a, True, "f32")
    inst = chol((4, 4))
    crit = CHOL.semantics.criterion
    assert crit(inst, [a], x).ok
    assert not crit(inst, [a], np.triu(x.T)).ok                       # the factor in the other triangle
    assert not crit(inst, [a], np.diag(np.sqrt(np.diag(a)))).ok      # the off-diagonal part ignored
    assert not crit(inst, [a], (x * np.float32(1 + 1e-3)).astype(np.float32)).ok   # 1e-3 off: ≫ 30·n·ε
    # complex: L·Lᵀ = A (transpose for adjoint) gives conj(L)
    ac = hpd(4, "complex<f32>", rng)
    xc = exact_factor(ac, True, "complex<f32>")
    assert crit(chol((4, 4), "complex<f32>"), [ac], xc).ok
    assert not crit(chol((4, 4), "complex<f32>"), [ac], np.conj(xc)).ok


def _naive_cholesky(a: np.ndarray, reverse: bool) -> np.ndarray:
    """Cholesky by columns in the matrix's own format (numpy rounds every
    operation to it), the inner products summed forwards or backwards: two
    evaluation orders a correct implementation may use."""
    n = a.shape[0]
    L = np.zeros_like(a)
    order = (lambda k: range(k - 1, -1, -1)) if reverse else range
    for j in range(n):
        d = a[j, j]
        for k in order(j):
            d = d - L[j, k] * L[j, k]
        L[j, j] = np.sqrt(d)
        for i in range(j + 1, n):
            s = a[i, j]
            for k in order(j):
                s = s - L[i, k] * L[j, k]
            L[i, j] = s / L[j, j]
    return L


@pytest.mark.parametrize("et, kappa", [("f32", 1e6), ("f16", 1e2), ("f64", 1e12)])
def test_cholesky_working_precision_implementations_pass(et, kappa):
    """Not too tight: factors computed in the format itself, in two orders,
    on ill-conditioned matrices (graded, κ₂ near `kappa`) and
    well-conditioned ones, pass — with their true ratio (1000 bits) well
    inside the threshold, as Higham's Thm 10.3 says (≤ γ(n+1)/ε ≈ n + 1)."""
    rng = np.random.default_rng(31)
    t = element_type(et)
    graded = chol_mod.graded_hermitian(6, t, rng, kappa)
    assert CHOL.semantics.condition(chol((6, 6), et), graded) > kappa / 10
    for h in (graded, chol_mod.dominant_hermitian(6, t, rng)):
        a = h.astype(t.numpy)
        for reverse in (False, True):
            x = _naive_cholesky(a, reverse)
            m = CHOL.semantics.criterion(chol((6, 6), et), [a], x)
            truth = float(true_cholesky_ratio(a, x, True, et))
            assert m.ok and truth <= 6 + 1, (truth, m.detail)


def test_cholesky_nan_in_the_triangle_read_fails():
    L = np.array([[2, 0], [1, 3]], np.float32)
    y = L.copy()
    y[1, 0] = np.nan
    m = CHOL.semantics.criterion(chol((2, 2)), [L @ L.T], y)
    assert not m.ok and "NaN" in m.detail


def test_cholesky_batches_are_judged_matrix_by_matrix():
    rng = np.random.default_rng(2)
    a = np.stack([hpd(3, "f64", rng) for _ in range(6)]).reshape(2, 3, 3, 3)
    x = np.stack([exact_factor(m, False, "f64") for m in a.reshape(6, 3, 3)]).reshape(2, 3, 3, 3)
    inst = chol((2, 3, 3, 3), "f64", lower=False)
    assert CHOL.semantics.criterion(inst, [a], x).ok
    y = x.copy()
    y[1, 2] = np.triu(y[1, 2].T)   # one matrix of six wrong
    m = CHOL.semantics.criterion(inst, [a], y)
    assert not m.ok and "batch index [1, 2]" in m.detail


def test_cholesky_reference_and_undefined():
    """The oracle's reference is the rounded exact factor (zeros opposite);
    non-Hermitian, indefinite and non-finite inputs are undefined."""
    rng = np.random.default_rng(4)
    a = hpd(5, "f32", rng)
    inst = chol((5, 5), lower=False)
    assert CHOL.semantics.undefined(inst, a) is None
    np.testing.assert_array_equal(CHOL.semantics.reference(inst, a), exact_factor(a, False, "f32"))
    b = a.copy()
    b[0, 3] += 1
    assert "not Hermitian" in CHOL.semantics.undefined(inst, b)
    c = a.copy()
    c[4, 4] = -c[4, 4]
    assert "not positive definite" in CHOL.semantics.undefined(inst, c)
    assert np.isnan(CHOL.semantics.reference(inst, c)).all()
    d = a.copy()
    d[2, 2] = np.inf
    assert "NaN or ±inf" in CHOL.semantics.undefined(inst, d)


def test_cholesky_large_matrix_takes_the_working_format():
    """Past the mpmath budget the reference is factored in the working format: it still passes."""
    rng = np.random.default_rng(9)
    a = hpd(90, "f32", rng)
    inst = chol((90, 90))
    assert chol_mod._operations(inst) > chol_mod.MP_LIMIT
    x = CHOL.semantics.reference(inst, a)
    m = CHOL.semantics.criterion(inst, [a], x)
    assert m.ok and m.value < 2 and m.threshold == 2 * chol_mod.gamma(93, 2.0 ** -24) / 2.0 ** -24


def test_thresholds():
    """30 (LAPACK) where n·ε is small; the rigorous worst case above it; +inf where no bound holds."""
    f32, f8 = element_type("f32"), element_type("f8E5M2")
    assert chol_mod.threshold(4, f32) == 30.0 and tri_mod.threshold(4, f32) == 30.0
    assert chol_mod.threshold(20, f32) == pytest.approx(2 * 23, rel=1e-5)
    assert chol_mod.threshold(7, f8) == float("inf") and tri_mod.threshold(6, f8) == float("inf")
    assert 30 < chol_mod.threshold(4, f8) < float("inf")


# --------------------------------------------------------------------------
# triangular_solve's criterion
# --------------------------------------------------------------------------

COMBOS = list(itertools.product((True, False), (True, False), (False, True), TRANSPOSES))


@pytest.mark.parametrize("et", ["f32", "complex<f32>", "f64"])
@pytest.mark.parametrize("left_side, lower, unit, transpose", COMBOS)
def test_solve_rounded_exact_solution_passes(et, left_side, lower, unit, transpose):
    """Every attribute combination: the exact solution rounded passes, and
    the criterion's ratio is the true one (1000 bits)."""
    rng = np.random.default_rng(hash((et, left_side, lower, unit, transpose)) % 2 ** 32)
    n, k = 4, 3
    inst = tri((n, n), (n, k) if left_side else (k, n), et, left_side, lower, unit, transpose)
    a, b = triangular(inst, rng), rhs(inst, rng)
    x = exact_solution(inst, a, b)
    m = TRI.semantics.criterion(inst, [a, b], x)
    truth = float(true_solve_ratio(inst, a, b, x))
    assert m.ok and truth <= 1.0
    assert_enclosed(m, truth, et)


@pytest.mark.parametrize("left_side, lower, transpose", list(itertools.product((True, False), (True, False),
                                                                              TRANSPOSES)))
def test_solve_classic_wrong_results_fail(left_side, lower, transpose):
    """On complex matrices whose other triangle holds other values: reading
    the other triangle, solving the transposed system, solving on the other
    side (b square), and ADJOINT read as TRANSPOSE (or the reverse) all fail."""
    rng = np.random.default_rng(21)
    et, n = "complex<f32>", 4
    inst = tri((n, n), (n, n), et, left_side, lower, False, transpose)
    a, b = triangular(inst, rng), rhs(inst, rng)
    crit = TRI.semantics.criterion
    assert crit(inst, [a, b], exact_solution(inst, a, b)).ok
    others = {"other triangle": dict(lower=not lower), "other side": dict(left_side=not left_side)}
    if transpose == "NO_TRANSPOSE":
        others["transposed"] = dict(transpose_a="TRANSPOSE")
    else:
        others["not transposed"] = dict(transpose_a="NO_TRANSPOSE")
        others["ADJOINT/TRANSPOSE swapped"] = dict(transpose_a="TRANSPOSE" if transpose == "ADJOINT" else "ADJOINT")
    for what, change in others.items():
        attrs = dict(left_side=left_side, lower=lower, unit_diagonal=False, transpose_a=transpose)
        attrs.update(change)
        x = exact_solution(tri((n, n), (n, n), et, **attrs), a, b)   # the other system, solved exactly
        assert np.isfinite(x).all()
        m = crit(inst, [a, b], x)
        assert not m.ok, f"{what} passed: {m.detail}"


def test_solve_ignoring_unit_diagonal_fails_where_it_can_be_seen():
    """unit_diagonal with a stored diagonal other than 1 is undefined by the
    seed (no value case can show the flag ignored); the criterion there
    reads the diagonal as 1 (LAPACK's DIAG = 'U'), so a solver that reads
    the stored diagonal fails it — reported as a survey's known behaviour."""
    rng = np.random.default_rng(8)
    inst = tri((4, 4), (4, 2), "f32", unit_diagonal=True)
    a = triangular(inst, rng, chol_mod.Plan("unit diagonal not 1"))
    b = rhs(inst, rng)
    assert "unit_diagonal" in TRI.semantics.undefined(inst, a, b)
    reads_diagonal = exact_solution(tri((4, 4), (4, 2), "f32", unit_diagonal=False), a, b)
    assert TRI.semantics.criterion(inst, [a, b], exact_solution(inst, a, b)).ok
    assert not TRI.semantics.criterion(inst, [a, b], reads_diagonal).ok


@pytest.mark.parametrize("left_side", [True, False])
def test_solve_perturbed_just_past_the_bound_fails(left_side):
    rng = np.random.default_rng(13)
    inst = tri((4, 4), (4, 3) if left_side else (3, 4), "f32", left_side=left_side, transpose_a="TRANSPOSE")
    a, b = triangular(inst, rng), rhs(inst, rng)
    x = exact_solution(inst, a, b)
    ok, bad = _just_past(lambda y: TRI.semantics.criterion(inst, [a, b], y), x, (1, 2))
    thr = TRI.semantics.criterion(inst, [a, b], x).threshold
    assert true_solve_ratio(inst, a, b, ok) <= thr < true_solve_ratio(inst, a, b, bad)


def test_solve_ill_conditioned_systems_pass_when_backward_stable():
    """κ ≈ 1e5 (f32): substitution in float32 itself — numpy, row by row,
    as a naive implementation writes it — passes; the criterion does not
    grow with the condition number."""
    rng = np.random.default_rng(17)
    inst = tri((6, 6), (6, 2), "f32")
    a = triangular(inst, rng, chol_mod.Plan("graded", 1e5))
    b = rhs(inst, rng)
    assert TRI.semantics.condition(inst, a, b) > 1e4
    T = np.tril(a)
    x = np.zeros((6, 2), np.float32)
    for i in range(6):
        x[i] = (b[i] - T[i, :i] @ x[:i]) / T[i, i]
    m = TRI.semantics.criterion(inst, [a, b], x)
    assert m.ok and m.value < 2


def test_solve_undefined_and_reference():
    rng = np.random.default_rng(6)
    inst = tri((3, 3), (3, 2), "f64", lower=False, transpose_a="ADJOINT")
    a, b = triangular(inst, rng), rhs(inst, rng)
    assert TRI.semantics.undefined(inst, a, b) is None
    np.testing.assert_array_equal(TRI.semantics.reference(inst, a, b), exact_solution(inst, a, b))
    s = a.copy()
    s[1, 1] = 0
    assert "singular" in TRI.semantics.undefined(inst, s, b)
    assert np.isnan(TRI.semantics.reference(inst, s, b)).all()
    n = a.copy()
    n[2, 0] = np.nan   # the triangle not read: still defined
    assert TRI.semantics.undefined(inst, n, b) is None
    n[0, 2] = np.nan   # read
    assert "NaN" in TRI.semantics.undefined(inst, n, b)
    big = tri((2, 2), (2, 1), "f16")
    assert "exceeds" in TRI.semantics.undefined(big, np.array([[2 ** -14, 0], [1, 1]], np.float16),
                                                np.array([[60000], [1]], np.float16))


def test_empty_systems_pass():
    inst = tri((0, 0), (0, 3), "f32")
    assert TRI.semantics.criterion(inst, [np.zeros((0, 0), np.float32), np.zeros((0, 3), np.float32)],
                                   np.zeros((0, 3), np.float32)).ok
    inst = chol((2, 0, 0), "f64")
    assert CHOL.semantics.criterion(inst, [np.zeros((2, 0, 0))], np.zeros((2, 0, 0))).ok


def test_record_round_trips_through_recall():
    rng = np.random.default_rng(1)
    inst = tri((2, 3, 3), (2, 3, 2), "complex<f64>", left_side=True, lower=False, transpose_a="ADJOINT")
    a = tri_mod.operand_values(inst, "a", 0, inst.a, rng).astype(np.complex128)
    b = rhs(inst, rng)
    rec = Characterized.record(inst, [a, b])
    again, arrays = Characterized.recall(rec, inst.result)
    assert again.attributes == inst.attributes and again.operands == inst.operands
    np.testing.assert_array_equal(arrays[0], a)
    np.testing.assert_array_equal(arrays[1], b)
