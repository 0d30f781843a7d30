"""cholesky — the Cholesky factor of each matrix of a batch (spec section "cholesky").

Semantics: "`result[i0, ..., iR-3, :, :]` is a Cholesky decomposition of
`a[i0, ..., iR-3, :, :]`, in the form of either of a lower-triangular (if
`lower` is `true`) or upper-triangular (if `lower` is `false`) matrix"; the
opposite strict triangle is implementation-defined; a matrix that is not
Hermitian positive-definite makes the behaviour undefined.

The seed defines the result by a property, not a value: which factor an
implementation returns depends on its order of evaluation, so the result is
judged by the property (`dsl.Characterized`, a "residual" expectation,
spec/kinds/residual.py), the way LAPACK's own test suite judges xPOTRF —
TESTING/LIN/dpot01.f (zpot01.f for complex):

    RESID = ‖L·Lᴴ − A‖₁ / (n · ‖A‖₁ · ε)

with ε the unit roundoff 2^-p of the format (LAPACK's xLAMCH('Epsilon')),
A the Hermitian matrix of the triangle read, L the triangle of the result
that `lower` names (for `lower = false`, L = Uᴴ of the upper triangle U),
the other strict triangle never read and never scored.  A Cholesky factor
has a real, positive diagonal (what makes it unique; zpot01 checks the
imaginary parts of the diagonal too): a diagonal entry with a real part ≤ 0
fails, and an imaginary part counts as backward error,
|Im lⱼⱼ|·|lⱼⱼ| / (n·‖A‖₁·ε), under the same threshold.  A NaN or ±inf in the
triangle read fails.

Threshold: LAPACK's 30 (dtest.in, ztest.in: "Threshold value of test
ratio"), raised to 2·γ(n+3)/ε where that is larger, γ(k) = k·ε/(1 − k·ε).
Why every correct implementation passes: the standard algorithm, its inner
products in any order, computes L̂ with L̂·L̂ᴴ = A + ΔA, |ΔA| ≤ γ(n+1)·|L̂|·|L̂ᴴ|
(Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., Thm 10.3;
blocked level-3 variants have the same form), and ‖|L̂|·|L̂ᴴ|‖₁ ≤ n·max aᵢᵢ ≤
n·‖A‖₁ (the rows of L have norms √aᵢᵢ), so RESID ≤ γ(n+1)/ε ≈ n + 1; complex
arithmetic adds √2 and two terms (Higham §3.6): ≤ √2·γ(n+3)/ε.  Both stay
below max(30, 2·γ(n+3)/ε) for every n.  The exact factor rounded into the
format has RESID ≤ ≈2.  Classic wrong results fail by orders of magnitude:
the other triangle's factor, a transposed factor (L where U is asked), a
factor of the unread triangle's values, a negated column (L·diag(±1) keeps
L·Lᴴ but not the positive diagonal).  In a format where n·ε is not small
(f8E5M2 from n = 7, f8E4M3FN from n = 13) no bound holds for an algorithm
working in the format: the threshold is then +inf and only the diagonal's
sign and finiteness are judged.

The residual is computed, not estimated: in float64 for formats of at most
24 bits (every product of two such numbers is exact there) and in the
80-bit long double for f64 (float64 where the platform has none), and the
rounding of that computation is bounded: |R̂ − R| ≤ γw(2n+2)·(|L|·|Lᴴ| + |A|)
elementwise (w: the working format; complex products counted as two real
ones), the norms' own sums by γw(n+3).  `Measured.value` is the computed
ratio and the verdict fails a result only where the whole enclosure is above
the threshold (docs/oracle-evaluation.md, "residual"; tested against exact
rationals in tests/spec/test_ops_linalg.py: the enclosure's width is below
10⁻⁸ of the threshold in f32 and 10⁻³ in f64).

The reference the oracle shows (and measures ULP distances from) is the
factor computed with mpmath at 2p + 64 bits and rounded to nearest; it puts
zeros in the opposite triangle, as the seed's example prints.  It never
judges.  Matrices past 2·10⁵ scalar operations are factored in the working
format instead (said in the expectation).

Undefined behaviour (`undefined`): a matrix that is not Hermitian (the
triangle not read differs from the conjugate of the one read, or the
diagonal has an imaginary part), not positive definite (a pivot ≤ 0 in the
high-precision factorisation), or with a NaN or ±inf.  The oracle then lets
any result pass, labelled, and reports whether the result has the property
of the triangle read — what LAPACK does (it reads one triangle only).
Generators make such matrices only as survey cases.

Readings and findings (docs/spec-findings.md, "cholesky"):
* `lower` is a "0-dimensional tensor constant of type i1" in the Inputs
  table; programs write a bool attribute (`lower = true`), which the pinned
  StableHLO makes optional with default false — read so.
* "Cholesky decomposition" is not defined in the seed; read as the standard
  one: A = L·Lᴴ, L lower triangular with a real positive diagonal.
* The seed says "undefined" where a non-Hermitian input has a natural,
  widely implemented meaning (read one triangle, as LAPACK does and as
  triangular_solve's section says in so many words).

Quantized tensors (v1.20: "For quantized types, performs
`dequantize_op_quantize(lambda operand: cholesky(operand, lower), a,
type(result))`"; per-tensor `a` and `result`, C1 read as v1.20's
`baseline_type(a) = baseline_type(result)`).  The float op is judged by a
property, not a value, so there is no value to quantize; the property is
restated on storage values instead.  Q is a correct storage result exactly
when some float result F that the float op may return — a factor with the
property P above (RESID(F) ≤ threshold, a real positive diagonal, finite)
of the dequantized matrix A = dequantize(a) — quantizes to it:
Q = quantize(F).  `quantize` is non-decreasing (spec/quantized.py
`quantize_bounds`), so the values of the expressed type that quantize to
one storage value q form an interval [lo(q), hi(q)] (`preimage`, found by
bisection on the expressed type's ordered values with the spec's own
`quantize` — no error analysis of its rounded steps is needed: a step of
s/2 around the dequantized value, widened by each step's rounding, is what
the interval is, computed exactly; empty where no value quantizes to q,
which happens where a narrow expressed type cannot hold q − zero point).
A storage bound is reached by clamping from every larger value, so its
interval runs to the largest finite value; every factor with P has
|lᵢⱼ| ≤ Mᵢ = √(aᵢᵢ + θ·n·‖A‖₁·ε) (the diagonal entry (L·Lᴴ)ᵢᵢ = Σⱼ|lᵢⱼ|²
is within ‖L·Lᴴ − A‖₁ ≤ θ·n·‖A‖₁·ε of aᵢᵢ), which bounds it again.  So Q is
refused only where no F in the box B = Π [lo, hi] ∩ [−Mᵢ, Mᵢ] (over the
triangle read) can have P — a relaxation of "some F of the expressed type
with quantize(F) = Q", hence sound: a correct Q is never refused.
With C the box's centre and R its half-widths (E = F − C, |E| ≤ R):
F·Fᴴ − A = (C·Cᴴ − A) + E·Cᴴ + C·Eᴴ + E·Eᴴ, so for every F in the box
‖F·Fᴴ − A‖₁ ≥ ‖C·Cᴴ − A‖₁ − ‖R·|C|ᵀ + |C|·Rᵀ + R·Rᵀ‖₁, and Q is refused
where that lower bound (its own float64 rounding bounded against it:
γw(2n+2) on the residual as above, γw(2n+4) on the perturbation term)
divided by n·‖A‖₁·ε is provably above the threshold, where some box is
empty, or where a diagonal interval has no positive value (hi ≤ 0).  What
it still catches: a wrong factor (another triangle's, a transposed one, a
negated column) moves ‖C·Cᴴ − A‖₁ by O(‖A‖), far more than the
perturbation term, which is O(n·s·max|l|) for a result scale s — so the
check is as sharp as the result type's step allows, and no sharper.  The
reference shown is the high-precision factor of A, rounded into the
expressed type and quantized (the zero point where no factor exists).
tests/spec/test_quantized_more_linalg.py checks the intervals against a
second quantize (tests/independent/quantized_reference.py) and the verdicts
against exact rationals.

The numeric helpers shared with triangular_solve (the working format, γ,
norms, the factorisation and substitution written once for mpmath and numpy
arrays, rounding, matrices to exercise) live here.
"""
from __future__ import annotations

