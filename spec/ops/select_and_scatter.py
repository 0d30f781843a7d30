"""select_and_scatter — `source` scattered onto the elements `select` picks in
windows of `operand` (spec section "select_and_scatter").

Semantics: `selected_values = reduce_window_without_init(...)` over
`operand` with the body `select(arg0, arg1) ? arg0 : arg1` — `reduce` over
each window's values in index order for *some* full binary tree, no init
values — and `result[result_index] = reduce([source_values], [init_value],
[0], scatter)` where `source_values` are the `source` elements (in index
order) whose window selected `operand[result_index]`.

Selection.  A window's candidates are its operand elements in index order
(row-major over the window).  Every tree picks one of them; which one is
`spec.schedule.schedules` over the candidates with the body above (the
select region called once per pair of values, cached), so a tree that
matters shows up: for a total order with ties no tree matters (GE keeps
the first maximum, GT the last), but a NaN makes the quiet comparisons
intransitive and different trees pick different elements.  Up to
`MAX_ENUMERATED_CANDIDATES` candidates every tree is enumerated; beyond,
the body is checked associative on the window's values (every ordered
triple): then the left fold is the only selection, else the window may
select any of its elements.  The left fold — XLA's evaluation order (seed
002: "called with … the first parameter's index vector lexicographically
less than the second") — is the primary selection.

Result.  Per operand element: the reduction (spec/schedule.py's
`reduce_slice` with the scatter body) of `init_value` and the source values
of the windows that select it, in source index order; an element no window
selects is `reduce([], [init_value])` = `init_value`.  Where some window
may select this element or another, each combination of those windows
(up to `MAX_OPEN_WINDOWS` of them) gives an alternative, labelled; beyond,
any value.  The alternatives are per element (the comparison cannot tie a
window's choice between two elements: a backend must pick *some* schedule
per window, which is looser than we check).

Readings (the seed is ambiguous or silent):
* Padding: `reduce_window` pads with `init_values`; the "without init"
  variant has none, so padded positions are no candidates: a window's
  candidates are the operand elements inside it.  The seed's example cannot
  tell (its padded window [3, 4, pad] of column 0 selects 4 with GE either
  way: every operand value exceeds the init value 0); XLA and the StableHLO
  interpreter never select padding (a minimum over [3, pad] with init 0
  selects 3 on both).
* A window with no operand element (entirely in the padding): the seed
  leaves `selected_values` unspecified there (#731).  The result formula
  only needs `selected_index(source_index) = operand_index`, which names an
  element of the window — there is none — so that source value reaches no
  element of `result`.  That reading is scored (XLA and the StableHLO
  interpreter both drop such a window's source value).
* A promotable `scatter` region (v1.20 C10, C12, read for the seed's C11
  and C12): its E may be wider than the operand's (reduce's
  `promotable`); `reduce([source_values], [init_value], [0], scatter)`
  then converts the source values and the init value to E (reduce's
  `to_body_type`) and the result is E's.  `select` keeps the operand's
  type (v1.20 C9).
* `window_strides` and `padding` may be left out of a program (StableHLO's
  optional attributes); absent, strides are 1 and padding 0.
* Padding entries may be negative (nothing bounds them; the padded operand
  then loses elements, which no window can select and which keep
  `init_value`).
* C3's division by `window_strides` is taken only where the seed's own
  guard lets it (the window fits) and the stride is positive (C8): with a
  non-positive stride the quotient counts as 0 (one window where the
  window fits).  Entries missing from a too-short array (C5, C7, C9's
  business) count as their identity there.

Findings: C1 and C5 are the same sentence ("rank(operand) =
size(window_dimensions)"): neither can be broken without the other
(check-spec reports both redundant).  C3 writes a trailing colon after its
formula; the Semantics write `windows_dilations` for `window_dilations`.  The seed's Semantics never say that padding elements are not
candidates (see above); it says what an empty window selects is
unspecified (#731), not what happens to its source value.

Exercise: `init_value` is the scatter body's identity (the amount inserted
cannot matter), as reduce's init values are; operand values are random with
special values (NaN, ties in narrow types), so selections that depend on
the schedule occur.  Every body pair is reached by built corners
(`built_corners`): with the Inputs table's element types crossed with each
other the skeleton table is covered, not multiplied out, and the covering
set gives every element type the first bodies only.
"""
from __future__ import annotations

