"""Quantized tensors in the ops v1.20 added (issue 34): the six dynamic_*
ops, collective_broadcast, async_start and async_done.

Truths: NumPy's own data movement on the storage values (reshape,
broadcast_to, pad, fancy indexing), the independent quantize of tests/
independent/quantized_reference.py (`shlo_quantize`, `shlo_dequantize`:
the spec's f32 steps, written apart from spec/quantized.py) for iota and
for an all_reduce's quantized add, exact rationals for dynamic_conv's sums,
and hand computation (in the comments) for collective_broadcast's fill.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from shlo_conform.generators import expect, quantized, v1_20_collectives, v1_20_ops
from shlo_conform.generators.suite import ADDED_STREAMS, with_grid
from shlo_conform.generators.v1_20_collectives import async_program, operations
from shlo_conform.oracle.execution import execute
from shlo_conform.oracle.grid import execute_on_grid
from shlo_conform.oracle.program import parse_program
from shlo_conform.spec.added import ADDED
from shlo_conform.spec.grid import Grid
from shlo_conform.spec.quantized import parse_quantized_type
from shlo_conform.spec.types import TensorType, element_type
from shlo_conform.suites.compare import compare
from tests.independent.quantized_reference import Params, shlo_dequantize, shlo_quantize

Q = parse_quantized_type
A = Q("!quant.uniform<i8:f32, 0.1:-3>")
R = Q("!quant.uniform<i8:f32, 0.05:2>")
F32 = element_type("f32")
MINE = ("dynamic_broadcast_in_dim", "dynamic_conv", "dynamic_gather", "dynamic_iota", "dynamic_pad", "dynamic_reshape",
        "collective_broadcast", "async_start", "async_done")


def _params(q) -> Params:
    return Params(float(q.scales[0]), int(q.zero_points[0]), int(q.storage_min), int(q.storage_max),
                  q.storage_type.bits)


def _storage(e) -> np.ndarray:
    return np.asarray(e.array()).astype(np.int64)


def _example(name: str, types: dict):
    spec = ADDED[name]
    return spec, spec.quantization.example(types)


def _run(spec, inst, arrays):
    text = quantized._program(spec, inst)
    return execute(parse_program(text), [np.asarray(a) for a in arrays])


def _draw(shape, q, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).integers(int(q.storage_min), int(q.storage_max) + 1,
                                                size=shape).astype(q.numpy)


# ---------------------------------------------------------------- declarations
@pytest.mark.parametrize("name, per_axis", [
    ("dynamic_broadcast_in_dim", {"operand", "result"}), ("dynamic_reshape", {"operand", "result"}),
    ("dynamic_conv", {"rhs", "result"}), ("dynamic_pad", set()), ("dynamic_gather", set()),
    ("dynamic_iota", set()), ("collective_broadcast", set()),
])
def test_tables_admit_quantized_tensors_as_v1_20_rows_say(name, per_axis):
    """v1.20's rows: "tensor or quantized tensor" (per-axis too) for
    dynamic_broadcast_in_dim, dynamic_reshape, dynamic_conv's rhs and result;
    "per-tensor quantized tensor" elsewhere; never the shape operands."""
    spec = ADDED[name]
    base = spec.quantization.example({})
    for role, t in quantized._roles(base):
        axis = quantized.per_axis_along(A, 0, int(t.shape[0]) if t.shape else 1)
        assert role not in spec.types_outside_tables(spec.quantization.example({role: A}))
        outside = role in spec.types_outside_tables(spec.quantization.example({role: axis}))
        assert outside == (role not in per_axis), role
    literal = [o.name for o in spec.operands if o.literal]
    for name_ in literal:
        inst = spec.quantization.example({})
        retyped = spec.instance({**inst.operands, name_: TensorType(inst.operands[name_].shape, A)},
                                dict(inst.attributes), dict(inst.results))
        assert name_ in spec.types_outside_tables(retyped)


def test_async_ops_admit_per_tensor_quantized_tensors():
    for name in ("async_start", "async_done"):
        q = ADDED[name].quantization
        assert q is not None and q.per_axis is False and q.meaning == "storage"


# ---------------------------------------------------------------- values
def test_dynamic_reshape_moves_storage_and_per_axis_scales():
    axis_in = quantized.per_axis_along(A, 0, 2)
    spec, inst = _example("dynamic_reshape", {"operand": axis_in, "result": axis_in})
    assert spec.violated(inst) == []
    x = _draw((2, 2, 3), A)
    [e] = _run(spec, inst, [x])
    assert e.kind == "exact" and (_storage(e) == x.reshape(2, 6)).all()


def test_dynamic_broadcast_in_dim_moves_storage():
    spec, inst = _example("dynamic_broadcast_in_dim", {"operand": A, "result": A})
    x = _draw((1, 3), A, 1)
    [e] = _run(spec, inst, [x])
    want = np.broadcast_to(x[:, :, None], (1, 3, 2))
    assert (_storage(e) == np.broadcast_to(want, (2, 3, 2))).all()


def test_dynamic_pad_moves_storage_and_the_padding_value():
    spec, inst = _example("dynamic_pad", {"operand": A, "padding_value": A, "result": A})
    x, v = _draw((2, 3), A, 2), np.array(-100, np.int8)
    [e] = _run(spec, inst, [x, v])
    want = np.full((4, 5), -100)   # low [1, 0], high [0, 2], interior [1, 0] (the example's)
    want[1::2, :3] = x
    assert (_storage(e) == want).all()


def test_dynamic_gather_moves_storage():
    spec, inst = _example("dynamic_gather", {"operand": A, "result": A})
    x = _draw((4, 5), A, 3)
    starts = np.array([[2, 1], [0, 3]], np.int32)
    [e] = _run(spec, inst, [x, starts])
    assert (_storage(e) == np.array([x[2, 1:3], x[0, 3:5]])).all()


def test_dynamic_iota_quantizes_the_index():
    """quantize(output_index[1], R) with the independent quantize."""
    spec, inst = _example("dynamic_iota", {"result": R})
    [e] = _run(spec, inst, [])
    want = shlo_quantize(np.broadcast_to(np.arange(4, dtype=np.float32), (3, 4)), _params(R))
    assert (_storage(e) == want).all()


def test_dynamic_conv_is_dequantize_conv_quantize():
    """The exact sums (fractions) of the dequantized operands, quantized by
    the independent quantize, are accepted by the oracle's expectation — and
    one storage unit off everywhere is not."""
    spec, inst = _example("dynamic_conv", {"lhs": A, "rhs": A, "result": R})
    lhs = np.random.default_rng(4).integers(-13, 8, size=(1, 5, 2)).astype(np.int8)   # |dequantized| ≤ 1
    rhs = np.random.default_rng(5).integers(-13, 8, size=(3, 2, 4)).astype(np.int8)
    [e] = _run(spec, inst, [lhs, rhs])
    x, w = shlo_dequantize(lhs, _params(A)), shlo_dequantize(rhs, _params(A))
    padded = np.concatenate([np.zeros((1, 1, 2), np.float32), x, np.zeros((1, 1, 2), np.float32)], axis=1)
    exact = np.zeros((1, 3, 4))
    for o in range(3):   # window 3, stride 2, padding 1 each side
        for f in range(4):
            exact[0, o, f] = float(sum(Fraction(float(padded[0, 2 * o + k, c])) * Fraction(float(w[k, c, f]))
                                       for k in range(3) for c in range(2)))
    truth = shlo_quantize(exact.astype(np.float32), _params(R)).astype(np.int8)
    assert compare(e, truth).ok
    assert not compare(e, (truth.astype(np.int64) + 1).clip(-128, 127).astype(np.int8)).ok


def test_collective_broadcast_sends_storage_and_fills_quantize_zero():
    """v1.20's Example (group [2, 1] of four replicas): replicas 1 and 2 get
    replica 2's storage values; 0 and 3, outside every group, get
    quantize(0) = round(0 / 0.1) + (−3) = −3."""
    spec, inst = _example("collective_broadcast", {"operands": A, "results": A})
    grid = Grid(4, 1)
    text = quantized._program(spec, inst)
    xs = [_draw((2, 3), A, 10 + k) for k in range(4)]
    outs = execute_on_grid(parse_program(text, grid), grid, [[x] for x in xs])
    assert [(_storage(o[0]) == xs[2]).all() for o in outs[1:3]] == [True, True]
    assert all((_storage(outs[k][0]) == -3).all() for k in (0, 3))


def test_async_start_runs_a_quantized_all_reduce_body():
    """The body's add is dequantize → f32 add → quantize (the independent
    implementation), on the two processes' storage values."""
    reduce = next(o for o in operations(A) if o.name == "all_reduce")
    text = with_grid(async_program(reduce), reduce.grid)
    a, b = np.array([10, -50, 127, -128], np.int8), np.array([20, -70, 100, -128], np.int8)
    outs = execute_on_grid(parse_program(text, reduce.grid), reduce.grid, [[a], [b]])
    p = _params(A)
    want = shlo_quantize(shlo_dequantize(a, p) + shlo_dequantize(b, p), p)
    assert all((_storage(o[0]) == want).all() for o in outs)