import math
import weakref
from dataclasses import dataclass

import mpmath
import numpy as np

from ..dsl import COMPLEX, FLOAT, Attribute, BoolAttr, Characterized, Measured, Operand, OpSpec, Result, dim, rank
from ..dsl.quantization import Quantization
from ..exercise import Exercise
from ..quantized import QuantizedType, dequantize, is_quantized, quantize, same_baseline_type
from ..types import TensorType, from_bits, from_ordinals, long_double_exact, ordinals, to_bits

LAPACK_THRESHOLD = 30.0
MP_LIMIT = 200_000   # scalar multiply-adds the reference does in mpmath; past it, the working format


class MatrixOpSpec(OpSpec):
    """An op on batches of matrices: generated with the structured plan
    (generators/suite.py: solved shapes, corners, the op's built corners)
    although nothing in its declaration is what `OpSpec.structured` looks
    for (no variadic operands, array attributes or regions) — its structure
    is the square matrix its constraints demand."""

    @property
    def structured(self) -> bool:
        return True


# --------------------------------------------------------------------------
# Constraints
# --------------------------------------------------------------------------

def cholesky_c1(op):
    """(C1) `a` and `result` have the same type.
    v1.20 reads `baseline_type(a) = baseline_type(result)`: the same for every
    non-quantized type; per-tensor quantized tensors may differ in scales
    and zero points."""
    return same_baseline_type(op.a, op.result)


def cholesky_c2(op):
    """(C2) rank(`a`) >= 2."""
    return rank(op.a) >= 2


def cholesky_c3(op):
    """(C3) dim(`a`, -2) = dim(`a`, -1).

    Below rank 2 there is no dim -2: the rule is C2's there, this one holds."""
    if rank(op.a) < 2:
        return True
    return dim(op.a, rank(op.a) - 2) == dim(op.a, rank(op.a) - 1)


def infer(op):
    return {"result": op.a}


# --------------------------------------------------------------------------
# Numbers: the working format, bounds, norms (shared with triangular_solve)
# --------------------------------------------------------------------------

def component(et):
    return et.component if et.is_complex else et


def unit_roundoff(et) -> float:
    """ε of the criterion: the unit roundoff 2^-p of the (component) format."""
    return 2.0 ** -component(et).format.precision


def working(et):
    """(numpy real type, unit roundoff) the residual of `et` is computed in:
    float64 for formats of at most 24 bits (products exact), the 80-bit long
    double for f64 where the platform has one, else float64."""
    if component(et).format.precision <= 24:
        return np.float64, 2.0 ** -53
    if long_double_exact():   # spec.types: the 64-bit significand, in effect right now
        return np.longdouble, 2.0 ** -(np.finfo(np.longdouble).nmant + 1)
    return np.float64, 2.0 ** -53


