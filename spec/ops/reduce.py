"""reduce — `body` applied to `inputs` and `init_values` along `dimensions` (spec section "reduce").

Semantics: each result element is `exec(schedule)` of the input slice for
*some* full binary tree whose in-order traversal is the slice's values in
ascending lexicographic order of their index — the reduced dimensions in
increasing order, whatever order `dimensions` lists them in — interspersed
with an implementation-defined amount of `init_values`.  What every such
schedule may compute is spec/schedule.py's: exact for associative bodies
with an identity init (integer sums wrap modulo 2^n, labelled as the
seed's Errors clause makes overflow implementation-defined), a `Range`
for float sums and products, every schedule enumerated for other bodies
(the argmax pattern JAX emits: a value and an index reduced together).

Findings:
* C4 writes `rank(inputs[0][d])` — a rank of an element; `rank(inputs[0])`
  is meant (and encoded).
* The seed does not say what an empty reduction is; a full binary tree
  needs a leaf, so at least one init value: the result is the init value
  (one insertion; more are the implementation's, labelled where they
  differ).
* With a float sum the sign of an exact zero result depends on whether a
  +0 init is inserted; ±0 are not told apart there (a "bounded" judgement).

Promotable bodies (StableHLO v1.20, read for the seed's C2 and C6): the
body may compute in element types Ek wider than the inputs' of the same
kind (`is_promotable(element_type(inputs[i]), Ei)`, dot_general's rule:
`promotable`), and the results are of Ek (v1.20 C8).  Its Semantics
convert the input slices and init values to Ek (`to_destination_type`:
`converted`, exact for every widening the suite uses) and reduce there, so
a bf16 sum with an f32 body is bounded by f32's accumulation, not bf16's.
JAX never writes such a body (`jnp.sum(x, dtype=f32)` converts first);
jaxlib 0.10.2's verifier reads one, XLA:CPU's HLO verifier refuses it and
the reference interpreter aborts on it (issue 35).

Exercise: init values are the body's identity (the value cases), so the
amount inserted cannot matter; a body that is not associative, or an init
that is not its identity, makes the case a survey (reported, not scored).
"""
from __future__ import annotations

import itertools

import numpy as np

from ..dsl import (ANY, Accumulating, Attribute, I64ArrayAttr, If, Implies, OpSpec, Operand, Region, Result,
                   all_of, at, contains, dim, element_type, in_range, is_unique, rank, same_shape, size)
from ..bounds import values
from ..dsl import Function
from ..dsl.quantization import REGIONS, Quantization
from ..types import element_type as element_type_named
from ..exercise import Chosen, Corner, Exercise
from ..schedule import identity, reduce_arrays, reduce_slice
from ..symbolic import Skeleton
from ..types import TensorType

BODIES = ("add", "multiply", "maximum", "minimum", "argmax", "subtract")
# Bodies whose result every schedule bounds (spec/schedule.py): scored, not surveyed.  logaddexp (associative
# in the reals: spec/log_add_exp.py) is written by `log_add_exp_cases` alone, so BODIES' draws stay as they were.
ASSOCIATIVE = ("add", "multiply", "maximum", "minimum", "argmax", "logaddexp", "jax_argmax", "jax_argmin")
# The selecting bodies (generators/regions.py): the value's op, whose identity is the value's init; index init 0
# (jax_argmax, jax_argmin: JAX's own, spec/selection.py; written by `selection_cases` alone, as logaddexp is).
SELECTS = {"argmax": "maximum", "jax_argmax": "maximum", "jax_argmin": "minimum"}
# Bodies written otherwise that compute another body's function (generators/regions.py): its identity, its schedules
SAME_AS = {"logaddexp_rewritten": "logaddexp"}


def body_signature(op):
    """C6: `(tensor<E0>, …, tensor<EN-1>, tensor<E0>, …, tensor<EN-1>) -> (tensor<E0>, …, tensor<EN-1>)`
    with Ek the inputs' own element types: the body generators write (a
    promoted body is built by hand: `promoted_cases`)."""
    scalars = tuple(TensorType((), t.element_type) for t in op.inputs)
    return scalars + scalars, scalars


# --------------------------------------------------------------------------
# v1.20's promotable bodies (is_promotable), shared by the reduction ops
# --------------------------------------------------------------------------

