"""Backends on a process grid (issue 23): `compile_grid` / `run_grid` of
XLA:CPU, the reference interpreter, IREE and the command protocol.

Independent truth: every expected value is computed here with numpy from
the seed's wording of each op (the process groups of each strategy written
out as literal lists per grid, not taken from spec/grid.py), on inputs
whose sums are exact in f32.  Each (op, grid) is compiled once.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

from shlo_conform.backends.base import Unsupported, load_backend
from shlo_conform.spec.grid import Grid

pytestmark = pytest.mark.xdist_group("grid-backends")   # one jax, one set of XLA compiles

FIXTURES = Path(__file__).parent / "fixtures"
GRID_IMPL = f"command:{sys.executable} {FIXTURES / 'grid_command_impl.py'}"
NUMPY_IMPL = f"command:{sys.executable} {FIXTURES / 'numpy_impl.py'}"
CPUS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)

X = "tensor<4xf32>"
CHANNEL = "channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>"
SUM = ("({\n  ^bb0(%l: tensor<f32>, %r: tensor<f32>):\n    %s = stablehlo.add %l, %r : tensor<f32>\n"
       "    stablehlo.return %s : tensor<f32>\n  })")
GRIDS = [(2, 1), (1, 2), (2, 2)]


def _dense(groups) -> str:
    return f"dense<{groups}> : tensor<{len(groups)}x{len(groups[0])}xi64>"


def _x(i: int) -> np.ndarray:
    """Process i's input: distinct per process, every sum exact in f32."""
    return np.float32([1, 2, 3, 4]) + 10 * i


def _group(groups, member):
    return next(g for g in groups if member in g)


def _permute_strategy(grid):
    """collective_permute and all_to_all: channel_id > 0 → cross_partition
    (used where there are partitions), else cross_replica."""
    return "cross_partition" if grid[1] > 1 else "cross_replica"


# --- the programs, and what the seed says each process gets -----------------------

# all_reduce, flattened_ids (channel + use_global_device_ids) and cross_replica (no channel)
FLAT_REDUCE = {(2, 1): [[1, 0]], (1, 2): [[0, 1]], (2, 2): [[0, 3], [2, 1]]}
REPLICA_REDUCE = {(2, 1): [[0, 1]], (1, 2): [[0]], (2, 2): [[0, 1]]}
# all_gather, flattened_ids: the order of a group is the order of the result
FLAT_GATHER = {(2, 1): [[1, 0]], (1, 2): [[1, 0]], (2, 2): [[3, 0], [1, 2]]}
# collective_permute: (source, target) pairs of replica ids (cross_replica) or partition ids (cross_partition)
PAIRS = {(2, 1): [[0, 1]], (1, 2): [[1, 0]], (2, 2): [[0, 1], [1, 0]]}
# all_to_all: groups of replica ids / partition ids, as for collective_permute
A2A = {(2, 1): [[0, 1]], (1, 2): [[1, 0]], (2, 2): [[0, 1]]}
# reduce_scatter, flattened_ids
FLAT_SCATTER = {(2, 1): [[0, 1]], (1, 2): [[1, 0]], (2, 2): [[0, 1, 2, 3]]}


def program(op: str, grid) -> str:
    """The program as suite cases write it: a module that states its grid."""
    return (f"module @{op} attributes {{mhlo.num_partitions = {grid[1]} : i32, mhlo.num_replicas = {grid[0]} : i32}} {{\n"
            + _main(op, grid) + "}\n")


