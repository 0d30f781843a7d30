"""Test-wide rules.

Tests that share an expensive fixture run on one pytest-xdist worker
(`make test` runs `-n auto --dist loadgroup`): a module- or session-scoped
fixture is built by every worker that runs one of its tests, so the
generator's small suite (tests/generators/conftest.py) is grouped here by
the fixture its tests ask for; modules with their own expensive module
fixture say so with `pytestmark = pytest.mark.xdist_group(...)`."""
from __future__ import annotations

import pytest

GROUPED_FIXTURES = ("small_suite", "runs")   # runs: tests/ci/test_merge.py's sharded runs


@pytest.hookimpl(tryfirst=True)   # before xdist's own hook reads the groups into the node ids
def pytest_collection_modifyitems(items):
    for item in items:
        for name in GROUPED_FIXTURES:
            if name in getattr(item, "fixturenames", ()):
                item.add_marker(pytest.mark.xdist_group(name))
