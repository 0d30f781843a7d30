"""Enclosures that stay tight through a program: affine forms (issue 32).

The oracle states each op's allowed results at the operands' primary
values and carries the ranges of approximate operands from op to op by
their ends (propagation.py, bilinear.py).  That is sound, but it forgets
that the error of a value is the *same* error wherever the value is used:
through an LSTM's recurrent matrix U the ends of 128 ranges combine as
|U|·r, which grows ~2–3× a step although the step is contractive, and after
16 steps the hidden state's enclosure covers ±1 — zero and the negated
state included.

So `run` also carries every float value as an **affine form** (Stolfi &
de Figueiredo, *Self-validated numerical methods and applications*, 1997;
de Figueiredo & Stolfi, *Affine arithmetic: concepts and applications*,
Numerical Algorithms 37, 2004):

    x = c + A·ε + r·η,   ε ∈ [−1, 1]^K shared by the whole program,
                         η ∈ [−1, 1]^n fresh for this value's elements,

c the center, A the coefficients of the noise symbols, r ≥ 0 what is not
tracked.  A noise symbol is one source of deviation the spec allows: the
rounding of one element of one op, the tolerance of a transcendental, the
allowance of a sum's evaluation order, the range of an approximate input.
Linear steps (add, subtract, contractions, sums, data movement) map the
symbols exactly, so deviations that cancel in the program cancel here.
A nonlinear element-wise step is linearised at the center with a rigorous
remainder: f(c + d) = f(c) + f′(c)·d + ½·f″(ξ)·d², |d| ≤ rad = Σ|A| + r,
|f″(ξ)| bounded over the whole range (`_UNARY`); a product x·y adds the
bilinear remainder radₓ·rad_y.  Each step then adds its own allowance:
half an ULP of rounding at the largest magnitude it can produce (the op's
tolerance in ULPs besides, for transcendentals; for a contraction or sum,
(n − 1)·u·max(P, N) + u·Σ|x||y| with P and N its terms' sums of each
sign, `_order_allowance` — at most spec/schedule.py's γₙ·Σ|x||y| — or,
narrower, with max(P, N) replaced by the largest |Σ| of a contiguous
block of terms, since the spec's trees keep them in index order,
`_tree_allowance`).  Every
quantity is a sound upper bound of the set the spec allows for the step,
given that its operands lie in their forms —
so by induction over the program the form of every value holds every
result a conforming implementation can produce.

**Where correlation is kept** (`_symbolize`).  A step's allowances, its
remainders and what it inherits untracked go to r, which every later use
sees as a fresh box: exact for one use, but a value used on two paths that
meet again — a row's mean subtracted from each of its elements, q and k of
one layer norm meeting in q·kᵀ, a contraction's result contracted again —
has its deviation counted once per path, with no cancellation, and the
factor compounds stage after stage (a transformer block: ±250 % after its
MLP, where every sampled evaluation order stays within ±4·10⁻⁵ %;
bench/stacked_blocks.py).  So r becomes symbols, one per element, where
that pays: the result of every contraction and sum (dot_general, reduce),
the operand of a move that copies elements (a broadcast of a row's mean,
maximum or sum: kept on the operand, so every copy shares them), and a
loop's carry (`reduce_carry`).  Measured against every allowance made a
symbol of its own (bench/stacked_blocks.py --first-order: the first-order
worst case of the allowances, exactly), these points give the same
enclosure within 1.1–1.3× per stage of the block at 16×32, MLP 64.
chlo.erf and chlo.erfc (the exact GELU) have rules of their own, so a
GELU's two factors keep their common symbols.

*Local families.*  One symbol per element of a value of n elements costs n
columns over n rows.  Where the value has a leading dimension of B ≥ 2
blocks (a sequence's tokens, a batch's rows) its symbols are local
families instead: family e names one symbol per block — the element at
position e of block b has its coefficient on symbol (e, b) — so n / B
columns carry them.  The names stay apart because a local family is only
carried by ops that keep every element in its block (element-wise ops,
moves that keep the leading index, sums and contractions over other
dimensions); an op that mixes blocks first spells the families out as the
global symbols they stand for (`_globalize`: B columns each, the same ids
in every form), or boxes them into r where those do not fit.

Implementation-defined alternatives of an intermediate value do not
propagate (as in propagation.py: the program's later ops are judged on the
primary range); a value's stated range becomes its form where it has none.
A value that is "any value" downstream of a factorisation (characterized.
is_free) has no form: where oracle/chains.py restores a range from such
values (two parts of one eigh's V, PCA's X·V_k·V_kᵀ) that range is the
whole statement, and a form at their primary values would cut it.

`run` intersects each ranged value's stated [lo, hi] (the op-by-op
enclosure) with its form's [c − rad, c + rad], rounded outward into the
format: both hold every allowed result, so their intersection does, and
the op-by-op machinery downstream works from the narrower range too.

Costs are bounded, never discovered: a form keeps at most `K_MAX` symbols
and `ENTRIES_MAX` coefficients; past that, the symbols with the smallest
coefficients move into r (Girard's reduction, "Reachability of uncertain
linear systems using zonotopes", HSCC 2005: sound, it only forgets
correlation), and r is made symbols only where they fit — outside a loop
after boxing the weakest local families to make room (`_make_room`).  The
forms of one run hold at most `HELD_MAX` coefficients together: past that
the least recently used is boxed (`_Held`), again sound.  Under `run`'s
memory budget (the job's address-space cap) the forms take at most a
quarter of what is left, one form a 64th.  An op without a rule here
(convolution, sort, gather, …), a value in f64 (no wider format to
evaluate it in), or one that may be non-finite has no form; its consumers
start from its stated range as fresh symbols.

Rigour of the float64 evaluation.  The program's formats have unit
roundoff u ≥ 2^-24 here (f64 programs get no forms).  Centers,
coefficients and radii are computed in float64: every computed radius is a
sum of at most 2^20 nonnegative terms, each a product of at most four
factors, so its relative error is below 2^-30; it is inflated by `_up`
(×(1 + 2^-29), + 2^-1000) after each step.  Errors of the centers and
coefficients themselves (a rounding of each entry, γ₆₄(n)·Σ|terms| for a
contraction of n terms) are bounded from the same magnitudes and added to
r (`_slop`).  numpy's float64 tanh, exp, log, … are taken to be within
2^-40 relative of the true value, the assumption the fast route
(oracle/fast.py) states and tests; that error, and its effect through the
derivative, is added to r.

Held against brute force in tests/oracle/test_affine.py: small programs
evaluated in every order of their sums (and at the ends of every
tolerance) never leave the enclosure.
"""
from __future__ import annotations

import contextvars
import threading
from dataclasses import dataclass

import numpy as np

try:
    import scipy.special as _sp
except ImportError:   # no scipy: the chlo functions below get no rule (their results start from their ranges)
    _sp = None

from ..spec.expectation import Expectation
from ..spec.kinds import kind_of
from ..spec.types import F32, TensorType, from_bits, from_ordinals, ordinals
from ..spec.ops.dot_algorithm import FIELDS as ALGORITHM_FIELDS
from . import every_tree, numbering
from .fast import round_fast
from .rounding import outward_bits

K_MAX = 4096            # symbols (columns) a form keeps
ENTRIES_MAX = 1 << 24   # coefficients a form keeps (128 MiB of float64)
CARRY_MAX = 4096        # elements of a loop's carry rotated into symbols at most (`reduce_carry`)
HELD_MAX = 1 << 27      # coefficients the forms of one run hold together (1 GiB): past it the least recently
                        # used forms are boxed (`_Held`)
SPREAD = 4              # local families are spelt out as global symbols while they take at most 1/SPREAD of a
                        # form's budget (`_globalize`), boxed beyond
