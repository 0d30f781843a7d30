"""batch_norm_inference — normalize `operand` with given mean and variance (spec section "batch_norm_inference").

Semantics: the seed's decomposition into existing StableHLO ops, run as
written (`Decomposition`, executed by oracle/decomposition.py): broadcast
the per-feature inputs along `feature_index`, then
`add(multiply(scale, divide(subtract(operand, mean), sqrt(add(variance,
epsilon)))), offset)`, each op rounding as its own section says.

Reading: **the decomposition states what is computed; an implementation
may fuse it** (`Decomposition(..., fusable=True)`).  The same reading
holds for batch_norm_training and batch_norm_grad.  The seed: "More
formally, this operation can be expressed as a decomposition to existing
StableHLO operations".  "Can be expressed as" asserts an equivalence of
meaning — which function (epsilon inside the square root, the two-pass
biased variance, N per feature) — not an evaluation the implementation
must perform: the op exists beside its decomposition so that it can be
computed as one (cuDNN's fused kernels, XLA's own expander with rsqrt
and E[x²] − E[x]², which batch_norm_grad's decomposition cites), and the
seed's Accuracy section gives no guarantee of numerical accuracy.  What
the seed does not license is another function, or less accuracy than any
evaluation of its decomposition.  So the expectation is every evaluation
of the decomposition in which each step is either rounded into the
element type as written, or kept exact / in a wider format (fused, an
FMA, f32 arithmetic for bf16): oracle/decomposition.py (`Fused`) lets each
rounding step give either neighbour of its exact value (exact steps,
found by error-free transformations, stay points), each inexact constant
(epsilon, N) lie between its two neighbours, an overflowing step reach
the largest finite, and carries these ranges with reduce's schedule
bounds through the steps after.  The literal decomposition, the exact
result rounded once and float64 throughout rounded once all pass
(tests/spec/test_ops_batch_norm.py: test_fused_evaluations_pass); the N − 1
variance, epsilon outside the square root, the wrong feature dimension,
grad without its variance term, and one value past the bound fail.
Looseness, stated: a step's range is one value on each side of the
correctly rounded result (the side the exact value lies on is not
tracked), and corners are taken at the ends of ranges (a constant whose
lower neighbour is 0 makes 0/0 a corner: the element is then open,
"any value", labelled).

Findings (docs/spec-findings.md):
* `constant(epsilon)` has no stated type; `add(variance_bcast,
  epsilon_bcast)` requires the element type of `variance` (add C1), so it
  is read as the f32 `epsilon` correctly rounded into the operand's element
  type (a decimal literal of that type reads so; XLA's expander converts
  it the same way).  In f8E4M3FN an epsilon of 1e-5 rounds to 0.
* The Inputs table marks `epsilon` with no constraint and `feature_index`
  with (C1), (C3-C6) — consistent here (training's table is not).

Exercise: `epsilon` is a float attribute (`F32Attr`, values a generator
chooses from); hand-built corners put every epsilon at the edges (0, the
smallest f32 subnormal, 1e-5, 1, the largest f32, +inf, negative) on every
float type and `feature_index` in every position; operand values come in
regimes (data around a per-feature mean, a large common offset, constant
features, huge and tiny magnitudes, special values sprinkled), variance
includes 0 and negative values.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

import mpmath
import numpy as np

from ..dsl import (FLOAT, Attribute, Decomposition, EnumAttr, IntAttr, OpSpec, Operand, Result, at, element_type,
                   in_range, rank, shape)
from ..exercise import Chosen, Corner, Exercise
from ..ieee import round_to_precision
from ..symbolic import Skeleton
from ..types import E_F32, TensorType
from ..dsl.quantization import Quantization
from ..quantized import baseline_element_type, same_baseline_type


# --------------------------------------------------------------------------
# `epsilon`: a "constant of type f32"
# --------------------------------------------------------------------------

def f32(x) -> float:
    """The f32 value nearest the exact real `x` (ties to even; ±inf past the
    overflow threshold), as a Python float; floats' specials pass through."""
    if isinstance(x, float) and (x != x or x in (float("inf"), float("-inf")) or x == 0):
        return x
    q = Fraction(x)
    if q == 0:
        return 0.0
    fmt = E_F32.format
    r = round_to_precision(abs(q), fmt.precision, fmt.emin)
    if r > fmt.max_finite:
        return float("-inf") if q < 0 else float("inf")
    return float(-r if q < 0 else r)


EPSILONS = (float(np.float32(1e-5)), 0.0, float(np.float32(1e-3)))   # what random structures choose from
EPSILON_EDGES = (0.0, 2.0 ** -149, float(np.float32(1e-5)), 1.0, float(np.finfo(np.float32).max),
                 float("inf"), -1.0)                                  # what the built corners put on every type


