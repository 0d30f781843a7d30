"""`Elementwise.generic` (spec/dsl/) is a claim made for speed: where its
`where` holds, the op's per-element fn returns exactly Approx(f, *operands).
Checked here against the fn itself, which stays the statement of the
semantics: every value of the 8- and 16-bit formats (pairs sampled for
binary ops), and for f32/f64 the specials, their neighbours and random
bit patterns."""
from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from shlo_conform.spec.dsl import Approx, Elementwise
from shlo_conform.spec.ops import OPS as REGISTRY
from shlo_conform.spec.types import TensorType, element_type, from_bits

GENERIC = sorted(m for m, s in REGISTRY.items()
                 if isinstance(s.semantics, Elementwise) and s.semantics.generic is not None
                 and s.semantics.generic.f is not None)   # ieee and integer routes: tests/oracle/test_fast.py
TYPES = ["f8E4M3FN", "f8E5M2", "bf16", "f16", "f32", "f64"]


def _values(name: str, rng) -> np.ndarray:
    et = element_type(name)
    if et.bits <= 16:
        bits = np.arange(1 << et.bits, dtype=np.uint64)
    else:
        bits = rng.integers(0, 1 << et.bits, 5000, dtype=np.uint64)
    with np.errstate(invalid="ignore"):
        v = from_bits(bits, et).astype(np.float64)
    special = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 0.5, 2.0, -0.5, 5e-324, -5e-324]
    return np.concatenate([v, special, np.nextafter(special, np.inf), np.nextafter(special, -np.inf)])


def _scalar_columns(spec, name: str, rng, n: int):
    """(instance on scalars of `name`, its values, one column per operand):
    every value for a unary op, `n` drawn from them per operand otherwise."""
    t = TensorType((), element_type(name))
    inst = spec.instance({o.name: t for o in spec.operands}, {}, {r.name: t for r in spec.results})
    v = _values(name, rng)
    return inst, v, ([v] if len(spec.operands) == 1 else [rng.choice(v, n) for _ in spec.operands])


def _same(a: float, b: float) -> bool:
    return math.copysign(1, a) == math.copysign(1, b) and (a == b or (math.isnan(a) and math.isnan(b)))


def test_some_ops_declare_it():
    assert {"sine", "exponential", "log", "atan2", "power"} <= set(GENERIC)


@pytest.mark.parametrize("mnemonic", GENERIC)
def test_generic_claim_matches_fn(mnemonic):
    spec = REGISTRY[mnemonic]
    sem = spec.semantics
    rng = np.random.default_rng(5)
    arity = len(spec.operands)
    for name in TYPES:
        inst, v, cols = _scalar_columns(spec, name, rng, 10000)
        if arity > 1:   # the specials against every other operand's specials too
            cols = [np.concatenate([c, np.repeat(v[-36:], 36) if i == 0 else np.tile(v[-36:], 36)])
                    for i, c in enumerate(cols)]
        mask = np.asarray(sem.generic.where(*cols), dtype=bool)
        assert mask.any() and not mask.all(), name
        if sem.generic.nan is not None:   # the NaNs fn makes outside f's domain
            nan = np.asarray(sem.generic.nan(*cols), dtype=bool)
            assert nan.any() and not (nan & mask).any(), name
            for j in np.flatnonzero(nan).tolist():
                got = sem.fn(inst, *[float(c[j]) for c in cols])
                assert isinstance(got, float) and math.isnan(got), (name, [float(c[j]) for c in cols], got)
        idx = np.flatnonzero(mask)
        want = [np.asarray(a, dtype=np.float64) for a in sem.generic.arguments(*[c[idx] for c in cols])]
        for n, j in enumerate(idx.tolist()):
            x = [float(c[j]) for c in cols]
            got = sem.fn(inst, *x)
            args = [float(a[n]) for a in want]
            if not isinstance(got, Approx):   # an exact answer (cbrt(27) = 3): f's own value there
                with mpmath.workprec(300):
                    exact = mpmath.mpf(got.numerator) / got.denominator if isinstance(got, Fraction) else mpmath.mpf(got)
                    assert exact == sem.generic.f(*[mpmath.mpf(a) for a in args]), (name, x, got)
                continue
            assert got.f is sem.generic.f, (name, x, got)
            assert len(got.args) == len(args) and all(_same(a, b) for a, b in zip(got.args, args)), (name, x, got)


# Where the whole-array route leaves elements to fn on purpose: power's negative bases (an integer
# exponent's sign rule is fn's), which fn still answers with Approx(f, …).
LEFT_TO_FN = {"power": lambda x, y: x < 0}


