"""docs/authoring.md, followed for real (issue 23 item 5): every code block the guide gives a
file name (```lang file=PATH) is written into an empty directory, which then goes through the
commands the guide shows: check-config, build, check, test, the benchmark (CPU); with nvcc and
a CUDA torch, the CUDA variant is compiled too. The guide's files are the ``blank`` template's,
and the ``triton`` template builds, checks, imports and tests on a CPU torch (the fallback)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kernelkit.scaffold import init_project

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "authoring.md"
_BLOCK = re.compile(r"^```\w+ file=(\S+)\n(.*?)^```$", re.S | re.M)
CPU_VARIANT = "torch213-cxx11-cpu-x86_64-linux"


def guide_files() -> dict[str, str]:
    files = {m.group(1): m.group(2) for m in _BLOCK.finditer(GUIDE.read_text("utf-8"))}
    assert files, "docs/authoring.md has no ```lang file=PATH blocks"
    return files


def kk(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kernelkit", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, env=os.environ.copy())


def written(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def test_the_guides_files_are_the_blank_template(tmp_path: Path) -> None:
    project = tmp_path / "scale-add"
    init_project(project, name="my-org/scale-add", backends=["cpu", "cuda"], template="blank",
                 git=False)
    made = {p.relative_to(project).as_posix(): p.read_text("utf-8")
            for p in project.rglob("*") if p.is_file()}
    assert set(made) - set(guide_files()) == {"README.md", ".gitignore"}
    for rel, text in guide_files().items():
        assert made[rel] == text, f"docs/authoring.md's {rel} differs from the blank template's"


@pytest.fixture(scope="module")
def followed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The guide's files in an empty directory, built for this (CPU) torch."""
    project = written(tmp_path_factory.mktemp("guide") / "scale-add", guide_files())
    build = kk("build", cwd=project)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    return project


@pytest.mark.slow
def test_following_the_guide_builds_checks_and_tests_on_cpu(followed: Path) -> None:
    text = GUIDE.read_text("utf-8")
    for command in ("kernelkit check-config", "kernelkit build", "kernelkit check",
                    "kernelkit test", "python benchmarks/bench_scale_add.py"):
        assert command in text, command  # the guide shows what this test runs
    assert kk("check-config", cwd=followed).returncode == 0
    check = kk("check", cwd=followed)
    assert check.returncode == 0, check.stdout
    assert f"{CPU_VARIANT}: ok" in check.stdout  # no finding at all, not even a warning
    tested = kk("test", cwd=followed)
    assert tested.returncode == 0, tested.stdout[-3000:]
    assert re.search(r"\b7 passed\b", tested.stdout)  # 4 shapes, dtype, opcheck, compile
    bench = subprocess.run([sys.executable, "benchmarks/bench_scale_add.py", "--sizes", "1e4"],
                           cwd=followed, capture_output=True, text=True)
    assert bench.returncode == 0, bench.stderr[-3000:]
    assert re.fullmatch(r"cpu n=10000: scale_add [\d.]+ us, torch.add [\d.]+ us \([\d.]+x\)\n",
                        bench.stdout)


@pytest.mark.slow
def test_the_guides_naming_rule_is_enforced(followed: Path, tmp_path: Path) -> None:
    """Section 1: a package directory not named after the Python name is caught up front."""
    project = written(tmp_path / "scale-add", guide_files())
    (project / "torch-ext" / "scale_add").rename(project / "torch-ext" / "scaleadd")
    proc = kk("check-config", cwd=project)
    assert proc.returncode != 0
    assert "rename torch-ext/scaleadd/ to torch-ext/scale_add/" in proc.stderr


@pytest.mark.cuda_build
def test_the_guides_cuda_kernel_compiles(followed: Path, cuda_torch_python: Path) -> None:
    build = kk("build", "--python", cuda_torch_python, "--backend", "cuda",
               "--cuda-capabilities", "9.0", cwd=followed)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    check = kk("check", "--python", cuda_torch_python, cwd=followed)
    assert check.returncode == 0, check.stdout[-3000:]


@pytest.mark.slow
def test_the_triton_template_builds_checks_imports_and_tests_without_triton(
        tmp_path: Path) -> None:
    project = tmp_path / "tri-add"
    init_project(project, name="my-org/tri-add", backends=["cpu", "cuda"], template="triton",
                 git=False)
    build = kk("build", cwd=project)
    assert build.returncode == 0, build.stdout + build.stderr
    assert sorted(p.name for p in (project / "build").iterdir()) == ["torch-cpu", "torch-cuda"]
    check = kk("check", cwd=project)
    assert check.returncode == 0 and "torch-cpu: ok" in check.stdout, check.stdout
    tested = kk("test", cwd=project)
    assert tested.returncode == 0, tested.stdout[-3000:]
    assert re.search(r"\b6 passed\b", tested.stdout)  # the torch fallback: no triton here
