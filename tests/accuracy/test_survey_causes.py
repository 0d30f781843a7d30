"""Issue 20 item 11a: the survey's special-value disagreements are the suite's
causes (suites/causes.py), and a result on subnormal operands that is the op
on the flushed operands is an input flush ("subnormal flushed"), not "NaN
lost" or "infinity".

Truth is hand-computed (bfloat16 log) or numpy's (a DAZ backend against
exact arithmetic), never the oracle's or the classifier's own."""
from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np

from shlo_conform import survey as accuracy
from shlo_conform.suites.causes import CAUSES

FIX = Path(__file__).parent / "fixtures" / "numpy_math.py"


def test_the_survey_names_its_disagreements_as_the_suite_does():
    assert set(accuracy.SPECIAL_CAUSES) <= set(CAUSES)


def test_bf16_log_of_subnormals_read_as_zero_is_an_input_flush():
    # bfloat16: 0x0001 = 2^-133 (≈ 9.18e-41, the smallest subnormal), 0x8001 its negative, 0x3F80 = 1.
    # log(2^-133) = -133·ln 2 = -92.19, which rounds to -92.0 in bf16 (1.0111000b × 2^6) = 0xC2B8;
    # log(-2^-133) = NaN (0x7FC0); log(1) = +0.  XLA reads both subnormals as ±0: log(±0) = -inf (0xFF80).
    entry = accuracy.CacheEntry(
        "log", "bf16", inputs=np.array([[0x0001, 0x8001, 0x3F80]], np.uint16),
        expected=np.array([0xC2B8, 0x7FC0, 0x0000], np.uint16), alts=np.zeros((0, 3), np.uint16),
        free=np.zeros(3, bool), meta={})
    row = accuracy.measure(entry, np.array([0xFF80, 0xFF80, 0x0000], np.uint16))
    assert row["specials"] == {"subnormal flushed": 2, "NaN lost": 0, "NaN invented": 0, "signed zero": 0,
                               "infinity": 0}
    assert row["input_flushes"] == 2 and row["measured"] == 1 and row["max_ulp"] == 0
    # A wrong value on a subnormal operand that is not log(±0) stays what it is: -inf for a
    # normal-range result is "infinity", a number for NaN is "NaN lost".
    row = accuracy.measure(entry, np.array([0xC2B9, 0x0000, 0x0000], np.uint16))
    assert row["specials"]["NaN lost"] == 1 and row["specials"]["subnormal flushed"] == 0
    assert row["max_ulp"] == 1   # 0xC2B9 is one step from 0xC2B8: an ULP error, measured


def _f8(dtype):
    dt = np.dtype(getattr(ml_dtypes, {"f8E5M2": "float8_e5m2", "f8E4M3FN": "float8_e4m3fn"}[dtype]))
    return np.arange(256, dtype=np.uint8).view(dt), dt


def test_a_daz_backend_flushes_inputs_in_sqrt_and_add(tmp_path):
    x, dt = _f8("f8E5M2")
    v = x.astype(np.float64)
    tiny = float(ml_dtypes.finfo(dt).smallest_normal)
    sub = (v != 0) & (np.abs(v) < tiny)
    assert sub.sum() == 6   # 0x01-0x03 and 0x81-0x83
    # sqrt: sqrt(2^-16..) is a nonzero number, sqrt(-sub) NaN; read as ±0 both give ±0.
    doc = accuracy.survey([f"{FIX}:Daz"], {"sqrt": 1}, ["f8E5M2"], 64, 0, tmp_path)
    [row] = doc["rows"]
    assert row["specials"]["subnormal flushed"] == 6 and row["specials"]["NaN lost"] == 0
    assert row["special_disagreements"] == 6 and row["input_flushes"] == 6 and row["max_ulp"] == 0
    # add over every pair: the elements where reading subnormals as zero changes the sum.
    a, b = np.meshgrid(v, v, indexing="ij")
    daz = lambda t: np.where((t != 0) & (np.abs(t) < tiny), np.copysign(0.0, t), t)   # noqa: E731
    with np.errstate(all="ignore"):
        exact = (a + b).astype(dt).view(np.uint8)
        flushed = (daz(a) + daz(b)).astype(dt).view(np.uint8)
    e, f = exact.astype(dt).astype(np.float64), flushed.astype(dt).astype(np.float64)
    changed = int(((exact != flushed) & ~(np.isnan(e) & np.isnan(f))).sum())
    doc = accuracy.survey([f"{FIX}:Daz"], {"add": 2}, ["f8E5M2"], 64, 0, tmp_path)
    [row] = doc["rows"]
    assert changed > 0 and row["specials"]["subnormal flushed"] == changed
    assert row["special_disagreements"] == changed and row["max_ulp"] == 0


def test_within_tolerance_is_the_suites_rule_element_by_element():
    """The survey's "within tolerance" and the suite's verdict on an "ulp"
    expectation (suites/compare.py `matches`) agree on every element: zeros
    of either sign, 0–7 ULP off, both sides of the tolerance (f32: 4 ULP)."""
    from shlo_conform.spec.expectation import Expectation
    from shlo_conform.spec.types import E_F32, TensorType
    from shlo_conform.suites.compare import matches
    rng = np.random.default_rng(5)
    e = rng.standard_normal(400).astype(np.float32).view(np.uint32)
    e[:40] = 0
    e[40:60] = 0x80000000
    e[60:80] = 1                                         # the smallest subnormal
    a = (e.astype(np.int64) + rng.integers(-7, 8, 400)).astype(np.uint32)
    a[:20] = 0x80000000                                  # +0 expected, −0 given
    a[20:30] = 0
    a[60:70] = 0
    a[a & 0x7FFFFFFF > 0x7F7FFFFF] = 0                    # keep every draw a finite number
    entry = accuracy.CacheEntry("sine", "f32", inputs=np.zeros((1, 400), np.uint32), expected=e,
                                alts=np.zeros((0, 400), np.uint32), free=np.zeros(400, bool), meta={})
    j = accuracy.judge(entry, a)
    suite = matches(Expectation(TensorType((400,), E_F32), e, kind="ulp", tolerance_ulp=4), a.view(np.float32))
    assert j["tolerance_ulp"] == 4
    assert (j["within"] == suite).all()
    assert 0 < suite.sum() < 400                           # both verdicts occur