def _main(op: str, grid) -> str:
    R, P = grid
    if op == "all_reduce":
        return (f"func.func @main(%x: {X}) -> ({X}, {X}, tensor<ui32>, tensor<ui32>) {{\n"
                f'  %0 = "stablehlo.all_reduce"(%x) <{{{CHANNEL}, replica_groups = {_dense(FLAT_REDUCE[grid])}, '
                f"use_global_device_ids}}> {SUM} : ({X}) -> {X}\n"
                f'  %1 = "stablehlo.all_reduce"(%x) <{{replica_groups = {_dense(REPLICA_REDUCE[grid])}}}> {SUM} '
                f": ({X}) -> {X}\n"
                "  %2 = stablehlo.replica_id : tensor<ui32>\n  %3 = stablehlo.partition_id : tensor<ui32>\n"
                f"  return %0, %1, %2, %3 : {X}, {X}, tensor<ui32>, tensor<ui32>\n}}\n")
    if op == "all_gather":
        n = len(FLAT_GATHER[grid][0])
        return (f"func.func @main(%x: {X}) -> tensor<{4 * n}xf32> {{\n"
                f'  %0 = "stablehlo.all_gather"(%x) <{{all_gather_dim = 0 : i64, {CHANNEL}, '
                f"replica_groups = {_dense(FLAT_GATHER[grid])}, use_global_device_ids}}> "
                f": ({X}) -> tensor<{4 * n}xf32>\n  return %0 : tensor<{4 * n}xf32>\n}}\n")
    channel = f"{CHANNEL}, " if _permute_strategy(grid) == "cross_partition" else ""
    if op == "collective_permute":
        return (f"func.func @main(%x: {X}) -> {X} {{\n"
                f'  %0 = "stablehlo.collective_permute"(%x) <{{{channel}source_target_pairs = {_dense(PAIRS[grid])}}}> '
                f": ({X}) -> {X}\n  return %0 : {X}\n}}\n")
    if op == "all_to_all":
        return (f"func.func @main(%x: {X}) -> {X} {{\n"
                f'  %0 = "stablehlo.all_to_all"(%x) <{{{channel}concat_dimension = 0 : i64, '
                f"replica_groups = {_dense(A2A[grid])}, split_count = 2 : i64, split_dimension = 0 : i64}}> "
                f": ({X}) -> {X}\n  return %0 : {X}\n}}\n")
    if op == "reduce_scatter":
        n = len(FLAT_SCATTER[grid][0])
        return (f"func.func @main(%x: {X}) -> tensor<{4 // n}xf32> {{\n"
                f'  %0 = "stablehlo.reduce_scatter"(%x) <{{{CHANNEL}, replica_groups = {_dense(FLAT_SCATTER[grid])}, '
                f"scatter_dimension = 0 : i64, use_global_device_ids}}> {SUM} : ({X}) -> tensor<{4 // n}xf32>\n"
                f"  return %0 : tensor<{4 // n}xf32>\n}}\n")
    raise KeyError(op)


def expected(op: str, grid) -> list[list[np.ndarray]]:
    """Each process's results, flattened id order, by the seed's semantics."""
    R, P = grid
    out = []
    for i in range(R * P):
        r, p = divmod(i, P)
        if op == "all_reduce":
            flat = sum(_x(j) for j in _group(FLAT_REDUCE[grid], i))
            cross = sum(_x(q * P + p) for q in _group(REPLICA_REDUCE[grid], r))
            out.append([flat, cross, np.uint32(r), np.uint32(p)])
        elif op == "all_gather":
            out.append([np.concatenate([_x(j) for j in _group(FLAT_GATHER[grid], i)])])
        elif op == "collective_permute":
            partitions = _permute_strategy(grid) == "cross_partition"
            me = p if partitions else r
            src = [s for s, t in PAIRS[grid] if t == me]
            if not src:
                out.append([np.zeros(4, np.float32)])
            else:
                out.append([_x(r * P + src[0]) if partitions else _x(src[0] * P + p)])
        elif op == "all_to_all":
            partitions = _permute_strategy(grid) == "cross_partition"
            me = p if partitions else r
            g = _group(A2A[grid], me)
            k = g.index(me)
            senders = [(r * P + m) if partitions else (m * P + p) for m in g]
            out.append([np.concatenate([np.split(_x(s), 2)[k] for s in senders])])
        elif op == "reduce_scatter":
            g = _group(FLAT_SCATTER[grid], i)
            out.append([np.split(sum(_x(j) for j in g), len(g))[g.index(i)]])
    return out


def _inputs(grid) -> list[list[np.ndarray]]:
    return [[_x(i)] for i in range(grid[0] * grid[1])]


def _same(got, want):
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert len(g) == len(w), f"process {i}"
        for k, (a, b) in enumerate(zip(g, w)):
            b = np.asarray(b)
            assert a.dtype == b.dtype and a.shape == b.shape, f"process {i} result {k}: {a.dtype}{a.shape}"
            np.testing.assert_array_equal(a, b, err_msg=f"process {i} result {k}")


OPS = ["all_reduce", "all_gather", "collective_permute", "all_to_all", "reduce_scatter"]


