"""The records on disk: cases, expectations, verdicts; their JSON form.

A suite is a folder: `manifest.json` and one JSON-lines file per op
(`<op>.jsonl`), one case per line.  JSON and hex only: loading a suite never
executes anything.  Tensors are a type (MLIR syntax) plus the hex of their
little-endian raw bits in row-major order (layout: `spec.types.to_bits`).

A case line:
    id          "<op>/<dtype>/<hash>", stable: the hash covers program and inputs
    op, dtype   the op mnemonic and the case's principal element type
    kind        "value" (run it, compare) | "invalid" (must be rejected) |
                "survey" (run it, report which known alternative it matched; not scored)
    mlir        the program; @main takes the inputs as arguments
    inputs      [{"type", "hex"}]
    expected    [Expectation] for value and survey cases
    violates    "<op>_c<N>" for invalid cases
    note        what the case is about (e.g. "special values")
    provenance  {"seed", "section", "generator"}
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Optional

import numpy as np

from ..spec.types import TensorType, from_bits, parse_type, raw_bytes

VERDICTS = ("pass", "fail", "rejected", "unsupported", "crash", "timeout")


def tensor_to_hex(array: np.ndarray, t: TensorType) -> str:
    return raw_bytes(array, t.element_type).hex()


def tensor_from_hex(hexstr: str, t: TensorType) -> np.ndarray:
    et = t.element_type
    raw = np.frombuffer(bytes.fromhex(hexstr), dtype=et.bits_dtype.newbyteorder("<"))
    shape = tuple(t.shape) + ((2,) if et.is_complex else ())
    return from_bits(raw.reshape(shape), et)


@dataclass
class TensorValue:
    type: str
    hex: str

    @property
    def tensor_type(self) -> TensorType:
        return parse_type(self.type)

    def array(self) -> np.ndarray:
        return tensor_from_hex(self.hex, self.tensor_type)

    @classmethod
    def of(cls, array: np.ndarray, t: TensorType) -> "TensorValue":
        return cls(t.mlir, tensor_to_hex(array, t))


@dataclass
class Alternative:
    """An implementation-defined alternative: a whole tensor whose elements at
    the expectation's `impl_defined` positions are this alternative's values;
    or, with `hex` None, "any value" at the flat indices `elements` (the spec
    leaves those results open without naming candidates)."""

    label: str
    hex: Optional[str]
    elements: Optional[list] = None


@dataclass
class Expectation:
    """What one output must be.

    kind "exact": bit pattern per element (NaN matches any NaN unless
    `bit_exact`; signed zero significant).  kind "ulp": within
    `tolerance_ulp` ULPs (per component for complex) of the correctly rounded
    reference `hex`.  Elements listed in `impl_defined` (flat row-major
    indices) may instead equal the same element of any `alternatives` entry.
    """

    type: str
    hex: str
    kind: str = "exact"
    tolerance_ulp: int = 0
    bit_exact: bool = False
    impl_defined: list = field(default_factory=list)
    alternatives: list = field(default_factory=list)
    why: str = ""

    @property
    def tensor_type(self) -> TensorType:
        return parse_type(self.type)

    def array(self) -> np.ndarray:
        return tensor_from_hex(self.hex, self.tensor_type)


@dataclass
class Case:
    id: str
    op: str
    dtype: str
    kind: str
    mlir: str
    inputs: list
    expected: list = field(default_factory=list)
    violates: Optional[str] = None
    note: str = ""
    provenance: dict = field(default_factory=dict)

    def input_arrays(self) -> list[np.ndarray]:
        return [v.array() for v in self.inputs]

    def to_json(self) -> str:
        d = asdict(self)
        if self.kind == "invalid":  # value and survey cases carry expectations
            d.pop("expected")
        else:
            d.pop("violates")
        return json.dumps(d, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, line: str) -> "Case":
        d = json.loads(line)
        d["inputs"] = [TensorValue(**v) for v in d["inputs"]]
        exp = []
        for e in d.get("expected", []):
            e = dict(e)
            e["alternatives"] = [Alternative(**a) for a in e.get("alternatives", [])]
            exp.append(Expectation(**e))
        d["expected"] = exp
        return cls(**d)


def case_id(op: str, dtype: str, mlir: str, inputs: list[TensorValue], salt: str = "") -> str:
    h = hashlib.sha256()
    for part in (mlir, *(v.type + ":" + v.hex for v in inputs), salt):
        h.update(part.encode())
        h.update(b"\0")
    return f"{op}/{dtype}/{h.hexdigest()[:12]}"


@dataclass
class Verdict:
    """The result of one case on one backend, as results.json stores it."""

    id: str
    op: str
    dtype: str
    kind: str
    verdict: str
    detail: str = ""
    max_ulp: Optional[float] = None
    impl_defined: list = field(default_factory=list)
    seconds: float = 0.0
    violates: Optional[str] = None

    @property
    def conformant(self) -> Optional[bool]:
        return conformant(self.kind, self.verdict)


def conformant(kind: str, verdict: str) -> Optional[bool]:
    """Does this verdict count for conformance?  None: it does not count either
    way — the backend declared the case unsupported, or the case is a
    `survey` (behaviour the spec leaves implementation-defined, e.g. gather
    with out-of-bounds indices: what the backend does is reported against the
    known alternatives, never scored)."""
    if verdict == "unsupported" or kind == "survey":
        return None
    if kind == "invalid":
        return verdict == "rejected"
    return verdict == "pass"
