"""The seed → StableHLO v1.20.0 map: what every `(C<N>)` of the seed's 95 ops
became in v1.20's spec.md, and which of v1.20's clauses of those ops are new.

The project encodes the seed's constraints (`<op>_c<N>`, 311 of them:
seed 000's sections with the RFC's, seed 004, replacing tan, custom_call and
the multi-operand all_gather/all_reduce/all_to_all — spec/traceability.py);
v1.20 states 362 for the same 95 ops, numbered afresh where clauses were
inserted (quantization, batching dims, dot_general's algorithm, send/recv's
`source_target_pairs`).  This table says, for each seed clause, which v1.20
clause(s) it became and how, so an invalid case named `gather_c11` can be
read as v1.20's C20, and what v1.20 adds that no seed clause covers.

How, one word per seed clause (`Entry.how`):

* `same` — the same number, the same meaning;
* `renumbered` — the same meaning under another number, or split over
  several clauses (gather's C6 "unique and sorted" is v1.20's C6 and C7);
* `changed` — the meaning differs (`why` says how; `follows` which reading
  the encoded function takes: "seed" or "v1.20");
* `merged` — several seed clauses became one v1.20 clause (each of them an
  entry naming it);
* `dropped` — no v1.20 clause states it (`why`: what happened to it);

and for every v1.20 clause no seed clause became, `new` (`area`, `why`: a
one-line summary).

"The same meaning" is judged on what the seed can write: two clauses mean
the same when they decide alike on every program of the seed's types and
attributes that satisfies the op's other constraints.  So v1.20's
`baseline_type` for the seed's "have the same type" is the same meaning —
it differs only on quantized tensors, which the seed has none of, and
`why` says so; a clause v1.20 extends by batching dims (empty on every seed
program) is the same; a clause whose bound is restated through another
clause (gather's C7 bounds by `size(slice_sizes)`, v1.20's C8 by
`rank(operand)`, equal by C11/C20) is the same meaning, with the remark
that alone the two differ.  `changed` is kept for clauses that decide some
seed program differently (transpose's C3, the promotions of reduce-like
bodies, recv's channel type, triangular_solve's batch dims, all_to_all's
C9 with split = concat).

`by` says how a verdict was reached: "text" where the two clauses
normalise alike (spec.v1_20_text.normalise: formatting only, no words —
tests re-derive every one), "reading" where a person read both (every
`changed`, `merged`, `dropped`, `new`, and every `same`/`renumbered`
whose words differ).  `doubt` marks readings that rest on taking one side
of the text as a slip.

Which of the `new` clauses the code already encodes is not stated here but
read from the op declarations (`encoded_v1_20`): `OpSpec.later` (gather's
and scatter's batching clauses) and the `(v1.20 C<N>)` functions of
`OpSpec.quantization.constraints` (add, convolution, dot_general), so the
count moves as op modules grow.  `render()` is check-spec's summary line.

Floor 1: data, and the op registry read for the encoded clauses.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

SAME, RENUMBERED, CHANGED, MERGED, DROPPED, NEW = "same", "renumbered", "changed", "merged", "dropped", "new"
HOWS = (SAME, RENUMBERED, CHANGED, MERGED, DROPPED, NEW)
TEXT, READING = "text", "reading"


@dataclass(frozen=True)
class Entry:
    """One row: a seed clause and what it became, or a new v1.20 clause."""

    op: str
    seed: int | None             # the seed's (C<N>); None for `new`
    v1_20: tuple[int, ...]       # the v1.20 (C<N>) it became (empty: dropped); `new`: the clause itself
    how: str
    why: str = ""                # changed: how; merged/dropped: the reason; new: a summary; same/renumbered: remark
    by: str = READING
    follows: str = ""            # changed, dropped: the reading the encoded function takes ("seed" / "v1.20")
    doubt: str = ""              # why this reading may be wrong
    area: str = ""               # new: what the clause is about ("quantized", "batching dims", …)

    @property
    def label(self) -> str | None:
        """The seed's function name, `<op>_c<N>` (None for `new`)."""
        return None if self.seed is None else f"{self.op}_c{self.seed}"


