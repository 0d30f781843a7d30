"""Our tolerance policy for ops whose accuracy the spec does not fix.

The seed's "Accuracy" section: "StableHLO does not provide guarantees about
numerical accuracy".  So for `approx` ops (transcendentals, complex
arithmetic) the verdict uses this policy, stated here once, and the measured
ULP error against the correctly rounded result is always reported whatever
the verdict.  Ops the spec ties to IEEE-754 basic operations are `exact`.
"""
from __future__ import annotations

from .types import ElementType

# Narrow formats are typically computed in f32 and rounded once more, which
# costs at most one ULP of the narrow format; wider formats get the budget of
# a good libm.
_TOLERANCE_ULP = {
    "f8E4M3FN": 1, "f8E5M2": 1, "bf16": 1, "f16": 1,
    "f32": 4, "f64": 4,
}


def tolerance_ulp(et: ElementType) -> int:
    """ULP tolerance for an `approx` result of element type `et` (per component for complex)."""
    fmt_name = et.component.name if et.is_complex else et.name
    return _TOLERANCE_ULP[fmt_name]
