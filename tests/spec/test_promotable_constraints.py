"""v1.20's promotable reduction bodies in the constraints and type inference.

StableHLO v1.20 states the body clauses of reduce (C6), reduce_window
(C13), scatter (C23), select_and_scatter (C10), all_reduce (C5),
reduce_scatter (C7) and collective_reduce (C4) with
`is_promotable(element_type(input), E)`, and gives the results the body's
E (reduce C8, reduce_window C16, scatter C25, select_and_scatter C12,
all_reduce C7, reduce_scatter C9).  The project keeps the seed's labels
(`reduce_c6`, `reduce_c2`, …; spec/v1_20_map.py says which v1.20 clause
each became) and now reads them as v1.20 does.

Truth is by hand, from v1.20's pseudo-code (spec.md, "is_promotable"):
same kind — both integer (signed or unsigned), both float, both complex —
and bitwidth(x) <= bitwidth(y) (complex: the components'); so bf16 → f32,
f16 → f32, f32 → f64, si8 → si32, complex<f32> → complex<f64> are valid
bodies, f32 → f16 (narrower) and si32 → f32 (another kind) are not.
"""
from __future__ import annotations

import pytest

from shlo_conform.spec.added import ADDED
from shlo_conform.spec.dsl import Function
from shlo_conform.spec.grid import Grid
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.ops import all_reduce, reduce, reduce_scatter, reduce_window, scatter, select_and_scatter
from shlo_conform.spec.types import TensorType, element_type

E = element_type

# (x, y): is_promotable(x, y), by hand from v1.20's pseudo-code
PROMOTABLE = [
    ("bf16", "f32", True), ("f16", "f32", True), ("f32", "f64", True), ("f16", "bf16", True),   # 16 <= 16
    ("si8", "si32", True), ("ui8", "ui32", True), ("si8", "ui32", True),                          # "is_integer"
    ("complex<f32>", "complex<f64>", True), ("f32", "f32", True), ("i1", "i1", True),
    ("f32", "f16", False), ("f64", "f32", False), ("si32", "si8", False), ("complex<f64>", "complex<f32>", False),
    ("si32", "f32", False), ("f32", "si32", False), ("f32", "complex<f64>", False), ("i1", "si8", False),
]


@pytest.mark.parametrize("x, y, want", PROMOTABLE, ids=[f"{x}-{y}" for x, y, _ in PROMOTABLE])
def test_promotable_is_v1_20s_rule(x, y, want):
    """One rule (dot_general's, reached through reduce.promotable) for every
    reduction; i1 → i1 is read as promotable (dot_general's finding: the
    pseudo-code's fall-through would refuse the seed's own boolean bodies)."""
    assert reduce.promotable(E(x), E(y)) is want


# Per op: the instance of (inputs' type, body's type, results' type), and the labels of the body clause and of
# the result clause.
BUILDERS = {
    "reduce": (lambda s, e, r: reduce.quantized_example({"inputs": E(s), "body": E(e), "results": E(r)}),
               "reduce_c6", "reduce_c2"),
    "reduce_window": (lambda s, e, r: reduce_window.quantized_example({"inputs": E(s), "body": E(e),
                                                                       "results": E(r)}),
                      "reduce_window_c13", "reduce_window_c16"),
    "scatter": (lambda s, e, r: scatter.quantized_example({"inputs": E(s), "body": E(e), "results": E(r)}),
                "scatter_c15", "scatter_c16"),
    "select_and_scatter": (lambda s, e, r: select_and_scatter.promoted_example(E(s), E(e), E(r)),
                           "select_and_scatter_c11", "select_and_scatter_c12"),
    "all_reduce": (lambda s, e, r: all_reduce.promoted_example(E(s), E(e), E(r)), "all_reduce_c5", "all_reduce_c7"),
    "reduce_scatter": (lambda s, e, r: reduce_scatter.promoted_example(E(s), E(e), E(r)),
                       "reduce_scatter_c7", "reduce_scatter_c8"),
}

WIDER = [("bf16", "f32"), ("f16", "f32"), ("f32", "f64"), ("si8", "si32"), ("complex<f32>", "complex<f64>")]


def _result_types(op, inst) -> list[str]:
    got = OPS[op].infer(inst)
    return [t.element_type.name for v in got.values() for t in (v if isinstance(v, list) else [v])]


# select_and_scatter's select compares no complex values: no valid complex program to build
WIDENED = [(op, s, d) for op in sorted(BUILDERS) for s, d in WIDER
           if not (op == "select_and_scatter" and s.startswith("complex"))]


@pytest.mark.parametrize("op, src, dst", WIDENED, ids=[f"{o}-{s}-{d}" for o, s, d in WIDENED])
def test_a_wider_body_of_the_same_kind_is_valid_and_gives_the_results_its_type(op, src, dst):
    make, _, _ = BUILDERS[op]
    inst = make(src, dst, dst)
    assert OPS[op].violated(inst) == []
    assert set(_result_types(op, inst)) == {E(dst).name}


