"""Our oracle against the StableHLO reference interpreter, on the same cases, in one run.

Prints, per op, the wall time of compile+run over the op's value cases of
suites/core for both, and the ratio oracle/interpreter.  Both run in this
process, one after the other, on identical inputs; the ratio is the claim,
not the seconds.  Left out, because they kill the interpreter's process:
integer divide/remainder (SIGFPE on division by zero) and complex compare
(LLVM abort).

Then the throughput part: one program per (op, type) over a large random
tensor (N elements, nearly all distinct), best of 5 runs each; the ratio there is
interpreter time / oracle time, i.e. the oracle's throughput in units of the
interpreter's (higher is faster), for the transcendentals in f32, bf16,
f16 and the f8 types, for f64, and for data movement.

    .venv/bin/python bench/oracle_vs_interpreter.py [op ...]
    .venv/bin/python bench/oracle_vs_interpreter.py --throughput-only
"""
from __future__ import annotations

import sys
import time

import ml_dtypes
import numpy as np

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


N = 1 << 14
TRANSCENDENTALS = ["sine", "cosine", "tan", "exponential", "exponential_minus_one", "log", "log_plus_one",
                   "logistic", "tanh", "atan2", "power"]
NARROW = ["f32", "bf16", "f16", "f8E5M2", "f8E4M3FN"]
DATA_MOVEMENT = [("transpose", "{permutation = array<i64: 1, 0>}", (128, N // 128), (N // 128, 128)),
                 ("reverse", "{dimensions = array<i64: 0>}", (N,), (N,)),
                 ("broadcast_in_dim", "{broadcast_dimensions = array<i64: 0>}", (N // 4,), (N // 4, 4))]
_NP = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": ml_dtypes.bfloat16,
       "f8E5M2": ml_dtypes.float8_e5m2, "f8E4M3FN": ml_dtypes.float8_e4m3fn}
_NP["i32"], _NP["i8"] = np.int32, np.int8
INTEGER = [("add", "i32"), ("multiply", "i32"), ("xor", "i32"), ("maximum", "i8"), ("abs", "i32"), ("popcnt", "i32")]
_ARITY = {"atan2": 2, "power": 2, "add": 2, "multiply": 2, "xor": 2, "maximum": 2}


def _tensor(shape, dtype) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{dtype}>"


def _program(op: str, dtype: str, arity: int, attrs: str = "", shape=(N,), out_shape=None) -> str:
    t, r = _tensor(shape, dtype), _tensor(out_shape or shape, dtype)
    args = ", ".join(f"%arg{i}: {t}" for i in range(arity))
    uses = ", ".join(f"%arg{i}" for i in range(arity))
    return (f"func.func @main({args}) -> ({r}) {{\n"
            f"  %0 = \"stablehlo.{op}\"({uses}) {attrs} : ({', '.join([t] * arity)}) -> {r}\n"
            f"  \"func.return\"(%0) : ({r}) -> ()\n}}\n")


def _inputs(op: str, dtype: str, arity: int, shape, rng) -> list:
    """Distinct-ish values over a range where the op is defined (positive
    for log and for power's base, moderate for exp and power)."""
    if dtype.startswith("i"):
        # Values without overflow: an overflowing element is implementation-
        # defined, stated element by element by the op's fn (about 10x slower
        # than the interpreter where every element overflows).
        info = np.iinfo(_NP[dtype])
        lo, hi = {"add": (info.min // 2, info.max // 2), "multiply": (-(1 << 15) + 1, (1 << 15) - 1),
                  "abs": (info.min + 1, info.max)}.get(op, (info.min, info.max))
        return [rng.integers(lo, hi, shape, endpoint=True).astype(_NP[dtype]) for _ in range(arity)]
    lo, hi = {"log": (1e-3, 100), "log_plus_one": (-0.9, 100), "power": (0.1, 8),
              "exponential": (-10, 10), "exponential_minus_one": (-10, 10)}.get(op, (-20, 20))
    return [rng.uniform(lo, hi, shape).astype(_NP[dtype]) for _ in range(arity)]


REPEATS = 5


def _once(backend, mlir, arrays) -> float:
    """Best of REPEATS compile+run times: the machine is shared, and the
    minimum is the least disturbed measurement of the same work."""
    best = float("inf")
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        backend.run(backend.compile(mlir), arrays)
        best = min(best, time.perf_counter() - t0)
    return best


def throughput() -> dict:
    """Per group: [oracle seconds, interpreter seconds] summed over its rows
    (printed as it goes; bench/summary.py quotes the ratios)."""
    oracle, interp = load_backend("oracle"), load_backend("interpreter")
    rng = np.random.default_rng(0)
    rows = [(op, dt, _ARITY.get(op, 1), "", (N,), None) for dt in NARROW for op in TRANSCENDENTALS]
    rows += [(op, "f64", _ARITY.get(op, 1), "", (N,), None)
             for op in ("sine", "cosine", "tanh", "exponential", "exponential_minus_one", "log", "log_plus_one",
                        "atan2", "add")]
    rows += [(op, dt, _ARITY.get(op, 1), "", (N,), None) for op, dt in INTEGER]
    rows += [(op, "f32", 1, attrs, shape, out) for op, attrs, shape, out in DATA_MOVEMENT]
    print(f"\nthroughput over {N} elements per program, best of {REPEATS}: "
          "interpreter time / oracle time (higher = oracle faster)")
    print(f"{'op':<24}{'type':<10}{'oracle s':>10}{'interp s':>10}{'x':>8}")
    groups: dict = {}
    warm = _program("sine", "f32", 1)   # first-call costs (imports, caches) out of the first row
    for b in (oracle, interp):
        _once(b, warm, _inputs("sine", "f32", 1, (N,), rng))
    for op, dt, arity, attrs, shape, out in rows:
        mlir = _program(op, dt, arity, attrs, shape, out)
        arrays = _inputs(op, dt, arity, shape, rng)
        try:
            o, i = _once(oracle, mlir, arrays), _once(interp, mlir, arrays)
        except (Rejected, Unsupported) as e:
            print(f"{op:<24}{dt:<10}  skipped: {str(e).splitlines()[0][:60]}")
            continue
        key = ("data movement" if attrs else "f64" if dt == "f64" else "integer" if dt.startswith("i") else
               "f8" if dt.startswith("f8") else dt) + ("" if attrs or dt == "f64" or dt.startswith("i") else " transcendentals")
        g = groups.setdefault(key, [0.0, 0.0])
        g[0], g[1] = g[0] + o, g[1] + i
        print(f"{op:<24}{dt:<10}{o:>10.3f}{i:>10.3f}{i / o:>8.1f}")
    print("\nper group (sum of times): interpreter / oracle")
    for key, (o, i) in groups.items():
        print(f"  {key:<22}{i / o:>8.1f}x")
    return groups


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--throughput-only" not in args:
        main(args or DEFAULT_OPS)
    throughput()
