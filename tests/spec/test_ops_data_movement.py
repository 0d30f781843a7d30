"""Shape and data-movement op modules: broadcast_in_dim, concatenate,
dynamic_slice, dynamic_update_slice, get_dimension_size, iota, pad, reshape,
reverse, slice, transpose — constraints (concrete, each broken alone),
type inference, semantics, and the z3 proofs of check-spec.

Expected values come from the seed's Examples sections (hand-parsed from
the spec text) and from hand computation; where a larger case is compared
with numpy, numpy is the independent implementation.  Never from the op
module under test.
"""
import math

import numpy as np

from shlo_conform.spec.dsl import Choices
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.types import (C64, E_BF16, E_F16, E_F32, E_F8E4M3FN, I1, SI4, SI8, SI32, SI64, UI8, UI32,
                                     TensorType)

MODULE_OPS = ("broadcast_in_dim", "concatenate", "dynamic_slice", "dynamic_update_slice", "get_dimension_size",
              "iota", "pad", "reshape", "reverse", "slice", "transpose")

# (C<N>) labels of each op's "Constraints" section in the seed, by number.
SEED_CONSTRAINTS = {"broadcast_in_dim": 5, "concatenate": 6, "dynamic_slice": 5, "dynamic_update_slice": 6,
                    "get_dimension_size": 1, "iota": 1, "pad": 4, "reshape": 2, "reverse": 3, "slice": 5,
                    "transpose": 3}


def T(shape, et=SI32):
    return TensorType(tuple(shape), et)


def op(name, operands, attrs=None, results=None):
    return OPS[name].instance(operands, attrs or {}, results or {})


def run(inst, *arrays):
    return inst.spec.semantics.fn(inst, *arrays)


def a(values, et=SI32):
    return np.array(values, dtype=et.numpy)


def same(got, expected):
    """Same dtype, shape and values."""
    got = np.asarray(got)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.tolist() == expected.tolist(), (got.tolist(), expected.tolist())


def f32_bits(x):
    return np.asarray(x, np.float32).view(np.uint32)


SNAN_F32 = np.array([0x7F800001, 0xFFC00ABC], np.uint32).view(np.float32)   # a signalling NaN, a negative payload


def test_every_seed_constraint_is_encoded_in_order():
    for name, n in SEED_CONSTRAINTS.items():
        assert OPS[name].labels == [f"{name}_c{k}" for k in range(1, n + 1)]
        for c in OPS[name].constraints:
            assert c.__doc__.startswith(f"(C{c.__name__.rsplit('_c', 1)[1]}) ")


# --------------------------------------------------------------------------
# broadcast_in_dim
# --------------------------------------------------------------------------


def bcast(operand, dims, result):
    return op("broadcast_in_dim", {"operand": operand}, {"broadcast_dimensions": tuple(dims)}, {"result": result})


def test_broadcast_in_dim_seed_example():
    inst = bcast(T((1, 3)), (2, 1), T((2, 3, 2)))
    assert OPS["broadcast_in_dim"].violated(inst) == []
    (r,) = run(inst, a([[1, 2, 3]]))
    same(r, a([[[1, 1], [2, 2], [3, 3]], [[1, 1], [2, 2], [3, 3]]]))


def test_broadcast_in_dim_more_values():
    (r,) = run(bcast(T(()), (), T((2, 3))), a(7))                    # rank 0 → everywhere
    same(r, a([[7, 7, 7], [7, 7, 7]]))
    (r,) = run(bcast(T((3,)), (1,), T((2, 3))), a([1, 2, 3]))          # a row repeated
    same(r, a([[1, 2, 3], [1, 2, 3]]))
    (r,) = run(bcast(T((3,)), (0,), T((3, 2))), a([1, 2, 3]))          # a column repeated
    same(r, a([[1, 1], [2, 2], [3, 3]]))
    (r,) = run(bcast(T((2, 3)), (1, 0), T((3, 2))), a([[1, 2, 3], [4, 5, 6]]))   # dims swapped: a transpose
    same(r, a([[1, 4], [2, 5], [3, 6]]))
    (r,) = run(bcast(T((1,)), (0,), T((0, 2))), a([5]))                # size 1 broadcast to size 0
    same(r, a(np.zeros((0, 2))))
    (r,) = run(bcast(T((2,), E_F32), (0,), T((2, 2), E_F32)), SNAN_F32)  # bytes move: NaN payloads kept
    assert f32_bits(r).tolist() == [[0x7F800001] * 2, [0xFFC00ABC] * 2]


