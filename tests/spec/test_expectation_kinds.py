"""A new expectation kind is one module (issue 33): each kind of spec/kinds/
declares the fields of the `Expectation` record it owns, and the record
takes them from the registry instead of declaring them.

What must not move: every record of suites/core reads back to the same
bytes, every expectation's `to_json` keeps its key order, and the record's
constructor, `dataclasses.fields`/`replace` and attribute reads behave as
when the fields were declared in spec/expectation.py.  What must now hold: a
kind declared in a test-only module (tests/spec/relative_kind.py: fields and
rule, nothing else) goes through construction, the JSON round trip and the
judge with no other edit, and leaves nothing behind when it is removed.

Truth: the suite lines on disk themselves (written before issue 33); the
record's field order as it was declared before issue 33 (commit f08177f,
spec/expectation.py: `FIELD_ORDER` below); hex and verdicts of the test
kind by hand from the IEEE-754 binary32 encodings (each stated where used)."""
from __future__ import annotations

import ast
import dataclasses
import importlib
import json
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from shlo_conform.spec.expectation import OWN_FIELDS, Alternative, Expectation
from shlo_conform.spec.kinds import BITS, PLAIN, REGISTRY, Kind, KindField, declared_fields, describe, kind_of
from shlo_conform.spec.kinds.bounded import BOUNDED
from shlo_conform.spec.kinds.exact import EXACT
from shlo_conform.spec.kinds.ulp import ULP
from shlo_conform.spec.types import E_F32, TensorType, to_bits
from shlo_conform.suites.compare import compare
from shlo_conform.suites.records import Case

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "suites" / "core"
TEST_KIND = "tests.spec.relative_kind"

# The record's fields in the order spec/expectation.py declared them before issue 33 — the
# constructor's positional order, which oracle/ and tests/ call it by (oracle/propagation.py passes
# eight arguments by position).
FIELD_ORDER = ("type", "bits", "kind", "tolerance_ulp", "bit_exact", "impl_defined", "alternatives", "why",
               "lo", "hi", "statistical", "residual")
# ... and `to_json`'s key order then: `bits` as "hex", `alternatives` last.
KEY_ORDER = ("type", "hex", "kind", "tolerance_ulp", "bit_exact", "impl_defined", "why",
             "lo", "hi", "statistical", "residual", "alternatives")
OWN = ("type", "bits", "kind", "impl_defined", "alternatives", "why")   # fields no kind owns


def _built_in_kinds() -> set:
    return {k.name for k in REGISTRY.values() if type(k).__module__.startswith("shlo_conform.spec.kinds.")}


def _suite_lines():
    files = sorted(CORE.glob("*.jsonl"))
    assert len(files) > 90   # every op's file (a glob that found none would check nothing)
    for path in files:
        for line in path.read_text().splitlines():
            yield path.name, line


def _expectations(d: dict) -> list:
    """Every expectation a case line holds: its outputs', each process's (a
    grid) and each host log entry's."""
    grid = [e for per in (d.get("grid") or {}).get("expected", []) for e in per]
    log = [entry["expected"] for entry in (d.get("host") or {}).get("log", [])]
    return list(d.get("expected", [])) + grid + log


# ---------------------------------------------------------------------------
# What must not move
# ---------------------------------------------------------------------------

def test_every_suite_line_reads_back_to_its_bytes_and_every_expectation_to_its_keys():
    """Each line of suites/core re-serialises to the same bytes, and each of
    its expectations to the same dict with the keys in the format's order —
    over all five kinds (a suite missing one would leave that kind's fields
    unchecked, so the test asks for each)."""
    seen: dict = {}
    for name, line in _suite_lines():
        assert Case.from_json(line).to_json() == line, name
        for d in _expectations(json.loads(line)):
            back = Expectation.from_json(d).to_json()
            assert back == d, name
            assert list(back) == [k for k in KEY_ORDER if k in d], name
            seen[d.get("kind", EXACT.name)] = seen.get(d.get("kind", EXACT.name), 0) + 1
    assert set(seen) == _built_in_kinds(), seen


def test_the_record_declares_only_its_own_fields():
    """spec/expectation.py's class body declares the six fields no kind owns;
    every other field of the record is one a registered kind declares, with
    its owner in the field's metadata."""
    tree = ast.parse((ROOT / "spec" / "expectation.py").read_text())
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Expectation"]
    declared = [n.target.id for n in cls.body if isinstance(n, ast.AnnAssign)]
    assert tuple(declared) == OWN and tuple(OWN_FIELDS) == OWN
    by_kind = {f.name: k.name for k in REGISTRY.values() for f in k.fields if isinstance(f, KindField)}
    for f in dataclasses.fields(Expectation):
        if f.name not in OWN:
            assert by_kind[f.name] == f.metadata["kind"], f.name


