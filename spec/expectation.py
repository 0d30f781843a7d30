"""What an output must be: one record the oracle states, a suite stores and the comparison checks.

The oracle (floor 2) produces an `Expectation` per output; a suite
(floor 2) writes it as JSON and reads it back.  Its `kind` names a module
of spec/kinds/ (floor 1, below both), which holds everything the kind
means — the fields of this record it owns, its comparison rule, its
description, how the interpreter's test format states it, how it
propagates through later ops — so a new kind is its module there and
nothing here, and neither the oracle nor the judge decides a kind by its
name (issue 33; before it, a kind's fields were declared here too).

The record's own fields are those no kind owns: `type`, `bits`, `kind`,
`impl_defined`, `alternatives`, `why`.  Every other field is a kind's
(`spec.kinds.KindField`), taken from the registry (`spec.kinds.
declared_fields`) whenever it changes: the constructor accepts it by
keyword or position, a record not given it holds its default, and
`dataclasses.fields`/`replace` see it — so the record is still a dataclass
to every caller, and a kind registered later (a test's) adds its fields
with no edit here.  The kinds at issue 33 (spec/kinds/ is the list; each
module says its rule): exact (`bits`, `bit_exact`), ulp (`tolerance_ulp`
around `bits`), bounded (`lo`, `hi`; `bits` nearest the exact result),
statistical (the distribution tests in `statistical`; `bits` the oracle's
own sample), residual (a property of the whole output stated in `residual`
with the operands it is measured against; `bits` a reference computed in
high precision, shown, never judged).

Elements listed in `impl_defined` (flat row-major indices) may instead
equal the same element of an `Alternative` — a whole tensor of bits, or
"any value" (`bits` None) at the flat indices `elements` — by the same rule
as the primary value.  `alternatives[0]` names the choice the primary value
makes.

JSON: bits travel as the hex of their little-endian raw bytes
(`spec.types.tensor_to_hex`), the type in MLIR syntax, then the fields in
their order (`PLACES`, `KindField.order`) and `alternatives` last.  A kind's
field is written in its JSON form (`spec.kinds`: `PLAIN` always,
`OMIT_DEFAULT` only when set, `BITS` as hex of the expectation's type only
when set), so a kind added later leaves existing suites' bytes as they were
(tests/spec/test_expectation_kinds.py reads every record of suites/core
back to the same bytes).
"""
from __future__ import annotations

import dataclasses
from dataclasses import MISSING, dataclass, field
from typing import Optional

import numpy as np

from .kinds import BITS, OMIT_DEFAULT, PLAIN, declared_fields
from .types import TensorType, from_bits, parse_type, tensor_from_hex, tensor_to_hex, to_bits

# The record's own fields' places among all its fields (a kind's field takes its `KindField.order`
# between them): the positional order of the constructor, and the key order of `to_json` (`bits` as
# "hex"; `alternatives` is written last, after every field).  From the record as it was declared
# before issue 33: type, bits, kind, [tolerance_ulp 10, bit_exact 11], impl_defined, alternatives,
# why, [lo 40, hi 41, statistical 50, residual 60] — so every positional call and every JSON key
# order stays as it was.
PLACES = {"type": 0, "bits": 1, "kind": 2, "impl_defined": 20, "alternatives": 21, "why": 30}


@dataclass(eq=False)
class Alternative:
    """An implementation-defined alternative: a whole tensor of bits whose
    elements at the expectation's `impl_defined` positions are this
    alternative's values; or, with `bits` None, "any value" at the flat
    indices `elements` (the spec leaves those results open without naming
    candidates)."""

    label: str
    bits: Optional[np.ndarray]
    elements: Optional[list] = None

    def __eq__(self, other) -> bool:
        if not isinstance(other, Alternative):
            return NotImplemented
        same_bits = (self.bits is None and other.bits is None) or (
            self.bits is not None and other.bits is not None and np.array_equal(self.bits, other.bits))
        return self.label == other.label and same_bits and self.elements == other.elements


