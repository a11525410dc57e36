"""Unique ids and provenance from real git repositories (spec §3.1)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from kernelkit.generate.ids import git_state, kernel_commit, ops_name, random_id, unique_id


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def make_repo(root: Path) -> Path:
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    (root / "kernel").mkdir()
    (root / "kernel" / "build.toml").write_text("x = 1\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "init")
    return root / "kernel"


def test_unique_id_is_the_head_tree_id(tmp_path: Path) -> None:
    kernel = make_repo(tmp_path / "repo")
    tree = git(kernel, "rev-parse", "HEAD^{tree}")
    commit = git(kernel, "rev-parse", "HEAD")
    assert unique_id(kernel) == tree[:7]  # the tree id, not the commit id
    assert tree[:7] != commit[:7]
    state = git_state(kernel)
    assert state is not None and kernel_commit(state) is not None
    assert kernel_commit(state).commit == commit  # type: ignore[union-attr]
    assert kernel_commit(state).dirty is False  # type: ignore[union-attr]


def test_untracked_files_are_not_dirty_but_tracked_changes_are(tmp_path: Path) -> None:
    kernel = make_repo(tmp_path / "repo")
    tree = git(kernel, "rev-parse", "HEAD^{tree}")
    (kernel / "new.txt").write_text("untracked\n")
    assert unique_id(kernel) == tree[:7]
    (kernel / "build.toml").write_text("x = 2\n")
    assert unique_id(kernel) == tree[:7] + "_dirty"
    assert kernel_commit(git_state(kernel)).dirty is True  # type: ignore[union-attr]


def test_outside_git_the_id_is_random_base32(tmp_path: Path) -> None:
    ids = {unique_id(tmp_path) for _ in range(5)}
    assert len(ids) == 5
    assert all(re.fullmatch(r"[a-z2-7]{13}", i) for i in ids)
    assert git_state(tmp_path) is None
    assert kernel_commit(None) is None
    assert re.fullmatch(r"[a-z2-7]{13}", random_id())


def test_ops_name() -> None:
    assert ops_name("my_kernel", "rocm", "abc1234_dirty") == "_my_kernel_rocm_abc1234_dirty"
