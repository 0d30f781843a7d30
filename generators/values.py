"""Input values, with the special values on purpose.

Floats: ±0, ±inf (formats that have it), NaN, the smallest and largest
subnormal, ±min normal, ±largest finite, ±1, and random values (half over
the whole normal range, half of moderate magnitude), plus the values the op
declares hard for the operand (`Exercise.hard_floats`: sin near multiples of
π/2, exp near overflow, …; families in spec/samples.py).  Integers: min,
max, 0, ±1, min+1, max-1 and random ones — or, where the op declares the
values that matter for an operand (`Exercise.integer_values`: shift
amounts), those.  Complex: pairs of component specials.

Every value is an array of the type's numpy dtype (ml_dtypes for the narrow
formats), built from exact bit patterns with `spec.types.from_bits` where the
pattern matters.  Randomness comes only from the numpy Generator passed in.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from ..spec.exercise import Exercise
from ..spec.types import ElementType, from_bits, nan_mask

NO_FACTS = Exercise()

EXHAUSTIVE_LIMIT = 256   # input combinations covered exhaustively in one case
GRID_LIMIT = 256         # elements of a special-values grid case
SPECIAL_FRACTION = 0.4   # share of special values in an ordinary case


# --------------------------------------------------------------------------
# Float specials
# --------------------------------------------------------------------------

def _labelled_specials(et: ElementType) -> list[tuple[str, int]]:
    """(what, bit pattern) of the format's special values, each magnitude
    positive then negative, read from the format's declaration (spec/types.py
    FloatFormat): a value the format lacks (a zero, subnormals, an infinity,
    a NaN, a negative twin that is NaN in FNUZ) is simply absent."""
    f = et.format
    mags = []
    if f.has_zero:
        mags.append(("zero", 0))
    if f.has_subnormals:
        mags += [("smallest subnormal", 1), ("largest subnormal", f.mantissa_mask)]
    mags += [("min normal", (1 if f.has_zero else 0) << f.mantissa_bits),
             ("largest finite", f.max_finite_bits),
             ("one", f.bias << f.mantissa_bits)]
    out = []
    for what, m in mags:
        out.append((what, m))
        if f.signed and not f.is_nan_bits(m | f.sign_mask):
            out.append((what, m | f.sign_mask))
    if f.has_inf:
        out += [("inf", f.inf_bits(False)), ("inf", f.inf_bits(True))]
    if f.has_nan:
        out.append(("nan", f.nan_bits()))
        if f.nan_bits(True) != f.nan_bits():
            out.append(("nan", f.nan_bits(True)))
    # Each pattern once, under its first name: in f4E2M1FN the one subnormal
    # is both the smallest and the largest, and 1.0 is the smallest normal.
    seen: set = set()
    return [(what, b) for what, b in out if not (b in seen or seen.add(b))]


def float_special_bits(et: ElementType) -> list[int]:
    """Bit patterns of the format's special values (positive and negative)."""
    return [b for _, b in _labelled_specials(et)]


def float_specials(et: ElementType) -> np.ndarray:
    return from_bits(np.array(float_special_bits(et), dtype=np.uint64), et)


def _specials_of(et: ElementType, keep) -> np.ndarray:
    return from_bits(np.array([b for what, b in _labelled_specials(et) if what in keep], dtype=np.uint64), et)


def core_float_specials(et: ElementType) -> np.ndarray:
    """The specials that matter in pairs (for grids of binary ops): all but the largest subnormal."""
    return _specials_of(et, ("zero", "smallest subnormal", "min normal", "largest finite", "one", "inf", "nan"))


def random_floats(et: ElementType, rng, n: int) -> np.ndarray:
    """Random finite normal numbers: half over the whole range, half of
    moderate magnitude (|x| in [1/16, 32)), random signs (none in an
    unsigned format)."""
    f = et.format
    max_field = f.max_finite_bits >> f.mantissa_bits
    low = 1 if f.has_zero else 0
    wide = rng.integers(low, max_field + 1, size=n)
    narrow = np.clip(rng.integers(f.bias - 4, f.bias + 5, size=n), low, max_field)
    field = np.where(rng.random(n) < 0.5, wide, narrow).astype(np.uint64)
    mant = rng.integers(0, 1 << f.mantissa_bits, size=n, dtype=np.uint64)
    sign = rng.integers(0, 2, size=n).astype(np.uint64)
    bits = (sign * np.uint64(f.sign_mask)) | (field << np.uint64(f.mantissa_bits)) | mant
    bits = np.where(nan_mask(bits, f), bits - np.uint64(1), bits)   # S.1111.111 is NaN in FN formats: step down one
    return from_bits(bits, et)


