"""Types of the StableHLO spec ("Types" section): element types, tensor, token and tuple types.

Everything here is a *fact of the spec*: the exact parameters of every float
format, the range of every integer type, how each type is written in MLIR,
how its values are laid out as little-endian raw bits, and how far apart two
values are in ULPs.  `suites/` judges outputs with these facts alone;
rounding an exact real into a format is execution and lives in `oracle/`.

Values of a type travel as numpy arrays (ml_dtypes for the narrow formats).
Raw bits travel as unsigned integer arrays of the storage width; 2-, 4- and
6-bit types occupy one byte each (low bits), i1 one byte (0 or 1), and a complex
element is two component patterns (real first) in a trailing axis of 2.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Union

import ml_dtypes
import numpy as np


# How a format encodes NaN — the one fact that differs most between the
# formats StableHLO has and will have (a row each; a new encoding is a row and
# the branches of `is_nan_bits` / `nan_bits` / `max_finite_bits`):
#   "ieee": exponent all ones, mantissa nonzero (f16, f32, f8E5M2, f8E4M3 …);
#   "fn":   only the all-ones magnitude, one per sign, no infinity (f8E4M3FN,
#           f8E8M0FNU's 0xFF);
#   "fnuz": only the pattern of negative zero, 1.000…0, which then is no zero
#           (f8E4M3FNUZ, f8E5M2FNUZ, f8E4M3B11FNUZ);
#   "none": no NaN at all (f4E2M1FN, f6E2M3FN, f6E3M2FN).
NAN_ENCODINGS = ("ieee", "fn", "fnuz", "none")


@dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point format, declared by its facts.

    Shape: a sign bit unless `signed` is False (f8E8M0FNU), `exponent_bits`,
    `mantissa_bits` (stored; `precision` counts the hidden bit).  Values:
    `exponent_bias` (None: IEEE's 2^(e-1) − 1; FNUZ formats add one,
    f8E4M3B11FNUZ's is 11), `has_inf`, how NaN is encoded (`nan`, one of
    NAN_ENCODINGS), `has_zero` (False: exponent code 0 is a normal binade,
    no zero and no subnormals — f8E8M0FNU).  `tolerance_ulp` is the default
    ULP tolerance of `approx` ops in the format (spec/accuracy.py; None:
    1 ULP up to 11 bits of precision — narrow formats computed wider and
    rounded once more — else 4, a good libm's budget).

    Everything else — the largest finite value, the patterns of ±0, ±inf
    and NaN, what an overflow rounds to, the order of patterns — is derived
    here, so rounding, generators, causes, printing and backends that ask
    these properties take a new format with no edit of their own.
    """

    name: str
    exponent_bits: int
    mantissa_bits: int
    has_inf: bool = True
    nan: str = "ieee"
    exponent_bias: int | None = None
    signed: bool = True
    has_zero: bool = True
    tolerance_ulp: int | None = None

    def __post_init__(self):
        if self.nan not in NAN_ENCODINGS:
            raise ValueError(f"{self.name}: NaN encoding {self.nan!r} is not one of {NAN_ENCODINGS}")
        if self.has_inf and self.nan != "ieee":
            raise ValueError(f"{self.name}: an infinity takes IEEE's all-ones exponent, so NaN must be 'ieee'")
        if self.nan == "ieee" and self.mantissa_bits == 0:
            raise ValueError(f"{self.name}: IEEE NaNs need a mantissa bit")
        if self.nan == "fnuz" and not (self.signed and self.has_zero):
            raise ValueError(f"{self.name}: an FNUZ NaN is the pattern of negative zero")

    @property
    def bits(self) -> int:
        return int(self.signed) + self.exponent_bits + self.mantissa_bits

    @property
    def precision(self) -> int:
        return self.mantissa_bits + 1

    @property
    def bias(self) -> int:
        return (1 << (self.exponent_bits - 1)) - 1 if self.exponent_bias is None else self.exponent_bias

    @property
    def has_nan(self) -> bool:
        return self.nan != "none"

    @property
    def has_subnormals(self) -> bool:
        """Exponent code 0 holds zero and the subnormals (every format but
        those without a zero, where it is a normal binade)."""
        return self.has_zero and self.mantissa_bits > 0

    @property
    def has_negative_zero(self) -> bool:
        return self.signed and self.has_zero and self.nan != "fnuz"

    @property
    def emin(self) -> int:
        """Exponent of the smallest normal number."""
        return (1 if self.has_zero else 0) - self.bias

    @property
    def emax(self) -> int:
        """Exponent of the largest finite number."""
        return (self.max_finite_bits >> self.mantissa_bits) - self.bias

    @property
    def max_finite_bits(self) -> int:
        """The pattern of the largest finite value (sign clear): below the
        infinities and IEEE NaNs' exponent, below the all-ones NaN (FN), or
        the all-ones magnitude itself (FNUZ, no NaN)."""
        if self.nan == "ieee":
            return self.exponent_mask - 1
        if self.nan == "fn":
            return self.magnitude_mask - 1
        return self.magnitude_mask

    @property
    def max_finite(self) -> Fraction:
        return self.decode(self.max_finite_bits)

    @property
    def min_normal(self) -> Fraction:
        return _pow2(self.emin)

    @property
    def min_subnormal(self) -> Fraction:
        """The smallest positive value (the smallest normal where there are no subnormals)."""
        return _pow2(self.emin - self.mantissa_bits) if self.has_subnormals else self.min_normal

    @property
    def tolerance(self) -> int:
        """The default ULP tolerance of an `approx` op in this format."""
        if self.tolerance_ulp is not None:
            return self.tolerance_ulp
        return 1 if self.precision <= 11 else 4

    @property
    def unit_roundoff(self) -> Fraction:
        """u = 2^-p: the relative error bound of one correctly rounded operation."""
        return _pow2(-self.precision)

    # --- bit layout -------------------------------------------------------
    @property
    def sign_mask(self) -> int:
        """The sign bit (0 in a format without one)."""
        return 1 << (self.bits - 1) if self.signed else 0

    @property
    def exponent_mask(self) -> int:
        return ((1 << self.exponent_bits) - 1) << self.mantissa_bits

    @property
    def mantissa_mask(self) -> int:
        return (1 << self.mantissa_bits) - 1

    @property
    def magnitude_mask(self) -> int:
        """Every bit but the sign."""
        return self.exponent_mask | self.mantissa_mask

    def is_nan_bits(self, b: int) -> bool:
        if self.nan == "fnuz":
            return b == self.sign_mask
        mag = b & self.magnitude_mask
        if self.nan == "ieee":
            return (mag & self.exponent_mask) == self.exponent_mask and (mag & self.mantissa_mask) != 0
        return self.nan == "fn" and mag == self.magnitude_mask

    def is_inf_bits(self, b: int) -> bool:
        return self.has_inf and (b & self.magnitude_mask) == self.exponent_mask

    def inf_bits(self, negative: bool) -> int:
        if not self.has_inf:
            raise ValueError(f"{self.name} has no infinity")
        return self.exponent_mask | (self.sign_mask if negative else 0)

    def nan_bits(self, negative: bool = False) -> int:
        """The canonical quiet NaN (of that sign where NaNs have one)."""
        if self.nan == "ieee":
            return self.exponent_mask | (1 << (self.mantissa_bits - 1)) | (self.sign_mask if negative else 0)
        if self.nan == "fn":
            return self.magnitude_mask | (self.sign_mask if negative else 0)
        if self.nan == "fnuz":
            return self.sign_mask
        raise ValueError(f"{self.name} has no NaN")

    def zero_bits(self, negative: bool) -> int:
        """±0: negative zero where the format has one, else +0 (FNUZ)."""
        if not self.has_zero:
            raise ValueError(f"{self.name} has no zero")
        return self.sign_mask if negative and self.has_negative_zero else 0

    def overflow_bits(self, negative: bool) -> int:
        """What a finite value past the largest finite (rounding to nearest)
        becomes: ±inf; NaN with the value's sign where there is no infinity
        (the OCP FN convention, ml_dtypes' casts); the largest finite of
        that sign where there is no NaN either (saturation)."""
        if self.has_inf:
            return self.inf_bits(negative)
        if self.has_nan:
            return self.nan_bits(negative)
        return self.max_finite_bits | (self.sign_mask if negative else 0)

    def decode(self, b: int) -> Union[Fraction, float]:
        """Exact value of a bit pattern: a Fraction for finite numbers, a float
        for ±inf and NaN, and `-0.0` (a float) for negative zero so the sign survives."""
        neg = bool(b & self.sign_mask)
        if self.is_nan_bits(b):
            return float("nan")
        if self.is_inf_bits(b):
            return float("-inf") if neg else float("inf")
        e = (b & self.exponent_mask) >> self.mantissa_bits
        m = b & self.mantissa_mask
        if e == 0 and self.has_subnormals:
            mag = Fraction(m) * _pow2(self.emin - self.mantissa_bits)
        else:
            mag = Fraction((1 << self.mantissa_bits) | m) * _pow2(e - self.bias - self.mantissa_bits)
        if mag == 0:
            return -0.0 if neg else Fraction(0)
        return -mag if neg else mag

    def ordinal(self, b: int) -> int:
        """Position of a non-NaN bit pattern on the number line, counted in ULP
        steps from zero (±0 both map to 0, so the ULP distance of -0 and +0 is 0)."""
        mag = b & self.magnitude_mask
        return -mag if b & self.sign_mask else mag

    def ulp(self, x: Fraction) -> Fraction:
        """ULP of a finite value x in this format (the gap at |x|, Goldberg's
        definition; subnormal range: the subnormal spacing)."""
        x = abs(Fraction(x))
        if x < self.min_normal:
            return self.min_subnormal
        e = _floor_log2(x)
        e = min(e, self.emax)
        return _pow2(e - self.mantissa_bits)


