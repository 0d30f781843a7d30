"""Evaluation orders sampled by brute force, held against the oracle's enclosure: how tight, and whether sound.

A bounded expectation claims to hold every result the spec allows.  Two
things can be wrong with it: it can miss an allowed result (unsound — an
oracle bug) or admit far more than any allowed evaluation produces (loose —
"agrees" then rules out little).  This command measures both on the model
programs of bench/real_programs.py (same programs, same inputs: `PROGRAMS`,
`inputs(name)`): it evaluates each program in many legitimate orders and
reports, per output,

* the spread the orders show: per element, the largest relative deviation
  of any sampled order's result from the oracle's center value
  (|y − c| / |c|), median and max over elements — and, beside it, half
  the range among the orders themselves ((max y − min y) / 2 / |c|): the
  deviation holds what every order shares (XLA's exp, tanh, erfc are
  its own approximations, the same in every sample: softmax-f16 is one
  ULP from the center on a quarter of its elements in every order), the
  range only what the order changes;
* the enclosure's relative half-width (median, max) and the smallest
  uniform scaling it catches (suites/resolution.py, as `run` prints them),
  beside the same scaling measure taken on the hull of the sampled results
  — what an oracle that knew exactly these orders could catch;
* ratios enclosure / spread (of the medians, of the maxima), and the most
  of its own allowance any sampled element used
  ((y − c) / (hi − c) on its side, per element: at most 1 when sound);
* soundness: every sampled result inside the enclosure, element by
  element (ordinals of the output format) and by `suites.compare.compare`,
  the judge `run` uses.  An element outside is printed, never folded away.

    .venv/bin/python bench/evaluation_orders.py [--only NAME,…] [--samples N] [--no-interpreter]

**What the spec allows** (StableHLO v1.20, "reduce"): a reduction is
`exec(schedule)` for *some* full binary tree whose in-order traversal is
the input slices in ascending lexicographic index order, interspersed with
any number of init values at any positions.  dot_general is defined as
that reduce over the products `multiply(lhs_slice, rhs_slice)` with init
`constant(0)`; convolution as dot_general over each window of the (zero-
padded) lhs; reduce_window as reduce over each window of the init-padded
operand.  So what may vary is the tree's *shape*, and where init values
sit; the leaves stay in index order.  Since floating-point addition is
commutative bit for bit, a mirrored tree is the same order, so the
reversed summation (`reverse` on the summed dimension) is one of these
trees too — a random *permutation* of the leaves in general is not, and is
not sampled.  Everything else is fixed: each multiply, add, divide rounds
once to the result format.  In particular a fused multiply-add is **not**
an order: the spec names IEEE multiplication and addition (docs/findings.md:
XLA:CPU's contraction is a departure), and neither is keeping bf16/f16
intermediates in f32 (XLA's `xla_allow_excess_precision`).

**How orders are realised.**  Each program is lowered by JAX and its
StableHLO module rewritten with jaxlib's MLIR bindings (as
oracle/rewrites.py does; regions included, so the LSTM's loop body too):

* every float `dot_general` becomes its products — the same dot_general
  with its contracting dimensions made batching dimensions, so each
  element is one product rounded once, computed by no accumulation at
  all — made opaque (below: no fusion may contract them into the sums),
  transposed so the summed index comes first (lexicographic over several
  contracting dimensions) and summed by an explicit tree of `slice` and
  `add` ops;
* every `reduce` whose body is one float add: its reduced dimensions moved
  first and summed the same way, its init value as the leftmost leaf;
* `reduce_window` with an add body and `convolution` (one feature group,
  no lhs dilation or window reversal): each window gathered (a constant-
  index `gather` from the operand with the init value / zero appended for
  the padding, so padded positions are init values where the spec puts
  them); convolution's products again by a batching dot_general, the
  window's leaves ordered by (kernel spatial dims…, input feature);
* every float `multiply` result is made opaque, and every `divide`'s
  divisor, so XLA can neither contract a product into an FMA nor turn
  x / c into x · fl(1/c) — the two departures docs/findings.md records;
  XLA compiles with `xla_allow_excess_precision=false`.  *Opaque* is
  x − z with z a scalar +0 that every function takes as an extra last
  argument (the caller's passed on by every call): exactly x, −0
  included, and what a compiler cannot fold — contracted, it is
  fma(a, b, −0), the product rounded once.  `optimization_barrier`, a
  no-op `reduce_precision` and a bitcast round trip all failed: XLA:CPU
  still fused the product into the add it fed (312 of 1000 elements of
  x·y + x, tried while writing this); the test holds the rewrite of
  x·y + x equal to numpy's two roundings.

The trees, one per reduction site per sample (a loop body's dot takes the
same tree each iteration, as a compiled kernel does): left fold, right
fold, pairwise (balanced), random recursive split — or two-level, the
shape blocked and vectorised kernels have: the leaves cut into contiguous
blocks of a random size (the last padded with init values, which the spec
lets sit anywhere), a tree of one family inside each block and another
over the block sums.  Sample 0 is the left fold everywhere (what a plain
loop computes; past 256 leaves, left folds of blocks of 256 and of their
sums).  `tests/bench/test_evaluation_orders.py` holds each rewritten
reduction — dot_general, reduce, reduce_window (cumsum), convolution —
equal, bit for bit, to the same tree evaluated in numpy float32, so what
runs is the tree the sampler names; the samples of a 4096-term dot
different from one another and inside the oracle's enclosure; and the
strict rewrite of x·y + x equal to two roundings, not one.

**Also orders, besides the samples.**  The reference interpreter on the
program as written (its own sequential order, correctly rounded ops), and
XLA on the program as written, made strict the same way (its
kernels' order: Eigen's/XNNPACK's blocked dot and convolution kernels,
which may fuse multiply-adds *inside* the kernel — reported beside, not
counted in the spread).  XLA's transcendental functions (tanh, exp, the
erfc of GELU) are its own approximations in every run: their error is
within the tolerance the oracle gives those ops and the same in every
sample, so it moves the deviation from the center, not the range among
the orders (the interpreter's libm differs from XLA's: its run widens
the range by that much).

**What the samples cannot show.**  A sampled spread is a lower bound on
what the spec allows: tens of random trees do not find the adversarial
one, so "ratio" overstates the enclosure's looseness by up to the gap
between typical and worst-case trees.  Rounding errors of a fixed tree
behave like independent ones, so a left fold of n terms typically errs
by about √n·u·Σ|x| and a pairwise tree by √(log n)·u·Σ|x|, where the
rigorous bound — over every tree *and* every rounding error, which no
tree chooses — is γ(n)·Σ|x| ≈ n·u·Σ|x|.  Going from 30 to 100 samples
widened the largest deviation by 10–50 % (mlp-tanh, cumsum, conv-block)
and left the ratios within a factor 1.5.
Programs whose outputs the oracle states exactly (integer dot, sort,
top_k), by a property (cholesky-solve's residual) or through an FFT (an
algorithm, not a sum the spec orders) have no order to sample here; their
row says which.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))   # bench/__init__.py: `from bench import …` when run as a script
sys.setrecursionlimit(max(sys.getrecursionlimit(), 5000))   # trees are emitted recursively: 256 deep at most

XLA_STRICT = {"xla_allow_excess_precision": False}
_FLOATS = {"f16", "bf16", "f32", "f64"}
MAX_ONE_LEVEL = 256     # leaves summed by one tree at most; longer sums take two levels
FAMILIES = ("left", "right", "pairwise", "random")


# --------------------------------------------------------------------------
# Trees over leaves 0..n-1 in index order: an int is a leaf, a pair a node
# --------------------------------------------------------------------------

def tree(n: int, family: str, rng) -> object:
    """A full binary tree over leaves 0..n-1 whose in-order traversal is
    0, 1, …, n-1 (module docstring)."""
    if family == "left":
        t = 0
        for i in range(1, n):
            t = (t, i)
        return t
    if family == "right":
        t = n - 1
        for i in range(n - 2, -1, -1):
            t = (i, t)
        return t

    def split(lo, hi):
        if hi - lo == 1:
            return lo
        mid = lo + (hi - lo) // 2 if family == "pairwise" else int(rng.integers(lo + 1, hi))
        return split(lo, mid), split(mid, hi)
    return split(0, n)


@dataclass
class Plan:
    """How one reduction site sums its n leaves: one tree, or `block`-sized
    blocks (padded with init values) summed by `inner`, their sums by `outer`."""
    n: int
    block: int = 0             # 0: one level
    inner: object = None
    outer: object = None
    what: str = ""

    @property
    def padded(self) -> int:
        return -(-self.n // self.block) * self.block if self.block else self.n


def sample_plan(n: int, rng, left_fold: bool = False) -> Plan:
    """A random plan for n leaves (module docstring: the families)."""
    if n <= MAX_ONE_LEVEL and (left_fold or rng.random() < 0.4):
        fam = "left" if left_fold else FAMILIES[rng.integers(len(FAMILIES))]
        return Plan(n, 0, tree(n, fam, rng), None, fam)
    if left_fold:   # too long for one tree: left folds at both levels, which is the left fold's shape blocked
        b = -(-n // MAX_ONE_LEVEL)
        b = max(b, min(MAX_ONE_LEVEL, n))
        fi = fo = "left"
    else:
        lo = max(2, -(-n // MAX_ONE_LEVEL))
        b = int(rng.integers(lo, min(n, MAX_ONE_LEVEL) + 1)) if n > 2 else 2
        fi, fo = (FAMILIES[rng.integers(len(FAMILIES))] for _ in range(2))
    nb = -(-n // b)
    return Plan(n, b, tree(b, fi, rng), tree(nb, fo, rng), f"{fi}/{b}·{fo}/{nb}")


# --------------------------------------------------------------------------
# Building StableHLO with jaxlib's bindings
# --------------------------------------------------------------------------

def _ir():
    from jaxlib.mlir import ir
    return ir


def _ttype(shape, et):
    return _ir().RankedTensorType.get(list(shape), et)


def _shape(v) -> list[int]:
    return list(_ir().RankedTensorType(v.type).shape)


def _etype(v):
    return _ir().RankedTensorType(v.type).element_type


def _is_float(v) -> bool:
    try:
        return str(_etype(v)) in _FLOATS
    except (ValueError, TypeError):
        return False


def _i64s(values):
    return _ir().DenseI64ArrayAttr.get([int(x) for x in values])


def _op(name, operands, result_type, **attrs):
    return _ir().Operation.create(name, results=[result_type], operands=list(operands), attributes=attrs).results[0]


def _slice(x, axis, i):
    shape = _shape(x)
    start = [0] * len(shape)
    limit = list(shape)
    start[axis], limit[axis] = i, i + 1
    out = list(shape)
    out[axis] = 1
    return _op("stablehlo.slice", [x], _ttype(out, _etype(x)), start_indices=_i64s(start),
               limit_indices=_i64s(limit), strides=_i64s([1] * len(shape)))


def _reshape(x, shape):
    return _op("stablehlo.reshape", [x], _ttype(shape, _etype(x)))


def _transpose(x, perm):
    shape = _shape(x)
    return _op("stablehlo.transpose", [x], _ttype([shape[p] for p in perm], _etype(x)), permutation=_i64s(perm))


def _broadcast(scalar, shape):
    return _op("stablehlo.broadcast_in_dim", [scalar], _ttype(shape, _etype(scalar)), broadcast_dimensions=_i64s([]))


def _zero(et):
    ir = _ir()
    t = _ttype([], et)
    return _op("stablehlo.constant", [], t, value=ir.DenseElementsAttr.get_splat(t, ir.FloatAttr.get(et, 0.0)))


def _concat(xs, axis):
    shape = _shape(xs[0])
    shape[axis] = sum(_shape(x)[axis] for x in xs)
    return _op("stablehlo.concatenate", xs, _ttype(shape, _etype(xs[0])),
               dimension=_ir().IntegerAttr.get(_ir().IntegerType.get_signless(64), axis))


def _products(lhs, rhs, lb, rb, result_et, site):
    """dot_general with batching dims (lb, rb) and nothing contracted: each
    result element one product, rounded once to `result_et`, made opaque
    (`Site.opaque`) so that no sum it feeds can fuse it."""
    from jaxlib.mlir.dialects import stablehlo
    ls, rs = _shape(lhs), _shape(rhs)
    lfree = [d for d in range(len(ls)) if d not in lb]
    rfree = [d for d in range(len(rs)) if d not in rb]
    shape = [ls[d] for d in lb] + [ls[d] for d in lfree] + [rs[d] for d in rfree]
    dn = stablehlo.DotDimensionNumbers.get(lhs_batching_dimensions=list(lb), rhs_batching_dimensions=list(rb),
                                           lhs_contracting_dimensions=[], rhs_contracting_dimensions=[])
    return site.opaque(_op("stablehlo.dot_general", [lhs, rhs], _ttype(shape, result_et), dot_dimension_numbers=dn))


def _gather_flat(x_flat, index: np.ndarray):
    """x_flat (1-D)[index]: a constant-index gather, result shaped as `index`."""
    from jaxlib.mlir.dialects import stablehlo
    ir = _ir()
    idx = np.ascontiguousarray(index.reshape(index.shape + (1,)).astype(np.int32))
    it = _ttype(idx.shape, ir.IntegerType.get_signless(32))
    c = _op("stablehlo.constant", [], it, value=ir.DenseElementsAttr.get(idx, type=ir.IntegerType.get_signless(32)))
    dn = stablehlo.GatherDimensionNumbers.get(offset_dims=[], collapsed_slice_dims=[0], operand_batching_dims=[],
                                              start_indices_batching_dims=[], start_index_map=[0],
                                              index_vector_dim=idx.ndim - 1)
    return _op("stablehlo.gather", [x_flat, c], _ttype(index.shape, _etype(x_flat)), dimension_numbers=dn,
               slice_sizes=_i64s([1]), indices_are_sorted=ir.BoolAttr.get(False))


def _emit(t, x, axis):
    """Tree `t` over the slices of x along `axis`: one slice op per leaf,
    one add per node (size 1 kept on `axis`)."""
    if isinstance(t, int):
        return _slice(x, axis, t)
    shape = _shape(x)
    shape[axis] = 1
    return _op("stablehlo.add", [_emit(t[0], x, axis), _emit(t[1], x, axis)], _ttype(shape, _etype(x)))


def sum_rows(x, init, plan: Plan):
    """x: [n, rest…] summed over axis 0 by `plan`; padding rows are `init`
    (a scalar value).  Returns [rest…]."""
    shape = _shape(x)
    n, rest = shape[0], shape[1:]
    assert n == plan.n, (n, plan.n)
    if not plan.block:
        return _reshape(_emit(plan.inner, x, 0), rest)
    if plan.padded > n:
        x = _concat([x, _broadcast(init, [plan.padded - n] + rest)], 0)
    nb = plan.padded // plan.block
    blocks = _reshape(x, [nb, plan.block] + rest)
    sums = _reshape(_emit(plan.inner, blocks, 1), [nb] + rest)
    return _reshape(_emit(plan.outer, sums, 0), rest)


# --------------------------------------------------------------------------
# The rewrites: one per op kind, each returns True when it rewrote the op
# --------------------------------------------------------------------------



def _replace(op, value):
    op.results[0].replace_all_uses_with(value)
    op.erase()


def _dot_general(op, site):
    from jaxlib.mlir.dialects import stablehlo
    if not _is_float(op.results[0]):
        return False
    dn = stablehlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
    lb, rb = list(dn.lhs_batching_dimensions), list(dn.rhs_batching_dimensions)
    lc, rc = list(dn.lhs_contracting_dimensions), list(dn.rhs_contracting_dimensions)
    if not lc:
        return False
    lhs, rhs = op.operands[0], op.operands[1]
    et = _etype(op.results[0])
    p = _products(lhs, rhs, lb + lc, rb + rc, et, site)     # [B…, K…, lhs free…, rhs free…]
    nb, nk = len(lb), len(lc)
    shape = _shape(p)
    perm = list(range(nb, nb + nk)) + list(range(nb)) + list(range(nb + nk, len(shape)))
    k = int(np.prod([shape[d] for d in range(nb, nb + nk)]))
    rows = _reshape(_transpose(p, perm), [k] + [shape[d] for d in perm[nk:]])
    _replace(op, sum_rows(rows, _zero(et), site.plans(k)))
    return True


def _add_body(op) -> bool:
    """A region whose body is `return add(arg0, arg1)` on float scalars."""
    blk = op.regions[0].blocks[0]
    ops = [o.operation for o in blk.operations]
    if len(ops) != 2 or ops[0].name != "stablehlo.add" or ops[1].name != "stablehlo.return":
        return False
    args = list(blk.arguments)
    return {str(a) for a in ops[0].operands} == {str(a) for a in args} and len(args) == 2


def _reduce(op, site):
    if len(op.operands) != 2 or not _is_float(op.operands[0]) or not _add_body(op):
        return False
    x, init = op.operands[0], op.operands[1]
    dims = sorted(_ir().DenseI64ArrayAttr(op.attributes["dimensions"]))
    shape = _shape(x)
    keep = [d for d in range(len(shape)) if d not in dims]
    k = int(np.prod([shape[d] for d in dims]))
    rows = _reshape(_transpose(x, dims + keep), [k] + [shape[d] for d in keep])
    rows = _concat([_reshape(_broadcast(init, [shape[d] for d in keep]), [1] + [shape[d] for d in keep]), rows], 0)
    _replace(op, sum_rows(rows, init, site.plans(k + 1)))
    return True


def _attr_list(op, name, default):
    if name not in op.attributes:
        return list(default)
    return [int(v) for v in _ir().DenseI64ArrayAttr(op.attributes[name])]


def _padding(op, rank):
    if "padding" not in op.attributes:
        return [(0, 0)] * rank
    a = np.array(_ir().DenseIntElementsAttr(op.attributes["padding"])).reshape(rank, 2)
    return [(int(lo), int(hi)) for lo, hi in a]


def _window_index(in_shape, out_shape, window, strides, wdil, pad):
    """Flat operand index of every (window offset…, output index…), or
    prod(in_shape) (the appended init value) where it falls in padding."""
    rank = len(in_shape)
    w = np.indices(window).reshape(rank, -1)            # [rank, W]
    o = np.indices(out_shape).reshape(rank, -1)         # [rank, O]
    pos = o[:, None, :] * np.array(strides)[:, None, None] + w[:, :, None] * np.array(wdil)[:, None, None] \
        - np.array([p[0] for p in pad])[:, None, None]  # [rank, W, O]
    inside = np.all((pos >= 0) & (pos < np.array(in_shape)[:, None, None]), axis=0)
    flat = np.ravel_multi_index(tuple(np.clip(pos, 0, np.array(in_shape)[:, None, None] - 1)), in_shape)
    return np.where(inside, flat, int(np.prod(in_shape)))   # [W, O]


def _reduce_window(op, site):
    if len(op.operands) != 2 or not _is_float(op.operands[0]) or not _add_body(op):
        return False
    x, init = op.operands[0], op.operands[1]
    shape, out = _shape(x), _shape(op.results[0])
    rank = len(shape)
    if _attr_list(op, "base_dilations", [1] * rank) != [1] * rank:
        return False
    window = _attr_list(op, "window_dimensions", [1] * rank)
    index = _window_index(shape, out, window, _attr_list(op, "window_strides", [1] * rank),
                          _attr_list(op, "window_dilations", [1] * rank), _padding(op, rank))
    flat = _concat([_reshape(x, [int(np.prod(shape))]), _reshape(init, [1])], 0)
    rows = _gather_flat(flat, index)                     # [W, O]
    _replace(op, _reshape(sum_rows(rows, init, site.plans(index.shape[0])), out))
    return True


def _convolution(op, site):
    from jaxlib.mlir.dialects import stablehlo
    if not _is_float(op.results[0]):
        return False
    a = op.attributes
    for name in ("feature_group_count", "batch_group_count"):
        if name in a and _ir().IntegerAttr(a[name]).value != 1:
            return False
    dn = stablehlo.ConvDimensionNumbers(a["dimension_numbers"])
    lhs, rhs = op.operands[0], op.operands[1]
    ls, rs, os_ = _shape(lhs), _shape(rhs), _shape(op.results[0])
    ns = len(dn.input_spatial_dimensions)
    if _attr_list(op, "lhs_dilation", [1] * ns) != [1] * ns:
        return False
    if "window_reversal" in a and any(_ir().DenseBoolArrayAttr(a["window_reversal"])):
        return False
    et = _etype(op.results[0])
    if str(_etype(lhs)) != str(et) or str(_etype(rhs)) != str(et):
        return False
    # lhs as [N, spatial…, C] (flattened, a zero appended for padding), windows gathered
    lperm = [dn.input_batch_dimension] + list(dn.input_spatial_dimensions) + [dn.input_feature_dimension]
    lt = _transpose(lhs, lperm)
    n, c = ls[dn.input_batch_dimension], ls[dn.input_feature_dimension]
    sp_in = [ls[d] for d in dn.input_spatial_dimensions]
    sp_out = [os_[d] for d in dn.output_spatial_dimensions]
    kwin = [rs[d] for d in dn.kernel_spatial_dimensions]
    index = _window_index(sp_in, sp_out, kwin, _attr_list(op, "window_strides", [1] * ns),
                          _attr_list(op, "rhs_dilation", [1] * ns), _padding(op, ns))     # [W, O] in spatial
    sp = int(np.prod(sp_in))
    # full flat index into [N, spatial…, C] + 1 zero: (n, w, o, c) order
    nn, cc = np.arange(n)[:, None, None, None], np.arange(c)[None, None, None, :]
    full = np.where(index[None, :, :, None] == sp, n * sp * c, (nn * sp + index[None, :, :, None]) * c + cc)
    flat = _concat([_reshape(lt, [n * sp * c]), _reshape(_zero(et), [1])], 0)
    w, o = index.shape
    win = _gather_flat(flat, np.transpose(full, (1, 3, 0, 2)))              # [W, C, N, O]
    kt = _transpose(rhs, list(dn.kernel_spatial_dimensions) + [dn.kernel_input_feature_dimension,
                                                              dn.kernel_output_feature_dimension])
    ko = rs[dn.kernel_output_feature_dimension]
    kt = _reshape(kt, [w, c, ko])
    p = _products(win, kt, [0, 1], [0, 1], et, site)                         # [W, C, N, O, F]
    rows = _reshape(p, [w * c, n, o, ko])
    s = _reshape(sum_rows(rows, _zero(et), site.plans(w * c)), [n] + sp_out + [ko])
    # back to the output's layout
    order = [dn.output_batch_dimension] + list(dn.output_spatial_dimensions) + [dn.output_feature_dimension]
    inv = [order.index(d) for d in range(len(os_))]
    _replace(op, _transpose(s, inv))
    return True


def _no_contraction(op, site):
    """multiply's result made opaque: no FMA contraction (module docstring)."""
    if not _is_float(op.results[0]):
        return False
    new = _op("stablehlo.multiply", list(op.operands), op.results[0].type)
    _replace(op, site.opaque(new))
    return True


