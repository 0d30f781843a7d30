"""MLIR text for one op: `@main` takes every operand as an argument.

Generic op form (`"stablehlo.add"(%arg0, %arg1) {…} : (…) -> …`) so that
invalid instances, whose types a verifier rejects, still parse as syntax.
Inputs are never constants: a compiler must run its kernel, not its constant
folder — except where the op *is* a constant (an operand declared
`constant=True`: its value is written as the attribute `name = dense<"0x…">`)
or the spec asks for a "tensor constant" operand (`literal=True`, rng's
`shape`: a `stablehlo.constant` op in @main feeds it).
Attributes are spelled by their kind (`Attribute.kind.to_mlir`); those of a
`Group` together (`dimension_numbers = #stablehlo.gather<…>`); an optional
attribute the skeleton leaves out is not written.  Regions follow the
operands (`generators/regions.py`); the @main values a region body reads
from outside its block (if's branches, while's body: `regions.captures`)
are @main arguments after the operands.

Tuples: @main takes and returns tensors only — a tuple-typed operand is
built from argument tensors by `stablehlo.tuple` ops (nested as its type
is), and a tuple result is taken apart again by `stablehlo.get_tuple_element`
chains, its leaves returned in order.  (Neither PJRT nor the reference
interpreter's Python API can return a nested tuple from @main: that would
score the harness, not the op.)

Tokens: @main neither takes nor returns them (no backend can pass or hand
back a `!stablehlo.token`): a token operand is a fresh
`"stablehlo.after_all"()`, a token result is left unreturned.  An
instance a builder marked (`spec.exercise.UNRETURNED`) has none of its
results returned: @main returns nothing.
"""
from __future__ import annotations

from ..spec.dsl import Instance, OpSpec, Spelled
from ..spec.exercise import UNRETURNED
from ..spec.types import TensorType, TokenType, TupleType, dense_literal
from . import regions


def _as_list(v, variadic: bool) -> list:
    return list(v) if variadic else [v]


def operand_types(spec: OpSpec, inst: Instance, arguments_only: bool = False) -> list:
    """Operand types in table order (variadic members flattened); with
    `arguments_only`, the tensors @main takes: constants left out, tuples
    replaced by their leaves, and the values region bodies capture after
    them (`capture_types`)."""
    out = []
    for o in spec.operands:
        if arguments_only and (o.constant or o.literal):
            continue
        for t in _as_list(inst.operands[o.name], o.variadic):
            out += leaves(t) if arguments_only else [t]
    return out + capture_types(spec, inst) if arguments_only else out


def region_functions(spec: OpSpec, inst: Instance) -> list:
    """The instance's region values in the spec's order (a variadic region's
    functions in turn)."""
    return [fn for g in spec.regions for fn in _as_list(inst.regions[g.name], g.variadic)]


def capture_types(spec: OpSpec, inst: Instance) -> list:
    """Types of the @main arguments that region bodies read from outside
    their blocks (`regions.captures`), region by region."""
    return [t for fn in region_functions(spec, inst) for t in regions.captures(fn)]


def leaves(t) -> list[TensorType]:
    if isinstance(t, TokenType):   # a token is no @main argument: `program` makes it with after_all
        return []
    if isinstance(t, TupleType):
        return [x for m in t.types for x in leaves(m)]
    return [t]


def result_types(spec: OpSpec, inst: Instance) -> list:
    out = []
    for r in spec.results:
        out += _as_list(inst.results[r.name], r.variadic)
    return out


def attribute_text(spec: OpSpec, inst: Instance, present: set[str] | None = None,
                   constants: dict | None = None) -> str:
    """`{name = value, …}` for the attributes the program states.

    `present`: names the program writes (None: every attribute with a value).
    `constants`: {operand name: array} for operands written as attributes."""
    parts = []
    for o in spec.operands:
        if o.constant and constants is not None and o.name in constants:
            parts.append(f"{o.name} = {dense_literal(constants[o.name], inst.operands[o.name])}")
    written_groups = set()
    for a in spec.attributes:
        v = inst.attributes.get(a.name)
        if v is None or (present is not None and a.name not in present):
            continue
        if a.group is not None:
            if a.group in written_groups:
                continue
            written_groups.add(a.group)
            g = next(g for g in spec.groups if g.mlir_name == a.group)
            kinds = {b.name: b.kind for b in spec.attributes if b.group == a.group}
            parts.append(f"{g.mlir_name} = {g.to_mlir(dict(inst.attributes), kinds)}")
            continue
        parts.append(f"{a.name} = {v.text if isinstance(v, Spelled) else a.kind.to_mlir(v)}")
    return " {" + ", ".join(parts) + "}" if parts else ""