def to_working(x, et) -> np.ndarray:
    """An array of `et` in its working format (exact: every format of the spec is a subset of it)."""
    real, _ = working(et)
    a = np.asarray(x)
    if et.is_complex:
        a = a.astype(np.complex128)
        return a.astype(np.clongdouble) if real is np.longdouble else a
    return a.astype(np.float64).astype(real)


def gamma(k: int, u: float) -> float:
    """Higham's γ(k) = k·u / (1 − k·u); +inf where k·u ≥ 1 (no bound)."""
    return k * u / (1 - k * u) if k * u < 1 else math.inf


def residual_floor(r: np.ndarray, err: np.ndarray, pert: np.ndarray, g: float) -> np.ndarray:
    """Element by element, a lower bound on |M(x)| for every x of a box of
    values that quantize to a result: r the residual computed at the box's
    centre, err its rounding, pert how far the box's radius can move it
    (|M(c + δ)| >= |M(c)| − reach(δ), triangle inequality per element),
    g the rounding of this bound itself.  Summed over a column, a lower
    bound on the column's 1-norm tighter than ‖r‖₁ − ‖pert‖₁: one wrong
    element's residual is not cancelled by the reach of the others' rows
    (a triangular_solve result moved four quantization steps in one element
    had passed so on about 1 draw in 200)."""
    return np.maximum(np.maximum(np.abs(r) - err, 0) * (1 - g) - pert, 0)


def column_norms(m: np.ndarray) -> np.ndarray:
    """‖column‖₁ of each column of a batch of matrices (…, n, k) -> (…, k)."""
    return np.abs(m).sum(axis=-2)


def one_norm(m: np.ndarray) -> np.ndarray:
    """‖M‖₁ (the largest column sum) of each matrix of a batch (…, n, k) -> (…);
    0 without columns (no maximum to take; with columns but no rows every
    sum is already 0)."""
    if m.shape[-1] == 0:
        return np.zeros(m.shape[:-2], dtype=np.abs(m).dtype)
    return column_norms(m).max(axis=-1)


def ct(m: np.ndarray) -> np.ndarray:
    """The conjugate transpose of each matrix of a batch."""
    return np.conj(np.swapaxes(m, -1, -2))


def enclosure(num, err, den, g) -> tuple:
    """(value, low, high) of num/den per element, where the computed `num`
    is within `err` of the true numerator and `num`, `den` and `err` carry
    a relative error of at most `g` each (their own sums).  0/0 is 0, x/0 is
    +inf."""
    num, err, den = (np.asarray(x, dtype=np.float64) for x in (num, err, den))
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(den > 0, num / np.where(den > 0, den, 1), np.where((num == 0) & (err == 0), 0.0, np.inf))
        lo_num = np.maximum(num - err, 0) * (1 - g)
        hi_num = (num + err) * (1 + g)
        lo = np.where(den > 0, lo_num / np.where(den > 0, den * (1 + g), 1), np.where(lo_num == 0, 0.0, np.inf))
        hi = np.where(den > 0, hi_num / np.where(den > 0, den * (1 - g), 1), np.where(hi_num == 0, 0.0, np.inf))
    return value, lo, hi


# --------------------------------------------------------------------------
# High precision: the algorithms written once, for mpmath and numpy arrays
# --------------------------------------------------------------------------

def _is_object(a) -> bool:
    return np.asarray(a).dtype == object


_RE = np.frompyfunc(lambda z: mpmath.re(z), 1, 1)
_CONJ = np.frompyfunc(lambda z: mpmath.conj(z), 1, 1)
_SQRT = np.frompyfunc(lambda z: mpmath.sqrt(z), 1, 1)


def _re(a):
    return _RE(a) if _is_object(a) else np.real(a)


def _conj(a):
    return _CONJ(a) if _is_object(a) else np.conj(a)


def _sqrt(a):
    return _SQRT(a) if _is_object(a) else np.sqrt(a)


