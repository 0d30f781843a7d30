"""iota — fill `output` with 0, 1, 2, … along `iota_dimension` (spec section
"iota").

The program states the whole output type (`result_from_program` for the
element type, `shape_from_program` for the shape); C1 only ties
`iota_dimension` to its rank.

What "`output[..., id, ...] = id`" means when `id` is not a value of the
element type, which the seed does not say:
* floating-point: `id` converted by round-to-nearest-even, as every exact
  value entering a float format is (bf16 holds integers exactly only up to
  256, so id 257 reads 256 and 259 reads 260; f8E4M3FN only up to 16:
  17 → 16, 19 → 20; an id that overflows gives +inf in f8E5M2 and NaN in
  f8E4M3FN, which has no infinity).  The cast is numpy's / ml_dtypes'
  (spec/ cannot use the oracle's rounding); tests check it against
  hand-rounded values;
* complex: `(id, 0)`, the real part rounded the same way;
* integer: an `id` above the type's maximum (si4 from 8, ui8 from 256) is an
  integer overflow, implementation-defined by the seed's "Errors" section;
  the two's complement wrap is the alternative we know (dsl.integer_overflow).
"""
import numpy as np

from ..dsl import (COMPLEX, FLOAT, INTEGER, Attribute, Choices, DataMovement, ImplDefined, IntAttr, OpSpec, Result,
                   in_range, integer_overflow, rank)
from ..exercise import Corner, Exercise
from ..types import TensorType
from .convert import from_integer
from ..dsl.quantization import PER_TENSOR


def iota_c1(op):
    """(C1) 0 $\\le$ `iota_dimension` $\\lt$ `rank(output)`."""
    return in_range(op.iota_dimension, 0, rank(op.output))


def infer(op):
    """Type and shape come from the program; nothing is inferred."""
    return {}


def _unrepresentable(ids: np.ndarray, cast: np.ndarray, et) -> Choices | np.ndarray:
    """The ids a float format without infinity or without zero cannot hold
    (an overflow in f8E4M3FNUZ or f4E2M1FN, 0 in f8E8M0FNU) as convert
    states them (`convert.from_integer`: TBD in the seed, the choices we
    know), the cast's value first: one rule for an integer entering a
    float, not a second here."""
    options, labels, why = {}, {}, ""
    for k, v in enumerate(ids.reshape(-1).tolist()):
        alt = from_integer(int(v), et)
        if isinstance(alt, ImplDefined):
            options[k], labels[k], why = list(alt.alternatives.values()), list(alt.alternatives), alt.why
    return Choices(cast, options, labels, why) if options else cast


def movement(op):
    """`output[i0, ..., id, ..., iR-1] = id` with `d` = `iota_dimension`."""
    t = op.output
    et = t.element_type
    out_shape = tuple(int(d) for d in t.shape)
    ids = np.indices(out_shape, dtype=np.int64)[op.iota_dimension]   # rank >= 1 (C1)
    if not et.is_integer:
        # Exact in float64 (ids are far below 2^53); the cast to the element
        # type rounds to nearest even (numpy for f16/f32/f64, ml_dtypes for bf16/f8).
        cast = ids.astype(np.float64).astype(et.numpy)
        if et.is_float and not (et.format.has_inf and et.format.has_zero):
            return [_unrepresentable(ids, cast, et)]
        return [cast]
    if not ids.size or int(ids.max()) <= et.max_value:
        return [ids.astype(et.numpy)]
    values = [et.wrap(int(v)) for v in ids.reshape(-1)]
    options, labels, why = {}, {}, ""
    for k, v in enumerate(ids.reshape(-1)):
        if int(v) > et.max_value:
            alt: ImplDefined = integer_overflow(et, int(v))
            options[k], labels[k], why = list(alt.alternatives.values()), list(alt.alternatives), alt.why
    return [Choices(np.array(values, dtype=et.numpy).reshape(out_shape), options, labels, why)]


# Indices past 2^(mantissa+1) round in the narrow float formats.
CORNERS = (
    Corner("long dimension (indices round in narrow formats)", (), lambda op: [op.output.shape[0] >= 20],
           layout={"result_ranks": {"output": 1}}, max_dim=40),
)


def past_the_type(spec, skels, rng):
    """si4 and ui8 iotas longer than the type counts: ids 8.. (si4) and
    256.. (ui8) overflow, implementation-defined (the wrap is the known
    alternative).  The long-dimension corner lands on a random element
    type and seldom on one this narrow."""
    for name, n in (("si4", 20), ("ui8", 300)):
        skel = next((s for s in skels if s.dtype(spec) == name), None)
        if skel is not None:
            t = TensorType((2, n), skel.result_type_dict["output"])
            yield (f"ids past {name}'s largest value", None, skel,
                   spec.instance({}, {"iota_dimension": 1}, {"output": t}))


SPEC = OpSpec(
    mnemonic="iota",
    operands=(),
    attributes=(Attribute("iota_dimension", IntAttr(64)),),
    results=(Result("output", INTEGER + FLOAT + COMPLEX, rank=(1, 2, 0, 3, 4)),),
    constraints=(iota_c1,),
    infer=infer,
    semantics=DataMovement(movement),
    result_from_program=("output",),
    shape_from_program=("output",),
    exercise=Exercise(corners=CORNERS, appended=past_the_type),
    # v1.20: output "or per-tensor quantized tensor": `quantize(output_index[iota_dimension],
    # element_type(output))` — the index in the expressed type, quantized (dequantize_op_quantize of no operand)
    quantization=PER_TENSOR,
)
