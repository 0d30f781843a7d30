"""v1.20's promotable reduction bodies, executed: the oracle runs the body
in its own element type E.

StableHLO v1.20 lets reduce, reduce_window, scatter, select_and_scatter,
all_reduce, reduce_scatter and collective_reduce take a body of an element
type E wider than the inputs' (`is_promotable(element_type(input), E)`);
its Semantics convert the inputs (and init values, and scatter's updates)
to E (`to_destination_type`) and apply the body there, so the results are
E's and a sum is accumulated — and bounded — in E, not in the inputs' type.

Truth here is independent of the oracle: the exact sum of the exactly
converted inputs in rationals (`fractions`), and where the sum is not
exact in E the bound of summing n terms in E in any order,
γ_E(n)·Σ|x| (Higham, Accuracy and Stability, Lemma 3.1 / eq. 4.4) plus
n·2^(emin-p) for subnormal rounding, written out here with E's unit
roundoff.  The values are chosen so that the body's type shows: 256 + 1 +
1 + 1 is 259 in f32 in every order, while in bf16 (8 significant bits)
every order gives 256 or 260.
"""
from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from shlo_conform.generators.expect import expected_outputs, rejection
from shlo_conform.oracle.grid import execute_on_grid
from shlo_conform.oracle.program import parse_program
from shlo_conform.spec.grid import Grid
from shlo_conform.spec.types import from_bits, parse_type
from shlo_conform.suites.compare import compare

BF16 = ml_dtypes.bfloat16

# unit roundoff u = 2^-p and the smallest subnormal's half-step 2^(emin-p) of the formats used as E
U = {"f32": (Fraction(1, 1 << 24), Fraction(1, 1 << 150)), "f64": (Fraction(1, 1 << 53), Fraction(1, 1 << 1075)),
     "bf16": (Fraction(1, 1 << 8), Fraction(1, 1 << 134))}


def _gamma(n: int, fmt: str) -> Fraction:
    u = U[fmt][0]
    return n * u / (1 - n * u)


def _ends(e) -> tuple[list[Fraction], list[Fraction]]:
    """(lo, hi) per element as rationals (an exact expectation: its value twice)."""
    et = e.type.element_type
    if e.kind == "bounded":
        lo, hi = from_bits(np.asarray(e.lo), et), from_bits(np.asarray(e.hi), et)
    else:
        lo = hi = e.array()
    return ([Fraction(float(x)) for x in np.asarray(lo, np.float64).reshape(-1)],
            [Fraction(float(x)) for x in np.asarray(hi, np.float64).reshape(-1)])


ULP = {"f32": lambda v: Fraction(float(np.spacing(np.float32(abs(float(v)))))),
       "f64": lambda v: Fraction(float(np.spacing(abs(float(v)))))}


def _bounded_in(e, k: int, terms: list, fmt: str) -> None:
    """Element k of `e` holds the exact sum of `terms` (rationals) and is no
    wider than summing them in `fmt` in any order allows: γ_fmt(n)·Σ|x| +
    n·2^(emin-p) either side, plus a step of `fmt` at each end for the
    outward rounding of the stated ends."""
    lo, hi = _ends(e)
    s = sum(terms, Fraction(0))
    n, mag = len(terms), sum((abs(t) for t in terms), Fraction(0))
    allowance = _gamma(n, fmt) * mag + n * U[fmt][1]
    assert lo[k] <= s <= hi[k], (k, lo[k], s, hi[k])
    assert hi[k] - lo[k] <= 2 * allowance + 2 * ULP[fmt](s + allowance), (k, hi[k] - lo[k], allowance)


def _reduce(tin: str, tbody: str, shape: tuple, tres: str | None = None) -> str:
    """reduce over the last dimension with an add body in `tbody`, results
    of `tres` (the body's type unless given)."""
    init = tin
    tres = tres or tbody
    dims = "x".join(map(str, shape))
    out = "x".join(map(str, shape[:-1]))
    return (f"func.func @main(%x: tensor<{dims}x{tin}>, %i: tensor<{init}>) -> tensor<{out}x{tres}> {{\n"
            '  %r = "stablehlo.reduce"(%x, %i) ({\n'
            f"  ^bb0(%a: tensor<{tbody}>, %b: tensor<{tbody}>):\n"
            f'    %s = "stablehlo.add"(%a, %b) : (tensor<{tbody}>, tensor<{tbody}>) -> tensor<{tbody}>\n'
            f'    "stablehlo.return"(%s) : (tensor<{tbody}>) -> ()\n'
            f"  }}) {{dimensions = array<i64: {len(shape) - 1}>}} : (tensor<{dims}x{tin}>, tensor<{init}>) "
            f"-> tensor<{out}x{tres}>\n"
            f'  "func.return"(%r) : (tensor<{out}x{tres}>) -> ()\n}}\n')


