"""convolution — dot products between windows of `lhs` and slices of `rhs` (spec section "convolution").

Semantics, as the seed writes them: with `feature_group_count` =
`batch_group_count` = 1, each result element is `dot_general` of a window of
`padded_lhs` (`pad(lhs, 0, low, high, lhs_dilation - 1)`: padding — negative
padding crops — and base dilation) taken every `window_strides` with window
dilation `rhs_dilation`, reversed along the spatial dimensions
`window_reversal` marks, against `rhs`, contracting the spatial and input
feature dimensions.  Its value is dot_general's (dot_general.py:
`dot_range` for floats, per component for complex, the exact sum for
integers — wrapped and labelled by the oracle —, an OR of ANDs for i1).
`feature_group_count` > 1 splits `lhs` along its feature dimension and
`rhs` along its output feature dimension into that many groups, convolves
group with group and concatenates along the output feature dimension;
`batch_group_count` > 1 does the same with `lhs`'s batch dimension.
precision_config is read as dot_general reads it (`at_precision`).  Like
dot_general, bilinear in (lhs, rhs) and declared so (`bilinear_form`: the
window sums, holes as zero terms, by the patch matrices `whole` uses).

Readings:
* The window slice.  The seed writes `lhs_window = slice(padded_lhs,
  lhs_window_start, lhs_window_start + lhs_window_dimensions,
  lhs_window_dilations)`: with a window dilation d > 1 that slice has
  ceil(k/d) elements per spatial dimension where the kernel has k, and the
  dot_general that follows could not pair them.  C26's
  `dilated_window_shape = (k - 1) * d + 1` is the window's extent, so the
  limit is read as `lhs_window_start + dilated_window_shape`: k elements,
  d apart (what StableHLO's interpreter and XLA compute).
* Padding and base-dilation holes are zeros of the element type that take
  part in the dot product, so a hole facing an infinite or NaN kernel
  element makes the seed's product 0 × ∞ = NaN.  Implementations skip
  those positions (XLA:CPU does: a kernel [∞, 1] over [0-pad, 1] gives 1,
  not NaN), so where a hole meets a non-finite kernel element the
  skipped holes are the primary answer — a range, as any dot product —
  and the seed's literal NaN the alternative, both labelled (an
  alternative is one value, matched exactly: NaN is one).
* Optional window attributes.  The pinned dialect lets a program leave
  `window_strides`, `padding`, `lhs_dilation`, `rhs_dilation` and
  `window_reversal` out (its printer does when they hold their defaults);
  an absent one is read as its default — strides and dilations of 1, no
  padding, no reversal — of size N - 2, so C3–C10 hold for it.
  precision_config left out is read as [DEFAULT, DEFAULT] (dot_general.py).
* C5's "dim(`padding`, 1) = 2" cannot be broken in a program we accept:
  the attribute is read as rows of (low, high), and a `tensor<Nx3xi64>`
  padding is refused as unreadable before any constraint is checked.
* Division by zero.  C11, C12, C16, C17 (`x % count = 0`) read `x % 0 = 0`
  as `x = 0` (0 divides only 0), and C15, C26 divide by a count or stride
  that is not positive as 0 — only programs that break C4, C22 or C23 have
  one, and the reading keeps those breaks from spilling into other
  constraints (z3's integer division by zero is a free value; Python's
  raises).

Findings:
* The window slice above (limit `lhs_window_dimensions` where the dilated
  window's extent is meant).
* C12 and C15 have unbalanced backquotes, and C15 an unclosed parenthesis:
  `dim(rhs, kernel_input_feature_dimension = …` (read as the seed means).
* rank 2 (no spatial dimension) is valid by the seed (N - 2 = 0 spatial
  entries everywhere): a batched matrix product of features.
* C26 defines `dilated_window_shape` for `dim(rhs, rhs_dim) == 0`, so an
  empty window is valid by the seed (every window's dot product is the
  empty sum, 0); jaxlib's verifier refuses it ("expects window to have
  positive value"), and so every backend built on it.
* The pinned verifier does not check C25 (it accepts 0, 1 or 2 precision
  entries) nor C27 (any result element type: JAX's preferred_element_type).

The result's element type.  Unlike dot_general (dot_general.py), whose
v1.20 text names no clause for it, convolution's C27 is explicit in the
seed (`element_type(result) = element_type(lhs)`) and in StableHLO v1.20
(C27, for non-quantized tensors: `element_type(lhs) = element_type(rhs)
= element_type(result)`; C34, hybrid quantized, likewise).  So a
mixed-precision convolution (bf16 × bf16 → f32, si8 × si8 → si32, what
JAX's preferred_element_type writes) is invalid here, as in both texts,
and the suite holds such programs as C27 cases (`mixed_precision`) —
although upstream's verifier accepts them (openxla/stablehlo#1896, open)
and its maintainers read the result type as the accumulation type
(openxla/stablehlo#2953): a disagreement inside StableHLO, recorded, not
resolved by this encoding.  `run` judges a user's promoted convolution
under that reading, saying so (oracle/reading.py
`convert_to_wider_results`); the suite keeps C27 as written.
"""
from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np

from ..dsl import (ANY, Accumulating, Attribute, BoolArrayAttr, ConvDimensionsGroup, EnumListAttr, I64ArrayAttr,
                   I64MatrixAttr, If, ImplDefined, IntAttr, OpSpec, Operand, Or, Result, all_of, at, element_type,
                   in_range, is_symbolic, is_unique, rank, shape, size)
from ..dsl.quantization import Quantization
from ..exercise import Corner, Exercise
from ..quantized import (expressed_type, is_per_axis_quantized, is_per_tensor_quantized, is_quantized,
                         quantization_dimension, storage_type)
from ..types import TensorType
from ..types import element_type as element_type_named
from .. import bounds
from .dot_general import PRECISIONS, at_precision, dot_answer, dot_general_c14, values
from .dot_general import probes as dot_probes
from .dot_general import whole as dot_whole

GROUP = "dimension_numbers"
FIELDS = ("input_batch_dimension", "input_feature_dimension", "input_spatial_dimensions",
          "kernel_input_feature_dimension", "kernel_output_feature_dimension", "kernel_spatial_dimensions",
          "output_batch_dimension", "output_feature_dimension", "output_spatial_dimensions")
