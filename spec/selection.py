"""Reductions that select an element: argmax and argmin, whatever the schedule.

JAX lowers `jnp.argmax`/`argmin` (and `lax.argmax`, `jnp.nanargmax` after
its mask, the index half of `top_k`-free classifiers) to a variadic
`reduce` of (values, iota) whose body is

    P = compare(D, a, b) or compare(NE, a, a)            D: GT for argmax, LT for argmin
    Q = P or (compare(EQ, a, b) and compare(LT, i, j))
    return select(P, a, b), select(Q, i, j)

(jax/_src/lax/lax.py, `_compute_argminmax`; (a, i) the left operand, (b, j)
the right one).  That body is no pairwise monoid (spec/schedule.py), so
the oracle enumerated its schedules up to 12 leaves and said "any value"
beyond: every argmax over a row of 13 or more was unchecked.  It need not
be.  For the seed's schedules — full binary trees whose in-order traversal
is the leaves in index order, init values inserted anywhere — induction
over subtrees shows every tree gives one result.  Say "better" is D
(greater for GT), NaN better than anything:

* a subtree with a NaN leaf gives its first NaN leaf (value and index):
  P holds whenever the left operand is NaN, and a NaN right operand beats
  a non-NaN left one (D, NE and EQ are all false);
* otherwise, with m its best value and C its leaves comparing equal to m
  (±0 are equal), it gives (the value of C's last leaf, the least index in
  C): joining subtrees L and R, a strictly better side wins both
  components; on a tie P is false, so the value is R's (whose last member
  of C is the join's last), and Q picks L's index exactly when it is the
  lesser — a minimum, whatever the order.

So the result is that closed form, computed on whole rows
(`answers`).  An init value takes part like a leaf, inserted an
implementation-defined number of times at implementation-defined places:
it cannot change the result when it is strictly worse than the row's best
leaf, or the row has a NaN leaf and the init is not NaN — JAX's −inf (+inf
for argmin) init everywhere but a row of −infs.  Other rows (no leaf, an
init as good as the best) are left to schedule.py's enumeration.

Where the values are approximate upstream (an argmax of logits: each
value a range, oracle/propagation.py), the corner runs that carry ranges
through monotone ops do not apply to the index — it is not monotone in
the values.  `candidates` states instead every index that some point of
the ranges makes the winner: leaf j can win only if its range reaches the
best of the other leaves' worst ends (hi_j ≥ max_k lo_k for argmax),
a superset of the possible results, exactly the set when the ranges do not
touch.  A row whose ranges reach NaN, or whose init is not strictly worse
than every point, states any value.

Recognised on the reader's block (`Function.block`, as sort.py recognises a
comparator): the body's two returns as expression trees over its
arguments through compare, or, and and select (spec/expression.py: canonical
up to the operands' order of or/and/EQ/NE and GT(x, y) = LT(y, x)), equal to the
trees above for some D, with or without the NaN term (integers: JAX
writes it anyway; it is false there), values FLOAT, SIGNED or UNSIGNED (i1
included: `jnp.argmax` of a mask, its first True),
indices SIGNED or UNSIGNED (TOTALORDER is another order: not recognised).
A float body without the NaN term is another function too — a NaN on the
left loses there — and is not recognised.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import expression


@dataclass(frozen=True)
class Selection:
    """A recognised argmax (`better` "GT") or argmin ("LT") body."""

    better: str


READ = frozenset({"or", "and", "select"})


def _expected(better: str, vtype: str, itype: str, nan_term: bool) -> tuple:
    """The two returns of the body above, canonical."""
    a, i, b, j = (expression.arg(k) for k in range(4))
    cmp, op = expression.compare, expression.op
    p = cmp(better, vtype, a, b)
    if nan_term:
        p = op("or", p, cmp("NE", vtype, a, a))
    q = op("or", p, op("and", cmp("EQ", vtype, a, b), cmp("LT", itype, i, j)))
    return op("select", p, a, b), op("select", q, i, j)


def recognise(block) -> Selection | None:
    """The Selection a reduce body computes (module docstring), or None."""
    if block is None or len(getattr(block, "returns", ())) != 2 or len(block.args) != 4:
        return None
    vt, it = block.args[0][1].element_type, block.args[1][1].element_type
    if not (vt.is_float or vt.is_integer or vt.is_bool) or not it.is_integer or it.is_bool:
        return None
    got = expression.returns(block, READ)
    if got is None:
        return None
    vtype, itype = expression.legal_compare_types(vt)[0], expression.legal_compare_types(it)[0]
    for better in ("GT", "LT"):
        # without the NaN term a NaN wins only on the right: float bodies must have it (integers have no NaN)
        for nan_term in (True,) if vt.is_float else (True, False):
            if got == _expected(better, vtype, itype, nan_term):
                return Selection(better)
    return None


def of(fn) -> Selection | None:
    """The Selection of a region's Function, cached on its block."""
    return expression.cached(fn, "_selection", recognise)


