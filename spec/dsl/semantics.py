"""The kinds of semantics an op declares: how its section states results.

Each kind is a record the op fills with functions in the vocabulary of
`answers.py`: `Elementwise` (one element at a time, with `Generic` claims
that let the oracle work on whole arrays), `DataMovement` (index formulas),
`Accumulating` (exact sums and the ranges their order allows), `ControlFlow`,
`Decomposition`, `SideEffect`, `Statistical`.  The spec states; `oracle/`
executes each kind by its own rule, so no op is special-cased there.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar


@dataclass(frozen=True)
class Elementwise:
    """Element-wise semantics.

    `fn(op, *elements)` receives the Instance and one element of each operand
    as exact Python values (bool, int, float — every format of the spec is a
    subset of binary64 — or complex) and returns the exact result of that
    element: bool, int (the oracle wraps out-of-range results, declared as
    implementation-defined), Fraction or float (an exact real, correctly
    rounded into the result type; float carries ±0, ±inf, NaN), complex or a
    (re, im) pair of those, `Approx` or `ImplDefined`.

    `accuracy` is "exact" (the spec demands the correctly rounded result: IEEE
    basic operations, conversions, integer and data ops) or "approx" (the
    spec gives no accuracy guarantee — "Accuracy" section — so results are
    judged against the correctly rounded reference with a ULP tolerance of
    our policy, spec/accuracy.py, and the error is always reported).
    """

    composable: ClassVar[bool] = True   # a function of its operands' values alone: programs may chain it (fuzz)

    fn: Callable
    accuracy: Any = "exact"  # a str, or a callable(op Instance) -> str
    bit_exact: bool = False  # NaN payloads significant (bitcast_convert moves bits)
    generic: "Generic | None" = None  # where fn is one Approx: lets the oracle work on whole arrays
    tolerance: Any = None    # {format name: ULPs}: this op's own tolerance of "approx" results, where the
                             # format's default (FloatFormat.tolerance, spec/accuracy.py) is not the right one
    same_operand: bool = False   # fn(x, x) is monotone or constant in x (compare: x != x is false on any
    # NaN-free range; add, subtract, maximum, minimum): where one value is both operands, the oracle's
    # ranged evaluation moves the two together (oracle/propagation.py).  Not multiply: x·x has its
    # minimum 0 inside a range that straddles 0, which the ends alone would miss.

    def accuracy_for(self, op: "Instance") -> str:
        """The accuracy class ("exact" | "approx") of this op instance: ops
        such as multiply are IEEE basic operations on reals but unguaranteed
        complex arithmetic, so `accuracy` may depend on the element types
        (of operands: `abs` of complex<f32> yields f32 yet is approximate)."""
        return self.accuracy(op) if callable(self.accuracy) else self.accuracy


@dataclass(frozen=True)
class Generic:
    """A claim about an `Elementwise` fn on real floats, for speed only: at
    every element where `where(*operands)` holds (numpy float64 arrays in,
    a bool mask out), `fn` returns exactly `Approx(f, *arguments(*operands))`
    (the operands themselves unless `args` says otherwise), or f's value
    itself where that is exact (cbrt(27) = 3).  With `ieee`
    (and f None) the claim is that fn's answer there is the exact result of
    that IEEE operation — a basic one (+ - * / sqrt), which hardware rounds
    correctly, or an exact one (abs, negate, roundToIntegral…, maximum,
    minimum), whose result numpy computes without rounding: the oracle
    lets numpy compute it where operands and result are normal numbers.  The
    oracle uses it to evaluate those elements as whole arrays and still calls
    `fn` on every other element; tests/spec/test_generic.py checks the claim
    against `fn` on every value of the small formats and the specials.
    With `integer`, the claim is about integer operands: on arrays of an
    integer type numpy holds natively (i1 as numpy bool) it returns fn's
    result at every element it does not decline (an overflow, which fn
    states as implementation-defined: `checked`); tests/oracle/test_fast.py
    checks it with each type's extremes.
    With `whole`, the claim is about every element of an instance, of any
    element types (compare: floats, integers, complex in, i1 out):
    `whole(op, *operands)` — the operand arrays as the oracle holds them, in
    their element types' numpy types (ml_dtypes for the narrow ones, numpy
    bool for i1) — returns fn's answer at every element as an array of the
    result's numpy type; or (that array, a mask of declined elements), where
    fn's answer is more than one value (compare's TOTALORDER on a pair of
    zeros or NaNs: implementation-defined), the array holds its primary
    value and fn states the element; or None: no claim about this instance.
    Served by `oracle.fast.whole`; tests/spec/test_compare_whole.py checks
    compare's against fn.
    With `nan` (beside f), the claim is that fn answers a NaN (math.nan:
    log of a negative number) wherever `nan(*operands)` holds, so the
    oracle states those elements as whole arrays too (an exhaustive f32
    survey of log meets 2^31 of them); test_generic.py checks it alike."""

    f: Callable | None
    where: Callable | None = None  # required with f or ieee
    args: Callable | None = None   # operand arrays -> the Approx's argument arrays (default: the operands)
    ieee: Callable | None = None   # instead of f: the numpy ufunc of an IEEE operation (+ - * / sqrt; exact: abs, ceil …)
    exact: bool = False            # ieee never rounds, and numpy's zeros carry IEEE's sign (ceil(-0.5) = -0): zero results count
    integer: Callable | None = None  # integer arrays -> fn's results, or (results, mask of elements declined)
    whole: Callable | None = None    # (op, *operand arrays) -> fn's results, or (results, declined), or None
    nan: Callable | None = None      # with f: operands -> where fn answers a NaN (outside f's domain)

    def arguments(self, *operands) -> tuple:
        return tuple(self.args(*operands)) if self.args is not None else operands


def finite(*xs):
    """Every operand finite (numpy arrays)."""
    import numpy as np
    m = np.ones(np.shape(xs[0]), dtype=bool)
    for x in xs:
        m &= np.isfinite(x)
    return m


def finite_nonzero(*xs):
    """Every operand finite and nonzero (numpy arrays): the generic case of
    most transcendental functions, whose ±0, ±inf and NaN are special."""
    import numpy as np
    m = np.ones(np.shape(xs[0]), dtype=bool)
    for x in xs:
        m &= np.isfinite(x) & (x != 0)
    return m


def approx_if_complex(op: "Instance") -> str:
    """Accuracy of an op that is exact on integers and IEEE basic operations
    on floats, but whose complex form is not a basic operation (the seed's
    "Accuracy" section gives no guarantee there): "approx" when an operand
    is complex."""
    types = []
    for v in op.operands.values():
        types.extend(v if isinstance(v, (list, tuple)) else [v])
    return "approx" if any(t.element_type.is_complex for t in types) else "exact"


def checked(np_fn):
    """numpy's `np_fn` for a `Generic.integer` route where overflow can
    happen: computed wide (int64, or Python ints for 64-bit types); the
    elements that leave the type's range are declined (a mask), and the
    op's fn states them (`integer_overflow`).  Booleans are numpy's (add is
    OR, multiply AND)."""
    import numpy as np

    def on_arrays(*xs):
        dt = xs[0].dtype
        if dt.kind == "b":
            return np_fn(*xs)
        wide = np.int64 if dt.itemsize <= 4 else object
        r = np.asarray(np_fn(*[np.asarray(x).astype(wide) for x in xs]))
        info = np.iinfo(dt)
        out = np.asarray((r < info.min) | (r > info.max), dtype=bool)
        return np.where(out, 0, r).astype(dt), out
    return on_arrays


@dataclass(frozen=True)
class DataMovement:
    """Semantics stated as the spec's index formulas on whole arrays.

    `fn(op, *operands) -> list of results`, one per result: a numpy/ml_dtypes
    array, or `Choices` where the spec allows several values (scatter's
    implementation-defined update order, out-of-bounds indices).  No rounding
    happens in the movement itself, so results are bit-exact (NaN payloads
    included); values a region computed were rounded by its body's ops.
    `bit_exact=False` for results computed by a region (NaN is NaN there)."""

    composable: ClassVar[bool] = True   # a function of its operands' values alone

    fn: Callable
    bit_exact: bool = True


@dataclass(frozen=True)
class Accumulating:
    """Semantics of ops that reduce (reduce, dot_general, convolution, …):
    `fn(op, *operands) -> list`, one object array per result, of element
    answers in the vocabulary of `Elementwise` (exact ints, bools,
    Fractions, floats with their specials, (re, im) pairs, `ImplDefined`)
    plus `Range` where the schedule is implementation-defined.  The oracle
    resolves each element as it does an element-wise answer (integer wrap,
    correct rounding) and states an exact expectation, or a "bounded" one
    where some element has a range.

    `working(op) -> bytes`: what the op's whole-array route holds beyond its
    operands and results (a convolution's patch matrices), for the oracle's
    cost stated before it starts (oracle/cost.py); None: the kind's
    per-element figure there serves.

    `bilinear`: the operands (by name) the result is bilinear in — each
    result element a sum of products x·y of one element of each, as
    dot_general and convolution are in ("lhs", "rhs") — and
    `bilinear_form(op) -> (n, product)`: n, the number of products in each
    sum (padding holes included, as zero terms: the n of its accumulation
    bound), and `product(x, y)`, those sums on whole arrays (x, y float64
    arrays of the two operands' shapes) by a float64 matrix product, each
    sum taken in some order (BLAS), in the result's shape.  The oracle
    carries the ranges of approximate operands through such an op by
    interval arithmetic (oracle/bilinear.py) rather than by corners."""

    composable: ClassVar[bool] = True   # a function of its operands' values alone

    fn: Callable
    working: Callable | None = None
    bilinear: tuple = ()
    bilinear_form: Callable | None = None


@dataclass(frozen=True)
class ControlFlow:
    """Semantics of ops that choose or repeat their regions (if, case,
    while) or pass values through untouched (optimization_barrier):
    `fn(op, values, read) -> list of values`.  `values` are the oracle's
    values of the operands (opaque: expectations, tuples, tokens), passed
    on as they are to a region's `Function.expect` or to the results;
    `read(value)` gives a value's primary array where the op must look at
    it (a predicate, an index, a loop condition).  Nothing is rounded here:
    what the regions compute was rounded by their own ops."""

    composable: ClassVar[bool] = False   # runs regions: not a function fuzz composes

    fn: Callable


@dataclass(frozen=True)
class Decomposition:
    """Semantics the seed states as a program of other StableHLO ops ("More
    formally, this operation can be expressed as a decomposition to existing
    StableHLO operations": batch_norm_inference, batch_norm_training,
    batch_norm_grad).  Each op of the decomposition rounds as its own
    section says, in the order written; where an op leaves something to
    the implementation (reduce's schedule) the decomposition inherits it.
    `fusable`: the decomposition states what is computed, not how it is
    rounded — any step may instead be computed exactly or in a wider format
    (fused), so each rounding step and each inexact constant may give
    either neighbour of its exact value (oracle/decomposition.py, `Fused`);
    False holds every step to its rounding as written.

    `program(op, b, *operands) -> list`, one value per result, states the
    decomposition as the seed writes it, line by line, on opaque values
    (each with `.type`, a TensorType) through `b`, a builder the oracle
    hands in (the spec never imports it):

      b.constant(x, element_type)      a rank-0 constant: the exact real x
                                       (int, Fraction, float) rounded to
                                       nearest, ties to even, into the type —
                                       how a literal `x : type` reads
      b.broadcast_in_dim(v, dims, shape)
      b.reduce(inputs, init_values, dimensions, body)
                                       body: the mnemonic of the pairwise op
                                       the seed's lambda applies ("add");
                                       returns the list of results
      b.<mnemonic>(*operands, **attributes)
                                       any other op whose `infer` states its
                                       results (add, sqrt, batch_norm_inference…);
                                       one value, or a list for several results

    The oracle (oracle/decomposition.py) runs the program through its own
    walk, so every rounding, every reduction bound and every tolerance of an
    approximate input propagates as in any program, and each op of the
    decomposition is checked by its own constraints."""

    composable: ClassVar[bool] = True   # a function of its operands' values alone

    program: Callable
    fusable: bool = False


@dataclass(frozen=True)
class SideEffect:
    """Semantics of an op that orders or performs side effects.

    `fn(op, payloads, host) -> list`: `payloads` are the arrays of the op's
    tensor operands in table order (tokens left out); `host` offers
    `read(stream, tensor_types) -> arrays` and `write(stream, arrays)` (one
    call per op, even of no tensors: the op still talks to the host), streams
    named "infeed", "outfeed" or "channel <id>".  It returns the arrays of
    the op's tensor results in order; the oracle makes each token result,
    which stands after the op's token operands and the op's own effect.
    `cases(spec, rng) -> [(note, kind, instance, violates)]` are the
    instances generators render (kind "value" or "invalid"): a token op's
    structure is a handful of counts and flags, listed rather than solved."""

    composable: ClassVar[bool] = False   # talks to the host

    fn: Callable
    cases: Callable | None = None


class LoopLimit(Exception):
    """A loop ran past the iteration budget the oracle gives it: the seed
    leaves the behaviour of an infinite loop TBD (while), so no result is
    stated."""


@dataclass(frozen=True)
class Sample:
    """One result of `Statistical` semantics: `values`, a sample the
    implementation could have produced (an array of the result's type: the
    oracle's own output), and `tests`, the distribution tests every
    implementation's output must pass (a JSON-able dict for
    spec/statistics.py: `test`, its parameters, `alpha`)."""

    values: Any
    tests: dict
    why: str = ""   # with `values` None: the seed states no result here (undefined behaviour), and why


@dataclass(frozen=True)
class Statistical:
    """Semantics of ops whose values the seed leaves to the implementation
    but whose distribution it states (rng, rng_bit_generator):
    `fn(op, *operands) -> list`, one `Sample` per result.  The oracle states
    a "statistical" expectation (spec/expectation.py); `fn` must be a
    deterministic function of its inputs, so suites stay reproducible."""

    composable: ClassVar[bool] = False   # draws values the implementation chooses

    fn: Callable
