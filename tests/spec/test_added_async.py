"""v1.20's async_start and async_done (spec/added/): the Example, each
operation async_start's C2 admits run through the pair, every constraint
broken alone, the `future<…>` type, what jaxlib 0.10.2, XLA:CPU and the
reference interpreter do with the ops, and the generator stream's cases.

Independent truth: numpy worked out from each operation's section (the
Example's all_gather, the slices), and XLA:CPU where it runs the program;
"alone" is shown by the program being accepted once the broken
constraint is taken out of the declaration.
"""
from __future__ import annotations

import dataclasses
import subprocess
import sys

import numpy as np
import pytest

from shlo_conform.generators import v1_20_collectives as stream
from shlo_conform.generators.suite import with_grid
from shlo_conform.oracle.grid import execute_on_grid
from shlo_conform.oracle.program import ProgramRejected, execute, parse_program
from shlo_conform.spec.added import ADDED
from shlo_conform.spec.grid import Grid
from shlo_conform.spec.types import FutureType, TensorType, element_type, parse_type
from shlo_conform.suites.compare import compare

pytestmark = pytest.mark.xdist_group("v1.20-async")   # one XLA client for the module's grid compiles

F32 = element_type("f32")
START, DONE = ADDED["async_start"], ADDED["async_done"]

# v1.20's Example (async_start's and async_done's sections), transcribed; the result returned
EXAMPLE = '''func.func @main(%arg0: tensor<8x2xf32>) -> tensor<8x8xf32> {
%0 = "stablehlo.async_start"(%arg0) ({
  %1 = "stablehlo.all_gather"(%arg0) {
    all_gather_dim = 1 : i64,
    replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>
  } : (tensor<8x2xf32>) -> tensor<8x8xf32>
  "stablehlo.return"(%1) : (tensor<8x8xf32>) -> ()
}) : (tensor<8x2xf32>) -> !stablehlo.future<tensor<8x8xf32>>
%2 = "stablehlo.async_done"(%0) : (!stablehlo.future<tensor<8x8xf32>>) -> tensor<8x8xf32>
"func.return"(%2) : (tensor<8x8xf32>) -> ()
}
'''


def _jaxlib_parse(text: str):
    from jax._src.interpreters import mlir as jm
    from jaxlib.mlir import ir
    with jm.make_ir_context(), ir.Location.unknown():
        return ir.Module.parse(text)


def test_the_example_gathers_as_numpy_says():
    grid = Grid(8, 1)
    xs = [np.arange(16, dtype=np.float32).reshape(8, 2) + 100 * i for i in range(8)]
    outs = execute_on_grid(parse_program(with_grid(EXAMPLE, grid)), grid, [[x] for x in xs])
    for i in range(8):
        group = [0, 2, 4, 6] if i % 2 == 0 else [1, 3, 5, 7]
        want = np.concatenate([xs[j] for j in group], axis=1)
        assert outs[i][0].kind == "exact" and np.array_equal(outs[i][0].array(), want), i


def test_jaxlib_refuses_the_example_and_reads_the_body_with_block_arguments():
    with pytest.raises(Exception, match="using value defined outside the region"):
        _jaxlib_parse(EXAMPLE)
    gather = stream.operations(F32)[0]
    _jaxlib_parse(stream.async_program(gather))   # the operands as the block's arguments


def test_the_oracle_reads_the_pair_as_jaxlib_prints_it():
    """jaxlib's printing (properties `<{…}>`, `stablehlo.return` pretty) is
    read back through the registered dialect and runs as the generic text does."""
    gather = stream.operations(F32)[0]
    text = with_grid(stream.async_program(gather), gather.grid)
    pretty = _jaxlib_parse(text).operation.get_asm()
    assert "!stablehlo.future<tensor<2x6xf32>>" in pretty and pretty != text
    per = [[np.full((2, 3), k, np.float32)] for k in (1, 2)]
    got = execute_on_grid(parse_program(pretty), gather.grid, per)
    want = np.concatenate([per[0][0], per[1][0]], axis=1)
    assert all(np.array_equal(o[0].array(), want) for o in got)


