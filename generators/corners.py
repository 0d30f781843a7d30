"""The hard corners of the ops that move data, reached on purpose.

Random structures rarely hit the edges an implementation gets wrong: rank 0
and rank 5, zero-sized dimensions, every permutation of a transpose, empty
and full windows, negative and interior padding, empty scatter updates,
nested tuples.  Each corner here is a structure (operand ranks, a layout —
see `spec.checks.symbolic_instance`) and z3 conditions on the op's own
names (`where(op)` over a symbolic instance); the solver finds the numbers
under the op's constraints as for any case, so a corner can never produce
an invalid program.  A corner the op's structure cannot reach is skipped.
"""
from __future__ import annotations

import itertools

import z3

from ..spec.checks import Skeleton
from ..spec.dsl import OpSpec
from ..spec.types import TensorType, TupleType
from . import solve


def _some_zero(t):
    return [z3.Or([d == 0 for d in t.shape])] if t.shape else [z3.BoolVal(False)]


def _first_operand(op):
    v = next(iter(op.operands.values()))
    return v[0] if isinstance(v, list) else v


# (note, ranks per operand (None: the op's count of operands, all equal to the int), layout, where)
def _generic(spec: OpSpec) -> list:
    n = len(spec.operands)
    return [
        ("rank 0", [0] * n, None, lambda op: []),
        ("rank 5", [5] * n, None, lambda op: []),
        ("zero-sized dimension", [2] * n, None, lambda op: _some_zero(_first_operand(op)) if op.operands else []),
    ]


def _transpose(spec):
    out = []
    for r in range(0, 5):
        for perm in itertools.permutations(range(r)):
            out.append((f"permutation {list(perm)}", [r], None,
                        lambda op, perm=perm: [p == v for p, v in zip(op.permutation, perm)]))
    return out


def _slice(spec):
    return [
        ("empty window (start = limit)", [2], None, lambda op: [op.start_indices[0] == op.limit_indices[0]]),
        ("full window", [2], None, lambda op: [z3.And(s == 0, l == d, st == 1) for s, l, st, d in
                                                  zip(op.start_indices, op.limit_indices, op.strides, op.operand.shape)]),
        ("strides > 1", [2], None, lambda op: [st >= 2 for st in op.strides] + [d >= 4 for d in op.operand.shape]),
    ]


def _dynamic_slice(spec):
    return [
        ("full window", [2, 0], None, lambda op: [s == d for s, d in zip(op.slice_sizes, op.operand.shape)]),
        ("empty window", [2, 0], None, lambda op: [op.slice_sizes[0] == 0]),
    ]


def _dynamic_update_slice(spec):
    return [
        ("empty update", [2, 2, 0], None, lambda op: [op.update.shape[0] == 0]),
        ("full update", [2, 2, 0], None, lambda op: [u == d for u, d in zip(op.update.shape, op.operand.shape)]),
    ]


def _pad(spec):
    return [
        ("negative edge padding", [2, 0], None, lambda op: [op.edge_padding_low[0] < 0, op.edge_padding_high[1] < 0]),
        ("interior padding", [2, 0], None, lambda op: [i >= 1 for i in op.interior_padding]),
        ("negative edges into interior padding", [1, 0], None,
         lambda op: [op.interior_padding[0] >= 2, op.edge_padding_low[0] < 0, op.operand.shape[0] >= 3]),
    ]


def _gather(spec):
    return [
        ("full slice", [2, 2], None, lambda op: [s == d for s, d in zip(op.slice_sizes, op.operand.shape)]),
        ("empty slice", [2, 2], None, lambda op: [op.slice_sizes[0] == 0]),
        ("index_vector_dim = rank(start_indices)", [2, 1], None, lambda op: [op.index_vector_dim == 1]),
    ]


def _scatter(spec):
    return [
        ("empty updates", [2, 2, 2], None, lambda op: _some_zero(op.updates[0])),
        ("two inputs", [2, 2, 2], {"counts": {"inputs": 2}}, lambda op: []),
        ("full window", [2, 1, 2], None, lambda op: [op.index_vector_dim == 1]),
    ]


