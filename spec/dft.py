"""The discrete Fourier transform stated exactly: the DFT of exact inputs, and
the forward error bound of the FFT algorithms implementations use.

spec/ops/fft.py states each result element as a `Range`: the exact
transform y of the operand's exact values, and [y − b, y + b] with b a
rigorous bound on the error of any implementation in the family below.
This module holds both halves: the bound (`Model`, `stages`, `allowance`)
and the enclosures of y on whole arrays (`transform`), with an exact
per-element route behind them for what the enclosures leave undecided.

The bound (componentwise).  For a transform of one slice (the last L axes
of the operand) every output element satisfies

    |ŷ_k − y_k| ≤ T·(Π_s (1 + ε_s) − 1)·Σ_j |x_j|  +  c₀

(complex modulus; each component of ŷ_k − y_k is bounded by it too), where
the product runs over the 1-D stages of the seed's semantics (one per
transformed axis), T is the product of the stages' path weights (1 for
FFT and RFFT, 1/N for IFFT, 2/N for IRFFT: |y_k| ≤ T·Σ|x_j|), and c₀ covers
underflow.  The argument is Higham's for the radix-2 FFT (*Accuracy and
Stability of Numerical Algorithms*, 2nd ed., §24.1, Theorem 24.2 and its
proof) done componentwise: an algorithm that computes ŷ = (A_r + ΔA_r)···
(A_1 + ΔA_1)x, each stage with |ΔA_i| ≤ δ_i|A_i| (complex moduli), has
|ŷ − y| ≤ (Π(1 + δ_i) − 1)·|A_r|···|A_1|·|x|, and for a Cooley–Tukey
factorisation |A_r|···|A_1| is the matrix of the moduli of the DFT's own
weights (each input reaches each output along exactly one path, of
weights of modulus 1).  Along several axes, and for a stage whose error is
only bounded by a majorant (Bluestein, packed real transforms), the same
induction gives E_s = t_s·E_{s−1} + e_s·(T_{s−1} + E_{s−1}) with
e_s = t_s·ε_s, whose closed form is the one above.

The family (`Model.one_dim`: a 1-D complex transform of length n at unit
roundoff u; twiddle factors ω̂ with |ω̂ − ω| ≤ μ = 4u, i.e. each
component within 2 ulps, as libraries that compute them in a wider
format or with sincospi deliver; τ = μ + √2·γ₂·(1 + μ) bounds one complex
multiplication by a computed twiddle, Higham's Lemma 3.5, FMA or not):

* mixed-radix Cooley–Tukey over the prime factorisation of n, each pass a
  direct p-point DFT (products and a p-term sum in any order:
  δ_D(p) = (1 + τ)(1 + γ_p) − 1) after a twiddle multiplication:
  σ(p) = (1 + τ)(1 + δ_D(p)) − 1, ε_CT(n) = Π_{p | n} (1 + σ(p)) − 1.
  Radix-4 and radix-8 passes, split radix and FFTW/pocketfft/ducc/cuFFT
  codelets do fewer operations per level than the prime passes they stand
  for, and are covered (Higham's η for radix 2 is μ + γ₄(√2 + μ), below
  σ(2));
* a direct evaluation of the whole DFT sum, δ_D(n), for n ≤ 64 (a
  reference implementation may do that);
* Bluestein's algorithm where libraries use it (n ≥ 50 with a prime
  factor p, p² > n — pocketfft and ducc — or p > 127 — cuFFT): chirp
  multiplications, a convolution of any 11-smooth length m in
  [2n − 1, 4n) by two FFTs and the pointwise product with a precomputed
  transform B̂ of the chirp (K = 2n − 1 entries of modulus 1).  The
  componentwise analysis through |B| would carry a factor K; bounding the
  product's terms in norm (‖B‖₂ = √m·√K, Cauchy–Schwarz through the
  inverse FFT's 1/m) carries √K instead (`Model.bluestein`): still the
  loosest member by far — a generous bound, stated so.

ε_s is the maximum of the members that apply, adjusted per stage kind:
an inverse stage adds its scaling by 1/n ((1 + γ₂)), a real-input or
real-output stage (r2c, c2r: packed half-length transforms or real radix
passes) doubles the error and adds a pre/post-processing pass
(δ_pp = (1 + τ)(1 + γ₃) − 1).  Not covered: twiddles computed by
recurrences whose error grows with n, and a direct O(n²) evaluation
beyond 64 points.  c₀ = 8·η·N·Σ_s(n_s + 8)·Π_s K_s (η the smallest
subnormal) bounds the absolute error of every multiplication that
underflows (additions are exact there), reaching an output with weight at
most Π K_s.  A slice whose Σ|x|·2·ΠK_s·(1 + ε) reaches the format's
overflow threshold may overflow in an intermediate result: any value there.

The exact value (`transform`).  Inputs of f32 and f64 are exact in float64
and long double.  numpy's FFT (pocketfft: the Cooley–Tukey passes and
Bluestein of the family above) computes y in float64 and, where that does
not decide the rounding, in long double; its error is bounded by the same
`Model` at the working precision, with μ = 64·u_W (a safety factor over
pocketfft's twiddles, computed in the working type from tables to about
one ulp; tests/spec/test_ops_fft.py measures numpy's error against an
mpmath DFT).  Each component of y is enclosed in [Y − r, Y + r].  The
stated ends are the outward ones — lo = RD(Y − r − b), hi = RU(Y + r + b),
so lo ≤ y − b and hi ≥ y + b always; r is a small fraction of b (below
2^-25·b for f32 results in float64, 2^-7·b for f64 results in long double;
tests/spec/test_ops_fft.py), so an end is wider than y ∓ b rounded outward
by at most 2r — a sliver of the allowance — and the exact sum is never
needed for it.  The reported value (the
nearest, from which the ULP distance is reported) is decided where both
ends of the enclosure round to the same value; what is left goes to
`exact_element` — the DFT sum in Python integers with twiddles enclosed by
interval Taylor series and Machin's π (`_twiddle`), at rising precision,
no library's accuracy assumed — within `EXACT_BUDGET` terms per
transform, else the enclosure's guess is reported (`Stated.undecided`).

Floor 1: numpy and the standard library.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np

from .bounds import bracket
from .types import FloatFormat, long_double_exact

SQRT2_UP = Fraction(99, 70)          # ≥ √2
DIRECT_MAX = 64                      # a direct evaluation of the whole sum is in the family up to this length
BLUESTEIN_MIN = 50                   # pocketfft / ducc: never below this length
CUFFT_RADIX_MAX = 127                # cuFFT: prime factors above this go through Bluestein
EXACT_BUDGET = 300_000               # terms the exact route may evaluate per transform (all undecided elements or none)
LD_OK = np.finfo(np.longdouble).nmant >= 63


def gamma(k: int, u: Fraction) -> Fraction:
    """γ_k = k·u / (1 − k·u) (Higham §3.1); k·u < 1 is required."""
    ku = k * u
    if ku >= 1:
        raise ValueError(f"γ_{k} is undefined at u = {u}")
    return ku / (1 - ku)


def prime_factors(n: int) -> list[int]:
    """The prime factors of n ≥ 1, with multiplicity, ascending."""
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    if n > 1:
        out.append(n)
    return out


def bluestein_applies(n: int) -> bool:
    """Does some library of the family evaluate a length-n transform by
    Bluestein's algorithm?  pocketfft and ducc consider it from 50 points
    when the largest prime factor p has p² > n; cuFFT for p > 127."""
    if n < BLUESTEIN_MIN:
        return False
    p = prime_factors(n)[-1]
    return p * p > n or p > CUFFT_RADIX_MAX


def sqrt_up(k: int) -> Fraction:
    """A rational ≥ √k, within 10^-9 of it."""
    scale = 10 ** 9
    r = math.isqrt(k * scale * scale)
    return Fraction(r if r * r == k * scale * scale else r + 1, scale)


def smooth_numbers(lo: int, hi: int) -> list[int]:
    """The 11-smooth integers in [lo, hi): the lengths libraries pad
    Bluestein's convolution to (pocketfft's and ducc's good sizes; cuFFT's
    powers of two among them)."""
    out = []

    def walk(v: int, i: int) -> None:
        if v >= lo:
            out.append(v)
        for j in range(i, 5):
            p = (2, 3, 5, 7, 11)[j]
            if v * p < hi:
                walk(v * p, j)
    walk(1, 0)
    return sorted(x for x in out if lo <= x < hi)


@lru_cache(maxsize=None)
def _smooth_worst(model: "Model", n: int) -> tuple[Fraction, Fraction]:
    """The largest componentwise and normwise Cooley–Tukey bounds over the
    convolution lengths Bluestein may use for length n."""
    ms = smooth_numbers(2 * n - 1, 4 * n)
    return max(model.cooley_tukey(m) for m in ms), max(model.normwise(m) for m in ms)


@dataclass(frozen=True)
class Model:
    """The error bounds of the family (module docstring) at unit roundoff
    `u` with twiddles within `mu` of the true roots of unity.  All
    quantities are exact rationals."""

    u: Fraction
    mu: Fraction

    @classmethod
    def of(cls, fmt: FloatFormat, twiddle_ulps: int = 2) -> "Model":
        u = fmt.unit_roundoff
        return cls(u, 2 * twiddle_ulps * u)

    @property
    def tau(self) -> Fraction:
        """One complex multiplication by a computed twiddle (Higham, Lemma 3.5)."""
        return self.mu + SQRT2_UP * gamma(2, self.u) * (1 + self.mu)

    def direct(self, p: int) -> Fraction:
        """A direct p-point DFT: products by twiddles, then a p-term sum in any order."""
        return (1 + self.tau) * (1 + gamma(p, self.u)) - 1

    def sigma(self, p: int) -> Fraction:
        """One Cooley–Tukey pass of radix p: twiddle multiplication, then a direct p-point DFT."""
        return (1 + self.tau) * (1 + self.direct(p)) - 1

    def cooley_tukey(self, n: int) -> Fraction:
        out = Fraction(1)
        for p in prime_factors(n):
            out *= 1 + self.sigma(p)
        return out - 1

    def normwise(self, m: int) -> Fraction:
        """A normwise relative bound ‖ŷ − y‖₂ ≤ ε⁽²⁾·‖y‖₂ of the Cooley–Tukey
        transform of length m (Higham's proof of Theorem 24.2: each stage is
        √p times a unitary map, and a radix-p pass whose outputs err by at
        most σ(p)·Σ|z| errs by at most √p·σ(p) relative in norm)."""
        out = Fraction(1)
        for p in prime_factors(m):
            out *= 1 + sqrt_up(p) * self.sigma(p)
        return out - 1

    def bluestein(self, n: int) -> Fraction:
        """Bluestein's algorithm for length n (chirp multiplications, a
        length-m convolution by FFTs with the precomputed transform B̂ of
        the chirp b, K = 2n − 1 nonzero entries of modulus 1), for every
        11-smooth m in [2n − 1, 4n): with X = Σ|x|, the forward FFT errs by
        at most α·X per entry (componentwise), ‖B̂ − B‖₂ ≤ β·√m·√K
        (normwise), the pointwise product adds √2γ₂; Cauchy–Schwarz through
        ‖B‖₂ = √m·√K and the 1/m of the inverse FFT turns each term into a
        multiple of √K·X: e_B = τ + (1 + τ)·√K·(π₁ + ε'_m·π₂)."""
        K = 2 * n - 1
        eps_m, eps2_m = _smooth_worst(self, n)
        t, mu, g2 = self.tau, self.mu, gamma(2, self.u)
        s2 = SQRT2_UP * g2
        alpha = t + eps_m * (1 + t)
        beta = (1 + mu + eps2_m * (1 + mu)) * (1 + g2) - 1
        pi1 = alpha + (1 + eps_m) * (1 + t) * beta + s2 * (1 + eps_m) * (1 + t) * (1 + beta)
        pi2 = (1 + eps_m) * (1 + t) * (1 + beta) * (1 + s2)
        inverse = (1 + eps_m) * (1 + g2) - 1
        return t + (1 + t) * sqrt_up(K) * (pi1 + inverse * pi2)

    def one_dim(self, n: int) -> Fraction:
        """ε(n): the largest bound of the family's members for length n."""
        if n <= 1:
            return Fraction(0)
        got = [self.cooley_tukey(n)]
        if n <= DIRECT_MAX:
            got.append(self.direct(n))
        if bluestein_applies(n):
            got.append(self.bluestein(n))
        return max(got)

    def stage(self, n: int, kind: str) -> Fraction:
        """ε_s of one stage: `kind` is "forward", "inverse" (c2c), "r2c" or "c2r"."""
        if n <= 1:
            return Fraction(0)
        e = self.one_dim(n)
        g2 = gamma(2, self.u)
        if kind == "forward":
            return e
        if kind == "inverse":
            return (1 + e) * (1 + g2) - 1
        pp = (1 + self.tau) * (1 + gamma(3, self.u)) - 1
        if kind == "r2c":
            return 2 * ((1 + e) * (1 + pp) - 1)
        if kind == "c2r":
            return 2 * ((1 + e) * (1 + pp) * (1 + g2) - 1)
        raise ValueError(kind)


def path_weight(n: int, kind: str) -> Fraction:
    """t_s: a bound on the moduli of a stage's exact weights (|y| ≤ t·Σ|x|)."""
    if n <= 1:
        return Fraction(1)
    if kind == "inverse":
        return Fraction(1, n)
    if kind == "c2r":
        return Fraction(2, n)
    return Fraction(1)


def majorant(n: int) -> int:
    """K_s: how much larger than Σ|x| an intermediate value of the stage may
    be (Bluestein's pointwise product; 2 for partial sums of a complex
    product or a packed real transform)."""
    return 2 * n - 1 if bluestein_applies(n) and n > 1 else 2


@dataclass(frozen=True)
class Stages:
    """The 1-D stages of one transform, in the seed's order: (length, kind)."""

    stages: tuple

    @property
    def N(self) -> int:
        return int(np.prod([n for n, _ in self.stages], dtype=np.int64))

    def weight(self) -> Fraction:
        out = Fraction(1)
        for n, kind in self.stages:
            out *= path_weight(n, kind)
        return out

    def relative(self, model: Model) -> Fraction:
        """Π(1 + ε_s) − 1."""
        out = Fraction(1)
        for n, kind in self.stages:
            out *= 1 + model.stage(n, kind)
        return out - 1

    def coefficient(self, model: Model) -> Fraction:
        """T·(Π(1 + ε_s) − 1): the bound per unit of Σ|x|."""
        return self.weight() * self.relative(model)

    def growth(self) -> int:
        """Π K_s."""
        out = 1
        for n, _ in self.stages:
            out *= majorant(n)
        return out

    def underflow(self, fmt: FloatFormat) -> Fraction:
        """c₀ (module docstring)."""
        return self.underflow_at(fmt.min_subnormal)

    def underflow_at(self, eta: Fraction) -> Fraction:
        """0 where no stage computes anything (every length 1: the identity)."""
        if all(n <= 1 for n, _ in self.stages):
            return Fraction(0)
        ops = sum(n + 8 for n, _ in self.stages)
        return 8 * eta * self.N * ops * self.growth()


def stages_of(fft_type: str, lengths: tuple) -> Stages:
    """The stages of the seed's semantics for `fft_type` over the transformed
    axes' lengths (outermost first): FFT and RFFT transform the last axis
    first, IFFT and IRFFT the last axis last; the path weights and bounds
    do not depend on the order."""
    lengths = tuple(int(n) for n in lengths)
    if fft_type == "FFT":
        kinds = ["forward"] * len(lengths)
    elif fft_type == "IFFT":
        kinds = ["inverse"] * len(lengths)
    elif fft_type == "RFFT":
        kinds = ["forward"] * (len(lengths) - 1) + ["r2c"]
    elif fft_type == "IRFFT":
        kinds = ["inverse"] * (len(lengths) - 1) + ["c2r"]
    else:
        raise ValueError(fft_type)
    return Stages(tuple(zip(lengths, kinds)))


def working_stages(st: Stages) -> Stages:
    """The stages as `transform` computes them in the working type: complex
    transforms only (RFFT as a complex FFT of the real input, IRFFT as an
    inverse complex FFT of the Hermitian extension, path weight 2/n)."""
    out = []
    for n, kind in st.stages:
        out.append((n, {"r2c": "forward", "c2r": "c2r_as_inverse"}.get(kind, kind)))
    return Stages(tuple(out))


def _working_stage_eps(model: Model, n: int, kind: str) -> Fraction:
    return model.stage(n, "inverse" if kind == "c2r_as_inverse" else kind)


def _working_coefficient(model: Model, st: Stages) -> Fraction:
    rel = Fraction(1)
    weight = Fraction(1)
    for n, kind in st.stages:
        rel *= 1 + _working_stage_eps(model, n, kind)
        weight *= path_weight(n, "c2r" if kind == "c2r_as_inverse" else kind)
    return weight * (rel - 1)


# --------------------------------------------------------------------------
# Outward arithmetic in a working type W (float64 or long double)
# --------------------------------------------------------------------------

def _step(W):
    fi = np.finfo(W)
    return np.ldexp(W(1), -(fi.nmant - 1)), fi.smallest_subnormal


def dn(x):
    """A value ≤ the real that x, the result of one operation rounded to
    nearest in its type, stands for (spec/bounds.py's `_dn`)."""
    c, t = _step(x.dtype.type)
    return x - (np.abs(x) * c + t)


def up(x):
    c, t = _step(x.dtype.type)
    return x + (np.abs(x) * c + t)


def ceil_to(q: Fraction, W):
    """A value of W ≥ q, as close as W allows (spec/bounds.py's `bracket`)."""
    return bracket(q, W)[1]


# --------------------------------------------------------------------------
# Rounding into the result's format: f32 and f64 from float64 / long double
# --------------------------------------------------------------------------

def _target(fmt: FloatFormat):
    return {24: np.float32, 53: np.float64}[fmt.precision]


def round_near(x, fmt: FloatFormat):
    """x (float64 or long double) rounded to nearest even (numpy's cast: one
    correct rounding, subnormals and overflow included)."""
    with np.errstate(over="ignore"):
        return x.astype(_target(fmt))


def round_down(x, fmt: FloatFormat):
    T = _target(fmt)
    with np.errstate(over="ignore", invalid="ignore"):
        r = x.astype(T)
        return np.where(r > x, np.nextafter(r, T(-np.inf)), r)


def round_up(x, fmt: FloatFormat):
    T = _target(fmt)
    with np.errstate(over="ignore", invalid="ignore"):
        r = x.astype(T)
        return np.where(r < x, np.nextafter(r, T(np.inf)), r)


def _zero_sign(value, lo_end, hi_end):
    """A nearest value of 0 carries the sign of the enclosure when the
    enclosure excludes 0 (y < 0 rounds to −0), else +0 (the exact value may
    be 0; a bounded expectation compares ±0 equal)."""
    return np.where(value == 0, np.where(hi_end < 0, -0.0, 0.0), value)


def decide(Y, r, b, fmt: FloatFormat) -> tuple:
    """From Y ± r (a working-type enclosure of y) and the allowance b:
    (nearest, lo, hi) as float64 values of the format, and a mask of the
    elements whose nearest value is decided (module docstring).  The ends
    are always the outward ones, lo ≤ y − b and hi ≥ y + b: where the
    enclosure straddles a value of the format, the end is one ulp wider
    than y ∓ b rounded outward — still a bound every implementation of
    the family meets, and no reason to evaluate the sum exactly.
    Undecided elements carry the enclosure's nearest guess."""
    with np.errstate(over="ignore", invalid="ignore"):
        ylo, yhi = dn(Y - r), up(Y + r)
        n_lo, n_hi = round_near(ylo, fmt), round_near(yhi, fmt)
        lo_a = round_down(dn(ylo - b), fmt)
        hi_b = round_up(up(yhi + b), fmt)
        ok = n_lo == n_hi
        nearest = np.where(ok, n_lo, round_near(Y, fmt)).astype(np.float64)
        nearest = _zero_sign(nearest, ylo.astype(np.float64), yhi.astype(np.float64))
    return nearest, lo_a.astype(np.float64), hi_b.astype(np.float64), ok


# --------------------------------------------------------------------------
# Exact rounding of rationals (the exact route)
# --------------------------------------------------------------------------

def _floor_log2(x: Fraction) -> int:
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > x:
        e -= 1
    elif Fraction(2) ** (e + 1) <= x:
        e += 1
    return e


def round_fraction(x: Fraction, fmt: FloatFormat, mode: str) -> float:
    """x rounded into `fmt`: "near" (ties to even), "down" (toward −∞), "up";
    as a float (±inf past the range)."""
    if x == 0:
        return 0.0
    neg = x < 0
    a = -x if neg else x
    q = fmt.min_subnormal if a < fmt.min_normal else Fraction(2) ** (_floor_log2(a) - fmt.mantissa_bits)
    k = a / q
    f = k.numerator // k.denominator
    if mode == "near":
        rem = k - f
        m = f + (1 if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and f % 2) else 0)
    else:
        toward_larger = (mode == "up") != neg   # magnitude up: up for positives, down for negatives
        m = f + (1 if toward_larger and k != f else 0)
    v = m * q
    if v > fmt.max_finite:
        if mode == "near":
            v = math.inf
        else:
            v = math.inf if ((mode == "up") != neg) else fmt.max_finite
    out = float(v) if v != math.inf else math.inf
    return -out if neg else out


