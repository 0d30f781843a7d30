"""Test-wide rules.

Tests that share an expensive fixture run on one pytest-xdist worker
(`make test` runs `-n auto --dist loadgroup`): a module- or session-scoped
fixture is built by every worker that runs one of its tests, so the
generator's small suite (tests/generators/conftest.py) is grouped here by
the fixture its tests ask for; modules with their own expensive module
fixture say so with `pytestmark = pytest.mark.xdist_group(...)`."""
from __future__ import annotations

import pytest

# runs: tests/ci/test_merge.py's sharded runs; exported: tests/export's written suite (7 s); core:
# tests/ci/test_shard.py's suites/core read (3 s); toy_run: tests/ci/test_junit.py's run; quantized_cases:
# tests/generators/test_quantized_cases.py's (2 s) — each was built by both workers before stop 45
GROUPED_FIXTURES = ("small_suite", "runs", "exported", "core", "toy_run", "quantized_cases")


@pytest.hookimpl(tryfirst=True)   # before xdist's own hook reads the groups into the node ids
def pytest_collection_modifyitems(items):
    for item in items:
        for name in GROUPED_FIXTURES:
            if name in getattr(item, "fixturenames", ()):
                item.add_marker(pytest.mark.xdist_group(name))


def _restore_default_fp_env() -> bool:
    """fesetenv(FE_DFL_ENV) (glibc: the pointer -1): the x87 control word and
    MXCSR as a fresh process has them."""
    import ctypes
    import ctypes.util
    name = ctypes.util.find_library("m")
    if not name:
        return False
    return ctypes.CDLL(name).fesetenv(ctypes.c_void_p(-1)) == 0


@pytest.fixture(autouse=True)
def _long_double_kept(request):
    """A test that leaves long double arithmetic without its 64 bits (the x87
    precision control set to 53 bits by something it ran in this process)
    is named, and the default floating-point environment is put back, so
    the tests after it on the same worker see the machine as it is
    (tests/oracle/test_x87_precision.py: the oracle declines its long double
    routes then; a whole run once left one worker so)."""
    import signal
    yield
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:   # inherited by every child after it
        import warnings
        signal.signal(signal.SIGINT, signal.default_int_handler)
        warnings.warn(f"{request.node.nodeid} left SIGINT handled otherwise in this process; restored")
    from shlo_conform.spec.types import long_double_exact
    if not long_double_exact():
        import warnings
        _restore_default_fp_env()
        warnings.warn(f"{request.node.nodeid} left long double arithmetic without its 64-bit significand "
                      "(the x87 precision control); the default floating-point environment was restored")
