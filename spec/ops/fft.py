"""fft — forward and inverse Fourier transforms of real and complex tensors (spec section "fft").

Semantics: `fft_type` FFT, IFFT, RFFT or IRFFT over the last
L = size(fft_length) dimensions, as the seed composes them from 1-D
transforms.  Each result element is the exact transform of the operand's
exact values — the DFT y_k = Σ_j x_j·exp(∓2πi·j·k/n) along each
transformed axis, with IFFT's and IRFFT's 1/n per axis — stated as a
`Range` (a "bounded" expectation): [y − b, y + b] rounded outward into the
result's format, with the nearest value of y as the reported one.

The bound.  The seed's "Accuracy" section guarantees nothing ("StableHLO
does not provide guarantees about numerical accuracy"), so this is our
statement of the accuracy every FFT of the family below meets.  Its source
is Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed.,
§24.1, Theorem 24.2: the radix-2 Cooley–Tukey FFT with twiddles within μ
of the roots of unity satisfies ‖ŷ − y‖₂/‖y‖₂ ≤ log₂n·η/(1 − log₂n·η),
η = μ + γ₄(√2 + μ), γ_k = k·u/(1 − k·u).  We use the same proof done
componentwise (spec/dft.py), which bounds every component of every
element, per transformed slice:

    b = T·(Π_s (1 + ε_s) − 1)·Σ_slice |x_j|  +  c₀,

one factor per transformed axis s (the seed's composition of 1-D
transforms: the error of a stage reaches the next through weights of
modulus ≤ 1, 1/n for an inverse), T = 1 (FFT, RFFT), 1/N (IFFT), 2/N
(IRFFT), c₀ a term for underflow, and ε_s the largest bound of the
family's members for that axis' length n, at unit roundoff u with twiddles
within 2 ulps per component (μ = 4u):

* powers of two and every other length: mixed-radix Cooley–Tukey over the
  prime factors p of n, each level a twiddle multiplication and a direct
  p-point DFT — σ(p) = (1 + τ)²(1 + γ_p) − 1 per level, τ = μ + √2γ₂(1 + μ)
  (Higham Lemma 3.5), ε = Π_p (1 + σ(p)) − 1.  σ(2) ≥ η, so for n = 2^k
  this is Theorem 24.2's log₂n·η to first order (about 16·log₂n·u);
  radix-4/8, split-radix and the codelets of FFTW, pocketfft, DUCC
  (XLA:CPU) and cuFFT do no more operations per level and are covered;
* a direct evaluation of the DFT sum for n ≤ 64 (γ_n: a reference
  implementation may do that);
* Bluestein's algorithm where a library uses it (pocketfft/DUCC: n ≥ 50
  with a prime factor p, p² > n; cuFFT: p > 127): a convolution of an
  11-smooth length m ∈ [2n − 1, 4n), bounded in norm through the chirp
  (a factor √(2n − 1)): the loosest member by far (about 1000·log₂n·u at
  n = 97), stated so;
* RFFT's and IRFFT's real stage doubles its ε and adds a pre/post pass
  (packed half-length transforms); an inverse stage adds its 1/n scaling.

Measured against it (tests/spec/test_ops_fft.py; an f32/f64 FFT of
random complex data, truth in long double): numpy.fft, scipy.fft and
XLA:CPU err by 10⁻⁶ to 2·10⁻² of b (n = 12 … 4096, primes 97 and 1009
included) — every correct implementation we know is far inside, while the
classic wrong ones (an unnormalised inverse, the conjugate transform, the
axes of IRFFT in the wrong order, RFFT's spectrum untruncated, an IRFFT
without the Hermitian extension) miss by the size of the result.  The
price of a worst-case componentwise bound: it is loose (b is relative to
Σ|x|, not to |y_k|), so an implementation that is wrong by a few parts in
10⁴ of the result on f32 would pass.

The oracle's own computation (spec/dft.py) is rigorous and fast: y is
enclosed from numpy's FFT in float64 (f32 results) or long double (f64)
with the same model's radius at the working precision, the ends are
rounded outward, and only a reported value the enclosure leaves undecided
goes to an exact sum in integers; a 2^16-point f32 FFT or a 256×256 fft2
is judged in about 2 s (whole arrays: `arrays` returns `bounds.Answers`).

Readings and implementation-defined results, declared:

* IRFFT.  The seed defines `irfft` only as "the inverse of rfft"; an
  operand whose DC term (and, for an even length, Nyquist term) is not
  real after the leading inverse transforms — X[−k'] ≠ conj(X[k']) in
  those planes — is the rfft of no real tensor.  Where it is real, the
  result is that inverse; elsewhere it is implementation-defined: the
  reading every implementation we know takes (numpy, pocketfft and ducc
  — XLA:CPU —, IREE, the reference interpreter) is offered first,
  "imaginary parts of the DC and Nyquist terms ignored", then any value.
  The value cases make most IRFFT operands Hermitian there.
* Non-finite inputs.  A NaN or infinity anywhere in a transformed slice
  reaches every output of the slice through operations the algorithm
  chooses (a butterfly adds, a twiddle of modulus 1 multiplies, ∞·0
  appears or not): NaN first, then any value, for every element of that
  slice.
* Overflow.  Where an intermediate result may exceed the format's range
  (Σ|x|·2·ΠK ≥ the largest finite value: spec/dft.py), any value.
* Zero results.  The nearest value of an exact zero is +0; a bounded
  expectation compares ±0 equal.

Findings (docs/spec-findings.md):
* The Inputs and Outputs tables allow every floating-point type (f8E4M3FN,
  f8E5M2, bf16, f16, f32, f64), but C2 pairs each float type with "a
  complex type of the same floating-point semantics", and the spec has
  complex<f32> and complex<f64> only: no valid program holds bf16, f16 or
  an f8 type (check-spec's satisfiability proof fails on them).  The
  tables are encoded as f32, f64, complex<f32>, complex<f64>; an RFFT of
  bf16 is refused as outside the table rather than by C2.
* rfft's truncation reads `complex_result[:(rank(complex_result) / 2 + 1)]`;
  the rank of a 1-D tensor is 1, so that keeps one element.
  `dim(complex_result, 0) / 2 + 1` is meant (C5 says so).
* "irfft which has the same type signature" as rfft: it has the inverse
  signature (complex in, real out).
* C4 ties `fft_length` to the trailing dims of a *real* tensor only, and
  the semantics read nothing of `fft_length` but its size for FFT and IFFT:
  an FFT of a tensor<8xcomplex<f32>> with fft_length = [4] is valid and
  transforms 8 points.  Encoded as written (the pinned verifier agrees);
  XLA reads fft_length there (docs/findings.md).
* The seed's order of the 1-D transforms matters for IRFFT only: complex
  transforms along different axes commute.
"""
from __future__ import annotations

