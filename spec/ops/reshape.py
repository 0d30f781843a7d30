"""reshape — the same elements in the same (row-major) order under another
shape (spec section "reshape").

The program states the result's shape (`shape_from_program`); C2 relates
its element count to the operand's.  The products of dims make C2
non-linear for the solver.
"""
import numpy as np

from ..dsl import ANY, And, DataMovement, OpSpec, Operand, Result, at, in_range, rank, same_element_type
from ..dsl.quantization import STORAGE, Quantization, is_per_axis_tensor, same_except
from ..types import TensorType
from ..exercise import Corner, Exercise


def num_elements(t):
    """Product of the dims (1 for rank 0); dims may be symbolic."""
    n = 1
    for d in t.shape:
        n = n * d
    return n


def reshape_c1(op):
    """(C1) `operand` and `result` have the same element type.

    v1.20 (C1): `element_type(operand)` if `!is_per_axis_quantized(operand)`, else the same except
    that `quantization_dimension(operand)` and `quantization_dimension(result)` may differ."""
    if is_per_axis_tensor(op.operand):
        return same_except(op.operand, op.result, ("quantization_dimension",))
    return same_element_type(op.operand, op.result)


def reshape_c2(op):
    """(C2) `operand` and `result` have the same number of elements."""
    return num_elements(op.operand) == num_elements(op.result)


def reshape_c3(op):
    """(v1.20 C3) If `is_per_axis_quantized(operand)`: the product of the dims before the quantization
    dimension, its dim, and the product of the dims after it are the operand's and the result's alike
    (`reduce(dims(operand, [0, …, quantization_dimension(operand) - 1]), …, body=lambda x, y: x * y) =
    reduce(dims(result, [0, …, quantization_dimension(result) - 1]), …)`, `dim(operand,
    quantization_dimension(operand)) = dim(result, quantization_dimension(result))`, and the same for
    the dims after it) — so each slice along the quantization dimension keeps its elements, and with
    them its scale."""
    if not (is_per_axis_tensor(op.operand) and is_per_axis_tensor(op.result)):
        return True
    a, b = op.operand.element_type.quantization_dimension, op.result.element_type.quantization_dimension
    sa, sb = tuple(op.operand.shape), tuple(op.result.shape)
    # dual mode: a quantization dimension may be a z3 integer (spec/quantized_checks.py), so the three
    # products are chosen per position (`at`) rather than by slicing at a Python index
    before = lambda s: tuple(_product(s[:k]) for k in range(len(s)))        # noqa: E731
    after = lambda s: tuple(_product(s[k + 1:]) for k in range(len(s)))     # noqa: E731
    return And(in_range(a, 0, len(sa)), in_range(b, 0, len(sb)),
               at(before(sa), a, -1) == at(before(sb), b, -2), at(sa, a, -1) == at(sb, b, -2),
               at(after(sa), a, -1) == at(after(sb), b, -2))


def _product(dims):
    out = 1
    for d in dims:
        out = out * d
    return out


def quantized_example(types: dict):
    """A valid reshape of a 4×3×4 operand into 4×12 (of the element types
    `types` names; f32 where not named): a per-axis operand along 0 stays
    along 0; along 2 (also 4 scales) it would break C3 alone."""
    from ..types import E_F32
    return SPEC.instance({"operand": TensorType((4, 3, 4), types.get("operand", E_F32))}, {},
                         {"result": TensorType((4, 12), types.get("result", E_F32))})


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
    # v1.20: "or quantized tensor", per-axis too (C1, C3); the storage values move
    quantization=Quantization(meaning=STORAGE, per_axis=True, constraints=(reshape_c3,), example=quantized_example),
)
