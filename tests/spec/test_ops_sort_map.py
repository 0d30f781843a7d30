"""sort and map: constraints on hand-made instances, inference, semantics against
the seed's Examples and hand-computed values, and a second implementation
(jax.numpy / jax.lax, lowered to stablehlo.sort; numpy for map's bodies)
compared with the oracle's expectation through `suites.compare.compare`."""
from __future__ import annotations

import math

import numpy as np
import pytest

from shlo_conform.backends.base import load_backend
from shlo_conform.generators import emit, expect, suite
from shlo_conform.spec.dsl import ANY_VALUE, Choices, Function
from shlo_conform.spec.expectation import Expectation
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.ops import sort as sort_mod
from shlo_conform.spec.types import E_BF16, E_F32, I1, SI8, SI32, TensorType
from shlo_conform.suites.compare import compare

SORT = OPS["sort"]
MAP = OPS["map"]


def scalar(et):
    return TensorType((), et)


# --------------------------------------------------------------------------
# sort: instances
# --------------------------------------------------------------------------

def comparator(types, call=None, body="lt", out=I1):
    """A comparator Function over (a0, b0, a1, b1, …); `call(*scalars) -> bool`."""
    ins = tuple(scalar(t) for t in types for _ in range(2))
    wrapped = None if call is None else (lambda *a: [np.bool_(call(*a))])
    return Function(ins, (scalar(out),), body, wrapped)


def lt(a, b, *rest):
    return a < b


def sort_inst(shape, types=(SI32,), dimension=0, stable=True, fn=None, results=None, shapes=None):
    inputs = [TensorType(tuple(s), t) for s, t in zip(shapes or [shape] * len(types), types)]
    regions = {"comparator": fn or comparator(types, lt)}
    attrs = {"dimension": dimension, "is_stable": stable}
    res = SORT.infer(SORT.instance({"inputs": inputs}, attrs, {}, regions)) if results is None \
        else {"results": results}
    return SORT.instance({"inputs": inputs}, attrs, res, regions)


def test_sort_seed_example_is_valid_and_inferred():
    inst = sort_inst((2, 3), (SI32, SI32), dimension=0, fn=comparator((SI32, SI32), lambda a, b, c, d: a > b))
    assert [tuple(t.shape) for t in inst.results["results"]] == [(2, 3), (2, 3)]
    assert SORT.violated(inst) == []


def test_sort_constraints_broken_alone():
    i32 = TensorType((2, 3), SI32)
    # C2: a result of another element type, or one result fewer
    assert SORT.violated(sort_inst((2, 3), (SI32, E_F32), results=[i32, i32])) == ["sort_c2"]
    assert SORT.violated(sort_inst((2, 3), (SI32, E_F32), results=[i32])) == ["sort_c2"]
    # C3: the inputs differ in shape (each result keeps its input's type: C2 holds)
    c3 = sort_inst(None, (SI32, E_F32), shapes=[(2, 3), (3, 2)])
    assert SORT.violated(c3) == ["sort_c3"]
    # C4: -R <= dimension < R
    assert SORT.violated(sort_inst((2, 3), dimension=2)) == ["sort_c4"]
    assert SORT.violated(sort_inst((2, 3), dimension=-3)) == ["sort_c4"]
    assert SORT.violated(sort_inst((2, 3), dimension=-2)) == []
    assert SORT.violated(sort_inst((), dimension=0)) == ["sort_c4"]       # no rank-0 sort at all
    assert SORT.violated(sort_inst((), dimension=-1)) == ["sort_c4"]
    # C5: comparator over f32 for si32 inputs, or returning si32
    assert SORT.violated(sort_inst((2, 3), fn=comparator((E_F32,), lt))) == ["sort_c5"]
    assert SORT.violated(sort_inst((2, 3), fn=comparator((SI32,), lt, out=SI32))) == ["sort_c5"]
    # C5 as the seed writes it, (E1, E1, …): one pair short, or the pair of inputs[1] first
    assert SORT.violated(sort_inst((2, 3), (SI32, E_F32), fn=comparator((E_F32,), lt))) == ["sort_c5"]
    assert SORT.violated(sort_inst((2, 3), (SI32, E_F32), fn=comparator((E_F32, SI32), lt))) == ["sort_c5"]
    assert SORT.violated(sort_inst((2, 3), (SI32, E_F32), fn=comparator((SI32, E_F32), lt))) == []


