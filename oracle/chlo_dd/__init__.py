"""f64 results of CHLO's special functions: the steps fast.py takes for the
elements the long double pass (oracle/chlo_long_double/) leaves undecided —
about 2-5% of them, those within that pass's bound (2^-58..2^-59.5) of a
binary64 rounding boundary — before MPFR and the per-element route.

1. A double-word refinement (`REFINE`): the function in float64 pairs with
   error-free transformations (dd.py) and a proven relative bound far below
   the long double pass's (polygamma.py: 2^-84), on the undecided elements
   only, decided by ddfast.decide; it leaves about none.
2. One arb ball per element still left, at 80 bits (ball.py): 2-25 µs an
   element where MPFR or the per-element route took 6-60.

Every function here has a first pass of its own
(`lead`, LEAD; fast.evaluate runs it before the long double pass, which
then sees only the elements it leaves and those outside its domain):
* erf, erfc, i1e, lgamma and digamma for x > 0: Taylor cells in double
  words with an error bound proven per cell in arb (taylor.py, cells.py);
* erf_inv: the same over |y| < 1/2 and over w = 1 - |y| (erfinv.py);
* lgamma and digamma for -10.5 <= x < 1/2: one table per pole over
  r = x + m, the singular part -log|r| or -1/r added in double words
  near the pole (poles.py);
* polygamma for n = 1 … 4 and 2^-7 <= x < 2^10 (polygamma_cells.py);
* zeta: the Hurwitz zeta in double words (zeta.py, Euler–Maclaurin with
  powers exp(-s·log b) of ddpow.py) for 1 < s <= 16 and 2^-20 <= q <=
  2^40, in two plans (DECIDED: zeta.decided): FAST on every element
  (proven bound 2^-66.5, decided at 2^-62.5), PRECISE on the 1 in 500 it
  leaves (2^-76.5, decided at 2^-72.5) — the long double pass cost about
  1.5 µs an element there (powl).  PRECISE is also zeta's REFINE kernel,
  for the route without the first pass (the FPU not rounding to nearest
  skips both).
The Taylor-cell passes run and are decided taylor.CHUNK elements at a
time (`CHUNKS`, `DECIDED`), in cache; they leave about 1 element in 10^5
of the benches' ranges.

Each decision is proven — by the bound in the kernel's docstring, or by
arb's enclosure — and held against arb in tests/oracle/test_chlo_dd*.py;
decided values are the correctly rounded ones, so the oracle's results do
not change, only the time they take (bench/chlo_vs_tanh.py).
"""
from __future__ import annotations

import numpy as np

from .. import ddfast
from . import ball, cells, erfinv, polygamma, polygamma_cells, poles, zeta

# name -> kernel(args as float64 arrays) -> (h, lo, bound, domain mask)
REFINE: dict = {"polygamma": polygamma.pair, "zeta": zeta.pair}
# name -> the same kind of kernel, run on every element before the long double pass (`lead`)
# (zeta's returns (h, lo, bound, mask); the Taylor cells' (taylor.py) (h, lo, rel, abs, mask), per element)
LEAD: dict = {"zeta": zeta.pair_fast, "erfinv": erfinv.pair, **{name: cells.pair(name) for name in cells.SPECS},
              "lgamma": poles.pair("lgamma"), "digamma": poles.pair("digamma"), "polygamma": polygamma_cells.pair}
# name -> kernel(float64 argument arrays) -> (decided mask, values): a LEAD kernel that decides its
# chunks itself (`lead` takes it where there is one; LEAD's kernel states the same with its bounds)
DECIDED: dict = {"lgamma": poles.decided("lgamma"), "digamma": poles.decided("digamma"), "zeta": zeta.decided}
# name -> LEAD's kernel on one chunk of at most taylor.CHUNK elements (`lead` runs and decides these
# chunk by chunk, in cache)
CHUNKS: dict = {"erfinv": erfinv.chunk, "polygamma": polygamma_cells.chunk,
                **{name: cells.chunk(name) for name in ("erf", "erfc", "i1e")}}
# the step for a LEAD kernel with no CHUNKS or DECIDED entry — none at present: zeta's is
# DECIDED (zeta.decided runs its plans zeta._SUB = 8192 elements at a time, as this did: measured
# 11% faster than whole arrays of 2^18; 4096 and 65536 slower)
ZETA_CHUNK = 8192
BALL = frozenset({"erf", "erfc", "erfinv", "lgamma", "digamma", "polygamma", "zeta", "i1e"})


def serves(name: str) -> bool:
    return name in REFINE or name in BALL


def leads(name: str) -> bool:
    """Whether `name` has a first pass here (fast.evaluate asks, for f64
    results, with the FPU rounding to nearest); off with `serves`."""
    return name in LEAD and serves(name)


def lead(name: str, args: list) -> tuple:
    """(decided mask, binary64 values) of f64 results of `name` by its
    LEAD kernel and ddfast.decide, on whole argument arrays (float64,
    broadcast together, flattened): decided only inside the kernel's
    domain and where the proven bound puts the value strictly inside one
    rounding interval.  The rest is for fast._evaluate's route.  The
    kernels run and are decided a chunk at a time (taylor.CHUNK elements,
    ZETA_CHUNK for zeta), so that the temporaries stay in cache (measured:
    a decision over 2^20 elements at once cost a third of erf_inv's pass)."""
    cols = [np.asarray(a, dtype=np.float64).reshape(-1) for a in np.broadcast_arrays(*args)]
    if name in DECIDED:
        return DECIDED[name](cols)
    n = len(cols[0])
    kernel = CHUNKS.get(name, LEAD[name])
    step = cells.taylor.CHUNK if name in CHUNKS else ZETA_CHUNK
    ok, r = np.empty(n, dtype=bool), np.empty(n)
    with np.errstate(all="ignore"):
        for a in range(0, n, step):
            c = slice(a, a + step)
            got = kernel([col[c] for col in cols])
            if len(got) == 4:
                h, lo, bound, inside = got
                d, v = ddfast.decide(h, lo, bound)
            else:
                h, lo, rel, ab, inside = got
                d, v = ddfast.decide(h, lo, rel, ab)
            ok[c] = d & inside
            r[c] = v
    return ok, r


def refine(name: str, arb_fn, args: list, ok: np.ndarray, r: np.ndarray) -> None:
    """Decide, in place, elements of f64 results of `name` not yet `ok`:
    by the double-word kernel where there is one (and the FPU rounds to
    nearest), then by arb balls (module docstring).  args: float64 arrays."""
    kernel = REFINE.get(name)
    if kernel is not None and ddfast.rounds_to_nearest():
        todo = np.flatnonzero(~ok)
        if len(todo):
            with np.errstate(all="ignore"):
                h, lo, bound, inside = kernel([a[todo] for a in args])
                d, v = ddfast.decide(h, lo, bound)
            d &= inside
            ok[todo[d]] = True
            r[todo[d]] = v[d]
    if name in BALL and not ok.all():
        ball.correct(arb_fn, args, ok, r)
