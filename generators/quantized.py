"""Cases on quantized tensors (StableHLO v1.20): a generator stream of its own.

A quantized type carries numbers (scales, zero points, storage bounds), so
it is no member of the type tables the skeletons enumerate; the cases here
are built from a fixed set of quantized types (`TYPES`) chosen for what
each exercises, on every op that declares how it takes quantized tensors
(`OpSpec.quantization`):

* element-wise ops defined by `dequantize_op_quantize`: @main takes the
  quantized operands as storage values and returns the quantized result —
  every storage value of an 8-bit (or narrower) operand type, a grid of
  pairs for two operands — so the op's whole quantized table is judged;
* uniform_quantize from float values (the special values, ties of the
  rounding, values past the storage bounds, random) and from another
  quantized type (requantization), per-tensor and per-axis;
  uniform_dequantize on every storage value;
* one invalid program per quantization constraint the op states (v1.20's
  numbering): a result of another storage or expressed type (the
  baseline-type C1 of the element-wise ops), add's C2–C7, uniform_quantize's
  and uniform_dequantize's C1–C2.

Placed after every other stream of an op, so the op's other cases keep
their bytes.
"""
from __future__ import annotations

import dataclasses
import zlib
from dataclasses import dataclass

import numpy as np

from ..spec.dsl import OpSpec
from ..spec.dsl.quantization import DEQUANTIZE_OP_QUANTIZE, OWN, STORAGE
from ..spec.quantized import QuantizedType, parse_quantized_type
from ..spec.quantized import family_name as family
from ..spec.types import TensorType, element_type
from ..suites.records import Case, TensorValue, case_id
from ..suites.signature import main_signature
from . import emit, expect
from .skeleton import Skeleton, valid
from .v1_20_types import covering

Q = parse_quantized_type


@dataclass(frozen=True)
class Pairing:
    """An operand type and a result type of the same baseline (v1.20's
    element-wise C1), and what the pair exercises."""
    operand: QuantizedType
    result: QuantizedType
    why: str


PAIRINGS = (
    Pairing(Q("!quant.uniform<i8:f32, 0.1:-3>"), Q("!quant.uniform<i8:f32, 0.05:2>"),
            "i8 storage, f32 scales that f32 cannot hold exactly, zero points on both sides of 0"),
    Pairing(Q("!quant.uniform<u8:f32, 0.0078125:128>"), Q("!quant.uniform<u8:f32, 0.015625:100>"),
            "u8 storage, power-of-two scales (every step exact), zero points in the middle"),
    Pairing(Q("!quant.uniform<i8<-127:127>:f32, 0.25>"), Q("!quant.uniform<i8<-127:127>:f32, 0.125:-1>"),
            "narrowed storage bounds (symmetric int8): clamping at -127, not -128"),
    Pairing(Q("!quant.uniform<i4:f32, 0.5:1>"), Q("!quant.uniform<i4:f32, 0.375:-2>"),
            "4-bit storage: saturation everywhere"),
    Pairing(Q("!quant.uniform<i16:f32, 0.001:0>"), Q("!quant.uniform<i16:f32, 0.0025:7>"),
            "i16 storage: fine scales, rounding decided deep in the f32 quotient"),
    Pairing(Q("!quant.uniform<i8:bf16, 0.1:0>"), Q("!quant.uniform<i8:bf16, 0.0625:-5>"),
            "bf16 expressed type: each float step rounded to 8 bits of precision"),
    Pairing(Q("!quant.uniform<i8:f16, 0.03125:-10>"), Q("!quant.uniform<i8:f16, 0.2:3>"),
            "f16 expressed type"),
)

PER_AXIS = (Q("!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>"), Q("!quant.uniform<i8:f32:0, {0.1:-20,0.2:-30}>"),
            Q("!quant.uniform<i8:f32:1, {0.05:0,0.25:1,1.0:-7}>"))

GRID_SIDE = 32   # per operand of a two-operand op: a 32×32 grid of storage values (all of them for 4-bit types)
I16_SAMPLE = 1024


def _storage_values(q: QuantizedType, rng, n: int | None = None) -> np.ndarray:
    """Every storage value of `q`'s storage type (8 bits or fewer), else its
    extremes, the bounds and zero point's neighbours and a random sample."""
    st = q.storage_type
    if st.bits <= 8 and n is None:
        return np.arange(st.min_value, st.max_value + 1, dtype=np.int64)
    n = n or I16_SAMPLE
    fixed = {st.min_value, st.max_value, int(q.storage_min), int(q.storage_max), 0, -1, 1}
    fixed |= {int(q.zero_points[0]) + d for d in (-1, 0, 1)}
    fixed = sorted(v for v in fixed if st.min_value <= v <= st.max_value)
    drawn = rng.integers(st.min_value, st.max_value + 1, size=max(0, n - len(fixed)))
    return np.concatenate([np.array(fixed, dtype=np.int64), drawn])