def test_sort_without_inputs_breaks_c1_and_c4():
    """With no inputs there is no inputs[0]: C4 has no R and fails too (so
    check-spec calls C1 implied by C4)."""
    inst = SORT.instance({"inputs": []}, {"dimension": 0, "is_stable": False}, {"results": []},
                         {"comparator": Function((), (scalar(I1),), "never")})
    assert SORT.violated(inst) == ["sort_c1", "sort_c4"]


def test_sort_infer_keeps_every_type():
    inst = sort_inst((4, 1, 2), (E_BF16, SI8, I1), dimension=-1)
    assert SORT.infer(inst)["results"] == [TensorType((4, 1, 2), t) for t in (E_BF16, SI8, I1)]


# --------------------------------------------------------------------------
# sort: semantics
# --------------------------------------------------------------------------

def run_sort(inst, *arrays):
    return SORT.semantics.fn(inst, *[np.asarray(a) for a in arrays])


SEED_IN0 = np.array([[1, 2, 3], [3, 2, 1]], np.int32)
SEED_IN1 = np.array([[3, 2, 1], [1, 2, 3]], np.int32)


@pytest.mark.parametrize("dimension, out0, out1", [
    (0, [[3, 2, 3], [1, 2, 1]], [[1, 2, 1], [3, 2, 3]]),
    (1, [[3, 2, 1], [3, 2, 1]], [[1, 2, 3], [1, 2, 3]]),
    (-1, [[3, 2, 1], [3, 2, 1]], [[1, 2, 3], [1, 2, 3]]),
    (-2, [[3, 2, 3], [1, 2, 1]], [[1, 2, 1], [3, 2, 3]]),
])
def test_sort_seed_example_values(dimension, out0, out1):
    """The seed's two Examples (GT, stable), and the same through negative dimensions."""
    inst = sort_inst((2, 3), (SI32, SI32), dimension=dimension, fn=comparator((SI32, SI32), lambda a, b, c, d: a > b))
    r0, r1 = run_sort(inst, SEED_IN0, SEED_IN1)
    assert r0.tolist() == out0 and r1.tolist() == out1


SEED_PROGRAM = """func.func @main(%input0: tensor<2x3xi32>, %input1: tensor<2x3xi32>) -> (tensor<2x3xi32>, tensor<2x3xi32>) {
  %result:2 = "stablehlo.sort"(%input0, %input1) ({
    ^bb0(%arg0: tensor<i32>, %arg1: tensor<i32>, %arg2: tensor<i32>, %arg3: tensor<i32>):
      %predicate = "stablehlo.compare"(%arg0, %arg1) {
        comparison_direction = #stablehlo<comparison_direction GT>
      } : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%predicate) : (tensor<i1>) -> ()
  }) {
    dimension = DIM : i64,
    is_stable = true
  } : (tensor<2x3xi32>, tensor<2x3xi32>) -> (tensor<2x3xi32>, tensor<2x3xi32>)
  func.return %result#0, %result#1 : tensor<2x3xi32>, tensor<2x3xi32>
}
"""


@pytest.mark.parametrize("dimension, out0, out1", [
    (0, [[3, 2, 3], [1, 2, 1]], [[1, 2, 1], [3, 2, 3]]),
    (1, [[3, 2, 1], [3, 2, 1]], [[1, 2, 3], [1, 2, 3]]),
])
def test_sort_seed_examples_through_the_oracle(dimension, out0, out1):
    """The seed's Examples as programs (the shared examples harness reads one
    result per op; the two-result head is written `%result:2` here)."""
    oracle = load_backend("oracle")
    got = oracle.run(oracle.compile(SEED_PROGRAM.replace("DIM", str(dimension))), [SEED_IN0, SEED_IN1])
    assert [g.tolist() for g in got] == [out0, out1]


