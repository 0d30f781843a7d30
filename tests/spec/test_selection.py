"""spec/selection.py: JAX's argmax and argmin bodies recognised, their
result over every schedule the seed allows stated in closed form, and the
indices an approximate row may select (oracle/propagation.py).

Independent truth: the bodies are the ones JAX lowers (`jnp.argmax`,
`jnp.argmin`: programs nobody here wrote); the closed form is held against
every full binary tree over the leaves, the body run by the oracle's own
op semantics (spec/schedule.py's enumeration, which knows nothing of the
closed form), and against numpy's argmax (first maximum, first NaN)."""
from __future__ import annotations


import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

from shlo_conform.oracle.program import execute, parse_program
from shlo_conform.spec import schedule, selection
from shlo_conform.suites.compare import compare


def _steps(program):
    for s in program.steps:
        if s.call is not None:
            yield from _steps(s.call)
        yield s


def _body(f, x, inputs: int = 2):
    """The Function of the reduce of `inputs` inputs in the program JAX lowers for f(x)."""
    p = parse_program(jax.jit(f).lower(x).as_text())
    red = [s for s in _steps(p) if s.inst is not None and s.inst.spec.mnemonic == "reduce"
           and len(s.inst.operands["inputs"]) == inputs]
    assert len(red) == 1
    return red[0].inst.regions["body"]


ROW = np.zeros((3, 5), np.float32)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16, np.int32, np.uint8])
def test_jax_argmax_and_argmin_bodies_are_recognised(dtype):
    x = ROW.astype(dtype)
    assert selection.of(_body(lambda v: jnp.argmax(v, axis=1), x)) == selection.Selection("GT")
    assert selection.of(_body(lambda v: jnp.argmin(v, axis=1), x)) == selection.Selection("LT")


def _hand_body(pick_index: str, direction: str = "GT", ctype: str = ", FLOAT", nan: bool = True, et: str = "f32"):
    """An argmax-like body written by hand, its index chosen by `pick_index`,
    its value compares of type `ctype` (", TOTALORDER", or "" for the default),
    with or without the NaN term, on values of type `et`."""
    pv = "%2" if nan else "%0"   # P with or without the NaN term
    text = f"""
func.func @main(%x: tensor<4x{et}>, %i: tensor<4xi32>) -> tensor<i32> {{
  %a = stablehlo.constant dense<{"0" if et.startswith("i") else "0.0"}> : tensor<{et}>
  %b = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.reduce(%x init: %a), (%i init: %b) across dimensions = [0]
      : (tensor<4x{et}>, tensor<4xi32>, tensor<{et}>, tensor<i32>) -> (tensor<{et}>, tensor<i32>)
    reducer(%p: tensor<{et}>, %q: tensor<{et}>) (%j: tensor<i32>, %k: tensor<i32>) {{
      %0 = stablehlo.compare {direction}, %p, %q{ctype} : (tensor<{et}>, tensor<{et}>) -> tensor<i1>
      %1 = stablehlo.compare NE, %p, %p{ctype} : (tensor<{et}>, tensor<{et}>) -> tensor<i1>
      %2 = stablehlo.or %0, %1 : tensor<i1>
      %3 = stablehlo.compare EQ, %p, %q{ctype} : (tensor<{et}>, tensor<{et}>) -> tensor<i1>
      %4 = stablehlo.compare LT, %j, %k, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %5 = stablehlo.and %3, %4 : tensor<i1>
      %6 = stablehlo.or {pv}, %5 : tensor<i1>
      %7 = stablehlo.select {pv}, %p, %q : tensor<i1>, tensor<{et}>
      %8 = stablehlo.select {pick_index}, %j, %k : tensor<i1>, tensor<i32>
      stablehlo.return %7, %8 : tensor<{et}>, tensor<i32>
    }}
  return %r#1 : tensor<i32>
}}"""
    p = parse_program(text)
    return [s for s in p.steps if s.inst.spec.mnemonic == "reduce"][0].inst.regions["body"]