def promotable(x, y) -> bool:
    """v1.20's `is_promotable(x, y)`: dot_general's `promotable`, the one
    rule (same kind, no narrower; a quantized type only to itself — the
    quantized promotion, on storage types, is not encoded).  Imported when
    called: dot_general imports this module (`kept_dims`)."""
    from .dot_general import promotable as rule
    return rule(x, y)


def _scalar(t) -> bool:
    return isinstance(t, TensorType) and t.rank == 0


def body_types(types, fn) -> list:
    """Ek for each of the N element types `types` (the inputs'), read from a
    block of type `(tensor<E0>, …, tensor<EN-1>, tensor<E0>, …,
    tensor<EN-1>) -> (tensor<E0>, …, tensor<EN-1>)`: the block's Ek where
    it has that form and `is_promotable(types[k], Ek)`; types[k] otherwise
    — a block its signature clause refuses leaves the result clause (v1.20
    reduce C8 `element_type(results[i]) = Ei`) the seed's reading, so a
    program breaking the body alone breaks one clause."""
    n = len(types)
    ins, outs = tuple(getattr(fn, "inputs", ()) or ()), tuple(getattr(fn, "outputs", ()) or ())
    if len(ins) != 2 * n or len(outs) != n or not all(_scalar(t) for t in ins + outs):
        return list(types)
    out = []
    for k, et in enumerate(types):
        e = outs[k].element_type
        same = ins[k].element_type == ins[n + k].element_type == e
        out.append(e if same and promotable(et, e) else et)
    return out


def promoted_signature(types, fn):
    """`body_signature` with the block's promoted Ek (`body_types`): what a
    promotable body must equal."""
    scalars = tuple(TensorType((), e) for e in body_types(types, fn))
    return scalars + scalars, scalars


def to_body_type(array, src, dst) -> np.ndarray:
    """v1.20's `to_destination_type(x, E)` for is_promotable(src, dst): the
    spec's `convert`.  Exact where dst holds every value of src (bf16, f16
    → f32, f32 → f64, complex64 → complex128, an integer into a wider one
    of the same signedness: what the suite's cases use); where it does not
    — the promotions of equal width v1.20 also allows (f16 ↔ bf16,
    f8E4M3FN ↔ f8E5M2) and an integer into one of the other signedness —
    numpy/ml_dtypes' conversion: round to nearest even (the source's values
    are float32's, so one rounding), integers modulo 2^n (convert's first
    implementation-defined alternative)."""
    a = np.asarray(array)
    return a if src == dst else a.astype(dst.numpy)


def reduce_c1(op):
    """(C1) All `inputs` have the same shape."""
    return same_shape(*op.inputs)


def reduce_c2(op):
    """(C2) element_type(`inputs[k]`) $=$ element_type(`init_values[k]`) $=$
element_type(`results[k]`) for all `k` $\\in$ [0, N).

    Read as v1.20 states it: its C2 `element_type(inputs...) =
    element_type(init_values...)` and C8 `element_type(results[i]) = Ei`,
    the body's element type (`body_types`: promotable from the inputs')."""
    results = op.results["results"]
    es = body_types([element_type(i) for i in op.inputs], op.body)
    return all(element_type(i) == element_type(v) and element_type(r) == e
               for i, v, r, e in zip(op.inputs, op.init_values, results, es))


def reduce_c3(op):
    """(C3) size(`inputs`) $=$ size(`init_values`) $=$ size(`results`) $=$ N where
N >= 1."""
    return size(op.inputs) == size(op.init_values) == size(op.results["results"]) >= 1


def reduce_c4(op):
    """(C4) 0 $\\le$ `dimensions[d]` $\\lt$ rank(`inputs[0][d]`) for all dimension
`d`.

    Read as rank(`inputs[0]`): an element has no rank (a typo, docs/spec-findings.md)."""
    return all_of(in_range(d, 0, rank(op.inputs[0])) for d in op.dimensions)


def reduce_c5(op):
    """(C5) All dimensions in `dimensions` are unique."""
    return is_unique(op.dimensions)