# Remarks shared by many rows.
WORDS = "the seed's words in v1.20's notation"
BASE_T = "baseline_type: a quantized pair may differ in scales and zero points; type equality on the seed's types"
BASE_ET = ("baseline_element_type: quantized tensors compare without scales and zero points; "
           "element type equality on the seed's types")
NON_Q = "now under \"if the operation uses non-quantized tensors\""
PER_AXIS = ("a per-axis quantized result may differ in quantization parameters; "
            "element type equality otherwise")
BATCHING = "batching dims (empty on every seed program)"
PROMOTE = ("v1.20 lets the body's element type E be promoted from the operand's (is_promotable: same kind, "
           "no narrower) and gives the result E; the seed demands E = element_type(operand)")
SOURCE_TARGET = "source_target_pairs"
PERMUTE_RULE = "collective_permute's C1-C4 in the same words, evaluated by its functions"
PERMUTE_N = ("the section does not say when each strategy is used: read as collective_permute's, channel_id > 0 "
             "cross_partition")


def same(n, why=WORDS, by=READING, doubt=""):
    return (n, (n,), SAME, why, by, "", doubt, "")


def ren(n, to, why=WORDS, by=READING, doubt=""):
    return (n, to if isinstance(to, tuple) else (to,), RENUMBERED, why, by, "", doubt, "")


def changed(n, to, why, follows, doubt=""):
    return (n, to if isinstance(to, tuple) else (to,), CHANGED, why, READING, follows, doubt, "")


def merged(n, to, why, by=READING):
    return (n, (to,), MERGED, why, by, "", "", "")


def dropped(n, why, follows, doubt=""):
    return (n, (), DROPPED, why, READING, follows, doubt, "")


def new(n, area, why):
    return (None, (n,), NEW, why, READING, "", "", area)


def text(n, to=None):
    """A row derived mechanically: the two clauses normalise alike."""
    to = n if to is None else to
    return same(n, "", TEXT) if to == n else ren(n, to, "", TEXT)


def _unary_same_type(*ops):
    return {op: (same(1, BASE_T),) for op in ops}


def _bitwise_same_type(*ops):
    return {op: (same(1, "type equality (integer and boolean ops: no quantized tensors)"),) for op in ops}


_QUANT = "quantized"
_PER_AXIS = "quantized per-axis"
_BATCH = "batching dims"
_ALGO = "dot algorithm"
_TOKENS = "tokens"

