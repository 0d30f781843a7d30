"""Our oracle against the StableHLO reference interpreter, on the same cases, in one run.

Prints, per op, the wall time of compile+run over the op's value cases of
suites/core for both, and the ratio oracle/interpreter.  Both run in this
process, one after the other, on identical inputs; the ratio is the claim,
not the seconds.  Left out, because they kill the interpreter's process:
integer divide/remainder (SIGFPE on division by zero) and complex compare
(LLVM abort).

    .venv/bin/python bench/oracle_vs_interpreter.py [op ...]
"""
from __future__ import annotations

import sys
import time

from shlo_conform.backends.base import Rejected, Unsupported, load_backend
from shlo_conform.suites.io import CORE, load_cases

DEFAULT_OPS = ["add", "multiply", "sqrt", "sine", "exponential", "atan2", "convert", "compare", "select",
               "transpose", "pad", "gather", "scatter", "dynamic_slice", "concatenate"]


def timed(backend, cases) -> float:
    t0 = time.perf_counter()
    for c in cases:
        try:
            backend.run(backend.compile(c.mlir), c.input_arrays())
        except (Rejected, Unsupported):
            pass
    return time.perf_counter() - t0


def main(ops: list[str]) -> None:
    oracle, interp = load_backend("oracle"), load_backend("interpreter")
    print(f"{'op':<14}{'cases':>7}{'oracle s':>11}{'interp s':>11}{'ratio':>8}")
    tot_o = tot_i = 0.0
    for op in ops:
        cases = [c for c in load_cases(CORE, {op}) if c.kind == "value"]
        if op in ("divide", "remainder"):
            cases = [c for c in cases if c.dtype.startswith(("f", "b", "c"))]
        if op == "compare":
            cases = [c for c in cases if not c.dtype.startswith("complex")]
        timed(interp, cases[:1])  # warm both up (imports, first compile)
        timed(oracle, cases[:1])
        o, i = timed(oracle, cases), timed(interp, cases)
        tot_o, tot_i = tot_o + o, tot_i + i
        print(f"{op:<14}{len(cases):>7}{o:>11.2f}{i:>11.2f}{o / i:>8.2f}")
    print(f"{'total':<14}{'':>7}{tot_o:>11.2f}{tot_i:>11.2f}{tot_o / tot_i:>8.2f}")
    print("ratio = oracle time / interpreter time on the same cases (lower is faster)")


if __name__ == "__main__":
    main(sys.argv[1:] or DEFAULT_OPS)