def test_sort_attributes_left_out_read_as_mlir_defaults():
    """A program may leave `dimension` and `is_stable` out (the MLIR defaults: the last axis,
    unstable); jaxlib's printer does so for the defaults."""
    text = """func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "stablehlo.sort"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "stablehlo.return"(%c) : (tensor<i1>) -> ()
  }) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}"""
    oracle = load_backend("oracle")
    [got] = oracle.run(oracle.compile(text), [np.array([[3, 1, 2], [0, -1, 5]], np.float32)])
    assert got.tolist() == [[1, 2, 3], [-1, 0, 5]]


def test_sort_stable_ties_keep_input_order():
    keys, payload = np.array([2, 1, 2, 1], np.int32), np.array([10, 11, 12, 13], np.int32)
    k, p = run_sort(sort_inst((4,), (SI32, SI32), fn=comparator((SI32, SI32), lt)), keys, payload)
    assert isinstance(k, np.ndarray) and isinstance(p, np.ndarray)
    assert k.tolist() == [1, 1, 2, 2] and p.tolist() == [11, 13, 10, 12]


def test_sort_unstable_ties_offer_every_tied_element():
    keys, payload = np.array([2, 1, 2, 1], np.int32), np.array([10, 11, 12, 13], np.int32)
    k, p = run_sort(sort_inst((4,), (SI32, SI32), stable=False, fn=comparator((SI32, SI32), lt)), keys, payload)
    assert isinstance(k, np.ndarray) and k.tolist() == [1, 1, 2, 2]     # equal keys: same bits, nothing to offer
    assert isinstance(p, Choices)
    assert p.primary.tolist() == [11, 13, 10, 12]
    assert {i: [int(v) for v in vs] for i, vs in p.options.items()} == {0: [13], 1: [11], 2: [12], 3: [10]}
    assert p.labels == {0: ["ties reordered: tied element #1"], 1: ["ties reordered: tied element #0"],
                        2: ["ties reordered: tied element #1"], 3: ["ties reordered: tied element #0"]}
    assert "is_stable" in p.why


def test_sort_signed_zeros_are_a_tie_under_lt():
    """-0 < +0 is false both ways (IEEE compareQuietLess): a tie of different bits."""
    x = np.array([0.0, -0.0, -1.0], np.float32)
    fn = comparator((E_F32,), lt)
    [stable] = run_sort(sort_inst((3,), (E_F32,), fn=fn), x)
    assert stable.tolist() == [-1.0, 0.0, 0.0] and list(np.signbit(stable)) == [True, False, True]
    [unstable] = run_sort(sort_inst((3,), (E_F32,), stable=False, fn=fn), x)
    assert isinstance(unstable, Choices)
    assert [np.signbit(v) for v in unstable.options[1]] == [True]      # -0 may come first
    assert [np.signbit(v) for v in unstable.options[2]] == [False]


def test_sort_negative_dimension_is_the_same_axis():
    keys = np.array([[3, 1, 2], [0, 5, 4]], np.int32)
    a = run_sort(sort_inst((2, 3), dimension=-1), keys)[0]
    b = run_sort(sort_inst((2, 3), dimension=1), keys)[0]
    assert a.tolist() == b.tolist() == [[1, 2, 3], [0, 4, 5]]
    assert run_sort(sort_inst((2, 3), dimension=-2), keys)[0].tolist() == [[0, 1, 2], [3, 5, 4]]


def test_sort_zero_sized_dimension():
    out = run_sort(sort_inst((2, 0), (SI32, E_F32), dimension=1), np.zeros((2, 0), np.int32), np.zeros((2, 0), np.float32))
    assert [o.shape for o in out] == [(2, 0), (2, 0)]
    out = run_sort(sort_inst((0, 3), dimension=1), np.zeros((0, 3), np.int32))
    assert out[0].shape == (0, 3)


