"""What the CHLO element-wise ops share: CHLO's type traits as constraints,
and one helper that declares a unary function (most of them are)."""
from __future__ import annotations

import math

import numpy as np

from ..dsl import Approx, Elementwise, Generic, OpSpec, Operand, Result, same_shape, same_type
from ..types import I1, TensorType


def same_operand_and_result_type(op) -> bool:
    """CHLO's `CompatibleOperandsAndResultType` (with static shapes: the same
    type) for every operand and the result."""
    ts = [op.operands[o.name] for o in op.spec.operands] + [op.result]
    return all(same_type(t, ts[0]) for t in ts[1:])


def predicate_shape(op) -> bool:
    """The is_inf predicates: the result has the operand's shape (element
    type i1, by the result table)."""
    return same_shape(op.operand, op.result)


def infer_same(op) -> dict:
    return {"result": op.operands[op.spec.operands[0].name]}


def infer_i1(op) -> dict:
    return {"result": TensorType(tuple(op.operand.shape), I1)}


def unary(mnemonic: str, element, types, *, accuracy="approx", generic=None, notes: str = "") -> OpSpec:
    """A unary CHLO function `chlo.<mnemonic>`: operand and result of one type."""
    c1 = named_constraint(same_operand_and_result_type, f"{mnemonic}_c1")
    return OpSpec(mnemonic=f"chlo.{mnemonic}", operands=(Operand("operand", types),),
                  results=(Result("result", types),), constraints=(c1,), infer=infer_same,
                  semantics=Elementwise(element, accuracy=accuracy, generic=generic), notes=notes)


def named_constraint(fn, name: str):
    def c(op):
        return fn(op)
    c.__name__ = c.__qualname__ = name
    c.__doc__ = "(C1) CHLO's `CompatibleOperandsAndResultType`: operands and result have the same type."
    return c


def is_nonpositive_integer(x: float) -> bool:
    return x <= 0 and math.isfinite(x) and x == math.floor(x)


def odd_on_the_unit_interval(f):
    """(element, generic) of an odd function of (−1, 1) with poles at ±1
    (atanh, erf_inv): f(±0) = ±0, f(±1) = ±inf (the one-sided limits),
    |x| > 1 and NaN → NaN (no real value), `Approx(f, x)` elsewhere — and
    the `Generic` claim of the same: f inside, NaN outside."""
    def element(op, x):
        if math.isnan(x) or abs(x) > 1:
            return math.nan
        if abs(x) == 1:
            return math.copysign(math.inf, x)
        if x == 0:
            return x
        return Approx(f, x)

    def inside(x):
        return (np.abs(x) < 1) & (x != 0)

    def outside(x):
        return np.abs(x) > 1
    return element, Generic(f, inside, nan=outside)