@dataclass(frozen=True)
class F32Attr(EnumAttr):
    """A "constant of type `f32`" (batch norm's `epsilon`), written
    `<value> : f32`: the shortest decimal that reads back as the value, or
    the bit pattern in hex for ±inf and NaN (MLIR's spelling).  `values`
    are what a generator chooses from (structure, like an enum's values); a
    program may hold any f32, read exactly (a decimal literal is rounded to
    nearest even, as MLIR reads it)."""

    mlir_name: str = "f32"
    values: tuple = EPSILONS

    def to_mlir(self, v) -> str:
        v = f32(float(v))
        if v != v or v in (float("inf"), float("-inf")):
            bits = int(np.array(v, dtype=np.float32).view(np.uint32))
            return f"0x{bits:08X} : f32"
        # MLIR's float literal needs a point; the repr of a finite f32 value always has
        # one (a pointless repr is one digit and an exponent, `de±k`, and no float('de±k')
        # is an f32 value: tests/spec/test_semantics_gaps.py enumerates them).
        return f"{repr(v)} : f32"

    def from_mlir(self, text: str) -> float:
        body, _, typ = text.strip().rpartition(":")
        if typ.strip() != "f32":
            raise ValueError(f"expected a constant of type f32, got {text!r}")
        lit = body.strip()
        if lit.lower().startswith("0x"):
            bits = int(lit, 16)
            if bits >= 1 << 32:
                raise ValueError(f"{lit} is not an f32 bit pattern")
            return float(np.array(bits, dtype=np.uint32).view(np.float32))
        try:
            v = f32(Fraction(Decimal(lit)))
        except ArithmeticError:
            raise ValueError(f"{lit!r} is not a float literal") from None
        # a Fraction has one zero: `-0.0` (or a negative literal below half the least subnormal) is -0,
        # which decides the sign of an infinity where the variance is -0 too
        return -0.0 if v == 0 and lit.startswith("-") else v


# --------------------------------------------------------------------------
# Constraints (shared reading of `dim(operand, feature_index)`)
# --------------------------------------------------------------------------

def feature_dim(op, like):
    """`dim(operand, feature_index)`.  Where `feature_index` is out of range
    (C1's business) it names no dimension: `like` is returned, so a rule
    comparing a size with it reads as holding and a program is blamed on the
    one constraint it breaks (C1)."""
    return at(shape(op.operand), op.feature_index, default=like)


def size_of(t: TensorType):
    """The seed's `size(x)` of a 1-dimensional tensor: its number of elements."""
    n = 1
    for d in shape(t):
        n = n * d
    return n


def feature_index_in_range(op):
    return in_range(op.feature_index, 0, rank(op.operand))


def _same_baseline_element_type(*ts) -> bool:
    """v1.20's "have the same `baseline_element_type`" (its C2)."""
    return len({baseline_element_type(t) for t in ts}) == 1


def batch_norm_inference_c1(op):
    """(C1) 0 $\\le$ `feature_index` $\\lt$ rank(`operand`)."""
    return feature_index_in_range(op)


def batch_norm_inference_c2(op):
    """(C2) `operand`, `scale`, `offset`, `mean`, `variance` and `result` have the
  same element type.

    v1.20 reads "the same `baseline_element_type`": the same for every non-quantized type; per-tensor
    quantized tensors may differ in scales and zero points."""
    return _same_baseline_element_type(op.operand, op.scale, op.offset, op.mean, op.variance, op.result)


def batch_norm_inference_c3(op):
    """(C3) size(`scale`) $=$ `dim(operand, feature_index)`."""
    return size_of(op.scale) == feature_dim(op, size_of(op.scale))


def batch_norm_inference_c4(op):
    """(C4) size(`offset`) $=$ `dim(operand, feature_index)`."""
    return size_of(op.offset) == feature_dim(op, size_of(op.offset))


def batch_norm_inference_c5(op):
    """(C5) size(`mean`) $=$ `dim(operand, feature_index)`."""
    return size_of(op.mean) == feature_dim(op, size_of(op.mean))


def batch_norm_inference_c6(op):
    """(C6) size(`variance`) $=$ `dim(operand, feature_index)`."""
    return size_of(op.variance) == feature_dim(op, size_of(op.variance))


def batch_norm_inference_c7(op):
    """(C7) `operand` and `result` have the same type.

    v1.20 reads `baseline_type(…) = baseline_type(…)`: the same for every non-quantized type."""
    return same_baseline_type(op.operand, op.result)


