"""Start a named runtime configuration's protocol server under its own
environment's Python: `python tools/runtimes/launch.py CONFIG [server options]`.

What `--backend='command:python tools/runtimes/launch.py jaxlib-0.9.2'`
runs (and what a `runtime:NAME` backend name would expand to).  This file
uses only the standard library, so any Python starts it; it replaces itself
(exec) with `.envs/<env>/bin/python <server> <args>`, so the runner talks to
the server directly and kills it with the worker's process group.

`CONFIGS` is the registry: a configuration is an environment (built by
tools/runtimes/build_env.py from tools/runtimes/<env>/requirements.lock
into .envs/<env>/), a server script beside this file, and its arguments.
A configuration whose environment is not built is refused in one line on
stderr, with the command that builds it (exit 2: the runner reports a
backend that does not start in one line).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


class Config(NamedTuple):
    env: str            # .envs/<env>, from tools/runtimes/<env>/requirements.lock
    server: str         # a script beside this file
    args: tuple = ()
    what: str = ""


CONFIGS = {
    "jaxlib-0.9.2": Config("jaxlib-0.9.2", "jaxlib_server.py", ("--engine=xla",),
                           "XLA:CPU as jax 0.9.2's jax.jit compiles"),
    "jaxlib-0.9.2-interpreter": Config("jaxlib-0.9.2", "jaxlib_server.py", ("--engine=interpreter",),
                                       "the StableHLO reference interpreter of jaxlib 0.9.2"),
    "tf-2.21.0": Config("tf-2.21.0", "tf_xla_call_module_server.py", (),
                        "TensorFlow 2.21.0's XlaCallModule under tf.function(jit_compile=True), as jax2tf runs it"),
    "litert-2.3.0": Config("tf-2.21.0", "litert_server.py", (),
                           "LiteRT 2.3.0's interpreter on TF 2.21.0's TFLite conversion of the XlaCallModule"),
    "torch-xla-2.9.0": Config("torch-xla-2.9.0", "torch_xla_server.py", (),
                              "torch-xla 2.9.0's StableHLO executor (_run_stablehlo) on PJRT CPU"),
    "pjrt-xla-cpu-0.0.1": Config("pjrt-plugin", "pjrt_plugin_server.py", ("--plugin=module:xla_plugins.xla_cpu_pjrt",),
                                 "the PJRT C-API plugin xla-cpu-pjrt 0.0.1 (XLA:CPU) through jaxlib 0.9.2's C-API "
                                 "client; any plugin: add --plugin=/path/x.so"),
}


def envs_root() -> Path:
    """Where environments live: .envs/ at the repository root, or
    $SHLO_RUNTIME_ENVS (tests point it at an environment of their own)."""
    return Path(os.environ.get("SHLO_RUNTIME_ENVS") or ROOT / ".envs")


def env_python(env: str) -> Path:
    return envs_root() / env / "bin" / "python"


def command(name: str, extra=()) -> list[str]:
    """The argv that runs configuration `name`; ValueError naming the problem.
    `NAME:key=value,…` passes `--key=value` to the server after the
    registry's own arguments (`runtime:pjrt-xla-cpu-0.0.1:plugin=/path/x.so`
    runs another PJRT plugin; the later `--plugin` wins), as
    `iree:target=vmvx` configures a backend."""
    name, _, options = name.partition(":")
    if name not in CONFIGS:
        raise ValueError(f"unknown runtime configuration {name!r}; known: {', '.join(CONFIGS)}")
    bad = [o for o in options.split(",") if o and "=" not in o]
    if bad:
        raise ValueError(f"runtime {name}: option {bad[0]!r} is not key=value")
    extra = tuple(f"--{o.strip()}" for o in options.split(",") if o.strip()) + tuple(extra)
    cfg = CONFIGS[name]
    py = env_python(cfg.env)
    if not py.exists():
        raise ValueError(f"runtime {name}: its environment {envs_root() / cfg.env} is not built; build it with "
                         f"`python {HERE / 'build_env.py'} {name}`")
    return [str(py), str(HERE / cfg.server), *cfg.args, *extra]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip() + "\n\nconfigurations:\n" +
              "\n".join(f"  {n:26} {c.what} (env {c.env})" for n, c in CONFIGS.items()), file=sys.stderr)
        return 0 if argv else 2
    try:
        cmd = command(argv[0], argv[1:])
    except ValueError as e:
        print(str(e), file=sys.stderr)
        return 2
    os.execv(cmd[0], cmd)
    return 0   # pragma: no cover - execv does not return


if __name__ == "__main__":
    sys.exit(main())
