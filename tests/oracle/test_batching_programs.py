"""Gather and scatter with batching dims as JAX writes them (v1.20's
`operand_batching_dims` … `scatter_indices_batching_dims`): `jax.vmap` of
`x[i]` and the per-example gradient of it, lowered by JAX, read and run by
the oracle, held against numpy fancy indexing computed here — and XLA
agreeing with the oracle through `shlo-conform run`.

Values are small integers in f32, so every sum is exact and numpy's result
is the one value every update order gives."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import shlo_conform
from shlo_conform.cli import main
from shlo_conform.generators.expect import expected_outputs
from shlo_conform.suites.compare import compare

import jax

B, N, K, W = 4, 6, 5, 3


def _xs(*shape, seed=0):
    return np.random.default_rng(seed).integers(-8, 9, shape).astype(np.float32)


def _idx(*shape, hi=N, seed=1):
    return np.random.default_rng(seed).integers(0, hi, shape).astype(np.int32)


def take(x, i):
    return x[i]


def per_example_grad(x, i):
    return jax.grad(lambda x, i: (x[i] ** 2).sum())(x, i)


# name -> (function to vmap, inputs, numpy truth)
PROGRAMS = {
    "vmapped x[i]": (take, (_xs(B, N), _idx(B)), lambda xs, idx: xs[np.arange(B), idx]),
    "vmapped x[i] over rows": (take, (_xs(B, N, W), _idx(B)), lambda xs, idx: xs[np.arange(B), idx]),
    "vmapped x[i], several i": (take, (_xs(B, N), _idx(B, K)),
                                lambda xs, idx: xs[np.arange(B)[:, None], idx]),
    "per-example gradient (scatter-add)": (per_example_grad, (_xs(B, N), _idx(B, K)), None),
}


def _grad_truth(xs, idx):
    g = np.zeros_like(xs)
    rows = np.repeat(np.arange(B), idx.shape[1])
    np.add.at(g, (rows, idx.ravel()), 2 * xs[rows, idx.ravel()])
    return g


def _lowered(f, args) -> str:
    return jax.jit(jax.vmap(f)).lower(*args).as_text()


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_jax_batching_program_against_numpy(name):
    f, args, truth = PROGRAMS[name]
    text = _lowered(f, args)
    want = (truth or _grad_truth)(*args)
    op = "scatter" if truth is None else "gather"
    assert f'"stablehlo.{op}"' in text and ("input_batching_dims" if op == "scatter" else "operand_batching_dims") in text
    (got,) = shlo_conform.run_program(text, list(args), backend="oracle")
    assert got.dtype == want.dtype and np.array_equal(got, want)
    (expected,) = expected_outputs(text, list(args))
    assert compare(expected, want).ok
    assert not compare(expected, want + 1).ok   # the expectation pins the values down


def test_the_gradient_scatter_adds_repeated_indices():
    """The truth above is not vacuous: an example with a repeated index gets
    the sum of its updates there (numpy's `add.at`, not plain assignment)."""
    _, (xs, idx), _ = PROGRAMS["per-example gradient (scatter-add)"]
    assert any(len(set(row)) < len(row) for row in idx.tolist())
    assert "stablehlo.add" in _lowered(per_example_grad, (xs, idx))
    plain = np.zeros_like(xs)
    plain[np.repeat(np.arange(B), K), idx.ravel()] = 2 * xs[np.repeat(np.arange(B), K), idx.ravel()]
    assert not np.array_equal(plain, _grad_truth(xs, idx))


@pytest.mark.parametrize("name", ["vmapped x[i]", "per-example gradient (scatter-add)"])
def test_xla_agrees_with_the_oracle(name, tmp_path, capsys):
    f, args, _ = PROGRAMS[name]
    (tmp_path / "prog.mlir").write_text(_lowered(f, args))
    np.savez(tmp_path / "in.npz", *args)
    rc = main(["run", str(tmp_path / "prog.mlir"), "--backend=xla,oracle", "--inputs", str(tmp_path / "in.npz")])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "agrees" in out


# --------------------------------------------------------------------------
# v1.20's Examples (spec.md, sections gather and scatter): the op as printed, read by the oracle
# --------------------------------------------------------------------------

UPSTREAM = Path(__file__).resolve().parents[2] / "spec" / "seed" / "v1.20" / "spec.md"   # v1.20's text, stored

GATHER_EXAMPLE = '''%result = "stablehlo.gather"(%operand, %start_indices) {
  dimension_numbers = #stablehlo.gather<
    offset_dims = [3, 4],
    collapsed_slice_dims = [1],
    operand_batching_dims = [0],
    start_indices_batching_dims = [1],
    start_index_map = [2, 1],
    index_vector_dim = 3>,
  slice_sizes = array<i64: 1, 1, 2, 2>,
  indices_are_sorted = false
} : (tensor<2x3x4x2xi32>, tensor<2x2x3x2xi64>) -> tensor<2x2x3x2x2xi32>'''

SCATTER_EXAMPLE = '''%result = "stablehlo.scatter"(%input, %scatter_indices, %update) ({
  ^bb0(%arg0: tensor<i64>, %arg1: tensor<i64>):
    %0 = "stablehlo.add"(%arg0, %arg1) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    "stablehlo.return"(%0) : (tensor<i64>) -> ()
}) {
  scatter_dimension_numbers = #stablehlo.scatter<
    update_window_dims = [3, 4],
    inserted_window_dims = [1],
    input_batching_dims = [0],
    scatter_indices_batching_dims = [1],
    scatter_dims_to_operand_dims = [2, 1],
    index_vector_dim = 3>,
  indices_are_sorted = false,
  unique_indices = false
} : (tensor<2x3x4x2xi64>, tensor<2x2x3x2xi64>, tensor<2x2x3x2x2xi64>) -> tensor<2x3x4x2xi64>'''

EXAMPLE_INDICES = np.array([[[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]],
                            [[[0, 0], [2, 1], [2, 2]], [[1, 2], [0, 1], [1, 0]]]], dtype=np.int64)


def _main(op_text: str, args: list[tuple[str, str]], result: str) -> str:
    params = ", ".join(f"%{n}: {t}" for n, t in args)
    return f"func.func @main({params}) -> {result} {{\n{op_text}\nfunc.return %result : {result}\n}}\n"


def test_the_examples_are_v1_20s():
    text = UPSTREAM.read_text(encoding="utf-8")
    assert GATHER_EXAMPLE in text and SCATTER_EXAMPLE in text


def test_gather_example_through_the_oracle():
    program = _main(GATHER_EXAMPLE, [("operand", "tensor<2x3x4x2xi32>"), ("start_indices", "tensor<2x2x3x2xi64>")],
                    "tensor<2x2x3x2x2xi32>")
    operand = np.arange(1, 49, dtype=np.int32).reshape(2, 3, 4, 2)
    (got,) = shlo_conform.run_program(program, [operand, EXAMPLE_INDICES], backend="oracle")
    assert got.tolist() == [
        [[[[1, 2], [3, 4]], [[3, 4], [5, 6]], [[13, 14], [15, 16]]],
         [[[33, 34], [35, 36]], [[35, 36], [37, 38]], [[41, 42], [43, 44]]]],
        [[[[1, 2], [3, 4]], [[13, 14], [15, 16]], [[21, 22], [23, 24]]],
         [[[43, 44], [45, 46]], [[33, 34], [35, 36]], [[27, 28], [29, 30]]]]]


def test_scatter_example_through_the_oracle():
    program = _main(SCATTER_EXAMPLE, [("input", "tensor<2x3x4x2xi64>"), ("scatter_indices", "tensor<2x2x3x2xi64>"),
                                      ("update", "tensor<2x2x3x2x2xi64>")], "tensor<2x3x4x2xi64>")
    inp = np.arange(1, 49, dtype=np.int64).reshape(2, 3, 4, 2)
    (got,) = shlo_conform.run_program(program, [inp, EXAMPLE_INDICES, np.ones((2, 2, 3, 2, 2), np.int64)],
                                      backend="oracle")
    assert got.tolist() == [
        [[[3, 4], [6, 7], [6, 7], [7, 8]], [[9, 10], [11, 12], [15, 16], [17, 18]],
         [[17, 18], [19, 20], [22, 23], [24, 25]]],
        [[[25, 26], [28, 29], [30, 31], [31, 32]], [[35, 36], [38, 39], [38, 39], [39, 40]],
         [[41, 42], [44, 45], [46, 47], [47, 48]]]]