def _no_reciprocal(op, site):
    """divide's divisor made opaque: x / c stays a division."""
    if not _is_float(op.results[0]):
        return False
    new = _op("stablehlo.divide", [op.operands[0], site.opaque(op.operands[1])], op.results[0].type)
    _replace(op, new)
    return True


ORDERED = {"stablehlo.dot_general": _dot_general, "stablehlo.reduce": _reduce,
           "stablehlo.reduce_window": _reduce_window, "stablehlo.convolution": _convolution}
STRICT = {"stablehlo.multiply": _no_contraction, "stablehlo.divide": _no_reciprocal}


class Site:
    """What a rule needs besides its op: the plan for a reduction of n
    leaves (recorded in `taken`), and `opaque` — x − z, z the extra
    argument `rewrite` gives every function, +0 at run time (`ZERO_INPUT`).  x − (+0)
    is x for every x (−0 included), and a compiler that cannot see z is 0
    can neither fold it away nor fuse a product through it: contracted, it
    is fma(a, b, −0) = RN(a·b), the product rounded once; and what reads
    x − z reads an add, not a product.  (optimization_barrier, a no-op
    reduce_precision or a bitcast round trip did not stop XLA:CPU from
    contracting a product into the add it feeds: tested here, 312 of 1000
    elements fused regardless.)"""

    def __init__(self, zero, rng, left_fold):
        self.zero, self.rng, self.left_fold, self.taken = zero, rng, left_fold, []

    def plans(self, n: int) -> Plan:
        p = sample_plan(n, self.rng, self.left_fold)
        self.taken.append(p)
        return p

    def opaque(self, x):
        z = _op("stablehlo.convert", [self.zero], _ttype([], _etype(x)))
        return _op("stablehlo.subtract", [x, _broadcast(z, _shape(x))], x.type)