def test_sort_lexicographic_two_keys():
    k0 = np.array([1, 0, 1, 0, 1], np.int32)
    k1 = np.array([2, 9, 1, 9, 2], np.int32)
    pay = np.array([0, 1, 2, 3, 4], np.int32)
    fn = comparator((SI32, SI32, SI32), lambda a, b, c, d, e, f: a < b or (a == b and c < d), "lexicographic_lt")
    r = run_sort(sort_inst((5,), (SI32, SI32, SI32), stable=False, fn=fn), k0, k1, pay)
    assert r[0].tolist() == [0, 0, 1, 1, 1] and r[1].tolist() == [9, 9, 1, 2, 2]
    assert r[2].primary.tolist() == [1, 3, 2, 0, 4]
    assert {i: [int(v) for v in vs] for i, vs in r[2].options.items()} == {0: [3], 1: [1], 3: [4], 4: [0]}


def test_sort_never_is_all_ties():
    x = np.array([5, 7, 6], np.int32)
    never = comparator((SI32,), lambda a, b: False, "never")
    [stable] = run_sort(sort_inst((3,), fn=never), x)
    assert isinstance(stable, np.ndarray) and stable.tolist() == [5, 7, 6]
    [unstable] = run_sort(sort_inst((3,), stable=False, fn=never), x)
    assert {i: sorted(int(v) for v in vs) for i, vs in unstable.options.items()} == {0: [6, 7], 1: [5, 6], 2: [5, 7]}


def test_sort_nan_under_lt_is_open_with_the_formal_condition_first():
    """[3, NaN, 1] under `lt`: NaN is "equal" to both, so no strict weak
    order.  Orders meeting the formal condition (1 before 3, NaN anywhere):
    [NaN, 1, 3], [1, NaN, 3], [1, 3, NaN]; the primary is the first of them
    by least element index.  (With is_stable the prose would also keep 3
    before NaN before 1, which contradicts the formal condition: stability
    is not applied where the order is open.)"""
    x = np.array([3.0, np.nan, 1.0], np.float32)
    [out] = run_sort(sort_inst((3,), (E_F32,), fn=comparator((E_F32,), lt)), x)
    assert isinstance(out, Choices)
    assert np.isnan(out.primary[0]) and out.primary[1:].tolist() == [1.0, 3.0]
    any_label = "any value: the comparator is not a strict weak order on this row"
    formal = [f"formal condition: element #{t}" for t in range(3)]
    assert all(out.labels[i] == formal + [any_label] for i in range(3))
    shown = {i: ["nan" if v is not ANY_VALUE and math.isnan(v) else v for v in vs] for i, vs in out.options.items()}
    assert shown == {0: ["nan", 1.0, "nan", ANY_VALUE], 1: [3.0, "nan", 1.0, ANY_VALUE],
                     2: [3.0, "nan", 3.0, ANY_VALUE]}
    assert "strict weak order" in out.why


def test_sort_cyclic_comparator_meets_no_order():
    """Rock-paper-scissors: every element beats the next; no order meets the
    formal condition, so every element may be anything (labelled)."""
    rps = comparator((SI32,), lambda a, b: (int(b) - int(a)) % 3 == 1)
    [out] = run_sort(sort_inst((3,), fn=rps), np.array([0, 1, 2], np.int32))
    assert out.options == {i: [ANY_VALUE] for i in range(3)}
    assert out.labels == {i: ["any value: no order meets the formal condition"] for i in range(3)}


def test_strict_weak_order_check():
    lt3 = np.array([[False, True, True], [False, False, True], [False, False, False]])
    assert sort_mod.strict_weak_order(lt3)
    assert not sort_mod.strict_weak_order(lt3 | np.eye(3, dtype=bool))            # reflexive (le)
    nan = np.array([[False, False, False], [False, False, False], [True, False, False]])  # [3, NaN, 1] under lt
    assert not sort_mod.strict_weak_order(nan)                                     # incomparability not transitive
    cyc = np.array([[False, True, False], [False, False, True], [True, False, False]])
    assert not sort_mod.strict_weak_order(cyc)                                     # not transitive
    assert sort_mod.strict_weak_order(np.zeros((3, 3), bool))                      # never: all equal


def test_formal_positions_on_le_ties():
    """`le` on [2, 1, 2]: true both ways on the tie, so 1 first and the two 2s in either order."""
    x = [2, 1, 2]
    c = np.array([[a <= b for b in x] for a in x])
    allowed, order = sort_mod.formal_positions(c)
    assert allowed == [{1}, {0, 2}, {0, 2}] and order == [1, 0, 2]


