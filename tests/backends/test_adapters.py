"""The real adapters (xla, interpreter, iree, command) on a small real slice.

Every expected value here is computed by hand (noted next to it), never by
another backend.  IREE compiles take about half a second each, so it gets
the same few programs and nothing more.
"""
from __future__ import annotations

import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from shlo_conform.backends.diagnostics import one_line
from shlo_conform.suites.signature import main_signature
from shlo_conform.backends.base import Rejected, Unsupported, load_backend
from shlo_conform.spec.types import element_type, to_bits

FIXTURE = Path(__file__).parent / "fixtures" / "numpy_impl.py"


def binary(op: str, t: str, result: str | None = None, attrs: str = "") -> str:
    result = result or t
    sig = f"({t}, {t}) -> {result}"
    return (f"func.func @main(%a: {t}, %b: {t}) -> {result} {{\n"
            f"  %0 = stablehlo.{op} {attrs}%a, %b : {sig if result != t else t}\n"
            f"  return %0 : {result}\n}}\n")


ADD_F32 = binary("add", "tensor<4xf32>")
ADD_BF16 = binary("add", "tensor<3xbf16>")
ADD_SI4 = binary("add", "tensor<4xi4>")
MUL_C64 = binary("multiply", "tensor<2xcomplex<f32>>")
COMPARE_LT = ("func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xi1> {\n"
              "  %0 = stablehlo.compare LT, %a, %b, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>\n"
              "  return %0 : tensor<3xi1>\n}\n")
# add_c1 violated: operand shapes differ (generic form, so the parser cannot infer anything)
INVALID_ADD = ('func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {\n'
               '  %0 = "stablehlo.add"(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>\n'
               '  return %0 : tensor<2xf32>\n}\n')

F32_A = np.array([1.0, 1.0, -0.0, 2.5], np.float32)
F32_B = np.array([2.0 ** -24, 3 * 2.0 ** -24, -0.0, 0.25], np.float32)
# 1 + 2^-24 is a tie -> even (1.0); 1 + 3*2^-24 -> 1 + 2^-22; -0 + -0 = -0; 2.75
F32_SUM_BITS = np.array([0x3F800000, 0x3F800002, 0x80000000, 0x40300000], np.uint32)

BF16_A = np.array([1.0, 1.0, 2.5], ml_dtypes.bfloat16)
BF16_B = np.array([2.0 ** -8, 3 * 2.0 ** -8, 0.5], ml_dtypes.bfloat16)
# bf16 has 7 stored mantissa bits: 1 + 2^-8 ties to 1.0; 1 + 1.5 ulp ties to 1 + 2^-6; 3.0
BF16_SUM_BITS = np.array([0x3F80, 0x3F82, 0x4040], np.uint16)

SI4_A = np.array([7, -8, 3, -1], ml_dtypes.int4)
SI4_B = np.array([1, -1, 4, 1], ml_dtypes.int4)
SI4_SUM = [-8, 7, 7, 0]  # two's-complement wrap in 4 bits

C64_A = np.array([1 + 2j, 1j], np.complex64)
C64_B = np.array([3 + 4j, 1j], np.complex64)
C64_PROD = [-5 + 10j, -1 + 0j]  # (1+2i)(3+4i) = 3+4i+6i-8; i*i = -1

CMP_A = np.array([1.0, np.nan, 2.0], np.float32)
CMP_B = np.array([2.0, 1.0, 2.0], np.float32)
CMP_LT = [True, False, False]  # NaN compares false; 2 < 2 is false


def run1(backend, mlir, *inputs):
    exe = backend.compile(mlir)
    outs = backend.run(exe, list(inputs))
    assert len(outs) == 1
    return outs[0]


@pytest.fixture(scope="module", params=["xla", "interpreter", "iree"])
def backend(request):
    return load_backend(request.param)   # all three are dependencies: a broken install fails here


def test_describe(backend):
    d = backend.describe()
    assert backend.name in d.lower() or "xla" in d.lower() or "iree" in d.lower()
    assert "\n" not in d


def test_add_f32_rounding_and_signed_zero(backend):
    out = run1(backend, ADD_F32, F32_A, F32_B)
    assert out.dtype == np.float32 and out.shape == (4,)
    assert to_bits(out, element_type("f32")).tolist() == F32_SUM_BITS.tolist()


def test_add_bf16(backend):
    out = run1(backend, ADD_BF16, BF16_A, BF16_B)
    assert out.dtype == np.dtype(ml_dtypes.bfloat16)
    assert to_bits(out, element_type("bf16")).tolist() == BF16_SUM_BITS.tolist()


