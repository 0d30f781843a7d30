"""Correct rounding checked against independent casts: ml_dtypes (f8, bf16),
numpy (f16, f32), and hand-computed ties.

Value sets are dense where rounding is decided: every pattern of the wider
source format near each representable target value and near each midpoint
between neighbours (midpoint, and one/two source ULPs either side).
"""
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from shlo_conform.oracle.rounding import round_bits, round_value
from shlo_conform.spec.types import BF16, F16, F32, F8E4M3FN, F8E5M2, FloatFormat

NARROW = {
    "f8E4M3FN": (F8E4M3FN, ml_dtypes.float8_e4m3fn, np.uint8),
    "f8E5M2": (F8E5M2, ml_dtypes.float8_e5m2, np.uint8),
    "bf16": (BF16, ml_dtypes.bfloat16, np.uint16),
    "f16": (F16, np.float16, np.uint16),
}


def _dense_f32(target_dtype, target_uint) -> np.ndarray:
    """f32 values at, between and around every value of the target format."""
    n = np.iinfo(target_uint).max + 1
    t = np.arange(n, dtype=np.uint64).astype(target_uint).view(target_dtype)
    x = t.astype(np.float64)
    x = x[np.isfinite(x)]
    x = np.unique(x)  # sorted, -0/+0 merged (both added back below)
    mids = (x[:-1] + x[1:]) / 2  # exact in f64; in f32 too for these formats
    pts = np.concatenate([x, mids, [-0.0, 0.0, np.inf, -np.inf, np.nan]]).astype(np.float32)
    b = pts.view(np.uint32).astype(np.int64)
    around = np.concatenate([b + k for k in (-2, -1, 0, 1, 2)])
    around = around[(around >= 0) & (around < 2**32)].astype(np.uint32)
    # Also far beyond the target's range: huge and tiny magnitudes.
    extra = np.array([3.0e38, -3.0e38, 1e-40, -1e-40, 1e-30, 70000.0, 1e6, -1e6], np.float32).view(np.uint32)
    return np.unique(np.concatenate([around, extra])).view(np.float32)


@pytest.mark.parametrize("name", list(NARROW))
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_narrow_formats_match_ml_dtypes_cast(name):
    fmt, dtype, uint = NARROW[name]
    src = _dense_f32(dtype, uint)
    want = src.astype(dtype).view(uint).astype(np.int64)
    got = np.array([round_bits(float(v), fmt) for v in src.tolist()], dtype=np.int64)
    want_nan = np.isnan(src.astype(dtype).astype(np.float32))
    got_nan = np.array([fmt.is_nan_bits(int(b)) for b in got])
    assert (want_nan == got_nan).all(), src[want_nan != got_nan][:10]
    bad = ~want_nan & (want != got)
    assert not bad.any(), [(float(s), hex(w), hex(g)) for s, w, g in zip(src[bad][:10], want[bad][:10], got[bad][:10])]
    assert len(src) > 5 * 256


