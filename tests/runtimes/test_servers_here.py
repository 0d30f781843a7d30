"""The jaxlib server (tools/runtimes/jaxlib_server.py) run under the
project's own .venv — jaxlib 0.10.2 — through launch.py and the project's
command adapter, answering as the project's adapters answer on the same
jaxlib: `xla` for --engine=xla, `interpreter` for --engine=interpreter.
Bit for bit, on programs chosen where the boundary can go wrong (NaN and
-0 in maximum, which jax.jit's compile options decide; bf16, f8, complex,
4-bit and rank-0 tensors through the codec and the interpreter's shim;
ui32 wrap-around; an invalid program).  The truth is the project's adapter
on the same jaxlib, so a difference is the server's.  A fake environment
directory (SHLO_RUNTIME_ENVS) whose `bin/python` runs .venv's Python lets
this run without building .envs/ (tests/runtimes/test_runtimes_long.py
builds them); launch.py's refusal of an environment that is not built is
checked too."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from shlo_conform.backends.base import Rejected, load_backend
from shlo_conform.spec.types import parse_type, tensor_from_hex, tensor_to_hex

ROOT = Path(__file__).resolve().parents[2]
LAUNCH = ROOT / "tools" / "runtimes" / "launch.py"

PROGRAMS = {
    "maximum f32 specials": (
        "func.func @main(%a: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<6xf32> {\n"
        "  %0 = stablehlo.maximum %a, %b : tensor<6xf32>\n  return %0 : tensor<6xf32>\n}\n",
        [("tensor<6xf32>", "0000803f0000c07f00000080000000000000807f00000000"),
         ("tensor<6xf32>", "0000c07f0000004000000000000000800000c07f01000000")]),
    "bf16, complex, i4, rank 0": (
        "func.func @main(%a: tensor<3xbf16>, %b: tensor<2xcomplex<f32>>, %c: tensor<3xi4>, %d: tensor<f32>)"
        " -> (tensor<3xbf16>, tensor<2xcomplex<f32>>, tensor<3xi4>, tensor<f32>) {\n"
        "  %0 = stablehlo.multiply %a, %a : tensor<3xbf16>\n  %1 = stablehlo.add %b, %b : tensor<2xcomplex<f32>>\n"
        "  %2 = stablehlo.add %c, %c : tensor<3xi4>\n  %3 = stablehlo.negate %d : tensor<f32>\n"
        "  return %0, %1, %2, %3 : tensor<3xbf16>, tensor<2xcomplex<f32>>, tensor<3xi4>, tensor<f32>\n}\n",
        [("tensor<3xbf16>", "803fc07f8000"), ("tensor<2xcomplex<f32>>", "0000803f000000c00000c07f00000080"),
         ("tensor<3xi4>", "010f07"), ("tensor<f32>", "00000000")]),
    "f8 and ui32": (
        "func.func @main(%a: tensor<2xf8E4M3FN>, %b: tensor<2xui32>, %c: tensor<2xi1>) -> "
        "(tensor<2xf8E4M3FN>, tensor<2xui32>, tensor<2xi1>) {\n"
        "  %0 = stablehlo.add %a, %a : tensor<2xf8E4M3FN>\n  %1 = stablehlo.add %b, %b : tensor<2xui32>\n"
        "  %2 = stablehlo.not %c : tensor<2xi1>\n"
        "  return %0, %1, %2 : tensor<2xf8E4M3FN>, tensor<2xui32>, tensor<2xi1>\n}\n",
        [("tensor<2xf8E4M3FN>", "387e"), ("tensor<2xui32>", "ffffffff01000000"), ("tensor<2xi1>", "0100")]),
}
INVALID = ("func.func @main(%a: tensor<4xf32>) -> tensor<3xf32> {\n"
           "  %0 = stablehlo.add %a, %a : tensor<3xf32>\n  return %0 : tensor<3xf32>\n}\n")


@pytest.fixture(scope="module")
def fake_envs(tmp_path_factory):
    """An environment directory whose jaxlib-0.9.2 is .venv's Python (a script,
    not a symlink: a venv's Python finds its site-packages from its own path)."""
    root = tmp_path_factory.mktemp("envs")
    py = root / "jaxlib-0.9.2" / "bin" / "python"
    py.parent.mkdir(parents=True)
    py.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    py.chmod(0o755)
    return root


