"""What an installed package holds is enough: the files a wheel would hold
(setuptools' `build_py`, the step of a wheel build that picks the modules
and package data pyproject.toml names — bdist_wheel itself needs the
`wheel` package, which the lock does not carry), imported from outside the
checkout, run `check-spec --verifier` with the reviewed findings and the
bundled suite: no file of the checkout (docs/, ../shared) is read."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.long   # a package build and a verifier pass: ~15 s


def test_the_built_package_runs_check_spec_with_its_findings(tmp_path):
    lib = tmp_path / "lib"
    build = subprocess.run([sys.executable, "-c", "import setuptools; setuptools.setup()", "-q", "build_py",
                            "--build-lib", str(lib)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[-2000:]
    assert (lib / "shlo_conform" / "suites" / "verifier-findings.json").is_file()
    assert (lib / "shlo_conform" / "spec" / "dsl" / "__init__.py").is_file()
    env = {**os.environ, "PYTHONPATH": str(lib)}
    where = subprocess.run([sys.executable, "-c", "import shlo_conform; print(shlo_conform.__file__)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert where.stdout.strip() == str(lib / "shlo_conform" / "__init__.py"), where.stdout + where.stderr
    run = subprocess.run([sys.executable, "-m", "shlo_conform.cli", "check-spec", "--verifier",
                          "--ops", "add,custom_call"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-3000:]
    assert "0 unexplained" in out and "explained by" in out and "check-spec: ok" in out, out[-3000:]