import itertools

import numpy as np

from ..dsl import (ANY, ANY_VALUE, Accumulating, Attribute, Function, I64ArrayAttr, I64MatrixAttr, If, ImplDefined,
                   OpSpec, Operand, Or, Region, Result, all_of, at, dim, element_type, rank, shape, size)
from ..exercise import Corner, Exercise
from ..schedule import MONOIDS, identity, reduce_slice, schedules
from ..symbolic import Skeleton
from ..types import E_BF16, E_F32, I1, SI8, UI8, TensorType
from .reduce import body_types, promotion_plan, to_body_type
from .reduce_window import floordiv
from ..dsl.quantization import REGIONS, Quantization

SELECTS = ("ge", "gt", "le", "lt")
SCATTERS = ("add", "maximum", "minimum", "multiply")
MAX_ENUMERATED_CANDIDATES = 12
MAX_OPEN_WINDOWS = 4
SELECT_WHY = ('the schedule of reduce_window_without_init is implementation-defined (seed, "select_and_scatter": '
              '"reduce_window_without_init works exactly like reduce_window"; "reduce": "for some binary tree")')


def _rank(op):
    return rank(op.operand)


def strides(op) -> tuple:
    """`window_strides`; left out of a program, ones."""
    return tuple(op.window_strides) if op.window_strides is not None else (1,) * _rank(op)


def padding(op) -> tuple:
    """`padding` as (low, high) rows; left out of a program, zeros."""
    return tuple(op.padding) if op.padding is not None else ((0, 0),) * _rank(op)


def num_windows(op, i):
    """C3 on axis `i`: `padded_operand_shape = padding[:, 0] + shape(operand)
    + padding[:, 1]`; `(padded_operand_shape == 0 || window_dimensions >
    padded_operand_shape) ? 0 : floor((padded_operand_shape -
    window_dimensions) / window_strides) + 1`.  Missing entries count as
    their identity (module docstring)."""
    low, high = at(padding(op), i, (0, 0))
    padded = low + dim(op.operand, i) + high
    wd = at(op.window_dimensions, i, 1)
    return If(Or(padded == 0, wd > padded), 0, floordiv(padded - wd, at(strides(op), i, 1)) + 1)


def scalar_signature(op, result_type=None):
    """`(tensor<E>, tensor<E>) -> tensor<R>` with `E = element_type(operand)`."""
    e = TensorType((), element_type(op.operand))
    return (e, e), (result_type or e,)


def select_signature(op):
    """C10: `(tensor<E>, tensor<E>) -> tensor<i1>`."""
    return scalar_signature(op, TensorType((), I1))


def scatter_signature(op):
    """C11: `(tensor<E>, tensor<E>) -> tensor<E>`."""
    return scalar_signature(op)


# --------------------------------------------------------------------------
# Constraints
# --------------------------------------------------------------------------

def select_and_scatter_c1(op):
    """(C1) rank(`operand`) $=$ size(`window_dimensions`)."""
    return _rank(op) == size(op.window_dimensions)


def select_and_scatter_c2(op):
    """(C2) `operand` and `source` have the same element type."""
    return element_type(op.operand) == element_type(op.source)


def select_and_scatter_c3(op):
    """(C3) `shape(source) = (padded_operand_shape == 0 || window_dimensions > padded_operand_shape) ? 0 : floor((padded_operand_shape - window_dimensions) / window_strides) + 1:`
  * `padded_operand_shape = padding[:, 0] + shape(operand) + padding[:, 1]`."""
    if rank(op.source) != _rank(op):
        return False
    return all_of(dim(op.source, i) == num_windows(op, i) for i in range(_rank(op)))


def select_and_scatter_c4(op):
    """(C4) element_type(`init_value`) $=$ element_type(`operand`)."""
    return element_type(op.init_value) == element_type(op.operand)


def select_and_scatter_c5(op):
    """(C5) size(`window_dimensions`) $=$ rank(`operand`)."""
    return size(op.window_dimensions) == _rank(op)


def select_and_scatter_c6(op):
    """(C6) `window_dimensions[i]` $\\gt 0$ for all i $\\in$ [0, size(window_dimensions))."""
    return all_of(w > 0 for w in op.window_dimensions)


