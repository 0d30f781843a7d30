"""batch_norm_inference, batch_norm_training, batch_norm_grad: constraints on
hand-made instances, inference, `epsilon`'s spelling, and semantics against
independent truth — hand-computed values, and the seed's decomposition
evaluated here in exact rationals with each step correctly rounded (our own
rounding, not the oracle's) under several reduction schedules, whose results
must meet the oracle's expectation as a suite judges it
(`suites.compare.compare`); results just past the stated bounds, and the
classic wrong implementations (the N − 1 variance, epsilon added after the
square root, the wrong feature dimension, grad without its variance term),
must not.

The seed's Examples run in tests/oracle/test_spec_examples.py.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import shlo_conform.oracle.decomposition  # noqa: F401  (registers the Decomposition rule)
from shlo_conform.generators import emit
from shlo_conform.generators.expect import expected_outputs
from shlo_conform.oracle.decomposition import decomposed, program_text
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.ops.batch_norm_inference import F32Attr
from shlo_conform.spec.types import (E_BF16, E_F8E4M3FN, E_F16, E_F32, E_F64, FLOAT_TYPES, TensorType,
                                     from_bits, to_bits)
from shlo_conform.suites.compare import compare

INF, TRAIN, GRAD = OPS["batch_norm_inference"], OPS["batch_norm_training"], OPS["batch_norm_grad"]


# --------------------------------------------------------------------------
# Instances
# --------------------------------------------------------------------------

def inference(shape, fi=1, eps=0.001, et=E_F32, sizes=None, result=None):
    k = shape[fi] if 0 <= fi < len(shape) else 2
    sizes = sizes or {}
    ops = {"operand": TensorType(tuple(shape), et)}
    ops.update({n: TensorType((sizes.get(n, k),), et) for n in ("scale", "offset", "mean", "variance")})
    inst = INF.instance(ops, {"epsilon": eps, "feature_index": fi})
    inst.results["result"] = result or TensorType(tuple(shape), et)
    return inst


def training(shape, fi=1, eps=0.001, et=E_F32, sizes=None, results=None):
    k = shape[fi] if 0 <= fi < len(shape) else 2
    sizes = sizes or {}
    ops = {"operand": TensorType(tuple(shape), et), "scale": TensorType((sizes.get("scale", k),), et),
           "offset": TensorType((sizes.get("offset", k),), et)}
    inst = TRAIN.instance(ops, {"epsilon": eps, "feature_index": fi})
    res = {"output": TensorType(tuple(shape), et), "batch_mean": TensorType((sizes.get("batch_mean", k),), et),
           "batch_var": TensorType((sizes.get("batch_var", k),), et)}
    res.update(results or {})
    inst.results.update(res)
    return inst


def grad(shape, fi=1, eps=0.001, et=E_F32, sizes=None, shapes=None, results=None):
    k = shape[fi] if 0 <= fi < len(shape) else 2
    sizes, shapes = sizes or {}, shapes or {}
    ops = {"operand": TensorType(tuple(shape), et),
           "grad_output": TensorType(tuple(shapes.get("grad_output", shape)), et)}
    ops.update({n: TensorType((sizes.get(n, k),), et) for n in ("scale", "mean", "variance")})
    ops = {n: ops[n] for n in ("operand", "scale", "mean", "variance", "grad_output")}
    inst = GRAD.instance(ops, {"epsilon": eps, "feature_index": fi})
    res = {"grad_operand": TensorType(tuple(shape), et), "grad_scale": TensorType((sizes.get("grad_scale", k),), et),
           "grad_offset": TensorType((sizes.get("grad_offset", k),), et)}
    res.update(results or {})
    inst.results.update(res)
    return inst


# --------------------------------------------------------------------------
# Constraints, each broken alone; inference
# --------------------------------------------------------------------------

@pytest.mark.parametrize("inst, broken", [
    (inference((2, 3, 4)), []),
    (inference((2, 3, 4), fi=3), ["batch_norm_inference_c1"]),
    (inference((2, 3, 4), fi=-1), ["batch_norm_inference_c1"]),
    (inference((2, 3, 4), result=TensorType((2, 3, 4), E_F16)), ["batch_norm_inference_c2", "batch_norm_inference_c7"]),
    (inference((2, 3, 4), sizes={"scale": 2}), ["batch_norm_inference_c3"]),
    (inference((2, 3, 4), sizes={"offset": 4}), ["batch_norm_inference_c4"]),
    (inference((2, 3, 4), sizes={"mean": 1}), ["batch_norm_inference_c5"]),
    (inference((2, 3, 4), sizes={"variance": 0}), ["batch_norm_inference_c6"]),
    (inference((2, 3, 4), result=TensorType((2, 3, 5), E_F32)), ["batch_norm_inference_c7"]),
])
def test_inference_constraints(inst, broken):
    assert INF.violated(inst) == broken


def test_inference_c2_alone_on_an_input():
    inst = inference((2, 3))
    inst.operands["mean"] = TensorType((3,), E_BF16)
    assert INF.violated(inst) == ["batch_norm_inference_c2"]


@pytest.mark.parametrize("inst, broken", [
    (training((4, 2)), []),
    (training((4, 2), fi=2), ["batch_norm_training_c1"]),
    (training((4, 2), results={"batch_var": TensorType((2,), E_F64)}), ["batch_norm_training_c2"]),
    (training((4, 2), sizes={"scale": 3}), ["batch_norm_training_c3"]),
    (training((4, 2), sizes={"offset": 3}), ["batch_norm_training_c4"]),
    (training((4, 2), sizes={"batch_mean": 4}), ["batch_norm_training_c5"]),
    (training((4, 2), sizes={"batch_var": 1}), ["batch_norm_training_c6"]),
    (training((4, 2), results={"output": TensorType((2, 4), E_F32)}), ["batch_norm_training_c7"]),
])
def test_training_constraints(inst, broken):
    assert TRAIN.violated(inst) == broken


@pytest.mark.parametrize("inst, broken", [
    (grad((3, 2, 2), fi=2), []),
    (grad((3, 2, 2), fi=-1), ["batch_norm_grad_c1"]),
    (grad((3, 2, 2), results={"grad_offset": TensorType((2,), E_BF16)}), ["batch_norm_grad_c2"]),
    (grad((3, 2, 2), shapes={"grad_output": (3, 2, 1)}), ["batch_norm_grad_c3"]),
    (grad((3, 2, 2), results={"grad_operand": TensorType((3, 2), E_F32)}), ["batch_norm_grad_c3"]),
    (grad((3, 2, 2), sizes={"variance": 3}), ["batch_norm_grad_c4"]),
    (grad((3, 2, 2), results={"grad_scale": TensorType((5,), E_F32)}), ["batch_norm_grad_c4"]),
    (grad((3, 2, 2), sizes={n: 3 for n in ("scale", "mean", "variance", "grad_scale", "grad_offset")}),
     ["batch_norm_grad_c5"]),
])
def test_grad_constraints(inst, broken):
    assert GRAD.violated(inst) == broken


def test_infer():
    assert INF.infer(inference((2, 3, 4)))["result"] == TensorType((2, 3, 4), E_F32)
    t = TRAIN.infer(training((5, 7, 2), fi=1, et=E_BF16))
    assert t == {"output": TensorType((5, 7, 2), E_BF16), "batch_mean": TensorType((7,), E_BF16),
                 "batch_var": TensorType((7,), E_BF16)}
    g = GRAD.infer(grad((3, 4), fi=0, et=E_F16))
    assert g["grad_operand"] == TensorType((3, 4), E_F16) and g["grad_scale"] == TensorType((3,), E_F16)


# --------------------------------------------------------------------------
# epsilon: a constant of type f32
# --------------------------------------------------------------------------

@pytest.mark.parametrize("text, value", [
    ("1.000000e-05 : f32", float(np.float32(1e-5))),
    ("9.99999974E-6 : f32", float(np.float32(1e-5))),
    ("0.1 : f32", float(np.float32(0.1))),
    ("0.000000e+00 : f32", 0.0),
    ("0x7F800000 : f32", math.inf),
    ("0x00000001 : f32", 2.0 ** -149),
    ("3.5e38 : f32", math.inf),                   # past f32's largest finite: rounds to inf, as MLIR reads it
])
def test_epsilon_reads_as_mlir_does(text, value):
    assert F32Attr().from_mlir(text) == value


def test_epsilon_spelling_round_trips_and_refuses_other_types():
    a = F32Attr()
    for v in (0.0, 2.0 ** -149, float(np.float32(1e-5)), float(np.finfo(np.float32).max), math.inf, -1.0):
        assert a.from_mlir(a.to_mlir(v)) == v
    assert math.isnan(a.from_mlir(a.to_mlir(math.nan)))
    assert a.to_mlir(1e-5) == "9.999999747378752e-06 : f32" and a.to_mlir(1e-45) == "1.401298464324817e-45 : f32"
    assert a.to_mlir(2.0 ** 100) == "1.2676506002282294e+30 : f32" and a.to_mlir(-0.0) == "-0.0 : f32"
    assert a.to_mlir(1e20) == "1.0000000200408773e+20 : f32" and a.to_mlir(4e-45) == "4.203895392974451e-45 : f32"
    with pytest.raises(ValueError):
        a.from_mlir("1.0 : f64")
    assert math.copysign(1, a.from_mlir("-0.0 : f32")) == -1 and math.copysign(1, a.from_mlir("0.0 : f32")) == 1
    assert math.copysign(1, a.from_mlir(a.to_mlir(-0.0))) == -1


def test_batch_norm_inference_with_a_negative_zero_epsilon_keeps_its_sign():
    """variance -0 and epsilon -0: -0 + -0 = -0 (IEEE 754 §6.3), sqrt(-0) =
    -0, so (1 - 0)·1/-0 + 0 = -inf and (-1)/-0 = +inf; with epsilon +0 the
    sum is +0 and the signs turn.  Read as +0, the epsilon had given the
    second answer for both programs."""
    from shlo_conform.oracle.program import execute, parse_program
    prog = ('func.func @main(%x: tensor<2x1xf32>, %s: tensor<1xf32>, %o: tensor<1xf32>, %m: tensor<1xf32>, '
            '%v: tensor<1xf32>) -> (tensor<2x1xf32>) {\n'
            '  %0 = "stablehlo.batch_norm_inference"(%x, %s, %o, %m, %v) {epsilon = EPS : f32, feature_index = 1 : i64}'
            ' : (tensor<2x1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x1xf32>\n'
            '  "func.return"(%0) : (tensor<2x1xf32>) -> ()\n}\n')
    args = [np.array([[1.0], [-1.0]], np.float32), np.ones(1, np.float32), np.zeros(1, np.float32),
            np.zeros(1, np.float32), np.array([-0.0], np.float32)]
    for eps, want in (("-0.0", [-np.inf, np.inf]), ("0.0", [np.inf, -np.inf])):
        got = execute(parse_program(prog.replace("EPS", eps)), args)[0].bits.view(np.float32).ravel()
        assert got.tolist() == want, eps


# --------------------------------------------------------------------------
# Independent truth: the decomposition in exact rationals, each step rounded
# --------------------------------------------------------------------------

def _floor_log2(q: Fraction) -> int:
    e = q.numerator.bit_length() - q.denominator.bit_length()
    while Fraction(2) ** e > q:
        e -= 1
    while Fraction(2) ** (e + 1) <= q:
        e += 1
    return e


class Ref:
    """IEEE arithmetic of one format, exactly: operands are Python floats
    (every format's values are binary64 values), each result the exact
    rational result rounded to nearest, ties to even — our own rounding,
    independent of the oracle's (oracle/rounding.py)."""

    def __init__(self, et):
        f = et.format
        self.p, self.emin, self.max, self.inf = f.precision, f.emin, f.max_finite, f.has_inf

    def round(self, q: Fraction) -> float:
        if q == 0:
            return 0.0
        a = abs(q)
        e = max(_floor_log2(a), self.emin)
        quantum = Fraction(2) ** (e - self.p + 1)
        k, r = divmod(a / quantum, 1)
        k = int(k) + (1 if r > Fraction(1, 2) or (r == Fraction(1, 2) and int(k) % 2) else 0)
        v = k * quantum
        if v > self.max:
            return (math.inf if q > 0 else -math.inf) if self.inf else math.nan
        return float(v if q > 0 else -v)

    def _two(self, a, b, exact, fl):
        if not (math.isfinite(a) and math.isfinite(b)):
            return self._finish(fl(a, b))
        q = exact(Fraction(a), Fraction(b))
        return fl(a, b) if q == 0 else self.round(q)   # an exact zero: IEEE's sign, as binary64 gives it

    def _finish(self, x: float) -> float:
        return x if math.isfinite(x) or self.inf or math.isnan(x) else math.nan

    def add(self, a, b):
        return self._two(a, b, lambda x, y: x + y, lambda x, y: x + y)

    def sub(self, a, b):
        return self._two(a, b, lambda x, y: x - y, lambda x, y: x - y)

    def mul(self, a, b):
        if a == 0 or b == 0:
            return self._finish(a * b)
        return self._two(a, b, lambda x, y: x * y, lambda x, y: x * y)

    def div(self, a, b):
        if math.isnan(a) or math.isnan(b) or (a == 0 and b == 0) or (math.isinf(a) and math.isinf(b)):
            return math.nan
        if b == 0:
            return self._finish(math.copysign(math.inf, a) * math.copysign(1.0, b))
        if a == 0 or math.isinf(a) or math.isinf(b):
            return self._finish(a / b)
        return self.round(Fraction(a) / Fraction(b))

    def sqrt(self, a):
        if math.isnan(a) or a < 0:
            return math.nan
        if a == 0 or math.isinf(a):
            return a
        q, m = Fraction(a), 2600          # sqrt(q) within 2^-m: no rounding boundary is that close
        n = q.numerator * 4 ** m // q.denominator
        r = math.isqrt(n)
        if r * r * q.denominator == q.numerator * 4 ** m:
            return self.round(Fraction(r, 2 ** m))
        return self.round(Fraction(2 * r + 1, 2 ** (m + 1)))

    def const(self, x) -> float:
        return self._finish(self.round(Fraction(x))) if math.isfinite(x) else self._finish(x)


def _schedule(values: list, ref: Ref, how: str):
    """Σ values with the init value 0 inserted once, in one allowed order."""
    if how == "left":
        acc = 0.0
        for v in values:
            acc = ref.add(acc, v)
        return acc
    if how == "right":
        acc = 0.0
        for v in reversed(values):
            acc = ref.add(v, acc)
        return acc
    leaves = list(values) or [0.0]           # "pairwise": a balanced tree, the init at the end
    leaves.append(0.0)
    while len(leaves) > 1:
        leaves = [ref.add(leaves[i], leaves[i + 1]) if i + 1 < len(leaves) else leaves[i]
                  for i in range(0, len(leaves), 2)]
    return leaves[0]


def _by_feature(x: np.ndarray, fi: int) -> list:
    """Per feature, its elements in index order (the reduction's leaves)."""
    moved = np.moveaxis(x, fi, 0)
    return [list(map(float, moved[f].reshape(-1))) for f in range(moved.shape[0])]


def _bcast(v: list, shape, fi) -> np.ndarray:
    r = [1] * len(shape)
    r[fi] = -1
    return np.broadcast_to(np.array(v, dtype=np.float64).reshape(r), shape)


def _elementwise(f, *arrays):
    shape = np.broadcast(*arrays).shape
    out = np.empty(shape, dtype=np.float64)
    flat = [np.broadcast_to(a, shape).reshape(-1) for a in arrays]
    for i in range(out.size):
        out.reshape(-1)[i] = f(*[float(a[i]) for a in flat])
    return out


def ref_inference(et, x, scale, offset, mean, var, eps, fi, *, eps_after_sqrt=False):
    r = Ref(et)
    s = x.shape
    e = r.const(eps)
    centered = _elementwise(r.sub, x, _bcast(mean, s, fi))
    if eps_after_sqrt:   # a classic wrong one: sqrt(var) + eps
        stddev = _elementwise(lambda v: r.add(r.sqrt(v), e), _bcast(var, s, fi))
    else:
        stddev = _elementwise(lambda v: r.sqrt(r.add(v, e)), _bcast(var, s, fi))
    normalized = _elementwise(r.div, centered, stddev)
    return _elementwise(lambda n, sc, of: r.add(r.mul(sc, n), of), normalized, _bcast(scale, s, fi),
                        _bcast(offset, s, fi))


def _per_feature_count(x, fi) -> int:
    """num_elements / dim(x, fi): unused where that dim is 0 (every result is empty)."""
    return x.size // x.shape[fi] if x.shape[fi] else 0


def _mean(r, x, fi, how, divisor=None):
    n = _per_feature_count(x, fi)
    d = r.const(divisor if divisor is not None else n)
    return [r.div(_schedule(leaves, r, how), d) for leaves in _by_feature(x, fi)]


def ref_training(et, x, scale, offset, eps, fi, how="left", *, unbiased=False):
    r = Ref(et)
    mean = _mean(r, x, fi, how)
    centered = _elementwise(r.sub, x, _bcast(mean, x.shape, fi))
    squares = _elementwise(r.mul, centered, centered)
    n = _per_feature_count(x, fi)
    var = _mean(r, squares, fi, how, divisor=n - 1 if unbiased else None)   # unbiased: a classic wrong one
    out = ref_inference(et, x, scale, offset, mean, var, eps, fi)
    return [out, np.array(mean), np.array(var)]


def ref_grad(et, x, scale, mean, var, gy, eps, fi, how="left", *, drop_variance_term=False):
    r = Ref(et)
    s = x.shape
    e = r.const(eps)
    centered = _elementwise(r.sub, x, _bcast(mean, s, fi))
    var_eps = _elementwise(lambda v: r.add(v, e), _bcast(var, s, fi))
    stddev = _elementwise(r.sqrt, var_eps)
    normalized = _elementwise(r.div, centered, stddev)
    n = r.const(_per_feature_count(x, fi))
    i1 = _elementwise(lambda g: r.mul(g, n), gy)
    i2 = _bcast([_schedule(f, r, how) for f in _by_feature(gy, fi)], s, fi)
    i3 = _bcast([_schedule(f, r, how) for f in _by_feature(_elementwise(r.mul, gy, centered), fi)], s, fi)
    i4 = _elementwise(r.mul, i3, centered)
    i5 = _elementwise(r.div, i4, var_eps)
    inner = _elementwise(r.sub, i1, i2)
    if not drop_variance_term:   # a classic wrong one leaves i5 out
        inner = _elementwise(r.sub, inner, i5)
    factor = _elementwise(lambda sc, sd: r.div(r.div(sc, sd), n), _bcast(scale, s, fi), stddev)
    grad_operand = _elementwise(r.mul, factor, inner)
    grad_scale = [_schedule(f, r, how) for f in _by_feature(_elementwise(r.mul, gy, normalized), fi)]
    grad_offset = [_schedule(f, r, how) for f in _by_feature(gy, fi)]
    return [grad_operand, np.array(grad_scale), np.array(grad_offset)]


def expect(inst, *arrays):
    return expected_outputs(emit.program(inst.spec, inst), [np.asarray(a) for a in arrays])


def meets(exps, refs, et, strict: bool = True) -> list:
    """compare() verdicts of reference results (float64 arrays of exact values) against expectations
    that leave nothing open (a test that could not fail would be a defect) — in 8-bit formats, where
    a range may reach NaN (u = 1/8, 1/16: an open element, docs/oracle-evaluation.md), not all of it."""
    if strict:
        assert all(not e.impl_defined for e in exps), [e.why for e in exps if e.impl_defined]
    else:
        assert any(len(e.impl_defined) < e.type.num_elements for e in exps)
    return [compare(e, np.asarray(r, dtype=np.float64).astype(et.numpy).reshape(e.type.shape)).ok
            for e, r in zip(exps, refs)]


def values(et, shape, rng, lo=-4.0, hi=4.0):
    return rng.uniform(lo, hi, size=shape).astype(et.numpy)


def as64(*arrays):
    return [np.asarray(a).astype(np.float64) for a in arrays]


# --------------------------------------------------------------------------
# Hand-computed values
# --------------------------------------------------------------------------

def test_inference_by_hand():
    """feature_index 0, epsilon 1: (x − mean) / sqrt(var + 1) · scale + offset, all exact in f32."""
    inst = inference((2, 3), fi=0, eps=1.0)
    x = np.array([[1, 5, -3], [0, 2, 8]], np.float32)
    got = expect(inst, x, np.array([2, 0.5], np.float32), np.array([1, -1], np.float32),
                 np.array([1, 2], np.float32), np.array([3, 15], np.float32))[0]
    # feature 0: (x − 1)/2·2 + 1 ; feature 1: (x − 2)/4·0.5 − 1
    assert got.array().tolist() == [[1.0, 5.0, -3.0], [-1.25, -1.0, -0.25]]
    assert compare(got, np.array([[1.0, 5.0, -3.0], [-1.25, -1.0, -0.25]], np.float32)).ok
    assert not compare(got, np.array([[1.0, 5.0, -3.0], [-1.25, -1.0, -0.5]], np.float32)).ok
    # every step exact: a fused evaluation gives the same, so nothing is widened (oracle/decomposition._exact)
    assert got.kind == "bounded" and (got.lo == got.hi).all()


def test_training_by_hand():
    """Per feature [1, 2, 3, 4]: mean 2.5, biased variance 1.25; epsilon 0.75
    makes sqrt(var + eps) = sqrt(2)… so the normalized values are checked on
    a case where everything is a power of two: [1, 3, 1, 3] → mean 2, var 1."""
    inst = training((4, 2), fi=1, eps=0.0)
    x = np.array([[1, 1], [2, 3], [3, 1], [4, 3]], np.float32)
    out, mean, var = expect(inst, x, np.ones(2, np.float32), np.zeros(2, np.float32))
    assert mean.array().tolist() == [2.5, 2.0] and var.array().tolist() == [1.25, 1.0]
    assert out.array()[:, 1].tolist() == [-1.0, 1.0, -1.0, 1.0]
    want0 = [(v - 2.5) / math.sqrt(1.25) for v in (1, 2, 3, 4)]
    assert np.allclose(out.array()[:, 0], want0, rtol=1e-6)


def test_grad_by_hand():
    """One feature [−1, 1] (mean 0, var 1, eps 0, scale 2), grad_output [1, 3]:
    N = 2, i1 = [2, 6], i2 = 4, i3 = Σ g·c = 2, i5 = [−2, 2],
    grad_operand = 2/1/2 · ([2, 6] − 4 − [−2, 2]) = [0, 0];
    grad_scale = Σ g·normalized = 2; grad_offset = 4."""
    inst = grad((2, 1), fi=1, eps=0.0)
    x = np.array([[-1], [1]], np.float32)
    gy = np.array([[1], [3]], np.float32)
    go, gs, gb = expect(inst, x, np.array([2], np.float32), np.array([0], np.float32), np.array([1], np.float32), gy)
    assert go.array().reshape(-1).tolist() == [0.0, 0.0]
    assert gs.array().tolist() == [2.0] and gb.array().tolist() == [4.0]
    # with grad_output [1, 1] − the variance term: i1 − i2 = 0, i3 = 0 — and [2, 0]: i3 = −2, i5 = [2, −2]
    go, gs, gb = expect(inst, x, np.array([2], np.float32), np.array([0], np.float32), np.array([1], np.float32),
                        np.array([[2], [0]], np.float32))
    # i1 = [4, 0], i2 = 2, i5 = [2, −2]: (i1 − i2 − i5) = [0, 0]
    assert go.array().reshape(-1).tolist() == [0.0, 0.0] and gs.array().tolist() == [-2.0]


def test_training_divisor_rounds_into_the_element_type():
    """f16: 66000 ≥ 65520 elements per feature round to inf, so the seed's
    mean is sum / inf = 0 (what the literal decomposition says; a sum of
    66000 f16 terms has no bound, n·u ≥ 1, so the element is also open)."""
    inst = training((66000, 1), fi=1, eps=0.0, et=E_F16)
    assert 'dense<"0x007C"> : tensor<f16>' in program_text(inst)[0]        # the divisor: f16 +inf
    x = np.full((66000, 1), 2.0 ** -10, np.float16)
    out, mean, var = expect(inst, x, np.ones(1, np.float16), np.zeros(1, np.float16))
    assert mean.array().tolist() == [0.0] and mean.impl_defined == [0]


def test_epsilon_rounds_into_the_element_type():
    """f8E4M3FN: epsilon 1e-5 is 0 there, so var = 0 gives 0/0 = NaN; in f32 it stays."""
    x = np.array([[1.0, 2.0]], np.float32)
    args = [np.ones(2), np.zeros(2), np.array([1.0, 2.0]), np.zeros(2)]
    f8 = expect(inference((1, 2), eps=1e-5, et=E_F8E4M3FN), x.astype(E_F8E4M3FN.numpy),
                *[a.astype(E_F8E4M3FN.numpy) for a in args])[0]
    assert np.isnan(f8.array().astype(np.float64)).all()
    f32 = expect(inference((1, 2), eps=1e-5), x, *[a.astype(np.float32) for a in args])[0]
    assert f32.array().tolist() == [[0.0, 0.0]]


# --------------------------------------------------------------------------
# Exact evaluations of the decomposition meet the expectation
# --------------------------------------------------------------------------

CASES = [(et, shape, fi) for et in FLOAT_TYPES for shape, fi in (((3, 4), 1), ((2, 3, 2), 0), ((2, 2, 3), 2))]


@pytest.mark.parametrize("et, shape, fi", CASES, ids=lambda v: getattr(v, "name", str(v)))
def test_inference_exact_evaluation_meets_expectation(et, shape, fi):
    rng = np.random.default_rng(hash((et.name, shape, fi)) % 2 ** 32)
    k = shape[fi]
    x, scale, offset, mean = values(et, shape, rng), values(et, k, rng), values(et, k, rng), values(et, k, rng)
    var = values(et, k, rng, 0.1, 4.0)
    inst = inference(shape, fi=fi, eps=0.01, et=et)
    exps = expect(inst, x, scale, offset, mean, var)
    ref = ref_inference(et, *as64(x), *[list(map(float, a.astype(np.float64))) for a in (scale, offset, mean, var)],
                        float(np.float32(0.01)), fi)
    assert meets(exps, [ref], et) == [True]


@pytest.mark.parametrize("et, shape, fi", CASES, ids=lambda v: getattr(v, "name", str(v)))
@pytest.mark.parametrize("how", ["left", "right", "pairwise"])
def test_training_exact_evaluations_meet_expectation(et, shape, fi, how):
    rng = np.random.default_rng(hash((et.name, shape, fi)) % 2 ** 32)
    k = shape[fi]
    x, scale, offset = values(et, shape, rng), values(et, k, rng), values(et, k, rng)
    exps = expect(training(shape, fi=fi, eps=0.001, et=et), x, scale, offset)
    refs = ref_training(et, as64(x)[0], *[list(map(float, a.astype(np.float64))) for a in (scale, offset)],
                        float(np.float32(0.001)), fi, how)
    assert meets(exps, refs, et, strict=et.bits > 8) == [True] * 3


@pytest.mark.parametrize("et, shape, fi", CASES, ids=lambda v: getattr(v, "name", str(v)))
@pytest.mark.parametrize("how", ["left", "right", "pairwise"])
def test_grad_exact_evaluations_meet_expectation(et, shape, fi, how):
    rng = np.random.default_rng(hash((et.name, shape, fi, 1)) % 2 ** 32)
    k = shape[fi]
    x, gy = values(et, shape, rng), values(et, shape, rng, -1, 1)
    scale, mean, var = values(et, k, rng), values(et, k, rng, -1, 1), values(et, k, rng, 0.5, 3)
    exps = expect(grad(shape, fi=fi, eps=0.001, et=et), x, scale, mean, var, gy)
    refs = ref_grad(et, as64(x)[0], *[list(map(float, a.astype(np.float64))) for a in (scale, mean, var)],
                    as64(gy)[0], float(np.float32(0.001)), fi, how)
    assert meets(exps, refs, et, strict=et.bits > 8) == [True] * 3


# --------------------------------------------------------------------------
# Just past the bound, and the classic wrong implementations, fail
# --------------------------------------------------------------------------

def _step(a: np.ndarray, et, i: int, up: bool) -> np.ndarray:
    """`a` with element i moved one representable value up or down."""
    bits = to_bits(a, et).reshape(-1).astype(np.int64)
    sign = et.format.sign_mask
    b = int(bits[i])
    mag, neg = b & ~sign, bool(b & sign)
    if mag == 0:
        b = 1 if up else sign | 1
    elif up != neg:
        b = b + 1
    else:
        b = b - 1
    bits[i] = b
    return from_bits(bits.astype(et.bits_dtype), et).reshape(a.shape)


@pytest.mark.parametrize("et", [E_F32, E_BF16, E_F64])
def test_just_past_the_bound_fails(et):
    """A result one representable value past the expectation's bounds (the
    range's ends of a bounded output, the value itself of an exact one) fails."""
    rng = np.random.default_rng(7)
    x, scale, offset = values(et, (6, 3), rng), values(et, 3, rng), values(et, 3, rng)
    for e in expect(training((6, 3), fi=1, eps=0.001, et=et), x, scale, offset):
        assert compare(e, e.array()).ok
        for i in range(e.array().size):
            lo = from_bits(e.lo, et) if e.kind == "bounded" else e.array()
            hi = from_bits(e.hi, et) if e.kind == "bounded" else e.array()
            assert compare(e, _with(e.array(), hi, i)).ok and compare(e, _with(e.array(), lo, i)).ok
            assert not compare(e, _step(_with(e.array(), hi, i), et, i, up=True)).ok
            assert not compare(e, _step(_with(e.array(), lo, i), et, i, up=False)).ok


def _with(a, src, i):
    out = a.copy().reshape(-1)
    out[i] = np.asarray(src).reshape(-1)[i]
    return out.reshape(a.shape)


@pytest.mark.parametrize("et", [E_F32, E_BF16, E_F16])
def test_biased_not_unbiased_variance(et):
    """batch_var is the mean of squared deviations (÷ N): ÷ (N − 1) fails."""
    rng = np.random.default_rng(11)
    x, scale, offset = values(et, (5, 2), rng), values(et, 2, rng), values(et, 2, rng)
    exps = expect(training((5, 2), fi=1, eps=0.001, et=et), x, scale, offset)
    args = (as64(x)[0], list(map(float, scale.astype(np.float64))), list(map(float, offset.astype(np.float64))),
            float(np.float32(0.001)), 1)
    assert meets(exps, ref_training(et, *args), et) == [True] * 3
    wrong = ref_training(et, *args, unbiased=True)
    assert meets(exps[1:], wrong[1:], et) == [True, False]     # the mean is right, the variance not
    assert meets(exps[:1], wrong[:1], et) == [False]


@pytest.mark.parametrize("et", [E_F32, E_BF16])
def test_epsilon_inside_the_square_root(et):
    """sqrt(var + eps), not sqrt(var) + eps (variance of epsilon's size)."""
    rng = np.random.default_rng(5)
    x, scale, offset, mean = values(et, (4, 3), rng), values(et, 3, rng), values(et, 3, rng), values(et, 3, rng)
    var = np.array([0.01, 0.02, 0.005]).astype(et.numpy)
    inst = inference((4, 3), fi=1, eps=0.01, et=et)
    exps = expect(inst, x, scale, offset, mean, var)
    args = [as64(x)[0]] + [list(map(float, a.astype(np.float64))) for a in (scale, offset, mean, var)]
    eps = float(np.float32(0.01))
    assert meets(exps, [ref_inference(et, *args, eps, 1)], et) == [True]
    assert meets(exps, [ref_inference(et, *args, eps, 1, eps_after_sqrt=True)], et) == [False]


def test_wrong_feature_dimension():
    """Normalizing along the other axis of equal size fails."""
    et = E_F32
    rng = np.random.default_rng(3)
    x, scale, offset = values(et, (3, 3), rng), values(et, 3, rng), values(et, 3, rng)
    exps = expect(training((3, 3), fi=1, eps=0.001, et=et), x, scale, offset)
    args = (list(map(float, scale.astype(np.float64))), list(map(float, offset.astype(np.float64))),
            float(np.float32(0.001)))
    assert meets(exps, ref_training(et, as64(x)[0], *args, 1), et) == [True] * 3
    assert meets(exps, ref_training(et, as64(x)[0], *args, 0), et) == [False] * 3


@pytest.mark.parametrize("et", [E_F32, E_F16])
def test_grad_needs_its_variance_term(et):
    rng = np.random.default_rng(13)
    x, gy = values(et, (4, 2), rng), values(et, (4, 2), rng, -1, 1)
    scale, mean, var = values(et, 2, rng), values(et, 2, rng, -1, 1), values(et, 2, rng, 0.5, 3)
    exps = expect(grad((4, 2), fi=1, eps=0.001, et=et), x, scale, mean, var, gy)
    args = (as64(x)[0], *[list(map(float, a.astype(np.float64))) for a in (scale, mean, var)], as64(gy)[0],
            float(np.float32(0.001)), 1)
    assert meets(exps, ref_grad(et, *args), et) == [True] * 3
    assert meets(exps[:1], ref_grad(et, *args, drop_variance_term=True)[:1], et) == [False]


# --------------------------------------------------------------------------
# What the decomposition leaves open, and what flows in from upstream
# --------------------------------------------------------------------------

def test_a_sum_without_a_bound_leaves_its_feature_open():
    """f8E4M3FN (u = 1/16): a sum of 20 terms has no bound (n·u ≥ 1) — the
    seed's reduce may give anything there — so every output of that feature
    may be any value; the other feature (one element per feature) is stated."""
    et = E_F8E4M3FN
    inst = training((20, 1), fi=1, eps=0.001, et=et)
    x = np.linspace(-2, 2, 20).astype(et.numpy).reshape(20, 1)
    out, mean, var = expect(inst, x, np.ones(1, et.numpy), np.zeros(1, et.numpy))
    assert out.impl_defined == list(range(20)) and mean.impl_defined == [0] and var.impl_defined == [0]
    assert any(a.bits is None for a in out.alternatives)
    small = expect(training((1, 3), fi=1, eps=0.25, et=et), np.ones((1, 3), et.numpy), np.ones(3, et.numpy),
                   np.zeros(3, et.numpy))
    assert all(not e.impl_defined for e in small)


def test_approximate_input_from_upstream_is_carried():
    """A sine feeding batch_norm_inference: a backend whose sine is one ULP
    off (within the ULP policy) must still pass the normalized result."""
    mlir = """func.func @main(%x: tensor<4x2xf32>, %s: tensor<2xf32>, %o: tensor<2xf32>, %m: tensor<2xf32>,
                          %v: tensor<2xf32>) -> tensor<4x2xf32> {
  %0 = "stablehlo.sine"(%x) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %1 = "stablehlo.batch_norm_inference"(%0, %s, %o, %m, %v) {epsilon = 0.0 : f32, feature_index = 1 : i64}
       : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  "func.return"(%1) : (tensor<4x2xf32>) -> ()
}"""
    x = np.array([[0.3, 1.1], [2.0, -0.7], [-1.5, 0.2], [0.9, 2.9]], np.float32)
    per = [np.array(v, np.float32) for v in ([3.0, 0.5], [0.25, -1.0], [0.1, -0.2], [0.04, 0.09])]
    (e,) = expected_outputs(mlir, [x] + per)
    assert e.kind == "bounded"
    et = E_F32
    for up in (True, False):
        s = np.sin(x.astype(np.float64)).astype(np.float32)
        off = np.stack([_step(s, et, i, up).reshape(-1)[i] for i in range(s.size)]).reshape(s.shape)
        ref = ref_inference(et, off.astype(np.float64), *[list(map(float, a)) for a in per], 0.0, 1)
        assert meets([e], [ref], et) == [True]


def test_decomposition_is_a_checked_program():
    """The decomposition is spelled as a StableHLO program and read like any
    (each op checked by its own constraints); training calls
    batch_norm_inference itself, as the seed writes."""
    text, n = program_text(training((2, 3), fi=1))
    assert n == 3 and '"stablehlo.batch_norm_inference"' in text and text.count('"stablehlo.reduce"') == 3
    program, n = decomposed(grad((2, 3), fi=0))
    mnemonics = [s.inst.spec.mnemonic for s in program.steps]
    assert n == 3 and mnemonics.count("reduce") == 4 and "sqrt" in mnemonics and "rsqrt" not in mnemonics


# --------------------------------------------------------------------------
# Fusion: the seed lets an implementation evaluate the decomposition fused
# --------------------------------------------------------------------------
#
# "can be expressed as a decomposition" (spec/ops/batch_norm_inference.py
# gives the reading): a result computed without any intermediate rounding —
# the exact mathematical value, rounded once — must pass, as must one
# computed in float64 throughout (a wider format) and rounded once.

def _mp(x) -> "mpmath.mpf":
    import mpmath
    return mpmath.mpf(float(x))


def _once(et, v) -> float:
    """An mpmath value (or ±inf / NaN) rounded once into et by our own rounding."""
    import mpmath
    if mpmath.isnan(v) or mpmath.isinf(v):
        return float(v)
    sign, man, exp, _ = mpmath.mpf(v)._mpf_
    return Ref(et).round((-1) ** sign * Fraction(int(man)) * Fraction(2) ** int(exp))


def fused_training(et, x, scale, offset, eps, fi):
    """batch_norm_training's mathematics, exact to 300 bits, each output rounded once."""
    import mpmath
    with mpmath.workprec(300):
        feats = _by_feature(x, fi)
        means = [mpmath.fsum(_mp(v) for v in f) / len(f) for f in feats]
        var = [mpmath.fsum((_mp(v) - m) ** 2 for v in f) / len(f) for f, m in zip(feats, means)]
        moved = np.moveaxis(x, fi, 0)
        out = np.empty(moved.shape)
        for k in range(moved.shape[0]):
            d = mpmath.sqrt(var[k] + _mp(eps))
            for idx in np.ndindex(moved.shape[1:]):
                out[(k,) + idx] = _once(et, (_mp(moved[(k,) + idx]) - means[k]) / d * _mp(scale[k]) + _mp(offset[k]))
        return [np.moveaxis(out, 0, fi), np.array([_once(et, m) for m in means]),
                np.array([_once(et, v) for v in var])]


def fused_grad(et, x, scale, mean, var, gy, eps, fi):
    """batch_norm_grad's mathematics (the formula of the seed's decomposition), exact to 300 bits,
    each output rounded once."""
    import mpmath
    with mpmath.workprec(300):
        xs, gs = np.moveaxis(x, fi, 0), np.moveaxis(gy, fi, 0)
        n = xs[0].size
        go = np.empty(xs.shape)
        g_scale, g_offset = [], []
        for k in range(xs.shape[0]):
            ve = _mp(var[k]) + _mp(eps)
            c = [_mp(v) - _mp(mean[k]) for v in xs[k].reshape(-1)]
            g = [_mp(v) for v in gs[k].reshape(-1)]
            sg, sgc = mpmath.fsum(g), mpmath.fsum(a * b for a, b in zip(g, c))
            sd = mpmath.sqrt(ve)
            go[k] = np.array([_once(et, _mp(scale[k]) / sd / n * (gi * n - sg - sgc * ci / ve))
                              for gi, ci in zip(g, c)]).reshape(xs[k].shape)
            g_scale.append(_once(et, mpmath.fsum(gi * ci / sd for gi, ci in zip(g, c))))
            g_offset.append(_once(et, sg))
        return [np.moveaxis(go, 0, fi), np.array(g_scale), np.array(g_offset)]


def f64_inference(x, scale, offset, mean, var, eps, fi):
    """batch_norm_inference in float64 throughout (a wider format), rounded once by the caller."""
    b = [_bcast(list(map(float, a)), x.shape, fi) for a in (scale, offset, mean, var)]
    return (x - b[2]) / np.sqrt(b[3] + eps) * b[0] + b[1]


@pytest.mark.parametrize("et", [E_F32, E_BF16, E_F16])
def test_fused_evaluations_pass(et):
    """The exact result rounded once, and float64 throughout rounded once,
    meet the expectation of all three ops — where the literal decomposition
    (each step rounded) meets it too (tests above)."""
    rng = np.random.default_rng(17)
    shape, fi, eps = (3, 4), 1, float(np.float32(0.001))
    x, scale, offset = values(et, shape, rng), values(et, 4, rng), values(et, 4, rng)
    exps = expect(training(shape, fi=fi, eps=0.001, et=et), x, scale, offset)
    x64, s64, o64 = as64(x, scale, offset)
    assert meets(exps, fused_training(et, x64, s64, o64, eps, fi), et) == [True] * 3
    mean, var = values(et, 4, rng, -1, 1), values(et, 4, rng, 0.5, 3)
    exps = expect(inference(shape, fi=fi, eps=0.001, et=et), x, scale, offset, mean, var)
    assert meets(exps, [f64_inference(x64, s64, o64, *as64(mean, var), eps, fi)], et) == [True]
    gy = values(et, shape, rng, -1, 1)
    exps = expect(grad(shape, fi=fi, eps=0.001, et=et), x, scale, mean, var, gy)
    assert meets(exps, fused_grad(et, x64, s64, *as64(mean, var, gy), eps, fi), et) == [True] * 3


@pytest.mark.parametrize("eps", [0.0, 2.0 ** -149, float(np.finfo(np.float32).max)], ids=["zero", "tiny", "huge"])
def test_epsilon_at_the_edges(eps):
    """epsilon 0 (var 0 divides by zero: ±inf, and NaN for 0/0), the
    smallest f32 subnormal and the largest f32 (the normalized term
    vanishes: result = offset): the literal and the fused evaluations meet
    the expectation.  In f16 the smallest f32 subnormal rounds to 0 as
    written (0/0 = NaN) but stays in a fused evaluation (0/sqrt(ε) = 0): that
    element is open — "any value", labelled — and no other is."""
    rng = np.random.default_rng(19)
    for et in (E_F32, E_F16):
        x, scale, offset, mean = values(et, (3, 3), rng), values(et, 3, rng), values(et, 3, rng), values(et, 3, rng)
        var = np.array([0.0, 0.25, 2.0]).astype(et.numpy)
        x[0, 0] = mean[0]                                       # 0 / sqrt(0 + eps): NaN where eps = 0
        (e,) = expect(inference((3, 3), fi=1, eps=eps, et=et), x, scale, offset, mean, var)
        args = [as64(x)[0]] + [list(map(float, a.astype(np.float64))) for a in (scale, offset, mean, var)]
        rounds_to_zero = eps == 2.0 ** -149 and et is E_F16
        assert e.impl_defined == ([0] if rounds_to_zero else [])
        with np.errstate(all="ignore"):
            assert meets([e], [ref_inference(et, *args, eps, 1)], et, strict=not rounds_to_zero) == [True]
            assert meets([e], [f64_inference(*as64(x, scale, offset, mean, var), eps, 1)], et,
                         strict=not rounds_to_zero) == [True]
        if eps == 0.0:
            assert np.isnan(e.array()[0, 0].astype(np.float64)) and np.isinf(e.array()[1:, 0].astype(np.float64)).all()
        elif eps > 1:
            assert compare(e, np.broadcast_to(offset, (3, 3)).copy()).ok    # c / sqrt(huge) · s ≈ 0
            assert not compare(e, np.broadcast_to(offset + scale, (3, 3)).copy()).ok


def test_epsilon_past_a_format_without_infinity_is_open():
    """f8E4M3FN has no inf: epsilon = the largest f32 is NaN there as
    written, finite in a fused (wider) evaluation, which gives `offset`
    (XLA does): every element that depends on it may be any value, labelled."""
    et = E_F8E4M3FN
    x = np.full((2, 3), 0.75).astype(et.numpy)
    args = [np.full(3, v).astype(et.numpy) for v in (1.0, -0.25, 0.5, 1.5)]
    (e,) = expect(inference((2, 3), fi=1, eps=float(np.finfo(np.float32).max), et=et), x, *args)
    assert e.impl_defined == list(range(6)) and any(a.bits is None for a in e.alternatives)
    assert compare(e, np.full((2, 3), -0.25).astype(et.numpy)).ok


def test_overflow_without_infinity_is_open_not_nan():
    """f8E4M3FN (largest finite 448, no inf): i5 = i4 / (var + ε) overflows
    to NaN as written; a fused (wider) evaluation stays finite, so those
    elements are open — "any value", labelled — not a NaN to be matched."""
    et = E_F8E4M3FN
    x = np.array([[6.0], [-6.0]]).astype(et.numpy)
    gy = np.array([[4.0], [-4.0]]).astype(et.numpy)
    f = [np.array([v]).astype(et.numpy) for v in (1.0, 0.0, 0.0625)]   # scale, mean, variance
    go, _, _ = expect(grad((2, 1), fi=1, eps=0.0, et=et), x, *f, gy)
    # i3 = Σ g·c = 48, i4 = 48·±6 = ±288, i5 = ±288 / 0.0625 = ±4608 > 448: NaN as written
    assert go.impl_defined == [0, 1] and any(a.bits is None for a in go.alternatives)


def test_batch_norm_inference_epsilon_cancelled_by_the_variance_scales_by_4096():
    """The appended case: 0.4999999701976776 reads as 2^-1 - 2^-25 exactly
    (an f32 of odd significand; Decimal → Fraction → nearest f32 by hand),
    the variance -(2^-1 - 3·2^-25) leaves 2^-24 (Sterbenz), √(2^-24) =
    2^-12: feature 0's outputs are the operand times 4096, exactly."""
    a = F32Attr()
    assert a.from_mlir("0.4999999701976776 : f32") == 0.5 - 2.0 ** -25
    from shlo_conform.suites.io import load_cases, suite_path
    (case,) = [c for c in load_cases(suite_path("core"), {"batch_norm_inference"})
               if c.note.startswith("epsilon 2^-1 - 2^-25 cancelled")]
    assert "epsilon = 0.4999999701976776 : f32" in case.mlir
    x, scale, offset, mean, variance = case.input_arrays()
    assert variance[0] == -(0.5 - 3 * 2.0 ** -25) and mean[0] == offset[0] == 0 and scale[0] == 1
    want = x[:, 0, :].astype(np.float64) * 4096
    e = case.expected[0]
    for ends in (e.bits, e.lo, e.hi):
        assert (np.asarray(ends).view(np.float32)[:, 0, :] == want).all()
