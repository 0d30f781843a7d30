"""ζ(s, q) in float64 for 1 < s <= 12, q > 0: the float64 evaluation that
f32 and narrower results of chlo.zeta and chlo.polygamma take
(real_functions._hurwitz_em: its bound 2^-47, its docstring's analysis),
computed with the same float64 operations on each element in the same
order, only scheduled differently — so its values are the same bits
(held in tests/oracle/test_chlo_dd_zeta_float64.py), about twice as fast:

* _SUB elements at a time, so that the ~60 whole-array temporaries of the
  twenty Bernoulli terms stay in cache (measured on 2^18 elements: 202 ns
  an element on whole arrays, 114 in chunks of 8192);
* the direct terms Σ_{k<N} (q + k)^-s on prefixes of the elements sorted
  by N (term k's elements are the first m_k), where _hurwitz_em gathers
  and scatters the elements with k < N for every k (114 → 102 ns).

Each element's sum is accumulated in the same order (acc = 0, then + the
k = 0, 1, … terms, then the tail added last), so sorting changes nothing
but where in the array an element sits; numpy's float64 +, -, *, / are
IEEE operations and its ** is one elementwise kernel, whose value does
not depend on an element's position.

Wired in: real_functions._zeta calls `hurwitz_em` in place of
`_hurwitz_em` (which stays, as the statement this is held to).  f32, f16
and bf16 results of zeta and polygamma take it only for the elements
oracle/chlo_fast_zeta.py's cheaper first stage leaves (about 1 in 1000).
"""
from __future__ import annotations

import mpmath
import numpy as np

_SUB = 8192
_EM_Z = 12
with mpmath.workdps(40):
    _EM_B = [float(mpmath.bernoulli(2 * j) / mpmath.factorial(2 * j)) for j in range(1, 21)]


def _chunk(s, q):
    """_hurwitz_em's arithmetic on one chunk, direct terms on sorted prefixes."""
    n = np.where(q < _EM_Z, np.ceil(_EM_Z - q), 0.0)
    order = np.argsort(-n.astype(np.int16), kind="stable")
    s, q, n = s[order], q[order], n[order]
    m = len(s) - np.cumsum(np.bincount(n.astype(np.int64), minlength=_EM_Z + 1))[:-1]
    acc = np.zeros_like(q)
    for k, mk in enumerate(m.tolist()):
        if not mk:
            break
        acc[:mk] += (q[:mk] + k) ** -s[:mk]
    z = q + n
    d = s - 1
    z1s = z ** -d
    u = s * (z1s / z) / z
    tail = np.zeros_like(q)
    for j, b in enumerate(_EM_B, start=1):
        tail += b * u
        u = u * ((s + 2 * j - 1) * (s + 2 * j)) / (z * z)
    out = np.empty_like(q)
    out[order] = acc + (z1s / d + (z1s / z) / 2 + tail)
    return out


def hurwitz_em(s, q):
    """ζ(s, q) for 1 < s <= 12 and q > 0 (float64 arrays): the values of
    real_functions._hurwitz_em, bit for bit (module docstring)."""
    s, q = np.asarray(s, dtype=np.float64), np.asarray(q, dtype=np.float64)
    out = np.empty_like(q)
    for a in range(0, len(q), _SUB):
        c = slice(a, a + _SUB)
        out[c] = _chunk(s[c], q[c])
    return out
