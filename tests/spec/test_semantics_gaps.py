"""What one output value of a suite case cannot show (issue 25): the labels
of implementation-defined alternatives, the strict-weak-order check that
decides how sort's rows are judged, the oracle's own loop limit, the sign
rule of the ULP kind — each held against independent truth (numpy's
two's-complement negation, the definition of a strict weak order written
out as loops, counting, hand-written bit patterns).

bench/mutation.py runs this file (`-k OP`) on every mutant the suite lets
survive, so test names carry the op's mnemonic.
"""
from __future__ import annotations

import itertools
import math
from types import SimpleNamespace

import numpy as np
import pytest

from shlo_conform.spec.dsl import ImplDefined, LoopLimit
from shlo_conform.spec.expectation import Expectation
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.ops import (exponential_minus_one, negate, shift_left, shift_right_arithmetic,
                                   shift_right_logical, sine, sort, tan, tanh)
from shlo_conform.spec.types import (C64, E_BF16, E_F32, E_F64, SI4, SI8, SI16, SI32, SI64, UI4, UI8, UI16, UI32, UI64,
                                     TensorType, parse_type, to_bits)
from shlo_conform.suites.compare import compare

while_mod = __import__("shlo_conform.spec.ops.while", fromlist=["run"])


# -- signed zeros of the approximate functions --------------------------------------------------------------
@pytest.mark.parametrize("mod", [sine, tan, tanh, exponential_minus_one], ids=lambda m: m.__name__.rsplit(".", 1)[1])
def test_signed_zero_is_returned_exactly(mod):
    """f(±0) = ±0 for sin, tan, tanh, expm1 (IEEE 754-2019 §9.2.1), a plain
    float — never an Approx, whose rounding has no sign to give a zero."""
    for z in (0.0, -0.0):
        got = mod.element(None, z)
        assert isinstance(got, float) and got == 0 and math.copysign(1, got) == math.copysign(1, z)


def _ulp(types: str, expected: list, tol: int = 4) -> Expectation:
    t = parse_type(types)
    return Expectation(t, to_bits(np.array(expected, dtype=t.element_type.numpy), t.element_type), "ulp", tol,
                       False, [], [], "")


@pytest.mark.parametrize("et", [E_F32, E_F64, E_BF16], ids=lambda e: e.name)
def test_sine_tan_tanh_exponential_minus_one_ulp_kind_judges_a_zero_sign(et):
    """The ulp kind: -0 expected, +0 back fails ("signed zero"); a nonzero
    within tolerance still passes; a tiny nonzero expected, a zero back (a
    flush) is still judged by the tolerance, as before."""
    e = _ulp(f"tensor<3x{et.mlir}>", [-0.0, 1.0, 0.0])
    good = np.array([-0.0, 1.0, 0.0], dtype=et.numpy)
    assert compare(e, good).ok
    wrong = np.array([0.0, 1.0, -0.0], dtype=et.numpy)
    got = compare(e, wrong)
    assert not got.ok and got.causes.get("signed zero") == 2
    near = np.array([-0.0, np.nextafter(np.float64(1.0), 2.0).astype(et.numpy), 0.0], dtype=et.numpy)
    assert compare(e, near).ok
    # an expected zero from an underflow: the smallest subnormal of either sign is 1-2 ULP away, the
    # tolerance's to judge (exp(-104) in f32 is 6.8e-46, nearer 0 than 2^-149; 2^-149 is off by one ULP)
    tiny = np.zeros(1, dtype=et.numpy).view(np.uint8 if et.numpy.itemsize == 1 else np.uint16 if et.numpy.itemsize == 2 else np.uint32 if et.numpy.itemsize == 4 else np.uint64)
    tiny[0] = 1
    tiny = tiny.view(et.numpy)[0]   # the smallest subnormal, from its bits
    assert compare(e, np.array([-tiny, 1.0, tiny], dtype=et.numpy)).ok


