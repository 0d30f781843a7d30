"""Where an inconclusive output's width starts: the spec's own allowance for one op, or a widening along the program.

An output is inconclusive when its enclosure is wider than
`suites.resolution.RESOLVED` at the median element.  Two very different
things make it so, and a user needs to know which:

* **the op allows it.**  One op's own statement is already that wide on
  exact operands.  A dot_general of 64 bf16 products summed *in bf16* (an
  attention's q·kᵀ without `preferred_element_type`) may be summed in any
  order, each addition rounded to 8 significant bits: the extremes over
  every tree the spec allows are ±7.5 % of the median element
  (bench/real_programs.py's attention-bf16; the oracle states ±9.6 %,
  oracle/every_tree.py, with f32 and wider accumulators beside) — past
  RESOLVED, so the remedy is the program's (accumulate in f32), not the
  backend's.
* **it widens along the program.**  Every op's own statement is narrow,
  and the width grows from an op's operands (cancellation, correlations
  the affine forms lose past their budget, remainders of linearisations):
  the spec may allow that much (a difference of two values each within its
  tolerance) or much less (the 128×256 transformer block), and the line
  leaves it open.

The reading: run the program again watching @main's steps
(`oracle.execution.watching`), measure each value's median relative
half-width (`suites.resolution`), and walk back from the output to the
first steps, in program order, whose result is unresolved while every
operand is resolved — where the width *starts*.  That step is then judged
alone, on its operands' primary values taken as exact: if its own
statement is still unresolved, the width starts with that op's statement
(the oracle's bound for it, an upper bound of what the spec allows: 1.3×
the strict extremes for 64 bf16 terms, whose ±7.5 % are past RESOLVED
anyway); otherwise its operands' small
deviations are what grew.

Runs in `run`'s isolated oracle job, only for outputs that are
inconclusive, and costs one more run of the program.
"""
from __future__ import annotations

from dataclasses import dataclass

from .oracle import affine, chains
from .oracle.execution import input_values, leaves, run_block, run_step, watching
from .spec.expectation import Expectation
from .spec.types import to_bits
from .suites.kinds import describe
from .suites.resolution import RESOLVED, resolution


@dataclass
class Origin:
    """Where one output's width starts (module docstring)."""

    position: int        # the step's place among @main's ops, from 1, in source order
    op: str              # its mnemonic, e.g. "stablehlo.dot_general"
    type: str            # its (first unresolved) result's type
    width: float         # that result's median relative half-width in the run
    operands: float      # the widest of its operands' (each at most RESOLVED: where the width starts)
    alone: float         # the same op's, on its operands' primary values as exact inputs
    why: str             # how its expectation reads, alone (suites.kinds.describe)

    @property
    def spec_allows(self) -> bool:
        """The op's own statement, on exact operands, is already unresolved
        (an upper bound of what the spec lets it return: 64 bf16 products
        are stated ±9.6 % where the extremes over the spec's strict trees are
        ±7.6 %, tests/cli/test_width_origin.py — both past RESOLVED)."""
        return self.alone > RESOLVED

    def describe(self) -> str:
        where = f"@main's op {self.position} ({self.op} → {self.type})"
        if self.alone == float("inf"):
            return (f"width: starts with {where}, whose elements the oracle mostly states no value for "
                    f"(any value)" + (f": {self.why}" if self.why else ""))
        if self.spec_allows:
            hint = "; accumulating in a wider type narrows it" if self.op.split(".")[-1] in _ACCUMULATING else ""
            return (f"width: starts with {where} alone: its own statement on exact operands is already "
                    f"±{_pct(self.alone)} median" + (f" ({self.why})" if self.why else "")
                    + f" — that op's allowance, not a widening along the program{hint}")
        return (f"width: starts at {where}, ±{_pct(self.width)} median from operands within "
                f"±{_pct(self.operands)} (alone, on exact operands: ±{_pct(self.alone)}) — what grows there is "
                "its operands' deviations, not its own allowance; whether the spec allows that much or the "
                "enclosure is loose is not decided")


