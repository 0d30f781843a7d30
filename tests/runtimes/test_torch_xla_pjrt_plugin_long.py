"""The two consumers issue 36 added beside tools/runtimes' first ones answer
through their protocol servers exactly as their runtimes' own Python APIs
answer on the same programs (the self-check of test_runtimes_long.py, for
torch-xla-2.9.0 and pjrt-xla-cpu-0.0.1).

The programs and inputs are tests/runtimes/direct/jax_programs.py's (what
jax 0.9.2 lowers, on inputs where compile options and transfers show: NaN
payloads and signs, ±0, ±inf, subnormals, bf16, an integer wrap, two
results).  The truth is computed in the runtime's own environment by a
script of this file, along another path than the server's:

* torch-xla: jax 0.9.2's own exporter writes the program as a portable
  artifact (`jax.export(...).mlir_module_serialized`, in .envs/jaxlib-0.9.2;
  the server instead re-parses the lowered *text* and serializes it with
  jaxlib's bindings), and `torch_xla._XLAC._run_stablehlo` — the call
  `StableHLOGraphModule.evaluate` makes — runs it on tensors built by
  other torch calls than the server's (bf16 from raw bytes with
  `torch.frombuffer` and read back from the untyped storage, where the
  server views integer tensors; not torch's float32 -> bfloat16
  conversion, which makes every NaN 0xFFFF).
* PJRT plugin: jax itself with the plugin registered as a backend
  (`xla_bridge.register_plugin(library_path=...)`) runs `jax.jit(f,
  device=<plugin device>)(*xs)` — jax's own lowering, compile and transfer
  through the plugin (the server parses the text and places inputs with the
  C-API client's buffer_from_pyval).

A server that parsed a signature wrongly, put outputs out of order, lost a
NaN's bits, viewed a bf16 wrongly or compiled with other options fails
here.  Long: the torch-xla environment is ≈ 6.5 GB (PyPI's torch is the
CUDA build, whose import needs the nvidia-* wheels) and its first build
downloads ≈ 3.5 GB; each server start imports torch or jax.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.runtimes import built
from shlo_conform.backends.base import Crashed, Unsupported, load_backend
from shlo_conform.spec.types import parse_type, tensor_from_hex, tensor_to_hex
from shlo_conform.suites.records import tensor_type_of

# One xdist worker for all of them: build_env.py replaces an environment that is not stamped, so two
# workers building the same one at once would remove each other's files (`make test-long` runs -n auto).
pytestmark = [pytest.mark.long, pytest.mark.xdist_group("runtime-environments")]

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools" / "runtimes"
DIRECT = Path(__file__).resolve().parent / "direct"

# Run under .envs/jaxlib-0.9.2: each program of jax_programs.py as jax.export serializes it.
EXPORT = r"""
import base64, json, sys
sys.path.insert(0, sys.argv[1])
import jax, numpy as np
import jax_programs
out = {}
for name, (f, xs) in jax_programs.FUNCTIONS.items():
    exp = jax.export.export(jax.jit(f))(*xs)
    out[name] = {"artifact": base64.b64encode(exp.mlir_module_serialized).decode(),
                 "version": exp.calling_convention_version}
json.dump(out, sys.stdout)
"""

# Run under .envs/torch-xla-2.9.0: each artifact through torch_xla._XLAC._run_stablehlo on PJRT CPU.
TORCH_DIRECT = r"""
import base64, json, os, sys
os.environ.setdefault("PJRT_DEVICE", "CPU")
sys.path.insert(0, sys.argv[1])
import numpy as np, ml_dtypes, torch, torch_xla
import wire
try:
    import _XLAC
except ImportError:
    from torch_xla import _XLAC
doc = json.load(sys.stdin)
out = {"torch_xla": torch_xla.__version__, "cases": {}}
for case in doc["cases"]:
    xs = [wire.decode(t) for t in case["inputs"]]
    # bf16 from its raw bytes (torch.frombuffer): torch's own float32 -> bfloat16 conversion turns
    # every NaN into 0xFFFF, which is not the program's input.
    ts = [torch.frombuffer(bytearray(x.tobytes()), dtype=torch.bfloat16).reshape(x.shape)
          if x.dtype == ml_dtypes.bfloat16 else torch.from_numpy(x.copy()) for x in xs]
    art = base64.b64decode(doc["artifacts"][case["name"]]["artifact"])
    res = _XLAC._run_stablehlo(art, ts)
    got = []
    for r, ref in zip(res, case["jit"]):
        t = wire.parse_tensor_type(ref["type"])
        r = r.cpu()
        a = (np.frombuffer(bytes(r.contiguous().untyped_storage()), ml_dtypes.bfloat16).reshape(tuple(r.shape))
             if r.dtype == torch.bfloat16 else r.numpy())
        got.append(wire.encode(a, t))
    out["cases"][case["name"]] = got
json.dump(out, sys.stdout)
"""

# Run under .envs/pjrt-plugin: jax with the plugin registered as a backend, jax.jit on its device.
PLUGIN_DIRECT = r"""
import json, sys
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[2])
import numpy as np, jax
from jax._src import xla_bridge
import jax_programs, wire
from pjrt_plugin_server import resolve_plugin
path, _ = resolve_plugin(sys.argv[3])
xla_bridge.register_plugin("shlo_direct", priority=-1000, library_path=str(path))
dev = jax.devices("shlo_direct")[0]
assert dev.client.platform_version.startswith("PJRT C API"), dev.client.platform_version
doc = json.load(sys.stdin)
out = {"plugin": str(path), "cases": {}}
for name, (f, xs) in jax_programs.FUNCTIONS.items():
    r = jax.jit(f, device=dev)(*xs)
    r = list(r) if isinstance(r, tuple) else [r]
    assert all(a.devices() == {dev} for a in r)
    ref = {c["name"]: c for c in doc["cases"]}[name]["jit"]
    out["cases"][name] = [wire.encode(np.asarray(a), wire.parse_tensor_type(t["type"])) for a, t in zip(r, ref)]
