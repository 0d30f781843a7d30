"""Quantized element types (StableHLO v1.20, "Types": QuantizedTensorElementType)
and the quantization computations of its "Execution" section.

A quantized element type is a record: an integer `storage_type` and its
range [`storage_min`, `storage_max`], a float `expressed_type`, an optional
`quantization_dimension` (None: per-tensor), and one (`scales`,
`zero_points`) pair per slice of that dimension (one pair when per-tensor).
A storage value `i` stands for `(i - zero_point) * scale` (spec.md "Types").

How a scale is held — the one choice the spec leaves to us
----------------------------------------------------------
The spec says the scales are values of the expressed type (Types C4) and
computes with `constant(scale, expressed_type)` ("Quantization
computations": `compute_scales`).  MLIR, which writes and reads every
program, holds a scale as a C++ `double` (mlir/lib/Dialect/Quant/IR/
TypeParser.cpp, `parseQuantParams`: `parser.parseFloat(double&)`), so
`0.1` in `!quant.uniform<i8:f32, 0.1>` *is* binary64's 0.1, not f32's.  So:

* `QuantizedType.scales` are Python floats — exactly the double MLIR holds
  for the text (Python's `float(text)` rounds a decimal correctly, as
  MLIR's lexer does).  Printing gives MLIR's own spelling where MLIR's
  first choice round-trips (`%.6e`: `1.000000e-01`,
  `AsmPrinter::printFloatValue`) and the shortest round-trip decimal
  otherwise, so MLIR reads back the same double; `!quant.uniform<u8:f32,
  2.0e-01:128>` prints `!quant.uniform<u8:f32, 2.000000e-01:128>`.
* The value the semantics compute with is that double rounded to nearest
  (ties to even) into the expressed type: `expressed_scales(qt)` — the
  spec's `constant(scale, expressed_type)`, and what StableHLO's own
  lowering does (`stablehlo-legalize-quant-to-math` builds
  `getF32FloatAttr(scale)` from the double).
* C4 (`type(scales...) = expressed_type`) is read as "the scale is a value
  the expressed type can hold": an infinity or NaN where the type has one,
  else a magnitude no larger than its largest finite value and, if nonzero,
  no smaller than its smallest subnormal.  Read literally ("is exactly a
  value of f32") C4 would reject `0.1` and every converter's output; MLIR's
  own check (`isScaleInExpressedTypeRange`: smallest subnormal <= scale <=
  largest finite, after `scale > 0` and finiteness) is this reading's
  C4 ∧ C5 ∧ C6, which keeps the three apart (the range, the sign,
  finiteness: each can fail alone) — held equal to MLIR's parser on every
  boundary of every expressed type by tests/spec/test_quantized_types.py,
  but for NaN: MLIR's range test compares NaN false both ways and lets it
  through (a finding for MLIR); C5 and C6 refuse it.
* A hexadecimal scale is read as MLIR reads it, the 64 bits of the double
  (MLIR prints `123456789.0` as `0x419D6F3454000000`), except where its
  digits are exactly `num_bits(expressed_type) / 4` of a narrower expressed
  type: there the spec's FloatLiteral reading (the bits "in the
  floating-point format of the corresponding type") is taken, which MLIR
  would read as a tiny double and reject.

The grammar accepted is the spec's (`QuantizedTensorElementType`), which is
wider than MLIR's in three places, all read as the spec says and printed
MLIR's way: the spec's `si8`/`ui8` beside MLIR's `i8`/`u8` (printed `i8`,
`u8`); a `+` sign, and scales without a dot (`1`; MLIR wants `1.`); braces
around a per-tensor parameter, or none around a per-axis one (printed:
braces iff per-axis, as MLIR does).

Symbolic reading.  Every constraint here is written with spec/dsl's
dual-mode helpers: storage_min/max, zero points and the quantization
dimension may be z3 integers, and scales z3 reals or z3 binary64 floats
(`symbolic_quantized_type`).  Binary64 floats are MLIR's own holding, and
the only one in which C6 (`is_finite`) can fail: a real is always finite.

Findings of the spec text (v1.20), kept where they bite:
* C1 and C2 (`type(storage_min/max) = storage_type`) follow from C3, and C8
  (`type(zero_points...) = storage_type`) from C3 and C7: no quantized type
  violates exactly one of them (z3 proves it, in the tests).
* `dequantize` subtracts the zero point "in" the storage type
  (`x_storage - compute_zero_points(type(x), type(x_storage))`), which for
  i8 with zero point -128 and storage 127 is 255: no i8.  Read as exact
  integer subtraction (every implementation widens to i32 first).
* `quantize` clamps to `convert(storage_min/max, expressed_type)`, rounded:
  bf16 cannot hold 32767 (it becomes 32768), so a bf16/si16 type quantizes
  large values to 32768, outside si16, whose `convert` the spec leaves
  undefined (masked by `quantize`); a storage_max of 259 becomes 260, and
  `quantize` returns 260 — inside si16, above storage_max (returned, as the
  spec computes it; StableHLO #1406 leaves such values open).  In
  f8E4M3FN and f8E5M2 the bound 127 of si8 itself becomes 128: every
  value that should saturate to 127 is undefined.
* f8E8M0FNU is a FloatType, so an expressed type by the grammar, but it has
  no zero and no sign: `dequantize` cannot express `(i - zp) * scale` for
  `i <= zp` in it (ValueError here).
* `dequantize_batch_norm_grad_or_training_quantize` names its parameter
  `inputs_and_output_types` and reads `inputs_and_output_type`; read as one.
* `to_destination_type` dequantizes with `dequantize(type(x))`: `x` meant.
"""
from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, Callable, Sequence

import numpy as np
import z3

from . import ieee
from .dsl.constraints import And, Implies, all_of, at, in_range, is_symbolic, same_shape, same_type
from .types import ELEMENT_TYPES, ElementType, TensorType, element_type, from_bits

V1_20 = "v1.20"