_TABLE: dict[str, tuple] = {
    "abs": (same(1), same(2, "complex_element_type for complex operands, " + BASE_ET)),
    "add": (same(1, "type equality, " + NON_Q),
            new(2, _QUANT, "lhs, rhs and result are all quantized"),
            new(3, _QUANT, "storage_type(lhs) = storage_type(rhs) = storage_type(result)"),
            new(4, _QUANT, "expressed_type(lhs) = expressed_type(rhs) = expressed_type(result)"),
            new(5, _PER_AXIS, "the result is per-axis quantized iff lhs or rhs is"),
            new(6, _PER_AXIS, "a per-axis lhs has the result's quantization dimension"),
            new(7, _PER_AXIS, "a per-axis rhs has the result's quantization dimension")),
    "after_all": (),
    "all_gather": tuple(text(n) for n in range(1, 7)),
    "all_reduce": tuple(text(n) for n in range(1, 8)),
    "all_to_all": tuple(text(n) for n in range(1, 9)) + (
        changed(9, 9, "v1.20 applies the two exceptions only if split_dimension != concat_dimension: with them "
                      "equal the result keeps the operand's type, where the seed's exceptions contradict each other "
                      "(dim / split_count and dim * split_count at once) unless the size is 0 or split_count 1",
                follows="v1.20"),),
    "atan2": (same(1, BASE_T),),
    "batch_norm_grad": (text(1), same(2, BASE_ET), text(3), text(4), text(5)),
    "batch_norm_inference": (text(1), same(2, BASE_ET), text(3), text(4), text(5), text(6), same(7, BASE_T)),
    "batch_norm_training": (text(1), same(2, BASE_ET), text(3), text(4), text(5), text(6), same(7, BASE_T)),
    "bitcast_convert": (
        same(1, "quantized tensors read by their storage types; `dim(result, R) * num_bits(E') = num_bits(E)` for "
                "`dim(result, R) = num_bits(E)/num_bits(E')` (bit widths are powers of two: alike)",
             doubt="in the rank-reducing case v1.20 writes dim(result, i) = dim(operand, i) for 0 <= i < R, where "
                   "result has rank R - 1: read as i < R - 1, the seed's [0, R-1)"),
        same(2)),
    "broadcast_in_dim": (same(1, PER_AXIS), text(2), same(3), same(4), same(5),
                         new(6, _PER_AXIS, "a per-axis result is quantized along broadcast_dimensions[the operand's "
                                           "quantization dimension]; a size-1 quantized axis repeats its scale and "
                                           "zero point")),
    "case": (same(1), same(2), same(3), same(4)),
    "cholesky": (same(1, BASE_T), same(2), text(3)),
    "clamp": (same(1), same(2), same(3, BASE_ET), same(4, BASE_T)),
    "collective_permute": (text(1), same(2), same(3), same(4), text(5)),
    "compare": (same(1, BASE_ET), same(2), same(3)),
    "complex": (same(1), text(2), same(3)),
    "custom_call": (),
    "concatenate": (same(1), same(2), same(3), text(4), same(5), same(6)),
    "constant": (same(1),),
    "convert": (same(1),),
    "convolution": (
        text(1),
        merged(2, 27, "with C27: v1.20's C27 states element_type(lhs) = element_type(rhs) = element_type(result), "
                      + NON_Q),
        text(3, 2), ren(4, 3), ren(5, 4, "`shape(padding) = [N - 2, 2]`"), text(6, 5), ren(7, 6), text(8, 7),
        ren(9, 8), text(10, 9), text(11, 10), text(12, 11), text(13, 12), ren(14, 13),
        ren(15, 14, WORDS + " (the seed's unclosed parenthesis closed)"), text(16, 15), text(17, 16),
        text(18, 17), ren(19, 18), text(20, 19), ren(21, 20), ren(22, 21), ren(23, 22), text(24, 23),
        text(25, 24), ren(26, 25, "the same result shape; v1.20 names the empty-window test is_empty_window"),
        merged(27, 27, "with C2 (see there)"), text(28, 26),
        new(28, _QUANT, "is_quantized(lhs) = is_quantized(result) and is_quantized(rhs)"),
        new(29, _PER_AXIS, "a per-axis rhs is quantized along kernel_output_feature_dimension"),
        new(30, _PER_AXIS, "a per-axis result is quantized along output_feature_dimension"),
        new(31, _QUANT, "quantized lhs: storage_type(lhs) = storage_type(rhs)"),
        new(32, _QUANT, "quantized lhs: expressed_type(lhs) = expressed_type(rhs) = expressed_type(result)"),
        new(33, _QUANT, "quantized lhs: a per-tensor rhs gives a per-tensor result"),
        new(34, _QUANT, "hybrid (float lhs, quantized rhs): element_type(lhs) = expressed_type(rhs) = "
                        "element_type(result)")),
    "dot_general": (
        ren(1, 13, "element type equality, " + NON_Q),
        text(2, 1), text(3, 2), ren(4, 3), ren(5, 4), ren(6, 5), ren(7, 6),
        ren(8, 7, WORDS + " (the seed quantifies over i and indexes with d)"),
        ren(9, 8, WORDS + " (the seed quantifies over i and indexes with d)"), ren(10, 9), ren(11, 10),
        text(12, 11), text(13, 12),
        new(14, _QUANT, "is_quantized(lhs) = is_quantized(result) and is_quantized(rhs)"),
        new(15, _QUANT, "zero_points(rhs) = 0"),
        new(16, _PER_AXIS, "a per-axis rhs is not quantized along a contracting dimension"),
        new(17, _QUANT, "quantized lhs: storage_type(lhs) = storage_type(rhs)"),
        new(18, _QUANT, "quantized lhs: expressed_type(lhs) = expressed_type(rhs) = expressed_type(result)"),
        new(19, _QUANT, "quantized lhs: a per-tensor rhs gives a per-tensor result"),
        new(20, _QUANT, "hybrid (float lhs, quantized rhs): element_type(lhs) = expressed_type(rhs) = "
                        "element_type(result)"),
        new(21, _ALGO, "with a non-empty algorithm (lhs/rhs precision types, accumulation type, component counts, "
                       "num_primitive_operations), precision_config is DEFAULT (dot_general_c21; an absent "
                       "precision_config read as [DEFAULT, DEFAULT])"),
        new(22, _ALGO, "with a non-empty algorithm, 0 < lhs_component_count (dot_general_c22)"),
        new(23, _ALGO, "with a non-empty algorithm, 0 < rhs_component_count (dot_general_c23)"),
        new(24, _ALGO, "with a non-empty algorithm, 0 < num_primitive_operations (dot_general_c24)")),
    "dynamic_slice": (same(1), text(2), same(3), same(4), text(5)),
    "dynamic_update_slice": (same(1), text(2), text(3), text(4), same(5), same(6)),
    "fft": (same(1), text(2), text(3), same(4, "dims(real) written shape(real)"), same(5)),
    "gather": (
        same(1, "+ size(operand_batching_dims): " + BATCHING),
        text(2), text(3), same(4), same(5),
        ren(6, (6, 7), "split: uniqueness into C6, which adds operand_batching_dims (" + BATCHING + "), "
                       "sortedness into C7"),
        ren(7, 8, "bounded by rank(operand) instead of size(slice_sizes): equal by C11 (v1.20 C20), so the op's "
                  "validity is the same; alone the two clauses differ"),
        ren(8, 9), ren(9, 18, "start_index_map unique together with operand_batching_dims (" + BATCHING + ")"),
        ren(10, 19), text(11, 20), ren(12, 21),
        ren(13, 22, "offset_dim_sizes also leave out operand_batching_dims (" + BATCHING + "); the seed's "
                    "`shape(slice_sizes)` read as slice_sizes"),
        ren(15, 23),
        new(10, _BATCH, "operand_batching_dims sorted"),
        new(11, _BATCH, "0 <= operand_batching_dims < rank(operand)"),
        new(12, _BATCH, "slice_sizes at operand_batching_dims <= 1"),
        new(13, _BATCH, "start_indices_batching_dims unique"),
        new(14, _BATCH, "0 <= start_indices_batching_dims < rank(start_indices)"),
        new(15, _BATCH, "index_vector_dim not among start_indices_batching_dims"),
        new(16, _BATCH, "as many operand_batching_dims as start_indices_batching_dims"),
        new(17, _BATCH, "paired batching dims of operand and start_indices have equal sizes")),
    "get_dimension_size": (text(1),),
    "get_tuple_element": (text(1), same(2)),
    "if": (same(1), same(2), same(3)),
    "imag": (text(1), same(2, "complex_element_type if complex, else element_type: alike on the types the op takes")),
    "infeed": (same(1), ren(2, 3),
               new(2, _TOKENS, "every result but the last is a tensor (a token among the payload is invalid: "
                               "infeed_c3); the seed's value case \"a token among the payload\" became its "
                               "invalid case, as StableHLO's verifier read it all along")),
    "iota": (text(1),),
    "is_finite": (same(1),),
    "map": (same(1), same(2), same(3), same(4)),
    "optimization_barrier": (
        merged(1, 1, "with C2 into `type(operand...) = type(result...)` (a list equality counts the members)"),
        merged(2, 1, "with C1 (see there)")),
    "outfeed": (),
    "pad": (same(1), same(2), same(3),
            same(4, "v1.20 states the result shape by the same formula; its non-negativity, the seed's words, is "
                    "implicit (a dimension size is never negative)")),
    "partition_id": (),
    "real": (text(1), same(2, "complex_element_type if complex, else element_type: alike on the types the op takes")),
    "recv": (
        changed(1, 5, "with is_host_transfer = true v1.20 demands DEVICE_TO_HOST (send's rule, and its Inputs row "
                      "lists DEVICE_TO_HOST), the seed HOST_TO_DEVICE", follows="seed",
                doubt="v1.20's recv C5 and I3 read as copied from send: a recv from the host is HOST_TO_DEVICE "
                      "(xla_data.proto; openxla/stablehlo#579), and its Outputs row still points at (C2-C4), "
                      "now the source_target_pairs clauses"),
        dropped(2, "no v1.20 clause says results is non-empty: its C1-C4 are source_target_pairs clauses and "
                   "only the Semantics (payload first, a token last) keep the rule", follows="seed",
                doubt="lost when source_target_pairs' C1-C4 were inserted (the Outputs row still cites C2-C4)"),
        dropped(3, "no v1.20 clause says the last result is a token (the Semantics still do)", follows="seed",
                doubt="as C2"),
        new(1, SOURCE_TARGET, "dim(source_target_pairs, 1) = 2 (recv_c4: " + PERMUTE_RULE + ")"),
        new(2, SOURCE_TARGET, "sources unique (recv_c5)"),
        new(3, SOURCE_TARGET, "targets unique (recv_c6)"),
        new(4, SOURCE_TARGET, "0 <= source_target_pairs < num_replicas (cross_replica) or num_partitions (recv_c7; "
                              + PERMUTE_N + ")")),
    "reduce": (
        same(1),
        changed(2, (2, 8), "results leave the equality: v1.20's C2 equates inputs and init_values only, C8 gives "
                           "results[i] the body's element type Ei (promotable from the inputs')", follows="v1.20"),
        same(3), same(4, WORDS + " (the seed's rank(inputs[0][d]) read as rank(inputs[0]))"), same(5),
        changed(6, 6, PROMOTE, follows="v1.20"), same(7)),
    "reduce_precision": (same(1, BASE_T), same(2), same(3)),
    "reduce_scatter": (
        text(1), same(2), same(3), same(4), same(5), text(6),
        changed(7, 7, PROMOTE, follows="v1.20"),
        changed(8, (8, 9), "split into the shape (C8) and element_type(result) = E, the computation's (C9): "
                           "promotable from the operand's", follows="v1.20")),
    "reduce_window": (
        same(1), same(2), same(3), text(4), same(5), text(6), same(7), text(8), same(9), text(10), same(11),
        same(12, "`shape(padding) = [rank(inputs[0]), 2]`"),
        changed(13, 13, PROMOTE + " (the seed's Ek = element_type(inputs[0]) read as inputs[k], as v1.20 writes)",
                follows="v1.20"),
        same(14),
        same(15, "v1.20 drops the seed's window_dimensions = 0 case of dilated_window_shape, which C5 excludes"),
        changed(16, 16, "element_type(results[i]) = Ei, the body's (promotable from the inputs'), where the seed "
                        "demands the init value's", follows="v1.20")),
    "remainder": (same(1, BASE_T),),
    "replica_id": (),
    "reshape": (same(1, "a per-axis quantized result may change the quantization dimension; element type equality "
                        "otherwise"), same(2),
                new(3, _PER_AXIS, "a per-axis operand keeps its quantized axis' size and the products of the sizes "
                                  "before and after it")),
    "reverse": (same(1), same(2), same(3)),
    "rng": (same(1), same(2, "v1.20 writes is_float(a): with C1 the same; alone it no longer repeats C1's "
                             "equality"), text(3)),
    "rng_bit_generator": (text(1), same(2)),
    "scatter": (
        same(1), same(2, "+ size(input_batching_dims): " + BATCHING), same(3),
        same(4, "update_window_dim_sizes also leave out input_batching_dims (" + BATCHING + ")"),
        same(5), same(6), same(7), same(8),
        ren(9, (9, 10), "split: uniqueness into C9, which adds input_batching_dims (" + BATCHING + "), sortedness "
                        "into C10"),
        ren(10, 11), text(11, 19),
        ren(12, 20, "scatter_dims_to_operand_dims unique together with input_batching_dims (" + BATCHING + ")"),
        ren(13, 21), text(14, 22),
        changed(15, 23, PROMOTE, follows="v1.20"),
        changed(16, (24, 25), "split into shape equality (C24) and element_type(results[i]) = Ei, the "
                              "update_computation's (C25): promotable from the inputs'", follows="v1.20"),
        new(12, _BATCH, "input_batching_dims sorted"),
        new(13, _BATCH, "0 <= input_batching_dims < rank(inputs[0])"),
        new(14, _BATCH, "scatter_indices_batching_dims unique"),
        new(15, _BATCH, "0 <= scatter_indices_batching_dims < rank(scatter_indices)"),
        new(16, _BATCH, "index_vector_dim not among scatter_indices_batching_dims"),
        new(17, _BATCH, "as many input_batching_dims as scatter_indices_batching_dims"),
        new(18, _BATCH, "paired batching dims of inputs and scatter_indices have equal sizes")),
    "select": (same(1), same(2, BASE_T)),
    "select_and_scatter": (
        merged(1, 4, "with C5: the seed states rank(operand) = size(window_dimensions) twice"),
        ren(2, 1), ren(3, 2, "the same source shape; v1.20 names the empty-window test is_empty_window"),
        text(4, 3), merged(5, 4, "with C1 (see there)", by=TEXT), ren(6, 5), text(7, 6), ren(8, 7),
        ren(9, 8, "`shape(padding) = [rank(operand), 2]`"), text(10, 9),
        changed(11, 10, PROMOTE, follows="v1.20"),
        changed(12, (11, 12), "split into shape equality (C11) and element_type(result) = E, the scatter "
                              "region's (C12): promotable from the operand's", follows="v1.20")),
    "send": (ren(1, 5),
             new(1, SOURCE_TARGET, "dim(source_target_pairs, 1) = 2 (send_c2: " + PERMUTE_RULE + ")"),
             new(2, SOURCE_TARGET, "sources unique (send_c3)"),
             new(3, SOURCE_TARGET, "targets unique (send_c4)"),
             new(4, SOURCE_TARGET, "0 <= source_target_pairs < num_replicas (cross_replica) or num_partitions "
                                   "(send_c5; " + PERMUTE_N + ")")),
    "slice": (same(1), text(2), same(3), same(4), same(5, WORDS + " (the seed's stride[d] read as strides[d])")),
    "sort": (same(1), same(2), same(3), same(4), same(5)),
    "tan": (text(1),),
    "transpose": (
        same(1, "a per-axis quantized result may change the quantization dimension; element type equality "
                "otherwise"),
        same(2),
        changed(3, 3, "v1.20: dim(result, d) = dim(operand, permutation[d]); the seed: dim(result, permutation[i]) "
                      "= dim(operand, i) — they differ for a permutation that is not an involution ([1, 2, 0])",
                follows="v1.20"),
        new(4, _PER_AXIS, "a per-axis result: quantization_dimension(operand) = "
                          "permutation(quantization_dimension(result))")),
    "triangular_solve": (
        same(1, BASE_ET), same(2),
        changed(3, 3, "v1.20 equates shape(a)[:-3] and shape(b)[:-3], leaving batch dim R-3 free; the seed equates "
                      "every batch dim [0, R-3]", follows="seed",
                doubt="v1.20's [:-3] read as a slip for [:-2]: its Semantics index a and b by the same i0..iR-3"),
        same(4, BASE_T)),
    "tuple": (merged(1, 1, "with C2 into `result` has type tuple<E0, ..., EN-1>, Ei = type(val[i])"),
              merged(2, 1, "with C1 (see there)")),
    "while": (text(1), text(2), same(3)),
}
_TABLE.update(_unary_same_type(
    "cbrt", "ceil", "cosine", "divide", "exponential", "exponential_minus_one", "floor", "log", "log_plus_one",
    "logistic", "maximum", "minimum", "multiply", "negate", "power", "round_nearest_afz", "round_nearest_even",
    "rsqrt", "sign", "sine", "sqrt", "subtract", "tanh"))
