"""if — the output of exactly one of `true_branch`, `false_branch`, chosen by `pred` (spec section "if").

Semantics: "if `pred` is `true`, output of `true_branch` is returned, else if
pred is `false`, output of `false_branch` is returned" — the chosen
branch's values pass through untouched (`ControlFlow`: the oracle runs
the branch on its whole values, so what the branch computes keeps every
allowance its ops have), and the other branch is not executed.

Readings:
* Branches have no arguments (C1): what they compute comes from values of
  the enclosing function they capture.  Generated branches
  (generators/regions.py `return_captures`, `double_captures`) each
  capture values of their own, so every output shows which branch ran.
* C3's "for all `i`" is read over both lists: as many results as the
  true branch has outputs.
* `results` are "tensors or tokens"; generated programs return tensors
  (@main cannot hand a token to a backend).
* The program states the result types (nothing else in the op fixes
  them: `result_from_program`), and generators build branches returning
  those types.

Findings:
* C1 says "0 inputs", but nothing in the seed says a branch may read
  values of the enclosing function: without that the op could only
  return constants.  The seed's own example returns `%result_true_branch`,
  a value defined outside the branch — the capture is implied by example
  only (spec-findings.md).
"""
from __future__ import annotations

import numpy as np

from ..branches import BRANCH_BODIES, branch_corners, branch_signature, functions
from ..dsl import ANY, ControlFlow, Function, OpSpec, Operand, Region, Result, same_types, size
from ..exercise import Exercise
from ..symbolic import Skeleton
from ..types import E_F32, I1, TensorType
from ..dsl.quantization import STORAGE, Quantization
from ..quantized import per_axis_tensor


def if_c1(op):
    """(C1) `true_branch` and `false_branch` have 0 inputs."""
    return size(op.true_branch.inputs) == 0 and size(op.false_branch.inputs) == 0


def if_c2(op):
    """(C2) `true_branch` and `false_branch` have the same output types."""
    return tuple(op.true_branch.outputs) == tuple(op.false_branch.outputs)


def if_c3(op):
    """(C3) For all `i`, `type(results[i]) = type(true_branch).outputs[i]`.

    Read over both lists (module docstring)."""
    return same_types(op.results["results"], op.true_branch.outputs)


def infer(op):
    return {"results": list(op.true_branch.outputs)}


def run(op, values, read):
    """The chosen branch, run on nothing; its values are the results."""
    pred = bool(np.asarray(read(values[0])).reshape(()))
    return list((op.true_branch if pred else op.false_branch).expect())


def pred_values(op, name, k, t, rng):
    """Both predicates occur: true and false in turn across cases."""
    return np.asarray(rng.random() < 0.5) if name == "pred" else None


def false_branch_inputs(spec, skels, rng):
    """C1 broken by the false branch alone (the solved invalid case gives
    the true branch an input): an implementation that reads C1 from one
    branch accepts this program."""
    outs = (TensorType((3,), E_F32),)
    fns = {"true_branch": Function((), outs, BRANCH_BODIES[0]),
           "false_branch": Function((TensorType((), E_F32),), outs, BRANCH_BODIES[0])}
    yield ("the false branch takes an input", "if_c1",
           Skeleton(spec.mnemonic, (I1,), (("results", E_F32),), (),
                    (("true_branch", BRANCH_BODIES[0]), ("false_branch", BRANCH_BODIES[0]))),
           spec.instance({"pred": TensorType((), I1)}, {}, {"results": list(outs)}, fns))


def per_axis_results(spec, skels, rng):
    """Branches returning per-axis quantized values (v1.20: they pass unchanged)."""
    t = per_axis_tensor()
    yield ("per-axis quantized results", None,
           Skeleton(spec.mnemonic, (I1,), (("results", t.element_type),), (),
                    (("true_branch", BRANCH_BODIES[0]), ("false_branch", BRANCH_BODIES[1]))),
           spec.instance({"pred": TensorType((), I1)}, {}, {"results": [t]},
                         dict(zip(("true_branch", "false_branch"), functions((t,), BRANCH_BODIES)))))


SPEC = OpSpec(
    mnemonic="if",
    operands=(Operand("pred", (I1,), rank=0),),
    regions=(Region("true_branch", branch_signature, bodies=BRANCH_BODIES),
             Region("false_branch", branch_signature, bodies=BRANCH_BODIES)),
    results=(Result("results", ANY, variadic=True),),
    constraints=(if_c1, if_c2, if_c3),
    infer=infer,
    semantics=ControlFlow(run),
    result_from_program=("results",),
    exercise=Exercise(operand_values=pred_values, built_corners=branch_corners(
        "pred", I1, lambda outs, bodies: dict(zip(("true_branch", "false_branch"), functions(outs, bodies)))),
        appended_last=(false_branch_inputs, per_axis_results)),
    # v1.20: results "tensors, quantized tensors or tokens": the branch's values pass unchanged
    quantization=Quantization(meaning=STORAGE, per_axis=True),
)