# --------------------------------------------------------------------------
# The record
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class QuantizedType:
    """A quantized element type (spec.md "Types", QuantizedTensorElementType).

    `storage_min`/`storage_max` default to the storage type's range (the
    spec: "optional in the grammar, but have default values of
    min_value(storage_type) and max_value(storage_type)").  `scales` are
    doubles (module docstring), `zero_points` integers; either may be z3
    terms while a solver chooses them (`symbolic_quantized_type`), as may
    `quantization_dimension` — whose *presence* is structure: None is
    per-tensor, anything else per-axis.

    The element-type facts the rest of the project asks an `ElementType`
    (`bits`, `numpy`, `bits_dtype`, `storage_bits`, `wrap`) are the storage
    type's: a quantized tensor's raw bits are its storage values' bits
    (the spec's `dequantize` begins `bitcast_convert(x, storage_type(x))`).
    The kind predicates are all False but `is_quantized`:
    a quantized type is not an integer type, and code that branches on
    `is_integer` must not take it for one.
    """

    storage_type: ElementType
    expressed_type: ElementType
    scales: tuple
    zero_points: tuple
    quantization_dimension: Any = None
    storage_min: Any = None
    storage_max: Any = None

    def __post_init__(self):
        if not self.storage_type.is_integer:
            raise ValueError(f"storage type {self.storage_type} is not an integer type (QuantizationStorageType)")
        if not self.expressed_type.is_float:
            raise ValueError(f"expressed type {self.expressed_type} is not a float type (QuantizationExpressedType)")
        object.__setattr__(self, "scales", tuple(self.scales))
        object.__setattr__(self, "zero_points", tuple(self.zero_points))
        if self.storage_min is None:
            object.__setattr__(self, "storage_min", self.storage_type.min_value)
        if self.storage_max is None:
            object.__setattr__(self, "storage_max", self.storage_type.max_value)

    # --- the spec's accessors ---------------------------------------------
    @property
    def is_per_axis(self) -> bool:
        return self.quantization_dimension is not None

    @property
    def is_per_tensor(self) -> bool:
        return self.quantization_dimension is None

    @property
    def has_default_bounds(self) -> bool:
        """Whether storage_min/max are the storage type's range (MLIR then omits `<min:max>`)."""
        return (not is_symbolic(self.storage_min) and not is_symbolic(self.storage_max)
                and self.storage_min == self.storage_type.min_value and self.storage_max == self.storage_type.max_value)

    # --- ElementType's structural facts (the storage type's) --------------
    kind = "quantized"
    is_bool = is_integer = is_signed = is_unsigned = is_float = is_complex = False
    is_quantized = True
    format = None
    component = None
    since = V1_20

    @property
    def bits(self) -> int:
        return self.storage_type.bits

    @property
    def numpy(self):
        return self.storage_type.numpy

    @property
    def storage_bits(self) -> int:
        return self.storage_type.storage_bits

    @property
    def bits_dtype(self):
        return self.storage_type.bits_dtype

    def wrap(self, v: int) -> int:
        return self.storage_type.wrap(v)

    @property
    def min_value(self) -> int:
        """The storage type's range: what a backend's storage value may be at all (the judge's reading)."""
        return self.storage_type.min_value

    @property
    def max_value(self) -> int:
        return self.storage_type.max_value

    @property
    def mlir(self) -> str:
        return format_quantized_type(self)

    @property
    def name(self) -> str:
        return self.mlir

    def __str__(self) -> str:
        return self.mlir


def quantized_type(storage, expressed, scales, zero_points=None, quantization_dimension=None,
                   storage_min=None, storage_max=None) -> QuantizedType:
    """Build a QuantizedType from type names or ElementTypes; zero points default to 0 (MLIR's)."""
    st = storage if isinstance(storage, ElementType) else element_type(storage)
    et = expressed if isinstance(expressed, ElementType) else element_type(expressed)
    scales = tuple(scales) if isinstance(scales, (list, tuple)) else (scales,)
    if zero_points is None:
        zero_points = (0,) * len(scales)
    zero_points = tuple(zero_points) if isinstance(zero_points, (list, tuple)) else (zero_points,)
    return QuantizedType(st, et, scales, zero_points, quantization_dimension, storage_min, storage_max)


def per_axis_tensor(shape: tuple = (2, 3)) -> TensorType:
    """A tensor of i8 per-axis quantized along dimension 0 (expressed f32;
    scales 0.1 and 0.25, zero points 0 and -3): what an op whose tables
    take per-axis tensors (`Quantization.per_axis`) and whose quantized
    cases come from the seed's per-tensor skeletons is shown in its
    `appended_last` cases — without one, a reading of its tables with no
    per-axis type passed the suite (stop 39: tuple, get_tuple_element,
    get_dimension_size, if, case)."""
    return TensorType(shape, quantized_type("i8", "f32", (0.1, 0.25), (0, -3), 0))


# The spec's functions on types ("Functions on types", "Quantization computations").

def is_quantized(t) -> bool:
    return isinstance(_element(t), QuantizedType)


def is_per_tensor_quantized(t) -> bool:
    return is_quantized(t) and _element(t).is_per_tensor


def is_per_axis_quantized(t) -> bool:
    return is_quantized(t) and _element(t).is_per_axis


def storage_type(t) -> ElementType:
    return _element(t).storage_type


def expressed_type(t) -> ElementType:
    return _element(t).expressed_type


def quantization_dimension(t):
    return _element(t).quantization_dimension


def baseline_element_type(t):
    """`baseline_type`'s element type: scales reset to 1.0, zero points to 0,
    one pair per slice — so two quantized types compare equal here exactly
    when they differ in scales and zero points only (spec: "Quantization
    computations", `baseline_type`).  A non-quantized type is its own."""
    q = _element(t)
    if not isinstance(q, QuantizedType):
        return q
    n = len(q.scales)
    return QuantizedType(q.storage_type, q.expressed_type, (1.0,) * n, (0,) * n, q.quantization_dimension,
                         q.storage_min, q.storage_max)


