"""Proofs about the encoded spec (`shlo-conform check-spec`) and their rendering.

Built on the symbolic instances of spec/symbolic.py (a skeleton's structure
with z3 numbers): the op's own constraint functions, evaluated on them,
yield z3 formulas, so the checks below are proofs over all dimension sizes,
not samples:

  satisfiable  every element type an Inputs/Outputs table declares occurs in
               some skeleton whose constraints have a model;
  sound        for all operands: if some result satisfies the constraints,
               the inferred result does (constraints(ops, R) ∧
               ¬constraints(ops, infer(ops)) is UNSAT);
  unique       no other result satisfies them: not other dims
               (constraints(ops, R) ∧ R ≠ infer(ops) UNSAT), not another rank
               (±1), not another element type (unless the program states it:
               `OpSpec.result_from_program`, `OpSpec.result_type_stated`).
  independent  for each constraint Ci, ¬Ci ∧ (all others) has a model in
               some structure: every skeleton of the tables (element types,
               enum values — valid or not), equal operand ranks 0..2, one
               operand's rank off by one, a result of another element type
               from the Outputs table or of rank ±1.  The model is
               concretized and `OpSpec.violated` must name exactly Ci.  When
               no structure has one, Ci is reported *redundant* (implied by
               the others over those structures), with the unsat core of
               tracked assertions `others ∧ ¬Ci` at a structure where Ci is
               not decided by structure alone.

Ranks 0..2 (equal for all operands) are checked, and those an op adds
(`OpSpec.check_ranks`: convolution's window rules bite from rank 3); for an
op with inputs of a later spec than the seed (`Attribute.since`: v1.20's
batching dims, which the structures above hold empty), also the structures
of its `Exercise.later` corners (`spec.symbolic.later_structures`).
Floor 1: spec and z3 only.
"""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field

import z3

from .dsl import Instance, OpSpec, concrete_grid, is_symbolic
from .symbolic import (Skeleton, Symbolic, candidates, concrete_regions, concrete_value, constraint_exprs,
                       later_structures, layout_options, region_layouts, symbolic_instance, tensors_in)
from .types import ALL_TYPES, TensorType, TupleType

CHECK_RANKS = (0, 1, 2)   # and any the op adds (`OpSpec.check_ranks`: convolution's window rules need 3)
CHECK_LAYOUTS = 12    # structures per skeleton and rank checked (hint combinations)
PROOF_TIMEOUT_MS = 20000


# --------------------------------------------------------------------------
# Proofs
# --------------------------------------------------------------------------

def _check_ranks(spec) -> tuple:
    return tuple(dict.fromkeys(CHECK_RANKS + tuple(spec.check_ranks)))


def _solver() -> z3.Solver:
    s = z3.Solver()
    s.set("timeout", PROOF_TIMEOUT_MS)
    return s


def _nonneg(sym: Symbolic) -> list:
    return [d >= 0 for d in sym.dims]


def _holds(exprs) -> object:
    """Conjunction of (label, expr) pairs: a Python bool or a z3 formula."""
    es = [e for _, e in exprs]
    if any(e is False for e in es):
        return False
    sym = [e for e in es if e is not True]
    return z3.And(sym) if sym else True


def _check(solver: z3.Solver, *formulas) -> z3.CheckSatResult:
    for f in formulas:
        if f is False:
            return z3.unsat
        if f is not True:
            solver.add(f)
    return solver.check()


@dataclass
class Report:
    proofs: int = 0
    failures: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    def fail(self, msg: str) -> None:
        self.failures.append(msg)


def _with_results(spec: OpSpec, inst: Instance, results: dict) -> Instance:
    present = {k: v for k, v in inst.attributes.items()}
    return spec.instance(dict(inst.operands), present, results, dict(inst.regions))


def _retyped(t, et):
    return TensorType(tuple(t.shape), et) if isinstance(t, TensorType) else t


