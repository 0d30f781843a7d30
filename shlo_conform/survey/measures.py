"""What a backend's bits say against the expectation: special-value causes first, then the ULP error."""
from __future__ import annotations

import numpy as np

from ..suites.causes import SPECIAL_CAUSES
from .expectations import CacheEntry, oracle_chunk
from .ops import CHUNK, PROFILE_BINS, element_type_named

def classes_of(bits: np.ndarray, fmt) -> dict:
    """suites/causes.py's reading of float bits (`float_classes`), with the
    magnitude the ULP distance counts."""
    from ..suites.causes import float_classes
    b = bits.astype(np.uint64)
    nan, inf, zero, sub, neg = float_classes(b, fmt)
    mag = b & np.uint64(fmt.magnitude_mask)
    return {"nan": nan, "inf": inf, "zero": zero, "sub": sub, "neg": neg, "mag": mag.astype(np.int64)}


def ulp_errors(e: np.ndarray, a: np.ndarray, fmt) -> np.ndarray:
    """|ordinal(e) - ordinal(a)|, as floats: representable steps between two
    non-NaN patterns (±0 are one point); NaN rows are the caller's."""
    ce, ca = classes_of(e, fmt), classes_of(a, fmt)
    d_same = np.abs(ce["mag"] - ca["mag"]).astype(np.float64)
    d_opp = ce["mag"].astype(np.float64) + ca["mag"].astype(np.float64)
    return np.where(ce["neg"] == ca["neg"], d_same, d_opp)


def show_element(bits, et) -> str:
    """One element's value, from its bits ((re, im) bits for complex), in
    suites/show.py's notation (a NaN's sign and payload show)."""
    from ..spec.types import from_bits
    from ..suites import show
    return show.element(from_bits(np.asarray([bits]), et)[0], et)


def judge(entry: CacheEntry, actual: np.ndarray) -> dict:
    """Per element, what `measure` counts (its docstring): `elem_ulp` (the
    element's ULP error, 0 where an alternative was chosen), `acc` (the
    elements whose ULP error is measured), `free`, `special` (cause -> mask),
    `flushed_in` (input flushes).  One rule for the sampled survey and the
    exhaustive one's chunk summaries (survey/streaming.py)."""
    from ..suites.causes import CAUSES, cause_codes
    from ..spec.accuracy import tolerance_ulp
    et = element_type_named(entry.dtype)
    c = et.component if et.is_complex else et
    fmt = c.format
    n = entry.expected.shape[0]
    e = entry.expected.astype(np.uint64).reshape(n, -1)        # (n, components)
    a = actual.astype(np.uint64).reshape(n, -1)
    ce, ca = classes_of(e, fmt), classes_of(a, fmt)
    both_nan = ce["nan"] & ca["nan"]
    ulp = np.where(both_nan, 0.0, ulp_errors(e, a, fmt))
    chosen = np.zeros(n, bool)   # an implementation-defined alternative the backend chose
    for alt in entry.alts:
        alt = alt.astype(np.uint64).reshape(n, -1)
        chosen |= ((alt == a) | (classes_of(alt, fmt)["nan"] & ca["nan"])).all(axis=1)
    free = entry.free.copy()
    tol = tolerance_ulp(et, stated_tolerance(entry.op))
    differs = ~((e == a) | both_nan).all(axis=1) & ~free & ~chosen
    flushed_in = _input_flushes(entry, a, differs & _subnormal_operand(entry, fmt), fmt, tol)
    idx = np.flatnonzero(differs)
    codes = cause_codes(e[idx], a[idx], c, flushed_ok=flushed_in[idx])
    special = {}
    for k in SPECIAL_CAUSES:
        special[k] = np.zeros(n, bool)
        special[k][idx[codes == CAUSES.index(k)]] = True
    elem_ulp = np.where(chosen, 0.0, ulp.max(axis=1))
    taken = free | chosen | both_nan.all(axis=1)
    for k in SPECIAL_CAUSES:
        taken |= special[k]
    acc = ~taken | chosen   # chosen alternatives count as correctly rounded
    return {"elem_ulp": elem_ulp, "acc": acc, "free": free, "special": special, "flushed_in": flushed_in,
            "tolerance_ulp": tol, "within": within_tolerance(et, e, a, ulp.max(axis=1), tol) | chosen}


