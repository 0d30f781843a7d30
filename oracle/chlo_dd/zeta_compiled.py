"""zeta.py's double-word Hurwitz zeta compiled (numba,
oracle/kernels/zeta_dd.py): the same float64 operations on each element
in the same order — so the same bits, held to zeta._zeta (the statement,
which stays) in tests/oracle/test_chlo_dd_zeta.py — one element at a time
in registers instead of numpy's pass over a chunk per operation (a
double-word product is about ten passes).

What is written twice, and why: dd.py's error-free transformations and
double-word operations, ddpow's log and exp and zeta's bracket are spelt
again in kernels/zeta_dd.py as scalar functions.  numpy's versions work on
whole arrays (`.view`, fancy indexing) that numba cannot compile per
element, and numba's cache is keyed on the compiled function's own file:
a kernel calling into dd.py would keep dd.py's old code from the cache
after an edit there.  The bit-for-bit test against zeta._zeta (both
plans, the domain's corners and random points) is what keeps the two
spellings one rule.  The domain is zeta.py's (1 < s <= 16, 2^-20 <= q <=
2^40); callers pass only elements inside it.
"""
from __future__ import annotations

import numpy as np

from .. import chlo_compiled
from . import ddpow

MIN_ELEMENTS = 1 << 12   # below this the numpy route (the kernel's first load in a process costs ~0.1 s)


def _kernel():
    from ..kernels import zeta_dd
    return zeta_dd.zeta_loop


def serves(n: int) -> bool:
    """Whether the compiled kernel takes n elements (numba here, n >= MIN_ELEMENTS)."""
    return n >= MIN_ELEMENTS and chlo_compiled.available()


def values(s: np.ndarray, q: np.ndarray, plan, cells: tuple, per_unit: int) -> tuple:
    """(h, lo) of zeta._zeta(s, q, plan), the same bits, for elements
    inside zeta.py's domain (float64 arrays); `cells`: zeta.cells(plan),
    `per_unit`: zeta.CELLS."""
    zs, bh, bl, bf, g1 = cells
    t = ddpow.tables()
    s, q = np.ascontiguousarray(s, dtype=np.float64), np.ascontiguousarray(q, dtype=np.float64)
    out_h, out_l = np.empty_like(s), np.empty_like(s)
    _kernel()(s, q, out_h, out_l, zs, float(per_unit), bh, bl, bf, g1[0], g1[1], plan.j, plan.jd,
              (t["c"], t["gh"], t["gl"], t["l2h"], t["l2l"]), (t["th"], t["tl"], t["c1"], t["c2"], t["c3"], t["inv"]),
              np.empty(plan.jd), np.empty(plan.jd))
    return out_h, out_l
