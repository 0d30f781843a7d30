"""v1.20's collective_broadcast and collective_reduce (spec/added/): their
Examples, semantics on grids against numpy worked out from the section's
words (process groups written as literal lists here, not taken from
spec/grid.py), every constraint broken alone, type inference, what jaxlib
0.10.2, XLA:CPU and the reference interpreter do with the ops, and the
generator stream (generators/v1_20_collectives.py).

Independent truth: the Examples' stated results (transcribed from
/work/shared/upstream-1.20/spec.md), numpy on hand-made groups, and — where
a backend runs the op — the backend.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

from shlo_conform.generators import v1_20_collectives as stream
from shlo_conform.generators.suite import with_grid
from shlo_conform.oracle.grid import execute_on_grid
from shlo_conform.oracle.program import ProgramRejected, parse_program
from shlo_conform.spec import grid as grids
from shlo_conform.spec.added import ADDED
from shlo_conform.spec.added.collective_broadcast import zeros
from shlo_conform.spec.dsl import Function, Range
from shlo_conform.spec.grid import Grid
from shlo_conform.spec.quantized import parse_quantized_type
from shlo_conform.spec.types import TensorType, element_type

CB, CR = ADDED["collective_broadcast"], ADDED["collective_reduce"]
F32, I64, SI32 = element_type("f32"), element_type("si64"), element_type("si32")
CPUS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def T(shape, et=F32):
    return TensorType(tuple(shape), et)


def add_body(et):
    """`computation` as the oracle's reader makes it: a sum (numpy's, wrapping)."""
    s = T((), et)

    def call(a, b):
        with np.errstate(over="ignore"):
            return [np.asarray(np.asarray(a, et.numpy) + np.asarray(b, et.numpy)).astype(et.numpy)]
    return Function((s, s), (s,), "add", call=call, pairwise=("add",))


def instance(spec, data, groups, grid, channel_id=0, roots=None, results=None, body=None):
    attrs = {"replica_groups": groups, "channel_id": channel_id, "has_dynamic_root": True if roots else None}
    regions = {"computation": body or add_body(data[0].element_type)} if spec.regions else {}
    inst = spec.instance({"operands": list(data) + ([roots] if roots else [])}, attrs, {}, regions, grid=grid)
    inst.results["results"] = results if results is not None else spec.infer(inst)["results"]
    return inst


def run(spec, inst, grid, operands_at):
    """Every process's results by the op's semantics, each from its group's operands only."""
    groups = spec.semantics.groups(inst, grid)
    return {p: spec.semantics.fn(inst, grid, p, {q: operands_at[q] for q in grids.group_of(groups, p)})
            for p in grid.processes()}


def at(grid, *per_process):
    return {p: [np.asarray(a) for a in ops] for p, ops in zip(grid.processes(), per_process)}


def value(answer):
    return answer.nearest if isinstance(answer, Range) else answer


def module(body: str, grid: Grid) -> str:
    return with_grid(body, grid)


EXAMPLE_OPERANDS = ([[1, 2]], [[3, 4]], [[5, 6]], [[7, 8]])   # %operand@(0, 0) … @(3, 0), both Examples


# ---------------------------------------------------------------- the Examples
def broadcast_example() -> str:
    """v1.20's Example, its operand type's missing `<` put back."""
    return ('func.func @main(%operand: tensor<1x2xi64>) -> tensor<1x2xi64> {\n'
            '  %result = "stablehlo.collective_broadcast"(%operand) {\n'
            '    replica_groups = dense<[[2, 1]]> : tensor<1x2xi64>,\n'
            '    channel_handle = #stablehlo.channel_handle<handle = 0, type = 0>\n'
            '  } : (tensor<1x2xi64>) -> tensor<1x2xi64>\n'
            '  "func.return"(%result) : (tensor<1x2xi64>) -> ()\n}\n')


