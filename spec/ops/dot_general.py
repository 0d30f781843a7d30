"""dot_general — dot products between slices of `lhs` and `rhs` (spec section "dot_general").

Semantics: `result[result_index]` is the seed's `reduce` of
`multiply(lhs_slice, rhs_slice)` over the contracting dimensions with init
0 and body `add`: for every allowed schedule (spec/schedule.py)

* floats: `dot_range` of the (lhs, rhs) pairs of the contracting slices —
  the exact Σ aᵢbᵢ and a rigorous bound for products rounded (or exact, in a
  wider accumulator) summed in any order, in the result's format (which
  may be wider than the operands': "The result's element type" below); a
  NaN anywhere, or 0 × ∞, is NaN;
* complex: `complex_dot_range`, per component;
* integers: the exact Σ aᵢbᵢ — integer add and multiply are associative
  modulo 2^n, so no schedule matters; the oracle wraps it into the result type,
  labelled (the seed's Errors clause makes overflow implementation-defined);
* i1: `add` and `multiply` on booleans are the seed's logical or/and, so
  an OR of ANDs.

A zero-sized contracting slice sums nothing: the init value 0 (false).

The result is bilinear in (lhs, rhs), and declared so (`bilinear_form`:
K products per element, the sums as one float64 batched matrix product):
the oracle carries the ranges of approximate operands through it by
interval arithmetic (oracle/bilinear.py), not by moving each operand to
one end of its range — where the other operand has mixed signs, the
extremes of Σ aᵢbᵢ take some aᵢ low and others high.

Readings:
* precision_config.  The seed calls DEFAULT/HIGH/HIGHEST underspecified
  ("the tradeoff between speed and accuracy for computations on
  accelerator backends").  We state one bound: the full-precision one of
  the seed's own products and sum, which CPU backends meet.  An
  accelerator that trades accuracy at DEFAULT or HIGH (TF32 or bf16
  passes) can fail it; so every float or complex case whose precision is
  not HIGHEST for both operands says so in its expectation: each element
  is offered under the label "full precision (precision_config …)" with
  that reason as its `why` (`at_precision`).  Integer and i1 dots are exact
  whatever the precision.
* A program that leaves precision_config out states no precision: read as
  [DEFAULT, DEFAULT], as the pinned dialect and XLA read it (C12 then
  holds).  The pinned verifier also accepts 0 or 1 entries; the seed's C12
  demands 2.
* The result's element type.  No constraint of the seed names it (C13 is
  about its shape only; C1 ties lhs to rhs), and its Semantics reduce
  values of element_type(lhs) with init 0.  StableHLO v1.20 states it:
  for non-quantized operands it has no clause on element_type(result)
  (C13 there is C1 here; C20 is the hybrid-quantized one), and its
  Semantics write `dot_product = reduce(inputs=[multiply(lhs_slice,
  rhs_slice)], init_values=[constant(0, element_type(result))], …)` — a
  reduce whose body computes in element_type(result), which reduce's C6
  allows only where `is_promotable(element_type(inputs), Ei)`: the same
  kind (integer, float, complex, boolean) and at least as many bits.  So
  C13 (the one constraint the Outputs table lists for `result`) is encoded
  as type(result): the shape it states, and an element type lhs's is
  promotable to (`promotable`).  bf16 × bf16 → f32, f16 → f32,
  i8 × i8 → i32 (JAX's `preferred_element_type`) are valid; f32 → f16
  (narrower), si8 → f32 and f32 → si32 (another kind) are not.
* Accumulating in the result type.  v1.20's Semantics multiply in lhs's
  type and promote the products; read literally an i8 × i8 → i32 dot
  would wrap each product into i8 before summing.  StableHLO's
  maintainers read the result type as the accumulation type
  (openxla/stablehlo#2953: the interpreter accumulates i8 × i8 → i32 in
  i32, "aligns with the spec"), and XLA computes so too: the
  operands are converted to element_type(result) — exactly where the
  result type holds every operand value (`types.holds_every_value`:
  bf16, f16 → f32; integers, whose exact sum wraps the same either way),
  rounded to nearest even where it does not (f16 ↔ bf16, f8E4M3FN ↔
  f8E5M2: the spec's `convert`) — and the products and sums are the
  result type's: `dot_range` in the result's format.
* Type inference: a result element type other than lhs's cannot be
  derived from the operands (stablehlo#600: "load-bearing result
  types"); `infer` takes it from the program where the program states
  one C13 accepts, else lhs's (what the generators and check-spec infer).
  check-spec proves the dims and rank unique, not the element type
  (`OpSpec.result_type_stated`).

* The algorithm (v1.20 I8–I14, C21–C24: `dot_general_c21` … `c24`, in
  v1.20's numbering).  Where a program states one, it and not the result
  type says how float operands are rounded and summed: each element is
  spec/ops/dot_algorithm.py's bound (its docstring proves it, per preset),
  precision_config (DEFAULT by C21) carries no label.  Its cases are
  hand-built on a stream after every other (`algorithm_cases`), so the
  seed's draws never see it.

Findings:
* C8 and C9 quantify "for all `i`" but index with `d`
  (`rhs_batching_dimensions[d]`): `i` is meant.
* The result's element type is left unconstrained by the seed (above);
  v1.20's `is_promotable` falls through to `return false` for two
  booleans, which would make every i1 dot invalid: a boolean is read as
  promotable to itself.
"""
from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np

from ..dsl import (ANY, Accumulating, Attribute, EnumListAttr, Group, I64ArrayAttr, ImplDefined, Not, OpSpec, Operand,
                   Result, all_of, at, contains, element_type, in_range, is_unique, rank, shape, size)