def factor(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(L, order): the lower Cholesky factor of each Hermitian matrix of a
    batch (…, n, n) — mpmath numbers (object arrays) or numpy floats — by
    columns, and per matrix the order of the first leading minor that is not
    positive definite (0 where none: the factor is complete)."""
    n = A.shape[-1]
    L = np.zeros_like(A)
    failed = np.zeros(A.shape[:-2], dtype=np.int64)
    for j in range(n):
        row = L[..., j, :j]
        d = _re(A[..., j, j] - (row * _conj(row)).sum(axis=-1))
        bad = ~np.asarray(d > 0, dtype=bool)
        failed = np.where(bad & (failed == 0), j + 1, failed)
        s = _sqrt(np.where(bad, 1, d))
        L[..., j, j] = s
        below = A[..., j + 1:, j] - (L[..., j + 1:, :j] * _conj(row)[..., None, :]).sum(axis=-1)   # empty at j = n-1
        L[..., j + 1:, j] = below / np.asarray(s)[..., None]
    return L, failed


def substitute(T: np.ndarray, B: np.ndarray, lower: bool) -> np.ndarray:
    """X with T·X = B for each triangular matrix T of a batch (…, n, n),
    (lower or upper), B (…, n, k): substitution, row by row; T's diagonal
    must hold no zero."""
    n = T.shape[-1]
    X = np.zeros(B.shape, dtype=object if _is_object(T) or _is_object(B) else np.result_type(T, B))
    for i in (range(n) if lower else range(n - 1, -1, -1)):
        done = slice(0, i) if lower else slice(i + 1, n)
        s = B[..., i, :] - (T[..., i, done][..., :, None] * X[..., done, :]).sum(axis=-2)
        X[..., i, :] = s / T[..., i, i][..., None]
    return X


def exact(x, et) -> np.ndarray:
    """The values of an array of `et` as mpmath numbers (exact)."""
    a = np.asarray(x)
    if et.is_complex:
        flat = [mpmath.mpc(float(v.real), float(v.imag)) for v in a.astype(np.complex128).reshape(-1)]
    else:
        flat = [mpmath.mpf(float(v)) for v in a.astype(np.float64).reshape(-1)]
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(a.shape)


def high_precision(et, scalar_ops: int):
    """(how to read operands, precision in bits, words for the expectation):
    mpmath at 2p + 64 bits, or the working format past `MP_LIMIT`."""
    p = component(et).format.precision
    if scalar_ops <= MP_LIMIT:
        return (lambda x: exact(x, et)), 2 * p + 64, ""
    return (lambda x: to_working(x, et)), None, (f"reference computed in the working format "
                                                f"({scalar_ops} operations: past the oracle's mpmath budget)")


def rounded(values: np.ndarray, et) -> np.ndarray:
    """High-precision values (mpmath or numpy) rounded to nearest into `et`
    (NaN where a value is NaN); the reference is shown, never judged."""
    a = np.asarray(values)
    if not _is_object(a):
        with np.errstate(over="ignore", invalid="ignore"):
            return a.astype(np.complex128 if et.is_complex else np.float64).astype(et.numpy)
    p = component(et).format.precision

    def one(v):
        with mpmath.workprec(p):
            return float(+v)
    with np.errstate(over="ignore", invalid="ignore"):
        if et.is_complex:
            re = np.array([one(mpmath.re(v)) for v in a.reshape(-1)], dtype=np.float64)
            im = np.array([one(mpmath.im(v)) for v in a.reshape(-1)], dtype=np.float64)
            return (re + 1j * im).astype(et.numpy).reshape(a.shape)
        return np.array([one(v) for v in a.reshape(-1)], dtype=np.float64).astype(et.numpy).reshape(a.shape)


def condition_1(T) -> float:
    """κ₁ = ‖T‖₁·‖T⁻¹‖₁, largest over a batch (float64 / complex128; +inf
    where a matrix is singular there); nan for an empty batch."""
    T = np.asarray(T)
    if T.size == 0:
        return float("nan")
    T = T.astype(np.complex128 if np.iscomplexobj(T) else np.float64).reshape((-1,) + T.shape[-2:])
    out = 0.0
    for m in T:
        if not np.isfinite(m).all():
            return math.inf
        try:
            out = max(out, float(np.linalg.norm(m, 1) * np.linalg.norm(np.linalg.inv(m), 1)))
        except np.linalg.LinAlgError:
            return math.inf
    return out


# --------------------------------------------------------------------------
# Semantics
# --------------------------------------------------------------------------

STATEMENT = ("‖A − L·Lᴴ‖₁ / (n·‖A‖₁·ε) (LAPACK dpot01/zpot01), A the Hermitian matrix of the triangle read, "
             "L the result's triangle; a real positive diagonal")


def threshold(n: int, et) -> float:
    """The criterion's bound (module docstring): max(30, 2·γ(n+3)/ε)."""
    u = unit_roundoff(et)
    return max(LAPACK_THRESHOLD, 2 * gamma(n + 3, u) / u)


def triangle(n: int, lower: bool) -> np.ndarray:
    """The (n, n) mask of the triangle `lower` names, diagonal included."""
    return np.tril(np.ones((n, n), dtype=bool)) if lower else np.triu(np.ones((n, n), dtype=bool))


def hermitian(a: np.ndarray, lower: bool) -> np.ndarray:
    """The Hermitian matrices the triangle `lower` names defines (its
    diagonal's real part), whatever the other triangle holds: how LAPACK
    reads the matrix."""
    n = a.shape[-1]
    keep = triangle(n, lower) & ~np.eye(n, dtype=bool)
    part = np.where(keep, a, 0)
    d = np.real(np.diagonal(a, axis1=-2, axis2=-1)) if not _is_object(a) else _re(np.diagonal(a, axis1=-2, axis2=-1))
    out = part + _conj(np.swapaxes(part, -1, -2))
    idx = np.arange(n)
    out[..., idx, idx] = d
    return out


def criterion(op, operands, result) -> Measured:
    """The property every correct factor has (module docstring), on every
    matrix of the batch; `value` the largest ratio.  On quantized tensors,
    the property restated on storage values (`_criterion_quantized`)."""
    if is_quantized(op.a) or is_quantized(op.result):
        return _criterion_quantized(op, operands, result)
    (a,) = operands
    et = op.a.element_type
    shape = tuple(int(d) for d in op.a.shape)
    n, lower = shape[-1], bool(op.lower)
    thr = threshold(n, et)
    scored = np.broadcast_to(triangle(n, lower), shape)
    if 0 in shape:
        return Measured(0.0, thr, True, "no element", scored)
    _, uw = working(et)
    A = hermitian(to_working(a, et), lower)
    F = np.where(triangle(n, lower), to_working(result, et), 0)
    L = F if lower else ct(F)
    finite = np.isfinite(L).all(axis=(-2, -1))
    L = np.where(np.isfinite(L), L, 0)
    u = unit_roundoff(et)
    norm_a = one_norm(A)
    g = gamma(n + 3, uw)
    value, lo, hi = enclosure(one_norm(L @ ct(L) - A),
                              gamma(2 * n + 2, uw) * one_norm(np.abs(L) @ np.abs(ct(L)) + np.abs(A)), n * norm_a * u, g)
    diag = np.diagonal(L, axis1=-2, axis2=-1)
    positive = (np.real(diag) > 0).all(axis=-1)
    imag = np.zeros(value.shape)
    if et.is_complex:
        imag, imag_lo, imag_hi = enclosure((np.abs(np.imag(diag)) * np.abs(diag)).max(axis=-1), 0, n * norm_a * u, g)
        lo, hi = np.maximum(lo, imag_lo), np.maximum(hi, imag_hi)
    value = np.where(finite, np.maximum(value, imag), np.inf)
    lo, hi = np.where(finite, lo, np.inf), np.where(finite, hi, np.inf)
    ok = finite & positive & (lo <= thr)
    worst = np.unravel_index(int(np.argmax(np.where(ok, value, np.inf))), value.shape) if value.size else ()
    at = f" at batch index {list(map(int, worst))}" if value.ndim else ""
    detail = (f"‖A − L·Lᴴ‖₁/(n·‖A‖₁·ε) = {float(value[worst]):.3g}{at} "
              f"(enclosure from {float(lo[worst]):.3g}; threshold {thr:g})")
    if not finite.all():
        detail += f"; NaN or inf in the triangle read ({int((~finite).sum())} matrices)"
    if not positive.all():
        detail += f"; a diagonal entry with real part ≤ 0 ({int((~positive).sum())} matrices)"
    return Measured(float(np.max(value)), thr, bool(ok.all()), detail, scored, float(np.max(lo)), float(np.max(hi)))


# --------------------------------------------------------------------------
# Quantized tensors: the property restated on storage values (module docstring)
# --------------------------------------------------------------------------

def expressed(op):
    """The same op on the expressed types (the `op` of dequantize_op_quantize)."""
    def retype(t):
        if isinstance(t, TensorType) and isinstance(t.element_type, QuantizedType):
            return TensorType(t.shape, t.element_type.expressed_type)
        return t
    return op.spec.instance({k: retype(v) for k, v in op.operands.items()}, dict(op.attributes),
                            {k: retype(v) for k, v in op.results.items()})


def dequantized(x, t: TensorType) -> np.ndarray:
    """Storage values of `t` dequantized as the spec does (spec/quantized.py), in `t`'s expressed type."""
    return dequantize(np.asarray(x).astype(np.int64), t.element_type)


def quantized_reference(x, t: TensorType) -> np.ndarray:
    """A float result (of the expressed type) quantized into `t`: storage
    values, the zero point (clamped) where quantize is undefined (NaN: no
    factor or no solution exists — shown, never judged)."""
    q = t.element_type
    got = quantize(np.asarray(x).astype(q.expressed_type.numpy), q)
    zp = min(max(int(q.zero_points[0]), int(q.storage_min)), int(q.storage_max))
    return np.asarray(np.ma.filled(got, zp)).astype(q.numpy)


def _largest_ordinal(et) -> int:
    """The ordinal (spec.types.ordinals) of the largest finite value of `et`."""
    import ml_dtypes
    big = np.asarray(ml_dtypes.finfo(et.numpy).max, dtype=et.numpy)
    return int(ordinals(to_bits(big, et), et))


def _quantized_at(ords: np.ndarray, q: QuantizedType) -> np.ndarray:
    """quantize of the expressed-type values with ordinals `ords` (finite),
    as int64; where the spec's last convert is undefined there (a rounded
    storage bound outside the storage type), past that bound — so the map
    stays non-decreasing."""
    et = q.expressed_type
    x = np.asarray(from_bits(from_ordinals(ords, et), et)).astype(et.numpy)
    got = quantize(x, q)
    data = np.asarray(np.ma.getdata(got)).astype(np.int64)
    past = np.where(np.asarray(ords) < 0, q.storage_type.min_value - 1, q.storage_type.max_value + 1)
    return np.where(np.ma.getmaskarray(got), past, data)


def preimage(storage, q: QuantizedType) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi), float64 arrays of `storage`'s shape: the least and greatest
    finite value x of the expressed type with quantize(x) = the storage
    value — an interval, since quantize is non-decreasing — NaN for both
    where no finite value quantizes to it.  Bisection over the expressed
    type's ordinals with the spec's own `quantize`, on the distinct values."""
    s = np.asarray(storage).astype(np.int64)
    want, back = np.unique(s.reshape(-1), return_inverse=True)
    top = _largest_ordinal(q.expressed_type)

    def bisect(first: bool) -> np.ndarray:
        a = np.full(want.shape, -top, dtype=np.int64)
        b = np.full(want.shape, top, dtype=np.int64)
        while (a < b).any():
            m = (a + b + (0 if first else 1)) // 2
            v = _quantized_at(m, q)
            if first:   # the least ordinal whose value quantizes to ≥ want
                a, b = np.where(v >= want, a, m + 1), np.where(v >= want, m, b)
            else:       # the greatest ordinal whose value quantizes to ≤ want
                a, b = np.where(v <= want, m, a), np.where(v <= want, b, m - 1)
        return a
    lo_o, hi_o = bisect(True), bisect(False)
    et = q.expressed_type
    lo = np.asarray(from_bits(from_ordinals(lo_o, et), et)).astype(np.float64)
    hi = np.asarray(from_bits(from_ordinals(hi_o, et), et)).astype(np.float64)
    empty = (_quantized_at(lo_o, q) != want) | (_quantized_at(hi_o, q) != want) | (lo_o > hi_o)
    lo, hi = np.where(empty, np.nan, lo), np.where(empty, np.nan, hi)
    return lo[back].reshape(s.shape), hi[back].reshape(s.shape)


def box(lo: np.ndarray, hi: np.ndarray, bound=np.inf) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(centre, half-width, empty) of the intervals [lo, hi] ∩ [−bound,
    bound] in float64, the half-width rounded up so that the box holds
    every point of the interval."""
    lo2, hi2 = np.maximum(lo, -np.asarray(bound)), np.minimum(hi, np.asarray(bound))
    empty = np.isnan(lo) | np.isnan(hi) | (lo2 > hi2)
    lo2, hi2 = np.where(empty, 0.0, lo2), np.where(empty, 0.0, hi2)
    c = lo2 / 2 + hi2 / 2
    r = np.nextafter(np.maximum(hi2 - c, c - lo2), np.inf)
    return c, r, empty


