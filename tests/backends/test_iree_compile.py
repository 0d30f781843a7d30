"""The IREE adapter's compile server (backends/iree.py, `_Compiler`, `_serve`).

The adapter compiles in a long-lived compile server instead of one
`iree-compile` process per program; these tests hold it to what the tool
gave: the same messages (the tool itself is the independent reference),
a compiler crash answered as a Rejected carrying the diagnostic the compiler
printed before dying (as the tool's crash was), and a session that keeps
working after a refused program and after a crash.  Programs are the
suite's own (suites/core ids in comments), a few compiles each.
"""
from __future__ import annotations

import numpy as np
import pytest

from shlo_conform.backends import iree as iree_backend
from shlo_conform.backends.base import Rejected, load_backend
from shlo_conform.spec.types import element_type, to_bits


@pytest.fixture(autouse=True)
def _compile_every_time(monkeypatch):
    """These tests are about the compile server: no module comes from the
    compile cache (tests/backends/test_iree_cache.py tests that)."""
    monkeypatch.setenv(iree_backend.CACHE_ENV, "off")

ADD_F32 = ("func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {\n"
           "  %0 = stablehlo.add %a, %b : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n")
F32_A = np.array([1.0, 1.0, -0.0, 2.5], np.float32)
F32_B = np.array([2.0 ** -24, 3 * 2.0 ** -24, -0.0, 0.25], np.float32)
F32_SUM_BITS = [0x3F800000, 0x3F800002, 0x80000000, 0x40300000]  # tie to even; 1 + 2^-22; -0; 2.75

# add_c1 violated: refused by the verifier, before any pass runs
INVALID_ADD = ('func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {\n'
               '  %0 = "stablehlo.add"(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>\n'
               '  return %0 : tensor<2xf32>\n}\n')
# reverse/si4/cd83c95fffe3: refused by a legalization pass, whose message prints the op with its location
REVERSE_SI4 = ('func.func @main(%arg0: tensor<i4>) -> (tensor<i4>) {\n'
               '  %0 = "stablehlo.reverse"(%arg0) {dimensions = array<i64>} : (tensor<i4>) -> tensor<i4>\n'
               '  "func.return"(%0) : (tensor<i4>) -> ()\n}\n')
# rng_bit_generator/ui32/26a36c91e667: IREE 3.13.0 reports an error, then aborts (LLVM ERROR) in the same pass
RBG_ABORTS = ('func.func @main(%arg0: tensor<2xui64>) -> (tensor<2xui64>, tensor<5x0x6xui32>) {\n'
              '  %0:2 = "stablehlo.rng_bit_generator"(%arg0) {rng_algorithm = #stablehlo<rng_algorithm THREE_FRY>} '
              ': (tensor<2xui64>) -> (tensor<2xui64>, tensor<5x0x6xui32>)\n'
              '  "func.return"(%0#0, %0#1) : (tensor<2xui64>, tensor<5x0x6xui32>) -> ()\n}\n')
# bitcast_convert/complex<f32>/3b104e64547c: IREE 3.13.0 dies of SIGSEGV without a diagnostic
BITCAST_C64_SEGV = ('func.func @main(%arg0: tensor<196xcomplex<f32>>) -> (tensor<196xcomplex<f32>>) {\n'
                    '  %0 = "stablehlo.bitcast_convert"(%arg0) : (tensor<196xcomplex<f32>>) -> tensor<196xcomplex<f32>>\n'
                    '  "func.return"(%0) : (tensor<196xcomplex<f32>>) -> ()\n}\n')


@pytest.fixture(scope="module")
def iree():
    """One backend for the module, made with the cache off too: a module
    fixture is set up before the function fixture above, so without this it
    read the cache setting of the environment (a warm cache served ADD_F32
    and no compile server started: test_a_refused_program_leaves_the_session_usable
    failed when another test on the worker had compiled it)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(iree_backend.CACHE_ENV, "off")
        b = load_backend("iree")
    yield b
    b.close()


def add_works(b) -> None:
    out = b.run(b.compile(ADD_F32), [F32_A, F32_B])
    assert to_bits(out[0], element_type("f32")).tolist() == F32_SUM_BITS


def tool_message(mlir: str) -> str:
    """The message the adapter gave when it ran `iree-compile` (its code
    before the compile server), with the same flags."""
    import iree.compiler as ic

    from shlo_conform.backends.diagnostics import one_line
    with pytest.raises(ic.CompilerToolError) as e:
        ic.compile_str(mlir, target_backends=["llvm-cpu"], input_type="stablehlo",
                       extra_args=["--iree-input-demote-f64-to-f32=false", "--iree-llvmcpu-target-cpu=generic"])
    return one_line(str(e.value).split("Diagnostics:", 1)[1])


@pytest.mark.parametrize("mlir", [INVALID_ADD, REVERSE_SI4], ids=["verifier", "legalization"])
def test_rejection_messages_are_the_tools(iree, mlir):
    with pytest.raises(Rejected) as e:
        iree.compile(mlir)
    assert str(e.value) == tool_message(mlir)
    assert str(e.value).startswith("<stdin>:2:")


def test_a_refused_program_leaves_the_session_usable(iree):
    iree.compile(ADD_F32)
    server = iree._compiler._proc.pid
    with pytest.raises(Rejected):
        iree.compile(INVALID_ADD)
    add_works(iree)
    assert iree._compiler._proc.pid == server   # the same session compiled it


def test_a_compiler_abort_is_a_rejection_with_its_diagnostic(iree):
    with pytest.raises(Rejected, match="dimension 2 is out-of-bounds for input rank 1"):
        iree.compile(RBG_ABORTS)
    add_works(iree)   # a fresh server took over


def test_a_compiler_segfault_is_a_rejection_naming_the_signal(iree):
    with pytest.raises(Rejected, match=r"the compiler died \(signal SIGSEGV\)"):
        iree.compile(BITCAST_C64_SEGV)
    add_works(iree)


def test_close_ends_the_server():
    b = load_backend("iree")
    b.compile(ADD_F32)
    proc = b._compiler._proc
    b.close()
    assert proc.poll() is not None


def test_a_server_that_cannot_start_is_an_error_not_a_rejection():
    """A broken setup (here a flag the compiler does not know) must not turn
    every program into a Rejected verdict."""
    from shlo_conform.backends.iree import _Compiler

    c = _Compiler(["--no-such-iree-flag"])
    with pytest.raises(RuntimeError, match="did not start"):
        c.compile(ADD_F32)
