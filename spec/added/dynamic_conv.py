"""dynamic_conv — convolution whose padding is an operand (v1.20, spec.md "dynamic_conv").

"This operation is functionally identical to convolution op, but the
padding is specified dynamically via `padding`": convolution's semantics
(spec/ops/convolution.py: the window reading, padding holes facing a
non-finite kernel element, dot_general's accumulation ranges) on the
static instance whose `padding` attribute is the operand's rows, and the
constraints v1.20 states alike for both ops read as convolution's own on
that instance.  v1.20 numbers dynamic_conv's clauses afresh (no padding
attribute, so its C4 is the operand's shape and the rest shift by one):

    dynamic_conv  C1  C2  C3  C5–C24   C25  C26  C27       C28–C34
    convolution   C1  C3  C4  C6–C25   C26  C28  C2 + C27  v1.20 C28–C34 (convolution_c29 … c35)

The padding is known when the program is read where a constant gives it
(shape_operands.py): C25 is checked then; otherwise at run time, where a
padding breaking it leaves the result undefined.  Before the padding is
known C25 is read on the result dims it does not decide (batch and output
feature).

Attributes left out read as convolution reads them (strides and
dilations of 1, no reversal, precision [DEFAULT, DEFAULT]).

Quantized tensors (v1.20: lhs "tensor or per-tensor quantized tensor", rhs
and result "tensor or quantized tensor"): convolution's declaration — the
quantized form and the hybrid one (float lhs, quantized rhs, float result)
are dequantize_op_quantize / hybrid_dequantize_then_op, run by the oracle
on the static instance; rhs and result may be per-axis along their
feature dimensions (C29, C30).  C28–C34 are the op's own constraints
(v1.20 numbers them with the rest: convolution_c29 … c35 read on the
static instance), so the declaration adds none.

Ranged operands (an approximate value upstream) are carried through the
bilinear form convolution declares, on the padding this op ran with (the
form is asked right after the op ran on the primary values: oracle/
propagation.py), so a sum of products with mixed signs is not judged by
corners.
"""
from __future__ import annotations

import numpy as np

from ..dsl import (ANY, ANY_VALUE, INTEGER, Accumulating, Implies, ImplDefined, Not, OpSpec, Operand, Result, all_of,
                   contains, rank, shape, shape_is)
from ..dsl.quantization import Quantization
from ..ops import convolution as conv
from ..ops.convolution import SPEC as CONV
from ..quantized import is_quantized
from .shape_operands import UNDEFINED, UNDEFINED_WHY, deferred, matrix

PADDING = "padding"
PLACEHOLDER = "placeholder (no value is stated)"


def static(op, pads=None):
    """convolution's instance of the same operands, attributes and result,
    with these padding rows (the known values; None: left out, read as
    zeros by convolution — only where no rule read on it reads them)."""
    if pads is None:
        pads = matrix(op, PADDING)
    attrs = {a.name: op.attributes.get(a.name) for a in CONV.attributes if a.name != PADDING}
    attrs[PADDING] = None if pads is None else tuple(tuple(r) for r in pads)
    result = op.results.get("result")   # (none yet while the generators infer it)
    return CONV.instance({"lhs": op.lhs, "rhs": op.rhs}, attrs, {} if result is None else {"result": result})


def _uses_quantized(op) -> bool:
    return any(is_quantized(t) for t in (op.lhs, op.rhs, op.result))


def _on_static(rule, doc):
    def constraint(op):
        return rule(static(op))
    constraint.__doc__ = doc
    return constraint


def _quantized_clause(rule, doc):
    """A clause v1.20 states "if the operation uses quantized tensors":
    convolution's, read where the op uses one (it holds elsewhere)."""
    def constraint(op):
        return not _uses_quantized(op) or rule(static(op))
    constraint.__doc__ = doc
    return constraint


dynamic_conv_c1 = _on_static(conv.convolution_c1, """(C1) `N = rank(lhs) = rank(rhs)`.""")
dynamic_conv_c2 = _on_static(conv.convolution_c3, """(C2) `size(window_strides) = N - 2`.""")
dynamic_conv_c3 = _on_static(conv.convolution_c4, """(C3) `0 < window_strides`.""")


def dynamic_conv_c4(op):
    """(C4) `shape(padding) = [N - 2, 2]`."""
    return shape_is(op.padding, (rank(op.lhs) - 2, 2))


dynamic_conv_c5 = _on_static(conv.convolution_c6, """(C5) `size(lhs_dilation) = N - 2`.""")
dynamic_conv_c6 = _on_static(conv.convolution_c7, """(C6) `0 < lhs_dilation`.""")
dynamic_conv_c7 = _on_static(conv.convolution_c8, """(C7) `size(rhs_dilation) = N - 2`.""")
dynamic_conv_c8 = _on_static(conv.convolution_c9, """(C8) `0 < rhs_dilation`.""")
dynamic_conv_c9 = _on_static(conv.convolution_c10, """(C9) `size(window_reversal) = N - 2`.""")
dynamic_conv_c10 = _on_static(conv.convolution_c11,
                              """(C10) `dim(lhs, input_batch_dimension) % batch_group_count = 0`.""")
