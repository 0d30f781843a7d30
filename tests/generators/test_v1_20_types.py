"""suites/core in StableHLO v1.20's element types (issue 34): the tables read
as v1.20 reads them, cases in every new type wherever a table takes it,
convert and bitcast_convert between every pair, and the expectations held
to a second implementation (ml_dtypes' casts, numpy's float64 arithmetic)."""
from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import numpy as np
import pytest

from shlo_conform.spec import types as T
from shlo_conform.spec.expectation import Expectation
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.types import parse_type, tensor_from_hex

CORE = Path(__file__).resolve().parents[2] / "suites" / "core"
NEW = [t for t in T.ELEMENT_TYPES.values() if t.since]
NEW_FLOATS = [t for t in NEW if t.is_float]


def _cases(op: str) -> list[dict]:
    return [json.loads(line) for line in (CORE / f"{op}.jsonl").read_text().splitlines()]


def _signature(mlir: str) -> tuple[list, list]:
    """(@main's argument element types, its result element types), read from the text."""
    m = re.search(r"func\.func @main\((.*?)\)\s*->\s*(.*?)\s*\{\s*\n", mlir, re.S)
    types = lambda s: re.findall(r"tensor<(?:[0-9?]+x)*([^<>]+(?:<[^<>]+>)?)>", s)  # noqa: E731
    return types(m.group(1)), types(m.group(2))


def test_v1_20_widens_the_seeds_words_not_hand_lists():
    assert set(T.widened_to_v1_20(T.FLOAT_TYPES)) == set(T.FLOAT_TYPES_V1_20)
    assert set(T.widened_to_v1_20(T.ALL_TYPES)) == set(T.ALL_TYPES_V1_20)
    assert T.widened_to_v1_20((T.E_F32, T.E_F64)) == (T.E_F32, T.E_F64)      # a few floats named by hand
    assert T.widened_to_v1_20((T.UI64,)) == (T.UI64,)                       # rng_bit_generator's state
    assert set(T.widened_to_v1_20(T.INTEGER_TYPES)) - set(T.INTEGER_TYPES) == {T.SI2, T.UI2}


def test_the_oracle_takes_a_new_type_only_where_the_table_takes_its_group():
    from shlo_conform.spec.dsl import Instance
    from shlo_conform.spec.types import TensorType
    spec = OPS["and"]   # boolean or integer: si2 yes, f8E4M3FNUZ no
    for et, outside in ((T.SI2, []), (T.E_F8E4M3FNUZ, ["lhs", "rhs", "result"])):
        t = TensorType((3,), et)
        inst = Instance(spec, {"lhs": t, "rhs": t}, {}, {"result": t})
        assert spec.types_outside_tables(inst) == outside


def _tables_take(op: str) -> set:
    spec = OPS[op]
    return {t for o in list(spec.operands) + [r for r in spec.results if r.name in spec.result_from_program]
            for t in o.types_v1_20 if t.since}


# Where a table takes a v1.20 type but no program of the op can hold it:
# the op's other constraints tie the type to something the type cannot be.
NO_PROGRAM = {
    ("bitcast_convert", "si2"), ("bitcast_convert", "ui2"),   # read through `_pairs` below instead
}


@pytest.mark.parametrize("op", sorted(o for o in OPS if getattr(OPS[o].semantics, "cases", None) is None
                                      and _tables_take(o)))
def test_every_type_a_v1_20_table_takes_has_value_cases(op):
    seen = set()
    for c in _cases(op):
        if c["kind"] in ("value", "survey"):   # rng_bit_generator's: a survey of its bits
            args, results = _signature(c["mlir"])
            seen |= set(args) | set(results)
    missing = {t.name for t in _tables_take(op) if t.mlir not in seen} - {t for o, t in NO_PROGRAM if o == op}
    assert not missing, f"{op}: no value case in {sorted(missing)}"


def test_convert_between_every_pair_with_a_v1_20_side():
    """539 pairs: (new, any), (any, new) over the 30 types."""
    got = set()
    for c in _cases("convert"):
        if c["kind"] == "value":
            (a,), (r,) = _signature(c["mlir"])
            got.add((a, r))
    types = [t.mlir for t in T.ALL_TYPES_V1_20]
    new = {t.mlir for t in NEW}
    wanted = {(a, r) for a, r in itertools.product(types, types) if a in new or r in new}
    assert len(wanted) == 30 * 30 - 19 * 19 and not wanted - got, sorted(wanted - got)[:10]


def test_bitcast_convert_between_every_pair_of_equal_width():
    got = set()
    for c in _cases("bitcast_convert"):
        if c["kind"] == "value":
            (a,), (r,) = _signature(c["mlir"])
            got.add((a, r))
    by_mlir = {t.mlir: t for t in T.ALL_TYPES_V1_20}
    wanted = {(a.mlir, r.mlir) for a, r in itertools.product(T.ALL_TYPES_V1_20, T.ALL_TYPES_V1_20)
              if a.bits == r.bits and (a.since or r.since)}
    # 2-bit 2² pairs, 4-bit 3² − 2², 6-bit 2², 8-bit 11² − 4², less what two spellings share
    assert len(wanted) >= 90 and not wanted - got, sorted(wanted - got)[:10]
    # quantized pairs (their storage's width) are not in the table of element types: left out, and in
    # sorted order, so the test does not depend on the set's (hash-seeded) order
    plain = sorted((a, r) for a, r in got if a in by_mlir and r in by_mlir)
    assert any(by_mlir[a].bits != by_mlir[r].bits and (by_mlir[a].since or by_mlir[r].since) for a, r in plain)


def _inputs_and_expected(c: dict):
    ins = [tensor_from_hex(x["hex"], parse_type(x["type"])) for x in c["inputs"]]
    return ins, [Expectation.from_json(e) for e in c["expected"]]