def test_the_future_type_reads_and_prints():
    t = parse_type("!stablehlo.future<tensor<8x8xf32>, tensor<2xi32>>")
    assert t == FutureType((TensorType((8, 8), F32), TensorType((2,), element_type("si32"))))
    assert t.mlir == "!stablehlo.future<tensor<8x8xf32>, tensor<2xi32>>"


# ---------------------------------------------------------------- each operation C2 admits
def _slices_by_numpy(name: str, args: list) -> np.ndarray:
    """slice [2:4]; dynamic_slice and dynamic_update_slice with the start
    clamped into [0, 5 - 2] (their sections' formula)."""
    if name == "slice":
        return args[0][2:4]
    if name == "dynamic_slice":
        s = min(max(int(args[1]), 0), 3)
        return args[0][s:s + 2]
    s = min(max(int(args[2]), 0), 3)
    out = args[0].copy()
    out[s:s + 2] = args[1]
    return out


@pytest.mark.parametrize("name", ["slice", "dynamic_slice", "dynamic_update_slice"])
@pytest.mark.parametrize("form", ["arguments", "captures"])
def test_the_slices_through_async_as_numpy_says(name, form):
    op = next(o for o in stream.operations(F32) if o.name == name)
    rng = np.random.default_rng(5)
    for start in (1, 3, 7, -2):   # in bounds, at the end, clamped from both sides
        args = [rng.standard_normal(t.shape).astype(np.float32) if t.element_type == F32 else np.int64(start)
                for t in op.operand_types]
        (out,) = execute(parse_program(stream.async_program(op, form)), args)
        assert np.array_equal(out.array(), _slices_by_numpy(name, args)), (name, start)


COLLECTIVES = ["all_gather", "all_reduce", "all_to_all", "collective_permute", "reduce_scatter"]


@pytest.fixture(scope="module")
def xla():
    from shlo_conform.backends.base import load_backend
    return load_backend("xla")


@pytest.mark.parametrize("name", COLLECTIVES)
def test_xla_runs_async_collectives_as_the_oracle_states(xla, name):
    """XLA:CPU runs the block-argument form of these five: its outputs meet
    the oracle's expectations (two-process sums: one tree, rounded once)."""
    op = next(o for o in stream.operations(F32) if o.name == name)
    grid = op.grid
    rng = np.random.default_rng(9)
    per = [[rng.standard_normal(t.shape).astype(np.float32) for t in op.operand_types] for _ in range(grid.size)]
    text = with_grid(stream.async_program(op), grid)
    want = execute_on_grid(parse_program(text), grid, per)
    got = xla.run_grid(xla.compile_grid(text, grid), per)
    for i in range(grid.size):
        assert compare(want[i][0], got[i][0]).ok, (name, i)


def test_xla_refuses_what_it_has_no_async_form_of(xla):
    from shlo_conform.backends.base import Rejected
    ops = {o.name: o for o in stream.operations(F32)}
    with pytest.raises(Rejected, match="unsupported op in async_start: stablehlo.slice"):
        xla.compile(stream.async_program(ops["slice"]))
    with pytest.raises(Rejected, match="async_start currently requires one argument; got 2"):
        xla.compile(stream.async_program(ops["dynamic_slice"]))
    with pytest.raises(Rejected, match="using value defined outside the region"):
        xla.compile(stream.async_program(ops["slice"], "captures"))


@pytest.mark.long   # a fresh python with jaxlib: the op aborts the process it runs in
def test_the_interpreter_aborts_its_process_on_async_start():
    ops = {o.name: o for o in stream.operations(F32)}
    code = ("import sys, numpy as np\nfrom shlo_conform.backends.base import load_backend\n"
            "b = load_backend('interpreter')\nex = b.compile(sys.stdin.read())\n"
            "print('ran', b.run(ex, [np.zeros(5, np.float32)]))\n")
    p = subprocess.run([sys.executable, "-c", code], input=stream.async_program(ops["slice"]), capture_output=True,
                       text=True, timeout=300)
    assert p.returncode < 0 and "LLVM ERROR: Unsupported op" in p.stderr and "async_start" in p.stderr


