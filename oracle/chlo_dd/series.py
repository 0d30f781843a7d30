"""Exact coefficients the double-word Euler–Maclaurin kernels share."""
from __future__ import annotations

from fractions import Fraction


def bernoulli(m: int) -> list:
    """B_0 … B_m as exact rationals (Akiyama–Tanigawa; B_1 = +1/2 — the
    kernels use only the even ones, so its sign convention does not matter)."""
    out, a = [], []
    for k in range(m + 1):
        a.append(Fraction(1, k + 1))
        for j in range(k, 0, -1):
            a[j - 1] = j * (a[j - 1] - a[j])
        out.append(a[0])
    return out
