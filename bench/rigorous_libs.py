"""Per-element cost of the candidate rigorous evaluators, measured before
picking one (oracle/real_functions.py says which and why): python-flint's
arb (a ball, its two ends read out), gmpy2's MPFR (one correctly rounded
value), and mpmath (the former oracle's evaluator, no error bound), on
sin/exp/log/atan2/tanh/pow at f32's and f64's starting Ziv precisions
(24 + 20 and 53 + 20 bits).  gmpy2 is not a dependency of the project:
`pip install gmpy2==2.3.2` to include it.

    .venv/bin/python bench/rigorous_libs.py
"""
from __future__ import annotations

import random
import time

import mpmath
from flint import arb, ctx

try:
    import gmpy2
except ImportError:
    gmpy2 = None

FUNCS = ["sin", "exp", "log", "atan2", "tanh", "power"]


def _arb(name):
    if name == "atan2":
        return lambda x, y: arb.atan2(arb(y), arb(x))
    if name == "power":
        return lambda x, y: arb(x) ** arb(y)
    return lambda x, y: getattr(arb(x), name)()


def _gmpy2(name):
    if name == "atan2":
        return lambda x, y: gmpy2.atan2(y, x)
    if name == "power":
        return lambda x, y: gmpy2.mpfr(x) ** gmpy2.mpfr(y)
    f = getattr(gmpy2, name)
    return lambda x, y: f(x)


def _mpmath(name):
    if name == "atan2":
        return lambda x, y: mpmath.atan2(mpmath.mpf(y), mpmath.mpf(x))
    if name == "power":
        return lambda x, y: mpmath.power(mpmath.mpf(x), mpmath.mpf(y))
    f = getattr(mpmath, name)
    return lambda x, y: f(mpmath.mpf(x))


def per_element_us(fn, xs, ys) -> float:
    t = time.perf_counter()
    for x, y in zip(xs, ys):
        fn(x, y)
    return (time.perf_counter() - t) / len(xs) * 1e6


def main() -> None:
    rng = random.Random(1)
    xs = [rng.uniform(0.01, 10) for _ in range(5000)]
    ys = [rng.uniform(0.01, 10) for _ in range(5000)]
    print(f"{'prec':>5} {'function':<8}{'arb µs':>9}{'gmpy2 µs':>10}{'mpmath µs':>11}")
    for prec in (44, 73):
        ctx.prec = prec
        if gmpy2:
            gmpy2.get_context().precision = prec
        for name in FUNCS:
            g = _arb(name)
            a = per_element_us(lambda x, y: (lambda b: (b.lower().man_exp(), b.upper().man_exp()))(g(x, y)), xs, ys)
            m = gmpy2 and per_element_us(_gmpy2(name), xs, ys)
            with mpmath.workprec(prec):
                p = per_element_us(_mpmath(name), xs, ys)
            print(f"{prec:>5} {name:<8}{a:>9.1f}{m if m else float('nan'):>10.1f}{p:>11.1f}")
    ctx.prec = 53


if __name__ == "__main__":
    main()
