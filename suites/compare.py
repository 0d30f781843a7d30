"""Comparison of an actual output with an expectation (suites compare without the oracle).

Each expectation kind's own rule lives in its module (spec/kinds/), as does
`Comparison`, the verdict a kind judged whole returns;
here is what every kind judged element by element shares, on raw bit
patterns with the format facts of `spec.types`: the declared type checked
first, implementation-defined alternatives, causes, the mismatches shown.
The ULP error is measured for every float output,
whether or not the expectation tolerates it, so reports can show accuracy.
Each failing element gets a cause (`suites/causes.py`; an output whose
expectation moves values — a pinned kind (exact), bit-exact — and that holds the
expected values elsewhere is a "wrong order"), and `meaningful_ulp`
is the largest ULP distance over the elements where ULP is the measure that
means something: those that passed and those "out of tolerance" (never a
flushed subnormal's or a lost NaN's ordinal distance).
"""
from __future__ import annotations

import numpy as np

from ..spec.expectation import Expectation
from ..spec.types import ElementType, nan_mask, ordinal_distance, ordinals, to_bits
from . import causes as causes_rule
from . import show
from .kinds import Comparison, kind_of
from .records import element_type_of

MAX_MISMATCHES_SHOWN = 5


def _rows(bits: np.ndarray, et: ElementType) -> tuple[np.ndarray, ElementType]:
    """Bits (`to_bits` layout) flattened to one row per element, one column
    per component, and the component's element type."""
    if et.is_complex:
        return bits.reshape(-1, 2), et.component
    return bits.reshape(-1, 1), et


def _ulp_matrix(e: np.ndarray, a: np.ndarray, cet: ElementType) -> np.ndarray:
    """Vectorised `spec.types.ulp_distance` over bit arrays of one float format."""
    en, an = nan_mask(e, cet.format), nan_mask(a, cet.format)
    dist = ordinal_distance(ordinals(e, cet), ordinals(a, cet))
    return np.where(en & an, 0.0, np.where(en | an, np.inf, dist))


def _elements_match(exp: Expectation, cet: ElementType, eb: np.ndarray, ab: np.ndarray, primary: bool = True):
    """Per element: does the actual match these expected bits under the
    expectation's kind (spec/kinds)?  And the ULP distance (None for
    non-float types), measured whatever the kind tolerates."""
    elem_ulp = None
    if cet.is_float:
        elem_ulp = _ulp_matrix(eb, ab, cet).max(axis=1) if eb.size else np.zeros(eb.shape[0])
    return kind_of(exp).matches(exp, cet, eb, ab, primary, elem_ulp), elem_ulp


def matches(exp: Expectation, actual: np.ndarray) -> np.ndarray:
    """Per flat element: does `actual` meet the primary value of `exp` under
    its kind's rule (alternatives aside)?  For naming causes from a second
    expectation (`run`'s rewritten programs); element-wise kinds only."""
    et = exp.type.element_type
    eb, cet = _rows(exp.bits, et)
    ab, _ = _rows(to_bits(np.asarray(actual), et), et)
    return np.asarray(_elements_match(exp, cet, eb, ab)[0], dtype=bool)


def declared_type_mismatch(exp: Expectation, actual: np.ndarray) -> str:
    """Why `actual` is not of the output type the program declares ("" when
    it is): its element type exactly — ui32 is not i32, i8 is not i1, f32 is
    not bf16 — then its shape.  Checked before any value, never converted:
    values that only look right after a conversion are a wrong result."""
    t = exp.type
    try:
        et = element_type_of(actual).mlir
    except TypeError:
        et = f"numpy {actual.dtype}"
    # a quantized tensor crosses a backend's boundary as its storage values (spec: `bitcast_convert(x, storage_type(x))`)
    want = t.element_type.storage_type.mlir if t.element_type.is_quantized else t.element_type.mlir
    if et != want:
        return f"element type {et} where {want} was declared ({t.mlir})"
    if tuple(actual.shape) != tuple(t.shape):
        return f"shape {tuple(actual.shape)} where {t.mlir} was declared"
    return ""


