"""``kernelkit test`` on a project whose build/ holds synthetic (pure-Python, sealed) variants:
which variants run and where, both ways a suite can load the kernel, pass/fail/skip and exit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kernelkit.builder.toolchain.probe import probe_python
from kernelkit.testing.choose import choose_variant_tests, system_of
from kernelkit.variants.host import detect_system
from tests.helpers import make_variant

ROOT = Path(__file__).resolve().parents[2]
HOST = detect_system().arch_variant() or "torch-cpu"
OLD = "torch29-cxx11-cpu-x86_64-linux"  # a torch no environment here has

BUILD_TOML = """[general]
name = "demo"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu"]

[general.hub]
repo-id = "acme/demo"

[torch]
src = ["torch-ext/torch_binding.cpp"]

[kernel.demo_cpu]
backend = "cpu"
depends = ["torch"]
src = ["demo_cpu/demo.cpp"]
"""

# One way per test: a pure-Python synthetic variant defines its op library once per process.
SUITE = """import os

import torch

import kernels_compat


def test_by_package_name():
    import demo  # the variant, importable under its package name

    assert torch.equal(demo.scale(torch.arange(3.0)), torch.arange(3.0) * {factor})


def test_by_repo_id():
    k = kernels_compat.get_kernel("acme/demo", version=1)
    assert os.path.realpath(k.__file__).endswith("/build/" + os.environ["EXPECT"] + "/__init__.py")
    assert torch.equal(k.scale(torch.ones(2)), torch.ones(2) * {factor})
"""

# upstream `kernels` (when installed) or kernelkit's loader: both read LOCAL_KERNELS.
COMPAT = """import os

try:
    if os.environ.get("USE_KERNELKIT"):
        raise ImportError
    import kernels as _k
except ImportError:
    import kernelkit as _k
get_kernel = _k.get_kernel
LOADER = _k.__name__
"""


def project(tmp_path: Path, factor: float = 2.0) -> Path:
    proj = tmp_path / "demo"
    (proj / "tests").mkdir(parents=True)
    (proj / "build.toml").write_text(BUILD_TOML)
    (proj / "tests" / "test_demo.py").write_text(SUITE.format(factor=factor))
    (proj / "tests" / "kernels_compat.py").write_text(COMPAT)
    (proj / "tests" / "conftest.py").write_text(
        "import sys, pathlib\nsys.path.insert(0, str(pathlib.Path(__file__).parent))\n")
    make_variant(proj / "build", HOST, factor=factor)
    make_variant(proj / "build", OLD, factor=factor)
    return proj


def kk_test(proj: Path, *args: str, envs: Path,
            **extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "KERNELKIT_ENVS": str(envs),
           "EXPECT": HOST, **extra}
    env.pop("LOCAL_KERNELS", None)
    return subprocess.run([sys.executable, "-m", "kernelkit", "test", str(proj), *args],
                          capture_output=True, text=True, env=env, cwd=proj.parent)


def test_choice_this_interpreter_or_skip(tmp_path: Path) -> None:
    _, targets = choose_variant_tests(project(tmp_path), envs_dir=tmp_path / "no-envs")
    by = {t.variant: t for t in targets}
    assert by[HOST].python == Path(sys.executable) and by[HOST].who is None
    assert by[OLD].python is None and by[OLD].who == "machine"
    assert "no pinned build environment" in by[OLD].reason


def test_system_of_this_interpreter_matches_the_loader() -> None:
    assert system_of(probe_python(Path(sys.executable))).arch_variant() == HOST


def test_runs_the_suite_both_ways_and_reports(tmp_path: Path) -> None:
    proj = project(tmp_path)
    proc = kk_test(proj, "--json", "--", "-k", "by_package_name", envs=tmp_path / "no-envs")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = {r["variant"]: r for r in json.loads(proc.stdout)}
    assert results[HOST]["status"] == "passed", Path(results[HOST]["log"]).read_text()
    assert "1 passed, 1 deselected" in Path(results[HOST]["log"]).read_text()
    assert (results[OLD]["status"], results[OLD]["who"]) == ("skipped", "machine")
    # pytest arguments after --; kernelkit's own options may follow KERNEL_DIR
    only = kk_test(proj, "--variant", HOST, "--", "-q", "-k", "by_repo_id",
                   envs=tmp_path / "no-envs")
    assert only.returncode == 0, only.stdout + only.stderr
    assert "1 passed, 1 deselected" in only.stdout
    assert f"passed  {HOST}: pytest passed" in only.stdout and OLD not in only.stdout
    # the same suite through kernelkit's loader (it reads LOCAL_KERNELS as upstream does)
    kk = kk_test(proj, "--variant", HOST, "--", "-q", "-k", "by_repo_id",
                 envs=tmp_path / "no-envs", USE_KERNELKIT="1")
    assert kk.returncode == 0, kk.stdout + kk.stderr
    assert "1 passed, 1 deselected" in kk.stdout


def test_a_failing_suite_fails_the_command(tmp_path: Path) -> None:
    proj = project(tmp_path, factor=2.0)
    (proj / "tests" / "test_demo.py").write_text(SUITE.format(factor=3.0))  # wrong expectation
    proc = kk_test(proj, "--", "-k", "by_repo_id", envs=tmp_path / "no-envs")
    assert proc.returncode == 1
    assert f"failed  {HOST}: pytest exited with status 1" in proc.stdout
    assert "0 passed, 1 failed, 1 skipped" in proc.stdout


def test_no_build_or_no_tests_are_clear_errors(tmp_path: Path) -> None:
    proj = project(tmp_path)
    nothing = kk_test(proj, "--variant", "torch-rocm", envs=tmp_path)
    assert nothing.returncode == 1 and "no built variant matches --variant torch-rocm" in \
        nothing.stderr
    (proj / "tests" / "test_demo.py").unlink()
    (proj / "tests" / "conftest.py").unlink()
    (proj / "tests" / "kernels_compat.py").unlink()
    (proj / "tests").rmdir()
    no_tests = kk_test(proj, envs=tmp_path)
    assert no_tests.returncode == 1 and "has no tests/ directory" in no_tests.stderr


@pytest.mark.parametrize("variant", [HOST])
def test_build_tree_stays_sealed(tmp_path: Path, variant: str) -> None:
    proj = project(tmp_path)
    assert kk_test(proj, "--", "-k", "by_package_name",
                   envs=tmp_path / "no-envs").returncode == 0
    assert not list((proj / "build").rglob("__pycache__"))
    check = subprocess.run([sys.executable, "-m", "kernelkit", "check", "--no-import",
                            str(proj / "build" / variant)], capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert "bytecode" not in check.stdout


def test_a_cuda_torch_skips_the_cpu_variant_and_says_why(tmp_path: Path) -> None:
    """On the H200 upstream's get_kernel refused cpu variants under a CUDA torch ("backend (cpu)
    does not match selected backend (cu130)"), so their suites cannot load them there: skip."""
    import dataclasses

    from kernelkit.manifest import load_manifest
    from kernelkit.testing.choose import _judge
    from kernelkit.variants.host import detect_system

    proj = project(tmp_path)
    cuda_here = dataclasses.replace(detect_system(), backend="cuda", backend_version=(13, 0))
    chosen = _judge(load_manifest(proj, check_sources=False), HOST, proj / "build" / HOST,
                    cuda_here, tmp_path / "no-envs")
    assert chosen.python is None and chosen.who == "machine"
    assert "run it on a cpu torch" in chosen.reason
