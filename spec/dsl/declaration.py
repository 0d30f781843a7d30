"""An op's declaration: the spec section's tables as records.

`OpSpec` holds what an op section states in the order it reads — Inputs
(`Operand`, `Attribute`, `Region`), Outputs (`Result`), Constraints, type
inference, Semantics — and `Instance` is one op of a program read by those
names, the thing constraints, inference and semantics receive.  The type
groups (`FLOAT`, `INTEGER` …) are the Inputs/Outputs tables' own words.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..exercise import Exercise
from ..grid import SINGLE as SINGLE_GRID
from ..types import (ALL_TYPES, BOOLEAN_TYPES, COMPLEX_TYPES, FLOAT_TYPES, INTEGER_TYPES,
                     SIGNED_TYPES, UNSIGNED_TYPES, ElementType, TensorType, widened_to_v1_20)
from .attributes import Group, I64ArrayAttr, ReplicaGroupsAttr
from .collective import Collective, symbolic_grid
from .constraints import is_symbolic


# Type groups, as the Inputs/Outputs tables name them

BOOLEAN = BOOLEAN_TYPES
SIGNED = SIGNED_TYPES
UNSIGNED = UNSIGNED_TYPES
INTEGER = INTEGER_TYPES
FLOAT = FLOAT_TYPES
COMPLEX = COMPLEX_TYPES
ANY = ALL_TYPES


def _hint(h, op):
    """A structure hint's candidates: an int, a tuple of ints, or a callable
    of the instance so far (operands with concrete ranks) returning either."""
    v = h(op) if callable(h) else h
    if v is None:
        return ()
    return tuple(v) if isinstance(v, (list, tuple, range)) else (v,)


# Rules of an op the spec states outside its numbered constraints, which an invalid case may name as
# `<op>_inputs` (an operand's type or an attribute's kind outside the Inputs table), `<op>_outputs` (a result
# outside the Outputs table) and `<op>_infer` (a result type other than the one type inference gives): a
# verifier refuses such programs as it refuses a broken constraint, and a backend that accepts one is as wrong.
UNNUMBERED_RULES = ("inputs", "outputs", "infer")


def unnumbered(label: str) -> bool:
    """Is `label` one of an op's unnumbered rules (`UNNUMBERED_RULES`)?"""
    return label.rsplit("_", 1)[-1] in UNNUMBERED_RULES


def type_rule(label: str) -> bool:
    """Is `label` a rule of v1.20's quantized types (spec/quantized.py
    `quantized_c1` … `quantized_c13`)?  No op's constraint: a program breaks
    it by holding such a type anywhere (a tuple's member too), and the
    oracle's reader refuses it naming the rule (oracle/functions.py
    `_check_quantized`)."""
    from ..quantized import CONSTRAINTS
    return label in {c.__name__ for c in CONSTRAINTS}


def constraint_named(label: str) -> str | None:
    """The constraint the oracle's rejection names for a program breaking
    `label`: the label itself, or none for an unnumbered rule (the oracle
    checks the tables and inference before any constraint, naming none)."""
    return None if unnumbered(label) else label


@dataclass(frozen=True)
class Operand:
    """An input value of the op (the Inputs table's (I<n>) rows that are values).

    `rank`: a rank the table itself fixes ("0-dimensional tensor").
    `count` (variadic only): the number of members, a structure *hint* for
    generators and proofs — an int, a tuple of candidates, or a callable of
    the instance (its fixed operands have concrete ranks).  The constraint
    that ties the count down (e.g. dynamic_slice C2) still decides; a hint
    only says where to look.
    `constant`: the value is written as an attribute of the op (constant's
    `value`), not passed as an argument of @main.
    `types_of`: another operand whose element type the constraints make this
    one's (reduce's `init_values` and `inputs`, C2): skeletons tie the two
    instead of enumerating every mismatch (all invalid); negative cases
    still break the tie through `mixed` layouts and result types."""

    name: str
    types: tuple[ElementType, ...]
    variadic: bool = False
    rank: int | None = None
    count: Any = None
    constant: bool = False
    tuple_members: bool = False   # a tuple of `count` tensors of `types` (get_tuple_element's operand)
    types_of: str | None = None   # skeletons give it this operand's element type (see below)
    literal: bool = False         # a "tensor constant" operand (rng's `shape`): @main builds it with
                                  # stablehlo.constant instead of taking it as an argument

    def counts(self, op) -> tuple:
        return _hint(self.count, op) or (1, 2)

    @property
    def types_v1_20(self) -> tuple[ElementType, ...]:
        """The table as v1.20 reads it (`spec.types.widened_to_v1_20`):
        what the oracle accepts.  `types` stays the seed's, which the suite's
        skeletons enumerate, so the seed's cases keep their bytes."""
        return widened_to_v1_20(self.types)


