"""A transformer block's enclosure stage by stage: where `run`'s affine forms lose correlation (issue 32).

A JAX transformer block (layer norm → single-head attention → residual →
layer norm → exact-GELU MLP → residual, f32) is lowered with every stage's
value returned besides the block's output, so one oracle run gives the
enclosure `run` judges with after each stage:

    ln1      layer norm of the input
    q        its projection (LN → projection)
    softmax  the attention weights
    x2       attention output projected, plus the residual
    ln2      the second layer norm
    gelu     the MLP's hidden layer, exact GELU (chlo.erfc)
    out      the MLP's output plus the residual: the block's output

For each stage: the median and widest relative half-width of the
enclosure (suites/resolution.py, as `run` prints it) and of the affine
form alone, and the share of the form's radius that is untracked (r) —
what no noise symbol carries, so what no later step can cancel.

    .venv/bin/python bench/stacked_blocks.py [--size SxDxM ...] [--ops] [--first-order] [--orders N]
                                             [--entries-max N] [--held-max N]

* `--ops` lists every op of the program: its result's form (or why it has
  none), its symbols, median relative radius and untracked share — where
  the radius jumps is where correlation is lost — and, for the outputs,
  the sources their radius comes from: Σ|A| grouped by the op that made
  each symbol, and r.
* `--first-order` runs the same forms with every step's allowance a noise
  symbol of its own, global (no local family, so nothing is ever boxed) and
  no reduction (`K_MAX`, `ENTRIES_MAX`, `HELD_MAX` lifted): Σ|A| is then, per element, Σ over every rounding
  site of |∂value/∂site|·(the site's allowance) — the first-order worst
  case over independent roundings of the oracle's own allowances, computed
  exactly — and r the second-order remainders.  Memory grows as elements ×
  sites: small sizes only (refused past FIRST_ORDER_MAX = 1024 elements in a value).
* `--orders N` evaluates the block in N sampled evaluation orders the spec
  allows (bench/evaluation_orders.py's rewrite: every dot_general and sum
  by an explicit tree, XLA kept from fusing) and reports the sampled spread
  and whether every result lies inside the enclosure (exit 1 if not).

Sizes are S×D×M: S tokens, model width D, MLP width M (default 32x64x128;
the issue's large case is 128x256x1024).  Inputs are fixed by `--seed`.
"""
from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))   # bench/__init__.py: `from bench import …` when run as a script
FIRST_ORDER_MAX = 1024   # elements per value --first-order takes (its forms hold elements × every rounding site)
STAGES = ("ln1", "q", "softmax", "x2", "ln2", "gelu", "out")
WHAT = {"ln1": "layer norm", "q": "LN → projection", "softmax": "attention weights",
        "x2": "attention + residual", "ln2": "second layer norm", "gelu": "MLP hidden, exact GELU",
        "out": "MLP + residual (block output)"}


# --------------------------------------------------------------------------
# The block
# --------------------------------------------------------------------------

def layer_norm(x, g, b):
    import jax.numpy as jnp
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / jnp.sqrt(var + 1e-5) * g + b


def block(x, g1, b1, wq, wk, wv, wo, g2, b2, w1, w2):
    """The block, returning each stage's value (`STAGES`) — the last is the block's output."""
    import jax
    h = layer_norm(x, g1, b1)
    q, k, v = h @ wq, h @ wk, h @ wv
    a = jax.nn.softmax(q @ k.T / np.float32(np.sqrt(q.shape[-1])), axis=-1)
    x2 = x + (a @ v) @ wo
    h2 = layer_norm(x2, g2, b2)
    u = jax.nn.gelu(h2 @ w1, approximate=False)
    return h, q, a, x2, h2, u, x2 + u @ w2


def inputs(s: int, d: int, m: int, seed: int = 0) -> list[np.ndarray]:
    """Inputs of unit scale: x ~ N(0, 1), gains 1 + N(0, 0.1²), biases N(0, 0.1²),
    weights N(0, 1/fan_in) — activations of order 1 at every stage."""
    rng = np.random.default_rng(seed)

    def n(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)
    return [n(s, d), 1 + n(d, scale=0.1), n(d, scale=0.1), n(d, d, scale=d ** -.5), n(d, d, scale=d ** -.5),
            n(d, d, scale=d ** -.5), n(d, d, scale=d ** -.5), 1 + n(d, scale=0.1), n(d, scale=0.1),
            n(d, m, scale=d ** -.5), n(m, d, scale=m ** -.5)]


def lowered(s: int, d: int, m: int, seed: int = 0) -> tuple[str, list[np.ndarray]]:
    import jax
    args = inputs(s, d, m, seed)
    return jax.jit(block).lower(*args).as_text(), args


