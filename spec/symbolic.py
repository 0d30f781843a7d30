"""Symbolic instances: an op's structure made concrete, its numbers left to z3.

A *skeleton* fixes an op's structure (operand element types, the result
element types a program states, enum/bool attribute values, region bodies);
a *layout* fixes the rest of the structure the op's hints leave open
(variadic counts, array lengths, ranks of results the program states); a
*symbolic instance* adds z3 integers for every dimension size and integer
attribute.  The op's own constraint functions, evaluated on it, yield z3
formulas.  Two readers build on this, each on its own: the proofs of
`check-spec` (spec/checks.py) and the generators, which solve the same
formulas for programs (generators/solve.py).  Floor 1: spec and z3 only.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Iterator

import z3

from .dsl import (BoolAttr, EnumAttr, EnumListAttr, Function, I64ArrayAttr, I64MatrixAttr, Instance, IntAttr, OpSpec,
                  ReplicaGroupsAttr, grid_vars, is_symbolic, Collective, Position, symbolic_grid)
from .grid import SymbolicGrid
from .types import ElementType, TensorType, TupleType


def _named(t: ElementType) -> str:
    """A case's `dtype` for element type `t`: its name, or a quantized type's
    family (quant_i8_f32_axis), as suites name quantized cases."""
    if getattr(t, "is_quantized", False):
        from .quantized import family_name
        return family_name(t)
    return t.name


@dataclass(frozen=True)
class Skeleton:
    """(op, operand element types, program-given result element types,
    enum/bool/structural-int attributes, region bodies).  A variadic operand
    has one element type here, shared by its members (a `Layout` may give
    its last member another, for negative cases)."""

    op: str
    operand_types: tuple[ElementType, ...]          # one per declared operand, table order
    result_types: tuple[tuple[str, ElementType], ...] = ()  # results in result_from_program
    attrs: tuple[tuple[str, object], ...] = ()      # chosen enum/bool values; None = left out
    regions: tuple[tuple[str, str], ...] = ()       # region name -> body name

    @property
    def attr_dict(self) -> dict:
        return dict(self.attrs)

    @property
    def result_type_dict(self) -> dict:
        return dict(self.result_types)

    def dtype(self, spec: OpSpec) -> str:
        """The case's principal element type: the first operand whose table
        offers a choice (select's `pred` is always i1, so `on_true` names it)."""
        for o, t in zip(spec.operands, self.operand_types):
            if len(o.types) > 1:
                return _named(t)
        if self.result_types:   # if/case: the predicate is i1, the program states what flows
            return _named(self.result_types[0][1])
        if not self.operand_types:   # no operands (replica_id): the type its Outputs table fixes
            return spec.results[0].types[0].name
        return self.operand_types[0].name

    def label(self) -> str:
        parts = [",".join(t.name for t in self.operand_types)]
        if self.result_types:
            parts.append("->" + ",".join(t.name for _, t in self.result_types))
        parts += [f"{k}={v}" for k, v in self.attrs if v is not None]
        parts += [f"{k}={v}" for k, v in self.regions]
        return f"{self.op}({' '.join(parts)})"


def structural_attributes(spec: OpSpec):
    """Attributes the skeleton fixes: enum and bool kinds, and integers whose
    `choices` the op lists (get_tuple_element's `index` decides a type);
    other integers and array entries are solved."""
    return [a for a in spec.attributes
            if isinstance(a.kind, (EnumAttr, BoolAttr, EnumListAttr)) or (isinstance(a.kind, IntAttr) and a.choices)]


def attribute_options(attr) -> list:
    if isinstance(attr.kind, BoolAttr):
        vals = list(attr.choices) if attr.choices else [False, True]
    elif isinstance(attr.kind, IntAttr):
        vals = list(attr.choices)
    else:
        vals = list(attr.choices) if attr.choices else list(attr.kind.values)
    if attr.optional:
        vals.append(None)
    return vals


COVER_LIMIT_STRUCTURED = 400   # ops with structure hints: each skeleton costs its layouts too (gather: 1,900)
COVER_LIMIT = 12000   # tables whose product is larger are covered, not multiplied out (compare: 10830)


def candidates(spec: OpSpec) -> Iterator[Skeleton]:
    """The product of the tables (before pruning by constraints) — or, when
    it exceeds `COVER_LIMIT` (scatter: inputs × indices × updates element
    types × two flags × seven bodies), a covering set: every value of every
    axis occurs, the other axes in tune with it (each operand takes the
    varied element type where its table has it, else its first — and once
    alone, the other axes at their first value).  Region
    bodies never change a constraint (only the signature does), so they are
    an axis like any other.  An operand whose element type the constraints
    tie to another's (`Operand.types_of`) is no axis: it takes that one's."""
    prog_results = [r for r in spec.results if r.name in spec.result_from_program]
    position = {o.name: i for i, o in enumerate(spec.operands)}
    tied = {i: position[o.types_of] for i, o in enumerate(spec.operands) if o.types_of}
    axes = ([("operand", i, o.types) for i, o in enumerate(spec.operands) if i not in tied]
            + [("result", r.name, r.types) for r in prog_results]
            + [("attr", a.name, tuple(attribute_options(a))) for a in structural_attributes(spec)]
            + [("region", g.name, tuple(g.bodies) or (None,)) for g in spec.regions])

    def skeleton(values):
        free = {i: v for (k, i, _), v in zip(axes, values) if k == "operand"}
        ops = tuple(free[tied.get(i, i)] for i in range(len(spec.operands)))
        res = tuple((n, v) for (k, n, _), v in zip(axes, values) if k == "result")
        attrs = tuple((n, v) for (k, n, _), v in zip(axes, values) if k == "attr")
        regs = tuple((n, v) for (k, n, _), v in zip(axes, values) if k == "region")
        return Skeleton(spec.mnemonic, ops, res, attrs, regs)

    total = 1
    for _, _, vals in axes:
        total *= len(vals)
    if total <= (COVER_LIMIT_STRUCTURED if spec.structured else COVER_LIMIT):
        for values in itertools.product(*(vals for _, _, vals in axes)):
            yield skeleton(values)
        return
    seen = set()
    for j, (kind, _, vals) in enumerate(axes):
        for v in vals:
            values = []
            for i, (k2, _, vals2) in enumerate(axes):
                if i == j:
                    values.append(v)
                elif kind in ("operand", "result") and k2 in ("operand", "result") and v in vals2:
                    values.append(v)
                else:
                    values.append(vals2[0])
            # ... and the same value on its axis alone (the others at their first):
            # mismatched element types are what "same element type" rules break.
            alone = [v if i == j else vals2[0] for i, (_, _, vals2) in enumerate(axes)]
            for sk in (skeleton(values), skeleton(alone)):
                if sk not in seen:
                    seen.add(sk)
                    yield sk


@dataclass
class Symbolic:
    """An instance with z3 numbers, and what `infer` said about its results."""

    inst: Instance
    dims: list = field(default_factory=list)         # every z3 dim variable (operands, results)
    attr_vars: dict = field(default_factory=dict)    # "name" or "name[i]" -> z3 Int
    inferred: dict | None = None                     # result name -> TensorType (symbolic dims) or None
    layout: dict = field(default_factory=dict)       # the structure chosen: counts, lengths, result ranks
    attr_ranges: dict = field(default_factory=dict)  # attr_vars key -> (lo, hi) where the kind fixes it (i1 arrays)

    def tensors(self):
        for v in list(self.inst.operands.values()) + list(self.inst.results.values()):
            yield from tensors_in(v)


def tensors_in(v):
    if isinstance(v, TensorType):
        yield v
    elif isinstance(v, TupleType):
        for t in v.types:
            yield from tensors_in(t)
    elif isinstance(v, (list, tuple)):
        for t in v:
            yield from tensors_in(t)


def constraint_exprs(spec: OpSpec, inst: Instance) -> list[tuple[str, object]]:
    """(label, bool or z3 expression) per constraint; a constraint that raises
    on this structure counts as violated (as `OpSpec.violated` does)."""
    out = []
    for c in spec.constraints:
        try:
            e = c(inst)
        except (IndexError, KeyError, TypeError, ValueError, ZeroDivisionError, AttributeError):
            e = False
        if not is_symbolic(e):
            e = bool(e)
        out.append((c.__name__, e))
    return out


def _dims(prefix: str, name: str, rank: int) -> tuple:
    return tuple(z3.Int(f"{prefix}{name}_{i}") for i in range(rank))


def _fresh(prefix: str, name: str, t):
    """A type of the same structure as `t` (tensor, tuple, list) with fresh z3 dims."""
    if isinstance(t, TensorType):
        return TensorType(_dims(prefix, name, t.rank), t.element_type)
    if isinstance(t, TupleType):
        return TupleType(tuple(_fresh(prefix, f"{name}.{i}", m) for i, m in enumerate(t.types)))
    return [_fresh(prefix, f"{name}.{i}", m) for i, m in enumerate(t)]


LAYOUT_LIMIT = 48


def layout_options(spec: OpSpec, skel: Skeleton, ranks, limit: int = LAYOUT_LIMIT) -> list[dict]:
    """The structures the hints offer at these operand ranks: every
    combination of the candidates of each hint that offers more than one
    (variadic counts, array lengths, program-stated result ranks), first
    candidates first; at most `limit`.  Hints with one candidate (derived
    ones, e.g. "as many start indices as the operand's rank") are left to
    `symbolic_instance`, which evaluates them on the structure chosen."""
    base = symbolic_instance(spec, skel, ranks, full=True)
    inst = base.inst
    slots = []
    for o in spec.operands:
        if o.variadic or o.tuple_members:
            c = o.counts(inst)
            if len(c) > 1:
                slots.append((("members" if o.tuple_members else "counts"), o.name, c))
    for a in spec.attributes:
        if isinstance(a.kind, I64ArrayAttr) and a.name not in skel.attr_dict:
            c = a.lengths(inst)
            if len(c) > 1:
                slots.append(("lengths", a.name, c))
        elif isinstance(a.kind, ReplicaGroupsAttr):   # (rows, columns) of a 2-D groups attribute
            c = a.lengths(inst)
            if len(c) > 1:
                slots.append(("group_shapes", a.name, c))
    for r in spec.results:
        if r.name in base.layout["result_ranks"]:
            c = r.ranks(inst)
            if len(c) > 1:
                slots.append(("result_ranks", r.name, c))
    out = []
    for combo in itertools.product(*(c for _, _, c in slots)):
        lay: dict = {}
        for (kind, name, _), v in zip(slots, combo):
            lay.setdefault(kind, {})[name] = v
        out.append(lay)
        if len(out) >= limit:
            break
    return out


def symbolic_instance(spec: OpSpec, skel: Skeleton, ranks, prefix: str = "",
                      result_override: dict | None = None, full: bool = False, layout: dict | None = None):
    """Instance with z3 dims for operands (ranks given, one per declared
    operand) and results (rank from infer).  `result_override` {name:
    (element type, rank)} sets a result freely (negative cases, uniqueness
    proofs).  `layout` overrides the structure hints: {"counts": {operand:
    n}, "lengths": {attribute: n}, "result_ranks": {result: r},
    "result_counts": {variadic result with a `count` hint: n}, "result_mixed":
    {such a result: element type of its last member}, "mixed":
    {variadic operand: element type of its last member}, "members": {tuple operand:
    member count}, "regions": {region: (input types, output types)},
    "region_counts": {variadic region: number of functions}} (a "regions"
    entry of a variadic region sets its last function); hints
    not overridden take their first candidate.  Returns the Instance, or a
    `Symbolic` when `full`; None if infer cannot be evaluated here."""
    layout = layout or {}
    chosen_layout = {"counts": {}, "lengths": {}, "result_ranks": {}, "result_counts": {}}
    operands: dict = {}
    partial = spec.instance(operands, {}, {})
    fixed = [(o, t, r) for o, t, r in zip(spec.operands, skel.operand_types, ranks)]
    for o, t, r in fixed:                      # fixed operands first: variadic hints read them
        if o.variadic:
            continue
        r = o.rank if o.rank is not None else r
        if o.name in layout.get("members", {}) or getattr(o, "tuple_members", False):
            n = layout.get("members", {}).get(o.name, o.counts(partial)[0])
            chosen_layout["counts"][o.name] = n
            operands[o.name] = TupleType(tuple(TensorType(_dims(prefix, f"{o.name}.{k}", r), t) for k in range(n)))
        else:
            operands[o.name] = TensorType(_dims(prefix, o.name, r), t)
        partial = spec.instance(dict(operands), {}, {})
    for o, t, r in fixed:
        if not o.variadic:
            continue
        r = o.rank if o.rank is not None else r
        n = layout.get("counts", {}).get(o.name, o.counts(partial)[0])
        chosen_layout["counts"][o.name] = n
        members = [TensorType(_dims(prefix, f"{o.name}{k}", r), t) for k in range(n)]
        mixed = layout.get("mixed", {}).get(o.name)
        if mixed is not None and members:
            members[-1] = TensorType(members[-1].shape, mixed)
        operands[o.name] = members
        partial = spec.instance(dict(operands), {}, {})
    operands = {o.name: operands[o.name] for o in spec.operands}   # table order
    attrs, attr_vars, attr_ranges = {}, {}, {}
    chosen = skel.attr_dict
    for a in spec.attributes:
        if a.name in chosen:
            if chosen[a.name] is not None:
                attrs[a.name] = chosen[a.name]
        elif isinstance(a.kind, IntAttr) and not a.choices:
            attr_vars[a.name] = attrs[a.name] = z3.Int(f"{prefix}attr_{a.name}")
        elif isinstance(a.kind, ReplicaGroupsAttr):   # rows × columns of process ids (collectives)
            rows, cols = layout.get("group_shapes", {}).get(a.name, a.lengths(partial)[0])
            chosen_layout.setdefault("group_shapes", {})[a.name] = (rows, cols)
            grid_rows = tuple(tuple(z3.Int(f"{prefix}attr_{a.name}_{i}_{j}") for j in range(cols))
                              for i in range(rows))
            for i, row in enumerate(grid_rows):
                for j, v in enumerate(row):
                    attr_vars[f"{a.name}[{i}][{j}]"] = v
            attrs[a.name] = grid_rows
        elif isinstance(a.kind, I64MatrixAttr):   # rows of (low, high)
            n = layout.get("lengths", {}).get(a.name, a.lengths(partial)[0])
            chosen_layout["lengths"][a.name] = n
            rows = tuple((z3.Int(f"{prefix}attr_{a.name}_{i}_0"), z3.Int(f"{prefix}attr_{a.name}_{i}_1"))
                         for i in range(n))
            for i, row in enumerate(rows):
                for j, v in enumerate(row):
                    attr_vars[f"{a.name}[{i}][{j}]"] = v
            attrs[a.name] = rows
        elif isinstance(a.kind, I64ArrayAttr):
            n = layout.get("lengths", {}).get(a.name, a.lengths(partial)[0])
            chosen_layout["lengths"][a.name] = n
            entries = tuple(z3.Int(f"{prefix}attr_{a.name}_{i}") for i in range(n))
            for i, v in enumerate(entries):
                attr_vars[f"{a.name}[{i}]"] = v
                if getattr(a.kind, "entry_range", None):
                    attr_ranges[f"{a.name}[{i}]"] = a.kind.entry_range
            attrs[a.name] = entries
        partial = spec.instance(operands, dict(attrs), {})   # later length hints see earlier arrays
    prog = skel.result_type_dict
    placeholder = {name: TensorType((), et) for name, et in prog.items()}
    # A region's signature may read a result type the program states (the
    # branches of `if` return what its results are): the placeholders say it.
    partial = spec.instance(operands, attrs, placeholder)
    regions = {}
    for g in spec.regions:
        body = dict(skel.regions).get(g.name)
        ins, outs = layout.get("regions", {}).get(g.name) or g.signature(partial)
        fn = Function(tuple(ins), tuple(outs), body)
        if g.variadic:   # case's branches: one signature (a layout's override: the last one's), a counted number
            n = layout.get("region_counts", {}).get(g.name, g.counts(partial)[0])
            chosen_layout.setdefault("region_counts", {})[g.name] = n
            ins0, outs0 = g.signature(partial)
            fn = [Function(tuple(ins0), tuple(outs0), body) for _ in range(n - 1)] + [fn] if n else []
        regions[g.name] = fn
    inst = spec.instance(operands, attrs, placeholder, regions)
    try:
        inferred = spec.infer(inst)
    except Exception:  # infer branches on a symbolic number: no symbolic inference for this op
        inferred = None
    results = {}
    override = result_override or {}
    first_type = skel.operand_types[0] if skel.operand_types else None
    for r in spec.results:
        if r.name in override:
            if isinstance(override[r.name], (TupleType, list)):   # a whole structure (tuple results)
                results[r.name] = _fresh(prefix, r.name, override[r.name])
                continue
            et, rank = override[r.name]
            results[r.name] = TensorType(_dims(prefix, r.name, rank), et)
            continue
        if r.name in spec.shape_from_program or inferred is None or r.name not in inferred:
            et = prog.get(r.name, inferred[r.name].element_type if inferred and isinstance(
                inferred.get(r.name), TensorType) else first_type)
            cands = r.ranks(inst) or ((max(ranks) if len(ranks) else 0),)
            rank = layout.get("result_ranks", {}).get(r.name, cands[0])
            chosen_layout["result_ranks"][r.name] = rank
            results[r.name] = TensorType(_dims(prefix, r.name, rank), et)
            continue
        got = inferred[r.name]
        if isinstance(got, TensorType) and r.name in prog:
            got = TensorType(got.shape, prog[r.name])
        if r.variadic and r.count is not None and isinstance(got, list):   # a count the layout may set
            n = layout.get("result_counts", {}).get(r.name, len(got))
            chosen_layout["result_counts"][r.name] = n
            got = (got + got[-1:] * n)[:n] if got else got
            mixed = layout.get("result_mixed", {}).get(r.name)
            if mixed is not None and got:   # the last member of another element type
                got = got[:-1] + [TensorType(got[-1].shape, mixed)]
        results[r.name] = _fresh(prefix, r.name, got)
    on_grid = isinstance(spec.semantics, (Collective, Position))   # the grid is an unknown too (dsl.symbolic_grid)
    inst = spec.instance(operands, attrs, results, regions, grid=symbolic_grid() if on_grid else None)
    if not full:
        return inst
    s = Symbolic(inst, attr_vars=attr_vars, inferred=inferred, layout=chosen_layout, attr_ranges=attr_ranges)
    s.dims = [d for t in s.tensors() for d in t.shape]
    if isinstance(inst.grid, SymbolicGrid):
        # The grid is an unknown of collectives (dsl.symbolic_grid: sizes r + 1, p + 1): r, p ≥ 0 with the
        # dims (proofs), and at most GRID_RANGE[1] + 1 each where generators solve (budget: attr ranges).
        for name, v in zip(("grid.num_replicas", "grid.num_partitions"), grid_vars()):
            s.dims.append(v)
            s.attr_vars[name] = v
            s.attr_ranges[name] = GRID_RANGE
    return s


GRID_RANGE = (0, 3)   # generators' grids: 1..4 replicas × 1..4 partitions (z3 holds size − 1)


def concrete_regions(regions: dict, num) -> dict:
    """Region values with `num` applied to the dims of their types (while's
    `cond` and `body` take the operands' types, symbolic dims included);
    a variadic region's list function by function."""
    def function(fn):
        return Function(concrete_value(tuple(fn.inputs), num), concrete_value(tuple(fn.outputs), num), fn.body)
    return {k: [function(f) for f in v] if isinstance(v, list) else function(v) for k, v in regions.items()}


def region_layouts(spec: OpSpec, inst, other_type, keep_outputs=lambda fn: False):
    """Layouts whose region blocks break the signature the spec wants, one
    or two per region (a variadic region's last function), yielded region
    by region (`other_type` may draw from a generator: lazily, in order):
    arguments of another element type (`other_type(current)` picks it) and
    outputs too, unless `keep_outputs(fn)` (a predicate keeps its i1); a
    block of no arguments (if's branches) gets one, or outputs of another
    type."""
    for g in spec.regions:
        fn = inst.regions[g.name]
        if isinstance(fn, list):
            if not fn:
                continue
            fn = fn[-1]
        if not fn.inputs:
            other = other_type(fn.outputs[0].element_type if fn.outputs else None)
            yield {"regions": {g.name: ((TensorType((), other),), tuple(fn.outputs))}}
            yield {"regions": {g.name: ((), tuple(TensorType(t.shape, other) for t in fn.outputs))}}
            continue
        other = other_type(fn.inputs[0].element_type)
        ins = tuple(TensorType(t.shape, other) for t in fn.inputs)
        outs = tuple(fn.outputs) if keep_outputs(fn) else tuple(TensorType(t.shape, other) for t in fn.outputs)
        yield {"regions": {g.name: (ins, outs)}}


def concrete_value(v, num):
    """A symbolic operand/attribute/result value with `num` applied to every
    z3 number: tensors (dims), tuples and lists of them, array attributes."""
    if isinstance(v, TensorType):
        return TensorType(tuple(num(d) for d in v.shape), v.element_type)
    if isinstance(v, TupleType):
        return TupleType(tuple(concrete_value(t, num) for t in v.types))
    if isinstance(v, list):
        return [concrete_value(t, num) for t in v]
    if isinstance(v, tuple):
        return tuple(concrete_value(t, num) for t in v)
    return num(v) if is_symbolic(v) else v


def later_structures(spec: OpSpec, skel: Skeleton) -> list[tuple[list, dict]]:
    """(operand ranks, layout) where the constraints of a later spec than
    the seed (`OpSpec.later`) can be broken: the structure of each
    `Exercise.later` corner, and that structure with one list of the later
    spec's inputs (`Attribute.since`) one entry longer or shorter than there
    (sizes that disagree: gather's v1.20 C16).  The seed's structures hold
    those lists empty, so these are the only places the later rules bite."""
    since = [a.name for a in spec.attributes if a.since and isinstance(a.kind, I64ArrayAttr)]
    out = []
    for corner in spec.exercise.later:
        ranks, layout = list(corner.ranks), corner.layout or {}
        out.append((ranks, layout))
        try:
            chosen = symbolic_instance(spec, skel, ranks, full=True, layout=layout).layout["lengths"]
        except (AttributeError, IndexError, KeyError, TypeError, ValueError):
            continue
        for name in since:
            n = chosen.get(name, 0)
            for alt in (n + 1, n - 1):
                if alt >= 0:
                    out.append((ranks, {**layout, "lengths": {**layout.get("lengths", {}), name: alt}}))
    return out
