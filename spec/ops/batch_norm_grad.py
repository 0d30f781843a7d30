"""batch_norm_grad — gradients of batch_norm_training backpropagated from `grad_output` (spec section "batch_norm_grad").

Semantics: the seed's decomposition — "the implementation from
batchnorm_expander.cc in XLA", temporaries named as there — run as written
(`Decomposition`, oracle/decomposition.py):

    grad_operand = (scale / stddev / N) · ((grad_output·N − Σ grad_output)
                   − (centered · Σ(grad_output·centered)) / (variance + ε))
    grad_scale   = Σ grad_output · normalized
    grad_offset  = Σ grad_output

(Σ over every dimension but `feature_index`, N the elements per feature,
`centered = operand − mean`, `stddev = sqrt(variance + ε)`).  The
decomposition states the function and an implementation may fuse it
(batch_norm_inference's module docstring gives the reading): each step
rounds as its op does or is kept exact / in a wider format, the sums are
reduce's (any schedule: bounded, spec/schedule.py) and the steps after
carry their bounds.  XLA's expander computes grad_scale as
Σ(grad_output·centered) · rsqrt(variance + ε) — another order of the same
mathematics: it passes wherever it lands inside those bounds.

Findings (docs/spec-findings.md):
* `compute_sum(multiply(grad_output, centered_operand))` passes no
  `feature_index`: read as the same `feature_index` (the only meaning that
  gives `i3` the shape `broadcast_in_dim(…, [feature_index], …)` needs).
* `divide(divide(scale_bcast, stddev), elements_per_feature)` divides a
  tensor by the rank-0 constant; divide C1 wants the same type: read as
  `elements_per_feature` broadcast to shape(operand), as `i1` writes it.
* `elements_per_feature = constant(divide(size(operand), dim(operand,
  feature_index)))` has no stated type: N rounded to nearest into the
  element type (as the expander converts it; in f16, N ≥ 65520 is inf and
  grad_operand becomes NaN or 0).  Where `dim(operand, feature_index)` is 0
  it is a division by zero that nothing reads (every result is empty).
* `compute_mean` is defined and never used.
* The Inputs table gives `epsilon` no constraint and `scale` (C2), (C4),
  (C5): consistent with the Constraints.
"""
from __future__ import annotations

from fractions import Fraction

from ..dsl import FLOAT, Attribute, Decomposition, IntAttr, OpSpec, Operand, Result, element_type, same_shape, shape
from ..exercise import PAST_SMALL_INTEGERS, Exercise
from ..symbolic import Skeleton
from ..types import E_F32, TensorType
from .batch_norm_inference import (F32Attr, built_corners_for, feature_corners, feature_dim, feature_index_in_range,
                                   operand_values, size_of)
from ..dsl.quantization import Quantization
from ..quantized import baseline_element_type


def _same_baseline_element_type(*ts) -> bool:
    """v1.20's "have the same `baseline_element_type`" (its C2)."""
    return len({baseline_element_type(t) for t in ts}) == 1


def batch_norm_grad_c1(op):
    """(C1) 0 $\\le$ `feature_index` $\\lt$ rank(`operand`)."""
    return feature_index_in_range(op)


def batch_norm_grad_c2(op):
    """(C2) `operand`, `scale`, `mean`, `variance`, `grad_output`, `grad_operand`
       `grad_scale` and `grad_offset` have the same element type.

    v1.20 reads "the same `baseline_element_type`": the same for every non-quantized type; per-tensor
    quantized tensors may differ in scales and zero points."""
    return _same_baseline_element_type(op.operand, op.scale, op.mean, op.variance, op.grad_output, op.grad_operand,
                                       op.grad_scale, op.grad_offset)


def batch_norm_grad_c3(op):
    """(C3) `operand`, `grad_output` and `grad_operand` have the same shape."""
    return same_shape(op.operand, op.grad_output, op.grad_operand)


def batch_norm_grad_c4(op):
    """(C4) `scale`, `mean`, `variance`, `grad_scale` and `grad_offset` have the
       same shape."""
    return same_shape(op.scale, op.mean, op.variance, op.grad_scale, op.grad_offset)


def batch_norm_grad_c5(op):
    """(C5) size(`scale`) $=$ `dim(operand, feature_index)`."""
    return size_of(op.scale) == feature_dim(op, size_of(op.scale))


def infer(op):
    et = element_type(op.operand)
    features = TensorType(shape(op.scale), et)
    return {"grad_operand": TensorType(shape(op.operand), et), "grad_scale": features, "grad_offset": features}


# --------------------------------------------------------------------------
# Semantics: the seed's decomposition, line by line
# --------------------------------------------------------------------------

def compute_sum(op, b, operand):
    """The seed's `compute_sum(operand, feature_index)`."""
    t = operand.type
    (sum_,) = b.reduce(inputs=[operand], init_values=[b.constant(0, element_type(t))],
                       dimensions=[i for i in range(len(t.shape)) if i != op.feature_index], body="add")
    return sum_


