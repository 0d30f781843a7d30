"""False-alarm rate and power of the statistical tests (spec/statistics.py).

    python bench/statistical_power.py [--runs 2000] [--n 2048]

Runs each test on numpy's PCG64 (known good) `runs` times at a loose alpha
(0.01 and 0.001, so false alarms are observable: the suite's 1e-9 cannot be
measured by sampling) and prints the observed rate next to the stated bound;
then the detection rate at the suite's alpha = 1e-9 on broken generators
(stuck bit, wrong range, repeating sequence, low-entropy bytes, shifted
mean, narrowed range) per sample size.
"""
from __future__ import annotations

import argparse

import numpy as np

from shlo_conform.spec import statistics as st

F32 = (2.0 ** -23, 2.0 ** -149)


def known_good(g, n):
    return {
        "uniform f32 [-1, 3)": lambda a: st.uniform(g.uniform(-1, 3, n).astype(np.float32).astype(np.float64),
                                                    -1.0, 3.0, a, F32)[0],
        "uniform int [-3, 9)": lambda a: st.uniform(g.integers(-3, 9, n), -3, 9, a)[0],
        "normal f32 (2, 0.5)": lambda a: st.normal(g.normal(2, 0.5, n).astype(np.float32), 2.0, 0.5, a, F32)[0],
        "bits ui32": lambda a: st.bit_tests(g.integers(0, 2 ** 32, n, dtype=np.uint64), 32, a)[0],
        "bits ui8": lambda a: st.bit_tests(g.integers(0, 256, n, dtype=np.uint64), 8, a)[0],
    }


def broken(g, n):
    u32 = lambda: g.integers(0, 2 ** 32, n, dtype=np.uint64)   # noqa: E731
    return {
        "stuck bit 7": lambda a: st.bit_tests(u32() | np.uint64(1 << 7), 32, a)[0],
        "repeating (period 64)": lambda a: st.bit_tests(np.resize(u32()[:64], n), 32, a)[0],
        "low-entropy bytes (top bit of each byte 0)": lambda a: st.bit_tests(u32() & np.uint64(0x7F7F7F7F), 32, a)[0],
        "bytes of 128 values": lambda a: st.bit_tests(g.integers(0, 128, n, dtype=np.uint64) * 2, 8, a)[0],
        "wrong range [-1, 3.5) for [-1, 3)": lambda a: st.uniform(g.uniform(-1, 3.5, n), -1.0, 3.0, a, F32)[0],
        "narrow range [-1, 2.5) for [-1, 3)": lambda a: st.uniform(g.uniform(-1, 2.5, n), -1.0, 3.0, a, F32)[0],
        "normal mean +0.1 sd": lambda a: st.normal(g.normal(2.05, 0.5, n), 2.0, 0.5, a, F32)[0],
        "normal sd x1.2": lambda a: st.normal(g.normal(2.0, 0.6, n), 2.0, 0.5, a, F32)[0],
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=2000)
    p.add_argument("--n", type=int, default=2048)
    args = p.parse_args()
    g = np.random.default_rng(2024)
    print(f"false alarms on numpy PCG64, {args.runs} runs, n = {args.n}")
    for alpha in (0.01, 0.001):
        for name, test in known_good(g, args.n).items():
            fa = sum(not test(alpha) for _ in range(args.runs))
            print(f"  alpha {alpha:<6} {name:24} observed {fa / args.runs:.4f}  (bound {alpha})")
    runs = max(50, args.runs // 20)
    print(f"power at alpha 1e-9 ({runs} runs each)")
    for n in (256, 1024, 4096):
        for name, test in broken(g, n).items():
            hit = sum(not test(1e-9) for _ in range(runs))
            print(f"  n {n:<5} {name:44} detected {hit / runs:.2f}")


if __name__ == "__main__":
    main()
