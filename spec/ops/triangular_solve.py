"""triangular_solve — solutions of batches of triangular systems (spec section "triangular_solve").

Semantics: `result[i0, ..., iR-3, :, :]` "is the solution to
`op(a[i0, ..., iR-3, :, :]) * x = b[i0, ..., iR-3, :, :]` when `left_side` is
`true` or `x * op(a[i0, ..., iR-3, :, :]) = b[i0, ..., iR-3, :, :]` when
`left_side` is `false`", op(a) being a, its transpose or its conjugate
transpose (`transpose_a`); a is read from the triangle `lower` names only;
with `unit_diagonal` the implementation "can assume" a's diagonal is 1.

The seed defines the result as "the solution": the exact solution is
rarely representable, and which rounding of it an implementation returns
depends on its order of evaluation, so the result is judged by the property
a backward-stable solver guarantees (`dsl.Characterized`, a "residual"
expectation), as LAPACK's test suite judges xTRTRS and xTRSM —
TESTING/LIN/dtrt02.f (ztrt02.f), one ratio per right-hand side:

    RESID = ‖op(A)·x − b‖₁ / (n · ‖op(A)‖₁ · ‖x‖₁ · ε)   for each column x of X

(for `left_side = false`, x·op(A) = b is the same statement transposed:
op(A)ᵀ·xᵀ = bᵀ, one ratio per row of X), op(A) built from the triangle read
with a unit diagonal where `unit_diagonal` says so, ε the unit roundoff
2^-p (xLAMCH('Epsilon')); the largest ratio over columns and batch is the
value.  dtrt02 divides by ‖op(A)‖·‖x‖·ε; the n here (as dpot01 has it)
makes the ratio O(1) whatever the order.  A NaN or ±inf in the result fails;
a zero column x with b ≠ 0 fails (the ratio is infinite, LAPACK's 1/ε).

Threshold: LAPACK's 30 (dtest.in), raised to 4·γ(n+2)/(n·ε) where larger,
γ(k) = k·ε/(1 − k·ε).  Why every correct implementation passes: substitution,
its inner products in any order, gives (T + ΔT)·x̂ = b with |ΔT| ≤ γ(n)·|T|
for each right-hand side (Higham, Accuracy and Stability of Numerical
Algorithms, 2nd ed., Thm 8.5), so ‖T·x̂ − b‖₁ ≤ γ(n)·‖T‖₁·‖x̂‖₁ and
RESID ≤ γ(n)/(n·ε) ≈ 1; complex arithmetic adds √2 and two terms (Higham
§3.6); blocked (level-3) solvers a small constant (Higham §13.1).  The exact
solution rounded into the format has RESID ≤ 1/n.  Conditioning does not
enter: the criterion holds on ill-conditioned systems too — it asks for
backward stability, which a solve through an explicit inverse does not
have in general (its residual can grow with κ(T)).  Classic wrong results fail by orders of
magnitude: the other triangle read, a transposed solve, the wrong side,
ADJOINT read as TRANSPOSE on complex matrices.  In a format where n·ε is not
small (f8E5M2 from n = 6) no bound holds: the threshold is +inf.

The residual is computed as cholesky's is (spec/ops/cholesky.py: float64
for formats of at most 24 bits, long double for f64), with the rounding of
that computation bounded — |R̂ − R| ≤ γw(2n+2)·(|T|·|X| + |B|) — and the
verdict fails a result only where the whole enclosure is above the threshold.

The reference the oracle shows is the solution by substitution in mpmath at
2p + 64 bits, rounded to nearest.  It never judges.

Undefined behaviour (`undefined`) — every result passes, labelled, the
criterion reported as a known behaviour:
* `unit_diagonal` with a diagonal entry of a (in the triangle read) other
  than 1: the seed's "the implementation can assume that the diagonal
  elements of a are equal to 1, otherwise the behavior is undefined"; the
  criterion then reads the diagonal as 1 (LAPACK's DIAG = 'U': "not
  referenced");
* a singular system (a zero on the diagonal read, without unit_diagonal):
  there is no solution (or no unique one);
* a NaN or ±inf in the part of a read, or in b;
* a solution beyond the format's largest finite value: no result of the
  type is "the solution".

Quantized tensors (v1.20: `dequantize_op_quantize(lambda x, y:
triangular_solve(x, y, …), a, b, type(result))`; per-tensor a, b and
result; C1 reads `baseline_element_type`, C4 `baseline_type`): the property
restated on storage values as cholesky's module docstring argues — a
result is refused only where no float solution X the property admits
quantizes to it.  Each storage value's values form an interval
(`cholesky.preimage`), so X lies in a box of centre C and half-widths R;
per right-hand side x = c + e, |e| ≤ r:
‖T·x − b‖₁ ≥ ‖T·c − b‖₁ − ‖|T|·r‖₁ and ‖x‖₁ ≤ ‖|c| + r‖₁, so the ratio of
every x in the box is at least (‖T·c − b‖₁ − ‖|T|·r‖₁)/(n·‖T‖₁·‖|c| + r‖₁·ε)
(float64 rounding bounded as above, against the refusal).  A storage value
at a bound stands for every larger value up to the largest finite one (its
interval), which makes that column's bound 0: a clamped solution is
accepted, not judged — no bound on the solution's size holds here (an
ill-conditioned T admits large solutions), unlike cholesky's Mᵢ.  A value
no expressed value quantizes to is refused.

Readings and findings (docs/spec-findings.md, "triangular_solve"):
* "Output data is returned in the same triangle; the values in the other
  triangle are implementation-defined" cannot apply: the result has b's
  shape (m×k, any k), not a's, and every element of a solution is
  determined.  Read as not applying to the result: every element is judged.
* `unit_diagonal` is unobservable on defined inputs: where a's diagonal is
  1 both readings agree, elsewhere the behaviour is undefined — so an
  implementation that ignores the flag conforms.  The survey cases show
  what backends do with a diagonal other than 1.
* Nothing says what op(a) is for a real a under ADJOINT (read: TRANSPOSE).
"""
from __future__ import annotations

