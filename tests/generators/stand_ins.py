"""Stand-in expectations for the generator's own tests: the generator's
promises — determinism, parseable programs, negative cases, special values —
do not depend on what the expectations say (those are the oracle's,
tested in tests/oracle)."""
from __future__ import annotations

import numpy as np

from shlo_conform.generators import emit
from shlo_conform.spec.expectation import Expectation


def zeros_expected(spec, inst, mlir, arrays):
    """Zeros of each result type: deterministic, and enough to exercise the writer."""
    return [Expectation.of(np.zeros(t.shape, t.element_type.numpy), t)
            for r in emit.result_types(spec, inst) for t in emit.leaves(r)]


