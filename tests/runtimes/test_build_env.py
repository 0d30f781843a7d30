"""tools/runtimes/build_env.py says in one line whether a configuration's
environment is ready or why it cannot be installed (issue 36), and does
nothing when the environment already holds its lock (the stamp).  The
paths that install nothing are checked here; the installs themselves are
in tests/runtimes/test_runtimes_long.py."""
from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "runtimes"))
import build_env  # noqa: E402


def test_every_configuration_has_a_lock_of_pinned_packages():
    """Each environment a configuration names has a lock whose every line is `name==version`."""
    for name, cfg in build_env.CONFIGS.items():
        lock = build_env.HERE / cfg.env / "requirements.lock"
        lines = [ln for ln in lock.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
        assert lines and all("==" in ln and " " not in ln for ln in lines), name
        assert build_env.env_of(name) == cfg.env


def test_a_built_environment_is_left_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("SHLO_RUNTIME_ENVS", str(tmp_path))
    lock = build_env.HERE / "jaxlib-0.9.2" / "requirements.lock"
    env = tmp_path / "jaxlib-0.9.2"
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "python").write_text("")
    (env / ".lock-sha256").write_text(hashlib.sha256(lock.read_bytes()).hexdigest() + "\n")
    ok, line = build_env.build("jaxlib-0.9.2")
    assert ok and line.startswith("build_env: jaxlib-0.9.2: ready") and "up to date" in line
    assert sorted(p.name for p in env.iterdir()) == [".lock-sha256", "bin"]   # nothing was installed


def test_no_python_for_the_lock_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("SHLO_RUNTIME_ENVS", str(tmp_path))
    monkeypatch.setattr(build_env, "_python", lambda: None)
    ok, line = build_env.build("tf-2.21.0")
    assert not ok and "\n" not in line
    assert line.startswith("build_env: tf-2.21.0: cannot be installed: ") and "CPython 3.11" in line
    assert not (tmp_path / "tf-2.21.0").exists()


def test_a_disk_too_small_is_refused_up_front_with_the_size(tmp_path, monkeypatch):
    """Where the disk cannot take the environment, the build says how much it
    needs and how much is free before pip starts (a CI run once lost 16
    minutes to pip's "No space left on device" half-way through torch-xla)."""
    monkeypatch.setenv("SHLO_RUNTIME_ENVS", str(tmp_path))
    monkeypatch.setattr(build_env.shutil, "disk_usage", lambda p: type("U", (), {"free": 3 * 2**30})())
    ok, line = build_env.build("torch-xla-2.9.0")
    assert not ok and "\n" not in line
    assert line == ("build_env: torch-xla-2.9.0: cannot be installed: needs about 10.5 GiB free on the disk of "
                    f"{tmp_path} (7.0 GiB installed, and its wheels while they unpack); 3.0 GiB is free")
    assert not (tmp_path / "torch-xla-2.9.0").exists()


def test_every_environment_states_its_size_on_disk():
    assert set(build_env.INSTALLED_GIB) == {cfg.env for cfg in build_env.CONFIGS.values()}


def test_unknown_configuration_is_refused():
    r = subprocess.run([sys.executable, str(build_env.HERE / "build_env.py"), "no-such-runtime"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stdout.count("\n") == 1 and "unknown configuration" in r.stdout
