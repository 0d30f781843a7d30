"""The f64 route's MPFR values (real_functions.TABLE[f].mpfr, gmpy2 in
binary64's context) against arb's proven enclosures (rigorous.evaluate),
per function that has an MPFR form.

Inputs per function, N in all: half random bit patterns of f64 within the
function's domain (every binade, subnormals, huge arguments), half "hard"
ones: moderate arguments whose long double value the fast path cannot
round (within 2^-58 of an f64 rounding boundary), which are exactly the
elements fast.mpfr_correct is asked for.  Prints the inputs, how many arb
decided (the rest it leaves undecided at 4096 bits, or has no finite ball
for), the mismatches (must be 0) and the time of each evaluator.  Exits 1
on any mismatch.

    .venv/bin/python bench/mpfr_vs_arb.py [N=100000] [function ...]
"""
from __future__ import annotations

import sys
import time

import numpy as np

from shlo_conform.oracle import fast, rigorous
from shlo_conform.oracle.real_functions import TABLE
from shlo_conform.spec.types import F64

DOMAIN = {"log": (1e-3, 1e3), "log1p": (-0.9, 1e3), "rSqrt": (1e-3, 1e3), "exp": (-745, 710),
          "expm1": (-40, 710)}


def _bit_patterns(rng, n: int) -> np.ndarray:
    v = rng.integers(0, 1 << 63, n, dtype=np.uint64) * 2 + rng.integers(0, 2, n, dtype=np.uint64)
    v = v.view(np.float64)
    return v[np.isfinite(v)]


def inputs(f, n: int, rng) -> list:
    name = TABLE[f].name
    nargs = 2 if name == "atan2" else 1
    rnd = [_bit_patterns(rng, n) for _ in range(nargs)]
    m = min(len(c) for c in rnd)
    rnd = [c[:m] for c in rnd]
    if name in ("log", "rSqrt"):
        rnd = [np.abs(rnd[0])]
    elif name == "log1p":
        rnd = [np.where(rnd[0] <= -1, -rnd[0], rnd[0])]
    rnd = [c[: n // 2] for c in rnd]
    lo, hi = DOMAIN.get(name, (-40, 40))
    hard: list = [np.zeros(0)] * nargs
    while len(hard[0]) < n - len(rnd[0]):
        cand = [rng.uniform(lo, hi, 20 * n) for _ in range(nargs)]
        evaluate = TABLE[f].numpy_for(np.longdouble)
        if evaluate is None:   # no long double pass: every element is MPFR's
            ok = np.zeros(len(cand[0]), dtype=bool)
        else:
            with np.errstate(all="ignore"):
                y = np.asarray(evaluate(*[c.astype(np.longdouble) for c in cand]), dtype=np.longdouble)
            ok, _ = fast.decide(y, F64)
        hard = [np.concatenate([h, c[~ok]]) for h, c in zip(hard, cand)]
    hard = [h[: n - len(rnd[0])] for h in hard]
    return [np.concatenate([r, h]) for r, h in zip(rnd, hard)]


def main(argv: list[str]) -> int:
    n = int(float(argv[0])) if argv and argv[0][0].isdigit() else 100_000
    names = [a for a in argv if not a[0].isdigit()]
    rng = np.random.default_rng(20261123)
    funcs = [f for f, rf in TABLE.items() if rf.mpfr is not None and (not names or rf.name in names)]
    if not funcs:
        print("no function has an MPFR form here (is gmpy2 installed?)")
        return 1
    bad = total = 0
    print(f"{'function':<10}{'inputs':>9}{'arb decided':>13}{'mismatch':>10}{'mpfr µs':>9}{'arb µs':>8}")
    for f in funcs:
        rf = TABLE[f]
        cols = [c.tolist() for c in inputs(f, n, rng)]
        rows = list(zip(*cols))
        t0 = time.perf_counter()
        got = [float(rf.mpfr(*a)) for a in rows]
        t1 = time.perf_counter()
        decided = mism = 0
        for a, g in zip(rows, got):
            z = rigorous.evaluate(f, a, F64)
            if z is None or not z[2]:
                continue
            decided += 1
            gb = int(np.float64(g).view(np.uint64))
            if gb != z[0] and not (np.isnan(g) and F64.is_nan_bits(z[0])):
                mism += 1
                if mism <= 5:
                    print("   mismatch", rf.name, a, g, hex(z[0]))
        t2 = time.perf_counter()
        bad += mism
        total += len(rows)
        print(f"{rf.name:<10}{len(rows):>9}{decided:>13}{mism:>10}{(t1 - t0) / len(rows) * 1e6:>9.1f}"
              f"{(t2 - t1) / len(rows) * 1e6:>8.1f}")
    print(f"{total} inputs in all; mismatches: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