def same_baseline_type(x: TensorType, y: TensorType, *more: TensorType):
    """`baseline_type(x) = baseline_type(y) [= …]`, dual mode: the same shape and,
    for quantized types, the same storage type, expressed type, storage
    bounds and quantization dimension — scales and zero points may differ
    (the spec's reason for `baseline_type`).  For two non-quantized tensors,
    `same_type`.  (The spec's `baseline_type` sizes the reset scales by
    `dim(x, quantization_dimension)`, which is no dimension for a per-tensor
    type: read as one scale there.)"""
    if more:   # v1.20's "baseline_type(lhs) = baseline_type(rhs) = baseline_type(result)"
        return all_of(same_baseline_type(x, t) for t in (y, *more))
    ex, ey = _element(x), _element(y)
    if is_quantized(ex) != is_quantized(ey):
        return False
    if not is_quantized(ex):
        return same_type(x, y)
    if (ex.storage_type, ex.expressed_type, ex.is_per_axis) != (ey.storage_type, ey.expressed_type, ey.is_per_axis):
        return False
    return And(same_shape(x, y), ex.storage_min == ey.storage_min, ex.storage_max == ey.storage_max,
               True if ex.is_per_tensor else ex.quantization_dimension == ey.quantization_dimension)


def same_quantized_type(x: TensorType, y: TensorType):
    """`type(x) = type(y)` where either may be quantized, dual mode: the same
    baseline and the same scales and zero points (z3 `==` on binary64
    scales is identity of the double, as MLIR compares types).  dsl's
    `same_type` compares element types with Python `==`, which a symbolic
    QuantizedType cannot answer; collectives' "type(results...) =
    type(operands...)" needs this one."""
    ex, ey = _element(x), _element(y)
    if not (is_quantized(ex) and is_quantized(ey)):
        return same_baseline_type(x, y)
    if len(ex.scales) != len(ey.scales) or len(ex.zero_points) != len(ey.zero_points):
        return False
    return And(same_baseline_type(x, y), all_of(a == b for a, b in zip(ex.scales, ey.scales)),
               all_of(a == b for a, b in zip(ex.zero_points, ey.zero_points)))


def _element(t):
    return t.element_type if isinstance(t, TensorType) else t


# --------------------------------------------------------------------------
# Reading and printing MLIR's spelling
# --------------------------------------------------------------------------

_TOKEN = re.compile(r"""\s*(?:
    (?P<head>!quant\.uniform)
  | (?P<num>[-+]?(?:0[xX][0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?))
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>[<>:,{}])
)""", re.X)
_INT = re.compile(r"^[-+]?(?:\d+|0[xX][0-9a-fA-F]+)$")
_STORAGE = re.compile(r"^(si|ui|i|u)(\d+)$")


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos, s = [], 0, text.strip()
    while pos < len(s):
        m = _TOKEN.match(s, pos)
        if not m or m.end() == pos:
            raise ValueError(f"not a quantized type: unexpected {s[pos:pos + 12]!r} in {text!r}")
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


class _Reader:
    def __init__(self, text: str):
        self.text = text
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> str | None:
        return self.toks[self.i][1] if self.i < len(self.toks) else None

    def take(self, kind: str | None = None, value: str | None = None) -> str:
        if self.i >= len(self.toks):
            raise ValueError(f"not a quantized type: {self.text!r} ends early")
        k, v = self.toks[self.i]
        if (kind and k != kind) or (value and v != value):
            raise ValueError(f"not a quantized type: expected {value or kind}, found {v!r} in {self.text!r}")
        self.i += 1
        return v

    def accept(self, value: str) -> bool:
        if self.peek() == value:
            self.i += 1
            return True
        return False


def _int_literal(text: str) -> int:
    """IntegerLiteral ::= ['-' | '+'] DecimalDigits | ['-' | '+'] '0x' HexadecimalDigits."""
    if not _INT.match(text):
        raise ValueError(f"{text!r} is not an IntegerLiteral")
    neg = text.startswith("-")
    body = text.lstrip("+-")
    v = int(body, 16) if body[:2].lower() == "0x" else int(body)
    return -v if neg else v


def _scale_literal(text: str, expressed: ElementType) -> float:
    """A QuantizationScale (FloatLiteral) as the double MLIR holds (module docstring)."""
    body = text.lstrip("+-")
    neg = text.startswith("-")
    if body[:2].lower() == "0x":
        digits = body[2:]
        if len(digits) * 4 == expressed.bits and expressed.bits < 64:
            raw = np.array([int(digits, 16)], dtype=expressed.bits_dtype)
            v = _from_bits_float(raw, expressed)
        elif len(digits) <= 16:
            v = struct.unpack("<d", struct.pack("<Q", int(digits, 16)))[0]
        else:
            raise ValueError(f"hexadecimal scale {text!r} has more than 16 digits")
        return -v if neg else v
    return float(text)


def _from_bits_float(raw: np.ndarray, et: ElementType) -> float:
    """The value of one bit pattern of float type `et`, as a Python float (exact: binary64 holds every format)."""
    return float(np.asarray(from_bits(raw, et)).astype(np.float64)[0])


def _storage_type(name: str) -> ElementType:
    """i8 / si8 (signed), u8 / ui8 (unsigned): MLIR's quant spellings and the spec's IntegerType."""
    m = _STORAGE.match(name)
    if not m:
        raise ValueError(f"{name!r} is not a storage type (QuantizationStorageType ::= IntegerType)")
    sign = "si" if m.group(1) in ("i", "si") else "ui"
    spec_name = f"{sign}{m.group(2)}"
    if spec_name not in ELEMENT_TYPES:
        raise ValueError(f"{name!r}: no integer type of {m.group(2)} bits (IntegerType: 2, 4, 8, 16, 32, 64)")
    return ELEMENT_TYPES[spec_name]


def _param(r: _Reader, expressed: ElementType) -> tuple[float, int]:
    """QuantizationParameter ::= QuantizationScale [':' QuantizationZeroPoint]; a missing zero point is 0."""
    scale = _scale_literal(r.take("num"), expressed)
    zp = _int_literal(r.take("num")) if r.accept(":") else 0
    return scale, zp


