"""The suite writer: every op, every skeleton, a few solved shapes × value sets.

Per op (sorted) the generator draws from its own numpy Generator seeded by
(seed, op name), so a suite for a subset of ops holds the same cases as the
full suite for those ops, and the same seed gives byte-identical files.
Per skeleton: `VALUE_CASES` cases of solved shapes filled with random and
special values, and one case of special values on purpose — all input
combinations when there are at most 256 (8-bit float unary ops, 4-bit
binary ops, booleans), else a grid of the specials crossed between operands.
Per constraint: up to `INVALID_PER_CONSTRAINT` invalid cases (negative.py).
"""
from __future__ import annotations

import math
import time
import zlib
from pathlib import Path

import numpy as np

from ..spec.dsl import OpSpec
from ..spec.ops import OPS
from ..suites.io import write_suite
from ..suites.records import Case, TensorValue, case_id
from . import corners, emit, indices, judge, negative, solve, values
from .skeleton import Skeleton, enumerate_skeletons

GENERATOR_VERSION = "1"
SUITE_VERSION = "0.1.0"
SPEC_SOURCE = "000_5ae4585f266cf299.txt + 004_6ddba65058e4afdd.txt (tan)"
VALUE_CASES_PER_DTYPE = 4     # random-shape cases per (op, principal dtype), spread over its skeletons
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


def _operand_types(spec: OpSpec, inst):
    return emit.operand_types(spec, inst)


def _oracle_judge(spec, inst, mlir, arrays):
    return judge.expectations(mlir, arrays)


def _case(spec, skel, inst, arrays, kind, seed, note, judge_fn, violates=None, constants=None) -> Case | None:
    """One case; None where the spec states no result at all (e.g. complex
    remainder, "TBD" in the seed), so there is nothing to judge against.
    `arrays`: @main's arguments; `constants`: values of operands written as
    attributes (constant's `value`)."""
    mlir = emit.program(spec, inst, _present(spec, skel), constants)
    tvs = [TensorValue.of(a, t) for a, t in zip(arrays, emit.operand_types(spec, inst, arguments_only=True))]
    dtype = skel.dtype(spec)
    try:
        expected = judge_fn(spec, inst, mlir, arrays) if kind in ("value", "survey") else []
    except judge.Unspecified:
        return None
    if kind == "invalid" and judge_fn is _oracle_judge and judge.rejection(mlir) != violates:
        # The program text cannot say what the instance meant: scatter's operands
        # are split into equal halves, so unequal input/update counts (C5) read as
        # another program.  Such a case would not test its constraint.
        return None
    return Case(id=case_id(spec.mnemonic, dtype, mlir, tvs, salt=kind), op=spec.mnemonic, dtype=dtype,
                kind=kind, mlir=mlir, inputs=tvs, expected=expected, violates=violates, note=note,
                provenance={"seed": seed, "section": spec.mnemonic, "generator": GENERATOR_VERSION})


def _random_arrays(spec, inst, rng):
    return [values.fill(t.element_type, t.shape, rng, spec.mnemonic, i)
            for i, t in enumerate(_operand_types(spec, inst))]


def _try_values(spec, inst, rng, mode: str = "in_bounds"):
    """`_structured_values`, or None where no index of the wanted kind fits
    the index type (e.g. no start past a 40-long axis in a 4-bit type)."""
    try:
        return _structured_values(spec, inst, rng, mode)
    except indices.NoIndices:
        return None


def _structured_values(spec, inst, rng, mode: str | None = "in_bounds"):
    """(@main's argument arrays, {constant operand: array}) for an op that is
    not element-wise: index operands from `indices` (in or out of bounds),
    the rest random with special values; tuple operands by their leaves."""
    idx = indices.index_arrays(spec, inst, rng, mode) if mode and spec.mnemonic in indices.INDEXERS else {}
    args, consts = [], {}
    for i, o in enumerate(spec.operands):
        members = inst.operands[o.name] if o.variadic else [inst.operands[o.name]]
        for k, t in enumerate(members):
            key = (o.name, k) if o.variadic else o.name
            if o.constant:
                consts[o.name] = values.fill(t.element_type, t.shape, rng, spec.mnemonic, i)
            elif key in idx:
                args.append(np.asarray(idx[key]).astype(t.element_type.numpy).reshape(t.shape))
            else:
                args += [values.fill(leaf.element_type, leaf.shape, rng, spec.mnemonic, i) for leaf in emit.leaves(t)]
    return args, consts


def _unique(cases: list) -> list[Case]:
    """The cases made (None: nothing to judge), each id once, in order."""
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
        pools = [pick(t, spec.mnemonic, i) for i, t in enumerate(types)]
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
    arrays = [c.reshape(t.shape) for c, t in zip(cols, _operand_types(spec, inst))]
    return inst, arrays, note


