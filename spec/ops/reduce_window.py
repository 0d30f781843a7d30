"""reduce_window — `body` applied to windows of `inputs` (spec section "reduce_window").

Semantics: `results[:][result_index] = reduce(windows, init_values,
axes(inputs[:]), body)` with `padded_inputs = pad(inputs[:], init_values[:],
padding[:, 0], padding[:, 1], base_dilations[:] - 1)`, `window_start =
result_index * window_strides` and `windows = slice(padded_inputs[:],
window_start, …, window_dilations)`.  So every element of a window is a
leaf of the reduction, the padding and the holes the base dilation opens
included: those are `init_values` (pad's padding value), leaves like any
other.  Each result element is therefore `reduce` over the window's values
in index order (row-major over the window's positions), computed by
spec/schedule.py's `reduce_slice` exactly as `reduce` is (spec/ops/reduce.py):
exact for associative bodies with an identity init, a `Range` for float
sums and products, every schedule for other bodies.  Where every init value
is its body's identity, padding leaves cannot change any schedule's result
and are left out of the leaves (so a window that lies mostly in the padding
costs what its input elements cost; a sum's rounding bound counts only
its real terms — adding an exact identity rounds nothing).

Readings (the seed is ambiguous or silent):
* The window slice: the seed writes `slice(padded_inputs, window_start,
  window_start + window_dimensions, window_dilations)`, whose limit makes a
  dilated window hold only ceil(window_dimensions / window_dilations)
  elements; C15's `dilated_window_shape = (window_dimensions - 1) *
  window_dilations + 1` (and XLA, seed 002) mean `window_dimensions`
  elements spaced `window_dilations` apart, i.e. limit `window_start +
  dilated_window_shape`.  Encoded that way.  The seed's example cannot
  tell the two apart: the second element of each of its windows (size 2,
  dilation 3) is padding or a dilation hole, i.e. the init value 0.
* C13 writes `Ek = element_type(inputs[0])` for every k; read as
  `inputs[k]` (as reduce's C6 has it): with inputs of two element types
  (the arg-max pattern) the literal text admits no body whose results can
  have the results' types.
* A promotable body (v1.20 C13, C16): as reduce's (its module docstring) —
  inputs and init values converted to the body's Ek, windows reduced in
  Ek, results of Ek; where the body is not promotable C16 keeps the seed's
  reading (the init value's type).
* `window_strides`, `base_dilations`, `window_dilations` and `padding` may be
  left out of a program (StableHLO's optional attributes, e.g. as JAX
  prints them); absent, they are the identity: ones, and zero padding.
* Padding entries may be negative (nothing in the seed bounds them; pad's
  negative edge padding removes elements): a padded size below the window
  gives no windows (C15), below zero too.
* C15's division: `floor((padded - dilated_window) / window_strides)` is
  only taken where the seed's own guard lets it (the window fits) and a
  stride is positive (C7); with a non-positive stride the quotient counts
  as 0 (one window where the window fits), so a program breaking C7 alone
  still has a defined result shape.
  Entries missing from a too-short array (C4, C6, C8, C10, C12's business)
  count as their identity there, for the same reason.

Findings (docs/spec-findings.md): the window slice's limit above; C13's
`inputs[0]`.  C16 is broken alone by a result whose last member has
another element type (`result_mixed` layouts, for variadic results with a
count hint).

Exercise: init values are the body's identity, as for reduce (its
`operand_values` — ∓ the largest finite value for maximum/minimum in
f8E4M3FN, which has no infinity — and its `survey_when`): value cases are
determined; a non-associative body (subtract) makes the case a survey.
Corners: windows larger than the padded base (no windows), strides larger
than the window (base elements no window reads), base and window dilations
above 1, negative padding, rank 0 (generic), and the cumulative pattern
JAX emits for `jnp.cumsum` / `cummax` (window = length, padding low =
length - 1).
"""
from __future__ import annotations

import numpy as np

