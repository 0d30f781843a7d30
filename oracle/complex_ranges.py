"""Complex ranges carried soundly: boxes through the ops that mix a complex value's components.

A complex "bounded" expectation is a box: each component inside its own
[lo, hi] (spec/kinds/bounded.py).  oracle/propagation.py carries ranges by
running the op on the corners of its ranged operands, and a corner moves
both components of a complex operand to the same end.  That is sound for
ops that act on each component alone, in one direction (add, subtract,
negate, real, imag, complex, convert, data movement, select; a reduction
whose body is add: each component a separable sum, nondecreasing in every
term, schedule allowance included — spec/schedule.py `sum_range`).  It is
not for ops that mix the components: |z| over a box is smallest at the
point nearest the origin, which need not be a corner, and re(z·w) =
zᵣwᵣ − zᵢwᵢ rises with zᵣ and falls with zᵢ where wᵢ > 0.  This module
states those ops' results from interval arithmetic instead (`carry`,
called by propagation.carry before its corners):

* **abs** (complex → real): |z| ∈ [√(min zᵣ² + min zᵢ²), √(max zᵣ² + max zᵢ²)]
  over the box;
* **multiply**, **divide** (complex): the box of z·w = (zᵣwᵣ − zᵢwᵢ) +
  i(zᵣwᵢ + zᵢwᵣ), and of z/w = z·w̄/|w|² (z/wᵣ per component where w is
  real: imaginary range exactly [0, 0]) — interval arithmetic, every
  product and quotient at the vertices;
* **reduce** with a multiply body and the identity 1 + 0i as init: the
  product of the factors' boxes as discs (midpoint and radius: |z₁z₂ −
  c₁c₂| ≤ |c₁|r₂ + |c₂|r₁ + r₁r₂ — a rectangle rotated by each factor
  would grow √2-fold a step; a disc does not);
* **compare** (EQ, NE): where the operands' boxes are disjoint the answer
  is the primary's at every point of them; where they meet, any value.

Each op's own allowance at a point is then added over the whole box: an
approximate elementwise op (complex arithmetic, cabs: "approx", within T
ULPs per component of the correctly rounded exact value, spec/accuracy.py)
admits at x the values within T ordinals of round(f(x)), and rounding is
monotone, so the union over the box lies within T ordinals of
[round↓(lo), round↑(hi)] (`_stated`, the same reading as
spec.types.ulp_range); the product reduction admits, per component,
exact ± ((1 + 2γ(2))^(n−1) − 1)·Π(|re| + |im|) + (n−1)·2^(emin−p+1)·Π(…)
(spec/schedule.py `_complex_product`), bounded with each factor's largest
|re| + |im| over its box.  Every interval end is computed in float64 and
moved one ULP outward after each operation (round-to-nearest errs by at
most half an ULP), so the float64 intervals enclose the real ones.
Where a box holds a NaN, an infinity, or (divide) a denominator box holds
0, the element is any value, labelled (`UNCARRIED`).

Also here: **U's diagonal of a complex xGETRF, and L and U apart**
(`picked_elements`, called by propagation.carry first): where an op picks
elements of a complex "getrf.lu" result (JAX's gather in `jnp.linalg.det`,
`slogdet`; the selects of `jax.scipy.linalg.lu`), they are stated as the
boxes oracle/lu_diagonal.py `lu_elements_complex` encloses every l̂ᵢₖ and
ûₖⱼ in (the real ones are oracle/chains.py's `_picked_elements`); the
program's own arithmetic on them — abs, log, divide by
|u|, a product reduction of the phases, sum of the logs, exp, multiply — is
the ranged walk above and in propagation.py.  Ops with a complex ranged
operand not named here (complex exp, log, sqrt, trigonometric,
dot_general) keep propagation.py's corners, which are not sound for them
(a documented limit, not a claim of this module).
"""
from __future__ import annotations

import math

import numpy as np

from ..spec.expectation import Alternative, Expectation
from ..spec.kinds.bounded import BOUNDED
from ..spec.kinds.residual import RESIDUAL
from ..spec.types import TensorType, from_ordinals, ordinals, ulp_range
from .rounding import outward_bits

WHY = ("an input is approximate upstream: the range of the op over the inputs' complex boxes, by interval "
       "arithmetic (oracle/complex_ranges.py)")
UNCARRIED = ("any value: a complex range this op cannot be carried through here (a NaN or infinity in a box, "
             "a denominator box holding 0, a comparison whose boxes meet, or a partial product that may "
             "overflow; oracle/complex_ranges.py)")