def select_and_scatter_c7(op):
    """(C7) size(`window_strides`) $=$ rank(`operand`)."""
    return size(strides(op)) == _rank(op)


def select_and_scatter_c8(op):
    """(C8) `window_strides[i]` $\\gt 0$ for all i $\\in$ [0, size(window_strides))."""
    return all_of(s > 0 for s in strides(op))


def select_and_scatter_c9(op):
    """(C9) dim(`padding`, 0) $=$ rank(`operand`) and dim(`padding`, 1) = 2.

    `padding` is read as rows of (low, high) (`I64MatrixAttr`): dim 1 is 2 by
    its spelling, so only the row count can be wrong in a program."""
    pad = padding(op)
    return len(pad) == _rank(op) and all(len(row) == 2 for row in pad)


def select_and_scatter_c10(op):
    """(C10) `select` has type `(tensor<E>, tensor<E>) -> tensor<i1>` where
        `E = element_type(operand)`."""
    ins, outs = select_signature(op)
    return tuple(op.select.inputs) == ins and tuple(op.select.outputs) == outs


def select_and_scatter_c11(op):
    """(C11) `scatter` has type `(tensor<E>, tensor<E>) -> tensor<E>` where
        `E = element_type(operand)`.

    Read as v1.20's C10: `… where is_promotable(element_type(operand), E)`
    (reduce's `promotable`): a wider scatter region of the same kind is
    valid."""
    e = TensorType((), scatter_type(op))
    return tuple(op.scatter.inputs) == (e, e) and tuple(op.scatter.outputs) == (e,)


def scatter_type(op):
    """E of a `scatter` region `(tensor<E>, tensor<E>) -> tensor<E>` that
    promotes the operand's element type (reduce's `body_types`); the
    operand's otherwise (the seed's E)."""
    return body_types([element_type(op.operand)], getattr(op, "scatter", None))[0]


def select_and_scatter_c12(op):
    """(C12) type(`operand`) $=$ type(`result`).

    Read as v1.20's C11 `shape(operand) = shape(result)` and C12
    `element_type(result) = E`, the scatter region's (`scatter_type`)."""
    r = op.result
    if element_type(r) != scatter_type(op) or rank(r) != _rank(op):
        return False
    return all_of(a == b for a, b in zip(shape(r), shape(op.operand)))


def infer(op):
    """The operand's shape (v1.20 C11), of the scatter region's element type
    (C12; the operand's where it is not promotable)."""
    return {"result": TensorType(tuple(op.operand.shape), scatter_type(op))}


# --------------------------------------------------------------------------
# Semantics
# --------------------------------------------------------------------------

def window_candidates(op, operand_shape, source_shape) -> list:
    """Per window (source index order): the flat operand indices inside it,
    in index order; padded positions are no candidates (module docstring)."""
    wd = [int(w) for w in op.window_dimensions]
    st = [int(s) for s in strides(op)]
    low = [int(p[0]) for p in padding(op)]
    flat = np.arange(int(np.prod(operand_shape, dtype=np.int64))).reshape(operand_shape)
    out = []
    for s in np.ndindex(*source_shape):
        axes = []
        for d in range(len(operand_shape)):
            q = np.arange(wd[d]) + s[d] * st[d] - low[d]
            axes.append(q[(q >= 0) & (q < operand_shape[d])])
        out.append([int(i) for i in flat[np.ix_(*axes)].reshape(-1)] if axes else [0])
    return out


class _Select:
    """`select(a, b) ? a : b` on operand elements by flat index, the region
    called once per pair of values (by their bits)."""

    def __init__(self, fn, values: np.ndarray):
        self.fn, self.values, self.cache = fn, values.reshape(-1), {}

    def keeps_first(self, i: int, j: int) -> bool:
        a, b = self.values[i], self.values[j]
        key = (a.tobytes(), b.tobytes())
        got = self.cache.get(key)
        if got is None:
            got = self.cache[key] = bool(np.asarray(self.fn.call(np.asarray(a), np.asarray(b))[0]))
        return got

    def pick(self, i: int, j: int) -> int:
        return i if self.keeps_first(i, j) else j

    def selections(self, candidates: list) -> list:
        """The elements some tree over `candidates` selects, the left fold first."""
        if len(candidates) <= 1:
            return list(candidates)
        if len(candidates) <= MAX_ENUMERATED_CANDIDATES:
            leaves = [(np.int64(c),) for c in candidates]
            got = schedules(leaves, lambda a, b: (np.int64(self.pick(int(a), int(b))),), limit=len(candidates))
            return [int(v[0]) for v in got]
        fold = candidates[0]
        for c in candidates[1:]:
            fold = self.pick(fold, c)
        n = len(candidates)
        associative = all(self.pick(self.pick(candidates[i], candidates[j]), candidates[k])
                          == self.pick(candidates[i], self.pick(candidates[j], candidates[k]))
                          for i in range(n) for j in range(i + 1, n) for k in range(j + 1, n))
        return [fold] if associative else [fold] + [c for c in candidates if c != fold]


