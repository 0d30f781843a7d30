"""The seed → v1.20 map (spec/v1_20_map.py) and the reader of numbered
constraints it rests on (spec/v1_20_text.py).

Truth here comes from outside the code under test:
* the parser on hand-written markdown (the shapes both texts use: nested
  conditions, wrapped lines, lazy continuation, code fences, tables'
  `(C1-C3)` references, HTML comments);
* counts read by hand from the texts (issue 35 lists v1.20's renumbered
  ops; the seed's gather has no C14), and the seed's labels as
  spec/traceability.py reads them;
* every `by="text"` row re-derived by comparing normalised texts, and every
  pair of clauses that normalise alike found in the table;
* the totals per category, counted by hand from the table's rows
  (docs/v1_20-map.md lists them);
* for every `changed` row, a witness program of the seed's types on which
  the seed's clause and v1.20's decide differently (both verdicts worked
  out by hand in its docstring), run through the encoded function to check
  the reading the row says the suite follows;
* the v1.20 clauses the op declarations claim (`OpSpec.later`, the
  quantization functions' "(v1.20 C<N>)") held to v1.20's text.

v1.20's spec.md is read from its copy in spec/seed/v1.20/ (the project's
layout, spec.v1_20_text.V1_20_SPEC), the seed from the sections stored in
spec/seed/; one test holds the copy to ../shared/upstream-1.20/ where that
is present.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from shlo_conform.spec import traceability, v1_20_map as vmap, v1_20_text as vt
from shlo_conform.spec.dsl import Function
from shlo_conform.spec.grid import Grid
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.types import TensorType, TokenType, element_type

F16, F32, I1, SI32 = (element_type(n) for n in ("f16", "f32", "i1", "si32"))


@pytest.fixture(scope="module")
def v1_20():
    assert vt.V1_20_SPEC.is_file(), f"v1.20's spec.md expected at {vt.V1_20_SPEC} (stored with the spec)"
    return vt.v1_20_constraints()


@pytest.fixture(scope="module")
def seed():
    return vt.seed_constraints()


# --------------------------------------------------------------------------
# The parser, on hand-written markdown
# --------------------------------------------------------------------------

SNIPPET = """\
## Ops

### foo

#### Inputs

| Label | Name  | Type   | Constraints |
|-------|-------|--------|-------------|
| (I1)  | `lhs` | tensor | (C1-C3)     |

#### Constraints

<!-- markdownlint-disable line-length -->
* (C1) `a = b`.
* If the operation uses quantized tensors:
  * (C2) `is_quantized(lhs)` and
    `is_quantized(rhs)`.
  * If `is_quantized(lhs)`:
    * (C3) `storage_type(lhs) = storage_type(rhs)`.
* (C4) `type(result) = type(operand)` except:
  * `dim(result, 0) = 2`.
* (C5) wraps to
column zero.

```mlir
* (C9) inside a code block: not a clause
```

#### Examples

* (C7) under Examples: not a clause

### bar_baz

#### Constraints

* (C1)`no space after the label`.

### Not an op heading

#### Constraints

