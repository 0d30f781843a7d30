"""spec/types.py against independent truth: ml_dtypes/numpy format facts and bit layouts."""
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from shlo_conform.spec import types as T

FORMATS = [(T.E_F8E4M3FN, ml_dtypes.float8_e4m3fn), (T.E_F8E5M2, ml_dtypes.float8_e5m2),
           (T.E_BF16, ml_dtypes.bfloat16), (T.E_F16, np.float16), (T.E_F32, np.float32), (T.E_F64, np.float64)]


@pytest.mark.parametrize("et,dt", FORMATS, ids=lambda x: getattr(x, "name", ""))
def test_format_parameters_match_ml_dtypes(et, dt):
    fi = ml_dtypes.finfo(dt)
    f = et.format
    assert float(f.max_finite) == float(fi.max)
    assert float(f.min_normal) == float(fi.smallest_normal)
    assert float(f.min_subnormal) == float(fi.smallest_subnormal)
    assert f.mantissa_bits == fi.nmant
    assert f.bits == np.dtype(dt).itemsize * 8


@pytest.mark.parametrize("et,dt", [f for f in FORMATS if f[0].bits <= 16], ids=lambda x: getattr(x, "name", ""))
def test_decode_every_bit_pattern_matches_ml_dtypes(et, dt):
    """Exhaustive for the 8- and 16-bit formats: our decode equals the value ml_dtypes stores."""
    bits = np.arange(1 << et.bits, dtype=np.uint64).astype(et.bits_dtype)
    vals = bits.view(dt).astype(np.float64)
    for b, v in zip(bits.tolist(), vals.tolist()):
        d = et.format.decode(b)
        if np.isnan(v):
            assert isinstance(d, float) and np.isnan(d), hex(b)
        elif v == 0:
            assert float(d) == 0 and np.signbit(float(d)) == np.signbit(v), hex(b)
        else:
            assert float(d) == v, hex(b)


def test_e4m3fn_has_no_infinity_and_one_nan_magnitude():
    f = T.F8E4M3FN
    nans = [b for b in range(256) if f.is_nan_bits(b)]
    assert nans == [0x7F, 0xFF]
    assert not any(f.is_inf_bits(b) for b in range(256))


def test_ulp_of_one_is_machine_epsilon():
    for et, dt in FORMATS:
        assert float(et.format.ulp(Fraction(1))) == float(ml_dtypes.finfo(dt).eps)


@pytest.mark.parametrize("et", T.ALL_TYPES, ids=str)
def test_bits_round_trip(et):
    rng = np.random.default_rng(0)
    if et.is_complex:
        a = (rng.standard_normal(7) + 1j * rng.standard_normal(7)).astype(et.numpy)
    elif et.is_bool:
        a = np.array([True, False, True])
    elif et.is_integer:
        a = np.array([et.min_value, et.max_value, 0, 1], dtype=np.int64).astype(et.numpy) if et.is_signed \
            else np.array([0, 1, et.max_value], dtype=np.uint64).astype(et.numpy)
    else:
        a = np.array([0.0, -0.0, 1.5, -2.0, np.inf if et.format.has_inf else 448.0]).astype(et.numpy)
    b = T.to_bits(a, et)
    back = T.from_bits(b, et)
    assert np.array_equal(T.to_bits(back, et), b)
    assert back.dtype == et.numpy


def test_si4_bits_are_low_nibble_twos_complement():
    a = np.array([-8, -1, 0, 7], dtype=ml_dtypes.int4)
    assert T.to_bits(a, T.SI4).tolist() == [0x8, 0xF, 0x0, 0x7]


def test_f32_bits_of_one_little_endian():
    # The spec's bitcast_convert example: 1.0f is 0x3F800000.
    assert T.to_bits(np.array([1.0], np.float32), T.E_F32).tolist() == [0x3F800000]


@pytest.mark.parametrize("text", ["tensor<2x3xf32>", "tensor<i1>", "tensor<0x4xcomplex<f64>>",
                                  "tensor<5xui4>", "tensor<f8E4M3FN>", "!stablehlo.token",
                                  "tuple<tensor<i32>, tuple<>>"])
def test_mlir_type_syntax_round_trips(text):
    assert T.parse_type(text).mlir == text


def test_si32_is_signless_i32_in_mlir():
    t = T.parse_type("tensor<2xi32>")
    assert t.element_type is T.SI32 and T.element_type("si32") is T.SI32


def test_unknown_type_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown element type"):
        T.parse_type("tensor<2xf128>")


def test_ulp_distance_counts_steps():
    f = T.F32
    one = 0x3F800000
    assert T.ulp_distance(one, one + 3, f) == 3
    assert T.ulp_distance(0x00000000, 0x80000000, f) == 0          # +0 / -0
    assert T.ulp_distance(0x00000001, 0x80000001, f) == 2          # ±min subnormal
    assert T.ulp_distance(0x7FC00000, 0x7FC00001, f) == 0          # two NaNs
    assert T.ulp_distance(0x7FC00000, one, f) == float("inf")
    assert T.ulp_distance(0x7F7FFFFF, 0x7F800000, f) == 1          # max finite vs inf


@pytest.mark.parametrize("et", [T.E_F32, T.SI4, T.C64, T.I1], ids=str)
def test_bits_keep_rank_zero(et):
    a = np.zeros((), dtype=et.numpy)
    b = T.to_bits(a, et)
    assert b.shape == ((2,) if et.is_complex else ())
    assert T.from_bits(b, et).shape == ()
