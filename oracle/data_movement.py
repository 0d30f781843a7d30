"""Execution of `DataMovement` semantics: the spec's index formulas on whole
arrays, no rounding anywhere.  A tuple operand arrives as a tuple of
arrays and a tuple result is returned as one (nested for nested tuples),
becoming a tuple of Expectations; a `Choices` result (scatter's orders of
duplicate updates) becomes an output with implementation-defined
elements."""
from __future__ import annotations

import dataclasses

import numpy as np

from ..spec.dsl import ANY_VALUE, Choices, DataMovement
from ..spec.expectation import Expectation
from ..spec.kinds.bounded import BOUNDED
from ..spec.types import ElementType, TensorType, TupleType, to_bits
from .elementwise import alternative_records
from .rounding import round_bits, round_directed
from .semantics import on_arrays


@on_arrays(DataMovement)
def run_data_movement(sem: DataMovement, inst, operands: list, results: list) -> list:
    """The op's index formulas on whole arrays.  A tuple operand arrives as a
    tuple of arrays and a tuple result is returned as one (nested for nested
    tuples), becoming a tuple of Expectations; a `Choices` result becomes
    an output with implementation-defined elements."""
    outs = sem.fn(inst, *operands)
    if len(outs) != len(results):
        raise ValueError(f"{inst.spec.mnemonic}: semantics gave {len(outs)} results for {len(results)} result types")
    return [_moved(v, t, sem.bit_exact, inst.spec.mnemonic) for v, t in zip(outs, results)]


PRIMARY_LABEL = "primary value"


def _moved(value, t, bit_exact: bool, who: str):
    if isinstance(t, TupleType):
        if not isinstance(value, tuple) or len(value) != len(t.types):
            raise ValueError(f"{who}: semantics gave {type(value).__name__} for {t.mlir}")
        return tuple(_moved(v, m, bit_exact, who) for v, m in zip(value, t.types))
    if isinstance(value, Choices):
        return _choices(value, t, bit_exact, who)
    return Expectation(t, bits_of(value, t, who), bit_exact=bit_exact)


def bits_of(value, t: TensorType, who: str) -> np.ndarray:
    arr = np.asarray(value)
    if tuple(arr.shape) != tuple(int(d) for d in t.shape):
        raise ValueError(f"{who}: semantics gave shape {arr.shape} for {t.mlir}")
    return to_bits(arr.astype(t.element_type.numpy, copy=False), t.element_type)


def _choices(c: Choices, t: TensorType, bit_exact: bool, who: str) -> Expectation:
    """`Choices` → Expectation: `impl_defined` are the flat indices with
    options; each label's alternative is the primary bits with that label's
    values put in (or, for `ANY_VALUE`, the indices where it is offered).
    The first alternative names the primary value's choice (the judge reads
    it so): the first label whose value equals the primary wherever it is
    offered, else a label of its own, PRIMARY_LABEL."""
    et = t.element_type
    bits = bits_of(c.primary, t, who)
    trail = (2,) if et.is_complex else ()
    flat = bits.reshape((-1,) + trail)
    if set(c.options) != set(c.labels) or any(len(c.options[i]) != len(c.labels[i]) for i in c.options):
        raise ValueError(f"{who}: Choices options and labels disagree")
    impl = sorted(int(i) for i in c.options if c.options[i])   # plain ints: they go to JSON
    if c.ranges:
        return _ranged(c, t, _choices(dataclasses.replace(c, ranges={}), t, bit_exact, who))
    if not impl:
        return Expectation(t, bits, bit_exact=bit_exact)
    per_label: dict = {}  # label -> {flat index: bits or ANY_VALUE}
    for i in impl:
        for v, label in zip(c.options[i], c.labels[i]):
            per_label.setdefault(label, {}).setdefault(i, v if v is ANY_VALUE else _scalar_bits(v, et))
    alternatives = {}
    for label, at in per_label.items():
        wild = [i for i, b in at.items() if b is ANY_VALUE]
        if wild and len(wild) != len(at):
            raise ValueError(f"{who}: label {label!r} offers both values and ANY_VALUE")
        if wild:
            alternatives[label] = wild
            continue
        alt = flat.copy()
        for i, b in at.items():
            alt[i] = b
        alternatives[label] = alt.reshape(bits.shape)
    first = next((label for label, alt in alternatives.items()
                  if not isinstance(alt, list) and np.array_equal(alt, bits)), None)
    if first is None:
        alternatives = {PRIMARY_LABEL: bits, **alternatives}
    else:
        alternatives = {first: alternatives.pop(first), **alternatives}
    return Expectation(t, bits, bit_exact=bit_exact, impl_defined=impl, alternatives=alternative_records(alternatives),
                       why=c.why)


def _ranged(c: Choices, t: TensorType, e: Expectation) -> Expectation:
    """`e` with the elements of `c.ranges` stated as their `Range`: the exact
    result rounded, and the ends rounded outward (a bounded expectation; the
    other elements' ends are their own value)."""
    fmt = t.element_type.format
    flat = np.reshape(e.bits, -1).copy()
    lo, hi = flat.copy(), flat.copy()
    for i, r in c.ranges.items():
        flat[i] = round_bits(r.nearest, fmt)
        lo[i], hi[i] = round_directed(r.lo, fmt, up=False), round_directed(r.hi, fmt, up=True)
    shape = np.shape(e.bits)
    return Expectation(t, flat.reshape(shape), BOUNDED.name, bit_exact=False, impl_defined=list(e.impl_defined),
                       alternatives=list(e.alternatives), why=e.why, lo=lo.reshape(shape), hi=hi.reshape(shape))


def _scalar_bits(v, et: ElementType) -> np.ndarray:
    return to_bits(np.asarray(v).astype(et.numpy, copy=False).reshape(()), et)


