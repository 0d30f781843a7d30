"""The oracle's fast path (oracle/fast.py) and rigorous path (oracle/rigorous.py).

Truths: round_bits (checked against ml_dtypes/numpy casts in
test_rounding.py) for the vectorised rounding; arb's enclosures for the fast
path's decisions (the full >= 10^6-input run is bench/fast_vs_rigorous.py);
mpmath's Ziv loop at the 1000-bit truth of test_ziv.py's kind for arb.
"""
from __future__ import annotations

import mpmath
import numpy as np
import pytest

from shlo_conform.oracle import fast, fastcheck, rigorous
from shlo_conform.oracle.real_functions import TABLE, RealFunction
from shlo_conform.oracle.rounding import round_bits
from shlo_conform.spec.types import F64

FORMATS = fastcheck.FORMATS


def _hard_f64(rng, fmt, n):
    """float64 values at and next to the format's midpoints and ends, plus
    random ones across its whole range (subnormals, overflow included)."""
    m, lo, hi = fmt.mantissa_bits, fmt.emin - fmt.mantissa_bits - 2, fmt.emax + 2
    k = rng.integers(1, 1 << (m + 2), n).astype(np.float64)
    e = rng.integers(lo, hi, n)
    mid = np.ldexp(k + 0.5, e - m - 1)     # some are exact midpoints of fmt, some values, at every scale
    near = mid * (1 + rng.choice([-1, 0, 1], n) * 2.0 ** -52)
    rnd = np.ldexp(rng.uniform(0.5, 1, n), rng.integers(lo, hi, n))
    v = np.concatenate([mid, near, rnd, [float(fmt.max_finite)] * 2])
    return v * rng.choice([-1.0, 1.0], len(v))


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_round_to_format_is_round_bits(fmt):
    rng = np.random.default_rng(1)
    v = _hard_f64(rng, fmt, 1500)
    r = fast.round_to_format(v, fmt)
    for x, got in zip(v.tolist(), r.tolist()):
        want = round_bits(x, fmt)
        if fmt.has_inf or np.isfinite(got):
            assert round_bits(got, fmt) == want, (x, got)
        else:   # f8E4M3FN overflow: NaN there, an infinity here (decide refuses it)
            assert want & ~fmt.sign_mask == fmt.nan_bits(), (x, got)


@pytest.mark.parametrize("f", [f for f in TABLE if TABLE[f].numpy is not None], ids=lambda f: TABLE[f].name)
def test_fast_decisions_agree_with_arb(f):
    rng = np.random.default_rng(2)
    for fmt in FORMATS:
        if fast.working_for(f, fmt) is None:   # f64 results of scipy's float64 functions: MPFR and arb
            continue
        r = fastcheck.check(f, fmt, fastcheck.inputs(f, fmt, 1500, rng))
        assert not r.mismatches, (fmt.name, r.mismatches[:3])
        assert r.worst_rel_error < r.bound / 16, fmt.name
        assert r.decided > 0.4 * r.inputs, fmt.name


def test_the_cross_check_catches_an_error_beyond_the_bound(monkeypatch):
    """A numpy sin that is off by 2^-30 relative must be caught: the bound
    check reports it, and decisions made on it disagree with arb."""
    sin = mpmath.sin
    bad = RealFunction("sin", TABLE[sin].arb, lambda x: np.sin(x) * (1 + 2.0 ** -30))
    monkeypatch.setitem(TABLE, sin, bad)
    rng = np.random.default_rng(3)
    r = fastcheck.check(sin, FORMATS[0], [rng.uniform(-10, 10, 20_000)])
    assert r.worst_rel_error > fast.FAST_REL_ERROR / 16
    assert r.mismatches


def _table_id(f) -> str:
    """A table entry's test id, with the op module that states it (`-k atan2`
    selects atan2's own π multiples too: tools/mutation/mutation.py runs `-k OP`)."""
    mod = getattr(f, "__module__", "") or ""
    return (mod.rsplit(".", 1)[1] + "-" if ".spec.ops." in mod else "") + TABLE[f].name


