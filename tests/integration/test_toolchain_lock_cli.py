"""``kernelkit toolchain lock`` on a fresh ``kernelkit init`` project (real pip resolution)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelkit.cli.main import main

CPU = "torch213-cxx11-cpu-x86_64-linux"


@pytest.mark.slow
def test_lock_one_variant_then_relock_keeps_others(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "img2gray"
    assert main(["init", str(project), "--name", "kernelkit-examples/img2gray", "--no-git"]) == 0
    assert main(["toolchain", "lock", str(project), "--variant", CPU]) == 0
    lock = json.loads((project / "kernelkit.toolchain.lock").read_text())
    entry = lock["variants"][CPU]
    torch = [w for w in entry["wheels"] if w["name"] == "torch"]
    assert entry["requirement"].startswith("torch==2.13.0") and len(torch) == 1
    assert all(len(w["sha256"]) == 64 for w in entry["wheels"])
    assert f"locked  {CPU}" in capsys.readouterr().out
    assert main(["toolchain", "verify", str(project)]) == 0