def reduce_c6(op):
    """(C6) `body` has type `(tensor<E0>, ..., tensor<EN-1>, tensor<E0>, ...,`
`tensor<EN-1>) -> (tensor<E0>, ..., tensor<EN-1>)` where
`Ek = element_type(inputs[k])`.

    Read as v1.20's C6: `… where is_promotable(element_type(inputs[i]), Ei)`
    (`promoted_signature`): a body in a wider type of the same kind is
    valid, a narrower one or one of another kind is not."""
    ins, outs = promoted_signature([element_type(t) for t in op.inputs], op.body)
    return tuple(op.body.inputs) == ins and tuple(op.body.outputs) == outs


def reduce_c7(op):
    """(C7) shape(`results[k]`) $=$ shape(`inputs[k]`) except that the dimension
sizes of `inputs[k]` corresponding to `dimensions` are not included."""
    return all_of(kept_shape(i, r, op.dimensions) for i, r in zip(op.inputs, op.results["results"]))


def kept_shape(t, r, dimensions):
    """shape(r) is shape(t) without the axes `dimensions` names.  Entries may
    be symbolic, so: for each set of axes the entries could name, if they
    name exactly those, r's dims are the remaining ones in order (with
    entries in range and unique — C4, C5 — exactly one set applies)."""
    m = len(dimensions)
    if rank(r) != rank(t) - m:
        return False
    return all_of(Implies(all_of(contains(dimensions, d) for d in reduced),
                          all_of(dim(r, i) == dim(t, d)
                                 for i, d in enumerate(d for d in range(rank(t)) if d not in reduced)))
                  for reduced in itertools.combinations(range(rank(t)), m))


def kept_dims(t, dimensions) -> tuple:
    """dims of `t` at the axes `dimensions` does not name, in order.  With
    symbolic entries, each dim is an `If` over the sets of axes the entries
    may name (0 where they name no such set: C4 or C5 is broken then)."""
    r, m = rank(t), len(dimensions)
    if m > r:
        raise ValueError(f"{m} dimensions reduced of a rank-{r} tensor")
    out = [0] * (r - m)
    for reduced in itertools.combinations(range(r), m):
        named = all_of(contains(dimensions, d) for d in reduced)
        kept = [d for d in range(r) if d not in reduced]
        out = [If(named, dim(t, d), o) for d, o in zip(kept, out)]
    return tuple(out)


def infer(op):
    """The inputs' shapes without `dimensions` (C7), of the body's element
    types Ek (v1.20 C8; the inputs' where the body is not promotable)."""
    es = body_types([t.element_type for t in op.inputs], getattr(op, "body", None))
    return {"results": [TensorType(kept_dims(t, op.dimensions), e) for t, e in zip(op.inputs, es)]}


# --------------------------------------------------------------------------
# Semantics
# --------------------------------------------------------------------------

def arrays(op, *operands):
    """`results[:][j] = reduce(input_slices)`, every allowed schedule (module
    docstring): on whole arrays where spec/schedule.py's `reduce_arrays`
    serves the body (monoids with identity inits), each output a
    `bounds.Answers` whose per-element route is `reduce_slice` of the
    element's slice; element by element otherwise."""
    n = len(op.inputs)
    types = body_types([t.element_type for t in op.inputs], op.body)
    inputs, inits = converted(op.inputs, types, operands[:n], operands[n:2 * n])
    reduced = sorted(int(d) for d in op.dimensions)
    kept = [d for d in range(inputs[0].ndim) if d not in reduced]
    out_shape = tuple(inputs[0].shape[d] for d in kept)
    whole = _whole(op, inputs, inits, kept, reduced, out_shape, types)
    if whole is not None:
        return whole
    results = [np.empty(out_shape, dtype=object) for _ in range(n)]
    for out_index in np.ndindex(*out_shape):
        leaves = []
        for red_index in np.ndindex(*[inputs[0].shape[d] for d in reduced]):
            full = [0] * inputs[0].ndim
            for d, i in zip(kept, out_index):
                full[d] = i
            for d, i in zip(reduced, red_index):
                full[d] = i
            leaves.append(tuple(a[tuple(full)] for a in inputs))
        for k, answer in enumerate(reduce_slice(leaves, inits, op.body, types)):
            results[k][out_index] = answer
    return results


