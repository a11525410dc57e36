"""``kernelkit build --all``: every buildable variant in its own pinned environment, in
parallel, with a build cache that makes a second run a no-op.

On this machine that is torch 2.13.0 (CPU, from local wheels) and torch 2.14.1 (CUDA 13.0, with
the system nvcc 13.0). The torch 2.14.1 environment is ~5.5 GB and takes minutes to install:
set ``KERNELKIT_TEST_ENVS`` to a directory to keep the environments between sessions.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kernelkit.errors import ExitCode

ADDONE = Path(__file__).resolve().parents[1] / "data" / "projects" / "addone"
CPU = "torch213-cxx11-cpu-x86_64-linux"
CUDA = "torch214-cxx11-cu130-x86_64-linux"


@pytest.fixture(scope="module")
def envs_dir(test_envs_dir: Path) -> Path:
    return test_envs_dir  # shared with the other tests: the CUDA env takes minutes to create


def kernelkit(*args: str, envs: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kernelkit", *args], capture_output=True,
                          text=True, env={**os.environ, "KERNELKIT_ENVS": str(envs), **env},
                          timeout=1800)


def test_dry_run_json_plan(tmp_path: Path) -> None:
    proc = kernelkit("build", str(ADDONE), "--all", "--dry-run", "--json", envs=tmp_path)
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    names = [v["variant"] for v in plan["variants"]]
    assert CPU in names and "torch212-cxx11-cu126-x86_64-linux" in names
    assert all(v["system"] == "x86_64-linux" for v in plan["variants"])
    for v in plan["variants"]:
        assert v["command"][-2:] == ["--variant", v["variant"]]
        assert isinstance(v["buildable"], bool) and v["reason"]
    assert not (ADDONE / "build").exists() and not list(tmp_path.iterdir())  # built nothing


def test_variant_pattern_matching_nothing(tmp_path: Path) -> None:
    proc = kernelkit("build", str(ADDONE), "--variant", "torch999-*", envs=tmp_path)
    assert proc.returncode == ExitCode.BUILD and "no variant of the kernel matches" in proc.stderr


@pytest.mark.slow
@pytest.mark.cuda_build
def test_build_all_then_noop(tmp_path: Path, envs_dir: Path) -> None:
    if shutil.which("nvcc") is None and not Path("/usr/local/cuda/bin/nvcc").exists():
        pytest.skip("needs nvcc 13.0")
    # A fresh img2gray project, as `kernelkit init` writes it (the acceptance test).
    from kernelkit.scaffold import init_project

    project = tmp_path / "img2gray"
    init_project(project, name="kernelkit-examples/img2gray", backends=["cpu", "cuda"])
    caps = {"KERNELKIT_CUDA_CAPABILITIES": "9.0"}

    plan = json.loads(kernelkit("build", str(project), "--all", "--dry-run", "--json",
                                envs=envs_dir, **caps).stdout)
    assert [v["variant"] for v in plan["variants"] if v["buildable"]] == [CPU, CUDA]
    assert plan["parallel"] == min(2, os.cpu_count() or 1)

    first = kernelkit("build", str(project), "--all", "--json", envs=envs_dir, **caps)
    assert first.returncode == 0, first.stdout + first.stderr
    status = {o["variant"]: o["status"] for o in json.loads(first.stdout)}
    assert status[CPU] == "built" and status[CUDA] == "built"
    cache = json.loads((project / "build" / ".kernelkit-cache.json").read_text())["variants"]
    for variant in (CPU, CUDA):
        meta = json.loads((project / "build" / variant / "metadata.json").read_text())
        assert meta["provenance"]["kernelkit"]["build-cache-key"] == cache[variant]
    cuda_meta = json.loads((project / "build" / CUDA / "metadata.json").read_text())
    assert cuda_meta["backend"]["archs"] == ["9.0"]

    started = time.monotonic()
    second = kernelkit("build", str(project), "--all", envs=envs_dir, **caps)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "0 built, 2 cached, 0 failed" in second.stdout
    assert time.monotonic() - started < 60

    # A changed CPU source rebuilds only the CPU variant (in its kept CMake build tree).
    src = project / "img2gray_cpu" / "img2gray_cpu.cpp"
    src.write_text(src.read_text() + "\n// touched\n")
    third = kernelkit("build", str(project), "--all", "--json", envs=envs_dir, **caps)
    assert third.returncode == 0, third.stdout + third.stderr
    status = {o["variant"]: o["status"] for o in json.loads(third.stdout)}
    assert status[CPU] == "built" and status[CUDA] == "cached"


@pytest.mark.slow
def test_failure_in_one_variant_is_reported_with_its_log(tmp_path: Path, envs_dir: Path) -> None:
    project = tmp_path / "addone"
    shutil.copytree(ADDONE, project)
    (project / "addone_cpu" / "addone_cpu.cpp").write_text("this is not C++\n")
    proc = kernelkit("build", str(project), "--variant", CPU, envs=envs_dir)
    assert proc.returncode == ExitCode.BUILD
    assert f"FAILED {CPU}" in proc.stdout and "log: " in proc.stdout
    log = Path(proc.stdout.split("log: ")[-1].splitlines()[0].strip())
    assert log.is_file() and "this is not C++" in log.read_text()
