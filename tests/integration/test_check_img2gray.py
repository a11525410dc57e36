"""The scaffolded img2gray project, really compiled (session fixture): it passes kernelkit
check, its own tests pass against the build, and tampering with the build is caught."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kernelkit.check import check_build

pytestmark = pytest.mark.slow


def test_built_img2gray_is_compliant(img2gray_cpu_build: Path) -> None:
    report = check_build(img2gray_cpu_build.parent, python=Path(sys.executable))
    assert report.variants == (img2gray_cpu_build.name,)
    assert report.findings == (), [f.message for f in report.findings]


def test_project_tests_pass_against_the_build(img2gray_project: Path,
                                              img2gray_cpu_build: Path) -> None:
    env = dict(os.environ, KERNEL_BUILD_DIR=str(img2gray_cpu_build))
    proc = subprocess.run([sys.executable, "-m", "pytest", "tests", "-q", "-p",
                           "no:cacheprovider"], cwd=img2gray_project, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout


def test_tampered_build_is_caught(img2gray_cpu_build: Path, tmp_path: Path) -> None:
    vdir = tmp_path / "build" / img2gray_cpu_build.name
    shutil.copytree(img2gray_cpu_build, vdir)
    init = vdir / "__init__.py"
    text = init.read_text()
    assert 'register_fake(add_op_namespace_prefix("img2gray"))' in text
    init.write_text(text.replace('register_fake(add_op_namespace_prefix("img2gray"))',
                                 'register_fake("img2gray::img2gray")'))
    (vdir / "_cmake_build").mkdir()
    report = check_build(tmp_path, import_check=False)
    assert report.codes() == {"op-registration", "digest-mismatch", "stray-file"}