import math

import numpy as np

from ..dsl import (ANY_VALUE, Accumulating, Attribute, EnumAttr, I64ArrayAttr, If, ImplDefined,
                   OpSpec, Operand, Range, Result, all_of, dim, element_type, is_symbolic, rank, shape, size)
from ..exercise import Corner, Exercise
from .. import bounds, dft
from ..types import C64, C128, E_F32, E_F64, TensorType, complex_type

FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")
# The tables say "tensor of floating-point or complex type"; C2 admits only the floating-point types that have a
# complex counterpart (module docstring: a finding), so the tables are encoded as those.
TABLE = (E_F32, E_F64, C64, C128)

NONFINITE = ("any value: a NaN or infinity in the transformed slice reaches this element through operations the "
             "algorithm chooses")
OVERFLOW = "any value: an intermediate result of the transform may overflow"
IGNORED = "imaginary parts of the DC and Nyquist terms ignored"
NOT_RFFT = "any value: the operand is no rfft result"
NONFINITE_WHY = ("fft: the seed defines the transform of real numbers; which outputs a NaN or infinity turns into "
                 "NaN or ±inf depends on the operations of the implementation's algorithm")
OVERFLOW_WHY = "fft: an intermediate result of the implementation's algorithm may overflow on this slice"
IRFFT_WHY = ('fft: the seed defines irfft only as "the inverse of rfft"; this operand\'s DC or Nyquist terms are '
             "not real after the leading inverse transforms, so it is the rfft of no real tensor")


