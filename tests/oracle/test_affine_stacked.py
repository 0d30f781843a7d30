"""oracle/affine.py through stacked stages: a transformer block stays judged (issue 32).

Outside a loop every allowance used to stay in a form's untracked radius r,
which each later use sees as a fresh box: a row's mean subtracted from its
own elements, q and k of one layer norm meeting in q·kᵀ, a contraction's
result contracted again — each counted its deviation once per path, and a
JAX transformer block (bench/stacked_blocks.py) compounded to ±250 % after
its MLP at 32×64 (every backend INCONCLUSIVE).  Now r becomes symbols at
contractions and at the operands of broadcasts, as local families where a
value has rows (module docstring of oracle/affine.py).

Truth here is not the oracle's: XLA's outputs computed with jax, wrong
answers made from them (zeroed, negated, scaled by 1.01 —
tests/cli/fixtures/wrong.py), and a brute force written in this file — a
small program whose blocks mix (a transposed contraction over its rows)
evaluated in numpy float32, every sum by a random tree over its terms in
index order (the orders the spec allows), every tanh at a random value of
its 4-ULP tolerance — each of whose results a conforming implementation
may return, so each must lie inside — and the same program with every sum
at an end of its allowance, which the enclosure must hold too (sampled
orders alone stay far inside: they would not notice an allowance halved)."""
from __future__ import annotations

import re
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from shlo_conform import differential
from shlo_conform.cli import main
from shlo_conform.oracle import affine
from shlo_conform.suites.compare import compare
from shlo_conform.suites.resolution import RESOLVED, resolution
from tests.run_report import verdicts as read_verdicts

ROOT = Path(__file__).resolve().parents[2]
WRONG = ROOT / "tests" / "cli" / "fixtures" / "wrong.py"


def _bench():
    from bench import stacked_blocks
    return stacked_blocks


def _expectations(text: str, args: list, tmp_path) -> list:
    """The expectations `run` judges with, computed in this process."""
    np.savez(tmp_path / "in.npz", **{f"arg{i}": a for i, a in enumerate(args)})
    data = text.encode()
    prep = differential.prepare(data)
    exps, why = differential.expectations(data, differential.npz_inputs(str(tmp_path / "in.npz"), prep.types))
    assert exps is not None, why
    return exps


# --------------------------------------------------------------------------
# The transformer block, end to end
# --------------------------------------------------------------------------

@pytest.mark.long   # ~14 s at the size: make test-long (CI); make test keeps the 16×32 block (next test) and
# test_run_verdicts' one-percent error caught through `run`
def test_the_transformer_block_agrees_for_xla_and_every_wrong_answer_is_caught(tmp_path, capsys):
    """32×64, MLP 128 — the issue's size — through `run`: every stage's
    value (layer norm, projection, softmax, attention + residual, layer
    norm, GELU, block output) is "agrees" for XLA, where the block's output
    was INCONCLUSIVE at ±250 %; XLA's outputs zeroed, negated and scaled by
    1.01 DISAGREE on every one.  The block's output is judged within
    ±0.2 % on its median element (the verdict's own width line)."""
    sb = _bench()
    text, args = sb.lowered(32, 64, 128)
    (tmp_path / "p.mlir").write_text(text)
    np.savez(tmp_path / "in.npz", *args)
    rc = main(["run", str(tmp_path / "p.mlir"), f"--backend=xla,{WRONG}:Zeroed,{WRONG}:Negated,{WRONG}:Scaled",
               "--inputs", str(tmp_path / "in.npz")])
    out = capsys.readouterr().out
    verdicts = read_verdicts(out)
    assert verdicts["xla"] == ["agrees"] * len(sb.STAGES), out
    for name in ("Zeroed", "Negated", "Scaled"):
        assert verdicts[f"{WRONG}:{name}"] == ["DISAGREES"] * len(sb.STAGES), out
    assert rc == 1
    xla = out.split("\nxla ", 1)[1].split(f"\n{WRONG}", 1)[0]
    last = xla.split(f"  #{len(sb.STAGES) - 1} ", 1)[1]
    median = float(re.search(r"enclosure ±(\S+)% median", last).group(1)) / 100
    assert median < 0.002, last


