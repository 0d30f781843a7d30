"""Why an element failed: the one place the classification rule lives.

A failing element gets exactly one cause, the first of `CAUSES` that holds
(so the order below is the precedence):

  "subnormal flushed"  output flush: a nonzero subnormal was expected and a
                       zero (either sign) came back; or input flush: the
                       case's inputs hold subnormals and the actual element
                       meets the expectation the spec gives for the same
                       program with every subnormal input read as a zero of
                       its sign (`flush_inputs`; the caller runs the oracle on
                       those inputs and passes that expectation as
                       `flushed`), or that expectation flushed on output too.
                       Exact, and cheap: one oracle run per failing case whose
                       inputs hold a subnormal, for any op, not only
                       element-wise ones.
  "wrong order"        the output holds exactly the expected values, at other
                       places: the expectation moves values rather than
                       computing them (kind "exact" and bit-exact: data
                       movement — sort, transpose, gather, slice, … — and
                       bitcast_convert), and the output's multiset of bit
                       patterns (rows, for complex) equals the expected one.
                       So a sort that places a NaN first is not "NaN
                       invented" there and a huge ULP error elsewhere: no
                       value is wrong, only where they are.
  "wrong choice"       an implementation-defined element (the expectation
                       lists alternatives for it) matched none of them.
  "NaN lost"           expected NaN, got a number.
  "NaN invented"       expected a number, got NaN.
  "NaN payload"        both NaN, bits differ (fails only where the
                       expectation is bit-exact: data movement, bitcast).
  "signed zero"        expected ±0, got ∓0.
  "infinity"           expected or actual ±inf, none of the above.
  "out of tolerance"   both finite, none of the above: the ULP distance is the
                       meaningful measure of how wrong it is.
  "integer wrap"       integer outputs where one of expected and actual is
                       the type's max and the other lies in the lower half of
                       the type's range (negative for signed types, below
                       2^(bits-1) for unsigned), or one is the type's min and
                       the other in the upper half: what saturating gives
                       against what wrapping gives when a result leaves the
                       range (100 + 100 in i8: wraps to -56, saturates to
                       127).  Two values of one integer type always differ by
                       less than 2^bits, so "differs by a multiple of 2^bits"
                       can only show as this.  A heuristic: a value that is
                       simply wrong can meet it by chance (the min against
                       0, say).
  "other"              anything else (an integer that is simply different).

A complex element is classified per component: of the components whose
bits differ, the cause earliest in `CAUSES` wins.  Failures that are not
element-wise (crash, rejected, wrong type or shape) have no causes.

The float-bit classification (`float_classes`: NaN, inf, zero, subnormal,
sign) and the per-element rule (`cause_codes`) are the ones the accuracy
survey (shlo_conform/survey/) and `run` (shlo_conform/differential.py)
use too, so a cause means the same thing in all three.

`WRONG_ULP`: past this many ULP, a distance says the value is simply wrong
(a sign flipped, a component of a complex result swapped), not how
accurate it is; reports print "wrong" there and keep the figure in JSON.

`diagnose` turns the per-case counts into the one-line diagnoses reports
print ("xla flushes subnormals to zero: 240 failing cases in 31 ops fail
only for this cause"); its thresholds live here too.
"""
from __future__ import annotations

import numpy as np

from ..spec.types import ElementType, from_bits, nan_mask, ordinals, to_bits

CAUSES = ("subnormal flushed", "wrong order", "wrong choice", "NaN lost", "NaN invented", "NaN payload",
          "signed zero", "infinity", "out of tolerance", "integer wrap", "other")
# The causes an element-wise survey can meet (an element-wise op, NaN is
# NaN, alternatives accepted): what the accuracy survey counts apart from
# its ULP statistics (shlo_conform/survey/, reports/accuracy_html.py).
SPECIAL_CAUSES = ("subnormal flushed", "NaN lost", "NaN invented", "signed zero", "infinity")
MEANINGFUL_ULP = "out of tolerance"   # the one cause whose elements' ULP distance is reported
WRONG_ULP = 1 << 20   # a larger ULP distance is shown as "wrong" (module docstring)
_CODE = {c: k for k, c in enumerate(CAUSES)}
_NONE = len(CAUSES)   # code of a component whose bits do not differ


def float_classes(bits: np.ndarray, fmt):
    """(nan, inf, zero, subnormal nonzero, negative) masks of float bit
    patterns of `fmt` (any shape; unsigned or Python-int object arrays):
    the one reading of float bits the causes, the survey and `run` share."""
    b = np.asarray(bits).astype(np.uint64)
    mag = b & np.uint64(fmt.magnitude_mask)
    expo = np.uint64(fmt.exponent_mask)
    nan = nan_mask(b, fmt)
    inf = (mag == expo) if fmt.has_inf else np.zeros(b.shape, bool)
    zero = (mag == 0) & ~nan if fmt.has_zero else np.zeros(b.shape, bool)   # FNUZ: 1.000…0 is NaN
    sub = ((mag & expo) == 0) & (mag != 0) if fmt.has_subnormals else np.zeros(b.shape, bool)
    neg = (b & np.uint64(fmt.sign_mask)) != 0
    return (np.asarray(nan, bool), np.asarray(inf, bool), np.asarray(zero, bool), np.asarray(sub, bool),
            np.asarray(neg, bool))