def stated_tolerance(op: str) -> dict | None:
    """The op's own ULP tolerances ({format name: ULPs}), where its semantics state any."""
    from ..spec.ops import OPS
    spec = OPS.get(op)
    return getattr(spec.semantics, "tolerance", None) if spec is not None else None


def within_tolerance(et, e: np.ndarray, a: np.ndarray, elem_ulp: np.ndarray, tol: int) -> np.ndarray:
    """Per element, "within tolerance" by the suite's own rule: the ulp
    expectation kind's (spec/kinds/ulp.py — the ULP count and, for a real
    zero, its sign), so the survey and the suite never disagree on it."""
    from ..spec.expectation import Expectation
    from ..spec.kinds.ulp import ULP
    from ..spec.types import TensorType
    exp = Expectation(TensorType((len(e),), et), e, kind=ULP.name, tolerance_ulp=tol)
    return np.asarray(ULP.matches(exp, et.component if et.is_complex else et, e, a, True, elem_ulp))


def measure(entry: CacheEntry, actual: np.ndarray) -> dict:
    """Statistics of `actual` (bits, `to_bits` layout) against the entry
    (module docstring).  Each disagreeing element gets the conformance
    suite's cause (suites/causes.py `cause_codes`, input flush included:
    `_input_flushes`); those of `SPECIAL_CAUSES` are counted apart, every
    other element gives its ULP error.  Complex elements are judged per
    component: the element's error is its worse component's, its cause the
    earliest of its differing components'."""
    et = element_type_named(entry.dtype)
    n = entry.expected.shape[0]
    j = judge(entry, actual)
    elem_ulp, acc, free, special, flushed_in, tol = (j["elem_ulp"], j["acc"], j["free"], j["special"],
                                                     j["flushed_in"], j["tolerance_ulp"])
    u = elem_ulp[acc]
    doc = {
        "n": int(n), "measured": int(acc.sum()), "free": int(free.sum()),
        "max_ulp": float(u.max()) if u.size else 0.0,
        "mean_ulp": float(u.mean()) if u.size else 0.0,
        "correctly_rounded": float((u == 0).mean()) if u.size else 1.0,
        "within_tolerance": float(j["within"][acc].mean()) if u.size else 1.0,
        "tolerance_ulp": tol,
        "specials": {k: int(v.sum()) for k, v in special.items()},
        "input_flushes": int((special["subnormal flushed"] & flushed_in).sum()),
    }
    doc["special_disagreements"] = sum(doc["specials"].values())
    if u.size and doc["max_ulp"] > 0:
        i = int(np.flatnonzero(acc)[np.argmax(u)])
        doc["worst"] = _example(entry, actual, i, float(elem_ulp[i]), et)
    doc["special_examples"] = {k: _example(entry, actual, int(np.flatnonzero(v)[0]), None, et)
                               for k, v in special.items() if v.any()}
    doc["profile"] = _profile(entry, elem_ulp, acc, et)
    return doc


def _subnormal_operand(entry: CacheEntry, fmt) -> np.ndarray:
    """Elements with a subnormal operand (component): where a wrong result
    may be the op on flushed inputs (`_input_flushes` decides)."""
    n = entry.expected.shape[0]
    out = np.zeros(n, bool)
    for row in entry.inputs:
        out |= classes_of(row.reshape(n, -1), fmt)["sub"].any(axis=1)
    return out