def test_broadcast_in_dim_constraints():
    spec = OPS["broadcast_in_dim"]
    assert spec.violated(bcast(T((1, 3)), (2, 1), T((2, 3, 2), E_F32))) == ["broadcast_in_dim_c1"]
    assert spec.violated(bcast(T((1, 3)), (2, 1, 0), T((2, 3, 2)))) == ["broadcast_in_dim_c2"]
    assert spec.violated(bcast(T((1, 3)), (2,), T((2, 3, 2)))) == ["broadcast_in_dim_c2"]
    assert spec.violated(bcast(T((1, 3)), (3, 1), T((2, 3, 2)))) == ["broadcast_in_dim_c3"]
    assert spec.violated(bcast(T((1, 3)), (-1, 1), T((2, 3, 2)))) == ["broadcast_in_dim_c3"]
    assert spec.violated(bcast(T((1, 3)), (1, 1), T((2, 3, 2)))) == ["broadcast_in_dim_c4"]
    assert spec.violated(bcast(T((1, 3)), (2, 1), T((2, 4, 2)))) == ["broadcast_in_dim_c5"]
    assert spec.violated(bcast(T((2, 3)), (0, 1), T((1, 3)))) == ["broadcast_in_dim_c5"]   # 2 does not shrink to 1
    assert spec.violated(bcast(T((1, 3)), (2, 1), T((5, 3, 7)))) == []                    # size 1 → any size
    assert spec.infer(bcast(T((1, 3)), (2, 1), T((2, 3, 2)))) == {}   # the program states the shape


# --------------------------------------------------------------------------
# concatenate
# --------------------------------------------------------------------------


def concat(inputs, dimension, result):
    return op("concatenate", {"inputs": list(inputs)}, {"dimension": dimension}, {"result": result})


def test_concatenate_seed_example():
    inst = concat([T((3, 2), SI64), T((1, 2), SI64)], 0, T((4, 2), SI64))
    assert OPS["concatenate"].violated(inst) == []
    (r,) = run(inst, a([[1, 2], [3, 4], [5, 6]], SI64), a([[7, 8]], SI64))
    same(r, a([[1, 2], [3, 4], [5, 6], [7, 8]], SI64))


def test_concatenate_more_values():
    (r,) = run(concat([T((2, 1)), T((2, 2))], 1, T((2, 3))), a([[1], [2]]), a([[3, 4], [5, 6]]))
    same(r, a([[1, 3, 4], [2, 5, 6]]))
    (r,) = run(concat([T((1,)), T((0,)), T((2,))], 0, T((3,))), a([1]), a([]), a([2, 3]))   # a zero-size member
    same(r, a([1, 2, 3]))
    (r,) = run(concat([T((2,), E_BF16)], 0, T((2,), E_BF16)), a([1.5, -0.0], E_BF16))        # one input
    same(r, a([1.5, -0.0], E_BF16))
    assert math.copysign(1, float(r[1])) == -1


def test_concatenate_constraints_and_infer():
    spec = OPS["concatenate"]
    assert spec.infer(concat([T((3, 2)), T((1, 2))], 0, None)) == {"result": T((4, 2))}
    assert spec.infer(concat([T((2, 1)), T((2, 2)), T((2, 0))], 1, None)) == {"result": T((2, 3))}
    assert spec.infer(concat([T((5,), E_F16)], 0, None)) == {"result": T((5,), E_F16)}
    assert spec.violated(concat([T((3, 2)), T((1, 2), E_F32)], 0, T((4, 2)))) == ["concatenate_c1"]
    assert spec.violated(concat([T((3, 2)), T((1, 3))], 0, T((4, 2)))) == ["concatenate_c2"]
    assert spec.violated(concat([T((3, 2)), T((1,))], 0, T((4, 2)))) == ["concatenate_c2"]
    assert spec.violated(concat([], 0, T((4, 2)))) == ["concatenate_c3"]
    assert spec.violated(concat([T((3, 2)), T((3, 2))], 2, T((3, 2)))) == ["concatenate_c4"]
    assert spec.violated(concat([T((3, 2)), T((3, 2))], -1, T((3, 2)))) == ["concatenate_c4"]
    assert spec.violated(concat([T((3, 2)), T((1, 2))], 0, T((4, 2), E_F32))) == ["concatenate_c5"]
    assert spec.violated(concat([T((3, 2)), T((1, 2))], 0, T((5, 2)))) == ["concatenate_c6"]
    assert spec.violated(concat([T((3, 2)), T((1, 2))], 0, T((4, 2, 1)))) == ["concatenate_c6"]


# --------------------------------------------------------------------------
# dynamic_slice, dynamic_update_slice
# --------------------------------------------------------------------------


def dslice(operand, starts, sizes, result):
    return op("dynamic_slice", {"operand": operand, "start_indices": list(starts)},
              {"slice_sizes": tuple(sizes)}, {"result": result})


def test_dynamic_slice_seed_example():
    inst = dslice(T((4, 4)), [T((), SI64), T((), SI64)], (2, 2), T((2, 2)))
    assert OPS["dynamic_slice"].violated(inst) == []
    operand = a([[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]])
    (r,) = run(inst, operand, a(-1, SI64), a(3, SI64))
    same(r, a([[1, 1], [1, 1]]))