HOLES = "padding and base-dilation holes contribute no product"
SEED_HOLES = "the seed's zero padding: 0 × ∞ is NaN"
HOLES_WHY = ("the seed pads lhs with zeros that take part in the dot product, so a hole facing an infinite or "
             "NaN kernel element gives NaN; implementations skip the holes (XLA:CPU): both are accepted")


# --------------------------------------------------------------------------
# Arithmetic that reads the same on ints and z3
# --------------------------------------------------------------------------

def _floordiv(a, b):
    """⌊a / b⌋ for b > 0; 0 otherwise (module docstring: division by zero)."""
    if is_symbolic(a) or is_symbolic(b):
        return If(b > 0, a / b, 0)
    return a // b if b > 0 else 0


def _divides(b, a):
    """`a % b = 0`, with 0 dividing only 0."""
    if is_symbolic(a) or is_symbolic(b):
        return If(b == 0, a == 0, a % b == 0)
    return a == 0 if b == 0 else a % b == 0


def _n(op) -> int:
    return rank(op.lhs)


def _spatial(op) -> int:
    return max(_n(op) - 2, 0)


def window_strides(op) -> tuple:
    return tuple(op.window_strides) if op.window_strides is not None else (1,) * _spatial(op)


def padding(op) -> tuple:
    return tuple(op.padding) if op.padding is not None else ((0, 0),) * _spatial(op)


def lhs_dilation(op) -> tuple:
    return tuple(op.lhs_dilation) if op.lhs_dilation is not None else (1,) * _spatial(op)


def rhs_dilation(op) -> tuple:
    return tuple(op.rhs_dilation) if op.rhs_dilation is not None else (1,) * _spatial(op)


def window_reversal(op) -> tuple:
    return tuple(op.window_reversal) if op.window_reversal is not None else (False,) * _spatial(op)


def input_dimensions(op) -> tuple:
    return (op.input_batch_dimension,) + tuple(op.input_spatial_dimensions) + (op.input_feature_dimension,)


def kernel_dimensions(op) -> tuple:
    return tuple(op.kernel_spatial_dimensions) + (op.kernel_input_feature_dimension,
                                                   op.kernel_output_feature_dimension)


def output_dimensions(op) -> tuple:
    return (op.output_batch_dimension,) + tuple(op.output_spatial_dimensions) + (op.output_feature_dimension,)


def _dim(t, d):
    return at(shape(t), d)


# --------------------------------------------------------------------------
# Constraints
# --------------------------------------------------------------------------

def convolution_c1(op):
    """(C1) $N =$ rank(`lhs`) $=$ rank(`rhs`)."""
    return rank(op.lhs) == rank(op.rhs)


def convolution_c2(op):
    """(C2) element_type(`lhs`) $=$ element_type(`rhs`).

    v1.20 (C27) "if the operation uses non-quantized tensors": v1.20's C28–C34 take the quantized
    ones (`_QUANTIZATION`)."""
    return True if _uses_quantized(op) else element_type(op.lhs) == element_type(op.rhs)


def convolution_c3(op):
    """(C3) size(`window_strides`) $= N - 2$ ."""
    return size(window_strides(op)) == _n(op) - 2


def convolution_c4(op):
    """(C4) `window_strides[i]` $\\gt 0$  for all i $\\in$ [0, size(`window_strides`))."""
    return all_of(s > 0 for s in window_strides(op))


def convolution_c5(op):
    """(C5) dim(`padding`, 0) $= N - 2$ and dim(`padding`, 1) = 2.

    The second half holds by the attribute's reading (rows of (low, high);
    module docstring)."""
    return size(padding(op)) == _n(op) - 2


def convolution_c6(op):
    """(C6) size(`lhs_dilation`) $= N - 2$."""
    return size(lhs_dilation(op)) == _n(op) - 2


def convolution_c7(op):
    """(C7) `lhs_dilation[i]` $\\gt 0$ for all i $\\in$ [0, size(`lhs_dilation`))."""
    return all_of(d > 0 for d in lhs_dilation(op))


def convolution_c8(op):
    """(C8) size(`rhs_dilation`) $= N - 2$."""
    return size(rhs_dilation(op)) == _n(op) - 2


def convolution_c9(op):
    """(C9) `rhs_dilation[i]` $\\gt 0$ for all i $\\in$ [0, size(`rhs_dilation`))."""
    return all_of(d > 0 for d in rhs_dilation(op))


def convolution_c10(op):
    """(C10) size(`window_reversal`) $= N - 2$."""
    return size(window_reversal(op)) == _n(op) - 2


def convolution_c11(op):
    """(C11) `dim(lhs, input_batch_dimension) % batch_group_count = 0`."""
    return _divides(op.batch_group_count, _dim(op.lhs, op.input_batch_dimension))


def convolution_c12(op):
    """(C12) `dim(lhs, input_feature_dimension) % feature_group_count = 0."""
    return _divides(op.feature_group_count, _dim(op.lhs, op.input_feature_dimension))


def convolution_c13(op):
    """(C13) size(`input_spatial_dimensions`) $= N - 2$."""
    return size(op.input_spatial_dimensions) == _n(op) - 2


def convolution_c14(op):
    """(C14) Given `input_dimensions = [input_batch_dimension] +
       input_spatial_dimensions + [input_feature_dimension]`.
  * All dimensions in `input_dimensions` are unique.
  * For any i $\\in$ `input_dimensions`, 0 $\\le$ i $\\lt$ N."""
    dims = input_dimensions(op)
    return all_of([is_unique(dims)] + [in_range(d, 0, _n(op)) for d in dims])


def convolution_c15(op):
    """(C15) `dim(rhs, kernel_input_feature_dimension = dim(lhs, input_feature_dimension) / feature_group_count`."""
    return _dim(op.rhs, op.kernel_input_feature_dimension) == _floordiv(
        _dim(op.lhs, op.input_feature_dimension), op.feature_group_count)


def convolution_c16(op):
    """(C16) `dim(rhs, kernel_output_feature_dimension) % batch_group_count = 0`."""
    return _divides(op.batch_group_count, _dim(op.rhs, op.kernel_output_feature_dimension))