import dataclasses
import math

import mpmath
import numpy as np

from ..dsl import (COMPLEX, FLOAT, Attribute, BoolAttr, Characterized, EnumAttr, Measured, Operand, Result, all_of,
                   at, dim, rank, shape)
from ..exercise import Exercise
from ..symbolic import Skeleton
from ..dsl.quantization import Quantization
from ..quantized import baseline_element_type, is_quantized, same_baseline_type
from ..types import E_F32, TensorType
from .cholesky import (LAPACK_THRESHOLD, PLANS, MatrixOpSpec, Plan, box, column_norms, component, condition_1, ct,
                       dequantized, enclosure, expressed, gamma, high_precision, one_norm, preimage,
                       quantized_reference, residual_floor, rounded, substitute, to_working, triangle, uniform_values,
                       unit_roundoff,
                       working)

TRANSPOSES = ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT")


# --------------------------------------------------------------------------
# Constraints
# --------------------------------------------------------------------------

def triangular_solve_c1(op):
    """(C1) `a` and `b` have the same element type
    v1.20 reads `baseline_element_type(a) = baseline_element_type(b)`: the
    same for every non-quantized type; per-tensor quantized a and b may
    differ in scales and zero points."""
    return baseline_element_type(op.a) == baseline_element_type(op.b)


def triangular_solve_c2(op):
    """(C2) rank(`a`) $=$ rank(`b`) $\\ge$ 2."""
    return rank(op.a) == rank(op.b) and rank(op.a) >= 2


def triangular_solve_c3(op):
    """(C3) The relationship between shape(`a`) and shape(`b`) is as follows:
  * For all `i` $\\in$ [0, R-3], dim(`a`, `i`) $=$ dim(`b`, `i`).
  * `dim(a, R-2)` $=$ `dim(a, R-1)` $=$ `dim(b, left_side ? R-2 : R-1)`.

    R is rank(`a`) (C2 makes it rank(`b`)); below rank 2 there is no
    dim(a, R-2) and the rule is C2's, this one holds.  A dimension of `b`
    past its rank reads as 0 (`at`): C2 is broken there anyway."""
    R = rank(op.a)
    if R < 2:
        return True
    b = shape(op.b)
    side = R - 2 if op.left_side else R - 1
    return all_of([dim(op.a, i) == at(b, i) for i in range(R - 2)]
                  + [dim(op.a, R - 2) == dim(op.a, R - 1), dim(op.a, R - 1) == at(b, side)])


