"""Cases of the ops v1.20 added with structure: composite and the dynamic ops — a generator stream of its own.

The seed's skeletons and solver do not reach these ops (spec/added/ is
outside the seed's 95), so their cases are built here from structures
written for each op, with sizes, attributes and values drawn from one
numpy Generator seeded by (seed, op, "v1.20 ops"):

* value cases, a few per element type the op's table takes (iota: every
  integer, float and complex type of the seed; reshape, broadcast_in_dim,
  pad, gather: every type of the seed; conv: one type of each kind and
  width class, as convolution's own plan covers them) — shapes with zero
  dimensions and size-1 expansions, negative and interior padding, slice
  sizes over the whole operand, strides, dilations and negative padding;
  the shape, padding and slice-size operands are `stablehlo.constant`s in
  @main (their tables' "literal" operands), so every implementation sees
  the static program the spec means — and the oracle checks the values
  when it reads the program (spec.md "Dynamism": verified statically);
  shape operands take si64, si32 and ui32 in turn (v1.20: "integer type";
  signed ones where a value is negative; dynamic_pad's three paddings one
  type, which the pinned verifier asks and v1.20 does not);
* composite: decompositions that add, compute a sine (so the decomposition's
  tolerance reaches the result), return two results and call another
  composite, with `composite_attributes` and `version` written and left out,
  on moderate float values (`_composite_drawn`);
* one invalid case per constraint a program can break alone, each the
  mutation of a valid case that breaks exactly that constraint (the
  instance's `violated` is [label] and the oracle's reader names it);
  constraints no mutation breaks alone — C28–C34 of dynamic_conv and the
  per-axis clauses (C6 of dynamic_broadcast_in_dim, C3 of dynamic_reshape),
  which need quantized tensors these declarations do not take yet — have none.

Every case's expectation is the oracle's, on the program written.
"""
from __future__ import annotations

import re
import zlib

import numpy as np

from ..spec.added.composite import DECOMPOSITION
from ..spec.added.dynamic_conv import static as conv_static
from ..spec.dsl import Function, OpSpec
from ..spec.dsl.custom_call_attributes import Dictionary
from ..spec.ops.convolution import result_dims
from ..spec.types import ALL_TYPES, COMPLEX_TYPES, FLOAT_TYPES, INTEGER_TYPES, TensorType, element_type
from ..suites.records import Case
from . import emit, quantized, values

SHAPE_TYPES = ("si64", "si32", "ui32")
CONV_TYPES = ("f32", "f64", "bf16", "f16", "si32", "si8", "ui8", "complex<f32>")
CASES_PER_TYPE = 2
ATTEMPTS = 20   # draws of a structure until one is valid


oracle_expectations = quantized.oracle_expectations   # the one whose invalid programs stream_case re-reads


# ---------------------------------------------------------------- cases
def _case(spec: OpSpec, inst, arrays, consts: dict, kind: str, seed: int, note: str, dtype: str, expect_fn,
          violates: str | None = None, mlir: str | None = None, present: set | None = None) -> Case | None:
    return quantized.stream_case(spec, inst, arrays, kind, seed, note, dtype, expect_fn, violates, mlir=mlir,
                                 consts=consts, present=present)


class Drawn:
    """One instance with its @main arguments and its literal operands'
    values (written as constants and known to the instance, as the
    reader knows them)."""

    def __init__(self, spec: OpSpec, operands: dict, attrs: dict, results: dict, args: list, consts: dict,
                 note: str, regions: dict | None = None):
        self.inst = spec.instance(operands, attrs, results, regions)
        self.inst.known_values = {k: np.asarray(v) for k, v in consts.items()}
        self.args, self.consts, self.note = args, consts, note

    def changed(self, spec: OpSpec, operands=None, attrs=None, results=None, consts=None, args=None) -> "Drawn":
        """The same case with these operands, attributes, results, constants or arguments replaced."""
        i = self.inst
        return Drawn(spec, {**i.operands, **(operands or {})}, {**i.attributes, **(attrs or {})},
                     {**i.results, **(results or {})}, self.args if args is None else args,
                     {**self.consts, **(consts or {})}, self.note, dict(i.regions))

    def with_values(self, spec: OpSpec, name: str, values_) -> "Drawn":
        """Literal operand `name` holding `values_` (its element type kept; its size theirs)."""
        et = self.inst.operands[name].element_type
        return self.changed(spec, operands={name: TensorType((len(values_),), et)},
                            consts={name: np.asarray(values_, dtype=np.int64).astype(et.numpy)})

    def with_result(self, spec: OpSpec, shape=None, et=None) -> "Drawn":
        """The result's shape or element type replaced."""
        name, t = next(iter(self.inst.results.items()))
        return self.changed(spec, results={name: TensorType(tuple(t.shape if shape is None else shape),
                                                           et or t.element_type)})


def _shape_operand(values_, k: int) -> tuple[TensorType, np.ndarray]:
    """The values as a 1-D operand of the k-th shape type in turn (a signed
    one where a value is negative: an unsigned type cannot hold it)."""
    names = SHAPE_TYPES if min(values_, default=0) >= 0 else tuple(n for n in SHAPE_TYPES if n.startswith("si"))
    et = element_type(names[k % len(names)])
    a = np.asarray(values_, dtype=np.int64).astype(et.numpy)
    return TensorType((len(values_),), et), a


def _fill(t: TensorType, rng) -> np.ndarray:
    return values.fill(t.element_type, t.shape, rng)


def _dims(rng, rank: int, hi: int = 4, zero: float = 0.1) -> tuple:
    return tuple(0 if rng.random() < zero else int(rng.integers(1, hi + 1)) for _ in range(rank))


# ---------------------------------------------------------------- dynamic_iota
def _iota(spec, et, rng, k: int) -> Drawn:
    shape = (24,) if k == 1 else _dims(rng, int(rng.integers(1, 4)))
    st, sv = _shape_operand(shape, k + int(rng.integers(0, 3)))
    d = int(rng.integers(0, len(shape)))
    note = "long dimension (ids past a narrow format's integers)" if k == 1 else "random shape"
    return Drawn(spec, {"output_shape": st}, {"iota_dimension": d}, {"result": TensorType(shape, et)}, [],
                 {"output_shape": sv}, note)


# ---------------------------------------------------------------- dynamic_reshape
def _factor(n: int, rank: int, rng) -> tuple:
    if n == 0:
        dims = list(_dims(rng, rank, zero=0.0))
        dims[int(rng.integers(0, rank))] = 0
        return tuple(dims)
    dims, rest = [], n
    for _ in range(rank - 1):
        divisors = [d for d in range(1, rest + 1) if rest % d == 0]
        d = int(rng.choice(divisors))
        dims.append(d)
        rest //= d
    return tuple(dims + [rest])