def xla_outputs(text: str, args: list) -> list[np.ndarray]:
    """XLA:CPU's outputs of the lowered program (what `run --backend=xla` judges)."""
    from shlo_conform.backends.xla import XlaBackend
    xla = XlaBackend({})
    return [np.asarray(y) for y in xla.run(xla.compile(text), list(args))]


# --------------------------------------------------------------------------
# The oracle, instrumented
# --------------------------------------------------------------------------

def oracle(text: str, args: list, tmp: Path):
    """The expectations `run` judges with: evaluation_orders.oracle's."""
    return evaluation_orders().oracle(text, args, tmp)


class Trace:
    """Wraps oracle/affine.py's step while installed: per op, figures of its
    result's form as it was made (never the form itself: holding every
    form would defeat the oracle's own memory bound), or why there is none;
    which op made each noise symbol; and with `detail`, where each result's
    radius comes from (`sources`)."""

    def __init__(self, detail: bool = False):
        from shlo_conform.oracle import affine
        self.affine = affine
        self.detail = detail
        self.rows: list[dict] = []
        self.by_value: dict[int, dict] = {}   # id(expectation) → its row
        self._ranges: list[tuple[int, int, int]] = []
        self.spelt: dict[int, int] = {}       # local family → the global id of its block 0 (`_globalize`)
        self._op = -1

    def __enter__(self):
        af = self.affine
        self._saved = (af.step, af._new_ids, getattr(af, "_global_ids", None))
        trace = self

        def new_ids(k, *a, **kw):
            ids = trace._saved[1](k, *a, **kw)
            if k:
                trace._ranges.append((int(ids[0]), int(ids[-1]) + 1, trace._op))
            return ids

        def step(inst, inputs, outs):
            trace._op = len(trace.rows)
            row = {"op": inst.spec.mnemonic}
            trace.rows.append(row)
            outs = trace._saved[0](inst, inputs, outs)
            row.update(trace._describe(inst, inputs, outs))
            if len(outs) == 1 and not isinstance(outs[0], tuple):
                trace.by_value[id(outs[0])] = row
            return outs
        def global_ids(family, blocks):
            ids = trace._saved[2](family, blocks)
            trace.spelt[int(family)] = int(ids[0])
            return ids
        af.step, af._new_ids = step, new_ids
        if self._saved[2] is not None:
            af._global_ids = global_ids
        return self

    def __exit__(self, *exc):
        self.affine.step, self.affine._new_ids = self._saved[:2]
        if self._saved[2] is not None:
            self.affine._global_ids = self._saved[2]
        return False

    def _describe(self, inst, inputs, outs) -> dict:
        if len(outs) != 1 or isinstance(outs[0], tuple):
            return {"form": False, "why": "several results"}
        o = outs[0]
        f = getattr(o, "affine", None)
        if f is None:
            return {"form": False, "why": self._why_none(inst, inputs, o)}
        rad = f.rad()
        rel = rad / np.maximum(np.abs(f.c), 1e-300)
        share = np.where(rad > 0, f.r / np.where(rad > 0, rad, 1), 0)
        local = f.ids >= getattr(self.affine, "LOCAL_BASE", 1 << 62)   # (the module before local families: none)
        row = {"form": True, "shape": f.shape, "K": f.A.shape[1], "rel": float(np.median(rel)),
               "r_share": float(np.median(share)), "local": int(np.sum(local))}
        if self.detail:
            row["sources"] = sources(self, f)
        return row

    def _why_none(self, inst, inputs, o) -> str:
        af = self.affine
        name = inst.spec.mnemonic
        if af._format(o.type) is None:
            return "not a real float of ≤ 24 bits"
        if name not in af.RULES and name not in af.MOVES and name != "select":
            return "no rule for this op"
        forms = [af.of(v) if af._format(getattr(v, "type", None)) is not None else None for v in inputs]
        if name not in af.MOVES and name != "select" and any(f is None for f in forms):
            return "an operand has no form (non-finite: e.g. a −inf init)"
        if all(f is None or not f.tracked() for f in forms):
            return "exact operands: the op's own range is its form"
        return "the rule gave none (may overflow, leaves a domain, or too large)"

    def source(self, ids: np.ndarray) -> np.ndarray:
        """The op index that made each symbol (−1: unknown); a local
        family's global symbols (spelt out by `_globalize`) count as the
        family's."""
        out = np.full(ids.shape, -1, dtype=np.int64)
        for lo, hi, op in self._ranges:
            m = (ids >= lo) & (ids < hi)
            out[m] = op
        spelt = self.spelt
        if spelt and np.any(out < 0):
            fams = np.array(list(spelt), dtype=np.int64)
            bases = np.array([spelt[f] for f in fams], dtype=np.int64)
            order = np.argsort(bases)
            fams, bases = fams[order], bases[order]
            k = np.searchsorted(bases, ids, side="right") - 1
            unknown = (out < 0) & (k >= 0)
            out[unknown] = self.source(fams[k[unknown]])
        return out