ZERO_INPUT = np.zeros((), np.float32)   # the extra last argument of a rewritten program


def _functions(module):
    return [op.operation for op in module.body.operations if op.operation.name == "func.func"]


def _add_zero_argument(func):
    """The function gains a last argument tensor<f32> (`ZERO_INPUT`)."""
    from jaxlib.mlir import ir
    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    t = _ttype([], ir.F32Type.get())
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(list(ftype.inputs) + [t],
                                                                            list(ftype.results)))
    if "arg_attrs" in func.attributes:
        attrs = list(ir.ArrayAttr(func.attributes["arg_attrs"]))
        func.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs + [ir.DictAttr.get({})])
    return func.regions[0].blocks[0].add_argument(t, ir.Location.unknown())


def _pass_zero(call, zero):
    """A func.call passes the caller's zero on (every function takes one)."""
    from jaxlib.mlir import ir
    with ir.InsertionPoint(call):
        new = ir.Operation.create("func.call", results=[r.type for r in call.results],
                                  operands=list(call.operands) + [zero],
                                  attributes={a.name: a.attr for a in map(call.attributes.__getitem__,
                                                                          range(len(call.attributes)))})
    for old, r in zip(call.results, new.results):
        old.replace_all_uses_with(r)
    call.erase()


def rewrite(text: str, rng=None, left_fold: bool = False) -> tuple[str, list[Plan]]:
    """The program with XLA's departures barred (`STRICT`) and, with a `rng`
    (or `left_fold`), every reduction it can order summed by a sampled
    plan (`ORDERED`): the rewritten generic text — which takes one more
    argument, `ZERO_INPUT` — and each site's `Plan`, in the order the
    sites were met.  Every function takes the zero as its last argument
    and every call passes its caller's on (jaxlib's `inline` pass does not
    inline a call inside a while loop's body, where JAX puts fori_loop's)."""
    from jax._src.interpreters import mlir as jm

    from shlo_conform.oracle.rewrites import walk
    ir = _ir()
    with jm.make_ir_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        rules = dict(STRICT)
        if rng is not None or left_fold:
            rules.update(ORDERED)
        taken = []
        for func in _functions(module):
            site = Site(_add_zero_argument(func), rng, left_fold)
            for op in walk(func):
                if op.name == "func.call":
                    _pass_zero(op, site.zero)
                    continue
                rule = rules.get(op.name)
                if rule is not None:
                    with ir.InsertionPoint(op):
                        rule(op, site)
            taken += site.taken
        module.operation.verify()
        return module.operation.get_asm(print_generic_op_form=True, assume_verified=True), taken