def test_a_body_that_differs_is_not_recognised():
    """The same body written by hand is recognised (operand names and order
    do not matter); with the index picked by P alone (ties go right), or GE
    in place of GT, it is another function and is left to the enumeration."""
    assert selection.of(_hand_body("%6")) == selection.Selection("GT")
    assert selection.of(_hand_body("%6", "LT")) == selection.Selection("LT")
    assert selection.of(_hand_body("%2")) is None
    assert selection.of(_hand_body("%6", "GE")) is None
    assert selection.of(_hand_body("%6", ctype="")) == selection.Selection("GT")       # the default compare_type
    assert selection.of(_hand_body("%6", ctype=", TOTALORDER")) is None               # another order
    # without the NaN term (P = %0 alone) a NaN on the left loses: another function for floats, none for integers
    assert selection.of(_hand_body("%6", nan=False)) is None
    assert selection.of(_hand_body("%6", ctype=", SIGNED", nan=False, et="i32")) == selection.Selection("GT")
    maximum = _body(lambda v: jnp.max(v, axis=1), ROW, inputs=1)
    assert selection.of(maximum) is None and maximum.pairwise == ("maximum",)


SPECIALS = [-np.inf, -1.0, -0.0, 0.0, 1.0, 2.0, np.inf, np.nan]


def _every_tree(body, leaves, memo: dict):
    """{(value bits, index)} over every tree; `memo` keeps the body's answer per pair of operands."""
    def call(*args):
        key = tuple(np.asarray(a).tobytes() for a in args)
        if key not in memo:
            memo[key] = body.call(*args)
        return memo[key]
    got = schedule.schedules(leaves, call, limit=10 ** 6)
    assert got is not None
    return {(np.asarray(v[0]).tobytes(), int(v[1])) for v in got}


@pytest.mark.parametrize("better", ["argmax", "argmin"])
def test_every_schedule_gives_the_closed_form(better):
    """Rows of up to 7 leaves drawn from ±0, ±1, 2, ±inf and NaN (ties,
    signed zeros, NaNs), indices in order or shuffled, with the init
    inserted at any one place or not at all: every tree of every such
    sequence gives the one result `answers` states."""
    f = jnp.argmax if better == "argmax" else jnp.argmin
    body = _body(lambda v: f(v, axis=1), ROW)
    sel = selection.of(body)
    init = np.float32(-np.inf if better == "argmax" else np.inf)
    rng = np.random.default_rng(7)
    checked, memo = 0, {}
    signed_zeros = [[0.0, -0.0], [-0.0, 0.0], [-1.0, 0.0, -0.0], [-0.0, -1.0, 0.0, -0.0], [0.0, 1.0, -0.0, 1.0]]
    for t in range(120):
        n = int(rng.integers(1, 8))
        v = rng.choice(SPECIALS, n).astype(np.float32)
        if t < len(signed_zeros):   # ties of ±0: the value is the last tied leaf's, the index the least
            v = np.array(signed_zeros[t], np.float32)
            v, n = (-v if better == "argmin" else v), len(v)
        idx = rng.permutation(n).astype(np.int32) if rng.random() < 0.3 else np.arange(n, dtype=np.int32)
        value, index, decided = selection.answers(sel, v.astype(np.float64)[None], idx.astype(np.int64)[None],
                                                  None, float(init), True)
        leaves = [(np.float32(a), np.int32(b)) for a, b in zip(v, idx)]
        want = {(np.float32(value[0]).tobytes(), int(index[0]))}
        if not decided[0]:
            continue
        assert _every_tree(body, leaves, memo) == want, (v, idx)
        for at in range(n + 1):   # the init once, anywhere: still the one result
            with_init = leaves[:at] + [(init, np.int32(0))] + leaves[at:]
            assert _every_tree(body, with_init, memo) == want, (v, idx, at)
        checked += 1
    assert checked > 60


