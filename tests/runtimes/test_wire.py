"""tools/runtimes/wire.py, the protocol side every runtime server shares,
held to the project's own definitions of the same facts: the tensor codec
against spec.types (to_bits / tensor_to_hex, the layout docs/command-protocol.md
states), @main's signature against suites.signature on every op's programs
of the bundled suite, and the request loop against the protocol's rules
(one reply per request, its id echoed, each refusal under its own key).
Nothing here needs another environment: the servers import wire.py from
their own folder, and so does this test."""
from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from shlo_conform.spec.types import ELEMENT_TYPES, TensorType, from_bits, tensor_to_hex
from shlo_conform.suites.signature import main_signature as project_signature

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "runtimes"))
import wire  # noqa: E402

PLAIN = [n for n, et in ELEMENT_TYPES.items() if not et.is_quantized]


@pytest.mark.parametrize("name", PLAIN)
def test_codec_is_the_projects(name):
    """Random bit patterns of every element type (NaN payloads, -0 and
    subnormals among them, by drawing bits, not values) cross wire's
    encode/decode as the project's tensor_to_hex writes them."""
    et = ELEMENT_TYPES[name]
    rng = np.random.default_rng(len(name))
    shape = (2, 3)
    width = et.component.bits if et.is_complex else et.bits   # a complex element is two component patterns
    bits = rng.integers(0, 1 << width, size=shape + ((2,) if et.is_complex else ()), dtype=np.uint64)
    values = from_bits(bits.astype(et.bits_dtype), et)
    t = TensorType(shape, et)
    expected = tensor_to_hex(values, t)
    wt = wire.parse_tensor_type(t.mlir)
    assert wire.encode(values, wt)["hex"] == expected
    back = wire.decode({"type": t.mlir, "hex": expected})
    assert back.shape == shape and back.dtype == values.dtype
    assert wire.encode(back, wt)["hex"] == expected


def test_rank_zero_and_empty():
    """A rank-0 tensor stays rank 0 (np.ascontiguousarray would make it (1,)),
    and an empty one has no hex."""
    x = wire.decode({"type": "tensor<f32>", "hex": "0000c07f"})
    assert x.shape == () and np.isnan(x)
    assert wire.encode(np.zeros((0, 3), np.int8), wire.parse_tensor_type("tensor<0x3xi8>"))["hex"] == ""


def test_an_output_keeps_the_element_type_the_runtime_returned():
    """jaxlib's rng_bit_generator hands back uint8 where the program
    declares i8 (docs/findings.md): the reply says ui8, so the judge fails
    it as it does on the project's own XLA adapter — a cast to i8 would
    have relabelled the bits as conformant.  A bool or 0/1 integer array
    for an i1 result is still i1; a dtype the protocol does not carry is
    cast to the declared one."""
    i8 = wire.parse_tensor_type("tensor<2xi8>")
    assert wire.encode(np.array([200, 1], np.uint8), i8) == {"type": "tensor<2xui8>", "hex": "c801"}
    assert wire.encode(np.array([-56, 1], np.int8), i8) == {"type": "tensor<2xi8>", "hex": "c801"}
    f32 = wire.parse_tensor_type("tensor<f32>")
    assert wire.encode(np.array(1065353216, np.uint32), f32)["type"] == "tensor<ui32>"
    assert wire.encode(np.array(1.0, np.float64), f32)["type"] == "tensor<f64>"
    i1 = wire.parse_tensor_type("tensor<3xi1>")
    assert wire.encode(np.array([True, False, True]), i1) == {"type": "tensor<3xi1>", "hex": "010001"}
    assert wire.encode(np.array([1, 0, 1], np.int32), i1) == {"type": "tensor<3xi1>", "hex": "010001"}
    assert wire.encode(np.array([1.5, 2.0], object), wire.parse_tensor_type("tensor<2xf32>"))["type"] == \
        "tensor<2xf32>"


def _suite_programs():
    """The first program of every op's file of suites/core."""
    for path in sorted((ROOT / "suites" / "core").glob("*.jsonl")):
        with open(path) as f:
            case = json.loads(f.readline())
        yield path.stem, case["mlir"]


def test_signature_is_the_projects():
    """wire.main_signature reads the same @main types as suites.signature on
    the suite's programs (those the project's reader reads as tensors)."""
    compared = 0
    for op, mlir in _suite_programs():
        theirs = project_signature(mlir)
        if theirs is None or not all(isinstance(t, TensorType) for t in theirs[0] + theirs[1]):
            continue
        if any(t.element_type.is_quantized for t in theirs[0] + theirs[1]):
            continue
        args, results = wire.main_signature(mlir)
        assert [wire.parse_tensor_type(a).mlir for a in args] == [t.mlir for t in theirs[0]], op
        assert [wire.parse_tensor_type(r).mlir for r in results] == [t.mlir for t in theirs[1]], op
        compared += 1
    assert compared >= 60


def test_signature_with_attributes():
    """Argument and result attributes (what JAX writes) are not types."""
    text = ('module @jit_f attributes {mhlo.num_partitions = 1 : i32} {\n'
            '  func.func public @main(%arg0: tensor<2xf32> {mhlo.layout_mode = "default"}, %arg1: tensor<complex<f64>>)'
            ' -> (tensor<2xf32> {jax.result_info = "result[0]"}, tensor<i1>) {\n  }\n}')
    assert wire.main_signature(text) == (["tensor<2xf32>", "tensor<complex<f64>>"], ["tensor<2xf32>", "tensor<i1>"])
    assert wire.main_signature("func.func @main() -> tensor<4xi32> {\n}") == ([], ["tensor<4xi32>"])


