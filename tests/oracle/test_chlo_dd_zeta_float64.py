"""oracle/chlo_dd/zeta_float64.py: real_functions._hurwitz_em's values,
bit for bit, chunked and on sorted prefixes — over the bench's ranges, the
whole of its domain, the steps of its direct-term count, sizes that are
not multiples of the chunk, and arrays of a few elements; and (so that
both agreeing on a wrong value cannot pass) within _hurwitz_em's 2^-47 of
arb's ζ (not mpmath's: its ζ(11.372…, 6133.17) at 40 digits is 1.7e-14
off arb's)."""
from __future__ import annotations

import numpy as np
import pytest
from flint import arb, ctx

from shlo_conform.oracle import real_functions
from shlo_conform.oracle.chlo_dd import zeta_float64


def _same_bits(a, b) -> bool:
    return np.array_equal(np.asarray(a).view(np.uint64), np.asarray(b).view(np.uint64))


def _inputs(rng, n: int) -> tuple:
    s = np.concatenate([rng.uniform(1, 10, n), rng.uniform(1, 12, n), 1 + np.exp2(-rng.uniform(1, 52, n // 4)),
                        np.full(50, 12.0)])
    q = np.concatenate([rng.uniform(0.01, 30, n), np.exp2(rng.uniform(-30, 40, n)),
                        np.exp2(rng.uniform(-20, 10, n // 4)), np.exp2(rng.uniform(-5, 5, 50))])
    steps = np.repeat(np.arange(0.0, 13.0), 8)
    near = np.concatenate([np.nextafter(steps, -1), np.nextafter(steps, 20)])
    near = near[near > 0]
    s = np.concatenate([s, rng.uniform(1, 12, len(near))])
    q = np.concatenate([q, near])
    return s, q


def test_the_same_bits_as_hurwitz_em():
    rng = np.random.default_rng(40)
    s, q = _inputs(rng, 20001)
    assert len(s) % zeta_float64._SUB
    with np.errstate(all="ignore"):
        assert _same_bits(zeta_float64.hurwitz_em(s, q), real_functions._hurwitz_em(s, q))


@pytest.mark.parametrize("n", [1, 3, 7, 8193])
def test_the_same_bits_on_small_and_odd_sizes(n):
    rng = np.random.default_rng(41 + n)
    s, q = rng.uniform(1, 12, n), np.exp2(rng.uniform(-10, 8, n))
    with np.errstate(all="ignore"):
        assert _same_bits(zeta_float64.hurwitz_em(s, q), real_functions._hurwitz_em(s, q))


def test_the_same_bits_on_narrow_formats_inputs():
    """f32, f16 and bf16 arguments widened to float64, as the route gets them."""
    import ml_dtypes
    rng = np.random.default_rng(42)
    for dt in (np.float32, np.float16, ml_dtypes.bfloat16):
        s = rng.uniform(1, 10, 30000).astype(dt).astype(np.float64)
        q = rng.uniform(0.01, 30, 30000).astype(dt).astype(np.float64)
        keep = (s > 1) & (q > 0)
        with np.errstate(all="ignore"):
            assert _same_bits(zeta_float64.hurwitz_em(s[keep], q[keep]), real_functions._hurwitz_em(s[keep], q[keep]))


def test_bernoulli_terms_are_hurwitz_ems():
    assert zeta_float64._EM_Z == real_functions._EM_Z
    assert _same_bits(np.array(zeta_float64._EM_B), np.array(real_functions._EM_B))


def test_values_within_the_float64_bound_of_arb():
    rng = np.random.default_rng(43)
    s, q = rng.uniform(1.01, 12, 300), np.exp2(rng.uniform(-10, 30, 300))
    got = zeta_float64.hurwitz_em(s, q)
    old, ctx.prec = ctx.prec, 200
    try:
        for si, qi, g in zip(s.tolist(), q.tolist(), got.tolist()):
            want = arb(si).zeta(arb(qi))
            assert want.rel_accuracy_bits() > 100
            assert abs(arb(g) - want) < 2.0 ** -47 * abs(want), (si, qi, g)
    finally:
        ctx.prec = old