from ..dsl.quantization import Quantization
from ..quantized import (expressed_type, is_per_axis_quantized, is_per_tensor_quantized, is_quantized,
                         quantization_dimension, storage_type)
from ..exercise import Corner, Exercise
from .. import bounds, schedule
from ..bounds import values
from ..schedule import complex_dot_range, dot_range
from ..dft import round_fraction
from ..types import TensorType, exact_values, holds_every_value
from ..types import element_type as element_type_named
from .reduce import kept_dims
from . import dot_algorithm
from .dot_algorithm import KINDS as ALGORITHM_KINDS

GROUP = "dot_dimension_numbers"
PRECISIONS = ("DEFAULT", "HIGH", "HIGHEST")
PRECISION_WHY = ('precision_config {p}: the seed leaves its accuracy underspecified ("at the moment, the semantics '
                 'of these enum values is underspecified"; DEFAULT and HIGH may trade accuracy on accelerators) — '
                 "judged at full precision, the seed's products and sum in any order, which CPU backends meet")


# --------------------------------------------------------------------------
# Constraints
# --------------------------------------------------------------------------

def _uses_quantized(op) -> bool:
    """Any quantized tensor among lhs, rhs and the result (when the instance states one yet: `infer`
    runs before it is)."""
    result = (getattr(op, "results", None) or {}).get("result")
    return any(is_quantized(t) for t in (op.lhs, op.rhs, result) if t is not None)


def dot_general_c1(op):
    """(C1) `lhs` and `rhs` have the same element type.  v1.20 (C13): "if the
    operation uses non-quantized tensors" — C14–C20 take the quantized ones."""
    return True if _uses_quantized(op) else element_type(op.lhs) == element_type(op.rhs)


def dot_general_c2(op):
    """(C2) size(`lhs_batching_dimensions`) $=$ size(`rhs_batching_dimensions`)."""
    return size(op.lhs_batching_dimensions) == size(op.rhs_batching_dimensions)


def dot_general_c3(op):
    """(C3) size(`lhs_contracting_dimensions`) $=$
  size(`rhs_contracting_dimensions`)."""
    return size(op.lhs_contracting_dimensions) == size(op.rhs_contracting_dimensions)


def dot_general_c4(op):
    """(C4) `lhs_batching_dimensions` and `lhs_contracting_dimensions` combined are
  unique."""
    return is_unique(tuple(op.lhs_batching_dimensions) + tuple(op.lhs_contracting_dimensions))


def dot_general_c5(op):
    """(C5) `rhs_batching_dimensions` and `rhs_contracting_dimensions` combined are
  unique."""
    return is_unique(tuple(op.rhs_batching_dimensions) + tuple(op.rhs_contracting_dimensions))


def dot_general_c6(op):
    """(C6) 0 $\\le$ `lhs_batching_dimensions[i]` $\\lt$ rank(`lhs`) for all `i`
  $\\in$ [0, size(`lhs_batching_dimensions`))."""
    return all_of(in_range(d, 0, rank(op.lhs)) for d in op.lhs_batching_dimensions)


def dot_general_c7(op):
    """(C7) 0 $\\le$ `lhs_contracting_dimensions[i]` $\\lt$ rank(`lhs`) for all `i`
  $\\in$ [0, size(`lhs_contracting_dimensions`))."""
    return all_of(in_range(d, 0, rank(op.lhs)) for d in op.lhs_contracting_dimensions)


def dot_general_c8(op):
    """(C8) 0 $\\le$ `rhs_batching_dimensions[d]` $\\lt$ rank(`rhs`) for all `i`
  $\\in$ [0, size(`rhs_batching_dimensions`)).

    `[d]` read as `[i]` (the quantifier's variable: a typo)."""
    return all_of(in_range(d, 0, rank(op.rhs)) for d in op.rhs_batching_dimensions)


def dot_general_c9(op):
    """(C9) 0 $\\le$ `rhs_contracting_dimensions[d]` $\\lt$ rank(`rhs`) for all `i`
  $\\in$ [0, size(`rhs_contracting_dimensions`)).

    `[d]` read as `[i]` (the quantifier's variable: a typo)."""
    return all_of(in_range(d, 0, rank(op.rhs)) for d in op.rhs_contracting_dimensions)


def dot_general_c10(op):
    """(C10) dim(`lhs`, `lhs_batching_dimensions[i]`) $=$
  dim(`rhs`, `rhs_batching_dimensions[i]`) for all `i` $\\in$ [0,
  size(`lhs_batching_dimensions`)).

    Pairs beyond the shorter list are C2's; an entry naming no axis is C6's
    or C8's (it reads a size of 0 here, as `at` does in z3)."""
    return all_of(at(shape(op.lhs), a) == at(shape(op.rhs), b)
                  for a, b in zip(op.lhs_batching_dimensions, op.rhs_batching_dimensions))


def dot_general_c11(op):
    """(C11) dim(`lhs`, `lhs_contracting_dimensions[i]`) $=$
  dim(`rhs`, `rhs_contracting_dimensions[i]`) for all `i` $\\in$ [0,
  size(`lhs_contracting_dimensions`)).

    As C10, for the contracting pairs."""
    return all_of(at(shape(op.lhs), a) == at(shape(op.rhs), b)
                  for a, b in zip(op.lhs_contracting_dimensions, op.rhs_contracting_dimensions))


def dot_general_c12(op):
    """(C12) size(`precision_config`) $=$ 2.

    A program that leaves precision_config out is read as [DEFAULT, DEFAULT]
    (module docstring)."""
    return op.precision_config is None or size(op.precision_config) == 2