@dataclass(frozen=True)
class Attribute:
    """An input attribute: name, value kind, the values a generator may choose,
    and whether a program may leave it out (then `default` applies)."""

    name: str
    kind: Any
    choices: tuple = ()
    default: Any = None
    optional: bool = False
    length: Any = None     # I64ArrayAttr: size hint (int | tuple | callable(op)), see Operand.count
    group: str | None = None  # written inside OpSpec.groups[group]
    # The spec version that added the input ("v1.20": gather's batching dims), "" for the seed's.  The
    # seed's draws hold it at its hint (gather's: empty, as the seed has it); only the op's
    # `Exercise.later` structures vary it, on streams of their own, so the seed's cases stay as they were.
    since: str = ""

    def lengths(self, op) -> tuple:
        return _hint(self.length, op) or (1,)


@dataclass(frozen=True)
class Spelled:
    """An attribute value written as this text, whatever the attribute's
    kind: an invalid case's attribute of another kind than its Inputs row
    names (`<op>_inputs`: a symbol reference where the row asks for a
    string).  The generators write it; no reader makes one."""

    text: str


@dataclass(frozen=True)
class Result:
    """An output.  `rank`: a hint for results whose shape the program states
    (`OpSpec.shape_from_program`): int, tuple or callable(op), as for
    `Operand.count`.  `fixed_rank`: a rank the Outputs table fixes."""

    name: str
    types: tuple[ElementType, ...]
    variadic: bool = False
    rank: Any = None
    fixed_rank: int | None = None
    count: Any = None   # variadic results: the number infer gives, which negative cases and proofs vary

    @property
    def types_v1_20(self) -> tuple[ElementType, ...]:
        """As `Operand.types_v1_20`."""
        return widened_to_v1_20(self.types)

    def ranks(self, op) -> tuple:
        if self.fixed_rank is not None:
            return (self.fixed_rank,)
        return _hint(self.rank, op)


@dataclass(frozen=True)
class Region:
    """A function-valued input (scatter's `update_computation`, later reduce's
    `body`, sort's `comparator` …).  The instance holds a `Function` for it:
    constraints read its `inputs` / `outputs` types; semantics call it.

    `signature(op) -> (input types, output types)` is the type the spec
    requires (e.g. scatter C15), used by generators to build a valid body;
    `bodies` names the computations a generator may write in it (templates
    rendered by generators/regions.py)."""

    name: str
    signature: Callable
    bodies: tuple[str, ...] = ()
    variadic: bool = False   # a variadic number of functions (case's `branches`): the instance holds a list
    count: Any = None        # variadic only: the number of functions, a hint as `Operand.count`

    def counts(self, op) -> tuple:
        return _hint(self.count, op) or (2,)


