"""xGEEV's eigenvalues compared with a value they cannot equal.

`jnp.roots` asks which eigenvalues of its companion matrix are zero
(`compare EQ` with 0), sorts them by that flag and masks the rest: as long
as the flag is "any value", so is everything after it, and the roots were
UNCHECKED.  The criterion of "geev.values" (spec/geev.py) puts every value
a backend may return inside the union of the discs Dᵢ(t) (widened by the
record's slack): an exact comparand outside every disc is equal to no
value any passing backend returns.  So `compare` EQ (NE) of such values
with such a comparand is exactly false (true) everywhere — then the sort
moves the values by exact keys, which oracle/chains.py `moved` follows, and
the roots are judged by the order-free criterion itself.

A comparand inside some disc, another direction (LT on complex values is
not defined anyway), or values computed on first: nothing is claimed here.

**The spectral radius** (`jnp.max(jnp.abs(jnp.linalg.eigvals(w)))`: an echo
state network's reservoir scaled to radius ρ < 1, a linear system's
stability margin).  `abs` of the values is "any value" tagged "geev.abs"
(their order is free: no element alone has a range); a `reduce` maximum of
it over the eigenvalue axis is a range.  Every value lies in a disc of its
component, and a component of k discs holds k values (spec/geev.py), so
max |ŵ| ≤ maxᵢ (|λ̃ᵢ| + ρᵢ) and max |ŵ| ≥ max over components C of
minᵢ∈C (|λ̃ᵢ| − ρᵢ); a first-order disc Rᵢ holds one value, so max |ŵ| ≥
|λ̃ᵢ| − Rᵢ too.  `abs` of a complex value is approximate (the format's ULP
tolerance, spec/accuracy.py), which widens both ends by that many ULPs, and
the maximum is exact.
"""
from __future__ import annotations

import math

import numpy as np

from ..spec import geev
from ..spec.expectation import Expectation
from ..spec.kinds.residual import RESIDUAL

RADIUS = ("the largest |ŵ| of xGEEV's eigenvalues: every value a passing backend's set can give, by the discs' "
          "components (oracle/eigenvalues.py)")
ABS = "|ŵ| of xGEEV's eigenvalues, in the backend's order: any value alone (oracle/eigenvalues.py)"
APART = ("compare of xGEEV's eigenvalues with a value outside every disc their criterion allows them "
         "(oracle/eigenvalues.py): no passing backend's value equals it")


def combine(inst, inputs: list, outs: list, primary: list) -> list | None:
    """The exact result of `compare` EQ / NE between "geev.values" and an exact
    value outside every disc; |ŵ| tagged, and its maximum as a range (module
    docstring); else None."""
    from .chains import exact, tag
    name = inst.spec.mnemonic
    if name == "abs" and len(inputs) == 1 and len(outs) == 1 and not isinstance(inputs[0], tuple) \
            and RESIDUAL.judges(inputs[0]) and tag(inputs[0]).get("property") == "geev.values" \
            and not tag(inputs[0]).get("view"):
        from .characterized import unstated
        o = outs[0]
        return [unstated(o.type, o.bits, ABS, {"pending": "geev.abs", "of": tag(inputs[0])})]
    if name == "reduce":
        return _largest(inst, inputs, outs)
    if name != "compare" or len(inputs) != 2 or len(outs) != 1:
        return None
    direction = str(inst.attributes.get("comparison_direction", "")).upper()
    if direction not in ("EQ", "NE"):
        return None
    (o,) = outs
    for w, z in (inputs, inputs[::-1]):
        if isinstance(w, tuple) or isinstance(z, tuple) or not RESIDUAL.judges(w) or not exact(z):
            continue
        rec = tag(w)
        if rec.get("property") != "geev.values":
            continue
        view = rec.get("view")
        if view and (np.asarray(view["src"]) < 0).any():
            return None   # elements that are not eigenvalues beside them (a concatenation): nothing claimed
        values = np.unique(np.asarray(z.array()).astype(np.complex128).reshape(-1))
        if values.size != 1 or not np.isfinite(values).all():
            return None
        point = np.conj(values[0]) if rec.get("conj") else values[0]
        attrs = {**rec["attributes"], **({"slack": rec["slack"]} if rec.get("slack") is not None else {})}
        thr = float(attrs["threshold"])
        for d in geev.slack_discs(attrs):
            c = np.array([complex(*x) for x in d["centers"]], dtype=np.complex128)
            if c.size and (np.abs(c - point) * (1 - geev.MARGIN) <= geev.radii_at(d, thr) * (1 + 2.0 ** -30)).any():
                return None
            if not all(math.isfinite(x) for x in d["base"]):
                return None
        shape = tuple(int(x) for x in o.type.shape)
        return [Expectation.of(np.full(shape, direction == "NE"), o.type, why=APART)]
    return None


def _largest(inst, inputs: list, outs: list) -> list | None:
    """reduce maximum of "geev.abs" over its last axis (the eigenvalues of each
    matrix), its init at most every value: the range of the module docstring."""
    from ..spec.accuracy import tolerance_ulp
    from ..spec.schedule import monoid_ops
    from .chains import exact, tag
    from .spectral import bounded
    if len(inputs) != 2 or len(outs) != 1 or isinstance(inputs[0], tuple) or not exact(inputs[1]):
        return None
    t = tag(inputs[0])
    if not t or t.get("pending") != "geev.abs" or monoid_ops(inst.body, 1) != ("maximum",):
        return None
    x = inputs[0]
    rank = len(x.type.shape)
    if [int(d) for d in inst.attributes.get("dimensions", [])] != [rank - 1]:
        return None
    rec = t["of"]
    attrs = {**rec["attributes"], **({"slack": rec["slack"]} if rec.get("slack") is not None else {})}
    thr = float(attrs["threshold"])
    ends = [geev.radius_range(d, thr) for d in geev.slack_discs(attrs)]
    if any(e is None for e in ends):
        return None
    lo, hi = [e[0] for e in ends], [e[1] for e in ends]
    et = x.type.element_type
    ulp = tolerance_ulp(et) * 2.0 ** (1 - et.format.precision)   # |ŵ| within the tolerance of abs, relative
    init = float(np.asarray(inputs[1].array(), dtype=np.float64).reshape(-1)[0])
    o = outs[0]
    shape = tuple(int(d) for d in o.type.shape)
    lo = np.asarray(lo).reshape(shape) * (1 - ulp) * (1 - 2.0 ** -40)
    hi = np.asarray(hi).reshape(shape) * (1 + ulp) * (1 + 2.0 ** -40)
    if init > float(np.min(lo, initial=np.inf)):
        return None
    got = bounded(o, lo, hi, RADIUS)
    return None if got is None else [got]
