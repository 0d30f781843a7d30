"""dot_general's `algorithm` (v1.20 I8–I14, C21–C24): spelling, reading, constraints, cases, the map.

The presets' spelling is jaxlib's own: each preset jax lowers on CPU is
lowered here and read back through the oracle's program reader (the
pretty form jax prints, `algorithm = <…>`), and must equal `PRESETS`.
"""
from __future__ import annotations

import jax
import numpy as np
import pytest
import z3

from shlo_conform.generators import emit
from shlo_conform.oracle.program import ProgramRejected, parse_program
from shlo_conform.spec import v1_20_map
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.ops import dot_algorithm as da
from shlo_conform.spec.ops.dot_general import ALGORITHM_INVALID, algorithm_cases
from shlo_conform.generators.skeleton import enumerate_skeletons
from shlo_conform.spec.types import E_F32, TensorType

SPEC = OPS["dot_general"]
DIMS = {"lhs_batching_dimensions": (), "rhs_batching_dimensions": (), "lhs_contracting_dimensions": (1,),
        "rhs_contracting_dimensions": (0,)}


def _inst(config=("DEFAULT", "DEFAULT"), alg: da.Algorithm | None = da.PRESETS["BF16_BF16_F32_X3"], **fields):
    attrs = dict(DIMS, precision_config=config, **(alg.attrs() if alg else {}))
    attrs.update(fields)
    return SPEC.instance({"lhs": TensorType((2, 3), E_F32), "rhs": TensorType((3, 2), E_F32)}, attrs,
                         {"result": TensorType((2, 2), E_F32)})


def _lowered_algorithm(preset: str) -> da.Algorithm:
    a = np.ones((2, 3), np.float32)
    b = np.ones((3, 2), np.float32)
    text = jax.jit(lambda x, y: jax.lax.dot(x, y, precision=getattr(jax.lax.DotAlgorithmPreset, preset))) \
        .lower(a, b).as_text()
    inst = next(s.inst for s in parse_program(text).steps if s.inst.spec.mnemonic == "dot_general")
    return da.of(inst)


@pytest.mark.parametrize("preset", da.CPU_PRESETS)
def test_jax_spells_each_cpu_preset_as_declared(preset):
    assert _lowered_algorithm(preset) == da.PRESETS[preset]


def test_the_generic_form_round_trips():
    """What emit writes (`#stablehlo.dot_algorithm<…>`, tf32 included) the reader reads back."""
    inst = _inst(alg=da.PRESETS["TF32_TF32_F32_X3"])
    text = emit.program(SPEC, inst)
    assert ("algorithm = #stablehlo.dot_algorithm<lhs_precision_type = tf32, rhs_precision_type = tf32, "
            "accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, "
            "num_primitive_operations = 3, allow_imprecise_accumulation = false>") in text
    back = parse_program(text).steps[0].inst
    assert da.of(back) == da.PRESETS["TF32_TF32_F32_X3"]


def test_no_algorithm_is_the_empty_one():
    inst = _inst(alg=None)
    assert da.is_empty(inst) and da.of(inst) is None
    assert "algorithm" not in emit.program(SPEC, inst)


def test_tf32_is_a_precision_type_not_an_element_type():
    from shlo_conform.spec.types import ELEMENT_TYPES
    assert "tf32" in da.PRECISION_FORMATS and da.TF32.precision == 11
    assert "tf32" not in ELEMENT_TYPES and all(t.mlir != "tf32" for t in ELEMENT_TYPES.values())
    with pytest.raises(ValueError):
        da.PrecisionTypeAttr().from_mlir("si32")


@pytest.mark.parametrize("label, what, config, fields", ALGORITHM_INVALID)
def test_each_invalid_program_breaks_its_one_clause(label, what, config, fields):
    inst = _inst(config, alg=da.PRESETS["BF16_BF16_F32"], **fields)
    assert SPEC.violated(inst) == [label], what
    with pytest.raises(ProgramRejected) as e:
        parse_program(emit.program(SPEC, inst))
    assert e.value.constraint == label


