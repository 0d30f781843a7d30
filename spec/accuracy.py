"""Our tolerance policy for ops whose accuracy the spec does not fix.

The seed's "Accuracy" section: "StableHLO does not provide guarantees about
numerical accuracy".  So for `approx` ops (transcendentals, complex
arithmetic) the verdict uses this policy, stated here once, and the measured
ULP error against the correctly rounded result is always reported whatever
the verdict.  Ops the spec ties to IEEE-754 basic operations are `exact`.
"""
from __future__ import annotations

from .types import ElementType

def tolerance_ulp(et: ElementType, stated: dict | None = None) -> int:
    """ULP tolerance for an `approx` result of element type `et` (per
    component for complex): the op's own where its semantics state one for
    this format (`Elementwise.tolerance`, {format name: ULPs}), else the
    format's (`FloatFormat.tolerance`, declared with the format — narrow
    formats are typically computed in f32 and rounded once more, which costs
    at most one ULP of the narrow format; wider formats get the budget of a
    good libm)."""
    fmt = (et.component if et.is_complex else et).format
    if stated and fmt.name in stated:
        return stated[fmt.name]
    return fmt.tolerance
