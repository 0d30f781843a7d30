"""Cases on quantized tensors (StableHLO v1.20): a generator stream of its own.

A quantized type carries numbers (scales, zero points, storage bounds), so
it is no member of the type tables the skeletons enumerate; the cases here
are built from a fixed set of quantized types (`TYPES`) chosen for what
each exercises, on every op that declares how it takes quantized tensors
(`OpSpec.quantization`):

* element-wise ops defined by `dequantize_op_quantize`: @main takes the
  quantized operands as storage values and returns the quantized result —
  every storage value of an 8-bit (or narrower) operand type, a grid of
  pairs for two operands, triples for three (clamp, with rank-0 bounds of
  their own scales too) — so the op's whole quantized table is judged;
* uniform_quantize from float values (the special values, ties of the
  rounding, values past the storage bounds, random) and from another
  quantized type (requantization), per-tensor and per-axis;
  uniform_dequantize on every storage value;
* one invalid program per quantization constraint the op states (v1.20's
  numbering): a result of another storage or expressed type (the
  baseline-type C1 of the element-wise ops), add's C2–C7, uniform_quantize's
  and uniform_dequantize's C1–C2.

* on an op's declared example (`Quantization.example`: convolution, batch
  norm, the ops with regions, per-axis data movement), after the seed's
  skeletons' quantized cases (`trailing_cases`): value cases per pairing
  (and per region body: a reduce's `add` on quantized values requantizes at
  every step), per-axis cases where the op admits them, and one invalid
  program per quantization clause — and per constraint of the op's own
  that element types alone break on quantized tensors (reduce's C2: an init
  of another scale) — each broken alone, found by searching assignments of
  element types to the example's tensors (`_combinations`).

* on the ops v1.20 added (spec/added/: the six dynamic_* ops,
  collective_broadcast, async_start, async_done; `added_cases`, last of
  generators/suite.ADDED_STREAMS): value cases per pairing on the op's
  declared example (its shape and padding operands constants), the hybrid
  and per-axis forms where admitted, one invalid program per clause that
  element types break alone; on the example's process grid where it has
  one (collective_broadcast: v1.20's Example, two processes outside every
  group), and through async_start/async_done for each operation C2 admits.

Placed after every other stream of an op, so the op's other cases keep
their bytes.
"""
from __future__ import annotations

import dataclasses
import itertools
import zlib
from dataclasses import dataclass

import numpy as np

from ..spec.dsl import OpSpec
from ..spec.dsl.quantization import DEQUANTIZE_OP_QUANTIZE, OWN, REGIONS, STORAGE
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


def stream_case(spec: OpSpec, inst, arrays, kind: str, seed: int, note: str, dtype: str, expect_fn,
                violates: str | None = None, *, mlir: str | None = None, consts: dict | None = None,
                present: set | None = None, more_arguments: tuple = ()) -> Case | None:
    """One case of a v1.20 stream (this one, generators/v1_20_ops.py): the
    program (`mlir`, or emitted from the instance with the attributes
    `present` and the `consts` its shape operands take), its inputs, and the
    oracle's expectation; None where the oracle leaves the result
    unspecified, or where the text of an invalid program does not say what
    the instance meant (no test of its constraint).  `more_arguments`: types
    of @main arguments `mlir` takes after the instance's (a shape operand
    made an argument: generators/v1_20_ops.py); a survey is expected as a
    value case is (its expectation states what the spec leaves open)."""
    from .suite import GENERATOR_VERSION   # (suite.py runs this stream: imported when a case is made)
    mlir = mlir or emit.program(spec, inst, present, consts)
    types = emit.operand_types(spec, inst, arguments_only=True) + list(more_arguments)
    tvs = [TensorValue.of(a, t) for a, t in zip(arrays, types)]
    try:
        expected = expect_fn(spec, inst, mlir, arrays) if kind in ("value", "survey") else []
    except expect.Unspecified:
        return None
    if kind == "value" and any((getattr(e, "residual", None) or {}).get("undefined") for e in expected):
        kind = "survey"   # the values make the behaviour undefined (a matrix not positive definite): reported
    if kind == "invalid" and expect_fn is oracle_expectations and not expect.rejects_for(mlir, violates):
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
    if not names_in:   # iota: no operand to take storage values; its structure comes from the skeletons
        return out
    for p in PAIRINGS:
        if any(p.operand.expressed_type not in o.types_v1_20 for o in spec.operands):
            continue
        if len(names_in) == 1:
            args = [_storage_array(_storage_values(p.operand, rng), p.operand)]
        elif len(names_in) == 2:
            lhs, rhs = _grid(p.operand, rng)
            args = [_storage_array(lhs, p.operand), _storage_array(rhs, p.operand)]
        else:
            args = [_storage_array(v, p.operand) for v in _triples(p.operand, rng)]
        n = args[0].shape[0]
        ops = {name: _tensor((n,), p.operand) for name in names_in}
        inst = spec.instance(ops, {}, {spec.results[0].name: _tensor((n,), p.result)})
        if spec.violated(inst) or spec.types_outside_tables(inst):
            continue
        out.append(stream_case(spec, inst, args, "value", seed, f"dequantize_op_quantize: {p.why}", family(p.operand),
                         expect_fn))
    out += _scalar_bounds(spec, seed, rng, expect_fn)
    out += _elementwise_invalid(spec, seed, rng, expect_fn)
    return out