def convolution_c17(op):
    """(C17) `dim(rhs, kernel_output_feature_dimension) % feature_group_count = 0`."""
    return _divides(op.feature_group_count, _dim(op.rhs, op.kernel_output_feature_dimension))


def convolution_c18(op):
    """(C18) size(`kernel_spatial_dimensions`) $= N - 2$."""
    return size(op.kernel_spatial_dimensions) == _n(op) - 2


def convolution_c19(op):
    """(C19) Given `kernel_dimensions = kernel_spatial_dimensions +
        [kernel_input_feature_dimension] + [kernel_output_feature_dimension]`.
  * All dimensions in `kernel_dimensions` are unique.
  * For any i $\\in$ `kernel_dimensions`, 0 $\\le$ i $\\lt$ N."""
    dims = kernel_dimensions(op)
    return all_of([is_unique(dims)] + [in_range(d, 0, _n(op)) for d in dims])


def convolution_c20(op):
    """(C20) size(`output_spatial_dimensions`) $= N - 2$."""
    return size(op.output_spatial_dimensions) == _n(op) - 2


def convolution_c21(op):
    """(C21) Given `output_dimensions = [output_batch_dimension] +
        output_spatial_dimensions + [output_feature_dimension]`.
  * All dimensions in `output_dimensions` are unique.
  * For any i $\\in$ `output_dimensions`, 0 $\\le$ i $\\lt$ N."""
    dims = output_dimensions(op)
    return all_of([is_unique(dims)] + [in_range(d, 0, _n(op)) for d in dims])


def convolution_c22(op):
    """(C22) `feature_group_count > 0`."""
    return op.feature_group_count > 0


def convolution_c23(op):
    """(C23) `batch_group_count > 0`."""
    return op.batch_group_count > 0


def convolution_c24(op):
    """(C24) `feature_group_count` $= 1$ OR  `batch_group_count` $= 1$."""
    return Or(op.feature_group_count == 1, op.batch_group_count == 1)


def convolution_c25(op):
    """(C25) size(`precision_config`) $=$ 2.

    Left out: read as [DEFAULT, DEFAULT] (module docstring)."""
    return op.precision_config is None or size(op.precision_config) == 2


def convolution_c26(op):
    """(C26) For result_dim $\\in$ [0, N), `dim(result, result_dim)` is given by
  * `dim(lhs, input_batch_dimension) / batch_group_count`, if `result_dim = output_batch_dimension`.
  * `dim(rhs, kernel_output_feature_dimension)`, if `result_dim = output_feature_dimension`.
  * `num_windows` otherwise, where:
    * `output_spatial_dimensions[spatial_dim] = result_dim`.
    * `lhs_dim = input_spatial_dimensions[spatial_dim]`.
    * `rhs_dim = kernel_spatial_dimensions[spatial_dim]`.
    * `dilated_input_shape[lhs_dim] = dim(lhs, lhs_dim) == 0 ? 0 : (dim(lhs, lhs_dim) - 1) * lhs_dilation[spatial_dim] + 1`.
    * `padded_input_shape[lhs_dim] = padding[spatial_dim, 0] + dilated_input_shape[lhs_dim] + padding[spatial_dim, 1]`.
    * `dilated_window_shape[lhs_dim] = dim(rhs, rhs_dim) == 0 ? 0 : (dim(rhs, rhs_dim) - 1) * rhs_dilation[spatial_dim] + 1`.
    * `num_windows = (padded_input_shape[lhs_dim] == 0 || dilated_window_shape[lhs_dim] > padded_input_shape[lhs_dim]) ? 0 : floor((padded_input_shape[lhs_dim] - dilated_window_shape[lhs_dim]) / window_strides[spatial_dim]) + 1`.

    Over the result dims that exist (the result's rank is C28's)."""
    return all_of(d == w for d, w in zip(shape(op.result), result_dims(op)))


def convolution_c27(op):
    """(C27) element_type(`result`) $=$ element_type(`lhs`).

    v1.20 (C27) "if the operation uses non-quantized tensors", as C2."""
    return True if _uses_quantized(op) else element_type(op.result) == element_type(op.lhs)


def convolution_c28(op):
    """(C28) rank(`result`) $= N$."""
    return rank(op.result) == _n(op)


def _entry(xs, s, default):
    """`xs[s]`, or the attribute's default where the list is too short (C3,
    C5, C6, C8 are broken then; the rest of C26 still reads)."""
    return xs[s] if s < len(xs) else default


def num_windows(op, s):
    """C26's `num_windows` of spatial dimension `s` (ints or z3)."""
    d = _dim(op.lhs, op.input_spatial_dimensions[s])
    k = _dim(op.rhs, op.kernel_spatial_dimensions[s])
    low, high = _entry(padding(op), s, (0, 0))
    dilated_input = If(d == 0, 0, (d - 1) * _entry(lhs_dilation(op), s, 1) + 1)
    padded = low + dilated_input + high
    dilated_window = If(k == 0, 0, (k - 1) * _entry(rhs_dilation(op), s, 1) + 1)
    return If(Or(padded == 0, dilated_window > padded), 0,
              _floordiv(padded - dilated_window, _entry(window_strides(op), s, 1)) + 1)


def result_dims(op) -> tuple:
    """C26 for every result dimension in [0, N).  A spatial dimension that
    one of the three spatial lists leaves out (C13, C18 or C20 broken) has
    no formula: a result dimension no list names reads 0."""
    n = _n(op)
    s_count = min(_spatial(op), len(op.input_spatial_dimensions), len(op.kernel_spatial_dimensions),
                  len(op.output_spatial_dimensions))
    batch = _floordiv(_dim(op.lhs, op.input_batch_dimension), op.batch_group_count)
    feature = _dim(op.rhs, op.kernel_output_feature_dimension)
    windows = [num_windows(op, s) for s in range(s_count)]
    out = []
    for r in range(n):
        v = 0
        for s in reversed(range(s_count)):
            v = If(op.output_spatial_dimensions[s] == r, windows[s], v)
        v = If(op.output_feature_dimension == r, feature, v)
        out.append(If(op.output_batch_dimension == r, batch, v))
    return tuple(out)


