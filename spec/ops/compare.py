"""compare — element-wise comparison (spec section "compare").

Findings:
* The seed's Inputs table lists `compare_type` (I4) as an ordinary input, yet
  its own `select_and_scatter` example writes a `compare` without it (MLIR
  makes it optional).  We model it as optional; absent, the comparison is the
  one C3 allows for the element type (SIGNED, UNSIGNED, FLOAT).
* TOTALORDER "uses the combination of `totalOrder` and `compareQuietEqual`
  operations from IEEE-754" — the seed does not say which direction uses
  which.  XLA (seed 002) orders by totalOrder alone (-NaN < -inf < … < -0 <
  +0 < … < +inf < +NaN; equal only for identical encodings).  Read with
  `compareQuietEqual` deciding EQ/NE (and LT/GT as totalOrder and not
  quiet-equal), -0 and +0 are equal and a NaN never equals itself.  The two
  readings differ only for pairs of zeros and pairs of NaNs; there the
  result is declared implementation-defined with both alternatives.  The
  order of NaNs of one sign by payload is implementation-defined in IEEE 754
  itself; we take the encoding order, as XLA does.
* Complex: lexicographic on (real, imag) with IEEE quiet comparisons, so a
  NaN component makes every direction but NE false.
"""

import numpy as np

from ..dsl import (ANY, BOOLEAN, Attribute, Elementwise, EnumAttr, Generic, ImplDefined, OpSpec, Operand,
                   Or, Result, same_shape)
from ..dsl.quantization import PER_TENSOR
from ..quantized import baseline_element_type
from .. import ieee
from ..exercise import Chosen, Exercise
from ..symbolic import Skeleton
from ..types import I1, TensorType, element_type, element_type_of_dtype, from_bits, to_bits

DIRECTIONS = ("EQ", "NE", "GE", "GT", "LE", "LT")
COMPARE_TYPES = ("FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED")


def compare_c1(op):
    """(C1) `lhs` and `rhs` have the same element type.
    v1.20 reads `baseline_element_type(lhs) = baseline_element_type(rhs)`: the
    same for every non-quantized type; two per-tensor quantized operands may
    differ in scales and zero points (`dequantize_compare` compares their
    dequantized values, as `FLOAT`: C3 names no compare_type for quantized
    types — spec-findings)."""
    return baseline_element_type(op.lhs) == baseline_element_type(op.rhs)


def compare_c2(op):
    """(C2) `lhs`, `rhs`, and `result` have the same shape."""
    return same_shape(op.lhs, op.rhs, op.result)


def legal_compare_types(et) -> tuple:
    """The `compare_type` values C3 allows for element type `et` (first: the default)."""
    if et.is_signed:
        return ("SIGNED",)
    if et.is_unsigned or et.is_bool:
        return ("UNSIGNED",)
    if et.is_float:
        return ("FLOAT", "TOTALORDER")
    return ("FLOAT",)  # complex


def compare_c3(op):
    """(C3) Given `E` is the `lhs` element type, the following are legal values of
       `compare_type`:
  * If `E` is signed integer type, `compare_type` = `SIGNED`.
  * If `E` is unsigned integer or boolean type, `compare_type` = `UNSIGNED`.
  * If `E` is floating-point type,
    `compare_type` $\\in$ {`FLOAT`, `TOTALORDER`}.
  * If `E` is complex type, `compare_type` = `FLOAT`."""
    ct = op.compare_type
    return Or(ct is None, ct in legal_compare_types(op.lhs.element_type))


def infer(op):
    return {"result": TensorType(op.lhs.shape, I1)}


def ordered(direction: str, a, b) -> bool:
    """`a <direction> b` with Python's comparisons (IEEE quiet ones on floats)."""
    return {"EQ": a == b, "NE": a != b, "GE": a >= b, "GT": a > b, "LE": a <= b, "LT": a < b}[direction]


def lexicographic(direction: str, a: complex, b: complex) -> bool:
    """Lexicographic comparison of (real, imag) pairs with IEEE quiet comparisons."""
    re_eq = a.real == b.real
    if direction == "EQ":
        return re_eq and a.imag == b.imag
    if direction == "NE":
        return not (re_eq and a.imag == b.imag)
    strict = {"GE": "GT", "GT": "GT", "LE": "LT", "LT": "LT"}[direction]
    return ordered(strict, a.real, b.real) or (re_eq and ordered(direction, a.imag, b.imag))