def _scalar_bounds(spec: OpSpec, seed: int, rng, expect_fn) -> list:
    """clamp's rank-0 `min` and `max` (v1.20 C1–C2), each of its own scale
    and zero point (C3 reads baseline element types only): every storage
    value of the operand between them; then a `min` of another storage
    type, which breaks C3 alone.  [] for ops without such operands."""
    if [o.name for o in spec.operands] != ["min", "operand", "max"]:
        return []
    out = []
    for p in PAIRINGS[:4]:
        lo_t, hi_t = p.result, dataclasses.replace(p.result, scales=(p.result.scales[0] * 2,))
        st = p.operand.storage_type
        x = _storage_values(p.operand, rng)
        mid = (st.min_value + st.max_value) // 2
        lo = rng.integers(st.min_value, mid, size=())
        hi = rng.integers(mid, st.max_value + 1, size=())
        ops = {"min": _tensor((), lo_t), "operand": _tensor(x.shape, p.operand), "max": _tensor((), hi_t)}
        inst = spec.instance(ops, {}, {"result": _tensor(x.shape, p.result)})
        if spec.violated(inst) or spec.types_outside_tables(inst):
            continue
        args = [_storage_array(lo, lo_t), _storage_array(x, p.operand), _storage_array(hi, hi_t)]
        out.append(stream_case(spec, inst, args, "value", seed, f"rank-0 bounds of their own scales: {p.why}",
                         family(p.operand), expect_fn))
    a, other = PAIRINGS[0].operand, Q("!quant.uniform<i16:f32, 0.1:-3>")
    inst = spec.instance({"min": _tensor((), other), "operand": _tensor((4,), a), "max": _tensor((), a)}, {},
                         {"result": _tensor((4,), a)})
    broken = spec.violated(inst)
    if len(broken) == 1 and not spec.types_outside_tables(inst):
        args = [np.zeros((), np.int16), _storage_array(rng.integers(-10, 10, size=4), a), np.zeros((), np.int8)]
        out.append(stream_case(spec, inst, args, "invalid", seed, f"violates {broken[0]} (a min of another storage type: "
                         "baseline element types differ)", family(a), expect_fn, violates=broken[0]))
    return out


TRIPLE_SIDE = 12   # per operand of a three-operand op (clamp): 12³ triples (all 16³ for 4-bit types)


def _triples(q: QuantizedType, rng) -> tuple[np.ndarray, ...]:
    """Triples of storage values, as `_grid` makes pairs."""
    st = q.storage_type
    side = (np.arange(st.min_value, st.max_value + 1, dtype=np.int64) if st.bits <= 4
            else _storage_values(q, rng, TRIPLE_SIDE))
    return tuple(m.reshape(-1) for m in np.meshgrid(side, side, side, indexing="ij"))


