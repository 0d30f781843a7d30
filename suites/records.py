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
    host        (optional, only where the program talks to the host: infeed,
                outfeed, send, recv) {"infeed": [tensor], "channels": {"<id>":
                [tensor]}, "log": [{"stream", "after", "expected"}]}: the
                queues the host fills and the log outfeed/send must write
                (`HostData`; oracle/host.py explains `after`)
    grid        (optional, only for a program run on a process grid: collectives,
                replica_id, partition_id) {"num_replicas", "num_partitions",
                "inputs": [[tensor]] per process, "expected": [[Expectation]] per
                process}, both lists in flattened id order (spec/grid.py); the
                case's own `inputs` and `expected` are then empty (`GridData`).
                An invalid case may carry the grid alone (the sizes, no per-process
                lists): the grid its program is compiled for

Reading a case validates it (`Case.from_json`): a damaged record is refused
with the problem named, never handed to a backend whose verdict it would
then corrupt.  The checks that need the whole suite (ids unique, op against
its file, manifest counts) are `suites/io.py`'s.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field, fields
from functools import lru_cache
from typing import Optional

import numpy as np

from ..spec.expectation import Expectation
from ..spec.quantized import is_family_name
from ..spec.types import (ELEMENT_TYPES, ElementType, TensorType, parse_type, tensor_from_hex,
                          tensor_to_hex)
from .signature import main_signature, read_type

VERDICTS = ("pass", "fail", "rejected", "unsupported", "crash", "timeout")
KINDS = ("value", "invalid", "survey")

_BY_NUMPY = {np.dtype(t.numpy): t for t in ELEMENT_TYPES.values()}   # v1.20's types too (spec/types.py `since`)


def element_type_of(array: np.ndarray) -> ElementType:
    """The spec element type a numpy/ml_dtypes array carries (unique per
    dtype: bool is i1, uint32 is ui32, ml_dtypes.int4 is si4)."""
    dt = np.asarray(array).dtype
    try:
        return _BY_NUMPY[dt]
    except KeyError:
        raise TypeError(f"no StableHLO element type for numpy dtype {dt}") from None


def tensor_type_of(array: np.ndarray) -> TensorType:
    a = np.asarray(array)
    return TensorType(tuple(int(d) for d in a.shape), element_type_of(a))


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
    host: Optional["HostData"] = None
    grid: Optional["GridData"] = None

    def input_arrays(self) -> list[np.ndarray]:
        return [v.array() for v in self.inputs]

    def process_inputs(self) -> list[list[np.ndarray]]:
        """Each process's input arrays (flattened id order); a case without
        a grid is the one process of a 1×1 grid."""
        if self.grid is None:
            return [self.input_arrays()]
        return [[v.array() for v in per] for per in self.grid.inputs]

    def to_json(self) -> str:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["inputs"] = [asdict(v) for v in self.inputs]
        if self.host is None:   # written only when set: suites without host data keep their bytes
            d.pop("host")
        else:
            d["host"] = self.host.to_json()
        if self.grid is None:   # likewise: suites without grids keep their bytes
            d.pop("grid")
        else:
            d["grid"] = self.grid.to_json()
        if self.kind == "invalid":  # value and survey cases carry expectations
            d.pop("expected")
        else:
            d.pop("violates")
            d["expected"] = [e.to_json() for e in self.expected]
        return json.dumps(d, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, line: str) -> "Case":
        """The case a suite line holds; raises ValueError naming the problem
        when the line is not a valid case record (`check_record`)."""
        try:
            d = json.loads(line)
        except ValueError as e:
            raise ValueError(f"not JSON ({e})") from None
        return cls(**check_record(d))


# ---------------------------------------------------------------------------
# Validation of a case record (its JSON form)
# ---------------------------------------------------------------------------

