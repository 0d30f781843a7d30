"""fft: constraints on hand-made instances, inference, and the stated
accuracy (spec/ops/fft.py, spec/dft.py) against independent truth.

Truth here never comes from the code under test:

* the exact DFT, evaluated from its definition with mpmath at 50 digits
  (twiddles by `cospi`/`sinpi` of the reduced rational angle, so the
  quarter-turn twiddles are exact), composed along the axes as the seed
  composes its 1-D transforms, and rounded into the format by mpmath;
* second implementations: numpy.fft and scipy.fft (pocketfft) in f32 and
  f64, and two FFTs written here in float32 arithmetic (a recursive
  radix-2 Cooley–Tukey and a direct O(n²) sum) — correct implementations
  the bound must admit;
* classic wrong implementations — an unnormalised inverse, the conjugate
  (wrong-sign) transform, RFFT's full or badly truncated spectrum, an
  IRFFT without the Hermitian extension, a transform along the wrong axis,
  a 2-D transform done along one axis — which the bound must reject;
* Higham's constant η for the radix-2 FFT (Accuracy and Stability of
  Numerical Algorithms, 2nd ed., §24.1, Theorem 24.2), computed here in
  rationals, which each stage of the stated model must cover.

The seed's Example runs in tests/oracle/test_spec_examples.py (`-k fft`).
"""
from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import scipy.fft

from shlo_conform.generators import emit
from shlo_conform.generators.expect import expected_outputs
from shlo_conform.spec import dft
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.ops import fft as fft_mod
from shlo_conform.spec.types import TensorType, element_type
from shlo_conform.suites.compare import compare

FFT = OPS["fft"]
REAL = {"f32": np.float32, "f64": np.float64}
CPLX = {"f32": np.complex64, "f64": np.complex128}
BITS = {"f32": np.uint32, "f64": np.uint64}


def inst(shape, et, fft_type, lengths, result=None):
    o = TensorType(tuple(shape), element_type(et))
    attrs = {"fft_type": fft_type, "fft_length": tuple(lengths)}
    if result is None:
        result = fft_mod.infer(FFT.instance({"operand": o}, attrs, {}))["result"]
    return FFT.instance({"operand": o}, attrs, {"result": result})


def T(shape, et):
    return TensorType(tuple(shape), element_type(et))


# --------------------------------------------------------------------------
# Constraints: each broken alone; inference for the four types
# --------------------------------------------------------------------------

def test_constraints_one_at_a_time():
    assert FFT.violated(inst((4,), "complex<f32>", "FFT", (4,))) == []
    assert FFT.violated(inst((2, 3, 4), "f64", "RFFT", (3, 4))) == []
    assert FFT.violated(inst((2, 3, 3), "complex<f32>", "IRFFT", (2, 3, 4))) == []
    # C1: rank 1 < size 2 (a complex tensor: C4 says nothing)
    assert FFT.violated(inst((4,), "complex<f32>", "FFT", (4, 4))) == ["fft_c1"]
    # C2: FFT's result of another complex type; an RFFT of a complex operand; an IFFT of a real one
    assert FFT.violated(inst((4,), "complex<f32>", "FFT", (4,), T((4,), "complex<f64>"))) == ["fft_c2"]
    assert FFT.violated(inst((8,), "complex<f32>", "RFFT", (8,), T((5,), "complex<f32>"))) == ["fft_c2"]
    assert FFT.violated(inst((4,), "complex<f64>", "IRFFT", (6,), T((6,), "f32"))) == ["fft_c2"]
    # C3: no axis, four axes
    assert FFT.violated(inst((4,), "complex<f32>", "FFT", ())) == ["fft_c3"]
    assert FFT.violated(inst((1, 2, 3, 4), "complex<f32>", "FFT", (1, 2, 3, 4))) == ["fft_c3"]
    # C4: the real tensor's trailing dims are not fft_length (operand for RFFT, result for IRFFT)
    assert FFT.violated(inst((8,), "f32", "RFFT", (6,), T((5,), "complex<f32>"))) == ["fft_c4"]
    assert FFT.violated(inst((3, 5), "complex<f32>", "IRFFT", (4, 8), T((3, 8), "f32"))) == ["fft_c4"]
    # C5: a leading dim differs; RFFT's last dim not n/2 + 1; IRFFT's operand not n/2 + 1
    assert FFT.violated(inst((2, 4), "complex<f32>", "FFT", (4,), T((3, 4), "complex<f32>"))) == ["fft_c5"]
    assert FFT.violated(inst((8,), "f32", "RFFT", (8,), T((8,), "complex<f32>"))) == ["fft_c5"]
    assert FFT.violated(inst((8,), "complex<f32>", "IRFFT", (8,), T((8,), "f32"))) == ["fft_c5"]
    # The seed reads fft_length for FFT and IFFT only through its size (module docstring: a finding)
    assert FFT.violated(inst((8,), "complex<f32>", "FFT", (4,))) == []