def check_skeleton(spec: OpSpec, skel: Skeleton, ranks, rep: Report, layout: dict | None = None) -> bool:
    """Satisfiability, soundness and uniqueness of inference for one skeleton,
    rank vector and layout.  Returns whether the constraints are satisfiable
    there.  Results whose shape the program states (`shape_from_program`)
    take part with their own dims: only their element type and rank are
    inferred facts to prove unique."""
    sym = symbolic_instance(spec, skel, ranks, full=True, layout=layout)
    where = f"{skel.label()} ranks={list(ranks)}{' layout=' + str(layout) if layout else ''}"
    exprs = constraint_exprs(spec, sym.inst)
    base = _holds(exprs)
    if _check(_solver(), base, *_nonneg(sym)) != z3.sat:
        return False
    rep.proofs += 1
    if sym.inferred is None:
        rep.fail(f"{where}: infer cannot be evaluated on symbolic dims")
        return True
    prog = skel.result_type_dict
    stated = set(spec.shape_from_program)
    inferred = {name: _retyped(t, prog.get(name, t.element_type)) if isinstance(t, TensorType) else t
                for name, t in sym.inferred.items() if name not in stated}
    missing = [r.name for r in spec.results if r.name not in inferred and r.name not in stated]
    if missing:
        rep.fail(f"{where}: infer gives no {missing}")
        return True
    full_inferred = {**{n: sym.inst.results[n] for n in stated}, **inferred}
    # sound: constraints(ops, R) ∧ ¬constraints(ops, infer(ops)) is UNSAT
    inf_inst = _with_results(spec, sym.inst, full_inferred)
    inf_ok = _holds(constraint_exprs(spec, inf_inst))
    res = _check(_solver(), base, *_nonneg(sym), z3.Not(inf_ok) if is_symbolic(inf_ok) else (not inf_ok))
    if res == z3.unsat:
        rep.proofs += 1
    else:
        rep.fail(f"{where}: inference unsound ({res}): {_model_text(sym, res)}")
    if spec.results_unconstrained:   # nothing in the seed fixes the results: no uniqueness to prove
        return True
    # unique: other dims
    diffs = []
    for r in spec.results:
        if r.name in stated:
            continue
        got, want = list(tensors_in(sym.inst.results[r.name])), list(tensors_in(inferred[r.name]))
        for g, w in zip(got, want):
            if g.rank == w.rank:
                diffs += [x != y for x, y in zip(g.shape, w.shape)]
    if diffs:
        s = _solver()
        res = _check(s, base, *_nonneg(sym), z3.Or(diffs))
        if res == z3.unsat:
            rep.proofs += 1
        else:
            rep.fail(f"{where}: result dims not unique ({res}): {_model_text(sym, res, s)}")
    # unique: other element types and ranks (single-tensor results)
    for r in spec.results:
        want = sym.inst.results[r.name] if r.name in stated else inferred[r.name]
        if not isinstance(want, TensorType):
            continue
        alts = [(t, want.rank) for t in r.types if t != want.element_type
                and r.name not in spec.result_from_program and r.name not in spec.result_type_stated]
        if r.name not in stated and r.fixed_rank is None:   # a fixed rank is the table's, as its types are
            alts += [(want.element_type, k) for k in (want.rank - 1, want.rank + 1) if k >= 0]
        for et, k in alts:
            alt = symbolic_instance(spec, skel, ranks, result_override={r.name: (et, k)}, full=True, layout=layout)
            res = _check(_solver(), _holds(constraint_exprs(spec, alt.inst)), *_nonneg(alt))
            if res == z3.unsat:
                rep.proofs += 1
            else:
                rep.fail(f"{where}: result {r.name} also allowed as tensor of rank {k} of {et} ({res})")
    return True


def _model_text(sym: Symbolic, res, solver: z3.Solver | None = None) -> str:
    if res != z3.sat or solver is None:
        return str(res)
    m = solver.model()
    return ", ".join(f"{d}={m.eval(d, model_completion=True)}" for d in sym.dims)