# --------------------------------------------------------------------------
# Integer and boolean values
# --------------------------------------------------------------------------

def integer_specials(et: ElementType, exercise: Exercise = NO_FACTS, operand: int = 0) -> np.ndarray:
    """The type's boundary values, or the values the op declares for this
    operand (wrapped into the type), each once in first-occurrence order."""
    lo, hi = et.min_value, et.max_value
    declared = exercise.integer_values(et, operand) if exercise.integer_values else None
    if declared is not None:
        vals = [et.wrap(v) for v in declared]
    else:
        vals = [lo, hi, 0, 1, lo + 1, hi - 1, 2, hi // 2, (hi // 2) + 1]
        if et.is_signed:
            vals += [-1, -2]
        vals = [v for v in vals if lo <= v <= hi]   # si2 holds -2 … 1: no 2
    vals = list(dict.fromkeys(vals))   # unique, first occurrence order
    return from_bits(np.array([et.int_to_bits(v) for v in vals], dtype=np.uint64), et)


def random_integers(et: ElementType, rng, n: int) -> np.ndarray:
    """Half small (|x| ≤ 16), half uniform over the type's bit patterns."""
    nbytes = et.storage_bits // 8
    raw = rng.integers(0, 256, size=(n, nbytes), dtype=np.uint8).view(et.bits_dtype).reshape(n)
    raw = raw & et.bits_dtype.type((1 << et.bits) - 1) if et.bits < et.storage_bits else raw
    full = from_bits(raw, et)
    small_lo = max(et.min_value, -16)
    small = rng.integers(small_lo, min(et.max_value, 16) + 1, size=n).astype(np.int64).astype(et.numpy)
    pick = rng.random(n) < 0.5
    return np.where(pick, small, full).astype(et.numpy)


# --------------------------------------------------------------------------
# Pools and arrays
# --------------------------------------------------------------------------

def _complex(re: np.ndarray, im: np.ndarray, et: ElementType) -> np.ndarray:
    out = np.empty(re.shape, dtype=et.numpy)
    out.real = re
    out.imag = im
    return out


def specials(et: ElementType, exercise: Exercise = NO_FACTS, operand: int = 0) -> np.ndarray:
    """Every special value of the type for this op's operand (hard arguments included);
    a quantized type's are its storage type's (its values cross as storage integers)."""
    if et.is_quantized:
        return integer_specials(et.storage_type, exercise, operand)
    if et.is_bool:
        return np.array([False, True])
    if et.is_integer:
        return integer_specials(et, exercise, operand)
    if et.is_complex:
        c = core_float_specials(et.component)
        re, im = np.meshgrid(c, c, indexing="ij")
        return _complex(re.ravel(), im.ravel(), et)
    pool = [float_specials(et)]
    if exercise.hard_floats:
        pool.append(exercise.hard_floats(et, operand).astype(et.numpy))
    return np.concatenate(pool)


def grid_specials(et: ElementType, exercise: Exercise = NO_FACTS, operand: int = 0) -> np.ndarray:
    """The smaller set crossed with the other operands' in a grid case."""
    if et.is_float:
        return core_float_specials(et)
    if et.is_complex:
        c = _specials_of(et.component, ("zero", "one", "inf", "nan"))[:7]   # ±0, ±1, ±inf, NaN
        re, im = np.meshgrid(c, c, indexing="ij")
        return _complex(re.ravel(), im.ravel(), et)
    return specials(et, exercise, operand)


def random_values(et: ElementType, rng, n: int) -> np.ndarray:
    if et.is_quantized:   # storage integers (spec/quantized.py)
        return random_integers(et.storage_type, rng, n)
    if et.is_bool:
        return rng.integers(0, 2, size=n).astype(np.bool_)
    if et.is_integer:
        return random_integers(et, rng, n)
    if et.is_complex:
        return _complex(random_floats(et.component, rng, n), random_floats(et.component, rng, n), et)
    return random_floats(et, rng, n)


def typical_values(et: ElementType, rng, n: int) -> np.ndarray:
    """Values a model's inputs have: floats from the standard normal
    distribution rounded to the format (by magnitude in a format without a
    sign; clipped to its largest finite value in one with no infinity, so
    none is NaN), integers and quantized storage in [-16, 16] (within the
    type), random booleans.  `run --random`'s default: random_values' draw
    spans the whole exponent range, where a 512-term dot product of f32
    inputs overflows on most elements and a real program's outputs are
    infinities and NaNs, not the values it computes."""
    if et.is_bool:
        return rng.integers(0, 2, size=n).astype(np.bool_)
    if et.is_quantized or et.is_integer:
        it = et.storage_type if et.is_quantized else et
        return rng.integers(max(it.min_value, -16), min(it.max_value, 16) + 1, size=n).astype(np.int64).astype(it.numpy)
    if et.is_complex:
        return _complex(typical_values(et.component, rng, n), typical_values(et.component, rng, n), et)
    f = et.format
    x = rng.standard_normal(n)
    if not f.signed:
        x = np.abs(x)
    if not f.has_inf:
        top = float(f.max_finite)
        x = np.clip(x, -top, top)
    return x.astype(et.numpy)


class Draw(NamedTuple):
    """One way `run --random --values NAME` draws an element's value."""
    values: Callable   # (element type, rng, n) -> n values
    words: str         # how `run`'s inputs line says it drew them


DRAWS = {"typical": Draw(typical_values, "typical values (floats N(0, 1), integers in [-16, 16])"),
         "wide": Draw(random_values, "values over the whole range")}
RUN_DRAW = "typical"   # run --random's default


def fill(et: ElementType, shape, rng, exercise: Exercise = NO_FACTS, operand: int = 0,
         special_fraction: float = SPECIAL_FRACTION, draw=random_values) -> np.ndarray:
    """An array of `shape`: special values (in random positions) and random
    ones (`draw`: random_values, the suite's, unless a caller picks one of DRAWS' `values`)."""
    n = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
    vals = draw(et, rng, n)
    if n and special_fraction > 0:
        sp = specials(et, exercise, operand)
        pick = rng.random(n) < special_fraction
        idx = rng.integers(0, len(sp), size=n)
        vals = np.where(pick, sp[idx], vals).astype(et.numpy) if not et.is_complex else _where_c(pick, sp[idx], vals, et)
    return vals.reshape(shape)


def _where_c(pick, a, b, et):
    # np.where on complex keeps components bit-exact; spelled out for clarity.
    return _complex(np.where(pick, a.real, b.real), np.where(pick, a.imag, b.imag), et)


def all_patterns(et: ElementType) -> np.ndarray:
    """Every value of a narrow type, by bit pattern (i1: both)."""
    if et.is_bool:
        return np.array([False, True])
    return from_bits(np.arange(1 << et.bits, dtype=np.uint64), et)


def exhaustive_size(types: list[ElementType]) -> int:
    n = 1
    for et in types:
        if et.is_complex or et.bits > 8:
            return 1 << 62
        n *= 2 if et.is_bool else (1 << et.bits)
    return n


def cross(pools: list[np.ndarray], rng, limit: int = GRID_LIMIT) -> list[np.ndarray]:
    """The cross product of the pools, one flat array per operand; sampled
    down to `limit` combinations (without repeats) when larger."""
    sizes = [len(p) for p in pools]
    total = int(np.prod(sizes, dtype=np.int64))
    if total <= limit:
        idx = np.arange(total)
    else:
        idx = np.sort(rng.choice(total, size=limit, replace=False))
    out = []
    for i, p in enumerate(pools):
        stride = int(np.prod(sizes[i + 1:], dtype=np.int64))
        out.append(p[(idx // stride) % sizes[i]])
    return out
