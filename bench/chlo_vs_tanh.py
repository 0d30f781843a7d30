"""Judging a CHLO function as mathematics against judging StableHLO's tanh:
the oracle's expectation for one program of 2^20 f32 elements each, measured
in the same run (DESIGN.md: performance claims are ratios against a peer).

    .venv/bin/python bench/chlo_vs_tanh.py [n_log2]

Each program is read once (parse_program) and executed on the same random
inputs; the time is the best of 3 runs of `execute`.  A CHLO op declared in
spec/chlo runs the same element-wise route as tanh: the whole-array pass of
fast.py on its vectorised evaluation (scipy's for erf, lgamma, digamma …),
arb for the elements it leaves (lgamma near 1 and 2, x < 0 …).
"""
from __future__ import annotations

import sys
import time
import warnings

import numpy as np


def main(n_log2: int = 20) -> None:
    import jax
    import jax.numpy as jnp
    from shlo_conform.oracle.program import execute, parse_program
    sp = jax.scipy.special
    n = 1 << n_log2
    rng = np.random.default_rng(0)
    cases = [("stablehlo.tanh", jnp.tanh, rng.uniform(-5, 5, n)),
             ("chlo.erf", sp.erf, rng.uniform(-5, 5, n)),
             ("chlo.erfc", sp.erfc, rng.uniform(-4, 10, n)),
             ("chlo.lgamma (x > 0)", sp.gammaln, rng.uniform(0.01, 30, n)),
             ("chlo.lgamma (x in -10..30)", sp.gammaln, rng.uniform(-10, 30, n)),
             ("chlo.digamma (x > 0)", sp.digamma, rng.uniform(0.01, 30, n)),
             ("chlo.erf_inv", sp.erfinv, rng.uniform(-1, 1, n)),
             ("chlo.asin", jnp.arcsin, rng.uniform(-1, 1, n))]
    base = None
    for name, f, x in cases:
        x = x.astype(np.float32)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program = parse_program(jax.jit(f).lower(x).as_text())
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            execute(program, [x])
            best = min(best, time.perf_counter() - t0)
        base = base or best
        print(f"{name:28} 2^{n_log2} f32: {best:7.3f} s   ratio to tanh {best / base:5.2f}", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
