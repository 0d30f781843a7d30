"""What an output must be: one record the oracle states, a suite stores and the comparison checks.

The oracle (floor 2) produces an `Expectation` per output; a suite
(floor 2) writes it as JSON and reads it back.  Its `kind` names a module
of spec/kinds/ (floor 1, below both), which holds everything the kind
means — the fields here it owns, its comparison rule, its description, how
the interpreter's test format states it, how it propagates through later
ops — so a new kind is its fields here (if it needs any) and its module
there, and neither the oracle nor the judge decides a kind by its name.

Kinds today (each module says its rule): exact (`bits`, `bit_exact`),
ulp (`tolerance_ulp` around `bits`), bounded (`lo`, `hi`; `bits` nearest
the exact result), statistical (the distribution tests in `statistical`;
`bits` the oracle's own sample), residual (a property of the whole output
stated in `residual` with the operands it is measured against; `bits` a
reference computed in high precision, shown, never judged).

Elements listed in `impl_defined` (flat row-major indices) may instead
equal the same element of an `Alternative` — a whole tensor of bits, or
"any value" (`bits` None) at the flat indices `elements` — by the same rule
as the primary value.  `alternatives[0]` names the choice the primary value
makes.

JSON: bits travel as the hex of their little-endian raw bytes
(`spec.types.tensor_to_hex`), the type in MLIR syntax.  Fields declared with
`OMIT_DEFAULT` or `BITS` metadata (those a later kind adds) are written only
when set, so existing suites keep their bytes; `BITS` fields are bit arrays
of the expectation's type, written as hex.
"""
from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import Optional

import numpy as np

from .types import TensorType, from_bits, parse_type, tensor_from_hex, tensor_to_hex, to_bits

OMIT_DEFAULT = {"json": "omit default"}   # field metadata: written only when set
BITS = {"json": "bits"}                   # ... and a bit array of the expectation's type, as hex


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


@dataclass(eq=False)
class Expectation:
    """What one output must be (module docstring).  Equal when their JSON
    forms are: same type, same bits, same rule."""

    type: TensorType
    bits: np.ndarray
    kind: str = "exact"   # the name of a spec/kinds module; a record without one is exact
    tolerance_ulp: int = 0
    bit_exact: bool = False
    impl_defined: list = field(default_factory=list)
    alternatives: list = field(default_factory=list)
    why: str = ""
    lo: Optional[np.ndarray] = field(default=None, metadata=BITS)   # bounded: per-element bounds
    hi: Optional[np.ndarray] = field(default=None, metadata=BITS)
    statistical: Optional[dict] = field(default=None, metadata=OMIT_DEFAULT)   # statistical: the tests
    residual: Optional[dict] = field(default=None, metadata=OMIT_DEFAULT)   # residual: the property and its inputs

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
        for f in fields(self):
            if f.name in ("type", "bits", "alternatives"):
                continue
            v = getattr(self, f.name)
            if f.metadata.get("json") == BITS["json"]:
                if v is not None:
                    d[f.name] = tensor_to_hex(from_bits(v, t.element_type), t)
                continue
            if f.metadata.get("json") == OMIT_DEFAULT["json"] and v == _default(f):
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
        for f in fields(cls):
            if f.metadata.get("json") == BITS["json"] and d.get(f.name) is not None:
                d[f.name] = to_bits(tensor_from_hex(d[f.name], t), et)
        return cls(t, bits, alternatives=alts, **d)


def _default(f):
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    return MISSING