def dot_general_c13(op):
    """(C13) shape(`result`) $=$ dim(`lhs`, `lhs_batching_dimensions`) +
  dim(`lhs`, `lhs_result_dimensions`) + dim(`rhs`, `rhs_result_dimensions`),
  and is_promotable(element_type(`lhs`), element_type(`result`)).

    The element-type half is StableHLO v1.20's (module docstring): no
    clause of the seed names the result's element type; v1.20's Semantics
    reduce in element_type(result), which its reduce C6 allows only where
    is_promotable(element_type(lhs), element_type(result))."""
    want = result_type(op)
    if want is None or rank(op.result) != rank(want):
        return False
    promotes = True if _uses_quantized(op) else promotable(element_type(op.lhs), element_type(op.result))
    return all_of([promotes] + [d == e for d, e in zip(shape(op.result), shape(want))])


# v1.20's clauses "if the operation uses quantized tensors" (C14–C20), checked on instances holding
# one (`OpSpec.quantization`).  Each holds vacuously where the types it names are not there (a
# non-quantized rhs has no zero points): C14 is what refuses a float rhs beside a quantized lhs, so
# that every clause can be broken alone.

def dot_general_c14(op):
    """(v1.20 C14) `is_quantized(lhs) = is_quantized(result) and is_quantized(rhs)`.

    Read `(is_quantized(lhs) = is_quantized(result)) and is_quantized(rhs)`:
    `=` binds tighter than `and`, as StableHLO's verifier reads it ("rhs
    should be quantized … and is_quantized(lhs)=is_quantized(result)
    should hold").  The other grouping, `lhs = (result and rhs)`, would
    admit a float lhs and rhs with a quantized result, for which the
    Semantics define nothing (docs/spec-findings.md); the two agree on every
    other combination.  Checked only where the op uses quantized tensors."""
    return (is_quantized(op.lhs) == is_quantized(op.result)) and is_quantized(op.rhs)


def dot_general_c15(op):
    """(v1.20 C15) `zero_points(rhs) = 0`."""
    return not is_quantized(op.rhs) or all_of(z == 0 for z in op.rhs.element_type.zero_points)


def dot_general_c16(op):
    """(v1.20 C16) If `is_per_axis_quantized(rhs)`, then `quantization_dimension(rhs)` not in
    `rhs_contracting_dimensions`."""
    # dual mode: the quantization dimension may be a z3 integer (spec/quantized_checks.py), which Python's
    # `in` would compare structurally
    return (not is_per_axis_quantized(op.rhs)
            or Not(contains(tuple(op.rhs_contracting_dimensions), quantization_dimension(op.rhs))))


def dot_general_c17(op):
    """(v1.20 C17) If `is_quantized(lhs)`: `storage_type(lhs) = storage_type(rhs)`."""
    return not (is_quantized(op.lhs) and is_quantized(op.rhs)) or storage_type(op.lhs) == storage_type(op.rhs)


def dot_general_c18(op):
    """(v1.20 C18) If `is_quantized(lhs)`: `expressed_type(lhs) = expressed_type(rhs) = expressed_type(result)`."""
    ts = (op.lhs, op.rhs, op.result)
    return not all(is_quantized(t) for t in ts) or len({expressed_type(t) for t in ts}) == 1


def dot_general_c19(op):
    """(v1.20 C19) If `is_quantized(lhs)` and `is_per_tensor_quantized(rhs)`, then
    `is_per_tensor_quantized(result)`."""
    return (not (is_quantized(op.lhs) and is_per_tensor_quantized(op.rhs) and is_quantized(op.result))
            or is_per_tensor_quantized(op.result))


def dot_general_c20(op):
    """(v1.20 C20) If `!is_quantized(lhs)` (the hybrid form: float lhs, quantized rhs):
    `element_type(lhs) = expressed_type(rhs) = element_type(result)`."""
    if is_quantized(op.lhs) or not is_quantized(op.rhs):
        return True
    return element_type(op.lhs) == expressed_type(op.rhs) == element_type(op.result)


# v1.20's clauses on the `algorithm` (I8–I14), in v1.20's numbering (the seed's labels end at C13 and the
# quantized ones are C14–C20, so these take their own numbers): each holds where the algorithm is empty
# (`is_empty_algorithm`, every field None), as v1.20's "If !is_empty_algorithm(…)" reads.  Numbers may be
# z3 integers (the comparisons are the helpers'); precision_config is structure.

def dot_general_c21(op):
    """(v1.20 C21) `precision_config... = DEFAULT`, if the algorithm is not empty
    (is_empty_algorithm of its seven fields; v1.20's guard lists them with a comma missing before
    allow_imprecise_accumulation).

    A program that leaves precision_config out is read as [DEFAULT, DEFAULT] (C12)."""
    if dot_algorithm.is_empty(op) or op.precision_config is None:
        return True
    return all(p == "DEFAULT" for p in op.precision_config)


def dot_general_c22(op):
    """(v1.20 C22) `0 < lhs_component_count`, if the algorithm is not empty.

    A count left out of a non-empty algorithm (the reader refuses a partly written group) holds vacuously."""
    return dot_algorithm.is_empty(op) or op.lhs_component_count is None or 0 < op.lhs_component_count


def dot_general_c23(op):
    """(v1.20 C23) `0 < rhs_component_count`, if the algorithm is not empty."""
    return dot_algorithm.is_empty(op) or op.rhs_component_count is None or 0 < op.rhs_component_count


def dot_general_c24(op):
    """(v1.20 C24) `0 < num_primitive_operations`, if the algorithm is not empty."""
    return dot_algorithm.is_empty(op) or op.num_primitive_operations is None or 0 < op.num_primitive_operations


