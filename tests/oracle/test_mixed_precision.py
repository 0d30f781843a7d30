"""Mixed-precision dot_general — JAX's `preferred_element_type` — read and judged by the oracle.

Programs are lowered by JAX itself (`jax.jit(f).lower(...).as_text()`:
bf16 × bf16 → f32, f16 × f16 → f32, i8 × i8 → i32), so the oracle reads
what users have.  Truth is independent of the oracle: exact integer
numpy for integers; for floats the exact Σ aᵢbᵢ in rationals and the
bound of summing in the *result's* format, γ_f32(K)·Σ|aᵢbᵢ| +
K·2^-150 (spec/ops/dot_general.py: the result type is the accumulation
type), written out here.  XLA:CPU, a second implementation, must land
inside; a value just outside, or the sum rounded to the operands' type,
must not.
"""
from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import jax
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

from shlo_conform.generators.expect import ProgramRejected, expected_outputs, rejection  # noqa: E402
from shlo_conform.oracle import accumulate, bilinear  # noqa: E402
from shlo_conform.spec.types import E_F32, from_bits  # noqa: E402
from shlo_conform.suites.compare import compare  # noqa: E402

jax.config.update("jax_enable_x64", False)

MATMUL = (((1,), (0,)), ((), ()))
F32_U = Fraction(1, 1 << 24)


def _dot(preferred):
    return lambda a, b: lax.dot_general(a, b, MATMUL, preferred_element_type=preferred)


def _lowered(f, *args) -> str:
    return jax.jit(f).lower(*args).as_text()


def _ends(e) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) of an expectation as float64 values (an exact one: its value twice)."""
    et = e.type.element_type
    if e.kind == "bounded":
        return (from_bits(np.asarray(e.lo), et).astype(np.float64), from_bits(np.asarray(e.hi), et).astype(np.float64))
    v = e.array().astype(np.float64)
    return v, v


def _exact(a, b) -> tuple[list, list]:
    """Per result element of a · b: the exact Σ aᵢbᵢ and Σ|aᵢbᵢ|, in rationals."""
    A, B = a.astype(np.float64), b.astype(np.float64)
    s, mag = [], []
    for i in range(A.shape[0]):
        for j in range(B.shape[1]):
            terms = [Fraction(float(x)) * Fraction(float(y)) for x, y in zip(A[i], B[:, j])]
            s.append(sum(terms, Fraction(0)))
            mag.append(sum((abs(t) for t in terms), Fraction(0)))
    return s, mag


def _f32_bound(k: int, mag: Fraction) -> Fraction:
    """Summing k exact products in f32, any order: γ(k)·Σ|aᵢbᵢ| + k·min_subnormal/2."""
    g = k * F32_U / (1 - k * F32_U)
    return g * mag + k * Fraction(1, 1 << 150)


def _ulp32(x: float) -> Fraction:
    x = np.float32(x)
    return Fraction(float(np.spacing(np.abs(x)))) if np.isfinite(x) else Fraction(0)


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16], ids=["bf16", "f16"])
def test_a_float_dot_promoted_to_f32_is_bounded_in_f32(dtype):
    """The stated range holds the exact sum, is no wider than f32's
    accumulation bound (plus the outward rounding of its ends), holds
    XLA's output, and refuses a value one step outside it and the sum
    rounded to the operands' own type."""
    rng = np.random.default_rng(7)
    a = rng.uniform(-4, 4, (4, 9)).astype(dtype)
    b = rng.uniform(-4, 4, (9, 3)).astype(dtype)
    program = _lowered(_dot(jnp.float32), a, b)
    assert "-> tensor<4x3xf32>" in program and ("xbf16>" in program or "xf16>" in program)
    (e,) = expected_outputs(program, [a, b])
    assert e.type.mlir == "tensor<4x3xf32>"
    lo, hi = _ends(e)
    s, mag = _exact(a, b)
    for i, (si, mi) in enumerate(zip(s, mag)):
        L, H = Fraction(float(lo.flat[i])), Fraction(float(hi.flat[i]))
        assert L <= si <= H, i
        allowance = _f32_bound(9, mi)
        assert H - L <= 2 * allowance + 2 * _ulp32(float(si)) + 2 * _ulp32(float(allowance)), i
    xla = np.asarray(jax.jit(_dot(jnp.float32))(a, b))
    assert compare(e, xla).ok
    outside = xla.copy()
    outside.flat[0] = np.nextafter(np.float32(hi.flat[0]), np.float32(np.inf))
    assert not compare(e, outside).ok
    in_operand_type = np.array([float(q) for q in s]).astype(dtype).astype(np.float32).reshape(4, 3)
    assert not compare(e, in_operand_type).ok


