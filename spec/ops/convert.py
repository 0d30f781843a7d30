"""convert — element-wise conversion between element types (spec section "convert").

The result element type is not inferable: the program states it
(`result_from_program`).  Every pair of the spec's element types is allowed
(Inputs/Outputs: "tensor"), so `element` covers bool, integer, float and
complex on both sides, in the order the seed's Semantics reads:

* integer→integer: the exact value; on overflow "the result is
  implementation-defined and one of the following": wrap modulo 2^n, or
  saturation — declared as exactly those two alternatives.
* float→float and integer→float: "if the source value can be exactly
  represented in the destination type, the result value is that exact
  representation.  Otherwise, the behavior is TBD (#180)".  We return the
  exact source value, which the oracle rounds to nearest, ties to even: what
  XLA does ("a normalizing int-to-float conversion routine such as
  round-to-nearest-even", XLA ConvertElementType) and IEEE-754 convertFormat
  in the default rounding direction.  Overflow then rounds to ±inf, except
  into f8E4M3FN, which has no inf: there ±inf and overflowing values are
  declared implementation-defined (NaN as ml_dtypes gives, or saturation).
  v1.20's formats follow from their declarations (`_to_float`): the FNUZ
  formats as f8E4M3FN; f4E2M1FN, f6E2M3FN and f6E3M2FN saturate (their RFC
  clamps infinities) and take any value for a NaN; f8E8M0FNU makes NaN of
  zero and of negative values.
* complex→complex: per component as float→float; float→complex: imaginary
  part +0.0; complex→float: the imaginary part is ignored; integer→complex:
  integer→float for the real part, imaginary +0.0.
* float→integer: "the fractional part is truncated.  If the truncated value
  cannot be represented in the destination type, the behavior is TBD (#180)":
  in range → the truncated value; out of range, ±inf, NaN → implementation-
  defined alternatives, XLA's (saturate, NaN → 0) first.  complex→integer
  converts the real part the same way.
* bool→any: false → 0, true → 1; any→bool: zero → false, non-zero → true
  (NaN is non-zero; -0.0 is zero; a complex value is zero when both parts are).
"""
import math
from fractions import Fraction

import numpy as np

from ..dsl import ANY, ANY_VALUE, Elementwise, Generic, ImplDefined, OpSpec, Operand, Result, finite, same_shape
from ..types import TensorType
from .. import samples
from ..exercise import Exercise


def convert_c1(op):
    """(C1) `operand` and `result` have the same shape."""
    return same_shape(op.operand, op.result)


def infer(op):
    """Shape from the operand; element type from the program (the result type
    is an input of the program text, not derivable from the operand)."""
    if "result" not in op.results:
        raise ValueError("convert: the result element type comes from the program; "
                         "the instance has no result type to take it from")
    return {"result": TensorType(tuple(op.operand.shape), op.results["result"].element_type)}


def _saturate(v: int, et) -> int:
    return min(max(v, et.min_value), et.max_value)


def _int_to_int(v: int, dst):
    if dst.min_value <= v <= dst.max_value:
        return v
    return ImplDefined(
        {"wrap modulo 2^n (two's complement; XLA)": dst.wrap(v), "saturate": _saturate(v, dst)},
        why="convert: integer-to-integer overflow is implementation-defined, "
            "wrap modulo 2^n or saturation (seed, convert Semantics)")


def _float_to_int(x: float, dst):
    why = ("convert: floating-point-to-integer whose truncated value cannot be "
           "represented in the destination type is TBD (#180) (seed, convert Semantics)")
    alts = {}
    if math.isnan(x):
        alts["saturate, NaN → 0 (XLA)"] = 0
    elif math.isinf(x):
        alts["saturate, NaN → 0 (XLA)"] = dst.max_value if x > 0 else dst.min_value
    else:
        t = math.trunc(Fraction(x))
        if dst.min_value <= t <= dst.max_value:
            return t
        alts["saturate, NaN → 0 (XLA)"] = _saturate(t, dst)
        alts["wrap modulo 2^n of the truncated value"] = dst.wrap(t)
    if dst.is_signed:
        alts["integer indefinite: most negative value (x86 cvtt*)"] = dst.min_value
    # TBD means the seed allows no value to be held against an implementation:
    # the named alternatives are what we know of, for the report.
    alts["other (TBD in the seed)"] = ANY_VALUE
    return ImplDefined(alts, why=why)