def _grid(q: QuantizedType, rng) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of storage values: every value when the storage has 4 bits or
    fewer, else `GRID_SIDE` values each (extremes, zero point, random)."""
    st = q.storage_type
    if st.bits <= 4:
        side = np.arange(st.min_value, st.max_value + 1, dtype=np.int64)
    else:
        side = _storage_values(q, rng, GRID_SIDE)
    a, b = np.meshgrid(side, side, indexing="ij")
    return a.reshape(-1), b.reshape(-1)


def _tensor(shape, et) -> TensorType:
    return TensorType(tuple(shape), et)


def _case(spec: OpSpec, inst, arrays, kind: str, seed: int, note: str, dtype: str, expect_fn,
          violates: str | None = None) -> Case | None:
    from .suite import GENERATOR_VERSION   # (suite.py runs this stream: imported when a case is made)
    mlir = emit.program(spec, inst)
    tvs = [TensorValue.of(a, t) for a, t in zip(arrays, emit.operand_types(spec, inst, arguments_only=True))]
    try:
        expected = expect_fn(spec, inst, mlir, arrays) if kind == "value" else []
    except expect.Unspecified:
        return None
    if kind == "invalid" and expect_fn is oracle_expectations and expect.rejection(mlir) != violates:
        return None   # the text cannot say what the instance meant: no test of its constraint
    return Case(id=case_id(spec.mnemonic, dtype, mlir, tvs, salt=kind), op=spec.mnemonic, dtype=dtype, kind=kind,
                mlir=mlir, inputs=tvs, expected=expected, violates=violates, note=note,
                provenance={"seed": seed, "section": spec.mnemonic, "generator": GENERATOR_VERSION,
                            "spec": "v1.20"})


def oracle_expectations(spec, inst, mlir, arrays):
    return expect.expected_outputs(mlir, arrays)


def _storage_array(values: np.ndarray, q: QuantizedType) -> np.ndarray:
    return np.asarray(values).astype(q.storage_type.numpy)


# ---------------------------------------------------------------- element-wise ops
def _elementwise(spec: OpSpec, seed: int, rng, expect_fn) -> list:
    """Value cases over every pairing whose expressed type the op's table
    takes, and one invalid case per way to break the op's C1 (another
    storage type, another expressed type)."""
    names_in = [o.name for o in spec.operands]
    out = []
    for p in PAIRINGS:
        if any(p.operand.expressed_type not in o.types_v1_20 for o in spec.operands):
            continue
        if len(names_in) == 1:
            args = [_storage_array(_storage_values(p.operand, rng), p.operand)]
        else:
            lhs, rhs = _grid(p.operand, rng)
            args = [_storage_array(lhs, p.operand), _storage_array(rhs, p.operand)]
        n = args[0].shape[0]
        ops = {name: _tensor((n,), p.operand) for name in names_in}
        inst = spec.instance(ops, {}, {spec.results[0].name: _tensor((n,), p.result)})
        if spec.violated(inst) or spec.types_outside_tables(inst):
            continue
        out.append(_case(spec, inst, args, "value", seed, f"dequantize_op_quantize: {p.why}", family(p.operand),
                         expect_fn))
    out += _elementwise_invalid(spec, seed, rng, expect_fn)
    return out


def _elementwise_invalid(spec: OpSpec, seed: int, rng, expect_fn) -> list:
    p = PAIRINGS[0]
    names_in = [o.name for o in spec.operands]
    other_storage = Q("!quant.uniform<i16:f32, 0.05:2>")
    other_expressed = Q("!quant.uniform<i8:f16, 0.05:2>")
    out = []
    label = f"{spec.mnemonic}_c1"
    for result, what in ((other_storage, "a result of another storage type"),
                         (other_expressed, "a result of another expressed type")):
        ops = {name: _tensor((4,), p.operand) for name in names_in}
        inst = spec.instance(ops, {}, {spec.results[0].name: _tensor((4,), result)})
        if spec.violated(inst) != [label] or spec.types_outside_tables(inst):
            continue
        args = [_storage_array(rng.integers(-10, 10, size=4), p.operand) for _ in names_in]
        out.append(_case(spec, inst, args, "invalid", seed, f"violates {label} ({what}: baseline types differ)",
                         family(p.operand), expect_fn, violates=label))
    return out


# ---------------------------------------------------------------- quantization constraints, per-axis values
def _candidate_types() -> list[tuple]:
    """(lhs, rhs, result) element types that break one quantization clause
    or another (v1.20's "if the operation uses quantized tensors"): a float
    operand, another storage or expressed type, per-axis and per-tensor
    mixed, per-axis along different dimensions — searched for one that
    breaks each of an op's `quantization.constraints` alone."""
    a = Q("!quant.uniform<i8:f32, 0.1:-3>")
    axis0 = Q("!quant.uniform<i8:f32:0, {0.1:-3,0.2:0}>")
    axis1 = Q("!quant.uniform<i8:f32:1, {0.1:-3,0.2:0}>")
    return [
        (a, element_type("f32"), a, "a float operand beside quantized ones"),
        (a, Q("!quant.uniform<i16:f32, 0.1:-3>"), a, "another storage type"),
        (a, Q("!quant.uniform<i8:f16, 0.1:-3>"), a, "another expressed type"),
        (a, a, axis0, "per-tensor operands, per-axis result"),
        (axis0, a, axis1, "the first operand per-axis along 0, the result along 1"),
        (a, axis0, axis1, "the second operand per-axis along 0, the result along 1"),
    ]


def _quantization_invalid(spec: OpSpec, seed: int, rng, expect_fn) -> list:
    """One program breaking each of the op's quantization constraints alone
    (two operands and a result: the only ops that state such clauses so far)."""
    names = [o.name for o in spec.operands]
    if not spec.quantization.constraints or len(names) != 2:
        return []
    shape = (2, 2)
    out = []
    for c in spec.quantization.constraints:
        label = c.__name__
        for lt, rt, res, what in _candidate_types():
            inst = spec.instance({names[0]: _tensor(shape, lt), names[1]: _tensor(shape, rt)}, {},
                                 {spec.results[0].name: _tensor(shape, res)})
            if spec.violated(inst) != [label]:
                continue
            args = [np.asarray(rng.integers(-5, 5, size=shape)).astype(t.numpy) for t in (lt, rt)]
            out.append(_case(spec, inst, args, "invalid", seed, f"violates {label} ({what})", family(lt), expect_fn,
                             violates=label))
            break
    return out


def _per_axis_values(spec: OpSpec, seed: int, rng, expect_fn) -> list:
    """The op on per-axis quantized tensors, where its table takes them
    ("quantized tensor"): operands along dimension 0 with their own scales."""
    if spec.quantization.per_axis is not True:   # every operand and the result per-axis: only where all may be
        return []
    names = [o.name for o in spec.operands]
    shape = (2, 64)
    types = [PER_AXIS[k % 2] for k in range(len(names))]
    args = [np.asarray(rng.integers(-128, 128, size=shape)).astype(np.int8) for _ in names]
    inst = spec.instance({n: _tensor(shape, t) for n, t in zip(names, types)}, {},
                         {spec.results[0].name: _tensor(shape, PER_AXIS[0])})
    if spec.violated(inst) or spec.types_outside_tables(inst):
        return []
    return [_case(spec, inst, args, "value", seed, "per-axis operands and result (quantization dimension 0)",
                  family(PER_AXIS[0]), expect_fn)]


# ---------------------------------------------------------------- uniform_quantize / uniform_dequantize
def _float_values(et, q: QuantizedType, rng) -> np.ndarray:
    """Float inputs of `quantize`: specials, ties of the rounding (k + ½
    scales from the zero point), values past both storage bounds, random."""
    scale = float(q.scales[0])
    zp = int(q.zero_points[0])
    ties = [(k + 0.5 - zp) * scale for k in range(-4, 4)]
    past = [(int(q.storage_min) - zp - 3) * scale, (int(q.storage_max) - zp + 3) * scale]
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30]
    drawn = rng.uniform((int(q.storage_min) - zp - 8) * scale, (int(q.storage_max) - zp + 8) * scale, size=200)
    return np.array(specials + ties + past + drawn.tolist(), dtype=np.float64).astype(et.numpy)