@pytest.mark.parametrize("f", list(TABLE), ids=_table_id)
def test_arb_agrees_with_mpmath_loop(f):
    """Two independent evaluators of the same table entry: arb's decided
    bits equal mpmath's Ziv loop's (which is the oracle's fallback) — the
    op's own statement of f in mpmath (`logistic_value`, `pi_times`, …), which
    the whole-array route never calls, held to the arb formula that route
    uses."""
    from shlo_conform.oracle.ziv import evaluate_mpmath
    rf = TABLE[f]
    rng = np.random.default_rng(4)
    nargs = {"atan2": 2, "hypot": 2, "signed_power": 3, "polygamma": 2, "zeta": 2}.get(rf.name, 1)
    lo, hi = {"erfinv": (-0.99, 0.99), "asin": (-1, 1), "acos": (-1, 1), "atanh": (-0.99, 0.99),
              "acosh": (1.01, 20), "lgamma": (-7.5, 20), "digamma": (-7.5, 20)}.get(rf.name, (0.05, 20))
    for fmt in FORMATS:
        draws = [tuple(float(a) for a in rng.uniform(lo, hi, nargs)) for _ in range(6)]
        if rf.name in ("polygamma", "zeta"):   # (integer n >= 1, x > 0) and (x > 1, q > 0): arb's domain
            draws = [(float(rng.integers(1, 5)) + (rf.name == "zeta") * rng.uniform(0.1, 2), x) for _, x in draws]
        if rf.name == "signed_power":
            draws = [(-1.0,) + a[1:] for a in draws] + [(1.0,) + a[1:] for a in draws[:2]]
        if rf.name == "pi_times":
            draws = [(0.75,), (-1.0,), (0.5,), (-0.25,)]
        for args in draws:
            z = rigorous.evaluate(f, args, fmt)
            assert z is not None and z[2], (rf.name, args)
            assert z[0] == evaluate_mpmath(f, args, fmt).bits, (rf.name, args)


def test_exact_value_and_huge_exponent():
    from shlo_conform.spec.types import F32
    assert rigorous.evaluate(mpmath.exp, (-1e30,), F32)[:3:2] == (0, True)      # rounds to +0
    assert rigorous.evaluate(mpmath.exp, (1e300,), F64) is None or \
        rigorous.evaluate(mpmath.exp, (1e300,), F64)[0] == 0x7FF0000000000000
    assert rigorous.evaluate(mpmath.hypot, (3.0, 4.0), F32)[:3:2] == (0x40A00000, True)


def test_ball_ends_are_read_exactly():
    """atan(t) < t for t > 0, so atan2(k·2^-1074, 2) for odd k lies a hair
    (t³/3, about 2^-3220) below the midpoint (k/2)·2^-1074 and rounds down
    to ((k-1)/2)·2^-1074.  Ball ends rounded to 53 bits on the way to
    round_bits (rigorous._end before the fix) were that midpoint, whose tie
    went to even: 2 quanta for k = 3 instead of 1."""
    q = 2.0 ** -1074
    for k in (3, 7, 11):
        for s in (1, -1):
            bits, _, decided = rigorous.evaluate(mpmath.atan2, (s * k * q, 2.0), F64)
            assert decided and bits == (F64.sign_mask if s < 0 else 0) | (k - 1) // 2, (k, s, hex(bits))


def _ieee_ops() -> list[str]:
    from shlo_conform.spec.dsl import Elementwise
    from shlo_conform.spec.ops import OPS
    return sorted(m for m, s in OPS.items() if isinstance(s.semantics, Elementwise)
                  and s.semantics.generic is not None and s.semantics.generic.ieee is not None)


IEEE_OPS = _ieee_ops()


def test_the_ieee_ops_declare_it():
    assert {"add", "subtract", "multiply", "divide", "sqrt", "ceil", "abs", "maximum"} <= set(IEEE_OPS)


@pytest.mark.parametrize("mnemonic", IEEE_OPS)
def test_ieee_pass_equals_the_ops_fn(mnemonic):
    """What fast.ieee accepts equals the op's own fn (exact Fractions,
    rounded by round_bits) on random values of every float format, specials,
    subnormals and overflows included."""
    from shlo_conform.oracle.elementwise import resolve
    from shlo_conform.spec.ops import OPS
    from shlo_conform.spec.types import TensorType, element_type, from_bits, to_bits
    spec = OPS[mnemonic]
    g = spec.semantics.generic
    rng = np.random.default_rng(6)
    for name in ["f8E4M3FN", "f8E5M2", "bf16", "f16", "f32", "f64"]:
        et = element_type(name)
        t = TensorType((), et)
        inst = spec.instance({o.name: t for o in spec.operands}, {}, {r.name: t for r in spec.results})
        cols = [from_bits(rng.integers(0, 1 << et.bits, 3000, dtype=np.uint64), et) for _ in spec.operands]
        mask = np.asarray(g.where(*[c.astype(np.float64) for c in cols]), dtype=bool)
        ok, r = fast.ieee(g.ieee, [c[mask] for c in cols], et, g.exact)
        assert ok.sum() > 0.3 * len(ok), name
        if g.exact:   # an operation that never rounds: every element is claimed, zero results included
            assert ok.all(), (name, [c[mask][~ok][:3] for c in cols])
        got = to_bits(r[ok], et).tolist()
        args = zip(*[c[mask][ok].astype(np.float64).tolist() for c in cols])
        for x, bits in zip(args, got):
            want = resolve(spec.semantics.fn(inst, *x), et).options[0][1]
            assert bits == want, (name, x, hex(bits), hex(want))


