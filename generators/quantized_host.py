"""Cases on quantized tensors for the ops that talk to the host (StableHLO v1.20): a stream of its own.

v1.20 lets send and outfeed take, and recv and infeed produce, quantized
tensors ("variadic number of tensors or quantized tensors", per-axis ones
included).  None of their Semantics dequantizes: the data travels as it is,
so a quantized tensor's storage values reach the host's log (send,
outfeed) or the program (recv, infeed) unchanged — exact
(`Quantization(meaning=STORAGE)` in spec/ops/send.py; the oracle's host
model, oracle/host.py, moves storage arrays).

These ops list their instances (`SideEffect.cases`) and their cases are
built with the host queues they read (generators/suite.py's declared path),
which generators/quantized.py — skeletons and declared examples — cannot
build.  So this stream takes the op's own listed value instances, one per
payload layout, puts a quantized type in place of every tensor's element
type, and hands each to the declared path's builder (`build`, passed in by
suite.py: this module does not import it); the case is then named by its
quantized family, as every quantized case is (`quantized.as_family`'s
rule).  Its generator is seeded by (seed, op, "quantized host"), and its
cases come after every other case of the op, so those keep their bytes.

Types: generators/quantized.py's per-tensor operand types (i8, u8, i4, i16
storage; f32, bf16, f16 expressed) and its per-axis ones, placed where the
tensor's shape has the quantized axis's size.  Types with storage bounds
narrower than the storage type (`i8<-127:127>`) are left out: the values
drawn for a payload cover the whole storage type, and a storage value
outside the bounds is no value of the type.
"""
from __future__ import annotations

import dataclasses
import json
import zlib
from typing import Callable

import numpy as np

from ..spec.dsl import OpSpec
from ..spec.quantized import QuantizedType
from ..spec.quantized import family_name as family
from ..spec.types import TensorType
from ..suites.records import Case, case_id
from .quantized import PAIRINGS, PER_AXIS


def _full_range(q: QuantizedType) -> bool:
    st = q.storage_type
    return int(q.storage_min) == st.min_value and int(q.storage_max) == st.max_value


TYPES: tuple[QuantizedType, ...] = tuple(q for q in [p.operand for p in PAIRINGS] + list(PER_AXIS) if _full_range(q))


def _fits(q: QuantizedType, t: TensorType) -> bool:
    """A per-axis type fits a tensor whose quantized axis has one scale per element; a per-tensor type any."""
    if q.quantization_dimension is None:
        return True
    d = q.quantization_dimension
    return d < len(t.shape) and t.shape[d] == len(q.scales)


def _slots(inst) -> list:
    """The instance's operands and results, each a list (variadic ones as they are)."""
    out = []
    for table in (inst.operands, inst.results):
        out += [v if isinstance(v, list) else [v] for v in table.values()]
    return out


def _tensors(inst) -> list[TensorType]:
    return [t for slot in _slots(inst) for t in slot if isinstance(t, TensorType)]


def _payload_first(inst) -> bool:
    """Every list holds tensors but for its last member (the payload first, a token last): the form the
    seed's and v1.20's readings both take as valid — a token among the payload is the seed's alone
    (v1.20's infeed C2, spec/ops/infeed.py)."""
    return all(isinstance(t, TensorType) for slot in _slots(inst) for t in slot[:-1])


def _retyped(spec: OpSpec, inst, q: QuantizedType):
    def one(t):
        return TensorType(t.shape, q) if isinstance(t, TensorType) else t

    def each(table):
        return {k: [one(t) for t in v] if isinstance(v, list) else one(v) for k, v in table.items()}

    return spec.instance(each(inst.operands), dict(inst.attributes), each(inst.results), grid=inst.grid)


def _layout(inst) -> tuple:
    return tuple(tuple(t.shape if isinstance(t, TensorType) else "token" for t in slot) for slot in _slots(inst))


def layouts(spec: OpSpec, rng) -> list:
    """The op's listed valid instances holding tensors, one per payload layout, in the order listed."""
    seen, out = set(), []
    for _note, kind, inst, _violates in spec.semantics.cases(spec, rng):
        if kind != "value" or not _tensors(inst) or not _payload_first(inst):
            continue
        key = _layout(inst)
        if key not in seen:
            seen.add(key)
            out.append(inst)
    return out


def instances(spec: OpSpec, rng) -> list[tuple[str, QuantizedType, object]]:
    """(note, type, instance) per quantized type: the next listed layout it fits,
    every tensor of it of that type."""
    base = layouts(spec, rng)
    out = []
    for i, q in enumerate(TYPES):
        fits = [inst for inst in base if all(_fits(q, t) for t in _tensors(inst))]
        if not fits:
            continue
        inst = fits[i % len(fits)]
        n = len(_tensors(inst))
        out.append((f"{n} quantized tensor{'s' if n != 1 else ''} of {q.mlir}: storage values move unchanged",
                    q, _retyped(spec, inst, q)))
    return out


def as_family(case: Case, q: QuantizedType) -> Case:
    """The case named by the quantized family of its tensors' type `q`
    (dtype, and so its id, salted as the declared path salts it), marked as
    v1.20's."""
    fam = family(q)
    salt = case.kind + (json.dumps(case.host.to_json(), sort_keys=True) if case.host is not None else "")
    return dataclasses.replace(case, dtype=fam, id=case_id(case.op, fam, case.mlir, case.inputs, salt=salt),
                               provenance={**case.provenance, "spec": "v1.20"})


def cases(spec: OpSpec, seed: int, build: Callable) -> list[Case]:
    """The op's quantized cases (module docstring); [] for an op that takes
    no quantized tensors or does not list its instances.  `build(spec,
    note, kind, inst, violates, rng, seed)` makes one case or None."""
    if spec.quantization is None or getattr(spec.semantics, "cases", None) is None:
        return []
    rng = np.random.default_rng([seed, zlib.crc32(spec.mnemonic.encode()), zlib.crc32(b"quantized host")])
    out = []
    for note, q, inst in instances(spec, rng):
        c = build(spec, note, "value", inst, None, rng, seed)
        if c is not None:
            out.append(as_family(c, q))
    return out
