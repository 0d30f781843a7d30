"""A float format declared in one place (spec/types.py), taken through
rounding, special-value generation and causes with no other edit — the
promise of spec/types.py's FloatFormat.

The formats are OCP's and Graphcore's 8-bit ones that StableHLO v1.20 names
(f8E4M3FNUZ, f8E5M2FNUZ, f8E4M3B11FNUZ: NaN at the pattern of negative zero,
no negative zero, no infinity, biases 8, 16 and 11; f8E4M3 and f8E3M4:
IEEE-like), as the project declares them (they were declared here, in the
test only, before spec/types.py had them; tests/spec/test_v120_formats.py
holds every v1.20 format to more).  The truth is ml_dtypes' own
implementation of each format (a second implementation: its casts and
`finfo`), never this project's code.
"""
from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from shlo_conform.generators.values import float_specials, random_floats
from shlo_conform.oracle.rounding import round_bits
from shlo_conform.spec.accuracy import tolerance_ulp
from shlo_conform.spec.types import element_type, from_bits, nan_mask, to_bits
from shlo_conform.suites.causes import float_classes

# The facts each declaration must have (the RFCs in ../shared/upstream-1.20/rfcs/), and ml_dtypes' dtype.
DECLARED = {
    "f8E4M3FNUZ": (dict(exponent_bits=4, mantissa_bits=3, has_inf=False, nan="fnuz", bias=8),
                   ml_dtypes.float8_e4m3fnuz),
    "f8E5M2FNUZ": (dict(exponent_bits=5, mantissa_bits=2, has_inf=False, nan="fnuz", bias=16),
                   ml_dtypes.float8_e5m2fnuz),
    "f8E4M3B11FNUZ": (dict(exponent_bits=4, mantissa_bits=3, has_inf=False, nan="fnuz", bias=11),
                      ml_dtypes.float8_e4m3b11fnuz),
    "f8E4M3": (dict(exponent_bits=4, mantissa_bits=3, has_inf=True, nan="ieee", bias=7), ml_dtypes.float8_e4m3),
    "f8E3M4": (dict(exponent_bits=3, mantissa_bits=4, has_inf=True, nan="ieee", bias=3), ml_dtypes.float8_e3m4),
}


@pytest.fixture(params=sorted(DECLARED))
def declared(request):
    facts, dtype = DECLARED[request.param]
    et = element_type(request.param)
    fmt = et.format
    assert {k: getattr(fmt, k) for k in facts} == facts and np.dtype(et.numpy) == np.dtype(dtype)
    return fmt, et, dtype


def _all_patterns(et, dtype):
    b = np.arange(256, dtype=np.uint8)
    return b, b.view(dtype).astype(np.float64)


def test_every_pattern_decodes_to_ml_dtypes_value(declared):
    fmt, et, dtype = declared
    bits, truth = _all_patterns(et, dtype)
    for b, v in zip(bits.tolist(), truth.tolist()):
        got = fmt.decode(b)
        if math.isnan(v):
            assert isinstance(got, float) and math.isnan(got), (fmt.name, hex(b))
        else:
            assert float(got) == v and math.copysign(1, float(got)) == math.copysign(1, v), (fmt.name, hex(b))
    assert list(np.flatnonzero(nan_mask(bits, fmt))) == list(np.flatnonzero(np.isnan(truth)))


def test_the_formats_range_is_ml_dtypes_finfo(declared):
    fmt, et, dtype = declared
    info = ml_dtypes.finfo(dtype)
    assert float(fmt.max_finite) == float(info.max)
    assert float(fmt.min_normal) == float(info.smallest_normal)
    assert float(fmt.min_subnormal) == float(info.smallest_subnormal)
    assert fmt.has_negative_zero == (np.float64(-0.0).astype(dtype).view(np.uint8) != 0)
    assert tolerance_ulp(et) == 1   # a narrow format: one ULP, by the declaration's default


def test_rounding_matches_ml_dtypes_casts(declared):
    """Random reals over the whole range and past it (overflow), exact ties
    between neighbours, and tiny values of both signs (underflow to ±0)."""
    fmt, et, dtype = declared
    rng = np.random.default_rng(11)
    top = float(fmt.max_finite)
    xs = list(rng.uniform(-1.2 * top, 1.2 * top, 3000)) + list(rng.standard_normal(2000))
    xs += list(float(fmt.min_subnormal) * rng.uniform(-3, 3, 500))
    _, vals = _all_patterns(et, dtype)
    finite = np.sort(np.unique(vals[np.isfinite(vals)]))
    xs += list((finite[1:] + finite[:-1]) / 2)             # every midpoint: ties to even
    xs += [0.0, -0.0, math.inf, -math.inf, top * 1.0625, -top * 1.0625]
    for x in xs:
        want = int(np.float64(x).astype(dtype).view(np.uint8))
        got = round_bits(Fraction(x) if math.isfinite(x) and x != 0 else x, fmt)
        if math.isnan(fmt.decode(want)) if isinstance(fmt.decode(want), float) else False:
            assert fmt.is_nan_bits(got), (fmt.name, x, hex(got), hex(want))
        else:
            assert got == want, (fmt.name, x, hex(got), hex(want))


def test_generated_specials_are_the_formats_own(declared):
    fmt, et, dtype = declared
    sp = np.asarray(float_specials(et)).astype(np.float64)
    finite = sp[np.isfinite(sp)]
    info = ml_dtypes.finfo(dtype)
    assert float(info.max) in finite and -float(info.max) in finite
    assert float(info.smallest_subnormal) in finite and 1.0 in finite
    assert np.isnan(sp).sum() == (1 if fmt.nan == "fnuz" else 2)   # FNUZ has one NaN, no -0 twin of zero
    assert np.isinf(sp).any() == fmt.has_inf
    zeros = to_bits(np.asarray(float_specials(et))[np.asarray(sp) == 0], et)
    assert sorted(zeros.tolist()) == ([0, 0x80] if fmt.has_negative_zero else [0])
    draws = random_floats(et, np.random.default_rng(0), 4000)
    assert not np.isnan(np.asarray(draws).astype(np.float64)).any()


def test_causes_classify_every_pattern_as_ml_dtypes_does(declared):
    fmt, et, dtype = declared
    bits, truth = _all_patterns(et, dtype)
    nan, inf, zero, sub, neg = float_classes(bits, fmt)
    assert (nan == np.isnan(truth)).all()
    assert (inf == np.isinf(truth)).all()
    assert (zero == (truth == 0)).all()
    tiny = (np.abs(truth) < float(ml_dtypes.finfo(dtype).smallest_normal)) & (truth != 0)
    assert (sub == tiny).all()
    assert (neg[~nan] == np.signbit(truth[~nan])).all()
    back = from_bits(bits, et)
    assert to_bits(back, et).tolist() == bits.tolist()
