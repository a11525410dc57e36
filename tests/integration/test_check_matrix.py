"""``kernelkit check --matrix``: which required variants of the supported matrix are missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import make_variant

from kernelkit.cli.main import main

BUILD_TOML = """\
[general]
name = "demo"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu"]

[torch]
src = []

[kernel.demo_cpu]
backend = "cpu"
depends = ["torch"]
src = ["demo_cpu/demo.cpp"]
"""


def _project(tmp_path: Path, variants: list[str]) -> Path:
    (tmp_path / "build.toml").write_text(BUILD_TOML)
    (tmp_path / "demo_cpu").mkdir()
    (tmp_path / "demo_cpu" / "demo.cpp").write_text("")
    for v in variants:
        make_variant(tmp_path / "build", v)
    return tmp_path


def _matrix(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, dict[str, dict]]:
    rc = main(["check", str(path), "--no-import", "--json", "--require-matrix"])
    rows = json.loads(capsys.readouterr().out)["matrix"]
    return rc, {f"{r['backend']} {r['system']}": r for r in rows}


def test_reports_missing_required_variants(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = _project(tmp_path, ["torch213-cxx11-cpu-x86_64-linux"])
    rc, rows = _matrix(capsys, project)
    assert rc == 1
    x86 = rows["cpu x86_64-linux"]
    assert not x86["compliant"] and x86["missing"] == ["torch212-cxx11-cpu-x86_64-linux"]
    assert "cuda x86_64-linux" not in rows  # only the manifest's backends count


def test_complete_system_is_compliant(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = _project(tmp_path, ["torch212-cxx11-cpu-x86_64-linux",
                                  "torch213-cxx11-cpu-x86_64-linux"])
    _, rows = _matrix(capsys, project / "build")  # from build/: build.toml found above it
    assert rows["cpu x86_64-linux"]["compliant"] and rows["cpu x86_64-linux"]["missing"] == []
    assert not rows["cpu aarch64-linux"]["compliant"]