def resolution(e):
    from shlo_conform.suites.resolution import resolution as res
    return res(e)


def sources(trace: Trace, f, top: int = 6) -> list[tuple[str, float]]:
    """The largest contributors to the median element's radius of form `f`:
    Σ|A| grouped by the op that made each symbol, and r."""
    rad = f.rad()
    w = np.abs(f.A)
    src = trace.source(f.ids)
    out = {}
    for op in np.unique(src):
        cols = src == op
        share = np.median(w[:, cols].sum(axis=1) / np.where(rad > 0, rad, 1))
        name = "made before the trace" if op < 0 else f"#{op} {trace.rows[op]['op']}"
        out[name] = float(share)
    out["r (untracked)"] = float(np.median(f.r / np.where(rad > 0, rad, 1)))
    return sorted(out.items(), key=lambda kv: -kv[1])[:top]


class unlimited:
    """`--first-order`: every step's r made symbols of its own (global ones:
    no local family is ever boxed), no budget, no reduction — so Σ|A| of a
    value is Σ over every allowance of |∂value/∂allowance|·allowance, the
    first-order worst case computed exactly, and r only the second-order
    remainders and float64's own rounding."""

    def __enter__(self):
        from shlo_conform.oracle import affine
        self.af = affine
        self.saved = {k: getattr(affine, k) for k in ("K_MAX", "ENTRIES_MAX", "HELD_MAX", "_blocks", "step")}
        for k in ("K_MAX", "ENTRIES_MAX", "HELD_MAX"):
            setattr(affine, k, 1 << 40)
        affine._blocks = lambda shape: 1
        inner = affine.step

        def step(inst, inputs, outs):
            outs = inner(inst, inputs, outs)
            f = getattr(outs[0], "affine", None) if len(outs) == 1 and not isinstance(outs[0], tuple) else None
            if f is not None:
                outs[0].affine = affine._symbolize(f)
            return outs
        affine.step = step
        return self

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            setattr(self.af, k, v)
        return False


# --------------------------------------------------------------------------
# Sampled evaluation orders (bench/evaluation_orders.py)
# --------------------------------------------------------------------------

def evaluation_orders():
    from bench import evaluation_orders
    return evaluation_orders


def orders(text: str, args: list, exps: list, samples: int, seed: int = 0) -> list:
    """Each output's `evaluation_orders.Output` over `samples` sampled trees
    (the first a left fold) and XLA's own kernels (not counted in the spread)."""
    from shlo_conform.backends.xla import XlaBackend
    eo = evaluation_orders()
    xla = XlaBackend(dict(eo.XLA_STRICT))
    results = [dict() for _ in exps]
    counted = []
    strict, _ = eo.rewrite(text)
    for k, y in enumerate(xla.run(xla.compile(strict), args + [eo.ZERO_INPUT])):
        results[k]["xla-kernels"] = y
    rng = np.random.default_rng(seed)
    for s in range(samples):
        prog, _ = eo.rewrite(text, rng, left_fold=(s == 0))
        for k, y in enumerate(xla.run(xla.compile(prog), args + [eo.ZERO_INPUT])):
            results[k][f"order{s}"] = y
        counted.append(f"order{s}")
    return [eo.measure(e, results[k], counted) for k, e in enumerate(exps)]


# --------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------

def _pct(x) -> str:
    return "—" if x is None else ("∞" if not np.isfinite(x) else f"{x * 100:.3g}%")


