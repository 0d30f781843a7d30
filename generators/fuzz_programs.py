"""Random programs of several ops, drawn by hypothesis, for `shlo-conform fuzz`.

A program is a straight-line DAG: @main's arguments form a pool of values;
each step draws an op, takes its operands from the pool (or from new @main
arguments), and adds its results to the pool; @main returns every result no
later step reads.  Nothing here names an op: which ops can take part is read
from their declarations (`fuzzable`), and every step is solved and checked
with the op's own constraints — z3 (generators/solve.py) picks attributes
and result shapes with the operand shapes pinned to those of the values the
step reads, so a step the constraints forbid is dropped, never emitted.

Why hypothesis draws everything (op, operands, skeleton, layout, the solver's
steering seed, each input element as an index into the type's special values
followed by random ones): its shrinker then reduces a failing program
towards fewer steps, smaller shapes and the first special values (+0) — the
minimal program and inputs `fuzz` writes as a case.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from hypothesis import strategies as st

from ..spec.dsl import OpSpec
from ..spec.ops import OPS
from ..spec.symbolic import candidates, layout_options, symbolic_instance
from ..spec.types import ELEMENT_TYPES, ElementType, TensorType
from . import emit, regions, values
from .solve import solve_shapes

# Element types a program's arguments take (ops such as convert or compare
# bring others in).  The narrow f8 formats and complex stay with the suite.
ARGUMENT_TYPES = ("f32", "f16", "bf16", "f64", "si32", "si8", "ui32", "i1")
MAX_STEPS = 6
MAX_ARGS = 3
MAX_RANK = 3
MAX_DIM = 4
MAX_ELEMENTS = 24        # per tensor the solver makes (a fuzz program is small; shrinking reads it)
RANDOM_POOL = 16         # random values after the specials in each argument's value pool


def fuzzable(spec: OpSpec) -> str | None:
    """None when fuzz can place the op in a program, else why not — read
    from the declaration: tensor operands and results only (no tokens,
    tuples, constants or literal operands), no index operands (their values
    have meaning: the suite's index cases cover them), a result type the
    seed fixes, regions only with pairwise bodies (reduce's add/max …) that
    read nothing from @main, and element-wise, data-movement or accumulating
    semantics (no control flow, host effects or statistics)."""
    if not spec.operands:
        return "it takes no operands"
    if not getattr(spec.semantics, "composable", False):
        return (f"its semantics ({type(spec.semantics).__name__}) are not a function of its operands' values "
                "alone (spec.dsl: `composable`)")
    if any(o.constant or o.literal or o.tuple_members for o in spec.operands):
        return "an operand is a constant, a literal or a tuple"
    if not all(isinstance(t, ElementType) for x in spec.operands + spec.results for t in x.types):
        return "an operand or result is not a tensor"
    if spec.exercise.indices is not None:
        return "it has index operands"
    if spec.results_unconstrained:
        return "the seed fixes no result type"
    for g in spec.regions:
        if g.variadic or not set(g.bodies) & set(regions.PAIRWISE):
            return f"region {g.name} has no pairwise body"
    return None


def fuzzable_ops(names: list[str] | None = None) -> list[str]:
    return [n for n in (names or sorted(OPS)) if fuzzable(OPS[n]) is None]


@lru_cache(maxsize=None)
def _skeletons(op: str) -> dict:
    """first operand's element type -> the op's skeletons, in table order;
    region bodies limited to the pairwise ones."""
    out: dict = {}
    for sk in candidates(OPS[op]):
        if any(b not in regions.PAIRWISE for _, b in sk.regions):
            continue
        out.setdefault(sk.operand_types[0], []).append(sk)
    return out


@dataclass
class Step:
    spec: OpSpec
    inst: object
    present: set
    uses: list            # SSA names of the operands, table order (variadic flattened)
    results: list         # [(name, TensorType)]


@dataclass
class FuzzProgram:
    args: list                                   # TensorType per @main argument
    steps: list
    inputs: list = field(default_factory=list)   # arrays, one per argument
    only: str | None = None                      # return this result alone (`cone`)

    @property
    def outputs(self) -> list:
        """[(name, type, producing op)] of the results no later step reads."""
        read = {u for s in self.steps for u in s.uses}
        return [(n, t, s.spec.mnemonic) for s in self.steps for n, t in s.results
                if (n == self.only if self.only else n not in read)]

    @property
    def ops(self) -> list[str]:
        return sorted({s.spec.mnemonic for s in self.steps})

    def cone(self, output: int) -> "FuzzProgram":
        """The program cut down to what output `output` depends on: the
        steps it reads (transitively) and their @main arguments, renumbered;
        it returns that output alone.  (The caller checks the cut program
        still fails: a compiler may fuse across outputs.)"""
        name = self.outputs[output][0]
        producer = {n: s for s in self.steps for n, _ in s.results}
        keep, todo = set(), [name]
        while todo:
            s = producer.get(todo.pop())
            if s is not None and id(s) not in keep:
                keep.add(id(s))
                todo += s.uses
        steps = [s for s in self.steps if id(s) in keep]
        used = sorted({int(u[4:]) for s in steps for u in s.uses if u.startswith("%arg")})
        rename = {f"%arg{old}": f"%arg{new}" for new, old in enumerate(used)}
        cut = [Step(s.spec, s.inst, s.present, [rename.get(u, u) for u in s.uses], s.results) for s in steps]
        return FuzzProgram([self.args[i] for i in used], cut, [self.inputs[i] for i in used], only=name)

    def text(self) -> str:
        sig = ", ".join(f"%arg{i}: {t.mlir}" for i, t in enumerate(self.args))
        lines = [_op_line(s) for s in self.steps]
        outs = self.outputs
        types = ", ".join(t.mlir for _, t, _ in outs)
        return (f"func.func @main({sig}) -> ({types}) {{\n" + "\n".join(lines) + "\n"
                f'  "func.return"({", ".join(n for n, _, _ in outs)}) : ({types}) -> ()\n}}\n')


def _op_line(s: Step) -> str:
    """One op in generic form (emit.program's spelling, for one op among several)."""
    in_types = emit.operand_types(s.spec, s.inst)
    outs = [t for _, t in s.results]
    names = [n for n, _ in s.results]
    base = names[0].split("#")[0]
    lhs = base if len(outs) == 1 else f"{base}:{len(outs)}"
    out_sig = outs[0].mlir if len(outs) == 1 else f"({', '.join(t.mlir for t in outs)})"
    bodies = [regions.render(fn, indent="    ") for fn in emit.region_functions(s.spec, s.inst)]
    regs = " (" + ", ".join(b[1:-1] for b in bodies) + ")" if bodies else ""
    attrs = emit.attribute_text(s.spec, s.inst, s.present)
    return (f'  {lhs} = "stablehlo.{s.spec.mnemonic}"({", ".join(s.uses)}){regs}{attrs} : '
            f"({', '.join(t.mlir for t in in_types)}) -> {out_sig}")


# --------------------------------------------------------------------------
# Drawing
# --------------------------------------------------------------------------

def _draw_step(draw, ops: list[str], pool: list, args: list, inputs: dict, k: int) -> Step | None:
    """Step `k` over the pool [(name, TensorType)], or None when the drawn
    op cannot take these values (the constraints have no model).  New
    @main arguments are appended to `args`, their values to `inputs`."""
    spec = OPS[draw(st.sampled_from(ops))]
    first_name, first = pool[draw(st.integers(0, len(pool) - 1))]
    skels = _skeletons(spec.mnemonic).get(first.element_type)
    if not skels:
        return None
    skel = skels[draw(st.integers(0, len(skels) - 1))]
    rank = first.rank
    ranks = [o.rank if o.rank is not None else rank for o in spec.operands]
    try:
        options = layout_options(spec, skel, ranks) or [{}]
    except Exception:   # a hint that cannot be read at these ranks
        return None
    layout = options[draw(st.integers(0, len(options) - 1))]
    # Operands: the drawn value first; the others from the pool (same element
    # type and rank) or a new @main argument (the solver then picks its
    # shape); an operand of a rank the table fixes (reduce's init values)
    # is always a new argument, so the values the op declares can be given.
    try:
        probe = symbolic_instance(spec, skel, ranks, layout=layout)
    except Exception:   # a hint that cannot be read here
        return None
    chosen: dict = {}       # (operand name, member) -> pool name or None (a new argument)
    for o in spec.operands:
        members = probe.operands[o.name] if o.variadic else [probe.operands[o.name]]
        if len(members) > 3:
            return None
        for m, t in enumerate(members):
            if not chosen and t.rank == rank and t.element_type == first.element_type:
                chosen[(o.name, m)] = first_name
                continue
            if o.rank is not None:
                chosen[(o.name, m)] = None
                continue
            fits = [nm for nm, u in pool if u.element_type == t.element_type and u.rank == t.rank]
            pick = draw(st.integers(0, len(fits)))   # len(fits): a new argument
            chosen[(o.name, m)] = fits[pick] if pick < len(fits) else None
    by_name = dict(pool)
    seed = draw(st.integers(0, 255))

    def pins(sym):
        out = []
        for o in spec.operands:
            members = sym.inst.operands[o.name] if o.variadic else [sym.inst.operands[o.name]]
            for m, t in enumerate(members):
                name = chosen.get((o.name, m))
                if name is not None:
                    out += [d == v for d, v in zip(t.shape, by_name[name].shape)]
        return out

    try:
        got = solve_shapes(spec, skel, ranks, np.random.default_rng(seed), 1, zero_prob=0.0, extra=pins,
                           max_dim=MAX_DIM, max_elements=MAX_ELEMENTS, layout=layout)
    except Exception:   # GenerationError (infer and the constraints disagree: check-spec's
        return None     # business, not fuzz's) or a structure a hint does not fit: the step is dropped
    if not got:
        return None
    inst = got[0]
    if spec.exercise.survey_when and spec.exercise.survey_when(inst):
        return None
    results = []
    for r in spec.results:
        v = inst.results[r.name]
        members = v if isinstance(v, list) else [v]
        if not all(isinstance(t, TensorType) for t in members):
            return None
        results += members
    uses, added, values_of = [], [], {}
    for o in spec.operands:
        members = inst.operands[o.name] if o.variadic else [inst.operands[o.name]]
        for m, t in enumerate(members):
            name = chosen.get((o.name, m))
            given = spec.exercise.operand_values(inst, o.name, m, t, np.random.default_rng(0)) \
                if spec.exercise.operand_values else None
            if name is not None and given is not None:   # a pool value where the op declares the values
                return None
            if name is None:   # a new @main argument; values the op declares for it are fixed
                if given is not None:
                    values_of[len(args) + len(added)] = np.asarray(given).astype(t.element_type.numpy).reshape(t.shape)
                name = f"%arg{len(args) + len(added)}"
                added.append(t)
            uses.append(name)
    for j, t in enumerate(added):   # drawn here, not at the end: dropping a later step keeps these values
        values_of.setdefault(len(args) + j, _draw_values(draw, t))
    args += added
    inputs.update(values_of)
    present = {a.name for a in spec.attributes if not (a.name in skel.attr_dict and skel.attr_dict[a.name] is None)}
    names = [f"%v{k}"] if len(results) == 1 else [f"%v{k}#{j}" for j in range(len(results))]
    return Step(spec, inst, present, uses, list(zip(names, results)))


@st.composite
def programs(draw, ops: list[str]) -> FuzzProgram | None:
    """A program over `ops` (fuzzable ones), inputs included; None when no
    step could be placed (the caller skips it)."""
    et0 = ELEMENT_TYPES[draw(st.sampled_from(ARGUMENT_TYPES))]
    rank = draw(st.integers(0, MAX_RANK))
    shape = tuple(draw(st.integers(1, MAX_DIM)) for _ in range(rank))
    if int(np.prod(shape, dtype=np.int64)) > MAX_ELEMENTS:
        shape = shape[:-1]
    n_args = draw(st.integers(1, MAX_ARGS))
    args = [TensorType(shape, et0)]
    for _ in range(n_args - 1):
        et = ELEMENT_TYPES[draw(st.sampled_from((et0.name,) + ARGUMENT_TYPES))]
        args.append(TensorType(shape, et))
    pool = [(f"%arg{i}", t) for i, t in enumerate(args)]
    inputs: dict = {i: _draw_values(draw, t) for i, t in enumerate(args)}   # argument index -> its values
    steps = []
    for k in range(draw(st.integers(1, MAX_STEPS))):
        s = _draw_step(draw, ops, pool, args, inputs, k)
        if s is None:
            continue
        steps.append(s)
        pool += s.results
    if not steps:
        return None
    prog = FuzzProgram(args, steps)
    prog.inputs = [inputs[i] for i in range(len(args))]
    return prog


def _draw_values(draw, t: TensorType) -> np.ndarray:
    """Each element an index into the type's specials (±0 first) followed by
    random values from a drawn seed: shrinking walks towards +0."""
    et = t.element_type
    pool = values.specials(et)
    rnd = values.random_values(et, np.random.default_rng(draw(st.integers(0, 255))), RANDOM_POOL)
    pool = np.concatenate([pool, rnd]) if not et.is_bool else pool
    n = int(np.prod(t.shape, dtype=np.int64)) if t.shape else 1
    idx = [draw(st.integers(0, len(pool) - 1)) for _ in range(n)]
    return np.asarray(pool[idx]).astype(et.numpy).reshape(t.shape)
