"""Whole-array claims through the oracle's element-wise routes (issue 21):
compare's `Generic.whole` (spec/ops/compare.py) and maximum/minimum's zero
results.  Each expectation the route states equals, JSON for JSON, the one
the op's fn states alone (the same op with its claim taken away): bits,
implementation-defined elements and their alternatives, notes.

compare's claim is served by `fast.whole`, which the whole-array route of
oracle/elementwise.py (`_run_generic`) calls before its other routes.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from shlo_conform.oracle import elementwise as ew
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.types import I1, TensorType, element_type, from_bits

pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning")


def _counting(sem):
    """sem with a fn that counts its calls (the route leaves fn the elements it declines)."""
    calls = []

    def fn(inst, *xs):
        calls.append(xs)
        return sem.fn(inst, *xs)
    return dataclasses.replace(sem, fn=fn), calls


def _compare_inst(et, direction, compare_type, shape):
    t = TensorType(shape, et)
    return OPS["compare"].instance({"lhs": t, "rhs": t},
                                   {"comparison_direction": direction, "compare_type": compare_type},
                                   {"result": TensorType(shape, I1)})


def _operands(et, rng, n):
    """Random bit patterns with specials mixed in (both zeros, NaNs, ±inf)."""
    top = 1 << min(et.bits, 63)
    bits = [rng.integers(0, top, n, dtype=np.uint64) for _ in range(2)]
    if et.is_float:
        f = et.format
        special = np.array([0, f.sign_mask, f.exponent_mask, f.exponent_mask | f.sign_mask,
                            f.exponent_mask | f.mantissa_mask, f.exponent_mask | f.mantissa_mask | f.sign_mask],
                           dtype=np.uint64)
        for b in bits:
            pick = rng.random(n) < 0.3
            b[pick] = rng.choice(special, int(pick.sum()))
    return [from_bits((b & np.uint64((1 << et.bits) - 1)).astype(et.bits_dtype), et) for b in bits]


CASES = [("f32", "LT", None), ("f32", "EQ", "TOTALORDER"), ("f32", "GE", "TOTALORDER"), ("f64", "NE", "FLOAT"),
         ("bf16", "GT", "TOTALORDER"), ("f16", "LE", "FLOAT"), ("si32", "LT", "SIGNED"), ("ui64", "GE", "UNSIGNED"),
         ("si4", "GT", "SIGNED"), ("i1", "LT", "UNSIGNED")]


@pytest.mark.parametrize("name,direction,compare_type", CASES)
def test_compare_route_states_what_fn_states(name, direction, compare_type):
    et = element_type(name)
    rng = np.random.default_rng(3)
    n = 5000
    inst = _compare_inst(et, direction, compare_type, (n,))
    sem = OPS["compare"].semantics
    lhs, rhs = _operands(et, rng, n)
    fast_sem, calls = _counting(sem)
    got = ew.run_elementwise(fast_sem, inst, [lhs, rhs], inst.result)
    want = ew.run_elementwise(dataclasses.replace(sem, generic=None), inst, [lhs, rhs], inst.result)
    assert got == want
    # fn states only the declined elements: TOTALORDER's pairs of zeros or NaNs, distinct tuples once each
    if compare_type != "TOTALORDER":
        assert not calls
    else:
        assert len(calls) < n // 4 and (want.impl_defined or direction == "GE")


@pytest.mark.long   # stop 62's trim of make test (8:05 on a clean run): small types' comparison stays in make test (tests/spec/test_compare_whole.py)
def test_compare_of_small_types_over_large_arrays():
    """2^17 f8E5M2 pairs (the narrow types' evaluation once per value pair
    present, then the claim on those), TOTALORDER with its alternatives."""
    et = element_type("f8E5M2")
    rng = np.random.default_rng(4)
    n = 1 << 17
    lhs, rhs = _operands(et, rng, n)
    for direction, ct in (("LT", "FLOAT"), ("EQ", "TOTALORDER")):
        inst = _compare_inst(et, direction, ct, (n,))
        sem = OPS["compare"].semantics
        got = ew.run_elementwise(sem, inst, [lhs, rhs], inst.result)
        want = ew.run_elementwise(dataclasses.replace(sem, generic=None), inst, [lhs, rhs], inst.result)
        assert got == want, (direction, ct)


# --------------------------------------------------------------------------
# maximum and minimum: zero results
# --------------------------------------------------------------------------

def _binary_inst(op, et, shape):
    t = TensorType(shape, et)
    return OPS[op].instance({"lhs": t, "rhs": t}, {}, {"result": t})


@pytest.mark.parametrize("op", ["maximum", "minimum"])
@pytest.mark.parametrize("name", ["f32", "f64", "bf16", "f16", "f8E4M3FN"])
def test_relu_zeros_take_the_whole_array_route(op, name):
    """maximum(x, 0) and minimum(x, 0) with x of both signs, ±0 among
    them, and x against -0: the zero results come from numpy, fn is asked
    only for the pairs of zeros of different signs (and NaN / inf
    operands), and the expectation is fn's own."""
    et = element_type(name)
    rng = np.random.default_rng(5)
    n = 70000 if et.bits > 8 else 200
    x = rng.standard_normal(n).astype(et.numpy)
    x[rng.random(n) < 0.05] = 0
    x[rng.random(n) < 0.05] = -0.0
    sem = OPS[op].semantics
    for zero in (0.0, -0.0):
        y = np.full(n, zero, dtype=et.numpy)
        inst = _binary_inst(op, et, (n,))
        fast_sem, calls = _counting(sem)
        got = ew.run_elementwise(fast_sem, inst, [x, y], inst.result)
        want = ew.run_elementwise(dataclasses.replace(sem, generic=None), inst, [x, y], inst.result)
        assert got == want, (op, name, zero)
        if et.bits > 8:   # (8-bit pairs are evaluated once per distinct pair anyway)
            assert all(a == 0 and b == 0 and np.signbit(a) != np.signbit(b) for a, b in calls), calls[:5]
            assert len(calls) <= 2