# --------------------------------------------------------------------------
# Measuring against the oracle
# --------------------------------------------------------------------------

@dataclass
class Output:
    """One output's figures (module docstring)."""
    index: int
    type: str
    kind: str
    enc_median: float = float("nan")
    enc_max: float = float("nan")
    caught: float | None = None
    spread_median: float = 0.0
    spread_max: float = 0.0
    among_median: float = 0.0          # half the range among the orders themselves, relative to |center|
    among_max: float = 0.0
    caught_bf: float | None = None
    caught_median: float | None = None   # the scaling the median element alone catches: enclosure
    caught_bf_median: float | None = None   # … and the sampled hull
    used_max: float = 0.0              # the largest fraction of its allowance a sampled element used
    outside: list = field(default_factory=list)    # (order, element, value, lo, hi)
    judged_fail: list = field(default_factory=list)   # orders compare() fails
    distinct: int = 0
    own: dict = field(default_factory=dict)          # evaluator -> (inside?, max deviation)
    note: str = ""


def _values(a: np.ndarray, et) -> np.ndarray:
    from shlo_conform.spec.types import from_bits, to_bits
    return from_bits(to_bits(np.asarray(a), et), et).astype(np.float64).reshape(-1)


def measure(exp, results: dict[str, np.ndarray], counted: list[str]) -> Output:
    """`results` (evaluator name → output) against `exp`; the spread is
    taken over the `counted` evaluators (the legitimate orders)."""
    from shlo_conform.spec.types import from_bits, from_ordinals, ordinals, to_bits
    from shlo_conform.suites.compare import compare
    from shlo_conform.suites.kinds import kind_of
    from shlo_conform.suites.resolution import resolution
    et = exp.type.element_type
    out = Output(0, str(exp.type.mlir if hasattr(exp.type, "mlir") else exp.type), exp.kind)
    res = resolution(exp)
    ends = kind_of(exp).enclosure(exp)
    for name, y in results.items():
        if not compare(exp, y).ok:
            out.judged_fail.append(name)
    bits = {name: to_bits(np.asarray(y), et).reshape(-1) for name, y in results.items()}
    out.distinct = len({bits[n].tobytes() for n in counted})
    if ends is None or et.is_complex or not et.is_float:
        out.note = "judged by its property" if ends is None else ("exact" if not et.is_float else "complex")
        if ends is not None and not et.is_float:
            lo_o, hi_o = ends
            for name, y in results.items():
                o = np.asarray(y).astype(np.int64).reshape(-1)
                bad = np.nonzero((o < np.asarray(lo_o).astype(np.int64)) | (o > np.asarray(hi_o).astype(np.int64)))[0]
                out.outside += [(name, int(i), int(o[i]), int(lo_o[i]), int(hi_o[i])) for i in bad[:5]]
        return out
    out.enc_median, out.enc_max, out.caught = res.rel_median, res.rel_max, res.scaling_caught
    lo_o, hi_o = (np.asarray(e).astype(np.int64) for e in ends)
    c = from_bits(np.reshape(exp.bits, -1), et).astype(np.float64)
    lo = from_bits(from_ordinals(lo_o, et), et).astype(np.float64)
    hi = from_bits(from_ordinals(hi_o, et), et).astype(np.float64)
    checked = ~(np.isnan(c) | np.isnan(lo) | np.isnan(hi))
    mag = np.abs(c)
    dev = np.zeros_like(c)
    ymin, ymax = c.copy(), c.copy()
    omin, omax = np.full_like(c, np.inf), np.full_like(c, -np.inf)
    used = np.zeros_like(c)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for name, y in results.items():
            v = _values(y, et)
            o = ordinals(bits[name], et).astype(np.int64)
            bad = np.nonzero(checked & ((o < lo_o) | (o > hi_o)))[0]
            out.outside += [(name, int(i), float(v[i]), float(lo[i]), float(hi[i]), float(c[i])) for i in bad[:5]]
            d = np.abs(v - c)
            r = np.where(d == 0, 0.0, np.where(mag > 0, d / mag, np.inf))
            room = np.where(v >= c, hi - c, c - lo)
            u = np.where(d == 0, 0.0, np.where(room > 0, d / room, np.inf))
            if name in counted:
                dev = np.maximum(dev, np.where(checked, r, 0))
                ymin, ymax = np.fmin(ymin, v), np.fmax(ymax, v)
                omin, omax = np.fmin(omin, v), np.fmax(omax, v)
                used = np.maximum(used, np.where(checked, u, 0))
            else:
                out.own[name] = (not bad.size, float(np.max(np.where(checked, r, 0))))
        keep = checked & np.isfinite(c)
        out.spread_median, out.spread_max = float(np.median(dev[keep])), float(dev[keep].max())
        if counted:
            half = (omax - omin) / 2
            among = np.where(half == 0, 0.0, np.where(mag > 0, half / mag, np.inf))[keep]
            out.among_median, out.among_max = float(np.median(among)), float(among.max())
        out.used_max = float(used[keep].max())
        scale = keep & (c != 0)
        if scale.any():
            up = np.where(c > 0, (ymax - c) / mag, (c - ymin) / mag)[scale]
            down = np.where(c > 0, (c - ymin) / mag, (ymax - c) / mag)[scale]
            out.caught_bf = float(max(up.min(), down.min()))
            out.caught_bf_median = float(np.median(np.maximum(up, down)))
            eu = np.where(c > 0, (hi - c) / mag, (c - lo) / mag)[scale]
            ed = np.where(c > 0, (c - lo) / mag, (hi - c) / mag)[scale]
            out.caught_median = float(np.median(np.maximum(eu, ed)))
    return out


