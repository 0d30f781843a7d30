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
from . import ddfast, fast, rigorous
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
    if name == "polygamma":   # integer n >= 1, x > 0 (x < 0 is the mpmath loop's: real_functions)
        x = v[v > 0]
        return [rng.integers(1, 9, n).astype(np.float64), rng.choice(x, n)]
    if name == "zeta":   # x > 1, q > 0: the series' domain (q < 0 is the mpmath loop's); arb's
        # 160-bit ball is slow for huge x and wide for tiny q (tests/oracle/test_chlo_fast.py goes there)
        # (random bit patterns of f64 hardly ever fall in (1, 64): s is drawn there uniformly instead)
        s = v[(v > 1) & (v < 64)]
        return [rng.choice(s, n) if len(s) >= 16 else rng.uniform(1, 64, n), rng.choice(v[v > 2.0 ** -10], n)]
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
    elif name in ("erfinv", "atanh"):
        v = v[np.abs(v) < 1]
    elif name in ("asin", "acos"):
        v = v[np.abs(v) <= 1]
    elif name == "acosh":
        v = v[v > 1]
    elif name in ("lgamma", "digamma"):   # poles and exact values are the op's
        v = v[v != np.round(v)]
    v = v[v != 0]
    return [rng.choice(v, n, replace=False) if len(v) > n else v]



def exact_arb(v) -> arb:
    """A float64 or long double value as an exact arb (64 significand bits
    suffice for both)."""
    m, e = np.frexp(np.longdouble(v))
    return arb((int(np.ldexp(m, 64)), int(e) - 64))


def relative_error(f, args: tuple, y, precisions=(160, 640, 2560), accurate_bits: int = 80) -> float:
    """An upper bound on |y - f(args)| / |y| from arb's ball for f, its
    precision raised through `precisions` until the ball carries
    `accurate_bits` (f(args) near a zero or huge takes more); y (float64 or
    long double) read exactly.  Raises AssertionError where the ball stays
    wide — the caller's points are then not ones arb can settle."""
    old = ctx.prec
    try:
        for prec in precisions:
            ctx.prec = prec
            b = TABLE[f].arb(*[arb(a) for a in args])
            if b.is_finite() and b.rel_accuracy_bits() >= accurate_bits:
                yb = exact_arb(y)
                return float(((yb - b).abs_upper() / yb.abs_lower()).upper())
    finally:
        ctx.prec = old
    raise AssertionError(f"arb's ball for {TABLE[f].name}{args} stays wide")


def check(f, fmt: FloatFormat, cols: list) -> CheckResult | None:
    """None where the fast path has no evaluation of f for `fmt`
    (fast.working_for: f64 results of scipy's float64 functions)."""
    name = TABLE[f].name
    if fast.working_for(f, fmt) is None:
        return None
    dtype, _, tiny = fast.working(fmt)
    with np.errstate(all="ignore"):
        y = np.asarray(TABLE[f].numpy_for(dtype)(*[np.asarray(c, dtype=dtype) for c in cols]), dtype=dtype)
    ref_lo, ref_hi, rel = _reference(f, cols, y)
    normal = np.isfinite(y) & (np.abs(y) >= tiny) & np.isfinite(ref_lo)
    worst = float(rel[normal].max()) if normal.any() else 0.0
    bound = fast.bound_for(f, fmt)
    ok, r = fast.decide(y, fmt, [np.asarray(c, dtype=dtype) for c in cols], bound)
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


# --------------------------------------------------------------------------
# f64 results: the double-double pass (ddfast.py)
# --------------------------------------------------------------------------

DD_RANGES = {"exp": (-708, 709), "expm1": (-708, 709), "log": (0, 2.0 ** 1023), "log1p": (-1, 2.0 ** 1000),
             "sin": (-2.0 ** 19, 2.0 ** 19), "cos": (-2.0 ** 19, 2.0 ** 19), "tanh": (-300, 300)}


def dd_inputs(f, n: int, rng) -> list:
    """Arguments for ddfast's kernel of f: a quarter each uniform over its
    domain, uniform over [-20, 20] (the domain's part near 0), random
    magnitudes 2^-70 .. 2^12 of both signs, random bit patterns; then the
    n/8 nearest to a binary64 rounding boundary (by the kernel's own pair)
    of 4n uniform ones over [-20, 20] — where a decision has least room."""
    name = TABLE[f].name
    lo, hi = DD_RANGES[name]
    q = n // 4
    top = min(hi, 2.0 ** 20)
    parts = [rng.uniform(max(lo, -top), top, q), rng.uniform(-20, 20, q),
             rng.choice([-1.0, 1.0], q) * np.exp2(rng.uniform(-70, 12, q)),
             rng.integers(0, 1 << 64, q, dtype=np.uint64).view(np.float64)]
    pool = rng.uniform(-20, 20, 4 * n)
    h, l, _, _, ok = ddfast.pair(name, pool)
    with np.errstate(all="ignore"):
        r = h + l
        room = np.abs((np.spacing(np.abs(r)) / 2 - np.abs((h - r) + l)) / r)
    parts.append(pool[np.argsort(np.where(ok, room, np.inf))[: n // 8]])
    x = np.concatenate(parts)
    x = x[np.isfinite(x) & (x > lo) & (x < hi) & (x != 0)]
    return [x]


def check_dd(f, cols: list) -> CheckResult | None:
    """ddfast's pass for f64 results of f against arb, as `check` does for
    the working-format pass: the largest error of its pair h + lo against
    arb's 160-bit ball, as a share of the bound it claims (reported as
    worst_rel_error = that share times REL, bound = REL, so bound /
    worst_rel_error is the margin), and every decision it makes held
    against arb: confirmed when arb's ball lies within half the gap to r's
    nearer neighbour of r, else by rigorous.evaluate.  None where ddfast
    has no kernel for f."""
    name = TABLE[f].name
    if name not in ddfast.KERNELS or len(cols) != 1:
        return None
    x = np.asarray(cols[0], dtype=np.float64)
    rel = ddfast.KERNELS[name][1]
    h, lo, scale, ab, dom = ddfast.pair(name, x)
    ok, r = ddfast.decide(h, lo, rel, ab, scale)
    ok &= dom
    ab = np.broadcast_to(np.asarray(ab, dtype=np.float64), x.shape)
    sc = np.zeros(len(x), dtype=np.int64) if scale is None else scale.astype(np.int64)
    with np.errstate(all="ignore"):
        gap = np.minimum(np.abs(np.nextafter(r, np.inf) - r), np.abs(r - np.nextafter(r, -np.inf)))
    g = TABLE[f].arb
    worst = 0.0
    mismatches = []
    old, ctx.prec = ctx.prec, 160
    try:
        for i in np.flatnonzero(dom & np.isfinite(h) & np.isfinite(lo)).tolist():
            b = g(arb(float(x[i])))
            if not b.is_finite():
                continue
            two = arb(2) ** int(sc[i])
            v = (arb(float(h[i])) + arb(float(lo[i]))) * two
            bound = abs(v).upper() * rel + arb(float(ab[i])) * two
            if bound > 0:
                worst = max(worst, float(((v - b).abs_upper() / bound).upper()))
            if ok[i] and not ((b - arb(float(r[i]))).abs_upper() < arb(float(gap[i])) / 2):
                z = rigorous.evaluate(f, (float(x[i]),), F64)
                if z is None or round_bits(float(r[i]), F64) != z[0]:
                    mismatches.append(((float(x[i]),), r[i], z))
    finally:
        ctx.prec = old
    return CheckResult(name, "f64 dd", len(x), int(ok.sum()), mismatches, worst * rel, rel)
