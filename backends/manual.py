"""The program each process runs, for a backend that runs StableHLO process
by process: JAX's `shard_map` / `pmap` programs (issue 23, "programs from
the wild") with the manual computation taken out.

JAX lowers `shard_map` and `pmap` to an @main that hands its (global)
arguments to one `sdy.manual_computation` over every mesh axis and returns
its results (with Shardy off: `custom_call @Sharding` /
`@SPMDFullToShardShape` around a `call` of the body).  What each process
runs is the computation's *body*, on its own shards.  XLA's partitioner
runs the program as it is; the reference interpreter knows no `sdy` op
(nor these custom_calls) and runs only StableHLO, so it is handed the body
as a standalone @main: its arguments and results are the shard-shaped
values — the convention of XLA's `run_grid` and of the oracle (each
process's inputs and outputs are its shards, flattened id order).

Which programs qualify is the oracle's rule, not a second copy of it:
`oracle.partitioned.manual_computation` (Shardy) and `gspmd_manual` (GSPMD)
decide, on the parsed module, whether @main is exactly one manual
computation over every mesh axis whose mesh has as many devices as the
grid has processes.  The oracle needs no extraction of its own: it reads
the computation's region straight into its `Program` in its own
(unregistered) context, never as text; a backend needs a module it can
hand on, which is what this module makes — with the MLIR Python bindings
(moving the region's block into a new `func.func`), not by editing text.
"""
from __future__ import annotations

from typing import Any

from .base import Rejected, Unsupported

_MARKS = ("sdy.", "SPMDFullToShardShape")   # what a manual program's text must hold (a cheap first look)


def per_process_text(text: str, grid, context) -> tuple[str, dict | None]:
    """(the program each process of `grid` runs, as text; the mesh of its
    manual computation, or None).  A program that is not a manual
    computation comes back as it was, mesh None (as does one that does
    not parse: the backend's own compile reports that).  `context`: an MLIR
    context with the sdy, stablehlo and func dialects (jax's
    `make_ir_context()`).  Raises Unsupported for a computation manual over
    only some mesh axes (the rest is the SPMD partitioner's: no StableHLO
    semantics) and Rejected for a mesh that does not fit the grid."""
    if not any(m in text for m in _MARKS):
        return text, None
    from jaxlib.mlir import ir

    with context, ir.Location.unknown():
        try:
            module = ir.Module.parse(text)
        except Exception:
            return text, None
        mesh = per_process(module, grid)
        if mesh is None:
            return text, None
        return module.operation.get_asm(print_generic_op_form=True), mesh


def per_process(module, grid) -> dict | None:
    """Rewrite `module` (parsed, in its context) in place so that its @main
    is what each process of `grid` runs; return the mesh ({axis: size}; for
    GSPMD {"devices": n}), or None, leaving the module untouched, when
    @main is no manual computation.  Errors: see `per_process_text`."""
    from ..oracle.partitioned import gspmd_manual, manual_computation
    from ..oracle.rejection import CannotJudge, ProgramRejected

    funcs = {_name(op): op for op in _ops(module.body) if op.name == "func.func"}
    main = funcs.get("main")
    if main is None:
        return None
    try:
        found = manual_computation(module, main, grid)
        callee = gspmd_manual(main, grid) if found is None else None
    except CannotJudge as e:
        raise Unsupported(f"no per-process program: {e}") from None
    except ProgramRejected as e:
        raise Rejected(str(e)) from None
    if found is not None:
        op, mesh = found
        _body_as_main(module, main, op)
        return mesh
    if callee is not None:
        if callee not in funcs:
            raise Rejected(f"@main calls @{callee}, which the module does not hold")
        main.erase()
        body = funcs[callee]
        body.attributes["sym_name"] = _string("main")
        if "sym_visibility" in body.attributes:
            del body.attributes["sym_visibility"]
        _verify(module)
        return {"devices": grid.size}
    return None


def _body_as_main(module, main, manual) -> None:
    """@main replaced by a function whose body is the manual computation's
    region: its block (the shard arguments) moved into a new `func.func`,
    its `sdy.return` made a `func.return`; the meshes go with it when no
    other sdy op names them."""
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import func

    block = manual.regions[0].blocks[0]
    ret = list(block.operations)[-1]
    ins = [a.type for a in block.arguments]
    outs = [v.type for v in ret.operands]
    with ir.InsertionPoint(main):
        new = func.FuncOp("__shlo_manual_body", (ins, outs))
    block.append_to(new.regions[0])
    with ir.InsertionPoint(ret):
        func.ReturnOp(list(ret.operands))
    ret.erase()
    main.erase()
    new.attributes["sym_name"] = _string("main")
    if not any(op.name.startswith("sdy.") for f in _ops(module.body) if f.name == "func.func" for op in _walk(f)):
        for op in [op for op in _ops(module.body) if op.name == "sdy.mesh"]:
            op.erase()
    _verify(module)


def _verify(module) -> None:
    try:
        module.operation.verify()
    except Exception as e:   # a bug of the rewrite, not a rejection by the implementation
        from .diagnostics import one_line
        raise RuntimeError(f"per-process program of a manual computation: {one_line(str(e))}") from None


def _ops(block) -> list:
    return [op.operation for op in block.operations]


def _walk(op) -> list:
    out = []
    for region in op.regions:
        for block in region.blocks:
            for inner in _ops(block):
                out.append(inner)
                out += _walk(inner)
    return out


def _name(op) -> str:
    from jaxlib.mlir import ir
    return ir.StringAttr(op.attributes["sym_name"]).value


def _string(value: str) -> Any:
    from jaxlib.mlir import ir
    return ir.StringAttr.get(value)
