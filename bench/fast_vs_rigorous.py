"""The oracle's vectorised fast path (oracle/fast.py) against its rigorous
path (oracle/rigorous.py, arb), per real function and target format.

Inputs: every finite value of the 8- and 16-bit formats for unary
functions (exhaustive: at most 65536, which is every input there is), N
random bit patterns for f32 and f64 (f64 results are checked in the
long double path), N random pairs of format values for the
binary functions (atan2, hypot, signed_power).  Rows "f64 dd": the
double-double pass for f64 results (oracle/ddfast.py) on N inputs of
fastcheck.dd_inputs (uniform over its domain and over [-20, 20], random
magnitudes and bit patterns, and the N/8 nearest a rounding boundary of
4N), each decision held against arb.  Prints per function and
format the inputs checked, the share the fast path decides (and the count
it hands on to the rigorous path: overflow past float64, f8E4M3FN's NaN
overflow, ends too close to a rounding boundary), the mismatches
against the rigorous path (must be 0), and the largest relative error of
numpy's float64 value seen against arb, with the factor left to the bound
fast.FAST_REL_ERROR assumes.  Exits 1 on any mismatch or bound breach.

    .venv/bin/python bench/fast_vs_rigorous.py [N=1000000] [--dd] [function ...]   (--dd: the "f64 dd" rows alone)
"""
from __future__ import annotations

import sys
import time

import numpy as np

from shlo_conform.oracle import ddfast, fastcheck
from shlo_conform.oracle.fast import FAST_REL_ERROR, LD_REL_ERROR
from shlo_conform.oracle.real_functions import TABLE


def main(argv: list[str]) -> int:
    n = int(float(argv[0])) if argv and argv[0][0].isdigit() else 1_000_000
    dd_only = "--dd" in argv
    names = [a for a in argv if not a[0].isdigit() and a != "--dd"]
    rng = np.random.default_rng(20261122)
    bad = 0
    print(f"{'function':<14}{'format':<10}{'inputs':>9}{'decided':>9}{'handed on':>10}{'mismatch':>9}"
          f"{'max rel err':>13}{'margin':>8}{'secs':>7}")
    for f, rf in TABLE.items():
        if names and rf.name not in names:
            continue
        runs = [(fmt.name, lambda fmt=fmt: fastcheck.check(f, fmt, fastcheck.inputs(f, fmt, n, rng)))
                for fmt in fastcheck.FORMATS]
        runs = [] if dd_only else runs
        if rf.name in ddfast.KERNELS:
            runs.append(("f64 dd", lambda: fastcheck.check_dd(f, fastcheck.dd_inputs(f, n, rng))))
        for _, run in runs:
            t0 = time.perf_counter()
            r = run()
            if r is None:   # no evaluation of f for that format (scipy's f64; no double-double kernel)
                continue
            margin = r.bound / r.worst_rel_error if r.worst_rel_error else float("inf")
            bad += len(r.mismatches) + (margin < 16)
            print(f"{r.function:<14}{r.fmt:<10}{r.inputs:>9}{r.decided / max(r.inputs, 1):>9.2%}{r.inputs - r.decided:>10}"
                  f"{len(r.mismatches):>9}{r.worst_rel_error:>13.2e}{margin:>8.0f}{time.perf_counter() - t0:>7.1f}")
            for m in r.mismatches[:5]:
                print("   mismatch", m)
    print(f"bound assumed: {FAST_REL_ERROR:.2e} relative (2^-40; f64 results: long double, {LD_REL_ERROR:.2e} = 2^-58;"
          " 'f64 dd': oracle/ddfast.py's REL per function, max rel err = the largest share of its bound seen times REL);"
          " margin = bound / max error seen (must be >= 16); max rel err includes the reference's own radius")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
