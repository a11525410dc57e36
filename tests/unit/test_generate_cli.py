"""``kernelkit create-pyproject`` and ``kernelkit clean`` on a copy of a test project."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kernelkit.cli.main import main

PROJECT = Path(__file__).resolve().parents[1] / "data" / "projects" / "addone"
SOURCES = ["build.toml", "torch-ext/torch_binding.cpp", "torch-ext/addone/__init__.py",
           "addone_cpu/addone_cpu.cpp", "addone_cuda/addone.cu"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    dest = tmp_path / "addone"
    shutil.copytree(PROJECT, dest, ignore=shutil.ignore_patterns("build", "__pycache__"))
    return dest


def test_create_pyproject_writes_then_skips_then_refuses(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["create-pyproject", str(project), "--unique-id", "abc1234"]) == 0
    for rel in ("CMakeLists.txt", "setup.py", "pyproject.toml", "torch-ext/registration.h",
                "torch-ext/addone/_ops.py", "cmake/kernelkit.cmake"):
        assert (project / rel).is_file(), rel
    ops_py = (project / "torch-ext/addone/_ops.py").read_text()
    assert '"_addone_" + _BACKEND + "_abc1234"' in ops_py
    capsys.readouterr()
    assert main(["create-pyproject", str(project), "--unique-id", "abc1234"]) == 0
    assert "0 written" in capsys.readouterr().out
    # another id changes setup.py, _ops.py and the id header (not CMakeLists.txt: a new id
    # does not reconfigure): refused without -f
    assert main(["create-pyproject", str(project), "--unique-id", "zzz9999"]) == 1
    err = capsys.readouterr().err
    assert "kernelkit_ops_id.h" in err and "setup.py" in err and "--force" in err
    assert "CMakeLists.txt" not in err
    assert main(["create-pyproject", str(project), "--unique-id", "zzz9999", "-f"]) == 0
    assert "zzz9999" in (project / "setup.py").read_text()


def test_clean_removes_generated_and_dev_artifacts_only(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["create-pyproject", str(project)]) == 0
    (project / "_cmake_build" / "cpu").mkdir(parents=True)
    (project / "addone.egg-info").mkdir()
    (project / "torch-ext" / "addone" / "_addone_cpu_abc1234.abi3.so").write_bytes(b"\x7fELF")
    (project / "build" / "torch213-cxx11-cpu-x86_64-linux").mkdir(parents=True)
    # a generated file the user edited (header removed) is kept
    (project / "pyproject.toml").write_text("[project]\nname = 'mine'\n")
    capsys.readouterr()
    assert main(["clean", str(project), "--dry-run"]) == 0
    assert "would remove setup.py" in capsys.readouterr().out
    assert (project / "setup.py").exists()
    assert main(["clean", str(project)]) == 0
    out = capsys.readouterr().out
    assert "kept pyproject.toml" in out
    for gone in ("setup.py", "CMakeLists.txt", "cmake", "torch-ext/registration.h",
                 "torch-ext/addone/_ops.py", "_cmake_build", "addone.egg-info",
                 "torch-ext/addone/_addone_cpu_abc1234.abi3.so"):
        assert not (project / gone).exists(), gone
    for kept in [*SOURCES, "pyproject.toml", "build/torch213-cxx11-cpu-x86_64-linux"]:
        assert (project / kept).exists(), kept
