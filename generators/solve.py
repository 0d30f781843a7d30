"""z3 chooses the numbers: dimension sizes and integer attributes.

The op's own constraint functions are evaluated on an `Instance` whose
structure comes from a skeleton and whose numbers are z3 integers; the
expressions they return (plus size budgets) go to the solver.  Models are
steered towards randomly drawn target values (seeded numpy Generator, so a
seed reproduces them) and earlier models are blocked, so successive shapes
differ; a target of 0 now and then yields zero-sized dimensions.

Results: a result's dims are fresh variables of the rank `OpSpec.infer`
gives on the symbolic operands, so constraints about results are solved too;
a solved instance is then made concrete with `infer` (element types stated
by the program come from the skeleton) and checked with `OpSpec.violated`.
"""
from __future__ import annotations

import z3

from ..spec.symbolic import Skeleton, Symbolic, concrete_regions, concrete_value, constraint_exprs, layout_options, symbolic_instance
from ..spec.dsl import Instance, OpSpec, concrete_grid, is_symbolic
from ..spec.types import TensorType

MAX_DIM = 6          # each dimension size in 0..MAX_DIM
MAX_ELEMENTS = 64    # per tensor
INT_ATTR_RANGE = (-1, 64)
ARRAY_ENTRY_RANGE = (-3, 64)   # entries of array attributes (pad's edges may be negative)
RANK_TRIES = (1, 2, 0, 3, 4)
PIN_LIMIT = 300      # values tried (from INT_ATTR_RANGE[0], then down to ARRAY_ENTRY_RANGE[0]) to pin a
                     # variable that missed its target: every value the budget allows, so none is left to z3


class GenerationError(Exception):
    """The spec contradicts itself on a solved instance (e.g. infer breaks a constraint)."""


def budget(sym: Symbolic, max_dim: int = MAX_DIM, max_elements: int = MAX_ELEMENTS) -> list:
    out = []
    for t in sym.tensors():
        out += [z3.And(d >= 0, d <= max_dim) for d in t.shape]
        if t.rank > 1:
            prod = t.shape[0]
            for d in t.shape[1:]:
                prod = prod * d
            out.append(prod <= max_elements)
    for k, v in sym.attr_vars.items():
        lo, hi = sym.attr_ranges.get(k) or (ARRAY_ENTRY_RANGE if "[" in k else INT_ATTR_RANGE)
        out.append(z3.And(v >= lo, v <= hi))
    return out


def new_solver(seed: int = 0) -> z3.Solver:
    s = z3.Solver()
    s.set("random_seed", seed)
    s.set("timeout", 10000)
    return s


def assert_constraints(solver: z3.Solver, exprs, skip: str | None = None) -> bool:
    """Add constraint expressions; False when one is concretely False."""
    for label, e in exprs:
        if label == skip:
            continue
        if e is False:
            return False
        if e is not True:
            solver.add(e)
    return True


def satisfiable_ranks(spec: OpSpec, skel: Skeleton):
    """A rank vector under which the skeleton's constraints are satisfiable
    (in some layout the hints offer), or None."""
    n = len(skel.operand_types)
    for r in RANK_TRIES:
        ranks = [r] * n
        if satisfiable_layout(spec, skel, ranks) is not None:
            return ranks
    return None


def satisfiable_layout(spec, skel, ranks, layouts=None):
    """The first layout (of `layouts`, default: all the hints offer) whose
    constraints have a model at these ranks, or None."""
    for layout in (layouts if layouts is not None else layout_options(spec, skel, ranks)) or [{}]:
        if _sat(spec, skel, ranks, layout):
            return layout
    return None


def _sat(spec, skel, ranks, layout=None) -> bool:
    sym = symbolic_instance(spec, skel, ranks, full=True, layout=layout)
    s = new_solver()
    if not assert_constraints(s, constraint_exprs(spec, sym.inst)):
        return False
    s.add(budget(sym))
    return s.check() == z3.sat


def dim_target(rng, zero_prob: float) -> int:
    """A dimension size to steer toward: 0 with probability `zero_prob` (empty
    tensors are valid and often mishandled), else 1..MAX_DIM."""
    if rng.random() < zero_prob:
        return 0
    return int(rng.integers(1, MAX_DIM + 1))


def attr_target(rng, name: str = "") -> int:
    """Scalar integer attributes: mostly small; entries of array attributes
    (`name[i]`: dimension numbers, sizes, paddings): small, now and then
    negative (pad's edges may be)."""
    if "[" in name:
        return int(rng.integers(ARRAY_ENTRY_RANGE[0], 0)) if rng.random() < 0.15 else int(rng.integers(0, MAX_DIM + 1))
    return int(rng.integers(0, 25)) if rng.random() < 0.8 else int(rng.integers(0, INT_ATTR_RANGE[1] + 1))


