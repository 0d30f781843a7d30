"""What cannot cross @main's boundary on IREE (backends/iree.py `_boundary`,
COMPILER_NO_RESULT, `_located`): the compiler's own refusals, probed type by
type, and a merged module's refusal naming the cases that hold such a type,
so that the runner sends only those alone (pipeline/batching.py
`Batch.culprits`) instead of halving the batch level by level."""
from __future__ import annotations

import pytest

from shlo_conform.backends import iree as iree_backend
from shlo_conform.backends.base import Unsupported, load_backend
from shlo_conform.pipeline.batching import merge
from shlo_conform.spec.types import ELEMENT_TYPES


@pytest.fixture(scope="module")
def iree():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(iree_backend.CACHE_ENV, "off")
        b = load_backend("iree")
    yield b
    b.close()


def convert(src: str, dst: str, n: int = 4, name: str = "a") -> str:
    return (f"func.func @main(%{name}: tensor<{n}x{src}>) -> (tensor<{n}x{dst}>) {{\n"
            f'  %0 = "stablehlo.convert"(%{name}) : (tensor<{n}x{src}>) -> tensor<{n}x{dst}>\n'
            f'  "func.return"(%0) : (tensor<{n}x{dst}>) -> ()\n}}\n')


# every 8-, 4- and 2-bit result type the suite holds (6-bit ones have no buffer layout: refused by the adapter)
NARROW = sorted(n for n, et in ELEMENT_TYPES.items()
                if not et.is_complex and not et.is_bool and not et.is_quantized and et.bits in (2, 4, 8))


@pytest.mark.long   # fourteen compiles: the pin on iree-base-compiler's answers, not the adapter's logic
@pytest.mark.parametrize("name", NARROW)
def test_the_compiler_refuses_to_return_exactly_the_listed_types(iree, name):
    """COMPILER_NO_RESULT is the compiler's answer, not a guess: a program
    returning one of them is refused with "'hal.element_type' op
    unsupported element type"; one returning any other narrow type compiles."""
    mlir = convert("f32", ELEMENT_TYPES[name].mlir)
    if name in iree_backend.COMPILER_NO_RESULT:
        with pytest.raises(Unsupported, match="'hal.element_type' op unsupported element type"):
            iree.compile(mlir)
    else:
        iree.compile(mlir)


def test_a_merged_modules_boundary_refusal_names_the_cases_that_cannot_cross(iree):
    """Four cases merged: an f8E4M3 input (no HAL element type in the
    runtime), an f4E2M1FN result (the compiler cannot return it) and two
    that compile.  Each refusal names the refused cases' functions only."""
    progs = [convert("f32", "f16", name="p"), convert("f8E4M3", "f32", name="q"),
             convert("f32", "f8E4M3FN", name="r"), convert("f32", "f4E2M1FN", name="s")]
    b = merge(progs)
    with pytest.raises(Unsupported) as e:
        iree.compile(b.mlir)
    assert "no HAL element type for f8E4M3" in str(e.value)
    assert b.culprits(str(e.value)) == {1}
    rest = merge([progs[0], progs[2], progs[3]])
    with pytest.raises(Unsupported) as e:
        iree.compile(rest.mlir)
    assert "'hal.element_type' op unsupported element type" in str(e.value)
    assert rest.culprits(str(e.value)) == {2}
    iree.compile(merge([progs[0], progs[2]]).mlir)
    # alone, the messages are what they were: no location added for @main
    with pytest.raises(Unsupported) as e:
        iree.compile(progs[3])
    assert str(e.value) == "iree: <stdin>:1:1: error: 'hal.element_type' op unsupported element type"
    with pytest.raises(Unsupported) as e:
        iree.compile(progs[1])
    assert str(e.value) == "iree: no HAL element type for f8E4M3"