def long_double_exact() -> bool:
    """Whether long double arithmetic carries a 64-bit significand here and
    now.  On x86-64 it is the x87 80-bit format — unless something in this
    process set the x87 precision control to 53 (or 24) bits, which rounds
    every long double operation to that while `np.finfo` still says 64: a
    test run found one that did, and the oracle's long double routes (f64
    results, f64 fft, f64 dot products and residuals) then state bounds that
    do not hold.  The control word is per thread and any library may set
    it, so the routes ask at each use (a few scalar operations)."""
    if np.finfo(np.longdouble).nmant < 63:
        return False
    one = np.longdouble(1)
    tiny = np.ldexp(one, -63)
    return bool((one + tiny) - one == tiny)


def _pow2(e: int) -> Fraction:
    return Fraction(1 << e) if e >= 0 else Fraction(1, 1 << -e)


def _floor_log2(x: Fraction) -> int:
    """floor(log2(x)) for a positive Fraction, exactly."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if _pow2(e) > x:
        e -= 1
    elif _pow2(e + 1) <= x:
        e += 1
    return e


F8E4M3FN = FloatFormat("f8E4M3FN", 4, 3, has_inf=False, nan="fn")
F8E5M2 = FloatFormat("f8E5M2", 5, 2)
BF16 = FloatFormat("bf16", 8, 7)
F16 = FloatFormat("f16", 5, 10)
F32 = FloatFormat("f32", 8, 23)
F64 = FloatFormat("f64", 11, 52)

# The formats StableHLO v1.20's "Types" adds to the seed's (FloatType's
# grammar there), each from its RFC in ../shared/upstream-1.20/rfcs/:
# 20230321-fp8_fnuz.md (E4M3FNUZ, E5M2FNUZ: NaN is the pattern of negative
# zero, no infinity, biases 8 and 16 — one more than IEEE's), 20230309-e4m3b11.md
# (E4M3B11FNUZ: bias 11), 20240808-f8E4M3_f8E3M4.md (IEEE-like: infinities,
# NaNs S.1…1.M with M nonzero), 20241001-microscaling-formats.md (f4E2M1FN,
# f6E2M3FN, f6E3M2FN: no infinity, no NaN; f8E8M0FNU: no sign, no mantissa,
# no zero, NaN 0xFF).  tests/spec/test_v120_formats.py holds each against
# ml_dtypes, pattern by pattern.
F8E4M3FNUZ = FloatFormat("f8E4M3FNUZ", 4, 3, has_inf=False, nan="fnuz", exponent_bias=8)
F8E5M2FNUZ = FloatFormat("f8E5M2FNUZ", 5, 2, has_inf=False, nan="fnuz", exponent_bias=16)
F8E4M3B11FNUZ = FloatFormat("f8E4M3B11FNUZ", 4, 3, has_inf=False, nan="fnuz", exponent_bias=11)
F8E4M3 = FloatFormat("f8E4M3", 4, 3)
F8E3M4 = FloatFormat("f8E3M4", 3, 4)
F4E2M1FN = FloatFormat("f4E2M1FN", 2, 1, has_inf=False, nan="none")
F6E2M3FN = FloatFormat("f6E2M3FN", 2, 3, has_inf=False, nan="none")
F6E3M2FN = FloatFormat("f6E3M2FN", 3, 2, has_inf=False, nan="none")
F8E8M0FNU = FloatFormat("f8E8M0FNU", 8, 0, has_inf=False, nan="fn", signed=False, has_zero=False)


@dataclass(frozen=True)
class ElementType:
    """One element type of the spec.

    `kind` is one of "bool", "si", "ui", "float", "complex".  `name` is the
    spec's spelling (si32, complex<f32>); `mlir` is how MLIR programs write it
    (signless i32 stands for si32).

    `since`: None for the seed's types; "v1.20" for those StableHLO v1.20's
    "Types" adds (si2, ui2 and nine float formats).  Every type is read,
    printed, rounded into and carried by the backends alike; only the type
    sets the seed's Inputs tables name (BOOLEAN_TYPES … ALL_TYPES, which
    spec/dsl's groups and so the suite's generator enumerate) hold the
    seed's alone, so `generate` writes the suite it wrote before.  The
    v1.20 sets are beside them (ALL_TYPES_V1_20 …) for the ops that take them.
    """

    name: str
    kind: str
    bits: int
    mlir: str
    numpy: object
    format: FloatFormat | None = None
    component: "ElementType | None" = None
    since: str | None = None

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"ElementType({self.name})"

    def __reduce__(self):
        """One object per element type, across pickling too (worker
        processes, the distributed engine): unpickled, an element type is
        the registry's own, so `is` and `==` never disagree."""
        return (element_type, (self.name,))

    def __deepcopy__(self, memo):
        return self

    # Spec predicates ("is_integer", "is_float" … as the spec's prose uses them).
    @property
    def is_bool(self) -> bool:
        return self.kind == "bool"

    @property
    def is_signed(self) -> bool:
        return self.kind == "si"

    @property
    def is_unsigned(self) -> bool:
        return self.kind == "ui"

    @property
    def is_integer(self) -> bool:
        return self.kind in ("si", "ui")

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_complex(self) -> bool:
        return self.kind == "complex"

    # A quantized element type (spec/quantized.py's QuantizedType) answers True.
    is_quantized = False

    @property
    def storage_bits(self) -> int:
        """Bits per element in our raw-bit layout (2-, 4- and 6-bit types and i1
        take a byte, the pattern in its low bits: ml_dtypes' layout and MLIR's
        raw dense storage, which rounds a width up to whole bytes)."""
        return max(8, self.bits)

    @property
    def bits_dtype(self):
        """Unsigned dtype of one stored bit pattern (for complex: of one component)."""
        if self.is_complex:
            return self.component.bits_dtype
        return np.dtype(f"<u{self.storage_bits // 8}")

    @property
    def min_value(self) -> int:
        if self.kind == "si":
            return -(1 << (self.bits - 1))
        if self.kind in ("ui", "bool"):
            return 0
        raise TypeError(f"{self.name} has no integer range")

    @property
    def max_value(self) -> int:
        if self.kind == "si":
            return (1 << (self.bits - 1)) - 1
        if self.kind == "ui":
            return (1 << self.bits) - 1
        if self.kind == "bool":
            return 1
        raise TypeError(f"{self.name} has no integer range")

    def wrap(self, v: int) -> int:
        """Two's-complement wrap of an exact integer into this type's range."""
        v &= (1 << self.bits) - 1
        if self.kind == "si" and v >= 1 << (self.bits - 1):
            v -= 1 << self.bits
        return v

    def int_to_bits(self, v: int) -> int:
        return v & ((1 << self.bits) - 1)

    def bits_to_int(self, b: int) -> int:
        return self.wrap(b)