# --------------------------------------------------------------------------
# Constraints
# --------------------------------------------------------------------------

def _half_plus_one(d):
    """`d == 0 ? 0 : d / 2 + 1` (integer division; d may be symbolic)."""
    return If(d == 0, 0, (d / 2 if is_symbolic(d) else d // 2) + 1)


def _trailing(t, lengths):
    """`dims(t)[-size(lengths):] = lengths`."""
    L = len(lengths)
    if rank(t) < L:
        return False
    return all_of(d == f for d, f in zip(shape(t)[rank(t) - L:], lengths))


def fft_c1(op):
    """(C1) `rank(operand)` $\\ge$ `size(fft_length)`."""
    return rank(op.operand) >= size(op.fft_length)


def fft_c2(op):
    """(C2) The relationship between `operand` and `result` element types varies:
  * If `fft_type = FFT`, `element_type(operand)` and `element_type(result)`
    have the same complex type.
  * If `fft_type = IFFT`, `element_type(operand)` and `element_type(result)`
    have the same complex type.
  * If `fft_type = RFFT`, `element_type(operand)` is a floating-point type and
    `element_type(result)` is a complex type of the same floating-point
    semantics.
  * If `fft_type = IRFFT`, `element_type(operand)` is a complex type and
    `element_type(result)` is a floating-point type of the same floating-point
    semantics."""
    a, r = element_type(op.operand), element_type(op.result)
    t = op.fft_type
    if t in ("FFT", "IFFT"):
        return a.is_complex and r == a
    if t == "RFFT":
        return a.is_float and r.is_complex and r.component == a
    if t == "IRFFT":
        return a.is_complex and r.is_float and a.component == r
    return False


def fft_c3(op):
    """(C3) 1 $\\le$ `size(fft_length)` $\\le$ 3."""
    return 1 <= size(op.fft_length) <= 3


def fft_c4(op):
    """(C4) If among `operand` and `result`, there is a tensor `real` of a
floating-point type, then `dims(real)[-size(fft_length):] = fft_length`.

    `[-0:]` read as the empty tail (size 0 is C3's)."""
    return all_of(_trailing(t, op.fft_length) for t in (op.operand, op.result) if element_type(t).is_float)


def fft_c5(op):
    """(C5) `dim(result, d) = dim(operand, d)` for all `d`, except for:
  * If `fft_type = RFFT`,
    `dim(result, -1) = dim(operand, -1) == 0 ? 0 : dim(operand, -1) / 2 + 1`.
  * If `fft_type = IRFFT`,
    `dim(operand, -1) = dim(result, -1) == 0 ? 0 : dim(result, -1) / 2 + 1`.

    Ranks equal (the rule names every `d` of both)."""
    o, r = op.operand, op.result
    if rank(o) != rank(r):
        return False
    R = rank(o)
    if R == 0:
        return True
    lead = [dim(r, d) == dim(o, d) for d in range(R - 1)]
    last_o, last_r = dim(o, R - 1), dim(r, R - 1)
    if op.fft_type == "RFFT":
        last = last_r == _half_plus_one(last_o)
    elif op.fft_type == "IRFFT":
        last = last_o == _half_plus_one(last_r)
    else:
        last = last_r == last_o
    return all_of(lead + [last])


def infer(op):
    """C2 and C5 (with C4 for IRFFT's last dim: fft_length[-1])."""
    o = op.operand
    et, s = o.element_type, tuple(shape(o))
    t = op.fft_type
    if t == "RFFT":
        ret = complex_type(et) if et in (E_F32, E_F64) else et
        dims = s[:-1] + (_half_plus_one(s[-1]),) if s else s
    elif t == "IRFFT":
        ret = et.component if et.is_complex else et
        dims = s[:-1] + (op.fft_length[-1],) if s and len(op.fft_length) else s
    else:
        ret, dims = et, s
    return {"result": TensorType(tuple(dims), ret)}


# --------------------------------------------------------------------------
# Semantics
# --------------------------------------------------------------------------

def _format(op):
    et = op.result.element_type
    return (et.component if et.is_complex else et).format


def arrays(op, operand):
    """Every result element as a `Range` (module docstring), from
    spec/dft.py's `transform` on the whole operand; slices with a
    non-finite input, a possible overflow, or (IRFFT) an operand that is no
    rfft result offer their labelled alternatives.

    Stated on whole arrays (`bounds.Answers`; a complex result component by
    component, shape + (2,)): `transform` has already rounded y, y − b and
    y + b into the format, so the one stage hands those values over as
    degenerate enclosures, and only the special elements take the
    per-element route (`element`) — a 2^16-point transform is judged in
    seconds, not in 2^17 Python resolutions."""
    t = op.fft_type
    L = len(op.fft_length)
    x = np.asarray(operand)
    n_last = int(op.fft_length[-1]) if t == "IRFFT" else (int(x.shape[-1]) if x.ndim else 0)
    st = dft.transform(t, x, L, n_last, _format(op))
    real = len(st.parts) == 1
    size_ = int(np.prod(st.shape, dtype=np.int64))
    # component-major → element-major: flat index 2·e + c for complex (re, im), e for real
    near, lo, hi = (np.stack([np.asarray(p[j], dtype=np.float64).reshape(-1) for p in st.parts], axis=1).reshape(-1)
                    for j in range(3))
    per = 1 if real else 2
    nonfinite = np.repeat(st.nonfinite.reshape(-1), per)
    overflow = np.repeat(st.overflow.reshape(-1), per)
    not_rfft = (np.repeat(~st.hermitian.reshape(-1), per) if st.hermitian is not None
                else np.zeros(size_ * per, dtype=bool))
    special = nonfinite | overflow | not_rfft
    kind = np.where(special, bounds.ELEMENT, bounds.RANGE).astype(np.int8)

    def stage(idx):
        return (near[idx], near[idx]), (lo[idx], lo[idx]), (hi[idx], hi[idx])

    def element(i):
        rng = Range(float(near[i]), float(lo[i]), float(hi[i]))
        if nonfinite[i]:
            return ImplDefined({"NaN": math.nan, NONFINITE: ANY_VALUE}, why=NONFINITE_WHY)
        if overflow[i]:
            return ImplDefined({"the exact result rounded": rng, OVERFLOW: ANY_VALUE}, why=OVERFLOW_WHY)
        if not_rfft[i]:
            return ImplDefined({IGNORED: rng, NOT_RFFT: ANY_VALUE}, why=IRFFT_WHY)
        return rng

    shape = tuple(st.shape) + (() if real else (2,))
    return [bounds.Answers(shape, kind, np.zeros(size_ * per), (stage,), element,
                           {bounds.RANGE: Range(0.0, 0.0, 0.0)})]


def _working(op) -> int:
    """The oracle's memory beyond operands and results: the working-type
    transforms, their enclosures and rounded ends per component, and the
    whole-array record.  It grows with the transform's length up to 256
    points (longer transforms leave more elements to the wider working
    types' passes; tests/oracle/test_cost_measured.py): measured per
    element of complex<f32> transforms, 440 bytes at 16 points, 930 at 64,
    1,500 at 128, about 1,800 from 256 to 2^16 points."""
    n_res = int(np.prod([int(d) for d in op.result.shape], dtype=np.int64))
    n_op = int(np.prod([int(d) for d in op.operand.shape], dtype=np.int64))
    points = int(np.prod([int(d) for d in op.fft_length], dtype=np.int64))
    per = max(256, 330 * min(max(points, 1).bit_length() - 1, 8) - 1000)
    return per * n_res + 128 * n_op


# --------------------------------------------------------------------------
# Exercise
# --------------------------------------------------------------------------

def _lengths(op):
    """1, 2 or 3 transformed axes (valid), then 0, 4 and one past the rank
    (C3 and C1 broken)."""
    r = rank(op.operand)
    return tuple(dict.fromkeys(k for k in (1, 2, 3, 0, 4, r + 1) if k <= max(r + 1, 1)))


def _real_tensor(op):
    return op.result if op.fft_type == "IRFFT" else op.operand


def _matched(op):
    """fft_length equal to the transform's dims (what C4 demands of a real tensor; for FFT and IFFT, what
    programs from the wild write)."""
    t = _real_tensor(op)
    return [d == f for d, f in zip(shape(t)[rank(t) - len(op.fft_length):], op.fft_length)]


CORNERS = (
    Corner("fft_length the trailing dims, one axis, batched", (2,),
           lambda op: _matched(op) + [op.operand.shape[0] >= 2, op.operand.shape[1] >= 2],
           layout={"lengths": {"fft_length": 1}}),
    Corner("fft_length the trailing dims, two axes", (3,), lambda op: _matched(op) + [d >= 2 for d in op.fft_length],
           layout={"lengths": {"fft_length": 2}}),
    Corner("fft_length the trailing dims, three axes", (3,),
           lambda op: _matched(op) + [d >= 2 for d in op.fft_length], layout={"lengths": {"fft_length": 3}}),
    Corner("one-point transforms (fft_length of 1)", (2,), lambda op: _matched(op) + [op.fft_length[0] == 1],
           layout={"lengths": {"fft_length": 1}}),
    Corner("a zero-sized transformed axis", (2,), lambda op: _matched(op) + [op.fft_length[0] == 0],
           layout={"lengths": {"fft_length": 1}}),
)

# (note, transform dims — the real tensor's for RFFT and IRFFT —, number of transformed axes)
SHAPES = (
    ("length 8 (a power of two)", (8,), 1),
    ("length 6 (not a power of two)", (6,), 1),
    ("length 5 (an odd prime)", (5,), 1),
    ("length 1", (1,), 1),
    ("length 17 (a prime past the specialised radices)", (17,), 1),
    ("a batch of length-8 transforms", (3, 8), 1),
    ("two axes, 4x6, batched", (2, 4, 6), 2),
    ("three axes, 2x3x4", (2, 3, 4), 3),
)
MISMATCHED = (
    ("FFT/IFFT: fft_length [4] shorter than the operand's 8 (the seed's semantics transform 8 points)", (8,), (4,)),
    ("FFT/IFFT: fft_length [16] longer than the operand's 8 (the seed's semantics transform 8 points)", (8,), (16,)),
)


def _instance(spec, skel, dims: tuple, L: int, fft_length: tuple | None = None):
    t = skel.attr_dict["fft_type"]
    et = skel.operand_types[0]
    dims = tuple(dims)
    op_dims = dims[:-1] + (dims[-1] // 2 + 1,) if t == "IRFFT" else dims
    lengths = fft_length if fft_length is not None else dims[len(dims) - L:]
    inst = spec.instance({"operand": TensorType(op_dims, et)}, {"fft_type": t, "fft_length": tuple(lengths)}, {})
    return spec.instance({"operand": inst.operand}, {"fft_type": t, "fft_length": tuple(lengths)}, infer(inst))


def _built_corners(spec, skels, rng):
    """Per valid skeleton (type × element type) the `SHAPES`, by hand: the
    lengths an implementation takes different paths for (powers of two,
    odd primes, 1, a prime past radix 11, batches, 2 and 3 axes; an odd
    IRFFT length); FFT and IFFT of complex<f32> also with an fft_length
    that differs from the operand's dims."""
    out = []
    for skel in skels:
        for note, dims, L in SHAPES:
            out.append((note, skel, _instance(spec, skel, dims, L)))
        if skel.attr_dict["fft_type"] in ("FFT", "IFFT") and skel.operand_types[0].name == "complex<f32>":
            for note, dims, lengths in MISMATCHED:
                out.append((note, skel, _instance(spec, skel, dims, 1, lengths)))
    return out


def _exact_specials(fmt) -> list:
    tiny = float(fmt.min_subnormal)
    return [0.0, -0.0, 1.0, -1.0, 2.0, -0.5, 3.0, tiny, -tiny, float(fmt.min_normal), 1e-20, -1e15]


def operand_values(op, name, k, t, rng):
    """Operands of moderate magnitude (normal values at one random scale)
    with exact small values sprinkled in (±0, ±1, subnormals, values far
    from the scale); one in seven is small integers (exact sums, ties).
    Half the operands of several slices hold a NaN, an infinity or the
    largest finite value in their first slice: that slice's elements offer
    any value (module docstring), the other slices are scored.  IRFFT operands are
    made Hermitian in the DC and Nyquist planes four times in five (so
    that they are rfft results: the scored reading)."""
    if name != "operand":
        return None
    et = t.element_type
    comp = et.component if et.is_complex else et
    shape_ = tuple(int(d) for d in t.shape)
    count = int(np.prod(shape_, dtype=np.int64))
    parts = []
    integers = rng.random() < 1 / 7
    scale = 2.0 ** int(rng.integers(-6, 7))
    for _ in range(2 if et.is_complex else 1):
        if integers:
            v = rng.integers(-4, 5, size=count).astype(np.float64)
        else:
            v = rng.standard_normal(count) * scale
            pick = rng.random(count) < 0.15
            choice = np.array(_exact_specials(comp.format))[rng.integers(0, 12, size=count)]
            v = np.where(pick, choice, v)
        parts.append(v.astype(comp.numpy))
    L = len(op.fft_length)
    per_slice = int(np.prod(shape_[len(shape_) - L:], dtype=np.int64)) if L <= len(shape_) else 0
    if per_slice and count > per_slice and rng.random() < 0.5:
        # A non-finite or huge value in the first slice only: its elements offer any value, the others are scored.
        where = int(rng.integers(0, per_slice))
        special = [np.nan, np.inf, -np.inf, float(comp.format.max_finite)][int(rng.integers(0, 4))]
        parts[int(rng.integers(0, len(parts)))][where] = special
    if et.is_complex:
        x = np.empty(count, dtype=et.numpy)
        x.real, x.imag = parts
    else:
        x = parts[0]
    x = x.reshape(shape_)
    if op.fft_type == "IRFFT" and count and rng.random() < 0.8:
        x = _hermitian_planes(x, op)
    return x


def _hermitian_planes(x, op):
    """x with its DC and Nyquist planes made Hermitian over the leading
    transformed axes: each entry and its mirror X[−k'] replaced by
    (a + conj b)/2 and its conjugate — exactly, since the float operations
    are symmetric."""
    L = len(op.fft_length)
    n = int(op.fft_length[-1])
    x = x.copy()
    lead_axes = tuple(range(x.ndim - L, x.ndim - 1))
    for k in dict.fromkeys([0] + ([n // 2] if n % 2 == 0 else [])):
        if k >= x.shape[-1]:
            continue
        P = x[..., k]
        M = P
        for ax in lead_axes:
            M = np.roll(np.flip(M, axis=ax), 1, axis=ax)
        with np.errstate(invalid="ignore", over="ignore"):
            x[..., k] = ((P + np.conj(M)) / 2).astype(x.dtype)
    return x


SPEC = OpSpec(
    mnemonic="fft",
    operands=(Operand("operand", TABLE),),
    attributes=(
        Attribute("fft_type", EnumAttr("fft_type", FFT_TYPES)),
        Attribute("fft_length", I64ArrayAttr(), length=_lengths),
    ),
    results=(Result("result", TABLE),),
    constraints=(fft_c1, fft_c2, fft_c3, fft_c4, fft_c5),
    infer=infer,
    semantics=Accumulating(arrays, working=_working),
    exercise=Exercise(corners=CORNERS, built_corners=_built_corners, operand_values=operand_values),
    check_ranks=(3, 4),
)
