"""`jnp.linalg.det` and `slogdet` of complex matrices, judged: U's diagonal
of xGETRF enclosed in complex boxes (oracle/lu_diagonal.py
`lu_diagonal_complex`), JAX's arithmetic on it carried by interval
arithmetic where it mixes components (oracle/complex_ranges.py: abs, divide,
multiply, the product reduction of the phases, comparisons).

Independent truth: determinants from mpmath at 300 digits; U's diagonal
from LAPACK (scipy's cgetrf / zgetrf), XLA's own LU, numpy eliminations in
the working precision summing forward and backward, dividing or multiplying
by a reciprocal, and mpmath's exact-enough elimination — every one must lie
in the boxes; each interval rule is held against the op itself run on
points of the boxes (corners, edges, interior, the point nearest the
origin).  XLA's det and slogdet must agree, deliberately wrong answers —
zero, negated, conjugated, scaled by 1.01 and 1.001, logabsdet + 0.01 —
must fail wherever the range is narrow enough to decide
(suites/resolution.py), and where it is not, the verdict must say
inconclusive, never agree."""
from __future__ import annotations

import mpmath
import numpy as np
import pytest

import jax
import jax.numpy as jnp  # noqa: E402
import scipy.linalg as sla  # noqa: E402

from shlo_conform.oracle.complex_ranges import UNCARRIED  # noqa: E402
from shlo_conform.oracle.lu_diagonal import lu_diagonal_complex  # noqa: E402
from shlo_conform.oracle.program import parse_program  # noqa: E402
from shlo_conform.oracle.propagation import carry  # noqa: E402
from shlo_conform.oracle.semantics import run_arrays  # noqa: E402
from shlo_conform.spec.expectation import Expectation  # noqa: E402
from shlo_conform.spec.kinds import kind_of  # noqa: E402
from shlo_conform.spec.lapack import lu_pivoting  # noqa: E402
from shlo_conform.spec.types import TensorType, element_type, from_bits, ordinals, to_bits  # noqa: E402
from shlo_conform.suites.compare import compare  # noqa: E402
from shlo_conform.suites.resolution import resolution  # noqa: E402
from tests.oracle.jax_programs import ok, program  # noqa: E402
from tests.run_report import verdicts as read_verdicts

C64, C128 = element_type("complex<f32>"), element_type("complex<f64>")
ET = {np.complex64: C64, np.complex128: C128}



def crand(shape, dtype, rng):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def box(e):
    """(lo, hi) complex128 ends of a bounded expectation, flattened."""
    et = e.type.element_type
    lo = np.asarray(from_bits(e.lo, et)).astype(np.complex128).reshape(-1)
    hi = np.asarray(from_bits(e.hi, et)).astype(np.complex128).reshape(-1)
    return lo, hi


def inside(z, lo, hi) -> bool:
    z = np.asarray(z, dtype=np.complex128).reshape(-1)
    return bool(((lo.real <= z.real) & (z.real <= hi.real) & (lo.imag <= z.imag) & (z.imag <= hi.imag)).all())


def rel_width(lo, hi) -> np.ndarray:
    return np.maximum(hi.real - lo.real, hi.imag - lo.imag) / np.abs((lo + hi) / 2)


def mp_det(m: np.ndarray) -> complex:
    with mpmath.workdps(300):
        return complex(mpmath.det(mpmath.matrix([[mpmath.mpc(complex(x)) for x in row] for row in m])))


def never_agrees(e, wrong) -> bool:
    """A wrong answer is refused, or the verdict is inconclusive (too wide to tell): never "agrees"."""
    return not ok(e, wrong) or not resolution(e).conclusive


def scaled(x, s):
    return (np.asarray(x).astype(np.complex128) * s).astype(x.dtype)


# --------------------------------------------------------------------------
# U's diagonal
# --------------------------------------------------------------------------

