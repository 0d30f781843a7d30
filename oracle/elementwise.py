"""Execution of `Elementwise` semantics on numpy arrays, and the resolution of element answers.

An op module states each element's exact result in the vocabulary of
`spec.dsl` (bool, int, Fraction, float, complex or an (re, im) pair,
`Approx`, `RoundTo`, `ImplDefined`).  Here every element is decoded to an
exact Python value, handed to the op's `fn`, and the answer is resolved into
the result type's bit pattern:

* int outside the result type's range → implementation-defined, with the
  two's-complement wrap as the one alternative we know (the seed's "Errors"
  section: integer overflow is implementation-defined unless called out);
* Fraction / float / int into a float type → correctly rounded (rounding.py);
* `Approx` → Ziv's loop (ziv.py); `RoundTo` → into its format, then into the
  result type;
* `ImplDefined` → the first alternative is the primary value, every
  alternative is kept (nested ones, and per-component ones of a complex
  pair, are flattened into combined labels).  `ImplDefined({})` — the spec
  leaves the element open and we know no alternative — makes the element
  `Unspecified`: no expectation can be stated for it.

The outcome is an `Expectation` per result (spec/expectation.py, the record
suites store and compare too): the primary value's bits in
`spec.types.to_bits` layout, the kind and tolerance, and the alternatives.

Elements are evaluated once per distinct tuple of operand bit patterns: the
semantics are pure, and suites repeat values (special values, small integer
ranges), so this is the cheap, general fast path.  `Approx` answers into
formats narrower than f64 are then rounded in one vectorised pass per
function (fast.py); only the elements it cannot decide reach Ziv's loop.
"""
from __future__ import annotations

import contextlib
import itertools
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..spec.accuracy import tolerance_ulp
from ..spec.dsl import (ANY_VALUE, Approx, Elementwise, ImplDefined, Range, RoundTo, finite, finite_nonzero,
                        integer_overflow)
from ..spec.expectation import Alternative, Expectation
from ..spec.kinds.bounded import BOUNDED
from ..spec.kinds.exact import EXACT
from ..spec.kinds.ulp import ULP
from ..spec.types import ElementType, TensorType, exact_values, from_bits, to_bits
from . import fast
from .rounding import round_bits, round_directed, round_value
from .semantics import on_arrays, operand_types as _operand_types
from .ziv import evaluate



class Unspecified(Exception):
    """The spec leaves an element open and names no alternative (e.g. complex
    `remainder`, TBD in the seed): the oracle cannot state an expectation."""


def alternative_records(d: dict) -> list[Alternative]:
    """{label: bits array, or the flat indices where "any value" is offered}
    as the record's list, in order (the first names the primary's choice)."""
    return [Alternative(label, None, list(v)) if isinstance(v, list) else Alternative(label, v)
            for label, v in d.items()]


# --------------------------------------------------------------------------
# Decoding operands
# --------------------------------------------------------------------------

# --------------------------------------------------------------------------
# Resolving one element's answer into bits
# --------------------------------------------------------------------------

@dataclass
class _Resolved:
    options: list  # [(label or None, bits)]; options[0] is the primary
    whys: list
    undecided: bool = False
    bounds: tuple | None = None   # (lo bits, hi bits) of the primary's `Range`; (re, im) pairs for complex