# --------------------------------------------------------------------------
# sort: a second implementation (jax lowers jnp.sort, jnp.argsort and lax.sort to stablehlo.sort)
# --------------------------------------------------------------------------

import jax
jnp = jax.numpy
lax = jax.lax


def lowered(f, *args) -> str:
    text = jax.jit(f).lower(*args).as_text()
    assert '"stablehlo.sort"' in text
    return text


def agree_with_jax(f, *args):
    """The oracle's expectation for jax's own lowering, and jax's outputs compared with it."""
    text = lowered(f, *args)
    got = f(*args)
    got = [np.asarray(g) for g in (got if isinstance(got, (tuple, list)) else [got])]
    exps = expect.expected_outputs(text, [np.asarray(a) for a in args])
    assert len(exps) == len(got)
    for e, g in zip(exps, got):
        c = compare(e, g)
        assert c.ok, c.detail
    return exps, got


FLOATS = np.array([1.0, -0.0, np.nan, 0.0, -np.inf, 1.0, -np.nan, 2.5, 0.0, np.inf], np.float32)


def test_jnp_sort_matches_and_moves_bits():
    """jnp.sort's comparator canonicalises ±0 and NaN, then compares by
    TOTALORDER: -0 and +0 tie (stable: input order kept), NaNs go last."""
    exps, [got] = agree_with_jax(jnp.sort, FLOATS)
    assert exps[0].impl_defined == []            # stable: one answer
    assert got[:3].tolist() == [-np.inf, -0.0, 0.0] and list(np.signbit(got[1:4])) == [True, False, False]
    assert np.isnan(got[-2:]).all() and list(np.signbit(got[-2:])) == [False, True]   # NaN bits moved, in order


def test_jnp_argsort_matches():
    _, [got] = agree_with_jax(jnp.argsort, FLOATS)
    assert got.tolist() == [4, 1, 3, 8, 0, 5, 7, 9, 2, 6]   # hand-computed: stable, NaNs last


def test_lax_sort_unstable_with_payloads():
    keys = np.array([[2, 1], [1, 1], [2, 0], [1, 1]], np.int32)
    pay = np.array([[0.5, -1.0], [1.5, -2.0], [2.5, -3.0], [3.5, -4.0]], np.float32)
    f = lambda k, p: lax.sort((k, p), dimension=0, is_stable=False, num_keys=1)
    exps, got = agree_with_jax(f, keys, pay)
    assert exps[1].impl_defined                  # ties: the payload may come in another order
    assert sorted(got[1][:2, 0].tolist()) == [1.5, 3.5]


def test_lax_sort_two_keys_stable_last_axis():
    k0 = np.array([[1, 0, 1, 0, 1], [3, 3, 3, 3, 3]], np.int32)
    k1 = np.array([[0.0, -0.0, 0.0, np.nan, -1.0], [2.0, 1.0, 2.0, 1.0, 2.0]], np.float32)
    idx = np.tile(np.arange(5, dtype=np.int32), (2, 1))
    f = lambda a, b, c: lax.sort((a, b, c), dimension=1, is_stable=True, num_keys=2)
    _, got = agree_with_jax(f, k0, k1, idx)
    assert got[2].tolist() == [[1, 3, 4, 0, 2], [1, 3, 0, 2, 4]]


# --------------------------------------------------------------------------
# sort: exercise and generation
# --------------------------------------------------------------------------

def test_sort_values_repeat_keys_and_spread_payloads():
    rng = np.random.default_rng(0)
    inst = sort_inst((6, 4), (SI32, SI32), stable=False, fn=comparator((SI32, SI32), body="lt"))
    keys = sort_mod.input_values(inst, "inputs", 0, inst.inputs[0], rng)
    payload = sort_mod.input_values(inst, "inputs", 1, inst.inputs[1], rng)
    assert keys.shape == (6, 4) and len(np.unique(keys)) <= 3
    assert len(np.unique(payload)) == 24
    lex = sort_inst((6, 4), (SI32, SI32), fn=comparator((SI32, SI32), body="lexicographic_lt"))
    assert len(np.unique(sort_mod.input_values(lex, "inputs", 1, lex.inputs[1], rng))) <= 3   # a second key