def test_reduce_bf16_with_an_f32_body_sums_in_f32():
    """Row 0: 256 + 1 + 1 + 1 = 259, exact in f32 whatever the order: the
    stated range holds 259 within f32's allowance and refuses 256 and 260,
    what a bf16 accumulation gives.  Row 1: 64 random bf16 values: the
    range holds the exact sum and is no wider than f32's accumulation
    bound — a hundredth of bf16's."""
    rng = np.random.default_rng(3)
    x = np.zeros((2, 64), dtype=BF16)
    x[0, :4] = [256, 1, 1, 1]
    x[1] = rng.uniform(-4, 4, 64).astype(BF16)
    (e,) = expected_outputs(_reduce("bf16", "f32", (2, 64)), [x, np.zeros((), BF16)])
    assert e.type.mlir == "tensor<2xf32>"
    rows = [[Fraction(float(v)) for v in r] for r in x.astype(np.float64)]
    for k in (0, 1):
        _bounded_in(e, k, rows[k], "f32")
    lo, hi = _ends(e)
    mag = sum((abs(t) for t in rows[1]), Fraction(0))
    assert hi[1] - lo[1] < _gamma(64, "bf16") * mag / 100      # not bf16's allowance
    s1 = float(sum(rows[1], Fraction(0)))
    assert compare(e, np.array([259, s1], dtype=np.float32)).ok
    for wrong in (256, 260):   # what a bf16 accumulation gives
        assert not compare(e, np.array([wrong, s1], dtype=np.float32)).ok


def test_reduce_si8_with_an_si32_body_does_not_wrap_at_8_bits():
    """40 × 127 and 40 × -128: exact sums (5080, -5120) far past si8."""
    x = np.array([[127] * 40, [-128] * 40], dtype=np.int8)
    (e,) = expected_outputs(_reduce("i8", "i32", (2, 40)), [x, np.zeros((), np.int8)])
    assert e.type.mlir == "tensor<2xi32>" and e.kind == "exact"
    assert e.array().tolist() == [127 * 40, -128 * 40]


def test_reduce_f32_with_an_f64_body_keeps_what_f32_loses():
    """2^24 + 1 + 1 + 1 + 1: 16777220 exactly in f64 (every order); in f32
    the first 2^24 + 1 already rounds back to 2^24."""
    x = np.array([[2.0 ** 24, 1, 1, 1, 1]], dtype=np.float32)
    (e,) = expected_outputs(_reduce("f32", "f64", (1, 5)), [x, np.zeros((), np.float32)])
    assert e.type.mlir == "tensor<1xf64>"
    _bounded_in(e, 0, [Fraction(2 ** 24), *[Fraction(1)] * 4], "f64")
    assert compare(e, np.array([2.0 ** 24 + 4], dtype=np.float64)).ok
    assert not compare(e, np.array([2.0 ** 24], dtype=np.float64)).ok   # f32's accumulation


def test_reduce_complex64_with_a_complex128_body():
    """(2^24 + 0i) + 3 × (1 + 1i) = 16777219 + 3i, exact in complex128."""
    x = np.array([[2.0 ** 24, 1 + 1j, 1 + 1j, 1 + 1j]], dtype=np.complex64)
    program = _reduce("complex<f32>", "complex<f64>", (1, 4))
    (e,) = expected_outputs(program, [x, np.zeros((), np.complex64)])
    assert e.type.mlir == "tensor<1xcomplex<f64>>"
    assert compare(e, np.array([2.0 ** 24 + 3 + 3j], dtype=np.complex128)).ok
    assert not compare(e, np.array([2.0 ** 24 + 2 + 3j], dtype=np.complex128)).ok


@pytest.mark.parametrize("tin, tbody, label", [("f32", "f16", "reduce_c6"), ("i32", "f32", "reduce_c6")],
                         ids=["narrower", "another-kind"])
def test_reduce_refuses_a_body_that_is_not_promotable(tin, tbody, label):
    """f32 → f16 (narrower) and si32 → f32 (another kind): v1.20's C6, the
    project's `reduce_c6`; results of the body's type too break its C8."""
    assert rejection(_reduce(tin, tbody, (2, 3), tres=tin)) == label
    assert rejection(_reduce(tin, tbody, (2, 3))) in (label, "reduce_c2")   # both broken: the first one read


