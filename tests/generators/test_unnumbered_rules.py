"""Invalid cases that name an op's unnumbered rules (spec/dsl `unnumbered`).

The spec states some rules outside the numbered constraints: an op's
Inputs table (an operand's type, an attribute's kind), its Outputs table,
and its type inference.  A suite case may name one (`<op>_inputs`,
`<op>_outputs`, `<op>_infer`).  Truth here is the spec text read by hand:
after_all's (I1) is "variadic number of `token`", its output a `token`;
outfeed's (I2) a `token`, (I3) `outfeed_config` "constant of type
`string`"; infeed's `infeed_config` the same; composite's (I3) a
"dictionary"; Sharding's definition types its result as its operand.
Each case's program is refused by the oracle's reader for exactly that
part — no numbered constraint named — and the same program with the broken
part mended is accepted, so each case tests its rule and nothing else.
"""
from __future__ import annotations

import re

import pytest

from shlo_conform.generators import expect
from shlo_conform.oracle.program import ProgramRejected, parse_program
from shlo_conform.spec.dsl import unnumbered
from shlo_conform.spec.ops import lookup
from shlo_conform.suites.io import load_cases, suite_path

# The broken part of each case (what the reader's message names) and the text that mends it.
MENDS = {
    "after_all_inputs": ("element type of inputs", None),
    "after_all_outputs": ("element type of result", None),
    "outfeed_inputs": ("element type of token|attribute outfeed_config", None),
    "outfeed_outputs": ("element type of result", None),
    "infeed_inputs": ("attribute infeed_config", ('@"my-config"', '"my-config"')),
    "composite_inputs": ("attribute composite_attributes", ("composite_attributes = 5 : i64", "composite_attributes = {}")),
    "custom_call_infer": ("where the spec infers", ("tensor<3x2xf32>", "tensor<2x3xf32>")),
}


def _unnumbered_cases():
    """The hand-built ones; the attribute-width stream's have a test of their own (test_attribute_widths.py)."""
    return [c for c in load_cases(suite_path("core")) if c.kind == "invalid" and unnumbered(c.violates)
            and c.provenance.get("stream") != "attribute_widths"]


def test_the_labels_of_numbered_constraints_are_not_unnumbered_rules():
    """Every constraint label of every op reads as numbered; the three rule
    names read as unnumbered."""
    from shlo_conform.spec.added import ADDED
    from shlo_conform.spec.ops import OPS
    assert not [label for spec in [*OPS.values(), *ADDED.values()] for label in spec.labels if unnumbered(label)]
    assert all(unnumbered(f"after_all_{r}") for r in ("inputs", "outputs", "infer"))


def test_each_case_is_refused_for_its_rule_alone():
    cases = _unnumbered_cases()
    assert sorted(c.violates for c in cases) == sorted(
        ["after_all_inputs", "after_all_outputs", "outfeed_inputs", "outfeed_inputs", "outfeed_outputs",
         "infeed_inputs", "composite_inputs", "custom_call_infer"])
    for c in cases:
        names, mend = MENDS[c.violates]
        with pytest.raises(ProgramRejected) as e:
            parse_program(c.mlir)
        assert e.value.constraint is None, c.id
        assert re.search(names, str(e.value)), (c.id, str(e.value))
        assert expect.rejects_for(c.mlir, c.violates) and not expect.rejects_for(c.mlir, f"{c.op}_c1")
        if mend is not None:   # the same program with the broken part mended reads
            assert c.mlir.count(mend[0]) >= 1
            parse_program(c.mlir.replace(mend[0], mend[1]))


def test_the_token_ops_tables_mended_read():
    """after_all's and outfeed's type breaks, mended by hand: a token for
    the tensor (the program written again), accepted."""
    ok = ('func.func @main() -> () {\n  %k1 = "stablehlo.after_all"() : () -> !stablehlo.token\n'
          '  %0 = "stablehlo.after_all"(%k1, %k1) : (!stablehlo.token, !stablehlo.token) -> !stablehlo.token\n'
          '  "func.return"() : () -> ()\n}\n')
    parse_program(ok)
    assert expect.rejection(ok) is None and not expect.rejects_for(ok, "after_all_inputs")


def test_breaks_only_reads_a_numbered_label_as_before():
    """A numbered label: the instance breaks it and nothing else numbered;
    an unnumbered one: nothing numbered at all."""
    spec = lookup("add")
    from shlo_conform.spec.types import E_F32, TensorType
    a, b = TensorType((2,), E_F32), TensorType((3,), E_F32)
    broken = spec.instance({"lhs": a, "rhs": b}, {}, {"result": a})
    valid = spec.instance({"lhs": a, "rhs": a}, {}, {"result": a})
    assert spec.violated(broken) and spec.breaks_only(broken, spec.violated(broken)[0]) == (len(spec.violated(broken)) == 1)
    assert not spec.breaks_only(broken, "add_inputs") and spec.breaks_only(valid, "add_inputs")
    assert spec.breaks_only(valid, None) and not spec.breaks_only(broken, None)
