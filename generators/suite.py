"""The suite writer: every op, every skeleton, solved shapes × value sets — one pipeline.

Per op (sorted) the generator draws from its own numpy Generator seeded by
(seed, op name), so a suite for a subset of ops holds the same cases as the
full suite for those ops, and the same seed gives byte-identical files.

One path for every op (`op_cases`); what differs between element-wise ops
and ops with structure is declared in a `Plan`:

* element-wise ops (`ELEMENTWISE`): per skeleton, one case of special values
  on purpose — all input combinations when there are at most 256 (8-bit
  float unary ops, 4-bit binary ops, booleans), else a grid of the specials
  crossed between operands — and random cases of solved shapes, together
  at least `VALUE_CASES_PER_DTYPE` per principal element type;
* ops that move data (`STRUCTURED`): per principal element type,
  `CASES_PER_DTYPE` solved random structures over a seeded rotation of up
  to `SKELETONS_PER_DTYPE` skeletons (so flags and bodies vary across the
  types), plus one out-of-bounds case where the op declares index operands;
  then the op's corners (generic ones and its `Exercise.corners`).

Values come from `values` (special values the op declares included) and,
for index operands, `indices`.  Then up to `INVALID_PER_CONSTRAINT` invalid
cases per constraint (negative.py); a constraint no kept invalid case names
is reported in the manifest.
"""
from __future__ import annotations

import dataclasses
import itertools
import json
import math
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from ..spec.dsl import OpSpec
from ..spec.added import ADDED
from ..spec.ops import OPS
from ..suites.io import write_suite
from ..oracle.host import Host, session
from ..spec.types import TensorType
from ..spec.grid import Grid
from ..suites.records import Case, GridData, HostData, TensorValue, case_id, tensor_type_of
from . import (attribute_widths, corners, emit, expect, host_pairs, indices, negative, quantized, quantized_host, solve, v1_20_collectives,
               v1_20_ops, v1_20_types, values)
from .skeleton import Skeleton, draw_ranks, enumerate_skeletons

GENERATOR_VERSION = "1"
SUITE_VERSION = "0.1.0"
SPEC_SOURCE = "000_5ae4585f266cf299.txt + 004_6ddba65058e4afdd.txt (tan)"
VALUE_CASES_PER_DTYPE = 4     # element-wise: random-shape cases per principal dtype, spread over its skeletons
INVALID_PER_CONSTRAINT = 2
ZERO_DIM_PROB = 0.04
SKELETONS_PER_DTYPE = 3       # ops that move data: skeletons drawn per principal element type,
CASES_PER_DTYPE = 3           # and solved random cases over them
STRUCTURED_ZERO_DIM_PROB = 0.12


def op_rng(seed: int, op: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(op.encode())])


def _present(spec: OpSpec, skel: Skeleton) -> set[str]:
    """Attributes the program writes: all but the optional ones the skeleton leaves out."""
    chosen = skel.attr_dict
    return {a.name for a in spec.attributes if not (a.name in chosen and chosen[a.name] is None)}


def _oracle_expectations(spec, inst, mlir, arrays):
    return expect.expected_outputs(mlir, arrays)