def triangular_solve_c4(op):
    """(C4) `b` and `result` have the same type.
    v1.20 reads `baseline_type(b) = baseline_type(result)` (scales and zero
    points of quantized tensors may differ)."""
    return same_baseline_type(op.b, op.result)


def infer(op):
    return {"result": op.b}


# --------------------------------------------------------------------------
# Semantics
# --------------------------------------------------------------------------

STATEMENT = ("‖op(A)·x − b‖₁ / (n·‖op(A)‖₁·‖x‖₁·ε) per right-hand side (LAPACK dtrt02/ztrt02), op(A) from the "
             "triangle read")


def threshold(n: int, et) -> float:
    """The criterion's bound (module docstring): max(30, 4·γ(n+2)/(n·ε))."""
    u = unit_roundoff(et)
    return max(LAPACK_THRESHOLD, 4 * gamma(n + 2, u) / (max(n, 1) * u))


def op_a(op, a: np.ndarray) -> tuple[np.ndarray, bool]:
    """(op(A), whether it is lower triangular): the triangle `lower` names
    (the other one zero), a unit diagonal where `unit_diagonal` says so,
    then transposed or conjugate-transposed as `transpose_a` says."""
    n = a.shape[-1]
    lower = bool(op.lower)
    T = np.where(triangle(n, lower), a, 0)
    if op.unit_diagonal:
        T[..., np.arange(n), np.arange(n)] = 1
    if op.transpose_a == "TRANSPOSE":
        return np.swapaxes(T, -1, -2), not lower
    if op.transpose_a == "ADJOINT":
        return ct(T), not lower
    return T, lower


def system(op, a: np.ndarray, b: np.ndarray):
    """(T, lower, B): the system T·X = B the op states, on the left —
    x·op(A) = b is op(A)ᵀ·xᵀ = bᵀ (a plain transpose)."""
    T, lower = op_a(op, a)
    if op.left_side:
        return T, lower, b
    return np.swapaxes(T, -1, -2), not lower, np.swapaxes(b, -1, -2)


def _left(op, x: np.ndarray) -> np.ndarray:
    """A result as the left-side system's unknown (transposed for the right side), and back."""
    return x if op.left_side else np.swapaxes(x, -1, -2)


def _criterion_quantized(op, operands, result) -> Measured:
    """The property restated on storage values (module docstring): a
    column (right side: a row) is refused only where no solution in the box
    of values that quantize to it can have the property."""
    a, b = operands
    q = op.result.element_type
    et = q.expressed_type
    n = int(op.a.shape[-1])
    thr = threshold(n, et)
    if 0 in tuple(int(d) for d in op.b.shape):
        return Measured(0.0, thr, True, "no element")
    _, uw = working(et)
    u = unit_roundoff(et)
    T, _, B = system(op, dequantized(a, op.a).astype(np.float64), dequantized(b, op.b).astype(np.float64))
    lo, hi = preimage(result, q)
    C, R, empty = (_left(op, x) for x in box(lo, hi))
    nonempty = ~empty.any(axis=-2)
    absT = np.abs(T)
    g = gamma(n + 3, uw)
    err = gamma(2 * n + 2, uw) * (absT @ np.abs(C) + np.abs(B))
    pert = (absT @ R) * (1 + gamma(n + 2, uw))
    den = n * one_norm(T)[..., None] * (column_norms(np.abs(C) + R) * (1 + gamma(n + 2, uw))) * u
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        low_num = column_norms(residual_floor(T @ C - B, err, pert, g)) * (1 - g)
        low = np.where(den > 0, low_num / np.where(den > 0, den * (1 + g), 1), np.where(low_num == 0, 0.0, np.inf))
    ok = nonempty & (low <= thr)
    worst = np.unravel_index(int(np.argmax(np.where(ok, low, np.inf))), low.shape)
    where = "column" if op.left_side else "row"
    detail = (f"least ‖op(A)·x − b‖₁/(n·‖op(A)‖₁·‖x‖₁·ε) over the solutions that quantize to the result: "
              f"≥ {float(low[worst]):.3g} at {where} {int(worst[-1])} (threshold {thr:g}; A and b dequantized)")
    if not nonempty.all():
        detail += f"; a storage value no value of the expressed type quantizes to ({int((~nonempty).sum())} {where}s)"
    return Measured(float(np.max(low)), thr, bool(ok.all()), detail, None, float(np.max(low)), float(np.max(low)))


