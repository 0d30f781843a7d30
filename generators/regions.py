"""Region bodies: the computations a generator writes into an op's region.

A `Region` of the spec names the bodies a generator may choose
(`Region.bodies`); this module spells each one as an MLIR block over the
region's signature (`spec.dsl.Function.inputs` / `.outputs`).

Pairwise bodies — a block over N current values followed by N others
(scatter's `update_computation(results[:][i], updates[:][j])`, reduce's
`body(acc[:], x[:])`) — apply the body to each pair (arg k, arg N+k):

  add, multiply, maximum, minimum    the element-wise op of that name (on i1:
                                     add is or, multiply is and)
  subtract                           current - update: not commutative, not
                                     associative, so the order shows
  replace / keep                     return the second / the first value
  argmax                             (the reduce pattern JAX emits) the pair
                                     whose argument 0 is greater, ties to the
                                     smaller argument 1; every other argument
                                     travels with it.  One pair: maximum.
  jax_argmax, jax_argmin              (value, index) pairs as JAX's argmax and
                                     argmin lower them (`_compute_argminmax`):
                                     the greater (lesser) value or a NaN one,
                                     ties to the smaller index
                                     (spec/selection.py)
  logaddexp                          jnp.logaddexp as JAX lowers it (the body
                                     of lax.cumlogsumexp): max(a, b) +
                                     log1p(exp(-|a - b|)), a + b where a - b
                                     is NaN (spec/log_add_exp.py)
  logaddexp_rewritten                the same function written otherwise, as a
                                     hand-written or rewritten copy may be:
                                     the maximum as select(a > b, a, b), the
                                     difference b - a, the adds' operands in
                                     the other order

Comparators — a block over (a0, b0, a1, b1, …) returning one i1 (sort's
`comparator`; select_and_scatter's `select` is the one-pair case):

  lt, gt, le, ge                     compare a0 with b0 in that direction (the
                                     type's default compare_type)
  lt_totalorder                      a0 < b0 under TOTALORDER for floats (a
                                     strict weak order even with NaN and ±0)
  lexicographic_lt                   (a0, a1) < (b0, b1): key 0, ties by key 1
  never                              false: every pair "equal"

Maps — a block over (x0, …, xN-1) returning one value (map's
`computation`):

  map_add, map_multiply,             the op folded over the arguments (one
  map_maximum, map_minimum           argument: the op of it with itself)
  map_first                          the first argument

Branches — blocks of no arguments (the branches of `if` and `case`), which
return what they compute from values of @main they capture, one captured
value per output (`captures`), so which branch ran shows in every output:

  return_captures                    the captured values themselves
  double_captures                    add of each captured value with itself

Loops — while's `cond` and `body` over loop-carried values (counter,
limit, data…):

  count_lt                           the first element of value 0 < the first
                                     element of value 1 (real parts of complex
                                     values); false when value 0 is empty
  count_up                           value 0 + 1 element-wise, value 1 as it
                                     is, each further value + a captured value
                                     of its type (rounded at every iteration)

`subtract` has no boolean form in the spec (its Inputs table has no i1);
`xor` takes its place there.  The body's ops are ordinary StableHLO ops, so
the oracle executes them with their own semantics (rounding included).
These names are region bodies — data about the computation, the one place
generators may name ops.
"""
from __future__ import annotations

from ..spec.dsl import Function
from ..spec.ops import OPS

PAIRWISE = ("add", "multiply", "maximum", "minimum", "subtract")
COMPARATORS = ("lt", "gt", "le", "ge", "lt_totalorder", "lexicographic_lt", "never")
MAPS = ("map_add", "map_multiply", "map_maximum", "map_minimum", "map_first")
BRANCHES = ("return_captures", "double_captures")
LOOPS = ("count_lt", "count_up")
BODIES = PAIRWISE + ("replace", "keep", "argmax", "jax_argmax", "jax_argmin", "logaddexp", "logaddexp_rewritten") + COMPARATORS + MAPS + BRANCHES + LOOPS
PREDICATES = COMPARATORS + ("count_lt",)   # bodies that return one i1, whatever their arguments