def total_order_compare(direction: str, a: float, b: float):
    """TOTALORDER on floats, with the seed's ambiguity declared (module docstring)."""
    ka, kb = ieee.total_order_key(a), ieee.total_order_key(b)
    by_key = ordered(direction, ka, kb)
    le, ge, qeq = ka <= kb, kb <= ka, a == b
    # Read with compareQuietEqual: "or equal" means quiet-equal, so -0 GE +0.
    with_quiet_equal = {"EQ": qeq, "NE": not qeq, "LE": le or qeq, "GE": ge or qeq,
                        "LT": le and not qeq, "GT": ge and not qeq}[direction]
    if by_key == with_quiet_equal:
        return by_key
    return ImplDefined({"totalOrder alone (XLA)": by_key,
                        "totalOrder with compareQuietEqual": with_quiet_equal},
                       why="TOTALORDER: the seed does not say how totalOrder and compareQuietEqual combine")


def element(op, lhs, rhs):
    et = op.lhs.element_type
    direction = op.comparison_direction
    compare_type = op.compare_type or legal_compare_types(et)[0]
    if et.is_complex:
        return lexicographic(direction, lhs, rhs)
    if et.is_float and compare_type == "TOTALORDER":
        return total_order_compare(direction, lhs, rhs)
    # Booleans and integers compare as numbers (false < true); floats with
    # FLOAT use IEEE compareQuiet*, which Python's float comparisons are.
    return ordered(direction, lhs, rhs)


# --------------------------------------------------------------------------
# The same statement on whole arrays (a `Generic.whole` claim, for speed)
# --------------------------------------------------------------------------

def _ordered_arrays(direction: str, a, b) -> np.ndarray:
    """`ordered` on numpy arrays: numpy's comparisons are IEEE's quiet ones
    on floats (NaN unordered, -0 == +0) and exact on integers."""
    return {"EQ": np.equal, "NE": np.not_equal, "GE": np.greater_equal, "GT": np.greater,
            "LE": np.less_equal, "LT": np.less}[direction](a, b)


def _widened(x, et) -> np.ndarray:
    """The operand as `fn` sees it: exact_values widens every float format
    to binary64 (numpy's astype: ±0, ±inf and NaN kept; f32's signaling
    NaNs come out quiet, as in fn's values) and integers to int64 (uint64
    for ui64); f32 and f64 are compared in their own format, whose order is
    the widened one."""
    x = np.asarray(x)
    if et.is_float:
        return x if x.dtype in (np.float32, np.float64) else x.astype(np.float64)
    return x.astype(np.int64 if et.is_signed or et.bits < 64 else np.uint64)


def total_order_keys(x) -> np.ndarray:
    """`ieee.total_order_key` of every element, as int64, read from x's own
    bits as sign and magnitude (-NaN < -inf < … < -0 < +0 < … < +inf < +NaN;
    NaNs of one sign: signaling below quiet, then by payload — the quiet
    bit leads the trailing significand).  Not through binary64: numpy's
    widening quiets the signaling NaNs of f32, bf16 and f8E5M2, and a
    quieted one would order above the quiet NaNs it precedes.

    The sign and magnitude are the format's (its declaration's masks, not
    the storage byte's top bit: f4E2M1FN's sign is bit 3, f8E8M0FNU has
    none).  An FNUZ format's one NaN is the pattern 1.000…0, sign bit set:
    a negative NaN, ordered below every number as -NaN is — where binary64
    places it too, since its widening is -NaN (ml_dtypes), so the element
    route (`ieee.total_order_key`) agrees.  XLA's integer trick on the raw
    byte would put it between -min and +0 instead: a reading for the suite
    to measure."""
    x = np.asarray(x)
    et = element_type_of_dtype(x.dtype)
    if et is None or not et.is_float:   # no element type of ours: the storage's own top bit is the sign
        n = 8 * x.dtype.itemsize
        u = x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)
        mag = (u & np.uint64((1 << (n - 1)) - 1)).astype(np.int64)
        return np.where(u >> np.uint64(n - 1) != 0, -mag - 1, mag)
    fmt = et.format
    u = to_bits(x, et).astype(np.uint64)
    mag = (u & np.uint64(fmt.magnitude_mask)).astype(np.int64)
    key = np.where((u & np.uint64(fmt.sign_mask)) != 0, -mag - 1, mag)
    if fmt.nan == "fnuz":
        key = np.where(u == np.uint64(fmt.sign_mask), -fmt.magnitude_mask - 2, key)
    return key


