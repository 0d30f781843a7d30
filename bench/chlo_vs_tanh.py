"""Judging a CHLO function as mathematics against judging StableHLO's tanh:
the oracle's expectation for one program of 2^n elements each, in one
format, measured in the same run (DESIGN.md: performance claims are ratios
against a peer in the same format).

    .venv/bin/python bench/chlo_vs_tanh.py [FORMAT ...] [n_log2] [--only=NAME] [--rounds=R] [--peers]

FORMAT is f16, bf16, f32 (the default) or f64; several may be named, each
with its own tanh row.  Each program is lowered by JAX, read once
(parse_program) and executed on the same random inputs, uniform over the
function's usual domain (lgamma and digamma also over a range with
negative x, polygamma at n = 1..4); the time is the best of 3 runs of
`execute` after an untimed first one, which builds the tables the passes
build once a process (its time is printed as "first"), or the first run
alone where that takes over 20 s.  A CHLO op declared
in spec/chlo runs the same element-wise route as tanh: the whole-array
pass of fast.py on its vectorised evaluation (for f32, f16 and bf16 first
the compiled Taylor cells of oracle/chlo_compiled.py where the function
has them, then scipy's), and MPFR or arb for the elements it leaves (for f64 results of CHLO's functions a double-word
first pass of oracle/chlo_dd/ with a proven bound — Taylor cells for erf,
erfc, erf_inv, lgamma, digamma, polygamma and i1e, Euler–Maclaurin for
zeta — then oracle/chlo_long_double/'s long double kernels for what it
leaves, a double-word refinement where there is one (polygamma, zeta)
and an arb ball each before MPFR; tanh's is the double-double pass of
ddfast.py).

`--peers` adds the spec's other transcendental ops (one StableHLO op each
as JAX lowers it: exponential, log_plus_one, exponential_minus_one, sine,
cosine, tan, cbrt, rsqrt, atan2, power) in the same rounds, and with
--rounds a last table puts each CHLO function beside the slowest of them
of its arity (unary: tanh … rsqrt; binary: atan2, power): "as fast as the
spec's transcendental ops" read against the whole set, not only the
fastest (tanh), since the oracle's cost differs by op and by format (bf16
power: numpy's pow over 2^32 operand pairs, no per-value table).
"""
from __future__ import annotations

import sys
import time
import warnings

import numpy as np

FORMATS = ("f16", "bf16", "f32", "f64")


def _dtype(fmt: str):
    import ml_dtypes
    return {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}[fmt]


def cases(n: int, rng) -> list:
    """(name, jax function, argument arrays in float64) — the peer first."""
    import jax
    import jax.numpy as jnp
    sp = jax.scipy.special
    u = rng.uniform
    return [("stablehlo.tanh", jnp.tanh, [u(-5, 5, n)]),
            ("chlo.erf", sp.erf, [u(-5, 5, n)]),
            ("chlo.erfc", sp.erfc, [u(-4, 10, n)]),
            ("chlo.erf_inv", sp.erfinv, [u(-1, 1, n)]),
            ("chlo.lgamma (x > 0)", sp.gammaln, [u(0.01, 30, n)]),
            ("chlo.lgamma (x in -10..30)", sp.gammaln, [u(-10, 30, n)]),
            ("chlo.digamma (x > 0)", sp.digamma, [u(0.01, 30, n)]),
            ("chlo.digamma (x in -10..30)", sp.digamma, [u(-10, 30, n)]),
            ("chlo.polygamma (n 1..4, x > 0)", jax.lax.polygamma,
             [rng.integers(1, 5, n).astype(float), u(0.01, 30, n)]),
            ("chlo.zeta (x 1..10, q > 0)", jax.lax.zeta, [u(1, 10, n), u(0.01, 30, n)]),
            ("chlo.bessel_i1e", sp.i1e, [u(-30, 30, n)]),
            ("chlo.asin", jnp.arcsin, [u(-1, 1, n)])]


def spec_peers(n: int, rng) -> list:
    """The spec's transcendental ops beside tanh, (name, function, args)."""
    import jax
    import jax.numpy as jnp
    u = rng.uniform
    return [("stablehlo.exponential", jnp.exp, [u(-5, 5, n)]),
            ("stablehlo.log_plus_one", jnp.log1p, [u(-0.5, 5, n)]),
            ("stablehlo.exponential_minus_one", jnp.expm1, [u(-5, 5, n)]),
            ("stablehlo.sine", jnp.sin, [u(-5, 5, n)]),
            ("stablehlo.cosine", jnp.cos, [u(-5, 5, n)]),
            ("stablehlo.tan", jnp.tan, [u(-5, 5, n)]),
            ("stablehlo.cbrt", jnp.cbrt, [u(-5, 5, n)]),
            ("stablehlo.rsqrt", jax.lax.rsqrt, [u(0.01, 5, n)]),
            ("stablehlo.atan2", jnp.arctan2, [u(-5, 5, n), u(-5, 5, n)]),
            ("stablehlo.power", jnp.power, [u(0.01, 30, n), -u(1, 10, n)])]


