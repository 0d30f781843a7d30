"""power's exact values (spec/ops/power.exact_power): x^y that is a dyadic
rational is stated exactly, so a value that is a rounding midpoint rounds
to even as the spec says — no enclosure can decide a tie.  Expected values
by hand."""
from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from shlo_conform.generators.expect import expected_outputs
from shlo_conform.spec.ops.power import exact_power


@pytest.mark.parametrize("x, y, want", [
    (2.0 ** -8, 1.25, Fraction(1, 2 ** 10)),
    (9.0, 0.5, Fraction(3)),
    (9.0, 1.5, Fraction(27)),
    (0.25, -0.5, Fraction(2)),
    (4.0, 2.5, Fraction(32)),
    (2.0 ** -1074, 0.5, Fraction(1, 2 ** 537)),
    (2.0, 0.5, None),          # sqrt(2): irrational
    (12.0, 0.5, None),         # 2·sqrt(3)
    (3.0, 100.0, None),        # 3^100 is exact but wider than any midpoint: left to the enclosure
    (1.5, 1e300, None),        # far outside every format
])
def test_exact_power(x, y, want):
    assert exact_power(x, y) == want


def _power(dtype, x, y):
    t = f"tensor<1x{dtype}>"
    mlir = (f"func.func @main(%a: {t}, %b: {t}) -> {t} {{\n"
            f'  %0 = "stablehlo.power"(%a, %b) : ({t}, {t}) -> {t}\n'
            f'  "func.return"(%0) : ({t}) -> ()\n}}\n')
    np_t = {"f8E4M3FN": ml_dtypes.float8_e4m3fn, "f16": np.float16}[dtype]
    [e] = expected_outputs(mlir, [np.array([x], np_t), np.array([y], np_t)])
    return int(np.asarray(e.bits).reshape(-1)[0])


def test_a_power_on_a_midpoint_rounds_to_even():
    # f8E4M3FN: (2^-8)^1.25 = 2^-10, halfway between +0 and the smallest subnormal 2^-9: +0.
    assert _power("f8E4M3FN", 2.0 ** -8, 1.25) == 0x00
    # f16: (2^-16)^1.5625 = 2^-25, halfway between +0 and 2^-24: +0; (2^-16)^1.5 = 2^-24 exactly.
    assert _power("f16", 2.0 ** -16, 1.5625) == 0x0000
    assert _power("f16", 2.0 ** -16, 1.5) == 0x0001