def float_cause_codes(e: np.ndarray, a: np.ndarray, fmt, bit_exact: bool = False) -> np.ndarray:
    """Per component of (expected, actual) float bit patterns of one format:
    the index in `CAUSES` of the cause of their difference, or `_NONE`
    where they do not differ (equal bits; two NaNs unless `bit_exact`)."""
    en, ei, ez, es, eneg = float_classes(e, fmt)
    an, ai, az, _, aneg = float_classes(a, fmt)
    out = np.full(np.shape(e), _CODE["out of tolerance"], dtype=np.int64)
    out[ei | ai] = _CODE["infinity"]
    out[ez & az & (eneg != aneg)] = _CODE["signed zero"]
    out[es & az] = _CODE["subnormal flushed"]
    out[en & an] = _CODE["NaN payload"]
    out[~en & an] = _CODE["NaN invented"]
    out[en & ~an] = _CODE["NaN lost"]
    same = (np.asarray(e).astype(np.uint64) == np.asarray(a).astype(np.uint64)) | (en & an & (not bit_exact))
    out[same] = _NONE
    return out


def float_causes(e: np.ndarray, a: np.ndarray, fmt) -> np.ndarray:
    """Cause of each (expected, actual) pair of float bit patterns of one
    format, as if they differ (the caller asks only for differing ones)."""
    codes = float_cause_codes(e, a, fmt, bit_exact=True)
    codes = np.where(codes == _NONE, _CODE["other"], codes)
    return np.asarray(CAUSES, dtype=object)[codes]


def integer_causes(e: np.ndarray, a: np.ndarray, et: ElementType) -> np.ndarray:
    """"integer wrap" or "other" for differing integer bit patterns (rule in the docstring)."""
    if et.is_bool:
        return np.full(np.shape(e), "other", dtype=object)
    eo, ao = ordinals(e, et).astype(object), ordinals(a, et).astype(object)
    hi, lo = et.max_value, et.min_value
    # Where a sum overflows past `hi`, wrapping lands in the lower half (negative for
    # signed types), and past `lo` in the upper half: saturation and wrapping then
    # disagree in that way, one side at the extreme, the other in the opposite half.
    mid = 0 if et.is_signed else 1 << (et.bits - 1)

    def one_way(x, y):   # x saturated, y what wrapping gives
        return ((x == hi) & (y < mid)) | ((x == lo) & (y >= mid))
    wrap = np.asarray(one_way(ao, eo) | one_way(eo, ao), dtype=bool)
    return np.where(wrap, "integer wrap", "other").astype(object)


def permuted(eb: np.ndarray, ab: np.ndarray) -> bool:
    """Do the rows of `ab` hold the rows of `eb` in another order (equal as
    multisets of bit patterns, not equal as sequences)?"""
    e, a = np.asarray(eb).astype(np.uint64), np.asarray(ab).astype(np.uint64)
    if e.shape != a.shape or e.shape[0] < 2 or np.array_equal(e, a):
        return False

    def rows_sorted(x):
        return x[np.lexsort(x.T[::-1])] if x.ndim == 2 else np.sort(x)
    return bool(np.array_equal(rows_sorted(e), rows_sorted(a)))


def cause_codes(eb: np.ndarray, ab: np.ndarray, cet: ElementType, *, bit_exact: bool = False,
                impl: np.ndarray | None = None, flushed_ok: np.ndarray | None = None,
                wrong_order: bool = False) -> np.ndarray:
    """The rule, vectorised: the `CAUSES` index of each element row of
    (expected, actual) bits (one column per component) taken as failing.
    `impl[i]`: row i is implementation-defined (its alternatives matched
    none); `flushed_ok[i]`: row i meets the flushed-input result;
    `wrong_order`: the output is a permutation of the expected values
    (`permuted`, for an expectation that moves values)."""
    eb, ab = np.asarray(eb), np.asarray(ab)
    n = eb.shape[0]
    if cet.is_float:
        per = float_cause_codes(eb, ab, cet.format, bit_exact)
        codes = per.min(axis=1) if n else np.zeros(0, np.int64)
        codes = np.where(codes == _NONE, _CODE["other"], codes)
    else:
        per = integer_causes(eb, ab, cet)
        codes = np.array([_CODE[c[0]] if len(c) else _CODE["other"] for c in per], dtype=np.int64)
    if impl is not None:
        codes = np.where(impl, _CODE["wrong choice"], codes)
    if wrong_order:
        codes[:] = _CODE["wrong order"]
    if flushed_ok is not None:
        codes = np.where(flushed_ok, _CODE["subnormal flushed"], codes)
    return codes