# ---------------------------------------------------------------- constraints, each broken alone
def _stream_invalid():
    return ([c for c in stream.cases(START, 0) if c.kind == "invalid"]
            + [c for c in stream.cases(DONE, 0) if c.kind == "invalid"])


def test_the_stream_breaks_every_constraint_of_both_ops():
    named = {c.violates for c in _stream_invalid()}
    assert named == {"async_start_c1", "async_start_c2", "async_start_c3", "async_start_c4", "async_done_c1"}


@pytest.mark.parametrize("case", _stream_invalid(), ids=lambda c: c.note[:60])
def test_each_invalid_program_breaks_its_constraint_alone(case, monkeypatch):
    with pytest.raises(ProgramRejected) as refused:
        parse_program(case.mlir)
    assert refused.value.constraint == case.violates
    op = case.violates.rsplit("_c", 1)[0]
    spec = ADDED[op]
    # without it (and without type inference, which restates C4 and async_done's C1) nothing refuses it
    monkeypatch.setitem(ADDED, op, dataclasses.replace(
        spec, constraints=tuple(c for c in spec.constraints if c.__name__ != case.violates), infer=lambda inst: {}))
    parse_program(case.mlir)


def test_c3_and_the_result_row_where_jaxlib_reads_otherwise():
    """jaxlib 0.10.2 takes an async_start whose operation leaves one of two
    block arguments unused (ours: C3) and an async_done of i32 (ours: the
    result row, floating-point or complex only)."""
    swapped = next(c for c in _stream_invalid() if "second block argument" in c.note)
    _jaxlib_parse(swapped.mlir)
    gather_i32 = stream.operations(element_type("si32"))[0]
    text = stream.async_program(gather_i32)
    _jaxlib_parse(text)
    with pytest.raises(ProgramRejected, match="async_done: element type of result is not allowed by the spec"):
        parse_program(with_grid(text, gather_i32.grid))


def test_inference():
    gather = stream.operations(F32)[0]
    prog = parse_program(with_grid(stream.async_program(gather), gather.grid))
    start, done = (s.inst for s in prog.steps)
    assert START.infer(start) == {"result": FutureType((TensorType((2, 6), F32),))}
    assert DONE.infer(done) == {"result": TensorType((2, 6), F32)}
    assert START.violated(start) == [] and DONE.violated(done) == []


def test_an_instance_without_its_body_block_breaks_the_rules_on_the_body():
    """Nothing the body holds can be checked without the reader's block."""
    from shlo_conform.spec.dsl import Function
    t = TensorType((2,), F32)
    inst = START.instance({"operands": [t]}, {}, {"result": FutureType((t,))}, {"body": Function((t,), (t,))})
    assert START.violated(inst) == ["async_start_c1", "async_start_c2", "async_start_c3", "async_start_c4"]


# ---------------------------------------------------------------- the stream's value cases
def test_the_stream_gathers_as_numpy_says():
    checked = 0
    for c in stream.cases(DONE, 0) + stream.cases(START, 0):
        if c.kind != "value" or c.grid is None or not ("all_gather" in c.note or c.note.startswith("v1.20's Example")):
            continue
        ins = [[v.array() for v in per] for per in c.grid.inputs]
        n = c.grid.size
        for i, (e,) in enumerate(c.grid.expected):
            # every stream gather is dim 1 over one group of all processes (2×1), or the Example's
            group = list(range(n)) if n == 2 else [j for j in range(n) if j % 2 == i % 2]
            want = np.concatenate([ins[j][0] for j in group], axis=1)
            from shlo_conform.spec.types import to_bits
            assert e.bits.tolist() == to_bits(want, e.type.element_type).tolist(), (c.id, i)
        checked += 1
    assert checked == 8 + 3   # async_done: one per element type of its row; async_start: two spellings, the Example


def test_the_stream_draws_the_same_cases_from_the_same_seed():
    first, again = stream.cases(START, 3), stream.cases(START, 3)
    assert [c.to_json() for c in first] == [c.to_json() for c in again]
    assert [c.id for c in first] != [c.id for c in stream.cases(START, 4)]
    assert stream.cases(ADDED["uniform_quantize"], 3) == []