def check_op(spec: OpSpec, rep: Report) -> None:
    if spec.results_unconstrained:
        rep.notes.append(f"results: no uniqueness proofs ({spec.results_unconstrained})")
    declared = {(i, t) for i, o in enumerate(spec.operands) for t in o.types}
    prog = [r for r in spec.results if r.name in spec.result_from_program]
    declared_res = {(r.name, t) for r in prog for t in r.types}
    seen, seen_res = set(), set()
    for skel in candidates(spec):
        if all(any(e is False for _, e in constraint_exprs(spec, symbolic_instance(spec, skel, [r] * len(spec.operands))))
               for r in _check_ranks(spec)):
            continue  # refuted by structure alone at every rank checked (cheap filter)
        sat_any = False
        for r in _check_ranks(spec):
            ranks = [r] * len(spec.operands)
            for layout in layout_options(spec, skel, ranks, CHECK_LAYOUTS) or [None]:
                sat_any |= check_skeleton(spec, skel, ranks, rep, layout)
        for corner in spec.exercise.later:   # inference on the later spec's structures too (batching dims)
            check_skeleton(spec, skel, list(corner.ranks), rep, corner.layout)
        if sat_any:
            seen |= {(i, t) for i, t in enumerate(skel.operand_types)}
            seen_res |= set(skel.result_types)
    for i, t in sorted(declared - seen, key=lambda p: (p[0], p[1].name)):
        rep.fail(f"{spec.mnemonic}: operand {spec.operands[i].name} declares {t} but no skeleton with it is satisfiable")
    for n, t in sorted(declared_res - seen_res, key=lambda p: (p[0], p[1].name)):
        rep.fail(f"{spec.mnemonic}: result {n} declares {t} but no skeleton with it is satisfiable")
    rep.proofs += len(declared & seen) + len(declared_res & seen_res)


# --------------------------------------------------------------------------
# Independence: ¬Ci ∧ others, or Ci redundant (with an unsat core)
# --------------------------------------------------------------------------

@dataclass
class Independence:
    """Per constraint label: the structure of a witness of ¬Ci ∧ others, or
    (redundant) the labels of an unsat core of `others ∧ ¬Ci`."""

    witnesses: dict = field(default_factory=dict)   # label -> "skeleton ranks=… result=…"
    redundant: dict = field(default_factory=dict)   # label -> {"core": [...], "where": str}

    def to_json(self) -> dict:
        return {"independent": dict(self.witnesses), "redundant": dict(self.redundant)}


def structure_variants(spec: OpSpec, skel: Skeleton, ranks) -> list[dict]:
    """Layouts that break what the structure hints keep right: each variadic
    count and array length one off its first candidate (and 0), and a
    variadic operand of two or more members whose last member has another
    element type of its table.  Count/length/"same type" constraints
    (dynamic_slice C2, C3; concatenate C3; reverse C2 needs two entries) can
    only be broken there."""
    sym = symbolic_instance(spec, skel, ranks, full=True)
    base = sym.layout
    out = [lay for lay in layout_options(spec, skel, ranks, CHECK_LAYOUTS)[1:]]   # other hint combinations
    # a block of another element type than the signature wants (or arguments where it wants none)
    out += region_layouts(spec, sym.inst, lambda current: next(t for t in ALL_TYPES if t != current))
    for kind in ("counts", "lengths", "result_counts", "region_counts"):
        for name, v in base.get(kind, {}).items():
            for alt in dict.fromkeys((v + 1, v - 1, 0)):
                if alt >= 0 and alt != v:
                    out.append({kind: {name: alt}})
    for name, (rows, cols) in base.get("group_shapes", {}).items():   # a 2-D groups attribute's shape one off
        for alt in ((rows, cols + 1), (rows + 1, cols), (rows, max(cols - 1, 0))):
            if alt != (rows, cols):
                out.append({"group_shapes": {name: alt}})
    for r in spec.results:   # a variadic result's last member of another element type
        other = next((t for t in r.types if t not in skel.operand_types), None)
        if r.name in base["result_counts"] and other is not None:
            out.append({"result_mixed": {r.name: other}})
    for o, t in zip(spec.operands, skel.operand_types):
        others = [u for u in o.types if u != t]
        if o.variadic and others:
            out.append({"counts": {o.name: max(2, base["counts"][o.name])}, "mixed": {o.name: others[0]}})
    return out