@pytest.mark.parametrize("dtype, preferred", [(np.int8, jnp.int32), (np.uint8, jnp.uint32)], ids=["si8", "ui8"])
def test_an_integer_dot_promoted_to_32_bits_is_exact(dtype, preferred):
    """i8 × i8 → i32 (and ui8 → ui32): the exact sum, past the operands'
    range (40 products of ±128), as numpy's int64 product says; XLA
    agrees, one off does not."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(11)
    a = rng.integers(info.min, int(info.max) + 1, (3, 40)).astype(dtype)
    b = rng.integers(info.min, int(info.max) + 1, (40, 2)).astype(dtype)
    a[0, :] = info.min if info.min else info.max
    b[:, 0] = info.min if info.min else info.max
    program = _lowered(_dot(preferred), a, b)
    (e,) = expected_outputs(program, [a, b])
    truth = a.astype(np.int64) @ b.astype(np.int64)
    assert abs(int(truth[0, 0])) > 1 << 16                      # far past what 8 or 16 bits hold
    assert e.kind == "exact" and np.array_equal(e.array().astype(np.int64), truth)
    xla = np.asarray(jax.jit(_dot(preferred))(a, b))
    assert xla.dtype == np.dtype(preferred) and compare(e, xla).ok
    wrong = xla.copy()
    wrong[1, 1] += 1
    assert not compare(e, wrong).ok


def test_a_model_sized_promoted_dot_takes_the_whole_array_route():
    """128×512 · 512×64 bf16 → f32: stated on whole arrays (the exact
    per-element route takes only the odd element the enclosures cannot
    decide), holding XLA's output; sampled elements hold their exact sums."""
    rng = np.random.default_rng(5)
    a = rng.uniform(-3, 3, (128, 512)).astype(ml_dtypes.bfloat16)
    b = rng.uniform(-3, 3, (512, 64)).astype(ml_dtypes.bfloat16)
    (e,) = expected_outputs(_lowered(_dot(jnp.float32), a, b), [a, b])
    stats = accumulate.STATS[-1]
    assert stats["elements"] == 128 * 64 and stats["exact route"] <= stats["elements"] // 100
    assert compare(e, np.asarray(jax.jit(_dot(jnp.float32))(a, b))).ok
    lo, hi = _ends(e)
    for i, j in ((0, 0), (17, 63), (127, 5)):
        s = sum((Fraction(float(x)) * Fraction(float(y)) for x, y in zip(a[i].astype(np.float64),
                                                                           b[:, j].astype(np.float64))), Fraction(0))
        assert Fraction(float(lo[i, j])) <= s <= Fraction(float(hi[i, j]))


