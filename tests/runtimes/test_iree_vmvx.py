"""IREE's vmvx target as a configuration of the project's adapter
(`--backend=iree:target=vmvx`): the compiled module holds a vmvx executable,
not the llvm-cpu ELF the plain adapter embeds, and on exact ops (integer
add with wrap-around, f32 add of representable sums) it computes what the
spec says, bit for bit (the truth by hand).  A target IREE's local driver
does not load, or another key, is refused in one line."""
from __future__ import annotations

import numpy as np
import pytest

from shlo_conform.backends.base import load_backend

PROGRAM = ("func.func @main(%a: tensor<4xi32>, %b: tensor<4xf32>) -> (tensor<4xi32>, tensor<4xf32>) {\n"
           "  %0 = stablehlo.add %a, %a : tensor<4xi32>\n  %1 = stablehlo.add %b, %b : tensor<4xf32>\n"
           "  return %0, %1 : tensor<4xi32>, tensor<4xf32>\n}\n")


def test_vmvx_target_and_exact_values():
    b = load_backend("iree:target=vmvx")
    try:
        assert b.describe().startswith("IREE vmvx")
        exe = b.compile(PROGRAM)
        assert b"vmvx" in exe.vmfb and b"\x7fELF" not in exe.vmfb
        a = np.int32([2**31 - 1, -2**31, 5, -7])
        x = np.float32([1.5, -0.0, np.inf, 3.25])
        i, f = b.run(exe, [a, x])
        assert i.tolist() == [-2, 0, 10, -14]        # two's complement wrap: 2*(2^31-1) = 2^32-2 -> -2
        assert f.view(np.uint32).tolist() == np.float32([3.0, -0.0, np.inf, 6.5]).view(np.uint32).tolist()
    finally:
        b.close()


def test_the_plain_adapter_is_llvm_cpu_and_other_targets_are_refused():
    b = load_backend("iree")
    try:
        assert b.describe().startswith("IREE llvm-cpu") and b"\x7fELF" in b.compile(PROGRAM).vmfb
    finally:
        b.close()
    for name in ("iree:target=cuda", "iree:target=vmvx,speed=fast"):
        with pytest.raises(ValueError, match="the one key is target"):
            load_backend(name)