def _reshape(spec, et, rng, k: int) -> Drawn:
    shape = _dims(rng, int(rng.integers(0, 4)))
    n = int(np.prod(shape, dtype=np.int64))
    out = _factor(n, int(rng.integers(1, 4)), rng)
    st, sv = _shape_operand(out, k + int(rng.integers(0, 3)))
    t = TensorType(shape, et)
    return Drawn(spec, {"operand": t, "output_shape": st}, {}, {"result": TensorType(out, et)}, [_fill(t, rng)],
                 {"output_shape": sv}, f"{list(shape)} to {list(out)}")


# ---------------------------------------------------------------- dynamic_broadcast_in_dim
def _broadcast(spec, et, rng, k: int) -> Drawn:
    r = int(rng.integers(0, 3))
    big = r + int(rng.integers(0, 3))
    bd = tuple(int(x) for x in rng.choice(big, size=r, replace=False)) if r else ()
    out = list(_dims(rng, big, zero=0.05))
    shape = []
    for j, b in enumerate(bd):
        shape.append(1 if rng.random() < 0.4 else out[b])
    expanding = tuple(j for j in range(r) if shape[j] == 1 and rng.random() < 0.5)
    kept = tuple(j for j in range(r) if shape[j] == out[bd[j]] and j not in expanding and rng.random() < 0.5)
    st, sv = _shape_operand(out, k + int(rng.integers(0, 3)))
    t = TensorType(tuple(shape), et)
    attrs = {"broadcast_dimensions": bd, "known_expanding_dimensions": expanding,
             "known_nonexpanding_dimensions": kept}
    note = f"{list(shape)} to {out} along {list(bd)}" + (" with known (non)expanding dimensions"
                                                          if expanding or kept else "")
    return Drawn(spec, {"operand": t, "output_dimensions": st}, attrs, {"result": TensorType(tuple(out), et)},
                 [_fill(t, rng)], {"output_dimensions": sv}, note)


# ---------------------------------------------------------------- dynamic_pad
PADS = ("edge_padding_low", "edge_padding_high", "interior_padding")


def _pad(spec, et, rng, k: int) -> Drawn | None:
    for _ in range(ATTEMPTS):
        r = int(rng.integers(1, 4))
        shape = _dims(rng, r, zero=0.1)
        low, high = (tuple(int(x) for x in rng.integers(-2, 4, size=r)) for _ in range(2))
        interior = tuple(int(x) for x in rng.integers(0, 3, size=r))
        out = tuple(d + max(d - 1, 0) * i + lo + hi for d, lo, hi, i in zip(shape, low, high, interior))
        if min(out) >= 0:
            break
    else:
        return None
    t, v = TensorType(shape, et), TensorType((), et)
    operands, consts = {"operand": t, "padding_value": v}, {}
    names = SHAPE_TYPES if min(low + high) >= 0 else tuple(n for n in SHAPE_TYPES if n.startswith("si"))
    pt = element_type(names[k % len(names)])   # one type for the three: the pinned verifier asks it (v1.20 does not)
    for name, xs in zip(PADS, (low, high, interior)):
        operands[name], consts[name] = TensorType((r,), pt), np.asarray(xs, dtype=np.int64).astype(pt.numpy)
    return Drawn(spec, operands, {}, {"result": TensorType(out, et)}, [_fill(t, rng), _fill(v, rng)], consts,
                 f"{list(shape)} low {list(low)} high {list(high)} interior {list(interior)}")


# ---------------------------------------------------------------- dynamic_gather
def _starts(rng, n: int, index_map, operand, sizes) -> np.ndarray:
    """`n` start vectors in bounds: component c addresses operand axis index_map[c]."""
    return np.stack([rng.integers(0, operand[a] - sizes[a] + 1, size=n) for a in index_map], axis=-1)


def _gather(spec, et, rng, k: int) -> Drawn:
    it = element_type(SHAPE_TYPES[(k + 1) % 2])
    which = int(rng.integers(0, 3))
    if which == 0:   # spec.md's Example: index vectors on the last axis, two offset dims
        operand, sizes = (3, 4, 2), (1, int(rng.integers(1, 5)), int(rng.integers(1, 3)))
        dn = {"offset_dims": (2, 3), "collapsed_slice_dims": (0,), "start_index_map": (1, 0), "index_vector_dim": 2}
        starts = _starts(rng, 6, (1, 0), operand, sizes).reshape(2, 3, 2)
        out, note = (2, 3, sizes[1], sizes[2]), "the spec's Example structure"
    elif which == 1:  # rows x[i] (what JAX writes for a symbolic row length)
        n = int(rng.integers(1, 5))
        operand, sizes = (5, n), (1, n)
        dn = {"offset_dims": (1,), "collapsed_slice_dims": (0,), "start_index_map": (0,), "index_vector_dim": 1}
        starts = _starts(rng, 3, (0,), operand, sizes)
        out, note = (3, n), "rows x[i]"
    else:             # windows of a vector, no collapsed dim
        w = int(rng.integers(0, 5))
        operand, sizes = (6,), (w,)
        dn = {"offset_dims": (1,), "collapsed_slice_dims": (), "start_index_map": (0,), "index_vector_dim": 1}
        starts = _starts(rng, 2, (0,), operand, sizes)
        out, note = (2, w), "windows of a vector"
    st, sv = _shape_operand(sizes, k + int(rng.integers(0, 3)))
    t, idx = TensorType(operand, et), TensorType(starts.shape, it)
    return Drawn(spec, {"operand": t, "start_indices": idx, "slice_sizes": st}, {**dn, "indices_are_sorted": False},
                 {"result": TensorType(out, et)}, [_fill(t, rng), starts.astype(it.numpy)], {"slice_sizes": sv},
                 f"{note}, slice sizes {list(sizes)}")


# ---------------------------------------------------------------- dynamic_conv
CONV_1D = {"input_batch_dimension": 0, "input_feature_dimension": 1, "input_spatial_dimensions": (2,),
           "kernel_input_feature_dimension": 1, "kernel_output_feature_dimension": 2,
           "kernel_spatial_dimensions": (0,), "output_batch_dimension": 0, "output_feature_dimension": 1,
           "output_spatial_dimensions": (2,)}