def _concatenate(spec):
    return [
        ("three inputs", [2], {"counts": {"inputs": 3}}, lambda op: []),
        ("an empty input", [2], {"counts": {"inputs": 2}},
         lambda op: [z3.Or([z3.And(op.dimension == k, op.inputs[0].shape[k] == 0) for k in range(2)])]),
    ]


def _broadcast_in_dim(spec):
    return [
        ("size-1 dimensions expanded", [2], {"result_ranks": {"result": 3}},
         lambda op: [op.operand.shape[0] == 1, z3.Or([d >= 2 for d in op.result.shape])]),
        ("scalar to rank 4", [0], {"result_ranks": {"result": 4}}, lambda op: []),
    ]


def _reshape(spec):
    return [
        ("rank 0 to [1]", [0], {"result_ranks": {"result": 1}}, lambda op: []),
        ("to rank 5", [2], {"result_ranks": {"result": 5}}, lambda op: []),
    ]


def _iota(spec):
    # Indices past 2^(mantissa+1) round in the narrow float formats.
    return [("long dimension (indices round in narrow formats)", [], {"result_ranks": {"output": 1}},
             lambda op: [op.output.shape[0] >= 20])]


def _reverse(spec):
    return [("every dimension reversed", [3], {"lengths": {"dimensions": 3}}, lambda op: [])]


SPECIFIC = {"transpose": _transpose, "slice": _slice, "dynamic_slice": _dynamic_slice,
            "dynamic_update_slice": _dynamic_update_slice, "pad": _pad, "gather": _gather,
            "scatter": _scatter, "concatenate": _concatenate, "broadcast_in_dim": _broadcast_in_dim,
            "reshape": _reshape, "iota": _iota, "reverse": _reverse}
MAX_DIM_CORNER = {"iota": 40}


def corners(spec: OpSpec) -> list:
    out = _generic(spec) if spec.operands else []
    if spec.mnemonic in SPECIFIC:
        out += SPECIFIC[spec.mnemonic](spec)
    return out


def _nested_tuples(spec: OpSpec, skels: list[Skeleton], rng):
    """Tuples inside tuples (the spec's own example nests one): built by hand,
    the types drawn from the op's skeletons, checked against the constraints."""
    types = [s.operand_types[0] for s in skels]
    a, b, c = (TensorType(shape, types[int(rng.integers(0, len(types)))]) for shape in ((2,), (), (1, 3)))
    inner = TupleType((a, TupleType((b,))))
    if spec.mnemonic == "tuple":
        inst = spec.instance({"val": [inner, c]}, {}, {"result": TupleType((inner, c))})
        skel = skels[0]
        yield "nested tuples", skel, inst
    elif spec.mnemonic == "get_tuple_element":
        for index, res in ((0, inner), (1, c)):
            skel = next((s for s in skels if s.attr_dict.get("index") == index), skels[0])
            inst = spec.instance({"operand": TupleType((inner, c))}, {"index": index}, {"result": res})
            yield f"nested tuples, index {index}", skel, inst


def corner_instances(spec: OpSpec, skels: list[Skeleton], rng):
    """(note, skeleton, instance) per corner the op reaches; skeletons rotate
    over the valid ones so corners land on different element types."""
    if not skels:
        return
    if spec.mnemonic in ("tuple", "get_tuple_element"):
        for note, skel, inst in _nested_tuples(spec, skels, rng):
            if not spec.violated(inst) and not spec.operand_types_ok(inst):
                yield note, skel, inst
    order = [int(i) for i in rng.permutation(len(skels))]
    k = 0
    for note, ranks, layout, where in corners(spec):
        for attempt in range(3):
            skel = skels[order[k % len(skels)]]
            k += 1

            def extra(sym, where=where):
                try:
                    return where(sym.inst)
                except (AttributeError, IndexError, KeyError, TypeError):
                    return [z3.BoolVal(False)]
            got = solve.solve_shapes(spec, skel, ranks, rng, 1, zero_prob=0.0, extra=extra, layout=layout,
                                     max_dim=MAX_DIM_CORNER.get(spec.mnemonic, solve.MAX_DIM),
                                     max_elements=max(solve.MAX_ELEMENTS, MAX_DIM_CORNER.get(spec.mnemonic, 0)))
            if got:
                yield note, skel, got[0]
                break