def test_reduce_window_f16_with_an_f32_body():
    """Windows of 3 over [2048, 1, 1, 1, 1] (f16: 11 significant bits, so
    2048 + 1 is a tie that rounds back to 2048): in f32 the sums are
    2050, 3, 3 exactly."""
    mlir = ("func.func @main(%x: tensor<5xf16>, %i: tensor<f16>) -> tensor<3xf32> {\n"
            '  %r = "stablehlo.reduce_window"(%x, %i) ({\n'
            "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
            '    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n'
            '    "stablehlo.return"(%s) : (tensor<f32>) -> ()\n'
            "  }) {window_dimensions = array<i64: 3>} : (tensor<5xf16>, tensor<f16>) -> tensor<3xf32>\n"
            '  "func.return"(%r) : (tensor<3xf32>) -> ()\n}\n')
    (e,) = expected_outputs(mlir, [np.array([2048, 1, 1, 1, 1], np.float16), np.zeros((), np.float16)])
    for k, window in enumerate(([2048, 1, 1], [1, 1, 1], [1, 1, 1])):
        _bounded_in(e, k, [Fraction(v) for v in window], "f32")
    assert not compare(e, np.array([2048, 3, 3], np.float32)).ok   # f16's accumulation


def test_scatter_bf16_with_an_f32_update_computation():
    """Three updates of 1 onto input[0] = 256 (bf16): 259 in f32 in every
    order; the elements no update reaches keep the input, converted."""
    mlir = ("func.func @main(%x: tensor<4xbf16>, %idx: tensor<3x1xi32>, %u: tensor<3xbf16>) -> tensor<4xf32> {\n"
            '  %r = "stablehlo.scatter"(%x, %idx, %u) ({\n'
            "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
            '    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n'
            '    "stablehlo.return"(%s) : (tensor<f32>) -> ()\n'
            "  }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], "
            "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} "
            ": (tensor<4xbf16>, tensor<3x1xi32>, tensor<3xbf16>) -> tensor<4xf32>\n"
            '  "func.return"(%r) : (tensor<4xf32>) -> ()\n}\n')
    x = np.array([256, 0.5, -3, 7], BF16)
    (e,) = expected_outputs(mlir, [x, np.zeros((3, 1), np.int32), np.ones(3, BF16)])
    assert e.type.mlir == "tensor<4xf32>"
    assert compare(e, np.array([259, 0.5, -3, 7], np.float32)).ok
    assert not compare(e, np.array([256, 0.5, -3, 7], np.float32)).ok


def test_select_and_scatter_bf16_with_an_f32_scatter_region():
    """Windows of 2 over [1, 5, 2, 0] (GE): the first two select 5, the
    third 2; sources 256, 1, 1 give 257 and 1 in f32 (bf16: 256)."""
    mlir = ("func.func @main(%x: tensor<4xbf16>, %src: tensor<3xbf16>, %i: tensor<bf16>) -> tensor<4xf32> {\n"
            '  %r = "stablehlo.select_and_scatter"(%x, %src, %i) ({\n'
            "  ^bb0(%a: tensor<bf16>, %b: tensor<bf16>):\n"
            '    %c = "stablehlo.compare"(%a, %b) {comparison_direction = #stablehlo<comparison_direction GE>} '
            ": (tensor<bf16>, tensor<bf16>) -> tensor<i1>\n"
            '    "stablehlo.return"(%c) : (tensor<i1>) -> ()\n'
            "  }, {\n"
            "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
            '    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n'
            '    "stablehlo.return"(%s) : (tensor<f32>) -> ()\n'
            "  }) {window_dimensions = array<i64: 2>, window_strides = array<i64: 1>} "
            ": (tensor<4xbf16>, tensor<3xbf16>, tensor<bf16>) -> tensor<4xf32>\n"
            '  "func.return"(%r) : (tensor<4xf32>) -> ()\n}\n')
    ins = [np.array([1, 5, 2, 0], BF16), np.array([256, 1, 1], BF16), np.zeros((), BF16)]
    (e,) = expected_outputs(mlir, ins)
    assert e.type.mlir == "tensor<4xf32>"
    for k, sources in enumerate(([0], [0, 256, 1], [0, 1], [0])):   # init_value 0 and the selected sources
        _bounded_in(e, k, [Fraction(v) for v in sources], "f32")
    assert not compare(e, np.array([0, 256, 1, 0], np.float32)).ok


def _collective(op: str, tin: str, tbody: str, n_in: int, n_out: int, attrs: str, grid: Grid) -> str:
    return (f"module attributes {{mhlo.num_replicas = {grid.num_replicas} : i32, "
            f"mhlo.num_partitions = {grid.num_partitions} : i32}} {{\n"
            f"func.func @main(%x: tensor<{n_in}x{tin}>) -> tensor<{n_out}x{tbody}> {{\n"
            f'  %r = "stablehlo.{op}"(%x) ({{\n'
            f"    ^bb0(%a: tensor<{tbody}>, %b: tensor<{tbody}>):\n"
            f'      %s = "stablehlo.add"(%a, %b) : (tensor<{tbody}>, tensor<{tbody}>) -> tensor<{tbody}>\n'
            f'      "stablehlo.return"(%s) : (tensor<{tbody}>) -> ()\n'
            f"  }}) {{{attrs}}} : (tensor<{n_in}x{tin}>) -> tensor<{n_out}x{tbody}>\n"
            f"  func.return %r : tensor<{n_out}x{tbody}>\n}}\n}}\n")


