"""chlo.top_k — the `k` largest elements along the last dimension, and their
indices (chlo.md "chlo.top_k").

chlo.md: "computes the top `k` entries in each row (resp. vector along the
last dimension) … `values[j]` is the `j`-th largest entry in `input`, and
its index is `indices[j]`"; `values.shape = indices.shape =
input.shape[:-1] + [k]`; "If `is_stable` is true, the sort is stable: if
two elements are equal, the lower-index element appears first. If false,
the relative order of equal elements is implementation-defined."

Readings:
* "Largest" for floats.  chlo.md names no order; NaN and the two zeros
  need one.  The order read is IEEE 754's totalOrder (-NaN < -inf < … <
  -0 < +0 < … < +inf < +NaN; spec/ops/compare.py `total_order_keys`):
  the order jaxlib's own decomposition of the op states (chlo-legalize-
  to-stablehlo writes a sort whose comparator is `compare GT, TOTALORDER`)
  and the one XLA's CPU TopK follows (a NaN first, -0 after +0, -NaN
  last: tests/oracle/test_chlo_top_k.py).  Integers by value, i1 false <
  true.  Complex operands (chlo.md's table lists them) have no order: not
  declared, so such a program is still legalized.
* "Equal" is then equal keys — the same bits — so the values are one
  answer whatever the tie order; only the indices of equal elements may
  come in another order.  With `is_stable` false (JAX writes no
  `is_stable`, the default), each index of a run of equal elements is
  offered the run's other indices ("ties reordered: tied element #t", as
  spec/ops/sort.py offers them; a run that reaches past position k offers
  the indices of equal elements left out too).  Judged per position: each
  index must point at an element equal to its value (operand[index] ==
  value); that the indices of a row are distinct is not checked — as
  sort's tie offers, slightly lenient.
* `indices` are i32: CHLO's type inference gives i32 (TopKOp's
  InferTensorType); the Results table's "tensor of … values" is read
  through it.

Constraints are the CHLO verifier's (TopKOp::inferReturnTypeComponents):
operand of rank ≥ 1, k at most the last dimension; and k ≥ 0 (a count).
Semantics: data movement — no rounding, values bit-exact (NaN payloads
included).
"""
from __future__ import annotations

import numpy as np

from ..dsl import (BOOLEAN, FLOAT, INTEGER, And, Attribute, BoolAttr, Choices, DataMovement, IntAttr, OpSpec,
                   Operand, Result, rank, shape)
from ..ops.compare import total_order_keys
from ..types import SI32, TensorType

TYPES = BOOLEAN + INTEGER + FLOAT
TIES_WHY = ('chlo.top_k: "If false, the relative order of equal elements is implementation-defined" — the '
            "indices of equal elements may come in any order")


def top_k_c1(op):
    """(C1) CHLO's verifier: `operand` has rank at least 1 ("operand's rank must be at least 1")."""
    return rank(op.operand) >= 1


def top_k_c2(op):
    """(C2) CHLO's verifier: 0 ≤ `k` ≤ the last dimension of `operand` ("operand's last dimension must be at
    least k"); k counts elements, so it is not negative."""
    return And(0 <= op.k, op.k <= shape(op.operand)[-1])


def top_k_c3(op):
    """(C3) CHLO's `InferTensorType`: `values` has `operand`'s element type and `indices` is i32, both of
    shape `operand.shape[:-1] + [k]`."""
    want = infer(op)
    return op.values == want["values"] and op.indices == want["indices"]


def infer(op):
    dims = tuple(op.operand.shape[:-1]) + (op.k,)
    return {"values": TensorType(dims, op.operand.element_type), "indices": TensorType(dims, SI32)}


def keys(a: np.ndarray) -> np.ndarray:
    """The order's key of every element as int64 (module docstring):
    totalOrder for floats, the value for integers (ui64 shifted by -2^63,
    which keeps the order), false < true."""
    a = np.asarray(a)
    if a.dtype.kind not in "biu":
        return total_order_keys(a)
    if a.dtype == np.uint64:
        return (a ^ np.uint64(1 << 63)).view(np.int64)
    return a.astype(np.int64)


def arrays(op, operand):
    """Each row along the last dimension sorted by descending key, stably;
    its first k elements and their indices; with `is_stable` false, the
    indices of equal elements offered in any order (module docstring)."""
    a = np.asarray(operand)
    k = int(op.k)
    n = a.shape[-1]
    key = keys(a)
    order = np.argsort(~key, axis=-1, kind="stable")[..., :k]   # ~key = -key - 1: descending, no overflow
    values = np.take_along_axis(a, order, axis=-1)
    indices = order.astype(np.int32)
    if op.is_stable or k == 0:
        return [values, indices]
    options, labels = {}, {}
    flat = np.arange(indices.size).reshape(indices.shape)
    for row in np.ndindex(*a.shape[:-1]):
        kr = key[row]
        for p in range(k):
            i = int(order[row + (p,)])
            tied = [j for j in range(n) if kr[j] == kr[i]]
            if len(tied) < 2:
                continue
            f = int(flat[row + (p,)])
            for t, j in enumerate(tied):
                if j != i:
                    options.setdefault(f, []).append(np.int32(j))
                    labels.setdefault(f, []).append(f"ties reordered: tied element #{t}")
    return [values, Choices(indices, options, labels, TIES_WHY) if options else indices]


SPEC = OpSpec(
    mnemonic="chlo.top_k",
    operands=(Operand("operand", TYPES),),
    attributes=(Attribute("k", IntAttr()), Attribute("is_stable", BoolAttr(), default=False, optional=True)),
    results=(Result("values", TYPES), Result("indices", (SI32,))),
    constraints=(top_k_c1, top_k_c2, top_k_c3),
    infer=infer,
    semantics=DataMovement(arrays),
    notes="k largest along the last dimension, by totalOrder; ties' indices implementation-defined unless is_stable",
)
