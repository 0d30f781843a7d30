"""sort — `inputs` sorted together along `dimension` by `comparator` (spec section "sort").

Readings:
* The formal sentence ("for all `0 <= id < jd < dim(inputs[0], d)`, either
  `compare_i_j = compare_j_i = false` or `compare_i_j = true`") applies the
  comparator to `inputs[0][i], inputs[0][j], …`; it is read as a statement
  about the *results* (the inputs are given; the sentence describes their
  sorted order), and the results are read as one permutation of each input
  row along `d`, applied to every input together ("Sorts a variadic number
  of tensors … together").
* Stability is in the prose only: elements the comparator calls equal
  (both comparisons false) keep their relative order when `is_stable`.
* `dimension` and `is_stable` are written as attributes; a program may
  leave them out (the MLIR defaults, -1 and false, are read then).

Semantics, judged by calling the comparator on the values at hand (each
row along `d` on its own; the comparison matrix is computed once per row).
Where the comparator compares one key computed alike from each element
(`key_comparison`: a single `compare`, lax.top_k's, JAX's NaN-aware
total order), that matrix is the order of the row's keys, and the row is
sorted by them (numpy's stable argsort): the same answer, without calling
the comparator on every pair.
* The comparator is a strict weak order on the row (irreflexive,
  transitive, incomparability transitive): a stable sort has one answer;
  an unstable one may put any element of a tie class at any position the
  class occupies.  Those are offered per position (`dsl.Choices`, labelled
  "ties reordered: tied element #t"), in every result: joint consistency
  across the results (key and payload from the same input element) and
  the permutation property within a tie block are not checked — slightly
  lenient.  Ties whose elements have the same bits in every input offer
  nothing (no order shows).
* It is not a strict weak order on the row (`le`/`ge` with repeated keys,
  `lt`/`gt` on floats with NaN, complex keys with a NaN component): the seed
  does not say what `sort` does then.  The primary value is an order that
  meets the formal condition (when one exists), then, per position, the
  values the formal condition allows there ("formal condition: element #t",
  up to `MAX_FORMAL_ROW` elements a row) and, last, any value ("any value:
  …").  So such elements never fail, and the report names which
  alternative a backend took; generated cases with `le`/`ge` comparators
  are surveys as a whole (`survey_reason`).

Findings:
* C5 writes `(tensor<E1>, tensor<E1>, ..., tensor<EN-1>, tensor<EN-1>)`
  with `Ei` the element type of `inputs[i]`: the first pair must be E0
  (the inputs are numbered from 0, and the formal sentence passes
  `inputs[0]` first).  Encoded as E0, E0, …, EN-1, EN-1.
* The formal sentence quantifies over `inputs`, not `results` (above), and
  never says the results are a permutation of the inputs.
* With a comparator that is not a strict weak order, the formal condition
  can contradict stability: `lt` on `[3, NaN, 1]` with `is_stable`: 3 and
  NaN are "equal", so are NaN and 1, so stability keeps 3 before NaN before
  1, while the formal condition forbids 3 before 1.  A cyclic comparator
  meets the formal condition with no order at all.
* C4 (`-R <= dimension < R`) makes every rank-0 sort invalid (jaxlib's
  verifier agrees: "must be in range [-0, 0)"), and read with no `R` when
  there are no inputs, it implies C1.

Limits: the comparator runs through the region's `call`, which gives the
primary value of each op in its body.  Where the body's `compare` has
implementation-defined alternatives (TOTALORDER on -0 and +0: compare's
finding), the sort follows the primary reading (totalOrder alone, as XLA);
generated `lt_totalorder` keys hold one of the zeros only.
"""
from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass, field

import numpy as np

from ..dsl import (ANY, ANY_VALUE, And, Attribute, BoolAttr, Choices, DataMovement, Function, If, IntAttr, OpSpec,
                   Operand, Region, Result, all_of, at, rank, same_shape, same_type, shape, size)
from ..exercise import Corner, Exercise
from ..symbolic import Skeleton
from ..types import C64, I1, SI32, E_F32, TensorType, from_bits
from .compare import arrays as compare_arrays, legal_compare_types, total_order_keys
from .select import arrays as select_arrays
from ..dsl.quantization import REGIONS, Quantization