def reduce_example() -> str:
    """v1.20's Example with a sum as its `computation` (the Example has none;
    its values are sums) and the missing `<` and `,` put back."""
    return ('func.func @main(%operand: tensor<1x2xi64>) -> tensor<1x2xi64> {\n'
            '  %result = "stablehlo.collective_reduce"(%operand) ({\n'
            '    ^bb0(%x: tensor<i64>, %y: tensor<i64>):\n'
            '      %s = "stablehlo.add"(%x, %y) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n'
            '      "stablehlo.return"(%s) : (tensor<i64>) -> ()\n'
            '  }) {\n'
            '    has_dynamic_root = false,\n'
            '    replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>,\n'
            '    channel_handle = #stablehlo.channel_handle<handle = 0, type = 0>\n'
            '  } : (tensor<1x2xi64>) -> tensor<1x2xi64>\n'
            '  "func.return"(%result) : (tensor<1x2xi64>) -> ()\n}\n')


G4 = Grid(4, 1)


def test_collective_broadcast_example_by_its_semantics():
    op = instance(CB, [T((1, 2), I64)], ((2, 1),), G4)
    assert CB.violated(op) == [] and op.results["results"] == [T((1, 2), I64)]
    got = run(CB, op, G4, at(G4, *([np.array(x)] for x in EXAMPLE_OPERANDS)))
    assert [got[p][0].tolist() for p in G4.processes()] == [[[0, 0]], [[5, 6]], [[5, 6]], [[0, 0]]]


def test_collective_broadcast_example_as_a_program():
    outs = execute_on_grid(parse_program(module(broadcast_example(), G4)), G4,
                           [[np.array(x)] for x in EXAMPLE_OPERANDS])
    assert [o[0].array().tolist() for o in outs] == [[[0, 0]], [[5, 6]], [[5, 6]], [[0, 0]]]
    assert all(o[0].kind == "exact" for o in outs)


def test_collective_reduce_example_by_its_semantics():
    op = instance(CR, [T((1, 2), I64)], ((0, 1, 2, 3),), G4)
    assert CR.violated(op) == []
    got = run(CR, op, G4, at(G4, *([np.array(x)] for x in EXAMPLE_OPERANDS)))
    assert [[value(a) for a in got[p][0].reshape(-1)] for p in G4.processes()] == [[16, 20], [0, 0], [0, 0], [0, 0]]


def test_collective_reduce_example_as_a_program():
    outs = execute_on_grid(parse_program(module(reduce_example(), G4)), G4, [[np.array(x)] for x in EXAMPLE_OPERANDS])
    assert [o[0].array().tolist() for o in outs] == [[[16, 20]], [[0, 0]], [[0, 0]], [[0, 0]]]


# ---------------------------------------------------------------- numpy from the section's words
# (grid, channel_id, replica_groups, the process groups written out: lists of flattened ids)
CONFIGS = [
    (Grid(4, 1), 0, ((3, 1), (0, 2)), [[3, 1], [0, 2]]),
    (Grid(2, 2), 0, ((1, 0),), [[2, 0], [3, 1]]),              # cross_replica: replicas (1, 0) of each partition
    (Grid(2, 2), 5, ((1, 0),), [[1, 0], [3, 2]]),              # cross_partition: partitions (1, 0) of each replica
    (Grid(3, 2), 0, ((2,),), [[4], [5]]),                      # groups of one; replicas 0 and 1 in none
    (Grid(1, 3), 1, ((2, 0),), [[2, 0]]),                      # partition 1 in no group
]


def _config_id(c):
    return f"{c[0]}-ch{c[1]}-{c[2]}"