@pytest.mark.parametrize("mnemonic", GENERIC)
def test_generic_claim_is_complete(mnemonic):
    """The claim is a speed promise too: wherever fn answers Approx(f, …)
    with the claim's own f at finite arguments, `where` holds, so the whole
    array takes the fast route (a narrowed claim — log's `x > 0` read as
    `x > 1` — would still give right answers, slowly; model-scale programs
    need all of it).  Infinities, NaN, ±0 and ±1 are the special branches'
    (IEEE 754 §9.2's exact values: an fn that left sin(±inf) or cos(0) to
    Approx would state the same NaN or 1)."""
    spec = REGISTRY[mnemonic]
    sem = spec.semantics
    rng = np.random.default_rng(9)
    for name in TYPES:
        inst, _, cols = _scalar_columns(spec, name, rng, 3000)
        with np.errstate(all="ignore"):
            mask = np.asarray(sem.generic.where(*cols), dtype=bool)
        skip = LEFT_TO_FN.get(mnemonic)
        for j in np.flatnonzero(~mask).tolist():
            x = [float(c[j]) for c in cols]
            if not all(math.isfinite(v) and abs(v) not in (0.0, 1.0) for v in x):
                continue
            got = sem.fn(inst, *x)
            assert not (isinstance(got, Approx) and got.f is sem.generic.f) or (skip and skip(*x)), (name, x)


IEEE_UNARY = sorted(m for m, s in REGISTRY.items()
                    if isinstance(s.semantics, Elementwise) and s.semantics.generic is not None
                    and s.semantics.generic.ieee is not None and len(s.operands) == 1)


# IEEE 754 operations that never round (abs, negate, roundToIntegral…, minimum/maximum, the remainder
# fmod, a complex number's parts) and convert, whose zero results keep the operand's sign: their
# whole-array claim may include zero results (`Generic.exact`).  Written here from the standard, not
# read from the op modules.
EXACT_IEEE = {"abs", "negate", "ceil", "floor", "round_nearest_afz", "round_nearest_even", "real", "imag",
              "convert", "minimum", "maximum", "remainder"}
IEEE_OPS = sorted(m for m, s in REGISTRY.items()
                  if isinstance(s.semantics, Elementwise) and s.semantics.generic is not None
                  and s.semantics.generic.ieee is not None)


@pytest.mark.parametrize("mnemonic", IEEE_OPS)
def test_exact_is_declared_where_ieee_never_rounds(mnemonic):
    """`exact=True` widens the claim to zero results; declared on an op that
    rounds it would take numpy's zero sign for IEEE's, left off an exact op
    the claim shrinks for nothing."""
    assert REGISTRY[mnemonic].semantics.generic.exact == (mnemonic in EXACT_IEEE), mnemonic


def test_some_unary_ops_take_the_ieee_route():
    assert {"sqrt", "abs", "ceil", "round_nearest_afz", "convert", "imag"} <= set(IEEE_UNARY)


@pytest.mark.parametrize("mnemonic", IEEE_UNARY)
def test_unary_ieee_claim_matches_fn(mnemonic):
    """A unary `Generic(ieee=...)` claim, on every bit pattern of the 8-bit
    formats; of bf16 and f16, every subnormal and every eighth pattern (low
    three bits clear: the ties x.5 of small x among them); of f32 and f64,
    the ties k + 1/2 at every scale, their neighbours, the specials and 500
    random patterns (tests/oracle/test_fast.py samples binary ops): at each
    element `fast.ieee` accepts where `where` holds, its bits
    are the op's fn's, rounded by the oracle — ties of round_nearest_afz,
    subnormals, NaN of sqrt of a negative included — and it accepts most of
    them (a pass that declines everything would prove nothing)."""
    from shlo_conform.oracle import fast
    from shlo_conform.oracle.elementwise import resolve
    from shlo_conform.spec.types import to_bits
    spec = REGISTRY[mnemonic]
    sem = spec.semantics
    g = sem.generic
    rng = np.random.default_rng(8)
    for name in ["f8E4M3FN", "f8E5M2", "bf16", "f16", "f32", "f64"]:
        et = element_type(name)
        t = TensorType((), et)
        inst = spec.instance({o.name: t for o in spec.operands}, {}, {r.name: t for r in spec.results})
        if et.bits <= 16:
            bits = np.arange(1 << et.bits, dtype=np.uint64)
            if et.bits == 16:
                bits = bits[((bits & np.uint64(7)) == 0) | ((bits & np.uint64(et.format.exponent_mask)) == 0)]
            x = from_bits(bits, et)
        else:   # ties k + 1/2 at every scale and their neighbours (0.49999997 + 0.5 rounds to 1 in f32)
            ties = np.ldexp(np.arange(-40, 41) + 0.5, np.arange(81)[:, None] % (et.format.precision + 2)).reshape(-1)
            x = ties.astype(et.numpy)
            with np.errstate(invalid="ignore", over="ignore"):
                rest = _values(name, rng)[-536:].astype(et.numpy)   # 500 random patterns and the specials
            x = np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf), rest])
        with np.errstate(invalid="ignore"):
            wide = x.astype(np.float64)
        idx = np.flatnonzero(np.asarray(g.where(wide), dtype=bool))
        ok, r = fast.ieee(g.ieee, [x[idx]], et, g.exact)
        assert ok.sum() > 0.9 * len(idx), name
        if g.exact:   # an operation that never rounds: every element is claimed, zero results included
            assert ok.all(), (name, wide[idx[~ok]][:5])
        got = to_bits(r[ok], et).tolist()
        for v, bits in zip(wide[idx[ok]].tolist(), got):
            want = resolve(sem.fn(inst, v), et).options[0][1]
            assert bits == want, (name, v, hex(bits), hex(want))