def _random_f64(rng, n) -> np.ndarray:
    """Half uniform bit patterns, half with exponents in and around f32's range
    (uniform patterns are mostly far outside it)."""
    u = rng.integers(0, 2**64, n // 2, dtype=np.uint64).view(np.float64)
    mant = rng.random(n - n // 2) + 1.0
    e = rng.integers(-160, 140, n - n // 2)
    s = rng.choice([-1.0, 1.0], n - n // 2)
    return np.concatenate([u, s * np.ldexp(mant, e)])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.long   # stop 62's trim of make test (8:05 on a clean run): 2^20-element sweep; the rounding rules' own cases stay in make test
def test_f32_from_f64_matches_numpy_cast():
    rng = np.random.default_rng(20240601)
    src = _random_f64(rng, 1_000_000)
    # Plus f32 midpoints and their f64 neighbours (ties, and just off ties).
    f = rng.integers(0, 2**32, 50_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    f = f[np.isfinite(f)].astype(np.float64)
    mids = f + np.spacing(f.astype(np.float32)).astype(np.float64) / 2
    src = np.concatenate([src, mids, np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf)])
    with np.errstate(over="ignore"):
        want = src.astype(np.float32)
    got = np.array([round_bits(v, F32) for v in src.tolist()], dtype=np.uint64)
    wn = np.isnan(want)
    assert (wn == np.array([F32.is_nan_bits(int(b)) for b in got])).all()
    bad = ~wn & (want.view(np.uint32).astype(np.uint64) != got)
    assert not bad.any(), src[bad][:10]


@pytest.mark.parametrize("fmt, value, bits", [
    # f16: 1 + 2^-11 ties between 1 (even) and 1 + 2^-10 (odd) -> 1
    (F16, Fraction(1) + Fraction(1, 2**11), 0x3C00),
    # 1 + 3*2^-11 ties between mantissa 1 (odd) and 2 (even) -> up
    (F16, Fraction(1) + Fraction(3, 2**11), 0x3C02),
    # half the smallest subnormal ties to 0 (even), keeping the sign
    (F16, Fraction(1, 2**25), 0x0000),
    (F16, -Fraction(1, 2**25), 0x8000),
    (F16, Fraction(1, 2**25) + Fraction(1, 2**80), 0x0001),
    (F16, Fraction(3, 2**25), 0x0002),
    # overflow: max 65504, ulp 32: the tie 65520 goes to inf, just below stays
    (F16, Fraction(65520), 0x7C00),
    (F16, Fraction(65520) - Fraction(1, 2**40), 0x7BFF),
    (F16, -Fraction(10**6), 0xFC00),
    # f8E4M3FN: max 448 (S.1111.110); 464 ties to 448, above is NaN (no inf)
    (F8E4M3FN, Fraction(464), 0x7E),
    (F8E4M3FN, Fraction(464) + Fraction(1, 1024), 0x7F),
    (F8E4M3FN, -Fraction(500), 0xFF),
    # f8E5M2: max 57344, ulp 8192: 61440 ties to inf
    (F8E5M2, Fraction(61440), 0x7C),
    (F8E5M2, Fraction(61439), 0x7B),
    # 1/3 in f32: 0x3EAAAAAB (round up: the discarded bits are 1010…)
    (F32, Fraction(1, 3), 0x3EAAAAAB),
    # specials
    (F32, -0.0, 0x80000000), (F32, float("inf"), 0x7F800000), (F8E4M3FN, float("-inf"), 0x7F),
])
def test_hand_checked(fmt, value, bits):
    got = round_bits(value, fmt)
    if fmt.is_nan_bits(bits):
        assert fmt.is_nan_bits(got)
    else:
        assert got == bits, hex(got)


def test_mpf_input_is_exact():
    """mpmath's 0.1 at 200 bits rounds like numpy's correctly rounded parse of "0.1"."""
    import mpmath
    with mpmath.workprec(200):
        x = mpmath.mpf(1) / 10
    assert round_bits(x, F32) == int(np.float32("0.1").view(np.uint32))
    assert round_bits(-x, F16) == int(np.float16("-0.1").view(np.uint16))


def test_format_that_is_no_element_type():
    """A (3 exponent, 1 mantissa) format, as reduce_precision might build:
    bias 3, normal exponents -2..3, so values …, 1, 1.5, 2, 3, …, max
    2^3 * 1.5 = 12 (ulp 4 there), min subnormal 2^-3."""
    tiny = FloatFormat("e3m1", 3, 1)
    assert round_value(Fraction(5, 4), tiny) == 1  # tie 1 | 1.5 -> even 1
    assert round_value(Fraction(7, 4), tiny) == 2  # tie 1.5 | 2 -> even 2
    assert round_value(Fraction(1, 16), tiny) == 0  # tie 0 | 1/8 -> 0
    assert round_value(Fraction(3, 16), tiny) == Fraction(1, 4)  # tie 1/8 | 1/4 -> 1/4
    assert round_value(Fraction(12), tiny) == 12
    assert round_value(Fraction(14), tiny) == float("inf")  # tie 12 | 16 (= inf)
    assert round_value(Fraction(13), tiny) == 12
    assert round_value(-Fraction(1, 32), tiny) == 0 and str(round_value(-Fraction(1, 32), tiny)) == "-0.0"


def test_python_integers_and_booleans_round_like_numpys_cast():
    """An exact value may come as a Python int (integer semantics, bool
    included): rounded as numpy casts int64 to the format (correctly
    rounded, ties to even: 2^24 + 1 → 2^24 in f32, 2049 → 2048 in f16)."""
    ints = [0, 1, -1, 3, -7, 2049, 2051, (1 << 24) + 1, (1 << 24) + 3, -(1 << 31), (1 << 62) + 12345]
    for n in ints:
        assert round_bits(n, F32) == int(np.int64(n).astype(np.float32).view(np.uint32)), n
        assert round_bits(n, F16) == int(np.int64(n).astype(np.float16).view(np.uint16)), n
    assert round_bits(True, F32) == 0x3F800000 and round_bits(False, BF16) == 0
    assert round_bits(1 << 200, F32) == 0x7F800000 and round_bits(-(1 << 200), F16) == 0xFC00


def test_mpf_specials_keep_their_kind():
    """mpmath's NaN and infinities are not numbers with a mantissa: NaN
    stays NaN, ±inf stays ±inf (NaN where the format has no infinity)."""
    import mpmath
    assert F32.is_nan_bits(round_bits(mpmath.mpf("nan"), F32))
    assert round_bits(mpmath.mpf("inf"), F32) == 0x7F800000
    assert round_bits(mpmath.mpf("-inf"), F16) == 0xFC00
    assert F8E4M3FN.is_nan_bits(round_bits(mpmath.mpf("inf"), F8E4M3FN))


def test_directed_rounding_in_a_format_without_infinity_stops_at_its_largest_finite():
    """The ends of a Range in f8E4M3FN: past the largest finite value (448,
    ml_dtypes' finfo max; pattern S.1111.110) a directed rounding gives that
    value of the right sign — never S.1111.111, which is the format's NaN —
    and stepping up from it stays there."""
    from shlo_conform.oracle.rounding import round_directed
    big = float(ml_dtypes.finfo(ml_dtypes.float8_e4m3fn).max)
    assert big == 448.0 and round_bits(Fraction(448), F8E4M3FN) == 0x7E
    for up in (True, False):
        assert round_directed(Fraction(1000), F8E4M3FN, up) == 0x7E
        assert round_directed(-Fraction(1000), F8E4M3FN, up) == 0xFE
    assert round_directed(Fraction(447), F8E4M3FN, True) == 0x7E   # 447 → up to 448
