"""The x87 precision control, set to 64 bits while the oracle computes.

The oracle's long double routes (f64 results of transcendental functions,
f64 FFT bounds, f64 dot products and residuals) need long double's 64-bit
significand.  On x86-64 that is the x87 80-bit format, whose *precision
control* (bits 8–9 of the control word, per thread) any library in the
process may set to 53 or 24 bits; long double arithmetic then rounds to
that while numpy's finfo still says 64 (`spec.types.long_double_exact`
probes it).  The routes used to decline then — f64 FFTs stated no
expectation, residual measures came out in float64, and `generate` wrote
another suite (or failed) on such a machine.

So each op the oracle executes runs under `extended_precision()`: if the
probe finds fewer than 64 bits in effect, the control word's precision
field is set to 64 bits (glibc's fegetenv / fesetenv, the x86-64 fenv_t
whose first two bytes are the x87 control word) and restored on exit, so
the library that set it finds its own setting again.  Only the precision
field changes (rounding mode and exception masks stay).  Elsewhere (no
x87, no glibc, long double of another width) it does nothing and the
routes keep declining as before.
"""
from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import platform

import numpy as np

from ..spec.types import long_double_exact

_PC_MASK, _PC_64 = 0x300, 0x300   # precision control: 00 = 24, 10 = 53, 11 = 64 bits
_FENV_BYTES = 64                  # larger than glibc's x86-64 fenv_t (32 bytes)


def _libm():
    if platform.machine() not in ("x86_64", "AMD64") or np.finfo(np.longdouble).nmant < 63:
        return None
    name = ctypes.util.find_library("m")
    return ctypes.CDLL(name) if name else None


_LIBM = _libm()


@contextlib.contextmanager
def extended_precision():
    """Run the body with long double at its 64-bit significand (module docstring)."""
    if _LIBM is None or long_double_exact():
        yield
        return
    saved = ctypes.create_string_buffer(_FENV_BYTES)
    if _LIBM.fegetenv(saved) != 0:
        yield
        return
    raw = bytearray(saved.raw)
    cw = int.from_bytes(raw[0:2], "little")
    raw[0:2] = ((cw & ~_PC_MASK) | _PC_64).to_bytes(2, "little")
    _LIBM.fesetenv(ctypes.create_string_buffer(bytes(raw), _FENV_BYTES))
    try:
        yield
    finally:
        _LIBM.fesetenv(saved)
