"""dot_general's `algorithm` (StableHLO v1.20, inputs I8–I14, constraints C21–C24): its spelling, its
precision types, and the bound on what an algorithm may compute.

Declaration.  v1.20 lists seven inputs — `lhs_precision_type`,
`rhs_precision_type`, `accumulation_type` ("FloatType or TensorFloat32"),
`lhs_component_count`, `rhs_component_count`, `num_primitive_operations`
(si32 constants) and `allow_imprecise_accumulation` (bool) — written as one
MLIR attribute, `algorithm = #stablehlo.dot_algorithm<lhs_precision_type =
tf32, …, allow_imprecise_accumulation = false>` (a `Group`; jaxlib 0.10.2
prints all seven fields, and the pretty form's `algorithm = <…>` is the same
attribute).  All seven absent is v1.20's "empty algorithm"
(`is_empty_algorithm`): the precision_config then takes effect.  tf32 is a
*precision type* only — "Precision types are independent from the storage
types of the inputs and the output" — so it is declared here (`TF32`,
`PRECISION_FORMATS`), never as a tensor element type.  The kinds below are
not the solver's (`IntAttr`, `BoolAttr` are): the seed's skeletons and z3
draws never see the algorithm, so every seed case stays byte-identical, and
the algorithm's cases are hand-built (`cases`, a stream after every other).

What an algorithm computes (v1.20 Semantics, "dot_general"): the operands
"are rounded to" lhs/rhs_precision_type, the decomposing algorithms
"decompose the LHS and/or RHS into multiple components and do multiple
'primitive' dot operations on those values" (Henry, Tang, Heinecke,
"Leveraging the bfloat16 Artificial Intelligence Datatype For
Higher-Precision Computations", arXiv:1904.06376 — the paper the spec
cites), accumulated in accumulation_type.

Reading the counts (`Algorithm.scheme`).  jaxlib writes BF16_BF16_F32_X3 as
counts 1, 1 and 3 primitive operations, and X6 as 1, 1, 6, while the
spec's own example of bf16_6x writes counts 3, 3, 6: the counts do not tell
how many parts an operand is cut into (a finding: `FINDING_COUNTS`).  So the
scheme is read from num_primitive_operations n and the counts c_l, c_r:

* n = c_l·c_r: every product of c_l parts of lhs and c_r parts of rhs
  (1, 1, 1: the plain algorithm; bf16_9x as 3, 3, 9);
* n = k(k+1)/2 with each count 1 or k: Henry et al.'s triangular scheme,
  k parts each and the products a_i·b_j with i + j < k (X3: hi·hi + hi·lo
  + lo·hi; X6: the six with i + j ≤ 2);
* anything else: a decomposition the spec does not define — any value,
  labelled.

The split.  r_0 = x, x_i = P(r_i), r_{i+1} = r_i − x_i (exact: x_i agrees
with r_i on its leading bits, so the difference is representable in the
storage format, Sterbenz), x = x_0 + … + x_{k−1} + r_k.  v1.20 says the
operands "are rounded to" the precision types and names no mode.  Where
the algorithm does not split (k = 1) we read the spec's `convert`: to
nearest, ε = 2^−p (what XLA's convert does).  Where it splits, the parts
are read as rounded in *any* direction, ε = 2^(1−p) (one ULP of 1: a
directed rounding's relative error): XLA's GPU rewriter of the X3/X6
algorithms truncates the parts by masking bits.  Either way
|r − P(r)| ≤ ε|r| + η with η = the format's smallest subnormal (an
underflowing part), so by induction

    |r_i| ≤ R_i = ε^i·|x| + η/(1 − ε)   (i ≥ 1),  R_0 = |x|,
    |x_i| ≤ A_i = R_i + R_{i+1}.

Bound (`element`).  With X = Σ_i x_i = x − r_k and Y likewise,
xy − XY = x·r_k(y) + r_k(x)·y − r_k(x)·r_k(y), so the kept products K differ
from the exact product by at most

    E(x, y) = |x|·R_k(y) + R_k(x)·|y| + R_k(x)·R_k(y) + Σ_{(i,j)∉K} A_i(x)·A_j(y).

The N = |K|·n primitive products (n: the contracting size) are then formed
and summed in accumulation_type in any order — per primitive dot first or
all at once, each is one summation tree over N terms — which Higham's
Theorem 3.1 bounds by γ_N·Σ|x_i·y_j| (each term through one product
rounding and at most N − 1 additions; γ_N = Nu/(1 − Nu)) plus N/2 of the
format's smallest subnormal for underflowing products (as
`schedule.dot_range`), with Σ|x_i·y_j| ≤ Σ_K A_i(x)·A_j(y).  So the value
accumulated lies in [s − B, s + B], s = Σ x·y exactly, B = Σ E + γ_N·Σ_K A·A
+ N·η_acc/2; the answer is that range rounded outward into the accumulation
type (its values are the accumulator's), which the judge then rounds
outward into the result's type — monotone rounding of any value inside
stays inside.  `allow_imprecise_accumulation = true` ("accumulate in lower
precision for some steps", cuBLAS's FAST_ACCUM) names no precision: read as
the least precise of the three declared types (a reading, `IMPRECISE_WHY`).

Per preset, the half-width relative to Σ|x·y| to first order (η terms
left out; u = 2^−24, the f32 accumulator's; n the contracting size):

* BF16_BF16_F32: k = 1, ε = 2^−8: 2ε + ε² + γ_n ≈ 2^−7 + n·2^−24;
* BF16_BF16_F32_X3: k = 2, ε = 2^−7: residuals 2ε², the dropped lo·lo ε²:
  3ε² + γ_{3n} ≈ 3·2^−14 + 3n·2^−24;
* BF16_BF16_F32_X6: k = 3, ε = 2^−7: residuals 2ε³, the dropped products
  with i + j = 3 (mid·lo, lo·mid) 2ε³, with i + j = 4 ε⁴: ≈ 4ε³ + γ_{6n}
  ≈ 2^−19 + 6n·2^−24;
* TF32_TF32_F32: k = 1, ε = 2^−11: 2^−10 + γ_n; TF32_TF32_F32_X3: ε = 2^−10,
  3·2^−20 + γ_{3n};
* F32_F32_F32 and F64_F64_F64 on operands the type holds: the split is exact
  (a value of P rounds to itself: every residual 0): γ_n of the type;
* F16_F16_F16 on f16 operands: γ_n of f16 (products rounded in f16).

`tests/oracle/test_dot_algorithm.py` holds the bound against every way the
preset may compute on small cases (parts rounded to nearest or, when
split, truncated; every summation order; products rounded in the
accumulator) and holds the width to these figures.

Special values: a NaN, or ∞·0, makes the element NaN; otherwise an
infinite operand gives IEEE's sum of the infinite products where the
algorithm does not split, and under a split (k > 1) also NaN, labelled
(∞ − P(∞) is ∞ − ∞).  An operand past the precision type's range, or a sum
whose magnitude may reach the accumulation type's overflow threshold:
any value, labelled.  Non-float operands (the spec's own example: si64
with a tf32 algorithm, the identity): the algorithm is about floats; the
op's integer meaning stands (a reading).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .. import bounds
from ..dsl import ImplDefined, Range
from ..dft import round_fraction
from ..schedule import OVERFLOW, any_value, exact_dot, gamma, overflow_threshold, special_sum
from ..types import FLOAT_TYPES_V1_20, FloatFormat

GROUP = "algorithm"
DIALECT_ATTR = "stablehlo.dot_algorithm"
FIELDS = ("lhs_precision_type", "rhs_precision_type", "accumulation_type", "lhs_component_count",
          "rhs_component_count", "num_primitive_operations", "allow_imprecise_accumulation")

# TensorFloat-32: f32's 8 exponent bits and 10 stored significand bits (NVIDIA's TF32; StableHLO's
# `tf32` type, mlir's `tf32`).  A precision type only: no tensor holds it.
TF32 = FloatFormat("tf32", 8, 10)
PRECISION_FORMATS = {"tf32": TF32, **{t.mlir: t.format for t in FLOAT_TYPES_V1_20}}

FINDING_COUNTS = ("jaxlib 0.10.2 writes BF16_BF16_F32_X3 as lhs_component_count = 1, rhs_component_count = 1, "
                  "num_primitive_operations = 3 (X6: 1, 1, 6), while v1.20's own bf16_6x example writes 3, 3, 6: "
                  "the counts do not say how many components an operand is split into")
IMPRECISE_WHY = ("allow_imprecise_accumulation: v1.20 permits accumulating 'in lower precision for some steps' "
                 "without naming it; read as the least precise of the algorithm's three types")
UNDEFINED = "any value: an algorithm whose decomposition v1.20 does not define (num_primitive_operations vs counts)"
SPLIT_INF = "NaN: the split of an infinite operand (∞ − ∞)"
PRECISION_OVERFLOW = "any value: an operand past the precision type's range"
ALGORITHM_WHY = "dot_general's algorithm (v1.20): operands rounded to the precision types, summed in the accumulation type"


# --------------------------------------------------------------------------
# Attribute kinds (inside #stablehlo.dot_algorithm<…>)
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class PrecisionTypeAttr:
    """A precision type (v1.20 I8–I10: "FloatType or TensorFloat32"), written bare: `tf32`, `bf16`, `f32`."""

    def to_mlir(self, v) -> str:
        return str(v)

    to_group = to_mlir

    def from_mlir(self, text: str) -> str:
        t = text.strip()
        if t not in PRECISION_FORMATS:
            raise ValueError(f"{t!r} is not a precision type (FloatType or tf32)")
        return t


@dataclass(frozen=True)
class CountAttr:
    """A "constant of type si32" inside the group, written as a bare integer.  Not an `IntAttr`: the
    solver leaves it alone (module docstring)."""

    def to_mlir(self, v) -> str:
        return str(v)

    to_group = to_mlir

    def from_mlir(self, text: str) -> int:
        return int(text.split(":")[0].strip())


@dataclass(frozen=True)
class FlagAttr:
    """A "constant of type bool" inside the group: `true` / `false`.  Not a `BoolAttr` (a skeleton's axis)."""

    def to_mlir(self, v) -> str:
        return "true" if v else "false"

    to_group = to_mlir

    def from_mlir(self, text: str) -> bool:
        t = text.strip()
        if t not in ("true", "false"):
            raise ValueError(f"expected true or false, got {text!r}")
        return t == "true"


KINDS = {"lhs_precision_type": PrecisionTypeAttr(), "rhs_precision_type": PrecisionTypeAttr(),
         "accumulation_type": PrecisionTypeAttr(), "lhs_component_count": CountAttr(),
         "rhs_component_count": CountAttr(), "num_primitive_operations": CountAttr(),
         "allow_imprecise_accumulation": FlagAttr()}


# --------------------------------------------------------------------------
# The algorithm
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Algorithm:
    """The seven fields, as a program states them."""

    lhs_precision_type: str
    rhs_precision_type: str
    accumulation_type: str
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False

    def attrs(self) -> dict:
        return {f: getattr(self, f) for f in FIELDS}

    def scheme(self):
        """(k_lhs, k_rhs, kept products as a frozenset of (i, j)), or None where the
        counts define no decomposition (module docstring: "Reading the counts")."""
        cl, cr, n = self.lhs_component_count, self.rhs_component_count, self.num_primitive_operations
        if min(cl, cr, n) < 1:
            return None
        if n == cl * cr:
            return cl, cr, frozenset((i, j) for i in range(cl) for j in range(cr))
        k = _triangular_root(n)
        if k is not None and cl in (1, k) and cr in (1, k):
            return k, k, frozenset((i, j) for i in range(k) for j in range(k) if i + j < k)
        return None

    def formats(self):
        return (PRECISION_FORMATS[self.lhs_precision_type], PRECISION_FORMATS[self.rhs_precision_type],
                PRECISION_FORMATS[self.accumulation_type])

    def summing_format(self) -> FloatFormat:
        """The format the sum's bound takes: the accumulation type, or the least precise of the three
        where imprecise accumulation is allowed (`IMPRECISE_WHY`)."""
        lf, rf, af = self.formats()
        if not self.allow_imprecise_accumulation:
            return af
        return min((lf, rf, af), key=lambda f: (f.precision, f.max_finite))


def _triangular_root(n: int) -> int | None:
    k = int((math.isqrt(8 * n + 1) - 1) // 2)
    return k if k * (k + 1) // 2 == n else None


# The presets jax.lax.DotAlgorithmPreset lowers to, as jaxlib 0.10.2 prints them (tests/spec/
# test_dot_algorithm.py lowers each and compares).  CPU: jax lowers the first six only.
PRESETS = {
    "F16_F16_F16": Algorithm("f16", "f16", "f16"),
    "BF16_BF16_F32": Algorithm("bf16", "bf16", "f32"),
    "BF16_BF16_F32_X3": Algorithm("bf16", "bf16", "f32", 1, 1, 3),
    "BF16_BF16_F32_X6": Algorithm("bf16", "bf16", "f32", 1, 1, 6),
    "F32_F32_F32": Algorithm("f32", "f32", "f32"),
    "F64_F64_F64": Algorithm("f64", "f64", "f64"),
    "F16_F16_F32": Algorithm("f16", "f16", "f32"),
    "BF16_BF16_BF16": Algorithm("bf16", "bf16", "bf16"),
    "TF32_TF32_F32": Algorithm("tf32", "tf32", "f32"),
    "TF32_TF32_F32_X3": Algorithm("tf32", "tf32", "f32", 1, 1, 3),
}
CPU_PRESETS = ("F16_F16_F16", "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "F32_F32_F32", "F64_F64_F64")


def of(op) -> Algorithm | None:
    """The instance's algorithm; None where it is empty (v1.20's `is_empty_algorithm`: every field None)
    or only partly stated (C21–C24 cannot be read; the reader rejects a partial group first)."""
    got = {f: getattr(op, f, None) for f in FIELDS}
    if any(v is None for v in got.values()):
        return None
    return Algorithm(**got)


def is_empty(op) -> bool:
    """v1.20's `is_empty_algorithm(…)`: all seven fields None."""
    return all(getattr(op, f, None) is None for f in FIELDS)


# --------------------------------------------------------------------------
# The bound
# --------------------------------------------------------------------------

def split_bounds(x: Fraction, k: int, fmt: FloatFormat) -> tuple[list[Fraction], Fraction]:
    """([A_0, …, A_{k−1}], R_k) for |x| (module docstring "The split"): bounds of
    each part's magnitude and of the residual after k parts, when each part
    is |x|'s remainder rounded into `fmt` — to nearest where the algorithm
    does not split (k = 1: ε = 2^−p), in any direction where it does
    (ε = 2^(1−p)).  A value `fmt` holds splits exactly (x_0 = x, every
    remainder 0): its R_i are 0."""
    ax = abs(x)
    if _holds(ax, fmt):
        return [ax] + [Fraction(0)] * (k - 1), Fraction(0)
    eps = Fraction(2) ** ((1 if k > 1 else 0) - fmt.precision)
    eta = fmt.min_subnormal / (1 - eps)
    R = [ax] + [eps ** i * ax + eta for i in range(1, k + 1)]
    return [R[i] + R[i + 1] for i in range(k)], R[k]


def _holds(ax: Fraction, fmt: FloatFormat) -> bool:
    """Is |x| a value of `fmt` (so that every rounding leaves it)?"""
    return ax == 0 or (ax <= fmt.max_finite and round_fraction(ax, fmt, "near") == ax)


def element(pairs: list[tuple[float, float]], alg: Algorithm):
    """The answer of one result element, Σ aᵢ·bᵢ over `pairs` of exact float
    operand values, computed by `alg` (module docstring): a `Range` in
    exact rationals, NaN / ±∞ for special values, or labelled alternatives."""
    specials, finite = [], []
    for a, b in pairs:
        if math.isnan(a) or math.isnan(b) or ((math.isinf(a) or math.isinf(b)) and (a == 0 or b == 0)):
            return math.nan
        if math.isinf(a) or math.isinf(b):
            specials.append(a * b)
        else:
            finite.append((a, b))
    s, special = exact_dot(finite), special_sum(specials)
    scheme = alg.scheme()
    if scheme is None:
        return any_value(UNDEFINED, special if special is not None else s)
    kl, kr, kept = scheme
    lf, rf, af = alg.formats()
    sf = alg.summing_format()
    if any(abs(Fraction(a)) >= overflow_threshold(lf) or abs(Fraction(b)) >= overflow_threshold(rf) for a, b in finite):
        return any_value(PRECISION_OVERFLOW, special if special is not None else s)
    err, mag = _err_mag(finite, alg)
    N = len(kept) * len(pairs)
    g = gamma(N, sf)
    if g is None or (abs(s) + err + mag * (1 + g)) >= overflow_threshold(af) or mag * (1 + g) >= overflow_threshold(sf):
        return special if special is not None and math.isnan(special) else any_value(OVERFLOW, special or s)
    if special is not None:
        if math.isnan(special) or max(kl, kr) == 1:
            return special
        return ImplDefined({"the exact result": special, SPLIT_INF: math.nan}, why=ALGORITHM_WHY)
    if not pairs:
        return 0.0
    bound = _half_width(err, mag, g, N, sf)
    lo, hi = s - bound, s + bound
    return Range(s, _outward(lo, af, "down"), _outward(hi, af, "up"))


def _err_mag(finite: list, alg: Algorithm) -> tuple[Fraction, Fraction]:
    """(Σ E, Σ_K A·A) of the module docstring's bound over finite pairs."""
    kl, kr, kept = alg.scheme()
    lf, rf, _ = alg.formats()
    err, mag = Fraction(0), Fraction(0)
    for a, b in finite:
        A, ra = split_bounds(Fraction(a), kl, lf)
        B, rb = split_bounds(Fraction(b), kr, rf)
        err += abs(Fraction(a)) * rb + ra * abs(Fraction(b)) + ra * rb
        err += sum(A[i] * B[j] for i in range(kl) for j in range(kr) if (i, j) not in kept)
        mag += sum(A[i] * B[j] for i, j in kept)
    return err, mag


def stated_bound(pairs: list[tuple[float, float]], alg: Algorithm) -> Fraction:
    """B = Σ E + γ_N·Σ_K A·A + N·η/2 of finite `pairs` (the half-width
    `element` states around the exact sum, before rounding outward)."""
    err, mag = _err_mag(pairs, alg)
    N = len(alg.scheme()[2]) * len(pairs)
    sf = alg.summing_format()
    return _half_width(err, mag, gamma(N, sf), N, sf)


def _half_width(err: Fraction, mag: Fraction, g: Fraction, N: int, sf: FloatFormat) -> Fraction:
    return err + g * mag + N * sf.min_subnormal / 2


def _outward(x: Fraction, fmt: FloatFormat, mode: str):
    """x rounded into the accumulation type in `mode`, as an exact value (a float past its range)."""
    r = round_fraction(x, fmt, mode)
    return r if math.isinf(r) else Fraction(r)


# --------------------------------------------------------------------------
# The bound on whole arrays
# --------------------------------------------------------------------------
# `element` states one element in exact rationals — 10^5 Fraction operations for a 128-long dot, so a
# model-sized result took minutes.  `whole` states the same answers for a whole result at once: s by
# spec/bounds.py's enclosures, B = Σ E + γ_N·Σ_K A·A + N·η/2 enclosed in float64 through matrix products of
# the per-operand bounds (A_i, R_k of "The split" for every operand value at once), and the elements it
# cannot state (specials, an operand past the precision type, a sum that may overflow) left to `element`.
# The oracle rounds s − B down and s + B up into the result's format; where the result's format lies inside
# the accumulation type's, that is the rounding of `element`'s ends (already rounded outward into the
# accumulation type: directed roundings compose), so both routes state the same bits
# (tests/oracle/test_dot_algorithm.py compares them).

def _holds_array(ax: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """`_holds` on float64 magnitudes at once: within range, and a multiple
    of the format's step at its binade (formats with signed zero and
    subnormals: `whole` checks)."""
    _, e = np.frexp(ax)
    step = np.maximum(e - 1, fmt.emin) - fmt.mantissa_bits
    q = np.ldexp(ax, -step)
    return (ax <= float(fmt.max_finite)) & (q == np.floor(q))


def _split_arrays(x: np.ndarray, k: int, fmt: FloatFormat):
    """([A_0 … A_{k−1}], R_k) of `split_bounds` for every value of `x`
    (finite float64) at once, each as (lo, hi) float64 arrays: eps^i·|x|
    is exact (a power of two times a value above 2^-1000: `whole` checks),
    each sum with the constant η/(1 − ε) rounded once and moved a step out."""
    ax = np.abs(x)
    holds = _holds_array(ax, fmt)
    eps = Fraction(2) ** ((1 if k > 1 else 0) - fmt.precision)
    c_lo, c_hi = bounds.bracket(fmt.min_subnormal / (1 - eps), np.float64)
    zero = np.zeros_like(ax)
    R_lo, R_hi = [ax], [ax]
    for i in range(1, k + 1):
        scaled = ax * float(eps ** i)
        R_lo.append(np.where(holds, zero, np.nextafter(scaled + c_lo, -np.inf)))
        R_hi.append(np.where(holds, zero, np.nextafter(scaled + c_hi, np.inf)))
    parts = []
    for i in range(k):
        lo = np.nextafter(R_lo[i] + R_lo[i + 1], -np.inf)
        hi = np.nextafter(R_hi[i] + R_hi[i + 1], np.inf)
        parts.append((np.where(holds & (i == 0), ax, np.where(holds, zero, lo)),
                      np.where(holds & (i == 0), ax, np.where(holds, zero, hi))))
    return parts, (R_lo[k], R_hi[k])


def _as_float(q: Fraction) -> float:
    """q as a float64, or the largest float64 where q is past it (f64's threshold)."""
    return float(q) if q < Fraction(np.finfo(np.float64).max) else float(np.finfo(np.float64).max)


def whole(A: np.ndarray, B: np.ndarray, alg: Algorithm, operands: FloatFormat, result: FloatFormat, element_of,
          probes: dict):
    """`element` of every (g, m, n) pairing A[g, m, :] with B[g, :, n]
    (exact operand values as float64, of the formats `operands` holds) as a
    `bounds.Answers`, or None where only the per-element route serves: a
    scheme the spec does not define, a result format not inside the
    accumulation type's, a precision type without signed zero and
    subnormals, operands below 2^-1000, no working type.  `element_of(i)`
    answers flat element i by `element`; `probes` are dot_general's."""
    scheme = alg.scheme()
    lf, rf, af = alg.formats()
    sf = alg.summing_format()
    G, M, K = A.shape
    if (scheme is None or K == 0 or result.precision > af.precision or result.emax > af.emax
            or result.emin < af.emin or not all(f.has_subnormals and f.has_negative_zero for f in (lf, rf))):
        return None
    kl, kr, kept = scheme
    n_terms = len(kept) * K
    g = gamma(n_terms, sf)
    fin_a, fin_b = np.isfinite(A), np.isfinite(B)
    A0, B0 = np.where(fin_a, A, 0.0), np.where(fin_b, B, 0.0)
    tiny = [np.abs(v)[(v != 0)] for v in (A0, B0)]
    if g is None or any(t.size and t.min() < 2.0 ** -1000 for t in tiny):
        return None
    (Ap, (Ra_lo, Ra_hi)), (Bp, (Rb_lo, Rb_hi)) = _split_arrays(A0, kl, lf), _split_arrays(B0, kr, rf)
    absA, absB = np.abs(A0), np.abs(B0)

    def total(end: int, pairs) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            return sum(np.matmul(x[end], y[end]) for x, y in pairs).reshape(-1)
    exact_a, exact_b = (absA, absA), (absB, absB)
    err_pairs = [(exact_a, (Rb_lo, Rb_hi)), ((Ra_lo, Ra_hi), exact_b), ((Ra_lo, Ra_hi), (Rb_lo, Rb_hi))]
    err_pairs += [(Ap[i], Bp[j]) for i in range(kl) for j in range(kr) if (i, j) not in kept]
    mag_pairs = [(Ap[i], Bp[j]) for i, j in kept]
    # every matrix product of non-negative terms is within γ₆₄(K)·(its value) of it, plus K·2^-1074 for
    # products that underflow; a handful of further roundings of the sums below are covered by 4·γ
    rel = 4 * float(bounds.gamma_u(K + len(err_pairs) + len(mag_pairs) + 8, Fraction(1, 1 << 53)))
    slack = (len(err_pairs) + len(mag_pairs)) * K * 2.0 ** -1074
    g_lo, g_hi = bounds.bracket(g, np.float64)
    c_lo, c_hi = bounds.bracket(n_terms * sf.min_subnormal / 2, np.float64)
    t_af, t_sf = _as_float(overflow_threshold(af)), _as_float(overflow_threshold(sf))
    with np.errstate(over="ignore", invalid="ignore"):
        mag_hi, mag_lo = total(1, mag_pairs) * (1 + rel) + slack, np.maximum(total(0, mag_pairs) * (1 - rel) - slack, 0)
        err_hi, err_lo = total(1, err_pairs) * (1 + rel) + slack, np.maximum(total(0, err_pairs) * (1 - rel) - slack, 0)
        b_hi = (err_hi + g_hi * mag_hi) * (1 + rel) + c_hi
        b_lo = np.nextafter((err_lo + g_lo * mag_lo) * (1 - rel) + c_lo, -np.inf)
        # `element`'s overflow test, |s| + err + mag(1 + γ) ≥ threshold(af) or mag(1 + γ) ≥ threshold(sf):
        # held where lower bounds pass it by 2^-30, left to `element` where upper ones come within 2^-30
        over = (err_lo + mag_lo * (1 + g_lo) >= t_af * (1 + 2.0 ** -30)) | (mag_lo * (1 + g_lo) >= t_sf * (1 + 2.0 ** -30))
        near = (np.matmul(absA, absB).reshape(-1) * (1 + rel) + err_hi + mag_hi * (1 + g_hi) >= t_af * (1 - 2.0 ** -30))
        near |= (mag_hi * (1 + g_hi) >= t_sf * (1 - 2.0 ** -30)) | ~np.isfinite(b_hi)
    return bounds.dot_within(A, B, _s_format(operands, af), (b_lo, b_hi),
                             _classes(A, B, fin_a, fin_b, absA, absB, alg, over, near & ~over), element_of, probes)


def _s_format(operands: FloatFormat, af: FloatFormat) -> FloatFormat:
    """The format whose working type encloses s: f32's (float64, products
    exact) where operands and accumulator are at most f32-wide, else f64's."""
    narrow = operands.precision <= 24 and operands.emax <= 127 and af.precision <= 24 and af.emax <= 127
    return PRECISION_FORMATS["f32" if narrow else "f64"]


def _classes(A, B, fin_a, fin_b, absA, absB, alg: Algorithm, over, near) -> tuple:
    """(kind, value, over_value) of `element`'s answers, in its order: a NaN
    or ∞·0 term — NaN; an operand past the precision type — any value
    (`element` states it); a sum that may overflow — any value with the
    infinity or the exact result as primary (NaN for infinities of both
    signs; `element` where undecided); infinities — their sum where the
    algorithm does not split, labelled by `element` where it does; else a
    range."""
    lf, rf, _ = alg.formats()
    kl, kr, _ = alg.scheme()
    nan_, pinf, ninf = bounds.dot_specials(A, B)
    special_nan = nan_ | (pinf & ninf)
    special_inf = (pinf | ninf) & ~special_nan
    big_a = (absA >= _as_float(overflow_threshold(lf)) * (1 - 2.0 ** -30)) & fin_a
    big_b = (absB >= _as_float(overflow_threshold(rf)) * (1 - 2.0 ** -30)) & fin_b
    big = (big_a.any(axis=2)[:, :, None] | big_b.any(axis=1)[:, None, :]).reshape(-1)
    kind = np.full(len(over), bounds.RANGE, dtype=np.int8)
    value = np.zeros(len(over))
    value[special_inf] = np.where(pinf[special_inf], np.inf, -np.inf)
    value[special_nan] = np.nan
    kind[special_inf] = bounds.VALUE if max(kl, kr) == 1 else bounds.ELEMENT
    kind[over] = bounds.OVER
    kind[near] = bounds.ELEMENT
    kind[special_nan & ~nan_] = bounds.VALUE   # both signs: NaN whether or not the sum overflows
    kind[big] = bounds.ELEMENT
    kind[nan_] = bounds.VALUE
    return kind, value, over & special_inf & ~big & ~nan_
