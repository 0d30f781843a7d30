"""How the oracle reads an op's attributes (oracle/attribute_values.py).

Truth is the spellings themselves, read by hand: the seed writes an i64
list as `dense<[1, 0]> : tensor<2xi64>` ("1-dimensional tensor constant of
type si64"), today's StableHLO as `array<i64: 1, 0>`; `result_accuracy`
(newer StableHLO than the seed, no attribute of v1.20's spec text) means
what the op means without it only at its default — mode DEFAULT and
tolerances 0 — so that value is read and every other refused.
"""
from __future__ import annotations

import pytest

from shlo_conform.oracle.attribute_values import _default_accuracy
from shlo_conform.oracle.program import ProgramRejected, parse_program


def _transpose(permutation: str) -> str:
    return ('func.func @main(%x: tensor<2x3xf32>) -> (tensor<3x2xf32>) {\n'
            f'  %0 = "stablehlo.transpose"(%x) {{permutation = {permutation}}} : (tensor<2x3xf32>) -> tensor<3x2xf32>\n'
            '  "func.return"(%0) : (tensor<3x2xf32>) -> ()\n}\n')


def _exponential(accuracy: str) -> str:
    return ('func.func @main(%x: tensor<3xf32>) -> (tensor<3xf32>) {\n'
            f'  %0 = "stablehlo.exponential"(%x) <{{result_accuracy = {accuracy}}}> : (tensor<3xf32>) -> tensor<3xf32>\n'
            '  "func.return"(%0) : (tensor<3xf32>) -> ()\n}\n')


def _permutation(program: str):
    return parse_program(program).steps[0].inst.permutation


def test_an_i64_list_reads_in_both_spellings():
    assert _permutation(_transpose("array<i64: 1, 0>")) == (1, 0)
    assert _permutation(_transpose("dense<[1, 0]> : tensor<2xi64>")) == (1, 0)


@pytest.mark.parametrize("text, why", [
    ("dense<[[1, 0]]> : tensor<1x2xi64>", "not a 1-dimensional tensor of si64"),
    ("dense<[1, 0]> : tensor<2xi32>", "not a 1-dimensional tensor of si64"),
    ("dense<1> : tensor<i64>", "not a 1-dimensional tensor of si64"),
])
def test_the_seeds_spelling_must_be_a_1_d_si64_tensor(text, why):
    with pytest.raises(ProgramRejected, match=f"attribute permutation: .*{why}"):
        parse_program(_transpose(text))


DEFAULT = "#stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<DEFAULT>>"
DEFAULT_SPELLED_OUT = ("#stablehlo.result_accuracy<atol = 0.000000e+00, rtol = 0.000000e+00, ulps = 0, "
                       "mode = #stablehlo.result_accuracy_mode<DEFAULT>>")


@pytest.mark.parametrize("text, default", [
    (DEFAULT, True),
    (DEFAULT_SPELLED_OUT, True),
    (DEFAULT_SPELLED_OUT.replace("ulps = 0", "ulps = 1"), False),
    (DEFAULT_SPELLED_OUT.replace("atol = 0.000000e+00", "atol = 1.000000e-05"), False),
    (DEFAULT_SPELLED_OUT.replace("rtol = 0.000000e+00", "rtol = -1.0"), False),
    (DEFAULT.replace("DEFAULT", "HIGHEST"), False),
    (DEFAULT.replace("DEFAULT", "TOLERANCE"), False),
    ("#stablehlo.result_accuracy<atol = oops>", False),
    ("#stablehlo.other<mode = #stablehlo.result_accuracy_mode<DEFAULT>>", False),
    ("1 : i64", False),
])
def test_result_accuracy_is_read_at_its_default_only(text, default):
    assert _default_accuracy(text) is default


def test_a_program_with_result_accuracy_reads_at_its_default_and_is_refused_elsewhere():
    """Among the op's own properties (`<{…}>`, how StableHLO prints an
    inherent attribute); in the discardable dictionary (`{…}`) an attribute
    the spec does not declare is set aside, as any tool's annotation."""
    parse_program(_exponential(DEFAULT))
    parse_program(_exponential(DEFAULT_SPELLED_OUT))
    with pytest.raises(ProgramRejected, match="result_accuracy .*only its default"):
        parse_program(_exponential(DEFAULT.replace("DEFAULT", "HIGHEST")))
    with pytest.raises(ProgramRejected, match="unknown attribute"):
        parse_program(_exponential(DEFAULT).replace("result_accuracy =", "accuracy ="))
    parse_program(_exponential(DEFAULT.replace("DEFAULT", "HIGHEST")).replace("<{", "{").replace("}>", "}"))