def test_add_si4_wraps(backend):
    out = run1(backend, ADD_SI4, SI4_A, SI4_B)
    assert out.dtype == np.dtype(ml_dtypes.int4)
    assert out.astype(int).tolist() == SI4_SUM


def test_compare_lt_with_nan(backend):
    out = run1(backend, COMPARE_LT, CMP_A, CMP_B)
    assert out.dtype == np.bool_
    assert out.tolist() == CMP_LT


def test_multiply_complex64(backend):
    out = run1(backend, MUL_C64, C64_A, C64_B)
    assert out.dtype == np.complex64
    assert out.tolist() == C64_PROD


def test_invalid_program_is_rejected(backend):
    with pytest.raises(Rejected) as e:
        backend.compile(INVALID_ADD)
    assert "\n" not in str(e.value) and str(e.value)


def test_garbage_text_is_rejected(backend):
    with pytest.raises(Rejected):
        backend.compile("this is not MLIR")


# ---------------------------------------------------------------- per-backend extras

def test_xla_64_bit_inputs_are_not_truncated():
    b = load_backend("xla")
    t = "tensor<2xi64>"
    a = np.array([2 ** 40, -(2 ** 62)], np.int64)
    out = run1(b, binary("add", t), a, np.array([1, 1], np.int64))
    assert out.dtype == np.int64 and out.tolist() == [2 ** 40 + 1, -(2 ** 62) + 1]


def test_interpreter_complex128_and_f8_through_the_shim():
    b = load_backend("interpreter")
    t = "tensor<2xcomplex<f64>>"
    out = run1(b, binary("add", t), np.array([1 + 1j, 0.5j], np.complex128), np.array([2 - 3j, 0.25], np.complex128))
    assert out.dtype == np.complex128 and out.tolist() == [3 - 2j, 0.25 + 0.5j]
    t = "tensor<2xf8E4M3FN>"
    a = np.array([448, 1], ml_dtypes.float8_e4m3fn)
    out = run1(b, binary("add", t), a, np.array([-32, 0.125], ml_dtypes.float8_e4m3fn))
    # exact sums: 448 - 32 = 416 = 1.101b * 2^8 -> 0 1111 101 = 0x7D;  1 + 0.125 = 1.001b -> 0 0111 001 = 0x39
    assert out.dtype == np.dtype(ml_dtypes.float8_e4m3fn)
    assert to_bits(out, element_type("f8E4M3FN")).tolist() == [0x7D, 0x39]


def test_iree_ui32_results_keep_their_type():
    b = load_backend("iree")
    t = "tensor<2xui32>"
    out = run1(b, binary("add", t), np.array([2 ** 32 - 1, 5], np.uint32), np.array([1, 2 ** 31], np.uint32))
    assert out.dtype == np.uint32 and out.tolist() == [0, 5 + 2 ** 31]


def test_iree_odd_4bit_tensor_is_unsupported_not_rejected():
    b = load_backend("iree")
    with pytest.raises(Unsupported):
        b.compile(binary("add", "tensor<3xi4>"))


# ---------------------------------------------------------------- command adapter

def command(*flags: str):
    return load_backend("command", command=[sys.executable, str(FIXTURE), *flags])


def test_command_add_f32_and_complex():
    b = command()
    try:
        out = run1(b, ADD_F32, F32_A, F32_B)
        assert to_bits(out, element_type("f32")).tolist() == F32_SUM_BITS.tolist()
        out = run1(b, MUL_C64, C64_A, C64_B)
        assert out.dtype == np.complex64 and out.tolist() == C64_PROD
        assert "numpy_impl" in b.describe()
        assert b.claims("add", "f32") is None
    finally:
        b.close()


def test_command_rejects_invalid():
    b = command()
    try:
        with pytest.raises(Rejected, match="same type"):
            b.compile(INVALID_ADD)
        with pytest.raises(Rejected):
            b.compile("garbage")
    finally:
        b.close()


def test_command_claims():
    b = command("--declare-unsupported")
    try:
        assert b.claims("multiply", "complex<f32>") == "numpy_impl: declared"
        assert b.claims("multiply", "f32") is None
    finally:
        b.close()


def test_command_load_backend_spelling():
    b = load_backend(f"command:{sys.executable} {FIXTURE}")
    try:
        assert run1(b, ADD_F32, F32_A, F32_B).dtype == np.float32
    finally:
        b.close()