def parse_quantized_type(text: str) -> QuantizedType:
    """`!quant.uniform<…>` → QuantizedType (the spec's grammar, module docstring).

    Raises ValueError on anything the grammar does not derive (placeholders
    such as `scale:zp` in the spec's prose included).  Constraints C1–C13 are
    *not* checked here: a type that parses may still be invalid
    (`quantized_violations`), as a program may be.
    """
    r = _Reader(text)
    r.take("head")
    r.take(value="<")
    st = _storage_type(r.take("ident"))
    smin = smax = None
    if r.accept("<"):
        smin = _int_literal(r.take("num"))
        r.take(value=":")
        smax = _int_literal(r.take("num"))
        r.take(value=">")
    r.take(value=":")
    ename = r.take("ident")
    et = element_type(ename)
    if not et.is_float:
        raise ValueError(f"expressed type {ename!r} is not a FloatType")
    qdim = None
    if r.accept(":"):
        qdim = _int_literal(r.take("num"))
    r.take(value=",")
    if r.accept("{"):
        params = [_param(r, et)]
        while r.accept(","):
            params.append(_param(r, et))
        r.take(value="}")
    else:
        params = [_param(r, et)]
    r.take(value=">")
    if r.peek() is not None:
        raise ValueError(f"trailing text after the quantized type in {text!r}")
    return QuantizedType(st, et, tuple(s for s, _ in params), tuple(z for _, z in params), qdim, smin, smax)


def format_scale(s: float) -> str:
    """A scale as MLIR prints a double: `%.6e` where that reads back to the
    same double (`printFloatValue`'s first choice), else the shortest
    decimal that does (Python's repr, with a `.` MLIR's lexer requires:
    `1e-20` → `1.0e-20`); ±inf and NaN as the double's 64 bits in hex
    (MLIR's spelling of special values)."""
    if is_symbolic(s):
        return str(s)          # a sketch for messages; a model's value has the real spelling
    s = float(s)
    if not math.isfinite(s):
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", s))[0]
    short = "%.6e" % s
    if float(short) == s:
        return short
    text = repr(s)
    mant, e, exp = text.partition("e")
    if "." not in mant:
        mant += ".0"
    return mant + e + exp


def _format_param(s, z) -> str:
    return format_scale(s) + (f":{z}" if is_symbolic(z) or z != 0 else "")


def format_quantized_type(q: QuantizedType) -> str:
    """QuantizedType → MLIR's spelling: `i`/`u` storage, `<min:max>` only
    when not the storage type's range, `:dim` when per-axis, a zero point
    only when nonzero, braces (no spaces) iff per-axis — TypeParser.cpp's
    printer.  A per-tensor type with several parameters (a C10 violation)
    prints them in braces, as the spec's grammar allows; scales and zero
    points of different counts (C9) have no spelling (ValueError)."""
    if len(q.scales) != len(q.zero_points):
        raise ValueError(f"{len(q.scales)} scales and {len(q.zero_points)} zero points have no spelling (C9)")
    st = q.storage_type
    out = f"!quant.uniform<{'i' if st.is_signed else 'u'}{st.bits}"
    if not q.has_default_bounds:
        out += f"<{q.storage_min}:{q.storage_max}>"
    out += f":{q.expressed_type.mlir}"
    params = ",".join(_format_param(s, z) for s, z in zip(q.scales, q.zero_points))
    if q.is_per_axis:
        return out + f":{q.quantization_dimension}, {{{params}}}>"
    return out + (f", {params}>" if len(q.scales) == 1 else f", {{{params}}}>")


_QTENSOR = re.compile(r"^\s*tensor\s*<\s*((?:\d+\s*x\s*)*)(!quant\.uniform\s*<.*>)\s*>\s*$", re.S)


def parse_quantized_tensor_type(text: str) -> tuple[tuple[int, ...], QuantizedType]:
    """`tensor<2x3x!quant.uniform<…>>` → (shape, QuantizedType).  Static
    dimension sizes only, as spec/types.parse_type reads tensors."""
    m = _QTENSOR.match(text)
    if not m:
        raise ValueError(f"not a quantized tensor type: {text!r}")
    dims = tuple(int(d) for d in re.split(r"\s*x\s*", m.group(1).strip()) if d)
    return dims, parse_quantized_type(m.group(2))


def format_quantized_tensor_type(shape: Sequence[int], q: QuantizedType) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + format_quantized_type(q) + ">"


# --------------------------------------------------------------------------
# Constraints: spec.md "Types", quantized element types (C1–C11) and
# quantized tensor types (C12, C13).  `t` is a QuantizedType or a
# TensorType whose element type is one; C12 and C13 need the tensor.
# --------------------------------------------------------------------------

def _in_storage_range(x, st: ElementType):
    return And(st.min_value <= x, x <= st.max_value)


def quantized_c1(t):
    """(C1) `type(storage_min) = storage_type`.

    An integer has the storage type when the type holds it:
    min_value(storage_type) <= storage_min <= max_value(storage_type).
    (Implied by C3.)"""
    q = _element(t)
    return _in_storage_range(q.storage_min, q.storage_type)


def quantized_c2(t):
    """(C2) `type(storage_max) = storage_type`.  (Implied by C3.)"""
    q = _element(t)
    return _in_storage_range(q.storage_max, q.storage_type)


def quantized_c3(t):
    """(C3) `min_value(storage_type) <= storage_min < storage_max <= max_value(storage_type)`."""
    q = _element(t)
    st = q.storage_type
    return And(st.min_value <= q.storage_min, q.storage_min < q.storage_max, q.storage_max <= st.max_value)


def quantized_c4(t):
    """(C4) `type(scales...) = expressed_type`.

    Each scale is a value the expressed type can hold (module docstring):
    ±inf or NaN where the type has them; else |scale| <= its largest finite
    value and, unless zero, >= its smallest subnormal (no zero, no negative
    values in f8E8M0FNU)."""
    q = _element(t)
    return all_of(_scale_is_value_of(s, q.expressed_type) for s in q.scales)


def quantized_c5(t):
    """(C5) `0 < scales`."""
    return all_of(_scale_positive(s) for s in _element(t).scales)


def quantized_c6(t):
    """(C6) `is_finite(scales...)`.  (A z3 real is finite: C6 fails only for
    a float scale, or a z3 binary64 one.)"""
    return all_of(_scale_finite(s) for s in _element(t).scales)


def quantized_c7(t):
    """(C7) `storage_min <= zero_points <= storage_max`."""
    q = _element(t)
    return all_of(And(q.storage_min <= z, z <= q.storage_max) for z in q.zero_points)


