"""Kind "residual": the output has the property the spec defines it by
(cholesky's factor, triangular_solve's solution; LAPACK's factorisations
read from JAX's custom_calls, spec/lapack.py), checked with a stated
bound — no element is expected.

`residual` holds what the op's criterion needs (`spec.dsl.Characterized.
record`): the op (or `property`, spec/lapack.py), its attributes, its
operands as type + hex, a `view` where data movement moved the value; and the
criterion in words, its threshold, the reference's own measure, the
problem's condition number.  The judge rebuilds the op instance and its
operands from it and calls the op's `criterion` on the actual output: the
verdict is the criterion's (the measured ratio against the threshold, the
enclosure of the ratio deciding).  `bits` is the oracle's reference — high
precision, rounded — from which the ULP distance is measured and shown over
the elements the criterion reads; it never decides.

Where the program itself sets the elements the criterion does not read
(`residual["fixed"]`, oracle/characterized.py: JAX's `select(tril, L, 0)`
after xPOTRF), those elements must equal the expectation's values — a factor
returned with LAPACK's leftovers in the other triangle fails there.
Where the seed makes the behaviour undefined on these operands
(`residual["undefined"]`: a matrix not positive definite, a singular
system), every output passes, labelled `UNDEFINED`, and whether it has the
property as LAPACK reads the operands is reported as a second label (a
survey case's "known behaviour")."""
from __future__ import annotations

import numpy as np

from ..types import nan_mask, ordinal_distance, ordinals, to_bits
from . import OMIT_DEFAULT, Comparison, Kind, KindField, register

UNDEFINED = "undefined behaviour: any result"
KNOWN = "the property as LAPACK reads the operands: {}"


class Residual(Kind):
    name = "residual"
    fields = (KindField("residual", None, OMIT_DEFAULT, order=60),)   # the property and its inputs
    element_wise = False
    ulp_measures = False
    used_words = "the criterion's ratio is {}% of its threshold"

    def describe(self, e) -> str:
        r = e.residual or {}
        kappa = r.get("condition")
        cond = f"; condition number κ₁ {kappa if isinstance(kappa, str) else format(kappa, '.3g')}" \
            if kappa is not None else ""
        head = f"residual: {r.get('statement', '?')} ≤ {r.get('threshold', float('nan')):g}{cond}"
        return head + (f" — undefined here ({r['undefined']}): any result passes" if r.get("undefined") else "")

    def judge(self, e, actual):
        # Deferred: spec/lapack.py reads spec/ops (every op's spec), and spec/expectation.py imports every kind
        # for its fields — reading a record need not load the ops; judging a residual does.
        from ..lapack import measure
        m = measure(e.residual, e.type, np.asarray(actual))   # an op's criterion or a LAPACK property's
        ulp = _ulp(e, np.asarray(actual), m.scored)
        if e.residual.get("undefined"):
            return Comparison(True, ulp, [], 0, [UNDEFINED, KNOWN.format("met" if m.ok else "not met")],
                              m.detail, meaningful_ulp=ulp)
        moved = _fixed_moved(e, np.asarray(actual), m.scored)
        ok = m.ok and not moved
        detail = "; ".join(d for d in ("" if m.ok else m.detail, moved) if d)
        return Comparison(ok, ulp, [], 0 if ok else 1, [], detail, meaningful_ulp=ulp, used=_share(m))

    def catches_scaling(self, e, s):
        """The reference (the oracle's high-precision solution, rounded)
        scaled by 1 ± s, judged by the criterion: a bound too loose to refuse
        both says so.  Undefined behaviour passes everything, by the seed."""
        et = e.type.element_type
        if e.residual.get("undefined") or e.bits is None or not (et.is_float or et.is_complex):
            return None
        ref = np.asarray(e.array())
        with np.errstate(all="ignore"):
            wide = ref.astype(np.complex128 if et.is_complex else np.float64)
            scaled = [(wide * (1 + f)).astype(ref.dtype) for f in (s, -s)]
        return not any(self.judge(e, a).ok for a in scaled)

    def check(self, e):
        return None, ("expectation 'residual' (a property of the whole output with a bound, e.g. "
                      "‖A − L·Lᴴ‖/(n·‖A‖·ε)): no check op of the interpreter's test format states one")


FIXED = ("{n} element(s) the criterion does not read differ from the values the program fixes there (e.g. the "
         "zeros of `select(tril, L, 0)`): first at flat index {at}, {got} instead of {want}")


def _fixed_moved(e, actual: np.ndarray, scored) -> str:
    """Where the record is `fixed` (oracle/characterized.py `_kept_record`:
    the program sets the elements the criterion does not read, whatever the
    factor holds), those elements must be the expectation's own values —
    ±0 alike (a factor's rows negated, signs free, carry −0 into them), NaN
    for NaN; '' where they are, else what differs."""
    if not e.residual.get("fixed") or scored is None or e.bits is None:
        return ""
    et = e.type.element_type
    c = et.component if et.is_complex else et
    width = 2 if et.is_complex else 1
    eb = np.asarray(e.bits).reshape(-1, width)
    ab = to_bits(actual, et).reshape(-1, width)
    flat_e, flat_a = np.asarray(e.array()).reshape(-1), actual.reshape(-1)
    same = (eb == ab).all(axis=1)
    if c.is_float:
        with np.errstate(invalid="ignore"):
            same |= (flat_e == flat_a) | (nan_mask(eb, c.format) & nan_mask(ab, c.format)).all(axis=1)
    bad = ~same & ~np.broadcast_to(scored, actual.shape).reshape(-1)
    if not bad.any():
        return ""
    at = int(np.argmax(bad))
    return FIXED.format(n=int(bad.sum()), at=at, got=flat_a[at], want=flat_e[at])


def _share(m) -> float | None:
    """The measured ratio as a share of its threshold: how close the output
    came to being refused — the figure a property-judged output has in place
    of an enclosure's (a sign- or order-free result's ULP distance from the
    reference says nothing of it)."""
    with np.errstate(all="ignore"):
        share = float(m.value) / float(m.threshold) if m.threshold else None
    return share if share is not None and np.isfinite(share) else None


def _ulp(e, actual: np.ndarray, scored) -> float | None:
    """The largest ULP distance from the reference over the elements the
    criterion reads (per component for complex; a NaN on one side only
    counts as infinitely far, NaN on both as 0) — shown, never judged."""
    et = e.type.element_type
    c = et.component if et.is_complex else et
    if not c.is_float or actual.size == 0:
        return None
    width = 2 if et.is_complex else 1
    eb = np.asarray(e.bits).reshape(-1, width)
    ab = to_bits(actual, et).reshape(-1, width)
    en, an = nan_mask(eb, c.format), nan_mask(ab, c.format)
    dist = np.where(en & an, 0.0, np.where(en | an, np.inf, ordinal_distance(ordinals(eb, c), ordinals(ab, c))))
    dist = dist.max(axis=1)
    if scored is not None:
        dist = dist[np.broadcast_to(scored, actual.shape).reshape(-1)]
    return float(dist.max()) if dist.size else None


RESIDUAL = register(Residual())