def test_dynamic_slice_clamps_start_indices():
    x = a([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]])
    inst = dslice(T((3, 4)), [T((), SI32)] * 2, (2, 3), T((2, 3)))
    for (s0, s1), expected in [((0, 0), [[1, 2, 3], [5, 6, 7]]),
                               ((1, 1), [[6, 7, 8], [10, 11, 12]]),
                               ((-5, -1), [[1, 2, 3], [5, 6, 7]]),          # negative → 0
                               ((2, 2), [[6, 7, 8], [10, 11, 12]]),         # past the end → dim - size
                               ((2**31 - 1, -2**31), [[5, 6, 7], [9, 10, 11]])]:
        (r,) = run(inst, x, a(s0), a(s1))
        same(r, a(expected))
    (r,) = run(dslice(T((3, 4)), [T((), UI8)] * 2, (1, 2), T((1, 2))), x, a(255, UI8), a(1, UI8))
    same(r, a([[10, 11]]))
    (r,) = run(dslice(T((3, 4)), [T((), SI4)] * 2, (3, 0), T((3, 0))), x, a(-8, SI4), a(7, SI4))   # size 0
    same(r, a(np.zeros((3, 0))))
    (r,) = run(dslice(T((3, 4)), [T((), SI64)] * 2, (3, 4), T((3, 4))), x, a(2, SI64), a(-2**63, SI64))  # all
    same(r, x)
    (r,) = run(dslice(T((), E_F32), [], (), T((), E_F32)), SNAN_F32[0])                 # rank 0: no indices
    assert int(f32_bits(r)) == 0x7F800001


def test_dynamic_slice_constraints_and_infer():
    spec = OPS["dynamic_slice"]
    s64 = T((), SI64)
    assert spec.infer(dslice(T((4, 5), E_F16), [s64, s64], (2, 0), None)) == {"result": T((2, 0), E_F16)}
    assert spec.violated(dslice(T((4, 4)), [s64, s64], (2, 2), T((2, 2), E_F32))) == ["dynamic_slice_c1"]
    assert spec.violated(dslice(T((4, 4)), [s64, s64, s64], (2, 2), T((2, 2)))) == ["dynamic_slice_c2"]
    assert spec.violated(dslice(T((4, 4)), [s64, s64], (2, 2, 1), T((2, 2, 1)))) == ["dynamic_slice_c2"]
    assert spec.violated(dslice(T((4, 4)), [s64, T((), SI32)], (2, 2), T((2, 2)))) == ["dynamic_slice_c3"]
    assert spec.violated(dslice(T((4, 4)), [s64, s64], (5, 2), T((5, 2)))) == ["dynamic_slice_c4"]
    assert spec.violated(dslice(T((4, 4)), [s64, s64], (-1, 2), T((2, 2)))) == ["dynamic_slice_c4", "dynamic_slice_c5"]
    assert spec.violated(dslice(T((4, 4)), [s64, s64], (4, 0), T((4, 0)))) == []      # the closed interval [0, dim]
    assert spec.violated(dslice(T((4, 4)), [s64, s64], (2, 2), T((2, 3)))) == ["dynamic_slice_c5"]
    # The Inputs table: 0-dimensional tensors of integer type.
    assert spec.types_outside_tables(dslice(T((4, 4)), [s64, T((1,), SI64)], (2, 2), T((2, 2)))) == ["start_indices"]
    assert spec.types_outside_tables(dslice(T((4, 4)), [s64, T((), E_F32)], (2, 2), T((2, 2)))) == ["start_indices"]


def dus(operand, update, starts, result):
    return op("dynamic_update_slice", {"operand": operand, "update": update, "start_indices": list(starts)},
              {}, {"result": result})


def test_dynamic_update_slice_seed_example():
    inst = dus(T((4, 4)), T((2, 2)), [T((), SI64)] * 2, T((4, 4)))
    assert OPS["dynamic_update_slice"].violated(inst) == []
    operand = a([[1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 1, 1], [1, 1, 1, 1]])
    (r,) = run(inst, operand, a([[1, 1], [1, 1]]), a(-1, SI64), a(3, SI64))
    same(r, a(np.ones((4, 4))))


