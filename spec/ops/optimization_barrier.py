"""optimization_barrier — an identity that orders computation (spec section "optimization_barrier").

Semantics: "Other than that, the operation is an identity, i.e. `result` =
`operand`" — the values pass through untouched (`ControlFlow`), NaN
payloads included: nothing is computed, so the results are bit-exact
copies of whatever the operands' expectations are.  The ordering it
promises ("operations that produce the `operand` are executed before any
operations that depend on the `result`") has no observable effect on
values in a program without side effects, so a suite cannot test it;
what it can test is that a backend does not change the values (XLA
lowers it to a tuple round trip).

Findings:
* The section's table is headed "Arguments" where every other section
  says "Inputs" (spec-findings.md); the constraints are the same either
  way.
* `operand` and `result` are "tensors or tokens"; a barrier on tokens only
  orders side effects.
"""
from __future__ import annotations

from ..dsl import ANY, ControlFlow, OpSpec, Operand, Result, same_types, size
from ..dsl.quantization import MOVES_PER_TENSOR


def optimization_barrier_c1(op):
    """(C1) size(`operand`) $=$ size(`result`)."""
    return size(op.operand) == size(op.results["result"])


def optimization_barrier_c2(op):
    """(C2) type(`operand[i]`) $=$ type(`result[i]`) for all i."""
    results = op.results["result"]
    return same_types(list(op.operand)[:len(results)], list(results)[:len(op.operand)])


def infer(op):
    return {"result": list(op.operand)}


def run(op, values, read):
    """The identity: each operand's value is its result's."""
    return list(values)


SPEC = OpSpec(
    mnemonic="optimization_barrier",
    operands=(Operand("operand", ANY, variadic=True, count=(2, 1, 3)),),
    results=(Result("result", ANY, variadic=True, count=lambda op: len(op.operand)),),
    constraints=(optimization_barrier_c1, optimization_barrier_c2),
    infer=infer,
    semantics=ControlFlow(run),
    # v1.20: "tensors, per-tensor quantized tensors or tokens": the values pass unchanged
    quantization=MOVES_PER_TENSOR,
)
