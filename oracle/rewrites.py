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
* **reciprocal multiplication (broadcast divisor)** — `divide(x,
  broadcast(d))` with `d` computed (not a constant) and fewer elements than
  `x` becomes `multiply(x, broadcast(fl(1/d)))`: one reciprocal per element
  of `d`, then a product per element of `x`.  XLA:CPU does this (a k-means
  step's sums divided by their counts; docs/findings.md).

* **FMA contraction** — `add(multiply(a, b), c)` and `subtract` with the
  product (or `chlo.square(a)`, a · a; through converts to its own type) on either side, where the product
  has no other use, in f32, f16
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

* **a sum read exactly by acosh** — `chlo.acosh(add(y, c))`, `c` a
  constant, in f32, f16 or bf16, becomes acosh of the exact real y + c:
  `convert(chlo.acosh(convert(y) + convert(c)))` in f64, where the sum of
  two narrow values is exact while their exponents lie within 29 bits
  (f32) and acosh's f64 value rounds once more into the narrow format.
  XLA keeps acosh as its own op and its decomposition subtracts 1 from
  the argument; the algebraic simplifier folds (y + 1) − 1 to y there
  (`jnp.arccosh(jnp.abs(s) + 1)`: 22 ULP from the spec's value at
  s = 0.015165865, within 1 of acosh(1 + s) unrounded; docs/findings.md).

* **fast min/max** — `maximum(x, y)` as `x < y ? y : x`, `minimum` as
  `x > y ? y : x`: what one maxss/minss computes, and what XLA:CPU does
  with `xla_cpu_enable_fast_min_max=true` (a NaN in y is lost, −0 and +0
  are not ordered).

* **reassociation (constants folded)** — `(x + c1) + c2` becomes `x +
  fl(c1 + c2)`, and likewise with subtract on either side (`(c1 − x) + c2`
  is `fl(c1 + c2) − x`) and for multiply (`(x · c1) · c2` is `x · fl(c1 ·
  c2)`): the constants are brought together and folded in the format,
  one rounding, where the spec rounds after each op.  XLA's algebraic
  simplifier does this in f16, f32 and f64 as jax.jit compiles
  (docs/findings.md), also where the inner sum has other uses.

* **reassociation (right to left / left to right / balanced)** — a chain
  of floating-point `add` (or of `multiply`) ops whose inner results have
  one use each, with three or more leaves, re-bracketed: `a + (b + (c +
  d))`, `((a + b) + c) + d`, or halved recursively `(a + b) + (c + d)`.
  Reassociation in general has no single program (every order is a
  different one), but these three are the orders a rewrite commonly
  leaves (a left fold as written, a right fold, a tree-height reduction
  for parallelism), each one program, so "bit for bit" still means
  something (three leaves halved are the left fold: only the right fold
  differs there).  XLA:CPU keeps the
  order of a chain of non-constant operands (docs/findings.md); the rows
  name backends that do not.  A reduce's order is implementation-defined
  already and is never a rewrite.

* **excess precision** — a value narrowed and widened again is kept
  unrounded: `convert(convert(a, bf16), f32)` with `a` in f32 is `a`, and
  `convert(op(x, …))` from bf16 or f16 to a wider float, `op` an
  element-wise arithmetic op of the narrow format, is `op` computed in f32
  on the operands widened, its result never rounded to the narrow format.
  The spec rounds into the narrow format and the convert widens that
  value.  XLA:CPU does both as jax.jit compiles (`xla_allow_excess_precision`,
  on by default: its algebraic simplifier drops a narrowing convert
  followed by a widening one, after computing bf16 arithmetic in f32;
  docs/findings.md), so `jnp.mean(x.astype(bf16))` averages the f32 inputs
  and `(x.astype(bf16) * 3).astype(f32)` is not a bf16 value.

* **reciprocal square root** — `divide(a, sqrt(b))` (the sqrt through
  broadcasts or reshapes) becomes `multiply(a, rsqrt(b))`: XLA's algebraic
  simplifier does this (a layer norm's `(x − m) / sqrt(v + ε)` in f16).

* **subnormals flushed** — every subnormal an arithmetic op reads (DAZ) or
  gives (FTZ) taken as a zero of its sign, all through the program, where
  suites/causes.py can only name an element that is itself a flushed
  subnormal: XLA:CPU runs with both modes set, so `jnp.frexp` or
  `jnp.floor` of a subnormal input differ in elements that are not
  subnormal at all.  `run` judges this program only where an input holds
  a subnormal (`SUBNORMAL_INPUTS_ONLY`): on other inputs it would cost a larger
  program's run for every failing output and explain nothing but an
  underflow inside the program, which the element-level name covers.

* **subnormals flushed, compares too** — as above, and a compare's
  operands flushed as well: a packed compare under DAZ reads a subnormal
  as zero (`jnp.where(y > 0, x, 0)` with a subnormal y takes the 0 on
  XLA:CPU), while frexp's `x == 0` test does not — which a backend does
  depends on the instructions it picks, so each is a row.

* **subnormals read as zero by compares** — only a compare's operands
  flushed, the arithmetic keeping its subnormals: XLA:CPU's `remainder`
  keeps a subnormal, and the `rem != 0` test jnp.remainder puts after it
  reads it as zero, so the sign adjustment is skipped.

* **subnormal read as half the smallest subnormal** — `log(x)` and
  `power(x, y)` of a nonzero subnormal x computed as if x were ±2^(emin −
  p) (f32: 2^-150, f64: 2^-1075), a value the format cannot hold; neither
  the spec's value nor a flush's −inf, 0 or inf.  XLA:CPU's f32 log and
  its f32 and f64 pow do this (docs/findings.md).

* **additive identity** — `add(x, +0)` folded to `x`: IEEE gives +0 for
  −0 + +0, the fold keeps −0.  XLA's algebraic simplifier does this
  (`x + 0.0`; docs/findings.md).

* **square root of a square** — `sqrt(x · x)` folded to `|x|`: equal
  wherever x·x neither overflows nor underflows (then the spec gives inf
  or 0).  XLA:CPU does this (docs/findings.md).

* **reciprocal of a reciprocal** — `1 / (1 / x)` folded to `x`: the spec
  rounds twice (1 ulp off on about one element in seven) and gives inf or
  0 where 1/x underflows or overflows.  XLA:CPU does this.

* **scatter window skipped whole** — a `scatter` whose update window
  reaches out of bounds has its index vector moved wholly out (every
  element of the window out of bounds), so the whole window is skipped:
  XLA's reading (seed 002), where v1.20 skips the out-of-bounds elements
  alone and updates the rest (docs/spec-findings.md).

* **mask multiplication as a select** — `multiply(m, x)` where `m` is a
  float mask, every element a `convert` of an i1 (through shape ops and
  calls: `jax.nn.one_hot` is a private function returning
  `convert(compare(…))`), becomes `select(m != 0, x, 0)`.  The spec
  multiplies: 0 · x is −0 for a negative x and NaN for an infinite or NaN
  x; the select gives +0 (or 0 for the NaN).  XLA's algebraic simplifier
  does this (`jax.nn.one_hot(i, n) * x`: docs/findings.md).

Any other order stays "out of tolerance" beyond the bounded kinds.
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
    subnormal_inputs_only: bool = False   # explains nothing unless an input holds a subnormal (`run` asks
                                          # suites/causes.py's flush_inputs), so judged only then
    keeps_tolerance: bool = False   # computes an approximate narrow op in f64, rounded once: the value is the
                                    # correctly rounded one, the op it stands for keeps its tolerance (`tolerant`)


# --------------------------------------------------------------------------
# Walking a module
# --------------------------------------------------------------------------

def walk(op):
    """Every operation nested in `op` (pre-order), listed first: rewriting
    while iterating a block would skip or revisit ops."""
    out = []
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner = inner.operation
                out.append(inner)
                out.extend(walk(inner))
    return out


def _compare(lhs, rhs, direction: str, kind: str = "FLOAT"):
    """`compare(lhs, rhs)`, an i1 tensor of their shape (inserted where the
    caller's InsertionPoint says)."""
    from jaxlib.mlir import ir
    flags = ir.RankedTensorType.get(ir.RankedTensorType(lhs.type).shape, ir.IntegerType.get_signless(1))
    return ir.Operation.create("stablehlo.compare", results=[flags], operands=[lhs, rhs], attributes={
        "comparison_direction": ir.Attribute.parse(f"#stablehlo<comparison_direction {direction}>"),
        "compare_type": ir.Attribute.parse(f"#stablehlo<comparison_type {kind}>")}).results[0]


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


def _source(value):
    """(the op `value` comes from through broadcasts and reshapes — None for
    a block argument —, those ops from it to `value`, in order)."""
    chain = []
    owner = value.owner
    while getattr(owner, "name", None) in _PASS_THROUGH:
        chain.append(owner)
        owner = owner.operands[0].owner
    return owner, chain[::-1]


def _rebuilt(value, chain: list):
    """`value` through the same broadcasts and reshapes as `chain` (insert
    where the caller's InsertionPoint says)."""
    from jaxlib.mlir import ir
    for c in chain:
        value = ir.Operation.create(c.name, results=[c.results[0].type], operands=[value],
                                    attributes={n: c.attributes[n] for n in c.attributes}).results[0]
    return value


def _as_product(op, value) -> None:
    """`op` (a divide) replaced by `multiply(its dividend, value)`, `value`
    made at an InsertionPoint before `op`."""
    from jaxlib.mlir import ir
    with ir.InsertionPoint(op):
        product = ir.Operation.create("stablehlo.multiply", results=[op.results[0].type],
                                      operands=[op.operands[0], value])
    op.results[0].replace_all_uses_with(product.results[0])
    op.erase()


def _constant_chain(value):
    """(the constant op, the ops from it to `value`) when `value` is a
    constant or a broadcast/reshape of one; else None."""
    owner, chain = _source(value)
    return (owner, chain) if getattr(owner, "name", None) == "stablehlo.constant" else None


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
    for op in walk(module.operation):
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
            value = _rebuilt(ir.Operation.create("stablehlo.constant", results=[const.results[0].type],
                                                 attributes={"value": attr}).results[0], chain)
        _as_product(op, value)
        sites += 1
    return sites


def broadcast_reciprocal(module) -> int:
    """`divide(x, broadcast(d))`, d not a constant and fewer elements than x:
    `multiply(x, broadcast(divide(1, d)))`, one reciprocal per element of d
    (each correctly rounded, as the spec's divide)."""
    from jaxlib.mlir import ir
    sites = 0
    for op in walk(module.operation):
        if op.name != "stablehlo.divide" or _float_name(op.results[0].type) is None:
            continue
        owner, chain = _source(op.operands[1])
        if not chain or owner is None or getattr(owner, "name", None) == "stablehlo.constant":
            continue
        d = chain[0].operands[0]
        if ir.RankedTensorType(d.type).rank > ir.RankedTensorType(op.results[0].type).rank \
                or _elements(d.type) >= _elements(op.results[0].type):
            continue
        t = ir.RankedTensorType(d.type)
        with ir.InsertionPoint(op):
            recip = _rebuilt(ir.Operation.create("stablehlo.divide", results=[t],
                                                 operands=[_constant_of(d.type, np.float64(1.0)), d]).results[0], chain)
        _as_product(op, recip)
        sites += 1
    return sites


def _elements(t) -> int:
    from jaxlib.mlir import ir
    return int(np.prod(ir.RankedTensorType(t).shape, dtype=np.int64))


# --------------------------------------------------------------------------
# FMA contraction
# --------------------------------------------------------------------------

_NARROW = ("f32", "f16", "bf16")


def _uses(value) -> int:
    return sum(1 for _ in value.uses)


# a product: JAX writes x² (jnp.square, x ** 2) as chlo.square, which XLA contracts like x · x
_PRODUCTS = ("stablehlo.multiply", "chlo.square")


def _product_of(value):
    """(the multiply or chlo.square `value` is, through converts to its own
    type — JAX's weak-typed constants leave `convert(x·c) : f32 → f32`, an
    exact no-op —, those converts) where each has no other use; else None."""
    same = []
    while getattr(value.owner, "name", None) == "stablehlo.convert" and _uses(value) == 1 \
            and value.owner.operands[0].type == value.type:
        same.append(value.owner)
        value = value.owner.operands[0]
    if getattr(value.owner, "name", None) in _PRODUCTS and _uses(value) == 1:
        return value.owner, same
    return None


def fma_contraction(module) -> int:
    from jaxlib.mlir import ir
    sites = 0
    for op in walk(module.operation):
        if op.name not in ("stablehlo.add", "stablehlo.subtract"):
            continue
        t = op.results[0].type
        if _float_name(t) not in _NARROW:
            continue
        side = next((k for k in (0, 1) if _product_of(op.operands[k]) is not None), None)
        if side is None:
            continue
        mul, same = _product_of(op.operands[side])
        wide = ir.RankedTensorType.get(ir.RankedTensorType(t).shape, ir.F64Type.get())
        with ir.InsertionPoint(op):
            def up(v):
                return ir.Operation.create("stablehlo.convert", results=[wide], operands=[v]).results[0]
            a = up(mul.operands[0])
            b = a if mul.name == "chlo.square" else up(mul.operands[1])
            c = up(op.operands[1 - side])
            p = ir.Operation.create("stablehlo.multiply", results=[wide], operands=[a, b]).results[0]
            operands = [p, c] if side == 0 else [c, p]
            s = ir.Operation.create(op.name, results=[wide], operands=operands).results[0]
            fused = ir.Operation.create("stablehlo.convert", results=[t], operands=[s])
        op.results[0].replace_all_uses_with(fused.results[0])
        op.erase()
        for dead in same:
            dead.erase()
        mul.erase()
        sites += 1
    return sites


# --------------------------------------------------------------------------
# Excess precision: a narrow op's rounding skipped before a widening convert
# --------------------------------------------------------------------------

_ROUNDED = ("bf16", "f16")
# Element-wise ops whose operands and result share one float type: computed in f32 instead, each
# differs from the narrow op only by the rounding into the narrow format the rewrite skips.
_ARITHMETIC = ("stablehlo.add", "stablehlo.subtract", "stablehlo.multiply", "stablehlo.divide",
               "stablehlo.remainder", "stablehlo.power", "stablehlo.atan2", "stablehlo.sqrt", "stablehlo.rsqrt",
               "stablehlo.cbrt", "stablehlo.exponential", "stablehlo.exponential_minus_one", "stablehlo.log",
               "stablehlo.log_plus_one", "stablehlo.logistic", "stablehlo.tanh", "stablehlo.sine",
               "stablehlo.cosine", "stablehlo.tan")


def _narrowing(op) -> bool:
    """`op` is a convert from a real float format into a narrower one (fewer bits)."""
    a, b = _float_name(op.operands[0].type), _float_name(op.results[0].type) if op.results else None
    return op.name == "stablehlo.convert" and a is not None and b is not None \
        and element_type(b).format.bits < element_type(a).format.bits


def excess_precision(module) -> int:
    """A widening convert of a narrow value takes what the narrow value was
    computed from, unrounded: `convert(convert(a, narrow), type(a))` is `a`,
    and `convert(op(x, …))` with `op` a bf16/f16 op of `_ARITHMETIC` is `op`
    in f32 on the operands widened (then converted to the convert's type)."""
    from jaxlib.mlir import ir
    sites = 0
    for op in walk(module.operation):
        if op.name != "stablehlo.convert" or _float_name(op.results[0].type) not in ("f32", "f64"):
            continue
        inner = op.operands[0].owner
        narrow = op.operands[0].type
        if getattr(inner, "name", None) == "stablehlo.convert" and _narrowing(inner) \
                and inner.operands[0].type == op.results[0].type:
            op.results[0].replace_all_uses_with(inner.operands[0])
            op.erase()
            sites += 1
            continue
        if getattr(inner, "name", None) not in _ARITHMETIC or _float_name(narrow) not in _ROUNDED \
                or any(v.type != narrow for v in inner.operands):
            continue
        f32 = ir.RankedTensorType.get(ir.RankedTensorType(narrow).shape, ir.F32Type.get())
        with ir.InsertionPoint(op):
            wide = [ir.Operation.create("stablehlo.convert", results=[f32], operands=[v]).results[0]
                    for v in inner.operands]
            value = ir.Operation.create(inner.name, results=[f32], operands=wide,
                                        attributes={n: inner.attributes[n] for n in inner.attributes}).results[0]
            if op.results[0].type != f32:
                value = ir.Operation.create("stablehlo.convert", results=[op.results[0].type],
                                            operands=[value]).results[0]
        op.results[0].replace_all_uses_with(value)
        op.erase()
        sites += 1
    return sites


# --------------------------------------------------------------------------
# a / sqrt(b) as a · rsqrt(b)
# --------------------------------------------------------------------------

def reciprocal_square_root(module) -> int:
    """`divide(a, sqrt(b))` — the sqrt reached through broadcasts and
    reshapes — becomes `multiply(a, rsqrt(b))` through the same ops."""
    from jaxlib.mlir import ir
    sites = 0
    for op in walk(module.operation):
        if op.name != "stablehlo.divide" or _float_name(op.results[0].type) is None:
            continue
        owner, chain = _source(op.operands[1])
        if getattr(owner, "name", None) != "stablehlo.sqrt":
            continue
        with ir.InsertionPoint(op):
            value = _rebuilt(ir.Operation.create("stablehlo.rsqrt", results=[owner.results[0].type],
                                                 operands=[owner.operands[0]]).results[0], chain)
        _as_product(op, value)
        sites += 1
    return sites


# --------------------------------------------------------------------------
# Subnormals flushed to zero (FTZ and DAZ) all through the program
# --------------------------------------------------------------------------

# Ops that move or reinterpret values without arithmetic: a CPU's FTZ/DAZ modes do not touch what they carry
# (a bitcast, a select, a copy, a sign flip are bit operations), so their own operands are not flushed —
_MOVES = ("stablehlo.reshape", "stablehlo.transpose", "stablehlo.broadcast_in_dim", "stablehlo.broadcast",
          "stablehlo.slice", "stablehlo.dynamic_slice", "stablehlo.dynamic_update_slice", "stablehlo.concatenate",
          "stablehlo.pad", "stablehlo.reverse", "stablehlo.gather", "stablehlo.bitcast_convert",
          "stablehlo.get_tuple_element", "stablehlo.tuple", "stablehlo.optimization_barrier", "stablehlo.select",
          "stablehlo.copy", "stablehlo.negate", "stablehlo.abs", "stablehlo.real", "stablehlo.imag",
          "stablehlo.complex", "stablehlo.constant", "stablehlo.iota", "stablehlo.while", "stablehlo.if",
          "stablehlo.case", "stablehlo.return", "func.return", "func.call", "func.func", "builtin.module",
          # and compares: XLA:CPU sees a subnormal there (`jnp.frexp` of the largest subnormal: its `x == 0` test
          # is false while the product before it read the input as zero)
          "stablehlo.compare", "stablehlo.is_finite")


def _flushed(value, fmt: str):
    """`value` with its subnormal elements made zeros of their sign:
    select(|v| < the smallest normal, v · 0, v) (insert where the caller's
    InsertionPoint says)."""
    from jaxlib.mlir import ir
    t = value.type
    magnitude = ir.Operation.create("stablehlo.abs", results=[t], operands=[value]).results[0]
    tiny = _compare(magnitude, _constant_of(t, np.float64(element_type(fmt).format.min_normal)), "LT")
    zero = ir.Operation.create("stablehlo.multiply", results=[t],
                               operands=[value, _constant_of(t, np.float64(0.0))]).results[0]
    return ir.Operation.create("stablehlo.select", results=[t], operands=[tiny, zero, value]).results[0]


_COMPARES = ("stablehlo.compare", "stablehlo.is_finite")


def _flushing(moves: tuple):
    """The flush with `moves` as the ops that leave their operands alone."""
    def flushed(module) -> int:
        """Every subnormal an arithmetic op reads (DAZ) or produces (FTZ) made a
        zero of its sign: an operand is flushed where its consumer does
        arithmetic (not one of the moves) or its producer did — so the
        program's inputs as an arithmetic op reads them, every arithmetic
        result wherever it goes (another op, a move, a return), but not a value
        only moved from an input to an output."""
        from jaxlib.mlir import ir
        sites = 0
        for op in walk(module.operation):
            for i, v in enumerate(list(op.operands)):
                fmt = _float_name(v.type)
                producer = getattr(v.owner, "name", None)   # None: a block argument
                if fmt is None or (op.name in moves and (producer is None or producer in moves)):
                    continue
                with ir.InsertionPoint(op):
                    op.operands[i] = _flushed(v, fmt)
                sites += 1
        return sites
    return flushed


# Compares excepted (frexp's `x == 0`), and — what a packed compare under DAZ does (`jnp.where(y > 0, …)` with a
# subnormal y takes the other branch on XLA:CPU) — compares flushed too: which one a backend does depends on
# the instructions it picks, so each is a row.
flushed_subnormals = _flushing(_MOVES)
flushed_subnormals_compares_too = _flushing(tuple(m for m in _MOVES if m not in _COMPARES))


def flushed_in_compares(module) -> int:
    """Every subnormal a compare reads taken as a zero of its sign, and
    nothing else flushed: the arithmetic keeps its subnormals (XLA:CPU's
    `remainder` keeps a subnormal dividend, and the `rem != 0` and `rem < 0`
    tests jnp.remainder puts after it read that subnormal as zero, so the
    sign adjustment is skipped)."""
    from jaxlib.mlir import ir
    sites = 0
    for op in walk(module.operation):
        if op.name not in _COMPARES:
            continue
        for i, v in enumerate(list(op.operands)):
            fmt = _float_name(v.type)
            if fmt is None:
                continue
            with ir.InsertionPoint(op):
                op.operands[i] = _flushed(v, fmt)
            sites += 1
    return sites


# --------------------------------------------------------------------------
# A subnormal read as half the smallest subnormal (log, pow)
# --------------------------------------------------------------------------

def _half_smallest_subnormal(fmt: str) -> int:
    """E with 2^E half the format's smallest subnormal (f32 −150, f64
    −1075): one ULP below what the format holds."""
    f = element_type(fmt).format
    return f.emin - f.mantissa_bits - 1


def _subnormal(value, fmt: str, positive: bool):
    """i1: `value` a nonzero subnormal (0 < |v| < the smallest normal), or
    with `positive` a positive one (insert where the caller says)."""
    from jaxlib.mlir import ir
    t = value.type
    zero = _constant_of(t, np.float64(0.0))
    magnitude = value if positive else ir.Operation.create("stablehlo.abs", results=[t], operands=[value]).results[0]
    above = _compare(magnitude, zero, "GT")
    below = _compare(magnitude, _constant_of(t, np.float64(element_type(fmt).format.min_normal)), "LT")
    return ir.Operation.create("stablehlo.and", results=[above.type], operands=[above, below]).results[0]


def _log_of_power_of_two(e: int, fmt: str) -> np.ndarray:
    """RN(ln 2^e) in `fmt` as a 0-d float64 array (mpmath at 256 bits, far
    from any midpoint of a format of ≤ 53 bits)."""
    import mpmath
    with mpmath.workprec(256):
        sign, man, exp, _ = (mpmath.mpf(e) * mpmath.log(2))._mpf_
    bits = round_bits((-1) ** sign * Fraction(int(man)) * Fraction(2) ** int(exp), element_type(fmt).format)
    return np.array(from_bits(np.array(bits, dtype=element_type(fmt).bits_dtype), element_type(fmt)),
                    dtype=np.float64)


def subnormal_as_half_the_smallest(module) -> int:
    """`log(x)` and `power(x, y)` with a nonzero subnormal x computed as if x
    were ±2^E, E = emin − mantissa bits − 1 (f32: 2^-150, f64: 2^-1075): half
    the smallest subnormal, a value the format cannot hold — neither x (the
    spec) nor the zero a flush gives (log −inf, pow 0 or inf).  XLA:CPU's
    f32 log, and its f32 and f64 pow, do this (docs/findings.md).

    log: the constant RN(E·ln 2) where 0 < x < the smallest normal (a
    negative x is NaN either way).  power: s^y · 2^fl(E·y), s = ±1 the sign
    of x (NaN for a negative x and a y not an integer, the sign of an odd
    y) — exact where E·y is and the whole is a power of two, one rounding
    more elsewhere (an element there may stay unnamed, never misnamed)."""
    from jaxlib.mlir import ir
    sites = 0
    for op in walk(module.operation):
        fmt = _float_name(op.results[0].type) if op.name in ("stablehlo.log", "stablehlo.power") else None
        if fmt is None:
            continue
        x, t = op.operands[0], op.results[0].type
        e = _half_smallest_subnormal(fmt)
        with ir.InsertionPoint.after(op):
            if op.name == "stablehlo.log":
                tiny = _subnormal(x, fmt, positive=True)
                read = _constant_of(t, _log_of_power_of_two(e, fmt))
            else:
                tiny = _subnormal(x, fmt, positive=False)
                negative = _compare(x, _constant_of(t, np.float64(0.0)), "LT")
                sign = ir.Operation.create("stablehlo.select", results=[t], operands=[
                    negative, _constant_of(t, np.float64(-1.0)), _constant_of(t, np.float64(1.0))]).results[0]
                y = op.operands[1]
                exponent = ir.Operation.create("stablehlo.multiply", results=[t],
                                               operands=[_constant_of(t, np.float64(e)), y]).results[0]
                parts = [ir.Operation.create("stablehlo.power", results=[t], operands=pair).results[0]
                         for pair in ([sign, y], [_constant_of(t, np.float64(2.0)), exponent])]
                read = ir.Operation.create("stablehlo.multiply", results=[t], operands=parts).results[0]
            chosen = ir.Operation.create("stablehlo.select", results=[t], operands=[tiny, read, op.results[0]])
        op.results[0].replace_all_uses_with(chosen.results[0])
        chosen.operands[2] = op.results[0]   # the select itself reads the op's own value
        sites += 1
    return sites


# --------------------------------------------------------------------------
# Identities that hold for reals: x + 0 is x, 1/(1/x) is x, sqrt(x·x) is |x|
# --------------------------------------------------------------------------

def added_zero(module) -> int:
    """`add(x, +0)` (either order; a +0 splat constant through broadcasts
    and reshapes) folded to `x`: IEEE's −0 + +0 is +0, the fold keeps −0."""
    sites = 0
    for op in walk(module.operation):
        fmt = _float_name(op.results[0].type) if op.name == "stablehlo.add" else None
        if fmt is None:
            continue
        for k in (0, 1):
            c = _constant_values(op.operands[k], fmt)
            keep = op.operands[1 - k]
            if c is not None and c.ndim == 0 and c == 0 and not np.signbit(c) and keep.type == op.results[0].type:
                op.results[0].replace_all_uses_with(keep)
                op.erase()
                sites += 1
                break
    return sites


def reciprocal_of_reciprocal(module) -> int:
    """`divide(1, divide(1, x))` (1 a splat constant through broadcasts and
    reshapes) folded to `x`: two roundings, and an inf or 0 where 1/x
    overflows or underflows, where the fold returns x."""
    sites = 0
    for op in walk(module.operation):
        fmt = _float_name(op.results[0].type) if op.name == "stablehlo.divide" else None
        inner = op.operands[1].owner if fmt is not None else None
        if getattr(inner, "name", None) != "stablehlo.divide":
            continue
        ones = [_constant_values(v, fmt) for v in (op.operands[0], inner.operands[0])]
        if any(c is None or c.ndim != 0 or c != 1 for c in ones) or inner.operands[1].type != op.results[0].type:
            continue
        op.results[0].replace_all_uses_with(inner.operands[1])
        op.erase()
        sites += 1
    return sites


def square_root_of_square(module) -> int:
    """`sqrt(multiply(x, x))` folded to `abs(x)`: sqrt(fl(x²)) is |x| for
    every x whose square neither overflows nor underflows, and inf or 0
    where it does."""
    from jaxlib.mlir import ir
    sites = 0
    for op in walk(module.operation):
        if op.name != "stablehlo.sqrt" or _float_name(op.results[0].type) is None:
            continue
        square = op.operands[0].owner
        if getattr(square, "name", None) != "stablehlo.multiply" or square.operands[0] != square.operands[1]:
            continue
        with ir.InsertionPoint(op):
            magnitude = ir.Operation.create("stablehlo.abs", results=[op.results[0].type],
                                            operands=[square.operands[0]]).results[0]
        op.results[0].replace_all_uses_with(magnitude)
        op.erase()
        sites += 1
    return sites


# --------------------------------------------------------------------------
# A scatter window reaching out of bounds skipped whole
# --------------------------------------------------------------------------

def _window_sizes(op, sdn) -> list[int]:
    """The update window's size along each operand axis: the updates' sizes
    at `update_window_dims`, in order, on the axes neither inserted nor
    batching; 1 on those."""
    from jaxlib.mlir import ir
    rank = len(ir.RankedTensorType(op.operands[0].type).shape)
    updates = ir.RankedTensorType(op.operands[len(op.operands) // 2 + 1].type).shape   # inputs, indices, updates
    window = iter(updates[d] for d in sdn.update_window_dims)
    dropped = set(sdn.inserted_window_dims) | set(sdn.input_batching_dims)
    return [1 if d in dropped else next(window) for d in range(rank)]


def _component_ok(idx, k: int, v: int, lo: int, hi: int):
    """Per batch position, whether component k of the index vectors (along
    axis v; the whole of `idx` when v is its rank) lies in [lo, hi], as an
    i1 tensor of `idx`'s shape with axis v kept at size 1 (or `idx`'s own)."""
    from jaxlib.mlir import ir
    t = ir.RankedTensorType(idx.type)
    shape = list(t.shape)
    if v < len(shape):
        start, limit = [0] * len(shape), list(shape)
        start[v], limit[v] = k, k + 1
        shape[v] = 1
        part = ir.RankedTensorType.get(shape, t.element_type)
        idx = ir.Operation.create("stablehlo.slice", results=[part], operands=[idx], attributes={
            "start_indices": ir.DenseI64ArrayAttr.get(start), "limit_indices": ir.DenseI64ArrayAttr.get(limit),
            "strides": ir.DenseI64ArrayAttr.get([1] * len(shape))}).results[0]
    part = ir.RankedTensorType(idx.type)

    def within(direction, bound):
        splat = ir.Operation.create("stablehlo.constant", results=[part], attributes={
            "value": ir.DenseElementsAttr.get_splat(part, ir.IntegerAttr.get(part.element_type, bound))}).results[0]
        return _compare(idx, splat, direction, "SIGNED")
    low, high = within("GE", lo), within("LE", hi)
    return ir.Operation.create("stablehlo.and", results=[low.type], operands=[low, high]).results[0]


def whole_window_skipped(module) -> int:
    """`scatter` with each update window that reaches out of bounds moved
    wholly out: its index vector replaced by the operand's sizes (every
    element of the window then out of bounds, so v1.20 skips it all)
    wherever a component k leaves `[0, dim − window]` — XLA's reading
    (seed 002), where v1.20 skips the out-of-bounds elements alone."""
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import stablehlo
    sites = 0
    for op in walk(module.operation):
        if op.name != "stablehlo.scatter":
            continue
        sdn = stablehlo.ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"])
        n = len(op.operands) // 2   # inputs … , indices, updates …: n inputs
        idx = op.operands[n]
        t = ir.RankedTensorType(idx.type)
        width = {"i32": 32, "i64": 64, "si32": 32, "si64": 64}.get(str(t.element_type))
        if width is None:   # JAX writes i32 or i64 index vectors; a narrower or unsigned one is left alone
            continue
        dims, window = ir.RankedTensorType(op.operands[0].type).shape, _window_sizes(op, sdn)
        mapped, v = list(sdn.scattered_dims_to_operand_dims), sdn.index_vector_dim
        flags_t = ir.RankedTensorType.get(t.shape, ir.IntegerType.get_signless(1))
        with ir.InsertionPoint(op):
            ok = None
            for k, d in enumerate(mapped):
                c = _component_ok(idx, k, v, 0, dims[d] - window[d])
                ok = c if ok is None else ir.Operation.create("stablehlo.and", results=[c.type],
                                                              operands=[ok, c]).results[0]
            if ok is None:
                continue
            if v < len(t.shape):   # one flag per index vector, spread along its axis
                ok = ir.Operation.create("stablehlo.broadcast_in_dim", results=[flags_t], operands=[ok], attributes={
                    "broadcast_dimensions": ir.DenseI64ArrayAttr.get(list(range(len(t.shape))))}).results[0]
            sizes = np.array([dims[d] for d in mapped], dtype=np.int64)
            far = np.broadcast_to(sizes.reshape([-1 if a == v else 1 for a in range(len(t.shape))]) if v < len(t.shape)
                                  else sizes[0], t.shape)
            far = np.ascontiguousarray(far.astype(np.int64 if width == 64 else np.int32))
            out = ir.Operation.create("stablehlo.constant", results=[t], attributes={
                "value": ir.DenseElementsAttr.get(far, type=t.element_type)}).results[0]
            moved = ir.Operation.create("stablehlo.select", results=[t], operands=[ok, idx, out]).results[0]
        op.operands[n] = moved
        sites += 1
    return sites


# --------------------------------------------------------------------------
# A float mask's product as a select
# --------------------------------------------------------------------------

_SHAPES = ("stablehlo.broadcast_in_dim", "stablehlo.reshape", "stablehlo.transpose", "stablehlo.slice")


def _callee(module, call):
    """The `func.func` a `func.call` names, or None."""
    name = str(call.attributes["callee"]).lstrip("@")
    for op in module.body.operations:
        if op.operation.name == "func.func" and str(op.operation.attributes["sym_name"]).strip('"') == name:
            return op.operation
    return None


def _from_booleans(module, value, depth: int = 0) -> bool:
    """Is every element of `value` a `convert` of an i1 (0 or 1), through
    shape ops and calls (JAX's `jax.nn.one_hot` is a private function whose
    result is `convert(compare(…))`)?"""
    from jaxlib.mlir import ir
    owner = value.owner
    name = getattr(owner, "name", None)
    if depth > 16 or name is None:
        return False
    if name in _SHAPES:
        return _from_booleans(module, owner.operands[0], depth + 1)
    if name == "stablehlo.convert":
        return str(ir.RankedTensorType(owner.operands[0].type).element_type) == "i1"
    if name == "func.call":
        f = _callee(module, owner)
        if f is None:
            return False
        ret = f.regions[0].blocks[0].operations[len(f.regions[0].blocks[0].operations) - 1].operation
        k = next(i for i, r in enumerate(owner.results) if r == value)
        return _from_booleans(module, ret.operands[k], depth + 1)
    return False


def mask_select(module) -> int:
    """`multiply(m, x)` (either order), `m` a float mask — every element a
    convert of an i1, through shape ops and calls — becomes
    `select(m != 0, x, 0)`: the product of a 0 is +0 whatever x is, where
    IEEE gives −0 for a negative x and NaN for an infinite or NaN one."""
    from jaxlib.mlir import ir
    sites = 0
    for op in walk(module.operation):
        if op.name != "stablehlo.multiply" or _float_name(op.results[0].type) is None:
            continue
        k = next((k for k in (0, 1) if _from_booleans(module, op.operands[k])), None)
        if k is None:
            continue
        t = op.results[0].type
        with ir.InsertionPoint(op):
            zero = _constant_of(t, np.float64(0.0))
            chosen = ir.Operation.create("stablehlo.select", results=[t],
                                         operands=[_compare(op.operands[k], zero, "NE"), op.operands[1 - k], zero])
        op.results[0].replace_all_uses_with(chosen.results[0])
        op.erase()
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
    for op in walk(module.operation):
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


def _acosh_wrapper(module, call) -> bool:
    """Is the `func.call` one of a function that returns chlo.acosh of its
    one argument (JAX's private `arccosh`)?"""
    f = _callee(module, call)
    if f is None or len(call.operands) != 1:
        return False
    ops = [o.operation for o in f.regions[0].blocks[0].operations]
    return len(ops) == 2 and ops[0].name == "chlo.acosh" and ops[1].name == "func.return" \
        and ops[1].operands[0] == ops[0].results[0] and ops[0].operands[0] == f.regions[0].blocks[0].arguments[0]


def acosh_of_exact_sum(module) -> int:
    """`chlo.acosh(add(y, c))` — or a call of JAX's function wrapping it —
    (c a constant, through broadcasts and reshapes; narrow floats) computed
    at the exact y + c, in f64."""
    from jaxlib.mlir import ir
    sites = 0
    for op in walk(module.operation):
        if not (op.name == "chlo.acosh" or (op.name == "func.call" and _acosh_wrapper(module, op))) \
                or _float_name(op.results[0].type) not in _NARROW:
            continue
        add = op.operands[0].owner
        if getattr(add, "name", None) != "stablehlo.add":
            continue
        if not any(_constant_chain(add.operands[k]) is not None for k in (0, 1)):
            continue
        t = op.results[0].type
        wide = ir.RankedTensorType.get(ir.RankedTensorType(t).shape, ir.F64Type.get())
        with ir.InsertionPoint(op):
            terms = [ir.Operation.create("stablehlo.convert", results=[wide], operands=[v]).results[0]
                     for v in add.operands]
            total = ir.Operation.create("stablehlo.add", results=[wide], operands=terms).results[0]
            value = ir.Operation.create("chlo.acosh", results=[wide], operands=[total]).results[0]
            narrow = ir.Operation.create("stablehlo.convert", results=[t], operands=[value])
        op.results[0].replace_all_uses_with(narrow.results[0])
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
    for op in walk(module.operation):
        if op.name not in ("stablehlo.maximum", "stablehlo.minimum") or _float_name(op.results[0].type) is None:
            continue
        direction = "LT" if op.name == "stablehlo.maximum" else "GT"
        x, y = op.operands[0], op.operands[1]
        with ir.InsertionPoint(op):
            pick_y = _compare(x, y, direction)
            chosen = ir.Operation.create("stablehlo.select", results=[op.results[0].type], operands=[pick_y, y, x])
        op.results[0].replace_all_uses_with(chosen.results[0])
        op.erase()
        sites += 1
    return sites


# --------------------------------------------------------------------------
# Reassociation: constants brought together and folded
# --------------------------------------------------------------------------

def _constant_values(value, fmt: str):
    """The values of the constant `value` comes from, in the format's numpy
    type: a 0-d array when the constant is a splat (through any broadcasts
    and reshapes), the whole array when the constant has `value`'s own
    type; None otherwise (not a constant, a non-splat constant reshaped, a
    bf16 array numpy cannot read here)."""
    from jaxlib.mlir import ir
    found = _constant_chain(value)
    if found is None:
        return None
    const, chain = found
    dtype = element_type(fmt).numpy
    try:
        dense = ir.DenseElementsAttr(const.attributes["value"])
        if dense.is_splat:
            return np.array(ir.FloatAttr(dense.get_splat_value()).value, dtype=dtype)
        if chain or fmt == "bf16":
            return None
        return np.asarray(np.array(dense), dtype=dtype).reshape(ir.RankedTensorType(value.type).shape)
    except (ValueError, TypeError):
        return None


_FAMILY = {"stablehlo.add": "additive", "stablehlo.subtract": "additive", "stablehlo.multiply": "multiplicative"}


def _with_constant(op, fmt: str):
    """`op` with exactly one constant operand, as (family, x, s, k): s·x + k
    for add and subtract (s = ±1; k negated where it is subtracted —
    negation is exact), x·k for multiply (s = 1); else None."""
    family = _FAMILY.get(getattr(op, "name", None))
    if family is None:
        return None
    ks = [_constant_values(v, fmt) for v in op.operands]
    if (ks[0] is None) == (ks[1] is None):
        return None
    j = 0 if ks[0] is not None else 1
    x, k = op.operands[1 - j], ks[j]
    if op.name == "stablehlo.subtract":
        return (family, x, 1, -k) if j == 1 else (family, x, -1, k)
    return family, x, 1, k


def _constant_of(t, values: np.ndarray):
    """A constant op's result of tensor type `t` holding `values` (0-d: a
    splat)."""
    from jaxlib.mlir import ir
    rt = ir.RankedTensorType(t)
    if values.ndim == 0:
        attr = ir.DenseElementsAttr.get_splat(rt, ir.FloatAttr.get(rt.element_type, float(values)))
    else:
        attr = ir.DenseElementsAttr.get(np.ascontiguousarray(values), type=rt.element_type, shape=list(rt.shape))
    return ir.Operation.create("stablehlo.constant", results=[t], attributes={"value": attr}).results[0]


def folded_constants(module) -> int:
    """`outer(inner(x, c1), c2)` with both ops of one family (add/subtract,
    or multiply), each with one constant operand, becomes `x + K` (or `K −
    x`, `x · K`) with K the two constants combined by one correctly
    rounded op of the format: numpy's arithmetic, in f16 and bf16 through
    f32, which rounds one op correctly (24 ≥ 2p + 2 bits).  A chain of
    several folds step by step, as ops are visited in order.  Where K is
    the identity (0, 1) the result is x itself, as XLA's simplifier goes on
    to make it."""
    from jaxlib.mlir import ir
    sites = 0
    for op in walk(module.operation):
        fmt = _float_name(op.results[0].type) if len(op.results) == 1 else None
        outer = _with_constant(op, fmt) if fmt is not None else None
        if outer is None:
            continue
        family, v, s_o, k_o = outer
        inner = _with_constant(v.owner, fmt) if v.type == op.results[0].type else None
        if inner is None or inner[0] != family:
            continue
        _, x, s_i, k_i = inner
        with np.errstate(all="ignore"):
            k = (s_o * k_i + k_o) if family == "additive" else (k_i * k_o)
        k = np.asarray(k, dtype=element_type(fmt).numpy)
        if not np.all(np.isfinite(k.astype(np.float64))):
            continue   # an overflow folded: a different program altogether, not named
        sign = s_o * s_i
        t = op.results[0].type
        with ir.InsertionPoint(op):
            identity = np.all(k.astype(np.float64) == (0.0 if family == "additive" else 1.0))
            if identity and sign == 1:
                result = x
            else:
                kv = _constant_of(t, k)
                name = "stablehlo.multiply" if family == "multiplicative" else \
                    "stablehlo.add" if sign == 1 else "stablehlo.subtract"
                result = ir.Operation.create(name, results=[t], operands=[x, kv] if sign == 1 else [kv, x]).results[0]
        op.results[0].replace_all_uses_with(result)
        op.erase()
        if _uses(v) == 0:
            v.owner.erase()
        sites += 1
    return sites


# --------------------------------------------------------------------------
# Reassociation: a chain of + (or ×) re-bracketed
# --------------------------------------------------------------------------

_CHAINED = ("stablehlo.add", "stablehlo.multiply")


def _absorbed(value, name: str, t) -> bool:
    """`value` is an inner node of a chain of `name` ops of type `t`: one
    of them computed it and nothing else uses it."""
    return getattr(value.owner, "name", None) == name and value.type == t and _uses(value) == 1


# A bracketing is written in postfix: leaf numbers in order, `OP` where an
# op combines the two values before it — flat lists, so a chain of 10^4
# adds (an unrolled sum) needs no recursion to read, compare or build.
OP = None


def _postfix(root, inner: list) -> tuple[list, list]:
    """(the leaf values of the chain `root` ends, left to right; its
    bracketing in postfix).  A leaf is a value no op of the chain computed;
    `inner` collects the ops absorbed, parents first."""
    name, t = root.name, root.results[0].type
    leaves, code = [], []
    stack = [(root.operands[1], False), (root.operands[0], False)]
    while stack:
        v, done = stack.pop()
        if done:
            code.append(OP)
        elif _absorbed(v, name, t):
            inner.append(v.owner)
            stack += [(v, True), (v.owner.operands[1], False), (v.owner.operands[0], False)]
        else:
            code.append(len(leaves))
            leaves.append(v)
    code.append(OP)
    return leaves, code


def _right_to_left(n: int) -> list:
    """a + (b + (c + d)): every leaf, then every op."""
    return list(range(n)) + [OP] * (n - 1)


def _left_to_right(n: int) -> list:
    """((a + b) + c) + d: the first leaf, then each next leaf and an op."""
    return [0] + [m for k in range(1, n) for m in (k, OP)]


def _balanced(n: int, first: int = 0) -> list:
    """(a + b) + (c + d): halved recursively, the larger half left (depth
    log2 n)."""
    if n == 1:
        return [first]
    half = (n + 1) // 2
    return _balanced(half, first) + _balanced(n - half, first + half) + [OP]


def _is_root(op) -> bool:
    """`op` ends a chain: a float add or multiply whose result is not an
    inner node of a larger chain of the same op."""
    if op.name not in _CHAINED or len(op.results) != 1 or _float_name(op.results[0].type) is None:
        return False
    r = op.results[0]
    if _uses(r) != 1:
        return True
    user = next(iter(r.uses)).owner
    return not (getattr(user, "name", None) == op.name and user.results[0].type == r.type)


def _rebracketing(order: Callable) -> Callable:
    """A rewrite that builds every chain of three or more leaves (floats,
    inner results used once) in `order` (n → its postfix), where its
    bracketing differs."""
    def rewrite(module) -> int:
        from jaxlib.mlir import ir
        sites = 0
        for root in [op for op in walk(module.operation) if _is_root(op)]:
            inner = []
            leaves, code = _postfix(root, inner)
            target = order(len(leaves))
            if len(leaves) < 3 or code == target:
                continue
            t = root.results[0].type
            with ir.InsertionPoint(root):
                values = []
                for k in target:
                    if k is OP:
                        rhs, lhs = values.pop(), values.pop()
                        values.append(ir.Operation.create(root.name, results=[t], operands=[lhs, rhs]).results[0])
                    else:
                        values.append(leaves[k])
            root.results[0].replace_all_uses_with(values[0])
            root.erase()
            for op in inner:   # parents first: each is unused once the one above it is gone
                op.erase()
            sites += 1
        return sites
    return rewrite


right_to_left = _rebracketing(_right_to_left)
left_to_right = _rebracketing(_left_to_right)
balanced = _rebracketing(_balanced)


REWRITES = (
    Rewrite("reciprocal multiplication", "x / c computed as x · fl(1/c)", reciprocal_multiplication),
    # before the broadcast divisor: a / broadcast(sqrt(b)) is both; XLA computes the rsqrt
    Rewrite("reciprocal square root", "a / sqrt(b) computed as a · rsqrt(b)", reciprocal_square_root),
    Rewrite("reciprocal multiplication (broadcast divisor)",
            "x / broadcast(d) computed as x · broadcast(fl(1/d))", broadcast_reciprocal),
    Rewrite("FMA contraction", "a·b ± c computed with one rounding (fused multiply-add)", fma_contraction),
    Rewrite("excess precision", "a value narrowed and widened again kept unrounded (a bf16 or f16 op computed "
            "in f32)", excess_precision),
    Rewrite("subnormals flushed", "every subnormal an arithmetic op reads or gives taken as a zero of its sign "
            "(FTZ/DAZ)", flushed_subnormals, subnormal_inputs_only=True),
    Rewrite("subnormals flushed, compares too", "every subnormal an arithmetic op or a compare reads, or an "
            "arithmetic op gives, taken as a zero of its sign (FTZ/DAZ)", flushed_subnormals_compares_too,
            subnormal_inputs_only=True),
    Rewrite("subnormals read as zero by compares", "every subnormal a compare reads taken as zero, the arithmetic "
            "keeping its subnormals", flushed_in_compares, subnormal_inputs_only=True),
    Rewrite("subnormal read as half the smallest subnormal", "log and pow of a nonzero subnormal x computed as if x "
            "were ±2^(emin − p) (f32: 2^-150), a value the format cannot hold", subnormal_as_half_the_smallest,
            subnormal_inputs_only=True),
    Rewrite("additive identity", "x + 0 folded to x: −0 + 0 kept −0", added_zero),
    Rewrite("square root of a square", "sqrt(x · x) folded to |x|: no overflow to inf, no underflow to 0",
            square_root_of_square),
    Rewrite("reciprocal of a reciprocal", "1 / (1 / x) folded to x: no double rounding, no overflow or underflow",
            reciprocal_of_reciprocal),
    Rewrite("algebraic simplification", "(x + c) − c folded to x", cancelled_constants),
    Rewrite("a sum read exactly by acosh", "acosh(y + c) computed at the exact y + c ((y + c) − c folded to y "
            "inside acosh's decomposition)", acosh_of_exact_sum, keeps_tolerance=True),
    Rewrite("scatter window skipped whole", "an update window reaching out of bounds skipped whole (XLA's "
            "reading), where v1.20 skips its out-of-bounds elements alone", whole_window_skipped),
    Rewrite("mask multiplication as a select", "m · x with m a 0/1 mask (a converted boolean, jax.nn.one_hot) "
            "computed as select(m, x, 0): +0 for a negative x, 0 for an infinite or NaN one", mask_select),
    Rewrite("fast min/max", "max/min as one compare and select (x < y ? y : x): NaN and −0 not ordered",
            fast_min_max),
    Rewrite("reassociation (constants folded)", "(x + c1) + c2 computed as x + fl(c1 + c2) (likewise −, ×)",
            folded_constants),
    Rewrite("reassociation (right to left)", "a chain of + or × bracketed right to left: a + (b + (c + d))",
            right_to_left),
    Rewrite("reassociation (left to right)", "a chain of + or × bracketed left to right: ((a + b) + c) + d",
            left_to_right),
    Rewrite("reassociation (balanced)", "a chain of + or × halved recursively: (a + b) + (c + d)", balanced),
)


# The rewrites `run` judges only where an input holds a subnormal: judged on every failing output, the flush would
# cost a larger program's run and explain nothing but an underflow inside the program, which the element-level
# name (suites/causes.py) already covers.
SUBNORMAL_INPUTS_ONLY = frozenset(r.name for r in REWRITES if r.subnormal_inputs_only)


def tolerant(name: str, expectations: list) -> list:
    """The rewritten program's expectations, where the rewrite `name`
    `keeps_tolerance`: each exact real float output within the format's
    tolerance of its value (kind "ulp", spec/accuracy.py) — the approximate
    op it computed in f64 keeps the narrow op's allowance; else as given."""
    from ..spec.accuracy import tolerance_ulp
    from ..spec.expectation import Expectation
    from ..spec.kinds import kind_of
    from ..spec.kinds.ulp import ULP
    if not any(rw.keeps_tolerance for rw in REWRITES if rw.name == name):
        return expectations
    out = []
    for e in expectations:
        et = getattr(getattr(e, "type", None), "element_type", None)
        if isinstance(e, tuple) or et is None or not et.is_float or et.is_complex or not kind_of(e).pinned:
            out.append(e)
            continue
        out.append(Expectation(e.type, e.bits, ULP.name, tolerance_ulp=tolerance_ulp(et), why=e.why))
    return out


def rewritten(text: str) -> list[tuple[Rewrite, str, int]]:
    """(rewrite, the rewritten program's generic text, sites) for each
    rewrite that changes `text` (a program in any textual syntax); a
    rewrite that yields the very program an earlier one did is left out
    (the earlier names it; the oracle need not judge it twice)."""
    from jaxlib.mlir import ir

    from .reading import registered_context
    out, seen = [], set()
    for rw in REWRITES:
        with registered_context(), ir.Location.unknown():
            module = ir.Module.parse(text)
            sites = rw.apply(module)
            if sites:
                changed = module.operation.get_asm(print_generic_op_form=True, assume_verified=True)
                if changed not in seen:
                    seen.add(changed)
                    out.append((rw, changed, sites))
    return out