CONV_2D = {"input_batch_dimension": 0, "input_feature_dimension": 3, "input_spatial_dimensions": (1, 2),
           "kernel_input_feature_dimension": 2, "kernel_output_feature_dimension": 3,
           "kernel_spatial_dimensions": (0, 1), "output_batch_dimension": 0, "output_feature_dimension": 3,
           "output_spatial_dimensions": (1, 2)}


def _conv(spec, et, rng, k: int) -> Drawn | None:
    for _ in range(ATTEMPTS):
        if k % 2 == 0:   # 1-D: [b, f, 0]x[0, i, o]->[b, f, 0]
            c, w, kk, o = (int(x) for x in (rng.integers(1, 3), rng.integers(3, 7), rng.integers(1, 4),
                                            rng.integers(1, 3)))
            lhs, rhs, dn, s = TensorType((1, c, w), et), TensorType((kk, c, o), et), CONV_1D, 1
            pads = [(int(rng.integers(-1, 3)), int(rng.integers(-1, 3)))]
        else:            # the spec's Example layout, 2-D
            lhs, rhs, dn, s = TensorType((1, 4, 4, 1), et), TensorType((3, 3, 1, 1), et), CONV_2D, 2
            pads = [(int(rng.integers(0, 2)), int(rng.integers(0, 2))) for _ in range(2)]
        attrs = {**dn, "window_strides": tuple(int(x) for x in rng.integers(1, 3, size=s)),
                 "lhs_dilation": tuple(int(x) for x in rng.integers(1, 3, size=s)),
                 "rhs_dilation": tuple(int(x) for x in rng.integers(1, 3, size=s)),
                 "window_reversal": tuple(bool(x) for x in rng.integers(0, 2, size=s)),
                 "feature_group_count": 1, "batch_group_count": 1, "precision_config": ("DEFAULT", "DEFAULT")}
        pt = TensorType((s, 2), element_type(SHAPE_TYPES[k % 2]))
        pv = np.asarray(pads, dtype=np.int64).astype(pt.element_type.numpy)
        probe = spec.instance({"lhs": lhs, "rhs": rhs, "padding": pt}, attrs, {})
        probe.known_values = {"padding": pv}
        out = spec.infer(probe)["result"]
        if all(int(d) > 0 for d in out.shape):
            break
    else:
        return None
    return Drawn(spec, {"lhs": lhs, "rhs": rhs, "padding": pt}, attrs, {"result": out},
                 [_fill(lhs, rng), _fill(rhs, rng)], {"padding": pv},
                 f"{len(pads)}-D, padding {pads}, strides {list(attrs['window_strides'])}, "
                 f"dilations {list(attrs['lhs_dilation'])}/{list(attrs['rhs_dilation'])}")


# ---------------------------------------------------------------- composite
def _fn_text(name: str, ins: list, outs: list, body: list[str], rets: list[str]) -> str:
    args = ", ".join(f"%a{i}: {t.mlir}" for i, t in enumerate(ins))
    sig = ", ".join(t.mlir for t in outs)
    return (f"func.func private @{name}({args}) -> ({sig}) {{\n" + "".join(f"  {line}\n" for line in body)
            + f'  "func.return"({", ".join(rets)}) : ({sig}) -> ()\n}}\n')


def _binary(op: str, t: TensorType, a: str = "%a0", b: str = "%a1", out: str = "%r") -> str:
    return f'{out} = "stablehlo.{op}"({a}, {b}) : ({t.mlir}, {t.mlir}) -> {t.mlir}'


def _composites():
    """(note, name, attributes text or None, version or None, input types, result types,
    [decomposition functions' texts]) — the first function is `decomposition`'s."""
    f32s, f4 = TensorType((), element_type("f32")), TensorType((4,), element_type("f32"))
    i3, b2 = TensorType((3,), element_type("si32")), TensorType((2, 2), element_type("bf16"))
    sine = _fn_text("my.scaled_sin", [f4], [f4], [
        f'%c = "stablehlo.constant"() {{value = dense<2.000000e+00> : tensor<f32>}} : () -> {f32s.mlir}',
        f'%s = "stablehlo.sine"(%a0) : ({f4.mlir}) -> {f4.mlir}',
        f'%b = "stablehlo.broadcast_in_dim"(%c) {{broadcast_dimensions = array<i64>}} : ({f32s.mlir}) -> {f4.mlir}',
        _binary("multiply", f4, "%s", "%b")], ["%r"])
    inner = _fn_text("inner", [b2, b2], [b2], [_binary("maximum", b2)], ["%r"])
    outer = _fn_text("outer", [b2, b2], [b2], [
        f'%m = "stablehlo.composite"(%a0, %a1) {{name = "my.max", decomposition = @inner}} : '
        f"({b2.mlir}, {b2.mlir}) -> {b2.mlir}", _binary("add", b2, "%m", "%a1")], ["%r"])
    return (
        ("the spec's Example (decomposition: add)", "my_namespace.my_op", '{my_attribute = "my_value"}', 1,
         [f32s, f32s], [f32s], [_fn_text("my_op", [f32s, f32s], [f32s], [_binary("add", f32s)], ["%r"])]),
        ("a sine in the decomposition, as jax.lax.composite writes it", "my.scaled_sin",
         "{scale = 2.000000e+00 : f32}", 2, [f4], [f4], [sine]),
        ("two results, attributes and version left out", "my.mul_sub", None, None, [i3, i3], [i3, i3],
         [_fn_text("mul_sub", [i3, i3], [i3, i3], [_binary("multiply", i3, out="%p"),
                                                   _binary("subtract", i3, out="%q")], ["%p", "%q"])]),
        ("a composite inside the decomposition", "my.max_plus", "{}", 0, [b2, b2], [b2], [outer, inner]),
    )


def _quoted_composite():
    """`_composites`' row for a decomposition whose name MLIR quotes (`@"my-negate"`: a hyphen is outside
    MLIR's bare identifiers), written after every other composite case: the reader finds the function only
    with the quotes stripped from the symbol reference, and a reader keeping them looks for `"my-negate"`,
    which the module does not define, and refuses a valid program (C2)."""
    f3 = TensorType((3,), element_type("f32"))
    negate = _fn_text('"my-negate"', [f3], [f3], [f'%r = "stablehlo.negate"(%a0) : ({f3.mlir}) -> {f3.mlir}'],
                      ["%r"])
    return ('a decomposition whose name MLIR quotes (@"my-negate")', "my.negate", None, None, [f3], [f3],
            [negate])