_FIELDS = {"id": str, "op": str, "dtype": str, "kind": str, "mlir": str, "inputs": list,
           "expected": list, "violates": (str, type(None)), "note": str, "provenance": dict, "host": dict,
           "grid": dict}
_REQUIRED = ("id", "op", "dtype", "kind", "mlir", "inputs")
_TENSOR_FIELDS = {"type", "hex"}


def _expectation_fields() -> tuple[set, list]:
    """(the keys an expectation may have, those that are bit arrays): read
    from the record when a case is checked, since a kind registered later
    brings its fields (spec/kinds)."""
    names = {"type", "hex", "alternatives"} | {f.name for f in fields(Expectation)} - {"bits"}
    return names, [f.name for f in fields(Expectation) if f.metadata.get("json") == "bits"]

_HEX = re.compile(r"[0-9a-fA-F]*")


def _json_type(v) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(v), "a number")


def _check_fields(d, allowed, required, what: str) -> None:
    """`d` is an object with the `required` keys and no others than
    `allowed` (a set, or a dict of key -> JSON type(s) to check too)."""
    if not isinstance(d, dict):
        raise ValueError(f"{what} is {_json_type(d)}, not an object")
    for k in required:
        if k not in d:
            raise ValueError(f"{what} has no {k!r}")
    if not d.keys() <= (allowed.keys() if isinstance(allowed, dict) else allowed):
        unknown = sorted(k for k in d if k not in allowed)
        raise ValueError(f"{what} has an unknown field {unknown[0]!r}")
    if isinstance(allowed, dict):
        for k, v in d.items():
            if not isinstance(v, allowed[k]):
                raise ValueError(f"{what}: {k!r} is {_json_type(v)}")


def _tensor_type(text, what: str) -> TensorType:
    if not isinstance(text, str):
        raise ValueError(f"{what}: 'type' is {_json_type(text)}, not a string")
    try:
        t = read_type(text)
    except ValueError as e:
        raise ValueError(f"{what}: {e}") from None
    if not isinstance(t, TensorType):
        raise ValueError(f"{what}: {text!r} is not a tensor type")
    return t


@lru_cache(maxsize=None)
def _element_bytes(et: ElementType) -> int:
    return np.dtype(et.bits_dtype).itemsize * (2 if et.is_complex else 1)


def check_hex(text, t: TensorType, what: str) -> None:
    """The hex of a tensor of type `t`: hex digits only, exactly the bytes
    `spec.types.to_bits` lays out for its elements."""
    if not isinstance(text, str):
        raise ValueError(f"{what}: 'hex' is {_json_type(text)}, not a string")
    want = 2 * t.num_elements * _element_bytes(t.element_type)
    if len(text) != want:
        raise ValueError(f"{what}: hex of {len(text)} digits where {t.mlir} takes {want}")
    if not _HEX.fullmatch(text):
        raise ValueError(f"{what}: hex holds a character that is not a hex digit")


def _check_tensor(d, what: str) -> TensorType:
    _check_fields(d, _TENSOR_FIELDS, ("type", "hex"), what)
    t = _tensor_type(d["type"], what)
    check_hex(d["hex"], t, what)
    return t


def _check_indices(v, n: int, what: str) -> None:
    if not isinstance(v, list) or not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n for i in v):
        raise ValueError(f"{what} must be a list of flat indices below {n}")