@pytest.mark.parametrize("better", ["argmax", "argmin"])
def test_an_init_that_ties_is_decided_only_where_no_insertion_changes_the_result(better):
    """Inits drawn from ±0, ±1, 2, ±inf with an index anywhere from 0 to n:
    where `answers` decides a row whose init ties its best, the trees with
    the init inserted nowhere, once anywhere or twice give that one result;
    and the all-tied row of JAX's mask argmax (init (false, 0)) is decided."""
    f = jnp.argmax if better == "argmax" else jnp.argmin
    body = _body(lambda v: f(v, axis=1), ROW)
    sel = selection.of(body)
    rng = np.random.default_rng(11)
    checked, memo = 0, {}
    for _ in range(200):
        n = int(rng.integers(1, 6))
        v = rng.choice(SPECIALS[:-1], n).astype(np.float32)
        init = (np.float32(rng.choice(v)), np.int32(rng.integers(0, n + 1)))   # a value the row holds: a tie, often
        idx = np.arange(n, dtype=np.int32)
        value, index, decided = selection.answers(sel, v.astype(np.float64)[None], idx.astype(np.int64)[None],
                                                  None, float(init[0]), True, int(init[1]))
        if not decided[0] or value[0] != init[0]:
            continue
        leaves = [(np.float32(a), np.int32(b)) for a, b in zip(v, idx)]
        want = {(np.float32(value[0]).tobytes(), int(index[0]))}
        assert _every_tree(body, leaves, memo) == want, (v, init)
        for at in range(n + 1):
            assert _every_tree(body, leaves[:at] + [init] + leaves[at:], memo) == want, (v, init, at)
        assert _every_tree(body, [init] + leaves + [init], memo) == want, (v, init)
        checked += 1
    assert checked > 20
    mask = selection.Selection("GT")
    value, index, decided = selection.answers(mask, np.zeros((1, 5), np.int64), np.arange(5)[None], None, 0, False, 0)
    assert decided[0] and index[0] == 0 and value[0] == 0
    value, index, decided = selection.answers(mask, np.zeros((1, 5), np.int64), np.arange(3, 8)[None], None, 0, False, 2)
    assert not decided[0]   # inserted, the init's index 2 wins over the leaves' 3: another result


def test_an_init_as_good_as_the_best_is_left_to_the_enumeration():
    sel = selection.Selection("GT")
    value, index, decided = selection.answers(sel, np.array([[-np.inf, -np.inf], [1.0, -np.inf]]),
                                              np.array([[0, 1], [0, 1]]), None, -np.inf, True)
    assert decided.tolist() == [False, True] and index[1] == 0 and value[1] == 1.0


def test_an_argmax_over_a_long_row_is_numpys():
    """1,000 columns (the enumeration stops at 12 leaves: this was "any
    value"), with ties and NaNs: the oracle's answer is numpy's argmax
    (the first maximum, the first NaN), one value per element."""
    rng = np.random.default_rng(3)
    x = rng.integers(-50, 50, (40, 1000)).astype(np.float32)
    x[5, 17] = x[9, 400] = np.nan
    x[11, :] = -0.0
    x[11, 3] = 0.0
    p = parse_program(jax.jit(lambda v: (jnp.argmax(v, axis=1), jnp.argmin(v, axis=1))).lower(x).as_text())
    amax, amin = execute(p, [x])
    for got, want in ((amax, np.argmax(x, axis=1)), (amin, np.argmin(x, axis=1))):
        assert not got.impl_defined and not got.alternatives, got.why
        assert np.array_equal(got.array(), want)