def resolve(v, et: ElementType) -> _Resolved:
    """The bits (int; (re, im) ints for complex) of an element answer `v`."""
    if isinstance(v, ImplDefined):
        if not v.alternatives:
            raise Unspecified(v.why or "implementation-defined with no known alternative")
        opts, whys, und, bounds = [], [v.why] if v.why else [], False, None
        for label, alt in v.alternatives.items():
            if alt is ANY_VALUE:
                opts.append((label, None))  # a wildcard: no bits to match
                continue
            sub = resolve(alt, et)
            whys += sub.whys
            und |= sub.undecided
            bounds = sub.bounds if not opts else bounds   # the primary's range; others are values
            opts += [(label if l2 is None else f"{label}; {l2}", b) for l2, b in sub.options]
        return _Resolved(_dedupe(opts), whys, und, bounds if opts and opts[0][1] is not None else None)
    if et.is_complex:
        return _resolve_complex(v, et)
    if et.is_bool:
        if not isinstance(v, (bool, int, np.bool_)) or int(v) not in (0, 1):
            raise TypeError(f"element answer {v!r} is not a boolean")
        return _Resolved([(None, int(bool(v)))], [])
    if et.is_integer:
        if not isinstance(v, (int, np.integer)) or isinstance(v, float):
            raise TypeError(f"element answer {v!r} for {et.name} is not an integer")
        v = int(v)
        if et.min_value <= v <= et.max_value:
            return _Resolved([(None, et.int_to_bits(v))], [])
        return resolve(integer_overflow(et, v), et)
    return _resolve_real(v, et)


def no_nan(et: ElementType) -> ImplDefined:
    """What an element answer NaN is in a format without NaN (f4E2M1FN,
    f6E2M3FN, f6E3M2FN): nothing the spec says — RFC
    20241001-microscaling-formats: "Conversion from NaN is undefined" — so
    any value; XLA:CPU's convert makes -0 of every NaN (measured with
    jaxlib 0.10.2, tests/spec/test_v120_formats.py), offered first."""
    return ImplDefined({"-0 (XLA:CPU's convert of a NaN)": -0.0, f"other (no NaN in {et.name})": ANY_VALUE},
                       why=f"a NaN result has no encoding in {et.name} "
                           "(RFC 20241001-microscaling-formats: conversion from NaN is undefined)")


def _resolve_real(v, et: ElementType) -> _Resolved:
    fmt = et.format
    if not fmt.has_nan and isinstance(v, float) and v != v:
        return resolve(no_nan(et), et)
    if isinstance(v, Range):   # the nearest value, and the ends rounded outward
        return _Resolved([(None, round_bits(v.nearest, fmt))], [],
                         bounds=(round_directed(v.lo, fmt, up=False), round_directed(v.hi, fmt, up=True)))
    if isinstance(v, Approx):
        z = evaluate(v.f, v.args, fmt)
        whys = [] if z.decided else [f"rounding undecided at {z.precision} bits"]
        return _Resolved([(None, z.bits)], whys, not z.decided)
    if isinstance(v, RoundTo):
        inner = v.value
        if isinstance(inner, Approx):
            z = evaluate(inner.f, inner.args, v.format)
            inner = v.format.decode(z.bits)
        return _Resolved([(None, round_bits(round_value(inner, v.format), fmt))], [])
    if isinstance(v, bool) or not isinstance(v, (int, float, Fraction)) and not hasattr(v, "man"):
        raise TypeError(f"element answer {v!r} for {et.name} is not a real number")
    return _Resolved([(None, round_bits(v, fmt))], [])


def _resolve_complex(v, et: ElementType) -> _Resolved:
    if isinstance(v, complex):
        v = (v.real, v.imag)
    if not (isinstance(v, (tuple, list)) and len(v) == 2):
        raise TypeError(f"element answer {v!r} for {et.name} is not a complex value or (re, im) pair")
    re, im = resolve(v[0], et.component), resolve(v[1], et.component)
    opts = []
    for (l1, b1), (l2, b2) in itertools.product(re.options, im.options):
        parts = [f"re {l1}" if l1 is not None else "", f"im {l2}" if l2 is not None else ""]
        label = ", ".join(p for p in parts if p) or None
        opts.append((label, None if b1 is None or b2 is None else (b1, b2)))
    bounds = None
    if re.bounds or im.bounds:   # a component without a range is its own bound
        (rl, rh), (il, ih) = (re.bounds or (re.options[0][1],) * 2), (im.bounds or (im.options[0][1],) * 2)
        bounds = ((rl, il), (rh, ih))
    return _Resolved(_dedupe(opts), re.whys + im.whys, re.undecided or im.undecided, bounds)


