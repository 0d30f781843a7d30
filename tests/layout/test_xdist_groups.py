"""`make test` relies on pytest-xdist's `--dist loadgroup` to build each
expensive shared fixture once (tests/conftest.py): tests of one
`xdist_group` must run on one worker.  pytest-xdist 3.8.0 marks a group by
rewriting `item._nodeid`, which pytest 9.2 no longer reads (its node ids
moved to `_id`): the groups were silently ignored and every worker rebuilt
the fixtures.  requirements.lock pins pytest 9.1.1, where they hold; this
test fails if an upgrade breaks them again."""
from __future__ import annotations

import re
import subprocess
import sys


def test_an_xdist_group_runs_on_one_worker(tmp_path):
    (tmp_path / "test_grouped.py").write_text(
        "import pytest\n"
        "pytestmark = pytest.mark.xdist_group('together')\n"
        + "".join(f"def test_{i}():\n    pass\n" for i in range(6)))
    got = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadgroup",
                          "-v", str(tmp_path / "test_grouped.py")], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path)
    assert got.returncode == 0, got.stdout[-2000:]
    workers = re.findall(r"\[(gw\d+)\].*PASSED", got.stdout)
    assert len(workers) == 6 and len(set(workers)) == 1, got.stdout[-2000:]