def _criterion_quantized(op, operands, result) -> Measured:
    """The property restated on storage values (module docstring): refused
    only where no factor in the box of values that quantize to the result
    can have it."""
    (a,) = operands
    q = op.result.element_type
    et = q.expressed_type
    shape = tuple(int(d) for d in op.a.shape)
    n, lower = shape[-1], bool(op.lower)
    thr = threshold(n, et)
    scored = np.broadcast_to(triangle(n, lower), shape)
    if 0 in shape:
        return Measured(0.0, thr, True, "no element", scored)
    _, uw = working(et)
    u = unit_roundoff(et)
    A = hermitian(dequantized(a, op.a).astype(np.float64), lower)
    norm_a = one_norm(A)
    diag_a = np.diagonal(A, axis1=-2, axis2=-1)
    with np.errstate(over="ignore", invalid="ignore"):
        bound = np.sqrt(np.maximum(diag_a + thr * n * norm_a[..., None] * u, 0)) * (1 + 2.0 ** -40)
    lo, hi = preimage(result, q)
    if not lower:   # L = Fᴴ of the upper triangle: the intervals transposed
        lo, hi = np.swapaxes(lo, -1, -2), np.swapaxes(hi, -1, -2)
    mask = triangle(n, True)
    C, R, empty = box(lo, hi, bound[..., :, None])
    C, R, empty = np.where(mask, C, 0.0), np.where(mask, R, 0.0), empty & mask
    nonempty = ~empty.any(axis=(-2, -1))
    top = np.where(empty, -np.inf, np.minimum(hi, bound[..., :, None]))   # the greatest value each interval holds
    positive = (np.diagonal(top, axis1=-2, axis2=-1) > 0).all(axis=-1)
    g = gamma(n + 3, uw)
    err = gamma(2 * n + 2, uw) * (np.abs(C) @ np.abs(C).swapaxes(-1, -2) + np.abs(A))
    absC = np.abs(C)
    pert = (R @ absC.swapaxes(-1, -2) + absC @ R.swapaxes(-1, -2) + R @ R.swapaxes(-1, -2)) * (1 + gamma(2 * n + 4, uw))
    den = n * norm_a * u
    with np.errstate(divide="ignore", invalid="ignore"):
        low_num = one_norm(residual_floor(C @ C.swapaxes(-1, -2) - A, err, pert, g)) * (1 - g)
        low = np.where(den > 0, low_num / np.where(den > 0, den * (1 + g), 1), np.where(low_num == 0, 0.0, np.inf))
    ok = nonempty & positive & (low <= thr)
    worst = np.unravel_index(int(np.argmax(np.where(ok, low, np.inf))), low.shape) if low.size else ()
    at = f" at batch index {list(map(int, worst))}" if low.ndim else ""
    detail = (f"least ‖A − L·Lᴴ‖₁/(n·‖A‖₁·ε) over the factors that quantize to the result: "
              f"≥ {float(low[worst]):.3g}{at} (threshold {thr:g}; A dequantized)")
    if not nonempty.all():
        detail += (f"; a storage value no factor with the property quantizes to "
                   f"({int((~nonempty).sum())} matrices)")
    if not positive.all():
        detail += f"; a diagonal entry no positive value quantizes to ({int((~positive).sum())} matrices)"
    return Measured(float(np.max(low)), thr, bool(ok.all()), detail, scored, float(np.max(low)), float(np.max(low)))