def op_cases(spec: OpSpec, seed: int, judge_fn=None) -> tuple[list[Case], list[str]]:
    """All cases of one op, and the constraints no violation was found for."""
    judge_fn = judge_fn or _oracle_judge
    if spec.structured:
        return structured_cases(spec, seed, judge_fn)
    rng = op_rng(seed, spec.mnemonic)
    skels = enumerate_skeletons(spec)
    by_dtype: dict[str, list[Skeleton]] = {}
    for s in skels:
        by_dtype.setdefault(s.dtype(spec), []).append(s)
    cases: list[Case] = []
    for dtype, group in by_dtype.items():
        per_skel = max(1, math.ceil(VALUE_CASES_PER_DTYPE / len(group)))
        for skel in group:
            special = _special_case(spec, skel, rng)
            if special is not None:
                inst, arrays, note = special
                cases.append(_case(spec, skel, inst, arrays, "value", seed, note, judge_fn))
            for _ in range(per_skel):
                for inst in solve.solve_for(spec, skel, rng, 1, zero_prob=ZERO_DIM_PROB):
                    cases.append(_case(spec, skel, inst, _random_arrays(spec, inst, rng), "value", seed,
                                       "random and special values", judge_fn))
    found, implied = negative.violations(spec, rng, INVALID_PER_CONSTRAINT, skels)
    for v in found:
        arrays = _random_arrays(spec, v.inst, rng)
        cases.append(_case(spec, v.skeleton, v.inst, arrays, "invalid", seed,
                           f"violates {v.label} ({v.strategy})", judge_fn, violates=v.label))
    unique = _unique(cases)
    return unique, implied


# Ops whose seed section defines out-of-bounds start indices (`adjusted_start_indices
# = clamp(0, start_indices, shape(operand) - slice_sizes)`); gather and scatter make
# an out-of-bounds index "implementation-defined" behaviour instead.
CLAMPING_OPS = ("dynamic_slice", "dynamic_update_slice")


def _out_of_bounds_case(spec, skel, inst, args, seed, judge_fn, consts) -> Case | None:
    """Indices past the bounds: a verdict case where the seed defines the
    result (`CLAMPING_OPS`), a `survey` where it makes the behaviour
    implementation-defined — even when the oracle's primary value leaves no
    element open (a scatter update that misses every element): the seed's
    "behavior" is the op's, and IREE shows it need not stay local."""
    kind = "value" if spec.mnemonic in CLAMPING_OPS else "survey"
    return _case(spec, skel, inst, args, kind, seed, "indices out of bounds", judge_fn, constants=consts)


def structured_cases(spec: OpSpec, seed: int, judge_fn) -> tuple[list[Case], list[str]]:
    """Cases of an op that moves data (shape, indexing, tuples, constants).

    Per principal element type, `CASES_PER_DTYPE` cases over up to
    `SKELETONS_PER_DTYPE` skeletons (seeded draw, rotating, so enum/flag/body
    values vary across the types), each a solved random structure (ranks 0..5, zero-sized
    dimensions now and then) and values; ops that index (`indices.INDEXERS`)
    get in-bounds indices, plus one out-of-bounds case per type
    (`_out_of_bounds_case`: scored or surveyed).  Then the op's
    corners (`corners.py`: every transpose permutation, degenerate and full
    windows, empty updates, …) and the invalid cases."""
    rng = op_rng(seed, spec.mnemonic)
    skels = enumerate_skeletons(spec)
    by_dtype: dict[str, list[Skeleton]] = {}
    for s in skels:
        by_dtype.setdefault(s.dtype(spec), []).append(s)
    cases: list = []
    turn = 0
    for dtype, group in by_dtype.items():
        order = [int(i) for i in rng.permutation(len(group))]
        # Rotate through the group so flags and bodies vary across dtypes.
        picks = [group[order[(turn + j) % len(group)]] for j in range(min(SKELETONS_PER_DTYPE, len(group)))]
        turn += 1
        for j in range(CASES_PER_DTYPE):
            skel = picks[j % len(picks)]
            for inst in solve.solve_for(spec, skel, rng, 1, zero_prob=STRUCTURED_ZERO_DIM_PROB):
                got = _try_values(spec, inst, rng)
                if got is None:
                    continue
                args, consts = got
                cases.append(_case(spec, skel, inst, args, "value", seed, "random and special values",
                                   judge_fn, constants=consts))
        if spec.mnemonic in indices.INDEXERS:
            for inst in solve.solve_for(spec, picks[0], rng, 1, zero_prob=0.0):
                got = _try_values(spec, inst, rng, "out_of_bounds")
                if got is None:
                    continue
                args, consts = got
                cases.append(_out_of_bounds_case(spec, picks[0], inst, args, seed, judge_fn, consts))
    for note, skel, inst in corners.corner_instances(spec, skels, rng):
        got = _try_values(spec, inst, rng)
        if got is None:
            continue
        args, consts = got
        cases.append(_case(spec, skel, inst, args, "value", seed, note, judge_fn, constants=consts))
    found, implied = negative.violations(spec, rng, INVALID_PER_CONSTRAINT, skels)
    for v in found:
        try:
            args, consts = _structured_values(spec, v.inst, rng)
        except indices.NoIndices:   # an invalid program: any in-range values will do
            args, consts = _structured_values(spec, v.inst, rng, None)
        cases.append(_case(spec, v.skeleton, v.inst, args, "invalid", seed,
                           f"violates {v.label} ({v.strategy})", judge_fn, violates=v.label, constants=consts))
    unique = _unique(cases)
    named = {c.violates for c in unique if c.kind == "invalid"}
    return unique, [label for label in spec.labels if label not in named]


def build(out_dir: Path, seed: int, ops: list[str] | None = None, judge_fn=None, log=None) -> dict:
    """Generate the suite into `out_dir`; returns the manifest written."""
    names = sorted(ops) if ops else sorted(OPS)
    unknown = [n for n in names if n not in OPS]
    if unknown:
        raise KeyError(f"no op {', '.join(unknown)} in the encoded spec")
    cases: list[Case] = []
    implied_all: dict[str, list[str]] = {}
    for name in names:
        t0 = time.perf_counter()
        got, implied = op_cases(OPS[name], seed, judge_fn)
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