def classify(eb: np.ndarray, ab: np.ndarray, cet: ElementType, failing: np.ndarray, *,
             bit_exact: bool = False, impl_defined=(), flushed_ok: np.ndarray | None = None,
             wrong_order: bool = False) -> list[str]:
    """One cause per failing element.  `eb`, `ab`: expected and actual bits
    as rows (one per element, one column per component, `compare._rows`);
    `cet` the component type; `failing` the flat indices that failed;
    `impl_defined` the indices the expectation gives alternatives for;
    `flushed_ok[i]`: element i meets the flushed-input expectation;
    `wrong_order`: the output holds the expected values elsewhere."""
    failing = np.asarray(failing, dtype=np.int64)
    if not failing.size:
        return []
    impl = np.isin(failing, np.asarray(list(impl_defined), dtype=np.int64))
    codes = cause_codes(eb[failing], ab[failing], cet, bit_exact=bit_exact, impl=impl,
                        flushed_ok=None if flushed_ok is None else np.asarray(flushed_ok, bool)[failing],
                        wrong_order=wrong_order)
    return [CAUSES[c] for c in codes.tolist()]


def output_flushed(eb: np.ndarray, ab: np.ndarray, cet: ElementType) -> np.ndarray:
    """Per element row: every component either equal or a nonzero subnormal
    expected where a zero came back (an output flush of `eb`)."""
    if not cet.is_float:
        return np.zeros(eb.shape[0], dtype=bool)
    _, _, _, es, _ = float_classes(eb, cet.format)
    _, _, az, _, _ = float_classes(ab, cet.format)
    return ((np.asarray(eb).astype(np.uint64) == np.asarray(ab).astype(np.uint64)) | (es & az)).all(axis=1)


def flush_bits(bits: np.ndarray, fmt) -> np.ndarray:
    """Float bit patterns with every subnormal replaced by the zero of its
    sign (what a backend that reads subnormal inputs as zero computes with)."""
    b = np.asarray(bits)
    _, _, _, sub, _ = float_classes(b, fmt)
    return np.where(sub, b & np.asarray(fmt.sign_mask).astype(b.dtype), b).astype(b.dtype)


def flush_inputs(arrays: list[np.ndarray], types: list) -> list[np.ndarray] | None:
    """The inputs with every subnormal replaced by a zero of its sign (what a
    backend that flushes subnormal inputs computes with), or None when no
    float input holds a subnormal (nothing to establish).  `types`: the
    inputs' element types; complex inputs flush per component."""
    out, any_sub = [], False
    for arr, et in zip(arrays, types):
        c = et.component if et.is_complex else et
        if not c.is_float:
            out.append(arr)
            continue
        bits = to_bits(arr, et)
        _, _, _, sub, _ = float_classes(bits, c.format)
        if not sub.any():
            out.append(arr)
            continue
        any_sub = True
        out.append(from_bits(flush_bits(bits, c.format), et))
    return out if any_sub else None


def count(causes: list[str]) -> dict:
    """{cause: elements}, in `CAUSES` order."""
    return {c: causes.count(c) for c in CAUSES if c in causes}


# ---------------------------------------------------------------------------
# Diagnoses: one line where a cause explains failures broadly
# ---------------------------------------------------------------------------

MIN_CASES = 5   # a diagnosis needs at least this many failing cases explained by the cause alone
MIN_OPS = 2     # ... spread over at least this many ops (or 3 element types of one op)
MIN_DTYPES = 3

_SAYS = {
    "subnormal flushed": "flushes subnormals to zero",
    "wrong order": "puts the right values in the wrong places (data movement)",
    "wrong choice": "makes implementation-defined choices the spec does not list",
    "NaN lost": "loses NaNs (returns a number where the spec gives NaN)",
    "NaN invented": "returns NaN where the spec gives a number",
    "NaN payload": "changes NaN payloads where bits must be moved unchanged",
    "signed zero": "gets the sign of zero wrong",
    "infinity": "gets infinities wrong",
    "out of tolerance": "is less accurate than the spec's tolerance",
    "integer wrap": "saturates integers where the spec wraps (or wraps where it saturates)",
}


def diagnose(backend: str, verdicts: list) -> list[str]:
    """The diagnoses of a run: for each cause (not "other"), the failing cases
    whose every failing element has that cause; a line when there are at
    least MIN_CASES of them in at least MIN_OPS ops (or MIN_DTYPES element
    types of one op).  `verdicts`: Verdict records or their dicts."""
    only: dict[str, list] = {}
    for v in verdicts:
        causes = v.get("causes", {}) if isinstance(v, dict) else v.causes
        if len(causes) == 1:
            [c] = causes
            op, dt = (v["op"], v["dtype"]) if isinstance(v, dict) else (v.op, v.dtype)
            only.setdefault(c, []).append((op, dt))
    lines = []
    for c in CAUSES:
        if c == "other" or c not in only:
            continue
        cases = only[c]
        ops = {op for op, _ in cases}
        if len(cases) >= MIN_CASES and (len(ops) >= MIN_OPS or len(set(cases)) >= MIN_DTYPES):
            lines.append(f"{backend} {_SAYS[c]}: {len(cases)} failing case{'s' if len(cases) != 1 else ''} "
                         f"in {len(ops)} op{'s' if len(ops) != 1 else ''} fail only for this cause "
                         f"({c!r}: {', '.join(sorted(ops)[:6])}{', …' if len(ops) > 6 else ''})")
    return lines