def test_dynamic_update_slice_clamps_start_indices():
    x = a(np.zeros((3, 4)))
    u = a([[1, 2], [3, 4]])
    inst = dus(T((3, 4)), T((2, 2)), [T((), SI32)] * 2, T((3, 4)))
    for (s0, s1), expected in [((0, 1), [[0, 1, 2, 0], [0, 3, 4, 0], [0, 0, 0, 0]]),
                               ((-3, 9), [[0, 0, 1, 2], [0, 0, 3, 4], [0, 0, 0, 0]]),     # → (0, 2)
                               ((5, -1), [[0, 0, 0, 0], [1, 2, 0, 0], [3, 4, 0, 0]])]:    # → (1, 0)
        (r,) = run(inst, x, u, a(s0), a(s1))
        same(r, a(expected))
    assert x.tolist() == np.zeros((3, 4)).tolist()       # the operand is not written
    (r,) = run(dus(T((3, 4)), T((0, 2)), [T((), UI32)] * 2, T((3, 4))), x, a(np.zeros((0, 2))), a(1, UI32), a(1, UI32))
    same(r, x)                                             # a zero-size update changes nothing
    (r,) = run(dus(T((), E_F32), T((), E_F32), [], T((), E_F32)), np.float32(1), SNAN_F32[1])   # rank 0
    assert int(f32_bits(r)) == 0xFFC00ABC


def test_dynamic_update_slice_constraints_and_infer():
    spec = OPS["dynamic_update_slice"]
    s64 = T((), SI64)
    assert spec.infer(dus(T((4, 4), C64), T((2, 2), C64), [s64, s64], None)) == {"result": T((4, 4), C64)}
    assert spec.violated(dus(T((4, 4)), T((2, 2)), [s64, s64], T((4, 5)))) == ["dynamic_update_slice_c1"]
    assert spec.violated(dus(T((4, 4)), T((2, 2), E_F32), [s64, s64], T((4, 4)))) == ["dynamic_update_slice_c2"]
    assert spec.violated(dus(T((4, 4)), T((2,)), [s64, s64], T((4, 4)))) == ["dynamic_update_slice_c3"]
    assert spec.violated(dus(T((4, 4)), T((2, 2)), [s64], T((4, 4)))) == ["dynamic_update_slice_c4"]
    assert spec.violated(dus(T((4, 4)), T((2, 2)), [s64, T((), UI8)], T((4, 4)))) == ["dynamic_update_slice_c5"]
    assert spec.violated(dus(T((4, 4)), T((5, 2)), [s64, s64], T((4, 4)))) == ["dynamic_update_slice_c6"]
    assert spec.violated(dus(T((4, 4)), T((4, 0)), [s64, s64], T((4, 4)))) == []


# --------------------------------------------------------------------------
# get_dimension_size, iota
# --------------------------------------------------------------------------


def gds(operand, dimension, result=T(())):
    return op("get_dimension_size", {"operand": operand}, {"dimension": dimension}, {"result": result})


def test_get_dimension_size():
    inst = gds(T((2, 3), E_F32), 1)
    assert OPS["get_dimension_size"].violated(inst) == []
    (r,) = run(inst, a([[1, 2, 3], [4, 5, 6]], E_F32))     # the seed's Example
    same(r, a(3, SI32))
    (r,) = run(gds(T((0, 5), I1), 0), a(np.zeros((0, 5)), I1))
    same(r, a(0, SI32))
    spec = OPS["get_dimension_size"]
    assert spec.infer(inst) == {"result": T((), SI32)}
    assert spec.violated(gds(T((2, 3)), 2)) == ["get_dimension_size_c1"]
    assert spec.violated(gds(T((2, 3)), -1)) == ["get_dimension_size_c1"]
    assert spec.violated(gds(T(()), 0)) == ["get_dimension_size_c1"]
    # The Outputs table, not a constraint, fixes the result type: 0-dimensional si32.
    assert spec.types_outside_tables(inst) == []
    assert spec.types_outside_tables(gds(T((2, 3)), 1, T((1,)))) == ["result"]
    assert spec.types_outside_tables(gds(T((2, 3)), 1, T((), SI64))) == ["result"]


def iota(dimension, output):
    return op("iota", {}, {"iota_dimension": dimension}, {"output": output})


def test_iota_seed_examples():
    inst = iota(0, T((4, 5)))
    assert OPS["iota"].violated(inst) == []
    (r,) = run(inst)
    same(r, a([[0] * 5, [1] * 5, [2] * 5, [3] * 5]))
    (r,) = run(iota(1, T((4, 5))))
    same(r, a([[0, 1, 2, 3, 4]] * 4))


def test_iota_more_values():
    (r,) = run(iota(1, T((2, 3, 1), E_F16)))
    same(r, a([[[0], [1], [2]]] * 2, E_F16))
    (r,) = run(iota(0, T((3,), C64)))
    same(r, a([0, 1 + 0j, 2 + 0j], C64))
    (r,) = run(iota(0, T((0, 2), SI8)))
    same(r, a(np.zeros((0, 2)), SI8))
    # f8E4M3FN holds integers exactly up to 16; then steps of 2 (3 stored
    # mantissa bits), ties to even: 17 → 16 (mantissa 000), 19 → 20 (010), 21 → 20.
    (r,) = run(iota(0, T((22,), E_F8E4M3FN)))
    assert r.dtype == E_F8E4M3FN.numpy
    assert [float(v) for v in r] == list(range(17)) + [16, 18, 20, 20, 20]
    # bf16: steps of 2 from 256: 257 → 256, 258, 259 → 260 (ties to even).
    (r,) = run(iota(0, T((261,), E_BF16)))
    assert r.dtype == E_BF16.numpy
    assert [float(v) for v in r[254:]] == [254, 255, 256, 256, 258, 260, 260]