@dataclass(eq=False, init=False, repr=False)
class Expectation:
    """What one output must be (module docstring).  Equal when their JSON
    forms are: same type, same bits, same rule.  Declared here: the fields
    no kind owns; the kinds' fields come from the registry (`_layout`)."""

    type: TensorType
    bits: np.ndarray
    kind: str = "exact"   # the name of a spec/kinds module; a record without one is exact
    impl_defined: list = field(default_factory=list)
    alternatives: list = field(default_factory=list)
    why: str = ""

    def __init__(self, type, bits, *args, **kw):
        """As a dataclass's: every field by position (in `_layout` order) or
        keyword, those not given at their defaults; TypeError as a
        dataclass's constructor raises it (from_json relies on it for an
        unknown key)."""
        lay = _layout()
        if len(args) > len(lay.names) - 2:
            raise TypeError(f"Expectation takes at most {len(lay.names)} positional arguments "
                            f"({len(args) + 2} given)")
        for name, v in zip(lay.names[2:], args):
            if name in kw:
                raise TypeError(f"Expectation got multiple values for argument {name!r}")
            kw[name] = v
        values = {"type": type, "bits": bits}
        for name, default, factory in lay.slots:
            if name in kw:
                values[name] = kw.pop(name)
            else:
                values[name] = default if factory is MISSING else factory()
        if kw:
            raise TypeError(f"Expectation got an unexpected keyword argument {next(iter(kw))!r}")
        self.__dict__.update(values)

    def __getattr__(self, name):
        """A kind's field on a record made before that kind was registered
        (only then is it missing from the record): its default, as a record
        made now would hold."""
        f = None if name.startswith("__") else _layout().fields.get(name)
        if f is None or "kind" not in f.metadata:
            raise AttributeError(f"'Expectation' object has no attribute {name!r}")
        return f.default

    def __repr__(self) -> str:
        return f"Expectation({', '.join(f'{n}={getattr(self, n)!r}' for n in _layout().names)})"

    def __eq__(self, other) -> bool:
        if not isinstance(other, Expectation):
            return NotImplemented
        return self.to_json() == other.to_json()

    @classmethod
    def of(cls, array, t: TensorType, **kw) -> "Expectation":
        """From values (numpy / ml_dtypes) of type `t`."""
        return cls(t, to_bits(np.asarray(array), t.element_type), **kw)

    def array(self) -> np.ndarray:
        return from_bits(self.bits, self.type.element_type)

    def alternative_array(self, alt: Alternative) -> np.ndarray:
        return from_bits(alt.bits, self.type.element_type)

    # -- JSON --------------------------------------------------------------
    def to_json(self) -> dict:
        t = self.type
        d = {"type": t.mlir, "hex": tensor_to_hex(self.array(), t)}
        for f in _layout().fields.values():
            if f.name in ("type", "bits", "alternatives"):
                continue
            v = getattr(self, f.name)
            form = f.metadata.get("json", PLAIN)
            if form == BITS:
                if v is not None:
                    d[f.name] = tensor_to_hex(from_bits(v, t.element_type), t)
                continue
            if form == OMIT_DEFAULT and v == _default(f):
                continue
            d[f.name] = v
        d["alternatives"] = [{"label": a.label, "elements": a.elements,
                              "hex": None if a.bits is None else tensor_to_hex(self.alternative_array(a), t)}
                             for a in self.alternatives]
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Expectation":
        """The record from its JSON form; raises ValueError (or KeyError,
        TypeError) on a damaged one."""
        d = dict(d)
        t = parse_type(d.pop("type"))
        if not isinstance(t, TensorType):
            raise ValueError(f"expected output type {t} is not a tensor type")
        et = t.element_type
        bits = to_bits(tensor_from_hex(d.pop("hex"), t), et)
        alts = [Alternative(a["label"], None if a.get("hex") is None else to_bits(tensor_from_hex(a["hex"], t), et),
                            a.get("elements")) for a in d.pop("alternatives", [])]
        for f in _layout().fields.values():
            if f.metadata.get("json") == BITS and d.get(f.name) is not None:
                d[f.name] = to_bits(tensor_from_hex(d[f.name], t), et)
        return cls(t, bits, alternatives=alts, **d)


def _default(f):
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    return MISSING


# ---------------------------------------------------------------------------
# The record's fields: its own, and the registered kinds'
# ---------------------------------------------------------------------------

OWN_FIELDS = dict(Expectation.__dataclass_fields__)   # as the decorator made them, before the kinds' join


@dataclass(frozen=True)
class Layout:
    """The record's fields at one state of the kind registry: `fields` (the
    `dataclasses.Field`s `dataclasses.fields`/`replace` read, in order),
    `names` (the same order: the constructor's positions), `slots` (name,
    default, factory) for the fields after `type` and `bits`."""

    fields: dict
    names: tuple
    slots: tuple


_layouts: list = [None, None]   # [the declared fields when last read, their Layout]


def _layout() -> Layout:
    declared = declared_fields()
    if declared is not _layouts[0]:
        _layouts[:] = [declared, _make_layout(declared)]
    return _layouts[1]


def _make_layout(declared: tuple) -> Layout:
    """The kinds' fields made into `dataclasses.Field`s by `dataclasses`
    itself (`make_dataclass`: the same checks of a name and of a mutable
    default as a field declared in the class body), each with its JSON form
    and owner in its metadata, then placed among the record's own."""
    for kf, owner in declared:
        if kf.name in OWN_FIELDS or kf.name in vars(Expectation):
            raise ValueError(f"kind {owner!r} declares field {kf.name!r}, which the expectation record has itself")
    made = dataclasses.fields(dataclasses.make_dataclass("KindFields", [
        (kf.name, object, field(default=kf.default, metadata={"json": kf.json, "kind": owner, "order": kf.order}))
        for kf, owner in declared]))
    placed = [(PLACES[n], 0, f) for n, f in OWN_FIELDS.items()] + \
             [(kf.order, 1, f) for (kf, _), f in zip(declared, made)]
    ordered = {f.name: f for _, _, f in sorted(placed, key=lambda p: (p[0], p[1]))}
    names = tuple(ordered)
    slots = tuple((f.name, f.default, f.default_factory) for f in ordered.values() if f.name not in ("type", "bits"))
    return Layout(ordered, names, slots)


class _Fields:
    """`Expectation.__dataclass_fields__`, read through: `dataclasses.fields`,
    `replace` and `is_dataclass` find the fields there, and a kind
    registered after the class was made must be among them (suites/records.py
    reads them for its schema; oracle/decomposition.py copies records with
    `replace`)."""

    def __get__(self, obj, owner=None) -> dict:
        return _layout().fields


Expectation.__dataclass_fields__ = _Fields()