COMPARATORS = ("lt", "gt", "le", "ge", "lt_totalorder", "lexicographic_lt", "never")
NOT_STRICT = ("le", "ge")    # reflexive: never a strict weak order once keys repeat
MAX_FORMAL_ROW = 12          # rows up to this length get the formal condition's per-position values


def comparator_signature(op):
    """C5: `(tensor<E0>, tensor<E0>, …, tensor<EN-1>, tensor<EN-1>) -> tensor<i1>` (module docstring: the
    seed writes E1 for the first pair)."""
    ins = tuple(TensorType((), t.element_type) for t in op.inputs for _ in range(2))
    return ins, (TensorType((), I1),)


def sort_c1(op):
    """(C1) `inputs` have at least 1 tensor."""
    return size(op.inputs) >= 1


def sort_c2(op):
    """(C2) For all `i`, `type(inputs[i])` = `type(results[i])`.

    "For all i" is read over both lists: as many results as inputs."""
    results = op.results["results"]
    return size(results) == size(op.inputs) and all_of(same_type(i, r) for i, r in zip(op.inputs, results))


def sort_c3(op):
    """(C3) All tensors in `inputs` and `results` have the same shape."""
    ts = list(op.inputs) + list(op.results["results"])
    return not ts or same_shape(*ts)


def sort_c4(op):
    """(C4) `-R` $\\le$ `dimension` $\\lt$ `R`, where `R` is rank of `inputs[0]`.

    With no inputs there is no `inputs[0]` and no `dimension` fits: read
    so, C4 implies C1 (module docstring).  (Read as vacuous there, C1 could
    be broken alone, but generators/regions.py has no comparator template
    over zero arguments to write such a program with.)"""
    r = rank(op.inputs[0]) if op.inputs else 0
    return And(-r <= op.dimension, op.dimension < r)


def sort_c5(op):
    """(C5) `comparator` has type
  `(tensor<E1>, tensor<E1>, ..., tensor<EN-1>, tensor<EN-1>) -> tensor<i1>`,
  where `Ei` is element type of `inputs[i]`.

    Read with E0 for the first pair (module docstring)."""
    ins, outs = comparator_signature(op)
    fn = op.comparator
    return tuple(fn.inputs) == ins and tuple(fn.outputs) == outs


def infer(op):
    return {"results": [TensorType(tuple(t.shape), t.element_type) for t in op.inputs]}


def sorted_axis(op):
    """`d` = `dimension >= 0 ? dimension : rank(inputs[0]) + dimension` (symbolic-safe)."""
    return If(op.dimension >= 0, op.dimension, rank(op.inputs[0]) + op.dimension)


# --------------------------------------------------------------------------
# Semantics
# --------------------------------------------------------------------------

STABLE_WHY = ('sort: "If `is_stable` is true, then the sorting is stable" — otherwise elements the comparator '
              'calls equal may come in any order')
OPEN_WHY = ("sort: the comparator is not a strict weak order on these values (a reflexive comparator on repeated "
            "keys, or a NaN no order places); the seed's formal condition is all it says, and not what happens")


def _key(values: tuple) -> bytes:
    return b"".join(np.asarray(v).tobytes() for v in values)


def _matrix(call, elements: list) -> np.ndarray:
    """C[i, j] = comparator(e_i, e_j): the arguments interleaved (a0, b0, a1, b1, …); one call per
    distinct pair of bit patterns."""
    n = len(elements)
    keys = [_key(e) for e in elements]
    cache: dict = {}
    out = np.zeros((n, n), dtype=bool)
    for i in range(n):
        for j in range(n):
            k = (keys[i], keys[j])
            if k not in cache:
                args = [x for pair in zip(elements[i], elements[j]) for x in pair]
                cache[k] = bool(np.asarray(call(*args)[0]).reshape(()))
            out[i, j] = cache[k]
    return out


def strict_weak_order(c: np.ndarray) -> bool:
    """Irreflexive, transitive, and incomparability transitive on the row."""
    if c.diagonal().any():
        return False
    ci = c.astype(np.int64)
    if ((ci @ ci > 0) & ~c).any():
        return False
    e = ~c & ~c.T
    ei = e.astype(np.int64)
    return not ((ei @ ei > 0) & ~e).any()


