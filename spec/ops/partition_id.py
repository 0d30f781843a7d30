"""partition_id — the `partition_id` of the current process (spec section "partition_id").

Semantics: the process's position in the StableHLO process grid (seed,
"Parallel execution": `process_id = (replica_id, partition_id)`, both
ui32), a 0-dimensional ui32 tensor.  The section has no constraints; the
Outputs table fixes the result type, which `infer` states.
"""
from __future__ import annotations

import numpy as np

from ..dsl import OpSpec, Position, Result
from ..exercise import Exercise
from ..types import UI32, TensorType

INDEX = 1   # its place in process_id = (replica_id, partition_id)


def infer(op):
    return {"result": TensorType((), UI32)}


def position(op, grid, process) -> list:
    """`partition_id` of `process`."""
    return [np.asarray(process[INDEX], dtype=np.uint32)]


SPEC = OpSpec(
    mnemonic="partition_id",
    operands=(),
    results=(Result("result", (UI32,), fixed_rank=0),),
    constraints=(),
    infer=infer,
    semantics=Position(position),
    exercise=Exercise(),
)