def compare(exp: Expectation, actual: np.ndarray, flushed: Expectation | None = None) -> Comparison:
    """Does `actual` meet `exp`?  With the mismatches, their causes and the
    ULP error.  `flushed`: the expectation of the same program with its
    subnormal inputs read as zeros (`causes.flush_inputs`), where the caller
    has it — failing elements that meet it are "subnormal flushed"."""
    t = exp.type
    et = t.element_type
    actual = np.asarray(actual)
    wrong = declared_type_mismatch(exp, actual)
    if wrong:
        return Comparison(False, detail=wrong)
    kind = kind_of(exp)
    if not kind.element_wise:
        return kind.judge(exp, actual)
    expected = exp.array()
    eb, cet = _rows(exp.bits, et)
    ab, _ = _rows(to_bits(actual, et), et)
    ok_elem, elem_ulp = _elements_match(exp, cet, eb, ab)
    ulp = float(elem_ulp.max()) if elem_ulp is not None and elem_ulp.size else (0.0 if elem_ulp is not None else None)

    used = []
    if exp.impl_defined:
        impl = np.asarray(exp.impl_defined, dtype=np.int64)
        primary_ok = ok_elem[impl].any()
        for alt in exp.alternatives:
            if alt.bits is None:  # "any value" at the elements listed for it
                where = np.asarray(alt.elements or [], dtype=np.int64)
                taken = where[~ok_elem[where]]
            else:  # the same rule as the primary value: NaN is NaN, tolerance applies
                alt_ok, _ = _elements_match(exp, cet, _rows(alt.bits, et)[0], ab, primary=False)
                taken = impl[~ok_elem[impl] & alt_ok[impl]]
            if taken.size:
                ok_elem[taken] = True
                if elem_ulp is not None:
                    elem_ulp[taken] = 0.0
                if alt.label not in used:
                    used.append(alt.label)
        # Elements that kept the primary value chose the first alternative.
        if exp.alternatives and primary_ok and exp.alternatives[0].label not in used:
            used.insert(0, exp.alternatives[0].label)
        if elem_ulp is not None and elem_ulp.size:
            ulp = float(elem_ulp.max())

    bad = np.nonzero(~ok_elem)[0]
    flushed_ok = None
    if len(bad) and flushed is not None:   # any output type: compare(subnormal, 0) is an i1 that flushing changes
        fb = _rows(flushed.bits, et)[0]
        flushed_ok = _elements_match(flushed, cet, fb, ab)[0] | causes_rule.output_flushed(fb, ab, cet)
    # Values moved, not computed (data movement, bitcast): all there, elsewhere, is a wrong order.
    moved = kind.pinned and exp.bit_exact
    why = causes_rule.classify(eb, ab, cet, bad, bit_exact=exp.bit_exact, impl_defined=exp.impl_defined,
                               flushed_ok=flushed_ok, wrong_order=bool(len(bad)) and moved
                               and causes_rule.permuted(eb, ab))
    meaningful = None
    if elem_ulp is not None:
        keep = ok_elem.copy()
        keep[bad] = np.array([c == causes_rule.MEANINGFUL_ULP for c in why], dtype=bool)
        meaningful = float(elem_ulp[keep].max()) if keep.any() else None
    shown = []
    for i, cause in zip(bad[:MAX_MISMATCHES_SHOWN], why):   # values in suites/show.py's notation (NaN sign, payload)
        shown.append((int(i), show.element(expected.reshape(-1)[i], et), show.element(actual.reshape(-1)[i], et),
                      None if elem_ulp is None else float(elem_ulp[i]), cause))
    detail = ""
    if len(bad):
        detail = f"{len(bad)} of {ok_elem.size} elements differ; " + "; ".join(
            f"[{i}] expected {e} got {a}" + (f" ({u:g} ulp)" if u is not None else "") + f" [{c}]"
            for i, e, a, u, c in shown)
    return Comparison(not len(bad), ulp, shown, int(len(bad)), used, detail, causes_rule.count(why), meaningful,
                      (bad, why))


def compare_log(expected: list, actual: list) -> Comparison:
    """Does a backend's host log (`actual`: [(stream, array)] in the order it
    wrote them) meet the case's expected log (`expected`: [(stream,
    Expectation, after)], `after` the entries that must come first:
    oracle/host.py)?  Each actual entry is matched, in order, with the
    first unmatched expected entry of its stream whose predecessors are all
    matched and whose value `compare` accepts; an entry matching none, and
    an expected entry never written, fail the log."""
    matched: list = [False] * len(expected)
    ulps, used = [], []
    for k, (stream, array) in enumerate(actual):
        ready = [i for i, (s, _, after) in enumerate(expected)
                 if not matched[i] and s == stream and all(matched[j] for j in after)]
        hit, last = None, None
        for i in ready:
            last = compare(expected[i][1], array)
            if last.ok:
                hit = i
                break
        if hit is None:
            why = f": {last.detail}" if last is not None and len(ready) == 1 else \
                ("" if ready else " (nothing more was to be written there)")
            return Comparison(False, detail=f"host log entry {k} ({stream}) matches no expected entry{why}")
        matched[hit] = True
        if last.max_ulp is not None:
            ulps.append(last.max_ulp)
        used += [a for a in last.alternatives_used if a not in used]
    missing = [i for i, m in enumerate(matched) if not m]
    if missing:
        s = expected[missing[0]][0]
        return Comparison(False, detail=f"{len(missing)} expected host log entr{'y' if len(missing) == 1 else 'ies'} "
                                        f"never written (first: entry {missing[0]} on {s})")
    return Comparison(True, max_ulp=max(ulps) if ulps else None, alternatives_used=used)
