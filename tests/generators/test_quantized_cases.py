"""The quantized stream of suites/core (generators/quantized.py, issue 34):
every op that declares quantized tensors has value cases in each pairing
its table takes and an invalid case for each constraint v1.20 states for
them; the stored expectations of uniform_dequantize and uniform_quantize
agree with NumPy's own float arithmetic (a second implementation: one
f32/bf16/f16 operation per step, as the spec orders them)."""
from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

from shlo_conform.spec.added import ADDED
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.quantized import is_family_name
from shlo_conform.spec.types import parse_type
from shlo_conform.suites.io import load_cases, suite_path

CORE = suite_path("core")
DECLARING = sorted(n for n, s in {**OPS, **ADDED}.items() if s.quantization is not None)


@pytest.fixture(scope="module")
def quantized_cases():
    return [c for c in load_cases(CORE, ops=set(DECLARING)) if is_family_name(c.dtype)]


def test_every_declaring_op_has_quantized_value_cases(quantized_cases):
    ops = {c.op for c in quantized_cases if c.kind == "value"}
    assert ops == set(DECLARING)
    # 26 element-wise ops and add (dequantize_op_quantize), compare, select, is_finite, reduce_precision,
    # dot_general (and its hybrid form), 10 data-movement ops, the seed RFC's all_gather and all_to_all,
    # uniform_quantize, uniform_dequantize (46, stop 35); clamp, abs, convolution (and its hybrid form),
    # the region ops reduce, reduce_window, sort, map, scatter, select_and_scatter, all_reduce,
    # reduce_scatter, batch_norm ×3, collective_permute, bitcast_convert, get_dimension_size, iota,
    # optimization_barrier, if, case, while, tuple, get_tuple_element (24 more, stop 36); cholesky,
    # triangular_solve, send, recv, infeed, outfeed, and v1.20's own dynamic_* ×6, collective_broadcast,
    # collective_reduce, async_start, async_done (16 more, stop 37), constant with a quantized literal
    # (stop 38): v1.20's 84, plus while, tuple and get_tuple_element, whose "values" may be quantized tensors
    assert len(DECLARING) == 87


def test_quantized_constants_hand_the_literal_through(quantized_cases):
    """constant's quantized cases: the expectation is the literal's storage
    values, read from the program text by NumPy (a u8 storage's literal
    written in MLIR's signless i8: its bytes); the literal written in
    another storage type is refused for C1."""
    seen = set()
    for c in quantized_cases:
        if c.op != "constant":
            continue
        seen.add(c.kind)
        m = re.search(r'value = dense<"0x([0-9A-F]*)"> : tensor<([0-9x]*)x?i(\d+)>', c.mlir)
        assert m, c.id
        if c.kind == "invalid":
            assert c.violates == "constant_c1" and m.group(3) == "16"
            continue
        width = int(m.group(3))
        shape = tuple(int(d) for d in m.group(2).split("x") if d)
        literal = np.frombuffer(bytes.fromhex(m.group(1)), dtype=f"<i{max(width, 8) // 8}")
        got = c.expected[0].array()
        if width == 4:   # i4: one value a byte in the literal's dense form
            literal = literal.astype(np.int8)
        assert np.array_equal(literal.astype(np.int64) & ((1 << width) - 1),
                              got.reshape(-1).astype(np.int64) & ((1 << width) - 1)), c.id
        assert got.shape == shape, c.id
    assert seen == {"value", "invalid"}


BASELINE_CLAUSES = {"add": set(), "abs": {"abs_c2"}, "clamp": {"clamp_c3", "clamp_c4"}}


def test_every_quantization_constraint_has_an_invalid_case(quantized_cases):
    named = {c.violates for c in quantized_cases if c.kind == "invalid"}
    for name in DECLARING:
        spec = {**OPS, **ADDED}[name]
        wanted = {c.__name__ for c in spec.quantization.constraints}
        if name in ADDED:   # v1.20 numbers their quantized clauses with the rest: those the declaration names
            wanted |= set(spec.quantization.type_clauses)
            if spec.quantization.meaning == "own":   # uniform_quantize, uniform_dequantize: every clause
                wanted |= {c.__name__ for c in spec.constraints}
        elif name == "dot_general":   # its clauses read dimension numbers: no candidate program breaks one alone yet
            wanted = set()
        elif any(c.op == name and c.note.startswith("dequantize_op_quantize:") for c in quantized_cases):
            # the baseline-type clause of the element-wise ops: C1, but abs's C2 and clamp's C3/C4 (add
            # states C2–C7 instead)
            wanted |= BASELINE_CLAUSES.get(name, {f"{name}_c1"})
        assert wanted <= named, (name, wanted - named)


def _numpy_dequantize(storage, zp, scale, dtype):
    """(i - zp) converted, times the scale converted: two roundings in `dtype`, NumPy's."""
    return (np.asarray(storage, np.float64) - zp).astype(dtype) * np.asarray(scale, np.float64).astype(dtype)


def test_dequantize_expectations_match_numpy(quantized_cases):
    checked = 0
    for c in quantized_cases:
        if c.op != "uniform_dequantize" or c.kind != "value" or "axis" in c.dtype:
            continue
        qt = parse_type(c.inputs[0].type).element_type
        arg = c.inputs[0].array()
        dtype = {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "f16": np.float16}[qt.expressed_type.mlir]
        want = _numpy_dequantize(arg, qt.zero_points[0], qt.scales[0], dtype)
        got = c.expected[0].array()
        assert got.dtype == np.dtype(dtype) and np.array_equal(got, want), c.id
        checked += 1
    assert checked == 7


def test_quantize_expectations_match_numpy(quantized_cases):
    """x / scale + zp, clamped, rounded half to even, each float step in the expressed type (NumPy)."""
    checked = 0
    for c in quantized_cases:
        if c.op != "uniform_quantize" or c.kind != "value" or "axis" in c.dtype or "x!quant" in c.inputs[0].type:
            continue
        x = c.inputs[0].array()
        q = parse_type(c.expected[0].type.mlir).element_type
        dtype = x.dtype
        s, zp = np.asarray(q.scales[0]).astype(dtype), np.asarray(q.zero_points[0]).astype(dtype)
        lo, hi = np.asarray(q.storage_min).astype(dtype), np.asarray(q.storage_max).astype(dtype)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            v = np.minimum(np.maximum((x / s).astype(dtype) + zp, lo), hi).astype(np.float64)
        defined = ~np.isnan(v)
        want = np.rint(v[defined]).astype(np.int64)
        got = np.asarray(c.expected[0].array()).astype(np.int64)[defined]
        assert np.array_equal(got, want), c.id
        assert sorted(c.expected[0].impl_defined) == np.flatnonzero(~defined).tolist(), c.id
        checked += 1
    assert checked == 7


def test_collectives_move_storage_values_between_processes(quantized_cases):
    """all_gather and all_to_all on quantized tensors (the seed RFC's
    "per-tensor quantized tensor" operands), on process grids: every
    expected storage value is one some process held (they move, never
    requantize), and the processes' results are exact."""
    seen = 0
    for c in quantized_cases:
        if c.op not in ("all_gather", "all_to_all") or c.kind != "value":
            continue
        assert c.grid is not None, c.id
        held = {int(x) for per in c.grid.inputs for v in per for x in np.asarray(v.array()).ravel()}
        for per in c.grid.expected:
            for e in per:
                assert e.kind == "exact" and {int(x) for x in np.asarray(e.array()).ravel()} <= held, c.id
        seen += 1
    assert seen >= 8
