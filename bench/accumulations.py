"""Accumulations at model scale: the oracle against the reference interpreter and XLA, in one run (issue 21).

Three parts, each a ratio against a peer measured in the same run:

1. **table** — JAX-lowered f32 programs through `shlo_conform.run_program`
   (compile + run) on the oracle and on the StableHLO reference interpreter
   (jaxlib's), and through `jax.jit` (XLA, compiled once, best of 5):
   jnp.dot 64² and 256², jnp.dot 128² with the BF16_BF16_F32_X3
   algorithm, tanh(tanh(x@w1)@w2) at 128, conv_general_dilated
   1×16×32×32 with a 3×3 SAME kernel, jax.nn.softmax 256², and a reduce
   (jnp.sum) over 10^7 f32 elements.  Target: interpreter / oracle ≥ 10.
2. **matmul 1024³ f32** — XLA's time for the product, against the oracle
   *judging* XLA's output: the expectation of the program (parse, the
   whole-array route of dot_general) plus suites.compare on the output,
   run in a fresh process so its peak memory (ru_maxrss, and numpy's
   tracemalloc peak) is its own.  Targets: oracle ≤ 20 × XLA, ≤ 2 GB.
   The physical floor is printed beside it: the two float64 BLAS products
   the bound needs (S = A·B and M = |A|·|B|) on the same data.
3. **routes** (`--routes`) — the candidates measured before choosing
   (docs/oracle-evaluation.md, "Accumulations"): per element, the exact
   rationals (Fractions, then Python integers) against float64 BLAS with a
   rigorous bound for f32; for f64, long double matmul, python-flint's
   arb_mat, TwoProduct with a TwoSum cascade, and math.fsum — each with
   the share of elements its enclosure decides.

    nice .venv/bin/python bench/accumulations.py [--quick] [--no-interpreter] [--routes] [--only NAME ...]

`--quick` leaves out the interpreter's slowest rows (dot 256², the 10^7
reduce), which take minutes there.
"""
from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def best(f, repeat: int) -> float:
    t = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - t0)
    return t


# --------------------------------------------------------------------------
# 1. The table
# --------------------------------------------------------------------------