def test_the_expectations_follow_the_seed_on_one_worked_grid():
    """The hand semantics above, checked on 2×2 against values worked out
    on paper (so that a slip in `expected` cannot pass unnoticed)."""
    got = expected("all_reduce", (2, 2))
    assert got[1][0].tolist() == [32, 34, 36, 38]          # flattened group [2, 1]: x2 + x1
    assert got[1][1].tolist() == [42, 44, 46, 48]          # cross_replica, partition 1: x1 + x3
    assert expected("all_gather", (2, 2))[0][0].tolist() == [31, 32, 33, 34, 1, 2, 3, 4]   # group [3, 0]
    assert expected("collective_permute", (1, 2))[0][0].tolist() == [11, 12, 13, 14]      # pair 1 -> 0
    assert expected("collective_permute", (1, 2))[1][0].tolist() == [0, 0, 0, 0]         # nobody sends to 1
    assert expected("all_to_all", (1, 2))[1][0].tolist() == [11, 12, 1, 2]                 # group [1, 0], index 0
    assert expected("reduce_scatter", (2, 2))[2][0].tolist() == [72]                       # (3 + 13 + 23 + 33), index 2


# --- XLA:CPU -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def xla():
    return load_backend("xla")


@pytest.mark.parametrize("grid", GRIDS, ids=lambda g: f"{g[0]}x{g[1]}")
@pytest.mark.parametrize("op", OPS)
def test_xla_runs_hand_written_collectives_on_a_grid(xla, op, grid):
    ex = xla.compile_grid(program(op, grid), Grid(*grid))
    _same(xla.run_grid(ex, _inputs(grid)), expected(op, grid))


def test_xla_compiles_a_grid_as_jax_does(xla):
    """`num_replicas` × `num_partitions` and the device assignment [r][p]
    = device of flattened id r * P + p, each on its own device."""
    ex = xla.compile_grid(program("all_reduce", (2, 2)), Grid(2, 2))
    assert [d.id for d in ex.devices] == [0, 1, 2, 3]
    assert len({d.client for d in ex.devices}) == 1 and ex.devices[0].client is not xla._client
    with pytest.raises(ValueError, match="the grid 2×2 has 4 processes; inputs were given for 3"):
        xla.run_grid(ex, _inputs((2, 2))[:3])


def test_xla_runs_what_jax_lowers_with_shard_map(xla):
    """`jax.jit(shard_map(f, mesh)).lower(x).as_text()` on a 2×2 mesh of the
    adapter's grid devices: psum, all_gather, ppermute, all_to_all,
    psum_scatter and axis_index; each process's inputs and outputs are its
    shards."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, PartitionSpec as Spec

    try:
        from jax import shard_map
    except ImportError:   # older JAX
        from jax.experimental.shard_map import shard_map

    mesh = Mesh(np.array(xla.grid_devices(4), dtype=object).reshape(2, 2), ("x", "y"))

    def f(a):
        return (jax.lax.psum(a, "x"), jax.lax.all_gather(a, "y", tiled=True), jax.lax.ppermute(a, "y", [(0, 1), (1, 0)]),
                jax.lax.all_to_all(a, "x", 0, 0, tiled=True), jax.lax.psum_scatter(a, "y", tiled=True),
                jnp.full((1,), jax.lax.axis_index("x") * 10 + jax.lax.axis_index("y"), jnp.float32))

    spec = Spec(("x", "y"))
    lowered = jax.jit(shard_map(f, mesh=mesh, in_specs=spec, out_specs=(spec,) * 6, check_vma=False)).lower(
        jax.ShapeDtypeStruct((8,), jnp.float32))
    text = lowered.as_text()
    assert "sdy.manual_computation" in text and "mhlo.num_partitions = 4" in text
    shards = [np.float32([1, 2]) + 10 * i for i in range(4)]    # process i = mesh position (i // 2, i % 2)
    got = xla.run_grid(xla.compile_grid(text, Grid(1, 4)), [[s] for s in shards])
    for i in range(4):
        a, b = divmod(i, 2)
        x = lambda a_, b_: shards[2 * a_ + b_]   # noqa: E731
        want = [x(a, b) + x(1 - a, b), np.concatenate([x(a, 0), x(a, 1)]), x(a, 1 - b),
                np.float32([x(0, b)[a], x(1, b)[a]]), (x(a, 0) + x(a, 1))[b:b + 1], np.float32([10 * a + b])]
        _same([got[i]], [want])


def test_xla_declares_a_jit_with_shardings_unsupported_on_a_grid(xla):
    """`jax.jit(f, in_shardings=…, out_shardings=…)` on a 4-device mesh (no
    shard_map): XLA's partitioner hands each device a shard of an argument
    @main declares whole, so the spec's per-process reading (every process
    runs @main on the whole array) cannot be run: Unsupported, naming why,
    before any input is placed (before stop 56 the run fed the whole array
    and the worker died with SIGSEGV, "expected parameter 0 of size 512")."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as Spec
    mesh = Mesh(np.array(xla.grid_devices(4), dtype=object), ("x",))
    f = jax.jit(lambda a, w: jnp.tanh(a @ w), in_shardings=(NamedSharding(mesh, Spec("x")), NamedSharding(mesh, Spec())),
                out_shardings=NamedSharding(mesh, Spec("x")))
    text = f.lower(jax.ShapeDtypeStruct((16, 8), jnp.float32), jax.ShapeDtypeStruct((8, 4), jnp.float32)).as_text()
    assert "sdy.sharding" in text and "sdy.manual_computation" not in text
    with pytest.raises(Unsupported, match="shard of an argument the spec hands whole to every process"):
        xla.compile_grid(text, Grid(1, 4))


