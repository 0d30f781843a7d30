"""chlo_fast_zeta.py's loops (numba) around numpy's powers: N, the direct
terms' bases in the order of k, their sums and the Bernoulli tail.  What
they compute and why the bound holds is chlo_fast_zeta.py's docstring;
module level for numba's cache (oracle/kernels/__init__.py).

numpy's pow is SIMD (measured 3 ns an element; libm's pow from a compiled
loop 21 ns), so the powers stay numpy's, all of a chunk's in one call.
Each pass here is element-inner (the loops LLVM vectorises: an
element-outer loop with an inner loop over k measured 18 ns an element),
and the loops write into arrays the caller allocates once a call
(allocating inside them cost 4× their arithmetic)."""
from __future__ import annotations

import math

import numpy as np

from . import jit


@jit
def counts(s, q, table, rows, n, z):
    """N = max(ceil(Z(s) - q), 0) per element, z = q + N; returns
    (max N, ΣN).  Row floor(rows·s) + 1 >= ceil(rows·s) of the table (Z
    increases with s: still a bound)."""
    top = total = 0
    for i in range(s.size):
        k = max(math.ceil(table[np.int64(s[i] * rows) + 1] - q[i]), 0.0)
        n[i] = np.int64(k)
        z[i] = q[i] + k
        top = max(top, n[i])
        total += n[i]
    return top, total


@jit
def bases(s, q, n, m_k, order, qs, base, expo):
    """The elements with N > 0 ordered by N, largest first (a counting
    sort into `order`, their q in `qs`), and the direct terms' bases
    q + k (exact below 2^53) and exponents -s, k after k: term k of
    the first m_k ordered elements, m_k the number with N > k.
    Returns how many elements have N > 0."""
    top = m_k.size
    cnt = np.zeros(top + 1, np.int64)
    for i in range(n.size):
        cnt[n[i]] += 1
    start = np.empty(top + 1, np.int64)
    above = 0
    for v in range(top, 0, -1):
        start[v] = above
        above += cnt[v]
        m_k[v - 1] = above
    for i in range(n.size):
        v = n[i]
        if v > 0:
            j = start[v]
            start[v] = j + 1
            order[j], qs[j], expo[j] = i, q[i], -s[i]
    off = 0
    for k in range(top):
        for j in range(m_k[k]):
            base[off + j] = qs[j] + k
            expo[off + j] = expo[j]
        off += m_k[k]
    return above


@jit
def sums(s, z, z1s, order, m_k, powers, bern, m, out, acc, zs, w, u):
    """Σ_k (q+k)^-s in k's order, then z^(1-s)/(s-1) + z^-s/2 + the M
    Bernoulli terms (module docstring), z1s = z^(1-s), added as the
    numpy chunk added them."""
    acc[:order.size] = 0.0
    off = 0
    for k in range(m_k.size):
        for j in range(m_k[k]):
            acc[j] += powers[off + j]
        off += m_k[k]
    for i in range(z.size):
        zs[i] = z1s[i] / z[i]                 # z^-s (z^-s·z would underflow first for huge z)
        w[i] = 1 / (z[i] * z[i])
        u[i] = s[i] * zs[i] / z[i]            # (s)_1·z^(-s-1), the first Bernoulli term's power
        out[i] = bern[0] * u[i]
    for k in range(2, m + 1):
        a, b, c = float(2 * k - 3), float(2 * k - 2), bern[k - 1]
        for i in range(z.size):
            u[i] *= (s[i] + a) * (s[i] + b) * w[i]
            out[i] += c * u[i]
    for i in range(z.size):
        out[i] += zs[i] / 2
        out[i] += z1s[i] / (s[i] - 1)
    for j in range(order.size):
        out[order[j]] += acc[j]
