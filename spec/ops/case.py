"""case — the output of exactly one of `branches`, chosen by `index` (spec section "case").

Semantics: "if 0 <= `index` < `N-1`, output of `branches[index]` is
returned, else, output of `branches[N-1]` is returned" — an index out of
range (negative, or N-1 and above) selects the last branch; that is the
seed's rule, so such cases are ordinary verdict cases.  The chosen branch
runs on nothing and its values pass through untouched (`ControlFlow`).

Readings:
* Branches have no arguments (C2); generated branches capture values of
  @main, each branch its own (generators/regions.py), so every output
  shows which branch ran.
* C4's "for all `i`" is read over both lists: as many results as
  `branches[0]` has outputs.
* The Inputs table types `index` as `si32`; the seed's example writes
  `tensor<i32>`, the MLIR spelling of the same signless 32-bit type.
* `results` are "tensors or tokens"; generated programs return tensors.

Findings:
* The formal rule writes `0 <= index < N-1`: `index = N-1` falls to the
  "else" and selects `branches[N-1]`, the same branch — consistent, but
  the bound reads as if N-1 were out of range (spec-findings.md).
* As for `if`, branches of "0 inputs" can only compute something by
  reading values of the enclosing function, which the seed shows by
  example only.
"""
from __future__ import annotations

import numpy as np

from ..branches import BRANCH_BODIES, branch_corners, branch_signature, functions
from ..dsl import ANY, ControlFlow, OpSpec, Operand, Region, Result, same_types, size
from ..exercise import Exercise
from ..symbolic import Skeleton
from ..types import SI32, TensorType
from ..dsl.quantization import STORAGE, Quantization
from ..quantized import per_axis_tensor


def case_c1(op):
    """(C1) `branches` have at least one function."""
    return size(op.branches) >= 1


def case_c2(op):
    """(C2) All functions in `branches` have 0 inputs."""
    return all(size(fn.inputs) == 0 for fn in op.branches)


def case_c3(op):
    """(C3) All functions in `branches` have the same output types."""
    return all(tuple(fn.outputs) == tuple(op.branches[0].outputs) for fn in op.branches)


def case_c4(op):
    """(C4) For all `i`, `type(results[i]) = type(branches[0]).outputs[i]`.

    Read over both lists (module docstring); with no branch there is no
    `branches[0]` and no output of it: only an op of no results meets it."""
    if not op.branches:
        return size(op.results["results"]) == 0
    return same_types(op.results["results"], op.branches[0].outputs)


def infer(op):
    """The first branch's outputs (C4); none without branches."""
    return {"results": list(op.branches[0].outputs) if op.branches else []}


def chosen(index: int, n: int) -> int:
    """The seed's rule: `index` when 0 <= index < N-1, else N-1."""
    return index if 0 <= index < n - 1 else n - 1


def run(op, values, read):
    index = int(np.asarray(read(values[0])).reshape(()))
    return list(op.branches[chosen(index, len(op.branches))].expect())


def index_values(op, name, k, t, rng):
    """Every branch, the last one through N-1, N, past it and below 0 too."""
    if name != "index":
        return None
    n = len(op.branches)
    picks = list(range(n)) + [-1, n, n + 7, -(2 ** 31), 2 ** 31 - 1]
    return np.asarray(picks[int(rng.integers(0, len(picks)))], dtype=np.int32)


def per_axis_results(spec, skels, rng):
    """Branches returning per-axis quantized values (v1.20: they pass unchanged)."""
    t = per_axis_tensor()
    bodies = BRANCH_BODIES + BRANCH_BODIES[:1]
    yield ("per-axis quantized results", None,
           Skeleton(spec.mnemonic, (SI32,), (("results", t.element_type),), (), (("branches", bodies[0]),)),
           spec.instance({"index": TensorType((), SI32)}, {}, {"results": [t]}, {"branches": functions((t,), bodies)}))


SPEC = OpSpec(
    mnemonic="case",
    operands=(Operand("index", (SI32,), rank=0),),
    regions=(Region("branches", branch_signature, bodies=BRANCH_BODIES, variadic=True, count=(2, 3, 1)),),
    results=(Result("results", ANY, variadic=True),),
    constraints=(case_c1, case_c2, case_c3, case_c4),
    infer=infer,
    semantics=ControlFlow(run),
    result_from_program=("results",),
    exercise=Exercise(operand_values=index_values, built_corners=branch_corners(
        "index", SI32, lambda outs, bodies: {"branches": functions(outs, bodies + bodies[:1])}),
        appended_last=per_axis_results),
    # v1.20: results "tensors, quantized tensors or tokens": the branch's values pass unchanged
    quantization=Quantization(meaning=STORAGE, per_axis=True),
)