def converted(declared, types, inputs, inits) -> tuple:
    """(inputs, init values) as the body computes on them (v1.20's
    `input_slices_converted`, `init_values_converted`): each converted from
    its declared element type to the body's Ek (`to_body_type`), so the
    reduction accumulates in Ek with Ek's allowances."""
    src = [t.element_type for t in declared]
    xs = [to_body_type(a, s, e) for a, s, e in zip(inputs, src, types)]
    vs = tuple(to_body_type(np.asarray(a).reshape(()), s, e) for a, s, e in zip(inits, src, types))
    return xs, vs


def _whole(op, inputs, inits, kept, reduced, out_shape, types):
    """Every slice at once, or None: `reduce_arrays` decides what it serves
    (complex and boolean reductions, among others, go element by element)."""
    P = int(np.prod(out_shape, dtype=np.int64))
    L = int(np.prod([inputs[0].shape[d] for d in reduced], dtype=np.int64))
    slices = [a.transpose(kept + reduced).reshape(P, L) for a in inputs]   # row i: slice i in index order

    def leaves_of(i):
        return [tuple(s[i, j] for s in slices) for j in range(L)]

    rows = [values(s, t) for s, t in zip(slices, types)]
    got = reduce_arrays(rows, None, inits, op.body, types, leaves_of)
    if got is None:
        return None
    for rec in got:
        rec.shape = out_shape
    return got


# --------------------------------------------------------------------------
# Exercise
# --------------------------------------------------------------------------

def _dimensions_lengths(op):
    r = rank(op.inputs[0]) if op.inputs else 0
    return tuple(k for k in (1, 2, 0, 3) if k <= r) or (0,)


CHOSEN = Chosen()   # inputs a builder chose (`log_add_exp_cases`, `selection_cases`); the others are drawn


def init_values(op, name, k, t, rng):
    """Init values: the identity of the body's op on that element type (so
    the amount inserted cannot matter); the argmax pattern starts from the
    lowest value and index 0.  An instance's CHOSEN values where its
    builder chose them (reduce_window's delegate here too)."""
    got = CHOSEN(op, name, k, t, rng)
    if got is not None:
        return got
    if name != "init_values":
        return None
    body = SAME_AS.get(op.body.body, op.body.body)
    et = t.element_type
    op_name = (SELECTS[body] if k == 0 else None) if body in SELECTS else body
    value = identity(op_name, et) if op_name else None
    if value is None:
        value = et.min_value if (et.is_integer and k == 1 and body == "argmax") else 0
        value = False if et.is_bool else value
    return np.asarray(value).astype(et.numpy).reshape(())


def survey_reason(op):
    """A body whose schedule decides the result: not associative, or whose
    init value is not its identity on this element type."""
    body = SAME_AS.get(op.body.body, op.body.body)
    if body not in ASSOCIATIVE:
        return f"body {body} is not associative: the implementation-defined schedule decides the result"
    ops = [SELECTS[body], None] if body in SELECTS else [body] * len(op.inputs)
    if any(o is not None and identity(o, t.element_type) is None for o, t in zip(ops, op.inputs)):
        return f"body {body} has no identity on these element types: the amount of init_values decides"
    return None


CORNERS = (
    Corner("every dimension reduced", (2, 0), lambda op: [], layout={"lengths": {"dimensions": 2}}),
    Corner("zero-sized reduced dimension", (2, 0), lambda op: [at(op.inputs[0].shape, op.dimensions[0], -1) == 0],
           layout={"lengths": {"dimensions": 1}}),
    Corner("no dimension reduced", (2, 0), lambda op: [], layout={"lengths": {"dimensions": 0}}),
    Corner("long reduced dimension", (1, 0), lambda op: [op.inputs[0].shape[0] >= 12],
           layout={"lengths": {"dimensions": 1}}, max_dim=24),
    Corner("two inputs reduced together", (2, 0), lambda op: [], layout={"counts": {"inputs": 2}}),
)


def quantized_example(types: dict, body: str = "add"):
    """A valid reduce over dimension 1 of a 2×6 input (six leaves: every
    schedule enumerated) with `body`, its inputs, init values, results and
    block of the element types `types` names ("inputs", "init_values",
    "results", "body"; the inputs' type where not named, f32 for them)."""
    t_in = types.get("inputs", element_type_named("f32"))
    scalar = TensorType((), types.get("body", t_in))
    fn = Function((scalar, scalar), (scalar,), body=body)
    return SPEC.instance({"inputs": [TensorType((2, 6), t_in)],
                          "init_values": [TensorType((), types.get("init_values", t_in))]},
                         {"dimensions": (1,)}, {"results": [TensorType((2,), types.get("results", t_in))]},
                         {"body": fn})