def test_iota_integer_overflow_is_implementation_defined():
    (r,) = run(iota(0, T((10,), SI4)))       # si4 holds 0..7 of the ids
    assert isinstance(r, Choices) and "implementation-defined" in r.why
    assert r.primary.tolist() == [0, 1, 2, 3, 4, 5, 6, 7, -8, -7]     # two's complement wrap
    assert sorted(r.options) == [8, 9] and r.options[8] == [-8] and r.labels[9] == ["two's complement wrap"]
    (r,) = run(iota(0, T((16,), SI4)))
    assert isinstance(r, Choices) and sorted(r.options) == list(range(8, 16))
    (r,) = run(iota(0, T((16,), SI8)))          # si8 holds them all: plain values
    same(r, a(list(range(16)), SI8))


def test_iota_constraints():
    spec = OPS["iota"]
    assert spec.infer(iota(0, T((3,)))) == {}
    assert spec.violated(iota(2, T((4, 5)))) == ["iota_c1"]
    assert spec.violated(iota(-1, T((4, 5)))) == ["iota_c1"]
    assert spec.violated(iota(0, T(()))) == ["iota_c1"]
    assert I1 not in spec.results[0].types and E_F8E4M3FN in spec.results[0].types and C64 in spec.results[0].types


# --------------------------------------------------------------------------
# pad
# --------------------------------------------------------------------------


def pad(operand, low, high, interior, result, padding_value=None):
    return op("pad", {"operand": operand, "padding_value": padding_value or T((), operand.element_type)},
              {"edge_padding_low": tuple(low), "edge_padding_high": tuple(high), "interior_padding": tuple(interior)},
              {"result": result})


def test_pad_seed_example():
    inst = pad(T((2, 3)), (0, 1), (2, 1), (1, 2), T((5, 9)))
    assert OPS["pad"].violated(inst) == []
    (r,) = run(inst, a([[1, 2, 3], [4, 5, 6]]), a(0))
    same(r, a([[0, 1, 0, 0, 2, 0, 0, 3, 0],
               [0, 0, 0, 0, 0, 0, 0, 0, 0],
               [0, 4, 0, 0, 5, 0, 0, 6, 0],
               [0, 0, 0, 0, 0, 0, 0, 0, 0],
               [0, 0, 0, 0, 0, 0, 0, 0, 0]]))


def test_pad_negative_and_interior_padding():
    x = a([1, 2, 3, 4, 5])
    (r,) = run(pad(T((5,)), (-2,), (-1,), (0,), T((2,))), x, a(0))          # remove 2 low, 1 high
    same(r, a([3, 4]))
    (r,) = run(pad(T((5,)), (1,), (-2,), (0,), T((4,))), x, a(9))
    same(r, a([9, 1, 2, 3]))
    # interior first: [1 9 2 9 3 9 4 9 5], then -1 low / -2 high cut into it
    (r,) = run(pad(T((5,)), (-1,), (-2,), (1,), T((6,))), x, a(9))
    same(r, a([9, 2, 9, 3, 9, 4]))
    (r,) = run(pad(T((2,)), (-2,), (1,), (2,), T((3,))), a([1, 2]), a(7))     # [1 7 7 2] → [7 2] + [7]
    same(r, a([7, 2, 7]))
    (r,) = run(pad(T((3,)), (-4,), (1,), (0,), T((0,))), a([1, 2, 3]), a(7))  # everything removed
    same(r, a([]))
    (r,) = run(pad(T((0, 2)), (1, 0), (1, 0), (3, 0), T((2, 2))), a(np.zeros((0, 2))), a(8))   # zero-size operand
    same(r, a([[8, 8], [8, 8]]))
    (r,) = run(pad(T(()), (), (), (), T(())), a(4), a(8))                       # rank 0: the operand
    same(r, a(4))
    (r,) = run(pad(T((1, 1), E_F32), (0, 1), (1, 0), (5, 5), T((2, 2), E_F32)),
               a([[1.0]], E_F32), SNAN_F32[0])                                  # the padding value's bits
    assert f32_bits(r).tolist() == [[0x7F800001, 0x3F800000], [0x7F800001, 0x7F800001]]


