"""chlo.ragged_dot — a matmul over one ragged dimension (chlo.md
"chlo.ragged_dot").

chlo.md: "Like dot_general, the lhs and rhs are allowed arbitrary batch and
contracting dimensions. Additionally, the lhs is required to have one
ragged dimension, and the rhs may have at most one group dimension. The op
has three modes, depending on the kind of the lhs ragged dimension":

1. the ragged dimension is an lhs non-contracting dimension (`m`):
   `[b,m,k], [g,b,k,n], [b,g] -> [b,m,n]`, and rhs has a group dimension;
2. it is a contracting dimension (`k`): `[b,m,k], [b,k,n], [b,g] -> [g,b,m,n]`;
3. it is a batch dimension (`b`): `[b,m,k], [b,k,n], [g] -> [b,m,n]`.

Readings (chlo.md states the shapes, not the values; these are what its
words "group sizes" and "ragged" mean, as lax.ragged_dot's reference
lowering computes them — a mask per group, then dot_general):
* `group_sizes` split the ragged dimension into consecutive groups: group
  j covers the indices [s_j, s_j + group_sizes[j]), s_j the sum of the
  sizes before it, each group sized along the ragged dimension of its own
  batch row where group_sizes has the batch dimensions ([b, g]).
* Mode 1: a result row in group j is the dot product of its lhs row with
  rhs's group j; mode 2: result[j] is the dot product over the contracting
  indices of group j only; mode 3: a batch row in some group is the
  batched dot product of that row.  In modes 1 and 2, an index no group
  covers (the sizes sum to less than the dimension) gets the empty sum, 0
  (lax.ragged_dot's mask, and jaxlib's decomposition, give it).  In mode
  3 a batch row no group covers is implementation-defined: jaxlib's
  decomposition computes the row's dot product all the same (the primary
  value), mode 1's reading would give 0 (offered beside it) — the rhs has
  no group dimension there, so a group selects nothing but the row.
* A negative group size gives groups that no longer split the dimension;
  chlo.md says nothing of it: no result is stated.
* Each result element is judged as dot_general's (spec/ops/dot_general.py,
  `dot_answer`: the exact Σ aᵢbᵢ of its pairs and the bound every
  summation order allows, in the result's element type, which may be a
  promotion of lhs's; `at_precision` for precision_config).
* precision_config is written `[#chlo<precision DEFAULT>, …]`; left out it
  is read as [DEFAULT, DEFAULT], as dot_general's.

Constraints: chlo.md's sentences and its modes' shape signatures, and
dot_general's rules for batching and contracting dimensions.  Element
types: floats, integers and complex (the table's bool and quantized types
are not declared; such a program is still legalized).  Operands of one
element type.
"""
from __future__ import annotations

import numpy as np

from ..dsl import (COMPLEX, FLOAT, INTEGER, Accumulating, And, Attribute, Group, I64ArrayAttr, ImplDefined, OpSpec,
                   Operand, Result, all_of, in_range, is_unique, rank, shape, size)
from ..ops.dot_general import element_objects, accumulation_type, at_precision, dot_answer, promotable
from ..types import TensorType

GROUP = "ragged_dot_dimension_numbers"
FIELDS = ("lhs_batching_dimensions", "rhs_batching_dimensions", "lhs_contracting_dimensions",
          "rhs_contracting_dimensions", "lhs_ragged_dimensions", "rhs_group_dimensions")
TYPES = INTEGER + FLOAT + COMPLEX
PRECISIONS = ("DEFAULT", "HIGH", "HIGHEST")
UNGROUPED_ROW = "the batch row's dot product (jaxlib's decomposition)"
EMPTY_SUM = "the empty sum, 0 (as mode 1 reads a row in no group)"
UNGROUPED_WHY = ("chlo.ragged_dot mode 3: chlo.md says nothing of a batch row no group covers; jaxlib's "
                 "chlo-legalize-to-stablehlo computes its dot product anyway, mode 1's reading would give 0")
NEGATIVE_WHY = "chlo.ragged_dot: a negative group size does not split the ragged dimension; chlo.md states nothing"


class ChloPrecisionList:
    """`precision_config = [#chlo<precision DEFAULT>, …]` (CHLO's own enum)."""

    def to_mlir(self, v) -> str:
        return "[" + ", ".join(f"#chlo<precision {x}>" for x in v) + "]"

    def from_mlir(self, text: str) -> tuple:
        t = text.strip()
        if not (t.startswith("[") and t.endswith("]")):
            raise ValueError(f"expected [#chlo<precision …>, …], got {text!r}")
        out = []
        for item in (x.strip() for x in t[1:-1].split(",") if x.strip()):
            if not (item.startswith("#chlo<precision ") and item.endswith(">")):
                raise ValueError(f"expected #chlo<precision …>, got {item!r}")
            v = item[len("#chlo<precision "):-1].strip()
            if v not in PRECISIONS:
                raise ValueError(f"{v!r} is not one of {PRECISIONS}")
            out.append(v)
        return tuple(out)