def _case(spec, skel, inst, arrays, kind, seed, note, expect_fn, violates=None, constants=None,
          omit: tuple = ()) -> Case | None:
    """One case; None where the spec states no result at all (e.g. complex
    remainder, "TBD" in the seed), so there is nothing to expect.
    `arrays`: @main's arguments; `constants`: values of operands written as
    attributes (constant's `value`)."""
    mlir = emit.program(spec, inst, _present(spec, skel) - set(omit), constants)
    tvs = [TensorValue.of(a, t) for a, t in zip(arrays, emit.operand_types(spec, inst, arguments_only=True))]
    dtype = skel.dtype(spec)
    reason = spec.exercise.survey_when(inst) if kind == "value" and spec.exercise.survey_when else None
    if reason:   # the op's result as a whole is the implementation's choice here: reported, not scored
        kind, note = "survey", f"{note}; {reason}"
    grid = getattr(inst, "grid", None)
    if isinstance(grid, Grid) and grid.size > 1:   # solved on a process grid (collectives): every process
        return _grid_case(spec, inst, grid, with_grid(mlir, grid), arrays, dtype, kind, seed, note, expect_fn,
                          violates)
    try:
        expected = expect_fn(spec, inst, mlir, arrays) if kind in ("value", "survey") else []
    except expect.Unspecified:
        return None
    if kind == "invalid" and expect_fn is _oracle_expectations and not expect.rejects_for(mlir, violates):
        # The program text cannot say what the instance meant: scatter's operands
        # are split into equal halves, so unequal input/update counts (C5) read as
        # another program.  Such a case would not test its constraint.
        return None
    return Case(id=case_id(spec.mnemonic, dtype, mlir, tvs, salt=kind), op=spec.mnemonic, dtype=dtype,
                kind=kind, mlir=mlir, inputs=tvs, expected=expected, violates=violates, note=note,
                provenance={"seed": seed, "section": spec.mnemonic, "generator": GENERATOR_VERSION})


def with_grid(mlir: str, grid: Grid) -> str:
    """The program as a module stating its grid (`mhlo.num_replicas`,
    `mhlo.num_partitions`: as JAX and XLA write them, and as the oracle's
    reader and `run` read them)."""
    return (f"module attributes {{mhlo.num_partitions = {grid.num_partitions} : i32, "
            f"mhlo.num_replicas = {grid.num_replicas} : i32}} {{\n{mlir}}}\n")


def _grid_case(spec, inst, grid: Grid, mlir: str, arrays, dtype, kind, seed, note, expect_fn, violates) -> Case | None:
    """A case on a process grid (`suites.records.GridData`): process 0
    takes the drawn `arrays`, every other process its own, drawn from a
    generator of the program's own (seed, program text) — so the op's
    stream, and every other case of the suite, is the same as before grids
    existed; the oracle runs the whole grid (oracle/grid.py) for each
    process's expectations.  An invalid case carries the grid alone."""
    arg_types = emit.operand_types(spec, inst, arguments_only=True)
    tv = lambda xs: [TensorValue.of(a, t) for a, t in zip(xs, arg_types)]  # noqa: E731
    if kind == "invalid":
        if expect_fn is _oracle_expectations and not expect.rejects_for(mlir, violates):
            return None
        tvs = tv(arrays)
        return Case(id=case_id(spec.mnemonic, dtype, mlir, tvs, salt=kind), op=spec.mnemonic, dtype=dtype, kind=kind,
                    mlir=mlir, inputs=tvs, violates=violates, note=note, grid=GridData(*_sizes(grid)),
                    provenance={"seed": seed, "section": spec.mnemonic, "generator": GENERATOR_VERSION})
    rng = np.random.default_rng([seed, zlib.crc32(mlir.encode())])
    per = [list(arrays)] + [_values(spec, inst, rng)[0] for _ in range(grid.size - 1)]
    try:
        if expect_fn is _oracle_expectations:
            expected = expect.expected_grid_outputs(mlir, grid, per)
        else:   # a stand-in (tests): per process, as it would for one
            expected = [expect_fn(spec, inst, mlir, a) for a in per]
    except expect.Unspecified:
        return None
    per_tvs = [tv(a) for a in per]
    return Case(id=case_id(spec.mnemonic, dtype, mlir, [v for vs in per_tvs for v in vs], salt=kind),
                op=spec.mnemonic, dtype=dtype, kind=kind, mlir=mlir, inputs=[], expected=[], note=note,
                grid=GridData(*_sizes(grid), per_tvs, expected),
                provenance={"seed": seed, "section": spec.mnemonic, "generator": GENERATOR_VERSION})


def _sizes(grid: Grid) -> tuple[int, int]:
    return grid.num_replicas, grid.num_partitions


