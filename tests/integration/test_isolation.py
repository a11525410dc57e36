"""The autouse fixture in tests/conftest.py keeps the user's settings out of every test."""

from __future__ import annotations

import os
from pathlib import Path

from kernelkit.loader.settings import read_settings


def test_user_settings_do_not_reach_a_test(isolated_settings: Path) -> None:
    leaked = [n for n in os.environ if n.startswith("KERNELKIT_")
              and not n.startswith("KERNELKIT_TEST_")
              and n not in ("KERNELKIT_HUB_DIR", "KERNELKIT_CACHE", "KERNELKIT_ENVS",
                            "KERNELKIT_UPDATE_GOLDEN")]
    assert leaked == []
    assert "HF_HUB_OFFLINE" not in os.environ and "LOCAL_KERNELS" not in os.environ
    for name in ("KERNELKIT_HUB_DIR", "KERNELKIT_CACHE", "KERNELKIT_ENVS"):
        assert Path(os.environ[name]).parent == isolated_settings
    settings = read_settings()
    assert not settings.offline
    assert str(settings.cache_dir).startswith(str(isolated_settings))


def test_a_hostile_environment_does_not_reach_tests(tmp_path: Path) -> None:
    """Run the test above in a fresh pytest whose environment sets every kind of setting."""
    import subprocess
    import sys

    hostile = {**os.environ, "KERNELKIT_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
               "KERNELKIT_CACHE": str(tmp_path / "user-cache"), "LOCAL_KERNELS": "a/b=/x",
               "KERNELKIT_HUB": str(tmp_path / "user-hub"), "KERNELKIT_TEST_KEEP": "kept"}
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         f"{Path(__file__).resolve()}::test_user_settings_do_not_reach_a_test"],
        cwd=root, env=hostile, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not (tmp_path / "user-cache").exists()
