"""What one output value of a suite case cannot show (issue 25): the labels
of implementation-defined alternatives, the strict-weak-order check that
decides how sort's rows are judged, the oracle's own loop limit, the sign
rule of the ULP kind — each held against independent truth (numpy's
two's-complement negation, the definition of a strict weak order written
out as loops, counting, hand-written bit patterns).

tools/mutation/mutation.py runs this file (`-k OP`) on every mutant the suite lets
survive, so test names carry the op's mnemonic.
"""
from __future__ import annotations

import itertools
import math
from types import SimpleNamespace

import numpy as np
import pytest

from shlo_conform.generators import expect
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


def _formal_by_permutations(c):
    """The seed's sentence read for every permutation o of the row: for all
    positions p < q, `compare(o_p, o_q) = compare(o_q, o_p) = false` or
    `compare(o_p, o_q) = true`.  Per position the elements some valid order
    puts there, and the least valid order; None when none is valid."""
    n = len(c)
    valid = [o for o in itertools.permutations(range(n))
             if all(c[o[p]][o[q]] or not c[o[q]][o[p]] for p in range(n) for q in range(p + 1, n))]
    if not valid:
        return None
    return [{o[p] for o in valid} for p in range(n)], list(min(valid))


def test_sort_formal_positions_match_the_seeds_sentence():
    """formal_positions (a walk over subsets) against every permutation:
    all relations on 3 elements, and seeded rows of 4–6 elements compared
    by `le` (reflexive on repeated keys), by `lt` with NaNs, and at random
    (mostly cyclic: no valid order)."""
    rels = [np.array(bits, dtype=bool).reshape(3, 3) for bits in itertools.product([False, True], repeat=9)]
    rng = np.random.default_rng(2025)
    for n in (4, 5, 6):
        for _ in range(40):
            keys = rng.integers(0, 3, n)
            rels.append(keys[:, None] <= keys[None, :])
            x = np.where(rng.random(n) < 0.3, np.nan, rng.integers(0, 4, n).astype(float))
            with np.errstate(invalid="ignore"):
                rels.append(x[:, None] < x[None, :])
            rels.append(rng.random((n, n)) < 0.3)
    seen = {"none": 0, "several": 0}
    for c in rels:
        want = _formal_by_permutations(c.tolist())
        got = sort.formal_positions(c)
        if want is None:
            assert got is None, c.astype(int)
            seen["none"] += 1
            continue
        assert got is not None, c.astype(int)
        allowed, order = got
        assert [set(a) for a in allowed] == want[0] and list(order) == want[1], c.astype(int)
        seen["several"] += any(len(a) > 1 for a in want[0])
    assert seen["none"] >= 30 and seen["several"] >= 200, seen


SORT_PROGRAM = """func.func @main(%k: tensor<{n}x{kt}>, %p: tensor<{n}xi32>) -> (tensor<{n}x{kt}>, tensor<{n}xi32>) {{
  %r:2 = "stablehlo.sort"(%k, %p) ({{
  ^bb0(%a: tensor<{kt}>, %b: tensor<{kt}>, %c: tensor<i32>, %d: tensor<i32>):
    %x = stablehlo.compare {direction}, {lhs}, {rhs}{ctype} : (tensor<{kt}>, tensor<{kt}>) -> tensor<i1>
    stablehlo.return %x : tensor<i1>
  }}) {{dimension = 0 : i64, is_stable = {stable}}} : (tensor<{n}x{kt}>, tensor<{n}xi32>) -> (tensor<{n}x{kt}>, tensor<{n}xi32>)
  func.return %r#0, %r#1 : tensor<{n}x{kt}>, tensor<{n}xi32>
}}"""


def _allowed_per_position(e, n) -> list[set]:
    """Per element (of n), the bit patterns (bytes) an expectation accepts:
    the primary and each alternative at the positions it covers."""
    def rows(bits):
        return [r.tobytes() for r in np.asarray(bits).reshape(n, -1)]
    out = [{b} for b in rows(e.bits)]
    for alt in e.alternatives:
        if alt.bits is not None:
            alt_rows = rows(alt.bits)
            for i in e.impl_defined:
                out[i].add(alt_rows[i])
    return out


@pytest.mark.parametrize("kt, keys, direction, flipped, ctype", [
    ("f32", [1.0, 0.0, 2.0, -0.0, 1.0, 3.0, 2.0, 2.0, -1.5], "LT", False, ""),        # ±0: a tie of two bit patterns
    ("f32", [1.0, 0.0, 2.0, -0.0, 1.0, 3.0, 2.0, 2.0, -1.5], "LT", False, ", TOTALORDER"),   # -0 before +0
    ("i32", [5, -2, 5, 7, 7, 7, 0, -2, 1], "GT", False, ""),
    ("i32", [5, -2, 5, 7, 7, 7, 0, -2, 1], "LT", True, ""),                               # compare(LT, b, a): GT
    ("complex<f32>", [1 + 1j, complex(0.0, 1), complex(-0.0, 1), 1 - 1j, 1 + 1j, 2j, complex(-0.0, 1)],
     "LT", False, ""),
])
@pytest.mark.parametrize("stable", [True, False])
def test_sort_keyed_rows_against_pythons_sorted(kt, keys, direction, flipped, ctype, stable):
    """A comparator that compares one key (the keyed route: rows sorted by
    numpy's argsort of `_sortable` keys, ties as runs) against Python's
    stable `sorted` by hand-written keys: the stable order exactly; unstable,
    at each position, every payload and key whose key ties with the
    primary's — runs of one, two and three, and ties of different bits."""
    n = len(keys)
    et = parse_type(f"tensor<{kt}>").element_type
    karr = np.array(keys, dtype=et.numpy)
    pay = np.arange(10, 10 + n, dtype=np.int32)
    lhs, rhs = ("%b", "%a") if flipped else ("%a", "%b")
    text = SORT_PROGRAM.format(n=n, kt=kt, direction=direction, lhs=lhs, rhs=rhs, ctype=ctype,
                               stable="true" if stable else "false")
    descending = (direction == "GT") != flipped

    def key(i):
        v = keys[i]
        if ctype:   # TOTALORDER on f32 without NaNs: -0 before +0
            return (v, math.copysign(1, v))
        return (v.real, v.imag) if isinstance(v, complex) else v
    order = sorted(range(n), key=key, reverse=False)
    if descending:   # stable descending: equal keys keep input order
        order = sorted(range(n), key=lambda i: tuple(-x for x in key(i)) if isinstance(key(i), tuple) else -key(i))
    ek, ep = expect.expected_outputs(text, [karr, pay])
    assert ep.array().tolist() == [int(pay[i]) for i in order]
    allowed_k, allowed_p = _allowed_per_position(ek, n), _allowed_per_position(ep, n)
    kbits = [r.tobytes() for r in to_bits(karr, et).reshape(n, -1)]
    pbits = [r.tobytes() for r in pay.view(np.uint32).reshape(n, -1)]
    for p, i in enumerate(order):
        tied = [j for j in range(n) if key(j) == key(i)] if not stable else [i]
        assert allowed_p[p] == {pbits[j] for j in tied}, (p, tied)
        assert allowed_k[p] == {kbits[j] for j in tied}, (p, tied)
    assert (not stable and any(len(a) > 1 for a in allowed_p)) or (stable and not ep.impl_defined)