def _composite_drawn(spec, note, name, attrs_text, version, ins, outs, fns, rng) -> tuple[Drawn, list, str]:
    """The instance (its decomposition's types as the reader finds them), the @main arguments and the
    module text."""
    fn_name = fns[0].split("@", 1)[1].split("(", 1)[0].strip('"')
    attrs = {"name": name, DECOMPOSITION: fn_name,
             "composite_attributes": Dictionary(attrs_text) if attrs_text else Dictionary("{}"),
             "version": version or 0}
    present = {"name", DECOMPOSITION} | ({"composite_attributes"} if attrs_text else set()) \
        | ({"version"} if version is not None else set())
    regions = {"regions": [], DECOMPOSITION: Function(tuple(ins), tuple(outs))}
    # Moderate float values: a decomposition's ops are each judged on their special values by their own cases
    # (XLA:CPU flushes subnormal results: the sine of the smallest normal f32 is 0, a bf16 sum reaching a
    # subnormal is 0); a composite's case is about the call: its decomposition's values and allowances arrive.
    args = [rng.uniform(-4, 4, size=t.shape).astype(t.element_type.numpy) if t.element_type.is_float
            else _fill(t, rng) for t in ins]
    d = Drawn(spec, {"inputs": list(ins)}, attrs, {"results": list(outs)}, args, {}, note, regions)
    return d, sorted(present), "".join(fns)


def _module(spec, d: Drawn, present, functions: str) -> str:
    return "module {\n" + emit.program(spec, d.inst, set(present)) + functions + "}\n"


# ---------------------------------------------------------------- invalid programs
NO_KNOWLEDGE = {"known_expanding_dimensions": (), "known_nonexpanding_dimensions": ()}


def _other_type(d: Drawn):
    """An element type the result does not have."""
    et = next(iter(d.inst.results.values())).element_type
    return element_type("f32" if et.name == "f64" else "f64")


def values_of(d: Drawn, name: str) -> tuple:
    return tuple(int(x) for x in np.asarray(d.consts[name]).reshape(-1))


def _iota_mutations(spec, d: Drawn):
    r = d.inst.result
    yield "dynamic_iota_c1", "iota_dimension = rank", d.changed(spec, attrs={"iota_dimension": r.rank})
    yield "dynamic_iota_c2", "output_shape one entry longer than the rank", \
        d.with_values(spec, "output_shape", tuple(r.shape) + (1,))
    yield "dynamic_iota_dynamism", "output_shape's values not the result's shape", \
        d.with_values(spec, "output_shape", tuple(x + 1 for x in r.shape))


def _reshape_mutations(spec, d: Drawn):
    r = d.inst.result
    yield "dynamic_reshape_c1", "result of another element type", d.with_result(spec, et=_other_type(d))
    bigger = tuple(r.shape[:-1]) + (r.shape[-1] + 1,)
    yield "dynamic_reshape_c2", "one element more", d.with_values(spec, "output_shape", bigger).with_result(
        spec, shape=bigger)
    yield "dynamic_reshape_c4", "output_shape one entry longer than the rank", \
        d.with_values(spec, "output_shape", tuple(r.shape) + (1,))
    if r.rank >= 2 and r.shape[0] != r.shape[1]:
        yield "dynamic_reshape_dynamism", "output_shape's values not the result's shape", \
            d.with_values(spec, "output_shape", (r.shape[1], r.shape[0]) + tuple(r.shape[2:]))


def _broadcast_mutations(spec, d: Drawn):
    i = d.inst
    r, o, bd = i.result, i.operand, tuple(i.broadcast_dimensions)
    yield "dynamic_broadcast_in_dim_c1", "result of another element type", d.with_result(spec, et=_other_type(d))
    if o.rank:
        yield "dynamic_broadcast_in_dim_c2", "one broadcast dimension short", d.changed(
            spec, attrs={"broadcast_dimensions": bd[:-1], **NO_KNOWLEDGE})
        yield "dynamic_broadcast_in_dim_c3", "a broadcast dimension past the result's rank", d.changed(
            spec, attrs={"broadcast_dimensions": bd[:-1] + (r.rank,), **NO_KNOWLEDGE})
        if r.shape[bd[-1]] != 1:
            shape = tuple(o.shape[:-1]) + (r.shape[bd[-1]] + 1,)
            yield "dynamic_broadcast_in_dim_c5", "an operand dimension neither 1 nor the result's", d.changed(
                spec, operands={"operand": TensorType(shape, o.element_type)}, attrs=NO_KNOWLEDGE,
                args=[np.zeros(shape, o.element_type.numpy)])
        yield "dynamic_broadcast_in_dim_c8", "a dimension known both expanding and not", d.changed(
            spec, attrs={"known_expanding_dimensions": (0,), "known_nonexpanding_dimensions": (0,)})
        yield "dynamic_broadcast_in_dim_c9", "known expanding dimension past the operand's rank", d.changed(
            spec, attrs={**NO_KNOWLEDGE, "known_expanding_dimensions": (o.rank,)})
        yield "dynamic_broadcast_in_dim_c10", "known non-expanding dimension past the operand's rank", d.changed(
            spec, attrs={**NO_KNOWLEDGE, "known_nonexpanding_dimensions": (o.rank,)})
    if o.rank >= 2 and o.shape[0] == o.shape[1] == 1:   # size-1 dims: C5 holds wherever they go
        yield "dynamic_broadcast_in_dim_c4", "a broadcast dimension twice", d.changed(
            spec, attrs={"broadcast_dimensions": (bd[0], bd[0]) + bd[2:], **NO_KNOWLEDGE})
    yield "dynamic_broadcast_in_dim_c7", "output_dimensions one entry longer than the rank", \
        d.with_values(spec, "output_dimensions", tuple(r.shape) + (1,))
    if r.rank:
        yield "dynamic_broadcast_in_dim_dynamism", "output_dimensions' values not the result's shape", \
            d.with_values(spec, "output_dimensions", tuple(x + 1 for x in r.shape))


def _pad_mutations(spec, d: Drawn):
    i = d.inst
    o, r = i.operand, i.result
    other = _other_type(d)
    yield "dynamic_pad_c1", "padding value of another element type", d.changed(
        spec, operands={"padding_value": TensorType((), other)}, args=[d.args[0], np.zeros((), other.numpy)])
    yield "dynamic_pad_c2", "edge_padding_low one entry longer than the rank", \
        d.with_values(spec, "edge_padding_low", values_of(d, "edge_padding_low") + (0,))
    low, high, interior = (values_of(d, n) for n in PADS)
    out0 = 2 - 1 + low[0] + high[0]   # a dim of 2 with interior -1: the formula takes one element off
    if o.shape[0] == 2 and i.interior_padding.element_type.is_signed and out0 >= 0:
        yield "dynamic_pad_c3", "negative interior padding", d.with_values(
            spec, "interior_padding", (-1,) + interior[1:]).with_result(spec, shape=(out0,) + tuple(r.shape[1:]))
    yield "dynamic_pad_c4", "result one longer than the paddings say", d.with_result(
        spec, shape=(r.shape[0] + 1,) + tuple(r.shape[1:]))