def test_the_clauses_hold_on_an_empty_algorithm_and_on_every_preset():
    assert SPEC.violated(_inst(("HIGHEST", "HIGH"), alg=None)) == []
    for alg in da.PRESETS.values():
        assert SPEC.violated(_inst(alg=alg)) == []


@pytest.mark.parametrize("fn, field", [("dot_general_c22", "lhs_component_count"),
                                       ("dot_general_c23", "rhs_component_count"),
                                       ("dot_general_c24", "num_primitive_operations")])
def test_the_count_clauses_read_z3_integers(fn, field):
    """With a symbolic count the clause is a z3 formula equivalent to 0 < count."""
    n = z3.Int("n")
    got = SPEC.constraint(fn)(_inst(**{field: n}))
    s = z3.Solver()
    s.add(z3.Not(got == (n > 0)))
    assert s.check() == z3.unsat


@pytest.mark.parametrize("counts, want", [((1, 1, 1), (1, 1, 1)), ((1, 1, 3), (2, 2, 3)), ((1, 1, 6), (3, 3, 6)),
                                          ((3, 3, 6), (3, 3, 6)), ((3, 3, 9), (3, 3, 9)), ((2, 1, 2), (2, 1, 2)),
                                          ((1, 1, 2), None), ((2, 2, 3), (2, 2, 3)), ((2, 3, 3), None)])
def test_how_the_counts_read(counts, want):
    """(k_lhs, k_rhs, number of kept products) per the module docstring's reading."""
    got = da.Algorithm("bf16", "bf16", "f32", *counts).scheme()
    assert (None if got is None else (got[0], got[1], len(got[2]))) == want


def test_the_cases_cover_each_preset_and_clause():
    skels = enumerate_skeletons(SPEC)
    cases = algorithm_cases(SPEC, skels, np.random.default_rng(0))
    values = [n for n, label, _, inst in cases if label is None]
    assert {n.split(":")[0].split()[1] for n in values} == set(da.PRESETS)
    labels = [label for _, label, _, _ in cases if label]
    assert sorted(set(labels)) == ["dot_general_c21", "dot_general_c22", "dot_general_c23", "dot_general_c24"]
    for note, label, _, inst in cases:
        assert SPEC.violated(inst) == ([label] if label else []), note


def test_the_map_counts_the_four_clauses_encoded():
    enc = v1_20_map.encoded_v1_20()
    assert {n: enc[("dot_general", n)] for n in (21, 22, 23, 24)} == {
        21: "dot_general_c21", 22: "dot_general_c22", 23: "dot_general_c23", 24: "dot_general_c24"}
    assert "dot_general" not in v1_20_map.not_encoded()


def test_the_spec_example_with_integers_is_exact():
    """v1.20's own example: si64 operands, a tf32 algorithm, the identity as rhs —
    the algorithm is about floats; the integer dot stays exact (a reading)."""
    from shlo_conform.generators.expect import expected_outputs
    from shlo_conform.spec.types import SI64
    inst = SPEC.instance({"lhs": TensorType((2, 2, 2), SI64), "rhs": TensorType((2, 2, 2), SI64)},
                         {"lhs_batching_dimensions": (0,), "rhs_batching_dimensions": (0,),
                          "lhs_contracting_dimensions": (2,), "rhs_contracting_dimensions": (1,),
                          "precision_config": ("DEFAULT", "DEFAULT"), **da.PRESETS["TF32_TF32_F32"].attrs()},
                         {"result": TensorType((2, 2, 2), SI64)})
    lhs = np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], np.int64)
    rhs = np.array([[[1, 0], [0, 1]], [[1, 0], [0, 1]]], np.int64)
    [exp] = expected_outputs(emit.program(SPEC, inst), [lhs, rhs])
    from shlo_conform.spec.types import from_bits
    assert exp.kind == "exact" and np.array_equal(from_bits(exp.bits, SI64).reshape(2, 2, 2), lhs)
