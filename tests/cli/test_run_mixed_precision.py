"""`shlo-conform run` on JAX's mixed-precision dots: bf16 × bf16 → f32 and i8 × i8 → i32, XLA held against the oracle."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from shlo_conform.cli import main

import jax
import jax.numpy as jnp  # noqa: E402

MATMUL = (((1,), (0,)), ((), ()))


def _write(d, f, a, b, stored):
    (d / "prog.mlir").write_text(jax.jit(f).lower(a, b).as_text())
    np.savez(d / "in.npz", *stored)
    return d / "prog.mlir", d / "in.npz"


def test_a_bf16_dot_with_an_f32_result_agrees_on_xla(tmp_path, capsys):
    """bf16 inputs go into the npz as their bits (a.view(np.uint16)); the
    oracle states an f32 bound and XLA lands inside it: exit 0."""
    rng = np.random.default_rng(1)
    a = rng.uniform(-4, 4, (8, 32)).astype(ml_dtypes.bfloat16)
    b = rng.uniform(-4, 4, (32, 6)).astype(ml_dtypes.bfloat16)

    def f(a, b):
        return jax.lax.dot_general(a, b, MATMUL, preferred_element_type=jnp.float32)
    prog, inputs = _write(tmp_path, f, a, b, (a.view(np.uint16), b.view(np.uint16)))
    rc = main(["run", str(prog), "--backend=xla,oracle", "--inputs", str(inputs)])
    out = capsys.readouterr().out
    assert "@main(tensor<8x32xbf16>, tensor<32x6xbf16>)" in out
    assert "#0 tensor<8x6xf32>: bounded" in out
    xla = out[out.index("\nxla"):]
    assert "agrees" in xla and "DISAGREES" not in out
    assert rc == 0


def test_an_i8_dot_with_an_i32_result_agrees_exactly_on_xla(tmp_path, capsys):
    rng = np.random.default_rng(2)
    a = rng.integers(-128, 128, (4, 64)).astype(np.int8)
    b = rng.integers(-128, 128, (64, 3)).astype(np.int8)

    def f(a, b):
        return jax.lax.dot_general(a, b, MATMUL, preferred_element_type=jnp.int32)
    prog, inputs = _write(tmp_path, f, a, b, (a, b))
    rc = main(["run", str(prog), "--backend=xla,oracle", "--inputs", str(inputs)])
    out = capsys.readouterr().out
    assert "#0 tensor<4x3xi32>: exact" in out
    assert "agrees" in out[out.index("\nxla"):] and rc == 0