def test_sort_float_keys_hold_specials():
    rng = np.random.default_rng(1)
    seen_nan = seen_zero_pair = False
    for _ in range(40):
        inst = sort_inst((64,), (E_F32,), fn=comparator((E_F32,), body="lt"))
        k = sort_mod.input_values(inst, "inputs", 0, inst.inputs[0], rng)
        seen_nan |= bool(np.isnan(k).any())
        zeros = k[k == 0]
        seen_zero_pair |= bool(np.signbit(zeros).any() and (~np.signbit(zeros)).any())
    assert seen_nan and seen_zero_pair
    total = sort_inst((64,), (E_F32,), fn=comparator((E_F32,), body="lt_totalorder"))
    k = sort_mod.input_values(total, "inputs", 0, total.inputs[0], rng)
    nans = k[np.isnan(k)]
    assert np.signbit(nans).any() and (~np.signbit(nans)).any()       # TOTALORDER places NaNs of both signs
    assert len(set(np.signbit(k[k == 0]).tolist())) <= 1              # one zero only (module docstring)


def test_sort_surveys_only_reflexive_comparators():
    for body in sort_mod.COMPARATORS:
        reason = sort_mod.survey_reason(sort_inst((3,), fn=comparator((SI32,), body=body)))
        assert (reason is not None) == (body in ("le", "ge")), body


@pytest.mark.long   # every generated sort case through the oracle backend (~50 s): make test-long (CI)
def test_sort_generated_cases_agree_with_the_oracle_backend():
    """Seed 0 through the real oracle: the corners are there, keys repeat,
    ±0 and NaN reach float keys, `le`/`ge` are surveys, each invalid case
    breaks its constraint, and the oracle backend meets every expectation."""
    cases, missing = suite.op_cases(SORT, 0)
    notes = " | ".join(c.note for c in cases)
    for corner in ("negative dimension", "zero-sized sorted dimension", "three inputs", "f32 keys with si32 payload"):
        assert corner in notes
    assert set(missing) <= {"sort_c1", "sort_c5"}   # module docstring and report: what blocks them
    oracle = load_backend("oracle")
    kinds = set()
    for c in cases:
        kinds.add(c.kind)
        if c.kind == "invalid":
            assert expect.rejects_for(c.mlir, c.violates)
            continue
        assert (c.kind == "survey") == ("comparator le" in c.note or "comparator ge" in c.note)
        got = oracle.run(oracle.compile(c.mlir), [t.array() for t in c.inputs])
        assert all(compare(e, g).ok for e, g in zip(c.expected, got)), c.id
    assert kinds == {"value", "survey", "invalid"}
    assert any(e.impl_defined for c in cases for e in c.expected)   # unstable ties were generated


# --------------------------------------------------------------------------
# map
# --------------------------------------------------------------------------

def map_fn(types, out, call=None, body="map_first"):
    wrapped = None if call is None else (lambda *a: [np.asarray(call(*a))])
    return Function(tuple(scalar(t) for t in types), (scalar(out),), body, wrapped)


def map_inst(shape, types=(SI32, SI32), dimensions=None, fn=None, result=None):
    inputs = [TensorType(tuple(shape), t) for t in types]
    dims = tuple(range(len(shape))) if dimensions is None else tuple(dimensions)
    regions = {"computation": fn or map_fn(types, types[0], lambda *a: a[0])}
    res = MAP.infer(MAP.instance({"inputs": inputs}, {"dimensions": dims}, {}, regions)) if result is None \
        else {"result": result}
    return MAP.instance({"inputs": inputs}, {"dimensions": dims}, res, regions)


def test_map_seed_example_is_valid_and_its_values():
    fn = map_fn((SI32, SI32), SI32, lambda a, b: np.int32(a * b), "map_multiply")
    inst = map_inst((2, 2), fn=fn)
    assert MAP.violated(inst) == []
    [out] = MAP.semantics.fn(inst, np.array([[0, 1], [2, 3]], np.int32), np.array([[4, 5], [6, 7]], np.int32))
    assert out.tolist() == [[0, 5], [12, 21]]