def _gather_mutations(spec, d: Drawn):
    i = d.inst
    o, r, sizes = i.operand, i.result, values_of(d, "slice_sizes")
    offset, collapsed, index_map = tuple(i.offset_dims), tuple(i.collapsed_slice_dims), tuple(i.start_index_map)
    yield "dynamic_gather_c14", "result of another element type", d.with_result(spec, et=_other_type(d))
    yield "dynamic_gather_c2", "index_vector_dim past the indices' rank", d.changed(
        spec, attrs={"index_vector_dim": i.start_indices.rank + 1})
    unused = [a for a in range(o.rank) if a not in index_map]
    if unused:   # a new axis: unique and in range, so C3 alone
        yield "dynamic_gather_c3", "start_index_map one entry longer", d.changed(
            spec, attrs={"start_index_map": index_map + (unused[0],)})
    if len(offset) >= 2:   # reversed: unique, not sorted; the result's offset axes swapped to match
        swapped = tuple(r.shape[:offset[0]]) + (r.shape[offset[1]], r.shape[offset[0]])
        yield "dynamic_gather_c4", "offset_dims not sorted", d.changed(
            spec, attrs={"offset_dims": offset[::-1]}).with_result(spec, shape=swapped)
    if collapsed == (0,) and o.rank == 3:   # the Example's structure: collapse axis 1 too, out of order
        yield "dynamic_gather_c6", "collapsed_slice_dims not sorted", d.changed(
            spec, attrs={"collapsed_slice_dims": (1, 0), "offset_dims": (2,)}).with_values(
            spec, "slice_sizes", (1, 1, sizes[2])).with_result(spec, shape=tuple(r.shape[:2]) + (sizes[2],))
    if collapsed:
        yield "dynamic_gather_c7", "a collapsed dim past the operand's rank", d.changed(
            spec, attrs={"collapsed_slice_dims": (o.rank,)})
        if o.shape[0] >= 2:   # dim 0 is the collapsed one in every structure: its slice size 2 is C8's alone
            yield "dynamic_gather_c8", "a collapsed dim's slice size 2", d.with_values(
                spec, "slice_sizes", (2,) + sizes[1:])
    if len(index_map) >= 2:
        yield "dynamic_gather_c9", "start_index_map repeats an axis", d.changed(
            spec, attrs={"start_index_map": (index_map[0], index_map[0]) + index_map[2:]})
    yield "dynamic_gather_c10", "start_index_map past the operand's rank", d.changed(
        spec, attrs={"start_index_map": (o.rank,) + index_map[1:]})
    yield "dynamic_gather_c11", "slice_sizes one entry longer", d.with_values(spec, "slice_sizes", sizes + (1,))
    if len(sizes) - 1 not in collapsed:   # the last operand axis is the last offset axis
        wider = list(r.shape)
        wider[offset[-1]] = o.shape[-1] + 1
        yield "dynamic_gather_c12", "a slice size past the operand", d.with_values(
            spec, "slice_sizes", sizes[:-1] + (o.shape[-1] + 1,)).with_result(spec, shape=wider)
        if r.shape[offset[-1]] >= 1:
            narrower = list(r.shape)
            narrower[offset[-1]] -= 1
            yield "dynamic_gather_c13", "result's offset size not the slice size", d.with_result(spec, shape=narrower)


def _conv_mutations(spec, d: Drawn):
    """Attribute changes with the result's shape recomputed by C25's formula
    as convolution reads it (so C25 holds and the changed rule is blamed
    alone), then the result's own rules."""
    i = d.inst
    s = len(i.window_strides)
    pads = np.asarray(d.consts["padding"])

    def recomputed(m: Drawn) -> Drawn:
        try:
            dims = tuple(int(x) for x in result_dims(conv_static(m.inst)))
        except (IndexError, TypeError, ValueError, ZeroDivisionError):
            return m
        return m.with_result(spec, shape=dims)

    def attrs(**changes) -> Drawn:
        return recomputed(d.changed(spec, attrs=changes))

    yield "dynamic_conv_c2", "window_strides one entry longer", attrs(window_strides=tuple(i.window_strides) + (1,))
    yield "dynamic_conv_c3", "a window stride 0", attrs(window_strides=(0,) * s)
    yield "dynamic_conv_c4", "padding of one row more", recomputed(d.changed(
        spec, operands={"padding": TensorType((s + 1, 2), i.padding.element_type)},
        consts={"padding": np.concatenate([pads, pads[:1]])}))
    yield "dynamic_conv_c5", "lhs_dilation one entry longer", attrs(lhs_dilation=tuple(i.lhs_dilation) + (1,))
    yield "dynamic_conv_c6", "lhs_dilation 0", attrs(lhs_dilation=(0,) * s)
    yield "dynamic_conv_c7", "rhs_dilation one entry longer", attrs(rhs_dilation=tuple(i.rhs_dilation) + (1,))
    yield "dynamic_conv_c8", "rhs_dilation 0", attrs(rhs_dilation=(0,) * s)
    yield "dynamic_conv_c9", "window_reversal one entry longer", attrs(
        window_reversal=tuple(i.window_reversal) + (False,))
    yield "dynamic_conv_c10", "batch_group_count 2 over one batch", attrs(batch_group_count=2)
    yield "dynamic_conv_c13", "a spatial dimension that is the batch dimension", attrs(
        input_spatial_dimensions=(i.input_batch_dimension,) + tuple(i.input_spatial_dimensions[1:]))
    yield "dynamic_conv_c18", "a kernel spatial dimension that is its input feature dimension", attrs(
        kernel_spatial_dimensions=(i.kernel_input_feature_dimension,) + tuple(i.kernel_spatial_dimensions[1:]))
    yield "dynamic_conv_c20", "an output spatial dimension that is the batch dimension", attrs(
        output_spatial_dimensions=(i.output_batch_dimension,) + tuple(i.output_spatial_dimensions[1:]))
    yield "dynamic_conv_c24", "one precision_config entry", attrs(precision_config=("DEFAULT",))
    wide = tuple(x + 1 if a == i.kernel_input_feature_dimension else x for a, x in enumerate(i.rhs.shape))
    yield "dynamic_conv_c14", "a kernel input feature size not the lhs's", d.changed(
        spec, operands={"rhs": TensorType(wide, i.rhs.element_type)},
        args=[d.args[0], np.zeros(wide, i.rhs.element_type.numpy)])
    longer = list(i.result.shape)
    longer[i.output_spatial_dimensions[0]] += 1
    yield "dynamic_conv_c25", "a spatial dimension one longer than the padding gives", d.with_result(spec, shape=longer)
    yield "dynamic_conv_c26", "a result of rank N + 1", d.with_result(spec, shape=tuple(i.result.shape) + (1,))
    yield "dynamic_conv_c27", "result of another element type", d.with_result(spec, et=_other_type(d))