def criterion(op, operands, result) -> Measured:
    """The property every correct solution has (module docstring).  On
    quantized tensors, restated on storage values (`_criterion_quantized`)."""
    if is_quantized(op.b) or is_quantized(op.result):
        return _criterion_quantized(op, operands, result)
    a, b = operands
    et = op.b.element_type
    n = int(op.a.shape[-1])
    thr = threshold(n, et)
    if 0 in tuple(int(d) for d in op.b.shape):
        return Measured(0.0, thr, True, "no element")
    _, uw = working(et)
    u = unit_roundoff(et)
    T, _, B = system(op, to_working(a, et), to_working(b, et))
    X = _left(op, to_working(result, et))
    finite = np.isfinite(X).all(axis=-2)
    X = np.where(np.isfinite(X), X, 0)
    value, lo, hi = enclosure(column_norms(T @ X - B),
                             gamma(2 * n + 2, uw) * column_norms(np.abs(T) @ np.abs(X) + np.abs(B)),
                             n * one_norm(T)[..., None] * column_norms(X) * u, gamma(n + 3, uw))
    value, lo, hi = (np.where(finite, v, np.inf) for v in (value, lo, hi))
    ok = finite & (lo <= thr)
    worst = np.unravel_index(int(np.argmax(np.where(ok, value, np.inf))), value.shape)
    where = "column" if op.left_side else "row"
    detail = (f"‖op(A)·x − b‖₁/(n·‖op(A)‖₁·‖x‖₁·ε) = {float(value[worst]):.3g} at {where} {int(worst[-1])}"
              + (f", batch index {list(map(int, worst[:-1]))}" if len(worst) > 1 else "")
              + f" (enclosure from {float(lo[worst]):.3g}; threshold {thr:g})")
    if not finite.all():
        detail += f"; NaN or inf in {int((~finite).sum())} {where}s of the result"
    return Measured(float(np.max(value)), thr, bool(ok.all()), detail, None, float(np.max(lo)), float(np.max(hi)))


def _operations(op) -> int:
    b = [int(d) for d in op.b.shape]
    return int(np.prod(b, dtype=np.int64)) * int(op.a.shape[-1]) + 1


def _solve(op, a, b, read) -> tuple[np.ndarray, np.ndarray]:
    """(X, singular): the solution by substitution on the values `read`
    gives (mpmath or the working format); `singular` per matrix (a zero
    diagonal entry: X is then not a solution there)."""
    T, lower, B = system(op, read(a), read(b))
    n = T.shape[-1]
    d = T[..., np.arange(n), np.arange(n)]
    singular = np.asarray(d == 0, dtype=bool).any(axis=-1) if n else np.zeros(T.shape[:-2], dtype=bool)
    T = T.copy()
    T[..., np.arange(n), np.arange(n)] = np.where(np.asarray(d == 0, dtype=bool), 1, d)
    return _left(op, substitute(T, B, lower)), singular


def reference(op, a, b) -> np.ndarray:
    """The solution in high precision, rounded; NaN where the system is
    singular.  On quantized tensors: that of the dequantized system, quantized."""
    if is_quantized(op.b):
        return quantized_reference(reference(expressed(op), dequantized(a, op.a), dequantized(b, op.b)), op.result)
    et = op.b.element_type
    if 0 in np.shape(b):
        return np.zeros(np.shape(b), et.numpy)
    read, prec, _ = high_precision(et, _operations(op))
    with mpmath.workprec(prec or 53):
        X, singular = _solve(op, a, b, read)
        out = rounded(X, et)
    return np.where(singular[..., None, None], np.array(np.nan).astype(et.numpy), out)