def test_an_approximate_operand_is_carried_through_the_promoted_dot():
    """sin(a) (approximate, bf16) · b → f32: the bilinear route states the
    range (its reason says so), with f32's accumulation bound; it holds the
    sums of the correctly rounded sines and of the sines moved one bf16
    step toward each extreme, and XLA's output."""
    rng = np.random.default_rng(3)
    a = rng.uniform(-3, 3, (4, 6)).astype(ml_dtypes.bfloat16)
    b = rng.uniform(-3, 3, (6, 3)).astype(ml_dtypes.bfloat16)

    def f(a, b):
        return lax.dot_general(jnp.sin(a), b, MATMUL, preferred_element_type=jnp.float32)
    (e,) = expected_outputs(_lowered(f, a, b), [a, b])
    assert e.kind == "bounded" and bilinear.WHY in e.why and e.type.mlir == "tensor<4x3xf32>"
    lo, hi = _ends(e)
    sines = np.sin(a.astype(np.float64)).astype(ml_dtypes.bfloat16)
    up = np.nextafter(sines.astype(np.float32), np.float32(np.inf)).astype(ml_dtypes.bfloat16)
    down = np.nextafter(sines.astype(np.float32), np.float32(-np.inf)).astype(ml_dtypes.bfloat16)
    # one bf16 step: the float32 neighbour rounds back, so step in bf16's own order
    up = np.where(up == sines, (sines.view(np.uint16) + np.where(sines >= 0, 1, -1)).astype(np.uint16)
                  .view(ml_dtypes.bfloat16), up)
    down = np.where(down == sines, (sines.view(np.uint16) - np.where(sines > 0, 1, -1)).astype(np.uint16)
                    .view(ml_dtypes.bfloat16), down)
    B = b.astype(np.float64)
    for i in range(4):
        for j in range(3):
            def total(vals):
                return sum((Fraction(float(x)) * Fraction(float(y)) for x, y in zip(vals, B[:, j])), Fraction(0))
            high = [u if y > 0 else d for u, d, y in zip(up[i].astype(np.float64), down[i].astype(np.float64), B[:, j])]
            low = [d if y > 0 else u for u, d, y in zip(up[i].astype(np.float64), down[i].astype(np.float64), B[:, j])]
            L, H = Fraction(float(lo[i, j])), Fraction(float(hi[i, j]))
            assert L <= total(sines[i].astype(np.float64)) <= H
            assert L <= total(low) and total(high) <= H
    assert compare(e, np.asarray(jax.jit(f)(a, b))).ok


def test_what_v1_20_does_not_promote_is_rejected_with_the_whole_clause():
    """f32 → f16 (narrower) and i8 → f32 (another kind) break C13; the
    message carries C13's whole statement, not its first line."""
    a = np.ones((2, 3), np.float32)
    b = np.ones((3, 2), np.float32)
    narrower = _lowered(lambda a, b: lax.dot_general(a, b, MATMUL), a, b).replace("tensor<2x2xf32>", "tensor<2x2xf16>")
    assert "xf16" in narrower and rejection(narrower) == "dot_general_c13"
    with pytest.raises(ProgramRejected) as got:
        expected_outputs(narrower, [a, b])
    msg = str(got.value)
    assert "dim(`rhs`, `rhs_result_dimensions`)" in msg and "is_promotable(element_type(`lhs`)" in msg
    i8 = np.ones((2, 3), np.int8)
    other_kind = _lowered(_dot(jnp.int32), i8, i8.T).replace("xi32>", "xf32>")
    assert rejection(other_kind) == "dot_general_c13"


def test_a_promoted_convolution_is_what_c27_forbids():
    """convolution's C27 (the seed's and v1.20's) demands equal element
    types: JAX's conv_general_dilated with preferred_element_type is
    rejected, naming C27 in full."""
    x = np.ones((1, 5, 2), ml_dtypes.bfloat16)
    k = np.ones((3, 2, 2), ml_dtypes.bfloat16)

    def conv(x, k):
        return lax.conv_general_dilated(x, k, (1,), "VALID", dimension_numbers=("NWC", "WIO", "NWC"),
                                        preferred_element_type=jnp.float32)
    program = _lowered(conv, x, k)
    assert "stablehlo.convolution" in program and "xf32>" in program
    with pytest.raises(ProgramRejected) as got:
        expected_outputs(program, [x, k])
    assert got.value.constraint == "convolution_c27" and "element_type(`result`) $=$ element_type(`lhs`)" in str(got.value)
