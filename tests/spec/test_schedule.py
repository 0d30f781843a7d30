"""The bounds of spec/schedule.py against independent truth: every schedule, enumerated.

A reduction's result is `exec(schedule)` for any full binary tree over the
leaves in order.  Here every tree is enumerated on small inputs, each node
rounded correctly into the format (exact Fraction arithmetic, then
`round_value`, itself checked against ml_dtypes in tests/oracle), and
every result must fall inside the range the schedule module states; the
same for a wider accumulator (exact sum, rounded once).  And the range is
not slack: a value one ULP outside it fails the comparison.
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np
import pytest

from shlo_conform.oracle.rounding import round_directed, round_value
from shlo_conform.spec import schedule
from shlo_conform.spec.dsl import ImplDefined, Range
from shlo_conform.spec.types import E_BF16, E_F16, E_F32, E_F8E4M3FN, E_F8E5M2

FORMATS = [E_F8E5M2, E_F8E4M3FN, E_BF16, E_F16, E_F32]


def _trees(values: tuple, op, fmt) -> set:
    """Every result of every full binary tree over `values` (in order), each
    node rounded into `fmt`."""
    @lru_cache(maxsize=None)
    def sub(i, j):
        if j - i == 1:
            return {values[i]}
        out = set()
        for k in range(i + 1, j):
            for a in sub(i, k):
                for b in sub(k, j):
                    out.add(_round(op(a, b), fmt))
        return out
    return sub(0, len(values))


def _round(x, fmt):
    v = round_value(x, fmt)
    return Fraction(v) if isinstance(v, Fraction) or (isinstance(v, float) and math.isfinite(v)) else v


def _inside(v, r: Range, fmt) -> bool:
    lo = fmt.decode(round_directed(r.lo, fmt, up=False))
    hi = fmt.decode(round_directed(r.hi, fmt, up=True))
    return lo <= v <= hi


def _values(fmt, rng, n, spread=6):
    """Random values of the format: mixed signs and magnitudes (cancellation)."""
    out = []
    for _ in range(n):
        x = float(rng.uniform(0.5, 2)) * 2.0 ** int(rng.integers(-spread, spread)) * (1 if rng.random() < 0.6 else -1)
        out.append(_round(Fraction(x), fmt.format))
    return tuple(out)


@pytest.mark.parametrize("et", FORMATS, ids=[e.name for e in FORMATS])
def test_every_schedule_of_a_sum_lies_in_the_range(et):
    fmt = et.format
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(40):
        xs = _values(et, rng, int(rng.integers(2, 7)))
        r = schedule.sum_range([float(x) for x in xs], fmt)
        if not isinstance(r, Range):
            continue
        results = _trees(xs, lambda a, b: a + b, fmt)
        wide = _round(sum(xs), fmt)          # a wider accumulator, rounded once
        assert all(_inside(v, r, fmt) for v in results | {wide}), (xs, results, r)
        checked += 1
    assert checked >= 30


@pytest.mark.parametrize("et", FORMATS, ids=[e.name for e in FORMATS])
def test_every_schedule_of_a_product_lies_in_the_range(et):
    fmt = et.format
    rng = np.random.default_rng(2)
    checked = 0
    for _ in range(40):
        xs = _values(et, rng, int(rng.integers(2, 6)), spread=3)
        r = schedule.product_range([float(x) for x in xs], fmt)
        if not isinstance(r, Range):
            continue
        assert all(_inside(v, r, fmt) for v in _trees(xs, lambda a, b: a * b, fmt)), xs
        checked += 1
    assert checked >= 30


def test_products_that_underflow_stay_inside_the_widened_range():
    """Tiny factors whose partial products go subnormal in f16."""
    fmt = E_F16.format
    xs = tuple(_round(Fraction(v), fmt) for v in (2.0 ** -10, 2.0 ** -8 * 1.37, 3.1, -1.9, 2.0 ** -3))
    r = schedule.product_range([float(x) for x in xs], fmt)
    assert isinstance(r, Range)
    assert all(_inside(v, r, fmt) for v in _trees(xs, lambda a, b: a * b, fmt))


@pytest.mark.parametrize("et", [E_BF16, E_F16, E_F32], ids=["bf16", "f16", "f32"])
def test_dot_products_rounded_or_exact_lie_in_the_range(et):
    """The seed's dot product: products rounded, then any schedule of the sum —
    and the wider-accumulator reading (exact products, one rounding)."""
    fmt = et.format
    rng = np.random.default_rng(3)
    for _ in range(30):
        n = int(rng.integers(1, 6))
        a, b = _values(et, rng, n, 3), _values(et, rng, n, 3)
        r = schedule.dot_range([(float(x), float(y)) for x, y in zip(a, b)], fmt)
        products = tuple(_round(x * y, fmt) for x, y in zip(a, b))
        results = _trees(products, lambda p, q: p + q, fmt) if n > 1 else set(products)
        results.add(_round(sum(x * y for x, y in zip(a, b)), fmt))
        assert all(_inside(v, r, fmt) for v in results), (a, b)


def test_one_ulp_outside_the_range_is_outside():
    """The comparison of a reduction's expectation: the range's ends pass, one
    step beyond fails (through the oracle and the suite's comparison)."""
    from shlo_conform.generators.expect import expected_outputs
    from shlo_conform.spec.types import E_F32, from_ordinals, ordinals
    from shlo_conform.suites.compare import compare
    text = """func.func @main(%x: tensor<6xf32>, %z: tensor<f32>) -> tensor<f32> {
      %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<6xf32>, tensor<f32>) -> tensor<f32>
      return %0 : tensor<f32>
    }"""
    x = np.array([1e8, 1.0, -1e8, 3.25, 1e-3, 7.0], np.float32)
    (e,) = expected_outputs(text, [x, np.float32(0)])
    assert e.kind == "bounded"
    step = lambda bits, n: from_ordinals(ordinals(bits, E_F32) + n, E_F32).view(np.float32).reshape(())  # noqa: E731
    assert compare(e, step(e.lo, 0)).ok and compare(e, step(e.hi, 0)).ok
    assert not compare(e, step(e.lo, -1)).ok and not compare(e, step(e.hi, 1)).ok
    # the exact sum is 11.251 (representable to f32 precision); a naive left fold gives 11.251 too
    assert abs(float(e.array()) - 11.251) < 1e-5


def test_special_values_decide_the_sum():
    fmt = E_F32.format
    assert math.isnan(schedule.sum_range([1.0, math.nan, 2.0], fmt))
    assert math.isnan(schedule.sum_range([math.inf, 1.0, -math.inf], fmt))
    assert schedule.sum_range([math.inf, 1.0, 5.0], fmt) == math.inf
    big = float(fmt.max_finite)
    maybe = schedule.sum_range([big, big, -big], fmt)   # (big + big) overflows, big + (big - big) does not
    assert isinstance(maybe, ImplDefined) and schedule.OVERFLOW in maybe.alternatives


def test_init_values_that_are_not_the_identity_are_labelled():
    """Integer sum with init 5: once (primary), none, twice — and more."""
    answer = schedule.monoid_reduce("add", [1, 2, 3], 5, __import__("shlo_conform.spec.types", fromlist=["SI32"]).SI32,
                                    lambda a, b: a + b)
    assert isinstance(answer, ImplDefined)
    assert list(answer.alternatives)[:3] == ["init_values once", "no init_values", "init_values twice"]
    assert list(answer.alternatives.values())[:3] == [11, 6, 16]


def test_a_non_associative_body_gives_every_tree():
    """Subtraction over (8, 4, 2, 1): ((8-4)-2)-1 = 1, 8-(4-(2-1)) = 5, … — the
    enumeration is checked against the trees written out by hand."""
    call = lambda a, b: [np.int32(a - b)]  # noqa: E731
    leaves = [(np.int32(v),) for v in (8, 4, 2, 1)]
    got = {int(v[0]) for v in schedule.schedules(leaves, lambda *args: call(*args))}
    by_hand = {((8 - 4) - 2) - 1, (8 - 4) - (2 - 1), (8 - (4 - 2)) - 1, 8 - ((4 - 2) - 1), 8 - (4 - (2 - 1))}
    assert got == by_hand == {1, 3, 5, 7}


@pytest.mark.parametrize("reduction,name", [("max", "maximum"), ("min", "minimum")])
def test_a_fast_extremum_reduction_is_the_rows_extremum_where_no_nan_or_zero_tie(reduction, name):
    """jnp.max / jnp.min as oracle/rewrites.py's "fast min/max" rewrites
    them (one compare and a select: how `run` asks whether a backend used
    single maxss/minss instructions): `schedule.fast_extremum` reads the
    body, and where `reduce_slice` states one value (rows without NaN and
    without a tie of ±0) every tree over the row — the body run by the
    oracle, compared bit for bit — gives exactly that value.  Rows with a NaN
    or a ±0 tie are left to the enumeration (the fast form loses a NaN on
    its right and keeps the left operand of a tie)."""
    import jax
    import jax.numpy as jnp
    from shlo_conform.oracle.program import parse_program
    from shlo_conform.oracle.rewrites import rewritten
    from tests.independent.trees import every_tree
    f = getattr(jnp, reduction)
    text = jax.jit(lambda v: f(v, axis=1)).lower(jnp.zeros((3, 5), jnp.float32)).as_text()
    [(_, changed, _)] = [r for r in rewritten(text) if r[0].name == "fast min/max"]
    [body] = [s.inst.regions["body"] for s in parse_program(changed).steps
              if s.inst is not None and s.inst.spec.mnemonic == "reduce"]
    assert schedule.fast_extremum(body) == name
    init = np.float32(-np.inf if name == "maximum" else np.inf)

    def step(a: bytes, b: bytes) -> bytes:
        x, y = (np.frombuffer(v, np.float32)[0] for v in (a, b))
        return np.asarray(body.call(x, y)[0], np.float32).tobytes()
    rng = np.random.default_rng(3)
    pool = np.array([-np.inf, -1.0, -0.0, 0.0, 1.0, 2.0, np.inf, np.nan], np.float32)
    decided = left = 0
    for _ in range(150):
        row = rng.choice(pool, int(rng.integers(1, 6))).astype(np.float32)
        got = schedule.reduce_slice([(v,) for v in row], (init,), body, [E_F32])[0]
        if not isinstance(got, float):
            left += 1
            assert np.isnan(row).any() or ((row == 0).any() and np.signbit(row[row == 0]).any()
                                           and (~np.signbit(row[row == 0])).any())
            continue
        trees = every_tree([v.tobytes() for v in row] + [init.tobytes()], step)
        assert trees == {np.float32(got).tobytes()}, (row, got)
        decided += 1
    assert decided > 40 and left > 20
    from shlo_conform.oracle.program import execute
    x = rng.standard_normal((4, 40)).astype(np.float32)
    x[1, 7] = np.nan
    big = jax.jit(lambda v: f(v, axis=1)).lower(jnp.zeros(x.shape, jnp.float32)).as_text()
    [(_, big, _)] = [r for r in rewritten(big) if r[0].name == "fast min/max"]
    [e] = execute(parse_program(big), [x])   # whole rows (reduce_arrays): the NaN row alone is left open
    want = getattr(np, reduction)(np.where(np.isnan(x), 0, x), axis=1)
    assert np.array_equal(e.array()[[0, 2, 3]], want[[0, 2, 3]])
    plain = jax.jit(lambda v: f(v, axis=1)).lower(jnp.zeros((3, 5), jnp.float32)).as_text()
    [body] = [s.inst.regions["body"] for s in parse_program(plain).steps
              if s.inst is not None and s.inst.spec.mnemonic == "reduce"]
    assert schedule.fast_extremum(body) is None   # IEEE's maximum itself is a monoid, not this


def _range_as_defined(xs: list, fmt):
    """product_range as its definition reads, in O(n²) exact products: the
    exact product, γ(n − 1) of it, "any value" where a product of consecutive
    factors times 1 + γ reaches the overflow threshold, a subnormal term
    where one falls below the normal range."""
    mags = [abs(Fraction(x)) for x in xs]
    partial = [math.prod(mags[i:j], start=Fraction(1)) for i in range(len(mags)) for j in range(i + 1, len(mags) + 1)]
    g = schedule.gamma(max(len(xs) - 1, 0), fmt)
    p = (-1) ** sum(math.copysign(1, x) < 0 for x in xs) * math.prod(mags, start=Fraction(1))
    if g is None or max(partial, default=Fraction(1)) * (1 + g) >= schedule.overflow_threshold(fmt):
        return "overflow", p
    b = g * abs(p)
    if len(xs) > 1 and min(partial) < fmt.min_normal:
        b += (len(xs) - 1) * (fmt.min_subnormal / 2) * math.prod((max(Fraction(1), m) for m in mags), start=Fraction(1))
    return p - b, p + b


@pytest.mark.parametrize("et", FORMATS, ids=lambda e: e.name)
def test_product_range_decides_overflow_and_underflow_as_defined(et):
    """The linear route (log₂ runs, exact where near the edge) against every
    product of consecutive factors: the same decisions and ends, factors
    drawn at the overflow and subnormal edges."""
    fmt = et.format
    rng = np.random.default_rng(33)
    top, low, tiny = float(fmt.max_finite), float(fmt.min_normal), float(fmt.min_subnormal)
    for trial in range(300):
        n = int(rng.integers(1, 10))
        if trial % 3 == 0:   # runs whose product sits at the overflow threshold
            base = top ** (1 / n)
            xs = [base * float(rng.choice([0.999, 1.0, 1.001])) for _ in range(n)]
        elif trial % 3 == 1:
            xs = [float(rng.choice([low, 1.5 * low, tiny, 0.75, 1.25, 2.0])) for _ in range(n)]
        else:
            xs = [float(rng.choice([top, top / 3, 0.5, low])) for _ in range(n)]
        xs = [float(x) * float(rng.choice([1, -1])) for x in xs if math.isfinite(x) and x != 0]
        if not xs:
            continue
        got, want = schedule.product_range(xs, fmt), _range_as_defined(xs, fmt)
        if want[0] == "overflow":
            assert isinstance(got, ImplDefined), (xs, got)
        else:
            assert isinstance(got, Range) and (got.lo, got.hi) == want, (xs, got, want)
