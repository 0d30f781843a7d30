"""Known compiler rewrites, applied to a program: naming what a backend computed when it is not what the spec says.

A backend that returns x·fl(1/0.9) for x/0.9 is 1 ULP off on a quarter of
the elements; "out of tolerance" is true but says nothing an implementer
can act on.  So, where a backend's output fails, `run` asks the oracle for
the expectation of the same program with one known rewrite applied — the
spec's value of the rewritten program, by the same rules — and where the
failing elements meet *that* expectation bit for bit, the cause names the
rewrite (shlo_conform/differential.py).  A name, never a verdict: the
elements still fail, since the spec states the division, not the
multiplication.

Each rewrite is a row of `REWRITES` (a new one is a function and a row): a function that rewrites a module in
place with jaxlib's MLIR bindings (regions included: a while loop's body is
rewritten too) and returns how many sites it changed.  Today:

* **reciprocal multiplication** — `divide(x, c)` with `c` a constant (or a
  broadcast, reshape or convert of one) of a real float type becomes
  `multiply(x, RN(1/c))`, the reciprocal correctly rounded into the
  format (exact rationals, `rounding.round_bits`).  XLA:CPU does this
  (docs/findings.md).
* **FMA contraction** — `add(multiply(a, b), c)` and `subtract` with the
  product on either side, where the product has no other use, in f32, f16
  or bf16, becomes one rounding of the exact `a·b ± c`: computed as
  `convert(multiply(a64, b64) ± c64)` in f64, where `a·b` is exact (24 + 24
  bits ≤ 53) and the sum rounds once in f64 before the final rounding —
  a double rounding that differs from the true fused result only where the
  f64 sum lands exactly on a midpoint of the narrow format (probability
  about 2^-29 per element), which leaves such an element unnamed, never
  misnamed as agreeing.  f64 programs have no wider type to do this in
  and are not rewritten.

* **algebraic simplification** — `subtract(add(x, c), c)` (either order
  of the add) with the same constant `c` becomes `x`: the identity holds
  for reals, not in floating point (1 + 10^-9 − 1 is 0 in f32).  XLA's
  algebraic simplifier applies it, also inside the acosh it keeps as its
  own op (docs/findings.md).

* **fast min/max** — `maximum(x, y)` as `x < y ? y : x`, `minimum` as
  `x > y ? y : x`: what one maxss/minss computes, and what XLA:CPU does
  with `xla_cpu_enable_fast_min_max=true` (a NaN in y is lost, −0 and +0
  are not ordered).

Flushed subnormals are named by suites/causes.py already (inputs and
outputs); reassociation has no single rewritten program (every order is a
different one) and stays "out of tolerance" beyond the bounded kinds.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import numpy as np

from ..spec.types import element_type, from_bits
from .rounding import round_bits


@dataclass(frozen=True)
class Rewrite:
    name: str                      # what the cause line names
    says: str                      # what was computed instead, in one phrase
    apply: Callable                # (module) -> sites rewritten, in place


# --------------------------------------------------------------------------
# Walking a module
# --------------------------------------------------------------------------

def _walk(op):
    """Every operation nested in `op` (pre-order), listed first: rewriting
    while iterating a block would skip or revisit ops."""
    out = []
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner = inner.operation
                out.append(inner)
                out.extend(_walk(inner))
    return out


_FLOATS = {"f16": "f16", "bf16": "bf16", "f32": "f32", "f64": "f64"}


def _float_name(t) -> str | None:
    """The element type's name of a ranked tensor type when it is a real
    float format the rewrites handle, else None."""
    from jaxlib.mlir import ir
    try:
        et = str(ir.RankedTensorType(t).element_type)
    except (ValueError, TypeError):
        return None
    return _FLOATS.get(et)


# --------------------------------------------------------------------------
# Reciprocal multiplication
# --------------------------------------------------------------------------

_PASS_THROUGH = ("stablehlo.broadcast_in_dim", "stablehlo.reshape")


def _constant_chain(value):
    """(the constant op, the ops from it to `value`) when `value` is a
    constant or a broadcast/reshape of one; else None."""
    chain = []
    owner = value.owner
    while getattr(owner, "name", None) in _PASS_THROUGH:
        chain.append(owner)
        owner = owner.operands[0].owner
    if getattr(owner, "name", None) != "stablehlo.constant":
        return None
    return owner, chain[::-1]


def _reciprocal_attr(const, fmt_name: str):
    """The constant's values replaced by their correctly rounded
    reciprocals, as a DenseElementsAttr of the same type; None where a
    value has none to speak of (0, ±inf, NaN) or the values cannot be read."""
    from jaxlib.mlir import ir
    et = element_type(fmt_name)
    t = ir.RankedTensorType(const.results[0].type)
    attr = const.attributes["value"]
    try:
        dense = ir.DenseElementsAttr(attr)
        if fmt_name == "bf16":
            return None   # numpy has no bf16 buffer to read it through here: not rewritten
        values = np.array(dense) if not dense.is_splat else np.full(t.shape, np.array(dense.get_splat_value().value))
    except (ValueError, TypeError):
        return None
    values = np.asarray(values, dtype=et.numpy).reshape(t.shape)
    if not np.all(np.isfinite(values.astype(np.float64))) or np.any(values == 0):
        return None
    flat = values.reshape(-1)
    bits = np.array([round_bits(Fraction(1) / Fraction(float(v)), et.format) for v in flat], dtype=et.bits_dtype)
    recip = from_bits(bits.reshape(values.shape), et)
    return ir.DenseElementsAttr.get(np.ascontiguousarray(recip), type=t.element_type, shape=list(t.shape))


def reciprocal_multiplication(module) -> int:
    from jaxlib.mlir import ir
    sites = 0
    for op in _walk(module.operation):
        if op.name != "stablehlo.divide":
            continue
        fmt = _float_name(op.results[0].type)
        found = _constant_chain(op.operands[1])
        if fmt is None or found is None:
            continue
        const, chain = found
        attr = _reciprocal_attr(const, fmt)
        if attr is None:
            continue
        with ir.InsertionPoint(op):
            value = ir.Operation.create("stablehlo.constant", results=[const.results[0].type],
                                        attributes={"value": attr}).results[0]
            for c in chain:   # the same broadcasts and reshapes, of the reciprocal
                value = ir.Operation.create(c.name, results=[c.results[0].type], operands=[value],
                                            attributes={n: c.attributes[n] for n in c.attributes}).results[0]
            product = ir.Operation.create("stablehlo.multiply", results=[op.results[0].type],
                                          operands=[op.operands[0], value])
        op.results[0].replace_all_uses_with(product.results[0])
        op.erase()
        sites += 1
    return sites


# --------------------------------------------------------------------------
# FMA contraction
# --------------------------------------------------------------------------

_NARROW = ("f32", "f16", "bf16")


def _uses(value) -> int:
    return sum(1 for _ in value.uses)


def fma_contraction(module) -> int:
    from jaxlib.mlir import ir
    sites = 0
    for op in _walk(module.operation):
        if op.name not in ("stablehlo.add", "stablehlo.subtract"):
            continue
        t = op.results[0].type
        if _float_name(t) not in _NARROW:
            continue
        side = next((k for k in (0, 1) if getattr(op.operands[k].owner, "name", None) == "stablehlo.multiply"
                     and _uses(op.operands[k]) == 1), None)
        if side is None:
            continue
        mul = op.operands[side].owner
        wide = ir.RankedTensorType.get(ir.RankedTensorType(t).shape, ir.F64Type.get())
        with ir.InsertionPoint(op):
            def up(v):
                return ir.Operation.create("stablehlo.convert", results=[wide], operands=[v]).results[0]
            a, b = up(mul.operands[0]), up(mul.operands[1])
            c = up(op.operands[1 - side])
            p = ir.Operation.create("stablehlo.multiply", results=[wide], operands=[a, b]).results[0]
            operands = [p, c] if side == 0 else [c, p]
            s = ir.Operation.create(op.name, results=[wide], operands=operands).results[0]
            fused = ir.Operation.create("stablehlo.convert", results=[t], operands=[s])
        op.results[0].replace_all_uses_with(fused.results[0])
        op.erase()
        mul.erase()
        sites += 1
    return sites


# --------------------------------------------------------------------------
# (x + c) − c folded to x
# --------------------------------------------------------------------------

def _constant_value(value):
    """The printed value of the constant `value` comes from (through
    broadcasts and reshapes), or None."""
    found = _constant_chain(value)
    return None if found is None else str(found[0].attributes["value"])


def cancelled_constants(module) -> int:
    sites = 0
    for op in _walk(module.operation):
        if op.name != "stablehlo.subtract" or _float_name(op.results[0].type) is None:
            continue
        total, c = op.operands[0], _constant_value(op.operands[1])
        if c is None or getattr(total.owner, "name", None) != "stablehlo.add":
            continue
        add = total.owner
        keep = next((add.operands[1 - k] for k in (0, 1) if _constant_value(add.operands[k]) == c), None)
        if keep is None or keep.type != op.results[0].type:
            continue
        op.results[0].replace_all_uses_with(keep)
        op.erase()
        sites += 1
    return sites


# --------------------------------------------------------------------------
# Fast min/max: no NaN propagation, no order of signed zeros
# --------------------------------------------------------------------------

def fast_min_max(module) -> int:
    """maximum(x, y) as `x < y ? y : x` and minimum(x, y) as `x > y ? y : x`
    (real float types) — one compare and a select, what a single maxss/minss
    instruction computes: NaN only where x is NaN, and x where they tie
    (−0 against +0)."""
    from jaxlib.mlir import ir
    sites = 0
    for op in _walk(module.operation):
        if op.name not in ("stablehlo.maximum", "stablehlo.minimum") or _float_name(op.results[0].type) is None:
            continue
        t = ir.RankedTensorType(op.results[0].type)
        flags = ir.RankedTensorType.get(t.shape, ir.IntegerType.get_signless(1))
        direction = "LT" if op.name == "stablehlo.maximum" else "GT"
        x, y = op.operands[0], op.operands[1]
        with ir.InsertionPoint(op):
            pick_y = ir.Operation.create(
                "stablehlo.compare", results=[flags], operands=[x, y],
                attributes={"comparison_direction": ir.Attribute.parse(f"#stablehlo<comparison_direction {direction}>"),
                            "compare_type": ir.Attribute.parse("#stablehlo<comparison_type FLOAT>")}).results[0]
            chosen = ir.Operation.create("stablehlo.select", results=[op.results[0].type], operands=[pick_y, y, x])
        op.results[0].replace_all_uses_with(chosen.results[0])
        op.erase()
        sites += 1
    return sites


REWRITES = (
    Rewrite("reciprocal multiplication", "x / c computed as x · fl(1/c)", reciprocal_multiplication),
    Rewrite("FMA contraction", "a·b ± c computed with one rounding (fused multiply-add)", fma_contraction),
    Rewrite("algebraic simplification", "(x + c) − c folded to x", cancelled_constants),
    Rewrite("fast min/max", "max/min as one compare and select (x < y ? y : x): NaN and −0 not ordered",
            fast_min_max),
)


def rewritten(text: str) -> list[tuple[Rewrite, str, int]]:
    """(rewrite, the rewritten program's generic text, sites) for each
    rewrite that changes `text` (a program in any textual syntax)."""
    from jaxlib.mlir import ir

    from .reading import registered_context
    out = []
    for rw in REWRITES:
        with registered_context(), ir.Location.unknown():
            module = ir.Module.parse(text)
            sites = rw.apply(module)
            if sites:
                out.append((rw, module.operation.get_asm(print_generic_op_form=True, assume_verified=True), sites))
    return out

