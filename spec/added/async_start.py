"""async_start — perform the one operation of `body` asynchronously, yielding
a future of its results (v1.20, spec.md "async_start"; not in the seed).

Semantics: "Performs a computation asynchronously … The asynchrony is not
guaranteed": the values are those of `body`'s operation run on the
operands; when it runs is the implementation's and cannot show in values.
The result is a `future<T>` (`spec.types.FutureType`), which async_done
waits for; in the oracle a future's value is the tuple of `body`'s
results, and `body` runs on whole values (`ControlFlow`: a collective in
it meets the other processes as it would outside, a sum keeps its range).

What v1.20 says, and what it does not:
* The op has a region, `body` — not MHLO's `called_computation` /
  `execution_thread` attributes: a program in v1.20's spelling holds the
  operation itself.
* v1.20's Example writes the body with no block arguments, its operation
  using `%arg0` of the enclosing function; jaxlib 0.10.2's op is isolated
  from above and refuses that Example ("'stablehlo.all_gather' op using
  value defined outside the region"), taking a block whose arguments
  receive the operands instead.  Both are read here.

Readings:
* C1's "a return" returns the operation's results, in order (what else
  the region returned would be no result of "the operation").
* C3 ("the arguments to async_start must match the ones passed to the
  operation in body"): with block arguments, they have the operands'
  types one to one and the operation takes exactly them, in order; without
  them, the operation takes exactly async_start's operands, in order (the
  same values, by the program reader's names: `Instance.value_names`).
* These rules read the body's block (`Function.block`, set by the oracle's
  program reader); an instance without it — none is read from a program —
  breaks them: nothing the body holds can be checked.  C2–C4 speak of
  "the operation": where the block holds another number of ops they hold
  vacuously and C1 alone is broken.

Quantized tensors (v1.20: operands "variadic number of tensors or
per-tensor quantized tensors"): async_start runs its body's operation as
it is, so the values are that operation's on quantized tensors — a
collective or slice moves storage values, an all_reduce's quantized `add`
body requantizes at each step (each op by its own quantized rule, as the
oracle runs any region): `STORAGE`, whose rule for a ControlFlow op is
the op's own on the quantized values.  The future is `future<T>` of the
operation's quantized types (C4 reads them whole).

Findings (docs/spec-findings.md): the Example's captured operand (above);
C2's list of collectives leaves collective_reduce out; async_done's result
row admits floating-point, complex and quantized tensors only while
async_start takes any tensor; XLA:CPU (jaxlib 0.10.2) runs an async
all_gather but refuses a slice ("unsupported op in async_start:
stablehlo.slice"); the reference interpreter aborts its process on the op
("LLVM ERROR: Unsupported op").
"""
from __future__ import annotations

import dataclasses

from ..dsl import ANY, ControlFlow, OpSpec, Operand, Region, Result
from ..dsl.quantization import MOVES_PER_TENSOR
from ..ops.all_gather import members
from ..types import FutureType

COLLECTIVES = ("all_reduce", "all_gather", "all_to_all", "collective_permute", "reduce_scatter",
               "collective_broadcast")
SLICES = ("slice", "dynamic_slice", "dynamic_update_slice")


def block(op):
    """`body`'s block as the program reader read it (args, steps, returns,
    captures), or None."""
    return getattr(op.body, "block", None)


def operation(op):
    """The block's one step (an op's `Instance`, None for a call), or None
    where the block does not hold exactly one."""
    b = block(op)
    if b is None or len(b.steps) != 1:
        return None
    return b.steps[0]


def vacuous(op) -> bool:
    """A block read, holding other than one op: C2–C4 have no "operation" to read (C1 decides)."""
    b = block(op)
    return b is not None and len(b.steps) != 1


def result_types(inst) -> list:
    """An op instance's result types in table order (variadic members flattened)."""
    out = []
    for r in inst.spec.results:
        v = inst.results[r.name]
        out += list(v) if r.variadic else [v]
    return out


def async_start_c1(op):
    """(C1) `body` must contain a single operation and a return.

    The return returns the operation's results, in order (module docstring)."""
    step = operation(op)
    return step is not None and list(block(op).returns) == list(step.results)


def async_start_c2(op):
    """(C2) The operation in `body` can only be a collective (`all_reduce`,
       `all_gather`, `all_to_all`, `collective_permute`, `reduce_scatter`,
       `collective_broadcast`) or a slice (`slice`, `dynamic_slice`,
       `dynamic_update_slice`)."""
    if vacuous(op):
        return True
    step = operation(op)
    return step is not None and step.inst is not None and step.inst.spec.mnemonic in COLLECTIVES + SLICES


def async_start_c3(op):
    """(C3) The arguments to async_start must match the ones passed to the operation
       in `body`.

    Read (module docstring): the block's arguments are the operands, one to
    one by type, and the operation takes exactly them in order; a block
    without arguments: the operation takes async_start's own operands."""
    if vacuous(op):
        return True
    step, b = operation(op), block(op)
    if step is None:
        return False
    operands = members(op, "operands")
    if b.args:
        return ([t for _, t in b.args] == list(operands)
                and list(step.operands) == [k for k, _ in b.args])
    names = getattr(op, "value_names", None)
    if names is None or any(k not in b.captures for k in step.operands):
        return False
    return [b.captures[k] for k in step.operands] == list(names)


def async_start_c4(op):
    """(C4) If the op in `body` returns type `T`, then `async_start` returns
       `future<T>`."""
    if vacuous(op):
        return True
    step = operation(op)
    if step is None or step.inst is None:
        return False
    return op.result == FutureType(tuple(result_types(step.inst)))


def infer(op):
    """`future<T>`, T the body's operation's result types (C4)."""
    step = operation(op)
    if step is None or step.inst is None:
        return {}
    return {"result": FutureType(tuple(result_types(step.inst)))}


def body_signature(op):
    """The block jaxlib reads: the operands as arguments (its outputs are the operation's)."""
    return tuple(members(op, "operands")), ()


def run(op, values, read):
    """`body` run on the operands (as its block's arguments, or — a block
    without any — on the values it captures, which C3 makes the operands):
    the future holds its results."""
    body = op.body
    outs = body.expect(*values) if body.inputs else body.expect()
    return [tuple(outs)]


SPEC = OpSpec(
    mnemonic="async_start",
    operands=(Operand("operands", ANY, variadic=True, count=(1, 2)),),
    regions=(Region("body", body_signature),),
    results=(Result("result", ANY),),
    constraints=(async_start_c1, async_start_c2, async_start_c3, async_start_c4),
    infer=infer,
    semantics=ControlFlow(run),
    notes="v1.20 numbering (not in the seed)",
    # v1.20: "or per-tensor quantized tensors"; the body's operation runs on them by its own rule
    quantization=dataclasses.replace(MOVES_PER_TENSOR, type_clauses=("async_start_c4",)),
)
