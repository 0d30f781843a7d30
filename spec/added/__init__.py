"""Ops StableHLO added after the seed (v1.20): registry, mnemonic → OpSpec.

The seed's 95 ops (`spec.ops.OPS`) are what the suite's skeletons,
check-spec's proofs and the traceability to the seed's numbering walk;
an op the seed does not have is declared here, one module per op named by
its mnemonic and traced to v1.20's numbering, and the program reader
executes it like any other (`spec.ops.lookup`).  uniform_quantize and
uniform_dequantize come first (quantized types); composite, the dynamic_*
ops, collective_broadcast/collective_reduce and async_start/async_done
are the rest of v1.20's thirteen (not yet declared).
"""
from __future__ import annotations

from ..dsl import OpSpec
from ..dsl.declaration import collect_specs

ADDED: dict[str, OpSpec] = collect_specs(__name__, __path__)