from ..dsl import (ANY, Accumulating, Attribute, Function, I64ArrayAttr, I64MatrixAttr, If, OpSpec, Operand,
                   Or, Region, Result, all_of, at, dim, element_type, is_symbolic, rank, same_shape, size)
from ..exercise import Corner, Exercise
from .. import bounds
from ..schedule import inits_neutral, reduce_arrays, reduce_slice
from ..symbolic import Skeleton
from ..types import E_F32, TensorType, element_type as _named
from . import reduce as _reduce
from .reduce import (BODIES, body_signature, body_types, converted, promoted_signature, promotion_plan,
                     survey_reason)
from ..dsl.quantization import REGIONS, Quantization

# An attribute a program leaves out holds the identity (module docstring).
ABSENT_ENTRY = {"window_strides": 1, "base_dilations": 1, "window_dilations": 1}


def _rank(op):
    return rank(op.inputs[0])


def _length(op):
    """Array attributes hold one entry per axis of `inputs[0]` (none without inputs)."""
    return _rank(op) if op.inputs else 0


def entries(op, name: str) -> tuple:
    """The attribute's entries; a left-out attribute is all ones (zero rows for padding)."""
    v = getattr(op, name)
    if v is None:
        return ((0, 0),) * _rank(op) if name == "padding" else (ABSENT_ENTRY[name],) * _rank(op)
    return tuple(v)


def floordiv(a, b):
    """floor(a / b) where b > 0 (z3's integer division is the floor there);
    0 for b <= 0, where the seed's formula has no value (a stride breaking
    C7 / C8: the shape stays defined, so that constraint can fail alone)."""
    if is_symbolic(a) or is_symbolic(b):
        return If(b > 0, a / b, 0)
    return a // b if b > 0 else 0


def num_windows(op, i):
    """C15 on axis `i`:
    `dilated_input_shape = shape(inputs[0]) == 0 ? 0 : (shape(inputs[0]) - 1) * base_dilations + 1`,
    `padded_input_shape = padding[:, 0] + dilated_input_shape + padding[:, 1]`,
    `dilated_window_shape = window_dimensions == 0 ? 0 : (window_dimensions - 1) * window_dilations + 1`,
    `num_windows = (padded_input_shape == 0 || dilated_window_shape > padded_input_shape) ? 0 :
    floor((padded_input_shape - dilated_window_shape) / window_strides) + 1`.
    A missing entry (an array too short: another constraint's business) counts as its identity."""
    low, high = at(entries(op, "padding"), i, (0, 0))
    return _num_windows(dim(op.inputs[0], i), at(op.window_dimensions, i, 1), at(entries(op, "window_strides"), i, 1),
                        at(entries(op, "base_dilations"), i, 1), at(entries(op, "window_dilations"), i, 1), low, high)


_FORMULAS: dict = {}   # (number or z3 term id, …) -> (the arguments, kept alive so ids stay theirs; formula)


def _num_windows(*args):
    """The formula on numbers or z3 terms, built once per argument tuple:
    generators and proofs evaluate it on the same z3 variables thousands of
    times, and building z3 terms was most of their time for this op."""
    key = tuple(("z3", a.get_id()) if is_symbolic(a) else ("int", int(a)) for a in args)
    hit = _FORMULAS.get(key)
    if hit is None:
        if len(_FORMULAS) > 4096:
            _FORMULAS.clear()
        hit = _FORMULAS[key] = (args, _formula(*args))
    return hit[1]


def _formula(n, wd, stride, bd, wdil, low, high):
    dilated_input = If(n == 0, 0, (n - 1) * bd + 1)
    padded = low + dilated_input + high
    dilated_window = If(wd == 0, 0, (wd - 1) * wdil + 1)
    return If(Or(padded == 0, dilated_window > padded), 0, floordiv(padded - dilated_window, stride) + 1)


# --------------------------------------------------------------------------
# Constraints
# --------------------------------------------------------------------------