def test_pad_constraints_and_infer():
    spec = OPS["pad"]
    assert spec.infer(pad(T((2, 3)), (0, 1), (2, 1), (1, 2), None)) == {"result": T((5, 9))}
    assert spec.infer(pad(T((5, 0, 1), E_BF16), (-2, 3, 1), (-1, 4, 1), (1, 7, 9), None)) == \
        {"result": T((5 + 4 - 3, 7, 3), E_BF16)}
    ok = pad(T((2, 3)), (0, 1), (2, 1), (1, 2), T((5, 9)))
    assert spec.violated(ok) == []
    assert spec.violated(pad(T((2, 3)), (0, 1), (2, 1), (1, 2), T((5, 9)), T((), E_F32))) == ["pad_c1"]
    assert spec.violated(pad(T((2, 3)), (0, 1), (2, 1), (1, 2), T((5, 9), SI8))) == ["pad_c1"]
    assert spec.violated(pad(T((2, 3)), (0, 1, 7), (2, 1), (1, 2), T((5, 9)))) == ["pad_c2"]
    assert spec.violated(pad(T((2, 3)), (0, 1), (2, 1), (1,), T((5, 5)))) == ["pad_c2"]   # missing entry read as 0
    assert spec.violated(pad(T((2, 3)), (0, 1), (2, 1), (-1, 2), T((3, 9)))) == ["pad_c3"]
    assert spec.violated(pad(T((2, 3)), (0, 1), (2, 1), (1, 2), T((5, 8)))) == ["pad_c4"]
    assert spec.violated(pad(T((2, 3)), (0, 1), (2, 1), (1, 2), T((5, 9, 1)))) == ["pad_c4"]
    assert spec.violated(pad(T((2, 3)), (-6, 1), (0, 1), (1, 2), T((0, 9)))) == ["pad_c4"]   # 3 - 6 < 0
    assert spec.types_outside_tables(ok) == []
    assert spec.types_outside_tables(pad(T((2, 3)), (0, 1), (2, 1), (1, 2), T((5, 9)), T((1,)))) == ["padding_value"]


# --------------------------------------------------------------------------
# reshape, reverse
# --------------------------------------------------------------------------


def reshape(operand, result):
    return op("reshape", {"operand": operand}, {}, {"result": result})


def test_reshape():
    inst = reshape(T((2, 3)), T((3, 2)))
    assert OPS["reshape"].violated(inst) == []
    (r,) = run(inst, a([[1, 2, 3], [4, 5, 6]]))      # the seed's Example
    same(r, a([[1, 2], [3, 4], [5, 6]]))
    (r,) = run(reshape(T((2, 3)), T((6,))), a([[1, 2, 3], [4, 5, 6]]))
    same(r, a([1, 2, 3, 4, 5, 6]))
    (r,) = run(reshape(T((2, 2, 2)), T((4, 2))), a([[[1, 2], [3, 4]], [[5, 6], [7, 8]]]))
    same(r, a([[1, 2], [3, 4], [5, 6], [7, 8]]))
    (r,) = run(reshape(T(()), T((1, 1))), a(5))
    same(r, a([[5]]))
    (r,) = run(reshape(T((0, 3)), T((3, 0, 7))), a(np.zeros((0, 3))))
    same(r, a(np.zeros((3, 0, 7))))
    spec = OPS["reshape"]
    assert spec.infer(inst) == {}
    assert spec.violated(reshape(T((2, 3)), T((3, 2), E_F32))) == ["reshape_c1"]
    assert spec.violated(reshape(T((2, 3)), T((7,)))) == ["reshape_c2"]
    assert spec.violated(reshape(T((0, 3)), T(()))) == ["reshape_c2"]
    assert spec.violated(reshape(T((0, 3)), T((5, 0)))) == []


def reverse(operand, dims, result):
    return op("reverse", {"operand": operand}, {"dimensions": tuple(dims)}, {"result": result})


def test_reverse():
    inst = reverse(T((3, 2)), (1,), T((3, 2)))
    assert OPS["reverse"].violated(inst) == []
    (r,) = run(inst, a([[1, 2], [3, 4], [5, 6]]))     # the seed's Example
    same(r, a([[2, 1], [4, 3], [6, 5]]))
    x = a([[[1, 2], [3, 4], [5, 6]], [[7, 8], [9, 10], [11, 12]]])
    (r,) = run(reverse(T((2, 3, 2)), (2, 0), T((2, 3, 2))), x)       # several dims, in any order
    same(r, a([[[8, 7], [10, 9], [12, 11]], [[2, 1], [4, 3], [6, 5]]]))
    (r,) = run(reverse(T((2, 3, 2)), (), T((2, 3, 2))), x)
    same(r, x)
    (r,) = run(reverse(T(()), (), T(())), a(3))
    same(r, a(3))
    (r,) = run(reverse(T((2,), E_F32), (0,), T((2,), E_F32)), SNAN_F32)
    assert f32_bits(r).tolist() == [0xFFC00ABC, 0x7F800001]
    spec = OPS["reverse"]
    assert spec.infer(inst) == {"result": T((3, 2))}
    assert spec.violated(reverse(T((3, 2)), (1,), T((2, 3)))) == ["reverse_c1"]
    assert spec.violated(reverse(T((3, 2)), (1,), T((3, 2), SI64))) == ["reverse_c1"]
    assert spec.violated(reverse(T((3, 2)), (1, 1), T((3, 2)))) == ["reverse_c2"]
    assert spec.violated(reverse(T((3, 2)), (2,), T((3, 2)))) == ["reverse_c3"]
    assert spec.violated(reverse(T((3, 2)), (0, -1), T((3, 2)))) == ["reverse_c3"]


