"""The extremes of a short sum over every evaluation tree the spec allows, exactly.

spec.md's reduce (and dot_general, its sum of products) is `exec(schedule)`
for *some* full binary tree whose in-order traversal is the terms in index
order, each addition rounded to the result's format.  The oracle's order
allowance (oracle/affine.py `_order_allowance`: (n − 1)·u·max(P, N) +
u·Σ|t|) bounds every such tree, and every permutation too; for short sums
in a narrow format it is far from what the trees reach: 64 bf16 products,
±145 % of the median element, where the trees' extremes are ±7.5 %; 64 f16
products ±13.9 % where they are ±0.98 % — INCONCLUSIVE where the spec's own
set is narrow enough to judge.

**The extremes, by dynamic programming.**  Rounding to nearest is monotone
and so is addition, so the largest result of any tree over terms i..j is
max over the split s of RN(hi(i, s) + hi(s + 1, j)), and the least the same
with lo: the exact extremes over all Catalan(n − 1) trees in O(n³) per
element (the classic interval-parenthesisation recurrence; e.g. Cormen et
al., *Introduction to Algorithms*, 3rd ed., §15.2, there for costs).

**What else is allowed** (what `run` accepts from CPU backends, as the
allowance does): each product rounded to the format or kept exact (a fused
or wide multiply: f16·f16 and bf16·bf16 are exact in f32), each node rounded
to the format, to f32, or kept in float64 — the max over those choices at
each node keeps the recurrence exact, since each choice is monotone — and,
beside the trees, a sum in *any order* in an accumulator of f32 or wider
with the result rounded once into the format: [RN(s − γₙ·Σ|t|),
RN(s + γₙ·Σ|t|)] with γₙ of f32 (Higham, *Accuracy and Stability of
Numerical Algorithms*, 2nd ed., §4.2), which is how XLA:CPU computes an f16
dot_general (its results equal RN₁₆ of the f32 accumulation).  What is *not*
accepted any more is a permuted order rounded in the narrow format at each
node: the spec's trees keep the terms in index order (bench/evaluation_orders.py).

**Rigour.**  Sums are formed in float64 and rounded by `fast.round_fast`
(one RNE rounding): RN_p(RN₅₃(a + b)) = RN_p(a + b) for p ≤ 25, since
53 ≥ 2p + 2 (Figueroa, "When is double rounding innocuous?", SIGNUM Newsl.
30(3), 1995), so every format or f32 node is exact; a float64 node errs by
at most 2^-53 relative, so its value is moved outward by 2^-52 of its
magnitude (an upper end up, a lower end down) before it is used: every
end stays on its side of the true extreme.  Where a node may overflow the
result's format the elements get no statement here (None).

Used by `run` (oracle/affine.py, a contraction of exact operands: the
narrower of this and the op's own statement, per element) for sums of at
most `MAX_TERMS` terms and `MAX_WORK` element-steps.  Held against every
tree by enumeration in tests/oracle/test_every_tree.py.

**Longer sums: the largest block** (`largest_block`, `dot_general_blocks`).
Every node of such a tree sums a contiguous block of terms, so the largest
|Σ| of a block bounds what any node adds up to — for terms of both signs
about √n of them, where the sum of one sign is n/2 — and with it the
tree's rounding error (oracle/affine.py `_tree_allowance`, docs/oracle-
evaluation.md "Trees in index order"), for sums of any length in any
format.  `working_bytes` states what both hold while a step runs
(oracle/cost.py).
"""
from __future__ import annotations

import numpy as np

from ..spec.types import F32
from .fast import round_fast

MAX_TERMS = 128          # n: the recurrence is O(n³) an element
MAX_WORK = 1 << 28       # n³/6 · elements: about a second of numpy
CHUNK = 1 << 22          # n² · elements held at once (float64): 32 MiB a table


def affordable(n: int, elements: int) -> bool:
    return 2 <= n <= MAX_TERMS and n ** 3 // 6 * elements <= MAX_WORK