def _dims(op):
    return {f: tuple(int(d) for d in getattr(op, f)) for f in FIELDS}


def mode(op) -> int | None:
    """1, 2 or 3 by where the lhs ragged dimension is (module docstring); None when it is not one dimension."""
    d = _dims(op)
    if len(d["lhs_ragged_dimensions"]) != 1:
        return None
    r = d["lhs_ragged_dimensions"][0]
    if r in d["lhs_contracting_dimensions"]:
        return 2
    if r in d["lhs_batching_dimensions"]:
        return 3
    return 1


def _free(n: int, *named) -> list:
    used = {x for group in named for x in group}
    return [i for i in range(n) if i not in used]


def ragged_dot_c1(op):
    """(C1) "the lhs is required to have one ragged dimension, and the rhs may have at most one group
    dimension"; each names a dimension of its operand."""
    d = _dims(op)
    return (len(d["lhs_ragged_dimensions"]) == 1 and len(d["rhs_group_dimensions"]) <= 1
            and all(0 <= x < rank(op.lhs) for x in d["lhs_ragged_dimensions"])
            and all(0 <= x < rank(op.rhs) for x in d["rhs_group_dimensions"]))


def ragged_dot_c2(op):
    """(C2) As dot_general: as many lhs as rhs batching dimensions, and contracting dimensions; each names a
    dimension of its operand, none twice (rhs's group dimension included)."""
    d = _dims(op)
    lhs = d["lhs_batching_dimensions"] + d["lhs_contracting_dimensions"]
    rhs = d["rhs_batching_dimensions"] + d["rhs_contracting_dimensions"] + d["rhs_group_dimensions"]
    return (len(d["lhs_batching_dimensions"]) == len(d["rhs_batching_dimensions"])
            and len(d["lhs_contracting_dimensions"]) == len(d["rhs_contracting_dimensions"])
            and is_unique(lhs) and is_unique(rhs)
            and all(in_range(x, 0, rank(op.lhs)) for x in lhs) and all(in_range(x, 0, rank(op.rhs)) for x in rhs))


def ragged_dot_c3(op):
    """(C3) As dot_general: paired batching dimensions, and paired contracting dimensions, have the same size."""
    d = _dims(op)
    return all_of([shape(op.lhs)[a] == shape(op.rhs)[b]
                   for a, b in zip(d["lhs_batching_dimensions"] + d["lhs_contracting_dimensions"],
                                   d["rhs_batching_dimensions"] + d["rhs_contracting_dimensions"])])


def ragged_dot_c4(op):
    """(C4) "In mode 1 … The rhs is required to have a group dimension"; in modes 2 and 3 (`[b,k,n]`) it has
    none."""
    return (len(_dims(op)["rhs_group_dimensions"]) == 1) == (mode(op) == 1)


def ragged_dot_c5(op):
    """(C5) `group_sizes`: `[b, g]` in modes 1 and 2 (the lhs batch dimensions, then the groups; `[g]`, read
    as the same sizes for every batch row, too), `[g]` in mode 3; in mode 1 g is the size of rhs's group
    dimension."""
    d = _dims(op)
    gs = tuple(shape(op.group_sizes))
    if not gs:
        return False
    batch = tuple(shape(op.lhs)[x] for x in d["lhs_batching_dimensions"])
    m = mode(op)
    ok = len(gs) == 1 or (m in (1, 2) and gs[:-1] == batch)
    if m == 1:
        ok = ok and gs[-1] == shape(op.rhs)[d["rhs_group_dimensions"][0]]
    return ok


def ragged_dot_c6(op):
    """(C6) The result's shape is the mode's signature — mode 2: `[g]` then the lhs batch, lhs free and rhs
    free dimensions; modes 1 and 3: those without `[g]` — and its element type is lhs's or a promotion of it
    (dot_general's C13)."""
    want = result_type(op)
    return want is not None and tuple(shape(op.result)) == tuple(want.shape) and \
        promotable(op.lhs.element_type, op.result.element_type)


def ragged_dot_c7(op):
    """(C7) lhs and rhs have the same element type; `precision_config` has 0 or 2 entries."""
    return op.lhs.element_type == op.rhs.element_type and \
        (op.precision_config is None or size(op.precision_config) in (0, 2))


def result_type(op) -> TensorType | None:
    d = _dims(op)
    m = mode(op)
    if m is None:
        return None
    lb = d["lhs_batching_dimensions"]
    lr = _free(rank(op.lhs), lb, d["lhs_contracting_dimensions"])
    rr = _free(rank(op.rhs), d["rhs_batching_dimensions"], d["rhs_contracting_dimensions"], d["rhs_group_dimensions"])
    dims = tuple(shape(op.lhs)[x] for x in lb + tuple(lr)) + tuple(shape(op.rhs)[x] for x in rr)
    if m == 2:
        dims = (shape(op.group_sizes)[-1],) + dims
    return TensorType(dims, op.lhs.element_type)