def captures(fn: Function) -> list:
    """Types of the @main values a body reads from outside its block (module
    docstring): the program passes them to @main after the operands."""
    if fn.body in BRANCHES:
        return list(fn.outputs)
    if fn.body == "count_up":
        return list(fn.inputs[2:])
    return []


def body_op(body: str, et) -> str | None:
    """The op applying `body` to one pair of element type `et` (None: a pass-through body)."""
    if body in ("replace", "keep"):
        return None
    name = body
    if et not in OPS[name].operands[0].types_v1_20 and body == "subtract":
        name = "xor"
    return name


class _Block:
    """Lines of one block under construction."""

    def __init__(self, fn: Function, indent: str):
        self.fn, self.indent = fn, indent
        self.ins, self.outs = list(fn.inputs), list(fn.outputs)
        self.args = [f"%r{i}" for i in range(len(self.ins))]
        # A block without arguments needs no label (the branches of if and case).
        self.lines = [f"{indent}^bb0(" + ", ".join(f"{a}: {t.mlir}" for a, t in zip(self.args, self.ins)) + "):"
                      ] if self.ins else []
        self.captured: list = []
        self.n = 0

    def op(self, name: str, operands: list, types: list, result, attrs: str = "", value: str | None = None) -> str:
        self.n += 1
        v = value or f"%c{self.n}"
        self.lines.append(f'{self.indent}  {v} = "stablehlo.{name}"({", ".join(operands)}){attrs} : '
                          f'({", ".join(t.mlir for t in types)}) -> {result.mlir}')
        return v

    def ret(self, rets: list) -> str:
        self.lines.append(f'{self.indent}  "stablehlo.return"(' + ", ".join(v for v, _ in rets) + ") : ("
                          + ", ".join(t.mlir for _, t in rets) + ") -> ()")
        return "({\n" + "\n".join(self.lines) + f"\n{self.indent}}})"


def _pairwise(b: _Block) -> list:
    rets = []
    half = len(b.ins) // 2
    for k, out in enumerate(b.outs):
        cur = (b.args[k], b.ins[k]) if k < len(b.args) else (b.args[0], b.ins[0])
        other = (b.args[half + k], b.ins[half + k]) if half + k < len(b.args) else (b.args[-1], b.ins[-1])
        name = body_op(b.fn.body or "replace", cur[1].element_type)
        if name is None:
            rets.append(other if b.fn.body == "replace" else cur)
            continue
        rets.append((b.op(name, [cur[0], other[0]], [cur[1], other[1]], out, value=f"%b{k}"), out))
    return rets


def _argmax(b: _Block) -> list:
    """The pair with the greater argument 0 (ties: smaller argument 1); the
    other arguments travel with it."""
    half = len(b.ins) // 2
    if half < 2:
        b.fn = Function(b.fn.inputs, b.fn.outputs, "maximum")
        return _pairwise(b)
    a, c = b.args[:half], b.args[half:]
    ta, tc = b.ins[:half], b.ins[half:]
    i1 = _bool_type(ta[0])
    gt = b.op("compare", [a[0], c[0]], [ta[0], tc[0]], i1, " {comparison_direction = #stablehlo<comparison_direction GT>}")
    eq = b.op("compare", [a[0], c[0]], [ta[0], tc[0]], i1, " {comparison_direction = #stablehlo<comparison_direction EQ>}")
    lt = b.op("compare", [a[1], c[1]], [ta[1], tc[1]], i1, " {comparison_direction = #stablehlo<comparison_direction LT>}")
    tie = b.op("and", [eq, lt], [i1, i1], i1)
    pick = b.op("or", [gt, tie], [i1, i1], i1)
    return [(b.op("select", [pick, a[k], c[k]], [i1, ta[k], tc[k]], out), out) for k, out in enumerate(b.outs)]


