"""Dual-mode helpers: the words constraints are written in.

A constraint receives an `Instance` with concrete structure and possibly
symbolic numbers (a Python int or a z3 integer expression).  Every helper
here returns a Python bool when all its arguments are concrete and a z3
expression otherwise, so one `<op>_c<N>` checks a concrete program, feeds
the solver that generates programs, and takes part in proofs.  Never branch
in Python on a value that may be symbolic (use `If`).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Sequence

import z3

from ..types import ElementType, TensorType


def is_symbolic(x: Any) -> bool:
    return isinstance(x, z3.ExprRef)


def _flat(args: Iterable) -> list:
    out = []
    for a in args:
        if isinstance(a, (list, tuple)) or (hasattr(a, "__iter__") and not isinstance(a, (str, z3.ExprRef))):
            out.extend(_flat(a))
        else:
            out.append(a)
    return out


def _z3b(x):
    return x if is_symbolic(x) else z3.BoolVal(bool(x))


def And(*args):
    xs = _flat(args)
    if any(is_symbolic(x) for x in xs):
        # Concrete False short-circuits so a solver never sees a dead branch.
        if any(not is_symbolic(x) and not x for x in xs):
            return False
        return z3.And([x for x in xs if is_symbolic(x)])
    return all(bool(x) for x in xs)


def Or(*args):
    xs = _flat(args)
    if any(is_symbolic(x) for x in xs):
        if any(not is_symbolic(x) and x for x in xs):
            return True
        return z3.Or([x for x in xs if is_symbolic(x)])
    return any(bool(x) for x in xs)


def Not(x):
    return z3.Not(x) if is_symbolic(x) else not x


def Implies(a, b):
    if is_symbolic(a) or is_symbolic(b):
        if not is_symbolic(a):
            return b if a else True
        return z3.Implies(a, _z3b(b))
    return (not a) or bool(b)


def If(c, a, b):
    if is_symbolic(c):
        return z3.If(c, a, b)
    return a if c else b


def Eq(a, b):
    return a == b


def Distinct(*args):
    xs = _flat(args)
    if any(is_symbolic(x) for x in xs):
        return z3.Distinct(*[x if is_symbolic(x) else z3.IntVal(x) for x in xs]) if len(xs) > 1 else True
    return len(set(xs)) == len(xs)


def all_of(xs: Iterable) -> Any:
    return And(*list(xs))


def any_of(xs: Iterable) -> Any:
    return Or(*list(xs))


def is_unique(xs: Sequence) -> Any:
    """The spec's `is_unique(xs)`: no two entries equal."""
    return Distinct(*xs)


def in_range(x, lo, hi) -> Any:
    """lo <= x < hi (half-open, as the spec writes [lo, hi))."""
    return And(lo <= x, x < hi)


def is_sorted(xs: Sequence) -> Any:
    """Ascending (non-strict) order of the entries."""
    return all_of(xs[i] <= xs[i + 1] for i in range(len(xs) - 1))


def is_permutation(xs: Sequence, n) -> Any:
    """`xs` is a permutation of [0, 1, ..., n-1] (`n` concrete: a rank)."""
    if len(xs) != n:
        return False
    return And(all_of(in_range(x, 0, n) for x in xs), is_unique(xs))


def size(xs) -> int:
    """The spec's `size(x)`: entries of a 1-D attribute, or members of a variadic input."""
    return len(xs)


def at(xs: Sequence, i, default=0):
    """`xs[i]` where the index may be symbolic: an `If` chain over the
    positions (concrete `i` indexes directly).  Out of range: `default`
    (callers state the range as a constraint of its own)."""
    if not is_symbolic(i):
        return xs[i] if 0 <= i < len(xs) else default
    out = default
    for k in reversed(range(len(xs))):
        out = If(i == k, xs[k], out)
    return out


def contains(xs: Sequence, x) -> Any:
    """`x in xs` where entries may be symbolic."""
    return any_of(y == x for y in xs)


# --------------------------------------------------------------------------
# Type helpers the spec's constraints are written with
# --------------------------------------------------------------------------


def shape(t: TensorType) -> tuple:
    return tuple(t.shape)


def rank(t: TensorType) -> int:
    return len(t.shape)


def dim(t: TensorType, i: int):
    return t.shape[i]


def element_type(t: TensorType) -> ElementType:
    return t.element_type


def same_shape(*ts: TensorType):
    """All tensors have the same shape (ranks are structure: compared concretely)."""
    first = ts[0]
    if any(rank(t) != rank(first) for t in ts):
        return False
    return all_of(d == e for t in ts[1:] for d, e in zip(shape(first), shape(t)))


def element_types_equal(a, b, ignore: tuple = ()):
    """`a = b` for element types, dual mode.  A quantized type's numbers
    (scales, zero points, storage_min/max, quantization dimension) may be z3
    terms (spec/quantized_checks.py proves the quantization clauses so), and
    Python's `==` on the record would compare those terms as expressions —
    structurally, False for two distinct unknowns — not as values; so they
    are compared number by number.  `ignore`: fields that may differ (v1.20's
    "element_type(operand) except that … may differ": `same_except`)."""
    if not (getattr(a, "is_quantized", False) and getattr(b, "is_quantized", False)):
        return a == b
    out = []
    for f in dataclasses.fields(a):
        if f.name in ignore:
            continue
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, tuple) or isinstance(y, tuple):
            if len(x) != len(y):
                return False
            out += [p == q for p, q in zip(x, y)]
        elif (x is None) != (y is None):   # per-tensor against per-axis
            return False
        elif x is not None:
            out.append(x == y)
    return all_of(out)


def same_element_type(*ts: TensorType):
    return all_of(element_types_equal(t.element_type, ts[0].element_type) for t in ts)


def same_type(*ts: TensorType):
    return And(same_element_type(*ts), same_shape(*ts))


def same_types(xs: Sequence, ys: Sequence):
    """Two lists of value types are equal, member by member: tensors by
    `same_type` (dims may be symbolic), tokens and tuples as they are — the
    "tensors or tokens" of control flow's operands and regions."""
    if len(xs) != len(ys):
        return False
    return all_of(same_type(x, y) if isinstance(x, TensorType) and isinstance(y, TensorType) else x == y
                  for x, y in zip(xs, ys))


def shape_is(t: TensorType, dims: Sequence):
    if rank(t) != len(dims):
        return False
    return all_of(d == e for d, e in zip(shape(t), dims))