@dataclass
class Function:
    """A region's value: its block's argument and result types, the name of
    the body a generator wrote (None when parsed from a program), and — in
    the oracle — `call(*arrays) -> list of arrays`, the body executed, and
    `pairwise`: when the block applies one op to each pair (argument k,
    argument N+k) and returns the N results in order (a sum, a product, a
    maximum … reduce's usual bodies), the N op mnemonics; else None.  What a
    reduction may compute depends on that algebra (spec/schedule.py).

    `expect` (oracle) runs the block on whole values — the oracle's
    expectations, tolerances and alternatives included — where `call` gives
    primary arrays only: control flow (`ControlFlow`) passes values through
    its regions unchanged, so what a branch or loop body computes keeps
    every allowance its ops have."""

    inputs: tuple
    outputs: tuple
    body: str | None = None
    call: Callable | None = None
    pairwise: tuple | None = None   # set by the oracle's reader: see below
    expect: Callable | None = None  # oracle: `expect(*values) -> values`, the block run on whole values
    # oracle: the reader's block (args, steps with their Instances, returns, constants, bound captures), for
    # ops that recognise a body (sort's comparator as one key comparison: spec/ops/sort.py)
    block: Any = field(default=None, compare=False, repr=False)

    def __repr__(self) -> str:
        ins = ", ".join(t.mlir for t in self.inputs)
        outs = ", ".join(t.mlir for t in self.outputs)
        return f"{self.body or 'fn'}(({ins}) -> ({outs}))"


class Instance:
    """One op in a program: its operand, attribute and result values by name.

    Structure is concrete; dimension sizes and integer attribute entries may
    be z3 expressions.  Constraints read `op.lhs`, `op.result`,
    `op.comparison_direction` … by the spec's names.
    """

    def __init__(self, spec: "OpSpec", operands: dict, attributes: dict, results: dict,
                 regions: dict | None = None, grid=None):
        self.spec = spec
        self.operands = dict(operands)
        self.attributes = {a.name: a.default for a in spec.attributes}
        self.attributes.update(attributes)
        self.results = dict(results)
        self.regions = dict(regions or {})
        # The process grid the program runs on (spec/grid.py): the collectives'
        # constraints read it (all_reduce C2: "size(replica_groups)" is
        # num_replicas or num_processes), so it is part of the instance, not of
        # the op.  One process unless the program reader / generators say
        # otherwise; in z3 mode a `grid.SymbolicGrid` (sizes are z3 integers).
        if grid is None:
            grid = symbolic_grid() if isinstance(spec.semantics, Collective) and _any_symbolic(
                self.operands, self.attributes, self.results) else SINGLE_GRID
        self.grid = grid

    def __getattr__(self, name: str):
        for table in ("operands", "attributes", "results", "regions"):
            d = self.__dict__.get(table, {})
            if name in d:
                return d[name]
        raise AttributeError(f"{self.__dict__.get('spec').mnemonic if 'spec' in self.__dict__ else '?'} has no input or output {name!r}")

    def __repr__(self) -> str:
        ops = ", ".join(f"{k}: {v}" for k, v in self.operands.items())
        res = ", ".join(f"{k}: {v}" for k, v in self.results.items())
        attrs = ", ".join(f"{k}={v}" for k, v in self.attributes.items() if v is not None)
        regs = ", ".join(f"{k}={v!r}" for k, v in self.regions.items())
        return f"{self.spec.mnemonic}({ops}{'; ' + attrs if attrs else ''}{'; ' + regs if regs else ''}) -> {res}"


@dataclass(frozen=True)
class Scoring:
    """How the runner must run an op's cases on a backend, declared by the
    op (shlo_conform/pipeline/planning.py reads it; nothing there names an op):
    `alone` — why its programs never share a merged module with others (an
    implementation may answer differently inside another module);
    `fresh_worker` — why each of its programs is compiled by a worker that
    compiled nothing before (an answer that depends on the process's
    compile history).  Empty: no such rule."""
    alone: str = ""
    fresh_worker: str = ""