json.dump(out, sys.stdout)
"""




def _run(py: Path, code: str, *args, stdin: str = "") -> dict:
    r = subprocess.run([str(py), "-c", code, *args], input=stdin, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def programs():
    py = built("jaxlib-0.9.2")
    r = subprocess.run([str(py), str(DIRECT / "jax_programs.py")], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads(r.stdout)
    assert doc["jax"] == "0.9.2" and len(doc["cases"]) >= 10
    return doc["cases"]


def _through(case: dict, backend) -> list[dict]:
    exe = backend.compile(case["mlir"])
    outs = backend.run(exe, [tensor_from_hex(t["hex"], parse_type(t["type"])) for t in case["inputs"]])
    return [{"type": tensor_type_of(o).mlir, "hex": tensor_to_hex(o, tensor_type_of(o))} for o in outs]


def _served(config: str, *extra: str):
    built(config)
    return load_backend(f"command:{sys.executable} {TOOLS / 'launch.py'} {config} {' '.join(extra)}".strip())


def _distinguishes(direct: dict, programs: list) -> None:
    """The truth is not vacuous: NaNs and signed zeros reach the outputs (a
    server that flushed or canonicalised them would differ)."""
    raw = bytes.fromhex(direct["maximum"][0]["hex"])
    got = np.frombuffer(raw, np.float32)
    assert np.isnan(got).any() and (np.signbit(got) & (got == 0)).any()


def test_torch_xla_server_is_run_stablehlo(programs):
    artifacts = _run(built("jaxlib-0.9.2"), EXPORT, str(DIRECT))
    direct = _run(built("torch-xla-2.9.0"), TORCH_DIRECT, str(TOOLS),
                  stdin=json.dumps({"cases": programs, "artifacts": artifacts}))
    assert direct["torch_xla"] == "2.9.0"
    _distinguishes(direct["cases"], programs)
    b = _served("torch-xla-2.9.0")
    try:
        text = b.describe()
        assert "torch 2.9.0" in text and "torch-xla 2.9.0" in text and "PJRT CPU" in text, text
        for case in programs:
            assert _through(case, b) == direct["cases"][case["name"]], case["name"]
    finally:
        b.close()


def test_torch_xla_declares_a_result_type_it_cannot_transfer():
    """A case of type si8 whose result is f8E5M2FNUZ (bitcast_convert's):
    claims go by the case's type, so the server itself says at compile that
    torch-xla refuses the result's dtype — unsupported, with the reason —
    where its run had raised "XLA type not supported: 25" and scored a fail
    (bitcast_convert/si8/745fff57e304 in the scoreboard of stop 42)."""
    b = _served("torch-xla-2.9.0")
    mlir = ("func.func @main(%a: tensor<4xi8>) -> tensor<4xf8E5M2FNUZ> {\n"
            '  %0 = "stablehlo.bitcast_convert"(%a) : (tensor<4xi8>) -> tensor<4xf8E5M2FNUZ>\n'
            '  "func.return"(%0) : (tensor<4xf8E5M2FNUZ>) -> ()\n}\n')
    try:
        with pytest.raises(Unsupported, match="result of type tensor<4xf8E5M2FNUZ>: torch-xla 2.9.0 refuses"):
            b.compile(mlir)
    finally:
        b.close()


@pytest.mark.parametrize("how", ["registry", "path"])
def test_pjrt_plugin_server_is_jax_on_the_plugin(programs, how):
    """The registry's packaged plugin, and the same library named by path
    (`--plugin=/path/x.so`, the generic adapter's way to take any plugin)."""
    py = built("pjrt-xla-cpu-0.0.1")
    direct = _run(py, PLUGIN_DIRECT, str(DIRECT), str(TOOLS), "module:xla_plugins.xla_cpu_pjrt",
                  stdin=json.dumps({"cases": programs}))
    _distinguishes(direct["cases"], programs)
    extra = () if how == "registry" else (f"--plugin={direct['plugin']}",)
    b = _served("pjrt-xla-cpu-0.0.1", *extra)
    try:
        text = b.describe()
        assert "PJRT C API 0." in text and "jax 0.9.2" in text, text
        assert ("xla_cpu_pjrt 0.0.1" in text) == (how == "registry"), text
        for case in programs:
            assert _through(case, b) == direct["cases"][case["name"]], case["name"]
    finally:
        b.close()


def test_pjrt_plugin_that_does_not_load_is_a_crash_of_its_own(tmp_path):
    """A library that is no PJRT plugin: the server ends before any reply
    (wire.serve's status 3) and the program is the runner's Crashed — a
    backend that does not start, said in one line — not a hang and not a
    verdict of the program's."""
    built("pjrt-xla-cpu-0.0.1")
    bogus = tmp_path / "not_a_plugin.so"
    bogus.write_bytes(b"\x7fELF not really")
    b = load_backend(f"command:{sys.executable} {TOOLS / 'launch.py'} pjrt-xla-cpu-0.0.1 --plugin={bogus}")
    try:
        with pytest.raises(Crashed, match="exit status 3") as e:
            b.compile("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}")
        assert "\n" not in str(e.value)
    finally:
        b.close()
