"""Where the builder works inside a project: ``_cmake_build/`` (ignored by git, removed by
``kernelkit clean``), one directory per variant (its CMake tree, logs, environment log) and
the toolchain lock's log. The one place that spells these paths."""

from __future__ import annotations

from pathlib import Path

WORK_ROOT = "_cmake_build"


def work_root(project: Path) -> Path:
    """``<project>/_cmake_build``."""
    return project.resolve() / WORK_ROOT


def work_dir(project: Path, variant: str) -> Path:
    """``<project>/_cmake_build/<variant>``: one variant's CMake tree, logs and locks."""
    return work_root(project) / variant
