"""What the LAPACK-judging tests share: a JAX function lowered as `jax.jit`
lowers it, judged by the oracle and run on XLA; an output's verdict."""
from __future__ import annotations

import jax
import numpy as np

from shlo_conform.oracle.program import execute, parse_program
from shlo_conform.suites.compare import compare


DTYPES = [np.float32, np.float64, np.complex64, np.complex128]   # LAPACK's s, d, c, z


def rand(shape, dtype, rng):
    """Gaussian values of `dtype` (complex: both parts)."""
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def wide(x):
    """`x` in float64 or complex128."""
    return np.asarray(x).astype(np.complex128 if np.iscomplexobj(x) else np.float64)


def at_the_allowance(expectations, a, decompose, rng, direction=None, trials: int = 12) -> int:
    """Brute force over a backward-stability contract: `decompose(A + E)`
    (outputs in double, one per expectation), ‖E‖₂ at 0.9 of the allowance
    t·n·‖A‖₁·ε (f32's ε, t the first record's threshold) in random
    directions (`direction(rng, n)`, Gaussian by default), must pass every
    expectation each time; returns how many trials fail at 30 times the
    allowance — the caller asks for some, so the sampling reaches the edge."""
    n = a.shape[-1]
    thr = expectations[0].residual["threshold"]
    allowance = thr * n * np.abs(wide(a)).sum(axis=0).max() * 2.0 ** -24
    failed = 0
    for trial in range(trials):
        e = direction(rng, n) if direction else rng.standard_normal((n, n))
        e *= 1 / np.linalg.norm(e, 2)
        for scale in (0.9, 30.0):
            outs = decompose(wide(a) + scale * allowance * e)
            every = all(ok(x, np.asarray(o).astype(np.float32)) for x, o in zip(expectations, outs))
            if scale < 1:
                assert every, trial
            else:
                failed += not every
    return failed


def program(xla, f, args):
    """(the oracle's expectations, XLA's outputs) of `f` on `args`."""
    text = jax.jit(f).lower(*args).as_text()
    es = execute(parse_program(text), list(args))
    return es, [np.asarray(o) for o in xla.run(xla.compile(text), list(args))]


def ok(e, a) -> bool:
    """Does output `a` meet expectation `e`?"""
    return compare(e, np.asarray(a).astype(e.type.element_type.numpy)).ok


def ends(e) -> tuple[np.ndarray, np.ndarray]:
    """A "bounded" expectation's ends as float64, in its shape."""
    from shlo_conform.spec.types import from_bits
    et = e.type.element_type
    return (np.asarray(from_bits(e.lo, et)).astype(np.float64), np.asarray(from_bits(e.hi, et)).astype(np.float64))


def judged_by_range(e, module: str, truth: np.ndarray, got: np.ndarray) -> None:
    """`e` is a range stated by `module`, holding the exact `truth`, met by
    the backend's `got`, and refusing it negated and zeroed."""
    assert e.kind == "bounded" and module in e.why, e.why
    lo, hi = ends(e)
    assert ((lo <= truth) & (truth <= hi)).all()
    assert ok(e, got)
    for wrong in (-got, np.zeros_like(got)):
        assert not ok(e, wrong)