def _better(sel: Selection, x, y):
    """x strictly better than y, as arrays (NaN: never)."""
    with np.errstate(invalid="ignore"):
        return x > y if sel.better == "GT" else x < y


def answers(sel: Selection, V: np.ndarray, I: np.ndarray, valid, init_v, is_float: bool, init_i=None):
    """(value, index, decided) per row of the leaves V (P×L: float64, or
    integers) and their indices I (integers), over the positions where
    `valid` holds (None: all), with init values (`init_v`, `init_i`)
    (module docstring); `decided` False where an init or an empty row
    leaves it to the schedules' enumeration.  An init tying the row's
    best decides nothing either unless it cannot matter: inserted, it is
    one more tied leaf, so the index is min(init_i, least) and the value
    may be its own — the same result as without it where init_i ≥ least
    and its value is the tied leaves' own, bit for bit (JAX's argmax of
    an all-False mask: init (false, 0), every leaf tied, least 0)."""
    P, L = V.shape
    ok = np.ones((P, L), dtype=bool) if valid is None else np.asarray(valid, dtype=bool)
    rows = np.arange(P)
    decided = ok.any(axis=1)
    value = np.zeros(P, dtype=V.dtype)
    index = np.zeros(P, dtype=I.dtype)
    if L == 0:
        return value, index, decided
    nan = (np.isnan(V) & ok) if is_float else np.zeros((P, L), dtype=bool)
    has_nan = nan.any(axis=1)
    first_nan = np.argmax(nan, axis=1)
    with np.errstate(invalid="ignore"):
        fill = (-np.inf if sel.better == "GT" else np.inf) if is_float else (
            np.iinfo(V.dtype).min if sel.better == "GT" else np.iinfo(V.dtype).max)
        W = np.where(ok & ~nan, V, fill)
        best = W.max(axis=1) if sel.better == "GT" else W.min(axis=1)
        tie = ok & ~nan & (W == best[:, None])
    last = L - 1 - np.argmax(tie[:, ::-1], axis=1)
    big = np.iinfo(I.dtype).max
    least = np.where(tie, I, big).min(axis=1)
    value[:] = np.where(has_nan, V[rows, first_nan], V[rows, last])
    index[:] = np.where(has_nan, I[rows, first_nan], least)
    if is_float and np.isnan(init_v):
        decided &= False
    else:
        absorbed = np.zeros(P, dtype=bool)
        if init_i is not None:
            with np.errstate(invalid="ignore"):
                absorbed = (best == init_v) & (init_i >= least)
            if is_float:   # a tie of ±0: the value is the last tied leaf's, the init's own where it comes last
                absorbed &= np.signbit(value) == np.signbit(init_v)
        decided &= has_nan | np.asarray(_better(sel, best, init_v)) | absorbed
    return value, index, decided


def candidates(sel: Selection, lo: np.ndarray, hi: np.ndarray, init_v, is_float: bool):
    """(rows × leaves mask of the leaves that some point of their ranges
    makes the winner, open rows): leaf j may win only where its range
    reaches the best of the row's worst ends (module docstring); a row is
    open (any value) where a range end is NaN, or the init is not strictly
    worse than every point the row's best can take."""
    if lo.shape[1] == 0 or (is_float and np.isnan(init_v)):
        return np.zeros(lo.shape, dtype=bool), np.ones(lo.shape[0], dtype=bool)
    with np.errstate(invalid="ignore"):
        nan = (np.isnan(lo) | np.isnan(hi)) if is_float else np.zeros(lo.shape, dtype=bool)
        if sel.better == "GT":
            floor = lo.max(axis=1)
            may = hi >= floor[:, None]
        else:
            floor = hi.min(axis=1)
            may = lo <= floor[:, None]
        init_ok = np.asarray(_better(sel, floor, init_v))
    return may, nan.any(axis=1) | ~init_ok