def undefined(op, a, b) -> str | None:
    """Why the seed makes this system's behaviour undefined (module docstring),
    or None (on quantized tensors: the dequantized system's)."""
    if is_quantized(op.b):
        return undefined(expressed(op), dequantized(a, op.a), dequantized(b, op.b))
    et = op.b.element_type
    n = int(op.a.shape[-1])
    if 0 in np.shape(b):
        return None
    x = np.asarray(a).astype(np.complex128 if et.is_complex else np.float64)
    read = triangle(n, bool(op.lower))
    diag = np.diagonal(x, axis1=-2, axis2=-1)
    if op.unit_diagonal:
        read = read & ~np.eye(n, dtype=bool)
    if not np.isfinite(np.where(read, x, 0)).all() or not np.isfinite(np.asarray(b).astype(x.dtype)).all():
        return "a NaN or ±inf in the part of a read or in b: the system has no solution to state"
    if op.unit_diagonal and (diag != 1).any():
        return ("unit_diagonal with a diagonal entry of a other than 1: the seed lets the implementation assume "
                "it is 1, \"otherwise the behavior is undefined\"")
    if not op.unit_diagonal and (diag == 0).any():
        return "a zero on the diagonal of a: the system is singular (no unique solution)"
    X, _ = _solve(op, a, b, lambda v: to_working(v, et))
    big = float(component(et).format.max_finite)
    if not np.isfinite(X).all() or (np.abs(X) > big).any():
        return f"the solution exceeds {et.name}'s largest finite value: no result of the type is the solution"
    if _rounds_to_zero(op, X, b, et):
        return (f"a column of the solution lies at or below half {et.name}'s smallest value while b's is not zero: "
                "it rounds to zero, and no result of the type meets the property (f4E2M1FN's is 0.5)")
    return None


def _rounds_to_zero(op, X: np.ndarray, b, et) -> bool:
    """Whether some unknown vector of the left-side system (a column of
    X, whose right-hand side is not zero) has every element at or below half
    the type's smallest positive value: the correctly rounded result is that
    column of zeros, for which ‖op(A)·x − b‖ / (‖op(A)‖·‖x‖) is infinite —
    only the narrowest formats (v1.20's f4E2M1FN) come near it."""
    tiny = float(component(et).format.min_subnormal) / 2
    Bl = _left(op, np.asarray(b).astype(X.dtype))
    under = (np.abs(_left(op, X)) <= tiny).all(axis=-2) & (Bl != 0).any(axis=-2)   # a tie rounds to even: 0
    return bool(under.any())


def condition(op, a, b) -> float:
    """κ₁ of the matrix of the system as the criterion states it (op(A), or its transpose for the right side)."""
    if is_quantized(op.a):
        return condition(expressed(op), dequantized(a, op.a), dequantized(b, op.b))
    x = np.asarray(a).astype(np.complex128 if op.a.element_type.is_complex else np.float64)
    T, _, _ = system(op, x, np.zeros(x.shape))
    return condition_1(T)


# --------------------------------------------------------------------------
# Exercise
# --------------------------------------------------------------------------

