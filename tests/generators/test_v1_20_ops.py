"""The stream of v1.20's added ops with structure (generators/v1_20_ops.py, issue 35).

The stream is seeded (same seed, same cases, byte for byte), covers every
element type each op's table takes, and its invalid cases are each
rejected by the oracle's reader naming the one constraint they break.
Each data-movement value case's expectation is checked against NumPy
computing the op from the case's own inputs and shape operands (a second
implementation: np.reshape, np.broadcast_to, slicing, np.indices).
"""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from shlo_conform.generators import expect, v1_20_ops
from shlo_conform.spec.added import ADDED
from shlo_conform.spec.dsl import unnumbered
from shlo_conform.spec.types import ALL_TYPES, COMPLEX_TYPES, FLOAT_TYPES, INTEGER_TYPES, to_bits

OPS = ("composite", "dynamic_broadcast_in_dim", "dynamic_conv", "dynamic_gather", "dynamic_iota", "dynamic_pad",
       "dynamic_reshape")
# Constraints this stream breaks alone nowhere: the quantized clauses (generators/quantized.py's), and those
# another constraint always breaks with them (gather's C5 by C13, as the seed's gather; C2 by C3 or C13;
# conv's size rules by its uniqueness rules).  gather's C1, C7, C11 are broken alone with `slice_sizes` an
# @main argument, conv's group rules on shapes chosen for them (`late_cases`).
UNBROKEN = {
    "dynamic_reshape": {"dynamic_reshape_c3"},
    "dynamic_broadcast_in_dim": {"dynamic_broadcast_in_dim_c6"},
    "dynamic_gather": {f"dynamic_gather_c{k}" for k in (2, 5)},
    "dynamic_conv": {f"dynamic_conv_c{k}" for k in (12, 17, 19, *range(28, 35))},
}


def _numpy_truth(name: str, inst, arrays: list) -> np.ndarray | None:
    """The op computed by NumPy from the instance's operands and its known
    shape-operand values (None where this test leaves it to other tests)."""
    if v1_20_ops.RUN_TIME_OPERAND.get(name, "") not in inst.known_values and name != "composite":
        return None   # a shape operand given at run time: test_shape_operands_at_run_time
    known = {k: [int(x) for x in np.asarray(v).reshape(-1)] for k, v in inst.known_values.items()}
    out = tuple(int(d) for d in inst.result.shape) if name != "composite" else None
    if name == "dynamic_reshape":
        return arrays[0].reshape(known["output_shape"])
    if name == "dynamic_broadcast_in_dim":
        x, bd = arrays[0], list(inst.broadcast_dimensions)
        order = np.argsort(bd)
        shape = [1] * len(out)
        for j in order:
            shape[bd[j]] = x.shape[j]
        return np.broadcast_to(x.transpose(order).reshape(shape), out)
    if name == "dynamic_iota":
        et = inst.result.element_type
        ids = np.indices(out)[inst.iota_dimension] if out else np.zeros(())
        if et.is_integer and ids.size and ids.max() > et.max_value:
            return None   # an overflow: implementation-defined (iota's own tests)
        if et.is_float and et.format.precision < 6:
            return None   # ids that round: iota's own tests check them by hand
        return ids.astype(et.numpy)
    if name == "dynamic_pad":
        x, v = arrays
        for axis, (lo, hi, i) in enumerate(zip(known["edge_padding_low"], known["edge_padding_high"],
                                               known["interior_padding"])):
            d = x.shape[axis]
            shape = list(x.shape)
            shape[axis] = max(d + (d - 1) * i, 0)
            dilated = np.full(shape, v, x.dtype)
            index = [slice(None)] * x.ndim
            index[axis] = slice(0, None, i + 1)
            dilated[tuple(index)] = x
            widths = [(0, 0)] * x.ndim
            widths[axis] = (max(lo, 0), max(hi, 0))
            x = np.pad(dilated, widths, constant_values=v)
            index[axis] = slice(max(-lo, 0), x.shape[axis] - max(-hi, 0))
            x = x[tuple(index)]
        return x
    if name == "dynamic_gather":   # the stream's structures: index vectors last, offset dims trailing
        operand, starts = arrays
        sizes, m = known["slice_sizes"], list(inst.start_index_map)
        collapsed = set(inst.collapsed_slice_dims)
        batch = starts.shape[:-1]
        result = np.empty(out, operand.dtype)
        for b in np.ndindex(*batch):
            full = [0] * operand.ndim
            for c, a in enumerate(m):
                full[a] = int(starts[b + (c,)])
            piece = operand[tuple(slice(s, s + n) for s, n in zip(full, sizes))]
            result[b] = piece.reshape([n for a, n in enumerate(sizes) if a not in collapsed])
        return result
    return None