def test_boxing_every_form_leaves_the_block_inconclusive(tmp_path, monkeypatch):
    """What the symbols buy, at 16×32, MLP 64: the same run with every form
    boxed as soon as the next is made (HELD_MAX 0: no correlation kept
    past one op, as before this change) leaves the block's output wider
    than RESOLVED on its median element; with them it is resolved — and
    XLA's outputs (jax's) lie inside both, since both are sound."""
    sb = _bench()
    text, args = sb.lowered(16, 32, 64)
    ys = [np.asarray(y) for y in jax.jit(sb.block)(*args)]
    tight = _expectations(text, args, tmp_path)
    monkeypatch.setattr(affine, "HELD_MAX", 0)
    loose = _expectations(text, args, tmp_path)
    for e_t, e_l, y in zip(tight, loose, ys):
        assert compare(e_t, y).ok and compare(e_l, y).ok
    assert resolution(tight[-1]).rel_median < RESOLVED < resolution(loose[-1]).rel_median, (
        resolution(tight[-1]), resolution(loose[-1]))


# --------------------------------------------------------------------------
# Brute force: a program whose blocks mix
# --------------------------------------------------------------------------

def _program(x, w):
    """Rows (local families), a row's mean broadcast over it (symbols shared
    by every copy), then the rows transposed and contracted (the families
    spelt out as global symbols, or boxed)."""
    h = x @ w
    c = h - h.mean(-1, keepdims=True)
    return jnp.tanh(c.T @ c / 4), c * jnp.tanh(h)


def _tree_sum(terms: np.ndarray, rng) -> np.ndarray:
    """Σ over the first axis by a random full binary tree whose leaves, in
    order, are the terms in index order — each node one float32 add."""
    n = terms.shape[0]
    if n == 1:
        return terms[0]
    k = int(rng.integers(1, n))
    return np.float32(_tree_sum(terms[:k], rng) + _tree_sum(terms[k:], rng))


def _dot(a: np.ndarray, b: np.ndarray, rng) -> np.ndarray:
    """a @ b: every product rounded to float32, summed by a random tree."""
    products = (a.T[:, :, None] * b[:, None, :]).astype(np.float32)   # [k, i, j], each rounded once
    return _tree_sum(products, rng)


def _tanh(z: np.ndarray, rng) -> np.ndarray:
    """tanh correctly rounded (from float64), then moved up to its 4-ULP tolerance."""
    v = np.tanh(z.astype(np.float64)).astype(np.float32).reshape(-1)
    for i in range(v.size):
        k = int(rng.integers(-4, 5))
        for _ in range(abs(k)):
            v[i] = np.nextafter(v[i], np.float32(np.inf if k > 0 else -np.inf))
    return v.reshape(z.shape)


def _brute(x, w, rng) -> tuple:
    """One allowed result of `_program`, op by op as JAX lowers it."""
    h = _dot(x, w, rng)
    s = _tree_sum(np.concatenate([np.zeros((1, h.shape[0]), np.float32), h.T]), rng)   # reduce, init 0 first
    m = (s / np.float32(h.shape[1])).astype(np.float32)
    c = (h - m[:, None]).astype(np.float32)
    g = (_dot(c.T, c, rng) / np.float32(4)).astype(np.float32)
    return _tanh(g, rng), (c * _tanh(h, rng)).astype(np.float32)


U = 2.0 ** -24   # float32's unit roundoff


def _block(t, xp=jnp):
    """The largest |Σ| of a contiguous block of the last axis's terms, by
    every pair of prefix sums (brute force, not oracle/every_tree.py's)."""
    p = xp.concatenate([xp.zeros(t.shape[:-1] + (1,), t.dtype), xp.cumsum(t, -1)], -1)
    return xp.max(xp.abs(p[..., :, None] - p[..., None, :]), axis=(-1, -2))


def _signed(a, b, n: int, xp=jnp):
    """A sum of n products aᵢ·bᵢ by a tree that keeps them in index order,
    products rounded: each of the n − 1 additions rounds a node's sum, the
    sum of a contiguous block, to first order (n − 1)·u·(the largest block's
    |Σ|), and each product u·|aᵢbᵢ| (oracle/affine.py `_tree_allowance`)."""
    t = xp.swapaxes(a[:, :, None] * b[None, :, :], 1, 2)   # (rows, columns, n)
    return 0.999 * ((n - 1) * U * _block(t, xp) + U * (xp.abs(a) @ xp.abs(b)))