def promotable(x, y) -> bool:
    """v1.20's `is_promotable(x, y)` on non-quantized element types: x and y
    of one kind — integers (signed or unsigned), floats, complex — and y at
    least as wide (complex: its components).  Two booleans: promotable (the
    pseudo-code's fall-through `return false` would forbid i1 to i1, the
    seed's own i1 dot: a finding)."""
    if x == y:
        return True
    if (x.is_integer and y.is_integer) or (x.is_float and y.is_float):
        return x.bits <= y.bits
    if x.is_complex and y.is_complex:
        return x.component.bits <= y.component.bits
    return False


def accumulation_type(op):
    """element_type(result) — what the products are summed in (module
    docstring) — where the instance states a result C13 accepts; lhs's
    otherwise."""
    et = op.lhs.element_type
    stated = (getattr(op, "results", None) or {}).get("result")
    if isinstance(stated, TensorType) and promotable(et, stated.element_type):
        return stated.element_type
    return et


def result_type(op) -> TensorType | None:
    """`dim(lhs, lhs_batching_dimensions) + dim(lhs, lhs_result_dimensions) +
    dim(rhs, rhs_result_dimensions)` of lhs's element type; None where the
    dimension lists name more axes than a tensor has (C4–C9 are broken
    then).  Entries may be symbolic: `kept_dims` is an `If` over the axes
    they may name."""
    lhs_named = tuple(op.lhs_batching_dimensions) + tuple(op.lhs_contracting_dimensions)
    rhs_named = tuple(op.rhs_batching_dimensions) + tuple(op.rhs_contracting_dimensions)
    if len(lhs_named) > rank(op.lhs) or len(rhs_named) > rank(op.rhs):
        return None
    batch = tuple(at(shape(op.lhs), d) for d in op.lhs_batching_dimensions)
    dims = batch + kept_dims(op.lhs, lhs_named) + kept_dims(op.rhs, rhs_named)
    return TensorType(dims, op.lhs.element_type)


def infer(op):
    """C13's shape; the element type the program states where C13 accepts
    it (a promotion of lhs's, which no operand determines), else lhs's."""
    if _uses_quantized(op):   # v1.20: the program states the quantized result's type (scales, storage)
        return {}
    t = result_type(op)
    if t is None:
        raise ValueError("dimension numbers name more axes than an operand has")
    return {"result": TensorType(t.shape, accumulation_type(op))}


# --------------------------------------------------------------------------
# Semantics
# --------------------------------------------------------------------------

def dot_answer(pairs: list, et):
    """The element answer of Σ aᵢ·bᵢ over `pairs` of exact values of `et`
    (module docstring): every schedule of the seed's reduce."""
    if et.is_bool:
        return any(a and b for a, b in pairs)
    if et.is_integer:
        return sum(a * b for a, b in pairs)
    if et.is_complex:
        return complex_dot_range(pairs, et.component.format)
    return dot_range(pairs, et.format)


def at_precision(op, answer, et):
    """A float or complex answer offered under the precision it is judged at
    (module docstring): full precision, labelled, unless both operands ask
    for HIGHEST.  Convolution reads its precision_config the same way."""
    if not (et.is_float or et.is_complex):
        return answer
    config = tuple(op.precision_config) if op.precision_config is not None else ("DEFAULT", "DEFAULT")
    if config and all(p == "HIGHEST" for p in config):
        return answer
    p = "[" + ", ".join(config) + "]"
    return ImplDefined({f"full precision (precision_config {p})": answer}, why=PRECISION_WHY.format(p=p))


def probes(et) -> dict:
    """One answer of each whole-array kind as `dot_answer` writes it
    (spec/bounds.py: the oracle reads the labels from them)."""
    zero = False if et.is_bool else (0 if et.is_integer else 0.0)
    return {bounds.RANGE: bounds.range_probe(), bounds.VALUE: zero,
            bounds.OVER: schedule.any_value(schedule.OVERFLOW, Fraction(0))}


def whole(A, B, et, element, probes_=None):
    """`dot_answer` of every (g, m, n) pairing A[g, m, :] with B[g, :, n], as
    whole arrays (spec/bounds.py: the same answers, stated by enclosures
    and exact integer arithmetic); None where only the per-element route
    serves (complex types, a float format without a wider working type)."""
    probes_ = probes_ or probes(et)
    if et.is_float:
        return bounds.float_dot(A, B, et.format, element, probes_)
    if et.is_integer or et.is_bool:
        return bounds.integer_dot(A, B, et, element, probes_)
    return None


def arrays(op, lhs, rhs):
    """`result[result_index] = dot_product` of the seed: lhs and rhs
    transposed to batching + result + contracting dimensions, each result
    index pairs a contracting slice of each.  Real and integer types are
    stated on whole arrays (`whole`), the per-element `dot_answer` standing
    behind every element the enclosures leave; complex element by element.
    Operands are read in their type and summed in the result's
    (`accumulation_type`, `operand_values`)."""
    et, rt = op.lhs.element_type, accumulation_type(op)
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    lb, lc, lr, rb, rc, rr = _dims(op, lhs.ndim, rhs.ndim)
    alg = dot_algorithm.of(op)
    if alg is not None and et.is_float:
        return [_algorithm_arrays(alg, lhs, rhs, et, op.result.element_type, lb, lc, lr, rb, rc, rr)]
    if not rt.is_complex:
        got = _whole(op, lhs, rhs, et, rt, lb, lc, lr, rb, rc, rr)
        if got is not None:
            return [got]
    lx = element_objects(lhs, et, rt).reshape(lhs.shape).transpose(lb + lr + lc)
    rx = element_objects(rhs, et, rt).reshape(rhs.shape).transpose(rb + rr + rc)
    n_b = len(lb)
    batch = lx.shape[:n_b]
    l_res, r_res = lx.shape[n_b:n_b + len(lr)], rx.shape[n_b:n_b + len(rr)]
    k = int(np.prod(lx.shape[n_b + len(lr):], dtype=np.int64))
    lx = lx.reshape(batch + l_res + (k,))
    rx = rx.reshape(batch + r_res + (k,))
    out = np.empty(batch + l_res + r_res, dtype=object)
    for idx in np.ndindex(*out.shape):
        b, i, j = idx[:n_b], idx[n_b:n_b + len(lr)], idx[n_b + len(lr):]
        pairs = list(zip(lx[b + i], rx[b + j]))
        out[idx] = at_precision(op, dot_answer(pairs, rt), rt)
    return [out]


