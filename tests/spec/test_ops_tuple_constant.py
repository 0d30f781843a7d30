"""constant, tuple, get_tuple_element: constraints one at a time, inference,
semantics on hand-built values, and the proofs of `check-spec`.

Truth is the seed's text (Constraints, Examples) and hand-built values; each
constraint is violated alone by an instance that keeps the others.
"""
import numpy as np

from shlo_conform.spec import dsl, symbolic
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.types import E_BF16, E_F32, SI32, SI64, TensorType, TupleType


def T(shape, et=E_F32):
    return TensorType(tuple(shape), et)


# --- constant -------------------------------------------------------------------

def test_constant_infers_the_values_type_and_c1_ties_it():
    spec = OPS["constant"]
    ok = spec.instance({"value": T((2, 2))}, results={"output": T((2, 2))})
    assert spec.violated(ok) == [] and spec.infer(ok) == {"output": T((2, 2))}
    assert spec.violated(spec.instance({"value": T((2, 2))}, results={"output": T((2, 3))})) == ["constant_c1"]
    assert spec.violated(spec.instance({"value": T((2, 2))}, results={"output": T((2, 2), E_BF16)})) \
        == ["constant_c1"]
    assert spec.violated(spec.instance({"value": T((4,))}, results={"output": T((2, 2))})) == ["constant_c1"]


def test_constant_value_is_an_attribute_and_passes_through_bit_exact():
    spec = OPS["constant"]
    (value,) = spec.operands
    assert value.constant and not value.variadic
    bits = np.array([0x7FC00001, 0x80000000, 0x00000001], np.uint32)   # NaN payload, -0, subnormal
    inst = spec.instance({"value": T((3,))}, results={"output": T((3,))})
    (out,) = spec.semantics.fn(inst, bits.view(np.float32))
    assert isinstance(spec.semantics, dsl.DataMovement) and spec.semantics.bit_exact
    assert np.asarray(out).view(np.uint32).tolist() == bits.tolist()


# --- tuple ----------------------------------------------------------------------

def tuple_inst(vals, result):
    return OPS["tuple"].instance({"val": list(vals)}, results={"result": result})


def test_tuple_seed_example_types():
    """(tensor<2xf32>, tuple<tensor<i32>>) -> tuple<tensor<2xf32>, tuple<tensor<i32>>>."""
    spec = OPS["tuple"]
    inner = TupleType((T((), SI32),))
    inst = tuple_inst([T((2,)), inner], TupleType((T((2,)), inner)))
    assert spec.violated(inst) == []
    assert spec.infer(inst) == {"result": TupleType((T((2,)), inner))}


def test_tuple_constraints_alone():
    spec = OPS["tuple"]
    a, b = T((2,)), T((3,), SI64)
    assert spec.violated(tuple_inst([a, b], TupleType((a,)))) == ["tuple_c1"]            # a member fewer
    assert spec.violated(tuple_inst([a], TupleType((a, b)))) == ["tuple_c1"]             # a member more
    assert spec.violated(tuple_inst([a, b], TupleType((a, T((3,)))))) == ["tuple_c2"]    # element type
    assert spec.violated(tuple_inst([a, b], TupleType((a, T((4,), SI64))))) == ["tuple_c2"]  # shape
    assert spec.violated(tuple_inst([a, b], TupleType((a, TupleType((b,)))))) == ["tuple_c2"]  # tensor vs tuple
    assert spec.violated(tuple_inst([], TupleType(()))) == []                             # the empty tuple


def test_tuple_semantics_build_a_python_tuple():
    spec = OPS["tuple"]
    x, y = np.array([1.0, 2.0], np.float32), (np.array(3, np.int32),)
    inst = tuple_inst([T((2,)), TupleType((T((), SI32),))], TupleType((T((2,)), TupleType((T((), SI32),)))))
    (out,) = spec.semantics.fn(inst, x, y)
    assert isinstance(out, tuple) and out[0] is x and out[1] is y


def test_tuple_constraints_are_symbolic_over_dims():
    """Dims may be z3 integers: C2 becomes a formula over them, not a Python bool."""
    import z3
    d = z3.Int("d")
    inst = tuple_inst([T((d,))], TupleType((T((3,)),)))
    e = OPS["tuple"].constraint("tuple_c2")(inst)
    assert dsl.is_symbolic(e)
    s = z3.Solver()
    s.add(e)
    assert s.check() == z3.sat and s.model()[d].as_long() == 3


# --- get_tuple_element -----------------------------------------------------------

def gte(members, index, result):
    return OPS["get_tuple_element"].instance({"operand": TupleType(tuple(members))}, {"index": index},
                                             {"result": result})


def test_get_tuple_element_seed_example_types():
    """index 0 of tuple<tensor<2xf32>, tuple<tensor<i32>>> is tensor<2xf32>;
    index 1 is the nested tuple itself."""
    spec = OPS["get_tuple_element"]
    inner = TupleType((T((), SI32),))
    members = [T((2,)), inner]
    assert spec.violated(gte(members, 0, T((2,)))) == []
    assert spec.infer(gte(members, 0, T((2,)))) == {"result": T((2,))}
    assert spec.violated(gte(members, 1, inner)) == []
    assert spec.infer(gte(members, 1, inner)) == {"result": inner}


def test_get_tuple_element_constraints_alone():
    spec = OPS["get_tuple_element"]
    a, b = T((2,)), T((), SI32)
    assert spec.violated(gte([a, b], 2, a)) == ["get_tuple_element_c1"]    # index == size: out of range
    assert spec.violated(gte([a, b], -1, a)) == ["get_tuple_element_c1"]
    assert spec.violated(gte([a, b], 1, a)) == ["get_tuple_element_c2"]    # member 1 is si32, not f32[2]
    assert spec.violated(gte([a, b], 0, T((3,)))) == ["get_tuple_element_c2"]
    assert spec.violated(gte([a, b], 0, TupleType((a,)))) == ["get_tuple_element_c2"]


def test_get_tuple_element_index_is_structure():
    """The index decides the result type, so generators pick it from `choices`
    (covering an out-of-range index for the 2-member tuples tried first)."""
    (index,) = OPS["get_tuple_element"].attributes
    assert isinstance(index.kind, dsl.IntAttr) and index.kind.width == 32 and index.choices == (0, 1, 2)
    assert index in symbolic.structural_attributes(OPS["get_tuple_element"])


def test_get_tuple_element_semantics_pick_the_member():
    spec = OPS["get_tuple_element"]
    x, y = np.array([1.0, 2.0], np.float32), (np.array(3, np.int32),)
    (out,) = spec.semantics.fn(gte([T((2,)), TupleType((T((), SI32),))], 1, TupleType((T((), SI32),))), (x, y))
    assert out is y