def _et(name, kind, bits, mlir, np_dtype, fmt=None, component=None, since=None):
    return ElementType(name, kind, bits, mlir, np.dtype(np_dtype), fmt, component, since)


def float_type(fmt: FloatFormat, np_dtype, since: str | None = None) -> ElementType:
    """The element type of a float format — its whole declaration beside the
    FloatFormat: spelled as the format is named (MLIR writes it so too),
    stored in its own bits, held in numpy as `np_dtype` (ml_dtypes has every
    format StableHLO names)."""
    return _et(fmt.name, "float", fmt.bits, fmt.name, np_dtype, fmt, since=since)


I1 = _et("i1", "bool", 1, "i1", np.bool_)
SI4 = _et("si4", "si", 4, "i4", ml_dtypes.int4)
SI8 = _et("si8", "si", 8, "i8", np.int8)
SI16 = _et("si16", "si", 16, "i16", np.int16)
SI32 = _et("si32", "si", 32, "i32", np.int32)
SI64 = _et("si64", "si", 64, "i64", np.int64)
UI4 = _et("ui4", "ui", 4, "ui4", ml_dtypes.uint4)
UI8 = _et("ui8", "ui", 8, "ui8", np.uint8)
UI16 = _et("ui16", "ui", 16, "ui16", np.uint16)
UI32 = _et("ui32", "ui", 32, "ui32", np.uint32)
UI64 = _et("ui64", "ui", 64, "ui64", np.uint64)
E_F8E4M3FN = float_type(F8E4M3FN, ml_dtypes.float8_e4m3fn)
E_F8E5M2 = float_type(F8E5M2, ml_dtypes.float8_e5m2)
E_BF16 = float_type(BF16, ml_dtypes.bfloat16)
E_F16 = float_type(F16, np.float16)
E_F32 = float_type(F32, np.float32)
E_F64 = float_type(F64, np.float64)
C64 = _et("complex<f32>", "complex", 64, "complex<f32>", np.complex64, component=E_F32)
C128 = _et("complex<f64>", "complex", 128, "complex<f64>", np.complex128, component=E_F64)