# --------------------------------------------------------------------------
# One program
# --------------------------------------------------------------------------

_WHY_NOT = {
    "int8-matmul": "exact (integer dot: every order gives the same sum)",
    "sort-topk": "exact (sort, top_k: no arithmetic)",
    "cholesky-solve": "judged by its property (LAPACK custom calls: a backward-error residual)",
    "fft-conv": "no order to sample: the FFT's error is its algorithm's, not a reduction's tree",
    "while-ring": "no reduction: one multiply and one add per step, each rounded once",
}
_NO_INTERPRETER = {   # the reference interpreter aborts its process on these (CHANGELOG, stop 31)
    "cholesky-solve": "LAPACK custom_call",
    "fft-conv": "fft: 'Semantics mismatch between provided type and computed'",
}


def real_programs():
    from bench import real_programs
    return real_programs


def oracle(text: str, args: list, tmp: Path):
    """The expectations `run` judges with: the program and inputs read as
    `run` reads them (an .npz, bf16 as its bits)."""
    import ml_dtypes

    from shlo_conform import differential as d
    npz = tmp / "in.npz"
    np.savez(npz, **{f"arg{i}": (a.view(np.uint16) if a.dtype == ml_dtypes.bfloat16 else a)
                     for i, a in enumerate(args)})
    data = text.encode()
    prep = d.prepare(data)
    inputs = d.npz_inputs(str(npz), prep.types)
    exps, why = d.expectations(data, inputs)
    if exps is None:
        raise RuntimeError(f"the oracle has no expectation: {why}")
    return exps