def infer(op):
    return {"result": op.operand}


# --------------------------------------------------------------------------
# Semantics: the seed's decomposition, line by line
# --------------------------------------------------------------------------

def decomposition(op, b, operand, scale, offset, mean, variance):
    """```python
    def batch_norm_inference(operand, scale, offset, mean, variance, epsilon, feature_index):
    ```
    as the seed writes it; `constant(epsilon)` in the operand's element type
    (module docstring)."""
    feature_index, et = op.feature_index, element_type(op.operand)
    # Broadcast inputs to shape(operand)
    scale_bcast = b.broadcast_in_dim(scale, [feature_index], shape(op.operand))
    offset_bcast = b.broadcast_in_dim(offset, [feature_index], shape(op.operand))
    mean_bcast = b.broadcast_in_dim(mean, [feature_index], shape(op.operand))
    variance_bcast = b.broadcast_in_dim(variance, [feature_index], shape(op.operand))
    epsilon_bcast = b.broadcast_in_dim(b.constant(op.epsilon, et), [], shape(op.operand))

    # Perform normalization using the provided `mean` and `variance` instead of
    # computing them like `batch_norm_training` does.
    centered_operand = b.subtract(operand, mean_bcast)
    stddev = b.sqrt(b.add(variance_bcast, epsilon_bcast))
    normalized_operand = b.divide(centered_operand, stddev)
    return [b.add(b.multiply(scale_bcast, normalized_operand), offset_bcast)]


# --------------------------------------------------------------------------
# Exercise (shared by the three batch norm ops)
# --------------------------------------------------------------------------

OPERAND_REGIMES = ("spread", "spread", "spread", "offset", "constant", "huge", "tiny", "specials")


def pow2(u) -> np.ndarray:
    """2^u for each float64 in u, the same bits on every machine.  numpy's
    `2.0 ** u` is not: it dispatches to the CPU's SIMD kernels (on AVX-512
    hosts, SVML's pow, which differs from glibc's in the last bit on about 5%
    of arguments), so suites/core's batch norm inputs came out one bit apart
    on two machines.  mpmath computes at 80 bits and rounds once to float64:
    deterministic, and equal to the correctly rounded value except where 2^u
    lies within 2^-80 of a midpoint."""
    with mpmath.workprec(80):
        out = [float(mpmath.power(2, mpmath.mpf(float(x)))) for x in np.reshape(u, -1)]
    return np.reshape(np.array(out, dtype=np.float64), np.shape(u))


def _per_feature(t: TensorType, feature_index: int, values: np.ndarray) -> np.ndarray:
    """A per-feature vector laid along `feature_index` of an array of type t."""
    r = len(t.shape)
    shape = [1] * r
    shape[feature_index] = -1
    return np.reshape(values, shape)


def data(t: TensorType, feature_index, rng) -> np.ndarray:
    """Activations (operand, grad_output) of type t in a regime drawn from
    rng: per-feature means and spreads, a large common offset (where
    E[x²] − E[x]² cancels), constant features (zero variance), magnitudes
    near sqrt of the largest finite (squares overflow) and near the smallest
    normal, or special values sprinkled."""
    et = t.element_type
    shape_ = tuple(int(d) for d in t.shape)
    n = int(np.prod(shape_, dtype=np.int64)) if shape_ else 1
    fmt = et.format
    big, small = float(fmt.max_finite), float(fmt.min_normal)
    fi = int(feature_index) if 0 <= int(feature_index) < len(shape_) else None
    k = shape_[fi] if fi is not None else 1
    regime = OPERAND_REGIMES[int(rng.integers(len(OPERAND_REGIMES)))]
    z = rng.standard_normal(shape_ if shape_ else ())
    means = rng.uniform(-4, 4, size=k)
    spreads = pow2(rng.uniform(-3, 2, size=k))
    lay = (lambda v: _per_feature(t, fi, v)) if fi is not None else (lambda v: v[0])
    if regime == "spread":
        x = lay(means) + lay(spreads) * z
    elif regime == "offset":
        x = lay(means) * 2.0 ** min(fmt.precision - 3, 12) + lay(spreads) * z
    elif regime == "constant":
        x = lay(means) + 0 * z
    elif regime == "huge":
        x = np.sqrt(big) * pow2(rng.uniform(-1, 1, size=z.shape)) * np.sign(z + 0.5)
    elif regime == "tiny":
        x = small * pow2(rng.uniform(-fmt.mantissa_bits, 3, size=z.shape)) * np.sign(z)
    else:
        x = lay(means) + lay(spreads) * z
        specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, big, -big])
        if n:
            flat = np.reshape(x, -1).copy()
            pick = rng.random(n) < 0.2
            flat[pick] = specials[rng.integers(len(specials), size=int(pick.sum()))]
            x = flat.reshape(shape_)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(x, dtype=np.float64).astype(et.numpy).reshape(shape_)