def extremes(terms: np.ndarray, fmt, exact_products: np.ndarray | None = None) -> tuple | None:
    """(lo, hi) in float64, each element's least and largest allowed result
    (module docstring) of summing its row of `terms` (elements × n, the
    products as the format rounds them, or the summands) — or None where a
    node may overflow.  `exact_products`: the same products unrounded,
    which a fused or wide multiply keeps (None: the terms are summands)."""
    terms = np.asarray(terms, dtype=np.float64)
    rows, n = terms.shape
    exact_products = terms if exact_products is None else np.asarray(exact_products, dtype=np.float64)
    lo, hi = np.empty(rows), np.empty(rows)
    step = max(1, CHUNK // (n * n))
    for a in range(0, rows, step):
        got = _trees(terms[a:a + step], exact_products[a:a + step], fmt)
        if got is None:
            return None
        lo[a:a + step], hi[a:a + step] = got
    # any order in a wide accumulator (f32 or wider), rounded once into the format
    s, mag = exact_products.sum(axis=1), np.abs(exact_products).sum(axis=1)
    u = 2.0 ** -F32.precision
    gamma = n * u / (1 - n * u) + (n + 2) * 2.0 ** -52   # f32's, and float64's own in forming s and mag
    wide_lo, wide_hi = _final(s - gamma * mag, fmt), _final(s + gamma * mag, fmt)
    if wide_lo is None or wide_hi is None:
        return None
    return np.minimum(lo, wide_lo), np.maximum(hi, wide_hi)


def _nodes(v: np.ndarray, fmt, up: bool) -> tuple:
    """A node's value `v` = RN₅₃(a + b) kept wide — moved outward past
    a + b itself, since a float64 node is a rounding of its own — rounded
    to f32, or to the format (both exact roundings of a + b: Figueroa)."""
    wide = v + (np.abs(v) * 2.0 ** -52 + 2.0 ** -1000) * (1 if up else -1)
    return wide, round_fast(v, F32), round_fast(v, fmt)


def _trees(t: np.ndarray, p: np.ndarray, fmt) -> tuple | None:
    rows, n = t.shape
    leaf_lo, leaf_hi = np.minimum(t, p), np.maximum(t, p)
    # by length: lo[L][i], hi[L][i] for the terms i .. i + L - 1 (L = 1 … n), arrays (n − L + 1, rows)
    lo, hi = {1: leaf_lo.T.copy()}, {1: leaf_hi.T.copy()}
    with np.errstate(over="ignore", invalid="ignore"):
        for L in range(2, n + 1):
            m = n - L + 1
            best_lo = np.full((m, rows), np.inf)
            best_hi = np.full((m, rows), -np.inf)
            for s in range(1, L):
                sum_hi = hi[s][:m] + hi[L - s][s:s + m]
                sum_lo = lo[s][:m] + lo[L - s][s:s + m]
                for v in _nodes(sum_hi, fmt, up=True):
                    np.maximum(best_hi, v, out=best_hi)
                for v in _nodes(sum_lo, fmt, up=False):
                    np.minimum(best_lo, v, out=best_lo)
            if not (np.all(np.isfinite(best_hi)) and np.all(np.isfinite(best_lo))):
                return None
            lo[L], hi[L] = best_lo, best_hi
    final_lo, final_hi = _final(lo[n][0], fmt), _final(hi[n][0], fmt)
    if final_lo is None or final_hi is None:
        return None
    return final_lo, final_hi


def _final(v: np.ndarray, fmt) -> np.ndarray | None:
    """An extreme rounded into the format (monotone: the rounding of a bound
    bounds the rounding), None where it overflows."""
    with np.errstate(over="ignore", invalid="ignore"):
        r = round_fast(v, fmt)
    if not np.all(np.isfinite(r)) or np.any(np.abs(r) > float(fmt.max_finite)):
        return None
    return r


def _operand_rows(x: np.ndarray, y: np.ndarray, lb, rb, lc, rc) -> tuple | None:
    """Each operand as (batch, its free elements, the n terms of the one
    contracting dimension), the layout of the result's order (batch, lhs
    free, rhs free); None for several contracting dimensions (whose order
    of terms this module does not read) or none."""
    if len(lc) != 1:
        return None
    n = x.shape[lc[0]]

    def rows(a, batch, contract):
        free = [d for d in range(a.ndim) if d not in batch and d not in contract]
        t = np.transpose(a, list(batch) + free + list(contract))
        return t.reshape(-1, int(np.prod(t.shape[len(batch):-1], dtype=np.int64)), n)
    return rows(x, lb, lc), rows(y, rb, rc)


def dot_general_rows(x: np.ndarray, y: np.ndarray, lb: list, rb: list, lc: list, rc: list) -> np.ndarray | None:
    """The products of a dot_general of exact operands `x`, `y` (float64
    arrays), one row per result element in the result's order, its terms in
    the order of the one contracting dimension (`_operand_rows`)."""
    got = _operand_rows(x, y, lb, rb, lc, rc)
    if got is None:
        return None
    xs, ys = got
    return (xs[:, :, None, :] * ys[:, None, :, :]).reshape(-1, xs.shape[-1])


def largest_block(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Per row of terms in index order (rows × n, each term in [lo, hi]),
    the largest |Σ| of a contiguous block of them: max over blocks of
    max(Σ hi, −Σ lo), each a maximum subarray sum (prefix sums less their
    running minimum).  Every node of a tree whose leaves keep index order
    sums a contiguous block, so this bounds what any node adds up to
    (oracle/affine.py `_tree_allowance`) — for terms of both signs about
    √n of them where the sum of one sign is n/2.  Moved up by float64's own
    error in the prefix sums (twice γ₆₄(n + 2) of the terms' magnitudes)."""
    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    n = lo.shape[1]

    def most(a):
        p = np.concatenate([np.zeros((a.shape[0], 1)), np.cumsum(a, axis=1)], axis=1)
        return (p[:, 1:] - np.minimum.accumulate(p[:, :-1], axis=1)).max(axis=1)
    mag = np.maximum(np.abs(lo), np.abs(hi)).sum(axis=1)
    return np.maximum(most(hi), most(-lo)) + 2 * (n + 2) * 2.0 ** -52 * mag + 2.0 ** -1000


BLOCK_CHUNK = 1 << 21     # products held at once by `dot_general_blocks`
BLOCK_WORK = 1 << 28      # products `dot_general_blocks` takes on


def dot_general_blocks(x: np.ndarray, y: np.ndarray, lb, rb, lc, rc) -> np.ndarray | None:
    """`largest_block` of each result element's products (a dot_general of
    float64 arrays `x`, `y`), in the result's order (batch, lhs free, rhs
    free); None for several contracting dimensions or past `BLOCK_WORK`
    products.  The products are formed a chunk of result rows at a time.
    Over operand ranges the caller adds the sum of the products' radii,
    which every block's sum can move by at most."""
    got = _operand_rows(x, y, lb, rb, lc, rc)
    if got is None:
        return None
    xs, ys = got
    n = xs.shape[-1]
    batches, fx, fy = xs.shape[0], xs.shape[1], ys.shape[1]
    if batches * fx * fy * n > BLOCK_WORK:
        return None
    out = np.empty((batches, fx, fy))
    step = max(1, BLOCK_CHUNK // max(1, fy * n))
    for b in range(batches):
        for a in range(0, fx, step):
            t = (xs[b, a:a + step, None, :] * ys[b, None, :, :]).reshape(-1, n)
            out[b, a:a + step] = largest_block(t, t).reshape(-1, fy)
    return out.reshape(-1)


def working_bytes(inst) -> int:
    """What `run`'s statements here hold while a step runs (oracle/cost.py
    adds it to the step's working memory with affine forms): the recurrence's
    tables for a chunk of elements and its terms, a dot_general's chunk of
    products with its prefix sums, or an add-reduce's terms, prefix sums and
    running minima — each the largest its caps allow for this op."""
    name = inst.spec.mnemonic
    ops = {k: v for k, v in inst.operands.items() if hasattr(v, "shape")}
    if name == "dot_general":
        lc = [int(d) for d in inst.attributes.get("lhs_contracting_dimensions") or []]
        x = ops.get("lhs")
        result = next(iter(inst.results.values()))
        if x is None or len(lc) != 1 or not hasattr(result, "shape"):
            return 0
        n, size = int(x.shape[lc[0]]), 1
        for d in result.shape:
            size *= int(d)
        products = min(size * n, BLOCK_CHUNK + n * n)
        w = 3 * 8 * products   # products, prefix sums, running minima (the differences reuse the forms' room)
        et = result.element_type
        if et.is_float and not et.is_complex and et.format.precision < F32.precision and affordable(n, size):
            rows = min(size, max(1, CHUNK // (n * n)))
            w = max(w, 8 * (rows * n * (n + 1) + 12 * rows * n) + 4 * 8 * size * n)   # tables lo, hi; the terms
        return w
    if name == "reduce":
        inputs = inst.operands.get("inputs") or []
        if len(inputs) != 1 or not hasattr(inputs[0], "shape"):
            return 0
        x = inputs[0]
        n = 1
        for d in x.shape:
            n *= int(d)
        return 6 * 8 * n
    return 0
