"""How much an expectation decides: the width of what it admits, and whether that is narrow enough to mean anything.

A verdict of "agrees" says the output lies inside the set the spec
allows.  That only tells a right answer from a wrong one when the set is
narrow: an enclosure of ±1 around an LSTM's hidden state admits the zero
vector and the negated one.  So every judged output states its width, and
an output whose enclosure is too wide is **inconclusive** — a verdict of
its own, never "agrees" — and one whose values the oracle does not state
at all ("any value" alternatives: a result downstream of a property the
spec defines it by) is **unchecked**, never "exact".

The measure, per element: the enclosure's half-width relative to the
magnitude of the oracle's value, where that magnitude is taken no smaller
than the format's smallest normal number (`(hi − lo) / 2 / max(|value|,
min_normal)`: an element whose enclosure is one value has width 0; one
that spans a range around 0 is measured against min_normal), and its
width in ULPs of the output format (`hi − lo` in the format's order).
Why the floor: below min_normal a format has no relative precision to
speak of — the standard error model of floating point rounds with a
relative error u *plus* an absolute one of at most u·min_normal (Higham,
Accuracy and Stability of Numerical Algorithms, 2nd ed., §2.1, eq. 2.8),
so an enclosure a few subnormal ULPs wide around 0 (a softmax's
underflowed tail) is as tight as the format can state, while one of
±1e-30 around 0 in f32 (cancellation) is still ±10^8 relative to
min_normal, unresolved.  Complex elements take the wider component.  An
element is *resolved* when its relative half-width is at most `RESOLVED`;
an output is *conclusive* when its median checked element is.  Why the
median: a few elements near zero (cancellation) are legitimately wide in
relative terms, and the mismatch check still holds every element to its
own enclosure; but when half the elements could be off by more than
`RESOLVED`, "agrees" would claim more than was checked.  By the same
reading an output whose elements are mostly "any value" is not
conclusive either: a scatter-add whose rows take more duplicate updates
than the orders are enumerated for (an embedding's gradient) had 272 of
its 320 elements unchecked and was called "agrees".

An infinity is measured as the format's largest finite value (a
tolerance around an overflowed result, [max − 3 ulp, inf], is a few ULPs
wide; [1, inf] is half the range).

Why 2^-6 (≈1.6 %): a bf16 result within a few ULPs (2^-8 relative each)
stays resolved, while the gross wrong answers — zeros, a flipped sign, a
result scaled by a few percent — cannot pass as resolved agreement.  The
smallest uniform scaling the enclosure catches is printed beside it
(`scaling_caught`), so a user sees exactly what "agrees" rules out.

The enclosure itself is the kind's (`spec.kinds.Kind.enclosure`); a kind
that states no range of values (a residual property, a distribution) has
no width here and its own verdict stands — unless its rule still accepts
the oracle's own answer scaled by 1 ± RESOLVED (`Kind.catches_scaling`: a
residual bound loose for f32 least squares): then it cannot tell that
wrong answer from a right one, and the output is inconclusive too.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..spec.expectation import Expectation
from ..spec.types import from_bits, from_ordinals, ordinal_distance
from .kinds import kind_of

RESOLVED = 2.0 ** -6
PROPERTY_SEARCH_FLOOR = 2.0 ** -16      # a property's smallest scaling caught: halved from RESOLVED down to this
PROPERTY_SEARCH_ELEMENTS = 1 << 16      # ... for outputs up to this size (each step judges the output twice)


@dataclass
class Resolution:
    """The width of one output's expectation (module docstring)."""

    elements: int
    unchecked: int = 0                 # elements the oracle states no value for ("any value")
    stated: bool = True                # False: the kind states no range (residual, statistical)
    rel_median: float = 0.0            # relative half-width over the checked elements
    rel_max: float = 0.0
    ulp_median: float = 0.0            # width in ULPs (hi − lo in the format's order)
    ulp_max: float = 0.0
    unresolved: int = 0                # checked elements wider than RESOLVED
    scaling_caught: float | None = None   # the smallest s for which both 1 + s and 1 − s are ruled out
    property_loose: bool = False       # a property (no range) that the reference scaled by 1 ± RESOLVED still meets
    offered: int = 0                   # checked elements that named alternatives let take another value
    choices: int = 1                   # the most values such an element may take

    @property
    def checked(self) -> int:
        return self.elements - self.unchecked

    @property
    def all_unchecked(self) -> bool:
        return self.elements > 0 and self.unchecked == self.elements

    @property
    def mostly_unchecked(self) -> bool:
        return self.unchecked * 2 > self.elements

    @property
    def conclusive(self) -> bool:
        if self.mostly_unchecked or self.property_loose:
            return False
        return not self.stated or self.rel_median <= RESOLVED

    def describe(self) -> str:
        """One line: the width and what it leaves open."""
        if self.all_unchecked:
            return "unchecked: the oracle states no value for any element (any value)"
        if not self.stated:
            if self.property_loose:
                return (f"judged by its property, whose bound the oracle's own answer scaled by "
                        f"±{_pct(RESOLVED)} still meets: too loose to tell")
            if self.scaling_caught is not None:
                return (f"judged by its property, not by a range of values; catches a scaling by "
                        f"{_pct(self.scaling_caught)}")
            return "judged by its property, not by a range of values"
        parts = []
        if self.rel_max == 0:
            parts.append("enclosure: one value per element" if not self.offered else
                         "enclosure: the stated value per element, or an alternative the spec allows")
        else:
            parts.append(f"enclosure ±{_pct(self.rel_median)} median ({self.ulp_median:g} ulp), "
                         f"±{_pct(self.rel_max)} widest ({self.ulp_max:g} ulp)")
        if self.scaling_caught == 0 and self.rel_max > 0:   # "a scaling by 0%" read as catching none
            parts.append("catches any scaling (an element's enclosure ends at its value, each way)")
        elif self.scaling_caught is not None and self.rel_max > 0:
            parts.append(f"catches a scaling by {_pct(self.scaling_caught)}")
        if self.unresolved:
            parts.append(f"{self.unresolved} of {self.checked} elements wider than ±{_pct(RESOLVED)}")
        if self.offered:
            parts.append(f"{self.offered} of {self.elements} elements one of up to {self.choices} values "
                         f"(implementation-defined alternatives)")
        if self.unchecked:
            parts.append(f"{self.unchecked} of {self.elements} elements unchecked (any value)")
        return "; ".join(parts)


