"""Each runtime configuration of tools/runtimes, in its own built
environment, answers through its protocol server exactly as that runtime's
own Python API answers on the same program (the self-check of issue 36,
as tests/backends/test_xla_as_jit.py is for the project's xla).

The programs are what the other environment's JAX lowers
(`jax.jit(f).lower(*xs).as_text()`, tests/runtimes/direct/jax_programs.py,
under .envs/jaxlib-0.9.2) on inputs where compile options show (NaN, ±0,
±inf, subnormals), and the truth is computed there too: `jax.jit(f)(*xs)`
for the xla engine, `stablehlo.eval_module` for the interpreter; for
TensorFlow, tests/runtimes/direct/tf_direct.py calls XlaCallModule and the
TFLite converter + LiteRT directly, with result types taken from JAX's
results rather than the text.  A server that parsed a signature wrongly,
put outputs out of order, lost a NaN's bits or compiled with other
options fails here.

Long: building the environments takes minutes the first time (pip
downloads ≈ 0.7 GB for TensorFlow) and a few seconds after (the stamp);
each server start imports jax or TensorFlow.  A configuration that cannot
be installed fails the test with build_env's one line."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.runtimes import built
from shlo_conform.backends.base import Unsupported, load_backend
from shlo_conform.spec.types import parse_type, tensor_from_hex, tensor_to_hex
from shlo_conform.suites.records import tensor_type_of

pytestmark = pytest.mark.long

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools" / "runtimes"
DIRECT = Path(__file__).resolve().parent / "direct"




@pytest.fixture(scope="module")
def programs():
    py = built("jaxlib-0.9.2")
    r = subprocess.run([str(py), str(DIRECT / "jax_programs.py")], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads(r.stdout)
    assert doc["jax"] == "0.9.2"
    return doc["cases"]


@pytest.fixture(scope="module")
def tf_direct(programs):
    py = built("tf-2.21.0")
    r = subprocess.run([str(py), str(DIRECT / "tf_direct.py")], input=json.dumps({"cases": programs}),
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads(r.stdout)
    assert doc["tensorflow"] == "2.21.0"
    return {c["name"]: c for c in doc["cases"]}


def _through(config: str, case: dict, backend) -> list[str]:
    exe = backend.compile(case["mlir"])
    outs = backend.run(exe, [tensor_from_hex(t["hex"], parse_type(t["type"])) for t in case["inputs"]])
    return [{"type": tensor_type_of(o).mlir, "hex": tensor_to_hex(o, tensor_type_of(o))} for o in outs]


def _served(config: str):
    built(config)
    return load_backend(f"command:{sys.executable} {TOOLS / 'launch.py'} {config}")


def test_jaxlib_xla_is_jax_jit(programs):
    b = _served("jaxlib-0.9.2")
    try:
        assert "jaxlib 0.9.2" in b.describe()
        for case in programs:
            assert _through("jaxlib-0.9.2", case, b) == case["jit"], case["name"]
    finally:
        b.close()


def test_jaxlib_interpreter_is_eval_module(programs):
    b = _served("jaxlib-0.9.2-interpreter")
    try:
        checked = 0
        for case in programs:
            if case["interpreter"] is not None:
                assert _through("jaxlib-0.9.2-interpreter", case, b) == case["interpreter"], case["name"]
                checked += 1
        assert checked >= 10
    finally:
        b.close()


def test_tf_server_is_xla_call_module(programs, tf_direct):
    b = _served("tf-2.21.0")
    try:
        assert "tensorflow 2.21.0" in b.describe()
        for case in programs:
            assert _through("tf-2.21.0", case, b) == tf_direct[case["name"]]["xla_call_module"], case["name"]
    finally:
        b.close()


def test_litert_server_is_the_converter_and_litert(programs, tf_direct):
    b = _served("litert-2.3.0")
    try:
        ran = 0
        for case in programs:
            direct = tf_direct[case["name"]]["litert"]
            if isinstance(direct, dict):   # the converter refused it when called directly: the server says so
                with pytest.raises(Unsupported, match="the converter refuses"):
                    b.compile(case["mlir"])
                continue
            assert _through("litert-2.3.0", case, b) == direct, case["name"]
            ran += 1
        assert ran >= 8
    finally:
        b.close()


QUANTIZED_EXPORTS = ROOT / "tests" / "cli" / "fixtures" / "quantized_export"


@pytest.mark.parametrize("name", ["elementwise", "mlp_per_tensor", "mlp_per_channel"])
@pytest.mark.parametrize("suffix", [".mlir", ".mlirbc"])
def test_litert_runs_pytorch_quantized_exports_and_the_oracle_judges_them(name, suffix, capsys):
    """The real exporter's quantized programs (f32 at @main, uniform_quantize /
    dequantize inside: tests/cli/fixtures/quantized_export) go through TF's
    converter, which legalizes the quant ops into TFLite's kernels: LiteRT
    runs them, in pretty text and as bytecode (read generic), and `run`
    judges the outputs against the oracle's dequantize_op_quantize; TF's
    XlaCallModule says in one line why not (no quant op reaches HLO)."""
    from shlo_conform.cli import main
    from tests.run_report import verdicts
    built("tf-2.21.0")
    main(["run", str(QUANTIZED_EXPORTS / f"{name}{suffix}"), "--inputs", str(QUANTIZED_EXPORTS / f"{name}.npz"),
          "--backend=runtime:litert-2.3.0,runtime:tf-2.21.0,oracle"])
    out = capsys.readouterr().out
    got = verdicts(out)
    assert got["runtime:litert-2.3.0"] == ["agrees"], out
    assert "UNSUPPORTED: quantized types: XlaCallModule's lowering to HLO translates no quant op" in out, out