def _stable_order(c: np.ndarray) -> list[int]:
    """The row's indices sorted stably by the comparator (a strict weak order: one answer)."""
    def cmp(i, j):
        return -1 if c[i, j] else (1 if c[j, i] else 0)
    return sorted(range(len(c)), key=functools.cmp_to_key(cmp))


def formal_positions(c: np.ndarray):
    """Per position, the elements some order meeting the formal condition puts there, and one such
    order (the least element index first wherever the rest can still be completed); None when no
    order meets it.  An order is valid when no later element is strictly before an earlier one
    (`c[later, earlier] and not c[earlier, later]`); the check is pairwise, so a set of placed
    elements decides what may follow (a walk over subsets: rows up to `MAX_FORMAL_ROW`)."""
    n = len(c)
    full = (1 << n) - 1
    # may_follow[e]: the elements that may stand before e
    may_follow = [sum(1 << x for x in range(n) if not (c[e, x] and not c[x, e])) for e in range(n)]
    reach = bytearray(1 << n)
    reach[0] = 1
    for s in range(1 << n):
        if reach[s]:
            for e in range(n):
                if not s >> e & 1 and s & ~may_follow[e] == 0:
                    reach[s | 1 << e] = 1
    if not reach[full]:
        return None
    finish = bytearray(1 << n)
    finish[full] = 1
    for s in range(full - 1, -1, -1):
        if reach[s]:
            finish[s] = any(not s >> e & 1 and s & ~may_follow[e] == 0 and finish[s | 1 << e] for e in range(n))
    allowed = [set() for _ in range(n)]
    for s in range(full):
        if reach[s] and finish[s]:
            p = bin(s).count("1")
            for e in range(n):
                if not s >> e & 1 and s & ~may_follow[e] == 0 and finish[s | 1 << e]:
                    allowed[p].add(e)
    order, s = [], 0
    for _ in range(n):
        e = min(e for e in range(n) if not s >> e & 1 and s & ~may_follow[e] == 0 and finish[s | 1 << e])
        order.append(e)
        s |= 1 << e
    return allowed, order


def _row_plan(c: np.ndarray, stable: bool):
    """(order, offered, open): the primary order of one row, and per position the
    alternatives [(element index or None for any value, label, may repeat the primary)]."""
    n = len(c)
    offered: list = [[] for _ in range(n)]
    if strict_weak_order(c):
        order = _stable_order(c)
        if not stable:
            for p, e in enumerate(order):
                tied = [x for x in range(n) if not c[e, x] and not c[x, e]]   # input order
                offered[p] = [(x, f"ties reordered: tied element #{t}", False) for t, x in enumerate(tied) if x != e]
        return order, offered, False
    formal = formal_positions(c) if n <= MAX_FORMAL_ROW else None
    if formal is not None:
        allowed, order = formal
        for p in range(n):
            offered[p] = [(x, "formal condition", True) for x in sorted(allowed[p])]
        why = "the comparator is not a strict weak order on this row"
    else:
        order = _stable_order(c)
        why = ("no order meets the formal condition" if n <= MAX_FORMAL_ROW
               else "the comparator is not a strict weak order on this row")
    for p in range(n):
        offered[p].append((None, f"any value: {why}", True))
    return order, offered, True