def arrays(op, operand, source, init_value):
    """`result[result_index] = reduce([source_values], [init_value], [0],
    scatter)` for the source values whose window selects `result_index`;
    alternatives where the select schedule decides (module docstring)."""
    et = scatter_type(op)   # v1.20: reduce(...) by `scatter` converts source values and init_value to its E
    operand = np.asarray(operand)
    source = to_body_type(source, op.source.element_type, et)
    init = (to_body_type(np.asarray(init_value).reshape(()), op.init_value.element_type, et),)
    sel = _Select(op.select, operand)
    windows = window_candidates(op, operand.shape, source.shape)
    src = source.reshape(-1)
    sure: dict = {}    # flat operand index -> windows that select it in every schedule
    maybe: dict = {}   # flat operand index -> windows that select it in some schedules: (window, by the fold?)
    for w, cands in enumerate(windows):
        picks = sel.selections(cands)
        if len(picks) == 1:
            sure.setdefault(picks[0], []).append(w)
        for k, p in enumerate(picks if len(picks) > 1 else []):
            maybe.setdefault(p, []).append((w, k == 0))

    def scattered(ws):
        return reduce_slice([(src[w],) for w in sorted(ws)], init, op.scatter, [et])[0]

    result = np.empty(operand.shape, dtype=object)
    flat = result.reshape(-1)
    for j in range(flat.size):
        base, open_ = sure.get(j, []), maybe.get(j, [])
        primary = scattered(base + [w for w, by_fold in open_ if by_fold])
        if not open_:
            flat[j] = primary
            continue
        alts = {"select's left fold (XLA's order)": primary}
        if len(open_) > MAX_OPEN_WINDOWS:
            alts[f"any value: {len(open_)} windows whose selection the schedule decides"] = ANY_VALUE
        else:
            ws = [w for w, _ in open_]
            for n in range(len(ws) + 1):
                for subset in itertools.combinations(ws, n):
                    if set(subset) != {w for w, by_fold in open_ if by_fold}:
                        alts[f"another select schedule ({len(alts)})"] = scattered(base + list(subset))
        flat[j] = ImplDefined(alts, why=SELECT_WHY)
    return [result]


# --------------------------------------------------------------------------
# Exercise
# --------------------------------------------------------------------------

def identity_init(op, name, k, t, rng):
    """`init_value`: the scatter body's identity on this element type (so
    the amount of init values inserted cannot matter)."""
    if name != "init_value":
        return None
    value = identity(op.scatter.body, t.element_type)
    return None if value is None else np.asarray(value).astype(t.element_type.numpy).reshape(())


def survey_reason(op):
    """A scatter body without an identity on this element type (maximum of
    complex numbers): the number of init values inserted decides."""
    body, et = op.scatter.body, op.operand.element_type
    if body in MONOIDS and identity(body, et) is None:
        return f"scatter body {body} has no identity on {et.name}: the amount of init_value decides the result"
    return None


def _scored(where):
    def conditions(op):
        return [False] if survey_reason(op) else where(op)
    return conditions


def _padded(op, i):
    low, high = op.padding[i]
    return low + op.operand.shape[i] + high


# Programs as JAX and the pretty printer write them: unit strides and zero padding left out (issue 25).
ELIDED = (
    Corner("defaults elided: window_strides and padding left out", (2, 2, 0),
           _scored(lambda op: [op.window_strides[0] == 1, op.window_strides[1] == 1, op.padding[0][0] == 0,
                               op.padding[0][1] == 0, op.padding[1][0] == 0, op.padding[1][1] == 0,
                               op.window_dimensions[0] >= 2, op.source.shape[0] >= 1, op.source.shape[1] >= 1]),
           omit=("window_strides", "padding")),
)


