"""Whole programs at model scale (issue 21): the oracle against XLA and the reference interpreter, in one run.

Three groups of JAX-lowered (or hand-written) programs, each run through the
project's backends exactly as `shlo_conform.run_program` runs them (compile
+ run on the same inputs), interleaved and best of `--repeats` per backend:

* `table`: the five programs of the issue — jnp.dot 64x64 and 256x256,
  tanh(tanh(x@w1)@w2) at 128, conv_general_dilated 1x16x32x32 3x3 SAME,
  jax.nn.softmax 256x256.  Target: oracle >= 10x the interpreter's
  throughput (interpreter time / oracle time).
* `elementwise`: one cosine over 2^20 elements in f32, bf16, f16 (target
  >= 10x) and f64 (target >= 5x), and beside it the f64 exponential, sine,
  tanh, log, log_plus_one and exponential_minus_one (target >= 5x; the
  ranges are oracle_vs_interpreter's: -20..20, exp and expm1 -10..10, log
  1e-3..100, log_plus_one -0.9..100).
* `model`: model-sized programs with no target — an MLP of 1024-wide
  layers, a conv-net block (two 3x3 convolutions, bias, relu, residual),
  a transformer block (pre-layer-norms written with jnp.var, exact GELU,
  softmax attention).  jnp.var and the exact GELU lower to CHLO
  (chlo.square, chlo.erfc): the oracle legalizes them with jaxlib's
  chlo-legalize-to-stablehlo and says so; the interpreter, which aborts its
  process on CHLO, is handed the same legalized program; XLA gets the
  program as JAX wrote it.

Besides the times, each row says whether XLA's output meets the oracle's
expectation (`suites.compare`): the expectations are what the oracle is
for, and XLA is the implementation most likely right.

    .venv/bin/python bench/model_scale.py                      # everything (several minutes)
    .venv/bin/python bench/model_scale.py --groups table,elementwise
    .venv/bin/python bench/model_scale.py --programs softmax,cos-f64 --repeats 5
    .venv/bin/python bench/model_scale.py --no-interpreter      # the model group without the slow peer
    .venv/bin/python bench/model_scale.py --list
    .venv/bin/python bench/model_scale.py --groups elementwise --before   # f64 rows also without the dd pass

The first call of each backend (imports, caches) is made on a tiny program
before any row, so rows measure steady state; `--cold` prints those first
calls too.  A backend whose single run takes longer than `--slow` seconds
is not repeated.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

N_ELEMENTWISE = 1 << 20


@dataclass
class Row:
    name: str
    group: str
    what: str
    build: Callable          # () -> (program text, [input arrays])
    target: float | None     # interpreter time / oracle time to reach, or None


# --------------------------------------------------------------------------
# Programs
# --------------------------------------------------------------------------

def _lower(f, *shapes, dtype="float32") -> str:
    import jax
    import jax.numpy as jnp
    return jax.jit(f).lower(*[jax.ShapeDtypeStruct(s, getattr(jnp, dtype)) for s in shapes]).as_text()


def _normal(*shapes, scale=None, seed=0) -> list:
    """Inputs with model-like magnitudes: N(0, 1) activations, weights
    scaled by 1/sqrt(fan_in) (`scale` per input: None for 1)."""
    rng = np.random.default_rng(seed)
    scale = scale or [None] * len(shapes)
    return [(rng.standard_normal(s) * (1.0 if k is None else k)).astype(np.float32) for s, k in zip(shapes, scale)]


def _jax_row(name, group, what, f, shapes, target, scale=None):
    return Row(name, group, what, lambda: (_lower(f, *shapes), _normal(*shapes, scale=scale)), target)


def _dot(n):
    import jax.numpy as jnp
    return _jax_row(f"dot{n}", "table", f"jnp.dot {n}x{n}", jnp.dot, [(n, n), (n, n)], 10, [None, n ** -0.5])


def _tanh2():
    import jax.numpy as jnp
    return _jax_row("tanh2", "table", "tanh(tanh(x@w1)@w2), 128", lambda x, w1, w2: jnp.tanh(jnp.tanh(x @ w1) @ w2),
                    [(128, 128)] * 3, 10, [None, 128 ** -0.5, 128 ** -0.5])


def _conv():
    from jax import lax
    return _jax_row("conv", "table", "conv_general_dilated 1x16x32x32 3x3 SAME",
                    lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME"),
                    [(1, 16, 32, 32), (16, 16, 3, 3)], 10, [None, 144 ** -0.5])


def _softmax():
    import jax
    return _jax_row("softmax", "table", "jax.nn.softmax 256x256", jax.nn.softmax, [(256, 256)], 10)


def _elementwise(op, dt, lo, hi, target):
    import ml_dtypes
    npd = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": ml_dtypes.bfloat16}[dt]

    def build():
        t = f"tensor<{N_ELEMENTWISE}x{dt}>"
        text = (f"func.func @main(%x: {t}) -> {t} {{\n  %0 = \"stablehlo.{op}\"(%x) : ({t}) -> {t}\n"
                f"  \"func.return\"(%0) : ({t}) -> ()\n}}\n")
        return text, [np.random.default_rng(0).uniform(lo, hi, N_ELEMENTWISE).astype(npd)]
    short = {"cosine": "cos", "sine": "sin", "tanh": "tanh", "exponential": "exp", "log": "log",
             "log_plus_one": "log1p", "exponential_minus_one": "expm1"}[op]
    return Row(f"{short}-{dt}", "elementwise", f"{op} over 2^20 {dt}", build, target)


def _mlp():
    import jax

    def mlp(x, w1, b1, w2, b2, w3, b3):
        h = jax.nn.relu(x @ w1 + b1)
        h = jax.nn.relu(h @ w2 + b2)
        return h @ w3 + b3
    d = 1024
    shapes = [(8, d), (d, d), (d,), (d, d), (d,), (d, d), (d,)]
    scale = [None, d ** -0.5, 0.1, d ** -0.5, 0.1, d ** -0.5, 0.1]
    return _jax_row("mlp", "model", "MLP 8x1024, three 1024x1024 layers, relu", mlp, shapes, None, scale)


def _convnet():
    import jax
    from jax import lax

    def block(x, w1, b1, w2, b2):
        h = lax.conv_general_dilated(x, w1, (1, 1), "SAME") + b1[None, :, None, None]
        h = jax.nn.relu(h)
        h = lax.conv_general_dilated(h, w2, (1, 1), "SAME") + b2[None, :, None, None]
        return jax.nn.relu(h + x)
    c = 16
    shapes = [(1, c, 32, 32), (c, c, 3, 3), (c,), (c, c, 3, 3), (c,)]
    return _jax_row("convnet", "model", "conv-net block 1x16x32x32: two 3x3 convs, bias, relu, residual", block,
                    shapes, None, [None, (9 * c) ** -0.5, 0.1, (9 * c) ** -0.5, 0.1])


def _transformer():
    import jax
    import jax.numpy as jnp
    s, d, heads, m = 64, 128, 4, 512

    def layer_norm(x, g, b):
        mu = jnp.mean(x, axis=-1, keepdims=True)
        return (x - mu) / jnp.sqrt(jnp.var(x, axis=-1, keepdims=True) + 1e-5) * g + b

    def block(x, g1, b1, wqkv, wo, g2, b2, w1, w2):
        h = layer_norm(x, g1, b1)
        q, k, v = jnp.split(h @ wqkv, 3, axis=-1)
        split = lambda t: t.reshape(s, heads, d // heads).transpose(1, 0, 2)
        q, k, v = split(q), split(k), split(v)
        att = jax.nn.softmax(q @ k.transpose(0, 2, 1) / jnp.sqrt(d // heads), axis=-1)
        x = x + (att @ v).transpose(1, 0, 2).reshape(s, d) @ wo
        h = layer_norm(x, g2, b2)
        return x + jax.nn.gelu(h @ w1, approximate=False) @ w2
    shapes = [(s, d), (d,), (d,), (d, 3 * d), (d, d), (d,), (d,), (d, m), (m, d)]
    scale = [None, 1.0, 0.1, d ** -0.5, d ** -0.5, 1.0, 0.1, d ** -0.5, m ** -0.5]

    def build():
        text = _lower(block, *shapes)
        xs = _normal(*shapes, scale=scale)
        xs[1] = 1.0 + 0.1 * xs[1]   # layer-norm gains near 1
        xs[5] = 1.0 + 0.1 * xs[5]
        return text, xs
    return Row("transformer", "model", f"transformer block s={s} d={d} heads={heads} mlp={m}: jnp.var layer norms, "
               "exact GELU, softmax attention", build, None)


def _cumprod(n):
    """jnp.cumprod of discount factors near one (a reduce_window of n windows
    up to n long: products, spec/bounds.py `float_product`)."""
    import jax.numpy as jnp

    def build():
        x = 0.99 + 0.005 * np.random.default_rng(0).standard_normal(n)
        return _lower(jnp.cumprod, (n,)), [x.astype(np.float32)]
    return Row(f"cumprod{n}", "model", f"jnp.cumprod of {n} f32 discount factors", build, None)


def rows() -> list[Row]:
    return [_dot(64), _dot(256), _tanh2(), _conv(), _softmax(),
            _elementwise("cosine", "f32", -20, 20, 10), _elementwise("cosine", "bf16", -20, 20, 10),
            _elementwise("cosine", "f16", -20, 20, 10), _elementwise("cosine", "f64", -20, 20, 5),
            _elementwise("exponential", "f64", -10, 10, 5), _elementwise("sine", "f64", -20, 20, 5),
            _elementwise("tanh", "f64", -20, 20, 5), _elementwise("log", "f64", 1e-3, 100, 5),
            _elementwise("log_plus_one", "f64", -0.9, 100, 5), _elementwise("exponential_minus_one", "f64", -10, 10, 5),
            _jax_row("compare", "elementwise", "x < y over 2^20 f32", lambda x, y: x < y, [(N_ELEMENTWISE,)] * 2, None),
            _jax_row("relu", "elementwise", "jax.nn.relu over 2^20 f32", lambda x: __import__("jax").nn.relu(x),
                     [(N_ELEMENTWISE,)], None),
            _jax_row("topk512", "model", "lax.top_k(x, 8) over 512 f32", lambda x: __import__("jax").lax.top_k(x, 8),
                     [(512,)], None),
            _jax_row("topk4096", "model", "lax.top_k(x, 8) over 4096 f32", lambda x: __import__("jax").lax.top_k(x, 8),
                     [(4096,)], None),
            _cumprod(1024), _cumprod(4096), _mlp(), _convnet(), _transformer()]


# --------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------

WARM = ('func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = "stablehlo.cosine"(%x) : (tensor<4xf32>) '
        '-> tensor<4xf32>\n  "func.return"(%0) : (tensor<4xf32>) -> ()\n}\n')


def _once(backend, text, xs) -> tuple[float, list]:
    t0 = time.perf_counter()
    out = backend.run(backend.compile(text), xs)
    return time.perf_counter() - t0, out


class _no_ddfast:
    """The oracle as it ran before its f64 double-double pass: fast.evaluate
    finds no kernel and takes the long double pass and MPFR."""
    def __enter__(self):
        from shlo_conform.oracle import ddfast
        self.kernels = dict(ddfast.KERNELS)
        ddfast.KERNELS.clear()

    def __exit__(self, *exc):
        from shlo_conform.oracle import ddfast
        ddfast.KERNELS.update(self.kernels)


def _legalized(text: str) -> tuple[str, dict]:
    from shlo_conform.oracle.reading import read_registered
    read = read_registered(text)
    return (read.generic, read.legalized) if read.legalized else (text, {})


def _verdict(text, xs, out) -> str:
    """Does XLA's output meet the oracle's expectation?"""
    from shlo_conform.oracle.program import execute, parse_program
    from shlo_conform.suites.compare import compare
    exps = execute(parse_program(text), xs)
    results = [compare(e, np.asarray(a)) for e, a in zip(exps, out)]
    if all(r.ok for r in results):
        return "meets"
    return "FAILS: " + "; ".join(str(getattr(r, "detail", "")).splitlines()[0][:80] for r in results if not r.ok)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--groups", default="table,elementwise,model")
    ap.add_argument("--programs", default="", help="comma-separated row names (see --list); overrides --groups")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--slow", type=float, default=8.0, help="seconds past which a backend's run is not repeated")
    ap.add_argument("--no-interpreter", action="store_true")
    ap.add_argument("--no-xla", action="store_true")
    ap.add_argument("--no-verdict", action="store_true", help="skip holding XLA's outputs against the oracle")
    ap.add_argument("--cold", action="store_true", help="also print each backend's first call")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--before", action="store_true",
                    help="f64 rows: also time the oracle without its double-double pass (oracle/ddfast.py), "
                         "as it ran before that pass, interleaved in the same run")
    a = ap.parse_args(argv)
    table = rows()
    if a.list:
        for r in table:
            print(f"{r.name:<12}{r.group:<12}{r.what}")
        return 0
    names = [p for p in a.programs.split(",") if p]
    groups = a.groups.split(",")
    chosen = [r for r in table if (r.name in names if names else r.group in groups)]
    unknown = set(names) - {r.name for r in table}
    if unknown:
        print(f"unknown program(s): {', '.join(sorted(unknown))} (see --list)", file=sys.stderr)
        return 2

    from shlo_conform.backends.base import load_backend
    backends = {"oracle": load_backend("oracle")}
    if not a.no_interpreter:
        backends["interpreter"] = load_backend("interpreter")
    if not a.no_xla:
        backends["xla"] = load_backend("xla")
    for name, b in backends.items():   # imports and first-call caches out of the rows
        t, _ = _once(b, WARM, [np.ones(4, np.float32)])
        if a.cold:
            print(f"first call of {name}: {t:.2f} s")

    print(f"best of {a.repeats} (compile + run, interleaved; one run past {a.slow:g} s); "
          "ratio = interpreter s / oracle s (the oracle's throughput in the interpreter's units)")
    head = f"{'program':<13}{'xla s':>9}{'interp s':>10}{'oracle s':>10}{'ratio':>8}{'target':>8}  "
    print(head + ("before (no dd)  ratio   " if a.before else "") + "xla vs oracle")
    verdicts = []
    for r in chosen:
        text, xs = r.build()
        interp_text, legalized = _legalized(text)
        best = {k: float("inf") for k in backends}
        outs = {}
        for rep in range(a.repeats):
            for k, b in backends.items():
                if rep and best[k] > a.slow:
                    continue
                t, out = _once(b, interp_text if k == "interpreter" else text, xs)
                best[k] = min(best[k], t)
                outs[k] = out
        if a.before and r.name.endswith("-f64"):
            before = float("inf")
            for _ in range(a.repeats):
                with _no_ddfast():
                    before = min(before, _once(backends["oracle"], text, xs)[0])
        o, i = best["oracle"], best.get("interpreter")
        ratio = i / o if i is not None else None
        verdict = "" if a.no_verdict or "xla" not in outs else _verdict(text, xs, outs["xla"])
        cells = [f"{r.name:<13}", f"{best['xla']:>9.3f}" if "xla" in best else f"{'-':>9}",
                 f"{i:>10.3f}" if i is not None else f"{'-':>10}", f"{o:>10.3f}",
                 f"{ratio:>7.1f}x" if ratio is not None else f"{'-':>8}",
                 f"{r.target:>7g}x" if r.target else f"{'-':>8}"]
        if a.before:
            cells.append(f"  {before:>13.3f}{i / before:>7.1f}x  " if r.name.endswith("-f64") and i else f"{'':>25}")
        print("".join(cells) + "  " + verdict, flush=True)
        if legalized:
            print(f"{'':<13}CHLO legalized before judging (and for the interpreter): "
                  + ", ".join(f"{k} x{v}" for k, v in sorted(legalized.items())))
        if r.target and ratio is not None:
            verdicts.append((r, ratio))
    if verdicts:
        print("\ntargets:")
        for r, ratio in verdicts:
            print(f"  {r.name:<13}{r.what:<48}{ratio:>7.1f}x  target {r.target:g}x  "
                  + ("met" if ratio >= r.target else "MISSED"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
