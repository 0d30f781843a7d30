"""Batched compiles: many single-program cases in one module, one compile.

Why: scoring a suite on a compiler backend is dominated by one compile per
case (6,219 distinct programs for 6,420 cases in suites/core), and most of
a compile is a fixed cost (pass pipelines, code generation, loading) that
does not grow with the program.  `merge` puts the @main of several cases
in one module, each renamed (`b<k>_main`, its helpers `b<k>_<name>`) and
private, under a new @main that takes every case's arguments in turn and
returns every case's results in turn; one compile and one run then answer
for all of them, and `split` cuts the outputs back per case.

What may be batched (`batchable`): a module of `func.func`s only, with an
@main, no module attributes (partitions, replicas, shardings change how a
program runs) and no argument or result attributes on @main, no token or
tuple in @main's signature.  The runner batches only value and survey cases
without host data; an invalid case is always compiled alone (a rejection
must be attributable to its case).  The runner, not this module, keeps the
verdicts exactly those of single runs: a batch that fails to compile or to
run, crashes or times out is re-run case by case, and so is every case
whose batched outputs do not pass.

The module is parsed with jaxlib's MLIR bindings in a context where
stablehlo is *unregistered* (as the oracle reads programs): the text of
every op is printed back as it was read, generic form, without any
dialect's printer or verifier in between.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..oracle.reading import unregistered_context

# An MLIR diagnostic's location, `FILE:LINE:COLUMN: error` (MLIR's own
# printing: "<stdin>:27:8: error: failed to legalize operation …").
_ERROR_AT = re.compile(r'(?:"[^"]*"|[^\s"|:]+):(\d+):\d+: error')


@dataclass(frozen=True)
class Batch:
    """One merged module and how its arguments and results divide per case."""
    mlir: str
    n_inputs: tuple[int, ...]
    n_outputs: tuple[int, ...]
    # the line (1-based) of `mlir` where each case's functions begin, and last where merged @main does
    first_lines: tuple[int, ...] = ()

    def join_inputs(self, per_case: list[list]) -> list:
        """Every case's inputs, in the merged @main's order."""
        return [x for inputs in per_case for x in inputs]

    def culprits(self, message: str) -> set[int]:
        """The cases (indices) whose functions hold the lines a compiler's
        refusal names as errors (`FILE:LINE:COL: error`, MLIR's diagnostics:
        what IREE says).  Empty where the message names no line of a case's
        functions — merged @main's, another file's numbering, no location.
        A wrong attribution costs compiles, never a verdict: the runner takes
        a refusal only from a case compiled alone."""
        found, starts = set(), self.first_lines
        for m in _ERROR_AT.finditer(message or ""):
            line = int(m.group(1))
            found |= {k for k in range(len(starts) - 1) if starts[k] <= line < starts[k + 1]}
        return found

    def split(self, outputs: list) -> list[list] | None:
        """The merged @main's outputs cut back per case (None: not as many as declared)."""
        if len(outputs) != sum(self.n_outputs):
            return None
        out, at = [], 0
        for n in self.n_outputs:
            out.append(list(outputs[at:at + n]))
            at += n
        return out


def _parse(mlir: str):
    from jaxlib.mlir import ir
    with unregistered_context():
        try:
            return ir.Module.parse(mlir)
        except Exception:
            return None


def _main_type(module):
    """@main's FunctionType if the module is batchable, else None."""
    from jaxlib.mlir import ir
    op = module.operation
    if any((a if isinstance(a, str) else a.name) != "sym_name" for a in op.attributes):
        return None
    main = None
    for f in module.body.operations:
        f = f.operation
        if f.name != "func.func":
            return None
        name = ir.StringAttr(f.attributes["sym_name"]).value
        if name == "main":
            main = f
    if main is None or "arg_attrs" in main.attributes or "res_attrs" in main.attributes:
        return None
    ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    for t in list(ftype.inputs) + list(ftype.results):
        s = str(t)
        if "token" in s or "tuple" in s:
            return None
    return ftype


def batchable(mlir: str) -> bool:
    """Whether `mlir` can go into a merged module (see the module docstring)."""
    with unregistered_context():
        module = _parse(mlir)
        return module is not None and _main_type(module) is not None


def merge(programs: list[str]) -> Batch | None:
    """One module running every program of `programs` (each `batchable`), or
    None if one of them is not."""
    from jaxlib.mlir import ir
    funcs, calls, args, results, n_in, n_out = [], [], [], [], [], []
    first_lines = []
    with unregistered_context():
        for k, text in enumerate(programs):
            module = _parse(text)
            ftype = _main_type(module) if module is not None else None
            if ftype is None:
                return None
            table = ir.SymbolTable(module.operation)
            for f in list(module.body.operations):
                f = f.operation
                old = ir.StringAttr(f.attributes["sym_name"]).value
                new = f"b{k}_{old}"
                ir.SymbolTable.replace_all_symbol_uses(old, new, module.operation)
                ir.SymbolTable.set_symbol_name(f, new)
                f.attributes["sym_visibility"] = ir.StringAttr.get("private")
            del table
            first_lines.append(2 + sum(f.count("\n") + 1 for f in funcs))   # line 1: "module {"
            funcs += [str(f.operation) for f in module.body.operations]
            ins = [str(t) for t in ftype.inputs]
            outs = [str(t) for t in ftype.results]
            names = [f"%a{len(args) + i}" for i in range(len(ins))]
            args += [f"{n}: {t}" for n, t in zip(names, ins)]
            sig = f"({', '.join(ins)}) -> ({', '.join(outs)})"
            call = f'"func.call"({", ".join(names)}) {{callee = @b{k}_main}} : {sig}'
            if outs:
                r = f"%r{k}"
                calls.append(f"{r}{':' + str(len(outs)) if len(outs) > 1 else ''} = {call}")
                results += [(f"{r}#{i}" if len(outs) > 1 else r, t) for i, t in enumerate(outs)]
            else:
                calls.append(call)
            n_in.append(len(ins))
            n_out.append(len(outs))
    rtypes = ", ".join(t for _, t in results)
    main = (f"func.func @main({', '.join(args)}) -> ({rtypes}) {{\n  " + "\n  ".join(calls)
            + f'\n  "func.return"({", ".join(v for v, _ in results)}) : ({rtypes}) -> ()\n}}')
    first_lines.append(2 + sum(f.count("\n") + 1 for f in funcs))
    return Batch("module {\n" + "\n".join(funcs) + "\n" + main + "\n}\n", tuple(n_in), tuple(n_out),
                 tuple(first_lines))