# --------------------------------------------------------------------------
# slice
# --------------------------------------------------------------------------


def slc(operand, start, limit, strides, result):
    return op("slice", {"operand": operand},
              {"start_indices": tuple(start), "limit_indices": tuple(limit), "strides": tuple(strides)},
              {"result": result})


def test_slice_seed_example():
    inst = slc(T((3, 4), SI64), (1, 2), (3, 4), (1, 1), T((2, 2), SI64))
    assert OPS["slice"].violated(inst) == []
    (r,) = run(inst, a([[0, 0, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]], SI64))
    same(r, a([[1, 1], [1, 1]], SI64))


def test_slice_strides():
    x = a([[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 11, 12, 13, 14]])
    (r,) = run(slc(T((3, 5)), (0, 0), (3, 5), (2, 3), T((2, 2))), x)     # rows 0, 2; columns 0, 3
    same(r, a([[0, 3], [10, 13]]))
    (r,) = run(slc(T((3, 5)), (1, 1), (3, 5), (5, 2), T((1, 2))), x)     # ⌈2/5⌉ = 1, ⌈4/2⌉ = 2
    same(r, a([[6, 8]]))
    (r,) = run(slc(T((3, 5)), (2, 4), (2, 5), (1, 1), T((0, 1))), x)     # start = limit: empty
    same(r, a(np.zeros((0, 1))))
    (r,) = run(slc(T(()), (), (), (), T(())), a(6))
    same(r, a(6))


def test_slice_constraints_and_infer():
    spec = OPS["slice"]
    assert spec.infer(slc(T((3, 5), E_F16), (0, 1), (3, 5), (2, 3), None)) == {"result": T((2, 2), E_F16)}
    assert spec.infer(slc(T((7,)), (1,), (7,), (3,), None)) == {"result": T((2,))}
    assert spec.infer(slc(T((7,)), (4,), (4,), (3,), None)) == {"result": T((0,))}
    ok = (T((3, 4)), (1, 2), (3, 4), (1, 1))
    assert spec.violated(slc(*ok, T((2, 2), E_F32))) == ["slice_c1"]
    assert spec.violated(slc(T((3, 4)), (1, 2), (3, 4), (1, 1, 1), T((2, 2)))) == ["slice_c2"]
    assert spec.violated(slc(T((3, 4)), (1,), (3,), (1,), T((2, 2)))) == ["slice_c2"]
    assert spec.violated(slc(T((3, 4)), (1, 2), (3, 5), (1, 1), T((2, 3)))) == ["slice_c3"]   # limit > dim
    assert spec.violated(slc(T((3, 4)), (-1, 2), (1, 4), (1, 1), T((2, 2)))) == ["slice_c3"]  # start < 0
    assert spec.violated(slc(T((3, 4)), (2, 2), (1, 4), (1, 1), T((-1, 2)))) == ["slice_c3"]  # start > limit
    assert spec.violated(slc(T((3, 4)), (1, 2), (3, 4), (0, 1), T((2, 2)))) == ["slice_c4"]
    assert spec.violated(slc(T((3, 4)), (1, 2), (3, 4), (-1, 1), T((5, 2)))) == ["slice_c4"]
    assert spec.violated(slc(*ok, T((2, 3)))) == ["slice_c5"]
    assert spec.violated(slc(*ok, T((2, 2, 1)))) == ["slice_c5"]
    assert spec.violated(slc(T((3, 5)), (0, 0), (3, 5), (2, 3), T((1, 2)))) == ["slice_c5"]   # ⌈3/2⌉ = 2


# --------------------------------------------------------------------------
# transpose
# --------------------------------------------------------------------------


def transpose(operand, perm, result):
    return op("transpose", {"operand": operand}, {"permutation": tuple(perm)}, {"result": result})


def test_transpose_seed_example():
    inst = transpose(T((2, 3, 2)), (2, 1, 0), T((2, 3, 2)))
    assert OPS["transpose"].violated(inst) == []
    (r,) = run(inst, a([[[1, 2], [3, 4], [5, 6]], [[7, 8], [9, 10], [11, 12]]]))
    same(r, a([[[1, 7], [3, 9], [5, 11]], [[2, 8], [4, 10], [6, 12]]]))