* (C1) outside any op.
"""


def test_parser_reads_clauses_conditions_and_continuations():
    ops = vt.parse(SNIPPET)
    assert sorted(ops) == ["bar_baz", "foo"]
    foo = {c.number: c for c in ops["foo"]}
    assert sorted(foo) == [1, 2, 3, 4, 5]
    assert foo[1].text == "`a = b`." and foo[1].context == ()
    assert foo[2].text == "`is_quantized(lhs)` and `is_quantized(rhs)`."
    assert foo[2].context == ("If the operation uses quantized tensors:",)
    assert foo[3].context == ("If the operation uses quantized tensors:", "If `is_quantized(lhs)`:")
    assert foo[4].text == "`type(result) = type(operand)` except: * `dim(result, 0) = 2`."
    assert foo[4].context == ()          # the condition ended with the less indented bullet
    assert foo[5].text == "wraps to column zero."
    assert foo[3].guarded.startswith("If the operation uses quantized tensors: If `is_quantized(lhs)`: ")
    assert foo[1].label == "foo_c1" and foo[1].line == 14
    assert [(c.number, c.text) for c in ops["bar_baz"]] == [(1, "`no space after the label`.")]


def test_normalise_removes_formatting_only():
    assert vt.normalise("0 $\\le$ `feature_index` $\\lt$ rank(`operand`).") == \
        vt.normalise("`0 <= feature_index < rank(operand)`.")
    assert vt.normalise("size(`scale`) $=$ `dim(operand, feature_index)`.") == \
        vt.normalise("`size(scale) = dim(operand, feature_index)`")
    # words are kept: the seed's prose and v1.20's formula stay apart
    assert vt.normalise("`lhs` and `rhs` have the same element type.") != \
        vt.normalise("`element_type(lhs) = element_type(rhs)`.")
    assert vt.normalise("`a < b`") != vt.normalise("`a <= b`")


# --------------------------------------------------------------------------
# The parser on the two texts: counts read by hand
# --------------------------------------------------------------------------

# v1.20's counts for the ops issue 35 names as renumbered, and a few read by hand besides.
V1_20_BY_HAND = {"add": 7, "dot_general": 24, "gather": 23, "scatter": 25, "convolution": 34, "send": 5, "recv": 5,
                 "broadcast_in_dim": 6, "reshape": 3, "transpose": 4, "reduce": 8, "reduce_scatter": 9, "infeed": 3,
                 "optimization_barrier": 1, "tuple": 1, "abs": 2, "select_and_scatter": 12, "after_all": 0}
SEED_BY_HAND = {"add": 1, "dot_general": 13, "gather": 14, "scatter": 16, "convolution": 28, "send": 1, "recv": 3,
                "broadcast_in_dim": 5, "reshape": 2, "transpose": 3, "reduce": 7, "reduce_scatter": 8, "infeed": 2,
                "optimization_barrier": 2, "tuple": 2, "all_reduce": 7, "all_to_all": 9, "tan": 1}


def test_counts_read_by_hand(seed, v1_20):
    assert {op: len(v1_20[op]) for op in V1_20_BY_HAND} == V1_20_BY_HAND
    assert {op: len(seed[op]) for op in SEED_BY_HAND} == SEED_BY_HAND
    assert [c.number for c in seed["gather"]] == list(range(1, 14)) + [15]   # the seed skips C14
    assert sum(len(seed[op]) for op in OPS) == 311
    assert sum(len(v1_20[op]) for op in OPS) == 362
    for op in OPS:   # v1.20 numbers every op's clauses 1..N
        assert [c.number for c in v1_20[op]] == list(range(1, len(v1_20[op]) + 1)), op


def test_v1_20_nesting_read_by_hand(v1_20):
    dot = {c.number: c for c in v1_20["dot_general"]}
    assert dot[13].context == ("If the operation uses non-quantized tensors:",)
    assert dot[17].context == ("If the operation uses quantized tensors:", "If `is_quantized(lhs)`:")
    assert dot[20].context == ("If the operation uses quantized tensors:", "If `!is_quantized(lhs)`:")
    assert dot[21].context[0].startswith("If `!is_empty_algorithm(")
    assert dot[21].text == "`precision_config... = DEFAULT`."
    assert dot[12].context == ()


def test_seed_labels_are_traceabilitys(seed):
    stored = traceability.read_stored()
    for op in OPS:
        assert [c.number for c in seed[op]] == stored[op].labels, op


def test_wrapped_seed_lines_are_kept(seed):
    """fft C4 and pad C2 wrap to column 0 (markdown's lazy continuation)."""
    fft4 = {c.number: c for c in seed["fft"]}[4]
    assert fft4.text.endswith("then `dims(real)[-size(fft_length):] = fft_length`.")
    pad2 = {c.number: c for c in seed["pad"]}[2]
    assert pad2.text.endswith("have the size equal to `operand`'s rank.")


# --------------------------------------------------------------------------
# The map: complete, well formed, mechanical rows re-derived
# --------------------------------------------------------------------------

def _seed_labels() -> dict[str, list[str]]:
    """The seed labels the project encodes: each op's functions less its later (v1.20) clauses."""
    return {op: [l for l in spec.labels if l not in dict(spec.later)] for op, spec in OPS.items()}


def test_every_encoded_seed_constraint_is_in_the_map_once():
    rows = [e.label for e in vmap.MAP if e.seed is not None]
    assert len(rows) == len(set(rows))
    encoded = {l for ls in _seed_labels().values() for l in ls}
    assert set(rows) == encoded
    assert set(vmap.V1_20_COUNT) == set(OPS)


def test_seed_names_keep_resolving():
    for e in vmap.MAP:
        if e.seed is not None:
            fn = OPS[e.op].constraint(e.label)
            assert fn.__name__ == e.label
            assert re.match(rf"\s*\(C{e.seed}\)", fn.__doc__ or ""), e.label   # docstring starts with the seed's text


def test_every_v1_20_constraint_is_reached(v1_20):
    reached = vmap.reached()
    for op in OPS:
        assert reached[op] == set(range(1, len(v1_20[op]) + 1)), op
        assert vmap.V1_20_COUNT[op] == len(v1_20[op]), op
    assert sum(vmap.V1_20_COUNT.values()) == 362


def test_rows_are_well_formed():
    new = {(e.op, e.v1_20[0]) for e in vmap.MAP if e.how == vmap.NEW}
    by_target: dict = {}
    for e in vmap.MAP:
        assert e.how in vmap.HOWS and e.by in (vmap.TEXT, vmap.READING)
        if e.how == vmap.NEW:
            assert e.seed is None and len(e.v1_20) == 1 and e.area and e.why
            continue
        for n in e.v1_20:
            assert (e.op, n) not in new, (e.label, n)      # a new clause is reached by no seed clause
            by_target.setdefault((e.op, n), []).append(e)
        if e.how == vmap.SAME:
            assert e.v1_20 == (e.seed,), e.label
        if e.how == vmap.RENUMBERED:
            assert e.v1_20 != (e.seed,) and e.v1_20, e.label
        if e.how == vmap.CHANGED:
            assert e.v1_20 and e.why and e.follows in ("seed", "v1.20"), e.label
        if e.how == vmap.DROPPED:
            assert e.v1_20 == () and e.why and e.follows, e.label
        if e.how == vmap.MERGED:
            assert len(e.v1_20) == 1 and e.why, e.label
        if e.by == vmap.READING and e.how in (vmap.SAME, vmap.RENUMBERED):
            assert e.why, e.label                          # words differ: say what was read
    for (op, n), rows in by_target.items():
        merged = [r for r in rows if r.how == vmap.MERGED]
        assert not merged or len(merged) >= 2, (op, n)     # a merge takes two seed clauses at least
        assert len(rows) == 1 or len(merged) == len(rows), (op, n, [r.label for r in rows])


def test_text_rows_rederived(seed, v1_20):
    """A row is `by="text"` exactly when its seed clause normalises like one of its v1.20 clauses."""
    for e in vmap.MAP:
        if e.seed is None:
            continue
        s = {c.number: c for c in seed[e.op]}[e.seed]
        alike = {c.number for c in v1_20[e.op] if vt.normalise(c.text) == vt.normalise(s.text)}
        if e.by == vmap.TEXT:
            assert alike & set(e.v1_20), e.label
        else:
            assert not alike, (e.label, alike)   # alike texts are recorded as such
    n_text = sum(e.by == vmap.TEXT for e in vmap.MAP)
    assert n_text == 93   # 68 with the same number, 25 under another (counted from the parser's pairs by hand)


def test_totals_per_category():
    """Counted by hand from the table (docs/v1_20-map.md): changed 14 (all_to_all 9, recv 1, reduce 2 and 6,
    reduce_scatter 7-8, reduce_window 13 and 16, scatter 15-16, select_and_scatter 11-12, transpose 3,
    triangular_solve 3); merged 8 (convolution 2+27, optimization_barrier 1+2, select_and_scatter 1+5,
    tuple 1+2); dropped 2 (recv 2-3); renumbered 63 (convolution 25, dot_general 13, gather 9,
    select_and_scatter 8, scatter 6, infeed 1, send 1); new 362 - 311 = 51 (311 seed rows reach 311 v1.20
    clauses: -4 merges, +6 splits, -2 drops)."""
    t = vmap.totals()
    assert {h: t[h] for h in vmap.HOWS} == {"same": 224, "renumbered": 63, "changed": 14, "merged": 8,
                                            "dropped": 2, "new": 51}
    assert t["seed"] == 311 and t["v1_20"] == 362
    assert t["new_encoded"] + t["new_not_encoded"] == t["new"]
    assert sum(len(v) for v in vmap.not_encoded().values()) == t["new_not_encoded"]
    line = vmap.render()
    assert line.endswith("\n") and "311 seed constraints -> 362" in line


def test_the_page_states_the_table():
    """docs/v1_20-map.md: its totals are the table's, and it names every row
    that is not a plain renumbering (changed, merged, dropped)."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "v1_20-map.md").read_text(encoding="utf-8")
    t = vmap.totals()
    for how in (vmap.SAME, vmap.RENUMBERED, vmap.CHANGED, vmap.MERGED, vmap.DROPPED):
        assert re.search(rf"^\| {how} \| {t[how]}\b", page, re.M), how
    assert re.search(rf"^\| new \(.*\) \| {t[vmap.NEW]} \|", page, re.M)
    for e in vmap.MAP:
        if e.how in (vmap.CHANGED, vmap.MERGED, vmap.DROPPED):
            assert e.label in page, e.label


def test_v1_20_of_names():
    assert vmap.v1_20_of("gather_c11") == (20,)
    assert vmap.v1_20_of("dot_general_c1") == (13,)
    assert vmap.v1_20_of("recv_c2") == ()
    with pytest.raises(KeyError):
        vmap.v1_20_of("gather_c14")   # the seed has no gather C14


# --------------------------------------------------------------------------
# What the code already encodes of v1.20
# --------------------------------------------------------------------------

def _formulas(doc: str) -> list[str]:
    """The code spans of a docstring's first paragraph (the clause it quotes)."""
    spans = re.findall(r"`([^`]+)`", doc.split("\n\n")[0], re.S)
    assert spans, doc
    return spans


def test_encoded_claims_are_v1_20_clauses(v1_20):
    """Each v1.20 clause an op declaration claims exists; its function's
    first formula is in that clause (conditions included), and of the op's
    clauses that one alone holds the most of the formulas the function's
    first paragraph quotes — a claim numbered one off names another
    clause (add_c6's `is_per_axis_quantized(lhs)` is in C5 too; its
    `quantization_dimension(lhs) = …` only in C6)."""
    enc = vmap.encoded_v1_20()
    assert enc
    for (op, n), label in enc.items():
        clauses = {c.number: vt.normalise(c.guarded) for c in v1_20[op]}
        assert n in clauses, (op, n, label)
        spans = [vt.normalise(s) for s in _formulas(OPS[op].constraint(label).__doc__)]
        assert spans[0] in clauses[n], (label, n, spans[0])
        score = {k: sum(s in text for s in spans) for k, text in clauses.items()}
        assert [k for k, v in score.items() if v == max(score.values())] == [n], (label, n, score)


def test_encoded_claims_are_new_or_batching_additions():
    """A claimed clause is `new`, or one a seed clause became with batching
    dims added (gather C6/C18, scatter C9/C20: the seed clause holds the
    old part, the later function the batching part)."""
    new = {(e.op, e.v1_20[0]) for e in vmap.MAP if e.how == vmap.NEW}
    for (op, n), label in vmap.encoded_v1_20().items():
        if (op, n) in new:
            continue
        rows = [e for e in vmap.entries(op) if n in e.v1_20]
        assert rows and all("batching" in e.why for e in rows), (label, n)
        assert label in dict(OPS[op].later), label


def test_later_clauses_match_traceability():
    """traceability's "from a later spec" count is the OpSpec.later claims encoded_v1_20 reads."""
    tr = traceability.trace(traceability.read_stored())
    later = {(t.name, l) for t in tr.ops for l in t.later}
    claimed = {(op, label) for (op, _), label in vmap.encoded_v1_20().items() if label in dict(OPS[op].later)}
    assert later == claimed
    assert sum(len(t.present) for t in tr.ops) == sum(e.seed is not None for e in vmap.MAP)


# --------------------------------------------------------------------------
# `changed` rows: a witness each, and the reading the suite follows
# --------------------------------------------------------------------------

def T(shape, et=F32):
    return TensorType(tuple(shape), et)


def fn(et, n_in=2, out=None):
    s = T((), et)
    return Function((s,) * n_in, (out or s,), body="add")


def reduce_widening():
    """reduce of f16 inputs with an f32 body and f32 results.  Seed: C2 wants
    results f16, C6 a (f16, f16) -> f16 body: both broken.  v1.20:
    is_promotable(f16, f32) (both float, 16 <= 32), C2 equates inputs and
    init values only, C8 gives results E = f32: valid."""
    return OPS["reduce"].instance({"inputs": [T((2, 6), F16)], "init_values": [T((), F16)]}, {"dimensions": (1,)},
                                  {"results": [T((2,), F32)]}, {"body": fn(F32)})


def reduce_scatter_widening():
    """reduce_scatter of an f16 operand with an f32 computation and an f32
    result over 2 replicas.  Seed: C7 wants (f16, f16) -> f16, C8
    type(result) = f16 with dim 4/2: both broken.  v1.20: C7 promotable, C8
    the shape 2, C9 element type E = f32: valid."""
    g = Grid(2, 1)
    return OPS["reduce_scatter"].instance(
        {"operand": T((4,), F16)}, {"scatter_dimension": 0, "replica_groups": ((0, 1),), "channel_id": 0,
                                    "use_global_device_ids": None},
        {"result": T((2,), F32)}, {"computation": fn(F32)}, grid=g)


def reduce_window_widening():
    """reduce_window over a 4-vector, window 2, stride 1 (3 windows), f16
    inputs and init value, f32 body and results.  Seed: C13 wants an f16
    body, C16 results of the init value's f16: both broken.  v1.20: C3
    inputs = init values (f16), C13 promotable, C16 results E = f32: valid."""
    return OPS["reduce_window"].instance(
        {"inputs": [T((4,), F16)], "init_values": [T((), F16)]},
        {"window_dimensions": (2,), "window_strides": None, "base_dilations": None, "window_dilations": None,
         "padding": None},
        {"results": [T((3,), F32)]}, {"body": fn(F32)})


def scatter_widening():
    """scatter of two scalar updates into a 4-vector (inserted dim 0), f16
    inputs and updates, f32 update_computation and results.  Seed: C15
    wants an f16 computation, C16 results of the inputs' type: both broken.
    v1.20: C6 updates = inputs (f16), C23 promotable, C24 shapes equal, C25
    results E = f32: valid."""
    return OPS["scatter"].instance(
        {"inputs": [T((4,), F16)], "scatter_indices": T((2, 1), SI32), "updates": [T((2,), F16)]},
        {"update_window_dims": (), "inserted_window_dims": (0,), "scatter_dims_to_operand_dims": (0,),
         "index_vector_dim": 1, "indices_are_sorted": False, "unique_indices": False},
        {"results": [T((4,), F32)]}, {"update_computation": fn(F32)})


def select_and_scatter_widening():
    """select_and_scatter on a 4-vector, window 2, stride 1 (source 3), f16
    operand, source and init value, an f16 select, an f32 scatter region and
    an f32 result.  Seed: C11 wants an f16 scatter, C12 type(result) =
    type(operand): both broken.  v1.20: C10 promotable, C11 shapes equal,
    C12 result E = f32: valid."""
    return OPS["select_and_scatter"].instance(
        {"operand": T((4,), F16), "source": T((3,), F16), "init_value": T((), F16)},
        {"window_dimensions": (2,), "window_strides": None, "padding": None},
        {"result": T((4,), F32)}, {"select": fn(F16, out=T((), I1)), "scatter": fn(F32)})


def transpose_rotation():
    """transpose of 2x3x4 by [1, 2, 0] to 3x4x2.  v1.20: dim(result, d) =
    dim(operand, permutation[d]) = (3, 4, 2): valid.  Seed: dim(result,
    permutation[i]) = dim(operand, i) wants (4, 2, 3): broken."""
    return OPS["transpose"].instance({"operand": T((2, 3, 4))}, {"permutation": (1, 2, 0)}, {"result": T((3, 4, 2))})


def triangular_solve_batches():
    """triangular_solve with a: 2x3x3, b: 5x3x4 (left side).  Seed: batch dim
    0 ∈ [0, R-3] must agree, 2 != 5: broken.  v1.20 literally:
    shape(a)[:-3] = shape(b)[:-3] is [] = [], and dim(a, -2) = dim(a, -1) =
    dim(b, -2) = 3: holds."""
    return OPS["triangular_solve"].instance(
        {"a": T((2, 3, 3)), "b": T((5, 3, 4))},
        {"left_side": True, "lower": True, "unit_diagonal": False, "transpose_a": "NO_TRANSPOSE"},
        {"result": T((5, 3, 4))})


def recv_from_host():
    """recv with is_host_transfer = true and channel_type HOST_TO_DEVICE.
    Seed C1: HOST_TO_DEVICE is the host rule: holds.  v1.20 C5: wants
    DEVICE_TO_HOST: broken."""
    return OPS["recv"].instance({"token": TokenType()},
                                {"channel_id": 1, "channel_type": "HOST_TO_DEVICE", "is_host_transfer": True},
                                {"results": [T((2,)), TokenType()]})


def all_to_all_same_dimension():
    """all_to_all of a 4-vector with split = concat = 0, split_count 2, two
    replicas, result 4-vector.  v1.20: the exceptions apply only when the
    dimensions differ, so type(result) = type(operand): valid.  Seed: dim 0
    must be 4/2 = 2 and 4*2 = 8 at once: broken."""
    return OPS["all_to_all"].instance(
        {"operands": [T((4,), SI32)]},
        {"split_dimension": 0, "concat_dimension": 0, "split_count": 2, "replica_groups": ((0, 1),),
         "channel_id": 0},
        {"results": [T((4,), SI32)]}, grid=Grid(2, 1))


# (op, seed clause) -> (witness, the seed's verdict "holds", v1.20's verdict "holds"), both by hand
WITNESSES = {
    ("reduce", 2): (reduce_widening, False, True),
    ("reduce", 6): (reduce_widening, False, True),
    ("reduce_scatter", 7): (reduce_scatter_widening, False, True),
    ("reduce_scatter", 8): (reduce_scatter_widening, False, True),
    ("reduce_window", 13): (reduce_window_widening, False, True),
    ("reduce_window", 16): (reduce_window_widening, False, True),
    ("scatter", 15): (scatter_widening, False, True),
    ("scatter", 16): (scatter_widening, False, True),
    ("select_and_scatter", 11): (select_and_scatter_widening, False, True),
    ("select_and_scatter", 12): (select_and_scatter_widening, False, True),
    ("transpose", 3): (transpose_rotation, False, True),
    ("triangular_solve", 3): (triangular_solve_batches, False, True),
    ("recv", 1): (recv_from_host, True, False),
    ("all_to_all", 9): (all_to_all_same_dimension, False, True),
}


def test_every_changed_row_has_a_witness():
    changed = {(e.op, e.seed) for e in vmap.MAP if e.how == vmap.CHANGED}
    assert changed == set(WITNESSES)


@pytest.mark.parametrize("key", sorted(WITNESSES), ids=lambda k: f"{k[0]}_c{k[1]}")
def test_changed_rows_follow_the_stated_reading(key):
    """The witness separates the readings (the row is a change), and the
    encoded function decides it as the row's `follows` says."""
    make, seed_holds, v1_20_holds = WITNESSES[key]
    assert seed_holds != v1_20_holds
    row = vmap.seed_entry(*key)
    broken = OPS[key[0]].violated(make())
    # the witness breaks nothing but changed clauses (an error in a rule reads as broken: none may hide here)
    assert set(broken) <= {e.label for e in vmap.entries(key[0]) if e.how == vmap.CHANGED}, broken
    holds = row.label not in broken
    assert holds == (seed_holds if row.follows == "seed" else v1_20_holds), (row.label, row.follows)


def test_the_stored_v1_20_text_is_stablehlo_v1_20_0s():
    """The copy in spec/seed/v1.20/ is the file the project was given
    (../shared/upstream-1.20/spec.md, StableHLO v1.20.0): its digest, and its
    bytes where that folder is present."""
    import hashlib
    data = vt.V1_20_SPEC.read_bytes()
    assert hashlib.sha256(data).hexdigest() == "f3ccca65c98e6e870f98deacd4feb69fa69c6c78b790410fbb058f3d1efa146c"
    given = Path(__file__).resolve().parents[3] / "shared" / "upstream-1.20" / "spec.md"
    assert not given.is_file() or given.read_bytes() == data