def _type_sig(types: list) -> str:
    return ", ".join(t.mlir for t in types)


def program(spec: OpSpec, inst: Instance, present: set[str] | None = None,
            constants: dict | None = None) -> str:
    """The whole module text: func.func @main(%arg0: T0, …) -> (R…)."""
    args = operand_types(spec, inst, arguments_only=True)
    outs = result_types(spec, inst)
    lines, n_arg, n_tmp = [], 0, 0
    uses = []

    def build(t) -> str:
        """An SSA value of type t from the next arguments (tuples by stablehlo.tuple)."""
        nonlocal n_arg, n_tmp
        if isinstance(t, TokenType):   # @main takes no tokens (no backend can pass one): a fresh one
            n_tmp += 1
            lines.append(f'  %k{n_tmp} = "stablehlo.after_all"() : () -> !stablehlo.token')
            return f"%k{n_tmp}"
        if not isinstance(t, TupleType):
            n_arg += 1
            return f"%arg{n_arg - 1}"
        parts = [build(m) for m in t.types]
        n_tmp += 1
        lines.append(f'  %t{n_tmp} = "stablehlo.tuple"({", ".join(parts)}) : ({_type_sig(list(t.types))}) -> {t.mlir}')
        return f"%t{n_tmp}"

    in_types = []
    for o in spec.operands:
        if o.constant:
            continue
        if o.literal and constants is not None and o.name in constants:
            # A "tensor constant" operand (rng's `shape`): a stablehlo.constant in @main.
            t = inst.operands[o.name]
            lines.append(f'  %{o.name} = "stablehlo.constant"() {{value = {dense_literal(constants[o.name], t)}}} : () -> {t.mlir}')
            uses.append(f"%{o.name}")
            in_types.append(t)
            continue
        for t in _as_list(inst.operands[o.name], o.variadic):
            uses.append(build(t))
            in_types.append(t)
    out_sig = outs[0].mlir if len(outs) == 1 else f"({_type_sig(outs)})"
    lhs = "%0" if len(outs) == 1 else f"%0:{len(outs)}"
    if not outs:   # an op of no results (case with no branches): nothing to bind
        lhs = ""
    values = ["%0"] if len(outs) == 1 else [f"%0#{i}" for i in range(len(outs))]
    # Several regions are one parenthesised list: `({…}, {…})` (select_and_scatter).
    bodies = []
    for fn in region_functions(spec, inst):
        names = [f"%arg{n_arg + k}" for k in range(len(regions.captures(fn)))]
        n_arg += len(names)
        bodies.append(regions.render(fn, captured=names))
    regs = " (" + ", ".join(b[1:-1] for b in bodies) + ")" if bodies else ""
    attrs = attribute_text(spec, inst, present, constants)
    sig = ", ".join(f"%arg{i}: {t.mlir}" for i, t in enumerate(args))
    lines.append(f'  {lhs + " = " if lhs else ""}"stablehlo.{spec.mnemonic}"({", ".join(uses)}){regs}{attrs} : '
                 f"({_type_sig(in_types)}) -> {out_sig}")
    rets, ret_types = [], []

    def unpack(v: str, t) -> None:
        nonlocal n_tmp
        if isinstance(t, TokenType):   # tokens are not returned: no backend can hand one back
            return
        if not isinstance(t, TupleType):
            rets.append(v)
            ret_types.append(t)
            return
        for i, m in enumerate(t.types):
            n_tmp += 1
            lines.append(f'  %g{n_tmp} = "stablehlo.get_tuple_element"({v}) {{index = {i} : i32}} : ({t.mlir}) -> {m.mlir}')
            unpack(f"%g{n_tmp}", m)

    if inst not in UNRETURNED:   # a hand-built instance may leave its results unreturned (spec/exercise.py)
        for v, t in zip(values, outs):
            unpack(v, t)
    out_list = _type_sig(ret_types)
    return (f"func.func @main({sig}) -> ({out_list}) {{\n" + "\n".join(lines) + "\n"
            f'  "func.return"({", ".join(rets)}) : ({out_list}) -> ()\n'
            f"}}\n")
