"""composite — an op made of other StableHLO ops, run as its decomposition (v1.20, spec.md "composite").

"The semantics of the op are implemented by the `decomposition` attribute.
The `composite` op can be replaced with its decomposition without changing
program semantics."  So the results are the decomposition function's on
the inputs, run on whole values as a `func.call` runs its callee: the
program reader reads the function named by `decomposition` once (its ops
checked against the spec like every other: oracle/functions.py) and
holds it in the instance's `regions["decomposition"]`; every allowance its
ops make (a sine's tolerance, a scatter's orders) reaches the results.
`name`, `composite_attributes` and `version` change nothing the oracle
computes ("The `version` field (defaults to `0`) is used to denote when a
composite's semantics change"); `regions` ("If the decomposition is
inlined, the `regions` are ignored") are read and ignored.

`is_defined_in_parent_scope(decomposition)` (C2) reads "the name of a
function defined in the same scope as the parent function of the relevant
op": a function of the module.  Where C2 fails, C3 and C4 have no
function to compare with and hold, so the program is blamed on C2 alone.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from ..dsl import ANY, Attribute, ControlFlow, IntAttr, OpSpec, Operand, Region, Result, StringAttr
from ..dsl.custom_call_attributes import Dictionary

# spec.md "is_namespaced_op_name": "[a-zA-Z][a-zA-Z0-9_]*([.][a-zA-Z0-9_$]+)+"
NAMESPACED_OP_NAME = re.compile(r"[a-zA-Z][a-zA-Z0-9_]*([.][a-zA-Z0-9_$]+)+")
DECOMPOSITION = "decomposition"


@dataclass(frozen=True)
class FunctionNameAttr:
    """A "constant of type `string`" that names a function of the module,
    written as a symbol reference `@name` (`@"name"` where the name needs
    quotes).  `names_function`: the program reader resolves it to the
    function's body (oracle/functions.py)."""

    names_function: ClassVar[bool] = True

    def to_mlir(self, v: str) -> str:
        return "@" + v if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", v) else '@"' + v + '"'

    def from_mlir(self, text: str) -> str:
        t = text.strip()
        if not t.startswith("@") or len(t) < 2:
            raise ValueError(f"expected a symbol reference @name, got {text[:60]!r}")
        name = t[1:]
        return name[1:-1] if len(name) >= 2 and name[0] == name[-1] == '"' else name


@dataclass(frozen=True)
class DictionaryAttr:
    """An "attribute dictionary" (`composite_attributes`), kept as its text
    `{key = value, …}`: its entries mean what the composite's owner says."""

    def to_mlir(self, v: Dictionary) -> str:
        return v.text

    def from_mlir(self, text: str) -> Dictionary:
        t = " ".join(text.split())
        if not (t.startswith("{") and t.endswith("}")):
            raise ValueError(f"expected an attribute dictionary {{…}}, got {text[:60]!r}")
        return Dictionary(t)


def decomposition(op):
    """The function `decomposition` names, as the reader read it (None where
    the module has none of that name)."""
    return op.regions.get(DECOMPOSITION)


def composite_c1(op):
    """(C1) `is_namespaced_op_name(name)`."""
    return NAMESPACED_OP_NAME.fullmatch(op.name) is not None


def composite_c2(op):
    """(C2) `is_defined_in_parent_scope(decomposition)`."""
    return decomposition(op) is not None


def composite_c3(op):
    """(C3) `types(inputs...) == input_types(decomposition)`."""
    fn = decomposition(op)
    return fn is None or tuple(op.inputs) == tuple(fn.inputs)


def composite_c4(op):
    """(C4) `types(results...) == output_types(decomposition)`."""
    fn = decomposition(op)
    return fn is None or tuple(op.results["results"]) == tuple(fn.outputs)


def infer(op):
    """The results' types are the decomposition's outputs (C4 states it)."""
    return {}


def run(op, values, read):
    """The decomposition on the inputs' whole values: "The `composite` op can
    be replaced with its decomposition without changing program semantics"."""
    return list(decomposition(op).expect(*values))


SPEC = OpSpec(
    mnemonic="composite",
    operands=(Operand("inputs", ANY, variadic=True),),
    attributes=(
        Attribute("name", StringAttr()),
        Attribute("composite_attributes", DictionaryAttr(), optional=True, default=Dictionary("{}")),
        Attribute(DECOMPOSITION, FunctionNameAttr()),
        Attribute("version", IntAttr(32), optional=True, default=0),
    ),
    regions=(Region("regions", signature=lambda op: ((), ()), variadic=True, count=0),),
    results=(Result("results", ANY, variadic=True),),
    constraints=(composite_c1, composite_c2, composite_c3, composite_c4),
    infer=infer,
    semantics=ControlFlow(run),
    notes="v1.20 numbering (not in the seed)",
)