# --------------------------------------------------------------------------
# Cases of v1.20's promotable bodies (`Exercise.appended_last`: after every other stream)
# --------------------------------------------------------------------------

# (inputs' type, body's type) of the value cases: a widening of each kind v1.20's is_promotable allows, each
# exact (`to_body_type`); the two 16-bit floats into f32 (JAX's mixed precision).
WIDENINGS = (("bf16", "f32"), ("f16", "f32"), ("f32", "f64"), ("si8", "si32"), ("complex<f32>", "complex<f64>"))
NARROWING = ("f32", "f16")     # a narrower body: not promotable (bitwidth 32 > 16)
OTHER_KIND = ("si32", "f32")   # a float body on integer inputs: not promotable (another kind)


def promotion_plan(make, region_clause: str, result_clause: str, kinds=("float", "integer", "complex"),
                   refused_results: str = "inputs") -> list:
    """(note, violates, inputs' type, body's type, instance) of the
    promotion cases an op gets: a value case per widening in `WIDENINGS`
    of an element kind in `kinds`, and three invalid ones — a narrowing
    body and a float body on integer inputs (`region_clause`: the body's
    signature clause, with results of the type inference gives for a body
    that is not promotable: the inputs' (`refused_results="inputs"`), or
    the body's ("body": all_reduce's C7 reads E from the computation
    whatever C5 says)), and a promoted body whose results keep the inputs'
    type (`result_clause`).  `make(inputs' type, body's type, results'
    type)` builds the op's instance."""
    named = element_type_named
    out = []
    for src, dst in WIDENINGS:
        s, e = named(src), named(dst)
        kind = "complex" if s.is_complex else ("float" if s.is_float else "integer")
        if kind in kinds:
            out.append((f"v1.20 is_promotable({src}, {dst}): a {dst} body on {src} inputs", None, s, e,
                        make(s, e, e)))
    for (src, dst), why in ((NARROWING, "narrower"), (OTHER_KIND, "another kind")):
        s, e = named(src), named(dst)
        r = e if refused_results == "body" else s
        out.append((f"v1.20: is_promotable({src}, {dst}) is false ({why})", region_clause, s, e, make(s, e, r)))
    s, e = named("bf16"), named("f32")
    out.append(("v1.20: the results' element type is the body's (f32), not the inputs' (bf16)", result_clause,
                s, e, make(s, e, s)))
    return out


def promoted_cases(spec, skels, rng):
    """reduce over dimension 1 of a 2×6 input (`quantized_example`'s
    structure) with an add body in a promoted type, a maximum f16 → f32,
    and the invalid programs (`promotion_plan`; v1.20 C6 is `reduce_c6`,
    C8 `reduce_c2`)."""
    def make(s, e, r, body="add"):
        return quantized_example({"inputs": s, "body": e, "results": r}, body)
    plan = promotion_plan(make, "reduce_c6", "reduce_c2")
    f16, f32 = element_type_named("f16"), element_type_named("f32")
    plan.append(("v1.20 is_promotable(f16, f32): a maximum body in f32", None, f16, f32,
                 make(f16, f32, f32, "maximum")))
    return [(note, label, Skeleton(spec.mnemonic, (s, s), regions=(("body", inst.body.body),)), inst)
            for note, label, s, e, inst in plan]


def log_add_exp_cases(spec, skels, rng):
    """`lax.reduce(x, -inf, jnp.logaddexp, (1,))` as JAX lowers it
    (generators/regions.py "logaddexp"): f32 rows of 6 (every schedule was
    enumerable) and 20 (past MAX_ENUMERATED_LEAVES), and f16, after
    `promoted_pair`."""
    out = []
    for et, (rows, n) in ((element_type_named("f32"), (2, 6)), (element_type_named("f32"), (3, 20)),
                          (element_type_named("f16"), (3, 20))):
        inst, skel = _rows_reduced(spec, "logaddexp", et, rows, n)
        out.append((f"jnp.logaddexp reduction as JAX lowers it ({n} leaves a row)", None, skel,
                    CHOSEN.choose(inst, inputs=[log_add_exp_values(rng, (rows, n), et)])))
    return out


