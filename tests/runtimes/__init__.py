"""Tests of tools/runtimes/: each configuration's server against its own runtime."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[2] / "tools" / "runtimes"


def built(config: str) -> Path:
    """The Python of `config`'s environment, built first (build_env.py; a
    stamp makes a second call cheap): the test fails with build_env's one
    line where it cannot be installed."""
    r = subprocess.run([sys.executable, str(TOOLS / "build_env.py"), config], capture_output=True, text=True,
                       timeout=3600)
    assert r.returncode == 0, r.stdout + r.stderr
    sys.path.insert(0, str(TOOLS))
    from launch import CONFIGS, env_python
    return env_python(CONFIGS[config].env)