def infer(op):
    """C26's shape, lhs's element type — but a quantized result's type is the
    program's (v1.20 states its expressed type, C32, never its storage type
    nor its scales), so none is inferred where the instance states one."""
    result = (getattr(op, "results", None) or {}).get("result")
    if result is not None and is_quantized(result):
        return {}
    return {"result": TensorType(result_dims(op), op.lhs.element_type)}


# --------------------------------------------------------------------------
# Quantized tensors (v1.20)
# --------------------------------------------------------------------------
# v1.20's clauses "if the operation uses quantized tensors" are its C28–C34; the seed's convolution already
# holds labels up to C28 (its own numbering: C28 is rank(result) = N), so these continue past it, as every
# later clause does (OpSpec.later): convolution_c29 is v1.20's C28, …, convolution_c35 v1.20's C34, each
# docstring naming its clause.  Each holds vacuously where the types it names are not there, so that each
# can be broken alone (dot_general's C14–C20 are the model).

def _uses_quantized(op) -> bool:
    """Any quantized tensor among lhs, rhs and the result (when the instance states one yet)."""
    result = (getattr(op, "results", None) or {}).get("result")
    return any(is_quantized(t) for t in (op.lhs, op.rhs, result) if t is not None)


def convolution_c29(op):
    """(v1.20 C28) `is_quantized(lhs) = is_quantized(result) and is_quantized(rhs)`.

    dot_general's C14 in the same words, read the same way (its function:
    `(lhs = result) and rhs`, as StableHLO's verifier reads it)."""
    return dot_general_c14(op)


def convolution_c30(op):
    """(v1.20 C29) If `is_per_axis_quantized(rhs)`, then `quantization_dimension(rhs) =
    kernel_output_feature_dimension`."""
    return not is_per_axis_quantized(op.rhs) or quantization_dimension(op.rhs) == op.kernel_output_feature_dimension


def convolution_c31(op):
    """(v1.20 C30) If `is_per_axis_quantized(result)`, then `quantization_dimension(result) =
    output_feature_dimension`."""
    return (not is_per_axis_quantized(op.result)
            or quantization_dimension(op.result) == op.output_feature_dimension)


def convolution_c32(op):
    """(v1.20 C31) If `is_quantized(lhs)`: `storage_type(lhs) = storage_type(rhs)`."""
    return not (is_quantized(op.lhs) and is_quantized(op.rhs)) or storage_type(op.lhs) == storage_type(op.rhs)


def convolution_c33(op):
    """(v1.20 C32) If `is_quantized(lhs)`: `expressed_type(lhs) = expressed_type(rhs) = expressed_type(result)`."""
    ts = (op.lhs, op.rhs, op.result)
    return not all(is_quantized(t) for t in ts) or len({expressed_type(t) for t in ts}) == 1


def convolution_c34(op):
    """(v1.20 C33) If `is_quantized(lhs)` and `is_per_tensor_quantized(rhs)`, then
    `is_per_tensor_quantized(result)`."""
    return (not (is_quantized(op.lhs) and is_per_tensor_quantized(op.rhs) and is_quantized(op.result))
            or is_per_tensor_quantized(op.result))


def convolution_c35(op):
    """(v1.20 C34) If `!is_quantized(lhs)` (the hybrid form: float lhs, quantized rhs):
    `element_type(lhs) = expressed_type(rhs) = element_type(result)`.

    Checked, like every clause here, only where the op uses quantized tensors.  A float rhs has no
    expressed type (the spec's `member_name(x)` "returns None" where x has no such member), so
    float lhs and rhs with a quantized result break this clause — and no other: C28 holds there
    (false = false and true)."""
    if is_quantized(op.lhs):
        return True
    rhs = expressed_type(op.rhs) if is_quantized(op.rhs) else None
    return element_type(op.lhs) == rhs == element_type(op.result)


# One 1-D convolution: lhs [b, 0, f], rhs [0, i, o], result [b, 0, f]; window 3, stride 2, padding 1 each
# side (a 5-long input gives 3 outputs) — the quantized example and the mixed-precision cases share it.
ONE_D_WINDOW_3 = {"window_strides": (2,), "padding": ((1, 1),), "lhs_dilation": (1,), "rhs_dilation": (1,),
                  "window_reversal": (False,), "input_batch_dimension": 0, "input_feature_dimension": 2,
                  "input_spatial_dimensions": (1,), "kernel_input_feature_dimension": 1,
                  "kernel_output_feature_dimension": 2, "kernel_spatial_dimensions": (0,),
                  "output_batch_dimension": 0, "output_feature_dimension": 2, "output_spatial_dimensions": (1,),
                  "feature_group_count": 1, "batch_group_count": 1, "precision_config": ("DEFAULT", "DEFAULT")}


def quantized_example(types: dict):
    """A valid 1-D convolution whose element types are `types` (by name: lhs,
    rhs, result; f32 where not given) — the structure on which the quantized
    stream breaks each of C29–C35 alone and builds per-axis cases: lhs
    [b, 0, f] 1×5×2, rhs [0, i, o] 3×2×4, result [b, 0, f] 1×3×4 (window 3,
    stride 2, padding 1 each side), so the dimensions a quantization
    dimension may name differ in size."""
    f32 = element_type_named("f32")
    attrs = dict(ONE_D_WINDOW_3)
    shapes = {"lhs": (1, 5, 2), "rhs": (3, 2, 4), "result": (1, 3, 4)}
    t = {n: TensorType(shapes[n], types.get(n, f32)) for n in shapes}
    return SPEC.instance({"lhs": t["lhs"], "rhs": t["rhs"]}, attrs, {"result": t["result"]})


_QUANTIZATION = Quantization(per_axis=("rhs", "result"),
                             constraints=(convolution_c29, convolution_c30, convolution_c31, convolution_c32,
                                          convolution_c33, convolution_c34, convolution_c35),
                             example=quantized_example)


# --------------------------------------------------------------------------
# Semantics
# --------------------------------------------------------------------------

def _not_finite(v) -> bool:
    if isinstance(v, complex):
        return not (math.isfinite(v.real) and math.isfinite(v.imag))
    return isinstance(v, float) and not math.isfinite(v)