def quantized_c8(t):
    """(C8) `type(zero_points...) = storage_type`: each zero point within the
    storage type's range.  (Implied by C3 and C7.)"""
    q = _element(t)
    return all_of(_in_storage_range(z, q.storage_type) for z in q.zero_points)


def quantized_c9(t):
    """(C9) `size(scales) = size(zero_points)`."""
    q = _element(t)
    return len(q.scales) == len(q.zero_points)


def quantized_c10(t):
    """(C10) If `is_empty(quantization_dimension)`, then `size(scales) = 1`."""
    q = _element(t)
    return q.is_per_axis or len(q.scales) == 1


def quantized_c11(t):
    """(C11) `0 <= quantization_dimension` (where there is one)."""
    q = _element(t)
    return True if q.is_per_tensor else 0 <= q.quantization_dimension


def quantized_c12(t: TensorType):
    """(C12) For per-axis quantization: `quantization_dimension < rank(self)`."""
    q = _element(t)
    return True if q.is_per_tensor else q.quantization_dimension < len(t.shape)


def quantized_c13(t: TensorType):
    """(C13) For per-axis quantization: `dim(self, quantization_dimension) = size(scales)`.

    Read where the dimension exists: C11 and C12 say when it does not (the
    spec's `dim` is None there, and "None = size" would make C13 fail
    alongside them, so that no type could violate C11 or C12 alone)."""
    q = _element(t)
    if q.is_per_tensor:
        return True
    d = q.quantization_dimension
    return Implies(in_range(d, 0, len(t.shape)), at(tuple(t.shape), d, default=0) == len(q.scales))


ELEMENT_CONSTRAINTS = (quantized_c1, quantized_c2, quantized_c3, quantized_c4, quantized_c5, quantized_c6,
                       quantized_c7, quantized_c8, quantized_c9, quantized_c10, quantized_c11)
TENSOR_CONSTRAINTS = (quantized_c12, quantized_c13)
CONSTRAINTS = ELEMENT_CONSTRAINTS + TENSOR_CONSTRAINTS


def quantized_violations(t) -> list[str]:
    """Names of the constraints a concrete quantized (tensor) type violates
    (C12/C13 only when given the tensor)."""
    cs = CONSTRAINTS if isinstance(t, TensorType) else ELEMENT_CONSTRAINTS
    return [c.__name__ for c in cs if not c(t)]


# Scale predicates, dual mode: float / Fraction, z3 real, z3 floating-point.

def _fpval(x, s):
    return z3.FPVal(float(x), s.sort())


def _scale_positive(s):
    if isinstance(s, z3.FPRef):
        return z3.fpGT(s, _fpval(0.0, s))
    return s > 0


def _scale_finite(s):
    if isinstance(s, z3.FPRef):
        return z3.Not(z3.Or(z3.fpIsInf(s), z3.fpIsNaN(s)))
    if is_symbolic(s):
        return True
    return math.isfinite(s)


def _scale_is_value_of(s, et: ElementType):
    fmt = et.format
    top, tiny = fmt.max_finite, fmt.min_subnormal
    if isinstance(s, z3.FPRef):
        special = z3.Or(z3.fpIsInf(s) if fmt.has_inf else False, z3.fpIsNaN(s) if fmt.has_nan else False)
        a = z3.fpAbs(s)
        zero_ok = z3.fpIsZero(s) if fmt.has_zero else False
        finite = z3.And(z3.fpLEQ(a, _fpval(top, s)), z3.Or(zero_ok, z3.fpGEQ(a, _fpval(tiny, s))),
                        True if fmt.signed else z3.Not(z3.fpIsNegative(s)))
        return z3.Or(special, finite)
    if is_symbolic(s):
        a = z3.If(s >= 0, s, -s)
        return And(a <= z3.Q(top.numerator, top.denominator),
                   z3.Or(s == 0 if fmt.has_zero else False, a >= z3.Q(tiny.numerator, tiny.denominator)),
                   True if fmt.signed else s >= 0)
    if math.isnan(s):
        return fmt.has_nan
    if math.isinf(s):
        return fmt.has_inf and (fmt.signed or s > 0)
    a = abs(Fraction(s))
    return (a <= top and ((s == 0 and fmt.has_zero) or a >= tiny) and (fmt.signed or s >= 0))


def symbolic_quantized_type(storage: ElementType, expressed: ElementType, n: int = 1, per_axis: bool = False,
                            scales: str = "fp", name: str = "q") -> QuantizedType:
    """A QuantizedType whose numbers are z3 terms: structure (storage and
    expressed types, how many parameters, per-tensor or per-axis) fixed,
    storage_min/max, zero points and the quantization dimension z3
    integers, scales z3 binary64 floats (`scales="fp"`, MLIR's holding) or
    reals (`"real"`).  The constraint functions evaluated on it (and on a
    TensorType of it with z3 dimension sizes) are the formulas a generator
    solves or a proof states."""
    if scales == "fp":
        ss = tuple(z3.FP(f"{name}_scale{i}", z3.Float64()) for i in range(n))
    elif scales == "real":
        ss = tuple(z3.Real(f"{name}_scale{i}") for i in range(n))
    else:
        raise ValueError(f"scales: 'fp' or 'real', not {scales!r}")
    zs = tuple(z3.Int(f"{name}_zp{i}") for i in range(n))
    qd = z3.Int(f"{name}_qdim") if per_axis else None
    return QuantizedType(storage, expressed, ss, zs, qd, z3.Int(f"{name}_smin"), z3.Int(f"{name}_smax"))


def concrete_quantized_type(q: QuantizedType, model: z3.ModelRef) -> QuantizedType:
    """A symbolic QuantizedType with a z3 model's values put in (binary64
    scales bit for bit; real scales as the nearest double)."""
    def num(x):
        if not is_symbolic(x):
            return x
        v = model.eval(x, model_completion=True)
        if isinstance(x, z3.FPRef):
            bits = model.eval(z3.fpToIEEEBV(x), model_completion=True).as_long()
            return struct.unpack("<d", struct.pack("<Q", bits))[0]
        if z3.is_int_value(v):
            return v.as_long()
        return float(Fraction(v.numerator_as_long(), v.denominator_as_long()))
    return QuantizedType(q.storage_type, q.expressed_type, tuple(num(s) for s in q.scales),
                         tuple(num(z) for z in q.zero_points), num(q.quantization_dimension),
                         num(q.storage_min), num(q.storage_max))