# StableHLO v1.20's additions (`ElementType.since`).
V120 = "v1.20"
SI2 = _et("si2", "si", 2, "i2", ml_dtypes.int2, since=V120)
UI2 = _et("ui2", "ui", 2, "ui2", ml_dtypes.uint2, since=V120)
E_F4E2M1FN = float_type(F4E2M1FN, ml_dtypes.float4_e2m1fn, V120)
E_F6E2M3FN = float_type(F6E2M3FN, ml_dtypes.float6_e2m3fn, V120)
E_F6E3M2FN = float_type(F6E3M2FN, ml_dtypes.float6_e3m2fn, V120)
E_F8E3M4 = float_type(F8E3M4, ml_dtypes.float8_e3m4, V120)
E_F8E4M3 = float_type(F8E4M3, ml_dtypes.float8_e4m3, V120)
E_F8E4M3FNUZ = float_type(F8E4M3FNUZ, ml_dtypes.float8_e4m3fnuz, V120)
E_F8E4M3B11FNUZ = float_type(F8E4M3B11FNUZ, ml_dtypes.float8_e4m3b11fnuz, V120)
E_F8E5M2FNUZ = float_type(F8E5M2FNUZ, ml_dtypes.float8_e5m2fnuz, V120)
E_F8E8M0FNU = float_type(F8E8M0FNU, ml_dtypes.float8_e8m0fnu, V120)

