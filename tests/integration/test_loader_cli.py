"""``kernelkit variants``: the loader's decision trace from the command line (real subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from kernelkit.errors import ExitCode
from kernelkit.hub.local import LocalGitHub
from kernelkit.variants.host import detect_system
from tests.helpers import build_files, make_variant

HOST = detect_system().arch_variant() or "torch-cpu"


def kernelkit(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kernelkit", *args], capture_output=True,
                          text=True, timeout=120, env={**os.environ, **env})


def test_variants_hub_and_local(tmp_path: Path) -> None:
    build = tmp_path / "proj" / "build"
    make_variant(build, HOST, uid="c11a001")
    make_variant(build, "torch-cuda", uid="c11a002")
    files = build_files(build)
    LocalGitHub(tmp_path / "hub").publish("acme/demo", "v1", files)
    env = {"KERNELKIT_CACHE": str(tmp_path / "cache")}

    out = kernelkit("variants", "acme/demo", "--version", "1", "--hub", str(tmp_path / "hub"),
                    env=env)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"System: {detect_system().describe()}"
    assert lines[2].startswith("Version 1 (")
    assert lines[4] == f"{HOST} compatible, preferred \u2705"
    assert lines[5].startswith("torch-cuda: backend (cuda) does not match")

    out = kernelkit("variants", str(tmp_path / "proj"), "--json", "--backend", "cpu", env=env)
    [row] = json.loads(out.stdout)["revisions"]
    assert [(v["variant"], v["compatible"], v["preferred"]) for v in row["variants"]] == [
        (HOST, True, True), ("torch-cuda", False, False)]

    out = kernelkit("variants", "acme/demo", "--version", "3", "--hub", str(tmp_path / "hub"),
                    env=env)
    assert out.returncode == ExitCode.NOT_FOUND
    assert "Version 3 not found, available versions: 1" in out.stderr
