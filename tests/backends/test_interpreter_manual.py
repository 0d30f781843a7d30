"""The reference interpreter runs what JAX lowers with `shard_map` / `pmap`
(issue 23, "programs from the wild"): the manual computation's body as the
program of each process, on its shards (backends/manual.py), through
`interpreter.run_parallel`.

Independent truth: each process's outputs are computed here with numpy
from its shards, by what the JAX primitive is documented to do (psum: the
sum of the shards; ppermute: the shard of the source process; ...), on
small integers so that every sum is exact in f32.  The oracle runs the
same programs on the same shards and must give the same values.  A grid
of 2 processes: run_parallel runs a process per CPU (backends/interpreter.py).
"""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from shlo_conform.backends.base import Rejected, Unsupported, load_backend
from shlo_conform.spec.grid import Grid

pytestmark = pytest.mark.xdist_group("interpreter-manual")

GRID = Grid(1, 2)

LOWER = r'''
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
import json, sys
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, PartitionSpec as P
try:
    from jax import shard_map
except ImportError:
    from jax.experimental.shard_map import shard_map
mesh = Mesh(np.array(jax.devices()[:2]), ("x",))
sm = lambda f: jax.jit(shard_map(f, mesh=mesh, in_specs=P("x"), out_specs=P("x")))
x, y = jnp.zeros((4, 2), jnp.float32), jnp.zeros((8, 2), jnp.float32)
two = jax.jit(shard_map(lambda a, b: (a - b, jax.lax.psum(jax.nn.relu(b), "x")), mesh=mesh,
                        in_specs=(P("x"), P("x")), out_specs=(P("x"), P("x"))))
out = {
 "psum": sm(lambda a: jax.lax.psum(a, "x")).lower(x).as_text(),
 "all_gather": sm(lambda a: jax.lax.all_gather(a, "x", tiled=True)).lower(x).as_text(),
 "ppermute": sm(lambda a: jax.lax.ppermute(a, "x", [(0, 1), (1, 0)])).lower(x).as_text(),
 "all_to_all": sm(lambda a: jax.lax.all_to_all(a, "x", 0, 0, tiled=True)).lower(y).as_text(),
 "psum_scatter": sm(lambda a: jax.lax.psum_scatter(a, "x", scatter_dimension=0, tiled=True)).lower(y).as_text(),
 "axis_index": sm(lambda a: a + jax.lax.axis_index("x").astype(jnp.float32)).lower(x).as_text(),
 "pmap_psum": jax.pmap(lambda a: jax.lax.psum(a, "i"), axis_name="i",
                       devices=jax.devices()[:2]).lower(jnp.zeros((2, 3), jnp.float32)).as_text(),
 "two_args_call": two.lower(x, x).as_text(),
}
jax.config.update("jax_use_shardy_partitioner", False)
out["gspmd_psum"] = sm(lambda a: jax.lax.psum(a, "x")).lower(x).as_text()
json.dump(out, sys.stdout)
'''


