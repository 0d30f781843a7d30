"""The oracle's f64 results with its double-double pass (oracle/ddfast.py)
against the route it had before (long double and MPFR alone), bit for bit,
on whole programs, in one run.

Per op, 2^20 f64 inputs (--n): a quarter uniform over the bench range
(oracle_vs_interpreter's), a quarter random bit patterns (NaN, ±inf,
subnormals, huge arguments included), a quarter with random magnitudes
2^-60 .. 2^12 and signs, and a quarter of hard ones: ±0, ±inf, NaN, the
smallest subnormal and normal, the largest finite, each kernel's domain
ends and the points where its method changes, each with its 8 neighbours
on either side, and then the inputs nearest to a binary64 rounding
boundary among 2^21 uniform ones (those the double-double pass refuses
and those it decides with the least room).  Prints per op the elements
compared, the mismatches (must be 0: both routes prove their bits), the
share the double-double pass decides, and both routes' times.  Exits 1
on any mismatch.

    .venv/bin/python bench/dd_identity.py [--n 1048576] [op ...]
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

OPS = {"cosine": ("cos", -20, 20), "sine": ("sin", -20, 20), "tanh": ("tanh", -20, 20),
       "exponential": ("exp", -10, 10), "log": ("log", 1e-3, 100), "log_plus_one": ("log1p", -0.9, 100),
       "exponential_minus_one": ("expm1", -10, 10)}
EDGES = {"exp": [-708, 709, 709.78, -745.2, -745.1, 0.0027, 0.17, 0.35, 1e-300],
         "expm1": [-708, 709, 709.78, -37, -38, 0.0027, 0.17, 0.173, 0.347, 0.35, 1e-300],
         "log": [2.0 ** -1022, 2.0 ** -1022 * 0.5, 0.75, 1.5, 1 - 2.0 ** -8, 1 + 2.0 ** -8, 1.0, 2.0],
         "log1p": [-1.0, -1 + 2.0 ** -53, -0.5, 2.0 ** -8, -2.0 ** -8, 2.0 ** 1000, 1e-300, 0.5, 1.0],
         "sin": [2.0 ** 19, -2.0 ** 19, np.pi / 4, np.pi / 2, np.pi, 1 / 256, 3 / 256, 1e-300, 355.0, 103993.0],
         "cos": [2.0 ** 19, -2.0 ** 19, np.pi / 4, np.pi / 2, np.pi, 1 / 256, 3 / 256, 1e-300, 355.0, 103993.0],
         "tanh": [300.0, -300.0, 19.0, 20.0, 0.0014, 1e-300, 0.35]}
SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 2.0 ** -1022, 1.7976931348623157e308,
            -1.7976931348623157e308, 1.0, -1.0]


def _neighbours(v, k=8) -> list:
    out = []
    for x in v:
        lo = hi = np.float64(x)
        out.append(lo)
        for _ in range(k):
            with np.errstate(over="ignore"):
                lo, hi = np.nextafter(lo, -np.inf), np.nextafter(hi, np.inf)
            out += [lo, hi]
    return out


def inputs(name: str, lo: float, hi: float, n: int, rng) -> np.ndarray:
    from shlo_conform.oracle import ddfast
    q = n // 4
    uniform = rng.uniform(lo, hi, q)
    bits = rng.integers(0, 1 << 64, q, dtype=np.uint64).view(np.float64)
    mags = rng.choice([-1.0, 1.0], q) * np.exp2(rng.uniform(-60, 12, q))
    edges = [e * s for e in EDGES[name] for s in (1.0, -1.0)]
    hard = _neighbours(SPECIALS + edges)
    pool = rng.uniform(lo, hi, 1 << 21)
    h, l, m, ab, ok = ddfast.pair(name, pool)
    with np.errstate(all="ignore"):
        r = h + l
        e = (h - r) + l
        room = (np.spacing(np.abs(r)) / 2 - np.abs(e)) / np.abs(r)
    near = pool[np.argsort(np.where(ok, room, -np.inf))[: q - len(hard)]]
    x = np.concatenate([uniform, bits, mags, np.array(hard, dtype=np.float64), near])
    return x[:n]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 20)
    ap.add_argument("ops", nargs="*", default=list(OPS))
    a = ap.parse_args(argv)
    from shlo_conform.oracle import ddfast
    from shlo_conform.oracle.program import execute, parse_program
    rng = np.random.default_rng(20261128)
    bad = 0
    print(f"{'op':<24}{'inputs':>9}{'mismatch':>9}{'dd decides':>11}{'with dd s':>11}{'before s':>10}")
    for op in a.ops:
        name, lo, hi = OPS[op]
        x = inputs(name, lo, hi, a.n, rng)
        t = f"tensor<{len(x)}xf64>"
        text = (f"func.func @main(%x: {t}) -> {t} {{\n  %0 = \"stablehlo.{op}\"(%x) : ({t}) -> {t}\n"
                f"  \"func.return\"(%0) : ({t}) -> ()\n}}\n")
        prog = parse_program(text)
        t0 = time.perf_counter()
        new = execute(prog, [x])[0]
        t1 = time.perf_counter()
        saved = dict(ddfast.KERNELS)
        ddfast.KERNELS.clear()
        try:
            old = execute(prog, [x])[0]
        finally:
            ddfast.KERNELS.update(saved)
        t2 = time.perf_counter()
        nb, ob = np.asarray(new.bits).reshape(-1), np.asarray(old.bits).reshape(-1)
        diff = np.flatnonzero(nb != ob)
        same_record = new == old   # the whole record: bits, kind, tolerance, alternatives …
        decided = ddfast.evaluate(name, x)[0].mean()
        bad += len(diff) + (not same_record)
        print(f"{op:<24}{len(x):>9}{len(diff):>9}{decided:>11.3%}{t1 - t0:>11.3f}{t2 - t1:>10.3f}"
              + ("" if same_record else "  records differ"), flush=True)
        for i in diff[:5].tolist():
            print(f"   x = {x[i]!r}: with dd {hex(int(nb[i]))}, before {hex(int(ob[i]))}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