def per_feature(name: str, t: TensorType, rng) -> np.ndarray:
    """A per-feature input: scale around 1 (some 0 and negative), offset and
    mean around 0, variance positive over many binades with some 0 (a
    division by zero where epsilon is 0), tiny and negative entries."""
    et = t.element_type
    n = int(np.prod([int(d) for d in t.shape], dtype=np.int64)) if t.shape else 1
    if name == "scale":
        v = rng.normal(1.0, 0.5, n)
        v[rng.random(n) < 0.15] = 0.0
    elif name == "variance":
        v = pow2(rng.uniform(-6, 6, n))
        u = rng.random(n)
        v[u < 0.15] = 0.0
        v[(u >= 0.15) & (u < 0.22)] = float(et.format.min_normal)
        v[(u >= 0.22) & (u < 0.27)] *= -1
    else:
        v = rng.normal(0.0, 2.0, n)
    with np.errstate(over="ignore", invalid="ignore"):
        return v.astype(et.numpy).reshape(tuple(int(d) for d in t.shape))


ACTIVATIONS = ("operand", "grad_output")


CHOSEN = Chosen()   # the values an `appended_last` builder chose for its instance; the others are drawn


def operand_values(op, name, k, t, rng):
    """`Exercise.operand_values` of the three batch norm ops (see `data`,
    `per_feature`); an instance's CHOSEN values where its builder chose them."""
    got = CHOSEN(op, name, k, t, rng)
    if got is not None:
        return got
    if not isinstance(t, TensorType) or not t.element_type.is_float:
        return None
    if name in ACTIVATIONS:
        return data(t, op.feature_index, rng)
    return per_feature(name, t, rng)


def feature_corners(operands: int, activations: tuple = (0,)):
    """`feature_index` in every position of a rank-4 and a rank-5 operand
    (the activations — operand, grad_output: positions `activations` of the
    `operands` — of that rank, the per-feature operands rank 1 as the
    tables fix them), a long reduced batch, and a zero-sized batch and
    feature dimension."""
    def ranks(r):
        return tuple(r if i in activations else 1 for i in range(operands))
    out = [Corner(f"feature_index = {i} of rank 4", ranks(4), lambda op, i=i: [op.feature_index == i],
                  max_dim=5) for i in range(4)]
    out.append(Corner("feature_index = 4 of rank 5 (last)", ranks(5), lambda op: [op.feature_index == 4], max_dim=3))
    out.append(Corner("feature_index = 0 of rank 1 (one element per feature)", ranks(1), lambda op: []))
    out.append(Corner("long batch", ranks(2), lambda op: [op.feature_index == 1, op.operand.shape[0] >= 20],
                      max_dim=48))
    out.append(Corner("zero-sized batch", ranks(2),
                      lambda op: [op.feature_index == 1, op.operand.shape[0] == 0, op.operand.shape[1] >= 1]))
    out.append(Corner("zero-sized feature dimension", ranks(2),
                      lambda op: [op.feature_index == 1, op.operand.shape[1] == 0, op.operand.shape[0] >= 1]))
    return tuple(out)


def built_corners_for(make):
    """`Exercise.built_corners`: every epsilon of EPSILON_EDGES on every
    float type (operand 2×3×4, feature_index 1), and a model-like layout
    (8×3×6×6, feature_index 1) per float type.  `make(spec, et, shape,
    feature_index, epsilon)` builds the op's instance."""
    def built(spec, skels, rng):
        out = []
        by_type = {}
        for s in skels:
            if len(set(s.operand_types)) == 1:
                by_type.setdefault(s.operand_types[0], s)
        for et, skel in by_type.items():
            for eps in EPSILON_EDGES:
                out.append((f"epsilon = {eps!r}", skel, make(spec, et, (2, 3, 4), 1, eps)))
            out.append(("model-like layout NCHW, feature_index 1", skel,
                        make(spec, et, (8, 3, 6, 6), 1, EPSILONS[0])))
        return out
    return built


def _make(spec, et, shape_, feature_index, epsilon):
    t = TensorType(shape_, et)
    f = TensorType((shape_[feature_index],), et)
    inst = spec.instance({"operand": t, "scale": f, "offset": f, "mean": f, "variance": f},
                         {"epsilon": epsilon, "feature_index": feature_index})
    inst.results.update(spec.infer(inst))
    return inst


