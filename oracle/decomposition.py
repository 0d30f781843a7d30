"""Execution of `Decomposition` semantics: the seed's program of other ops, run by the oracle's own walk.

Where the seed defines an op "as a decomposition to existing StableHLO
operations" (batch_norm_inference, batch_norm_training, batch_norm_grad),
the op module states that decomposition line by line
(`spec.dsl.Decomposition.program`) on a `Builder`.  The builder writes it
out as a StableHLO program in generic form — @main takes the op's operands
and returns its results — which is read like any program
(`program.parse_program`: every op of the decomposition checked by its own
constraints and inferred types) and run by the program walk
(`execution.run_block`) on the op's operand *values*.  So:

* every op of the decomposition rounds as its own section says — subtract,
  add, multiply, divide and sqrt correctly rounded, constants rounded to
  nearest even into the element type — in the order the seed writes them;
* a reduction's result is its bounded statement over every allowed
  schedule (spec/schedule.py, spec/bounds.py), and the ops after it carry
  that range (oracle/propagation.py): what comes out is every value some
  schedule of the decomposition could give, no narrower;
* ranges of approximate inputs (a program from the wild feeding a sine
  into a batch norm) enter the decomposition as they are and propagate the
  same way — the rule takes whole values (`on_values`), not primary arrays;
* where the op's semantics are fusable (`Decomposition.fusable`: the
  batch norm ops), each rounding step and inexact constant may instead be
  exact or wider — the `Fused` steps below — so a fused evaluation passes;
* nothing here is specific to batch norm: a decomposition is any program
  the builder can spell, a decomposition may use another decomposed op
  (batch_norm_training calls batch_norm_inference, as the seed writes).

The walk is whole-array, so a model-sized operand (32×64×56×56) costs what
the same chain of ops written in a program costs.  Programs are parsed once
per distinct text (op, types, attributes) and kept.
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import typing
from fractions import Fraction

import numpy as np

from ..spec.dsl import Decomposition
from ..spec.ops import OPS
from ..spec.expectation import Alternative, Expectation
from ..spec.kinds import kind_of
from ..spec.kinds.bounded import BOUNDED
from ..spec.types import TensorType, dense_literal, from_bits, from_ordinals, nan_mask, ordinals, top_ordinal
from .execution import run_block
from .program import Program, parse_program
from .propagation import WHY as UPSTREAM, is_ranged, open_elements_followed_here
from .rounding import round_bits
from .semantics import Context, on_arrays, on_values, operand_types, result_types, run_arrays

WHY = "the seed's decomposition of {op}, run op by op with each op's own rounding (oracle/decomposition.py)"
CARRIED = "ranges of its sums (any schedule) and of approximate inputs carried through the steps after them"


@dataclasses.dataclass(frozen=True)
class Value:
    """A value of the decomposition: its SSA name and type."""

    name: str
    type: TensorType


class Builder:
    """Writes a decomposition as generic StableHLO text (`spec.dsl.Decomposition`
    lists its methods).  Each op's result types come from the op's own
    `infer` (broadcast_in_dim states its shape; reduce's are inferred too)."""

    def __init__(self):
        self.lines: list[str] = []
        self.count = 0
        self.values: list[Value] = []   # every value made, in order
        self.marks: list = []           # per line: None, ROUNDS, or a constant's (RD, RU) bits (`Fused`)

    def _name(self) -> str:
        self.count += 1
        return f"%v{self.count}"

    def _emit(self, mnemonic: str, operands: list, attributes: dict, results: list, region: str = "") -> list:
        spec = OPS[mnemonic]
        attrs = []
        for a in spec.attributes:
            if a.name in attributes and attributes[a.name] is not None:
                if a.group is not None:
                    raise NotImplementedError(f"{mnemonic}: grouped attributes are not spelled by the builder")
                attrs.append(f"{a.name} = {a.kind.to_mlir(attributes[a.name])}")
        unknown = set(attributes) - {a.name for a in spec.attributes}
        if unknown:
            raise TypeError(f"{mnemonic} has no attribute(s) {', '.join(sorted(unknown))}")
        name = self._name()
        lhs = name if len(results) == 1 else f"{name}:{len(results)}"
        outs = results[0].mlir if len(results) == 1 else "(" + ", ".join(t.mlir for t in results) + ")"
        self.lines.append(
            f'  {lhs} = "stablehlo.{mnemonic}"({", ".join(v.name for v in operands)}){region}'
            f'{" {" + ", ".join(attrs) + "}" if attrs else ""} : '
            f'({", ".join(v.type.mlir for v in operands)}) -> {outs}')
        made = [Value(name, results[0])] if len(results) == 1 else \
            [Value(f"{name}#{i}", t) for i, t in enumerate(results)]
        self.values += made
        self.marks.append(ROUNDS if mnemonic in ROUNDING and results[0].element_type.is_float else None)
        return made

    # -- the ops a decomposition writes ------------------------------------

    def constant(self, x, element_type) -> Value:
        """A rank-0 constant of `element_type` holding the exact real `x`
        rounded to nearest, ties to even (oracle/rounding.py)."""
        t = TensorType((), element_type)
        x = Fraction(x) if isinstance(x, int) else x
        bits = np.array(round_bits(x, element_type.format), dtype=element_type.bits_dtype)
        array = from_bits(bits, element_type)
        name = self._name()
        self.lines.append(f'  {name} = "stablehlo.constant"() {{value = {dense_literal(np.asarray(array), t)}}} '
                          f": () -> {t.mlir}")
        self.values.append(Value(name, t))
        self.marks.append(_directed(x, int(bits), element_type))
        return self.values[-1]

    def broadcast_in_dim(self, v: Value, dims, shape) -> Value:
        t = TensorType(tuple(int(d) for d in shape), v.type.element_type)
        return self._emit("broadcast_in_dim", [v], {"broadcast_dimensions": tuple(int(d) for d in dims)}, [t])[0]

    def reduce(self, inputs: list, init_values: list, dimensions, body: str) -> list:
        """reduce with a body applying the op `body` to each pair (argument k,
        argument N+k) — the seed's `lambda x, y: add(x, y)`."""
        spec = OPS["reduce"]
        dims = tuple(int(d) for d in dimensions)
        scalars = [TensorType((), v.type.element_type) for v in inputs]
        probe = spec.instance({"inputs": [v.type for v in inputs], "init_values": [v.type for v in init_values]},
                              {"dimensions": dims}, {})
        results = list(spec.infer(probe)["results"])
        n = len(inputs)
        tag = self.count + 1
        args = [f"%r{tag}_{k}" for k in range(2 * n)]
        block = [f"^bb0({', '.join(f'{a}: {t.mlir}' for a, t in zip(args, scalars + scalars))}):"]
        outs = []
        for k in range(n):
            s = scalars[k].mlir
            block.append(f'    %r{tag}_s{k} = "stablehlo.{body}"({args[k]}, {args[n + k]}) : ({s}, {s}) -> {s}')
            outs.append(f"%r{tag}_s{k}")
        block.append(f'    "stablehlo.return"({", ".join(outs)}) : ({", ".join(t.mlir for t in scalars)}) -> ()')
        region = " ({\n  " + "\n".join(block) + "\n  })"
        return self._emit("reduce", list(inputs) + list(init_values), {"dimensions": dims}, results, region)

    def __getattr__(self, mnemonic: str):
        spec = OPS.get(mnemonic)
        if spec is None or mnemonic.startswith("_"):
            raise AttributeError(mnemonic)

        def op(*operands: Value, **attributes):
            fixed = [o for o in spec.operands if not o.constant]
            if any(o.variadic for o in fixed) or len(fixed) != len(operands):
                raise TypeError(f"{mnemonic}: the builder takes its {len(fixed)} operands one by one")
            inst = spec.instance({o.name: v.type for o, v in zip(fixed, operands)}, attributes, {})
            inferred = spec.infer(inst)
            results = [inferred[r.name] for r in spec.results]
            out = self._emit(mnemonic, list(operands), attributes, results)
            return out[0] if len(out) == 1 else out
        return op


def program_text(inst) -> tuple[str, int]:
    """The decomposition of `inst` as a module, and the number of the op's
    results: @main(operands) returns the op's results, then every other
    value the decomposition makes (so the walk hands back each
    intermediate value, whose open elements `_open` follows)."""
    text, n, _ = _written(inst)
    return text, n


def _written(inst) -> tuple[str, int, tuple]:
    """`program_text`, and the builder's mark of each op (`Builder.marks`)."""
    b = Builder()
    args = [Value(f"%a{i}", t) for i, t in enumerate(operand_types(inst))]
    outs = inst.spec.semantics.program(inst, b, *args)
    want = result_types(inst)
    if [v.type for v in outs] != want:
        raise TypeError(f"{inst.spec.mnemonic}: the decomposition returns "
                        f"{', '.join(v.type.mlir for v in outs)} where the op's results are "
                        f"{', '.join(t.mlir for t in want)}")
    names = {v.name for v in outs}
    rest = [v for v in b.values if v.name not in names]
    returned = list(outs) + rest
    sig = ", ".join(f"{a.name}: {a.type.mlir}" for a in args)
    rets = ", ".join(v.type.mlir for v in returned)
    return (f"func.func @main({sig}) -> ({rets}) {{\n" + "\n".join(b.lines) + "\n"
            f'  "func.return"({", ".join(v.name for v in returned)}) : ({rets}) -> ()\n}}\n'), len(outs), \
        tuple(b.marks)


@functools.lru_cache(maxsize=256)
def _parsed(text: str) -> Program:
    return parse_program(text)


@functools.lru_cache(maxsize=256)
def _fusable(text: str, marks: tuple) -> Program:
    """The program of `text` with each rounding step, and each constant
    whose literal is inexact, as the `Fused` step it may be."""
    program = _parsed(text)
    if len(program.steps) != len(marks):
        raise AssertionError("the decomposition's ops and the builder's marks disagree")
    steps = []
    for step, mark in zip(program.steps, marks):
        if mark is not None:
            inst = copy.copy(step.inst)
            inst.spec = dataclasses.replace(step.inst.spec, semantics=Fused(step.inst,
                                                                          None if mark is ROUNDS else mark))
            step = dataclasses.replace(step, inst=inst)
        steps.append(step)
    return dataclasses.replace(program, steps=steps)


def decomposed(inst) -> tuple[Program, int]:
    """The decomposition of `inst`, read and checked as a program, and the
    number of the op's results (its first returns) — with its steps free
    to be fused (`Fused`) where the op's semantics say so."""
    text, n, marks = _written(inst)
    if getattr(inst.spec.semantics, "fusable", False):
        return _fusable(text, marks), n
    return _parsed(text), n


@on_values(Decomposition)
def _decomposition(ctx: Context, inst, values: list) -> list:
    """The op's decomposition on the operands' whole values (module docstring)."""
    program, n = decomposed(inst)
    with open_elements_followed_here():   # `_open` below follows them through the walk
        got = run_block(program, list(values))
    opened = _open(program, [_open_elements(v) for v in values], dict(zip(program.returns, got)))
    why = WHY.format(op=inst.spec.mnemonic)
    if getattr(inst.spec.semantics, "fusable", False):
        why += FUSED_WHY
    ranged = any(is_ranged(v) for v in list(values) + got)
    return [_opened(_zeros_either_sign(dataclasses.replace(
                o, why="; ".join(w for w in (why, o.why.replace(UPSTREAM, CARRIED)) if w)), ranged), opened.get(k))
            for o, k in zip(got[:n], program.returns[:n])]


# --------------------------------------------------------------------------
# Fused evaluation: each step exact, kept wider, or rounded as written
# --------------------------------------------------------------------------
#
# Where the op's semantics are `Decomposition(..., fusable=True)` (the seed
# says the op "can be expressed as" the decomposition: an equivalence of
# meaning, not a prescribed evaluation — spec/ops/batch_norm_inference.py
# gives the reading), an implementation may evaluate any step of it exactly
# or in a format wider than the element type (fusing steps, an FMA, f32
# arithmetic for a bf16 op, an exact divisor N) instead of rounding it into
# the element type as written.  Any such result of a step lies in
# [RD(x), RU(x)] of its exact value x (rounding to nearest into a wider
# format, then reading it, never leaves the two neighbours of x in the
# element type, which the wider format holds): so every rounding step
# (add, subtract, multiply, divide, sqrt) states its result as the bounded
# range from one value below to one value above the correctly rounded one
# (which contains [RD(x), RU(x)] — wider by at most one ULP on one side,
# since the oracle keeps the correctly rounded value, not the side x lies
# on), an overflow to ±inf as [±largest finite, ±inf], a NaN or an exact
# infinity (an infinite operand, a division by zero) as itself; a constant
# whose literal is inexact (epsilon, N) as exactly [RD(x), RU(x)].  The walk
# carries these ranges through the steps after (propagation.py), so the
# expectation holds every evaluation that rounds each step, or not, in any
# combination — the seed's own decomposition as written among them — and
# nothing that computes another function (an N − 1 variance, epsilon
# outside the square root), nor what errs past every such evaluation.

ROUNDING = frozenset({"add", "subtract", "multiply", "divide", "sqrt"})
ROUNDS = "rounds"
OVERFLOWS = "overflows"   # a constant past the largest finite of a format without infinities (f8E4M3FN): NaN
FUSED_WHY = ("; fusable: each step of it exact, in a wider format, or rounded into the element type "
             "(oracle/decomposition.py, Fused)")


@dataclasses.dataclass(frozen=True)
class Fused:
    """A step of a fusable decomposition: `inst` is the step as written;
    `ends` a constant's (RD, RU) bit patterns where its literal is inexact,
    None for a rounding step (block comment above)."""

    inst: object
    ends: tuple | None = None
    composable: typing.ClassVar[bool] = True


@on_arrays(Fused)
def _fused(sem: Fused, inst, arrays: list, types: list) -> list:
    outs = run_arrays(sem.inst, arrays)
    if sem.ends == OVERFLOWS:   # NaN as written, finite where kept wider: whatever depends on it is open (`_open`)
        (o,) = outs
        return [_opened(dataclasses.replace(o, bit_exact=False), np.ones(1, dtype=bool))]
    if sem.ends is not None:
        (o,) = outs
        lo, hi = (np.asarray(b, dtype=o.type.element_type.bits_dtype).reshape(np.shape(o.bits)) for b in sem.ends)
        return [dataclasses.replace(o, kind=BOUNDED.name, lo=lo, hi=hi, bit_exact=False)]
    return [_faithful(sem.inst, o, arrays) for o in outs]


def _faithful(step, o: Expectation, arrays: list) -> Expectation:
    """`o` (a rounding step's correctly rounded result) as the range a fused
    evaluation of the step may give (block comment above)."""
    et = o.type.element_type
    if not et.is_float or et.is_complex:
        return o
    fmt = et.format
    shape = np.shape(o.bits)
    own = ordinals(np.reshape(o.bits, -1), et)
    top = top_ordinal(fmt)
    lo, hi = np.maximum(own - 1, -top), np.minimum(own + 1, top)
    nan = nan_mask(np.reshape(o.bits, -1), fmt)
    inf = np.abs(own) == top if fmt.has_inf else np.zeros_like(nan)
    fixed = nan | inf
    mnemonic = step.spec.mnemonic
    wide = [np.broadcast_to(np.asarray(a, dtype=np.float64), shape).reshape(-1) for a in arrays]
    with np.errstate(all="ignore"):
        fixed |= _exact(mnemonic, wide, np.asarray(o.array(), dtype=np.float64).reshape(-1), et)
    if inf.any():   # an overflow (every operand finite, no division by zero) may stay finite in a wider format
        overflow = inf & np.logical_and.reduce([np.isfinite(a) for a in wide])
        if mnemonic == "divide":
            overflow &= wide[1] != 0
        fixed &= ~overflow
        lo = np.where(overflow & (own > 0), top - 1, lo)
        hi = np.where(overflow & (own < 0), -(top - 1), hi)
    lo, hi = np.where(fixed, own, lo), np.where(fixed, own, hi)
    out = dataclasses.replace(o, kind=BOUNDED.name, bit_exact=False,
                              lo=from_ordinals(lo, et).reshape(shape), hi=from_ordinals(hi, et).reshape(shape))
    if not fmt.has_inf and nan.any():   # f8E4M3FN: an overflow is NaN as written, finite if kept wider: open
        overflow = nan & np.logical_and.reduce([np.isfinite(a) for a in wide])
        if mnemonic == "divide":
            overflow &= ~((wide[0] == 0) & (wide[1] == 0))
        elif mnemonic == "sqrt":
            overflow &= wide[0] >= 0
        out = _opened(out, overflow)
    return out


def _two_sum(a, b):
    """s, e with a + b = s + e exactly (Knuth's TwoSum, float64)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a):
    c = 134217729.0 * a   # 2^27 + 1: Veltkamp's split of a float64
    hi = c - (c - a)
    return hi, a - hi


def _two_product(a, b):
    """p, e with a · b = p + e exactly (Dekker's TwoProduct, float64), where
    nothing overflows and the product is far from underflow (`safe`)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    safe = (np.abs(a) < 2.0 ** 995) & (np.abs(b) < 2.0 ** 995) & ((a == 0) | (b == 0) | (np.abs(p) > 2.0 ** -960))
    return p, e, safe


def _exact(mnemonic: str, wide: list, r: np.ndarray, et) -> np.ndarray:
    """Where the step's correctly rounded result `r` is its exact value (no
    rounding happened: a fused evaluation gives the same), by error-free
    transformations in float64 — every format's values are float64 values.
    False where it cannot tell: widening there is loose, never unsound."""
    finite = np.isfinite(r) & np.logical_and.reduce([np.isfinite(a) for a in wide])
    if mnemonic in ("add", "subtract"):
        a, b = wide[0], wide[1] if mnemonic == "add" else -wide[1]
        s, e = _two_sum(a, b)
        return finite & (s == r) & (e == 0)
    if mnemonic == "multiply":
        p, e, safe = _two_product(wide[0], wide[1])
        return finite & safe & (p == r) & (e == 0)
    if mnemonic == "divide":   # a / b = r exactly ⟺ r · b = a exactly (b ≠ 0)
        p, e, safe = _two_product(r, wide[1])
        return finite & safe & (wide[1] != 0) & (p == wide[0]) & (e == 0)
    if mnemonic == "sqrt":     # sqrt(a) = r exactly ⟺ r · r = a exactly
        p, e, safe = _two_product(r, r)
        return finite & safe & (p == wide[0]) & (e == 0)
    return np.zeros(np.shape(r), dtype=bool)


def _directed(x, bits: int, et) -> "tuple | None":
    """(RD, RU) bit patterns of the exact real `x` in `et` where the
    constant `bits` (x rounded to nearest) is inexact; None where it is
    exact or x is not a finite real; OVERFLOWS where x overflows (or is
    ±inf in) a format without infinities (f8E4M3FN: NaN as written, finite
    or ±inf in a wider format)."""
    if not et.is_float or et.is_complex:
        return None
    fmt = et.format
    if isinstance(x, float) and not np.isfinite(x):   # ±inf is NaN in a format without it, ±inf if kept wider
        return OVERFLOWS if np.isinf(x) and not fmt.has_inf else None
    q = Fraction(x)
    value = from_bits(np.array(bits, dtype=et.bits_dtype), et)
    v = float(np.asarray(value, dtype=np.float64))
    if not np.isfinite(v):   # overflowed to ±inf: between the largest finite of that sign and it
        if not fmt.has_inf:
            return OVERFLOWS
        if np.isnan(v):
            return None
        top = top_ordinal(fmt)
        big = int(from_ordinals(np.array([top - 1 if v > 0 else 1 - top]), et)[0])
        return (big, bits) if v > 0 else (bits, big)
    if Fraction(v) == q:
        return None
    o = int(ordinals(np.array([bits], dtype=et.bits_dtype), et)[0])
    other = int(from_ordinals(np.array([o + (1 if q > Fraction(v) else -1)]), et)[0])
    return (bits, other) if q > Fraction(v) else (other, bits)


def _zeros_either_sign(o: Expectation, ranged: bool) -> Expectation:
    """An exact (pinned) output of a decomposition through which a range
    passed, as bounded to itself: a range's ends carry no sign of zero (a sum's
    ±0 depend on whether its +0 init is inserted, spec/schedule.py), so the
    corners the walk runs (propagation.py) cannot tell which zero a later
    step gives — `0 · (a − Σ)` is +0 or −0 as the sum falls — and a zero
    there may have either sign.  Nothing else is widened: a bounded
    expectation compares ±0 equal and every other value as exact does."""
    if not ranged or not kind_of(o).pinned or not o.type.element_type.is_float:
        return o
    return dataclasses.replace(o, kind=BOUNDED.name, lo=o.bits.copy(), hi=o.bits.copy())


# --------------------------------------------------------------------------
# Open elements: what an intermediate alternative leaves open downstream
# --------------------------------------------------------------------------
#
# The walk carries ranges from op to op, but an intermediate value's
# implementation-defined elements — a reduction that may overflow or whose
# bound does not exist ("any value", spec/schedule.py), an element whose
# range crosses NaN (propagation.py) — reach the next op as their primary
# value only (execution.run_block).  A decomposition is a program of such steps,
# so here every element an open element flows into is open too: each
# output element that depends on one may be any value, labelled.  What
# depends on what is found by running each op on a probe — ones, with NaN
# at the open elements of its operands (every op of a decomposition
# propagates NaN: IEEE arithmetic, data movement, sums) — so a NaN of the
# probe's result marks an element that depends on an open one.  A probe
# NaN for another reason (ones summed past the format's largest finite)
# only opens more: never less than what depends on an open element.

OPEN = ("any value: it depends on an element of the decomposition that the seed leaves open "
        "(a sum that may overflow or has no bound in this format, or a range that crosses NaN)")
PRIMARY = "the value on the primary values of the decomposition"


def _open_elements(v) -> "np.ndarray | None":
    """Flat mask of the elements of a value that are implementation-defined."""
    if not isinstance(v, Expectation) or not v.impl_defined:
        return None
    mask = np.zeros(int(np.size(v.bits)) // (2 if v.type.element_type.is_complex else 1), dtype=bool)
    mask[np.asarray(v.impl_defined, dtype=np.int64)] = True
    return mask


def _either(a, b):
    if a is None or not a.any():
        return b
    if b is None or not b.any():
        return a
    return a | b


def _open(program: Program, inputs: list, env: dict | None) -> dict:
    """{value key: flat mask of its open elements} over a block: its
    arguments' (`inputs`), then each step's — its own open elements (from
    `env`, the values the walk gave; None: none of its own) and those that
    depend on an open operand element."""
    opened = {k: m for (k, _), m in zip(program.args, inputs)}
    for step in program.steps:
        ins = [opened.get(k) for k in step.operands]
        through = _through(step, ins) if any(m is not None and m.any() for m in ins) else [None] * len(step.results)
        for k, m in zip(step.results, through):
            opened[k] = _either(_open_elements(env[k]) if env is not None else None, m)
    return opened


def _through(step, ins: list) -> list:
    """Per result of the step: the elements that depend on an open element
    of its operands."""
    inst = step.inst
    results = result_types(inst)
    if isinstance(inst.spec.semantics, Decomposition):   # a decomposed op inside: through its own program
        program, n = decomposed(inst)
        inner = _open(program, ins, None)
        return [inner.get(k) for k in program.returns[:n]]
    types = operand_types(inst)
    if any(not t.element_type.is_float for t in types + results):
        return [np.ones(_count(t), dtype=bool) for t in results]   # no NaN to probe with: all open
    probes = []
    for t, m in zip(types, ins):
        a = np.ones(tuple(int(d) for d in t.shape), dtype=np.float64)
        if m is not None:
            a.reshape(-1)[m] = np.nan
        probes.append(a.astype(t.element_type.numpy))
    outs = run_arrays(inst, probes)
    return [nan_mask(np.reshape(o.bits, -1), t.element_type.format) for o, t in zip(outs, results)]


def _count(t: TensorType) -> int:
    return int(np.prod([int(d) for d in t.shape], dtype=np.int64))


def _opened(o: Expectation, mask) -> Expectation:
    """`o` with "any value" offered at the elements of `mask`."""
    if mask is None or not mask.any():
        return o
    elements = [int(i) for i in np.nonzero(mask)[0]]
    o.impl_defined = sorted(set(o.impl_defined) | set(elements))
    o.alternatives = list(o.alternatives) or [Alternative(PRIMARY, o.bits)]
    o.alternatives.append(Alternative(OPEN, None, elements))
    return o