MAP_SEED_GENERIC = """func.func @main(%input0: tensor<2x2xi32>, %input1: tensor<2x2xi32>) -> tensor<2x2xi32> {
  %result = "stablehlo.map"(%input0, %input1) ({
    ^bb0(%arg0: tensor<i32>, %arg1: tensor<i32>):
      %0 = "stablehlo.multiply"(%arg0, %arg1) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%0) : (tensor<i32>) -> ()
  }) {
    dimensions = dense<[0, 1]> : tensor<2xi64>
  } : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi32>
  func.return %result : tensor<2x2xi32>
}
"""


def test_map_seed_example_through_the_oracle():
    """The seed's Example with its body in generic form: as printed (a
    pretty-form body with `dense<[0, 1]> : tensor<2xi64>` dimensions) it
    needs jaxlib's parser, which wants `array<i64: 0, 1>` there (report)."""
    oracle = load_backend("oracle")
    [got] = oracle.run(oracle.compile(MAP_SEED_GENERIC),
                       [np.array([[0, 1], [2, 3]], np.int32), np.array([[4, 5], [6, 7]], np.int32)])
    assert got.tolist() == [[0, 5], [12, 21]]


def test_map_constraints_broken_alone():
    assert MAP.violated(map_inst((2, 3), result=TensorType((3, 2), SI32))) == ["map_c1"]
    assert MAP.violated(map_inst((2, 3), dimensions=(1, 0))) == ["map_c3"]
    assert MAP.violated(map_inst((2, 3), dimensions=(0,))) == ["map_c3"]
    assert MAP.violated(map_inst((2, 3), dimensions=(0, 1, 2))) == ["map_c3"]
    assert MAP.violated(map_inst((), dimensions=())) == []
    # C4: an argument of another type; a result type the computation does not return
    assert MAP.violated(map_inst((2, 3), fn=map_fn((SI32, E_F32), SI32))) == ["map_c4"]
    assert MAP.violated(map_inst((2, 3), result=TensorType((2, 3), E_F32))) == ["map_c4"]
    assert MAP.violated(map_inst((2, 3), fn=map_fn((SI32,), SI32))) == ["map_c4"]   # one argument for two inputs
    # no inputs: C3 has no R (so check-spec calls C2 implied by C3)
    none = MAP.instance({"inputs": []}, {"dimensions": ()}, {"result": TensorType((), SI32)},
                        {"computation": map_fn((), SI32)})
    assert MAP.violated(none) == ["map_c2", "map_c3"]


def test_map_element_types_may_differ():
    """C4 ties each argument to its own input and E' to the result only."""
    fn = map_fn((E_F32, SI32), E_BF16, lambda a, b: a)
    inst = map_inst((3,), (E_F32, SI32), fn=fn)
    assert MAP.violated(inst) == []
    assert MAP.infer(inst)["result"] == TensorType((3,), E_BF16)


def run_program(text, *arrays):
    oracle = load_backend("oracle")
    return oracle.run(oracle.compile(text), [np.asarray(a) for a in arrays])


def map_program(shape, et, n, body_op, dims=None):
    """A map whose body folds `body_op` over its n arguments (the generators' map templates)."""
    t = TensorType(tuple(shape), et).mlir
    s = scalar(et).mlir
    args = ", ".join(f"%a{i}: {s}" for i in range(n))
    lines, acc = [], "%a0"
    for i in range(1, n):
        lines.append(f'      %v{i} = "stablehlo.{body_op}"({acc}, %a{i}) : ({s}, {s}) -> {s}')
        acc = f"%v{i}"
    dims = list(range(len(shape))) if dims is None else dims
    return (f"func.func @main({', '.join(f'%x{i}: {t}' for i in range(n))}) -> {t} {{\n"
            f'  %r = "stablehlo.map"({", ".join(f"%x{i}" for i in range(n))}) ({{\n'
            f"    ^bb0({args}):\n" + "\n".join(lines) + "\n"
            f'      "stablehlo.return"({acc}) : ({s}) -> ()\n'
            f"  }}) {{dimensions = array<i64{': ' + ', '.join(map(str, dims)) if dims else ''}>}} : "
            f"({', '.join([t] * n)}) -> {t}\n  func.return %r : {t}\n}}\n")