def test_the_fields_keep_their_order_forms_and_defaults():
    """The positional order of before; `lo`/`hi` still marked as bit arrays
    (suites/records.py checks their hex by that mark); the defaults a
    record not given a field holds."""
    fields = dataclasses.fields(Expectation)
    assert tuple(f.name for f in fields) == FIELD_ORDER
    assert [f.name for f in fields if f.metadata.get("json") == "bits"] == ["lo", "hi"]
    e = Expectation(TensorType((1,), E_F32), np.zeros(1, np.uint32))
    assert (e.kind, e.tolerance_ulp, e.bit_exact, e.impl_defined, e.alternatives, e.why) == \
        (EXACT.name, 0, False, [], [], "")
    assert e.lo is None and e.hi is None and e.statistical is None and e.residual is None
    assert e.impl_defined is not Expectation(e.type, e.bits).impl_defined   # a list per record, not shared


def test_positions_keywords_replace_and_copies_as_before():
    """Every field by position in the old order equals the same by keyword;
    `dataclasses.replace` carries a kind's fields it is not given (as
    oracle/decomposition.py relies on); an unknown or doubled argument is a
    TypeError (as `from_json` reports a damaged record)."""
    t = TensorType((2,), E_F32)
    b = to_bits(np.array([1.0, 2.0], np.float32), E_F32)
    lo = to_bits(np.array([0.5, 1.5], np.float32), E_F32)
    alt = [Alternative("other", b)]
    values = (t, b, BOUNDED.name, 3, True, [1], alt, "why", lo, b, {"alpha": 0.5}, {"op": "x"})
    by_position = Expectation(*values)
    by_keyword = Expectation(**dict(zip(FIELD_ORDER, values)))
    assert by_position == by_keyword
    assert [getattr(by_position, n) is v for n, v in zip(FIELD_ORDER, values)] == [True] * len(values)
    moved = dataclasses.replace(by_position, kind=ULP.name, why="w")
    assert moved.lo is lo and moved.residual == {"op": "x"} and moved.tolerance_ulp == 3 and moved.kind == ULP.name
    with pytest.raises(TypeError):
        Expectation(t, b, nothing=1)
    with pytest.raises(TypeError):
        Expectation(t, b, EXACT.name, kind=ULP.name)
    with pytest.raises(TypeError):
        Expectation(*values, "one too many")
    with pytest.raises(TypeError):
        Expectation.from_json({**by_position.to_json(), "nothing": 1})


# ---------------------------------------------------------------------------
# A kind declared in a test-only module
# ---------------------------------------------------------------------------

@contextmanager
def _relative_kind():
    """Import tests/spec/relative_kind.py (which registers its kind, as a
    module of spec/kinds/ does), then take it out of the registry again."""
    assert TEST_KIND not in sys.modules
    module = importlib.import_module(TEST_KIND)
    try:
        yield module.RELATIVE
    finally:
        REGISTRY.pop(module.RELATIVE.name, None)
        sys.modules.pop(TEST_KIND, None)


T4 = TensorType((4,), E_F32)
STATED = np.array([1.0, 2.0, -4.0, 8.0], np.float32)
FLOOR = np.array([0.875, 0.0, -8.0, 7.5], np.float32)
# binary32 by hand: 0.875 = 1.75·2⁻¹ → 0x3F600000; 0 → 0; −8 = −1·2³ → 0xC1000000; 7.5 = 1.875·2² → 0x40F00000;
# written as the little-endian bytes of each.
FLOOR_HEX = "0000603f" "00000000" "000000c1" "0000f040"


def _relative(kind: Kind, **kw) -> Expectation:
    return Expectation.of(STATED, T4, kind=kind.name, rel=0.25, floor=to_bits(FLOOR, E_F32), **kw)


def test_a_kind_declared_in_one_module_becomes_the_records_fields():
    before = Expectation(T4, to_bits(STATED, E_F32))   # made before the kind existed
    with _relative_kind() as relative:
        assert kind_of(_relative(relative)) is relative
        names = [f.name for f in dataclasses.fields(Expectation)]
        assert names == list(FIELD_ORDER) + ["rel", "floor"]   # after every field of before (default order 100)
        e = _relative(relative)
        assert e.rel == 0.25 and np.array_equal(e.floor, to_bits(FLOOR, E_F32))
        assert before.rel is None and before.floor is None        # its defaults, on a record older than the kind
        assert Expectation(T4, e.bits).rel is None
        assert dataclasses.replace(e, rel=0.5).floor is e.floor   # replace carries the new kind's fields too
    names = [f.name for f in dataclasses.fields(Expectation)]
    assert names == list(FIELD_ORDER)   # removed from the registry: no longer the record's
    with pytest.raises(TypeError):
        Expectation(T4, before.bits, rel=0.25)
    with pytest.raises(AttributeError):
        before.rel