def test_sine_ulp_kind_leaves_complex_zero_signs_to_the_tolerance():
    """Complex components: the seed fixes no formula for "complex sine",
    and formulas differ in the sign of a zero component."""
    e = Expectation(TensorType((1,), C64), to_bits(np.array([complex(1.0, -0.0)], np.complex64), C64), "ulp", 4,
                    False, [], [], "")
    assert compare(e, np.array([complex(1.0, 0.0)], np.complex64)).ok


# -- negate: the labels of its overflow alternatives --------------------------------------------------------
@pytest.mark.parametrize("et", [SI4, SI8, SI16, SI32, SI64, UI4, UI8, UI16, UI32, UI64], ids=lambda e: e.name)
def test_negate_overflow_alternatives_carry_their_labels(et):
    """At the one overflowing operand (the most negative signed value; 2^(bits-1)
    for unsigned, through the bitcast) "wraps" is two's-complement negation
    and "saturates" the largest signed value — by numpy's wrapping integers
    and the bit width, not by the op's code.  Wrap is listed first: the
    primary value, as the seed's Errors section reads in this project."""
    op = SimpleNamespace(operand=TensorType((), et))
    bits = et.bits
    x = -(1 << (bits - 1)) if et.is_signed else 1 << (bits - 1)
    got = negate.element(op, x)
    assert isinstance(got, ImplDefined)
    assert list(got.alternatives) == ["INT_MIN (wraps)", "INT_MAX (saturates)"]
    if bits >= 8:
        wrapped = int(np.negative(np.array(x, dtype=et.numpy)))
    else:   # no numpy int4 arithmetic: two's complement by hand, -x mod 2^4 (read back as signed for si4)
        wrapped = (-x) % (1 << bits)
        wrapped -= (1 << bits) if et.is_signed and wrapped >> (bits - 1) else 0
    saturated = (1 << (bits - 1)) - 1
    assert got.alternatives["INT_MIN (wraps)"] == wrapped
    assert got.alternatives["INT_MAX (saturates)"] == saturated
    # one below the overflow: plain negation, no alternatives
    y = x + 1
    plain = negate.element(op, y)
    assert not isinstance(plain, ImplDefined)
    assert plain == (-y if et.is_signed else (-y) % (1 << bits))


# -- sort: the strict-weak-order check ----------------------------------------------------------------------
def _rules_broken(c) -> set[str]:
    """The rules of a strict weak order that relation c breaks, each by its definition."""
    n = len(c)
    r = range(n)
    broken = set()
    if any(c[i][i] for i in r):
        broken.add("irreflexive")
    if any(c[i][j] and c[j][k] and not c[i][k] for i in r for j in r for k in r):
        broken.add("transitive")
    inc = [[not c[i][j] and not c[j][i] for j in r] for i in r]
    if any(inc[i][j] and inc[j][k] and not inc[i][k] for i in r for j in r for k in r):
        broken.add("incomparability transitive")
    return broken


def test_sort_strict_weak_order_matches_the_definition():
    """Every relation on 3 elements (512), and 1500 seeded ones on 4 and 5
    elements; among them, relations that break one rule alone, for each of
    the three rules (so a check that drops a rule is caught)."""
    rels = [np.array(bits, dtype=bool).reshape(3, 3) for bits in itertools.product([False, True], repeat=9)]
    rng = np.random.default_rng(25)
    rels += [rng.random((n, n)) < p for n in (4, 5) for p in (0.2, 0.35, 0.5) for _ in range(250)]
    alone = set()
    for c in rels:
        broken = _rules_broken(c.tolist())
        assert sort.strict_weak_order(c) == (not broken), c.astype(int)
        if len(broken) == 1:
            alone |= broken
    assert alone == {"irreflexive", "transitive", "incomparability transitive"}


# -- while: the oracle's iteration limit --------------------------------------------------------------------
def _counting_loop(limit: int):
    """cond: counter < limit; body: counter + 1 (plain Python, counted by hand)."""
    op = SimpleNamespace(cond=SimpleNamespace(expect=lambda i, n: [np.array(i < n)]),
                         body=SimpleNamespace(expect=lambda i, n: [i + 1, n]))
    return op, [0, limit]