PRIMARY = "the value on the correctly rounded inputs"
PICKED = ("{what} of a complex xGETRF's LU, picked out by data movement: a box holding every value any "
          "evaluation order of the factorisation can give (oracle/lu_diagonal.py lu_elements_complex; "
          "oracle/complex_ranges.py)")
NOT_PICKED = "{what} of a complex xGETRF's LU is not stated: {why}"


# --------------------------------------------------------------------------
# Float64 intervals, one ULP outward after every operation
# --------------------------------------------------------------------------

def _dn(x):
    return np.nextafter(x, -np.inf)


def _up(x):
    return np.nextafter(x, np.inf)


def _add(a, b):
    return _dn(a[0] + b[0]), _up(a[1] + b[1])


def _sub(a, b):
    return _dn(a[0] - b[1]), _up(a[1] - b[0])


def _mul(a, b):
    with np.errstate(over="ignore", invalid="ignore"):
        p = np.stack([a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]])
    return _dn(p.min(axis=0)), _up(p.max(axis=0))


def _square(a):
    """x² over [lo, hi]: 0 at the bottom where the interval holds 0."""
    with np.errstate(over="ignore"):
        l2, h2 = a[0] * a[0], a[1] * a[1]
    straddle = (a[0] <= 0) & (a[1] >= 0)
    return np.where(straddle, 0.0, _dn(np.minimum(l2, h2))), _up(np.maximum(l2, h2))


def _div(a, b):
    """a / b where b's interval holds no 0 (elsewhere NaN ends: flagged by the caller)."""
    zero = (b[0] <= 0) & (b[1] >= 0)
    safe = [np.where(zero, 1.0, x) for x in b]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        q = np.stack([a[0] / safe[0], a[0] / safe[1], a[1] / safe[0], a[1] / safe[1]])
    lo, hi = _dn(q.min(axis=0)), _up(q.max(axis=0))
    return np.where(zero, np.nan, lo), np.where(zero, np.nan, hi)


def _magnitude(re, im):
    """|z| over the box: [√(min re² + min im²), √(max re² + max im²)]; a
    bottom whose squares overflow falls back to the larger of the smallest
    |re| and |im| (a lower bound of |z| still)."""
    r2, i2 = _square(re), _square(im)
    lo = _dn(np.sqrt(_dn(r2[0] + i2[0])))
    hi = _up(np.sqrt(_up(r2[1] + i2[1])))
    floor = np.maximum(np.sqrt(r2[0]), np.sqrt(i2[0]))   # √ of a float64 square rounded down: at most |x|
    lo = np.where(np.isfinite(lo), lo, _dn(floor))
    return np.maximum(lo, 0.0), hi


def _cmul(z, w):
    re = _sub(_mul(z[0], w[0]), _mul(z[1], w[1]))
    im = _add(_mul(z[0], w[1]), _mul(z[1], w[0]))
    return re, im


def _cdiv(z, w):
    """z/w: per component by wᵣ where w's imaginary interval is exactly
    [0, 0] (JAX's u / |u|), else z·w̄ / |w|² — interval arithmetic both."""
    real = (w[1][0] == 0) & (w[1][1] == 0)
    den = _add(_square(w[0]), _square(w[1]))
    den = (np.where(den[0] > 0, den[0], 0.0), den[1])   # a denominator box reaching 0: NaN ends below
    re_g = _div(_add(_mul(z[0], w[0]), _mul(z[1], w[1])), den)
    im_g = _div(_sub(_mul(z[1], w[0]), _mul(z[0], w[1])), den)
    re_r, im_r = _div(z[0], w[0]), _div(z[1], w[0])
    pick = lambda r, g: (np.where(real, r[0], g[0]), np.where(real, r[1], g[1]))   # noqa: E731
    return pick(re_r, re_g), pick(im_r, im_g)


# --------------------------------------------------------------------------
# From expectations and back
# --------------------------------------------------------------------------

def _box(lo, hi):
    """((re_lo, re_hi), (im_lo, im_hi)) float64 arrays of complex ends (or real ends: im exactly 0)."""
    lo, hi = np.asarray(lo), np.asarray(hi)
    return ((lo.real.astype(np.float64), hi.real.astype(np.float64)),
            (lo.imag.astype(np.float64), hi.imag.astype(np.float64)))


def _finite(*parts) -> np.ndarray:
    ok = None
    for p in parts:
        for end in p:
            f = np.isfinite(end)
            ok = f if ok is None else ok & f
    return ok