def _sort_instance(n, et, call, stable):
    """A rank-1 sort of n elements of `et` by a Python comparator (the pairwise route)."""
    from shlo_conform.spec.dsl import Function
    from shlo_conform.spec.types import I1
    s = TensorType((), et)
    fn = Function((s, s), (TensorType((), I1),), "custom", lambda a, b: [np.bool_(call(a, b))])
    spec = OPS["sort"]
    t = TensorType((n,), et)
    return spec.instance({"inputs": [t]}, {"dimension": 0, "is_stable": stable}, {"results": [t]},
                         {"comparator": fn})


def test_sort_stable_order_is_pythons_stable_sort():
    """`_stable_order` (a comparator that is a strict weak order, pair by
    pair) against Python's stable `sorted` by key, on rows with repeated keys."""
    rng = np.random.default_rng(187)
    for n in (2, 5, 9, 17):
        for _ in range(30):
            keys = rng.integers(0, 4, n)
            c = keys[:, None] < keys[None, :]
            assert sort._stable_order(c) == sorted(range(n), key=lambda i: keys[i])


def test_sort_formal_condition_is_offered_up_to_max_formal_row():
    """Rows of up to MAX_FORMAL_ROW elements that no strict weak order sorts
    get the formal condition's per-position values; longer rows only "any
    value" (the walk over subsets is 2^n); a row of MAX_FORMAL_ROW with no
    valid order says so."""
    m = sort.MAX_FORMAL_ROW
    assert m == 12   # the documented limit (spec/ops/sort.py)
    for n, formal in ((m, True), (m + 1, False)):
        x = np.array([i % 3 for i in range(n)], np.int32)      # `le`: reflexive on repeated keys
        [out] = sort.arrays(_sort_instance(n, SI32, lambda a, b: a <= b, True), x)
        labels = {lab for labs in out.labels.values() for lab in labs}
        assert any(lab.startswith("formal condition: element #") for lab in labels) == formal, (n, labels)
        assert "any value: the comparator is not a strict weak order on this row" in labels
    x = np.array([i % 3 for i in range(m)], np.int32)           # rock-paper-scissors: no order at all
    [out] = sort.arrays(_sort_instance(m, SI32, lambda a, b: (int(b) - int(a)) % 3 == 1, True), x)
    assert out.labels == {i: ["any value: no order meets the formal condition"] for i in range(m)}


KEYED_PROGRAMS = {
    "lt": "%x = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>",
    "flipped": "%x = stablehlo.compare LT, %b, %a : (tensor<f32>, tensor<f32>) -> tensor<i1>",
    # a key through select and a value captured from the function (min(element, %t))
    "captured": ("%pa = stablehlo.compare GT, %a, %t : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
                 "    %ka = stablehlo.select %pa, %t, %a : tensor<i1>, tensor<f32>\n"
                 "    %pb = stablehlo.compare GT, %b, %t : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
                 "    %kb = stablehlo.select %pb, %t, %b : tensor<i1>, tensor<f32>\n"
                 "    %x = stablehlo.compare LT, %ka, %kb : (tensor<f32>, tensor<f32>) -> tensor<i1>"),
}