CORNERS = tuple(Corner(c.note, c.ranks, _scored(c.where), c.layout, c.max_dim) for c in (
    Corner("overlapping windows: an element selected by several windows", (2, 2, 0),
           lambda op: [op.window_strides[0] < op.window_dimensions[0], op.window_strides[1] < op.window_dimensions[1],
                       op.source.shape[0] >= 2, op.source.shape[1] >= 2]),
    Corner("stride larger than the window: elements no window reads", (1, 1, 0),
           lambda op: [op.window_strides[0] > op.window_dimensions[0], op.source.shape[0] >= 2]),
    Corner("padding around overlapping windows", (2, 2, 0),
           lambda op: [op.padding[0][0] >= 1, op.padding[1][1] >= 1, op.window_dimensions[0] > op.padding[0][0],
                       op.window_strides[0] < op.window_dimensions[0], op.source.shape[0] >= 2]),
    Corner("a window entirely in the padding (#731)", (1, 1, 0),
           lambda op: [op.padding[0][0] >= op.window_dimensions[0], op.source.shape[0] >= 2,
                       op.operand.shape[0] >= 1]),
    Corner("negative padding", (2, 2, 0),
           lambda op: [op.padding[0][0] < 0, op.padding[1][1] < 0, op.source.shape[0] >= 1,
                       op.source.shape[1] >= 1]),
    Corner("a window larger than the padded operand: no windows", (1, 1, 0),
           lambda op: [op.window_dimensions[0] > _padded(op, 0), op.operand.shape[0] >= 2]),
    Corner("one window over the whole operand", (2, 2, 0),
           lambda op: [op.window_dimensions[0] == op.operand.shape[0], op.window_dimensions[1] == op.operand.shape[1],
                       op.padding[0][0] == 0, op.padding[0][1] == 0, op.padding[1][0] == 0, op.padding[1][1] == 0,
                       op.operand.shape[0] >= 3, op.operand.shape[1] >= 3]),
))


def built_corners(spec, skels, rng):
    """Every select body with every scatter body, overlapping 2x2 windows
    with stride 1 on a 3x4 operand, over element types with ties and NaN
    (f32, bf16, si8, ui8) — the covering skeleton table alone gives every
    element type the first bodies only (module docstring) — and the max-pool
    gradient as JAX lowers it (GE, add, f32, init 0)."""
    types = (E_F32, SI8, E_BF16, UI8)
    out = []
    for n, (sel, sca) in enumerate(itertools.product(SELECTS, SCATTERS)):
        et = types[n % len(types)]
        skel = Skeleton(spec.mnemonic, (et, et, et), regions=(("select", sel), ("scatter", sca)))
        e, b = TensorType((), et), TensorType((), I1)
        regions = {"select": Function((e, e), (b,), sel), "scatter": Function((e, e), (e,), sca)}
        ops = {"operand": TensorType((3, 4), et), "source": TensorType((2, 3), et), "init_value": e}
        attrs = {"window_dimensions": (2, 2), "window_strides": (1, 1), "padding": ((0, 0), (0, 0))}
        inst = spec.instance(ops, attrs, {"result": TensorType((3, 4), et)}, regions)
        out.append((f"select {sel}, scatter {sca}: overlapping windows", skel, inst))
    return out


def quantized_example(types: dict, body: str = "add"):
    """The spec's example (operand 4×2, source 2×2, windows 3×1, strides
    2×1, padding [[0, 1], [0, 0]]) with select `ge` and scatter `body`, of
    the element types `types` names ("operand", "source", "init_value",
    "result", "body": both regions' arguments; the operand's type where
    not named, f32 for it)."""
    t_op = types.get("operand", E_F32)
    scalar = TensorType((), types.get("body", t_op))
    select = Function((scalar, scalar), (TensorType((), I1),), body="ge")
    scatter = Function((scalar, scalar), (scalar,), body=body)
    return SPEC.instance({"operand": TensorType((4, 2), t_op), "source": TensorType((2, 2), types.get("source", t_op)),
                          "init_value": TensorType((), types.get("init_value", t_op))},
                         {"window_dimensions": (3, 1), "window_strides": (2, 1), "padding": ((0, 1), (0, 0))},
                         {"result": TensorType((4, 2), types.get("result", t_op))},
                         {"select": select, "scatter": scatter})