def _stated(o: Expectation, parts: list, tolerance: int, wild: np.ndarray, note: str = WHY) -> Expectation:
    """`o` (the op on the primary values) as a bounded expectation: per
    component (`parts`: [(lo, hi)] for a real result, [re, im] for a
    complex one, float64 arrays of the result's shape) the interval rounded
    outward into the format, then `tolerance` ordinals further out
    (spec.types.ulp_range's reading of an approximate op's allowance);
    elements in `wild`, or whose ends are not finite, any value, labelled."""
    et = o.type.element_type
    c = et.component if et.is_complex else et
    shape = tuple(int(d) for d in o.type.shape)
    wild = np.broadcast_to(np.asarray(wild, dtype=bool), shape).copy()
    for lo, hi in parts:
        wild |= ~(np.isfinite(lo) & np.isfinite(hi))
    prim = np.asarray(o.bits).reshape(shape + ((2,) if et.is_complex else ()))
    los, his = [], []
    for k, (lo, hi) in enumerate(parts):
        lo = np.where(wild, 0.0, lo)
        hi = np.where(wild, 0.0, hi)
        lo_o = ulp_range(outward_bits(lo, c, True), c, tolerance)[0]
        hi_o = ulp_range(outward_bits(hi, c, False), c, tolerance)[1]
        own = prim[..., k] if et.is_complex else prim
        p = ordinals(np.reshape(own, -1), c)
        flat_wild = wild.reshape(-1)
        lo_o = np.where(flat_wild, p, lo_o)
        hi_o = np.where(flat_wild, p, hi_o)
        los.append(from_ordinals(lo_o, c).reshape(shape))
        his.append(from_ordinals(hi_o, c).reshape(shape))
    lo_b = np.stack(los, axis=-1) if et.is_complex else los[0]
    hi_b = np.stack(his, axis=-1) if et.is_complex else his[0]
    out = Expectation(o.type, o.bits, BOUNDED.name, bit_exact=False, impl_defined=list(o.impl_defined),
                      alternatives=list(o.alternatives), why="; ".join(w for w in (o.why, note) if w),
                      lo=lo_b.astype(et.bits_dtype), hi=hi_b.astype(et.bits_dtype))
    elements = [int(i) for i in np.nonzero(wild.reshape(-1))[0]]
    if elements:
        _any_at(out, elements)
    return out


def _any_at(out: Expectation, elements: list) -> None:
    out.impl_defined = sorted(set(out.impl_defined) | set(elements))
    if not out.alternatives:   # the first alternative names the primary value's choice
        out.alternatives.append(Alternative(PRIMARY, out.bits))
    out.alternatives.append(Alternative(UNCARRIED, None, elements))


def _ends_of(i: int, primary: list, ends: dict):
    lo, hi = ends[i] if i in ends else (primary[i], primary[i])
    return _box(lo, hi)


def _tolerance(inst, o: Expectation) -> int:
    """The op's allowance in ULPs per component (elementwise.py's reading:
    spec/accuracy.py for an "approx" op, else 0)."""
    from ..spec.accuracy import tolerance_ulp
    sem = inst.spec.semantics
    accuracy = getattr(sem, "accuracy_for", None)
    if accuracy is None:
        return 0
    return tolerance_ulp(o.type.element_type, getattr(sem, "tolerance", None)) if accuracy(inst) == "approx" else 0


# --------------------------------------------------------------------------
# The ops
# --------------------------------------------------------------------------

def _is_complex(v) -> bool:
    return not isinstance(v, tuple) and isinstance(v.type, TensorType) and v.type.element_type.is_complex


def carry(run_op, inst, inputs: list, outs: list, primary: list, ends: dict) -> list | None:
    """`outs` with the complex ranges of `inputs` carried soundly (module
    docstring) where the op mixes components and one of its ranged inputs
    is complex; None elsewhere (propagation.py's corners serve)."""
    if inst is None or not any(_is_complex(inputs[i]) for i in ends):
        return None
    name = inst.spec.mnemonic
    if len(outs) != 1 or isinstance(outs[0], tuple):
        return None
    o = outs[0]
    if name == "abs" and _is_complex(inputs[0]):
        re, im = _ends_of(0, primary, ends)
        return [_stated(o, [_magnitude(re, im)], _tolerance(inst, o), ~_finite(re, im))]
    if name in ("multiply", "divide") and o.type.element_type.is_complex:
        z, w = _ends_of(0, primary, ends), _ends_of(1, primary, ends)
        got = _cmul(z, w) if name == "multiply" else _cdiv(z, w)
        return [_stated(o, list(got), _tolerance(inst, o), ~_finite(*z, *w))]
    if name == "reduce":
        return _product(inst, inputs, o, primary, ends)
    if name == "compare":
        return _compare(inst, o, primary, ends)
    return None