def _near_underflow(et, rng, n: int) -> np.ndarray:
    """Bit patterns of `et` for the bottom of its range, both signs: a
    third subnormal (zeros among them), a third in [2^emin, 1) and a third
    in [1, 2^bias), exponents uniform, so that products, quotients and roots
    of two of them often land on the subnormal grid, rounded there."""
    f = et.format
    mb = np.uint64(f.mantissa_bits)
    which = rng.integers(0, 3, n)
    code = np.where(which == 0, 0, np.where(which == 1, rng.integers(1, f.bias + 1, n),
                                            rng.integers(f.bias, 2 * f.bias, n))).astype(np.uint64)
    bits = (code << mb) | rng.integers(0, 1 << f.mantissa_bits, n, dtype=np.uint64)
    return bits | np.where(rng.random(n) < 0.5, np.uint64(f.sign_mask), np.uint64(0))


@pytest.mark.parametrize("mnemonic", IEEE_OPS)
def test_ieee_pass_at_underflow_equals_the_ops_fn(mnemonic):
    """The same claim where random bit patterns seldom go: subnormal
    operands, and results on or near the subnormal grid (where computing a
    narrow format in float32 and rounding again would be wrong: a product of
    two bf16 values below 2^-126 is rounded twice there).  Most accepted
    elements must have a subnormal operand or result, so the pass is
    exercised there, not merely declining."""
    from shlo_conform.oracle.elementwise import resolve
    from shlo_conform.spec.ops import OPS
    from shlo_conform.spec.types import TensorType, element_type, from_bits, to_bits
    spec = OPS[mnemonic]
    g = spec.semantics.generic
    rng = np.random.default_rng(7)
    assert fast.gradual_underflow()
    for name in ["f8E4M3FN", "f8E5M2", "bf16", "f16", "f32", "f64"]:
        et = element_type(name)
        t = TensorType((), et)
        inst = spec.instance({o.name: t for o in spec.operands}, {}, {r.name: t for r in spec.results})
        cols = [from_bits(_near_underflow(et, rng, 3000), et) for _ in spec.operands]
        mask = np.asarray(g.where(*[c.astype(np.float64) for c in cols]), dtype=bool)
        ok, r = fast.ieee(g.ieee, [c[mask] for c in cols], et, g.exact)
        wide = [c[mask][ok].astype(np.float64) for c in cols] + [r[ok].astype(np.float64)]
        tiny = [(v != 0) & (np.abs(v) < 2.0 ** et.format.emin) for v in wide]
        assert np.logical_or.reduce(tiny).sum() > 0.1 * len(ok), name
        got = to_bits(r[ok], et).tolist()
        for x, bits in zip(zip(*[w.tolist() for w in wide[:-1]]), got):
            want = resolve(spec.semantics.fn(inst, *x), et).options[0][1]
            assert bits == want, (name, x, hex(bits), hex(want))


def _integer_ops() -> list[str]:
    from shlo_conform.spec.dsl import Elementwise
    from shlo_conform.spec.ops import OPS
    return sorted(m for m, s in OPS.items() if isinstance(s.semantics, Elementwise)
                  and s.semantics.generic is not None and s.semantics.generic.integer is not None)


def test_the_integer_ops_declare_it():
    assert {"add", "subtract", "multiply", "and", "or", "xor", "not", "maximum", "minimum", "popcnt"} \
        <= set(_integer_ops())


