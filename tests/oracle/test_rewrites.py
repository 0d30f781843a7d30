"""oracle/rewrites.py: the known compiler rewrites, and `run` naming them.

Independent truth: numpy's float32 division and multiplication (IEEE,
correctly rounded) for the reciprocal; mpmath at 24 bits, rounding to
nearest, for the fused multiply-add; XLA:CPU's own outputs for the naming."""
from __future__ import annotations

from pathlib import Path

import jax
import mpmath
import numpy as np

from shlo_conform.cli import main
from shlo_conform.oracle.program import execute, parse_program
from shlo_conform.oracle.rewrites import rewritten

WRONG = Path(__file__).parent.parent / "cli" / "fixtures" / "wrong.py"
X = np.random.default_rng(0).standard_normal(1000).astype(np.float32)


def _div_text():
    return jax.jit(lambda x: x / 0.9).lower(X).as_text()


def _loop(x, y):
    return jax.lax.fori_loop(0, 50, lambda i, v: v * y + x, x)


def test_division_by_a_constant_becomes_multiplication_by_its_rounded_reciprocal():
    [(rw, text, sites)] = [r for r in rewritten(_div_text()) if r[0].name == "reciprocal multiplication"]
    assert sites == 1 and "stablehlo.divide" not in text and "stablehlo.multiply" in text
    [e] = execute(parse_program(text), [X])
    recip = np.float32(1) / np.float32(0.9)
    assert np.array_equal(e.array(), X * recip)
    assert not np.array_equal(e.array(), X / np.float32(0.9))   # the rewrite changes values: 1 ULP here and there


def test_a_multiply_add_becomes_one_rounding_of_the_exact_value():
    a, b, c = (np.random.default_rng(k).standard_normal(64).astype(np.float32) for k in (1, 2, 3))
    text = jax.jit(lambda a, b, c: a * b + c).lower(a, b, c).as_text()
    [(rw, changed, sites)] = [r for r in rewritten(text) if r[0].name == "FMA contraction"]
    [e] = execute(parse_program(changed), [a, b, c])
    with mpmath.workprec(24):
        fused = np.array([float(mpmath.fadd(mpmath.fmul(float(p), float(q), exact=True), float(r)))
                          for p, q, r in zip(a, b, c)], np.float32)
    assert sites == 1 and np.array_equal(e.array(), fused)
    assert not np.array_equal(fused, a * b + c)   # two roundings differ from one somewhere


def test_nothing_to_rewrite_gives_nothing():
    text = jax.jit(lambda x, y: x / y).lower(X, X).as_text()   # not a constant divisor
    assert [r[0].name for r in rewritten(text)] == []


def test_run_names_the_rewrite_xla_applies_and_only_that(tmp_path, capsys):
    """XLA:CPU computes x/0.9 as x·fl(1/0.9) and contracts v*y + x in a loop
    into FMAs (docs/findings.md): every failing element is named so.  A
    backend that is simply 1 % off gets no such name."""
    (tmp_path / "d.mlir").write_text(_div_text())
    np.savez(tmp_path / "d.npz", X)
    rc = main(["run", str(tmp_path / "d.mlir"), "--backend=xla", "--inputs", str(tmp_path / "d.npz")])
    out = capsys.readouterr().out
    failing = int(out.split(" of 1000 elements differ")[0].rsplit(None, 1)[1])
    assert rc == 1 and failing > 100 and f"(reciprocal multiplication) x{failing}" in out, out
    rc = main(["run", str(tmp_path / "d.mlir"), f"--backend={WRONG}:Scaled", "--inputs", str(tmp_path / "d.npz")])
    out = capsys.readouterr().out
    assert rc == 1 and "reciprocal multiplication" not in out and "FMA" not in out
    y = np.full(1000, 0.999, np.float32)
    (tmp_path / "l.mlir").write_text(jax.jit(_loop).lower(X, y).as_text())
    np.savez(tmp_path / "l.npz", X, y)
    rc = main(["run", str(tmp_path / "l.mlir"), "--backend=xla", "--inputs", str(tmp_path / "l.npz")])
    out = capsys.readouterr().out
    failing = int(out.split(" of 1000 elements differ")[0].rsplit(None, 1)[1])
    assert rc == 1 and f"(FMA contraction) x{failing}" in out, out


def test_x_plus_c_minus_c_folded_to_x_is_named(tmp_path, capsys):
    """XLA folds (1 + |s|) − 1 into |s| (docs/findings.md): in f32, 1 + 1e-3·s
    rounds, so the spec's value differs from |s| almost everywhere."""
    s = X * np.float32(1e-3)
    f = jax.jit(lambda s: (1 + abs(s)) - 1)
    [(rw, changed, sites)] = [r for r in rewritten(f.lower(s).as_text()) if r[0].name == "algebraic simplification"]
    [e] = execute(parse_program(changed), [s])
    assert sites == 1 and np.array_equal(e.array(), np.abs(s))
    (tmp_path / "s.mlir").write_text(f.lower(s).as_text())
    np.savez(tmp_path / "s.npz", s)
    rc = main(["run", str(tmp_path / "s.mlir"), "--backend=xla", "--inputs", str(tmp_path / "s.npz")])
    out = capsys.readouterr().out
    failing = int(out.split(" of 1000 elements differ")[0].rsplit(None, 1)[1])
    assert rc == 1 and failing > 900 and f"(algebraic simplification) x{failing}" in out, out


def test_fast_min_max_is_named_for_xla_configured_so_and_only_then(tmp_path, capsys):
    """maximum/minimum as one compare and select: the rewritten program's
    value is numpy's `where(x < y, y, x)` (NaN only from x, x on a tie of
    ±0); XLA compiled with xla_cpu_enable_fast_min_max=true returns exactly
    that, and `run` names it; XLA as jax.jit compiles agrees."""
    x = np.array([np.nan, 1.0, -0.0, 2.0, np.nan, 0.0, 3.0], np.float32)
    y = np.array([1.0, np.nan, 0.0, -np.inf, np.nan, -0.0, 3.0], np.float32)
    f = jax.jit(lambda x, y: (jax.numpy.maximum(x, y), jax.numpy.minimum(x, y)))
    [(rw, changed, sites)] = [r for r in rewritten(f.lower(x, y).as_text()) if r[0].name == "fast min/max"]
    hi, lo = execute(parse_program(changed), [x, y])
    assert sites == 2
    assert np.array_equal(hi.array(), np.where(x < y, y, x), equal_nan=True)
    assert np.array_equal(lo.array(), np.where(x > y, y, x), equal_nan=True)
    assert np.signbit(hi.array()[2]) and not np.signbit(lo.array()[5])   # the tie keeps x: −0 and +0 unordered
    (tmp_path / "m.mlir").write_text(f.lower(x, y).as_text())
    np.savez(tmp_path / "m.npz", x, y)
    rc = main(["run", str(tmp_path / "m.mlir"), "--backend=xla:xla_cpu_enable_fast_min_max=true", "--inputs",
               str(tmp_path / "m.npz")])
    out = capsys.readouterr().out
    assert rc == 1 and out.count("(fast min/max) x2") == 2, out
    rc = main(["run", str(tmp_path / "m.mlir"), "--backend=xla", "--inputs", str(tmp_path / "m.npz")])
    assert rc == 0 and "fast min/max" not in capsys.readouterr().out
