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

`diagnose` turns the per-case counts into the one-line diagnoses reports
print ("xla flushes subnormals to zero: 240 failing cases in 31 ops fail
only for this cause"); its thresholds live here too.
"""
from __future__ import annotations

import numpy as np

from ..spec.types import ElementType, from_bits, nan_mask, ordinals, to_bits

CAUSES = ("subnormal flushed", "wrong choice", "NaN lost", "NaN invented", "NaN payload", "signed zero",
          "infinity", "out of tolerance", "integer wrap", "other")
MEANINGFUL_ULP = "out of tolerance"   # the one cause whose elements' ULP distance is reported


def _float_parts(bits: np.ndarray, fmt):
    """(nan, inf, zero, subnormal nonzero, negative) masks of float bit patterns."""
    b = np.asarray(bits).astype(object if fmt.bits == 64 else np.int64)
    mag = b & ~fmt.sign_mask
    nan = nan_mask(b, fmt)
    inf = np.asarray((mag == fmt.exponent_mask) if fmt.has_inf else np.zeros_like(nan), dtype=bool)
    zero = np.asarray(mag == 0, dtype=bool)
    sub = np.asarray(((mag & fmt.exponent_mask) == 0) & (mag != 0), dtype=bool)
    neg = np.asarray((b & fmt.sign_mask) != 0, dtype=bool)
    return nan, inf, zero, sub, neg


def float_causes(e: np.ndarray, a: np.ndarray, fmt) -> np.ndarray:
    """Cause of each (expected, actual) pair of float bit patterns of one
    format, as if they differ (the caller asks only for differing ones)."""
    en, ei, ez, es, eneg = _float_parts(e, fmt)
    an, ai, az, _, aneg = _float_parts(a, fmt)
    out = np.full(np.shape(e), "out of tolerance", dtype=object)
    out[ei | ai] = "infinity"
    out[ez & az & (eneg != aneg)] = "signed zero"
    out[es & az] = "subnormal flushed"
    out[en & an] = "NaN payload"
    out[~en & an] = "NaN invented"
    out[en & ~an] = "NaN lost"
    return out


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


def classify(eb: np.ndarray, ab: np.ndarray, cet: ElementType, failing: np.ndarray, *,
             bit_exact: bool = False, impl_defined=(), flushed_ok: np.ndarray | None = None) -> list[str]:
    """One cause per failing element.  `eb`, `ab`: expected and actual bits
    as rows (one per element, one column per component, `compare._rows`);
    `cet` the component type; `failing` the flat indices that failed;
    `impl_defined` the indices the expectation gives alternatives for;
    `flushed_ok[i]`: element i meets the flushed-input expectation."""
    failing = np.asarray(failing, dtype=np.int64)
    if not failing.size:
        return []
    e, a = eb[failing], ab[failing]
    if cet.is_float:
        per = float_causes(e, a, cet.format)
        en, an = _nan_mask_rows(e, cet), _nan_mask_rows(a, cet)
        differs = (e != a) & ~(en & an & (not bit_exact))
        rank = np.vectorize(CAUSES.index, otypes=[int])(per)
        rank = np.where(differs, rank, len(CAUSES))
        best = rank.min(axis=1)
        causes = [CAUSES[r] if r < len(CAUSES) else "other" for r in best]
    else:
        per = integer_causes(e, a, cet)
        causes = [c[0] if len(c) else "other" for c in per]
    impl = set(int(i) for i in impl_defined)
    for k, i in enumerate(failing.tolist()):
        if flushed_ok is not None and flushed_ok[i]:
            causes[k] = "subnormal flushed"
        elif i in impl:
            causes[k] = "wrong choice"
    return causes


def _nan_mask_rows(bits: np.ndarray, cet: ElementType) -> np.ndarray:
    return np.asarray(nan_mask(np.asarray(bits).astype(object), cet.format), dtype=bool)


def output_flushed(eb: np.ndarray, ab: np.ndarray, cet: ElementType) -> np.ndarray:
    """Per element row: every component either equal or a nonzero subnormal
    expected where a zero came back (an output flush of `eb`)."""
    if not cet.is_float:
        return np.zeros(eb.shape[0], dtype=bool)
    _, _, _, es, _ = _float_parts(eb, cet.format)
    _, _, az, _, _ = _float_parts(ab, cet.format)
    return ((eb == ab) | (es & az)).all(axis=1)


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
        _, _, _, sub, _ = _float_parts(bits, c.format)
        if not sub.any():
            out.append(arr)
            continue
        any_sub = True
        flushed = np.where(sub, np.asarray(bits) & np.asarray(c.format.sign_mask, dtype=bits.dtype), bits)
        out.append(from_bits(flushed.astype(bits.dtype), et))
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
