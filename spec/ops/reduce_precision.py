"""reduce_precision — round to a narrower float format and back (spec section "reduce_precision").

The seed's formal steps, executed exactly (no `RoundTo` into an IEEE-style
format, because the seed describes something slightly different):

1. "The mantissa bits of the original value are updated to round the original
   value to the nearest value representable with `mantissa_bits` using
   `roundToIntegralTiesToEven` semantics" — the value is rounded, ties to
   even, to mantissa_bits + 1 significant bits *at its own binade*: no
   subnormal range of the reduced format takes part.  (A subnormal operand
   keeps its own format's subnormal spacing, since its mantissa field is what
   is rounded.)  Truncating the surplus mantissa bits (step 2) is then exact.
3. "if the exponent bits of the intermediate result don't fit into the range
   provided by `exponent_bits`, the intermediate result overflows to infinity
   using the original sign or underflows to zero using the original sign" —
   with bias b = 2^(exponent_bits-1) - 1 the normal exponents are [1-b, b],
   so |r| >= 2^(b+1) → ±inf and |r| < 2^(1-b) → ±0.  The reduced format thus
   has no subnormals (flush to zero), which is also what XLA's
   ReducePrecision does.  If exponent_bits is at least the operand format's,
   this step is a no-op ("the corresponding portion of the conversion is then
   simply a no-op", XLA); likewise mantissa_bits.

NaN stays NaN (XLA: "NaN values are retained"; the seed's steps say nothing
about NaN, and rounding the mantissa of a NaN must not make it an inf).
±inf and ±0 are returned unchanged.  With mantissa_bits = 0 a tie is
ambiguous (both neighbours have an odd one-bit significand); see `element`.  The operand format f8E4M3FN has no
infinity, so an overflow there is implementation-defined (declared below).
"""
import math
from fractions import Fraction

import numpy as np

from ..exercise import Chosen, Exercise
from ..symbolic import Skeleton
from ..types import E_F32, TensorType
from ..dsl import FLOAT, Elementwise, ImplDefined, IntAttr, OpSpec, Operand, Attribute, Result
from ..dsl.quantization import PER_TENSOR
from ..quantized import same_baseline_type
from .. import ieee, samples


def reduce_precision_c1(op):
    """(C1) `operand` and `output` have the same type.  v1.20 reads
    `baseline_type(operand) = baseline_type(output)`: the same for every
    non-quantized type."""
    return same_baseline_type(op.operand, op.output)


def reduce_precision_c2(op):
    """(C2) `exponent_bits` $\\ge$ 1."""
    return op.exponent_bits >= 1


def reduce_precision_c3(op):
    """(C3) `mantissa_bits` $\\ge$ 0."""
    return op.mantissa_bits >= 0


def infer(op):
    return {"output": op.operand}


def element(op, x):
    fmt = op.operand.element_type.format
    e_bits, m_bits = op.exponent_bits, op.mantissa_bits
    if math.isnan(x) or math.isinf(x) or x == 0:
        return x
    q = Fraction(x)
    # Step 1 rounds at the value's own binade: m_bits + 1 significant bits.
    # A normal value below the reduced normal range is then flushed by step 3
    # even where a coarser, subnormal-like spacing would have carried it up
    # to the smallest normal (XLA's bit arithmetic agrees).  An operand
    # subnormal has no binade of its own: with exponent_bits at most the
    # operand's its exponent field (zero) fits and its mantissa field is
    # what is rounded, at the operand's subnormal spacing; with more, the
    # value is rounded at its own binade (below: two readings).
    floor = fmt.emin if e_bits <= fmt.exponent_bits else fmt.emin - fmt.mantissa_bits
    r = ieee.round_to_precision(q, m_bits + 1, floor)
    e = ieee.floor_log2(abs(q))
    if m_bits == 0 and abs(q) == Fraction(3, 2) * Fraction(2) ** e:
        # A tie with a one-bit significand: both neighbours, 2^e and 2^(e+1),
        # have significand 1, so "even" is ambiguous.  Rounding the significand
        # 1.5 to integral, ties to even (the seed's words), gives 2^(e+1);
        # XLA's bit arithmetic rounds to the even *bit pattern*, whose last
        # bit is then the operand format's lowest exponent bit.  An operand
        # subnormal has an exponent field of 0 and its field is what XLA
        # rounds (operand subnormal spacing, as below), so its readings are
        # three.
        down = math.copysign(1, x) * Fraction(2) ** e
        readings = {"significand rounded to integral, ties to even (seed)": r}
        if e >= fmt.emin:
            if not (e + fmt.bias) % 2:
                readings["even bit pattern: even biased exponent (XLA)"] = down
        else:
            readings["the lower neighbour (a one-bit significand has no even one)"] = down
            readings["stored mantissa field rounded (operand subnormal spacing; XLA)"] = \
                ieee.round_to_precision(q, 1, fmt.emin)
        if len(set(readings.values())) > 1:
            alts, seen = {}, set()
            for label, v in readings.items():
                if v in seen:
                    continue
                seen.add(v)
                done = _finish(v, x, fmt, e_bits)
                if isinstance(done, ImplDefined):  # f8E4M3FN overflow: flatten
                    alts.update({f"{label}; {k}": w for k, w in done.alternatives.items()})
                else:
                    alts[label] = done
            return ImplDefined(alts, why="reduce_precision with mantissa_bits = 0: a tie has no even significand")
    if abs(q) < fmt.min_normal and m_bits < fmt.mantissa_bits:
        # An operand subnormal: "the mantissa bits of the original value are
        # updated" read on the stored field rounds at the operand's own
        # subnormal spacing; read on the value, at the reduced type's.
        field = ieee.round_to_precision(q, m_bits + 1, fmt.emin)
        if field != r:
            return ImplDefined(
                {"value rounded to mantissa_bits+1 significant bits": _finish(r, x, fmt, e_bits),
                 "stored mantissa field rounded (operand subnormal spacing)": _finish(field, x, fmt, e_bits)},
                why="reduce_precision of an operand subnormal: the seed's 'mantissa bits' reads two ways")
    return _finish(r, x, fmt, e_bits)


