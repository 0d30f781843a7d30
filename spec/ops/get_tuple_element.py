"""get_tuple_element — the member at `index` of the `operand` tuple (spec
section "get_tuple_element").

`index` (I2, "constant of type si32") is written `index = 0 : i32`.  It
decides the result's type, so it is structure (`choices`): a generator
picks it, the solver does not.  The operand is a tuple of tensors in
generators and proofs (`tuple_members`); a member may itself be a tuple in
programs (the seed's example), and the result then is that tuple.

C2 reads `operand[index]`, which exists only when C1 holds; where it does
not, C2 holds vacuously, so a program with an out-of-range `index` breaks
C1 alone (and a negative case for C1 is not also one for C2).
"""
from ..dsl import ANY, Attribute, DataMovement, IntAttr, OpSpec, Operand, Result, in_range, size
from ..exercise import Exercise
from ..symbolic import Skeleton
from ..types import E_F32, TensorType, TupleType
from .tuple import nested_members, same_value_type
from ..dsl.quantization import STORAGE, Quantization
from ..quantized import per_axis_tensor


def get_tuple_element_c1(op):
    """(C1) 0 $\\le$ `index` $\\lt$ size(`operand`)."""
    return in_range(op.index, 0, size(op.operand.types))


def get_tuple_element_c2(op):
    """(C2) type(`operand[index]`) $=$ type(`result`).

    `index` is structure (a concrete int), so the range test is plain Python."""
    members = op.operand.types
    if not 0 <= op.index < len(members):
        return True  # no operand[index]: C1's violation, not C2's
    return same_value_type(members[op.index], op.result)


def infer(op):
    return {"result": op.operand.types[op.index]}


def arrays(op, operand):
    """The member at `index` (a tuple operand arrives as a tuple of values)."""
    return [operand[op.index]]


def nested_tuple_corners(spec, skels, rng):
    """A tuple nesting a tuple (the seed's example), read at each index."""
    inner, c = nested_members(skels, rng)
    for index, res in ((0, inner), (1, c)):
        skel = next((s for s in skels if s.attr_dict.get("index") == index), skels[0])
        yield (f"nested tuples, index {index}", skel,
               spec.instance({"operand": TupleType((inner, c))}, {"index": index}, {"result": res}))


def negative_index(spec, skels, rng):
    """Indices outside C1's range where the solver does not go (`choices`
    keep it to 0..2, and its negative cases stop at `index = size`):
    `index = -1`, whose result type is not the last member's (a reading that
    wraps -1 as Python does would then break C2 too), and an index two past
    the end."""
    skel = skels[int(rng.integers(0, len(skels)))]
    members = (TensorType((2,), skel.operand_types[0]), TensorType((3,), skel.operand_types[0]))
    yield ("index -1", "get_tuple_element_c1", skel,
           spec.instance({"operand": TupleType(members)}, {"index": -1}, {"result": members[0]}))
    yield ("index two past the end", "get_tuple_element_c1", skel,
           spec.instance({"operand": TupleType(members)}, {"index": 3}, {"result": members[0]}))


def per_axis_member(spec, skels, rng):
    """A per-axis quantized member taken out (v1.20: the tuple's values pass unchanged)."""
    t = per_axis_tensor()
    members = (t, TensorType((3,), E_F32))
    yield ("a per-axis quantized member", None, Skeleton(spec.mnemonic, (t.element_type,)),
           spec.instance({"operand": TupleType(members)}, {"index": 0}, {"result": t}))


SPEC = OpSpec(
    mnemonic="get_tuple_element",
    operands=(Operand("operand", ANY, tuple_members=True, count=(2, 1, 3)),),
    results=(Result("result", ANY),),
    constraints=(get_tuple_element_c1, get_tuple_element_c2),
    infer=infer,
    semantics=DataMovement(arrays),
    attributes=(Attribute("index", IntAttr(32), choices=(0, 1, 2)),),
    exercise=Exercise(built_corners=nested_tuple_corners, appended=negative_index, appended_last=per_axis_member),
    # v1.20: "values" (a quantized tensor is a value: spec.md "Types", ValueType): they pass unchanged
    quantization=Quantization(meaning=STORAGE, per_axis=True),
)