def _model(d: dict, x, w):
    """`_program` in float64 with each step moved by d[step] ∈ [−1, 1]ⁿ
    times an allowance no larger than the oracle's for that step on these
    operands: a contraction of n terms (n − 1)·u·(largest block) + u·Σ|terms|
    (`_signed`), a sum of n terms (n − 1)·u·(largest block) (a zero init
    adds nothing), a basic op 0.49 ULP of float32 at its value, a
    tanh 4.49 ULP (4 ULP of tolerance around its correctly rounded value);
    nothing rounded in between.  Every such evaluation is a point of the
    set the oracle's forms enclose.  Both outputs, flattened, concatenated."""
    sg = jax.lax.stop_gradient

    def ulp(v):
        return jnp.spacing(jnp.abs(sg(v)).astype(jnp.float32)).astype(jnp.float64)
    h = x @ w + d["h"] * _signed(x, w, x.shape[1])
    hs = sg(h)
    s = h.sum(1) + d["s"] * 0.999 * (h.shape[1] - 1) * U * _block(hs)
    m = s / h.shape[1] + d["m"] * 0.49 * ulp(s / h.shape[1])
    c = h - m[:, None]
    c = c + d["c"] * 0.49 * ulp(c)
    g = c.T @ c + d["g"] * sg(_signed(c.T, c, c.shape[0]))
    q = g / 4 + d["q"] * 0.49 * ulp(g / 4)
    t0 = jnp.tanh(q) + d["t0"] * 4.49 * ulp(jnp.tanh(q))
    t1 = jnp.tanh(h) + d["t1"] * 4.49 * ulp(jnp.tanh(h))
    y = c * t1 + d["y"] * 0.49 * ulp(c * t1)
    return jnp.concatenate([t0.reshape(-1), y.reshape(-1)])


def _corners(x, w) -> tuple[np.ndarray, np.ndarray]:
    """Per output element, `_model` at the two corners of the allowances
    that move that element most to first order: every d at ± the sign of
    the element's derivative (by JAX's autodiff, in float64).  Sampled
    orders stay near the center and would not notice an allowance halved;
    these reach the enclosure's edges.  (the center, the corners [element, side])."""
    r, c = x.shape[0], w.shape[1]
    shapes = {"h": (r, c), "s": (r,), "m": (r,), "c": (r, c), "g": (c, c), "q": (c, c), "t0": (c, c),
              "t1": (r, c), "y": (r, c)}
    with jax.enable_x64(True):
        x64, w64 = jnp.asarray(x, jnp.float64), jnp.asarray(w, jnp.float64)
        zero = {name: jnp.zeros(shape, jnp.float64) for name, shape in shapes.items()}
        center = np.asarray(_model(zero, x64, w64))
        jac = jax.jacrev(_model)(zero, x64, w64)
        corners = np.empty((center.size, 2))
        for j in range(center.size):
            for side, sign in enumerate((1.0, -1.0)):
                d = {name: sign * jnp.sign(jac[name][j]) for name in shapes}
                corners[j, side] = np.asarray(_model(d, x64, w64))[j]
    return center, corners


def _exact(x, w) -> tuple:
    """`_program` in float64 with nothing rounded: inside every enclosure too."""
    h = x.astype(np.float64) @ w.astype(np.float64)
    c = h - h.mean(-1, keepdims=True)
    return np.tanh(c.T @ c / 4), c * np.tanh(h)


BUDGETS = {
    "families spelt out": {},
    "families boxed": {"SPREAD": 1 << 30},
    "few symbols (Girard)": {"K_MAX": 4},
    "forms boxed by the held budget": {"HELD_MAX": 0},
}


# families spelt out and forms boxed by the held budget: brute-forced in `make test-long` (CI runs it); `make test`
# keeps the boxed families and Girard's reduction
LONG_BUDGETS = ("families spelt out", "forms boxed by the held budget")


@pytest.mark.parametrize("budget", [pytest.param(b, marks=pytest.mark.long) if b in LONG_BUDGETS else b
                                    for b in BUDGETS])
