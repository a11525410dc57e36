"""``kernelkit build --watch`` (issue 23 item 2), the real CLI in a subprocess on a real
project: a round per save, each one line: what changed, what was compiled, the tests' result
against the fresh variant; a failing test names itself."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import pytest

from kernelkit.errors import ExitCode

TEST = '''\
import torch

import img2gray


def test_gray_of_white_is_white():
    img = torch.full((2, 3, 3), 255, dtype=torch.uint8)
    assert int(img2gray.img2gray(img).min()) >= {expected}
'''


def _line(stream: IO[str], deadline: float) -> str:
    while time.monotonic() < deadline:
        line = stream.readline()
        if line:
            return line.rstrip("\n")
    raise AssertionError("no output from kernelkit build --watch in time")


def _round(stream: IO[str], number: int, deadline: float) -> list[str]:
    """Round ``number``'s line and the detail lines after it (up to the next round's line)."""
    lines = []
    while not lines or not lines[0].startswith("["):
        lines = [_line(stream, deadline)]
    assert re.match(rf"\[\d\d:\d\d:\d\d\] round {number}\b", lines[0]), lines
    return lines


@pytest.mark.slow
def test_watch_rebuilds_and_tests_on_every_save(img2gray_project: Path, tmp_path: Path) -> None:
    project = tmp_path / "img2gray"
    shutil.copytree(img2gray_project, project,
                    ignore=shutil.ignore_patterns(".git", "build", "_cmake_build", "tests"))
    (project / "tests").mkdir()
    (project / "tests" / "test_small.py").write_text(TEST.format(expected=250))
    with subprocess.Popen(
            [sys.executable, "-m", "kernelkit", "build", str(project), "--watch",
             "--watch-rounds", "3", "--watch-poll", "0.1", "--pytest-args", "-q -p no:randomly"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"}) as proc:
        try:
            _rounds(proc, project)
            assert proc.wait(timeout=60) == ExitCode.BUILD  # the last round failed
        finally:
            proc.kill()


def _rounds(proc: subprocess.Popen[str], project: Path) -> None:
    assert proc.stdout is not None
    deadline = time.monotonic() + 600
    assert _line(proc.stdout, deadline).startswith("watching ")
    first = _round(proc.stdout, 1, deadline)
    assert "built torch213-cxx11-cpu-x86_64-linux" in first[0]
    assert "tests 1 passed" in first[0]
    src = project / "img2gray_cpu" / "img2gray_cpu.cpp"
    src.write_text(src.read_text() + "\n// saved again\n")
    second = _round(proc.stdout, 2, deadline)
    assert "(img2gray_cpu/img2gray_cpu.cpp)" in second[0]
    units = re.search(r"\(compiled ([^);]*)[;)]", second[0])
    assert units and set(units.group(1).split(", ")) == {"img2gray_cpu/img2gray_cpu.cpp",
                                                          "cmake/kernelkit_ops_id.c"}
    assert "tests 1 passed" in second[0]
    (project / "tests" / "test_small.py").write_text(TEST.format(expected=256))
    third = _round(proc.stdout, 3, deadline)
    assert "(tests/test_small.py)" in third[0] and "nothing compiled" in third[0]
    assert "tests FAILED (1 failed)" in third[0]
    assert "tests/test_small.py::test_gray_of_white_is_white" in third[0]