@pytest.mark.parametrize("name", sorted(KEYED_PROGRAMS))
def test_sort_comparators_of_one_key_are_recognised(name, monkeypatch):
    """`key_comparison` recognises a comparator that compares one key of each
    element — a plain compare, one with its arguments flipped, a key built
    by select from a value the region captures — and the row sorted by
    those keys is Python's stable sort by the same key; unstable ties are
    labelled "ties reordered"."""
    text = ("func.func @main(%k: tensor<6xf32>, %t: tensor<f32>) -> tensor<6xf32> {\n"
            "  %r = \"stablehlo.sort\"(%k) ({\n"
            "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
            f"    {KEYED_PROGRAMS[name]}\n"
            "    stablehlo.return %x : tensor<i1>\n"
            "  }) {dimension = 0 : i64, is_stable = STABLE} : (tensor<6xf32>) -> tensor<6xf32>\n"
            "  func.return %r : tensor<6xf32>\n}")
    seen = []
    real = sort.key_comparison
    monkeypatch.setattr(sort, "key_comparison", lambda fn: seen.append(real(fn)) or seen[-1])
    x = np.array([3e-30, 2.0, 1e-30, 5.0, 2e-30, 4.0], np.float32)
    t = np.float32(4.0)
    key = {"lt": lambda v: v, "flipped": lambda v: -v, "captured": lambda v: min(v, t)}[name]
    want = sorted(range(6), key=lambda i: key(x[i]))
    [e] = expect.expected_outputs(text.replace("STABLE", "true"), [x, np.asarray(t)])
    assert seen and seen[-1] is not None and seen[-1][1] == ("GT" if name == "flipped" else "LT")
    assert e.array().tolist() == x[want].tolist()
    [e] = expect.expected_outputs(text.replace("STABLE", "false"), [x, np.asarray(t)])
    tied = name == "captured"     # 5.0 and 4.0 both key 4.0
    assert bool(e.impl_defined) == tied
    assert [a.label for a in e.alternatives[:1]] == (["primary value"] if tied else [])
    assert all(a.label.startswith("ties reordered: tied element #") for a in e.alternatives[1:])


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
@pytest.mark.parametrize("mnemonic, omitted, marker, spatial", [
    ("reduce_window", ("window_strides", "base_dilations", "window_dilations", "padding"), "}) {", 0),
    ("select_and_scatter", ("window_strides", "padding"), "}) {", 0),
    ("convolution", ("window_strides", "padding", "lhs_dilation", "rhs_dilation", "window_reversal"),
     '"stablehlo.convolution"(%arg0, %arg1) {', 2),
])
def test_reduce_window_select_and_scatter_convolution_elided_programs(mnemonic, omitted, marker, spatial):
    """The elided case leaves its attributes out, and the oracle reads the
    left-out attributes as the seed's defaults: the same expectation as the
    program that writes the defaults (ones, zero padding, no reversal) out —
    one entry per axis of the input (windowed ops) or per spatial dimension
    (convolution: rank - 2)."""
    import re
    from shlo_conform.generators import expect, suite
    from shlo_conform.generators.skeleton import enumerate_skeletons
    from tests.generators.stand_ins import zeros_expected
    spec = OPS[mnemonic]
    got = suite._elided_cases(spec, enumerate_skeletons(spec), 0, zeros_expected)
    assert len(got) == len(spec.exercise.elided) and got[0].note.startswith("defaults elided")
    first = got[0]
    attrs = first.mlir.split(marker, 1)[1].split("} :", 1)[0]
    assert not any(name in attrs for name in omitted)
    if mnemonic != "convolution":
        assert all("window_dimensions" in c.mlir.split(marker, 1)[1] for c in got)
    n = len(re.match(r"((?:\d+x)*)", first.mlir.split("%arg0: tensor<", 1)[1]).group(1).split("x")) - 1 - spatial
    ones = ", ".join(["1"] * n)
    spelled = {name: f"{name} = array<i64: {ones}>"
               for name in ("window_strides", "base_dilations", "window_dilations", "lhs_dilation", "rhs_dilation")}
    spelled["padding"] = f"padding = dense<[{', '.join(['[0, 0]'] * n)}]> : tensor<{n}x2xi64>"
    spelled["window_reversal"] = f"window_reversal = array<i1: {', '.join(['false'] * n)}>"
    explicit = first.mlir.replace(marker + attrs, marker + ", ".join([spelled[k] for k in omitted] + [attrs]))
    assert explicit != first.mlir
    inputs = [v.array() for v in first.inputs]
    a, b = expect.expected_outputs(first.mlir, inputs), expect.expected_outputs(explicit, inputs)
    assert [e.to_json() for e in a] == [e.to_json() for e in b]
    # and a wrong spelled-out value would show: the defaults are what the expectation rests on
    if mnemonic == "convolution":
        off = explicit.replace(spelled["window_reversal"], spelled["window_reversal"].replace("false", "true", 1))
        assert [e.to_json() for e in expect.expected_outputs(off, inputs)] != [e.to_json() for e in a]


# -- reduce_window: attribute arrays of the wrong length; the whole-array route --------------------------------
from shlo_conform.spec.dsl import Function  # noqa: E402
from shlo_conform.spec.ops import reduce_window  # noqa: E402

RW = OPS["reduce_window"]


def _adder_si32():
    s = TensorType((), SI32)
    return Function((s, s), (s,), "add", lambda a, b: [np.asarray(a + b).astype(np.int32)], ("add",))


def _rw(shape, result, **attrs):
    ops = {"inputs": [TensorType(tuple(shape), SI32)], "init_values": [TensorType((), SI32)]}
    full = {"window_dimensions": None, "window_strides": None, "base_dilations": None, "window_dilations": None,
            "padding": None}
    full.update(attrs)
    return RW.instance(ops, full, {"results": [TensorType(tuple(result), SI32)]}, {"body": _adder_si32()})


@pytest.mark.parametrize("name, short, result, label", [
    ("window_dimensions", (2,), (2, 4), "reduce_window_c4"),     # the missing axis: a window of 1
    ("window_strides", (1,), (2, 2), "reduce_window_c6"),
    ("base_dilations", (1,), (2, 2), "reduce_window_c8"),
    ("window_dilations", (1,), (2, 2), "reduce_window_c10"),
    ("padding", ((0, 0),), (2, 2), "reduce_window_c12"),
])
def test_reduce_window_short_attribute_breaks_its_size_constraint_alone(name, short, result, label):
    """A 3x4 input, window [2, 3], every other attribute written as its
    identity: result 2x2 by hand, valid.  Cut one array attribute to one
    entry: its size constraint (one entry per axis) fails, and no other —
    the absent entry is read as its identity where C15 counts windows
    (window 1, stride 1, dilations 1, no padding), so the result shape
    written by hand for that reading still holds."""
    full = {"window_dimensions": (2, 3), "window_strides": (1, 1), "base_dilations": (1, 1),
            "window_dilations": (1, 1), "padding": ((0, 0), (0, 0))}
    assert RW.violated(_rw((3, 4), (2, 2), **full)) == []
    assert RW.violated(_rw((3, 4), result, **dict(full, **{name: short}))) == [label]