dynamic_conv_c11 = _on_static(conv.convolution_c12,
                              """(C11) `dim(lhs, input_feature_dimension) % feature_group_count = 0`.""")
dynamic_conv_c12 = _on_static(conv.convolution_c13, """(C12) `size(input_spatial_dimensions) = N - 2`.""")
dynamic_conv_c13 = _on_static(conv.convolution_c14, """(C13) Given `input_dimensions = [input_batch_dimension] +
       input_spatial_dimensions + [input_feature_dimension]`:
  * `is_unique(input_dimensions)`.
  * `0 <= input_dimensions < N`.""")
dynamic_conv_c14 = _on_static(conv.convolution_c15, """(C14) `dim(rhs, kernel_input_feature_dimension) = dim(lhs, \
input_feature_dimension) / feature_group_count`.""")
dynamic_conv_c15 = _on_static(conv.convolution_c16,
                              """(C15) `dim(rhs, kernel_output_feature_dimension) % batch_group_count = 0`.""")
dynamic_conv_c16 = _on_static(conv.convolution_c17,
                              """(C16) `dim(rhs, kernel_output_feature_dimension) % feature_group_count = 0`.""")
dynamic_conv_c17 = _on_static(conv.convolution_c18, """(C17) `size(kernel_spatial_dimensions) = N - 2`.""")
dynamic_conv_c18 = _on_static(conv.convolution_c19, """(C18) Given `kernel_dimensions = kernel_spatial_dimensions +
        [kernel_input_feature_dimension] + [kernel_output_feature_dimension]`:
  * `is_unique(kernel_dimensions)`.
  * `0 <= kernel_dimensions < N`.""")
dynamic_conv_c19 = _on_static(conv.convolution_c20, """(C19) `size(output_spatial_dimensions) = N - 2`.""")
dynamic_conv_c20 = _on_static(conv.convolution_c21, """(C20) Given `output_dimensions = [output_batch_dimension] +
        output_spatial_dimensions + [output_feature_dimension]`:
  * `is_unique(output_dimensions)`.
  * `0 <= output_dimensions < N`.""")
dynamic_conv_c21 = _on_static(conv.convolution_c22, """(C21) `0 < feature_group_count`.""")
dynamic_conv_c22 = _on_static(conv.convolution_c23, """(C22) `0 < batch_group_count`.""")
dynamic_conv_c23 = _on_static(conv.convolution_c24, """(C23) `feature_group_count = 1 or batch_group_count = 1`.""")
dynamic_conv_c24 = _on_static(conv.convolution_c25, """(C24) `size(precision_config) = 2`.""")


def dynamic_conv_c25(op):
    """(C25) `dim(result, result_dim)` is defined as:
  * `dim(lhs, input_batch_dimension) / batch_group_count` if `result_dim = output_batch_dimension`.
  * `dim(rhs, kernel_output_feature_dimension)` if `result_dim = output_feature_dimension`.
  * `num_windows` otherwise, where … (convolution's C26, `padding` the operand's values).

    convolution's C26 on the static instance where the padding is known;
    before, the result dims it does not decide."""
    if matrix(op, PADDING) is not None:
        return conv.convolution_c26(static(op))
    s = static(op)
    spatial = tuple(op.output_spatial_dimensions)   # dual mode: entries may be z3 integers
    return all_of(Implies(Not(contains(spatial, r)), d == w)
                  for r, (d, w) in enumerate(zip(shape(op.result), conv.result_dims(s))))


dynamic_conv_c26 = _on_static(conv.convolution_c28, """(C26) `rank(result) = N`.""")


def dynamic_conv_c27(op):
    """If the operation uses non-quantized tensors:
  (C27) `element_type(lhs) = element_type(rhs) = element_type(result)`."""
    return _uses_quantized(op) or op.lhs.element_type == op.rhs.element_type == op.result.element_type


dynamic_conv_c28 = _quantized_clause(conv.convolution_c29, """(C28) `is_quantized(lhs) = is_quantized(result) and \
is_quantized(rhs)`.""")
dynamic_conv_c29 = _quantized_clause(conv.convolution_c30, """(C29) If `is_per_axis_quantized(rhs)`,
    then `quantization_dimension(rhs) = kernel_output_feature_dimension`.""")
dynamic_conv_c30 = _quantized_clause(conv.convolution_c31, """(C30) If `is_per_axis_quantized(result)`, then
    `quantization_dimension(result) = output_feature_dimension`.""")