def test_every_sampled_evaluation_lies_inside_the_enclosure(budget, tmp_path, monkeypatch):
    for name, value in BUDGETS[budget].items():
        monkeypatch.setattr(affine, name, value)
    spelt = []
    inner = affine._global_ids
    monkeypatch.setattr(affine, "_global_ids", lambda family, blocks: spelt.append(family) or inner(family, blocks))
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    w = rng.standard_normal((4, 5)).astype(np.float32)
    exps = _expectations(jax.jit(_program).lower(x, w).as_text(), [x, w], tmp_path)
    if budget == "families spelt out":   # the mechanisms this file is about are engaged, not bypassed
        assert np.any(exps[1].affine.ids >= affine.LOCAL_BASE)
        assert set(spelt) & set(int(k) for k in exps[1].affine.ids)   # c's families, spelt out at cᵀ
    brute = [_brute(x, w, rng) for _ in range(200)] + [_exact(x, w)]
    for k, e in enumerate(exps):
        got = np.array([s[k] for s in brute], dtype=np.float64).reshape(len(brute), -1)
        lo, hi = (np.asarray(v).view(np.float32).astype(np.float64).reshape(-1) for v in (e.lo, e.hi))
        assert np.all(got >= lo) and np.all(got <= hi), (budget, k, got.min(0) - lo, hi - got.max(0))
        assert all(compare(e, s[k]).ok for s in brute[:-1])
        assert np.any(got.max(0) > got.min(0))   # the brute force does explore: its results differ
    center, corners = _corners(x, w)
    lo, hi = (np.concatenate(v) for v in zip(*(e.affine.lo_hi() for e in exps)))   # the forms alone
    assert np.all(corners >= lo[:, None]) and np.all(corners <= hi[:, None]), (budget, corners, lo, hi)
    reach = np.abs(corners - center[:, None]).max(1) / ((hi - lo) / 2)
    assert np.median(reach) > 0.25, reach   # the corners test the forms' edges, not their middle


@pytest.mark.parametrize("budget", ["families spelt out", "families boxed"])
def test_a_sum_over_the_rows_counts_each_rows_deviation_apart(budget, tmp_path, monkeypatch):
    """v @ (tanh(x) @ w), v alternating ±1: each row of tanh(x) @ w deviates
    by its own allowance (64 terms, `_signed`) — the rows' symbols are local
    families — and the sum over rows adds them with alternating signs.
    Taken as one symbol for every row they would cancel; as the distinct
    deviations they are, the row deviations chosen with v's signs (each
    rounded toward the exact value: a float inside its row's allowance,
    tanh correctly rounded) move the result by their whole sum — inside the
    enclosure and inside the form alone."""
    for name, value in BUDGETS[budget].items():
        monkeypatch.setattr(affine, name, value)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 64)).astype(np.float32)
    w = rng.standard_normal((64, 3)).astype(np.float32)
    v = np.array([1, -1, 1, -1], np.float32)
    program = jax.jit(lambda x, w, v: v @ (jnp.tanh(x) @ w))
    [e] = _expectations(program.lower(x, w, v).as_text(), [x, w, v], tmp_path)
    t64 = np.tanh(x.astype(np.float64)).astype(np.float32).astype(np.float64)
    w64 = w.astype(np.float64)
    exact = t64 @ w64
    lo_e, hi_e = (np.asarray(b).view(np.float32).astype(np.float64) for b in (e.lo, e.hi))
    lo_f, hi_f = e.affine.lo_hi()
    for side in (1.0, -1.0):
        h = exact + side * v[:, None] * _signed(t64, w64, 64, np)
        h32 = h.astype(np.float32)
        h32 = np.where(np.abs(h32 - exact) > np.abs(h - exact), np.nextafter(h32, exact.astype(np.float32)), h32)
        out = v.astype(np.float64) @ h32.astype(np.float64)   # exactly: one point of every order's range
        assert np.all(lo_e <= out) and np.all(out <= hi_e), (out, lo_e, hi_e)
        assert np.all(lo_f <= out) and np.all(out <= hi_f), (out, lo_f, hi_f)


# --------------------------------------------------------------------------
# Local families spelt out: the same form
# --------------------------------------------------------------------------