@pytest.mark.parametrize("fft_type, operand, lengths, result", [
    ("FFT", ((2, 6), "complex<f32>"), (6,), ((2, 6), "complex<f32>")),
    ("IFFT", ((2, 3, 5), "complex<f64>"), (3, 5), ((2, 3, 5), "complex<f64>")),
    ("RFFT", ((2, 3, 7), "f32"), (2, 3, 7), ((2, 3, 4), "complex<f32>")),
    ("RFFT", ((5, 0), "f64"), (0,), ((5, 0), "complex<f64>")),
    ("IRFFT", ((4, 4), "complex<f64>"), (4, 7), ((4, 7), "f64")),
    ("IRFFT", ((3,), "complex<f32>"), (4,), ((4,), "f32")),
])
def test_inference(fft_type, operand, lengths, result):
    i = inst(operand[0], operand[1], fft_type, lengths)
    assert i.result == T(*result)
    assert FFT.violated(i) == []


# --------------------------------------------------------------------------
# Independent truth: the DFT from its definition (mpmath, 50 digits)
# --------------------------------------------------------------------------

def _w(m: int, n: int, sign: int):
    """exp(sign·2πi·m/n), the angle reduced exactly first."""
    m %= n
    a = mpmath.mpf(2 * m) / n
    return mpmath.mpc(mpmath.cospi(a), sign * mpmath.sinpi(a))


def _dft1(v, sign, inverse):
    n = len(v)
    out = [mpmath.fsum(v[j] * _w(j * k, n, sign) for j in range(n)) for k in range(n)]
    return [o / n for o in out] if inverse else out


