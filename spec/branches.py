"""What `if` and `case` share: branches of no arguments and how generators exercise them.

A branch has no inputs (if C1, case C2); what it returns it computes from
values of the enclosing function it captures.  Generated branches are the
region templates `return_captures` and `double_captures`
(generators/regions.py); this module says which output types they are built
with and which structures are worth a case of their own.
"""
from __future__ import annotations

from .dsl import Function
from .symbolic import Skeleton
from .types import E_F32, SI32, TensorType

BRANCH_BODIES = ("return_captures", "double_captures")


def branch_signature(op):
    """No inputs; the outputs a generator builds are the program's stated result type (the
    `Skeleton`'s, f32 where none is stated) at rank 1 and at rank 0."""
    stated = op.results.get("results")
    et = stated.element_type if isinstance(stated, TensorType) else E_F32
    return (), (TensorType((3,), et), TensorType((), et))


CORNER_OUTPUTS = (
    ("one output of rank 4", (TensorType((2, 1, 3, 2), E_F32),)),
    ("outputs of two element types", (TensorType((2, 2), E_F32), TensorType((3,), SI32))),
    ("a zero-sized output", (TensorType((0, 3), E_F32), TensorType((), E_F32))),
)


def branch_corners(operand: str, operand_type, regions):
    """`Exercise.built_corners` for a branching op: output structures the signature does not offer
    (rank 4, mixed element types, zero-sized), each branch body in turn.  `regions(outs, bodies)`
    gives the op's region values for branches of those outputs and bodies."""
    def build(spec, skeletons, rng):
        out = []
        for k, (note, outs) in enumerate(CORNER_OUTPUTS):
            bodies = (BRANCH_BODIES[k % 2], BRANCH_BODIES[(k + 1) % 2])
            fns = regions(outs, bodies)
            inst = spec.instance({operand: TensorType((), operand_type)}, {}, {"results": list(outs)}, fns)
            named = tuple((g.name, bodies[i % 2]) for i, g in enumerate(spec.regions))
            skel = Skeleton(spec.mnemonic, (operand_type,), (("results", E_F32),), (), named)
            out.append((note, skel, inst))
        return out
    return build


def functions(outs, bodies) -> list:
    return [Function((), tuple(outs), b) for b in bodies]