def _product(inst, inputs: list, o: Expectation, primary: list, ends: dict) -> list | None:
    """A complex product reduction (module docstring), or None for another
    body (an add body: the corners are sound)."""
    from ..spec.schedule import gamma
    body = getattr(getattr(inst, "body", None), "pairwise", None)
    if len(inputs) != 2 or tuple(body or ()) != ("multiply",) or not o.type.element_type.is_complex:
        return None
    if 1 in ends or complex(np.asarray(primary[1]).reshape(())) != 1:   # not the identity: every element any value
        zero = np.zeros(tuple(int(d) for d in o.type.shape))
        return [_stated(o, [(zero, zero), (zero, zero)], 0, np.ones(zero.shape, dtype=bool))]
    x = np.asarray(primary[0])
    reduced = sorted(int(d) for d in inst.attributes["dimensions"])
    kept = [d for d in range(x.ndim) if d not in reduced]
    P = int(np.prod([x.shape[d] for d in kept], dtype=np.int64))
    L = int(np.prod([x.shape[d] for d in reduced], dtype=np.int64))
    (rl, rh), (il, ih) = (tuple(np.transpose(e, kept + reduced).reshape(P, L) for e in part)
                          for part in _ends_of(0, primary, ends))
    shape = tuple(int(d) for d in o.type.shape)
    wild = ~(np.isfinite(rl) & np.isfinite(rh) & np.isfinite(il) & np.isfinite(ih)).all(axis=1)
    with np.errstate(over="ignore", invalid="ignore"):
        cr, ci = (rl + rh) / 2, (il + ih) / 2
        rad = _up(np.hypot(np.maximum(_up(rh - cr), _up(cr - rl)), np.maximum(_up(ih - ci), _up(ci - il))))
        rad = rad * (1 + 2.0 ** -50)   # hypot within an ULP
        c = cr + 1j * ci
        C, R = np.ones(P, dtype=np.complex128), np.zeros(P)
        g64 = math.sqrt(2) * 2 * 2.0 ** -53 / (1 - 2 * 2.0 ** -53)   # a float64 complex product: √2·γ(2)·|a||b|
        for t in range(L):
            ac, at = np.abs(C) * (1 + 2.0 ** -50), np.abs(c[:, t]) * (1 + 2.0 ** -50)
            R = (ac * rad[:, t] + at * R + R * rad[:, t] + g64 * ac * at) * (1 + 2.0 ** -48) + 2.0 ** -1060
            C = C * c[:, t]
        fmt = o.type.element_type.component.format
        g2 = float(gamma(2, fmt)) * (1 + 2.0 ** -50)
        growth = math.expm1(max(L - 1, 0) * math.log1p(2 * g2)) * (1 + 2.0 ** -40)
        mag = np.prod(np.maximum(np.abs(rl), np.abs(rh)) + np.maximum(np.abs(il), np.abs(ih)), axis=1) \
            * (1 + (2 * L + 2) * 2.0 ** -52)
        threshold = float(fmt.max_finite) + float(fmt.ulp(fmt.max_finite)) / 2
        wild |= ~(mag * (1 + growth) * (1 + 2.0 ** -40) < threshold)   # spec/schedule.py: may overflow
        b = _up(_up(growth * mag) + _up(max(L - 1, 0) * float(fmt.min_subnormal) * mag))
        spread = _up(R + b)
        parts = [(_dn(C.real - spread), _up(C.real + spread)), (_dn(C.imag - spread), _up(C.imag + spread))]
    wild |= ~np.isfinite(spread)
    parts = [(lo.reshape(shape), hi.reshape(shape)) for lo, hi in parts]
    return [_stated(o, parts, 0, wild.reshape(shape))]


