"""Issue 20 item 11d: values print with a NaN's sign and payload and enough digits
to tell them apart — in `explain`, in `run`, in mismatch lines (suites/show.py).

Bit patterns come from the formats' layouts: binary32 quiet NaN 0x7FC00000
(quiet bit 0x400000), its negative 0xFFC00000, a quiet NaN with payload 1
0x7FC00001, a signaling NaN 0x7F800001, -inf 0xFF800000; bfloat16 -NaN
0xFFC0; f8E5M2 (2 mantissa bits, quiet bit 0b10) 0x7F quiet payload 1,
0x7D signaling payload 1; f8E4M3FN's only NaNs 0x7F and 0xFF.
"""
from __future__ import annotations

import numpy as np

from shlo_conform.cli import main
from shlo_conform.commands.explain import show_array
from shlo_conform.differential import _short
from shlo_conform.spec.expectation import Expectation
from shlo_conform.spec.types import TensorType, element_type, from_bits
from shlo_conform.suites.compare import compare
from shlo_conform.suites.io import write_suite
from shlo_conform.suites.records import Case, TensorValue


def _f32(*bits):
    return from_bits(np.array(bits, np.uint32), element_type("f32"))


def test_nan_notation_per_format():
    from shlo_conform.suites import show
    f32 = element_type("f32").format
    assert [show.nan_text(b, f32) for b in (0x7FC00000, 0xFFC00000, 0x7FC00001, 0xFFC00001, 0x7F800001)] == \
        ["nan", "-nan", "nan(q:0x1)", "-nan(q:0x1)", "nan(s:0x1)"]
    assert show.nan_text(0xFFC0, element_type("bf16").format) == "-nan"
    e5m2 = element_type("f8E5M2").format
    assert [show.nan_text(b, e5m2) for b in (0x7E, 0x7F, 0x7D, 0xFE)] == ["nan", "nan(q:0x1)", "nan(s:0x1)", "-nan"]
    e4m3 = element_type("f8E4M3FN").format
    assert [show.nan_text(b, e4m3) for b in (0x7F, 0xFF)] == ["nan", "-nan"]


def test_explain_prints_the_sign_and_payload_of_nans():
    text = show_array(_f32(0x7FC00000, 0xFFC00000, 0xFF800000, 0x7FC00001))
    assert text == "[       nan,       -nan,       -inf, nan(q:0x1)]"   # padded to the widest, as numpy does


def test_run_prints_values_one_ulp_apart_differently():
    one_up = np.nextafter(1.0, 2.0)           # 1 + 2^-52
    assert _short(np.array([1.0, one_up])) == "[ 1., 1.0000000000000002]"
    assert "-nan" in _short(_f32(0xFFC00000, 0x3F800000))


def test_narrow_types_print_their_shortest_distinct_digits():
    from shlo_conform.suites import show
    bf16 = element_type("bf16")
    # 1.0 (0x3F80) and the next bfloat16 up, 1 + 2^-7 = 1.0078125 (0x3F81): "1.01" is nearer to
    # 1.0078125 than to 1.0 or 1.015625, and no 1- or 2-digit decimal reads back to 0x3F81
    assert show.array(from_bits(np.array([0x3F80, 0x3F81], np.uint16), bf16)) == "[  1., 1.01]"
    # bf16 0x3DCD = 0.10009765625, the bf16 nearest 0.1: "0.1" reads back to it
    assert show.array(from_bits(np.array([0x3DCD, 0x3F80], np.uint16), bf16)) == "[0.1,  1.]"


def test_mismatch_lines_show_the_nan_that_came_back():
    t = TensorType((2,), element_type("f32"))
    exp = Expectation(t, np.array([0x7FC00000, 0x3F800000], np.uint32), bit_exact=True)
    j = compare(exp, _f32(0xFFC00000, 0x3F800000))
    assert j.mismatches[0][1:3] == ("nan", "-nan") and "[0] expected nan got -nan" in j.detail
    # numbers keep their binary64 repr (exact for every format): the f32 nearest 0.1
    j = compare(Expectation(t, np.array([0x3DCCCCCD, 0], np.uint32)), _f32(0x3DCCCCCE, 0))
    assert j.mismatches[0][1:3] == ("0.10000000149011612", "0.10000000894069672")


def test_explain_command_shows_expected_nans_with_their_sign(tmp_path, capsys):
    f32 = element_type("f32")
    t = TensorType((2,), f32)
    mlir = ("func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"
            "  %0 = stablehlo.negate %arg0 : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n")
    c = Case(id="negate/f32/0123456789ab", op="negate", dtype="f32", kind="value", mlir=mlir,
             inputs=[TensorValue.of(_f32(0x7FC00000, 0xFFC00001), t)],
             expected=[Expectation(t, np.array([0xFFC00000, 0x7FC00001], np.uint32), bit_exact=True)])
    write_suite(tmp_path / "s", {"suite": "nan", "seed": 0}, [c])
    assert main(["explain", c.id, "--suite", str(tmp_path / "s")]) == 0
    out = capsys.readouterr().out
    assert "[        nan, -nan(q:0x1)]" in out      # the input
    assert "[      -nan, nan(q:0x1)]" in out        # the expected output