def _jax_argminmax(direction: str):
    """JAX's argmax (GT) / argmin (LT) body over (a, i, b, j):
    P = a D b or a ≠ a;  Q = P or (a = b and i < j);  select(P, a, b), select(Q, i, j)."""
    def render(b: _Block) -> list:
        a, i, c, j = b.args
        ta, ti = b.ins[0], b.ins[1]
        i1 = _bool_type(ta)
        p = _compare(b, 0, 2, direction)
        if ta.element_type.is_float:
            p = b.op("or", [p, _compare(b, 0, 0, "NE")], [i1, i1], i1)
        tie = b.op("and", [_compare(b, 0, 2, "EQ"), _compare(b, 1, 3, "LT")], [i1, i1], i1)
        q = b.op("or", [p, tie], [i1, i1], i1)
        return [(b.op("select", [p, a, c], [i1, ta, ta], b.outs[0]), b.outs[0]),
                (b.op("select", [q, i, j], [i1, ti, ti], b.outs[1]), b.outs[1])]
    return render


def _logaddexp(b: _Block) -> list:
    """jnp.logaddexp on one pair, op for op as JAX lowers it (jax/_src/lax/other.py)."""
    (a, c), t, out = b.args[:2], b.ins[0], b.outs[0]
    i1 = _bool_type(t)
    m = b.op("maximum", [a, c], [t, t], t)
    d = b.op("subtract", [a, c], [t, t], t)
    nan = b.op("compare", [d, d], [t, t], i1, " {comparison_direction = #stablehlo<comparison_direction NE>, "
                                              "compare_type = #stablehlo<comparison_type FLOAT>}")
    both = b.op("add", [a, c], [t, t], t)
    e = b.op("exponential", [b.op("negate", [b.op("abs", [d], [t], t)], [t], t)], [t], t)
    r = b.op("add", [m, b.op("log_plus_one", [e], [t], t)], [t, t], t)
    return [(b.op("select", [nan, both, r], [i1, t, t], out), out)]


def _logaddexp_rewritten(b: _Block) -> list:
    """jnp.logaddexp on one pair written otherwise (module docstring): the
    same function, which spec/log_add_exp.py reads through its canonical
    trees (spec/expression.py) — where they did not put symmetric operands
    in one order, or missed the select form of the maximum, the body would
    go to the schedules' enumeration instead."""
    (a, c), t, out = b.args[:2], b.ins[0], b.outs[0]
    i1 = _bool_type(t)
    m = b.op("select", [_compare(b, 0, 1, "GT"), a, c], [i1, t, t], t)
    d = b.op("subtract", [c, a], [t, t], t)
    nan = b.op("compare", [d, d], [t, t], i1, " {comparison_direction = #stablehlo<comparison_direction NE>}")
    both = b.op("add", [c, a], [t, t], t)
    e = b.op("exponential", [b.op("negate", [b.op("abs", [d], [t], t)], [t], t)], [t], t)
    r = b.op("add", [b.op("log_plus_one", [e], [t], t), m], [t, t], t)
    return [(b.op("select", [nan, both, r], [i1, t, t], out), out)]


def _bool_type(t):
    from ..spec.types import I1, TensorType
    return TensorType((), I1)


def _compare(b: _Block, x: int, y: int, direction: str, total: bool = False) -> str:
    t = b.ins[x]
    kind = ", compare_type = #stablehlo<comparison_type TOTALORDER>" if total and t.element_type.is_float else ""
    return b.op("compare", [b.args[x], b.args[y]], [t, b.ins[y]], _bool_type(t),
                f" {{comparison_direction = #stablehlo<comparison_direction {direction}>{kind}}}")


def _comparator(direction: str, total: bool = False):
    def render(b: _Block) -> list:
        return [(_compare(b, 0, 1, direction, total), b.outs[0])]
    return render


def _lexicographic_lt(b: _Block) -> list:
    """(a0, a1) < (b0, b1) — with one operand pair, a0 < b0."""
    if len(b.ins) < 4:
        return _comparator("LT")(b)
    i1 = _bool_type(b.ins[0])
    lt0, eq0, lt1 = _compare(b, 0, 1, "LT"), _compare(b, 0, 1, "EQ"), _compare(b, 2, 3, "LT")
    tie = b.op("and", [eq0, lt1], [i1, i1], i1)
    return [(b.op("or", [lt0, tie], [i1, i1], i1), b.outs[0])]


