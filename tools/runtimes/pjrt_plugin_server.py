"""Any PJRT C-API plugin (a shared library exporting `GetPjrtApi`), over the
command protocol: the plugin is loaded by path, and each program is
compiled and run through it as jax 0.9.2 compiles and runs a program on
any PJRT backend.

Run under the `pjrt-plugin` environment's Python (tools/runtimes/build_env.py
builds `.envs/pjrt-plugin` from pjrt-plugin/requirements.lock: jax and jaxlib
0.9.2 as the host, plus `xla-cpu-pjrt` 0.0.1, the OpenXLA Authors' CPU
plugin wheel, the one CPU plugin of XLA's own on PyPI).  Which plugin:

    --plugin=/path/to/libsomething.so         a library by path
    --plugin=module:xla_plugins.xla_cpu_pjrt  the one *.so in an installed package's folder

so `command:python tools/runtimes/launch.py pjrt-xla-cpu-0.0.1 --plugin=/path/x.so`
scores another plugin with the same server (the registry's entry names the
packaged one).

Why through jaxlib's C-API client and not a PJRT binding of our own: jaxlib's
`make_c_api_client` is how every framework plugin reaches a PJRT plugin
(jax's `xla_bridge.register_plugin` makes the same client); the text is
parsed in JAX's context and handed to `compile_and_load`, which serializes
it to a StableHLO portable artifact at the version the plugin declares
(PjRtCApiClient) — so what is scored is the plugin's compiler and runtime.
The compile options are the ones `jax.jit` makes for one device
(jaxlib_server.XlaServer.compile_options, shared with the jaxlib
configuration), so a verdict that differs from `runtime:jaxlib-0.9.2` is the
plugin's, not the server's.  Inputs are placed with the plugin client's own
`buffer_from_pyval` (jax.device_put knows only jax's registered backends).
"""
from __future__ import annotations

import argparse
import ctypes
import hashlib
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from wire import claim_stdout, serve  # noqa: E402

import numpy as np  # noqa: E402

_NAME = "shlo_plugin"


def resolve_plugin(spec: str) -> tuple[Path, str]:
    """(the library's path, where it came from) for `--plugin`: a path, or
    `module:PACKAGE` naming an installed package whose folder holds exactly
    one shared library.  ValueError naming what is missing."""
    if spec.startswith("module:"):
        import importlib.util

        name = spec[len("module:"):]
        found = importlib.util.find_spec(name)
        if found is None or not found.submodule_search_locations:
            raise ValueError(f"no installed package {name!r} to take a PJRT plugin from")
        folder = Path(list(found.submodule_search_locations)[0])
        libs = sorted(folder.glob("*.so"))
        if len(libs) != 1:
            raise ValueError(f"package {name} ({folder}) holds {len(libs)} shared libraries, not one")
        dist = _distribution_of(name)
        return libs[0], f"{name}{' (' + dist + ')' if dist else ''}"
    path = Path(spec).expanduser().resolve()
    if not path.is_file():
        raise ValueError(f"no PJRT plugin library at {path}")
    return path, str(path)


def _distribution_of(module: str) -> str:
    """'dist-name version' of the installed distribution providing `module`, or ''."""
    from importlib import metadata

    top = module.split(".")[0]
    for name in metadata.packages_distributions().get(top, []):
        try:
            return f"{name} {metadata.version(name)}"
        except metadata.PackageNotFoundError:
            continue
    return ""


def c_api_version(path: Path) -> str:
    """The PJRT C API version the plugin was built against, read from the
    PJRT_Api struct GetPjrtApi returns (pjrt_c_api.h: struct_size,
    extension_start, then PJRT_Api_Version {struct_size, extension_start,
    int major_version, int minor_version}: the two ints at bytes 32 and 36
    on LP64).  dlopen of the same path returns the handle jaxlib loaded."""
    lib = ctypes.CDLL(str(path))
    lib.GetPjrtApi.restype = ctypes.c_void_p
    api = lib.GetPjrtApi()
    major = ctypes.c_int.from_address(api + 32).value
    minor = ctypes.c_int.from_address(api + 36).value
    return f"{major}.{minor}"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def make_server(spec: str, options: dict, client_options: dict):
    """The XLA server of jaxlib_server.py with its PJRT client replaced by the plugin's."""
    import jax
    from jax._src.interpreters import pxla
    from jax._src.lib import xla_client

    from jaxlib_server import _JIT_ARGUMENTS, XlaServer, _versions

    path, origin = resolve_plugin(spec)
    xla_client.load_pjrt_plugin_dynamically(_NAME, str(path))
    client = xla_client.make_c_api_client(_NAME, client_options, None)

    class PluginServer(XlaServer):
        def __init__(self):   # XlaServer's state, on the plugin's client (its __init__ would take jax's CPU)
            self._jax = jax
            self._client = client
            self._device = client.local_devices()[0]
            self._options = options
            self._option_params = list(inspect_params(pxla.create_compile_options))
            unknown = [p for p in self._option_params if p not in _JIT_ARGUMENTS]
            if unknown:
                raise RuntimeError(f"pxla.create_compile_options takes {unknown}, which this server does not know")
            self._what = (f"PJRT plugin {origin} (sha256 {_sha256(path)[:12]}, PJRT C API {c_api_version(path)}, "
                          f"platform {client.platform}, {client.local_device_count()} devices, device 0 used)")

        def describe(self) -> str:
            opts = ", ".join(f"{k}={v}" for k, v in self._options.items())
            how = f"jax.jit's compile options plus {opts}" if opts else "jax.jit's compile options"
            made = ", ".join(f"{k}={v}" for k, v in client_options.items()) or "no client options"
            return (f"{self._what} through {_versions()}'s C-API client ({made}; {how}; "
                    f"python {sys.version.split()[0]})")

        def run(self, program, inputs):
            bufs = [self._client.buffer_from_pyval(np.array(a, order="C"), self._device) for a in inputs]
            outs = program.handle.execute(bufs)
            return [np.array(np.asarray(o), copy=True) for o in outs]

    return PluginServer()


def inspect_params(fn) -> list[str]:
    import inspect

    return list(inspect.signature(fn).parameters)


def _values(pairs: list[str]) -> dict:
    out = {}
    for kv in pairs:
        k, _, v = kv.partition("=")
        low = v.lower()
        out[k] = low == "true" if low in ("true", "false") else (int(v) if v.lstrip("-").isdigit() else v)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plugin", action="append", required=True,
                    help="the plugin library: a path, or module:PACKAGE (the last one given wins)")
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="an XLA compile option, as jax.jit's compiler_options")
    ap.add_argument("--client-option", action="append", default=[], metavar="KEY=VALUE",
                    help="a create option of the plugin's client (PJRT_Client_Create's NamedValues)")
    a = ap.parse_args(argv)
    claim_stdout()
    return serve(lambda: make_server(a.plugin[-1], _values(a.option), _values(a.client_option)))


if __name__ == "__main__":
    sys.exit(main())