def _compare(inst, o: Expectation, primary: list, ends: dict) -> list:
    """EQ / NE of complex boxes: decided where the boxes are disjoint (the
    primary's answer holds at every point of them), any value where they
    meet; any other direction on complex operands: any value."""
    direction = str(inst.attributes.get("comparison_direction", "")).upper()
    z, w = _ends_of(0, primary, ends), _ends_of(1, primary, ends)
    shape = tuple(int(d) for d in o.type.shape)
    meet = np.ones(shape, dtype=bool)
    if direction.endswith("EQ") or direction.endswith("NE"):
        meet = ((z[0][0] <= w[0][1]) & (w[0][0] <= z[0][1]) & (z[1][0] <= w[1][1]) & (w[1][0] <= z[1][1])) \
            | ~_finite(*z, *w)
    elements = [int(i) for i in np.nonzero(np.asarray(meet).reshape(-1))[0]]
    if not elements:
        return [o]
    out = Expectation(o.type, o.bits, o.kind, impl_defined=list(o.impl_defined),
                      alternatives=list(o.alternatives), why="; ".join(w for w in (o.why, UNCARRIED) if w))
    _any_at(out, elements)
    return [out]


# --------------------------------------------------------------------------
# U's diagonal of a complex xGETRF
# --------------------------------------------------------------------------

def picked_elements(run_op, inst, inputs: list, outs: list, arrays: list | None) -> list | None:
    """[the output as a box per element] where the op picks elements out of
    a complex "getrf.lu" result (its lone free input) by data movement —
    U's diagonal (det, slogdet), or L's multipliers and U's entries apart
    (`jax.scipy.linalg.lu`), the other operands' elements put in at their
    values where those operands are exact (observed on numbered elements:
    oracle/numbering.py, as oracle/chains.py follows the real one); a
    labelled "any value" where lu_elements_complex states nothing; None
    where the op is not such a pick."""
    from . import characterized as ch, numbering
    from . import chains
    from .lu_diagonal import lu_elements_complex
    if inst is None or len(outs) != 1 or isinstance(outs[0], tuple):
        return None
    free = [i for i, v in enumerate(inputs) if ch.is_free(v)]
    if len(free) != 1:
        return None
    i = free[0]
    v, o = inputs[i], outs[0]
    if isinstance(v, tuple) or not RESIDUAL.judges(v) or not v.type.element_type.is_complex:
        return None
    rec = v.residual or {}
    if rec.get("property") != "getrf.lu" or o.type.element_type != v.type.element_type:
        return None
    primary = list(arrays) if arrays is not None else [_primary(x) for x in inputs]
    shape = tuple(int(d) for d in v.type.shape)

    def run(numbered):
        trial = list(primary)
        trial[i] = numbered[0]
        got = run_op(inst, trial)[0]
        return None if isinstance(got, tuple) or got.type != o.type else got.array()
    src = numbering.sources(run, [shape], v.type.element_type)
    if src is None or src.size == 0:
        return None
    whole = np.bincount(src[src >= 0], minlength=int(np.prod(shape, dtype=np.int64)))
    if (whole == 1).all():   # every element carried once: the factorisation's criterion still reads it
        return None
    picked = chains.elements_picked(rec, src)
    if picked is None:
        return None
    a, ta, flat, r, c = picked
    put_in = r < 0
    if put_in.any() and not all(chains.exact(x) for t, x in enumerate(inputs) if t != i):
        return None
    what = "U's diagonal" if not put_in.any() and (r == c).all() else "L's and U's elements"
    m, n = (int(d) for d in ta.shape[-2:])
    got = lu_elements_complex(a, ta.element_type, rec["attributes"]["pivots"])
    if isinstance(got, str):
        return [ch.unstated(o.type, o.bits, "; ".join(w for w in (v.why, ch.DOWNSTREAM,
                                                                  NOT_PICKED.format(what=what, why=got)) if w))]
    oshape = tuple(int(d) for d in o.type.shape)
    at = tuple(np.maximum(x, 0) for x in (flat, r, c))
    re_lo, re_hi, im_lo, im_hi = (x.reshape(-1, m, n)[at].reshape(oshape) for x in got)
    et = o.type.element_type
    lo = np.stack([outward_bits(re_lo, et.component, True), outward_bits(im_lo, et.component, True)], axis=-1)
    hi = np.stack([outward_bits(re_hi, et.component, False), outward_bits(im_hi, et.component, False)], axis=-1)
    own = np.asarray(o.bits).reshape(lo.shape)   # put in: the other operands' exact elements
    keep = put_in.reshape(oshape)[..., None]
    lo, hi = np.where(keep, own, lo), np.where(keep, own, hi)
    return [Expectation(o.type, o.bits, BOUNDED.name, bit_exact=False,
                        why="; ".join(w for w in (v.why, PICKED.format(what=what)) if w),
                        lo=lo.astype(et.bits_dtype), hi=hi.astype(et.bits_dtype))]


def _primary(v):
    return tuple(_primary(m) for m in v) if isinstance(v, tuple) else v.array()