def _dedupe(opts: list) -> list:
    """Keep the first label of each distinct label (alternatives are by label)."""
    seen, out = set(), []
    for label, b in opts:
        if label not in seen:
            seen.add(label)
            out.append((label, b))
    return out


# --------------------------------------------------------------------------
# Whole ops
# --------------------------------------------------------------------------

@on_arrays(Elementwise)
def _elementwise(sem: Elementwise, inst, operands: list, results: list) -> list:
    return [run_elementwise(sem, inst, operands, results[0])]


def run_elementwise(sem: Elementwise, inst, operands: list, result: TensorType) -> Expectation:
    """Apply `sem.fn` element by element; rank-0 operands broadcast (clamp's
    min/max may be scalars).  Semantics are pure, so the op is evaluated
    once per distinct tuple of operand bit patterns: narrow operands
    (`_by_value`) before anything else, the whole-array route's leftovers
    and the general route after it (`_distinct`)."""
    shape = tuple(int(d) for d in result.shape)
    et = result.element_type
    op_types = _operand_types(inst)
    arrays = [np.broadcast_to(np.asarray(a), shape) if np.asarray(a).ndim == 0 else np.asarray(a)
              for a in operands]
    few = _by_value(sem, inst, arrays, op_types, result)
    if few is not None:
        return few
    whole = _run_generic(sem, inst, arrays, op_types, result) if _CLAIMS[-1] else None
    if whole is not None:
        return whole
    n = int(np.prod(shape, dtype=np.int64))
    if arrays and n:
        first, inverse = _distinct([c for a, t in zip(arrays, op_types) for c in _bit_columns(a, t.element_type)])
    else:
        first, inverse = np.zeros(min(n, 1), dtype=np.int64), np.zeros(n, dtype=np.int64)
    values = [exact_values(np.asarray(a).reshape(-1)[first], t.element_type) for a, t in zip(arrays, op_types)]
    answers = dict(enumerate(map(sem.fn, itertools.repeat(inst, len(first)), *values)))
    table = _plain_numbers(list(answers.values()), et)
    if table is None:
        resolved = _resolve_fast(answers, et)
        for k, v in answers.items():
            if k not in resolved:
                resolved[k] = resolve(v, et)
        distinct = [resolved[j] for j in range(len(first))]
        table = _plain_bits(distinct, et)
        if table is None:
            per_element = [distinct[j] for j in inverse.tolist()]
            return assemble(per_element, result, sem.accuracy_for(inst), sem.bit_exact, sem.tolerance)
    trail = (2,) if et.is_complex else ()
    ulp = sem.accuracy_for(inst) == "approx" and (et.is_float or et.is_complex)
    return Expectation(result, table[inverse].reshape(shape + trail), (ULP if ulp else EXACT).name,
                       tolerance_ulp(et, sem.tolerance) if ulp else 0, sem.bit_exact, [], [], "")


_CLAIMS = [True]   # whether `_run_generic` may serve elements (`statement_route` pushes False)


@contextlib.contextmanager
def statement_route():
    """Within it, every element is the op's own statement — `fn`, once per
    distinct operand tuple — and no `Generic` claim serves any: slower, and
    the same answers wherever the claims hold (tests/spec/test_generic.py
    holds them).  What it is for: an implementation that follows a changed
    `fn` everywhere.  The mutation tool scores an op module's mutant this
    way too, since the claims route around most of `fn` (exponential's
    finite operands are the numpy pass's, not `fn`'s, on every f32 array:
    a mutant of `fn`'s `x == 0` branch changes no answer the claims give)."""
    _CLAIMS.append(False)
    try:
        yield
    finally:
        _CLAIMS.pop()


def _bit_columns(array, et: ElementType) -> list:
    """The elements' bit patterns as flat unsigned columns for `_distinct`
    (every pattern its own: -0.0 is not +0.0, NaN payloads differ); a
    complex array gives two, its components'."""
    b = to_bits(np.asarray(array), et)
    return [b.reshape(-1, 2)[:, 0], b.reshape(-1, 2)[:, 1]] if et.is_complex else [b.reshape(-1)]


