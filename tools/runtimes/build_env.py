"""Build a runtime configuration's environment from its lock file:
`python tools/runtimes/build_env.py CONFIG` (a configuration of
tools/runtimes/launch.py, or an environment's name).

Why environments of their own: a second jax/jaxlib (or TensorFlow, which
pins its own protobuf and numpy ranges) cannot share the project's .venv,
and `make conform` must keep scoring the project's jaxlib.  Each
environment is `.envs/<env>/` (git-ignored), a venv of CPython 3.11 — the
Python the locked wheels are built for — holding exactly the packages of
tools/runtimes/<env>/requirements.lock (installed with `--no-deps
--only-binary=:all:`: the lock is the whole closure, nothing is resolved
or built at install time).  A stamp holding the lock's SHA-256 makes a
second run a no-op; a changed lock rebuilds the environment from scratch.

Output: one line.  `build_env: <env>: ready …` (exit 0), or
`build_env: <env>: cannot be installed: <reason>` (exit 1), the reason
being pip's own last error line (the full log is kept in
.envs/<env>.build.log); exit 2 for an unknown name.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from launch import CONFIGS, HERE, envs_root  # noqa: E402

# What each environment must import once installed (the smoke check before the stamp is written).
IMPORTS = {"jaxlib-0.9.2": "import jax, jaxlib, jaxlib.mlir.dialects.stablehlo",
           "tf-2.21.0": "import tensorflow, ai_edge_litert.interpreter, jaxlib.mlir.dialects.chlo",
           "torch-xla-2.9.0": "import torch, torch_xla, jaxlib.mlir.dialects.stablehlo",
           "pjrt-plugin": "import jax, xla_plugins.xla_cpu_pjrt"}
PYTHON = (3, 11)
# What each environment takes on disk once installed, in GiB (measured with `du -sh .envs/*` on 2026-11-30):
# the build asks for half as much again while the wheels are downloaded and unpacked, and refuses up front
# when the disk has less, naming the size, instead of pip's "No space left on device" half-way through
# (torch-xla's CUDA build of torch, the only torch 2.9.0 on PyPI for x86_64, is 4.3 GiB of nvidia libraries).
INSTALLED_GIB = {"jaxlib-0.9.2": 0.6, "tf-2.21.0": 2.1, "torch-xla-2.9.0": 7.0, "pjrt-plugin": 0.9}


def env_of(name: str) -> str:
    if name in CONFIGS:
        return CONFIGS[name].env
    if (HERE / name / "requirements.lock").is_file():
        return name
    raise KeyError(name)


def _python() -> str | None:
    """A CPython 3.11 to make the venv with: this one, else `python3.11` on PATH."""
    if sys.version_info[:2] == PYTHON:
        return sys.executable
    return shutil.which(f"python{PYTHON[0]}.{PYTHON[1]}")


def _disk_short(env: str, where: Path) -> str | None:
    """Why `where`'s disk cannot take `env`'s install, in words; None when it can."""
    need = 1.5 * INSTALLED_GIB.get(env, 1.0)
    free = shutil.disk_usage(where).free / 2**30
    if free >= need:
        return None
    return (f"needs about {need:.1f} GiB free on the disk of {where} ({INSTALLED_GIB.get(env, 1.0):.1f} GiB "
            f"installed, and its wheels while they unpack); {free:.1f} GiB is free")


def _last_error(log: str) -> str:
    lines = [ln.strip() for ln in log.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("ERROR") or "error:" in ln.lower()]
    return (errors or lines or ["no output"])[-1][:400]


def build(env: str) -> tuple[bool, str]:
    """(ok, the one line) for environment `env`.  One build of an
    environment at a time: a second process (tests under pytest-xdist ask
    for the same environment from several workers) waits on a file lock
    beside it and then finds it ready, instead of deleting the first's
    half-built files."""
    import fcntl
    envs_root().mkdir(parents=True, exist_ok=True)
    with open(envs_root() / f".{env}.building", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        return _build_locked(env)


def _build_locked(env: str) -> tuple[bool, str]:
    lock = HERE / env / "requirements.lock"
    target = envs_root() / env
    stamp = target / ".lock-sha256"
    digest = hashlib.sha256(lock.read_bytes()).hexdigest()
    if stamp.is_file() and stamp.read_text().strip() == digest and (target / "bin" / "python").exists():
        return True, f"build_env: {env}: ready ({target}, up to date with {lock.name})"
    python = _python()
    if python is None:
        return False, (f"build_env: {env}: cannot be installed: the lock pins cp{PYTHON[0]}{PYTHON[1]} wheels and "
                       f"no CPython {PYTHON[0]}.{PYTHON[1]} was found (this is {sys.version.split()[0]})")
    t0 = time.monotonic()
    if target.exists() or target.is_symlink():
        if target.is_symlink() or target.is_file():
            target.unlink()
        else:
            shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    short = _disk_short(env, target.parent)
    if short:
        return False, f"build_env: {env}: cannot be installed: {short}"
    log_path = target.parent / f"{env}.build.log"
    steps = [[python, "-m", "venv", str(target)],
             [str(target / "bin" / "python"), "-m", "pip", "install", "--no-deps", "--only-binary=:all:",
              "--no-input", "--no-cache-dir", "-r", str(lock)],
             [str(target / "bin" / "python"), "-c", IMPORTS.get(env, "pass")]]
    with open(log_path, "w") as log:
        for step in steps:
            log.write("$ " + " ".join(step) + "\n")
            log.flush()
            r = subprocess.run(step, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
            log.write(r.stdout)
            if r.returncode != 0:
                return False, f"build_env: {env}: cannot be installed: {_last_error(r.stdout)} (log: {log_path})"
    stamp.write_text(digest + "\n")
    n = sum(1 for ln in lock.read_text().splitlines() if ln.strip() and not ln.startswith("#"))
    return True, f"build_env: {env}: ready ({target}, {n} packages, {time.monotonic() - t0:.0f} s)"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print(__doc__.strip() + "\n\nconfigurations: " + ", ".join(CONFIGS), file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    try:
        env = env_of(argv[0])
    except KeyError:
        print(f"build_env: unknown configuration {argv[0]!r}; known: {', '.join(CONFIGS)}")
        return 2
    ok, line = build(env)
    print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