def promoted_example(t_op, t_scatter, t_result):
    """`quantized_example`'s structure (the spec's example: windows 3×1,
    strides 2×1, padding [[0, 1], [0, 0]]) with a `ge` select on the
    operand's type and an add `scatter` region in `t_scatter`."""
    scalar, wide = TensorType((), t_op), TensorType((), t_scatter)
    select = Function((scalar, scalar), (TensorType((), I1),), body="ge")
    scatter = Function((wide, wide), (wide,), body="add")
    return SPEC.instance({"operand": TensorType((4, 2), t_op), "source": TensorType((2, 2), t_op),
                          "init_value": scalar},
                         {"window_dimensions": (3, 1), "window_strides": (2, 1), "padding": ((0, 1), (0, 0))},
                         {"result": TensorType((4, 2), t_result)}, {"select": select, "scatter": scatter})


def promoted_cases(spec, skels, rng):
    """`promoted_example` with a promoted scatter region (no complex: `ge`
    compares no complex values), and the invalid programs (reduce's
    `promotion_plan`; v1.20 C10 is `select_and_scatter_c11`, C12
    `select_and_scatter_c12`)."""
    plan = promotion_plan(promoted_example, "select_and_scatter_c11", "select_and_scatter_c12",
                          kinds=("float", "integer"))
    return [(note, label, Skeleton(spec.mnemonic, (s, s, s), regions=(("select", "ge"), ("scatter", "add"))), inst)
            for note, label, s, e, inst in plan]


def source_past_windows(spec, skels, rng):
    """The spec's example (`quantized_example`, f32) with a 3×2 source where
    the windows are 2×2, after `promoted_cases`: a source dim above its
    number of windows breaks C3 alone (the seed's C3 cases have fewer:
    a reading of `=` as `>=` would admit this one)."""
    scalar = TensorType((), E_F32)
    inst = SPEC.instance({"operand": TensorType((4, 2), E_F32), "source": TensorType((3, 2), E_F32),
                          "init_value": scalar},
                         {"window_dimensions": (3, 1), "window_strides": (2, 1), "padding": ((0, 1), (0, 0))},
                         {"result": TensorType((4, 2), E_F32)},
                         {"select": Function((scalar, scalar), (TensorType((), I1),), body="ge"),
                          "scatter": Function((scalar, scalar), (scalar,), body="add")})
    yield ("source 3x2 where the windows are 2x2 (the spec's example otherwise)", "select_and_scatter_c3",
           Skeleton(spec.mnemonic, (E_F32,) * 3, regions=(("select", "ge"), ("scatter", "add"))), inst)


SPEC = OpSpec(
    mnemonic="select_and_scatter",
    operands=(Operand("operand", ANY), Operand("source", ANY), Operand("init_value", ANY, rank=0)),
    attributes=(Attribute("window_dimensions", I64ArrayAttr(), length=_rank),
                Attribute("window_strides", I64ArrayAttr(), length=_rank, optional=True),
                Attribute("padding", I64MatrixAttr(), length=_rank, optional=True)),
    regions=(Region("select", select_signature, bodies=SELECTS),
             Region("scatter", scatter_signature, bodies=SCATTERS)),
    results=(Result("result", ANY),),
    constraints=(select_and_scatter_c1, select_and_scatter_c2, select_and_scatter_c3, select_and_scatter_c4,
                 select_and_scatter_c5, select_and_scatter_c6, select_and_scatter_c7, select_and_scatter_c8,
                 select_and_scatter_c9, select_and_scatter_c10, select_and_scatter_c11, select_and_scatter_c12),
    infer=infer,
    semantics=Accumulating(arrays),
    exercise=Exercise(corners=CORNERS, built_corners=built_corners, operand_values=identity_init,
                      survey_when=survey_reason, elided=ELIDED,
                      appended_last=(promoted_cases, source_past_windows)),
    implied=('select_and_scatter_c1', 'select_and_scatter_c5'),
    # v1.20: operand, source, init_value, result "or per-tensor quantized tensor"; select compares them
    # (dequantize_compare), scatter computes on them
    quantization=Quantization(meaning=REGIONS, example=quantized_example, bodies=("add", "maximum")),
)