def _values(spec, inst, rng, mode: str | None = "in_bounds"):
    """(@main's argument arrays, {constant operand: array}): index operands
    from `indices` (`mode`: in or out of bounds; None: any values, for
    invalid instances), values the op declares for an operand
    (`Exercise.operand_values`), the rest random with special values; tuple
    operands by their leaves; then the values region bodies capture."""
    idx = indices.index_arrays(spec, inst, rng, mode) if mode and spec.exercise.indices else {}
    chosen = spec.exercise.operand_values
    args, consts = [], {}
    for i, o in enumerate(spec.operands):
        members = inst.operands[o.name] if o.variadic else [inst.operands[o.name]]
        for k, t in enumerate(members):
            key = (o.name, k) if o.variadic else o.name
            given = chosen(inst, o.name, k, t, rng) if chosen is not None else None
            if given is not None:   # values the op declares for this operand (reduce's init values)
                given = np.asarray(given).astype(t.element_type.numpy).reshape(t.shape)
                if o.constant or o.literal:
                    consts[o.name] = given
                else:
                    args.append(given)
            elif o.constant or o.literal:
                consts[o.name] = values.fill(t.element_type, t.shape, rng, spec.exercise, i)
            elif key in idx:
                args.append(np.asarray(idx[key]).astype(t.element_type.numpy).reshape(t.shape))
            else:
                args += [values.fill(leaf.element_type, leaf.shape, rng, spec.exercise, i) for leaf in emit.leaves(t)]
    for k, t in enumerate(emit.capture_types(spec, inst)):   # values region bodies read from @main
        args.append(values.fill(t.element_type, t.shape, rng, spec.exercise, len(spec.operands) + k))
    return args, consts


def _try_values(spec, inst, rng, mode: str = "in_bounds"):
    """`_values`, or None where no index of the wanted kind fits the index
    type (e.g. no start past a 40-long axis in a 4-bit type)."""
    try:
        return _values(spec, inst, rng, mode)
    except indices.NoIndices:
        return None


def _unique(cases: list) -> list[Case]:
    """The cases made (None: nothing to expect), each id once, in order."""
    seen, out = set(), []
    for c in cases:
        if c is not None and c.id not in seen:
            seen.add(c.id)
            out.append(c)
    return out


def _special_case(spec: OpSpec, skel: Skeleton, rng):
    """(instance, arrays, note) covering the specials, all operands rank 1 of one length."""
    types = list(skel.operand_types)
    if values.exhaustive_size(types) <= values.EXHAUSTIVE_LIMIT:
        pools = [values.all_patterns(t) for t in types]
        note = "exhaustive: every input combination"
    else:
        pick = values.specials if len(types) == 1 else values.grid_specials
        pools = [pick(t, spec.exercise, i) for i, t in enumerate(types)]
        note = "special values" if len(types) == 1 else "special values grid"
    cols = values.cross(pools, rng)
    n = len(cols[0])

    def fixed_length(sym):
        return [d == n for t in sym.inst.operands.values() for d in t.shape]

    insts = solve.solve_shapes(spec, skel, [1] * len(types), rng, 1, zero_prob=0.0, extra=fixed_length,
                               max_dim=n, max_elements=max(n, solve.MAX_ELEMENTS) * 8)
    if not insts:
        return None
    inst = insts[0]
    arrays = [c.reshape(t.shape) for c, t in zip(cols, emit.operand_types(spec, inst))]
    return inst, arrays, note


# --------------------------------------------------------------------------
# Plans: which cases an op gets
# --------------------------------------------------------------------------

def _each_skeleton(spec: OpSpec, group: list[Skeleton], rng, turn: int) -> list[tuple[Skeleton, str]]:
    """Every skeleton of the element type: its special-values case, then its
    share of `VALUE_CASES_PER_DTYPE` random cases (at least one)."""
    per_skel = max(1, math.ceil(VALUE_CASES_PER_DTYPE / len(group)))
    return [slot for skel in group for slot in [(skel, "special")] + [(skel, "random")] * per_skel]