_TABLE.update(_bitwise_same_type(
    "and", "count_leading_zeros", "not", "or", "popcnt", "shift_left", "shift_right_arithmetic",
    "shift_right_logical", "xor"))

MAP: tuple[Entry, ...] = tuple(Entry(op, *row) for op in sorted(_TABLE) for row in _TABLE[op])

# v1.20's number of (C<N>) per op: the highest clause the table reaches (tests hold it to the text).
V1_20_COUNT: dict[str, int] = {op: max((n for e in MAP if e.op == op for n in e.v1_20), default=0)
                               for op in sorted(_TABLE)}


def entries(op: str | None = None) -> tuple[Entry, ...]:
    return MAP if op is None else tuple(e for e in MAP if e.op == op)


def seed_entry(op: str, n: int) -> Entry:
    """The row of the seed's `<op>_c<n>` (KeyError when the map lacks it)."""
    for e in MAP:
        if e.op == op and e.seed == n:
            return e
    raise KeyError(f"{op}_c{n}")


def reached() -> dict[str, set[int]]:
    """{op: the v1.20 clause numbers some row names}."""
    out: dict[str, set[int]] = {op: set() for op in _TABLE}
    for e in MAP:
        out[e.op].update(e.v1_20)
    return out


def v1_20_of(label: str) -> tuple[int, ...]:
    """The v1.20 clause numbers a seed function name became: "gather_c11" → (20,)."""
    op, n = label.rsplit("_c", 1)
    return seed_entry(op, int(n)).v1_20