def test_async_done_returns_the_quantized_value_held():
    gather = next(o for o in operations(A) if o.name == "slice")   # one process: slice [2, 4) of 5
    text = async_program(gather)
    x = _draw((5,), A, 6)
    [e] = execute(parse_program(text), [x])
    assert (_storage(e) == x[2:4]).all()


# ---------------------------------------------------------------- invalid programs
@pytest.mark.parametrize("name, types, label", [
    ("dynamic_reshape", {"operand": A, "result": R}, "dynamic_reshape_c1"),
    ("dynamic_reshape", {"operand": quantized.per_axis_along(A, 1, 2), "result": quantized.per_axis_along(A, 0, 2)},
     "dynamic_reshape_c3"),
    ("dynamic_broadcast_in_dim", {"operand": quantized.per_axis_along(A, 0, 1),
                                  "result": quantized.per_axis_along(A, 0, 2)}, "dynamic_broadcast_in_dim_c6"),
    ("dynamic_pad", {"operand": A, "padding_value": R, "result": A}, "dynamic_pad_c1"),
    ("dynamic_gather", {"operand": A, "result": R}, "dynamic_gather_c14"),
    ("dynamic_conv", {"lhs": A, "rhs": Q("!quant.uniform<i16:f32, 0.1:0>"), "result": A}, "dynamic_conv_c31"),
    ("dynamic_conv", {"lhs": A, "rhs": A, "result": F32}, "dynamic_conv_c28"),
    ("collective_broadcast", {"operands": A, "results": R}, "collective_broadcast_c3"),
])
def test_quantized_clauses_break_alone_and_the_reader_names_them(name, types, label):
    spec, inst = _example(name, types)
    assert spec.violated(inst) == [label]
    assert expect.rejection(quantized._program(spec, inst)) == label