def _rotation(spec: OpSpec, group: list[Skeleton], rng, turn: int) -> list[tuple[Skeleton, str]]:
    """`CASES_PER_DTYPE` random cases over up to `SKELETONS_PER_DTYPE`
    skeletons, a seeded order rotated by the element type's turn (so flags
    and bodies vary across the types); then one out-of-bounds case where the
    op declares index operands."""
    order = [int(i) for i in rng.permutation(len(group))]
    picks = [group[order[(turn + j) % len(group)]] for j in range(min(SKELETONS_PER_DTYPE, len(group)))]
    slots = [(picks[j % len(picks)], "random") for j in range(CASES_PER_DTYPE)]
    if spec.exercise.indices is not None:
        slots.append((picks[0], "out_of_bounds"))
    return slots


@dataclass(frozen=True)
class Plan:
    """What differs between element-wise ops and ops with structure."""

    slots: Callable          # (spec, skeletons of one element type, rng, turn) -> [(skeleton, slot kind)]
    zero_dim_prob: float     # chance of a zero-sized dimension in a random case
    corners: bool            # solve the generic and declared corners


ELEMENTWISE = Plan(_each_skeleton, ZERO_DIM_PROB, corners=False)
STRUCTURED = Plan(_rotation, STRUCTURED_ZERO_DIM_PROB, corners=True)


def plan_for(spec: OpSpec) -> Plan:
    return STRUCTURED if spec.structured else ELEMENTWISE


def _out_of_bounds_kind(spec: OpSpec) -> str:
    """Indices past the bounds: a verdict case where the spec defines the
    result (`Indices.defined`: clamped or skipped), a `survey` where it
    makes the behaviour implementation-defined — even when the oracle's
    primary value leaves no element open (a scatter update that misses
    every element): such a "behavior" is the op's, and IREE showed it need
    not stay local."""
    return "value" if spec.exercise.indices.defined else "survey"


def _slot_cases(spec, plan: Plan, skel, slot: str, rng, seed, expect_fn) -> list:
    if slot == "special":
        special = _special_case(spec, skel, rng)
        if special is None:
            return []
        inst, arrays, note = special
        return [_case(spec, skel, inst, arrays, "value", seed, note, expect_fn)]
    out_of_bounds = slot == "out_of_bounds"
    out = []
    zero_prob = 0.0 if out_of_bounds else plan.zero_dim_prob
    for inst in solve.solve_for(spec, skel, draw_ranks(spec, skel, rng), rng, 1, zero_prob=zero_prob):
        got = _try_values(spec, inst, rng, "out_of_bounds" if out_of_bounds else "in_bounds")
        if got is None:
            continue
        args, consts = got
        if out_of_bounds:
            out.append(_case(spec, skel, inst, args, _out_of_bounds_kind(spec), seed, "indices out of bounds",
                             expect_fn, constants=consts))
        else:
            out.append(_case(spec, skel, inst, args, "value", seed, "random and special values", expect_fn,
                             constants=consts))
    return out


class _Recorder:
    """The host as generators see it: whatever the op reads is made here
    (random and special values of the type asked for) and queued, so the
    case's host data is exactly what the op reads; writes are the oracle's."""

    def __init__(self, rng):
        self.rng, self.queues, self.touched = rng, Host(), False

    def read(self, stream: str, types) -> list:
        self.touched = True
        out = [values.fill(t.element_type, t.shape, self.rng) for t in types]
        self.queues.queue(stream).extend(out)
        return out

    def write(self, stream: str, arrays) -> None:
        self.touched = True


def _host_expectations(mlir: str, args: list, infeed: list, channels: dict, touched: bool = True):
    """(expected outputs, HostData) of a program run with these queues
    (None where the program never talks to the host: after_all alone)."""
    host = Host(list(infeed), {k: list(v) for k, v in channels.items()})
    with session(host):
        expected = expect.expected_outputs(mlir, args)
    log = [(e.stream, e.value, e.after) for e in host.log]
    tv = lambda a: TensorValue.of(a, tensor_type_of(a))  # noqa: E731
    data = HostData([tv(a) for a in infeed], {k: [tv(a) for a in v] for k, v in channels.items()}, log)
    return expected, (data if touched or infeed or channels or log else None)


