"""async_done — wait for an async_start's future and return its value
(v1.20, spec.md "async_done"; not in the seed).

Semantics: "Waits for an asynchronous operation to complete and returns its
value": the tensor the future holds (spec/added/async_start.py: in the
oracle a future's value is the tuple of its body's results), passed on
whole (`ControlFlow`: bits, ranges and alternatives as the body stated
them).

Readings:
* The result is one tensor (the Outputs table's "tensor …", jaxlib's
  "requires one result"): a future of several tensors has no async_done
  that returns its T (C1 breaks).
* The result row — "tensor of floating-point or complex type or
  per-tensor quantized tensor" — is encoded as written: an integer or
  boolean result is outside the table, though async_start takes any
  tensor and jaxlib 0.10.2 accepts an async_done of `tensor<8x8xi32>`
  (a finding).  A per-tensor quantized result is admitted by its
  expressed type (f32, bf16, f16: in the row): the storage values the
  future holds, unchanged (`MOVES_PER_TENSOR`); C1 reads T whole, so a
  result of another scale than the future's breaks it.

Findings (docs/spec-findings.md): the result row (above); the section's
"More Examples" link points to atan2.mlir.
"""
from __future__ import annotations

import dataclasses

from ..dsl import ANY, COMPLEX, FLOAT, ControlFlow, OpSpec, Operand, Result
from ..dsl.quantization import MOVES_PER_TENSOR
from ..types import FutureType


def _one(t):
    """The T of a `future<T>` holding one tensor, else None."""
    return t.types[0] if isinstance(t, FutureType) and len(t.types) == 1 else None


def async_done_c1(op):
    """(C1) If `async_done` receives a `future<T>`, then `async_done` returns `T`."""
    t = _one(op.operand)
    return t is not None and op.result == t


def infer(op):
    t = _one(op.operand)
    return {"result": t} if t is not None else {}


def run(op, values, read):
    """The value the future holds."""
    (held,) = values
    return [held[0]]


SPEC = OpSpec(
    mnemonic="async_done",
    operands=(Operand("operand", ANY),),
    results=(Result("result", FLOAT + COMPLEX),),
    constraints=(async_done_c1,),
    infer=infer,
    semantics=ControlFlow(run),
    notes="v1.20 numbering (not in the seed)",
    # v1.20: result "or per-tensor quantized tensor": the value the future holds, unchanged (C1 reads T whole)
    quantization=dataclasses.replace(MOVES_PER_TENSOR, type_clauses=("async_done_c1",)),
)