def _plain_bits(distinct: list, et: ElementType):
    """The bits of resolved answers that are each one plain value (no
    alternative, range, note or undecided rounding: what `assemble` would
    state with nothing beside the bits), one row per answer; None
    otherwise."""
    if any(r.whys or r.undecided or r.bounds is not None or len(r.options) != 1 or r.options[0][0] is not None
           for r in distinct):
        return None
    trail = (2,) if et.is_complex else ()
    return np.array([r.options[0][1] for r in distinct], dtype=object).reshape((len(distinct),) + trail) \
        .astype(et.bits_dtype)


def _plain_numbers(answers: list, et: ElementType):
    """The bits `resolve` gives answers that are all plain numbers of the
    result's kind, computed on the whole list: Python bools for i1, Python
    ints in range for integer types (out of range is an overflow, for
    `resolve`), Python floats, NaN excepted, for float types with
    infinities — correctly rounded by `fast.round_fast` (equal to
    `round_bits`, tests/oracle/test_round_fast.py).  None for anything
    else (Approx, Fraction, ImplDefined … go through `resolve`)."""
    if not answers or et.is_complex:
        return None
    if et.is_bool:
        return np.array(answers, dtype=np.uint8) if all(type(v) is bool for v in answers) else None
    if et.is_integer:
        if not all(type(v) is int for v in answers) or min(answers) < et.min_value or max(answers) > et.max_value:
            return None
        return to_bits(np.array(answers, dtype=np.uint64 if et.is_unsigned else np.int64).astype(et.numpy), et)
    if not (et.is_float and et.format.has_inf) or not all(type(v) is float for v in answers):
        return None
    a = np.array(answers, dtype=np.float64)
    if np.isnan(a).any():
        return None
    return to_bits(fast.round_fast(a, et.format).astype(et.numpy), et)


FEW_BITS = 16   # operand tuples of at most this many bits: evaluated once per value present (`_by_value`)


def _by_value(sem: Elementwise, inst, arrays: list, op_types: list, result: TensorType):
    """For operands of at most FEW_BITS bits in all (a unary op on f16, bf16,
    the f8 and small integer types; a binary one on 8-bit types) over more
    elements than they have values: the op on the values present, one each
    (found by counting, not sorting), spread back over the array.  The
    semantics are pure, so this states what the element-wise route would;
    where the distinct result carries anything positional (implementation-
    defined elements, notes) the caller's routes state the whole result.
    None where it does not apply."""
    n = int(np.prod([int(d) for d in result.shape], dtype=np.int64))
    if not arrays or n <= SMALL:
        return None
    widths = [t.element_type.bits for t in op_types]
    if any(t.element_type.is_complex for t in op_types) or sum(widths) > FEW_BITS or n <= (1 << sum(widths)):
        return None
    key = np.zeros(n, dtype=np.uint32)
    for a, t, w in zip(arrays, op_types, widths):
        key = (key << np.uint32(w)) | to_bits(np.asarray(a), t.element_type).reshape(-1).astype(np.uint32)
    present = np.zeros(1 << sum(widths), dtype=bool)
    present[key] = True
    values = np.flatnonzero(present)
    index = np.zeros(len(present), dtype=np.int64)
    index[values] = np.arange(len(values))
    sub_arrays, shift = [], sum(widths)
    for t, w in zip(op_types, widths):
        shift -= w
        col = (values >> shift) & ((1 << w) - 1)
        sub_arrays.append(from_bits(col.astype(t.element_type.bits_dtype), t.element_type))
    sub = run_elementwise(sem, inst, sub_arrays, TensorType((len(values),), result.element_type))
    if sub.impl_defined or sub.alternatives or sub.why or sub.statistical is not None:
        return None
    inverse = index[key]
    shape = tuple(int(d) for d in result.shape) + ((2,) if result.element_type.is_complex else ())
    spread = (lambda b: None if b is None else np.asarray(b)[inverse].reshape(shape))
    return Expectation(result, spread(sub.bits), sub.kind, sub.tolerance_ulp, sub.bit_exact, [], [], "",
                       lo=spread(sub.lo), hi=spread(sub.hi))