# --------------------------------------------------------------------------
# Comparators that compare one key: rows sorted whole
# --------------------------------------------------------------------------
#
# The comparator is a function of two elements; where its block is one
# `compare` of a key computed alike from each element, its value on a pair
# is that comparison of their keys, and a row's order follows from the keys
# without calling it on every pair.  Recognised, on the reader's block
# (`Function.block`: its args, steps with their Instances, returns,
# constants and captured values):
#   the block returns compare(D, T, K(lhs), K(rhs)) — or compare(D, T,
#   K(rhs), K(lhs)), the flipped D — with D in LT, GT, where K is one
#   expression over the element's arguments (arg 2k of the left element,
#   arg 2k + 1 of the right one: `_matrix`'s interleaving), constants and
#   captured rank-0 values, through `compare` and `select` only: the same
#   expression on both sides, constants equal by bits.
# So a single `compare(LT, arg0, arg1)` (the generated `lt`, jnp.sort of
# integers), TOTALORDER's (lt_totalorder, lax.top_k's GT), and JAX's
# NaN-aware comparator (zeros made +0, NaNs one NaN, then TOTALORDER).
# K is evaluated on whole rows by those ops' own statements on arrays
# (compare's `arrays`, its primary values, as a region's `call` gives them;
# select's `arrays`), and the comparison of keys i and j is `key_i < key_j`
# (`key_i > key_j` for GT) on the sortable integers or floats of
# `_sortable`: TOTALORDER's keys, the values for integers, and for FLOAT
# the values where no key is NaN (NaN is no strict weak order: those rows
# take the pairwise route).  That comparison is a strict weak order, so the
# row's order is numpy's stable argsort of those keys — the one
# `_stable_order` finds — and ties are runs of equal keys.

_KEY_OPS = ("compare", "select")


@dataclass(frozen=True)
class _Node:
    """One node of K: ("in", k), ("const", type, bits), or an op with its attributes and operand types."""
    what: tuple
    children: tuple = ()
    inst: object = field(default=None, compare=False)