def _time(program, args, execute) -> tuple:
    """(best of 3 runs after a first one, the first run's time)."""
    t0 = time.perf_counter()
    execute(program, args)
    first = time.perf_counter() - t0
    if first > 20:
        return first, first
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        execute(program, args)
        best = min(best, time.perf_counter() - t0)
    return best, first


def _programs(fmt: str, n_log2: int, only: str, peers: bool = False) -> list:
    """(name, program, arguments in the format), tanh first, then the
    spec's peers where asked."""
    import jax
    from shlo_conform.oracle.program import parse_program
    jax.config.update("jax_enable_x64", True)
    dt = _dtype(fmt)
    out = []
    rows = cases(1 << n_log2, np.random.default_rng(0))
    if peers:
        rows[1:1] = spec_peers(1 << n_log2, np.random.default_rng(1))
    for name, f, args in rows:
        if out and only and only not in name and not name.startswith("stablehlo."):
            continue
        xs = [a.astype(dt) for a in args]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append((name, parse_program(jax.jit(f).lower(*xs).as_text()), xs))
    return out


def run(fmt: str, n_log2: int, only: str = "", peers: bool = False) -> None:
    from shlo_conform.oracle.program import execute
    base = None
    for name, program, xs in _programs(fmt, n_log2, only, peers):
        t, first = _time(program, xs, execute)
        base = base or t
        print(f"{name:32} 2^{n_log2} {fmt:4}: {t:8.3f} s   ratio to tanh {t / base:7.2f}   (first {first:6.2f} s)",
              flush=True)


def run_interleaved(fmt: str, n_log2: int, only: str, rounds: int, peers: bool = False) -> None:
    """Every program once a round, `rounds` rounds after an untimed one,
    each row its least CPU time (time.process_time: this process's, so
    another's load counts less), so that a change of the machine's load
    between rows hits tanh's row too: on a shared machine the plain run's
    ratios moved by 2x from run to run, these by a few %."""
    from shlo_conform.oracle.program import execute
    progs = _programs(fmt, n_log2, only, peers)
    first = []
    for _, program, xs in progs:
        t0 = time.perf_counter()
        execute(program, xs)
        first.append(time.perf_counter() - t0)
    best = [float("inf")] * len(progs)
    for _ in range(rounds):
        for i, (_, program, xs) in enumerate(progs):
            t0 = time.process_time()
            execute(program, xs)
            best[i] = min(best[i], time.process_time() - t0)
    for (name, _, _), t, f in zip(progs, best, first):
        print(f"{name:32} 2^{n_log2} {fmt:4}: {t:8.3f} s CPU   ratio to tanh {t / best[0]:7.2f}   "
              f"(first {f:6.2f} s)", flush=True)
    if peers:
        _beside_slowest(fmt, [(name, len(xs), t) for (name, _, xs), t in zip(progs, best)])


def _beside_slowest(fmt: str, rows: list) -> None:
    """Each CHLO row's time over the slowest spec op of its arity
    (<= 1: as fast as a transcendental op the spec itself has)."""
    slowest = {}
    for name, arity, t in rows:
        if name.startswith("stablehlo.") and t > slowest.get(arity, ("", 0.0))[1]:
            slowest[arity] = (name, t)
    for name, arity, t in rows:
        if name.startswith("chlo.") and arity in slowest:
            peer, pt = slowest[arity]
            print(f"{name:32} {fmt:4}: {t / pt:5.2f} x the slowest spec op of arity {arity} ({peer})",
                  flush=True)


def main(argv: list) -> None:
    """FORMAT ... [n_log2] [--only=NAME] [--rounds=R: interleaved rounds, `run_interleaved`] [--peers]."""
    fmts = [a for a in argv if a in FORMATS] or ["f32"]
    nums = [a for a in argv if a.isdigit()]
    only = next((a[len("--only="):] for a in argv if a.startswith("--only=")), "")
    rounds = int(next((a[len("--rounds="):] for a in argv if a.startswith("--rounds=")), "0"))
    for fmt in fmts:
        if rounds:
            run_interleaved(fmt, int(nums[0]) if nums else 20, only, rounds, "--peers" in argv)
        else:
            run(fmt, int(nums[0]) if nums else 20, only, "--peers" in argv)


if __name__ == "__main__":
    main(sys.argv[1:])