def _uniform_quantize(spec: OpSpec, seed: int, rng, expect_fn) -> list:
    out = []
    for p in PAIRINGS:
        et = p.operand.expressed_type
        x = _float_values(et, p.operand, rng)
        inst = spec.instance({"operand": _tensor(x.shape, et)}, {}, {"result": _tensor(x.shape, p.operand)})
        out.append(_case(spec, inst, [x], "value", seed, f"quantize from {et.mlir}: {p.why}", family(p.operand),
                         expect_fn))
        s = _storage_array(_storage_values(p.operand, rng), p.operand)
        inst = spec.instance({"operand": _tensor(s.shape, p.operand)}, {}, {"result": _tensor(s.shape, p.result)})
        out.append(_case(spec, inst, [s], "value", seed, f"requantize (dequantize, then quantize): {p.why}",
                         family(p.operand), expect_fn))
    x = np.array([[4.0, 15.0], [-3.3, 1e9]], dtype=np.float32).T.copy()   # the spec's example, then more
    inst = spec.instance({"operand": _tensor(x.shape, element_type("f32"))}, {}, {"result": _tensor(x.shape, PER_AXIS[0])})
    out.append(_case(spec, inst, [x], "value", seed, "per-axis quantize (the spec's example type)",
                     family(PER_AXIS[0]), expect_fn))
    s = np.array([[10, 10], [-128, 127]], dtype=np.int8).T.copy()
    inst = spec.instance({"operand": _tensor(s.shape, PER_AXIS[0])}, {}, {"result": _tensor(s.shape, PER_AXIS[1])})
    out.append(_case(spec, inst, [s], "value", seed, "per-axis requantize (the spec's example types)",
                     family(PER_AXIS[0]), expect_fn))
    f32, a = element_type("f32"), PAIRINGS[0].operand
    for label, operand, result, what in (
            ("uniform_quantize_c1", _tensor((4,), f32), _tensor((2, 2), a), "result of another shape"),
            ("uniform_quantize_c2", _tensor((4,), element_type("f16")), _tensor((4,), a),
             "f16 operand, f32 expressed result")):
        inst = spec.instance({"operand": operand}, {}, {"result": result})
        if spec.violated(inst) != [label]:
            continue
        arr = np.zeros(operand.shape, dtype=operand.element_type.numpy)
        out.append(_case(spec, inst, [arr], "invalid", seed, f"violates {label} ({what})", family(a), expect_fn,
                         violates=label))
    return out


