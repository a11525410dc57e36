"""kernelkit init and git.

Moved from tests/unit/test_scaffold.py: these run git.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from kernelkit.scaffold import init_project
from tests.unit.test_scaffold import ALL_FILES, EXPECTED_BUILD_TOML


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          check=True).stdout


def test_init_writes_files_and_stages_them_in_a_new_repo(tmp_path: Path) -> None:
    dest = tmp_path / "img2gray"
    written = init_project(dest)
    assert {p.relative_to(dest).as_posix() for p in written} == ALL_FILES
    assert (dest / "build.toml").read_text() == EXPECTED_BUILD_TOML
    staged = set(_git(dest, "diff", "--cached", "--name-only").split())
    assert staged == ALL_FILES


def test_init_inside_an_existing_repo_does_not_nest_one(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    dest = tmp_path / "kernels" / "img2gray"
    init_project(dest)
    assert not (dest / ".git").exists()