CARRY_BASE = 1 << 61    # ids from here on (to LOCAL_BASE) name the symbols of a loop's carry (`reduce_carry`)
LOCAL_BASE = 1 << 62    # ids from here on name local families (`_symbolize`); below CARRY_BASE, other symbols

_NEXT_ID = [0, LOCAL_BASE, CARRY_BASE]
_ID_LOCK = threading.Lock()
ENABLED: contextvars.ContextVar = contextvars.ContextVar("shlo_conform_affine", default=False)
_HELD: contextvars.ContextVar = contextvars.ContextVar("shlo_conform_affine_held", default=None)


def _new_ids(k: int, local: bool = False, carry: bool = False) -> np.ndarray:
    """k noise symbols (local families, a carry's symbols) never used before
    (grid processes run in threads)."""
    space = 1 if local else 2 if carry else 0
    with _ID_LOCK:
        start = _NEXT_ID[space]
        _NEXT_ID[space] += k
    return np.arange(start, start + k, dtype=np.int64)


def _up(x: np.ndarray) -> np.ndarray:
    return x * (1 + 2.0 ** -29) + 2.0 ** -1000


@dataclass
class Form:
    """x = c + A·ε + r·η over the flattened elements (module docstring)."""
    c: np.ndarray      # float64 (n,)
    ids: np.ndarray    # int64 (K,), increasing
    A: np.ndarray      # float64 (n, K)
    r: np.ndarray      # float64 (n,), ≥ 0
    shape: tuple

    @property
    def n(self) -> int:
        return self.c.size

    def rad(self) -> np.ndarray:
        cached = self.__dict__.get("_rad")
        if cached is None:   # forms are never changed in place: computed once
            cached = _up(_abs_rows(self.A) + self.r) if self.A.shape[1] else self.r
            self.__dict__["_rad"] = cached
        return cached

    def mag(self) -> np.ndarray:
        return _up(np.abs(self.c) + self.rad())

    def lo_hi(self) -> tuple[np.ndarray, np.ndarray]:
        rad = self.rad()
        return np.nextafter(self.c - rad, -np.inf), np.nextafter(self.c + rad, np.inf)

    def tracked(self) -> bool:
        """Does the form carry any deviation at all?"""
        return bool(self.A.shape[1]) or bool(np.any(self.r))


def _abs_rows(a: np.ndarray, cols=None, block: int = 256) -> np.ndarray:
    """Σ|aᵢₖ| per row (over the columns `cols`, or all), a block of rows at
    a time (the |a| temporary stays in cache instead of doubling a matrix
    of 2^24 coefficients)."""
    out = np.empty(a.shape[0])
    for i in range(0, a.shape[0], block):
        rows = a[i:i + block] if cols is None else a[i:i + block][:, cols]
        out[i:i + block] = np.abs(rows).sum(axis=1)
    return out


def _point(c: np.ndarray, shape) -> Form:
    c = np.asarray(c, dtype=np.float64).reshape(-1)
    return Form(c, np.zeros(0, np.int64), np.zeros((c.size, 0)), np.zeros(c.size), tuple(shape))


def _fresh(f: Form, rho: np.ndarray) -> Form:
    """`f` plus an allowance of ±rho per element, independent of everything
    else (into r): r becomes symbols where correlation pays (`_symbolize`:
    a contraction's result, the source of a broadcast, a loop's carry),
    not after every op (module docstring)."""
    rho = np.asarray(rho, dtype=np.float64).reshape(-1)
    return Form(f.c, f.ids, f.A, _up(f.r + rho), f.shape)


def _condense(f: Form, room: int | None = None) -> Form:
    """At most K_MAX symbols and ENTRIES_MAX coefficients (or `room`
    symbols): the symbols with the smallest coefficients (Σ over elements)
    move into r."""
    if room is None:
        room = _room(f.n)
    if f.A.shape[1] <= room:
        return f
    weight = _abs_cols(f.A)
    order = np.argsort(weight, kind="stable")
    drop, kept = order[:f.A.shape[1] - room], np.sort(order[f.A.shape[1] - room:])
    r = _up(f.r + _abs_rows(f.A, drop))
    return Form(f.c, f.ids[kept], f.A[:, kept], r, f.shape)


def _abs_cols(a: np.ndarray, block: int = 256) -> np.ndarray:
    """Σ|aᵢₖ| per column, a block of rows at a time (as `_abs_rows`)."""
    out = np.zeros(a.shape[1])
    for i in range(0, a.shape[0], block):
        out += np.abs(a[i:i + block]).sum(axis=0)
    return out