def _operations(op) -> int:
    shape = [int(d) for d in op.a.shape]
    return int(np.prod(shape[:-2], dtype=np.int64)) * shape[-1] ** 3 // 3 + 1


def reference(op, a) -> np.ndarray:
    """The factor in high precision, rounded; zeros in the opposite
    triangle (as the seed's example prints); NaN where no factor exists.
    On quantized tensors: that of the dequantized matrix, quantized."""
    if is_quantized(op.a):
        return quantized_reference(reference(expressed(op), dequantized(a, op.a)), op.result)
    et, lower = op.a.element_type, bool(op.lower)
    n = int(op.a.shape[-1])
    if 0 in np.shape(a):
        return np.zeros(np.shape(a), et.numpy)
    read, prec, _ = high_precision(et, _operations(op))
    with mpmath.workprec(prec or 53):
        L, failed = factor(hermitian(read(a), lower))
        F = L if lower else _conj(np.swapaxes(L, -1, -2))
        out = rounded(np.where(triangle(n, lower), F, 0), et)
    bad = np.broadcast_to((failed > 0)[..., None, None], out.shape)
    return np.where(bad, np.array(np.nan).astype(et.numpy), out)


def undefined(op, a) -> str | None:
    """Why the seed makes this input's behaviour undefined (module docstring), or None
    (on quantized tensors: the dequantized matrix's)."""
    if is_quantized(op.a):
        return undefined(expressed(op), dequantized(a, op.a))
    et, lower = op.a.element_type, bool(op.lower)
    if 0 in np.shape(a):
        return None
    x = np.asarray(a).astype(np.complex128 if et.is_complex else np.float64)
    if not np.isfinite(x).all():
        return "a NaN or ±inf in the matrix: not Hermitian positive-definite (the seed: undefined behaviour)"
    if (x != np.conj(np.swapaxes(x, -1, -2))).any():
        return ("the matrix is not Hermitian (the triangle `lower` does not name differs from the conjugate of the "
                "one it names, or the diagonal has an imaginary part): the seed makes the behaviour undefined")
    read, prec, _ = high_precision(et, _operations(op))
    with mpmath.workprec(prec or 53):
        _, failed = factor(hermitian(read(a), lower))
    if (failed > 0).any():
        where = np.argwhere(failed > 0)[0]
        at = f" (batch index {list(map(int, where))})" if failed.ndim else ""
        return (f"the matrix is not positive definite: its leading minor of order {int(failed[tuple(where)])} "
                f"is not{at} — the seed makes the behaviour undefined")
    return None


