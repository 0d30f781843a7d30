"""batch_norm_training — batch mean and variance, and `operand` normalized by them (spec section "batch_norm_training").

Semantics: the seed's decomposition, run as written (`Decomposition`,
oracle/decomposition.py): `compute_mean` is a `reduce` with an `add` body
over every dimension but `feature_index`, divided by the number of
elements per feature; `compute_variance` is the mean of the squared
deviations from that mean (two passes, the biased 1/N variance); then
`batch_norm_inference` — the op itself, as the seed calls it — normalizes
with them.  The decomposition states the function and an implementation
may fuse it (batch_norm_inference's module docstring gives the reading):
every step rounds as its op does or is kept exact / in a wider format; the
reductions' order is reduce's implementation-defined schedule, so the
results are bounded (spec/schedule.py) and the steps after carry those
bounds.  Dividing by N − 1 computes another function and fails; the
variance as E[x²] − E[x]² (XLA's batchnorm_expander) is the same function
and passes wherever its cancellation stays inside those bounds.

Findings (docs/spec-findings.md):
* The decomposition returns only `batch_norm_inference(…)`, one value,
  where the op has three results: `batch_mean` and `batch_var` are read as
  the `mean` and `variance` it computes (the Outputs table: "moments
  calculated across the batch").
* C2 names `result`, which this op does not have: read as `output`.
* The Inputs table gives `epsilon` the constraints "(C1), (C3-C6)" —
  `feature_index`'s row copied; epsilon takes part in none.
* `constant(num_elements(operand) / dim(operand, feature_index))` has no
  stated type; `divide(sum, divisor_bcast)` needs the element type (divide
  C1), so it is N per feature rounded to nearest into it (as XLA's
  expander converts it).  Read literally this makes large batches absurd in
  narrow types: in f16 N ≥ 65520 rounds to inf (32×56×56 = 100352 elements
  per feature of an NCHW activation), so mean = sum/inf = 0; in f8E4M3FN
  N ≥ 464 rounds to NaN.
* A zero-sized `feature_index` dimension makes that divisor a division by
  zero; nothing reads it (every result is empty), so any value serves.  A
  zero-sized other dimension gives N = 0: mean = 0/0 = NaN per feature.
"""
from __future__ import annotations

from fractions import Fraction

from ..dsl import FLOAT, Attribute, Decomposition, IntAttr, OpSpec, Operand, Result, element_type, shape
from ..exercise import Exercise
from ..types import TensorType
from .batch_norm_inference import (F32Attr, built_corners_for, feature_corners, feature_dim, feature_index_in_range,
                                   operand_values, size_of)
from ..dsl.quantization import Quantization
from ..quantized import baseline_element_type, same_baseline_type


def _same_baseline_element_type(*ts) -> bool:
    """v1.20's "have the same `baseline_element_type`" (its C2)."""
    return len({baseline_element_type(t) for t in ts}) == 1


def batch_norm_training_c1(op):
    """(C1) 0 $\\le$ `feature_index` $\\lt$ rank(`operand`)."""
    return feature_index_in_range(op)


def batch_norm_training_c2(op):
    """(C2) `operand`, `scale`, `offset`, `result`, `batch_mean` and `batch_var`
       have the same element type.

    `result` read as `output` (module docstring).

    v1.20 reads "the same `baseline_element_type`": the same for every non-quantized type; per-tensor
    quantized tensors may differ in scales and zero points."""
    return _same_baseline_element_type(op.operand, op.scale, op.offset, op.output, op.batch_mean, op.batch_var)


def batch_norm_training_c3(op):
    """(C3) size(`scale`) $=$ `dim(operand, feature_index)`."""
    return size_of(op.scale) == feature_dim(op, size_of(op.scale))


def batch_norm_training_c4(op):
    """(C4) size(`offset`) $=$ `dim(operand, feature_index)`."""
    return size_of(op.offset) == feature_dim(op, size_of(op.offset))


def batch_norm_training_c5(op):
    """(C5) size(`batch_mean`) $=$ `dim(operand, feature_index)`."""
    return size_of(op.batch_mean) == feature_dim(op, size_of(op.batch_mean))


def batch_norm_training_c6(op):
    """(C6) size(`batch_var`) $=$ `dim(operand, feature_index)`."""
    return size_of(op.batch_var) == feature_dim(op, size_of(op.batch_var))


def batch_norm_training_c7(op):
    """(C7) `operand` and `output` have the same type.

    v1.20 reads `baseline_type(…) = baseline_type(…)`: the same for every non-quantized type."""
    return same_baseline_type(op.operand, op.output)


