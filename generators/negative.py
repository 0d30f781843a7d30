"""Negative cases: for each constraint Ci, an instance with ¬Ci ∧ (all others).

The search runs over structures in a fixed order of strategies, each one a
different way to break a rule:
  shapes     valid skeletons, equal ranks: only numbers differ (a shape mismatch)
  result     a result element type other than the inferred one (from the Outputs table)
  rank       a result rank one off the inferred one, or operand ranks that differ
  layout     a variadic count, array attribute length or program-stated result
             rank one off the structure the hints give (concatenate with no input,
             a permutation one entry short)
  mixed      a variadic operand whose last member has another element type
  region     a region whose block has other element types than the spec requires
  types      skeletons outside the valid set (element types / enum values from the
             tables that the constraints reject)
  later      only for the constraints of a later spec than the seed (`OpSpec.later`:
             v1.20's batching dims), which the structures above never reach (they hold
             the later inputs, `Attribute.since`, empty): the op's `Exercise.later`
             structures (`spec.symbolic.later_structures`).  Searched last, on a copy of
             the generator, so the seed's constraints draw what they drew before.
For each structure the op's constraints are evaluated on z3 dims; z3 solves
¬Ci ∧ others under the size budgets.  Element types always stay inside the
Inputs/Outputs tables, so the instance breaks exactly the one rule `Ci`
(`OpSpec.violated(inst) == [Ci]`, checked).  No strategy finding one means
Ci is implied by the others within this search: a finding for `check-spec`.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import z3

from ..spec.dsl import ANY as ALL_TYPES, Instance, OpSpec
from ..spec.symbolic import (Skeleton, candidates, constraint_exprs, later_structures, layout_options, region_layouts,
                             symbolic_instance)
from ..spec.types import TensorType, TupleType
from .regions import PREDICATES
from .skeleton import enumerate_skeletons
from .solve import assert_constraints, attr_target, budget, concretize, dim_target, new_solver, steer

SHAPE_LAYOUTS = 8   # hint combinations tried per structure by the "shapes" strategy
STRATEGIES = ("shapes", "result", "rank", "layout", "mixed", "region", "types")
MAX_TRIES_PER_STRATEGY = 400


@dataclass
class Violation:
    label: str
    strategy: str
    skeleton: Skeleton
    inst: Instance


def _perturbed_layouts(spec: OpSpec, skel: Skeleton, ranks) -> list[dict]:
    """The default structure with one count / length / stated result rank one off."""
    base = symbolic_instance(spec, skel, ranks, full=True).layout
    out = []
    # Result counts first: where operands are split in equal halves (reduce's inputs
    # and init_values), an unequal operand count has no spelling, a result count has.
    kinds = {"result_counts": "result_counts", "counts": "counts", "lengths": "lengths",
             "result_ranks": "result_ranks", "region_counts": "region_counts"}
    tuple_ops = {o.name for o in spec.operands if o.tuple_members}
    later = {a.name for a in spec.attributes if a.since}   # held empty here: the "later" strategy varies them
    for kind in kinds:
        for name, v in base.get(kind, {}).items():
            if name in later:
                continue
            # A count of zero too: "N >= 1" rules (concatenate C3, scatter C5) need it.
            for alt in dict.fromkeys((v + 1, v - 1) + ((0,) if kind in ("counts", "region_counts") else ())):
                if alt >= 0:
                    key = "members" if name in tuple_ops else kind
                    out.append({key: {name: alt}})
    for name, (rows, cols) in base.get("group_shapes", {}).items():   # collectives' 2-D groups: one off
        for alt in ((rows, cols + 1), (rows + 1, cols)):
            out.append({"group_shapes": {name: alt}})
    return out + result_mixes(spec, skel, base)


def result_mixes(spec: OpSpec, skel: Skeleton, base: dict) -> list[dict]:
    """Variadic results with a count hint whose last member has another
    element type (reduce_window C16: results[k] against init_values[k])."""
    out = []
    for r in spec.results:
        if r.name in base.get("result_counts", {}):
            other = next((t for t in r.types if t not in skel.operand_types), None)
            if other is not None:
                out.append({"result_mixed": {r.name: other}})
    return out


def _applies(spec: OpSpec, strategy: str) -> bool:
    """Strategies of structure an op does not have are skipped (drawing no numbers)."""
    if strategy == "layout":
        return spec.structured
    if strategy == "mixed":
        return any(o.variadic for o in spec.operands)
    if strategy == "region":
        return bool(spec.regions)
    return True


def _structures(spec: OpSpec, strategy: str, valid: list[Skeleton], rng):
    """(skeleton, operand ranks, result override, layout) to try, in a seeded order."""
    if not _applies(spec, strategy):
        return
    n = len(spec.operands)
    order = list(rng.permutation(len(valid))) if valid else []
    if strategy == "shapes":
        for i in order:
            for r in (1, 2):
                layouts = layout_options(spec, valid[i], [r] * n, SHAPE_LAYOUTS)
                if layouts == [{}]:
                    yield valid[i], [r] * n, None, None
                    continue
                for lay in layouts:   # other hint combinations: gather C4 needs two offset dims
                    yield valid[i], [r] * n, None, lay
    elif strategy == "layout":
        for i in order:
            for r in (1, 2):
                for lay in _perturbed_layouts(spec, valid[i], [r] * n):
                    yield valid[i], [r] * n, None, lay
    elif strategy == "mixed":
        for i in order:
            skel = valid[i]
            for o, t in zip(spec.operands, skel.operand_types):
                if o.variadic:
                    for j in rng.permutation(len(o.types)):
                        if o.types[j] != t:
                            # Two members: by the count hint at rank 2 (dynamic_slice's
                            # start indices follow the rank), or forced at rank 1.
                            yield skel, [2] * n, None, {"mixed": {o.name: o.types[j]}}
                            yield skel, [1] * n, None, {"counts": {o.name: 2}, "mixed": {o.name: o.types[j]}}
                            break
    elif strategy == "region":
        for i in order:
            skel = valid[i]
            if not spec.regions:
                break
            inst = symbolic_instance(spec, skel, [1] * n)
            # Another element type per region, drawn in turn; a predicate (sort's comparator,
            # select_and_scatter's select, while's cond) keeps its i1 result, so its body stays
            # a valid block with wrong argument types.
            def other_type(current):
                return next(ALL_TYPES[j] for j in rng.permutation(len(ALL_TYPES)) if ALL_TYPES[j] != current)
            for lay in region_layouts(spec, inst, other_type, lambda fn: fn.body in PREDICATES):
                yield skel, [1] * n, None, lay
    elif strategy == "result":
        for i in order:
            skel = valid[i]
            sym = symbolic_instance(spec, skel, [1] * n)
            for res in spec.results:
                cur = sym.results[res.name]
                if isinstance(cur, TupleType):   # a member more or fewer than inferred
                    for alt in (cur.types[:-1], cur.types + cur.types[-1:]):
                        yield skel, [1] * n, {res.name: TupleType(tuple(alt))}, None
                    continue
                if not isinstance(cur, TensorType):
                    continue  # variadic results: their members are the inferred ones
                others = [t for t in res.types if t != cur.element_type]
                for j in rng.permutation(len(others)):
                    yield skel, [1] * n, {res.name: (others[j], cur.rank)}, None
    elif strategy == "rank":
        for i in order:
            skel = valid[i]
            sym = symbolic_instance(spec, skel, [1] * n)
            for res in spec.results:
                if not isinstance(sym.results[res.name], TensorType):
                    continue
                r = sym.results[res.name].rank
                for alt in (r + 1, r - 1):
                    if alt >= 0:
                        yield skel, [1] * n, {res.name: (sym.results[res.name].element_type, alt)}, None
            if n > 1:
                for k in range(n):
                    ranks = [1] * n
                    ranks[k] = 2
                    yield skel, ranks, None, None
            if spec.structured:   # one operand of rank 3, in each hint combination
                for k in range(n):
                    ranks = [2] * n
                    ranks[k] = 3
                    for lay in layout_options(spec, skel, ranks, SHAPE_LAYOUTS):
                        yield skel, ranks, None, lay
    elif strategy == "types":
        valid_set = set(valid)
        cands = [c for c in candidates(spec) if c not in valid_set]
        for j in (rng.permutation(len(cands)) if cands else []):
            for r in (1, 0):
                yield cands[j], [r] * n, None, None
    elif strategy == "later":
        for i in order:
            for ranks, lay in later_structures(spec, valid[i]):
                yield valid[i], ranks, None, lay


EXTRA_RANK = 3   # structured ops, last: rules that only exist from rank 3 (convolution's window)


def _extra_rank_structures(spec: OpSpec, strategy: str, valid: list[Skeleton], rng):
    """The strategy's structures with every operand of rank 3, for ops with
    structure: convolution is valid from rank 2, and its window rules (C4,
    C7, C9) and spatial lists (C13, C18, C20) only bite from rank 3."""
    if not spec.structured or not _applies(spec, strategy):
        return
    n = len(spec.operands)
    ranks = [EXTRA_RANK] * n
    if strategy == "shapes":
        for skel in valid:
            for lay in layout_options(spec, skel, ranks, SHAPE_LAYOUTS) or [None]:
                yield skel, ranks, None, lay
    elif strategy == "layout":
        for skel in valid:
            for lay in _perturbed_layouts(spec, skel, ranks):
                yield skel, ranks, None, lay
    elif strategy in ("result", "rank"):
        for skel in valid:
            results = symbolic_instance(spec, skel, ranks).results
            for res in spec.results:
                cur = results[res.name]
                if not isinstance(cur, TensorType):
                    continue
                alts = ([(t, cur.rank) for t in res.types if t != cur.element_type][:3] if strategy == "result"
                        else [(cur.element_type, k) for k in (cur.rank - 1, cur.rank + 1)])
                for alt in alts:
                    yield skel, ranks, {res.name: alt}, None
    elif strategy == "types":
        valid_set = set(valid)
        for c in candidates(spec):
            if c not in valid_set:
                yield c, ranks, None, None


def find_violation(spec: OpSpec, label: str, strategy: str, rng, valid: list[Skeleton] | None = None,
                   extra_rank: bool = False) -> Violation | None:
    """One concrete instance breaking exactly `label`, by one strategy, or
    None; `extra_rank`: over the rank-3 structures instead."""
    valid = enumerate_skeletons(spec) if valid is None else valid
    tries = 0
    structures = (_extra_rank_structures if extra_rank else _structures)(spec, strategy, valid, rng)
    for skel, ranks, override, layout in structures:
        tries += 1
        if tries > MAX_TRIES_PER_STRATEGY:
            break
        try:
            sym = symbolic_instance(spec, skel, ranks, result_override=override, full=True, layout=layout)
        except (IndexError, KeyError, TypeError, ValueError):
            continue  # a hint that cannot be evaluated on this broken structure
        exprs = constraint_exprs(spec, sym.inst)
        target = dict(exprs)[label]
        if target is True:
            continue
        solver = new_solver(int(rng.integers(0, 2**31)))
        if not assert_constraints(solver, exprs, skip=label):
            continue
        if override and _stated_type_allowed(spec, sym, override):
            continue  # a promotion the program may state: a valid result type, no break of one
        if target is not False:
            solver.add(z3.Not(target))
        solver.add(budget(sym))
        if solver.check() != z3.sat:
            continue
        targets = [(d, dim_target(rng, 0.0)) for d in sym.dims] + \
            [(v, attr_target(rng, k)) for k, v in sym.attr_vars.items()]
        model = steer(solver, targets, solver.model())
        inst = concretize(spec, skel, sym, model, infer_results=False)
        if spec.violated(inst) != [label] or spec.types_outside_tables(inst):
            continue  # e.g. a constraint that reads structure the solver did not see
        return Violation(label, strategy, skel, inst)
    return None


def _stated_type_allowed(spec: OpSpec, sym, override: dict) -> bool:
    """Whether a result override gives a result whose element type the
    program may state (`OpSpec.result_type_stated`: dot_general's
    promotions, bf16 → f32) another element type than the operands' that
    the op accepts (`infer` reads it back).  Such a structure is a valid
    program's type, not an element-type break: skipped, after drawing its
    solver seed like every structure the constraints refuse — which these
    were before promotions were read — so the generator's stream, and
    every case drawn after it, stays as it was."""
    if not spec.result_type_stated or not sym.inferred:
        return False
    for name, o in override.items():
        base = sym.inferred.get(name)
        if name not in spec.result_type_stated or not isinstance(o, tuple) or not isinstance(base, TensorType):
            continue
        if o[0] == base.element_type:
            continue
        try:
            got = spec.infer(sym.inst).get(name)
        except Exception:   # a structure infer cannot read: not a promotion
            continue
        if isinstance(got, TensorType) and got.element_type == o[0]:
            return True
    return False


def violations(spec: OpSpec, rng, per_label: int = 2, valid: list[Skeleton] | None = None):
    """Up to `per_label` violations per constraint (distinct strategies), and
    the labels for which none was found ("implied by the others" here)."""
    valid = enumerate_skeletons(spec) if valid is None else valid
    found: list[Violation] = []
    implied: list[str] = []
    later = dict(spec.later)
    for label in spec.labels:
        if label in later:
            continue
        got = 0
        for strategy in STRATEGIES:
            if got >= per_label:
                break
            v = find_violation(spec, label, strategy, rng, valid)
            if v is not None:
                found.append(v)
                got += 1
        if got == 0:
            implied.append(label)
    # The labels left, at rank 3 — drawing from a copy of the generator, so an op
    # whose rules broke above (or never break alone) draws exactly what it drew before.
    retry = copy.deepcopy(rng)
    for label in list(implied):
        for strategy in STRATEGIES:
            v = find_violation(spec, label, strategy, retry, valid, extra_rank=True)
            if v is not None:
                found.append(v)
                implied.remove(label)
                break
    # The later spec's constraints, last, on their structures: another copy of the generator.
    rest = copy.deepcopy(rng)
    for label in [l for l in spec.labels if l in later]:
        got = 0
        for _ in range(per_label):   # each search permutes the skeletons anew: another structure
            v = find_violation(spec, label, "later", rest, valid)
            if v is None:
                break
            found.append(v)
            got += 1
        if got == 0:
            implied.append(label)
    return found, implied