def _declared_case(spec: OpSpec, note: str, kind: str, inst, violates, rng, seed) -> Case | None:
    """A case of an op that declares its instances (`SideEffect.cases`: the
    token ops): tokens are made in @main (emit), the host queues hold what
    the op reads (`_Recorder`), the oracle states outputs and the log.
    An invalid instance on a grid of several processes (send/recv's
    source_target_pairs name process ids) is written as a module stating it."""
    mlir = emit.program(spec, inst)
    grid = inst.grid if kind == "invalid" and isinstance(inst.grid, Grid) and inst.grid.size > 1 else None
    if grid is not None:
        mlir = with_grid(mlir, grid)
    args, _ = _values(spec, inst, rng, None)
    arg_types = emit.operand_types(spec, inst, arguments_only=True)
    tvs = [TensorValue.of(a, t) for a, t in zip(args, arg_types)]
    tensors = arg_types + [t for t in emit.result_types(spec, inst) if isinstance(t, TensorType)]
    dtype = tensors[0].element_type.name if tensors else "i1"   # a token op without tensors names i1
    host, expected = None, []
    if kind == "invalid":
        if not expect.rejects_for(mlir, violates):
            return None
    else:
        rec = _Recorder(rng)
        spec.semantics.fn(inst, args, rec)
        try:
            expected, host = _host_expectations(mlir, args, rec.queues.infeed, rec.queues.channels, rec.touched)
        except expect.Unspecified:
            return None
    salt = kind + (json.dumps(host.to_json(), sort_keys=True) if host is not None else "")
    return Case(id=case_id(spec.mnemonic, dtype, mlir, tvs, salt=salt), op=spec.mnemonic, dtype=dtype,
                kind=kind, mlir=mlir, inputs=tvs, expected=expected, violates=violates, note=note,
                provenance={"seed": seed, "section": spec.mnemonic, "generator": GENERATOR_VERSION}, host=host,
                grid=GridData(*_sizes(grid)) if grid is not None else None)


# The case streams of the ops v1.20 added (spec/added/): each yields an op's
# cases or none, from a generator seeded by the op's name, so a stream added
# here changes no other op's cases.
ADDED_STREAMS = (quantized.cases, v1_20_collectives.cases, v1_20_ops.cases,
                 quantized.added_cases,   # issue 34: quantized cases on a declared example, after the rest
                 v1_20_ops.late_cases,    # issue 35: invalid cases for the clauses the first pass missed
                 v1_20_collectives.late_cases)   # async_start's/async_done's cases after the quantized ones