def steer(solver: z3.Solver, targets: list, model=None):
    """Greedily keep each `var == value` assumption that stays satisfiable;
    returns the model (None if the solver is UNSAT to begin with).

    Determinism: each decision is a satisfiability fact about the formulas,
    not a choice of z3, so the same formulas and targets give the same model
    whatever z3 did before in this process."""
    kept = []
    if model is None:
        if solver.check() != z3.sat:
            return None
        model = solver.model()
    for var, val in targets:
        cur = model.eval(var, model_completion=True)
        if cur.as_long() == val:
            kept.append(var == val)
            continue
        if solver.check(*kept, var != cur) == z3.unsat:   # forced by the others
            kept.append(var == cur)
            continue
        # The target, else 1 (a budget conflict should not leave z3 to pick 0),
        # else the smallest value that fits: every variable ends up pinned by a
        # satisfiability fact, so the model never depends on z3's internal state.
        for v in dict.fromkeys((val, 1, *range(INT_ATTR_RANGE[0], PIN_LIMIT),
                                *range(INT_ATTR_RANGE[0] - 1, ARRAY_ENTRY_RANGE[0] - 1, -1))):
            if solver.check(*kept, var == v) == z3.sat:
                kept.append(var == v)
                model = solver.model()
                break
    return model


def concretize(spec: OpSpec, skel: Skeleton, sym: Symbolic, model, infer_results: bool = True) -> Instance:
    """Model values into a concrete Instance; results by `infer` (when asked)."""
    def val(e):
        return model.eval(e, model_completion=True).as_long() if is_symbolic(e) else e
    operands = {k: concrete_value(v, val) for k, v in sym.inst.operands.items()}
    attrs = {a.name: concrete_value(sym.inst.attributes.get(a.name), val) for a in spec.attributes}
    results = {k: concrete_value(v, val) for k, v in sym.inst.results.items()}
    regions = concrete_regions(sym.inst.regions, val)
    grid = concrete_grid(sym.inst.grid, val)   # collectives: the solved grid (their constraints read it)
    inst = spec.instance(operands, attrs, results, regions, grid=grid)
    if infer_results:
        inferred = spec.infer(inst)
        prog = skel.result_type_dict
        for name, t in inferred.items():
            if name in spec.shape_from_program:
                continue
            if isinstance(t, TensorType):
                t = TensorType(tuple(int(d) for d in t.shape), prog.get(name, t.element_type))
            results[name] = t
        inst = spec.instance(operands, attrs, results, regions, grid=grid)
    return inst


def solve_shapes(spec: OpSpec, skel: Skeleton, ranks, rng, n: int, zero_prob: float = 0.1,
                 extra=None, max_dim: int = MAX_DIM, max_elements: int = MAX_ELEMENTS,
                 layout: dict | None = None) -> list[Instance]:
    """Up to `n` distinct concrete instances of the skeleton with these operand
    ranks (and `layout`: see `spec.symbolic.symbolic_instance`).

    `extra(sym) -> list of z3 constraints` narrows the search (e.g. a fixed
    element count for special-value grids).  Every instance returned has
    passed `OpSpec.violated`; a violation raises GenerationError."""
    sym = symbolic_instance(spec, skel, ranks, full=True, layout=layout)
    solver = new_solver(int(rng.integers(0, 2**31)))
    if not assert_constraints(solver, constraint_exprs(spec, sym.inst)):
        return []
    solver.add(budget(sym, max_dim, max_elements))
    if extra is not None:
        solver.add(extra(sym))
    out = []
    keys = list(sym.dims) + list(sym.attr_vars.values())
    for _ in range(n):
        if solver.check() != z3.sat:
            break
        targets = [(d, dim_target(rng, zero_prob)) for d in sym.dims]
        targets += [(v, attr_target(rng, k)) for k, v in sym.attr_vars.items()]
        model = steer(solver, targets, solver.model())
        inst = concretize(spec, skel, sym, model)
        bad = spec.violated(inst)
        if bad:
            raise GenerationError(f"{skel.label()}: solved instance {inst} violates {bad} (infer disagrees with the constraints?)")
        out.append(inst)
        if keys:
            solver.add(z3.Or([k != model.eval(k, model_completion=True) for k in keys]))
        else:
            break
    return out


LAYOUT_TRIES = 6


def solve_for(spec: OpSpec, skel: Skeleton, ranks, rng, n: int, **kw) -> list[Instance]:
    """`n` instances at these operand ranks (drawn by the caller:
    `skeleton.draw_ranks`) in a drawn layout (the structure hints'
    combinations, in random order); falls back to a rank vector known to
    work when the constraints forbid the drawn one."""
    got = _solve_layouts(spec, skel, ranks, rng, n, **kw)
    if not got:
        fallback = satisfiable_ranks(spec, skel)
        if fallback is not None:
            got = _solve_layouts(spec, skel, fallback, rng, n, **kw)
    return got


def _solve_layouts(spec, skel, ranks, rng, n, **kw) -> list[Instance]:
    options = layout_options(spec, skel, ranks) or [{}]
    order = [int(i) for i in rng.permutation(len(options))] if len(options) > 1 else [0]
    for i in order[:LAYOUT_TRIES]:
        got = solve_shapes(spec, skel, ranks, rng, n, layout=options[i], **kw)
        if got:
            return got
    return []