# The seed's type groups, as its Inputs tables name them (spec/dsl's BOOLEAN …
# ANY): the suite is generated from these, so they hold the seed's types only.
BOOLEAN_TYPES = (I1,)
SIGNED_TYPES = (SI4, SI8, SI16, SI32, SI64)
UNSIGNED_TYPES = (UI4, UI8, UI16, UI32, UI64)
INTEGER_TYPES = SIGNED_TYPES + UNSIGNED_TYPES
FLOAT_TYPES = (E_F8E4M3FN, E_F8E5M2, E_BF16, E_F16, E_F32, E_F64)
COMPLEX_TYPES = (C64, C128)
ALL_TYPES = BOOLEAN_TYPES + INTEGER_TYPES + FLOAT_TYPES + COMPLEX_TYPES

# The same groups in StableHLO v1.20 ("Types": SignedIntegerType …
# FloatType, in its grammar's order).
SIGNED_TYPES_V1_20 = (SI2,) + SIGNED_TYPES
UNSIGNED_TYPES_V1_20 = (UI2,) + UNSIGNED_TYPES
INTEGER_TYPES_V1_20 = SIGNED_TYPES_V1_20 + UNSIGNED_TYPES_V1_20
FLOAT_TYPES_V1_20 = (E_F4E2M1FN, E_F6E2M3FN, E_F6E3M2FN, E_F8E3M4, E_F8E4M3, E_F8E4M3FN, E_F8E4M3FNUZ,
                     E_F8E4M3B11FNUZ, E_F8E5M2, E_F8E5M2FNUZ, E_F8E8M0FNU, E_BF16, E_F16, E_F32, E_F64)
ALL_TYPES_V1_20 = BOOLEAN_TYPES + INTEGER_TYPES_V1_20 + FLOAT_TYPES_V1_20 + COMPLEX_TYPES

# What v1.20 adds to a seed table, and the seed type each addition stands in
# for when a suite builds programs in it (generators/v1_20_types.py).  v1.20's
# Inputs tables use the seed's words ("floating-point type", "integer type",
# "tensor of any supported type"), and its "Types" widens what the words
# mean: a seed table naming every seed float takes every v1.20 float, one
# naming every signed (unsigned) integer takes si2 (ui2).  A table naming a
# few types by hand (rng_bit_generator's ui64 state) names them still.
_V1_20_WIDENING = ((FLOAT_TYPES, tuple(t for t in FLOAT_TYPES_V1_20 if t.since)),
                   (SIGNED_TYPES, (SI2,)), (UNSIGNED_TYPES, (UI2,)))
V1_20_STAND_IN = {**{t: E_F8E4M3FN for t in FLOAT_TYPES_V1_20 if t.since}, SI2: SI4, UI2: UI4}


def widened_to_v1_20(types: tuple) -> tuple:
    """A seed Inputs/Outputs table's element types as StableHLO v1.20 reads
    the same words: the seed's, then the v1.20 types of each group the table
    names in full (`_V1_20_WIDENING`)."""
    extra = tuple(t for group, added in _V1_20_WIDENING if set(group) <= set(types) for t in added)
    return tuple(types) + extra


# Every element type, by spec spelling, in v1.20's order: what programs,
# suites and the command line may name (`element_type`), seed's or not.
ELEMENT_TYPES: dict[str, ElementType] = {t.name: t for t in ALL_TYPES_V1_20}
_BY_MLIR = {t.mlir: t for t in ELEMENT_TYPES.values()}
# Spec spellings are accepted too (si32 as well as i32), and c64/c128 as CLI shorthands.
_ALIASES = {**_BY_MLIR, **ELEMENT_TYPES, "c64": C64, "c128": C128}
_BY_NUMPY = {np.dtype(t.numpy): t for t in ELEMENT_TYPES.values()}


def element_type(name: str) -> ElementType:
    """Look an element type up by its spec or MLIR spelling."""
    try:
        return _ALIASES[name]
    except KeyError:
        raise ValueError(f"unknown element type {name!r}; known: {', '.join(ELEMENT_TYPES)}") from None


def element_type_of_dtype(dtype) -> ElementType | None:
    """The element type a numpy/ml_dtypes dtype holds (one per dtype: bool is
    i1, ml_dtypes.int2 si2, float4_e2m1fn f4E2M1FN), or None."""
    return _BY_NUMPY.get(np.dtype(dtype))