# Quantized tensor constants (spec.md "Constants": QuantizedTensorConstant).

def quantized_constant_c1(literal, t: TensorType) -> bool:
    """(C1) `has_syntax(quantized_tensor_literal, storage_type(quantized_tensor_type))`:
    every element literal an integer the storage type holds."""
    st = storage_type(t)
    if isinstance(literal, (list, tuple)):
        return all(quantized_constant_c1(x, t) for x in literal)
    return isinstance(literal, int) and not isinstance(literal, bool) and st.min_value <= literal <= st.max_value


def quantized_constant_c2(literal, t: TensorType) -> bool:
    """(C2) `has_shape(quantized_tensor_literal, shape(quantized_tensor_type))`
    (a bare element literal is a splat, as the grammar's ElementLiteral allows)."""
    def has_shape(lit, shape) -> bool:
        if not isinstance(lit, (list, tuple)):
            return len(shape) == 0
        return len(shape) > 0 and len(lit) == shape[0] and all(has_shape(x, shape[1:]) for x in lit)
    return (not isinstance(literal, (list, tuple))) or has_shape(literal, tuple(t.shape))


# --------------------------------------------------------------------------
# Semantics: exact, step by step as the spec writes them.
# Each float step (convert, `/`, `+`, `*`) is one IEEE operation in the
# expressed type: its exact result (integer ratios of the operands' exact
# values; spec/ieee.py where IEEE decides outright: NaN, ±inf, zeros)
# rounded once, to nearest with ties to even, into the format (`round_to`).
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class _Facts:
    """What rounding into a float format needs, computed once per format."""

    precision: int
    emin: int
    max_finite: float
    overflow: tuple          # (+, -) past the largest finite value
    has_zero: bool
    has_negative_zero: bool
    has_inf: bool
    signed: bool


@lru_cache(maxsize=None)
def _facts(et: ElementType) -> _Facts:
    fmt = et.format
    return _Facts(fmt.precision, fmt.emin, float(fmt.max_finite),
                  (float(fmt.decode(fmt.overflow_bits(False))), float(fmt.decode(fmt.overflow_bits(True)))),
                  fmt.has_zero, fmt.has_negative_zero, fmt.has_inf, fmt.signed)


def _round_ratio(n: int, d: int, et: ElementType) -> float:
    """n / d (d > 0, n != 0) rounded to nearest, ties to even, into `et`:
    the nearest multiple of the quantum 2^(e - p + 1) of its binade (never
    finer than the subnormal quantum), by exact integer division."""
    f = _facts(et)
    neg = n < 0
    a = -n if neg else n
    if neg and not f.signed:
        raise ValueError(f"{et} holds no negative value")
    e = a.bit_length() - d.bit_length()          # 2^(e-1) < a/d < 2^(e+1)
    if (a if e >= 0 else a << -e) < (d << e if e >= 0 else d):
        e -= 1                                   # now 2^e <= a/d < 2^(e+1)
    k = max(e, f.emin) - f.precision + 1
    num, den = (a << -k, d) if k <= 0 else (a, d << k)
    m, rem = divmod(num, den)
    if 2 * rem > den or (2 * rem == den and m & 1):
        m += 1
    if m == 0:
        if not f.has_zero:
            raise ValueError(f"{et} has no zero")
        return -0.0 if neg and f.has_negative_zero else 0.0
    try:
        v = math.ldexp(m, k)
    except OverflowError:                        # past binary64 itself: past every format's range
        v = math.inf
    if v > f.max_finite:
        return f.overflow[1] if neg else f.overflow[0]
    return -v if neg else v


def round_to(v, et: ElementType) -> float:
    """The exact value `v` (a Fraction or int, or a float standing for its
    exact value — ±0, ±inf, NaN as IEEE gives them) rounded to nearest,
    ties to even, into float type `et`, as the Python float of that value
    (binary64 holds every format's values).  Past the largest finite value:
    what the format's `overflow_bits` say (±inf; NaN with no infinity; ±max
    with neither)."""
    f = _facts(et)
    if isinstance(v, float):
        if math.isnan(v):
            return v
        if math.isinf(v):
            return v if f.has_inf else f.overflow[1 if v < 0 else 0]
        if v == 0:
            if not f.has_zero:
                raise ValueError(f"{et} has no zero")
            return v if f.has_negative_zero else 0.0
        n, d = v.as_integer_ratio()
    else:
        v = Fraction(v)
        if v == 0:
            return round_to(0.0, et)
        n, d = v.numerator, v.denominator
    return _round_ratio(n, d, et)


def _divide(x: float, s: float, et: ElementType) -> float:
    """IEEE division of two values of `et`, rounded into `et`."""
    if ieee.is_special(x, s) or x == 0 or s == 0:
        return round_to(float(ieee.division(x, s)), et)
    xn, xd = x.as_integer_ratio()
    sn, sd = s.as_integer_ratio()
    n, d = xn * sd, xd * sn
    return _round_ratio(-n if d < 0 else n, -d if d < 0 else d, et)


def _add(x: float, y: float, et: ElementType) -> float:
    """IEEE addition of two values of `et`, rounded into `et` (an exact zero sum as IEEE signs it)."""
    if ieee.is_special(x, y) or x == 0 or y == 0 or x == -y:
        return round_to(float(ieee.addition(x, y)), et)
    xn, xd = x.as_integer_ratio()
    yn, yd = y.as_integer_ratio()
    return _round_ratio(xn * yd + yn * xd, xd * yd, et)


def _multiply(x: float, y: float, et: ElementType) -> float:
    if ieee.is_special(x, y) or x == 0 or y == 0:
        return round_to(float(ieee.multiplication(x, y)), et)
    xn, xd = x.as_integer_ratio()
    yn, yd = y.as_integer_ratio()
    return _round_ratio(xn * yn, xd * yd, et)