def _run_generic(sem: Elementwise, inst, arrays: list, op_types: list, result: TensorType):
    """The whole-array route, or None: for an op that declares `generic`
    (spec/dsl/: where its fn is one `Approx(f, *operands)`), real float
    operands and a result format fast.py serves, the generic elements are
    rounded in one vectorised pass; `fn` answers every other element (and
    the few the pass cannot decide), one call per distinct operand tuple, so
    the fn stays the statement of every element the pass does not decide.
    When any such answer is more than one plain value (implementation-
    defined, undecided, a range) the general route states the whole result."""
    et = result.element_type
    g = sem.generic
    if g is not None and g.whole is not None:   # a claim about every element, any types (compare)
        got = fast.whole(g.whole, inst, arrays, et)
        if got is not None:
            return _integer_result(sem, inst, arrays, op_types, result, *got)
    if g is not None and g.integer is not None and fast.native_integer(et) \
            and all(t.element_type == et for t in op_types):
        got = fast.integer(g.integer, [np.asarray(a).astype(et.numpy, copy=False) for a in arrays], et)
        if got is not None:
            return _integer_result(sem, inst, arrays, op_types, result, *got)
    if (g is None or not et.is_float or et.is_complex
            or not (fast.applies(g.f, et.format) if g.ieee is None else fast.ieee_applies(et.format))
            or any(t.element_type != et for t in op_types)):
        return None
    shape = tuple(int(d) for d in result.shape)
    native = [np.asarray(a).astype(et.numpy, copy=False).reshape(-1) for a in arrays]
    # `where` takes float64 arrays; finiteness and zero-ness read the same on f32 and f64 themselves
    blind = g.where in _DTYPE_BLIND and et.numpy in (np.float32, np.float64)
    n = int(np.prod(shape, dtype=np.int64))
    bits = np.zeros(n, dtype=et.bits_dtype)
    done = np.zeros(n, dtype=bool)
    # leftovers of f's cheaper stages gathered over the chunks and finished in one pass (fast.defers)
    defer = n > CHUNK and g.ieee is None and fast.defers(g.f, et.format)
    for i in range(0, n, CHUNK):   # a pass's temporaries stay in cache: 2-3x faster than whole 2^20 arrays
        part = [a[i:i + CHUNK] for a in native]
        bits[i:i + CHUNK], done[i:i + CHUNK] = _vector_pass(g, part, part if blind else
                                                            [a.astype(np.float64) for a in part], et, defer)
    rest = np.flatnonzero(~done)
    if defer and len(rest):
        part = [a[rest] for a in native]
        bits[rest], done[rest] = _vector_pass(g, part, part if blind else [a.astype(np.float64) for a in part], et)
        rest = rest[~done[rest]]
    if len(rest):
        first, inverse = _distinct([to_bits(np.asarray(a).reshape(-1)[rest], t.element_type)
                                    for a, t in zip(arrays, op_types)])
        args = [a[rest[first]].astype(np.float64).tolist() for a in native]
        said = list(map(sem.fn, itertools.repeat(inst, len(first)), *args))
        answers = _plain_numbers(said, et)   # zeros of maximum(x, 0), NaN operands …: plain floats, at once
        if answers is None:
            answers = np.zeros(len(first), dtype=et.bits_dtype)
            for j, v in enumerate(said):
                r = resolve(v, et)
                if r.whys or r.undecided or r.bounds is not None or r.options[0][0] is not None:
                    return None
                answers[j] = r.options[0][1]
        bits[rest] = answers[inverse]
    ulp = sem.accuracy_for(inst) == "approx"
    return Expectation(result, bits.reshape(shape), (ULP if ulp else EXACT).name,
                       tolerance_ulp(et, sem.tolerance) if ulp else 0,
                       sem.bit_exact, [], [], "")