def _pct(x: float) -> str:
    if not np.isfinite(x):
        return "∞"
    return f"{x * 100:.3g}%"


def _any_value_elements(e: Expectation, n: int) -> np.ndarray:
    """Which flat elements an "any value" alternative covers."""
    out = np.zeros(n, dtype=bool)
    for alt in e.alternatives:
        if alt.bits is None and alt.elements:
            out[np.asarray(alt.elements, dtype=np.int64)] = True
    return out


def _offered(e: Expectation, unchecked: np.ndarray) -> tuple[int, int]:
    """(checked elements whose named alternatives hold another value than
    the primary one, the most distinct values one element may take): a
    choice the spec leaves to the implementation widens what "agrees"
    admits, so the line says so."""
    named = [np.reshape(a.bits, -1) for a in e.alternatives if a.bits is not None]
    if not e.impl_defined or not named:
        return 0, 1
    idx = np.asarray(e.impl_defined, dtype=np.int64)
    idx = idx[~unchecked[idx]]
    if not len(idx):
        return 0, 1
    rows = [np.reshape(e.bits, (len(unchecked), -1))] + [np.reshape(b, (len(unchecked), -1)) for b in named]
    if rows[0].shape[1] == 1:   # one word an element: sort the candidates of every element at once
        srt = np.sort(np.stack([r[idx, 0] for r in rows]), axis=0)
        distinct = 1 + (srt[1:] != srt[:-1]).sum(axis=0)
    else:                       # complex: element by element
        distinct = np.array([len({r[i].tobytes() for r in rows}) for i in idx])
    return int((distinct > 1).sum()), int(distinct.max())


def resolution(e: Expectation) -> Resolution:
    """The width of `e` (module docstring)."""
    et = e.type.element_type
    n = int(np.prod(e.type.shape, dtype=np.int64))
    unchecked = _any_value_elements(e, n)
    res = Resolution(n, int(unchecked.sum()))
    res.offered, res.choices = _offered(e, unchecked)
    kind = kind_of(e)
    ends = kind.enclosure(e)
    if ends is None:
        res.stated = False
        caught = kind.catches_scaling(e, RESOLVED)
        res.property_loose = caught is False
        if caught and n <= PROPERTY_SEARCH_ELEMENTS:   # how fine a scaling the property still refuses
            s = RESOLVED
            while s > PROPERTY_SEARCH_FLOOR and kind.catches_scaling(e, s / 2):
                s /= 2
            res.scaling_caught = s
        return res
    c = et.component if et.is_complex else et
    if not c.is_float:
        # integers: an enclosure of one value is exact; a range is rare (none today) and measured in units
        lo, hi = (np.asarray(x).astype(float) for x in ends)
        width = (hi - lo).reshape(n, -1).max(axis=1) if n else np.zeros(0)
        keep = ~unchecked
        res.ulp_median = float(np.median(width[keep])) if keep.any() else 0.0
        res.ulp_max = float(width[keep].max()) if keep.any() else 0.0
        return res
    lo_o, hi_o = ends
    value, lo, hi, rel = _relative(e, c, ends)
    ulps = ordinal_distance(np.asarray(lo_o), np.asarray(hi_o))
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        mag = np.abs(value)
        up = np.where(value > 0, (hi - value) / mag, (value - lo) / mag)      # (1 + s)·value leaves [lo, hi]
        down = np.where(value > 0, (value - lo) / mag, (hi - value) / mag)    # (1 − s)·value does
    nan = np.isnan(value) | np.isnan(lo) | np.isnan(hi)
    ulps[nan] = 0.0
    if n == 0:
        return res
    rel, ulps = rel.reshape(n, -1).max(axis=1), ulps.reshape(n, -1).max(axis=1)
    keep = ~unchecked
    if not keep.any():
        return res
    r, u = rel[keep], ulps[keep]
    res.rel_median, res.rel_max = float(np.median(r)), float(r.max())
    res.ulp_median, res.ulp_max = float(np.median(u)), float(u.max())
    res.unresolved = int((r > RESOLVED).sum())
    scale = (~nan & (value != 0) & np.isfinite(value)).reshape(n, -1).all(axis=1) & keep
    if scale.any():
        ups, downs = up.reshape(n, -1).max(axis=1)[scale], down.reshape(n, -1).max(axis=1)[scale]
        res.scaling_caught = float(max(ups.min(), downs.min()))   # both 1 + s and 1 − s caught
    return res


