"""oracle/accumulate.py's own tests (its whole-array records are tested
against exact sums in tests/spec/test_bounds.py): what it refuses."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from shlo_conform.oracle import accumulate
from shlo_conform.oracle.program import parse_program

DOT = """func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = "stablehlo.dot_general"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1],
    rhs_contracting_dimensions = [0]>} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  "func.return"(%0) : (tensor<2x2xf32>) -> ()
}"""


@pytest.mark.parametrize("shape", [(1, 2), (2,), (3, 2), (2, 3), (4,)])
def test_semantics_that_answer_another_shape_are_refused(shape):
    """An op's semantics answering element arrays of another shape than its
    result type (a defect of the op module) is said, naming the op and both
    shapes — never spread over the result: shorter, longer, or of another
    rank, in either order of comparison."""
    inst = parse_program(DOT).steps[0].inst
    result = inst.results["result"]
    sem = SimpleNamespace(fn=lambda inst, *ops: [np.zeros(shape, dtype=object)])
    x = np.ones((2, 2), np.float32)
    with pytest.raises(ValueError, match=r"dot_general: semantics gave shape .* for tensor<2x2xf32>"):
        accumulate.run_accumulating(sem, inst, [x, x], [result])
    sem = SimpleNamespace(fn=lambda inst, *ops: [np.zeros((2, 2), dtype=object), np.zeros((2, 2), dtype=object)])
    with pytest.raises(ValueError, match="gave 2 results for 1"):
        accumulate.run_accumulating(sem, inst, [x, x], [result])