def _elementwise_invalid(spec: OpSpec, seed: int, rng, expect_fn) -> list:
    p = PAIRINGS[0]
    names_in = [o.name for o in spec.operands]
    other_storage = Q("!quant.uniform<i16:f32, 0.05:2>")
    other_expressed = Q("!quant.uniform<i8:f16, 0.05:2>")
    out = []
    for result, what in ((other_storage, "a result of another storage type"),
                         (other_expressed, "a result of another expressed type")):
        ops = {name: _tensor((4,), p.operand) for name in names_in}
        inst = spec.instance(ops, {}, {spec.results[0].name: _tensor((4,), result)})
        broken = spec.violated(inst)
        # the op's own baseline-type clause (C1 of most; abs's C2, clamp's C4), broken alone
        if len(broken) != 1 or broken[0] not in spec.labels or spec.types_outside_tables(inst):
            continue
        label = broken[0]
        args = [_storage_array(rng.integers(-10, 10, size=4), p.operand) for _ in names_in]
        out.append(stream_case(spec, inst, args, "invalid", seed, f"violates {label} ({what}: baseline types differ)",
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
            out.append(stream_case(spec, inst, args, "invalid", seed, f"violates {label} ({what})", family(lt), expect_fn,
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
    return [stream_case(spec, inst, args, "value", seed, "per-axis operands and result (quantization dimension 0)",
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
        out.append(stream_case(spec, inst, [x], "value", seed, f"quantize from {et.mlir}: {p.why}", family(p.operand),
                         expect_fn))
        s = _storage_array(_storage_values(p.operand, rng), p.operand)
        inst = spec.instance({"operand": _tensor(s.shape, p.operand)}, {}, {"result": _tensor(s.shape, p.result)})
        out.append(stream_case(spec, inst, [s], "value", seed, f"requantize (dequantize, then quantize): {p.why}",
                         family(p.operand), expect_fn))
    x = np.array([[4.0, 15.0], [-3.3, 1e9]], dtype=np.float32).T.copy()   # the spec's example, then more
    inst = spec.instance({"operand": _tensor(x.shape, element_type("f32"))}, {}, {"result": _tensor(x.shape, PER_AXIS[0])})
    out.append(stream_case(spec, inst, [x], "value", seed, "per-axis quantize (the spec's example type)",
                     family(PER_AXIS[0]), expect_fn))
    s = np.array([[10, 10], [-128, 127]], dtype=np.int8).T.copy()
    inst = spec.instance({"operand": _tensor(s.shape, PER_AXIS[0])}, {}, {"result": _tensor(s.shape, PER_AXIS[1])})
    out.append(stream_case(spec, inst, [s], "value", seed, "per-axis requantize (the spec's example types)",
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
        out.append(stream_case(spec, inst, [arr], "invalid", seed, f"violates {label} ({what})", family(a), expect_fn,
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
        out.append(stream_case(spec, inst, [s], "value", seed, "dequantize every storage value" if q.is_per_tensor
                         else "per-axis dequantize (the spec's example type)", family(q), expect_fn))
    a = PAIRINGS[0].operand
    for label, result, what in (("uniform_dequantize_c1", _tensor((2, 2), element_type("f32")), "result of another shape"),
                                ("uniform_dequantize_c2", _tensor((4,), element_type("f16")), "result not of the expressed type")):
        inst = spec.instance({"operand": _tensor((4,), a)}, {}, {"result": result})
        if spec.violated(inst) != [label]:
            continue
        out.append(stream_case(spec, inst, [np.zeros(4, dtype=np.int8)], "invalid", seed, f"violates {label} ({what})",
                         family(a), expect_fn, violates=label))
    return out




def _constant(spec: OpSpec, seed: int, rng, expect_fn) -> list:
    """constant with a quantized output (spec/ops/constant.py): the literal
    written in the storage type (MLIR's signless integer of its width) —
    every storage value of each pairing's operand type, a per-axis type
    (the spec's example type, two slices) — and one literal written in
    another storage type (C1)."""
    def literal(q: QuantizedType, values: np.ndarray) -> tuple[TensorType, np.ndarray]:
        signless = element_type(f"si{q.storage_type.bits}")
        return _tensor(values.shape, signless), np.asarray(values, dtype=np.int64).astype(signless.numpy)

    def case(q, lit_t, lit, kind, note, violates=None, out_shape=None):
        inst = spec.instance({"value": lit_t}, {}, {"output": _tensor(out_shape or lit_t.shape, q)})
        return stream_case(spec, inst, [], kind, seed, note, family(q), expect_fn, violates, consts={"value": lit})
    out = []
    for p in PAIRINGS:
        t, lit = literal(p.operand, _storage_values(p.operand, rng))
        out.append(case(p.operand, t, lit, "value", f"every storage value as a literal: {p.why}"))
    q = PER_AXIS[0]
    t, lit = literal(q, np.array([[10, -128, 127, 0], [10, -128, 127, -20]]))
    out.append(case(q, t, lit, "value", "per-axis output along dimension 0 (the spec's example type)"))
    a = PAIRINGS[0].operand
    wide = _tensor((4,), element_type("si16"))
    inst = spec.instance({"value": wide}, {}, {"output": _tensor((4,), a)})
    if spec.violated(inst) == ["constant_c1"]:
        out.append(case(a, wide, np.array([1, -2, 300, 0], dtype=np.int16), "invalid",
                        "violates constant_c1 (an i8-stored output, the literal written in i16)", "constant_c1"))
    return out


# Ops whose quantized cases are a stream of their own (no meaning's stream builds them)
OWN_STREAMS = {"constant": _constant}


def cases(spec: OpSpec, seed: int, expect_fn=None) -> list:
    """The op's cases on quantized tensors (module docstring); [] for an op
    that takes none."""
    q = spec.quantization
    if q is None:
        return []
    expect_fn = expect_fn or oracle_expectations
    rng = np.random.default_rng([seed, zlib.crc32(spec.mnemonic.encode()), zlib.crc32(b"quantized")])
    if spec.mnemonic in OWN_STREAMS:
        made = OWN_STREAMS[spec.mnemonic](spec, seed, rng, expect_fn)
    elif q.meaning == OWN:   # into quantized tensors (uniform_quantize) or out of them (uniform_dequantize)
        made = (_uniform_quantize if q.admits(spec.results[0].name) else _uniform_dequantize)(spec, seed, rng, expect_fn)
    elif q.meaning == DEQUANTIZE_OP_QUANTIZE:
        made = (_elementwise(spec, seed, rng, expect_fn) + _per_axis_values(spec, seed, rng, expect_fn)
                + _quantization_invalid(spec, seed, rng, expect_fn))
    else:
        made = []
    return [c for c in made if c is not None]


# ---------------------------------------------------------------- ops with structure: the declared example
# An op with attributes or regions declares one valid instance (`Quantization.example`) whose element types
# can be replaced; on it, the quantization clauses are broken one at a time and per-axis types are placed
# where the op admits them.  These cases come after the skeletons' (`trailing_cases`), so an op's earlier
# quantized cases keep their bytes.

PER_AXIS_SCALES = (0.1, 0.25, 0.05, 0.5, 0.125, 0.2, 1.0, 0.0625)
PER_AXIS_ZERO_POINTS = (0, -3, 5, 1, -7, 2, 0, -1)


def per_axis_along(base: QuantizedType, dim: int, n: int, zero: bool = False) -> QuantizedType:
    """`base`'s storage and expressed types, per-axis along `dim` with `n`
    scales and zero points of their own (zero points 0 where `zero`)."""
    scales = tuple(PER_AXIS_SCALES[k % len(PER_AXIS_SCALES)] for k in range(n))
    zps = tuple(0 if zero else PER_AXIS_ZERO_POINTS[k % len(PER_AXIS_ZERO_POINTS)] for k in range(n))
    return dataclasses.replace(base, scales=scales, zero_points=zps, quantization_dimension=dim)


def _role_candidates(t: TensorType) -> list[tuple[object, str]]:
    """Element types a tensor of the example may take, in the order they are
    tried: per-tensor quantized, the float type, another storage type,
    another expressed type, another float type, then per-axis along each of
    its dimensions (as many scales as the dimension is long)."""
    a = PAIRINGS[0].operand
    out = [(a, "per-tensor"), (element_type("f32"), "f32"), (Q("!quant.uniform<i16:f32, 0.1:-3>"), "i16 storage"),
           (Q("!quant.uniform<i8:f16, 0.1:-3>"), "f16 expressed"), (element_type("f16"), "f16"),
           (Q("!quant.uniform<i8:f32, 0.2:1>"), "another scale")]
    out += [(per_axis_along(a, d, n), f"per-axis along {d}") for d, n in enumerate(t.shape) if n > 0]
    return out


def _roles(inst) -> list[tuple[str, TensorType]]:
    """(name, type) of what the example's element types are chosen for: its
    non-constant operands and its results of the stand-in type f32 (a
    variadic one by its first member; never an index operand), and "body"
    — its first region's element type — where it has regions."""
    spec = inst.spec

    def first(v):
        return v[0] if isinstance(v, list) and v else v
    out = [(o.name, first(inst.operands[o.name])) for o in spec.operands if not o.constant]
    out += [(r.name, first(inst.results[r.name])) for r in spec.results]
    out = [(n, t) for n, t in out if isinstance(t, TensorType) and t.element_type == STAND_IN]   # not indices
    fn = first(next(iter((inst.regions or {}).values()), None))
    if fn is not None and fn.inputs:
        out.append(("body", fn.inputs[0]))
    return out


FULL_SEARCH = 20000   # assignments; past it, those that change at most `CHANGED` roles from the first candidate
CHANGED = 2


def _combinations(base):
    """Assignments of `_role_candidates` to the example's roles (`_roles`),
    in a fixed order: (types by name, words saying what each is).  Every
    assignment where there are at most `FULL_SEARCH` (in product order);
    for an op with many tensors (batch_norm_grad: eight), those that give
    at most `CHANGED` roles another candidate than the first (per-tensor
    quantized) — a clause is broken by one or two types."""
    roles = _roles(base)
    options = [_role_candidates(t) for _, t in roles]
    if int(np.prod([len(o) for o in options], dtype=np.int64)) <= FULL_SEARCH:
        combos = itertools.product(*options)
    else:
        def changed(k):
            for which in itertools.combinations(range(len(roles)), k):
                for alts in itertools.product(*[options[i][1:] for i in which]):
                    combo = [o[0] for o in options]
                    for i, a in zip(which, alts):
                        combo[i] = a
                    yield tuple(combo)
        combos = itertools.chain.from_iterable(changed(k) for k in range(CHANGED + 1))
    for combo in combos:
        yield ({n: c[0] for (n, _), c in zip(roles, combo)},
               ", ".join(f"{n} {c[1]}" for (n, _), c in zip(roles, combo)))


def _identity_storage(body: str | None, q: QuantizedType) -> int:
    """The storage value that is `body`'s identity on `q`: the zero point
    (it dequantizes to 0) for a sum, the storage bounds for maximum and
    minimum; the zero point for any other body."""
    if body == "maximum":
        return int(q.storage_min)
    if body == "minimum":
        return int(q.storage_max)
    return int(q.zero_points[0])


def _expressed(inst):
    """The instance with every quantized tensor of its expressed type (what
    the op's `Exercise.operand_values` knows how to fill)."""
    def retype(t):
        if isinstance(t, list):
            return [retype(m) for m in t]
        if isinstance(t, TensorType) and t.element_type.is_quantized:
            return TensorType(t.shape, t.element_type.expressed_type)
        return t
    return inst.spec.instance({k: retype(v) for k, v in inst.operands.items()}, dict(inst.attributes),
                              {k: retype(v) for k, v in inst.results.items()}, dict(inst.regions or {}), inst.grid)


def _example_arrays(spec: OpSpec, inst, rng) -> list[np.ndarray]:
    """Operands for an example instance.  A quantized operand: the values
    the op declares for it (`Exercise.operand_values`, asked on the
    expressed types: batch norm's positive variance, reduce's identity
    init) quantized into its type; else, a rank-0 one named init…, the
    identity of the body (`_identity_storage`, so the amount of init values
    inserted cannot matter); else every storage value possible — under a
    sum, within an eighth of the storage range of the zero point, so that
    some sums saturate and most do not.  Floats in [-4, 4] rounded to the
    type, integers (indices) in [0, 3)."""
    from ..spec.quantized import quantize
    body = next(iter((inst.regions or {}).values()), None)
    body = body[0] if isinstance(body, list) and body else body
    chosen = spec.exercise.operand_values
    expressed = _expressed(inst) if chosen is not None else None
    slots = []
    for o in spec.operands:
        if o.constant:
            continue
        v = inst.operands[o.name]
        slots += [(o.name, k) for k in range(len(v) if o.variadic else 1)]
    out = []
    for (name, k), t in zip(slots, emit.operand_types(spec, inst, arguments_only=True)):
        et = t.element_type
        given = None
        if et.is_quantized and chosen is not None:
            given = chosen(expressed, name, k, TensorType(t.shape, et.expressed_type), rng)
        if given is not None:
            x = np.asarray(given).astype(et.expressed_type.numpy).reshape(t.shape)
            q = quantize(x, et)
            out.append(np.asarray(np.ma.filled(q, int(et.zero_points[0]))).astype(et.numpy).reshape(t.shape))
        elif et.is_quantized and t.rank == 0 and name.startswith("init"):
            out.append(np.asarray(_identity_storage(getattr(body, "body", None), et)).astype(et.numpy))
        elif et.is_quantized:
            st = et.storage_type
            lo, hi = int(et.storage_min), int(et.storage_max)
            if getattr(body, "body", None) in ("add", "map_add"):   # sums of a few: some saturate, most do not
                zp, quarter = int(et.zero_points[0]), (hi - lo) // 8 + 1
                lo, hi = max(lo, zp - quarter), min(hi, zp + quarter)
            out.append(rng.integers(lo, hi + 1, size=t.shape).astype(st.numpy))
        elif et.is_float:
            out.append(np.asarray(rng.uniform(-4, 4, size=t.shape)).astype(et.numpy))
        elif et.is_integer:   # the op's own (while's counter and limit), else indices in [0, 3)
            own = chosen(inst, name, k, t, rng) if chosen is not None else None
            out.append(np.asarray(own).astype(et.numpy).reshape(t.shape) if own is not None
                       else rng.integers(0, 3, size=t.shape).astype(et.numpy))
        else:
            out.append(np.zeros(t.shape, dtype=et.numpy))
    for t in emit.capture_types(spec, inst):   # what region bodies read from @main (while's count_up)
        et = t.element_type
        if et.is_quantized:
            out.append(rng.integers(int(et.storage_min), int(et.storage_max) + 1, size=t.shape).astype(et.numpy))
        elif et.is_float:
            out.append(np.asarray(rng.uniform(-4, 4, size=t.shape)).astype(et.numpy))
        else:
            out.append(rng.integers(0, 3, size=t.shape).astype(et.numpy))
    return out


def _first_quantized(inst):
    """The element type that names the case's family: its first quantized tensor's."""
    def leaves(v):
        return [x for m in v for x in leaves(m)] if isinstance(v, list) else [v]
    ts = [t for v in list(inst.operands.values()) + list(inst.results.values()) for t in leaves(v)]
    return next(t.element_type for t in ts if isinstance(t, TensorType) and t.element_type.is_quantized)


def _example_invalid(spec: OpSpec, seed: int, rng, expect_fn) -> list:
    """One program breaking each quantization clause alone, and each of the
    op's own constraints that element types alone can break on quantized
    tensors (reduce's C2 and C6 read the quantized types whole: an init or
    a body of another scale), on the op's declared example: the first
    assignment of element types (`_combinations`) that the op's tables
    accept, that holds a quantized tensor, and that breaks that constraint
    and no other — in the program as the oracle reads it too (a region's
    own op, refused first, would name another clause)."""
    q = spec.quantization
    base = q.example({})
    labels = [c.__name__ for c in q.constraints] + [l for l in spec.labels]
    found: dict[str, tuple] = {}
    for types, what in _combinations(base):
        inst = q.example(types)
        if spec.types_outside_tables(inst) or not spec.holds_quantized(inst):
            continue
        broken = spec.violated(inst)
        if len(broken) == 1 and broken[0] in labels and broken[0] not in found \
                and expect.rejection(emit.program(spec, inst)) == broken[0]:   # not a region's op first
            found[broken[0]] = (inst, what)
    out = []
    for label in labels:
        if label not in found:
            continue
        inst, what = found[label]
        out.append(stream_case(spec, inst, _example_arrays(spec, inst, rng), "invalid", seed,
                         f"violates {label} ({what})", family(_first_quantized(inst)), expect_fn, violates=label))
    return out


def _example_per_axis(spec: OpSpec, seed: int, rng, expect_fn) -> list:
    """Value cases with per-axis quantized tensors where the op admits them
    (`Quantization.per_axis`), on its example: for each set of per-axis
    tensors, the first valid assignment — the quantized form, then the
    hybrid one (float operands beside per-axis ones) where valid."""
    q = spec.quantization
    if not q.per_axis:
        return []
    base = q.example({})
    out, seen = [], set()
    a = PAIRINGS[0].operand
    for types, what in _combinations(base):
        quantized = {n: t for n, t in types.items() if getattr(t, "is_quantized", False)}
        axis = frozenset(n for n, t in quantized.items() if t.is_per_axis)
        floats = frozenset(n for n, t in types.items() if n not in quantized)
        key = (axis, floats)
        if not axis or key in seen or any(t == element_type("f16") for t in types.values()):
            continue
        if any((t.storage_type, t.expressed_type) != (a.storage_type, a.expressed_type) for t in quantized.values()):
            continue
        if any(t.is_per_tensor and t != a for t in quantized.values()):
            continue
        inst = q.example(types)
        if spec.types_outside_tables(inst) or spec.violated(inst):
            continue
        seen.add(key)
        out.append(stream_case(spec, inst, _example_arrays(spec, inst, rng), "value", seed, f"per-axis: {what}",
                         family(_first_quantized(inst)), expect_fn))
    return out


def _example_values(spec: OpSpec, seed: int, rng, expect_fn) -> list:
    """Value cases of an op defined by dequantize_op_quantize whose
    structure its example gives (batch norm): per pairing, every operand of
    its operand type, every result of its result type."""
    q = spec.quantization
    if q.bodies or q.meaning != DEQUANTIZE_OP_QUANTIZE or q.skeletons:
        return []
    roles = [n for n, _ in _roles(q.example({}))]
    results = {r.name for r in spec.results}
    out = []
    for p in PAIRINGS:
        inst = q.example({n: (p.result if n in results else p.operand) for n in roles})
        if spec.types_outside_tables(inst) or spec.violated(inst):
            continue
        out.append(stream_case(spec, inst, _example_arrays(spec, inst, rng), "value", seed,
                         f"dequantize_op_quantize on its example: {p.why}", family(p.operand), expect_fn))
    return out


def _region_values(spec: OpSpec, seed: int, rng, expect_fn) -> list:
    """Value cases of an op with a region (`Quantization.bodies`): each
    pairing's operand type for every tensor and the region, with each body
    the op declares; with the first body, also the pairing's result type for
    the results where the op's constraints let them differ (map's E')."""
    q = spec.quantization
    if not q.bodies:
        return []
    base = q.example({})
    roles = [n for n, _ in _roles(base)]
    results = {r.name for r in spec.results}
    out = []
    for p in PAIRINGS:
        for body in q.bodies:
            tried = [({n: p.operand for n in roles}, f"{p.why}")]
            own = {n: (p.result if n in results else p.operand) for n in roles}
            if body == q.bodies[0] and own != tried[0][0]:
                tried.append((own, f"{p.why}; a result of its own scale"))
            for types, what in tried:
                inst = q.example(types, body)
                if spec.types_outside_tables(inst) or spec.violated(inst):
                    continue
                out.append(stream_case(spec, inst, _example_arrays(spec, inst, rng), "value", seed,
                                 f"region {body} on quantized values: {what}", family(p.operand), expect_fn))
    return out


def solved_invalid(spec: OpSpec, seed: int, made: list, expect_fn=None) -> list:
    """One invalid program for each quantization clause (and each of the
    op's own clauses that read quantized types) no other quantized stream
    broke alone: the concrete instance z3 solved for it in
    spec/quantized_checks.py (¬Ci ∧ the others ∧ the type clauses, made
    concrete), with operands drawn as for an example.  dot_general's
    clauses read dimension numbers that `_quantization_invalid`'s
    attribute-free candidates cannot state.  After every other quantized
    case of the op."""
    q = spec.quantization
    if q is None:
        return []
    from ..spec import quantized_checks
    if spec not in quantized_checks.proved_ops({spec.mnemonic: spec}):
        return []
    named = {c.violates for c in made if c is not None and c.kind == "invalid"}
    res = quantized_checks.proved(spec)
    expect_fn = expect_fn or oracle_expectations
    rng = np.random.default_rng([seed, zlib.crc32(spec.mnemonic.encode()), zlib.crc32(b"quantized solved")])
    out = []
    for label in res.clauses:
        inst = res.programs.get(label)
        if label in named or inst is None:
            continue
        c = stream_case(spec, inst, _example_arrays(spec, inst, rng), "invalid", seed,
                        f"violates {label} (solved: {res.witnesses[label]})", family(_first_quantized(inst)),
                        expect_fn, violates=label)
        if c is not None:
            out.append(c)
    return out


def trailing_cases(spec: OpSpec, seed: int, expect_fn=None) -> list:
    """The op's cases on its declared example (`Quantization.example`):
    after every other quantized case of the op (generators/suite.py), on a
    generator stream of their own."""
    q = spec.quantization
    if q is None or q.example is None:
        return []
    expect_fn = expect_fn or oracle_expectations
    rng = np.random.default_rng([seed, zlib.crc32(spec.mnemonic.encode()), zlib.crc32(b"quantized example")])
    made = (_example_values(spec, seed, rng, expect_fn) + _region_values(spec, seed, rng, expect_fn)
            + _example_per_axis(spec, seed, rng, expect_fn)
            + _example_invalid(spec, seed, rng, expect_fn))
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
    if not q.skeletons:
        return False
    if q.meaning == REGIONS:   # ops with regions: their declared example where they have one (trailing_cases)
        return q.example is None
    return q.meaning == STORAGE or q.example is not None or not any(c.kind == "value" for c in made)


def _type_clauses_hold(spec: OpSpec, skel: Skeleton) -> bool:
    """Whether the op's quantization clauses that read types alone hold for
    the skeleton's element types (dot_general's C15: a quantized rhs has
    zero points 0): the solver sees only the op's own constraints, so a
    substitution these refuse has no instance.  A clause that reads more
    than types (an attribute) cannot be decided here and does not refuse.
    A result the skeleton leaves to inference takes the first operand's
    element type, as inference gives it where the program states none."""
    names = [o.name for o in spec.operands if not o.constant]
    if not spec.quantization.constraints or not names:
        return True
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


def _bodies_take(skel: Skeleton, q: QuantizedType) -> bool:
    """Whether every op the skeleton's region bodies write on `q` takes
    quantized tensors (generators/regions.py writes `subtract` as `xor`
    where subtract's table lacks the type — a quantized type is in no
    table — and xor takes no quantized tensor)."""
    from ..spec.ops import OPS
    from .regions import LOOPS, PAIRWISE, body_op
    for _, body in skel.regions:
        if body in LOOPS:   # they write a constant of the counter's type: no quantized constant is written here
            return False
        name = (body or "").removeprefix("map_")
        op = body_op(name, q) if name in PAIRWISE else name
        if op in OPS and OPS[op].quantization is None:
            return False
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
            if (new == skel or new in seen or not _type_clauses_hold(spec, new) or not _bodies_take(new, q)
                    or not valid(spec, new)):
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
            if new in seen or not _type_clauses_hold(spec, new) or not _bodies_take(new, q) or not valid(spec, new):
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


# ---------------------------------------------------------------- ops v1.20 added (spec/added/): the declared example
# Their other streams come first (generators/suite.ADDED_STREAMS: `cases` above answers none of these ops, so the
# order of their earlier cases is untouched); this one, last, builds on the op's declared example, whose literal
# operands (shape, padding, slice-size operands) carry their values (`known_values`), written as constants.

def _consts(inst) -> dict:
    """The example's literal operands' values, as the program writes them (constants of their operand types)."""
    known = dict(vars(inst).get("known_values") or {})
    return {k: np.asarray(v).astype(inst.operands[k].element_type.numpy).reshape(inst.operands[k].shape)
            for k, v in known.items()}


def _example_with(spec: OpSpec, types: dict):
    """The example with these element types, or None where the op's tables refuse them."""
    inst = spec.quantization.example(types)
    return None if spec.types_outside_tables(inst) else inst


def _on_grid(inst) -> bool:
    g = getattr(inst, "grid", None)
    return g is not None and getattr(g, "size", 1) > 1


def _present(spec: OpSpec, inst) -> set:
    """The attributes the program writes: all but the optional ones at their
    default, left out as JAX and the pinned StableHLO write them
    (collective_broadcast's `has_dynamic_root = false` written out is no
    unit attribute to the pinned verifier)."""
    return {a.name for a in spec.attributes
            if not (a.optional and inst.attributes.get(a.name, a.default) == a.default)}


def _program(spec: OpSpec, inst) -> str:
    """The example's program as a case writes it (its grid stated where it has one)."""
    from .suite import with_grid
    text = emit.program(spec, inst, _present(spec, inst), _consts(inst))
    return with_grid(text, inst.grid) if _on_grid(inst) else text


def _added_case(spec: OpSpec, inst, kind: str, seed: int, rng, note: str, expect_fn, violates: str | None = None):
    dtype = family(_first_quantized(inst))
    if _on_grid(inst):   # every process's storage values, the oracle's expectations per process
        return grid_case(spec, seed, emit.program(spec, inst, _present(spec, inst), _consts(inst)), inst.grid,
                         emit.operand_types(spec, inst, arguments_only=True), kind, note, dtype, violates, rng)
    return stream_case(spec, inst, _example_arrays(spec, inst, rng), kind, seed, note, dtype, expect_fn, violates,
                       consts=_consts(inst), present=_present(spec, inst))


def _added_values(spec: OpSpec, seed: int, rng, expect_fn) -> list:
    """Per pairing (`PAIRINGS`): every quantized role of the pairing's
    operand type — data movement keeps one type from operand to result —
    and, where the op quantizes a computed result (dequantize_op_quantize:
    dynamic_conv, dynamic_iota), its results of the pairing's result type;
    then the hybrid form (float operands beside a quantized one) where the
    constraints admit one."""
    q = spec.quantization
    roles = [n for n, _ in _roles(q.example({}))]
    results = {r.name for r in spec.results}
    computed = q.meaning == DEQUANTIZE_OP_QUANTIZE
    out = []
    for p in PAIRINGS:
        types = {n: (p.result if computed and n in results else p.operand) for n in roles}
        inst = _example_with(spec, types)
        if inst is None or spec.violated(inst):
            continue
        out.append(_added_case(spec, inst, "value", seed, rng, f"{q.meaning} on its example: {p.why}", expect_fn))
    if computed:   # the hybrid form: float operands, the first quantized operand's rhs-like role quantized
        a = SUBSTITUTES[-1]
        for n in roles:
            if n in results:
                continue
            inst = _example_with(spec, {n: a})
            if inst is not None and spec.holds_quantized(inst) and not spec.violated(inst):
                out.append(_added_case(spec, inst, "value", seed, rng, f"hybrid: {n} {a.mlir}, the rest f32",
                                       expect_fn))
    return out


def _added_per_axis(spec: OpSpec, seed: int, rng, expect_fn) -> list:
    """`_example_per_axis` on an op v1.20 added: per set of per-axis
    tensors, the first valid assignment."""
    q = spec.quantization
    if not q.per_axis:
        return []
    out, seen = [], set()
    a = PAIRINGS[0].operand
    for types, what in _combinations(q.example({})):
        quantized_ = {n: t for n, t in types.items() if getattr(t, "is_quantized", False)}
        axis = frozenset(n for n, t in quantized_.items() if t.is_per_axis)
        floats = frozenset(n for n, t in types.items() if n not in quantized_)
        key = (axis, floats)
        if not axis or key in seen or any(t == element_type("f16") for t in types.values()):
            continue
        if any((t.storage_type, t.expressed_type) != (a.storage_type, a.expressed_type) for t in quantized_.values()):
            continue
        if any(t.is_per_tensor and t != a for t in quantized_.values()):
            continue
        inst = _example_with(spec, types)
        if inst is None or spec.violated(inst):
            continue
        seen.add(key)
        out.append(_added_case(spec, inst, "value", seed, rng, f"per-axis: {what}", expect_fn))
    return out


def _added_invalid(spec: OpSpec, seed: int, rng, expect_fn) -> list:
    """`_example_invalid` on an op v1.20 added: per constraint (the
    quantization clauses, and the op's own — v1.20 numbers its quantized
    clauses with the rest), the first assignment of element types that
    holds a quantized tensor and breaks that constraint alone, in the
    program the oracle reads too."""
    q = spec.quantization
    labels = [c.__name__ for c in q.constraints] + list(spec.labels)
    found: dict[str, tuple] = {}
    for types, what in _combinations(q.example({})):
        inst = _example_with(spec, types)
        if inst is None or not spec.holds_quantized(inst):
            continue
        broken = spec.violated(inst)
        if len(broken) != 1 or broken[0] not in labels or broken[0] in found:
            continue
        if expect.rejection(_program(spec, inst)) == broken[0]:
            found[broken[0]] = (inst, what)
    return [_added_case(spec, found[label][0], "invalid", seed, rng, f"violates {label} ({found[label][1]})",
                        expect_fn, violates=label) for label in labels if label in found]


def added_cases(spec: OpSpec, seed: int, expect_fn=None) -> list:
    """Quantized cases of an op v1.20 added (spec/added/) that declares an
    example: value cases per pairing (and the hybrid form), per-axis ones
    where admitted, one invalid program per constraint that element types
    alone break on quantized tensors.  A stream of its own (generators/
    suite.ADDED_STREAMS, last), seeded by the op's name."""
    from ..spec.added import ADDED
    q = spec.quantization
    if q is None or q.meaning == OWN or spec.mnemonic not in ADDED:
        return []
    expect_fn = expect_fn or oracle_expectations
    rng = np.random.default_rng([seed, zlib.crc32(spec.mnemonic.encode()), zlib.crc32(b"quantized added")])
    if spec.mnemonic in ("async_start", "async_done"):
        return [c for c in _async_cases(spec, seed, rng) if c is not None]
    if q.example is None:
        return []
    made = (_added_values(spec, seed, rng, expect_fn) + _added_per_axis(spec, seed, rng, expect_fn)
            + _added_invalid(spec, seed, rng, expect_fn))
    return [c for c in made if c is not None]


# ---------------------------------------------------------------- on process grids, and through async_start/async_done
def _storage_draw(types: list, rng) -> list:
    """One process's @main arguments: random storage values of each quantized
    tensor (its whole storage range), si64 zeros for index operands."""
    out = []
    for t in types:
        et = t.element_type
        if et.is_quantized:
            out.append(rng.integers(int(et.storage_min), int(et.storage_max) + 1, size=t.shape).astype(et.numpy))
        else:
            out.append(np.zeros(t.shape, dtype=et.numpy))
    return out


def grid_case(spec: OpSpec, seed: int, mlir: str, grid, arg_types: list, kind: str, note: str, dtype: str,
              violates: str | None = None, rng=None) -> Case | None:
    """A case of @main `mlir` on `grid` (a `GridData` case where it has more
    than one process): process 0's storage values from `rng`, the others'
    from a generator of the program's own; the oracle's expectations per
    process.  None where the spec states no result, or where an invalid
    program is not refused for `violates`."""
    from ..suites.records import GridData
    from .suite import GENERATOR_VERSION, with_grid
    text = with_grid(mlir, grid) if grid.size > 1 else mlir
    prov = {"seed": seed, "section": spec.mnemonic, "generator": GENERATOR_VERSION, "spec": "v1.20"}
    first = _storage_draw(arg_types, rng)
    tv = lambda xs: [TensorValue.of(a, t) for a, t in zip(xs, arg_types)]  # noqa: E731
    if kind == "invalid":
        if expect.rejection(text) != violates:
            return None
        return Case(id=case_id(spec.mnemonic, dtype, text, tv(first), salt=kind), op=spec.mnemonic, dtype=dtype,
                    kind=kind, mlir=text, inputs=tv(first), violates=violates, note=note, provenance=prov,
                    grid=GridData(grid.num_replicas, grid.num_partitions) if grid.size > 1 else None)
    own = np.random.default_rng([seed, zlib.crc32(text.encode())])
    per = [first] + [_storage_draw(arg_types, own) for _ in range(grid.size - 1)]
    try:
        expected = (expect.expected_outputs(text, per[0]) if grid.size == 1
                    else expect.expected_grid_outputs(text, grid, per))
    except expect.Unspecified:
        return None
    if grid.size == 1:
        return Case(id=case_id(spec.mnemonic, dtype, text, tv(first), salt=kind), op=spec.mnemonic, dtype=dtype,
                    kind=kind, mlir=text, inputs=tv(first), expected=expected, note=note, provenance=prov)
    per_tvs = [tv(a) for a in per]
    return Case(id=case_id(spec.mnemonic, dtype, text, [v for vs in per_tvs for v in vs], salt=kind),
                op=spec.mnemonic, dtype=dtype, kind=kind, mlir=text, inputs=[], expected=[], note=note,
                grid=GridData(grid.num_replicas, grid.num_partitions, per_tvs, expected), provenance=prov)


def _async_cases(spec: OpSpec, seed: int, rng) -> list:
    """async_start: each operation its C2 admits (generators/
    v1_20_collectives.operations: the collectives on a 2×1 grid, the slices
    on one process) on a per-tensor quantized type — the body's operation
    runs by its own quantized rule (all_reduce's and reduce_scatter's `add`
    bodies requantize at each step); then C4 broken by a future of another
    scale.  async_done: an all_gather's future per expressed type the
    result row admits; then C1 broken by a result of another scale."""
    from .v1_20_collectives import async_program, operations
    a = PAIRINGS[0].operand
    other = dataclasses.replace(a, scales=(0.2,))
    out = []

    def case(operation, mlir, kind, note, violates=None):
        return grid_case(spec, seed, mlir, operation.grid, operation.operand_types, kind, note, family(a), violates,
                         rng)
    if spec.mnemonic == "async_start":
        for operation in operations(a):
            out.append(case(operation, async_program(operation), "value",
                            f"{operation.name} in the body on {a.mlir}"))
        gather = operations(a)[0]
        wrong = _tensor(gather.result_type.shape, other)
        out.append(case(gather, async_program(gather, future=f"!stablehlo.future<{wrong.mlir}>", done=wrong),
                        "invalid", "violates async_start_c4 (a future of another scale than the operation's result)",
                        "async_start_c4"))
        return out
    seen = set()
    for q in (p.operand for p in PAIRINGS):
        if q.expressed_type not in spec.results[0].types_v1_20 or q.expressed_type in seen:
            continue   # one case per expressed type the row admits
        seen.add(q.expressed_type)
        gather = operations(q)[0]
        out.append(grid_case(spec, seed, async_program(gather), gather.grid, gather.operand_types, "value",
                             f"async_done of an all_gather of {q.mlir}", family(q), None, rng))
    gather = operations(a)[0]
    out.append(case(gather, async_program(gather, done=_tensor(gather.result_type.shape, other)), "invalid",
                    "violates async_done_c1 (a result of another scale than the future's)", "async_done_c1"))
    return out
