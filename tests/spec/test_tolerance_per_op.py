"""A ULP tolerance stated per op and per format (`Elementwise.tolerance`),
over the format's default (`FloatFormat.tolerance`): the oracle's
expectation carries it, the suite judges by it, the survey counts by it."""
from __future__ import annotations

import dataclasses

import numpy as np

from shlo_conform.oracle.program import execute, parse_program
from shlo_conform.spec.accuracy import tolerance_ulp
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.types import C64, E_F16, E_F32, E_F64
from shlo_conform.suites.compare import compare


def test_a_stated_tolerance_wins_for_its_format_only():
    stated = {"f32": 16}
    assert tolerance_ulp(E_F32, stated) == 16 and tolerance_ulp(C64, stated) == 16   # complex: its component's
    assert tolerance_ulp(E_F64, stated) == 4 and tolerance_ulp(E_F16, stated) == 1  # the formats' defaults
    assert tolerance_ulp(E_F32) == 4


def test_the_oracle_and_the_judge_use_the_ops_tolerance(monkeypatch):
    """sine with 16 ULPs stated for f32: 10 ULPs off passes there (not under
    the default 4), 17 fails; f64 keeps its default."""
    spec = OPS["sine"]
    monkeypatch.setitem(OPS, "sine", dataclasses.replace(
        spec, semantics=dataclasses.replace(spec.semantics, tolerance={"f32": 16})))
    x = np.linspace(0.5, 1.5, 64).astype(np.float32)
    text = ("func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {\n"
            "  %0 = stablehlo.sine %x : tensor<64xf32>\n  return %0 : tensor<64xf32>\n}\n")
    (e,) = execute(parse_program(text), [x])
    assert e.kind == "ulp" and e.tolerance_ulp == 16
    exact = e.array().view(np.uint32)
    assert compare(e, (exact + 10).view(np.float32)).ok
    assert not compare(e, (exact + 17).view(np.float32)).ok
    from shlo_conform.survey.measures import stated_tolerance
    assert stated_tolerance("sine") == {"f32": 16}   # the survey counts "within tolerance" by it too
    monkeypatch.setitem(OPS, "sine", spec)
    (d,) = execute(parse_program(text), [x])
    assert d.tolerance_ulp == 4 and not compare(d, (exact + 10).view(np.float32)).ok
