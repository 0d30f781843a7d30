"""Ops StableHLO added after the seed (v1.20): registry, mnemonic → OpSpec.

The seed's 95 ops (`spec.ops.OPS`) are what the suite's skeletons,
check-spec's proofs and the traceability to the seed's numbering walk;
an op the seed does not have is declared here, one module per op named by
its mnemonic and traced to v1.20's numbering, and the program reader
executes it like any other (`spec.ops.lookup`).  All thirteen are here:
uniform_quantize and uniform_dequantize (quantized types); composite (runs
its decomposition); the six dynamic_* ops (the static op's semantics on the
instance their shape operands make: shape_operands.py); collective_broadcast
and collective_reduce (on the process grid); async_start and async_done
(`!stablehlo.future<…>` values).  Their cases come from the streams
generators/suite.ADDED_STREAMS names.
"""
from __future__ import annotations

from ..dsl import OpSpec
from ..dsl.declaration import collect_specs

ADDED: dict[str, OpSpec] = collect_specs(__name__, __path__)