def _doolittle(a: np.ndarray, reverse: bool, reciprocal: bool) -> np.ndarray:
    """U's diagonal of GEPP in a's own complex precision (numpy rounds every
    complex operation to it), each element one inner product summed forward
    or backward, L by a division or by a multiplication with the pivot's
    reciprocal; the pivot the first of largest |re| + |im|."""
    w = a.copy()
    n = w.shape[0]
    L, U = np.zeros_like(w), np.zeros_like(w)
    for j in range(n):
        def s(i, c):
            terms = [L[i, t] * U[t, c] for t in range(j)]
            acc = w[i, c]
            for x in (reversed(terms) if reverse else terms):
                acc = acc - x
            return acc
        cand = [s(i, j) for i in range(j, n)]
        r = j + int(np.argmax([abs(z.real) + abs(z.imag) for z in cand]))
        w[[j, r]], L[[j, r]] = w[[r, j]], L[[r, j]]
        U[j, j] = s(j, j)
        for c in range(j + 1, n):
            U[j, c] = s(j, c)
        inv = w.dtype.type(1) / U[j, j]
        for i in range(j + 1, n):
            L[i, j] = s(i, j) * inv if reciprocal else s(i, j) / U[j, j]
    return np.diagonal(U)


def _mp_diagonal(a: np.ndarray, piv: np.ndarray) -> np.ndarray:
    """U's diagonal of the exact LU with the row interchanges `piv` (mpmath, 300 digits)."""
    with mpmath.workdps(300):
        w = [[mpmath.mpc(complex(x)) for x in row] for row in a]
        n = len(w)
        for j in range(n):
            r = int(piv[j]) - 1
            w[j], w[r] = w[r], w[j]
            for i in range(j + 1, n):
                f = w[i][j] / w[j][j]
                w[i] = [x - f * y for x, y in zip(w[i], w[j])]
        return np.array([complex(w[j][j]) for j in range(n)])


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_u_diagonal_encloses_every_evaluation_order_tried(xla, dtype):
    """LAPACK's xGETRF (scipy), XLA's LU, four numpy eliminations in the
    working precision and the exact elimination all land in the box
    lu_diagonal_complex states for each û_kk — and the boxes are narrow
    enough to say something (c64: below 1 % up to 10×10, c128: 10⁻⁹)."""
    et = ET[dtype]
    rng = np.random.default_rng(21)
    for n in (3, 6, 10, 16):
        a = crand((n, n), dtype, rng)
        _, piv, _, why = lu_pivoting(a.astype(np.complex128), et)
        assert why is None
        got = lu_diagonal_complex(a, et, piv)
        assert not isinstance(got, str), got
        rl, rh, il, ih = got
        lo, hi = rl + 1j * il, rh + 1j * ih
        xla_lu, xla_piv, _ = jax.lax.linalg.lu(a)   # the xla fixture turns 64-bit types on
        assert np.array_equal(np.asarray(xla_piv) + 1, piv)
        tries = {"LAPACK": np.diagonal(sla.lu_factor(a)[0]), "XLA": np.diagonal(np.asarray(xla_lu)),
                 "exact": _mp_diagonal(a, piv)}
        for rev in (False, True):
            for rec in (False, True):
                tries[f"numpy reverse={rev} reciprocal={rec}"] = _doolittle(a, rev, rec)
        for name, d in tries.items():
            assert inside(d, lo, hi), (n, name)
        limit = 1e-2 if dtype is np.complex64 else 1e-9
        if n <= 10:
            assert rel_width(lo, hi).max() < limit, (n, rel_width(lo, hi))


