"""chlo_fast_zeta.py's loops (numba) around numpy's powers: N and z, the
elements with direct terms and their terms' bases, the Bernoulli tail and
the direct terms' sums.  What they compute and why the bound holds is
chlo_fast_zeta.py's docstring; module level for numba's cache
(oracle/kernels/__init__.py).

numpy's pow is SIMD (measured 3 ns an element; libm's pow from a compiled
loop 21 ns), so the powers stay numpy's, all of a chunk's in one call.
The loops over every element (`counts`, `tail`) touch two or three arrays
each and keep the rest in registers, so LLVM vectorises them (a pass that
wrote five arrays was not: 10 ns an element, its four divisions scalar;
`tail` is 3 ns with one).  The direct terms exist for about one element
in five (f32's plan, q uniform over (0, 30)); `compact` lists those, and
`bases` and `direct` loop over them alone, each element's terms
contiguous (a counting sort by N, to make the passes k-major, cost more
than it saved).  The loops write into arrays the caller allocates once a
call (allocating inside them cost 4× their arithmetic)."""
from __future__ import annotations

import math

import numpy as np

from . import jit


@jit
def counts(s, q, table, rows, z, n):
    """N = max(ceil(Z(s) - q), 0) per element (as a float, in `n`) and
    z = q + N.  Row floor(rows·s) + 1 >= ceil(rows·s) of the table (Z
    increases with s: still a bound)."""
    for i in range(s.size):
        k = max(math.ceil(table[np.int64(s[i] * rows) + 1] - q[i]), 0.0)
        z[i] = q[i] + k
        n[i] = k


@jit
def compact(n, sel, off):
    """The elements with N > 0 in `sel`, the offset of each one's first
    direct term in `off` (off[c] = ΣN); returns c, their count."""
    total = 0
    c = 0
    for i in range(n.size):
        if n[i] > 0:
            sel[c] = i
            off[c] = total
            total += np.int64(n[i])
            c += 1
    off[c] = total
    return c


@jit
def bases(s, q, sel, off, c, base, expo):
    """The direct terms' bases q + k (exact below 2^53) and exponents -s,
    element after element, k = 0 … N-1 within each."""
    for j in range(c):
        i = sel[j]
        qi, e, o = q[i], -s[i], off[j]
        for k in range(off[j + 1] - o):
            base[o + k] = qi + k
            expo[o + k] = e


@jit
def tail(s, z, z1s, bern, out):
    """z^(1-s)/(s-1) + z^-s/2 + the M Bernoulli terms (module docstring of
    chlo_fast_zeta), z1s = z^(1-s), M = len(bern): the terms summed from
    the first, then z^-s/2, then z^(1-s)/(s-1).  One division per element,
    r = 1/z; z^-s = z^(1-s)·r (z^-s·z would underflow first for huge z)."""
    for i in range(z.size):
        si = s[i]
        r = 1.0 / z[i]
        zs = z1s[i] * r
        w = r * r
        u = si * zs * r                       # (s)_1·z^(-s-1), the first Bernoulli term's power
        acc = bern[0] * u
        for k in range(2, len(bern) + 1):
            u *= (si + (2 * k - 3)) * (si + (2 * k - 2)) * w
            acc += bern[k - 1] * u
        acc += zs / 2
        out[i] = acc + z1s[i] / (si - 1)


@jit
def direct(sel, off, c, powers, out):
    """Adds Σ_k (q+k)^-s, summed in k's order, to each listed element."""
    for j in range(c):
        a = 0.0
        for k in range(off[j], off[j + 1]):
            a += powers[k]
        out[sel[j]] += a
