"""The committed suites/core is what `shlo-conform generate --seed <manifest seed>` writes.

Regenerates a few ops (each op draws from its own seeded stream, so a subset
reproduces the full suite's files for those ops) and compares bytes.  A
change to the spec, oracle or generators that alters expectations must come
with a regenerated suite.
"""
import json

import pytest

from shlo_conform.generators import suite
from shlo_conform.suites.io import CORE

# One worker builds the regenerated suite (pytest-xdist, --dist loadgroup): a
# module fixture is built by every worker that runs one of its tests.
pytestmark = [pytest.mark.xdist_group("core_reproducible"),
              pytest.mark.long]   # regenerating 8 ops costs ~110 s of CPU (scatter alone 55 s): make test-long

OPS = ["add", "convert", "sine", "compare", "divide", "pad", "scatter", "tuple"]


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