def _windows_by_hand(x, wd, ws, bd, wdil, pad):
    """Sum of every window, by the seed's formulas written with numpy: the
    input spread by base dilation, padded with zeros, windows of `wd`
    elements `wdil` apart, `ws` apart."""
    dil = np.zeros([(n - 1) * b + 1 for n, b in zip(x.shape, bd)], dtype=np.int64)
    dil[tuple(slice(None, None, b) for b in bd)] = x
    padded = np.pad(dil, pad)
    span = [(w - 1) * d + 1 for w, d in zip(wd, wdil)]
    out_shape = [(p - s) // st + 1 for p, s, st in zip(padded.shape, span, ws)]
    out = np.zeros(out_shape, dtype=np.int64)
    for o in np.ndindex(*out_shape):
        sl = tuple(slice(oi * st, oi * st + s, d) for oi, st, s, d in zip(o, ws, span, wdil))
        out[o] = padded[sl].sum()
    return out


def test_reduce_window_whole_array_route_serves_nonempty_windows(monkeypatch):
    """With a neutral init (0 for add), every window at once (`_whole`, the
    route that makes model-sized pooling affordable) serves a strided,
    dilated, padded window and agrees with the sums written by hand; a
    result with no element is left to the per-element route (None)."""
    served = []
    real = reduce_window._whole
    monkeypatch.setattr(reduce_window, "_whole", lambda *a: served.append(real(*a)) or served[-1])
    x = np.arange(1, 21, dtype=np.int32).reshape(4, 5)
    attrs = {"window_dimensions": (2, 3), "window_strides": (2, 1), "base_dilations": (1, 2),
             "window_dilations": (1, 2), "padding": ((1, 0), (0, 2))}
    want = _windows_by_hand(x, (2, 3), (2, 1), (1, 2), (1, 2), ((1, 0), (0, 2)))
    [got] = reduce_window.arrays(_rw(x.shape, want.shape, **attrs), x, np.int32(0))
    assert served and served[-1] is not None
    assert np.asarray(got).astype(np.int64).tolist() == want.tolist()
    served.clear()
    empty = np.zeros((0, 5), np.int32)
    [got] = reduce_window.arrays(_rw((0, 5), (0, 5), window_dimensions=(1, 1)), empty, np.int32(0))
    assert np.asarray(got).shape == (0, 5) and served == [None]
    served.clear()     # windows of padding only: no input element to gather
    [got] = reduce_window.arrays(_rw((0, 5), (2, 5), window_dimensions=(1, 1), padding=((1, 1), (0, 0))), empty,
                                 np.int32(0))
    assert np.asarray(got).tolist() == [[0] * 5] * 2 and served == [None]


RW_F32 = """func.func @main(%x: tensor<6x7xf32>, %z: tensor<f32>) -> tensor<5x3xf32> {
  %r = "stablehlo.reduce_window"(%x, %z) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 1, 2>} : (tensor<6x7xf32>, tensor<f32>) -> tensor<5x3xf32>
  func.return %r : tensor<5x3xf32>
}"""


def _reduce_text(shape: str, et: str, out: str, body: str, dims: str) -> str:
    """reduce over `dims` of a tensor<shape x et> with a one-op `body`."""
    x, r, s = f"tensor<{shape}x{et}>", f"tensor<{out}x{et}>", f"tensor<{et}>"
    return (f'func.func @main(%x: {x}, %z: {s}) -> {r} {{\n  %r = "stablehlo.reduce"(%x, %z) ({{\n'
            f"  ^bb0(%a: {s}, %b: {s}):\n    %s = stablehlo.{body} %a, %b : {s}\n    stablehlo.return %s : {s}\n"
            f"  }}) {{dimensions = array<i64: {dims}>}} : ({x}, {s}) -> {r}\n  func.return %r : {r}\n}}")


RW_I1 = """func.func @main(%x: tensor<5xi1>, %z: tensor<i1>) -> tensor<4xi1> {
  %r = "stablehlo.reduce_window"(%x, %z) ({
  ^bb0(%a: tensor<i1>, %b: tensor<i1>):
    %s = stablehlo.or %a, %b : tensor<i1>
    stablehlo.return %s : tensor<i1>
  }) {window_dimensions = array<i64: 2>} : (tensor<5xi1>, tensor<i1>) -> tensor<4xi1>
  func.return %r : tensor<4xi1>
}"""


def test_reduce_and_reduce_window_complex_and_boolean_reductions_go_element_by_element(monkeypatch):
    """What the whole-array route serves is decided in one place,
    spec/schedule.py's `reduce_arrays` (float add, maximum, minimum; integer
    monoids): asked for a complex sum or a boolean and/or it declines, and
    reduce and reduce_window answer element by element — the values written
    by hand (exact sums of small complex numbers; and, or of booleans)."""
    from shlo_conform.spec import schedule
    from shlo_conform.spec.ops import reduce as reduce_op
    asked = []
    real = schedule.reduce_arrays

    def spy(rows, valid, inits, body, types, leaves_of, **more):
        asked.append((tuple(t.mlir for t in types), real(rows, valid, inits, body, types, leaves_of, **more)))
        return asked[-1][1]
    monkeypatch.setattr(reduce_op, "reduce_arrays", spy)
    monkeypatch.setattr(reduce_window, "reduce_arrays", spy)
    x = np.array([[1 + 2j, 3 - 1j, -2 + 0.5j], [0.25j, 4, -1 - 1j]], np.complex64)
    [got] = expect.expected_outputs(_reduce_text("2x3", "complex<f32>", "2", "add", "1"), [x, np.complex64(0)])
    assert got.array().tolist() == [2 + 1.5j, 3 - 0.75j]
    b = np.array([[True, True, False], [True, False, False]])
    for mnemonic, want in (("and", [True, False, False]), ("or", [True, True, False])):
        [got] = expect.expected_outputs(_reduce_text("2x3", "i1", "3", mnemonic, "0"), [b, np.bool_(mnemonic == "and")])
        assert got.array().tolist() == want
    [got] = expect.expected_outputs(RW_I1, [np.array([False, True, False, False, True]), np.bool_(False)])
    assert got.array().tolist() == [True, True, False, True]
    assert [t for t, _ in asked] == [("complex<f32>",), ("i1",), ("i1",), ("i1",)]
    assert all(answer is None for _, answer in asked)


def test_reduce_window_whole_array_route_in_pieces_states_what_one_piece_does(monkeypatch):
    """Past WHOLE_CHUNK leaves (2^22: model-sized pooling) the windows are
    gathered in pieces and their records combined; with the limit set to a
    few leaves, a sum of f32 windows (rounded sums: each element bounded,
    some left to the per-element answer) states exactly what the one-piece
    route states, and an i32 sum is the hand-computed one.  The combined
    record's per-element route (what `objects()` and any undecided element
    read: the piece an element lies in, its place there) answers every
    element as the one-piece record does."""
    from shlo_conform.oracle.program import parse_program
    rng = np.random.default_rng(272)
    x = (rng.standard_normal((6, 7)) * 10.0 ** rng.integers(-3, 4, (6, 7))).astype(np.float32)
    inputs = [x, np.float32(0.0)]
    inst = parse_program(RW_F32).steps[0].inst
    whole = [e.to_json() for e in expect.expected_outputs(RW_F32, inputs)]
    one = [repr(a) for a in reduce_window.arrays(inst, *inputs)[0].objects().ravel()]
    monkeypatch.setattr(reduce_window, "WHOLE_CHUNK", 7)
    pieces = [e.to_json() for e in expect.expected_outputs(RW_F32, inputs)]
    assert pieces == whole
    combined = reduce_window.arrays(inst, *inputs)[0]
    assert [repr(a) for a in combined.objects().ravel()] == one
    xi = np.arange(1, 43, dtype=np.int32).reshape(6, 7)
    want = _windows_by_hand(xi, (2, 3), (1, 2), (1, 1), (1, 1), ((0, 0), (0, 0)))
    got = expect.expected_outputs(RW_F32.replace("f32", "i32"), [xi, np.int32(0)])
    assert got[0].array().astype(np.int64).tolist() == want.tolist()


# -- reduce_precision against a second implementation ----------------------------------------------------
def _reduce_precision_bits(x: np.ndarray, e_bits: int, m_bits: int) -> np.ndarray:
    """XLA's ReducePrecision as its bit arithmetic does it (the algorithm of
    xla/service/elemental_ir_emitter.cc, written again here in numpy on the
    operand's bit pattern): round the mantissa field to m_bits, ties to the
    even *pattern*; then exponents above the reduced range → ±inf, at or
    below its bottom → ±0; NaN kept."""
    import ml_dtypes
    fi = ml_dtypes.finfo(x.dtype)
    nbits, src_m = x.dtype.itemsize * 8, int(fi.nmant)
    src_e = nbits - 1 - src_m
    u = np.dtype(f"uint{nbits}")
    v = x.view(u).astype(object)          # Python ints: no overflow in the sums
    one = 1
    if m_bits < src_m:
        shift = src_m - m_bits
        last = one << shift
        bias = (last >> 1) - 1
        v = [(b + ((b & last) >> shift) + bias) & ~(last - 1) for b in v]
    if e_bits < src_e:
        exp_mask = ((one << src_e) - 1) << src_m
        src_bias, red_bias = (one << (src_e - 1)) - 1, (one << (e_bits - 1)) - 1
        hi, lo = (src_bias + red_bias) << src_m, (src_bias - red_bias) << src_m
        sign = one << (nbits - 1)
        v = [(b & sign) | exp_mask if (b & exp_mask) > hi else (b & sign if (b & exp_mask) <= lo else b) for b in v]
    out = np.array([b & ((one << nbits) - 1) for b in v], dtype=u).view(x.dtype)
    return np.where(np.isnan(x), x, out)


def _rp_values(name: str, rng) -> np.ndarray:
    from shlo_conform.spec.types import element_type, from_bits
    et = element_type(name)
    if et.bits <= 16:   # every subnormal and 3000 other patterns
        every = np.arange(1 << et.bits, dtype=np.uint64)
        sub = every[(every & np.uint64(et.format.exponent_mask)) == 0]
        return from_bits(np.concatenate([sub, rng.choice(every, 3000)]), et)
    bits = rng.integers(0, 1 << et.bits, 1500, dtype=np.uint64)
    # and the binades at the bottom of each reduced range, where rounding and flushing meet
    edges = np.ldexp(1.0 + rng.random(1500), rng.integers(-130, 128, 1500))
    return np.concatenate([from_bits(bits, et), edges.astype(et.numpy)])


@pytest.mark.parametrize("name", ["f16", "bf16", "f32"])
def test_reduce_precision_contains_the_bit_level_result(name):
    """reduce_precision's fn against the bit arithmetic above: every element
    of f16 and bf16 (every subnormal, sampled others) and sampled f32, for exponent bits
    1..8 and mantissa bits 0..10 — the bit-level result is the answer, or
    one of the declared alternatives where the seed reads two ways (ties of
    a one-bit significand, operand subnormals).  Where no alternative is
    declared, the seed's own steps say the same as the bits.  (It once
    rounded values below the reduced range at a subnormal-like spacing and
    gave the smallest normal where the seed's steps flush to zero.)"""
    from fractions import Fraction
    from shlo_conform.spec.types import element_type
    et = element_type(name)
    rng = np.random.default_rng(3)
    x = _rp_values(name, rng)
    t = TensorType((), et)
    spec = OPS["reduce_precision"]
    configs = [(1, 0), (2, 1), (3, 0), (4, 2), (5, 1), (5, 10), (6, 0), (8, 3), (8, 7), (3, 5)]
    for e_bits, m_bits in configs:
        inst = spec.instance({"operand": t}, {"exponent_bits": e_bits, "mantissa_bits": m_bits}, {"output": t})
        with np.errstate(invalid="ignore"):
            want = _reduce_precision_bits(x, e_bits, m_bits).astype(np.float64)
            wide = x.astype(np.float64)
        for xi, wi in zip(wide.tolist(), want.tolist()):
            got = spec.semantics.fn(inst, xi)
            opts = list(got.alternatives.values()) if isinstance(got, ImplDefined) else [got]

            def same(o):
                o = float(o) if not isinstance(o, Fraction) else o
                if isinstance(o, float) and (math.isnan(o) or math.isinf(o) or o == 0):
                    return (math.isnan(o) and math.isnan(wi)) or (o == wi and math.copysign(1, o) == math.copysign(1, wi))
                return not (math.isnan(wi) or math.isinf(wi)) and wi != 0 and Fraction(o) == Fraction(wi)
            assert any(same(o) for o in opts), (name, e_bits, m_bits, xi.hex(), wi, got)


def test_reduce_precision_by_hand():
    """The seed's steps worked by hand on f32: 1.5·2^-15 with 5 exponent bits
    (normal range 2^-14 .. 2^15) and 1 mantissa bit is already 1.5 at its own
    binade, then its exponent -15 does not fit: zero.  1.75·2^-15 rounds to
    2·2^-15 = 2^-14 (ties to even at its binade) and fits.  3·2^15 with 5
    exponent bits: exponent 16 overflows to inf."""
    from fractions import Fraction
    spec = OPS["reduce_precision"]
    t = TensorType((), E_F32)

    def rp(x, e, m):
        return spec.semantics.fn(spec.instance({"operand": t}, {"exponent_bits": e, "mantissa_bits": m},
                                               {"output": t}), x)
    z = rp(1.5 * 2.0 ** -15, 5, 1)
    assert z == 0 and math.copysign(1, z) == 1
    z = rp(-1.5 * 2.0 ** -15, 5, 1)
    assert z == 0 and math.copysign(1, z) == -1
    assert rp(1.75 * 2.0 ** -15, 5, 1) == Fraction(1, 2 ** 14)
    assert rp(3.0 * 2.0 ** 15, 5, 1) == math.inf
    assert rp(1.25, 8, 1) == 1        # a tie at two significant bits: the even one, 1.0
    assert rp(1.75, 8, 1) == 2        # ... and 2.0


# -- counts past CPython's small integers ------------------------------------------------------------------
def _big_instances():
    """Valid instances whose ranks, counts or dimensions exceed 256: CPython
    shares the int objects -5..256, so a constraint that compared two
    counts with `is` instead of `==` would still hold on every smaller
    program.  (Each is valid by the seed's constraints read by hand.)"""
    from shlo_conform.spec.types import TupleType
    n = 300
    f32, i32 = E_F32, SI32
    big = TensorType((1,) * n, f32)
    scalar_i = TensorType((), i32)
    yield "broadcast_in_dim", OPS["broadcast_in_dim"].instance(
        {"operand": big}, {"broadcast_dimensions": list(range(n))}, {"result": big})
    yield "dynamic_slice", OPS["dynamic_slice"].instance(
        {"operand": big, "start_indices": [scalar_i] * n}, {"slice_sizes": [1] * n}, {"result": big})
    yield "dot_general", OPS["dot_general"].instance(
        {"lhs": big, "rhs": big},
        {"lhs_batching_dimensions": list(range(n)), "rhs_batching_dimensions": list(range(n)),
         "lhs_contracting_dimensions": [], "rhs_contracting_dimensions": []}, {"result": big})
    members = [TensorType((2,), f32)] * n
    yield "tuple", OPS["tuple"].instance({"val": members}, {}, {"result": TupleType(tuple(members))})
    x, feat = TensorType((2, n), f32), TensorType((n,), f32)
    yield "batch_norm_grad", OPS["batch_norm_grad"].instance(
        {"operand": x, "scale": feat, "mean": feat, "variance": feat, "grad_output": x},
        {"epsilon": 0.5, "feature_index": 1}, {"grad_operand": x, "grad_scale": feat, "grad_offset": feat})


@pytest.mark.parametrize("op_name, inst", list(_big_instances()), ids=lambda v: v if isinstance(v, str) else "")
def test_constraints_hold_past_small_integers(op_name, inst):
    assert OPS[op_name].violated(inst) == [], op_name


# -- cholesky's and triangular_solve's criterion parts, by hand ---------------------------------------------
def test_cholesky_gamma_enclosure_and_norms_by_hand():
    """Higham's γ(k) = k·u/(1 − k·u) (+inf from k·u = 1), the enclosure of a
    quotient whose parts carry relative error g, and ‖M‖₁, on numbers
    worked by hand."""
    from fractions import Fraction
    from shlo_conform.spec.ops.cholesky import enclosure, gamma, one_norm
    u = 2.0 ** -24
    exact = Fraction(2 * u) / (1 - Fraction(2 * u))
    assert abs(Fraction(gamma(2, u)) - exact) <= exact * Fraction(1, 2 ** 50)   # two float roundings
    assert gamma(10, 0.1) == math.inf and gamma(11, 0.1) == math.inf
    value, lo, hi = enclosure(1.0, 0.5, 2.0, 0.125)
    assert float(value) == 0.5
    assert float(lo) == 0.5 * 0.875 / (2 * 1.125) and float(hi) == 1.5 * 1.125 / (2 * 0.875)
    value, lo, hi = enclosure([0.0, 3.0], [0.0, 1.0], [0.0, 0.0], 0.0)   # 0/0 is 0, x/0 is +inf
    assert value.tolist() == [0.0, math.inf] and lo.tolist() == [0.0, math.inf] and hi.tolist() == [0.0, math.inf]
    m = np.array([[[1.0, -4.0], [2.0, 1.0]], [[0.0, 0.0], [-3.0, 0.5]]])
    assert one_norm(m).tolist() == [5.0, 3.0]
    assert one_norm(np.zeros((2, 3, 0))).tolist() == [0.0, 0.0] and one_norm(np.zeros((2, 0, 3))).tolist() == [0.0, 0.0]


def test_cholesky_factor_by_hand():
    """The factor of [[4, 2], [2, 5]] is [[2, 0], [1, 2]]; of a batch holding
    a matrix whose second leading minor is 0, the order 2 is reported for it
    alone; a batch of 0×0 matrices has a (batch-shaped) report of zeros."""
    from shlo_conform.spec.ops.cholesky import factor
    L, failed = factor(np.array([[[4.0, 2.0], [2.0, 5.0]], [[1.0, 1.0], [1.0, 1.0]]]))
    assert L[0].tolist() == [[2.0, 0.0], [1.0, 2.0]] and failed.tolist() == [0, 2]
    L, failed = factor(np.zeros((3, 0, 0)))
    assert L.shape == (3, 0, 0) and failed.shape == (3,) and not failed.any()


def _trsv(left_side=True, lower=True, unit_diagonal=False, transpose_a="NO_TRANSPOSE", a_shape=(2, 2), b_shape=(2, 1)):
    from shlo_conform.spec.types import TensorType
    spec = OPS["triangular_solve"]
    a, b = TensorType(a_shape, E_F32), TensorType(b_shape, E_F32)
    return spec.instance({"a": a, "b": b}, {"left_side": left_side, "lower": lower, "unit_diagonal": unit_diagonal,
                                            "transpose_a": transpose_a}, {"result": b})


def test_triangular_solve_op_a_and_criterion_by_hand():
    """op(A) with a unit diagonal reads ones there whatever A holds; the
    criterion's ratio ‖T·x − b‖₁ / (n·‖T‖₁·‖x‖₁·ε) for T = [[2, 0], [1, 1]],
    b = (2, 3) and x = (1 + δ, 2): residual 3δ, so the ratio is
    3δ / (2·3·(3 + δ)·ε) — and exactly 0 at the solution (1, 2)."""
    from shlo_conform.spec.ops.triangular_solve import criterion, op_a
    T, lower = op_a(_trsv(unit_diagonal=True), np.array([[7.0, 9.0], [1.0, 5.0]]))
    assert T.tolist() == [[1.0, 0.0], [1.0, 1.0]] and lower
    a, b = np.array([[2.0, 0.0], [1.0, 1.0]], np.float32), np.array([[2.0], [3.0]], np.float32)
    assert criterion(_trsv(), (a, b), np.array([[1.0], [2.0]], np.float32)).value == 0
    d = 2.0 ** -10
    got = criterion(_trsv(), (a, b), np.array([[1.0 + d], [2.0]], np.float32))
    want = 3 * d / (2 * 3 * (3 + d) * 2.0 ** -24)
    assert abs(got.value - want) <= 1e-9 * want and not got.ok


def test_triangular_solve_undefined_reads_b_of_one_column():
    """A NaN in the read triangle makes the system undefined whatever b's
    shape — one column included; an empty b has nothing to state."""
    from shlo_conform.spec.ops.triangular_solve import undefined
    a = np.array([[math.nan, 0.0], [1.0, 1.0]])
    assert "NaN" in undefined(_trsv(), a, np.ones((2, 1)))
    assert undefined(_trsv(b_shape=(2, 0)), a, np.ones((2, 0))) is None


def test_triangular_solve_c3_reads_each_batch_dimension():
    """C3's batch dims: equal, not merely ordered — a's batch dim above b's
    breaks it alone; below rank 2 the rule is C2's (C3 holds)."""
    spec = OPS["triangular_solve"]
    assert spec.violated(_trsv(a_shape=(3, 2, 2), b_shape=(2, 2, 1))) == ["triangular_solve_c3"]
    assert spec.violated(_trsv(a_shape=(2, 2, 2), b_shape=(3, 2, 1))) == ["triangular_solve_c3"]
    from shlo_conform.spec.ops.triangular_solve import triangular_solve_c3
    assert triangular_solve_c3(_trsv(a_shape=(2,), b_shape=(2, 1))) is True


def test_batch_norm_inference_epsilon_is_written_with_a_point_and_read_back():
    """F32Attr writes `repr` of the f32 value: a repr without a point is one
    digit and an exponent (`de±k`, as float repr writes it), and no such
    float is an f32 value, so every finite epsilon is written as MLIR's
    float literal wants it; hex patterns with the sign bit set (-inf) read
    back."""
    from shlo_conform.spec.ops.batch_norm_inference import F32Attr
    single = [float(f"{d}e{k}") for d in range(1, 10) for k in range(-50, 40)]
    assert not [v for v in single if v != 0 and math.isfinite(v) and float(np.float32(v)) == v
                and "." not in repr(v)]
    attr = F32Attr()
    for v in (2.0 ** -149, 1e-5, 1.0, 3.0e10, float(np.finfo(np.float32).max), -0.0):
        text = attr.to_mlir(v)
        assert "." in text.split(":")[0] and attr.from_mlir(text) == float(np.float32(v))
    assert attr.from_mlir("0xFF800000 : f32") == -math.inf and attr.from_mlir("0x7F800000 : f32") == math.inf
    with pytest.raises(ValueError):
        attr.from_mlir("0x100000000 : f32")


def test_infeed_string_attribute_reads_back_and_refuses_what_is_no_literal():
    """infeed_config / outfeed_config: a string literal, escapes and all, reads
    back as written (every string of 1–4 characters over a, \\ and "), and
    text that is not one literal — unquoted, one quote, a quote at one end
    only — is refused."""
    from shlo_conform.spec.ops.infeed import StrAttr
    a = StrAttr()
    for n in range(1, 5):
        for t in itertools.product(["a", "\\", '"'], repeat=n):
            s = "".join(t)
            assert a.from_mlir(a.to_mlir(s)) == s, s
    assert a.from_mlir('""') == "" and a.from_mlir(' "cfg" ') == "cfg"
    for bad in ('cfg', '"', '"cfg', 'cfg"', "'cfg'"):
        with pytest.raises(ValueError):
            a.from_mlir(bad)


def test_collective_permute_names_what_is_wrong_with_its_pairs():
    """An id outside the grid is named with the grid's range (0..3 on four
    replicas); an id named twice as a source or as a target is named."""
    from shlo_conform.spec.grid import Grid
    from shlo_conform.spec.ops.collective_permute import process_groups
    spec = OPS["collective_permute"]
    t = TensorType((2,), E_F32)

    def inst(pairs):
        return spec.instance({"operand": t}, {"source_target_pairs": pairs, "channel_id": 0}, {"result": t})
    with pytest.raises(ValueError, match=r"id 4 is outside 0\.\.3"):
        process_groups(inst([[0, 1], [1, 4]]), Grid(4, 1))
    with pytest.raises(ValueError, match="source 0 appears twice"):
        process_groups(inst([[0, 1], [0, 2]]), Grid(4, 1))
    with pytest.raises(ValueError, match="target 1 appears twice"):
        process_groups(inst([[0, 1], [2, 1]]), Grid(4, 1))
    process_groups(inst([[0, 1], [1, 2], [2, 0]]), Grid(4, 1))   # a cycle on three of four: fine


def test_case_c4_with_no_branch_holds_only_without_results():
    """case's C4 with no branch (C1 broken): no `branches[0]`, no outputs —
    only an op of no results meets it (spec/ops/case.py)."""
    from shlo_conform.spec.ops.case import case_c4
    t = TensorType((2,), E_F32)
    assert case_c4(SimpleNamespace(branches=[], results={"results": []})) is True
    assert not case_c4(SimpleNamespace(branches=[], results={"results": [t]}))


def test_if_c1_reads_both_branches():
    """if's C1: `true_branch` and `false_branch` have 0 inputs — either one
    with an input breaks it."""
    from shlo_conform.spec.ops import OPS as _ops
    if_c1 = _ops["if"].constraints[0]
    t = TensorType((), E_F32)
    branch = lambda n: SimpleNamespace(inputs=[t] * n, outputs=[t])  # noqa: E731
    assert if_c1(SimpleNamespace(true_branch=branch(0), false_branch=branch(0)))
    assert not if_c1(SimpleNamespace(true_branch=branch(0), false_branch=branch(1)))
    assert not if_c1(SimpleNamespace(true_branch=branch(1), false_branch=branch(0)))


def test_custom_call_of_an_unknown_target_states_nothing_and_says_why():
    """A call of a target outside the registry (a vendor kernel): with the
    program's result types its types are those (nothing inferred); without
    them, the oracle's refusal names the target; every result element is
    implementation-defined with nothing known, and the reason is the
    registry's words — including a result that is a token (no elements)."""
    from shlo_conform.spec.custom_targets import unknown_target
    from shlo_conform.spec.ops import custom_call
    from shlo_conform.spec.types import TokenType
    spec = OPS["custom_call"]
    t, r = TensorType((2, 3), E_F32), TensorType((4,), E_F32)
    attrs = {"call_target_name": "vendor.fused_kernel", "has_side_effect": False}
    assert custom_call.infer(spec.instance({"inputs": [t]}, attrs, {"results": [t, r]})) == {}
    with pytest.raises(ValueError, match="vendor.fused_kernel"):
        custom_call.infer(spec.instance({"inputs": [t]}, attrs, {}))
    out = custom_call.answers(spec.instance({"inputs": [t]}, attrs, {"results": [r, TokenType()]}),
                              np.zeros((2, 3), np.float32))
    assert [a.shape for a in out] == [(4,), (0,)]   # a token result once raised (TokenType has no shape)
    assert all(isinstance(e, ImplDefined) and not e.alternatives and e.why == unknown_target("vendor.fused_kernel")
               for e in out[0].ravel())
    assert out[1].size == 0


def test_all_reduce_c6_counts_and_ranks():
    """all_reduce's C6, shape(results...) = shape(operands...): a result
    more or fewer than the operands, or one of another rank (lower or
    higher, dims otherwise alike), breaks it."""
    from shlo_conform.spec.ops.all_reduce import all_reduce_c6
    a, b = TensorType((2, 3), E_F32), TensorType((4,), E_F32)

    def op(ops, res):
        return SimpleNamespace(operands={"operands": ops}, results={"results": res})
    assert all_reduce_c6(op([a, b], [a, b]))
    assert not all_reduce_c6(op([a], [a, b])) and not all_reduce_c6(op([a, b], [a]))
    assert not all_reduce_c6(op([a], [TensorType((2,), E_F32)]))          # rank below: dims alike as far as they go
    assert not all_reduce_c6(op([TensorType((2,), E_F32)], [a]))          # rank above


def test_reduce_scatter_c7_reads_the_whole_signature():
    """reduce_scatter's C7: `computation` is (tensor<E>, tensor<E>) ->
    (tensor<E>) — no output, two outputs or another E break it."""
    from shlo_conform.spec.ops.reduce_scatter import reduce_scatter_c7
    e = TensorType((), E_F32)

    def op(ins, outs):
        return SimpleNamespace(operand=TensorType((4,), E_F32), computation=SimpleNamespace(inputs=ins, outputs=outs))
    assert reduce_scatter_c7(op([e, e], [e]))
    assert not reduce_scatter_c7(op([e, e], []))
    assert not reduce_scatter_c7(op([e, e], [e, e]))
    assert not reduce_scatter_c7(op([e, e], [TensorType((), SI32)]))


def test_fft_states_its_working_memory():
    """fft's working memory beyond operands and results, as the module
    states it (per result element 256 bytes up to 2^4 points, growing with
    the transform's length to 1,640 from 2^8 points; 128 an operand
    element): what the oracle's cost estimate adds before refusing a big
    program (tests/oracle/test_cost_measured.py holds it to the measured)."""
    from shlo_conform.spec.ops.fft import _working
    op = SimpleNamespace(operand=TensorType((4, 8), C64), result=TensorType((4, 5), C64), fft_length=(8,))
    assert _working(op) == 256 * 20 + 128 * 32
    op = SimpleNamespace(operand=TensorType((2, 64), C64), result=TensorType((2, 64), C64), fft_length=(64,))
    assert _working(op) == (330 * 6 - 1000) * 128 + 128 * 128
    op = SimpleNamespace(operand=TensorType((1024,), C64), result=TensorType((1024,), C64), fft_length=(1024,))
    assert _working(op) == (330 * 8 - 1000) * 1024 + 128 * 1024


def test_compare_lexicographic_by_hand():
    """Complex compare: (real, imag) pairs in lexicographic order, EQ and NE
    on both parts (finite pairs: Python's tuple order is the answer)."""
    from shlo_conform.spec.ops.compare import lexicographic
    vals = [complex(r, i) for r in (-1.0, 0.0, 2.0) for i in (-3.0, 0.0, 1.0)]
    ops = {"EQ": lambda x, y: x == y, "NE": lambda x, y: x != y, "LT": lambda x, y: x < y,
           "LE": lambda x, y: x <= y, "GT": lambda x, y: x > y, "GE": lambda x, y: x >= y}
    for d, f in ops.items():
        for a, b in itertools.product(vals, vals):
            assert lexicographic(d, a, b) == f((a.real, a.imag), (b.real, b.imag)), (d, a, b)


def test_convolution_states_its_working_memory():
    """convolution's working memory as the module states it, by hand for a
    2-D convolution: batch 2, output 5×7 positions, kernel 3×3 taps, 4 input
    features → a patch of 2·35·9·4 float64s, three at a time, plus 9 bytes a
    (position, tap) pair of index and mask."""
    from shlo_conform.spec.ops.convolution import working_bytes
    op = SimpleNamespace(result=TensorType((2, 5, 7, 6), E_F32), rhs=TensorType((3, 3, 4, 6), E_F32),
                         output_batch_dimension=0, output_spatial_dimensions=[1, 2], output_feature_dimension=3,
                         kernel_spatial_dimensions=[0, 1], kernel_input_feature_dimension=2,
                         kernel_output_feature_dimension=3)
    assert working_bytes(op) == 3 * 8 * (2 * 35 * 9 * 4) + 9 * 35 * 9


def test_select_and_scatter_missing_window_entries_count_as_one():
    """num_windows reads an entry that a too-short `window_dimensions` lacks
    as its identity, 1 (module docstring: so the program breaks only the
    length rule): 5 windows of size 1 over an axis of 5."""
    from shlo_conform.spec.ops.select_and_scatter import num_windows
    op = SimpleNamespace(operand=TensorType((4, 5), E_F32), window_dimensions=[2], window_strides=None, padding=None)
    assert num_windows(op, 0) == 3 and num_windows(op, 1) == 5


def test_dot_general_result_type_is_none_past_an_operands_rank():
    """dot_general's result type is None where the dimension lists name more
    axes than an operand has (C4–C9 broken), and infer says so in words."""
    from shlo_conform.spec.ops.dot_general import infer, result_type
    lhs, rhs = TensorType((2, 3), E_F32), TensorType((3, 4), E_F32)

    def op(lb, lc, rb, rc):
        return SimpleNamespace(lhs=lhs, rhs=rhs, lhs_batching_dimensions=lb, lhs_contracting_dimensions=lc,
                               rhs_batching_dimensions=rb, rhs_contracting_dimensions=rc)
    assert result_type(op([], [1], [], [0])).shape == (2, 4)
    assert result_type(op([0, 1], [1], [], [0])) is None
    assert result_type(op([], [1], [0, 1], [0])) is None
    with pytest.raises(ValueError, match="more axes"):
        infer(op([], [0, 1, 1], [], [0]))