def negative_infinite_epsilon(spec, skels, rng):
    """epsilon = -inf (no constraint reads epsilon): F32Attr writes it as the
    bit pattern 0xFF800000, whose sign bit is set — an f32 pattern all the
    same, below 2^32.  variance + epsilon is -inf, its square root NaN, so
    is every output.  EPSILON_EDGES' only hex literal is +inf's."""
    yield ("epsilon = -inf (written 0xFF800000 : f32)", None, Skeleton(spec.mnemonic, (E_F32,) * 5),
           _make(spec, E_F32, (2, 3, 4), 1, float("-inf")))


# epsilon 2^-1 - 2^-25: an f32 of odd significand whose shortest decimal, 0.4999999701976776 = n/10^16, has
# bit_length(n) - bit_length(10^16) = -1, one binade above its own (-2): an exact reading corrects that estimate
CANCELLING_EPSILON = 0.5 - 2.0 ** -25


def epsilon_cancelled_by_the_variance(spec, skels, rng):
    """epsilon = 2^-1 - 2^-25 over a variance of -(2^-1 - 3·2^-25) in
    feature 0: the sum is 2^-24 exactly (Sterbenz), its square root
    2^-12, so the centred operand is scaled by 4096 exactly, each step
    exact.  The decimal the case writes (F32Attr's shortest repr) rounds to
    that epsilon only when read exactly: read one binade too high (a floor
    of log2 not corrected down) it rounds to 2^-1, the sum is 3·2^-25 and
    the scale 2^12.5/√3 ≈ 3344 — an epsilon a reader got one ulp wrong,
    made visible by the cancellation.  Features 1 and 2: variance 1 and
    1/4 (scales 1/√(1+ε) and 1/√(1/4+ε), approximate)."""
    inst = _make(spec, E_F32, (2, 3, 4), 1, float(np.float32(CANCELLING_EPSILON)))
    x = np.array([1.0, -2.0, 0.5, 3.0, -0.25, 8.0, 1.5, -1.0, 2.0, 0.75, -4.0, 0.125] * 2, np.float32).reshape(2, 3, 4)
    ones, zeros = np.ones(3, np.float32), np.zeros(3, np.float32)
    variance = np.array([-(0.5 - 3 * 2.0 ** -25), 1.0, 0.25], np.float32)
    yield ("epsilon 2^-1 - 2^-25 cancelled by a variance of -(2^-1 - 3·2^-25) to 2^-24: scale 4096 exactly", None,
           Skeleton(spec.mnemonic, (E_F32,) * 5),
           CHOSEN.choose(inst, operand=x, scale=ones, offset=zeros, mean=zeros, variance=variance))


def quantized_example(types: dict):
    """A valid batch_norm_inference of a 2×3×4 operand over feature
    dimension 1 (three features; epsilon 1, so a variance quantized to 0 does not
    saturate every output), of the element types `types` names (by
    operand and result; f32 where not named)."""
    et = lambda n: types.get(n, E_F32)   # noqa: E731
    return SPEC.instance({"operand": TensorType((2, 3, 4), et("operand")),
                          **{n: TensorType((3,), et(n)) for n in ("scale", "offset", "mean", "variance")}},
                         {"epsilon": 1.0, "feature_index": 1}, {"result": TensorType((2, 3, 4), et("result"))})


SPEC = OpSpec(
    mnemonic="batch_norm_inference",
    operands=(Operand("operand", FLOAT), Operand("scale", FLOAT, rank=1), Operand("offset", FLOAT, rank=1),
              Operand("mean", FLOAT, rank=1), Operand("variance", FLOAT, rank=1)),
    attributes=(Attribute("epsilon", F32Attr()), Attribute("feature_index", IntAttr())),
    results=(Result("result", FLOAT),),
    constraints=(batch_norm_inference_c1, batch_norm_inference_c2, batch_norm_inference_c3, batch_norm_inference_c4,
                 batch_norm_inference_c5, batch_norm_inference_c6, batch_norm_inference_c7),
    infer=infer,
    semantics=Decomposition(decomposition, fusable=True),
    exercise=Exercise(operand_values=operand_values, corners=feature_corners(5),
                      built_corners=built_corners_for(_make),
                      appended_last=(negative_infinite_epsilon, epsilon_cancelled_by_the_variance)),
    # v1.20: "or per-tensor quantized" for every tensor; dequantize_op_quantize(lambda operand, scale, offset,
    # mean, variance: batch_norm_inference(…), operand, scale, offset, mean, variance, type(result))
    quantization=Quantization(example=quantized_example, skeletons=False),
)
