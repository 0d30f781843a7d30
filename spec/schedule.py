"""The seed's `reduce` over every allowed schedule: what a reduction may compute.

`reduce(input_slices)` is `exec(schedule)` for *some* full binary tree whose
in-order traversal is the inputs in ascending index order, "interspersed
with an implementation-defined amount of `init_values` at
implementation-defined positions"; dot_general, convolution, reduce_window
and select_and_scatter are defined through it.  A result is therefore the
set of values the allowed schedules give, stated per element in the
oracle's vocabulary (`dsl.Accumulating`):

* a body associative on the values at hand — integer add and multiply
  (modulo 2^n), and/or/xor, maximum/minimum — whose init value is its
  identity: one exact value, the schedule cannot matter;
* a float sum or product: a `Range`, the exact real result and a rigorous
  bound on the rounding error of any schedule (below);
* an init value that is not the body's identity: the amount inserted is the
  implementation's — the values for one, none and two insertions, labelled,
  and beyond that any value;
* a body that selects the best element, as JAX's argmax and argmin do:
  every schedule gives one element, the first of the best (spec/selection.py);
* JAX's log-add-exp (`lax.cumlogsumexp`), init −inf: a `Range` about the
  log of the sum of exponentials, every schedule and every tolerance of its
  approximate ops (spec/log_add_exp.py);
* any other body: every schedule enumerated (the sets of results over
  contiguous ranges, built bottom-up) for up to `MAX_ENUMERATED_LEAVES`
  leaves; beyond, the left fold and any value.  The enumeration runs the
  body on the oracle's values: a body with an approximate op (a tolerance)
  may give others, so its results add "any value", labelled.

Error bounds (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd
ed., §3.1 and §4.2), u = 2^-p the unit roundoff of the format (p its
precision), γ(k) = k·u / (1 − k·u):
* a sum of n terms, any order: |ŝ − Σxᵢ| ≤ γ(n−1)·Σ|xᵢ|.  A sum that lands
  in the subnormal range is exact, so no underflow term is needed.
* a product of n factors, any order: |p̂ − Πxᵢ| ≤ γ(n−1)·Π|xᵢ| while no
  partial product leaves the normal range; where one may underflow, each
  rounding adds at most half the smallest subnormal, amplified by at most
  the factors above 1: + (n−1)·(min_subnormal/2)·Π max(1, |xᵢ|).
* a dot product Σ aᵢ·bᵢ (the seed: products rounded, then summed in any
  order): |ŝ − Σaᵢbᵢ| ≤ γ(n)·Σ|aᵢbᵢ| + n·min_subnormal/2 — which also
  holds for products computed exactly and accumulated in a wider type,
  rounded once at the end, as many backends do.
Where a bound — or a partial sum, at most Σ|xᵢ|·(1 + γ) — could reach the
format's overflow threshold, a partial result may overflow: the element may
be anything (labelled).  Special values decide the result where every
schedule agrees (a NaN anywhere: NaN; infinities of one sign: that
infinity).  Signed zeros of sums are not told apart (a "bounded"
expectation compares ±0 equal): whether a +0 init is inserted decides them.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable

import numpy as np

from . import expression, log_add_exp, selection
from .bounds import log2_of
from .dsl import ANY_VALUE, ImplDefined, Range
from .types import ElementType, FloatFormat, exact_values

MAX_ENUMERATED_LEAVES = 12
MAX_DISTINCT_PER_RANGE = 32
SCHEDULE_WHY = ('the order of a reduction is implementation-defined (seed, "reduce": "exec(schedule) for '
                'some binary tree schedule")')
INIT_WHY = ("the init value is not the body's identity and the seed inserts it an implementation-defined "
            "number of times")
OVERFLOW = "any value: a partial result may overflow in some schedule"
MONOIDS = ("add", "multiply", "and", "or", "xor", "maximum", "minimum")


# --------------------------------------------------------------------------
# Bounds
# --------------------------------------------------------------------------

def monoid_ops(body, n: int) -> tuple | None:
    """The body's op on each of its n pairs when every one is a monoid of
    MONOIDS (`Function.pairwise`), else None: the bodies whose reductions
    this module bounds, and whose order of application (scatter's updates)
    matters no more than a reduction's."""
    ops = getattr(body, "pairwise", None)
    return ops if ops is not None and len(ops) == n and all(op in MONOIDS for op in ops) else None


def fast_extremum(body) -> str | None:
    """"maximum" or "minimum" where a one-output float body is one compare
    and a select — `a < b ? b : a`, `a > b ? b : a` — what a single
    maxss/minss instruction computes and oracle/rewrites.py's "fast
    min/max" writes (a program rewritten so is how `run` names that
    rewrite); else None.  It is IEEE's maximum (minimum) wherever no
    operand is NaN and no tie is between zeros of both signs — a NaN on
    the right is lost, a tie keeps the left operand — so a reduction by it
    over such a row gives the row's extremum in every schedule (`_fast`)."""
    return expression.cached(body, "_fast_extremum", _read_fast_extremum)


def _read_fast_extremum(block) -> str | None:
    if len(getattr(block, "returns", ())) != 1 or len(block.args) != 2:
        return None
    et = block.args[0][1].element_type
    if not et.is_float or block.args[1][1].element_type != et:
        return None
    got = expression.returns(block, frozenset({"select"}))
    a, b, ct = expression.arg(0), expression.arg(1), expression.legal_compare_types(et)[0]
    for name, direction in (("maximum", "LT"), ("minimum", "GT")):
        if got == (expression.op("select", expression.compare(direction, ct, a, b), b, a),):
            return name
    return None


def _fast_rows(name: str, X: np.ndarray, valid) -> np.ndarray:
    """The rows (P×L exact values, `valid` None: all) where a fast
    extremum's reduction is decided: no NaN leaf, and no zeros of both
    signs where the extremum is zero."""
    ok = np.ones(X.shape, dtype=bool) if valid is None else np.asarray(valid, dtype=bool)
    with np.errstate(invalid="ignore"):
        nan = (np.isnan(X) & ok).any(axis=1)
        fill = -np.inf if name == "maximum" else np.inf
        best = np.where(ok, X, fill).max(axis=1) if name == "maximum" else np.where(ok, X, fill).min(axis=1)
        zero = ok & (X == 0)
    mixed = (zero & np.signbit(X)).any(axis=1) & (zero & ~np.signbit(X)).any(axis=1) & (best == 0)
    return ~nan & ~mixed


def inits_neutral(body, types: list[ElementType], inits: tuple) -> bool:
    """Every init value is its body's identity, so the amount inserted (and
    reduce_window's padding, made of them) cannot change any schedule's
    result: a monoid's identity, or log-add-exp's −inf."""
    init_x = [exact_values(np.asarray(v), et)[0] for v, et in zip(inits, types)]
    lae = log_add_exp.of(body) if len(types) == 1 else None
    if lae is not None:
        return log_add_exp.identity(init_x[0])
    ops = monoid_ops(body, len(types))
    return ops is not None and all(is_identity(o, et, x) for o, et, x in zip(ops, types, init_x))


def gamma(k: int, fmt: FloatFormat) -> Fraction | None:
    """γ(k) = k·u/(1 − k·u), or None when k·u ≥ 1 (no bound)."""
    ku = k * fmt.unit_roundoff
    return None if ku >= 1 else ku / (1 - ku)


def exact_sum(xs: list[float]) -> Fraction:
    """Σ xᵢ of finite floats, exactly: every binary64 value is an integer
    multiple of 2^-1074, so the sum is one of Python integers (the same
    Fraction a sum of Fractions gives, at a fraction of its cost)."""
    total = 0
    for x in xs:
        num, den = x.as_integer_ratio()
        total += num << (1074 - den.bit_length() + 1)
    return Fraction(total, 1 << 1074)


def exact_dot(pairs: list[tuple[float, float]]) -> Fraction:
    """Σ aᵢ·bᵢ of finite floats, exactly (each product is an integer multiple
    of 2^-2148): `exact_sum`'s integers for products."""
    total = 0
    for a, b in pairs:
        na, da = a.as_integer_ratio()
        nb, db = b.as_integer_ratio()
        total += (na * nb) << (2150 - da.bit_length() - db.bit_length())
    return Fraction(total, 1 << 2148)


def overflow_threshold(fmt: FloatFormat) -> Fraction:
    """The least magnitude that rounds to infinity (or NaN in f8E4M3FN)."""
    return fmt.max_finite + fmt.ulp(fmt.max_finite) / 2


def any_value(label: str, primary) -> ImplDefined:
    """Any value, with the exact result (or the left fold) as the value stated first."""
    return ImplDefined({"the exact result rounded": primary, label: ANY_VALUE}, why=SCHEDULE_WHY)


_any = any_value


def special_sum(xs: list[float]):
    """The sum every schedule gives when a term is NaN or infinite; None when
    all are finite."""
    if any(math.isnan(x) for x in xs):
        return math.nan
    infs = {x for x in xs if math.isinf(x)}
    if not infs:
        return None
    return math.nan if len(infs) == 2 else infs.pop()


def sum_range(xs: list[float], fmt: FloatFormat):
    """Every value a schedule of `xs` (floats of `fmt`) may sum to."""
    special = special_sum(xs)
    finite = [x for x in xs if math.isfinite(x)]
    n = len(xs)
    g = gamma(max(n - 1, 0), fmt)
    s, a = exact_sum(finite), exact_sum([abs(x) for x in finite])
    if g is None or a * (1 + g) >= overflow_threshold(fmt):
        if special is not None and math.isnan(special):
            return special
        return _any(OVERFLOW, special if special is not None else s)
    if special is not None:
        return special
    b = g * a
    return Range(s, s - b, s + b)


def product_range(xs: list[float], fmt: FloatFormat):
    """Every value a schedule of the factors `xs` may multiply to."""
    if any(math.isnan(x) for x in xs):
        return math.nan
    zeros = any(x == 0 for x in xs)
    infs = any(math.isinf(x) for x in xs)
    negative = sum(math.copysign(1, x) < 0 for x in xs) % 2 == 1
    if infs:
        return math.nan if zeros else (-math.inf if negative else math.inf)
    if zeros:
        return -0.0 if negative else 0.0
    n = len(xs)
    g = gamma(max(n - 1, 0), fmt)
    mags = [abs(x) for x in xs]
    p = Fraction(-1 if negative else 1) * _exact_product(mags)
    if g is None or _some_partial(mags, lambda q: q * (1 + g) >= overflow_threshold(fmt), +1, 1 + g,
                                  overflow_threshold(fmt)):
        return _any(OVERFLOW, p)
    b = g * abs(p)
    if n > 1 and _some_partial(mags, lambda q: q < fmt.min_normal, -1, Fraction(1), fmt.min_normal):
        b += (n - 1) * (fmt.min_subnormal / 2) * _exact_product([max(1.0, m) for m in mags])
    return Range(p, p - b, p + b)


def _exact_product(mags: list[float]) -> Fraction:
    """Π mags exactly: numerators and denominators multiplied as integers
    (one normalisation, not one a factor)."""
    num, den = 1, 1
    for m in mags:
        a, d = m.as_integer_ratio()
        num *= a
        den *= d
    return Fraction(num, den)


def _some_partial(mags: list[float], test: Callable, side: int, factor, bound) -> bool:
    """Does `test` hold for some product of consecutive factors (what a
    schedule's inner nodes compute, before rounding) — the largest
    (`side` +1: test is "factor·q ≥ bound") or the smallest (−1: "q <
    bound")?  Decided in O(n) on log₂ magnitudes (Kadane's largest or
    smallest run sum) where they are clear of the bound by more than their
    own rounding; else every product, exactly, as the definition reads."""
    if not all(isinstance(m, float) for m in mags):
        return any(test(q) for q in _partial_products([Fraction(m) for m in mags]))
    logs = [math.log2(m) for m in mags]
    best, run = -math.inf if side > 0 else math.inf, 0.0
    for x in logs:
        run = max(x, run + x) if side > 0 else min(x, run + x)
        best = max(best, run) if side > 0 else min(best, run)
    edge = log2_of(bound) - (log2_of(factor) if side > 0 else 0.0)
    slack = (len(logs) + 4) * 2.0 ** -48 * (sum(abs(x) for x in logs) + abs(edge) + 1)
    if best < edge - slack:      # every run below the edge: only "the smallest is below" holds
        return side < 0
    if best > edge + slack:      # every run above: only "the largest reaches it" holds
        return side > 0
    return any(test(q) for q in _partial_products([Fraction(m) for m in mags]))


def _partial_products(mags: list[Fraction]) -> list[Fraction]:
    """Magnitudes of every product of consecutive factors (what a
    schedule's inner nodes compute, before rounding)."""
    out = []
    for i in range(len(mags)):
        acc = Fraction(1)
        for m in mags[i:]:
            acc *= m
            out.append(acc)
    return out


def dot_range(pairs: list[tuple[float, float]], fmt: FloatFormat):
    """Every value Σ aᵢ·bᵢ may take: products rounded (or exact, in a wider
    accumulator), then summed in any order."""
    products = []
    for a, b in pairs:
        if math.isnan(a) or math.isnan(b) or ((math.isinf(a) or math.isinf(b)) and (a == 0 or b == 0)):
            return math.nan
        products.append(a * b if (math.isinf(a) or math.isinf(b) or a == 0 or b == 0) else None)
    special = special_sum([p for p in products if p is not None and math.isinf(p)])
    exact = [(a, b) for (a, b), p in zip(pairs, products) if p is None or p == 0]
    n = len(pairs)
    g = gamma(n, fmt)
    s, mag = exact_dot(exact), exact_dot([(abs(a), abs(b)) for a, b in exact])
    if g is None or mag * (1 + g) >= overflow_threshold(fmt):
        return special if special is not None and math.isnan(special) else _any(OVERFLOW, special or s)
    if special is not None:
        return special
    b = g * mag + n * fmt.min_subnormal / 2
    if n == 0:
        return 0.0
    return Range(s, s - b, s + b)


def complex_components(values: list[complex], component: Callable, fmt: FloatFormat):
    """(re, im) answer of a component-wise reduction of complex values."""
    return (component([v.real for v in values], fmt), component([v.imag for v in values], fmt))


def complex_dot_range(pairs: list[tuple[complex, complex]], fmt: FloatFormat):
    """Σ aᵢ·bᵢ of complex values, per component: each product's component is a
    two-term sum of real products, so it is a real dot product of twice the
    length."""
    re = [(a.real, b.real) for a, b in pairs] + [(-a.imag, b.imag) for a, b in pairs]
    im = [(a.real, b.imag) for a, b in pairs] + [(a.imag, b.real) for a, b in pairs]
    return (dot_range(re, fmt), dot_range(im, fmt))


# --------------------------------------------------------------------------
# Reductions by a body
# --------------------------------------------------------------------------

def identity(op: str, et: ElementType):
    """The exact value that leaves `op` unchanged on every value of `et`
    (None where there is none): what an init value must be for the amount
    of inits inserted not to matter."""
    if et.is_bool:
        return {"add": False, "or": False, "xor": False, "multiply": True, "and": True,
                "maximum": False, "minimum": True}.get(op)
    if et.is_integer:
        return {"add": 0, "or": 0, "xor": 0, "multiply": 1, "and": -1 if et.is_signed else et.max_value,
                "maximum": et.min_value, "minimum": et.max_value}.get(op)
    if et.is_complex:
        return {"add": 0j, "multiply": 1 + 0j}.get(op)
    top = math.inf if et.format.has_inf else float(et.format.max_finite)   # f8E4M3FN: no infinity
    if op == "logaddexp":   # JAX's log-add-exp body (spec/log_add_exp.py), where the format has −inf
        return log_add_exp.IDENTITY if et.format.has_inf else None
    return {"add": 0.0, "multiply": 1.0, "maximum": -top, "minimum": top}.get(op)


def is_identity(op: str, et: ElementType, init) -> bool:
    ident = identity(op, et)
    if ident is None:
        return False
    if et.is_float and op == "add":
        return init == 0   # ±0: the sign of a zero sum is not told apart (module docstring)
    if et.is_float:
        return init == ident and not math.isnan(init)
    return init == ident


def left_fold(values: list, call_one: Callable):
    acc = values[0]
    for v in values[1:]:
        acc = call_one(acc, v)
    return acc


def monoid_reduce(op: str, xs: list, init, et: ElementType, call_one: Callable):
    """The answer of reducing the exact values `xs` (index order) by the
    associative body `op`, with init value `init`; `call_one(a, b)` applies
    the body to two exact values (the region's own execution)."""
    ident = is_identity(op, et, init)
    if not xs:   # a full binary tree needs a leaf: at least one init
        if ident:
            return init
        twice = call_one(init, init)
        return init if _same(twice, init, et) else ImplDefined(
            {"init_values once": init, "init_values twice": twice, "init_values more often": ANY_VALUE},
            why=INIT_WHY)
    base = reduce_values(op, xs, et, call_one)
    if ident:
        return base
    once = reduce_values(op, [init] + xs, et, call_one)
    twice = reduce_values(op, [init, init] + xs, et, call_one)
    alts = {"init_values once": once, "no init_values": base, "init_values twice": twice}
    distinct = {}
    for label, v in alts.items():
        if not any(_same(v, w, et) for w in distinct.values()):
            distinct[label] = v
    if len(distinct) == 1:
        return once
    if op not in ("maximum", "minimum", "and", "or"):   # more inits may change it again
        distinct["init_values more often"] = ANY_VALUE
    return ImplDefined(distinct, why=INIT_WHY)


def reduce_values(op: str, xs: list, et: ElementType, call_one: Callable):
    fmt = et.component.format if et.is_complex else (et.format if et.is_float else None)
    if et.is_integer and op in ("add", "multiply"):
        return sum(xs) if op == "add" else math.prod(xs)   # exact; the oracle wraps, labelled
    if et.is_float and op == "add":
        return sum_range(xs, fmt)
    if et.is_float and op == "multiply":
        return product_range(xs, fmt)
    if et.is_complex and op == "add":
        return complex_components(xs, sum_range, fmt)
    if et.is_complex and op == "multiply":
        return _complex_product(xs, fmt)
    return left_fold(xs, call_one)   # associative and commutative: any schedule is the left fold


def _complex_product(xs: list[complex], fmt: FloatFormat):
    """Per component: the exact product, and a bound from the moduli — each
    complex multiply is within γ(2)·|a|·|b| per component of the exact one
    (two products and a sum), so n−1 of them stay within
    ((1 + 2γ(2))^(n−1) − 1)·Π|xᵢ|, |xᵢ| ≤ |re| + |im|."""
    if any(not (math.isfinite(x.real) and math.isfinite(x.imag)) for x in xs):
        return _any("any value: a complex factor is not finite", math.prod(xs, start=1 + 0j))
    exact = complex_exact_product(xs)
    n = len(xs)
    g2 = gamma(2, fmt)
    mag = math.prod((abs(Fraction(x.real)) + abs(Fraction(x.imag)) for x in xs), start=Fraction(1))
    b = ((1 + 2 * g2) ** (n - 1) - 1) * mag + (n - 1) * fmt.min_subnormal * mag
    if mag * (1 + 2 * g2) ** max(n - 1, 0) >= overflow_threshold(fmt):
        return _any(OVERFLOW, exact)
    return tuple(Range(c, c - b, c + b) for c in exact)


def complex_exact_product(xs: list[complex]) -> tuple[Fraction, Fraction]:
    re, im = Fraction(1), Fraction(0)
    for x in xs:
        a, b = Fraction(x.real), Fraction(x.imag)
        re, im = re * a - im * b, re * b + im * a
    return re, im


def _same(a, b, et: ElementType) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    return type(a) is type(b) and a == b


# --------------------------------------------------------------------------
# Any body: every schedule
# --------------------------------------------------------------------------

def schedules(leaves: list[tuple], call: Callable, limit: int = MAX_DISTINCT_PER_RANGE) -> list[tuple] | None:
    """The distinct results (tuples of numpy scalars) of every full binary tree
    over `leaves` in order, the left fold first; None when a range of leaves
    has more than `limit` distinct results.  Built bottom-up over contiguous
    ranges of leaves (each tree's root splits its range in two)."""
    n = len(leaves)
    table: dict = {(i, i + 1): {_key(leaves[i]): leaves[i]} for i in range(n)}
    for length in range(2, n + 1):
        for i in range(n - length + 1):
            j = i + length
            cell = {}
            for k in range(i + 1, j):
                for a in table[(i, k)].values():
                    for b in table[(k, j)].values():
                        v = tuple(call(*a, *b))
                        cell.setdefault(_key(v), v)
                        if len(cell) > limit:
                            return None
            table[(i, j)] = cell
    final = table[(0, n)]
    fold = left_fold(list(leaves), lambda a, b: tuple(call(*a, *b)))
    return [fold] + [v for key, v in final.items() if key != _key(fold)]


def _key(values: tuple) -> tuple:
    return tuple(np.asarray(v).tobytes() for v in values)


def reduce_slice(leaves: list[tuple], inits: tuple, body, types: list[ElementType]) -> list:
    """One answer per output of `reduce` over `leaves` (tuples of N numpy
    scalars, index order) with `init_values` `inits` (N numpy scalars) by
    the region `body` (a `dsl.Function` the oracle can call)."""
    n = len(types)
    exact = [[exact_values(np.asarray(leaf[k]), types[k])[0] for leaf in leaves] for k in range(n)]
    init_x = [exact_values(np.asarray(inits[k]), types[k])[0] for k in range(n)]
    ops = monoid_ops(body, n)
    if ops is not None:
        out = []
        for k, (op, et) in enumerate(zip(ops, types)):
            def call_one(a, b, k=k, et=et):
                args = [np.zeros((), t.numpy) for t in types] * 2
                args[k], args[n + k] = np.asarray(a).astype(et.numpy), np.asarray(b).astype(et.numpy)
                return exact_values(np.asarray(body.call(*args)[k]), et)[0]
            out.append(monoid_reduce(op, exact[k], init_x[k], et, call_one))
        return out
    lae = log_add_exp.of(body) if n == 1 else None
    if lae is not None and log_add_exp.identity(init_x[0]):
        return [log_add_exp.element(lae, exact[0])]
    fast = fast_extremum(body) if n == 1 else None
    if fast is not None and is_identity(fast, types[0], init_x[0]) and exact[0]:
        row = np.array([exact[0]], dtype=np.float64)
        if _fast_rows(fast, row, None)[0]:
            return [float(row.max() if fast == "maximum" else row.min())]
    sel = selection.of(body) if n == 2 else None
    if sel is not None and leaves:
        V, I = (_row(exact[k], types[k]) for k in (0, 1))
        if V is not None and I is not None:
            value, index, decided = selection.answers(sel, V, I, None, init_x[0], types[0].is_float, init_x[1])
            if decided[0]:
                return [value.tolist()[0], index.tolist()[0]]
    return _general(leaves, inits, body, types)


def _row(xs: list, et: ElementType):
    """One row of exact values as a 1×L float64 or int64 array (None: an integer past int64)."""
    if et.is_float:
        return np.array([xs], dtype=np.float64)
    if all(-(1 << 63) <= x < (1 << 63) for x in xs):
        return np.array([xs], dtype=np.int64)
    return None


def approximate_ops(body) -> list[str]:
    """The mnemonics of the body's ops judged within a tolerance (`approx`
    accuracy, spec/accuracy.py), in order; ops whose accuracy cannot be read
    (calls, bodies without a reader's block) are not listed.  Read once per
    body (`_general` asks for every element)."""
    return expression.cached(body, "_approximate_ops", _read_approximate_ops) or []


def _read_approximate_ops(block) -> list[str]:
    out = []
    for step in getattr(block, "steps", ()):
        sem = getattr(getattr(step.inst, "spec", None), "semantics", None)
        if sem is not None and hasattr(sem, "accuracy_for") and sem.accuracy_for(step.inst) == "approx":
            out.append(step.inst.spec.mnemonic)
    return out


def _general(leaves, inits, body, types) -> list:
    """Any other body: enumerated schedules, init values at the front (once)
    when they are not the body's identity on the leaves.  The body runs on
    the oracle's values; one with an approximate op may give others within
    their tolerances, which no enumeration here states: any value, named."""
    call = body.call
    scalars = [tuple(np.asarray(v).reshape(()) for v in leaf) for leaf in leaves]
    init = tuple(np.asarray(v).reshape(()) for v in inits)
    if not scalars:
        return per_output([[init]], types, None)
    approx = approximate_ops(body)
    loose = (f"any value: the body's {', '.join(sorted(set(approx)))} may differ from the oracle's value "
             "within its tolerance, and the schedules are enumerated on the oracle's values") if approx else None
    neutral = all(_key(tuple(call(*init, *x))) == _key(x) and _key(tuple(call(*x, *init))) == _key(x)
                  for x in scalars)
    if len(scalars) > MAX_ENUMERATED_LEAVES:
        fold = left_fold(([] if neutral else [init]) + scalars, lambda a, b: tuple(call(*a, *b)))
        return per_output([[fold]], types, f"any value: {len(scalars)} leaves, schedules not enumerated")
    if len(scalars) == 1 and neutral:   # one leaf, no body call: the leaf itself
        loose = None
    results = schedules(([] if neutral else [init]) + scalars, call)
    if results is None:
        fold = left_fold(([] if neutral else [init]) + scalars, lambda a, b: tuple(call(*a, *b)))
        return per_output([[fold]], types, "any value: too many distinct schedule results to enumerate")
    groups = [results]
    if not neutral:
        without = schedules(scalars, call) or []
        groups.append([v for v in without if _key(v) not in {_key(r) for r in results}])
    return per_output(groups, types, loose if neutral else (loose or "any value: init_values inserted elsewhere"))


def per_output(groups: list[list[tuple]], types, wildcard: str | None) -> list:
    """Per output k: its value (one schedule result) or the alternatives the
    schedules give — labelled; `wildcard` adds "any value" with its reason."""
    flat = [v for g in groups for v in g]
    out = []
    for k, et in enumerate(types):
        values, seen = [], set()
        for v in flat:
            key = np.asarray(v[k]).tobytes()
            if key not in seen:
                seen.add(key)
                values.append(exact_values(np.asarray(v[k]), et)[0])
        if len(values) == 1 and wildcard is None:
            out.append(values[0])
            continue
        alts = {("left fold" if i == 0 else f"schedule result {i}"): v for i, v in enumerate(values)}
        if wildcard:
            alts[wildcard] = ANY_VALUE
        out.append(ImplDefined(alts, why=SCHEDULE_WHY))
    return out


def _selected(sel, rows: list, valid, inits: tuple, body, types: list, leaves_of: Callable):
    """`reduce_arrays` of a selecting body (spec/selection.py): both outputs'
    records, VALUE where the closed form decides a row, the per-element route
    elsewhere; None where the rows are not int64 or float64 arrays."""
    from . import bounds
    V, I = rows
    if I.dtype == object or V.dtype == object or not types[1].is_integer:
        return None
    if V.dtype == bool:   # i1 values (jnp.argmax of a mask: its first True), ordered false < true
        V = V.astype(np.int64)
    init_v, init_i = (exact_values(np.asarray(inits[k]), types[k])[0] for k in (0, 1))
    value, index, decided = selection.answers(sel, V, I.astype(np.int64), valid, init_v, types[0].is_float, init_i)
    kind = np.where(decided, bounds.VALUE, bounds.ELEMENT).astype(np.int8)
    out = []
    for k, got in enumerate((value, index)):
        def element(i, k=k):
            return reduce_slice(leaves_of(int(i)), inits, body, types)[k]
        probes = {bounds.VALUE: 0.0 if types[k].is_float else 0}
        out.append(bounds.Answers((V.shape[0],), kind.copy(), got, (), element, probes))
    return out


# --------------------------------------------------------------------------
# Whole arrays: many reductions at once (spec/bounds.py)
# --------------------------------------------------------------------------

def reduce_arrays(rows: list, valid, inits: tuple, body, types: list[ElementType], leaves_of: Callable,
                  rows_of: Callable | None = None):
    """`reduce_slice` of every row at once, or None where only the
    per-element route serves: one `bounds.Answers` per output k, row i
    reducing rows[k][i] (the exact input values as numpy arrays: float64,
    int64 / uint64) over the positions where `valid` (None: all) holds.
    Served: a pairwise body of monoids whose init values are their
    identities (so the amount of inits inserted cannot matter) — float add
    and multiply (a `Range`), maximum and minimum; integer add, multiply, and, or, xor,
    maximum, minimum — JAX's argmax and argmin (spec/selection.py), its
    log-add-exp with init −inf (spec/log_add_exp.py), and a fast maximum or
    minimum (`fast_extremum`) on its rows without NaN or a tie of ±0.  `leaves_of(i)` gives row i's leaves as
    `reduce_slice` takes them, for the elements the record leaves to the
    per-element route.  `rows_of(k, idx)`, where given, gives (rows[k][idx],
    valid[idx]) again, so a float sum's record need not keep its rows for
    its later stages (reduce_window: windows overlap, their rows are n²)."""
    from . import bounds
    n = len(types)
    sel = selection.of(body) if n == 2 else None
    if sel is not None:
        return _selected(sel, rows, valid, inits, body, types, leaves_of)
    init_x = [exact_values(np.asarray(inits[k]), types[k])[0] for k in range(n)]
    lae = log_add_exp.of(body) if n == 1 else None
    if lae is not None and log_add_exp.identity(init_x[0]) and rows[0].dtype != object:
        return [log_add_exp.answers(lae, rows[0], valid,
                                    lambda i: reduce_slice(leaves_of(int(i)), inits, body, types)[0])]
    fast = fast_extremum(body) if n == 1 else None
    if fast is not None and is_identity(fast, types[0], init_x[0]) and rows[0].dtype != object \
            and rows[0].shape[1]:
        def one(i):
            return reduce_slice(leaves_of(int(i)), inits, body, types)[0]
        rec = bounds.extremum(rows[0], valid, fast, types[0], one, {bounds.VALUE: 0.0})
        rec.kind[~_fast_rows(fast, np.asarray(rows[0], dtype=np.float64), valid)] = bounds.ELEMENT
        return [rec]
    ops = monoid_ops(body, n)
    if ops is None:
        return None
    if not all(is_identity(op, et, x) for op, et, x in zip(ops, types, init_x)):
        return None
    out = []
    for k, (op, et) in enumerate(zip(ops, types)):
        def element(i, k=k):
            return reduce_slice(leaves_of(int(i)), inits, body, types)[k]
        probes = {bounds.RANGE: bounds.range_probe(), bounds.VALUE: 0.0 if et.is_float else 0,
                  bounds.OVER: any_value(OVERFLOW, Fraction(0))}
        X = rows[k]
        if et.is_float and op == "add":
            again = None if rows_of is None else (lambda idx, k=k: rows_of(k, idx))
            rec = bounds.float_sum(X, valid, et.format, element, probes, again)
        elif et.is_float and op == "multiply":
            again = None if rows_of is None else (lambda idx, k=k: rows_of(k, idx))
            rec = bounds.float_product(X, valid, et.format, element, probes, again)
        elif (et.is_float or et.is_integer) and op in ("maximum", "minimum"):
            rec = bounds.extremum(X, valid, op, et, element, probes)
        elif et.is_integer and op in ("add", "multiply", "and", "or", "xor"):
            rec = bounds.integer_fold(X, valid, op, et, element, probes)
        else:
            return None
        if rec is None:
            return None
        empty = np.zeros(X.shape[0], dtype=bool) if X.shape[1] else np.ones(X.shape[0], dtype=bool)
        if valid is not None:
            empty = ~valid.any(axis=1)
        if empty.any():   # no leaf: the init value, inserted once (a full binary tree needs a leaf)
            rec.kind[empty] = bounds.VALUE
            if rec.value.dtype != object and not et.is_float and not isinstance(init_x[k], float) \
                    and not np.can_cast(np.min_scalar_type(init_x[k]), rec.value.dtype):
                rec.value = rec.value.astype(object)
            rec.value[empty] = init_x[k]
        out.append(rec)
    return out