@pytest.fixture(scope="module")
def made():
    """Every op's stream, with NumPy's truth recorded beside the oracle's."""
    truths: list = []

    def expect_fn(spec, inst, mlir, arrays):
        got = v1_20_ops.oracle_expectations(spec, inst, mlir, arrays)
        truths.append((spec.mnemonic, inst.result.element_type if spec.mnemonic != "composite" else None,
                       got, _numpy_truth(spec.mnemonic, inst, arrays)))
        return got
    return {op: v1_20_ops.cases(ADDED[op], 0, expect_fn) + v1_20_ops.late_cases(ADDED[op], 0, expect_fn)
            for op in OPS}, truths


def test_the_stream_is_seeded():
    spec = ADDED["dynamic_pad"]
    again = [c.id for c in v1_20_ops.cases(spec, 0)]
    assert again == [c.id for c in v1_20_ops.cases(spec, 0)]
    assert again != [c.id for c in v1_20_ops.cases(spec, 1)]
    assert v1_20_ops.cases(ADDED["uniform_quantize"], 0) == []   # not this stream's


def test_every_type_of_each_table_has_value_cases(made):
    cases, _ = made
    tables = {"dynamic_iota": INTEGER_TYPES + FLOAT_TYPES + COMPLEX_TYPES, "dynamic_reshape": ALL_TYPES,
              "dynamic_broadcast_in_dim": ALL_TYPES, "dynamic_pad": ALL_TYPES, "dynamic_gather": ALL_TYPES}
    for op, types in tables.items():
        per = Counter(c.dtype for c in cases[op] if c.kind == "value" and "@main argument" not in c.note)
        assert per == {t.name: v1_20_ops.CASES_PER_TYPE for t in types}, op
    conv = Counter(c.dtype for c in cases["dynamic_conv"] if c.kind == "value" and "@main argument" not in c.note)
    per_type = {n: v1_20_ops.CASES_PER_TYPE for n in v1_20_ops.CONV_TYPES}
    per_type["f32"] += 1   # late_cases' lhs from a sine (`_ranged_lhs`)
    assert conv == per_type
    assert sum(c.kind == "value" for c in cases["composite"]) == 5   # _composites' four and `_quoted_composite`


def test_each_breakable_constraint_has_an_invalid_case_the_oracle_names(made):
    cases, _ = made
    for op in OPS:
        invalid = [c for c in cases[op] if c.kind == "invalid"]
        assert all(expect.rejects_for(c.mlir, c.violates) for c in invalid), op
        named = {c.violates for c in invalid if not unnumbered(c.violates)}   # composite_inputs: a table's rule
        assert named == set(ADDED[op].labels) - UNBROKEN.get(op, set()), op
        assert all(expect.rejection(c.mlir) is None for c in cases[op] if c.kind == "value"), op


def test_value_expectations_are_what_numpy_computes(made):
    _, truths = made
    checked = Counter()
    for op, et, got, truth in truths:
        if truth is None:
            continue
        [e] = got
        assert e.type.shape == tuple(truth.shape), op
        if e.impl_defined:   # gather out of bounds, or a broken promise: the primary is what NumPy reads here
            continue
        assert np.array_equal(e.bits, to_bits(np.asarray(truth).astype(et.numpy), et)), (op, et.name)
        checked[op] += 1
    # every case of the four data-movement ops, and the iotas whose ids every type holds
    assert checked["dynamic_reshape"] == checked["dynamic_broadcast_in_dim"] == 38
    assert checked["dynamic_pad"] == checked["dynamic_gather"] == 38
    assert checked["dynamic_iota"] >= 20


def test_shape_operands_at_run_time(made):
    """Each dynamic op's shape operand as an @main argument: where its values
    fit, the expectation is the constant program's (the same instance, the
    operand a stablehlo.constant there); where they break what v1.20 defers
    to run time, a survey whose every element is "any value"."""
    cases, _ = made
    for op in OPS:
        if op == "composite":
            continue
        # `_at_run_time`'s pair (dynamic_gather's late implicit-index-vector case also takes slice_sizes as an argument)
        runtime = [c for c in cases[op] if "an @main argument, its values the result's" in c.note
                   or "undefined (spec.md Dynamism)" in c.note]
        fits = [c for c in runtime if c.kind == "value"]
        broken = [c for c in runtime if c.kind == "survey"]
        assert len(fits) == 1 and len(broken) == 1, op
        name = v1_20_ops.RUN_TIME_OPERAND[op]
        assert f"%arg{len(fits[0].inputs) - 1}: " in fits[0].mlir and f"%{name} = " not in fits[0].mlir, op
        twin = next(c for c in cases[op] if c.kind == "value" and c.note and fits[0].note.endswith(f"({c.note})"))
        assert [e.to_json() for e in fits[0].expected] == [e.to_json() for e in twin.expected], op
        [e] = broken[0].expected
        n = int(np.prod(e.type.shape))
        assert any(a.bits is None and sorted(a.elements if a.elements is not None else range(n)) == list(range(n))
                   for a in e.alternatives), op   # any value, at every element
        assert np.array_equal(broken[0].inputs[-1].array().reshape(-1)[1:],
                              fits[0].inputs[-1].array().reshape(-1)[1:]), op   # only the first entry differs