@pytest.mark.parametrize("et", NEW_FLOATS, ids=lambda t: t.name)
def test_convert_from_f32_and_f64_is_ml_dtypes_round_to_nearest(et):
    """A second implementation: ml_dtypes' cast, for finite sources in the
    format's range (outside it, and for f8E8M0FNU's ties, the spec is TBD
    or the RFC's own rule, held by tests/spec/test_v120_formats.py); f64
    sources go through float32 in ml_dtypes, so only f32 ones and f64 ones
    exact in f32 are compared."""
    fmt, checked = et.format, 0
    for c in _cases("convert"):
        (a,), (r,) = _signature(c["mlir"])
        if c["kind"] != "value" or r != et.mlir or a not in ("f32", "f64"):
            continue
        (x,), (e,) = _inputs_and_expected(c)
        x = np.asarray(x, dtype=np.float64).reshape(-1)
        keep = np.isfinite(x) & (np.abs(x) <= float(fmt.max_finite))
        keep &= x.astype(np.float32).astype(np.float64) == x
        if not fmt.signed:
            keep &= x > 0
        if fmt.precision == 1:   # f8E8M0FNU: no mantissa, its ties are the RFC's (tested elsewhere)
            keep &= np.log2(np.abs(np.where(keep, x, 1))) % 1 == 0
        want = x[keep].astype(np.float32).astype(et.numpy).view(np.uint8)
        got = e.bits.reshape(-1)[keep].astype(np.uint8)
        assert np.array_equal(got, want), (c["id"], x[keep][got != want][:5])
        checked += int(keep.sum())
    assert checked >= (8 if fmt.precision == 1 else 20), checked


@pytest.mark.parametrize("et", [t for t in NEW_FLOATS if t.format.signed], ids=lambda t: t.name)
@pytest.mark.parametrize("op, fn", [("add", np.add), ("multiply", np.multiply), ("subtract", np.subtract)])
def test_arithmetic_is_float64_rounded_once(op, fn, et):
    """add/subtract/multiply in a format of p <= 5 bits: the float64 result
    is exact (p <= 26) and one ml_dtypes cast rounds it — the expectation
    at every finite in-range element must be that value."""
    fmt, checked = et.format, 0
    for c in _cases(op):
        if c["kind"] != "value" or c["dtype"] != et.name:
            continue
        (a, b), (e,) = _inputs_and_expected(c)
        with np.errstate(all="ignore"):
            z = fn(np.asarray(a, np.float64), np.asarray(b, np.float64)).reshape(-1)
        keep = np.isfinite(z) & (np.abs(z) <= float(fmt.max_finite)) & (z != 0)
        want = z[keep].astype(et.numpy).view(np.uint8)
        got = e.bits.reshape(-1)[keep].astype(np.uint8)
        assert np.array_equal(got, want), c["id"]
        checked += int(keep.sum())
    assert checked >= 16, checked


@pytest.mark.parametrize("et", [T.E_F8E4M3FNUZ, T.E_F8E5M2FNUZ, T.E_F8E4M3B11FNUZ], ids=lambda t: t.name)
def test_fnuz_compare_cases_hold_their_nan_and_totalorder(et):
    """Compare in a format whose NaN is the negative-zero pattern: the cases
    carry 0x80, and a TOTALORDER case is among them."""
    nan_seen = total = False
    for c in _cases("compare"):
        if c["kind"] != "value" or c["dtype"] != et.name:
            continue
        ins, _ = _inputs_and_expected(c)
        nan_seen |= any(np.any(np.asarray(x).view(np.uint8) == 0x80) for x in ins)
        total |= "TOTALORDER" in c["mlir"]
    assert nan_seen and total


def test_the_seeds_cases_come_first_in_every_file():
    """The v1.20 cases are a stream of their own, last: no seed-typed case
    follows one in a v1.20 type unless it is a pair's seed side."""
    for f in sorted(CORE.glob("*.jsonl")):
        records = [json.loads(line) for line in f.read_text().splitlines()]
        notes = [r["note"] for r in records if not r["dtype"].startswith("quant_")   # quantized: a later stream
                 and "stream" not in r["provenance"]]   # and those after it (appended_last, attribute_widths)
        first = next((i for i, n in enumerate(notes) if "v1.20 type:" in n), len(notes))
        assert all("v1.20 type:" in n for n in notes[first:]), f.name


@pytest.mark.parametrize("name", sorted(T.ELEMENT_TYPES))
def test_run_s_typical_draw_gives_every_type_ordinary_values(name):
    """`run --random`'s default draw (values.typical_values) in every element
    type: no NaN or infinity, floats of moderate size spread around zero
    (none negative in a format without a sign), integers in [-16, 16]
    within the type, and not one value repeated."""
    from shlo_conform.generators import values
    et = T.ELEMENT_TYPES[name]
    v = values.fill(et, (4000,), np.random.default_rng(0), special_fraction=0.0, draw=values.DRAWS["typical"].values)
    assert v.dtype == et.numpy and v.shape == (4000,)
    if et.is_bool:
        assert set(v.tolist()) == {False, True}
        return
    x = v.astype(np.complex128) if et.is_complex else v.astype(np.float64)
    assert np.isfinite(x).all() and len(np.unique(x)) > 2
    if et.is_integer:
        assert x.min() >= max(et.min_value, -16) and x.max() <= min(et.max_value, 16)
    else:
        parts = [x.real, x.imag] if et.is_complex else [x]
        for p in parts:
            assert np.abs(p).max() < 8 and np.median(np.abs(p)) > 0.25
            signed = True if et.is_complex else et.format.signed
            assert (p < 0).any() == signed, name