def test_while_runs_exactly_max_iterations_and_no_more():
    """A loop of exactly MAX_ITERATIONS iterations has its result; one more
    is past the oracle's budget (LoopLimit: the seed leaves an infinite loop
    TBD, so no result is stated)."""
    n = while_mod.MAX_ITERATIONS
    assert n == 10_000   # the documented budget (spec/ops/while.py)
    op, values = _counting_loop(n)
    assert [int(v) for v in while_mod.run(op, values, lambda a: a)] == [n, n]
    op, values = _counting_loop(n + 1)
    with pytest.raises(LoopLimit):
        while_mod.run(op, values, lambda a: a)
    op, values = _counting_loop(0)
    assert [int(v) for v in while_mod.run(op, values, lambda a: a)] == [0, 0]


def test_every_op_named_here_exists():
    for name in ("sine", "tan", "tanh", "exponential_minus_one", "negate", "sort", "while", "shift_left",
                 "shift_right_logical", "shift_right_arithmetic"):
        assert name in OPS


# -- shifts: the alternatives past the bit width, by hand ---------------------------------------------------
def _alts(v):
    return dict(v.alternatives) if isinstance(v, ImplDefined) else v


def test_shift_left_limits_and_alternatives():
    """i8: 3 << 7 wraps to -128; by the width, every bit is out (0); by -7
    (= 1 modulo 8): "modulo width" is 3 << 1 = 6."""
    f = shift_left.shift_left
    assert f(SI8, 3, 7) == -128 and f(SI8, 3, 8) == 0 and f(SI8, 1, 0) == 1
    assert _alts(f(SI8, 3, -7)) == {"zero (amount read as unsigned, >= width; XLA)": 0, "amount modulo width": 6}


def test_shift_right_logical_limits_and_alternatives():
    """i8 -36 is the pattern 0xDC = 220: >> 3 is 27; by 9 (= 1 modulo 8)
    "modulo width" is 110; by the width 8 (= 0 modulo 8) the pattern itself."""
    f = shift_right_logical.shift_right_logical
    assert f(SI8, -36, 3) == 27 and f(SI8, -36, 7) == 1
    assert _alts(f(SI8, -36, 9)) == {"zero (all bits shifted out; XLA)": 0, "amount modulo width": 110}
    assert _alts(f(SI8, -36, 8)) == {"zero (all bits shifted out; XLA)": 0, "amount modulo width": -36}


def test_shift_right_arithmetic_limits_and_alternatives():
    """The seed's example -36 >> 3 = -5 in i8 (a plain value: no choice);
    by 9: sign fill -1 or -36 >> 1 = -18; ui8 220 (top bit set) >> 3:
    replicate the top bit (0xFB = 251) or zero fill (27); ui8 100 >> 3 = 12."""
    f = shift_right_arithmetic.shift_right_arithmetic
    assert f(SI8, -36, 3) == -5 and not isinstance(f(SI8, -36, 3), ImplDefined)
    assert f(SI8, 36, 3) == 4 and f(UI8, 100, 3) == 12
    assert _alts(f(SI8, -36, 9)) == {"sign fill (all bits shifted out; XLA)": -1, "amount modulo width": -18}
    assert _alts(f(UI8, 220, 3)) == {"replicate top bit (XLA)": 251, "zero fill (unsigned has no sign)": 27}


# -- power: the exact-power rule, against high precision ---------------------------------------------------
def _dyadic_power(x: float, y: float):
    """x^y as a Fraction when it is a dyadic rational, else None — found
    with mpmath at 400 digits and confirmed in exact arithmetic: a dyadic
    value with a denominator up to 2^600 is recovered exactly by rounding
    x^y·2^600, and F^b = x^a (y = a/b) proves it."""
    import mpmath
    from fractions import Fraction
    q = Fraction(y)
    a, b = q.numerator, q.denominator
    with mpmath.workdps(400):
        v = mpmath.power(mpmath.mpf(x), mpmath.mpf(y))
        n = int(mpmath.nint(v * mpmath.mpf(2) ** 600))
    f = Fraction(n, 2 ** 600)
    if f == 0 or b > 64:
        return None
    lhs, rhs = f ** b, Fraction(x) ** abs(a)
    return f if (lhs == rhs if a >= 0 else lhs * rhs == 1) else None


