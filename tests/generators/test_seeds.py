"""Every op generates with seeds other than 0 (issue 20 item 3).

suites/core is generated with seed 0, so seed 0 was the one draw every op
was known to survive.  The README's own `shlo-conform generate --seed 1`
crashed in bitcast_convert (a rank-0 complex<f64> whose 64-bit patterns
went through float64; seeds 1 and 4), and other seeds crashed
dynamic_slice and dynamic_update_slice (an out-of-bounds ui64 start of
2**64 - 1 went through int64).

`test_op_generates_with_other_seeds` runs the generator's own pipeline
(`suite.op_cases`: every skeleton of the op, solved shapes, random and
special values, index operands in and out of bounds, the real oracle's
expectations) for other seeds on a reduced budget — one random case per
skeleton or element type (`VALUE_CASES_PER_DTYPE`, `CASES_PER_DTYPE`,
`SKELETONS_PER_DTYPE` = 1), no corner instances and no negative cases
(most of the solver time; the one-off sweep of seeds 1-6 that found the
crashes above ran them and found none there).  A smaller budget draws
fewer values from the same seeded stream, so these are samples of other
seeds' draws, not the suites those seeds write.  SEEDS are ones that
crashed at this budget before the fixes (4: bitcast_convert; 5:
dynamic_slice, dynamic_update_slice): every op gets one other draw (the
seeds alternate over the ops in name order, which keeps the test's share
of `make test` small), and the ops that crashed get the seed that crashed
them.  The two root causes also have direct
tests below, which do not depend on a draw.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from shlo_conform.generators import emit, expect, negative, suite
from shlo_conform.generators.indices import index_arrays
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.types import C64, C128, SI32, SI64, UI64, TensorType, raw_bytes

SEEDS = (4, 5)


@pytest.fixture
def small_budget(monkeypatch):
    monkeypatch.setattr(suite, "VALUE_CASES_PER_DTYPE", 1)
    monkeypatch.setattr(suite, "CASES_PER_DTYPE", 1)
    monkeypatch.setattr(suite, "SKELETONS_PER_DTYPE", 1)
    monkeypatch.setattr(negative, "MAX_TRIES_PER_STRATEGY", 0)   # no structure tried: no negative case
    plan_for = suite.plan_for
    monkeypatch.setattr(suite, "plan_for", lambda spec: dataclasses.replace(plan_for(spec), corners=False))


CRASHED = {"bitcast_convert": 4, "dynamic_slice": 5, "dynamic_update_slice": 5}


# The ops that crashed keep their seed in make test; every other op's draw (2–16 s each on 2 cores,
# 200 CPU-seconds together: a sixth of make test) runs in make test-long, which CI runs after it —
# so does bitcast_convert's (20 s since v1.20's types made it draw every pair of 144 types: its root cause
# is held in make test by test_bitcast_complex_keeps_every_bit, which does not depend on a draw).
IN_MAKE_TEST = {"dynamic_slice", "dynamic_update_slice"}


def _draws() -> list:
    return [(op, seed) if op in IN_MAKE_TEST else pytest.param(op, seed, marks=pytest.mark.long)
            for op, seed in ((op, CRASHED.get(op, SEEDS[i % len(SEEDS)])) for i, op in enumerate(sorted(OPS)))]


@pytest.mark.parametrize("op, seed", _draws())
def test_op_generates_with_other_seeds(small_budget, op, seed):
    cases, _ = suite.op_cases(OPS[op], seed)
    assert cases, f"{op}: no case at all with seed {seed}"


def _bitcast(operand: np.ndarray, t: TensorType, t2: TensorType) -> np.ndarray:
    inst = OPS["bitcast_convert"].instance({"operand": t}, results={"result": t2})
    mlir = emit.program(OPS["bitcast_convert"], inst, set())
    (out,) = expect.expected_outputs(mlir, [operand])
    return out.array()


@pytest.mark.parametrize("shape, shape2", [((), (2,)), ((3,), (3, 2))])
def test_bitcast_complex_keeps_every_bit(shape, shape2):
    """The silent face of the seed-1 crash: complex<f64> ↔ complex<f32>
    moves 64-bit patterns, and patterns on both sides of 2**63 in one array
    were promoted to float64 (seed 0's suite held such a wrong expectation).
    Bits are little-endian both ways (the seed's bitcast example), so the
    raw bytes of operand and result are the same bytes."""
    rng = np.random.default_rng(20)
    n = int(np.prod(shape, dtype=np.int64))
    words = rng.integers(0, 2**64, size=2 * n, dtype=np.uint64)
    words[0] |= np.uint64(1 << 63)        # one word at or past 2**63,
    words[1] &= np.uint64((1 << 63) - 1)  # one below: int64 and uint64 promote to float64
    wide = words.view(np.complex128).reshape(shape)
    t, t2 = TensorType(shape, C128), TensorType(shape2, C64)
    narrow = _bitcast(wide, t, t2)
    assert raw_bytes(narrow, C64) == raw_bytes(wide, C128)
    back = _bitcast(narrow, t2, t)
    assert raw_bytes(back, C128) == raw_bytes(wide, C128)


@pytest.mark.parametrize("et", [UI64, SI64], ids=lambda et: et.name)
@pytest.mark.parametrize("op", ["dynamic_slice", "dynamic_update_slice"])
def test_out_of_bounds_starts_reach_the_64_bit_extremes(op, et):
    """The seed-2 and seed-5 crashes: an out-of-bounds start may be the
    index type's largest or smallest value, and ui64's largest (2**64 - 1)
    does not fit the int64 the start used to pass through.  Every start
    must come back exactly, in its own type."""
    dims, sizes = (6, 3), (2, 3)
    starts = [TensorType((), et) for _ in dims]
    if op == "dynamic_slice":
        inst = OPS[op].instance({"operand": TensorType(dims, SI32), "start_indices": starts},
                                {"slice_sizes": sizes}, {"result": TensorType(sizes, SI32)})
    else:
        inst = OPS[op].instance({"operand": TensorType(dims, SI32), "update": TensorType(sizes, SI32),
                                 "start_indices": starts}, {}, {"result": TensorType(dims, SI32)})
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(60):
        got = index_arrays(OPS[op], inst, rng, "out_of_bounds")
        vals = [got[("start_indices", k)] for k in range(len(dims))]
        assert all(v.shape == () and v.dtype == et.numpy for v in vals)
        ints = [int(v) for v in vals]
        assert any(not 0 <= v <= d - s for v, d, s in zip(ints, dims, sizes)), ints
        seen.update(ints)
    assert et.max_value in seen and et.min_value in seen