def infer(op):
    """output: operand's type; batch_mean, batch_var: one element per
    feature (where `feature_index` is out of range, C1's business, the
    scale's size stands in)."""
    et = element_type(op.operand)
    features = TensorType((feature_dim(op, size_of(op.scale)),), et)
    return {"output": op.operand, "batch_mean": features, "batch_var": features}


# --------------------------------------------------------------------------
# Semantics: the seed's decomposition, line by line
# --------------------------------------------------------------------------

def compute_mean(op, b, operand):
    """The seed's `compute_mean(operand, feature_index)`."""
    feature_index, t, et = op.feature_index, operand.type, element_type(operand.type)
    (sum_,) = b.reduce(inputs=[operand], init_values=[b.constant(0, et)],
                       dimensions=[i for i in range(len(t.shape)) if i != feature_index], body="add")
    n, features = size_of(t), t.shape[feature_index]
    # num_elements / dim: exact (the dim divides it); unused where dim = 0 (every result is empty)
    divisor = b.constant(Fraction(n, features) if features else 0, et)
    divisor_bcast = b.broadcast_in_dim(divisor, [], shape(sum_.type))
    return b.divide(sum_, divisor_bcast)


def compute_variance(op, b, operand):
    """The seed's `compute_variance(operand, feature_index)`."""
    mean = compute_mean(op, b, operand)
    mean_bcast = b.broadcast_in_dim(mean, [op.feature_index], shape(operand.type))
    centered_operand = b.subtract(operand, mean_bcast)
    return compute_mean(op, b, b.multiply(centered_operand, centered_operand))


def decomposition(op, b, operand, scale, offset):
    """```python
    def batch_norm_training(operand, scale, offset, epsilon, feature_index):
    ```
    as the seed writes it, returning (output, mean, variance) (module
    docstring)."""
    mean = compute_mean(op, b, operand)
    variance = compute_variance(op, b, operand)
    output = b.batch_norm_inference(operand, scale, offset, mean, variance,
                                    epsilon=op.epsilon, feature_index=op.feature_index)
    return [output, mean, variance]


def _make(spec, et, shape_, feature_index, epsilon):
    t = TensorType(shape_, et)
    f = TensorType((shape_[feature_index],), et)
    inst = spec.instance({"operand": t, "scale": f, "offset": f}, {"epsilon": epsilon, "feature_index": feature_index})
    inst.results.update(spec.infer(inst))
    return inst


def quantized_example(types: dict):
    """A valid batch_norm_training of a 2×3×4 operand over feature dimension
    1 (epsilon 1, so a variance quantized to 0 does not saturate every output),
    of the element types `types` names (by operand and result; f32 where
    not named)."""
    from ..types import E_F32
    et = lambda n: types.get(n, E_F32)   # noqa: E731
    return SPEC.instance({"operand": TensorType((2, 3, 4), et("operand")), "scale": TensorType((3,), et("scale")),
                          "offset": TensorType((3,), et("offset"))},
                         {"epsilon": 1.0, "feature_index": 1},
                         {"output": TensorType((2, 3, 4), et("output")), "batch_mean": TensorType((3,), et("batch_mean")),
                          "batch_var": TensorType((3,), et("batch_var"))})


SPEC = OpSpec(
    mnemonic="batch_norm_training",
    operands=(Operand("operand", FLOAT), Operand("scale", FLOAT, rank=1), Operand("offset", FLOAT, rank=1)),
    attributes=(Attribute("epsilon", F32Attr()), Attribute("feature_index", IntAttr())),
    results=(Result("output", FLOAT), Result("batch_mean", FLOAT, fixed_rank=1),
             Result("batch_var", FLOAT, fixed_rank=1)),
    constraints=(batch_norm_training_c1, batch_norm_training_c2, batch_norm_training_c3, batch_norm_training_c4,
                 batch_norm_training_c5, batch_norm_training_c6, batch_norm_training_c7),
    infer=infer,
    semantics=Decomposition(decomposition, fusable=True),
    exercise=Exercise(operand_values=operand_values, corners=feature_corners(3),
                      built_corners=built_corners_for(_make)),
    # v1.20: "or per-tensor quantized" for every tensor; dequantize_batch_norm_grad_or_training_quantize: the
    # inputs dequantized, the float op, each of its three results quantized into its own type
    quantization=Quantization(example=quantized_example, skeletons=False),
)
