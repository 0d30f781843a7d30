"""The grid a module states, and programs JAX partitions by hand.

A module may state its grid (`mhlo.num_replicas`, `mhlo.num_partitions`).
JAX's `shard_map` and `pmap` write an entry that hands its arguments to one
manual computation (Shardy's `sdy.manual_computation`, or GSPMD's sharding
custom_calls around one call): every process runs that body on its own
shards, so the body is the program the oracle runs per process.  Anything
else the SPMD partitioner would decide is CannotJudge.
"""
from __future__ import annotations

import re

from ..spec.grid import Grid
from .block import CALL
from .rejection import CannotJudge, ProgramRejected


GRID_ATTRIBUTES = ("mhlo.num_replicas", "mhlo.num_partitions")
_MESH = re.compile(r'"(\w+)"\s*=\s*(\d+)')


def _target(op) -> str | None:
    if op.name != "stablehlo.custom_call" or "call_target_name" not in op.attributes:
        return None
    return str(op.attributes["call_target_name"]).strip('"')


def gspmd_manual(func, grid: Grid) -> str | None:
    """The callee that each process runs, when the entry is what JAX writes
    for `shard_map` with GSPMD (Shardy off): per argument `Sharding` then
    `SPMDFullToShardShape` (sharding `{manual}`), one call of the body on
    the shards, per result `Sharding` then `SPMDShardToFullShape`, return —
    the GSPMD spelling of `manual_computation`'s case; else None.  A
    sharding other than fully manual is CannotJudge."""
    ops = [o.operation for o in func.regions[0].blocks[0].operations]
    if not any(_target(o) == "SPMDFullToShardShape" for o in ops):
        return None
    args = list(func.regions[0].blocks[0].arguments)

    def refuse(why: str):
        return CannotJudge("custom_call", f"@main's GSPMD sharding custom_calls: {why}; the oracle runs such a "
                                          "program only when it is one manual call of the body on every process's "
                                          "shards (what shard_map writes)")
    n = len(args)
    if len(ops) < 2 * n + 2 or ops[2 * n].name not in ("func.call", CALL) or ops[-1].name != "func.return":
        raise refuse("not a call of one body between them")
    call = ops[2 * n]
    shards = []
    for k in range(n):
        s, f = ops[2 * k], ops[2 * k + 1]
        if (_target(s), _target(f)) != ("Sharding", "SPMDFullToShardShape") or list(s.operands) != [args[k]] or \
                list(f.operands) != list(s.results):
            raise refuse(f"argument {k} does not go through Sharding and SPMDFullToShardShape")
        if str(f.attributes["mhlo.sharding"]).strip('"') != "{manual}":
            raise refuse(f"argument {k} is not fully manual ({f.attributes['mhlo.sharding']})")
        shards.append(f.result)
    if list(call.operands) != shards:
        raise refuse("the body is not called on the shards in order")
    tail, results = ops[2 * n + 1:-1], list(call.results)
    if len(tail) != 2 * len(results):
        raise refuse("the body's results do not each go through Sharding and SPMDShardToFullShape")
    outs = []
    for j, r in enumerate(results):
        s, f = tail[2 * j], tail[2 * j + 1]
        if (_target(s), _target(f)) != ("Sharding", "SPMDShardToFullShape") or list(s.operands) != [r] or \
                list(f.operands) != list(s.results):
            raise refuse(f"result {j} does not go through Sharding and SPMDShardToFullShape")
        outs.append(f.result)
    if list(ops[-1].operands) != outs:
        raise refuse("@main does not return the body's results in order")
    return str(call.attributes["callee"]).lstrip("@").strip('"')


def manual_computation(module, func, grid: Grid):
    """(the op, {mesh axis: size}) when the entry's body is one Shardy
    manual computation over every axis of its mesh — what JAX lowers
    `shard_map` and `pmap` to: @main's arguments handed to
    `sdy.manual_computation` in order, its results returned in order — else
    None.  Then every process runs the computation's body on its own
    shards (`in_shardings` say how the global arrays split; the program a
    process runs sees only its shard), so the program the oracle runs per
    process is that body: its arguments and results are the per-device
    buffers, as XLA's partitioned executable takes and gives them.  A
    computation manual over only some axes leaves the rest to the SPMD
    partitioner (no StableHLO semantics): CannotJudge."""
    ops = [o.operation for o in func.regions[0].blocks[0].operations]
    if not ops or ops[0].name != "sdy.manual_computation":
        return None
    op = ops[0]
    args = list(func.regions[0].blocks[0].arguments)
    if len(ops) != 2 or ops[1].name != "func.return" or list(op.operands) != args or \
            list(ops[1].operands) != list(op.results):
        raise CannotJudge("sdy.manual_computation", "@main does more than hand its arguments to one "
                          "sdy.manual_computation and return its results: the oracle runs such a program only "
                          "as that computation's body on every process")
    mesh = {}
    for m in module.body.operations:
        m = m.operation
        if m.name == "sdy.mesh":
            mesh = {name: int(size) for name, size in _MESH.findall(str(m.attributes["mesh"]))}
    manual = set(re.findall(r'"(\w+)"', str(op.attributes["manual_axes"]))) if "manual_axes" in op.attributes \
        else set()
    partly = sorted(set(mesh) - manual)
    if partly:
        raise CannotJudge("sdy.manual_computation", f"the manual computation leaves mesh axes {', '.join(partly)} "
                          "to the SPMD partitioner: no StableHLO semantics states what each process runs")
    size = 1
    for n in mesh.values():
        size *= n
    if size != grid.size:
        raise ProgramRejected(f"the mesh {mesh} has {size} devices; the program runs on a {grid} grid "
                              f"({grid.size} processes)")
    return op, mesh


def stated_grid(module) -> Grid | None:
    """The grid a module's attributes state (`mhlo.num_replicas`,
    `mhlo.num_partitions`, as JAX and XLA write them: `8 : i32`), or None."""
    attrs = module.operation.attributes
    sizes = {}
    for name in GRID_ATTRIBUTES:
        if name in attrs:
            text = str(attrs[name]).split(":")[0].strip()
            try:
                sizes[name] = int(text)
            except ValueError:
                raise ProgramRejected(f"module attribute {name} = {attrs[name]} is not an integer") from None
    if not sizes:
        return None
    try:
        return Grid(sizes.get("mhlo.num_replicas", 1), sizes.get("mhlo.num_partitions", 1))
    except ValueError as e:
        raise ProgramRejected(f"module attributes: {e}") from None