def reduce_window_c1(op):
    """(C1) size(`inputs`) $=$ size(`init_values`) $=$ size(`results`) $=$ N and
       N $\\ge$ 1."""
    return size(op.inputs) == size(op.init_values) == size(op.results["results"]) >= 1


def reduce_window_c2(op):
    """(C2) All `inputs` have the same shape."""
    return same_shape(*op.inputs) if op.inputs else True


def reduce_window_c3(op):
    """(C3) `element_type(inputs[k]) = element_type(init_values[k])` for any k
    $\\in$ [0, N)."""
    return all(element_type(i) == element_type(v) for i, v in zip(op.inputs, op.init_values))


def reduce_window_c4(op):
    """(C4) size(`window_dimensions`) $=$ rank(`inputs[0]`)."""
    return size(op.window_dimensions) == _rank(op) if op.inputs else True


def reduce_window_c5(op):
    """(C5) `window_dimensions[i]` $\\gt 0$ for all i $\\in$ [0, size(`window_dimensions`))."""
    return all_of(w > 0 for w in op.window_dimensions)


def reduce_window_c6(op):
    """(C6) size(`window_strides`) $=$ rank(`inputs[0]`)."""
    return size(entries(op, "window_strides")) == _rank(op) if op.inputs else True


def reduce_window_c7(op):
    """(C7) `window_strides[i]` $\\gt 0$ for all i $\\in$ [0, size(`window_strides`))."""
    return all_of(s > 0 for s in (op.window_strides or ()))


def reduce_window_c8(op):
    """(C8) size(`base_dilations`) $=$ rank(`inputs[0]`)."""
    return size(entries(op, "base_dilations")) == _rank(op) if op.inputs else True


def reduce_window_c9(op):
    """(C9) `base_dilations[i]` $\\gt 0$ for all i $\\in$ [0, size(`base_dilations`))."""
    return all_of(d > 0 for d in (op.base_dilations or ()))


def reduce_window_c10(op):
    """(C10) size(`window_dilations`) $=$ rank(`inputs[0]`)."""
    return size(entries(op, "window_dilations")) == _rank(op) if op.inputs else True


def reduce_window_c11(op):
    """(C11) `window_dilations[i]` $\\gt 0$ for all i $\\in$ [0, size(`window_dilations`))."""
    return all_of(d > 0 for d in (op.window_dilations or ()))


def reduce_window_c12(op):
    """(C12) dim(`padding`, 0) $=$ rank(`inputs[0]`) and dim(`padding`, 1) = 2.

    `padding` is read as rows of (low, high) (`I64MatrixAttr`): dim 1 is 2 by
    its spelling, so only the row count can be wrong in a program."""
    if not op.inputs:
        return True
    pad = entries(op, "padding")
    return len(pad) == _rank(op) and all(len(row) == 2 for row in pad)


def reduce_window_c13(op):
    """(C13) `body` has type `(tensor<E0>, ..., tensor<EN-1>, tensor<E0>, ..., tensor<EN-1>) -> (tensor<E0>, ..., tensor<EN-1>)`
        where `Ek = element_type(inputs[0])`.

    Read with `Ek = element_type(inputs[k])` (module docstring), and as
    v1.20's C13 has it: `… where is_promotable(element_type(inputs[i]),
    Ei)` (reduce's `promoted_signature`): a wider body of the same kind is
    valid."""
    ins, outs = promoted_signature([element_type(t) for t in op.inputs], op.body)
    return tuple(op.body.inputs) == ins and tuple(op.body.outputs) == outs


def reduce_window_c14(op):
    """(C14) All `results` have the same shape."""
    res = op.results["results"]
    return same_shape(*res) if res else True


def reduce_window_c15(op):
    """(C15) `shape(results[0]) = num_windows` (the formulas: `num_windows`)."""
    res = op.results["results"]
    if not res or not op.inputs:
        return True
    r = _rank(op)
    if rank(res[0]) != r:
        return False
    return all_of(dim(res[0], i) == num_windows(op, i) for i in range(r))