def _algorithm_arrays(alg, lhs, rhs, et, result, lb, lc, lr, rb, rc, rr):
    """The result where the program states a non-empty `algorithm` (v1.20):
    each element the algorithm's bound (`dot_algorithm.element`) on the
    operands' exact values — the algorithm, not the result type, says how
    they are rounded and summed; precision_config is then DEFAULT (C21) and
    carries no label.  Whole arrays where `dot_algorithm.whole` serves (the
    same bits as element by element: the enclosures stand behind them)."""
    A, B, shape = _matrices(values(lhs, et), values(rhs, et), lb, lc, lr, rb, rc, rr)
    G, M, K = A.shape
    N = B.shape[2]

    def element(i):
        g, rest = divmod(i, M * N)
        m, j = divmod(rest, N)
        return dot_algorithm.element(list(zip(A[g, m, :].tolist(), B[g, :, j].tolist())), alg)
    got = (dot_algorithm.whole(A, B, alg, et.format, result.format, element, probes(result)) if result.is_float
           else None)
    if got is not None:
        got.shape = shape
        return got
    out = np.empty(G * M * N, dtype=object)
    for i in range(len(out)):
        out[i] = element(i)
    return out.reshape(shape)


def operand_values(array, et, rt) -> np.ndarray:
    """An operand's exact values (`bounds.values`) as values of the result
    type `rt` they are summed in: themselves where `rt` holds every value of
    `et` (a type itself; integers, whose exact sum wraps alike whether or
    not each operand is wrapped first; bf16, f16 → f32), else each rounded
    to nearest even into `rt` — the spec's `convert` (f16 ↔ bf16, f8E4M3FN
    ↔ f8E5M2), a value past `rt`'s range ±inf or, where `rt` has no
    infinity, NaN."""
    v = values(array, et)
    if not (et.is_float and rt.is_float) or holds_every_value(et, rt):
        return v
    fmt = rt.format
    out = np.empty(v.shape, dtype=np.float64)
    flat, dst = v.reshape(-1), out.reshape(-1)
    for i, x in enumerate(flat.tolist()):
        if x == 0 or math.isnan(x):
            dst[i] = x
        else:
            r = x if math.isinf(x) else round_fraction(Fraction(x), fmt, "near")
            dst[i] = r if fmt.has_inf or not math.isinf(r) else float(fmt.decode(fmt.overflow_bits(r < 0)))
    return out


def element_objects(array, et, rt) -> np.ndarray:
    """`operand_values` as a flat object array of exact Python values (the
    per-element route's), NaN payloads kept where nothing converts."""
    a = np.asarray(array)
    if et.is_float and rt.is_float and not holds_every_value(et, rt):
        return np.array(operand_values(a, et, rt).reshape(-1).tolist(), dtype=object)
    return np.array(exact_values(a, et), dtype=object)


def _matrices(lx, rx, lb, lc, lr, rb, rc, rr):
    """lhs and rhs values laid out for a batched matrix product: A (G, M, K)
    and B (G, K, N), the result element of batch g, lhs result index m and
    rhs result index n pairing A[g, m, :] with B[g, :, n]; and the result's
    shape (batching + lhs result + rhs result dimensions)."""
    lx, rx = lx.transpose(lb + lr + lc), rx.transpose(rb + rr + rc)
    n_b = len(lb)
    batch = lx.shape[:n_b]
    l_res, r_res = lx.shape[n_b:n_b + len(lr)], rx.shape[n_b:n_b + len(rr)]
    G = int(np.prod(batch, dtype=np.int64))
    M, N = int(np.prod(l_res, dtype=np.int64)), int(np.prod(r_res, dtype=np.int64))
    K = int(np.prod(lx.shape[n_b + len(lr):], dtype=np.int64))
    return lx.reshape(G, M, K), rx.reshape(G, N, K).transpose(0, 2, 1), batch + l_res + r_res


def _dims(op, lhs_rank: int, rhs_rank: int) -> tuple:
    """(lb, lc, lr, rb, rc, rr): batching, contracting and result dimensions of lhs and rhs."""
    lb, lc = [int(d) for d in op.lhs_batching_dimensions], [int(d) for d in op.lhs_contracting_dimensions]
    rb, rc = [int(d) for d in op.rhs_batching_dimensions], [int(d) for d in op.rhs_contracting_dimensions]
    lr = [d for d in range(lhs_rank) if d not in lb and d not in lc]
    rr = [d for d in range(rhs_rank) if d not in rb and d not in rc]
    return lb, lc, lr, rb, rc, rr


def bilinear_form(op):
    """`Accumulating.bilinear_form`: each result element is Σ lhs·rhs over
    the contracting slices, K = the contracting dimensions' sizes' product
    terms; `product` takes those sums of float64 arrays by one batched
    float64 matrix product (BLAS), as `_whole` does for the exact value."""
    if dot_algorithm.of(op) is not None:
        return None   # the algorithm's bound is not the form's γ of the result type: propagation takes corners
    K = int(np.prod([int(op.lhs.shape[int(d)]) for d in op.lhs_contracting_dimensions], dtype=np.int64))

    def product(x, y):
        x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        A, B, shape = _matrices(x, y, *_dims(op, x.ndim, y.ndim))
        return np.matmul(A, B).reshape(shape)
    return K, product