def independence_structures(spec: OpSpec):
    """(skeleton, operand ranks, result override, layout) in a fixed order,
    skeleton by skeleton of the tables: equal ranks (shape breaks), structure
    variants (counts, lengths, mixed variadic types), then result type / rank
    overrides and one operand's rank off by one (type and rank breaks).
    Skeleton by skeleton, so a label that only one kind of structure breaks
    is found at the first skeleton, not after all of them
    (dynamic_update_slice has 19·19·10 skeletons)."""
    n = len(spec.operands)
    for skel in candidates(spec):
        for r in _check_ranks(spec):
            yield skel, [r] * n, None, None
        for r in _check_ranks(spec):
            for layout in structure_variants(spec, skel, [r] * n):
                yield skel, [r] * n, None, layout
        # result overrides at rank 1, and for ops proved at higher ranks (convolution: valid from 2) there too
        for r in (1,) + ((2,) + tuple(spec.check_ranks) if spec.check_ranks else ()):
            base = symbolic_instance(spec, skel, [r] * n)
            for res in spec.results:
                cur = base.results[res.name]
                if isinstance(cur, TupleType):
                    for alt in _tuple_variants(cur, res.types):
                        yield skel, [r] * n, {res.name: alt}, None
                    continue
                if not isinstance(cur, TensorType):
                    continue  # variadic results: their members are the inferred ones
                for t in res.types:
                    if t != cur.element_type:
                        yield skel, [r] * n, {res.name: (t, cur.rank)}, None
                for k in (cur.rank - 1, cur.rank + 1):
                    if k >= 0:
                        yield skel, [r] * n, {res.name: (cur.element_type, k)}, None
        for k in range(n if n > 1 else 0):
            for alt in (0, 2):
                ranks = [1] * n
                ranks[k] = alt
                yield skel, ranks, None, None
        if spec.structured:   # one operand of rank 3 (scatter C7 needs two window dims)
            for k in range(n):
                for base_rank in (1, 2):
                    ranks = [base_rank] * n
                    ranks[k] = 3
                    for layout in layout_options(spec, skel, ranks, CHECK_LAYOUTS):
                        yield skel, ranks, None, layout
        for ranks, layout in later_structures(spec, skel):   # the later spec's rules (batching dims)
            yield skel, ranks, None, layout


def _tuple_variants(cur: TupleType, types) -> list:
    """Tuple results unlike `cur` (where witnesses of ¬Ci may be): a member
    fewer, a member more, the first member of another element type or rank."""
    ms = tuple(cur.types)
    out = [TupleType(ms[:-1])] if ms else []
    if ms and isinstance(ms[0], TensorType):
        first = ms[0]
        other = next((t for t in types if t != first.element_type), None)
        if other is not None:
            out.append(TupleType((TensorType(first.shape, other),) + ms[1:]))
        out.append(TupleType((TensorType(tuple(first.shape) + (0,), first.element_type),) + ms[1:]))
    out.append(TupleType(ms + (ms[-1] if ms else TensorType((), types[0]),)))
    return out


def _concretize(spec: OpSpec, sym: Symbolic, model: z3.ModelRef) -> Instance:
    def num(x):
        return model.eval(x, model_completion=True).as_long() if is_symbolic(x) else x

    inst = sym.inst
    return spec.instance({k: concrete_value(v, num) for k, v in inst.operands.items()},
                         {k: concrete_value(v, num) for k, v in inst.attributes.items()},
                         {k: concrete_value(v, num) for k, v in inst.results.items()},
                         concrete_regions(inst.regions, num),
                         grid=concrete_grid(inst.grid, num))   # collectives: the solved grid



def _where(skel: Skeleton, ranks, override, layout=None) -> str:
    extra = f" result={{{', '.join(f'{k}: {v}' if isinstance(v, (TupleType, list)) else f'{k}: rank-{v[1]} {v[0]}' for k, v in override.items())}}}" if override else ""
    extra += f" layout={layout}" if layout else ""
    return f"{skel.label()} ranks={list(ranks)}{extra}"


def _unsat_core(spec: OpSpec, skel, ranks, override, layout, label: str):
    """Core of `others ∧ ¬label ∧ dims ≥ 0` (tracked) at one structure; None if not unsat there."""
    sym = symbolic_instance(spec, skel, ranks, result_override=override, full=True, layout=layout)
    exprs = dict(constraint_exprs(spec, sym.inst))
    target = exprs.pop(label)
    if target is True or any(e is False for e in exprs.values()):
        return None
    s = _solver()
    for name, e in exprs.items():
        if e is not True:
            s.assert_and_track(e, name)
    if target is not False:
        s.assert_and_track(z3.Not(target), f"not {label}")
    s.assert_and_track(z3.And(_nonneg(sym)) if sym.dims else z3.BoolVal(True), "dims >= 0")
    if s.check() != z3.unsat:
        return None
    return sorted(str(c) for c in s.unsat_core())


