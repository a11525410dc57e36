"""``kernelkit check-config`` and ``kernelkit update-build`` through the real CLI entry point."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kernelkit.cli.main import main
from kernelkit.errors import ExitCode

DATA = Path(__file__).resolve().parents[1] / "data" / "manifests"


def img2gray_project(root: Path) -> Path:
    shutil.copy(DATA / "valid_img2gray.toml", root / "build.toml")
    for rel in ("torch-ext/torch_binding.cpp", "torch-ext/torch_binding.h",
                "img2gray_cuda/img2gray.cu", "img2gray_cpu/img2gray_cpu.cpp",
                "torch-ext/img2gray/__init__.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("")
    return root


def test_check_config_valid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-config", str(img2gray_project(tmp_path))]) == 0
    out, err = capsys.readouterr()
    assert "build.toml is valid" in out
    assert err == ""


def test_check_config_defaults_to_the_current_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(img2gray_project(tmp_path))
    assert main(["check-config"]) == 0
    assert "build.toml is valid" in capsys.readouterr().out


def test_check_config_reports_every_problem(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(DATA / "several_problems.toml", tmp_path / "build.toml")
    assert main(["check-config", str(tmp_path)]) == ExitCode.INVALID_INPUT
    out, err = capsys.readouterr()
    assert out == ""
    assert "10 problems found" in err
    assert f"{tmp_path / 'build.toml'}:9: general.hub.repo: unknown key `repo`" in err


def test_check_config_missing_sources_and_the_opt_out(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = img2gray_project(tmp_path)
    (project / "img2gray_cuda" / "img2gray.cu").unlink()
    assert main(["check-config", str(project)]) == ExitCode.INVALID_INPUT
    assert "kernel.img2gray.src[0]: source file `img2gray_cuda/img2gray.cu`" in \
        capsys.readouterr().err
    assert main(["check-config", "--no-check-sources", str(project)]) == 0


def test_check_config_v4_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(DATA / "v4.toml", tmp_path / "build.toml")
    assert main(["check-config", "--no-check-sources", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert "build.toml is valid" in out
    assert err.startswith("warning:") and "kernelkit update-build" in err


def test_check_config_v3_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(DATA / "v3.toml", tmp_path / "build.toml")
    assert main(["check-config", str(tmp_path)]) == ExitCode.INVALID_INPUT
    assert "run `kernelkit update-build`" in capsys.readouterr().err


def test_check_config_without_build_toml(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-config", str(tmp_path)]) == ExitCode.INVALID_INPUT
    assert "kernelkit init" in capsys.readouterr().err


def test_update_build(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(DATA / "v3.toml", tmp_path / "build.toml")
    assert main(["update-build", str(tmp_path)]) == 0
    assert "updated to edition 5" in capsys.readouterr().out
    assert "edition = 5" in (tmp_path / "build.toml").read_text()
    assert main(["check-config", "--no-check-sources", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["update-build", str(tmp_path)]) == 0
    assert "nothing to do" in capsys.readouterr().out


def test_update_build_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(DATA / "v3_no_license.toml", tmp_path / "build.toml")
    assert main(["update-build", str(tmp_path)]) == ExitCode.INVALID_INPUT
    assert "general.license" in capsys.readouterr().err


def test_check_config_reports_what_the_planner_refuses(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A capability set that comes out empty for every CUDA toolkit of the matrix (upstream's
    relu-invalid-capability) is a project error list-variants knows: check-config says so."""
    project = img2gray_project(tmp_path)
    toml = project / "build.toml"
    toml.write_text(toml.read_text().replace(
        '[kernel.img2gray]\n', '[kernel.img2gray]\ncuda-capabilities = ["99999.0"]\n'))
    assert main(["check-config", str(project)]) == ExitCode.INVALID_INPUT
    err = capsys.readouterr().err
    line = toml.read_text().splitlines().index('cuda-capabilities = ["99999.0"]') + 1
    expected = (f"build.toml:{line}: kernel.img2gray.cuda-capabilities: cuda-capabilities "
                "['99999.0'] leaves no capability to compile with CUDA")
    assert expected in err
    assert "use capabilities from that list" in err and "9.0" in err


def test_check_config_names_the_expected_package_directory(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = img2gray_project(tmp_path)
    (project / "torch-ext" / "img2gray").rename(project / "torch-ext" / "img_2_gray")
    assert main(["check-config", str(project)]) == ExitCode.INVALID_INPUT
    err = capsys.readouterr().err
    assert "general.name: torch-ext/img2gray/__init__.py does not exist" in err
    assert "rename torch-ext/img_2_gray/ to torch-ext/img2gray/" in err
    assert main(["check-config", "--no-check-sources", str(project)]) == 0