@dataclass(frozen=True)
class OpSpec:
    """One op of the spec: Inputs, Outputs, Constraints, type inference, Semantics.

    `constraints` are the `<op>_c<N>` functions in the seed's numbering.
    `infer(op)` returns {result name: TensorType} from operands and
    attributes; a result listed in `result_from_program` takes its element
    type from the program (convert, bitcast_convert), and `infer` returns it
    with the element type the program gave.  A result in
    `shape_from_program` (reshape, iota, broadcast_in_dim) has a shape the
    constraints relate to the operands without fixing it: `infer` leaves it
    out, its rank is structure (`Result.rank`), its dims are solved.
    A result in `result_type_stated` has an element type the constraints
    allow several of (dot_general's: any promotion of lhs's): `infer` gives
    the one the program states where it is allowed, else the operands';
    check-spec proves its dims and rank unique, not its element type.
    `groups`: attributes written together as one MLIR attribute (`Group`).
    `exercise`: what generators need to know to exercise the op well (hard
    values, corners, index operands: spec/exercise.py).
    """

    mnemonic: str
    operands: tuple[Operand, ...]
    results: tuple[Result, ...]
    constraints: tuple[Callable, ...]
    infer: Callable[[Instance], dict]
    semantics: Any
    attributes: tuple[Attribute, ...] = ()
    result_from_program: tuple[str, ...] = ()
    shape_from_program: tuple[str, ...] = ()
    result_type_stated: tuple[str, ...] = ()
    regions: tuple[Region, ...] = ()
    groups: tuple[Group, ...] = ()
    exercise: Exercise = Exercise()
    check_ranks: tuple = ()   # ranks check-spec proves beyond 0..2 (rules that bite only there)
    results_unconstrained: str = ""   # why the seed fixes no result type (custom_call): no uniqueness to prove
    scoring: Scoring = Scoring()   # how the runner must run its cases (planning.py)
    # constraints the op's others imply (no instance breaks them alone; docs/spec-findings.md): check-spec
    # proves them redundant, and no invalid case can name them
    implied: tuple[str, ...] = ()
    # constraints of a later spec than the seed, as (label, clause): ("gather_c16", "v1.20 C6").  Their
    # labels continue the seed's numbering past its last label (never reusing one); traceability lists
    # them as later clauses, and generators and check-spec break them on `Exercise.later` structures.
    later: tuple[tuple[str, str], ...] = ()
    # how the op takes quantized tensors (v1.20; spec/dsl/quantization.py), None: it takes none
    quantization: Any = None
    notes: str = ""

    @property
    def structured(self) -> bool:
        """Does the op have structure beyond operand element types and ranks
        (variadic or tuple operands, array attributes, regions, constants,
        table-fixed ranks, program-stated shapes)?  Such ops get layouts,
        covering tables and the generators' structured path; the others
        (element-wise ops, select) keep the simpler path."""
        return bool(self.regions or self.shape_from_program
                    or any(o.variadic or o.tuple_members or o.constant or o.rank is not None for o in self.operands)
                    or any(r.fixed_rank is not None or r.variadic for r in self.results)
                    or any(isinstance(a.kind, (I64ArrayAttr, ReplicaGroupsAttr)) for a in self.attributes)
                    or not self.operands)

    @property
    def labels(self) -> list[str]:
        return [c.__name__ for c in self.constraints]

    def breaks_only(self, inst: Instance, label: str | None) -> bool:
        """Does the instance break the rule `label` and no other numbered
        constraint (None or "": none at all)?  A rule of quantized types
        (`type_rule`) is broken by the instance's types alone.  An unnumbered rule
        (`unnumbered`: the Inputs or Outputs table, type inference) is no
        function here: the instance breaks no numbered constraint, and the
        oracle's rejection of its program, naming none, says the rest
        (generators/expect.py `rejects_for`)."""
        if label and type_rule(label):   # a type's rule: no constraint of the op broken, that rule alone by its types
            return self.violated(inst) == [] and self.type_rules_broken(inst) == [label]
        return self.violated(inst) == ([] if not label or unnumbered(label) else [label])

    def type_rules_broken(self, inst: Instance) -> list[str]:
        """The rules of quantized types (`type_rule`) that the instance's
        operand and result types break, tuples' members included, in order."""
        from ..quantized import quantized_violations
        values = list(inst.operands.values()) + list(inst.results.values())
        return [r for t in _tensor_leaves(values) if t.element_type.is_quantized for r in quantized_violations(t)]

    def constraint(self, label: str) -> Callable:
        extra = self.quantization.constraints if self.quantization is not None else ()
        for c in self.constraints + tuple(extra):
            if c.__name__ == label:
                return c
        raise KeyError(f"{self.mnemonic} has no constraint {label}")

    def instance(self, operands: dict, attributes: dict | None = None, results: dict | None = None,
                 regions: dict | None = None, grid=None) -> Instance:
        return Instance(self, operands, attributes or {}, results or {}, regions, grid)

    def violated(self, inst: Instance) -> list[str]:
        """Labels of the constraints a concrete instance breaks (in order):
        the op's, and v1.20's quantization clauses where it holds a
        quantized tensor (`quantization.constraints`)."""
        bad = []
        extra = self.quantization.constraints if self.quantization is not None and self.holds_quantized(inst) else ()
        for c in self.constraints + tuple(extra):
            try:
                ok = c(inst)
            except (AttributeError, IndexError, KeyError, TypeError, ValueError, ZeroDivisionError):
                ok = False  # e.g. a tuple where the rule reads a tensor's shape
            if is_symbolic(ok):
                raise TypeError(f"{c.__name__} is symbolic on a concrete instance")
            if not ok:
                bad.append(c.__name__)
        return bad

    def types_outside_tables(self, inst: Instance) -> list[str]:
        """Names of operands/results whose type is outside the Inputs/Outputs
        table: an element type it does not list (read as v1.20 reads it:
        `Operand.types_v1_20`), or a rank other than the one it fixes
        ("0-dimensional tensor")."""
        leaves = _tensor_leaves

        def outside(t, decl) -> bool:
            et = t.element_type
            if et.is_quantized:   # v1.20: where `quantization` admits it, by its expressed type
                q = self.quantization
                return (q is None or not q.admits(decl.name) or (et.is_per_axis and not q.admits_per_axis(decl.name))
                        or (decl.types_v1_20 and et.expressed_type not in decl.types_v1_20))
            return et not in decl.types_v1_20

        bad = []
        for o in self.operands:
            vals = inst.operands[o.name]
            vals = vals if o.variadic else [vals]
            ts = [x for v in vals for x in leaves(v)]
            if any(outside(t, o) for t in ts) or (o.rank is not None and any(t.rank != o.rank for t in ts)):
                bad.append(o.name)
        for r in self.results:
            vals = inst.results.get(r.name)
            if vals is None:
                continue
            vals = vals if r.variadic else [vals]
            ts = [x for v in vals for x in leaves(v)]
            if any(outside(t, r) for t in ts) or (r.fixed_rank is not None and any(t.rank != r.fixed_rank for t in ts)):
                bad.append(r.name)
        return bad

    def holds_quantized(self, inst: Instance) -> bool:
        """Does any operand or result of the instance have a quantized element type?"""
        values = list(inst.operands.values()) + list(inst.results.values())
        return any(t.element_type.is_quantized for t in _tensor_leaves(values))