def complex_type(t: ElementType) -> ElementType:
    """complex_type(f32) = complex<f32> (the spec's helper)."""
    return {E_F32: C64, E_F64: C128}[t]


def holds_every_value(src: ElementType, dst: ElementType) -> bool:
    """Whether every value of the float (or complex) type `src` is a value of
    `dst`, ±0, ±inf and NaN included: precision, largest exponent and
    smallest subnormal all within `dst`'s, and an infinity where `src` has
    one.  Then converting `src` to `dst` is exact (bf16, f16 → f32; f8 →
    bf16); f16 ↔ bf16 and f8E4M3FN ↔ f8E5M2 round.  A type holds itself."""
    if src == dst:
        return True
    if src.is_complex and dst.is_complex:
        return holds_every_value(src.component, dst.component)
    if not (src.is_float and dst.is_float):
        return False
    a, b = src.format, dst.format
    return (a.precision <= b.precision and a.emax <= b.emax and a.min_subnormal >= b.min_subnormal
            and (b.has_inf or not a.has_inf) and (b.has_nan or not a.has_nan) and (b.has_zero or not a.has_zero)
            and (b.has_negative_zero or not a.has_negative_zero) and (b.signed or not a.signed))


# --------------------------------------------------------------------------
# Value types
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class TensorType:
    """tensor<d0 x … x element_type>.  Dimension sizes are Python ints, or z3
    integer expressions while a solver is choosing them."""

    shape: tuple
    element_type: ElementType

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def mlir(self) -> str:
        dims = "".join(f"{d}x" for d in self.shape)
        return f"tensor<{dims}{self.element_type.mlir}>"

    def __str__(self) -> str:
        return self.mlir

    @property
    def num_elements(self) -> int:
        n = 1
        for d in self.shape:
            n *= int(d)
        return n


@dataclass(frozen=True)
class TokenType:
    mlir = "!stablehlo.token"

    def __str__(self) -> str:
        return self.mlir


@dataclass(frozen=True)
class TupleType:
    types: tuple

    @property
    def mlir(self) -> str:
        return "tuple<" + ", ".join(t.mlir for t in self.types) + ">"

    def __str__(self) -> str:
        return self.mlir


@dataclass(frozen=True)
class FutureType:
    """v1.20's `!stablehlo.future<T…>`: what `async_start` yields and
    `async_done` waits for (spec/added/async_start.py).  `types`: the
    tensors the future will hold, in order."""
    types: tuple

    @property
    def mlir(self) -> str:
        return "!stablehlo.future<" + ", ".join(t.mlir for t in self.types) + ">"

    def __str__(self) -> str:
        return self.mlir


ValueType = Union[TensorType, TokenType, TupleType, FutureType]

_TENSOR_RE = re.compile(r"^tensor<((?:\d+x)*)(.+)>$")


def parse_type(text: str) -> ValueType:
    """MLIR type syntax → type object (tensor, token, tuple); a tensor of a
    quantized element type holds a `spec.quantized.QuantizedType`."""
    s = text.strip()
    if s in ("!stablehlo.token", "token"):
        return TokenType()
    if s.startswith("tuple<") and s.endswith(">"):
        inner = s[len("tuple<"):-1]
        return TupleType(tuple(parse_type(p) for p in _split_top(inner)) if inner.strip() else ())
    if s.startswith("!stablehlo.future<") and s.endswith(">"):   # v1.20's async values (FutureType)
        inner = s[len("!stablehlo.future<"):-1]
        return FutureType(tuple(parse_type(p) for p in _split_top(inner)) if inner.strip() else ())
    if "!quant." in s:   # v1.20's quantized element types: their own grammar (spec/quantized.py)
        from .quantized import parse_quantized_tensor_type
        dims, q = parse_quantized_tensor_type(s)
        return TensorType(dims, q)
    m = _TENSOR_RE.match(s)
    if not m:
        raise ValueError(f"not a StableHLO value type: {text!r}")
    dims = tuple(int(d) for d in m.group(1).split("x") if d)
    return TensorType(dims, element_type(m.group(2)))


def _split_top(s: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts]


# --------------------------------------------------------------------------
# Raw bits: the one layout every record and backend agrees on
# --------------------------------------------------------------------------

def to_bits(array: np.ndarray, et: ElementType) -> np.ndarray:
    """Values → raw bit patterns (unsigned ints of the storage width)."""
    # np.array(order="C") keeps 0-d arrays 0-d (ascontiguousarray would not);
    # views go through a flat copy so they work at every rank.
    a = np.array(np.asarray(array).astype(et.numpy, copy=False), order="C")
    flat = a.reshape(-1)
    if et.is_bool:
        return a.astype(np.uint8)
    if et.bits < 8:   # 2-, 4- and 6-bit types: ml_dtypes keeps the pattern in a byte's low bits
        return (flat.view(np.uint8) & np.uint8((1 << et.bits) - 1)).reshape(a.shape)
    if et.is_complex:
        return flat.view(et.bits_dtype).reshape(a.shape + (2,))
    return flat.view(et.bits_dtype).reshape(a.shape)