def infer(op):
    t = result_type(op)
    if t is None:
        raise ValueError("no single lhs ragged dimension")
    return {"result": TensorType(t.shape, accumulation_type(op))}


def _groups(sizes: np.ndarray) -> list:
    """[(start, end)] of each group from its sizes (module docstring)."""
    ends = np.cumsum(sizes.astype(np.int64))
    return list(zip((ends - sizes).tolist(), ends.tolist()))


def arrays(op, lhs, rhs, group_sizes):
    """Each result element as dot_general's `dot_answer` over the pairs its group selects (module
    docstring)."""
    et, rt = op.lhs.element_type, accumulation_type(op)
    lhs, rhs, gs = np.asarray(lhs), np.asarray(rhs), np.asarray(group_sizes).astype(np.int64)
    d = _dims(op)
    m = mode(op)
    lb, lc, rb, rc = (list(d[f]) for f in ("lhs_batching_dimensions", "lhs_contracting_dimensions",
                                            "rhs_batching_dimensions", "rhs_contracting_dimensions"))
    rg = list(d["rhs_group_dimensions"])
    ragged = d["lhs_ragged_dimensions"][0]
    lr = _free(lhs.ndim, lb, lc)
    rr = _free(rhs.ndim, rb, rc, rg)
    lx = element_objects(lhs, et, rt).reshape(lhs.shape)
    rx = element_objects(rhs, et, rt).reshape(rhs.shape)
    out_shape = tuple(int(s) for s in result_type(op).shape)
    out = np.empty(out_shape, dtype=object)
    if (gs < 0).any():
        out.fill(ImplDefined({}, why=NEGATIVE_WHY))
        return [out]
    contracting = [lhs.shape[x] for x in lc]
    nb = len(lb)

    def sizes_for(b):
        return gs.reshape(-1) if gs.ndim == 1 else gs[tuple(b)]

    def pairs(b, i, j, g, keep):
        ps = []
        for c in np.ndindex(*contracting):
            li, ri = [0] * lhs.ndim, [0] * rhs.ndim
            for ax, v in zip(lb, b):
                li[ax] = v
            for ax, v in zip(lr, i):
                li[ax] = v
            for ax, v in zip(lc, c):
                li[ax] = v
            for ax, v in zip(rb, b):
                ri[ax] = v
            for ax, v in zip(rr, j):
                ri[ax] = v
            for ax, v in zip(rc, c):
                ri[ax] = v
            if rg:
                ri[rg[0]] = g
            if keep(li):
                ps.append((lx[tuple(li)], rx[tuple(ri)]))
        return ps

    for idx in np.ndindex(*out_shape):
        if m == 2:
            g, rest = idx[0], idx[1:]
        else:
            g, rest = None, idx
        b, i, j = rest[:nb], rest[nb:nb + len(lr)], rest[nb + len(lr):]
        groups = _groups(sizes_for(b))
        if m == 1:
            at = i[lr.index(ragged)]
            g = next((k for k, (s, e) in enumerate(groups) if s <= at < e), None)
            ps = [] if g is None else pairs(b, i, j, g, lambda li: True)
        elif m == 2:
            s, e = groups[g]
            ps = pairs(b, i, j, None, lambda li: s <= li[ragged] < e)
        else:
            at = b[lb.index(ragged)]
            ps = pairs(b, i, j, None, lambda li: True)
            if not any(s <= at < e for s, e in groups):
                out[idx] = ImplDefined({UNGROUPED_ROW: at_precision(op, dot_answer(ps, rt), rt),
                                        EMPTY_SUM: dot_answer([], rt)}, why=UNGROUPED_WHY)
                continue
        out[idx] = at_precision(op, dot_answer(ps, rt), rt)
    return [out]


SPEC = OpSpec(
    mnemonic="chlo.ragged_dot",
    operands=(Operand("lhs", TYPES), Operand("rhs", TYPES), Operand("group_sizes", INTEGER)),
    attributes=tuple(Attribute(f, I64ArrayAttr(), group=GROUP) for f in FIELDS) + (
        Attribute("precision_config", ChloPrecisionList(), default=("DEFAULT", "DEFAULT"), optional=True),),
    results=(Result("result", TYPES),),
    constraints=(ragged_dot_c1, ragged_dot_c2, ragged_dot_c3, ragged_dot_c4, ragged_dot_c5, ragged_dot_c6,
                 ragged_dot_c7),
    infer=infer,
    result_type_stated=("result",),
    semantics=Accumulating(arrays),
    groups=(Group(GROUP, "chlo.ragged_dot", FIELDS),),
    notes="dot_general per group of the lhs ragged dimension (modes 1-3 of chlo.md)",
)