def condition(op, a) -> float:
    """κ₁(A) of the Hermitian matrix read, largest over the batch (dequantized where quantized)."""
    if is_quantized(op.a):
        return condition(expressed(op), dequantized(a, op.a))
    return condition_1(hermitian(np.asarray(a).astype(np.complex128 if op.a.element_type.is_complex
                                                      else np.float64), bool(op.lower)))


# --------------------------------------------------------------------------
# Exercise: matrices with a stated conditioning
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Plan:
    """What to draw for one built instance: `matrix` ("dominant",
    "graded", "not hermitian", "indefinite", … — each op reads its own),
    the target condition number `kappa` of a graded matrix, and `survey`:
    why the case is a survey (the seed's undefined behaviour), or ""."""

    matrix: str = "dominant"
    kappa: float = 1.0
    survey: str = ""


PLANS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # built instance -> Plan (its values)

OFF = (-2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0)   # exact in every format of the spec


def _draw_off(shape, et, rng) -> np.ndarray:
    x = np.asarray(rng.choice(OFF, size=shape), dtype=np.float64)
    if et.is_complex:
        x = x + 1j * np.asarray(rng.choice(OFF, size=shape), dtype=np.float64)
    return x


def uniform_values(shape, et, rng, bound: float) -> np.ndarray:
    """Uniform values in (-bound, bound) (both components for complex)
    rounded into `et` (numpy's rounding: deterministic), as float64 / complex128."""
    def one():
        return np.asarray(rng.uniform(-bound, bound, size=shape)).astype(component(et).numpy).astype(np.float64)
    return one() + 1j * one() if et.is_complex else one()


def dominant_hermitian(n: int, et, rng) -> np.ndarray:
    """A Hermitian matrix with random entries of modulus below 2√2 off the
    diagonal (rounded into the format) and a power-of-two diagonal above
    each row's sum of moduli: strictly diagonally dominant, so positive
    definite, exactly representable in every format (the diagonal is at
    most 2^⌈log2(2.9·n)⌉); its factor is irrational, so every
    implementation rounds."""
    m = np.tril(uniform_values((n, n), et, rng, 2.0), -1)
    h = m + np.conj(m.T)
    rows = np.abs(h).sum(axis=1)
    np.fill_diagonal(h, 2.0 ** np.ceil(np.log2(rows + 1)))
    return h


def _positive_definite(h: np.ndarray, et) -> bool:
    with mpmath.workprec(2 * component(et).format.precision + 64):
        _, failed = factor(exact(h, et))
    return bool((failed == 0).all())


def graded_hermitian(n: int, et, rng, kappa: float) -> np.ndarray:
    """3·M·D²·Mᴴ with M unit lower triangular (entries of OFF scaled by
    2^-⌈log2 n⌉ below the diagonal) and D = diag(2^-s), s from 0 up to
    log2(kappa)/2: κ₂ near kappa.  Every product and sum is exact in
    float64 (dyadic numbers spanning at most 53 bits for kappa ≤ 2^40), so
    no BLAS rounding decides the values and suites stay byte-identical on
    every machine; then rounded into the format, made exactly Hermitian
    from its lower triangle and checked positive definite in high precision
    (else a dominant matrix).  The factor 3 makes the Cholesky factor
    (√3·M·D before the rounding into the format) irrational: without it
    the factor is dyadic and every implementation computes it exactly, so
    the ill-conditioned cases would test no rounding at all."""
    steps = np.round(np.arange(n) * math.log2(kappa) / 2 / max(n - 1, 1))
    m = np.tril(_draw_off((n, n), et, rng), -1) * 2.0 ** -math.ceil(math.log2(max(n, 2))) + np.eye(n)
    d2 = 2.0 ** (-2 * steps)
    h = 3 * ((m * d2) @ np.conj(m.T))
    low = np.tril(h.astype(et.numpy).astype(np.complex128 if et.is_complex else np.float64), -1)
    diag = np.real(np.diagonal(h)).astype(component(et).numpy).astype(np.float64)
    h = low + np.conj(low.T) + np.diag(diag)
    return h if _positive_definite(h, et) else dominant_hermitian(n, et, rng)