def _rows_reduced(spec, body: str, et, rows: int, n: int):
    """(instance, skeleton) of a reduce of rows × n values of `et` along
    dimension 1 by the one-input body `body` (the log-add-exp cases)."""
    scalar = TensorType((), et)
    inst = spec.instance({"inputs": [TensorType((rows, n), et)], "init_values": [scalar]},
                         {"dimensions": (1,)}, {"results": [TensorType((rows,), et)]},
                         {"body": Function((scalar, scalar), (scalar,), body=body)})
    return inst, Skeleton(spec.mnemonic, (et, et), regions=(("body", body),))


def log_add_exp_values(rng, shape: tuple, et):
    """Inputs of a log-add-exp case (`log_add_exp_cases`, reduce_window's
    `cumlogsumexp_cases`): logits-like values, N(0, 3), with −inf leaves
    (the body's identity) in the second row and, in the third, a +inf and
    then a NaN past the middle (what they decide from there on)."""
    x = (rng.standard_normal(shape) * 3).astype(et.numpy)
    if shape[0] > 1:
        x[1, ::3] = -np.inf
    if shape[0] > 2:
        x[2, shape[1] // 2] = np.inf
        x[2, -2] = np.nan
    return x


def _selection_instance(spec, body: str, et, rows: int, n: int):
    """A reduce of (values of `et`, si32 indices) over rows × n along
    dimension 1 by a selecting body (`selection_cases`, `selection_exposing_cases`)."""
    si32 = element_type_named("si32")
    scalars = [TensorType((), et), TensorType((), si32)]
    return spec.instance({"inputs": [TensorType((rows, n), et), TensorType((rows, n), si32)],
                          "init_values": scalars}, {"dimensions": (1,)},
                         {"results": [TensorType((rows,), et), TensorType((rows,), si32)]},
                         {"body": Function(tuple(scalars * 2), tuple(scalars), body=body)})


def selection_cases(spec, skels, rng):
    """`jnp.argmax` / `jnp.argmin` as JAX lowers them: a reduce of (values,
    iota) by JAX's own selecting body (generators/regions.py "jax_argmax",
    "jax_argmin"; spec/selection.py) over rows of 20 — past the 12 leaves
    the schedules were enumerated for — with ties for the best, a ±0 tie,
    and NaNs (the first wins), in f32, f16 and si32, and JAX's first True of
    a mask (i1), after `log_add_exp_cases`."""
    out = []
    for body, name in (("jax_argmax", "f32"), ("jax_argmin", "f16"), ("jax_argmax", "si32"), ("jax_argmax", "i1")):
        et = element_type_named(name)
        rows, n = 3, 20
        inst = _selection_instance(spec, body, et, rows, n)
        v = rng.integers(-3, 4, (rows, n)).astype(np.float64)   # small integers: ties for the best
        v[0] = rng.standard_normal(n) * 4
        if et.is_bool:   # jnp.argmax of a mask: its first True; row 1 has none (every leaf ties the init)
            v = (v > 1) & np.array([[True], [False], [True]])
        if et.is_float:
            v[1, [4, 9]] = (-0.0, 0.0) if body == "jax_argmin" else (0.0, -0.0)
            v[1] = np.where(np.abs(v[1]) > 0, -np.abs(v[1]) - 1, v[1]) if body == "jax_argmax" else \
                np.where(np.abs(v[1]) > 0, np.abs(v[1]) + 1, v[1])   # the best of row 1 is the ±0 tie
            v[2, [7, 12]] = np.nan
        iota = np.broadcast_to(np.arange(n, dtype=np.int32), (rows, n)).copy()
        what = "a row with no True" if et.is_bool else "ties, a ±0 tie, NaNs"
        out.append((f"jnp.{body[4:]} as JAX lowers it ({name} rows of {n}: {what})", None,
                    Skeleton(spec.mnemonic, (et, et), regions=(("body", body),)),
                    CHOSEN.choose(inst, inputs=[v.astype(et.numpy), iota])))
    return out


def selection_exposing_cases(spec, skels, rng):
    """jnp.argmin of a mask as JAX lowers it — its first False — after
    `selection_cases` (which has the mask's argmax): three i1 rows of 20,
    one with a False after a True, one with none (every leaf ties the
    init, True at 0).  Stop 54: a recogniser that took JAX's argmin body
    for its argmax (spec/selection.py's template match) was killed only by
    a unit test (tools/mutation/runs/stop54-*)."""
    i1 = element_type_named("i1")
    rows, n = 3, 20
    inst = _selection_instance(spec, "jax_argmin", i1, rows, n)
    mask = rng.integers(0, 4, (rows, n)) > 0          # mostly True
    mask[0, :2] = (True, False)                        # the first False at 1, after a True
    mask[1] = True                                     # no False
    iota = np.broadcast_to(np.arange(n, dtype=np.int32), (rows, n)).copy()
    yield ("jnp.argmin of a mask as JAX lowers it (i1 rows of 20: its first False; a row with none)", None,
           Skeleton(spec.mnemonic, (i1, i1), regions=(("body", "jax_argmin"),)),
           CHOSEN.choose(inst, inputs=[mask, iota]))


def log_add_exp_rewritten_cases(spec, skels, rng):
    """jnp.logaddexp written otherwise (generators/regions.py
    "logaddexp_rewritten": the maximum as a select, the difference b − a,
    the adds' operands swapped), init −inf, f32 rows of 20 as
    `log_add_exp_cases`, after `selection_exposing_cases`.  The same
    function, so the same Range.  Stop 55: a reader that put symmetric
    operands in no order, or missed the select form of the maximum, sends
    such a body to the schedules' enumeration — any value past 12 leaves —
    which no verdict tells apart (the enumeration's primary lies in the
    Range) but regenerating this case does (docs/mutation.md §22)."""
    et = element_type_named("f32")
    rows, n = 3, 20
    inst, skel = _rows_reduced(spec, "logaddexp_rewritten", et, rows, n)
    yield (f"jnp.logaddexp written otherwise: select for the maximum, b - a, swapped adds ({n} leaves a row)",
           None, skel, CHOSEN.choose(inst, inputs=[log_add_exp_values(rng, (rows, n), et)]))


def promoted_pair(spec, skels, rng):
    """Two inputs of different types (bf16, f32) reduced together by an add
    body promoted pairwise (f32, f64), after `promoted_cases`: C6 pairs
    input k with block arguments k and N + k (`body_types`), so a reading
    that paired other arguments would refuse this valid program."""
    bf16, f32, f64 = (element_type_named(n) for n in ("bf16", "f32", "f64"))
    s32, s64 = TensorType((), f32), TensorType((), f64)
    fn = Function((s32, s64, s32, s64), (s32, s64), body="add")
    inst = SPEC.instance({"inputs": [TensorType((2, 6), bf16), TensorType((2, 6), f32)],
                          "init_values": [TensorType((), bf16), TensorType((), f32)]},
                         {"dimensions": (1,)}, {"results": [TensorType((2,), f32), TensorType((2,), f64)]},
                         {"body": fn})
    yield ("v1.20 is_promotable per input: bf16 and f32 inputs, an add body in f32 and f64", None,
           Skeleton(spec.mnemonic, (bf16, bf16), regions=(("body", "add"),)), inst)


SPEC = OpSpec(
    mnemonic="reduce",
    operands=(Operand("inputs", ANY, variadic=True, count=(1, 2)),
              Operand("init_values", ANY, variadic=True, rank=0, count=lambda op: len(op.inputs), types_of="inputs")),
    attributes=(Attribute("dimensions", I64ArrayAttr(), length=_dimensions_lengths),),
    regions=(Region("body", body_signature, bodies=BODIES),),
    results=(Result("results", ANY, variadic=True, count=lambda op: len(op.inputs)),),
    constraints=(reduce_c1, reduce_c2, reduce_c3, reduce_c4, reduce_c5, reduce_c6, reduce_c7),
    infer=infer,
    semantics=Accumulating(arrays),
    exercise=Exercise(corners=CORNERS, operand_values=init_values, survey_when=survey_reason,
                      appended_last=(promoted_cases, promoted_pair, log_add_exp_cases, selection_cases,
                                     selection_exposing_cases, log_add_exp_rewritten_cases)),
    # v1.20: inputs, init_values, results "or per-tensor quantized tensors"; the body computes on them
    quantization=Quantization(meaning=REGIONS, example=quantized_example, bodies=("add", "maximum", "minimum")),
)