# A function or a later clause naming a v1.20 clause: "(v1.20 C14)" (quantization constraints) or
# "v1.20 C6" (OpSpec.later).
_CLAIM = re.compile(r"^\s*\(?v1\.20\s+\(?C(\d+)\b")


def _claim(text: str) -> int | None:
    m = _CLAIM.match(text or "")
    return int(m.group(1)) if m else None


def encoded_v1_20(ops: dict | None = None) -> dict[tuple[str, int], str]:
    """{(op, v1.20 number): the encoding function's label} for the v1.20
    clauses the op declarations encode beyond the seed's: `OpSpec.later`
    ("v1.20 C<N>") and the functions of `OpSpec.quantization.constraints`
    whose docstring starts "(v1.20 C<N>)"."""
    if ops is None:
        from .ops import OPS as ops
    out: dict[tuple[str, int], str] = {}
    for name, spec in ops.items():
        for label, clause in getattr(spec, "later", ()) or ():
            n = _claim(clause)
            if n is not None:
                out[(name, n)] = label
        q = getattr(spec, "quantization", None)
        for fn in (q.constraints if q is not None else ()):
            n = _claim(fn.__doc__ or "")
            if n is not None:
                out[(name, n)] = fn.__name__
    return out


def totals(ops: dict | None = None) -> dict[str, int]:
    """Rows per `how`, and the `new` clauses split by whether the op
    declarations already encode them (`encoded_v1_20`)."""
    count = Counter(e.how for e in MAP)
    enc = encoded_v1_20(ops)
    new = [e for e in MAP if e.how == NEW]
    done = sum((e.op, e.v1_20[0]) in enc for e in new)
    out = {h: count.get(h, 0) for h in HOWS}
    out.update(seed=sum(1 for e in MAP if e.seed is not None), v1_20=sum(V1_20_COUNT.values()),
               new_encoded=done, new_not_encoded=len(new) - done)
    return out


def not_encoded(ops: dict | None = None) -> dict[str, list[Entry]]:
    """{op: its `new` rows no declaration encodes yet}."""
    enc = encoded_v1_20(ops)
    out: dict[str, list[Entry]] = {}
    for e in MAP:
        if e.how == NEW and (e.op, e.v1_20[0]) not in enc:
            out.setdefault(e.op, []).append(e)
    return out


def render(ops: dict | None = None) -> str:
    """check-spec's summary of the map, one line."""
    t = totals(ops)
    return (f"seed -> v1.20 map: {t['seed']} seed constraints -> {t['v1_20']} v1.20 constraints of the same ops: "
            f"{t[SAME]} same, {t[RENUMBERED]} renumbered, {t[CHANGED]} changed, {t[MERGED]} merged, "
            f"{t[DROPPED]} dropped; {t[NEW]} new ({t['new_encoded']} encoded, {t['new_not_encoded']} not yet)\n")