def _check_expectation(d, what: str) -> Expectation:
    """An expectation's JSON form (spec/expectation.py), field by field,
    before `Expectation.from_json` reads it."""
    allowed, bit_arrays = _expectation_fields()
    _check_fields(d, allowed, ("type", "hex"), what)
    t = _tensor_type(d["type"], what)
    check_hex(d["hex"], t, what)
    for name in bit_arrays:  # further bit arrays of the output's type (a kind's bounds)
        if d.get(name) is not None:
            check_hex(d[name], t, f"{what}, {name!r}")
    if not isinstance(d.get("kind", "exact"), str):
        raise ValueError(f"{what}: 'kind' must be a string")
    tol = d.get("tolerance_ulp", 0)
    if not isinstance(tol, int) or isinstance(tol, bool) or tol < 0:
        raise ValueError(f"{what}: 'tolerance_ulp' must be a non-negative integer")
    if not isinstance(d.get("bit_exact", False), bool):
        raise ValueError(f"{what}: 'bit_exact' must be true or false")
    if not isinstance(d.get("why", ""), str):
        raise ValueError(f"{what}: 'why' must be a string")
    _check_indices(d.get("impl_defined", []), t.num_elements, f"{what}: 'impl_defined'")
    alts = d.get("alternatives", [])
    if not isinstance(alts, list):
        raise ValueError(f"{what}: 'alternatives' must be a list")
    for k, a in enumerate(alts):
        where = f"{what}, alternative {k}"
        _check_fields(a, {"label", "hex", "elements"}, ("label",), where)
        if not isinstance(a["label"], str):
            raise ValueError(f"{where}: 'label' must be a string")
        if a.get("hex") is not None:
            check_hex(a["hex"], t, where)
        if a.get("elements") is not None:
            _check_indices(a["elements"], t.num_elements, f"{where}: 'elements'")
    from .kinds import REGISTRY
    if d.get("kind", "exact") not in REGISTRY:
        raise ValueError(f"{what}: unknown expectation kind {d.get('kind')!r}; known: {', '.join(sorted(REGISTRY))}")
    try:
        return Expectation.from_json(d)
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{what}: {e}") from None


def check_record(d) -> dict:
    """A case record's JSON form checked against the schema of the module
    docstring: fields and their JSON types, kind, element type, id, tensors
    (type and hex length), expectations, and agreement with @main's
    signature (inputs are its arguments; expectations its results).
    Returns the constructor arguments of `Case`; raises ValueError."""
    _check_fields(d, _FIELDS, _REQUIRED, "the case")
    d = dict(d)
    kind, op, dtype = d["kind"], d["op"], d["dtype"]
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; known: {', '.join(KINDS)}")
    if dtype not in ELEMENT_TYPES and not is_family_name(dtype):   # a quantized case names its family
        raise ValueError(f"unknown element type {dtype!r} in 'dtype'")
    if not d["id"].startswith(f"{op}/{dtype}/") or len(d["id"]) == len(op) + len(dtype) + 2:
        raise ValueError(f"id {d['id']!r} is not '{op}/{dtype}/<hash>'")
    if kind == "invalid":
        if not d.get("violates"):
            raise ValueError("an invalid case must name the constraint it violates ('violates')")
        if "expected" in d:
            raise ValueError("an invalid case carries no 'expected' outputs")
    else:
        if "expected" not in d:
            raise ValueError(f"a {kind} case has no 'expected' outputs")
        if d.get("violates") is not None:
            raise ValueError(f"a {kind} case names no constraint it violates (only invalid cases do)")
    arg_types = [_check_tensor(v, f"input {k}") for k, v in enumerate(d["inputs"])]
    d["inputs"] = [TensorValue(**v) for v in d["inputs"]]
    d["expected"] = [_check_expectation(e, f"expected output {k}") for k, e in enumerate(d.get("expected", []))]
    if "grid" not in d or kind == "invalid":   # a grid's processes are checked one by one (GridData.check)
        _check_signature(d["mlir"], arg_types, [e.type for e in d["expected"]] if kind != "invalid" else None)
    if "host" in d:
        if kind == "invalid":
            raise ValueError("an invalid case carries no 'host' data")
        if "grid" in d:
            raise ValueError("a case carries 'host' data or a 'grid', not both")
        d["host"] = HostData.check(d["host"])
    if "grid" in d:
        if kind != "invalid" and (d["inputs"] or d["expected"]):
            raise ValueError("a case with a 'grid' keeps its inputs and expected outputs per process in the "
                             "grid; its own 'inputs' and 'expected' must be empty")
        d["grid"] = GridData.check(d["grid"], kind, d["mlir"])
    return d