def test_single_device_compiles_are_untouched_by_grids(xla):
    """Grids use a client of their own: the adapter's one-device client (the
    one `jax.jit` uses, tests/backends/test_xla_as_jit.py) stays one device."""
    xla.grid_devices(4)
    assert xla._device.client.device_count() == 1 or xla._device.client is xla._client
    ex = xla.compile("func.func @main(%a: tensor<f32>) -> tensor<f32> {\n"
                     "  %0 = stablehlo.add %a, %a : tensor<f32>\n  return %0 : tensor<f32>\n}")
    assert xla.run(ex, [np.float32(2)])[0] == 4


# --- the reference interpreter -------------------------------------------------------

@pytest.fixture(scope="module")
def interpreter():
    return load_backend("interpreter")


@pytest.mark.parametrize("grid", GRIDS, ids=lambda g: f"{g[0]}x{g[1]}")
@pytest.mark.parametrize("op", ["all_reduce", "all_gather", "all_to_all"])
def test_the_interpreter_runs_collectives_through_run_parallel(interpreter, op, grid):
    n = grid[0] * grid[1]
    if n > CPUS:
        with pytest.raises(Unsupported, match=rf"on a grid of {n} processes .* with {CPUS} CPUs: run_parallel"):
            interpreter.compile_grid(program(op, grid), Grid(*grid))
        return
    ex = interpreter.compile_grid(program(op, grid), Grid(*grid))
    _same(interpreter.run_grid(ex, _inputs(grid)), expected(op, grid))


def test_the_interpreter_runs_collective_free_programs_on_any_grid(interpreter):
    """Past the CPU count only collectives deadlock: replica_id and
    partition_id run on a 2×2 grid whatever the machine."""
    text = ("func.func @main(%x: tensor<4xf32>) -> (tensor<ui32>, tensor<ui32>) {\n"
            "  %r = stablehlo.replica_id : tensor<ui32>\n  %p = stablehlo.partition_id : tensor<ui32>\n"
            "  return %r, %p : tensor<ui32>, tensor<ui32>\n}\n")
    got = interpreter.run_grid(interpreter.compile_grid(text, Grid(2, 2)), _inputs((2, 2)))
    assert [[int(a) for a in per] for per in got] == [[0, 0], [0, 1], [1, 0], [1, 1]]


def test_the_interpreter_runs_a_collective_without_a_grid_as_one_process(interpreter):
    """A case with no grid is the one process of a 1×1 grid: the
    interpreter runs replica_id and the collectives only inside
    run_parallel (elsewhere it aborts its process), so `run` goes there."""
    text = (
        f"func.func @main(%x: {X}) -> ({X}, tensor<ui32>) {{\n"
        f'  %0 = "stablehlo.all_reduce"(%x) <{{replica_groups = dense<[[0]]> : tensor<1x1xi64>}}> {SUM} : ({X}) -> {X}\n'
        f"  %1 = stablehlo.replica_id : tensor<ui32>\n  return %0, %1 : {X}, tensor<ui32>\n}}\n")
    ex = interpreter.compile(text)
    _same([interpreter.run(ex, [_x(3)])], [[_x(3), np.uint32(0)]])


def test_the_interpreter_declares_other_sdy_programs_unsupported(interpreter):
    """A shard_map program runs as its body (tests/backends/test_interpreter_manual.py);
    other sdy ops (a sharding constraint left to the partitioner) are not StableHLO."""
    text = ('module @jit_f attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {\n'
            '  sdy.mesh @mesh = <["x"=2]>\n'
            "  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
            '    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}]> : tensor<4xf32>\n'
            "    return %0 : tensor<4xf32>\n  }\n}\n")
    with pytest.raises(Unsupported, match=r"sdy\.mesh, sdy\.sharding_constraint is not StableHLO"):
        interpreter.compile_grid(text, Grid(1, 2))


