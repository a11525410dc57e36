"""Toolchain errors in words (issue 23 item 4), through the real CLI in subprocesses: a missing
or broken compiler is found before CMake runs and reported as "install X or set Y" by
list-variants and build; a torch outside [torch] minver says which torch to install; a failed
compile names the author's file and line first and its log once, with no misleading hint."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kernelkit.errors import ExitCode

VENV_BIN = Path(sys.executable).parent


def kk(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kernelkit", *map(str, args)],
                          capture_output=True, text=True, env={**os.environ, **(env or {})})


@pytest.fixture
def project(img2gray_project: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "img2gray"
    shutil.copytree(img2gray_project, dest,
                    ignore=shutil.ignore_patterns(".git", "build", "_cmake_build"))
    return dest


def test_no_compiler_on_path_is_said_before_cmake_runs(project: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bin"  # python, cmake and ninja only: no cc, no c++
    bare.mkdir()
    for tool in ("python", "cmake", "ninja"):
        if (VENV_BIN / tool).exists():
            (bare / tool).symlink_to(VENV_BIN / tool)
    env = {"PATH": str(bare), "CC": "", "CXX": ""}
    listed = kk("list-variants", project, env=env)
    assert listed.returncode == 0, listed.stderr
    cpu = [line for line in listed.stdout.splitlines() if "-cpu-" in line]
    assert cpu and all("buildable: no" in line for line in cpu)
    assert "no usable C++ compiler" in cpu[0]
    assert "install a C++ compiler (e.g. apt install g++) or set CXX=/path/to/compiler" in cpu[0]
    built = kk("build", project, "--backend", "cpu", env=env)
    assert built.returncode == ExitCode.BUILD
    assert "skipped torch" in built.stdout and "set CXX=" in built.stdout
    assert not (project / "_cmake_build").exists()  # CMake never ran


def test_a_compiler_variable_that_is_not_a_program(project: Path) -> None:
    built = kk("build", project, "--backend", "cpu", env={"CXX": "/nonexistent/g++"})
    assert built.returncode == ExitCode.BUILD
    assert "CXX=/nonexistent/g++ is not an executable; set CXX to a C++ compiler or unset it" \
        in built.stdout


def test_torch_below_minver_says_which_torch_to_install(project: Path) -> None:
    toml = project / "build.toml"
    toml.write_text(toml.read_text().replace("[torch]\n", '[torch]\nminver = "2.99"\n', 1))
    built = kk("build", project, "--backend", "cpu")
    assert built.returncode == ExitCode.BUILD
    assert 'minver = "2.99"' in built.stdout
    assert "pip install 'torch>=2.99'" in built.stdout and "--python" in built.stdout


@pytest.mark.slow
def test_a_compile_error_names_the_authors_file_first_and_the_log_once(project: Path) -> None:
    src = project / "img2gray_cpu" / "img2gray_cpu.cpp"
    src.write_text(src.read_text() + "\nvoid oops() { not_declared_anywhere(); }\n")
    built = kk("build", project, "--backend", "cpu")
    assert built.returncode == ExitCode.BUILD
    out = built.stdout + built.stderr
    lines = built.stdout.splitlines()
    first = next(i for i, line in enumerate(lines) if "error:" in line)
    assert lines[first].startswith("img2gray_cpu/img2gray_cpu.cpp:")
    assert "not_declared_anywhere" in lines[first]
    assert out.count("log: ") == 1
    assert "left untouched" not in out and "CMakeFiles" not in lines[first]