_STREAM = re.compile(r"outfeed|channel -?\d+")


@dataclass
class HostData:
    """The host side of a case (oracle/host.py): `infeed`, the tensors the
    host queues for infeed; `channels`, per channel id the tensors queued
    for recv; `log`, what outfeed and send must write: (stream, expected
    Expectation, indices of earlier log entries this one must follow)."""

    infeed: list = field(default_factory=list)      # TensorValue
    channels: dict = field(default_factory=dict)    # int -> [TensorValue]
    log: list = field(default_factory=list)         # (stream, Expectation, after tuple)

    def to_json(self) -> dict:
        return {"infeed": [asdict(v) for v in self.infeed],
                "channels": {str(k): [asdict(v) for v in vs] for k, vs in sorted(self.channels.items())},
                "log": [{"stream": s, "after": list(a), "expected": e.to_json()} for s, e, a in self.log]}

    @classmethod
    def check(cls, d) -> "HostData":
        """The JSON form, validated as the rest of a case is."""
        _check_fields(d, {"infeed": list, "channels": dict, "log": list}, ("infeed", "channels", "log"), "'host'")
        infeed = []
        for k, v in enumerate(d["infeed"]):
            _check_tensor(v, f"host infeed {k}")
            infeed.append(TensorValue(**v))
        channels = {}
        for key, vs in d["channels"].items():
            if not re.fullmatch(r"-?\d+", key) or not isinstance(vs, list):
                raise ValueError(f"host channel {key!r}: a channel id maps to a list of tensors")
            for k, v in enumerate(vs):
                _check_tensor(v, f"host channel {key} tensor {k}")
            channels[int(key)] = [TensorValue(**v) for v in vs]
        log = []
        for k, entry in enumerate(d["log"]):
            where = f"host log entry {k}"
            _check_fields(entry, {"stream": str, "after": list, "expected": dict}, ("stream", "after", "expected"),
                          where)
            if not _STREAM.fullmatch(entry["stream"]):
                raise ValueError(f"{where}: stream {entry['stream']!r} is not 'outfeed' or 'channel <id>'")
            _check_indices(entry["after"], k, f"{where}: 'after'")
            log.append((entry["stream"], _check_expectation(entry["expected"], where), tuple(entry["after"])))
        return cls(infeed, channels, log)

    def queues(self) -> tuple[list, dict]:
        """(infeed arrays, {channel id: arrays}): what a backend's host gets."""
        return [v.array() for v in self.infeed], {k: [v.array() for v in vs] for k, vs in self.channels.items()}