def _room(n: int) -> int:
    """The symbols a form of n elements may keep: K_MAX, ENTRIES_MAX
    coefficients — and, in a run with a memory budget, a 64th of it
    (`_Held`)."""
    held = _HELD.get()
    entries = ENTRIES_MAX if held is None else min(ENTRIES_MAX, held.entries)
    return min(K_MAX, entries // max(n, 1))


# --------------------------------------------------------------------------
# Symbols where correlation pays: local families, and what a run holds
# --------------------------------------------------------------------------

def _blocks(shape) -> int:
    """The number of blocks a value's local families run over: its leading
    dimension (tokens, batch rows), 1 where it has none worth splitting."""
    return int(shape[0]) if len(shape) and int(shape[0]) >= 2 else 1


def _local(ids: np.ndarray) -> np.ndarray:
    return ids >= LOCAL_BASE


def _box_local(f: Form) -> Form:
    """`f` with its local families boxed into r (sound as Girard's reduction is)."""
    loc = _local(f.ids)
    if not loc.any():
        return f
    r = _up(f.r + _abs_rows(f.A[:, loc]))
    return Form(f.c, f.ids[~loc], f.A[:, ~loc], r, f.shape)


def _global_ids(family: int, blocks: int) -> np.ndarray:
    """The global ids of a local family's symbols, one per block — the same
    for every form that carries the family, so forms split apart keep
    meaning the same symbols (the run's `_Held` keeps the table; outside a
    run, a table of this call's own)."""
    held = _HELD.get()
    spelt = held.spelt if held is not None else {}
    with _ID_LOCK:
        base = spelt.get(family)
        if base is None:
            base = spelt[family] = _NEXT_ID[0]
            _NEXT_ID[0] += blocks
    return np.arange(base, base + blocks, dtype=np.int64)


def _globalize(f: Form) -> Form:
    """`f` with its local families split into the global symbols they stand
    for — family k's coefficient at an element of block b goes to the
    symbol (k, b) — what an op that mixes blocks (a sum or contraction over
    the leading dimension, a move of an element to another block) must see,
    since a local coefficient names a symbol of its own block only.
    Exactly the same form, spelt out: B columns per family.  Where they do
    not fit the form's budget the families are boxed instead
    (`_box_local`)."""
    loc = _local(f.ids)
    if not loc.any():
        return f
    blocks = _blocks(f.shape)
    room = _room(f.n)
    fams = np.nonzero(loc)[0]
    if int((~loc).sum()) + blocks * fams.size > room // SPREAD:
        return _box_local(f)
    block_of = np.arange(f.n) // (f.n // blocks)
    cols = np.zeros((f.n, blocks * fams.size))
    ids = []
    for j, k in enumerate(fams):
        cols[np.arange(f.n), j * blocks + block_of] = f.A[:, k]
        ids.append(_global_ids(int(f.ids[k]), blocks))
    ids = np.concatenate(ids)
    keep = _abs_cols(cols) > 0
    return Form(f.c, np.concatenate([f.ids[~loc], ids[keep]]),
                np.concatenate([f.A[:, ~loc], cols[:, keep]], axis=1), f.r, f.shape)


def _symbolize(f: Form) -> Form:
    """The untracked radius r as symbols of its own, one per element, so
    that every later use of the value shares them (module docstring:
    "Where correlation is kept").  r·η with η fresh per element and
    diag(r)·ε with ε new symbols are the same set, so nothing is widened;
    values computed earlier from r saw a box, which holds every
    correlation.  Where the value has B ≥ 2 blocks the symbols are local
    families, n / B columns (module docstring: "Local families").  Skipped
    where the columns would not fit the form's budget (K_MAX, ENTRIES_MAX):
    r stays r."""
    if not np.any(f.r):
        return f
    blocks = _blocks(f.shape)
    width = f.n // blocks if blocks > 1 else f.n
    room = _room(f.n)
    if width > room:
        return f
    if width + f.A.shape[1] > room:   # make room from the weakest local families, never from global symbols
        roomy = _make_room(f, width + f.A.shape[1] - room)
        if roomy is None:
            return f
        f = roomy
    ids = _new_ids(width, local=blocks > 1)
    cols = np.zeros((f.n, width))
    cols[np.arange(f.n), np.arange(f.n) % width] = f.r
    keep = _abs_cols(cols) > 0
    return Form(f.c, np.concatenate([f.ids, ids[keep]]), np.concatenate([f.A, cols[:, keep]], axis=1),
                np.zeros(f.n), f.shape)


def _make_room(f: Form, k: int) -> Form | None:
    """`f` with its k weakest local families boxed into r (so that
    `_symbolize` turns them into the value's own), None where it has fewer
    or the value is a loop's: there the symbols carry the recurrence from
    step to step and none is given up for a contraction's (measured: the
    LSTM of bench/real_programs.py widens by half when they are), while
    outside a loop a family made at an earlier contraction has mostly done
    its work once its value is consumed (the transformer block at
    128×256: ±117 % → ±43 %)."""
    loc = np.nonzero(_local(f.ids))[0]
    if loc.size < k or np.any((f.ids >= CARRY_BASE) & (f.ids < LOCAL_BASE)):
        return None
    drop = loc[np.argsort(_abs_cols(f.A)[loc], kind="stable")[:k]]
    kept = np.setdiff1d(np.arange(f.A.shape[1]), drop)
    return Form(f.c, f.ids[kept], f.A[:, kept], _up(f.r + _abs_rows(f.A, drop)), f.shape)


def _boxed(f: Form) -> Form:
    """`f` with every symbol boxed into r: the same enclosure, no correlation kept."""
    return f if not f.A.shape[1] else Form(f.c, np.zeros(0, np.int64), np.zeros((f.n, 0)), f.rad(), f.shape)


class _Held:
    """The forms one run holds with coefficients, least recently used first:
    past HELD_MAX coefficients in all, the oldest is boxed (`_boxed`) — its
    enclosure stays, its correlation with later values is forgotten, which
    is sound as any reduction is.  Every value of a program keeps its
    expectation to the end of the run, so without this the forms of a
    transformer block would hold gigabytes.  Only weak references are
    kept: a value dropped (a loop body's, after its iteration) frees its
    form, and its entry is purged when the count is next over."""

    def __init__(self):
        self.lock = threading.Lock()
        self.order: dict = {}    # id(expectation) -> (weak reference, id(form), coefficients), oldest first
        self.total = 0
        self.spelt: dict = {}    # local family id -> the global id of its symbol in block 0 (`_global_ids`)
        self.limit, self.entries = HELD_MAX, ENTRIES_MAX
        room = _address_space_left()
        if room is not None:   # `run`'s job process is capped at its budget: forms take a quarter, one a 64th
            self.limit, self.entries = min(HELD_MAX, room // 32), min(ENTRIES_MAX, room // 512)

    def hold(self, e, f: Form) -> None:
        import weakref
        with self.lock:
            self._drop(id(e))
            if f.A.size:
                self.order[id(e)] = (weakref.ref(e), id(f), f.A.size)
                self.total += f.A.size
            if self.total > self.limit:
                for key in [k for k, (ref, _, _) in self.order.items() if ref() is None]:
                    self._drop(key)
            while self.total > self.limit and len(self.order) > 1:
                key = next(iter(self.order))
                ref, fid, _ = self.order[key]
                self._drop(key)
                e_old = ref()
                form = getattr(e_old, "affine", None)
                if form is not None and id(form) == fid:
                    e_old.affine = _boxed(form)

    def used(self, e) -> None:
        with self.lock:
            got = self.order.pop(id(e), None)
            if got is not None:
                self.order[id(e)] = got

    def _drop(self, key) -> None:
        got = self.order.pop(key, None)
        if got is not None:
            self.total -= got[2]


def _address_space_left() -> int | None:
    """Bytes this process may still map under its address-space cap
    (shlo_conform/pipeline/isolation.py sets it at the oracle's budget), or
    None where there is none."""
    try:
        import os
        import resource
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft == resource.RLIM_INFINITY:
            return None
        with open("/proc/self/statm") as f:
            mapped = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        return max(soft - mapped, 0)
    except (ImportError, OSError, ValueError, AttributeError):
        return None


def _hold(e, f: Form) -> None:
    held = _HELD.get()
    if held is not None:
        held.hold(e, f)


def _align(*forms: Form) -> tuple[np.ndarray, list]:
    """The union of the forms' symbols and each form's coefficients over it
    — None for a form with no symbols (zeros: callers skip it, so a weight
    matrix of 65,536 exact elements is never expanded over 8,192 symbols)."""
    if forms and all(np.array_equal(f.ids, forms[0].ids) for f in forms[1:]):
        return forms[0].ids, [f.A if f.ids.size else None for f in forms]
    ids = np.unique(np.concatenate([f.ids for f in forms])) if forms else np.zeros(0, np.int64)
    out = []
    for f in forms:
        if not f.ids.size:
            out.append(None)
            continue
        if np.array_equal(f.ids, ids):
            out.append(f.A)
            continue
        A = np.zeros((f.n, ids.size))
        if f.ids.size:
            A[:, np.searchsorted(ids, f.ids)] = f.A
        out.append(A)
    return ids, out


def _sum_cols(terms: list, n: int, k: int) -> np.ndarray:
    """Σ weight·coefficients over (weight, coefficients or None) pairs."""
    out = None
    for w, a in terms:
        if a is None:
            continue
        if out is None:
            out = np.multiply(a, w)
        elif np.ndim(w) == 0 and w in (1.0, -1.0):   # add, subtract: no product to form
            if w == 1.0:
                out += a
            else:
                out -= a
        else:
            out += w * a
    return np.zeros((n, k)) if out is None else out


def _slop(*mags: np.ndarray, terms: int = 1) -> np.ndarray:
    """A bound of float64's own rounding in computing a sum of `terms`
    terms whose magnitudes sum to Σ mags: γ₆₄(terms + 2)·Σ mags."""
    g = (terms + 2) * 2.0 ** -53 / (1 - (terms + 2) * 2.0 ** -53)
    return g * sum(mags)


# --------------------------------------------------------------------------
# Formats
# --------------------------------------------------------------------------

def _format(t):
    """The real float format of a tensor type whose values forms can carry
    (unit roundoff ≥ 2^-24), else None."""
    if not isinstance(t, TensorType):
        return None
    et = t.element_type
    if not et.is_float or et.is_complex or et.format.precision > 24:
        return None
    return et.format


def _half_ulp(m: np.ndarray, fmt) -> np.ndarray:
    """Half an ULP of the format at magnitude m or below: max(m·2^-p, 2^(emin-p))."""
    return np.maximum(m * 2.0 ** -fmt.precision, 2.0 ** (fmt.emin - fmt.precision))


def _rounding(f: Form, fmt, tolerance: int = 0) -> Form | None:
    """`f` (the exact result) rounded into `fmt` and then up to `tolerance`
    ULPs away: ±((tolerance + ½)·ULP at the largest magnitude reachable)."""
    m = f.mag()
    if not np.all(np.isfinite(m)) or np.any(m * (1 + (tolerance + 2) * 2.0 ** (2 - fmt.precision))
                                            >= float(fmt.max_finite)):
        return None   # may overflow: no form
    m = m * (1 + (tolerance + 1) * 2.0 ** (2 - fmt.precision))
    g = _fresh(f, _up((2 * tolerance + 1) * _half_ulp(m, fmt)))
    return _collapsed(f, g, fmt) if tolerance == 0 else g


def _collapsed(f: Form, g: Form, fmt) -> Form:
    """`g` (the correctly rounded `f`) with each element whose exact
    results — all of [lo, hi] of `f` — round to one value of `fmt` made that
    value, with no deviation: rounding is monotone, so every result the spec
    allows there is that value.  A value computed in f32 and converted to
    bf16 (a layer norm's output cast for a bf16 matmul) is then exact on
    nearly every element, where the half ULP of bf16 as a fresh deviation of
    each element had widened a decoder's output to ±96 %.  f64 results are
    left (their rounding from float64 ends is not one cast)."""
    if fmt.precision > F32.precision or g.shape != f.shape:
        return g
    lo, hi = f.lo_hi()
    with np.errstate(all="ignore"):
        a, b = round_fast(lo, fmt), round_fast(hi, fmt)
    one = (a == b) & np.isfinite(a) & (np.signbit(a) == np.signbit(b))
    if not one.any():
        return g
    A = g.A.copy()
    A[one] = 0.0
    return Form(np.where(one, a, g.c), g.ids, A, np.where(one, 0.0, g.r), g.shape)


def _order_allowance(fmt, n: int, most: np.ndarray, mag: np.ndarray, products: bool = True):
    """What the order of a sum of n terms may add, in any order and any
    accumulator at least as wide as `fmt` (docs/oracle-evaluation.md,
    "A sum's order, by the sign of its terms").  Each of the n − 1
    additions rounds a partial sum — a sum of some of the terms, so at
    most the larger of the sums of one sign, `most` ≥ max(P, N), grown by
    the earlier roundings: (n − 1)·u·most/(1 − n·u); each product rounds
    once more, u·Σ|x||y| (`mag` ≥ Σ|terms|) in all; n half-subnormals for
    products that underflow.  Never more than γₙ·Σ|terms| (Higham,
    *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §3.1 and
    §4.2), which terms of both signs in equal measure halve.  None where
    n·u ≥ 1."""
    u = 2.0 ** -fmt.precision
    if n * u >= 1:
        return None
    tiny = n * 2.0 ** (fmt.emin - fmt.precision)
    signed = (n - 1) * u / (1 - n * u) * most + (u * mag if products else 0)
    return _up(np.minimum(signed, n * u / (1 - n * u) * mag) + tiny)


def _tree_allowance(fmt, n: int, block: np.ndarray, mag: np.ndarray, products: bool = True):
    """What the order of a sum of n terms may add when its tree keeps the
    terms in index order, as spec.md's reduce schedule does (docs/oracle-
    evaluation.md, "Trees in index order"): every node sums a contiguous
    block, whose exact sum is at most `block` (every_tree.largest_block of
    the centers' products, plus the sum of the products' radii) and
    whose computed sum differs from it by the roundings below it — the
    products' u·Σ|t| and at most the whole error E — so E ≤ u·Σ|t| + (n −
    1)·u·(block + u·Σ|t| + E), solved for E; beside it, any order in an
    accumulator at least twice as wide as `fmt` (f32 for narrower formats,
    float64 for f32: XLA's f32 accumulation of f16 products), γₙ of that
    accumulator times Σ|t|, whose final rounding u·|s| ≤ u·block the first
    part already holds.  None where n·u ≥ 1."""
    u = 2.0 ** -fmt.precision
    if n * u >= 1:
        return None
    wide = 2.0 ** -(24 if fmt.precision < 24 else 53)
    rounded = u * mag if products else 0
    tiny = n * 2.0 ** (fmt.emin - fmt.precision)
    tree = (rounded + (n - 1) * u * (block + rounded)) / (1 - n * u)
    return _up(tree + n * wide / (1 - n * wide) * mag + tiny)


def _one_sign(c: np.ndarray, central: np.ndarray, mag: np.ndarray, n: int) -> np.ndarray:
    """max(P, N) = (Σ|t| + |Σt|)/2, bounded from float64 sums at hand:
    `c` = Σ of the terms' centers, `central` = Σ|centers|, `mag` ≥ Σ|t|
    over the terms' ranges (so |Σt| ≤ |c| + mag − central), each with
    float64's own error γ₆₄(n + 2)·(mag + central).  Exact for exact
    terms; for wide ranges it forgets their signs (`_dot_general` then
    bounds P and N apart)."""
    return _up(mag - central / 2 + np.abs(c) / 2 + 2 * _slop(mag, central, terms=n + 2))


# --------------------------------------------------------------------------
# From and to expectations
# --------------------------------------------------------------------------

def of(e) -> Form | None:
    """A value's form: the one it carries, else its stated range as fresh
    symbols (a point for an exact value); None where no form fits (not a
    real float of ≤ 24 bits, a non-finite element)."""
    if isinstance(e, tuple) or not isinstance(e, Expectation):
        return None
    got = getattr(e, "affine", None)
    if got is not None:
        held = _HELD.get()
        if held is not None:
            held.used(e)
        return got
    f = _stated(e)
    if f is not None:
        e.affine = f
    return f


def _stated(e: Expectation) -> Form | None:
    """The expectation's own statement as a form: a point, or its range as fresh symbols."""
    from .characterized import is_free
    fmt = _format(e.type)
    if fmt is None or is_free(e):   # "any value" downstream of a factorisation: its primary is no point of it —
        return None                 # a rule that restores a range from such values (oracle/chains.py) states it whole
    et = e.type.element_type
    kind = kind_of(e)
    if kind.pinned:
        v = from_bits(e.bits, et).astype(np.float64)
        if not np.all(np.isfinite(v)):
            return None
        f = _point(v, e.type.shape)
    elif (ends := kind.admits(e)) is not None:
        lo_o, hi_o = ends
        lo = from_bits(from_ordinals(lo_o, et), et).astype(np.float64)
        hi = from_bits(from_ordinals(hi_o, et), et).astype(np.float64)
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
            return None
        c = (lo + hi) / 2
        half = _up(np.maximum(hi - c, c - lo))
        f = _fresh(_point(c, e.type.shape), half)
    else:
        return None
    return f


def _narrower(f: Form, g: Form | None) -> Form:
    """Per element, whichever of two forms without symbols is narrower:
    both hold every allowed result, and their elements share nothing."""
    if g is None or f.A.shape[1] or g.A.shape[1] or g.n != f.n:
        return f
    take = g.r < f.r
    return Form(np.where(take, g.c, f.c), f.ids, f.A, np.where(take, g.r, f.r), f.shape)


def tighten(e: Expectation, f: Form) -> None:
    """Intersect a ranged expectation's [lo, hi] with the form's enclosure,
    rounded outward into the format (module docstring); NaN elements keep
    theirs.  An implementation-defined alternative is another allowed
    value beside [lo, hi] and stays as it is."""
    et = e.type.element_type
    kind = kind_of(e)
    if not kind.holds_range or et.is_complex:
        return
    lo, hi = f.lo_hi()
    lo_b, hi_b = outward_bits(lo, et, down=True).reshape(-1), outward_bits(hi, et, down=False).reshape(-1)
    old_lo, old_hi = (np.reshape(x, -1) for x in kind.ends(e))
    o_lo, o_hi = ordinals(old_lo, et), ordinals(old_hi, et)
    n_lo, n_hi = ordinals(lo_b, et), ordinals(hi_b, et)
    old_lo_v = from_bits(old_lo, et).astype(np.float64)
    old_hi_v = from_bits(old_hi, et).astype(np.float64)
    ok = ~np.isnan(old_lo_v) & ~np.isnan(old_hi_v)
    new_lo, new_hi = np.where(ok, np.maximum(o_lo, n_lo), o_lo), np.where(ok, np.minimum(o_hi, n_hi), o_hi)
    p = ordinals(np.reshape(e.bits, -1), et)
    sane = (new_lo <= p) & (p <= new_hi)   # the primary value is an allowed result: never cut out
    new_lo, new_hi = np.where(sane, new_lo, o_lo), np.where(sane, new_hi, o_hi)
    kind.narrow(e, from_ordinals(new_lo, et), from_ordinals(new_hi, et))




# --------------------------------------------------------------------------
# Rules
# --------------------------------------------------------------------------

RULES: dict = {}


def rule(*names):
    def register(fn):
        for n in names:
            RULES[n] = fn
        return fn
    return register


def _linear(forms: list, weights: list, shape) -> Form:
    """Σ wᵢ·formᵢ, element-wise with scalar or per-element weights, exact in the symbols."""
    ids, As = _align(*forms)
    c = sum(w * f.c for w, f in zip(weights, forms))
    A = _sum_cols([(np.asarray(w).reshape(-1, 1) if np.ndim(w) else w, a) for w, a in zip(weights, As)],
                  forms[0].n, ids.size)
    r = sum(np.abs(w) * f.r for w, f in zip(weights, forms))
    slop = _slop(*(np.abs(w) * (np.abs(f.c) + (0 if a is None else _abs_rows(a)))
                   for w, f, a in zip(weights, forms, As)), terms=len(forms))
    return Form(c, ids, A, _up(r + slop), tuple(shape))


@rule("add", "subtract")
def _add(inst, forms, outs):
    x, y = forms
    return _linear([x, y], [1.0, 1.0 if inst.spec.mnemonic == "add" else -1.0], x.shape), 0


@rule("negate")
def _negate(inst, forms, outs):
    [x] = forms
    return Form(-x.c, x.ids, -x.A, x.r, x.shape), None   # exact: no rounding


def _product(x: Form, y: Form) -> Form:
    """x·y exactly: cx·cy + cy·Aₓ + cx·A_y, the bilinear remainder in r."""
    ids, (ax, ay) = _align(x, y)
    c = x.c * y.c
    A = _sum_cols([(y.c.reshape(-1, 1), ax), (x.c.reshape(-1, 1), ay)], c.size, ids.size)
    rx, ry = x.rad(), y.rad()
    r = np.abs(x.c) * y.r + np.abs(y.c) * x.r + rx * ry
    slop = _slop(np.abs(c), _abs_rows(A), terms=2)
    return Form(c, ids, A, _up(r + slop), x.shape)


@rule("multiply")
def _multiply(inst, forms, outs):
    x, y = forms
    return _product(x, y), 0


def _tanh2(lo, hi):
    return np.full_like(lo, 0.7699)       # max |tanh″| = 4/(3√3) ≈ 0.76980


def _logistic2(lo, hi):
    return np.full_like(lo, 0.0963)       # max |σ″| = 1/(6√3) ≈ 0.09623


_UNARY = {   # name: (f, f′, bound of |f″| over [lo, hi] or None where the range leaves the domain)
    "tanh": (np.tanh, lambda x: 1 - np.tanh(x) ** 2, _tanh2),
    "logistic": (lambda x: 1 / (1 + np.exp(-x)), lambda x: np.exp(-x) / (1 + np.exp(-x)) ** 2, _logistic2),
    "exponential": (np.exp, np.exp, lambda lo, hi: np.exp(hi)),
    "exponential_minus_one": (np.expm1, np.exp, lambda lo, hi: np.exp(hi)),
    "log": (np.log, lambda x: 1 / x, lambda lo, hi: np.where(lo > 0, 1 / lo ** 2, np.nan)),
    "log_plus_one": (np.log1p, lambda x: 1 / (1 + x), lambda lo, hi: np.where(lo > -1, 1 / (1 + lo) ** 2, np.nan)),
    "sqrt": (np.sqrt, lambda x: 0.5 / np.sqrt(x), lambda lo, hi: np.where(lo > 0, 0.25 * lo ** -1.5, np.nan)),
    "rsqrt": (lambda x: x ** -0.5, lambda x: -0.5 * x ** -1.5,
              lambda lo, hi: np.where(lo > 0, 0.75 * lo ** -2.5, np.nan)),
    "sine": (np.sin, np.cos, lambda lo, hi: np.ones_like(lo)),
    "cosine": (np.cos, lambda x: -np.sin(x), lambda lo, hi: np.ones_like(lo)),
}
# chlo.erf and chlo.erfc (the exact GELU lowers to erfc): |erf″| = |erfc″| = (4/√π)·|x|·e^(−x²), at most
# (4/√π)·e^(−1/2)/√2 = 0.9678829 (at |x| = 1/√2); scipy.special's float64 functions, the evaluation the fast
# route already relies on within LIBM (oracle/real_functions.py, tests/oracle/test_chlo_fast.py).
# chlo.lgamma and chlo.digamma on positive ranges (the ranges a model's lgamma of a softplus or a
# positive parameter sees): lgamma″ = ψ′ (trigamma) and digamma″ = ψ″, both monotone in |·| for x > 0
# (ψ⁽ⁿ⁾(x) = (−1)^(n+1)·n!·Σ_k 1/(x+k)^(n+1), DLMF 5.15.1), so |f″| on [lo, hi] is at its value at lo;
# ranges reaching 0 or below (the poles) get no rule.  Their zeros (lgamma at 1 and 2, digamma at
# 1.4616…) make a relative LIBM meaningless there, so these two carry an absolute 2^-52 on f and f′ as well
# (`ABSOLUTE`): scipy's gammaln and psi are within a few float64 ulp of values of order 1 around them.
if _sp is not None:
    _UNARY["chlo.erf"] = (_sp.erf, lambda x: 2 / np.sqrt(np.pi) * np.exp(-x * x),
                          lambda lo, hi: np.full_like(lo, 0.9679))
    _UNARY["chlo.erfc"] = (_sp.erfc, lambda x: -2 / np.sqrt(np.pi) * np.exp(-x * x),
                           lambda lo, hi: np.full_like(lo, 0.9679))
    _UNARY["chlo.lgamma"] = (_sp.gammaln, _sp.psi,
                             lambda lo, hi: np.where(lo > 0, _sp.polygamma(1, np.where(lo > 0, lo, 1.0)), np.nan))
    _UNARY["chlo.digamma"] = (_sp.psi, lambda x: _sp.polygamma(1, x),
                              lambda lo, hi: np.where(lo > 0, np.abs(_sp.polygamma(2, np.where(lo > 0, lo, 1.0))),
                                                      np.nan))
LIBM = 2.0 ** -40   # numpy's float64 functions: relative error assumed (oracle/fast.py)
ABSOLUTE = {"chlo.lgamma": 2.0 ** -52, "chlo.digamma": 2.0 ** -52}   # and absolute, where a function has zeros


def _unary(x: Form, f, df, d2, absolute: float = 0.0) -> Form | None:
    rad = x.rad()
    lo, hi = x.c - rad, x.c + rad
    with np.errstate(all="ignore"):
        m2 = d2(lo, hi)
        fc, dfc = f(x.c), df(x.c)
    if not (np.all(np.isfinite(m2)) and np.all(np.isfinite(fc)) and np.all(np.isfinite(dfc))):
        return None
    A = dfc.reshape(-1, 1) * x.A
    err = LIBM * (np.abs(fc) + np.abs(dfc) * rad) + absolute * (1 + rad)   # f(c) and f′(c)·(x − c) as evaluated
    r = np.abs(dfc) * x.r + 0.5 * m2 * rad * rad + err + _slop(_abs_rows(A))
    return Form(fc, x.ids, A, _up(r), x.shape)


def _rule_unary(name):
    f, df, d2 = _UNARY[name]

    def apply(inst, forms, outs):
        [x] = forms
        return _unary(x, f, df, d2, ABSOLUTE.get(name, 0.0)), outs[0].tolerance_ulp
    return apply


for _name in _UNARY:
    RULES[_name] = _rule_unary(_name)


@rule("divide")
def _divide(inst, forms, outs):
    x, y = forms
    rad = y.rad()
    lo, hi = y.c - rad, y.c + rad
    if not np.all((lo > 0) | (hi < 0)):
        return None, None
    least = np.minimum(np.abs(lo), np.abs(hi))
    inv = _unary(y, lambda v: 1 / v, lambda v: -1 / v ** 2, lambda a, b: 2 / least ** 3)
    return (None, None) if inv is None else (_product(x, inv), 0)


def _rows(forms: list, choose: np.ndarray, shape) -> Form:
    """Row i of forms[choose[i]]."""
    ids, As = _align(*forms)
    c, r = np.empty(forms[0].n), np.empty(forms[0].n)
    A = np.zeros((forms[0].n, ids.size))
    for k, (f, a) in enumerate(zip(forms, As)):
        m = choose == k
        c[m], r[m] = f.c[m], f.r[m]
        if a is not None:
            A[m] = a[m]
    return Form(c, ids, A, r, tuple(shape))


def _hull(lo: np.ndarray, hi: np.ndarray, shape) -> Form:
    c = (lo + hi) / 2
    return _point(c, shape) if not np.any(hi > lo) else \
        Form(c, np.zeros(0, np.int64), np.zeros((c.size, 0)), _up(np.maximum(hi - c, c - lo)), tuple(shape))


@rule("maximum", "minimum")
def _extreme(inst, forms, outs):
    """Where one operand's range lies above (below) the other's, its form;
    elsewhere the hull of both (no correlation kept there)."""
    x, y = forms
    (xl, xh), (yl, yh) = x.lo_hi(), y.lo_hi()
    big = inst.spec.mnemonic == "maximum"
    take_x = (xl >= yh) if big else (xh <= yl)
    take_y = (yl >= xh) if big else (yh <= xl)
    hull = _hull(np.maximum(xl, yl) if big else np.minimum(xl, yl), np.maximum(xh, yh) if big else np.minimum(xh, yh),
                 x.shape)
    return _rows([x, y, hull], np.where(take_x, 0, np.where(take_y, 1, 2)), x.shape), None


@rule("convert")
def _convert(inst, forms, outs):
    [x] = forms
    src, dst = _format(inst.operand), _format(inst.result)
    if src is None or dst is None:
        return None, None
    exact = dst.precision >= src.precision and dst.emin <= src.emin and dst.max_finite >= src.max_finite
    return x, (None if exact else 0)


def _dims(inst, name):
    return [int(d) for d in (inst.attributes.get(name) or [])]


@rule("dot_general")
def _dot_general(inst, forms, outs):
    """Σ over the contracting dims, exact in the symbols: the contraction
    applied to the centers and to every symbol's coefficients (one einsum
    with the symbols as a trailing axis); the allowance of the order of
    summation (`_order_allowance`) as fresh symbols."""
    if any(inst.attributes.get(f) is not None for f in ALGORITHM_FIELDS):
        return None, None   # v1.20's algorithm: its bound is not γₙ of the result (spec/ops/dot_algorithm.py)
    x, y = forms
    lb, rb = _dims(inst, "lhs_batching_dimensions"), _dims(inst, "rhs_batching_dimensions")
    lc, rc = _dims(inst, "lhs_contracting_dimensions"), _dims(inst, "rhs_contracting_dimensions")
    fmt = _format(inst.result)
    if fmt is None or len(x.shape) + len(y.shape) > 20:
        return None, None
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    ls = [next(letters) for _ in x.shape]
    rs = [None] * len(y.shape)
    for a, b in zip(lb, rb):
        rs[b] = ls[a]
    for a, b in zip(lc, rc):
        rs[b] = ls[a]
    rs = [s or next(letters) for s in rs]
    out = [ls[d] for d in lb] + [ls[d] for d in range(len(x.shape)) if d not in lb and d not in lc] + \
          [rs[d] for d in range(len(y.shape)) if d not in rb and d not in rc]
    k = next(letters)
    sx, sy, so = "".join(ls), "".join(rs), "".join(out)
    shape = tuple(int(d) for d in inst.result.shape)
    n = int(np.prod([x.shape[d] for d in lc], dtype=np.int64)) if lc else 1

    def con(a, b, ea=sx, eb=sy, eo=so):
        return np.einsum(f"{ea},{eb}->{eo}", a, b, optimize=True).reshape(-1)

    xc, yc = x.c.reshape(x.shape), y.c.reshape(y.shape)
    xr, yr = x.rad().reshape(x.shape), y.rad().reshape(y.shape)
    c = con(xc, yc)
    ids, (ax, ay) = _align(x, y)
    A = None
    if ax is not None:
        A = _coefficients(ax, x.shape, yc, lb, lc, rb, rc, first=True, eq=(sx, sy, so, k))
    if ay is not None:
        coef = _coefficients(ay, y.shape, xc, rb, rc, lb, lc, first=False, eq=(sx, sy, so, k))
        A = coef if A is None else np.add(A, coef, out=A)
    if A is None:
        A = np.zeros((c.size, ids.size))
    axc, ayc = np.abs(xc), np.abs(yc)
    central = con(axc, ayc)
    ranged = bool(np.any(xr) or np.any(yr))   # else points (exact operands): no radius to contract
    if ranged:
        r = con(x.r.reshape(x.shape), ayc) + con(axc, y.r.reshape(y.shape)) + con(xr, yr)
        big = con(axc + xr, ayc + yr)   # Σ|x||y| at most
    else:
        r, big = np.zeros(c.size), central
    spread = 0
    if ax is not None:
        spread = spread + con(_abs_rows(ax).reshape(x.shape), ayc)
    if ay is not None:
        spread = spread + con(axc, _abs_rows(ay).reshape(y.shape))
    slop = _slop(central, _abs_rows(A) if ids.size else 0, spread, terms=n + 2)
    exact = Form(c, ids, A, _up(r + slop), shape)
    most = _one_sign(c, central, big, n)
    if ranged:   # P and N apart: x·y ≤ x⁺y⁺ + x⁻y⁻ with x⁺ = max(0, x_hi), x⁻ = max(0, −x_lo)
        xp, xm, yp, ym = (np.maximum(v, 0) for v in (xc + xr, xr - xc, yc + yr, yr - yc))
        split = np.maximum(con(xp, yp) + con(xm, ym), con(xp, ym) + con(xm, yp))
        most = np.minimum(most, _up(split + _slop(split, terms=n + 2)))
    mag = _up(big + _slop(big, terms=n + 2))
    allowance = _order_allowance(fmt, n, most, mag)
    if allowance is None:
        return None, None
    block = every_tree.dot_general_blocks(xc, yc, lb, rb, lc, rc)
    if block is not None and ranged:   # each product within Σ of its radii of the centers' product
        spread_t = con(axc, yr) + con(xr, ayc) + con(xr, yr)
        block = _up(block + spread_t + _slop(spread_t, terms=n + 2))
    if block is not None:
        allowance = np.minimum(allowance, _tree_allowance(fmt, n, block, mag))
    return _fresh(exact, allowance), 0


def _coefficients(a, shape, other, batch, contract, obatch, ocontract, first: bool, eq) -> np.ndarray:
    """The contraction applied to each symbol's coefficients of one operand
    (`a`: elements × symbols) against the other operand's centers, in the
    result's order (lhs free, rhs free, symbols): where there are no batch
    dimensions BLAS products straight into that layout — the other's
    centers against each free element's (contract × symbols) block for the
    lhs, against the whole (contract × free·symbols) matrix for the rhs —
    with no copy of the coefficients when the contracting dimensions are the
    lhs's last or the rhs's first (x @ W, as JAX writes it); an einsum with
    batch dimensions."""
    n_sym = a.shape[1]
    sx, sy, so, k = eq
    if batch:
        spec = f"{sx}{k},{sy}->{so}{k}" if first else f"{sx},{sy}{k}->{so}{k}"
        args = (a.reshape(shape + (n_sym,)), other) if first else (other, a.reshape(shape + (n_sym,)))
        return np.einsum(spec, *args, optimize=True).reshape(-1, n_sym)
    free = [d for d in range(len(shape)) if d not in contract]
    ofree = [d for d in range(other.ndim) if d not in ocontract]
    m = int(np.prod([shape[d] for d in contract], dtype=np.int64))
    size = int(np.prod([shape[d] for d in free], dtype=np.int64))
    a = a.reshape(shape + (n_sym,))
    if first:   # (free, contract, symbols) of this operand; result (free, other free, symbols)
        if list(contract) != list(range(len(free), len(shape))):
            a = np.moveaxis(a, list(contract), list(range(len(free), len(shape))))
        right = np.transpose(other, list(ocontract) + ofree).reshape(m, -1)
        return np.matmul(right.T, a.reshape(size, m, n_sym)).reshape(-1, n_sym)   # one GEMM per free element
    # (contract, free, symbols) of this operand; result (other free, free, symbols)
    if list(contract) != list(range(len(contract))):
        a = np.moveaxis(a, list(contract), list(range(len(contract))))
    left = np.transpose(other, ofree + list(ocontract)).reshape(-1, m)
    return (left @ a.reshape(m, size * n_sym)).reshape(-1, n_sym)


@rule("reduce")
def _reduce(inst, forms, outs):
    """A sum over `dimensions` (one input, an add body): exact in the
    symbols, the allowance of its order (`_order_allowance`) as fresh symbols; a
    maximum or minimum: the hull of the ends."""
    if len(forms) != 2:
        return None, None
    x, init = forms
    body = inst.regions.get("body")
    ops = getattr(body, "pairwise", None)
    fmt = _format(inst.results["results"][0] if isinstance(inst.results.get("results"), list)
                  else next(iter(inst.results.values())))
    if ops not in (("add",), ("maximum",), ("minimum",)) or fmt is None:
        return None, None
    dims = tuple(_dims(inst, "dimensions"))
    keep = [d for d in range(len(x.shape)) if d not in dims]
    shape = tuple(x.shape[d] for d in keep)
    perm = keep + list(dims)
    m = int(np.prod([x.shape[d] for d in dims], dtype=np.int64)) if dims else 1
    if ops != ("add",):
        lo, hi = x.lo_hi()
        (il, ih) = init.lo_hi()
        lo = lo.reshape(x.shape).transpose(perm).reshape(-1, m)
        hi = hi.reshape(x.shape).transpose(perm).reshape(-1, m)
        pick = np.max if ops == ("maximum",) else np.min
        return _hull(pick(np.concatenate([lo, np.broadcast_to(il, (lo.shape[0], 1))], 1), axis=1),
                     pick(np.concatenate([hi, np.broadcast_to(ih, (hi.shape[0], 1))], 1), axis=1), shape), None
    ids, (ax, ai) = _align(x, init)

    def grouped(v):   # (kept elements, the m reduced ones[, symbols])
        trail = list(range(len(x.shape), len(x.shape) + v.ndim - 1))
        return v.reshape(x.shape + v.shape[1:]).transpose(perm + trail).reshape((-1, m) + v.shape[1:])
    c = grouped(x.c).sum(axis=1) + init.c[0]
    A = grouped(ax).sum(axis=1) if ax is not None else np.zeros((c.size, ids.size))
    if ai is not None:
        A = A + ai[0]
    r = grouped(x.r).sum(axis=1) + init.r[0]
    mag = grouped(x.mag()).sum(axis=1) + init.mag()[0]
    exact = Form(c, ids, A, _up(r + _slop(mag, terms=m + 1)), shape)
    central = grouped(np.abs(x.c)).sum(axis=1) + abs(init.c[0])
    rad, irad = x.rad(), init.rad()[0]
    split = np.maximum(grouped(np.maximum(x.c + rad, 0)).sum(axis=1) + max(init.c[0] + irad, 0),
                       grouped(np.maximum(rad - x.c, 0)).sum(axis=1) + max(irad - init.c[0], 0))
    most = np.minimum(_one_sign(c, central, mag, m + 1), _up(split + _slop(split, terms=m + 1)))
    allowance = _order_allowance(fmt, m + 1, most, mag, products=False)
    if allowance is None:
        return None, None
    if init.c[0] == 0 and irad == 0:   # a zero init adds nothing wherever the schedule puts it: the terms' tree
        order = keep + sorted(dims)     # ... keeps them in ascending lexicographic index order
        lo_hi = [v.reshape(x.shape).transpose(order).reshape(-1, m) for v in (x.c - rad, x.c + rad)]
        block = every_tree.largest_block(*lo_hi)
        allowance = np.minimum(allowance, _tree_allowance(fmt, m, block, mag, products=False))
    return _fresh(exact, allowance), 0


# Data movement: the op's own index formulas run on element numbers, then the forms' rows gathered.
MOVES = ("broadcast_in_dim", "reshape", "transpose", "slice", "concatenate", "pad", "reverse",
         "dynamic_slice", "dynamic_update_slice", "copy")


def _moved(inst, values: list, forms: list) -> Form | None:
    """The forms' rows gathered by the op's own index formulas.  An operand
    whose elements the op copies more than once (a broadcast of a row's
    mean or maximum) first has its r made symbols (`_symbolize`), kept on
    the operand's value, so every copy — and every other use — shares
    them; an operand whose local families the op moves out of their block
    has them spelt out as global symbols first (`_globalize`)."""
    from ..spec.dsl import DataMovement
    sem = inst.spec.semantics
    if not isinstance(sem, DataMovement):
        return None
    floats = [k for k, v in enumerate(values) if _format(getattr(v, "type", None)) is not None]
    if not floats or any(forms[k] is None for k in floats) or any(isinstance(v, tuple) for v in values):
        return None
    shape = []

    def run(numbered):
        args = [v.array() for v in values]
        for k, x in zip(floats, numbered):
            args[k] = x
        [idx] = sem.fn(inst, *args)
        shape[:] = np.shape(idx)
        return idx
    flat = numbering.sources(run, [forms[k].shape for k in floats])   # the op's index formulas on element numbers
    if flat is None or (flat < 0).any():
        return None
    stacked = [forms[k] for k in floats]
    starts = np.cumsum([0] + [f.n for f in stacked])
    copies = np.bincount(flat, minlength=int(starts[-1]))
    out_blocks = _blocks(shape)
    out_pos = np.arange(flat.size) // max(flat.size // out_blocks, 1)
    for j, k in enumerate(floats):
        f = stacked[j]
        if np.any(copies[starts[j]:starts[j + 1]] > 1) and np.any(f.r):
            g = _symbolize(f)
            if g is not f:
                values[k].affine = g
                _hold(values[k], g)
                f = g
        if _local(f.ids).any():
            mine = (flat >= starts[j]) & (flat < starts[j + 1])
            blocks = _blocks(f.shape)
            same = blocks == out_blocks and blocks > 1 and np.array_equal(
                (flat[mine] - starts[j]) // (f.n // blocks), out_pos[mine])
            if not same:
                f = _globalize(f)
        stacked[j] = f
    ids, As = _align(*stacked)
    c = np.concatenate([f.c for f in stacked])
    r = np.concatenate([f.r for f in stacked])
    A = np.concatenate([np.zeros((f.n, ids.size)) if a is None else a for f, a in zip(stacked, As)])
    return _condense(Form(c[flat], ids, A[flat], r[flat], tuple(shape)))


# --------------------------------------------------------------------------
# The step
# --------------------------------------------------------------------------

def step(inst, inputs: list, outs: list) -> list:
    """Give `outs` (the step's expectations) their forms and tighten the
    ranged ones with them (module docstring).  Never raises: an op the
    rules cannot follow leaves its results without forms."""
    if len(outs) != 1 or isinstance(outs[0], tuple) or _format(outs[0].type) is None:
        return outs
    try:
        form = _form(inst, inputs, outs)
    except Exception:   # a tightening only: whatever stops a rule leaves the op-by-op enclosure, which is sound
        form = None
    if form is None:
        return outs
    if form.n != np.size(outs[0].bits) or not np.all(np.isfinite(form.rad())):
        return outs
    tighten(outs[0], form)
    outs[0].affine = form
    _hold(outs[0], form)
    return outs


CONTRACTIONS = ("dot_general", "reduce")   # results whose r becomes symbols (`_symbolize`)


def _form(inst, inputs: list, outs: list) -> Form | None:
    name = inst.spec.mnemonic
    if name in MOVES:
        forms = [of(v) if _format(getattr(v, "type", None)) is not None else None for v in inputs]
        return _moved(inst, inputs, forms)
    if name == "select":
        return _select_values(inst, inputs)
    fn = RULES.get(name)
    if fn is None:
        return None
    forms = [of(v) for v in inputs]
    if any(f is None for f in forms):
        return None
    exact = not any(f.tracked() for f in forms)
    if exact and name not in CONTRACTIONS:
        return None   # exact operands: the op's own statement is the whole range (and `of` makes its form)
    forms = _in_blocks(inst, forms)
    form, tolerance = fn(inst, forms, outs)
    if form is None:
        return None
    if tolerance is not None:
        form = _rounding(form, _format(outs[0].type), tolerance)
    if exact and form is not None:   # a contraction of exact operands: its statement or the rule's, the narrower
        form = _narrower(_narrower(form, _stated(outs[0])), _every_tree(inst, forms, outs))
    if form is not None and name in CONTRACTIONS:
        form = _symbolize(form)
    return None if form is None else _condense(form)


def _every_tree(inst, forms: list, outs: list) -> Form | None:
    """A short dot_general of exact operands in a narrow format: the extremes
    over every allowed tree (oracle/every_tree.py), where affordable."""
    fmt = _format(outs[0].type)
    if inst.spec.mnemonic != "dot_general" or fmt is None or fmt.precision >= F32.precision \
            or any(inst.attributes.get(f) is not None for f in ALGORITHM_FIELDS):
        return None
    x, y = forms
    lc, rc = _dims(inst, "lhs_contracting_dimensions"), _dims(inst, "rhs_contracting_dimensions")
    n, size = (int(x.shape[lc[0]]) if len(lc) == 1 else 0), int(np.prod(outs[0].type.shape, dtype=np.int64))
    if not every_tree.affordable(n, size):
        return None
    exact = every_tree.dot_general_rows(x.c.reshape(x.shape), y.c.reshape(y.shape),
                                        _dims(inst, "lhs_batching_dimensions"),
                                        _dims(inst, "rhs_batching_dimensions"), lc, rc)
    if exact is None or not np.all(np.isfinite(exact)):
        return None
    with np.errstate(over="ignore"):
        got = every_tree.extremes(round_fast(exact, fmt), fmt, exact)
    if got is None:
        return None
    lo, hi = got
    c = (lo + hi) / 2
    return _fresh(_point(c, outs[0].type.shape), _up(np.maximum(hi - c, c - lo)))


def _in_blocks(inst, forms: list) -> list:
    """The operands with the local families the op would carry out of their
    block spelt out as global symbols (`_globalize`; boxed where those do
    not fit).  Element-wise ops keep every element where
    it is.  A reduce keeps blocks when it does not sum over the leading
    dimension; its init value is a scalar.  A dot_general's result begins
    with the batch dimensions, then the lhs's free ones: the lhs keeps its
    blocks where its leading dimension is its first batch dimension, or it
    has none and does not contract its leading dimension; the rhs where
    both lead with a batch dimension."""
    name = inst.spec.mnemonic
    if not any(_local(f.ids).any() for f in forms):
        return forms
    if name == "reduce" and len(forms) == 2:
        x, init = forms
        dims = _dims(inst, "dimensions")
        return [x if len(x.shape) and 0 not in dims else _globalize(x), _globalize(init)]
    if name == "dot_general" and len(forms) == 2:
        x, y = forms
        lb, rb = _dims(inst, "lhs_batching_dimensions"), _dims(inst, "rhs_batching_dimensions")
        lc = _dims(inst, "lhs_contracting_dimensions")
        lhs_keeps = (lb[:1] == [0]) if lb else (len(x.shape) > 0 and 0 not in lc)
        rhs_keeps = lb[:1] == [0] and rb[:1] == [0]
        return [x if lhs_keeps else _globalize(x), y if rhs_keeps else _globalize(y)]
    if name in ("reduce", "dot_general"):
        return [_globalize(f) for f in forms]
    return forms


def _select_values(inst, inputs: list) -> Form | None:
    pred, a, b = inputs
    if isinstance(pred, tuple) or not kind_of(pred).pinned or pred.impl_defined:
        return None
    fa, fb = of(a), of(b)
    if fa is None or fb is None:
        return None
    p = np.broadcast_to(np.asarray(pred.array(), dtype=bool), fa.shape).reshape(-1)
    return _rows([fa, fb], np.where(p, 0, 1), fa.shape)


def reduce_carry(values: list) -> None:
    """`_carry_symbols`, never raising (a tightening only: without it the
    carry keeps its radii)."""
    try:
        _carry_symbols(values)
    except Exception:
        for v in values:
            if isinstance(v, Expectation) and getattr(v, "affine", None) is not None:
                v.affine = None


def _carry_symbols(values: list) -> None:
    """At a loop body's end: the untracked radii of its float results
    become symbols, one per element, shared by the whole carry.

    Inside one iteration the fresh allowances of its ops sit in r; the
    next iteration's linear steps (the recurrent matrix) would map r as
    |U|·r — the wrapping effect, the same growth as interval ends.  As
    symbols they map as U·diag(r)·ε, exactly, in every later iteration, so
    what is contractive stays contractive.  The symbols' number grows by
    the carry's size each iteration; `_condense` keeps the K_MAX with the
    largest coefficients (Girard's reduction: the oldest, most decayed,
    are boxed into r first).  Skipped for a carry of more than CARRY_MAX
    elements (its forms keep their radii)."""
    forms = [(k, getattr(v, "affine", None)) for k, v in enumerate(values)
             if isinstance(v, Expectation) and getattr(v, "affine", None) is not None]
    forms = [(k, f) for k, f in forms if np.any(f.r)]
    total = sum(f.n for _, f in forms)
    if not forms or total > CARRY_MAX:
        return
    new_ids = _new_ids(total, carry=True)
    row = 0
    for k, f in forms:
        cols = np.zeros((f.n, total))
        cols[np.arange(f.n), row + np.arange(f.n)] = f.r
        keep = np.zeros(total, dtype=bool)
        keep[row:row + f.n] = f.r > 0
        g = Form(f.c, np.concatenate([f.ids, new_ids[keep]]), np.concatenate([f.A, cols[:, keep]], axis=1),
                 np.zeros(f.n), f.shape)
        values[k].affine = _condense(g)
        _hold(values[k], values[k].affine)
        row += f.n


def enabled():
    return ENABLED.get()


class enable:
    """`with affine.enable():` — `run`'s expectations carry forms."""

    def __enter__(self):
        self._token = ENABLED.set(True)
        self._held = _HELD.set(_Held())
        return self

    def __exit__(self, *exc):
        ENABLED.reset(self._token)
        _HELD.reset(self._held)
        return False

