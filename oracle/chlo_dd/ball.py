"""The last vectorised-route step for f64 results of CHLO's special
functions: one arb ball per element left undecided, at a fixed working
precision, decided in place where the ball proves the rounding.

Why here and not MPFR or the per-element route: measured on this machine
(python-flint 0.9, gmpy2, 2,000 random arguments each over the benches'
ranges, Python's per-call costs included), arb at 80 bits takes 1.6 µs an
element for lgamma, 3.2 for digamma, 3.3 for erf, 5.6 for erfc, 4.3 for
erfinv, 12 for i1e, 19 for polygamma and 26 for the Hurwitz zeta, against
MPFR's 6.4 (lngamma), 6.1 (digamma), 8.3 (erf) and 49 µs (erfc), and
25-60 µs for the per-element route (fn, resolve, rigorous.evaluate from
73 bits with its conversions through mpmath), which is where erfinv, i1e,
polygamma and zeta went.  An element this step cannot prove (its ball
still holds a rounding boundary at 80 bits, about 2^-20 of those it sees)
goes on to MPFR or that route, as before.

The decision needs no trust in any conversion: m is the midpoint of arb's
ball B (FLINT's contract: B holds the true value) read as a float64 by any
rounding, and the element is decided only where every point of B lies
strictly within h of m, h half the gap from m to its nearer neighbour
(at a power of two, the gap below, the smaller one) — then the true value
rounds to m to nearest, ties never arising.  The bound is formed in arb:
(B - m).abs_upper() rounds upward.  Only normal results far from binary64's
limits (2^-1000 <= |m| <= 2^1000), and only finite nonzero arguments
(where the op modules state the special values, as fast.mpfr_correct
leaves them), are decided.
"""
from __future__ import annotations

import math

import numpy as np
from flint import arb, ctx

PREC = 80          # bits: about 2^-20 of the elements the long double pass leaves are still undecided
_LO, _HI = 2.0 ** -1000, 2.0 ** 1000


def rounded(b: arb) -> float | None:
    """The binary64 value every point of ball b rounds to (to nearest), or
    None where b is not finite, not inside the normal range above, or not
    strictly inside one rounding interval (module docstring)."""
    if not b.is_finite():
        return None
    m = float(b.mid())
    a = abs(m)
    if not _LO <= a <= _HI:
        return None
    h = math.ulp(a) * (0.25 if math.frexp(a)[0] == 0.5 else 0.5)
    return m if (b - m).abs_upper() < h else None


def undecided_with_finite_nonzero_args(args: list, ok: np.ndarray) -> np.ndarray:
    """Indices of the elements not yet `ok` whose every argument is finite
    and nonzero: the others' special values are the op's module's to state
    (IEEE's signed zeros, which arb and mpmath do not have)."""
    todo = np.flatnonzero(~ok)
    for a in args:
        x = a[todo]
        todo = todo[np.isfinite(x) & (x != 0)]
    return todo


def correct(arb_fn, args: list, ok: np.ndarray, r: np.ndarray, prec: int = PREC) -> None:
    """Decide the elements not yet `ok` of f64 results of arb_fn (arb
    arguments -> arb ball) by one ball each at `prec` bits, in place; the
    others stay undecided.  args: float64 arrays."""
    todo = undecided_with_finite_nonzero_args(args, ok)
    if not len(todo):
        return
    cols = [a[todo].tolist() for a in args]
    old, ctx.prec = ctx.prec, prec
    try:
        for i, xs in zip(todo.tolist(), zip(*cols)):
            m = rounded(arb_fn(*[arb(v) for v in xs]))
            if m is not None:
                r[i] = m
                ok[i] = True
    finally:
        ctx.prec = old