def run_program(name: str, samples: int, interpreter: bool, tmp: Path, seed: int = 0) -> dict:
    import jax

    from shlo_conform.backends.interpreter import InterpreterBackend
    from shlo_conform.backends.xla import XlaBackend
    rp = real_programs()
    f = rp.PROGRAMS[name][0]
    args = rp.inputs(name)
    text = jax.jit(f).lower(*args).as_text()
    t0 = time.perf_counter()
    exps = oracle(text, args, tmp)
    t_oracle = time.perf_counter() - t0
    xla = XlaBackend(dict(XLA_STRICT))
    results: list[dict] = [dict() for _ in exps]
    counted, plans_seen = [], set()
    t0 = time.perf_counter()

    def record(label, outs, count):
        for k, y in enumerate(outs):
            results[k][label] = y
        if count:
            counted.append(label)
    strict, _ = rewrite(text)
    record("xla-kernels", xla.run(xla.compile(strict), args + [ZERO_INPUT]), False)
    errors = []
    if name not in _WHY_NOT:
        rng = np.random.default_rng(seed)
        for s in range(samples):
            try:
                prog, taken = rewrite(text, rng, left_fold=(s == 0))
                plans_seen.add(tuple(p.what + ("" if p.block else f"/{p.n}") for p in taken))
                record(f"order{s}", xla.run(xla.compile(prog), args + [ZERO_INPUT]), True)
            except Exception as e:   # a rewrite XLA refuses is the sampler's bug: said, not hidden
                errors.append(f"order{s}: {str(e).splitlines()[0][:160]}")
    t_orders = time.perf_counter() - t0
    if interpreter and name not in _NO_INTERPRETER:
        try:
            it = InterpreterBackend()
            record("interpreter", it.run(it.compile(text), args), True)
        except Exception as e:
            errors.append(f"interpreter: {str(e).splitlines()[0][:160]}")
    outs = []
    for k, e in enumerate(exps):
        o = measure(e, results[k], counted)
        o.index = k
        outs.append(o)
    return {"name": name, "outputs": outs, "orders": len([c for c in counted if c.startswith("order")]),
            "plans": len(plans_seen), "interpreter": "interpreter" in counted, "errors": errors,
            "why_not": _WHY_NOT.get(name, ""), "t_oracle": t_oracle, "t_orders": t_orders}


