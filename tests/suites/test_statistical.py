"""The `statistical` expectation: its JSON record, its comparison rule, and
the tests' false-alarm rate and power (spec/statistics.py).

Independent truth: numpy's PCG64 generator as the known-good generator
(a second implementation of uniform and normal variates), and generators
broken on purpose — a stuck bit, a wrong range, a repeating sequence,
low-entropy bytes, a shifted mean.  The full measurement (many more runs)
is `python bench/statistical_power.py`.
"""
from __future__ import annotations

import numpy as np
import pytest

from shlo_conform.spec import statistics as st
from shlo_conform.spec.expectation import Expectation
from shlo_conform.spec.types import parse_type
from shlo_conform.suites.compare import compare

F32 = (2.0 ** -23, 2.0 ** -149)


def test_json_round_trip_and_other_kinds_unchanged():
    t = parse_type("tensor<4xui32>")
    e = Expectation.of(np.arange(4, dtype=np.uint32), t, kind="statistical",
                       statistical={"test": "bits", "alpha": 1e-9})
    assert Expectation.from_json(e.to_json()) == e and e.to_json()["statistical"]["test"] == "bits"
    assert "statistical" not in Expectation.of(np.arange(4, dtype=np.uint32), t).to_json()


def test_thresholds_by_hand():
    # DKW: sqrt(ln(2/alpha) / 2n); ln(2e9) = 21.4164, n = 2048 -> sqrt(21.4164 / 4096) = 0.07231
    assert st.dkw_epsilon(2048, 1e-9) == pytest.approx(0.07231, abs=1e-4)
    # Hoeffding: sqrt(n ln(2/alpha) / 2); n = 100 -> sqrt(50 * 21.4164) = 32.72
    assert st.bit_threshold(100, 1e-9) == pytest.approx(32.72, abs=0.01)
    # Markov: C(1000, 2) / 2^32 = 499500 / 4294967296 = 1.163e-4 expected pairs, / 1e-9
    assert st.collision_threshold(1000, 32, 1e-9) == pytest.approx(1.163e5, rel=1e-3)
    # ... and with 2^64: far below alpha, so a single collision fails
    assert st.collision_threshold(1000, 64, 1e-9) == 1.0


def _false_alarms(runs: int, alpha: float, n: int, seed: int = 1) -> dict:
    g = np.random.default_rng(seed)
    out = {"uniform": 0, "normal": 0, "bits32": 0, "bits8": 0, "integers": 0}
    for _ in range(runs):
        out["uniform"] += not st.uniform(g.uniform(-1, 3, n).astype(np.float32).astype(np.float64), -1.0, 3.0,
                                         alpha, F32)[0]
        out["normal"] += not st.normal(g.normal(2, 0.5, n).astype(np.float32), 2.0, 0.5, alpha, F32)[0]
        out["bits32"] += not st.bit_tests(g.integers(0, 2 ** 32, n, dtype=np.uint64), 32, alpha)[0]
        out["bits8"] += not st.bit_tests(g.integers(0, 256, n, dtype=np.uint64), 8, alpha)[0]
        out["integers"] += not st.uniform(g.integers(-3, 9, n), -3, 9, alpha)[0]
    return out


def test_false_alarm_rate_within_the_stated_bound():
    """200 runs of each test at alpha = 0.01 on numpy's generator: the
    expected false alarms are at most 2 per test; 9 or more has probability
    below 1e-4 under Binomial(200, 0.01)."""
    fa = _false_alarms(200, 0.01, 256)
    assert all(v < 9 for v in fa.values()), fa


def test_power_on_broken_generators():
    g = np.random.default_rng(5)
    n, alpha = 4096, 1e-9
    good = g.integers(0, 2 ** 32, n, dtype=np.uint64)
    assert st.bit_tests(good, 32, alpha)[0]
    stuck = good | np.uint64(1 << 7)
    ok, why = st.bit_tests(stuck, 32, alpha)
    assert not ok and why.startswith("bit 7")
    repeating = np.tile(good[:512], n // 512)   # per-bit and byte frequencies stay fair; pairs collide
    ok, why = st.bit_tests(repeating, 32, alpha)
    assert not ok, why   # the byte frequencies of 512 values repeated, or the collisions, give it away
    low_entropy = g.integers(0, 2 ** 32, n, dtype=np.uint64) & np.uint64(0x7F7F7F7F) | np.uint64(0x00800080)
    assert not st.bit_tests(low_entropy, 32, alpha)[0]
    even_bytes = (g.integers(0, 128, n, dtype=np.uint64) * 2).astype(np.uint64)   # bit 0 stuck at 0
    assert not st.bit_tests(even_bytes, 8, alpha)[0]
    wrong_range = g.uniform(-1, 3.5, n)
    ok, why = st.uniform(wrong_range, -1.0, 3.0, alpha, F32)
    assert not ok and why.startswith("range")
    narrow = g.uniform(-1, 2, n)   # inside [a, b) but not uniform over it
    ok, why = st.uniform(narrow, -1.0, 3.0, alpha, F32)
    assert not ok and why.startswith("dkw")
    shifted = g.normal(2.2, 0.5, n)
    ok, why = st.normal(shifted, 2.0, 0.5, alpha, F32)
    assert not ok and why.startswith("dkw")
    assert st.normal(g.normal(2.0, 0.5, n), 2.0, 0.5, alpha, F32)[0]


def test_comparison_rule_through_compare():
    t = parse_type("tensor<2048xf32>")
    g = np.random.default_rng(3)
    e = Expectation.of(np.zeros(2048, np.float32), t, kind="statistical",
                       statistical={"test": "uniform", "a": 0.0, "b": 1.0, "alpha": 1e-9})
    assert compare(e, g.random(2048).astype(np.float32)).ok
    assert not compare(e, (g.random(2048) * 0.5).astype(np.float32)).ok
    assert not compare(e, g.random(2048).astype(np.float64)).ok   # declared type first
