"""constant — produce a tensor from a constant `value` (spec section "constant").

`value` is an input of the spec (I1) but not an operand of the program: it
is written as the op's attribute `value = dense<…> : tensor<…>`
(`Operand(constant=True)`), and it carries its own type, which C1 ties to
the output's.  The semantics hand the value through unchanged: bit for bit,
NaN payloads included.

Quantized outputs (v1.20: `output` is a "tensor or quantized tensor").  A
quantized tensor constant "represent[s] quantized tensor values using the
same notation as tensor constants, with elements specified as constants
of their storage type" (spec.md "Constants"; its C1 `has_syntax(literal,
storage_type(type))`, C2 `has_shape`), and MLIR writes it so: the
attribute's own type is the storage tensor — `value = dense<[1, 512]> :
tensor<2xi32>` against an output `tensor<2x!quant.uniform<i32:f32, 2.0:15>>`
(MLIR's dense attribute cannot hold a quant element type).  `literal_type`
reads that spelling back as the quantized tensor constant it stands for —
the storage literal's shape with the output's quantized element type — so
C1 `type(value) = type(output)` holds where the literal is written in the
output's storage type and fails where it is written in any other (a
reading: docs/spec-findings.md).  MLIR's integers are signless: a u8
storage's literal is written `tensor<…xi8>` (StableHLO's verifier refuses
`ui8` there; 255 is written 255 or −1, the same byte), so a literal of the
storage's width counts as written in it whatever its signedness.  The
values are storage values (bits), handed through like any data movement on
quantized tensors.
"""
from ..dsl import ANY, DataMovement, OpSpec, Operand, Result, same_type
from ..dsl.quantization import STORAGE, Quantization
from ..exercise import Exercise
from ..quantized import is_quantized, quantized_type, storage_type
from ..symbolic import Skeleton
from ..types import E_F32, TensorType


def literal_type(op):
    """`type(value)` as the spec reads it: the attribute's own type, or —
    where the output is quantized and the literal is written in its storage
    type (MLIR's spelling, module docstring) — the quantized tensor
    constant's type: the literal's shape, the output's element type."""
    v, o = op.value, op.results.get("output")   # (none yet while a generator infers it)
    if o is not None and is_quantized(o) and not is_quantized(v) and _storage_width(v.element_type, storage_type(o)):
        return TensorType(v.shape, o.element_type)
    return v


def _storage_width(et, storage) -> bool:
    """Is `et` an integer type of the storage type's width (MLIR's signless
    spelling of it: module docstring)?"""
    return et.is_integer and not et.is_bool and et.bits == storage.bits


def constant_c1(op):
    """(C1) `type(value) = type(output)`."""
    return same_type(literal_type(op), op.output)


def infer(op):
    return {"output": literal_type(op)}


def float_literal_of_storage_width(spec, skels, rng):
    """A quantized output of i32 storage whose literal is written in f32:
    the storage type's width, but no integer type, so not the storage
    type's syntax (spec.md "Constants": "elements specified as constants of
    their storage type") and C1 breaks (a reading that asked the width
    alone would admit it)."""
    value = TensorType((4,), E_F32)
    output = TensorType((4,), quantized_type("i32", "f32", (2.0,), (15,)))
    yield ("an i32-stored output, the literal written in f32 (its width, not an integer)", "constant_c1",
           Skeleton(spec.mnemonic, (E_F32,)), spec.instance({"value": value}, {}, {"output": output}))


def arrays(op, value):
    """The output is the constant itself (storage values for a quantized output)."""
    return [value]


SPEC = OpSpec(
    mnemonic="constant",
    operands=(Operand("value", ANY, constant=True),),
    results=(Result("output", ANY),),
    constraints=(constant_c1,),
    infer=infer,
    semantics=DataMovement(arrays),
    exercise=Exercise(appended_last=float_literal_of_storage_width),
    # v1.20: output "tensor or quantized tensor" (per-axis included); the cases: generators/quantized.py `_constant`
    quantization=Quantization(names=("output",), meaning=STORAGE, per_axis=True, skeletons=False),
)