def reduce_window_c16(op):
    """(C16) `element_type(results[k]) = element_type(init_values[k])` for any k
    $\\in$ [0, N).

    Read as v1.20's C16: `element_type(results[i]) = Ei`, the body's
    element type where it promotes the input's (`result_types`)."""
    return all(element_type(r) == e for r, e in zip(op.results["results"], result_types(op)))


def result_types(op) -> list:
    """Ek of a body that promotes `inputs[k]` (reduce's `body_types`: v1.20
    C13); where it does not, the init value's — the seed's C16, = the
    input's by C3 (a program breaking C3 alone keeps its results)."""
    ins = [element_type(t) for t in op.inputs]
    es = body_types(ins, getattr(op, "body", None))
    return [es[k] if k < len(es) and es[k] != ins[k] else element_type(v) for k, v in enumerate(op.init_values)]


def infer(op):
    """`num_windows` per axis (C15, C14); the body's element types Ek (v1.20
    C16; the init values' where the body is not promotable)."""
    shape = tuple(num_windows(op, i) for i in range(_rank(op)))
    return {"results": [TensorType(shape, e) for e in result_types(op)]}


# --------------------------------------------------------------------------
# Semantics
# --------------------------------------------------------------------------

def axis_sources(o, j, n: int, stride: int, bd: int, wdil: int, low: int) -> np.ndarray:
    """On one axis, for result positions `o` and window positions `j`
    (integer arrays, broadcast together): the index of the input element
    at that place of the padded input, or -1 where it is padding or a hole
    of the base dilation (an init value).  The window holds `wd` elements
    `wdil` apart from `o * stride` (module docstring: the limit the seed's
    slice means); position p of the padded input is position p - low of
    the dilated input (negative `low`: the first elements were cut off),
    an input element where that is a multiple of the base dilation within
    the dilated input.  Computed for the places asked, never as a table of
    every (result, window) pair: a cumulative window (`jnp.cumsum`) has n²."""
    dilated = 0 if n == 0 else (n - 1) * bd + 1
    q = np.asarray(o, dtype=np.int64) * stride + np.asarray(j, dtype=np.int64) * wdil - low
    inside = (q >= 0) & (q < dilated) & (q % bd == 0)
    return np.where(inside, q // bd, -1)


class _Windows:
    """The windows of one reduce_window, computed for the result elements
    asked: (flat input index, is an input element) per window position,
    row-major over the window, for each result element (flat, row-major)."""

    def __init__(self, op, in_shape: tuple, out_shape: tuple):
        r = len(out_shape)
        wd = [int(x) for x in entries(op, "window_dimensions")]
        ws, bd = entries(op, "window_strides"), entries(op, "base_dilations")
        wdil, pad = entries(op, "window_dilations"), entries(op, "padding")
        self.axes = [(int(in_shape[d]), int(ws[d]), int(bd[d]), int(wdil[d]), int(pad[d][0])) for d in range(r)]
        self.in_shape, self.out_shape = tuple(int(d) for d in in_shape), out_shape
        self.wg = np.indices(tuple(wd)).reshape(r, -1) if r else np.zeros((0, 1), np.int64)
        self.size = self.wg.shape[1]

    def rows(self, flat) -> tuple:
        """(src, ok): (len(flat), window size) arrays for result elements `flat`."""
        flat = np.asarray(flat, dtype=np.int64).reshape(-1)
        src = np.zeros((len(flat), self.size), dtype=np.int64)
        ok = np.ones((len(flat), self.size), dtype=bool)
        if not self.axes:
            return src, ok
        og = np.unravel_index(flat, self.out_shape)
        for d, (n, stride, bd, wdil, low) in enumerate(self.axes):
            q = axis_sources(og[d][:, None], self.wg[d][None, :], n, stride, bd, wdil, low)
            ok &= q >= 0
            src = src * n + np.maximum(q, 0)
        return src, ok


def padding_is_neutral(op, inits, types) -> bool:
    """Padding leaves (init values) cannot change the result of any
    schedule: spec/schedule.py's `inits_neutral`."""
    return inits_neutral(op.body, types, inits)


def arrays(op, *operands):
    """Each result element: `reduce` of its window's values in index order
    (padding and dilation holes are init values), every allowed schedule."""
    n = len(op.inputs)
    types = body_types([t.element_type for t in op.inputs], op.body)
    inputs, inits = converted(op.inputs, types, operands[:n], operands[n:2 * n])   # into the body's types
    out_shape = tuple(int(d) for d in op.results["results"][0].shape)
    windows = _Windows(op, inputs[0].shape, out_shape)
    skip_padding = padding_is_neutral(op, inits, types)
    if skip_padding:   # `reduce_arrays` decides what the whole route serves (not complex, not i1)
        got = _whole(op, inputs, inits, types, windows, out_shape)
        if got is not None:
            return got
    flats = [a.reshape(-1) for a in inputs]
    results = [np.empty(out_shape, dtype=object) for _ in range(n)]
    for i, out_index in enumerate(np.ndindex(*out_shape)):
        src, ok = windows.rows([i])
        leaves = []
        for s, inside in zip(src[0].tolist(), ok[0].tolist()):
            if not inside:
                if not skip_padding:
                    leaves.append(inits)
                continue
            leaves.append(tuple(f[s] for f in flats))
        for k, answer in enumerate(reduce_slice(leaves, inits, op.body, types)):
            results[k][out_index] = answer
    return results


# Window leaves gathered at once (rows of windows per piece): what a piece
# costs while it is reduced (oracle/cost.py states it), whatever the windows
# of the whole result hold together (a cumulative window: n² leaves).
WHOLE_CHUNK = 1 << 20


# Bytes per leaf of a piece while it is reduced (measured 43–46: flat input
# indices and mask, their per-axis terms, the gathered exact values, a float
# sum's masked terms and its working-type copies).
PER_PIECE_LEAF = 56


def working_bytes(op) -> int:
    """What `_whole` holds beyond operands and results (oracle/cost.py):
    one piece of windows at a time, at most WHOLE_CHUNK leaves (or one
    window, where a window alone is larger)."""
    P = int(np.prod([int(d) for d in op.results["results"][0].shape], dtype=np.int64))
    Wn = int(np.prod([int(x) for x in entries(op, "window_dimensions")], dtype=np.int64))
    rows = min(P, max(1, WHOLE_CHUNK // max(Wn, 1)))
    return PER_PIECE_LEAF * rows * Wn * len(op.inputs)


def _whole(op, inputs, inits, types, windows: _Windows, out_shape):
    """Every window at once (spec/schedule.py's `reduce_arrays`) where the
    padding is neutral: rows of the windows' input elements (padding and
    holes masked out), gathered in pieces of at most WHOLE_CHUNK leaves;
    None where only the per-element route serves.  A piece's records keep
    no gathered rows: where a later stage needs a row's terms (or the
    per-element route a row's leaves) they are gathered again."""
    P = int(np.prod(out_shape, dtype=np.int64))
    Wn = windows.size
    if P == 0 or inputs[0].size == 0:   # no windows, or no input (windows of padding only): nothing to gain
        return None
    flats = [a.reshape(-1) for a in inputs]
    exact = [bounds.values(f, t) for f, t in zip(flats, types)]
    step = max(1, WHOLE_CHUNK // max(Wn, 1))
    pieces = []
    for start in range(0, P, step):
        rows = slice(start, min(P, start + step))

        def leaves_of(i, start=start):
            src, ok = windows.rows([start + i])
            return [tuple(f[j] for f in flats) for j in src[0][ok[0]].tolist()]

        def rows_of(k, idx, start=start):
            src, ok = windows.rows(start + np.asarray(idx, dtype=np.int64))
            return exact[k][src], ok

        src, ok = windows.rows(np.arange(rows.start, rows.stop))
        got = reduce_arrays([x[src] for x in exact], ok, inits, op.body, types, leaves_of, rows_of=rows_of)
        del src, ok
        if got is None:
            return None
        pieces.append((got, np.arange(rows.start, rows.stop)))
    if len(pieces) == 1:
        out = pieces[0][0]
        for rec in out:
            rec.shape = out_shape
        return out
    out = []
    for k in range(len(types)):
        parts = [(got[k], where) for got, where in pieces]
        step_of = lambda i: (int(i) // step, int(i) % step)   # noqa: E731
        element = (lambda i, k=k: pieces[step_of(i)[0]][0][k].element(step_of(i)[1]))
        out.append(bounds.combine(out_shape, parts, element, parts[0][0].probes))
    return out


# --------------------------------------------------------------------------
# Exercise
# --------------------------------------------------------------------------

def init_values(op, name, k, t, rng):
    """reduce's init values: the body's identity (`spec.schedule.identity`)."""
    return _reduce.init_values(op, name, k, t, rng)


def _window(op, i):
    """(padded input size, dilated window size) on axis i, symbolic."""
    n = op.inputs[0].shape[i]
    low, high = op.padding[i]
    dilated_input = If(n == 0, 0, (n - 1) * op.base_dilations[i] + 1)
    return low + dilated_input + high, (op.window_dimensions[i] - 1) * op.window_dilations[i] + 1


def _cumulative(op):
    """The pattern `jnp.cumsum` (and cummax, cumprod …) lowers to: window =
    length, padding low = length - 1, unit strides and dilations."""
    n = op.inputs[0].shape[0]
    return [n >= 4, op.window_dimensions[0] == n, op.padding[0][0] == n - 1, op.padding[0][1] == 0,
            op.window_strides[0] == 1, op.base_dilations[0] == 1, op.window_dilations[0] == 1]


def scored(where):
    """A corner on a skeleton whose cases are scored: a body that makes the
    case a survey (subtract, no identity) is skipped, so the corner's next
    attempt lands on another skeleton."""
    def conditions(op):
        return [False] if survey_reason(op) else where(op)
    return conditions


CORNERS = tuple(Corner(c.note, c.ranks, scored(c.where), c.layout, c.max_dim) for c in (
    Corner("window larger than the padded base: no windows", (1, 0),
           lambda op: [op.inputs[0].shape[0] >= 2, _window(op, 0)[1] > _window(op, 0)[0]]),
    Corner("stride larger than the window", (1, 0),
           lambda op: [op.window_strides[0] > _window(op, 0)[1], op.results["results"][0].shape[0] >= 2]),
    Corner("base and window dilations above 1", (2, 0),
           lambda op: [op.base_dilations[0] >= 2, op.window_dilations[0] >= 2, op.window_dimensions[0] >= 2,
                       op.base_dilations[1] >= 2, op.results["results"][0].shape[0] >= 2]),
    Corner("negative padding", (2, 0),
           lambda op: [op.padding[0][0] < 0, op.padding[1][1] < 0, op.results["results"][0].shape[0] >= 1,
                       op.results["results"][0].shape[1] >= 1]),
    Corner("positive padding around overlapping windows", (2, 0),
           lambda op: [op.padding[0][0] >= 1, op.padding[1][1] >= 1,
                       op.window_strides[0] < op.window_dimensions[0], op.results["results"][0].shape[0] >= 2]),
    Corner("cumulative pattern (jnp.cumsum: window = length, padding low = length - 1)", (1, 0), _cumulative,
           max_dim=8),
    Corner("two inputs reduced together", (2, 0), lambda op: [op.results["results"][0].shape[0] >= 1],
           layout={"counts": {"inputs": 2}}),
))


def _at_defaults(names):
    """The attributes `names` at the values a left-out attribute means (`entries`), on a 2-d input."""
    def where(op):
        conds = [op.results["results"][0].shape[0] >= 1, op.results["results"][0].shape[1] >= 1]
        for name in names:
            for i in range(2):
                conds += ([op.padding[i][0] == 0, op.padding[i][1] == 0] if name == "padding"
                          else [getattr(op, name)[i] == ABSENT_ENTRY[name]])
        return conds
    return where


_OPTIONAL = ("window_strides", "base_dilations", "window_dilations", "padding")
# Programs as JAX and the pretty printer write them: attributes at their defaults left out (issue 25).
ELIDED = (
    Corner("defaults elided: window_strides, base_dilations, window_dilations and padding left out", (2, 0),
           scored(_at_defaults(_OPTIONAL)), omit=_OPTIONAL),
    Corner("defaults elided: padding and dilations left out, strides written", (2, 0),
           scored(lambda op: _at_defaults(("base_dilations", "window_dilations", "padding"))(op)
                  + [op.window_strides[0] >= 2]), omit=("base_dilations", "window_dilations", "padding")),
)


def built_corners(spec, skels, rng):
    """`jnp.cumsum` of an f32 vector exactly as JAX lowers it (a sum with
    init 0.0: window 5, padding [[4, 0]], unit strides and dilations)."""
    skel = Skeleton(spec.mnemonic, (E_F32, E_F32), regions=(("body", "add"),))
    vec, scalar = TensorType((5,), E_F32), TensorType((), E_F32)
    body = Function((scalar, scalar), (scalar,), "add")
    attrs = {"window_dimensions": (5,), "window_strides": (1,), "base_dilations": (1,), "window_dilations": (1,),
             "padding": ((4, 0),)}
    inst = spec.instance({"inputs": [vec], "init_values": [scalar]}, attrs, {"results": [vec]}, {"body": body})
    return [("jnp.cumsum as JAX lowers it", skel, inst)]


def quantized_example(types: dict, body: str = "add"):
    """A valid reduce_window with `body` over a 2×5 input: windows 1×3,
    strides 1×2, one padding element (the init value) each side of
    dimension 1 — three windows per row, the outer two holding padding; the
    element types `types` names ("inputs", "init_values", "results",
    "body"; the inputs' type where not named, f32 for them)."""
    t_in = types.get("inputs", _named("f32"))
    scalar = TensorType((), types.get("body", t_in))
    fn = Function((scalar, scalar), (scalar,), body=body)
    return SPEC.instance({"inputs": [TensorType((2, 5), t_in)],
                          "init_values": [TensorType((), types.get("init_values", t_in))]},
                         {"window_dimensions": (1, 3), "window_strides": (1, 2), "base_dilations": (1, 1),
                          "window_dilations": (1, 1), "padding": ((0, 0), (1, 1))},
                         {"results": [TensorType((2, 3), types.get("results", t_in))]}, {"body": fn})


def promoted_cases(spec, skels, rng):
    """`quantized_example`'s reduce_window (2×5 input, windows 1×3 with
    padding) with a promoted add body, and the invalid programs (reduce's
    `promotion_plan`; v1.20 C13 is `reduce_window_c13`, C16
    `reduce_window_c16`)."""
    def make(s, e, r):
        return quantized_example({"inputs": s, "body": e, "results": r})
    return [(note, label, Skeleton(spec.mnemonic, (s, s), regions=(("body", "add"),)), inst)
            for note, label, s, e, inst in promotion_plan(make, "reduce_window_c13", "reduce_window_c16")]


def short_attributes(spec, skels, rng):
    """`quantized_example`'s reduce_window (f32, windows 1×3) with one entry
    of `window_dilations` (C10 alone: the missing entry counts as 1, so
    C15's shape holds; the seed's C10 case has one too many), and one of
    `window_strides` with a 2×5 result (C6 alone: the seed's C6 case has
    one too many), after `promoted_cases`."""
    f32 = TensorType((), E_F32)
    skel = Skeleton(spec.mnemonic, (E_F32, E_F32), regions=(("body", "add"),))
    for note, label, attrs, result in (
            ("window_dilations [1] on rank 2 (a window of 3 on the missing axis)", "reduce_window_c10",
             {"window_strides": (1, 2), "window_dilations": (1,)}, (2, 3)),
            ("window_strides [1] on rank 2 (a 2x5 result: stride 1 on the missing axis)", "reduce_window_c6",
             {"window_strides": (1,), "window_dilations": (1, 1)}, (2, 5))):
        yield (note, label, skel,
               SPEC.instance({"inputs": [TensorType((2, 5), E_F32)], "init_values": [f32]},
                             {"window_dimensions": (1, 3), "base_dilations": (1, 1), "padding": ((0, 0), (1, 1)),
                              **attrs},
                             {"results": [TensorType(result, E_F32)]}, {"body": Function((f32, f32), (f32,), "add")}))


def cumlogsumexp_cases(spec, skels, rng):
    """`lax.cumlogsumexp` as JAX lowers it: a reduce_window of
    jnp.logaddexp (generators/regions.py "logaddexp"), init −inf, the
    window the axis's length padded in front — over rows of 12 f32 and f16
    values (`reduce.log_add_exp_values`) and one of 40 f32, after
    `short_attributes`."""
    out = []
    for et, shape in ((E_F32, (3, 12)), (_named("f16"), (3, 12)), (E_F32, (1, 40))):
        scalar, n = TensorType((), et), shape[1]
        inst = spec.instance({"inputs": [TensorType(shape, et)], "init_values": [scalar]},
                             {"window_dimensions": (1, n), "window_strides": (1, 1), "base_dilations": (1, 1),
                              "window_dilations": (1, 1), "padding": ((0, 0), (n - 1, 0))},
                             {"results": [TensorType(shape, et)]},
                             {"body": Function((scalar, scalar), (scalar,), body="logaddexp")})
        out.append((f"lax.cumlogsumexp as JAX lowers it ({n} a row)", None,
                    Skeleton(spec.mnemonic, (et, et), regions=(("body", "logaddexp"),)),
                    _reduce.CHOSEN.choose(inst, inputs=[_reduce.log_add_exp_values(rng, shape, et)])))
    return out


SPEC = OpSpec(
    mnemonic="reduce_window",
    operands=(Operand("inputs", ANY, variadic=True, count=(1, 2)),
              Operand("init_values", ANY, variadic=True, rank=0, count=lambda op: len(op.inputs), types_of="inputs")),
    attributes=(Attribute("window_dimensions", I64ArrayAttr(), length=_length),
                Attribute("window_strides", I64ArrayAttr(), length=_length, optional=True),
                Attribute("base_dilations", I64ArrayAttr(), length=_length, optional=True),
                Attribute("window_dilations", I64ArrayAttr(), length=_length, optional=True),
                Attribute("padding", I64MatrixAttr(), length=_length, optional=True)),
    regions=(Region("body", body_signature, bodies=BODIES),),
    results=(Result("results", ANY, variadic=True, count=lambda op: len(op.inputs)),),
    constraints=(reduce_window_c1, reduce_window_c2, reduce_window_c3, reduce_window_c4, reduce_window_c5,
                 reduce_window_c6, reduce_window_c7, reduce_window_c8, reduce_window_c9, reduce_window_c10,
                 reduce_window_c11, reduce_window_c12, reduce_window_c13, reduce_window_c14, reduce_window_c15,
                 reduce_window_c16),
    infer=infer,
    semantics=Accumulating(arrays, working=working_bytes),
    exercise=Exercise(corners=CORNERS, built_corners=built_corners, operand_values=init_values,
                      survey_when=survey_reason, elided=ELIDED,
                      appended_last=(promoted_cases, short_attributes, cumlogsumexp_cases)),
    # v1.20: inputs, init_values, results "or per-tensor quantized tensors"; the body computes on them
    quantization=Quantization(meaning=REGIONS, example=quantized_example, bodies=("add", "maximum", "minimum")),
)