class _Conv:
    """The seed's windows of one convolution on concrete operands (module
    docstring): lhs seen as [batch, spatial…, feature], rhs as [spatial…,
    input feature, output feature], the result built as [batch, spatial…,
    output feature] (`out_shape`) and laid out by `output_dimensions`."""

    def __init__(self, op, lhs, rhs):
        self.op = op
        self.et = et = op.lhs.element_type
        lhs, rhs = np.asarray(lhs), np.asarray(rhs)
        self.s_count = lhs.ndim - 2
        self.in_perm = [int(d) for d in input_dimensions(op)]
        k_perm = [int(d) for d in kernel_dimensions(op)]
        self.out_perm = [int(d) for d in output_dimensions(op)]
        self.lx = values(lhs, et).transpose(self.in_perm)
        self.kx = values(rhs, et).transpose(k_perm)
        self.strides, self.pads = window_strides(op), padding(op)
        self.base, self.win, self.rev = lhs_dilation(op), rhs_dilation(op), window_reversal(op)
        self.fgc, self.bgc = int(op.feature_group_count), int(op.batch_group_count)
        res_shape = tuple(int(d) for d in op.result.shape)
        self.res_shape = res_shape
        self.out_shape = tuple(res_shape[d] for d in self.out_perm)
        self.b_out, self.o_count, self.out_sp = self.out_shape[0], self.out_shape[-1], self.out_shape[1:-1]
        self.in_sp, self.k_sp, self.fk = self.lx.shape[1:-1], self.kx.shape[:-2], self.kx.shape[-2]
        self.zero = False if et.is_bool else (0 if et.is_integer else (0j if et.is_complex else 0.0))

    def groups(self, o: int) -> tuple[int, int]:
        """(feature group, lhs batch group) of output feature o."""
        return o // (self.o_count // self.fgc), o // (self.o_count // self.bgc)

    def position(self, s: int, w, k):
        """Along spatial dimension s, for output position w and kernel
        position k: the lhs index there, and whether it is one (not a
        padding or base-dilation hole).  Works on ints and arrays."""
        m = self.k_sp[s] - 1 - k if self.rev[s] else k   # reversed window: element ks-1-k meets rhs[k]
        p = w * self.strides[s] + m * self.win[s] - self.pads[s][0]   # position in the dilated lhs
        inside = (p >= 0) & (p % self.base[s] == 0) & (p // self.base[s] < self.in_sp[s])
        return p // self.base[s], inside

    def answer(self, b: int, o: int, w: tuple):
        """The element answer at [b, w…, o] (before `at_precision`)."""
        et = self.et
        fg, bg = self.groups(o)
        lb = bg * self.b_out + b
        pairs, holes = [], []
        for k in np.ndindex(*self.k_sp):
            pos, inside = [], True
            for s in range(self.s_count):
                q, ok = self.position(s, w[s], k[s])
                inside = inside and bool(ok)
                pos.append(int(q))
            for j in range(self.fk):
                r = self.kx[k + (j, o)].item()
                pairs.append((self.lx[(lb,) + tuple(pos) + (fg * self.fk + j,)].item() if inside else self.zero, r))
                holes.append(not inside)
        answer = dot_answer(pairs, et)
        if (et.is_float or et.is_complex) and any(h and _not_finite(r) for (_, r), h in zip(pairs, holes)):
            # Primary: the holes skipped (a range); the seed's literal 0 × ∞ is NaN, one value.
            skipped = dot_answer([p for p, h in zip(pairs, holes) if not h], et)
            answer = ImplDefined({HOLES: skipped, SEED_HOLES: answer}, why=HOLES_WHY)
        return answer

    def unflat(self, i: int) -> tuple:
        """(b, o, w) of flat index i of the result as laid out ([batch,
        spatial…, feature] permuted by `output_dimensions`)."""
        idx = np.unravel_index(i, self.res_shape)
        full = [0] * len(self.res_shape)
        for d, p in enumerate(self.out_perm):   # result axis p holds out_shape's axis d
            full[d] = int(idx[p])
        return full[0], full[-1], tuple(full[1:-1])

    def _groups(self):
        """Per feature and batch group: (output features o_g, lhs patches P
        of (batch · output positions) × (kernel positions · input features),
        holes as zeros, the kernel Kmat of (kernel positions · input
        features) × o_g, and the holes of (output positions) × (kernel
        positions)): the group's result is P @ Kmat, rows in (batch,
        position) order."""
        nsp = int(np.prod(self.in_sp, dtype=np.int64))
        W = int(np.prod(self.out_sp, dtype=np.int64))
        Ks = int(np.prod(self.k_sp, dtype=np.int64))
        # flat lhs spatial index of (output position, kernel position), -1 at holes
        flat = np.zeros((W, Ks), dtype=np.int64)
        inside = np.ones((W, Ks), dtype=bool)
        wg = np.indices(self.out_sp).reshape(self.s_count, -1) if self.s_count else np.zeros((0, 1), np.int64)
        kg = np.indices(self.k_sp).reshape(self.s_count, -1) if self.s_count else np.zeros((0, 1), np.int64)
        for s in range(self.s_count):
            q, ok = self.position(s, wg[s][:, None], kg[s][None, :])
            inside &= ok
            flat = flat * self.in_sp[s] + np.where(ok, q, 0)
        lxf = self.lx.reshape(self.lx.shape[0], nsp, self.lx.shape[-1])
        kxf = self.kx.reshape(Ks, self.fk, self.o_count)
        outs = np.arange(self.o_count)
        fg_of, bg_of = outs // (self.o_count // self.fgc), outs // (self.o_count // self.bgc)
        holes = ~inside
        for fg, bg in sorted(set(zip(fg_of.tolist(), bg_of.tolist()))):
            o_g = np.flatnonzero((fg_of == fg) & (bg_of == bg))
            lb = bg * self.b_out + np.arange(self.b_out)
            feats = fg * self.fk + np.arange(self.fk)
            if lxf.size:
                P = lxf[lb[:, None, None, None], flat[None, :, :, None], feats[None, None, None, :]]
                P = np.where(inside[None, :, :, None], P, P.dtype.type(0))
            else:   # no lhs element: every position is a hole
                P = np.zeros((self.b_out, W, Ks, self.fk), dtype=lxf.dtype)
            P = P.reshape(self.b_out * W, Ks * self.fk)
            Kmat = kxf[:, :, o_g].reshape(Ks * self.fk, len(o_g))
            yield o_g, P, Kmat, holes

    def whole(self):
        """The result as one `Answers` (spec/bounds.py), per feature and
        batch group a matrix product of lhs patches (holes as zeros) with
        the kernel; elements where a hole faces a non-finite kernel value
        are left to `answer`.  None where only the per-element route serves."""
        et = self.et
        if et.is_complex or int(np.prod(self.out_shape, dtype=np.int64)) == 0:
            return None
        W = int(np.prod(self.out_sp, dtype=np.int64))
        probes = dot_probes(et)
        conv_index = np.arange(int(np.prod(self.out_shape, dtype=np.int64))).reshape(self.out_shape)
        parts = []
        for o_g, P, Kmat, holes in self._groups():
            rec = dot_whole(P[None], Kmat[None], et, None, probes)
            if rec is None:
                return None
            if et.is_float and holes.any():
                bad = ~np.isfinite(Kmat)
                if bad.any():   # a hole facing a non-finite kernel value: the two readings, element by element
                    h = np.repeat(holes, self.fk, axis=1).astype(np.float64)
                    facing = (np.tile(h, (self.b_out, 1)) @ bad.astype(np.float64) > 0).reshape(-1)
                    rec.kind[facing] = bounds.ELEMENT
            parts.append((rec, conv_index[..., o_g].reshape(self.b_out * W, len(o_g))))
        rec = bounds.combine(self.out_shape, parts, lambda i: self.answer(*self._conv_unflat(i)), probes)
        src = conv_index.transpose(np.argsort(self.out_perm))
        final = rec.permuted(src, self.res_shape)
        final.element = lambda i: self.answer(*self.unflat(i))
        return final.wrapped(lambda answer: at_precision(self.op, answer, et))

    def _conv_unflat(self, i: int) -> tuple:
        idx = np.unravel_index(i, self.out_shape)
        return int(idx[0]), int(idx[-1]), tuple(int(v) for v in idx[1:-1])

    def sums(self) -> np.ndarray:
        """Σ lhs·rhs of every window as float64 (operands' values as given,
        holes as zero terms), one BLAS product per group, in the result's
        layout: `bilinear_form`'s product."""
        out = np.zeros(self.out_shape)
        if out.size:
            for o_g, P, Kmat, _ in self._groups():
                out[..., o_g] = np.matmul(P, Kmat).reshape(self.out_shape[:-1] + (len(o_g),))
        return out.transpose(np.argsort(self.out_perm))


def bilinear_form(op):
    """`Accumulating.bilinear_form`: each result element is a dot product of
    a window of lhs (padding and dilation holes as zero terms) with the
    kernel of its group: kernel positions × input features per group terms."""
    k_sp = [int(op.rhs.shape[int(d)]) for d in op.kernel_spatial_dimensions]
    n = int(np.prod(k_sp, dtype=np.int64)) * int(op.rhs.shape[int(op.kernel_input_feature_dimension)])

    def product(x, y):
        return _Conv(op, np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)).sums()
    return n, product