def expressed_scales(q: QuantizedType) -> tuple[float, ...]:
    """`constant(scale, expressed_type)` for each scale: the double rounded into the expressed type."""
    return tuple(round_to(float(s), q.expressed_type) for s in q.scales)


def _param_index(shape: tuple, q: QuantizedType) -> np.ndarray:
    """Which (scale, zero point) each element uses: `compute_scales` /
    `compute_zero_points` — 0 everywhere per-tensor, the index along
    `quantization_dimension` per-axis."""
    if q.is_per_tensor:
        return np.zeros(shape, dtype=np.int64)
    d = q.quantization_dimension
    if not 0 <= d < len(shape) or shape[d] != len(q.scales):
        raise ValueError(f"shape {shape} does not fit {q.mlir} (C12/C13)")
    return np.indices(shape, dtype=np.int64)[d] if len(shape) else np.zeros((), np.int64)


def _dequantize_one(i: int, zp: int, scale: float, et: ElementType) -> float:
    """(i - zp) exactly (module docstring), `convert` into the expressed
    type (rounded), times the expressed scale (rounded)."""
    return _multiply(round_to(i - zp, et), scale, et)


def dequantize(values, q: QuantizedType) -> np.ndarray:
    """The spec's `dequantize`: storage values (any integer array) of type `q`
    → values of the expressed type (numpy array of its dtype)."""
    if np.ma.isMaskedArray(values) and np.ma.getmaskarray(values).any():
        raise ValueError("dequantize of an unspecified storage value (a masked quantize result)")
    ints = np.asarray(np.ma.getdata(values)).astype(object)
    idx = _param_index(ints.shape, q)
    scales = expressed_scales(q)
    et = q.expressed_type
    table: dict = {}
    out = []
    for i, k in zip(ints.reshape(-1).tolist(), idx.reshape(-1).tolist()):
        key = (int(i), k)
        if key not in table:
            table[key] = _dequantize_one(int(i), int(q.zero_points[k]), scales[k], et)
        out.append(table[key])
    return np.array(out, dtype=np.float64).reshape(ints.shape).astype(et.numpy)


def _clamp(lo: float, x: float, hi: float) -> float:
    """StableHLO `clamp` = min(max(operand, min), max), NaN-propagating (IEEE maximum/minimum)."""
    return ieee.minimum(ieee.maximum(x, lo), hi)


@dataclass(frozen=True)
class _Quantizer:
    """One (scale, zero point) of a type, with the spec's converted constants:
    `convert(zero_points, expressed_type)`, `convert(storage_min/max, …)`."""

    scale: float
    zp: float
    lo: float
    hi: float
    et: ElementType
    st: ElementType

    @staticmethod
    def of(q: QuantizedType, k: int) -> "_Quantizer":
        et = q.expressed_type
        return _Quantizer(expressed_scales(q)[k], round_to(int(q.zero_points[k]), et),
                          round_to(int(q.storage_min), et), round_to(int(q.storage_max), et), et, q.storage_type)

    def __call__(self, x: float) -> int | None:
        """One element of `quantize`; None where the spec's final `convert`
        (float → storage integer) is undefined: NaN, ±inf, or a value the
        storage type does not hold (module docstring)."""
        scaled = _divide(x, self.scale, self.et)
        shifted = _add(scaled, self.zp, self.et)
        clamped = _clamp(self.lo, shifted, self.hi)
        if not math.isfinite(clamped):
            return None
        n = round(clamped)                       # Python rounds a float's tie to even, exactly
        return n if self.st.min_value <= n <= self.st.max_value else None


def quantize(x, q: QuantizedType) -> np.ma.MaskedArray:
    """The spec's `quantize`: values of the expressed type → storage values.

    x / scale, + zero point, clamp to the converted [storage_min,
    storage_max], round half to even, convert — each float step rounded in
    the expressed type (spec.md "Quantization computations", read in
    order: the clamp comes before the rounding).  Returns the storage
    values (the storage dtype), masked where the spec's last `convert` is
    undefined (NaN; a rounded bound outside the storage type)."""
    a = np.asarray(x)
    et = q.expressed_type
    if a.dtype != np.dtype(et.numpy):
        raise TypeError(f"quantize takes values of the expressed type {et} ({np.dtype(et.numpy)}), not {a.dtype}")
    idx = _param_index(a.shape, q)
    quantizers = [_Quantizer.of(q, k) for k in range(len(q.scales))]
    if et.name in _IEEE_NATIVE:
        return _quantize_on_arrays(a, idx, quantizers, q.storage_type)
    table: dict = {}
    flat = []
    for v, k in zip(a.astype(np.float64).reshape(-1).tolist(), idx.reshape(-1).tolist()):
        key = (v, math.copysign(1.0, v), k)
        if key not in table:
            table[key] = quantizers[k](v)
        flat.append(table[key])
    mask = np.array([v is None for v in flat], dtype=bool).reshape(a.shape)
    data = np.array([0 if v is None else v for v in flat], dtype=object).reshape(a.shape).astype(q.storage_type.numpy)
    return np.ma.MaskedArray(data, mask=mask)


# Expressed types whose numpy arithmetic is IEEE's, correctly rounded: f32 and f64 natively; f16 computed
# in f32 and rounded once more, which is innocuous for +, −, ×, ÷ since 24 >= 2·11 + 2 (Figueroa, "When is
# double rounding innocuous?", SIGNUM 1995).  The other formats take `_Quantizer`'s exact steps.
_IEEE_NATIVE = ("f16", "f32", "f64")


def _quantize_on_arrays(a: np.ndarray, idx: np.ndarray, quantizers: list, st: ElementType) -> np.ma.MaskedArray:
    """`quantize` on whole arrays, the same steps as `_Quantizer` in the
    expressed type's own numpy arithmetic (`_IEEE_NATIVE`): each IEEE
    operation rounds to nearest as `_divide` and `_add` do, numpy's
    maximum/minimum propagate NaN as `_clamp`'s IEEE ones, `np.rint`
    rounds half to even as Python's `round`.  Held equal to the exact
    steps on hard inputs (tests/spec/test_quantized_ops.py)."""
    dt = a.dtype
    pick = lambda field: np.asarray([getattr(z, field) for z in quantizers], dtype=np.float64).astype(dt)[idx]  # noqa: E731
    with np.errstate(all="ignore"):
        scaled = (a / pick("scale")).astype(dt)
        shifted = (scaled + pick("zp")).astype(dt)
        clamped = np.minimum(np.maximum(shifted, pick("lo")), pick("hi")).astype(np.float64)
        n = np.rint(clamped)
        mask = ~np.isfinite(n) | (n < st.min_value) | (n > st.max_value)
        data = np.where(mask, 0, n).astype(np.int64).astype(st.numpy)
    return np.ma.MaskedArray(data, mask=mask)


