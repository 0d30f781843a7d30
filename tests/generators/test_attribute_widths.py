"""The Inputs table's integer types (generators/attribute_widths.py,
spec.dsl IntAttr.from_mlir).

Truth is the spec text read by hand (../shared/upstream-1.20/spec.md's
Inputs tables): `iota_dimension` is `si64` (I2 of dynamic_iota, I1 of
iota), get_tuple_element's `index` a "constant of type `si32`",
reduce_precision's `exponent_bits` and `mantissa_bits` `si32`,
composite's `version` `si32`, every other integer attribute below `si64`.
StableHLO's verifier reads those as i64 and i32 attributes and refuses
the other width ("64-bit signless integer attribute"); so does the
oracle's reader, naming no numbered constraint, and each suite case that
writes one is a kept value case with that one type changed.
"""
from __future__ import annotations

import re

import pytest

from shlo_conform.generators import attribute_widths, expect
from shlo_conform.oracle.program import ProgramRejected, parse_program
from shlo_conform.spec.dsl.attributes import IntAttr
from shlo_conform.spec.ops import lookup
from shlo_conform.suites.io import load_cases, suite_path

# (op, attribute) -> the width the spec's Inputs table gives it (spec.md, read by hand)
SPEC_WIDTHS = {
    ("iota", "iota_dimension"): 64, ("dynamic_iota", "iota_dimension"): 64,
    ("concatenate", "dimension"): 64, ("get_dimension_size", "dimension"): 64, ("sort", "dimension"): 64,
    ("get_tuple_element", "index"): 32, ("composite", "version"): 32,
    ("reduce_precision", "exponent_bits"): 32, ("reduce_precision", "mantissa_bits"): 32,
    ("batch_norm_inference", "feature_index"): 64, ("batch_norm_training", "feature_index"): 64,
    ("batch_norm_grad", "feature_index"): 64,
    ("convolution", "feature_group_count"): 64, ("convolution", "batch_group_count"): 64,
    ("dynamic_conv", "feature_group_count"): 64, ("dynamic_conv", "batch_group_count"): 64,   # v1.20's (I17), (I18)
    ("all_gather", "all_gather_dim"): 64, ("reduce_scatter", "scatter_dimension"): 64,
    ("all_to_all", "split_dimension"): 64, ("all_to_all", "concat_dimension"): 64,
    ("all_to_all", "split_count"): 64,
}


def _width_cases():
    return [c for c in load_cases(suite_path("core")) if c.provenance.get("stream") == attribute_widths.STREAM]


def test_an_integer_attribute_reads_only_at_its_own_width():
    a = IntAttr(64)
    assert a.from_mlir("3 : i64") == 3 and a.from_mlir(" -1 : i64 ") == -1
    assert a.from_mlir("3") == 3   # inside a grouped attribute: no type written
    for wrong in ("3 : i32", "3 : i1", "3 : ui64", "3 : si64", "3 : index"):
        with pytest.raises(ValueError, match="not i64"):
            a.from_mlir(wrong)
    assert IntAttr(32).from_mlir("0 : i32") == 0
    with pytest.raises(ValueError, match="not i32"):
        IntAttr(32).from_mlir("0 : i64")


def test_the_declarations_widths_are_the_spec_tables():
    for (op, name), width in SPEC_WIDTHS.items():
        attr = next(a for a in lookup(op).attributes if a.name == name)
        assert type(attr.kind) is IntAttr and attr.kind.width == width, (op, name)


def test_the_oracle_refuses_the_other_width_naming_no_constraint():
    ok = ('func.func @main() -> (tensor<6x1x2xi4>) {\n'
          '  %0 = "stablehlo.iota"() {iota_dimension = 2 : i64} : () -> tensor<6x1x2xi4>\n'
          '  "func.return"(%0) : (tensor<6x1x2xi4>) -> ()\n}\n')
    parse_program(ok)
    with pytest.raises(ProgramRejected, match=r"iota_dimension: '2 : i32' is of type i32, not i64") as e:
        parse_program(ok.replace(": i64}", ": i32}"))
    assert e.value.constraint is None


def test_each_width_case_is_its_value_case_with_one_type_changed():
    """Every integer attribute a value case writes on its own has its case;
    each is refused for `<op>_inputs` alone, and its program with the width
    written back is, byte for byte, the kept value case it names."""
    cases = _width_cases()
    by_id = {c.id: c for c in load_cases(suite_path("core"), {c.op for c in cases})}
    got = set()
    for c in cases:
        op_name = re.search(r"\((\w+) written as i(\d+), the table's si(\d+); from (\S+)\)", c.note)
        assert op_name, c.note
        name, wrong, width, source = op_name.groups()
        assert SPEC_WIDTHS[(c.op, name)] == int(width) != int(wrong)
        got.add((c.op, name))
        assert c.kind == "invalid" and c.violates == f"{c.op}_inputs" and not c.expected
        with pytest.raises(ProgramRejected) as e:
            parse_program(c.mlir)
        assert e.value.constraint is None and f"attribute {name}" in str(e.value)
        assert expect.rejects_for(c.mlir, c.violates)
        value = by_id[source]
        assert value.kind == "value"
        if value.grid is None:
            assert value.inputs == c.inputs and c.grid is None
        else:   # an invalid case on a grid: its sizes, process 0's inputs
            assert c.inputs == value.grid.inputs[0] and not c.grid.inputs
            assert (c.grid.num_replicas, c.grid.num_partitions) == (value.grid.num_replicas, value.grid.num_partitions)
        assert c.mlir.replace(f"{name} = ", "\0").count("\0") == 1
        mended = re.sub(rf"\b{name} = (-?\d+) : i{wrong}\b", rf"{name} = \1 : i{width}", c.mlir)
        assert mended == value.mlir
    # every attribute of the table but those no value case writes alone (sort's `dimension` is written)
    assert got == set(SPEC_WIDTHS), set(SPEC_WIDTHS) - got


def test_every_op_file_holds_the_width_cases_its_value_cases_make():
    """For every op of suites/core, the attribute-width cases the generator
    makes from the committed file's other cases (its last stream) are the
    ones committed, in order — what a full regeneration found missing for
    dynamic_conv at stop 55 (its two were never written), without
    regenerating: no oracle runs, one parse per attribute."""
    import json
    from shlo_conform.suites.io import CORE
    seed = json.loads((CORE / "manifest.json").read_text())["seed"]
    by_op: dict = {}
    for c in load_cases(suite_path("core")):
        by_op.setdefault(c.op, []).append(c)
    assert len(by_op) > 100
    for op, cs in by_op.items():
        kept = [c for c in cs if c.provenance.get("stream") != attribute_widths.STREAM]
        want = [c.id for c in attribute_widths.cases(lookup(op), kept, seed)]
        got = [c.id for c in cs if c.provenance.get("stream") == attribute_widths.STREAM]
        assert got == want, (op, got, want)
