"""The tolerance of approximate ops carried through the ops after them (oracle/propagation.py).

Truth by hand: sine's f32 tolerance is 4 ULP (spec/accuracy.py); doubling
is exact, so `sin(x) * 2` may lie 4 ULP either side of twice the correctly
rounded sine, and not one more.
"""
from __future__ import annotations

import numpy as np

from shlo_conform.generators.expect import expected_outputs
from shlo_conform.oracle.propagation import CROSSES
from shlo_conform.spec.types import E_F32, from_ordinals, ordinals
from shlo_conform.suites.compare import compare


def program(body: str, out: str = "tensor<3xf32>") -> str:
    return (f"func.func @main(%x: tensor<3xf32>) -> {out} {{\n{body}\n}}\n")


SIN_TIMES_TWO = program("""  %s = stablehlo.sine %x : tensor<3xf32>
  %two = stablehlo.constant dense<2.0> : tensor<3xf32>
  %y = stablehlo.multiply %s, %two : tensor<3xf32>
  return %y : tensor<3xf32>""")
X = np.array([1.0, -0.5, 2.5], np.float32)


def _step(bits, n):
    return from_ordinals(ordinals(bits, E_F32) + n, E_F32).view(np.float32)


def test_a_doubled_sine_may_move_exactly_four_ulp():
    (e,) = expected_outputs(SIN_TIMES_TWO, [X])
    assert e.kind == "bounded"
    primary = e.array()
    assert primary.tolist() == (np.sin(X.astype(np.float64)).astype(np.float32) * 2).tolist()
    assert np.array_equal(e.hi.view(np.float32), _step(e.bits, 4))
    assert np.array_equal(e.lo.view(np.float32), _step(e.bits, -4))
    assert compare(e, _step(e.bits, 4)).ok and compare(e, _step(e.bits, -4)).ok
    assert not compare(e, _step(e.bits, 5)).ok          # one ULP outside the bound fails
    assert compare(e, _step(e.bits, 2)).max_ulp == 2    # where inside the bound is reported


def test_exact_chains_stay_exact_and_ranges_that_collapse_are_dropped():
    exact = program("""  %one = stablehlo.constant dense<1.0> : tensor<3xf32>
  %y = stablehlo.add %x, %one : tensor<3xf32>
  %z = stablehlo.multiply %y, %y : tensor<3xf32>
  return %z : tensor<3xf32>""")
    (e,) = expected_outputs(exact, [X])
    assert e.kind == "exact"
    floored = program("""  %s = stablehlo.sine %x : tensor<3xf32>
  %f = stablehlo.floor %s : tensor<3xf32>
  return %f : tensor<3xf32>""")
    (e,) = expected_outputs(floored, [X])
    assert e.kind == "exact" and e.array().tolist() == [0, -1, 0]   # no sine range reaches an integer


def test_a_range_crossing_nan_allows_any_value_and_says_so():
    """sqrt(sin(1) - c) with c the correctly rounded sin(1): 0 on the primary
    value, NaN at the range's low end — so anything goes there, labelled."""
    c = np.sin(np.float64(1.0)).astype(np.float32)
    text = program(f"""  %s = stablehlo.sine %x : tensor<3xf32>
  %c = stablehlo.constant dense<{float(c)!r}> : tensor<3xf32>
  %d = stablehlo.subtract %s, %c : tensor<3xf32>
  %r = stablehlo.sqrt %d : tensor<3xf32>
  return %r : tensor<3xf32>""")
    x = np.array([1.0, 2.0, 2.0], np.float32)
    (e,) = expected_outputs(text, [x])
    assert e.impl_defined == [0] and e.alternatives[-1].label == CROSSES
    anything = e.array().copy()
    anything[0] = 123.0
    assert compare(e, anything).ok
    anything[1] = 123.0
    assert not compare(e, anything).ok


SQRT_MOVED = program("""  %s = stablehlo.sqrt %x : tensor<3xf32>
  %r = stablehlo.reverse %s, dims = [0] : tensor<3xf32>
  return %r : tensor<3xf32>""")
MOVED = program("""  %r = stablehlo.reverse %x, dims = [0] : tensor<3xf32>
  return %r : tensor<3xf32>""")


def test_a_computed_nan_moved_is_any_nan_but_an_input_nan_keeps_its_payload():
    """sqrt(-1) is a NaN whose payload the spec does not fix, so after a
    reverse any NaN is right there; a NaN input moved by reverse alone keeps
    its bits (data movement is bit-exact)."""
    quiet, other = np.uint32(0x7FC00000), np.uint32(0x7FC00001)
    x = np.array([-1.0, 4.0, 9.0], np.float32)
    (e,) = expected_outputs(SQRT_MOVED, [x])
    got = np.array([3.0, 2.0, 0.0], np.float32)
    got[2] = other.view(np.float32)
    assert compare(e, got).ok
    got[2] = 1.0
    assert not compare(e, got).ok
    nan_in = np.array([1.0, 2.0, 0.0], np.float32)
    nan_in[0] = quiet.view(np.float32)
    (m,) = expected_outputs(MOVED, [nan_in])
    moved = nan_in[::-1].copy()
    assert compare(m, moved).ok
    moved[2] = other.view(np.float32)
    assert not compare(m, moved).ok


SAME_OPERAND = """func.func @main(%x: tensor<3xf32>) -> (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %s = stablehlo.sine %x : tensor<3xf32>
  %nan = stablehlo.compare NE, %s, %s, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %d = stablehlo.subtract %s, %s : tensor<3xf32>
  %sq = stablehlo.multiply %s, %s : tensor<3xf32>
  %twice = stablehlo.add %s, %s : tensor<3xf32>
  return %nan, %d, %sq, %twice : tensor<3xi1>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}
"""


def test_one_value_as_both_operands_moves_as_one_where_the_op_says_so():
    """JAX's NaN test `x != x` (logaddexp, softplus) on an approximate
    value: false on every NaN-free range, so exact — moving the two operands
    to opposite ends had made it "true or false" and a softplus ±50 % wide.
    subtract(s, s) is exactly 0 and add(s, s) twice s's range; multiply
    declares no such thing: s·s on a range straddling 0 keeps 0 in its
    enclosure (the ends alone, both squared, would have left it out)."""
    x = np.array([1.0, 0.5, 3e-45], np.float32)   # sin of the subnormal 2 ulp is itself: 4 ulp either side straddle 0
    nan, d, sq, twice = expected_outputs(SAME_OPERAND, [x])
    assert nan.kind == "exact" and not nan.array().any()
    assert d.kind == "exact" and not d.array().any()
    s_lo, s_hi = (np.sin(x.astype(np.float64)).astype(np.float32) for _ in range(2))
    assert twice.kind == "bounded" and np.all(twice.lo.view(np.float32) <= 2 * s_lo)
    lo = sq.lo.view(np.float32)
    assert sq.kind == "bounded" and lo[2] <= 0 < lo[0], lo   # 0 = sin(x)² somewhere in the third's range