@pytest.fixture(scope="module")
def programs():
    """Lowered in a process of their own, with 2 host devices (XLA_FLAGS
    must be set before jax is imported)."""
    done = subprocess.run([sys.executable, "-c", LOWER], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def interpreter():
    return load_backend("interpreter")


def _halves(a):
    return np.split(a, 2, axis=0)


# name -> (shard shapes of one process, each process's outputs from every process's shards)
EXPECTED = {
    "psum": ([(2, 2)], lambda s: [[s[0][0] + s[1][0]]] * 2),
    "gspmd_psum": ([(2, 2)], lambda s: [[s[0][0] + s[1][0]]] * 2),
    "pmap_psum": ([(1, 3)], lambda s: [[s[0][0] + s[1][0]]] * 2),
    "all_gather": ([(2, 2)], lambda s: [[np.concatenate([s[0][0], s[1][0]])]] * 2),
    "ppermute": ([(2, 2)], lambda s: [[s[1 - j][0]] for j in range(2)]),
    "all_to_all": ([(4, 2)], lambda s: [[np.concatenate([_halves(s[0][0])[j], _halves(s[1][0])[j]])]
                                        for j in range(2)]),
    "psum_scatter": ([(4, 2)], lambda s: [[_halves(s[0][0] + s[1][0])[j]] for j in range(2)]),
    "axis_index": ([(2, 2)], lambda s: [[s[j][0] + j] for j in range(2)]),
    "two_args_call": ([(2, 2), (2, 2)],
                      lambda s: [[s[j][0] - s[j][1], np.maximum(s[0][1], 0) + np.maximum(s[1][1], 0)]
                                 for j in range(2)]),
}


def _shards(shapes, seed):
    rng = np.random.default_rng(seed)
    return [[rng.integers(-50, 50, shape).astype(np.float32) for shape in shapes] for _ in range(GRID.size)]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_interpreter_and_the_oracle_run_jax_manual_programs_on_their_shards(programs, interpreter, name):
    from shlo_conform.oracle.grid import execute_on_grid
    from shlo_conform.oracle.program import parse_program

    text = programs[name]
    assert ("SPMDFullToShardShape" if name.startswith("gspmd") else "sdy.manual_computation") in text
    shapes, expected = EXPECTED[name]
    shards = _shards(shapes, seed=len(name))
    want = expected(shards)
    got = interpreter.run_grid(interpreter.compile_grid(text, GRID), shards)
    oracle = execute_on_grid(parse_program(text), GRID, shards)
    for j in range(GRID.size):
        assert len(got[j]) == len(want[j]) == len(oracle[j])
        for k, w in enumerate(want[j]):
            assert got[j][k].dtype == np.float32 and np.array_equal(got[j][k], w), (name, j, k, got[j][k], w)
            assert np.array_equal(oracle[j][k].array(), w), (name, j, k, "oracle")


MESH_PROGRAM = (
    "module @m {{\n  sdy.mesh @mesh = <[{mesh}]>\n"
    "  func.func public @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {{\n"
    '    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{{"x"}}]>] out_shardings=[<@mesh, [{{"x"}}]>] '
    'manual_axes={{{manual}}} (%arg1: tensor<{shard}xf32>) {{\n'
    "      sdy.return %arg1 : tensor<{shard}xf32>\n    }} : (tensor<8xf32>) -> tensor<8xf32>\n"
    "    {tail}\n  }}\n}}\n")


def _mesh_program(mesh='"x"=2', manual='"x"', shard=4, tail="return %0 : tensor<8xf32>"):
    return MESH_PROGRAM.format(mesh=mesh, manual=manual, shard=shard, tail=tail)


def test_an_identity_body_returns_each_process_its_shard(interpreter):
    """A hand-written manual computation (the extraction does not rely on
    JAX's spelling): each process gets its own shard back."""
    shards = [[np.float32([1, 2, 3, 4])], [np.float32([5, 6, 7, 8])]]
    got = interpreter.run_grid(interpreter.compile_grid(_mesh_program(), GRID), shards)
    assert [g[0].tolist() for g in got] == [[1, 2, 3, 4], [5, 6, 7, 8]]


def test_a_computation_manual_over_some_axes_is_unsupported(interpreter):
    """The axes it leaves to the SPMD partitioner have no StableHLO semantics."""
    with pytest.raises(Unsupported, match=r"leaves mesh axes y to the SPMD partitioner"):
        interpreter.compile_grid(_mesh_program(mesh='"x"=2, "y"=1'), GRID)


def test_a_main_that_does_more_than_the_manual_computation_is_unsupported(interpreter):
    tail = ("%1 = stablehlo.add %0, %0 : tensor<8xf32>\n    return %1 : tensor<8xf32>")
    with pytest.raises(Unsupported, match=r"does more than hand its arguments to one sdy.manual_computation"):
        interpreter.compile_grid(_mesh_program(tail=tail), GRID)


def test_a_mesh_that_does_not_fit_the_grid_is_rejected(interpreter):
    with pytest.raises(Rejected, match=r"has 4 devices; the program runs on a 1×2 grid"):
        interpreter.compile_grid(_mesh_program(mesh='"x"=4', shard=2), GRID)


def test_programs_without_a_manual_computation_pass_unchanged(interpreter):
    from shlo_conform.backends.manual import per_process_text

    text = "func.func @main(%a: tensor<f32>) -> tensor<f32> {\n  return %a : tensor<f32>\n}\n"
    assert per_process_text(text, GRID, interpreter._ctx) == (text, None)