def test_spelling_out_local_families_keeps_the_form_and_the_names():
    """A form over 3 blocks of 4 elements with two local families: spelt out
    (`_globalize`) it has the same center, radius and untracked part, each
    family's coefficients in block b on one global symbol of its own, and a
    second form carrying the same family gets the same global ids — so a
    contraction over the blocks afterwards cancels what it should."""
    rng = np.random.default_rng(0)
    n, blocks = 12, 3
    fams = affine._new_ids(2, local=True)
    glob = affine._new_ids(1)
    ids = np.concatenate([glob, fams])
    A = rng.standard_normal((n, 3))
    f = affine.Form(rng.standard_normal(n), ids, A, np.abs(rng.standard_normal(n)), (blocks, 4))
    with affine.enable():   # one run: its table of spelt-out families
        g = affine._globalize(f)
        other = affine._globalize(affine.Form(np.zeros(n), fams[:1], np.ones((n, 1)), np.zeros(n), (blocks, 4)))
        spelt = dict(affine._HELD.get().spelt)
    assert np.array_equal(g.c, f.c) and np.array_equal(g.r, f.r) and np.allclose(g.rad(), f.rad(), rtol=1e-15)
    assert not np.any(g.ids >= affine.LOCAL_BASE) and g.A.shape[1] == 1 + 2 * blocks
    block_of = np.arange(n) // 4
    for j, fam in enumerate(fams):
        base = spelt[int(fam)]
        for b in range(blocks):
            col = g.A[:, list(g.ids).index(base + b)]
            assert np.array_equal(col, np.where(block_of == b, A[:, 1 + j], 0.0))
    assert set(other.ids) <= set(g.ids)
    diff = affine._linear([g, other], [1.0, -1.0], (blocks, 4))   # shared symbols: one column each, subtracted
    for k in other.ids:
        d, a, b = (x.A[:, list(x.ids).index(k)] for x in (diff, g, other))
        assert np.array_equal(d, a - b)
    assert diff.A.shape[1] == g.A.shape[1]


@pytest.mark.parametrize("xs, ys, lb, rb, lc, rc", [
    ((3, 4), (4, 5), [], [], [1], [0]), ((4, 3), (4, 5), [], [], [0], [0]), ((3, 4), (5, 4), [], [], [1], [1]),
    ((4, 3), (5, 4), [], [], [0], [1]), ((2, 3, 4), (4, 3, 5), [], [], [1, 2], [1, 0]),
    ((2, 3, 4), (3, 5, 4), [], [], [2, 1], [2, 0]), ((4,), (4, 5), [], [], [0], [0]), ((3, 4), (4,), [], [], [1], [0]),
    ((2, 3, 4), (2, 4, 5), [0], [0], [2], [1]), ((3, 2, 4), (4, 2, 5), [1], [1], [2], [0])])
def test_the_contraction_of_coefficients_is_numpy_einsum_for_every_layout(xs, ys, lb, rb, lc, rc):
    """`_coefficients` (BLAS straight into the result's layout) against
    np.einsum with the symbols as a trailing axis, each operand carrying
    them in turn: every dot_general layout, batch dimensions included."""
    rng = np.random.default_rng(0)
    letters = iter("abcdefghij")
    ls = [next(letters) for _ in xs]
    rs = [None] * len(ys)
    for a, b in [*zip(lb, rb), *zip(lc, rc)]:
        rs[b] = ls[a]
    rs = [v or next(letters) for v in rs]
    out = [ls[d] for d in lb] + [ls[d] for d in range(len(xs)) if d not in lb + lc] + \
          [rs[d] for d in range(len(ys)) if d not in rb + rc]
    sx, sy, so, k = "".join(ls), "".join(rs), "".join(out), "z"
    a = rng.standard_normal((int(np.prod(xs)), 3))
    y = rng.standard_normal(ys)
    got = affine._coefficients(a, xs, y, lb, lc, rb, rc, True, (sx, sy, so, k))
    assert np.allclose(got, np.einsum(f"{sx}{k},{sy}->{so}{k}", a.reshape(xs + (3,)), y).reshape(-1, 3))
    b = rng.standard_normal((int(np.prod(ys)), 3))
    x = rng.standard_normal(xs)
    got = affine._coefficients(b, ys, x, rb, rc, lb, lc, False, (sx, sy, so, k))
    assert np.allclose(got, np.einsum(f"{sx},{sy}{k}->{so}{k}", x, b.reshape(ys + (3,))).reshape(-1, 3))