def operand_values(op, name, k, t, rng):
    """The matrices of `a`: Hermitian positive-definite, dominant (well
    conditioned) unless the instance was built with another `Plan`; survey
    plans break what the seed demands (Hermitian, positive definite)."""
    if name != "a":
        return None
    shape = tuple(int(d) for d in t.shape)
    if len(shape) < 2 or shape[-1] != shape[-2]:   # an invalid program's operand: the usual values
        return None
    plan = PLANS.get(op, Plan())
    et = t.element_type
    n, batch = shape[-1], shape[:-2]
    out = np.zeros(shape, dtype=np.complex128 if et.is_complex else np.float64)
    for idx in np.ndindex(*batch):
        if plan.matrix == "graded":
            h = graded_hermitian(n, et, rng, plan.kappa)
        else:
            h = dominant_hermitian(n, et, rng)
        if plan.matrix == "not hermitian":   # the triangle `lower` does not name: other values
            other = ~triangle(n, bool(op.lower))
            h = np.where(other, h + _draw_off((n, n), et, rng) + 0.25, h)
        elif plan.matrix == "indefinite":    # one negative pivot
            h[n - 1, n - 1] = -h[n - 1, n - 1]
        out[idx] = h
    return out


# (note, element type, shape, lower, plan): the matrices built by hand for every type they name
_F = ("f32", "f64", "complex<f32>", "complex<f64>")
_KAPPA = {"f16": 1e2, "f32": 1e5, "complex<f32>": 1e5, "f64": 1e12, "complex<f64>": 1e12}
NOT_HERMITIAN = ("not Hermitian: the triangle not read holds other values — the seed makes the behaviour "
                 "undefined (LAPACK reads one triangle)")
INDEFINITE = "not positive definite (a negative pivot) — the seed makes the behaviour undefined"


def _built(et_name: str) -> list:
    tiny = et_name not in _F and et_name != "f16"
    out = [("well-conditioned (diagonally dominant) 4x4, lower", (4, 4), True, Plan()),
           ("well-conditioned, upper (lower left out: default false), batch 2x3 of 3x3", (2, 3, 3, 3), None, Plan()),
           ("1x1, upper", (1, 1), False, Plan())]
    if et_name in _KAPPA:
        k = _KAPPA[et_name]
        out += [(f"ill-conditioned (target κ₂ ≈ {k:.0e}) 5x5, lower", (5, 5), True, Plan("graded", k)),
                (f"ill-conditioned (target κ₂ ≈ {k:.0e}) 6x6, upper", (6, 6), False, Plan("graded", k))]
    if not tiny:
        out.append(("well-conditioned 12x12, lower (long inner products)", (12, 12), True, Plan()))
    if et_name in ("f32", "complex<f32>"):
        out += [(NOT_HERMITIAN, (3, 3), True, Plan("not hermitian", survey=NOT_HERMITIAN)),
                (INDEFINITE, (3, 3), False, Plan("indefinite", survey=INDEFINITE))]
    return out


def built_corners(spec, skels, rng):
    """Per element type: dominant and ill-conditioned matrices in both
    triangles, a batch, 1x1, a 12x12; for f32 and complex<f32> the survey
    cases of undefined behaviour."""
    from ..types import TensorType
    out = []
    for et in spec.operands[0].types:
        for note, shape, lower, plan in _built(et.name):
            skel = next((s for s in skels if s.operand_types[0] == et and s.attr_dict.get("lower") == lower), None)
            if skel is None:
                continue
            t = TensorType(shape, et)
            inst = spec.instance({"a": t}, {"lower": bool(lower)}, {"result": t})
            PLANS[inst] = plan
            out.append((note, skel, inst))
    return out


def survey_when(op) -> str | None:
    plan = PLANS.get(op)
    return plan.survey if plan is not None and plan.survey else None


def quantized_example(types: dict):
    """A valid cholesky whose element types are `types` (by name: a,
    result; f32 where not given): a batch of two 4x4 matrices, the upper
    triangle read (so the restated property reads transposed intervals) —
    the structure on which the quantized stream builds its value cases per
    pairing and breaks C1 alone."""
    from ..types import element_type as named
    f32 = named("f32")
    t = {n: TensorType((2, 4, 4), types.get(n, f32)) for n in ("a", "result")}
    return SPEC.instance({"a": t["a"]}, {"lower": False}, {"result": t["result"]})


SPEC = MatrixOpSpec(
    mnemonic="cholesky",
    operands=(Operand("a", FLOAT + COMPLEX),),
    attributes=(Attribute("lower", BoolAttr(), optional=True, default=False),),
    results=(Result("result", FLOAT + COMPLEX),),
    constraints=(cholesky_c1, cholesky_c2, cholesky_c3),
    infer=infer,
    semantics=Characterized(reference=reference, criterion=criterion, undefined=undefined, condition=condition,
                            statement=STATEMENT),
    exercise=Exercise(built_corners=built_corners, operand_values=operand_values, survey_when=survey_when),
    # v1.20: a and result "or per-tensor quantized tensor"; dequantize_op_quantize, the float op judged by its
    # property restated on storage values (module docstring, `_criterion_quantized`); values from its example only
    quantization=Quantization(example=quantized_example, skeletons=False),
)