def test_signature_in_generic_form_is_the_projects():
    """A program read from bytecode reaches a server in generic form
    (`"func.func"() <{function_type = …, sym_name = "main"}>`): the same types
    as the project reads from the pretty text it came from — the quantized
    PyTorch export of tests/cli/fixtures (f32 at @main, quantized inside),
    printed generic by StableHLO's reader as IREE's bindings carry it."""
    from shlo_conform.oracle.reading import read_quantized
    pretty = (ROOT / "tests" / "cli" / "fixtures" / "quantized_export" / "mlp_per_tensor.mlir").read_text()
    generic = read_quantized(pretty)
    assert '"func.func"()' in generic and "func.func @main" not in generic
    theirs = project_signature(pretty)
    assert wire.main_signature(generic) == ([t.mlir for t in theirs[0]], [t.mlir for t in theirs[1]])
    two = '"func.func"() <{function_type = (tensor<2xf32>) -> (tensor<2xf32>, tensor<i1>), sym_name = "main"}> ({'
    assert wire.main_signature(two) == (["tensor<2xf32>"], ["tensor<2xf32>", "tensor<i1>"])
    with pytest.raises(ValueError, match="no @main"):
        wire.main_signature('"func.func"() <{function_type = () -> (), sym_name = "other"}> ({')


class _Fake(wire.Server):
    """A runtime that adds its two f32 arguments, refusing on cue."""

    def describe(self):
        return "fake 1.0"

    def unsupported(self):
        return [{"op": "fft", "dtype": "*", "reason": "no fft"}]

    def compile(self, mlir):
        if "reject" in mlir:
            raise wire.Rejected("refused\nsecond line")
        if "unsupported" in mlir:
            raise wire.Unsupported("not here")
        if "boom" in mlir:
            raise KeyError("bug")
        args, results = wire.main_signature(mlir)

        class P:
            pass
        p = P()
        p.results = [wire.parse_tensor_type(r) for r in results]
        p.extra = "extra" in mlir
        return p

    def run(self, program, inputs):
        if program.extra:
            return [inputs[0], inputs[1]]
        return [inputs[0] + inputs[1]]


ADD = "func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {\n}"


def _exchange(requests):
    out = io.BytesIO()

    class Sink:
        def write(self, b):
            out.write(b)

        def flush(self):
            pass
    rc = wire.serve(_Fake, replies=Sink(), requests=io.StringIO("".join(json.dumps(r) + "\n" for r in requests)))
    return rc, [json.loads(line) for line in out.getvalue().decode().splitlines()]


def test_serve_answers_every_request_once_with_its_id():
    ins = [{"type": "tensor<2xf32>", "hex": "0000803f0000c07f"}, {"type": "tensor<2xf32>", "hex": "0000803f00000080"}]
    rc, replies = _exchange([
        {"id": 1, "cmd": "claims"},
        {"id": 2, "cmd": "compile", "mlir": ADD},
        {"id": 3, "cmd": "run", "handle": 0, "inputs": ins},
        {"id": 4, "cmd": "compile", "mlir": ADD + "// reject"},
        {"id": 5, "cmd": "compile", "mlir": ADD + "// unsupported"},
        {"id": 6, "cmd": "compile", "mlir": ADD + "// boom"},
        {"id": 7, "cmd": "run", "handle": 99, "inputs": ins},
        {"id": 8, "cmd": "compile", "mlir": ADD, "grid": {"num_replicas": 2, "num_partitions": 1}},
        {"id": 9, "cmd": "compile", "mlir": ADD + "// extra"},
        {"id": 10, "cmd": "run", "handle": 1, "inputs": ins},
        {"id": 11, "cmd": "frobnicate"},
    ])
    assert rc == 0
    assert [r["id"] for r in replies] == list(range(1, 12))
    assert replies[0] == {"id": 1, "ok": True, "describe": "fake 1.0",
                          "unsupported": [{"op": "fft", "dtype": "*", "reason": "no fft"}]}
    assert replies[1] == {"id": 2, "ok": True, "handle": 0}
    # 1 + 1 = 2 (0x40000000) and NaN + -0 = NaN: computed by numpy in the fake, carried bit for bit
    assert replies[2]["outputs"] == [{"type": "tensor<2xf32>", "hex": "000000400000c07f"}]
    assert replies[3] == {"id": 4, "ok": False, "rejected": "refused | second line"}
    assert replies[4] == {"id": 5, "ok": False, "unsupported": "not here"}
    assert replies[5]["ok"] is False and replies[5]["error"].startswith("server error: KeyError")
    assert replies[6]["ok"] is False and "unknown handle" in replies[6]["error"]
    assert replies[7]["ok"] is False and "grid" in replies[7]["unsupported"]
    assert replies[9]["ok"] is False and "returned 2 results" in replies[9]["error"]
    assert replies[10] == {"id": 11, "ok": False, "error": "unknown command 'frobnicate'"}


def test_a_runtime_that_does_not_load_answers_nothing():
    """The process ends (status 3) before any reply: the runner reports a
    backend that does not start, rather than a claims reply it would read
    as 'claims everything'."""
    def broken():
        raise ImportError("no such runtime")
    out = io.BytesIO()
    rc = wire.serve(broken, replies=out, requests=io.StringIO('{"id": 1, "cmd": "claims"}\n'))
    assert rc == 3 and out.getvalue() == b""