@dataclass(frozen=True)
class Quantized:
    """A quantized tensor value: its storage values and its element type."""

    values: np.ndarray
    type: QuantizedType

    @property
    def shape(self) -> tuple:
        return np.shape(self.values)


def uniform_dequantize(operand: Quantized) -> np.ndarray:
    """spec.md "uniform_dequantize": `result = dequantize(operand)`."""
    return dequantize(operand.values, operand.type)


def uniform_quantize(operand, result_type: QuantizedType) -> np.ma.MaskedArray:
    """spec.md "uniform_quantize": `quantize(operand, type(result))` for a
    float operand; `quantize(dequantize(operand), type(result))` for a quantized one."""
    if isinstance(operand, Quantized):
        return quantize(dequantize(operand.values, operand.type), result_type)
    return quantize(operand, result_type)


def dequantize_op_quantize(op: Callable, *inputs_and_output_type):
    """The spec's `dequantize_op_quantize(op, *inputs, output_type)`:
    dequantize each input (`Quantized`), apply `op` to the expressed-type
    arrays, quantize into `output_type`.  `op` must answer in the
    expressed type's dtype: the spec's float op is one of that type, and a
    wider answer would skip its rounding (TypeError).  The spec states this
    for per-tensor types ("Per-axis quantization is work in progress",
    #1574); per-axis types are computed by the same steps."""
    *inputs, output_type = inputs_and_output_type
    float_inputs = [dequantize(x.values, x.type) for x in inputs]
    return quantize(_expressed(op(*float_inputs), output_type), output_type)


def _expressed(result, q: QuantizedType) -> np.ndarray:
    r = np.asarray(result)
    if r.dtype != np.dtype(q.expressed_type.numpy):
        raise TypeError(f"op answered {r.dtype}; the expressed type is {q.expressed_type}")
    return r


def dequantize_batch_norm_grad_or_training_quantize(op: Callable, *inputs_and_output_types):
    """The spec's namesake: the last three arguments are the result types."""
    inputs, output_types = inputs_and_output_types[:-3], inputs_and_output_types[-3:]
    float_results = op(*[dequantize(x.values, x.type) for x in inputs])
    return tuple(quantize(_expressed(r, t), t) for r, t in zip(float_results, output_types))


_COMPARE = {"EQ": np.equal, "NE": np.not_equal, "GE": np.greater_equal, "GT": np.greater,
            "LE": np.less_equal, "LT": np.less}


def dequantize_compare(lhs: Quantized, rhs: Quantized, comparison_direction: str) -> np.ndarray:
    """`compare(dequantize(lhs), dequantize(rhs), comparison_direction, FLOAT)`."""
    return _COMPARE[comparison_direction](dequantize(lhs.values, lhs.type), dequantize(rhs.values, rhs.type))


def dequantize_select_quantize(pred, on_true: Quantized, on_false: Quantized, output_type: QuantizedType):
    """`quantize(select(pred, dequantize(on_true), dequantize(on_false)), output_type)`."""
    t = dequantize(on_true.values, on_true.type)
    f = dequantize(on_false.values, on_false.type)
    return quantize(_expressed(np.where(np.asarray(pred, dtype=bool), t, f), output_type), output_type)


def hybrid_dequantize_then_op(op: Callable, lhs: np.ndarray, rhs: Quantized):
    """`op(lhs, dequantize(rhs))`, lhs a float array of rhs's expressed type (the spec's assert)."""
    if np.asarray(lhs).dtype != np.dtype(rhs.type.expressed_type.numpy):
        raise TypeError(f"lhs must be of rhs's expressed type {rhs.type.expressed_type}")
    return op(lhs, dequantize(rhs.values, rhs.type))


def quantize_bounds(lo, hi, q: QuantizedType, index: int = 0) -> tuple[int, int]:
    """The storage values `quantize` gives anywhere in [lo, hi] (two values
    of the expressed type, lo <= hi, no NaN) lie in [quantize(lo),
    quantize(hi)]: every step of `quantize` — division by a positive scale,
    adding a constant, clamping, rounding to integers, each rounding to
    nearest — is non-decreasing.  So an op whose float result is known only
    to a range (an `approx` op such as `tan`) quantizes to an integer range
    (`index`: which per-axis parameter)."""
    quantizer = _Quantizer.of(q, index)
    a, b = (quantizer(round_to(float(v), q.expressed_type)) for v in (lo, hi))
    if a is None or b is None:
        raise ValueError("quantize is undefined at a bound")
    return a, b


# --------------------------------------------------------------------------
# A case's `dtype` for quantized tensors: the family, not the numbers
# --------------------------------------------------------------------------

_FAMILY = re.compile(r"^quant_([a-z0-9]+)_([a-zA-Z0-9]+?)(_axis)?$")


def family_name(q: QuantizedType) -> str:
    """`quant_<storage>_<expressed>[_axis]` (quant_i8_f32, quant_i8_f32_axis):
    what a suite's `dtype` names for a case on quantized tensors — the
    storage and expressed types and whether per-axis, so skips, filters and
    reports group by them, not by each type's scales."""
    return f"quant_{q.storage_type.mlir}_{q.expressed_type.mlir}{'_axis' if q.is_per_axis else ''}"


def is_family_name(name: str) -> bool:
    """Whether `name` is a `family_name` of storage and expressed types that exist."""
    m = _FAMILY.match(name)
    if not m:
        return False
    try:
        storage, expressed = _storage_type(m.group(1)), element_type(m.group(2))
    except ValueError:
        return False
    return storage.is_integer and expressed.is_float