def op_cases(spec: OpSpec, seed: int, expect_fn=None) -> tuple[list[Case], list[str]]:
    """All cases of one op, and the constraints no kept invalid case names."""
    if spec.mnemonic in ADDED:   # not in the seed: no skeletons, its cases are its streams' (ADDED_STREAMS)
        return _with_widths(spec, [c for stream in ADDED_STREAMS for c in stream(spec, seed, expect_fn)]
                            + _appended_cases(spec, [], seed, expect_fn or _oracle_expectations, "appended_last"),
                            seed), []
    declared = getattr(spec.semantics, "cases", None)
    if declared is not None:   # ops that list their instances (the token ops: spec.dsl.SideEffect)
        rng = op_rng(seed, spec.mnemonic)
        unique = _with_widths(spec, [_declared_case(spec, *c, rng, seed) for c in declared(spec, rng)]
                              + quantized_host.cases(spec, seed, _declared_case)    # v1.20's quantized payloads
                              + host_pairs.cases(spec, seed)   # v1.20's source_target_pairs on a grid
                              + _declared_last(spec, seed), seed)   # `Exercise.appended_last`: last
        named = {c.violates for c in unique if c.kind == "invalid"}
        return unique, [label for label in spec.labels if label not in named]
    expect_fn = expect_fn or _oracle_expectations
    plan = plan_for(spec)
    rng = op_rng(seed, spec.mnemonic)
    skels = enumerate_skeletons(spec)
    by_dtype: dict[str, list[Skeleton]] = {}
    for s in skels:
        by_dtype.setdefault(s.dtype(spec), []).append(s)
    cases: list = []
    for turn, group in enumerate(by_dtype.values()):
        for skel, slot in plan.slots(spec, group, rng, turn):
            cases += _slot_cases(spec, plan, skel, slot, rng, seed, expect_fn)
    if plan.corners:
        for note, skel, inst in corners.corner_instances(spec, skels, rng):
            got = _try_values(spec, inst, rng)
            if got is None:
                continue
            args, consts = got
            cases.append(_case(spec, skel, inst, args, "value", seed, note, expect_fn, constants=consts))
    found, _ = negative.violations(spec, rng, INVALID_PER_CONSTRAINT, skels)
    for v in found:
        try:
            args, consts = _values(spec, v.inst, rng)
        except indices.NoIndices:   # an invalid program: any in-range values will do
            args, consts = _values(spec, v.inst, rng, None)
        cases.append(_case(spec, v.skeleton, v.inst, args, "invalid", seed,
                           f"violates {v.label} ({v.strategy})", expect_fn, violates=v.label, constants=consts))
    unique = _with_widths(spec, cases + _elided_cases(spec, skels, seed, expect_fn)
                          + _appended_cases(spec, skels, seed, expect_fn)
                          + _later_cases(spec, skels, seed, expect_fn) + _v1_20_type_cases(spec, skels, seed, expect_fn)
                          + _quantized_cases(spec, skels, seed, expect_fn)
                          + _appended_cases(spec, skels, seed, expect_fn, "appended_last"), seed)
    named = {c.violates for c in unique if c.kind == "invalid"}
    return unique, [label for label in spec.labels if label not in named]


def _with_widths(spec: OpSpec, cases: list, seed: int) -> list:
    """The op's cases, unique, then its attribute-width cases
    (generators/attribute_widths.py), made from its kept value cases: the
    last stream of every op."""
    unique = _unique(cases)
    return _unique(unique + attribute_widths.cases(spec, unique, seed))


def _elided_cases(spec: OpSpec, skels: list[Skeleton], seed: int, expect_fn) -> list:
    """Programs with defaulted attributes left out (`Exercise.elided`): each
    corner solved with those attributes at their defaults and written
    without them, as JAX and the StableHLO pretty printer write programs,
    so the expectation rests on the oracle's defaults.  A generator stream
    of their own, after every other case: the op's other cases stay
    byte-identical (issue 25)."""
    if not spec.exercise.elided or not skels:
        return []
    rng = np.random.default_rng([seed, zlib.crc32(spec.mnemonic.encode()), zlib.crc32(b"elided")])
    out = []
    for corner, skel, inst, (args, consts) in corners.solved(spec, spec.exercise.elided, skels, rng,
                                                            keep=lambda inst: _try_values(spec, inst, rng)):
        out.append(_case(spec, skel, inst, args, "value", seed, corner.note, expect_fn, constants=consts,
                         omit=corner.omit))
    return out


LATER_PASSES = 2   # each `Exercise.later` corner solved this many times (on other skeletons: element types)


def _later_cases(spec: OpSpec, skels: list[Skeleton], seed: int, expect_fn) -> list:
    """Value cases on the structure a later spec than the seed added
    (`Exercise.later`: v1.20's batching dims of gather and scatter), each
    corner `LATER_PASSES` times over every skeleton it may need (the
    skeleton fixes gather's `index_vector_dim`), then the first corner with
    indices out of bounds where the op has index operands (a survey).  A
    generator stream of its own, last: every other case stays byte-identical."""
    if not spec.exercise.later or not skels:
        return []
    rng = np.random.default_rng([seed, zlib.crc32(spec.mnemonic.encode()), zlib.crc32(b"later")])
    out, first = [], None
    wanted = list(spec.exercise.later) * LATER_PASSES
    for corner, skel, inst, (args, consts) in corners.solved(spec, wanted, skels, rng, attempts=len(skels),
                                                            keep=lambda inst: _try_values(spec, inst, rng)):
        out.append(_case(spec, skel, inst, args, "value", seed, corner.note, expect_fn, constants=consts))
        first = first or (skel, inst)
    if first is not None and spec.exercise.indices is not None:
        skel, inst = first
        got = _try_values(spec, inst, rng, "out_of_bounds")
        if got is not None:
            args, consts = got
            out.append(_case(spec, skel, inst, args, _out_of_bounds_kind(spec), seed,
                             f"{spec.exercise.later[0].note}; indices out of bounds", expect_fn, constants=consts))
    return out