# --------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------

def _pct(x) -> str:
    if x is None:
        return "—"
    if not np.isfinite(x):
        return "∞"
    return f"{x * 100:.3g}%"


def _ratio(a, b) -> str:
    if not (np.isfinite(a) and np.isfinite(b)):
        return "—"
    if b == 0:
        return "∞" if a > 0 else "—"
    return f"{a / b:.3g}×"


HEADER = ("| program | output | enclosure median / max | scaling caught: smallest / median element | spread of "
          "sampled orders median / max | half-range among the orders median / max | sampled hull's scaling: "
          "smallest / median element | ratio median / max | "
          "most of its allowance used | sound? | distinct / orders | xla kernels |")


def row(r: dict, o: Output) -> str:
    sound = "yes" if not o.outside and not o.judged_fail else (
        f"**NO**: {len(o.outside)} element(s) outside, compare fails {','.join(o.judged_fail) or 'none'}")
    n_orders = r["orders"] + (1 if r["interpreter"] else 0)
    own = o.own.get("xla-kernels")
    own_s = "—" if own is None else f"{'inside' if own[0] else '**outside**'}, dev max {_pct(own[1])}"
    if o.note or r["why_not"]:
        what = r["why_not"] or o.note
        return (f"| {r['name']} | #{o.index} {o.type} | {what} | — | — | — | — | — | — | {sound} | "
                f"{o.distinct} / {n_orders} | {own_s} |")
    return (f"| {r['name']} | #{o.index} {o.type} | {_pct(o.enc_median)} / {_pct(o.enc_max)} | {_pct(o.caught)} / "
            f"{_pct(o.caught_median)} | {_pct(o.spread_median)} / {_pct(o.spread_max)} | {_pct(o.among_median)} / "
            f"{_pct(o.among_max)} | {_pct(o.caught_bf)} / "
            f"{_pct(o.caught_bf_median)} | "
            f"{_ratio(o.enc_median, o.spread_median)} / {_ratio(o.enc_max, o.spread_max)} | {_pct(o.used_max)} | "
            f"{sound} | {o.distinct} / {n_orders} | {own_s} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="", help="comma-separated program names (bench/real_programs.py)")
    ap.add_argument("--samples", type=int, default=30, help="sampled orders per program (default 30)")
    ap.add_argument("--no-interpreter", action="store_true", help="skip the reference interpreter's order")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    names = [n for n in a.only.split(",") if n] or list(real_programs().PROGRAMS)
    print(HEADER)
    print("|" + "---|" * (HEADER.count("|") - 1))
    problems = []
    t_all = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for n in names:
            r = run_program(n, a.samples, not a.no_interpreter, Path(tmp), a.seed)
            for o in r["outputs"]:
                print(row(r, o), flush=True)
                for x in o.outside:
                    problems.append(f"{n} #{o.index}: {x[0]} element {x[1]} = {x[2]!r} outside "
                                    f"[{x[3]!r}, {x[4]!r}] (center {x[5] if len(x) > 5 else '?'})")
                for j in o.judged_fail:
                    problems.append(f"{n} #{o.index}: compare() fails {j}")
            problems += [f"{n}: {e}" for e in r["errors"]]
            print(f"<!-- {n}: {r['orders']} sampled orders ({r['plans']} distinct plans), interpreter "
                  f"{'yes' if r['interpreter'] else 'no'}; oracle {r['t_oracle']:.2g} s, orders "
                  f"{r['t_orders']:.2g} s -->", flush=True)
    print(f"\n{time.perf_counter() - t_all:.0f} s in all")
    if problems:
        print("\nOutside the enclosure or refused (each is an oracle or sampler bug to look at):")
        for p in problems:
            print("  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