def _any_symbolic(*tables) -> bool:
    def sym(v):
        if is_symbolic(v):
            return True
        if isinstance(v, TensorType):
            return any(is_symbolic(d) for d in v.shape)
        if isinstance(v, (list, tuple)):
            return any(sym(x) for x in v)
        return False
    return any(sym(v) for t in tables for v in t.values())


def _tensor_leaves(v) -> list:
    """The tensor types in a value type: itself, a variadic list's or a tuple type's members, depth first."""
    if isinstance(v, TensorType):
        return [v]
    if isinstance(v, (list, tuple)):
        return [x for m in v for x in _tensor_leaves(m)]
    return [x for m in getattr(v, "types", ()) for x in _tensor_leaves(m)]


def collect_specs(package: str, path) -> dict:
    """{mnemonic: OpSpec} of every module of a package that defines `SPEC`,
    in module-name order: how each registry of ops is filled (the seed's,
    v1.20's additions, CHLO's), so that adding an op is adding its module."""
    import importlib
    import pkgutil
    out = {}
    for info in sorted(pkgutil.iter_modules(path), key=lambda i: i.name):
        spec = getattr(importlib.import_module(f"{package}.{info.name}"), "SPEC", None)
        if isinstance(spec, OpSpec):
            out[spec.mnemonic] = spec
    return out
