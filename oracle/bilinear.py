"""Ranges through bilinear ops (dot_general, convolution): interval arithmetic on whole arrays.

Corners (propagation.py) move a whole operand to one end of its range.
That bounds an op monotonic in each operand, but not a sum of products
Σₖ xₖ·yₖ whose other factors have mixed signs: the extremes of
sin(a)·1 + sin(b)·(−1) take sin(a) low and sin(b) high.  An op whose
semantics declare it bilinear in two operands (`dsl.Accumulating.bilinear`,
`bilinear_form`) has its range stated here instead (real float results;
complex ones still take corners).

What is stated.  x ∈ [x_lo, x_hi] and y ∈ [y_lo, y_hi] element-wise (the
ranges of the operands; a point where an operand is exact).  A conforming
implementation computes, at each result element, a value of the dot
product's own allowance at some x', y' of the box: [RD(s' − b'),
RU(s' + b')], s' = Σ x'y', b' = γ(n)·Σ|x'y'| + c₀ — spec/schedule.py's
`dot_range`, with n the op's count of products (padding holes included)
and c₀ = n·min_subnormal/2, γ and c₀ of the *result's* format: a
mixed-precision dot (bf16 × bf16 → f32) sums in the result type, whose
values hold the operands' exactly (`types.holds_every_value`; where they
do not, the operands are rounded first and corners take it).  The oracle
has stated that allowance at the primary point x₀, y₀ already, exactly
(the op's run on the correctly rounded inputs, oracle/accumulate.py:
lo₀ = RD(s₀ − b₀), hi₀ = RU(s₀ + b₀)); it is shifted here, not recomputed.  With dx = x' − x₀,
dy = y' − y₀, the box of the deviations written midpoint-radius
(dx ∈ [dm_x − dr_x, dm_x + dr_x], which holds 0, so |dm_x| ≤ dr_x and
|dx| ≤ 2·dr_x):

    s' − s₀ = Σ dx·y₀ + x₀·dy + dx·dy ∈ [C − R, C + R],
        C = Σ dm_x·y₀ + x₀·dm_y,
        R = Σ dr_x·(|y₀| + 2·|dy|max) + |x₀|·dr_y   (|dx·dy| ≤ dr_x·2·|dy|max)
    b' − b₀ = γ·(Σ|x'y'| − Σ|x₀y₀|) ≤ γ·D,
        D = Σ |dx|max·|y₀| + |x₀|·|dy|max + |dx|max·|dy|max ≤ 2R

so s' − b' ≥ s₀ − b₀ + C − R − 2γR and s' + b' ≤ s₀ + b₀ + C + R + 2γR,
and the range stated is [RD(lo₀ + δ_lo), RU(hi₀ + δ_hi)] with δ_lo ≤
C − (1 + 2γ)R ≤ 0 ≤ C + (1 + 2γ)R ≤ δ_hi (RD is monotone, lo₀ ≤ s₀ − b₀).
With one operand exact the interval part is the exact hull —
dm·y ± dr·|y| is [dm − dr, dm + dr]·y — and with both ranged it is wider
than the hull by second-order terms only.  Given up against the exact
extreme RD(min(s' − b')): γ·(2R − the allowance's true growth), small
beside R, and one step of the format per end (lo₀ is rounded already, so
any δ_lo < 0 moves the end one step): tests/oracle/test_bilinear_ranges.py
finds exactly that, 0 or 1 step, against the extremes computed by brute
force.  Where no deviation meets an element (its weights are 0) the
element keeps the dot's own statement, bit for bit.

Rigour of the evaluation (float64, u = 2^-53).  C and R are sums of one
`product` call per ranged operand each (the op's own bilinear form: a
BLAS matrix product, each element a sum of its n products in some order,
FMA or not — the assumption spec/bounds.py's stage 1 makes).  A call on
float64 arrays is within γ₆₄(n)·Σ|terms| + n·2^-1074 of its exact sum
(Higham §3.1; a product that underflows errs by at most 2^-1075), and
every call's Σ|terms| is at most R (|dm| ≤ dr).  So R ≤ R_up =
(R̂ + r·n·2^-1074)/(1 − r·γ₆₄(n)) for the r calls summed into R̂, each
call errs by at most e = γ₆₄(n)·R_up + n·2^-1074, Ĉ = RN(ΣC-calls) is
within c·e + u|Ĉ| of C, and the spread R_up + c·e + 2γ⁺·R_up + u|Ĉ|
(γ⁺ ≥ γ bracketed from its rational, `bounds.bracket`) covers R + 2γR
and Ĉ's error; δ_lo, δ_hi = Ĉ ∓ spread rounded outward (`bounds.add_dn`,
`add_up`).  Nonnegative quantities (radii, R_up, e, the spread) are
evaluated to nearest with at most 64 roundings and then inflated once,
×(1 + 2^-46) + 2^-1068 (`_up`: (1 + u)^64 < 1 + 2^-47; the constant covers
products that underflow).  The deviations: a = RN(x_lo − x₀) and
b = RN(x_hi − x₀) are within u|a|, u|b| of the exact differences;
dm = (a + b)/2 is any float64; dr = up(max(|b − dm|, |dm − a|) +
u(|a| + |b|)), so [dm − dr, dm + dr] holds [x_lo − x₀, x_hi − x₀];
|dx|max ≤ up(|dm| + dr).  The new ends: f64 results, lo₀ + δ_lo rounded
down exactly in float64 (TwoSum's error says which side the rounding
fell: `bounds.sum_dn`), which is RD in the format; narrower formats,
`add_dn` (a few float64 steps below) and then RD into the format
(`accumulate.directed_bits`) — below the exact RD only when the sum lies
within 2^-50 relative above a value of the format.  Past the largest
finite value, the format's end (±∞; f8E4M3FN's largest finite).

Classes.  An element where some point of the box may overflow —
Σ|x|max·|y|max·(1 + γ) at or past the format's threshold, enclosed upward
(asked of the whole array first, from the largest magnitudes, exactly in
rationals), or γ undefined — offers "any value", labelled, as `dot_range`
does where a partial sum may overflow.  So does an element whose sum
pairs a range reaching a non-finite value (an approximate value next to
overflow: ±∞ ∈ [x_lo, x_hi]) with anything, or an infinite point with a
range holding zero (∞·0), or whose evaluation overflows float64.  A NaN
point makes its elements NaN at every point of the box, an infinite point
facing ranges of one sign the same infinity: there the primary's
statement (NaN, ±∞) stands, as do the primary's labelled alternatives
(precision_config; padding holes facing ∞).

Cost: two `product` calls of the op's size per ranged operand (the
accumulation route itself takes two float64 products), one more where the
box may reach the overflow threshold (f16 with large values), and 0/1
indicator products only where a range reaches a non-finite value.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..spec.bounds import sum_dn, sum_up, add_dn, add_up, bracket, gamma, threshold
from ..spec.expectation import Alternative, Expectation
from ..spec.kinds import kind_of
from ..spec.kinds.bounded import BOUNDED
from ..spec.types import E_F64, from_bits, from_ordinals, holds_every_value, top_ordinal
from .accumulate import directed_bits

WHY = "an input is approximate upstream: range by interval arithmetic over the inputs' ranges (oracle/bilinear.py)"
NON_FINITE = "any value: the range of an approximate input reaches a non-finite value"
OVERFLOW = "any value: a partial result may overflow at some point of the inputs' ranges"
PRIMARY = "the value on the correctly rounded inputs"
_TINY = Fraction(1, 1 << 1074)   # per product: a float64 product's underflow error is at most half of it
_U = 2.0 ** -53
_INFLATE = 1 + 2.0 ** -46
_FLOOR = 2.0 ** -1068


def _up(v):
    """An upper bound of the exact value of a nonnegative expression that
    `v` evaluates, in float64 to nearest, from exact nonnegative operands
    with + × max and at most 64 roundings: each rounding is within u =
    2^-53 relative, so the exact value is at most v·(1 + u)^64 < v·(1 +
    2^-47); v·(1 + 2^-46), itself rounded, stays above that, and 2^-1068
    covers products that underflow (each loses at most 2^-1075)."""
    return v * _INFLATE + _FLOOR


def operands(inst) -> tuple[int, int] | None:
    """Positions of the two operands the op's result is bilinear in, as its
    semantics declare (`dsl.Accumulating.bilinear`); None where it declares
    none."""
    sem = inst.spec.semantics
    names = getattr(sem, "bilinear", ())
    if len(names) != 2 or getattr(sem, "bilinear_form", None) is None:
        return None
    order = [o.name for o in inst.spec.operands]
    if any(o.variadic for o in inst.spec.operands) or any(n not in order for n in names):
        return None
    return order.index(names[0]), order.index(names[1])


class _Side:
    """One operand: its primary values (non-finite ones as 0: their elements
    keep the primary's statement or are "any value") and, where ranged, the
    midpoint-radius form of its deviation from them (module docstring)."""

    def __init__(self, primary, ends):
        v0 = np.asarray(primary).astype(np.float64)   # exact: every format is a subset of binary64
        fin0 = np.isfinite(v0)
        self.v0 = v0 if fin0.all() else np.where(fin0, v0, 0.0)
        self.abs0 = np.abs(self.v0)
        self.ranged = False
        self.reach = self.zero = None
        self.inf_point = np.isinf(v0)
        if ends is None:
            return
        lo, hi = (np.asarray(e).astype(np.float64) for e in ends)
        with np.errstate(invalid="ignore", over="ignore"):
            point = (lo == hi) | (np.isnan(lo) & np.isnan(hi))
            ok = np.isfinite(lo) & np.isfinite(hi) & fin0 & ~point
            if not ok.all():
                lo, hi = np.where(ok, lo, self.v0), np.where(ok, hi, self.v0)
            # to nearest: within u of the exact differences (the box holds the primary: a ≤ 0 ≤ b)
            a, b = np.minimum(lo - self.v0, 0.0), np.maximum(hi - self.v0, 0.0)
            dm = (a + b) * 0.5                           # any value: dr below makes the ball cover
            dr = _up(np.maximum(np.abs(b - dm), np.abs(dm - a)) + (np.abs(a) + np.abs(b)) * _U)
            dmag = _up(np.abs(dm) + dr)
            ok &= np.isfinite(dmag)
        if not ok.all():
            dm, dr, dmag = (np.where(ok, v, 0.0) for v in (dm, dr, dmag))
        self.dm, self.dr, self.dmag = dm, dr, dmag
        self.ranged = bool(ok.any())
        self.reach = ~point & ~ok                        # a range reaching a non-finite value
        self.inf_point = point & self.inf_point
        self.zero = ok & (lo <= 0) & (hi >= 0)           # a range holding 0
        self.abs_max = _up(self.abs0 + dmag)             # ≥ max(|lo|, |hi|)


def carry(inst, outs: list, primary: list, ends: dict) -> list | None:
    """`outs` (the op on the primary values) with the ranges `ends` ({operand
    position: (low values, high values)}) carried through the op's declared
    bilinear form (module docstring); None where the op declares none or
    the types are not real floats (propagation.py then takes corners)."""
    pos = operands(inst)
    if pos is None or len(outs) != 1 or isinstance(outs[0], tuple) or any(i not in pos for i in ends):
        return None
    out = outs[0]
    et = out.type.element_type
    if et.is_complex or not et.is_float:
        return None
    if not all(holds_every_value(inst.operands[inst.spec.operands[p].name].element_type, et) for p in pos):
        return None   # operands rounded into the result type first (dot_general's f16 → bf16): corners
    form = inst.spec.semantics.bilinear_form(inst)
    if form is None:   # the instance's own bound is not the form's (dot_general's algorithm): corners
        return None
    n, product = form
    x, y = _Side(primary[pos[0]], ends.get(pos[0])), _Side(primary[pos[1]], ends.get(pos[1]))
    shape = np.shape(out.bits)
    size = int(np.prod(shape, dtype=np.int64))

    def P(a, b):
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            return np.asarray(product(a, b), dtype=np.float64).reshape(-1)

    wild = np.zeros(size, dtype=bool)
    every_x, every_y = np.ones(x.v0.shape, dtype=bool), np.ones(y.v0.shape, dtype=bool)
    for a, b in ((x.reach, every_y), (every_x, y.reach), (x.inf_point, y.zero), (x.zero, y.inf_point)):
        if a is not None and b is not None and a.any() and b.any():   # some sum pairs the two: counted exactly
            wild |= P(a.astype(np.float64), b.astype(np.float64)) > 0

    g = gamma(n, et.format)
    lo_b, hi_b = (np.reshape(v, -1) for v in kind_of(out).ends(out))
    over = None
    if g is not None and (x.ranged or y.ranged):
        d_lo, d_hi = _deviation(x, y, n, g, et, P)
        wild |= ~(np.isfinite(d_lo) & np.isfinite(d_hi))
        lo_b, hi_b = _shifted(lo_b, hi_b, d_lo, d_hi, et)
        over = _may_overflow(x, y, n, g, et, P)
    return [_stated(out, lo_b, hi_b, wild, over, shape)]


def _deviation(x: _Side, y: _Side, n: int, g: Fraction, et, P) -> tuple[np.ndarray, np.ndarray]:
    """(δ_lo, δ_hi) per result element: δ_lo ≤ C − (1 + 2γ)R ≤ C − R − γD
    and δ_hi ≥ C + (1 + 2γ)R (module docstring), from the op's product on
    whole arrays: two calls per ranged operand."""
    c_parts, r_parts = [], []
    if x.ranged:
        c_parts.append(P(x.dm, y.v0))
        # dr_x·|y₀| and the second-order |dx|·|dy| ≤ dr_x·2·|dy|max in one call
        r_parts.append((x.dr, (y.abs0 + 2 * y.dmag) * _INFLATE if y.ranged else y.abs0))
    if y.ranged:
        c_parts.append(P(x.v0, y.dm))
        r_parts.append((x.abs0, y.dr))
    # Where no term of R can underflow, R_hat = 0 says no deviation meets the element: its deviation is
    # exactly 0.  Narrow formats: a nonzero radius is at least half a step of the format (≥ 2^-150), a
    # nonzero value or bound at least its smallest subnormal (≥ 2^-149), so every nonzero term is ≥ 2^-300.
    exact_zero = et.format.precision <= 24 or all(_least(a) * _least(b) >= 2.0 ** -1021 for a, b in r_parts)
    r_parts = [P(a, b) for a, b in r_parts]
    c, r = len(c_parts), len(r_parts)
    g64 = gamma(n, E_F64.format)
    up = lambda q: float(bracket(q, np.float64)[1])   # noqa: E731  (a float64 at or above the rational)
    with np.errstate(over="ignore", invalid="ignore"):
        R_hat = r_parts[0] if r == 1 else r_parts[0] + r_parts[1]
        R_up = _up((R_hat + up(r * n * _TINY)) * up(1 / (1 - r * g64)))   # ≥ R: the calls' errors included
        e = _up(R_up * up(g64) + up(n * _TINY))                             # each call's error (its Σ|terms| ≤ R)
        C = c_parts[0] if c == 1 else c_parts[0] + c_parts[1]              # within c·e + u|C| of the exact C
        spread = _up(R_up + e * c + R_up * up(2 * g) + np.abs(C) * _U)     # D ≤ 2R (module docstring)
        if exact_zero:
            spread = np.where(R_hat == 0, 0.0, spread)
        return add_dn(C, -spread), add_up(C, spread)


def _least(a: np.ndarray) -> float:
    """The smallest nonzero magnitude in `a` (inf where all are 0)."""
    nz = a[a != 0]
    return float(np.abs(nz).min()) if nz.size else math.inf


def _shifted(lo_b, hi_b, d_lo, d_hi, et) -> tuple[np.ndarray, np.ndarray]:
    """Bits of RD(lo₀ + δ_lo) and RU(hi₀ + δ_hi); an end that is not finite
    (NaN, ±∞: the primary's special values) stays.  δ_lo ≤ 0 ≤ δ_hi (R
    covers |C|), so the new range holds the primary's.  f64: the sum
    rounded exactly outward in float64 (TwoSum), which is the format;
    narrower formats: a little outward (`add_dn`), then into the format."""
    fmt = et.format
    top_v = float(fmt.max_finite)
    top_o = top_ordinal(fmt)
    exact = fmt.precision > 24
    out = []
    for b, dv, direction in ((lo_b, d_lo, -1), (hi_b, d_hi, 1)):
        v = from_bits(b, et).astype(np.float64)
        fin = np.isfinite(v) & np.isfinite(dv)
        if not fin.all():
            v, dv = np.where(fin, v, 0.0), np.where(fin, dv, 0.0)
        with np.errstate(invalid="ignore", over="ignore"):
            if direction < 0:
                s = sum_dn(v, dv) if exact else add_dn(v, dv)
            else:
                s = sum_up(v, dv) if exact else add_up(v, dv)
        got = directed_bits(np.clip(s, -top_v, top_v), et, direction)
        past = (s < -top_v) if direction < 0 else (s > top_v)   # the format's end: ±∞, or f8E4M3FN's largest
        if past.any():
            got = np.where(past, from_ordinals(np.array([direction * top_o]), et)[0], got)
        out.append(got if fin.all() else np.where(fin, got, b))
    return out[0], out[1]


def _may_overflow(x: _Side, y: _Side, n: int, g: Fraction, et, P) -> np.ndarray | None:
    """Elements where some point of the box may overflow a partial sum:
    Σ|x|max·|y|max·(1 + γ) at or past the threshold, enclosed upward; None
    where none can (asked first of the whole array, exactly in rationals,
    from the largest magnitudes: no product call in the usual case)."""
    xa = x.abs_max if x.ranged else x.abs0
    ya = y.abs_max if y.ranged else y.abs0
    if n == 0 or xa.size == 0 or ya.size == 0:
        return None
    T = threshold(et.format)
    xm, ym = float(xa.max()), float(ya.max())
    if math.isfinite(xm) and math.isfinite(ym) and n * Fraction(xm) * Fraction(ym) * (1 + g) < T:
        return None
    g64 = gamma(n, E_F64.format)
    up = lambda q: float(bracket(q, np.float64)[1])   # noqa: E731
    with np.errstate(invalid="ignore", over="ignore"):
        M = _up((P(xa, ya) + up(n * _TINY)) * up(1 / (1 - g64)))   # ≥ Σ|x|max·|y|max: one call's error included
        return ~(_up(M * up(1 + g)) < float(bracket(T, np.float64)[0]))


def _stated(out: Expectation, lo_b, hi_b, wild, over, shape) -> Expectation:
    """The bounded expectation: the primary's value and labelled
    alternatives, the range, and "any value" where `wild` or `over`."""
    taken = np.zeros(len(wild), dtype=bool)
    for alt in out.alternatives:
        if alt.bits is None and alt.elements:
            taken[np.asarray(alt.elements, dtype=np.int64)] = True
    adds = []
    for label, mask in ((NON_FINITE, wild), (OVERFLOW, None if over is None else over & ~wild)):
        if mask is not None and mask.any():
            elements = np.flatnonzero(mask & ~taken).tolist()
            if elements:
                adds.append(Alternative(label, None, elements))
    flat = np.reshape(out.bits, -1)
    if kind_of(out).pinned and not adds and np.array_equal(lo_b, flat) and np.array_equal(hi_b, flat):
        return out   # nothing moved: no range met a nonzero, or every range is a point
    new = Expectation(out.type, out.bits, BOUNDED.name, out.tolerance_ulp, False, list(out.impl_defined),
                      list(out.alternatives), "; ".join(w for w in (out.why, WHY) if w),
                      lo=np.reshape(lo_b, shape), hi=np.reshape(hi_b, shape))
    if adds:
        new.impl_defined = sorted(set(new.impl_defined) | {i for a in adds for i in a.elements})
        if not new.alternatives:   # the first alternative names the primary value's choice
            new.alternatives.append(Alternative(PRIMARY, out.bits))
        new.alternatives.extend(adds)
    return new
