"""Region bodies: the computations a generator writes into an op's region.

A `Region` of the spec names the bodies a generator may choose
(`Region.bodies`); this module spells each one as an MLIR block over the
region's signature (`spec.dsl.Function.inputs` / `.outputs`).  The block
takes the current values first and the updates second (scatter's
`update_computation(results[:][i], updates[:][j])`), and applies the body to
each pair (current_k, update_k):

  add, multiply, maximum, minimum   the element-wise op of that name
  subtract                          current - update: not commutative, so the
                                    order duplicate updates are applied in shows
  replace / keep                    return the update / the current value

`subtract` has no boolean form in the spec (its Inputs table has no i1);
`xor` takes its place there.  The body's ops are ordinary StableHLO ops, so
the oracle executes them with their own semantics (rounding included).
"""
from __future__ import annotations

from ..spec.dsl import Function
from ..spec.ops import OPS

BODIES = ("add", "multiply", "maximum", "minimum", "subtract", "replace", "keep")


def body_op(body: str, et) -> str | None:
    """The op applying `body` to one pair of element type `et` (None: a pass-through body)."""
    if body in ("replace", "keep"):
        return None
    name = body
    if et not in OPS[name].operands[0].types and body == "subtract":
        name = "xor"
    return name


def render(fn: Function, indent: str = "  ") -> str:
    """`({ ^bb0(…): … "stablehlo.return"(…) })` for `fn.body` over fn's types."""
    ins, outs = list(fn.inputs), list(fn.outputs)
    args = [f"%r{i}" for i in range(len(ins))]
    head = f"{indent}^bb0(" + ", ".join(f"{a}: {t.mlir}" for a, t in zip(args, ins)) + "):"
    lines, rets = [head], []
    half = len(ins) // 2
    for k, out in enumerate(outs):
        cur = args[k] if k < len(args) else args[0]
        upd = args[half + k] if half + k < len(args) else args[-1]
        cur_t = ins[k] if k < len(ins) else ins[0]
        upd_t = ins[half + k] if half + k < len(ins) else ins[-1]
        op = body_op(fn.body or "replace", cur_t.element_type)
        if op is None:
            rets.append((upd if fn.body == "replace" else cur, upd_t if fn.body == "replace" else cur_t))
            continue
        lines.append(f'{indent}  %b{k} = "stablehlo.{op}"({cur}, {upd}) : ({cur_t.mlir}, {upd_t.mlir}) -> {out.mlir}')
        rets.append((f"%b{k}", out))
    lines.append(f'{indent}  "stablehlo.return"(' + ", ".join(v for v, _ in rets) + ") : ("
                 + ", ".join(t.mlir for _, t in rets) + ") -> ()")
    return "({\n" + "\n".join(lines) + f"\n{indent}}})"