def _triangular(n: int, op, et, rng, plan: Plan) -> np.ndarray:
    """One matrix a: the triangle read as the plan says, the other triangle
    other values (never read; NaN in the "nan elsewhere" plan).
    dominant: a diagonal of modulus in [1, 4) (1 with unit_diagonal) and
    entries below 2^-⌈log2 n⌉ in modulus off it — well conditioned;
    graded: D·(I + N), D a diagonal from 1 down to 1/kappa, N entries of
    the same size — κ near kappa, the solution within about kappa·|b| (no
    overflow).  Values are random, rounded into the format (numpy's
    rounding: deterministic), so solutions are not exact and every
    implementation rounds."""
    lower, unit = bool(op.lower), bool(op.unit_diagonal)
    scale = 2.0 ** -math.ceil(math.log2(max(n, 1)))
    signs = rng.choice((-1.0, 1.0), size=n)
    mant = rng.uniform(1.0, 2.0, size=n)
    if plan.matrix == "graded" and n > 1:
        steps = np.round(np.arange(n) * math.log2(plan.kappa) / (n - 1))
        d = signs * mant * 2.0 ** -steps
        off = uniform_values((n, n), et, rng, scale) * np.abs(d)[:, None]   # row i scaled as its diagonal: T = D·(I + N)
    else:
        d = signs * mant * 2.0 ** rng.integers(0, 2, size=n)
        off = uniform_values((n, n), et, rng, scale)
    if unit and plan.matrix != "unit diagonal not 1":
        d = np.ones(n)
    if plan.matrix == "singular":
        d[n // 2] = 0.0
    inside = triangle(n, lower) & ~np.eye(n, dtype=bool)
    elsewhere = np.full((n, n), np.nan) if plan.matrix == "nan elsewhere" else uniform_values((n, n), et, rng, 8.0) + 3
    m = np.where(inside, off, elsewhere).astype(np.complex128 if et.is_complex else np.float64)
    m[np.arange(n), np.arange(n)] = d
    return m


def operand_values(op, name, k, t, rng):
    """a: a triangular matrix per the instance's `Plan` (dominant by
    default); b: random values of modulus below 4."""
    et = t.element_type
    shape = tuple(int(d) for d in t.shape)
    if name == "b":
        return uniform_values(shape, et, rng, 4.0)
    if len(shape) < 2 or shape[-1] != shape[-2]:   # an invalid program's operand: the usual values
        return None
    plan = PLANS.get(op, Plan())
    n = shape[-1]
    out = np.zeros(shape, dtype=np.complex128 if et.is_complex else np.float64)
    for idx in np.ndindex(*shape[:-2]):
        out[idx] = _triangular(n, op, et, rng, plan)
    return out


COMBOS = [dict(left_side=ls, lower=lo, transpose_a=tr, unit_diagonal=ud)
          for ls in (True, False) for lo in (True, False) for tr in TRANSPOSES for ud in (False, True)]
_KAPPA = {"f16": 1e2, "f32": 1e5, "complex<f32>": 1e5, "f64": 1e10, "complex<f64>": 1e10}
UNIT_NOT_1 = ("unit_diagonal with a diagonal other than 1 — the seed makes the behaviour undefined "
              "(LAPACK's DIAG = 'U' reads no diagonal)")
SINGULAR = "singular: a zero on the diagonal — no solution (undefined)"


def _combo(left_side: bool, lower: bool, transpose_a: str, unit_diagonal: bool = False) -> dict:
    return dict(left_side=left_side, lower=lower, transpose_a=transpose_a, unit_diagonal=unit_diagonal)


def _shapes(combo: dict, n: int, k: int, batch: tuple = ()) -> tuple:
    b = (n, k) if combo["left_side"] else (k, n)
    return batch + (n, n), batch + b


def _built(et_name: str, rng) -> list:
    """(note, attributes, a shape, b shape, plan) built by hand for one element type."""
    def words(c):
        return (f"{'left' if c['left_side'] else 'right'} side, {'lower' if c['lower'] else 'upper'}, "
                f"{c['transpose_a']}{', unit diagonal' if c['unit_diagonal'] else ''}")
    if et_name in ("f32", "complex<f32>"):
        combos = COMBOS   # every combination: ADJOINT differs from TRANSPOSE on complex matrices only
    else:                 # a seeded rotation covering each transpose, both sides and both triangles
        order = rng.permutation(len(COMBOS))
        combos = [COMBOS[int(i)] for i in order[:6]]
    out = [(f"well-conditioned 4x4, {words(c)}", c, *_shapes(c, 4, 3), Plan()) for c in combos]
    c0 = _combo(False, True, "TRANSPOSE")
    out.append((f"batch of 2: 3x3, {words(c0)}", c0, *_shapes(c0, 3, 2, (2,)), Plan()))
    if et_name in _KAPPA:
        kappa = _KAPPA[et_name]
        for c in (_combo(True, True, "NO_TRANSPOSE"), _combo(True, False, "TRANSPOSE"),
                  _combo(False, True, "ADJOINT"), _combo(False, False, "NO_TRANSPOSE")):
            out.append((f"ill-conditioned (diagonal down to 1/{kappa:.0e}) 6x6, {words(c)}", c, *_shapes(c, 6, 2),
                        Plan("graded", kappa)))
    if et_name in ("f32", "f64", "complex<f64>"):
        c = _combo(True, True, "ADJOINT")
        out.append((f"12x12 (long inner products), {words(c)}", c, *_shapes(c, 12, 3), Plan()))
        c = _combo(False, False, "TRANSPOSE")
        out.append((f"NaN in the triangle not read, {words(c)}", c, *_shapes(c, 4, 2), Plan("nan elsewhere")))
    if et_name == "f32":
        for c in (_combo(True, True, "NO_TRANSPOSE", True), _combo(False, False, "TRANSPOSE", True)):
            out.append((f"{UNIT_NOT_1}; {words(c)}", c, *_shapes(c, 3, 2), Plan("unit diagonal not 1",
                                                                                  survey=UNIT_NOT_1)))
        c = _combo(True, True, "NO_TRANSPOSE")
        out.append((f"{SINGULAR}; {words(c)}", c, *_shapes(c, 3, 2), Plan("singular", survey=SINGULAR)))
    return out


def built_corners(spec, skels, rng):
    """Per element type: attribute combinations (all 24 on f32 and
    complex<f32>), a batch, ill-conditioned systems, a 12x12, NaN in the
    triangle never read; on f32 the survey cases of undefined behaviour."""
    from ..types import TensorType
    out = []
    for et in spec.operands[0].types:
        skel = next((s for s in skels if s.operand_types == (et, et)), None)
        if skel is None:
            continue
        for note, combo, a_shape, b_shape, plan in _built(et.name, rng):
            s = dataclasses.replace(skel, attrs=tuple((k, combo.get(k, v)) for k, v in skel.attrs))
            tb = TensorType(b_shape, et)
            inst = spec.instance({"a": TensorType(a_shape, et), "b": tb}, dict(combo), {"result": tb})
            PLANS[inst] = plan
            out.append((note, s, inst))
    return out


def survey_when(op) -> str | None:
    plan = PLANS.get(op)
    return plan.survey if plan is not None and plan.survey else None


def quantized_example(types: dict):
    """A valid triangular_solve whose element types are `types` (by name: a,
    b, result; f32 where not given): a 4x4 upper a, solved on the right with
    its transpose for a 3x4 b — the structure on which the quantized stream
    builds its value cases per pairing and breaks C1 and C4 alone."""
    from ..types import element_type as named
    f32 = named("f32")
    shapes = {"a": (4, 4), "b": (3, 4), "result": (3, 4)}
    t = {n: TensorType(shapes[n], types.get(n, f32)) for n in shapes}
    return SPEC.instance({"a": t["a"], "b": t["b"]}, _combo(False, False, "TRANSPOSE"), {"result": t["result"]})


def batch_and_rank_breaks(spec, skels, rng):
    """C3 broken by a batch dimension of `a` larger than `b`'s, and by one
    smaller (equal, not ordered); and C2 alone on an `a` of rank 1, where
    C3 holds (no dim(a, R-2)): an implementation naming C3 there too
    reads a rule the spec does not state."""
    attrs = {"left_side": True, "lower": True, "unit_diagonal": False, "transpose_a": "NO_TRANSPOSE"}
    skel = Skeleton(spec.mnemonic, (E_F32, E_F32), (), tuple(attrs.items()))
    for note, label, a, b in (("a batch dimension of a above b's", "triangular_solve_c3", (3, 2, 2), (2, 2, 1)),
                              ("a batch dimension of a below b's", "triangular_solve_c3", (2, 2, 2), (3, 2, 1)),
                              ("a of rank 1", "triangular_solve_c2", (2,), (2, 1))):
        yield (note, label, skel, spec.instance({"a": TensorType(a, E_F32), "b": TensorType(b, E_F32)}, attrs,
                                                {"result": TensorType(b, E_F32)}))


SPEC = MatrixOpSpec(
    mnemonic="triangular_solve",
    operands=(Operand("a", FLOAT + COMPLEX), Operand("b", FLOAT + COMPLEX)),
    attributes=(Attribute("left_side", BoolAttr()), Attribute("lower", BoolAttr()),
                Attribute("unit_diagonal", BoolAttr()), Attribute("transpose_a", EnumAttr("transpose", TRANSPOSES))),
    results=(Result("result", FLOAT + COMPLEX),),
    constraints=(triangular_solve_c1, triangular_solve_c2, triangular_solve_c3, triangular_solve_c4),
    infer=infer,
    semantics=Characterized(reference=reference, criterion=criterion, undefined=undefined, condition=condition,
                            statement=STATEMENT),
    exercise=Exercise(built_corners=built_corners, operand_values=operand_values, survey_when=survey_when,
                      appended_last=batch_and_rank_breaks),
    # v1.20: a, b and result "or per-tensor quantized tensor"; dequantize_op_quantize, the float op judged by its
    # property restated on storage values (`_criterion_quantized`; cholesky's module docstring); values from its
    # example only
    quantization=Quantization(example=quantized_example, skeletons=False),
)