def _key_tree(block, key: str, side: int, values: dict):
    """K at value `key` of the block as seen from one side (0: args 2k, 1: args 2k + 1), or None."""
    if key.startswith("arg") and key[3:].isdigit():
        i = int(key[3:])
        return _Node(("in", i // 2)) if i % 2 == side else None
    if key in values:
        v = values[key]
        if not hasattr(v, "bits") or tuple(np.shape(v.bits)) != ():
            return None
        return _Node(("const", v.type.mlir, np.asarray(v.bits).tobytes()), inst=v)
    step = next((s for s in block.steps if key in s.results), None)
    if step is None or step.inst is None:   # an argument of no side, or a func.call (no Instance)
        return None
    mnemonic = step.inst.spec.mnemonic
    if mnemonic == "constant":
        return _key_tree(block, step.operands[0], side, values)
    if mnemonic not in _KEY_OPS:   # compare and select: one result each, no regions
        return None
    children = tuple(_key_tree(block, o, side, values) for o in step.operands)
    if any(c is None for c in children):
        return None
    types = tuple(getattr(t, "mlir", None) for t in step.inst.operands.values())
    return _Node((mnemonic, tuple(sorted((k, str(v)) for k, v in step.inst.attributes.items())), types),
                 children, step.inst)


def key_comparison(fn):
    """(K, direction, compare instance) where the comparator `fn` compares one key of each element (above);
    None otherwise (and where the reader gave no block)."""
    block = getattr(fn, "block", None)
    if block is None or len(getattr(block, "returns", ())) != 1:
        return None
    values = dict(getattr(block, "constants", {}) or {})
    values.update(getattr(block, "bound", {}) or {})
    step = next((s for s in block.steps if block.returns[0] in s.results), None)
    if step is None or step.inst is None or step.inst.spec.mnemonic != "compare":   # inst None: a func.call
        return None
    direction = step.inst.comparison_direction
    if direction not in ("LT", "GT"):
        return None
    lhs, rhs = step.operands
    left, right = _key_tree(block, lhs, 0, values), _key_tree(block, rhs, 1, values)
    if left is None or right is None:
        left, right = _key_tree(block, lhs, 1, values), _key_tree(block, rhs, 0, values)
        direction = {"LT": "GT", "GT": "LT"}[direction]
    if left is None or right is None or left != right:
        return None
    return left, direction, step.inst


def _evaluate(node: _Node, moved: list):
    what = node.what[0]
    if what == "in":
        return moved[node.what[1]]
    if what == "const":
        return np.asarray(node.inst.array())
    args = [_evaluate(c, moved) for c in node.children]
    if what == "compare":
        got = compare_arrays(node.inst, *args)
        return got[0] if isinstance(got, tuple) else got   # the primary values, as `call` gives them
    return select_arrays(node.inst, *args)[0]


def _sortable(op, moved: list):
    """(s, strict): keys s along the last axis such that the comparator holds of
    elements i, j exactly where s_i < s_j (for complex keys a pair of
    arrays, compared lexicographically), and per row whether that is a
    strict weak order (not where a FLOAT key is NaN: such rows go pair by
    pair); None where the comparator is not recognised (`key_comparison`)."""
    found = key_comparison(op.comparator)
    if found is None:
        return None
    tree, direction, inst = found
    et = inst.lhs.element_type
    with np.errstate(all="ignore"):
        key = np.asarray(_evaluate(tree, moved))
    if key.shape != moved[0].shape:
        key = np.broadcast_to(key, moved[0].shape)
    compare_type = inst.compare_type or legal_compare_types(et)[0]
    rows = moved[0].shape[:-1]
    strict = np.ones(rows, dtype=bool)
    if et.is_complex:
        z = key.astype(np.complex128)
        strict = ~(np.isnan(z.real) | np.isnan(z.imag)).any(axis=-1)
        parts = (z.real + 0.0, z.imag + 0.0)          # -0 and +0 equal, as compare's FLOAT says
        s = tuple(-p for p in parts) if direction == "GT" else parts
        return s, strict
    if et.is_float and compare_type == "TOTALORDER":
        s = total_order_keys(key)
    elif et.is_float:
        s = key.astype(np.float64) + 0.0
        strict = ~np.isnan(s).any(axis=-1)
        return (-s if direction == "GT" else s), strict
    else:
        s = key.astype(np.int64 if et.is_signed or et.bits < 64 else np.uint64)
    return (~s if direction == "GT" else s), strict


def _keyed_rows(s) -> tuple:
    """(order, tie) for every row at once: the stable argsort of the keys, and
    whether the element at each sorted position has the key of the one before it."""
    if isinstance(s, tuple):   # complex: (re, im), lexicographic
        order = np.lexsort((s[1], s[0]), axis=-1)
        sr, si = (np.take_along_axis(p, order, axis=-1) for p in s)
        same = (sr[..., 1:] == sr[..., :-1]) & (si[..., 1:] == si[..., :-1])
    else:
        order = np.argsort(s, axis=-1, kind="stable")
        ss = np.take_along_axis(s, order, axis=-1)
        same = ss[..., 1:] == ss[..., :-1]
    tie = np.concatenate([np.zeros(same.shape[:-1] + (1,), dtype=bool), same], axis=-1)
    return order, tie


def _keyed_plan(order: np.ndarray, tie: np.ndarray, stable: bool):
    """`_row_plan`'s (order, offered, open) for a row sorted by keys: unstable
    sorts offer, at each position of a run of equal keys, the run's other
    elements in input order (a stable sort keeps them so)."""
    offered: dict = {}
    if not stable and tie.any():
        n = len(order)
        starts = np.flatnonzero(~tie)
        ends = np.append(starts[1:], n)
        for a, b in zip(starts.tolist(), ends.tolist()):
            if b - a < 2:
                continue
            tied = order[a:b].tolist()
            for p in range(a, b):
                e = tied[p - a]
                offered[p] = [(x, f"ties reordered: tied element #{t}", False) for t, x in enumerate(tied) if x != e]
    return order, offered, False


def arrays(op, *operands):
    """Each row along `d` sorted by the comparator (module docstring for what is offered where): rows whose
    comparator compares one key (`key_comparison`) by their keys, the others pair by pair."""
    inputs = [np.asarray(a) for a in operands]
    r = inputs[0].ndim
    if r == 0:   # C4 forbids it; nothing to sort
        return [a.copy() for a in inputs]
    d = int(op.dimension) if int(op.dimension) >= 0 else r + int(op.dimension)
    n = inputs[0].shape[d]
    moved = [np.moveaxis(a, d, -1) for a in inputs]
    flat_of = np.moveaxis(np.arange(inputs[0].size).reshape(inputs[0].shape), d, -1)
    call = op.comparator.call
    keyed = _sortable(op, moved) if n else None
    if keyed is not None:
        order_all, tie_all = _keyed_rows(keyed[0])
        if keyed[1].all() and (op.is_stable or not tie_all.any()):
            # every row sorted by its keys, nothing offered: the rows' orders applied at once
            return [np.moveaxis(np.take_along_axis(m, order_all, axis=-1), -1, d) for m in moved]
    plans = []
    for row in np.ndindex(*moved[0].shape[:-1]):
        if not n:
            continue
        if keyed is not None and keyed[1][row]:
            plans.append((row,) + _keyed_plan(order_all[row], tie_all[row], bool(op.is_stable)))
            continue
        elements = [tuple(np.asarray(m[row + (i,)]).reshape(()) for m in moved) for i in range(n)]
        order, offered, open_ = _row_plan(_matrix(call, elements), bool(op.is_stable))
        plans.append((row, order, {p: o for p, o in enumerate(offered) if o}, open_))
    # The formal condition's labels ("formal condition: element #t", t-th allowed element) are
    # offered at every open position, padded with the primary's own element, so that each of
    # them comes before "any value" in the order the judge tries alternatives.
    width = max([sum(x is not None for x, label, _ in o if label == "formal condition")
                 for _, _, offered, _ in plans for o in offered.values()] or [0])
    results = [m.copy() for m in moved]
    options = [dict() for _ in inputs]
    labels = [dict() for _ in inputs]
    for row, order, offered, _ in plans:
        for p in sorted(offered):
            formal = [x for x, label, _ in offered[p] if label == "formal condition"]
            if formal:
                formal += [order[p]] * (width - len(formal))
                offered[p] = ([(x, f"formal condition: element #{t}", True) for t, x in enumerate(formal)]
                              + [o for o in offered[p] if o[1] != "formal condition"])
        for k, m in enumerate(moved):
            results[k][row] = m[row][order]
            for p in sorted(offered):
                flat = int(flat_of[row + (p,)])
                have = {np.asarray(results[k][row + (p,)]).tobytes()}
                for x, label, repeat in offered[p]:
                    v = ANY_VALUE if x is None else m[row + (x,)]
                    if x is not None and not repeat:
                        b = np.asarray(v).tobytes()
                        if b in have:
                            continue
                        have.add(b)
                    options[k].setdefault(flat, []).append(v)
                    labels[k].setdefault(flat, []).append(label)
    why = OPEN_WHY if any(open_ for *_, open_ in plans) else STABLE_WHY
    out = []
    for k, res in enumerate(results):
        primary = np.moveaxis(res, -1, d)
        out.append(Choices(primary, options[k], labels[k], why) if options[k] else primary)
    return out


# --------------------------------------------------------------------------
# Exercise
# --------------------------------------------------------------------------

def _nan_bits(et, *, negative: bool, payload: bool) -> int:
    """A quiet NaN, negative or not, with a payload bit where the format has room (bits must move
    intact: a sort only moves elements)."""
    f = et.format
    extra = 1 if payload and f.nan == "ieee" and f.mantissa_bits > 2 else 0
    return f.nan_bits(negative) | extra


def _float_pool(et, body: str, rng) -> list:
    """Key candidates for a float type: a few ordinary values, the infinities where the format has
    them (f8E4M3FN has none), both zeros (equal under `lt`: a tie of different bits), NaN now and
    then.  Under `lt_totalorder`, NaNs of both signs always (TOTALORDER places them) and one zero
    only: whether TOTALORDER orders -0 before +0 is implementation-defined (compare's finding) and
    a region's call gives only its primary value (module docstring, limits)."""
    with np.errstate(over="ignore", invalid="ignore"):
        finite = [v for v in (-1.5, 1.0, 3.0) if np.isfinite(np.asarray(v).astype(et.numpy))]
        infs = [v for v in (-np.inf, np.inf) if np.isinf(np.asarray(v).astype(et.numpy).astype(np.float64))]
    picks = list(rng.choice(finite + infs, size=2, replace=False))
    total = body == "lt_totalorder"
    zeros = [-0.0, 0.0]
    if total or rng.random() < 0.3:
        zeros = [zeros[int(rng.integers(0, 2))]]
    fmt = et.format
    # the format's own zeros only (none in f8E8M0FNU, +0 alone in FNUZ)
    zeros = [z for z in zeros if fmt.has_zero and (fmt.has_negative_zero or not np.signbit(z))]
    vals = [np.asarray(v).astype(et.numpy) for v in picks + zeros]
    signs = (False, True) if total else ((False,) if rng.random() < 0.3 else ())
    for negative in signs if fmt.has_nan else ():   # f4E2M1FN, f6…: no NaN to place
        bits = _nan_bits(et, negative=negative, payload=rng.random() < 0.5)
        vals.append(from_bits(np.array(bits, dtype=et.bits_dtype), et))
    return vals


def _key_pool(et, body: str, rng) -> list:
    """A few values, so that keys repeat (ties are what stability is about)."""
    if et.is_bool:
        return [np.bool_(False), np.bool_(True)]
    if et.is_integer:
        cands = sorted({et.min_value, -1 if et.is_signed else 3, 0, 1, 2, et.max_value})
        picks = rng.choice(len(cands), size=3, replace=False)
        return [np.asarray(cands[int(i)]).astype(et.numpy) for i in sorted(picks)]
    if et.is_float:
        return _float_pool(et, body, rng)
    comp = et.component
    parts = [float(np.asarray(v).astype(comp.numpy)) for v in _float_pool(comp, body, rng)]
    re_ = rng.choice(parts, size=3)
    im_ = rng.choice([0.0, 1.0] + ([np.nan] if rng.random() < 0.3 else []), size=3)
    return [np.asarray(complex(a, b)).astype(et.numpy) for a, b in zip(re_, im_)]


def _payload(et, shape, rng) -> np.ndarray:
    """Distinct values where the type has room for them, so every move shows."""
    n = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
    if et.is_bool:
        return rng.random(n).reshape(shape) < 0.5
    base = rng.permutation(n).astype(np.int64)
    if et.is_integer:
        span, lo = et.max_value - et.min_value + 1, max(et.min_value, -(n // 2))
        vals = [(int(b) % span) + lo for b in base]
        return np.array([et.wrap(v) for v in vals], dtype=object).astype(et.numpy).reshape(shape)
    vals = (base - n // 2).astype(np.float64)
    if et.is_complex:
        return (vals - 1j * vals).astype(et.numpy).reshape(shape)
    return vals.astype(et.numpy).reshape(shape)


# The inputs an `appended_last` builder chose for its instance (`input_values` reads them first).
CHOSEN: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def input_values(op, name, k, t, rng):
    """Keys (input 0, and input 1 under `lexicographic_lt`) from a few values, so ties occur;
    the other inputs are payloads of distinct values (an `appended_last` builder's: its `CHOSEN`)."""
    if name != "inputs":
        return None
    if op in CHOSEN:
        return CHOSEN[op][k]
    body = op.comparator.body or "lt"
    if k == 0 or (k == 1 and body == "lexicographic_lt"):
        pool = _key_pool(t.element_type, body, rng)
        n = int(np.prod(t.shape, dtype=np.int64)) if len(t.shape) else 1
        pool = np.stack([np.asarray(v, dtype=t.element_type.numpy).reshape(()) for v in pool])
        return pool[rng.integers(0, len(pool), size=n)].reshape(t.shape)
    return _payload(t.element_type, t.shape, rng)


def survey_reason(op):
    """`le` / `ge` are reflexive: with keys that repeat (on purpose) no strict weak order, and the
    seed does not say what sort does then."""
    body = op.comparator.body
    if body in NOT_STRICT:
        return (f"comparator {body} is not a strict weak order on repeated keys: the seed's formal condition "
                "is all it says, not what sort does")
    return None


def _axis_dim(op):
    return at(shape(op.inputs[0]), sorted_axis(op), -1)


CORNERS = (
    Corner("negative dimension", (2,), lambda op: [op.dimension < 0]),
    Corner("zero-sized sorted dimension", (2,), lambda op: [_axis_dim(op) == 0]),
    Corner("long sorted dimension", (1,), lambda op: [op.inputs[0].shape[0] >= 12], max_dim=16),
    Corner("three inputs: key and two payloads", (2,), lambda op: [_axis_dim(op) >= 3],
           layout={"counts": {"inputs": 3}}),
    Corner("two inputs sorted together", (2,), lambda op: [_axis_dim(op) >= 4], layout={"counts": {"inputs": 2}}),
)


def _function(types, body):
    ins = tuple(TensorType((), t) for t in types for _ in range(2))
    return Function(ins, (TensorType((), I1),), body)


def built_corners(spec, skeletons, rng):
    """Structures the skeletons do not offer: keys and payloads of different element types (the
    argsort pattern: f32 keys, si32 indices), stable and unstable, with ties, along dimensions
    -2 and -1 too (the solver keeps integer attributes at -1 and above)."""
    out = []
    for stable, body, shape_, dim_ in ((False, "lt", (3, 6), 1), (True, "lt", (6, 2), -2),
                                       (False, "gt", (2, 7), -1), (True, "lt_totalorder", (8,), 0)):
        types = (E_F32, SI32)
        inputs = [TensorType(shape_, t) for t in types]
        inst = spec.instance({"inputs": inputs}, {"dimension": dim_, "is_stable": stable},
                             {"results": list(inputs)}, {"comparator": _function(types, body)})
        skel = Skeleton("sort", (E_F32,), (), (("is_stable", stable),), (("comparator", body),))
        note = f"f32 keys with si32 payload, is_stable={str(stable).lower()}, {body}"
        out.append((note, skel, inst))
    return out


def complex_key_ties(spec, skels, rng):
    """An unstable sort by complex keys (lexicographic LT) with exact ties and
    no NaN, so every row is sorted by its keys (`_keyed_rows`) and the ties
    are offered reordered — the case's last alternative; an si32 payload
    shows which tied element went where.  A key 1+2j shares 1+1j's real
    part only: not a tie (a tie reading the real parts alone, or no ties at
    all, offers other orders).  The suite's other unstable complex sorts
    hold no exact tie in a row without NaN keys (those rows the formal
    condition orders pair by pair)."""
    types = (C64, SI32)
    keys = np.array([1 + 1j, 0j, 1 + 1j, -1 + 0j, 1 + 2j, 1 + 1j, 0j], dtype=np.complex64)
    inputs = [TensorType(keys.shape, t) for t in types]
    inst = spec.instance({"inputs": inputs}, {"dimension": 0, "is_stable": False}, {"results": list(inputs)},
                         {"comparator": _function(types, "lt")})
    CHOSEN[inst] = [keys, np.arange(len(keys), dtype=np.int32)]
    yield ("complex keys with exact ties (no NaN), si32 payload, is_stable=false, lt", None,
           Skeleton("sort", (C64,), (), (("is_stable", False),), (("comparator", "lt"),)), inst)


def quantized_example(types: dict, body: str = "lt"):
    """A valid sort of a 3×6 input along dimension 1 with the comparator
    `body`, its input and result of the element types `types` names
    ("inputs", "results", "body": the comparator's arguments; the inputs'
    type where not named, f32 for them)."""
    from ..types import element_type as _named
    t_in = types.get("inputs", _named("f32"))
    scalar = TensorType((), types.get("body", t_in))
    fn = Function((scalar, scalar), (TensorType((), I1),), body=body)
    return SPEC.instance({"inputs": [TensorType((3, 6), t_in)]}, {"dimension": 1, "is_stable": body == "never"},
                         {"results": [TensorType((3, 6), types.get("results", t_in))]}, {"comparator": fn})


SPEC = OpSpec(
    mnemonic="sort",
    operands=(Operand("inputs", ANY, variadic=True, count=(1, 2)),),
    attributes=(Attribute("dimension", IntAttr(64), default=-1),
                Attribute("is_stable", BoolAttr(), default=False)),
    regions=(Region("comparator", comparator_signature, bodies=COMPARATORS),),
    results=(Result("results", ANY, variadic=True, count=lambda op: len(op.inputs)),),
    constraints=(sort_c1, sort_c2, sort_c3, sort_c4, sort_c5),
    infer=infer,
    semantics=DataMovement(arrays, bit_exact=True),
    exercise=Exercise(corners=CORNERS, built_corners=built_corners, operand_values=input_values,
                      appended_last=complex_key_ties,
                      survey_when=survey_reason),
    implied=('sort_c1',),
    # v1.20: inputs and results "or per-tensor quantized tensors"; the comparator compares them (compare on
    # quantized operands: dequantize_compare)
    quantization=Quantization(meaning=REGIONS, example=quantized_example, bodies=("lt", "gt", "never")),
)