def _whole(op, lhs, rhs, et, rt, lb, lc, lr, rb, rc, rr):
    A, B, shape = _matrices(operand_values(lhs, et, rt), operand_values(rhs, et, rt), lb, lc, lr, rb, rc, rr)
    G, M, K = A.shape
    N = B.shape[2]

    def element(i):
        g, rest = divmod(i, M * N)
        m, j = divmod(rest, N)
        return dot_answer(list(zip(A[g, m, :].tolist(), B[g, :, j].tolist())), rt)

    got = whole(A, B, rt, element)
    if got is None:
        return None
    got.shape = shape
    return got.wrapped(lambda answer: at_precision(op, answer, rt))


# --------------------------------------------------------------------------
# Exercise
# --------------------------------------------------------------------------

def _batching_lengths(op):
    m = min(rank(op.lhs), rank(op.rhs))
    return tuple(k for k in (0, 1, 2) if k <= m)


def _contracting_lengths(op):
    b = len(op.lhs_batching_dimensions) if op.lhs_batching_dimensions is not None else 0
    m = min(rank(op.lhs), rank(op.rhs)) - b
    return tuple(k for k in (1, 0, 2) if k <= m) or (0,)


def _lengths(b: int, c: int) -> dict:
    return {"lengths": {"lhs_batching_dimensions": b, "lhs_contracting_dimensions": c}}


def _dim(t, d):
    return at(shape(t), d)


CORNERS = (
    Corner("matrix multiply", (2, 2), lambda op: [op.lhs_contracting_dimensions[0] == 1,
                                                  op.rhs_contracting_dimensions[0] == 0], layout=_lengths(0, 1)),
    Corner("vector dot: a rank-0 result", (1, 1), lambda op: [], layout=_lengths(0, 1)),
    Corner("outer product: no contracting dimension", (2, 1), lambda op: [], layout=_lengths(0, 0)),
    Corner("batching only: element-wise products", (2, 2), lambda op: [], layout=_lengths(2, 0)),
    Corner("batched matmul, batching dimension not leading", (3, 3),
           lambda op: [op.lhs_batching_dimensions[0] != 0, op.rhs_batching_dimensions[0] == 2,
                       op.rhs_contracting_dimensions[0] == 0], layout=_lengths(1, 1)),
    Corner("two batching dimensions listed in descending order", (3, 3),
           lambda op: [op.lhs_batching_dimensions[0] > op.lhs_batching_dimensions[1],
                       op.rhs_batching_dimensions[0] < op.rhs_batching_dimensions[1]], layout=_lengths(2, 1)),
    Corner("two contracting dimensions in opposite orders", (3, 3),
           lambda op: [op.lhs_contracting_dimensions[0] > op.lhs_contracting_dimensions[1],
                       op.rhs_contracting_dimensions[0] < op.rhs_contracting_dimensions[1],
                       _dim(op.lhs, op.lhs_contracting_dimensions[0]) != _dim(op.lhs, op.lhs_contracting_dimensions[1])],
           layout=_lengths(0, 2)),
    Corner("contracting dimension before the batching dimension in rhs", (3, 3),
           lambda op: [op.rhs_contracting_dimensions[0] < op.rhs_batching_dimensions[0],
                       op.lhs_contracting_dimensions[0] < op.lhs_batching_dimensions[0]], layout=_lengths(1, 1)),
    Corner("zero-sized contracting dimension", (2, 2),
           lambda op: [_dim(op.lhs, op.lhs_contracting_dimensions[0]) == 0]
           + [d > 0 for d in op.result.shape], layout=_lengths(0, 1)),
    Corner("zero-sized contracting dimension with a batch", (3, 2),
           lambda op: [_dim(op.lhs, op.lhs_contracting_dimensions[0]) == 0]
           + [d > 0 for d in op.result.shape], layout=_lengths(1, 1)),
    Corner("long contracting dimension (accumulation)", (1, 2),
           lambda op: [_dim(op.lhs, op.lhs_contracting_dimensions[0]) >= 16], layout=_lengths(0, 1), max_dim=24),
    Corner("long contracting dimension, two results", (2, 1),
           lambda op: [_dim(op.rhs, op.rhs_contracting_dimensions[0]) >= 12]
                      + [d >= 2 for d in op.result.shape], layout=_lengths(0, 1), max_dim=20),
)


def _built_corners(spec, skels, rng):
    """precision_config other than the skeletons' [DEFAULT, DEFAULT] on the
    float and complex types it is about (skeletons vary it on i1 only: the
    covering set of a table this large), by hand: a 2x3 · 3x2 matmul."""
    by_type = {s.operand_types[0]: s for s in skels if s.operand_types[0] == s.operand_types[1]}
    out = []
    for et, config in (("f32", ("HIGHEST", "HIGHEST")), ("bf16", ("HIGH", "HIGH")), ("f16", ("HIGHEST", "DEFAULT")),
                       ("complex<f32>", ("HIGHEST", "HIGHEST")), ("f64", ("HIGH", "HIGHEST")),
                       ("si32", ("HIGHEST", "HIGHEST"))):
        skel = next((s for t, s in by_type.items() if t.name == et), None)
        if skel is None:
            continue
        t = skel.operand_types[0]
        attrs = {"lhs_batching_dimensions": (), "rhs_batching_dimensions": (), "lhs_contracting_dimensions": (1,),
                 "rhs_contracting_dimensions": (0,), "precision_config": config}
        skel2 = dataclasses.replace(skel, attrs=tuple((k, config if k == "precision_config" else v)
                                                      for k, v in skel.attrs))
        inst = spec.instance({"lhs": TensorType((2, 3), t), "rhs": TensorType((3, 2), t)}, attrs,
                             {"result": TensorType((2, 2), t)})
        out.append((f"precision_config {list(config)}", skel2, inst))
    return out


