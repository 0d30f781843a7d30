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
    expected    [Expectation] for value and survey cases (spec/expectation.py:
                the record the oracle states and suites/compare.py checks)
    violates    "<op>_c<N>" for invalid cases
    note        what the case is about (e.g. "special values")
    provenance  {"seed", "section", "generator"}
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, fields
from typing import Optional

import numpy as np

from ..spec.expectation import Expectation
from ..spec.types import TensorType, parse_type, tensor_from_hex, tensor_to_hex

VERDICTS = ("pass", "fail", "rejected", "unsupported", "crash", "timeout")


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
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["inputs"] = [asdict(v) for v in self.inputs]
        if self.kind == "invalid":  # value and survey cases carry expectations
            d.pop("expected")
        else:
            d.pop("violates")
            d["expected"] = [e.to_json() for e in self.expected]
        return json.dumps(d, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, line: str) -> "Case":
        d = json.loads(line)
        d["inputs"] = [TensorValue(**v) for v in d["inputs"]]
        d["expected"] = [Expectation.from_json(e) for e in d.get("expected", [])]
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