def test_a_kind_declared_in_one_module_round_trips_through_json():
    with _relative_kind() as relative:
        e = _relative(relative, why="stated by hand")
        d = e.to_json()
        assert list(d) == ["type", "hex", "kind", "tolerance_ulp", "bit_exact", "impl_defined", "why",
                           "rel", "floor", "alternatives"]
        assert d["kind"] == relative.name and d["rel"] == 0.25 and d["floor"] == FLOOR_HEX
        back = Expectation.from_json(json.loads(json.dumps(d)))
        assert back == e and back.rel == 0.25 and np.array_equal(back.floor, e.floor)
        # A record of another kind is written as before: the new fields are omitted while unset.
        plain = Expectation.of(STATED, T4)
        assert list(plain.to_json()) == [k for k in KEY_ORDER if k not in ("lo", "hi", "statistical", "residual")]
        without_floor = Expectation.of(STATED, T4, kind=relative.name, rel=0.25)
        assert "floor" not in without_floor.to_json() and Expectation.from_json(without_floor.to_json()).floor is None


def test_existing_suites_keep_their_bytes_while_a_new_kind_is_registered():
    """One op's whole file, each kind it holds, read and written with the
    test kind registered."""
    with _relative_kind():
        lines = (CORE / "reduce.jsonl").read_text().splitlines()
        kinds = set()
        for line in lines:
            c = Case.from_json(line)
            assert c.to_json() == line
            kinds |= {e.kind for e in c.expected}
        assert {EXACT.name, BOUNDED.name} <= kinds


def test_the_judge_applies_a_kind_declared_in_one_module():
    """Allowed per element, by hand: |a − b| ≤ b/4 and a ≥ floor —
    [0.875, 1.25], [1.5, 2.5], [−5, −3], [7.5, 10] (the floor binding at
    elements 0 and 3)."""
    with _relative_kind() as relative:
        e = _relative(relative)
        assert describe(e) == "within relative error 0.25 of the stated value, never below its floor"
        assert compare(e, np.array([1.25, 1.5, -5.0, 7.5], np.float32)).ok         # every end of every range
        assert compare(e, np.array([0.875, 2.5, -3.0, 10.0], np.float32)).ok
        low = compare(e, np.array([0.75, 2.0, -4.0, 8.0], np.float32))           # inside rel, under the floor
        assert not low.ok and low.mismatch_count == 1 and low.mismatches[0][0] == 0
        past = np.array([1.0, 2.0, -3.0, 8.0], np.float32)
        past[2] = np.nextafter(np.float32(-3.0), np.float32(0.0))                  # one float past −3
        far = compare(e, past)
        assert not far.ok and far.mismatch_count == 1 and far.mismatches[0][0] == 2
        assert not compare(e, np.array([1.0, np.nan, -4.0, 8.0], np.float32)).ok
        # An implementation-defined element: the alternative (100) judged by the same rule around itself.
        alt = to_bits(np.array([1.0, 2.0, -4.0, 100.0], np.float32), E_F32)
        open3 = _relative(relative, impl_defined=[3], alternatives=[Alternative("stated", e.bits),
                                                                    Alternative("other", alt)])
        took = compare(open3, np.array([1.0, 2.0, -4.0, 110.0], np.float32))
        assert took.ok and took.alternatives_used == ["other"]
        assert not compare(open3, np.array([1.0, 2.0, -4.0, 130.0], np.float32)).ok


# ---------------------------------------------------------------------------
# Declarations the registry refuses
# ---------------------------------------------------------------------------

class _Declares(Kind):
    def __init__(self, name: str, *fields):
        self.name, self.fields = name, fields


def test_two_kinds_declaring_one_field_differently_is_an_error(monkeypatch):
    monkeypatch.setitem(REGISTRY, "a (test)", _Declares("a (test)", KindField("width", 0, PLAIN)))
    monkeypatch.setitem(REGISTRY, "b (test)", _Declares("b (test)", KindField("width", 1, PLAIN)))
    with pytest.raises(ValueError, match="'width'"):
        declared_fields()


def test_the_same_declaration_twice_and_a_borrowed_name_are_one_field(monkeypatch):
    width = KindField("width", 0, PLAIN)
    monkeypatch.setitem(REGISTRY, "a (test)", _Declares("a (test)", width))
    monkeypatch.setitem(REGISTRY, "b (test)", _Declares("b (test)", width, "tolerance_ulp"))
    assert [f.name for f, _ in declared_fields()].count("width") == 1
    assert Expectation(T4, to_bits(STATED, E_F32), width=3).width == 3


def test_a_kind_cannot_declare_a_field_the_record_has_itself(monkeypatch):
    monkeypatch.setitem(REGISTRY, "a (test)", _Declares("a (test)", KindField("why", "")))
    with pytest.raises(ValueError, match="'why'"):
        Expectation(T4, to_bits(STATED, E_F32))


def test_a_mutable_default_and_an_unknown_form_are_refused(monkeypatch):
    with pytest.raises(ValueError):
        KindField("x", json="hex")
    with pytest.raises(ValueError):
        KindField("x", 0, BITS)   # a bit array's default is "not set"
    monkeypatch.setitem(REGISTRY, "a (test)", _Declares("a (test)", KindField("tests", [])))
    with pytest.raises(ValueError, match="mutable default"):
        Expectation(T4, to_bits(STATED, E_F32))