def _never(b: _Block) -> list:
    out = b.outs[0]
    return [(b.op("constant", [], [], out, " {value = dense<false> : tensor<i1>}"), out)]


def _map(op_name: str):
    def render(b: _Block) -> list:
        out = b.outs[0]
        args = list(zip(b.args, b.ins)) or []
        if op_name == "first":
            return [args[0]]
        name = body_op(op_name, args[0][1].element_type)
        if len(args) == 1:
            args = args * 2
        acc = args[0]
        for a in args[1:]:
            acc = (b.op(name, [acc[0], a[0]], [acc[1], a[1]], out), out)
        return [acc]
    return render


def _branch(double: bool):
    def render(b: _Block) -> list:
        rets = list(zip(b.captured, b.outs))
        if double:
            rets = [(b.op("add", [v, v], [t, t], t), t) for v, t in rets]
        return rets
    return render


def _first_element(b: _Block, v: str, t) -> tuple:
    """(value, type): element [0, …, 0] of `v` as a rank-0 tensor, the real
    part of a complex one."""
    from ..spec.types import TensorType
    if t.shape:
        r = len(t.shape)
        one = TensorType((1,) * r, t.element_type)
        attrs = (f" {{limit_indices = array<i64: {', '.join(['1'] * r)}>, "
                 f"start_indices = array<i64: {', '.join(['0'] * r)}>, strides = array<i64: {', '.join(['1'] * r)}>}}")
        v = b.op("slice", [v], [t], one, attrs)
        t = TensorType((), t.element_type)
        v = b.op("reshape", [v], [one], t)
    if t.element_type.is_complex:
        real = TensorType((), t.element_type.component)
        v, t = b.op("real", [v], [t], real), real
    return v, t


def _count_lt(b: _Block) -> list:
    out = b.outs[0]
    if 0 in b.ins[0].shape or 0 in b.ins[1].shape:
        return [(b.op("constant", [], [], out, " {value = dense<false> : tensor<i1>}"), out)]
    x, y = _first_element(b, b.args[0], b.ins[0]), _first_element(b, b.args[1], b.ins[1])
    return [(b.op("compare", [x[0], y[0]], [x[1], y[1]], out,
                  " {comparison_direction = #stablehlo<comparison_direction LT>}"), out)]


def _count_up(b: _Block) -> list:
    import numpy as np
    from ..spec.types import dense_literal
    t0 = b.ins[0]
    one = b.op("constant", [], [], t0, f" {{value = {dense_literal(np.ones(t0.shape, dtype=t0.element_type.numpy), t0)}}}")
    rets = [(b.op("add", [b.args[0], one], [t0, t0], t0), t0), (b.args[1], b.ins[1])]
    for v, t, c in zip(b.args[2:], b.ins[2:], b.captured):
        rets.append((b.op("add", [v, c], [t, t], t), t))
    return rets


TEMPLATES = {"argmax": _argmax, "jax_argmax": _jax_argminmax("GT"), "jax_argmin": _jax_argminmax("LT"),
             "logaddexp": _logaddexp, "logaddexp_rewritten": _logaddexp_rewritten, "lt": _comparator("LT"), "gt": _comparator("GT"), "le": _comparator("LE"),
             "ge": _comparator("GE"), "lt_totalorder": _comparator("LT", total=True),
             "lexicographic_lt": _lexicographic_lt, "never": _never,
             "map_add": _map("add"), "map_multiply": _map("multiply"), "map_maximum": _map("maximum"),
             "map_minimum": _map("minimum"), "map_first": _map("first"),
             "return_captures": _branch(False), "double_captures": _branch(True),
             "count_lt": _count_lt, "count_up": _count_up}


def render(fn: Function, indent: str = "  ", captured: list | None = None) -> str:
    """`({ ^bb0(…): … "stablehlo.return"(…) })` for `fn.body` over fn's types;
    `captured`: the names of the @main values the body reads (`captures`)."""
    b = _Block(fn, indent)
    b.captured = list(captured or [])
    return b.ret(TEMPLATES.get(fn.body, _pairwise)(b))
