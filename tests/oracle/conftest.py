"""Fixtures shared by the oracle's tests."""
from __future__ import annotations

import jax
import pytest

from shlo_conform.backends.base import load_backend


@pytest.fixture(scope="module")
def xla():
    """XLA as jax.jit runs it, with 64-bit types on for the module's tests
    (JAX's f64 and complex128 linear algebra), off again afterwards."""
    jax.config.update("jax_enable_x64", True)
    yield load_backend("xla")
    jax.config.update("jax_enable_x64", False)