def _relative(e: Expectation, c, ends) -> tuple:
    """(value, lo, hi, relative half-width) per real component, float64 —
    the module docstring's measure; 0 where any of them is NaN."""
    value = from_bits(np.reshape(e.bits, -1), c).astype(np.float64)
    lo = from_bits(from_ordinals(ends[0], c), c).astype(np.float64)
    hi = from_bits(from_ordinals(ends[1], c), c).astype(np.float64)
    big = float(c.format.max_finite)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        # an infinity measured as the largest finite value: [max − 4 ulp, inf] around inf is 4 ulp wide, not
        # inf/inf (NaN, which made the median NaN and an overflowing power's output inconclusive), while
        # [1, inf] around inf is half the range wide
        clo, chi, cv = np.clip(lo, -big, big), np.clip(hi, -big, big), np.clip(value, -big, big)
        half = (chi - clo) / 2
        rel = np.where((half == 0) | (lo == hi), 0.0, half / np.maximum(np.abs(cv), float(c.format.min_normal)))
    rel[np.isnan(value) | np.isnan(lo) | np.isnan(hi)] = 0.0
    return value, lo, hi, rel


def resolved_elements(e: Expectation) -> np.ndarray | None:
    """Per element, whether its enclosure is within RESOLVED (the widest
    component of a complex one); None where the kind states no range or
    the type is not a float."""
    ends = kind_of(e).enclosure(e)
    et = e.type.element_type
    c = et.component if et.is_complex else et
    if ends is None or not c.is_float:
        return None
    n = int(np.prod(e.type.shape, dtype=np.int64))
    rel = _relative(e, c, ends)[3]
    return rel.reshape(n, -1).max(axis=1) <= RESOLVED if n else np.zeros(0, dtype=bool)


def allowance_used(e: Expectation, actual) -> float | None:
    """How much of its enclosure the farthest element of `actual` used: per
    element, the distance from the oracle's value to the backend's, as a
    fraction of the distance from the oracle's value to the enclosure's end
    on that side ((y − c)/(hi − c) above, (c − y)/(c − lo) below; 0 where
    y = c).  Why: the ULP distance from the oracle's value says little
    where the enclosure is wide in ULPs but tight in value (an element near
    zero after cancellation: a few million ULPs of f32 around 1e-9 in a
    result of size 1); the fraction says how close the output came to
    being refused, the same way at every magnitude.  None where the kind
    states no range, the type is not a float, or no element is checked;
    above 1 only for an output that disagrees."""
    kind = kind_of(e)
    ends = kind.enclosure(e)
    et = e.type.element_type
    c = et.component if et.is_complex else et
    if ends is None or not c.is_float:
        return None
    n = int(np.prod(e.type.shape, dtype=np.int64))
    keep = ~_any_value_elements(e, n)
    y = np.asarray(actual)
    if et.is_complex:
        y = np.stack([y.real, y.imag], axis=-1)
    y = y.astype(np.float64).reshape(-1)
    value = from_bits(np.reshape(e.bits, -1), c).astype(np.float64)
    lo = from_bits(from_ordinals(ends[0], c), c).astype(np.float64).reshape(-1)
    hi = from_bits(from_ordinals(ends[1], c), c).astype(np.float64).reshape(-1)
    if not (y.size == value.size == lo.size == hi.size):
        return None
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        span = np.where(y >= value, hi - value, value - lo)
        frac = np.where(y == value, 0.0, np.abs(y - value) / span)
    frac = frac.reshape(n, -1).max(axis=1) if n else frac
    frac = frac[keep & np.isfinite(frac)] if n else frac
    return float(frac.max()) if frac.size else None