MUTATIONS = {"dynamic_iota": _iota_mutations, "dynamic_reshape": _reshape_mutations,
             "dynamic_broadcast_in_dim": _broadcast_mutations, "dynamic_pad": _pad_mutations,
             "dynamic_gather": _gather_mutations, "dynamic_conv": _conv_mutations}


def _composite_mutations(spec, d: Drawn, functions: str):
    """(label, note, Drawn, the module's functions) — on the spec's Example
    (`my_op` adds two f32 scalars)."""
    yield "composite_c1", "a name with no namespace", d.changed(spec, attrs={"name": "my_op"}), functions
    missing = d.changed(spec, attrs={DECOMPOSITION: "missing"})
    missing.inst.regions.pop(DECOMPOSITION, None)
    yield "composite_c2", "a decomposition the module does not define", missing, functions
    f32, f64 = TensorType((), element_type("f32")), TensorType((), element_type("f64"))
    c3 = d.changed(spec)
    c3.inst.regions[DECOMPOSITION] = Function((f64, f32), (f32,))
    takes_f64 = _fn_text("my_op", [f64, f32], [f32], [
        f'%c = "stablehlo.convert"(%a0) : ({f64.mlir}) -> {f32.mlir}', _binary("add", f32, "%c")], ["%r"])
    yield "composite_c3", "the decomposition takes another input type", c3, takes_f64
    c4 = d.changed(spec, results={"results": [f64]})
    yield "composite_c4", "a result type the decomposition does not return", c4, functions


# ---------------------------------------------------------------- the stream
DRAW = {"dynamic_iota": (_iota, INTEGER_TYPES + FLOAT_TYPES + COMPLEX_TYPES),
        "dynamic_reshape": (_reshape, ALL_TYPES),
        "dynamic_broadcast_in_dim": (_broadcast, ALL_TYPES),
        "dynamic_pad": (_pad, ALL_TYPES),
        "dynamic_gather": (_gather, ALL_TYPES),
        "dynamic_conv": (_conv, tuple(element_type(n) for n in CONV_TYPES))}


def cases(spec: OpSpec, seed: int, expect_fn=None) -> list:
    """The op's cases (module docstring); [] for an op this stream does not build."""
    name = spec.mnemonic
    if name != "composite" and name not in DRAW:
        return []
    expect_fn = expect_fn or oracle_expectations
    rng = np.random.default_rng([seed, zlib.crc32(name.encode()), zlib.crc32(b"v1.20 ops")])
    if name == "composite":
        return _composite_cases(spec, seed, rng, expect_fn)
    draw, types = DRAW[name]
    out, valid = [], []
    for et in types:
        for k in range(CASES_PER_TYPE):
            d = draw(spec, et, rng, k)
            if d is None or spec.violated(d.inst):
                continue
            c = _case(spec, d.inst, d.args, d.consts, "value", seed, d.note, et.name, expect_fn)
            if c is not None:
                out.append(c)
                valid.append((d, et))
    out += _invalid(spec, valid, seed, expect_fn)
    return out + _at_run_time(spec, valid, seed, expect_fn)


def late_cases(spec: OpSpec, seed: int, expect_fn=None) -> list:
    """LATE_MUTATIONS' invalid cases (`_late_invalid`) on the same draws as
    `cases` (the same generator, drawn again): a stream of its own, after
    every other stream of the op (generators/suite.py ADDED_STREAMS)."""
    if spec.mnemonic not in LATE_MUTATIONS:
        return []
    rng = np.random.default_rng([seed, zlib.crc32(spec.mnemonic.encode()), zlib.crc32(b"v1.20 ops")])
    draw, types = DRAW[spec.mnemonic]
    drawn = [(draw(spec, et, rng, k), et) for et in types for k in range(CASES_PER_TYPE)]
    valid = [(d, et) for d, et in drawn if d is not None and not spec.violated(d.inst)]
    out = _late_invalid(spec, valid, seed, expect_fn or oracle_expectations)
    if spec.mnemonic == "dynamic_conv":
        out += _ranged_lhs(spec, seed, rng, expect_fn or oracle_expectations)
    if spec.mnemonic == "dynamic_gather":
        out += _implicit_index_vector(spec, seed, rng, expect_fn or oracle_expectations)
    return out


# Constraints check-spec proves independent for which the first pass (`_invalid`, MUTATIONS) had no case when
# the suite was first written: their cases come after every other case of the op (`_late_invalid`), so the
# committed cases keep their bytes.  dynamic_gather's three are broken alone only with `slice_sizes` known at
# run time (with the values known, C13 — and C12 for one entry more — fails with them: `_at_run_time`'s form);
# dynamic_conv's seven are broken alone with the padding a constant, on shapes chosen for the group counts.
def _gather_late(spec, d: Drawn):
    i = d.inst
    o, r = i.operand, i.result
    yield "dynamic_gather_c1", "an offset dim more than the operand's rank allows", d.changed(
        spec, attrs={"offset_dims": tuple(i.offset_dims) + (r.rank,)}).with_result(spec, shape=tuple(r.shape) + (1,))
    if i.collapsed_slice_dims:
        yield "dynamic_gather_c7", "a collapsed dim past the operand's rank", d.changed(
            spec, attrs={"collapsed_slice_dims": (o.rank,)})
    yield "dynamic_gather_c11", "slice_sizes one entry longer", d.with_values(
        spec, "slice_sizes", values_of(d, "slice_sizes") + (1,))