def run_size(s: int, d: int, m: int, seed: int, ops: bool, first_order: bool, samples: int) -> int:
    text, args = lowered(s, d, m, seed)
    print(f"\n## {s}×{d}, MLP {m} (seed {seed})\n")
    with tempfile.TemporaryDirectory() as tmp:
        with Trace(detail=ops) as trace:
            t0 = time.perf_counter()
            exps = oracle(text, args, Path(tmp))
            t_oracle = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        first = None
        if first_order:
            if max(np.size(e.bits) for e in exps) > FIRST_ORDER_MAX:
                print(f"(--first-order refused: more than {FIRST_ORDER_MAX} elements in a value)")
            else:
                with unlimited(), Trace(detail=ops) as ftrace:
                    t0 = time.perf_counter()
                    first = oracle(text, args, Path(tmp))
                    t_first = time.perf_counter() - t0
    print(f"oracle {t_oracle:.1f} s (peak RSS of this process {peak:.0f} MiB)")
    hdr = ("| stage | what | enclosure median / max | form median (as made) | symbols (local families) | "
           "untracked share |")
    if first is not None:
        hdr += " first-order worst case median (Σ\\|A\\| of the unreduced forms) | enclosure ÷ first order |"
    print(hdr)
    print("|" + "---|" * (hdr.count("|") - 1))
    for k, (name, e) in enumerate(zip(STAGES, exps)):
        res = resolution(e)
        row = trace.by_value.get(id(e), {})
        if row.get("form"):
            line = (f"| {name} | {WHAT[name]} | {_pct(res.rel_median)} / {_pct(res.rel_max)} | {_pct(row['rel'])} | "
                    f"{row['K']} ({row['local']}) | {row['r_share']:.2f} |")
        else:
            line = f"| {name} | {WHAT[name]} | {_pct(res.rel_median)} / {_pct(res.rel_max)} | no form | — | — |"
        if first is not None:
            g = first[k].affine
            fo = np.median(_abs_rows(g.A) / np.maximum(np.abs(g.c), 1e-300))
            line += f" {_pct(fo)} | {res.rel_median / fo:.3g}× |" if fo > 0 else " 0 | — |"
        print(line)
    if first is not None:
        print(f"\n(first-order run: {t_first:.1f} s)")
    if ops:
        print("\n### Every op\n")
        print("| # | op | shape | symbols (local families) | median relative radius | untracked share | "
              "no form because |")
        print("|---|---|---|---|---|---|---|")
        for i, r in enumerate(trace.rows):
            if not r.get("form"):
                if r.get("why", "").startswith(("exact operands", "no rule")) and r["op"] == "constant":
                    continue
                print(f"| {i} | {r['op']} | | | | | {r.get('why', '')} |")
            else:
                print(f"| {i} | {r['op']} | {'×'.join(map(str, r['shape']))} | {r['K']} ({r['local']}) | "
                      f"{_pct(r['rel'])} | {r['r_share']:.2f} | |")
        print("\n### Where each stage's radius comes from, as made (median element: share of its radius)\n")
        for name, e in zip(STAGES, exps):
            row = trace.by_value.get(id(e), {})
            if row.get("sources"):
                print(f"* {name}: " + ", ".join(f"{src} {share:.2f}" for src, share in row["sources"]))
        if first is not None:
            print("\n### The same, first-order run (every allowance its own symbol)\n")
            for name, e in zip(STAGES, first):
                print(f"* {name}: " + ", ".join(f"{src} {share:.2f}" for src, share in sources(ftrace, e.affine)))
    bad = 0
    if samples:
        got = orders(text, args, exps, samples, seed)
        print(f"\n### {samples} sampled evaluation orders against the enclosure\n")
        print("| stage | sampled spread median / max | enclosure ÷ spread (median) | most of its allowance used | "
              "inside? | XLA's own kernels |")
        print("|---|---|---|---|---|---|")
        for name, o in zip(STAGES, got):
            inside = "yes" if not o.outside and not o.judged_fail else f"**NO** ({len(o.outside)} outside)"
            bad += bool(o.outside or o.judged_fail)
            own = o.own.get("xla-kernels")
            ratio = o.enc_median / o.spread_median if o.spread_median else float("inf")
            print(f"| {name} | {_pct(o.spread_median)} / {_pct(o.spread_max)} | {ratio:.3g}× | {_pct(o.used_max)} | "
                  f"{inside} | {'inside' if own and own[0] else '**outside**'} |")
            for x in o.outside[:3]:
                print(f"  outside: {x}")
    return bad


def _abs_rows(a):
    return np.abs(a).sum(axis=1) if a.shape[1] else np.zeros(a.shape[0])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", action="append", default=[], help="S×D×M, e.g. 32x64x128 (repeatable)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ops", action="store_true", help="every op's form, and where each stage's radius comes from")
    ap.add_argument("--first-order", action="store_true",
                    help="the first-order worst case, every allowance its own symbol (small sizes)")
    ap.add_argument("--orders", type=int, default=0, help="sampled evaluation orders held against the enclosure")
    ap.add_argument("--entries-max", type=int, default=None,
                    help="oracle/affine.py's ENTRIES_MAX (coefficients one form keeps; default 2^24)")
    ap.add_argument("--held-max", type=int, default=None,
                    help="oracle/affine.py's HELD_MAX (coefficients a run's forms hold together; default 2^27)")
    a = ap.parse_args(argv)
    from shlo_conform.oracle import affine
    for name, value in (("ENTRIES_MAX", a.entries_max), ("HELD_MAX", a.held_max)):
        if value is not None and hasattr(affine, name):
            setattr(affine, name, value)
    bad = 0
    for size in a.size or ["32x64x128"]:
        s, d, m = (int(v) for v in size.lower().replace("×", "x").split("x"))
        bad += run_size(s, d, m, a.seed, a.ops, a.first_order, a.orders)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