@pytest.mark.parametrize("mnemonic", _integer_ops())
def test_integer_route_equals_the_ops_fn(mnemonic):
    """The whole-array integer route (numpy, wrapping) against the op's own
    fn on Python integers, element by element, for every integer type the
    op takes that numpy holds natively: random bit patterns and each type's
    extremes (min, min + 1, -1, 0, 1, max - 1, max) against each other."""
    from shlo_conform.oracle.elementwise import exact_values, resolve
    from shlo_conform.spec.ops import OPS
    from shlo_conform.spec.types import ELEMENT_TYPES, TensorType, element_type, from_bits, to_bits
    spec = OPS[mnemonic]
    g = spec.semantics.generic
    rng = np.random.default_rng(7)
    tried = 0
    for name in ELEMENT_TYPES:
        et = element_type(name)
        if not fast.native_integer(et) or not all(et in o.types for o in spec.operands):
            continue
        t = TensorType((), et)
        inst = spec.instance({o.name: t for o in spec.operands}, {}, {r.name: t for r in spec.results})
        lo, hi = (0, 1) if et.bits == 1 else (et.min_value, et.max_value)
        ends = sorted({lo, min(lo + 1, hi), max(lo, -1), 0, min(1, hi), max(hi - 1, lo), hi})
        ends_bits = np.array([et.int_to_bits(v) for v in ends], dtype=np.uint64)
        cols = []
        for k in range(len(spec.operands)):
            rand = rng.integers(0, 1 << et.bits, 400, dtype=np.uint64) if et.bits < 64 else \
                rng.integers(0, 1 << 63, 400, dtype=np.uint64) * 2 + rng.integers(0, 2, 400, dtype=np.uint64)
            grid = np.repeat(ends_bits, len(ends)) if k == 0 else np.tile(ends_bits, len(ends))
            cols.append(from_bits(np.concatenate([rand, grid]), et))
        small = [from_bits(rng.integers(0, 1 << max(1, et.bits // 2 - 2), 400, dtype=np.uint64), et)
                 for _ in spec.operands]   # no overflow even where one is possible
        for columns in (cols, small):
            got = fast.integer(g.integer, columns, et)
            if got is None:   # numpy refuses the type: only i1 (subtract on bool)
                assert name == "i1", (name, mnemonic)
                continue
            r, declined = got
            tried += 1
            values = [exact_values(c, et) for c in columns]
            for i, (bits, out) in enumerate(zip(to_bits(r, et).tolist(), declined.tolist())):
                a = resolve(spec.semantics.fn(inst, *[v[i] for v in values]), et)
                # declined exactly where fn states more than one value (an overflow)
                assert out == bool(a.whys), (name, [v[i] for v in values], a)
                assert out or bits == a.options[0][1], (name, [v[i] for v in values], hex(bits), a)
    assert tried


def test_decide_takes_the_working_formats_overflow_and_underflow_for_finite_nonzero_arguments():
    """exp(±1000) overflows and underflows the working format (y = inf,
    +0): with the arguments given, finite and nonzero, those are the
    rounding of a nonzero true value — e^1000 lies past f32's largest
    finite (inf), e^-1000 below half its smallest subnormal (+0) — and are
    decided; without the arguments, or for an infinite or zero argument
    (a special value the op's module states), they are left undecided."""
    from shlo_conform.spec.types import F32
    dtype = fast.working(F32)[0]
    y = np.array([np.inf, 0.0, np.inf, 0.0], dtype=dtype)
    ok, lo = fast.decide(y, F32, [np.array([1000.0, -1000.0, np.inf, 0.0])])
    assert ok.tolist() == [True, True, False, False]
    assert lo[0] == np.inf and lo[1] == 0.0 and not np.signbit(lo[1])
    ok, _ = fast.decide(y, F32)
    assert not ok.any()


@pytest.mark.parametrize("f", [f for f in TABLE if TABLE[f].mpfr is not None], ids=lambda f: TABLE[f].name)
def test_mpfr_leaves_zero_and_non_finite_arguments_to_the_spec(f):
    """MPFR follows IEEE's signed zeros and infinities (sin(-0) = -0,
    atan2(-0, -1) = -π, exp(-inf) = 0) where the spec's own statements
    decide, so `mpfr_correct` decides no element with a zero or non-finite
    argument, in any position — the others it does (its values are checked
    against arb in tests/oracle/test_round_fast.py)."""
    arity = 2 if TABLE[f].name == "atan2" else 1
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan]
    for k in range(arity):   # the specials in argument k, a plain value in the others
        plain = 1.5 if TABLE[f].name == "acosh" else 0.5   # inside the function's domain
        args = [np.array(specials + [plain]) if j == k else np.full(len(specials) + 1, 0.75) for j in range(arity)]
        ok, r = np.zeros(len(specials) + 1, dtype=bool), np.zeros(len(specials) + 1)
        fast.mpfr_correct(f, args, ok, r)
        assert ok.tolist() == [False] * len(specials) + [True], k