def _finish(r: Fraction, x: float, fmt, e_bits: int):
    """Step 3: the exponent range of the reduced format (flush below, inf above)."""
    if e_bits < fmt.exponent_bits:
        bias = (1 << (e_bits - 1)) - 1
        if abs(r) >= Fraction(2) ** (bias + 1):
            return _overflow(x, fmt)
        if abs(r) < Fraction(2) ** (1 - bias):
            return _underflow(x, fmt)
    elif abs(r) > fmt.max_finite:
        return _overflow(x, fmt)
    return _underflow(x, fmt) if r == 0 else r


def _overflow(x: float, fmt):
    """±inf; in a format without it, NaN (where it has one: f8E4M3FN, FNUZ,
    f8E8M0FNU) or saturation — the alternatives its declaration allows."""
    inf = math.copysign(math.inf, x)
    if fmt.has_inf:
        return inf
    alts = {"NaN (the operand format has no infinity)": math.nan} if fmt.has_nan else {}
    alts["saturate to the largest finite value"] = fmt.max_finite if x > 0 else -fmt.max_finite
    return ImplDefined(alts, why=f"reduce_precision: the result overflows to infinity, which {fmt.name} cannot hold")


def _underflow(x: float, fmt):
    """The zero of x's sign (+0 in FNUZ, whose rounding has no -0); in a
    format without zero (f8E8M0FNU) the step has no result of its own: its
    smallest value or NaN."""
    if fmt.has_zero:
        return math.copysign(0.0, x)
    return ImplDefined({"the smallest value (no zero in the format)": fmt.min_normal,
                        "NaN (zero has no pattern)": math.nan},
                       why=f"reduce_precision: the result underflows to zero, which {fmt.name} cannot hold")


CHOSEN = Chosen()   # the operand values an `appended_last` builder chose for its instance; the others are drawn


def _chosen_case(spec, note, values, exponent_bits, mantissa_bits):
    """A value case on an f32 vector of the chosen `values` (`CHOSEN`)."""
    t = TensorType((len(values),), E_F32)
    inst = spec.instance({"operand": t}, {"exponent_bits": exponent_bits, "mantissa_bits": mantissa_bits},
                         {"output": t})
    CHOSEN.choose(inst, operand=np.array(values, dtype=np.float32))
    return note, None, Skeleton(spec.mnemonic, (E_F32,)), inst


def one_bit_ties(spec, skels, rng):
    """mantissa_bits = 0 on ties 1.5·2^e whose biased f32 exponent e + 127 is
    even, and nothing else implementation-defined: the tie has two readings
    (`element`), the seed's 2^(e+1) and XLA's even bit pattern 2^e, so the
    case's last alternative is XLA's (the exhaustive f8E4M3FN case of
    mantissa_bits 0 ends on its saturation alternative).  An implementation
    that rounds such a tie to 2^e + 1 (or offers the seed's reading alone)
    meets neither."""
    yield _chosen_case(spec, "mantissa_bits = 0: ties 1.5·2^e of even biased exponent (two readings)",
                       [3.0, -3.0, 12.0, -0.75, 48.0, 2.0, 5.0], 8, 0)


def operand_subnormals(spec, skels, rng):
    """f32 subnormals under an odd mantissa_bits (3) below f32's: "the
    mantissa bits … are updated" read on the stored field rounds them at
    f32's subnormal spacing, to mantissa_bits + 1 = 4 bits counted from the
    smallest normal binade (quantum 2^-129); with exponent_bits 8 (f32's own)
    the value's reading is the same, so each element has one answer.  An
    implementation that counts m − 1 bits there (quantum 2^-127) moves every
    one: (1/3)·2^-126 becomes 0.5·2^-126, not 0.375·2^-126."""
    bits = [0x002AAAAA, 0x00355555, 0x80299999, 0x00480001, 0x00600000, 0x00700000]
    values = np.array(bits, dtype=np.uint32).view(np.float32).tolist()
    yield _chosen_case(spec, "operand subnormals, mantissa_bits 3 (odd), exponent_bits 8", values, 8, 3)


SPEC = OpSpec(
    mnemonic="reduce_precision",
    operands=(Operand("operand", FLOAT),),
    attributes=(Attribute("exponent_bits", IntAttr(32)), Attribute("mantissa_bits", IntAttr(32))),
    results=(Result("output", FLOAT),),
    constraints=(reduce_precision_c1, reduce_precision_c2, reduce_precision_c3),
    infer=infer,
    semantics=Elementwise(element),
    exercise=Exercise(hard_floats=samples.reduced_range_edges, operand_values=CHOSEN,
                      appended_last=(one_bit_ties, operand_subnormals)),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize (compare: dequantize_compare, select: dequantize_select_quantize, is_finite: always true)
)