def test_the_boxes_stay_near_the_first_order_worst_case():
    """The same error model to first order, computed independently in numpy
    from the exact factors: |δû_jj| ≤ e_jj + |y|·e_b + e_r·|x| + |y|·e_B·|x|
    (x = B⁻¹b, y = r·B⁻¹, e the model's bound of E with the exact |L|, |U|).
    The boxes' half-widths stay within 2× of it for a 12×12 complex64
    matrix — an elimination carried wholly in balls wraps to several times
    that by column 5 (lu_diagonal_complex's docstring)."""
    from shlo_conform.oracle.lu_diagonal import DIVISION_U
    from shlo_conform.spec.ops.cholesky import gamma
    n, u = 12, 2.0 ** -24
    a = crand((n, n), np.complex64, np.random.default_rng(30))
    lu, piv, _, _ = lu_pivoting(a.astype(np.complex128), C64)
    rl, rh, il, ih = lu_diagonal_complex(a, C64, piv)
    half = np.maximum(rh - rl, ih - il) / 2
    A = a.astype(np.complex128)
    for j in range(n):
        A[[j, int(piv[j]) - 1]] = A[[int(piv[j]) - 1, j]]
    L, U = np.tril(lu, -1) + np.eye(n), np.triu(lu)
    K = np.minimum.outer(np.arange(n), np.arange(n))
    e = np.vectorize(lambda t: gamma(2 * int(t) + 1, u))(K) * (np.abs(A) + np.abs(np.tril(L, -1)) @ np.abs(U))
    e += np.tril(DIVISION_U * u * np.abs(L) * np.abs(np.diagonal(U))[None, :], -1)
    first = [e[0, 0]]
    for j in range(1, n):
        x = np.linalg.solve(A[:j, :j], A[:j, j])
        y = np.linalg.solve(A[:j, :j].T, A[j, :j])
        first.append(e[j, j] + np.abs(y) @ e[:j, j] + e[j, :j] @ np.abs(x) + np.abs(y) @ e[:j, :j] @ np.abs(x))
    ratio = half / np.array(first)
    assert (ratio < 2).all(), ratio


def test_a_real_matrix_is_not_stated_here():
    from shlo_conform.spec.types import E_F32
    assert isinstance(lu_diagonal_complex(np.eye(3, dtype=np.float32), E_F32, np.arange(1, 4)), str)


def test_a_nearly_singular_leading_column_states_nothing():
    """Two rows whose first entries tie in |re| + |im| (1 + 2i and 2 − i):
    the pivot is not decided, so no box is stated."""
    a = np.array([[1 + 2j, 0, 1], [2 - 1j, 1, 0], [0.5, 1j, 2]], np.complex64)
    got = lu_diagonal_complex(a, C64, np.array([1, 2, 3]))
    assert isinstance(got, str) and "pivot 1" in got


# --------------------------------------------------------------------------
# The interval rules, against the op at points of the boxes
# --------------------------------------------------------------------------

def _bounded(lo: np.ndarray, hi: np.ndarray, et) -> Expectation:
    """A complex bounded expectation of the box [lo, hi] (values of et), its primary the midpoint."""
    mid = ((lo.astype(np.complex128) + hi.astype(np.complex128)) / 2).astype(et.numpy)
    return Expectation(TensorType(lo.shape, et), to_bits(mid, et), "bounded", lo=to_bits(lo, et), hi=to_bits(hi, et))