@dataclass
class GridData:
    """The process grid of a case (spec/grid.py): `num_replicas` ×
    `num_partitions` processes, each with its own inputs and expected
    outputs — `inputs[i]` ([TensorValue]) and `expected[i]` ([Expectation])
    belong to the process of flattened id i.  An invalid case holds the
    grid alone (both lists empty): the grid its program is compiled for."""

    num_replicas: int
    num_partitions: int
    inputs: list = field(default_factory=list)     # per process: [TensorValue]
    expected: list = field(default_factory=list)   # per process: [Expectation]

    @property
    def size(self) -> int:
        return self.num_replicas * self.num_partitions

    @property
    def shape(self):
        """The `spec.grid.Grid`."""
        from ..spec.grid import Grid
        return Grid(self.num_replicas, self.num_partitions)

    def process_label(self, i: int) -> str:
        """How verdicts and reports name the process of flattened id i."""
        r, p = divmod(i, self.num_partitions)
        return f"process {i} (replica {r}, partition {p})"

    def to_json(self) -> dict:
        return {"num_replicas": self.num_replicas, "num_partitions": self.num_partitions,
                "inputs": [[asdict(v) for v in per] for per in self.inputs],
                "expected": [[e.to_json() for e in per] for per in self.expected]}

    @classmethod
    def check(cls, d, kind: str, mlir: str) -> "GridData":
        """The JSON form, validated as the rest of a case is: the grid's
        sizes (ui32, at least 1, at most `spec.grid.MAX_PROCESSES`
        processes), one input list and one expected list per process, each
        agreeing with @main's signature."""
        from ..spec.grid import MAX_PROCESSES
        _check_fields(d, {"num_replicas": int, "num_partitions": int, "inputs": list, "expected": list},
                      ("num_replicas", "num_partitions"), "'grid'")
        for name in ("num_replicas", "num_partitions"):
            v = d[name]
            if isinstance(v, bool) or not 1 <= v < 2 ** 32:
                raise ValueError(f"'grid': {name!r} must be a ui32 of at least 1, not {v!r}")
        n = d["num_replicas"] * d["num_partitions"]
        if n > MAX_PROCESSES:
            raise ValueError(f"'grid': {d['num_replicas']}×{d['num_partitions']} is {n} processes; "
                             f"a case runs on at most {MAX_PROCESSES}")
        inputs, expected = d.get("inputs", []), d.get("expected", [])
        if kind == "invalid":
            if inputs or expected:
                raise ValueError("'grid' of an invalid case holds no inputs or expected outputs")
            return cls(d["num_replicas"], d["num_partitions"])
        for what, lists in (("inputs", inputs), ("expected", expected)):
            if len(lists) != n:
                raise ValueError(f"'grid': {len(lists)} {what} lists for the {n} processes of a "
                                 f"{d['num_replicas']}×{d['num_partitions']} grid")
        per_inputs, per_expected, first = [], [], None
        for i in range(n):
            if not isinstance(inputs[i], list) or not isinstance(expected[i], list):
                raise ValueError(f"'grid': the inputs and expected outputs of process {i} must be lists")
            arg_types = [_check_tensor(v, f"grid process {i} input {k}") for k, v in enumerate(inputs[i])]
            exps = [_check_expectation(e, f"grid process {i} expected output {k}") for k, e in enumerate(expected[i])]
            types = (arg_types, [e.type for e in exps])
            if first is None:
                try:
                    _check_signature(mlir, *types)
                except ValueError as e:
                    raise ValueError(f"grid process {i}: {e}") from None
                first = types
            elif types != first:   # one program for every process: one signature
                which = "inputs" if types[0] != first[0] else "expected outputs"
                raise ValueError(f"grid process {i}: its {which} have other types than process 0's")
            per_inputs.append([TensorValue(**v) for v in inputs[i]])
            per_expected.append(exps)
        return cls(d["num_replicas"], d["num_partitions"], per_inputs, per_expected)


def _check_signature(mlir: str, inputs: list, outputs: list | None) -> None:
    sig = main_signature(mlir)
    if sig is None:
        raise ValueError("the program has no @main signature this reader understands")
    args, results = sig
    if args != inputs:
        raise ValueError(f"@main takes ({', '.join(t.mlir for t in args)}); the case's inputs are "
                         f"({', '.join(t.mlir for t in inputs)})")
    if outputs is not None and results != outputs:
        raise ValueError(f"@main returns ({', '.join(t.mlir for t in results)}); the case expects "
                         f"({', '.join(t.mlir for t in outputs)})")


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
    # Why the elements failed (suites/causes.py): cause -> failing elements; empty
    # for a pass and for failures that are not element-wise (crash, rejected, …).
    causes: dict = field(default_factory=dict)
    # Up to 5 failing elements: [flat index, expected repr, actual repr, ulp or None, cause].
    mismatches: list = field(default_factory=list)
    # max_ulp over the elements where ULP means something (passed, or "out of
    # tolerance"); max_ulp stays the raw figure over every element.
    meaningful_ulp: Optional[float] = None

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