def _conv_late(spec, d: Drawn):
    """C1 by a kernel of one more (unreferenced) axis; the group rules on
    lhs/rhs/result sizes chosen so that every other group rule holds."""
    i = d.inst

    def sized(t: TensorType, sizes: dict) -> TensorType:
        return TensorType(tuple(sizes.get(a, x) for a, x in enumerate(t.shape)), t.element_type)

    def grouped(batch, feature, kernel_in, kernel_out, fgc, bgc, result_batch) -> Drawn:
        lhs = sized(i.lhs, {i.input_batch_dimension: batch, i.input_feature_dimension: feature})
        rhs = sized(i.rhs, {i.kernel_input_feature_dimension: kernel_in, i.kernel_output_feature_dimension: kernel_out})
        out = sized(i.result, {i.output_batch_dimension: result_batch, i.output_feature_dimension: kernel_out})
        return d.changed(spec, operands={"lhs": lhs, "rhs": rhs}, results={"result": out},
                         attrs={"feature_group_count": fgc, "batch_group_count": bgc},
                         args=[np.zeros(lhs.shape, lhs.element_type.numpy), np.zeros(rhs.shape, rhs.element_type.numpy)])

    wider = TensorType(tuple(i.rhs.shape) + (1,), i.rhs.element_type)
    yield "dynamic_conv_c1", "a kernel of rank N + 1", d.changed(
        spec, operands={"rhs": wider}, args=[d.args[0], np.zeros(wider.shape, wider.element_type.numpy)])
    yield "dynamic_conv_c11", "3 input features in 2 feature groups", grouped(1, 3, 1, 2, 2, 1, 1)
    yield "dynamic_conv_c15", "1 output feature in 2 batch groups", grouped(2, 1, 1, 1, 1, 2, 1)
    yield "dynamic_conv_c16", "1 output feature in 2 feature groups", grouped(1, 2, 1, 1, 2, 1, 1)
    yield "dynamic_conv_c21", "feature_group_count -1 (no input features)", grouped(1, 0, 0, 1, -1, 1, 1)
    yield "dynamic_conv_c22", "batch_group_count -1 (an empty batch)", grouped(0, 1, 1, 1, 1, -1, 0)
    yield "dynamic_conv_c23", "2 feature groups and 2 batch groups", grouped(2, 2, 1, 2, 2, 2, 1)


LATE_MUTATIONS = {"dynamic_gather": _gather_late, "dynamic_conv": _conv_late}


def _ranged_lhs(spec, seed: int, rng, expect_fn) -> list:
    """convolution's quantized example in f32 (1x5x2 by 3x2x4, stride 2, padding [[1, 1]] a constant) with
    its lhs the sine of @main's argument, after every other case of the op: a sine's result carries its
    4-ULP tolerance, so the oracle bounds the conv's error through its bilinear form on the padding it ran
    with (`bilinear_form`: convolution's form on the static instance) — no other case feeds dynamic_conv a
    ranged operand."""
    inst = spec.quantization.example({})
    text = emit.program(spec, inst, None, inst.known_values)
    lhs = inst.operands["lhs"].mlir
    sine = f'  %s = "stablehlo.sine"(%arg0) : ({lhs}) -> {lhs}\n'
    head, conv = text.split('  %0 = "stablehlo.dynamic_conv"(%arg0,', 1)
    mlir = head + sine + '  %0 = "stablehlo.dynamic_conv"(%s,' + conv
    arrays = [rng.uniform(-4, 4, size=t.shape).astype(t.element_type.numpy) for t in (inst.lhs, inst.rhs)]
    c = _case(spec, inst, arrays, {}, "value", seed, "lhs from a sine: its 4-ULP range carried by the bilinear form",
              "f32", expect_fn, mlir=mlir)
    return [] if c is None else [c]


def _implicit_index_vector(spec, seed: int, rng, expect_fn) -> list:
    """Rows of a 4x5 operand gathered by a rank-1 `start_indices` whose
    `index_vector_dim` is its rank (each start one implicit component),
    `slice_sizes` an @main argument: C13 is then read on types before the
    values are known, where `index_vector_dim` may equal the rank of
    `start_indices` (v1.20 C2: `0 <= index_vector_dim <= rank`).  Every
    other case with `slice_sizes` unknown has its index vector inside the
    start indices, so a reading that took the rank itself as out of range
    would refuse this valid program alone.  After every other case of the
    op (`late_cases`' own generator, after its draws)."""
    f32, si32, si64 = element_type("f32"), element_type("si32"), element_type("si64")
    sizes = TensorType((2,), si64)
    inst = spec.instance({"operand": TensorType((4, 5), f32), "start_indices": TensorType((2,), si32),
                          "slice_sizes": sizes},
                         {"offset_dims": (1,), "collapsed_slice_dims": (0,), "start_index_map": (0,),
                          "index_vector_dim": 1, "indices_are_sorted": False},
                         {"result": TensorType((2, 3), f32)})
    inst.known_values = {}
    fits = np.array([1, 3], dtype=np.int64)
    mlir = _as_argument(emit.program(spec, inst, None, {"slice_sizes": fits}), "slice_sizes", sizes)
    arrays = [rng.uniform(-4, 4, size=(4, 5)).astype(np.float32), rng.integers(0, 4, size=(2,)).astype(np.int32), fits]
    c = quantized.stream_case(spec, inst, arrays, "value", seed,
                              "index_vector_dim = rank(start_indices) = 1, slice_sizes [1, 3] an @main argument",
                              "f32", expect_fn, mlir=mlir, more_arguments=(sizes,))
    return [] if c is None else [c]


# ---------------------------------------------------------------- shape operands known only at run time
# spec.md "Dynamism": "Constraints will be verified statically if possible, otherwise they are deferred to
# runtime and mismatches will result in undefined behavior"; "The values in the shape operand at runtime must
# match the shape of the result, otherwise the behavior is undefined".  So a shape operand that is an @main
# argument is one case where its values fit (a value case: the op is defined) and one where they do not —
# a mismatch with the result, or (slice sizes) a value out of the operand's range: undefined, the oracle
# states any value, and what each backend does is reported, never scored (kind "survey").  After every
# other case of the op, so those keep their bytes.
RUN_TIME_OPERAND = {"dynamic_iota": "output_shape", "dynamic_reshape": "output_shape",
                    "dynamic_broadcast_in_dim": "output_dimensions", "dynamic_pad": "edge_padding_low",
                    "dynamic_gather": "slice_sizes", "dynamic_conv": "padding"}


def _as_argument(mlir: str, name: str, t: TensorType) -> str:
    """The program with literal operand `name` (a stablehlo.constant in
    @main) turned into @main's last argument."""
    line = re.search(rf'^  %{name} = "stablehlo\.constant"\(\).*\n', mlir, re.M)
    head = re.search(r"func\.func @main\((.*?)\) ->", mlir)
    args = head.group(1)
    k = args.count("%arg")
    mlir = mlir.replace(line.group(0), "", 1)
    mlir = mlir.replace(head.group(0), f"func.func @main({args + ', ' if args else ''}%arg{k}: {t.mlir}) ->", 1)
    return re.sub(rf"%{name}\b", f"%arg{k}", mlir)