def decomposition(op, b, operand, scale, mean, variance, grad_output):
    """```python
    def batch_norm_grad(operand, scale, mean, variance, grad_output, epsilon, feature_index):
    ```
    as the seed writes it, with its two defects read as the module
    docstring says."""
    feature_index, et, s = op.feature_index, element_type(op.operand), shape(op.operand)
    # Broadcast inputs to shape(operand)
    scale_bcast = b.broadcast_in_dim(scale, [feature_index], s)
    mean_bcast = b.broadcast_in_dim(mean, [feature_index], s)
    variance_bcast = b.broadcast_in_dim(variance, [feature_index], s)
    epsilon_bcast = b.broadcast_in_dim(b.constant(op.epsilon, et), [], s)

    # Perform normalization using the provided `mean` and `variance`
    # Intermediate values will be useful for computing gradients
    centered_operand = b.subtract(operand, mean_bcast)
    stddev = b.sqrt(b.add(variance_bcast, epsilon_bcast))
    normalized_operand = b.divide(centered_operand, stddev)

    # Use the implementation from batchnorm_expander.cc in XLA
    # Temporary variables have exactly the same names as in the C++ code
    n, features = size_of(op.operand), s[feature_index]
    elements_per_feature = b.constant(Fraction(n, features) if features else 0, et)
    i1 = b.multiply(grad_output, b.broadcast_in_dim(elements_per_feature, [], s))
    i2 = b.broadcast_in_dim(compute_sum(op, b, grad_output), [feature_index], s)
    i3 = b.broadcast_in_dim(compute_sum(op, b, b.multiply(grad_output, centered_operand)), [feature_index], s)
    i4 = b.multiply(i3, centered_operand)
    i5 = b.divide(i4, b.add(variance_bcast, epsilon_bcast))
    grad_operand = b.multiply(
        b.divide(b.divide(scale_bcast, stddev), b.broadcast_in_dim(elements_per_feature, [], s)),
        b.subtract(b.subtract(i1, i2), i5))
    grad_scale = compute_sum(op, b, b.multiply(grad_output, normalized_operand))
    grad_offset = compute_sum(op, b, grad_output)
    return [grad_operand, grad_scale, grad_offset]


def _make(spec, et, shape_, feature_index, epsilon):
    t = TensorType(shape_, et)
    f = TensorType((shape_[feature_index],), et)
    inst = spec.instance({"operand": t, "scale": f, "mean": f, "variance": f, "grad_output": t},
                         {"epsilon": epsilon, "feature_index": feature_index})
    inst.results.update(spec.infer(inst))
    return inst


def quantized_example(types: dict):
    """A valid batch_norm_grad of a 2×3×4 operand over feature dimension 1
    (epsilon 1, so a variance quantized to 0 does not saturate every output),
    of the element types `types` names (by operand and result; f32 where
    not named)."""
    from ..types import E_F32
    et = lambda n: types.get(n, E_F32)   # noqa: E731
    return SPEC.instance({"operand": TensorType((2, 3, 4), et("operand")),
                          **{n: TensorType((3,), et(n)) for n in ("scale", "mean", "variance")},
                          "grad_output": TensorType((2, 3, 4), et("grad_output"))},
                         {"epsilon": 1.0, "feature_index": 1},
                         {"grad_operand": TensorType((2, 3, 4), et("grad_operand")),
                          "grad_scale": TensorType((3,), et("grad_scale")), "grad_offset": TensorType((3,), et("grad_offset"))})


def past_small_integers(spec, skels, rng):
    """PAST_SMALL_INTEGERS features: C5 compares the size of `scale` with
    the feature dimension."""
    x, feat = TensorType((2, PAST_SMALL_INTEGERS), E_F32), TensorType((PAST_SMALL_INTEGERS,), E_F32)
    yield (f"{PAST_SMALL_INTEGERS} features (past CPython's shared small integers)", None,
           Skeleton(spec.mnemonic, (E_F32,) * 5),
           spec.instance({"operand": x, "scale": feat, "mean": feat, "variance": feat, "grad_output": x},
                         {"epsilon": 0.5, "feature_index": 1}, {"grad_operand": x, "grad_scale": feat, "grad_offset": feat}))


SPEC = OpSpec(
    mnemonic="batch_norm_grad",
    operands=(Operand("operand", FLOAT), Operand("scale", FLOAT, rank=1), Operand("mean", FLOAT, rank=1),
              Operand("variance", FLOAT, rank=1), Operand("grad_output", FLOAT)),
    attributes=(Attribute("epsilon", F32Attr()), Attribute("feature_index", IntAttr())),
    results=(Result("grad_operand", FLOAT), Result("grad_scale", FLOAT, fixed_rank=1),
             Result("grad_offset", FLOAT, fixed_rank=1)),
    constraints=(batch_norm_grad_c1, batch_norm_grad_c2, batch_norm_grad_c3, batch_norm_grad_c4, batch_norm_grad_c5),
    infer=infer,
    semantics=Decomposition(decomposition, fusable=True),
    exercise=Exercise(operand_values=operand_values, corners=feature_corners(5, activations=(0, 4)),
                      built_corners=built_corners_for(_make), appended_last=past_small_integers),
    # v1.20: "or per-tensor quantized" for every tensor; dequantize_batch_norm_grad_or_training_quantize: the
    # inputs dequantized, the float op, each of its three results quantized into its own type
    quantization=Quantization(example=quantized_example, skeletons=False),
)