def check_independence(spec: OpSpec, rep: Report) -> Independence:
    """For each constraint: a concrete witness of ¬Ci ∧ others (one proof),
    or Ci reported redundant (a note with its core; not a failure — a fact
    about the spec, written up in docs/spec-findings.md)."""
    out = Independence()
    todo = list(spec.labels)
    first_open: dict = {}   # label -> a structure where it was symbolic and the others not refuted
    for skel, ranks, override, layout in independence_structures(spec):
        if not todo:
            break
        sym = symbolic_instance(spec, skel, ranks, result_override=override, full=True, layout=layout)
        exprs = constraint_exprs(spec, sym.inst)
        falses = [l for l, e in exprs if e is False]
        if len(falses) > 1:
            continue
        for label in list(todo):
            if falses and falses != [label]:
                continue
            target = dict(exprs)[label]
            if target is True:
                continue
            first_open.setdefault(label, (skel, ranks, override, layout))
            s = _solver()
            res = _check(s, *[e for l, e in exprs if l != label], *_nonneg(sym),
                         z3.Not(target) if is_symbolic(target) else True)
            if res != z3.sat:
                continue
            inst = _concretize(spec, sym, s.model())
            if spec.violated(inst) != [label]:
                rep.fail(f"{spec.mnemonic}: witness for ¬{label} at {_where(skel, ranks, override, layout)} "
                         f"breaks {spec.violated(inst)} when concretized")
                continue
            out.witnesses[label] = f"{_where(skel, ranks, override, layout)}: {inst!r}"
            todo.remove(label)
            rep.proofs += 1
    for label in todo:
        where = first_open.get(label)
        core = _unsat_core(spec, *where, label) if where else None
        out.redundant[label] = {"core": core, "where": _where(*where) if where else None}
        why = (f"core {core} at {_where(*where)}" if core else
               "holds by structure (element types, ranks) in every structure searched")
        rep.notes.append(f"{label} redundant: implied by the others ({why})")
    return out


@dataclass
class OpResult:
    name: str
    proofs: int
    failures: list
    notes: list
    seconds: float
    independence: Independence | None = None

    def to_json(self) -> dict:
        return {"op": self.name, "proofs": self.proofs, "failures": self.failures, "notes": self.notes,
                "seconds": round(self.seconds, 3),
                **(self.independence.to_json() if self.independence else {})}


# v1.20's ops whose constraints read the program's functions and blocks, not numbers: what a function
# named by `decomposition` takes and returns (composite), which single op a block holds and how its
# operands are wired (async_start, async_done).  A skeleton has no such structure for z3 to solve over;
# each constraint is broken alone by a program of its own, held to `OpSpec.violated` naming exactly it, in
# tests/spec/test_added_composite.py (test_each_constraint_alone) and test_added_async.py
# (test_each_invalid_program_breaks_its_constraint_alone).  An addition here is a decision, with its reason.
STRUCTURAL = {
    "composite": "C1 reads the name's spelling, C2–C4 the function `decomposition` names",
    "async_start": "C1–C4 read the op its body block holds and how that op's operands are wired",
    "async_done": "C1 reads the op the future's async_start wraps",
}


def _all_specs() -> dict:
    from .added import ADDED
    from .ops import OPS
    return {**OPS, **ADDED}


def run_ops(ops: list[str] | None = None, jobs: int | None = None) -> list[OpResult]:
    """Every proof above for every op (or `ops`) — the seed's 95 and v1.20's
    additions — one OpResult each, in name order.  With `jobs` (check-spec
    passes one) each op is proved in a process of its own, forked from a
    fork server holding the spec, `jobs` at a time, slowest first so that the last op does not
    run alone (about ten CPU-minutes in all): z3's models depend on what
    its context met before, so a fresh process per op is what makes the
    witnesses the same whatever the number of processes.  Without, here."""
    specs = _all_specs()
    names = sorted(ops) if ops else sorted(specs)
    unknown = [n for n in names if n not in specs]
    if unknown:
        raise KeyError(f"no op {', '.join(unknown)} in the encoded spec")
    if jobs is None:
        return [_proved(specs[name]) for name in names]
    import multiprocessing
    order = sorted(names, key=lambda n: (n not in SLOWEST, n))
    # forked from a fork server that has imported the spec and nothing else: the caller may hold threads
    # (JAX's, in a test process) that a plain fork would copy mid-lock
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["shlo_conform.spec.checks", "shlo_conform.spec.ops", "shlo_conform.spec.added"])
    with ctx.Pool(jobs, maxtasksperchild=1) as pool:
        done = dict(zip(order, pool.map(_proved_by_name, order, chunksize=1)))
    return [done[name] for name in names]