def _arrays(inputs):
    return [tensor_from_hex(h, parse_type(t)) for t, h in inputs]


def _hexes(outputs):
    from shlo_conform.suites.records import tensor_type_of
    return [tensor_to_hex(o, tensor_type_of(o)) for o in outputs]


@pytest.mark.parametrize("config,project", [("jaxlib-0.9.2", "xla"), ("jaxlib-0.9.2-interpreter", "interpreter")])
def test_server_answers_as_the_projects_adapter(config, project, fake_envs, monkeypatch):
    monkeypatch.setenv("SHLO_RUNTIME_ENVS", str(fake_envs))
    served = load_backend(f"command:{sys.executable} {LAUNCH} {config}")
    ours = load_backend(project)
    try:
        assert "jaxlib 0.10.2" in served.describe()   # the fake environment is .venv's
        for name, (mlir, inputs) in PROGRAMS.items():
            want = _hexes(ours.run(ours.compile(mlir), _arrays(inputs)))
            got = _hexes(served.run(served.compile(mlir), _arrays(inputs)))
            assert got == want, name
        with pytest.raises(Rejected):
            ours.compile(INVALID)
        with pytest.raises(Rejected, match="expects different type"):
            served.compile(INVALID)
    finally:
        served.close()


def test_launch_refuses_an_environment_not_built(tmp_path):
    r = subprocess.run([sys.executable, str(LAUNCH), "tf-2.21.0"], capture_output=True, text=True,
                       env={**os.environ, "SHLO_RUNTIME_ENVS": str(tmp_path)}, timeout=60)
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "is not built" in lines[0] and "build_env.py tf-2.21.0" in lines[0]
    r = subprocess.run([sys.executable, str(LAUNCH), "no-such-runtime"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "unknown runtime configuration" in r.stderr


def test_options_after_the_name_reach_the_server(tmp_path, monkeypatch):
    """`runtime:NAME:key=value,…` appends `--key=value` to the registry's own
    arguments (a PJRT plugin by path; the later `--plugin` wins in the
    server); an option without `=` is one line naming it."""
    sys.path.insert(0, str(LAUNCH.parent))
    import launch
    monkeypatch.setenv("SHLO_RUNTIME_ENVS", str(tmp_path))
    py = tmp_path / "pjrt-plugin" / "bin" / "python"
    py.parent.mkdir(parents=True)
    py.write_text("")
    argv = launch.command("pjrt-xla-cpu-0.0.1:plugin=/opt/x.so")
    assert argv[0] == str(py) and argv[-2:] == ["--plugin=module:xla_plugins.xla_cpu_pjrt", "--plugin=/opt/x.so"]
    with pytest.raises(ValueError, match="option 'plugin' is not key=value"):
        launch.command("pjrt-xla-cpu-0.0.1:plugin")
    with pytest.raises(ValueError, match="unknown runtime configuration 'nosuch'"):
        launch.command("nosuch:a=1")


def test_the_tf_server_decomposes_chlo_and_says_when_it_cannot(monkeypatch):
    """tf_xla_call_module_server.without_chlo under .venv's jaxlib (it needs
    jaxlib, not TensorFlow): a program with chlo.erf comes back as StableHLO
    alone; one with quantized types as well is unsupported, with the reason
    (jaxlib's bindings read no quant dialect), not rejected as invalid."""
    monkeypatch.syspath_prepend(str(ROOT / "tools" / "runtimes"))
    import tf_xla_call_module_server as tf_server
    from wire import Unsupported as ServerUnsupported

    erf = ("func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
           "  %0 = chlo.erf %a : tensor<4xf32> -> tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n")
    out = tf_server.without_chlo(erf)
    assert "chlo." not in out and "stablehlo." in out and "@main" in out
    quantized = erf.replace("func.func @main", "// !quant.uniform<i8:f32, 0.5>\nfunc.func @main")
    with pytest.raises(ServerUnsupported, match="quant dialect"):
        tf_server.without_chlo(quantized)