# Ops whose statement is a sum in the result's type: a wider result type (preferred_element_type) narrows it.
_ACCUMULATING = ("dot_general", "dot", "convolution", "reduce", "reduce_window")


def _pct(x: float) -> str:
    return f"{x * 100:.3g}%"


def _width(value) -> float:
    """A value's widest median relative half-width over its float tensors
    (0 for exact values, integers, tokens; inf for unchecked ones).  A
    value the spec defines by a property (a linear solve's solution, a
    Cholesky factor: a residual record) is as wide as what its criterion
    lets pass — the range the ops after it compute from (oracle/chains.py
    `as_range`), or any value where none is proven — not its primary
    value alone, which would read as exact and put the start after it."""
    widest = 0.0
    for leaf in leaves(value) if isinstance(value, tuple) else [value]:
        if isinstance(leaf, Expectation) and leaf.residual is not None:
            ranged = chains.as_range(leaf)
            if ranged is None:
                return float("inf")
            leaf = ranged
        if isinstance(leaf, Expectation):
            res = resolution(leaf)
            widest = max(widest, float("inf") if res.mostly_unchecked else res.rel_median if res.stated else 0.0)
    return widest


def _exact(value):
    """A value's primary arrays as exact values of its type."""
    if isinstance(value, tuple):
        return tuple(_exact(m) for m in value)
    if not isinstance(value, Expectation):
        return value
    return Expectation(value.type, to_bits(value.array(), value.type.element_type), bit_exact=True)


def origin(program, inputs: list, output: int) -> Origin | None:
    """Where output `output`'s width starts (`program`: the read @main, as
    oracle.program.parse_program gives it), or None where it does not (the
    output is resolved, or the width comes from no step of @main's own:
    a region's inside)."""
    widths: dict = {}    # result key -> (step, its median relative half-width, its type)
    starts: dict = {}    # id(step) -> operand values, for steps whose result is wide from narrow operands

    def watch(step, ins, outs):
        for k, o in zip(step.results, outs):
            widths[k] = (step, _width(o), _type(o))
        if any(widths[k][1] > RESOLVED for k in step.results) and \
                not any(widths[k][1] > RESOLVED for k in step.operands if k in widths):
            starts[id(step)] = ins   # the only values kept: a run's intermediates are not all held

    with affine.enable(), watching(program, watch):
        run_block(program, input_values(program, inputs))
    stack, visited, found = [program.returns[output]], set(), []
    while stack:   # the output's unresolved ancestors, back to where they start
        key = stack.pop()
        if key in visited or key not in widths or widths[key][1] <= RESOLVED:
            continue
        visited.add(key)
        step = widths[key][0]
        if id(step) in starts:
            found.append(key)
        else:
            stack.extend(k for k in step.operands if k in widths)
    if not found:
        return None
    order = {id(s): n for n, s in enumerate(program.steps)}
    key = min(found, key=lambda k: order[id(widths[k][0])])
    step, w, t = widths[key]
    around = max((widths[k][1] for k in step.operands if k in widths), default=0.0)
    with affine.enable():
        outs = run_step(step, [_exact(v) for v in starts[id(step)]])
    alone = outs[step.results.index(key)]
    first = next((leaf for leaf in (leaves(alone) if isinstance(alone, tuple) else [alone])
                  if isinstance(leaf, Expectation)), None)
    return Origin(position=_position(program, step), op=_mnemonic(step), type=t, width=w, operands=around, alone=_width(alone),
                  why=describe(first) if first is not None else "")


def _type(value) -> str:
    return value.type.mlir if isinstance(value, Expectation) else "tuple"


def _mnemonic(step) -> str:
    if step.inst is None:
        return "func.call"
    m = step.inst.spec.mnemonic
    return m if "." in m else f"stablehlo.{m}"


def _position(program, step) -> int:
    """The step's place among the block's ops from 1 in source order
    (result keys are `op<N>.<k>`, N counting constants too)."""
    head = step.results[0].split(".")[0] if step.results else ""
    return int(head[2:]) + 1 if head.startswith("op") and head[2:].isdigit() else program.steps.index(step) + 1