def _to_float(v, dst):
    """An exact value (float or Fraction) into the float type `dst`: the value
    itself, rounded by the oracle.  What the destination's declaration lacks
    needs a decision here — such a value "cannot be exactly represented", so
    it is TBD (#180) and the alternatives are what we know:
    * no infinity (f8E4M3FN, the FNUZ formats, f8E8M0FNU, f4/f6): ±inf, or a
      value that rounds beyond the largest finite — NaN where the format has
      one (ml_dtypes, XLA:CPU), saturation; where it has no NaN (f4E2M1FN,
      f6E2M3FN, f6E3M2FN) saturation alone is named, RFC
      20241001-microscaling-formats's rule for infinities ("clamped to the
      minimum or maximum value, depending on the sign"), which ml_dtypes and
      XLA:CPU apply to finite overflows too;
    * no sign or no zero (f8E8M0FNU): a negative value, ±0 — NaN (ml_dtypes,
      XLA:CPU measured: tests/spec/test_v120_formats.py);
    * no NaN (f4, f6): a NaN source is returned as it is, and the oracle
      states it as any value (oracle/elementwise.py `no_nan`: "Conversion
      from NaN is undefined", the same RFC).
    A negative value rounding to zero in a format without -0 (FNUZ) is +0:
    the value 0 is exactly representable, and the rounding gives its one zero."""
    fmt = dst.format
    if isinstance(v, float) and math.isnan(v):
        return v
    why = f"convert: {v} cannot be represented in {dst.name}; TBD (#180) (seed, convert Semantics)"
    if (not fmt.signed and v < 0) or (not fmt.has_zero and v == 0):
        return ImplDefined({"NaN (ml_dtypes, XLA:CPU)": math.nan, "other (TBD in the seed)": ANY_VALUE}, why=why)
    if fmt.has_inf:
        return v
    big = fmt.max_finite + fmt.ulp(fmt.max_finite) / 2  # a tie there rounds down to even
    if (isinstance(v, float) and math.isinf(v)) or abs(Fraction(v)) > big:
        top = fmt.max_finite if v > 0 else -fmt.max_finite
        if not fmt.has_nan:
            return ImplDefined(
                {"saturate to the largest finite value (RFC 20241001-microscaling-formats; ml_dtypes, XLA:CPU)": top,
                 "other (TBD in the seed)": ANY_VALUE}, why=why)
        return ImplDefined(
            {"NaN (ml_dtypes)": math.nan, "saturate to the largest finite value": top,
             "other (TBD in the seed)": ANY_VALUE},
            why=f"convert: {v} cannot be represented in {dst.name}, which has no infinity; "
                "TBD (#180) (seed, convert Semantics)")
    return v


def from_integer(v: int, dst):
    """An exact integer (bool already made 0/1) into any non-bool type: a
    value, or the choices where `dst` cannot hold it (iota's ids too)."""
    if dst.is_integer:
        return _int_to_int(v, dst)
    if dst.is_complex:
        return (Fraction(v), 0.0)
    return _to_float(Fraction(v), dst)


def element(op, x):
    src = op.operand.element_type
    dst = op.results["result"].element_type
    if dst.is_bool:
        return x != 0
    if src.is_bool or src.is_integer:
        return from_integer(int(x), dst)
    if src.is_complex:
        if dst.is_complex:
            return (x.real, x.imag)
        x = x.real  # "the source imaginary value is ignored"
    if dst.is_complex:
        return (x, 0.0)
    if dst.is_float:
        return _to_float(x, dst)
    return _float_to_int(x, dst)


SPEC = OpSpec(
    mnemonic="convert",
    operands=(Operand("operand", ANY),),
    results=(Result("result", ANY),),
    constraints=(convert_c1,),
    infer=infer,
    # A float converted to its own type is itself (`_to_float`: the exact value,
    # representable): the whole-array route, which the oracle takes only where
    # operand and result types are one, copies it (np.positive never rounds).
    semantics=Elementwise(element, generic=Generic(None, finite, ieee=np.positive, exact=True)),
    result_from_program=("result",),
    notes="float→float and integer→float when inexact, and float→integer out of range, are TBD in the seed (#180)",
    exercise=Exercise(hard_floats=samples.halfway_points),
)