def _uniform_dequantize(spec: OpSpec, seed: int, rng, expect_fn) -> list:
    out = []
    for q in [p.operand for p in PAIRINGS] + [PER_AXIS[0]]:
        if q.is_per_axis:
            s = np.array([[10, -128, 127, 0], [10, -128, 127, -20]], dtype=np.int8)   # dimension 0: 2 slices
        else:
            s = _storage_array(_storage_values(q, rng), q)
        inst = spec.instance({"operand": _tensor(s.shape, q)}, {}, {"result": _tensor(s.shape, q.expressed_type)})
        out.append(_case(spec, inst, [s], "value", seed, "dequantize every storage value" if q.is_per_tensor
                         else "per-axis dequantize (the spec's example type)", family(q), expect_fn))
    a = PAIRINGS[0].operand
    for label, result, what in (("uniform_dequantize_c1", _tensor((2, 2), element_type("f32")), "result of another shape"),
                                ("uniform_dequantize_c2", _tensor((4,), element_type("f16")), "result not of the expressed type")):
        inst = spec.instance({"operand": _tensor((4,), a)}, {}, {"result": result})
        if spec.violated(inst) != [label]:
            continue
        out.append(_case(spec, inst, [np.zeros(4, dtype=np.int8)], "invalid", seed, f"violates {label} ({what})",
                         family(a), expect_fn, violates=label))
    return out




def cases(spec: OpSpec, seed: int, expect_fn=None) -> list:
    """The op's cases on quantized tensors (module docstring); [] for an op
    that takes none."""
    q = spec.quantization
    if q is None:
        return []
    expect_fn = expect_fn or oracle_expectations
    rng = np.random.default_rng([seed, zlib.crc32(spec.mnemonic.encode()), zlib.crc32(b"quantized")])
    if q.meaning == OWN:   # into quantized tensors (uniform_quantize) or out of them (uniform_dequantize)
        made = (_uniform_quantize if q.admits(spec.results[0].name) else _uniform_dequantize)(spec, seed, rng, expect_fn)
    elif q.meaning == DEQUANTIZE_OP_QUANTIZE:
        made = (_elementwise(spec, seed, rng, expect_fn) + _per_axis_values(spec, seed, rng, expect_fn)
                + _quantization_invalid(spec, seed, rng, expect_fn))
    else:
        made = []
    return [c for c in made if c is not None]


