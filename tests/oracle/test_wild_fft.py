"""jnp.fft programs as JAX lowers them, judged by the oracle against XLA.

`jax.jit(f).lower(x).as_text()` of jnp.fft.fft, ifft, rfft, irfft and fft2
(private helpers called with `func.call`, the pretty syntax
`stablehlo.fft %arg0, type = IRFFT, length = [12]`): the oracle reads each,
and XLA's own output (the function called through jax: XLA:CPU's DUCC
FFT, an implementation nobody here wrote) must meet its bounded
expectation.  A classic wrong result — the inverse transform without its
1/n, as an FFT library's unnormalised backward transform gives it — must
not.  Lengths that are not powers of two (12, 6×10) on purpose.
"""
from __future__ import annotations

import numpy as np
import pytest

import jax
import jax.numpy as jnp  # noqa: E402

from shlo_conform.generators.expect import expected_outputs  # noqa: E402
from shlo_conform.suites.compare import compare  # noqa: E402

RNG = np.random.default_rng(1)
C12 = (RNG.standard_normal(12) + 1j * RNG.standard_normal(12)).astype(np.complex64)
R12 = RNG.standard_normal(12).astype(np.float32)
H7 = np.fft.rfft(RNG.standard_normal(12)).astype(np.complex64)        # an rfft result: the scored reading
C6X10 = (RNG.standard_normal((6, 10)) + 1j * RNG.standard_normal((6, 10))).astype(np.complex64)

PROGRAMS = {
    "fft": (jnp.fft.fft, C12),
    "ifft": (jnp.fft.ifft, C12),
    "rfft": (jnp.fft.rfft, R12),
    "irfft": (jnp.fft.irfft, H7),
    "fft2": (jnp.fft.fft2, C6X10),
}


def _judge(name):
    f, x = PROGRAMS[name]
    jitted = jax.jit(f)
    program = jitted.lower(x).as_text()
    assert "stablehlo.fft" in program
    expected, = expected_outputs(program, [x])
    return expected, np.asarray(jitted(x)), x


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_xla_output_meets_the_oracle(name):
    e, got, _ = _judge(name)
    assert e.kind == "bounded" and not e.impl_defined
    r = compare(e, got)
    assert r.ok, r.detail


def test_unnormalised_inverse_fails():
    e, got, x = _judge("ifft")
    assert not compare(e, (got * x.shape[-1]).astype(np.complex64)).ok
    e, got, x = _judge("irfft")
    assert not compare(e, (got * 12).astype(np.float32)).ok


def test_forward_transform_for_the_inverse_fails():
    e, _, x = _judge("ifft")
    assert not compare(e, (np.fft.fft(x) / 12).astype(np.complex64)).ok