def working_bytes(op) -> int:
    """What `_Conv.whole` holds beyond operands and result (oracle/cost.py):
    per feature and batch group a float64 patch matrix of (batch ·
    positions) × (kernel positions · input features) — gathered, masked and
    taken absolute, three at a time — and the (positions × kernel
    positions) index and mask arrays."""
    res = [int(d) for d in op.result.shape]
    rhs = [int(d) for d in op.rhs.shape]
    out = [res[int(d)] for d in output_dimensions(op)]
    ker = [rhs[int(d)] for d in kernel_dimensions(op)]
    positions = int(np.prod(out[1:-1], dtype=np.int64))
    taps = int(np.prod(ker[:-2], dtype=np.int64))
    patch = out[0] * positions * taps * ker[-2]
    return 3 * 8 * patch + 9 * positions * taps


def arrays(op, lhs, rhs):
    """The seed's windows and dot products (module docstring): real and
    integer types on whole arrays (`_Conv.whole`, the per-element `answer`
    standing behind every element the enclosures leave), complex element
    by element."""
    c = _Conv(op, lhs, rhs)
    got = c.whole()
    if got is not None:
        return [got]
    out = np.empty(c.out_shape, dtype=object)
    for b, o in itertools.product(range(c.b_out), range(c.o_count)):
        for w in np.ndindex(*c.out_sp):
            out[(b,) + w + (o,)] = at_precision(op, c.answer(b, o, w), c.et)
    return [out.transpose(np.argsort(c.out_perm))]


# --------------------------------------------------------------------------
# Exercise
# --------------------------------------------------------------------------

def _layout(op, in_perm, k_perm, out_perm) -> list:
    """Conditions: input, kernel and output dimension lists are these
    permutations ([batch, spatial…, feature], [spatial…, in, out],
    [batch, spatial…, feature])."""
    conds = []
    for dims, perm in ((input_dimensions(op), in_perm), (kernel_dimensions(op), k_perm),
                       (output_dimensions(op), out_perm)):
        if perm is not None:
            conds += [d == p for d, p in zip(dims, perm)]
    return conds


def _nonempty(op) -> list:
    return [d > 0 for d in op.result.shape]


def _sp(op, s=0):
    """(input spatial size, kernel spatial size, result spatial size) of spatial dimension s."""
    return (_dim(op.lhs, op.input_spatial_dimensions[s]), _dim(op.rhs, op.kernel_spatial_dimensions[s]),
            _dim(op.result, op.output_spatial_dimensions[s]))


def _permutation_corners() -> tuple:
    """Every permutation of the three roles at rank 3, for input, kernel and
    output each (rotated so the three differ in a case); at rank 4 the two
    common layouts and one whose spatial dimensions are listed out of order."""
    perms = list(itertools.permutations(range(3)))
    out = []
    for i in range(len(perms)):
        p_in, p_k, p_out = perms[i], perms[(i + 2) % 6], perms[(i + 4) % 6]
        out.append(Corner(f"dimension numbers {list(p_in)}x{list(p_k)}->{list(p_out)} (1-D)", (3, 3),
                          lambda op, a=p_in, b=p_k, c=p_out: _layout(op, a, b, c) + _nonempty(op)))
    for note, a, b, c in (("NCHW / OIHW", (0, 2, 3, 1), (2, 3, 1, 0), (0, 2, 3, 1)),
                          ("NHWC / HWIO (the seed's Example)", (0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3)),
                          ("spatial dimensions listed out of order", (2, 3, 1, 0), (2, 0, 3, 1), (1, 0, 3, 2))):
        out.append(Corner(f"dimension numbers {note} (2-D)", (4, 4),
                          lambda op, a=a, b=b, c=c: _layout(op, a, b, c) + _nonempty(op)))
    return tuple(out)