# (lhs and rhs type, result type): promotions (C13 holds) as JAX's preferred_element_type writes them, and
# element types C13 refuses — narrower, or of another kind.
PROMOTIONS = (("bf16", "f32"), ("f16", "f32"), ("si8", "si32"), ("ui8", "ui32"), ("f32", "f64"))
NOT_PROMOTIONS = (("f32", "f16", "a narrower float result"), ("si8", "f32", "integer operands, a float result"),
                  ("bf16", "si32", "float operands, an integer result"))
_MATMUL = ((3, 4), (4, 2), (3, 2), {"lhs_batching_dimensions": (), "rhs_batching_dimensions": (),
                                     "lhs_contracting_dimensions": (1,), "rhs_contracting_dimensions": (0,)})
_BATCHED = ((2, 3, 16), (2, 16, 2), (2, 3, 2), {"lhs_batching_dimensions": (0,), "rhs_batching_dimensions": (0,),
                                                "lhs_contracting_dimensions": (2,), "rhs_contracting_dimensions": (1,)})


def mixed_precision(spec, skels, rng):
    """Results of another element type than the operands' (`Exercise.appended`,
    after every other case: the rest of the suite stays as it was): each
    promotion of `PROMOTIONS` on a 3x4 · 4x2 matmul and on a batched
    matmul summing 16 products, and one invalid program (C13) for each
    pair of `NOT_PROMOTIONS`, on the matmul."""
    by_type = {s.operand_types[0].name: s for s in skels
               if s.operand_types[0] == s.operand_types[1] and dict(s.attrs).get("precision_config") == ("DEFAULT",
                                                                                                        "DEFAULT")}
    out = []

    def inst(src, dst, structure):
        lhs, rhs, res, dims = structure
        a, r = by_type[src].operand_types[0], element_type_named(dst)
        return spec.instance({"lhs": TensorType(lhs, a), "rhs": TensorType(rhs, a)},
                             dict(dims, precision_config=("DEFAULT", "DEFAULT")), {"result": TensorType(res, r)})
    for src, dst in PROMOTIONS:
        if src in by_type:
            out.append((f"mixed precision {src} x {src} -> {dst}: matmul", None, by_type[src], inst(src, dst, _MATMUL)))
            out.append((f"mixed precision {src} x {src} -> {dst}: batched matmul, 16 products", None, by_type[src],
                        inst(src, dst, _BATCHED)))
    for src, dst, why in NOT_PROMOTIONS:
        if src in by_type:
            out.append((f"result {dst} from {src} operands: {why}", "dot_general_c13", by_type[src],
                        inst(src, dst, _MATMUL)))
    return out


# v1.20's algorithm (spec/ops/dot_algorithm.py): each preset of jax.lax.DotAlgorithmPreset on the storage
# types JAX writes for it — (operands, result) — and the preset.  The first six are what jax lowers on CPU.
ALGORITHM_CASES = (("F16_F16_F16", "f16", "f16"), ("BF16_BF16_F32", "f32", "f32"), ("BF16_BF16_F32", "bf16", "bf16"),
                   ("BF16_BF16_F32_X3", "f32", "f32"), ("BF16_BF16_F32_X6", "f32", "f32"),
                   ("F32_F32_F32", "f32", "f32"), ("F64_F64_F64", "f64", "f64"), ("F16_F16_F32", "f16", "f32"),
                   ("BF16_BF16_BF16", "bf16", "bf16"), ("TF32_TF32_F32", "f32", "f32"),
                   ("TF32_TF32_F32_X3", "f32", "f32"))
# One invalid program per clause, each breaking only it: (label, what, precision_config, algorithm fields).
ALGORITHM_INVALID = (
    ("dot_general_c21", "an algorithm with precision_config [HIGHEST, HIGHEST]", ("HIGHEST", "HIGHEST"), {}),
    ("dot_general_c21", "an algorithm with precision_config [DEFAULT, HIGH]", ("DEFAULT", "HIGH"), {}),
    ("dot_general_c22", "lhs_component_count = 0", ("DEFAULT", "DEFAULT"), {"lhs_component_count": 0}),
    ("dot_general_c22", "lhs_component_count = -1", ("DEFAULT", "DEFAULT"), {"lhs_component_count": -1}),
    ("dot_general_c23", "rhs_component_count = 0", ("DEFAULT", "DEFAULT"), {"rhs_component_count": 0}),
    ("dot_general_c23", "rhs_component_count = -3", ("DEFAULT", "DEFAULT"), {"rhs_component_count": -3}),
    ("dot_general_c24", "num_primitive_operations = 0", ("DEFAULT", "DEFAULT"), {"num_primitive_operations": 0}),
    ("dot_general_c24", "num_primitive_operations = -6", ("DEFAULT", "DEFAULT"), {"num_primitive_operations": -6}),
)