def test_an_approximate_near_tie_offers_both_indices_and_nothing_else():
    """argmax(tanh(x·w)) where columns 0 and 1 of w differ in their last
    bits: the two logits' enclosures overlap, so either index is allowed
    there (any point of the ranges could make it the winner) — a third
    index is not; elsewhere one index.  XLA's own answer passes."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 128)).astype(np.float32)
    w = (rng.standard_normal((128, 8)) * 0.1).astype(np.float32)
    w[:, 1] = np.nextafter(w[:, 0], np.float32(1))
    x[:, :] = np.abs(x)
    w[:, 0] = np.abs(w[:, 0]) + 0.2
    w[:, 1] = np.nextafter(w[:, 0], np.float32(1))
    f = jax.jit(lambda a, b: jnp.argmax(jnp.tanh(a @ b * 0.01), axis=1))
    (idx,) = execute(parse_program(f.lower(x, w).as_text()), [x, w])
    assert idx.impl_defined, idx.why
    offered = {int(a) for alt in idx.alternatives if alt.bits is not None
               for a in np.asarray(alt.bits).view(np.int32)[idx.impl_defined]}
    assert offered == {0, 1}
    assert compare(idx, np.asarray(f(x, w))).ok
    assert compare(idx, np.zeros(64, np.int32)).ok and compare(idx, np.ones(64, np.int32)).ok
    assert not compare(idx, np.full(64, 2, np.int32)).ok


def test_candidates_are_the_leaves_that_reach_the_best_worst_end():
    """By hand: ranges [0, 1], [0.5, 2], [2.5, 3], [-1, 2.5]: the best worst
    end is 2.5, reached by the third and the fourth only."""
    lo, hi = np.array([[0.0, 0.5, 2.5, -1.0]]), np.array([[1.0, 2.0, 3.0, 2.5]])
    may, open_ = selection.candidates(selection.Selection("GT"), lo, hi, -np.inf, True)
    assert may.tolist() == [[False, False, True, True]] and not open_[0]
    may, open_ = selection.candidates(selection.Selection("LT"), lo, hi, np.inf, True)
    assert may.tolist() == [[True, True, False, True]] and not open_[0]
    _, open_ = selection.candidates(selection.Selection("GT"), lo, hi, 2.5, True)   # the init may tie: open
    assert open_[0]
    _, open_ = selection.candidates(selection.Selection("GT"), lo, np.array([[1.0, np.nan, 3, 2.5]]), -np.inf, True)
    assert open_[0]


def test_the_suites_jax_argmax_cases_expect_numpys_indices():
    """suites/core's reduce cases of JAX's own argmax and argmin bodies
    (spec/ops/reduce.py `selection_cases`): the index each expects is
    numpy's argmax / argmin of the row — the first NaN, else the first
    best, ±0 equal — a second implementation, not the closed form."""
    from pathlib import Path
    from shlo_conform.suites.io import load_cases
    root = Path(__file__).resolve().parents[2] / "suites" / "core"
    cases = [c for c in load_cases(root, {"reduce"}) if c.note.startswith(("jnp.argmax as JAX", "jnp.argmin as JAX"))]
    assert len(cases) == 4
    for c in cases:
        values, iota = c.input_arrays()[:2]
        want = (np.argmax if "argmax" in c.note else np.argmin)(values.astype(np.float64), axis=1)
        assert np.array_equal(iota[np.arange(len(want)), want], want)
        got = np.asarray(c.expected[1].bits).view(np.int32).reshape(-1)
        assert got.tolist() == want.tolist(), (c.id, got, want)


@pytest.mark.parametrize("better", ["GT", "LT"])
def test_positions_outside_the_window_never_win(better):
    """`answers` over the positions `valid` marks (reduce_window's padding
    and holes are masked out): a masked leaf holding the best value of the
    row, or ±inf, neither wins nor ties; integer rows likewise."""
    sel = selection.Selection(better)
    big = 100.0 if better == "GT" else -100.0
    s = 1.0 if better == "GT" else -1.0
    V = np.array([[1.0, big, 3.0, 2.0], [np.inf * s, 0.5, 0.5, big], [-5 * s, big, -3 * s, -4 * s]])
    I = np.tile(np.arange(4, dtype=np.int64), (3, 1))
    valid = np.array([[True, False, True, True], [False, True, True, False], [True, False, True, True]])
    value, index, decided = selection.answers(sel, V, I, valid, -np.inf * s, True)
    want_first = (2, 3.0) if better == "GT" else (0, 1.0)
    assert decided.all() and (index[0], value[0]) == want_first and (index[1], value[1]) == (1, 0.5)
    assert (index[2], value[2]) == (2, -3 * s)   # every valid leaf worse than 0: a masked 0 would win
    Vi = np.array([[5, 9, 7]], dtype=np.int64) * (1 if better == "GT" else -1)
    value, index, decided = selection.answers(sel, Vi, I[:1, :3], np.array([[True, False, True]]),
                                              np.iinfo(np.int64).min if better == "GT" else np.iinfo(np.int64).max,
                                              False)
    assert decided.all() and index[0] == 2