CORNERS = _permutation_corners() + (
    Corner("1-D spatial", (3, 3), lambda op: _nonempty(op)),
    Corner("2-D spatial", (4, 4), lambda op: _nonempty(op)),
    Corner("3-D spatial", (5, 5), lambda op: _nonempty(op)),
    Corner("no spatial dimension (rank 2)", (2, 2), lambda op: _nonempty(op)),
    Corner("strides larger than the window", (3, 3),
           lambda op: [window_strides(op)[0] > _sp(op)[1], _sp(op)[1] >= 1, _sp(op)[2] >= 2] + _nonempty(op)),
    Corner("window larger than the padded base: no windows", (3, 3),
           lambda op: [_sp(op)[2] == 0, _sp(op)[0] >= 1, _sp(op)[1] > _sp(op)[0]]),
    Corner("negative padding", (3, 3),
           lambda op: [padding(op)[0][0] < 0, padding(op)[0][1] < 0] + _nonempty(op)),
    Corner("negative low and positive high padding, 2-D", (4, 4),
           lambda op: [padding(op)[0][0] < 0, padding(op)[0][1] > 0, padding(op)[1][0] > 0] + _nonempty(op)),
    Corner("lhs (base) dilation with padding", (3, 3),
           lambda op: [lhs_dilation(op)[0] >= 2, padding(op)[0][0] > 0, _sp(op)[0] >= 2] + _nonempty(op)),
    Corner("rhs (window) dilation", (3, 3),
           lambda op: [rhs_dilation(op)[0] >= 2, _sp(op)[1] >= 2] + _nonempty(op)),
    Corner("window reversal", (3, 3),
           lambda op: [window_reversal(op)[0] == 1, _sp(op)[1] >= 2] + _nonempty(op)),
    Corner("window reversal in one of two spatial dimensions", (4, 4),
           lambda op: [window_reversal(op)[0] == 0, window_reversal(op)[1] == 1, _sp(op, 1)[1] >= 2] + _nonempty(op)),
    Corner("strides, padding, both dilations and reversal together", (4, 4),
           lambda op: [window_strides(op)[0] >= 2, lhs_dilation(op)[1] >= 2, rhs_dilation(op)[0] >= 2,
                       padding(op)[1][1] > 0, window_reversal(op)[1] == 1] + _nonempty(op)),
    Corner("feature groups", (3, 3),
           lambda op: [op.feature_group_count >= 2, _dim(op.rhs, op.kernel_input_feature_dimension) >= 2]
           + _nonempty(op)),
    Corner("feature groups equal to the features (depthwise)", (4, 4),
           lambda op: [op.feature_group_count >= 2,
                       op.feature_group_count == _dim(op.lhs, op.input_feature_dimension),
                       _dim(op.rhs, op.kernel_output_feature_dimension) > op.feature_group_count] + _nonempty(op)),
    Corner("batch groups", (3, 3),
           lambda op: [op.batch_group_count >= 2, _dim(op.lhs, op.input_batch_dimension) > op.batch_group_count]
           + _nonempty(op)),
    Corner("batch groups, 2-D", (4, 4), lambda op: [op.batch_group_count >= 2] + _nonempty(op)),
    Corner("zero-sized input features: empty dot products", (3, 3),
           lambda op: [_dim(op.lhs, op.input_feature_dimension) == 0] + _nonempty(op)),
    Corner("zero-sized kernel window: empty dot products", (3, 3),
           lambda op: [_sp(op)[1] == 0] + _nonempty(op)),
    Corner("1-D spatial, strided and padded", (3, 3),
           lambda op: [window_strides(op)[0] >= 2, padding(op)[0][0] > 0, _sp(op)[1] >= 2] + _nonempty(op)),
    Corner("2-D spatial, 2x2 window", (4, 4),
           lambda op: [_sp(op, 0)[1] == 2, _sp(op, 1)[1] == 2] + _nonempty(op)),
    Corner("2-D spatial, two batches and two output features", (4, 4),
           lambda op: [_dim(op.lhs, op.input_batch_dimension) == 2,
                       _dim(op.rhs, op.kernel_output_feature_dimension) == 2] + _nonempty(op)),
    Corner("3-D spatial, a window of two in each", (5, 5),
           lambda op: [_sp(op, s)[1] == 2 for s in range(3)] + _nonempty(op)),
    Corner("long window (accumulation)", (3, 3),
           lambda op: [_sp(op)[1] * _dim(op.rhs, op.kernel_input_feature_dimension) >= 12] + _nonempty(op),
           max_dim=16),
)



_OPTIONAL = ("window_strides", "padding", "lhs_dilation", "rhs_dilation", "window_reversal")
_DEFAULT_ENTRY = {"window_strides": 1, "lhs_dilation": 1, "rhs_dilation": 1, "window_reversal": 0}


def _at_defaults(names, spatial: int):
    """The attributes `names` at the values a left-out attribute means (`window_strides(op)` and its
    neighbours above), on `spatial` spatial dimensions, with a nonempty result."""
    def where(op):
        conds = _nonempty(op)
        for name in names:
            for s in range(spatial):
                conds += ([op.padding[s][0] == 0, op.padding[s][1] == 0] if name == "padding"
                          else [getattr(op, name)[s] == _DEFAULT_ENTRY[name]])
        return conds
    return where


# Programs as JAX and the pretty printer write them: attributes at their defaults left out (issue 25).
_SOME = ("lhs_dilation", "rhs_dilation", "window_reversal")
ELIDED = (
    Corner("defaults elided: window_strides, padding, lhs_dilation, rhs_dilation and window_reversal left out",
           (3, 3), lambda op: _at_defaults(_OPTIONAL, 1)(op) + [_sp(op)[1] >= 2], omit=_OPTIONAL),
    Corner("defaults elided: dilations and reversal left out, strides and padding written (2-D)", (4, 4),
           lambda op: _at_defaults(_SOME, 2)(op) + [op.window_strides[0] >= 2, op.padding[1][0] >= 1],
           omit=_SOME),
)