def test_transpose_more_values():
    (r,) = run(transpose(T((2, 3)), (1, 0), T((3, 2))), a([[1, 2, 3], [4, 5, 6]]))
    same(r, a([[1, 4], [2, 5], [3, 6]]))
    # rank 4, by hand: result[c, b, 0, 0] = operand[0, b, 0, c] = 3·b + c
    (r,) = run(transpose(T((1, 2, 1, 3)), (3, 1, 0, 2), T((3, 2, 1, 1))), a(np.arange(6).reshape(1, 2, 1, 3)))
    same(r, a([[[[0]], [[3]]], [[[1]], [[4]]], [[[2]], [[5]]]]))
    x = np.arange(2 * 3 * 4 * 5, dtype=np.int32).reshape(2, 3, 4, 5)
    (r,) = run(transpose(T((2, 3, 4, 5)), (2, 0, 3, 1), T((4, 2, 5, 3))), x)
    same(r, np.transpose(x, (2, 0, 3, 1)))        # numpy: result.shape[d] = x.shape[perm[d]]
    (r,) = run(transpose(T((0, 2)), (1, 0), T((2, 0))), a(np.zeros((0, 2))))
    same(r, a(np.zeros((2, 0))))
    (r,) = run(transpose(T(()), (), T(())), a(9))
    same(r, a(9))
    (r,) = run(transpose(T((1, 2), E_F32), (1, 0), T((2, 1), E_F32)), SNAN_F32.reshape(1, 2))
    assert f32_bits(r).tolist() == [[0x7F800001], [0xFFC00ABC]]


def test_transpose_constraints_and_infer():
    spec = OPS["transpose"]
    assert spec.infer(transpose(T((2, 3, 4)), (1, 2, 0), None)) == {"result": T((3, 4, 2))}
    assert spec.infer(transpose(T((2, 3, 4, 5), E_BF16), (3, 0, 2, 1), None)) == {"result": T((5, 2, 4, 3), E_BF16)}
    ok = transpose(T((2, 3, 4)), (1, 2, 0), T((3, 4, 2)))
    assert spec.violated(ok) == []
    assert spec.violated(transpose(T((2, 3, 4)), (1, 2, 0), T((3, 4, 2), SI64))) == ["transpose_c1"]
    assert spec.violated(transpose(T((2, 3, 4)), (1, 1, 0), T((3, 3, 2)))) == ["transpose_c2"]
    assert spec.violated(transpose(T((2, 3, 4)), (1, 2, 3), T((3, 4, 7)))) == ["transpose_c2"]
    assert spec.violated(transpose(T((2, 3, 4)), (1, 2), T((3, 4, 9)))) == ["transpose_c2"]   # too short
    assert spec.violated(transpose(T((2, 3, 4)), (1, 2, 0), T((3, 2, 4)))) == ["transpose_c3"]
    assert spec.violated(transpose(T((2, 3, 4)), (1, 2, 0), T((3, 4, 2, 1)))) == ["transpose_c3"]


def seed_c3_as_written(operand, perm, result):
    """The seed's C3 read literally: dim(operand, i) = dim(result, permutation[i])."""
    return all(operand.shape[i] == result.shape[perm[i]] for i in range(len(perm)))


def test_transpose_seed_c3_contradicts_its_semantics():
    """Seed finding: C3 as written and the Semantics disagree for a
    permutation that is not its own inverse; C3 is encoded the Semantics' way."""
    operand, perm = T((2, 3, 4)), (1, 2, 0)
    literal, semantic = T((4, 2, 3)), T((3, 4, 2))
    assert seed_c3_as_written(operand, perm, literal) and not seed_c3_as_written(operand, perm, semantic)
    assert OPS["transpose"].violated(transpose(operand, perm, literal)) == ["transpose_c3"]
    assert OPS["transpose"].violated(transpose(operand, perm, semantic)) == []
    # The Semantics, `result[i] = operand[j]` with `i[d] = j[permutation[d]]`,
    # cannot fill the literal 4x2x3 result: its index (3, 0, 0) needs
    # j[permutation[0]] = j[1] = 3, past dim(operand, 1) = 3.
    i = (3, 0, 0)
    j = [None] * 3
    for d, p in enumerate(perm):
        j[p] = i[d]
    assert j == [0, 3, 0] and not j[1] < operand.shape[1]
    # On the 3x4x2 result every index maps inside the operand.
    assert all(all(jj < n for jj, n in zip([i2[perm.index(k)] for k in range(3)], operand.shape))
               for i2 in np.ndindex(*semantic.shape))
    # For a permutation that is its own inverse (the seed's Example) both readings agree.
    assert seed_c3_as_written(T((2, 3, 4)), (2, 1, 0), T((4, 3, 2)))
    assert OPS["transpose"].violated(transpose(T((2, 3, 4)), (2, 1, 0), T((4, 3, 2)))) == []


# --------------------------------------------------------------------------
# check-spec: the z3 proofs for all eleven ops
# --------------------------------------------------------------------------


