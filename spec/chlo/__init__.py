"""CHLO ops judged as mathematics: registry, full op name → OpSpec.

CHLO (`chlo.erf`, `chlo.lgamma`, `chlo.asin` …, the "client HLO" ops JAX
emits beside StableHLO; /work/shared/upstream-1.20/chlo.md) is no part of
the StableHLO spec.  DESIGN.md: "CHLO ops are mathematics: each is judged by
its mathematical meaning with the project's tolerance rules (correctly
rounded value from a rigorous evaluation, tolerance in ULPs), like the
spec's own transcendental ops — not by one decomposition of it."  So each
CHLO op is declared here once, one module per op named by its mnemonic, as
the spec's ops are in `spec/ops/`: its element types, its constraints
(CHLO's traits: `CompatibleOperandsAndResultType`, …, and its verifier's
rules), and semantics in the spec's vocabulary.  The element-wise functions
have `Elementwise` semantics — `Approx(f, x)` of the real function, with
the special values (±0, ±inf, NaN, poles) stated exactly, and the ULP
tolerance of spec/accuracy.py (`accuracy="approx"`); their complex forms
(asin … atanh: complex_inverse.py; cosh, sinh, tan) C99's principal values
with Annex G's special values, as spec/annex_g.py states the spec's own.
The others use the kinds the spec's ops use: top_k `DataMovement` (as
sort), ragged_dot `Accumulating` (dot_general's answer per group), mulhi
exact integer `Elementwise`.

The oracle's program reader executes a CHLO op declared here, for element
types in its tables, with these semantics; any other CHLO op (or a
declared one of another element type: top_k of complex, ragged_dot of
bool) is still legalized by jaxlib's chlo-legalize-to-stablehlo and its
decomposition judged (oracle/reading.py).  This registry is apart from
`spec.ops.OPS`: generators, check-spec and suites enumerate StableHLO ops
only.
"""
from __future__ import annotations

from ..dsl import OpSpec
from ..dsl.declaration import collect_specs

CHLO: dict[str, OpSpec] = collect_specs(__name__, __path__)


def declared(name: str, operand_types: list, result_types: list) -> OpSpec | None:
    """The spec of CHLO op `name` ("chlo.erf") when it is declared here and
    every operand and result element type (spec ElementTypes) is in its
    tables; else None (the op is legalized instead)."""
    spec = CHLO.get(name)
    if spec is None or len(operand_types) != len(spec.operands) or len(result_types) != len(spec.results):
        return None
    ok = all(t in o.types for t, o in zip(operand_types, spec.operands)) and \
        all(t in r.types for t, r in zip(result_types, spec.results))
    return spec if ok else None