def _built_corners(spec, skels, rng):
    """precision_config HIGHEST on f32 (the skeletons keep [DEFAULT, DEFAULT]
    on every type but i1: a covering set), by hand: a 1-D convolution
    1x5x2 (NWC) with a 3x2x2 (WIO) kernel, stride 2, padding [1, 1]."""
    out = []
    for name, config in (("f32", ("HIGHEST", "HIGHEST")), ("bf16", ("HIGH", "HIGH"))):
        skel = next((s for s in skels if s.operand_types[0] == s.operand_types[1]
                     and s.operand_types[0].name == name), None)
        if skel is None:
            continue
        t = skel.operand_types[0]
        attrs = {"window_strides": (2,), "padding": ((1, 1),), "lhs_dilation": (1,), "rhs_dilation": (1,),
                 "window_reversal": (False,), "input_batch_dimension": 0, "input_feature_dimension": 2,
                 "input_spatial_dimensions": (1,), "kernel_input_feature_dimension": 1,
                 "kernel_output_feature_dimension": 2, "kernel_spatial_dimensions": (0,),
                 "output_batch_dimension": 0, "output_feature_dimension": 2, "output_spatial_dimensions": (1,),
                 "feature_group_count": 1, "batch_group_count": 1, "precision_config": config}
        inst = spec.instance({"lhs": TensorType((1, 5, 2), t), "rhs": TensorType((3, 2, 2), t)}, attrs,
                             {"result": TensorType((1, 3, 2), t)})
        skel2 = dataclasses.replace(skel, attrs=tuple((k, config if k == "precision_config" else v)
                                                      for k, v in skel.attrs))
        out.append((f"precision_config {list(config)}", skel2, inst))
    return out


def mixed_precision(spec, skels, rng):
    """A result of another element type than the operands' — what JAX's
    `conv_general_dilated(..., preferred_element_type=...)` writes —, which
    C27 refuses (and v1.20's C27 too: module docstring): bf16 × bf16 → f32
    and si8 × si8 → si32 on `_built_corners`' 1-D convolution, invalid cases
    (`Exercise.appended`: after every other case)."""
    out = []
    for src, dst in (("bf16", "f32"), ("si8", "si32")):
        skel = next((s for s in skels if s.operand_types[0] == s.operand_types[1]
                     and s.operand_types[0].name == src
                     and dict(s.attrs).get("precision_config") == ("DEFAULT", "DEFAULT")), None)
        if skel is None:
            continue
        t, r = skel.operand_types[0], element_type_named(dst)
        attrs = dict(ONE_D_WINDOW_3)
        inst = spec.instance({"lhs": TensorType((1, 5, 2), t), "rhs": TensorType((3, 2, 2), t)}, attrs,
                             {"result": TensorType((1, 3, 2), r)})
        out.append((f"mixed precision {src} x {src} -> {dst} (preferred_element_type)", "convolution_c27", skel, inst))
    return out


SPEC = OpSpec(
    mnemonic="convolution",
    operands=(Operand("lhs", ANY), Operand("rhs", ANY)),
    attributes=(
        Attribute("window_strides", I64ArrayAttr(), optional=True, length=_spatial),
        Attribute("padding", I64MatrixAttr(), optional=True, length=_spatial),
        Attribute("lhs_dilation", I64ArrayAttr(), optional=True, length=_spatial),
        Attribute("rhs_dilation", I64ArrayAttr(), optional=True, length=_spatial),
        Attribute("window_reversal", BoolArrayAttr(), optional=True, length=_spatial),
        Attribute("input_batch_dimension", IntAttr(), group=GROUP),
        Attribute("input_feature_dimension", IntAttr(), group=GROUP),
        Attribute("input_spatial_dimensions", I64ArrayAttr(), group=GROUP, length=_spatial),
        Attribute("kernel_input_feature_dimension", IntAttr(), group=GROUP),
        Attribute("kernel_output_feature_dimension", IntAttr(), group=GROUP),
        Attribute("kernel_spatial_dimensions", I64ArrayAttr(), group=GROUP, length=_spatial),
        Attribute("output_batch_dimension", IntAttr(), group=GROUP),
        Attribute("output_feature_dimension", IntAttr(), group=GROUP),
        Attribute("output_spatial_dimensions", I64ArrayAttr(), group=GROUP, length=_spatial),
        Attribute("feature_group_count", IntAttr()),
        Attribute("batch_group_count", IntAttr()),
        # The second choice, of the wrong length, is how a negative case for C25 is found.
        Attribute("precision_config", EnumListAttr("precision", PRECISIONS),
                  choices=(("DEFAULT", "DEFAULT"), ("DEFAULT",)), default=("DEFAULT", "DEFAULT")),
    ),
    results=(Result("result", ANY),),
    constraints=(convolution_c1, convolution_c2, convolution_c3, convolution_c4, convolution_c5, convolution_c6,
                 convolution_c7, convolution_c8, convolution_c9, convolution_c10, convolution_c11, convolution_c12,
                 convolution_c13, convolution_c14, convolution_c15, convolution_c16, convolution_c17,
                 convolution_c18, convolution_c19, convolution_c20, convolution_c21, convolution_c22,
                 convolution_c23, convolution_c24, convolution_c25, convolution_c26, convolution_c27,
                 convolution_c28),
    infer=infer,
    semantics=Accumulating(arrays, working=working_bytes, bilinear=("lhs", "rhs"), bilinear_form=bilinear_form),
    groups=(ConvDimensionsGroup(GROUP, "stablehlo.conv", FIELDS),),
    exercise=Exercise(corners=CORNERS, built_corners=_built_corners, elided=ELIDED, appended=mixed_precision),
    check_ranks=(3,),   # C4, C7, C9, C13, C18, C20: the spatial rules need N - 2 ≥ 1
    # v1.20: lhs "per-tensor quantized", rhs and result "quantized tensor"; dequantize_op_quantize, and
    # hybrid_dequantize_then_op (float lhs, quantized rhs, float result) — the same rule: only quantized
    # tensors are dequantized, only a quantized result quantized (oracle/quantized.py)
    quantization=_QUANTIZATION,
)