# The ops whose proofs take longest (a minute or more of CPU each: symbolic grids, windows,
# index maps), started first when run_ops proves in several processes.
SLOWEST = ("all_to_all", "collective_permute", "convolution", "gather", "reduce_scatter", "reduce_window",
           "scatter", "select_and_scatter", "all_gather", "all_reduce")


def _proved_by_name(name: str) -> OpResult:
    return _proved(_all_specs()[name])


def _not_solved(spec: OpSpec) -> str | None:
    """Why an op's constraints are not proved over skeletons here, or None."""
    from .dsl.quantization import OWN
    if spec.mnemonic in STRUCTURAL:
        return f"not solved by z3: {STRUCTURAL[spec.mnemonic]} (checks.STRUCTURAL)"
    if spec.quantization is not None and spec.quantization.meaning == OWN:
        return ("proved over quantized types, whose numbers a skeleton of table types cannot hold: "
                "see the quantization clauses (spec/quantized_checks.py)")
    return None


def check_listed(spec: OpSpec, listed, rep: Report) -> Independence:
    """The checks above for an op that lists its instances instead of
    solving them (`SideEffect.cases`: the token ops, whose structure is a
    few counts and flags on tokens, nothing for z3): every listed valid
    instance satisfies every constraint and has the results `infer` gives
    (where it gives them), and keeps doing so with each element type of the
    tables in place of its tensors' (satisfiable); each constraint has a
    listed instance that breaks it alone (independent), else it is noted
    redundant over the listed instances."""
    import numpy as np
    from .types import TensorType

    def retyped(v, et):
        if isinstance(v, list):
            return [retyped(m, et) for m in v]
        return TensorType(v.shape, et) if isinstance(v, TensorType) else v

    out = Independence()
    cases = listed(spec, np.random.default_rng(0))
    tables = {t for o in spec.operands for t in o.types} | {t for r in spec.results for t in r.types}
    seen = set()
    for note, kind, inst, violates in cases:
        bad = spec.violated(inst)
        if kind == "invalid":
            if bad == [violates] and violates not in out.witnesses:
                out.witnesses[violates] = f"listed: {note}: {inst!r}"
                rep.proofs += 1
            elif bad != [violates]:
                rep.fail(f"{spec.mnemonic}: listed invalid instance ({note}) breaks {bad}, not [{violates}]")
            continue
        for et in sorted(tables - seen, key=lambda t: t.name):
            again = spec.instance({k: retyped(v, et) for k, v in inst.operands.items()}, dict(inst.attributes),
                                  {k: retyped(v, et) for k, v in inst.results.items()})
            if not spec.violated(again) and not spec.types_outside_tables(again):
                seen.add(et)
        inferred = spec.infer(inst)
        if bad or any(inferred[k] != inst.results[k] for k in inferred):
            rep.fail(f"{spec.mnemonic}: listed valid instance ({note}) breaks {bad} or its results are not inferred")
        else:
            rep.proofs += 1
    for t in sorted(tables - seen, key=lambda t: t.name):
        rep.fail(f"{spec.mnemonic}: element type {t} of the tables is valid in no listed instance")
    rep.proofs += len(tables & seen)
    for label in spec.labels:
        if label not in out.witnesses:
            out.redundant[label] = {"core": None, "where": "listed instances"}
            rep.notes.append(f"{label} redundant: no listed instance breaks it alone")
    return out


def listed_invalid(spec: OpSpec) -> dict:
    """{label: (note, instance)}: the first program the op builds by hand
    (`Exercise.appended`, `appended_last`) that breaks `label` alone —
    constraints on inputs the solver never draws (dot_general's
    `algorithm`: spec/ops/dot_algorithm.py) are broken only there."""
    import numpy as np
    builds = spec.exercise.builders("appended") + spec.exercise.builders("appended_last")
    if not builds:
        return {}
    skels, out = list(candidates(spec)), {}
    for build in builds:
        for note, label, _skel, inst in build(spec, skels, np.random.default_rng(0)):
            if label and label not in out and spec.violated(inst) == [label]:
                out[label] = (note, inst)
    return out