def _input_flushes(entry: CacheEntry, a: np.ndarray, rows: np.ndarray, fmt, tol: int) -> np.ndarray:
    """Which of the elements `rows` (a mask) got what the oracle gives with
    every subnormal operand read as a zero of its sign: an input flush (DAZ),
    as suites/causes.py calls it, established like shlo_conform/pipeline/input_flush.py
    does for a case — by the spec's result on the flushed inputs (the
    distinct ones, in chunks), never by guessing.  An element meets it where
    each component has its bits (NaN: any NaN), is zero where it is a
    nonzero subnormal (the result flushed too), or, both nonzero finite,
    is within the survey's tolerance `tol`; or meets one of its
    alternatives.  Where the spec states no result on the flushed inputs,
    or the oracle cannot say, no element is called a flush."""
    from ..suites.causes import flush_bits
    n = a.shape[0]
    out = np.zeros(n, bool)
    idx = np.flatnonzero(rows)
    if not idx.size:
        return out
    arity = entry.inputs.shape[0]
    flushed = flush_bits(entry.inputs[:, idx], fmt)                    # (arity, m[, 2])
    keys = np.moveaxis(flushed, 0, 1).reshape(idx.size, -1)            # one row per element
    distinct, back = np.unique(keys, axis=0, return_inverse=True)
    cols = np.moveaxis(distinct.reshape((distinct.shape[0], arity) + flushed.shape[2:]), 0, 1)
    try:
        parts = [oracle_chunk((entry.op, entry.dtype, cols[:, j:j + CHUNK])) for j in range(0, cols.shape[1], CHUNK)]
    except Exception:   # a program the oracle cannot run on these inputs: no flush is established
        return out
    back = back.reshape(-1)
    want = np.concatenate([p[0] for p in parts]).astype(np.uint64).reshape(distinct.shape[0], -1)[back]
    free = np.concatenate([p[2] for p in parts])[back]
    got = a[idx]
    ok = _meets(want, got, fmt, tol)
    k = max(p[1].shape[0] for p in parts)
    for j in range(k):   # pieces without that alternative keep their primary
        alt = np.concatenate([p[1][j] if j < p[1].shape[0] else p[0] for p in parts])
        ok |= _meets(alt.astype(np.uint64).reshape(distinct.shape[0], -1)[back], got, fmt, tol)
    out[idx] = ok & ~free
    return out


def _meets(want: np.ndarray, got: np.ndarray, fmt, tol: int) -> np.ndarray:
    """Per row of component bits: `_input_flushes`' rule of a match."""
    cw, cg = classes_of(want, fmt), classes_of(got, fmt)
    near = ~cw["zero"] & ~cg["zero"] & ~cw["nan"] & ~cg["nan"] & (ulp_errors(want, got, fmt) <= tol)
    return ((want == got) | (cw["nan"] & cg["nan"]) | (cw["sub"] & cg["zero"]) | near).all(axis=1)


def _example(entry: CacheEntry, a: np.ndarray, i: int, ulp, et) -> dict:
    d = {"inputs": [show_element(row[i], et) for row in entry.inputs],
         "expected": show_element(entry.expected[i], et), "actual": show_element(a[i], et)}
    if ulp is not None:
        d["ulp"] = ulp
    return d


def _profile(entry: CacheEntry, ulp: np.ndarray, acc: np.ndarray, et) -> dict:
    """Max ULP error per bin of the first operand's value (|z| for complex;
    bins of equal count, in value order): what the plots draw, small
    enough for JSON."""
    from ..spec.types import from_bits
    idx = np.flatnonzero(acc)
    if not idx.size:
        return {"x": [], "max_ulp": []}
    with np.errstate(all="ignore"):
        z = from_bits(entry.inputs[0][idx], et)
        x = np.abs(z).astype(np.float64) if et.is_complex else z.astype(np.float64)
    finite = np.isfinite(x)
    idx, x = idx[finite], x[finite]
    order = np.argsort(x, kind="stable")
    x, u = x[order], ulp[idx][order]
    bins = np.array_split(np.arange(x.size), min(PROFILE_BINS, x.size)) if x.size else []
    xs, us = [], []
    for b in bins:
        j = b[np.argmax(u[b])]
        xs.append(float(x[j]))
        us.append(float(u[j]))
    return {"x": xs, "max_ulp": us}