# --- IREE ------------------------------------------------------------------------------

def test_iree_declares_grids_and_collectives_unsupported():
    iree = load_backend("iree")
    try:
        assert not iree.grid_capable
        with pytest.raises(Unsupported, match="iree runs no process grid: .*collectives not implemented"):
            iree.compile_grid(program("all_reduce", (2, 1)), Grid(2, 1))
        for op in ("all_gather", "all_reduce", "all_to_all", "collective_permute", "reduce_scatter", "replica_id"):
            assert "hal.channel.create" in iree.claims(op, "f32")
        assert iree.claims("partition_id", "ui32") is None   # compiles to the constant 0: right on a 1×1 grid
    finally:
        iree.close()


# --- the command protocol ---------------------------------------------------------------

@pytest.mark.parametrize("grid", [(2, 1), (1, 2)], ids=lambda g: f"{g[0]}x{g[1]}")
def test_a_command_implementation_runs_a_grid(grid):
    impl = load_backend(GRID_IMPL)
    try:
        ex = impl.compile_grid(program("all_reduce", grid), Grid(*grid))
        _same(impl.run_grid(ex, _inputs(grid)), expected("all_reduce", grid))
        # the same process still answers the protocol before grids
        one = impl.compile("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                           "  %0 = stablehlo.add %a, %a : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}")
        assert impl.run(one, [np.float32([1, -2])])[0].tolist() == [2, -4]
    finally:
        impl.close()


def test_an_implementation_that_does_not_announce_grids_is_unsupported_for_them():
    """numpy_impl.py speaks the protocol as it was before grids: its grid
    cases are `unsupported` with the reason, its other cases as before."""
    impl = load_backend(NUMPY_IMPL)
    try:
        with pytest.raises(Unsupported, match='does not announce process grids .*"grid": true'):
            impl.compile_grid(program("all_reduce", (2, 1)), Grid(2, 1))
        ex = impl.compile("func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {\n"
                          "  %0 = stablehlo.add %a, %b : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}")
        assert impl.run(ex, [np.float32([1, 2]), np.float32([3, 4])])[0].tolist() == [4, 6]
    finally:
        impl.close()


def test_a_hang_in_one_process_is_that_case_s_timeout_only(tmp_path):
    """Through the runner: the implementation's process 1 never arrives on
    the first grid run (`--hang-process=1 --once`): that case is a
    `timeout`, the worker and the implementation are killed, and the next
    case, on a fresh worker, passes."""
    from shlo_conform.pipeline.runner import Runner
    from shlo_conform.spec.expectation import Expectation
    from shlo_conform.spec.types import UI32, TensorType, element_type, to_bits
    from shlo_conform.suites.records import Case, GridData, TensorValue, case_id

    text = program("all_reduce", (2, 1))
    F32 = element_type("f32")
    t = TensorType((4,), F32)
    ids_type = TensorType((), UI32)

    def case(salt, scale):
        ins = [[TensorValue.of(_x(i) * scale, t)] for i in range(2)]
        want = []
        for i, outs in enumerate(expected("all_reduce", (2, 1))):
            want.append([Expectation(t, to_bits(np.float32(outs[0] * scale), F32), bit_exact=True),
                         Expectation(t, to_bits(np.float32(outs[1] * scale), F32), bit_exact=True),
                         Expectation(ids_type, to_bits(np.uint32(i), ids_type.element_type), bit_exact=True),
                         Expectation(ids_type, to_bits(np.uint32(0), ids_type.element_type), bit_exact=True)])
        return Case(id=case_id("all_reduce", "f32", text, [v for vs in ins for v in vs], salt=salt),
                    op="all_reduce", dtype="f32", kind="value", mlir=text, inputs=[], note="grid",
                    grid=GridData(2, 1, ins, want))

    first, second = case("a", 1), case("b", 2)
    runner = Runner(f"{GRID_IMPL} --hang-process=1 --once={tmp_path / 'hung'}", run_timeout=3.0, jobs=1,
                    log_dir=str(tmp_path))
    try:
        verdicts = {v.id: v for v in runner.run([first, second])}
    finally:
        runner.close()
    assert (tmp_path / "hung").exists()
    assert verdicts[first.id].verdict == "timeout", verdicts[first.id]
    assert verdicts[second.id].verdict == "pass", verdicts[second.id]