def _irfft1(z, n):
    """The inverse of rfft: the Hermitian extension, then the inverse DFT, real part."""
    full = [z[k] if k <= n // 2 else mpmath.conj(z[n - k]) for k in range(n)]
    return [mpmath.re(v) for v in _dft1(full, +1, True)]


def _along(a, axis, fn):
    a = np.moveaxis(a, axis, -1)
    first = fn(list(a[(0,) * (a.ndim - 1)])) if a.size else []
    out = np.empty(a.shape[:-1] + (len(first),), dtype=object)
    for idx in np.ndindex(*a.shape[:-1]):
        out[idx] = fn(list(a[idx])) if idx else first
    return np.moveaxis(out, -1, axis)


def exact(x, fft_type, lengths):
    """The seed's composition of 1-D transforms over the last len(lengths) axes, in mpmath."""
    with mpmath.workdps(50):
        a = np.empty(x.shape, dtype=object)
        for idx in np.ndindex(*x.shape):
            v = complex(x[idx])
            a[idx] = mpmath.mpc(v.real, v.imag)
        L = len(lengths)
        axes = list(range(x.ndim - L, x.ndim))
        if fft_type == "FFT":
            for ax in reversed(axes):
                a = _along(a, ax, lambda v: _dft1(v, -1, False))
        elif fft_type == "IFFT":
            for ax in axes:
                a = _along(a, ax, lambda v: _dft1(v, +1, True))
        elif fft_type == "RFFT":
            n = lengths[-1]
            a = _along(a, axes[-1], lambda v: _dft1(v, -1, False)[: n // 2 + 1])
            for ax in reversed(axes[:-1]):
                a = _along(a, ax, lambda v: _dft1(v, -1, False))
        else:
            for ax in axes[:-1]:
                a = _along(a, ax, lambda v: _dft1(v, +1, True))
            a = _along(a, axes[-1], lambda v: _irfft1(v, lengths[-1]))
        return a


def rounded(a, fmt: str, real: bool):
    """mpmath's rounding of the exact values to nearest in the format (normal range here)."""
    prec = {"f32": 24, "f64": 53}[fmt]

    def r(v):
        if abs(v) < mpmath.mpf(2) ** -200:   # an exact zero the mpmath sum leaves as dust
            return 0.0
        with mpmath.workprec(prec):
            return float(+v)

    flat = a.reshape(-1)
    if real:
        return np.array([r(mpmath.re(v)) for v in flat]).reshape(a.shape)
    return np.array([complex(r(mpmath.re(v)), r(mpmath.im(v))) for v in flat]).reshape(a.shape)


def operand(shape, et, rng, fft_type=None, lengths=None):
    fmt = "f64" if "f64" in et else "f32"
    if et.startswith("complex"):
        x = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(CPLX[fmt])
    else:
        x = rng.standard_normal(shape).astype(REAL[fmt])
    if fft_type == "IRFFT":   # the rfft of a real tensor: Hermitian DC / Nyquist planes
        x = np.fft.rfftn(rng.standard_normal(shape[:-1] + (lengths[-1],)), axes=range(-len(lengths), 0))
        x = x.astype(CPLX[fmt])
    return x


def expect(i, x):
    e, = expected_outputs(emit.program(FFT, i), [x])
    return e


def components(bits, fmt):
    """Bit patterns (complex: component pairs) as the component values."""
    b = np.asarray(bits)
    assert b.dtype == BITS[fmt]
    return b.view(REAL[fmt])


def as_result(vals, et_result: str):
    fmt = "f64" if "f64" in et_result else "f32"
    return np.asarray(vals).astype(CPLX[fmt] if et_result.startswith("complex") else REAL[fmt])


CASES = [   # (fft_type, element type, operand shape, fft_length)
    ("FFT", "complex<f32>", (3,), (3,)),
    ("FFT", "complex<f64>", (2, 5), (5,)),
    ("FFT", "complex<f32>", (6,), (6,)),
    ("IFFT", "complex<f32>", (7,), (7,)),
    ("IFFT", "complex<f64>", (12,), (12,)),
    ("FFT", "complex<f32>", (2, 1), (1,)),
    ("FFT", "complex<f32>", (2, 3, 4), (3, 4)),
    ("IFFT", "complex<f32>", (2, 3, 2), (2, 3, 2)),
    ("RFFT", "f32", (2, 6), (6,)),
    ("RFFT", "f64", (7,), (7,)),
    ("RFFT", "f32", (3, 5), (3, 5)),
    ("RFFT", "f64", (2, 2, 3), (2, 2, 3)),
    ("IRFFT", "complex<f32>", (4,), (6,)),
    ("IRFFT", "complex<f64>", (3,), (5,)),
    ("IRFFT", "complex<f32>", (2, 3, 4), (3, 7)),
    ("IRFFT", "complex<f64>", (2, 2, 2), (2, 2, 3)),
]


def _shape_of(fft_type, shape, lengths):
    return shape[:-1] + (lengths[-1] // 2 + 1,) if fft_type == "IRFFT" else shape


@pytest.mark.parametrize("fft_type, et, shape, lengths", CASES, ids=["-".join(map(str, c)) for c in CASES])
def test_exact_dft_is_inside_and_is_the_nearest(fft_type, et, shape, lengths):
    """The exact transform lies in every [lo, hi]; the oracle's reported value is
    the exact one rounded to nearest; the rounded truth passes; and the
    elements just past each end fail (a bound that could not fail would be
    no bound)."""
    rng = np.random.default_rng(len(shape) * 31 + sum(lengths))
    shape = _shape_of(fft_type, shape, lengths)
    i = inst(shape, et, fft_type, lengths)
    x = operand(shape, et, rng, fft_type, lengths)
    e = expect(i, x)
    assert e.kind == "bounded" and not e.impl_defined
    fmt = "f64" if "f64" in et else "f32"
    real = fft_type == "IRFFT"
    truth = exact(x, fft_type, lengths)
    want = rounded(truth, fmt, real)
    assert want.shape == tuple(i.result.shape)
    got = e.array()
    assert np.array_equal(got, as_result(want, str(i.result.element_type))), (got, want)
    assert compare(e, as_result(want, str(i.result.element_type))).ok
    lo, hi = components(e.lo, fmt).reshape(-1), components(e.hi, fmt).reshape(-1)
    flat = truth.reshape(-1)
    exact_parts = [mpmath.re(v) for v in flat] if real else [p for v in flat for p in (mpmath.re(v), mpmath.im(v))]
    for k, v in enumerate(exact_parts):
        assert mpmath.mpf(float(lo[k])) <= v <= mpmath.mpf(float(hi[k])), k
    # At the ends: passes; one ulp past either end: fails (one element, one component)
    base = components(e.bits, fmt).reshape(-1).copy()
    for k in (0, len(base) - 1):
        for end, way in ((hi, np.inf), (lo, -np.inf)):
            at = base.copy()
            at[k] = end[k]
            assert compare(e, _from_parts(at, i, fmt)).ok
            at[k] = np.nextafter(end[k], REAL[fmt](way))
            assert not compare(e, _from_parts(at, i, fmt)).ok


def _from_parts(parts, i, fmt):
    shape = tuple(i.result.shape)
    if i.result.element_type.is_complex:
        p = parts.reshape(shape + (2,))
        out = np.empty(shape, CPLX[fmt])
        out.real, out.imag = p[..., 0], p[..., 1]
        return out
    return parts.reshape(shape).astype(REAL[fmt])


def test_seed_example_by_hand():
    """(1, 0, 0, 0) → (1, 1, 1, 1), exactly (no rounding happens: every product is by ±1 or 0)."""
    e = expect(inst((4,), "complex<f32>", "FFT", (4,)), np.array([1, 0, 0, 0], np.complex64))
    assert e.array().tolist() == [1, 1, 1, 1]
    assert compare(e, np.ones(4, np.complex64)).ok
    assert not compare(e, np.array([1, 1, 1, 1 + 1e-5j], np.complex64)).ok   # the allowance is ~2e-6 here


def test_length_one_is_the_identity_exactly():
    """fft_length of 1 (every axis): no operation, no allowance — the operand itself."""
    x = np.array([[1.5 - 2j], [3e-30 + 7j]], np.complex64)
    for t in ("FFT", "IFFT"):
        e = expect(inst((2, 1), "complex<f32>", t, (1,)), x)
        assert np.array_equal(e.array(), x) and compare(e, x).ok
        assert not compare(e, x * np.complex64(1 + 2 ** -23)).ok
    xr = np.array([[2.5], [-0.75]], np.float32)
    e = expect(inst((2, 1), "f32", "RFFT", (1,)), xr)
    assert compare(e, xr.astype(np.complex64)).ok
    assert not compare(e, np.nextafter(xr, np.float32(9)).astype(np.complex64)).ok


# --------------------------------------------------------------------------
# Second implementations pass (f32 and f64): numpy.fft, scipy.fft, and two
# FFTs written here in float32
# --------------------------------------------------------------------------

def _numpy_like(lib, fft_type, x, lengths):
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    if fft_type == "FFT":
        return lib.fftn(x, axes=axes)
    if fft_type == "IFFT":
        return lib.ifftn(x, axes=axes)
    if fft_type == "RFFT":
        return lib.rfftn(x, axes=axes)
    return lib.irfftn(x, s=lengths, axes=axes)


SECOND = [("FFT", (3, 64), (64,)), ("IFFT", (2, 12), (12,)), ("RFFT", (2, 97), (97,)), ("IRFFT", (2, 100), (100,)),
          ("FFT", (97,), (97,)), ("FFT", (6, 10), (6, 10)), ("IFFT", (2, 3, 5), (2, 3, 5)),
          ("RFFT", (4, 6), (4, 6)), ("IRFFT", (2, 4, 6), (4, 6)), ("FFT", (1000,), (1000,))]


@pytest.mark.parametrize("fmt", ["f32", "f64"])
@pytest.mark.parametrize("fft_type, tshape, lengths", SECOND, ids=[f"{t}-{s}" for t, s, _ in SECOND])
def test_numpy_and_scipy_pass(fft_type, tshape, lengths, fmt):
    """pocketfft through numpy (2.x: native float32) and scipy.fft, both in
    the operand's precision: lengths that are powers of two, 2·3·5-smooth,
    prime past 50 (Bluestein's algorithm in pocketfft), 2-D and 3-D."""
    rng = np.random.default_rng(sum(tshape))
    et = ("f" if fft_type == "RFFT" else "complex<f") + fmt[1:] + ("" if fft_type == "RFFT" else ">")
    shape = _shape_of(fft_type, tshape, lengths)
    x = operand(shape, et, rng, fft_type, lengths)
    if fft_type == "IRFFT":   # a scale far from 1 too
        x = (x * 2.0 ** 40).astype(x.dtype)
    i = inst(shape, et, fft_type, lengths)
    e = expect(i, x)
    for lib in (np.fft, scipy.fft):
        got = as_result(_numpy_like(lib, fft_type, x, lengths), str(i.result.element_type))
        r = compare(e, got)
        assert r.ok, (lib.__name__, r.detail)


def _radix2_f32(v):
    """A textbook recursive radix-2 FFT, every operation in float32, twiddles rounded to float32."""
    n = len(v)
    if n == 1:
        return v.copy()
    ev, od = _radix2_f32(v[0::2]), _radix2_f32(v[1::2])
    w = np.exp(-2j * np.pi * np.arange(n // 2) / n).astype(np.complex64)
    t = (w * od).astype(np.complex64)
    return np.concatenate([ev + t, ev - t]).astype(np.complex64)


def _direct_f32(v):
    """The DFT's sum evaluated directly, left to right, in float32 (a reference implementation may)."""
    n = len(v)
    out = np.zeros(n, np.complex64)
    for k in range(n):
        w = np.exp(-2j * np.pi * ((np.arange(n) * k) % n) / n).astype(np.complex64)
        acc = np.complex64(0)
        for j in range(n):
            acc = np.complex64(acc + np.complex64(w[j] * v[j]))
        out[k] = acc
    return out


def test_float32_textbook_ffts_pass():
    rng = np.random.default_rng(7)
    x = operand((256,), "complex<f32>", rng)
    e = expect(inst((256,), "complex<f32>", "FFT", (256,)), x)
    assert compare(e, _radix2_f32(x)).ok
    y = operand((48,), "complex<f32>", rng) * np.complex64(1000)
    e = expect(inst((48,), "complex<f32>", "FFT", (48,)), y)
    assert compare(e, _direct_f32(y)).ok


# --------------------------------------------------------------------------
# Classic wrong implementations fail
# --------------------------------------------------------------------------

def test_classic_wrong_implementations_fail():
    rng = np.random.default_rng(3)
    x = operand((2, 12), "complex<f32>", rng)
    ifft = expect(inst((2, 12), "complex<f32>", "IFFT", (12,)), x)
    assert compare(ifft, np.fft.ifft(x).astype(np.complex64)).ok
    assert not compare(ifft, (np.fft.ifft(x) * 12).astype(np.complex64)).ok        # unnormalised inverse
    assert not compare(ifft, (np.fft.fft(x) / 12).astype(np.complex64)).ok         # wrong sign of the exponent
    fwd = expect(inst((2, 12), "complex<f32>", "FFT", (12,)), x)
    assert not compare(fwd, (np.fft.ifft(x) * 12).astype(np.complex64)).ok          # wrong sign, forward
    assert not compare(fwd, np.fft.fft(x, axis=0).astype(np.complex64)).ok          # along the batch axis
    x2 = operand((3, 4), "complex<f32>", rng)
    two = expect(inst((3, 4), "complex<f32>", "FFT", (3, 4)), x2)
    assert compare(two, np.fft.fft2(x2).astype(np.complex64)).ok
    assert not compare(two, np.fft.fft(x2).astype(np.complex64)).ok                 # one axis of two

    r = operand((2, 6), "f32", rng)
    rf = expect(inst((2, 6), "f32", "RFFT", (6,)), r)
    assert compare(rf, np.fft.rfft(r).astype(np.complex64)).ok
    assert not compare(rf, np.fft.fft(r).astype(np.complex64)).ok                   # the full spectrum
    assert not compare(rf, np.fft.fft(r)[:, :3].astype(np.complex64)).ok            # n/2 elements
    assert not compare(rf, np.fft.fft(r)[:, 3:].astype(np.complex64)).ok            # the upper half

    for n in (6, 7):
        z = operand((2, n // 2 + 1), "complex<f32>", rng, "IRFFT", (n,))
        ir = expect(inst((2, n // 2 + 1), "complex<f32>", "IRFFT", (n,)), z)
        assert compare(ir, np.fft.irfft(z, n).astype(np.float32)).ok
        pad = np.zeros((2, n), np.complex64)
        pad[:, : n // 2 + 1] = z
        assert not compare(ir, np.fft.ifft(pad).real.astype(np.float32)).ok           # no Hermitian extension
        assert not compare(ir, (np.fft.irfft(z, n) * n).astype(np.float32)).ok        # unnormalised
        other = n - 1 if n % 2 == 0 else n + 1                                        # the other parity's length
        wrong = np.fft.irfft(z, other)
        wrong = np.resize(wrong, (2, n)) if wrong.shape[-1] != n else wrong
        assert not compare(ir, wrong.astype(np.float32)).ok


def test_irfft_axis_order_is_the_seeds():
    """IRFFT over two axes: the seed inverts the leading axis first, then takes
    irfft along the last.  On an rfft2 result the DC column is Hermitian
    along the leading axis, not real row by row, so irfft first (discarding
    those imaginary parts) is a classic wrong implementation, and fails."""
    rng = np.random.default_rng(5)
    z = operand((4, 4), "complex<f64>", rng, "IRFFT", (4, 6))
    e = expect(inst((4, 4), "complex<f64>", "IRFFT", (4, 6)), z)
    assert not e.impl_defined
    assert compare(e, np.fft.irfftn(z, s=(4, 6), axes=(0, 1))).ok
    assert compare(e, np.fft.irfft(np.fft.ifft(z, axis=0), 6, axis=1)).ok
    assert not compare(e, np.fft.ifft(np.fft.irfft(z, 6, axis=1), axis=0).real).ok


def test_irfft_of_no_rfft_result_is_implementation_defined():
    """A DC term with an imaginary part: the seed's irfft ("the inverse of
    rfft") has no value there.  The reading every library takes (imaginary
    parts ignored) is offered first, any value after; a Hermitian operand is
    scored strictly."""
    z = np.array([1 + 2j, 0.5 - 1j, 0.25 + 0.5j, -1 + 3j], np.complex64)   # DC and Nyquist not real
    e = expect(inst((4,), "complex<f32>", "IRFFT", (6,)), z)
    assert len(e.impl_defined) == 6
    assert [(a.label, a.bits is None) for a in e.alternatives] == [(fft_mod.IGNORED, False),
                                                                    (fft_mod.NOT_RFFT, True)]
    assert compare(e, np.fft.irfft(z, 6).astype(np.float32)).ok
    assert compare(e, np.full(6, 123.0, np.float32)).ok
    h = z.copy()
    h[0], h[3] = 1, -1
    e = expect(inst((4,), "complex<f32>", "IRFFT", (6,)), h)
    assert not e.impl_defined
    assert compare(e, np.fft.irfft(h, 6).astype(np.float32)).ok
    assert not compare(e, np.full(6, 123.0, np.float32)).ok


def test_nonfinite_slice_offers_any_value_and_the_others_are_scored():
    x = operand((2, 8), "complex<f32>", np.random.default_rng(9))
    x[0, 3] = np.nan
    e = expect(inst((2, 8), "complex<f32>", "FFT", (8,)), x)
    assert sorted(e.impl_defined) == list(range(8))
    good = np.fft.fft(x).astype(np.complex64)
    assert compare(e, good).ok
    junk = good.copy()
    junk[0] = 5
    assert compare(e, junk).ok
    junk[1, 0] += 1
    assert not compare(e, junk).ok


def test_fft_length_is_read_through_its_size_for_complex_transforms():
    """FFT of 8 points with fft_length [4] (valid: C4 binds real tensors only): the
    seed transforms the operand's 8 points; a 4-point reading (XLA's) fails."""
    x = operand((8,), "complex<f32>", np.random.default_rng(11))
    e = expect(inst((8,), "complex<f32>", "FFT", (4,)), x)
    assert compare(e, np.fft.fft(x).astype(np.complex64)).ok
    assert not compare(e, np.concatenate([np.fft.fft(x[:4]), np.zeros(4)]).astype(np.complex64)).ok


# --------------------------------------------------------------------------
# The bound itself: Higham's constant covered, not absurdly loose
# --------------------------------------------------------------------------

def test_each_radix2_stage_covers_highams_eta():
    """Theorem 24.2 (Higham, 2nd ed., §24.1): radix-2 Cooley–Tukey with
    twiddles within μ of the roots of unity has ‖ŷ − y‖/‖y‖ ≤
    log₂n·η/(1 − log₂n·η), η = μ + γ₄(√2 + μ).  The stated model's per-level
    constant (σ(2), the same proof done componentwise) must cover η with the
    model's μ = 4u, and its n-point relative factor must cover log₂n·η."""
    for fmt, p in (("f32", 24), ("f64", 53)):
        u = Fraction(1, 2 ** p)
        mu = 4 * u
        g4 = 4 * u / (1 - 4 * u)
        eta = mu + g4 * (Fraction(1414213563, 10 ** 9) + mu)
        m = dft.Model(u, mu)
        assert m.sigma(2) >= eta
        for k in (1, 4, 10, 16):
            assert m.cooley_tukey(2 ** k) >= k * eta


@pytest.mark.parametrize("n", [8, 256, 4096, 65536])
def test_power_of_two_bound_is_within_a_small_multiple_of_log2n_u(n):
    """Not too loose: for a power of two the stated relative factor is at most
    16·log₂n·u (FFT) and 40·log₂n·u (RFFT), u the unit roundoff."""
    for fmt in ("f32", "f64"):
        F = element_type(fmt).format
        m = dft.Model.of(F)
        rel = lambda t: dft.stages_of(t, (n,)).relative(m)   # noqa: E731
        assert rel("FFT") <= 16 * int(math.log2(n)) * F.unit_roundoff
        assert rel("RFFT") <= 40 * int(math.log2(n)) * F.unit_roundoff


def test_twiddle_enclosures_hold_the_true_roots_of_unity():
    """spec/dft.py's exact route encloses cos and sin of 2πm/L in integers
    (Machin's π, Taylor series); mpmath at 80 digits must lie inside."""
    bits = 70
    with mpmath.workdps(80):
        for L in (3, 7, 12, 97, 1000):
            for m in range(0, L, max(1, L // 13)):
                c_lo, c_hi, s_lo, s_hi = dft._twiddle(m, L, bits)
                c, s = mpmath.cospi(mpmath.mpf(2 * m) / L), mpmath.sinpi(mpmath.mpf(2 * m) / L)
                sc = mpmath.mpf(2) ** bits
                assert c_lo <= c * sc <= c_hi and s_lo <= s * sc <= s_hi, (m, L)
                assert c_hi - c_lo <= 4 and s_hi - s_lo <= 4


def _mp(v):
    """A float64 or long double value exactly, as an mpmath number."""
    p, q = v.as_integer_ratio()
    return mpmath.mpf(p) / q


def test_the_oracles_own_working_error_is_inside_its_stated_radius():
    """transform() encloses y in Y ± r, Y numpy's FFT in float64 (f32 results)
    or long double (f64 results) and r from the same model at the working
    precision with μ = 64·u_W: the mpmath DFT must lie inside, on a
    Cooley–Tukey length, a direct one and a prime pocketfft takes through
    Bluestein's algorithm.  And r is the sliver of b the module says."""
    rng = np.random.default_rng(13)
    for W, fmt in ((np.float64, "f32"), (np.longdouble, "f64")):
        u = Fraction(1, 2 ** (np.finfo(W).nmant + 1))
        model = dft.Model(u, 64 * u)
        for n in (60, 97):
            x = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
            st = dft.working_stages(dft.stages_of("FFT", (n,)))
            S = sum(Fraction(abs(complex(v).real)) + Fraction(abs(complex(v).imag)) for v in x)   # ≥ Σ|x|
            r = dft._working_coefficient(model, st) * S
            Y = np.fft.fft(x.astype(np.clongdouble if W is np.longdouble else np.complex128))
            with mpmath.workdps(50):
                y = _dft1([mpmath.mpc(complex(v).real, complex(v).imag) for v in x], -1, False)
                worst = max(max(abs(mpmath.re(a) - _mp(b.real)), abs(mpmath.im(a) - _mp(b.imag))) for a, b in zip(y, Y))
                assert worst <= mpmath.mpf(r.numerator) / r.denominator, (W, n, worst)
            b = dft.stages_of("FFT", (n,)).coefficient(dft.Model.of(element_type(fmt).format))
            assert dft._working_coefficient(model, st) <= b * Fraction(1, 2 ** (25 if fmt == "f32" else 7))


@pytest.mark.parametrize("fmt", ["f32", "f64"])
def test_real_implementations_are_far_inside_the_bound(fmt):
    """Fair, with room: numpy.fft and scipy.fft err by under 5 % of b on random
    data (the module docstring's measured 10⁻⁶ … 2·10⁻²), truth a long double
    FFT whose own error is below 2^-7·b (test above)."""
    rng = np.random.default_rng(17)
    F = element_type(fmt).format
    for n in (12, 97, 1000):
        x = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(CPLX[fmt])
        y = np.fft.fft(x.astype(np.clongdouble))
        coef = dft.stages_of("FFT", (n,)).coefficient(dft.Model.of(F))
        b = float(coef) * float(np.sum(np.abs(x.real) + np.abs(x.imag)))
        for lib in (np.fft, scipy.fft):
            d = lib.fft(x) - y
            err = float(max(np.max(np.abs(d.real)), np.max(np.abs(d.imag))))
            assert err <= 0.05 * b, (lib.__name__, n, err / b)