def algorithm_cases(spec, skels, rng):
    """v1.20's `algorithm` (`Exercise.appended_last`, after every other
    stream: the rest of the suite stays as it was): each preset of
    `ALGORITHM_CASES` on a 3x4 · 4x2 matmul, the CPU presets also on a
    batched matmul summing 16 products; and the invalid programs of
    `ALGORITHM_INVALID` (C21–C24), on a BF16_BF16_F32 f32 matmul.  By hand:
    the solver never draws the algorithm (spec/ops/dot_algorithm.py)."""
    by_type = {s.operand_types[0].name: s for s in skels
               if s.operand_types[0] == s.operand_types[1] and dict(s.attrs).get("precision_config") == ("DEFAULT",
                                                                                                        "DEFAULT")}
    out = []

    def inst(src, dst, structure, alg, config=("DEFAULT", "DEFAULT")):
        lhs, rhs, res, dims = structure
        a, r = by_type[src].operand_types[0], element_type_named(dst)
        return spec.instance({"lhs": TensorType(lhs, a), "rhs": TensorType(rhs, a)},
                             dict(dims, precision_config=config, **alg.attrs()), {"result": TensorType(res, r)})
    for name, src, dst in ALGORITHM_CASES:
        if src not in by_type:
            continue
        alg = dot_algorithm.PRESETS[name]
        out.append((f"algorithm {name}: {src} x {src} -> {dst}, matmul", None, by_type[src],
                    inst(src, dst, _MATMUL, alg)))
        if name in dot_algorithm.CPU_PRESETS:
            out.append((f"algorithm {name}: {src} x {src} -> {dst}, batched matmul, 16 products", None, by_type[src],
                        inst(src, dst, _BATCHED, alg)))
    base = dot_algorithm.PRESETS["BF16_BF16_F32"]
    for label, what, config, fields in ALGORITHM_INVALID:
        if "f32" in by_type:
            alg = dataclasses.replace(base, **fields)
            out.append((what, label, by_type["f32"], inst("f32", "f32", _MATMUL, alg, config)))
    return out


def complex_promotion(spec, skels, rng):
    """A complex<f32> × complex<f32> → complex<f64> matmul (`Exercise.appended_last`,
    after `algorithm_cases`): v1.20's `is_promotable` takes two complex types
    by their components (f32 to f64), so C13 accepts it and the products are
    summed in complex<f64> (module docstring); `mixed_precision` promotes no
    complex type."""
    by_type = {s.operand_types[0].name: s for s in skels
               if s.operand_types[0] == s.operand_types[1] and dict(s.attrs).get("precision_config") == ("DEFAULT",
                                                                                                        "DEFAULT")}
    if "complex<f32>" not in by_type:
        return
    lhs, rhs, res, dims = _MATMUL
    a, r = by_type["complex<f32>"].operand_types[0], element_type_named("complex<f64>")
    yield ("mixed precision complex<f32> x complex<f32> -> complex<f64>: matmul", None, by_type["complex<f32>"],
           spec.instance({"lhs": TensorType(lhs, a), "rhs": TensorType(rhs, a)},
                         dict(dims, precision_config=("DEFAULT", "DEFAULT")), {"result": TensorType(res, r)}))


SPEC = OpSpec(
    mnemonic="dot_general",
    operands=(Operand("lhs", ANY), Operand("rhs", ANY)),
    attributes=(
        Attribute("lhs_batching_dimensions", I64ArrayAttr(), length=_batching_lengths, group=GROUP),
        Attribute("rhs_batching_dimensions", I64ArrayAttr(), group=GROUP,
                  length=lambda op: len(op.lhs_batching_dimensions)),
        Attribute("lhs_contracting_dimensions", I64ArrayAttr(), length=_contracting_lengths, group=GROUP),
        Attribute("rhs_contracting_dimensions", I64ArrayAttr(), group=GROUP,
                  length=lambda op: len(op.lhs_contracting_dimensions)),
        # The second choice, of the wrong length, is how a negative case for C12 is found.
        Attribute("precision_config", EnumListAttr("precision", PRECISIONS),
                  choices=(("DEFAULT", "DEFAULT"), ("DEFAULT",)), default=("DEFAULT", "DEFAULT")),
        # v1.20's algorithm (I8–I14), one `#stablehlo.dot_algorithm<…>`; absent (None) in every seed case
        *(Attribute(name, ALGORITHM_KINDS[name], optional=True, group=dot_algorithm.GROUP, since="v1.20")
          for name in dot_algorithm.FIELDS),
    ),
    results=(Result("result", ANY),),
    constraints=(dot_general_c1, dot_general_c2, dot_general_c3, dot_general_c4, dot_general_c5, dot_general_c6,
                 dot_general_c7, dot_general_c8, dot_general_c9, dot_general_c10, dot_general_c11, dot_general_c12,
                 dot_general_c13, dot_general_c21, dot_general_c22, dot_general_c23, dot_general_c24),
    infer=infer,
    result_type_stated=("result",),
    semantics=Accumulating(arrays, bilinear=("lhs", "rhs"), bilinear_form=bilinear_form),
    # v1.20: lhs "per-tensor quantized", rhs and result "quantized tensor"; dequantize_op_quantize, and
    # hybrid_dequantize_then_op (float lhs, quantized rhs, float result) — the same rule: only quantized
    # tensors are dequantized, only a quantized result quantized (oracle/quantized.py)
    quantization=Quantization(per_axis=("rhs", "result"),
                              constraints=(dot_general_c14, dot_general_c15, dot_general_c16, dot_general_c17,
                                           dot_general_c18, dot_general_c19, dot_general_c20)),
    groups=(Group(GROUP, "stablehlo.dot", ("lhs_batching_dimensions", "rhs_batching_dimensions",
                                             "lhs_contracting_dimensions", "rhs_contracting_dimensions")),
            Group(dot_algorithm.GROUP, dot_algorithm.DIALECT_ATTR, dot_algorithm.FIELDS)),
    exercise=Exercise(corners=CORNERS, built_corners=_built_corners, appended=mixed_precision,
                      appended_last=(algorithm_cases, complex_promotion)),
    later=(("dot_general_c21", "v1.20 C21"), ("dot_general_c22", "v1.20 C22"), ("dot_general_c23", "v1.20 C23"),
           ("dot_general_c24", "v1.20 C24")),
)