def test_map_add_of_three_si8_wraps_as_numpy_does():
    rng = np.random.default_rng(2)
    xs = [rng.integers(-128, 128, size=(2, 3)).astype(np.int8) for _ in range(3)]
    [got] = run_program(map_program((2, 3), SI8, 3, "add"), *xs)
    assert got.tolist() == (xs[0] + xs[1] + xs[2]).tolist()      # numpy int8: two's complement wrap


def test_map_maximum_f32_propagates_nan_as_numpy_does():
    a = np.array([1.0, np.nan, -0.0, 3.0], np.float32)
    b = np.array([2.0, 1.0, 0.0, np.nan], np.float32)
    [got] = run_program(map_program((4,), E_F32, 2, "maximum"), a, b)
    want = np.maximum(a, b)                                         # NaN propagates
    assert np.array_equal(np.isnan(got), np.isnan(want)) and got[0] == want[0] == 2.0
    assert got[2] == 0.0 and not np.signbit(got[2])                 # IEEE maximum: +0 > -0 (numpy leaves it open)


def test_map_multiply_bf16_rounds_each_step_as_ml_dtypes_does():
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal(6).astype(E_BF16.numpy) for _ in range(3)]
    [got] = run_program(map_program((6,), E_BF16, 3, "multiply"), *xs)
    want = (xs[0] * xs[1]) * xs[2]                                   # bf16 products, each rounded
    assert got.view(np.uint16).tolist() == want.view(np.uint16).tolist()


def test_map_rank0_and_zero_sized():
    [got] = run_program(map_program((), SI32, 2, "add", dims=[]), np.int32(2), np.int32(40))
    assert got.tolist() == 42
    [got] = run_program(map_program((0, 3), SI32, 2, "add"), np.zeros((0, 3), np.int32), np.zeros((0, 3), np.int32))
    assert got.shape == (0, 3)


def test_map_built_corner_mixes_element_types():
    [(note, skel, inst)] = MAP.exercise.built_corners(MAP, [], np.random.default_rng(0))
    assert MAP.violated(inst) == [] and "different element types" in note
    a = np.array([[1.5, -0.0, np.inf], [2.0, 3.0, -1.0]], np.float32)
    b = np.arange(6, dtype=np.int32).reshape(2, 3)
    [got] = run_program(emit.program(MAP, inst, {"dimensions"}), a, b)
    assert got.tobytes() == a.tobytes()


def test_map_surveys_inexact_complex_bodies_only():
    from shlo_conform.spec.types import C64
    for body in ("map_add", "map_multiply", "map_maximum", "map_minimum", "map_first"):
        for et in (E_F32, C64):
            inst = map_inst((2,), (et, et), fn=map_fn((et, et), et, body=body))
            reason = MAP.exercise.survey_when(inst)
            assert (reason is not None) == (et is C64 and body in ("map_multiply", "map_maximum", "map_minimum"))


def zeros_expected(spec, inst, mlir, arrays):
    return [Expectation.of(np.zeros(t.shape, t.element_type.numpy), t)
            for r in emit.result_types(spec, inst) for t in emit.leaves(r)]


@pytest.mark.long   # stop 62's trim of make test (8:05 on a clean run): map's constraints and cases stay in make test
def test_map_generation_reaches_its_structures():
    cases, missing = suite.op_cases(MAP, 0, expect_fn=zeros_expected)
    notes = " | ".join(c.note for c in cases)
    assert "three inputs" in notes and "different element types" in notes and "rank 0" in notes
    assert missing == ["map_c2"]          # implied by C3 (no inputs, no R)
    assert {c.violates for c in cases if c.kind == "invalid"} == {"map_c1", "map_c3", "map_c4"}
    for c in cases:
        if c.kind == "invalid":
            assert expect.rejects_for(c.mlir, c.violates)