def _survey_if_undefined(c: Case) -> Case:
    """A value case whose result the op states undefined on these operands
    (a residual expectation's `undefined`: the seed's undefined behaviour —
    a matrix of f8E8M0FNU has no negatives and no zeros to be triangular or
    positive definite with) as a survey, as the seed's own are."""
    why = next((e.residual["undefined"] for e in c.expected if e.residual and e.residual.get("undefined")), None)
    if c.kind != "value" or why is None:
        return c
    return dataclasses.replace(c, kind="survey", note=f"{c.note}; {why}",
                               id=case_id(c.op, c.dtype, c.mlir, c.inputs, salt="survey"))


V1_20_ATTEMPTS = 8   # draws per slot until the program holds the v1.20 type


def _v1_20_type_cases(spec: OpSpec, skels: list[Skeleton], seed: int, expect_fn) -> list:
    """Value cases in the element types v1.20 adds, on the skeletons
    `v1_20_types.skeletons` makes from the seed's: per skeleton the plan's
    cases for one element type (element-wise ops: special values —
    exhaustive where the inputs are 8 bits or fewer — and a random case;
    ops with structure: a random case), each drawn again (up to
    `V1_20_ATTEMPTS`) until its program holds the type.  A generator stream
    of its own, last: every other case stays byte-identical."""
    made = v1_20_types.skeletons(spec, skels) if skels else []
    if not made:
        return []
    rng = np.random.default_rng([seed, zlib.crc32(spec.mnemonic.encode()), zlib.crc32(b"v1.20 types")])
    plan = plan_for(spec)
    slots = ("random",) if spec.structured else ("special", "random")
    out = []
    for what, skel in made:
        for slot in slots:
            for _ in range(V1_20_ATTEMPTS):   # a draw may leave the type out (a tuple of no members)
                kept = [c for c in _slot_cases(spec, plan, skel, slot, rng, seed, expect_fn)
                        if c is not None and v1_20_types.holds_new_type(c.mlir, skel)]
                out += [_survey_if_undefined(dataclasses.replace(c, note=f"{c.note}; {what}")) for c in kept]
                if kept:
                    break
    return out


def _quantized_cases(spec: OpSpec, skels: list[Skeleton], seed: int, expect_fn) -> list:
    """The op's cases on quantized tensors (generators/quantized.py): its own
    stream, then — for data movement and the ops whose structure that stream
    cannot build — a random case on each of the seed's skeletons with a
    quantized type in place of f32 (`quantized.skeletons`).  Last of all:
    every other case stays byte-identical."""
    made = quantized.cases(spec, seed, expect_fn)
    if not quantized.needs_skeletons(spec, made) or not skels:
        made += quantized.trailing_cases(spec, seed, expect_fn)
        return made + quantized.solved_invalid(spec, seed, made, expect_fn)   # z3's programs: last
    rng = np.random.default_rng([seed, zlib.crc32(spec.mnemonic.encode()), zlib.crc32(b"quantized skeletons")])
    plan = plan_for(spec)
    for what, skel in quantized.skeletons(spec, skels):
        try:
            drawn = _slot_cases(spec, plan, skel, "random", rng, seed, expect_fn)
        except solve.GenerationError:   # the solver sees the op's constraints, not its quantization clauses
            continue                    # (checked on concrete instances): this substitution has no valid instance
        for c in drawn:
            named = quantized.as_family(c) if c is not None else None
            if named is not None:
                made.append(dataclasses.replace(named, note=f"{named.note}; {what}"))
    made += quantized.trailing_cases(spec, seed, expect_fn)   # on its declared example
    return made + quantized.solved_invalid(spec, seed, made, expect_fn)   # z3's programs for clauses left: last