def test_zeros_of_different_signs_are_caught():
    """The claim without its exclusion (every finite pair, zero results
    counted) states numpy's zero for maximum(-0, +0) — -0, where fn (IEEE
    754-2019) says +0 — and the comparison above sees it."""
    from shlo_conform.spec.dsl import Generic, finite
    et = element_type("f32")
    n = 70000
    x = np.zeros(n, dtype=np.float32)
    x[::2] = -0.0
    y = np.zeros(n, dtype=np.float32)
    for op, ufunc in (("maximum", np.maximum), ("minimum", np.minimum)):
        sem = OPS[op].semantics
        inst = _binary_inst(op, et, (n,))
        wrong = dataclasses.replace(sem, generic=Generic(None, finite, ieee=ufunc, exact=True))
        want = ew.run_elementwise(dataclasses.replace(sem, generic=None), inst, [x, y], inst.result)
        right = ew.run_elementwise(sem, inst, [x, y], inst.result)
        assert right == want
        assert ew.run_elementwise(wrong, inst, [x, y], inst.result) != want or \
            ew.run_elementwise(wrong, inst, [y, x], inst.result) != \
            ew.run_elementwise(dataclasses.replace(sem, generic=None), inst, [y, x], inst.result), op


@pytest.mark.parametrize("op,name", [("negate", "f16"), ("exponential", "f32"), ("add", "f64")])
def test_statement_route_asks_fn_for_every_element(op, name):
    """`statement_route` sets every claim aside: fn answers each distinct
    element (the mutation tool's second scoring of an op with claims), and
    the expectation is the one the claims route states."""
    et = element_type(name)
    rng = np.random.default_rng(5)
    n = 3000
    k = len(OPS[op].operands)
    t = TensorType((n,), et)
    inst = OPS[op].instance({o.name: t for o in OPS[op].operands}, {}, {"result": t})
    xs = _operands(et, rng, n)[:k]
    sem, calls = _counting(OPS[op].semantics)
    claimed = ew.run_elementwise(sem, inst, xs, inst.result)
    before = len(calls)
    with ew.statement_route():
        stated = ew.run_elementwise(sem, inst, xs, inst.result)
    stating = len(calls) - before
    distinct = len({tuple(int(b) for b in bits) for bits in zip(*[x.view(et.bits_dtype) for x in xs])})
    assert before < stating == distinct   # the claims answered some elements; fn all of them within the route
    assert stated.to_json() == claimed.to_json()
    ew.run_elementwise(sem, inst, xs, inst.result)
    assert len(calls) - before - stating == before   # and the claims serve again after it
