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
"""
from __future__ import annotations

import math

import numpy as np

from ..spec import geev
from ..spec.expectation import Expectation
from ..spec.kinds.residual import RESIDUAL

APART = ("compare of xGEEV's eigenvalues with a value outside every disc their criterion allows them "
         "(oracle/eigenvalues.py): no passing backend's value equals it")


def combine(inst, inputs: list, outs: list, primary: list) -> list | None:
    """The exact result of `compare` EQ / NE between "geev.values" and an exact
    value outside every disc, else None."""
    from .chains import exact, tag
    if inst.spec.mnemonic != "compare" or len(inputs) != 2 or len(outs) != 1:
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