def test_async_clauses_read_quantized_types_whole():
    gather = operations(A)[0]
    other = TensorType(gather.result_type.shape, R)
    assert expect.rejection(with_grid(async_program(gather, done=other), gather.grid)) == "async_done_c1"
    start = async_program(gather, future=f"!stablehlo.future<{other.mlir}>", done=other)
    assert expect.rejection(with_grid(start, gather.grid)) == "async_start_c4"


# ---------------------------------------------------------------- the stream
def test_the_stream_runs_last_and_only_for_ops_v1_20_added():
    # after every stream but the late invalid cases of dynamic_gather/dynamic_conv (issue 35, stop 38) and
    # async_start's/async_done's late cases (stop 46's triage), which came later still and make no quantized case
    assert ADDED_STREAMS[-3:] == (quantized.added_cases, v1_20_ops.late_cases, v1_20_collectives.late_cases)
    assert all(not c.dtype.startswith("quant_") for name in ("dynamic_gather", "dynamic_conv")
               for c in v1_20_ops.late_cases(ADDED[name], 0))
    assert all(not c.dtype.startswith("quant_") for name in ("async_start", "async_done")
               for c in v1_20_collectives.late_cases(ADDED[name], 0))
    from shlo_conform.spec.ops import OPS
    assert quantized.added_cases(OPS["reshape"], 0) == []
    for name in MINE:   # the first stream (`cases`) answers none of them: their earlier cases keep their order
        assert quantized.cases(ADDED[name], 0) == []


@pytest.mark.parametrize("name, invalid", [("dynamic_reshape", {"dynamic_reshape_c1", "dynamic_reshape_c3"}),
                                           ("dynamic_gather", {"dynamic_gather_c14"}),
                                           ("async_done", {"async_done_c1"})])
def test_the_stream_makes_value_and_invalid_cases(name, invalid):
    made = quantized.added_cases(ADDED[name], 0)
    assert sum(c.kind == "value" for c in made) >= 3
    assert {c.violates for c in made if c.kind == "invalid"} == invalid
    assert all(c.dtype.startswith("quant_") for c in made)