def from_bits(bits: np.ndarray, et: ElementType) -> np.ndarray:
    """Raw bit patterns → values of `et` (numpy/ml_dtypes array)."""
    b = np.array(np.asarray(bits).astype(et.bits_dtype, copy=False), order="C")
    if et.is_bool:
        return b.astype(np.bool_)
    if et.bits < 8:   # the pattern in the byte's low bits, as ml_dtypes reads it (a view, never a value cast)
        return (b & np.uint8((1 << et.bits) - 1)).reshape(-1).view(et.numpy).reshape(b.shape)
    if et.is_complex:
        return b.reshape(-1).view(et.numpy).reshape(b.shape[:-1])
    return b.reshape(-1).view(et.numpy).reshape(b.shape)


def ulp_distance(a_bits: int, b_bits: int, fmt: FloatFormat) -> float:
    """ULP distance of two bit patterns of one float format: 0 for two NaNs,
    inf if exactly one is NaN, else the count of representable steps between
    them (so -0 and +0 are 0 apart, and the largest finite is 1 from inf)."""
    an, bn = fmt.is_nan_bits(a_bits), fmt.is_nan_bits(b_bits)
    if an or bn:
        return 0.0 if an and bn else float("inf")
    return float(abs(fmt.ordinal(a_bits) - fmt.ordinal(b_bits)))


def exact_values(array: np.ndarray, et: ElementType) -> list:
    """Flat row-major list of exact Python values: bool, int, float (every
    spec float format is a subset of binary64, so the f64 widening is exact,
    ±0/±inf/NaN included: a NaN keeps its sign, its signaling bit and its
    payload, left-aligned — `widen_nans`) or complex — what semantics
    compute with."""
    a = np.asarray(array).reshape(-1)
    if et.is_bool:
        return [bool(v) for v in a.astype(np.bool_).tolist()]
    if et.is_integer:
        return [int(v) for v in a.astype(np.int64 if et.is_signed or et.bits < 64 else np.uint64).tolist()]
    if et.is_complex:
        return [complex(v) for v in a.astype(np.complex128).tolist()]
    return [float(v) for v in widen_nans(a, a.astype(np.float64), et).tolist()]


def widen_nans(a: np.ndarray, wide: np.ndarray, et: ElementType) -> np.ndarray:
    """`wide` (a's float64 widening) with a's NaNs widened bit for bit:
    sign, then the trailing significand left-aligned in binary64's.  The
    casts do not: numpy's and ml_dtypes' quiet a signaling NaN (f32, bf16,
    f8E5M2), and ml_dtypes' drop an f8E5M2 payload — which moves a NaN in
    IEEE totalOrder (compare's TOTALORDER).  f8E4M3FN's one NaN per sign has
    no payload to keep."""
    fmt = et.format
    nan = np.isnan(wide)
    if et.bits >= 64 or fmt.nan != "ieee" or not nan.any():
        return wide
    b = np.asarray(to_bits(a[nan], et)).astype(np.uint64)
    sign = (b & np.uint64(fmt.sign_mask)) != 0
    mant = (b & np.uint64(fmt.mantissa_mask)) << np.uint64(52 - fmt.mantissa_bits)
    out = wide.copy()
    out[nan] = ((np.uint64(0x7FF) << np.uint64(52)) | mant | (sign.astype(np.uint64) << np.uint64(63))).view(np.float64)
    return out