@pytest.mark.parametrize("flag, when, pattern", [
    ("--crash-on=run", "run", "signal SIGABRT"),
    ("--exit-on=run", "run", "status 3"),
    ("--garbage-on=run", "run", "not JSON"),
    ("--crash-on=compile", "compile", "signal SIGABRT"),
])
def test_command_crashes_are_clear(flag, when, pattern):
    from shlo_conform.backends.command import CommandCrashed

    b = command(flag)
    try:
        with pytest.raises(CommandCrashed, match=pattern):
            exe = b.compile(ADD_F32)
            b.run(exe, [F32_A, F32_B])
    finally:
        b.close()


def test_one_reading_of_a_backend_name(tmp_path):
    """Built-ins, command lines, module:Class and file.py:Class are read in one
    place; anything else is refused with one line that names it."""
    from shlo_conform.backends.base import parse_backend_name
    assert parse_backend_name("xla") == ("builtin", "shlo_conform.backends.xla:XlaBackend")
    assert parse_backend_name("command:./impl --fast") == ("command", "./impl --fast")
    assert parse_backend_name("pkg.mod:Impl")[0] == "class"
    assert parse_backend_name("some/dir/impl.py:Impl")[0] == "class"
    for bad, msg in (("nosuch", "unknown backend 'nosuch'"), ("command:  ", "needs a command line")):
        with pytest.raises(ValueError, match=msg):
            parse_backend_name(bad)
    impl = tmp_path / "impl.py"
    impl.write_text("from shlo_conform.backends.oracle import OracleBackend as Impl\n")
    assert load_backend(f"{impl}:Impl").name == "oracle"


def test_command_missing_executable():
    from shlo_conform.backends.command import CommandCrashed

    b = load_backend("command", command="/nonexistent/impl")
    with pytest.raises(CommandCrashed, match="cannot start"):
        b.compile(ADD_F32)


# ---------------------------------------------------------------- helpers

def test_main_signature_reader():
    args, results = main_signature(COMPARE_LT)
    assert [t.mlir for t in args] == ["tensor<3xf32>", "tensor<3xf32>"]
    assert [t.mlir for t in results] == ["tensor<3xi1>"]
    args, results = main_signature("func.func public @main(%x: tensor<complex<f64>> {a = 1}) -> (tensor<2xui32>, tensor<i4>) {")
    assert [t.mlir for t in args] == ["tensor<complex<f64>>"]
    assert [t.mlir for t in results] == ["tensor<2xui32>", "tensor<i4>"]
    assert main_signature('"func.func"() <{sym_name = "main"}>') is None


def test_one_line():
    msg = "Diagnostics:\n<stdin>:1:1: error: bad thing\n  ^\n note: see current operation: foo\n"
    assert one_line(msg) == "<stdin>:1:1: error: bad thing"


@pytest.mark.parametrize("flag, pattern", [
    ("--wrong-id-on=run", "carries id 1"),           # the compile's id: a reply to another request
    ("--no-id-on=run", "carries id None"),
    ("--array-on=run", "not an object"),
    ("--extra-line-on=compile", "carries id 1"),     # the compile reply, twice
    ("--kill-on=run", "signal SIGKILL"),
    ("--exit0-on=run", "status 0"),
])
def test_command_protocol_violations_are_crashes(flag, pattern):
    from shlo_conform.backends.base import Crashed

    b = command(flag)
    try:
        exe = b.compile(ADD_F32)
        with pytest.raises(Crashed, match=pattern):
            b.run(exe, [F32_A, F32_B])
    finally:
        b.close()


def test_command_handles_of_a_dead_process_are_never_sent():
    """After a crash the adapter starts a new process; a handle the old one
    gave out is refused here instead of reaching the new one."""
    from shlo_conform.backends.command import CommandCrashed

    b = command("--segv-on=3")  # claims (1), compile (2), run (3): dies
    try:
        b.claims("add", "f32")
        exe = b.compile(ADD_F32)
        with pytest.raises(CommandCrashed, match="SIGSEGV"):
            b.run(exe, [F32_A, F32_B])
        with pytest.raises(CommandCrashed, match="compile it again"):
            b.run(exe, [F32_A, F32_B])
        fresh = b.compile(ADD_F32)  # a new process, counting its requests afresh
        assert to_bits(b.run(fresh, [F32_A, F32_B])[0], element_type("f32")).tolist() == F32_SUM_BITS.tolist()
    finally:
        b.close()
