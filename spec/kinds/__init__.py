"""Expectation kinds: an open registry, one module per kind, at the floor both the oracle and the judge see.

An `Expectation` (spec/expectation.py) names its kind; everything a kind
means lives in that kind's module here, once — so the oracle (which states
expectations and carries them through later ops) and the suites (which
judge outputs by them) ask the kind, and neither re-decides a kind by its
name (DESIGN.md, floors: spec/ is below both):

* `fields` — the record's fields the kind owns, each declared here as a
  `KindField` (name, default, JSON form, place); `Expectation` takes its
  fields from the registry (`declared_fields`), so no other file lists
  them.  An entry may instead be a plain name: a field another kind
  declares that this one reads too;
* `matches` — for kinds judged element by element (exact, ulp, bounded):
  which elements of an output meet the expected bits; the comparison
  (suites/compare.py) adds the shared machinery around it —
  implementation-defined alternatives, causes, the ULP error, mismatches;
* `judge` — for kinds judged on the whole output (statistical, residual):
  the `Comparison` itself;
* `describe` — the one line `explain`, `run` and the HTML print for it;
* `check` — how the StableHLO interpreter's test format states it
  (shlo_conform/export.py): "eq", "close", "nan" or None with the reason;
* how it propagates through later ops (oracle/propagation.py, affine.py,
  bilinear.py, chains.py): `admits` (the values it allows, as ordinals),
  `ranged` (more than its bits), `pinned` (exactly its bits),
  `approximate`, `ulps`, `ends`, and for a kind that stores its range,
  `holds_range`/`narrow`.

A new kind is a new module here defining a `Kind` subclass — its fields
and its rule — and calling `register`: no chain elsewhere is edited, and
spec/expectation.py neither (before issue 33 a kind that needed a field
also added it to the record there).  Modules are found by name, as spec/ops
finds op modules; a kind declared elsewhere (a test) registers the same way,
and its fields are the record's while it is registered.  Creating an
expectation of a kind names it by the kind's constant (`EXACT.name`), never
by a string literal; tests/layout/test_kind_names.py keeps it so.

A field's JSON form (`KindField.json`) is how existing suites keep their
bytes: `OMIT_DEFAULT` (written only when it differs from its default) and
`BITS` (a bit array of the expectation's type, as hex, written only when
set) leave every record of another kind as it was; `PLAIN` (written on every
record) is the form of the two fields records carried from the format's
start (`tolerance_ulp`, `bit_exact`) — a new kind's plain field would change
every suite line.  A field's `order` is its place among the record's fields:
the constructor's positional order and the key order of `to_json`
(spec/expectation.py gives the record's own fields' places).  A kind module
must not import spec/expectation at import time: that module imports this
package for the fields (tests/layout/test_private_imports.py refuses the
cycle).
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..types import ElementType, nan_mask, ordinals

if TYPE_CHECKING:   # spec/expectation.py imports this package (its fields); never the other way at import time
    from ..expectation import Expectation

PLAIN = "plain"                  # written on every record (module docstring: only the format's first two fields)
OMIT_DEFAULT = "omit default"    # written only when it differs from its default
BITS = "bits"                    # a bit array of the expectation's type, written as hex; only when set
JSON_FORMS = (PLAIN, OMIT_DEFAULT, BITS)


@dataclass(frozen=True)
class KindField:
    """One field of the `Expectation` record that a kind owns (module
    docstring).  `default` is what a record of any other kind holds — an
    immutable value (None for a dict or an array: a mutable default would be
    shared by every record, which `dataclasses` refuses too); `json` its
    JSON form; `order` its place among the record's fields (spec/expectation.py,
    `PLACES`: a new field's default 100 comes after every field of today,
    ties kept in registration order)."""

    name: str
    default: Any = None
    json: str = OMIT_DEFAULT
    order: float = 100

    def __post_init__(self):
        if self.json not in JSON_FORMS:
            raise ValueError(f"field {self.name!r}: JSON form {self.json!r} is none of {JSON_FORMS}")
        if self.json == BITS and self.default is not None:
            raise ValueError(f"field {self.name!r}: a bit array's default is None (not set), not {self.default!r}")


@dataclass
class Comparison:
    """A verdict on one output: what `judge` returns and suites/compare.py
    builds for kinds judged element by element."""

    ok: bool
    max_ulp: float | None = None
    mismatches: list = field(default_factory=list)  # (flat index, expected, actual, ulp, cause)
    mismatch_count: int = 0
    alternatives_used: list = field(default_factory=list)
    detail: str = ""
    causes: dict = field(default_factory=dict)   # cause -> failing elements (suites/causes.py)
    meaningful_ulp: float | None = None          # max ULP over passing and "out of tolerance" elements
    failing: tuple = ((), ())                    # (flat indices, their causes): what `causes` counts, element
                                                 # by element, so a later name (a rewrite) can take an element over
    used: float | None = None                    # a kind judged whole: its measure as a share of what it allows
                                                 # (a criterion's ratio over its threshold); None: the enclosure's


class Kind:
    """One expectation kind (module docstring).  The defaults are those of
    a kind that states no value (a property, a distribution)."""

    name: str = "?"
    fields: tuple = ()          # the record's fields this kind owns (`KindField`s) or reads (names)
    element_wise: bool = True   # judged element by element (`matches`); else on the whole output (`judge`)
    ulp_measures: bool = True   # is the ULP distance from `bits` a measure of accuracy?  ("residual": no — the
                                # reference is one result among many correct ones; its distance is shown, not summarised)
    used_words: str = "the farthest element used {}% of its enclosure"   # `Comparison.used` / allowance_used, shown
    pinned: bool = False        # states exactly `bits` per element: nothing around them to carry or widen
    approximate: bool = False   # a range or tolerance around the correctly rounded value (an approximate result)
    holds_range: bool = False   # its range is stored in fields of its own (`ends`), which `narrow` may tighten

    def judges(self, e: Expectation) -> bool:
        """Is `e` of this kind?  (The one place a kind's name is compared.)"""
        return not isinstance(e, tuple) and e.kind == self.name

    def describe(self, e: Expectation) -> str:
        return self.name

    def matches(self, e: Expectation, cet: ElementType, eb: np.ndarray, ab: np.ndarray, primary: bool,
                elem_ulp: np.ndarray | None) -> np.ndarray:
        """Per element (rows of component bits): does the actual `ab` meet
        the expected `eb` under this kind's rule?  `primary`: the primary
        value (False: an implementation-defined alternative, one value);
        `elem_ulp`: the per-element ULP distance for float types."""
        raise NotImplementedError(f"kind {self.name!r} is not judged element by element")

    def judge(self, e: Expectation, actual: np.ndarray) -> Comparison:
        raise NotImplementedError(f"kind {self.name!r} is judged element by element")

    def admits(self, e: Expectation, part: slice = slice(None)) -> tuple[np.ndarray, np.ndarray] | None:
        """The values this kind admits, as (low, high) ordinals per component
        (`spec.types.ordinals`, flattened), over the stretch `part` of the
        flat components; None when the kind states no range of values (a
        property or a distribution)."""
        return None

    def enclosure(self, e: Expectation) -> tuple[np.ndarray, np.ndarray] | None:
        """`admits` over the whole output — what a verdict's width is
        measured from (suites/resolution.py)."""
        return self.admits(e)

    def ranged(self, e: Expectation) -> bool:
        """Does `e` admit more than its `bits` (so a later op must be run at
        the ends of its range: oracle/propagation.py)?"""
        return False

    def ulps(self, e: Expectation) -> int | None:
        """The allowance around `bits` in ULPs, where the kind states its
        range that way (exact: 0); None otherwise."""
        return None

    def ends(self, e: Expectation) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) bit patterns, shaped as `bits`, the record stores as
        its range's ends: `bits` at both ends unless the kind `holds_range`
        (a tolerance around `bits` is `admits`'s, not stored)."""
        return e.bits, e.bits

    def narrow(self, e: Expectation, lo: np.ndarray, hi: np.ndarray) -> None:
        """Store the range [`lo`, `hi`] (flat bit patterns) as `e`'s, for a
        kind that `holds_range` (oracle/affine.py tightens it)."""
        raise NotImplementedError(f"kind {self.name!r} stores no range")

    def catches_scaling(self, e: Expectation, s: float) -> bool | None:
        """For a kind that states no range (a property): does its rule refuse
        the oracle's reference scaled by 1 + s and by 1 − s?  False: a
        uniformly wrong answer that large would pass, so "agrees" would claim
        more than was checked (suites/resolution.py).  None: not a question
        for this kind."""
        return None

    def check(self, e: Expectation) -> tuple[str | None, str]:
        """(how the interpreter's test format states it, or None; why not)."""
        return None, f"expectation kind {self.name!r} has no check op"


REGISTRY: dict[str, Kind] = {}


def register(kind: Kind) -> Kind:
    REGISTRY[kind.name] = kind
    return kind


_declared: list = [None, ()]   # [the registry's kinds when last read, their fields]


def declared_fields() -> tuple[tuple[KindField, str], ...]:
    """(field, the name of the kind that declares it) for every field the
    registered kinds declare, in the record's order (`KindField.order`,
    ties in registration order).  Read from `REGISTRY` itself, whoever
    changed it (`register`, a test's `monkeypatch.setitem`), and recomputed
    only when its kinds changed: `Expectation` asks on every construction.
    Two kinds declaring one name differently is an error, not a choice."""
    kinds = tuple(REGISTRY.values())
    if kinds != _declared[0]:
        _declared[:] = [kinds, _collect(kinds)]
    return _declared[1]


def _collect(kinds: tuple) -> tuple[tuple[KindField, str], ...]:
    by_name: dict[str, tuple[KindField, str]] = {}
    for k in kinds:
        for f in k.fields:
            if isinstance(f, str):   # a field declared by another kind, read by this one too
                continue
            prior = by_name.setdefault(f.name, (f, k.name))
            if prior[0] != f:
                raise ValueError(f"expectation field {f.name!r} is declared by kind {prior[1]!r} as {prior[0]} "
                                 f"and by kind {k.name!r} as {f}")
    return tuple(sorted(by_name.values(), key=lambda p: p[0].order))


def kind_of(e: Expectation) -> Kind:
    """The registered kind of `e`; KeyError naming it when none is."""
    try:
        return REGISTRY[e.kind]
    except KeyError:
        raise KeyError(f"unknown expectation kind {e.kind!r}; known: {', '.join(sorted(REGISTRY))}") from None


def describe(e: Expectation) -> str:
    return kind_of(e).describe(e)


def nan_rows(x: np.ndarray, fmt) -> np.ndarray:
    return nan_mask(x, fmt)


def flat_ordinals(x: np.ndarray, e: Expectation, part: slice = slice(None)) -> np.ndarray:
    """Ordinals of bit array `x` of `e`'s type, flattened, over `part`."""
    return ordinals(np.reshape(x, -1)[part], e.type.element_type)


for _info in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_info.name}")