GROUP4 = "replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>"
PER_PROCESS = [256, 1, 1, 1]   # the sum over the four processes: 259 in f32 in every tree, 256 or 260 in bf16


def test_all_reduce_bf16_with_an_f32_computation():
    grid = Grid(4, 1)
    program = parse_program(_collective("all_reduce", "bf16", "f32", 2, 2, GROUP4, grid))
    inputs = [[np.array([v, 0.25], BF16)] for v in PER_PROCESS]
    for (e,) in execute_on_grid(program, grid, inputs):
        assert e.type.mlir == "tensor<2xf32>"
        _bounded_in(e, 0, [Fraction(v) for v in PER_PROCESS], "f32")
        _bounded_in(e, 1, [Fraction(1, 4)] * 4, "f32")
        assert not compare(e, np.array([256, 1], np.float32)).ok and not compare(e, np.array([260, 1], np.float32)).ok


def test_reduce_scatter_si8_with_an_si32_computation():
    """4 × 100 = 400 past si8; each process keeps its two elements."""
    grid = Grid(4, 1)
    program = parse_program(_collective("reduce_scatter", "i8", "i32", 8, 2,
                                        "scatter_dimension = 0 : i64, " + GROUP4, grid))
    inputs = [[np.arange(8, dtype=np.int8) + 100 - 8] for _ in range(4)]
    got = execute_on_grid(program, grid, inputs)
    full = [4 * (k + 92) for k in range(8)]
    assert [e.array().tolist() for (e,) in got] == [full[2 * p:2 * p + 2] for p in range(4)]


def test_collective_reduce_f16_with_an_f32_computation():
    """The group's source (process 0) gets the f32 sum 2048 + 3 = 2051
    (f16 holds 2048 or 2052 only); the others zeros."""
    grid = Grid(4, 1)
    program = parse_program(_collective("collective_reduce", "f16", "f32", 1, 1, GROUP4, grid))
    inputs = [[np.array([v], np.float16)] for v in (2048, 1, 1, 1)]
    got = execute_on_grid(program, grid, inputs)
    _bounded_in(got[0][0], 0, [Fraction(v) for v in (2048, 1, 1, 1)], "f32")
    assert not compare(got[0][0], np.array([2052], np.float32)).ok
    assert [_ends(e) for (e,) in got[1:]] == [([0], [0])] * 3


def test_collective_reduce_takes_per_tensor_quantized_operands_as_all_reduce_does():
    """v1.20 I1 "tensors or per-tensor quantized tensors": two replicas,
    `add` on !quant.uniform<i8:f32, 0.5:-10>.  The source (process 0):
    storage 100 and 50 are 55.0 and 30.0, their sum 85.0 is 170 - 10 = 160
    → 127 (saturated); storage -10 and 3 are 0.0 and 6.5 → 13 - 10 = 3.
    Process 1: quantize(0) = the zero point -10, not storage 0."""
    q = "!quant.uniform<i8:f32, 0.5:-10>"
    grid = Grid(2, 1)
    text = (f"module attributes {{mhlo.num_replicas = 2 : i32, mhlo.num_partitions = 1 : i32}} {{\n"
            f"func.func @main(%a: tensor<2x{q}>) -> tensor<2x{q}> {{\n"
            f'  %r = "stablehlo.collective_reduce"(%a) ({{\n'
            f"    ^bb0(%x: tensor<{q}>, %y: tensor<{q}>):\n"
            f'      %s = "stablehlo.add"(%x, %y) : (tensor<{q}>, tensor<{q}>) -> tensor<{q}>\n'
            f'      "stablehlo.return"(%s) : (tensor<{q}>) -> ()\n'
            f"  }}) {{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}} : (tensor<2x{q}>) -> tensor<2x{q}>\n"
            f'  "func.return"(%r) : (tensor<2x{q}>) -> ()\n}}\n}}\n')
    outs = execute_on_grid(parse_program(text, grid), grid, [[np.array([100, -10], np.int8)],
                                                               [np.array([50, 3], np.int8)]])
    assert [[int(v) for v in np.asarray(o[0].bits).view(np.int8)] for o in outs] == [[127, 3], [-10, -10]]
    assert outs[0][0].type == parse_type(f"tensor<2x{q}>")
