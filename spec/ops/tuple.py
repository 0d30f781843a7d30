"""tuple — produce a tuple from the values `val` (spec section "tuple").

The Inputs table says "variadic number of values": a member may itself be a
tuple (the seed's example nests `tuple<tensor<i32>>`).  Constraints compare
types with `same_value_type`, which walks tuples member by member, so nested
tuples are judged by the same rules; the structure hints (and so generators
and proofs) use tensor members.

Semantics: the result is the Python tuple of the members' values, in order
(a nested tuple for a nested member); the oracle keeps tuples as tuples of
arrays and flattens them only where a program returns one.
"""
from ..dsl import ANY, DataMovement, OpSpec, Operand, Result, all_of, same_type, size
from ..exercise import PAST_SMALL_INTEGERS, Exercise
from ..symbolic import Skeleton
from ..types import E_F32, TensorType, TupleType
from ..dsl.quantization import STORAGE, Quantization
from ..quantized import per_axis_tensor


def same_value_type(a, b):
    """`type(a) = type(b)` for values: tensors as `dsl.same_type` compares
    them (dims may be symbolic), tuples member by member; a tensor never
    equals a tuple."""
    if isinstance(a, TupleType) and isinstance(b, TupleType):
        return len(a.types) == len(b.types) and all_of(same_value_type(x, y) for x, y in zip(a.types, b.types))
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        return same_type(a, b)
    return False


def tuple_c1(op):
    """(C1) size(`val`) $=$ size(`result`) $=$ N."""
    return size(op.val) == size(op.result.types)


def tuple_c2(op):
    """(C2) `type(val[i])` $=$ `type(result[i])`, for all `i` $\\in$ range [0, N).

    Over the members both have (C1 is the one that counts them)."""
    return all_of(same_value_type(v, r) for v, r in zip(op.val, op.result.types))


def infer(op):
    return {"result": TupleType(tuple(op.val))}


def arrays(op, *val):
    """One result: the tuple of the members' values."""
    return [tuple(val)]


def nested_members(skels, rng) -> tuple:
    """Members (inner, c) of a tuple that nests a tuple, as the seed's own
    example does: inner = (tensor<2>, (tensor<>,)), c = tensor<1x3>, element
    types drawn from the op's skeletons."""
    types = [s.operand_types[0] for s in skels]
    a, b, c = (TensorType(shape, types[int(rng.integers(0, len(types)))]) for shape in ((2,), (), (1, 3)))
    return TupleType((a, TupleType((b,)))), c


def nested_tuple_corners(spec, skels, rng):
    """Tuples inside tuples, built by hand: the structure hints make tensor members only."""
    inner, c = nested_members(skels, rng)
    yield "nested tuples", skels[0], spec.instance({"val": [inner, c]}, {}, {"result": TupleType((inner, c))})


def tensor_for_tuple(spec, skels, rng):
    """A member that is a tensor where the result type says a tuple (and
    the other way round): `same_value_type`'s mixed pairs, which no solved
    or built case holds."""
    skel = skels[int(rng.integers(0, len(skels)))]
    t = TensorType((2,), skel.operand_types[0])
    yield ("a tensor member typed as a tuple", "tuple_c2", skel,
           spec.instance({"val": [t]}, {}, {"result": TupleType((TupleType((t,)),))}))
    yield ("a tuple member typed as a tensor", "tuple_c2", skel,
           spec.instance({"val": [TupleType((t,))]}, {}, {"result": TupleType((t,))}))


def past_small_integers(spec, skels, rng):
    """A tuple of PAST_SMALL_INTEGERS members: C1 counts them."""
    members = [TensorType((2,), E_F32)] * PAST_SMALL_INTEGERS
    yield (f"{PAST_SMALL_INTEGERS} members (past CPython's shared small integers)", None,
           Skeleton(spec.mnemonic, (E_F32,)), spec.instance({"val": members}, {}, {"result": TupleType(tuple(members))}))


def per_axis_members(spec, skels, rng):
    """Members of a per-axis quantized type (v1.20: a tuple holds values)."""
    t = per_axis_tensor()
    yield ("per-axis quantized members", None, Skeleton(spec.mnemonic, (t.element_type,)),
           spec.instance({"val": [t, t]}, {}, {"result": TupleType((t, t))}))


SPEC = OpSpec(
    mnemonic="tuple",
    operands=(Operand("val", ANY, variadic=True, count=(2, 1, 3, 0)),),
    results=(Result("result", ANY),),
    constraints=(tuple_c1, tuple_c2),
    infer=infer,
    semantics=DataMovement(arrays),
    exercise=Exercise(built_corners=nested_tuple_corners, appended=tensor_for_tuple,
                      appended_last=(past_small_integers, per_axis_members)),
    # v1.20: "values" (a quantized tensor is a value: spec.md "Types", ValueType): they pass unchanged
    quantization=Quantization(meaning=STORAGE, per_axis=True),
)