# --------------------------------------------------------------------------
# Twiddles enclosed in integers: cos(2πm/L), sin(2πm/L) at scale 2^bits
# --------------------------------------------------------------------------

GUARD = 24


def _cdiv(a: int, b: int) -> int:
    return -((-a) // b)


@lru_cache(maxsize=None)
def _atan_inv(k: int, F: int) -> tuple[int, int]:
    """[lo, hi] ∋ atan(1/k)·2^F (alternating series in exact integer floors)."""
    one = 1 << F
    lo = hi = 0
    i, den = 0, k
    while True:
        p = one // den                      # 2^F / k^(2i+1) ∈ [p, p + 1)
        t_lo, t_hi = p // (2 * i + 1), _cdiv(p + 1, 2 * i + 1)
        if p == 0:                          # the rest of the alternating series is below one unit
            return lo - 1, hi + 1
        if i % 2 == 0:
            lo, hi = lo + t_lo, hi + t_hi
        else:
            lo, hi = lo - t_hi, hi - t_lo
        i += 1
        den *= k * k


@lru_cache(maxsize=None)
def _quarter_pi(F: int) -> tuple[int, int]:
    """[lo, hi] ∋ (π/4)·2^F (Machin: π/4 = 4·atan(1/5) − atan(1/239))."""
    a_lo, a_hi = _atan_inv(5, F)
    b_lo, b_hi = _atan_inv(239, F)
    return 4 * a_lo - b_hi, 4 * a_hi - b_lo


def _series(x_lo: int, x_hi: int, F: int, sine: bool) -> tuple[int, int]:
    """[lo, hi] ∋ sin(x)·2^F or cos(x)·2^F for x ∈ [x_lo, x_hi]·2^-F ⊂ [0, 1)."""
    one = 1 << F
    if sine:
        t_lo, t_hi, i = x_lo, x_hi, 1
    else:
        t_lo, t_hi, i = one, one, 0
    s_lo, s_hi, sign = 0, 0, 1
    sq_lo, sq_hi = x_lo * x_lo, x_hi * x_hi
    while True:
        if sign > 0:
            s_lo, s_hi = s_lo + t_lo, s_hi + t_hi
        else:
            s_lo, s_hi = s_lo - t_hi, s_hi - t_lo
        d = (i + 1) * (i + 2)
        t_lo = (t_lo * sq_lo) // (one * one * d)
        t_hi = _cdiv(t_hi * sq_hi, one * one * d)
        i += 2
        sign = -sign
        if t_hi <= 1:                      # alternating, decreasing: the tail is below the next term
            return s_lo - t_hi, s_hi + t_hi


@lru_cache(maxsize=1 << 17)
def _octant(a: int, L: int, bits: int) -> tuple:
    """Integer enclosures ((c_lo, c_hi), (s_lo, s_hi)) of cos φ·2^bits and
    sin φ·2^bits, φ = (π/4)·(a/L) ∈ [0, π/4]: interval Taylor series on an
    interval of φ from Machin's π, with GUARD extra bits."""
    if a == 0:
        one = 1 << bits
        return (one, one), (0, 0)
    F = bits + GUARD
    p_lo, p_hi = _quarter_pi(F)
    x_lo, x_hi = (p_lo * a) // L, _cdiv(p_hi * a, L)
    c = _series(x_lo, x_hi, F, sine=False)
    s = _series(x_lo, x_hi, F, sine=True)
    return (c[0] >> GUARD, _cdiv(c[1], 1 << GUARD)), (s[0] >> GUARD, _cdiv(s[1], 1 << GUARD))


def _twiddle(m: int, L: int, bits: int) -> tuple[int, int, int, int]:
    """(c_lo, c_hi, s_lo, s_hi): integer enclosures of cos(2πm/L)·2^bits and
    sin(2πm/L)·2^bits; exact at multiples of a quarter turn.  Reduced to the
    first octant by the exact symmetries of the circle."""
    m %= L
    o, r = divmod(8 * m, L)                # 2πm/L = o·π/4 + (π/4)·(r/L)
    if o % 2 == 0:
        c, s = _octant(r, L, bits)
    else:                                  # θ = (o + 1)·π/4 − φ', φ' = (π/4)·((L − r)/L): cos and sin swap
        s, c = _octant(L - r, L, bits)
    for _ in range(o // 2):
        c, s = (-s[1], -s[0]), c           # a quarter turn: (cos, sin) → (−sin, cos)
    return c[0], c[1], s[0], s[1]


def _mul(a: int, lo: int, hi: int) -> tuple[int, int]:
    """[lo, hi] ∋ a·v for integer a and v ∈ [lo, hi]."""
    p, q = a * lo, a * hi
    return (p, q) if p <= q else (q, p)


def exact_sum(terms: list, bits: int, L: int, sign: int, real_only: bool = False):
    """Enclosure of Σ_t w_t·x_t·exp(sign·2πi·m_t/L) for `terms`
    [(A, B, m, w)] (x_t = (A + iB)·2^-E, integers, w a small positive
    integer weight): ((re_lo, re_hi), (im_lo, im_hi)) in units of
    2^-(bits + E)."""
    re_lo = re_hi = im_lo = im_hi = 0
    for A, B, m, w in terms:
        c_lo, c_hi, s_lo, s_hi = _twiddle(m, L, bits)
        if sign < 0:
            s_lo, s_hi = -s_hi, -s_lo
        a1, a2 = _mul(A * w, c_lo, c_hi)
        b1, b2 = _mul(B * w, s_lo, s_hi)
        re_lo += a1 - b2
        re_hi += a2 - b1
        if not real_only:
            a1, a2 = _mul(A * w, s_lo, s_hi)
            b1, b2 = _mul(B * w, c_lo, c_hi)
            im_lo += a1 + b1
            im_hi += a2 + b2
    return (re_lo, re_hi), (im_lo, im_hi)


# --------------------------------------------------------------------------
# The transform on whole arrays
# --------------------------------------------------------------------------

@dataclass
class Stated:
    """What `transform` states about one result: per component (one for a
    real result, (re, im) for a complex one) the nearest value of the exact
    transform and the ends lo ≤ y − b, hi ≥ y + b, as float64 arrays of
    values of the format (`parts`); per element whether its slice holds a
    NaN or an infinity (`nonfinite`), may overflow in an intermediate result
    (`overflow`), and — IRFFT — whether the DC and Nyquist terms irfft
    receives are real (`hermitian`); `bound`, the allowance b of each
    element; `undecided`, the elements whose rounding rests on the
    enclosure's outer ends because the exact route's budget was spent."""

    shape: tuple
    parts: list
    nonfinite: np.ndarray
    overflow: np.ndarray
    hermitian: np.ndarray | None
    bound: np.ndarray
    undecided: int = 0


def lengths_of(fft_type: str, operand_shape: tuple, L: int, n_last: int) -> tuple:
    """The transform lengths along the last L axes: the operand's dims, but
    for IRFFT the last one is the result's (fft_length[-1])."""
    dims = tuple(int(d) for d in operand_shape[len(operand_shape) - L:])
    return dims[:-1] + (int(n_last),) if fft_type == "IRFFT" else dims


def result_dims(fft_type: str, lengths: tuple) -> tuple:
    """The result's transformed dims (C5)."""
    if fft_type == "RFFT":
        n = lengths[-1]
        return lengths[:-1] + ((n // 2 + 1) if n else 0,)
    return lengths


def _working_types(fmt: FloatFormat) -> list:
    ld = LD_OK and long_double_exact()   # the 64-bit significand in effect now (spec.types)
    if fmt.precision <= 24:
        return [np.float64] + ([np.longdouble] if ld else [])
    if fmt.precision == 53 and ld:
        return [np.longdouble]
    raise ValueError(f"no working type for {fmt.name}: long double arithmetic does not carry 64 bits in this "
                     "process now (the x87 precision control?)")


def _complex_of(W):
    return np.complex128 if W is np.float64 else np.clongdouble


def _numpy_transform(fft_type: str, X, L: int, n: int):
    """The transform of each slice X[b] (axes 1..L) by numpy's FFT, in X's
    complex working type: FFT/IFFT as they are, RFFT as the complex FFT
    truncated, IRFFT as the inverse of the Hermitian extension (imaginary
    parts of the DC and Nyquist terms dropped), real part."""
    axes = tuple(range(1, L + 1))
    if fft_type == "FFT":
        return np.fft.fftn(X, axes=axes)
    if fft_type == "IFFT":
        return np.fft.ifftn(X, axes=axes)
    if fft_type == "RFFT":
        return np.fft.fftn(X, axes=axes)[..., : n // 2 + 1]
    Z = np.fft.ifftn(X, axes=axes[:-1]) if L > 1 else X
    full = np.zeros(Z.shape[:-1] + (n,), dtype=Z.dtype)
    full[..., : n // 2 + 1] = Z[..., : n // 2 + 1]
    full[..., 0] = Z[..., 0].real
    if n % 2 == 0:
        full[..., n // 2] = Z[..., n // 2].real
    for k in range(1, (n + 1) // 2):
        full[..., n - k] = np.conj(Z[..., k])
    return np.fft.ifft(full, axis=-1).real


def _slice_sums(X, W, L: int):
    """Per slice, a value of W ≥ Σ|x| (complex moduli by hypot, one ulp
    at most off, moved up; the sum's own error folded in)."""
    k = int(np.prod(X.shape[1:], dtype=np.int64))
    with np.errstate(over="ignore", invalid="ignore"):
        m = np.abs(X) if not np.iscomplexobj(X) else up(np.hypot(X.real, X.imag))
        s = m.reshape(len(X), -1).sum(axis=1)
    g = gamma(max(k, 1), Fraction(1, 1 << (np.finfo(W).nmant + 1)))
    return up(s * ceil_to(1 + 2 * g, W))


def transform(fft_type: str, x: np.ndarray, L: int, n_last: int, fmt: FloatFormat,
              budget: int = EXACT_BUDGET) -> Stated:
    """The seed's transform of `x` (the operand's values) over its last `L`
    axes, stated per element of the result (module docstring).  `n_last`:
    the last transform length (IRFFT: fft_length[-1]); `fmt`: the result's
    (component) format."""
    x = np.asarray(x)
    lengths = lengths_of(fft_type, x.shape, L, n_last)
    batch = tuple(int(d) for d in x.shape[: x.ndim - L])
    rdims = result_dims(fft_type, lengths)
    shape = batch + rdims
    real_out = fft_type == "IRFFT"
    n_comp = 1 if real_out else 2
    size = int(np.prod(shape, dtype=np.int64))
    B = int(np.prod(batch, dtype=np.int64))
    empty = np.zeros(shape)
    if size == 0:
        parts = [(empty, empty, empty) for _ in range(n_comp)]
        z = np.zeros(shape, dtype=bool)
        return Stated(shape, parts, z, z, z.copy() if real_out else None, empty)
    st = stages_of(fft_type, lengths)
    impl = Model.of(fmt)
    coef = st.coefficient(impl)
    c0 = st.underflow(fmt)
    growth = 2 * st.growth() * (1 + st.relative(impl))
    Ws = _working_types(fmt)
    W0 = Ws[0]
    X0 = x.reshape((B,) + x.shape[x.ndim - L:])
    finite = np.isfinite(X0).reshape(B, -1).all(axis=1)
    tdims = (1,) * len(rdims)

    def per_batch(v):
        return np.broadcast_to(np.asarray(v).reshape((B,) + tdims), (B,) + rdims)

    # Allowance b per slice, overflow, in the first working type
    Xw = np.where(finite.reshape((B,) + (1,) * L), X0, 0).astype(_complex_of(W0) if np.iscomplexobj(X0) else W0)
    S = _slice_sums(Xw, W0, L)
    b = up(up(S * ceil_to(coef, W0)) + ceil_to(c0, W0))
    with np.errstate(over="ignore"):
        overflow = finite & (S * ceil_to(growth, W0) >= W0(float(fmt.max_finite)))
    hermitian = _hermitian(X0, lengths) if fft_type == "IRFFT" else None
    if all(n <= 1 for n in lengths):
        # Every transformed length is 1: each 1-D transform is the identity (IFFT's 1/1 included), nothing
        # rounds or overflows, and the result is the operand's value itself with no allowance (the outward
        # steps below would widen a zero allowance to one ulp).
        v = X0.reshape((B,) + rdims).astype(np.complex128 if np.iscomplexobj(X0) else np.float64)
        vals = [np.real(v).astype(np.float64)] if real_out else [np.real(v).astype(np.float64),
                                                                np.imag(v).astype(np.float64)]
        parts = [(c.reshape(shape), c.reshape(shape), c.reshape(shape)) for c in vals]
        return Stated(shape, parts, (~per_batch(finite)).reshape(shape), np.zeros(shape, dtype=bool),
                      None if hermitian is None else per_batch(hermitian).reshape(shape), np.zeros(shape), 0)

    comps = [None] * n_comp
    todo = None
    for W in Ws:
        model = Model(Fraction(1, 1 << (np.finfo(W).nmant + 1)), Fraction(64, 1 << (np.finfo(W).nmant + 1)))
        wst = working_stages(st)
        Xw = np.where(finite.reshape((B,) + (1,) * L), X0, 0).astype(_complex_of(W))
        Y = _numpy_transform(fft_type, Xw, L, lengths[-1])
        Sw = S.astype(W) if W is not W0 else S
        eta_w = Fraction(*np.finfo(W).smallest_subnormal.as_integer_ratio())
        r = per_batch(up(up(Sw * ceil_to(_working_coefficient(model, wst), W)) + ceil_to(wst.underflow_at(eta_w), W)))
        bw = per_batch(b.astype(W))
        ys = [Y] if real_out else [Y.real, Y.imag]
        got = [decide(yc, r, bw, fmt) for yc in ys]
        ok = np.logical_and.reduce([g[3] for g in got])
        if todo is None:
            comps = [list(g[:3]) for g in got]
            todo = ~ok
        else:
            better = todo & ok
            for c, g in zip(comps, got):
                for j in range(3):
                    c[j] = np.where(better, g[j], c[j])
            todo = todo & ~ok
        if not todo.any():
            break
    todo &= per_batch(finite)
    undecided = _exact_route(fft_type, X0, L, lengths, rdims, fmt, comps, todo,
                             per_batch(b.astype(W0)), budget)
    parts = [tuple(np.asarray(a).reshape(shape) for a in c) for c in comps]
    return Stated(shape, parts, (~per_batch(finite)).reshape(shape), per_batch(overflow).reshape(shape),
                  None if hermitian is None else per_batch(hermitian).reshape(shape),
                  per_batch(b).reshape(shape), undecided)


def _hermitian(X0, lengths: tuple) -> np.ndarray:
    """Per slice: are the DC (and, n even, Nyquist) planes of the IRFFT
    operand Hermitian over the leading transformed axes — X[−k'] = conj X[k']
    exactly — so that the leading inverse transforms make them real?"""
    n = lengths[-1]
    planes = [0] + ([n // 2] if n % 2 == 0 and n // 2 != 0 else [])
    ok = np.ones(len(X0), dtype=bool)
    lead = X0.ndim - 2
    for k in planes:
        P = X0[..., k]
        mirror = P
        for ax in range(1, lead + 1):
            mirror = np.roll(np.flip(mirror, axis=ax), 1, axis=ax)
        with np.errstate(invalid="ignore"):
            same = (mirror == np.conj(P)) | (np.isnan(P) & np.isnan(mirror))
        ok &= same.reshape(len(X0), -1).all(axis=1)
    return ok


def _round_exact(lo: Fraction, hi: Fraction, b: Fraction, fmt: FloatFormat) -> tuple:
    """(nearest, lo end, hi end, decided) from y ∈ [lo, hi] (Fractions)."""
    n1, n2 = round_fraction(lo, fmt, "near"), round_fraction(hi, fmt, "near")
    l1, l2 = round_fraction(lo - b, fmt, "down"), round_fraction(hi - b, fmt, "down")
    h1, h2 = round_fraction(lo + b, fmt, "up"), round_fraction(hi + b, fmt, "up")
    ok = n1 == n2   # the ends are outward either way (`decide`)
    nearest = n1 if ok else round_fraction((lo + hi) / 2, fmt, "near")
    if nearest == 0:
        nearest = -0.0 if hi < 0 else 0.0
    return nearest, l1, h2, ok


def _exact_terms(fft_type: str, values: np.ndarray, lengths: tuple) -> tuple:
    """A slice's terms for `exact_sum`: (positions J (count, L), integer
    parts A, B at a common exponent E, weights w), zeros left out."""
    flat = values.reshape(-1)
    J = np.array(np.unravel_index(np.arange(flat.size), values.shape)).T.reshape(flat.size, values.ndim)
    re = [float(v) for v in np.real(flat).tolist()]
    im = [float(v) for v in np.imag(flat).tolist()] if np.iscomplexobj(flat) else [0.0] * flat.size
    ratios = [(v.as_integer_ratio(), w.as_integer_ratio()) for v, w in zip(re, im)]
    E = max([d.bit_length() - 1 for pair in ratios for _, d in pair] + [0])
    keep, A, Bs, ws = [], [], [], []
    n = lengths[-1]
    for t, ((an, ad), (bn, bd)) in enumerate(ratios):
        if an == 0 and bn == 0:
            continue
        keep.append(t)
        A.append(an << (E - (ad.bit_length() - 1)))
        Bs.append(bn << (E - (bd.bit_length() - 1)))
        if fft_type == "IRFFT":
            k = int(J[t, -1])
            ws.append(1 if k == 0 or (n % 2 == 0 and k == n // 2) else 2)
        else:
            ws.append(1)
    return J[keep], A, Bs, ws, E


def exact_element(fft_type: str, values: np.ndarray, lengths: tuple, k: tuple, fmt: FloatFormat,
                  b: Fraction, bits: int | None = None, prepared=None) -> list:
    """The exact route for one result element: its transform from the
    slice's exact `values` (operand dims over the transformed axes) at the
    result's transformed index `k`, in integers with enclosed twiddles at
    rising precision; per component (nearest, lo end, hi end, decided)."""
    J, A, Bs, ws, E = prepared if prepared is not None else _exact_terms(fft_type, values, lengths)
    Lc = 1
    for n in lengths:
        Lc = Lc * n // math.gcd(Lc, n)
    step = np.array([Lc // n for n in lengths], dtype=np.int64)
    m = ((J * (np.asarray(k, dtype=np.int64) * step)).sum(axis=1) % Lc).tolist() if len(J) else []
    sign = -1 if fft_type in ("FFT", "RFFT") else 1
    scale = int(np.prod(lengths, dtype=np.int64)) if fft_type in ("IFFT", "IRFFT") else 1
    real_only = fft_type == "IRFFT"
    terms = list(zip(A, Bs, m, ws))
    bits = bits or (2 * fmt.precision + 16 + max(len(terms), 1).bit_length())
    while True:
        (rl, rh), (il, ih) = exact_sum(terms, bits, Lc, sign, real_only)
        den = (1 << (bits + E)) * scale
        out = [_round_exact(Fraction(rl, den), Fraction(rh, den), b, fmt)]
        if not real_only:
            out.append(_round_exact(Fraction(il, den), Fraction(ih, den), b, fmt))
        if all(o[3] for o in out) or bits > 1600:
            return out
        bits *= 2


def _exact_route(fft_type, X0, L, lengths, rdims, fmt, comps, todo, b, budget) -> int:
    """`exact_element` for the undecided elements when all of them fit in
    the budget of terms; returns how many are left on their enclosures."""
    idx = np.flatnonzero(np.asarray(todo).reshape(-1))
    if not len(idx):
        return 0
    per = int(np.prod(rdims, dtype=np.int64))
    terms = int(np.prod(X0.shape[1:], dtype=np.int64))
    if len(idx) * terms > budget:   # all or nothing: a partial pass would cost the most for the least
        return len(idx)
    flat = [[np.asarray(a).reshape(-1) for a in c] for c in comps]
    bflat = np.asarray(b).reshape(-1)
    prepared: dict = {}
    done = 0
    for i in idx.tolist():
        bi, rest = divmod(i, per)
        k = np.unravel_index(rest, rdims)
        if bi not in prepared:
            prepared.clear()
            prepared[bi] = _exact_terms(fft_type, X0[bi], lengths)
        got = exact_element(fft_type, X0[bi], lengths, tuple(int(v) for v in k), fmt,
                            Fraction(*bflat[i].as_integer_ratio()), prepared=prepared[bi])
        for c, g in zip(flat, got):
            c[0][i], c[1][i], c[2][i] = g[0], g[1], g[2]
        done += 1
    for c, f in zip(comps, flat):
        for j in range(3):
            c[j] = f[j].reshape(np.shape(c[j]))
    return len(idx) - done
