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

from ..spec.types import BF16, F8E4M3FN, F8E5M2, F16, F32, FloatFormat, element_type, from_bits
from . import fast, rigorous
from .real_functions import TABLE
from .rounding import round_bits

FORMATS = (F32, BF16, F16, F8E5M2, F8E4M3FN)


@dataclass
class CheckResult:
    function: str
    fmt: str
    inputs: int
    decided: int          # elements the fast path decided
    mismatches: list      # (args, fast bits, rigorous bits)
    worst_rel_error: float  # max |y - f| / |y| seen (float64 reference)


def _reference(f, cols: list) -> tuple[np.ndarray, np.ndarray]:
    """(midpoints, radii) as float64 of arb's 160-bit balls for f(*cols[i])."""
    g = TABLE[f].arb
    n = len(cols[0])
    mid, rad = np.empty(n), np.empty(n)
    old, ctx.prec = ctx.prec, 160
    try:
        for i, args in enumerate(zip(*[c.tolist() for c in cols])):
            b = g(*[arb(a) for a in args])
            if b.is_finite():
                m = float(b.mid())
                mid[i], rad[i] = m, float(b.rad()) + abs(m) * 2.0 ** -52
            else:
                mid[i], rad[i] = np.nan, np.inf
    finally:
        ctx.prec = old
    return mid, rad


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
    with np.errstate(all="ignore"):
        y = np.asarray(TABLE[f].numpy(*cols), dtype=np.float64)
    mid, rad = _reference(f, cols)
    normal = np.isfinite(y) & (np.abs(y) >= 2.0 ** -1000) & np.isfinite(mid)
    with np.errstate(all="ignore"):
        rel = (np.abs(y - mid) + rad) / np.abs(y)
    worst = float(rel[normal].max()) if normal.any() else 0.0
    ok, r = fast.decide(y, fmt)
    with np.errstate(all="ignore"):
        lo, hi = fast.round_to_format(mid - rad, fmt), fast.round_to_format(mid + rad, fmt)
    known = np.isfinite(mid) & fast.agree(lo, hi, fmt)
    mismatches = []
    for i in np.flatnonzero(ok & known & ~fast.agree(r, lo, fmt)).tolist():
        mismatches.append((tuple(c[i] for c in cols), r[i], lo[i]))
    for i in np.flatnonzero(ok & ~known).tolist():   # too close to call in float64: ask arb itself
        args = tuple(float(c[i]) for c in cols)
        z = rigorous.evaluate(f, args, fmt)
        if z is None or round_bits(float(r[i]), fmt) != z[0]:
            mismatches.append((args, r[i], z))
    return CheckResult(name, fmt.name, len(y), int(ok.sum()), mismatches, worst)