# ---------------------------------------------------------------- ops with structure: the seed's skeletons
STAND_IN = element_type("f32")   # the seed's skeletons in f32 are those a quantized type takes the place of
# i8 and u8 storage, per-tensor; then zero point 0 (dot_general's C15: a weight's zero point is 0)
SUBSTITUTES = (PAIRINGS[0].operand, PAIRINGS[1].operand, Q("!quant.uniform<i8:f32, 0.05>"))


def needs_skeletons(spec: OpSpec, made: list) -> bool:
    """Whether the op's quantized cases come from the seed's skeletons
    (`skeletons`): data movement, and the ops defined by
    dequantize_op_quantize whose structure the element-wise stream cannot
    build (attributes, a predicate, an i1 result: compare, select,
    is_finite, reduce_precision)."""
    q = spec.quantization
    if q is None or q.meaning == OWN:
        return False
    return q.meaning == STORAGE or not any(c.kind == "value" for c in made)


def _type_clauses_hold(spec: OpSpec, skel: Skeleton) -> bool:
    """Whether the op's quantization clauses that read types alone hold for
    the skeleton's element types (dot_general's C15: a quantized rhs has
    zero points 0): the solver sees only the op's own constraints, so a
    substitution these refuse has no instance.  A clause that reads more
    than types (an attribute) cannot be decided here and does not refuse.
    A result the skeleton leaves to inference takes the first operand's
    element type, as inference gives it where the program states none."""
    names = [o.name for o in spec.operands if not o.constant]
    if len(names) != len(skel.operand_types) or any(o.variadic for o in spec.operands):
        return True
    stated = dict(skel.result_types)
    inst = spec.instance({n: TensorType((), t) for n, t in zip(names, skel.operand_types)}, {},
                         {r.name: TensorType((), stated.get(r.name, skel.operand_types[0])) for r in spec.results})
    for c in spec.quantization.constraints:
        try:
            if c(inst) is False:
                return False
        except (AttributeError, IndexError, KeyError, TypeError, ValueError):
            continue
    return True


def skeletons(spec: OpSpec, seed_skeletons: list[Skeleton]) -> list[tuple[str, Skeleton]]:
    """(what, skeleton): each of the op's seed skeletons in f32 with f32
    replaced by a per-tensor quantized type (`SUBSTITUTES`) wherever it
    stands — operands and results alike, index operands and predicates
    untouched — kept where the tables and the constraints accept it;
    per type, those covering every attribute value (v1_20_types.covering).
    Then the hybrid forms: f32 replaced in one operand alone (dot_general's
    float lhs times a quantized rhs), where the constraints accept that."""
    out = []
    for q in SUBSTITUTES:
        made, seen = [], set()
        for skel in seed_skeletons:
            ops = tuple(q if t == STAND_IN else t for t in skel.operand_types)
            res = tuple((n, q if t == STAND_IN else t) for n, t in skel.result_types)
            new = Skeleton(skel.op, ops, res, skel.attrs, skel.regions)
            if new == skel or new in seen or not _type_clauses_hold(spec, new) or not valid(spec, new):
                continue
            seen.add(new)
            made.append((f"quantized: {q.mlir} in place of f32", new))
        out += covering(made)
    q = SUBSTITUTES[-1]
    made, seen = [], set()
    for skel in seed_skeletons:
        for k, t in enumerate(skel.operand_types):
            if t != STAND_IN:
                continue
            ops = skel.operand_types[:k] + (q,) + skel.operand_types[k + 1:]
            new = Skeleton(skel.op, ops, skel.result_types, skel.attrs, skel.regions)
            if new in seen or not _type_clauses_hold(spec, new) or not valid(spec, new):
                continue
            seen.add(new)
            made.append((f"hybrid: operand {k} {q.mlir}, the rest f32", new))
    return out + covering(made)


def as_family(case: Case) -> Case | None:
    """A case drawn on a substituted skeleton, named by the quantized family
    of its first quantized tensor (its `dtype`, and so its id), as the rest
    of this stream names its cases; None where the draw left no quantized
    tensor in the program."""
    sig = main_signature(case.mlir)
    types = [t for ts in sig for t in ts] if sig is not None else []
    q = next((t.element_type for t in types if isinstance(t, TensorType) and t.element_type.is_quantized), None)
    if q is None:
        return None
    fam = family(q)
    return dataclasses.replace(case, dtype=fam, id=case_id(case.op, fam, case.mlir, case.inputs, salt=case.kind),
                               provenance={**case.provenance, "spec": "v1.20"})
