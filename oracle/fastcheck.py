"""Cross-check of the fast path (fast.py) against arb (rigorous.py), shared
by bench/fast_vs_rigorous.py (>= 10^6 inputs per function and format) and
tests/oracle/test_fast.py (a small sample).

For each input the reference is arb's ball at 160 bits, read as a float64
midpoint m with a radius that also covers m's own rounding.  Two things are
checked:
* the bound: |y - f(x)| <= |y| * FAST_REL_ERROR / 16 for numpy's float64 y
  (the worst ratio is reported, so the safety factor left is visible);
* the decisions: every element fast.decide accepts must carry the bits the
  rigorous path gives; where the 160-bit ball read in float64 is too coarse
  to tell, rigorous.evaluate decides that element itself.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from flint import arb, ctx

from ..spec.types import BF16, F8E4M3FN, F8E5M2, F16, F32, F64, FloatFormat, element_type, from_bits
from . import fast, rigorous
from .real_functions import TABLE
from .rounding import round_bits

FORMATS = (F32, BF16, F16, F8E5M2, F8E4M3FN, F64)


@dataclass
class CheckResult:
    function: str
    fmt: str
    inputs: int
    decided: int          # elements the fast path decided
    mismatches: list      # (args, fast bits, rigorous bits)
    worst_rel_error: float  # max |y - f| / |y| seen (an upper bound: it includes the reference's radius)
    bound: float = 0.0      # the relative error bound the fast path assumes for this format


def _two_floats(a: arb) -> tuple[float, float]:
    """An arb's value as hi + lo (float64 each, hi = the nearest float64 to
    it): within 2^-106 relative of it, when finite."""
    hi = float(a)
    if not np.isfinite(hi) or hi == 0:
        return hi, 0.0
    return hi, float(a - arb(hi))


def _reference(f, cols: list, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per element, from arb's 160-bit ball B for f(*cols[i]): lo and hi
    bounds on the true value (B's ends in y's dtype, two steps outward,
    which covers reading them) and an upper bound on |y - f| / |y|,
    computed in arb from y read exactly."""
    g = TABLE[f].arb
    n = len(cols[0])
    dtype = y.dtype.type
    with np.errstate(all="ignore"):
        ym, ye = np.frexp(y)
        ym = np.ldexp(ym, 64)    # an integer below 2^64: y = ym * 2^(ye - 64) exactly
    ok_y = np.isfinite(y) & (y != 0)
    ends = np.full((n, 4), np.nan)
    rel = np.full(n, np.inf)
    old, ctx.prec = ctx.prec, 160
    try:
        for i, args in enumerate(zip(*[c.tolist() for c in cols])):
            b = g(*[arb(float(a)) for a in args])
            if not b.is_finite():
                continue
            ends[i] = _two_floats(b.lower()) + _two_floats(b.upper())
            if ok_y[i]:
                yb = arb((int(ym[i]), int(ye[i]) - 64))
                rel[i] = float(((yb - b).abs_upper() / yb.abs_lower()).upper())
    finally:
        ctx.prec = old
    with np.errstate(all="ignore"):
        lo = ends[:, 0].astype(dtype) + ends[:, 1].astype(dtype)
        hi = ends[:, 2].astype(dtype) + ends[:, 3].astype(dtype)
        for _ in range(2):
            lo, hi = np.nextafter(lo, dtype(-np.inf)), np.nextafter(hi, dtype(np.inf))
    return lo, hi, rel


def _format_values(fmt: FloatFormat, n: int, rng) -> np.ndarray:
    """Finite values of `fmt` as float64: every one for 8- and 16-bit
    formats, n random bit patterns otherwise."""
    et = element_type(fmt.name)
    if fmt.bits <= 16:
        bits = np.arange(1 << fmt.bits, dtype=np.uint64)
    else:
        bits = rng.integers(0, 1 << fmt.bits, size=n, dtype=np.uint64)
    with np.errstate(invalid="ignore"):
        vals = from_bits(bits, et).astype(np.float64)
    return vals[np.isfinite(vals)]


def inputs(f, fmt: FloatFormat, n: int, rng) -> list:
    """Argument columns (float64) for f: values of `fmt` within f's domain;
    unary functions over every value of a small format (or n random bit
    patterns), at most n of them, binary ones over n random pairs."""
    name = TABLE[f].name
    v = _format_values(fmt, n, rng)
    if name == "pi_times":
        return [np.array([1.0, -1.0, 0.5, -0.5, 0.25, -0.25, 0.75, -0.75])]
    if name in ("atan2", "hypot", "signed_power"):
        v = v[v != 0]   # the op modules state zero arguments exactly, never as an Approx
        a, b = rng.choice(v, n), rng.choice(v, n)
        if name == "signed_power":
            return [rng.choice([-1.0, 1.0], n), np.abs(a), b]
        return [a, b]
    if name == "log":
        v = v[v > 0]
    elif name == "log1p":
        v = v[v > -1]
    v = v[v != 0]
    return [rng.choice(v, n, replace=False) if len(v) > n else v]


def check(f, fmt: FloatFormat, cols: list) -> CheckResult:
    name = TABLE[f].name
    dtype, _, tiny = fast.working(fmt)
    with np.errstate(all="ignore"):
        y = np.asarray(TABLE[f].numpy(*[np.asarray(c, dtype=dtype) for c in cols]), dtype=dtype)
    ref_lo, ref_hi, rel = _reference(f, cols, y)
    normal = np.isfinite(y) & (np.abs(y) >= tiny) & np.isfinite(ref_lo)
    worst = float(rel[normal].max()) if normal.any() else 0.0
    bound = fast.working(fmt)[1]
    ok, r = fast.decide(y, fmt, [np.asarray(c, dtype=dtype) for c in cols])
    with np.errstate(all="ignore"):
        lo, hi = fast.round_to_format(ref_lo, fmt), fast.round_to_format(ref_hi, fmt)
    known = np.isfinite(ref_lo) & fast.agree(lo, hi, fmt)
    mismatches = []
    for i in np.flatnonzero(ok & known & ~fast.agree(r, lo, fmt)).tolist():
        mismatches.append((tuple(c[i] for c in cols), r[i], lo[i]))
    for i in np.flatnonzero(ok & ~known).tolist():   # too close to call in float64: ask arb itself
        args = tuple(float(c[i]) for c in cols)
        z = rigorous.evaluate(f, args, fmt)
        if z is None or round_bits(float(r[i]), fmt) != z[0]:
            mismatches.append((args, r[i], z))
    return CheckResult(name, fmt.name, len(y), int(ok.sum()), mismatches, worst, bound)
