"""The committed suites/core is what `shlo-conform generate --seed <manifest seed>` writes,
here and under another SIMD/BLAS environment or a 53-bit x87 precision control.

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


# Ops whose expectations go through long double (f64 sine's leftovers, the f64
# FFT's bounds, cholesky's residual measure, f64 dot products): generated
# under a 53-bit x87 precision control they once failed (fft: "no working
# type") or stated other measures (cholesky: 12 of 72 cases).
X87 = ["cholesky", "fft", "sine", "dot_general"]

# Run the CLI with the x87 precision control at 53 bits, as a library in the
# process might leave it (glibc x86-64: fenv_t's first two bytes are the x87
# control word; bits 8-9 = 10 is 53 bits).
_X87_53 = """
import ctypes, ctypes.util, sys
libm = ctypes.CDLL(ctypes.util.find_library("m"))
env = ctypes.create_string_buffer(64)
assert libm.fegetenv(env) == 0
raw = bytearray(env.raw)
raw[0:2] = ((int.from_bytes(raw[0:2], "little") & ~0x300) | 0x200).to_bytes(2, "little")
assert libm.fesetenv(ctypes.create_string_buffer(bytes(raw), 64)) == 0
from shlo_conform.spec.types import long_double_exact
assert not long_double_exact(), "the precision control did not take"
from shlo_conform.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _generate(argv: list, env=None, prefix=()) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *prefix, *argv], env=env, capture_output=True, text=True, timeout=900)


def test_the_suite_is_the_same_with_a_53_bit_x87_control_word(tmp_path):
    """The oracle sets the x87 precision control to 64 bits for its own work
    (oracle/x87.py) and restores it: the files are the committed ones."""
    seed = json.loads((CORE / "manifest.json").read_text())["seed"]
    out = tmp_path / "core"
    done = _generate(["generate", "--seed", str(seed), "--ops", ",".join(X87), "--out", str(out)],
                     prefix=["-c", _X87_53])
    assert done.returncode == 0, done.stderr[-2000:]
    for op in X87:
        assert (out / f"{op}.jsonl").read_bytes() == (CORE / f"{op}.jsonl").read_bytes(), \
            f"{op}: generate with a 53-bit x87 control word differs"


def test_the_suite_is_the_same_on_another_machine(tmp_path):
    seed = json.loads((CORE / "manifest.json").read_text())["seed"]
    out = tmp_path / "core"
    done = _generate(["-m", "shlo_conform.cli", "generate", "--seed", str(seed), "--ops", ",".join(ELSEWHERE),
                      "--out", str(out)], env=_another_machine())
    assert done.returncode == 0, done.stderr[-2000:]
    here = tmp_path / "here"
    suite.build(here, seed, ELSEWHERE)
    for op in ELSEWHERE:
        committed = (CORE / f"{op}.jsonl").read_bytes()
        assert (here / f"{op}.jsonl").read_bytes() == committed, f"{op}: this machine's generate differs"
        assert (out / f"{op}.jsonl").read_bytes() == committed, f"{op}: generate with SIMD and BLAS changed differs"