def _random_boxes(n, et, rng, rel):
    """n boxes around random points, each side `rel`·|z| wide at most; some straddle an axis."""
    z = crand((n,), np.complex128, rng)
    z[: n // 4] = z[: n // 4].real * 1e-4 + 1j * z[: n // 4].imag   # near the imaginary axis: re straddles 0
    half = rel * np.abs(z) * rng.uniform(0.1, 1, (2, n))
    lo = (z.real - half[0] + 1j * (z.imag - half[1])).astype(et.numpy)
    hi = (z.real + half[0] + 1j * (z.imag + half[1])).astype(et.numpy)
    return lo, hi


def _points(lo, hi, rng, count):
    """Points of each box: its 4 corners, edge midpoints, the point nearest the origin, random interior ones."""
    lo, hi = lo.astype(np.complex128), hi.astype(np.complex128)
    out = []
    for fr in (0, 1):
        for fi in (0, 1):
            out.append(np.where(fr, hi.real, lo.real) + 1j * np.where(fi, hi.imag, lo.imag))
    mid = (lo + hi) / 2
    out += [lo.real + 1j * mid.imag, hi.real + 1j * mid.imag, mid.real + 1j * lo.imag, mid.real + 1j * hi.imag]
    out.append(np.clip(0, lo.real, hi.real) + 1j * np.clip(0, lo.imag, hi.imag))
    for _ in range(count):
        out.append(lo.real + rng.uniform(0, 1, lo.shape) * (hi.real - lo.real)
                   + 1j * (lo.imag + rng.uniform(0, 1, lo.shape) * (hi.imag - lo.imag)))
    return out


def _admitted(e):
    """(lo, hi) ordinals, per component, of what an expectation admits."""
    return kind_of(e).admits(e) or (ordinals(np.reshape(e.bits, -1), e.type.element_type),) * 2


def _steps(text):
    return parse_program(text).steps[0].inst


@pytest.mark.parametrize("et", [C64, C128], ids=["c64", "c128"])
@pytest.mark.parametrize("op", ["abs", "multiply", "divide", "divide_by_real", "reduce"])
def test_each_rule_holds_the_op_at_every_point_tried(et, op):
    """For boxes (some straddling an axis) the range the rule states holds
    what the op's own expectation admits at each point tried: corners, edge
    midpoints, the point nearest the origin and 20 random ones per box."""
    rng = np.random.default_rng(22)
    n = 16
    t = f"tensor<{n}x{et.mlir}>"
    c = et.component.mlir
    if op == "abs":
        r = f"tensor<{n}x{c}>"
        text = f"func.func @main(%a: {t}) -> {r} {{\n  %r = stablehlo.abs %a : ({t}) -> {r}\n  return %r : {r}\n}}"
    elif op == "reduce":
        t = f"tensor<4x{n}x{et.mlir}>"
        text = (f"func.func @main(%a: {t}) -> tensor<{n}x{et.mlir}> {{\n"
                f"  %one = stablehlo.constant dense<(1.0, 0.0)> : tensor<{et.mlir}>\n"
                f"  %r = stablehlo.reduce(%a init: %one) applies stablehlo.multiply across dimensions = [0] : "
                f"({t}, tensor<{et.mlir}>) -> tensor<{n}x{et.mlir}>\n  return %r : tensor<{n}x{et.mlir}>\n}}")
    else:
        name = "divide" if op.startswith("divide") else op
        text = (f"func.func @main(%a: {t}, %b: {t}) -> {t} {{\n  %r = stablehlo.{name} %a, %b : {t}\n"
                f"  return %r : {t}\n}}")
    prog = parse_program(text)
    step = next(s for s in prog.steps if s.inst.spec.mnemonic in ("abs", "multiply", "divide", "reduce"))
    inst = step.inst
    shape = (4, n) if op == "reduce" else (n,)
    boxes = [_random_boxes(int(np.prod(shape)), et, rng, 1e-3)]
    if op not in ("abs", "reduce"):
        lo, hi = _random_boxes(n, et, rng, 1e-3)
        if op == "divide_by_real":   # JAX's u / |u|: a real divisor, imaginary part exactly 0
            lo, hi = (np.abs(lo.real) + 0j).astype(et.numpy), (np.abs(lo.real) * (1 + 1e-3) + 0j).astype(et.numpy)
        boxes.append((lo, hi))
    inputs = [_bounded(lo.reshape(shape), hi.reshape(shape), et) for lo, hi in boxes]
    if op == "reduce":
        one = np.asarray(1 + 0j, dtype=et.numpy)
        inputs.append(Expectation(TensorType((), et), to_bits(one, et)))
    arrays = [v.array() for v in inputs]
    (got,) = carry(run_arrays, inst, inputs, run_arrays(inst, arrays), arrays)
    assert got.kind == "bounded" and "complex_ranges" in got.why
    wild = set(got.impl_defined)
    g_lo, g_hi = _admitted(got)
    rt = got.type.element_type
    cols = 2 if rt.is_complex else 1
    g_lo, g_hi = g_lo.reshape(-1, cols), g_hi.reshape(-1, cols)
    tried = 0
    samples = [_points(lo.reshape(-1), hi.reshape(-1), rng, 20) for lo, hi in boxes]
    for pts in zip(*samples):
        trial = [p.astype(et.numpy).reshape(shape) for p in pts] + arrays[len(boxes):]
        (e,) = run_arrays(inst, trial)
        lo_o, hi_o = _admitted(e)
        lo_o, hi_o = lo_o.reshape(-1, cols), hi_o.reshape(-1, cols)
        for k in range(lo_o.shape[0]):
            if k in wild:
                continue
            assert (g_lo[k] <= lo_o[k]).all() and (hi_o[k] <= g_hi[k]).all(), (op, k)
            tried += 1
    assert tried > 20 * (n - len(wild)) and len(wild) < n // 2


def test_abs_of_a_box_holds_its_interior_minimum():
    """A box straddling the real axis at re ∈ [3, 4]: |z| is smallest (3) at
    an edge's midpoint, not at a corner (both corners give |3 ± i| ≥ √10) —
    the stated range reaches down to 3."""
    lo, hi = np.array([3 - 1j], np.complex64), np.array([4 + 1j], np.complex64)
    inst = _steps("func.func @main(%a: tensor<1xcomplex<f32>>) -> tensor<1xf32> {\n"
                  "  %r = stablehlo.abs %a : (tensor<1xcomplex<f32>>) -> tensor<1xf32>\n  return %r : tensor<1xf32>\n}")
    v = _bounded(lo, hi, C64)
    (got,) = carry(run_arrays, inst, [v], run_arrays(inst, [v.array()]), [v.array()])
    g_lo = from_bits(got.lo, got.type.element_type)
    assert float(g_lo[0]) <= 3.0 and float(from_bits(got.hi, got.type.element_type)[0]) >= np.hypot(4, 1)


def test_compare_of_meeting_boxes_is_any_value():
    """u == 0 for a box holding 0 may be true at a point of it: any value
    there, labelled; decided (false) where the box stays clear of 0."""
    t = "tensor<2xcomplex<f32>>"
    inst = _steps(f"func.func @main(%a: {t}, %b: {t}) -> tensor<2xi1> {{\n"
                  f"  %r = stablehlo.compare EQ, %a, %b, FLOAT : ({t}, {t}) -> tensor<2xi1>\n"
                  f"  return %r : tensor<2xi1>\n}}")
    v = _bounded(np.array([-1 - 1j, 1 + 1j], np.complex64), np.array([1 + 1j, 2 + 2j], np.complex64), C64)
    zero = Expectation(TensorType((2,), C64), to_bits(np.zeros(2, np.complex64), C64))
    arrays = [v.array(), zero.array()]
    (got,) = carry(run_arrays, inst, [v, zero], run_arrays(inst, arrays), arrays)
    assert got.impl_defined == [0] and any(a.label == UNCARRIED for a in got.alternatives)
    assert compare(got, np.array([True, False])).ok and not compare(got, np.array([True, True])).ok


# --------------------------------------------------------------------------
# det and slogdet end to end
# --------------------------------------------------------------------------

CASES = [(np.complex64, (4, 4)), (np.complex64, (8, 8)), (np.complex64, (3, 6, 6)),
         (np.complex128, (4, 4)), (np.complex128, (16, 16)), (np.complex128, (3, 8, 8))]


@pytest.mark.parametrize("dtype, shape", CASES, ids=[f"{d.__name__}-{'x'.join(map(str, s))}" for d, s in CASES])
def test_complex_det_is_judged(xla, dtype, shape):
    """The box of det holds mpmath's determinant and XLA's; zero, negated,
    conjugated and 1 %-scaled answers fail; 0.1 % too where the box is
    narrower than 10⁻³ (complex128, complex64 4×4 and 6×6)."""
    rng = np.random.default_rng(23)
    a = crand(shape, dtype, rng)
    mats = a.reshape((-1,) + shape[-2:])
    truth = np.array([mp_det(m) for m in mats])
    (e,), (got,) = program(xla, jnp.linalg.det, [a])
    assert e.kind == "bounded" and not e.impl_defined, e.why
    lo, hi = box(e)
    assert inside(truth, lo, hi)
    assert ok(e, got)
    for wrong in (np.zeros_like(got), scaled(got, -1), np.conj(got), scaled(got, 1.01), scaled(got, 1 / 1.01)):
        assert not ok(e, wrong)
    if rel_width(lo, hi).max() < 1e-3:
        assert not ok(e, scaled(got, 1.001)) and not ok(e, scaled(got, 1 / 1.001))


@pytest.mark.parametrize("dtype, shape", CASES, ids=[f"{d.__name__}-{'x'.join(map(str, s))}" for d, s in CASES])
def test_complex_slogdet_is_judged(xla, dtype, shape):
    """sign's box holds det/|det| (mpmath) and XLA's sign; logabsdet's range
    holds log|det| and XLA's; a negated, conjugated, zero or 1 %-scaled
    sign fails, and so does logabsdet + 0.01."""
    rng = np.random.default_rng(24)
    a = crand(shape, dtype, rng)
    truth = np.array([mp_det(m) for m in a.reshape((-1,) + shape[-2:])])
    (e_sign, e_log), (sign, logabs) = program(xla, jnp.linalg.slogdet, [a])
    assert e_sign.kind == "bounded" and e_log.kind == "bounded" and not e_sign.impl_defined, e_sign.why
    lo, hi = box(e_sign)
    assert inside(truth / np.abs(truth), lo, hi)
    l_lo, l_hi = (np.asarray(from_bits(x, e_log.type.element_type)).astype(np.float64).reshape(-1)
                  for x in (e_log.lo, e_log.hi))
    assert ((l_lo <= np.log(np.abs(truth))) & (np.log(np.abs(truth)) <= l_hi)).all()
    assert ok(e_sign, sign) and ok(e_log, logabs)
    assert resolution(e_log).conclusive
    for wrong in (np.zeros_like(sign), -sign, np.conj(sign), scaled(sign, 1.01)):
        assert not ok(e_sign, wrong)
    assert not ok(e_log, (logabs + 0.01).astype(logabs.dtype))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("shape", [(2, 2), (3, 3), (4, 3, 3)])
def test_small_complex_dets_written_out_are_judged(xla, dtype, shape):
    """JAX writes 2×2 and 3×3 determinants out as products and sums (no
    LU): each complex multiply of ranged values goes through the interval
    rule — the box holds mpmath's determinant and XLA's, and zero, negated,
    conjugated and 0.1 %-scaled answers fail."""
    rng = np.random.default_rng(29)
    a = crand(shape, dtype, rng)
    truth = np.array([mp_det(m) for m in a.reshape((-1,) + shape[-2:])])
    (e,), (got,) = program(xla, jnp.linalg.det, [a])
    assert e.kind == "bounded" and not e.impl_defined
    lo, hi = box(e)
    assert inside(truth, lo, hi) and ok(e, got)
    for wrong in (np.zeros_like(got), scaled(got, -1), np.conj(got), scaled(got, 1.001)):
        assert not ok(e, wrong)


def test_another_implementation_of_the_chain_passes(xla):
    """JAX's arithmetic after the factorisation, done by numpy in complex64
    on LAPACK's LU (scipy's cgetrf) with the product taken in reverse order:
    another backend's correct answer, inside the boxes."""
    rng = np.random.default_rng(25)
    a = crand((2, 6, 6), np.complex64, rng)
    (e_det,), _ = program(xla, jnp.linalg.det, [a])
    (e_sign, e_log), _ = program(xla, jnp.linalg.slogdet, [a])
    dets, signs, logs = [], [], []
    for m in a:
        lu, piv = sla.lu_factor(m)
        d = np.diagonal(lu)
        parity = np.float32(-1) ** int(np.sum(piv != np.arange(len(piv))))
        phase = np.complex64(1)
        for z in d[::-1]:
            phase = phase * (z / np.complex64(np.abs(z)))
        s = phase * np.complex64(parity)
        la = np.float32(np.sum(np.log(np.abs(d))[::-1], dtype=np.float32))
        signs.append(s), logs.append(la), dets.append(s * np.complex64(np.exp(la)))
    assert ok(e_det, np.array(dets, np.complex64))
    assert ok(e_sign, np.array(signs, np.complex64)) and ok(e_log, np.array(logs, np.float32))


def test_an_ill_conditioned_complex_det_is_inconclusive_not_agreed(xla):
    """A 5×5 complex64 matrix whose last row is nearly a combination of the
    others: the pivots are decided but the last û_kk's box is wide — the
    range holds the exact determinant, XLA's and the 1 %-scaled one, and
    the verdict says inconclusive instead of "agrees"."""
    rng = np.random.default_rng(26)
    a = crand((5, 5), np.complex128, rng)
    a[4] = a[:4].sum(0) * 0.25 + 2e-5 * crand((5,), np.complex128, rng)
    a = a.astype(np.complex64)
    (e,), (got,) = program(xla, jnp.linalg.det, [a])
    assert e.kind == "bounded"
    lo, hi = box(e)
    assert inside(mp_det(a), lo, hi)
    assert ok(e, got) and ok(e, scaled(got, 1.01)) and never_agrees(e, scaled(got, 1.01))
    r = resolution(e)
    assert not r.conclusive and r.unresolved == 1, r.describe()


def test_a_complex64_16x16_det_says_how_wide_it_is(xla):
    """16×16 in complex64: the worst case over every evaluation order is a
    few percent wide (n·u·κ over 16 columns) — the range holds the truth
    and XLA's answer, the wrong answers outside it still fail, and the
    1 %-scaling the width cannot tell apart is left inconclusive."""
    rng = np.random.default_rng(27)
    a = crand((16, 16), np.complex64, rng)
    (e,), (got,) = program(xla, jnp.linalg.det, [a])
    assert e.kind == "bounded" and not e.impl_defined
    lo, hi = box(e)
    assert inside(mp_det(a), lo, hi) and ok(e, got)
    for wrong in (np.zeros_like(got), scaled(got, -1), np.conj(got)):
        assert not ok(e, wrong)
    assert never_agrees(e, scaled(got, 1.01)) and never_agrees(e, scaled(got, 1 / 1.01))


def test_a_pivot_tie_states_nothing_and_says_why(xla):
    """|re| + |im| of the first column's entries tie (1 + 2i, 2 − i, −3):
    xGETRF may pick any of them, so det is any value, labelled.  (4×4: JAX
    writes out 2×2 and 3×3 determinants as products, no LU.)"""
    a = np.array([[1 + 2j, 0, 1, 0.5], [2 - 1j, 1, 0, 1j], [-3, 1j, 2, 0], [0.5, 0, 1, 3]], np.complex64)
    (e,), (got,) = program(xla, jnp.linalg.det, [a])
    assert "any value" in e.why and ok(e, got) and ok(e, np.zeros_like(got))


# --------------------------------------------------------------------------
# `shlo-conform run` with deliberately wrong backends (complex-aware: the
# CLI fixtures' Negated and Scaled go through float64, dropping the
# imaginary part)
# --------------------------------------------------------------------------

from shlo_conform.backends.xla import XlaBackend  # noqa: E402


class _Altered(XlaBackend):
    def alter(self, a: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def run(self, executable, inputs):
        return [self.alter(np.asarray(o)) for o in super().run(executable, inputs)]


class ComplexNegated(_Altered):
    name = "complex-negated"

    def alter(self, a):
        return -a


class Conjugated(_Altered):
    name = "conjugated"

    def alter(self, a):
        return np.conj(a)


class Scaled1001(_Altered):
    """Every output times 1.001: a 0.1 % error."""
    name = "scaled-1.001"

    def alter(self, a):
        return scaled(a, 1.001)


@pytest.mark.long   # ~13 s of CPU: make test-long (CI); tests/cli/test_run_verdicts.py runs a complex64 det in make test
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_run_judges_a_complex_det_and_catches_wrong_backends(tmp_path, capsys, dtype):
    """`shlo-conform run det.mlir --backend=xla,<wrong>…`: XLA agrees; zeroed,
    negated, conjugated and (complex128) 0.1 %-scaled answers DISAGREE; exit 1."""
    from pathlib import Path
    from shlo_conform.cli import main
    before = bool(jax.config.jax_enable_x64)
    jax.config.update("jax_enable_x64", True)   # complex128 programs need it; put back as found
    try:
        rng = np.random.default_rng(28)
        a = crand((6, 6), dtype, rng)
        (tmp_path / "det.mlir").write_text(jax.jit(jnp.linalg.det).lower(a).as_text())
        np.savez(tmp_path / "in.npz", a)
        here = Path(__file__)
        zeroed = Path(__file__).parents[1] / "cli" / "fixtures" / "wrong.py"
        wrong = [f"{zeroed}:Zeroed", f"{here}:ComplexNegated", f"{here}:Conjugated"]
        if dtype is np.complex128:
            wrong.append(f"{here}:Scaled1001")
        rc = main(["run", str(tmp_path / "det.mlir"), f"--backend=xla,{','.join(wrong)}",
                   "--inputs", str(tmp_path / "in.npz")])
    finally:
        jax.config.update("jax_enable_x64", before)
    out = capsys.readouterr().out
    verdicts = read_verdicts(out)
    assert verdicts["xla"] == ["agrees"], out
    assert all(verdicts[w] == ["DISAGREES"] for w in wrong), out
    assert rc == 1
