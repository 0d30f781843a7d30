"""Elements the spec leaves open upstream stay open downstream
(oracle/propagation.py `_open`).

Truth by hand: a dot product whose products overflow f32 to +inf and −inf
has NaN in one evaluation order and ±inf in another — the oracle leaves
that element open ("any value").  relu of it must stay open: max(NaN, 0)
is NaN (StableHLO's maximum propagates NaN) and max(±inf, 0) a number, so
a backend's NaN there is right.  Elements the open ones do not reach stay
judged, so a wrong value there is still caught.
"""
from __future__ import annotations

import numpy as np

from shlo_conform.generators.expect import expected_outputs
from shlo_conform.oracle.propagation import OPEN
from shlo_conform.suites.compare import compare

BIG = np.float32(3e38)
PROGRAM = """func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %z = stablehlo.constant dense<0.0> : tensor<2x2xf32>
  %1 = stablehlo.maximum %0, %z : tensor<2x2xf32>
  return %1 : tensor<2x2xf32>
}
"""
# Row 0 of a times column 0 of b: BIG·BIG + (−BIG)·BIG = +inf + −inf in f32 — open.
# Row 1 times column 0: 0·BIG + 2^-10·BIG = BIG/1024 exactly; column 1 of b is (1, 0):
# row 0 gives BIG, row 1 gives 0 — all judged.
A = np.array([[BIG, -BIG], [0, 2.0 ** -10]], np.float32)
B = np.array([[BIG, 1], [BIG, 0]], np.float32)


def test_relu_of_an_open_dot_element_is_open_and_says_so():
    (e,) = expected_outputs(PROGRAM, [A, B])
    opened = sorted({i for a in e.alternatives if a.bits is None and a.label == OPEN for i in a.elements})
    assert opened == [0], e.alternatives
    right = np.array([[np.nan, BIG], [BIG / 1024, 0]], np.float32)
    assert compare(e, right).ok                                       # XLA's NaN is allowed
    right[0, 0] = 5
    assert compare(e, right).ok                                       # so is any number


def test_elements_the_open_one_does_not_reach_are_still_judged():
    (e,) = expected_outputs(PROGRAM, [A, B])
    assert not compare(e, np.array([[np.nan, BIG], [4, 0]], np.float32)).ok           # BIG/1024 at [1, 0]
    assert not compare(e, np.array([[np.nan, 0], [BIG / 1024, 0]], np.float32)).ok    # BIG at [0, 1]


def test_without_an_open_input_nothing_is_opened():
    a = np.array([[1, -1], [1, 2]], np.float32)
    (e,) = expected_outputs(PROGRAM, [a, np.ones((2, 2), np.float32)])
    assert not any(x.label == OPEN for x in e.alternatives)
    assert not compare(e, np.array([[np.nan, 0], [3, 3]], np.float32)).ok