def test_power_exact_rule_finds_every_dyadic_power_on_a_grid():
    """x = c·2^e (c odd: 1, 3, 9, 25, 27, 81, 125), y = a/b (b = 1, 2, 4, 8;
    |a| <= 9): exact_power gives x^y exactly where it is dyadic (the
    boundaries of its rule: perfect b-th powers, b dividing e·a, negative
    exponents of c > 1) and None elsewhere; plus huge denominators (y = 1/3
    as a float) on powers of two, dyadic only when e·y is an integer."""
    from fractions import Fraction
    from shlo_conform.spec.ops import power
    xs = [c * 2.0 ** e for c in (1, 3, 9, 25, 27, 81, 125) for e in (-6, -1, 0, 1, 4)]
    ys = sorted({a / b for b in (1, 2, 4, 8) for a in range(-9, 10) if a})
    found = 0
    for x in xs:
        for y in ys:
            want = _dyadic_power(x, y)
            got = power.exact_power(x, y)
            assert got == want, (x, y, got, want)
            found += want is not None
    assert found > 100
    third = 1 / 3
    assert power.exact_power(8.0, third) is None and _dyadic_power(8.0, third) is None
    assert power.exact_power(2.0 ** 54, 0.5) == Fraction(2 ** 27)
    assert power.exact_power(0.25, 0.5) == Fraction(1, 2)


# -- programs with defaulted attributes left out (Exercise.elided) -------------------------------------------
@pytest.mark.parametrize("mnemonic, omitted", [
    ("reduce_window", ("window_strides", "base_dilations", "window_dilations", "padding")),
    ("select_and_scatter", ("window_strides", "padding")),
])
def test_reduce_window_and_select_and_scatter_elided_programs(mnemonic, omitted):
    """The elided case leaves its attributes out, and the oracle reads the
    left-out attributes as the seed's defaults: the same expectation as the
    program that writes the defaults (ones, zero padding) out."""
    from shlo_conform.generators import emit, expect, suite
    from shlo_conform.generators.skeleton import enumerate_skeletons
    from tests.generators.stand_ins import zeros_expected
    spec = OPS[mnemonic]
    got = suite._elided_cases(spec, enumerate_skeletons(spec), 0, zeros_expected)
    assert got and got[0].note.startswith("defaults elided")
    for c in got:
        attrs = c.mlir.split("}) {", 1)[1].split("} :", 1)[0]
        assert "window_dimensions" in attrs
    first = got[0]
    attrs = first.mlir.split("}) {", 1)[1].split("} :", 1)[0]
    assert not any(name in attrs for name in omitted)
    import re
    rank = len(re.match(r"((?:\d+x)*)", first.mlir.split("%arg0: tensor<", 1)[1]).group(1).split("x")) - 1
    ones = ", ".join(["1"] * rank)
    spelled = {"window_strides": f"window_strides = array<i64: {ones}>",
               "base_dilations": f"base_dilations = array<i64: {ones}>",
               "window_dilations": f"window_dilations = array<i64: {ones}>",
               "padding": f"padding = dense<[{', '.join(['[0, 0]'] * rank)}]> : tensor<{rank}x2xi64>"}
    explicit = first.mlir.replace("}) {" + attrs, "}) {" + ", ".join([attrs] + [spelled[n] for n in omitted]))
    assert explicit != first.mlir
    inputs = [v.array() for v in first.inputs]
    a, b = expect.expected_outputs(first.mlir, inputs), expect.expected_outputs(explicit, inputs)
    assert [e.to_json() for e in a] == [e.to_json() for e in b]