@pytest.mark.parametrize("op", sorted(BUILDERS))
@pytest.mark.parametrize("src, dst", [("f32", "f16"), ("si32", "f32"), ("f32", "si32"), ("complex<f64>",
                                                                                          "complex<f32>")],
                         ids=["narrower", "float-on-int", "int-on-float", "narrower-complex"])
def test_a_narrower_or_other_kind_body_breaks_the_body_clause_alone(op, src, dst):
    """Results of the type inference gives for a body that is not
    promotable — the inputs' (all_reduce's C7 reads E from the computation
    whatever C5 says: the body's there) — so only the body clause breaks."""
    if op == "select_and_scatter" and src.startswith("complex"):
        src, dst = "f64", "f32"   # select compares no complex values: the narrowing float case instead
    make, body_clause, _ = BUILDERS[op]
    results = dst if op == "all_reduce" else src
    inst = make(src, dst, results)
    assert OPS[op].violated(inst) == [body_clause]
    assert set(_result_types(op, inst)) == {E(results).name}


@pytest.mark.parametrize("op", sorted(BUILDERS))
def test_a_promoted_body_with_results_of_the_inputs_type_breaks_the_result_clause(op):
    make, _, result_clause = BUILDERS[op]
    assert OPS[op].violated(make("bf16", "f32", "bf16")) == [result_clause]


def test_reduce_variadic_bodies_promote_each_input_on_its_own():
    """The arg-max pattern with a promoted value half: (bf16, si32) inputs,
    a (f32, si32, f32, si32) -> (f32, si32) body: valid, results (f32,
    si32); the index half narrowed to si8 breaks C6."""
    def inst(idx_body):
        ins = [TensorType((2, 6), E("bf16")), TensorType((2, 6), E("si32"))]
        inits = [TensorType((), E("bf16")), TensorType((), E("si32"))]
        sc = (TensorType((), E("f32")), TensorType((), E(idx_body)))
        fn = Function(sc + sc, sc, body="argmax")
        res = [TensorType((2,), E("f32")), TensorType((2,), E("si32"))]
        return OPS["reduce"].instance({"inputs": ins, "init_values": inits}, {"dimensions": (1,)},
                                      {"results": res}, {"body": fn})
    assert OPS["reduce"].violated(inst("si32")) == []
    assert _result_types("reduce", inst("si32")) == ["f32", "si32"]
    assert "reduce_c6" in OPS["reduce"].violated(inst("si8"))


def _collective_reduce(src: str, body: str, results: str | None = None):
    t, b = TensorType((4,), E(src)), TensorType((), E(body))
    return ADDED["collective_reduce"].instance(
        {"operands": [t]}, {"replica_groups": ((0, 1),), "channel_id": 0, "has_dynamic_root": None},
        {"results": [TensorType((4,), E(results or body))]}, {"computation": Function((b, b), (b,), "add")},
        grid=Grid(2, 1))


@pytest.mark.parametrize("src, body, broken", [("bf16", "f32", []), ("si8", "si32", []), ("f32", "f16",
                                                                                            ["collective_reduce_c4"]),
                                               ("si32", "f32", ["collective_reduce_c4"])])
def test_collective_reduce_c4_reads_is_promotable(src, body, broken):
    inst = _collective_reduce(src, body)
    assert ADDED["collective_reduce"].violated(inst) == broken
    assert ADDED["collective_reduce"].infer(inst)["results"][0].element_type == E(body)


def test_quantized_bodies_stay_equal_to_their_inputs_type():
    """A quantized type is promotable only to itself here (v1.20's storage
    promotion of quantized types is not encoded): a reduce whose quantized
    body differs from its inputs' is refused by C6."""
    from shlo_conform.spec.quantized import parse_quantized_type
    q8 = parse_quantized_type("!quant.uniform<i8:f32, 0.5:3>")
    q32 = parse_quantized_type("!quant.uniform<i32:f32, 0.5:3>")
    assert reduce.promotable(q8, q8) and not reduce.promotable(q8, q32)
    inst = reduce.quantized_example({"inputs": q8, "body": q32, "results": q8})
    assert "reduce_c6" in OPS["reduce"].violated(inst)


def test_collective_reduce_declares_its_promotion_cases():
    """Its `appended_last` plan (not yet read for the ops v1.20 added): the
    widenings valid, the narrowing and other-kind computations breaking C4
    alone; then (a builder of its own, after them) C3's result one rank above
    its operand."""
    spec = ADDED["collective_reduce"]
    promoted, rank_above = spec.exercise.builders("appended_last")
    plan = promoted(spec, [], None)
    assert [label for _, label, _, _ in plan] == [None] * 5 + ["collective_reduce_c4"] * 2
    for _, label, _, inst in plan:
        assert spec.violated(inst) == ([label] if label else [])
    ((_, label, _, inst),) = rank_above(spec, [], None)
    assert label == "collective_reduce_c3" and spec.violated(inst) == [label]