dynamic_conv_c31 = _quantized_clause(conv.convolution_c32, """(C31) If `is_quantized(lhs)`: `storage_type(lhs) = \
storage_type(rhs)`.""")
dynamic_conv_c32 = _quantized_clause(conv.convolution_c33, """(C32) If `is_quantized(lhs)`: `expressed_type(lhs) = \
expressed_type(rhs) = expressed_type(result)`.""")
dynamic_conv_c33 = _quantized_clause(conv.convolution_c34, """(C33) If `is_quantized(lhs)` and \
`is_per_tensor_quantized(rhs)`, then `is_per_tensor_quantized(result)`.""")
dynamic_conv_c34 = _quantized_clause(conv.convolution_c35, """(C34) If `!is_quantized(lhs)`: `element_type(lhs) = \
expressed_type(rhs) = element_type(result)`.""")

for _n, _c in list(globals().items()):   # each delegating constraint carries its label (violated() names it)
    if _n.startswith("dynamic_conv_c") and callable(_c):
        _c.__name__ = _c.__qualname__ = _n


def infer(op):
    """convolution's inferred result where the padding is known; else the program states it."""
    return {} if matrix(op, PADDING) is None else conv.infer(static(op))


def arrays(op, lhs, rhs, padding):
    """convolution's windows and dot products on the static instance;
    every element any value where the padding breaks a rule at run time."""
    broken = deferred(op, padding=padding)
    if broken:
        et = op.result.element_type
        zero = False if et.is_bool else 0 if et.is_integer else 0j if et.is_complex else 0.0
        # the placeholder is the primary an element answer needs; every element offers any value
        answer = ImplDefined({PLACEHOLDER: zero, UNDEFINED.format(", ".join(broken)): ANY_VALUE}, why=UNDEFINED_WHY)
        out = np.empty(tuple(int(d) for d in op.result.shape), dtype=object)
        out.fill(answer)
        return [out]
    rows = tuple(tuple(int(x) for x in row) for row in padding.reshape(padding.shape[0], -1))
    op.padding_run = rows   # the bilinear form's padding (module docstring)
    return CONV.semantics.fn(static(op, rows), lhs, rhs)


def working_bytes(op) -> int:
    """convolution's figure (it reads no padding)."""
    return CONV.semantics.working(static(op))


def bilinear_form(op):
    """convolution's form on the padding the op ran with (module docstring)."""
    pads = matrix(op, PADDING) or vars(op).get("padding_run")
    if pads is None:
        raise ValueError("dynamic_conv: the bilinear form is asked before the op ran")
    return CONV.semantics.bilinear_form(static(op, pads))


def quantized_example(types: dict):
    """A valid dynamic_conv whose element types are `types` (by name: lhs,
    rhs, result; f32 where not given): convolution's quantized example
    (1-D, window 3, stride 2; lhs 1x5x2, rhs 3x2x4, result 1x3x4) with its
    padding [[1, 1]] a constant si64 operand."""
    from ..types import TensorType, element_type
    f32 = element_type("f32")
    attrs = {k: v for k, v in conv.ONE_D_WINDOW_3.items() if k != PADDING}
    shapes = {"lhs": (1, 5, 2), "rhs": (3, 2, 4), "result": (1, 3, 4)}
    t = {n: TensorType(shapes[n], types.get(n, f32)) for n in shapes}
    inst = SPEC.instance({"lhs": t["lhs"], "rhs": t["rhs"], PADDING: TensorType((1, 2), element_type("si64"))},
                         attrs, {"result": t["result"]})
    inst.known_values = {PADDING: np.array([[1, 1]], dtype=np.int64)}
    return inst


SPEC = OpSpec(
    mnemonic="dynamic_conv",
    operands=(Operand("lhs", ANY), Operand("rhs", ANY), Operand(PADDING, INTEGER, rank=2, literal=True)),
    attributes=tuple(a for a in CONV.attributes if a.name != PADDING),
    groups=CONV.groups,
    results=(Result("result", ANY),),
    shape_from_program=("result",),   # the shape operands' values, unknown to the types, decide the dims
    constraints=tuple(globals()[f"dynamic_conv_c{k}"] for k in range(1, 35)),
    infer=infer,
    semantics=Accumulating(arrays, working=working_bytes, bilinear=("lhs", "rhs"), bilinear_form=bilinear_form),
    notes="v1.20 numbering (not in the seed)",
    # v1.20: convolution's (dequantize_op_quantize; the hybrid form), rhs and result per-axis too; C28–C34 the op's own
    quantization=Quantization(per_axis=("rhs", "result"), example=quantized_example, skeletons=False,
                              type_clauses=tuple(f"dynamic_conv_c{n}" for n in range(28, 35))),
)