def table_programs():
    import jax
    import jax.numpy as jnp
    rng = np.random.default_rng(0)

    def normal(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    def conv(a, w):
        return jax.lax.conv_general_dilated(a, w, (1, 1), "SAME")

    def mlp(x, w1, w2):
        return jnp.tanh(jnp.tanh(x @ w1) @ w2)

    def x3(a, b):   # a DotAlgorithm preset (v1.20): the bound the algorithm states (spec/ops/dot_algorithm.py)
        return jnp.dot(a, b, precision=jax.lax.DotAlgorithmPreset.BF16_BF16_F32_X3, preferred_element_type=jnp.float32)

    return [
        ("jnp.dot 64x64", jnp.dot, [normal(64, 64), normal(64, 64)], False),
        ("jnp.dot 256x256", jnp.dot, [normal(256, 256), normal(256, 256)], True),
        ("jnp.dot 128x128 BF16_X3", x3, [normal(128, 128), normal(128, 128)], False),
        ("tanh(tanh(x@w1)@w2) 128", mlp, [normal(128, 128), normal(128, 128, scale=128 ** -0.5),
                                          normal(128, 128, scale=128 ** -0.5)], False),
        ("conv 1x16x32x32 3x3 SAME", conv, [normal(1, 16, 32, 32), normal(16, 16, 3, 3, scale=1 / 12)], False),
        ("jax.nn.softmax 256x256", jax.nn.softmax, [normal(256, 256)], False),
        ("reduce 10^7 f32 (jnp.sum)", jnp.sum, [normal(10 ** 7)], True),
    ]


def table(args) -> list:
    import jax
    from shlo_conform import run_program
    rows = []
    print("== 1. JAX-lowered f32 programs: run_program (compile + run) on the oracle and the interpreter; "
          "XLA = jax.jit, compiled once, best of 5")
    print(f"{'program':<28}{'oracle s':>10}{'interp s':>10}{'xla s':>10}{'interp/oracle':>15}{'oracle/xla':>12}")
    warm = table_programs()[0]
    text = jax.jit(warm[1]).lower(*warm[2]).as_text()
    run_program(text, warm[2])   # first-call costs (jax import, MLIR context) out of the first row
    if not args.no_interpreter:
        run_program(text, warm[2], "interpreter")
    for name, f, inputs, slow in table_programs():
        if args.only and not any(o in name for o in args.only):
            continue
        text = jax.jit(f).lower(*inputs).as_text()
        oracle = best(lambda: run_program(text, inputs), 2)
        jf = jax.jit(f)
        jf(*inputs).block_until_ready()
        xla = best(lambda: jf(*inputs).block_until_ready(), 5)
        interp = None
        if not args.no_interpreter and not (args.quick and slow):
            interp = best(lambda: run_program(text, inputs, "interpreter"), 1)
        ratio = f"{interp / oracle:>15.1f}" if interp else f"{'-':>15}"
        print(f"{name:<28}{oracle:>10.3f}{(interp or float('nan')):>10.2f}{xla:>10.4f}{ratio}{oracle / xla:>12.0f}",
              flush=True)
        rows.append({"program": name, "oracle_s": oracle, "interpreter_s": interp, "xla_s": xla})
    print("target: interpreter / oracle >= 10 on every row")
    return rows


# --------------------------------------------------------------------------
# 2. The 1024³ matmul, judged
# --------------------------------------------------------------------------

MATMUL = """func.func @main(%a: tensor<{n}x{n}xf32>, %b: tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32> {{
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<{n}x{n}xf32>, tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>
  return %0 : tensor<{n}x{n}xf32>
}}"""


def judge_matmul(folder: str) -> None:
    """In a fresh process: XLA's product and the oracle's expectation of it,
    alternately (ROUNDS times each, the best of each kept: the machine is
    shared, and alternating exposes both to the same load), then the
    comparison of XLA's output with the expectation; prints one JSON line."""
    import tracemalloc

    import jax
    from shlo_conform.generators.expect import expected_outputs
    from shlo_conform.oracle import accumulate
    from shlo_conform.oracle.program import parse_program
    from shlo_conform.suites.compare import compare
    d = Path(folder)
    a, b = np.load(d / "a.npy"), np.load(d / "b.npy")
    n = a.shape[0]
    text = MATMUL.format(n=n)
    parse_program(text)   # the MLIR context and jax import, once, outside the timing
    f = jax.jit(lambda x, y: x @ y)
    out = np.asarray(f(a, b))
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    xla = oracle = float("inf")
    exp = None
    for _ in range(ROUNDS):
        xla = min(xla, best(lambda: f(a, b).block_until_ready(), 3))
        t0 = time.perf_counter()
        (exp,) = expected_outputs(text, [a, b])
        oracle = min(oracle, time.perf_counter() - t0)
    stats = accumulate.STATS[-1] if accumulate.STATS else {}
    t0 = time.perf_counter()
    c = compare(exp, out)
    t_compare = time.perf_counter() - t0
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()   # numpy's own allocations, traced on one more run (tracing slows Python objects down)
    expected_outputs(text, [a, b])
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    blas = best(lambda: (a64 @ b64, np.abs(a64) @ np.abs(b64)), 3)
    print(json.dumps({"xla_s": xla, "expectation_s": oracle, "compare_s": t_compare, "ok": bool(c.ok),
                      "kind": exp.kind, "stages": stats, "maxrss_mb": rss1 / 1024,
                      "maxrss_before_mb": rss0 / 1024, "traced_peak_mb": peak / 2 ** 20, "two_dgemm_s": blas}))


ROUNDS = 5


def matmul(args, n: int = 1024) -> dict:
    print(f"\n== 2. f32 matmul {n}x{n}x{n}: XLA's time against the oracle judging XLA's output (a fresh process; "
          f"XLA and the oracle alternately, best of {ROUNDS} each)")
    rng = np.random.default_rng(1)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    with tempfile.TemporaryDirectory(prefix="shlo-acc-") as tmp:
        for name, v in (("a", a), ("b", b)):
            np.save(Path(tmp) / f"{name}.npy", v)
        p = subprocess.run([sys.executable, __file__, "--judge-matmul", tmp], capture_output=True, text=True)
        if p.returncode:
            sys.exit(p.stderr[-2000:])
        r = json.loads(p.stdout.strip().splitlines()[-1])
    xla = r["xla_s"]
    judged = r["expectation_s"] + r["compare_s"]
    print(f"XLA (jax.jit): {xla:.4f} s")
    print(f"oracle's expectation (parse, dot_general's whole-array route, the record): {r['expectation_s']:.3f} s "
          f"-> {r['expectation_s'] / xla:.1f} x XLA (target <= 20)")
    print(f"  + suites.compare of XLA's output: {r['compare_s']:.3f} s -> judged in {judged:.3f} s, "
          f"{judged / xla:.1f} x XLA; verdict ok={r['ok']} ({r['kind']})")
    print(f"  elements decided per stage: {r['stages']}")
    print(f"  memory: peak RSS {r['maxrss_mb']:.0f} MB (of which {r['maxrss_before_mb']:.0f} MB before judging: "
          f"python, numpy, jaxlib's MLIR, XLA); numpy/tracemalloc peak while stating the expectation "
          f"{r['traced_peak_mb']:.0f} MB (target <= 2 GB)")
    print(f"  floor: the two float64 BLAS products the bound needs take {r['two_dgemm_s']:.3f} s "
          f"({r['two_dgemm_s'] / xla:.1f} x XLA); the expectation is {r['expectation_s'] / r['two_dgemm_s']:.1f} x that")
    return r


# --------------------------------------------------------------------------
# 3. Routes measured before choosing
# --------------------------------------------------------------------------

def routes() -> None:
    from shlo_conform.oracle import accumulate
    from shlo_conform.spec import bounds, schedule
    from shlo_conform.spec.types import E_F32, E_F64
    print("\n== 3. candidate routes (per element of an n x n x n matmul; decided = enclosure settles the "
          "element's rounding and both ends)")
    rng = np.random.default_rng(2)

    for et, n in ((E_F32, 256), (E_F64, 128)):
        fmt = et.format
        a = rng.standard_normal((n, n)).astype(et.numpy).astype(np.float64)
        b = rng.standard_normal((n, n)).astype(et.numpy).astype(np.float64)
        sample = [(int(i), int(j)) for i, j in rng.integers(0, n, (60, 2))]
        t_frac = best(lambda: [_fraction_dot(a[i], b[:, j], fmt) for i, j in sample], 1) / len(sample)
        t_int = best(lambda: [schedule.dot_range(list(zip(a[i].tolist(), b[:, j].tolist())), fmt)
                              for i, j in sample], 1) / len(sample)
        print(f"{et.name} {n}^3: exact rationals per element: Fractions {t_frac * 1e6:.0f} us, "
              f"Python integers (schedule.exact_dot) {t_int * 1e6:.0f} us "
              f"-> whole matrix {t_int * n * n:.2f} s")
        t0 = time.perf_counter()
        rec = bounds.float_dot(a[None], b[None], fmt, None, {})   # the BLAS products and the classes
        t_record = time.perf_counter() - t0
        idx = np.arange(n * n)
        for k, stage in enumerate(rec.stages[:2]):
            t0 = time.perf_counter() - (t_record if k == 0 else 0.0)
            s, lo, hi = stage(idx)
            ok = accumulate.decide(s, et, 0)[0] & accumulate.decide(lo, et, -1)[0] & accumulate.decide(hi, et, 1)[0]
            dt = time.perf_counter() - t0
            name = ("float64 BLAS + a-priori bound" if fmt.precision <= 24 else
                    "float64 BLAS (products rounded) + bound") if k == 0 else "TwoSum cascade (TwoProduct for f64)"
            print(f"  {name:<44} {dt:8.3f} s for all {n * n} elements, decides {ok.mean():7.2%}")
        if et is E_F64:
            al, bl = a.astype(np.longdouble), b.astype(np.longdouble)
            t_ld = best(lambda: al @ bl, 1)
            S = al @ bl
            M = np.abs(al) @ np.abs(bl)
            g = bounds.gamma_u(n, Fraction(1, 1 << 64))
            E = M * np.longdouble(float(g)) * np.longdouble(1 + 2.0 ** -50)
            ok = accumulate.decide((S - E, S + E), et, 0)[0]
            print(f"  {'long double matmul (numpy, no BLAS)':<44} {t_ld:8.3f} s per product, "
                  f"decides the nearest of {ok.mean():7.2%}")
            try:
                import flint
                flint.ctx.prec = 128
                t0 = time.perf_counter()
                ma, mb = flint.arb_mat(a.tolist()), flint.arb_mat(b.tolist())
                _ = ma * mb
                print(f"  {'python-flint arb_mat, 128 bits':<44} {time.perf_counter() - t0:8.3f} s "
                      "(conversion + product; reading the balls back not counted)")
            except ImportError:
                pass
            rows = np.concatenate(bounds.two_product(a[:50][:, None, :], b.T[None, :50, :]), axis=2).reshape(-1, 2 * n)
            t_fs = best(lambda: [math.fsum(r) for r in rows.tolist()], 1) / len(rows)
            print(f"  {'math.fsum over TwoProduct terms':<44} {t_fs * 1e6:8.1f} us per element")


def _fraction_dot(x, y, fmt):
    """The exact route as it was: Fractions summed one by one."""
    exact = [Fraction(p) * Fraction(q) for p, q in zip(x.tolist(), y.tolist())]
    mag = sum((abs(t) for t in exact), Fraction(0))
    s = sum(exact, Fraction(0))
    return s, mag


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="skip the interpreter's slowest rows")
    ap.add_argument("--no-interpreter", action="store_true")
    ap.add_argument("--routes", action="store_true", help="also measure the candidate routes")
    ap.add_argument("--only", nargs="*", default=None, help="table rows whose name contains one of these")
    ap.add_argument("--no-matmul", action="store_true")
    ap.add_argument("--judge-matmul", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.judge_matmul:
        judge_matmul(args.judge_matmul)
        return
    table(args)
    if not args.no_matmul:
        matmul(args)
    if args.routes:
        routes()


if __name__ == "__main__":
    main()