def _broken(name: str, values_: np.ndarray, d: Drawn) -> tuple[np.ndarray, str]:
    """Values of the run-time operand that break what the spec defers to run
    time: the first entry one more (a shape, a padding the result does not
    have), or, for slice sizes, one more than the operand's dimension."""
    v = np.array(values_, copy=True)
    if name == "slice_sizes":
        v[0] = int(d.inst.operands["operand"].shape[0]) + 1
        return v, f"slice_sizes[0] = {int(v[0])} past the operand's dimension (C12 at run time)"
    # one more is one more result element along that axis — but a convolution's low padding one more may
    # leave its window count as it was: a stride more is one window more
    v.reshape(-1)[0] += int(d.inst.attributes["window_strides"][0]) if name == "padding" else 1
    return v, f"{name} {v.reshape(-1).tolist()} does not give the result's shape"


def _at_run_time(spec, valid: list, seed: int, expect_fn) -> list:
    """RUN_TIME_OPERAND's two cases, on the first valid case whose run-time
    operand is not empty."""
    name = RUN_TIME_OPERAND.get(spec.mnemonic)
    for d, et in valid:
        if name is None or name not in d.consts or d.consts[name].size == 0:
            continue
        t, fits = d.inst.operands[name], d.consts[name]
        mlir = _as_argument(emit.program(spec, d.inst, None, d.consts), name, t)
        bad, why = _broken(name, fits, d)
        out = []
        for kind, values_, note in (("value", fits, f"{name} an @main argument, its values the result's ({d.note})"),
                                    ("survey", bad, f"{why}: undefined (spec.md Dynamism) — {d.note}")):
            inst = _unknown(spec, d.inst, name)
            c = quantized.stream_case(spec, inst, d.args + [values_], kind, seed, note, et.name, expect_fn,
                                      mlir=mlir, more_arguments=(t,))
            if c is not None:
                out.append(c)
        return out
    return []


def _invalid(spec, valid: list, seed: int, expect_fn) -> list:
    """One invalid case per constraint: the first mutation, over the valid
    cases in order, that breaks that constraint alone and that the oracle's
    reader names."""
    out, done = [], set()
    for d, et in valid:
        for label, what, m in MUTATIONS[spec.mnemonic](spec, d):
            if label in done or m is None or spec.violated(m.inst) != [label]:
                continue
            c = _case(spec, m.inst, m.args, m.consts, "invalid", seed, f"violates {label} ({what}; {d.note})",
                      et.name, expect_fn, violates=label)
            if c is not None:
                out.append(c)
                done.add(label)
    return out


def _unknown(spec, inst, name: str):
    """`inst` with literal operand `name`'s values not known (an @main argument)."""
    out = spec.instance(dict(inst.operands), dict(inst.attributes), dict(inst.results), dict(inst.regions))
    out.known_values = {k: v for k, v in inst.known_values.items() if k != name}
    return out


def _late_invalid(spec, valid: list, seed: int, expect_fn) -> list:
    """LATE_MUTATIONS' invalid cases, one per constraint: the mutation as a
    constant program where it breaks its constraint alone there, else with
    the shape operand an @main argument (RUN_TIME_OPERAND) where that does."""
    mutations, name = LATE_MUTATIONS.get(spec.mnemonic), RUN_TIME_OPERAND.get(spec.mnemonic)
    out, done = [], set()
    for d, et in valid if mutations else ():
        for label, what, m in mutations(spec, d):
            if label in done:
                continue
            note = f"violates {label} ({what}; {d.note})"
            if spec.violated(m.inst) == [label]:
                c = _case(spec, m.inst, m.args, m.consts, "invalid", seed, note, et.name, expect_fn, violates=label)
            elif spec.violated(_unknown(spec, m.inst, name)) == [label]:
                t = m.inst.operands[name]
                mlir = _as_argument(emit.program(spec, m.inst, None, m.consts), name, t)
                c = quantized.stream_case(spec, _unknown(spec, m.inst, name), m.args + [m.consts[name]], "invalid",
                                          seed, f"{note}, {name} an @main argument", et.name, expect_fn,
                                          violates=label, mlir=mlir, more_arguments=(t,))
            else:
                continue
            if c is not None:
                out.append(c)
                done.add(label)
    return out


def _composite_cases(spec, seed: int, rng, expect_fn) -> list:
    out, first = [], None
    for note, name, attrs_text, version, ins, outs, fns in _composites():
        d, present, functions = _composite_drawn(spec, note, name, attrs_text, version, ins, outs, fns, rng)
        mlir = _module(spec, d, present, functions)
        c = _case(spec, d.inst, d.args, {}, "value", seed, note, ins[0].element_type.name, expect_fn, mlir=mlir)
        if c is not None:
            out.append(c)
        first = first or (d, present, functions, ins[0].element_type.name)
    d, present, functions, dtype = first
    for label, what, m, text in _composite_mutations(spec, d, functions):
        if spec.violated(m.inst) != [label]:
            continue
        c = _case(spec, m.inst, m.args, {}, "invalid", seed, f"violates {label} ({what})", dtype, expect_fn,
                  violates=label, mlir=_module(spec, m, present, text))
        if c is not None:
            out.append(c)
    note, name, attrs_text, version, ins, outs, fns = _quoted_composite()
    d, present, functions = _composite_drawn(spec, note, name, attrs_text, version, ins, outs, fns, rng)
    c = _case(spec, d.inst, d.args, {}, "value", seed, note, ins[0].element_type.name, expect_fn,
              mlir=_module(spec, d, present, functions))
    if c is not None:
        out.append(c)
    # The Inputs table's (I3) "dictionary", broken: an integer for composite_attributes (no constraint
    # names it; a verifier refuses it) — the last composite case.
    note, name, _, version, ins, outs, fns = _composites()[0]
    d, present, functions = _composite_drawn(spec, note, name, "5 : i64", version, ins, outs, fns, rng)
    if spec.breaks_only(d.inst, "composite_inputs"):
        c = _case(spec, d.inst, d.args, {}, "invalid", seed, "violates composite_inputs (composite_attributes "
                  "an integer, 5 : i64, where the Inputs table asks for a dictionary)", ins[0].element_type.name,
                  expect_fn, violates="composite_inputs", mlir=_module(spec, d, present, functions))
        if c is not None:
            out.append(c)
    return out