_DTYPE_BLIND = (finite, finite_nonzero)
CHUNK = 1 << 16   # elements per vectorised pass (`_run_generic`)


def _vector_pass(g, part: list, vals: list, et: ElementType, defer: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(bits, decided mask) of one stretch of elements by the whole-array
    route: `part` the operands in the result's numpy type, `vals` what
    `g.where` reads (float64, or the operands where that reads the same);
    `defer`: fast.evaluate's (the cheaper stages' leftovers undecided)."""
    n = len(part[0])
    bits = np.zeros(n, dtype=et.bits_dtype)
    done = np.zeros(n, dtype=bool)
    generic = np.asarray(g.where(*vals), dtype=bool)
    if g.nan is not None and n and et.format.has_nan:   # fn's NaNs outside f's domain: the bits resolve gives math.nan
        nan = np.asarray(g.nan(*vals), dtype=bool) & ~generic
        bits[nan], done[nan] = resolve(float("nan"), et).options[0][1], True
    if n and generic.all():   # the usual case: whole arrays, no gathers or scatters
        if g.ieee is not None:
            done, rounded = fast.ieee(g.ieee, part, et, g.exact)
            return to_bits(rounded, et).reshape(-1), done
        done, rounded = fast.evaluate(g.f, list(g.arguments(*vals)), et.format, defer)
        with np.errstate(all="ignore"):   # the undecided elements' values are placeholders, replaced later
            return to_bits(rounded.astype(et.numpy), et).reshape(-1), done
    idx = np.flatnonzero(generic)
    if len(idx) and g.ieee is not None:
        ok, rounded = fast.ieee(g.ieee, [a[idx] for a in part], et, g.exact)
        hit = idx[ok]
        bits[hit] = to_bits(rounded[ok], et)
        done[hit] = True
    elif len(idx):
        ok, rounded = fast.evaluate(g.f, list(g.arguments(*[v[idx] for v in vals])), et.format, defer)
        hit = idx[ok]
        bits[hit] = to_bits(rounded[ok].astype(et.numpy), et)
        done[hit] = True
    return bits, done


SMALL = 64   # up to this many rows, `_distinct` groups them with a dict (np.unique's fixed cost is larger)


def _distinct(cols: list) -> tuple[np.ndarray, np.ndarray]:
    """(first, inverse) over rows of operand bit patterns (unsigned integer
    arrays, one per operand): `first` indexes one row of each distinct
    tuple, and row i is the tuple at first[inverse[i]] — so fn is called
    once per distinct tuple (suites and narrow formats repeat values).
    Tuples of at most 64 bits are packed into one integer for np.unique;
    wider ones (binary f64) are rows of 64-bit words, compared as raw bytes
    by np.unique on a void view (equal bytes, equal tuple)."""
    if len(cols[0]) <= SMALL:   # region bodies run on scalars: thousands of calls of one element
        seen: dict = {}
        first, inverse = [], []
        for i, k in enumerate(zip(*[c.tolist() for c in cols])):
            j = seen.get(k)
            if j is None:
                j = seen[k] = len(first)
                first.append(i)
            inverse.append(j)
        return np.array(first, dtype=np.int64), np.array(inverse, dtype=np.int64)
    width = sum(c.dtype.itemsize * 8 for c in cols)
    if width <= 64:
        key = np.zeros(len(cols[0]), dtype=np.uint64)
        for c in cols:
            key = (key << np.uint64(c.dtype.itemsize * 8)) | c.astype(np.uint64)
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        return first, inverse.reshape(-1)
    rows = np.ascontiguousarray(np.stack([c.astype(np.uint64) for c in cols], axis=1))
    key = rows.view(np.dtype((np.void, 8 * len(cols)))).reshape(-1)
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


def _integer_result(sem: Elementwise, inst, arrays: list, op_types: list, result: TensorType,
                    values: np.ndarray, declined: np.ndarray) -> Expectation:
    """The integer route's Expectation: numpy's values, and the op's fn at
    the elements it declined (an overflow: implementation-defined)."""
    et = result.element_type
    bits = to_bits(values.reshape(-1), et)
    idx = np.flatnonzero(declined.reshape(-1))
    if not len(idx):
        return Expectation(result, bits.reshape(tuple(int(d) for d in result.shape)), EXACT.name, 0,
                           sem.bit_exact, [], [], "")
    per_element = [_Resolved([(None, b)], []) for b in bits.tolist()]
    args = [exact_values(np.asarray(a).reshape(-1)[idx], t.element_type) for a, t in zip(arrays, op_types)]
    for j, i in enumerate(idx.tolist()):
        per_element[i] = resolve(sem.fn(inst, *[a[j] for a in args]), et)
    return assemble(per_element, result, sem.accuracy_for(inst), sem.bit_exact, sem.tolerance)


def _resolve_fast(answers: dict, et: ElementType) -> dict:
    """{key: _Resolved} for the `Approx` answers that fast.py decides in one
    vectorised pass per function (float results narrower than f64, float
    arguments); the others are left to `resolve`, element by element."""
    if not et.is_float or et.is_complex:
        return {}
    groups: dict = {}
    for k, v in answers.items():
        if (isinstance(v, Approx) and fast.applies(v.f, et.format)
                and all(type(a) is float for a in v.args)):
            groups.setdefault((v.f, len(v.args)), []).append(k)
    out = {}
    for (f, nargs), ks in groups.items():
        cols = np.array([answers[k].args for k in ks], dtype=np.float64).reshape(len(ks), nargs).T
        ok, rounded = fast.evaluate(f, list(cols), et.format)
        idx = np.flatnonzero(ok)
        bits = to_bits(rounded[idx].astype(et.numpy), et).tolist()
        for j, b in zip(idx.tolist(), bits):
            out[ks[j]] = _Resolved([(None, b)], [])
    return out


def assemble(per_element: list, result: TensorType, accuracy: str, bit_exact: bool,
              tolerance: dict | None = None) -> Expectation:
    et = result.element_type
    shape = tuple(int(d) for d in result.shape)
    trail = (2,) if et.is_complex else ()
    prim = [r.options[0][1] for r in per_element]
    bits = np.array(prim, dtype=object).reshape(shape + trail) if prim else np.zeros(shape + trail, dtype=object)
    bits = bits.astype(et.bits_dtype)
    impl = [i for i, r in enumerate(per_element) if r.options[0][0] is not None]
    labels: list = []
    for i in impl:
        for label, _ in per_element[i].options:
            if label not in labels:
                labels.append(label)
    alternatives = {}
    wildcards = {label for r in per_element for label, b in r.options if b is None}
    for label in labels:
        if label in wildcards:
            # "any value", only at the elements that offer it: their indices.
            alternatives[label] = [i for i in impl if any(l2 == label for l2, _ in per_element[i].options)]
            continue
        alt = bits.reshape((-1,) + trail).copy()
        for i in impl:
            for l2, b in per_element[i].options:
                if l2 == label:
                    alt[i] = b
        alternatives[label] = alt.reshape(bits.shape)
    why = "; ".join(dict.fromkeys(w for r in per_element for w in r.whys))
    undecided = [i for i, r in enumerate(per_element) if r.undecided]
    if undecided:
        why = (why + "; " if why else "") + f"rounding undecided at elements {undecided[:10]}"
    ulp = accuracy == "approx" and (et.is_float or et.is_complex)
    exp = Expectation(result, bits, (ULP if ulp else EXACT).name, tolerance_ulp(et, tolerance) if ulp else 0,
                      bit_exact, impl, alternative_records(alternatives), why)
    if any(r.bounds is not None for r in per_element):   # an accumulation: the range of every schedule
        ends = [r.bounds or (p, p) for r, p in zip(per_element, prim)]
        exp.kind = BOUNDED.name
        exp.lo, exp.hi = (np.array([e[j] for e in ends], dtype=object).reshape(shape + trail).astype(et.bits_dtype)
                          for j in (0, 1))
    return exp
