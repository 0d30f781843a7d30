"""reshape — the same elements in the same (row-major) order under another
shape (spec section "reshape").

The program states the result's shape (`shape_from_program`); C2 relates
its element count to the operand's.  The products of dims make C2
non-linear for the solver.
"""
import numpy as np

from ..dsl import ANY, DataMovement, OpSpec, Operand, Result, rank, same_element_type
from ..dsl.quantization import MOVES_PER_TENSOR
from ..exercise import Corner, Exercise


def num_elements(t):
    """Product of the dims (1 for rank 0); dims may be symbolic."""
    n = 1
    for d in t.shape:
        n = n * d
    return n


def reshape_c1(op):
    """(C1) `operand` and `result` have the same element type."""
    return same_element_type(op.operand, op.result)


def reshape_c2(op):
    """(C2) `operand` and `result` have the same number of elements."""
    return num_elements(op.operand) == num_elements(op.result)


def infer(op):
    """The result's shape comes from the program; nothing is inferred."""
    return {}


def movement(op, operand):
    """`result[i0, ..., iR-1] = operand[j0, ..., jR'-1]` where `i` and `j` have
    the same position in the lexicographic ordering of their index spaces:
    numpy's C-order reshape (row-major is lexicographic)."""
    return [np.array(np.asarray(operand).reshape(tuple(int(d) for d in op.result.shape), order="C"), copy=True)]


def _result_ranks(op):
    """The operand's rank first (a change of dims alone), then 0..4."""
    r = rank(op.operand)
    return (r,) + tuple(k for k in (1, 2, 0, 3, 4) if k != r)


CORNERS = (
    Corner("rank 0 to [1]", (0,), lambda op: [], layout={"result_ranks": {"result": 1}}),
    Corner("to rank 5", (2,), lambda op: [], layout={"result_ranks": {"result": 5}}),
)


SPEC = OpSpec(
    mnemonic="reshape",
    operands=(Operand("operand", ANY),),
    results=(Result("result", ANY, rank=_result_ranks),),
    constraints=(reshape_c1, reshape_c2),
    infer=infer,
    semantics=DataMovement(movement),
    shape_from_program=("result",),
    exercise=Exercise(corners=CORNERS),
    quantization=MOVES_PER_TENSOR,   # v1.20: "or quantized tensor"; per-tensor here (per-axis: its quantization_dimension rules, not yet)
)
