"""The dual-mode helpers: Python bools on concrete input, z3 expressions on symbolic dims."""
import z3

from shlo_conform.spec import dsl
from shlo_conform.spec.types import E_F32, SI32, TensorType


def test_concrete_helpers_return_python_bools():
    a, b = TensorType((2, 3), E_F32), TensorType((2, 3), E_F32)
    assert dsl.same_type(a, b) is True
    assert dsl.same_type(a, TensorType((2, 3), SI32)) is False
    assert dsl.same_shape(a, TensorType((3,), E_F32)) is False   # ranks differ: decided concretely
    assert dsl.is_unique([1, 2, 3]) is True and dsl.is_unique([1, 1]) is False
    assert dsl.Implies(False, False) is True and dsl.If(True, 1, 2) == 1


def test_symbolic_dims_give_z3_expressions_that_mean_the_same():
    d0, d1 = z3.Ints("d0 d1")
    a, b = TensorType((d0, 3), E_F32), TensorType((2, d1), E_F32)
    c = dsl.same_type(a, b)
    assert dsl.is_symbolic(c)
    s = z3.Solver()
    s.add(c)
    assert s.check() == z3.sat
    m = s.model()
    assert m.eval(d0).as_long() == 2 and m.eval(d1).as_long() == 3
    s.add(d0 != 2)
    assert s.check() == z3.unsat


def test_concrete_false_short_circuits_symbolic_and():
    d = z3.Int("d")
    assert dsl.And(d > 0, False) is False
    assert dsl.Or(d > 0, True) is True


def test_add_constraint_reads_both_ways():
    from shlo_conform.spec.ops import OPS
    add = OPS["add"]
    ok = add.instance({"lhs": TensorType((2,), E_F32), "rhs": TensorType((2,), E_F32)},
                      results={"result": TensorType((2,), E_F32)})
    bad = add.instance({"lhs": TensorType((2,), E_F32), "rhs": TensorType((3,), E_F32)},
                       results={"result": TensorType((2,), E_F32)})
    assert add.violated(ok) == [] and add.violated(bad) == ["add_c1"]
    n = z3.Int("n")
    sym = add.instance({"lhs": TensorType((n,), E_F32), "rhs": TensorType((2,), E_F32)},
                       results={"result": TensorType((2,), E_F32)})
    assert dsl.is_symbolic(add.constraint("add_c1")(sym))
