"""MLIR text for one op: `@main` takes every operand as an argument.

Generic op form (`"stablehlo.add"(%arg0, %arg1) {…} : (…) -> …`) so that
invalid instances, whose types a verifier rejects, still parse as syntax.
Inputs are never constants: a compiler must run its kernel, not its constant
folder.  Attributes are spelled by their kind (`Attribute.kind.to_mlir`);
an optional attribute the skeleton leaves out is not written.
"""
from __future__ import annotations

from ..spec.dsl import Instance, OpSpec
from ..spec.types import TensorType


def _as_list(v, variadic: bool) -> list:
    return list(v) if variadic else [v]


def operand_types(spec: OpSpec, inst: Instance) -> list[TensorType]:
    out = []
    for o in spec.operands:
        out += _as_list(inst.operands[o.name], o.variadic)
    return out


def result_types(spec: OpSpec, inst: Instance) -> list[TensorType]:
    out = []
    for r in spec.results:
        out += _as_list(inst.results[r.name], r.variadic)
    return out


def attribute_text(spec: OpSpec, inst: Instance, present: set[str] | None = None) -> str:
    """`{name = value, …}` for the attributes the program states.

    `present`: names the program writes (None: every attribute with a value)."""
    parts = []
    for a in spec.attributes:
        v = inst.attributes.get(a.name)
        if v is None or (present is not None and a.name not in present):
            continue
        parts.append(f"{a.name} = {a.kind.to_mlir(v)}")
    return " {" + ", ".join(parts) + "}" if parts else ""


def program(spec: OpSpec, inst: Instance, present: set[str] | None = None) -> str:
    """The whole module text: func.func @main(%arg0: T0, …) -> (R…)."""
    ins = operand_types(spec, inst)
    outs = result_types(spec, inst)
    args = ", ".join(f"%arg{i}: {t.mlir}" for i, t in enumerate(ins))
    uses = ", ".join(f"%arg{i}" for i in range(len(ins)))
    in_sig = ", ".join(t.mlir for t in ins)
    out_list = ", ".join(t.mlir for t in outs)
    out_sig = outs[0].mlir if len(outs) == 1 else f"({out_list})"
    lhs = "%0" if len(outs) == 1 else f"%0:{len(outs)}"
    rets = "%0" if len(outs) == 1 else ", ".join(f"%0#{i}" for i in range(len(outs)))
    attrs = attribute_text(spec, inst, present)
    return (
        f"func.func @main({args}) -> ({out_list}) {{\n"
        f"  {lhs} = \"stablehlo.{spec.mnemonic}\"({uses}){attrs} : ({in_sig}) -> {out_sig}\n"
        f"  \"func.return\"({rets}) : ({out_list}) -> ()\n"
        f"}}\n"
    )
