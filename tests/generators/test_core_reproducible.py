"""The committed suites/core is what `shlo-conform generate --seed <manifest seed>` writes.

Regenerates a few ops (each op draws from its own seeded stream, so a subset
reproduces the full suite's files for those ops) and compares bytes.  A
change to the spec, oracle or generators that alters expectations must come
with a regenerated suite.
"""
import json
import os
import subprocess
import sys

import pytest

from shlo_conform.generators import suite
from shlo_conform.suites.io import CORE

# One worker builds the regenerated suite (pytest-xdist, --dist loadgroup): a
# module fixture is built by every worker that runs one of its tests.
pytestmark = [pytest.mark.xdist_group("core_reproducible"),
              pytest.mark.long]   # regenerating 8 ops costs ~110 s of CPU (scatter alone 55 s): make test-long

OPS = ["add", "convert", "sine", "compare", "divide", "pad", "scatter", "tuple"]

# Ops whose inputs once came out one bit apart on another machine (numpy's
# SIMD pow on AVX-512 hosts: spec/ops/batch_norm_inference.py `pow2`).
ELSEWHERE = ["batch_norm_inference", "batch_norm_training", "batch_norm_grad"]


@pytest.fixture(scope="session")
def regenerated(tmp_path_factory):
    seed = json.loads((CORE / "manifest.json").read_text())["seed"]
    out = tmp_path_factory.mktemp("core")
    suite.build(out, seed, OPS)
    return out


@pytest.mark.parametrize("op", OPS)
def test_committed_core_suite_matches_the_generator(regenerated, op):
    committed = (CORE / f"{op}.jsonl").read_bytes()
    assert (regenerated / f"{op}.jsonl").read_bytes() == committed, \
        f"suites/core/{op}.jsonl is stale: run `shlo-conform generate --out suites/core --seed 0`"


def _another_machine() -> dict:
    """The environment of a machine with no SIMD beyond numpy's baseline and
    another BLAS kernel: every CPU feature numpy dispatches to that this host
    has is switched off (NPY_DISABLE_CPU_FEATURES), OpenBLAS is told an old
    core (OPENBLAS_CORETYPE).  On an AVX-512 host numpy's `2.0 ** u` then
    gives other bits on ~5% of arguments — what made suites/core's batch
    norm files differ between two machines."""
    from numpy._core import _multiarray_umath as m
    found = [f for f in m.__cpu_dispatch__ if m.__cpu_features__.get(f)]
    return {**os.environ, "NPY_DISABLE_CPU_FEATURES": " ".join(found), "OPENBLAS_CORETYPE": "Nehalem"}


def test_the_suite_is_the_same_on_another_machine(tmp_path):
    seed = json.loads((CORE / "manifest.json").read_text())["seed"]
    out = tmp_path / "core"
    done = subprocess.run([sys.executable, "-m", "shlo_conform.cli", "generate", "--seed", str(seed),
                           "--ops", ",".join(ELSEWHERE), "--out", str(out)],
                          env=_another_machine(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    here = tmp_path / "here"
    suite.build(here, seed, ELSEWHERE)
    for op in ELSEWHERE:
        committed = (CORE / f"{op}.jsonl").read_bytes()
        assert (here / f"{op}.jsonl").read_bytes() == committed, f"{op}: this machine's generate differs"
        assert (out / f"{op}.jsonl").read_bytes() == committed, f"{op}: generate with SIMD and BLAS changed differs"