def arrays(op, lhs, rhs):
    """`element` on whole arrays: bool results, and for TOTALORDER the mask of
    elements whose answer is the `ImplDefined` of `total_order_compare`
    (the result holds its primary value, totalOrder alone, there)."""
    et = op.lhs.element_type
    direction = op.comparison_direction
    compare_type = op.compare_type or legal_compare_types(et)[0]
    if et.is_complex:
        a, b = np.asarray(lhs).astype(np.complex128), np.asarray(rhs).astype(np.complex128)
        re_eq = a.real == b.real
        if direction in ("EQ", "NE"):
            eq = re_eq & (a.imag == b.imag)
            return eq if direction == "EQ" else ~eq
        strict = {"GE": "GT", "GT": "GT", "LE": "LT", "LT": "LT"}[direction]
        return _ordered_arrays(strict, a.real, b.real) | (re_eq & _ordered_arrays(direction, a.imag, b.imag))
    a, b = _widened(lhs, et), _widened(rhs, et)
    if et.is_float and compare_type == "TOTALORDER":
        ka, kb = total_order_keys(lhs), total_order_keys(rhs)   # the operands' own bits (their format's order)
        by_key = _ordered_arrays(direction, ka, kb)
        qeq = a == b
        le, ge = ka <= kb, kb <= ka
        with_quiet_equal = {"EQ": qeq, "NE": ~qeq, "LE": le | qeq, "GE": ge | qeq,
                            "LT": le & ~qeq, "GT": ge & ~qeq}[direction]
        return by_key, by_key != with_quiet_equal
    return _ordered_arrays(direction, a, b)


CHOSEN = Chosen()   # the operand values an `appended_last` builder chose for its instance; the others are drawn


def fnuz_nan_against_negatives(spec, skels, rng):
    """TOTALORDER LT in the FNUZ formats with their one NaN (pattern 0x80,
    the sign bit alone) against the largest negatives (0xFC…0xFF) and back:
    -NaN sorts below -max (`total_order_keys`), so NaN < x holds and x < NaN
    does not.  A key that puts the NaN among the negatives' magnitudes
    (-m + 2 for -m - 2: tied with 0xFC, above 0xFD…0xFF) answers both the
    other way; the suite's other FNUZ TOTALORDER cases compare NE, which no
    such key changes."""
    for name in ("f8E4M3FNUZ", "f8E5M2FNUZ"):
        et = element_type(name)
        negatives = [0xFF, 0xFE, 0xFD, 0xFC, 0xC0]
        lhs = [0x80] * len(negatives) + negatives
        rhs = negatives + [0x80] * len(negatives)
        t = TensorType((len(lhs),), et)
        inst = spec.instance({"lhs": t, "rhs": t}, {"comparison_direction": "LT", "compare_type": "TOTALORDER"},
                             {"result": TensorType((len(lhs),), I1)})
        CHOSEN.choose(inst, **{n: from_bits(np.array(v, dtype=np.uint64), et) for n, v in (("lhs", lhs), ("rhs", rhs))})
        yield (f"TOTALORDER LT: {name}'s NaN (0x80) against its largest negatives, both ways", None,
               Skeleton(spec.mnemonic, (et, et), (), (("comparison_direction", "LT"), ("compare_type", "TOTALORDER"))),
               inst)


SPEC = OpSpec(
    mnemonic="compare",
    operands=(Operand("lhs", ANY), Operand("rhs", ANY)),
    attributes=(
        Attribute("comparison_direction", EnumAttr("comparison_direction", DIRECTIONS), choices=DIRECTIONS),
        Attribute("compare_type", EnumAttr("comparison_type", COMPARE_TYPES), choices=COMPARE_TYPES,
                  default=None, optional=True),
    ),
    results=(Result("result", BOOLEAN),),
    constraints=(compare_c1, compare_c2, compare_c3),
    infer=infer,
    semantics=Elementwise(element, generic=Generic(None, whole=arrays), same_operand=True),
    exercise=Exercise(operand_values=CHOSEN, appended_last=fnuz_nan_against_negatives),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize (compare: dequantize_compare, select: dequantize_select_quantize, is_finite: always true)
)