def nan_mask(bits: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """Which bit patterns of a float format are NaN (vectorised; unsigned
    storage arrays stay in numpy's integer loops, as do object arrays of
    Python ints)."""
    b = np.asarray(bits)
    mag = b & (b.dtype.type(fmt.magnitude_mask) if b.dtype.kind == "u" else fmt.magnitude_mask)
    if fmt.nan == "ieee":
        out = ((mag & fmt.exponent_mask) == fmt.exponent_mask) & ((mag & fmt.mantissa_mask) != 0)
    elif fmt.nan == "fn":
        out = mag == fmt.magnitude_mask
    elif fmt.nan == "fnuz":
        out = b == (b.dtype.type(fmt.sign_mask) if b.dtype.kind == "u" else fmt.sign_mask)
    else:
        out = np.zeros(np.shape(b), dtype=bool)
    return np.asarray(out, dtype=bool)   # 0-d object arrays give Python scalars otherwise


def ordinals(bits: np.ndarray, et: ElementType) -> np.ndarray:
    """Order-preserving integers of bit patterns (`to_bits` layout, complex
    per component): floats by sign and magnitude (±0 are both 0, ±inf the
    ends of the finite numbers, NaN past them — callers treat NaN apart),
    integers their value, i1 0 and 1.  numpy int64 wherever the values fit
    (every float format: |ordinal| < 2^63; integers but ui64), Python ints
    (object arrays) for ui64.  A difference of two int64 ordinals can
    overflow: `ordinal_distance` computes it safely."""
    c = et.component if et.is_complex else et.storage_type if et.is_quantized else et
    b = np.asarray(bits)
    if c.is_float:
        b = b.astype(np.uint64, copy=False) if b.dtype != object else b.astype(np.uint64)
        mag = (b & np.uint64(c.format.magnitude_mask)).astype(np.int64)
        return np.where((b & np.uint64(c.format.sign_mask)) != 0, -mag, mag)
    if c.storage_bits == 64 and not c.is_signed:
        return b.astype(object)
    if c.storage_bits == 64:
        return b.astype(np.uint64).view(np.int64) if b.dtype != object else b.astype(np.uint64).view(np.int64)
    b = b.astype(np.int64)
    if c.is_signed:
        return np.where(b >= (1 << (c.bits - 1)), b - (1 << c.bits), b)
    return b


def ordinal_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|a − b| of two `ordinals` arrays as float64, without int64 overflow:
    exact below 2^53 (every distance a tolerance or a report compares),
    rounded above (values that far apart are simply wrong)."""
    if a.dtype == object or b.dtype == object:
        return np.abs(a.astype(object) - b.astype(object)).astype(float)
    same = (a >= 0) == (b >= 0)
    with np.errstate(over="ignore"):
        near = np.abs(a - b).astype(float)
    far = np.abs(a.astype(float)) + np.abs(b.astype(float))
    return np.where(same, near, far)


def top_ordinal(fmt: FloatFormat) -> int:
    """The ordinal a range of values stops at: +inf's, or the largest
    finite value's in a format without infinities (f8E4M3FN, whose next
    pattern is NaN)."""
    return fmt.inf_bits(False) if fmt.has_inf else fmt.max_finite_bits


def ulp_range(bits: np.ndarray, et: ElementType, tolerance: int) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) ordinals of the values within `tolerance` ULPs of float
    `bits` (flattened, per component), clamped at the format's ends (no
    overflow whatever the integer type); a NaN's range is itself.  The one
    reading of an "ulp" expectation as a range: the judge's widths and the
    oracle's propagation both use it."""
    b = np.reshape(bits, -1)
    o = ordinals(b, et)
    if not tolerance:
        return o, o
    c = et.component if et.is_complex else et
    top, t = top_ordinal(c.format), tolerance
    lo = np.maximum(o, -top + t) - o.dtype.type(t) if t < top else np.full_like(o, -top)
    hi = np.minimum(o, top - t) + o.dtype.type(t) if t < top else np.full_like(o, top)
    nan = nan_mask(b, c.format)
    if nan.any():
        lo[nan] = o[nan]
        hi[nan] = o[nan]
    return lo, hi


def from_ordinals(ords: np.ndarray, et: ElementType) -> np.ndarray:
    """The bit patterns of `ordinals` (0 is +0)."""
    c = et.component if et.is_complex else et.storage_type if et.is_quantized else et
    o = np.asarray(ords)
    if c.is_float and o.dtype != object:   # |o| < 2^63: numpy's loops
        out = np.abs(o).astype(np.uint64)
        out = np.where(o < 0, out | np.uint64(c.format.sign_mask), out)
        return out.astype(et.bits_dtype)
    o = o.astype(object)
    if c.is_float:
        out = np.where(o < 0, (-o) | c.format.sign_mask, o)
    else:
        out = np.where(o < 0, o + (1 << c.bits), o)
    return out.astype(et.bits_dtype)


def raw_bytes(array: np.ndarray, et: ElementType) -> bytes:
    """The values' `to_bits` patterns as little-endian bytes, row-major: the
    layout of suite hex and of MLIR's `dense<"0x…">` alike."""
    return to_bits(np.asarray(array), et).astype(et.bits_dtype.newbyteorder("<")).tobytes()


def tensor_to_hex(array: np.ndarray, t: TensorType) -> str:
    """The hex of `raw_bytes`: how suites and the command protocol carry a tensor."""
    return raw_bytes(array, t.element_type).hex()


def tensor_from_hex(hexstr: str, t: TensorType) -> np.ndarray:
    """Values of type `t` from the hex of their raw bytes (`tensor_to_hex`);
    raises ValueError when the hex is not that many bytes of that type."""
    et = t.element_type
    raw = np.frombuffer(bytes.fromhex(hexstr), dtype=et.bits_dtype.newbyteorder("<"))
    shape = tuple(t.shape) + ((2,) if et.is_complex else ())
    return from_bits(raw.reshape(shape), et)


def dense_literal(array: np.ndarray, t: TensorType) -> str:
    """`dense<"0x…"> : tensor<…>`: the value's raw little-endian bytes, so every
    bit pattern (NaN payloads, -0, subnormals) reaches the program exactly.
    2-, 4- and 6-bit types and i1 take one byte per element, complex stores (re, im)
    pairs — MLIR's own raw layout, which `to_bits` shares."""
    return f'dense<"0x{raw_bytes(array, t.element_type).hex().upper()}"> : {t.mlir}'