def _listed_witnesses(spec: OpSpec, ind: Independence, rep: Report) -> None:
    """A constraint no skeleton breaks alone is independent where a program
    the op lists by hand breaks it alone (`listed_invalid`): a concrete
    witness, as `check_listed` takes the token ops'."""
    if not ind.redundant:
        return
    for label, (note, _inst) in listed_invalid(spec).items():
        if label in ind.redundant:
            del ind.redundant[label]
            ind.witnesses[label] = f"listed: {note}"
            rep.notes = [n for n in rep.notes if not n.startswith(f"{label} redundant")]
            rep.proofs += 1


@functools.lru_cache(maxsize=None)
def _proved(spec: OpSpec) -> OpResult:
    """The proofs of one op — a pure function of its spec, so computed once
    per process (the test suite asks for the same op from several files)."""
    rep = Report()
    t0 = time.perf_counter()
    ind = None
    why = _not_solved(spec)
    if why is not None:
        return OpResult(spec.mnemonic, 0, [], [why], 0.0, None)
    try:
        listed = getattr(spec.semantics, "cases", None)
        if listed is not None:   # the token ops list their instances: checked on those
            ind = check_listed(spec, listed, rep)
        else:
            check_op(spec, rep)
            ind = check_independence(spec, rep)
            _listed_witnesses(spec, ind, rep)
    except Exception as e:  # a constraint or infer that crashes is a finding, not a tool failure
        rep.fail(f"{spec.mnemonic}: {type(e).__name__}: {e}")
    if ind is not None:
        _implied_as_declared(spec, ind, rep)
    return OpResult(spec.mnemonic, rep.proofs, rep.failures, rep.notes, time.perf_counter() - t0, ind)


def _implied_as_declared(spec: OpSpec, ind: Independence, rep: Report) -> None:
    """A constraint the others imply is a finding the op declares
    (`OpSpec.implied`, docs/spec-findings.md: no invalid case can name it);
    one found redundant without that declaration, or declared implied yet
    broken alone by a witness, fails check-spec — so a change that makes a
    clause redundant, or an encoding that drifts from its declaration,
    stops CI here.  Not for v1.20's added ops, as the per-op test that held
    this before (v1.20's dynamic ops have 27 clauses on shape operands'
    values that the skeleton search reports redundant without their being
    implied: noted, not failed)."""
    from .added import ADDED
    if spec.mnemonic in ADDED:
        return
    implied = set(spec.implied)
    for label in sorted(set(ind.redundant) - implied):
        rep.fail(f"{spec.mnemonic}: {label} is implied by the others but not declared `implied`")
    for label in sorted(implied & set(ind.witnesses)):
        rep.fail(f"{spec.mnemonic}: {label} is declared `implied`, yet a witness breaks it alone: "
                 f"{ind.witnesses[label]}")


def render(results: list[OpResult]) -> tuple[bool, str]:
    lines, total_p, total_f = [], 0, 0
    n_ind = n_red = 0
    for r in results:
        total_p += r.proofs
        total_f += len(r.failures)
        ind = r.independence
        if ind is not None:
            n_ind += len(ind.witnesses)
            n_red += len(ind.redundant)
        status = "ok" if not r.failures else f"{len(r.failures)} FAILED"
        indep = f"  independent {len(ind.witnesses)}/{len(ind.witnesses) + len(ind.redundant)}" if ind else ""
        lines.append(f"{r.name:28s} {r.proofs:6d} proofs  {status}{indep}  ({r.seconds:.1f}s)")
        lines += [f"    {f}" for f in r.failures[:20]]
        if len(r.failures) > 20:
            lines.append(f"    … {len(r.failures) - 20} more")
        lines += [f"    note: {n}" for n in r.notes]
    lines.append(f"{len(results)} ops, {total_p} proofs, {total_f} failures; "
                 f"constraints: {n_ind} independent, {n_red} redundant")
    return total_f == 0, "\n".join(lines) + "\n"


def run(ops: list[str] | None = None) -> tuple[bool, str]:
    """check-spec: prove the properties above for every op (or `ops`)."""
    try:
        results = run_ops(ops)
    except KeyError as e:
        return False, f"{e.args[0]}\n"
    return render(results)
