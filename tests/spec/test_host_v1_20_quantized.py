"""Quantized send, recv, infeed and outfeed (StableHLO v1.20).

v1.20's Inputs/Outputs rows of the four host ops read "tensors or quantized
tensors"; none of their Semantics dequantizes, so what travels is the
quantized value itself: its storage integers, unchanged.  Truth here is
that identity, checked on hand-made data and on every generated case
(host data in, expectation out — or operands in, log out — byte for byte).
"""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from shlo_conform.generators import expect, quantized_host, suite
from shlo_conform.oracle.host import Host, session
from shlo_conform.spec.dsl.quantization import STORAGE
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.quantized import family_name, parse_quantized_type
from shlo_conform.spec.types import TensorType, TokenType

HOST_OPS = ("send", "recv", "infeed", "outfeed")
Q8 = parse_quantized_type("!quant.uniform<i8:f32, 0.1:-3>")
QAXIS = parse_quantized_type("!quant.uniform<i8:f32:1, {0.05,0.25:1,1.0:-7}>")


def _instance(op: str, t: TensorType):
    spec = OPS[op]
    if op in ("send", "outfeed"):
        attrs = ({"channel_id": 1, "channel_type": "DEVICE_TO_HOST", "is_host_transfer": True} if op == "send"
                 else {"outfeed_config": ""})
        return spec.instance({"inputs": [t], "token": TokenType()}, attrs, {"result": TokenType()})
    attrs = ({"channel_id": 1, "channel_type": "HOST_TO_DEVICE", "is_host_transfer": True} if op == "recv"
             else {"infeed_config": ""})
    return spec.instance({"token": TokenType()}, attrs, {"results": [t, TokenType()]})


@pytest.mark.parametrize("op", HOST_OPS)
@pytest.mark.parametrize("q", [Q8, QAXIS])
def test_the_tables_take_quantized_tensors(op, q):
    """Per-tensor and per-axis: v1.20's rows say "quantized tensors", with no per-tensor restriction."""
    spec = OPS[op]
    assert spec.quantization.meaning == STORAGE and spec.quantization.admits_per_axis(spec.results[0].name)
    inst = _instance(op, TensorType((2, 3), q))
    assert spec.types_outside_tables(inst) == [] and spec.violated(inst) == []


def test_infeed_returns_the_queued_storage_values():
    """By hand: the host queues storage bytes; infeed of a quantized tensor returns them, bit for bit
    (no dequantize, no requantize), and the type stays the quantized one."""
    ty = "tensor<2x3x!quant.uniform<i8:f32, 1.000000e-01:-3>>"
    mlir = (f"func.func @main() -> ({ty}) {{\n  %t = \"stablehlo.after_all\"() : () -> !stablehlo.token\n"
            f"  %r:2 = \"stablehlo.infeed\"(%t) {{infeed_config = \"\"}} : (!stablehlo.token) -> ({ty}, !stablehlo.token)\n"
            f"  \"func.return\"(%r#0) : ({ty}) -> ()\n}}\n")
    data = np.array([[-128, -3, 0], [1, 77, 127]], dtype=np.int8)
    with session(Host(infeed=[data])):
        [out] = expect.expected_outputs(mlir, [])
    assert out.type.element_type == Q8 and out.kind == "exact"
    assert np.array_equal(np.asarray(out.bits).astype(np.uint8), data.view(np.uint8))


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("host_v1_20_quantized")
    suite.build(out, 0, ops=list(HOST_OPS))
    return {op: [json.loads(line) for line in (out / f"{op}.jsonl").read_text().splitlines()] for op in HOST_OPS}


def _quantized(cases: list[dict]) -> list[dict]:
    return [c for c in cases if c["dtype"].startswith("quant_") and not c.get("grid")]


@pytest.mark.parametrize("op", HOST_OPS)
def test_one_case_per_quantized_type(generated, op):
    cases = _quantized(generated[op])
    assert [c["dtype"] for c in cases] == [family_name(q) for q in quantized_host.TYPES]
    assert all(c["kind"] == "value" and c["provenance"]["spec"] == "v1.20" for c in cases)
    for q, c in zip(quantized_host.TYPES, cases):
        assert q.mlir in c["mlir"]
    # the narrowed-bounds type is left out (module docstring): drawn storage values would leave its bounds
    assert all(int(q.storage_min) == q.storage_type.min_value for q in quantized_host.TYPES)


@pytest.mark.parametrize("op", ["send", "outfeed"])
def test_the_log_holds_the_operands_storage_values(generated, op):
    for c in _quantized(generated[op]):
        log = c["host"]["log"]
        assert [e["expected"]["hex"] for e in log] == [v["hex"] for v in c["inputs"]], c["id"]
        assert [e["expected"]["type"] for e in log] == [v["type"] for v in c["inputs"]]
        assert all(e["expected"]["kind"] == "exact" for e in log)


@pytest.mark.parametrize("op", ["recv", "infeed"])
def test_the_results_are_the_queued_storage_values(generated, op):
    for c in _quantized(generated[op]):
        host = c["host"]
        queued = host["infeed"] if op == "infeed" else [v for vs in host["channels"].values() for v in vs]
        assert [e["hex"] for e in c["expected"]] == [v["hex"] for v in queued], c["id"]
        for e, v in zip(c["expected"], queued):   # the host holds the storage type, the program the quantized one
            q = parse_quantized_type(e["type"][e["type"].index("!quant"):-1])
            assert v["type"].endswith(f"x{q.storage_type.mlir}>") or v["type"] == f"tensor<{q.storage_type.mlir}>" and e["kind"] == "exact"


def test_per_axis_types_sit_on_their_axis(generated):
    """A per-axis type is placed only where the tensor's quantized axis has one scale per element."""
    for op in HOST_OPS:
        for c in _quantized(generated[op]):
            if c["dtype"].endswith("_axis"):
                q = next(t for t in quantized_host.TYPES if t.mlir in c["mlir"])
                shapes = {tuple(int(d) for d in m.split("x")[:-1])
                          for m in re.findall(r"tensor<((?:\d+x)+)!quant", c["mlir"])}
                assert shapes and all(s[q.quantization_dimension] == len(q.scales) for s in shapes), c["id"]
