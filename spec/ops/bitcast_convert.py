"""bitcast_convert — reinterpret the bits of a tensor as another element type
(spec section "bitcast_convert").

`num_bits(E)` is the element type's width (i1: 1, si4/ui4: 4, complex<f32>:
64).  Bits are laid out little-endian, as `spec.types` stores them: when one
operand element becomes k result elements, result[…, 0] holds the least
significant num_bits(E') bits (the seed's example: 1.0f → [0, 0, -128, 63]);
a complex element is its real part's bits, then its imaginary part's.

The result element type comes from the program (`result_from_program`);
`infer` computes the shape from the two bit widths, so it cannot decide
anything for an instance without a result type.
"""
import numpy as np

from ..dsl import And, DataMovement, OpSpec, Operand, Result, ANY, dim, rank, same_shape
from ..types import TensorType, from_bits, to_bits
from ..dsl.quantization import STORAGE, Quantization


def num_bits(et) -> int:
    return et.bits


def bitcast_convert_c1(op):
    """(C1) Let `E` and `E'` be the `operand` and `result` element type,
      respectively and `R = rank(operand)`:
      * If `num_bits(E')` $=$ `num_bits(E)`, shape(`result`) $=$ shape(`operand`).
      * If `num_bits(E')` $\\lt$ `num_bits(E)`:
        * `rank(result) = R+1`.
        * dim(`result`, `i`) $=$ dim(`operand`, `i`) for all `i` $\\in$ [0, `R`-1].
        * `dim(result, R) = num_bits(E)/num_bits(E')`.
      * If `num_bits(E')` $\\gt$ `num_bits(E)`:
        * `rank(result) = R-1`.
        * dim(`result`, `i`) $=$ dim(`operand`, `i`) for all `i` $\\in$ [0, `R`-1).
        * `dim(operand, R-1) = num_bits(E')/num_bits(E)`.

    Element types and ranks are structure (concrete), so the case split is
    plain Python; only dimension sizes may be symbolic.  In the `<` case
    "[0, R-1]" is closed (all R operand dims are kept, as the Semantics
    formula `result[i0, ..., iR-1, :]` says); in the `>` case "[0, R-1)" is
    half-open."""
    nb, nb2 = num_bits(op.operand.element_type), num_bits(op.result.element_type)
    R = rank(op.operand)
    if nb2 == nb:
        return same_shape(op.operand, op.result)
    if nb2 < nb:
        if rank(op.result) != R + 1 or nb % nb2:
            return False
        return And([dim(op.result, i) == dim(op.operand, i) for i in range(R)],
                   dim(op.result, R) == nb // nb2)
    if R < 1 or rank(op.result) != R - 1 or nb2 % nb:
        return False
    return And([dim(op.result, i) == dim(op.operand, i) for i in range(R - 1)],
               dim(op.operand, R - 1) == nb2 // nb)


def bitcast_convert_c2(op):
    """(C2) Conversion between complex and non-complex types is not permitted."""
    return op.operand.element_type.is_complex == op.result.element_type.is_complex


def infer(op):
    """Shape by (C1) from the operand and the result element type the program
    gives; without a result type there is nothing to infer from."""
    if "result" not in op.results:
        raise ValueError("bitcast_convert: the result element type comes from the program; "
                         "the instance has no result type, so its shape cannot be inferred")
    et2 = op.results["result"].element_type
    nb, nb2 = num_bits(op.operand.element_type), num_bits(et2)
    s = tuple(op.operand.shape)
    if nb2 == nb:
        shape = s
    elif nb2 < nb:
        shape = s + (nb // nb2,)
    else:
        shape = s[:-1]
    return {"result": TensorType(shape, et2)}


def _element_bits(a: np.ndarray, et) -> np.ndarray:
    """Each element's num_bits(et)-bit pattern as an exact Python int, in a
    flat (1-d) object array, row-major.

    Flat on purpose: numpy turns an operation on 0-d object arrays into a
    bare Python int, and `np.stack` of bare ints re-infers a dtype — ints
    on both sides of 2**63 become float64, which rounds 64-bit patterns.
    A 1-d object array stays an object array of ints through `|`, `<<`,
    `>>`, `&` and `np.stack`, so every pattern stays exact."""
    b = to_bits(a, et)
    if et.is_complex:
        b = b.reshape(-1, 2).astype(object)
        return b[:, 0] | (b[:, 1] << et.component.bits)
    return b.reshape(-1).astype(object)


def _from_element_bits(v: np.ndarray, et) -> np.ndarray:
    """The inverse of `_element_bits`: a flat object array of exact
    num_bits(et)-bit patterns → a flat array of `et` values."""
    if et.is_complex:
        w = et.component.bits
        parts = np.stack([v & ((1 << w) - 1), v >> w], axis=-1)
        return from_bits(parts.astype(et.bits_dtype), et)
    return from_bits(v.astype(et.bits_dtype), et)


def movement(op, operand):
    """The seed's three formulas: `bits(result[i…]) = bits(operand[i…])`;
    `bits(result[i…, :]) = bits(operand[i…])`; `bits(result[i…R-2]) =
    bits(operand[i…R-2, :])` — with index 0 of the `:` axis the least
    significant part (little-endian).  Patterns are exact Python ints on
    flat object arrays (`_element_bits`); the shape is applied at the end."""
    et, et2 = op.operand.element_type, op.result.element_type
    nb, nb2 = num_bits(et), num_bits(et2)
    a = np.asarray(operand)
    shape = a.shape
    v = _element_bits(a, et)
    if nb2 < nb:
        k, mask = nb // nb2, (1 << nb2) - 1
        v = np.stack([(v >> (j * nb2)) & mask for j in range(k)], axis=-1).reshape(-1)
        shape = shape + (k,)
    elif nb2 > nb:
        k = nb2 // nb
        parts = v.reshape(-1, k)
        v = np.zeros(parts.shape[0], dtype=object)
        for j in range(k):
            v = v | (parts[:, j] << (j * nb))
        shape = shape[:-1]
    return [_from_element_bits(v, et2).reshape(shape)]


SPEC = OpSpec(
    mnemonic="bitcast_convert",
    operands=(Operand("operand", ANY),),
    results=(Result("result", ANY),),
    constraints=(bitcast_convert_c1, bitcast_convert_c2),
    infer=infer,
    semantics=DataMovement(movement),
    result_from_program=("result",),
    notes="bits are little-endian (the seed leaves `bits` implementation-defined; its example is little-endian)",
    # v1.20: "tensor or quantized tensor" (per-axis too); C1 reads storage_type of a quantized side
    # (`num_bits` of a quantized type is its storage type's): the storage bits are reinterpreted
    quantization=Quantization(meaning=STORAGE, per_axis=True),
)