def build(out_dir: Path, seed: int, ops: list[str] | None = None, expect_fn=None, log=None) -> dict:
    """Generate the suite into `out_dir`; returns the manifest written."""
    known = {**OPS, **ADDED}   # the seed's ops, and those v1.20 added (their cases: the quantized stream alone)
    names = sorted(ops) if ops else sorted(known)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise KeyError(f"no op {', '.join(unknown)} in the encoded spec")
    cases: list[Case] = []
    implied_all: dict[str, list[str]] = {}
    for name in names:
        t0 = time.perf_counter()
        got, implied = op_cases(known[name], seed, expect_fn)
        cases += got
        if implied:
            implied_all[name] = implied
        if log:
            log(f"{name}: {len(got)} cases in {time.perf_counter() - t0:.1f}s")
    manifest = {"suite": "core", "suite_version": SUITE_VERSION, "spec_source": SPEC_SOURCE,
                "generator_version": GENERATOR_VERSION, "seed": seed,
                "constraints_without_negative_case": implied_all}
    write_suite(Path(out_dir), manifest, cases)
    return {**manifest, "total": len(cases)}


def _stream_rng(spec: OpSpec, seed: int, stream: str) -> np.random.Generator:
    """The generator of a hand-built stream of the op: its own, so the op's other streams draw as before."""
    return np.random.default_rng([seed, zlib.crc32(spec.mnemonic.encode()), zlib.crc32(stream.encode())])


def _marked(cases: list, stream: str) -> list:
    """`appended_last`'s cases say which stream they are, so readers can tell them from the seed's."""
    if stream != "appended_last":
        return cases
    return [dataclasses.replace(c, provenance={**c.provenance, "stream": stream}) if c is not None else c
            for c in cases]


def _declared_last(spec: OpSpec, seed: int) -> list:
    """A token op's hand-built programs (`Exercise.appended_last`), after
    every other stream of its cases: each made as its declared cases are
    (`_declared_case`), an invalid one kept where it breaks its one rule."""
    rng = _stream_rng(spec, seed, "appended_last")
    return _marked([_declared_case(spec, note, "invalid" if label else "value", inst, label, rng, seed)
                    for b in spec.exercise.builders("appended_last") for note, label, _skel, inst in b(spec, [], rng)
                    if spec.breaks_only(inst, label)], "appended_last")


def _appended_cases(spec: OpSpec, skels: list[Skeleton], seed: int, expect_fn, stream: str = "appended") -> list:
    """The op's hand-built programs (`Exercise.appended`): a value case kept
    where the constraints accept it, an invalid one where it breaks its one
    constraint (`_case` checks the oracle's rejection names it); a
    generator stream of their own, last.  `stream="appended_last"`
    (`Exercise.appended_last`): the same, after every other stream (the
    v1.20 types' and quantized ones too), on a generator of its own."""
    builds = spec.exercise.builders(stream)
    if not builds or (not skels and stream == "appended"):   # appended_last's builds state their structure
        return []
    rng = _stream_rng(spec, seed, stream)
    out = []
    # lazily, one builder after another: a builder's draws interleave with the values drawn for its cases
    built = itertools.chain.from_iterable(b(spec, skels, rng) for b in builds)
    for note, label, skel, inst in built:
        if not spec.breaks_only(inst, label):
            continue
        if label:
            args, consts = _values(spec, inst, rng, None)
            out.append(_case(spec, skel, inst, args, "invalid", seed, f"violates {label} ({note})", expect_fn,
                             violates=label, constants=consts))
        else:
            got = _try_values(spec, inst, rng)
            if got is not None:
                args, consts = got
                out.append(_case(spec, skel, inst, args, "value", seed, note, expect_fn, constants=consts))
    return _marked(out, stream)