def _per_process(grid: Grid, seed: int) -> list[np.ndarray]:
    """f32 inputs with NaN payloads, -0 and infinities: broadcast must copy bits."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(grid.size):
        bits = rng.integers(0, 2 ** 32, size=(2, 3), dtype=np.uint64).astype(np.uint32)
        bits[0, 0] = 0x7FC00001 + i        # a NaN with a payload of its own
        bits[0, 1] = 0x80000000            # -0
        out.append(bits.view(np.float32))
    return out


def broadcast_program(grid, channel_id, groups, shape="2x3", et="f32") -> str:
    rows, cols = len(groups), len(groups[0])
    flat = ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups)
    t = f"tensor<{shape}x{et}>"
    return (f"func.func @main(%a: {t}) -> {t} {{\n"
            f'  %r = "stablehlo.collective_broadcast"(%a) {{'
            f"replica_groups = dense<[{flat}]> : tensor<{rows}x{cols}xi64>, "
            f"channel_handle = #stablehlo.channel_handle<handle = {channel_id}, type = 1>}} : ({t}) -> {t}\n"
            f'  "func.return"(%r) : ({t}) -> ()\n}}\n')


@pytest.mark.parametrize("config", CONFIGS, ids=_config_id)
def test_collective_broadcast_copies_the_first_process_bits(config):
    grid, channel_id, groups, flat_groups = config
    xs = _per_process(grid, 7)
    outs = execute_on_grid(parse_program(module(broadcast_program(grid, channel_id, groups), grid)), grid,
                           [[x] for x in xs])
    for i in range(grid.size):
        g = next((g for g in flat_groups if i in g), None)
        want = xs[g[0]] if g is not None else np.zeros((2, 3), np.float32)
        assert outs[i][0].array().view(np.uint32).tolist() == want.view(np.uint32).tolist(), i


@pytest.mark.parametrize("config", CONFIGS, ids=_config_id)
def test_collective_reduce_sums_on_the_first_process_only(config):
    grid, channel_id, groups, flat_groups = config
    rng = np.random.default_rng(3)
    xs = [rng.integers(-2 ** 31, 2 ** 31, size=(3,), dtype=np.int64).astype(np.int32) for _ in range(grid.size)]
    rows, cols = len(groups), len(groups[0])
    flat = ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups)
    text = ('func.func @main(%a: tensor<3xi32>) -> tensor<3xi32> {\n'
            '  %r = "stablehlo.collective_reduce"(%a) ({\n'
            '    ^bb0(%x: tensor<i32>, %y: tensor<i32>):\n'
            '      %s = "stablehlo.add"(%x, %y) : (tensor<i32>, tensor<i32>) -> tensor<i32>\n'
            '      "stablehlo.return"(%s) : (tensor<i32>) -> ()\n'
            f'  }}) {{replica_groups = dense<[{flat}]> : tensor<{rows}x{cols}xi64>, '
            f'channel_handle = #stablehlo.channel_handle<handle = {channel_id}, type = 1>}} '
            ': (tensor<3xi32>) -> tensor<3xi32>\n  "func.return"(%r) : (tensor<3xi32>) -> ()\n}\n')
    outs = execute_on_grid(parse_program(module(text, grid)), grid, [[x] for x in xs])
    for i in range(grid.size):
        g = next((g for g in flat_groups if i in g), None)
        if g is None or g[0] != i:
            want = np.zeros(3, np.int32)
        else:   # two's complement wrap: the spec's integer overflow alternative, exact in int64 then wrapped
            want = (sum(xs[j].astype(np.int64) for j in g) + 2 ** 31) % 2 ** 32 - 2 ** 31
        assert outs[i][0].array().astype(np.int64).tolist() == np.asarray(want).tolist(), i


def tree_sums(xs) -> set:
    """Every binary tree over `xs` in their order (all_reduce's schedules:
    the in-order traversal is the group's values), each sum rounded to f32."""
    if len(xs) == 1:
        return {float(xs[0])}
    out = set()
    for k in range(1, len(xs)):
        for a in tree_sums(xs[:k]):
            for b in tree_sums(xs[k:]):
                out.add(float(np.float32(np.float32(a) + np.float32(b))))
    return out


def test_collective_reduce_float_sum_is_a_range_holding_every_schedule():
    """f32 values whose sum depends on the tree — ((1 + 2^24) + 1) - 2^24 = 0,
    1 + (2^24 + (1 - 2^24)) = 2, (1 + 2^24) + (1 - 2^24) = 1 — so the source
    states a range holding each, and the other processes zeros."""
    grid = Grid(4, 1)
    xs = [np.float32([1.0]), np.float32([2.0 ** 24]), np.float32([1.0]), np.float32([-2.0 ** 24])]
    sums = tree_sums([x[0] for x in xs])
    assert sums == {0.0, 1.0, 2.0}
    op = instance(CR, [T((1,))], ((0, 1, 2, 3),), grid)
    got = run(CR, op, grid, at(grid, *([x] for x in xs)))
    answer = got[(0, 0)][0][0]
    assert isinstance(answer, Range) and answer.nearest == 2
    assert all(answer.lo <= s <= answer.hi for s in sums), (answer, sums)
    assert all(value(a) == 0 for p in grid.processes()[1:] for a in got[p][0].reshape(-1))


# ---------------------------------------------------------------- dynamic roots
def test_dynamic_root_picks_the_named_member_of_each_group():
    grid = Grid(4, 1)
    op = instance(CB, [T((2,)), T((1,), SI32)], ((2, 1), (0, 3)), grid, roots=T((2,), SI32))
    assert CB.violated(op) == [] and op.results["results"] == [T((2,)), T((1,), SI32)]
    xs = [[np.float32([i, i + 0.5]), np.int32([10 * i]), np.int32([1, 0])] for i in range(4)]
    got = run(CB, op, grid, at(grid, *xs))
    # result 0 from group[1] (1 in [2, 1], 3 in [0, 3]); result 1 from group[0] (2 and 0)
    assert [got[p][0].tolist() for p in grid.processes()] == [[3, 3.5], [1, 1.5], [1, 1.5], [3, 3.5]]
    assert [got[p][1].tolist() for p in grid.processes()] == [[0], [20], [20], [0]]


def test_dynamic_root_of_collective_reduce_keeps_the_sum_on_the_named_process():
    grid = Grid(4, 1)
    op = instance(CR, [T((2,), SI32)], ((0, 1, 2, 3),), grid, roots=T((1,), SI32))
    assert CR.violated(op) == []
    xs = [[np.int32([i, -i]), np.int32([2])] for i in range(4)]
    got = run(CR, op, grid, at(grid, *xs))
    assert [[value(a) for a in got[p][0]] for p in grid.processes()] == [[0, 0], [0, 0], [6, -6], [0, 0]]


def test_roots_the_group_disagrees_on_or_past_the_group_are_refused_when_run():
    grid = Grid(2, 1)
    text = ('func.func @main(%a: tensor<2xf32>, %r: tensor<1xi32>) -> tensor<2xf32> {\n'
            '  %0 = "stablehlo.collective_broadcast"(%a, %r) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, '
            'has_dynamic_root = true} : (tensor<2xf32>, tensor<1xi32>) -> tensor<2xf32>\n'
            '  "func.return"(%0) : (tensor<2xf32>) -> ()\n}\n')
    prog = parse_program(module(text, grid))
    x = np.float32([1, 2])
    outs = execute_on_grid(prog, grid, [[x, np.int32([1])], [x + 1, np.int32([1])]])
    assert [o[0].array().tolist() for o in outs] == [[2, 3], [2, 3]]
    with pytest.raises(ProgramRejected, match="violates collective_broadcast_c6: 0 <= operands"):
        execute_on_grid(prog, grid, [[x, np.int32([2])], [x, np.int32([2])]])
    with pytest.raises(ProgramRejected, match="hold different roots"):
        execute_on_grid(prog, grid, [[x, np.int32([0])], [x, np.int32([1])]])


# ---------------------------------------------------------------- constraints, each broken alone
G2 = Grid(2, 1)


def broadcast_breaks():
    two = [T((2,)), T((3,), SI32)]
    return [
        ("collective_broadcast_c1", instance(CB, [T((2,))], ((1, 1),), G2)),
        ("collective_broadcast_c2", instance(CB, [T((2,))], ((0, 2),), G2)),
        ("collective_broadcast_c2", instance(CB, [T((2,))], ((0, 1),), Grid(2, 1), channel_id=1)),   # partitions: 1
        ("collective_broadcast_c3", instance(CB, [T((2,))], ((0, 1),), G2, results=[T((2,), SI32)])),
        ("collective_broadcast_c3", instance(CB, two, ((0, 1),), G2, results=[T((2,)), T((4,), SI32)])),
        ("collective_broadcast_c4", instance(CB, [T((2,))], ((0, 1),), G2, roots=T((1,), element_type("si64")))),
        ("collective_broadcast_c4", instance(CB, [T((2,))], ((0, 1),), G2, roots=T((2,), SI32))),
        ("collective_broadcast_c4", instance(CB, [T((2,))], ((0, 1),), G2, roots=T((1,), SI32),
                                             results=[T((3,))])),
        ("collective_broadcast_c5", instance(CB, [T((2,))], ((0, 1),), G2, results=[T((2,)), T((2,))])),
    ]


@pytest.mark.parametrize("label, op", broadcast_breaks(), ids=lambda x: x if isinstance(x, str) else "")
def test_each_collective_broadcast_constraint_breaks_alone(label, op):
    assert CB.violated(op) == [label]


def test_c4_needs_two_operands_and_c6_is_a_statement_on_values():
    roots_only = CB.instance({"operands": [T((0,), SI32)]}, {"replica_groups": ((0, 1),), "has_dynamic_root": True},
                             {"results": []}, grid=G2)
    assert CB.violated(roots_only) == ["collective_broadcast_c4"]
    op = instance(CB, [T((2,))], ((0, 1),), G2, roots=T((1,), SI32))
    assert CB.constraint("collective_broadcast_c6")(op) is True


def reduce_breaks():
    return [
        ("collective_reduce_c1", instance(CR, [T((2,))], ((0, 0),), G2)),
        ("collective_reduce_c2", instance(CR, [T((2,))], ((0, 3),), G2)),
        ("collective_reduce_c3", instance(CR, [T((2,))], ((0, 1),), G2, results=[T((3,))])),
        ("collective_reduce_c3", instance(CR, [T((2,))], ((0, 1),), G2, roots=T((1,), F32))),
        ("collective_reduce_c3", instance(CR, [T((2,))], ((0, 1),), G2, roots=T((2,), SI32))),
        # a narrower body: v1.20's is_promotable lets f32 widen to f64, not narrow to f16
        ("collective_reduce_c4", instance(CR, [T((2,))], ((0, 1),), G2, body=add_body(element_type("f16")),
                                          results=[T((2,), element_type("f16"))])),
    ]


@pytest.mark.parametrize("label, op", reduce_breaks(), ids=lambda x: x if isinstance(x, str) else "")
def test_each_collective_reduce_constraint_breaks_alone(label, op):
    assert CR.violated(op) == [label]


def test_inference_gives_the_data_operands_types():
    op = instance(CB, [T((2, 3)), T((4,), I64)], ((0, 1),), G2, roots=T((2,), SI32))
    assert CB.infer(op) == {"results": [T((2, 3)), T((4,), I64)]}
    op = instance(CR, [T((2, 3), I64)], ((0, 1),), G2)
    assert CR.infer(op) == {"results": [T((2, 3), I64)]}


def test_the_zero_of_a_quantized_result_is_quantize_of_zero():
    """quantize(0) = round(0 / scale) + zero point, clamped to the storage bounds: by hand."""
    q = parse_quantized_type("!quant.uniform<i8:f32, 0.1:-3>")
    assert zeros(TensorType((2,), q)).tolist() == [-3, -3]
    q = parse_quantized_type("!quant.uniform<u8:f32, 0.5:200>")
    assert zeros(TensorType((1,), q)).tolist() == [200]
    assert zeros(T((2,), I64)).tolist() == [0, 0]


# ---------------------------------------------------------------- jaxlib, XLA, the interpreter
def _jaxlib_parse(text: str):
    from jax._src.interpreters import mlir as jm
    from jaxlib.mlir import ir
    with jm.make_ir_context(), ir.Location.unknown():
        return ir.Module.parse(text)


def test_jaxlib_reads_one_operand_collective_broadcast_only_and_no_collective_reduce():
    _jaxlib_parse(broadcast_example())
    two = ('func.func @main(%a: tensor<2xf32>, %r: tensor<1xi32>) -> tensor<2xf32> {\n'
           '  %0 = "stablehlo.collective_broadcast"(%a, %r) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, '
           'has_dynamic_root = true} : (tensor<2xf32>, tensor<1xi32>) -> tensor<2xf32>\n'
           '  "func.return"(%0) : (tensor<2xf32>) -> ()\n}\n')
    with pytest.raises(Exception, match="requires a single operand"):
        _jaxlib_parse(two)
    parse_program(module(two, G2))   # v1.20 (I1, C4): variadic operands with dynamic roots
    with pytest.raises(Exception, match="unregistered operation 'stablehlo.collective_reduce'"):
        _jaxlib_parse(reduce_example())


def test_xla_has_no_cpu_kernel_for_collective_broadcast_nor_the_op_collective_reduce():
    from shlo_conform.backends.base import Rejected, load_backend
    xla = load_backend("xla")
    with pytest.raises(Rejected, match="collective-broadcast` is not supported by XLA:CPU"):
        xla.compile_grid(module(broadcast_program(G2, 0, ((1, 0),)), G2), G2)
    with pytest.raises(Rejected, match="unregistered operation 'stablehlo.collective_reduce'"):
        xla.compile_grid(module(reduce_example(), G4), G4)


def test_the_interpreter_broadcasts_as_the_oracle_states():
    from shlo_conform.backends.base import Unsupported, load_backend
    interp = load_backend("interpreter")
    text = module(broadcast_program(G2, 0, ((1, 0),)), G2)
    if CPUS < 2:   # run_parallel starts one process per CPU (backends/interpreter.py)
        with pytest.raises(Unsupported, match="run_parallel"):
            interp.compile_grid(text, G2)
        return
    xs = _per_process(G2, 11)
    got = interp.run_grid(interp.compile_grid(text, G2), [[x] for x in xs])
    want = execute_on_grid(parse_program(text), G2, [[x] for x in xs])
    for g, w in zip(got, want):
        assert g[0].view(np.uint32).tolist() == w[0].array().view(np.uint32).tolist() == xs[1].view(np.uint32).tolist()


# ---------------------------------------------------------------- the generator stream
def _flat_groups(case) -> list:
    """The case's process groups as flattened ids, worked out from its text (not spec/grid.py)."""
    import re
    text = case.mlir
    rows = re.search(r"replica_groups = dense<\[(.*?)\]> : tensor<", text).group(1)
    groups = [[int(x) for x in r.split(",")] for r in re.findall(r"\[([^\[\]]*)\]", rows)]
    handle = re.search(r"channel_handle<handle = (-?\d+)", text)
    channel = int(handle.group(1)) if handle else 0
    R, P = case.grid.num_replicas, case.grid.num_partitions
    if channel > 0:   # cross_partition
        return [[r * P + p for p in g] for g in groups for r in range(R)]
    return [[r * P + p for r in g] for g in groups for p in range(P)]


@pytest.mark.long   # 6 s: z3 solves every skeleton's shapes and each constraint's negations
def test_the_stream_broadcasts_as_numpy_says_and_names_every_type_constraint():
    cases = stream.cases(CB, 0)
    invalid = {c.violates for c in cases if c.kind == "invalid"}
    assert invalid == {f"collective_broadcast_c{k}" for k in range(1, 6)}   # C6 is on values: no program breaks it
    checked = 0
    for c in cases:
        if c.kind != "value" or c.grid is None or "dynamic root" in c.note:
            continue
        groups = _flat_groups(c)
        ins = [[v.array() for v in per] for per in c.grid.inputs]
        for i, expected in enumerate(c.grid.expected):
            g = next((g for g in groups if i in g), None)
            for k, e in enumerate(expected):
                want = ins[g[0]][k] if g is not None else np.zeros_like(ins[i][k])
                assert e.bits.tolist() == _bits(want, e.type.element_type).tolist(), (c.id, i, k)
        checked += 1
    assert checked >= 30


def _bits(a, et):
    from shlo_conform.spec.types import to_bits
    return to_bits(np.asarray(a), et)


@pytest.mark.long   # 10 s, as above
def test_the_stream_reduces_on_the_source_only_and_names_every_constraint():
    cases = stream.cases(CR, 0)
    assert {c.violates for c in cases if c.kind == "invalid"} == {f"collective_reduce_c{k}" for k in range(1, 5)}
    checked = 0
    for c in cases:
        if c.kind != "value" or c.grid is None or "dynamic root" in c.note:
            continue
        groups = _flat_groups(c)
        for i, expected in enumerate(c.grid.expected):
            g = next((g for g in groups if i in g), None)
            if g is None or g[0] != i:
                for e in expected:
                    assert not np.any(e.bits), (c.id, i)   # zeros: every bit clear
        checked += 1
    assert checked >= 20
